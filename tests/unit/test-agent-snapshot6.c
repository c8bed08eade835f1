/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent/snapshot-*.c, format version 2: the ipv6Config part (range, options, RA, the DHCPv6
 * engine's bindings) round-trips; a version 1 file (no such part) still reads, as a pool
 * without IPv6; a damaged IPv6 part is refused whole.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/pool-config.h"
#include "agent/snapshot.h"
#include "crds/ippool.h"
#include "dhcp/dhcp.h"
#include "dhcp/dhcp6.h"
#include "lib/ip6.h"
#include "tests/runner.h"

#define N6 300

static struct in6_addr
a6(const char *s)
{
	struct in6_addr a;

	CU_ASSERT_EQUAL_FATAL(ipv6_parse(s, &a), 0);
	return a;
}

/* A dual-stack pool default/pool-a, through agent_config_from_spec (the DUID included). */
static struct agent_config *
make_config(bool v6)
{
	struct agent_config *c = calloc(1, sizeof(*c));
	struct in6_addr exc[2];
	struct ippool_spec sp;
	char err[AGENT_ERR_MAX] = "";
	char *search[] = {"example.test"};

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	snprintf(c->pool_ns, sizeof(c->pool_ns), "default");
	snprintf(c->pool_name, sizeof(c->pool_name), "pool-a");
	memset(&sp, 0, sizeof(sp));
	snprintf(sp.network_name, sizeof(sp.network_name), "default/net-a");
	sp.cidr_addr = 0x0a010000u;
	sp.prefix = 16;
	sp.server_ip = 0x0a010001u;
	sp.start = 0x0a01000au;
	sp.end = 0x0a01fffau;
	sp.mtu = 1500;
	sp.has_ipv6 = v6;
	sp.ipv6.cidr_addr = a6("2001:db8:a::");
	sp.ipv6.prefix = 64;
	sp.ipv6.server_ip = a6("2001:db8:a::1");
	sp.ipv6.start = a6("2001:db8:a::1:0");
	sp.ipv6.end = a6("2001:db8:a::ffff:ffff");
	exc[0] = a6("2001:db8:a::1:53");
	exc[1] = a6("2001:db8:a::1:54");
	sp.ipv6.exclude = exc;
	sp.ipv6.n_exclude = 2;
	sp.ipv6.dns[0] = a6("2001:db8:a::53");
	sp.ipv6.n_dns = 1;
	sp.ipv6.domain_search = search;
	sp.ipv6.n_domain_search = 1;
	sp.ipv6.preferred_lifetime = 1800;
	sp.ipv6.valid_lifetime = 3600;
	sp.ipv6.rapid_commit = true;
	sp.ipv6.ra.enabled = true;
	sp.ipv6.ra.interval = 60;
	CU_ASSERT_EQUAL_FATAL(agent_config_from_spec(c, &sp, err, sizeof(err)), 0);
	return c;
}

static void
mac_n(uint8_t mac[6], unsigned n)
{
	uint8_t m[6] = {0x52, 0x54, 0, (uint8_t)(n >> 16), (uint8_t)(n >> 8), (uint8_t)n};

	memcpy(mac, m, 6);
}

/* A DHCPv6 engine with n bindings, inserted in descending address order. */
static struct dhcp6_server *
make_engine6(const struct agent_config *c, unsigned n)
{
	struct dhcp6_server *s = NULL;

	CU_ASSERT_EQUAL_FATAL(dhcp6_server_new(&s), 0);
	CU_ASSERT_EQUAL_FATAL(dhcp6_server_set_options(s, &c->v6.opts), 0);
	for (unsigned k = n; k-- > 0;) {
		struct in6_addr ip = a6("2001:db8:a::1:100");
		uint8_t mac[6];

		ip.s6_addr[14] = (uint8_t)(k >> 8);
		ip.s6_addr[15] = (uint8_t)k;
		mac_n(mac, k + 1);
		CU_ASSERT_EQUAL_FATAL(dhcp6_server_set_binding(s, mac, &ip, NULL), 0);
	}
	return s;
}

static void
test_round_trip6(void)
{
	struct agent_config *c = make_config(true), *d = NULL;
	struct dhcp6_server *s6 = make_engine6(c, N6), *t6 = NULL;
	struct agent_snapshot_info info;
	char err[AGENT_ERR_MAX] = "";
	uint8_t *buf = NULL, *buf2 = NULL;
	size_t len = 0, len2 = 0;
	struct in6_addr got;
	uint8_t mac[6];

	CU_ASSERT_EQUAL_FATAL(agent_snapshot_encode_dual(c, NULL, s6, "7", 1, &buf, &len), 0);
	CU_ASSERT_EQUAL(memcmp(buf, "VMDHSNAP\x02\0\0\0", 12), 0);
	CU_ASSERT_EQUAL_FATAL(
	    agent_snapshot_decode(buf, len, "default/pool-a", &d, &info, err, sizeof(err)), 0);
	CU_ASSERT_TRUE_FATAL(d->v6.enabled);
	CU_ASSERT_TRUE(ipv6_equal(&d->v6.cidr, &c->v6.cidr));
	CU_ASSERT_EQUAL(d->v6.prefix, 64u);
	CU_ASSERT_TRUE(ipv6_equal(&d->v6.pool_start, &c->v6.pool_start));
	CU_ASSERT_TRUE(ipv6_equal(&d->v6.pool_end, &c->v6.pool_end));
	CU_ASSERT_EQUAL_FATAL(d->v6.n_exclude, 2u);
	CU_ASSERT_TRUE(ipv6_equal(&d->v6.exclude[1], &c->v6.exclude[1]));
	/* options and RA whole: the DUID, the lifetimes, the search list */
	CU_ASSERT_EQUAL(memcmp(&d->v6.opts, &c->v6.opts, sizeof(c->v6.opts)), 0);
	CU_ASSERT_EQUAL(memcmp(&d->v6.ra, &c->v6.ra, sizeof(c->v6.ra)), 0);
	CU_ASSERT_EQUAL_FATAL(d->v6.n_bindings, N6);
	for (size_t i = 1; i < d->v6.n_bindings; i++)
		CU_ASSERT(ipv6_cmp(&d->v6.bindings[i - 1].ip, &d->v6.bindings[i].ip) < 0);
	/* the same table re-encodes to the same bytes */
	CU_ASSERT_EQUAL_FATAL(dhcp6_server_new(&t6), 0);
	CU_ASSERT_EQUAL(dhcp6_server_set_options(t6, &d->v6.opts), 0);
	for (size_t i = 0; i < d->v6.n_bindings; i++)
		CU_ASSERT_EQUAL(dhcp6_server_set_binding(
				    t6, d->v6.bindings[i].mac, &d->v6.bindings[i].ip, NULL),
		    0);
	mac_n(mac, 7);
	CU_ASSERT_EQUAL(dhcp6_server_get_binding(t6, mac, &got), 0);
	CU_ASSERT_EQUAL(got.s6_addr[15], 6);
	CU_ASSERT_EQUAL_FATAL(agent_snapshot_encode_dual(d, NULL, t6, "7", 1, &buf2, &len2), 0);
	CU_ASSERT_EQUAL(len2, len);
	CU_ASSERT_EQUAL(memcmp(buf2, buf, len), 0);
	free(buf);
	free(buf2);
	dhcp6_server_free(s6);
	dhcp6_server_free(t6);
	agent_config_free(c);
	agent_config_free(d);
}

static void
fix_header(uint8_t *buf, size_t len)
{
	uint32_t crc;

	buf[12] = (uint8_t)len;
	buf[13] = (uint8_t)(len >> 8);
	buf[14] = (uint8_t)(len >> 16);
	buf[15] = (uint8_t)(len >> 24);
	crc = agent_snapshot_crc32c(buf, len - 4);
	for (int i = 0; i < 4; i++)
		buf[len - 4 + i] = (uint8_t)(crc >> (8 * i));
}

/* A version 1 file: version 2 without the ipv6Config part (its one flags byte 0). */
static void
test_version1_read(void)
{
	struct agent_config *c = make_config(false), *d = NULL;
	char err[AGENT_ERR_MAX] = "";
	uint8_t *buf = NULL;
	size_t len = 0, at;

	CU_ASSERT_EQUAL_FATAL(agent_snapshot_encode(c, NULL, "7", 1, &buf, &len), 0);
	/* no IPv4 binding: the file ends with the flags byte, two u32 counts and the checksum */
	at = len - 4 - 8 - 1;
	CU_ASSERT_EQUAL_FATAL(buf[at], 0);
	memmove(buf + at, buf + at + 1, len - at - 1);
	len--;
	buf[8] = 1;
	fix_header(buf, len);
	CU_ASSERT_EQUAL(agent_snapshot_decode(buf, len, NULL, &d, NULL, err, sizeof(err)), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	CU_ASSERT_FALSE(d->v6.enabled);
	CU_ASSERT_EQUAL(d->opts.server_ip, c->opts.server_ip);
	agent_config_free(d);
	/* read as version 2, that file is one byte short: refused */
	buf[8] = 2;
	fix_header(buf, len);
	d = NULL;
	CU_ASSERT_EQUAL(agent_snapshot_decode(buf, len, NULL, &d, NULL, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NULL(d);
	free(buf);
	agent_config_free(c);
}

/* Damage in the ipv6Config part: the whole file refused, the reason named. */
static void
test_damaged_v6_refused(void)
{
	struct agent_config *c = make_config(true), *d = NULL;
	struct dhcp6_server *s6 = make_engine6(c, 3);
	char err[AGENT_ERR_MAX] = "";
	uint8_t *buf = NULL;
	size_t len = 0, flags_at, rec;

	CU_ASSERT_EQUAL_FATAL(agent_snapshot_encode_dual(c, NULL, s6, "", 1, &buf, &len), 0);
	/* the IPv6 records end 8 (IPv4 counts) + 4 (checksum) before the end; the first
	 * record's address is 3 x 22 bytes before that plus the MAC */
	rec = len - 12 - 3 * 22;
	/* two records swapped: not ascending */
	{
		uint8_t tmp[22];
		memcpy(tmp, buf + rec, 22);
		memcpy(buf + rec, buf + rec + 22, 22);
		memcpy(buf + rec + 22, tmp, 22);
	}
	fix_header(buf, len);
	CU_ASSERT_EQUAL(agent_snapshot_decode(buf, len, NULL, &d, NULL, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "ipv6 binding 1: addresses not in ascending order"));
	CU_ASSERT_PTR_NULL(d);
	free(buf);

	/* unknown flag bits */
	CU_ASSERT_EQUAL_FATAL(agent_snapshot_encode(c, NULL, "", 1, &buf, &len), 0);
	CU_ASSERT_EQUAL_FATAL(agent_snapshot_decode(buf, len, NULL, &d, NULL, err, sizeof(err)), 0);
	agent_config_free(d);
	d = NULL;
	/* the flags byte follows the IPv4 options: find it as the first byte that, set to 0x80,
	 * gives the flags error (the layout before it is variable) */
	flags_at = 0;
	for (size_t i = 16; i < len - 4 && flags_at == 0; i++) {
		uint8_t was = buf[i];
		buf[i] = 0x81;
		fix_header(buf, len);
		if (agent_snapshot_decode(buf, len, NULL, NULL, NULL, err, sizeof(err)) ==
			-EINVAL &&
		    strstr(err, "ipv6: unknown flags 0x80") != NULL)
			flags_at = i;
		buf[i] = was;
	}
	CU_ASSERT(flags_at > 0);
	/* every truncation of the file refused */
	for (size_t cut = 1; cut < len; cut += 7) {
		size_t l = len - cut;
		uint8_t *t = malloc(l);
		CU_ASSERT_PTR_NOT_NULL_FATAL(t);
		memcpy(t, buf, l);
		if (l >= 20)
			fix_header(t, l);
		CU_ASSERT_EQUAL(
		    agent_snapshot_decode(t, l, NULL, NULL, NULL, err, sizeof(err)), -EINVAL);
		free(t);
	}
	free(buf);
	dhcp6_server_free(s6);
	agent_config_free(c);
}

static const struct test_case snapshot6_tests[] = {
    {"ipv6Config and IPv6 bindings round-trip", test_round_trip6},
    {"version 1 file read as a pool without IPv6", test_version1_read},
    {"damaged IPv6 part refused", test_damaged_v6_refused},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-snapshot6", .tests = snapshot6_tests},
    {.name = NULL},
};
