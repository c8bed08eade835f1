/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp/packet6.c: frames captured from real senders (ISC dhclient -6's SOLICIT, the kernel's
 * router solicitation and MLDv2 report) parse, with checksums against the values tcpdump
 * computed; built frames parse back; truncated, padded and odd frames give the documented
 * errors. An independent RFC 1071 sum checks the built checksums.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dhcp/packet6.h"
#include "lib/ip6.h"
#include "tests/runner.h"

#define SOLICIT_LEN 114 /* the dhclient capture: 14 + 40 + 8 + 52 */

/* tests/data/NAME: hex text, '#' comment lines. Returns the byte count, 0 on error. */
static size_t
load_hex(const char *name, uint8_t *out, size_t cap)
{
	char path[512], line[512];
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", test_data_dir(), name);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (line[0] == '#')
			continue;
		for (char *p = line; p[0] != '\0' && p[0] != '\n' && p[1] != '\0'; p += 2) {
			unsigned v;

			if (n >= cap || sscanf(p, "%2x", &v) != 1) {
				fclose(f);
				return 0;
			}
			out[n++] = (uint8_t)v;
		}
	}
	fclose(f);
	return n;
}

static struct in6_addr
addr(const char *s)
{
	struct in6_addr a;

	CU_ASSERT_EQUAL_FATAL(ipv6_parse(s, &a), 0);
	return a;
}

/* Independent check: the one's-complement sum of pseudo-header + upper layer is 0xffff. */
static unsigned
sum16(const uint8_t *p, size_t n, unsigned long acc)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		acc += (unsigned long)(p[i] * 256 + p[i + 1]);
	if (n & 1)
		acc += (unsigned long)p[n - 1] * 256;
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
	return (unsigned)acc;
}

static bool
upper_checksum_ok(const uint8_t *frame, uint8_t nh, size_t off, size_t len)
{
	unsigned long acc = sum16(frame + 22, 32, 0) + (len >> 16) + (len & 0xffff) + nh;

	return sum16(frame + off, len, acc) == 0xffff;
}

static const uint8_t client_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};

static void
test_dhclient_solicit(void)
{
	uint8_t f[256];
	size_t n = load_hex("dhcp6-dhclient-solicit.hex", f, sizeof(f));
	struct ip6_frame h;
	struct in6_addr src = addr("fe80::5054:ff:fe12:3456"), dst = addr("ff02::1:2");
	static const uint8_t mc[6] = {0x33, 0x33, 0x00, 0x01, 0x00, 0x02};

	CU_ASSERT_EQUAL_FATAL(n, SOLICIT_LEN);
	CU_ASSERT_EQUAL_FATAL(packet6_parse(f, n, false, &h), 0);
	CU_ASSERT_EQUAL(memcmp(h.src_mac, client_mac, 6), 0);
	CU_ASSERT_EQUAL(memcmp(h.dst_mac, mc, 6), 0);
	CU_ASSERT(ipv6_equal(&h.src, &src));
	CU_ASSERT(ipv6_equal(&h.dst, &dst));
	CU_ASSERT_EQUAL(h.next_header, IPPROTO_UDP);
	CU_ASSERT_EQUAL(h.hop_limit, 1); /* dhclient's multicast hop limit */
	CU_ASSERT_EQUAL(h.sport, 546);
	CU_ASSERT_EQUAL(h.dport, 547);
	CU_ASSERT_EQUAL(h.payload_len, 52);
	CU_ASSERT_PTR_EQUAL(h.payload, f + PACKET6_UDP_OFFSET);
	CU_ASSERT_EQUAL(h.payload[0], 1); /* SOLICIT */
	CU_ASSERT_EQUAL(h.payload[1], 0xdb);
	CU_ASSERT_EQUAL(h.payload[3], 0xf5);
	/* tcpdump's checksum for it, through ours with the field zeroed */
	f[60] = f[61] = 0;
	CU_ASSERT_EQUAL(packet6_checksum(&src, &dst, IPPROTO_UDP, f + 54, 60), 0x4e3f);
}

