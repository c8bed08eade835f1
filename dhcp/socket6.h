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

#include "dhcp/socket-raw.h"

/*
 * Opens both sockets (non-blocking, close-on-exec). ifname: the interface of ifindex (for
 * SO_BINDTODEVICE). ring: when not NULL, the packet socket's receive ring (see
 * dhcp_socket_open_filtered; ring->map stays NULL when the kernel cannot: read it with
 * dhcp_socket_recv_frames then). Returns 0 with the fds, or -errno (nothing left open).
 * Frames are read with dhcp_socket_ring_next / dhcp_socket_recv_frames and sent with
 * dhcp_socket_send_frames(fd, ifindex, ETH_P_IPV6, ...).
 */
int socket6_open(
    int ifindex, const char *ifname, struct dhcp_ring *ring, int *ret_packet_fd, int *ret_udp_fd);

#endif
