/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --dynamic allocation (dynamic.h): the lease a MAC is served (its own, or its identifier's
 * moved to it from another MAC), pending offers for DISCOVERs and the leases REQUESTs commit.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/dynamic-internal.h"
#include "agent/leasefile.h"
#include "ipam/ipam.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"

/* Offers looked at for an expired one when a DISCOVER finds the cap reached. */
#define OFFER_RECLAIM_BUDGET 64
/*
 * With the cap reached, a DISCOVER from a new MAC takes the place of an offer made at least
 * this long ago (or --offer-hold, when shorter): a flood cannot keep a real client waiting for
 * the holds to end, and an offer keeps its address for this long at least, room enough for its
 * REQUEST (sent at once after the OFFER; a REQUEST after that still gets the address while it
 * is free).
 */
#define OFFER_PROTECT_USEC (250 * UINT64_C(1000))

/* Removes mac's pending offer, if any; its address goes back to the pool when release. */
static void
remove_offer(struct agent_dynamic *d, const uint8_t mac[6], bool release)
{
	struct offer *o = dyn_offer_of(d, mac);

	if (o == NULL)
		return;
	if (release)
		(void)ipam_pool_release(d->pool, o->ip);
	mactable_delete(&d->offers, o);
}

/* mac's pending offer is void (it got another address): its address is free again. */
static void
drop_offer(struct agent_dynamic *d, const uint8_t mac[6])
{
	remove_offer(d, mac, true);
}

static struct log_ratelimit rl_move = LOG_RATELIMIT_INIT(10 * USEC_PER_SEC, 10);

/*
 * The lease of key (id, id_len) sent from to, bound to from, moves to to (which has none): a
 * line for it first, then from's binding leaves the engine s (when it is still the lease's),
 * then the entry moves, with its DECLINE count. dyn_reserve() first. Negative errno: nothing
 * changed.
 */
static int
move_lease(struct agent_dynamic *d, struct dhcp_server *s, const uint8_t from[6],
    const uint8_t to[6], const uint8_t *id, size_t id_len, uint32_t ip)
{
	char f[MAC_STRLEN], t[MAC_STRLEN], a[IPV4_STRLEN], note[80];
	uint64_t now = now_usec(d), window = 0;
	uint8_t declines = 0, *copy;
	struct entry *e;
	uint32_t bound;
	int r;

	if ((r = dyn_id_copy(to, id, id_len, &copy)) < 0)
		return r;
	if ((r = leasefile_add_id(d->lf, id, id_len, to, ip)) < 0) {
		free(copy);
		return r;
	}
	if (s != NULL && dhcp_server_get_binding(s, from, &bound) == 0 && bound == ip)
		(void)dhcp_server_remove_binding(s, from);
	if ((e = mactable_find_mac(&d->tab, from)) != NULL && e->kind == E_LEASE) {
		declines = e->declines;
		window = e->window;
		dyn_delete(d, e);
	}
	e = dyn_lease_insert(d, to, ip, copy, id_len, add_sat(now, d->life_usec));
	if (declines > e->declines) {
		e->declines = declines;
		e->window = window;
	}
	mac_format(from, f);
	mac_format(to, t);
	ipv4_format(ip, a);
	log_ratelimited(&rl_move, now, LOG_LEVEL_INFO,
	    "dynamic lease %s%s moved from %s to %s: the same client identifier from a new MAC", a,
	    dyn_id_note(agent_id_is_mac(to, id, id_len) ? NULL : id, id_len, note), f, t);
	return 0;
}

/*
 * The lease mac is served, if any: its own, or the identifier's, moved to mac when it was
 * bound to another MAC. 1 and *ret_ip: a lease; 0: none; negative errno. dyn_reserve() first.
 */
