/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp-ha-probe - the client side and the wire check of the agent failover tests
 * (tests/netns/test-agent-ha.sh, scripts/bench-failover.sh; built as build/tests/dhcp-ha-probe).
 *
 *   dhcp-ha-probe renew IFACE CIADDR SERVER [TIMEOUT_S]
 *       A RENEWING client (RFC 2131 §4.3.2, §4.4.5): a REQUEST with ciaddr CIADDR and neither
 *       option 50 nor 54, sent from CIADDR:68 through the kernel's UDP socket to SERVER:67
 *       (unicast: the kernel resolves SERVER by ARP, so a gratuitous ARP is what redirects it)
 *       every 20 ms (PROBE_RETRY_MS, 1 to 1000, when set) until an ACK for it comes back.
 *       SERVER 255.255.255.255 is REBINDING (broadcast). Prints "ack YIADDR REALTIME_NS" (the
 *       ACK's arrival) and exits 0; 1 on a NAK or a timeout; 2 on errors. CIADDR must be an
 *       address of IFACE.
 *
 *   dhcp-ha-probe capture IFACE OUT
 *       Every DHCP reply (UDP from port 67) received on IFACE ("any": every interface of the
 *       namespace; frames sent are left out, so a bridged frame is seen on its way in), one
 *       line each, appended to OUT:
 *           REALTIME_NS SRC_MAC SRC_IP TYPE XID YIADDR IFINDEX CHADDR
 *       until SIGTERM/SIGINT. Run in the bridge's namespace it sees every replica's replies,
 *       so the test can check that no two ever answered at once.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dhcp/proto.h"
#include "lib/buf.h"

#define RETRY_MS 20 /* default of PROBE_RETRY_MS */

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t
now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The message type of the DHCP message m (len bytes, after the BOOTP header); 0 when none. */
static int
msg_type(const uint8_t *m, size_t len)
{
	const uint8_t *o = m + sizeof(struct dhcp_msg) + 4, *end = m + len;

	if (len < sizeof(struct dhcp_msg) + 4 ||
	    be32_get(m + sizeof(struct dhcp_msg)) != DHCP_MAGIC_COOKIE)
		return 0;
	while (o < end && *o != DHCP_OPT_END) {
		if (*o == DHCP_OPT_PAD) {
			o++;
			continue;
		}
		if (o + 2 > end || o + 2 + o[1] > end)
			break;
		if (o[0] == DHCP_OPT_MESSAGE_TYPE && o[1] == 1)
			return o[2];
		o += 2 + o[1];
	}
	return 0;
}

static int
renew(const char *ifname, const char *ciaddr_s, const char *server_s, int timeout_s)
{
	struct sockaddr_in me = {.sin_family = AF_INET, .sin_port = htons(DHCP_PORT_CLIENT)};
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(DHCP_PORT_SERVER)};
	uint8_t buf[1500], mac[6] = {0};
	struct dhcp_msg *m = (struct dhcp_msg *)buf;
	uint64_t deadline, next = 0, t;
	uint32_t xid, ciaddr;
	char path[128], *end;
	const char *env = getenv("PROBE_RETRY_MS");
	unsigned v[6];
	long retry_ms = RETRY_MS;
	int fd, one = 1;
	FILE *f;

	if (env != NULL && *env != '\0') {
		errno = 0;
		retry_ms = strtol(env, &end, 10);
		if (errno != 0 || *end != '\0' || retry_ms < 1 || retry_ms > 1000) {
			fprintf(stderr, "dhcp-ha-probe: PROBE_RETRY_MS=%s: not 1 to 1000\n", env);
			return 2;
		}
	}
	if (inet_pton(AF_INET, ciaddr_s, &me.sin_addr) != 1 ||
	    inet_pton(AF_INET, server_s, &to.sin_addr) != 1) {
		fprintf(stderr, "dhcp-ha-probe: bad address\n");
		return 2;
	}
	ciaddr = ntohl(me.sin_addr.s_addr);
	snprintf(path, sizeof(path), "/sys/class/net/%s/address", ifname);
	if ((f = fopen(path, "r")) == NULL ||
	    fscanf(f, "%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) != 6) {
		fprintf(stderr, "dhcp-ha-probe: %s: no MAC\n", ifname);
		if (f)
			fclose(f);
		return 2;
	}
	fclose(f);
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)v[i];
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname)) < 0 ||
	    bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0) {
		fprintf(stderr, "dhcp-ha-probe: socket: %s\n", strerror(errno));
		return 2;
	}
	srandom((unsigned)now_ns(CLOCK_MONOTONIC));
	xid = (uint32_t)random();
	memset(buf, 0, sizeof(buf));
	m->op = 1;
	m->htype = DHCP_HTYPE_ETHER;
	m->hlen = 6;
	be32_put(m->xid, xid);
	be32_put(m->ciaddr, ciaddr);
	memcpy(m->chaddr, mac, 6);
	{
		uint8_t *o = buf + sizeof(*m);
		be32_put(o, DHCP_MAGIC_COOKIE);
		o += 4;
		*o++ = DHCP_OPT_MESSAGE_TYPE;
		*o++ = 1;
		*o++ = 3;
		*o++ = DHCP_OPT_END;
	}
	deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t)timeout_s * 1000000000u;
	while ((t = now_ns(CLOCK_MONOTONIC)) < deadline) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;

		if (t >= next) {
			/* ENETUNREACH/EHOSTUNREACH while ARP fails: keep trying */
			(void)sendto(
			    fd, buf, DHCP_MIN_MESSAGE, 0, (struct sockaddr *)&to, sizeof(to));
			next = t + (uint64_t)retry_ms * 1000000u;
		}
		if (poll(&p, 1, (int)retry_ms) <= 0)
			continue;
		n = recv(fd, buf + 600, sizeof(buf) - 600, 0);
		if (n < (ssize_t)sizeof(struct dhcp_msg))
			continue;
		{
			const struct dhcp_msg *r = (const struct dhcp_msg *)(buf + 600);
			int type = msg_type(buf + 600, (size_t)n);
			char a[INET_ADDRSTRLEN];
			struct in_addr y;

			if (r->op != 2 || be32_get(r->xid) != xid)
				continue;
			if (type == 6) { /* DHCPNAK */
				fprintf(stderr, "dhcp-ha-probe: NAK\n");
				return 1;
			}
			if (type != 5) /* DHCPACK */
				continue;
			y.s_addr = htonl(be32_get(r->yiaddr));
			printf("ack %s %llu\n", inet_ntop(AF_INET, &y, a, sizeof(a)),
			    (unsigned long long)now_ns(CLOCK_REALTIME));
			return 0;
		}
	}
	fprintf(stderr, "dhcp-ha-probe: no ACK in %d s\n", timeout_s);
	return 1;
}

