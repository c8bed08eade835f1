/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The warm-start snapshot's encoder: the configuration and the engines' bindings (DHCPv4 and
 * DHCPv6), in ascending address order, -> the bytes of the format described in
 * snapshot-format.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent/snapshot-internal.h"
#include "lib/ip6.h"
#include "lib/util.h"

/* Writer over a buffer sized beforehand; an overflow (a sizing bug) is sticky and checked once. */
struct wr {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
};

static uint8_t *
wr_room(struct wr *w, size_t n)
{
	uint8_t *at;

	if (w->overflow || w->cap - w->len < n) {
		w->overflow = true;
		return NULL;
	}
	at = w->p + w->len;
	w->len += n;
	return at;
}

static void
put_u8(struct wr *w, uint8_t v)
{
	uint8_t *p = wr_room(w, 1);

	if (p != NULL)
		p[0] = v;
}

static void
put_u16(struct wr *w, uint16_t v)
{
	uint8_t *p = wr_room(w, 2);

	if (p != NULL) {
		p[0] = (uint8_t)v;
		p[1] = (uint8_t)(v >> 8);
	}
}

static void
put_u32(struct wr *w, uint32_t v)
{
	uint8_t *p = wr_room(w, 4);

	if (p != NULL)
		le32_put(p, v);
}

static void
put_u64(struct wr *w, uint64_t v)
{
	put_u32(w, (uint32_t)v);
	put_u32(w, (uint32_t)(v >> 32));
}

static void
put_bytes(struct wr *w, const void *src, size_t n)
{
	uint8_t *p = wr_room(w, n);

	if (p != NULL && n > 0)
		memcpy(p, src, n);
}

/* s is checked beforehand: NUL-terminated, shorter than 256 bytes. */
static void
put_str(struct wr *w, const char *s)
{
	size_t n = strlen(s);

	put_u8(w, (uint8_t)n);
	put_bytes(w, s, n);
}

struct rec {
	uint32_t ip;
	uint8_t mac[6];
	uint8_t hlen;
	const char *hostname; /* borrowed from the engine for the encoding's duration */
};

struct collect {
	struct rec *recs;
	size_t n, cap;
	size_t names; /* hostname bytes */
};

static void
collect_binding(void *userdata, const uint8_t mac[6], uint32_t ip, const char *hostname)
{
	struct collect *c = userdata;
	struct rec *x;

	if (c->n == c->cap) /* the engine counted fewer than it holds: cannot happen */
		return;
	x = &c->recs[c->n++];
	x->ip = ip;
	memcpy(x->mac, mac, 6);
	x->hlen = hostname != NULL ? (uint8_t)strnlen(hostname, DHCP_HOSTNAME_MAX) : 0;
	x->hostname = hostname;
	c->names += x->hlen;
}

/*
 * The order of recs by address: LSD radix sort of (ip << 32 | index) keys on the address, a
 * byte a pass. Returns the sorted keys (malloc'd) or NULL.
 */
static uint64_t *
sort_by_ip(const struct rec *recs, size_t n)
{
	uint64_t *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b)), *t;
	size_t count[256];

	if (a == NULL || b == NULL) {
		free(a);
		free(b);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		a[i] = (uint64_t)recs[i].ip << 32 | i;
	for (unsigned shift = 32; shift < 64; shift += 8) {
		size_t sum = 0;

		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(a[i] >> shift) & 0xffu]++;
		for (size_t d = 0; d < 256; d++) {
			size_t x = count[d];

			count[d] = sum;
			sum += x;
		}
		for (size_t i = 0; i < n; i++)
			b[count[(a[i] >> shift) & 0xffu]++] = a[i];
		t = a, a = b, b = t;
	}
	free(b);
	return a;
}

/*
 * The engine's bindings of s (NULL: none) into c, in ascending address order, each one a
 * snapshot can hold (so every snapshot written reads back). 0, -ENOMEM or -EINVAL.
 */
