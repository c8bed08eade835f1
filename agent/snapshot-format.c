/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes mode's warm-start snapshot: the pool's identity, network, paused flag, DHCP
 * options and the engine's bindings, written as one compact checksummed file (atomically:
 * PATH.tmp, write, fsync, rename, fsync of the directory) so that a restarted agent serves at
 * once, before it has synced from the API server. When and how often it is written is the
 * caller's business (warmstart.c); snapshot-encode.c, snapshot-decode.c and snapshot-file.c
 * only encode, decode, write and read. This file holds the format, described once below, its
 * checksum and the checks both directions make: the encoder and the strict decoder write and
 * check every field in the same order.
 *
 * Format, version 2 (version 1, the same without the ipv6Config part, is still read: a pool
 * without IPv6). Every integer little-endian; a "str" is a length byte and that many bytes
 * (no NUL inside; shorter than the agent_config / dhcp_options field it fills).
 *
 *     0   8  magic "VMDHSNAP"
 *     8   4  format version (1)
 *    12   4  total length of the file, checksum included
 *    16   4  flags: bit 0 paused; the other bits 0
 *    20   8  written at (CLOCK_REALTIME microseconds)
 *    28      str resourceVersion of the IPPool ("" = unknown), str namespace, str name,
 *            str network; u32 cidr, u8 prefix, u32 pool start, u32 pool end,
 *            u32 n_exclude, n_exclude x u32
 *            options: u32 server_ip, u8 prefix, u32 router, u8 n_dns + u32 each,
 *            u8 n_ntp + u32 each, str domain_name, u8 n_search + str each, u16 mtu,
 *            u8 n_routes + (u32 destination, u8 prefix, u32 gateway) each, u32 lease_time
 *            ipv6Config part (version 2): u8 flags (bit 0: the pool has one; then, else nothing)
 *              in6 cidr (16 bytes, network byte order), u8 prefix, in6 pool start, in6 end,
 *              u32 n_exclude + in6 each; in6 server_ip, u8 prefix, u8 n_dns + in6 each,
 *              u8 n_search + str each, u32 preferred, u32 valid, u8 rapid commit (0/1),
 *              u8 DUID length + its bytes; RA: u8 enabled (0/1), u32 interval,
 *              u16 router lifetime, in6 prefix, u8 prefix length, u32 MTU;
 *              u32 n_bindings6 + 22 bytes each: MAC (6), in6, ascending address order (no
 *              hostnames: an IPPool has none)
 *            u32 n_bindings, u32 hostname bytes (H)
 *            n_bindings x 10 bytes: MAC (6), IP (u32), in ascending IP order (so an address
 *            is bound once and the same table always gives the same bytes)
 *            when H > 0: n_bindings x u8 hostname length (0 = none; at most 63), then the
 *            H hostname bytes, binding after binding
 *   L-4   4  CRC-32C (Castagnoli) of every byte before it
 *
 * 65 000 bindings without hostnames take 650 000 bytes, plus about a hundred for the rest.
 * Decoding checks everything (lengths and counts against the file's length, ranges, bindable
 * MACs, unique MACs and addresses, options the engine accepts) and refuses the file whole.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/snapshot-internal.h"
#include "lib/ip6.h"
#include "lib/util.h"

/* ---- CRC-32C (Castagnoli, reflected polynomial 0x82f63b78), table-driven, 8 bytes a step ---- */

static uint32_t crc32c_table[8][256]; /* [0]: one byte; [k]: a byte followed by k zero bytes */
static bool crc32c_ready; /* the agent is single-threaded; two initialisers would agree */

static void
crc32c_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (UINT32_C(0x82f63b78) & (0u - (c & 1u)));
		crc32c_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int k = 1; k < 8; k++)
			crc32c_table[k][i] = (crc32c_table[k - 1][i] >> 8) ^
					     crc32c_table[0][crc32c_table[k - 1][i] & 0xffu];
	crc32c_ready = true;
}

uint32_t
agent_snapshot_crc32c(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t c = UINT32_MAX;

	if (!crc32c_ready)
		crc32c_init();
	for (; len >= 8; len -= 8, p += 8) {
		uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
				      (uint32_t)p[3] << 24);

		c = crc32c_table[7][lo & 0xffu] ^ crc32c_table[6][(lo >> 8) & 0xffu] ^
		    crc32c_table[5][(lo >> 16) & 0xffu] ^ crc32c_table[4][lo >> 24] ^
		    crc32c_table[3][p[4]] ^ crc32c_table[2][p[5]] ^ crc32c_table[1][p[6]] ^
		    crc32c_table[0][p[7]];
	}
	while (len-- > 0)
		c = crc32c_table[0][(c ^ *p++) & 0xffu] ^ (c >> 8);
	return ~c;
}

int
snap_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen > 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* ---- what both directions check --------------------------------------------------------- */

