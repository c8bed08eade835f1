/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/jscan.c - strict JSON span scanner (see jscan.h): values are skipped by one loop with
 * a bit stack of the open brackets, so nesting costs no recursion; strings are checked for
 * escapes and UTF-8 the way jansson checks them.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "lib/jscan.h"

static bool
is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t
skip_ws(const char *t, size_t len, size_t i)
{
	while (i < len && is_ws(t[i]))
		i++;
	return i;
}

static int
hex4(const char *t, size_t len, size_t i, uint32_t *ret)
{
	uint32_t v = 0;

	if (i > len || len - i < 4)
		return -EBADMSG;
	for (size_t k = 0; k < 4; k++) {
		char c = t[i + k];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return -EBADMSG;
	}
	*ret = v;
	return 0;
}

/* Length of the valid UTF-8 sequence at s (first byte >= 0x80), 0 when invalid. */
static size_t
utf8_len(const unsigned char *s, size_t avail)
{
	uint32_t cp;
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1fu;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0fu;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07u;
	} else {
		return 0;
	}
	if (avail < n)
		return 0;
	for (size_t k = 1; k < n; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[k] & 0x3fu);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* u (a Unicode scalar value) in UTF-8 into enc; returns its length, 1 to 4. */
static inline size_t
utf8_encode(uint32_t u, char enc[4])
{
	if (u < 0x80) {
		enc[0] = (char)u;
		return 1;
	}
	if (u < 0x800) {
		enc[0] = (char)(0xc0 | (u >> 6));
		enc[1] = (char)(0x80 | (u & 0x3f));
		return 2;
	}
	if (u < 0x10000) {
		enc[0] = (char)(0xe0 | (u >> 12));
		enc[1] = (char)(0x80 | ((u >> 6) & 0x3f));
		enc[2] = (char)(0x80 | (u & 0x3f));
		return 3;
	}
	enc[0] = (char)(0xf0 | (u >> 18));
	enc[1] = (char)(0x80 | ((u >> 12) & 0x3f));
	enc[2] = (char)(0x80 | ((u >> 6) & 0x3f));
	enc[3] = (char)(0x80 | (u & 0x3f));
	return 4;
}

/*
 * The escape whose letter is t[*i] (after the backslash) into enc: its length, with *i on its
 * last character; 0 when it is not valid JSON (or \u0000, which no C string can hold).
 */
