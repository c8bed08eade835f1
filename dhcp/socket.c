/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DHCPv4 sockets. The packet socket follows the raw socket recipe of dhcp/socket-raw.h
 * (filter attached, ring, bound to ETH_P_IP, filter locked, only then read) with the filter
 * below. Every reply is a frame we build, sent on the same socket (relay and ciaddr
 * replies to the Ethernet source of the request: dhcp/reply.c). UDP :67 on the device: never
 * read, written or watched (a drop-all filter, attached before bind, so it never holds a
 * datagram); it exists so the kernel has a socket for port 67 and sends no ICMP
 * port-unreachable for unicast renewals and relayed requests.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dhcp/dhcp-internal.h"
#include "dhcp/foreign.h"

/*
 * Ten instructions both filters below share, placed at index `at` of a filter whose "ret #0" is
 * at index `drop`: the Ethernet type IPv4, IP version 4, UDP, not a fragment (MF set or an
 * offset non-zero), each else drop; then X = the IP header length (4 * IHL, BPF_MSH), for
 * the UDP ports read next with BPF_IND. Jump offsets count from the next instruction.
 */
#define BPF_IPV4_UDP_NOT_FRAGMENT(at, drop)                                                        \
	BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),                                                    \
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, (drop) - ((at) + 2)),                 \
	    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14), BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf0),     \
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x40, 0, (drop) - ((at) + 5)),                     \
	    BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14 + 9),                                            \
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, (drop) - ((at) + 7)),              \
	    BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 14 + 6),                                            \
	    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x3fff, (drop) - ((at) + 9), 0),                  \
	    BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 14)

#define DROP 16 /* index of the "ret #0" instruction below */

/* IPv4, UDP, not a fragment, destination port 67, not our own output. */
static const struct sock_filter dhcp_bpf[] = {
    /* 0: A = packet type (ancillary data) */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
    /* 1: our own transmissions (relay replies to port 67 would loop) -> drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, DROP - 2, 0),
    /* 2: unicast to another host (promiscuous port) -> drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OTHERHOST, DROP - 3, 0),
    /* 3..12: IPv4, UDP, not a fragment, else drop; X = IP header length */
    BPF_IPV4_UDP_NOT_FRAGMENT(3, DROP),
    /* 13: A = UDP destination port (Ethernet 14 + IHL + 2) */
    BPF_STMT(BPF_LD | BPF_H | BPF_IND, 14 + 2),
    /* 14: port 67? else drop */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, DHCP_PORT_SERVER, 0, DROP - 15),
    /* 15: accept the whole frame */
    BPF_STMT(BPF_RET | BPF_K, 0xffff),
    /* 16 (DROP): drop */
    BPF_STMT(BPF_RET | BPF_K, 0),
};
_Static_assert(sizeof(dhcp_bpf) / sizeof(dhcp_bpf[0]) == DROP + 1, "DROP is the last insn");

#define RDROP 17 /* index of the "ret #0" instruction of replies_bpf */

/* Server replies: IPv4, UDP, not a fragment, from port 67 to port 68, not our own output. */
static const struct sock_filter replies_bpf[] = {
    /* 0: A = packet type; 1: our own transmissions -> drop */
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, SKF_AD_OFF + SKF_AD_PKTTYPE),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PACKET_OUTGOING, RDROP - 2, 0),
    /* 2..11: IPv4, UDP, not a fragment, else drop; X = IP header length */
    BPF_IPV4_UDP_NOT_FRAGMENT(2, RDROP),
    /* 12, 13: UDP source port 67, else drop */
    BPF_STMT(BPF_LD | BPF_H | BPF_IND, 14),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, DHCP_PORT_SERVER, 0, RDROP - 14),
    /* 14, 15: UDP destination port 68, else drop */
    BPF_STMT(BPF_LD | BPF_H | BPF_IND, 14 + 2),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, DHCP_PORT_CLIENT, 0, RDROP - 16),
    /* 16: accept the whole frame; 17 (RDROP): drop */
    BPF_STMT(BPF_RET | BPF_K, 0xffff),
    BPF_STMT(BPF_RET | BPF_K, 0),
};
_Static_assert(sizeof(replies_bpf) / sizeof(replies_bpf[0]) == RDROP + 1, "RDROP is the last insn");

