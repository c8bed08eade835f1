/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp/socket.c and the I/O path of dhcp_server_on_readable(), on a veth pair inside a
 * network namespace this test process creates for itself (unshare(CLONE_NEWNET): it goes
 * away with the process). Needs root; skips otherwise. A raw packet socket on the peer end
 * plays the client or relay.
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

#include "dhcp/dhcp-internal.h"
#include "lib/buf.h"
#include "tests/runner.h"

#define SERVER_IP 0x0a000001u
#define VM_IP 0x0a000064u
#define RELAY_IP 0x0a000002u

static const char *netns_skip; /* reason, when the namespace could not be set up */
static int s_ifindex, c_ifindex;
static uint8_t s_mac[6], c_mac[6];
static const uint8_t vm_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};

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
	/* from here on this process (and what it runs) lives in its own empty namespace */
	/* no IPv6 chatter on the pair (best effort) */
	(void)!system("sysctl -qw net.ipv6.conf.all.disable_ipv6=1 "
		      "net.ipv6.conf.default.disable_ipv6=1 2>/dev/null");
	if (system(
		"ip link set lo up && ip link add s0 type veth peer name c0 && "
		"ip link set s0 up && ip link set c0 up && ip addr add 10.0.0.1/24 dev s0") != 0) {
		netns_skip = "cannot create the veth pair (iproute2 missing?)";
		return 0;
	}
	s_ifindex = (int)if_nametoindex("s0");
	c_ifindex = (int)if_nametoindex("c0");
	if (s_ifindex <= 0 || c_ifindex <= 0 || get_mac("s0", s_mac) < 0 ||
	    get_mac("c0", c_mac) < 0)
		netns_skip = "cannot read the veth pair";
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

static struct dhcp_server *
server(void)
{
	struct dhcp_server *s = NULL;
	struct dhcp_options o;
	int r;

	memset(&o, 0, sizeof(o));
	o.server_ip = SERVER_IP;
	o.prefix = 24;
	o.router = SERVER_IP;
	o.lease_time = 600;
	CU_ASSERT_FATAL(dhcp_server_new(&s) == 0);
	CU_ASSERT_FATAL(dhcp_server_set_options(s, &o) == 0);
	CU_ASSERT_FATAL(dhcp_server_set_binding(s, vm_mac, VM_IP, "vm") == 0);
	r = dhcp_server_open(s, s_ifindex, "s0", s_mac);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	return s;
}

static int
client_socket(void)
{
	struct sockaddr_ll sll = {
	    .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP), .sll_ifindex = c_ifindex};
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_IP));

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&sll, sizeof(sll)) == 0);
	return fd;
}

struct req {
	struct dhcp_msg m;
	uint8_t cookie[4];
	uint8_t opts[128];
} __attribute__((packed));

/* Sends a DHCP request frame from c0 (Ethernet source c0's MAC), extra options after 53. */
static void
send_request_opts(int fd, uint8_t type, uint16_t flags, uint32_t giaddr, uint32_t src_ip,
    uint16_t sport, uint32_t dst_ip, uint16_t dport, const uint8_t dst_mac[6], const uint8_t *extra,
    size_t extra_len)
{
	uint8_t f[DHCP_TX_BUF];
	struct req *r = (struct req *)(f + DHCP_FRAME_HEADROOM);
	struct sockaddr_ll to = {.sll_family = AF_PACKET,
	    .sll_protocol = htons(ETH_P_IP),
	    .sll_ifindex = c_ifindex,
	    .sll_halen = 6};
	size_t n;

	memset(r, 0, sizeof(*r));
	r->m.op = BOOTREQUEST;
	r->m.htype = 1;
	r->m.hlen = 6;
	be32_put(r->m.xid, 0xabcdef01);
	be16_put(r->m.flags, flags);
	be32_put(r->m.giaddr, giaddr);
	memcpy(r->m.chaddr, vm_mac, 6);
	be32_put(r->cookie, DHCP_MAGIC_COOKIE);
	memcpy(r->opts, (const uint8_t[]){53, 1, type}, 3);
	if (extra_len > 0)
		memcpy(r->opts + 3, extra, extra_len);
	r->opts[3 + extra_len] = 255;
	n = dhcp_frame_build(
	    (uint8_t *)r, sizeof(*r), c_mac, dst_mac, src_ip, dst_ip, sport, dport);
	memcpy(to.sll_addr, dst_mac, 6);
	CU_ASSERT_EQUAL(sendto(fd, f, n, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)n);
}

