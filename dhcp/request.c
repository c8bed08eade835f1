/* SPDX-License-Identifier: Apache-2.0 */
/* Datagram -> struct dhcp_request -> process_{discover,request,inform,decline,release}. */
#include <errno.h>
#include <string.h>

#include "dhcp/dhcp-internal.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "lib/util.h"

static int
bad(enum dhcp_drop_reason *ret_reason, enum dhcp_drop_reason reason)
{
	*ret_reason = reason;
	return -EBADMSG;
}

int
dhcp_request_parse(
    struct dhcp_request *req, const uint8_t *data, size_t len, enum dhcp_drop_reason *ret_reason)
{
	const struct dhcp_msg *m = (const struct dhcp_msg *)data;
	const uint8_t *v;
	size_t vlen = 0;

	if (len < DHCP_FIXED_LEN + 4)
		return bad(ret_reason, DHCP_DROP_MALFORMED);
	if (m->op != BOOTREQUEST)
		return bad(ret_reason, DHCP_DROP_NOT_REQUEST);
	if (m->hlen > sizeof(m->chaddr))
		return bad(ret_reason, DHCP_DROP_MALFORMED);
	/* Bindings are keyed by an Ethernet chaddr. */
	if (m->htype != DHCP_HTYPE_ETHER || m->hlen != 6)
		return bad(ret_reason, DHCP_DROP_NOT_REQUEST);
	/* from here the drop has a MAC: on_decision reports it */
	req->msg = m;
	req->len = len;
	req->type = 0;
	if (dhcp_option_parse(&req->opts, data, len) < 0)
		return bad(ret_reason, DHCP_DROP_MALFORMED);
	v = dhcp_option_get(&req->opts, DHCP_OPT_MESSAGE_TYPE, &vlen);
	if (v == NULL || vlen != 1 || v[0] < DHCP_MSG_DISCOVER || v[0] > DHCP_MSG_INFORM)
		return bad(ret_reason, DHCP_DROP_NO_TYPE);
	req->type = v[0];
	req->ciaddr = be32_get(m->ciaddr);
	req->giaddr = be32_get(m->giaddr);
	req->flags = be16_get(m->flags);
	req->max_size = dhcp_option_max_size(&req->opts);
	req->prl = dhcp_option_get(&req->opts, DHCP_OPT_PRL, &req->prl_len);
	if (req->prl == NULL)
		req->prl_len = 0;
	req->client_id = dhcp_option_get(&req->opts, DHCP_OPT_CLIENT_ID, &req->client_id_len);
	if (req->client_id == NULL)
		req->client_id_len = 0;
	req->relay_info = dhcp_option_get(&req->opts, DHCP_OPT_RELAY_AGENT, &req->relay_info_len);
	if (req->relay_info == NULL)
		req->relay_info_len = 0;
	return 0;
}

static int
drop(struct dhcp_server *s, enum dhcp_drop_reason reason)
{
	return dhcp_count_drop(s, reason);
}

/* Option 54 present and naming another server? (-1: malformed) */
static int
other_server(const struct dhcp_server *s, const struct dhcp_request *req)
{
	uint32_t id;
	int r = dhcp_option_get_addr(&req->opts, DHCP_OPT_SERVER_ID, &id);

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return -1;
	return id != s->optset->o.server_ip;
}

/*
 * The binding of chaddr; for an unknown MAC asks on_unknown (dynamic mode) and inserts
 * what it returns. NULL: no binding (the caller counts DHCP_DROP_UNKNOWN_MAC or answers).
 */
static const struct dhcp_binding *
find_binding(struct dhcp_server *s, const struct dhcp_request *req, bool ask, int *ret_err)
{
	const uint8_t *mac = req->msg->chaddr;
	const struct dhcp_binding *b = dhcp_table_lookup(s->table, mac);
	uint32_t ip = 0;
	int r;

	*ret_err = 0;
	if (b != NULL)
		return b;
	/* a group or all-zero chaddr is no NIC's: never handed an address */
	if (!ask || s->cb.on_unknown == NULL || !dhcp_mac_bindable(mac))
		return NULL;
	if ((r = s->cb.on_unknown(s->cb.userdata, mac, &ip)) < 0 || ip == 0) {
		*ret_err = r;
		return NULL;
	}
	/* the callback may have bound it itself (perhaps with a hostname): keep that */
	b = dhcp_table_lookup(s->table, mac);
	if (b != NULL)
		return b;
	if (dhcp_table_set(s->table, mac, ip, NULL) < 0)
		return NULL;
	return dhcp_table_lookup(s->table, mac);
}

