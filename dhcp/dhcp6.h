/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP6_H
#define VMDHCP_DHCP6_H

/*
 * DHCPv6 server engine (RFC 8415, stateful IA_NA only) and Router Advertisements (RFC 4861).
 * PUBLIC header: the agent uses only this (and dhcp/dhcp.h for the shared limits).
 *
 * Same design as the IPv4 engine (dhcp/dhcp.h): the engine answers from a MAC -> binding
 * table and an option set it is given; it has no opinion on where bindings come from. It
 * never reads the clock (callers pass `now`, a monotonic microsecond count) and allocates
 * nothing on the per-packet path. Addresses are `struct in6_addr` (network byte order); the
 * all-zero address means "none". Fallible functions return negative errno.
 *
 * Clients are matched by MAC, not by DUID: the Ethernet source of the frame, or for a
 * relayed message (RELAY-FORW) the client link-layer address option (RFC 6939, option 79,
 * link-layer type 1). The client's DUID (option 1) is only echoed, unless
 * dhcp6_server_set_duid_mac() says otherwise (off by default).
 *
 * What is answered how (RFC 8415 §16, §18.3; the reasons are in dhcp/request6.c): one
 * address per client, the MAC's binding in one IA_NA (the one naming it, else the first);
 * other IA_NAs and IA_TAs get NoAddrsAvail, IA_PDs NoPrefixAvail. A MAC without a binding, or
 * that declined its address, gets NoAddrsAvail in its IA_NA (as Kea), not silence. Options 23
 * and 24 only when the Option Request Option names them (as Kea). Preference 255 in an
 * ADVERTISE that carries an address. Server Unicast is never offered, so a client's unicast
 * REQUEST/RENEW/RELEASE/DECLINE gets UseMulticast. A RELEASE or DECLINE leaves the binding
 * in place (the control plane owns it). A relayed message without option 79 is dropped.
 */

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dhcp/dhcp.h" /* DHCP_MAX_SEARCH, DHCP_HOSTNAME_MAX, DHCP_LATENCY_BUCKETS */

#define DHCP6_DUID_MAX 130 /* RFC 8415 §11.1: a DUID is at most 128 bytes after its type */
#define DHCP6_MAX_DNS 3

struct dhcp6_server;

/*
 * Everything a reply carries besides the binding itself. Set whole and swapped atomically
 * (dhcp6_server_set_options copies it): the next reply sees the new set.
 */
struct dhcp6_options {
	struct in6_addr server_ip;	    /* the pool's serverIP; with prefix: the on-link prefix
					     * CONFIRM is checked against (RFC 8415 §18.3.3) */
	uint8_t prefix;			    /* prefix length, 8..128 */
	struct in6_addr dns[DHCP6_MAX_DNS]; /* option 23 (RFC 3646) */
	size_t n_dns;
	char search[DHCP_MAX_SEARCH][256]; /* option 24, RFC 1035 wire form, no compression */
	size_t n_search;
	uint32_t preferred_lifetime, valid_lifetime; /* IAADDR (RFC 8415 §21.6); 0 = one year;
						      * T1 = 0.5, T2 = 0.8 x preferred */
	bool rapid_commit; /* answer a SOLICIT with Rapid Commit (option 14) by REPLY (§18.3.1) */
	uint8_t
	    duid[DHCP6_DUID_MAX]; /* server DUID (option 2), required: see dhcp6_duid_for_pool */
	size_t duid_len;
};

/*
 * Server DUID stable for a pool (DUID-UUID, RFC 6355: type 4 and a 16-byte UUID built from a
 * hash of "ns/name", RFC 9562 version 8 bits): every replica and every restart of one pool's
 * agent has the same one, so a client's Server Identifier stays valid across failover.
 * out holds >= 18 bytes; returns the length (18).
 */
size_t dhcp6_duid_for_pool(const char *pool_ns, const char *pool_name, uint8_t *out);

/*
 * Router Advertisements (RFC 4861 §6.2): M=1 (addresses from DHCPv6), O=1, the pool's prefix
 * as on-link (L=1) but not autonomous (A=0: no SLAAC), router_lifetime 0 = not a default
 * router. Sent unsolicited by dhcp6_server_send_ra (the agent's timer, every `interval`
 * seconds) and in answer to a Router Solicitation.
 */
struct dhcp6_ra {
	bool enabled;
	uint32_t interval; /* seconds between unsolicited RAs (the agent's timer; 4..1800) */
	uint16_t router_lifetime;
	struct in6_addr prefix;
	uint8_t prefix_len;
	uint32_t mtu; /* 0 = no MTU option */
};

