/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DHCPv6 message rules (RFC 8415 §16, §18.3): which requests are answered, with what.
 *
 * Decisions (documented in dhcp/dhcp6.h and README):
 * - Clients are matched by MAC (frame source, or relayed RFC 6939 option 79), never by DUID,
 *   unless set_duid_mac is on (dhcp/dhcp6.h says why it is off by default): then a MAC
 *   without a binding falls back to the Ethernet address of a DUID-LLT/DUID-LL.
 * - One address per client: the MAC's binding goes into one IA_NA (the one that names it, else
 *   the first); every other IA_NA gets NoAddrsAvail, IA_TA NoAddrsAvail, IA_PD NoPrefixAvail.
 * - A MAC without a binding (or whose address it declined) that asks for an IA_NA gets an
 *   ADVERTISE/REPLY with NoAddrsAvail inside the IA, as §18.3.1/§18.3.2 say and Kea does, not
 *   silence: clients then keep soliciting and take the address as soon as the binding exists.
 *   Counted in stats.no_addrs_avail. One without any IA is dropped (unknown_mac).
 * - Options 23 and 24 only when the ORO asks (§21.7: servers send what is requested), as Kea.
 * - Preference 255 in an ADVERTISE that carries an address (§18.2.1: the client requests at
 *   once instead of waiting a first retransmission for other servers): the pool's agent is
 *   the only server with this MAC's binding.
 * - We never send Server Unicast (option 12): a REQUEST, RENEW, RELEASE or DECLINE a client
 *   sent to a unicast address gets UseMulticast (§18.4), counted as drop use_multicast.
 */
#include <errno.h>
#include <string.h>

#include "dhcp/dhcp6-internal.h"
#include "lib/buf.h"
#include "lib/ip6.h"

static int
bad(enum dhcp6_drop_reason *ret_reason, enum dhcp6_drop_reason reason)
{
	*ret_reason = reason;
	return -EBADMSG;
}

/* Unwraps RELAY-FORW layers (§9.1): outermost first, at most HOP_COUNT_LIMIT of them. */
static int
unwrap_relays(struct dhcp6_request *req, const uint8_t **data, size_t *len, const uint8_t **ret_ll,
    size_t *ret_ll_len, enum dhcp6_drop_reason *ret_reason)
{
	while (*len >= 1 && (*data)[0] == DHCP6_MSG_RELAY_FORW) {
		struct dhcp6_relay *rl;

		if (*len < DHCP6_RELAY_HDR_LEN)
			return bad(ret_reason, DHCP6_DROP_MALFORMED);
		if (req->n_relays == DHCP6_HOP_COUNT_LIMIT)
			return bad(ret_reason, DHCP6_DROP_RELAY_DEPTH);
		if (dhcp6_options_parse(
			*data + DHCP6_RELAY_HDR_LEN, *len - DHCP6_RELAY_HDR_LEN, &req->opts) < 0 ||
		    req->opts.relay_msg.p == NULL)
			return bad(ret_reason, DHCP6_DROP_MALFORMED);
		rl = &req->relays[req->n_relays++];
		rl->hdr = (const struct dhcp6_relay_hdr *)*data;
		rl->interface_id = req->opts.interface_id;
		if (req->opts.linklayer.p != NULL) { /* the innermost relay's (the client's link) */
			*ret_ll = req->opts.linklayer.p;
			*ret_ll_len = req->opts.linklayer.len;
		}
		*data = req->opts.relay_msg.p;
		*len = req->opts.relay_msg.len;
	}
	return 0;
}