static void
send_request(int fd, uint8_t type, uint16_t flags, uint32_t giaddr, uint32_t src_ip, uint16_t sport,
    uint32_t dst_ip, uint16_t dport, const uint8_t dst_mac[6])
{
	send_request_opts(fd, type, flags, giaddr, src_ip, sport, dst_ip, dport, dst_mac, NULL, 0);
}

/* Waits (bounded, not timed) for the server's packet socket and handles what is there. */
static int
serve(struct dhcp_server *s)
{
	struct pollfd p = {.fd = dhcp_server_fd(s), .events = POLLIN};

	CU_ASSERT(p.fd >= 0);
	if (poll(&p, 1, 5000) != 1)
		return -ETIMEDOUT;
	return dhcp_server_on_readable(s, p.fd, 1, NULL);
}

/* Reads the next IPv4 frame the server sent to c0 (skips c0's own output). */
static ssize_t
recv_reply(int fd, uint8_t *buf, size_t cap)
{
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		ssize_t n;

		if (poll(&p, 1, 5000) != 1)
			return -ETIMEDOUT;
		n = recvfrom(fd, buf, cap, 0, (struct sockaddr *)&from, &fl);
		if (n < 0)
			return -errno;
		if (from.sll_pkttype == PACKET_OUTGOING)
			continue;
		return n;
	}
}

static void
check_reply(const uint8_t *f, ssize_t n, const uint8_t dst_mac[6], uint32_t dst_ip, uint16_t dport,
    uint8_t type)
{
	struct dhcp_rx_meta meta;
	const uint8_t *p;
	size_t plen;
	enum dhcp_drop_reason why;
	struct dhcp_option_table t;
	const uint8_t *v;
	size_t vlen = 0;
	uint8_t copy[DHCP_RX_BUF];

	CU_ASSERT_FATAL(n > 42);
	CU_ASSERT(memcmp(f, dst_mac, 6) == 0);
	CU_ASSERT(memcmp(f + 6, s_mac, 6) == 0);
	CU_ASSERT_EQUAL(be32_get(f + 26), SERVER_IP);
	CU_ASSERT_EQUAL(be32_get(f + 30), dst_ip);
	CU_ASSERT_EQUAL(be16_get(f + 34), 67);
	CU_ASSERT_EQUAL(be16_get(f + 36), dport);
	/* our own verifier checks both checksums; it wants port 67, so relabel a copy */
	memcpy(copy, f, (size_t)n);
	if (dport != 67) {
		uint32_t sum;

		be16_put(copy + 36, 67);
		/* adjust the UDP checksum for the port change (RFC 1624) */
		sum = (uint32_t)(uint16_t)~be16_get(copy + 40) + (uint16_t)~dport + 67;
		be16_put(copy + 40, inet_fold(sum));
	}
	CU_ASSERT_EQUAL(dhcp_frame_verify(copy, (size_t)n, false, &meta, &p, &plen, &why), 0);
	CU_ASSERT_FATAL(dhcp_option_parse(&t, f + 42, (size_t)n - 42) == 0);
	v = dhcp_option_get(&t, DHCP_OPT_MESSAGE_TYPE, &vlen);
	CU_ASSERT(v != NULL && vlen == 1 && v[0] == type);
	CU_ASSERT_EQUAL(be32_get(f + 42 + 4), 0xabcdef01); /* xid */
}

static void
test_broadcast_offer(void)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct dhcp_server *s;
	uint8_t buf[DHCP_RX_BUF];
	ssize_t n;
	int c;

	if (skip())
		return;
	s = server();
	c = client_socket();
	send_request(c, DHCP_MSG_DISCOVER, DHCP_FLAG_BROADCAST, 0, 0, 68, 0xffffffff, 67, bcast);
	CU_ASSERT_EQUAL(serve(s), 1);
	n = recv_reply(c, buf, sizeof(buf));
	check_reply(buf, n, bcast, 0xffffffff, 68, DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(be32_get(buf + 42 + 16), VM_IP); /* yiaddr */
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->tx[DHCP_MSG_OFFER], 1);
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->rx[DHCP_MSG_DISCOVER], 1);
	close(c);
	dhcp_server_free(s);
}

