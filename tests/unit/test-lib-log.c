/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/log: the text format of existing callers unchanged, key/values in both formats, JSON
 * lines that parse (with jansson) whatever the message holds, long messages cut and marked.
 * stderr is sent to a temporary file around each call and read back.
 */
#include <errno.h>
#include <regex.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "lib/log.h"
#include "tests/helpers/capture.h"
#include "tests/runner.h"

/* From here to capture_end(), stderr goes to a file. */
static void
capture_begin(void)
{
	CU_ASSERT_EQUAL_FATAL(test_capture_stderr(), 0);
}

/* What was written to stderr since capture_begin() (caller frees). */
static char *
capture_end(size_t *len)
{
	char *text = test_captured_stderr(len);

	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	return text;
}

static bool
matches(const char *text, const char *ere)
{
	regex_t re;
	bool ok;

	if (regcomp(&re, ere, REG_EXTENDED | REG_NOSUB) != 0)
		return false;
	ok = regexec(&re, text, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

static const char *
jstr(json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));

	return s != NULL ? s : "(absent)";
}

/* The one JSON object of a captured line: one line, ending in '\n', that jansson parses
 * (json_loads checks UTF-8 too), with ts/level/msg as strings. NULL (and a failed assertion)
 * otherwise. */
static json_t *
parse_line(const char *text)
{
	const char *nl = strchr(text, '\n');
	json_error_t err;
	json_t *j;

	CU_ASSERT_PTR_NOT_NULL(nl);
	CU_ASSERT_TRUE(nl != NULL && nl[1] == '\0');
	j = json_loads(text, 0, &err);
	CU_ASSERT_PTR_NOT_NULL(j);
	if (j == NULL) {
		fprintf(stderr, "not JSON (%s): %s", err.text, text);
		return NULL;
	}
	CU_ASSERT_TRUE(json_is_object(j));
	CU_ASSERT_TRUE(matches(
	    jstr(j, "ts"), "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$"));
	CU_ASSERT_TRUE(json_is_string(json_object_get(j, "level")));
	CU_ASSERT_TRUE(json_is_string(json_object_get(j, "msg")));
	return j;
}

static void
test_text_unchanged(void)
{
	char *out;

	log_init("test", LOG_LEVEL_INFO);
	log_set_format(LOG_FORMAT_TEXT);
	capture_begin();
	log_info("hello %d \"q\" x=y", 42);
	log_debug("not shown");
	out = capture_end(NULL);
	/* exactly the old "TS LEVEL prog: message" line */
	CU_ASSERT_TRUE(matches(out, "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\."
				    "[0-9]{3}Z info  test: hello 42 \"q\" x=y\n$"));
	free(out);
}

static void
test_text_kv(void)
{
	char *out;

	log_init("test", LOG_LEVEL_INFO);
	log_set_format(LOG_FORMAT_TEXT);
	capture_begin();
	log_kv(LOG_LEVEL_WARN,
	    LOG_KV("ippool", "default/net-48", "mac", "0a:00:00:00:00:01", "note", "two words",
		"empty", "", "ctl", "a\nb\"c\\", "bad", "\xff"),
	    "bound %s", "10.0.0.5");
	log_kv(LOG_LEVEL_INFO, NULL, "no keys");
	log_kv(LOG_LEVEL_DEBUG, LOG_KV("k", "v"), "below the level");
	out = capture_end(NULL);
	CU_ASSERT_TRUE(matches(out, "Z warn  test: bound 10\\.0\\.0\\.5 ippool=default/net-48 "
				    "mac=0a:00:00:00:00:01 note=\"two words\" empty=\"\" "
				    "ctl=\"a\\\\nb\\\\\"c\\\\\\\\\" bad=\"\\\\xff\"\n"));
	CU_ASSERT_TRUE(matches(out, "Z info  test: no keys\n$"));
	CU_ASSERT_PTR_NULL(strstr(out, "below the level"));
	if (!matches(out, "bad=\"\\\\xff\"\n"))
		fprintf(stderr, "got: %s", out);
	free(out);
}

