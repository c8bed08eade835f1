/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp/socket6.c in two network namespaces joined by a veth pair (created here, deleted at
 * the end; nothing in the host namespace): the sockets open; frames a client sends through
 * its own packet socket pass the locked filter or not as the filter says (UDP to 547 and
 * router solicitations, with or without a Hop-by-Hop header, yes; another port, MLD,
 * neighbour solicitations, fragments, IPv4, unicast to another MAC, no); a real
 * `dhclient -6` SOLICIT arrives and parses; the UDP :547 socket keeps the kernel from
 * answering a unicast DHCPv6 message with port-unreachable (port 548 shows it would).
 * Every wait is for an event (a marker frame, an echo reply), bounded only as a safety net.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/icmp6.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dhcp/packet6.h"
#include "dhcp/ra.h"
#include "dhcp/socket6.h"
#include "lib/ip6.h"
#include "tests/runner.h"

#define SAFETY_MS 10000 /* a bound on waits for events that come at once */

static char ns_srv[32], ns_cli[32], tmpdir[64];
static int home_ns = -1, srv_ns = -1, cli_ns = -1;
static bool ready;
static int pfd = -1, ufd = -1;
static struct dhcp_ring ring;
/* pfd's receive ring (read as the server reads it) */ /* the sockets under test (server
							  namespace) */
static pid_t dhclient_pid = -1;			       /* while it runs */
static int cfd = -1; /* the client's packet socket (client namespace) */
static int srv_ifindex, cli_ifindex;
static uint8_t srv_mac[6];
static struct in6_addr srv_ll;
static const uint8_t cli_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint8_t mc_dhcp[6] = {0x33, 0x33, 0x00, 0x01, 0x00, 0x02};
static const uint8_t mc_routers[6] = {0x33, 0x33, 0x00, 0x00, 0x00, 0x02};

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int
sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	r = system(cmd);
	if (r != 0)
		fprintf(stderr, "command failed (%d): %s\n", r, cmd);
	return r;
}

static int
ns_fd(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Both namespaces, without DAD (addresses usable at once) and without the kernel's own
 * router solicitations (the test sends its own), the veth pair up. */
static int
make_namespaces(void)
{
	const char *sysctls = "sysctl -qw net.ipv6.conf.all.accept_dad=0 "
			      "net.ipv6.conf.default.accept_dad=0 "
			      "net.ipv6.conf.default.router_solicitations=0";

	if (sh("ip netns add %s && ip netns add %s", ns_srv, ns_cli) != 0)
		return -1;
	if (sh("ip netns exec %s %s && ip netns exec %s %s", ns_srv, sysctls, ns_cli, sysctls) != 0)
		return -1;
	if (sh("ip link add vs netns %s type veth peer name vc netns %s", ns_srv, ns_cli) != 0)
		return -1;
	if (sh("ip -n %s link set vc address 52:54:00:12:34:56 && ip -n %s link set vc up && "
	       "ip -n %s link set vs up",
		ns_cli, ns_cli, ns_srv) != 0)
		return -1;
	return 0;
}

/* Enters namespace fd (or home) for the calls that follow. */
static void
enter(int fd)
{
	CU_ASSERT_EQUAL_FATAL(setns(fd, CLONE_NEWNET), 0);
}

static void on_signal(int sig);

static int
suite_init(void)
{
	struct ifreq ifr;
	int s;

	if (geteuid() != 0)
		return 0;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	snprintf(ns_srv, sizeof(ns_srv), "w6s%d", (int)getpid());
	snprintf(ns_cli, sizeof(ns_cli), "w6c%d", (int)getpid());
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/vmdhcp-w6.XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return 0;
	home_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (make_namespaces() != 0)
		return 0;
	srv_ns = ns_fd(ns_srv);
	cli_ns = ns_fd(ns_cli);
	if (home_ns < 0 || srv_ns < 0 || cli_ns < 0 || setns(cli_ns, CLONE_NEWNET) < 0)
		return 0;
	cli_ifindex = (int)if_nametoindex("vc");
	cfd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (setns(srv_ns, CLONE_NEWNET) < 0)
		return 0;
	srv_ifindex = (int)if_nametoindex("vs");
	s = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "vs");
	if (s < 0 || ioctl(s, SIOCGIFHWADDR, &ifr) < 0)
		return 0;
	close(s);
	memcpy(srv_mac, ifr.ifr_hwaddr.sa_data, 6);
	ipv6_link_local_from_mac(srv_mac, &srv_ll);
	ready = cfd >= 0 && cli_ifindex > 0 && srv_ifindex > 0;
	return 0;
}