static void
test_unicast_chaddr(void)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct dhcp_server *s;
	uint8_t buf[DHCP_RX_BUF];
	ssize_t n;
	int c;

	if (skip())
		return;
	s = server();
	c = client_socket();
	send_request(c, DHCP_MSG_DISCOVER, 0, 0, 0, 68, 0xffffffff, 67, bcast);
	CU_ASSERT_EQUAL(serve(s), 1);
	n = recv_reply(c, buf, sizeof(buf));
	check_reply(buf, n, vm_mac, VM_IP, 68, DHCP_MSG_OFFER);
	close(c);
	dhcp_server_free(s);
}

static void
test_relay(void)
{
	struct dhcp_server *s;
	uint8_t buf[DHCP_RX_BUF];
	ssize_t n;
	int c;

	if (skip())
		return;
	s = server();
	c = client_socket();
	/* a relay at 10.0.0.2 (c0's MAC) unicasts to the server from port 67 */
	send_request(c, DHCP_MSG_DISCOVER, 0, RELAY_IP, RELAY_IP, 67, SERVER_IP, 67, s_mac);
	CU_ASSERT_EQUAL(serve(s), 1);
	n = recv_reply(c, buf, sizeof(buf));
	check_reply(buf, n, c_mac, RELAY_IP, 67, DHCP_MSG_OFFER);
	close(c);
	dhcp_server_free(s);
}

static void
test_filter(void)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct dhcp_server *s;
	uint8_t buf[DHCP_RX_BUF];
	int c;
	ssize_t n;

	if (skip())
		return;
	s = server();
	c = client_socket();
	/* not port 67: the BPF filter keeps it out of the socket */
	send_request(c, DHCP_MSG_DISCOVER, DHCP_FLAG_BROADCAST, 0, 0, 68, 0xffffffff, 53, bcast);
	/* then a real one: the only datagram the server reads */
	send_request(c, DHCP_MSG_DISCOVER, DHCP_FLAG_BROADCAST, 0, 0, 68, 0xffffffff, 67, bcast);
	CU_ASSERT_EQUAL(serve(s), 1);
	n = recv_reply(c, buf, sizeof(buf));
	check_reply(buf, n, bcast, 0xffffffff, 68, DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->drops[DHCP_DROP_NOT_FOR_US], 0);
	/* nothing pending now; the one fd to watch is the packet socket */
	CU_ASSERT_EQUAL(dhcp_server_fd(s), s->packet_fd);
	CU_ASSERT_EQUAL(dhcp_server_on_readable(s, s->packet_fd, 1, NULL), 0);
	CU_ASSERT_EQUAL(dhcp_server_on_readable(s, s->udp_fd, 1, NULL), -EBADF);
	CU_ASSERT_EQUAL(dhcp_server_on_readable(s, 12345, 1, NULL), -EBADF);
	/* the UDP socket holds nothing (drop-all filter), even after a datagram to its port that
	 * the packet socket answered: it is never watched, never readable */
	send_request(c, DHCP_MSG_DISCOVER, 0, RELAY_IP, RELAY_IP, 67, SERVER_IP, 67, s_mac);
	CU_ASSERT_EQUAL(serve(s), 1);
	{
		struct pollfd p = {.fd = s->udp_fd, .events = POLLIN};
		uint8_t b[16];

		CU_ASSERT_EQUAL(poll(&p, 1, 0), 0);
		CU_ASSERT_EQUAL(recv(s->udp_fd, b, sizeof(b), MSG_DONTWAIT), -1);
		CU_ASSERT_EQUAL(errno, EAGAIN);
	}
	/* reopen closes the old sockets first; close twice is harmless */
	CU_ASSERT_EQUAL(dhcp_server_open(s, s_ifindex, "s0", s_mac), 0);
	dhcp_server_close(s);
	dhcp_server_close(s);
	CU_ASSERT_EQUAL(dhcp_server_fd(s), -1);
	CU_ASSERT_EQUAL(dhcp_server_open(s, 0, "s0", s_mac), -EINVAL);
	close(c);
	dhcp_server_free(s);
}

static bool
reply_has(const uint8_t *f, ssize_t n, uint8_t code)
{
	struct dhcp_option_table t;

	return n > 42 && dhcp_option_parse(&t, f + 42, (size_t)n - 42) == 0 &&
	       dhcp_option_has(&t, code);
}