int
dhcp6_request_parse(struct dhcp6_request *req, const uint8_t *data, size_t len,
    const struct dhcp6_rx_meta *meta, enum dhcp6_drop_reason *ret_reason)
{
	const uint8_t *ll = NULL;
	size_t ll_len = 0;
	int r;

	req->type = 0;
	req->xid = 0;
	req->mac = NULL;
	req->n_relays = 0;
	req->multicast = meta->multicast;
	if ((r = unwrap_relays(req, &data, &len, &ll, &ll_len, ret_reason)) < 0)
		return r;
	if (req->n_relays == 0)
		req->mac = meta->src_mac;
	else if (ll != NULL && ll_len == 8 && be16_get(ll) == DHCP6_LINKLAYER_ETHERNET)
		req->mac = ll + 2; /* RFC 6939 §4: link-layer type, then the address */
	if (len < DHCP6_HDR_LEN)
		return bad(ret_reason, DHCP6_DROP_MALFORMED);
	if (data[0] >= 1 && data[0] < _DHCP6_MSG_MAX)
		req->type = data[0];
	req->xid = (uint32_t)data[1] << 16 | (uint32_t)data[2] << 8 | data[3];
	if (req->type == 0 || req->type == DHCP6_MSG_ADVERTISE || req->type == DHCP6_MSG_REPLY ||
	    req->type == DHCP6_MSG_RECONFIGURE || req->type == DHCP6_MSG_RELAY_REPL)
		return bad(ret_reason, DHCP6_DROP_UNSUPPORTED); /* §16: servers discard these */
	if (req->mac == NULL)
		return bad(ret_reason, DHCP6_DROP_NO_MAC);
	if (dhcp6_options_parse(data + DHCP6_HDR_LEN, len - DHCP6_HDR_LEN, &req->opts) < 0)
		return bad(ret_reason, DHCP6_DROP_MALFORMED);
	return 0;
}

/* --- the rules ------------------------------------------------------------------------------ */

struct ctx {
	struct dhcp6_server *s;
	const struct dhcp6_optset *set;
	const struct dhcp6_request *req;
	struct dhcp6_binding *b; /* the MAC's binding, NULL when none or declined */
	struct dhcp6_writer w;
};

/* Counts a drop; -1 (the request is not answered). */
static int
refuse(struct ctx *c, enum dhcp6_drop_reason reason)
{
	dhcp6_count_drop(c->s, reason);
	return -1;
}

static bool
server_id_ours(const struct ctx *c)
{
	const struct dhcp6_view *v = &c->req->opts.server_id;

	return v->len == c->set->o.duid_len && memcmp(v->p, c->set->o.duid, v->len) == 0;
}

/*
 * §16: which identifiers each message must (not) carry. Returns 0 to go on, or a drop.
 * required: the Server Identifier must be there and be ours; forbidden: must be absent;
 * neither (INFORMATION-REQUEST): when there, ours.
 */
static int
check_ids(struct ctx *c)
{
	const struct dhcp6_opts *o = &c->req->opts;
	int t = c->req->type;
	bool required = t == DHCP6_MSG_REQUEST || t == DHCP6_MSG_RENEW || t == DHCP6_MSG_DECLINE ||
			t == DHCP6_MSG_RELEASE;
	bool forbidden = t == DHCP6_MSG_SOLICIT || t == DHCP6_MSG_CONFIRM || t == DHCP6_MSG_REBIND;

	if (t == DHCP6_MSG_INFORMATION_REQUEST) {
		if (o->n_ia > 0) /* §16.12 */
			return refuse(c, DHCP6_DROP_MALFORMED);
	} else if (o->client_id.p == NULL) {
		return refuse(c, DHCP6_DROP_NO_CLIENT_ID);
	}
	if (o->server_id.p == NULL)
		return required ? refuse(c, DHCP6_DROP_MALFORMED) : 0;
	if (forbidden)
		return refuse(c, DHCP6_DROP_MALFORMED);
	if (!server_id_ours(c))
		return refuse(c, DHCP6_DROP_OTHER_SERVER);
	return 0;
}

static bool
ia_names(const struct dhcp6_ia *ia, const struct in6_addr *a)
{
	for (size_t i = 0; i < ia->n_addrs; i++)
		if (memcmp(&ia->addrs[i], a, sizeof(*a)) == 0)
			return true;
	return false;
}

/* The IA_NA that holds the binding: the one naming its address, else the first IA_NA. */
static int
pick_ia(const struct ctx *c)
{
	const struct dhcp6_opts *o = &c->req->opts;
	int first = -1;

	if (c->b == NULL)
		return -1;
	for (int i = 0; i < o->n_ia; i++) {
		if (o->ia[i].type != DHCP6_OPT_IA_NA)
			continue;
		if (ia_names(&o->ia[i], &c->b->addr))
			return i;
		if (first < 0)
			first = i;
	}
	return first;
}