static int
collect_sorted(const struct dhcp_server *s, struct collect *c, char *err, size_t errlen)
{
	bool sorted = true;

	c->cap = s != NULL ? dhcp_server_n_bindings(s) : 0;
	if (c->cap > UINT32_MAX)
		return snap_fail(err, errlen, "%zu bindings, too many", c->cap);
	if (c->cap > 0) {
		c->recs = malloc(c->cap * sizeof(*c->recs));
		if (c->recs == NULL)
			return -ENOMEM;
		dhcp_server_foreach_binding(s, collect_binding, c);
	}
	for (size_t i = 1; i < c->n && sorted; i++)
		sorted = c->recs[i - 1].ip < c->recs[i].ip;
	if (!sorted) {
		uint64_t *keys = sort_by_ip(c->recs, c->n);
		struct rec *recs = malloc(c->cap * sizeof(*recs));

		if (keys == NULL || recs == NULL) {
			free(keys);
			free(recs);
			return -ENOMEM;
		}
		for (size_t i = 0; i < c->n; i++)
			recs[i] = c->recs[(uint32_t)keys[i]];
		free(keys);
		free(c->recs);
		c->recs = recs;
	}
	for (size_t i = 0; i < c->n; i++) {
		/* the engine never holds these; refusing here keeps every snapshot readable */
		if (c->recs[i].ip == 0 || !dhcp_mac_bindable(c->recs[i].mac) ||
		    (i > 0 && c->recs[i - 1].ip == c->recs[i].ip))
			return snap_fail(
			    err, errlen, "the engine holds a binding a snapshot cannot");
	}
	return 0;
}

/* The header and the pool: everything before the options. */
static void
put_pool(struct wr *w, const struct agent_config *cfg, const char *resource_version,
    uint64_t written_usec)
{
	put_bytes(w, SNAP_MAGIC, SNAP_MAGIC_LEN);
	put_u32(w, AGENT_SNAPSHOT_VERSION);
	put_u32(w, 0); /* length: snap_encode sets it */
	put_u32(w, cfg->paused ? SNAP_FLAG_PAUSED : 0);
	put_u64(w, written_usec);
	put_str(w, resource_version);
	put_str(w, cfg->pool_ns);
	put_str(w, cfg->pool_name);
	put_str(w, cfg->network);
	put_u32(w, cfg->cidr);
	put_u8(w, (uint8_t)cfg->prefix);
	put_u32(w, cfg->pool_start);
	put_u32(w, cfg->pool_end);
	put_u32(w, (uint32_t)cfg->n_exclude);
	for (size_t i = 0; i < cfg->n_exclude; i++)
		put_u32(w, cfg->exclude[i]);
}

static void
put_options(struct wr *w, const struct dhcp_options *o)
{
	put_u32(w, o->server_ip);
	put_u8(w, o->prefix);
	put_u32(w, o->router);
	put_u8(w, (uint8_t)o->n_dns);
	for (size_t i = 0; i < o->n_dns; i++)
		put_u32(w, o->dns[i]);
	put_u8(w, (uint8_t)o->n_ntp);
	for (size_t i = 0; i < o->n_ntp; i++)
		put_u32(w, o->ntp[i]);
	put_str(w, o->domain_name);
	put_u8(w, (uint8_t)o->n_search);
	for (size_t i = 0; i < o->n_search; i++)
		put_str(w, o->search[i]);
	put_u16(w, o->mtu);
	put_u8(w, (uint8_t)o->n_routes);
	for (size_t i = 0; i < o->n_routes; i++) {
		put_u32(w, o->routes[i].destination);
		put_u8(w, o->routes[i].prefix);
		put_u32(w, o->routes[i].gateway);
	}
	put_u32(w, o->lease_time);
}

/* ---- the ipv6Config part ---- */

struct rec6 {
	struct in6_addr ip;
	uint8_t mac[6];
};

struct collect6 {
	struct rec6 *recs;
	size_t n, cap;
};

