/* SPDX-License-Identifier: Apache-2.0 */
/* OFFER/ACK/NAK in PRL order; RFC 2131 §4.1 destination rules. */
#include <errno.h>
#include <string.h>

#include "dhcp/dhcp-internal.h"
#include "lib/buf.h"
#include "lib/util.h"

/* One option of a reply, in the order it will be written. */
struct item {
	const uint8_t *tlv; /* borrowed: header(s) + data */
	uint16_t len;
	uint8_t code;
	bool mandatory; /* never dropped to respect option 57 */
};

struct item_list {
	struct item items[260];
	size_t n;
	uint8_t added[32]; /* bitmap by code */
};

static bool
item_added(const struct item_list *l, uint8_t code)
{
	return (l->added[code >> 3] >> (code & 7)) & 1;
}

static void
item_add(struct item_list *l, uint8_t code, const uint8_t *tlv, size_t len, bool mandatory)
{
	if (tlv == NULL || len == 0 || item_added(l, code) || l->n == ELEMENTSOF(l->items))
		return;
	l->added[code >> 3] |= (uint8_t)(1u << (code & 7));
	l->items[l->n++] =
	    (struct item){.tlv = tlv, .len = (uint16_t)len, .code = code, .mandatory = mandatory};
}

/* Options sent even when not requested: RFC 2131 table 3 MUSTs first, then defaults. */
static const uint8_t lease_mandatory[] = {
    DHCP_OPT_SERVER_ID, DHCP_OPT_LEASE_TIME, DHCP_OPT_T1, DHCP_OPT_T2};
static const uint8_t defaults[] = {
    DHCP_OPT_SUBNET_MASK, DHCP_OPT_ROUTER, DHCP_OPT_DNS, DHCP_OPT_HOSTNAME, DHCP_OPT_DOMAIN_NAME};

static bool
is_lease_option(uint8_t code)
{
	return code == DHCP_OPT_LEASE_TIME || code == DHCP_OPT_T1 || code == DHCP_OPT_T2;
}

/* The TLV bytes of code for this reply, or NULL (len 0) when not sent. */
static const uint8_t *
option_tlv(const struct dhcp_optset *set, uint8_t code, bool with_lease, const uint8_t *host_tlv,
    size_t host_len, size_t *ret_len)
{
	*ret_len = 0;
	if (code == DHCP_OPT_HOSTNAME) {
		*ret_len = host_len;
		return host_len > 0 ? host_tlv : NULL;
	}
	if (!with_lease && is_lease_option(code))
		return NULL;
	if (set->len[code] == 0)
		return NULL;
	*ret_len = set->len[code];
	return set->blob + set->off[code];
}

/* Bytes an echoed option takes (RFC 3396 split), 0 when absent. */
static size_t
echo_size(const uint8_t *val, size_t len)
{
	if (val == NULL)
		return 0;
	return len + 2 * (len == 0 ? 1 : (len + 254) / 255);
}

/* Option 12's TLV for hostname into host_tlv; its length, 0 when none is sent. */
static inline size_t
host_option(const char *hostname, uint8_t host_tlv[2 + 255])
{
	size_t n;

	if (hostname == NULL)
		return 0;
	n = strlen(hostname);
	if (n == 0 || n > 255)
		return 0;
	host_tlv[0] = DHCP_OPT_HOSTNAME;
	host_tlv[1] = (uint8_t)n;
	memcpy(host_tlv + 2, hostname, n);
	return n + 2;
}

static bool
is_boot_option(uint8_t code)
{
	return code == DHCP_OPT_VENDOR_CLASS || code == DHCP_OPT_TFTP_SERVER ||
	       code == DHCP_OPT_BOOTFILE || code == DHCP_OPT_CLIENT_UUID;
}

/* A boot answer's options the client did not list (dhcp/boot.h says which are sent). */
static inline void
collect_boot_items(struct item_list *l, const struct dhcp_optset *set,
    const struct dhcp_request *req, uint8_t uuid_tlv[19])
{
	static const uint8_t codes[] = {
	    DHCP_OPT_VENDOR_CLASS, DHCP_OPT_CLIENT_UUID, DHCP_OPT_TFTP_SERVER, DHCP_OPT_BOOTFILE};

	if (!dhcp_boot_answers(&req->boot))
		return;
	for (size_t i = 0; i < ELEMENTSOF(codes); i++) {
		size_t len;
		bool mandatory;
		const uint8_t *tlv = dhcp_boot_option(
		    &set->boot, &req->boot, codes[i], false, uuid_tlv, &len, &mandatory);

		item_add(l, codes[i], tlv, len, mandatory);
	}
}

