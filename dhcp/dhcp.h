/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_H
#define VMDHCP_DHCP_H

/*
 * DHCPv4 server engine (RFC 2131, RFC 2132). PUBLIC header: the agent uses only this.
 *
 * The engine answers from a MAC -> binding table and an option set it is given; it has no
 * opinion on where bindings come from. It never reads the clock (callers pass `now`, a
 * monotonic microsecond count) and allocates nothing on the per-packet path.
 * All addresses are IPv4 in host byte order. Fallible functions return negative errno.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DHCP_MAX_DNS 3
#define DHCP_MAX_NTP 4
#define DHCP_MAX_ROUTES 32
#define DHCP_MAX_SEARCH 16
#define DHCP_HOSTNAME_MAX 63

struct dhcp_server;

/*
 * Network boot answers (RFC 2132 §9.4/9.5, RFC 4578, UEFI 2.x HTTP boot): which file a client
 * is given, by the architecture it names in option 93 or, for iPXE, its user class (77).
 */
enum dhcp_boot_kind {
	DHCP_BOOT_BIOS,	      /* option 93 type 0: x86 BIOS */
	DHCP_BOOT_UEFI,	      /* 6, 7, 9: EFI IA32, x86-64 (EBC) */
	DHCP_BOOT_UEFI_ARM64, /* 11 */
	DHCP_BOOT_UEFI_HTTP,  /* 15, 16: UEFI HTTP boot; answered with option 60 "HTTPClient" */
	DHCP_BOOT_IPXE,	      /* option 77 "iPXE": the client is iPXE already (no loop) */
	DHCP_BOOT_OTHER,      /* a boot client given no file (unknown arch, none configured,
				 malformed option 93): counted only */
	_DHCP_BOOT_MAX,
};
const char *dhcp_boot_kind_name(enum dhcp_boot_kind k); /* "bios", "uefi-arm64", ... */

#define DHCP_BOOT_NAME_MAX 255 /* a file name or URL; the BOOTP file field holds 127 */

/* All "" / 0: no boot answers (every reply as without this struct). */
struct dhcp_boot {
	uint32_t next_server;			       /* siaddr of boot answers; 0 = unset */
	char tftp_server_name[DHCP_BOOT_NAME_MAX + 1]; /* option 66; "" = none */
	/* the file of each answer (DHCP_BOOT_OTHER unused); "" = none for that kind */
	char files[_DHCP_BOOT_MAX][DHCP_BOOT_NAME_MAX + 1];
};

struct dhcp_route {
	uint32_t destination; /* network address */
	uint8_t prefix;	      /* 0..32 */
	uint32_t gateway;
};

/*
 * Everything a reply carries besides the binding itself. Set whole and swapped atomically
 * (dhcp_server_set_options copies it): the next reply sees the new set.
 */
struct dhcp_options {
	uint32_t server_ip;	    /* option 54 and the IP source address; required */
	uint8_t prefix;		    /* subnet prefix length -> option 1 (and 28 = broadcast) */
	uint32_t router;	    /* option 3; 0 = none */
	uint32_t dns[DHCP_MAX_DNS]; /* option 6 */
	size_t n_dns;
	uint32_t ntp[DHCP_MAX_NTP]; /* option 42 (already resolved) */
	size_t n_ntp;
	char domain_name[256];		   /* option 15; "" = none */
	char search[DHCP_MAX_SEARCH][256]; /* option 119 (RFC 1035 compression) */
	size_t n_search;
	uint16_t mtu;				   /* option 26; 0 = none */
	struct dhcp_route routes[DHCP_MAX_ROUTES]; /* option 121 (router added as 0/0) */
	size_t n_routes;
	uint32_t lease_time;   /* option 51 seconds (0 = one year, UINT32_MAX = infinite);
				* T1 = 50 %, T2 = 87.5 % (58, 59) */
	struct dhcp_boot boot; /* network boot answers (dhcp/boot.c) */
};