static void
ia_status(struct ctx *c, const struct dhcp6_ia *ia, uint16_t status)
{
	dhcp6_reply_ia_status(&c->w, ia, status);
	if (status == DHCP6_STATUS_NO_ADDRS_AVAIL || status == DHCP6_STATUS_NO_PREFIX_AVAIL)
		c->s->stats.no_addrs_avail++;
	else if (status == DHCP6_STATUS_NO_BINDING)
		c->s->stats.no_binding++;
	if (c->s->status == 0)
		c->s->status = status;
}

static void
give(struct ctx *c, const struct dhcp6_ia *ia)
{
	bool extend = c->req->type == DHCP6_MSG_RENEW || c->req->type == DHCP6_MSG_REBIND;

	dhcp6_reply_ia_addr(&c->w, c->set, ia, &c->b->addr, extend);
	c->s->given = c->b->addr;
}

/* SOLICIT and REQUEST (§18.3.1, §18.3.2): the binding into one IA_NA, the rest refused. */
static int
assign(struct ctx *c, int type, bool rapid)
{
	const struct dhcp6_opts *o = &c->req->opts;
	int pick = pick_ia(c);

	if (c->b == NULL && o->n_ia == 0 && dhcp6_table_lookup(c->s->table, c->req->mac) == NULL)
		return dhcp6_count_drop(c->s, DHCP6_DROP_UNKNOWN_MAC);
	dhcp6_reply_start(&c->w, c->set, c->req, type);
	if (rapid)
		dhcp6_put_option(&c->w, DHCP6_OPT_RAPID_COMMIT, NULL, 0);
	if (type == DHCP6_MSG_ADVERTISE && pick >= 0) {
		static const uint8_t pref = 255;

		dhcp6_put_option(&c->w, DHCP6_OPT_PREFERENCE, &pref, 1);
	}
	for (int i = 0; i < o->n_ia; i++) {
		if (i == pick)
			give(c, &o->ia[i]);
		else if (o->ia[i].type == DHCP6_OPT_IA_PD)
			ia_status(c, &o->ia[i], DHCP6_STATUS_NO_PREFIX_AVAIL);
		else
			ia_status(c, &o->ia[i], DHCP6_STATUS_NO_ADDRS_AVAIL);
	}
	dhcp6_reply_config(&c->w, c->set, c->req);
	return type;
}

static int
process_solicit(struct ctx *c)
{
	/* §18.3.1: Rapid Commit only when the client asks and the server is configured for it */
	bool rapid = c->req->opts.rapid_commit && c->set->o.rapid_commit;

	return assign(c, rapid ? DHCP6_MSG_REPLY : DHCP6_MSG_ADVERTISE, rapid);
}

static int
process_request(struct ctx *c)
{
	return assign(c, DHCP6_MSG_REPLY, false);
}

/*
 * RENEW and REBIND (§18.3.4, §18.3.5): the binding's IA_NA gets its address with fresh
 * lifetimes (any other address it names with lifetimes 0); an IA we hold nothing for gets
 * NoBinding, but in a REBIND its addresses come back with lifetimes 0 (§18.3.5: not ours to
 * extend, so the client stops using them).
 */
static int
process_extend(struct ctx *c)
{
	const struct dhcp6_opts *o = &c->req->opts;
	int pick = pick_ia(c);

	dhcp6_reply_start(&c->w, c->set, c->req, DHCP6_MSG_REPLY);
	for (int i = 0; i < o->n_ia; i++) {
		const struct dhcp6_ia *ia = &o->ia[i];

		if (i == pick)
			give(c, ia);
		else if (c->req->type == DHCP6_MSG_REBIND && ia->n_addrs > 0 &&
			 ia->type != DHCP6_OPT_IA_PD)
			dhcp6_reply_ia_addr(&c->w, c->set, ia, NULL, true);
		else
			ia_status(c, ia, DHCP6_STATUS_NO_BINDING);
	}
	dhcp6_reply_config(&c->w, c->set, c->req);
	return DHCP6_MSG_REPLY;
}

