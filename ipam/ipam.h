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

#include "lib/ip6.h"
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

/*
 * IPv6 address management for one pool: the range [start, end] inside cidr/prefix, of any
 * size (a /64 range has 2^64 addresses), with the states and error rules of the IPv4 pool
 * above. RESERVED: the server IP and the CIDR's first address (the Subnet-Router anycast
 * address, RFC 4291 §2.6.1), each when inside the range; IPv6 has no broadcast address.
 * RESERVED wins over EXCLUDED.
 *
 * Memory is proportional to the USED, EXCLUDED and RESERVED addresses, never to the range:
 * the range is cut into 64-address chunks (by offset from start) and only chunks holding a
 * USED address are stored, in an open-addressing hash table of {chunk number, used bits}
 * (24 bytes a slot, at most 80 % full). 65 000 addresses filled from the bottom take 33 KB
 * (half a byte each); 65 000 scattered one per chunk about 44 bytes each. EXCLUDED and
 * RESERVED addresses are a sorted array of offsets (16 bytes each) and at most two offsets.
 * The table does not shrink when addresses are released.
 *
 * Allocation of the lowest FREE address is deterministic and O(1) amortised when filling
 * from the bottom: a low-water chunk number below which every chunk is full, plus a min-heap
 * (16 bytes an entry) of the chunks below it that a release made non-full, so churn stays
 * O(log n). A release grows that heap at most (ipam_pool6_reserve sizes it beforehand); when
 * that fails it falls back to scanning from the lowest reopened chunk, never to an error.
 *
 * From a decoded IPPool (crds/ippool.h, spec.ipv6) the pool is simply
 *   ipam_pool6_new(&v6.cidr_addr, v6.prefix, &v6.start, &v6.end, &v6.server_ip,
 *       v6.exclude, v6.n_exclude, &pool);
 * and a change of pool.start/end/exclude is ipam_pool6_set_range() with the same fields.
 *
 * Addresses are struct in6_addr (network byte order, lib/ip6.h); the all-zero address means
 * "none" where an address is optional. Returns and outputs as for the IPv4 pool.
 */

struct ipam_pool6;

/*
 * New pool over [start, end] inside cidr/prefix (host bits of cidr ignored). server_ip
 * (NULL or zero = none) must lie inside the CIDR when given; it and the CIDR's first address
 * are RESERVED when inside the range. excludes[0..n_excludes) (borrowed; may repeat, may be
 * NULL when n_excludes is 0) are EXCLUDED; an exclude outside the range marks nothing.
 * Returns 0 and *ret (new object), or
 *   -EINVAL  prefix > 128, start > end, or excludes NULL with n_excludes > 0;
 *   -ERANGE  start/end, server_ip or an exclude outside the CIDR;
 *   -ENOMEM.
 */
int ipam_pool6_new(const struct in6_addr *cidr, unsigned prefix, const struct in6_addr *start,
    const struct in6_addr *end, const struct in6_addr *server_ip, const struct in6_addr *excludes,
    size_t n_excludes, struct ipam_pool6 **ret);

/* Frees the pool; accepts NULL; returns NULL. */
struct ipam_pool6 *ipam_pool6_free(struct ipam_pool6 *pool);

/*
 * Room for n USED addresses: until ipam_pool6_used passes n, ipam_pool6_alloc and
 * ipam_pool6_take cannot fail with -ENOMEM (for callers that must not allocate per packet).
 * 0 or -ENOMEM.
 */
int ipam_pool6_reserve(struct ipam_pool6 *pool, size_t n);

/*
 * Allocate the lowest FREE address of the range (deterministic). Returns 0 and *ret, or
 * -ENOSPC when none is free, -ENOMEM (see ipam_pool6_reserve).
 */
int ipam_pool6_alloc(struct ipam_pool6 *pool, struct in6_addr *ret);

/*
 * Allocate a specific address (a static pin or one a MAC already holds). Returns 0, or
 *   -ERANGE  outside [start, end];
 *   -EPERM   EXCLUDED or RESERVED;
 *   -EEXIST  already USED;
 *   -ENOMEM  (see ipam_pool6_reserve).
 */
int ipam_pool6_take(struct ipam_pool6 *pool, const struct in6_addr *addr);

/* Release a USED address. Returns 0, -ERANGE outside the range, -ENOENT when not USED. */
int ipam_pool6_release(struct ipam_pool6 *pool, const struct in6_addr *addr);

/* True when addr is inside the range and FREE. */
bool ipam_pool6_is_free(const struct ipam_pool6 *pool, const struct in6_addr *addr);

/* State of addr; returns -ERANGE (negative) when outside the range, else an ipam_state. */
int ipam_pool6_state(const struct ipam_pool6 *pool, const struct in6_addr *addr);

/* Number of USED addresses; O(1). */
uint64_t ipam_pool6_used(const struct ipam_pool6 *pool);
/*
 * Number of FREE addresses of the range, saturated at INT64_MAX (status.ipv6.available: a
 * /64 cannot be counted out); O(1).
 */