static void
close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Idempotent: also run from a signal handler. */
static int
suite_cleanup(void)
{
	if (dhclient_pid > 0) {
		kill(dhclient_pid, SIGKILL);
		(void)waitpid(dhclient_pid, NULL, 0);
		dhclient_pid = -1;
	}
	dhcp_socket_ring_close(&ring);
	close_fd(&pfd);
	close_fd(&ufd);
	close_fd(&cfd);
	if (home_ns >= 0 && setns(home_ns, CLONE_NEWNET) < 0)
		perror("setns home");
	if (ns_srv[0] != '\0')
		(void)sh("ip netns del %s 2>/dev/null; ip netns del %s 2>/dev/null; rm -rf %s",
		    ns_srv, ns_cli, tmpdir);
	ns_srv[0] = '\0';
	close_fd(&home_ns);
	close_fd(&srv_ns);
	close_fd(&cli_ns);
	return 0;
}

/* Killed (a timeout): the namespaces go with us. */
static void
on_signal(int sig)
{
	(void)suite_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static bool
skip_unless_ready(void)
{
	if (test_require_root())
		return true;
	CU_ASSERT_FATAL(ready);
	return false;
}

/* The client's raw send of one frame out of vc. */
static void
client_send(const uint8_t *frame, size_t len)
{
	struct sockaddr_ll sll = {.sll_family = AF_PACKET,
	    .sll_protocol = htons(ETH_P_IPV6),
	    .sll_ifindex = cli_ifindex,
	    .sll_halen = 6};

	memcpy(sll.sll_addr, frame, 6);
	CU_ASSERT_EQUAL(
	    sendto(cfd, frame, len, 0, (struct sockaddr *)&sll, sizeof(sll)), (ssize_t)len);
}

static struct ip6_frame
client_hdr(const uint8_t dst_mac[6], const char *dst)
{
	struct ip6_frame h = {.sport = 546, .dport = 547};

	memcpy(h.src_mac, cli_mac, 6);
	memcpy(h.dst_mac, dst_mac, 6);
	ipv6_link_local_from_mac(cli_mac, &h.src);
	CU_ASSERT_EQUAL(ipv6_parse(dst, &h.dst), 0);
	return h;
}

/* A UDP frame from the client whose payload is the text tag. */
static size_t
udp_frame(uint8_t *f, const uint8_t dst_mac[6], uint16_t dport, const char *tag)
{
	struct ip6_frame h = client_hdr(dst_mac, "ff02::1:2");

	h.dport = dport;
	memcpy(f + PACKET6_UDP_OFFSET, tag, strlen(tag));
	return packet6_finish_udp(f, &h, strlen(tag));
}

static size_t
icmp_frame(uint8_t *f, const uint8_t dst_mac[6], const char *dst, const uint8_t *msg, size_t len)
{
	struct ip6_frame h = client_hdr(dst_mac, dst);

	memcpy(f + PACKET6_ICMP_OFFSET, msg, len);
	return packet6_finish_icmp(f, &h, len);
}

/* Moves an ICMPv6 frame's message 8 bytes on behind a Hop-by-Hop header (Router Alert
 * for MLD), fixing lengths and the checksum. Returns the new length. */
static size_t
add_hop_by_hop(uint8_t *f, size_t len)
{
	static const uint8_t hbh[8] = {58, 0, 5, 2, 0, 0, 1, 0}; /* Router Alert (MLD), PadN */
	size_t mlen = len - PACKET6_ICMP_OFFSET;
	struct in6_addr s, d;
	uint16_t c;

	memmove(f + PACKET6_ICMP_OFFSET + 8, f + PACKET6_ICMP_OFFSET, mlen);
	memcpy(f + PACKET6_ICMP_OFFSET, hbh, 8);
	f[18] = (uint8_t)((mlen + 8) >> 8);
	f[19] = (uint8_t)(mlen + 8);
	f[20] = 0;
	memcpy(&s, f + 22, 16);
	memcpy(&d, f + 38, 16);
	f[PACKET6_ICMP_OFFSET + 10] = f[PACKET6_ICMP_OFFSET + 11] = 0;
	c = packet6_checksum(&s, &d, 58, f + PACKET6_ICMP_OFFSET + 8, mlen);
	f[PACKET6_ICMP_OFFSET + 10] = (uint8_t)(c >> 8);
	f[PACKET6_ICMP_OFFSET + 11] = (uint8_t)c;
	return len + 8;
}

struct read_ctx {
	bool (*fn)(const struct ip6_frame *, bool, void *);
	void *userdata;
	unsigned count;
	bool done;
};

static void
on_ring_frame(void *userdata, const uint8_t *frame, size_t len, size_t wire_len, bool csum)
{
	struct read_ctx *c = userdata;
	struct ip6_frame h;

	if (c->done)
		return;
	c->count++;
	CU_ASSERT(wire_len == len); /* never cut: the ring's slots hold a whole MTU */
	if (packet6_parse(frame, len, csum, &h) == 0 && c->fn(&h, csum, c->userdata))
		c->done = true;
}

/* Waits for frames in pfd's ring; each parsed one is handed to fn until fn returns true.
 * Returns how many frames came (parsed or not). */
static unsigned
server_read_until(bool (*fn)(const struct ip6_frame *, bool, void *), void *userdata)
{
	struct read_ctx c = {.fn = fn, .userdata = userdata};

	for (;;) {
		struct pollfd p = {.fd = pfd, .events = POLLIN};
		int n;

		if (!dhcp_socket_ring_ready(&ring) && poll(&p, 1, SAFETY_MS) <= 0) {
			CU_FAIL("nothing more arrived");
			return c.count;
		}
		n = dhcp_socket_ring_next(&ring, on_ring_frame, &c);
		CU_ASSERT_FATAL(n > 0 || n == -EAGAIN);
		if (c.done)
			return c.count;
	}
}

static void
test_open(void)
{
	int a, b, zero = 0;

	if (skip_unless_ready())
		return;
	CU_ASSERT_EQUAL(socket6_open(0, "vs", NULL, &a, &b), -EINVAL);
	CU_ASSERT(socket6_open(9999, "nosuch", &ring, &a, &b) < 0);
	CU_ASSERT(ring.map == NULL); /* nothing left mapped */
	CU_ASSERT_EQUAL_FATAL(socket6_open(srv_ifindex, "vs", &ring, &pfd, &ufd), 0);
	CU_ASSERT(pfd >= 0 && ufd >= 0);
	/* the receive ring, sized for the link's MTU (1500: 2 KiB slots) */
	CU_ASSERT_FATAL(ring.map != NULL);
	CU_ASSERT(ring.frame_size >= 1500 && ring.frame_nr >= 256);
	/* the filter is locked: it cannot be taken off or replaced */
	CU_ASSERT(setsockopt(pfd, SOL_SOCKET, SO_DETACH_FILTER, &zero, sizeof(zero)) < 0);
	CU_ASSERT_EQUAL(errno, EPERM);
	/* the device holds both Ethernet groups */
	CU_ASSERT_EQUAL(sh("ip -n %s maddress show dev vs | grep -q 33:33:00:01:00:02", ns_srv), 0);
	CU_ASSERT_EQUAL(sh("ip -n %s maddress show dev vs | grep -q 33:33:00:00:00:02", ns_srv), 0);
	/* and the IPv6 stack the groups (MLD): ff02::1:2 and ff02::2 */
	CU_ASSERT_EQUAL(sh("ip -n %s -6 maddress show dev vs | grep -q 'ff02::1:2$'", ns_srv), 0);
	CU_ASSERT_EQUAL(sh("ip -n %s -6 maddress show dev vs | grep -q 'ff02::2$'", ns_srv), 0);
}

struct seen {
	unsigned udp547, rs, end, other;
};

static bool
on_filter_frame(const struct ip6_frame *h, bool csum_not_ready, void *userdata)
{
	struct seen *s = userdata;

	CU_ASSERT(!csum_not_ready); /* our frames carry full checksums */
	CU_ASSERT_EQUAL(memcmp(h->src_mac, cli_mac, 6), 0);
	if (h->next_header == IPPROTO_UDP && h->dport == 547 && h->payload_len == 5 &&
	    memcmp(h->payload, "z-end", 5) == 0) {
		s->end++;
		return true;
	}
	if (h->next_header == IPPROTO_UDP && h->dport == 547)
		s->udp547++;
	else if (h->next_header == IPPROTO_ICMPV6 && ra_check_solicit(h) == 0)
		s->rs++;
	else
		s->other++;
	return false;
}

/* Frames the filter drops, each with its reason. */
static void
send_unwanted(void)
{
	static const uint8_t other_mac[6] = {0x02, 0, 0, 0, 0, 0x99};
	static const uint8_t mc_mld[6] = {0x33, 0x33, 0, 0, 0, 0x16};
	uint8_t f[256], msg[32] = {0};
	size_t n;

	client_send(f, udp_frame(f, mc_dhcp, 548, "b-548")); /* another port */
	/* MLDv2 report (type 143) behind a Hop-by-Hop header, as the kernel sends them */
	msg[0] = 143;
	msg[7] = 1;
	msg[8] = 4;
	CU_ASSERT_EQUAL(ipv6_parse("ff02::1:ff12:3456", (struct in6_addr *)(msg + 12)), 0);
	n = icmp_frame(f, mc_mld, "ff02::16", msg, 28);
	client_send(f, add_hop_by_hop(f, n));
	/* a neighbour solicitation for the server */
	memset(msg, 0, sizeof(msg));
	msg[0] = 135;
	memcpy(msg + 8, &srv_ll, 16);
	client_send(f, icmp_frame(f, srv_mac, "ff02::1:ff00:1", msg, 24));
	/* UDP to 547 behind a Fragment header (first fragment, M=1) */
	n = udp_frame(f, mc_dhcp, 547, "g-frag");
	memmove(f + PACKET6_ICMP_OFFSET + 8, f + PACKET6_ICMP_OFFSET, n - PACKET6_ICMP_OFFSET);
	memcpy(f + PACKET6_ICMP_OFFSET, (const uint8_t[]){17, 0, 0, 1, 0, 0, 0, 7}, 8);
	f[20] = 44;
	f[19] = (uint8_t)(f[19] + 8);
	client_send(f, n + 8);
	/* IPv4 ethertype */
	n = udp_frame(f, mc_dhcp, 547, "h-ipv4");
	f[12] = 0x08;
	f[13] = 0x00;
	client_send(f, n);
	/* unicast to another host's MAC */
	client_send(f, udp_frame(f, other_mac, 547, "i-otherhost"));
}

static void
test_filter(void)
{
	static const uint8_t rs[16] = {
	    133, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
	struct seen s = {0};
	uint8_t f[256];
	unsigned count;

	if (skip_unless_ready())
		return;
	CU_ASSERT_FATAL(pfd >= 0);
	client_send(f, udp_frame(f, mc_dhcp, 547, "a-547"));
	send_unwanted();
	client_send(f, icmp_frame(f, mc_routers, "ff02::2", rs, sizeof(rs)));
	/* a router solicitation behind a Hop-by-Hop header: walked by filter and parser */
	client_send(f, add_hop_by_hop(f, icmp_frame(f, mc_routers, "ff02::2", rs, sizeof(rs))));
	client_send(f, udp_frame(f, mc_dhcp, 547, "z-end"));
	count = server_read_until(on_filter_frame, &s);
	CU_ASSERT_EQUAL(s.end, 1);
	CU_ASSERT_EQUAL(s.udp547, 1);
	CU_ASSERT_EQUAL(s.rs, 2);
	CU_ASSERT_EQUAL(s.other, 0);
	CU_ASSERT_EQUAL(count, 4); /* nothing else passed the filter, parsed or not */
}

/*
 * From the client: a UDP datagram to the server's link-local address and port, then an echo
 * request; reads ICMPv6 until the echo reply (the server handles both in order), true when a
 * port-unreachable came before it.
 */
static bool
port_unreachable(uint16_t port)
{
	struct sockaddr_in6 to = {
	    .sin6_family = AF_INET6, .sin6_addr = srv_ll, .sin6_scope_id = (uint32_t)cli_ifindex};
	uint8_t echo[8] = {ICMP6_ECHO_REQUEST, 0, 0, 0, 0x77, 0x36, 0, (uint8_t)port};
	bool unreachable = false;
	int u, raw;

	enter(cli_ns);
	u = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	raw = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMPV6);
	enter(srv_ns);
	CU_ASSERT_FATAL(u >= 0 && raw >= 0);
	to.sin6_port = htons(port);
	CU_ASSERT_EQUAL(sendto(u, "x", 1, 0, (struct sockaddr *)&to, sizeof(to)), 1);
	to.sin6_port = 0;
	CU_ASSERT_EQUAL(sendto(raw, echo, sizeof(echo), 0, (struct sockaddr *)&to, sizeof(to)), 8);
	for (;;) {
		struct pollfd p = {.fd = raw, .events = POLLIN};
		uint8_t m[1500];
		ssize_t n;

		if (poll(&p, 1, SAFETY_MS) <= 0) {
			CU_FAIL("no echo reply");
			break;
		}
		n = recv(raw, m, sizeof(m), 0);
		if (n >= 8 && m[0] == ICMP6_ECHO_REPLY && m[4] == 0x77 && m[7] == (uint8_t)port)
			break;
		if (n >= 8 && m[0] == ICMP6_DST_UNREACH && m[1] == ICMP6_DST_UNREACH_NOPORT)
			unreachable = true;
	}
	close(u);
	close(raw);
	return unreachable;
}

static void
test_no_port_unreachable(void)
{
	if (skip_unless_ready())
		return;
	CU_ASSERT_FATAL(ufd >= 0);
	CU_ASSERT(!port_unreachable(547));
	/* the control: a port without a socket is answered */
	CU_ASSERT(port_unreachable(548));
}

struct solicit_seen {
	bool csum_not_ready;
	size_t len;
};

static bool
on_solicit(const struct ip6_frame *h, bool csum_not_ready, void *userdata)
{
	struct solicit_seen *s = userdata;
	struct in6_addr ll, mc;

	ipv6_link_local_from_mac(cli_mac, &ll);
	CU_ASSERT_EQUAL(ipv6_parse("ff02::1:2", &mc), 0);
	if (h->next_header != IPPROTO_UDP || h->payload_len < 4 || h->payload[0] != 1)
		return false;
	CU_ASSERT_EQUAL(memcmp(h->src_mac, cli_mac, 6), 0);
	CU_ASSERT_EQUAL(memcmp(h->dst_mac, mc_dhcp, 6), 0);
	CU_ASSERT(ipv6_equal(&h->src, &ll));
	CU_ASSERT(ipv6_equal(&h->dst, &mc));
	CU_ASSERT_EQUAL(h->sport, 546);
	CU_ASSERT_EQUAL(h->dport, 547);
	s->csum_not_ready = csum_not_ready;
	s->len = h->payload_len;
	return true;
}

/* A real client: ISC dhclient -6 in the client namespace; its SOLICIT arrives and parses. */
static void
test_dhclient_solicit(void)
{
	struct solicit_seen s = {0};
	char lf[128], pf[128], log[128];
	pid_t pid;

	if (skip_unless_ready())
		return;
	if (system("command -v dhclient >/dev/null 2>&1") != 0) {
		test_skip("dhclient is not installed (isc-dhcp-client)");
		return;
	}
	CU_ASSERT_FATAL(pfd >= 0);
	snprintf(lf, sizeof(lf), "%s/leases", tmpdir);
	snprintf(pf, sizeof(pf), "%s/pid", tmpdir);
	snprintf(log, sizeof(log), "%s/dhclient.log", tmpdir);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || setns(cli_ns, CLONE_NEWNET) < 0)
			_exit(126);
		execlp("dhclient", "dhclient", "-6", "-1", "-d", "-v", "-sf", "/bin/true", "-lf",
		    lf, "-pf", pf, "vc", (char *)NULL);
		_exit(127);
	}
	dhclient_pid = pid;
	(void)server_read_until(on_solicit, &s);
	kill(pid, SIGKILL);
	CU_ASSERT_EQUAL(waitpid(pid, NULL, 0), pid);
	dhclient_pid = -1;
	CU_ASSERT(s.len > 0);
	printf("dhclient SOLICIT: %zu bytes, checksum %s\n", s.len,
	    s.csum_not_ready ? "not ready (veth, CHECKSUM_PARTIAL)" : "complete");
}

