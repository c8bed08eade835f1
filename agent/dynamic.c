/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --dynamic: unknown MACs are served from the pool range. The lowest address that is not
 * bound statically, excluded or reserved (ipam/) goes to a new client; the client keeps it
 * (sticky) and it is recorded in the lease file, so a restart hands out the same address.
 * agent_apply_config() pushes a configuration and the leases into the engine.
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
 * DECLINE count; a lease keyed by an identifier has a copy of its bytes) in ipam/leases.h's
 * table (dense records and a MAC index, 48 to 96 bytes a MAC with the index) that the timer
 * sweeps a bounded number of entries at a time; the held addresses are a FIFO
 * (one hold-down for all, so the oldest is always first).
 *
 * Size: about 1000 lines, one state machine: allocation, identifier moves, DECLINE holds,
 * renewal and expiry all change the same table, the FIFO and the lease file together, and
 * each keeps the invariants the others rely on.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "ipam/ipam.h"
#include "ipam/leases.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"

/* ---- the MAC-keyed table: ipam/leases.h without its address index ---------------------- */

enum { E_EMPTY = 0, E_LEASE, E_HINT, E_MARK };

/* A record of the table. */
struct entry {
	union {
		struct ipam_lease lease;
		struct {
			uint8_t mac[6]; /* E_LEASE: the MAC it is bound to */
			uint32_t ip;	/* the lease's, the hint's or the marked address */
		};
	};
	uint8_t kind;	  /* E_* */
	uint8_t declines; /* DECLINEs honoured since window */
	uint8_t id_len;
	uint8_t *id;	 /* E_LEASE: its key's bytes (malloc); NULL: keyed by 0x01 + mac */
	uint64_t due;	 /* E_LEASE: expiry; E_HINT: when the lease expired; E_MARK: marked at */
	uint64_t window; /* start of the current DECLINE window */
};

_Static_assert(sizeof(struct entry) == 40, "an entry per bound MAC: keep it at 40 bytes");

/*
 * Hints and marks may share an address with a lease (the table is no owner of addresses: the
 * IPAM pool and the lease file are), hence no address index.
 */
struct mactab {
	struct ipam_leases t;
};

static void
tab_init(struct mactab *t)
{
	ipam_leases_init(&t->t, sizeof(struct entry), false);
}

static struct entry *
entry_of(struct ipam_lease *l)
{
	return (struct entry *)(void *)l;
}

static size_t
tab_count(const struct mactab *t)
{
	return ipam_leases_count(&t->t);
}

static struct entry *
tab_at(const struct mactab *t, size_t i)
{
	return entry_of(ipam_leases_at(&t->t, i));
}

static struct entry *
tab_lookup(const struct mactab *t, const uint8_t mac[6])
{
	return entry_of(ipam_leases_by_mac(&t->t, mac));
}

/* Room for one more entry: after it, tab_insert cannot fail. -ENOMEM. */
static int
tab_reserve(struct mactab *t)
{
	return ipam_leases_reserve(&t->t, tab_count(t) + 1);
}

/*
 * mac's entry, new (kind set, the rest zero) when absent; tab_reserve() first. Entry pointers
 * are good until the next insertion or deletion.
 */
static struct entry *
tab_insert(struct mactab *t, const uint8_t mac[6], uint8_t kind)
{
	struct entry *e = tab_lookup(t, mac);
	struct ipam_lease *l;

	if (e != NULL)
		return e;
	if (ipam_leases_add(&t->t, mac, 0, &l) < 0)
		abort(); /* reserved, and mac is not in the table */
	e = entry_of(l);
	e->kind = kind;
	return e;
}

/* Deletes e (freeing its key); the last entry moves into its place (a sweep looks at it). */
static void
tab_delete(struct mactab *t, struct entry *e)
{
	free(e->id);
	ipam_leases_remove(&t->t, &e->lease);
}

