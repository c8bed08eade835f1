/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/admit-ipv6.c - the IPv6 half of IPPool and VirtualMachineNetworkConfig admission:
 * spec.ipv6Config and a NIC's ipv6Address. harvester/vm-dhcp-controller has no IPv6, so every
 * rule here is ours; each mirrors the IPv4 rule of admit-ippool.c or admit-vmnetcfg.c it is
 * named after, in the same message form, with "ipv6" where the IPv4 message says "ip".
 *
 * IPPool, mutate (CREATE), as upstream's ensureServerIP/ensurePoolRange do for ipv4Config:
 *  - an unset ipv6Config.serverIP becomes the first address after the network address (the
 *    Subnet-Router anycast address, RFC 4291 §2.6.1) that is not in pool.exclude ("fail to
 *    assign ipv6 address for dhcp server" when none is left);
 *  - an unset pool.start is that same network address + 1, an unset pool.end the CIDR's last
 *    address (IPv6 has no broadcast address; "invalid ipv6 pool range" when start > end, as
 *    on a /128). The server's address then lies in the range, RESERVED, as for IPv4.
 *  Nothing is done when ipv6Config is absent or its cidr does not parse (validation refuses).
 * IPPool, validate (CREATE, and an UPDATE that changes the spec):
 *  - the CRD's CEL rules on ipv6Config.cidr and serverIP (same messages), for API servers
 *    older than 1.25;
 *  - serverIP, pool.start and pool.end inside the CIDR; serverIP neither the Subnet-Router
 *    anycast address (prefixes up to /126; RFC 6164 §6 leaves it unused on /127) nor
 *    multicast, not in pool.exclude, not held in status.ipv6.allocated by a MAC or EXCLUDED;
 *  - on UPDATE, a change of pool.start/end/exclude that leaves out an address bound to a MAC in
 *    status.ipv6.allocated (naming the VMNetCfg holding it), and the removal of ipv6Config
 *    while an IPv6 address is bound (status.ipv6.allocated, or a VMNetCfg status in the cache);
 *  - the rest (formats, start <= end, lifetimes, router advertisement limits) is the codec's
 *    (crds/ippool-v6.c), refused with code 400 by admit-ippool.c's check_codec.
 *  Warnings: a range with no allocatable address, a CIDR with host bits set, validLifetime
 *  under 60 s, router advertisements that make the agent a default router.
 * VMNetCfg ipv6Address (CREATE, and new or changed ones on UPDATE), as PR #157's checks of
 * ipAddress: an IPv6 address, not twice on one network, the pool has an ipv6Config, inside
 * its CIDR and pool range, not the server's address, the Subnet-Router anycast address or an
 * excluded one, not EXCLUDED/RESERVED in status.ipv6.allocated, not bound to another MAC there
 * or in a VMNetCfg status of the cache. Warning: the pool is paused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/admit-internal.h"
#include "crds/vmnetcfg.h"
#include "lib/ip6.h"

/* --- spec.ipv6Config as written ------------------------------------------------------------ */

struct v6info {
	const json_t *v6; /* spec.ipv6Config */
	const char *cidr; /* as written */
	struct in6_addr net /* host bits cleared */, last;
	unsigned prefix;
	bool has_server, has_start, has_end;
	struct in6_addr server, start, end;
	struct in6_addr *excl; /* sorted */
	size_t n_excl;
};

static int
cmp6(const void *x, const void *y)
{
	return ipv6_cmp(x, y);
}

static void
v6_clear(struct v6info *vi)
{
	free(vi->excl);
	memset(vi, 0, sizeof(*vi));
}

static bool
v6_excluded(const struct v6info *vi, const struct in6_addr *a)
{
	return vi->n_excl && bsearch(a, vi->excl, vi->n_excl, sizeof(*a), cmp6) != NULL;
}

/* An address member of o: 0 absent, 1 and *ret, -EINVAL present but not an IPv6 address. */
static int
addr_member(const json_t *o, const char *key, struct in6_addr *ret)
{
	const char *s = NULL;

	if (admit_json_str(o, key, &s) < 0)
		return -EINVAL;
	if (!s)
		return 0;
	return ipv6_parse(s, ret) < 0 ? -EINVAL : 1;
}

/*
 * spec.ipv6Config of obj: 1 loaded; 0 absent (or not an object); -EINVAL when the cidr is
 * absent or a written address does not parse (the codec's message tells which: its check
 * runs later); -ENOMEM. Cleared with v6_clear in every case.
 */
static int
v6_load(const json_t *obj, struct v6info *vi)
{
	const json_t *pool, *ex;
	int r;

	memset(vi, 0, sizeof(*vi));
	vi->v6 = json_object_get(json_object_get(obj, "spec"), "ipv6Config");
	if (!json_is_object(vi->v6))
		return 0;
	if (admit_json_str(vi->v6, "cidr", &vi->cidr) < 0 || !vi->cidr ||
	    ipv6_cidr_parse(vi->cidr, &vi->net, &vi->prefix) < 0 || vi->prefix < IPPOOL6_PREFIX_MIN)
		return -EINVAL;
	ipv6_prefix_network(&vi->net, vi->prefix, &vi->net);
	ipv6_prefix_last(&vi->net, vi->prefix, &vi->last);
	pool = json_object_get(vi->v6, "pool");
	if (pool && !json_is_object(pool) && !json_is_null(pool))
		return -EINVAL;
	if ((r = addr_member(vi->v6, "serverIP", &vi->server)) < 0)
		return r;
	vi->has_server = r;
	if ((r = addr_member(pool, "start", &vi->start)) < 0)
		return r;
	vi->has_start = r;
	if ((r = addr_member(pool, "end", &vi->end)) < 0)
		return r;
	vi->has_end = r;
	ex = json_object_get(pool, "exclude");
	if (ex && !json_is_array(ex) && !json_is_null(ex))
		return -EINVAL;
	vi->excl = calloc(json_array_size(ex) + 1, sizeof(*vi->excl));
	if (!vi->excl)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(ex); i++) {
		const char *s = json_string_value(json_array_get(ex, i));

		if (!s || ipv6_parse(s, &vi->excl[vi->n_excl++]) < 0)
			return -EINVAL;
	}
	qsort(vi->excl, vi->n_excl, sizeof(*vi->excl), cmp6);
	return 1;
}

