/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_RA_H
#define VMDHCP_DHCP_RA_H

/*
 * Neighbour Discovery messages (RFC 4861) of a DHCPv6 server that is usually not a router:
 * Router Advertisements that tell hosts to use DHCPv6 (M, O) and which prefix is on-link
 * (without SLAAC), the validation of Router Solicitations, and unsolicited Neighbour
 * Advertisements for failover. Builders write the ICMPv6 message only (checksum left 0):
 * packet6_finish_icmp adds the headers and the checksum. Every ND message is sent with
 * hop limit 255 (RFC 4861 §6.1.2, §7.1.2: receivers drop anything else).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>

#include "dhcp/packet6.h"

#define ICMP6_ROUTER_SOLICIT_ 133
#define ICMP6_ROUTER_ADVERT_ 134
#define ICMP6_NEIGHBOR_SOLICIT_ 135
#define ICMP6_NEIGHBOR_ADVERT_ 136

/* Largest RA ra_build writes: header 16 + SLLAO 8 + Prefix Information 32 + MTU 8. */
#define RA_MAX_LEN 64
/* Unsolicited NA: header 24 + Target Link-Layer Address option 8. */
#define NA_LEN 32

struct ra_params {
	bool managed, other;	  /* M: addresses by DHCPv6; O: other configuration by DHCPv6 */
	uint16_t router_lifetime; /* seconds; 0 = not a default router (RFC 4861 §4.2) */
	struct in6_addr prefix;	  /* on-link L=1, autonomous A=0; host bits are cleared */
	uint8_t prefix_len;	  /* 0: no Prefix Information option */
	uint32_t prefix_valid, prefix_preferred; /* seconds (0xffffffff = infinity) */
	uint32_t mtu;				 /* 0: no MTU option */
};

/*
 * Writes a Router Advertisement (type 134, RFC 4861 §4.2) into buf: cur hop limit 0
 * (unspecified: hosts keep their own), M/O from params, router lifetime, reachable time and
 * retrans timer 0 (unspecified), a Source Link-Layer Address option (src_mac), the Prefix
 * Information option when prefix_len > 0, the MTU option when mtu > 0. Returns its length, 0
 * when cap is too small (RA_MAX_LEN always fits). Sent from the link-local address to
 * ff02::1, or to the soliciting host (RFC 4861 §6.2.6).
 */
size_t ra_build(uint8_t *buf, size_t cap, const struct ra_params *p, const uint8_t src_mac[6]);

/*
 * Whether f (from packet6_parse, so the checksum is good) is a valid Router Solicitation,
 * RFC 4861 §6.1.1: ICMPv6, hop limit 255, type 133, code 0, ICMP length >= 8, every option's
 * length non-zero and within the message, no Source Link-Layer Address option when the
 * source is the unspecified address. 0 or -EBADMSG.
 */
int ra_check_solicit(const struct ip6_frame *f);

/*
 * The Source Link-Layer Address option of a valid Router Solicitation (6 bytes copied to
 * ret), or -ENOENT when it has none.
 */
int ra_solicit_sllao(const struct ip6_frame *f, uint8_t ret[6]);

/*
 * Writes an unsolicited Neighbour Advertisement (type 136, RFC 4861 §4.4): R=0 (not a
 * router), S=0 (unsolicited), O=1 (override caches), target, and a Target Link-Layer Address
 * option with mac. Returns NA_LEN, or 0 when cap is too small. RFC 4861 §7.2.6: sent to
 * ff02::1 (all-nodes, 33:33:00:00:00:01) with hop limit 255, from an address of the
 * interface (the target itself when it has moved to us).
 */
size_t na_build_unsolicited(
    uint8_t *buf, size_t cap, const struct in6_addr *target, const uint8_t mac[6]);

#endif
