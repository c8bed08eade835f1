/* SPDX-License-Identifier: Apache-2.0 */
/* Ethernet/IPv6/UDP and ICMPv6 verify + finish, the pseudo-header checksum (RFC 8200 §8.1). */
#include "dhcp/packet6.h"

#include <errno.h>
#include <string.h>

#include "dhcp/packet.h"
#include "lib/buf.h"

#define NH_HOPOPTS 0
#define NH_UDP 17
#define NH_ICMPV6 58
#define UDP_HDR_LEN 8
#define ICMP6_HDR_LEN 4 /* type, code, checksum: the least a message has */

/* IPv6 fixed header (RFC 8200 §3). */
struct ip6_hdr_ {
	uint8_t vtf[4];	 /* version 4 bits, traffic class 8, flow label 20 */
	uint8_t plen[2]; /* payload length: everything after this header */
	uint8_t next;	 /* next header */
	uint8_t hlim;	 /* hop limit */
	uint8_t src[16];
	uint8_t dst[16];
} __attribute__((packed));
_Static_assert(sizeof(struct ip6_hdr_) == PACKET6_IP6_LEN, "IPv6 header is 40 bytes");
_Static_assert(PACKET6_ETH_LEN + PACKET6_IP6_LEN == PACKET6_ICMP_OFFSET, "ICMPv6 offset");
_Static_assert(PACKET6_ICMP_OFFSET + UDP_HDR_LEN == PACKET6_UDP_OFFSET, "UDP offset");

uint16_t
packet6_checksum(const struct in6_addr *src, const struct in6_addr *dst, uint8_t next_header,
    const void *data, size_t len)
{
	uint32_t s = 0;

	/* pseudo-header: source, destination, 32-bit upper-layer length, 24 zero bits, next
	 * header (RFC 8200 §8.1); its 32-bit length is summed as two 16-bit words */
	s = inet_sum(src, 16, s);
	s = inet_sum(dst, 16, s);
	s = inet_sum(data, len, s + (uint32_t)(len >> 16) + (uint32_t)(len & 0xffff) + next_header);
	return inet_fold(s);
}

/*
 * Walks a Hop-by-Hop Options header at p (left bytes of IPv6 payload) when next says there is
 * one: *next becomes the header after it, the return value its length. 0 when there is none;
 * -EBADMSG when it runs past the payload. Its options are not interpreted (RFC 8200 §4.3:
 * the only ones senders put there, Router Alert and Pad, ask nothing of an end node).
 */
static int
skip_hop_by_hop(const uint8_t *p, size_t left, uint8_t *next)
{
	size_t hlen;

	if (*next != NH_HOPOPTS)
		return 0;
	if (left < 8)
		return -EBADMSG;
	hlen = ((size_t)p[1] + 1) * 8; /* Hdr Ext Len: 8-octet units, the first 8 not counted */
	if (hlen > left)
		return -EBADMSG;
	*next = p[0];
	return (int)hlen;
}

static int
parse_udp(const struct ip6_hdr_ *ip, const uint8_t *p, size_t left, bool csum_not_ready,
    struct ip6_frame *out)
{
	size_t ulen;

	if (left < UDP_HDR_LEN)
		return -EBADMSG;
	ulen = be16_get(p + 4);
	/* RFC 8200 §8.4 jumbograms (length 0) are not for us either */
	if (ulen < UDP_HDR_LEN || ulen > left)
		return -EBADMSG;
	if (!csum_not_ready) {
		/* RFC 8200 §8.1: a zero UDP checksum in IPv6 is discarded */
		if (be16_get(p + 6) == 0)
			return -EILSEQ;
		if (packet6_checksum(
			(const void *)ip->src, (const void *)ip->dst, NH_UDP, p, ulen) != 0)
			return -EILSEQ;
	}
	out->sport = be16_get(p);
	out->dport = be16_get(p + 2);
	out->payload = p + UDP_HDR_LEN;
	out->payload_len = ulen - UDP_HDR_LEN;
	return 0;
}

static int
parse_icmp(const struct ip6_hdr_ *ip, const uint8_t *p, size_t left, struct ip6_frame *out)
{
	/* the message is the whole rest of the IPv6 payload (RFC 4443 §2.1) */
	if (left < ICMP6_HDR_LEN)
		return -EBADMSG;
	if (packet6_checksum((const void *)ip->src, (const void *)ip->dst, NH_ICMPV6, p, left) != 0)
		return -EILSEQ;
	out->sport = 0;
	out->dport = 0;
	out->payload = p;
	out->payload_len = left;
	return 0;
}