static bool
v6_inside(const struct v6info *vi, const struct in6_addr *a)
{
	return ipv6_in_prefix(a, &vi->net, vi->prefix);
}

/* The network address + 1 (the mutator's default start, where the server search begins). */
static void
v6_first(const struct v6info *vi, struct in6_addr *ret)
{
	ipv6_from_u128(ipv6_to_u128(&vi->net) + 1, ret);
}

static void
v6_cidr_text(const struct v6info *vi, char out[IPV6_STRLEN + 4])
{
	char a[IPV6_STRLEN];

	ipv6_format(&vi->net, a);
	snprintf(out, IPV6_STRLEN + 4, "%s/%u", a, vi->prefix);
}

/* --- status.ipv6.allocated as written ------------------------------------------------------ */

struct st6 {
	struct in6_addr addr;
	enum ippool_alloc_kind kind;
	bool mac_ok;
	uint8_t mac[MAC_LEN];
	char raw[MAC_STRLEN + 8];
};

/* obj's status.ipv6.allocated (unparsable keys skipped), sorted: 0 or -ENOMEM; free(*ret). */
static int
st6_load(const json_t *obj, struct st6 **ret, size_t *n)
{
	const json_t *m =
	    json_object_get(json_object_get(json_object_get(obj, "status"), "ipv6"), "allocated");
	struct st6 *v = calloc(json_object_size(m) + 1, sizeof(*v));
	const char *k;
	json_t *x;

	*n = 0;
	if (!v)
		return -ENOMEM;
	json_object_foreach((json_t *)m, k, x)
	{
		struct st6 *e = &v[*n];
		const char *val = json_string_value(x);

		if (!val || ipv6_parse(k, &e->addr) < 0)
			continue;
		if (strcmp(val, IPPOOL_ALLOCATED_EXCLUDED) == 0)
			e->kind = IPPOOL_ALLOC_EXCLUDED;
		else if (strcmp(val, IPPOOL_ALLOCATED_RESERVED) == 0)
			e->kind = IPPOOL_ALLOC_RESERVED;
		else
			e->mac_ok = mac_parse(val, e->mac) == 0;
		snprintf(e->raw, sizeof(e->raw), "%s", val);
		if (e->mac_ok)
			mac_format(e->mac, e->raw);
		(*n)++;
	}
	qsort(v, *n, sizeof(*v), cmp6); /* addr first */
	*ret = v;
	return 0;
}

