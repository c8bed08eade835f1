/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam/rebuild6.c - the IPv6 pool's rebuild from existing (address, MAC) bindings, reporting
 * every conflict as ipam/rebuild.c does for IPv4, and its ordered iteration.
 *
 * Rebuild: two sorted index arrays, both temporary, by (address, input index) and by (MAC,
 * address, input index); the new USED marks go into a new chunk table that replaces the old
 * one only when everything succeeded. Cost O(n log n).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/ipam.h"
#include "ipam/pool6-internal.h"

struct sort_ctx {
	const struct ipam_binding6 *b;
	size_t i;
};

static int
cmp_addr(const void *x, const void *y)
{
	const struct sort_ctx *a = x, *b = y;
	int c = ipv6_cmp(&a->b->addr, &b->b->addr);

	if (c != 0)
		return c;
	return a->i < b->i ? -1 : a->i > b->i;
}

static int
cmp_mac(const void *x, const void *y)
{
	const struct sort_ctx *a = x, *b = y;
	int c = memcmp(a->b->mac, b->b->mac, MAC_LEN);

	if (c != 0)
		return c;
	return cmp_addr(x, y);
}

static int
cmp_conflict(const void *x, const void *y)
{
	const struct ipam_conflict6 *a = x, *b = y;

	if (a->second != b->second)
		return a->second < b->second ? -1 : 1;
	return (int)a->kind - (int)b->kind;
}

struct conflicts {
	struct ipam_conflict6 *v;
	size_t n, cap;
};

static int
push(struct conflicts *c, enum ipam_conflict_kind kind, const struct in6_addr *addr, size_t first,
    size_t second)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		struct ipam_conflict6 *v = realloc(c->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = (struct ipam_conflict6){
	    .kind = kind,
	    .addr = *addr,
	    .first = first,
	    .second = second,
	};
	return 0;
}

struct rebuild {
	struct ipam_pool6 *pool;
	const struct ipam_binding6 *bindings;
	size_t n;
	struct sort_ctx *idx;
	bool *marked; /* binding i holds its address (pass 1) */
	struct chunktab6 tab;
	uint64_t n_used;
	struct conflicts c;
};

static enum ipam_conflict_kind
bad_kind(const struct ipam_pool6 *p, const struct in6_addr *addr, ip6_u128 *ret_off)
{
	if (!ipam_pool6_offset(p, addr, ret_off))
		return IPAM_CONFLICT_OUTSIDE;
	switch (ipam_pool6_blocked_state(p, *ret_off)) {
	case IPAM_EXCLUDED:
		return IPAM_CONFLICT_EXCLUDED;
	case IPAM_RESERVED:
		return IPAM_CONFLICT_RESERVED;
	default:
		return 0;
	}
}