static int
existing_lease(struct agent_dynamic *d, struct dhcp_server *s, const uint8_t mac[6],
    const uint8_t *id, size_t id_len, uint32_t *ret_ip)
{
	struct entry *e = mactable_find_mac(&d->tab, mac);
	uint8_t bound[6], *copy;
	uint32_t ip;
	int r;

	/*
	 * One binding per MAC, as the engine has: a MAC with a lease is served that lease,
	 * whatever identifier it sends now (the engine does not ask for a MAC it has bound; this
	 * is a MAC whose binding it lost).
	 */
	if (e != NULL && e->kind == E_LEASE) {
		*ret_ip = e->ip;
		return 1;
	}
	if (leasefile_lookup_id(d->lf, id, id_len, mac, bound, &ip) < 0)
		return 0;
	if (memcmp(bound, mac, 6) != 0) {
		/* the identifier is known: its lease follows it to this MAC */
		if ((r = move_lease(d, s, bound, mac, id, id_len, ip)) < 0)
			return r;
	} else {
		/* a lease without its entry: give it one now */
		if ((r = dyn_id_copy(mac, id, id_len, &copy)) < 0)
			return r;
		(void)dyn_lease_insert(
		    d, mac, ip, copy, id_len, add_sat(now_usec(d), d->life_usec));
	}
	drop_offer(d, mac); /* (none: a MAC with a lease is never offered another address) */
	*ret_ip = ip;
	return 1;
}

/* What each entry point starts with: the identifier's size checked, room in the table, then
 * existing_lease()'s answer (1 and *ret_ip: a lease; 0: none; negative errno). */
static int
known_lease(struct agent_dynamic *d, struct dhcp_server *s, const uint8_t mac[6], const uint8_t *id,
    size_t id_len, uint32_t *ret_ip)
{
	int r;

	if (id != NULL && id_len > AGENT_ID_MAX)
		return -EINVAL;
	if ((r = dyn_reserve(d)) < 0)
		return r;
	return existing_lease(d, s, mac, id, id_len, ret_ip);
}

/*
 * Records the lease of ip for mac keyed by (id, id_len), with a fresh expiry: the lease file's
 * line, then the entry. dyn_reserve() first; ip is already USED in the pool (not released on
 * error). Negative errno: nothing changed.
 */
static int
commit(struct agent_dynamic *d, const uint8_t mac[6], const uint8_t *id, size_t id_len, uint32_t ip)
{
	uint8_t *copy;
	int r;

	if ((r = dyn_id_copy(mac, id, id_len, &copy)) < 0)
		return r;
	if ((r = leasefile_add_id(d->lf, id, id_len, mac, ip)) < 0) {
		free(copy);
		d->lf_failing = true;
		return r;
	}
	d->lf_failing = false;
	(void)dyn_lease_insert(d, mac, ip, copy, id_len, add_sat(now_usec(d), d->life_usec));
	d->ost.committed++;
	return 0;
}

int
agent_dynamic_allocate_id(struct agent_dynamic *d, struct dhcp_server *s, const uint8_t mac[6],
    const uint8_t *id, size_t id_len, uint32_t *ret_ip)
{
	const struct offer *o;
	struct entry *e;
	uint32_t ip;
	int r;

	if ((r = known_lease(d, s, mac, id, id_len, ret_ip)) != 0)
		return r < 0 ? r : 0;
	e = mactable_find_mac(&d->tab, mac);
	if ((o = dyn_offer_of(d, mac)) != NULL) {
		/* its pending offer becomes its lease */
		ip = o->ip;
		if ((r = commit(d, mac, id, id_len, ip)) < 0)
			return r;
		remove_offer(d, mac, false);
		*ret_ip = ip;
		return 0;
	}
	/* sticky past expiry: the MAC's last address while nobody else took it */
	if (e != NULL && e->kind == E_HINT && ipam_pool_allocate_addr(d->pool, e->ip) == 0)
		ip = e->ip;
	else if ((r = ipam_pool_allocate(d->pool, &ip)) < 0)
		return r;
	if ((r = commit(d, mac, id, id_len, ip)) < 0) {
		(void)ipam_pool_release(d->pool, ip);
		return r;
	}
	*ret_ip = ip;
	return 0;
}

