/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp/ra.c: Router Advertisement bytes field by field (RFC 4861 §4.2, §4.6), Router
 * Solicitation validation (§6.1.1) on the kernel's own RS and its mutations, the unsolicited
 * Neighbour Advertisement (§4.4, §7.2.6), and whole frames through packet6_finish_icmp and
 * back through packet6_parse.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dhcp/packet6.h"
#include "dhcp/ra.h"
#include "lib/ip6.h"
#include "tests/runner.h"

static const uint8_t mac[6] = {0x02, 0x00, 0x5e, 0x10, 0x20, 0x30};

static struct in6_addr
addr(const char *s)
{
	struct in6_addr a;

	CU_ASSERT_EQUAL_FATAL(ipv6_parse(s, &a), 0);
	return a;
}

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void
test_ra_full(void)
{
	struct ra_params p = {.managed = true,
	    .other = true,
	    .router_lifetime = 0,
	    .prefix = addr("2001:db8:1:2:3::1"), /* host bits set: cleared on the wire */
	    .prefix_len = 64,
	    .prefix_valid = 31536000,
	    .prefix_preferred = 604800,
	    .mtu = 1450};
	uint8_t b[RA_MAX_LEN + 8];
	struct in6_addr net = addr("2001:db8:1:2::");

	memset(b, 0xee, sizeof(b));
	CU_ASSERT_EQUAL_FATAL(ra_build(b, sizeof(b), &p, mac), 64);
	CU_ASSERT_EQUAL(b[0], 134); /* type */
	CU_ASSERT_EQUAL(b[1], 0);   /* code */
	CU_ASSERT_EQUAL(b[2], 0);   /* checksum: left to packet6_finish_icmp */
	CU_ASSERT_EQUAL(b[3], 0);
	CU_ASSERT_EQUAL(b[4], 0);    /* cur hop limit: unspecified */
	CU_ASSERT_EQUAL(b[5], 0xc0); /* M, O; router preference medium, reserved 0 */
	CU_ASSERT_EQUAL(b[6], 0);    /* router lifetime 0: not a default router */
	CU_ASSERT_EQUAL(b[7], 0);
	CU_ASSERT_EQUAL(be32(b + 8), 0);  /* reachable time */
	CU_ASSERT_EQUAL(be32(b + 12), 0); /* retrans timer */
	/* Source Link-Layer Address */
	CU_ASSERT_EQUAL(b[16], 1);
	CU_ASSERT_EQUAL(b[17], 1);
	CU_ASSERT_EQUAL(memcmp(b + 18, mac, 6), 0);
	/* Prefix Information */
	CU_ASSERT_EQUAL(b[24], 3);
	CU_ASSERT_EQUAL(b[25], 4);
	CU_ASSERT_EQUAL(b[26], 64);
	CU_ASSERT_EQUAL(b[27], 0x80); /* L=1, A=0 */
	CU_ASSERT_EQUAL(be32(b + 28), 31536000);
	CU_ASSERT_EQUAL(be32(b + 32), 604800);
	CU_ASSERT_EQUAL(be32(b + 36), 0);
	CU_ASSERT_EQUAL(memcmp(b + 40, &net, 16), 0);
	/* MTU */
	CU_ASSERT_EQUAL(b[56], 5);
	CU_ASSERT_EQUAL(b[57], 1);
	CU_ASSERT_EQUAL(b[58], 0);
	CU_ASSERT_EQUAL(b[59], 0);
	CU_ASSERT_EQUAL(be32(b + 60), 1450);
	CU_ASSERT_EQUAL(b[64], 0xee); /* nothing past it */
	/* one byte short: nothing */
	CU_ASSERT_EQUAL(ra_build(b, 63, &p, mac), 0);
}

static void
test_ra_minimal(void)
{
	struct ra_params p = {.managed = true, .router_lifetime = 1800};
	uint8_t b[RA_MAX_LEN];

	/* no prefix, no MTU: header + SLLAO */
	CU_ASSERT_EQUAL_FATAL(ra_build(b, sizeof(b), &p, mac), 24);
	CU_ASSERT_EQUAL(b[5], 0x80); /* M only */
	CU_ASSERT_EQUAL(b[6] * 256 + b[7], 1800);
	CU_ASSERT_EQUAL(b[16], 1);
	p.managed = false;
	p.other = true;
	CU_ASSERT_EQUAL_FATAL(ra_build(b, sizeof(b), &p, mac), 24);
	CU_ASSERT_EQUAL(b[5], 0x40);
	/* a preferred lifetime past the valid one is written as the valid one */
	p.prefix = addr("fd00:1::");
	p.prefix_len = 48;
	p.prefix_valid = 600;
	p.prefix_preferred = 700;
	CU_ASSERT_EQUAL_FATAL(ra_build(b, sizeof(b), &p, mac), 56);
	CU_ASSERT_EQUAL(b[26], 48);
	CU_ASSERT_EQUAL(be32(b + 28), 600);
	CU_ASSERT_EQUAL(be32(b + 32), 600);
	CU_ASSERT_EQUAL(ra_build(b, 23, &p, mac), 0);
}

