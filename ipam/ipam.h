/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_IPAM_IPAM_H
#define VMDHCP_IPAM_IPAM_H

/*
 * IPv4 address management for one pool: the range [start, end] inside a CIDR.
 *
 * Every address of the range is in one of four states:
 *   FREE      may be handed out;
 *   USED      handed out (allocated or bound);
 *   EXCLUDED  listed in the pool's exclude list;
 *   RESERVED  the network or broadcast address of the CIDR, the server IP or the router.
 * RESERVED wins over EXCLUDED when an address is both.
 *
 * The pool is MAC-agnostic: it stores no owner per address. MAC ownership lives with the
 * caller (the controller's MAC -> address map of each network, the agent's dhcp table or
 * its lease file), which is where it is needed anyway. The pool itself is two bitmaps over
 * the range (used, blocked = excluded or reserved) plus a list of at most four reserved
 * addresses: 16 KiB of bitmaps for a /16 range (about 16.6 KiB in all).
 * ipam_pool_rebuild() takes the caller's (address, MAC) pairs to detect two MACs on one
 * address, in a temporary sorted copy.
 *
 * Allocation of the lowest free address is a word scan from a low-water hint (every word
 * below the hint is full), so filling a pool costs O(1) amortised per address; a one-bit-
 * per-word summary of non-full words (128 bytes for a /16) lets the scan skip 64 full words
 * at a time, so churn on a nearly full pool stays cheap too.
 *
 * From a decoded IPPool (crds/ippool.h) the pool is simply
 *   ipam_pool_new(spec.cidr_addr, spec.prefix, spec.start, spec.end, spec.server_ip,
 *       spec.router, spec.exclude, spec.n_exclude, &pool);
 * and a spec change of pool.start/end/exclude is ipam_pool_set_range() with the same fields.
 *
 * All addresses are in host byte order (as lib/util.h's ipv4_parse returns them); 0 means
 * "none" where an address is optional. Functions return 0 (or a count) on success and a
 * negative errno on failure; outputs are written only on success unless stated otherwise.
 * Not thread-safe (one event loop per process).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/util.h"

struct ipam_pool;

enum ipam_state {
	IPAM_FREE = 0,
	IPAM_USED = 1,
	IPAM_EXCLUDED = 2,
	IPAM_RESERVED = 3,
};

/* Largest range a pool accepts (a /8 worth of addresses: 2 MiB per bitmap). */
#define IPAM_MAX_RANGE (UINT32_C(1) << 24)

/*
 * New pool over [start, end] inside cidr_addr/prefix (host bits of cidr_addr ignored).
 * server_ip and router (0 = none) must lie inside the CIDR when given; they, and the
 * network and broadcast addresses (prefix <= 30), are RESERVED when inside the range.
 * excludes[0..n_excludes) (borrowed; may repeat, may be NULL when n_excludes is 0) are
 * EXCLUDED; an exclude outside the range marks nothing (ipam_pool_set_range takes the
 * whole exclude list again). All other addresses start FREE.
 * Returns 0 and *ret (new object), or
 *   -EINVAL  prefix > 32, or start > end;
 *   -ERANGE  start/end, server_ip or router outside the CIDR, or an exclude outside it;
 *   -E2BIG   range larger than IPAM_MAX_RANGE (any prefix is taken, as upstream's
 *            IPPool CRD takes it: the limit is on the range, which a prefix >= 8 bounds);
 *   -ENOMEM.
 */
int ipam_pool_new(uint32_t cidr_addr, unsigned prefix, uint32_t start, uint32_t end,
    uint32_t server_ip, uint32_t router, const uint32_t *excludes, size_t n_excludes,
    struct ipam_pool **ret);

/* Frees the pool; accepts NULL; returns NULL. */
struct ipam_pool *ipam_pool_free(struct ipam_pool *pool);

/*
 * Allocate the lowest FREE address of the range (deterministic). Returns 0 and *ret_addr,
 * or -ENOSPC when none is free.
 */
int ipam_pool_allocate(struct ipam_pool *pool, uint32_t *ret_addr);

/*
 * Allocate a specific address (a static binding or one a MAC already holds). Returns 0, or
 *   -ERANGE  outside [start, end];
 *   -EPERM   EXCLUDED or RESERVED;
 *   -EEXIST  already USED.
 */
int ipam_pool_allocate_addr(struct ipam_pool *pool, uint32_t addr);

/* Release a USED address. Returns 0, -ERANGE outside the range, -ENOENT when not USED. */
int ipam_pool_release(struct ipam_pool *pool, uint32_t addr);

/* True when addr is inside the range and FREE. */
bool ipam_pool_is_free(const struct ipam_pool *pool, uint32_t addr);

