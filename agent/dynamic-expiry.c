/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --dynamic leases over time (dynamic.h): renewal on each ACK (and the key of the identifier
 * the client uses now), DECLINEd addresses held for the hold-down period, and the timer's
 * bounded sweep that reclaims expired leases, ended holds and pending offers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "agent/dynamic-internal.h"
#include "agent/leasefile.h"
#include "ipam/ipam.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"

/* Whether lease e (bound to e->mac) is keyed by (id, id_len) sent from mac. */
static bool
entry_has_key(const struct entry *e, const uint8_t mac[6], const uint8_t *id, size_t id_len)
{
	if (agent_id_is_mac(mac, id, id_len)) { /* the key is 0x01 + mac */
		if (e->id == NULL)
			return memcmp(e->mac, mac, 6) == 0;
		return e->id_len == 7 && e->id[0] == 1 && memcmp(e->id + 1, mac, 6) == 0;
	}
	if (e->id == NULL) /* e's key is 0x01 + e->mac */
		return id_len == 7 && id[0] == 1 && memcmp(id + 1, e->mac, 6) == 0;
	return e->id_len == id_len && memcmp(e->id, id, id_len) == 0;
}

/* Whether ip is offered to mac now. */
static bool
offered_to(const struct agent_dynamic *d, uint32_t ip, const uint8_t mac[6])
{
	const struct offer *o = mactable_find_ip(&d->offers, ip);

	return o != NULL && memcmp(o->mac, mac, 6) == 0;
}

/*
 * mac's lease entry when it is the lease of ip (checked against the lease file too when verify:
 * not on every ACK); a lease keyed by mac (0x01 + mac) that lost its entry gets one. NULL: none.
 */
static struct entry *
lease_of(struct agent_dynamic *d, const uint8_t mac[6], uint32_t ip, bool verify)
{
	struct entry *e = mactable_find_mac(&d->tab, mac);
	uint8_t bound[6];
	uint32_t cur;

	if (e != NULL && e->kind == E_LEASE && e->ip == ip) {
		if (verify && (leasefile_lookup_id(d->lf, e->id, e->id_len, mac, bound, &cur) < 0 ||
				  memcmp(bound, mac, 6) != 0 || cur != ip))
			return NULL;
		return e;
	}
	/* a lease without its entry (no memory when it was made): give it one now */
	if (leasefile_lookup_id(d->lf, NULL, 0, mac, bound, &cur) < 0 ||
	    memcmp(bound, mac, 6) != 0 || cur != ip || dyn_reserve(d) < 0)
		return NULL;
	return dyn_lease_insert(d, mac, ip, NULL, 0, add_sat(now_usec(d), d->life_usec));
}

int
agent_dynamic_decline(struct agent_dynamic *d, const uint8_t mac[6], uint32_t ip, uint32_t *ret_ip)
{
	uint64_t now = now_usec(d);
	char a[IPV4_STRLEN];
	struct entry *e;
	uint32_t nip;
	int r;

	/* the engine's binding, so the lease bound to mac, whatever identifier the DECLINE has */
	if ((e = lease_of(d, mac, ip, true)) == NULL)
		return -ENOENT; /* not a dynamic lease of this MAC */
	/* one MAC cannot walk the range: AGENT_DECLINE_LIMIT per hold-down period */
	if (e->declines > 0 && now - e->window >= d->hold_usec)
		e->declines = 0;
	if (e->declines >= AGENT_DECLINE_LIMIT)
		return -EBUSY;
	/* the bound on held addresses: the oldest hold ends early */
	if (d->n_held >= d->max_held) {
		struct hold h = dyn_hold_pop(d);
		(void)ipam_pool_release(d->pool, h.ip);
		ipv4_format(h.ip, a);
		log_info("declined address %s back in the pool before its hold-down ended: %zu "
			 "addresses are held already (half of what the range can hand out)",
		    a, d->max_held);
	}
	if ((r = dyn_hold_reserve(d)) < 0)
		return r;
	/* the declined address stays USED (something else on the network holds it) */
	if ((r = ipam_pool_allocate(d->pool, &nip)) < 0)
		return r;
	if ((r = leasefile_add_id(d->lf, e->id, e->id_len, mac, nip)) < 0) {
		(void)ipam_pool_release(d->pool, nip);
		return r;
	}
	dyn_hold_push(d, ip, now);
	if (e->declines++ == 0)
		e->window = now;
	e->ip = nip;
	e->due = add_sat(now, d->life_usec);
	*ret_ip = nip;
	return 0;
}

/*
 * Lease e of mac was ACKed for a request with another real identifier: from now on it is keyed
 * by that one, unless that identifier has a lease of its own (bound elsewhere: it stays
 * there). The new key's line goes first; at open it supersedes the old key's (same MAC and
 * address). Negative errno: e keeps its key.
 */
