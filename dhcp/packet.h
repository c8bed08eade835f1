/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_PACKET_H
#define VMDHCP_DHCP_PACKET_H

/*
 * Ethernet/IPv4/UDP framing for the packet socket: verify received frames, build reply
 * frames, RFC 1071 checksums.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dhcp/dhcp.h"

/* What the frame's headers said about a received datagram. */
struct dhcp_rx_meta {
	uint8_t src_mac[6];
	uint32_t src_ip; /* host order */
	uint32_t dst_ip;
	uint16_t src_port;
};

/* RFC 1071 one's-complement sum of data folded into sum (not complemented). */
uint32_t inet_sum(const void *data, size_t len, uint32_t sum);
/* Folds and complements a sum into a checksum. */
uint16_t inet_fold(uint32_t sum);

/*
 * Verifies an Ethernet frame carrying IPv4/UDP to port 67 and returns 0 with the UDP
 * payload (borrowed, into frame) in *ret_payload, *ret_len and addresses in *meta, or
 * -EBADMSG with the drop reason in *ret_reason: DHCP_DROP_MALFORMED (truncated, bad
 * lengths), DHCP_DROP_BAD_CHECKSUM, DHCP_DROP_NOT_FOR_US (not IPv4/UDP/67, fragment).
 * csum_not_ready: the kernel says the UDP checksum was not computed (virtual NIC,
 * TP_STATUS_CSUMNOTREADY): it is not verified.
 */
int dhcp_frame_verify(const uint8_t *frame, size_t len, bool csum_not_ready,
    struct dhcp_rx_meta *meta, const uint8_t **ret_payload, size_t *ret_len,
    enum dhcp_drop_reason *ret_reason);

/*
 * Writes Ethernet + IPv4 + UDP headers into the DHCP_FRAME_HEADROOM (42) bytes before
 * payload, with both checksums. Returns the frame length (42 + payload_len).
 */
size_t dhcp_frame_build(uint8_t *payload, size_t payload_len, const uint8_t src_mac[6],
    const uint8_t dst_mac[6], uint32_t src_ip, uint32_t dst_ip, uint16_t src_port,
    uint16_t dst_port);

#endif