/* As veth delivers it: the checksum field holds the pseudo-header sum (CHECKSUM_PARTIAL). */
static void
test_dhclient_solicit_partial(void)
{
	uint8_t f[256];
	size_t n = load_hex("dhcp6-dhclient-solicit-partial.hex", f, sizeof(f));
	struct ip6_frame h;

	CU_ASSERT_EQUAL_FATAL(n, SOLICIT_LEN);
	CU_ASSERT_EQUAL(packet6_parse(f, n, false, &h), -EILSEQ);
	CU_ASSERT_EQUAL_FATAL(packet6_parse(f, n, true, &h), 0);
	CU_ASSERT_EQUAL(h.payload_len, 52);
	CU_ASSERT_EQUAL(h.payload[0], 1);
	/* a zero checksum: refused (RFC 8200 §8.1), unless the kernel says not ready */
	f[60] = f[61] = 0;
	CU_ASSERT_EQUAL(packet6_parse(f, n, false, &h), -EILSEQ);
	CU_ASSERT_EQUAL(packet6_parse(f, n, true, &h), 0);
}

/* finish_udp with the capture's headers rebuilds the capture, but for the flow label. */
static void
test_rebuild_dhclient_solicit(void)
{
	uint8_t want[256], f[256];
	size_t n = load_hex("dhcp6-dhclient-solicit.hex", want, sizeof(want));
	struct ip6_frame h;

	CU_ASSERT_EQUAL_FATAL(n, SOLICIT_LEN);
	CU_ASSERT_EQUAL_FATAL(packet6_parse(want, n, false, &h), 0);
	memset(f, 0xaa, sizeof(f));
	memcpy(f + PACKET6_UDP_OFFSET, h.payload, h.payload_len);
	CU_ASSERT_EQUAL_FATAL(packet6_finish_udp(f, &h, h.payload_len), n);
	CU_ASSERT_EQUAL(memcmp(f, want, 15), 0);
	CU_ASSERT_EQUAL(f[15], 0); /* flow label 0 (dhclient's kernel set 0x40422) */
	CU_ASSERT_EQUAL(f[16], 0);
	CU_ASSERT_EQUAL(f[17], 0);
	CU_ASSERT_EQUAL(memcmp(f + 18, want + 18, n - 18), 0);
}

static void
test_kernel_rs(void)
{
	uint8_t f[128];
	size_t n = load_hex("nd-kernel-rs.hex", f, sizeof(f));
	struct ip6_frame h;
	struct in6_addr src = addr("fe80::5054:ff:fe12:3456"), dst = addr("ff02::2");

	CU_ASSERT_EQUAL_FATAL(n, 70);
	CU_ASSERT_EQUAL_FATAL(packet6_parse(f, n, false, &h), 0);
	CU_ASSERT_EQUAL(h.next_header, IPPROTO_ICMPV6);
	CU_ASSERT_EQUAL(h.hop_limit, 255);
	CU_ASSERT(ipv6_equal(&h.src, &src));
	CU_ASSERT(ipv6_equal(&h.dst, &dst));
	CU_ASSERT_EQUAL(h.sport, 0);
	CU_ASSERT_EQUAL(h.payload_len, 16);
	CU_ASSERT_PTR_EQUAL(h.payload, f + PACKET6_ICMP_OFFSET);
	CU_ASSERT_EQUAL(h.payload[0], 133);
	/* the kernel's checksum, and csum_not_ready does not skip an ICMPv6 one */
	CU_ASSERT_EQUAL(f[56], 0x71);
	CU_ASSERT_EQUAL(f[57], 0xb5);
	f[57] ^= 1;
	CU_ASSERT_EQUAL(packet6_parse(f, n, false, &h), -EILSEQ);
	CU_ASSERT_EQUAL(packet6_parse(f, n, true, &h), -EILSEQ);
	/* rebuilt: the same bytes */
	{
		uint8_t g[128];

		f[57] ^= 1;
		CU_ASSERT_EQUAL_FATAL(packet6_parse(f, n, false, &h), 0);
		memset(g, 0, sizeof(g));
		memcpy(g + PACKET6_ICMP_OFFSET, h.payload, h.payload_len);
		g[PACKET6_ICMP_OFFSET + 2] = 0x12; /* whatever the field held */
		h.hop_limit = 0;		   /* the ND default: 255 */
		CU_ASSERT_EQUAL_FATAL(packet6_finish_icmp(g, &h, h.payload_len), n);
		CU_ASSERT_EQUAL(memcmp(g, f, n), 0);
	}
}

