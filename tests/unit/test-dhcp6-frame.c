/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp/server6.c's frame path (dhcp6_handle_frame): a DHCPv6 message in an Ethernet/IPv6/UDP
 * frame is answered to the client's link-local address, port 546, from ours; a relayed one to
 * the relay, port 547; a Router Solicitation gets an RA when RA is on; bad frames are drops.
 */
#include <errno.h>
#include <string.h>

#include "dhcp/dhcp6-internal.h"
#include "dhcp/packet6.h"
#include "dhcp/ra.h"
#include "lib/buf.h"
#include "lib/ip6.h"
#include "tests/runner.h"

static const uint8_t vm_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint8_t hw[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};

static struct dhcp6_server *srv;
static struct in6_addr vm_addr, vm_ll, our_ll, all_dhcp;
static uint8_t frame[DHCP6_RX_BUF], out[DHCP6_TX_BUF];

static struct in6_addr
a6(const char *s)
{
	struct in6_addr a;

	CU_ASSERT_FATAL(ipv6_parse(s, &a) == 0);
	return a;
}

static void
setup(void)
{
	struct dhcp6_options o = {0};

	o.server_ip = a6("2001:db8::1");
	o.prefix = 64;
	o.duid_len = dhcp6_duid_for_pool("default", "pool", o.duid);
	vm_addr = a6("2001:db8::100");
	ipv6_link_local_from_mac(vm_mac, &vm_ll);
	our_ll = a6("fe80::1");
	all_dhcp = a6("ff02::1:2");
	CU_ASSERT_FATAL(dhcp6_server_new(&srv) == 0);
	CU_ASSERT_FATAL(dhcp6_server_set_options(srv, &o) == 0);
	CU_ASSERT_FATAL(dhcp6_server_set_binding(srv, vm_mac, &vm_addr, "vm") == 0);
	dhcp6_server_set_hwaddr(srv, hw, &our_ll);
}

static void
teardown(void)
{
	srv = dhcp6_server_free(srv);
}

/* A SOLICIT (client id, one IA_NA) at frame + PACKET6_UDP_OFFSET; returns its length. */
static size_t
solicit(uint8_t *p)
{
	static const uint8_t msg[] = {DHCP6_MSG_SOLICIT, 1, 2, 3, 0, 1, 0, 10, 0, 3, 0, 1, 0x52,
	    0x54, 0x00, 0x12, 0x34, 0x56, 0, 3, 0, 12, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};

	memcpy(p, msg, sizeof(msg));
	return sizeof(msg);
}

static size_t
udp_frame(const uint8_t *src_mac, const struct in6_addr *src, const struct in6_addr *dst,
    uint16_t dport, size_t payload_len)
{
	struct ip6_frame h = {.src = *src, .dst = *dst, .sport = 546, .dport = dport};

	memcpy(h.src_mac, src_mac, 6);
	ipv6_multicast_mac(dst, h.dst_mac);
	return packet6_finish_udp(frame, &h, payload_len);
}

static void
test_udp_reply(void)
{
	struct ip6_frame f;
	size_t len, n;
	int type;

	setup();
	len = udp_frame(vm_mac, &vm_ll, &all_dhcp, 547, solicit(frame + PACKET6_UDP_OFFSET));
	n = dhcp6_handle_frame(srv, frame, len, false, 1, out, &type);
	CU_ASSERT_FATAL(n > PACKET6_UDP_OFFSET);
	CU_ASSERT_EQUAL(type, DHCP6_MSG_ADVERTISE);
	CU_ASSERT_FATAL(packet6_parse(out, n, false, &f) == 0);
	CU_ASSERT(memcmp(f.dst_mac, vm_mac, 6) == 0);
	CU_ASSERT(memcmp(f.src_mac, hw, 6) == 0);
	CU_ASSERT(ipv6_equal(&f.dst, &vm_ll));
	CU_ASSERT(ipv6_equal(&f.src, &our_ll));
	CU_ASSERT(f.sport == 547 && f.dport == 546);
	CU_ASSERT_EQUAL(f.payload[0], DHCP6_MSG_ADVERTISE);
	/* a bad checksum, another port: counted drops */
	len = udp_frame(vm_mac, &vm_ll, &all_dhcp, 547, solicit(frame + PACKET6_UDP_OFFSET));
	frame[len - 1] ^= 0xff;
	CU_ASSERT_EQUAL(dhcp6_handle_frame(srv, frame, len, false, 1, out, &type), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_BAD_CHECKSUM], 1);
	len = udp_frame(vm_mac, &vm_ll, &all_dhcp, 548, solicit(frame + PACKET6_UDP_OFFSET));
	CU_ASSERT_EQUAL(dhcp6_handle_frame(srv, frame, len, false, 1, out, &type), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_NOT_FOR_US], 1);
	CU_ASSERT_EQUAL(dhcp6_handle_frame(srv, frame, 20, false, 1, out, &type), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_NOT_FOR_US], 2);
	/* standby: dropped before parsing */
	dhcp6_server_set_standby(srv, true);
	len = udp_frame(vm_mac, &vm_ll, &all_dhcp, 547, solicit(frame + PACKET6_UDP_OFFSET));
	CU_ASSERT_EQUAL(dhcp6_handle_frame(srv, frame, len, false, 1, out, &type), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_NOT_SERVING], 1);
	teardown();
}