static const struct st6 *
st6_find(const struct st6 *v, size_t n, const struct in6_addr *a)
{
	return n ? bsearch(a, v, n, sizeof(*v), cmp6) : NULL;
}

/* --- VMNetCfg statuses in the cache -------------------------------------------------------- */

struct holder6 {
	const char *network;
	struct in6_addr addr;	/* zero: any bound address */
	const uint8_t *mac;	/* only this MAC (NULL: any) */
	const uint8_t *not_mac; /* any MAC but this one (NULL: none excepted) */
	char *key;		/* out: the VMNetCfg */
	size_t len;
	struct in6_addr found;
	char found_mac[MAC_STRLEN];
};

static int
holder6_visit(void *ctx, const char *key, const struct vmnetcfg *cfg)
{
	struct holder6 *h = ctx;
	uint8_t mac[MAC_LEN];

	for (size_t i = 0; cfg && i < cfg->status.n_nics; i++) {
		const struct vmnetcfg_nic_status *st = &cfg->status.nics[i];

		if (ipv6_is_zero(&st->allocated_ipv6) ||
		    (!ipv6_is_zero(&h->addr) && !ipv6_equal(&st->allocated_ipv6, &h->addr)) ||
		    strcmp(st->network_name, h->network) != 0 || mac_parse(st->mac, mac) < 0 ||
		    (h->mac && memcmp(mac, h->mac, MAC_LEN) != 0) ||
		    (h->not_mac && memcmp(mac, h->not_mac, MAC_LEN) == 0))
			continue;
		snprintf(h->key, h->len, "%s", key);
		h->found = st->allocated_ipv6;
		mac_format(mac, h->found_mac);
		return 1;
	}
	return 0;
}

/* The VMNetCfg (key, "" when none) whose status binds an IPv6 address as h asks. */
static void
holder6_find(struct admit_ctx *c, struct holder6 *h)
{
	h->key[0] = '\0';
	if (c->view->each_cfg_of_network)
		c->view->each_cfg_of_network(c->view->userdata, h->network, holder6_visit, h);
}

static void
bound_to6(struct admit_ctx *c, const char *network, const struct st6 *e, char *out, size_t len)
{
	char key[KIND_REF_MAX];
	struct holder6 h = {.network = network, .addr = e->addr, .key = key, .len = sizeof(key)};

	h.mac = e->mac;
	if (e->mac_ok)
		holder6_find(c, &h);
	if (e->mac_ok && key[0])
		snprintf(out, len, "mac %s (VirtualMachineNetworkConfig %s)", e->raw, key);
	else
		snprintf(out, len, "mac %s", e->raw);
}

/* --- IPPool: mutate ------------------------------------------------------------------------ */

static int
patch_add6(json_t *ops, const char *path, json_t *value)
{
	json_t *op = json_pack("{s:s, s:s, s:o}", "op", "add", "path", path, "value", value);

	return op && json_array_append_new(ops, op) == 0 ? 0 : -ENOMEM;
}