static void
tab_free(struct mactab *t)
{
	for (size_t i = 0; i < tab_count(t); i++)
		free(tab_at(t, i)->id);
	ipam_leases_destroy(&t->t);
}

/*
 * Calls fn on up to budget entries from the cursor on. fn returns true when it deleted the
 * entry, whose place is then looked at again (the last entry moved there).
 */
static void
tab_sweep(struct mactab *t, size_t budget, bool (*fn)(struct ipam_lease *l, void *userdata),
    void *userdata)
{
	(void)ipam_leases_sweep(&t->t, budget, fn, userdata);
}

static uint64_t
add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* ---- lease keys ------------------------------------------------------------------------- */

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

/*
 * What an entry bound to mac keeps of the key (id, id_len) sent from mac: a copy of the bytes,
 * or NULL when the key is 0x01 + mac. -ENOMEM.
 */
static int
id_copy(const uint8_t mac[6], const uint8_t *id, size_t id_len, uint8_t **ret)
{
	*ret = NULL;
	if (agent_id_is_mac(mac, id, id_len))
		return 0;
	if ((*ret = malloc(id_len)) == NULL)
		return -ENOMEM;
	memcpy(*ret, id, id_len);
	return 0;
}

/* " (client id HEX)" for a log line (cut after 24 bytes), or "" without an identifier. */
static const char *
id_note(const uint8_t *id, size_t id_len, char out[80])
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

/* ---- the dynamic pool ---------------------------------------------------------------------- */

struct hold {
	uint32_t ip;
	uint64_t since;
};