int
packet6_parse(const uint8_t *frame, size_t len, bool udp_csum_not_ready, struct ip6_frame *out)
{
	const struct ip6_hdr_ *ip;
	const uint8_t *p;
	size_t plen;
	uint8_t next;
	int h;

	if (len < PACKET6_ETH_LEN)
		return -EBADMSG;
	if (be16_get(frame + 12) != ETHERTYPE_IPV6_)
		return -EPROTO;
	if (len < PACKET6_ICMP_OFFSET)
		return -EBADMSG;
	ip = (const void *)(frame + PACKET6_ETH_LEN);
	if (ip->vtf[0] >> 4 != 6)
		return -EPROTO;
	plen = be16_get(ip->plen);
	/* trailing Ethernet padding is allowed: trust the payload length, not the frame's */
	if (plen > len - PACKET6_ICMP_OFFSET)
		return -EBADMSG;
	p = frame + PACKET6_ICMP_OFFSET;
	next = ip->next;
	h = skip_hop_by_hop(p, plen, &next);
	if (h < 0)
		return h;
	p += h;
	plen -= (size_t)h;

	memcpy(out->dst_mac, frame, 6);
	memcpy(out->src_mac, frame + 6, 6);
	memcpy(&out->src, ip->src, 16);
	memcpy(&out->dst, ip->dst, 16);
	out->next_header = next;
	out->hop_limit = ip->hlim;
	if (next == NH_UDP)
		return parse_udp(ip, p, plen, udp_csum_not_ready, out);
	if (next == NH_ICMPV6)
		return parse_icmp(ip, p, plen, out);
	/* another extension header or upper layer: not walked */
	return -EPROTO;
}

static void
put_headers(
    uint8_t *frame, const struct ip6_frame *hdr, uint8_t next, uint8_t hop_limit, size_t plen)
{
	struct ip6_hdr_ *ip = (void *)(frame + PACKET6_ETH_LEN);

	memcpy(frame, hdr->dst_mac, 6);
	memcpy(frame + 6, hdr->src_mac, 6);
	be16_put(frame + 12, ETHERTYPE_IPV6_);
	ip->vtf[0] = 0x60; /* version 6, traffic class 0, flow label 0 */
	ip->vtf[1] = 0;
	ip->vtf[2] = 0;
	ip->vtf[3] = 0;
	be16_put(ip->plen, (uint16_t)plen);
	ip->next = next;
	ip->hlim = hdr->hop_limit != 0 ? hdr->hop_limit : hop_limit;
	memcpy(ip->src, &hdr->src, 16);
	memcpy(ip->dst, &hdr->dst, 16);
}

size_t
packet6_finish_udp(uint8_t *frame, const struct ip6_frame *hdr, size_t payload_len)
{
	uint8_t *udp = frame + PACKET6_ICMP_OFFSET;
	size_t ulen = UDP_HDR_LEN + payload_len;
	uint16_t sum;

	if (ulen > 0xffff)
		return 0;
	put_headers(frame, hdr, NH_UDP, PACKET6_HOP_LIMIT_UDP, ulen);
	be16_put(udp, hdr->sport);
	be16_put(udp + 2, hdr->dport);
	be16_put(udp + 4, (uint16_t)ulen);
	be16_put(udp + 6, 0);
	sum = packet6_checksum(&hdr->src, &hdr->dst, NH_UDP, udp, ulen);
	/* RFC 8200 §8.1: a computed zero is sent as all ones (zero is invalid in IPv6) */
	be16_put(udp + 6, sum == 0 ? 0xffff : sum);
	return PACKET6_UDP_OFFSET + payload_len;
}

size_t
packet6_finish_icmp(uint8_t *frame, const struct ip6_frame *hdr, size_t payload_len)
{
	uint8_t *icmp = frame + PACKET6_ICMP_OFFSET;

	if (payload_len > 0xffff || payload_len < ICMP6_HDR_LEN)
		return 0;
	put_headers(frame, hdr, NH_ICMPV6, PACKET6_HOP_LIMIT_ND, payload_len);
	be16_put(icmp + 2, 0);
	be16_put(icmp + 2, packet6_checksum(&hdr->src, &hdr->dst, NH_ICMPV6, icmp, payload_len));
	return PACKET6_ICMP_OFFSET + payload_len;
}