/* The kernel's MLDv2 report: a Hop-by-Hop Options header (Router Alert) before ICMPv6. */
static void
test_hop_by_hop(void)
{
	uint8_t f[128];
	size_t n = load_hex("mld-kernel-report.hex", f, sizeof(f));
	struct ip6_frame h;

	CU_ASSERT_EQUAL_FATAL(n, 90);
	CU_ASSERT_EQUAL(f[20], 0); /* next header: Hop-by-Hop */
	CU_ASSERT_EQUAL_FATAL(packet6_parse(f, n, false, &h), 0);
	CU_ASSERT_EQUAL(h.next_header, IPPROTO_ICMPV6);
	CU_ASSERT_EQUAL(h.hop_limit, 1);
	CU_ASSERT(ipv6_is_zero(&h.src));
	CU_ASSERT_PTR_EQUAL(h.payload, f + PACKET6_ICMP_OFFSET + 8);
	CU_ASSERT_EQUAL(h.payload_len, 28);
	CU_ASSERT_EQUAL(h.payload[0], 143);
	/* the Hop-by-Hop header cut short: its length runs past the payload */
	f[55] = 4; /* 40 bytes */
	CU_ASSERT_EQUAL(packet6_parse(f, n, false, &h), -EBADMSG);
	/* a payload too short for even the first 8 bytes of it */
	f[55] = 0;
	f[18] = 0;
	f[19] = 6;
	CU_ASSERT_EQUAL(packet6_parse(f, n, false, &h), -EBADMSG);
	/* two Hop-by-Hop headers: the second is not walked (RFC 8200 §4.1: only first) */
	f[19] = 36;
	f[54] = 0;
	CU_ASSERT_EQUAL(packet6_parse(f, n, false, &h), -EPROTO);
}

/* Other extension headers are not walked: -EPROTO. */
static void
test_other_extension_headers(void)
{
	static const uint8_t nhs[] = {43 /* Routing */, 44 /* Fragment */, 60 /* Dest Opts */,
	    50 /* ESP */, 59 /* No Next Header */, 6 /* TCP */};
	uint8_t f[256];
	size_t n = load_hex("dhcp6-dhclient-solicit.hex", f, sizeof(f));
	struct ip6_frame h;

	CU_ASSERT_EQUAL_FATAL(n, SOLICIT_LEN);
	for (size_t i = 0; i < sizeof(nhs); i++) {
		f[20] = nhs[i];
		CU_ASSERT_EQUAL(packet6_parse(f, n, false, &h), -EPROTO);
	}
}

