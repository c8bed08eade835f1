/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam/pool.c - bitmap pool over [start, end]: lowest-free allocation by word scan from a
 * low-water hint, specific allocation, release, counts, iteration, range changes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/ipam-internal.h"
#include "ipam/ipam.h"

static bool
bit_get(const uint64_t *map, uint32_t i)
{
	return (map[i / 64] >> (i % 64)) & 1;
}

static void
bit_set(uint64_t *map, uint32_t i)
{
	map[i / 64] |= UINT64_C(1) << (i % 64);
}

static void
bit_clear(uint64_t *map, uint32_t i)
{
	map[i / 64] &= ~(UINT64_C(1) << (i % 64));
}

/* Keep the summary bit of word w true to used|blocked. */
static void
summary_update(struct ipam_pool *p, size_t w)
{
	uint64_t bit = UINT64_C(1) << (w % 64);

	if ((p->used[w] | p->blocked[w]) == ~UINT64_C(0))
		p->nonfull[w / 64] &= ~bit;
	else
		p->nonfull[w / 64] |= bit;
}

void
ipam_pool_summary_rebuild(struct ipam_pool *p)
{
	for (size_t w = 0; w < p->nwords; w++)
		summary_update(p, w);
}

static bool
in_cidr(const struct ipam_pool *p, uint32_t addr)
{
	return addr >= p->network && addr <= p->broadcast;
}

static bool
in_range(const struct ipam_pool *p, uint32_t addr)
{
	return addr >= p->start && addr <= p->end;
}

static bool
is_reserved(const struct ipam_pool *p, uint32_t addr)
{
	for (unsigned i = 0; i < p->n_reserved; i++)
		if (p->reserved[i] == addr)
			return true;
	return false;
}

static void
add_reserved(struct ipam_pool *p, uint32_t addr)
{
	if (!in_range(p, addr) || is_reserved(p, addr))
		return;
	p->reserved[p->n_reserved++] = addr;
	bit_set(p->blocked, addr - p->start);
}

/*
 * Sets start/end/size and fresh, empty bitmaps with the reserved and excluded marks.
 * Leaves p's previous bitmaps alone (the caller owns them); on failure nothing is kept.
 */
int
ipam_pool_init_range(
    struct ipam_pool *p, uint32_t start, uint32_t end, const uint32_t *excludes, size_t n_excludes)
{
	uint64_t *used, *blocked, *nonfull;
	size_t nwords, nsummary;
	uint32_t n_blocked_excl = 0;

	if (start > end)
		return -EINVAL;
	if (!in_cidr(p, start) || !in_cidr(p, end))
		return -ERANGE;
	if ((uint64_t)end - start + 1 > IPAM_MAX_RANGE)
		return -E2BIG;
	for (size_t i = 0; i < n_excludes; i++)
		if (!in_cidr(p, excludes[i]))
			return -ERANGE;

	nwords = ((uint64_t)end - start + 1 + 63) / 64;
	nsummary = (nwords + 63) / 64;
	used = calloc(nwords, sizeof(*used));
	blocked = calloc(nwords, sizeof(*blocked));
	nonfull = calloc(nsummary, sizeof(*nonfull));
	if (!used || !blocked || !nonfull) {
		free(used);
		free(blocked);
		free(nonfull);
		return -ENOMEM;
	}

	p->start = start;
	p->end = end;
	p->size = end - start + 1;
	p->used = used;
	p->blocked = blocked;
	p->nwords = nwords;
	p->nonfull = nonfull;
	p->nsummary = nsummary;
	p->hint = 0;
	p->n_used = 0;
	p->n_reserved = 0;
	blocked[nwords - 1] |= ipam_tail_mask(p->size);

	/* Network and broadcast are not host addresses (a /31 or /32 has neither). */
	if (p->prefix <= 30) {
		add_reserved(p, p->network);
		add_reserved(p, p->broadcast);
	}
	if (p->server_ip)
		add_reserved(p, p->server_ip);
	if (p->router)
		add_reserved(p, p->router);

