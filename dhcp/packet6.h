/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_PACKET6_H
#define VMDHCP_DHCP_PACKET6_H

/*
 * Ethernet II / IPv6 / UDP and ICMPv6 framing for the IPv6 packet socket: verify a received
 * frame, write the headers and checksums of a frame to send. Nothing is allocated; received
 * payloads are borrowed views into the frame.
 *
 * Received frames: Ethernet II (no VLAN tag: the socket sits on the untagged bridge port),
 * IPv6 version 6 whose payload length fits the frame (trailing Ethernet padding is allowed:
 * the IPv6 payload length is trusted, not the frame length). One Hop-by-Hop Options header
 * is walked when it comes first, the only place RFC 8200 §4.1 allows it; any other extension
 * header (Routing, Fragment, Destination Options, ESP, ...) is not walked: -EPROTO. DHCPv6
 * clients and router solicitations carry none, and a fragment is never reassembled here.
 * UDP: length within the IPv6 payload; the checksum is mandatory (RFC 8200 §8.1: a zero
 * checksum is invalid and the datagram is discarded) unless the kernel said it is not yet
 * computed (PACKET_AUXDATA TP_STATUS_CSUMNOTREADY, veth and virtio hand such frames over),
 * then it is not verified. ICMPv6: the checksum (RFC 4443 §2.3) is always verified.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>

#define ETHERTYPE_IPV6_ 0x86dd

/* Headers of one IPv6 frame: filled by packet6_parse, read by packet6_finish_*. */
struct ip6_frame {
	uint8_t dst_mac[6], src_mac[6];
	struct in6_addr src, dst;
	uint8_t next_header; /* IPPROTO_UDP | IPPROTO_ICMPV6 (after any Hop-by-Hop header) */
	uint8_t hop_limit;
	uint16_t sport, dport; /* UDP ports, host order; 0 for ICMPv6 */
	/*
	 * UDP: the datagram's payload (after the 8-byte UDP header).
	 * ICMPv6: the whole ICMPv6 message, from its type byte (type, code, checksum, body).
	 * Borrowed from the frame.
	 */
	const uint8_t *payload;
	size_t payload_len;
};

/*
 * Verifies an Ethernet frame carrying IPv6 and UDP or ICMPv6 and fills *out.
 * udp_csum_not_ready: the kernel's TP_STATUS_CSUMNOTREADY for this frame; the UDP checksum
 * is then not verified (the ICMPv6 one still is: the kernel only defers UDP/TCP ones).
 * Returns 0; -EBADMSG malformed or truncated (a length that runs past the frame, a UDP
 * length below 8 or past the IPv6 payload); -EPROTO not IPv6, not UDP/ICMPv6, or an
 * extension header that is not walked (see above); -EILSEQ bad checksum (or a zero UDP
 * checksum). out is only meaningful on 0.
 */
int packet6_parse(const uint8_t *frame, size_t len, bool udp_csum_not_ready, struct ip6_frame *out);

#define PACKET6_ETH_LEN 14
#define PACKET6_IP6_LEN 40
#define PACKET6_UDP_OFFSET 62  /* Ethernet 14 + IPv6 40 + UDP 8: where a UDP payload is written */
#define PACKET6_ICMP_OFFSET 54 /* Ethernet 14 + IPv6 40: where an ICMPv6 message is written */

/* Hop limits written when hdr->hop_limit is 0. */
#define PACKET6_HOP_LIMIT_UDP 64 /* DHCPv6 replies go to link-local/relay addresses: any value */
#define PACKET6_HOP_LIMIT_ND 255 /* RFC 4861 §4: every ND message is sent with 255 */

/*
 * The UDP payload (payload_len bytes) is already at frame + PACKET6_UDP_OFFSET: writes the
 * Ethernet header (hdr->dst_mac, src_mac, type 0x86dd), the IPv6 header (traffic class and
 * flow label 0, next header UDP, hdr->hop_limit or PACKET6_HOP_LIMIT_UDP when 0, hdr->src,
 * dst) and the UDP header (hdr->sport, dport, length, the pseudo-header checksum of
 * RFC 8200 §8.1; a computed 0 is sent as 0xffff). hdr->next_header and payload are not read.
 * Returns the frame length, PACKET6_UDP_OFFSET + payload_len; 0 when payload_len does not
 * fit the 16-bit UDP length (the frame is then left unwritten).
 */
size_t packet6_finish_udp(uint8_t *frame, const struct ip6_frame *hdr, size_t payload_len);

/*
 * The ICMPv6 message (payload_len bytes, from its type byte) is already at
 * frame + PACKET6_ICMP_OFFSET: writes the Ethernet and IPv6 headers as above (next header
 * 58, hdr->hop_limit or PACKET6_HOP_LIMIT_ND when 0) and the message's checksum (its bytes
 * 2..3; whatever they held is ignored). Returns PACKET6_ICMP_OFFSET + payload_len, or 0
 * when payload_len is below 4 (type, code, checksum) or exceeds 65535.
 */
size_t packet6_finish_icmp(uint8_t *frame, const struct ip6_frame *hdr, size_t payload_len);

/* The ICMPv6/UDP checksum of RFC 8200 §8.1 over the pseudo-header (src, dst, upper-layer
 * length, next header) and data (len bytes, its checksum field included as it is). A
 * received datagram verifies when this is 0. */
uint16_t packet6_checksum(const struct in6_addr *src, const struct in6_addr *dst,
    uint8_t next_header, const void *data, size_t len);

#endif