/* Runs cmd (a shell test) until it succeeds: for the client kernel to act on what it got. */
static bool
eventually(const char *cmd)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (system(cmd) == 0)
			return true;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > SAFETY_MS)
			return false;
		usleep(20 * 1000);
	}
}

static void
check_not_own(void *userdata, const uint8_t *frame, size_t len, size_t wire_len, bool csum)
{
	struct ip6_frame g;

	(void)userdata;
	(void)wire_len;
	CU_ASSERT(packet6_parse(frame, len, csum, &g) != 0 || memcmp(g.src_mac, srv_mac, 6) != 0);
}

/*
 * dhcp_socket_send_frames: an RA and an unsolicited NA in one batch, judged by the client's kernel:
 * it installs the on-link prefix (L=1) without an address (A=0) and without a default route
 * (lifetime 0), takes the MTU, and lets the NA (O=1) override its neighbour entry.
 */
static void
test_send_ra_na(void)
{
	static const uint8_t new_mac[6] = {0x02, 0, 0, 0, 0, 0x42};
	struct ra_params p = {.managed = true,
	    .other = true,
	    .prefix_len = 64,
	    .prefix_valid = 3600,
	    .prefix_preferred = 1800,
	    .mtu = 1400};
	struct ip6_frame h = {.dst_mac = {0x33, 0x33, 0, 0, 0, 1}};
	uint8_t ra[256], na[256], *frames[2] = {ra, na};
	size_t lens[2];
	char cmd[512], ll[IPV6_STRLEN];

	if (skip_unless_ready())
		return;
	CU_ASSERT_FATAL(pfd >= 0);
	ipv6_format(&srv_ll, ll);
	CU_ASSERT_EQUAL_FATAL(ipv6_parse("2001:db8:77::", &p.prefix), 0);
	CU_ASSERT_EQUAL_FATAL(ipv6_parse("ff02::1", &h.dst), 0);
	memcpy(h.src_mac, srv_mac, 6);
	h.src = srv_ll; /* RFC 4861 §6.1.2: an RA's source is link-local */
	lens[0] = packet6_finish_icmp(ra, &h,
	    ra_build(ra + PACKET6_ICMP_OFFSET, sizeof(ra) - PACKET6_ICMP_OFFSET, &p, srv_mac));
	lens[1] = packet6_finish_icmp(na, &h,
	    na_build_unsolicited(
		na + PACKET6_ICMP_OFFSET, sizeof(na) - PACKET6_ICMP_OFFSET, &srv_ll, new_mac));
	CU_ASSERT_FATAL(lens[0] > PACKET6_ICMP_OFFSET && lens[1] > PACKET6_ICMP_OFFSET);
	/* the client knows the server's old MAC (stale: an NA may override it) */
	CU_ASSERT_EQUAL_FATAL(
	    sh("ip -n %s -6 neigh replace %s dev vc lladdr %02x:%02x:%02x:%02x:%02x:%02x nud stale",
		ns_cli, ll, srv_mac[0], srv_mac[1], srv_mac[2], srv_mac[3], srv_mac[4], srv_mac[5]),
	    0);
	CU_ASSERT_EQUAL(
	    dhcp_socket_send_frames(pfd, srv_ifindex, ETH_P_IPV6, frames, lens, 2, NULL), 2);
	snprintf(cmd, sizeof(cmd),
	    "ip -n %s -6 route show dev vc | grep -q '^2001:db8:77::/64 proto'", ns_cli);
	CU_ASSERT(eventually(cmd));
	snprintf(cmd, sizeof(cmd),
	    "test \"$(ip netns exec %s cat /proc/sys/net/ipv6/conf/vc/mtu)\" = 1400", ns_cli);
	CU_ASSERT(eventually(cmd));
	snprintf(cmd, sizeof(cmd),
	    "ip -n %s -6 neigh show %s dev vc | grep -q 'lladdr 02:00:00:00:00:42'", ns_cli, ll);
	CU_ASSERT(eventually(cmd));
	/* no SLAAC address from the prefix (A=0), no default route (router lifetime 0) */
	snprintf(cmd, sizeof(cmd), "ip -n %s -6 addr show dev vc | grep -q 2001:db8:77", ns_cli);
	CU_ASSERT_NOT_EQUAL(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "ip -n %s -6 route show | grep -q ^default", ns_cli);
	CU_ASSERT_NOT_EQUAL(system(cmd), 0);
	/* our own output never comes back on the packet socket */
	{
		int r;

		while ((r = dhcp_socket_ring_next(&ring, check_not_own, NULL)) > 0)
			;
		CU_ASSERT_EQUAL(r, -EAGAIN);
	}
}

static const struct test_case socket6_tests[] = {
    {"open: both sockets, locked filter, groups", test_open},
    {"filter: UDP 547 and RS in, the rest out", test_filter},
    {"UDP :547 socket: no port-unreachable", test_no_port_unreachable},
    {"dhclient -6 SOLICIT through the filter", test_dhclient_solicit},
    {"send: RA and NA, as the client kernel takes them", test_send_ra_na},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp6-socket", .init = suite_init, .cleanup = suite_cleanup, .tests = socket6_tests},
    {.name = NULL},
};
