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

/* --- decode hooks: spec (ctx: struct ippool_spec) ------------------------------------ */

static int
dec_network_name(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_spec *s = ctx;

	if (crd_network_name_canonicalize(json_string_value(v), s->network_name) < 0)
		return crd_error_set(err, path, "\"%.64s\" is not a \"namespace/name\" or \"name\"",
		    json_string_value(v));
	return 0;
}

static int
dec_paused(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	((struct ippool_spec *)ctx)->paused = json_is_true(v);
	return 0;
}

static int
dec_server_ip(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return ipv4_parse(json_string_value(v), &((struct ippool_spec *)ctx)->server_ip);
}

static int
dec_cidr(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_spec *s = ctx;

	if (ipv4_cidr_parse(json_string_value(v), &s->cidr_addr, &s->prefix) < 0)
		return crd_error_set(
		    err, path, "\"%.40s\" is not an IPv4 CIDR", json_string_value(v));
	return 0;
}

static int
dec_start(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return ipv4_parse(json_string_value(v), &((struct ippool_spec *)ctx)->start);
}

static int
dec_end(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return ipv4_parse(json_string_value(v), &((struct ippool_spec *)ctx)->end);
}

static int
dec_exclude(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_spec *s = ctx;
	size_t n = json_array_size(v);

	if (n == 0)
		return 0;
	s->exclude = calloc(n, sizeof(*s->exclude));
	if (!s->exclude)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		ipv4_parse(json_string_value(json_array_get(v, i)), &s->exclude[i]);
	s->n_exclude = n;
	return 0;
}

static int
dec_router(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return ipv4_parse(json_string_value(v), &((struct ippool_spec *)ctx)->router);
}

static int
dec_dns(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_spec *s = ctx;

	for (size_t i = 0; i < json_array_size(v) && i < IPPOOL_DNS_MAX; i++)
		ipv4_parse(json_string_value(json_array_get(v, i)), &s->dns[s->n_dns++]);
	return 0;
}

static int
dec_domain_name(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_spec *s = ctx;
	int r = 0;

	s->domain_name = crd_strdup(json_string_value(v), &r);
	return r;
}

static int
dec_domain_search(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_spec *s = ctx;
	size_t n = json_array_size(v);
	int r = 0;

	if (n == 0)
		return 0;
	s->domain_search = calloc(n, sizeof(char *));
	if (!s->domain_search)
		return -ENOMEM;
	for (size_t i = 0; i < n && r == 0; i++) {
		s->domain_search[i] = crd_strdup(json_string_value(json_array_get(v, i)), &r);
		if (r == 0)
			s->n_domain_search++;
	}
	return r;
}

static int
dec_ntp(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_spec *s = ctx;
	int r = 0;

	for (size_t i = 0; i < json_array_size(v) && i < IPPOOL_NTP_MAX && r == 0; i++) {
		s->ntp[i] = crd_strdup(json_string_value(json_array_get(v, i)), &r);
		if (r == 0)
			s->n_ntp++;
	}
	return r;
}

static int
dec_lease_time(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_spec *s = ctx;

	s->lease_time = (uint32_t)json_integer_value(v);
	s->lease_time_set = true;
	return 0;
}

static int
dec_mtu(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	((struct ippool_spec *)ctx)->mtu = (uint32_t)json_integer_value(v);
	return 0;
}

/* One route (ctx: struct ippool_route). */
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

static int
dec_route_gw(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return ipv4_parse(json_string_value(v), &((struct ippool_route *)ctx)->gateway);
}

static const struct crd_field route_children[] = {
    {.key = "destination",
	.type = CRD_STRING,
	.required = true,
	.pattern = CRD_PATTERN_ROUTE_CIDR,
	.decode = dec_route_dest},
    {.key = "gateway",
	.type = CRD_STRING,
	.required = true,
	.format = "ipv4",
	.decode = dec_route_gw},
    {.key = NULL},
};

static const struct crd_field route_item = {
    .type = CRD_OBJECT,
    .strict = true,
    .children = route_children,
};

static int
dec_routes(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_spec *s = ctx;
	size_t n = json_array_size(v);
	char sub[128];
	int r;

	if (n == 0)
		return 0;
	s->routes = calloc(n, sizeof(*s->routes));
	if (!s->routes)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		crd_path_index(sub, sizeof(sub), path, i);
		r = crd_decode_object(
		    json_array_get(v, i), sub, route_children, true, &s->routes[i], err);
		if (r < 0)
			return r;
		s->n_routes++;
	}
	return 0;
}