static void
test_truncated_and_odd(void)
{
	uint8_t f[256], g[256];
	size_t n = load_hex("dhcp6-dhclient-solicit.hex", f, sizeof(f));
	struct ip6_frame h;

	CU_ASSERT_EQUAL_FATAL(n, SOLICIT_LEN);
	/* every truncation is refused, never read past */
	for (size_t l = 0; l < n; l++) {
		int r = packet6_parse(f, l, false, &h);

		CU_ASSERT(r == -EBADMSG);
		if (r != -EBADMSG)
			printf("len %zu: %d\n", l, r);
	}
	/* trailing Ethernet padding: the IPv6 payload length wins */
	memcpy(g, f, n);
	memset(g + n, 0, 16);
	CU_ASSERT_EQUAL(packet6_parse(g, n + 16, false, &h), 0);
	CU_ASSERT_EQUAL(h.payload_len, 52);
	/* not IPv6: ethertype, version */
	memcpy(g, f, n);
	g[12] = 0x08;
	g[13] = 0x00;
	CU_ASSERT_EQUAL(packet6_parse(g, n, false, &h), -EPROTO);
	memcpy(g, f, n);
	g[14] = 0x40;
	CU_ASSERT_EQUAL(packet6_parse(g, n, false, &h), -EPROTO);
	/* a VLAN tag in front is not ours (the socket sits on the untagged port) */
	CU_ASSERT_EQUAL(
	    packet6_parse(
		(const uint8_t[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x81, 0}, 14, false, &h),
	    -EPROTO);
	/* UDP length: below 8, past the IPv6 payload, 0 (jumbogram) */
	memcpy(g, f, n);
	g[59] = 7;
	CU_ASSERT_EQUAL(packet6_parse(g, n, true, &h), -EBADMSG);
	g[59] = 61;
	CU_ASSERT_EQUAL(packet6_parse(g, n, true, &h), -EBADMSG);
	g[59] = 0;
	CU_ASSERT_EQUAL(packet6_parse(g, n, true, &h), -EBADMSG);
	/* a UDP length shorter than the IPv6 payload: the datagram is the UDP length */
	g[59] = 60 - 4;
	CU_ASSERT_EQUAL(packet6_parse(g, n, true, &h), 0);
	CU_ASSERT_EQUAL(h.payload_len, 48);
	/* IPv6 payload below a UDP header */
	memcpy(g, f, n);
	g[19] = 4;
	CU_ASSERT_EQUAL(packet6_parse(g, n, true, &h), -EBADMSG);
	/* a corrupted payload byte: bad checksum */
	memcpy(g, f, n);
	g[100] ^= 0x40;
	CU_ASSERT_EQUAL(packet6_parse(g, n, false, &h), -EILSEQ);
	CU_ASSERT_EQUAL(packet6_parse(g, n, true, &h), 0);
	/* ICMPv6 shorter than type/code/checksum */
	memcpy(g, f, n);
	g[20] = 58;
	g[19] = 3;
	CU_ASSERT_EQUAL(packet6_parse(g, n, false, &h), -EBADMSG);
}

static void
test_build_udp_round_trip(void)
{
	static const uint8_t server_mac[6] = {0x02, 0, 0, 0, 0, 1};
	struct ip6_frame hdr = {.src = addr("fe80::1"),
	    .dst = addr("fe80::5054:ff:fe12:3456"),
	    .sport = 547,
	    .dport = 546};
	struct ip6_frame h;

	memcpy(hdr.src_mac, server_mac, 6);
	memcpy(hdr.dst_mac, client_mac, 6);
	/* every payload length, odd ones included */
	for (size_t len = 0; len < 300; len += 7) {
		uint8_t f[512];
		size_t n;

		for (size_t i = 0; i < len; i++)
			f[PACKET6_UDP_OFFSET + i] = (uint8_t)(i * 37 + len);
		n = packet6_finish_udp(f, &hdr, len);
		CU_ASSERT_EQUAL_FATAL(n, PACKET6_UDP_OFFSET + len);
		CU_ASSERT_EQUAL(f[12], 0x86);
		CU_ASSERT_EQUAL(f[13], 0xdd);
		CU_ASSERT_EQUAL(f[14], 0x60);
		CU_ASSERT_EQUAL(f[18] * 256 + f[19], 8 + len);
		CU_ASSERT_EQUAL(f[20], 17);
		CU_ASSERT_EQUAL(f[21], PACKET6_HOP_LIMIT_UDP);
		CU_ASSERT(f[60] != 0 || f[61] != 0);
		CU_ASSERT(upper_checksum_ok(f, 17, PACKET6_ICMP_OFFSET, 8 + len));
		CU_ASSERT_EQUAL_FATAL(packet6_parse(f, n, false, &h), 0);
		CU_ASSERT_EQUAL(memcmp(h.src_mac, server_mac, 6), 0);
		CU_ASSERT_EQUAL(memcmp(h.dst_mac, client_mac, 6), 0);
		CU_ASSERT(ipv6_equal(&h.src, &hdr.src));
		CU_ASSERT(ipv6_equal(&h.dst, &hdr.dst));
		CU_ASSERT_EQUAL(h.sport, 547);
		CU_ASSERT_EQUAL(h.dport, 546);
		CU_ASSERT_EQUAL(h.payload_len, len);
		CU_ASSERT_PTR_EQUAL(h.payload, f + PACKET6_UDP_OFFSET);
	}
	/* a hop limit given is written as is */
	{
		uint8_t f[128] = {0};

		hdr.hop_limit = 8;
		CU_ASSERT_EQUAL(packet6_finish_udp(f, &hdr, 10), PACKET6_UDP_OFFSET + 10);
		CU_ASSERT_EQUAL(f[21], 8);
	}
	/* too long for the 16-bit UDP length: nothing */
	CU_ASSERT_EQUAL(packet6_finish_udp(NULL, &hdr, 65536 - 8), 0);
	CU_ASSERT_EQUAL(packet6_finish_icmp(NULL, &hdr, 65536), 0);
	CU_ASSERT_EQUAL(packet6_finish_icmp(NULL, &hdr, 3), 0);
}

/* A datagram whose checksum computes to 0 is sent with 0xffff (RFC 8200 §8.1). */
static void
test_build_udp_zero_checksum(void)
{
	struct ip6_frame hdr = {
	    .src = addr("fe80::1"), .dst = addr("fe80::2"), .sport = 547, .dport = 546};
	uint8_t f[128] = {0};
	struct ip6_frame h;
	uint16_t c;

	/* two payload bytes that make the sum come out at 0xffff -> checksum 0 */
	CU_ASSERT_FATAL(packet6_finish_udp(f, &hdr, 2) != 0);
	c = (uint16_t)(f[60] << 8 | f[61]);
	/* the checksum sits in the payload now: moving it there cancels the sum */
	f[62] = (uint8_t)(c >> 8);
	f[63] = (uint8_t)c;
	CU_ASSERT_EQUAL_FATAL(packet6_finish_udp(f, &hdr, 2), 64);
	CU_ASSERT_EQUAL(f[60], 0xff);
	CU_ASSERT_EQUAL(f[61], 0xff);
	CU_ASSERT(upper_checksum_ok(f, 17, PACKET6_ICMP_OFFSET, 10));
	CU_ASSERT_EQUAL(packet6_parse(f, 64, false, &h), 0);
}

static const struct test_case packet6_tests[] = {
    {"dhclient -6 SOLICIT capture parses, tcpdump's checksum", test_dhclient_solicit},
    {"CHECKSUM_PARTIAL capture: only with csum_not_ready", test_dhclient_solicit_partial},
    {"finish_udp rebuilds the capture", test_rebuild_dhclient_solicit},
    {"kernel router solicitation: parse, checksum, rebuild", test_kernel_rs},
    {"MLD report: one Hop-by-Hop header walked", test_hop_by_hop},
    {"other extension headers: -EPROTO", test_other_extension_headers},
    {"truncated, padded and odd frames", test_truncated_and_odd},
    {"build -> parse round trips", test_build_udp_round_trip},
    {"a zero UDP checksum is sent as 0xffff", test_build_udp_zero_checksum},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp6-packet", .tests = packet6_tests},
    {.name = NULL},
};
