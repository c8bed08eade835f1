/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-e2e-client IFACE [TIMEOUT_S] - a minimal DHCP client for the end-to-end latency
 * benchmark (scripts/bench-e2e.sh). On a packet socket bound to IFACE (its MAC is chaddr) it
 * sends a broadcast DISCOVER every 10 ms until an OFFER comes, then a REQUEST (selecting,
 * options 50 and 54) every 10 ms until the ACK, and prints
 *     bound ADDRESS SERVER REALTIME_NS
 * with the CLOCK_REALTIME of the ACK, so the script can subtract the moment it created the
 * VirtualMachineNetworkConfig. A NAK starts over. Exit 0 when bound, 1 on timeout, 2 on
 * errors. Much faster retries than a real client (dhclient waits seconds between DISCOVERs):
 * what is measured is the control plane and the agent, not the client's back-off.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dhcp/packet.h"
#include "dhcp/proto.h"

#define RETRY_MS 10

static uint64_t
now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void
put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static uint32_t
get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Builds DISCOVER (type 1) or REQUEST (type 3, with yiaddr/server) after the headroom. */
static size_t
build(uint8_t *buf, const uint8_t mac[6], uint32_t xid, int type, uint32_t yiaddr, uint32_t server)
{
	uint8_t *p = buf + DHCP_FRAME_HEADROOM;
	struct dhcp_msg *m = (struct dhcp_msg *)p;
	uint8_t *o = p + sizeof(*m);
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	memset(p, 0, DHCP_MIN_MESSAGE);
	m->op = 1;
	m->htype = DHCP_HTYPE_ETHER;
	m->hlen = 6;
	put32(m->xid, xid);
	m->flags[0] = DHCP_FLAG_BROADCAST >> 8;
	memcpy(m->chaddr, mac, 6);
	put32(o, DHCP_MAGIC_COOKIE);
	o += 4;
	*o++ = DHCP_OPT_MESSAGE_TYPE;
	*o++ = 1;
	*o++ = (uint8_t)type;
	if (type == 3) {
		*o++ = DHCP_OPT_REQUESTED_IP;
		*o++ = 4;
		put32(o, yiaddr);
		o += 4;
		*o++ = DHCP_OPT_SERVER_ID;
		*o++ = 4;
		put32(o, server);
		o += 4;
	}
	*o++ = DHCP_OPT_PRL;
	*o++ = 3;
	*o++ = DHCP_OPT_SUBNET_MASK;
	*o++ = DHCP_OPT_ROUTER;
	*o++ = DHCP_OPT_DNS;
	*o++ = DHCP_OPT_END;
	return dhcp_frame_build(
	    p, DHCP_MIN_MESSAGE, mac, bcast, 0, 0xffffffffu, DHCP_PORT_CLIENT, DHCP_PORT_SERVER);
}

/* A reply for xid: returns its message type (0 when not one) and yiaddr/server id. */
static int
parse(const uint8_t *f, size_t len, uint32_t xid, uint32_t *yiaddr, uint32_t *server)
{
	const struct ipv4_hdr *ip;
	const struct udp_hdr *udp;
	const struct dhcp_msg *m;
	const uint8_t *o, *end;
	size_t ihl;
	int type = 0;

	if (len < sizeof(struct eth_hdr) + sizeof(*ip))
		return 0;
	ip = (const struct ipv4_hdr *)(f + sizeof(struct eth_hdr));
	ihl = (size_t)(ip->ver_ihl & 15) * 4;
	if ((ip->ver_ihl >> 4) != 4 || ip->protocol != IPPROTO_UDP_ ||
	    len < sizeof(struct eth_hdr) + ihl + sizeof(*udp) + sizeof(*m) + 4)
		return 0;
	udp = (const struct udp_hdr *)((const uint8_t *)ip + ihl);
	if ((udp->dest[0] << 8 | udp->dest[1]) != DHCP_PORT_CLIENT)
		return 0;
	m = (const struct dhcp_msg *)(udp + 1);
	if (m->op != 2 || get32(m->xid) != xid)
		return 0;
	*yiaddr = get32(m->yiaddr);
	o = (const uint8_t *)(m + 1) + 4;
	end = f + len;
	while (o < end && *o != DHCP_OPT_END) {
		if (*o == DHCP_OPT_PAD) {
			o++;
			continue;
		}
		if (o + 2 > end || o + 2 + o[1] > end)
			break;
		if (o[0] == DHCP_OPT_MESSAGE_TYPE && o[1] == 1)
			type = o[2];
		else if (o[0] == DHCP_OPT_SERVER_ID && o[1] == 4)
			*server = get32(o + 2);
		o += 2 + o[1];
	}
	return type;
}

