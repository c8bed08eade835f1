/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The warm-start snapshot's strict decoder: the bytes of the format described in
 * snapshot-format.c -> a new agent_config, every length and count checked against the file's
 * length, every field against its range, the configuration as snap_config_check() wants it,
 * the bindings bindable, each MAC and each address bound once. Any mismatch refuses it whole.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/snapshot-internal.h"
#include "lib/ip6.h"
#include "lib/util.h"

#define TRUNCATED(field) snap_fail(err, errlen, "%s: past the end of the snapshot", field)

/* Reader: every getter checks the bytes left first; false (cursor unchanged) when short. */
struct rd {
	const uint8_t *p;
	size_t left;
};

static bool
get_u8(struct rd *r, uint8_t *v)
{
	if (r->left < 1)
		return false;
	*v = r->p[0];
	r->p++;
	r->left--;
	return true;
}

static bool
get_u16(struct rd *r, uint16_t *v)
{
	if (r->left < 2)
		return false;
	*v = (uint16_t)(r->p[0] | r->p[1] << 8);
	r->p += 2;
	r->left -= 2;
	return true;
}

static bool
get_u32(struct rd *r, uint32_t *v)
{
	if (r->left < 4)
		return false;
	*v = le32_get(r->p);
	r->p += 4;
	r->left -= 4;
	return true;
}

static bool
get_u64(struct rd *r, uint64_t *v)
{
	uint32_t lo, hi;

	if (r->left < 8)
		return false;
	get_u32(r, &lo);
	get_u32(r, &hi);
	*v = (uint64_t)hi << 32 | lo;
	return true;
}

/* A str into dst (cap bytes, NUL-terminated). */
static int
get_str(struct rd *r, char *dst, size_t cap, const char *field, char *err, size_t errlen)
{
	uint8_t n;

	if (!get_u8(r, &n) || r->left < n)
		return TRUNCATED(field);
	if (n >= cap)
		return snap_fail(err, errlen, "%s: %u bytes, at most %zu", field, n, cap - 1);
	if (memchr(r->p, '\0', n) != NULL)
		return snap_fail(err, errlen, "%s: NUL byte inside", field);
	memcpy(dst, r->p, n);
	dst[n] = '\0';
	r->p += n;
	r->left -= n;
	return 0;
}

/* The MAC of record i of n records stride bytes apart from base. */
#define MAC_AT(base, stride, i) ((const uint8_t *)(base) + (size_t)(i) * (stride))

/* Refuses a MAC bound twice: an open-addressing set of binding indexes (the MAC first in each
 * record of stride bytes). */
static int
macs_unique(const void *base, size_t stride, size_t n, char *err, size_t errlen)
{
	size_t cap = 16, mask;
	uint32_t *slot;

	while (cap < 2 * n)
		cap *= 2;
	mask = cap - 1;
	slot = malloc(cap * sizeof(*slot));
	if (slot == NULL)
		return -ENOMEM;
	memset(slot, 0xff, cap * sizeof(*slot));
	for (size_t i = 0; i < n; i++) {
		const uint8_t *mac = MAC_AT(base, stride, i);
		size_t h = (size_t)hash_mac(mac) & mask;

		while (slot[h] != UINT32_MAX) {
			if (memcmp(MAC_AT(base, stride, slot[h]), mac, 6) == 0) {
				char m[MAC_STRLEN];

				free(slot);
				mac_format(mac, m);
				return snap_fail(
				    err, errlen, "binding %zu: MAC %s bound twice", i, m);
			}
			h = (h + 1) & mask;
		}
		slot[h] = (uint32_t)i;
	}
	free(slot);
	return 0;
}

/* The bindings and hostnames, the last part of the file: r holds exactly them. */
static int
decode_bindings(
    struct rd *r, uint32_t n, uint32_t names, struct agent_config *c, char *err, size_t errlen)
{
	const uint8_t *rec = r->p, *lens = NULL, *text = NULL;
	size_t named = 0, sum = 0, off = 0;