/*
 * find_binding, remembered for on_decision (the VM name). *ret_err (may be NULL): on_unknown's
 * error when it was asked and gave nothing.
 */
static const struct dhcp_binding *
binding_for(struct dhcp_server *s, const struct dhcp_request *req, bool ask, int *ret_err)
{
	int err;

	s->binding = find_binding(s, req, ask, ret_err != NULL ? ret_err : &err);
	s->binding_looked = true;
	return s->binding;
}

static int
reply(struct dhcp_server *s, const struct dhcp_request *req, int type, const struct dhcp_binding *b,
    uint32_t yiaddr, uint8_t *txbuf, struct dhcp_reply *ret)
{
	const char *hostname = b != NULL ? dhcp_table_hostname(s->table, b) : NULL;
	int n;

	n = dhcp_reply_build(s->optset, req, type, yiaddr, hostname, txbuf + DHCP_FRAME_HEADROOM,
	    s->max_payload != 0 ? s->max_payload : DHCP_TX_BUF - DHCP_FRAME_HEADROOM);
	if (n < 0) /* -EMSGSIZE: what must be echoed does not fit (RFC 3046 §2.2, RFC 6842) */
		return drop(s, n == -EMSGSIZE ? DHCP_DROP_REPLY_TOO_BIG : DHCP_DROP_SEND_FAILED);
	if (req->boot.kind >= 0 && type != DHCP_MSG_NAK)
		s->stats.boot[req->boot.kind]++;
	ret->type = type;
	ret->payload = txbuf + DHCP_FRAME_HEADROOM;
	ret->payload_len = (size_t)n;
	dhcp_reply_frame(s, req, ret);
	return type;
}

/*
 * RFC 2131 §4.3.1: "the address [...] MUST be valid on the network of 'giaddr'". Our pool
 * is one subnet (serverIP/prefix): a relay on any other network gets nothing from it.
 */
static bool
wrong_subnet(const struct dhcp_server *s, const struct dhcp_request *req)
{
	uint32_t mask = ipv4_prefix_mask(s->optset->o.prefix);

	return req->giaddr != 0 && (req->giaddr & mask) != (s->optset->o.server_ip & mask);
}

/*
 * A DISCOVER from a MAC without a binding, when on_offer is set: the address it gives is
 * offered and not bound (held by the callback until a REQUEST or its expiry), or bound when it
 * says so. Returns the reply type or a counted drop.
 */
static int
offer_unknown(
    struct dhcp_server *s, const struct dhcp_request *req, uint8_t *txbuf, struct dhcp_reply *ret)
{
	const uint8_t *mac = req->msg->chaddr;
	uint32_t ip = 0;
	int r;

	s->binding = NULL;
	s->binding_looked = true;
	/* a group or all-zero chaddr is no NIC's: never handed an address */
	if (!dhcp_mac_bindable(mac))
		return drop(s, DHCP_DROP_UNKNOWN_MAC);
	r = s->cb.on_offer(s->cb.userdata, mac, &ip);
	if (r == -EBUSY)
		return drop(s, DHCP_DROP_OFFER_LIMIT);
	if (r < 0 || ip == 0)
		return drop(s, DHCP_DROP_UNKNOWN_MAC);
	if (r > 0) {
		/* a lease: bound as on_unknown's (unless the callback bound it itself) */
		const struct dhcp_binding *b = dhcp_table_lookup(s->table, mac);
		if (b == NULL && dhcp_table_set(s->table, mac, ip, NULL) == 0)
			b = dhcp_table_lookup(s->table, mac);
		if ((s->binding = b) == NULL)
			return drop(s, DHCP_DROP_UNKNOWN_MAC);
		if (b->flags & DHCP_BINDING_DECLINED)
			return drop(s, DHCP_DROP_DECLINED);
		return reply(s, req, DHCP_MSG_OFFER, b, b->ip, txbuf, ret);
	}
	return reply(s, req, DHCP_MSG_OFFER, NULL, ip, txbuf, ret);
}

