/* SPDX-License-Identifier: Apache-2.0 */
/* VirtualMachineNetworkConfig, pure part: per-NIC bind / release and the resulting status. */
#include "controller/nicbind.h"
#include "controller/nicbind6.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ip6.h"

struct compute {
	const struct vmnetcfg *cfg;
	const char *key;
	vmnetcfg_lookup_fn lookup;
	void *userdata;
	struct vmnetcfg_result *res;
	size_t n_pending;
	size_t n_stale;
	const char *first_reason;
	char message[VMNETCFG_MESSAGE_MAX * 2];
};

static int
touch(struct vmnetcfg_result *res, const char *network)
{
	char(*t)[CRD_NETWORK_NAME_MAX + 1];

	for (size_t i = 0; i < res->n_touched; i++)
		if (strcmp(res->touched[i], network) == 0)
			return 0;
	t = realloc(res->touched, (res->n_touched + 1) * sizeof(*t));
	if (t == NULL)
		return -ENOMEM;
	res->touched = t;
	snprintf(t[res->n_touched], sizeof(*t), "%s", network);
	res->n_touched++;
	return 0;
}

static int
add_event(struct vmnetcfg_result *res, const char *type, const char *reason, const char *msg)
{
	struct vmnetcfg_event *e = realloc(res->events, (res->n_events + 1) * sizeof(*e));

	if (e == NULL)
		return -ENOMEM;
	res->events = e;
	e[res->n_events].type = type;
	e[res->n_events].reason = reason;
	if (snprintf(e[res->n_events].message, sizeof(e->message), "%s", msg) < 0)
		e[res->n_events].message[0] = '\0';
	res->n_events++;
	return 0;
}

/*
 * A Normal Event about one NIC's addresses: "<mac> on <network>: <verb> <address>[, <IPv6>]"
 * (addr 0 and a zero addr6: left out).
 */
static int
nic_event(struct vmnetcfg_result *res, const char *reason, const char *verb, const char *network,
    const char *mac, uint32_t addr, const struct in6_addr *addr6)
{
	char ip[IPV4_STRLEN] = "", ip6[IPV6_STRLEN] = "", line[VMNETCFG_MESSAGE_MAX];
	bool v6 = addr6 != NULL && !ipv6_is_zero(addr6);

	if (addr != 0)
		ipv4_format(addr, ip);
	if (v6)
		ipv6_format(addr6, ip6);
	snprintf(line, sizeof(line), "%s on %s: %s %s%s%s", mac, network, verb, ip,
	    addr != 0 && v6 ? ", " : "", ip6);
	return add_event(res, "Normal", reason, line);
}

static const struct in6_addr no_addr6;

static int
add_nic(struct vmnetcfg_status *st, const char *network, const char *mac, uint32_t addr,
    const struct in6_addr *addr6, enum vmnetcfg_state state)
{
	struct vmnetcfg_nic_status *n = realloc(st->nics, (st->n_nics + 1) * sizeof(*n));

	if (n == NULL)
		return -ENOMEM;
	st->nics = n;
	n = &n[st->n_nics++];
	memset(n, 0, sizeof(*n));
	snprintf(n->network_name, sizeof(n->network_name), "%s", network);
	snprintf(n->mac, sizeof(n->mac), "%s", mac);
	n->allocated_ip = addr;
	n->allocated_ipv6 = addr6 != NULL ? *addr6 : no_addr6;
	n->state = state;
	return 0;
}

/* The entry of st for (network, mac), or NULL. */
static const struct vmnetcfg_nic_status *
status_nic(const struct vmnetcfg_status *st, const char *network, const char *mac)
{
	for (size_t i = 0; i < st->n_nics; i++)
		if (strcmp(st->nics[i].network_name, network) == 0 &&
		    strcmp(st->nics[i].mac, mac) == 0)
			return &st->nics[i];
	return NULL;
}