static void
test_json_keys(void)
{
	char *out;
	json_t *j;

	log_init("test", LOG_LEVEL_DEBUG);
	log_set_format(LOG_FORMAT_JSON);
	capture_begin();
	log_kv(LOG_LEVEL_INFO,
	    LOG_KV("ippool", "default/net-48", "vmnetcfg", "default/vm1", "mac",
		"0a:00:00:00:00:01", "ip", "10.0.0.5", "msg", "reserved"),
	    "bound %s", "10.0.0.5");
	out = capture_end(NULL);
	log_set_format(LOG_FORMAT_TEXT);
	log_set_level(LOG_LEVEL_INFO);
	j = parse_line(out);
	CU_ASSERT_STRING_EQUAL(jstr(j, "level"), "info");
	CU_ASSERT_STRING_EQUAL(jstr(j, "msg"), "bound 10.0.0.5");
	CU_ASSERT_STRING_EQUAL(jstr(j, "ippool"), "default/net-48");
	CU_ASSERT_STRING_EQUAL(jstr(j, "vmnetcfg"), "default/vm1");
	CU_ASSERT_STRING_EQUAL(jstr(j, "mac"), "0a:00:00:00:00:01");
	CU_ASSERT_STRING_EQUAL(jstr(j, "ip"), "10.0.0.5");
	/* a caller's key never replaces ts/level/msg */
	CU_ASSERT_STRING_EQUAL(jstr(j, "msg_"), "reserved");
	CU_ASSERT_PTR_NULL(json_object_get(j, "truncated"));
	CU_ASSERT_EQUAL(json_object_size(j), 8u);
	/* ts, level, msg lead, as written */
	CU_ASSERT_EQUAL(strncmp(out, "{\"ts\":\"", 7), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\",\"level\":\"info\",\"msg\":\"bound 10.0.0.5\","));
	json_decref(j);
	free(out);

	/* every level name, and the plain log_* macros in JSON too */
	log_set_level(LOG_LEVEL_DEBUG);
	log_set_format(LOG_FORMAT_JSON);
	capture_begin();
	log_debug("d");
	out = capture_end(NULL);
	log_set_format(LOG_FORMAT_TEXT);
	log_set_level(LOG_LEVEL_INFO);
	j = parse_line(out);
	CU_ASSERT_STRING_EQUAL(jstr(j, "level"), "debug");
	CU_ASSERT_STRING_EQUAL(jstr(j, "msg"), "d");
	CU_ASSERT_EQUAL(json_object_size(j), 3u);
	json_decref(j);
	free(out);
}

/* Bytes that are not UTF-8 (a lone continuation, 0xff, an overlong '/', a surrogate, a
 * sequence cut short, one past U+10FFFF) become U+FFFD; control characters, quotes and
 * backslashes are escaped; valid UTF-8 is kept. */
static void
test_json_hostile(void)
{
	static const char msg[] = "q\"b\\s/ \x01\x1f\x7f\t\r\n"
				  "\x80|\xff|\xc0\xaf|\xed\xa0\x80|\xe2\x82|\xf4\x90\x80\x80|"
				  "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
	static const char want[] = "q\"b\\s/ \x01\x1f\x7f\t\r\n"
				   "\xef\xbf\xbd|\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|"
				   "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|"
				   "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|"
				   "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
	char *out;
	json_t *j;

	log_init("test", LOG_LEVEL_INFO);
	log_set_format(LOG_FORMAT_JSON);
	capture_begin();
	log_kv(LOG_LEVEL_ERROR, LOG_KV("k\"\n\xff", "v\x02\xc3"), "%s", msg);
	out = capture_end(NULL);
	log_set_format(LOG_FORMAT_TEXT);
	j = parse_line(out);
	CU_ASSERT_STRING_EQUAL(jstr(j, "level"), "error");
	CU_ASSERT_STRING_EQUAL(jstr(j, "msg"), want);
	CU_ASSERT_STRING_EQUAL(jstr(j, "k\"\n\xef\xbf\xbd"), "v\x02\xef\xbf\xbd");
	json_decref(j);
	free(out);
}

/* Every single byte, and random byte strings (a fixed seed): always one valid JSON line. */
static void
test_json_any_bytes(void)
{
	uint32_t x = 2463534242u;
	char msg[64];
	int bad = 0;

	log_init("test", LOG_LEVEL_INFO);
	log_set_format(LOG_FORMAT_JSON);
	for (int i = 0; i < 2256; i++) {
		size_t n;
		char *out;
		json_t *j;

		if (i < 256) {
			msg[0] = (char)(i == 0 ? 1 : i); /* a NUL would end the format string */
			n = 1;
		} else {
			n = 1 + i % (sizeof(msg) - 1);
			for (size_t k = 0; k < n; k++) {
				x ^= x << 13;
				x ^= x >> 17;
				x ^= x << 5;
				msg[k] = (char)(x % 255 + 1);
			}
		}
		msg[n] = '\0';
		capture_begin();
		log_kv(LOG_LEVEL_INFO, LOG_KV("v", msg), "%s", msg);
		out = capture_end(NULL);
		j = json_loads(out, 0, NULL);
		if (j == NULL || strchr(out, '\n') != out + strlen(out) - 1 ||
		    !json_is_string(json_object_get(j, "msg")) ||
		    !json_is_string(json_object_get(j, "v")))
			bad++;
		json_decref(j);
		free(out);
	}
	log_set_format(LOG_FORMAT_TEXT);
	CU_ASSERT_EQUAL(bad, 0);
}