static void
collect6_binding(void *userdata, const uint8_t mac[6], const struct in6_addr *ip, const char *h)
{
	struct collect6 *c = userdata;

	(void)h; /* an IPPool has no hostnames: not kept */
	if (c->n == c->cap)
		return;
	c->recs[c->n].ip = *ip;
	memcpy(c->recs[c->n].mac, mac, 6);
	c->n++;
}

static int
rec6_cmp(const void *x, const void *y)
{
	return ipv6_cmp(&((const struct rec6 *)x)->ip, &((const struct rec6 *)y)->ip);
}

/* The DHCPv6 engine's bindings of s6 (NULL: none) in ascending address order, checked. */
static int
collect6_sorted(
    const struct dhcp6_server *s6, bool enabled, struct collect6 *c, char *err, size_t errlen)
{
	c->cap = s6 != NULL && enabled ? dhcp6_server_n_bindings(s6) : 0;
	if (c->cap > UINT32_MAX)
		return snap_fail(err, errlen, "%zu IPv6 bindings, too many", c->cap);
	if (c->cap == 0)
		return 0;
	if ((c->recs = malloc(c->cap * sizeof(*c->recs))) == NULL)
		return -ENOMEM;
	dhcp6_server_foreach_binding(s6, collect6_binding, c);
	qsort(c->recs, c->n, sizeof(*c->recs), rec6_cmp);
	for (size_t i = 0; i < c->n; i++)
		if (ipv6_is_zero(&c->recs[i].ip) || !dhcp_mac_bindable(c->recs[i].mac) ||
		    (i > 0 && ipv6_equal(&c->recs[i - 1].ip, &c->recs[i].ip)))
			return snap_fail(
			    err, errlen, "the DHCPv6 engine holds a binding a snapshot cannot");
	return 0;
}

static void
put_in6(struct wr *w, const struct in6_addr *a)
{
	put_bytes(w, a->s6_addr, 16);
}

/* The ipv6Config part: flags, then (enabled) range, options, RA and bindings. */
static void
put_v6(struct wr *w, const struct agent_config6 *v, const struct collect6 *c)
{
	const struct dhcp6_options *o = &v->opts;

	put_u8(w, v->enabled ? SNAP_V6_ENABLED : 0);
	if (!v->enabled)
		return;
	put_in6(w, &v->cidr);
	put_u8(w, (uint8_t)v->prefix);
	put_in6(w, &v->pool_start);
	put_in6(w, &v->pool_end);
	put_u32(w, (uint32_t)v->n_exclude);
	for (size_t i = 0; i < v->n_exclude; i++)
		put_in6(w, &v->exclude[i]);
	put_in6(w, &o->server_ip);
	put_u8(w, o->prefix);
	put_u8(w, (uint8_t)o->n_dns);
	for (size_t i = 0; i < o->n_dns; i++)
		put_in6(w, &o->dns[i]);
	put_u8(w, (uint8_t)o->n_search);
	for (size_t i = 0; i < o->n_search; i++)
		put_str(w, o->search[i]);
	put_u32(w, o->preferred_lifetime);
	put_u32(w, o->valid_lifetime);
	put_u8(w, o->rapid_commit ? 1 : 0);
	put_u8(w, (uint8_t)o->duid_len);
	put_bytes(w, o->duid, o->duid_len);
	put_u8(w, v->ra.enabled ? 1 : 0);
	put_u32(w, v->ra.interval);
	put_u16(w, v->ra.router_lifetime);
	put_in6(w, &v->ra.prefix);
	put_u8(w, v->ra.prefix_len);
	put_u32(w, v->ra.mtu);
	put_u32(w, (uint32_t)c->n);
	for (size_t i = 0; i < c->n; i++) {
		put_bytes(w, c->recs[i].mac, 6);
		put_in6(w, &c->recs[i].ip);
	}
}

