/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The in-memory state the --dynamic files share (dynamic-internal.h): the entry table (one
 * 40-byte record per MAC with a lease or the hint of an expired one, in lib/mactable.h's table
 * without its address index), lease keys, the FIFO of DECLINEd addresses held (one hold-down
 * for all, so the oldest is always first) and the pending offers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/dynamic-internal.h"
#include "agent/leasefile.h"
#include "ipam/ipam.h"
#include "lib/util.h"

/* ---- the entry table ---------------------------------------------------------------------- */

int
dyn_reserve(struct agent_dynamic *d)
{
	return mactable_reserve(&d->tab, mactable_count(&d->tab) + 1);
}

struct entry *
dyn_entry(struct agent_dynamic *d, const uint8_t mac[6], uint8_t kind)
{
	struct entry *e = mactable_find_mac(&d->tab, mac);
	void *rec;

	if (e != NULL)
		return e;
	if (mactable_insert(&d->tab, mac, 0, &rec) < 0)
		abort(); /* reserved, and mac is not in the table */
	e = rec;
	e->kind = kind;
	return e;
}

void
dyn_delete(struct agent_dynamic *d, struct entry *e)
{
	free(e->id);
	mactable_delete(&d->tab, e);
}

struct entry *
dyn_lease_insert(struct agent_dynamic *d, const uint8_t mac[6], uint32_t ip, uint8_t *copy,
    size_t id_len, uint64_t due)
{
	struct entry *e = dyn_entry(d, mac, E_LEASE);

	if (e->kind == E_HINT)
		d->n_hints--;
	free(e->id);
	e->kind = E_LEASE;
	e->ip = ip;
	e->id = copy;
	e->id_len = copy != NULL ? (uint8_t)id_len : 0;
	e->due = due;
	return e;
}

/* ---- lease keys ------------------------------------------------------------------------- */

int
dyn_id_copy(const uint8_t mac[6], const uint8_t *id, size_t id_len, uint8_t **ret)
{
	*ret = NULL;
	if (agent_id_is_mac(mac, id, id_len))
		return 0;
	if ((*ret = malloc(id_len)) == NULL)
		return -ENOMEM;
	memcpy(*ret, id, id_len);
	return 0;
}

const char *
dyn_id_note(const uint8_t *id, size_t id_len, char out[80])
{
	static const char hex[] = "0123456789abcdef";
	size_t n = 0, show = MIN(id_len, (size_t)24);

	if (id == NULL) {
		out[0] = '\0';
		return out;
	}
	n = (size_t)snprintf(out, 80, " (client id ");
	for (size_t i = 0; i < show; i++) {
		out[n++] = hex[id[i] >> 4];
		out[n++] = hex[id[i] & 15];
	}
	snprintf(out + n, 80 - n, "%s)", show < id_len ? "..." : "");
	return out;
}

/* ---- held addresses --------------------------------------------------------------------- */

int
dyn_hold_reserve(struct agent_dynamic *d)
{
	size_t cap;
	struct hold *h;

	if (d->n_held < d->hold_cap)
		return 0;
	cap = d->hold_cap == 0 ? MIN((size_t)16, d->max_held) : MIN(d->hold_cap * 2, d->max_held);
	if (cap <= d->hold_cap || (h = malloc(cap * sizeof(*h))) == NULL)
		return -ENOMEM;
	for (size_t k = 0; k < d->n_held; k++)
		h[k] = d->holds[(d->hold_head + k) % d->hold_cap];
	free(d->holds);
	d->holds = h;
	d->hold_cap = cap;
	d->hold_head = 0;
	return 0;
}

void
dyn_hold_push(struct agent_dynamic *d, uint32_t ip, uint64_t since)
{
	d->holds[(d->hold_head + d->n_held) % d->hold_cap] = (struct hold){ip, since};
	d->n_held++;
}

struct hold
dyn_hold_pop(struct agent_dynamic *d)
{
	struct hold h = d->holds[d->hold_head];

	d->hold_head = (d->hold_head + 1) % d->hold_cap;
	d->n_held--;
	return h;
}

/* ---- pending offers ------------------------------------------------------------------- */

struct offer *
dyn_offer_of(const struct agent_dynamic *d, const uint8_t mac[6])
{
	return mactable_find_mac(&d->offers, mac);
}

struct reclaim {
	struct agent_dynamic *d;
	uint64_t now;
	uint64_t evict_due; /* 0, or: one offer whose hold ends by then may be taken over */
	size_t expired;
	bool evicted;
};

/* One pending offer: its hold over, the address goes back to the pool. */
static bool
reclaim_one(void *rec, void *userdata)
{
	struct reclaim *rc = userdata;
	struct offer *o = rec;

	if (o->due <= rc->now) {
		rc->d->ost.expired++;
		rc->expired++;
	} else if (!rc->evicted && o->due <= rc->evict_due) {
		rc->d->ost.evicted++;
		rc->evicted = true;
	} else {
		return false;
	}
	(void)ipam_pool_release(rc->d->pool, o->ip);
	mactable_delete(&rc->d->offers, o);
	return true;
}

size_t
dyn_reclaim_offers(struct agent_dynamic *d, uint64_t now, uint64_t evict_due, size_t budget)
{
	struct reclaim rc = {.d = d, .now = now, .evict_due = evict_due};

	(void)mactable_sweep(
	    &d->offers, MIN(budget, 2 * mactable_count(&d->offers)), reclaim_one, &rc);
	return rc.expired;
}