int
admit_ippool6_mutate(struct admit_ctx *c, const json_t *obj, json_t *ops)
{
	struct v6info vi;
	struct in6_addr server, start, end;
	char s[IPV6_STRLEN], e[IPV6_STRLEN];
	ip6_u128 a, last;
	int r = v6_load(obj, &vi);

	if (r <= 0) {
		v6_clear(&vi);
		return r == -ENOMEM ? admit_nomem(c) : 0;
	}
	last = ipv6_to_u128(&vi.last);
	for (a = ipv6_to_u128(&vi.net) + 1; !vi.has_server && a != 0 && a <= last; a++) {
		ipv6_from_u128(a, &server);
		if (!v6_excluded(&vi, &server))
			break;
	}
	if (!vi.has_server && (a == 0 || a > last)) {
		v6_clear(&vi);
		return admit_refuse(c, 403, "fail to assign ipv6 address for dhcp server");
	}
	v6_first(&vi, &start);
	start = vi.has_start ? vi.start : start;
	end = vi.has_end ? vi.end : vi.last;
	if (ipv6_cmp(&start, &end) > 0 || (!vi.has_start && !v6_inside(&vi, &start))) {
		v6_clear(&vi);
		return admit_refuse(c, 403, "invalid ipv6 pool range");
	}
	ipv6_format(&start, s);
	ipv6_format(&end, e);
	r = 0;
	if (!json_is_object(json_object_get(vi.v6, "pool")))
		r = patch_add6(
		    ops, "/spec/ipv6Config/pool", json_pack("{s:s, s:s}", "start", s, "end", e));
	else if (!vi.has_start)
		r = patch_add6(ops, "/spec/ipv6Config/pool/start", json_string(s));
	if (r == 0 && json_is_object(json_object_get(vi.v6, "pool")) && !vi.has_end)
		r = patch_add6(ops, "/spec/ipv6Config/pool/end", json_string(e));
	if (r == 0 && !vi.has_server) {
		ipv6_format(&server, s);
		r = patch_add6(ops, "/spec/ipv6Config/serverIP", json_string(s));
	}
	v6_clear(&vi);
	return r < 0 ? admit_nomem(c) : 0;
}

/* --- IPPool: validate ---------------------------------------------------------------------- */

int
admit_ippool6_immutable(struct admit_ctx *c, const json_t *obj, const json_t *old)
{
	static const char *const keys[] = {"cidr", "serverIP"};
	const json_t *v6 = json_object_get(json_object_get(obj, "spec"), "ipv6Config");
	const json_t *ov6 = json_object_get(json_object_get(old, "spec"), "ipv6Config");

	if (!json_is_object(v6) || !json_is_object(ov6))
		return 0;
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		const json_t *a = json_object_get(v6, keys[i]), *b = json_object_get(ov6, keys[i]);

		if (a && b && !json_is_null(a) && !json_is_null(b) && !json_equal(a, b))
			return admit_refuse(c, 403, "%s is immutable", keys[i]);
	}
	return 0;
}

static int
check_in_subnet6(
    struct admit_ctx *c, const struct v6info *vi, const char *label, const struct in6_addr *a)
{
	char s[IPV6_STRLEN], cidr[IPV6_STRLEN + 4];

	if (v6_inside(vi, a))
		return 0;
	ipv6_format(a, s);
	v6_cidr_text(vi, cidr);
	return admit_refuse(c, 403, "%s ipv6 %s is not within subnet %s", label, s, cidr);
}

static int
check_server6(struct admit_ctx *c, const struct v6info *vi, const struct st6 *st, size_t n_st)
{
	const struct st6 *e = st6_find(st, n_st, &vi->server);
	char s[IPV6_STRLEN], cidr[IPV6_STRLEN + 4];

	if (check_in_subnet6(c, vi, "server", &vi->server) < 0)
		return -1;
	ipv6_format(&vi->server, s);
	v6_cidr_text(vi, cidr);
	/* RFC 4291 §2.6.1 */
	if (vi->prefix <= 126 && ipv6_equal(&vi->server, &vi->net))
		return admit_refuse(
		    c, 403, "server ipv6 %s is the subnet-router anycast address of %s", s, cidr);
	if (ipv6_is_multicast(&vi->server))
		return admit_refuse(c, 403, "server ipv6 %s is a multicast address", s);
	if (v6_excluded(vi, &vi->server))
		return admit_refuse(c, 403, "server ipv6 %s is in pool.exclude", s);
	if (e && e->kind != IPPOOL_ALLOC_RESERVED)
		return admit_refuse(c, 403, "server ipv6 %s is already occupied", s);
	return 0;
}