/* Replies never exceed the interface MTU, even when option 57 allows more. */
static void
test_mtu(void)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t extra[] = {
	    DHCP_OPT_PRL, 3, 119, 6, 1, DHCP_OPT_MAX_SIZE, 2, 0x05, 0xdc};
	struct dhcp_server *s;
	struct dhcp_options o;
	uint8_t buf[DHCP_RX_BUF];
	ssize_t n;
	int c;

	if (skip())
		return;
	s = server();
	memset(&o, 0, sizeof(o));
	o.server_ip = SERVER_IP;
	o.prefix = 24;
	o.lease_time = 600;
	for (size_t i = 0; i < DHCP_MAX_SEARCH; i++)
		snprintf(o.search[i], sizeof(o.search[i]),
		    "zone%02zu.a-much-longer-filler-label-here.example%02zu.org", i, i);
	o.n_search = DHCP_MAX_SEARCH;
	CU_ASSERT_FATAL(dhcp_server_set_options(s, &o) == 0);
	CU_ASSERT(s->optset->len[DHCP_OPT_DOMAIN_SEARCH] > 700);
	c = client_socket();
	/* MTU 1500: the search list goes in */
	send_request_opts(c, DHCP_MSG_DISCOVER, DHCP_FLAG_BROADCAST, 0, 0, 68, 0xffffffff, 67,
	    bcast, extra, sizeof(extra));
	CU_ASSERT_EQUAL(serve(s), 1);
	n = recv_reply(c, buf, sizeof(buf));
	check_reply(buf, n, bcast, 0xffffffff, 68, DHCP_MSG_OFFER);
	CU_ASSERT(n - 14 > 700);
	CU_ASSERT_TRUE(reply_has(buf, n, DHCP_OPT_DOMAIN_SEARCH));
	/* MTU 700 (read when the sockets open): left out, the datagram fits */
	CU_ASSERT_FATAL(system("ip link set s0 mtu 700") == 0);
	CU_ASSERT_EQUAL(dhcp_server_open(s, s_ifindex, "s0", s_mac), 0);
	send_request_opts(c, DHCP_MSG_DISCOVER, DHCP_FLAG_BROADCAST, 0, 0, 68, 0xffffffff, 67,
	    bcast, extra, sizeof(extra));
	CU_ASSERT_EQUAL(serve(s), 1);
	n = recv_reply(c, buf, sizeof(buf));
	check_reply(buf, n, bcast, 0xffffffff, 68, DHCP_MSG_OFFER);
	CU_ASSERT(n - 14 <= 700);
	CU_ASSERT_FALSE(reply_has(buf, n, DHCP_OPT_DOMAIN_SEARCH));
	CU_ASSERT_TRUE(reply_has(buf, n, DHCP_OPT_SUBNET_MASK));
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->drops[DHCP_DROP_SEND_FAILED], 0);
	close(c);
	dhcp_server_free(s);
	CU_ASSERT(system("ip link set s0 mtu 1500") == 0);
}

/*
 * Waits (bounded: ~5 s, not a timing window) until the kernel has passed at least n frames to
 * the server's packet socket, per its accumulated PACKET_STATISTICS.
 */
static bool
wait_kernel_received(struct dhcp_server *s, uint64_t n)
{
	for (int i = 0; i < 5000; i++) {
		CU_ASSERT_EQUAL(dhcp_server_read_kernel_stats(s), 0);
		if (dhcp_server_stats(s)->kernel_received >= n)
			return true;
		usleep(1000);
	}
	return false;
}

static uint64_t fake_now;

static uint64_t
fake_clock(void *userdata)
{
	return fake_now;
}

static void
test_batch_and_latency(void)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct dhcp_server *s;
	const struct dhcp_stats *st;
	uint8_t buf[DHCP_RX_BUF];
	uint64_t total = 0;
	int c, fd, got = 0;

	if (skip())
		return;
	s = server();
	st = dhcp_server_stats(s);
	dhcp_server_set_clock(s, fake_clock, NULL);
	c = client_socket();
	/* more than one receive batch, handled by one call (the socket queues them all) */
	for (int i = 0; i < DHCP_BATCH + 8; i++)
		send_request(
		    c, DHCP_MSG_DISCOVER, DHCP_FLAG_BROADCAST, 0, 0, 68, 0xffffffff, 67, bcast);
	fd = dhcp_server_fd(s);
	fake_now = 1000000 + 30; /* the clock says 30 us after `now` */
	/* all in the ring before the call (so one pass reads them, at `now`), and there for 3 ms
	 * at least: the wait in the ring counts in the latency (the kernel's timestamp) */
	CU_ASSERT_FATAL(wait_kernel_received(s, DHCP_BATCH + 8));
	usleep(3000);
	CU_ASSERT_EQUAL(dhcp_server_on_readable(s, fd, 1000000, NULL), DHCP_BATCH + 8);
	while (got < DHCP_BATCH + 8 && recv_reply(c, buf, sizeof(buf)) > 0)
		got++;
	CU_ASSERT_EQUAL(got, DHCP_BATCH + 8);
	CU_ASSERT_EQUAL(st->tx[DHCP_MSG_OFFER], DHCP_BATCH + 8);
	for (int b = 0; b < DHCP_LATENCY_BUCKETS; b++)
		total += st->latency[b];
	CU_ASSERT_EQUAL(total, DHCP_BATCH + 8);
	/* (2.5, 10] ms, or later on a loaded machine; never the 30 us of the pass alone */
	CU_ASSERT_EQUAL(st->latency[9] + st->latency[10] + st->latency[11], DHCP_BATCH + 8);
	CU_ASSERT_TRUE(st->latency_sum_usec >= 3030u * (DHCP_BATCH + 8));
	close(c);
	dhcp_server_free(s);
}

