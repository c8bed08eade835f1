/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/ippool-v6.c - IPPool's IPv6 half: spec.ipv6Config and status.ipv6, additive fields
 * harvester/vm-dhcp-controller does not have (its schema prunes them, its code ignores them).
 * Field tables (the C mirror of those parts of crds/ippools.yaml), hooks, cross-field checks,
 * defaults, and the allocated6 helpers. Unlike ipv4Config, whose schema stores whatever
 * upstream's stores, the schema of these fields is ours: it refuses what it can express
 * (formats, limits, unknown fields), and the codec checks the rest.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crds/crds-internal.h"
#include "crds/ippool.h"
#include "lib/ip6.h"
#include "lib/util.h"

/* --- spec.ipv6Config (ctx: struct ippool_ipv6_config) ----------------------------------- */

#define V6(member) .offset = offsetof(struct ippool_ipv6_config, member)
#define V6_ARRAY(member)                                                                           \
	.store = CRD_S_ARRAY, V6(member), .aux = offsetof(struct ippool_ipv6_config, n_##member)
#define RA(member) .offset = offsetof(struct ippool_ipv6_ra, member)

static const struct crd_field ipv6_item = {
    .type = CRD_STRING, .format = "ipv6", .store = CRD_S_IPV6};
static const struct crd_field domain_item = {
    .type = CRD_STRING, .pattern = CRD_PATTERN_DOMAIN, .max_length = 253, .store = CRD_S_STR};

/* The CIDR: an IPv6 address, "/", a prefix length 8..128 (host bits may be set). */
static int
dec_cidr6(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_ipv6_config *c = ctx;
	const char *s = json_string_value(v);

	if (ipv6_cidr_parse(s, &c->cidr_addr, &c->prefix) < 0)
		return crd_error_set(
		    err, path, "\"%.50s\" is not an IPv6 CIDR (address/8..128)", s);
	if (c->prefix < IPPOOL6_PREFIX_MIN)
		return crd_error_set(
		    err, path, "prefix /%u is shorter than /%d", c->prefix, IPPOOL6_PREFIX_MIN);
	return 0;
}

static const struct crd_field pool6_children[] = {
    {.key = "start",
	.type = CRD_STRING,
	.required = true,
	.format = "ipv6",
	.store = CRD_S_IPV6,
	V6(start),
	.always = true},
    {.key = "end",
	.type = CRD_STRING,
	.required = true,
	.format = "ipv6",
	.store = CRD_S_IPV6,
	V6(end),
	.always = true},
    {.key = "exclude",
	.type = CRD_ARRAY,
	.items = &ipv6_item,
	.max_items = IPPOOL_EXCLUDE_MAX,
	V6_ARRAY(exclude)},
    {.key = NULL},
};

static const struct crd_field ra_children[] = {
    {.key = "enabled", .type = CRD_BOOLEAN, .store = CRD_S_BOOL, RA(enabled)},
    {.key = "interval",
	.type = CRD_INTEGER,
	.has_minimum = true,
	.minimum = IPPOOL6_RA_INTERVAL_MIN,
	.has_maximum = true,
	.maximum = IPPOOL6_RA_INTERVAL_MAX,
	.store = CRD_S_U32,
	RA(interval)},
    {.key = "routerLifetime",
	.type = CRD_INTEGER,
	.has_minimum = true,
	.minimum = 0,
	.has_maximum = true,
	.maximum = IPPOOL6_RA_ROUTER_LIFETIME_MAX,
	.store = CRD_S_U32,
	RA(router_lifetime)},
    {.key = NULL},
};

const struct crd_field ippool_ipv6_config_children[] = {
    {.key = "cidr",
	.type = CRD_STRING,
	.required = true,
	.immutable = true,
	.max_length = 49, /* 45 (INET6_ADDRSTRLEN - 1) + "/128" */
	.decode = dec_cidr6,
	.store = CRD_S_CIDR6,
	V6(cidr_addr),
	.aux = offsetof(struct ippool_ipv6_config, prefix),
	.always = true},
    {.key = "serverIP",
	.type = CRD_STRING,
	.required = true,
	.immutable = true,
	.format = "ipv6",
	.store = CRD_S_IPV6,
	V6(server_ip),
	.always = true},
    {.key = "pool",
	.type = CRD_OBJECT,
	.required = true,
	.strict = true,
	.children = pool6_children,
	.store = CRD_S_STRUCT},
    {.key = "dns",
	.type = CRD_ARRAY,
	.items = &ipv6_item,
	.max_items = IPPOOL6_DNS_MAX,
	V6_ARRAY(dns),
	.size = IPPOOL6_DNS_MAX},
    {.key = "domainSearch",
	.type = CRD_ARRAY,
	.items = &domain_item,
	.max_items = IPPOOL_DOMAIN_SEARCH_MAX,
	V6_ARRAY(domain_search)},
    /* As written (any integer, as ipv4Config.leaseTime); ippool_spec_defaults6 serves them. */
    {.key = "preferredLifetime",
	.type = CRD_INTEGER,
	.store = CRD_S_LL,
	V6(preferred_raw),
	.present = CRD_PRESENT(struct ippool_ipv6_config, preferred_set)},
    {.key = "validLifetime",
	.type = CRD_INTEGER,
	.store = CRD_S_LL,
	V6(valid_raw),
	.present = CRD_PRESENT(struct ippool_ipv6_config, valid_set)},
    {.key = "rapidCommit", .type = CRD_BOOLEAN, .store = CRD_S_BOOL, V6(rapid_commit)},
    {.key = "routerAdvertisement",
	.type = CRD_OBJECT,
	.strict = true,
	.children = ra_children,
	.store = CRD_S_STRUCT,
	V6(ra),
	.present = CRD_PRESENT(struct ippool_ipv6_config, ra_set)},
    {.key = NULL},
};

/* --- cross-field checks and defaults ---------------------------------------------------- */

/*
 * Lifetimes served for the values as written: validLifetime as ipv4Config.leaseTime (unset or
 * <= 0: one year; from 4294967295 on: infinity, RFC 8415 §7.7); preferredLifetime the same,
 * except that unset or <= 0 is validLifetime's value (so writing validLifetime alone works).
 */
static void
lifetimes(const struct ippool_ipv6_config *c, uint32_t *preferred, uint32_t *valid)
{
	*valid = ippool_lease_time(c->valid_set, c->valid_raw);
	*preferred = c->preferred_set && c->preferred_raw > 0
			 ? ippool_lease_time(true, c->preferred_raw)
			 : *valid;
}

static int
check_inside(const struct in6_addr *a, const struct ippool_ipv6_config *c, const char *cidr,
    const char *path, struct crd_error *err)
{
	char s[IPV6_STRLEN];

	if (ipv6_in_prefix(a, &c->cidr_addr, c->prefix))
		return 0;
	ipv6_format(a, s);
	return crd_error_set(err, path, "%s is outside %s", s, cidr);
}

/* Long: one check after the other, as spec_check does for ipv4Config. */
int
ippool_spec_check6(const struct ippool_spec *s, struct crd_error *err)
{
	const struct ippool_ipv6_config *c = &s->ipv6;
	char a[IPV6_STRLEN], b[IPV6_STRLEN], cidr[IPV6_STRLEN + 4], path[64];
	struct in6_addr net;
	uint32_t preferred, valid;
	int r;

	if (!s->has_ipv6)
		return 0;
	ipv6_prefix_network(&c->cidr_addr, c->prefix, &net);
	ipv6_format(&net, a);
	snprintf(cidr, sizeof(cidr), "%s/%u", a, c->prefix);
	r = check_inside(&c->server_ip, c, cidr, "spec.ipv6Config.serverIP", err);
	if (r < 0)
		return r;
	ipv6_format(&c->server_ip, a);
	if (ipv6_is_multicast(&c->server_ip))
		return crd_error_set(
		    err, "spec.ipv6Config.serverIP", "%s is a multicast address", a);
	/* RFC 4291 §2.6.1: the address with all host bits zero is the Subnet-Router anycast
	 * address (RFC 6164 §6 leaves it unused on /127; /128 has no other). */
	if (c->prefix <= 126 && ipv6_equal(&c->server_ip, &net))
		return crd_error_set(err, "spec.ipv6Config.serverIP",
		    "%s is the Subnet-Router anycast address of %s", a, cidr);
	if ((r = check_inside(&c->start, c, cidr, "spec.ipv6Config.pool.start", err)) < 0 ||
	    (r = check_inside(&c->end, c, cidr, "spec.ipv6Config.pool.end", err)) < 0)
		return r;
	if (ipv6_cmp(&c->start, &c->end) > 0) {
		ipv6_format(&c->start, a);
		ipv6_format(&c->end, b);
		return crd_error_set(
		    err, "spec.ipv6Config.pool.end", "%s is before pool.start %s", b, a);
	}
	for (size_t i = 0; i < c->n_exclude; i++) {
		snprintf(path, sizeof(path), "spec.ipv6Config.pool.exclude[%zu]", i);
		if ((r = check_inside(&c->exclude[i], c, cidr, path, err)) < 0)
			return r;
	}
	/* RFC 8415 §21.6: a client discards an IAADDR whose preferred lifetime is greater than
	 * its valid lifetime. */
	lifetimes(c, &preferred, &valid);
	if (preferred > valid)
		return crd_error_set(err, "spec.ipv6Config.preferredLifetime",
		    "%u is above validLifetime %u", preferred, valid);
	/* RFC 4861 §6.2.1: AdvDefaultLifetime "MUST be either zero or between
	 * MaxRtrAdvInterval and 9000 seconds". */
	if (c->ra.router_lifetime != 0 &&
	    c->ra.router_lifetime < (c->ra.interval ? c->ra.interval : IPPOOL6_RA_INTERVAL_DEFAULT))
		return crd_error_set(err, "spec.ipv6Config.routerAdvertisement.routerLifetime",
		    "%u is neither 0 nor at least the interval (%u s)", c->ra.router_lifetime,
		    c->ra.interval ? c->ra.interval : IPPOOL6_RA_INTERVAL_DEFAULT);
	return 0;
}

void
ippool_spec_defaults6(struct ippool_spec *s)
{
	struct ippool_ipv6_config *c = &s->ipv6;

	if (!s->has_ipv6)
		return;
	lifetimes(c, &c->preferred_lifetime, &c->valid_lifetime);
	if (c->ra.interval == 0)
		c->ra.interval = IPPOOL6_RA_INTERVAL_DEFAULT;
}

/* --- status.ipv6 (ctx: struct ippool_status) -------------------------------------------- */

static int
cmp_alloc6(const void *x, const void *y)
{
	const struct ippool_alloc6 *a = x, *b = y;

	return ipv6_cmp(&a->addr, &b->addr);
}

/* Keys in any textual form inet_pton reads; the same address twice is refused. */
static int
dec_allocated6(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_status *st = ctx;
	size_t n = json_object_size(v), i = 0;
	struct ippool_alloc tmp;
	const char *k;
	json_t *x;
	char sub[128], a[IPV6_STRLEN];

	if (n == 0)
		return 0;
	st->allocated6 = calloc(n, sizeof(*st->allocated6));
	if (!st->allocated6)
		return -ENOMEM;
	json_object_foreach((json_t *)v, k, x)
	{
		struct ippool_alloc6 *e = &st->allocated6[i];
		const char *val = json_string_value(x);

		snprintf(sub, sizeof(sub), "%s[%.50s]", path, k);
		if (ipv6_parse(k, &e->addr) < 0)
			return crd_error_set(err, sub, "key is not an IPv6 address");
		memset(&tmp, 0, sizeof(tmp));
		if (ippool_alloc_value_parse(val, &tmp) < 0)
			return crd_error_set(
			    err, sub, "\"%.40s\" is not a MAC address, EXCLUDED or RESERVED", val);
		e->kind = tmp.kind;
		memcpy(e->mac, tmp.mac, MAC_LEN);
		i++;
	}
	st->n_allocated6 = i;
	qsort(st->allocated6, i, sizeof(*st->allocated6), cmp_alloc6);
	for (i = 1; i < st->n_allocated6; i++)
		if (ipv6_equal(&st->allocated6[i].addr, &st->allocated6[i - 1].addr)) {
			ipv6_format(&st->allocated6[i].addr, a);
			return crd_error_set(
			    err, path, "%s appears twice (in two textual forms)", a);
		}
	return 0;
}

/* New reference: the allocated map in address order, keys in RFC 5952 form; NULL when empty. */
static int
enc_allocated6(const void *ctx, json_t **ret)
{
	const struct ippool_status *st = ctx;
	char ip[IPV6_STRLEN], mac[MAC_STRLEN];
	json_t *o;

	if (st->n_allocated6 == 0)
		return 0;
	o = json_object();
	for (size_t i = 0; o && i < st->n_allocated6; i++) {
		const struct ippool_alloc6 *e = &st->allocated6[i];
		const char *val = mac;

		ipv6_format(&e->addr, ip);
		if (e->kind == IPPOOL_ALLOC_EXCLUDED)
			val = IPPOOL_ALLOCATED_EXCLUDED;
		else if (e->kind == IPPOOL_ALLOC_RESERVED)
			val = IPPOOL_ALLOCATED_RESERVED;
		else
			mac_format(e->mac, mac);
		if (json_object_set_new(o, ip, json_string(val)) < 0) {
			json_decref(o);
			o = NULL;
		}
	}
	*ret = o;
	return o ? 0 : -ENOMEM;
}

static bool
equal_allocated6(const void *x, const void *y)
{
	const struct ippool_status *a = x, *b = y;

	if (a->n_allocated6 != b->n_allocated6)
		return false;
	for (size_t i = 0; i < a->n_allocated6; i++) {
		const struct ippool_alloc6 *p = &a->allocated6[i], *q = &b->allocated6[i];

		if (!ipv6_equal(&p->addr, &q->addr) || p->kind != q->kind ||
		    (p->kind == IPPOOL_ALLOC_MAC && memcmp(p->mac, q->mac, MAC_LEN) != 0))
			return false;
	}
	return true;
}

#define STATUS(member) .offset = offsetof(struct ippool_status, member)

static const struct crd_field mac_value_item = {.type = CRD_STRING};

const struct crd_field ippool_ipv6_status_children[] = {
    {.key = "allocated",
	.type = CRD_MAP,
	.items = &mac_value_item,
	.decode = dec_allocated6,
	.encode = enc_allocated6,
	.equal = equal_allocated6},
    {.key = "used",
	.type = CRD_INTEGER,
	.required = true,
	.store = CRD_S_LL,
	STATUS(used6),
	.always = true},
    {.key = "available",
	.type = CRD_INTEGER,
	.required = true,
	.format = "int64",
	.store = CRD_S_LL,
	STATUS(available6),
	.always = true},
    {.key = NULL},
};

/* --- allocated6 helpers ----------------------------------------------------------------- */

int
ippool_status_set_allocated6(struct ippool_status *st, const struct ippool_alloc6 *allocs, size_t n)
{
	struct ippool_alloc6 *v = NULL;

	if (n) {
		v = malloc(n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memcpy(v, allocs, n * sizeof(*v));
		qsort(v, n, sizeof(*v), cmp_alloc6);
		for (size_t i = 1; i < n; i++)
			if (ipv6_equal(&v[i].addr, &v[i - 1].addr)) {
				free(v);
				return -EEXIST;
			}
	}
	free(st->allocated6);
	st->allocated6 = v;
	st->n_allocated6 = n;
	return 0;
}

const struct ippool_alloc6 *
ippool_status_find6(const struct ippool_status *st, const struct in6_addr *addr)
{
	struct ippool_alloc6 key = {.addr = *addr};

	if (!st->n_allocated6)
		return NULL;
	return bsearch(&key, st->allocated6, st->n_allocated6, sizeof(key), cmp_alloc6);
}