int
main(int argc, char **argv)
{
	uint8_t buf[1600], mac[6];
	struct sockaddr_ll sll = {0};
	struct ifreq ifr = {0};
	uint32_t xid, yiaddr = 0, server = 0, y, s;
	uint64_t deadline, next = 0, t;
	int fd, state = 1, type, timeout_s = argc > 2 ? atoi(argv[2]) : 30;
	size_t flen = 0;
	ssize_t n;
	char a[INET_ADDRSTRLEN], b[INET_ADDRSTRLEN];

	if (argc < 2) {
		fprintf(stderr, "usage: bench-e2e-client IFACE [TIMEOUT_S]\n");
		return 2;
	}
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(0x0800));
	if (fd < 0) {
		perror("bench-e2e-client: socket");
		return 2;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", argv[1]);
	/* ifr_hwaddr and ifr_ifindex share a union: one at a time */
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		perror("bench-e2e-client: SIOCGIFHWADDR");
		return 2;
	}
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	if (ioctl(fd, SIOCGIFINDEX, &ifr) < 0) {
		perror("bench-e2e-client: SIOCGIFINDEX");
		return 2;
	}
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(0x0800);
	sll.sll_ifindex = ifr.ifr_ifindex;
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		perror("bench-e2e-client: bind");
		return 2;
	}
	srandom((unsigned)now_ns(CLOCK_MONOTONIC) ^ (unsigned)getpid());
	xid = (uint32_t)random();
	deadline = now_ns(CLOCK_MONOTONIC) + (uint64_t)timeout_s * 1000000000u;
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};

		t = now_ns(CLOCK_MONOTONIC);
		if (t >= deadline) {
			fprintf(stderr, "bench-e2e-client: no lease within %d s\n", timeout_s);
			return 1;
		}
		if (t >= next) {
			flen = build(buf, mac, xid, state == 1 ? 1 : 3, yiaddr, server);
			if (sendto(fd, buf, flen, 0, (struct sockaddr *)&sll, sizeof(sll)) < 0 &&
			    errno != ENOBUFS) {
				perror("bench-e2e-client: send");
				return 2;
			}
			next = t + RETRY_MS * 1000000u;
		}
		if (poll(&pfd, 1, (int)((next - t) / 1000000u) + 1) <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			continue;
		y = s = 0;
		type = parse(buf, (size_t)n, xid, &y, &s);
		if (type == 2 && state == 1) { /* OFFER */
			yiaddr = y;
			server = s;
			state = 3;
			next = 0;
		} else if (type == 5 && state == 3 && y == yiaddr) { /* ACK */
			t = now_ns(CLOCK_REALTIME);
			put32((uint8_t *)&y, yiaddr);
			put32((uint8_t *)&s, server);
			inet_ntop(AF_INET, &y, a, sizeof(a));
			inet_ntop(AF_INET, &s, b, sizeof(b));
			printf("bound %s %s %llu\n", a, b, (unsigned long long)t);
			close(fd);
			return 0;
		} else if (type == 6) { /* NAK */
			state = 1;
			xid++;
			next = 0;
		}
	}
}