/* When a frame reached the kernel, on the caller's clock: its age on CLOCK_REALTIME. */
static void
test_ring_frame_time(void)
{
	struct dhcp_ring r = {0};

	CU_ASSERT_EQUAL(dhcp_ring_frame_time(&r, 1000, 5000000), 1000); /* no timestamp */
	r.frame_rx_usec = 4999700;
	CU_ASSERT_EQUAL(dhcp_ring_frame_time(&r, 1000, 5000000), 700); /* 300 us old */
	CU_ASSERT_EQUAL(dhcp_ring_frame_time(&r, 1000, 0), 1000);      /* realtime unknown */
	CU_ASSERT_EQUAL(dhcp_ring_frame_time(&r, 200, 5000000), 200);  /* older than the clock */
	r.frame_rx_usec = 5000100;				       /* realtime stepped back */
	CU_ASSERT_EQUAL(dhcp_ring_frame_time(&r, 1000, 5000000), 1000);
	r.frame_rx_usec = 5000000; /* 11 s old: realtime stepped forward */
	CU_ASSERT_EQUAL(dhcp_ring_frame_time(&r, 20000000, 16000000), 20000000);
	r.frame_rx_usec = 6000000; /* 10 s old: the oldest taken as it is */
	CU_ASSERT_EQUAL(dhcp_ring_frame_time(&r, 20000000, 16000000), 10000000);
}

/*
 * A request larger than the old 2048-byte ring slot on a 9000-MTU link: the ring is sized
 * from the MTU when the sockets open, so the whole frame is read and answered (it was
 * truncated and dropped as malformed).
 */
static void
test_jumbo_request(void)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static uint8_t f[DHCP_FRAME_HEADROOM + 4000];
	struct dhcp_msg *m = (struct dhcp_msg *)(f + DHCP_FRAME_HEADROOM);
	uint8_t *o = f + DHCP_FRAME_HEADROOM + sizeof(*m);
	struct sockaddr_ll to = {.sll_family = AF_PACKET,
	    .sll_protocol = htons(ETH_P_IP),
	    .sll_ifindex = c_ifindex,
	    .sll_halen = 6};
	struct dhcp_server *s;
	uint8_t buf[DHCP_RX_BUF];
	ssize_t n;
	size_t len;
	int c;

	if (skip())
		return;
	CU_ASSERT_FATAL(system("ip link set s0 mtu 9000 && ip link set c0 mtu 9000") == 0);
	s = server();
	c = client_socket();
	memset(f, 0, sizeof(f));
	m->op = BOOTREQUEST;
	m->htype = 1;
	m->hlen = 6;
	be32_put(m->xid, 0xabcdef01);
	be16_put(m->flags, DHCP_FLAG_BROADCAST);
	memcpy(m->chaddr, vm_mac, 6);
	be32_put(o, DHCP_MAGIC_COOKIE);
	memcpy(o + 4, (const uint8_t[]){53, 1, DHCP_MSG_DISCOVER}, 3);
	/* options padded with PAD (0) up to a 4000-byte DHCP message, END last */
	f[sizeof(f) - 1] = DHCP_OPT_END;
	len = dhcp_frame_build(f + DHCP_FRAME_HEADROOM, sizeof(f) - DHCP_FRAME_HEADROOM, c_mac,
	    bcast, 0, 0xffffffff, 68, 67);
	CU_ASSERT_FATAL(len > 4000); /* twice the old 2048-byte slot */
	memcpy(to.sll_addr, bcast, 6);
	CU_ASSERT_EQUAL(sendto(c, f, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len);
	CU_ASSERT_EQUAL(serve(s), 1);
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->drops[DHCP_DROP_MALFORMED], 0);
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->rx[DHCP_MSG_DISCOVER], 1);
	n = recv_reply(c, buf, sizeof(buf));
	check_reply(buf, n, bcast, 0xffffffff, 68, DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(be32_get(buf + 42 + 16), VM_IP); /* yiaddr */
	close(c);
	dhcp_server_free(s);
	CU_ASSERT(system("ip link set s0 mtu 1500 && ip link set c0 mtu 1500") == 0);
}

