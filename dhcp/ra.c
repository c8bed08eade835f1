/* SPDX-License-Identifier: Apache-2.0 */
/* Router Advertisement, Router Solicitation check, unsolicited Neighbour Advertisement
 * (RFC 4861). */
#include "dhcp/ra.h"

#include <errno.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/ip6.h"

/* ND option types (RFC 4861 §4.6) */
#define ND_OPT_SLLA 1
#define ND_OPT_TLLA 2
#define ND_OPT_PREFIX 3
#define ND_OPT_MTU 5

#define RA_HDR_LEN 16
#define RS_HDR_LEN 8
#define NA_HDR_LEN 24
#define PIO_LEN 32

#define RA_FLAG_MANAGED 0x80
#define RA_FLAG_OTHER 0x40
#define PIO_FLAG_ONLINK 0x80 /* L */
#define PIO_FLAG_AUTO 0x40   /* A: never set here */
#define NA_FLAG_ROUTER 0x80
#define NA_FLAG_SOLICITED 0x40
#define NA_FLAG_OVERRIDE 0x20

/* A link-layer address option (Source or Target, RFC 4861 §4.6.1): 8 bytes. */
static void
put_lla(struct buf_writer *w, uint8_t type, const uint8_t mac[6])
{
	buf_put_u8(w, type);
	buf_put_u8(w, 1); /* length in units of 8 octets */
	buf_put_bytes(w, mac, 6);
}

size_t
ra_build(uint8_t *buf, size_t cap, const struct ra_params *p, const uint8_t src_mac[6])
{
	struct buf_writer w = buf_writer_init(buf, cap);

	/* RFC 4861 §4.2 */
	buf_put_u8(&w, ICMP6_ROUTER_ADVERT_);
	buf_put_u8(&w, 0);   /* code */
	buf_put_be16(&w, 0); /* checksum: packet6_finish_icmp */
	buf_put_u8(&w, 0);   /* Cur Hop Limit: 0 = unspecified by this router */
	buf_put_u8(
	    &w, (uint8_t)((p->managed ? RA_FLAG_MANAGED : 0) | (p->other ? RA_FLAG_OTHER : 0)));
	buf_put_be16(&w, p->router_lifetime); /* 0: not a default router */
	buf_put_be32(&w, 0);		      /* Reachable Time: unspecified */
	buf_put_be32(&w, 0);		      /* Retrans Timer: unspecified */
	put_lla(&w, ND_OPT_SLLA, src_mac);
	if (p->prefix_len > 0) {
		struct in6_addr net;
		unsigned plen = p->prefix_len > 128 ? 128 : p->prefix_len;

		/* RFC 4861 §4.6.2; the bits past the prefix length are reserved: zero */
		ipv6_prefix_network(&p->prefix, plen, &net);
		buf_put_u8(&w, ND_OPT_PREFIX);
		buf_put_u8(&w, PIO_LEN / 8);
		buf_put_u8(&w, (uint8_t)plen);
		/* L=1: on-link. A=0: no SLAAC, addresses come from DHCPv6 only */
		buf_put_u8(&w, PIO_FLAG_ONLINK);
		buf_put_be32(&w, p->prefix_valid);
		/* a preferred lifetime past the valid one is ignored by hosts (§6.3.4 of 4862
		 * for A=1); keep it consistent anyway */
		buf_put_be32(&w,
		    p->prefix_preferred > p->prefix_valid ? p->prefix_valid : p->prefix_preferred);
		buf_put_be32(&w, 0); /* Reserved2 */
		buf_put_bytes(&w, &net, 16);
	}
	if (p->mtu > 0) {
		/* RFC 4861 §4.6.4 */
		buf_put_u8(&w, ND_OPT_MTU);
		buf_put_u8(&w, 1);
		buf_put_be16(&w, 0);
		buf_put_be32(&w, p->mtu);
	}
	return w.overflow ? 0 : w.len;
}

/* Walks ND options of msg from off: 0 when every length is non-zero and within the
 * message, with the first option of type `want` in *ret (NULL when none); else -EBADMSG. */
static int
nd_options(const uint8_t *msg, size_t len, size_t off, uint8_t want, const uint8_t **ret)
{
	*ret = NULL;
	while (off < len) {
		size_t olen;

		if (len - off < 2)
			return -EBADMSG;
		olen = (size_t)msg[off + 1] * 8;
		/* RFC 4861 §6.1.1: all included options have a length greater than zero */
		if (olen == 0 || olen > len - off)
			return -EBADMSG;
		if (msg[off] == want && *ret == NULL)
			*ret = msg + off;
		off += olen;
	}
	return 0;
}

int
ra_check_solicit(const struct ip6_frame *f)
{
	const uint8_t *m = f->payload, *sllao;

	/* RFC 4861 §6.1.1 (the checksum was verified by packet6_parse) */
	if (f->next_header != IPPROTO_ICMPV6 || f->payload_len < RS_HDR_LEN)
		return -EBADMSG;
	if (m[0] != ICMP6_ROUTER_SOLICIT_ || m[1] != 0 || f->hop_limit != 255)
		return -EBADMSG;
	if (nd_options(m, f->payload_len, RS_HDR_LEN, ND_OPT_SLLA, &sllao) < 0)
		return -EBADMSG;
	if (ipv6_is_zero(&f->src) && sllao != NULL)
		return -EBADMSG;
	return 0;
}

int
ra_solicit_sllao(const struct ip6_frame *f, uint8_t ret[6])
{
	const uint8_t *sllao;

	if (f->payload_len < RS_HDR_LEN ||
	    nd_options(f->payload, f->payload_len, RS_HDR_LEN, ND_OPT_SLLA, &sllao) < 0 ||
	    sllao == NULL)
		return -ENOENT;
	/* on Ethernet the option is 8 bytes (RFC 2464 §6); a longer one gives its first 6 */
	memcpy(ret, sllao + 2, 6);
	return 0;
}

size_t
na_build_unsolicited(uint8_t *buf, size_t cap, const struct in6_addr *target, const uint8_t mac[6])
{
	struct buf_writer w = buf_writer_init(buf, cap);

	/* RFC 4861 §4.4; §7.2.6: unsolicited, S=0, O=1 so caches take the new address */
	buf_put_u8(&w, ICMP6_NEIGHBOR_ADVERT_);
	buf_put_u8(&w, 0);
	buf_put_be16(&w, 0); /* checksum: packet6_finish_icmp */
	buf_put_u8(&w, NA_FLAG_OVERRIDE);
	buf_put_zero(&w, 3); /* rest of the 32-bit flags + reserved word */
	buf_put_bytes(&w, target, 16);
	put_lla(&w, ND_OPT_TLLA, mac);
	return w.overflow ? 0 : w.len;
}