/* Record a Pending NIC's reason; with event, also a Warning Event with the same text. */
static int pending(struct compute *c, const struct vmnetcfg_nic *nic, const char *reason,
    bool event, const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int
pending(struct compute *c, const struct vmnetcfg_nic *nic, const char *reason, bool event,
    const char *fmt, ...)
{
	char text[VMNETCFG_MESSAGE_MAX], line[VMNETCFG_MESSAGE_MAX + 128];
	size_t len = strlen(c->message);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "%s on %s: %s", nic->mac, nic->network_name, text);
	if (c->n_pending++ == 0)
		c->first_reason = reason;
	if (snprintf(
		c->message + len, sizeof(c->message) - len, "%s%s", len > 0 ? "; " : "", line) < 0)
		c->message[len] = '\0';
	return event ? add_event(c->res, "Warning", reason, line) : 0;
}

static bool
nic_in_spec(const struct vmnetcfg *cfg, const char *network, const char *mac)
{
	for (size_t i = 0; i < cfg->spec.n_nics; i++)
		if (strcmp(cfg->spec.nics[i].network_name, network) == 0 &&
		    strcmp(cfg->spec.nics[i].mac, mac) == 0)
			return true;
	return false;
}

/* Release what mac holds on p for owner, both families: 0 when either was released. */
static int
release_both(struct netpool *p, const uint8_t mac[MAC_LEN], const char *owner)
{
	int r4 = netpool_release(p, mac, owner), r6 = netpool_release6(p, mac, owner);

	return r4 == 0 || r6 == 0 ? 0 : r4;
}

static bool
holds_any(const struct vmnetcfg_nic_status *n)
{
	return n->allocated_ip != 0 || !ipv6_is_zero(&n->allocated_ipv6);
}

/* Old status entries no longer in the spec: release, or keep as Stale while not possible. */
static int
release_removed(struct compute *c, const struct vmnetcfg *cfg, struct vmnetcfg_status *stale)
{
	for (size_t i = 0; i < cfg->status.n_nics; i++) {
		const struct vmnetcfg_nic_status *old = &cfg->status.nics[i];
		enum netpool_avail avail = NETPOOL_ABSENT;
		struct netpool *p;
		uint8_t mac[MAC_LEN];
		int r;

		if (nic_in_spec(cfg, old->network_name, old->mac) || mac_parse(old->mac, mac) < 0)
			continue;
		p = c->lookup(c->userdata, old->network_name, &avail);
		if (avail == NETPOOL_ABSENT || (avail == NETPOOL_READY && p == NULL))
			continue; /* the pool is gone, and its bindings with it */
		if (avail == NETPOOL_NOT_READY) {
			if (!holds_any(old))
				continue; /* held nothing */
			c->n_stale++;
			r = add_nic(stale, old->network_name, old->mac, old->allocated_ip,
			    &old->allocated_ipv6, VMNETCFG_STATE_STALE);
			if (r < 0)
				return r;
			continue;
		}
		r = release_both(p, mac, c->key);
		if (r == 0) {
			c->res->released = true;
			if ((r = touch(c->res, old->network_name)) < 0)
				return r;
		}
	}
	return 0;
}

static const char *
state_word(const struct netpool *p, uint32_t addr)
{
	switch (ipam_pool_state(netpool_ipam(p), addr)) {
	case IPAM_EXCLUDED:
		return "excluded";
	case IPAM_RESERVED:
		return "reserved";
	default:
		return "outside the pool range";
	}
}

/* A static address held by someone else or unusable: the Pending reason for it. */
static int
static_unavailable(struct compute *c, const struct vmnetcfg_nic *nic, struct netpool *p)
{
	const struct netpool_entry *holder = netpool_by_addr(p, nic->ip_address);
	char ip[IPV4_STRLEN], hmac[MAC_STRLEN];

	ipv4_format(nic->ip_address, ip);
	if (holder != NULL) {
		mac_format(holder->mac, hmac);
		return pending(c, nic, VMNETCFG_REASON_STATIC_CONFLICT, true,
		    "static IP %s is already held by MAC %s (%s)", ip, hmac,
		    holder->owner != NULL ? holder->owner : "IPPool status");
	}
	if (ipam_pool_state(netpool_ipam(p), nic->ip_address) == IPAM_USED)
		return pending(c, nic, VMNETCFG_REASON_STATIC_CONFLICT, true,
		    "static IP %s is in use (contested binding)", ip);
	return pending(c, nic, VMNETCFG_REASON_STATIC_UNAVAILABLE, false, "static IP %s is %s", ip,
	    state_word(p, nic->ip_address));
}

