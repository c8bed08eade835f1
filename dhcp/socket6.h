/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_SOCKET6_H
#define VMDHCP_DHCP_SOCKET6_H

/*
 * The IPv6 sockets of a DHCPv6 server / router-advertisement sender on one interface.
 *
 * Packet socket: AF_PACKET SOCK_RAW created with protocol 0 (it receives nothing yet), a
 * classic BPF filter attached (IPv6; optionally one Hop-by-Hop Options header; then UDP to
 * port 547 or ICMPv6 type 133 Router Solicitation; never our own output nor unicast to
 * another host), bound to ETH_P_IPV6 on the ifindex, then the filter locked (SO_LOCK_FILTER)
 * before the first read. PACKET_AUXDATA gives the checksum-not-ready bit per frame. It joins
 * the Ethernet multicast groups 33:33:00:01:00:02 (ff02::1:2, All_DHCP_Relay_Agents_and_
 * Servers, RFC 8415 §7.1) and 33:33:00:00:00:02 (ff02::2, all-routers, where hosts send
 * router solicitations) so the NIC/bridge port passes them up. Every reply is a frame built
 * with packet6_finish_* and sent on this socket.
 *
 * UDP socket: [::]:547, IPV6_V6ONLY, bound to the device (SO_BINDTODEVICE), a drop-all filter
 * attached before bind (it never holds a datagram), joined to ff02::1:2 on the ifindex. It is
 * never read; it exists so the kernel has a socket on port 547 and answers no unicast or
 * relayed DHCPv6 message with an ICMPv6 port-unreachable.
 *
 * Needs CAP_NET_RAW (packet socket) and CAP_NET_BIND_SERVICE (port 547): without them the
 * open fails with -EPERM or -EACCES, which the caller reports as such.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SOCKET6_BATCH 32 /* most frames per socket6_recv / socket6_send call */

/*
 * Opens both sockets (non-blocking, close-on-exec). ifname: the interface of ifindex (for
 * SO_BINDTODEVICE). Returns 0 with the fds, or -errno (nothing left open).
 */
int socket6_open(int ifindex, const char *ifname, int *ret_packet_fd, int *ret_udp_fd);

/* One frame slot of socket6_recv. */
struct socket6_rx {
	uint8_t *frame;	     /* in: the caller's buffer */
	size_t cap;	     /* in: its size */
	size_t len;	     /* out: the frame's length; when truncated, its length on the wire */
	bool csum_not_ready; /* out: TP_STATUS_CSUMNOTREADY (pass to packet6_parse) */
	bool truncated;	     /* out: longer than cap, cut short: only cap bytes are there */
};

/*
 * Reads up to n (<= SOCKET6_BATCH) frames with one recvmmsg (MSG_DONTWAIT). Returns the count
 * filled in rx[0..count), or -errno (-EAGAIN when none). A frame of our own output (the filter
 * drops those already) comes back with len 0: skip it, it is no drop.
 */
int socket6_recv(int fd, struct socket6_rx *rx, unsigned n);

/*
 * Sends n (<= SOCKET6_BATCH) complete Ethernet frames out of ifindex with sendmmsg; the
 * destination is each frame's own Ethernet destination (bytes 0..5). A frame the kernel
 * refuses is skipped and the rest still go. Returns how many were sent, or -errno when the
 * first failure was all there was (none sent).
 */
int socket6_send(int fd, int ifindex, uint8_t *const *frames, const size_t *lens, unsigned n);

#endif
