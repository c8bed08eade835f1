/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/ippool-v6.c - IPPool's IPv6 half (spec.ipv6Config, status.ipv6): additive fields
 * upstream harvester/vm-dhcp-controller does not have and ignores.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crds/crds-internal.h"
#include "crds/ippool.h"
#include "lib/ip6.h"

static int
cmp_alloc6(const void *x, const void *y)
{
	const struct ippool_alloc6 *a = x, *b = y;

	return ipv6_cmp(&a->addr, &b->addr);
}

int
ippool_status_set_allocated6(
    struct ippool_status *st, const struct ippool_alloc6 *allocs, size_t n)
{
	struct ippool_alloc6 *v = NULL;

	if (n) {
		v = malloc(n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memcpy(v, allocs, n * sizeof(*v));
		qsort(v, n, sizeof(*v), cmp_alloc6);
		for (size_t i = 1; i < n; i++)
			if (ipv6_equal(&v[i].addr, &v[i - 1].addr)) {
				free(v);
				return -EEXIST;
			}
	}
	free(st->allocated6);
	st->allocated6 = v;
	st->n_allocated6 = n;
	return 0;
}

const struct ippool_alloc6 *
ippool_status_find6(const struct ippool_status *st, const struct in6_addr *addr)
{
	struct ippool_alloc6 key = {.addr = *addr};

	if (!st->n_allocated6)
		return NULL;
	return bsearch(&key, st->allocated6, st->n_allocated6, sizeof(key), cmp_alloc6);
}
