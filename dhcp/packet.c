/* SPDX-License-Identifier: Apache-2.0 */
/* Ethernet/IPv4/UDP verify + build, RFC 1071 checksums. */
#include "dhcp/packet.h"

#include <errno.h>
#include <string.h>

#include "dhcp/proto.h"
#include "lib/buf.h"

uint32_t
inet_sum(const void *data, size_t len, uint32_t sum)
{
	const uint8_t *p = data;
	uint64_t s = sum;

	while (len >= 2) {
		s += (uint32_t)p[0] << 8 | p[1];
		p += 2;
		len -= 2;
	}
	if (len > 0)
		s += (uint32_t)p[0] << 8;
	while (s >> 32)
		s = (s & 0xffffffffu) + (s >> 32);
	return (uint32_t)s;
}

uint16_t
inet_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t
pseudo_sum(uint32_t src, uint32_t dst, uint16_t udp_len)
{
	return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + IPPROTO_UDP_ + udp_len;
}

int
dhcp_frame_verify(const uint8_t *frame, size_t len, bool csum_not_ready, struct dhcp_rx_meta *meta,
    const uint8_t **ret_payload, size_t *ret_len, enum dhcp_drop_reason *ret_reason)
{
	const struct eth_hdr *eth = (const void *)frame;
	const struct ipv4_hdr *ip;
	const struct udp_hdr *udp;
	size_t ihl, tot, ulen;

	if (len < sizeof(*eth) + sizeof(*ip))
		goto too_short;
	if (be16_get(eth->type) != ETHERTYPE_IPV4)
		goto not_for_us;
	ip = (const void *)(frame + sizeof(*eth));
	len -= sizeof(*eth);
	if (ip->ver_ihl >> 4 != 4)
		goto not_for_us;
	ihl = (size_t)(ip->ver_ihl & 0x0f) * 4;
	tot = be16_get(ip->tot_len);
	/* Trailing Ethernet padding is allowed: trust tot_len, not the frame length. */
	if (ihl < sizeof(*ip) || tot < ihl || tot > len)
		goto too_short;
	if (ip->protocol != IPPROTO_UDP_)
		goto not_for_us;
	if (be16_get(ip->frag) & 0x3fff) /* MF or a fragment offset */
		goto not_for_us;
	if (inet_fold(inet_sum(ip, ihl, 0)) != 0)
		goto bad_checksum;
	if (tot - ihl < sizeof(*udp))
		goto too_short;
	udp = (const void *)((const uint8_t *)ip + ihl);
	if (be16_get(udp->dest) != DHCP_PORT_SERVER)
		goto not_for_us;
	ulen = be16_get(udp->len);
	if (ulen < sizeof(*udp) || ulen > tot - ihl)
		goto too_short;
	if (!csum_not_ready && be16_get(udp->check) != 0) {
		uint32_t s = pseudo_sum(be32_get(ip->saddr), be32_get(ip->daddr), (uint16_t)ulen);

		if (inet_fold(inet_sum(udp, ulen, s)) != 0)
			goto bad_checksum;
	}
	memcpy(meta->src_mac, eth->src, 6);
	meta->src_ip = be32_get(ip->saddr);
	meta->dst_ip = be32_get(ip->daddr);
	meta->src_port = be16_get(udp->source);
	*ret_payload = (const uint8_t *)udp + sizeof(*udp);
	*ret_len = ulen - sizeof(*udp);
	return 0;
too_short:
	*ret_reason = DHCP_DROP_MALFORMED;
	return -EBADMSG;
not_for_us:
	*ret_reason = DHCP_DROP_NOT_FOR_US;
	return -EBADMSG;
bad_checksum:
	*ret_reason = DHCP_DROP_BAD_CHECKSUM;
	return -EBADMSG;
}

size_t
dhcp_frame_build(uint8_t *payload, size_t payload_len, const uint8_t src_mac[6],
    const uint8_t dst_mac[6], uint32_t src_ip, uint32_t dst_ip, uint16_t src_port,
    uint16_t dst_port)
{
	struct udp_hdr *udp = (void *)(payload - sizeof(*udp));
	struct ipv4_hdr *ip = (void *)((uint8_t *)udp - sizeof(*ip));
	struct eth_hdr *eth = (void *)((uint8_t *)ip - sizeof(*eth));
	uint16_t ulen = (uint16_t)(sizeof(*udp) + payload_len);
	uint16_t sum;

	memcpy(eth->dst, dst_mac, 6);
	memcpy(eth->src, src_mac, 6);
	be16_put(eth->type, ETHERTYPE_IPV4);

	ip->ver_ihl = 0x45;
	ip->tos = 0x10; /* IPTOS_LOWDELAY, as BOOTP servers traditionally set */
	be16_put(ip->tot_len, (uint16_t)(sizeof(*ip) + ulen));
	be16_put(ip->id, 0);
	be16_put(ip->frag, 0);
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP_;
	be16_put(ip->check, 0);
	be32_put(ip->saddr, src_ip);
	be32_put(ip->daddr, dst_ip);
	be16_put(ip->check, inet_fold(inet_sum(ip, sizeof(*ip), 0)));

	be16_put(udp->source, src_port);
	be16_put(udp->dest, dst_port);
	be16_put(udp->len, ulen);
	be16_put(udp->check, 0);
	sum = inet_fold(inet_sum(udp, ulen, pseudo_sum(src_ip, dst_ip, ulen)));
	/* RFC 768: a computed zero is sent as all ones (zero means "no checksum") */
	be16_put(udp->check, sum == 0 ? 0xffff : sum);
	return DHCP_FRAME_HEADROOM + payload_len;
}