static void
test_cut_marked(void)
{
	char *big = malloc(5001), *out, want[64];
	size_t len;
	json_t *j;

	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	memset(big, 'a', 5000);
	big[5000] = '\0';
	log_init("test", LOG_LEVEL_INFO);

	log_set_format(LOG_FORMAT_TEXT);
	capture_begin();
	log_info("%s", big);
	out = capture_end(&len);
	snprintf(want, sizeof(want), "test: %.*s", 16, big);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, want));
	/* LOG_MSG_MAX of the 5000 bytes, then the mark, then the end of the line */
	snprintf(want, sizeof(want), "a [truncated %d bytes]\n", 5000 - LOG_MSG_MAX);
	CU_ASSERT_TRUE(len > strlen(want) && strcmp(out + len - strlen(want), want) == 0);
	CU_ASSERT_EQUAL(strspn(strstr(out, "test: ") + 6, "a"), (size_t)LOG_MSG_MAX);
	free(out);

	log_set_format(LOG_FORMAT_JSON);
	capture_begin();
	log_info("%s", big);
	out = capture_end(NULL);
	j = parse_line(out);
	CU_ASSERT_EQUAL(strlen(jstr(j, "msg")), (size_t)LOG_MSG_MAX);
	CU_ASSERT_TRUE(json_is_true(json_object_get(j, "truncated")));
	json_decref(j);
	free(out);

	/* "x" then 2500 two-byte characters: the cut may not split one */
	big[0] = 'x';
	for (int i = 0; i < 2499; i++)
		memcpy(big + 1 + 2 * i, "\xc3\xa9", 2);
	big[4999] = '\0';
	capture_begin();
	log_info("%s", big);
	out = capture_end(NULL);
	j = parse_line(out);
	CU_ASSERT_EQUAL(strlen(jstr(j, "msg")), (size_t)LOG_MSG_MAX - 1);
	CU_ASSERT_PTR_NULL(strstr(jstr(j, "msg"), "\xef\xbf\xbd"));
	CU_ASSERT_TRUE(json_is_true(json_object_get(j, "truncated")));
	json_decref(j);
	free(out);

	/* a value past LOG_VALUE_MAX: cut and marked too */
	memset(big, 'v', LOG_VALUE_MAX + 10);
	big[LOG_VALUE_MAX + 10] = '\0';
	capture_begin();
	log_kv(LOG_LEVEL_INFO, LOG_KV("long", big), "short");
	out = capture_end(NULL);
	j = parse_line(out);
	CU_ASSERT_STRING_EQUAL(jstr(j, "msg"), "short");
	CU_ASSERT_EQUAL(strlen(jstr(j, "long")), (size_t)LOG_VALUE_MAX);
	CU_ASSERT_TRUE(json_is_true(json_object_get(j, "truncated")));
	json_decref(j);
	free(out);
	log_set_format(LOG_FORMAT_TEXT);
	capture_begin();
	log_kv(LOG_LEVEL_INFO, LOG_KV("long", big), "short");
	out = capture_end(NULL);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "v [truncated 10 bytes]\"\n"));
	CU_ASSERT_PTR_NULL(strstr(out, "short ["));
	free(out);
	free(big);
}

static void
test_format_names(void)
{
	enum log_format f = LOG_FORMAT_TEXT;

	CU_ASSERT_EQUAL(log_format_from_string("json", &f), 0);
	CU_ASSERT_EQUAL(f, LOG_FORMAT_JSON);
	CU_ASSERT_EQUAL(log_format_from_string("text", &f), 0);
	CU_ASSERT_EQUAL(f, LOG_FORMAT_TEXT);
	CU_ASSERT_EQUAL(log_format_from_string("JSON", &f), 0);
	CU_ASSERT_EQUAL(f, LOG_FORMAT_JSON);
	CU_ASSERT_EQUAL(log_format_from_string("logfmt", &f), -EINVAL);
	CU_ASSERT_EQUAL(log_format_from_string("", &f), -EINVAL);
	CU_ASSERT_EQUAL(f, LOG_FORMAT_JSON); /* untouched on error */
}

static const struct test_case log_tests[] = {
    {"text lines of existing callers unchanged", test_text_unchanged},
    {"text: key=value appended, quoted when needed", test_text_kv},
    {"json: ts/level/msg and the keys", test_json_keys},
    {"json: control chars, quotes, invalid UTF-8 stay valid JSON", test_json_hostile},
    {"json: any bytes give one valid line", test_json_any_bytes},
    {"long messages and values are cut and marked in both formats", test_cut_marked},
    {"format names", test_format_names},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "log", .tests = log_tests},
    {.name = NULL},
};
