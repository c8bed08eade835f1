/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/ip6.c: parse and RFC 5952 format (with a seeded round trip), CIDR parse, comparison,
 * 128-bit conversion, prefix math, EUI-64 link-local, solicited-node and multicast MACs.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ip6.h"
#include "lib/util.h"
#include "tests/runner.h"

static struct in6_addr
a6(const char *s)
{
	struct in6_addr a;

	if (ipv6_parse(s, &a) < 0) {
		fprintf(stderr, "bad test address %s\n", s);
		abort();
	}
	return a;
}

static bool
is(const struct in6_addr *a, const char *s)
{
	struct in6_addr b = a6(s);

	return ipv6_equal(a, &b);
}

static bool
fmt_is(const char *in, const char *want)
{
	struct in6_addr a = a6(in);
	char out[IPV6_STRLEN];

	ipv6_format(&a, out);
	if (strcmp(out, want) == 0)
		return true;
	fprintf(stderr, "format(%s) = %s, want %s\n", in, out, want);
	return false;
}

static void
test_parse(void)
{
	static const char *const good[] = {"::", "::1", "1::", "2001:db8::1", "2001:DB8::1",
	    "2001:0db8:0000:0000:0000:0000:0000:0001", "1:2:3:4:5:6:7:8", "::ffff:192.0.2.1",
	    "fe80::1:2:3:4", "ff02::1:2", "0000:0000:0000:0000:0000:ffff:255.255.255.255"};
	static const char *const bad[] = {"", ":", ":::", "1::2::3", "1:2:3:4:5:6:7:8:9",
	    "12345::", "g::", "2001:db8::1%eth0", "[::1]", " ::1", "::1 ", "2001:db8::/64",
	    "192.0.2.1", "::ffff:192.0.2", "::ffff:192.0.2.256",
	    "1:2:3:4:5:6:7:8:", "0000:0000:0000:0000:0000:0000:0000:0000:0"};
	struct in6_addr a, keep = a6("2001:db8::99");

	for (size_t i = 0; i < ELEMENTSOF(good); i++)
		CU_ASSERT_EQUAL(ipv6_parse(good[i], &a), 0);
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		a = keep;
		CU_ASSERT_EQUAL(ipv6_parse(bad[i], &a), -EINVAL);
		CU_ASSERT(ipv6_equal(&a, &keep)); /* untouched on error */
	}
	CU_ASSERT_EQUAL(ipv6_parse(NULL, &a), -EINVAL);
	a = a6("2001:db8::1");
	CU_ASSERT_EQUAL(a.s6_addr[0], 0x20);
	CU_ASSERT_EQUAL(a.s6_addr[1], 0x01);
	CU_ASSERT_EQUAL(a.s6_addr[3], 0xb8);
	CU_ASSERT_EQUAL(a.s6_addr[15], 0x01);
}

static void
test_format_rfc5952(void)
{
	/* §4.1 leading zeros, §4.3 lower case */
	CU_ASSERT(fmt_is("2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"));
	CU_ASSERT(fmt_is(
	    "2001:db8:aaaa:bbbb:cccc:dddd:eeee:0AAA", "2001:db8:aaaa:bbbb:cccc:dddd:eeee:aaa"));
	/* §4.2.1 the longest run shortened as far as it goes */
	CU_ASSERT(fmt_is("2001:db8:0:0:0:0:2:1", "2001:db8::2:1"));
	/* §4.2.2 a single zero group is not shortened */
	CU_ASSERT(fmt_is("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"));
	CU_ASSERT(fmt_is("2001:db8::1:2:3:4:5", "2001:db8:0:1:2:3:4:5"));
	/* §4.2.3 the longest run; of equal runs the first */
	CU_ASSERT(fmt_is("2001:0:0:1:0:0:0:1", "2001:0:0:1::1"));
	CU_ASSERT(fmt_is("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"));
	/* the edges */
	CU_ASSERT(fmt_is("0:0:0:0:0:0:0:0", "::"));
	CU_ASSERT(fmt_is("0:0:0:0:0:0:0:1", "::1"));
	CU_ASSERT(fmt_is("1:0:0:0:0:0:0:0", "1::"));
	CU_ASSERT(fmt_is("1:2:3:4:5:6:0:0", "1:2:3:4:5:6::"));
	CU_ASSERT(fmt_is("0:0:3:4:5:6:7:8", "::3:4:5:6:7:8"));
	CU_ASSERT(fmt_is("0:1:2:3:4:5:6:7", "0:1:2:3:4:5:6:7"));
	CU_ASSERT(fmt_is("1:2:3:4:5:6:7:0", "1:2:3:4:5:6:7:0"));
	CU_ASSERT(fmt_is(
	    "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"));
	CU_ASSERT(fmt_is("fe80::0:0:1", "fe80::1"));
	/* §5: the dotted quad for IPv4-mapped addresses only */
	CU_ASSERT(fmt_is("::ffff:192.0.2.1", "::ffff:192.0.2.1"));
	CU_ASSERT(fmt_is("::ffff:0:0", "::ffff:0.0.0.0"));
	CU_ASSERT(fmt_is("::2:3", "::2:3")); /* glibc's inet_ntop: "::0.2.0.3" */
	CU_ASSERT(fmt_is("::1.2.3.4", "::102:304"));
	CU_ASSERT(fmt_is("::ffff:0:1.2.3.4", "::ffff:0:102:304"));
	CU_ASSERT(fmt_is("1::ffff:1.2.3.4", "1::ffff:102:304"));
}