/* State of addr; returns -ERANGE (negative) when outside the range, else an ipam_state. */
int ipam_pool_state(const struct ipam_pool *pool, uint32_t addr);

struct ipam_counts {
	uint32_t size;	    /* end - start + 1 */
	uint32_t used;	    /* USED */
	uint32_t available; /* FREE */
	uint32_t excluded;  /* EXCLUDED */
	uint32_t reserved;  /* RESERVED */
};
/* Fills *ret; O(1) (counts are maintained on every change). */
void ipam_pool_counts(const struct ipam_pool *pool, struct ipam_counts *ret);

/* The pool's current configuration (borrowed view). */
uint32_t ipam_pool_start(const struct ipam_pool *pool);
uint32_t ipam_pool_end(const struct ipam_pool *pool);
uint32_t ipam_pool_network(const struct ipam_pool *pool); /* masked CIDR address */
unsigned ipam_pool_prefix(const struct ipam_pool *pool);

/*
 * Iterate in ascending address order over every address whose state bit is in
 * state_mask (bit (1u << IPAM_USED) etc.; IPAM_MASK_ALL for all non-FREE ones). cb returns
 * 0 to continue or a value to stop with; ipam_pool_foreach returns that value, else 0.
 * The pool must not be changed from inside cb. Cost: O(range / 64 + matches).
 */
#define IPAM_MASK(s) (1u << (s))
#define IPAM_MASK_ALL (IPAM_MASK(IPAM_USED) | IPAM_MASK(IPAM_EXCLUDED) | IPAM_MASK(IPAM_RESERVED))
typedef int (*ipam_foreach_fn)(uint32_t addr, enum ipam_state state, void *userdata);
int ipam_pool_foreach(
    const struct ipam_pool *pool, unsigned state_mask, ipam_foreach_fn cb, void *userdata);

/*
 * Change the range and the exclude list (server IP, router and CIDR are fixed for a pool's
 * life; they are immutable in the API). Atomic: on any error the pool is unchanged.
 * Refused with -EBUSY when a USED address would fall outside the new range or onto a new
 * exclude; *ret_conflict (optional) then gets the lowest such address. Other errors as
 * ipam_pool_new (-EINVAL, -ERANGE, -E2BIG, -ENOMEM). excludes is borrowed.
 */
int ipam_pool_set_range(struct ipam_pool *pool, uint32_t start, uint32_t end,
    const uint32_t *excludes, size_t n_excludes, uint32_t *ret_conflict);

/*
 * Rebuild from existing bindings (after a restart): every USED mark is dropped, then each
 * binding's address is marked USED. Bindings are processed in input order, so the caller
 * puts the authoritative source first (VirtualMachineNetworkConfig status before the
 * IPPool's derived status.ipv4.allocated). The same (address, MAC) twice is not a conflict.
 *
 * Nothing is hidden: each problem is reported as one struct ipam_conflict, and the pool is
 * left so that no address is ever handed out twice (a contested address stays USED).
 */
struct ipam_binding {
	uint32_t addr;
	uint8_t mac[MAC_LEN];
};

enum ipam_conflict_kind {
	IPAM_CONFLICT_DUPLICATE_IP = 1, /* two MACs on one address: first keeps it */
	IPAM_CONFLICT_DUPLICATE_MAC,	/* one MAC on two addresses: both stay USED */
	IPAM_CONFLICT_OUTSIDE,		/* address outside [start, end]: not marked */
	IPAM_CONFLICT_EXCLUDED,		/* address is EXCLUDED: not marked */
	IPAM_CONFLICT_RESERVED,		/* address is RESERVED: not marked */
};

struct ipam_conflict {
	enum ipam_conflict_kind kind;
	uint32_t addr; /* the contested address (the second one for DUPLICATE_MAC) */
	size_t first;  /* index in bindings[] of the earlier binding (== second when alone) */
	size_t second; /* index in bindings[] of the binding that conflicts */
};

/*
 * bindings[0..n) borrowed. On success returns the number of conflicts (>= 0) and, when
 * ret_conflicts is not NULL, *ret_conflicts is a new array of them (free() it; NULL when
 * there are none), ordered by `second`. Returns -ENOMEM (pool unchanged) on failure.
 */
int ipam_pool_rebuild(struct ipam_pool *pool, const struct ipam_binding *bindings, size_t n,
    struct ipam_conflict **ret_conflicts);

/* Human-readable name of a conflict kind ("duplicate-ip", …); never NULL. */
const char *ipam_conflict_kind_name(enum ipam_conflict_kind kind);

/* Bytes of memory the pool holds (struct + bitmaps), for benchmarks and metrics. */
size_t ipam_pool_memory(const struct ipam_pool *pool);

#endif
