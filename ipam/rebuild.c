/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam/rebuild.c - rebuild a pool's USED marks from existing (address, MAC) bindings and
 * report every conflict instead of resolving it silently.
 *
 * Two sorted index arrays, both temporary: by (address, input index) to find two MACs on
 * one address (the earliest binding keeps it), and by (MAC, address, input index) to find
 * one MAC on two addresses. Cost O(n log n); nothing per address is kept afterwards.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/ipam-internal.h"
#include "ipam/ipam.h"

struct sort_ctx {
	const struct ipam_binding *b;
	size_t i;
};

static int
cmp_addr(const void *x, const void *y)
{
	const struct sort_ctx *a = x, *b = y;

	if (a->b->addr != b->b->addr)
		return a->b->addr < b->b->addr ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static int
cmp_mac(const void *x, const void *y)
{
	const struct sort_ctx *a = x, *b = y;
	int c = memcmp(a->b->mac, b->b->mac, MAC_LEN);

	if (c != 0)
		return c;
	if (a->b->addr != b->b->addr)
		return a->b->addr < b->b->addr ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static int
cmp_conflict(const void *x, const void *y)
{
	const struct ipam_conflict *a = x, *b = y;

	if (a->second != b->second)
		return a->second < b->second ? -1 : 1;
	return (int)a->kind - (int)b->kind;
}

struct conflicts {
	struct ipam_conflict *v;
	size_t n, cap;
};

static int
push(struct conflicts *c, enum ipam_conflict_kind kind, uint32_t addr, size_t first, size_t second)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		struct ipam_conflict *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = (struct ipam_conflict){
	    .kind = kind,
	    .addr = addr,
	    .first = first,
	    .second = second,
	};
	return 0;
}

/* What a rebuild works on: the input, its two sort orders' index, and the result so far. */
struct rebuild {
	struct ipam_pool *pool;
	const struct ipam_binding *bindings;
	size_t n;
	struct sort_ctx *idx;
	bool *marked;	/* binding i holds its address (pass 1) */
	uint64_t *used; /* the new USED bitmap */
	uint32_t n_used;
	struct conflicts c;
};

/* Pass 1: by address. The earliest binding of a free address marks it; others conflict. */
static int
pass_by_addr(struct rebuild *rb)
{
	struct sort_ctx *idx = rb->idx;
	size_t n = rb->n;

	if (n > 0)
		qsort(idx, n, sizeof(*idx), cmp_addr);
	for (size_t g = 0; g < n;) {
		uint32_t addr = idx[g].b->addr;
		size_t end = g, owner = idx[g].i;
		int state = ipam_pool_state(rb->pool, addr);
		enum ipam_conflict_kind bad = 0;

		while (end < n && idx[end].b->addr == addr)
			end++;
		if (state < 0)
			bad = IPAM_CONFLICT_OUTSIDE;
		else if (state == IPAM_EXCLUDED)
			bad = IPAM_CONFLICT_EXCLUDED;
		else if (state == IPAM_RESERVED)
			bad = IPAM_CONFLICT_RESERVED;

		for (size_t k = g; k < end; k++) {
			size_t i = idx[k].i;

			if (bad) {
				if (push(&rb->c, bad, addr, i, i) < 0)
					return -ENOMEM;
				continue;
			}
			rb->marked[i] = true;
			if (k > g && memcmp(idx[k].b->mac, rb->bindings[owner].mac, MAC_LEN) != 0 &&
			    push(&rb->c, IPAM_CONFLICT_DUPLICATE_IP, addr, owner, i) < 0)
				return -ENOMEM;
		}
		if (!bad) {
			uint32_t bit = addr - rb->pool->start;

			rb->used[bit / 64] |= UINT64_C(1) << (bit % 64);
			rb->n_used++;
		}
		g = end;
	}
	return 0;
}

/* Pass 2: by MAC, among bindings that were marked: one MAC on two addresses conflicts. */
static int
pass_by_mac(struct rebuild *rb)
{
	struct sort_ctx *idx = rb->idx;
	const bool *marked = rb->marked;
	size_t n = rb->n;

	if (n > 0)
		qsort(idx, n, sizeof(*idx), cmp_mac);
	for (size_t g = 0; g < n;) {
		size_t end = g, first = SIZE_MAX;
		uint32_t first_addr = 0;

		while (end < n && memcmp(idx[end].b->mac, idx[g].b->mac, MAC_LEN) == 0)
			end++;
		/* The MAC's address is that of its earliest marked binding. */
		for (size_t k = g; k < end; k++)
			if (marked[idx[k].i] && idx[k].i < first) {
				first = idx[k].i;
				first_addr = idx[k].b->addr;
			}
		/* Report each other address once, at its earliest binding. */
		for (size_t k = g; first != SIZE_MAX && k < end; k++) {
			uint32_t addr = idx[k].b->addr;
			size_t earliest = SIZE_MAX;

			if (!marked[idx[k].i] || addr == first_addr)
				continue;
			if (k > g && idx[k - 1].b->addr == addr && marked[idx[k - 1].i])
				continue; /* not the first of this (MAC, address) run */
			for (size_t j = k; j < end && idx[j].b->addr == addr; j++)
				if (marked[idx[j].i] && idx[j].i < earliest)
					earliest = idx[j].i;
			if (push(&rb->c, IPAM_CONFLICT_DUPLICATE_MAC, addr, first, earliest) < 0)
				return -ENOMEM;
		}
		g = end;
	}
	return 0;
}

int
ipam_pool_rebuild(struct ipam_pool *pool, const struct ipam_binding *bindings, size_t n,
    struct ipam_conflict **ret_conflicts)
{
	struct rebuild rb = {.pool = pool, .bindings = bindings, .n = n};
	int r = -ENOMEM;

	rb.used = calloc(pool->nwords, sizeof(*rb.used));
	if (!rb.used)
		goto fail;
	if (n > 0) {
		rb.idx = malloc(n * sizeof(*rb.idx));
		rb.marked = calloc(n, sizeof(*rb.marked));
		if (!rb.idx || !rb.marked)
			goto fail;
	}
	for (size_t i = 0; i < n; i++)
		rb.idx[i] = (struct sort_ctx){.b = &bindings[i], .i = i};
	if (pass_by_addr(&rb) < 0 || pass_by_mac(&rb) < 0)
		goto fail;
	if (rb.c.n > 0)
		qsort(rb.c.v, rb.c.n, sizeof(*rb.c.v), cmp_conflict);

	free(pool->used);
	pool->used = rb.used;
	pool->n_used = rb.n_used;
	pool->hint = 0;
	ipam_pool_summary_rebuild(pool);
	free(rb.idx);
	free(rb.marked);
	r = (int)rb.c.n;
	if (ret_conflicts)
		*ret_conflicts = rb.c.v;
	else
		free(rb.c.v);
	return r;

fail:
	free(rb.used);
	free(rb.idx);
	free(rb.marked);
	free(rb.c.v);
	return r;
}

static const char *const conflict_names[] = {
    [IPAM_CONFLICT_DUPLICATE_IP] = "duplicate-ip",
    [IPAM_CONFLICT_DUPLICATE_MAC] = "duplicate-mac",
    [IPAM_CONFLICT_OUTSIDE] = "outside-range",
    [IPAM_CONFLICT_EXCLUDED] = "excluded",
    [IPAM_CONFLICT_RESERVED] = "reserved",
};

const char *
ipam_conflict_kind_name(enum ipam_conflict_kind kind)
{
	if ((size_t)kind < ELEMENTSOF(conflict_names) && conflict_names[kind])
		return conflict_names[kind];
	return "unknown";
}
