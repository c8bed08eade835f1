/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: ippool_decode_text against json_loadb + ippool_decode on the same bytes. Both
 * decode to the same pool (every allocated entry compared) or fail with the same code, path
 * and message; a text that is not JSON gives "not JSON: " and jansson's error. The root, a
 * watch event's "object" and each list item are tried (the informer hands the codec one
 * object's text; here it is cut out again with json_dumps). Any difference traps.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "crds/ippool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_CANDIDATES 16

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
check(const char *text, size_t len)
{
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);
	struct ippool *pa = NULL, *pb = NULL;
	struct crd_error xa, xb;
	int ra, rb;

	memset(&xa, 0, sizeof(xa));
	memset(&xb, 0, sizeof(xb));
	rb = ippool_decode_text(text, len, &pb, &xb);
	if (!j) {
		char want[sizeof(xb.message)];

		snprintf(want, sizeof(want), "not JSON: %s", je.text);
		if (rb != -EBADMSG || strcmp(xb.message, want) != 0 || pb)
			__builtin_trap();
		return;
	}
	ra = ippool_decode(j, &pa, &xa);
	json_decref(j);
	if (ra != rb || strcmp(xa.message, xb.message) != 0 || strcmp(xa.path, xb.path) != 0)
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
}

static void
check_json(const json_t *obj)
{
	char *text = json_dumps(obj, JSON_COMPACT | JSON_ENCODE_ANY);

	if (text)
		check(text, strlen(text));
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *root;
	const json_t *items;

	check((const char *)data, size);
	root = json_loadb((const char *)data, size, 0, NULL);
	if (!json_is_object(root)) {
		json_decref(root);
		return 0;
	}
	if (json_object_get(root, "object"))
		check_json(json_object_get(root, "object"));
	items = json_object_get(root, "items");
	for (size_t i = 0; i < json_array_size(items) && i < MAX_CANDIDATES; i++)
		check_json(json_array_get(items, i));
	json_decref(root);
	return 0;
}