/* The options of the reply in the order they will be written (type_tlv first). */
static inline void
collect_items(struct item_list *l, const struct dhcp_optset *set, const struct dhcp_request *req,
    const uint8_t type_tlv[3], bool nak, bool with_lease, const uint8_t *host_tlv, size_t host_len,
    uint8_t uuid_tlv[19])
{
	l->n = 0;
	memset(l->added, 0, sizeof(l->added));
	item_add(l, DHCP_OPT_MESSAGE_TYPE, type_tlv, 3, true);
	if (nak) {
		/* RFC 2131 table 3: a DHCPNAK carries 53, 54 and nothing else, but the echoes of
		 * 61 (RFC 6842) and 82 (RFC 3046 §2.2) */
		item_add(l, DHCP_OPT_SERVER_ID, set->blob + set->off[DHCP_OPT_SERVER_ID],
		    set->len[DHCP_OPT_SERVER_ID], true);
		return;
	}
	/* the client's parameter request list, in its order */
	for (size_t i = 0; i < req->prl_len; i++) {
		uint8_t code = req->prl[i];
		size_t len;
		bool mandatory = code == DHCP_OPT_SERVER_ID || is_lease_option(code);
		const uint8_t *tlv;

		if (is_boot_option(code))
			tlv = dhcp_boot_option(
			    &set->boot, &req->boot, code, true, uuid_tlv, &len, &mandatory);
		else
			tlv = option_tlv(set, code, with_lease, host_tlv, host_len, &len);
		item_add(l, code, tlv, len, mandatory);
	}
	for (size_t i = 0; i < ELEMENTSOF(lease_mandatory); i++) {
		uint8_t code = lease_mandatory[i];
		size_t len;
		const uint8_t *tlv = option_tlv(set, code, with_lease, host_tlv, host_len, &len);

		item_add(l, code, tlv, len, true);
	}
	for (size_t i = 0; i < ELEMENTSOF(defaults); i++) {
		uint8_t code = defaults[i];
		size_t len;
		const uint8_t *tlv = option_tlv(set, code, with_lease, host_tlv, host_len, &len);

		item_add(l, code, tlv, len, false);
	}
	collect_boot_items(l, set, req, uuid_tlv);
}

/*
 * The reply's size (*ret_max_len) and the bytes left for the listed options once the header,
 * cookie, END and the echoes are counted (*ret_room); -EMSGSIZE when not even the header fits.
 */
static inline int
reply_room(const struct dhcp_request *req, size_t cap, size_t *ret_max_len, size_t *ret_room)
{
	size_t max_len, room;

	/*
	 * Option 57 counts the IP datagram (RFC 2132 §9.10); never below 576. Relayed (giaddr
	 * set), the reply goes to the relay agent, which removes option 82 before it forwards
	 * the reply to the client (RFC 3046 §2.2): the echo is not in what the client receives,
	 * so it counts against the link only (cap: the MTU), not against the client's size. A
	 * 400-byte option 82 (split in two, RFC 3396) no longer overflows a 576-byte client.
	 */
	max_len = (size_t)req->max_size - DHCP_IP_UDP_LEN;
	if (req->giaddr != 0)
		max_len += echo_size(req->relay_info, req->relay_info_len);
	if (max_len > DHCP_MAX_PAYLOAD)
		max_len = DHCP_MAX_PAYLOAD;
	if (max_len > cap)
		max_len = cap;
	if (max_len < DHCP_FIXED_LEN + 4 + 1 + 3)
		return -EMSGSIZE;
	room = max_len - DHCP_FIXED_LEN - 4 - 1; /* header, cookie, END */
	/* RFC 6842: the client identifier is echoed unchanged; RFC 3046 §2.2: the relay agent
	 * information too, last. */
	room = room > echo_size(req->client_id, req->client_id_len)
		   ? room - echo_size(req->client_id, req->client_id_len)
		   : 0;
	room = room > echo_size(req->relay_info, req->relay_info_len)
		   ? room - echo_size(req->relay_info, req->relay_info_len)
		   : 0;
	*ret_max_len = max_len;
	*ret_room = room;
	return 0;
}