/* The address a NIC remembers from before a pause is held by another MAC: Pending + Event. */
static int
address_taken(struct compute *c, const struct vmnetcfg_nic *nic, struct netpool *p, uint32_t addr)
{
	const struct netpool_entry *holder = netpool_by_addr(p, addr);
	char ip[IPV4_STRLEN], hmac[MAC_STRLEN] = "?";

	ipv4_format(addr, ip);
	if (holder != NULL)
		mac_format(holder->mac, hmac);
	return pending(c, nic, VMNETCFG_REASON_ADDRESS_TAKEN, true,
	    "%s, its address before the pause, is now held by MAC %s (%s); waiting for it "
	    "(set ipAddress to take another)",
	    ip, hmac,
	    holder == NULL	    ? "contested binding"
	    : holder->owner != NULL ? holder->owner
				    : "IPPool status");
}

/*
 * The phases of bind_nic return 0 to go on, a negative errno, or NIC_PENDING once pending()
 * has said why the NIC waits (its entry is then Pending).
 */
#define NIC_PENDING 1

static int
said_pending(int r)
{
	return r < 0 ? r : NIC_PENDING;
}

/* The netpool of the NIC's network (*p) and its MAC's binding there (*e, or NULL). */
static int
nic_pool(struct compute *c, const struct vmnetcfg_nic *nic, const uint8_t mac[MAC_LEN],
    struct netpool **p, const struct netpool_entry **e)
{
	enum netpool_avail avail = NETPOOL_ABSENT;
	const struct netpool6_entry *e6;

	if (!mac_is_nic(mac))
		/* the schema's pattern lets these through; the agents would never serve them */
		return said_pending(pending(c, nic, VMNETCFG_REASON_INVALID_MAC, true,
		    "a broadcast, multicast or all-zero MAC: no NIC can have it, none is bound"));
	*p = c->lookup(c->userdata, nic->network_name, &avail);
	if (avail == NETPOOL_ABSENT || (avail == NETPOOL_READY && *p == NULL))
		return said_pending(pending(
		    c, nic, VMNETCFG_REASON_NO_IPPOOL, false, "no IPPool for this network"));
	if (avail == NETPOOL_NOT_READY)
		return said_pending(pending(c, nic, VMNETCFG_REASON_NOT_READY, false,
		    "the IPPool's address cache is not built yet"));
	*e = netpool_by_mac(*p, mac);
	if (*e != NULL && (*e)->owner != NULL && strcmp((*e)->owner, c->key) != 0)
		return said_pending(pending(c, nic, VMNETCFG_REASON_DUPLICATE_MAC, true,
		    "MAC already bound on this network by %s", (*e)->owner));
	e6 = netpool_v6(*p) != NULL ? netpool6_by_mac(netpool_v6(*p), mac) : NULL;
	if (e6 != NULL && e6->owner != NULL && strcmp(e6->owner, c->key) != 0)
		return said_pending(pending(c, nic, VMNETCFG_REASON_DUPLICATE_MAC, true,
		    "MAC already bound on this network by %s (IPv6)", e6->owner));
	return 0;
}

/* Bound at e_addr, asked for another static address: moved there, only once it is free. */
static int
move_to_static(struct compute *c, const struct vmnetcfg_nic *nic, struct netpool *p,
    const uint8_t mac[MAC_LEN], uint32_t e_addr, uint32_t *held)
{
	int r;

	*held = e_addr;
	if (!ipam_pool_is_free(netpool_ipam(p), nic->ip_address))
		return said_pending(static_unavailable(c, nic, p));
	if ((r = netpool_release(p, mac, c->key)) < 0)
		return r == -ENOMEM ? r : -EIO;
	*held = 0;
	c->res->released = true;
	return touch(c->res, nic->network_name);
}

/* The address remembered across a pause: wanted back (*want) when still free. */
static int
remembered(struct compute *c, const struct vmnetcfg_nic *nic, struct netpool *p, uint32_t *want,
    uint32_t *held)
{
	const struct vmnetcfg_nic_status *o =
	    status_nic(&c->cfg->status, nic->network_name, nic->mac);

	if (o == NULL || o->state != VMNETCFG_STATE_PENDING || o->allocated_ip == 0)
		return 0;
	if (ipam_pool_is_free(netpool_ipam(p), o->allocated_ip)) {
		*want = o->allocated_ip;
	} else if (ipam_pool_state(netpool_ipam(p), o->allocated_ip) == IPAM_USED) {
		*held = o->allocated_ip; /* still remembered, not held */
		return said_pending(address_taken(c, nic, p, o->allocated_ip));
	}
	/* else excluded, reserved or outside the range by now: forgotten */
	return 0;
}

