/* SPDX-License-Identifier: Apache-2.0 */
/*
 * High availability on the wire (arp.h): the gratuitous ARP the active replica announces
 * the pool's server address with, and the ARP probes and the filtered ARP socket it fences
 * with (RFC 5227): a replica takes the address only when no other MAC answers for it. The
 * election itself is kube/leader.c's Lease; failover.c decides what a replica does with both.
 */
#include <errno.h>
#include <string.h>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if_arp.h>
#include <linux/filter.h>
#include <sys/socket.h>
#include <unistd.h>

#include "agent/arp.h"
#include "lib/buf.h"
#include "lib/util.h"

static void
arp_build(uint8_t f[AGENT_GARP_LEN], const uint8_t hwaddr[6], uint32_t spa, uint32_t tpa)
{
	memset(f, 0, AGENT_GARP_LEN);
	/* Ethernet: broadcast, from us, ARP */
	memset(f, 0xff, 6);
	memcpy(f + 6, hwaddr, 6);
	f[12] = ETH_P_ARP >> 8;
	f[13] = ETH_P_ARP & 0xff;
	/* ARP: Ethernet/IPv4, request; target MAC zero (RFC 5227 §2.1.1, §2.3) */
	f[15] = ARPHRD_ETHER;
	f[16] = ETH_P_IP >> 8;
	f[17] = ETH_P_IP & 0xff;
	f[18] = 6;
	f[19] = 4;
	f[21] = ARPOP_REQUEST;
	memcpy(f + 22, hwaddr, 6);
	be32_put(f + 28, spa);
	be32_put(f + 38, tpa);
}

void
agent_garp_build(uint8_t f[AGENT_GARP_LEN], const uint8_t hwaddr[6], uint32_t ip)
{
	arp_build(f, hwaddr, ip, ip);
}

void
agent_arp_probe_build(uint8_t f[AGENT_GARP_LEN], const uint8_t hwaddr[6], uint32_t ip)
{
	arp_build(f, hwaddr, 0, ip);
}

static int
send_frame(int fd, int ifindex, const uint8_t *frame, size_t len)
{
	struct sockaddr_ll to = {
	    .sll_family = AF_PACKET,
	    .sll_protocol = htons(ETH_P_ARP),
	    .sll_ifindex = ifindex,
	    .sll_halen = 6,
	    .sll_addr = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	};

	if (sendto(fd, frame, len, 0, (const struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}

int
agent_garp_send(int fd, int ifindex, const uint8_t hwaddr[6], uint32_t ip)
{
	uint8_t frame[AGENT_GARP_LEN];

	agent_garp_build(frame, hwaddr, ip);
	return send_frame(fd, ifindex, frame, sizeof(frame));
}

int
agent_arp_probe_send(int fd, int ifindex, const uint8_t hwaddr[6], uint32_t ip)
{
	uint8_t frame[AGENT_GARP_LEN];

	agent_arp_probe_build(frame, hwaddr, ip);
	return send_frame(fd, ifindex, frame, sizeof(frame));
}

int
agent_arp_set_filter(int fd, uint32_t ip)
{
	/* ARP whose sender is ip (a holder's reply or announcement), or a probe for ip */
	struct sock_filter code[] = {
	    BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12), /* ethertype */
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_ARP, 0, 6),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 28), /* sender IP */
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ip, 3, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 3), /* a probe? */
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 38),	  /* target IP */
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ip, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, AGENT_GARP_LEN),
	    BPF_STMT(BPF_RET | BPF_K, 0),
	};
	struct sock_fprog prog = {.len = (unsigned short)ELEMENTSOF(code), .filter = code};

	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0)
		return -errno;
	return 0;
}

int
agent_arp_open(int ifindex, uint32_t ip, int *ret_fd)
{
	struct sockaddr_ll sll = {
	    .sll_family = AF_PACKET,
	    .sll_protocol = htons(ETH_P_ARP),
	    .sll_ifindex = ifindex,
	};
	int fd, r;

	/* created with protocol 0 (receives nothing) until the filter is on, then bound */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if ((r = agent_arp_set_filter(fd, ip)) < 0)
		goto fail;
	if (bind(fd, (const struct sockaddr *)&sll, sizeof(sll)) < 0) {
		r = -errno;
		goto fail;
	}
	*ret_fd = fd;
	return 0;
fail:
	close(fd);
	return r;
}

int
agent_arp_classify(
    const uint8_t *f, size_t len, const uint8_t self[6], uint32_t ip, uint8_t ret_mac[6])
{
	uint32_t spa, tpa;

	if (len < AGENT_GARP_LEN || f[12] != (ETH_P_ARP >> 8) || f[13] != (ETH_P_ARP & 0xff) ||
	    f[14] != 0 || f[15] != ARPHRD_ETHER || f[16] != (ETH_P_IP >> 8) ||
	    f[17] != (ETH_P_IP & 0xff) || f[18] != 6 || f[19] != 4 || f[20] != 0 ||
	    (f[21] != ARPOP_REQUEST && f[21] != ARPOP_REPLY))
		return AGENT_ARP_OTHER;
	if (memcmp(f + 22, self, 6) == 0)
		return AGENT_ARP_OTHER; /* ours */
	spa = be32_get(f + 28);
	tpa = be32_get(f + 38);
	memcpy(ret_mac, f + 22, 6);
	if (spa == ip)
		return AGENT_ARP_CLAIM;
	if (spa == 0 && tpa == ip && f[21] == ARPOP_REQUEST)
		return AGENT_ARP_PROBE;
	return AGENT_ARP_OTHER;
}
