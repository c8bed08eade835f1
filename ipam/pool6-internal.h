/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_IPAM_POOL6_INTERNAL_H
#define VMDHCP_IPAM_POOL6_INTERNAL_H

/*
 * Body of struct ipam_pool6, for ipam/ itself and its tests (see ipam.h for the design).
 *
 * Offsets count from the range's start; chunk c holds offsets [c * 64, c * 64 + 63]. A chunk
 * number is below 2^122, so the top two bits of its high word are free for the slot flags.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ipam/ipam.h"
#include "lib/ip6.h"

#define CHUNK6_SHIFT 6
#define CHUNK6_FULL (~UINT64_C(0))
#define CHUNK6_LIVE (UINT64_C(1) << 63) /* the slot holds a chunk */
#define CHUNK6_HEAP (UINT64_C(1) << 62) /* the chunk is in the pool's heap */
#define CHUNK6_HI_MASK (CHUNK6_HEAP - 1)

/* A slot of the chunk table: 24 bytes. */
struct chunk6 {
	uint64_t lo;   /* chunk number, low 64 bits */
	uint64_t hi;   /* chunk number, high bits | CHUNK6_LIVE | CHUNK6_HEAP */
	uint64_t used; /* bit i: offset c * 64 + i is USED */
};

/* Open addressing, linear probing, backward-shift deletion, at most 80 % full. */
struct chunktab6 {
	struct chunk6 *slots;
	size_t n_slots;
	size_t n; /* live slots */
};

static inline ip6_u128
chunk6_number(const struct chunk6 *e)
{
	return (ip6_u128)(e->hi & CHUNK6_HI_MASK) << 64 | e->lo;
}

struct chunk6 *chunktab6_find(const struct chunktab6 *t, ip6_u128 c);
/* Room for n live chunks: 0 or -ENOMEM (the table unchanged). */
int chunktab6_reserve(struct chunktab6 *t, size_t n);
/* Adds chunk c (not there; room reserved), used bits 0. */
struct chunk6 *chunktab6_add(struct chunktab6 *t, ip6_u128 c);
/* Deletes slot e; other slot pointers are invalid afterwards. */
void chunktab6_delete(struct chunktab6 *t, struct chunk6 *e);
void chunktab6_destroy(struct chunktab6 *t);

#define IPAM6_RESERVED_MAX 2 /* the Subnet-Router anycast address, the server IP */

struct ipam_pool6 {
	ip6_u128 network; /* masked CIDR address */
	ip6_u128 cidr_last;
	unsigned prefix;
	ip6_u128 server; /* valid when has_server */
	bool has_server;

	ip6_u128 start;
	ip6_u128 last; /* end - start: the last offset */

	ip6_u128 reserved[IPAM6_RESERVED_MAX]; /* offsets inside the range, ascending */
	unsigned n_reserved;
	ip6_u128 *excl; /* offsets inside the range, ascending, unique, none RESERVED */
	size_t n_excl;

	struct chunktab6 tab; /* chunks with a USED address (and chunks in the heap) */
	uint64_t n_used;

	/*
	 * Every chunk below hint is full (USED, EXCLUDED, RESERVED) except the ones in heap, a
	 * min-heap of the chunks a release made non-full (each once: CHUNK6_HEAP marks it, and
	 * such a chunk's slot stays while it is in the heap). Entries may have become full again
	 * since; allocation drops those from the top.
	 */
	ip6_u128 hint;
	ip6_u128 *heap;
	size_t heap_n, heap_cap;
};

/* Offset of addr when it lies in [start, end]. */
bool ipam_pool6_offset(const struct ipam_pool6 *p, const struct in6_addr *addr, ip6_u128 *ret);
/* State of an offset of the range, USED marks ignored (FREE, EXCLUDED or RESERVED). */
enum ipam_state ipam_pool6_blocked_state(const struct ipam_pool6 *p, ip6_u128 off);
/* Empties the heap (flags cleared, slots of chunks without USED addresses dropped), hint 0. */
void ipam_pool6_reset_hint(struct ipam_pool6 *p);

#endif
