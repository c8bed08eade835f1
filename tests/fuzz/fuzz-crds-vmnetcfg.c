/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: JSON bytes -> vmnetcfg_decode -> vmnetcfg_encode -> decode -> encode.
 * Decoding must never crash or leak, and whatever decodes must survive a round trip
 * unchanged (the second encoding equals the first).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "crds/vmnetcfg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *in = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
	struct vmnetcfg *p = NULL, *q = NULL;
	struct crd_error err;
	json_t *once, *twice;

	if (!in)
		return 0;
	if (vmnetcfg_decode(in, &p, &err) == 0) {
		once = vmnetcfg_encode(p);
		if (!once || vmnetcfg_decode(once, &q, &err) != 0)
			abort(); /* our own output must decode */
		twice = vmnetcfg_encode(q);
		if (!twice || !json_equal(once, twice))
			abort();
		json_decref(twice);
		json_decref(once);
		vmnetcfg_free(q);
		vmnetcfg_free(p);
	}
	json_decref(in);
	return 0;
}