/* Pass 1: by address. The earliest binding of a free address marks it; others conflict. */
static int
pass_by_addr(struct rebuild *rb)
{
	struct sort_ctx *idx = rb->idx;
	size_t n = rb->n;

	if (n > 0)
		qsort(idx, n, sizeof(*idx), cmp_addr);
	for (size_t g = 0; g < n;) {
		const struct in6_addr *addr = &idx[g].b->addr;
		size_t end = g, owner = idx[g].i;
		ip6_u128 off = 0;
		enum ipam_conflict_kind bad = bad_kind(rb->pool, addr, &off);

		while (end < n && ipv6_equal(&idx[end].b->addr, addr))
			end++;
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
			struct chunk6 *e = chunktab6_find(&rb->tab, off >> CHUNK6_SHIFT);

			if (e == NULL)
				e = chunktab6_add(&rb->tab, off >> CHUNK6_SHIFT);
			e->used |= UINT64_C(1) << (unsigned)(off & 63);
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
		const struct in6_addr *first_addr = NULL;

		while (end < n && memcmp(idx[end].b->mac, idx[g].b->mac, MAC_LEN) == 0)
			end++;
		/* The MAC's address is that of its earliest marked binding. */
		for (size_t k = g; k < end; k++)
			if (marked[idx[k].i] && idx[k].i < first) {
				first = idx[k].i;
				first_addr = &idx[k].b->addr;
			}
		/* Report each other address once, at its earliest binding. */
		for (size_t k = g; first != SIZE_MAX && k < end; k++) {
			const struct in6_addr *addr = &idx[k].b->addr;
			size_t earliest = SIZE_MAX;

			if (!marked[idx[k].i] || ipv6_equal(addr, first_addr))
				continue;
			if (k > g && ipv6_equal(&idx[k - 1].b->addr, addr) && marked[idx[k - 1].i])
				continue; /* not the first of this (MAC, address) run */
			for (size_t j = k; j < end && ipv6_equal(&idx[j].b->addr, addr); j++)
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
ipam_pool6_rebuild(struct ipam_pool6 *pool, const struct ipam_binding6 *bindings, size_t n,
    struct ipam_conflict6 **ret_conflicts)
{
	struct rebuild rb = {.pool = pool, .bindings = bindings, .n = n};

	if (chunktab6_reserve(&rb.tab, n) < 0)
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

	ipam_pool6_reset_hint(pool);
	chunktab6_destroy(&pool->tab);
	pool->tab = rb.tab;
	pool->n_used = rb.n_used;
	free(rb.idx);
	free(rb.marked);
	if (ret_conflicts)
		*ret_conflicts = rb.c.v;
	else
		free(rb.c.v);
	return (int)rb.c.n;

fail:
	chunktab6_destroy(&rb.tab);
	free(rb.idx);
	free(rb.marked);
	free(rb.c.v);
	return -ENOMEM;
}

/* A used chunk for the ordered walk. */
struct used6 {
	ip6_u128 c;
	uint64_t used;
};

static int
cmp_used(const void *x, const void *y)
{
	const struct used6 *a = x, *b = y;

	return a->c < b->c ? -1 : a->c > b->c;
}

/* The next USED offset of the sorted chunks, or false. */
static bool
used_next(const struct used6 *u, size_t n, size_t *i, uint64_t *bits, ip6_u128 *ret)
{
	while (*bits == 0) {
		if (*i == n)
			return false;
		*bits = u[(*i)++].used;
	}
	*ret = u[*i - 1].c << CHUNK6_SHIFT | (unsigned)__builtin_ctzll(*bits);
	*bits &= *bits - 1;
	return true;
}

int
ipam_pool6_foreach(
    const struct ipam_pool6 *p, unsigned state_mask, ipam_foreach6_fn cb, void *userdata)
{
	bool want_used = state_mask & IPAM_MASK(IPAM_USED);
	bool want_excl = state_mask & IPAM_MASK(IPAM_EXCLUDED);
	bool want_res = state_mask & IPAM_MASK(IPAM_RESERVED);
	struct used6 *u = NULL;
	size_t nu = 0, ui = 0, xi = 0, ri = 0;
	uint64_t bits = 0;
	ip6_u128 uoff = 0;
	bool has_u;
	int r = 0;

	if (want_used && p->tab.n > 0) {
		if ((u = malloc(p->tab.n * sizeof(*u))) == NULL)
			return -ENOMEM;
		for (size_t i = 0; i < p->tab.n_slots; i++)
			if (p->tab.slots[i].used != 0)
				u[nu++] = (struct used6){
				    chunk6_number(&p->tab.slots[i]), p->tab.slots[i].used};
		qsort(u, nu, sizeof(*u), cmp_used);
	}
	if (!want_excl)
		xi = p->n_excl;
	if (!want_res)
		ri = p->n_reserved;
	has_u = used_next(u, nu, &ui, &bits, &uoff);
	while (r == 0 && (has_u || xi < p->n_excl || ri < p->n_reserved)) {
		/* the three sets are disjoint: take the lowest head */
		ip6_u128 off = has_u ? uoff : ~(ip6_u128)0;
		enum ipam_state s = IPAM_USED;
		struct in6_addr a;

		if (xi < p->n_excl && p->excl[xi] <= off) {
			off = p->excl[xi];
			s = IPAM_EXCLUDED;
		}
		if (ri < p->n_reserved && p->reserved[ri] <= off) {
			off = p->reserved[ri];
			s = IPAM_RESERVED;
		}
		if (s == IPAM_USED)
			has_u = used_next(u, nu, &ui, &bits, &uoff);
		else if (s == IPAM_EXCLUDED)
			xi++;
		else
			ri++;
		ipv6_from_u128(p->start + off, &a);
		r = cb(&a, s, userdata);
	}
	free(u);
	return r;
}