static const struct crd_field ipv4_item = {.type = CRD_STRING, .format = "ipv4"};
static const struct crd_field domain_item = {
    .type = CRD_STRING,
    .pattern = CRD_PATTERN_DOMAIN,
    .max_length = 253,
};
static const struct crd_field ntp_item = {
    .type = CRD_STRING,
    .pattern = CRD_PATTERN_NTP,
    .max_length = IPPOOL_NTP_LEN_MAX,
};

static const struct crd_field pool_children[] = {
    {.key = "start", .type = CRD_STRING, .required = true, .format = "ipv4", .decode = dec_start},
    {.key = "end", .type = CRD_STRING, .required = true, .format = "ipv4", .decode = dec_end},
    {.key = "exclude",
	.type = CRD_ARRAY,
	.items = &ipv4_item,
	.max_items = IPPOOL_EXCLUDE_MAX,
	.decode = dec_exclude},
    {.key = NULL},
};

static const struct crd_field ipv4_config_children[] = {
    {.key = "serverIP",
	.type = CRD_STRING,
	.required = true,
	.immutable = true,
	.format = "ipv4",
	.max_length = 15,
	.decode = dec_server_ip},
    {.key = "cidr",
	.type = CRD_STRING,
	.required = true,
	.immutable = true,
	.pattern = CRD_PATTERN_CIDR,
	.max_length = 18,
	.decode = dec_cidr},
    {.key = "pool",
	.type = CRD_OBJECT,
	.required = true,
	.strict = true,
	.children = pool_children},
    {.key = "router",
	.type = CRD_STRING,
	.immutable = true,
	.format = "ipv4",
	.max_length = 15,
	.decode = dec_router},
    {.key = "dns",
	.type = CRD_ARRAY,
	.items = &ipv4_item,
	.max_items = IPPOOL_DNS_MAX,
	.decode = dec_dns},
    {.key = "domainName",
	.type = CRD_STRING,
	.pattern = CRD_PATTERN_DOMAIN,
	.max_length = 253,
	.decode = dec_domain_name},
    {.key = "domainSearch",
	.type = CRD_ARRAY,
	.items = &domain_item,
	.max_items = IPPOOL_DOMAIN_SEARCH_MAX,
	.decode = dec_domain_search},
    {.key = "ntp",
	.type = CRD_ARRAY,
	.items = &ntp_item,
	.max_items = IPPOOL_NTP_MAX,
	.decode = dec_ntp},
    {.key = "leaseTime",
	.type = CRD_INTEGER,
	.has_minimum = true,
	.minimum = IPPOOL_LEASE_TIME_MIN,
	.has_maximum = true,
	.maximum = UINT32_MAX,
	.has_default = true,
	.dflt = IPPOOL_LEASE_TIME_DEFAULT,
	.decode = dec_lease_time},
    {.key = "mtu",
	.type = CRD_INTEGER,
	.has_minimum = true,
	.minimum = IPPOOL_MTU_MIN,
	.has_maximum = true,
	.maximum = IPPOOL_MTU_MAX,
	.decode = dec_mtu},
    {.key = "routes",
	.type = CRD_ARRAY,
	.items = &route_item,
	.max_items = IPPOOL_ROUTES_MAX,
	.decode = dec_routes},
    {.key = NULL},
};