static const struct sock_filter drop_all[] = {
    /* 0: drop everything (the UDP socket exists, but we read the packet socket) */
    BPF_STMT(BPF_RET | BPF_K, 0),
};

void
dhcp_kernel_stats_add(struct dhcp_stats *st, unsigned packets, unsigned drops)
{
	st->kernel_received += packets;
	st->kernel_drops += drops;
}

int
dhcp_socket_packet_stats(int fd, struct dhcp_stats *st)
{
	unsigned packets, drops;
	int r = dhcp_socket_kernel_stats(fd, &packets, &drops);

	if (r == 0)
		dhcp_kernel_stats_add(st, packets, drops);
	return r;
}

int
dhcp_socket_open_packet(int ifindex, struct dhcp_ring *ring)
{
	return dhcp_socket_open_filtered(
	    ifindex, ETH_P_IP, dhcp_bpf, sizeof(dhcp_bpf) / sizeof(dhcp_bpf[0]), ring);
}

int
dhcp_foreign_socket_open(int ifindex)
{
	return dhcp_socket_open_filtered(
	    ifindex, ETH_P_IP, replies_bpf, sizeof(replies_bpf) / sizeof(replies_bpf[0]), NULL);
}

int
dhcp_foreign_socket_recv(int fd, uint8_t *buf, size_t cap, bool *csum_not_ready)
{
	struct dhcp_rx_frame rx = {.frame = buf, .cap = cap};
	int n;

	*csum_not_ready = false;
	do
		n = dhcp_socket_recv_frames(fd, &rx, 1);
	while (n == -EINTR);
	if (n < 0)
		return n;
	if (n == 0)
		return -EAGAIN;
	*csum_not_ready = rx.csum_not_ready;
	return (int)(rx.len > cap ? cap : rx.len); /* 0: our own output (the filter drops it) */
}

int
dhcp_socket_open_udp(const char *ifname)
{
	struct sock_fprog prog = {.len = 1, .filter = (struct sock_filter *)drop_all};
	struct sockaddr_in sin = {
	    .sin_family = AF_INET,
	    .sin_port = htons(DHCP_PORT_SERVER),
	    .sin_addr.s_addr = htonl(INADDR_ANY),
	};
	int fd, one = 1, r;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof(one)) < 0)
		goto fail;
	if (ifname != NULL && ifname[0] != '\0' &&
	    setsockopt(
		fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strnlen(ifname, IFNAMSIZ)) < 0)
		goto fail;
	if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog)) < 0)
		goto fail;
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		goto fail;
	return fd;
fail:
	r = -errno;
	close(fd);
	return r;
}

int
dhcp_socket_send(int packet_fd, int ifindex, struct dhcp_reply **replies, size_t n, bool *ret_sent)
{
	uint8_t *frames[DHCP_BATCH];
	size_t lens[DHCP_BATCH], idx[DHCP_BATCH], n_raw = 0;
	bool sent[DHCP_BATCH];
	int ok;

	if (n > DHCP_BATCH)
		n = DHCP_BATCH;
	for (size_t i = 0; i < n; i++) {
		struct dhcp_reply *r = replies[i];

		ret_sent[i] = false;
		if (!r->dest.raw || r->frame == NULL)
			continue; /* a bare message's reply (tests): nothing to send */
		/* the frame's Ethernet destination is r->dest.mac (dhcp_reply_frame) */
		frames[n_raw] = r->frame;
		lens[n_raw] = r->frame_len;
		idx[n_raw++] = i;
	}
	if (n_raw == 0 || packet_fd < 0)
		return 0;
	ok = dhcp_socket_send_frames(packet_fd, ifindex, ETH_P_IP, frames, lens, n_raw, sent);
	if (ok < 0)
		ok = 0;
	for (size_t k = 0; k < n_raw; k++)
		ret_sent[idx[k]] = sent[k];
	return ok;
}
