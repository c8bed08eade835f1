/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam/pool6.c - IPv6 pool over [start, end] of any size: USED bits in a table of 64-address
 * chunks, EXCLUDED and RESERVED as sorted offsets, lowest-free allocation from a low-water
 * chunk and a min-heap of chunks that releases reopened below it (see ipam.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/ipam.h"
#include "ipam/pool6-internal.h"

static inline uint64_t
bit_of(ip6_u128 off)
{
	return UINT64_C(1) << (unsigned)(off & 63);
}

static int
cmp_u128(const void *x, const void *y)
{
	ip6_u128 a = *(const ip6_u128 *)x, b = *(const ip6_u128 *)y;

	return a < b ? -1 : a > b;
}

/* Index of the first element >= v of v[0..n) (ascending). */
static size_t
lower_bound(const ip6_u128 *v, size_t n, ip6_u128 x)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool
in_cidr(const struct ipam_pool6 *p, ip6_u128 a)
{
	return a >= p->network && a <= p->cidr_last;
}

static bool
is_reserved(const struct ipam_pool6 *p, ip6_u128 off)
{
	for (unsigned i = 0; i < p->n_reserved; i++)
		if (p->reserved[i] == off)
			return true;
	return false;
}

static bool
is_excluded(const struct ipam_pool6 *p, ip6_u128 off)
{
	size_t k = lower_bound(p->excl, p->n_excl, off);

	return k < p->n_excl && p->excl[k] == off;
}

bool
ipam_pool6_offset(const struct ipam_pool6 *p, const struct in6_addr *addr, ip6_u128 *ret)
{
	ip6_u128 a = ipv6_to_u128(addr);

	if (a < p->start || a - p->start > p->last)
		return false;
	*ret = a - p->start;
	return true;
}

enum ipam_state
ipam_pool6_blocked_state(const struct ipam_pool6 *p, ip6_u128 off)
{
	if (is_reserved(p, off))
		return IPAM_RESERVED;
	return is_excluded(p, off) ? IPAM_EXCLUDED : IPAM_FREE;
}

/* Bits of chunk c that are EXCLUDED, RESERVED or past the range. */
static uint64_t
blocked_mask(const struct ipam_pool6 *p, ip6_u128 c)
{
	ip6_u128 base = c << CHUNK6_SHIFT;
	uint64_t m = 0;

	if (c == p->last >> CHUNK6_SHIFT && (p->last & 63) != 63)
		m = CHUNK6_FULL << ((unsigned)(p->last & 63) + 1);
	for (unsigned i = 0; i < p->n_reserved; i++)
		if (p->reserved[i] >> CHUNK6_SHIFT == c)
			m |= bit_of(p->reserved[i]);
	for (size_t k = lower_bound(p->excl, p->n_excl, base);
	     k < p->n_excl && p->excl[k] >> CHUNK6_SHIFT == c; k++)
		m |= bit_of(p->excl[k]);
	return m;
}

/* The range part of a pool: reserved and excluded offsets for [start, end]. */
struct range6 {
	ip6_u128 start, last;
	ip6_u128 reserved[IPAM6_RESERVED_MAX];
	unsigned n_reserved;
	ip6_u128 *excl;
	size_t n_excl;
};

static void
range_reserve(struct range6 *r, ip6_u128 a)
{
	ip6_u128 off = a - r->start;

	if (a < r->start || off > r->last)
		return;
	for (unsigned i = 0; i < r->n_reserved; i++)
		if (r->reserved[i] == off)
			return;
	r->reserved[r->n_reserved++] = off;
	if (r->n_reserved == 2 && r->reserved[0] > r->reserved[1]) {
		r->reserved[1] = r->reserved[0];
		r->reserved[0] = off;
	}
}

/* Validates [start, end] and the excludes against p's CIDR and fills *r (r->excl new). */
static int
range_make(const struct ipam_pool6 *p, const struct in6_addr *start, const struct in6_addr *end,
    const struct in6_addr *excludes, size_t n_excludes, struct range6 *r)
{
	ip6_u128 s = ipv6_to_u128(start), e = ipv6_to_u128(end);
	size_t n = 0;

	*r = (struct range6){.start = s, .last = e - s};
	if (s > e || (excludes == NULL && n_excludes > 0))
		return -EINVAL;
	if (!in_cidr(p, s) || !in_cidr(p, e))
		return -ERANGE;
	for (size_t i = 0; i < n_excludes; i++)
		if (!in_cidr(p, ipv6_to_u128(&excludes[i])))
			return -ERANGE;
	/* RFC 4291 §2.6.1: the Subnet-Router anycast address (not on a /127, RFC 6164 §6) */
	if (p->prefix <= 126)
		range_reserve(r, p->network);
	if (p->has_server)
		range_reserve(r, p->server);
	if (n_excludes > 0 && (r->excl = malloc(n_excludes * sizeof(*r->excl))) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n_excludes; i++) {
		ip6_u128 a = ipv6_to_u128(&excludes[i]), off = a - s;
		bool reserved = false;

		if (a < s || off > r->last)
			continue;
		for (unsigned k = 0; k < r->n_reserved; k++)
			reserved |= r->reserved[k] == off;
		if (!reserved)
			r->excl[n++] = off;
	}
	if (n > 1)
		qsort(r->excl, n, sizeof(*r->excl), cmp_u128);
	r->n_excl = 0;
	for (size_t i = 0; i < n; i++)
		if (r->n_excl == 0 || r->excl[r->n_excl - 1] != r->excl[i])
			r->excl[r->n_excl++] = r->excl[i];
	return 0;
}

static void
range_apply(struct ipam_pool6 *p, struct range6 *r)
{
	free(p->excl);
	p->start = r->start;
	p->last = r->last;
	memcpy(p->reserved, r->reserved, sizeof(p->reserved));
	p->n_reserved = r->n_reserved;
	p->excl = r->excl;
	p->n_excl = r->n_excl;
	r->excl = NULL;
}

int
ipam_pool6_new(const struct in6_addr *cidr, unsigned prefix, const struct in6_addr *start,
    const struct in6_addr *end, const struct in6_addr *server_ip, const struct in6_addr *excludes,
    size_t n_excludes, struct ipam_pool6 **ret)
{
	struct ipam_pool6 *p;
	struct in6_addr net, last;
	struct range6 r;
	int err;

	if (prefix > 128)
		return -EINVAL;
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return -ENOMEM;
	ipv6_prefix_network(cidr, prefix, &net);
	ipv6_prefix_last(cidr, prefix, &last);
	p->network = ipv6_to_u128(&net);
	p->cidr_last = ipv6_to_u128(&last);
	p->prefix = prefix;
	if (server_ip != NULL && !ipv6_is_zero(server_ip)) {
		p->server = ipv6_to_u128(server_ip);
		p->has_server = true;
	}
	err = range_make(p, start, end, excludes, n_excludes, &r);
	if (err == 0 && p->has_server && !in_cidr(p, p->server))
		err = -ERANGE;
	if (err < 0) {
		free(r.excl);
		free(p);
		return err;
	}
	range_apply(p, &r);
	*ret = p;
	return 0;
}

struct ipam_pool6 *
ipam_pool6_free(struct ipam_pool6 *p)
{
	if (p == NULL)
		return NULL;
	chunktab6_destroy(&p->tab);
	free(p->heap);
	free(p->excl);
	free(p);
	return NULL;
}

static int
heap_grow(struct ipam_pool6 *p, size_t n)
{
	ip6_u128 *h;
	size_t cap = p->heap_cap != 0 ? p->heap_cap : 16;

	if (n <= p->heap_cap)
		return 0;
	while (cap < n) {
		if (cap > SIZE_MAX / 2 / sizeof(*h))
			return -ENOMEM;
		cap *= 2;
	}
	if ((h = realloc(p->heap, cap * sizeof(*h))) == NULL)
		return -ENOMEM;
	p->heap = h;
	p->heap_cap = cap;
	return 0;
}

static int
heap_push(struct ipam_pool6 *p, ip6_u128 c)
{
	size_t i;

	if (heap_grow(p, p->heap_n + 1) < 0)
		return -ENOMEM;
	for (i = p->heap_n++; i > 0 && p->heap[(i - 1) / 2] > c; i = (i - 1) / 2)
		p->heap[i] = p->heap[(i - 1) / 2];
	p->heap[i] = c;
	return 0;
}

static void
heap_pop(struct ipam_pool6 *p)
{
	ip6_u128 x = p->heap[--p->heap_n];
	size_t i = 0, n = p->heap_n;

	for (;;) {
		size_t k = 2 * i + 1;

		if (k >= n)
			break;
		if (k + 1 < n && p->heap[k + 1] < p->heap[k])
			k++;
		if (p->heap[k] >= x)
			break;
		p->heap[i] = p->heap[k];
		i = k;
	}
	if (n > 0)
		p->heap[i] = x;
}

/* Drops chunk c's heap mark, and its slot when it has no USED address. */
static void
unmark(struct ipam_pool6 *p, ip6_u128 c)
{
	struct chunk6 *e = chunktab6_find(&p->tab, c);

	if (e == NULL)
		return;
	e->hi &= ~CHUNK6_HEAP;
	if (e->used == 0)
		chunktab6_delete(&p->tab, e);
}

/* Empties the heap; the hint becomes low (every chunk below `low` is full). */
static void
heap_drop(struct ipam_pool6 *p, ip6_u128 low)
{
	if (p->heap_n > 0 && p->heap[0] < low)
		low = p->heap[0];
	for (size_t i = 0; i < p->heap_n; i++)
		unmark(p, p->heap[i]);
	p->heap_n = 0;
	p->hint = low;
}

void
ipam_pool6_reset_hint(struct ipam_pool6 *p)
{
	heap_drop(p, 0);
}

int
ipam_pool6_reserve(struct ipam_pool6 *p, size_t n)
{
	int r = chunktab6_reserve(&p->tab, n);

	return r < 0 ? r : heap_grow(p, n);
}

/* Marks offset off USED (FREE before). 0 or -ENOMEM (nothing changed). */
static int
mark_used(struct ipam_pool6 *p, struct chunk6 *e, ip6_u128 off)
{
	if (e == NULL) {
		if (chunktab6_reserve(&p->tab, p->tab.n + 1) < 0)
			return -ENOMEM;
		e = chunktab6_add(&p->tab, off >> CHUNK6_SHIFT);
	}
	e->used |= bit_of(off);
	p->n_used++;
	return 0;
}

int
ipam_pool6_alloc(struct ipam_pool6 *p, struct in6_addr *ret)
{
	for (;;) {
		bool from_heap = p->heap_n > 0;
		ip6_u128 c = from_heap ? p->heap[0] : p->hint, off;
		struct chunk6 *e;
		uint64_t full;
		int r;

		if (!from_heap && c > p->last >> CHUNK6_SHIFT)
			return -ENOSPC;
		e = chunktab6_find(&p->tab, c);
		full = (e != NULL ? e->used : 0) | blocked_mask(p, c);
		if (full == CHUNK6_FULL) {
			if (from_heap) {
				heap_pop(p);
				unmark(p, c);
			} else {
				p->hint++;
			}
			continue;
		}
		off = c << CHUNK6_SHIFT | (unsigned)__builtin_ctzll(~full);
		if ((r = mark_used(p, e, off)) < 0)
			return r;
		ipv6_from_u128(p->start + off, ret);
		return 0;
	}
}

int
ipam_pool6_take(struct ipam_pool6 *p, const struct in6_addr *addr)
{
	struct chunk6 *e;
	ip6_u128 off;

	if (!ipam_pool6_offset(p, addr, &off))
		return -ERANGE;
	if (ipam_pool6_blocked_state(p, off) != IPAM_FREE)
		return -EPERM;
	e = chunktab6_find(&p->tab, off >> CHUNK6_SHIFT);
	if (e != NULL && (e->used & bit_of(off)))
		return -EEXIST;
	return mark_used(p, e, off);
}

int
ipam_pool6_release(struct ipam_pool6 *p, const struct in6_addr *addr)
{
	struct chunk6 *e;
	ip6_u128 off, c;

	if (!ipam_pool6_offset(p, addr, &off))
		return -ERANGE;
	c = off >> CHUNK6_SHIFT;
	e = chunktab6_find(&p->tab, c);
	if (e == NULL || !(e->used & bit_of(off)))
		return -ENOENT;
	e->used &= ~bit_of(off);
	p->n_used--;
	if (c < p->hint && !(e->hi & CHUNK6_HEAP)) {
		/* the chunk was full (below the hint, not in the heap): reopen it */
		if (heap_push(p, c) == 0) {
			e->hi |= CHUNK6_HEAP;
			return 0;
		}
		/* no memory for the heap: fall back to scanning from the lowest reopened chunk */
		heap_drop(p, c);
		e = chunktab6_find(&p->tab, c);
	}
	if (e != NULL && e->used == 0 && !(e->hi & CHUNK6_HEAP))
		chunktab6_delete(&p->tab, e);
	return 0;
}

int
ipam_pool6_state(const struct ipam_pool6 *p, const struct in6_addr *addr)
{
	const struct chunk6 *e;
	enum ipam_state s;
	ip6_u128 off;

	if (!ipam_pool6_offset(p, addr, &off))
		return -ERANGE;
	if ((s = ipam_pool6_blocked_state(p, off)) != IPAM_FREE)
		return (int)s;
	e = chunktab6_find(&p->tab, off >> CHUNK6_SHIFT);
	return e != NULL && (e->used & bit_of(off)) ? IPAM_USED : IPAM_FREE;
}

bool
ipam_pool6_is_free(const struct ipam_pool6 *p, const struct in6_addr *addr)
{
	return ipam_pool6_state(p, addr) == IPAM_FREE;
}

uint64_t
ipam_pool6_used(const struct ipam_pool6 *p)
{
	return p->n_used;
}

int64_t
ipam_pool6_available(const struct ipam_pool6 *p)
{
	/* FREE = last + 1 - nonfree; nonfree <= last + 1 always */
	ip6_u128 nonfree = (ip6_u128)p->n_used + p->n_excl + p->n_reserved;

	if (p->last >= (ip6_u128)INT64_MAX + nonfree)
		return INT64_MAX;
	return (int64_t)(p->last + 1 - nonfree);
}

void
ipam_pool6_counts(const struct ipam_pool6 *p, struct ipam_counts6 *ret)
{
	*ret = (struct ipam_counts6){
	    .size_minus_1 = p->last,
	    .used = p->n_used,
	    .available = ipam_pool6_available(p),
	    .excluded = p->n_excl,
	    .reserved = p->n_reserved,
	};
}

void
ipam_pool6_start(const struct ipam_pool6 *p, struct in6_addr *ret)
{
	ipv6_from_u128(p->start, ret);
}

void
ipam_pool6_end(const struct ipam_pool6 *p, struct in6_addr *ret)
{
	ipv6_from_u128(p->start + p->last, ret);
}

void
ipam_pool6_network(const struct ipam_pool6 *p, struct in6_addr *ret)
{
	ipv6_from_u128(p->network, ret);
}

unsigned
ipam_pool6_prefix(const struct ipam_pool6 *p)
{
	return p->prefix;
}

/* The lowest USED address that r (the new range) leaves outside or blocks, if any. */
static bool
stranded(const struct ipam_pool6 *p, const struct ipam_pool6 *np, ip6_u128 *ret)
{
	bool found = false;

	for (size_t i = 0; i < p->tab.n_slots; i++) {
		const struct chunk6 *e = &p->tab.slots[i];

		for (uint64_t bits = e->used; bits != 0; bits &= bits - 1) {
			ip6_u128 a = p->start + (chunk6_number(e) << CHUNK6_SHIFT) +
				     (unsigned)__builtin_ctzll(bits);
			bool bad = a < np->start || a - np->start > np->last ||
				   ipam_pool6_blocked_state(np, a - np->start) != IPAM_FREE;

			if (bad && (!found || a < *ret)) {
				*ret = a;
				found = true;
			}
		}
	}
	return found;
}

/* The USED marks of p re-cut into chunks from a new start, in *ret (new). */
static int
rechunk(const struct ipam_pool6 *p, ip6_u128 start, struct chunktab6 *ret)
{
	*ret = (struct chunktab6){0};
	if (chunktab6_reserve(ret, (size_t)p->n_used) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < p->tab.n_slots; i++) {
		const struct chunk6 *e = &p->tab.slots[i];

		for (uint64_t bits = e->used; bits != 0; bits &= bits - 1) {
			ip6_u128 off = p->start + (chunk6_number(e) << CHUNK6_SHIFT) +
				       (unsigned)__builtin_ctzll(bits) - start;
			struct chunk6 *n = chunktab6_find(ret, off >> CHUNK6_SHIFT);

			if (n == NULL)
				n = chunktab6_add(ret, off >> CHUNK6_SHIFT);
			n->used |= bit_of(off);
		}
	}
	return 0;
}

int
ipam_pool6_set_range(struct ipam_pool6 *p, const struct in6_addr *start, const struct in6_addr *end,
    const struct in6_addr *excludes, size_t n_excludes, struct in6_addr *ret_conflict)
{
	struct ipam_pool6 np = *p;
	struct chunktab6 tab = {0};
	struct range6 r;
	ip6_u128 bad = 0;
	int err;

	if ((err = range_make(p, start, end, excludes, n_excludes, &r)) < 0)
		goto out;
	/* a view of the new range for the state checks (shares nothing that is freed) */
	np.start = r.start;
	np.last = r.last;
	memcpy(np.reserved, r.reserved, sizeof(np.reserved));
	np.n_reserved = r.n_reserved;
	np.excl = r.excl;
	np.n_excl = r.n_excl;
	if (stranded(p, &np, &bad)) {
		if (ret_conflict != NULL)
			ipv6_from_u128(bad, ret_conflict);
		err = -EBUSY;
		goto out;
	}
	if (r.start != p->start) {
		if ((err = rechunk(p, r.start, &tab)) < 0)
			goto out;
		heap_drop(p, 0);
		chunktab6_destroy(&p->tab);
		p->tab = tab;
	}
	range_apply(p, &r);
	ipam_pool6_reset_hint(p);
out:
	free(r.excl);
	return err;
}

size_t
ipam_pool6_memory(const struct ipam_pool6 *p)
{
	return sizeof(*p) + p->tab.n_slots * sizeof(struct chunk6) +
	       p->heap_cap * sizeof(*p->heap) + p->n_excl * sizeof(*p->excl);
}