	for (size_t i = 0; i < n_excludes; i++) {
		uint32_t a = excludes[i];

		if (!in_range(p, a) || bit_get(blocked, a - start))
			continue; /* outside, reserved, or a repeat */
		bit_set(blocked, a - start);
		n_blocked_excl++;
	}
	p->n_excluded = n_blocked_excl;
	ipam_pool_summary_rebuild(p);
	return 0;
}

int
ipam_pool_new(uint32_t cidr_addr, unsigned prefix, uint32_t start, uint32_t end, uint32_t server_ip,
    uint32_t router, const uint32_t *excludes, size_t n_excludes, struct ipam_pool **ret)
{
	struct ipam_pool *p;
	int r;

	if (prefix > 32 || start > end || (n_excludes > 0 && !excludes))
		return -EINVAL;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->prefix = prefix;
	p->network = cidr_addr & ipv4_prefix_mask(prefix);
	p->broadcast = p->network | ~ipv4_prefix_mask(prefix);
	if ((server_ip && !in_cidr(p, server_ip)) || (router && !in_cidr(p, router))) {
		free(p);
		return -ERANGE;
	}
	p->server_ip = server_ip;
	p->router = router;

	r = ipam_pool_init_range(p, start, end, excludes, n_excludes);
	if (r < 0) {
		free(p);
		return r;
	}
	*ret = p;
	return 0;
}

struct ipam_pool *
ipam_pool_free(struct ipam_pool *pool)
{
	if (!pool)
		return NULL;
	free(pool->used);
	free(pool->blocked);
	free(pool->nonfull);
	free(pool);
	return NULL;
}

int
ipam_pool_allocate(struct ipam_pool *pool, uint32_t *ret_addr)
{
	for (size_t sw = pool->hint / 64; sw < pool->nsummary; sw++) {
		uint64_t words = pool->nonfull[sw];
		uint64_t taken;
		size_t w;
		unsigned bit;

		if (sw == pool->hint / 64)
			words &= ~UINT64_C(0) << (pool->hint % 64);
		if (words == 0)
			continue;
		w = sw * 64 + (unsigned)__builtin_ctzll(words);
		taken = pool->used[w] | pool->blocked[w];
		bit = (unsigned)__builtin_ctzll(~taken);
		pool->used[w] |= UINT64_C(1) << bit;
		pool->n_used++;
		summary_update(pool, w);
		pool->hint = w;
		*ret_addr = pool->start + (uint32_t)(w * 64 + bit);
		return 0;
	}
	pool->hint = pool->nwords;
	return -ENOSPC;
}

int
ipam_pool_allocate_addr(struct ipam_pool *pool, uint32_t addr)
{
	uint32_t i;

	if (!in_range(pool, addr))
		return -ERANGE;
	i = addr - pool->start;
	if (bit_get(pool->blocked, i))
		return -EPERM;
	if (bit_get(pool->used, i))
		return -EEXIST;
	bit_set(pool->used, i);
	pool->n_used++;
	summary_update(pool, i / 64);
	return 0;
}

int
ipam_pool_release(struct ipam_pool *pool, uint32_t addr)
{
	uint32_t i;

	if (!in_range(pool, addr))
		return -ERANGE;
	i = addr - pool->start;
	if (!bit_get(pool->used, i))
		return -ENOENT;
	bit_clear(pool->used, i);
	pool->n_used--;
	summary_update(pool, i / 64);
	if (i / 64 < pool->hint)
		pool->hint = i / 64;
	return 0;
}

int
ipam_pool_state(const struct ipam_pool *pool, uint32_t addr)
{
	uint32_t i;

	if (!in_range(pool, addr))
		return -ERANGE;
	i = addr - pool->start;
	if (bit_get(pool->used, i))
		return IPAM_USED;
	if (bit_get(pool->blocked, i))
		return is_reserved(pool, addr) ? IPAM_RESERVED : IPAM_EXCLUDED;
	return IPAM_FREE;
}

