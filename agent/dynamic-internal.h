/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_DYNAMIC_INTERNAL_H
#define VMDHCP_AGENT_DYNAMIC_INTERNAL_H

/*
 * The body of struct agent_dynamic and the state its files share (dynamic-state.c): the
 * MAC-keyed entry table, the FIFO of held addresses, the pending offers. For dynamic*.c only.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/dynamic.h"
#include "lib/mactable.h"

struct ipam_pool;

enum { E_EMPTY = 0, E_LEASE, E_HINT };

/*
 * A record of the entry table (lib/mactable.h without its address index: a hint may share an
 * address with a lease, as the table is no owner of addresses: the IPAM pool and the lease
 * file are).
 */
struct entry {
	uint8_t mac[6];	  /* E_LEASE: the MAC it is bound to */
	uint8_t kind;	  /* E_* */
	uint8_t declines; /* DECLINEs honoured since window */
	uint32_t ip;	  /* the lease's or the hint's address */
	uint8_t id_len;
	uint8_t *id;	 /* E_LEASE: its key's bytes (malloc); NULL: keyed by 0x01 + mac */
	uint64_t due;	 /* E_LEASE: expiry; E_HINT: when the lease expired */
	uint64_t window; /* start of the current DECLINE window */
};

_Static_assert(sizeof(struct entry) == 40, "an entry per bound MAC: keep it at 40 bytes");
MACTABLE_RECORD_CHECK(struct entry, mac, ip);

struct hold {
	uint32_t ip;
	uint64_t since;
};

/* A record of the offers table (lib/mactable.h with its address index). */
struct offer {
	uint8_t mac[6]; /* the MAC offered to */
	uint8_t unused[2];
	uint32_t ip;  /* the address offered */
	uint64_t due; /* when the hold ends */
};

MACTABLE_RECORD_CHECK(struct offer, mac, ip);

struct agent_dynamic {
	struct ipam_pool *pool;
	struct leasefile *lf; /* borrowed */
	uint64_t (*clock)(void *userdata);
	void *clock_userdata;
	uint64_t life_usec; /* lease time + grace; UINT64_MAX: never expires */
	uint64_t hold_usec;
	uint32_t life_s;     /* for logs */
	struct mactable tab; /* of struct entry: one per MAC with a lease or a hint */
	size_t n_hints, max_hints;
	/* DECLINEd addresses, oldest first: a ring of hold_cap */
	struct hold *holds;
	size_t hold_cap, hold_head, n_held, max_held;
	/*
	 * Pending offers: an address OFFERed to a MAC without a lease, held (USED in the pool)
	 * until offer_usec after the last OFFER; a REQUEST for it commits it (a lease, in the lease
	 * file), else it goes back to the pool. One per MAC, at most max_offers in all. Records
	 * struct offer, indexed by MAC and by address.
	 */
	struct mactable offers;
	uint64_t offer_usec;
	size_t max_offers;
	struct agent_offer_stats ost; /* counters (carried over a reload) */
	/*
	 * The last lease could not be written (disk full, I/O error): until one can, a DISCOVER
	 * from a new MAC writes its lease at once, as each did before offers were held, so that
	 * a lease that cannot be recorded is never offered and the first that can ends it.
	 */
	bool lf_failing;
};

static inline uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static inline uint64_t
now_usec(const struct agent_dynamic *d)
{
	return d->clock(d->clock_userdata);
}

/* ---- dynamic-state.c ---------------------------------------------------------------------- */

/* Room for one more entry: after it, dyn_entry cannot fail. -ENOMEM. */
int dyn_reserve(struct agent_dynamic *d);
/*
 * mac's entry, new (kind set, the rest zero) when absent; dyn_reserve() first. Entry pointers
 * are good until the next insertion or deletion.
 */
struct entry *dyn_entry(struct agent_dynamic *d, const uint8_t mac[6], uint8_t kind);
/* Deletes e (freeing its key); the last entry moves into its place (a sweep looks at it). */
void dyn_delete(struct agent_dynamic *d, struct entry *e);
/*
 * Makes mac's entry the lease of ip keyed by copy (taken; NULL: 0x01 + mac), expiring at due;
 * dyn_reserve() first. A hint of mac gives way; its DECLINE count stays.
 */
struct entry *dyn_lease_insert(struct agent_dynamic *d, const uint8_t mac[6], uint32_t ip,
    uint8_t *copy, size_t id_len, uint64_t due);

/*
 * What an entry bound to mac keeps of the key (id, id_len) sent from mac: a copy of the bytes,
 * or NULL when the key is 0x01 + mac. -ENOMEM.
 */
int dyn_id_copy(const uint8_t mac[6], const uint8_t *id, size_t id_len, uint8_t **ret);
/* " (client id HEX)" for a log line (cut after 24 bytes), or "" without an identifier. */
const char *dyn_id_note(const uint8_t *id, size_t id_len, char out[80]);

/* Room for one more hold (the ring grows up to max_held). -ENOMEM. */
int dyn_hold_reserve(struct agent_dynamic *d);
/* Appends a hold; dyn_hold_reserve() first. */
void dyn_hold_push(struct agent_dynamic *d, uint32_t ip, uint64_t since);
/* Takes the oldest hold (there is one). */
struct hold dyn_hold_pop(struct agent_dynamic *d);

/* mac's pending offer, or NULL. */
struct offer *dyn_offer_of(const struct agent_dynamic *d, const uint8_t mac[6]);
/*
 * Looks at up to budget pending offers: the expired ones go, and one whose hold ends by
 * evict_due (0: none) is taken over. Returns how many expired.
 */
size_t dyn_reclaim_offers(struct agent_dynamic *d, uint64_t now, uint64_t evict_due, size_t budget);

#endif