	if (n == 0)
		return 0;
	if (names > 0) {
		lens = rec + (size_t)n * SNAP_RECORD;
		text = lens + n;
		for (size_t i = 0; i < n; i++) {
			if (lens[i] > DHCP_HOSTNAME_MAX)
				return snap_fail(err, errlen,
				    "binding %zu: hostname of %u bytes, at most %d", i, lens[i],
				    DHCP_HOSTNAME_MAX);
			sum += lens[i];
			named += lens[i] > 0;
		}
		if (sum != names)
			return snap_fail(
			    err, errlen, "hostnames: %zu bytes, the header says %u", sum, names);
		if (memchr(text, '\0', names) != NULL)
			return snap_fail(err, errlen, "hostnames: NUL byte inside");
		c->names = malloc(sum + named);
		if (c->names == NULL)
			return -ENOMEM;
		c->names_len = c->names_cap = sum + named;
	}
	c->bindings = malloc((size_t)n * sizeof(*c->bindings));
	if (c->bindings == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++, rec += SNAP_RECORD) {
		struct agent_binding *b = &c->bindings[i];

		memcpy(b->mac, rec, 6);
		b->ip = le32_get(rec + 6);
		b->hostname = UINT32_MAX;
		if (!dhcp_mac_bindable(b->mac))
			return snap_fail(
			    err, errlen, "binding %zu: MAC not bindable (zero or group)", i);
		if (b->ip == 0)
			return snap_fail(err, errlen, "binding %zu: address 0", i);
		if (i > 0 && b->ip <= c->bindings[i - 1].ip)
			return snap_fail(
			    err, errlen, "binding %zu: addresses not in ascending order", i);
		if (names > 0 && lens[i] > 0) {
			b->hostname = (uint32_t)off;
			memcpy(c->names + off, text, lens[i]);
			c->names[off + lens[i]] = '\0';
			off += lens[i] + 1u;
			text += lens[i];
		}
		c->n_bindings = i + 1;
	}
	return macs_unique(c->bindings, sizeof(*c->bindings), n, err, errlen);
}

static bool
get_in6(struct rd *r, struct in6_addr *a)
{
	if (r->left < 16)
		return false;
	memcpy(a->s6_addr, r->p, 16);
	r->p += 16;
	r->left -= 16;
	return true;
}

/* The ipv6Config part's IPv6 bindings: ascending, non-zero, bindable, each MAC once. */
static int
decode_bindings6(struct rd *r, struct agent_config6 *v, char *err, size_t errlen)
{
	uint32_t n;

	if (!get_u32(r, &n))
		return TRUNCATED("ipv6.bindings");
	if (n > r->left / SNAP_RECORD6)
		return snap_fail(err, errlen, "ipv6.bindings: %" PRIu32 ", past the end", n);
	if (n == 0)
		return 0;
	if ((v->bindings = malloc((size_t)n * sizeof(*v->bindings))) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct agent_binding6 *b = &v->bindings[i];

		memcpy(b->mac, r->p, 6);
		r->p += 6;
		r->left -= 6;
		get_in6(r, &b->ip);
		b->hostname = UINT32_MAX;
		v->n_bindings = i + 1;
		if (!dhcp_mac_bindable(b->mac))
			return snap_fail(err, errlen, "ipv6 binding %zu: MAC not bindable", i);
		if (ipv6_is_zero(&b->ip) || ipv6_is_multicast(&b->ip))
			return snap_fail(err, errlen, "ipv6 binding %zu: zero or multicast", i);
		if (i > 0 && ipv6_cmp(&b->ip, &v->bindings[i - 1].ip) <= 0)
			return snap_fail(
			    err, errlen, "ipv6 binding %zu: addresses not in ascending order", i);
	}
	return macs_unique(v->bindings, sizeof(*v->bindings), n, err, errlen);
}