static const struct crd_field spec_children[] = {
    {.key = "networkName",
	.type = CRD_STRING,
	.required = true,
	.immutable = true,
	.max_length = CRD_NETWORK_NAME_INPUT_MAX,
	.pattern = CRD_PATTERN_NETWORK_NAME,
	.decode = dec_network_name},
    {.key = "paused", .type = CRD_BOOLEAN, .decode = dec_paused},
    {.key = "ipv4Config",
	.type = CRD_OBJECT,
	.required = true,
	.strict = true,
	.children = ipv4_config_children},
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

static int
dec_used(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	((struct ippool_status *)ctx)->used = json_integer_value(v);
	return 0;
}

static int
dec_available(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	((struct ippool_status *)ctx)->available = json_integer_value(v);
	return 0;
}

static const struct crd_field mac_value_item = {.type = CRD_STRING};

static const struct crd_field ipv4_status_children[] = {
    {.key = "allocated", .type = CRD_MAP, .items = &mac_value_item, .decode = dec_allocated},
    {.key = "used", .type = CRD_INTEGER, .required = true, .decode = dec_used},
    {.key = "available", .type = CRD_INTEGER, .required = true, .decode = dec_available},
    {.key = NULL},
};

/*
 * status.ipv4[IPPOOL_ALLOCATED_PACKED] (borrowed; from ippool_json_loadb): the raw bytes of
 * struct ippool_alloc[n], sorted by address, unique. The "allocated" beside it must be empty.
 */
static int
dec_allocated_packed(
    const json_t *v, const char *path, struct ippool_status *st, struct crd_error *err)
{
	const char *bytes = json_string_value(v);
	size_t len = json_string_length(v), n = len / sizeof(struct ippool_alloc);
	struct ippool_alloc *allocs;
	char sub[128];

	crd_path_key(sub, sizeof(sub), path, "allocated");
	if (!bytes || len % sizeof(struct ippool_alloc) != 0)
		return crd_error_set(err, sub, "malformed packed form (length %zu)", len);
	if (st->n_allocated)
		return crd_error_set(err, sub, "malformed packed form (beside a non-empty map)");
	if (n == 0)
		return 0;
	allocs = calloc(n, sizeof(*allocs));
	if (!allocs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct ippool_alloc a;

		memcpy(&a, bytes + i * sizeof(a), sizeof(a));
		if (a.kind > IPPOOL_ALLOC_RESERVED || (i > 0 && a.addr <= allocs[i - 1].addr)) {
			free(allocs);
			return crd_error_set(err, sub, "malformed packed form (entry %zu)", i);
		}
		allocs[i].addr = a.addr;
		allocs[i].kind = a.kind;
		if (a.kind == IPPOOL_ALLOC_MAC)
			memcpy(allocs[i].mac, a.mac, MAC_LEN);
	}
	st->allocated = allocs;
	st->n_allocated = n;
	return 0;
}

static int
dec_ipv4_status(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_status *st = ctx;
	const json_t *packed;
	int r;

	st->has_ipv4 = true;
	r = crd_decode_object(v, path, ipv4_status_children, false, st, err);
	if (r < 0)
		return r;
	packed = json_object_get(v, IPPOOL_ALLOCATED_PACKED);
	return packed ? dec_allocated_packed(packed, path, st, err) : 0;
}

#define POD_REF_HOOK(fn, member)                                                                   \
	static int fn(const json_t *v, const char *path, void *ctx, struct crd_error *err)         \
	{                                                                                          \
		struct ippool_status *st = ctx;                                                    \
		int r = 0;                                                                         \
		free(st->agent_pod_ref.member);                                                    \
		st->agent_pod_ref.member = crd_strdup(json_string_value(v), &r);                   \
		return r;                                                                          \
	}
POD_REF_HOOK(dec_pod_ns, namespace)
POD_REF_HOOK(dec_pod_name, name)
POD_REF_HOOK(dec_pod_image, image)
POD_REF_HOOK(dec_pod_uid, uid)

static const struct crd_field pod_ref_children[] = {
    {.key = "namespace", .type = CRD_STRING, .decode = dec_pod_ns},
    {.key = "name", .type = CRD_STRING, .decode = dec_pod_name},
    {.key = "image", .type = CRD_STRING, .decode = dec_pod_image},
    {.key = "uid", .type = CRD_STRING, .decode = dec_pod_uid},
    {.key = NULL},
};

static int
dec_pod_ref(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_status *st = ctx;

	st->has_agent_pod_ref = true;
	return crd_decode_object(v, path, pod_ref_children, false, st, err);
}

static int
dec_last_update(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return crd_time_parse(json_string_value(v), &((struct ippool_status *)ctx)->last_update);
}

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
	.decode = dec_ipv4_status},
    {.key = "agentPodRef", .type = CRD_OBJECT, .children = pod_ref_children, .decode = dec_pod_ref},
    {.key = "lastUpdate", .type = CRD_STRING, .format = "date-time", .decode = dec_last_update},
    {.key = "conditions",
	.type = CRD_ARRAY,
	.items = &crd_condition_item,
	.decode = dec_conditions},
    {.key = NULL},
};

/* --- root (ctx: struct ippool) ------------------------------------------------------- */

static int
dec_api_version(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	if (strcmp(json_string_value(v), CRD_API_VERSION) != 0)
		return crd_error_set(
		    err, path, "\"%.60s\" is not " CRD_API_VERSION, json_string_value(v));
	return 0;
}

