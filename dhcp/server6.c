/* SPDX-License-Identifier: Apache-2.0 */
/* The DHCPv6 server object: configuration, bindings, counters, and the per-batch I/O path. */
#include <errno.h>
#include <linux/if_packet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dhcp/dhcp6-internal.h"
#include "dhcp/packet6.h"
#include "dhcp/ra.h"
#include "lib/ip6.h"

/* RFC 4861 §6.2.1 defaults for the Prefix Information option (on-link only: A=0). */
#define RA_PREFIX_VALID 2592000u
#define RA_PREFIX_PREFERRED 604800u

static const char *const drop_names[_DHCP6_DROP_MAX] = {
    [DHCP6_DROP_MALFORMED] = "malformed",
    [DHCP6_DROP_NOT_FOR_US] = "not_for_us",
    [DHCP6_DROP_UNKNOWN_MAC] = "unknown_mac",
    [DHCP6_DROP_OTHER_SERVER] = "other_server",
    [DHCP6_DROP_NO_CLIENT_ID] = "no_client_id",
    [DHCP6_DROP_UNSUPPORTED] = "unsupported",
    [DHCP6_DROP_SEND_FAILED] = "send_failed",
    [DHCP6_DROP_NOT_SERVING] = "not_serving",
    [DHCP6_DROP_BAD_CHECKSUM] = "bad_checksum",
    [DHCP6_DROP_TRUNCATED] = "truncated",
    [DHCP6_DROP_USE_MULTICAST] = "use_multicast",
    [DHCP6_DROP_DECLINED] = "declined",
    [DHCP6_DROP_NO_MAC] = "no_mac",
    [DHCP6_DROP_RELAY_DEPTH] = "relay_depth",
    [DHCP6_DROP_REPLY_TOO_BIG] = "reply_too_big",
    [DHCP6_DROP_BAD_RS] = "bad_rs",
};

static const char *const msg_names[_DHCP6_MSG_MAX] = {
    [DHCP6_MSG_SOLICIT] = "solicit",
    [DHCP6_MSG_ADVERTISE] = "advertise",
    [DHCP6_MSG_REQUEST] = "request",
    [DHCP6_MSG_CONFIRM] = "confirm",
    [DHCP6_MSG_RENEW] = "renew",
    [DHCP6_MSG_REBIND] = "rebind",
    [DHCP6_MSG_REPLY] = "reply",
    [DHCP6_MSG_RELEASE] = "release",
    [DHCP6_MSG_DECLINE] = "decline",
    [DHCP6_MSG_RECONFIGURE] = "reconfigure",
    [DHCP6_MSG_INFORMATION_REQUEST] = "information-request",
    [DHCP6_MSG_RELAY_FORW] = "relay-forw",
    [DHCP6_MSG_RELAY_REPL] = "relay-repl",
};

const char *
dhcp6_drop_reason_name(int r)
{
	if (r < 0 || r >= _DHCP6_DROP_MAX || drop_names[r] == NULL)
		return "unknown";
	return drop_names[r];
}

const char *
dhcp6_message_type_name(int type)
{
	if (type <= 0 || type >= _DHCP6_MSG_MAX)
		return "unknown";
	return msg_names[type];
}

