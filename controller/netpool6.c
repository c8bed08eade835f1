/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The IPv6 half of a pool's network: ipam_pool6 for the addresses, ipam_leases6 (found by MAC
 * and by address) for the bindings and their owners, the EXCLUDED / RESERVED marks of the status
 * and the bytes its status.ipv6.allocated takes.
 */
#include "controller/netpool6.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ip6.h"

struct netpool6 {
	struct ipam_pool6 *ipam;
	struct in6_addr network, server_ip, start, end;
	unsigned prefix;
	struct in6_addr *exclude; /* a copy of the config's, for a rebuild */
	size_t n_exclude;
	struct ipam_leases6 leases;  /* of struct netpool6_entry */
	struct ippool_alloc6 *marks; /* EXCLUDED and RESERVED inside the range, sorted, unique */
	size_t n_marks;
	size_t lease_bytes;    /* JSON bytes of the MAC entries */
	size_t mark_bytes;     /* of the marks */
	size_t excluded_bytes; /* of the EXCLUDED marks alone */
};

_Static_assert(offsetof(struct netpool6_entry, mac) == offsetof(struct ipam_lease6, mac) &&
		   offsetof(struct netpool6_entry, addr) == offsetof(struct ipam_lease6, addr),
    "struct netpool6_entry begins with a struct ipam_lease6");

/* The record a lease begins (NULL for NULL). */
static struct netpool6_entry *
entry_of(struct ipam_lease6 *l)
{
	return (struct netpool6_entry *)(void *)l;
}

static struct netpool6_entry *
entry_at(const struct netpool6 *p, size_t i)
{
	return entry_of(ipam_leases6_at(&p->leases, i));
}

size_t
netpool6_entry_bytes(const struct in6_addr *a, enum ippool_alloc_kind kind)
{
	char ip[IPV6_STRLEN];

	ipv6_format(a, ip);
	/* "addr":"value", : the address, the value, 4 quotes, a colon and a comma */
	return strlen(ip) + (kind == IPPOOL_ALLOC_MAC ? MAC_STRLEN - 1 : 8) + 6;
}

size_t
netpool6_entry_bytes_max(void)
{
	return 39 + MAC_STRLEN - 1 + 6;
}

static int
alloc6_cmp(const void *a, const void *b)
{
	return ipv6_cmp(
	    &((const struct ippool_alloc6 *)a)->addr, &((const struct ippool_alloc6 *)b)->addr);
}

static bool
in_range(const struct netpool6 *p, const struct in6_addr *a)
{
	return ipv6_cmp(a, &p->start) >= 0 && ipv6_cmp(a, &p->end) <= 0;
}

int
netpool6_state(const struct netpool6 *p, const struct in6_addr *a)
{
	if (!in_range(p, a))
		return -ERANGE;
	return (int)ipam_pool6_state(p->ipam, a);
}

bool
netpool6_is_free(const struct netpool6 *p, const struct in6_addr *a)
{
	return netpool6_state(p, a) == IPAM_FREE;
}

/* The marks of the status: each exclude, the server and the network address, as the IPAM has
 * them (EXCLUDED or RESERVED) inside the range. */
static int
marks_recount(struct netpool6 *p)
{
	size_t cap = p->n_exclude + 2, n = 0;
	struct ippool_alloc6 *m = calloc(cap, sizeof(*m));

	if (m == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++) {
		const struct in6_addr *a = i < p->n_exclude    ? &p->exclude[i]
					   : i == p->n_exclude ? &p->server_ip
							       : &p->network;
		int st = netpool6_state(p, a);

		if (st != IPAM_EXCLUDED && st != IPAM_RESERVED)
			continue;
		m[n].addr = *a;
		m[n].kind = st == IPAM_EXCLUDED ? IPPOOL_ALLOC_EXCLUDED : IPPOOL_ALLOC_RESERVED;
		n++;
	}
	qsort(m, n, sizeof(*m), alloc6_cmp);
	free(p->marks);
	p->marks = m;
	p->n_marks = 0;
	p->mark_bytes = p->excluded_bytes = 0;
	for (size_t i = 0; i < n; i++) {
		size_t b;

		if (p->n_marks > 0 && ipv6_equal(&m[p->n_marks - 1].addr, &m[i].addr))
			continue;
		m[p->n_marks++] = m[i];
		b = netpool6_entry_bytes(&m[i].addr, m[i].kind);
		p->mark_bytes += b;
		if (m[i].kind == IPPOOL_ALLOC_EXCLUDED)
			p->excluded_bytes += b;
	}
	return 0;
}