static int
dec_kind(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	if (strcmp(json_string_value(v), IPPOOL_KIND) != 0)
		return crd_error_set(
		    err, path, "\"%.60s\" is not " IPPOOL_KIND, json_string_value(v));
	return 0;
}

static int
dec_metadata(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return crd_meta_decode(v, &((struct ippool *)ctx)->meta, err);
}

static int spec_check(const struct ippool_spec *s, struct crd_error *err);

static int
dec_spec(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct ippool_spec *s = &((struct ippool *)ctx)->spec;
	int r;

	r = crd_decode_object(v, path, spec_children, true, s, err);
	return r < 0 ? r : spec_check(s, err);
}

static int
dec_status(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return crd_decode_object(
	    v, path, status_children, false, &((struct ippool *)ctx)->status, err);
}

const struct crd_field ippool_fields[] = {
    {.key = "apiVersion", .type = CRD_STRING, .decode = dec_api_version},
    {.key = "kind", .type = CRD_STRING, .decode = dec_kind},
    {.key = "metadata", .type = CRD_OBJECT, .decode = dec_metadata},
    {.key = "spec",
	.type = CRD_OBJECT,
	.required = true,
	.strict = true,
	.children = spec_children,
	.decode = dec_spec},
    {.key = "status", .type = CRD_OBJECT, .children = status_children, .decode = dec_status},
    {.key = NULL},
};

/* --- cross-field checks --------------------------------------------------------------- */

static int
spec_check(const struct ippool_spec *s, struct crd_error *err)
{
	uint32_t mask = ipv4_prefix_mask(s->prefix);
	uint32_t net = s->cidr_addr & mask, bcast = net | ~mask;
	char a[IPV4_STRLEN], b[IPV4_STRLEN], cidr[IPV4_STRLEN + 3];
	char path[64];

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
	return 0;
}

static void
spec_defaults(struct ippool_spec *s)
{
	if (!s->lease_time_set)
		s->lease_time = IPPOOL_LEASE_TIME_DEFAULT;
}

/* --- public decode -------------------------------------------------------------------- */

int
ippool_spec_decode(const json_t *spec_json, struct ippool_spec *spec, struct crd_error *err)
{
	int r;

	memset(spec, 0, sizeof(*spec));
	r = crd_decode_object(spec_json, "spec", spec_children, true, spec, err);
	if (r == 0)
		r = spec_check(spec, err);
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
	if (r < 0) {
		ippool_free(p);
		return r;
	}
	spec_defaults(&p->spec);
	*ret = p;
	return 0;
}

/* --- encode ------------------------------------------------------------------------- */

static json_t *
ip_json(uint32_t a)
{
	char buf[IPV4_STRLEN];

	ipv4_format(a, buf);
	return json_string(buf);
}

static json_t *
cidr_json(uint32_t a, unsigned prefix)
{
	char buf[IPV4_STRLEN], out[IPV4_STRLEN + 3];

	ipv4_format(a, buf);
	snprintf(out, sizeof(out), "%s/%u", buf, prefix);
	return json_string(out);
}

