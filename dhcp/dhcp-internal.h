/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_INTERNAL_H
#define VMDHCP_DHCP_INTERNAL_H

/*
 * Struct bodies and the message handler, for dhcp/ itself, its tests and fuzzers only
 * (other modules include dhcp/dhcp.h). Tests call dhcp_handle_message() or
 * dhcp_handle_frame() directly, without sockets.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dhcp/boot.h"
#include "dhcp/dhcp.h"
#include "dhcp/encode.h"
#include "dhcp/moderate.h"
#include "dhcp/option.h"
#include "dhcp/packet.h"
#include "dhcp/proto.h"
#include "dhcp/table.h"
#include "lib/log.h"

#define DHCP_BATCH 32	      /* datagrams per recvmmsg / sendmmsg */
#define DHCP_RX_BUF 2048      /* one received frame */
#define DHCP_TX_BUF 1600      /* one reply: headroom + at most 1472 DHCP bytes */
#define DHCP_MAX_PAYLOAD 1472 /* 1500 MTU - IPv4 - UDP */

/* A parsed request. Pointers borrow the received datagram. */
struct dhcp_request {
	/* borrowed; set (with len, and type 0) as soon as the fixed header names an Ethernet
	 * chaddr, even when the options then fail to parse; NULL before */
	const struct dhcp_msg *msg;
	size_t len;		 /* DHCP message length */
	uint8_t type;		 /* option 53 */
	uint32_t ciaddr, giaddr; /* host order */
	uint16_t flags;
	uint16_t max_size;  /* option 57 clamped, IP datagram bytes */
	const uint8_t *prl; /* option 55, borrowed */
	size_t prl_len;
	const uint8_t *client_id; /* option 61, echoed unchanged (RFC 6842) */
	size_t client_id_len;
	const uint8_t *relay_info; /* option 82, echoed unchanged */
	size_t relay_info_len;
	const struct dhcp_rx_meta *meta; /* frame addresses; NULL when handed a bare message */
	struct dhcp_boot_req boot; /* network boot: the client and its answer (kind -1: none) */
	struct dhcp_option_table opts;
};

/* Where a reply goes (RFC 2131 §4.1). */
struct dhcp_dest {
	/* true: a frame to mac (every reply to a received frame, see dhcp_reply_destination);
	 * false: ip:port only, for a bare message (tests, fuzzers): no frame, never sent */
	bool raw;
	uint8_t mac[6]; /* link-layer destination (raw only) */
	uint32_t ip;	/* host order */
	uint16_t port;
};

/* A built reply. Pointers borrow the server's transmit buffer. */
struct dhcp_reply {
	int type; /* DHCP_MSG_OFFER / ACK / NAK */
	struct dhcp_dest dest;
	uint8_t *payload; /* DHCP message */
	size_t payload_len;
	uint8_t *frame; /* Ethernet frame (raw destinations only), else NULL (not sent) */
	size_t frame_len;
};

struct dhcp_tx_slot {
	struct dhcp_reply reply;
	uint64_t rx_time;
	uint8_t buf[DHCP_TX_BUF];
};

/*
 * TPACKET_V2 receive ring of the packet socket: frames are read in place, without a read
 * syscall, and an empty ring costs a memory load, not a syscall, so a caller may poll it.
 * A frame slot holds the kernel's header and one whole frame of the interface's MTU (read
 * when the socket opens, clamped to [DHCP_RING_MTU_MIN, DHCP_RING_MTU_MAX]): a 9000-MTU link
 * gets 9 KiB slots, so a large request is not truncated. About DHCP_RING_MEM bytes in all.
 * When the MTU changes later, dhcp_server_set_mtu() resizes the ring in place (the agent
 * follows the link through netlink). The ring is sized for the MTU rather than for 65535
 * from the start: within the same 1 MiB, 64 KiB slots would leave 16 frames for a burst
 * where 1500-byte links (nearly all) have 512. A frame longer than its slot is counted as
 * truncated (and logged), never handled. map == NULL: no ring (recvmmsg is used).
 */
