/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp-big-discover - the client of tests/netns/test-agent-mtu.sh (built as
 * build/tests/dhcp-big-discover):
 *
 *   dhcp-big-discover IFACE MAC SIZE [TIMEOUT_S]
 *       Sends a DHCPDISCOVER of SIZE DHCP bytes (its options padded with PAD up to SIZE) as
 *       a raw broadcast Ethernet frame on IFACE, from MAC, once a second until an OFFER for
 *       its xid comes back; prints "offer YIADDR" and exits 0; 1 after TIMEOUT_S (default
 *       5); 2 on errors. A request larger than what a 1500-byte link carries.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dhcp/proto.h"
#include "lib/buf.h"

#define FRAME_MAX 65536

static uint64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint16_t
csum(const uint8_t *p, size_t n, uint32_t sum)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n % 2)
		sum += (uint32_t)(p[n - 1] << 8);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The whole frame into f: Ethernet, IPv4 0.0.0.0 -> 255.255.255.255, UDP 68 -> 67, DHCP. */
static size_t
build(uint8_t *f, const uint8_t mac[6], uint32_t xid, size_t size)
{
	uint8_t *ip = f + 14, *udp = ip + 20, *d = udp + 8;
	struct dhcp_msg *m = (struct dhcp_msg *)d;
	size_t o = sizeof(*m), udp_len = 8 + size;
	uint32_t sum;

	memset(f, 0, 14 + 20 + 8 + size);
	memset(f, 0xff, 6);
	memcpy(f + 6, mac, 6);
	be16_put(f + 12, ETH_P_IP);
	m->op = 1;
	m->htype = 1;
	m->hlen = 6;
	be32_put(m->xid, xid);
	be16_put(m->flags, 0x8000);
	memcpy(m->chaddr, mac, 6);
	be32_put(d + o, DHCP_MAGIC_COOKIE);
	o += 4;
	d[o++] = DHCP_OPT_MESSAGE_TYPE, d[o++] = 1, d[o++] = 1;
	d[o++] = DHCP_OPT_PRL, d[o++] = 3, d[o++] = 1, d[o++] = 3, d[o++] = 6;
	/* PAD (0) up to the END byte: already zero */
	d[size - 1] = DHCP_OPT_END;

	be16_put(udp, 68);
	be16_put(udp + 2, 67);
	be16_put(udp + 4, (uint16_t)udp_len);
	/* pseudo header: 0.0.0.0, 255.255.255.255, protocol 17, UDP length */
	sum = 0xffff + 0xffff + 17 + (uint32_t)udp_len;
	be16_put(udp + 6, csum(udp, udp_len, sum) ? csum(udp, udp_len, sum) : 0xffff);
	ip[0] = 0x45;
	be16_put(ip + 2, (uint16_t)(20 + udp_len));
	ip[8] = 64;
	ip[9] = 17;
	memset(ip + 16, 0xff, 4);
	be16_put(ip + 10, csum(ip, 20, 0));
	return 14 + 20 + udp_len;
}

int
main(int argc, char **argv)
{
	static uint8_t out[FRAME_MAX], in[FRAME_MAX];
	unsigned m[6];
	uint8_t mac[6];
	struct sockaddr_ll sll = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP)};
	size_t size, len;
	uint64_t end, next = 0;
	uint32_t xid;
	int fd;

	if (argc < 4 ||
	    sscanf(argv[2], "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6) {
		fprintf(stderr, "usage: dhcp-big-discover IFACE MAC SIZE [TIMEOUT_S]\n");
		return 2;
	}
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)m[i];
	size = strtoul(argv[3], NULL, 10);
	if (size < sizeof(struct dhcp_msg) + 4 + 9 || size > FRAME_MAX - 14 - 20 - 8) {
		fprintf(stderr, "dhcp-big-discover: SIZE out of range\n");
		return 2;
	}
	end = now_ms() + (argc > 4 ? strtoul(argv[4], NULL, 10) : 5) * 1000u;
	xid = (uint32_t)getpid() * 2654435761u;
	sll.sll_ifindex = (int)if_nametoindex(argv[1]);
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_IP));
	if (sll.sll_ifindex == 0 || fd < 0 || bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		fprintf(stderr, "dhcp-big-discover: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	len = build(out, mac, xid, size);
	for (uint64_t t = now_ms(); t < end; t = now_ms()) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t n;
		size_t ihl;
		const uint8_t *d;

		if (t >= next) {
			if (send(fd, out, len, 0) != (ssize_t)len) {
				fprintf(stderr, "dhcp-big-discover: send: %s\n", strerror(errno));
				return 2;
			}
			next = t + 1000;
		}
		if (poll(&p, 1, (int)((next < end ? next : end) - t)) <= 0)
			continue;
		n = recv(fd, in, sizeof(in), 0);
		if (n < 14 + 20 + 8 + (ssize_t)sizeof(struct dhcp_msg) || in[23] != 17)
			continue;
		ihl = (size_t)(in[14] & 15) * 4;
		if (14 + ihl + 8 + sizeof(struct dhcp_msg) > (size_t)n ||
		    be16_get(in + 14 + ihl + 2) != 68)
			continue;
		d = in + 14 + ihl + 8;
		if (d[0] != 2 || be32_get(d + 4) != xid)
			continue;
		printf("offer %u.%u.%u.%u\n", d[16], d[17], d[18], d[19]);
		return 0;
	}
	return 1;
}
