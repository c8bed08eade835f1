/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_JSCAN_H
#define VMDHCP_LIB_JSCAN_H

/*
 * A strict JSON span scanner that builds nothing: it walks an object's members (key and
 * value spans) or an array's elements and skips values without allocating, so that a caller
 * can find the few parts of a large text it needs (a list page's items, a watch event's
 * object, one map of an IPPool) and hand each to a real decoder.
 *
 * Strict means what jansson's json_loadb accepts: RFC 8259 grammar, strings with valid
 * escapes (\u0000 and lone surrogates refused, as jansson does without JSON_ALLOW_NUL) and
 * valid UTF-8, no control characters, at most JSCAN_MAX_DEPTH nested arrays and objects.
 * Numbers are checked against the grammar, not their range (jansson also refuses integers
 * that do not fit in 64 bits).
 */

#include <stdbool.h>
#include <stddef.h>

#define JSCAN_MAX_DEPTH 2048

/* [p, p + len) of a text; a value span starts at its first byte and ends after its last. */
struct jscan_span {
	const char *p;
	size_t len;
};

/*
 * Skips the value at text[*pos] (whitespace before it skipped) and sets *pos past it.
 * Returns 0 or -EBADMSG.
 */
int jscan_skip(const char *text, size_t len, size_t *pos);

/* The whole text is one value (whitespace around it allowed): 0 and *ret its span, -EBADMSG. */
int jscan_value(const char *text, size_t len, struct jscan_span *ret);

/* What a value span holds, by its first byte: '{', '[', '"', 'n' (number), 't', 'f', 'l' (null),
 * or 0 for an empty span. */
char jscan_type(struct jscan_span v);

/*
 * Iteration over an object or an array in [text, text + len): whitespace before it and after
 * it is allowed, anything else after it is an error reported by the last jscan_next. The
 * members are checked as they are skipped: a text is valid once jscan_next returned 0.
 */
struct jscan_iter {
	const char *text;
	size_t len, pos;
	bool object, first, done;
	bool checked; /* the text was checked already: members are skipped without checks */
	bool nested;  /* jscan_open_at: ends at the closing bracket */
};

/* -EBADMSG when the text does not start with '{' (object true) or '[' (object false). */
int jscan_open(struct jscan_iter *it, const char *text, size_t len, bool object);
/*
 * The same over a value span that jscan handed out (jscan_value, jscan_next, jscan_get): it
 * was checked when it was skipped, so its members are skipped again by a faster loop that
 * only follows strings and brackets.
 */
int jscan_open_span(struct jscan_iter *it, struct jscan_span v, bool object);
/*
 * The next member: 1 with *key (the string with its quotes; NULL for arrays) and *value,
 * 0 at the end, -EBADMSG.
 */
int jscan_next(struct jscan_iter *it, struct jscan_span *key, struct jscan_span *value);

/*
 * An object's next member in two steps: its key (1, 0 at the end, -EBADMSG), it->pos then at
 * the value's first byte; the caller skips the value with jscan_next_value, or reads it
 * itself and sets it->pos past it (to descend into it, say, with jscan_open_at).
 */
int jscan_next_key(struct jscan_iter *it, struct jscan_span *key);
int jscan_next_value(struct jscan_iter *it, struct jscan_span *value);

/*
 * Iteration over the object or array at text[pos] within a larger text: once jscan_next
 * returned 0, it->pos is just past its closing bracket (what follows is the caller's).
 */
int jscan_open_at(struct jscan_iter *it, const char *text, size_t len, size_t pos, bool object);

/*
 * Past the value at text[pos] without checking it (strings and brackets followed only; never
 * reads past len): to find the end of a part that will be parsed strictly anyway.
 */
size_t jscan_skip_fast(const char *text, size_t len, size_t pos);

/* Whether a key span (with quotes, as jscan_next gives it) decodes to s. */
bool jscan_key_is(struct jscan_span key, const char *s);

/*
 * A string span (with quotes) decoded into out (NUL-terminated), *ret_len (optional) its
 * length. -EBADMSG when v is not a valid string, -ENAMETOOLONG when it does not fit.
 */
int jscan_string(struct jscan_span v, char *out, size_t out_len, size_t *ret_len);

/*
 * The member key of the object in [text, text + len) (the last one when it appears twice,
 * as jansson keeps it): 1 and *value, 0 when absent, -EBADMSG (the whole object is checked).
 */
int jscan_get(const char *text, size_t len, const char *key, struct jscan_span *value);
/* The same in a value span that jscan handed out (not checked again, see jscan_open_span). */
int jscan_get_span(struct jscan_span obj, const char *key, struct jscan_span *value);

#endif
