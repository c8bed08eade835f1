/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: lib/jscan.c against json_loadb on the same bytes. The scanner accepts the text as
 * one value exactly when jansson does (jansson alone also refuses numbers out of range); an
 * accepted object or array iterates to the end with as many members as jansson holds (keys
 * counted once), also through the unchecked paths of a checked span; jscan_skip_fast stays
 * in bounds on any text; a string decodes to jansson's string. Any difference traps. (jansson ends
 * the text at a NUL byte; the scanner refuses it.)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/jscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t
count_unique(const char *text, size_t len, bool object)
{
	struct jscan_iter it, again;
	struct jscan_span k, v, k2, v2;
	size_t n = 0;
	int r;

	if (jscan_open(&it, text, len, object) < 0)
		__builtin_trap();
	while ((r = jscan_next(&it, &k, &v)) == 1) {
		bool later = false;

		if (object) {
			/* counted at its last occurrence only */
			again = it;
			while (jscan_next(&again, &k2, &v2) == 1) {
				char *a = malloc(k.len), *b = malloc(k2.len);
				size_t la, lb;

				if (!a || !b)
					__builtin_trap();
				if (jscan_string(k, a, k.len, &la) == 0 &&
				    jscan_string(k2, b, k2.len, &lb) == 0 && la == lb &&
				    memcmp(a, b, la) == 0)
					later = true;
				free(a);
				free(b);
			}
		}
		n += !later;
	}
	if (r < 0)
		__builtin_trap();
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	json_error_t e;
	json_t *j = json_loadb(text, size, JSON_DECODE_ANY, &e);
	struct jscan_span v;
	int r = jscan_value(text, size, &v);

	/* the unchecked skip never reads past the end, and agrees on valid values */
	if (size > 0 && jscan_skip_fast(text, size, 0) > size)
		__builtin_trap();
	if (r == 0 &&
	    jscan_skip_fast(text, size, (size_t)(v.p - text)) != (size_t)(v.p - text) + v.len)
		__builtin_trap();

	if (j && r < 0 && !memchr(text, '\0', size)) /* jansson stops at a NUL byte */
		__builtin_trap();
	if (!j && r == 0 && !strstr(e.text, "too big") && !strstr(e.text, "overflow"))
		__builtin_trap();
	if (r < 0) {
		json_decref(j);
		return 0;
	}
	if (j && json_is_object(j) && json_object_size(j) < 64 &&
	    count_unique(text, size, true) != json_object_size(j))
		__builtin_trap();
	if (j && json_is_array(j) && count_unique(text, size, false) != json_array_size(j))
		__builtin_trap();
	if (json_is_object(j) || json_is_array(j)) {
		/* a checked span iterates to the same members, the fast way */
		struct jscan_iter a, b;
		struct jscan_span ka, va, kb, vb;
		int ra, rb;

		jscan_open(&a, text, size, json_is_object(j));
		if (jscan_open_span(&b, v, json_is_object(j)) < 0)
			__builtin_trap();
		do {
			ra = jscan_next(&a, &ka, &va);
			rb = jscan_next(&b, &kb, &vb);
			if (ra != rb || (ra == 1 && (va.p != vb.p || va.len != vb.len ||
							ka.p != kb.p || ka.len != kb.len)))
				__builtin_trap();
		} while (ra == 1);
	}
	if (j && json_is_string(j)) {
		size_t n = json_string_length(j), got;
		char *buf = malloc(n + 1);

		if (!buf || jscan_string(v, buf, n + 1, &got) < 0 || got != n ||
		    memcmp(buf, json_string_value(j), n) != 0)
			__builtin_trap();
		free(buf);
	}
	json_decref(j);
	return 0;
}