/* The binding itself: want (0: the lowest free address), into *addr. */
static int
bind_addr(struct compute *c, const struct vmnetcfg_nic *nic, struct netpool *p,
    const uint8_t mac[MAC_LEN], uint32_t want, uint32_t *addr)
{
	int r = netpool_bind(p, mac, want, c->key, addr);

	switch (r) {
	case 0:
		return 0;
	case -EEXIST:
	case -EPERM:
	case -ERANGE:
		if (want != nic->ip_address) /* checked free just above: cannot happen */
			return -EIO;
		return said_pending(static_unavailable(c, nic, p));
	case -ENOSPC:
		return said_pending(
		    pending(c, nic, VMNETCFG_REASON_EXHAUSTED, true, "no free address left"));
	case -EFBIG:
		return said_pending(pending(c, nic, VMNETCFG_REASON_STATUS_FULL, true,
		    "the IPPool's status.ipv4.allocated has no room for another binding (%zu of "
		    "%zu bytes): no address is bound that no agent would serve",
		    netpool_status_bytes(p), netpool_budget(p)));
	default:
		return r;
	}
}

/*
 * The IPv4 address of a NIC whose pool is ready (e: its MAC's binding, or NULL): 0 with the
 * address bound in *addr, NIC_PENDING with the address held or remembered (or 0) in *addr,
 * or a negative errno.
 */
static int
bind_v4(struct compute *c, const struct vmnetcfg_nic *nic, struct netpool *p,
    const uint8_t mac[MAC_LEN], const struct netpool_entry *e, uint32_t *addr)
{
	uint32_t held = 0, want;
	int r;

	if (e != NULL && nic->ip_address != 0 && nic->ip_address != e->addr) {
		if ((r = move_to_static(c, nic, p, mac, e->addr, &held)) != 0)
			goto pend;
		e = NULL;
	}
	want = e != NULL ? 0 : nic->ip_address;
	if (e == NULL && want == 0 && (r = remembered(c, nic, p, &want, &held)) != 0)
		goto pend;
	if ((r = bind_addr(c, nic, p, mac, want, addr)) != 0)
		goto pend;
	if (e == NULL && (r = touch(c->res, nic->network_name)) < 0)
		return r;
	return 0;
pend:
	*addr = held;
	return r;
}

/* The IPv6 address of the NIC (nicbind6.c): 0 or NIC_PENDING as bind_v4, or -errno. */
static int
bind_v6(struct compute *c, const struct vmnetcfg_nic *nic, struct netpool *p,
    const uint8_t mac[MAC_LEN], struct in6_addr *addr)
{
	const struct vmnetcfg_nic_status *old =
	    status_nic(&c->cfg->status, nic->network_name, nic->mac);
	struct nicbind6_outcome o;
	int r;

	if ((r = nicbind6_nic(p, nic, mac, c->key, old, &o)) < 0)
		return r;
	*addr = o.addr;
	if (o.released)
		c->res->released = true;
	if ((o.bound || o.released) && (r = touch(c->res, nic->network_name)) < 0)
		return r;
	if (!o.pending)
		return 0;
	return said_pending(pending(c, nic, o.reason, o.event, "%s", o.text));
}

/*
 * One spec NIC: bind and append its status entry. Allocated once it has every address its
 * pool serves (IPv4, and IPv6 when the pool has an ipv6Config); each family is bound on its
 * own, so a NIC waiting for one keeps (and the pool serves) the other.
 */