/*
 * RELEASE and DECLINE (§18.3.7, §18.3.8): Success; NoBinding in every IA that does not hold
 * the MAC's address. The binding stays (the control plane owns it); a DECLINE marks it, so
 * the MAC is refused that address until its binding changes (as the IPv4 engine does).
 */
static int
process_release(struct ctx *c)
{
	const struct dhcp6_opts *o = &c->req->opts;
	bool decline = c->req->type == DHCP6_MSG_DECLINE;
	struct dhcp6_binding *b = dhcp6_table_lookup(c->s->table, c->req->mac);
	struct in6_addr addr;
	bool hit = false;

	dhcp6_reply_start(&c->w, c->set, c->req, DHCP6_MSG_REPLY);
	dhcp6_put_status(&c->w, DHCP6_STATUS_SUCCESS);
	for (int i = 0; i < o->n_ia; i++) {
		if (b != NULL && o->ia[i].type == DHCP6_OPT_IA_NA && ia_names(&o->ia[i], &b->addr))
			hit = true;
		else
			ia_status(c, &o->ia[i], DHCP6_STATUS_NO_BINDING);
	}
	if (!hit)
		return DHCP6_MSG_REPLY;
	addr = b->addr;
	if (decline) {
		b->flags |= DHCP6_BINDING_DECLINED;
		c->s->stats.declines++;
		if (c->s->cb.on_decline != NULL)
			c->s->cb.on_decline(c->s->cb.userdata, c->req->mac, &addr);
	} else {
		c->s->stats.releases++;
		if (c->s->cb.on_release != NULL)
			c->s->cb.on_release(c->s->cb.userdata, c->req->mac, &addr);
	}
	return DHCP6_MSG_REPLY;
}

/* CONFIRM (§18.3.3): Success when every address is on the pool's link, else NotOnLink; no
 * reply at all when it names no address. Needs no binding. */
static int
process_confirm(struct ctx *c)
{
	const struct dhcp6_opts *o = &c->req->opts;
	size_t n = 0;
	bool on_link = true;

	for (int i = 0; i < o->n_ia; i++)
		for (size_t k = 0; k < o->ia[i].n_addrs; k++, n++)
			if (o->ia[i].type == DHCP6_OPT_IA_PD ||
			    !ipv6_in_prefix(&o->ia[i].addrs[k], &c->set->net, c->set->o.prefix))
				on_link = false;
	if (n == 0)
		return 0;
	dhcp6_reply_start(&c->w, c->set, c->req, DHCP6_MSG_REPLY);
	dhcp6_put_status(&c->w, on_link ? DHCP6_STATUS_SUCCESS : DHCP6_STATUS_NOT_ON_LINK);
	if (!on_link) {
		c->s->stats.not_on_link++;
		c->s->status = DHCP6_STATUS_NOT_ON_LINK;
	}
	return DHCP6_MSG_REPLY;
}

/* INFORMATION-REQUEST (§18.3.6): configuration only, to anyone on the link. */
static int
process_info(struct ctx *c)
{
	dhcp6_reply_start(&c->w, c->set, c->req, DHCP6_MSG_REPLY);
	dhcp6_reply_config(&c->w, c->set, c->req);
	return DHCP6_MSG_REPLY;
}

/* §18.4: a REQUEST, RENEW, RELEASE or DECLINE unicast by the client itself (relays always
 * unicast) when we never sent Server Unicast: REPLY with UseMulticast and the identifiers. */
static bool
needs_multicast(const struct ctx *c)
{
	int t = c->req->type;

	return c->req->n_relays == 0 && !c->req->multicast &&
	       (t == DHCP6_MSG_REQUEST || t == DHCP6_MSG_RENEW || t == DHCP6_MSG_RELEASE ||
		   t == DHCP6_MSG_DECLINE);
}