/* The ipv6Config part's options and RA. */
static int
decode_options6(struct rd *r, struct agent_config6 *v, char *err, size_t errlen)
{
	struct dhcp6_options *o = &v->opts;
	uint8_t n, rapid, ra_on, duid_len;
	int ret;

	if (!get_in6(r, &o->server_ip) || !get_u8(r, &o->prefix) || !get_u8(r, &n))
		return TRUNCATED("ipv6.options");
	if (n > DHCP6_MAX_DNS)
		return snap_fail(err, errlen, "ipv6.dns: %u servers, at most %d", n, DHCP6_MAX_DNS);
	o->n_dns = n;
	for (size_t i = 0; i < o->n_dns; i++)
		if (!get_in6(r, &o->dns[i]))
			return TRUNCATED("ipv6.dns");
	if (!get_u8(r, &n))
		return TRUNCATED("ipv6.search");
	if (n > DHCP_MAX_SEARCH)
		return snap_fail(
		    err, errlen, "ipv6.search: %u domains, at most %d", n, DHCP_MAX_SEARCH);
	o->n_search = n;
	for (size_t i = 0; i < o->n_search; i++)
		if ((ret = get_str(
			 r, o->search[i], sizeof(o->search[i]), "ipv6.search", err, errlen)) < 0)
			return ret;
	if (!get_u32(r, &o->preferred_lifetime) || !get_u32(r, &o->valid_lifetime) ||
	    !get_u8(r, &rapid) || !get_u8(r, &duid_len))
		return TRUNCATED("ipv6.options");
	if (rapid > 1 || duid_len > sizeof(o->duid) || r->left < duid_len)
		return snap_fail(err, errlen, "ipv6.options: rapid commit or DUID out of range");
	o->rapid_commit = rapid == 1;
	o->duid_len = duid_len;
	memcpy(o->duid, r->p, duid_len);
	r->p += duid_len;
	r->left -= duid_len;
	if (!get_u8(r, &ra_on) || !get_u32(r, &v->ra.interval) ||
	    !get_u16(r, &v->ra.router_lifetime) || !get_in6(r, &v->ra.prefix) ||
	    !get_u8(r, &v->ra.prefix_len) || !get_u32(r, &v->ra.mtu))
		return TRUNCATED("ipv6.ra");
	if (ra_on > 1)
		return snap_fail(err, errlen, "ipv6.ra: enabled byte %u", ra_on);
	v->ra.enabled = ra_on == 1;
	return 0;
}

/* The ipv6Config part (format version 2 on). */
static int
decode_v6(struct rd *r, struct agent_config6 *v, char *err, size_t errlen)
{
	uint8_t flags, prefix;
	uint32_t n;
	int ret;

	if (!get_u8(r, &flags))
		return TRUNCATED("ipv6");
	if ((flags & ~SNAP_V6_ENABLED) != 0)
		return snap_fail(err, errlen, "ipv6: unknown flags 0x%x", flags & ~SNAP_V6_ENABLED);
	v->enabled = (flags & SNAP_V6_ENABLED) != 0;
	if (!v->enabled)
		return 0;
	if (!get_in6(r, &v->cidr) || !get_u8(r, &prefix) || !get_in6(r, &v->pool_start) ||
	    !get_in6(r, &v->pool_end) || !get_u32(r, &n))
		return TRUNCATED("ipv6.pool");
	v->prefix = prefix;
	if (n > r->left / 16)
		return snap_fail(err, errlen, "ipv6.exclude: %" PRIu32 ", past the end", n);
	if (n > 0) {
		if ((v->exclude = malloc((size_t)n * sizeof(*v->exclude))) == NULL)
			return -ENOMEM;
		v->n_exclude = n;
		for (size_t i = 0; i < n; i++)
			get_in6(r, &v->exclude[i]);
	}
	if ((ret = decode_options6(r, v, err, errlen)) < 0)
		return ret;
	return decode_bindings6(r, v, err, errlen);
}