static uint64_t rng_state = 99;

static uint64_t
rng(void)
{
	uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* Random addresses with many zero groups: format parses back, and agrees with inet_ntop
 * wherever inet_ntop writes no dotted quad. */
static void
test_format_round_trip(void)
{
	int agreed = 0;

	for (int n = 0; n < 100000; n++) {
		struct in6_addr a, b;
		char out[IPV6_STRLEN], ref[INET6_ADDRSTRLEN];
		uint64_t zero = rng(), val = rng();

		for (unsigned i = 0; i < 8; i++) {
			unsigned g =
			    (zero >> (2 * i)) & 3 ? 0 : (unsigned)(val >> (8 * i)) & 0xffff;

			if (((zero >> (16 + i)) & 7) == 0)
				g = 0xffff;
			a.s6_addr[2 * i] = (uint8_t)(g >> 8);
			a.s6_addr[2 * i + 1] = (uint8_t)g;
		}
		ipv6_format(&a, out);
		CU_ASSERT_FATAL(strlen(out) < IPV6_STRLEN);
		CU_ASSERT_EQUAL_FATAL(ipv6_parse(out, &b), 0);
		CU_ASSERT_FATAL(ipv6_equal(&a, &b));
		CU_ASSERT_FATAL(strchr(out, '.') == NULL || strncmp(out, "::ffff:", 7) == 0);
		inet_ntop(AF_INET6, &a, ref, sizeof(ref));
		if (strchr(ref, '.') == NULL) {
			CU_ASSERT_STRING_EQUAL_FATAL(out, ref);
			agreed++;
		}
	}
	CU_ASSERT(agreed > 90000);
}

static void
test_cidr_parse(void)
{
	static const char *const bad[] = {"2001:db8::", "2001:db8::/", "/64", "2001:db8::/129",
	    "2001:db8::/064", "2001:db8::/00", "2001:db8::/-1", "2001:db8::/+64", "2001:db8::/ 64",
	    "2001:db8::/64 ", "2001:db8::/64/64", "2001:db8::/6a", "10.0.0.0/8",
	    "2001:db8::%eth0/64", "2001:db8::/99999999999999999999999"};
	struct in6_addr a;
	unsigned prefix = 7;

	CU_ASSERT_EQUAL(ipv6_cidr_parse("2001:db8::1/64", &a, &prefix), 0);
	CU_ASSERT(ipv6_equal(&a, &(struct in6_addr){{{0x20, 1, 0x0d, 0xb8, [15] = 1}}}));
	CU_ASSERT_EQUAL(prefix, 64); /* host bits kept */
	CU_ASSERT_EQUAL(ipv6_cidr_parse("::/0", &a, &prefix), 0);
	CU_ASSERT_EQUAL(prefix, 0);
	CU_ASSERT_EQUAL(ipv6_cidr_parse("::1/128", &a, &prefix), 0);
	CU_ASSERT_EQUAL(prefix, 128);
	prefix = 7;
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		CU_ASSERT_EQUAL(ipv6_cidr_parse(bad[i], &a, &prefix), -EINVAL);
		CU_ASSERT_EQUAL(prefix, 7);
	}
	CU_ASSERT_EQUAL(ipv6_cidr_parse(NULL, &a, &prefix), -EINVAL);
}

