/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP6_INTERNAL_H
#define VMDHCP_DHCP6_INTERNAL_H

/*
 * Struct bodies, the option parser, the binding table and the message handler of the DHCPv6
 * engine, for dhcp/ itself, its tests and fuzzers only (other modules include dhcp/dhcp6.h).
 * Tests call dhcp6_process() directly, without sockets.
 */

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dhcp/dhcp6.h"
#include "dhcp/moderate.h"
#include "dhcp/proto6.h"
#include "dhcp/ra.h"
#include "dhcp/socket-raw.h"
#include "lib/log.h"
#include "lib/mactable.h"

/* --- option6.c: one pass over a message's options into a table ---------------------------- */

#define DHCP6_MAX_IA 8	     /* IAs of one message answered; more are ignored */
#define DHCP6_MAX_IA_ADDRS 4 /* IAADDRs read per IA; more are ignored */

/* One IA_NA, IA_TA or IA_PD of a request. */
struct dhcp6_ia {
	uint16_t type;				   /* DHCP6_OPT_IA_NA / IA_TA / IA_PD */
	uint32_t iaid;				   /* host order */
	struct in6_addr addrs[DHCP6_MAX_IA_ADDRS]; /* IAADDRs (IA_NA, IA_TA) */
	uint8_t n_addrs;
};

/* A borrowed option body. */
struct dhcp6_view {
	const uint8_t *p; /* NULL: absent */
	uint16_t len;
};

/* The options of one message (or one relay message), first occurrence of each kept. */
struct dhcp6_opts {
	struct dhcp6_view client_id, server_id, oro, relay_msg, interface_id, linklayer;
	bool rapid_commit;
	struct dhcp6_ia ia[DHCP6_MAX_IA];
	uint8_t n_ia;
};

/*
 * Walks the options p[0..len) (the bytes after a message's fixed header): every option must
 * lie within, and the known ones must have their sizes (IA_NA >= 12, IAADDR >= 24, ...,
 * nested IA options walked with the same rules). Returns 0 or -EBADMSG. Nothing allocated.
 */
int dhcp6_options_parse(const uint8_t *p, size_t len, struct dhcp6_opts *ret);
/* The 6-byte Ethernet address inside a DUID-LLT (type 1) or DUID-LL (type 3) of hardware
 * type 1 (RFC 8415 §11.2, §11.4), borrowed from duid; NULL for any other DUID or length. */
const uint8_t *dhcp6_duid_ethernet(const struct dhcp6_view *duid);
/* Whether the ORO (option 6) names code. */
bool dhcp6_oro_has(const struct dhcp6_opts *o, uint16_t code);

/* --- table6.c: MAC -> binding ---------------------------------------------------------------- */

#define DHCP6_BINDING_STALE 0x01    /* set by sync_begin, cleared by set */
#define DHCP6_BINDING_DECLINED 0x02 /* the client declined addr; cleared when addr changes */

/* 28 bytes: lib/mactable.h's head (MAC at 0, a 32-bit field at 8: here the hostname offset,
 * the table keeps no IPv4 index) then the IPv6 address. */
struct dhcp6_binding {
	uint8_t mac[6];
	uint8_t flags;	      /* DHCP6_BINDING_* */
	uint8_t hostname_len; /* 0 = none */
	uint32_t hostname_off;
	struct in6_addr addr;
};

struct dhcp6_table;
int dhcp6_table_new(struct dhcp6_table **ret);
struct dhcp6_table *dhcp6_table_free(struct dhcp6_table *t);
/* Inserts or updates mac -> addr (hostname copied, truncated to 63 bytes, may be NULL).
 * 0, -EINVAL (addr zero), -EEXIST (addr bound to another MAC), -ENOMEM. */
int dhcp6_table_set(
    struct dhcp6_table *t, const uint8_t mac[6], const struct in6_addr *addr, const char *hostname);
int dhcp6_table_remove(struct dhcp6_table *t, const uint8_t mac[6]);
/* Borrowed record, valid until the next set/remove/sync_end; NULL if absent. */
struct dhcp6_binding *dhcp6_table_lookup(const struct dhcp6_table *t, const uint8_t mac[6]);
struct dhcp6_binding *dhcp6_table_lookup_addr(
    const struct dhcp6_table *t, const struct in6_addr *addr);
