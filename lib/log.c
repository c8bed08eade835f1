/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/log.h"
#include "lib/rfc3339.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char *log_prog = "vm-dhcp";
static enum log_level log_level = LOG_LEVEL_INFO;
static enum log_format log_format = LOG_FORMAT_TEXT;

static const char *const level_names[] = {
    [LOG_LEVEL_ERROR] = "error",
    [LOG_LEVEL_WARN] = "warn",
    [LOG_LEVEL_INFO] = "info",
    [LOG_LEVEL_DEBUG] = "debug",
};

void
log_init(const char *prog, enum log_level level)
{
	if (prog != NULL)
		log_prog = prog;
	log_level = level;
}

void
log_set_level(enum log_level level)
{
	log_level = level;
}

enum log_level
log_get_level(void)
{
	return log_level;
}

int
log_level_from_string(const char *s, enum log_level *ret)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcasecmp(s, level_names[i]) == 0) {
			*ret = (enum log_level)i;
			return 0;
		}
	}
	if (strcasecmp(s, "warning") == 0) {
		*ret = LOG_LEVEL_WARN;
		return 0;
	}
	return -EINVAL;
}

void
log_set_format(enum log_format format)
{
	log_format = format;
}

enum log_format
log_get_format(void)
{
	return log_format;
}

int
log_format_from_string(const char *s, enum log_format *ret)
{
	if (strcasecmp(s, "text") == 0) {
		*ret = LOG_FORMAT_TEXT;
		return 0;
	}
	if (strcasecmp(s, "json") == 0) {
		*ret = LOG_FORMAT_JSON;
		return 0;
	}
	return -EINVAL;
}

int
log_level_flag(void *dst, const char *value, char *err, size_t len)
{
	if (log_level_from_string(value, dst) == 0)
		return 0;
	snprintf(err, len, "\"%s\" is not error, warn, info or debug", value);
	return -EINVAL;
}

int
log_format_flag(void *dst, const char *value, char *err, size_t len)
{
	if (log_format_from_string(value, dst) == 0)
		return 0;
	snprintf(err, len, "\"%s\" is not text or json", value);
	return -EINVAL;
}

/*
 * One line is rendered twice: first counted (p == NULL), then written into a buffer of
 * exactly that size, so nothing is ever cut in the middle of an escape.
 */
struct out {
	char *p;
	size_t len, cap;
};

static void
out_put(struct out *o, const char *s, size_t n)
{
	if (o->p != NULL && o->len + n <= o->cap)
		memcpy(o->p + o->len, s, n);
	o->len += n;
}

static void
out_str(struct out *o, const char *s)
{
	out_put(o, s, strlen(s));
}

/* Length of the well-formed UTF-8 sequence at s (n >= 1 bytes left), 0 when it is not one:
 * no overlong forms, surrogates or code points past U+10FFFF (RFC 3629). */
static size_t
utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else
		return 0;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* How many of s's n bytes to keep under max without splitting a character; s[max] must be
 * readable when n > max. */
static size_t
cut_len(const char *s, size_t n, size_t max)
{
	size_t k = max;

	if (n <= max)
		return n;
	while (k > 0 && k + 3 > max && ((unsigned char)s[k] & 0xc0) == 0x80)
		k--;
	return k;
}

/* The contents of a JSON string: '"', '\' and control characters escaped, bytes that are
 * not UTF-8 replaced by U+FFFD. */
static void
put_json(struct out *o, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, start = 0, l;
	char esc[8];

	while (i < n) {
		unsigned char c = p[i];

		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		if (c >= 0x80 && (l = utf8_len(p + i, n - i)) > 0) {
			i += l;
			continue;
		}
		out_put(o, s + start, i - start);
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			out_put(o, esc, 2);
		} else if (c == '\n')
			out_str(o, "\\n");
		else if (c == '\t')
			out_str(o, "\\t");
		else if (c == '\r')
			out_str(o, "\\r");
		else if (c < 0x20) {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			out_put(o, esc, 6);
		} else
			out_str(o, "\xef\xbf\xbd"); /* U+FFFD */
		start = ++i;
	}
	out_put(o, s + start, n - start);
}

/* A text value, bare when it can be, else quoted with '"', '\' escaped and control
 * characters and bytes that are not UTF-8 as \n, \t, \r or \xNN; a cut one is marked. */
static void
put_text_value(struct out *o, const char *s, size_t n, size_t dropped)
{
	const unsigned char *p = (const unsigned char *)s;
	bool quote = n == 0 || dropped > 0;
	size_t i, l;
	char esc[48];

	for (i = 0; i < n && !quote; i += l) {
		l = utf8_len(p + i, n - i);
		if (l == 0 || p[i] <= ' ' || p[i] == 0x7f || p[i] == '"' || p[i] == '=' ||
		    p[i] == '\\')
			quote = true;
	}
	if (!quote) {
		out_put(o, s, n);
		return;
	}
	out_str(o, "\"");
	for (i = 0; i < n; i += l) {
		l = utf8_len(p + i, n - i);
		if (l > 1 ||
		    (l == 1 && p[i] >= ' ' && p[i] != 0x7f && p[i] != '"' && p[i] != '\\')) {
			out_put(o, s + i, l);
			continue;
		}
		l = 1;
		if (p[i] == '"' || p[i] == '\\')
			snprintf(esc, sizeof(esc), "\\%c", p[i]);
		else if (p[i] == '\n')
			snprintf(esc, sizeof(esc), "\\n");
		else if (p[i] == '\t')
			snprintf(esc, sizeof(esc), "\\t");
		else if (p[i] == '\r')
			snprintf(esc, sizeof(esc), "\\r");
		else
			snprintf(esc, sizeof(esc), "\\x%02x", p[i]);
		out_str(o, esc);
	}
	if (dropped > 0) {
		snprintf(esc, sizeof(esc), " [truncated %zu bytes]", dropped);
		out_str(o, esc);
	}
	out_str(o, "\"");
}

