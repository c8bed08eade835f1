/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_SOCKET_RAW_H
#define VMDHCP_DHCP_SOCKET_RAW_H

/*
 * The raw packet socket both servers read, in one place (dhcp/socket-raw.c): DHCPv4
 * (dhcp/socket.c: ETH_P_IP, UDP :67) and DHCPv6 (dhcp/socket6.c: ETH_P_IPV6, UDP :547 and
 * router solicitations) differ only in their classic BPF filter and Ethernet type.
 *
 * The recipe: an AF_PACKET socket created with protocol 0 (it receives nothing yet), the
 * filter attached, PACKET_AUXDATA on (the checksum-not-ready bit per frame), a TPACKET_V2
 * receive ring set up when the caller wants one, bound to the Ethernet type on the ifindex,
 * and only then the filter locked (SO_LOCK_FILTER): the first frame read has passed the
 * filter, and nothing can take the filter off later. Replies are whole Ethernet frames sent on
 * the same socket with sendmmsg.
 *
 * The ring: frames are read in place, without a read syscall, and an empty ring costs a memory
 * load, not a syscall, so the caller may look again after answering (dhcp/moderate.h). A frame
 * slot holds the kernel's header and one whole frame of the interface's MTU (read when the
 * socket opens, clamped to [DHCP_RING_MTU_MIN, DHCP_RING_MTU_MAX]): a 9000-MTU link gets 9 KiB
 * slots, so a large request is not truncated. About DHCP_RING_MEM bytes in all. When the MTU
 * changes later, dhcp_socket_ring_resize() sizes it again in place (no new socket, so no
 * capability is needed). Sized for the MTU rather than for 65535 from the start: within the
 * same 1 MiB, 64 KiB slots would leave 16 frames for a burst where 1500-byte links (nearly all)
 * have 512. A frame longer than its slot is reported as cut (the caller counts it), never
 * handled. map == NULL: no ring (the kernel could not, or the caller did not ask): the socket
 * is then read with recvmmsg (dhcp_socket_recv_frames).
 */

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DHCP_RING_MEM (1u << 20)
#define DHCP_RING_BLOCK_MIN (32u << 10)
#define DHCP_RING_BLOCK_NR_MIN 16u
#define DHCP_RING_MTU_MIN 1500u
#define DHCP_RING_MTU_MAX 65535u
#define DHCP_SOCKET_BATCH 32u /* most frames per dhcp_socket_recv_frames / send_frames call */

struct dhcp_ring {
	uint8_t *map;	   /* block_nr blocks of block_size bytes */
	size_t map_len;	   /* block_size * block_nr */
	size_t block_size; /* a multiple of the page size */
	size_t frame_size; /* a multiple of TPACKET_ALIGNMENT; frames do not span blocks */
	size_t frames_per_block;
	size_t frame_nr;
	size_t cur; /* next frame to read */
	/* The frame being handed to fn: when the kernel received it (its tpacket2 header,
	 * CLOCK_REALTIME, usec; 0 when unknown). */
	uint64_t frame_rx_usec;
};

/* Ring geometry for a link MTU (clamped as above); fills every field but map and cur. */
void dhcp_ring_geometry(struct dhcp_ring *ring, unsigned mtu);

/*
 * Opens the packet socket (non-blocking, close-on-exec) as above: filter[0..n_filter) attached
 * and locked, bound to ethertype (host order) on ifindex. ring: when not NULL, a receive ring
 * sized for the link's MTU if the kernel can (ring->map stays NULL otherwise). Returns the fd,
 * or -errno (nothing left open or mapped). Needs CAP_NET_RAW.
 */
int dhcp_socket_open_filtered(int ifindex, uint16_t ethertype, const struct sock_filter *filter,
    unsigned n_filter, struct dhcp_ring *ring);

/* Unmaps the ring (the socket is closed by the caller). */
void dhcp_socket_ring_close(struct dhcp_ring *ring);
/*
 * Gives the packet socket fd a receive ring sized for mtu in place of ring (unmapped, freed,
 * set up again: frames waiting in the old ring are lost). On failure the socket is left
 * without a ring (recvmmsg). 0 or negative errno.
 */
int dhcp_socket_ring_resize(int fd, struct dhcp_ring *ring, unsigned mtu);
/* Called once per ready frame, in arrival order: frame (borrowed), its captured length, its
 * length on the wire (larger when the slot cut it short), CSUMNOTREADY. */
typedef void (*dhcp_ring_frame_fn)(
    void *userdata, const uint8_t *frame, size_t len, size_t wire_len, bool csum_not_ready);
/* Hands the ready frames (at most a ring's worth) to fn, each returned to the kernel after
 * fn; our own output is skipped. Returns how many, or -EAGAIN when none is ready. */
int dhcp_socket_ring_next(struct dhcp_ring *ring, dhcp_ring_frame_fn fn, void *userdata);
/*
 * When the frame being handed to fn reached the kernel, on the caller's clock: now and rt_now
 * are that clock and CLOCK_REALTIME (usec) read at the start of the pass. A request that waited
 * in the ring (the process was asleep, busy, or coalescing) has its wait counted in the reply
 * latency this way. Clamped to [now - 10 s, now]: a realtime step, or no timestamp, gives now.
 */
uint64_t dhcp_ring_frame_time(const struct dhcp_ring *ring, uint64_t now, int64_t rt_now);
/* Whether the ring's next frame is ready to read (a memory load; false without a ring). */
bool dhcp_socket_ring_ready(const struct dhcp_ring *ring);

/* One frame slot of dhcp_socket_recv_frames. */
struct dhcp_rx_frame {
	uint8_t *frame; /* in: the caller's buffer */
	size_t cap;	/* in: its size */
	size_t len;	/* out: the frame's length; when truncated, its length on the wire */
	bool
	    csum_not_ready; /* out: TP_STATUS_CSUMNOTREADY (virtual NICs: checksum still to fill) */
	bool truncated;	    /* out: longer than cap, cut short: only cap bytes are there */
};
/*
 * Reads up to n (<= DHCP_SOCKET_BATCH) frames with one recvmmsg (MSG_DONTWAIT), for a socket
 * without a ring. Returns the count filled in rx[0..count), or -errno (-EAGAIN when none). A
 * frame of our own output (the filter drops those already) comes back with len 0: skip it.
 */
int dhcp_socket_recv_frames(int fd, struct dhcp_rx_frame *rx, size_t n);

/*
 * Sends n (<= DHCP_SOCKET_BATCH) complete Ethernet frames of ethertype out of ifindex with
 * sendmmsg, each to its own Ethernet destination (bytes 0..5). A frame the kernel refuses is
 * skipped and the rest still go; ret_sent[i] (may be NULL) says which went. Returns how many,
 * or the first failure's -errno when none went.
 */
int dhcp_socket_send_frames(int fd, int ifindex, uint16_t ethertype, uint8_t *const *frames,
    const size_t *lens, size_t n, bool *ret_sent);

/* Reads (and so resets) fd's PACKET_STATISTICS: frames the filter passed (drops included) and
 * frames dropped (the ring or buffer full). 0 or negative errno. */
int dhcp_socket_kernel_stats(int fd, unsigned *ret_packets, unsigned *ret_drops);
/* MTU of ifname (queried through fd), or negative errno. */
int dhcp_socket_mtu(int fd, const char *ifname);

#endif