/* The RA as a frame to ff02::1: parses back with a good checksum, hop limit 255. */
static void
test_ra_frame(void)
{
	struct ra_params p = {.managed = true,
	    .prefix = addr("2001:db8::"),
	    .prefix_len = 64,
	    .prefix_valid = 3600,
	    .prefix_preferred = 1800};
	struct ip6_frame hdr = {.dst_mac = {0x33, 0x33, 0, 0, 0, 1}, .dst = addr("ff02::1")};
	struct ip6_frame h;
	uint8_t f[PACKET6_ICMP_OFFSET + RA_MAX_LEN];
	size_t n;

	memcpy(hdr.src_mac, mac, 6);
	ipv6_link_local_from_mac(mac, &hdr.src);
	n = ra_build(f + PACKET6_ICMP_OFFSET, RA_MAX_LEN, &p, mac);
	CU_ASSERT_EQUAL_FATAL(n, 56);
	n = packet6_finish_icmp(f, &hdr, n);
	CU_ASSERT_EQUAL_FATAL(n, PACKET6_ICMP_OFFSET + 56);
	CU_ASSERT_EQUAL_FATAL(packet6_parse(f, n, false, &h), 0);
	CU_ASSERT_EQUAL(h.hop_limit, 255);
	CU_ASSERT_EQUAL(h.next_header, IPPROTO_ICMPV6);
	CU_ASSERT_EQUAL(h.payload_len, 56);
	CU_ASSERT_EQUAL(h.payload[0], 134);
	CU_ASSERT(h.payload[2] != 0 || h.payload[3] != 0);
	/* an RA is no RS */
	CU_ASSERT_EQUAL(ra_check_solicit(&h), -EBADMSG);
}

/* The kernel's RS (tests/data/nd-kernel-rs.hex, 16 bytes: header + SLLAO), as parsed. */
static const uint8_t kernel_rs[16] = {
    0x85, 0x00, 0x71, 0xb5, 0, 0, 0, 0, 0x01, 0x01, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56};

static struct ip6_frame
rs_frame(const uint8_t *msg, size_t len)
{
	struct ip6_frame f = {
	    .next_header = IPPROTO_ICMPV6, .hop_limit = 255, .payload = msg, .payload_len = len};

	f.src = addr("fe80::5054:ff:fe12:3456");
	f.dst = addr("ff02::2");
	return f;
}

