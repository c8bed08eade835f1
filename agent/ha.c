/* SPDX-License-Identifier: Apache-2.0 */
/*
 * High availability: the gratuitous ARP the active replica sends when it takes the pool's
 * server address (agent.h). The election itself is kube/leader.c's Lease; serve.c decides
 * what a replica does with it.
 */
#include <errno.h>
#include <string.h>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if_arp.h>
#include <sys/socket.h>

#include "agent/agent.h"

void
agent_garp_build(uint8_t f[AGENT_GARP_LEN], const uint8_t hwaddr[6], uint32_t ip)
{
	uint8_t be[4] = { (uint8_t)(ip >> 24), (uint8_t)(ip >> 16), (uint8_t)(ip >> 8),
		(uint8_t)ip };

	memset(f, 0, AGENT_GARP_LEN);
	/* Ethernet: broadcast, from us, ARP */
	memset(f, 0xff, 6);
	memcpy(f + 6, hwaddr, 6);
	f[12] = ETH_P_ARP >> 8;
	f[13] = ETH_P_ARP & 0xff;
	/* ARP: Ethernet/IPv4, request; sender = target = ip; target MAC zero (RFC 5227 §2.3) */
	f[14] = 0;
	f[15] = ARPHRD_ETHER;
	f[16] = ETH_P_IP >> 8;
	f[17] = ETH_P_IP & 0xff;
	f[18] = 6;
	f[19] = 4;
	f[20] = 0;
	f[21] = ARPOP_REQUEST;
	memcpy(f + 22, hwaddr, 6);
	memcpy(f + 28, be, 4);
	memcpy(f + 38, be, 4);
}

int
agent_garp_send(int fd, int ifindex, const uint8_t hwaddr[6], uint32_t ip)
{
	uint8_t frame[AGENT_GARP_LEN];
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_ARP),
		.sll_ifindex = ifindex,
		.sll_halen = 6,
		.sll_addr = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff },
	};

	agent_garp_build(frame, hwaddr, ip);
	if (sendto(fd, frame, sizeof(frame), 0, (const struct sockaddr *)&to, sizeof(to)) < 0)
		return -errno;
	return 0;
}