#define DHCP_RING_MEM (1u << 20)
#define DHCP_RING_BLOCK_MIN (32u << 10)
#define DHCP_RING_BLOCK_NR_MIN 16u
#define DHCP_RING_MTU_MIN 1500u
#define DHCP_RING_MTU_MAX 65535u

struct dhcp_ring {
	uint8_t *map;	   /* block_nr blocks of block_size bytes */
	size_t map_len;	   /* block_size * block_nr */
	size_t block_size; /* a multiple of the page size */
	size_t frame_size; /* a multiple of TPACKET_ALIGNMENT; frames do not span blocks */
	size_t frames_per_block;
	size_t frame_nr;
	size_t cur; /* next frame to read */
};
/* Ring geometry for a link MTU (clamped as above); fills every field but map and cur. */
void dhcp_ring_geometry(struct dhcp_ring *ring, unsigned mtu);

struct dhcp_server {
	struct dhcp_optset *optset; /* NULL until set_options; swapped whole */
	bool standby;		    /* dhcp_server_set_standby: every request dropped */
	struct dhcp_table *table;
	struct dhcp_callbacks cb;
	struct dhcp_stats stats;
	uint64_t (*clock)(void *userdata); /* optional: send-time clock for the latency histogram */
	void *clock_userdata;

	int ifindex;
	uint8_t hwaddr[6];
	/* largest DHCP message a reply may be: the interface MTU - IPv4 - UDP, at most
	 * DHCP_MAX_PAYLOAD, at least 548 (0 = DHCP_MAX_PAYLOAD, before open) */
	size_t max_payload;
	int packet_fd, udp_fd;
	struct dhcp_ring ring;	    /* on packet_fd */
	struct dhcp_moderation mod; /* fed by every read of packet_fd */
	uint32_t wait_asked;	    /* the last wait on_readable asked for (0: none) */

	struct dhcp_request req;    /* scratch: the request being handled */
	uint64_t now;		    /* receive time of the datagram being handled */
	bool dropped;		    /* the datagram being handled was dropped, for: */
	enum dhcp_drop_reason drop; /* (on_decision reports both) */
	/* when binding_looked: the binding the request was answered from (NULL: none), which
	 * on_decision reports without a second lookup; no callback runs between the two */
	const struct dhcp_binding *binding;
	bool binding_looked;
	struct log_ratelimit drop_log;	/* debug lines about drops */
	struct log_ratelimit trunc_log; /* warnings about frames cut short by the receive buffer */
	/* receive and transmit batches, preallocated */
	uint8_t (*rx)[DHCP_RX_BUF]; /* DHCP_BATCH buffers */
	struct dhcp_tx_slot *tx;    /* DHCP_BATCH slots */
	size_t n_tx;
};

/*
 * The per-datagram path. Handles one DHCP message (data, len: the UDP payload; borrowed),
 * meta may be NULL. Builds the reply into txbuf (DHCP_TX_BUF bytes, the DHCP message at
 * DHCP_FRAME_HEADROOM) and fills *ret. Returns the reply type (> 0), or 0 when no reply is
 * sent (every such case but RELEASE/DECLINE is a counted drop). Counts rx, not tx.
 */
int dhcp_process(struct dhcp_server *s, const uint8_t *data, size_t len,
    const struct dhcp_rx_meta *meta, uint64_t now, uint8_t *txbuf, struct dhcp_reply *ret);

/* Counts a drop (and logs it at debug level, rate-limited). Returns 0 (no reply). */
int dhcp_count_drop(struct dhcp_server *s, enum dhcp_drop_reason reason);

/* dhcp_process into the first transmit slot (tests). */
int dhcp_handle_message(
    struct dhcp_server *s, const uint8_t *data, size_t len, uint64_t now, struct dhcp_reply *ret);
/* Verifies an Ethernet frame first (drops counted), then dhcp_handle_message. */
int dhcp_handle_frame(struct dhcp_server *s, const uint8_t *frame, size_t len, bool csum_not_ready,
    uint64_t now, struct dhcp_reply *ret);

/* request.c: parse the fixed header and options into *req. Returns 0, or -EBADMSG and
 * the drop reason in *ret_reason (req->msg set when the chaddr was usable, see above). */
