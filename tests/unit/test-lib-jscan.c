/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/jscan.c: the span scanner accepts what json_loadb accepts (a table of valid and invalid
 * texts checked against jansson), iterates members and elements, decodes strings and keys,
 * and finds the last of duplicate keys as jansson keeps it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/jscan.h"
#include "tests/runner.h"

static const char *const texts[] = {
    "{}",
    "[]",
    " { } ",
    "\n[ 1 , 2 ]\r\n",
    "0",
    "-0",
    "-0.5e+10",
    "1E5",
    "12.25",
    "true",
    "false",
    "null",
    "\"\"",
    "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"",
    "\"\\u00e9\\u20ac\\ud83d\\ude00\"",
    "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
    "{\"a\":{\"b\":[1,{\"c\":null}]},\"d\":\"e\"}",
    "[[[[[]]]]]",
    /* invalid */
    "",
    " ",
    "{",
    "}",
    "[1,]",
    "{\"a\":1,}",
    "{,}",
    "{\"a\"}",
    "{\"a\" 1}",
    "{1:2}",
    "[1 2]",
    "01",
    "1.",
    ".5",
    "-",
    "1e",
    "+1",
    "tru",
    "nul",
    "True",
    "\"abc",
    "\"a\x01\"",
    "\"\\x\"",
    "\"\\u12\"",
    "\"\\u0000\"",
    "\"\\udc00\"",
    "\"\\ud800\"",
    "\"\\ud800\\u0041\"",
    "\"\xc0\xaf\"",
    "\"\xed\xa0\x80\"",
    "\"\xf5\x80\x80\x80\"",
    "\"\xe2\x82\"",
    "[1]]",
    "{}{}",
    "[}",
    "{]",
    "[1] x",
};

static void
test_against_jansson(void)
{
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		const char *t = texts[i];
		json_t *j = json_loadb(t, strlen(t), JSON_DECODE_ANY, NULL);
		struct jscan_span v;
		int r = jscan_value(t, strlen(t), &v);

		if ((r == 0) != (j != NULL))
			fprintf(
			    stderr, "text %zu: jscan %d, jansson %s\n", i, r, j ? "ok" : "error");
		CU_ASSERT_EQUAL(r == 0, j != NULL);
		json_decref(j);
	}
}

static void
test_depth(void)
{
	size_t n = JSCAN_MAX_DEPTH + 1;
	char *t = malloc(2 * n + 1);
	struct jscan_span v;

	memset(t, '[', n);
	memset(t + n, ']', n);
	t[2 * n] = '\0';
	CU_ASSERT_EQUAL(jscan_value(t, 2 * n, &v), -EBADMSG);
	CU_ASSERT_EQUAL(jscan_value(t + 1, 2 * n - 2, &v), 0);
	CU_ASSERT_EQUAL(v.len, 2 * n - 2);
	free(t);
}

static void
test_iterate(void)
{
	const char *t = " {\"a\" : [1, \"x\", {\"y\":2}] , \"b\":\"c\\n\", \"\\u0061\":true } ";
	struct jscan_iter it, ai;
	struct jscan_span k, v, e;
	char buf[8];
	size_t n;

	CU_ASSERT_EQUAL(jscan_open(&it, t, strlen(t), true), 0);
	CU_ASSERT_EQUAL(jscan_next(&it, &k, &v), 1);
	CU_ASSERT_TRUE(jscan_key_is(k, "a"));
	CU_ASSERT_FALSE(jscan_key_is(k, "ab"));
	CU_ASSERT_EQUAL(jscan_type(v), '[');
	CU_ASSERT_EQUAL(v.len, strlen("[1, \"x\", {\"y\":2}]"));
	CU_ASSERT_EQUAL(jscan_open_span(&ai, v, false), 0);
	CU_ASSERT_EQUAL(jscan_next(&ai, NULL, &e), 1);
	CU_ASSERT_EQUAL(jscan_type(e), 'n');
	CU_ASSERT_EQUAL(jscan_next(&ai, NULL, &e), 1);
	CU_ASSERT_EQUAL(jscan_type(e), '"');
	CU_ASSERT_EQUAL(jscan_next(&ai, NULL, &e), 1);
	CU_ASSERT_EQUAL(jscan_type(e), '{');
	CU_ASSERT_EQUAL(jscan_next(&ai, NULL, &e), 0);
	CU_ASSERT_EQUAL(jscan_next(&ai, NULL, &e), 0);
	CU_ASSERT_EQUAL(jscan_next(&it, &k, &v), 1);
	CU_ASSERT_TRUE(jscan_key_is(k, "b"));
	CU_ASSERT_EQUAL(jscan_string(v, buf, sizeof(buf), &n), 0);
	CU_ASSERT_STRING_EQUAL(buf, "c\n");
	CU_ASSERT_EQUAL(n, 2);
	CU_ASSERT_EQUAL(jscan_string(v, buf, 2, NULL), -ENAMETOOLONG);
	CU_ASSERT_EQUAL(jscan_next(&it, &k, &v), 1);
	CU_ASSERT_TRUE(jscan_key_is(k, "a")); /* \u0061 */
	CU_ASSERT_EQUAL(jscan_type(v), 't');
	CU_ASSERT_EQUAL(jscan_next(&it, &k, &v), 0);

	/* an error after the members is reported by the last jscan_next */
	CU_ASSERT_EQUAL(jscan_open(&it, "{\"a\":1} x", 9, true), 0);
	CU_ASSERT_EQUAL(jscan_next(&it, &k, &v), 1);
	CU_ASSERT_EQUAL(jscan_next(&it, &k, &v), -EBADMSG);
	CU_ASSERT_EQUAL(jscan_open(&it, "[1]", 3, true), -EBADMSG);
	CU_ASSERT_EQUAL(jscan_open(&it, "{", 1, true), 0);
	CU_ASSERT_EQUAL(jscan_next(&it, &k, &v), -EBADMSG);
}

