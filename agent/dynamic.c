/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --dynamic: unknown MACs are served from the pool range. The lowest address that is not
 * bound statically, excluded or reserved (ipam/) goes to a new client; the client keeps it
 * (sticky) and it is recorded in the lease file, so a restart hands out the same address.
 * This file makes the pool (over the lease file, carrying a previous pool's state over a reload)
 * and answers questions about it; dynamic-alloc.c hands addresses out, dynamic-expiry.c renews,
 * honours DECLINEs and reclaims; dynamic-state.c holds the state they share, and
 * apply-config.c pushes a configuration and the leases into the engine.
 *
 * A lease is keyed by the client identifier (option 61) when the client sends one, else by
 * 0x01 + MAC (RFC 2131 §4.2; the lease file holds the keys), and bound to one MAC, as the
 * engine's table is keyed by MAC (chaddr). So:
 *  - a known identifier from a MAC that has no lease takes its lease with it: the old MAC's
 *    binding goes, the new MAC gets the same address (a VM whose NIC was re-created, with a new
 *    MAC, keeps its address);
 *  - a MAC that has a lease is served that lease whatever identifier it sends (the engine, which
 *    holds one binding per MAC, does not even ask): firmware without an identifier, then an OS
 *    with its DUID-based one (RFC 4361), is one NIC and gets one address, not two. When it is
 *    ACKed with another real identifier (not 0x01 + its MAC), the lease is keyed by that one
 *    from then on (unless that identifier has a lease of its own), so the identifier the client
 *    uses now is the one that finds the lease from a new MAC.
 * Identifiers must be unique (RFC 2132 §9.14): two live NICs sending one (cloned machine ids,
 * one dhclient setting for all interfaces) are one client to the agent, and each request moves
 * the lease to its MAC (logged).
 *
 * An OFFER is not a lease (RFC 2131 §4.3.1: a server "need not reserve the offered network
 * address", though it works better when it does; Kea holds it for its offer-lifetime): a DISCOVER
 * from a MAC without one reserves an address for the offer hold (agent_dynamic_offer_id, the
 * engine's on_offer) and writes nothing; the REQUEST that names it commits the lease and its
 * lease-file line (agent_dynamic_request_id, from on_unknown). Pending offers sit in their own
 * table (24 bytes each plus the indexes), one per MAC, at most max_offers: a flood of DISCOVERs
 * from made-up MACs holds that many addresses for seconds and no more memory; beyond it a
 * DISCOVER from a new MAC takes over an offer made at least 250 ms ago (counted as evicted), and
 * is refused (counted) only while every pending offer is younger: a real client is offered an
 * address at once during or after a flood.
 *
 * Leases end: each one expires lease time + grace after the last ACK (agent_dynamic_renew_id,
 * from the engine's on_ack), and agent_dynamic_expire(), called from a timer, reclaims it. A
 * DECLINEd address is held for the hold-down period, not for good. Per bound MAC the agent
 * keeps one 40-byte entry (lease expiry and key, or the hint of an expired lease, and its
 * DECLINE count; a lease keyed by an identifier has a copy of its bytes) in lib/mactable.h's
 * table (dense records and a MAC index, about 45 to 58 bytes a MAC with the index) that the
 * timer sweeps a bounded number of entries at a time; the held addresses are a FIFO
 * (one hold-down for all, so the oldest is always first).
 *
 * One state machine over four files: allocation, identifier moves, DECLINE holds, renewal and
 * expiry all change the same table, the FIFO and the lease file together, and each keeps the
 * invariants the others rely on (dynamic-internal.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/dynamic-internal.h"
#include "agent/leasefile.h"
#include "agent/pool-config.h"
#include "ipam/ipam.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"

static uint64_t
default_clock(void *userdata)
{
	(void)userdata;
	return clock_now_usec();
}

static int
cmp_mac6(const void *a, const void *b)
{
	return memcmp(a, b, 6);
}

struct prune {
	struct agent_dynamic *d;
	const uint8_t (*static_macs)[6];
	size_t n_static;
};

static void
prune_one(void *userdata, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip)
{
	struct prune *p = userdata;
	char m[MAC_STRLEN], a[IPV4_STRLEN], note[80];
	const char *why = NULL;
	int r;

	if (p->n_static > 0 && bsearch(mac, p->static_macs, p->n_static, 6, cmp_mac6) != NULL)
		why = "the MAC now has a static binding";
	else if ((r = ipam_pool_allocate_addr(p->d->pool, ip)) < 0)
		why = r == -ERANGE   ? "outside the pool range"
		      : r == -EPERM  ? "excluded or reserved"
		      : r == -EEXIST ? "bound to another MAC"
				     : "cannot be marked";
	if (why == NULL)
		return;
	mac_format(mac, m);
	ipv4_format(ip, a);
	log_info("dynamic lease %s -> %s%s dropped: %s", m, a, dyn_id_note(id, id_len, note), why);
	(void)leasefile_remove_id(p->d->lf, id, id_len, mac); /* allowed from foreach_id */
}

struct load {
	struct agent_dynamic *d;
	const struct agent_dynamic *prev;
	uint64_t now;
	int err;
};

/* A lease of the lease file: its expiry carried from prev (a reload), else a fresh one. */
static void
load_one(void *userdata, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip)
{
	struct load *l = userdata;
	const struct entry *old = l->prev != NULL ? mactable_find_mac(&l->prev->tab, mac) : NULL;
	char m[MAC_STRLEN], a[IPV4_STRLEN], note[80];
	struct entry *e;
	uint8_t *copy;

	if (l->err < 0 || (l->err = dyn_reserve(l->d)) < 0)
		return;
	if ((e = mactable_find_mac(&l->d->tab, mac)) != NULL && e->kind == E_LEASE) {
		/* the engine binds a MAC once (the lease file keeps one lease per MAC at open) */
		mac_format(mac, m);
		ipv4_format(ip, a);
		log_info("dynamic lease %s -> %s%s dropped: the MAC has another lease", m, a,
		    dyn_id_note(id, id_len, note));
		(void)ipam_pool_release(l->d->pool, ip);
		(void)leasefile_remove_id(l->d->lf, id, id_len, mac);
		return;
	}
	if ((l->err = dyn_id_copy(mac, id, id_len, &copy)) < 0)
		return;
	e = dyn_entry(l->d, mac, E_LEASE);
	e->kind = E_LEASE;
	e->id = copy;
	e->id_len = copy != NULL ? (uint8_t)id_len : 0;
	e->ip = ip;
	e->due = add_sat(l->now, l->d->life_usec);
	if (old != NULL) {
		/* what its clients were told at their last ACK, whatever the lease time is now */
		if (old->kind == E_LEASE && old->ip == ip)
			e->due = old->due;
		e->declines = old->declines;
		e->window = old->window;
	}
}

/* What prev (the pool being replaced) knew beyond the lease file: hints and held addresses. */
static int
carry(struct agent_dynamic *d, const struct agent_dynamic *prev)
{
	size_t skip = prev->n_held > d->max_held ? prev->n_held - d->max_held : 0;
	int r;

	for (size_t k = 0; k < mactable_count(&prev->tab); k++) {
		const struct entry *o = mactable_at(&prev->tab, k);
		struct entry *e;

		if (o->kind != E_HINT || d->n_hints >= d->max_hints ||
		    mactable_find_mac(&d->tab, o->mac) != NULL ||
		    !ipam_pool_is_free(d->pool, o->ip))
			continue;
		if ((r = dyn_reserve(d)) < 0)
			return r;
		e = dyn_entry(d, o->mac, E_HINT);
		*e = *o;
		e->id = NULL; /* a hint has no key: it is its MAC's */
		e->id_len = 0;
		d->n_hints++;
	}
	/* pending offers, where the MAC has no lease and the new range has the address free */
	d->ost.expired = prev->ost.expired;
	d->ost.refused = prev->ost.refused;
	d->ost.evicted = prev->ost.evicted;
	d->ost.committed = prev->ost.committed;
	for (size_t k = 0; k < mactable_count(&prev->offers); k++) {
		const struct offer *o = mactable_at(&prev->offers, k);
		const struct entry *e = mactable_find_mac(&d->tab, o->mac);
		void *rec;

		if (mactable_count(&d->offers) >= d->max_offers ||
		    (e != NULL && e->kind == E_LEASE))
			continue;
		if ((r = mactable_reserve(&d->offers, mactable_count(&d->offers) + 1)) < 0)
			return r;
		if (ipam_pool_allocate_addr(d->pool, o->ip) < 0)
			continue;
		if (mactable_insert(&d->offers, o->mac, o->ip, &rec) < 0) {
			(void)ipam_pool_release(d->pool, o->ip);
			continue;
		}
		((struct offer *)rec)->due = o->due;
	}
	/* the newest max_held holds, where the new range still has the address free */
	for (size_t k = skip; k < prev->n_held; k++) {
		const struct hold *h = &prev->holds[(prev->hold_head + k) % prev->hold_cap];

		if ((r = dyn_hold_reserve(d)) < 0)
			return r;
		if (ipam_pool_allocate_addr(d->pool, h->ip) == 0)
			dyn_hold_push(d, h->ip, h->since);
	}
	return 0;
}

/* Lifetimes and the clock of opts (NULL: the defaults) for the pool of cfg. */
static void
set_times(
    struct agent_dynamic *d, const struct agent_config *cfg, const struct agent_dynamic_opts *opts)
{
	uint32_t lease_s, grace_s, hold_s;

	d->clock = opts != NULL && opts->clock != NULL ? opts->clock : default_clock;
	d->clock_userdata = opts != NULL ? opts->clock_userdata : NULL;
	/* the engine's reading of lease_time: 0 is one year (DHCP_DEFAULT_LEASE_TIME),
	 * UINT32_MAX infinite */
	lease_s = cfg->opts.lease_time != 0 ? cfg->opts.lease_time : 31536000;
	grace_s = opts != NULL && opts->grace_s != AGENT_DEFAULT ? opts->grace_s : lease_s / 2;
	hold_s = opts != NULL && opts->decline_hold_s != AGENT_DEFAULT ? opts->decline_hold_s
								       : AGENT_DECLINE_HOLD_DEFAULT;
	d->life_s = (uint32_t)MIN((uint64_t)lease_s + grace_s, (uint64_t)UINT32_MAX);
	d->life_usec =
	    lease_s == UINT32_MAX ? UINT64_MAX : ((uint64_t)lease_s + grace_s) * USEC_PER_SEC;
	d->hold_usec = (uint64_t)hold_s * USEC_PER_SEC;
	d->offer_usec =
	    (uint64_t)(opts != NULL && opts->offer_hold_s != 0 ? opts->offer_hold_s
							       : AGENT_OFFER_HOLD_DEFAULT) *
	    USEC_PER_SEC;
}

/* The IPAM pool of cfg with its static bindings taken, and the bounds that follow from it. */
static int
open_pool(
    struct agent_dynamic *d, const struct agent_config *cfg, const struct agent_dynamic_opts *opts)
{
	struct ipam_counts c;
	int r;

	r = ipam_pool_new(cfg->cidr, cfg->prefix, cfg->pool_start, cfg->pool_end,
	    cfg->opts.server_ip, cfg->opts.router, cfg->exclude, cfg->n_exclude, &d->pool);
	if (r < 0)
		return r;
	/* static bindings inside the range are taken; outside it they do not matter */
	for (size_t i = 0; i < cfg->n_bindings; i++) {
		r = ipam_pool_allocate_addr(d->pool, cfg->bindings[i].ip);
		if (r < 0 && r != -ERANGE && r != -EPERM && r != -EEXIST)
			return r;
	}
	/*
	 * What --dynamic can ever hand out: at most half of it is held after DECLINEs (so made-up
	 * MACs declining cannot take the range; a real network has a few squatters, not half of
	 * it), and at most that many hints are kept.
	 */
	ipam_pool_counts(d->pool, &c);
	d->max_held = MAX((size_t)c.available / 2, (size_t)1);
	d->max_hints = MAX((size_t)c.available, (size_t)1);
	/* made-up MACs DISCOVERing hold at most half of it, and 4096 addresses, at once */
	d->max_offers =
	    opts != NULL && opts->max_offers != 0
		? opts->max_offers
		: MIN(MAX((size_t)c.available / 2, (size_t)1), (size_t)AGENT_OFFERS_MAX);
	return 0;
}

/* Removes from the lease file the leases that no longer fit the pool (prune_one). */
static int
prune_leases(struct agent_dynamic *d, const struct agent_config *cfg)
{
	struct prune p = {.d = d, .n_static = cfg->n_bindings};
	uint8_t(*macs)[6] = NULL;

	if (leasefile_count(d->lf) == 0)
		return 0;
	if (cfg->n_bindings > 0) {
		if ((macs = malloc(cfg->n_bindings * sizeof(*macs))) == NULL)
			return -ENOMEM;
		for (size_t i = 0; i < cfg->n_bindings; i++)
			memcpy(macs[i], cfg->bindings[i].mac, 6);
		qsort(macs, cfg->n_bindings, 6, cmp_mac6);
	}
	p.static_macs = (const uint8_t(*)[6])macs;
	leasefile_foreach_id(d->lf, prune_one, &p);
	free(macs);
	return 0;
}

/*
 * The lease tables sized for the pool at the start (up to PRESIZE_MAX leases): growing them
 * while serving moves every lease (realloc, rehash), a stall of the loop that reached 10-40 ms
 * at 30 000-60 000 leases, seen as the DHCP reply latency's tail. Untouched memory is not
 * resident: the records fill as leases come; the index is written at once (4 bytes a slot).
 */
#define PRESIZE_MAX 65536u

static int
presize(struct agent_dynamic *d, struct leasefile *lf)
{
	uint32_t span = ipam_pool_end(d->pool) - ipam_pool_start(d->pool);
	size_t n = span >= PRESIZE_MAX ? PRESIZE_MAX : (size_t)span + 1;
	int r;

	if ((r = mactable_reserve(&d->tab, n)) < 0)
		return r;
	return lf != NULL ? leasefile_reserve(lf, n) : 0;
}

int
agent_dynamic_new(const struct agent_config *cfg, struct leasefile *lf, struct agent_dynamic **ret)
{
	return agent_dynamic_new_opts(cfg, lf, NULL, NULL, ret);
}

int
agent_dynamic_new_opts(const struct agent_config *cfg, struct leasefile *lf,
    const struct agent_dynamic_opts *opts, const struct agent_dynamic *prev,
    struct agent_dynamic **ret)
{
	struct agent_dynamic *d = calloc(1, sizeof(*d));
	struct load l = {0};
	int r;

	if (d == NULL)
		return -ENOMEM;
	mactable_init(&d->tab, sizeof(struct entry), false);
	mactable_init(&d->offers, sizeof(struct offer), true);
	d->lf = lf;
	set_times(d, cfg, opts);
	if ((r = open_pool(d, cfg, opts)) < 0 || (r = prune_leases(d, cfg)) < 0 ||
	    (r = presize(d, lf)) < 0)
		goto fail;
	/* leases: keep those still valid (the others are gone now) */
	l.d = d;
	l.prev = prev;
	l.now = now_usec(d);
	leasefile_foreach_id(lf, load_one, &l);
	if ((r = l.err) < 0 || (prev != NULL && (r = carry(d, prev)) < 0))
		goto fail;
	*ret = d;
	return 0;
fail:
	agent_dynamic_free(d);
	return r;
}

struct agent_dynamic *
agent_dynamic_free(struct agent_dynamic *d)
{
	if (d == NULL)
		return NULL;
	ipam_pool_free(d->pool);
	for (size_t i = 0; i < mactable_count(&d->tab); i++)
		free(((struct entry *)mactable_at(&d->tab, i))->id);
	mactable_destroy(&d->tab);
	mactable_destroy(&d->offers);
	free(d->holds);
	free(d);
	return NULL;
}

struct leasefile *
agent_dynamic_leasefile(const struct agent_dynamic *d)
{
	return d->lf;
}

size_t
agent_dynamic_available(const struct agent_dynamic *d)
{
	struct ipam_counts c;

	ipam_pool_counts(d->pool, &c);
	return c.available;
}

size_t
agent_dynamic_held(const struct agent_dynamic *d)
{
	return d->n_held;
}

size_t
agent_dynamic_held_max(const struct agent_dynamic *d)
{
	return d->max_held;
}

void
agent_dynamic_offer_stats(const struct agent_dynamic *d, struct agent_offer_stats *ret)
{
	*ret = d->ost;
	ret->pending = mactable_count(&d->offers);
	ret->max_pending = d->max_offers;
}

int
agent_dynamic_offered(
    const struct agent_dynamic *d, const uint8_t mac[6], uint32_t *ret_ip, uint64_t *ret_due)
{
	const struct offer *o = dyn_offer_of(d, mac);

	if (o == NULL)
		return -ENOENT;
	if (ret_ip != NULL)
		*ret_ip = o->ip;
	if (ret_due != NULL)
		*ret_due = o->due;
	return 0;
}

int
agent_dynamic_expiry(const struct agent_dynamic *d, const uint8_t mac[6], uint64_t *ret_usec)
{
	const struct entry *e = mactable_find_mac(&d->tab, mac);

	if (e == NULL || e->kind != E_LEASE)
		return -ENOENT;
	*ret_usec = e->due;
	return 0;
}