/* Ring slots hold a whole frame of the MTU, within bounds, and never span blocks. */
static void
test_ring_geometry(void)
{
	static const unsigned mtus[] = {0, 576, 1500, 4000, 9000, 65535, 100000};
	struct dhcp_ring r;

	for (size_t i = 0; i < sizeof(mtus) / sizeof(mtus[0]); i++) {
		unsigned mtu = mtus[i] < DHCP_RING_MTU_MIN   ? DHCP_RING_MTU_MIN
			       : mtus[i] > DHCP_RING_MTU_MAX ? DHCP_RING_MTU_MAX
							     : mtus[i];

		memset(&r, 0, sizeof(r));
		dhcp_ring_geometry(&r, mtus[i]);
		/* the kernel's network offset in a slot is at most 80 bytes */
		CU_ASSERT(r.frame_size >= 80 + mtu);
		CU_ASSERT_EQUAL(r.frame_size % TPACKET_ALIGNMENT, 0);
		CU_ASSERT_EQUAL(r.block_size % 4096, 0);
		CU_ASSERT(r.frames_per_block >= 1);
		CU_ASSERT(r.frames_per_block * r.frame_size <= r.block_size);
		CU_ASSERT_EQUAL(r.map_len % r.block_size, 0);
		CU_ASSERT_EQUAL(r.frame_nr, r.map_len / r.block_size * r.frames_per_block);
		CU_ASSERT(r.frame_nr >= 16);
		CU_ASSERT(r.map_len <= 2 * DHCP_RING_MEM);
	}
	dhcp_ring_geometry(&r, 1500);
	CU_ASSERT_EQUAL(r.frame_size, 2048); /* the usual case is unchanged */
	CU_ASSERT_EQUAL(r.frame_nr, 512);
}

/*
 * NAPI-style receive: frames that arrive while a call answers are read by the same call, at
 * once (the pass over the ring goes on while frames are ready, and another pass begins when
 * some arrived during the last sendmmsg); an idle socket costs one pass.
 */
struct late {
	struct dhcp_server *s;
	int c;	   /* client socket */
	int extra; /* requests sent from the first decision, during the first pass */
	bool sent;
};

static void
late_decision(void *userdata, const struct dhcp_decision *d)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct late *l = userdata;

	(void)d;
	if (l->sent)
		return;
	l->sent = true;
	for (int i = 0; i < l->extra; i++)
		send_request(
		    l->c, DHCP_MSG_DISCOVER, DHCP_FLAG_BROADCAST, 0, 0, 68, 0xffffffff, 67, bcast);
	/* in the ring before the pass ends: 1 + extra frames passed by the filter */
	CU_ASSERT(wait_kernel_received(l->s, 1 + (uint64_t)l->extra));
}

static void
test_backlog_read_at_once(void)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct late l = {.extra = 5};
	struct dhcp_callbacks cb = {.on_decision = late_decision, .userdata = &l};
	const struct dhcp_stats *st;
	uint8_t buf[DHCP_RX_BUF];
	int fd, i;

	if (skip())
		return;
	l.s = server();
	st = dhcp_server_stats(l.s);
	l.c = client_socket();
	fd = dhcp_server_fd(l.s);
	/* nothing pending: one pass, nothing read */
	CU_ASSERT_EQUAL(dhcp_server_on_readable(l.s, fd, 1000, NULL), 0);
	CU_ASSERT_EQUAL(st->rx_wakeups, 1);
	CU_ASSERT_EQUAL(st->rx_immediate, 0);
	/* one request; five more arrive while it is answered: one call reads all six */
	dhcp_server_set_callbacks(l.s, &cb);
	send_request(l.c, DHCP_MSG_DISCOVER, DHCP_FLAG_BROADCAST, 0, 0, 68, 0xffffffff, 67, bcast);
	CU_ASSERT_FATAL(wait_kernel_received(l.s, 1));
	CU_ASSERT_EQUAL(dhcp_server_on_readable(l.s, fd, 2000, NULL), 1 + l.extra);
	CU_ASSERT(l.sent);
	CU_ASSERT_EQUAL(st->rx_wakeups, 2);
	CU_ASSERT_EQUAL(st->rx_yields, 0);
	for (i = 0; i < 1 + l.extra && recv_reply(l.c, buf, sizeof(buf)) > 0; i++)
		;
	CU_ASSERT_EQUAL(i, 1 + l.extra);
	CU_ASSERT_EQUAL(st->tx[DHCP_MSG_OFFER], (uint64_t)(1 + l.extra));
	CU_ASSERT_EQUAL(st->kernel_drops, 0);
	/* no sockets: nothing to read */
	dhcp_server_close(l.s);
	CU_ASSERT_EQUAL(dhcp_server_on_readable(l.s, -1, 3000, NULL), -EBADF);
	close(l.c);
	dhcp_server_free(l.s);
}