static int
capture(const char *ifname, const char *out)
{
	/* ETH_P_ALL: taps see a frame before the bridge consumes it; ETH_P_IP sockets do not */
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	uint8_t f[2048];
	FILE *o;
	int fd;

	sll.sll_ifindex = strcmp(ifname, "any") == 0 ? 0 : (int)if_nametoindex(ifname);
	if (sll.sll_ifindex == 0 && strcmp(ifname, "any") != 0) {
		fprintf(stderr, "dhcp-ha-probe: %s: no such interface\n", ifname);
		return 2;
	}
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		fprintf(stderr, "dhcp-ha-probe: packet socket: %s\n", strerror(errno));
		return 2;
	}
	if ((o = fopen(out, "a")) == NULL) {
		fprintf(stderr, "dhcp-ha-probe: %s: %s\n", out, strerror(errno));
		return 2;
	}
	setvbuf(o, NULL, _IOLBF, 0);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	/* ready: the test waits for this line before it starts */
	fprintf(o, "# capturing on %s\n", ifname);
	while (!stop) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		const uint8_t *ip, *udp, *m, *ch;
		size_t ihl;
		ssize_t n;
		char src[INET_ADDRSTRLEN], yi[INET_ADDRSTRLEN];
		struct in_addr a;

		if (poll(&p, 1, 100) <= 0)
			continue;
		struct sockaddr_ll from;
		socklen_t flen = sizeof(from);
		n = recvfrom(fd, f, sizeof(f), 0, (struct sockaddr *)&from, &flen);
		if (n < 0 || from.sll_pkttype == PACKET_OUTGOING)
			continue;
		if (n < 14 + 20 + 8 + (ssize_t)sizeof(struct dhcp_msg))
			continue;
		if (f[12] != 0x08 || f[13] != 0x00)
			continue; /* not IPv4 */
		ip = f + 14;
		ihl = (size_t)(ip[0] & 15) * 4;
		if ((ip[0] >> 4) != 4 || ip[9] != 17 ||
		    (size_t)n < 14 + ihl + 8 + sizeof(struct dhcp_msg))
			continue;
		udp = ip + ihl;
		if ((udp[0] << 8 | udp[1]) != DHCP_PORT_SERVER)
			continue;
		m = udp + 8;
		if (m[0] != 2)
			continue;
		a.s_addr = htonl(be32_get(ip + 12));
		inet_ntop(AF_INET, &a, src, sizeof(src));
		a.s_addr = htonl(be32_get(((const struct dhcp_msg *)m)->yiaddr));
		inet_ntop(AF_INET, &a, yi, sizeof(yi));
		ch = ((const struct dhcp_msg *)m)->chaddr;
		fprintf(o,
		    "%llu %02x:%02x:%02x:%02x:%02x:%02x %s %d %08x %s %d "
		    "%02x:%02x:%02x:%02x:%02x:%02x\n",
		    (unsigned long long)now_ns(CLOCK_REALTIME), f[6], f[7], f[8], f[9], f[10],
		    f[11], src, msg_type(m, (size_t)n - (size_t)(m - f)),
		    be32_get(((const struct dhcp_msg *)m)->xid), yi, from.sll_ifindex, ch[0], ch[1],
		    ch[2], ch[3], ch[4], ch[5]);
	}
	fclose(o);
	close(fd);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc >= 5 && strcmp(argv[1], "renew") == 0)
		return renew(argv[2], argv[3], argv[4], argc > 5 ? atoi(argv[5]) : 30);
	if (argc == 4 && strcmp(argv[1], "capture") == 0)
		return capture(argv[2], argv[3]);
	fprintf(stderr, "usage: dhcp-ha-probe renew IFACE CIADDR SERVER [TIMEOUT_S]\n"
			"       dhcp-ha-probe capture IFACE OUT\n");
	return 2;
}
