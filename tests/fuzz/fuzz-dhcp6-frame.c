/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: packet6_parse (dhcp/packet6.c) on frames as the IPv6 packet socket hands them
 * over (any bytes, any length; the first byte's low bit plays TP_STATUS_CSUMNOTREADY), then
 * ra_check_solicit / ra_solicit_sllao (dhcp/ra.c) on what parses. Never reads past the frame;
 * a parsed payload lies inside it; a UDP datagram rebuilt with packet6_finish_udp parses back
 * the same with a verified checksum; an ICMPv6 one likewise. Anything else traps.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/packet6.h"
#include "dhcp/ra.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t rebuilt[PACKET6_UDP_OFFSET + 65536];

static void
check_same(const struct ip6_frame *a, const struct ip6_frame *b)
{
	if (memcmp(a->src_mac, b->src_mac, 6) != 0 || memcmp(a->dst_mac, b->dst_mac, 6) != 0 ||
	    memcmp(&a->src, &b->src, 16) != 0 || memcmp(&a->dst, &b->dst, 16) != 0 ||
	    a->next_header != b->next_header || a->sport != b->sport || a->dport != b->dport ||
	    a->payload_len != b->payload_len || memcmp(a->payload, b->payload, a->payload_len) != 0)
		abort();
}

static void
rebuild(const struct ip6_frame *h)
{
	struct ip6_frame back;
	size_t n;

	if (h->next_header == IPPROTO_UDP) {
		memcpy(rebuilt + PACKET6_UDP_OFFSET, h->payload, h->payload_len);
		n = packet6_finish_udp(rebuilt, h, h->payload_len);
	} else {
		memcpy(rebuilt + PACKET6_ICMP_OFFSET, h->payload, h->payload_len);
		n = packet6_finish_icmp(rebuilt, h, h->payload_len);
	}
	if (n == 0 || packet6_parse(rebuilt, n, false, &back) != 0)
		abort();
	if (h->next_header == IPPROTO_ICMPV6) /* its checksum is rewritten: compare the rest */
		if (back.payload_len < 4 || memcmp(back.payload, h->payload, 2) != 0 ||
		    memcmp(back.payload + 4, h->payload + 4, h->payload_len - 4) != 0)
			abort();
	if (h->next_header == IPPROTO_UDP)
		check_same(h, &back);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ip6_frame h;
	uint8_t *f, mac[6];
	int r;

	/* an exact-size copy, so ASan sees any read past the frame */
	f = malloc(size ? size : 1);
	if (f == NULL)
		return 0;
	memcpy(f, data, size);
	r = packet6_parse(f, size, size > 0 && (data[0] & 1), &h);
	if (r != 0 && r != -EBADMSG && r != -EPROTO && r != -EILSEQ)
		abort();
	if (r == 0) {
		if (h.payload < f + PACKET6_ICMP_OFFSET || h.payload + h.payload_len > f + size)
			abort();
		if (h.next_header != IPPROTO_UDP && h.next_header != IPPROTO_ICMPV6)
			abort();
		if (h.next_header == IPPROTO_ICMPV6 && ra_check_solicit(&h) == 0) {
			if (h.hop_limit != 255 || h.payload[0] != 133 || h.payload_len < 8)
				abort();
			(void)ra_solicit_sllao(&h, mac);
		}
		rebuild(&h);
	}
	free(f);
	return 0;
}
