/* SPDX-License-Identifier: Apache-2.0 */
/* Foreign DHCP servers: classify a server reply seen on the network, build the probe. */
#include "dhcp/foreign.h"

#include <string.h>

#include "dhcp/dhcp.h"
#include "dhcp/option.h"
#include "dhcp/packet.h"
#include "dhcp/proto.h"
#include "lib/buf.h"
#include "lib/util.h"

static const uint8_t probe_prefix[3] = {0x02, 0x76, 0x6d};

/* The UDP payload of an IPv4/UDP frame from port 67 to port 68, checksums verified. */
static const uint8_t *
udp_reply_payload(
    const uint8_t *frame, size_t len, bool csum_not_ready, size_t *ret_len, uint32_t *ret_src_ip)
{
	const struct eth_hdr *eth = (const void *)frame;
	const struct ipv4_hdr *ip;
	const struct udp_hdr *udp;
	size_t ihl, tot, ulen;

	if (len < sizeof(*eth) + sizeof(*ip) || be16_get(eth->type) != ETHERTYPE_IPV4)
		return NULL;
	ip = (const void *)(frame + sizeof(*eth));
	len -= sizeof(*eth);
	ihl = (size_t)(ip->ver_ihl & 0x0f) * 4;
	tot = be16_get(ip->tot_len);
	if (ip->ver_ihl >> 4 != 4 || ihl < sizeof(*ip) || tot < ihl + sizeof(*udp) || tot > len)
		return NULL;
	if (ip->protocol != IPPROTO_UDP_ || (be16_get(ip->frag) & 0x3fff) ||
	    inet_fold(inet_sum(ip, ihl, 0)) != 0)
		return NULL;
	udp = (const void *)((const uint8_t *)ip + ihl);
	ulen = be16_get(udp->len);
	if (be16_get(udp->source) != DHCP_PORT_SERVER || be16_get(udp->dest) != DHCP_PORT_CLIENT ||
	    ulen < sizeof(*udp) || ulen > tot - ihl)
		return NULL;
	if (!csum_not_ready && be16_get(udp->check) != 0) {
		uint32_t src = be32_get(ip->saddr), dst = be32_get(ip->daddr);
		uint32_t s = (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) +
			     IPPROTO_UDP_ + (uint32_t)ulen;

		if (inet_fold(inet_sum(udp, ulen, s)) != 0)
			return NULL;
	}
	*ret_len = ulen - sizeof(*udp);
	*ret_src_ip = be32_get(ip->saddr);
	return (const uint8_t *)udp + sizeof(*udp);
}

static bool
is_own(const struct dhcp_foreign_own *own, const struct dhcp_foreign_reply *r, uint32_t src_ip)
{
	for (size_t i = 0; own && i < own->n_mac && i < DHCP_FOREIGN_OWN_MAX; i++)
		if (memcmp(own->mac[i], r->mac, 6) == 0)
			return true;
	for (size_t i = 0; own && i < own->n_ip && i < DHCP_FOREIGN_OWN_MAX; i++)
		if (own->ip[i] == r->server_ip || own->ip[i] == src_ip)
			return true;
	return false;
}

enum dhcp_foreign_kind
dhcp_foreign_classify(const uint8_t *frame, size_t len, bool csum_not_ready,
    const struct dhcp_foreign_own *own, struct dhcp_foreign_reply *out)
{
	struct dhcp_option_table opts;
	const struct dhcp_msg *m;
	const uint8_t *payload, *type;
	size_t plen, tlen;
	uint32_t src_ip, sid;

	payload = udp_reply_payload(frame, len, csum_not_ready, &plen, &src_ip);
	if (!payload || plen < DHCP_FIXED_LEN)
		return DHCP_FOREIGN_NONE;
	m = (const void *)payload;
	if (m->op != BOOTREPLY || m->htype != DHCP_HTYPE_ETHER || m->hlen != 6)
		return DHCP_FOREIGN_NONE;
	if (dhcp_option_parse(&opts, payload, plen) < 0)
		return DHCP_FOREIGN_NONE;
	type = dhcp_option_get(&opts, DHCP_OPT_MESSAGE_TYPE, &tlen);
	if (!type || tlen != 1 ||
	    (type[0] != DHCP_MSG_OFFER && type[0] != DHCP_MSG_ACK && type[0] != DHCP_MSG_NAK))
		return DHCP_FOREIGN_NONE;
	memcpy(out->mac, frame + 6, 6);
	out->server_ip = dhcp_option_get_addr(&opts, DHCP_OPT_SERVER_ID, &sid) == 0 ? sid : src_ip;
	out->yiaddr = be32_get(m->yiaddr);
	out->xid = be32_get(m->xid);
	memcpy(out->chaddr, m->chaddr, 6);
	out->msg_type = type[0];
	return is_own(own, out, src_ip) ? DHCP_FOREIGN_OWN : DHCP_FOREIGN_SERVER;
}

void
dhcp_foreign_probe_mac(const char *namespace, const char *name, uint8_t mac[6])
{
	uint64_t h = hash64(namespace, strlen(namespace), 0x766d646863700000ull);

	h = hash64("/", 1, h);
	h = hash64(name, strlen(name), h);
	memcpy(mac, probe_prefix, 3);
	mac[3] = (uint8_t)(h >> 16);
	mac[4] = (uint8_t)(h >> 8);
	mac[5] = (uint8_t)h;
}

bool
dhcp_foreign_is_probe_mac(const uint8_t mac[6])
{
	return memcmp(mac, probe_prefix, 3) == 0;
}

size_t
dhcp_foreign_probe_build(uint8_t buf[DHCP_FOREIGN_PROBE_LEN], const uint8_t mac[6], uint32_t xid)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const uint8_t prl[] = {DHCP_OPT_SUBNET_MASK, DHCP_OPT_ROUTER, DHCP_OPT_DNS,
	    DHCP_OPT_SERVER_ID, DHCP_OPT_LEASE_TIME};
	uint8_t *payload = buf + DHCP_FRAME_HEADROOM, *o;
	struct dhcp_msg *m = (void *)payload;
	size_t plen = DHCP_FOREIGN_PROBE_LEN - DHCP_FRAME_HEADROOM;

	memset(buf, 0, DHCP_FOREIGN_PROBE_LEN);
	m->op = BOOTREQUEST;
	m->htype = DHCP_HTYPE_ETHER;
	m->hlen = 6;
	be32_put(m->xid, xid);
	be16_put(m->flags, DHCP_FLAG_BROADCAST);
	memcpy(m->chaddr, mac, 6);
	o = payload + DHCP_FIXED_LEN;
	be32_put(o, DHCP_MAGIC_COOKIE);
	o += 4;
	*o++ = DHCP_OPT_MESSAGE_TYPE;
	*o++ = 1;
	*o++ = DHCP_MSG_DISCOVER;
	*o++ = DHCP_OPT_CLIENT_ID;
	*o++ = 7;
	*o++ = DHCP_HTYPE_ETHER;
	memcpy(o, mac, 6);
	o += 6;
	*o++ = DHCP_OPT_PRL;
	*o++ = sizeof(prl);
	memcpy(o, prl, sizeof(prl));
	o += sizeof(prl);
	*o = DHCP_OPT_END; /* the rest is padding (zeros) up to the BOOTP minimum */
	return dhcp_frame_build(
	    payload, plen, mac, bcast, 0, 0xffffffffu, DHCP_PORT_CLIENT, DHCP_PORT_SERVER);
}