static inline size_t
scan_escape(const char *t, size_t len, size_t *i, char enc[4])
{
	uint32_t u, lo;

	switch (t[*i]) {
	case '"':
	case '\\':
	case '/':
		enc[0] = t[*i];
		return 1;
	case 'b':
		enc[0] = '\b';
		return 1;
	case 'f':
		enc[0] = '\f';
		return 1;
	case 'n':
		enc[0] = '\n';
		return 1;
	case 'r':
		enc[0] = '\r';
		return 1;
	case 't':
		enc[0] = '\t';
		return 1;
	case 'u':
		if (hex4(t, len, *i + 1, &u) < 0 || u == 0)
			return 0;
		*i += 4;
		if (u >= 0xdc00 && u <= 0xdfff)
			return 0;
		if (u >= 0xd800 && u <= 0xdbff) {
			if (len - *i < 7 || t[*i + 1] != '\\' || t[*i + 2] != 'u' ||
			    hex4(t, len, *i + 3, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
				return 0;
			*i += 6;
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		}
		return utf8_encode(u, enc);
	default:
		return 0;
	}
}

/*
 * At '"': decodes (out non-NULL) or only checks the string, *pos past the closing quote.
 * out gets at most out_len - 1 bytes (-ENAMETOOLONG beyond) and a NUL.
 */
static int
scan_string(const char *t, size_t len, size_t *pos, char *out, size_t out_len, size_t *ret_len)
{
	size_t i = *pos + 1, o = 0;

	while (i < len) {
		unsigned char c = (unsigned char)t[i];
		char enc[4];
		size_t n = 0;

		if (c == '"') {
			*pos = i + 1;
			if (out)
				out[o] = '\0';
			if (ret_len)
				*ret_len = o;
			return 0;
		}
		if (c < 0x20)
			return -EBADMSG;
		if (c == '\\') {
			if (++i >= len)
				return -EBADMSG;
			n = scan_escape(t, len, &i, enc);
			if (n == 0)
				return -EBADMSG;
			i++;
		} else if (c < 0x80) {
			enc[n++] = (char)c;
			i++;
		} else {
			size_t k = utf8_len((const unsigned char *)t + i, len - i);

			if (k == 0)
				return -EBADMSG;
			if (out) {
				if (out_len - o <= k)
					return -ENAMETOOLONG;
				memcpy(out + o, t + i, k);
				o += k;
			}
			i += k;
			continue;
		}
		if (out) {
			if (out_len - o <= n)
				return -ENAMETOOLONG;
			memcpy(out + o, enc, n);
			o += n;
		}
	}
	return -EBADMSG;
}

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int
scan_number(const char *t, size_t len, size_t *pos)
{
	size_t i = *pos;

	if (i < len && t[i] == '-')
		i++;
	if (i < len && t[i] == '0') {
		i++;
	} else if (i < len && t[i] >= '1' && t[i] <= '9') {
		while (i < len && is_digit(t[i]))
			i++;
	} else {
		return -EBADMSG;
	}
	if (i < len && t[i] == '.') {
		if (++i >= len || !is_digit(t[i]))
			return -EBADMSG;
		while (i < len && is_digit(t[i]))
			i++;
	}
	if (i < len && (t[i] == 'e' || t[i] == 'E')) {
		i++;
		if (i < len && (t[i] == '+' || t[i] == '-'))
			i++;
		if (i >= len || !is_digit(t[i]))
			return -EBADMSG;
		while (i < len && is_digit(t[i]))
			i++;
	}
	*pos = i;
	return 0;
}

static int
scan_literal(const char *t, size_t len, size_t *pos)
{
	static const char *const lits[] = {"true", "false", "null"};

	for (size_t k = 0; k < 3; k++) {
		size_t n = strlen(lits[k]);

		if (len - *pos >= n && memcmp(t + *pos, lits[k], n) == 0) {
			*pos += n;
			return 0;
		}
	}
	return -EBADMSG;
}

int
jscan_skip(const char *t, size_t len, size_t *pos)
{
	unsigned char stack[JSCAN_MAX_DEPTH / 8]; /* bit set: that level is an object */
	size_t depth = 0, i = skip_ws(t, len, *pos);
	bool want_key = false;

	for (;;) {
		bool obj;

		/* a value (or, want_key, a member's key and colon then its value) at i */
		if (want_key) {
			if (i >= len || t[i] != '"' || scan_string(t, len, &i, NULL, 0, NULL) < 0)
				return -EBADMSG;
			i = skip_ws(t, len, i);
			if (i >= len || t[i] != ':')
				return -EBADMSG;
			i = skip_ws(t, len, i + 1);
			want_key = false;
		}
		if (i >= len)
			return -EBADMSG;
		if (t[i] == '{' || t[i] == '[') {
			obj = t[i] == '{';
			if (depth == JSCAN_MAX_DEPTH)
				return -EBADMSG;
			if (obj)
				stack[depth / 8] |= (unsigned char)(1u << (depth % 8));
			else
				stack[depth / 8] &= (unsigned char)~(1u << (depth % 8));
			depth++;
			i = skip_ws(t, len, i + 1);
			if (i < len && t[i] == (obj ? '}' : ']')) {
				i++;
				depth--;
			} else {
				want_key = obj;
				continue;
			}
		} else if (t[i] == '"') {
			if (scan_string(t, len, &i, NULL, 0, NULL) < 0)
				return -EBADMSG;
		} else if (t[i] == '-' || is_digit(t[i])) {
			if (scan_number(t, len, &i) < 0)
				return -EBADMSG;
		} else if (scan_literal(t, len, &i) < 0) {
			return -EBADMSG;
		}
		/* after a value: close what it ended, or go on to the next member */
		for (;;) {
			if (depth == 0) {
				*pos = i;
				return 0;
			}
			obj = stack[(depth - 1) / 8] & (1u << ((depth - 1) % 8));
			i = skip_ws(t, len, i);
			if (i >= len)
				return -EBADMSG;
			if (t[i] == ',') {
				i = skip_ws(t, len, i + 1);
				want_key = obj;
				break;
			}
			if (t[i] != (obj ? '}' : ']'))
				return -EBADMSG;
			i++;
			depth--;
		}
	}
}

/* Past the value at t[i] of a text checked already: strings and brackets followed, no checks. */
static size_t
skip_checked(const char *t, size_t len, size_t i)
{
	size_t depth = 0;

	do {
		const char *q;

		switch (t[i]) {
		case '"':
			for (;;) {
				q = memchr(t + i + 1, '"', len - i - 1);
				if (!q)
					return len;
				i = (size_t)(q - t);
				{
					size_t b = 0;

					while (t[i - 1 - b] == '\\')
						b++;
					if (b % 2 == 0)
						break;
				}
			}
			i++;
			break;
		case '{':
		case '[':
			depth++;
			i++;
			break;
		case '}':
		case ']':
			if (depth == 0)
				return i; /* not a value: the caller's check fails */
			depth--;
			i++;
			break;
		default:
			if (depth == 0) { /* a number or a literal */
				while (i < len && t[i] != ',' && t[i] != '}' && t[i] != ']' &&
				       !is_ws(t[i]))
					i++;
				return i;
			}
			i++;
		}
	} while (depth > 0 && i < len);
	return i < len ? i : len;
}

size_t
jscan_skip_fast(const char *t, size_t len, size_t i)
{
	return skip_checked(t, len, i);
}

int
jscan_value(const char *text, size_t len, struct jscan_span *ret)
{
	size_t start = skip_ws(text, len, 0), end = start;

	if (jscan_skip(text, len, &end) < 0 || skip_ws(text, len, end) != len)
		return -EBADMSG;
	ret->p = text + start;
	ret->len = end - start;
	return 0;
}

char
jscan_type(struct jscan_span v)
{
	if (v.len == 0)
		return 0;
	switch (v.p[0]) {
	case '{':
	case '[':
	case '"':
	case 't':
	case 'f':
		return v.p[0];
	case 'n':
		return 'l';
	default:
		return 'n';
	}
}

int
jscan_open(struct jscan_iter *it, const char *text, size_t len, bool object)
{
	size_t i = skip_ws(text, len, 0);

	*it = (struct jscan_iter){.text = text, .len = len, .object = object, .first = true};
	if (i >= len || text[i] != (object ? '{' : '['))
		return -EBADMSG;
	it->pos = i + 1;
	return 0;
}

int
jscan_open_at(struct jscan_iter *it, const char *text, size_t len, size_t pos, bool object)
{
	*it = (struct jscan_iter){
	    .text = text, .len = len, .object = object, .first = true, .nested = true};
	if (pos >= len || text[pos] != (object ? '{' : '['))
		return -EBADMSG;
	it->pos = pos + 1;
	return 0;
}

int
jscan_open_span(struct jscan_iter *it, struct jscan_span v, bool object)
{
	int r = jscan_open(it, v.p, v.len, object);

	it->checked = true;
	return r;
}

/* To the next member's first byte (its key for objects): 1, 0 at the end, -EBADMSG. */
static int
next_member(struct jscan_iter *it)
{
	const char *t = it->text;
	size_t len = it->len, i = skip_ws(t, len, it->pos);

	if (it->done)
		return 0;
	if (i >= len)
		return -EBADMSG;
	if (t[i] == (it->object ? '}' : ']')) {
		if (it->nested) {
			it->pos = i + 1;
		} else {
			if (skip_ws(t, len, i + 1) != len)
				return -EBADMSG;
			it->pos = len;
		}
		it->done = true;
		return 0;
	}
	if (!it->first) {
		if (t[i] != ',')
			return -EBADMSG;
		i = skip_ws(t, len, i + 1);
	}
	it->first = false;
	it->pos = i;
	return 1;
}

int
jscan_next_key(struct jscan_iter *it, struct jscan_span *key)
{
	const char *t = it->text;
	size_t len = it->len, i, start;
	int r = next_member(it);

	if (r <= 0)
		return r;
	i = start = it->pos;
	if (i >= len || t[i] != '"')
		return -EBADMSG;
	if (it->checked)
		i = skip_checked(t, len, i);
	else if (scan_string(t, len, &i, NULL, 0, NULL) < 0)
		return -EBADMSG;
	*key = (struct jscan_span){t + start, i - start};
	i = skip_ws(t, len, i);
	if (i >= len || t[i] != ':')
		return -EBADMSG;
	it->pos = skip_ws(t, len, i + 1);
	return 1;
}

int
jscan_next_value(struct jscan_iter *it, struct jscan_span *value)
{
	const char *t = it->text;
	size_t len = it->len, i = it->pos;

	if (i >= len)
		return -EBADMSG;
	if (it->checked)
		i = skip_checked(t, len, i);
	else if (jscan_skip(t, len, &i) < 0)
		return -EBADMSG;
	*value = (struct jscan_span){t + it->pos, i - it->pos};
	it->pos = i;
	return 1;
}

int
jscan_next(struct jscan_iter *it, struct jscan_span *key, struct jscan_span *value)
{
	struct jscan_span k = {NULL, 0};
	int r = it->object ? jscan_next_key(it, &k) : next_member(it);

	if (r <= 0)
		return r;
	if (key)
		*key = k;
	return jscan_next_value(it, value);
}

int
jscan_string(struct jscan_span v, char *out, size_t out_len, size_t *ret_len)
{
	size_t pos = 0;
	int r;

	if (v.len < 2 || v.p[0] != '"' || out_len == 0)
		return -EBADMSG;
	r = scan_string(v.p, v.len, &pos, out, out_len, ret_len);
	if (r < 0)
		return r;
	return pos == v.len ? 0 : -EBADMSG;
}

bool
jscan_key_is(struct jscan_span key, const char *s)
{
	size_t n = strlen(s), got;
	char buf[256];

	if (key.len < 2)
		return false;
	if (!memchr(key.p, '\\', key.len))
		return key.len == n + 2 && memcmp(key.p + 1, s, n) == 0;
	if (n >= sizeof(buf))
		return false;
	return jscan_string(key, buf, n + 1, &got) == 0 && got == n && memcmp(buf, s, n) == 0;
}

static int
get(struct jscan_iter *it0, const char *key, struct jscan_span *value)
{
	struct jscan_iter it = *it0;
	struct jscan_span k, v;
	int found = 0, r;

	while ((r = jscan_next(&it, &k, &v)) == 1) {
		if (jscan_key_is(k, key)) {
			*value = v;
			found = 1;
		}
	}
	return r < 0 ? r : found;
}

int
jscan_get(const char *text, size_t len, const char *key, struct jscan_span *value)
{
	struct jscan_iter it;

	if (jscan_open(&it, text, len, true) < 0)
		return -EBADMSG;
	return get(&it, key, value);
}

int
jscan_get_span(struct jscan_span obj, const char *key, struct jscan_span *value)
{
	struct jscan_iter it;

	if (jscan_open_span(&it, obj, true) < 0)
		return -EBADMSG;
	return get(&it, key, value);
}