static json_t *
ip_array(const uint32_t *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, ip_json(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

static json_t *
str_array(char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++)
		if (json_array_append_new(a, json_string(v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

json_t *
ippool_spec_encode(const struct ippool_spec *s)
{
	json_t *spec = json_object(), *v4 = json_object(), *pool = json_object();
	int r = 0;

	if (!spec || !v4 || !pool)
		goto fail;
	r |= json_object_set_new(pool, "start", ip_json(s->start));
	r |= json_object_set_new(pool, "end", ip_json(s->end));
	if (s->n_exclude)
		r |= json_object_set_new(pool, "exclude", ip_array(s->exclude, s->n_exclude));
	r |= json_object_set_new(v4, "serverIP", ip_json(s->server_ip));
	r |= json_object_set_new(v4, "cidr", cidr_json(s->cidr_addr, s->prefix));
	r |= json_object_set_new(v4, "pool", pool);
	pool = NULL;
	if (s->router)
		r |= json_object_set_new(v4, "router", ip_json(s->router));
	if (s->n_dns)
		r |= json_object_set_new(v4, "dns", ip_array(s->dns, s->n_dns));
	if (s->domain_name)
		r |= json_object_set_new(v4, "domainName", json_string(s->domain_name));
	if (s->n_domain_search)
		r |= json_object_set_new(
		    v4, "domainSearch", str_array(s->domain_search, s->n_domain_search));
	if (s->n_ntp)
		r |= json_object_set_new(v4, "ntp", str_array(s->ntp, s->n_ntp));
	if (s->lease_time_set)
		r |= json_object_set_new(v4, "leaseTime", json_integer(s->lease_time));
	if (s->mtu)
		r |= json_object_set_new(v4, "mtu", json_integer(s->mtu));
	if (s->n_routes) {
		json_t *a = json_array();

		for (size_t i = 0; a && i < s->n_routes; i++) {
			json_t *o = json_object();

			r |= json_array_append_new(a, o);
			if (!o)
				break;
			r |= json_object_set_new(o, "destination",
			    cidr_json(s->routes[i].destination, s->routes[i].prefix));
			r |= json_object_set_new(o, "gateway", ip_json(s->routes[i].gateway));
		}
		r |= json_object_set_new(v4, "routes", a);
	}
	r |= json_object_set_new(
	    spec, "networkName", json_string(crd_network_name_spec_form(s->network_name)));
	if (s->paused)
		r |= json_object_set_new(spec, "paused", json_true());
	r |= json_object_set_new(spec, "ipv4Config", v4);
	v4 = NULL;
	if (r)
		goto fail;
	return spec;
fail:
	json_decref(spec);
	json_decref(v4);
	json_decref(pool);
	return NULL;
}

json_t *
ippool_status_encode(const struct ippool_status *st)
{
	json_t *o = json_object();
	char tbuf[21];
	int r = 0;

	if (!o)
		return NULL;
	if (st->has_ipv4) {
		json_t *v4 = json_object(), *alloc = json_object();

		for (size_t i = 0; alloc && i < st->n_allocated; i++) {
			const struct ippool_alloc *a = &st->allocated[i];
			char ip[IPV4_STRLEN], mac[MAC_STRLEN];
			const char *val = mac;

			ipv4_format(a->addr, ip);
			if (a->kind == IPPOOL_ALLOC_EXCLUDED)
				val = IPPOOL_ALLOCATED_EXCLUDED;
			else if (a->kind == IPPOOL_ALLOC_RESERVED)
				val = IPPOOL_ALLOCATED_RESERVED;
			else
				mac_format(a->mac, mac);
			r |= json_object_set_new(alloc, ip, json_string(val));
		}
		if (v4) {
			if (st->n_allocated)
				r |= json_object_set_new(v4, "allocated", alloc);
			else
				json_decref(alloc);
			r |= json_object_set_new(v4, "used", json_integer(st->used));
			r |= json_object_set_new(v4, "available", json_integer(st->available));
		} else {
			json_decref(alloc);
		}
		r |= json_object_set_new(o, "ipv4", v4);
	}
	if (st->has_agent_pod_ref) {
		json_t *p = json_object();
		const struct ippool_agent_pod_ref *ref = &st->agent_pod_ref;

		if (p) {
			if (ref->namespace)
				r |= json_object_set_new(
				    p, "namespace", json_string(ref->namespace));
			if (ref->name)
				r |= json_object_set_new(p, "name", json_string(ref->name));
			if (ref->image)
				r |= json_object_set_new(p, "image", json_string(ref->image));
			if (ref->uid)
				r |= json_object_set_new(p, "uid", json_string(ref->uid));
		}
		r |= json_object_set_new(o, "agentPodRef", p);
	}
	if (st->last_update) {
		crd_time_format(st->last_update, tbuf);
		r |= json_object_set_new(o, "lastUpdate", json_string(tbuf));
	}
	if (st->conditions.n)
		r |= json_object_set_new(o, "conditions", crd_conditions_encode(&st->conditions));
	if (r) {
		json_decref(o);
		return NULL;
	}
	return o;
}

json_t *
ippool_encode(const struct ippool *p)
{
	json_t *o = json_object();
	int r = 0;

	if (!o)
		return NULL;
	r |= json_object_set_new(o, "apiVersion", json_string(CRD_API_VERSION));
	r |= json_object_set_new(o, "kind", json_string(IPPOOL_KIND));
	r |= json_object_set_new(o, "metadata", crd_meta_encode(&p->meta));
	r |= json_object_set_new(o, "spec", ippool_spec_encode(&p->spec));
	r |= json_object_set_new(o, "status", ippool_status_encode(&p->status));
	if (r) {
		json_decref(o);
		return NULL;
	}
	return o;
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
	memset(s, 0, sizeof(*s));
}

void
ippool_status_clear(struct ippool_status *st)
{
	free(st->allocated);
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
