/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_IP6_H
#define VMDHCP_LIB_IP6_H

/*
 * IPv6 addresses: parse, format, prefixes and 128-bit arithmetic, for the API codec (crds/),
 * IPAM (ipam/), the DHCPv6 engine (dhcp/) and the agent. Addresses are struct in6_addr
 * (network byte order, as the wire has them); offsets and range sizes are ip6_u128.
 */

#include <stdbool.h>
#include <stdint.h>

#include <netinet/in.h>

/* INET6_ADDRSTRLEN: "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255" + NUL */
#define IPV6_STRLEN 46

typedef unsigned __int128 ip6_u128;

/*
 * A textual IPv6 address as inet_pton(AF_INET6) reads it (RFC 4291 §2.2: hex groups, "::",
 * a trailing dotted quad), and nothing else: no zone ("%eth0"), no brackets, no prefix, no
 * spaces. 0 or -EINVAL.
 */
int ipv6_parse(const char *s, struct in6_addr *ret);
/* RFC 5952 text: lower case, the longest run of zero groups as "::". */
void ipv6_format(const struct in6_addr *a, char out[IPV6_STRLEN]);
/* "addr/n" with 0 <= n <= 128 -> the address as written (host bits kept) and n. 0, -EINVAL. */
int ipv6_cidr_parse(const char *s, struct in6_addr *ret_addr, unsigned *ret_prefix);

/* Byte order: memcmp order, which is numeric order. <0, 0, >0. */
int ipv6_cmp(const struct in6_addr *a, const struct in6_addr *b);
static inline bool
ipv6_equal(const struct in6_addr *a, const struct in6_addr *b)
{
	return ipv6_cmp(a, b) == 0;
}
bool ipv6_is_zero(const struct in6_addr *a);

/* The 128-bit number of a and back. */
ip6_u128 ipv6_to_u128(const struct in6_addr *a);
void ipv6_from_u128(ip6_u128 v, struct in6_addr *ret);
/* a's first `prefix` bits, the rest zero (prefix 0..128). */
void ipv6_prefix_network(const struct in6_addr *a, unsigned prefix, struct in6_addr *ret);
/* Whether a is inside net/prefix (net's host bits are ignored). */
bool ipv6_in_prefix(const struct in6_addr *a, const struct in6_addr *net, unsigned prefix);
/* The last address of net/prefix (all host bits set). */
void ipv6_prefix_last(const struct in6_addr *net, unsigned prefix, struct in6_addr *ret);

/* Link-local fe80::/64 with the modified EUI-64 interface identifier of mac (RFC 4291 App. A). */
void ipv6_link_local_from_mac(const uint8_t mac[6], struct in6_addr *ret);
/* Whether a is link-local unicast (fe80::/10). */
bool ipv6_is_link_local(const struct in6_addr *a);
/* Whether a is multicast (ff00::/8). */
bool ipv6_is_multicast(const struct in6_addr *a);
/* Solicited-node multicast address ff02::1:ffXX:XXXX of a (RFC 4291 §2.7.1). */
void ipv6_solicited_node(const struct in6_addr *a, struct in6_addr *ret);
/* Ethernet address of multicast group a: 33:33 + its last 32 bits (RFC 2464 §7). */
void ipv6_multicast_mac(const struct in6_addr *a, uint8_t ret[6]);

/* A hash of a (non-cryptographic). */
uint64_t ipv6_hash(const struct in6_addr *a);

#endif