bool
ipam_pool_is_free(const struct ipam_pool *pool, uint32_t addr)
{
	return ipam_pool_state(pool, addr) == IPAM_FREE;
}

void
ipam_pool_counts(const struct ipam_pool *pool, struct ipam_counts *ret)
{
	ret->size = pool->size;
	ret->used = pool->n_used;
	ret->excluded = pool->n_excluded;
	ret->reserved = pool->n_reserved;
	ret->available = pool->size - pool->n_used - pool->n_excluded - pool->n_reserved;
}

uint32_t
ipam_pool_start(const struct ipam_pool *pool)
{
	return pool->start;
}

uint32_t
ipam_pool_end(const struct ipam_pool *pool)
{
	return pool->end;
}

uint32_t
ipam_pool_network(const struct ipam_pool *pool)
{
	return pool->network;
}

unsigned
ipam_pool_prefix(const struct ipam_pool *pool)
{
	return pool->prefix;
}

int
ipam_pool_foreach(
    const struct ipam_pool *pool, unsigned state_mask, ipam_foreach_fn cb, void *userdata)
{
	bool want_used = state_mask & IPAM_MASK(IPAM_USED);
	bool want_blocked = state_mask & (IPAM_MASK(IPAM_EXCLUDED) | IPAM_MASK(IPAM_RESERVED));

	for (size_t w = 0; w < pool->nwords; w++) {
		uint64_t bits =
		    (want_used ? pool->used[w] : 0) | (want_blocked ? pool->blocked[w] : 0);

		if (w == pool->nwords - 1)
			bits &= ~ipam_tail_mask(pool->size);
		while (bits) {
			unsigned bit = (unsigned)__builtin_ctzll(bits);
			uint32_t addr = pool->start + (uint32_t)(w * 64 + bit);
			int state = ipam_pool_state(pool, addr);
			int r;

			bits &= bits - 1;
			if (!(state_mask & IPAM_MASK(state)))
				continue;
			r = cb(addr, (enum ipam_state)state, userdata);
			if (r != 0)
				return r;
		}
	}
	return 0;
}

int
ipam_pool_set_range(struct ipam_pool *pool, uint32_t start, uint32_t end, const uint32_t *excludes,
    size_t n_excludes, uint32_t *ret_conflict)
{
	struct ipam_pool next = *pool;
	bool conflict = false;
	uint32_t lowest = 0;
	int r;

	if (n_excludes > 0 && !excludes)
		return -EINVAL;
	r = ipam_pool_init_range(&next, start, end, excludes, n_excludes);
	if (r < 0)
		return r;

	/* Carry every USED address over; the lowest one that cannot stay is the answer. */
	for (size_t w = 0; w < pool->nwords && !conflict; w++) {
		uint64_t bits = pool->used[w];

		while (bits) {
			unsigned bit = (unsigned)__builtin_ctzll(bits);
			uint32_t addr = pool->start + (uint32_t)(w * 64 + bit);

			bits &= bits - 1;
			if (!in_range(&next, addr) || bit_get(next.blocked, addr - next.start)) {
				conflict = true;
				lowest = addr;
				break;
			}
			bit_set(next.used, addr - next.start);
			next.n_used++;
		}
	}
	if (conflict) {
		free(next.used);
		free(next.blocked);
		free(next.nonfull);
		if (ret_conflict)
			*ret_conflict = lowest;
		return -EBUSY;
	}
	free(pool->used);
	free(pool->blocked);
	free(pool->nonfull);
	*pool = next;
	ipam_pool_summary_rebuild(pool);
	return 0;
}

size_t
ipam_pool_memory(const struct ipam_pool *pool)
{
	return sizeof(*pool) + (2 * pool->nwords + pool->nsummary) * sizeof(uint64_t);
}
