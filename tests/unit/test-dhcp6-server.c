/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp/server6-io.c: dhcp6_server_open / on_readable / send_ra / send_unsolicited_na on a
 * veth pair inside a network namespace this test process creates for itself
 * (unshare(CLONE_NEWNET): it goes away with the process). Needs root; skips otherwise. A raw
 * packet socket on the peer end plays the client.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dhcp/dhcp6-internal.h"
#include "dhcp/packet6.h"
#include "dhcp/ra.h"
#include "lib/ip6.h"
#include "tests/runner.h"

static const char *netns_skip;
static int s_ifindex, c_ifindex;
static uint8_t s_mac[6], c_mac[6];
static struct in6_addr s_ll, c_ll;

static int
get_mac(const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	r = ioctl(fd, SIOCGIFHWADDR, &ifr);
	close(fd);
	if (r < 0)
		return -errno;
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	return 0;
}

static int
suite_init(void)
{
	if (geteuid() != 0) {
		netns_skip = "needs root (network namespace, raw sockets)";
		return 0;
	}
	if (unshare(CLONE_NEWNET) < 0) {
		netns_skip = "unshare(CLONE_NEWNET) not permitted";
		return 0;
	}
	/* IPv6 on, but quiet: no DAD, no router solicitations of the kernel's own */
	if (system("ip link set lo up && ip link add s0 type veth peer name c0 && "
		   "sysctl -qw net.ipv6.conf.s0.accept_dad=0 net.ipv6.conf.c0.accept_dad=0 "
		   "net.ipv6.conf.s0.router_solicitations=0 "
		   "net.ipv6.conf.c0.router_solicitations=0 && "
		   "ip link set s0 up && ip link set c0 up") != 0) {
		netns_skip = "cannot create the veth pair (iproute2 or IPv6 missing?)";
		return 0;
	}
	s_ifindex = (int)if_nametoindex("s0");
	c_ifindex = (int)if_nametoindex("c0");
	if (s_ifindex <= 0 || c_ifindex <= 0 || get_mac("s0", s_mac) < 0 ||
	    get_mac("c0", c_mac) < 0) {
		netns_skip = "cannot read the veth pair";
		return 0;
	}
	ipv6_link_local_from_mac(s_mac, &s_ll);
	ipv6_link_local_from_mac(c_mac, &c_ll);
	return 0;
}

static bool
skip(void)
{
	if (test_require_root())
		return true;
	if (netns_skip != NULL) {
		test_skip("%s", netns_skip);
		return true;
	}
	return false;
}

static struct dhcp6_server *
server(void)
{
	struct dhcp6_server *s = NULL;
	struct dhcp6_options o = {0};
	struct in6_addr vm;

	CU_ASSERT_FATAL(ipv6_parse("2001:db8::1", &o.server_ip) == 0);
	CU_ASSERT_FATAL(ipv6_parse("2001:db8::100", &vm) == 0);
	o.prefix = 64;
	o.duid_len = dhcp6_duid_for_pool("default", "pool", o.duid);
	CU_ASSERT_FATAL(dhcp6_server_new(&s) == 0);
	CU_ASSERT_FATAL(dhcp6_server_set_options(s, &o) == 0);
	CU_ASSERT_FATAL(dhcp6_server_set_binding(s, c_mac, &vm, "vm") == 0);
	CU_ASSERT_EQUAL_FATAL(dhcp6_server_open(s, s_ifindex, "s0", s_mac, &s_ll), 0);
	return s;
}

static int
client_socket(void)
{
	struct sockaddr_ll sll = {
	    .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IPV6), .sll_ifindex = c_ifindex};
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_IPV6));

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&sll, sizeof(sll)) == 0);
	return fd;
}

static void
send_frame(int fd, const uint8_t *f, size_t len)
{
	CU_ASSERT_EQUAL(send(fd, f, len, 0), (ssize_t)len);
}

