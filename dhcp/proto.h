/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_PROTO_H
#define VMDHCP_DHCP_PROTO_H

/*
 * DHCPv4 wire format (RFC 2131 §2, RFC 2132) and the Ethernet/IPv4/UDP headers the engine
 * builds and verifies itself. Multi-byte fields are in network byte order on the wire; the
 * structs are only ever read/written through be16_get/be32_get/be16_put/be32_put.
 */

#include <stdint.h>

#define DHCP_PORT_SERVER 67
#define DHCP_PORT_CLIENT 68

#define BOOTREQUEST 1
#define BOOTREPLY 2

#define DHCP_HTYPE_ETHER 1 /* ARPHRD_ETHER */
#define DHCP_FLAG_BROADCAST 0x8000
#define DHCP_MAGIC_COOKIE UINT32_C(0x63825363)

#define DHCP_FIXED_LEN 236    /* BOOTP fixed header (up to and without the cookie) */
#define DHCP_MIN_MESSAGE 300  /* BOOTP minimum: replies are padded to this (RFC 1542 §3.3) */
#define DHCP_MIN_MAX_SIZE 576 /* smallest legal option 57 value (RFC 2132 §9.10) */
#define DHCP_IP_UDP_LEN 28    /* IPv4 (no options) + UDP headers, counted by option 57 */

/* BOOTP/DHCP fixed header (RFC 2131 §2, figure 1). */
struct dhcp_msg {
	uint8_t op;	    /* BOOTREQUEST / BOOTREPLY */
	uint8_t htype;	    /* hardware address type, 1 = Ethernet */
	uint8_t hlen;	    /* hardware address length, 6 for Ethernet */
	uint8_t hops;	    /* relay hop count */
	uint8_t xid[4];	    /* transaction id chosen by the client */
	uint8_t secs[2];    /* seconds since the client began */
	uint8_t flags[2];   /* bit 15: broadcast */
	uint8_t ciaddr[4];  /* client address (BOUND/RENEW/REBIND, INFORM) */
	uint8_t yiaddr[4];  /* "your" address, filled by the server */
	uint8_t siaddr[4];  /* next server (TFTP): set in boot answers only */
	uint8_t giaddr[4];  /* relay agent address */
	uint8_t chaddr[16]; /* client hardware address */
	uint8_t sname[64];  /* server host name, or options when overloaded (52) */
	uint8_t file[128];  /* boot file name, or options when overloaded (52) */
} __attribute__((packed));
_Static_assert(sizeof(struct dhcp_msg) == DHCP_FIXED_LEN, "BOOTP header is 236 bytes");

/* Option codes (RFC 2132 and later). */
enum {
	DHCP_OPT_PAD = 0,
	DHCP_OPT_SUBNET_MASK = 1,
	DHCP_OPT_ROUTER = 3,
	DHCP_OPT_DNS = 6,
	DHCP_OPT_HOSTNAME = 12,
	DHCP_OPT_DOMAIN_NAME = 15,
	DHCP_OPT_MTU = 26,
	DHCP_OPT_BROADCAST = 28,
	DHCP_OPT_NTP = 42,
	DHCP_OPT_REQUESTED_IP = 50,
	DHCP_OPT_LEASE_TIME = 51,
	DHCP_OPT_OVERLOAD = 52,
	DHCP_OPT_MESSAGE_TYPE = 53,
	DHCP_OPT_SERVER_ID = 54,
	DHCP_OPT_PRL = 55,
	DHCP_OPT_MESSAGE = 56,
	DHCP_OPT_MAX_SIZE = 57,
	DHCP_OPT_T1 = 58,
	DHCP_OPT_T2 = 59,
	DHCP_OPT_VENDOR_CLASS = 60,
	DHCP_OPT_CLIENT_ID = 61,
	DHCP_OPT_TFTP_SERVER = 66,
	DHCP_OPT_BOOTFILE = 67,
	DHCP_OPT_USER_CLASS = 77,
	DHCP_OPT_RELAY_AGENT = 82,
	DHCP_OPT_CLIENT_ARCH = 93, /* RFC 4578 §2.1 */
	DHCP_OPT_CLIENT_NDI = 94,  /* RFC 4578 §2.2 */
	DHCP_OPT_CLIENT_UUID = 97, /* RFC 4578 §2.5 */
	DHCP_OPT_DOMAIN_SEARCH = 119,
	DHCP_OPT_CLASSLESS_ROUTES = 121,
	DHCP_OPT_END = 255,
};

/* Option 52 values (RFC 2132 §9.3). */
#define DHCP_OVERLOAD_FILE 1
#define DHCP_OVERLOAD_SNAME 2

/* Link/network/transport headers of frames on the packet socket. */
#define ETH_ALEN_ 6
#define ETHERTYPE_IPV4 0x0800
#define IPPROTO_UDP_ 17

struct eth_hdr {
	uint8_t dst[6];
	uint8_t src[6];
	uint8_t type[2]; /* 0x0800 */
} __attribute__((packed));
_Static_assert(sizeof(struct eth_hdr) == 14, "Ethernet header is 14 bytes");

struct ipv4_hdr {
	uint8_t ver_ihl; /* version 4 << 4 | header length in 32-bit words */
	uint8_t tos;
	uint8_t tot_len[2]; /* header + payload */
	uint8_t id[2];
	uint8_t frag[2]; /* flags (3 bits: 0, DF, MF) + fragment offset (13 bits) */
	uint8_t ttl;
	uint8_t protocol; /* 17 = UDP */
	uint8_t check[2]; /* RFC 1071 over the header */
	uint8_t saddr[4];
	uint8_t daddr[4];
} __attribute__((packed));
_Static_assert(sizeof(struct ipv4_hdr) == 20, "IPv4 header is 20 bytes");

struct udp_hdr {
	uint8_t source[2];
	uint8_t dest[2];
	uint8_t len[2];	  /* header + payload */
	uint8_t check[2]; /* RFC 768: over pseudo-header + UDP; 0 = none */
} __attribute__((packed));
_Static_assert(sizeof(struct udp_hdr) == 8, "UDP header is 8 bytes");

#define DHCP_FRAME_HEADROOM                                                                        \
	(sizeof(struct eth_hdr) + sizeof(struct ipv4_hdr) + sizeof(struct udp_hdr))
_Static_assert(DHCP_FRAME_HEADROOM == 42, "Ethernet + IPv4 + UDP headers are 42 bytes");

#endif