int64_t ipam_pool6_available(const struct ipam_pool6 *pool);

struct ipam_counts6 {
	ip6_u128 size_minus_1; /* end - start (the size does not fit when the range is ::/0) */
	uint64_t used;	       /* USED */
	int64_t available;     /* FREE, saturated at INT64_MAX */
	uint64_t excluded;     /* EXCLUDED */
	uint64_t reserved;     /* RESERVED (0..2) */
};
/* Fills *ret; O(1). */
void ipam_pool6_counts(const struct ipam_pool6 *pool, struct ipam_counts6 *ret);

/* The pool's current configuration (copied out). */
void ipam_pool6_start(const struct ipam_pool6 *pool, struct in6_addr *ret);
void ipam_pool6_end(const struct ipam_pool6 *pool, struct in6_addr *ret);
void ipam_pool6_network(const struct ipam_pool6 *pool, struct in6_addr *ret); /* masked CIDR */
unsigned ipam_pool6_prefix(const struct ipam_pool6 *pool);

/*
 * Iterate in ascending address order over every address whose state bit is in state_mask
 * (IPAM_MASK(IPAM_USED) etc., IPAM_MASK_ALL for all non-FREE ones). cb returns 0 to continue
 * or a value to stop with; ipam_pool6_foreach returns that value, else 0, or -ENOMEM before
 * any call (it sorts a temporary copy of the used chunks). The pool must not be changed from
 * inside cb. Cost: O(k log k) for k stored chunks, plus the matches; never O(range).
 */
typedef int (*ipam_foreach6_fn)(const struct in6_addr *addr, enum ipam_state state, void *userdata);
int ipam_pool6_foreach(
    const struct ipam_pool6 *pool, unsigned state_mask, ipam_foreach6_fn cb, void *userdata);

/*
 * Change the range and the exclude list (CIDR and server IP are fixed for a pool's life).
 * Atomic: on any error the pool is unchanged. Refused with -EBUSY when a USED address would
 * fall outside the new range or onto a new exclude (or a newly RESERVED address); *ret_conflict
 * (optional) then gets the lowest such address. Other errors as ipam_pool6_new (-EINVAL,
 * -ERANGE, -ENOMEM). excludes is borrowed.
 */
int ipam_pool6_set_range(struct ipam_pool6 *pool, const struct in6_addr *start,
    const struct in6_addr *end, const struct in6_addr *excludes, size_t n_excludes,
    struct in6_addr *ret_conflict);

/*
 * Rebuild from existing bindings (after a restart), as ipam_pool_rebuild: every USED mark is
 * dropped, then each binding's address is marked USED in input order (authoritative source
 * first); the same (address, MAC) twice is not a conflict. Each problem is one struct
 * ipam_conflict6 (kinds and first/second as for IPv4), and a contested address stays USED.
 * On success returns the number of conflicts (>= 0) and, when ret_conflicts is not NULL,
 * *ret_conflicts a new array (free(); NULL when none) ordered by `second`. -ENOMEM: the pool
 * unchanged.
 */
struct ipam_binding6 {
	struct in6_addr addr;
	uint8_t mac[MAC_LEN];
};

struct ipam_conflict6 {
	enum ipam_conflict_kind kind;
	struct in6_addr addr; /* the contested address (the second one for DUPLICATE_MAC) */
	size_t first;  /* index in bindings[] of the earlier binding (== second when alone) */
	size_t second; /* index in bindings[] of the binding that conflicts */
};

int ipam_pool6_rebuild(struct ipam_pool6 *pool, const struct ipam_binding6 *bindings, size_t n,
    struct ipam_conflict6 **ret_conflicts);

/* Bytes of memory the pool holds (struct, chunk table, heap, excludes). */
size_t ipam_pool6_memory(const struct ipam_pool6 *pool);

/*
 * The MAC <-> IPv6 ownership table, as ipam/leases.h is for IPv4: at most one address per MAC
 * and (with the address index) one MAC per address, found either way in O(1). Records are the
 * caller's, of a size fixed at init (>= sizeof(struct ipam_lease6)), and begin with a struct
 * ipam_lease6; what follows is the caller's payload, zeroed when the record is added.
 *
 * The records sit in one dense array; beside it two open-addressing indexes of 32-bit slots
 * (record number and 7 hash bits; linear probing, backward-shift deletion; at most 80 % full),
 * the design of lib/mactable.h: rec_size x 1..1.25 (growth) + 10..15 bytes a binding; 41
 * measured for 65 000 bare 24-byte records, 36 after ipam_leases6_shrink.
 * Removal moves the last record into the hole, so a record pointer (and an index from
 * ipam_leases6_at) is good until the next add, remove, reserve or shrink. Pure: no logging.
 */
struct ipam_lease6 {
	uint8_t mac[MAC_LEN];
	uint8_t user[2]; /* the caller's (zeroed on add) */
	struct in6_addr addr;
};

