/* SPDX-License-Identifier: Apache-2.0 */
/*
 * IPPool, pure part: the netpool (IPAM + MAC ownership), its rebuild from existing bindings,
 * range changes, the rendering of status.ipv4, the pool's conditions and the Normal Events of
 * its status transitions.
 */
#include "controller/netpool.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct netpool {
	struct ipam_pool *ipam;
	uint32_t network;
	unsigned prefix;
	uint32_t server_ip;
	uint32_t router;
	struct ipam_leases leases; /* of struct netpool_entry */
	size_t lease_bytes;	   /* JSON bytes of the MAC entries of status.ipv4.allocated */
	size_t mark_bytes;	   /* of its EXCLUDED and RESERVED entries */
	size_t excluded_bytes;	   /* of its EXCLUDED entries alone */
	bool omit_excluded;	   /* EXCLUDED entries left out of the status */
	size_t budget;		   /* most bytes the maps may take (0: no limit) */
	struct netpool6 *v6;	   /* the IPv6 half (spec.ipv6Config), or NULL */
};

/* "a.b.c.d":"aa:bb:cc:dd:ee:ff", in compact JSON: the address, the value, 6 quotes/punct. */
static size_t
entry_bytes(uint32_t addr, size_t value_len)
{
	char ip[IPV4_STRLEN];

	ipv4_format(addr, ip);
	return strlen(ip) + value_len + 6;
}

size_t
netpool_entry_bytes(uint32_t addr, enum ippool_alloc_kind kind)
{
	return entry_bytes(addr, kind == IPPOOL_ALLOC_MAC ? MAC_STRLEN - 1 : 8);
}

static int
mark_bytes_add(uint32_t addr, enum ipam_state state, void *userdata)
{
	struct netpool *p = userdata;
	size_t n = netpool_entry_bytes(addr, IPPOOL_ALLOC_EXCLUDED);

	p->mark_bytes += n;
	if (state == IPAM_EXCLUDED)
		p->excluded_bytes += n;
	return 0;
}

static void
marks_recount(struct netpool *p)
{
	p->mark_bytes = p->excluded_bytes = 0;
	ipam_pool_foreach(
	    p->ipam, IPAM_MASK(IPAM_EXCLUDED) | IPAM_MASK(IPAM_RESERVED), mark_bytes_add, p);
}

/* The record a lease begins (NULL for NULL). */
static struct netpool_entry *
entry_of(struct ipam_lease *l)
{
	return (struct netpool_entry *)(void *)l;
}

/* Its place in the table (records are a dense array of struct netpool_entry). */
static size_t
entry_index(const struct netpool *p, const struct netpool_entry *e)
{
	return (size_t)(e - entry_of(ipam_leases_at(&p->leases, 0)));
}

static int
entry_add(struct netpool *p, const uint8_t mac[MAC_LEN], uint32_t addr, const char *owner)
{
	struct ipam_lease *l;
	char *o = NULL;
	int r;

	if (owner != NULL && (o = strdup(owner)) == NULL)
		return -ENOMEM;
	if ((r = ipam_leases_add(&p->leases, mac, addr, &l)) < 0) {
		free(o);
		return r;
	}
	entry_of(l)->owner = o;
	p->lease_bytes += netpool_entry_bytes(addr, IPPOOL_ALLOC_MAC);
	return 0;
}

static void
entry_remove(struct netpool *p, struct netpool_entry *e)
{
	free(e->owner);
	p->lease_bytes -= netpool_entry_bytes(e->addr, IPPOOL_ALLOC_MAC);
	ipam_leases_remove(&p->leases, &e->lease);
}

static void
entries_clear(struct netpool *p)
{
	for (size_t i = 0; i < ipam_leases_count(&p->leases); i++)
		free(entry_of(ipam_leases_at(&p->leases, i))->owner);
	ipam_leases_clear(&p->leases);
	p->lease_bytes = 0;
}