static int
rekey(struct agent_dynamic *d, struct entry *e, const uint8_t mac[6], const uint8_t *id,
    size_t id_len)
{
	char m[MAC_STRLEN], a[IPV4_STRLEN], note[80];
	uint8_t *copy;
	int r;

	if (leasefile_lookup_id(d->lf, id, id_len, mac, NULL, NULL) == 0)
		return 0;
	if ((r = dyn_id_copy(mac, id, id_len, &copy)) < 0)
		return r;
	if ((r = leasefile_add_id(d->lf, id, id_len, mac, e->ip)) < 0) {
		free(copy);
		return r;
	}
	(void)leasefile_remove_id(d->lf, e->id, e->id_len, mac);
	free(e->id);
	e->id = copy;
	e->id_len = copy != NULL ? (uint8_t)id_len : 0;
	mac_format(mac, m);
	ipv4_format(e->ip, a);
	log_debug("dynamic lease %s -> %s now keyed%s: the identifier of its last ACK", m, a,
	    dyn_id_note(e->id, e->id_len, note));
	return 0;
}

int
agent_dynamic_renew_id(
    struct agent_dynamic *d, const uint8_t mac[6], const uint8_t *id, size_t id_len, uint32_t ip)
{
	struct entry *e;

	if (id != NULL && id_len > AGENT_ID_MAX)
		return -EINVAL;
	if ((e = lease_of(d, mac, ip, false)) == NULL)
		return -ENOENT;
	e->due = add_sat(now_usec(d), d->life_usec);
	/* 0x01 + its own MAC (or none) says nothing the MAC does not: the key stays */
	if (!agent_id_is_mac(mac, id, id_len) && !entry_has_key(e, mac, id, id_len))
		return rekey(d, e, mac, id, id_len);
	return 0;
}

int
agent_dynamic_renew(struct agent_dynamic *d, const uint8_t mac[6], uint32_t ip)
{
	return agent_dynamic_renew_id(d, mac, NULL, 0, ip);
}

struct sweep {
	struct agent_dynamic *d;
	struct dhcp_server *s;
	uint64_t now;
	size_t expired;
};

/* One slot of the dynamic table: an expired lease is reclaimed, a stale hint forgotten. */
static bool
sweep_one(void *rec, void *userdata)
{
	struct sweep *sw = userdata;
	struct agent_dynamic *d = sw->d;
	struct entry *e = rec;
	char m[MAC_STRLEN], a[IPV4_STRLEN], note[80];
	uint8_t owner[6];
	uint32_t cur, bound;

	if (e->kind == E_HINT) {
		/* a hint is good while its address is free; taken, it is of no use */
		if (ipam_pool_is_free(d->pool, e->ip) || offered_to(d, e->ip, e->mac))
			return false;
		d->n_hints--;
		dyn_delete(d, e);
		return true;
	}
	if (e->kind != E_LEASE || e->due > sw->now)
		return false;
	if (leasefile_lookup_id(d->lf, e->id, e->id_len, e->mac, owner, &cur) < 0 ||
	    memcmp(owner, e->mac, 6) != 0) {
		/* withdrawn (an allocation undone), or another MAC's now: nothing to free */
		dyn_delete(d, e);
		return true;
	}
	if (cur != e->ip) {
		/* the lease file moved the MAC behind our back: start that lease's clock */
		e->ip = cur;
		e->due = add_sat(sw->now, d->life_usec);
		return false;
	}
	if (sw->s != NULL && dhcp_server_get_binding(sw->s, e->mac, &bound) == 0 && bound == e->ip)
		(void)dhcp_server_remove_binding(sw->s, e->mac);
	(void)leasefile_remove_id(d->lf, e->id, e->id_len, e->mac);
	(void)ipam_pool_release(d->pool, e->ip);
	sw->expired++;
	mac_format(e->mac, m);
	ipv4_format(e->ip, a);
	log_info("dynamic lease %s -> %s%s expired: not renewed for %u s (lease time + grace); "
		 "the address is free again",
	    m, a, dyn_id_note(e->id, e->id_len, note), d->life_s);
	if (d->n_hints >= d->max_hints) {
		dyn_delete(d, e);
		return true;
	}
	/* the hint is the MAC's: the key goes */
	free(e->id);
	e->id = NULL;
	e->id_len = 0;
	e->kind = E_HINT;
	e->due = sw->now;
	d->n_hints++;
	return false;
}

size_t
agent_dynamic_expire(struct agent_dynamic *d, struct dhcp_server *s, size_t budget)
{
	struct sweep sw = {.d = d, .s = s, .now = now_usec(d)};
	/* every offer once: a removal is looked at again (the last one moved there) */
	size_t n_offers = MIN(budget, 2 * mactable_count(&d->offers));
	char a[IPV4_STRLEN];

	/* pending offers whose hold is over: no log line each (a DISCOVER flood makes many) */
	(void)dyn_reclaim_offers(d, sw.now, 0, n_offers);
	budget -= n_offers;
	while (d->n_held > 0 && budget > 0 &&
	       add_sat(d->holds[d->hold_head].since, d->hold_usec) <= sw.now) {
		struct hold h = dyn_hold_pop(d);
		(void)ipam_pool_release(d->pool, h.ip);
		ipv4_format(h.ip, a);
		log_info("declined address %s back in the pool: its hold-down (%" PRIu64
			 " s) is over",
		    a, d->hold_usec / USEC_PER_SEC);
		budget--;
	}
	(void)mactable_sweep(&d->tab, budget, sweep_one, &sw);
	return sw.expired;
}