/* Reasons a received datagram was dropped (counted, rate-limited log). */
enum dhcp_drop_reason {
	DHCP_DROP_MALFORMED,	 /* bad lengths, truncated, bad cookie, option overrun */
	DHCP_DROP_NOT_REQUEST,	 /* op != BOOTREQUEST, bad htype/hlen */
	DHCP_DROP_NO_TYPE,	 /* no/invalid option 53 */
	DHCP_DROP_UNKNOWN_MAC,	 /* no binding for chaddr */
	DHCP_DROP_OTHER_SERVER,	 /* option 54 names another server */
	DHCP_DROP_BAD_CHECKSUM,	 /* IPv4 or UDP checksum */
	DHCP_DROP_NOT_FOR_US,	 /* not UDP to port 67, fragment, ... */
	DHCP_DROP_UNSUPPORTED,	 /* message type a server does not answer */
	DHCP_DROP_SEND_FAILED,	 /* reply could not be sent */
	DHCP_DROP_NOT_SERVING,	 /* no options set yet / stopped / standby */
	DHCP_DROP_DECLINED,	 /* the MAC declined its bound address; silent until it changes */
	DHCP_DROP_WRONG_SUBNET,	 /* relayed (giaddr) from a network outside the pool's subnet */
	DHCP_DROP_REPLY_TOO_BIG, /* the reply with its echoes (61, 82) cannot fit the link/client */
	DHCP_DROP_TRUNCATED,	 /* the frame was larger than the receive buffer (cut short) */
	DHCP_DROP_OFFER_LIMIT,	 /* a DISCOVER on_offer refused with -EBUSY (pending offers cap) */
	_DHCP_DROP_MAX,
};
const char *dhcp_drop_reason_name(enum dhcp_drop_reason r);

/* Message types, as option 53 numbers them (1..8); index 0 unused. */
enum {
	DHCP_MSG_DISCOVER = 1,
	DHCP_MSG_OFFER = 2,
	DHCP_MSG_REQUEST = 3,
	DHCP_MSG_DECLINE = 4,
	DHCP_MSG_ACK = 5,
	DHCP_MSG_NAK = 6,
	DHCP_MSG_RELEASE = 7,
	DHCP_MSG_INFORM = 8,
	_DHCP_MSG_MAX = 9,
};
const char *dhcp_message_type_name(int type); /* "discover", ...; "unknown" */

#define DHCP_LATENCY_BUCKETS 12
/* Upper bounds (usec) of the reply latency histogram buckets (the last bucket is +Inf). */
extern const uint64_t dhcp_latency_bounds_usec[DHCP_LATENCY_BUCKETS - 1];

struct dhcp_stats {
	uint64_t rx[_DHCP_MSG_MAX]; /* received, by message type */
	uint64_t tx[_DHCP_MSG_MAX]; /* sent, by message type */
	uint64_t drops[_DHCP_DROP_MAX];
	uint64_t declines;
	uint64_t latency[DHCP_LATENCY_BUCKETS]; /* receive -> reply sent, non-cumulative */
	uint64_t latency_sum_usec;
	/* receive passes (dhcp/moderate.h): calls of dhcp_server_on_readable, passes begun at
	 * once because frames were still waiting after answering, calls ended by the budget */
	uint64_t rx_wakeups, rx_immediate, rx_yields;
	/* coalescing waits (above 20 000 requests/s only): calls after one, and their usec */
	uint64_t rx_waits, rx_wait_usec;
	/* the packet socket's PACKET_STATISTICS, accumulated (dhcp_server_read_kernel_stats):
	 * frames the socket's filter passed (dropped ones included), and those dropped because
	 * the receive ring (or buffer) was full */
	uint64_t kernel_received, kernel_drops;
	/* replies (OFFER/ACK) to network boot clients, by the answer they carried
	 * (DHCP_BOOT_OTHER: none), and boot clients whose option 93, 94 or 97 was malformed
	 * (ignored: answered as if absent) */
	uint64_t boot[_DHCP_BOOT_MAX];
	uint64_t boot_malformed;
};