/*
 * Mandatory options always go; optional ones in list order (PRL first) as long as they fit,
 * so one large option (119, 121) left out does not push out the small ones after it.
 */
static inline int
fit_items(struct item_list *l, size_t room)
{
	size_t total = 0, kept = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->items[i].mandatory)
			total += l->items[i].len;
	/* the mandatory options and the echoes (which RFC 6842 and 3046 require) do not fit */
	if (total > room || room == 0)
		return -EMSGSIZE;
	for (size_t i = 0; i < l->n; i++) {
		if (!l->items[i].mandatory) {
			if (l->items[i].len > room - total)
				continue;
			total += l->items[i].len;
		}
		l->items[kept++] = l->items[i];
	}
	l->n = kept;
	return 0;
}

/* The fixed header of the reply to in. */
static inline void
write_header(struct dhcp_msg *m, const struct dhcp_optset *set, const struct dhcp_request *req,
    int type, uint32_t yiaddr)
{
	const struct dhcp_msg *in = req->msg;
	uint16_t flags = req->flags;

	memset(m, 0, sizeof(*m));
	m->op = BOOTREPLY;
	m->htype = in->htype;
	m->hlen = in->hlen;
	memcpy(m->xid, in->xid, sizeof(m->xid));
	/* RFC 2131 §4.3.2: a NAK through a relay has the broadcast bit set */
	if (type == DHCP_MSG_NAK && req->giaddr != 0)
		flags |= DHCP_FLAG_BROADCAST;
	be16_put(m->flags, flags);
	if (type == DHCP_MSG_ACK)
		memcpy(m->ciaddr, in->ciaddr, 4);
	be32_put(m->yiaddr, yiaddr);
	memcpy(m->giaddr, in->giaddr, 4);
	memcpy(m->chaddr, in->chaddr, sizeof(m->chaddr));
	if (type != DHCP_MSG_NAK)
		dhcp_boot_header(&set->boot, &set->o.boot, &req->boot, m);
}

/* Cookie, the kept options, the echoes, END and the BOOTP padding: the message's length. */
static inline int
write_options(
    uint8_t *out, const struct item_list *l, const struct dhcp_request *req, size_t max_len)
{
	size_t pos = DHCP_FIXED_LEN;

	be32_put(out + pos, DHCP_MAGIC_COOKIE);
	pos += 4;
	for (size_t i = 0; i < l->n; i++) {
		memcpy(out + pos, l->items[i].tlv, l->items[i].len);
		pos += l->items[i].len;
	}
	if (req->client_id != NULL) {
		int n = dhcp_encode_tlv(DHCP_OPT_CLIENT_ID, req->client_id, req->client_id_len,
		    out + pos, max_len - 1 - pos);

		if (n < 0)
			return n;
		pos += (size_t)n;
	}
	if (req->relay_info != NULL) {
		int n = dhcp_encode_tlv(DHCP_OPT_RELAY_AGENT, req->relay_info, req->relay_info_len,
		    out + pos, max_len - 1 - pos);

		if (n < 0)
			return n;
		pos += (size_t)n;
	}
	out[pos++] = DHCP_OPT_END;
	/* RFC 1542 §3.3 / BOOTP: at least 300 bytes, some clients drop shorter replies */
	if (pos < DHCP_MIN_MESSAGE) {
		memset(out + pos, 0, DHCP_MIN_MESSAGE - pos);
		pos = DHCP_MIN_MESSAGE;
	}
	return (int)pos;
}