/* At most this many records. */
#define IPAM_LEASES6_MAX ((size_t)0x01fffffe)

/* Embeddable; the fields are the table's. */
struct ipam_leases6 {
	unsigned char *recs; /* n records of rec_size bytes, recs_cap allocated */
	size_t rec_size;
	size_t n, recs_cap;
	uint32_t *by_mac, *by_addr; /* index slots; by_addr NULL without the address index */
	size_t slots;		    /* per index; 0 before the first add or reserve */
	size_t cursor;		    /* where the next sweep starts */
	bool addr_index;
};

/* An empty table (no allocation); with an address index (one MAC per address) when by_addr. */
void ipam_leases6_init(struct ipam_leases6 *t, size_t rec_size, bool by_addr);
/* Frees the table's memory (not what payloads point to: walk the records first). */
void ipam_leases6_destroy(struct ipam_leases6 *t);
/* Drops every record; the memory stays for the next adds. */
void ipam_leases6_clear(struct ipam_leases6 *t);
/* The same on the heap: 0 and *ret, or -EINVAL (rec_size too small), -ENOMEM. */
int ipam_leases6_new(size_t rec_size, bool by_addr, struct ipam_leases6 **ret);
/* Destroys and frees; accepts NULL; returns NULL. */
struct ipam_leases6 *ipam_leases6_free(struct ipam_leases6 *t);

static inline size_t
ipam_leases6_count(const struct ipam_leases6 *t)
{
	return t->n;
}

/* Record i of [0, count), in no particular order. */
static inline struct ipam_lease6 *
ipam_leases6_at(const struct ipam_leases6 *t, size_t i)
{
	return (struct ipam_lease6 *)(void *)(t->recs + i * t->rec_size);
}

/* The record of a MAC / an address (NULL without the address index), or NULL. */
struct ipam_lease6 *ipam_leases6_by_mac(const struct ipam_leases6 *t, const uint8_t mac[MAC_LEN]);
struct ipam_lease6 *ipam_leases6_by_addr(const struct ipam_leases6 *t, const struct in6_addr *addr);
/* Copying lookups: 0 and the address / MAC, or -ENOENT (by address also without the index). */
int ipam_leases6_get_by_mac(
    const struct ipam_leases6 *t, const uint8_t mac[MAC_LEN], struct in6_addr *ret);
int ipam_leases6_get_by_addr(
    const struct ipam_leases6 *t, const struct in6_addr *addr, uint8_t ret_mac[MAC_LEN]);

/* Room for n records: until the count passes n, an add cannot fail with -ENOMEM. */
int ipam_leases6_reserve(struct ipam_leases6 *t, size_t n);
/* Gives back what the records and the indexes do not need now (after mass removals). */
void ipam_leases6_shrink(struct ipam_leases6 *t);
/*
 * Binds mac to addr: a new record (payload zeroed) in *ret (optional). -EEXIST when the MAC or
 * (with the address index) the address is bound already, -ENOMEM; the table unchanged on error.
 */
int ipam_leases6_add(struct ipam_leases6 *t, const uint8_t mac[MAC_LEN],
    const struct in6_addr *addr, struct ipam_lease6 **ret);
/*
 * Moves record l to addr (payload kept): 0, or -EEXIST when another MAC holds addr (with the
 * address index; without, the address is just set).
 */
int ipam_leases6_rebind(struct ipam_leases6 *t, struct ipam_lease6 *l, const struct in6_addr *addr);
/*
 * mac's binding is addr afterwards: adds it (payload zeroed) or moves the MAC's record
 * (payload kept). 0 and *ret (optional), -EEXIST when another MAC holds addr, -ENOMEM; the
 * table unchanged on error.
 */
int ipam_leases6_set(struct ipam_leases6 *t, const uint8_t mac[MAC_LEN],
    const struct in6_addr *addr, struct ipam_lease6 **ret);
/* Removes record l; the last record moves into its place. */
void ipam_leases6_remove(struct ipam_leases6 *t, struct ipam_lease6 *l);
/* Removes mac's record: 0, or -ENOENT. */
int ipam_leases6_remove_mac(struct ipam_leases6 *t, const uint8_t mac[MAC_LEN]);

/*
 * Calls fn on every record (in no particular order); fn returns 0 to continue or a value to
 * stop with, which is returned (else 0). The table must not be changed from inside fn.
 */
int ipam_leases6_foreach(
    const struct ipam_leases6 *t, int (*fn)(struct ipam_lease6 *l, void *userdata), void *userdata);
/*
 * Calls fn on up to budget records from the cursor on (wrapping). fn returns true when it
 * removed the record it was given, which is then looked at again (the last record moved
 * there). Returns the number of calls.
 */
size_t ipam_leases6_sweep(struct ipam_leases6 *t, size_t budget,
    bool (*fn)(struct ipam_lease6 *l, void *userdata), void *userdata);

/* Bytes of heap the table holds (records and indexes). */
size_t ipam_leases6_memory(const struct ipam_leases6 *t);

#endif
