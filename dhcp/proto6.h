/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_PROTO6_H
#define VMDHCP_DHCP_PROTO6_H

/* DHCPv6 wire constants (RFC 8415 unless noted). Message types are in dhcp/dhcp6.h. */

#include <stddef.h>
#include <stdint.h>

#define DHCP6_CLIENT_PORT 546 /* §7.2 */
#define DHCP6_SERVER_PORT 547

#define DHCP6_HDR_LEN 4		/* msg-type, transaction-id (24 bits) §8 */
#define DHCP6_RELAY_HDR_LEN 34	/* msg-type, hop-count, link-address, peer-address §9 */
#define DHCP6_OPT_HDR_LEN 4	/* option-code, option-len §21.1 */
#define DHCP6_HOP_COUNT_LIMIT 8 /* §7.6 */

/* Option codes (§21 and the RFCs named). */
enum {
	DHCP6_OPT_CLIENTID = 1,
	DHCP6_OPT_SERVERID = 2,
	DHCP6_OPT_IA_NA = 3,
	DHCP6_OPT_IA_TA = 4,
	DHCP6_OPT_IAADDR = 5,
	DHCP6_OPT_ORO = 6,
	DHCP6_OPT_PREFERENCE = 7,
	DHCP6_OPT_ELAPSED_TIME = 8,
	DHCP6_OPT_RELAY_MSG = 9,
	DHCP6_OPT_UNICAST = 12,
	DHCP6_OPT_STATUS_CODE = 13,
	DHCP6_OPT_RAPID_COMMIT = 14,
	DHCP6_OPT_INTERFACE_ID = 18,
	DHCP6_OPT_DNS_SERVERS = 23, /* RFC 3646 */
	DHCP6_OPT_DOMAIN_LIST = 24, /* RFC 3646 */
	DHCP6_OPT_IA_PD = 25,
	DHCP6_OPT_IAPREFIX = 26,
	DHCP6_OPT_CLIENT_LINKLAYER_ADDR = 79, /* RFC 6939 */
};

/* Status codes (§21.13). */
enum {
	DHCP6_STATUS_SUCCESS = 0,
	DHCP6_STATUS_UNSPEC_FAIL = 1,
	DHCP6_STATUS_NO_ADDRS_AVAIL = 2,
	DHCP6_STATUS_NO_BINDING = 3,
	DHCP6_STATUS_NOT_ON_LINK = 4,
	DHCP6_STATUS_USE_MULTICAST = 5,
	DHCP6_STATUS_NO_PREFIX_AVAIL = 6,
};

#define DHCP6_IA_NA_LEN 12	   /* IAID, T1, T2 §21.4 */
#define DHCP6_IA_TA_LEN 4	   /* IAID §21.5 */
#define DHCP6_IAADDR_LEN 24	   /* address, preferred, valid §21.6 */
#define DHCP6_LINKLAYER_ETHERNET 1 /* RFC 6939 link-layer type (ARP hardware type) */
#define DHCP6_DUID_LLT 1	   /* DUID types, RFC 8415 §11.1 */
#define DHCP6_DUID_LL 3
#define DHCP6_LIFETIME_DEFAULT 31536000u /* one year, as IPv4's lease time default */

/* The fixed header of a client/server message (§8). */
struct dhcp6_hdr {
	uint8_t type;
	uint8_t xid[3];
};
_Static_assert(sizeof(struct dhcp6_hdr) == DHCP6_HDR_LEN, "DHCPv6 header is 4 bytes");

/* The fixed header of a relay message (§9). */
struct dhcp6_relay_hdr {
	uint8_t type;
	uint8_t hop_count;
	uint8_t link_address[16];
	uint8_t peer_address[16];
};
_Static_assert(sizeof(struct dhcp6_relay_hdr) == DHCP6_RELAY_HDR_LEN, "relay header is 34 bytes");

#endif