static int
decode_options(struct rd *r, struct dhcp_options *o, char *err, size_t errlen)
{
	uint8_t n, prefix;
	int ret;

	if (!get_u32(r, &o->server_ip) || !get_u8(r, &o->prefix) || !get_u32(r, &o->router))
		return TRUNCATED("options");
	if (!get_u8(r, &n))
		return TRUNCATED("options.dns");
	if (n > DHCP_MAX_DNS)
		return snap_fail(
		    err, errlen, "options.dns: %u servers, at most %d", n, DHCP_MAX_DNS);
	o->n_dns = n;
	for (size_t i = 0; i < o->n_dns; i++)
		if (!get_u32(r, &o->dns[i]))
			return TRUNCATED("options.dns");
	if (!get_u8(r, &n))
		return TRUNCATED("options.ntp");
	if (n > DHCP_MAX_NTP)
		return snap_fail(
		    err, errlen, "options.ntp: %u servers, at most %d", n, DHCP_MAX_NTP);
	o->n_ntp = n;
	for (size_t i = 0; i < o->n_ntp; i++)
		if (!get_u32(r, &o->ntp[i]))
			return TRUNCATED("options.ntp");
	ret =
	    get_str(r, o->domain_name, sizeof(o->domain_name), "options.domain_name", err, errlen);
	if (ret < 0)
		return ret;
	if (!get_u8(r, &n))
		return TRUNCATED("options.search");
	if (n > DHCP_MAX_SEARCH)
		return snap_fail(
		    err, errlen, "options.search: %u domains, at most %d", n, DHCP_MAX_SEARCH);
	o->n_search = n;
	for (size_t i = 0; i < o->n_search; i++) {
		ret = get_str(r, o->search[i], sizeof(o->search[i]), "options.search", err, errlen);
		if (ret < 0)
			return ret;
	}
	if (!get_u16(r, &o->mtu))
		return TRUNCATED("options.mtu");
	if (!get_u8(r, &n))
		return TRUNCATED("options.routes");
	if (n > DHCP_MAX_ROUTES)
		return snap_fail(err, errlen, "options.routes: %u, at most %d", n, DHCP_MAX_ROUTES);
	o->n_routes = n;
	for (size_t i = 0; i < o->n_routes; i++) {
		if (!get_u32(r, &o->routes[i].destination) || !get_u8(r, &prefix) ||
		    !get_u32(r, &o->routes[i].gateway))
			return TRUNCATED("options.routes");
		o->routes[i].prefix = prefix;
	}
	if (!get_u32(r, &o->lease_time))
		return TRUNCATED("options.lease_time");
	return 0;
}

/*
 * The magic, version, length and checksum: the file is whole before a field is read. Version 1
 * (before the ipv6Config part) is read as a pool without one.
 */
static int
decode_preamble(const uint8_t *buf, size_t len, uint32_t *ret_version, char *err, size_t errlen)
{
	uint32_t version, total, file_crc, crc;

	if (len < SNAP_MIN)
		return snap_fail(err, errlen, "truncated (%zu bytes)", len);
	if (memcmp(buf, SNAP_MAGIC, SNAP_MAGIC_LEN) != 0)
		return snap_fail(err, errlen, "not a snapshot (bad magic)");
	version = le32_get(buf + 8);
	if (version != AGENT_SNAPSHOT_VERSION && version != SNAP_VERSION_V4_ONLY)
		return snap_fail(err, errlen,
		    "format version %" PRIu32 ", this agent reads %d and %d", version,
		    SNAP_VERSION_V4_ONLY, AGENT_SNAPSHOT_VERSION);
	*ret_version = version;
	total = le32_get(buf + 12);
	if (total != len)
		return snap_fail(
		    err, errlen, "length mismatch (header %" PRIu32 ", file %zu)", total, len);
	file_crc = le32_get(buf + len - 4);
	crc = agent_snapshot_crc32c(buf, len - 4);
	if (file_crc != crc)
		return snap_fail(err, errlen,
		    "checksum mismatch (file 0x%08" PRIx32 ", computed 0x%08" PRIx32 ")", file_crc,
		    crc);
	return 0;
}

/* The flags, the pool's identity (checked against ippool_ref), network, range and excludes. */
static int
decode_pool(struct rd *r, const char *ippool_ref, struct agent_config *c,
    struct agent_snapshot_info *info, char *err, size_t errlen)
{
	uint32_t flags, u32;
	uint8_t prefix;
	int ret;

