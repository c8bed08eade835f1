/* SPDX-License-Identifier: Apache-2.0 */
/* The server object: configuration, bindings, counters, and the per-batch I/O path. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dhcp/dhcp-internal.h"
#include "dhcp/receive.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/util.h"

const uint64_t dhcp_latency_bounds_usec[DHCP_LATENCY_BUCKETS - 1] = {
    5,
    10,
    25,
    50,
    100,
    250,
    500,
    1000,
    2500,
    10000,
    100000,
};

static const char *const drop_names[_DHCP_DROP_MAX] = {
    [DHCP_DROP_MALFORMED] = "malformed",
    [DHCP_DROP_NOT_REQUEST] = "not_request",
    [DHCP_DROP_NO_TYPE] = "no_type",
    [DHCP_DROP_UNKNOWN_MAC] = "unknown_mac",
    [DHCP_DROP_OTHER_SERVER] = "other_server",
    [DHCP_DROP_BAD_CHECKSUM] = "bad_checksum",
    [DHCP_DROP_NOT_FOR_US] = "not_for_us",
    [DHCP_DROP_UNSUPPORTED] = "unsupported",
    [DHCP_DROP_SEND_FAILED] = "send_failed",
    [DHCP_DROP_NOT_SERVING] = "not_serving",
    [DHCP_DROP_DECLINED] = "declined",
    [DHCP_DROP_WRONG_SUBNET] = "wrong_subnet",
    [DHCP_DROP_REPLY_TOO_BIG] = "reply_too_big",
    [DHCP_DROP_TRUNCATED] = "truncated",
    [DHCP_DROP_OFFER_LIMIT] = "offer_limit",
};

static const char *const msg_names[_DHCP_MSG_MAX] = {
    [DHCP_MSG_DISCOVER] = "discover",
    [DHCP_MSG_OFFER] = "offer",
    [DHCP_MSG_REQUEST] = "request",
    [DHCP_MSG_DECLINE] = "decline",
    [DHCP_MSG_ACK] = "ack",
    [DHCP_MSG_NAK] = "nak",
    [DHCP_MSG_RELEASE] = "release",
    [DHCP_MSG_INFORM] = "inform",
};

const char *
dhcp_drop_reason_name(enum dhcp_drop_reason r)
{
	if ((unsigned)r >= _DHCP_DROP_MAX || drop_names[r] == NULL)
		return "unknown";
	return drop_names[r];
}

const char *
dhcp_message_type_name(int type)
{
	if (type <= 0 || type >= _DHCP_MSG_MAX)
		return "unknown";
	return msg_names[type];
}

int
dhcp_server_new(struct dhcp_server **ret)
{
	struct dhcp_server *s = calloc(1, sizeof(*s));
	int r;

	if (s == NULL)
		return -ENOMEM;
	s->packet_fd = s->udp_fd = -1;
	dhcp_moderation_reset(&s->mod);
	s->drop_log = (struct log_ratelimit)LOG_RATELIMIT_INIT(10 * 1000000, 10);
	s->trunc_log = (struct log_ratelimit)LOG_RATELIMIT_INIT(60 * 1000000, 1);
	s->rx = calloc(DHCP_BATCH, sizeof(*s->rx));
	s->tx = calloc(DHCP_BATCH, sizeof(*s->tx));
	if (s->rx == NULL || s->tx == NULL) {
		dhcp_server_free(s);
		return -ENOMEM;
	}
	r = dhcp_table_new(&s->table);
	if (r < 0) {
		dhcp_server_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

struct dhcp_server *
dhcp_server_free(struct dhcp_server *s)
{
	if (s == NULL)
		return NULL;
	dhcp_server_close(s);
	dhcp_table_free(s->table);
	free(s->optset);
	free(s->rx);
	free(s->tx);
	free(s);
	return NULL;
}

void
dhcp_server_set_callbacks(struct dhcp_server *s, const struct dhcp_callbacks *cb)
{
	if (cb == NULL)
		memset(&s->cb, 0, sizeof(s->cb));
	else
		s->cb = *cb;
}

void
dhcp_server_set_clock(struct dhcp_server *s, uint64_t (*now_usec)(void *userdata), void *userdata)
{
	s->clock = now_usec;
	s->clock_userdata = userdata;
}

int
dhcp_server_set_options(struct dhcp_server *s, const struct dhcp_options *o)
{
	struct dhcp_optset *set;
	int r;

	if (o == NULL)
		return -EINVAL;
	set = malloc(sizeof(*set));
	if (set == NULL)
		return -ENOMEM;
	r = dhcp_optset_compile(set, o);
	if (r < 0) {
		free(set);
		return r;
	}
	/* swapped whole: the next reply sees the new set */
	free(s->optset);
	s->optset = set;
	return 0;
}

