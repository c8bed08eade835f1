/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: ippool_json_loadb against json_loadb on the same bytes, with three flag sets.
 * Both load or both fail with the same error; every IPPool candidate (the root, "object",
 * each of "items") decodes to the same pool or the same error; and the trees are equal once
 * status.ipv4's allocated and packed member are set aside. Any difference traps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "crds/ippool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_CANDIDATES 256

static size_t
candidates(json_t *root, json_t **out)
{
	json_t *items = json_object_get(root, "items"), *obj = json_object_get(root, "object");
	size_t n = 0;

	if (!json_is_object(root))
		return 0;
	out[n++] = root;
	if (obj)
		out[n++] = obj;
	for (size_t i = 0; i < json_array_size(items) && n < MAX_CANDIDATES; i++)
		out[n++] = json_array_get(items, i);
	return n;
}

static void
same_status(const struct ippool_status *a, const struct ippool_status *b)
{
	if (a->has_ipv4 != b->has_ipv4 || a->n_allocated != b->n_allocated || a->used != b->used ||
	    a->available != b->available)
		__builtin_trap();
	for (size_t i = 0; i < a->n_allocated; i++) {
		const struct ippool_alloc *x = &a->allocated[i], *y = &b->allocated[i];

		if (x->addr != y->addr || x->kind != y->kind ||
		    memcmp(x->mac, y->mac, sizeof(x->mac)) != 0)
			__builtin_trap();
	}
}

static void
strip(json_t *cand)
{
	json_t *ipv4 = json_object_get(json_object_get(cand, "status"), "ipv4");

	if (json_is_object(ipv4)) {
		json_object_del(ipv4, "allocated");
		json_object_del(ipv4, IPPOOL_ALLOCATED_PACKED);
	}
}

static void
check(const char *text, size_t len, size_t flags)
{
	json_error_t ea, eb;
	json_t *a = json_loadb(text, len, flags, &ea);
	json_t *b = ippool_json_loadb(text, len, flags, &eb);
	json_t *ca[MAX_CANDIDATES], *cb[MAX_CANDIDATES];
	size_t n;

	if ((a == NULL) != (b == NULL) || strcmp(ea.text, eb.text) != 0 ||
	    strcmp(ea.source, eb.source) != 0 || ea.line != eb.line || ea.column != eb.column ||
	    ea.position != eb.position)
		__builtin_trap();
	if (!a)
		return;
	n = candidates(a, ca);
	if (candidates(b, cb) != n)
		__builtin_trap();
	for (size_t i = 0; i < n; i++) {
		struct ippool *pa = NULL, *pb = NULL;
		struct crd_error xa, xb;
		int ra, rb;

		memset(&xa, 0, sizeof(xa));
		memset(&xb, 0, sizeof(xb));
		ra = ippool_decode(ca[i], &pa, &xa);
		rb = ippool_decode(cb[i], &pb, &xb);
		if (ra != rb || strcmp(xa.message, xb.message) != 0 ||
		    strcmp(xa.path, xb.path) != 0)
			__builtin_trap();
		if (ra == 0) {
			json_t *ja = ippool_encode(pa), *jb = ippool_encode(pb);

			if (!ja || !jb || !json_equal(ja, jb))
				__builtin_trap();
			same_status(&pa->status, &pb->status);
			json_decref(ja);
			json_decref(jb);
		}
		ippool_free(pa);
		ippool_free(pb);
		strip(ca[i]);
		strip(cb[i]);
	}
	if (!json_equal(a, b))
		__builtin_trap();
	json_decref(a);
	json_decref(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t flag_sets[] = {
	    0,
	    JSON_REJECT_DUPLICATES,
	    JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK,
	};

	for (size_t i = 0; i < sizeof(flag_sets) / sizeof(flag_sets[0]); i++)
		check((const char *)data, size, flag_sets[i]);
	return 0;
}