	if (!get_u32(r, &flags) || !get_u64(r, &info->written_usec))
		return TRUNCATED("header");
	if ((flags & ~SNAP_FLAG_PAUSED) != 0)
		return snap_fail(
		    err, errlen, "flags: unknown bits 0x%" PRIx32, flags & ~SNAP_FLAG_PAUSED);
	c->paused = (flags & SNAP_FLAG_PAUSED) != 0;
	if ((ret = get_str(r, info->resource_version, sizeof(info->resource_version),
		 "resourceVersion", err, errlen)) < 0 ||
	    (ret = get_str(r, c->pool_ns, sizeof(c->pool_ns), "namespace", err, errlen)) < 0 ||
	    (ret = get_str(r, c->pool_name, sizeof(c->pool_name), "name", err, errlen)) < 0 ||
	    (ret = get_str(r, c->network, sizeof(c->network), "network", err, errlen)) < 0)
		return ret;
	if (ippool_ref != NULL) {
		size_t ns = strlen(c->pool_ns);

		if (strncmp(ippool_ref, c->pool_ns, ns) != 0 || ippool_ref[ns] != '/' ||
		    strcmp(ippool_ref + ns + 1, c->pool_name) != 0)
			return snap_fail(err, errlen, "snapshot of IPPool %s/%s, not %s",
			    c->pool_ns, c->pool_name, ippool_ref);
	}
	if (!get_u32(r, &c->cidr) || !get_u8(r, &prefix) || !get_u32(r, &c->pool_start) ||
	    !get_u32(r, &c->pool_end) || !get_u32(r, &u32))
		return TRUNCATED("pool");
	c->prefix = prefix;
	if (u32 > r->left / 4)
		return snap_fail(err, errlen, "exclude: %" PRIu32 " addresses, past the end", u32);
	if (u32 > 0) {
		c->exclude = malloc((size_t)u32 * sizeof(*c->exclude));
		if (c->exclude == NULL)
			return -ENOMEM;
		c->n_exclude = u32;
		for (size_t i = 0; i < c->n_exclude; i++)
			get_u32(r, &c->exclude[i]);
	}
	return 0;
}

static int
decode(const uint8_t *buf, size_t len, const char *ippool_ref, struct agent_config *c,
    struct agent_snapshot_info *info, char *err, size_t errlen)
{
	uint32_t n_bindings, names, version = 0;
	struct rd r;
	int ret;

	if ((ret = decode_preamble(buf, len, &version, err, errlen)) < 0)
		return ret;
	r = (struct rd){.p = buf + SNAP_PREAMBLE, .left = len - SNAP_PREAMBLE - 4};
	if ((ret = decode_pool(&r, ippool_ref, c, info, err, errlen)) < 0 ||
	    (ret = decode_options(&r, &c->opts, err, errlen)) < 0 ||
	    (version > SNAP_VERSION_V4_ONLY && (ret = decode_v6(&r, &c->v6, err, errlen)) < 0) ||
	    (ret = snap_config_check(c, err, errlen)) < 0)
		return ret;

	if (!get_u32(&r, &n_bindings) || !get_u32(&r, &names))
		return TRUNCATED("bindings");
	if ((uint64_t)r.left !=
	    (uint64_t)n_bindings * SNAP_RECORD + (names > 0 ? (uint64_t)n_bindings + names : 0))
		return snap_fail(err, errlen,
		    "bindings: %" PRIu32 " bindings and %" PRIu32 " hostname bytes in %zu bytes",
		    n_bindings, names, r.left);
	if (n_bindings == 0 && names > 0)
		return snap_fail(err, errlen, "hostnames: %" PRIu32 " bytes, no bindings", names);
	ret = decode_bindings(&r, n_bindings, names, c, err, errlen);
	if (ret < 0)
		return ret;
	info->bindings = n_bindings;
	info->bytes = len;
	return 0;
}

int
agent_snapshot_decode(const uint8_t *buf, size_t len, const char *ippool_ref,
    struct agent_config **ret, struct agent_snapshot_info *info, char *err, size_t errlen)
{
	struct agent_snapshot_info inf;
	struct agent_config *c;
	int r;

	if (buf == NULL && len > 0)
		return snap_fail(err, errlen, "no data");
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		snprintf(err, errlen, "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	memset(&inf, 0, sizeof(inf));
	r = decode(buf, len, ippool_ref, c, &inf, err, errlen);
	if (r < 0) {
		if (r == -ENOMEM)
			snprintf(err, errlen, "%s", strerror(ENOMEM));
		agent_config_free(c);
		return r;
	}
	if (ret != NULL)
		*ret = c;
	else
		agent_config_free(c);
	if (info != NULL)
		*info = inf;
	return 0;
}