bool
dhcp_mac_bindable(const uint8_t mac[6])
{
	return mac_is_nic(mac);
}

int
dhcp_server_set_binding(
    struct dhcp_server *s, const uint8_t mac[6], uint32_t ip, const char *hostname)
{
	if (!dhcp_mac_bindable(mac))
		return -EINVAL;
	return dhcp_table_set(s->table, mac, ip, hostname);
}

int
dhcp_server_remove_binding(struct dhcp_server *s, const uint8_t mac[6])
{
	return dhcp_table_remove(s->table, mac);
}

int
dhcp_server_clear_decline(struct dhcp_server *s, const uint8_t mac[6], uint32_t ip)
{
	struct dhcp_binding *b = dhcp_table_lookup(s->table, mac);

	if (b == NULL || b->ip != ip)
		return -ENOENT;
	b->flags &= (uint8_t)~DHCP_BINDING_DECLINED;
	return 0;
}

int
dhcp_server_get_binding(const struct dhcp_server *s, const uint8_t mac[6], uint32_t *ret_ip)
{
	const struct dhcp_binding *b = dhcp_table_lookup(s->table, mac);

	if (b == NULL)
		return -ENOENT;
	if (ret_ip != NULL)
		*ret_ip = b->ip;
	return 0;
}

size_t
dhcp_server_n_bindings(const struct dhcp_server *s)
{
	return dhcp_table_size(s->table);
}

void
dhcp_server_sync_begin(struct dhcp_server *s)
{
	dhcp_table_sync_begin(s->table);
}

size_t
dhcp_server_sync_end(struct dhcp_server *s)
{
	return dhcp_table_sync_end(s->table);
}

void
dhcp_server_foreach_binding(const struct dhcp_server *s,
    void (*fn)(void *userdata, const uint8_t mac[6], uint32_t ip, const char *hostname),
    void *userdata)
{
	dhcp_table_foreach(s->table, fn, userdata);
}

const struct dhcp_stats *
dhcp_server_stats(const struct dhcp_server *s)
{
	return &s->stats;
}

/* --- sockets ------------------------------------------------------------------------------ */

void
dhcp_server_set_hwaddr(struct dhcp_server *s, const uint8_t hwaddr[6])
{
	memcpy(s->hwaddr, hwaddr, 6);
}

void
dhcp_server_set_standby(struct dhcp_server *s, bool standby)
{
	s->standby = standby;
}

/* The largest DHCP reply for a link of mtu (<= 0: unknown): at most DHCP_MAX_PAYLOAD. */
static size_t
max_payload(int mtu)
{
	if (mtu > 0 && (size_t)mtu - DHCP_IP_UDP_LEN < DHCP_MAX_PAYLOAD)
		return MAX(
		    (size_t)mtu - DHCP_IP_UDP_LEN, (size_t)DHCP_MIN_MAX_SIZE - DHCP_IP_UDP_LEN);
	return DHCP_MAX_PAYLOAD;
}

int
dhcp_server_open(struct dhcp_server *s, int ifindex, const char *ifname, const uint8_t hwaddr[6])
{
	int fd, mtu;

	if (ifindex <= 0 || hwaddr == NULL)
		return -EINVAL;
	dhcp_server_close(s);
	fd = dhcp_socket_open_packet(ifindex, &s->ring);
	if (fd < 0)
		return fd;
	s->packet_fd = fd;
	fd = dhcp_socket_open_udp(ifname);
	if (fd < 0) {
		dhcp_server_close(s);
		return fd;
	}
	s->udp_fd = fd;
	s->ifindex = ifindex;
	memcpy(s->hwaddr, hwaddr, 6);
	/* replies must fit the link: an overlay's 1450 leaves 1422 DHCP bytes */
	mtu = dhcp_socket_mtu(fd, ifname);
	s->max_payload = max_payload(mtu);
	return 0;
}