static void
test_relay_reply(void)
{
	static const uint8_t relay_mac[6] = {0x02, 0, 0, 0, 0, 0x99};
	struct in6_addr relay = a6("2001:db8::2"), server = a6("2001:db8::1");
	uint8_t *p = frame + PACKET6_UDP_OFFSET, inner[64];
	size_t n_in = solicit(inner), len, n;
	struct ip6_frame f;
	int type;

	setup();
	memset(p, 0, 34);
	p[0] = DHCP6_MSG_RELAY_FORW;
	memcpy(p + 2, &relay, 16);
	memcpy(p + 18, &vm_ll, 16);
	memcpy(p + 34, (uint8_t[]){0, 79, 0, 8, 0, 1}, 6);
	memcpy(p + 40, vm_mac, 6);
	be16_put(p + 46, DHCP6_OPT_RELAY_MSG);
	be16_put(p + 48, (uint16_t)n_in);
	memcpy(p + 50, inner, n_in);
	len = udp_frame(relay_mac, &relay, &server, 547, 50 + n_in);
	n = dhcp6_handle_frame(srv, frame, len, false, 1, out, &type);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(type, DHCP6_MSG_ADVERTISE);
	CU_ASSERT_FATAL(packet6_parse(out, n, false, &f) == 0);
	CU_ASSERT(memcmp(f.dst_mac, relay_mac, 6) == 0);
	CU_ASSERT(ipv6_equal(&f.dst, &relay));
	CU_ASSERT(ipv6_equal(&f.src, &server)); /* unicast to us: answered from that address */
	CU_ASSERT(f.sport == 547 && f.dport == 547);
	CU_ASSERT_EQUAL(f.payload[0], DHCP6_MSG_RELAY_REPL);
	teardown();
}

static size_t
rs_frame(const struct in6_addr *src, bool sllao)
{
	struct in6_addr all_routers = a6("ff02::2");
	struct ip6_frame h = {.src = *src, .dst = all_routers};
	uint8_t *p = frame + PACKET6_ICMP_OFFSET;
	size_t n = 8;

	memset(p, 0, 16);
	p[0] = ICMP6_ROUTER_SOLICIT_;
	if (sllao) {
		p[8] = 1;
		p[9] = 1;
		memcpy(p + 10, vm_mac, 6);
		n = 16;
	}
	memcpy(h.src_mac, vm_mac, 6);
	ipv6_multicast_mac(&all_routers, h.dst_mac);
	return packet6_finish_icmp(frame, &h, n);
}

static void
test_router_solicit(void)
{
	struct dhcp6_ra ra = {.enabled = true, .interval = 200, .prefix_len = 64};
	struct in6_addr unspec = {0}, all_nodes = a6("ff02::1");
	struct ip6_frame f;
	size_t len, n;
	int type = -1;

	setup();
	ra.prefix = a6("2001:db8::");
	len = rs_frame(&vm_ll, true);
	/* RA off: counted, not answered */
	CU_ASSERT_EQUAL(dhcp6_handle_frame(srv, frame, len, false, 1, out, &type), 0);
	CU_ASSERT_EQUAL(srv->stats.rs_rx, 1);
	CU_ASSERT_EQUAL(dhcp6_server_set_ra(srv, &ra), 0);
	n = dhcp6_handle_frame(srv, frame, len, false, 1, out, &type);
	CU_ASSERT_FATAL(n > PACKET6_ICMP_OFFSET);
	CU_ASSERT_EQUAL(type, 0);
	CU_ASSERT_FATAL(packet6_parse(out, n, false, &f) == 0);
	CU_ASSERT_EQUAL(f.next_header, IPPROTO_ICMPV6);
	CU_ASSERT_EQUAL(f.hop_limit, 255);
	CU_ASSERT_EQUAL(f.payload[0], ICMP6_ROUTER_ADVERT_);
	CU_ASSERT_EQUAL(f.payload[5] & 0xc0, 0xc0); /* M and O */
	CU_ASSERT(ipv6_equal(&f.dst, &vm_ll));	    /* unicast to the soliciting host */
	CU_ASSERT(memcmp(f.dst_mac, vm_mac, 6) == 0);
	CU_ASSERT(ipv6_equal(&f.src, &our_ll));
	/* from the unspecified address: to all-nodes */
	len = rs_frame(&unspec, false);
	n = dhcp6_handle_frame(srv, frame, len, false, 1, out, &type);
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_FATAL(packet6_parse(out, n, false, &f) == 0);
	CU_ASSERT(ipv6_equal(&f.dst, &all_nodes));
	/* an RS from :: with an SLLAO is invalid (RFC 4861 §6.1.1) */
	len = rs_frame(&unspec, true);
	CU_ASSERT_EQUAL(dhcp6_handle_frame(srv, frame, len, false, 1, out, &type), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_BAD_RS], 1);
	/* another ICMPv6 message (an echo request): not ours, not a solicitation */
	len = rs_frame(&vm_ll, false);
	frame[PACKET6_ICMP_OFFSET] = 128;
	len = packet6_finish_icmp(frame,
	    &(struct ip6_frame){
		.src = vm_ll, .dst = all_nodes, .dst_mac = {0x33, 0x33, 0, 0, 0, 1}},
	    len - PACKET6_ICMP_OFFSET);
	CU_ASSERT_EQUAL(dhcp6_handle_frame(srv, frame, len, false, 1, out, &type), 0);
	CU_ASSERT_EQUAL(srv->stats.rs_rx, 4);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_NOT_FOR_US], 1);
	teardown();
}

static const struct test_case frame_tests[] = {
    {"udp reply", test_udp_reply},
    {"relay reply", test_relay_reply},
    {"router solicitation", test_router_solicit},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp6-frame", .tests = frame_tests},
    {.name = NULL},
};