/* The cap reached: room for one more offer, from expired ones or else one made at least
 * OFFER_PROTECT_USEC ago (taken over). Returns whether there is room now. */
static bool
make_offer_room(struct agent_dynamic *d, uint64_t now)
{
	uint64_t protect = MIN(OFFER_PROTECT_USEC, d->offer_usec);

	(void)dyn_reclaim_offers(
	    d, now, add_sat(now, d->offer_usec - protect), OFFER_RECLAIM_BUDGET);
	return mactable_count(&d->offers) < d->max_offers;
}

int
agent_dynamic_offer_id(struct agent_dynamic *d, struct dhcp_server *s, const uint8_t mac[6],
    const uint8_t *id, size_t id_len, uint32_t *ret_ip)
{
	struct offer *o;
	void *rec;
	struct entry *e;
	uint64_t now;
	uint32_t ip;
	int r;

	if ((r = known_lease(d, s, mac, id, id_len, ret_ip)) != 0)
		return r;
	now = now_usec(d);
	if ((o = dyn_offer_of(d, mac)) != NULL) {
		/* a repeated DISCOVER: the same address, held from this OFFER on */
		o->due = add_sat(now, d->offer_usec);
		*ret_ip = o->ip;
		return 0;
	}
	if (d->lf_failing) {
		/* no offer of a lease that cannot be recorded: try to record it now */
		if ((r = agent_dynamic_allocate_id(d, s, mac, id, id_len, ret_ip)) < 0)
			return r;
		return 1;
	}
	if (mactable_count(&d->offers) >= d->max_offers && !make_offer_room(d, now)) {
		d->ost.refused++;
		return -EBUSY;
	}
	if ((r = mactable_reserve(&d->offers, mactable_count(&d->offers) + 1)) < 0)
		return r;
	/* sticky past expiry: the MAC's last address while nobody else took it */
	e = mactable_find_mac(&d->tab, mac);
	if (e != NULL && e->kind == E_HINT && ipam_pool_allocate_addr(d->pool, e->ip) == 0)
		ip = e->ip;
	else if ((r = ipam_pool_allocate(d->pool, &ip)) < 0)
		return r;
	if ((r = mactable_insert(&d->offers, mac, ip, &rec)) < 0) {
		(void)ipam_pool_release(d->pool, ip);
		return r;
	}
	((struct offer *)rec)->due = add_sat(now, d->offer_usec);
	*ret_ip = ip;
	return 0;
}

int
agent_dynamic_request_id(struct agent_dynamic *d, struct dhcp_server *s, const uint8_t mac[6],
    const uint8_t *id, size_t id_len, uint32_t requested, uint32_t *ret_ip)
{
	const struct offer *o;
	int r;

	if ((r = known_lease(d, s, mac, id, id_len, ret_ip)) != 0)
		return r < 0 ? r : 0;
	if (requested == 0)
		return -EADDRNOTAVAIL;
	o = dyn_offer_of(d, mac);
	if (o != NULL && o->ip == requested) {
		/* the address offered: it becomes the MAC's lease */
		if ((r = commit(d, mac, id, id_len, requested)) < 0)
			return r;
		remove_offer(d, mac, false);
		*ret_ip = requested;
		return 0;
	}
	/*
	 * Not (or no longer) offered to it: still its if free (RFC 2131 §4.3.2 leaves a server
	 * free to grant it; the client had it offered, before the hold ended, or leased).
	 * Another MAC's lease or offer, a held, excluded or static address: refused (DHCPNAK).
	 */
	if (ipam_pool_allocate_addr(d->pool, requested) < 0)
		return -EADDRNOTAVAIL;
	if ((r = commit(d, mac, id, id_len, requested)) < 0) {
		(void)ipam_pool_release(d->pool, requested);
		return r;
	}
	drop_offer(d, mac);
	*ret_ip = requested;
	return 0;
}

int
agent_dynamic_allocate(struct agent_dynamic *d, const uint8_t mac[6], uint32_t *ret_ip)
{
	return agent_dynamic_allocate_id(d, NULL, mac, NULL, 0, ret_ip);
}