static bool
str_ok(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

/* Whether the engine takes o (dhcp_server_set_options on a scratch engine). */
static int
options_accepted(const struct dhcp_options *o, char *err, size_t errlen)
{
	struct dhcp_server *s = NULL;
	int r;

	r = dhcp_server_new(&s);
	if (r < 0)
		return r;
	r = dhcp_server_set_options(s, o);
	dhcp_server_free(s);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return snap_fail(
		    err, errlen, "options refused by the DHCP engine: %s", strerror(-r));
	return 0;
}

/* Whether the DHCPv6 engine takes o and ra (on a scratch engine). */
static int
options6_accepted(const struct agent_config6 *v, char *err, size_t errlen)
{
	struct dhcp6_server *s = NULL;
	int r;

	if ((r = dhcp6_server_new(&s)) < 0)
		return r;
	r = dhcp6_server_set_options(s, &v->opts);
	if (r == 0)
		r = dhcp6_server_set_ra(s, &v->ra);
	dhcp6_server_free(s);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return snap_fail(err, errlen,
		    "ipv6: options or RA refused by the DHCPv6 engine: %s", strerror(-r));
	return 0;
}

/* The ipv6Config part's rules (nothing when there is none). */
static int
config6_check(const struct agent_config6 *v, char *err, size_t errlen)
{
	struct in6_addr net;

	if (!v->enabled)
		return v->n_bindings == 0 && v->n_exclude == 0
			   ? 0
			   : snap_fail(err, errlen, "ipv6: bindings without an ipv6Config");
	if (v->prefix < 8 || v->prefix > 128)
		return snap_fail(err, errlen, "ipv6.prefix: %u, not 8..128", v->prefix);
	ipv6_prefix_network(&v->cidr, v->prefix, &net);
	if (!ipv6_equal(&net, &v->cidr))
		return snap_fail(err, errlen, "ipv6.cidr: host bits set under /%u", v->prefix);
	if (ipv6_cmp(&v->pool_start, &v->pool_end) > 0 ||
	    !ipv6_in_prefix(&v->pool_start, &v->cidr, v->prefix) ||
	    !ipv6_in_prefix(&v->pool_end, &v->cidr, v->prefix))
		return snap_fail(err, errlen, "ipv6 pool range: not inside the CIDR, in order");
	if (v->n_exclude > 0 && v->exclude == NULL)
		return snap_fail(err, errlen, "ipv6.exclude: %zu, no array", v->n_exclude);
	if (v->n_exclude > UINT32_MAX / 16 || v->n_bindings > UINT32_MAX / 32)
		return snap_fail(err, errlen, "ipv6: too many excludes or bindings");
	if (v->opts.n_search > DHCP_MAX_SEARCH)
		return snap_fail(err, errlen, "ipv6.search: %zu domains", v->opts.n_search);
	for (size_t i = 0; i < v->opts.n_search; i++)
		if (!str_ok(v->opts.search[i], sizeof(v->opts.search[i])))
			return snap_fail(err, errlen, "ipv6.search[%zu]: not NUL-terminated", i);
	if (v->opts.duid_len > 255)
		return snap_fail(err, errlen, "ipv6.duid: %zu bytes", v->opts.duid_len);
	return options6_accepted(v, err, errlen);
}

/*
 * The rules a snapshot's configuration part obeys: checked on what is encoded (so a written
 * snapshot always reads back) and on what is decoded.
 */
int
snap_config_check(const struct agent_config *c, char *err, size_t errlen)
{
	const struct dhcp_options *o = &c->opts;
	int r;

	if (!str_ok(c->pool_ns, sizeof(c->pool_ns)) ||
	    !str_ok(c->pool_name, sizeof(c->pool_name)) || !str_ok(c->network, sizeof(c->network)))
		return snap_fail(err, errlen, "pool namespace, name or network not NUL-terminated");
	if (c->prefix > 32)
		return snap_fail(err, errlen, "prefix: %u, at most 32", c->prefix);
	if ((c->cidr & ~ipv4_prefix_mask(c->prefix)) != 0)
		return snap_fail(err, errlen, "cidr: host bits set under /%u", c->prefix);
	if (c->pool_start > c->pool_end)
		return snap_fail(err, errlen, "pool range: start after end");
	if (c->n_exclude > 0 && c->exclude == NULL)
		return snap_fail(err, errlen, "exclude: %zu addresses, no array", c->n_exclude);
	if (c->n_exclude > UINT32_MAX / 4)
		return snap_fail(err, errlen, "exclude: %zu addresses, too many", c->n_exclude);
	if (o->server_ip == 0)
		return snap_fail(err, errlen, "options.server_ip: 0");
	if (o->prefix > 32)
		return snap_fail(err, errlen, "options.prefix: %u, at most 32", o->prefix);
	if (o->n_dns > DHCP_MAX_DNS)
		return snap_fail(
		    err, errlen, "options.dns: %zu servers, at most %d", o->n_dns, DHCP_MAX_DNS);
	if (o->n_ntp > DHCP_MAX_NTP)
		return snap_fail(
		    err, errlen, "options.ntp: %zu servers, at most %d", o->n_ntp, DHCP_MAX_NTP);
	if (!str_ok(o->domain_name, sizeof(o->domain_name)))
		return snap_fail(err, errlen, "options.domain_name: not NUL-terminated");
	if (o->n_search > DHCP_MAX_SEARCH)
		return snap_fail(err, errlen, "options.search: %zu domains, at most %d",
		    o->n_search, DHCP_MAX_SEARCH);
	for (size_t i = 0; i < o->n_search; i++)
		if (!str_ok(o->search[i], sizeof(o->search[i])))
			return snap_fail(err, errlen, "options.search[%zu]: not NUL-terminated", i);
	if (o->mtu != 0 && o->mtu < 68)
		return snap_fail(err, errlen, "options.mtu: %u, below 68", o->mtu);
	if (o->n_routes > DHCP_MAX_ROUTES)
		return snap_fail(
		    err, errlen, "options.routes: %zu, at most %d", o->n_routes, DHCP_MAX_ROUTES);
	for (size_t i = 0; i < o->n_routes; i++)
		if (o->routes[i].prefix > 32)
			return snap_fail(err, errlen, "options.routes[%zu].prefix: %u, at most 32",
			    i, o->routes[i].prefix);
	r = options_accepted(o, err, errlen);
	return r < 0 ? r : config6_check(&c->v6, err, errlen);
}