/* Reasons a received message was dropped (counted, rate-limited log). */
enum dhcp6_drop_reason {
	DHCP6_DROP_MALFORMED,	  /* bad lengths, option overrun, missing mandatory option */
	DHCP6_DROP_NOT_FOR_US,	  /* not UDP to port 547, bad IPv6 header, extension header */
	DHCP6_DROP_UNKNOWN_MAC,	  /* no binding for the client's MAC (and no IA to refuse) */
	DHCP6_DROP_OTHER_SERVER,  /* Server Identifier (option 2) names another server */
	DHCP6_DROP_NO_CLIENT_ID,  /* no Client Identifier where RFC 8415 §16 requires one */
	DHCP6_DROP_UNSUPPORTED,	  /* a message a server must not get (ADVERTISE, REPLY,
				   * RECONFIGURE, RELAY-REPL) or an unknown type */
	DHCP6_DROP_SEND_FAILED,	  /* reply could not be sent */
	DHCP6_DROP_NOT_SERVING,	  /* no options set yet / stopped / standby */
	DHCP6_DROP_BAD_CHECKSUM,  /* UDP or ICMPv6 checksum */
	DHCP6_DROP_TRUNCATED,	  /* the frame was larger than the receive buffer */
	DHCP6_DROP_USE_MULTICAST, /* counted, not dropped: unicast answered with UseMulticast */
	DHCP6_DROP_DECLINED,	  /* reserved: a declined MAC gets NoAddrsAvail, not a drop */
	DHCP6_DROP_NO_MAC,	  /* relayed without a usable option 79: no MAC to match */
	DHCP6_DROP_RELAY_DEPTH,	  /* relay nesting deeper than HOP_COUNT_LIMIT (§7.6) */
	DHCP6_DROP_REPLY_TOO_BIG, /* the reply with its echoes does not fit */
	DHCP6_DROP_BAD_RS,	  /* a Router Solicitation that fails RFC 4861 §6.1.1 */
	_DHCP6_DROP_MAX,
};
const char *dhcp6_drop_reason_name(int reason); /* "malformed", ...; "unknown" */

/* Message types, RFC 8415 §7.3 (1..13); index 0 unused. */
enum {
	DHCP6_MSG_SOLICIT = 1,
	DHCP6_MSG_ADVERTISE = 2,
	DHCP6_MSG_REQUEST = 3,
	DHCP6_MSG_CONFIRM = 4,
	DHCP6_MSG_RENEW = 5,
	DHCP6_MSG_REBIND = 6,
	DHCP6_MSG_REPLY = 7,
	DHCP6_MSG_RELEASE = 8,
	DHCP6_MSG_DECLINE = 9,
	DHCP6_MSG_RECONFIGURE = 10,
	DHCP6_MSG_INFORMATION_REQUEST = 11,
	DHCP6_MSG_RELAY_FORW = 12,
	DHCP6_MSG_RELAY_REPL = 13,
	_DHCP6_MSG_MAX = 14,
};
const char *dhcp6_message_type_name(int type); /* "solicit", ...; "unknown" */

struct dhcp6_stats {
	uint64_t rx[_DHCP6_MSG_MAX]; /* received, by message type (the innermost for relayed) */
	uint64_t tx[_DHCP6_MSG_MAX]; /* sent, by message type (the innermost for relayed) */
	uint64_t drops[_DHCP6_DROP_MAX];
	uint64_t declines, releases;
	uint64_t relayed;	 /* requests that came in RELAY-FORW */
	uint64_t no_addrs_avail; /* IAs answered NoAddrsAvail (unknown MAC, extra IA_NA, IA_TA) */
	uint64_t no_binding;	 /* IAs answered NoBinding (RENEW/RELEASE/DECLINE of not-ours) */
	uint64_t not_on_link;	 /* CONFIRMs answered NotOnLink */
	uint64_t rs_rx, ra_tx, na_tx; /* Router Solicitations; RAs and unsolicited NAs sent */
	uint64_t latency[DHCP_LATENCY_BUCKETS]; /* receive -> reply sent, non-cumulative */
	uint64_t latency_sum_usec;
	/* the packet socket's PACKET_STATISTICS, accumulated (dhcp6_server_read_kernel_stats) */
	uint64_t kernel_received, kernel_drops;
	/* receive moderation (dhcp/moderate.h), as struct dhcp_stats: calls (wakeups), passes
	 * begun at once because frames were still waiting after answering, calls ended by the
	 * budget */
	uint64_t rx_wakeups, rx_immediate, rx_yields;
	/* coalescing waits the caller made (dhcp6_server_on_readable's ret_wait_usec), and their
	 * total */
	uint64_t rx_waits, rx_wait_usec;
};