static int
dispatch(struct ctx *c)
{
	if (needs_multicast(c)) {
		c->s->stats.drops[DHCP6_DROP_USE_MULTICAST]++;
		c->s->status = DHCP6_STATUS_USE_MULTICAST;
		dhcp6_reply_start(&c->w, c->set, c->req, DHCP6_MSG_REPLY);
		dhcp6_put_status(&c->w, DHCP6_STATUS_USE_MULTICAST);
		return DHCP6_MSG_REPLY;
	}
	switch (c->req->type) {
	case DHCP6_MSG_SOLICIT:
		return process_solicit(c);
	case DHCP6_MSG_REQUEST:
		return process_request(c);
	case DHCP6_MSG_RENEW:
	case DHCP6_MSG_REBIND:
		return process_extend(c);
	case DHCP6_MSG_RELEASE:
	case DHCP6_MSG_DECLINE:
		return process_release(c);
	case DHCP6_MSG_CONFIRM:
		return process_confirm(c);
	case DHCP6_MSG_INFORMATION_REQUEST:
		return process_info(c);
	default:
		return dhcp6_count_drop(c->s, DHCP6_DROP_UNSUPPORTED);
	}
}

static void
report(struct dhcp6_server *s, int type)
{
	const struct dhcp6_binding *b = dhcp6_table_lookup(s->table, s->req.mac);
	struct dhcp6_decision d = {
	    .now = s->now,
	    .mac = s->req.mac,
	    .hostname = b != NULL ? dhcp6_table_hostname(s->table, b) : NULL,
	    .xid = s->req.xid,
	    .type = s->req.type,
	    .reply = (uint8_t)type,
	    .address = s->given,
	    .status = s->status,
	    .dropped = s->dropped,
	    .drop = s->drop,
	    .relayed = s->req.n_relays > 0,
	};

	s->cb.on_decision(s->cb.userdata, &d);
}

static int
handle(struct dhcp6_server *s, const uint8_t *data, size_t len, const struct dhcp6_rx_meta *meta,
    uint8_t *out, size_t cap, struct dhcp6_reply *ret)
{
	struct ctx c = {.s = s, .set = s->optset, .req = &s->req};
	enum dhcp6_drop_reason why;
	size_t at[DHCP6_HOP_COUNT_LIMIT], n_open;
	int type;

	if (dhcp6_request_parse(&s->req, data, len, meta, &why) < 0) {
		if (s->req.type != 0)
			s->stats.rx[s->req.type]++;
		return dhcp6_count_drop(s, why);
	}
	s->stats.rx[s->req.type]++;
	if (s->req.n_relays > 0)
		s->stats.relayed++;
	if (check_ids(&c) < 0)
		return 0;
	c.b = dhcp6_table_lookup(s->table, s->req.mac);
	if (c.b == NULL && s->duid_mac) {
		const uint8_t *mac = dhcp6_duid_ethernet(&s->req.opts.client_id);
		struct dhcp6_binding *b = mac != NULL ? dhcp6_table_lookup(s->table, mac) : NULL;

		if (b != NULL) { /* answered, released, declined and reported as the DUID's MAC */
			s->req.mac = mac;
			c.b = b;
		}
	}
	if (c.b != NULL && (c.b->flags & DHCP6_BINDING_DECLINED))
		c.b = NULL;
	c.w = (struct dhcp6_writer){.p = out, .cap = cap};
	n_open = dhcp6_reply_relay_open(&c.w, &s->req, at);
	if ((type = dispatch(&c)) <= 0)
		return type;
	dhcp6_reply_relay_close(&c.w, at, n_open);
	if (c.w.overflow)
		return dhcp6_count_drop(s, DHCP6_DROP_REPLY_TOO_BIG);
	*ret = (struct dhcp6_reply){
	    .type = type, .relayed = n_open > 0, .payload = out, .payload_len = c.w.len};
	return type;
}

int
dhcp6_process(struct dhcp6_server *s, const uint8_t *data, size_t len,
    const struct dhcp6_rx_meta *meta, uint64_t now, uint8_t *out, size_t cap,
    struct dhcp6_reply *ret)
{
	int type;

	s->now = now;
	s->dropped = false;
	s->status = 0;
	memset(&s->given, 0, sizeof(s->given));
	if (s->optset == NULL || s->standby)
		return dhcp6_count_drop(s, DHCP6_DROP_NOT_SERVING);
	type = handle(s, data, len, meta, out, cap, ret);
	if (type <= 0)
		memset(&s->given, 0, sizeof(s->given)); /* nothing was sent */
	if (s->cb.on_decision != NULL && s->req.mac != NULL)
		report(s, type > 0 ? type : 0);
	s->req.mac = NULL;
	return type;
}