struct agent_dynamic {
	struct ipam_pool *pool;
	struct leasefile *lf; /* borrowed */
	uint64_t (*clock)(void *userdata);
	void *clock_userdata;
	uint64_t life_usec; /* lease time + grace; UINT64_MAX: never expires */
	uint64_t hold_usec;
	uint32_t life_s; /* for logs */
	struct mactab tab;
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
	struct ipam_leases offers;
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

struct offer {
	struct ipam_lease l; /* the MAC and the address offered */
	uint64_t due;	     /* when the hold ends */
};

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

static uint64_t
default_clock(void *userdata)
{
	(void)userdata;
	return clock_now_usec();
}

static uint64_t
now_usec(const struct agent_dynamic *d)
{
	return d->clock(d->clock_userdata);
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
	log_info("dynamic lease %s -> %s%s dropped: %s", m, a, id_note(id, id_len, note), why);
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
	const struct entry *old = l->prev != NULL ? tab_lookup(&l->prev->tab, mac) : NULL;
	char m[MAC_STRLEN], a[IPV4_STRLEN], note[80];
	struct entry *e;
	uint8_t *copy;

	if (l->err < 0 || (l->err = tab_reserve(&l->d->tab)) < 0)
		return;
	if ((e = tab_lookup(&l->d->tab, mac)) != NULL && e->kind == E_LEASE) {
		/* the engine binds a MAC once (the lease file keeps one lease per MAC at open) */
		mac_format(mac, m);
		ipv4_format(ip, a);
		log_info("dynamic lease %s -> %s%s dropped: the MAC has another lease", m, a,
		    id_note(id, id_len, note));
		(void)ipam_pool_release(l->d->pool, ip);
		(void)leasefile_remove_id(l->d->lf, id, id_len, mac);
		return;
	}
	if ((l->err = id_copy(mac, id, id_len, &copy)) < 0)
		return;
	e = tab_insert(&l->d->tab, mac, E_LEASE);
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

/* Room for one more hold (the ring grows up to max_held). -ENOMEM. */
static int
hold_reserve(struct agent_dynamic *d)
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

/* Appends a hold; hold_reserve() first. */
static void
hold_push(struct agent_dynamic *d, uint32_t ip, uint64_t since)
{
	d->holds[(d->hold_head + d->n_held) % d->hold_cap] = (struct hold){ip, since};
	d->n_held++;
}

static struct hold
hold_pop(struct agent_dynamic *d)
{
	struct hold h = d->holds[d->hold_head];

	d->hold_head = (d->hold_head + 1) % d->hold_cap;
	d->n_held--;
	return h;
}

/* What prev (the pool being replaced) knew beyond the lease file: hints and held addresses. */
static int
carry(struct agent_dynamic *d, const struct agent_dynamic *prev)
{
	size_t skip = prev->n_held > d->max_held ? prev->n_held - d->max_held : 0;
	int r;

	for (size_t k = 0; k < tab_count(&prev->tab); k++) {
		const struct entry *o = tab_at(&prev->tab, k);
		struct entry *e;

		if (o->kind != E_HINT || d->n_hints >= d->max_hints ||
		    tab_lookup(&d->tab, o->mac) != NULL || !ipam_pool_is_free(d->pool, o->ip))
			continue;
		if ((r = tab_reserve(&d->tab)) < 0)
			return r;
		e = tab_insert(&d->tab, o->mac, E_HINT);
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
	for (size_t k = 0; k < ipam_leases_count(&prev->offers); k++) {
		const struct offer *o =
		    (const struct offer *)(void *)ipam_leases_at(&prev->offers, k);
		const struct entry *e = tab_lookup(&d->tab, o->l.mac);
		struct ipam_lease *l;

		if (ipam_leases_count(&d->offers) >= d->max_offers ||
		    (e != NULL && e->kind == E_LEASE))
			continue;
		if ((r = ipam_leases_reserve(&d->offers, ipam_leases_count(&d->offers) + 1)) < 0)
			return r;
		if (ipam_pool_allocate_addr(d->pool, o->l.addr) < 0)
			continue;
		if (ipam_leases_add(&d->offers, o->l.mac, o->l.addr, &l) < 0) {
			(void)ipam_pool_release(d->pool, o->l.addr);
			continue;
		}
		((struct offer *)(void *)l)->due = o->due;
	}
	/* the newest max_held holds, where the new range still has the address free */
	for (size_t k = skip; k < prev->n_held; k++) {
		const struct hold *h = &prev->holds[(prev->hold_head + k) % prev->hold_cap];

		if ((r = hold_reserve(d)) < 0)
			return r;
		if (ipam_pool_allocate_addr(d->pool, h->ip) == 0)
			hold_push(d, h->ip, h->since);
	}
	return 0;
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
	struct prune p = {0};
	struct load l = {0};
	struct ipam_counts c;
	uint8_t(*macs)[6] = NULL;
	uint32_t lease_s, grace_s, hold_s;
	int r;

	if (d == NULL)
		return -ENOMEM;
	tab_init(&d->tab);
	ipam_leases_init(&d->offers, sizeof(struct offer), true);
	d->lf = lf;
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
	r = ipam_pool_new(cfg->cidr, cfg->prefix, cfg->pool_start, cfg->pool_end,
	    cfg->opts.server_ip, cfg->opts.router, cfg->exclude, cfg->n_exclude, &d->pool);
	if (r < 0)
		goto fail;
	/* static bindings inside the range are taken; outside it they do not matter */
	for (size_t i = 0; i < cfg->n_bindings; i++) {
		r = ipam_pool_allocate_addr(d->pool, cfg->bindings[i].ip);
		if (r < 0 && r != -ERANGE && r != -EPERM && r != -EEXIST)
			goto fail;
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
	/* leases: keep those still valid, drop the others */
	if (leasefile_count(lf) > 0) {
		if (cfg->n_bindings > 0) {
			macs = malloc(cfg->n_bindings * sizeof(*macs));
			if (macs == NULL) {
				r = -ENOMEM;
				goto fail;
			}
			for (size_t i = 0; i < cfg->n_bindings; i++)
				memcpy(macs[i], cfg->bindings[i].mac, 6);
			qsort(macs, cfg->n_bindings, 6, cmp_mac6);
		}
		p.d = d;
		p.static_macs = (const uint8_t(*)[6])macs;
		p.n_static = cfg->n_bindings;
		leasefile_foreach_id(lf, prune_one, &p);
		free(macs);
		macs = NULL;
	}
	l.d = d;
	l.prev = prev;
	l.now = now_usec(d);
	leasefile_foreach_id(lf, load_one, &l);
	if ((r = l.err) < 0 || (prev != NULL && (r = carry(d, prev)) < 0))
		goto fail;
	*ret = d;
	return 0;
fail:
	free(macs);
	agent_dynamic_free(d);
	return r;
}

struct agent_dynamic *
agent_dynamic_free(struct agent_dynamic *d)
{
	if (d == NULL)
		return NULL;
	ipam_pool_free(d->pool);
	tab_free(&d->tab);
	ipam_leases_destroy(&d->offers);
	free(d->holds);
	free(d);
	return NULL;
}

/* ---- pending offers ------------------------------------------------------------------- */

static struct offer *
offer_of(const struct agent_dynamic *d, const uint8_t mac[6])
{
	return (struct offer *)(void *)ipam_leases_by_mac(&d->offers, mac);
}

/* Removes mac's pending offer, if any; its address goes back to the pool when release. */
static void
remove_offer(struct agent_dynamic *d, const uint8_t mac[6], bool release)
{
	struct offer *o = offer_of(d, mac);

	if (o == NULL)
		return;
	if (release)
		(void)ipam_pool_release(d->pool, o->l.addr);
	ipam_leases_remove(&d->offers, &o->l);
}

/* mac's pending offer is void (it got another address): its address is free again. */
static void
drop_offer(struct agent_dynamic *d, const uint8_t mac[6])
{
	remove_offer(d, mac, true);
}

/* Whether ip is offered to mac now. */
static bool
offered_to(const struct agent_dynamic *d, uint32_t ip, const uint8_t mac[6])
{
	const struct ipam_lease *l = ipam_leases_by_addr(&d->offers, ip);

	return l != NULL && memcmp(l->mac, mac, 6) == 0;
}

/*
 * Makes mac's entry the lease of ip keyed by copy (taken; NULL: 0x01 + mac), expiring at due;
 * tab_reserve() first. A hint of mac gives way; its DECLINE count stays.
 */
static struct entry *
lease_insert(struct agent_dynamic *d, const uint8_t mac[6], uint32_t ip, uint8_t *copy,
    size_t id_len, uint64_t due)
{
	struct entry *e = tab_insert(&d->tab, mac, E_LEASE);

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

static struct log_ratelimit rl_move = LOG_RATELIMIT_INIT(10 * USEC_PER_SEC, 10);

/*
 * The lease of key (id, id_len) sent from to, bound to from, moves to to (which has none): a
 * line for it first, then from's binding leaves the engine s (when it is still the lease's),
 * then the entry moves, with its DECLINE count. tab_reserve() first. Negative errno: nothing
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

	if ((r = id_copy(to, id, id_len, &copy)) < 0)
		return r;
	if ((r = leasefile_add_id(d->lf, id, id_len, to, ip)) < 0) {
		free(copy);
		return r;
	}
	if (s != NULL && dhcp_server_get_binding(s, from, &bound) == 0 && bound == ip)
		(void)dhcp_server_remove_binding(s, from);
	if ((e = tab_lookup(&d->tab, from)) != NULL && e->kind == E_LEASE) {
		declines = e->declines;
		window = e->window;
		tab_delete(&d->tab, e);
	}
	e = lease_insert(d, to, ip, copy, id_len, add_sat(now, d->life_usec));
	if (declines > e->declines) {
		e->declines = declines;
		e->window = window;
	}
	mac_format(from, f);
	mac_format(to, t);
	ipv4_format(ip, a);
	log_ratelimited(&rl_move, now, LOG_LEVEL_INFO,
	    "dynamic lease %s%s moved from %s to %s: the same client identifier from a new MAC", a,
	    id_note(agent_id_is_mac(to, id, id_len) ? NULL : id, id_len, note), f, t);
	return 0;
}

/*
 * The lease mac is served, if any: its own, or the identifier's, moved to mac when it was
 * bound to another MAC. 1 and *ret_ip: a lease; 0: none; negative errno. tab_reserve() first.
 */
static int
existing_lease(struct agent_dynamic *d, struct dhcp_server *s, const uint8_t mac[6],
    const uint8_t *id, size_t id_len, uint32_t *ret_ip)
{
	struct entry *e = tab_lookup(&d->tab, mac);
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
		if ((r = id_copy(mac, id, id_len, &copy)) < 0)
			return r;
		(void)lease_insert(d, mac, ip, copy, id_len, add_sat(now_usec(d), d->life_usec));
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
	if ((r = tab_reserve(&d->tab)) < 0)
		return r;
	return existing_lease(d, s, mac, id, id_len, ret_ip);
}

/*
 * Records the lease of ip for mac keyed by (id, id_len), with a fresh expiry: the lease file's
 * line, then the entry. tab_reserve() first; ip is already USED in the pool (not released on
 * error). Negative errno: nothing changed.
 */
static int
commit(struct agent_dynamic *d, const uint8_t mac[6], const uint8_t *id, size_t id_len, uint32_t ip)
{
	uint8_t *copy;
	int r;

	if ((r = id_copy(mac, id, id_len, &copy)) < 0)
		return r;
	if ((r = leasefile_add_id(d->lf, id, id_len, mac, ip)) < 0) {
		free(copy);
		d->lf_failing = true;
		return r;
	}
	d->lf_failing = false;
	(void)lease_insert(d, mac, ip, copy, id_len, add_sat(now_usec(d), d->life_usec));
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
	e = tab_lookup(&d->tab, mac);
	if ((o = offer_of(d, mac)) != NULL) {
		/* its pending offer becomes its lease */
		ip = o->l.addr;
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

struct reclaim {
	struct agent_dynamic *d;
	uint64_t now;
	uint64_t evict_due; /* 0, or: one offer whose hold ends by then may be taken over */
	size_t expired;
	bool evicted;
};

/* One pending offer: its hold over, the address goes back to the pool. */
static bool
reclaim_one(struct ipam_lease *l, void *userdata)
{
	struct reclaim *rc = userdata;
	const struct offer *o = (const struct offer *)(void *)l;

	if (o->due <= rc->now) {
		rc->d->ost.expired++;
		rc->expired++;
	} else if (!rc->evicted && o->due <= rc->evict_due) {
		rc->d->ost.evicted++;
		rc->evicted = true;
	} else {
		return false;
	}
	(void)ipam_pool_release(rc->d->pool, o->l.addr);
	ipam_leases_remove(&rc->d->offers, l);
	return true;
}

/* Looks at up to budget pending offers: the expired ones go, and one whose hold ends by
 * evict_due (0: none) is taken over. Returns how many expired. */
static size_t
reclaim_offers(struct agent_dynamic *d, uint64_t now, uint64_t evict_due, size_t budget)
{
	struct reclaim rc = {.d = d, .now = now, .evict_due = evict_due};

	(void)ipam_leases_sweep(
	    &d->offers, MIN(budget, 2 * ipam_leases_count(&d->offers)), reclaim_one, &rc);
	return rc.expired;
}

/* The cap reached: room for one more offer, from expired ones or else one made at least
 * OFFER_PROTECT_USEC ago (taken over). Returns whether there is room now. */
static bool
make_offer_room(struct agent_dynamic *d, uint64_t now)
{
	uint64_t protect = MIN(OFFER_PROTECT_USEC, d->offer_usec);

	(void)reclaim_offers(d, now, add_sat(now, d->offer_usec - protect), OFFER_RECLAIM_BUDGET);
	return ipam_leases_count(&d->offers) < d->max_offers;
}

int
agent_dynamic_offer_id(struct agent_dynamic *d, struct dhcp_server *s, const uint8_t mac[6],
    const uint8_t *id, size_t id_len, uint32_t *ret_ip)
{
	struct ipam_lease *l;
	struct offer *o;
	struct entry *e;
	uint64_t now;
	uint32_t ip;
	int r;

	if ((r = known_lease(d, s, mac, id, id_len, ret_ip)) != 0)
		return r;
	now = now_usec(d);
	if ((o = offer_of(d, mac)) != NULL) {
		/* a repeated DISCOVER: the same address, held from this OFFER on */
		o->due = add_sat(now, d->offer_usec);
		*ret_ip = o->l.addr;
		return 0;
	}
	if (d->lf_failing) {
		/* no offer of a lease that cannot be recorded: try to record it now */
		if ((r = agent_dynamic_allocate_id(d, s, mac, id, id_len, ret_ip)) < 0)
			return r;
		return 1;
	}
	if (ipam_leases_count(&d->offers) >= d->max_offers && !make_offer_room(d, now)) {
		d->ost.refused++;
		return -EBUSY;
	}
	if ((r = ipam_leases_reserve(&d->offers, ipam_leases_count(&d->offers) + 1)) < 0)
		return r;
	/* sticky past expiry: the MAC's last address while nobody else took it */
	e = tab_lookup(&d->tab, mac);
	if (e != NULL && e->kind == E_HINT && ipam_pool_allocate_addr(d->pool, e->ip) == 0)
		ip = e->ip;
	else if ((r = ipam_pool_allocate(d->pool, &ip)) < 0)
		return r;
	if ((r = ipam_leases_add(&d->offers, mac, ip, &l)) < 0) {
		(void)ipam_pool_release(d->pool, ip);
		return r;
	}
	((struct offer *)(void *)l)->due = add_sat(now, d->offer_usec);
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
	o = offer_of(d, mac);
	if (o != NULL && o->l.addr == requested) {
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

/*
 * mac's lease entry when it is the lease of ip (checked against the lease file too when verify:
 * not on every ACK); a lease keyed by mac (0x01 + mac) that lost its entry gets one. NULL: none.
 */
static struct entry *
lease_of(struct agent_dynamic *d, const uint8_t mac[6], uint32_t ip, bool verify)
{
	struct entry *e = tab_lookup(&d->tab, mac);
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
	    memcmp(bound, mac, 6) != 0 || cur != ip || tab_reserve(&d->tab) < 0)
		return NULL;
	return lease_insert(d, mac, ip, NULL, 0, add_sat(now_usec(d), d->life_usec));
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
		struct hold h = hold_pop(d);
		(void)ipam_pool_release(d->pool, h.ip);
		ipv4_format(h.ip, a);
		log_info("declined address %s back in the pool before its hold-down ended: %zu "
			 "addresses are held already (half of what the range can hand out)",
		    a, d->max_held);
	}
	if ((r = hold_reserve(d)) < 0)
		return r;
	/* the declined address stays USED (something else on the network holds it) */
	if ((r = ipam_pool_allocate(d->pool, &nip)) < 0)
		return r;
	if ((r = leasefile_add_id(d->lf, e->id, e->id_len, mac, nip)) < 0) {
		(void)ipam_pool_release(d->pool, nip);
		return r;
	}
	hold_push(d, ip, now);
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
	if ((r = id_copy(mac, id, id_len, &copy)) < 0)
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
	    id_note(e->id, e->id_len, note));
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
sweep_one(struct ipam_lease *l, void *userdata)
{
	struct sweep *sw = userdata;
	struct agent_dynamic *d = sw->d;
	struct entry *e = entry_of(l);
	char m[MAC_STRLEN], a[IPV4_STRLEN], note[80];
	uint8_t owner[6];
	uint32_t cur, bound;

	if (e->kind == E_HINT) {
		/* a hint is good while its address is free; taken, it is of no use */
		if (ipam_pool_is_free(d->pool, e->ip) || offered_to(d, e->ip, e->mac))
			return false;
		d->n_hints--;
		tab_delete(&d->tab, e);
		return true;
	}
	if (e->kind != E_LEASE || e->due > sw->now)
		return false;
	if (leasefile_lookup_id(d->lf, e->id, e->id_len, e->mac, owner, &cur) < 0 ||
	    memcmp(owner, e->mac, 6) != 0) {
		/* withdrawn (an allocation undone), or another MAC's now: nothing to free */
		tab_delete(&d->tab, e);
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
	    m, a, id_note(e->id, e->id_len, note), d->life_s);
	if (d->n_hints >= d->max_hints) {
		tab_delete(&d->tab, e);
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
	size_t n_offers = MIN(budget, 2 * ipam_leases_count(&d->offers));
	char a[IPV4_STRLEN];

	/* pending offers whose hold is over: no log line each (a DISCOVER flood makes many) */
	(void)reclaim_offers(d, sw.now, 0, n_offers);
	budget -= n_offers;
	while (d->n_held > 0 && budget > 0 &&
	       add_sat(d->holds[d->hold_head].since, d->hold_usec) <= sw.now) {
		struct hold h = hold_pop(d);
		(void)ipam_pool_release(d->pool, h.ip);
		ipv4_format(h.ip, a);
		log_info("declined address %s back in the pool: its hold-down (%" PRIu64
			 " s) is over",
		    a, d->hold_usec / USEC_PER_SEC);
		budget--;
	}
	tab_sweep(&d->tab, budget, sweep_one, &sw);
	return sw.expired;
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
	ret->pending = ipam_leases_count(&d->offers);
	ret->max_pending = d->max_offers;
}

int
agent_dynamic_offered(
    const struct agent_dynamic *d, const uint8_t mac[6], uint32_t *ret_ip, uint64_t *ret_due)
{
	const struct offer *o = offer_of(d, mac);

	if (o == NULL)
		return -ENOENT;
	if (ret_ip != NULL)
		*ret_ip = o->l.addr;
	if (ret_due != NULL)
		*ret_due = o->due;
	return 0;
}

int
agent_dynamic_expiry(const struct agent_dynamic *d, const uint8_t mac[6], uint64_t *ret_usec)
{
	const struct entry *e = tab_lookup(&d->tab, mac);

	if (e == NULL || e->kind != E_LEASE)
		return -ENOENT;
	*ret_usec = e->due;
	return 0;
}

/* ---- DECLINE marks of the engine ------------------------------------------------------- */

struct agent_marks {
	struct mactab tab;
	uint64_t hold_usec;
};

int
agent_marks_new(uint32_t hold_s, struct agent_marks **ret)
{
	struct agent_marks *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return -ENOMEM;
	tab_init(&m->tab);
	m->hold_usec = (uint64_t)hold_s * USEC_PER_SEC;
	*ret = m;
	return 0;
}

struct agent_marks *
agent_marks_free(struct agent_marks *m)
{
	if (m == NULL)
		return NULL;
	tab_free(&m->tab);
	free(m);
	return NULL;
}

int
agent_marks_add(struct agent_marks *m, const uint8_t mac[6], uint32_t ip, uint64_t now)
{
	struct entry *e = tab_lookup(&m->tab, mac);
	int r;

	if (e == NULL) {
		if ((r = tab_reserve(&m->tab)) < 0)
			return r;
		e = tab_insert(&m->tab, mac, E_MARK);
	} else if (e->ip == ip) {
		return 0; /* marked already: the hold-down runs from the first DECLINE */
	}
	e->ip = ip;
	e->due = now;
	return 0;
}

struct marks_sweep {
	struct agent_marks *m;
	struct dhcp_server *s;
	uint64_t now;
	size_t cleared;
};

static bool
marks_one(struct ipam_lease *l, void *userdata)
{
	struct marks_sweep *ms = userdata;
	struct entry *e = entry_of(l);
	char m[MAC_STRLEN], a[IPV4_STRLEN];

	if (add_sat(e->due, ms->m->hold_usec) > ms->now)
		return false;
	if (dhcp_server_clear_decline(ms->s, e->mac, e->ip) == 0) {
		ms->cleared++;
		mac_format(e->mac, m);
		ipv4_format(e->ip, a);
		log_info(
		    "%s -> %s answered again: the hold-down after its DHCPDECLINE is over", m, a);
	}
	tab_delete(&ms->m->tab, e);
	return true;
}

size_t
agent_marks_expire(struct agent_marks *m, struct dhcp_server *s, uint64_t now, size_t budget)
{
	struct marks_sweep ms = {.m = m, .s = s, .now = now};

	tab_sweep(&m->tab, budget, marks_one, &ms);
	return ms.cleared;
}

size_t
agent_marks_count(const struct agent_marks *m)
{
	return tab_count(&m->tab);
}

struct apply {
	struct dhcp_server *s;
	int err;
	size_t failed;
};

static void
apply_lease(void *userdata, const uint8_t mac[6], uint32_t ip)
{
	struct apply *ap = userdata;
	int r = dhcp_server_set_binding(ap->s, mac, ip, NULL);

	if (r < 0) {
		ap->failed++;
		if (ap->err == 0)
			ap->err = r;
	}
}

int
agent_apply_config(struct dhcp_server *s, const struct agent_config *cfg, struct agent_dynamic *dyn,
    char *err, size_t errlen)
{
	size_t *retry = NULL, n_retry = 0, removed;
	struct apply ap = {.s = s};
	char m[MAC_STRLEN], a[IPV4_STRLEN];
	int r;

	if ((r = dhcp_server_set_options(s, &cfg->opts)) < 0) {
		snprintf(err, errlen, "options refused by the DHCP engine: %s", strerror(-r));
		return r;
	}
	dhcp_server_sync_begin(s);
	for (size_t i = 0; i < cfg->n_bindings; i++) {
		const struct agent_binding *b = &cfg->bindings[i];
		if (!dhcp_mac_bindable(b->mac)) {
			/* the engine refuses it: one NIC's bad MAC must not stop the others */
			mac_format(b->mac, m);
			ipv4_format(b->ip, a);
			log_warn("binding %s -> %s skipped: a broadcast, multicast or all-zero MAC "
				 "is no NIC's address",
			    m, a);
			continue;
		}
		r = dhcp_server_set_binding(s, b->mac, b->ip, agent_config_hostname(cfg, b));
		if (r == -EEXIST) {
			/* the address is still held by a binding this resync removes */
			if (retry == NULL &&
			    (retry = malloc(cfg->n_bindings * sizeof(*retry))) == NULL)
				goto nomem;
			retry[n_retry++] = i;
		} else if (r < 0) {
			goto engine_error;
		}
	}
	if (dyn != NULL)
		leasefile_foreach(dyn->lf, apply_lease, &ap);
	removed = dhcp_server_sync_end(s);
	for (size_t k = 0; k < n_retry; k++) {
		const struct agent_binding *b = &cfg->bindings[retry[k]];
		r = dhcp_server_set_binding(s, b->mac, b->ip, agent_config_hostname(cfg, b));
		if (r < 0) {
			mac_format(b->mac, m);
			ipv4_format(b->ip, a);
			snprintf(err, errlen, "binding %s -> %s refused by the DHCP engine: %s", m,
			    a, strerror(-r));
			free(retry);
			return r;
		}
	}
	free(retry);
	if (ap.failed > 0)
		log_warn("%zu dynamic leases not restored: %s", ap.failed, strerror(-ap.err));
	return (int)MIN(removed, (size_t)INT32_MAX);
nomem:
	r = -ENOMEM;
engine_error:
	free(retry);
	dhcp_server_sync_end(s);
	snprintf(err, errlen, "cannot set bindings: %s", strerror(-r));
	return r;
}