/* A SOLICIT from c0's link-local address to ff02::1:2. */
static void
send_solicit(int fd)
{
	static const uint8_t msg[] = {DHCP6_MSG_SOLICIT, 1, 2, 3, 0, 1, 0, 4, 0, 4, 0, 1, 0, 3, 0,
	    12, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0};
	struct ip6_frame h = {.src = c_ll, .sport = 546, .dport = 547};
	uint8_t f[256];

	CU_ASSERT_FATAL(ipv6_parse("ff02::1:2", &h.dst) == 0);
	memcpy(h.src_mac, c_mac, 6);
	ipv6_multicast_mac(&h.dst, h.dst_mac);
	memcpy(f + PACKET6_UDP_OFFSET, msg, sizeof(msg));
	send_frame(fd, f, packet6_finish_udp(f, &h, sizeof(msg)));
}

static void
send_rs(int fd)
{
	struct ip6_frame h = {.src = c_ll};
	uint8_t f[128], *p = f + PACKET6_ICMP_OFFSET;

	CU_ASSERT_FATAL(ipv6_parse("ff02::2", &h.dst) == 0);
	memcpy(h.src_mac, c_mac, 6);
	ipv6_multicast_mac(&h.dst, h.dst_mac);
	memset(p, 0, 16);
	p[0] = ICMP6_ROUTER_SOLICIT_;
	p[8] = 1;
	p[9] = 1;
	memcpy(p + 10, c_mac, 6);
	send_frame(fd, f, packet6_finish_icmp(f, &h, 16));
}

static int
serve(struct dhcp6_server *s)
{
	struct pollfd p = {.fd = dhcp6_server_fd(s), .events = POLLIN};

	CU_ASSERT(p.fd >= 0);
	if (poll(&p, 1, 5000) != 1)
		return -ETIMEDOUT;
	return dhcp6_server_on_readable(s, p.fd, 1, NULL);
}

/*
 * The next frame from s0 that is UDP to port dport (ICMPv6 of type icmp_type when dport is
 * 0), parsed into *f (borrowing buf); the kernel's own chatter (MLD, ...) is skipped.
 */
static int
recv_frame(int fd, uint8_t *buf, size_t cap, uint16_t dport, uint8_t icmp_type, struct ip6_frame *f)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t n;

		if (poll(&p, 1, 3000) != 1)
			return -ETIMEDOUT;
		n = recvfrom(fd, buf, cap, 0, (struct sockaddr *)&from, &fl);
		if (n < 0)
			return -errno;
		if (from.sll_pkttype == PACKET_OUTGOING ||
		    packet6_parse(buf, (size_t)n, true, f) < 0)
			continue;
		if (dport != 0 && f->next_header == IPPROTO_UDP && f->dport == dport)
			return 0;
		if (dport == 0 && f->next_header == IPPROTO_ICMPV6 && f->payload[0] == icmp_type)
			return 0;
	}
}