static int
bind_nic(struct compute *c, const struct vmnetcfg_nic *nic)
{
	struct vmnetcfg_status *st = &c->res->status;
	const struct netpool_entry *e = NULL;
	struct in6_addr addr6 = {0};
	uint32_t addr = 0;
	uint8_t mac[MAC_LEN];
	struct netpool *p = NULL;
	int r4, r6 = 0;

	if (mac_parse(nic->mac, mac) < 0) /* the codec canonicalised it: cannot happen */
		return -EINVAL;
	if ((r4 = nic_pool(c, nic, mac, &p, &e)) != 0) {
		if (r4 < 0)
			return r4;
		return add_nic(st, nic->network_name, nic->mac, 0, NULL, VMNETCFG_STATE_PENDING);
	}
	if ((r4 = bind_v4(c, nic, p, mac, e, &addr)) < 0 ||
	    (r6 = bind_v6(c, nic, p, mac, &addr6)) < 0)
		return r4 < 0 ? r4 : r6;
	return add_nic(st, nic->network_name, nic->mac, addr, &addr6,
	    r4 == 0 && r6 == 0 ? VMNETCFG_STATE_ALLOCATED : VMNETCFG_STATE_PENDING);
}

static int
append_status(struct vmnetcfg_status *dst, const struct vmnetcfg_status *src)
{
	for (size_t i = 0; i < src->n_nics; i++) {
		const struct vmnetcfg_nic_status *n = &src->nics[i];
		int r = add_nic(
		    dst, n->network_name, n->mac, n->allocated_ip, &n->allocated_ipv6, n->state);

		if (r < 0)
			return r;
	}
	return 0;
}

static int
set_cond(struct crd_conditions *conds, const char *type, bool v, const char *reason,
    const char *message, long long generation, time_t now)
{
	int r = crd_conditions_set(
	    conds, type, v ? CRD_COND_TRUE : CRD_COND_FALSE, reason, message, generation, now);

	return r < 0 ? r : 0;
}

/*
 * Normal Events of the transition old -> res->status, derived from the two statuses only (not
 * from what this run did), so a run that changes nothing, or a retry of a status write that
 * failed, reports exactly what the written status will show moved: an address a NIC held
 * (in any state) and holds no more is Released; a NIC Allocated now and not Allocated at
 * that address before is Allocated.
 */