/*
 * Callbacks. All optional. Called on the per-packet path: they must be quick.
 * on_offer: a DISCOVER from a MAC with no binding, when set (else on_unknown is asked). Return
 *   0 and fill *ret_ip to OFFER that address without binding it: the callback holds it for
 *   the REQUEST that may follow, which on_unknown is asked about (the MAC still has no
 *   binding); return 1 and fill *ret_ip to bind it and offer it, as on_unknown does; negative
 *   errno to stay silent: -EBUSY is counted as DHCP_DROP_OFFER_LIMIT (too many offers
 *   pending), anything else as DHCP_DROP_UNKNOWN_MAC.
 * on_unknown: a DISCOVER/REQUEST from a MAC with no binding. Return 0 and fill *ret_ip to
 *   bind it now (the engine inserts it into its table and carries on), or negative errno to
 *   stay silent (counted as DHCP_DROP_UNKNOWN_MAC; so is an *ret_ip already bound to another
 *   MAC), but for a REQUEST that is NAKed when the engine holds no binding (SELECTING this
 *   server, RENEWING in its subnet), unless the error is -EAGAIN: the callback could not record
 *   the binding now, and silence lets the client retry. Used by the agent's --dynamic mode. Not
 *   asked for INFORM (unknown: silent).
 * on_decline: a DECLINE for mac/ip (after the engine marked the address declined).
 * on_release: a RELEASE for mac/ip.
 * on_ack: a REQUEST of mac for its binding ip was answered with DHCPACK (a lease granted or
 *   renewed; not the ACK of an INFORM), called when the ACK is built, before it is sent. The
 *   agent's --dynamic leases are renewed by it.
 * on_decision: what became of a request (struct dhcp_decision), once per request whose fixed
 *   header names an Ethernet chaddr, answered or not (after on_unknown, on_decline and
 *   on_release, before on_ack); the agent logs it.
 *   Never for a datagram without a usable chaddr (bad frame, checksum, op, htype/hlen: those
 *   are counted only) nor while not serving. A reply that then fails to send is counted as
 *   send_failed afterwards, without a second call.
 * Inside any of them, dhcp_server_client_id() gives the request's client identifier.
 */
struct dhcp_decision;
struct dhcp_callbacks {
	int (*on_unknown)(void *userdata, const uint8_t mac[6], uint32_t *ret_ip);
	int (*on_offer)(void *userdata, const uint8_t mac[6], uint32_t *ret_ip);
	void (*on_decline)(void *userdata, const uint8_t mac[6], uint32_t ip);
	void (*on_release)(void *userdata, const uint8_t mac[6], uint32_t ip);
	void (*on_ack)(void *userdata, const uint8_t mac[6], uint32_t ip);
	void (*on_decision)(void *userdata, const struct dhcp_decision *d);
	void *userdata;
};

/*
 * One request and what the engine did with it: a reply (OFFER, ACK, NAK), a drop and its
 * reason, or neither (a DECLINE or RELEASE taken note of). Borrowed for the callback only.
 */
struct dhcp_decision {
	uint64_t now;	      /* the receive time given to the engine */
	const uint8_t *mac;   /* chaddr (6 bytes) */
	const char *hostname; /* the MAC's binding's hostname (option 12, the VM name) or NULL */
	uint32_t xid;
	uint32_t ip;	    /* the address offered or ACKed (yiaddr); 0 for anything else */
	uint32_t requested; /* the address the client named: option 50, else ciaddr; 0: none */
	uint32_t giaddr;    /* the relay agent; 0: not relayed */
	uint8_t type;	    /* the request's DHCP_MSG_*; 0: none (malformed options, no_type) */
	uint8_t reply;	    /* DHCP_MSG_OFFER, DHCP_MSG_ACK or DHCP_MSG_NAK; 0: no reply */
	bool dropped;	    /* not answered, for this reason: */
	enum dhcp_drop_reason drop;
	const char *boot_file; /* the boot file or URL of an OFFER/ACK (borrowed), or NULL */
	int boot_kind;	       /* enum dhcp_boot_kind of boot_file; -1 for none */
};