int
dhcp_server_set_mtu(struct dhcp_server *s, unsigned mtu)
{
	struct dhcp_ring g;

	s->max_payload = max_payload(mtu > INT_MAX ? INT_MAX : (int)mtu);
	if (s->packet_fd < 0 || s->ring.map == NULL)
		return 0; /* not open, or read with recvmmsg (DHCP_RX_BUF a frame, counted when cut)
			   */
	memset(&g, 0, sizeof(g));
	dhcp_ring_geometry(&g, mtu);
	if (g.frame_size == s->ring.frame_size)
		return 0;
	return dhcp_socket_ring_resize(s->packet_fd, &s->ring, mtu);
}

void
dhcp_server_close(struct dhcp_server *s)
{
	dhcp_socket_ring_close(&s->ring);
	if (s->packet_fd >= 0) {
		/* its kernel counters die with it: keep what they hold */
		(void)dhcp_socket_packet_stats(s->packet_fd, &s->stats);
		close(s->packet_fd);
	}
	if (s->udp_fd >= 0)
		close(s->udp_fd);
	s->packet_fd = s->udp_fd = -1;
	s->drop_log = (struct log_ratelimit)LOG_RATELIMIT_INIT(10 * 1000000, 10);
	s->trunc_log = (struct log_ratelimit)LOG_RATELIMIT_INIT(60 * 1000000, 1);
}

int
dhcp_server_fd(const struct dhcp_server *s)
{
	return s->packet_fd;
}

/* --- the per-packet path ------------------------------------------------------------------ */

int
dhcp_count_drop(struct dhcp_server *s, enum dhcp_drop_reason reason)
{
	s->stats.drops[reason]++;
	s->dropped = true;
	s->drop = reason;
	if (log_get_level() >= LOG_LEVEL_DEBUG)
		log_ratelimited(&s->drop_log, s->now, LOG_LEVEL_DEBUG,
		    "dhcp: dropped a datagram: %s", dhcp_drop_reason_name(reason));
	return 0;
}

/*
 * Tells on_decision what became of the request just handled (type: the reply, 0 for none).
 * A few loads (a table lookup for the VM name only when the request was not answered from a
 * binding), no allocation: the caller's log decides whether to format anything.
 */
static void
report(struct dhcp_server *s, int type, const struct dhcp_reply *ret)
{
	const struct dhcp_request *req = &s->req;
	const struct dhcp_binding *b;
	struct dhcp_decision d = {
	    .now = s->now,
	    .mac = req->msg->chaddr,
	    .xid = be32_get(req->msg->xid),
	    .giaddr = be32_get(req->msg->giaddr),
	    .type = req->type,
	    .reply = (uint8_t)type,
	    .dropped = s->dropped,
	    .drop = s->drop,
	    .boot_kind = -1,
	};

	if (type == DHCP_MSG_OFFER || type == DHCP_MSG_ACK) {
		d.ip = be32_get(((const struct dhcp_msg *)ret->payload)->yiaddr);
		d.boot_kind = req->boot.kind;
		if (dhcp_boot_answers(&req->boot))
			d.boot_file = s->optset->o.boot.files[req->boot.kind];
	}
	/* option 50 is only read from options that parsed (type != 0) */
	if (req->type == 0 ||
	    dhcp_option_get_addr(&req->opts, DHCP_OPT_REQUESTED_IP, &d.requested) < 0)
		d.requested = be32_get(req->msg->ciaddr);
	b = s->binding_looked ? s->binding : dhcp_table_lookup(s->table, d.mac);
	if (b != NULL)
		d.hostname = dhcp_table_hostname(s->table, b);
	s->cb.on_decision(s->cb.userdata, &d);
}

/*
 * dhcp_process, then on_decision, then on_ack for a lease granted or renewed (an INFORM's ACK
 * is neither). The request's client identifier is forgotten after it: it borrows the received
 * datagram, and dhcp_server_client_id() is only for the callbacks called here.
 */