int
dhcp6_server_new(struct dhcp6_server **ret)
{
	struct dhcp6_server *s = calloc(1, sizeof(*s));
	int r;

	if (s == NULL)
		return -ENOMEM;
	s->packet_fd = s->udp_fd = -1;
	dhcp_moderation_reset(&s->mod);
	dhcp_moderation_set_window(&s->mod,
	    &(struct dhcp_mod_window){DHCP6_MOD_ON_USEC, DHCP6_MOD_OFF_USEC, DHCP6_MOD_MAX_USEC});
	s->drop_log = (struct log_ratelimit)LOG_RATELIMIT_INIT(10 * 1000000, 10);
	s->rx = calloc(DHCP6_BATCH, sizeof(*s->rx));
	s->tx = calloc(DHCP6_BATCH, sizeof(*s->tx));
	if (s->rx == NULL || s->tx == NULL) {
		dhcp6_server_free(s);
		return -ENOMEM;
	}
	if ((r = dhcp6_table_new(&s->table)) < 0) {
		dhcp6_server_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

struct dhcp6_server *
dhcp6_server_free(struct dhcp6_server *s)
{
	if (s == NULL)
		return NULL;
	dhcp6_server_close(s);
	dhcp6_table_free(s->table);
	free(s->optset);
	free(s->rx);
	free(s->tx);
	free(s);
	return NULL;
}

void
dhcp6_server_set_callbacks(struct dhcp6_server *s, const struct dhcp6_callbacks *cb)
{
	if (cb == NULL)
		memset(&s->cb, 0, sizeof(s->cb));
	else
		s->cb = *cb;
}

void
dhcp6_server_set_clock(struct dhcp6_server *s, uint64_t (*now_usec)(void *userdata), void *userdata)
{
	s->clock = now_usec;
	s->clock_userdata = userdata;
}

static uint32_t
or_default(uint32_t v)
{
	return v != 0 ? v : DHCP6_LIFETIME_DEFAULT;
}

int
dhcp6_server_set_options(struct dhcp6_server *s, const struct dhcp6_options *o)
{
	struct dhcp6_optset *set;

	if (ipv6_is_zero(&o->server_ip) || o->prefix < 8 || o->prefix > 128 || o->duid_len < 3 ||
	    o->duid_len > DHCP6_DUID_MAX || o->n_dns > DHCP6_MAX_DNS ||
	    o->n_search > DHCP_MAX_SEARCH ||
	    or_default(o->preferred_lifetime) > or_default(o->valid_lifetime))
		return -EINVAL;
	set = calloc(1, sizeof(*set));
	if (set == NULL)
		return -ENOMEM;
	set->o = *o;
	if (dhcp6_optset_build(set) < 0) {
		free(set);
		return -EINVAL;
	}
	free(s->optset);
	s->optset = set;
	return 0;
}

int
dhcp6_server_set_ra(struct dhcp6_server *s, const struct dhcp6_ra *ra)
{
	if (ra->enabled && ra->prefix_len > 128)
		return -EINVAL;
	s->ra = *ra;
	return 0;
}

/* --- bindings ------------------------------------------------------------------------------- */

int
dhcp6_server_set_binding(
    struct dhcp6_server *s, const uint8_t mac[6], const struct in6_addr *ip, const char *hostname)
{
	if (!dhcp_mac_bindable(mac) || ipv6_is_zero(ip) || ipv6_is_multicast(ip))
		return -EINVAL;
	return dhcp6_table_set(s->table, mac, ip, hostname);
}

int
dhcp6_server_remove_binding(struct dhcp6_server *s, const uint8_t mac[6])
{
	return dhcp6_table_remove(s->table, mac);
}

int
dhcp6_server_clear_decline(struct dhcp6_server *s, const uint8_t mac[6], const struct in6_addr *ip)
{
	struct dhcp6_binding *b = dhcp6_table_lookup(s->table, mac);

	if (b == NULL || !ipv6_equal(&b->addr, ip))
		return -ENOENT;
	b->flags &= (uint8_t)~DHCP6_BINDING_DECLINED;
	return 0;
}

int
dhcp6_server_get_binding(const struct dhcp6_server *s, const uint8_t mac[6], struct in6_addr *ret)
{
	const struct dhcp6_binding *b = dhcp6_table_lookup(s->table, mac);

	if (b == NULL)
		return -ENOENT;
	if (ret != NULL)
		*ret = b->addr;
	return 0;
}

size_t
dhcp6_server_n_bindings(const struct dhcp6_server *s)
{
	return dhcp6_table_size(s->table);
}

void
dhcp6_server_sync_begin(struct dhcp6_server *s)
{
	dhcp6_table_sync_begin(s->table);
}

size_t
dhcp6_server_sync_end(struct dhcp6_server *s)
{
	return dhcp6_table_sync_end(s->table);
}

void
dhcp6_server_foreach_binding(const struct dhcp6_server *s,
    void (*fn)(
	void *userdata, const uint8_t mac[6], const struct in6_addr *ip, const char *hostname),
    void *userdata)
{
	dhcp6_table_foreach(s->table, fn, userdata);
}

const struct dhcp6_stats *
dhcp6_server_stats(const struct dhcp6_server *s)
{
	return &s->stats;
}

int
dhcp6_count_drop(struct dhcp6_server *s, enum dhcp6_drop_reason reason)
{
	s->stats.drops[reason]++;
	s->dropped = true;
	s->drop = reason;
	if (log_get_level() >= LOG_LEVEL_DEBUG)
		log_ratelimited(&s->drop_log, s->now, LOG_LEVEL_DEBUG,
		    "dhcp6: dropped a message: %s", dhcp6_drop_reason_name(reason));
	return 0;
}

/* --- sockets ---------------------------------------------------------------------------------- */

int
dhcp6_server_read_kernel_stats(struct dhcp6_server *s)
{
	unsigned packets, drops;
	int r = dhcp_socket_kernel_stats(s->packet_fd, &packets, &drops);

	if (r < 0)
		return r;
	s->stats.kernel_received += packets;
	s->stats.kernel_drops += drops;
	return 0;
}

int
dhcp6_server_set_mtu(struct dhcp6_server *s, unsigned mtu)
{
	struct dhcp_ring g;

	if (s->packet_fd < 0 || s->ring.map == NULL)
		return 0; /* not open, or read with recvmmsg (DHCP6_RX_BUF a frame, cut: counted) */
	memset(&g, 0, sizeof(g));
	dhcp_ring_geometry(&g, mtu);
	if (g.frame_size == s->ring.frame_size)
		return 0;
	return dhcp_socket_ring_resize(s->packet_fd, &s->ring, mtu);
}

void
dhcp6_server_close(struct dhcp6_server *s)
{
	dhcp_socket_ring_close(&s->ring);
	if (s->packet_fd >= 0) {
		(void)dhcp6_server_read_kernel_stats(s); /* its counters die with it */
		close(s->packet_fd);
	}
	if (s->udp_fd >= 0)
		close(s->udp_fd);
	s->packet_fd = s->udp_fd = -1;
}

void
dhcp6_server_set_hwaddr(
    struct dhcp6_server *s, const uint8_t hwaddr[6], const struct in6_addr *link_local)
{
	memcpy(s->hwaddr, hwaddr, 6);
	if (link_local != NULL && !ipv6_is_zero(link_local))
		s->link_local = *link_local;
	else
		ipv6_link_local_from_mac(hwaddr, &s->link_local);
}

void
dhcp6_server_set_standby(struct dhcp6_server *s, bool standby)
{
	s->standby = standby;
}

void
dhcp6_server_set_duid_mac(struct dhcp6_server *s, bool on)
{
	s->duid_mac = on;
}

int
dhcp6_server_fd(const struct dhcp6_server *s)
{
	return s->packet_fd;
}

/* --- the per-frame path ----------------------------------------------------------------------- */

void
dhcp6_ra_params(const struct dhcp6_server *s, struct ra_params *p)
{
	*p = (struct ra_params){
	    .managed = true, /* addresses from DHCPv6 ... */
	    .other = true,   /* ... and DNS too */
	    .router_lifetime = s->ra.router_lifetime,
	    .prefix = s->ra.prefix,
	    .prefix_len = s->ra.prefix_len,
	    .prefix_valid = RA_PREFIX_VALID,
	    .prefix_preferred = RA_PREFIX_PREFERRED,
	    .mtu = s->ra.mtu,
	};
}

/* An RA for a Router Solicitation (RFC 4861 §6.2.6): unicast to the soliciting host when it
 * has an address, else to all-nodes. Returns the frame length, 0 for none. */
static size_t
answer_rs(struct dhcp6_server *s, const struct ip6_frame *f, uint8_t *out)
{
	static const uint8_t all_nodes_mac[6] = {0x33, 0x33, 0, 0, 0, 1};
	struct ip6_frame h = {.src = s->link_local};
	struct ra_params p;
	size_t n;

	s->stats.rs_rx++;
	if (!s->ra.enabled)
		return 0;
	if (ra_check_solicit(f) < 0)
		return dhcp6_count_drop(s, DHCP6_DROP_BAD_RS);
	dhcp6_ra_params(s, &p);
	n = ra_build(out + PACKET6_ICMP_OFFSET, DHCP6_TX_BUF - PACKET6_ICMP_OFFSET, &p, s->hwaddr);
	if (n == 0)
		return 0;
	memcpy(h.src_mac, s->hwaddr, 6);
	if (ipv6_is_zero(&f->src)) {
		memcpy(h.dst_mac, all_nodes_mac, 6);
		(void)ipv6_parse("ff02::1", &h.dst);
	} else {
		memcpy(h.dst_mac, f->src_mac, 6);
		h.dst = f->src;
	}
	return packet6_finish_icmp(out, &h, n);
}

/* dhcp6-internal.h; RFC 8415 §18.3.10 and RFC 4861 §6.2.6 decide where replies go. */
size_t
dhcp6_handle_frame(struct dhcp6_server *s, const uint8_t *frame, size_t len, bool csum_not_ready,
    uint64_t now, uint8_t *out, int *ret_type)
{
	struct ip6_frame f, h = {0};
	struct dhcp6_rx_meta meta;
	struct dhcp6_reply reply;
	int r;

	s->now = now;
	*ret_type = 0;
	if (s->standby)
		return dhcp6_count_drop(s, DHCP6_DROP_NOT_SERVING);
	r = packet6_parse(frame, len, csum_not_ready, &f);
	if (r == -EILSEQ)
		return dhcp6_count_drop(s, DHCP6_DROP_BAD_CHECKSUM);
	if (r < 0)
		return dhcp6_count_drop(s, DHCP6_DROP_NOT_FOR_US);
	if (f.next_header == IPPROTO_ICMPV6 && f.payload_len > 0 &&
	    f.payload[0] == ICMP6_ROUTER_SOLICIT_)
		return answer_rs(s, &f, out);
	if (f.next_header != IPPROTO_UDP || f.dport != DHCP6_SERVER_PORT)
		return dhcp6_count_drop(s, DHCP6_DROP_NOT_FOR_US);
	meta = (struct dhcp6_rx_meta){.src_mac = f.src_mac, .multicast = ipv6_is_multicast(&f.dst)};
	r = dhcp6_process(s, f.payload, f.payload_len, &meta, now, out + PACKET6_UDP_OFFSET,
	    DHCP6_MAX_PAYLOAD, &reply);
	if (r <= 0)
		return 0;
	/* RFC 8415 §18.3.10: to the client's (link-local) source, port 546; a RELAY-REPL to the
	 * relay's source, port 547. From the address the request was sent to when unicast. */
	memcpy(h.dst_mac, f.src_mac, 6);
	memcpy(h.src_mac, s->hwaddr, 6);
	h.src = meta.multicast ? s->link_local : f.dst;
	h.dst = f.src;
	h.sport = DHCP6_SERVER_PORT;
	h.dport = reply.relayed ? DHCP6_SERVER_PORT : DHCP6_CLIENT_PORT;
	*ret_type = r;
	return packet6_finish_udp(out, &h, reply.payload_len);
}