const char *dhcp6_table_hostname(const struct dhcp6_table *t, const struct dhcp6_binding *b);
size_t dhcp6_table_size(const struct dhcp6_table *t);
void dhcp6_table_sync_begin(struct dhcp6_table *t);
size_t dhcp6_table_sync_end(struct dhcp6_table *t);
void dhcp6_table_foreach(const struct dhcp6_table *t,
    void (*fn)(
	void *userdata, const uint8_t mac[6], const struct in6_addr *addr, const char *hostname),
    void *userdata);
/* Bytes of heap held (records, indexes, hostname pool). */
size_t dhcp6_table_memory(const struct dhcp6_table *t);

/* --- server ----------------------------------------------------------------------------------- */

/*
 * DHCPv6's coalescing window (dhcp/moderate.h): waits start once requests come faster than one
 * per 100 us (10 000 requests/s: 5 000 SARR/s, each exchange two requests) and are at most
 * 200 us (DHCPv4's: 800 us). DHCPv4 starts at 20 000 requests/s to keep its latency goals up to
 * 8 000 DORA/s; a DHCPv6 client waits a random 0-1 s before its first SOLICIT and 1 s before
 * resending one (RFC 8415 §18.2.1, §7.6: SOL_MAX_DELAY, SOL_TIMEOUT), so 200 us more under load
 * costs it nothing it could notice, while each wakeup saved is the largest cost per request
 * (docs/benchmarks.md, DHCPv6).
 */
#define DHCP6_MOD_ON_USEC 100u
#define DHCP6_MOD_OFF_USEC 110u
#define DHCP6_MOD_MAX_USEC 200u

#define DHCP6_BATCH 32
#define DHCP6_RX_BUF 2048
#define DHCP6_TX_BUF 1600
#define DHCP6_MAX_PAYLOAD 1452 /* 1500 MTU - IPv6 40 - UDP 8: the most a reply carries */

/* The option set, with options 23 and 24 prebuilt in wire form at set_options. */
struct dhcp6_optset {
	struct dhcp6_options o;
	uint8_t dns_wire[16 * DHCP6_MAX_DNS];
	size_t dns_len;
	uint8_t search_wire[1024]; /* RFC 1035 names, no compression; at most this much */
	size_t search_len;
	struct in6_addr net; /* server_ip's prefix, for on-link checks */
};

/* Where a request came from (a received frame), for the reply. */
struct dhcp6_rx_meta {
	const uint8_t *src_mac; /* Ethernet source (the client, or the relay) */
	bool multicast;		/* sent to a multicast address (ff02::1:2) */
};

/* One relay layer of a RELAY-FORW chain, outermost first. */
struct dhcp6_relay {
	const struct dhcp6_relay_hdr *hdr; /* borrowed */
	struct dhcp6_view interface_id;
};

/* A parsed request: the innermost client message and the relays around it. */
struct dhcp6_request {
	uint8_t type;
	uint32_t xid;
	const uint8_t *mac; /* the client's: the frame's source, or relayed option 79 */
	struct dhcp6_opts opts;
	struct dhcp6_relay relays[DHCP6_HOP_COUNT_LIMIT];
	uint8_t n_relays;
	bool multicast;
};

/* A built reply (borrowing the caller's buffer). */
struct dhcp6_reply {
	int type;	  /* the innermost DHCP6_MSG_ADVERTISE / REPLY */
	bool relayed;	  /* wrapped in RELAY-REPL: goes to the relay, port 547 */
	uint8_t *payload; /* the UDP payload */
	size_t payload_len;
};

struct dhcp6_server {
	struct dhcp6_optset *optset; /* NULL until set_options */
	struct dhcp6_ra ra;
	bool standby;
	bool duid_mac; /* set_duid_mac: the Client Identifier's link-layer address as fallback */
	struct dhcp6_table *table;
	struct dhcp6_callbacks cb;
	struct dhcp6_stats stats;
	uint64_t (*clock)(void *userdata);
	void *clock_userdata;

	int ifindex;
	uint8_t hwaddr[6];
	struct in6_addr link_local;
	int packet_fd, udp_fd;
	struct dhcp_ring ring;	    /* on packet_fd (map NULL: read with recvmmsg) */
	struct dhcp_moderation mod; /* fed by every read of packet_fd */

	/* the request being handled, for on_decision */
	struct dhcp6_request req;
	uint64_t now;
	bool dropped;
	enum dhcp6_drop_reason drop;
	uint16_t status;       /* first status code put in the reply */
	struct in6_addr given; /* address given with lifetimes > 0 (zero: none) */
	struct log_ratelimit drop_log;

