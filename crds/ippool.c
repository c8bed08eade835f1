/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/ippool.c - IPPool codec: field tables (the C mirror of crds/ippools.yaml), decode
 * hooks, cross-field checks, encoders.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crds/crds-internal.h"
#include "crds/ippool.h"
#include "lib/util.h"

/* --- spec (ctx: struct ippool_spec; routes[]: struct ippool_route) -------------------- */

#define SPEC(member) .offset = offsetof(struct ippool_spec, member)
#define ROUTE(member) .offset = offsetof(struct ippool_route, member)
/* An array of the spec: items at member, count at n_member. */
#define SPEC_ARRAY(member)                                                                         \
	.store = CRD_S_ARRAY, SPEC(member), .aux = offsetof(struct ippool_spec, n_##member)

/* A route's destination: a CIDR whose host bits are zero. */
static int
dec_route_dest(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_route *rt = ctx;

	if (ipv4_cidr_parse(json_string_value(v), &rt->destination, &rt->prefix) < 0)
		return crd_error_set(
		    err, path, "\"%.40s\" is not an IPv4 CIDR", json_string_value(v));
	if (rt->destination & ~ipv4_prefix_mask(rt->prefix))
		return crd_error_set(
		    err, path, "\"%.40s\" has host bits set", json_string_value(v));
	return 0;
}

static const struct crd_field route_children[] = {
    {.key = "destination",
	.type = CRD_STRING,
	.required = true,
	.pattern = CRD_PATTERN_ROUTE_CIDR,
	.decode = dec_route_dest,
	.store = CRD_S_CIDR,
	ROUTE(destination),
	.aux = offsetof(struct ippool_route, prefix),
	.always = true},
    {.key = "gateway",
	.type = CRD_STRING,
	.required = true,
	.format = "ipv4",
	.store = CRD_S_IPV4,
	ROUTE(gateway),
	.always = true},
    {.key = NULL},
};

static const struct crd_field route_item = {
    .type = CRD_OBJECT,
    .strict = true,
    .children = route_children,
    .store = CRD_S_STRUCT,
    .size = sizeof(struct ippool_route),
};

/*
 * Where upstream's schema (chart/crds/network.harvesterhci.io_ippools.yaml) leaves a value
 * open, ours does too and the check is the codec's (.codec): the API server stores what
 * upstream's stores, and the controller reports what it cannot serve (InvalidSpec).
 */
static const struct crd_field ipv4_check = {.type = CRD_STRING, .format = "ipv4"};
static const struct crd_field domain_check = {
    .type = CRD_STRING, .pattern = CRD_PATTERN_DOMAIN, .max_length = 253};
static const struct crd_field ntp_check = {
    .type = CRD_STRING, .pattern = CRD_PATTERN_NTP, .max_length = IPPOOL_NTP_LEN_MAX};

/* pool.exclude[]: format ipv4 in both schemas. */
static const struct crd_field ipv4_item = {
    .type = CRD_STRING, .format = "ipv4", .store = CRD_S_IPV4};
/* dns[]: upstream's format sits on the array (where the API server ignores it). */
static const struct crd_field dns_item = {
    .type = CRD_STRING, .codec = &ipv4_check, .store = CRD_S_IPV4};
static const struct crd_field domain_item = {
    .type = CRD_STRING, .codec = &domain_check, .store = CRD_S_STR};
static const struct crd_field ntp_item = {
    .type = CRD_STRING, .codec = &ntp_check, .store = CRD_S_STR};
static const struct crd_field exclude_check = {.type = CRD_ARRAY, .max_items = IPPOOL_EXCLUDE_MAX};
static const struct crd_field domain_search_check = {
    .type = CRD_ARRAY, .max_items = IPPOOL_DOMAIN_SEARCH_MAX};

/* The pool's CIDR: any prefix 0..32 (upstream's schema has no pattern; net.ParseCIDR). */
static int
dec_cidr(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_spec *s = ctx;

	if (ipv4_cidr_parse(json_string_value(v), &s->cidr_addr, &s->prefix) < 0)
		return crd_error_set(err, path, "\"%.40s\" is not an IPv4 CIDR (a.b.c.d/0..32)",
		    json_string_value(v));
	return 0;
}

static const struct crd_field pool_children[] = {
    {.key = "start",
	.type = CRD_STRING,
	.required = true,
	.format = "ipv4",
	.store = CRD_S_IPV4,
	SPEC(start),
	.always = true},
    {.key = "end",
	.type = CRD_STRING,
	.required = true,
	.format = "ipv4",
	.store = CRD_S_IPV4,
	SPEC(end),
	.always = true},
    {.key = "exclude",
	.type = CRD_ARRAY,
	.items = &ipv4_item,
	.codec = &exclude_check,
	SPEC_ARRAY(exclude)},
    {.key = NULL},
};

static const struct crd_field ipv4_config_children[] = {
    {.key = "serverIP",
	.type = CRD_STRING,
	.required = true,
	.immutable = true,
	.format = "ipv4",
	.store = CRD_S_IPV4,
	SPEC(server_ip),
	.always = true},
    {.key = "cidr",
	.type = CRD_STRING,
	.required = true,
	.immutable = true,
	.decode = dec_cidr,
	.store = CRD_S_CIDR,
	SPEC(cidr_addr),
	.aux = offsetof(struct ippool_spec, prefix),
	.always = true},
    {.key = "pool",
	.type = CRD_OBJECT,
	.required = true,
	.strict = true,
	.children = pool_children,
	.store = CRD_S_STRUCT},
    {.key = "router",
	.type = CRD_STRING,
	.immutable = true,
	.format = "ipv4",
	.store = CRD_S_IPV4,
	SPEC(router)},
    {.key = "dns",
	.type = CRD_ARRAY,
	.items = &dns_item,
	.max_items = IPPOOL_DNS_MAX,
	SPEC_ARRAY(dns),
	.size = IPPOOL_DNS_MAX},
    {.key = "domainName",
	.type = CRD_STRING,
	.codec = &domain_check,
	.store = CRD_S_STR,
	SPEC(domain_name)},
    {.key = "domainSearch",
	.type = CRD_ARRAY,
	.items = &domain_item,
	.codec = &domain_search_check,
	SPEC_ARRAY(domain_search)},
    {.key = "ntp",
	.type = CRD_ARRAY,
	.items = &ntp_item,
	.max_items = IPPOOL_NTP_MAX,
	SPEC_ARRAY(ntp),
	.size = IPPOOL_NTP_MAX},
    /* As written (any integer, as upstream's schema); ippool_lease_time() serves it. */
    {.key = "leaseTime",
	.type = CRD_INTEGER,
	.store = CRD_S_LL,
	SPEC(lease_time_raw),
	.present = CRD_PRESENT(struct ippool_spec, lease_time_set)},
    {.key = "mtu",
	.type = CRD_INTEGER,
	.has_minimum = true,
	.minimum = IPPOOL_MTU_MIN,
	.has_maximum = true,
	.maximum = IPPOOL_MTU_MAX,
	.store = CRD_S_U32,
	SPEC(mtu)},
    {.key = "routes",
	.type = CRD_ARRAY,
	.items = &route_item,
	.max_items = IPPOOL_ROUTES_MAX,
	SPEC_ARRAY(routes)},
    /* Additive: crds/ippool-boot.c. */
    {.key = "networkBoot",
	.type = CRD_OBJECT,
	.strict = true,
	.children = ippool_network_boot_children,
	.store = CRD_S_STRUCT,
	SPEC(boot),
	.present = CRD_PRESENT(struct ippool_spec, has_boot)},
    {.key = NULL},
};

static const char *const foreign_policy_names[] = {"Warn", "StandDown", NULL};

static const struct crd_field foreign_servers_children[] = {
    {.key = "policy",
	.type = CRD_STRING,
	.enum_values = foreign_policy_names,
	.store = CRD_S_ENUM,
	.names = foreign_policy_names,
	.n_names = 2,
	.offset = offsetof(struct ippool_foreign_servers, policy)},
    {.key = "probeInterval",
	.type = CRD_INTEGER,
	.has_minimum = true,
	.minimum = IPPOOL_PROBE_INTERVAL_MIN,
	.has_maximum = true,
	.maximum = IPPOOL_PROBE_INTERVAL_MAX,
	.store = CRD_S_U32,
	.offset = offsetof(struct ippool_foreign_servers, probe_interval)},
    {.key = NULL},
};

static const struct crd_field spec_children[] = {
    {.key = "networkName",
	.type = CRD_STRING,
	.required = true,
	.immutable = true,
	.max_length = CRD_NETWORK_NAME_INPUT_MAX,
	.store = CRD_S_NETNAME,
	SPEC(network_name),
	.always = true},
    {.key = "paused", .type = CRD_BOOLEAN, .store = CRD_S_BOOL, SPEC(paused)},
    /* Optional in upstream's schema (its webhook refuses a pool without it): the codec's
     * check (spec_check). */
    {.key = "ipv4Config",
	.type = CRD_OBJECT,
	.strict = true,
	.children = ipv4_config_children,
	.store = CRD_S_STRUCT},
    /* Additive (upstream has no IPv6): crds/ippool-v6.c. */
    {.key = "ipv6Config",
	.type = CRD_OBJECT,
	.strict = true,
	.children = ippool_ipv6_config_children,
	.store = CRD_S_STRUCT,
	SPEC(ipv6),
	.present = CRD_PRESENT(struct ippool_spec, has_ipv6)},
    /* Additive: the agent's foreign DHCP server guard (agent/guard.c). */
    {.key = "foreignServers",
	.type = CRD_OBJECT,
	.strict = true,
	.children = foreign_servers_children,
	.store = CRD_S_STRUCT,
	SPEC(foreign_servers),
	.present = CRD_PRESENT(struct ippool_spec, has_foreign_servers)},
    {.key = NULL},
};

/* --- decode hooks: status (ctx: struct ippool_status) -------------------------------- */

static int
cmp_alloc(const void *x, const void *y)
{
	const struct ippool_alloc *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

int
ippool_alloc_value_parse(const char *val, struct ippool_alloc *a)
{
	if (strcmp(val, IPPOOL_ALLOCATED_EXCLUDED) == 0)
		a->kind = IPPOOL_ALLOC_EXCLUDED;
	else if (strcmp(val, IPPOOL_ALLOCATED_RESERVED) == 0)
		a->kind = IPPOOL_ALLOC_RESERVED;
	else if (mac_parse(val, a->mac) == 0)
		a->kind = IPPOOL_ALLOC_MAC;
	else
		return -EINVAL;
	return 0;
}

static int
dec_allocated(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_status *st = ctx;
	size_t n = json_object_size(v), i = 0;
	const char *k;
	json_t *x;
	char sub[128];

	if (n == 0)
		return 0;
	st->allocated = calloc(n, sizeof(*st->allocated));
	if (!st->allocated)
		return -ENOMEM;
	json_object_foreach((json_t *)v, k, x)
	{
		struct ippool_alloc *a = &st->allocated[i];
		const char *val = json_string_value(x);

		snprintf(sub, sizeof(sub), "%s[%.40s]", path, k);
		if (ipv4_parse(k, &a->addr) < 0)
			return crd_error_set(err, sub, "key is not an IPv4 address");
		if (ippool_alloc_value_parse(val, a) < 0)
			return crd_error_set(
			    err, sub, "\"%.40s\" is not a MAC address, EXCLUDED or RESERVED", val);
		i++;
	}
	st->n_allocated = i;
	qsort(st->allocated, st->n_allocated, sizeof(*st->allocated), cmp_alloc);
	return 0;
}

/* New reference: the allocated map, in address order; NULL when empty. */
static int
enc_allocated(const void *ctx, json_t **ret)
{
	const struct ippool_status *st = ctx;
	char ip[IPV4_STRLEN], mac[MAC_STRLEN];
	json_t *o;

	if (st->n_allocated == 0)
		return 0;
	o = json_object();
	for (size_t i = 0; o && i < st->n_allocated; i++) {
		const struct ippool_alloc *a = &st->allocated[i];
		const char *val = mac;

		ipv4_format(a->addr, ip);
		if (a->kind == IPPOOL_ALLOC_EXCLUDED)
			val = IPPOOL_ALLOCATED_EXCLUDED;
		else if (a->kind == IPPOOL_ALLOC_RESERVED)
			val = IPPOOL_ALLOCATED_RESERVED;
		else
			mac_format(a->mac, mac);
		if (json_object_set_new(o, ip, json_string(val)) < 0) {
			json_decref(o);
			o = NULL;
		}
	}
	*ret = o;
	return o ? 0 : -ENOMEM;
}

static bool
equal_allocated(const void *x, const void *y)
{
	const struct ippool_status *a = x, *b = y;

	if (a->n_allocated != b->n_allocated)
		return false;
	for (size_t i = 0; i < a->n_allocated; i++) {
		const struct ippool_alloc *p = &a->allocated[i], *q = &b->allocated[i];

		if (p->addr != q->addr || p->kind != q->kind ||
		    (p->kind == IPPOOL_ALLOC_MAC && memcmp(p->mac, q->mac, MAC_LEN) != 0))
			return false;
	}
	return true;
}

#define STATUS(member) .offset = offsetof(struct ippool_status, member)
#define POD_REF(member) .offset = offsetof(struct ippool_agent_pod_ref, member)

static const struct crd_field mac_value_item = {.type = CRD_STRING};

static const struct crd_field ipv4_status_children[] = {
    {.key = "allocated",
	.type = CRD_MAP,
	.items = &mac_value_item,
	.decode = dec_allocated,
	.encode = enc_allocated,
	.equal = equal_allocated},
    {.key = "used",
	.type = CRD_INTEGER,
	.required = true,
	.store = CRD_S_LL,
	STATUS(used),
	.always = true},
    {.key = "available",
	.type = CRD_INTEGER,
	.required = true,
	.store = CRD_S_LL,
	STATUS(available),
	.always = true},
    {.key = NULL},
};

static const struct crd_field pod_ref_children[] = {
    {.key = "namespace", .type = CRD_STRING, .store = CRD_S_STR, POD_REF(namespace)},
    {.key = "name", .type = CRD_STRING, .store = CRD_S_STR, POD_REF(name)},
    {.key = "image", .type = CRD_STRING, .store = CRD_S_STR, POD_REF(image)},
    {.key = "uid", .type = CRD_STRING, .store = CRD_S_STR, POD_REF(uid)},
    {.key = NULL},
};

static int
dec_conditions(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_status *st = ctx;

	return crd_conditions_decode(v, path, &st->conditions, err);
}

static const struct crd_field status_children[] = {
    {.key = "ipv4",
	.type = CRD_OBJECT,
	.children = ipv4_status_children,
	.store = CRD_S_STRUCT,
	.present = CRD_PRESENT(struct ippool_status, has_ipv4)},
    {.key = "ipv6",
	.type = CRD_OBJECT,
	.children = ippool_ipv6_status_children,
	.store = CRD_S_STRUCT,
	.present = CRD_PRESENT(struct ippool_status, has_ipv6_status)},
    {.key = "agentPodRef",
	.type = CRD_OBJECT,
	.children = pod_ref_children,
	.store = CRD_S_STRUCT,
	STATUS(agent_pod_ref),
	.present = CRD_PRESENT(struct ippool_status, has_agent_pod_ref)},
    {.key = "lastUpdate",
	.type = CRD_STRING,
	.format = "date-time",
	.store = CRD_S_TIME,
	STATUS(last_update),
	.unequal_ok = true},
    {.key = "conditions",
	.type = CRD_ARRAY,
	.items = &crd_condition_item,
	.decode = dec_conditions,
	.store = CRD_S_ARRAY,
	STATUS(conditions.items),
	.aux = offsetof(struct ippool_status, conditions.n),
	.keyed = true},
    {.key = NULL},
};

/* --- root (ctx: struct ippool) ------------------------------------------------------- */

static int
dec_metadata(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return crd_meta_decode(v, &((struct ippool *)ctx)->meta, err);
}

static int spec_check(const json_t *v, const struct ippool_spec *s, struct crd_error *err);

static int
dec_spec(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_spec *s = &((struct ippool *)ctx)->spec;
	int r;

	r = crd_decode_object(v, path, spec_children, true, s, err);
	return r < 0 ? r : spec_check(v, s, err);
}

const struct crd_field ippool_fields[] = {
    {.key = "apiVersion", .type = CRD_STRING, .store = CRD_S_CONST, .value = CRD_API_VERSION},
    {.key = "kind", .type = CRD_STRING, .store = CRD_S_CONST, .value = IPPOOL_KIND},
    {.key = "metadata",
	.type = CRD_OBJECT,
	.decode = dec_metadata,
	.encode = crd_meta_encode_field,
	.offset = offsetof(struct ippool, meta)},
    {.key = "spec",
	.type = CRD_OBJECT,
	.strict = true,
	.children = spec_children,
	.decode = dec_spec,
	.store = CRD_S_STRUCT,
	.offset = offsetof(struct ippool, spec)},
    {.key = "status",
	.type = CRD_OBJECT,
	.children = status_children,
	.store = CRD_S_STRUCT,
	.offset = offsetof(struct ippool, status)},
    {.key = NULL},
};

/* --- cross-field checks --------------------------------------------------------------- */

static int
spec_check(const json_t *v, const struct ippool_spec *s, struct crd_error *err)
{
	uint32_t mask = ipv4_prefix_mask(s->prefix);
	uint32_t net = s->cidr_addr & mask, bcast = net | ~mask;
	char a[IPV4_STRLEN], b[IPV4_STRLEN], cidr[IPV4_STRLEN + 3];
	char path[64];

	if (!json_is_object(json_object_get(v, "ipv4Config")))
		return crd_error_set(err, "spec.ipv4Config", "required");
	ipv4_format(net, a);
	snprintf(cidr, sizeof(cidr), "%s/%u", a, s->prefix);
#define OUTSIDE(addr) (((addr)&mask) != net)
	ipv4_format(s->server_ip, a);
	if (OUTSIDE(s->server_ip))
		return crd_error_set(err, "spec.ipv4Config.serverIP", "%s is outside %s", a, cidr);
	if (s->prefix <= 30 && (s->server_ip == net || s->server_ip == bcast))
		return crd_error_set(err, "spec.ipv4Config.serverIP",
		    "%s is the network or broadcast address of %s", a, cidr);
	ipv4_format(s->router, a);
	if (s->router && OUTSIDE(s->router))
		return crd_error_set(err, "spec.ipv4Config.router", "%s is outside %s", a, cidr);
	ipv4_format(s->start, a);
	if (OUTSIDE(s->start))
		return crd_error_set(
		    err, "spec.ipv4Config.pool.start", "%s is outside %s", a, cidr);
	ipv4_format(s->end, b);
	if (OUTSIDE(s->end))
		return crd_error_set(err, "spec.ipv4Config.pool.end", "%s is outside %s", b, cidr);
	if (s->start > s->end)
		return crd_error_set(
		    err, "spec.ipv4Config.pool.end", "%s is before pool.start %s", b, a);
	for (size_t i = 0; i < s->n_exclude; i++)
		if (OUTSIDE(s->exclude[i])) {
			ipv4_format(s->exclude[i], a);
			snprintf(path, sizeof(path), "spec.ipv4Config.pool.exclude[%zu]", i);
			return crd_error_set(err, path, "%s is outside %s", a, cidr);
		}
#undef OUTSIDE
	return ippool_spec_check6(s, err);
}

/*
 * The lease time served for leaseTime as written, as upstream serves it (pkg/dhcp/dhcp.go:
 * a value above 0 as is, else one year); above the 32-bit option 51, infinite.
 */
uint32_t
ippool_lease_time(bool set, long long raw)
{
	if (!set || raw <= 0)
		return IPPOOL_LEASE_TIME_DEFAULT;
	return raw > (long long)UINT32_MAX ? UINT32_MAX : (uint32_t)raw;
}

static void
spec_defaults(struct ippool_spec *s)
{
	s->lease_time = ippool_lease_time(s->lease_time_set, s->lease_time_raw);
	if (s->foreign_servers.probe_interval == 0)
		s->foreign_servers.probe_interval = IPPOOL_PROBE_INTERVAL_DEFAULT;
	ippool_spec_defaults6(s);
}

/* --- public decode -------------------------------------------------------------------- */

int
ippool_spec_decode(const json_t *spec_json, struct ippool_spec *spec, struct crd_error *err)
{
	int r;

	memset(spec, 0, sizeof(*spec));
	r = crd_decode_object(spec_json, "spec", spec_children, true, spec, err);
	if (r == 0)
		r = spec_check(spec_json, spec, err);
	if (r < 0) {
		ippool_spec_clear(spec);
		return r;
	}
	spec_defaults(spec);
	return 0;
}

int
ippool_status_decode(const json_t *status_json, struct ippool_status *status, struct crd_error *err)
{
	int r;

	memset(status, 0, sizeof(*status));
	if (!status_json || json_is_null(status_json))
		return 0;
	r = crd_decode_object(status_json, "status", status_children, false, status, err);
	if (r < 0)
		ippool_status_clear(status);
	return r;
}

int
ippool_decode(const json_t *obj, struct ippool **ret, struct crd_error *err)
{
	struct ippool *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	r = crd_decode_object(obj, "", ippool_fields, false, p, err);
	if (r == 0 && !json_is_object(json_object_get(obj, "spec")))
		r = crd_error_set(err, "spec", "required"); /* the codec's: upstream's schema
							       does not require it */
	if (r < 0) {
		ippool_free(p);
		return r;
	}
	spec_defaults(&p->spec);
	*ret = p;
	return 0;
}

/* --- encode, compare ----------------------------------------------------------------- */

json_t *
ippool_spec_encode(const struct ippool_spec *s)
{
	return crd_encode_object(spec_children, s);
}

json_t *
ippool_status_encode(const struct ippool_status *st)
{
	return crd_encode_object(status_children, st);
}

json_t *
ippool_encode(const struct ippool *p)
{
	return crd_encode_object(ippool_fields, p);
}

bool
ippool_status_equal(const struct ippool_status *a, const struct ippool_status *b)
{
	return crd_equal_object(status_children, a, b);
}

/* --- lifetime and helpers ------------------------------------------------------------ */

void
ippool_spec_clear(struct ippool_spec *s)
{
	free(s->exclude);
	free(s->domain_name);
	for (size_t i = 0; i < s->n_domain_search; i++)
		free(s->domain_search[i]);
	free(s->domain_search);
	for (size_t i = 0; i < s->n_ntp; i++)
		free(s->ntp[i]);
	free(s->routes);
	ippool_network_boot_clear(&s->boot);
	free(s->ipv6.exclude);
	for (size_t i = 0; i < s->ipv6.n_domain_search; i++)
		free(s->ipv6.domain_search[i]);
	free(s->ipv6.domain_search);
	memset(s, 0, sizeof(*s));
}

void
ippool_status_clear(struct ippool_status *st)
{
	free(st->allocated);
	free(st->allocated6);
	free(st->agent_pod_ref.namespace);
	free(st->agent_pod_ref.name);
	free(st->agent_pod_ref.image);
	free(st->agent_pod_ref.uid);
	crd_conditions_clear(&st->conditions);
	memset(st, 0, sizeof(*st));
}

struct ippool *
ippool_free(struct ippool *p)
{
	if (!p)
		return NULL;
	crd_meta_clear(&p->meta);
	ippool_spec_clear(&p->spec);
	ippool_status_clear(&p->status);
	free(p);
	return NULL;
}

int
ippool_status_set_allocated(struct ippool_status *st, const struct ippool_alloc *allocs, size_t n)
{
	struct ippool_alloc *v = NULL;

	if (n) {
		v = malloc(n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memcpy(v, allocs, n * sizeof(*v));
		qsort(v, n, sizeof(*v), cmp_alloc);
		for (size_t i = 1; i < n; i++)
			if (v[i].addr == v[i - 1].addr) {
				free(v);
				return -EEXIST;
			}
	}
	free(st->allocated);
	st->allocated = v;
	st->n_allocated = n;
	return 0;
}

const struct ippool_alloc *
ippool_status_find(const struct ippool_status *st, uint32_t addr)
{
	struct ippool_alloc key = {.addr = addr};

	if (!st->n_allocated)
		return NULL;
	return bsearch(&key, st->allocated, st->n_allocated, sizeof(key), cmp_alloc);
}