/*
 * Inside a callback: the client identifier (option 61, RFC 2132 §9.14) of the request it is
 * called for, borrowed until the callback returns, and its length in *ret_len; NULL (and 0)
 * when the request carries none, or outside a callback. The bindings stay keyed by MAC (chaddr);
 * the identifier is for the callbacks' own leases (the agent's --dynamic ones are keyed by it).
 * Replies echo it unchanged (RFC 6842).
 */
const uint8_t *dhcp_server_client_id(const struct dhcp_server *s, size_t *ret_len);
/*
 * Inside a callback: the address the request names, option 50 (requested IP address), else
 * ciaddr; 0 when it names none, or outside a callback. What on_unknown commits for a REQUEST.
 */
uint32_t dhcp_server_requested_ip(const struct dhcp_server *s);

/* Returns 0 and a new server in *ret (no sockets yet), or -ENOMEM. */
int dhcp_server_new(struct dhcp_server **ret);
/* Closes sockets and frees everything. Accepts NULL; returns NULL. */
struct dhcp_server *dhcp_server_free(struct dhcp_server *s);

void dhcp_server_set_callbacks(struct dhcp_server *s, const struct dhcp_callbacks *cb);

/* Validates and copies *o (borrowed); -EINVAL if server_ip is 0, prefix > 32, ... */
int dhcp_server_set_options(struct dhcp_server *s, const struct dhcp_options *o);

/* Can mac be bound? false for the all-zero MAC and for group (multicast, broadcast) MACs:
 * the low bit of the first octet set. */
bool dhcp_mac_bindable(const uint8_t mac[6]);

/*
 * Bindings. hostname (option 12, the VM name) may be NULL; it is copied (truncated to
 * DHCP_HOSTNAME_MAX bytes). ip 0 is -EINVAL.
 * Setting a binding that changes a MAC's address clears that MAC's DECLINE mark.
 * -EINVAL if mac cannot be a NIC's (dhcp_mac_bindable), -EEXIST if ip is already bound to
 * another MAC (the caller decides), -ENOMEM.
 */
int dhcp_server_set_binding(
    struct dhcp_server *s, const uint8_t mac[6], uint32_t ip, const char *hostname);
int dhcp_server_remove_binding(struct dhcp_server *s, const uint8_t mac[6]);
/*
 * Clears mac's DECLINE mark (the caller's hold-down of the declined address is over): the MAC
 * is answered again. Only when its binding is still ip: 0, or -ENOENT (no such binding, or
 * bound to another address, whose mark was already cleared when it changed).
 */
int dhcp_server_clear_decline(struct dhcp_server *s, const uint8_t mac[6], uint32_t ip);
/* Looks a MAC up; returns 0 and fills ret_ip (may be NULL), or -ENOENT. */
int dhcp_server_get_binding(const struct dhcp_server *s, const uint8_t mac[6], uint32_t *ret_ip);
size_t dhcp_server_n_bindings(const struct dhcp_server *s);
/*
 * Full resync: begin marks every binding stale; set_binding refreshes; end removes the
 * ones still stale and returns how many were removed.
 */
void dhcp_server_sync_begin(struct dhcp_server *s);
size_t dhcp_server_sync_end(struct dhcp_server *s);
/* Calls fn for every binding (for lease files, debugging). */
void dhcp_server_foreach_binding(const struct dhcp_server *s,
    void (*fn)(void *userdata, const uint8_t mac[6], uint32_t ip, const char *hostname),
    void *userdata);

/*
 * Sockets. Opens the AF_PACKET socket (BPF filter for IPv4/UDP to port 67, locked) bound to
 * ifindex, and the UDP socket bound to port 67 on ifname (SO_BINDTODEVICE) that keeps the
 * kernel from answering with ICMP port-unreachable. hwaddr is the interface's MAC (the
 * Ethernet source of replies). Needs CAP_NET_RAW (+ CAP_NET_BIND_SERVICE for :67).
 * Reopening closes the old sockets first.
 */
