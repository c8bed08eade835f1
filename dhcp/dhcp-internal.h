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
#include "dhcp/socket-raw.h"
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

/* The packet socket's receive ring: dhcp/socket-raw.h. */

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

/* socket.c: the DHCPv4 sockets (the raw socket itself: dhcp/socket-raw.h) */
/* The packet socket with the DHCPv4 filter (UDP to port 67); ring as dhcp_socket_open_filtered. */
int dhcp_socket_open_packet(int ifindex, struct dhcp_ring *ring);
/* UDP :67 on ifname, never read (a drop-all filter): no ICMP port-unreachable goes out. */
int dhcp_socket_open_udp(const char *ifname);
/*
 * Adds a PACKET_STATISTICS readout (tp_packets: frames the filter passed, drops included;
 * tp_drops: dropped, the ring or buffer full) to st's kernel_received / kernel_drops.
 */
void dhcp_kernel_stats_add(struct dhcp_stats *st, unsigned packets, unsigned drops);
/* Reads (and so resets) fd's PACKET_STATISTICS into st (above). 0 or negative errno. */
int dhcp_socket_packet_stats(int fd, struct dhcp_stats *st);
/* Sends the replies' frames on packet_fd (a reply without one is not sent); returns how many
 * were sent and marks them in ret_sent. */
int dhcp_socket_send(
    int packet_fd, int ifindex, struct dhcp_reply **replies, size_t n, bool *ret_sent);

#endif