int dhcp_request_parse(
    struct dhcp_request *req, const uint8_t *data, size_t len, enum dhcp_drop_reason *ret_reason);

/* reply.c */
void dhcp_reply_destination(
    const struct dhcp_request *req, int type, uint32_t yiaddr, struct dhcp_dest *ret);
/*
 * Builds the DHCP message of a reply at out (cap bytes): fixed header from req, options in
 * PRL order then the mandatory ones, option 82 echoed last (split per RFC 3396), limited by
 * option 57 (relayed: plus the option 82 echo, which the relay removes) and cap, padded to 300
 * bytes. hostname may be NULL. Returns the length, or -EMSGSIZE when the mandatory options
 * and the echoes do not fit.
 */
int dhcp_reply_build(const struct dhcp_optset *set, const struct dhcp_request *req, int type,
    uint32_t yiaddr, const char *hostname, uint8_t *out, size_t cap);
/* Fills in dest and, for raw destinations, the frame headers. */
void dhcp_reply_frame(
    const struct dhcp_server *s, const struct dhcp_request *req, struct dhcp_reply *r);

/* socket.c */
/* ring: when not NULL, a TPACKET_V2 receive ring is set up on the socket if the kernel can
 * (ring->map stays NULL otherwise; the socket then works with recvmmsg). */
int dhcp_socket_open_packet(int ifindex, struct dhcp_ring *ring);
/* Unmaps the ring (the socket is closed by the caller). */
void dhcp_socket_ring_close(struct dhcp_ring *ring);
/* Called once per ready frame, in arrival order: frame (borrowed), its captured length, its
 * length on the wire (larger when the slot cut it short), CSUMNOTREADY. */
typedef void (*dhcp_ring_frame_fn)(
    void *userdata, const uint8_t *frame, size_t len, size_t wire_len, bool csum_not_ready);
/* Hands the ready frames (at most a ring's worth) to fn, each returned to the kernel after
 * fn. Returns how many, or -EAGAIN when none is ready. */
int dhcp_socket_ring_next(struct dhcp_ring *ring, dhcp_ring_frame_fn fn, void *userdata);
int dhcp_socket_open_udp(const char *ifname);
/* Whether the ring's next frame is ready to read (a memory load; false without a ring). */
bool dhcp_socket_ring_ready(const struct dhcp_ring *ring);
/*
 * Adds a PACKET_STATISTICS readout (tp_packets: frames the filter passed, drops included;
 * tp_drops: dropped, the ring or buffer full) to st's kernel_received / kernel_drops.
 */
void dhcp_kernel_stats_add(struct dhcp_stats *st, unsigned packets, unsigned drops);
/* Reads (and so resets) fd's PACKET_STATISTICS into st (above). 0 or negative errno. */
int dhcp_socket_packet_stats(int fd, struct dhcp_stats *st);
/* Reads up to DHCP_BATCH frames; ret_len[i] lengths (0: skip), ret_csum[i] CSUMNOTREADY,
 * ret_trunc[i] the frame was longer than DHCP_RX_BUF (cut short; ret_len[i] its wire length). */
int dhcp_socket_recv_packets(int fd, uint8_t (*bufs)[DHCP_RX_BUF], size_t n, size_t *ret_len,
    bool *ret_csum, bool *ret_trunc);
/*
 * Gives the packet socket fd a receive ring sized for mtu in place of ring (unmapped, freed,
 * set up again: no new socket, so no capability is needed; frames waiting in the old ring are
 * lost). On failure the socket is left without a ring (recvmmsg). 0 or negative errno.
 */
int dhcp_socket_ring_resize(int fd, struct dhcp_ring *ring, unsigned mtu);
/* MTU of ifname (queried through fd), or negative errno. */
int dhcp_socket_mtu(int fd, const char *ifname);
/* Sends the replies' frames on packet_fd (a reply without one is not sent); returns how many
 * were sent and marks them in ret_sent. */
int dhcp_socket_send(
    int packet_fd, int ifindex, struct dhcp_reply **replies, size_t n, bool *ret_sent);

#endif
