/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_IPAM_LEASES_H
#define VMDHCP_IPAM_LEASES_H

/*
 * The MAC ↔ address ownership table: at most one address per MAC and one MAC per address,
 * found either way in O(1). Without its address index (by_addr false at init) it is a MAC →
 * address table where addresses may repeat. Records are the caller's, of a size fixed at init,
 * and begin with a struct ipam_lease; what follows it is the caller's payload (an owner, an
 * expiry), zeroed when the record is added. The table is lib/mactable.h's (dense records, two
 * open-addressing indexes, about rec_size + 10 bytes a binding); these are its names for
 * IPAM's records.
 *
 * Removal moves the last record into the hole, so a record pointer (and an index from
 * ipam_leases_at) is good until the next add or remove. A sweep visits the records a bounded
 * number at a time from a cursor that wraps, for timers that reclaim expired bindings.
 *
 * Pure: no logging; the address range and its marks are ipam_pool's (ipam.h).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/mactable.h"
#include "lib/util.h"

struct ipam_lease {
	uint8_t mac[MAC_LEN];
	uint32_t addr;
};

/* Embeddable; the fields are the table's. */
struct ipam_leases {
	struct mactable tab;
};

/*
 * An empty table of records of rec_size bytes (>= sizeof(struct ipam_lease)), with an address
 * index (one MAC per address) when by_addr; no allocation.
 */
void ipam_leases_init(struct ipam_leases *t, size_t rec_size, bool by_addr);
/* Frees the table's memory (not what payloads point to: walk the records first). */
void ipam_leases_destroy(struct ipam_leases *t);
/* Drops every record; the memory stays for the next adds. */
void ipam_leases_clear(struct ipam_leases *t);

static inline size_t
ipam_leases_count(const struct ipam_leases *t)
{
	return mactable_count(&t->tab);
}

/* Record i of [0, count), in no particular order. */
static inline struct ipam_lease *
ipam_leases_at(const struct ipam_leases *t, size_t i)
{
	return mactable_at(&t->tab, i);
}

/* The record of a MAC / an address (NULL without the address index), or NULL. */
struct ipam_lease *ipam_leases_by_mac(const struct ipam_leases *t, const uint8_t mac[MAC_LEN]);
struct ipam_lease *ipam_leases_by_addr(const struct ipam_leases *t, uint32_t addr);

/* Room for n records: until the count passes n, an add cannot fail with -ENOMEM. */
int ipam_leases_reserve(struct ipam_leases *t, size_t n);
/*
 * Binds mac to addr: a new record (payload zeroed) in *ret. -EEXIST when the MAC or (with the
 * address index) the address is bound already, -ENOMEM; the table unchanged on error.
 */
int ipam_leases_add(
    struct ipam_leases *t, const uint8_t mac[MAC_LEN], uint32_t addr, struct ipam_lease **ret);
/*
 * Moves record l to addr (payload kept): 0, or -EEXIST when another MAC holds addr (with the
 * address index; without, assign l->addr).
 */
int ipam_leases_rebind(struct ipam_leases *t, struct ipam_lease *l, uint32_t addr);
/* Removes record l; the last record moves into its place. */
void ipam_leases_remove(struct ipam_leases *t, struct ipam_lease *l);

/*
 * Calls fn on up to budget records from the cursor on (wrapping). fn returns true when it
 * removed the record it was given, which is then looked at again (the last record moved
 * there). Returns the number of calls.
 */
size_t ipam_leases_sweep(struct ipam_leases *t, size_t budget,
    bool (*fn)(struct ipam_lease *l, void *userdata), void *userdata);

#endif