static bool
v6_in_range(const struct v6info *vi, const struct in6_addr *a)
{
	return ipv6_cmp(a, &vi->start) >= 0 && ipv6_cmp(a, &vi->end) <= 0 && !v6_excluded(vi, a);
}

/* UPDATE: a range/exclude change must not leave out an IPv6 address bound to a MAC. */
static int
check_strand6(struct admit_ctx *c, const char *network, const struct v6info *vi,
    const struct v6info *old, const struct st6 *st, size_t n_st)
{
	char s[IPV6_STRLEN], x[IPV6_STRLEN], y[IPV6_STRLEN], who[ADMIT_REASON_MAX / 2];

	for (size_t i = 0; i < n_st; i++) {
		const struct st6 *e = &st[i];

		if (e->kind != IPPOOL_ALLOC_MAC || v6_in_range(vi, &e->addr) ||
		    !v6_in_range(old, &e->addr))
			continue;
		ipv6_format(&e->addr, s);
		bound_to6(c, network, e, who, sizeof(who));
		if (v6_excluded(vi, &e->addr))
			return admit_refuse(c, 403,
			    "ipv6 address %s bound to %s would be stranded: pool.exclude covers it",
			    s, who);
		ipv6_format(&vi->start, x);
		ipv6_format(&vi->end, y);
		return admit_refuse(c, 403,
		    "ipv6 address %s bound to %s would be stranded: outside the new pool range "
		    "%s-%s",
		    s, who, x, y);
	}
	return 0;
}

/* UPDATE: ipv6Config removed while an IPv6 address is bound (the status, or a VMNetCfg). */
static int
check_removed6(struct admit_ctx *c, const char *network, const struct st6 *st, size_t n_st)
{
	char s[IPV6_STRLEN], who[ADMIT_REASON_MAX / 2], key[KIND_REF_MAX];
	struct holder6 h = {.network = network, .key = key, .len = sizeof(key)};

	for (size_t i = 0; i < n_st; i++) {
		if (st[i].kind != IPPOOL_ALLOC_MAC)
			continue;
		ipv6_format(&st[i].addr, s);
		bound_to6(c, network, &st[i], who, sizeof(who));
		return admit_refuse(c, 403,
		    "ipv6Config cannot be removed while ipv6 address %s is bound to %s", s, who);
	}
	holder6_find(c, &h);
	if (!key[0])
		return 0;
	ipv6_format(&h.found, s);
	return admit_refuse(c, 403,
	    "ipv6Config cannot be removed while ipv6 address %s is bound to mac %s "
	    "(VirtualMachineNetworkConfig %s)",
	    s, h.found_mac, key);
}