static int
process(struct dhcp_server *s, const uint8_t *data, size_t len, const struct dhcp_rx_meta *meta,
    uint64_t now, uint8_t *txbuf, struct dhcp_reply *ret)
{
	int type;

	s->dropped = false;
	s->binding_looked = false;
	type = dhcp_process(s, data, len, meta, now, txbuf, ret);
	/* before on_ack, which may change the table (s->binding must still be valid) */
	if (s->cb.on_decision != NULL && s->req.msg != NULL)
		report(s, type, ret);
	if (type == DHCP_MSG_ACK && s->cb.on_ack != NULL && s->req.type == DHCP_MSG_REQUEST)
		s->cb.on_ack(s->cb.userdata, s->req.msg->chaddr,
		    be32_get(((const struct dhcp_msg *)ret->payload)->yiaddr));
	s->req.msg = NULL;
	s->req.client_id = NULL;
	s->req.client_id_len = 0;
	return type;
}

const uint8_t *
dhcp_server_client_id(const struct dhcp_server *s, size_t *ret_len)
{
	*ret_len = s->req.client_id != NULL ? s->req.client_id_len : 0;
	return s->req.client_id;
}

/*
 * A frame cut short by the receive buffer (the link's MTU grew past what it was sized for, or
 * no ring): counted as truncated and said at most once a minute, never dropped silently.
 */
static int
truncated(struct dhcp_server *s, size_t len, size_t wire_len, uint64_t now)
{
	s->now = now;
	log_ratelimited(&s->trunc_log, now, LOG_LEVEL_WARN,
	    "dhcp: dropped a %zu-byte frame: the receive buffer holds %zu bytes "
	    "(vmdhcp_agent_drops_total{reason=\"truncated\"})",
	    wire_len, len);
	return dhcp_count_drop(s, DHCP_DROP_TRUNCATED);
}

uint32_t
dhcp_server_requested_ip(const struct dhcp_server *s)
{
	const struct dhcp_request *req = &s->req;
	uint32_t ip;

	if (req->msg == NULL || req->type == 0)
		return 0;
	if (dhcp_option_get_addr(&req->opts, DHCP_OPT_REQUESTED_IP, &ip) == 0)
		return ip;
	return be32_get(req->msg->ciaddr);
}

static int
handle_frame(struct dhcp_server *s, const uint8_t *frame, size_t len, bool csum_not_ready,
    uint64_t now, uint8_t *txbuf, struct dhcp_reply *ret)
{
	enum dhcp_drop_reason reason;
	struct dhcp_rx_meta meta;
	const uint8_t *payload;
	size_t plen;

	memset(ret, 0, sizeof(*ret));
	s->now = now;
	if (dhcp_frame_verify(frame, len, csum_not_ready, &meta, &payload, &plen, &reason) < 0)
		return dhcp_count_drop(s, reason);
	return process(s, payload, plen, &meta, now, txbuf, ret);
}

int
dhcp_handle_message(
    struct dhcp_server *s, const uint8_t *data, size_t len, uint64_t now, struct dhcp_reply *ret)
{
	return process(s, data, len, NULL, now, s->tx[0].buf, ret);
}

int
dhcp_handle_frame(struct dhcp_server *s, const uint8_t *frame, size_t len, bool csum_not_ready,
    uint64_t now, struct dhcp_reply *ret)
{
	return handle_frame(s, frame, len, csum_not_ready, now, s->tx[0].buf, ret);
}

static void
observe_latency(struct dhcp_stats *st, uint64_t usec)
{
	size_t b = 0;

	while (b < DHCP_LATENCY_BUCKETS - 1 && usec > dhcp_latency_bounds_usec[b])
		b++;
	st->latency[b]++;
	st->latency_sum_usec += usec;
}

static void
flush(struct dhcp_server *s)
{
	struct dhcp_reply *replies[DHCP_BATCH];
	bool sent[DHCP_BATCH];
	uint64_t t;

	if (s->n_tx == 0)
		return;
	for (size_t i = 0; i < s->n_tx; i++)
		replies[i] = &s->tx[i].reply;
	dhcp_socket_send(s->packet_fd, s->ifindex, replies, s->n_tx, sent);
	t = s->clock != NULL ? s->clock(s->clock_userdata) : 0;
	for (size_t i = 0; i < s->n_tx; i++) {
		if (!sent[i]) {
			dhcp_count_drop(s, DHCP_DROP_SEND_FAILED);
			continue;
		}
		s->stats.tx[s->tx[i].reply.type]++;
		observe_latency(&s->stats, t > s->tx[i].rx_time ? t - s->tx[i].rx_time : 0);
	}
	s->n_tx = 0;
}