/*
 * Without a ring (recvmmsg): a full batch is followed at once by another pass (rx_immediate),
 * in the same call; a short one ends the call.
 */
static void
test_backlog_recvmmsg(void)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct dhcp_server *s;
	const struct dhcp_stats *st;
	uint8_t buf[DHCP_RX_BUF];
	int c, fd, i;

	if (skip())
		return;
	s = server();
	st = dhcp_server_stats(s);
	/* the same socket, without the ring (as when the kernel refuses one) */
	dhcp_socket_ring_close(&s->ring);
	close(s->packet_fd);
	s->packet_fd = fd = dhcp_socket_open_packet(s_ifindex, NULL);
	CU_ASSERT_FATAL(fd >= 0);
	c = client_socket();
	for (i = 0; i < DHCP_BATCH + 8; i++)
		send_request(
		    c, DHCP_MSG_DISCOVER, DHCP_FLAG_BROADCAST, 0, 0, 68, 0xffffffff, 67, bcast);
	CU_ASSERT_FATAL(wait_kernel_received(s, DHCP_BATCH + 8));
	CU_ASSERT_EQUAL(dhcp_server_on_readable(s, fd, 1000, NULL), DHCP_BATCH + 8);
	CU_ASSERT_EQUAL(st->rx_wakeups, 1);
	CU_ASSERT_EQUAL(st->rx_immediate, 1);
	CU_ASSERT_EQUAL(st->rx_yields, 0);
	for (i = 0; i < DHCP_BATCH + 8 && recv_reply(c, buf, sizeof(buf)) > 0; i++)
		;
	CU_ASSERT_EQUAL(i, DHCP_BATCH + 8);
	close(c);
	dhcp_server_free(s);
}

/* Above 20 000 requests/s a wait is asked for; the call after it (fd -1) counts it. */
static void
test_coalescing_wait(void)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct dhcp_server *s;
	const struct dhcp_stats *st;
	uint8_t buf[DHCP_RX_BUF];
	uint64_t now = 1000000;
	uint32_t wait = 0;
	int c, fd, i, got = 0, sent = 0, replies = 0;

	if (skip())
		return;
	s = server();
	st = dhcp_server_stats(s);
	c = client_socket();
	fd = dhcp_server_fd(s);
	/*
	 * one request per call, 25 us apart on the clock given (40 000/s): a wait, bounded, once
	 * the rate's first window (DHCP_MOD_RATE_USEC) is over; each reply read at once (a few
	 * hundred would overflow the client's socket)
	 */
	for (i = 0; i < 2000 && wait == 0; i++, sent++) {
		send_request(
		    c, DHCP_MSG_DISCOVER, DHCP_FLAG_BROADCAST, 0, 0, 68, 0xffffffff, 67, bcast);
		CU_ASSERT_FATAL(wait_kernel_received(s, (uint64_t)sent + 1));
		now += 25;
		got += dhcp_server_on_readable(s, fd, now, &wait);
		if (recv_reply(c, buf, sizeof(buf)) > 0)
			replies++;
	}
	CU_ASSERT(wait > 0 && wait <= DHCP_MOD_MAX_USEC);
	CU_ASSERT(sent > (int)(DHCP_MOD_RATE_USEC / 25));
	CU_ASSERT_EQUAL(got, sent);
	CU_ASSERT_EQUAL(replies, sent);
	CU_ASSERT_EQUAL(st->rx_waits, 0);
	/* the read after the wait finds nothing: counted, and back to readability */
	now += wait;
	CU_ASSERT_EQUAL(dhcp_server_on_readable(s, -1, now, &wait), 0);
	CU_ASSERT_EQUAL(wait, 0);
	CU_ASSERT_EQUAL(st->rx_waits, 1);
	CU_ASSERT(st->rx_wait_usec > 0 && st->rx_wait_usec <= DHCP_MOD_MAX_USEC);
	close(c);
	dhcp_server_free(s);
}