static void
warn_pool6(struct admit_ctx *c, const struct v6info *vi)
{
	ip6_u128 n = 0, start = ipv6_to_u128(&vi->start), end = ipv6_to_u128(&vi->end);
	const json_t *vl = json_object_get(vi->v6, "validLifetime");
	const json_t *ra = json_object_get(vi->v6, "routerAdvertisement");
	const json_t *rl = json_object_get(ra, "routerLifetime");
	char x[IPV6_STRLEN], y[IPV6_STRLEN];

	if (start <= end) /* no overflow: the prefix is at least /8 */
		n = end - start + 1;
	for (size_t i = 0; i < vi->n_excl; i++) /* sorted: each address once */
		n -= (i == 0 || !ipv6_equal(&vi->excl[i], &vi->excl[i - 1])) &&
		     ipv6_cmp(&vi->excl[i], &vi->start) >= 0 &&
		     ipv6_cmp(&vi->excl[i], &vi->end) <= 0;
	if (n > 0 && v6_in_range(vi, &vi->server))
		n--;
	ipv6_format(&vi->start, x);
	ipv6_format(&vi->end, y);
	if (n == 0)
		admit_warn(c,
		    "ipv6 pool range %s-%s holds no allocatable address (serverIP and pool.exclude "
		    "take all of it)",
		    x, y);
	ipv6_format(&vi->net, x);
	if (vi->cidr && (strncmp(vi->cidr, x, strlen(x)) != 0 || vi->cidr[strlen(x)] != '/'))
		admit_warn(c,
		    "ipv6Config.cidr %s is not the network's own form: the network is %s/%u",
		    vi->cidr, x, vi->prefix);
	if (json_is_integer(vl) && json_integer_value(vl) > 0 && json_integer_value(vl) < 60)
		admit_warn(
		    c, "validLifetime %lld s is under 60 s", (long long)json_integer_value(vl));
	if (json_is_true(json_object_get(ra, "enabled")) && json_is_integer(rl) &&
	    json_integer_value(rl) > 0)
		admit_warn(c,
		    "routerAdvertisement.routerLifetime %lld s makes the agent the VMs' default "
		    "router: keep 0 unless its node routes the network",
		    (long long)json_integer_value(rl));
}

/*
 * Long: the checks in the order their messages should come, each needing the loaded spec.
 * 0 (allowed; may warn) or -1 (refused).
 */
int
admit_ippool6_validate(
    struct admit_ctx *c, const json_t *obj, const json_t *old, const char *network)
{
	struct v6info vi, ovi;
	struct st6 *st = NULL;
	size_t n_st = 0;
	int r = v6_load(obj, &vi), ro = old ? v6_load(old, &ovi) : 0;

	if (!old)
		memset(&ovi, 0, sizeof(ovi));
	if (r == -ENOMEM || ro == -ENOMEM || st6_load(obj, &st, &n_st) < 0) {
		r = admit_nomem(c);
		goto out;
	}
	if (r == 0) { /* no ipv6Config: only its removal is checked */
		r = old && ro != 0 && json_is_object(ovi.v6) ? check_removed6(c, network, st, n_st)
							     : 0;
		goto out;
	}
	if (r < 0 || !vi.has_server || !vi.has_start || !vi.has_end) {
		r = 0; /* the codec refuses it, with the field's path */
		goto out;
	}
	if (check_in_subnet6(c, &vi, "start", &vi.start) < 0 ||
	    check_in_subnet6(c, &vi, "end", &vi.end) < 0 || check_server6(c, &vi, st, n_st) < 0) {
		r = -1;
		goto out;
	}
	r = 0;
	if (ro == 1 && ovi.has_start && ovi.has_end)
		r = check_strand6(c, network, &vi, &ovi, st, n_st);
	if (r == 0)
		warn_pool6(c, &vi);
out:
	free(st);
	v6_clear(&vi);
	v6_clear(&ovi);
	return r < 0 ? -1 : 0;
}

/* --- VMNetCfg: a NIC's ipv6Address --------------------------------------------------------- */

int
admit_seen6_add(struct admit_seen6 *s, const char *network, const struct in6_addr *a)
{
	for (size_t i = 0; i < s->n; i++)
		if (ipv6_equal(&s->items[i].addr, a) && strcmp(s->items[i].network, network) == 0)
			return 1;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		void *p = realloc(s->items, cap * sizeof(*s->items));

		if (!p)
			return -ENOMEM;
		s->items = p;
		s->cap = cap;
	}
	snprintf(s->items[s->n].network, sizeof(s->items[s->n].network), "%s", network);
	s->items[s->n++].addr = *a;
	return 0;
}

void
admit_seen6_clear(struct admit_seen6 *s)
{
	free(s->items);
	memset(s, 0, sizeof(*s));
}

