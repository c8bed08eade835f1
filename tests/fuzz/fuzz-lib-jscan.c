/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: lib/jscan.c against json_loadb on the same bytes. The scanner accepts the text as
 * one value exactly when jansson does (jansson alone also refuses numbers out of range); an
 * accepted object or array iterates to the end with as many members as jansson holds (keys
 * counted once); a string decodes to jansson's string. Any difference traps. (jansson ends
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