int dhcp_server_open(
    struct dhcp_server *s, int ifindex, const char *ifname, const uint8_t hwaddr[6]);
void dhcp_server_close(struct dhcp_server *s);
/*
 * The Ethernet source of replies from now on (the interface's MAC changed, e.g. a bridge
 * whose ports changed): the sockets, bound to the ifindex, stay as they are.
 */
void dhcp_server_set_hwaddr(struct dhcp_server *s, const uint8_t hwaddr[6]);
/*
 * The interface's MTU changed: replies are sized for it, and the receive ring's slots are
 * resized in place to hold a whole frame of it (a 9000-byte link takes 4000-byte requests;
 * no new socket, so it works after capabilities are dropped; frames waiting in the ring at
 * that instant are lost). A frame longer than its slot is never dropped silently: it is
 * counted (DHCP_DROP_TRUNCATED) and logged at most once a minute. 0 or negative errno (the
 * socket then reads with recvmmsg).
 */
int dhcp_server_set_mtu(struct dhcp_server *s, unsigned mtu);
/*
 * Standby (a replica that does not hold its pool's Lease): the sockets stay open and read,
 * every request is dropped (DHCP_DROP_NOT_SERVING) before it is parsed, nothing is answered.
 * Takes effect with the next datagram read. Off at dhcp_server_new.
 */
void dhcp_server_set_standby(struct dhcp_server *s, bool standby);
/*
 * The one fd to watch for readability: the packet socket (AF_PACKET, SOCK_RAW, bound to the
 * interface), from which every request is read; -1 when closed. The UDP socket is not
 * watched: its drop-all filter, attached before it is bound, keeps every datagram out, and
 * nothing is sent on it, so it never becomes readable (it exists so the kernel does not
 * answer with ICMP port-unreachable). Every reply is an Ethernet frame sent on the packet
 * socket, with IPv4/UDP headers we build: broadcast, or unicast to chaddr; a reply to a relay
 * (giaddr) or to ciaddr goes to the Ethernet source of the request. The caller may send
 * frames of its own on this fd (the agent's gratuitous ARP), never read it.
 */
int dhcp_server_fd(const struct dhcp_server *s);
/*
 * The one receive call. fd: dhcp_server_fd, found readable (or -1: read it anyway). Reads
 * what is pending and answers every request, NAPI-style (dhcp/moderate.h): what the receive
 * ring holds is read, answered and sent at once; while frames are still waiting after the
 * replies are sent, the ring is read again at once, up to a budget per call (the socket then
 * stays readable and the caller's loop calls again). now: the receive time of the first pass;
 * later passes take theirs from the dhcp_server_set_clock clock when there is one. Returns
 * the frames read, or negative errno (-EBADF: fd is not dhcp_server_fd, or no sockets).
 * *ret_wait_usec (may be NULL): 0, wait for readability; > 0 (at most 200, and only while
 * requests come faster than 20 000 a second, 10 000 DORA): wait that long and call again (fd -1),
 * so one wakeup serves the requests of that window (dhcp/moderate.h).
 */
int dhcp_server_on_readable(struct dhcp_server *s, int fd, uint64_t now, uint32_t *ret_wait_usec);
/*
 * Reads the packet socket's kernel counters (PACKET_STATISTICS, which the kernel resets on
 * every read) into dhcp_server_stats()'s kernel_received / kernel_drops, which accumulate
 * them over the server's life (sockets reopened included: they are read before a close).
 * 0, or negative errno (no socket: -EBADF; the counters are left as they were).
 */
int dhcp_server_read_kernel_stats(struct dhcp_server *s);

const struct dhcp_stats *dhcp_server_stats(const struct dhcp_server *s);

/*
 * Optional: a monotonic microsecond clock read after each batch of replies is sent, so the
 * latency histogram measures receive (the `now` given to on_readable) -> send. Without it
 * the engine never reads a clock and latencies are recorded as 0.
 */
void dhcp_server_set_clock(
    struct dhcp_server *s, uint64_t (*now_usec)(void *userdata), void *userdata);

#endif
