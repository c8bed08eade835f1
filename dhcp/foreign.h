/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_FOREIGN_H
#define VMDHCP_DHCP_FOREIGN_H

/*
 * Foreign DHCP servers (docs/foreign-servers.md), the pure part: tell a server reply seen on
 * the network (Ethernet/IPv4/UDP 67 -> 68, a BOOTREPLY OFFER, ACK or NAK) from our own, and
 * build the DISCOVER the agent probes with. No I/O, no allocation; fuzzed by
 * tests/fuzz/fuzz-dhcp-foreign.c.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DHCP_FOREIGN_OWN_MAX 8
/* The probe frame: Ethernet + IPv4 + UDP headers and a 300-byte DISCOVER. */
#define DHCP_FOREIGN_PROBE_LEN 342

/* What counts as ours: the replies of this agent and of the pool's other replicas. */
struct dhcp_foreign_own {
	uint8_t mac[DHCP_FOREIGN_OWN_MAX][6]; /* the interfaces the pool's agents answer from */
	size_t n_mac;
	uint32_t ip[DHCP_FOREIGN_OWN_MAX]; /* host order: the pool's serverIP (every replica
					      answers with it as option 54) */
	size_t n_ip;
};

/* A server reply, as dhcp_foreign_classify read it. */
struct dhcp_foreign_reply {
	uint8_t mac[6];	    /* Ethernet source */
	uint32_t server_ip; /* option 54 (server identifier), else the IPv4 source; host order */
	uint32_t yiaddr;    /* the address offered or acknowledged (0 for a NAK) */
	uint32_t xid;
	uint8_t chaddr[6];
	uint8_t msg_type; /* DHCP_MSG_OFFER, DHCP_MSG_ACK or DHCP_MSG_NAK */
};

enum dhcp_foreign_kind {
	DHCP_FOREIGN_NONE = 0, /* not a server reply (other traffic, requests, malformed) */
	DHCP_FOREIGN_OWN,      /* a reply of the pool's own agents */
	DHCP_FOREIGN_SERVER,   /* a reply of another server */
};

/*
 * Classify one Ethernet frame (any bytes; borrowed). Checks the IPv4 header checksum and the
 * UDP checksum (unless csum_not_ready: the kernel did not compute it). A reply whose Ethernet
 * source is one of own->mac, or whose server identifier or IPv4 source is one of own->ip,
 * is DHCP_FOREIGN_OWN. *out is filled for OWN and SERVER.
 */
enum dhcp_foreign_kind dhcp_foreign_classify(const uint8_t *frame, size_t len, bool csum_not_ready,
    const struct dhcp_foreign_own *own, struct dhcp_foreign_reply *out);

/*
 * The pool's probe client MAC: locally administered, unicast, 02:76:6d ("vm") followed by 3
 * bytes of a hash of "namespace/name": the same for every replica and every start.
 */
void dhcp_foreign_probe_mac(const char *namespace, const char *name, uint8_t mac[6]);

/* Whether mac is a probe MAC (the 02:76:6d prefix): the engine does not answer it. */
bool dhcp_foreign_is_probe_mac(const uint8_t mac[6]);

/*
 * The probe: a broadcast DISCOVER (broadcast flag set, client identifier 01+mac, a parameter
 * request list) from mac with transaction id xid, as a whole Ethernet frame from 0.0.0.0:68
 * to 255.255.255.255:67. Writes DHCP_FOREIGN_PROBE_LEN bytes into buf (at least that large)
 * and returns that length.
 */
size_t dhcp_foreign_probe_build(
    uint8_t buf[DHCP_FOREIGN_PROBE_LEN], const uint8_t mac[6], uint32_t xid);

/*
 * Its socket (dhcp/socket.c; the raw socket recipe of dhcp/socket-raw.h): an AF_PACKET socket
 * on ifindex that receives IPv4 UDP from port 67 to port 68 (server replies: not fragments,
 * not our own output), its filter locked before the first read. The fd (non-blocking,
 * close-on-exec) or -errno; needs CAP_NET_RAW.
 */
int dhcp_foreign_socket_open(int ifindex);
/*
 * One frame into buf (cap bytes; a longer one is cut to cap): its length, or -errno (-EAGAIN
 * when none); *csum_not_ready: the checksum is still to be filled (virtual NICs).
 */
int dhcp_foreign_socket_recv(int fd, uint8_t *buf, size_t cap, bool *csum_not_ready);

#endif