/*
 * The kernel's counters: a server that does not read while more frames arrive than its ring
 * holds: the overflow is counted in kernel_drops, every frame in kernel_received; the
 * counters accumulate (the kernel resets them on every read) and survive a close.
 */
static void
test_kernel_drops(void)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct dhcp_server *s;
	const struct dhcp_stats *st;
	uint64_t sent, read, drops;
	int c, fd;

	if (skip())
		return;
	s = server();
	st = dhcp_server_stats(s);
	CU_ASSERT_FATAL(s->ring.map != NULL);
	c = client_socket();
	fd = dhcp_server_fd(s);
	CU_ASSERT_EQUAL(dhcp_server_read_kernel_stats(s), 0);
	CU_ASSERT_EQUAL(st->kernel_received, 0);
	CU_ASSERT_EQUAL(st->kernel_drops, 0);
	/* the ring's worth and 100 more, none read (the veth's backlog queue holds 1000) */
	sent = s->ring.frame_nr + 100;
	for (uint64_t i = 0; i < sent; i++)
		send_request(
		    c, DHCP_MSG_DISCOVER, DHCP_FLAG_BROADCAST, 0, 0, 68, 0xffffffff, 67, bcast);
	CU_ASSERT_FATAL(wait_kernel_received(s, sent));
	CU_ASSERT_EQUAL(st->kernel_received, sent);
	CU_ASSERT_EQUAL(st->kernel_drops, 100);
	/* read again: the kernel's counters restarted at 0, ours stay */
	CU_ASSERT_EQUAL(dhcp_server_read_kernel_stats(s), 0);
	CU_ASSERT_EQUAL(st->kernel_received, sent);
	CU_ASSERT_EQUAL(st->kernel_drops, 100);
	/* the ring's frames are all there to read, in one call (the budget is a ring's worth) */
	read = (uint64_t)dhcp_server_on_readable(s, fd, 1000, NULL);
	CU_ASSERT_EQUAL(read, s->ring.frame_nr);
	CU_ASSERT_EQUAL(st->drops[DHCP_DROP_SEND_FAILED] + st->tx[DHCP_MSG_OFFER], read);
	/* one more after a close and reopen: counted on top */
	drops = st->kernel_drops;
	dhcp_server_close(s);
	CU_ASSERT_EQUAL(dhcp_server_read_kernel_stats(s), -EBADF);
	CU_ASSERT_EQUAL(st->kernel_received, sent);
	CU_ASSERT_EQUAL_FATAL(dhcp_server_open(s, s_ifindex, "s0", s_mac), 0);
	send_request(c, DHCP_MSG_DISCOVER, DHCP_FLAG_BROADCAST, 0, 0, 68, 0xffffffff, 67, bcast);
	CU_ASSERT(wait_kernel_received(s, sent + 1));
	CU_ASSERT_EQUAL(st->kernel_received, sent + 1);
	CU_ASSERT_EQUAL(st->kernel_drops, drops);
	close(c);
	dhcp_server_free(s);
}

static const struct test_case socket_tests[] = {
    {"broadcast OFFER", test_broadcast_offer},
    {"unicast to chaddr", test_unicast_chaddr},
    {"relay reply", test_relay},
    {"BPF filter, the fd, the silent UDP socket, reopen", test_filter},
    {"batches and latency histogram", test_batch_and_latency},
    {"a frame's kernel receive time on the engine's clock", test_ring_frame_time},
    {"replies fit the interface MTU", test_mtu},
    {"a 4000-byte request on a 9000-MTU link", test_jumbo_request},
    {"receive ring geometry", test_ring_geometry},
    {"frames arriving during a pass are read at once", test_backlog_read_at_once},
    {"without a ring: a full batch is read on at once", test_backlog_recvmmsg},
    {"a coalescing wait above 20 000 requests/s, counted", test_coalescing_wait},
    {"kernel counters: ring overflow counted, accumulated", test_kernel_drops},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp-socket", .init = suite_init, .tests = socket_tests},
    {.name = NULL},
};
