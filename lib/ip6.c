/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/ip6.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/util.h"

int
ipv6_parse(const char *s, struct in6_addr *ret)
{
	struct in6_addr a;

	if (s == NULL || strlen(s) >= IPV6_STRLEN)
		return -EINVAL;
	if (inet_pton(AF_INET6, s, &a) != 1)
		return -EINVAL;
	*ret = a;
	return 0;
}

/*
 * RFC 5952 §4: lower-case hex without leading zeros (§4.1, §4.3); "::" for the longest run of
 * two or more zero groups, the first of equal runs (§4.2). §5: the dotted quad only for
 * IPv4-mapped addresses (::ffff:0:0/96), which is where inet_ntop differs: glibc writes
 * "::0.2.0.3" for ::2:3 (the deprecated IPv4-compatible form).
 */
void
ipv6_format(const struct in6_addr *a, char out[IPV6_STRLEN])
{
	static const char hex[] = "0123456789abcdef";
	unsigned g[8], best = 0, best_len = 0, groups = 8;
	char *o = out;

	for (unsigned i = 0; i < 8; i++)
		g[i] = (unsigned)a->s6_addr[2 * i] << 8 | a->s6_addr[2 * i + 1];
	if (g[0] == 0 && g[1] == 0 && g[2] == 0 && g[3] == 0 && g[4] == 0 && g[5] == 0xffff)
		groups = 6; /* IPv4-mapped: the last 32 bits as a dotted quad */
	for (unsigned i = 0; i < groups;) {
		unsigned j = i;

		while (j < groups && g[j] == 0)
			j++;
		if (j - i > best_len) {
			best = i;
			best_len = j - i;
		}
		i = j == i ? i + 1 : j;
	}
	if (best_len < 2)
		best_len = 0;
	for (unsigned i = 0; i < groups; i++) {
		bool lead = true;

		if (best_len > 0 && i == best) {
			*o++ = ':';
			if (i == 0)
				*o++ = ':';
			i += best_len - 1;
			continue;
		}
		for (int shift = 12; shift >= 0; shift -= 4) {
			unsigned d = (g[i] >> shift) & 0xf;

			if (d == 0 && lead && shift > 0)
				continue;
			lead = false;
			*o++ = hex[d];
		}
		if (i + 1 < groups || groups == 6)
			*o++ = ':';
	}
	if (groups == 6)
		o += sprintf(o, "%u.%u.%u.%u", a->s6_addr[12], a->s6_addr[13], a->s6_addr[14],
		    a->s6_addr[15]);
	*o = '\0';
}

int
ipv6_cidr_parse(const char *s, struct in6_addr *ret_addr, unsigned *ret_prefix)
{
	char tmp[IPV6_STRLEN];
	const char *slash;
	struct in6_addr a;
	uint64_t prefix;
	size_t n;

	if (s == NULL || (slash = strchr(s, '/')) == NULL)
		return -EINVAL;
	n = (size_t)(slash - s);
	if (n == 0 || n >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (ipv6_parse(tmp, &a) < 0)
		return -EINVAL;
	if (slash[1] == '0' && slash[2] != '\0')
		return -EINVAL;
	if (parse_uint(slash + 1, 0, 128, &prefix) < 0)
		return -EINVAL;
	*ret_addr = a;
	*ret_prefix = (unsigned)prefix;
	return 0;
}

int
ipv6_cmp(const struct in6_addr *a, const struct in6_addr *b)
{
	return memcmp(a->s6_addr, b->s6_addr, 16);
}

bool
ipv6_is_zero(const struct in6_addr *a)
{
	static const struct in6_addr zero;

	return ipv6_cmp(a, &zero) == 0;
}

ip6_u128
ipv6_to_u128(const struct in6_addr *a)
{
	ip6_u128 v = 0;

	for (unsigned i = 0; i < 16; i++)
		v = v << 8 | a->s6_addr[i];
	return v;
}

void
ipv6_from_u128(ip6_u128 v, struct in6_addr *ret)
{
	for (int i = 15; i >= 0; i--) {
		ret->s6_addr[i] = (uint8_t)v;
		v >>= 8;
	}
}

static ip6_u128
prefix_mask(unsigned prefix)
{
	if (prefix == 0)
		return 0;
	if (prefix >= 128)
		return ~(ip6_u128)0;
	return ~(ip6_u128)0 << (128 - prefix);
}

void
ipv6_prefix_network(const struct in6_addr *a, unsigned prefix, struct in6_addr *ret)
{
	ipv6_from_u128(ipv6_to_u128(a) & prefix_mask(prefix), ret);
}

bool
ipv6_in_prefix(const struct in6_addr *a, const struct in6_addr *net, unsigned prefix)
{
	ip6_u128 m = prefix_mask(prefix);

	return (ipv6_to_u128(a) & m) == (ipv6_to_u128(net) & m);
}

void
ipv6_prefix_last(const struct in6_addr *net, unsigned prefix, struct in6_addr *ret)
{
	ip6_u128 m = prefix_mask(prefix);

	ipv6_from_u128((ipv6_to_u128(net) & m) | ~m, ret);
}

void
ipv6_link_local_from_mac(const uint8_t mac[6], struct in6_addr *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->s6_addr[0] = 0xfe;
	ret->s6_addr[1] = 0x80;
	ret->s6_addr[8] = mac[0] ^ 0x02; /* the universal/local bit inverted */
	ret->s6_addr[9] = mac[1];
	ret->s6_addr[10] = mac[2];
	ret->s6_addr[11] = 0xff;
	ret->s6_addr[12] = 0xfe;
	ret->s6_addr[13] = mac[3];
	ret->s6_addr[14] = mac[4];
	ret->s6_addr[15] = mac[5];
}

bool
ipv6_is_link_local(const struct in6_addr *a)
{
	return a->s6_addr[0] == 0xfe && (a->s6_addr[1] & 0xc0) == 0x80;
}

bool
ipv6_is_multicast(const struct in6_addr *a)
{
	return a->s6_addr[0] == 0xff;
}

void
ipv6_solicited_node(const struct in6_addr *a, struct in6_addr *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->s6_addr[0] = 0xff;
	ret->s6_addr[1] = 0x02;
	ret->s6_addr[11] = 0x01;
	ret->s6_addr[12] = 0xff;
	memcpy(&ret->s6_addr[13], &a->s6_addr[13], 3);
}

void
ipv6_multicast_mac(const struct in6_addr *a, uint8_t ret[6])
{
	ret[0] = 0x33;
	ret[1] = 0x33;
	memcpy(&ret[2], &a->s6_addr[12], 4);
}

uint64_t
ipv6_hash(const struct in6_addr *a)
{
	return hash64(a->s6_addr, 16, 0x6a09e667f3bcc908ULL);
}