static void
test_cmp_u128(void)
{
	struct in6_addr a = a6("2001:db8::1"), b = a6("2001:db8::2"), c = a6("2001:db9::"), z = {0};
	ip6_u128 v;

	CU_ASSERT(ipv6_cmp(&a, &b) < 0);
	CU_ASSERT(ipv6_cmp(&c, &b) > 0);
	CU_ASSERT(ipv6_equal(&a, &a));
	CU_ASSERT_FALSE(ipv6_equal(&a, &b));
	CU_ASSERT(ipv6_is_zero(&z));
	CU_ASSERT_FALSE(ipv6_is_zero(&a));

	v = ipv6_to_u128(&a);
	CU_ASSERT((uint64_t)(v >> 64) == UINT64_C(0x20010db800000000));
	CU_ASSERT((uint64_t)v == 1);
	CU_ASSERT(ipv6_to_u128(&b) - v == 1);
	ipv6_from_u128(v + 0xffff, &c);
	CU_ASSERT(fmt_is("2001:db8::1", "2001:db8::1"));
	CU_ASSERT(is(&c, "2001:db8::1:0"));
	/* carry across the 64-bit halves */
	a = a6("2001:db8::ffff:ffff:ffff:ffff");
	ipv6_from_u128(ipv6_to_u128(&a) + 1, &c);
	CU_ASSERT(is(&c, "2001:db8:0:1::"));
	ipv6_from_u128(~(ip6_u128)0, &c);
	CU_ASSERT(is(&c, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"));
	/* numeric order is memcmp order */
	for (int i = 0; i < 1000; i++) {
		ip6_u128 x = (ip6_u128)rng() << 64 | rng(), y = (ip6_u128)rng() << 64 | rng();
		struct in6_addr ax, ay;

		if (i % 3 == 0)
			y = x ^ (ip6_u128)(rng() & 0xff);
		ipv6_from_u128(x, &ax);
		ipv6_from_u128(y, &ay);
		CU_ASSERT_FATAL((ipv6_cmp(&ax, &ay) < 0) == (x < y));
		CU_ASSERT_FATAL(ipv6_to_u128(&ax) == x);
	}
}

static void
test_prefix_math(void)
{
	struct in6_addr a = a6("2001:db8:1234:5678:9abc:def0:1234:5678"), r;
	struct in6_addr net = a6("2001:db8:1234:5600::");

	ipv6_prefix_network(&a, 64, &r);
	CU_ASSERT(is(&r, "2001:db8:1234:5678::"));
	ipv6_prefix_network(&a, 56, &r);
	CU_ASSERT(ipv6_equal(&r, &net));
	ipv6_prefix_network(&a, 0, &r);
	CU_ASSERT(ipv6_is_zero(&r));
	ipv6_prefix_network(&a, 128, &r);
	CU_ASSERT(ipv6_equal(&r, &a));
	ipv6_prefix_network(&a, 1, &r);
	CU_ASSERT(ipv6_is_zero(&r)); /* 0x20: top bit clear */
	ipv6_prefix_network(&a, 127, &r);
	CU_ASSERT(fmt_is(
	    "2001:db8:1234:5678:9abc:def0:1234:5678", "2001:db8:1234:5678:9abc:def0:1234:5678"));
	CU_ASSERT(ipv6_equal(&r, &a)); /* ...5678 is even */

	ipv6_prefix_last(&a, 64, &r);
	CU_ASSERT(is(&r, "2001:db8:1234:5678:ffff:ffff:ffff:ffff"));
	ipv6_prefix_last(&a, 120, &r);
	CU_ASSERT(is(&r, "2001:db8:1234:5678:9abc:def0:1234:56ff"));
	ipv6_prefix_last(&a, 0, &r);
	CU_ASSERT(is(&r, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"));
	ipv6_prefix_last(&a, 128, &r);
	CU_ASSERT(ipv6_equal(&r, &a));
	ipv6_prefix_last(&net, 56, &r);
	CU_ASSERT(is(&r, "2001:db8:1234:56ff:ffff:ffff:ffff:ffff"));

	CU_ASSERT(ipv6_in_prefix(&a, &net, 56));
	CU_ASSERT(ipv6_in_prefix(&a, &a, 128));
	CU_ASSERT(ipv6_in_prefix(&a, &(struct in6_addr){0}, 0));
	CU_ASSERT_FALSE(ipv6_in_prefix(&a, &net, 64));
	r = a6("2001:db8:1234:5700::");
	CU_ASSERT_FALSE(ipv6_in_prefix(&r, &net, 56));
	r = a6("2001:db8:1234:56ff:ffff:ffff:ffff:ffff");
	CU_ASSERT(ipv6_in_prefix(&r, &net, 56));
	/* net's host bits are ignored */
	CU_ASSERT(ipv6_in_prefix(&net, &a, 56));
	/* every prefix length: network <= a <= last, both inside, the sizes right */
	for (unsigned p = 0; p <= 128; p++) {
		struct in6_addr n, l;
		ip6_u128 span;

		ipv6_prefix_network(&a, p, &n);
		ipv6_prefix_last(&a, p, &l);
		span = ipv6_to_u128(&l) - ipv6_to_u128(&n);
		CU_ASSERT_FATAL(ipv6_cmp(&n, &a) <= 0 && ipv6_cmp(&a, &l) <= 0);
		CU_ASSERT_FATAL(ipv6_in_prefix(&n, &a, p) && ipv6_in_prefix(&l, &a, p));
		CU_ASSERT_FATAL(span == (p == 0 ? ~(ip6_u128)0 : ((ip6_u128)1 << (128 - p)) - 1));
		if (p > 0) {
			struct in6_addr past;

			ipv6_from_u128(ipv6_to_u128(&l) + 1, &past);
			CU_ASSERT_FATAL(!ipv6_in_prefix(&past, &a, p));
		}
	}
}

static void
test_link_local_multicast(void)
{
	/* RFC 4291 App. A: 52:54:00:12:34:56 -> interface ID 5054:00ff:fe12:3456 (U/L bit flipped)
	 */
	const uint8_t mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
	const uint8_t mac2[6] = {0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc};
	struct in6_addr ll, sn, a;
	uint8_t m[6];

	ipv6_link_local_from_mac(mac, &ll);
	CU_ASSERT(is(&ll, "fe80::5054:ff:fe12:3456"));
	CU_ASSERT(fmt_is("fe80::5054:ff:fe12:3456", "fe80::5054:ff:fe12:3456"));
	ipv6_link_local_from_mac(mac2, &ll);
	CU_ASSERT(is(&ll, "fe80::21b:21ff:feaa:bbcc"));
	CU_ASSERT(ipv6_is_link_local(&ll));
	CU_ASSERT_FALSE(ipv6_is_multicast(&ll));

	a = a6("febf::1");
	CU_ASSERT(ipv6_is_link_local(&a));
	a = a6("fec0::1");
	CU_ASSERT_FALSE(ipv6_is_link_local(&a));
	a = a6("2001:db8::1");
	CU_ASSERT_FALSE(ipv6_is_link_local(&a));
	CU_ASSERT_FALSE(ipv6_is_multicast(&a));
	a = a6("ff02::1:2");
	CU_ASSERT(ipv6_is_multicast(&a));
	CU_ASSERT_FALSE(ipv6_is_link_local(&a));

	/* RFC 4291 §2.7.1: ff02::1:ff + the low 24 bits */
	a = a6("2001:db8::aa:bbcc:ddee");
	ipv6_solicited_node(&a, &sn);
	CU_ASSERT(is(&sn, "ff02::1:ffcc:ddee"));
	CU_ASSERT(ipv6_is_multicast(&sn));
	ipv6_solicited_node(&ll, &sn);
	CU_ASSERT(is(&sn, "ff02::1:ffaa:bbcc"));

	/* RFC 2464 §7: 33:33 + the low 32 bits */
	ipv6_multicast_mac(&sn, m);
	CU_ASSERT_EQUAL(memcmp(m, (uint8_t[]){0x33, 0x33, 0xff, 0xaa, 0xbb, 0xcc}, 6), 0);
	a = a6("ff02::1:2"); /* All_DHCP_Relay_Agents_and_Servers */
	ipv6_multicast_mac(&a, m);
	CU_ASSERT_EQUAL(memcmp(m, (uint8_t[]){0x33, 0x33, 0, 1, 0, 2}, 6), 0);
	a = a6("ff02::2");
	ipv6_multicast_mac(&a, m);
	CU_ASSERT_EQUAL(memcmp(m, (uint8_t[]){0x33, 0x33, 0, 0, 0, 2}, 6), 0);
}

static void
test_hash(void)
{
	struct in6_addr a = a6("2001:db8::1"), b = a6("2001:db8::1"), c = a6("2001:db8::2");
	unsigned buckets[64] = {0}, max = 0;

	CU_ASSERT_EQUAL(ipv6_hash(&a), ipv6_hash(&b));
	CU_ASSERT_NOT_EQUAL(ipv6_hash(&a), ipv6_hash(&c));
	/* sequential addresses spread over the high bits (what the tables index by) */
	for (uint32_t i = 0; i < 64 * 256; i++) {
		ipv6_from_u128(ipv6_to_u128(&a) + i, &c);
		buckets[ipv6_hash(&c) >> 58]++;
	}
	for (size_t i = 0; i < 64; i++)
		max = MAX(max, buckets[i]);
	CU_ASSERT(max < 256 * 2);
}

static const struct test_case ip6_tests[] = {
    {"parse accepts inet_pton's text, nothing else", test_parse},
    {"format is RFC 5952", test_format_rfc5952},
    {"format round trip, agrees with inet_ntop", test_format_round_trip},
    {"CIDR parse", test_cidr_parse},
    {"compare and 128-bit numbers", test_cmp_u128},
    {"prefix network, last, membership", test_prefix_math},
    {"EUI-64 link-local, solicited-node, multicast MAC", test_link_local_multicast},
    {"hash", test_hash},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "lib-ip6", .tests = ip6_tests},
    {.name = NULL},
};