/* Text keys come from the code; anything that would break key=value parsing becomes '_'. */
static void
put_text_key(struct out *o, const char *k)
{
	for (; *k != '\0'; k++) {
		char c = *k > ' ' && *k < 0x7f && *k != '=' && *k != '"' ? *k : '_';

		out_put(o, &c, 1);
	}
}

static bool
json_reserved(const char *k)
{
	return strcmp(k, "ts") == 0 || strcmp(k, "level") == 0 || strcmp(k, "msg") == 0 ||
	       strcmp(k, "truncated") == 0;
}

struct line {
	const char *ts; /* 2025-11-25T12:00:00.123Z */
	enum log_level level;
	const char *msg;
	size_t msg_len; /* kept */
	size_t msg_dropped;
	const char *const *kv;
};

static void
render(struct out *o, const struct line *l)
{
	bool json = log_format == LOG_FORMAT_JSON, cut = l->msg_dropped > 0;
	char mark[48];

	if (json) {
		out_str(o, "{\"ts\":\"");
		out_str(o, l->ts);
		out_str(o, "\",\"level\":\"");
		out_str(o, level_names[l->level]);
		out_str(o, "\",\"msg\":\"");
		put_json(o, l->msg, l->msg_len);
		out_str(o, "\"");
	} else {
		snprintf(mark, sizeof(mark), "%s %-5s ", l->ts, level_names[l->level]);
		out_str(o, mark);
		out_str(o, log_prog);
		out_str(o, ": ");
		/* as before: the message is written as given, up to a NUL it may hold */
		out_put(o, l->msg, strnlen(l->msg, l->msg_len));
		if (cut) {
			snprintf(mark, sizeof(mark), " [truncated %zu bytes]", l->msg_dropped);
			out_str(o, mark);
		}
	}
	for (const char *const *kv = l->kv; kv != NULL && kv[0] != NULL && kv[1] != NULL; kv += 2) {
		size_t vn = strlen(kv[1]);
		size_t keep = cut_len(kv[1], vn, LOG_VALUE_MAX);

		if (json) {
			out_str(o, ",\"");
			put_json(o, kv[0], strlen(kv[0]));
			if (json_reserved(kv[0]))
				out_str(o, "_");
			out_str(o, "\":\"");
			put_json(o, kv[1], keep);
			out_str(o, "\"");
			cut = cut || keep < vn;
		} else {
			out_str(o, " ");
			put_text_key(o, kv[0]);
			out_str(o, "=");
			put_text_value(o, kv[1], keep, vn - keep);
		}
	}
	if (json)
		out_str(o, cut ? ",\"truncated\":true}\n" : "}\n");
	else
		out_str(o, "\n");
}

void
log_vkv(enum log_level level, const char *const *kv, const char *fmt, va_list ap)
{
	/* one byte past LOG_MSG_MAX tells whether the cut splits a character */
	char msg[LOG_MSG_MAX + 2], ts[RFC3339_MAX], small[8192];
	struct line l = {.ts = ts, .level = level, .msg = msg, .kv = kv};
	struct out o = {0};
	struct timespec now;
	int n;

	if (level > log_level)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	rfc3339_format((int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000, 3, ts);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (n < 0)
		return;
	l.msg_len = cut_len(msg, (size_t)n, LOG_MSG_MAX);
	l.msg_dropped = (size_t)n - l.msg_len;
	render(&o, &l);
	o.cap = o.len;
	o.len = 0;
	o.p = o.cap <= sizeof(small) ? small : malloc(o.cap);
	if (o.p == NULL) {
		/* no memory for the values: the line without them fits the stack buffer */
		l.kv = NULL;
		o.p = small;
		o.cap = sizeof(small);
	}
	render(&o, &l);
	/* One write per line keeps lines whole when several processes share stderr. */
	fwrite(o.p, 1, o.len < o.cap ? o.len : o.cap, stderr);
	if (o.p != small)
		free(o.p);
}

void
log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	log_vkv(level, NULL, fmt, ap);
}

void
log_kv(enum log_level level, const char *const *kv, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vkv(level, kv, fmt, ap);
	va_end(ap);
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

int
log_ratelimited(struct log_ratelimit *rl, uint64_t now, enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return 0;
	if (rl->window_start == 0 || now - rl->window_start >= rl->interval_usec) {
		if (rl->suppressed > 0)
			log_msg(level, "(%u similar messages suppressed)", rl->suppressed);
		rl->window_start = now ? now : 1;
		rl->printed = 0;
		rl->suppressed = 0;
	}
	if (rl->printed >= rl->burst) {
		rl->suppressed++;
		return 0;
	}
	rl->printed++;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
	return 1;
}

void
fatal(const char *fmt, ...)
{
	char msg[768];
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_msg(LOG_LEVEL_ERROR, "%s: %s", msg, strerror(saved));
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LEVEL_ERROR, fmt, ap);
	va_end(ap);
	exit(1);
}