int
netpool_new(const struct ippool_spec *spec, struct netpool **ret)
{
	struct netpool *p;
	int r;

	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	r = ipam_pool_new(spec->cidr_addr, spec->prefix, spec->start, spec->end, spec->server_ip,
	    spec->router, spec->exclude, spec->n_exclude, &p->ipam);
	if (r < 0) {
		free(p);
		return r;
	}
	p->network = spec->cidr_addr & ipv4_prefix_mask(spec->prefix);
	p->prefix = spec->prefix;
	p->server_ip = spec->server_ip;
	p->router = spec->router;
	ipam_leases_init(&p->leases, sizeof(struct netpool_entry), true);
	marks_recount(p);
	if (spec->has_ipv6 && (r = netpool6_new(&spec->ipv6, &p->v6)) < 0) {
		netpool_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

struct netpool *
netpool_free(struct netpool *p)
{
	if (p == NULL)
		return NULL;
	entries_clear(p);
	ipam_leases_destroy(&p->leases);
	ipam_pool_free(p->ipam);
	netpool6_free(p->v6);
	free(p);
	return NULL;
}

bool
netpool_same_network(const struct netpool *p, const struct ippool_spec *spec)
{
	return p->prefix == spec->prefix &&
	       p->network == (spec->cidr_addr & ipv4_prefix_mask(spec->prefix)) &&
	       p->server_ip == spec->server_ip && p->router == spec->router;
}

int
netpool_set_range(struct netpool *p, const struct ippool_spec *spec, uint32_t *ret_conflict)
{
	int r = ipam_pool_set_range(
	    p->ipam, spec->start, spec->end, spec->exclude, spec->n_exclude, ret_conflict);

	if (r == 0) {
		marks_recount(p);
		p->omit_excluded = netpool_omits_excluded(p->budget, netpool_excluded_bytes(p));
	}
	return r;
}

size_t
netpool_status_bytes(const struct netpool *p)
{
	size_t n = p->lease_bytes + p->mark_bytes - (p->omit_excluded ? p->excluded_bytes : 0) + 2;

	return p->v6 != NULL ? n + netpool6_map_bytes(p->v6, p->omit_excluded) : n;
}

size_t
netpool_excluded_bytes(const struct netpool *p)
{
	return p->excluded_bytes + (p->v6 != NULL ? netpool6_excluded_bytes(p->v6) : 0);
}

bool
netpool_omits_excluded(size_t budget, size_t excluded_bytes)
{
	return budget != 0 && excluded_bytes > budget / 2;
}

void
netpool_set_budget(struct netpool *p, size_t budget)
{
	p->budget = budget;
	p->omit_excluded = netpool_omits_excluded(budget, netpool_excluded_bytes(p));
}

bool
netpool_omitting_excluded(const struct netpool *p)
{
	return p->omit_excluded;
}

size_t
netpool_budget(const struct netpool *p)
{
	return p->budget;
}

bool
netpool_status_full(const struct netpool *p)
{
	/* no room for one more NIC at the longest addresses (15 characters; IPv6: 39) */
	size_t one = netpool_entry_bytes(UINT32_MAX, IPPOOL_ALLOC_MAC) +
		     (p->v6 != NULL ? netpool6_entry_bytes_max() : 0);

	return p->budget != 0 && netpool_status_bytes(p) + one > p->budget;
}

const struct netpool_entry *
netpool_by_mac(const struct netpool *p, const uint8_t mac[MAC_LEN])
{
	return entry_of(ipam_leases_by_mac(&p->leases, mac));
}

const struct netpool_entry *
netpool_by_addr(const struct netpool *p, uint32_t addr)
{
	return entry_of(ipam_leases_by_addr(&p->leases, addr));
}

static int
add_conflict(struct ipam_conflict **arr, size_t *n, enum ipam_conflict_kind kind, uint32_t addr,
    size_t first, size_t second)
{
	struct ipam_conflict *c = realloc(*arr, (*n + 1) * sizeof(*c));

	if (c == NULL)
		return -ENOMEM;
	*arr = c;
	c[*n] =
	    (struct ipam_conflict){.kind = kind, .addr = addr, .first = first, .second = second};
	(*n)++;
	return 0;
}

int
netpool_rebuild(struct netpool *p, const struct netpool_source *src, size_t n,
    struct ipam_conflict **ret_conflicts)
{
	struct ipam_binding *b = NULL;
	struct ipam_conflict *ic = NULL, *out = NULL;
	bool *skip = NULL;
	size_t *first_of = NULL; /* entry index → index of its source */
	size_t n_out = 0;
	int nc, r = -ENOMEM;

	if (n > 0) {
		b = calloc(n, sizeof(*b));
		skip = calloc(n, sizeof(*skip));
		first_of = calloc(n, sizeof(*first_of));
		if (b == NULL || skip == NULL || first_of == NULL)
			goto out;
	}
	for (size_t i = 0; i < n; i++) {
		b[i].addr = src[i].addr;
		memcpy(b[i].mac, src[i].mac, MAC_LEN);
	}
	/* IPAM marks (a contested address stays USED) and the conflicts it sees */
	nc = ipam_pool_rebuild(p->ipam, b, n, &ic);
	if (nc < 0) {
		r = nc;
		goto out;
	}
	for (int i = 0; i < nc; i++) {
		skip[ic[i].second] = true;
		if (add_conflict(&out, &n_out, ic[i].kind, ic[i].addr, ic[i].first, ic[i].second) <
		    0)
			goto out;
	}
	entries_clear(p);
	for (size_t i = 0; i < n; i++) {
		const struct netpool_entry *e;

		if (skip[i])
			continue;
		e = netpool_by_mac(p, src[i].mac);
		if (e != NULL) {
			/* same MAC and address again: merge the owner. Other cases were
			 * reported by the IPAM rebuild (duplicate MAC / IP). */
			if (e->addr == src[i].addr && e->owner == NULL && src[i].owner != NULL) {
				char *o = strdup(src[i].owner);

				if (o == NULL)
					goto out;
				((struct netpool_entry *)e)->owner = o;
			} else if (e->addr == src[i].addr && e->owner != NULL &&
				   src[i].owner != NULL && strcmp(e->owner, src[i].owner) != 0) {
				/* one MAC, one address, two VMNetCfgs claiming it */
				if (add_conflict(&out, &n_out, IPAM_CONFLICT_DUPLICATE_MAC,
					src[i].addr, first_of[entry_index(p, e)], i) < 0)
					goto out;
			}
			continue;
		}
		if (netpool_by_addr(p, src[i].addr) != NULL)
			continue; /* reported by the IPAM rebuild as a duplicate IP */
		/* the source of the entry about to be added */
		first_of[ipam_leases_count(&p->leases)] = i;
		if (entry_add(p, src[i].mac, src[i].addr, src[i].owner) < 0)
			goto out;
	}
	if (ret_conflicts != NULL) {
		*ret_conflicts = out;
		out = NULL;
	}
	r = (int)n_out;
out:
	free(out);
	free(ic);
	free(b);
	free(skip);
	free(first_of);
	return r;
}

int
netpool_bind(struct netpool *p, const uint8_t mac[MAC_LEN], uint32_t addr, const char *owner,
    uint32_t *ret_addr)
{
	const struct netpool_entry *e = netpool_by_mac(p, mac);
	uint32_t a = addr;
	int r;

	if (e != NULL) {
		if (e->owner != NULL && (owner == NULL || strcmp(e->owner, owner) != 0))
			return -EBUSY;
		if (addr != 0 && addr != e->addr)
			return -EALREADY;
		if (e->owner == NULL && owner != NULL) {
			char *o = strdup(owner);

			if (o == NULL)
				return -ENOMEM;
			((struct netpool_entry *)e)->owner = o; /* adopt */
		}
		*ret_addr = e->addr;
		return 0;
	}
	if (addr != 0) {
		r = ipam_pool_allocate_addr(p->ipam, addr);
		if (r < 0)
			return r; /* -ERANGE, -EPERM, -EEXIST */
	} else {
		r = ipam_pool_allocate(p->ipam, &a);
		if (r < 0)
			return r; /* -ENOSPC */
	}
	if (p->budget != 0 &&
	    netpool_status_bytes(p) + netpool_entry_bytes(a, IPPOOL_ALLOC_MAC) > p->budget) {
		ipam_pool_release(p->ipam, a);
		return -EFBIG;
	}
	r = entry_add(p, mac, a, owner);
	if (r < 0) {
		ipam_pool_release(p->ipam, a);
		return r;
	}
	*ret_addr = a;
	return 0;
}

int
netpool_release(struct netpool *p, const uint8_t mac[MAC_LEN], const char *owner)
{
	struct netpool_entry *e = entry_of(ipam_leases_by_mac(&p->leases, mac));

	if (e == NULL)
		return -ENOENT;
	if (e->owner != NULL && (owner == NULL || strcmp(e->owner, owner) != 0))
		return -EPERM;
	(void)ipam_pool_release(p->ipam, e->addr);
	entry_remove(p, e);
	return 0;
}

size_t
netpool_evict_unrecorded(struct netpool *p, const struct ippool_status *recorded,
    void (*evicted)(void *userdata, const char *owner), void *userdata)
{
	size_t n = 0;

	/* from the end: a removal moves the last record into the hole, already visited */
	for (size_t i = ipam_leases_count(&p->leases); i-- > 0;) {
		struct netpool_entry *e = entry_of(ipam_leases_at(&p->leases, i));
		const struct ippool_alloc *a = ippool_status_find(recorded, e->addr);

		if (netpool_status_bytes(p) <= p->budget || p->budget == 0)
			break;
		if (a != NULL && a->kind == IPPOOL_ALLOC_MAC &&
		    memcmp(a->mac, e->mac, MAC_LEN) == 0)
			continue;
		if (evicted != NULL)
			evicted(userdata, e->owner);
		(void)ipam_pool_release(p->ipam, e->addr);
		entry_remove(p, e);
		n++;
	}
	if (p->v6 != NULL && p->budget != 0 && netpool_status_bytes(p) > p->budget)
		n += netpool6_evict_unrecorded(
		    p->v6, recorded, netpool_status_bytes(p) - p->budget, evicted, userdata);
	return n;
}

size_t
netpool_size(const struct netpool *p)
{
	return ipam_leases_count(&p->leases);
}

void
netpool_counts(const struct netpool *p, struct ipam_counts *ret)
{
	ipam_pool_counts(p->ipam, ret);
}

const struct ipam_pool *
netpool_ipam(const struct netpool *p)
{
	return p->ipam;
}

struct render_ctx {
	struct ippool_alloc *allocs;
	size_t n;
};

static int
render_mark(uint32_t addr, enum ipam_state state, void *userdata)
{
	struct render_ctx *c = userdata;

	c->allocs[c->n].addr = addr;
	c->allocs[c->n].kind =
	    state == IPAM_EXCLUDED ? IPPOOL_ALLOC_EXCLUDED : IPPOOL_ALLOC_RESERVED;
	memset(c->allocs[c->n].mac, 0, MAC_LEN);
	c->n++;
	return 0;
}

int
netpool_render_status(const struct netpool *p, struct ippool_status *st)
{
	struct ipam_counts counts;
	struct render_ctx c = {0};
	int r;

	ipam_pool_counts(p->ipam, &counts);
	c.allocs = calloc(ipam_leases_count(&p->leases) + counts.excluded + counts.reserved + 1,
	    sizeof(*c.allocs));
	if (c.allocs == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < ipam_leases_count(&p->leases); i++) {
		const struct ipam_lease *l = ipam_leases_at(&p->leases, i);

		c.allocs[c.n].addr = l->addr;
		c.allocs[c.n].kind = IPPOOL_ALLOC_MAC;
		memcpy(c.allocs[c.n].mac, l->mac, MAC_LEN);
		c.n++;
	}
	ipam_pool_foreach(p->ipam,
	    (p->omit_excluded ? 0 : IPAM_MASK(IPAM_EXCLUDED)) | IPAM_MASK(IPAM_RESERVED),
	    render_mark, &c);
	r = ippool_status_set_allocated(st, c.allocs, c.n);
	free(c.allocs);
	if (r < 0)
		return r;
	st->has_ipv4 = true;
	st->used = counts.used;
	st->available = counts.available;
	return p->v6 != NULL ? netpool6_render(p->v6, p->omit_excluded, st) : 0;
}

/* --- the IPv6 half ---------------------------------------------------------------------- */

bool
netpool_same_ipv6(const struct netpool *p, const struct ippool_spec *spec)
{
	if (p->v6 == NULL || !spec->has_ipv6)
		return p->v6 == NULL && !spec->has_ipv6;
	return netpool6_same_network(p->v6, &spec->ipv6);
}

int
netpool_reset_ipv6(struct netpool *p, const struct ippool_spec *spec)
{
	struct netpool6 *v6 = NULL;
	int r;

	if (spec->has_ipv6 && (r = netpool6_new(&spec->ipv6, &v6)) < 0)
		return r;
	netpool6_free(p->v6);
	p->v6 = v6;
	p->omit_excluded = netpool_omits_excluded(p->budget, netpool_excluded_bytes(p));
	return 0;
}

int
netpool_set_range6(struct netpool *p, const struct ippool_spec *spec, struct in6_addr *ret_conflict)
{
	int r;

	if (p->v6 == NULL || !spec->has_ipv6)
		return -ENOENT;
	if ((r = netpool6_set_range(p->v6, &spec->ipv6, ret_conflict)) == 0)
		p->omit_excluded = netpool_omits_excluded(p->budget, netpool_excluded_bytes(p));
	return r;
}

struct netpool6 *
netpool_v6(const struct netpool *p)
{
	return p->v6;
}

int
netpool_bind6(struct netpool *p, const uint8_t mac[MAC_LEN], const struct in6_addr *addr,
    const char *owner, struct in6_addr *ret)
{
	size_t room = SIZE_MAX, used;

	if (p->v6 == NULL)
		return -ENOENT;
	if (p->budget != 0) {
		used = netpool_status_bytes(p);
		room = used < p->budget ? p->budget - used : 0;
	}
	return netpool6_bind(p->v6, mac, addr, owner, room, ret);
}

int
netpool_release6(struct netpool *p, const uint8_t mac[MAC_LEN], const char *owner)
{
	return p->v6 != NULL ? netpool6_release(p->v6, mac, owner) : -ENOENT;
}

/* --- conditions ---------------------------------------------------------------------------- */

struct cond_row {
	const char *type;
	bool value;
	const char *reason;
	const char *message;
	const char *if_true, *if_false; /* default reasons: an operator never sees an empty one */
};

int
ippool_conditions_apply(struct crd_conditions *conds, const struct ippool_facts *f, time_t now)
{
	static const char paused_msg[] = "the pool is paused: no agent";
	const struct cond_row rows[] = {
	    {IPPOOL_COND_REGISTERED, !f->paused && f->registered,
		f->paused ? IPPOOL_REASON_PAUSED : f->registered_reason,
		f->paused ? paused_msg : f->registered_message, IPPOOL_REASON_AGENT_PLACED,
		IPPOOL_REASON_NOT_REGISTERED},
	    {IPPOOL_COND_CACHE_READY, f->cache_ready, f->cache_reason, f->cache_message,
		IPPOOL_REASON_CACHE_BUILT, IPPOOL_REASON_NOT_INITIALIZED},
	    {IPPOOL_COND_AGENT_READY, !f->paused && f->agent_ready,
		f->paused ? IPPOOL_REASON_PAUSED : f->agent_reason,
		f->paused ? paused_msg : f->agent_message, IPPOOL_REASON_AGENT_READY,
		IPPOOL_REASON_AGENT_NOT_READY},
	    {IPPOOL_COND_STOPPED, f->paused, NULL, NULL, IPPOOL_REASON_PAUSED,
		IPPOOL_REASON_NOT_PAUSED},
	};
	int changed = 0;

	for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
		const char *reason = rows[i].reason;
		int r;

		if (reason == NULL || reason[0] == '\0')
			reason = rows[i].value ? rows[i].if_true : rows[i].if_false;
		r = crd_conditions_set(conds, rows[i].type,
		    rows[i].value ? CRD_COND_TRUE : CRD_COND_FALSE, reason, rows[i].message,
		    f->generation, now);
		if (r < 0)
			return r;
		changed += r;
	}
	/* StatusFull: only on a pool that has been full (upstream has no such condition) */
	if (f->status_full || crd_conditions_get(conds, IPPOOL_COND_STATUS_FULL) != NULL) {
		const char *reason = f->status_full_reason;
		int r;

		if (reason == NULL || reason[0] == '\0')
			reason =
			    f->status_full ? IPPOOL_REASON_STATUS_FULL : IPPOOL_REASON_STATUS_ROOM;
		r = crd_conditions_set(conds, IPPOOL_COND_STATUS_FULL,
		    f->status_full ? CRD_COND_TRUE : CRD_COND_FALSE, reason, f->status_full_message,
		    f->generation, now);
		if (r < 0)
			return r;
		changed += r;
	}
	return changed;
}

/* --- Events of a status transition ------------------------------------------------------------ */

static bool
str_same(const char *a, const char *b)
{
	return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

static bool
cond_true(const struct ippool_status *st, const char *type)
{
	const struct crd_condition *c = crd_conditions_get(&st->conditions, type);

	return c != NULL && c->status == CRD_COND_TRUE;
}

static bool
pool_ready(const struct ippool_status *st)
{
	return cond_true(st, IPPOOL_COND_REGISTERED) && cond_true(st, IPPOOL_COND_CACHE_READY) &&
	       cond_true(st, IPPOOL_COND_AGENT_READY);
}

static void event_add(struct ippool_event *ev, size_t *n, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
event_add(struct ippool_event *ev, size_t *n, const char *reason, const char *fmt, ...)
{
	struct ippool_event *e = &ev[(*n)++];
	va_list ap;

	e->type = strcmp(reason, IPPOOL_EVENT_STATUS_FULL) == 0 ? "Warning" : "Normal";
	e->reason = reason;
	va_start(ap, fmt);
	if (vsnprintf(e->message, sizeof(e->message), fmt, ap) < 0)
		e->message[0] = '\0';
	va_end(ap);
}

size_t
ippool_status_events(const struct ippool_status *old, const struct ippool_status *new,
    const char *network, struct ippool_event ev[IPPOOL_EVENTS_MAX])
{
	const struct ippool_agent_pod_ref *o = &old->agent_pod_ref, *a = &new->agent_pod_ref;
	size_t n = 0;

	/* a placement change: the status names an agent it did not name before */
	if (new->has_agent_pod_ref &&
	    (!old->has_agent_pod_ref || !str_same(o->namespace, a->namespace) ||
		!str_same(o->name, a->name) || !str_same(o->uid, a->uid) ||
		!str_same(o->image, a->image)))
		event_add(ev, &n, IPPOOL_EVENT_AGENT_PLACED,
		    "agent %s/%s placed for network %s (image %s)",
		    a->namespace != NULL ? a->namespace : "", a->name != NULL ? a->name : "",
		    network, a->image != NULL ? a->image : "-");
	if (pool_ready(new) && !pool_ready(old))
		event_add(ev, &n, IPPOOL_EVENT_READY,
		    "serving network %s: agent %s/%s ready, %lld addresses available", network,
		    a->namespace != NULL ? a->namespace : "", a->name != NULL ? a->name : "",
		    new->available);
	if (cond_true(new, IPPOOL_COND_STATUS_FULL) && !cond_true(old, IPPOOL_COND_STATUS_FULL)) {
		const struct crd_condition *c =
		    crd_conditions_get(&new->conditions, IPPOOL_COND_STATUS_FULL);

		event_add(ev, &n, IPPOOL_EVENT_STATUS_FULL, "%s",
		    c->message != NULL ? c->message : "status.ipv4.allocated is full");
	}
	return n;
}