int
dhcp_reply_build(const struct dhcp_optset *set, const struct dhcp_request *req, int type,
    uint32_t yiaddr, const char *hostname, uint8_t *out, size_t cap)
{
	struct item_list l;
	uint8_t type_tlv[3] = {DHCP_OPT_MESSAGE_TYPE, 1, (uint8_t)type};
	uint8_t host_tlv[2 + 255], uuid_tlv[19];
	size_t host_len, max_len, room;
	bool nak = type == DHCP_MSG_NAK;
	bool with_lease = !nak && yiaddr != 0; /* INFORM's ACK carries no lease (§4.3.5) */
	int r;

	host_len = nak ? 0 : host_option(hostname, host_tlv);
	collect_items(&l, set, req, type_tlv, nak, with_lease, host_tlv, host_len, uuid_tlv);
	r = reply_room(req, cap, &max_len, &room);
	if (r < 0)
		return r;
	r = fit_items(&l, room);
	if (r < 0)
		return r;
	write_header((struct dhcp_msg *)out, set, req, type, yiaddr);
	return write_options(out, &l, req, max_len);
}

/*
 * RFC 2131 §4.1:
 *   "If the 'giaddr' field in a DHCP message from a client is non-zero, the server sends
 *    any return messages to the 'DHCP server' port on the BOOTP relay agent whose address
 *    appears in 'giaddr'. If the 'giaddr' field is zero and the 'ciaddr' field is nonzero,
 *    then the server unicasts DHCPOFFER and DHCPACK messages to the address in 'ciaddr'.
 *    If 'giaddr' is zero and 'ciaddr' is zero, and the broadcast bit is set, then the
 *    server broadcasts DHCPOFFER and DHCPACK messages to 0xffffffff. If the broadcast bit
 *    is not set and 'giaddr' is zero and 'ciaddr' is zero, then the server unicasts
 *    DHCPOFFER and DHCPACK messages to the client's hardware address and 'yiaddr'
 *    address. In all cases, when 'giaddr' is zero, the server broadcasts any DHCPNAK
 *    messages to 0xffffffff."
 * Every reply leaves as an Ethernet frame we build, from the packet socket. Broadcast and
 * chaddr unicast: the client has no address yet, so the kernel could not ARP for it. Relay
 * (giaddr) and ciaddr destinations are unicast IP in a frame to the Ethernet source of the
 * request (dhcp_reply_frame): the relay, the router in front of it, or the client itself,
 * the neighbour that just reached us, so no route or ARP entry on the interface is needed.
 * dest.raw is false (IP destination only, no frame) just for a bare message handed to
 * dhcp_handle_message by tests and fuzzers, which is never sent.
 */
void
dhcp_reply_destination(
    const struct dhcp_request *req, int type, uint32_t yiaddr, struct dhcp_dest *ret)
{
	static const uint8_t bcast_mac[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

	memset(ret, 0, sizeof(*ret));
	if (req->giaddr != 0) {
		ret->raw = false;
		ret->ip = req->giaddr;
		ret->port = DHCP_PORT_SERVER;
	} else if (req->ciaddr != 0 && type != DHCP_MSG_NAK) {
		ret->raw = false;
		ret->ip = req->ciaddr;
		ret->port = DHCP_PORT_CLIENT;
	} else if (type == DHCP_MSG_NAK || (req->flags & DHCP_FLAG_BROADCAST) || yiaddr == 0) {
		ret->raw = true;
		ret->ip = UINT32_MAX;
		ret->port = DHCP_PORT_CLIENT;
		memcpy(ret->mac, bcast_mac, 6);
	} else {
		ret->raw = true;
		ret->ip = yiaddr;
		ret->port = DHCP_PORT_CLIENT;
		memcpy(ret->mac, req->msg->chaddr, 6);
	}
}

void
dhcp_reply_frame(const struct dhcp_server *s, const struct dhcp_request *req, struct dhcp_reply *r)
{
	uint32_t yiaddr = be32_get(((const struct dhcp_msg *)r->payload)->yiaddr);

	dhcp_reply_destination(req, r->type, yiaddr, &r->dest);
	if (!r->dest.raw && req->meta != NULL) {
		/* relay or ciaddr: the L2 neighbour that handed us the request forwards the reply
		 */
		r->dest.raw = true;
		memcpy(r->dest.mac, req->meta->src_mac, 6);
	}
	if (!r->dest.raw) {
		r->frame = NULL;
		r->frame_len = 0;
		return;
	}
	r->frame = r->payload - DHCP_FRAME_HEADROOM;
	r->frame_len = dhcp_frame_build(r->payload, r->payload_len, s->hwaddr, r->dest.mac,
	    s->optset->o.server_ip, r->dest.ip, DHCP_PORT_SERVER, r->dest.port);
}
