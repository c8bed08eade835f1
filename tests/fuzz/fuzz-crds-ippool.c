/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: JSON bytes -> ippool_decode -> ippool_encode -> decode -> encode. Decoding must
 * never crash or leak, and whatever decodes must survive a round trip unchanged (the second
 * encoding equals the first).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "crds/ippool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *in = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	struct ippool *p = NULL, *q = NULL;
	struct crd_error err;
	json_t *once, *twice;

	if (!in)
		return 0;
	if (ippool_decode(in, &p, &err) == 0) {
		once = ippool_encode(p);
		if (!once || ippool_decode(once, &q, &err) != 0)
			abort(); /* our own output must decode */
		twice = ippool_encode(q);
		if (!twice || !json_equal(once, twice))
			abort();
		json_decref(twice);
		json_decref(once);
		ippool_free(q);
		ippool_free(p);
	}
	json_decref(in);
	return 0;
}