static void
test_get(void)
{
	const char *t = "{\"a\":1,\"b\":{\"c\":2},\"a\":\"last\"}";
	struct jscan_span v;
	char buf[16];

	CU_ASSERT_EQUAL(jscan_get(t, strlen(t), "a", &v), 1);
	CU_ASSERT_EQUAL(jscan_string(v, buf, sizeof(buf), NULL), 0);
	CU_ASSERT_STRING_EQUAL(buf, "last");
	CU_ASSERT_EQUAL(jscan_get(t, strlen(t), "b", &v), 1);
	CU_ASSERT_EQUAL(jscan_get(v.p, v.len, "c", &v), 1);
	CU_ASSERT_EQUAL(v.len, 1);
	CU_ASSERT_EQUAL(jscan_get(t, strlen(t), "z", &v), 0);
	CU_ASSERT_EQUAL(jscan_get("{\"a\":1,}", 8, "a", &v), -EBADMSG);
	CU_ASSERT_EQUAL(jscan_get("[]", 2, "a", &v), -EBADMSG);
	CU_ASSERT_EQUAL(
	    jscan_string((struct jscan_span){"1", 1}, buf, sizeof(buf), NULL), -EBADMSG);
}

static void
test_descend(void)
{
	const char *t = "{\"a\": {\"b\": [1, 2], \"c\": \"x\\\"}\"}, \"d\": null}";
	size_t len = strlen(t);
	struct jscan_iter it, in;
	struct jscan_span k, v;

	CU_ASSERT_EQUAL_FATAL(jscan_open(&it, t, len, true), 0);
	CU_ASSERT_EQUAL(jscan_next_key(&it, &k), 1);
	CU_ASSERT_TRUE(jscan_key_is(k, "a"));
	CU_ASSERT_EQUAL(t[it.pos], '{');
	/* the value's end without checks, then by descending into it */
	CU_ASSERT_EQUAL(jscan_skip_fast(t, len, it.pos), (size_t)(strstr(t, ", \"d\"") - t));
	CU_ASSERT_EQUAL_FATAL(jscan_open_at(&in, t, len, it.pos, true), 0);
	CU_ASSERT_EQUAL(jscan_next(&in, &k, &v), 1);
	CU_ASSERT_TRUE(jscan_key_is(k, "b"));
	CU_ASSERT_EQUAL(jscan_next(&in, &k, &v), 1);
	CU_ASSERT_EQUAL(jscan_type(v), '"');
	CU_ASSERT_EQUAL(jscan_next(&in, &k, &v), 0);
	CU_ASSERT_EQUAL(in.pos, (size_t)(strstr(t, ", \"d\"") - t));
	it.pos = in.pos;
	CU_ASSERT_EQUAL(jscan_next_key(&it, &k), 1);
	CU_ASSERT_TRUE(jscan_key_is(k, "d"));
	CU_ASSERT_EQUAL(jscan_next_value(&it, &v), 1);
	CU_ASSERT_EQUAL(jscan_type(v), 'l');
	CU_ASSERT_EQUAL(jscan_next_key(&it, &k), 0);
	/* never past the end of a broken text */
	CU_ASSERT_EQUAL(jscan_skip_fast("{\"a\": \"x", 8, 0), 8);
	CU_ASSERT_EQUAL(jscan_skip_fast("[[[", 3, 0), 3);
	CU_ASSERT_EQUAL(jscan_skip_fast("}", 1, 0), 0);
	CU_ASSERT_EQUAL(jscan_open_at(&in, t, len, len, true), -EBADMSG);
}

static const struct test_case jscan_tests[] = {
    {"accepts what json_loadb accepts", test_against_jansson},
    {"nesting depth bounded", test_depth},
    {"members, elements, keys and strings", test_iterate},
    {"get finds the last of duplicate keys", test_get},
    {"key then value, descending, fast skip", test_descend},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "jscan", .tests = jscan_tests},
    {.name = NULL},
};