static void
test_rs_valid(void)
{
	struct ip6_frame f = rs_frame(kernel_rs, sizeof(kernel_rs));
	static const uint8_t want[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
	uint8_t got[6];

	CU_ASSERT_EQUAL(ra_check_solicit(&f), 0);
	CU_ASSERT_EQUAL(ra_solicit_sllao(&f, got), 0);
	CU_ASSERT_EQUAL(memcmp(got, want, 6), 0);
	/* no options at all: valid, no SLLAO */
	f.payload_len = 8;
	CU_ASSERT_EQUAL(ra_check_solicit(&f), 0);
	CU_ASSERT_EQUAL(ra_solicit_sllao(&f, got), -ENOENT);
	/* from the unspecified address without SLLAO: valid */
	f.src = in6addr_any;
	CU_ASSERT_EQUAL(ra_check_solicit(&f), 0);
}

static void
test_rs_invalid(void)
{
	uint8_t m[32];
	struct ip6_frame f;

	/* hop limit not 255: forwarded by a router, not from this link */
	f = rs_frame(kernel_rs, sizeof(kernel_rs));
	f.hop_limit = 254;
	CU_ASSERT_EQUAL(ra_check_solicit(&f), -EBADMSG);
	/* not ICMPv6 */
	f = rs_frame(kernel_rs, sizeof(kernel_rs));
	f.next_header = IPPROTO_UDP;
	CU_ASSERT_EQUAL(ra_check_solicit(&f), -EBADMSG);
	/* code not 0 */
	memcpy(m, kernel_rs, 16);
	m[1] = 1;
	f = rs_frame(m, 16);
	CU_ASSERT_EQUAL(ra_check_solicit(&f), -EBADMSG);
	/* another type */
	memcpy(m, kernel_rs, 16);
	m[0] = 135;
	CU_ASSERT_EQUAL(ra_check_solicit(&f), -EBADMSG);
	/* ICMP length below 8 */
	memcpy(m, kernel_rs, 16);
	for (size_t l = 0; l < 8; l++) {
		f = rs_frame(m, l);
		CU_ASSERT_EQUAL(ra_check_solicit(&f), -EBADMSG);
	}
	/* an option of length 0 */
	m[9] = 0;
	f = rs_frame(m, 16);
	CU_ASSERT_EQUAL(ra_check_solicit(&f), -EBADMSG);
	/* an option running past the message */
	m[9] = 2;
	CU_ASSERT_EQUAL(ra_check_solicit(&f), -EBADMSG);
	/* a lone option byte (no length) */
	m[9] = 1;
	f = rs_frame(m, 17);
	m[16] = 1;
	CU_ASSERT_EQUAL(ra_check_solicit(&f), -EBADMSG);
	/* the unspecified source with an SLLAO */
	f = rs_frame(kernel_rs, sizeof(kernel_rs));
	f.src = in6addr_any;
	CU_ASSERT_EQUAL(ra_check_solicit(&f), -EBADMSG);
	/* ... even when another option comes first */
	memset(m, 0, sizeof(m));
	memcpy(m, kernel_rs, 8);
	m[8] = 14; /* nonce (RFC 3971), 8 bytes */
	m[9] = 1;
	memcpy(m + 16, kernel_rs + 8, 8);
	f = rs_frame(m, 24);
	CU_ASSERT_EQUAL(ra_check_solicit(&f), 0);
	f.src = in6addr_any;
	CU_ASSERT_EQUAL(ra_check_solicit(&f), -EBADMSG);
	/* unknown options alone are fine (RFC 4861 §6.1.1: ignored) */
	f = rs_frame(m, 16);
	f.src = in6addr_any;
	CU_ASSERT_EQUAL(ra_check_solicit(&f), 0);
}

/* Through the frame parser: the captured kernel RS is a valid solicitation. */
static void
test_rs_captured(void)
{
	uint8_t fr[PACKET6_ICMP_OFFSET + sizeof(kernel_rs)];
	struct ip6_frame hdr = rs_frame(kernel_rs, sizeof(kernel_rs)), h;

	memcpy(fr + PACKET6_ICMP_OFFSET, kernel_rs, sizeof(kernel_rs));
	CU_ASSERT_EQUAL_FATAL(packet6_finish_icmp(fr, &hdr, sizeof(kernel_rs)), sizeof(fr));
	/* the kernel's own checksum comes out */
	CU_ASSERT_EQUAL(fr[56], 0x71);
	CU_ASSERT_EQUAL(fr[57], 0xb5);
	CU_ASSERT_EQUAL_FATAL(packet6_parse(fr, sizeof(fr), false, &h), 0);
	CU_ASSERT_EQUAL(ra_check_solicit(&h), 0);
}

static void
test_na(void)
{
	struct in6_addr t = addr("2001:db8::5");
	uint8_t b[NA_LEN + 4];
	struct ip6_frame hdr = {.dst_mac = {0x33, 0x33, 0, 0, 0, 1}, .dst = addr("ff02::1")}, h;
	uint8_t f[PACKET6_ICMP_OFFSET + NA_LEN];

	memset(b, 0xee, sizeof(b));
	CU_ASSERT_EQUAL_FATAL(na_build_unsolicited(b, sizeof(b), &t, mac), NA_LEN);
	CU_ASSERT_EQUAL(b[0], 136);
	CU_ASSERT_EQUAL(b[1], 0);
	CU_ASSERT_EQUAL(b[2], 0);
	CU_ASSERT_EQUAL(b[3], 0);
	CU_ASSERT_EQUAL(b[4], 0x20); /* R=0 S=0 O=1 */
	CU_ASSERT_EQUAL(b[5], 0);
	CU_ASSERT_EQUAL(b[6], 0);
	CU_ASSERT_EQUAL(b[7], 0);
	CU_ASSERT_EQUAL(memcmp(b + 8, &t, 16), 0);
	CU_ASSERT_EQUAL(b[24], 2); /* Target Link-Layer Address */
	CU_ASSERT_EQUAL(b[25], 1);
	CU_ASSERT_EQUAL(memcmp(b + 26, mac, 6), 0);
	CU_ASSERT_EQUAL(b[32], 0xee);
	CU_ASSERT_EQUAL(na_build_unsolicited(b, NA_LEN - 1, &t, mac), 0);
	/* as a frame from the target to all-nodes */
	memcpy(hdr.src_mac, mac, 6);
	hdr.src = t;
	memcpy(f + PACKET6_ICMP_OFFSET, b, NA_LEN);
	CU_ASSERT_EQUAL_FATAL(packet6_finish_icmp(f, &hdr, NA_LEN), sizeof(f));
	CU_ASSERT_EQUAL_FATAL(packet6_parse(f, sizeof(f), false, &h), 0);
	CU_ASSERT_EQUAL(h.hop_limit, 255);
	CU_ASSERT_EQUAL(h.payload[0], 136);
}

static const struct test_case ra_tests[] = {
    {"RA with prefix and MTU, field by field", test_ra_full},
    {"RA without options, flags, lifetimes", test_ra_minimal},
    {"RA frame parses back, hop limit 255", test_ra_frame},
    {"RS: valid ones", test_rs_valid},
    {"RS: RFC 4861 6.1.1 failures", test_rs_invalid},
    {"RS: the kernel's, through the frame parser", test_rs_captured},
    {"unsolicited NA", test_na},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp-ra", .tests = ra_tests},
    {.name = NULL},
};