	uint8_t (*rx)[DHCP6_RX_BUF]; /* DHCP6_BATCH receive buffers */
	uint8_t (*tx)[DHCP6_TX_BUF]; /* DHCP6_BATCH transmit frames */
};

/*
 * The per-message path (request6.c). data, len: the UDP payload; meta: where it came from
 * (src_mac required). Builds the reply's payload into out (cap bytes) and fills *ret.
 * Returns the innermost reply type (> 0) or 0 (none: a counted drop, or CONFIRM without
 * addresses). Counts rx (not tx); calls on_decline / on_release / on_decision.
 */
int dhcp6_process(struct dhcp6_server *s, const uint8_t *data, size_t len,
    const struct dhcp6_rx_meta *meta, uint64_t now, uint8_t *out, size_t cap,
    struct dhcp6_reply *ret);
/*
 * server6.c: one received frame (Ethernet/IPv6, verified by packet6_parse; drops counted):
 * a DHCPv6 message to dhcp6_process, a Router Solicitation answered with an RA when RA is
 * enabled. The reply frame is written to out (DHCP6_TX_BUF bytes); returns its length (0:
 * none) and the reply's DHCPv6 message type in *ret_type (0 for an RA).
 */
size_t dhcp6_handle_frame(struct dhcp6_server *s, const uint8_t *frame, size_t len,
    bool csum_not_ready, uint64_t now, uint8_t *out, int *ret_type);
/* The RA the server sends (M=1, O=1, the pool's prefix on-link, A=0). */
void dhcp6_ra_params(const struct dhcp6_server *s, struct ra_params *p);
/* Counts a drop (debug log, rate-limited). Returns 0. */
int dhcp6_count_drop(struct dhcp6_server *s, enum dhcp6_drop_reason reason);

/* request6.c: unwraps relays and parses the client message into *req (req->mac from meta or
 * option 79). 0, or -EBADMSG and the drop reason in *ret_reason (req->type and req->mac set
 * as far as they were found: 0 / NULL otherwise). */
int dhcp6_request_parse(struct dhcp6_request *req, const uint8_t *data, size_t len,
    const struct dhcp6_rx_meta *meta, enum dhcp6_drop_reason *ret_reason);

/* reply6.c: the writer of a reply's options. */
struct dhcp6_writer {
	uint8_t *p;
	size_t len, cap;
	bool overflow;
};
void dhcp6_put_option(struct dhcp6_writer *w, uint16_t code, const void *data, size_t len);
/* Opens an option whose body follows; dhcp6_close_option(w, at) sets its length. */
size_t dhcp6_open_option(struct dhcp6_writer *w, uint16_t code);
void dhcp6_close_option(struct dhcp6_writer *w, size_t at);
void dhcp6_put_status(struct dhcp6_writer *w, uint16_t code);
/* Writes the RELAY-REPL headers of req's relays (outermost first, Interface-Id echoed, each
 * Relay Message option left open) and returns how many were opened (at[] their offsets). */
size_t dhcp6_reply_relay_open(struct dhcp6_writer *w, const struct dhcp6_request *req, size_t *at);
void dhcp6_reply_relay_close(struct dhcp6_writer *w, const size_t *at, size_t n);
/* The header (type, xid) then Client Identifier and Server Identifier options. */
void dhcp6_reply_start(struct dhcp6_writer *w, const struct dhcp6_optset *set,
    const struct dhcp6_request *req, int type);
/* Options 23 and 24 when the ORO asks for them. */
void dhcp6_reply_config(
    struct dhcp6_writer *w, const struct dhcp6_optset *set, const struct dhcp6_request *req);
/* An IA with addr and the pool's lifetimes (addr NULL: none, T1 = T2 = 0) and, when
 * zero_others, every other address the request's IA names with lifetimes 0. */
void dhcp6_reply_ia_addr(struct dhcp6_writer *w, const struct dhcp6_optset *set,
    const struct dhcp6_ia *ia, const struct in6_addr *addr, bool zero_others);
/* An IA (T1 = T2 = 0) holding only a Status Code. */
void dhcp6_reply_ia_status(struct dhcp6_writer *w, const struct dhcp6_ia *ia, uint16_t status);
/* Builds the wire forms of options 23 and 24 into set (set_options). 0 or -EINVAL. */
int dhcp6_optset_build(struct dhcp6_optset *set);

#endif