static int
copy_config(struct netpool6 *p, const struct ippool_ipv6_config *cfg)
{
	struct in6_addr *ex = NULL;

	if (cfg->n_exclude > 0) {
		ex = malloc(cfg->n_exclude * sizeof(*ex));
		if (ex == NULL)
			return -ENOMEM;
		memcpy(ex, cfg->exclude, cfg->n_exclude * sizeof(*ex));
	}
	free(p->exclude);
	p->exclude = ex;
	p->n_exclude = cfg->n_exclude;
	p->start = cfg->start;
	p->end = cfg->end;
	return 0;
}

static int
ipam_make(const struct netpool6 *p, struct ipam_pool6 **ret)
{
	return ipam_pool6_new(&p->network, p->prefix, &p->start, &p->end, &p->server_ip, p->exclude,
	    p->n_exclude, ret);
}

int
netpool6_new(const struct ippool_ipv6_config *cfg, struct netpool6 **ret)
{
	struct netpool6 *p = calloc(1, sizeof(*p));
	int r;

	if (p == NULL)
		return -ENOMEM;
	ipv6_prefix_network(&cfg->cidr_addr, cfg->prefix, &p->network);
	p->prefix = cfg->prefix;
	p->server_ip = cfg->server_ip;
	ipam_leases6_init(&p->leases, sizeof(struct netpool6_entry), true);
	if ((r = copy_config(p, cfg)) < 0 || (r = ipam_make(p, &p->ipam)) < 0 ||
	    (r = marks_recount(p)) < 0) {
		netpool6_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

static void
entries_clear(struct netpool6 *p)
{
	for (size_t i = 0; i < ipam_leases6_count(&p->leases); i++)
		free(entry_at(p, i)->owner);
	ipam_leases6_clear(&p->leases);
	p->lease_bytes = 0;
}

struct netpool6 *
netpool6_free(struct netpool6 *p)
{
	if (p == NULL)
		return NULL;
	entries_clear(p);
	ipam_leases6_destroy(&p->leases);
	ipam_pool6_free(p->ipam);
	free(p->exclude);
	free(p->marks);
	free(p);
	return NULL;
}

bool
netpool6_same_network(const struct netpool6 *p, const struct ippool_ipv6_config *cfg)
{
	struct in6_addr net;

	ipv6_prefix_network(&cfg->cidr_addr, cfg->prefix, &net);
	return p->prefix == cfg->prefix && ipv6_equal(&p->network, &net) &&
	       ipv6_equal(&p->server_ip, &cfg->server_ip);
}

uint64_t
netpool6_range_hash(const struct ippool_ipv6_config *cfg)
{
	uint64_t h = hash64(&cfg->start, sizeof(cfg->start), 6);

	h = hash64(&cfg->end, sizeof(cfg->end), h);
	return cfg->n_exclude > 0 ? hash64(cfg->exclude, cfg->n_exclude * sizeof(*cfg->exclude), h)
				  : h;
}

int
netpool6_set_range(
    struct netpool6 *p, const struct ippool_ipv6_config *cfg, struct in6_addr *ret_conflict)
{
	int r = ipam_pool6_set_range(
	    p->ipam, &cfg->start, &cfg->end, cfg->exclude, cfg->n_exclude, ret_conflict);

	if (r < 0)
		return r;
	if ((r = copy_config(p, cfg)) < 0)
		return r;
	return marks_recount(p);
}

const struct netpool6_entry *
netpool6_by_mac(const struct netpool6 *p, const uint8_t mac[MAC_LEN])
{
	return entry_of(ipam_leases6_by_mac(&p->leases, mac));
}

const struct netpool6_entry *
netpool6_by_addr(const struct netpool6 *p, const struct in6_addr *a)
{
	return entry_of(ipam_leases6_by_addr(&p->leases, a));
}

static int
entry_add(
    struct netpool6 *p, const uint8_t mac[MAC_LEN], const struct in6_addr *a, const char *owner)
{
	struct ipam_lease6 *l;
	char *o = NULL;
	int r;

	if (owner != NULL && (o = strdup(owner)) == NULL)
		return -ENOMEM;
	if ((r = ipam_leases6_add(&p->leases, mac, a, &l)) < 0) {
		free(o);
		return r;
	}
	entry_of(l)->owner = o;
	p->lease_bytes += netpool6_entry_bytes(a, IPPOOL_ALLOC_MAC);
	return 0;
}

/* Removes e; the last record moves into its place. */
static void
entry_remove(struct netpool6 *p, struct netpool6_entry *e)
{
	p->lease_bytes -= netpool6_entry_bytes(&e->addr, IPPOOL_ALLOC_MAC);
	free(e->owner);
	ipam_leases6_remove(&p->leases, &e->lease);
}

static int
adopt(struct netpool6_entry *e, const char *owner)
{
	char *o;

	if (e->owner != NULL || owner == NULL)
		return 0;
	if ((o = strdup(owner)) == NULL)
		return -ENOMEM;
	e->owner = o;
	return 0;
}

static int
add_conflict(struct netpool6_conflict **arr, size_t *n, enum ipam_conflict_kind kind,
    const struct in6_addr *a, size_t first, size_t second)
{
	struct netpool6_conflict *c = realloc(*arr, (*n + 1) * sizeof(*c));

	if (c == NULL)
		return -ENOMEM;
	*arr = c;
	c[(*n)++] =
	    (struct netpool6_conflict){.kind = kind, .addr = *a, .first = first, .second = second};
	return 0;
}

/* Where the rebuild stands: the conflicts, and which source made each entry. */
struct rebuild {
	struct netpool6_conflict *out;
	size_t n_out;
	const struct netpool6_source *src;
};

/* The index of the source that made entry e (linear: only on a conflict). */
static size_t
source_of(const struct rebuild *rb, size_t upto, const struct netpool6_entry *e)
{
	for (size_t i = 0; i < upto; i++)
		if (memcmp(rb->src[i].mac, e->mac, MAC_LEN) == 0 &&
		    ipv6_equal(&rb->src[i].addr, &e->addr))
			return i;
	return upto;
}

/* One source of a rebuild: an entry, a merge, or a conflict. */
static int
rebuild_one(struct netpool6 *p, struct rebuild *rb, size_t i)
{
	const struct netpool6_source *s = &rb->src[i];
	struct netpool6_entry *e = (struct netpool6_entry *)netpool6_by_mac(p, s->mac);
	const struct netpool6_entry *h;
	int st = netpool6_state(p, &s->addr);

	if (st < 0 || st == IPAM_EXCLUDED || st == IPAM_RESERVED)
		return add_conflict(&rb->out, &rb->n_out,
		    st < 0		  ? IPAM_CONFLICT_OUTSIDE
		    : st == IPAM_EXCLUDED ? IPAM_CONFLICT_EXCLUDED
					  : IPAM_CONFLICT_RESERVED,
		    &s->addr, i, i);
	if (e != NULL && ipv6_equal(&e->addr, &s->addr)) {
		if (e->owner != NULL && s->owner != NULL && strcmp(e->owner, s->owner) != 0)
			/* one MAC, one address, two VMNetCfgs claiming it */
			return add_conflict(&rb->out, &rb->n_out, IPAM_CONFLICT_DUPLICATE_MAC,
			    &s->addr, source_of(rb, i, e), i);
		return adopt(e, s->owner);
	}
	if (e != NULL) {
		/* one MAC on two addresses: the second stays USED, owned by no one */
		if (st == IPAM_FREE)
			(void)ipam_pool6_take(p->ipam, &s->addr);
		return add_conflict(&rb->out, &rb->n_out, IPAM_CONFLICT_DUPLICATE_MAC, &s->addr,
		    source_of(rb, i, e), i);
	}
	if ((h = netpool6_by_addr(p, &s->addr)) != NULL)
		return add_conflict(&rb->out, &rb->n_out, IPAM_CONFLICT_DUPLICATE_IP, &s->addr,
		    source_of(rb, i, h), i);
	if (st == IPAM_USED) /* contested before (a duplicate-mac's second address) */
		return add_conflict(
		    &rb->out, &rb->n_out, IPAM_CONFLICT_DUPLICATE_IP, &s->addr, i, i);
	if (ipam_pool6_take(p->ipam, &s->addr) < 0)
		return -ENOMEM;
	return entry_add(p, s->mac, &s->addr, s->owner);
}

int
netpool6_rebuild(struct netpool6 *p, const struct netpool6_source *src, size_t n,
    struct netpool6_conflict **ret_conflicts)
{
	struct rebuild rb = {.src = src};
	struct ipam_pool6 *fresh;
	int r;

	/* every USED mark dropped: the IPAM made anew from the configuration */
	if ((r = ipam_make(p, &fresh)) < 0)
		return r;
	entries_clear(p);
	ipam_pool6_free(p->ipam);
	p->ipam = fresh;
	for (size_t i = 0; i < n; i++)
		if ((r = rebuild_one(p, &rb, i)) < 0) {
			free(rb.out);
			return r;
		}
	if (ret_conflicts != NULL)
		*ret_conflicts = rb.out;
	else
		free(rb.out);
	return (int)rb.n_out;
}

int
netpool6_bind(struct netpool6 *p, const uint8_t mac[MAC_LEN], const struct in6_addr *addr,
    const char *owner, size_t room, struct in6_addr *ret)
{
	struct netpool6_entry *e = (struct netpool6_entry *)netpool6_by_mac(p, mac);
	bool any = addr == NULL || ipv6_is_zero(addr);
	struct in6_addr a;
	int r;

	if (e != NULL) {
		if (e->owner != NULL && (owner == NULL || strcmp(e->owner, owner) != 0))
			return -EBUSY;
		if (!any && !ipv6_equal(addr, &e->addr))
			return -EALREADY;
		if ((r = adopt(e, owner)) < 0)
			return r;
		*ret = e->addr;
		return 0;
	}
	if (!any) {
		a = *addr;
		switch (netpool6_state(p, &a)) {
		case IPAM_FREE:
			break;
		case IPAM_USED:
			return -EEXIST;
		case IPAM_EXCLUDED:
		case IPAM_RESERVED:
			return -EPERM;
		default:
			return -ERANGE;
		}
		if ((r = ipam_pool6_take(p->ipam, &a)) < 0)
			return r;
	} else if ((r = ipam_pool6_alloc(p->ipam, &a)) < 0) {
		return r; /* -ENOSPC */
	}
	if (netpool6_entry_bytes(&a, IPPOOL_ALLOC_MAC) > room) {
		(void)ipam_pool6_release(p->ipam, &a);
		return -EFBIG;
	}
	if ((r = entry_add(p, mac, &a, owner)) < 0) {
		(void)ipam_pool6_release(p->ipam, &a);
		return r;
	}
	*ret = a;
	return 0;
}

int
netpool6_release(struct netpool6 *p, const uint8_t mac[MAC_LEN], const char *owner)
{
	struct netpool6_entry *e = (struct netpool6_entry *)netpool6_by_mac(p, mac);

	if (e == NULL)
		return -ENOENT;
	if (e->owner != NULL && (owner == NULL || strcmp(e->owner, owner) != 0))
		return -EPERM;
	(void)ipam_pool6_release(p->ipam, &e->addr);
	entry_remove(p, e);
	return 0;
}

size_t
netpool6_size(const struct netpool6 *p)
{
	return ipam_leases6_count(&p->leases);
}

uint64_t
netpool6_used(const struct netpool6 *p)
{
	return ipam_pool6_used(p->ipam);
}

int64_t
netpool6_available(const struct netpool6 *p)
{
	return ipam_pool6_available(p->ipam);
}

size_t
netpool6_map_bytes(const struct netpool6 *p, bool omit_excluded)
{
	return p->lease_bytes + p->mark_bytes - (omit_excluded ? p->excluded_bytes : 0) + 2;
}

size_t
netpool6_excluded_bytes(const struct netpool6 *p)
{
	return p->excluded_bytes;
}

size_t
netpool6_evict_unrecorded(struct netpool6 *p, const struct ippool_status *recorded, size_t over,
    void (*evicted)(void *userdata, const char *owner), void *userdata)
{
	size_t freed = 0, n = 0;

	/* from the end: a removal moves the last record into the hole, already visited */
	for (size_t i = netpool6_size(p); i-- > 0;) {
		struct netpool6_entry *e = entry_at(p, i);
		const struct ippool_alloc6 *a = ippool_status_find6(recorded, &e->addr);

		if (freed >= over)
			break;
		if (a != NULL && a->kind == IPPOOL_ALLOC_MAC &&
		    memcmp(a->mac, e->mac, MAC_LEN) == 0)
			continue;
		if (evicted != NULL)
			evicted(userdata, e->owner);
		freed += netpool6_entry_bytes(&e->addr, IPPOOL_ALLOC_MAC);
		(void)ipam_pool6_release(p->ipam, &e->addr);
		entry_remove(p, e);
		n++;
	}
	return n;
}

int
netpool6_render(const struct netpool6 *p, bool omit_excluded, struct ippool_status *st)
{
	struct ippool_alloc6 *a = calloc(netpool6_size(p) + p->n_marks + 1, sizeof(*a));
	size_t n = 0;
	int r;

	if (a == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < netpool6_size(p); i++) {
		const struct netpool6_entry *e = entry_at(p, i);

		a[n].addr = e->addr;
		a[n].kind = IPPOOL_ALLOC_MAC;
		memcpy(a[n].mac, e->mac, MAC_LEN);
		n++;
	}
	for (size_t i = 0; i < p->n_marks; i++)
		if (!omit_excluded || p->marks[i].kind != IPPOOL_ALLOC_EXCLUDED)
			a[n++] = p->marks[i];
	r = ippool_status_set_allocated6(st, a, n);
	free(a);
	if (r < 0)
		return r;
	st->has_ipv6_status = true;
	st->used6 = (long long)netpool6_used(p);
	st->available6 = netpool6_available(p);
	return 0;
}