static int
process_discover(
    struct dhcp_server *s, const struct dhcp_request *req, uint8_t *txbuf, struct dhcp_reply *ret)
{
	const struct dhcp_binding *b;

	if (wrong_subnet(s, req))
		return drop(s, DHCP_DROP_WRONG_SUBNET);
	if (s->cb.on_offer != NULL && dhcp_table_lookup(s->table, req->msg->chaddr) == NULL)
		return offer_unknown(s, req, txbuf, ret);
	b = binding_for(s, req, true, NULL);
	if (b == NULL)
		return drop(s, DHCP_DROP_UNKNOWN_MAC);
	/* The client declined this address: never offer it again until the binding changes. */
	if (b->flags & DHCP_BINDING_DECLINED)
		return drop(s, DHCP_DROP_DECLINED);
	return reply(s, req, DHCP_MSG_OFFER, b, b->ip, txbuf, ret);
}

/*
 * A REQUEST from a MAC we hold no binding for (its binding was removed: VMNetCfg deleted, NIC
 * moved). We are the only server of the pool's network, so a client holding one of our
 * addresses must learn at once that it lost it:
 *  - SELECTING (option 54 names us): we offered, the binding went away since -> DHCPNAK;
 *  - RENEWING/REBINDING (ciaddr, no option 50) with ciaddr in our subnet -> DHCPNAK ("client's
 *    lease has expired", RFC 2131 §3.1 / table 3);
 *  - INIT-REBOOT (option 50, no ciaddr): RFC 2131 §4.3.2 "If the DHCP server has no record of
 *    this client, then it MUST remain silent" -> silence.
 */
static bool
nak_unknown(const struct dhcp_server *s, const struct dhcp_request *req)
{
	uint32_t id, mask = ipv4_prefix_mask(s->optset->o.prefix);
	uint32_t server = s->optset->o.server_ip;

	if (dhcp_option_get_addr(&req->opts, DHCP_OPT_SERVER_ID, &id) == 0)
		return id == server;
	if (dhcp_option_get_addr(&req->opts, DHCP_OPT_REQUESTED_IP, &id) != -ENOENT)
		return false;
	return req->ciaddr != 0 && (req->ciaddr & mask) == (server & mask);
}

/*
 * RFC 2131 §4.3.2. SELECTING: option 54 present (ours, or silence) and option 50;
 * INIT-REBOOT: option 50, no ciaddr; RENEWING/REBINDING: ciaddr. The requested address
 * must be the MAC's binding, else DHCPNAK.
 */
static int
process_request(
    struct dhcp_server *s, const struct dhcp_request *req, uint8_t *txbuf, struct dhcp_reply *ret)
{
	const struct dhcp_binding *b;
	uint32_t requested = 0;
	int r;

	r = other_server(s, req);
	if (r < 0)
		return drop(s, DHCP_DROP_MALFORMED);
	if (r > 0)
		return drop(s, DHCP_DROP_OTHER_SERVER);
	if (wrong_subnet(s, req))
		return drop(s, DHCP_DROP_WRONG_SUBNET);
	r = dhcp_option_get_addr(&req->opts, DHCP_OPT_REQUESTED_IP, &requested);
	if (r == -EBADMSG)
		return drop(s, DHCP_DROP_MALFORMED);
	if (r == -ENOENT)
		requested = req->ciaddr;
	b = binding_for(s, req, true, &r);
	if (b == NULL) {
		/* -EAGAIN: the binding could not be recorded now; the client's retry may be */
		if (r == -EAGAIN || !nak_unknown(s, req))
			return drop(s, DHCP_DROP_UNKNOWN_MAC);
		return reply(s, req, DHCP_MSG_NAK, NULL, 0, txbuf, ret);
	}
	if (requested != b->ip)
		return reply(s, req, DHCP_MSG_NAK, NULL, 0, txbuf, ret);
	if (b->flags & DHCP_BINDING_DECLINED)
		return drop(s, DHCP_DROP_DECLINED);
	return reply(s, req, DHCP_MSG_ACK, b, b->ip, txbuf, ret);
}