static void
test_advertise(void)
{
	struct dhcp6_server *s;
	struct ip6_frame f;
	uint8_t buf[2048];
	int fd;

	if (skip())
		return;
	s = server();
	fd = client_socket();
	CU_ASSERT_EQUAL(dhcp6_server_on_readable(s, fd, 1, NULL), -EBADF);
	send_solicit(fd);
	CU_ASSERT(serve(s) >= 1);
	CU_ASSERT_FATAL(recv_frame(fd, buf, sizeof(buf), 546, 0, &f) == 0);
	CU_ASSERT(memcmp(f.dst_mac, c_mac, 6) == 0);
	CU_ASSERT(memcmp(f.src_mac, s_mac, 6) == 0);
	CU_ASSERT(ipv6_equal(&f.dst, &c_ll));
	CU_ASSERT(ipv6_equal(&f.src, &s_ll));
	CU_ASSERT_EQUAL(f.sport, 547);
	CU_ASSERT_EQUAL(f.payload[0], DHCP6_MSG_ADVERTISE);
	CU_ASSERT_EQUAL(dhcp6_server_stats(s)->rx[DHCP6_MSG_SOLICIT], 1);
	CU_ASSERT_EQUAL(dhcp6_server_stats(s)->tx[DHCP6_MSG_ADVERTISE], 1);
	/* standby: read, dropped, not answered */
	dhcp6_server_set_standby(s, true);
	send_solicit(fd);
	CU_ASSERT(serve(s) >= 1);
	CU_ASSERT_EQUAL(dhcp6_server_stats(s)->drops[DHCP6_DROP_NOT_SERVING], 1);
	CU_ASSERT_EQUAL(dhcp6_server_send_ra(s, 1), -EAGAIN);
	CU_ASSERT_EQUAL(dhcp6_server_read_kernel_stats(s), 0);
	CU_ASSERT(dhcp6_server_stats(s)->kernel_received >= 2);
	close(fd);
	dhcp6_server_free(s);
}

static void
test_ra_and_na(void)
{
	struct dhcp6_ra ra = {.enabled = true, .interval = 200, .prefix_len = 64, .mtu = 1400};
	struct in6_addr all_nodes, target;
	struct dhcp6_server *s;
	struct ip6_frame f;
	uint8_t buf[2048];
	int fd;

	if (skip())
		return;
	s = server();
	fd = client_socket();
	CU_ASSERT_FATAL(ipv6_parse("ff02::1", &all_nodes) == 0);
	CU_ASSERT_FATAL(ipv6_parse("2001:db8::", &ra.prefix) == 0);
	CU_ASSERT_FATAL(ipv6_parse("2001:db8::1", &target) == 0);
	CU_ASSERT_EQUAL(dhcp6_server_send_ra(s, 1), -EAGAIN); /* RA off */
	CU_ASSERT_EQUAL(dhcp6_server_set_ra(s, &ra), 0);
	CU_ASSERT_EQUAL(dhcp6_server_send_ra(s, 1), 0);
	CU_ASSERT_FATAL(recv_frame(fd, buf, sizeof(buf), 0, ICMP6_ROUTER_ADVERT_, &f) == 0);
	CU_ASSERT(ipv6_equal(&f.dst, &all_nodes));
	CU_ASSERT(ipv6_equal(&f.src, &s_ll));
	CU_ASSERT_EQUAL(f.hop_limit, 255);
	CU_ASSERT_EQUAL(dhcp6_server_stats(s)->ra_tx, 1);
	/* a Router Solicitation: an RA back to the host */
	send_rs(fd);
	CU_ASSERT(serve(s) >= 1);
	CU_ASSERT_FATAL(recv_frame(fd, buf, sizeof(buf), 0, ICMP6_ROUTER_ADVERT_, &f) == 0);
	CU_ASSERT(ipv6_equal(&f.dst, &c_ll));
	CU_ASSERT_EQUAL(dhcp6_server_stats(s)->rs_rx, 1);
	CU_ASSERT_EQUAL(dhcp6_server_stats(s)->ra_tx, 2);
	/* failover: the address is answered here now */
	CU_ASSERT_EQUAL(dhcp6_server_send_unsolicited_na(s, &target), 0);
	CU_ASSERT_FATAL(recv_frame(fd, buf, sizeof(buf), 0, ICMP6_NEIGHBOR_ADVERT_, &f) == 0);
	CU_ASSERT(ipv6_equal(&f.dst, &all_nodes));
	CU_ASSERT_EQUAL(dhcp6_server_stats(s)->na_tx, 1);
	close(fd);
	dhcp6_server_free(s);
}

static const struct test_case server_tests[] = {
    {"advertise on the wire", test_advertise},
    {"router and neighbour advertisements", test_ra_and_na},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp6-server", .init = suite_init, .tests = server_tests},
    {.name = NULL},
};