/* The pool's status and the VMNetCfgs of the cache against the NIC's mac. */
static int
check_allocated6(struct admit_ctx *c, const char *network, const struct ippool *pool,
    const struct in6_addr *a, const char *mac, char *reason, size_t len)
{
	const struct ippool_alloc6 *al = ippool_status_find6(&pool->status, a);
	char s[IPV6_STRLEN], m[MAC_STRLEN], key[KIND_REF_MAX];
	struct holder6 h = {.network = network, .addr = *a, .key = key, .len = sizeof(key)};
	uint8_t want[MAC_LEN];
	bool known = mac && mac_parse(mac, want) == 0;

	ipv6_format(a, s);
	if (al && al->kind != IPPOOL_ALLOC_MAC) {
		snprintf(reason, len, "ipv6 address %s is not allocatable", s);
		return -1;
	}
	if (!known)
		return 0;
	if (al && memcmp(want, al->mac, MAC_LEN) != 0) {
		mac_format(al->mac, m);
		h.mac = al->mac;
	} else if (!al) {
		h.not_mac = want; /* the status may lag behind a VMNetCfg's */
	} else {
		return 0;
	}
	holder6_find(c, &h);
	if (!al && !key[0])
		return 0;
	if (key[0])
		snprintf(reason, len,
		    "ipv6 address %s is already allocated to mac %s (VirtualMachineNetworkConfig "
		    "%s)",
		    s, al ? m : h.found_mac, key);
	else
		snprintf(reason, len, "ipv6 address %s is already allocated to mac %s", s, m);
	return -1;
}

/* Long: one check after the other, as admit_check_desired_ip. */
int
admit_check_desired_ip6(struct admit_ctx *c, const char *ip, const char *mac, const char *network,
    const char *pool_key, const struct ippool *pool, struct admit_seen6 *seen, char *reason,
    size_t len)
{
	const struct ippool_ipv6_config *v6 = &pool->spec.ipv6;
	struct in6_addr a, net;
	char s[IPV6_STRLEN], x[IPV6_STRLEN], y[IPV6_STRLEN], q[96];
	bool excluded = false;
	int r;

	if (ipv6_parse(ip, &a) < 0) {
		admit_go_quote(ip, q, sizeof(q));
		snprintf(reason, len, "ipv6 address %s is not an IPv6 address", q);
		return -1;
	}
	ipv6_format(&a, s);
	if (!pool->spec.has_ipv6) {
		snprintf(reason, len,
		    "IPPool %s has no ipv6Config: ipv6 address %s cannot be served", pool_key, s);
		return -1;
	}
	if ((r = admit_seen6_add(seen, network, &a)) < 0)
		return r;
	if (r == 1) {
		snprintf(reason, len, "duplicate desired ipv6 %s on network %s", s, network);
		return -1;
	}
	ipv6_prefix_network(&v6->cidr_addr, v6->prefix, &net);
	if (!ipv6_in_prefix(&a, &net, v6->prefix)) {
		ipv6_format(&net, x);
		snprintf(
		    reason, len, "ipv6 address %s is not within subnet %s/%u", s, x, v6->prefix);
		return -1;
	}
	if (ipv6_cmp(&a, &v6->start) < 0 || ipv6_cmp(&a, &v6->end) > 0) {
		ipv6_format(&v6->start, x);
		ipv6_format(&v6->end, y);
		snprintf(reason, len, "ipv6 address %s is not within pool range %s-%s", s, x, y);
		return -1;
	}
	for (size_t i = 0; i < v6->n_exclude && !excluded; i++)
		excluded = ipv6_equal(&a, &v6->exclude[i]);
	if (excluded || ipv6_equal(&a, &v6->server_ip) ||
	    (v6->prefix <= 126 && ipv6_equal(&a, &net))) {
		snprintf(reason, len, "ipv6 address %s is not allocatable", s);
		return -1;
	}
	if (check_allocated6(c, network, pool, &a, mac, reason, len) < 0)
		return -1;
	if (pool->spec.paused)
		admit_warn(c, "IPPool %s is paused: ipv6 address %s is not served until it resumes",
		    pool_key, s);
	return 0;
}