/* RFC 2131 §4.3.5: configuration only, no yiaddr, no lease time. */
static int
process_inform(
    struct dhcp_server *s, const struct dhcp_request *req, uint8_t *txbuf, struct dhcp_reply *ret)
{
	const struct dhcp_binding *b = binding_for(s, req, false, NULL);

	if (b == NULL)
		return drop(s, DHCP_DROP_UNKNOWN_MAC);
	return reply(s, req, DHCP_MSG_ACK, b, 0, txbuf, ret);
}

/* RFC 2131 §4.3.3: the client found the address in use. */
static int
process_decline(
    struct dhcp_server *s, const struct dhcp_request *req, uint8_t *txbuf, struct dhcp_reply *ret)
{
	struct dhcp_binding *b;
	uint32_t ip = 0;
	int r;

	r = other_server(s, req);
	if (r < 0)
		return drop(s, DHCP_DROP_MALFORMED);
	if (r > 0)
		return drop(s, DHCP_DROP_OTHER_SERVER);
	if (dhcp_option_get_addr(&req->opts, DHCP_OPT_REQUESTED_IP, &ip) < 0)
		return drop(s, DHCP_DROP_MALFORMED);
	s->stats.declines++;
	b = dhcp_table_lookup(s->table, req->msg->chaddr);
	if (b == NULL)
		return drop(s, DHCP_DROP_UNKNOWN_MAC);
	if (b->ip == ip)
		b->flags |= DHCP_BINDING_DECLINED;
	if (s->cb.on_decline != NULL)
		s->cb.on_decline(s->cb.userdata, req->msg->chaddr, ip);
	return 0;
}

/* RFC 2131 §4.3.4. The binding belongs to the control plane: count and report only. */
static int
process_release(
    struct dhcp_server *s, const struct dhcp_request *req, uint8_t *txbuf, struct dhcp_reply *ret)
{
	if (other_server(s, req) > 0)
		return drop(s, DHCP_DROP_OTHER_SERVER);
	if (s->cb.on_release != NULL)
		s->cb.on_release(s->cb.userdata, req->msg->chaddr, req->ciaddr);
	return 0;
}

static int
process_unsupported(
    struct dhcp_server *s, const struct dhcp_request *req, uint8_t *txbuf, struct dhcp_reply *ret)
{
	return drop(s, DHCP_DROP_UNSUPPORTED);
}

typedef int (*process_fn)(
    struct dhcp_server *s, const struct dhcp_request *req, uint8_t *txbuf, struct dhcp_reply *ret);

static const process_fn processors[_DHCP_MSG_MAX] = {
    [DHCP_MSG_DISCOVER] = process_discover,
    [DHCP_MSG_OFFER] = process_unsupported,
    [DHCP_MSG_REQUEST] = process_request,
    [DHCP_MSG_DECLINE] = process_decline,
    [DHCP_MSG_ACK] = process_unsupported,
    [DHCP_MSG_NAK] = process_unsupported,
    [DHCP_MSG_RELEASE] = process_release,
    [DHCP_MSG_INFORM] = process_inform,
};

int
dhcp_process(struct dhcp_server *s, const uint8_t *data, size_t len,
    const struct dhcp_rx_meta *meta, uint64_t now, uint8_t *txbuf, struct dhcp_reply *ret)
{
	struct dhcp_request *req = &s->req;
	enum dhcp_drop_reason reason;
	int r;

	memset(ret, 0, sizeof(*ret));
	s->now = now;
	req->msg = NULL;
	req->boot.kind = -1;
	if (s->optset == NULL || s->standby)
		return drop(s, DHCP_DROP_NOT_SERVING);
	r = dhcp_request_parse(req, data, len, &reason);
	if (r < 0)
		return drop(s, reason);
	if (dhcp_boot_classify(&s->optset->boot, &req->opts, &req->boot))
		s->stats.boot_malformed++;
	req->meta = meta;
	s->stats.rx[req->type]++;
	return processors[req->type](s, req, txbuf, ret);
}
