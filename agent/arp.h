/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_ARP_H
#define VMDHCP_AGENT_ARP_H

/*
 * --leader-elect on the wire (arp.c): the gratuitous ARP the active replica announces the
 * pool's serverIP with, the ARP probes it fences it with (RFC 5227) and the filtered ARP
 * socket that hears who else answers for it. No state: failover.c decides when.
 */

#include <stddef.h>
#include <stdint.h>

#define AGENT_GARP_LEN 42 /* Ethernet header + ARP for IPv4 over Ethernet */
/*
 * A gratuitous ARP announcement (RFC 5227 §2.3: an ARP request whose sender and target
 * protocol addresses are both ip, target hardware address zero) from hwaddr, broadcast: the
 * new active replica tells the VMs' and relays' neighbour caches where ip is now.
 */
void agent_garp_build(uint8_t frame[AGENT_GARP_LEN], const uint8_t hwaddr[6], uint32_t ip);
/*
 * Sends it on the packet socket fd (the engine's, bound to ifindex; no new capability is
 * needed once it is open). 0 or negative errno.
 */
int agent_garp_send(int fd, int ifindex, const uint8_t hwaddr[6], uint32_t ip);
/*
 * An ARP probe for ip (RFC 5227 §2.1.1: a request with sender protocol address 0): whoever
 * has ip answers it, so a replica about to take the serverIP learns whether another still
 * holds it. Sent like agent_garp_send.
 */
void agent_arp_probe_build(uint8_t frame[AGENT_GARP_LEN], const uint8_t hwaddr[6], uint32_t ip);
int agent_arp_probe_send(int fd, int ifindex, const uint8_t hwaddr[6], uint32_t ip);
/*
 * A packet socket for ARP on ifindex (non-blocking; CAP_NET_RAW) whose BPF filter passes only
 * frames about ip: its holder's replies and announcements (sender ip) and others' probes for
 * it. agent_arp_set_filter moves it to a new ip. Negative errno.
 */
int agent_arp_open(int ifindex, uint32_t ip, int *ret_fd);
int agent_arp_set_filter(int fd, uint32_t ip);
enum agent_arp_kind {
	AGENT_ARP_OTHER, /* not about ip, not ARP for IPv4 over Ethernet, or sent by self */
	AGENT_ARP_CLAIM, /* another MAC has ip: a reply, an announcement, any ARP from it */
	AGENT_ARP_PROBE, /* another MAC probes for ip: it is about to take it */
};
/* What the frame f says about ip; the sender's MAC in ret_mac (for CLAIM and PROBE). */
int agent_arp_classify(
    const uint8_t *f, size_t len, const uint8_t self[6], uint32_t ip, uint8_t ret_mac[6]);

#endif
