/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the DHCPv6 receive path of one frame (Ethernet/IPv6/UDP or ICMPv6
 * verify, relay unwrapping, option parse, message rules, reply build and framing), as
 * dhcp6_server_on_readable() runs it, and router solicitations.
 *
 * Input: byte 0 selects modes, the rest is the frame or the UDP payload.
 *   bit 0: the rest is a DHCPv6 UDP payload, put into a valid frame (so mutations get past
 *          the checksums); else it is a raw Ethernet frame
 *   bit 1: the kernel said CSUMNOTREADY (raw frames)
 *   bit 2: wrapped frames come from another MAC (no binding)
 *   bit 3: wrapped frames are unicast to the server address (else to ff02::1:2)
 *   bit 4: the second option set (rapid commit, no search list, infinite lifetimes)
 *   bit 5: router advertisements on
 *   bit 6: the DUID fallback on (set_duid_mac: a DUID-LL/LLT's MAC when the frame's is unbound)
 * Invariants checked on every reply: the frame parses back with good checksums, and a
 * DHCPv6 reply's relay layers and options parse back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/dhcp6-internal.h"
#include "dhcp/packet6.h"
#include "lib/ip6.h"

static struct dhcp6_server *srv;
static struct dhcp6_options opts_a, opts_b;
static struct in6_addr vm_addr;
static const uint8_t vm[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint8_t stranger[6] = {0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc};

static void
setup(void)
{
	static const uint8_t hw[6] = {0x02, 0, 0, 0, 0, 1};
	struct in6_addr ll;

	memset(&opts_a, 0, sizeof(opts_a));
	if (ipv6_parse("2001:db8::1", &opts_a.server_ip) < 0 ||
	    ipv6_parse("2001:db8::53", &opts_a.dns[0]) < 0 ||
	    ipv6_parse("2001:db8::100", &vm_addr) < 0 || ipv6_parse("fe80::1", &ll) < 0)
		abort();
	opts_a.prefix = 64;
	opts_a.n_dns = 1;
	strcpy(opts_a.search[0], "example.org");
	strcpy(opts_a.search[1], "a.very.long.label.chain.example.org");
	opts_a.n_search = 2;
	opts_a.preferred_lifetime = 3600;
	opts_a.valid_lifetime = 7200;
	opts_a.duid_len = dhcp6_duid_for_pool("default", "pool", opts_a.duid);
	opts_b = opts_a;
	opts_b.n_search = 0;
	opts_b.rapid_commit = true;
	opts_b.preferred_lifetime = opts_b.valid_lifetime = UINT32_MAX;
	if (dhcp6_server_new(&srv) < 0 || dhcp6_server_set_options(srv, &opts_a) < 0 ||
	    dhcp6_server_set_binding(srv, vm, &vm_addr, "vm-one") < 0)
		abort();
	dhcp6_server_set_hwaddr(srv, hw, &ll);
}

/* A message's relay layers, then its options, parse back. */
static void
check_message(const uint8_t *p, size_t len)
{
	struct dhcp6_opts o;

	for (int depth = 0; len > 0 && p[0] == DHCP6_MSG_RELAY_REPL; depth++) {
		if (depth > DHCP6_HOP_COUNT_LIMIT || len < DHCP6_RELAY_HDR_LEN ||
		    dhcp6_options_parse(p + DHCP6_RELAY_HDR_LEN, len - DHCP6_RELAY_HDR_LEN, &o) <
			0 ||
		    o.relay_msg.p == NULL)
			abort();
		p = o.relay_msg.p;
		len = o.relay_msg.len;
	}
	if (len < DHCP6_HDR_LEN || (p[0] != DHCP6_MSG_ADVERTISE && p[0] != DHCP6_MSG_REPLY) ||
	    dhcp6_options_parse(p + DHCP6_HDR_LEN, len - DHCP6_HDR_LEN, &o) < 0 ||
	    o.server_id.p == NULL)
		abort();
}

static void
check_reply(const uint8_t *out, size_t n, int type)
{
	struct ip6_frame f;

	if (n > DHCP6_TX_BUF || packet6_parse(out, n, false, &f) < 0)
		abort();
	if (type == 0) {
		if (f.next_header != IPPROTO_ICMPV6)
			abort();
		return;
	}
	if (f.next_header != IPPROTO_UDP || f.sport != DHCP6_SERVER_PORT)
		abort();
	check_message(f.payload, f.payload_len);
}

static size_t
wrap(uint8_t *frame, const uint8_t *payload, size_t len, uint8_t mode)
{
	struct ip6_frame h = {.sport = DHCP6_CLIENT_PORT, .dport = DHCP6_SERVER_PORT};

	if (len > DHCP6_RX_BUF - PACKET6_UDP_OFFSET)
		return 0;
	memcpy(h.src_mac, mode & 4 ? stranger : vm, 6);
	ipv6_link_local_from_mac(h.src_mac, &h.src);
	if (mode & 8)
		h.dst = opts_a.server_ip;
	else if (ipv6_parse("ff02::1:2", &h.dst) < 0)
		abort();
	ipv6_multicast_mac(&h.dst, h.dst_mac);
	memcpy(frame + PACKET6_UDP_OFFSET, payload, len);
	return packet6_finish_udp(frame, &h, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[DHCP6_RX_BUF], out[DHCP6_TX_BUF];
	struct dhcp6_ra ra = {.enabled = true, .interval = 200, .prefix_len = 64, .mtu = 1500};
	uint8_t mode;
	size_t len, n;
	int type;

	if (srv == NULL)
		setup();
	if (size < 1 || size - 1 > sizeof(frame))
		return 0;
	mode = data[0];
	if (mode & 1) {
		len = wrap(frame, data + 1, size - 1, mode);
	} else {
		len = size - 1;
		memcpy(frame, data + 1, len);
	}
	if (mode & 16)
		dhcp6_server_set_options(srv, &opts_b);
	ra.enabled = (mode & 32) != 0;
	dhcp6_server_set_duid_mac(srv, (mode & 64) != 0);
	ra.prefix = opts_a.server_ip;
	dhcp6_server_set_ra(srv, &ra);
	n = dhcp6_handle_frame(srv, frame, len, (mode & 2) != 0, 1, out, &type);
	if (n > 0)
		check_reply(out, n, type);
	if (mode & 16)
		dhcp6_server_set_options(srv, &opts_a);
	dhcp6_server_clear_decline(srv, vm, &vm_addr); /* keep the binding interesting */
	return 0;
}