struct ring_ctx {
	struct dhcp_server *s;
	uint64_t now;
	int64_t rt_now; /* CLOCK_REALTIME at now: the frames' kernel timestamps are on it */
};

static void
ring_frame(void *userdata, const uint8_t *frame, size_t len, size_t wire_len, bool csum_not_ready)
{
	struct ring_ctx *c = userdata;
	struct dhcp_server *s = c->s;
	struct dhcp_tx_slot *slot = &s->tx[s->n_tx];

	if (wire_len > len) {
		truncated(s, len, wire_len, c->now);
		return;
	}
	if (handle_frame(s, frame, len, csum_not_ready, c->now, slot->buf, &slot->reply) > 0) {
		slot->rx_time = dhcp_ring_frame_time(&s->ring, c->now, c->rt_now);
		if (++s->n_tx == DHCP_BATCH)
			flush(s);
	}
}

/* One pass over the receive ring: its ready frames; replies leave in batches of DHCP_BATCH. */
static int
on_ring(struct dhcp_server *s, uint64_t now)
{
	struct ring_ctx c = {.s = s, .now = now, .rt_now = clock_realtime_usec()};
	int n;

	s->n_tx = 0;
	n = dhcp_socket_ring_next(&s->ring, ring_frame, &c);
	flush(s);
	return n < 0 ? 0 : n;
}

/* One pass with recvmmsg (no ring): one batch of up to DHCP_BATCH datagrams. */
static int
on_recv(struct dhcp_server *s, uint64_t now)
{
	struct dhcp_rx_frame rx[DHCP_BATCH];
	int n;

	for (size_t i = 0; i < DHCP_BATCH; i++)
		rx[i] = (struct dhcp_rx_frame){.frame = s->rx[i], .cap = DHCP_RX_BUF};
	do
		n = dhcp_socket_recv_frames(s->packet_fd, rx, DHCP_BATCH);
	while (n == -EINTR);
	if (n == -EAGAIN || n == -EWOULDBLOCK)
		return 0;
	if (n < 0)
		return n;
	s->n_tx = 0;
	for (int i = 0; i < n; i++) {
		struct dhcp_tx_slot *slot = &s->tx[s->n_tx];

		if (rx[i].len == 0)
			continue;
		if (rx[i].truncated) {
			truncated(s, DHCP_RX_BUF, rx[i].len, now);
			continue;
		}
		if (handle_frame(s, rx[i].frame, rx[i].len, rx[i].csum_not_ready, now, slot->buf,
			&slot->reply) > 0) {
			slot->rx_time = now;
			s->n_tx++;
		}
	}
	flush(s);
	return n;
}

/* One pass: the receive ring's ready frames, or one recvmmsg batch without a ring. */
static int
on_pass(void *userdata, uint64_t now)
{
	struct dhcp_server *s = userdata;

	return s->ring.map != NULL ? on_ring(s, now) : on_recv(s, now);
}

int
dhcp_server_on_readable(struct dhcp_server *s, int fd, uint64_t now, uint32_t *ret_wait_usec)
{
	const struct dhcp_receive rc = {.mod = &s->mod,
	    .ring = &s->ring,
	    .batch = DHCP_BATCH,
	    .pass = on_pass,
	    .userdata = s,
	    .clock = s->clock,
	    .clock_userdata = s->clock_userdata};
	int total;

	if (ret_wait_usec != NULL)
		*ret_wait_usec = 0;
	if (s->packet_fd < 0 || (fd >= 0 && fd != s->packet_fd))
		return -EBADF;
	/* fd -1 after a wait asked for: the caller waited */
	total = dhcp_receive_call(&rc, fd < 0, now, ret_wait_usec);
	s->stats.rx_wakeups = s->mod.st.wakeups;
	s->stats.rx_immediate = s->mod.st.immediate;
	s->stats.rx_yields = s->mod.st.yields;
	s->stats.rx_waits = s->mod.st.waits;
	s->stats.rx_wait_usec = s->mod.st.wait_usec;
	return total;
}

int
dhcp_server_read_kernel_stats(struct dhcp_server *s)
{
	return dhcp_socket_packet_stats(s->packet_fd, &s->stats);
}