/*
 * One request and what the engine did with it: a reply, a drop and its reason, or both
 * (none for a message without a usable MAC). Borrowed for the callback only.
 */
struct dhcp6_decision {
	uint64_t now;		 /* the receive time given to the engine */
	const uint8_t *mac;	 /* the client's MAC (6 bytes) */
	const char *hostname;	 /* the MAC's binding's hostname or NULL */
	uint32_t xid;		 /* transaction id (24 bits) */
	uint8_t type;		 /* the (innermost) request's DHCP6_MSG_*; 0: none (malformed) */
	uint8_t reply;		 /* DHCP6_MSG_ADVERTISE or DHCP6_MSG_REPLY; 0: no reply */
	struct in6_addr address; /* the address given in the IA_NA (lifetimes > 0); zero: none */
	uint16_t status;	 /* the top-level or first IA status code sent; 0 Success */
	bool dropped;		 /* not answered, for this reason: */
	enum dhcp6_drop_reason drop;
	bool relayed; /* came in RELAY-FORW */
};

/*
 * Callbacks. All optional. Called on the per-packet path: they must be quick.
 * on_decline: a DECLINE for mac/ip (after the engine marked the address declined: the MAC
 *   gets NoAddrsAvail until its binding changes or the mark is cleared).
 * on_release: a RELEASE for mac/ip (the binding stays: the control plane owns it).
 * on_decision: once per request with a usable MAC, answered or not (after on_decline and
 *   on_release). Never while not serving.
 */
struct dhcp6_callbacks {
	void (*on_decline)(void *userdata, const uint8_t mac[6], const struct in6_addr *ip);
	void (*on_release)(void *userdata, const uint8_t mac[6], const struct in6_addr *ip);
	void (*on_decision)(void *userdata, const struct dhcp6_decision *d);
	void *userdata;
};

/* Returns 0 and a new server in *ret (no sockets yet), or -ENOMEM. */
int dhcp6_server_new(struct dhcp6_server **ret);
/* Closes sockets and frees everything. Accepts NULL; returns NULL. */
struct dhcp6_server *dhcp6_server_free(struct dhcp6_server *s);

void dhcp6_server_set_callbacks(struct dhcp6_server *s, const struct dhcp6_callbacks *cb);

/* Validates and copies *o (borrowed); -EINVAL if server_ip is zero, prefix is not 8..128,
 * duid_len is not 3..DHCP6_DUID_MAX, n_dns / n_search too large, a search name invalid, or
 * preferred > valid lifetime. */
int dhcp6_server_set_options(struct dhcp6_server *s, const struct dhcp6_options *o);
/* Copies *ra; RA off (no RS answered, send_ra -EAGAIN) when !enabled. -EINVAL bad prefix. */
int dhcp6_server_set_ra(struct dhcp6_server *s, const struct dhcp6_ra *ra);

/*
 * Bindings, as dhcp_server_set_binding: hostname may be NULL (copied, truncated to
 * DHCP_HOSTNAME_MAX); ip zero or multicast is -EINVAL; -EINVAL if mac is not bindable
 * (dhcp_mac_bindable); -EEXIST if ip is already bound to another MAC; -ENOMEM.
 * Setting a binding that changes a MAC's address clears its DECLINE mark.
 */
int dhcp6_server_set_binding(
    struct dhcp6_server *s, const uint8_t mac[6], const struct in6_addr *ip, const char *hostname);
int dhcp6_server_remove_binding(struct dhcp6_server *s, const uint8_t mac[6]);
/* Clears mac's DECLINE mark when its binding is still ip: 0, else -ENOENT. */
int dhcp6_server_clear_decline(
    struct dhcp6_server *s, const uint8_t mac[6], const struct in6_addr *ip);
/* Looks a MAC up; returns 0 and fills ret (may be NULL), or -ENOENT. */
int dhcp6_server_get_binding(
    const struct dhcp6_server *s, const uint8_t mac[6], struct in6_addr *ret);
size_t dhcp6_server_n_bindings(const struct dhcp6_server *s);
/* Full resync: begin marks every binding stale; set_binding refreshes; end removes the ones
 * still stale and returns how many were removed. */
void dhcp6_server_sync_begin(struct dhcp6_server *s);
size_t dhcp6_server_sync_end(struct dhcp6_server *s);
void dhcp6_server_foreach_binding(const struct dhcp6_server *s,
    void (*fn)(
	void *userdata, const uint8_t mac[6], const struct in6_addr *ip, const char *hostname),
    void *userdata);

