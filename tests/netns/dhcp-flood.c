/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp-flood - a DISCOVER flood from made-up MACs, for tests/netns/test-agent-offers.sh
 * (built as build/tests/dhcp-flood).
 *
 *   dhcp-flood IFACE COUNT RATE [SEED]
 *       Sends COUNT DHCPDISCOVERs, broadcast from 0.0.0.0:68 to 255.255.255.255:67 on IFACE
 *       (an AF_PACKET socket: run it in a namespace the test created), each from a new
 *       made-up chaddr (locally administered unicast, drawn from SEED) and a new xid, at about
 *       RATE a second (sendmmsg batches of 64, paced by the monotonic clock), and never reads
 *       a reply. The Ethernet source is IFACE's own MAC, so the bridge learns one address.
 *       Prints "sent N in S s" and exits 0; 2 on errors.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <netpacket/packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dhcp/dhcp.h"
#include "dhcp/proto.h"
#include "lib/buf.h"

#define BATCH 64
#define DHCP_LEN 300 /* BOOTP minimum: fixed header, cookie, options, padding */
#define FRAME_LEN (14 + 20 + 8 + DHCP_LEN)

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* xorshift64*: made-up MACs and xids, the same for one seed */
static uint64_t
next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static uint16_t
ip_checksum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* One DISCOVER frame from chaddr mac with xid into f (FRAME_LEN bytes). */
static void
build(uint8_t *f, const uint8_t src[6], const uint8_t mac[6], uint32_t xid)
{
	uint8_t *ip = f + 14, *udp = ip + 20, *d = udp + 8, *o;
	struct dhcp_msg *m = (struct dhcp_msg *)d;

	memset(f, 0, FRAME_LEN);
	memset(f, 0xff, 6);
	memcpy(f + 6, src, 6);
	be16_put(f + 12, ETH_P_IP);
	ip[0] = 0x45;
	be16_put(ip + 2, 20 + 8 + DHCP_LEN);
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	be32_put(ip + 16, 0xffffffffu);
	be16_put(ip + 10, ip_checksum(ip, 20));
	be16_put(udp, 68);
	be16_put(udp + 2, 67);
	be16_put(udp + 4, 8 + DHCP_LEN); /* checksum 0: none (RFC 768) */
	m->op = BOOTREQUEST;
	m->htype = 1;
	m->hlen = 6;
	be32_put(m->xid, xid);
	memcpy(m->chaddr, mac, 6);
	o = d + DHCP_FIXED_LEN;
	be32_put(o, DHCP_MAGIC_COOKIE);
	o += 4;
	*o++ = DHCP_OPT_MESSAGE_TYPE;
	*o++ = 1;
	*o++ = DHCP_MSG_DISCOVER;
	*o++ = DHCP_OPT_END;
}

int
main(int argc, char **argv)
{
	static uint8_t frames[BATCH][FRAME_LEN];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct sockaddr_ll to = {0};
	struct ifreq ifr = {0};
	unsigned long count, rate;
	uint64_t seed = 1, start, sent = 0;
	uint8_t src[6];
	int fd;

	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: dhcp-flood IFACE COUNT RATE [SEED]\n");
		return 2;
	}
	count = strtoul(argv[2], NULL, 10);
	rate = strtoul(argv[3], NULL, 10);
	if (argc == 5)
		seed = strtoull(argv[4], NULL, 10) | 1;
	if (count == 0 || rate == 0 || strlen(argv[1]) >= IFNAMSIZ) {
		fprintf(stderr, "dhcp-flood: bad arguments\n");
		return 2;
	}
	if ((fd = socket(AF_PACKET, SOCK_RAW, 0)) < 0) {
		perror("dhcp-flood: socket");
		return 2;
	}
	strcpy(ifr.ifr_name, argv[1]);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		perror("dhcp-flood: SIOCGIFHWADDR");
		return 2;
	}
	memcpy(src, ifr.ifr_hwaddr.sa_data, 6);
	to.sll_family = AF_PACKET;
	to.sll_protocol = htons(ETH_P_IP);
	to.sll_ifindex = (int)if_nametoindex(argv[1]);
	to.sll_halen = 6;
	memset(to.sll_addr, 0xff, 6);
	if (to.sll_ifindex == 0) {
		perror("dhcp-flood: if_nametoindex");
		return 2;
	}
	start = now_ns();
	while (sent < count) {
		size_t n = count - sent < BATCH ? (size_t)(count - sent) : BATCH, k = 0;
		uint64_t due = start + sent * UINT64_C(1000000000) / rate, now;
		int r;

		while ((now = now_ns()) < due) {
			struct timespec ts = {.tv_nsec = (long)(due - now)};
			nanosleep(&ts, NULL);
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t x = next_rand(&seed);
			uint8_t mac[6] = {0x02, (uint8_t)(x >> 8), (uint8_t)(x >> 16),
			    (uint8_t)(x >> 24), (uint8_t)(x >> 32), (uint8_t)(x >> 40)};
			build(frames[i], src, mac, (uint32_t)(x >> 32) ^ (uint32_t)x);
			iov[i] = (struct iovec){.iov_base = frames[i], .iov_len = FRAME_LEN};
			msgs[i] = (struct mmsghdr){.msg_hdr = {.msg_name = &to,
						       .msg_namelen = sizeof(to),
						       .msg_iov = &iov[i],
						       .msg_iovlen = 1}};
		}
		while (k < n) {
			r = sendmmsg(fd, msgs + k, (unsigned)(n - k), 0);
			if (r < 0 && (errno == ENOBUFS || errno == EAGAIN || errno == EINTR))
				continue;
			if (r < 0) {
				perror("dhcp-flood: sendmmsg");
				return 2;
			}
			k += (size_t)r;
		}
		sent += n;
	}
	printf("sent %" PRIu64 " in %.2f s\n", sent, (double)(now_ns() - start) / 1e9);
	close(fd);
	return 0;
}