static int
transition_events(struct vmnetcfg_result *res, const struct vmnetcfg_status *old)
{
	const struct vmnetcfg_status *st = &res->status;
	const struct crd_condition *dis =
	    crd_conditions_get(&old->conditions, VMNETCFG_COND_DISABLED);
	bool was_paused = dis != NULL && dis->status == CRD_COND_TRUE;
	int r;

	for (size_t i = 0; i < old->n_nics && !was_paused; i++) {
		const struct vmnetcfg_nic_status *o = &old->nics[i];
		const struct vmnetcfg_nic_status *n = status_nic(st, o->network_name, o->mac);

		bool gone4 =
		    o->allocated_ip != 0 && (n == NULL || n->allocated_ip != o->allocated_ip);
		bool gone6 = !ipv6_is_zero(&o->allocated_ipv6) &&
			     (n == NULL || !ipv6_equal(&n->allocated_ipv6, &o->allocated_ipv6));

		if (!gone4 && !gone6)
			continue;
		r = nic_event(res, VMNETCFG_REASON_RELEASED, "released", o->network_name, o->mac,
		    gone4 ? o->allocated_ip : 0, gone6 ? &o->allocated_ipv6 : NULL);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < st->n_nics; i++) {
		const struct vmnetcfg_nic_status *n = &st->nics[i];
		const struct vmnetcfg_nic_status *o = status_nic(old, n->network_name, n->mac);

		if (n->state != VMNETCFG_STATE_ALLOCATED || !holds_any(n) ||
		    (o != NULL && o->state == VMNETCFG_STATE_ALLOCATED &&
			o->allocated_ip == n->allocated_ip &&
			ipv6_equal(&o->allocated_ipv6, &n->allocated_ipv6)))
			continue;
		r = nic_event(res, VMNETCFG_REASON_ALLOCATED, "allocated", n->network_name, n->mac,
		    n->allocated_ip, &n->allocated_ipv6);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Release the binding of (network, mac) when this VMNetCfg (or no one) holds it. 0, or 1 when
 * the network's pool is not ready (nothing can be released there yet), or -ENOMEM.
 */
static int
release_nic(struct compute *c, const char *network, const char *macs)
{
	enum netpool_avail avail = NETPOOL_ABSENT;
	struct netpool *p = c->lookup(c->userdata, network, &avail);
	uint8_t mac[MAC_LEN];

	if (avail == NETPOOL_NOT_READY)
		return 1;
	if (p == NULL || avail != NETPOOL_READY || mac_parse(macs, mac) < 0 ||
	    release_both(p, mac, c->key) != 0)
		return 0;
	c->res->released = true;
	return touch(c->res, network);
}

/*
 * Paused, as upstream's pkg/controller/vmnetcfg/controller.go (OnChange: cleanup, Disabled,
 * every NIC Pending; its status handlers then fail, Allocated and InSynced False): release
 * every binding, list the spec's NICs Pending with the address each held (remembered for the
 * resume), Released Events for the NICs that were Allocated or Stale. A NIC gone from the spec
 * whose pool is not ready stays listed Stale until it can be released there (its pool status may
 * still list it).
 */
static int
compute_paused(struct compute *c, const struct vmnetcfg *cfg, time_t now)
{
	static const char msg[] = "paused: the addresses are released, remembered in the status "
				  "and taken back on resume when still free";
	struct vmnetcfg_result *res = c->res;
	struct crd_conditions *conds = &res->status.conditions;
	struct vmnetcfg_status stale = {0};
	long long gen = cfg->meta.generation;
	int r;

	for (size_t i = 0; i < cfg->status.n_nics; i++) {
		const struct vmnetcfg_nic_status *o = &cfg->status.nics[i];

		if ((r = release_nic(c, o->network_name, o->mac)) < 0)
			goto out;
		if (r == 1 && holds_any(o) && o->state != VMNETCFG_STATE_PENDING &&
		    !nic_in_spec(cfg, o->network_name, o->mac)) {
			c->n_stale++;
			if ((r = add_nic(&stale, o->network_name, o->mac, o->allocated_ip,
				 &o->allocated_ipv6, VMNETCFG_STATE_STALE)) < 0)
				goto out;
			continue;
		}
		/* Allocated and Stale NICs held their address; Pending ones only remembered it */
		if (o->state != VMNETCFG_STATE_PENDING && holds_any(o) &&
		    (r = nic_event(res, VMNETCFG_REASON_RELEASED, "released", o->network_name,
			 o->mac, o->allocated_ip, &o->allocated_ipv6)) < 0)
			goto out;
	}
	for (size_t i = 0; i < cfg->spec.n_nics; i++) {
		const struct vmnetcfg_nic *n = &cfg->spec.nics[i];
		const struct vmnetcfg_nic_status *o =
		    status_nic(&cfg->status, n->network_name, n->mac);

		if ((r = release_nic(c, n->network_name, n->mac)) < 0 ||
		    (r = add_nic(&res->status, n->network_name, n->mac,
			 o != NULL ? o->allocated_ip : 0, o != NULL ? &o->allocated_ipv6 : NULL,
			 VMNETCFG_STATE_PENDING)) < 0)
			goto out;
	}
	if ((r = append_status(&res->status, &stale)) < 0)
		goto out;
	if ((r = set_cond(
		 conds, VMNETCFG_COND_DISABLED, true, VMNETCFG_REASON_PAUSED, msg, gen, now)) < 0 ||
	    (r = set_cond(conds, VMNETCFG_COND_ALLOCATED, false, VMNETCFG_REASON_PAUSED,
		 "paused: no address is held", gen, now)) < 0 ||
	    (r = set_cond(conds, VMNETCFG_COND_IN_SYNCED, false, VMNETCFG_REASON_PAUSED,
		 "paused: the spec is not applied", gen, now)) < 0)
		goto out;
	r = 0;
out:
	vmnetcfg_status_clear(&stale);
	return r;
}

int
vmnetcfg_compute(const struct vmnetcfg *cfg, const char *key, vmnetcfg_lookup_fn lookup,
    void *userdata, time_t now, struct vmnetcfg_result *ret)
{
	struct compute c = {
	    .cfg = cfg, .key = key, .lookup = lookup, .userdata = userdata, .res = ret};
	struct vmnetcfg_status stale = {0};
	struct crd_conditions *conds = &ret->status.conditions;
	long long gen = cfg->meta.generation;
	int r;

	memset(ret, 0, sizeof(*ret));
	if ((r = crd_conditions_copy(conds, &cfg->status.conditions)) < 0)
		return r;

	if (cfg->spec.paused) {
		if ((r = compute_paused(&c, cfg, now)) < 0)
			goto fail;
		ret->changed = !vmnetcfg_status_equal(&ret->status, &cfg->status);
		return 0;
	}

	if ((r = release_removed(&c, cfg, &stale)) < 0)
		goto fail;
	for (size_t i = 0; i < cfg->spec.n_nics; i++)
		if ((r = bind_nic(&c, &cfg->spec.nics[i])) < 0)
			goto fail;
	if ((r = append_status(&ret->status, &stale)) < 0)
		goto fail;

	if ((r = set_cond(conds, VMNETCFG_COND_DISABLED, false, VMNETCFG_REASON_NOT_PAUSED, NULL,
		 gen, now)) < 0 ||
	    (r = set_cond(conds, VMNETCFG_COND_ALLOCATED, c.n_pending == 0,
		 c.n_pending > 0 ? c.first_reason : VMNETCFG_REASON_ALLOCATED,
		 c.n_pending > 0 ? c.message : NULL, gen, now)) < 0 ||
	    (r = set_cond(conds, VMNETCFG_COND_IN_SYNCED, c.n_pending == 0 && c.n_stale == 0,
		 c.n_pending > 0 ? VMNETCFG_REASON_PENDING
		 : c.n_stale > 0 ? VMNETCFG_REASON_STALE
				 : VMNETCFG_REASON_IN_SYNC,
		 c.n_pending > 0 ? "some NICs are pending"
		 : c.n_stale > 0 ? "released NICs wait for their IPPool"
				 : NULL,
		 gen, now)) < 0 ||
	    (r = transition_events(ret, &cfg->status)) < 0)
		goto fail;
	vmnetcfg_status_clear(&stale);
	ret->changed = !vmnetcfg_status_equal(&ret->status, &cfg->status);
	return 0;
fail:
	vmnetcfg_status_clear(&stale);
	vmnetcfg_result_clear(ret);
	return r;
}

int
vmnetcfg_release_all(const struct vmnetcfg *cfg, const char *key, vmnetcfg_lookup_fn lookup,
    void *userdata, struct vmnetcfg_result *ret)
{
	bool again = false;
	int r;

	memset(ret, 0, sizeof(*ret));
	for (size_t pass = 0; pass < 2; pass++) {
		size_t n = pass == 0 ? cfg->status.n_nics : cfg->spec.n_nics;

		for (size_t i = 0; i < n; i++) {
			const char *net = pass == 0 ? cfg->status.nics[i].network_name
						    : cfg->spec.nics[i].network_name;
			const char *macs =
			    pass == 0 ? cfg->status.nics[i].mac : cfg->spec.nics[i].mac;
			enum netpool_avail avail = NETPOOL_ABSENT;
			struct netpool *p = lookup(userdata, net, &avail);
			const struct netpool_entry *e;
			const struct netpool6_entry *e6;
			struct in6_addr addr6 = {0};
			uint8_t mac[MAC_LEN];
			uint32_t addr;
			bool gone4, gone6;

			if (mac_parse(macs, mac) < 0 || avail == NETPOOL_ABSENT)
				continue;
			if (avail == NETPOOL_NOT_READY || p == NULL) {
				again = true;
				continue;
			}
			e = netpool_by_mac(p, mac);
			addr = e != NULL ? e->addr : 0;
			e6 = netpool_v6(p) != NULL ? netpool6_by_mac(netpool_v6(p), mac) : NULL;
			if (e6 != NULL)
				addr6 = e6->addr;
			gone4 = netpool_release(p, mac, key) == 0;
			gone6 = netpool_release6(p, mac, key) == 0;
			if (!gone4 && !gone6)
				continue;
			ret->released = true;
			if ((r = touch(ret, net)) < 0 ||
			    (r = nic_event(ret, VMNETCFG_REASON_RELEASED, "released", net, macs,
				 gone4 ? addr : 0, gone6 ? &addr6 : NULL)) < 0) {
				vmnetcfg_result_clear(ret);
				return r;
			}
		}
	}
	return again ? -EAGAIN : 0;
}

void
vmnetcfg_result_clear(struct vmnetcfg_result *r)
{
	vmnetcfg_status_clear(&r->status);
	free(r->events);
	free(r->touched);
	memset(r, 0, sizeof(*r));
}
