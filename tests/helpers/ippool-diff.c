/* SPDX-License-Identifier: Apache-2.0 */
/* See ippool-diff.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "crds/ippool.h"
#include "tests/helpers/ippool-diff.h"

static bool
same_status(const struct ippool_status *a, const struct ippool_status *b)
{
	if (a->has_ipv4 != b->has_ipv4 || a->n_allocated != b->n_allocated || a->used != b->used ||
	    a->available != b->available)
		return false;
	for (size_t i = 0; i < a->n_allocated; i++) {
		const struct ippool_alloc *x = &a->allocated[i], *y = &b->allocated[i];

		if (x->addr != y->addr || x->kind != y->kind ||
		    memcmp(x->mac, y->mac, sizeof(x->mac)) != 0)
			return false;
	}
	if (a->has_ipv6_status != b->has_ipv6_status || a->n_allocated6 != b->n_allocated6 ||
	    a->used6 != b->used6 || a->available6 != b->available6)
		return false;
	for (size_t i = 0; i < a->n_allocated6; i++) {
		const struct ippool_alloc6 *x = &a->allocated6[i], *y = &b->allocated6[i];

		if (memcmp(&x->addr, &y->addr, sizeof(x->addr)) != 0 || x->kind != y->kind ||
		    memcmp(x->mac, y->mac, sizeof(x->mac)) != 0)
			return false;
	}
	return true;
}

const char *
ippool_diff(const char *text, size_t len, struct ippool_diff *out)
{
	json_error_t je;
	json_t *j = json_loadb(text, len, 0, &je);
	struct ippool *pa = NULL, *pb = NULL;
	struct crd_error xa, xb;
	const char *why = NULL;
	int ra, rb;

	if (out)
		*out = (struct ippool_diff){0};
	memset(&xa, 0, sizeof(xa));
	memset(&xb, 0, sizeof(xb));
	rb = ippool_decode_text(text, len, &pb, &xb);
	if (!j) {
		char want[sizeof(xb.message)];

		snprintf(want, sizeof(want), "not JSON: %s", je.text);
		if (rb != -EBADMSG)
			why = "not JSON: ippool_decode_text did not return -EBADMSG";
		else if (strcmp(xb.message, want) != 0 || xb.path[0] != '\0')
			why = "not JSON: another message or a path";
		else if (pb)
			why = "not JSON: a pool returned";
		ippool_free(pb);
		return why;
	}
	ra = ippool_decode(j, &pa, &xa);
	json_decref(j);
	if (ra != rb)
		why = "another return code";
	else if (strcmp(xa.message, xb.message) != 0 || strcmp(xa.path, xb.path) != 0)
		why = "another error message or path";
	else if (ra == 0) {
		json_t *ja = ippool_encode(pa), *jb = ippool_encode(pb);

		if (!ja || !jb || !json_equal(ja, jb))
			why = "another pool (encoded)";
		else if (!same_status(&pa->status, &pb->status))
			why = "another status (allocated entries)";
		else if (out)
			*out = (struct ippool_diff){.decoded = true,
			    .n_allocated = pb->status.n_allocated,
			    .n_allocated6 = pb->status.n_allocated6};
		json_decref(ja);
		json_decref(jb);
	}
	ippool_free(pa);
	ippool_free(pb);
	return why;
}