/* The counts, the records, then the hostnames' lengths and bytes when there are some. */
static void
put_bindings(struct wr *w, const struct collect *c)
{
	put_u32(w, (uint32_t)c->n);
	put_u32(w, (uint32_t)c->names);
	for (size_t i = 0; i < c->n; i++) {
		uint8_t *p = wr_room(w, SNAP_RECORD);

		if (p == NULL)
			break;
		memcpy(p, c->recs[i].mac, 6);
		le32_put(p + 6, c->recs[i].ip);
	}
	if (c->names > 0) {
		for (size_t i = 0; i < c->n; i++)
			put_u8(w, c->recs[i].hlen);
		for (size_t i = 0; i < c->n; i++)
			put_bytes(w, c->recs[i].hostname, c->recs[i].hlen);
	}
}

int
snap_encode(const struct agent_config *cfg, const struct dhcp_server *s,
    const struct dhcp6_server *s6, const char *resource_version, uint64_t written_usec,
    uint8_t **ret, size_t *ret_len, char *err, size_t errlen)
{
	struct collect c = {0};
	struct collect6 c6 = {0};
	struct wr w = {0};
	size_t size;
	int r;

	if (cfg == NULL || ret == NULL || ret_len == NULL)
		return snap_fail(err, errlen, "no configuration");
	if (resource_version == NULL)
		resource_version = "";
	if (strnlen(resource_version, AGENT_SNAPSHOT_RV_MAX) >= AGENT_SNAPSHOT_RV_MAX)
		return snap_fail(
		    err, errlen, "resourceVersion longer than %d bytes", AGENT_SNAPSHOT_RV_MAX - 1);
	if ((r = snap_config_check(cfg, err, errlen)) < 0)
		return r;
	if ((r = collect_sorted(s, &c, err, errlen)) < 0 ||
	    (r = collect6_sorted(s6, cfg->v6.enabled, &c6, err, errlen)) < 0) {
		free(c.recs);
		free(c6.recs);
		return r;
	}

	/* the ipv6Config part's fixed fields fit in a second SNAP_FIXED_MAX */
	size = 2 * SNAP_FIXED_MAX + 4 * cfg->n_exclude + SNAP_RECORD * c.n +
	       (c.names > 0 ? c.n + c.names : 0) + 16 * cfg->v6.n_exclude + SNAP_RECORD6 * c6.n;
	if (size > AGENT_SNAPSHOT_MAX_SIZE) {
		free(c.recs);
		free(c6.recs);
		return snap_fail(err, errlen, "%zu bindings, %zu excluded addresses: over %u bytes",
		    c.n + c6.n, cfg->n_exclude + cfg->v6.n_exclude, AGENT_SNAPSHOT_MAX_SIZE);
	}
	w.cap = size;
	if ((w.p = malloc(size)) == NULL) {
		free(c.recs);
		free(c6.recs);
		return -ENOMEM;
	}
	put_pool(&w, cfg, resource_version, written_usec);
	put_options(&w, &cfg->opts);
	put_v6(&w, &cfg->v6, &c6);
	put_bindings(&w, &c);
	free(c.recs);
	free(c6.recs);
	put_u32(&w, 0); /* checksum: below */
	if (w.overflow) {
		free(w.p);
		return snap_fail(err, errlen, "snapshot larger than computed (a bug)");
	}
	le32_put(w.p + 12, (uint32_t)w.len);
	le32_put(w.p + w.len - 4, agent_snapshot_crc32c(w.p, w.len - 4));
	*ret = w.p;
	*ret_len = w.len;
	return 0;
}

int
agent_snapshot_encode(const struct agent_config *cfg, const struct dhcp_server *s,
    const char *resource_version, uint64_t written_usec, uint8_t **ret, size_t *ret_len)
{
	return snap_encode(cfg, s, NULL, resource_version, written_usec, ret, ret_len, NULL, 0);
}

int
agent_snapshot_encode_dual(const struct agent_config *cfg, const struct dhcp_server *s,
    const struct dhcp6_server *s6, const char *resource_version, uint64_t written_usec,
    uint8_t **ret, size_t *ret_len)
{
	return snap_encode(cfg, s, s6, resource_version, written_usec, ret, ret_len, NULL, 0);
}