/*
 * Sockets (dhcp/socket6.h): the AF_PACKET socket (IPv6 -> UDP 547 or ICMPv6 Router
 * Solicitation, locked BPF) bound to ifindex, and the UDP :547 socket on ifname that keeps
 * the kernel from answering ICMP port-unreachable. hwaddr: the interface's MAC (Ethernet
 * source of replies); link_local: its link-local address (IPv6 source of replies, RFC 8415
 * §18.3.10 / RFC 4861 §6.1.2). Reopening closes the old sockets first.
 */
int dhcp6_server_open(struct dhcp6_server *s, int ifindex, const char *ifname,
    const uint8_t hwaddr[6], const struct in6_addr *link_local);
void dhcp6_server_close(struct dhcp6_server *s);
/* The link's MTU changed: the receive ring is sized for it again in place (no new socket).
 * 0, or negative errno (the socket is then read with recvmmsg, longer frames counted as
 * truncated). */
int dhcp6_server_set_mtu(struct dhcp6_server *s, unsigned mtu);
void dhcp6_server_set_hwaddr(
    struct dhcp6_server *s, const uint8_t hwaddr[6], const struct in6_addr *link_local);
/* Standby: every request read is dropped (DHCP6_DROP_NOT_SERVING), no RA, no NA. */
void dhcp6_server_set_standby(struct dhcp6_server *s, bool standby);
/*
 * DUID fallback (as Kea's `mac-sources: duid`): when on and the client's MAC (the frame's
 * source, or option 79 when relayed) has no binding, the link-layer address of the Client
 * Identifier's DUID-LLT (type 1) or DUID-LL (type 3) of hardware type 1 (Ethernet, 6 bytes),
 * RFC 8415 §11.2/§11.4, is looked up instead, and the request is answered (and reported) as
 * that MAC's. For load generators (perfdhcp -6) that simulate many clients behind one MAC.
 * Off by default: a client writes any DUID it likes, while the bridge or switch pins the
 * frame's source MAC to the VM's interface, so turning it on lets any client on the link
 * take another VM's address by writing that VM's MAC in its DUID. A bound frame MAC always
 * wins over the DUID's.
 */
void dhcp6_server_set_duid_mac(struct dhcp6_server *s, bool on);
/* The fd to watch for readability (the packet socket); -1 when closed. */
int dhcp6_server_fd(const struct dhcp6_server *s);
/*
 * Reads the frames waiting and answers them, as dhcp_server_on_readable does (the receive ring
 * when there is one; passes while frames keep arriving, up to the budget of dhcp/moderate.h),
 * and says in *ret_wait_usec (may be NULL) how long to wait before reading again: 0 (wait for
 * readability) unless requests come in faster than one per DHCP6_MOD_ON_USEC (dhcp6-internal.h:
 * 10 000 requests/s, 5 000 exchanges/s), then the coalescing wait of dhcp/moderate.h, at most
 * 200 us; the caller waits, then calls again with fd -1. DHCPv6 to the core (replies from the
 * link-local address to the client's source, port 546; RELAY-REPL to the relay's source, port 547),
 * Router Solicitations with an RA when RA is enabled (unicast to the soliciting host when it
 * has a source address, else to ff02::1, RFC 4861 §6.2.6). Returns frames read, or negative
 * errno (-EBADF: fd is not dhcp6_server_fd, or no sockets).
 */
int dhcp6_server_on_readable(struct dhcp6_server *s, int fd, uint64_t now, uint32_t *ret_wait_usec);
/* Unsolicited RA to ff02::1 (the agent's timer). 0; -EAGAIN RA disabled, standby or no
 * socket; other negative errno from sending. */
int dhcp6_server_send_ra(struct dhcp6_server *s, uint64_t now);
/* Unsolicited Neighbor Advertisement (O=1) for target with our MAC to ff02::1 (failover:
 * the address now answered here). 0 or negative errno. */
int dhcp6_server_send_unsolicited_na(struct dhcp6_server *s, const struct in6_addr *target);

const struct dhcp6_stats *dhcp6_server_stats(const struct dhcp6_server *s);
/* PACKET_STATISTICS into kernel_received / kernel_drops, as dhcp_server_read_kernel_stats. */
int dhcp6_server_read_kernel_stats(struct dhcp6_server *s);
/* Optional send-time clock for the latency histogram, as dhcp_server_set_clock. */
void dhcp6_server_set_clock(
    struct dhcp6_server *s, uint64_t (*now_usec)(void *userdata), void *userdata);

#endif
