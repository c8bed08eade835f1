/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: lib/ip6.c's text parsers and formatter. ipv6_parse accepts a text exactly when
 * inet_pton(AF_INET6) does; ipv6_format of any 16 bytes parses back to the same bytes, names
 * a dotted quad only for IPv4-mapped addresses and otherwise writes what inet_ntop writes;
 * an accepted CIDR has a prefix of 0..128 and reads back the same from "format/prefix". Any
 * difference traps.
 */
#include <arpa/inet.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/ip6.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_format(const struct in6_addr *a)
{
	char out[IPV6_STRLEN], ref[INET6_ADDRSTRLEN];
	struct in6_addr b;
	bool mapped = true;

	for (int i = 0; i < 10; i++)
		mapped &= a->s6_addr[i] == 0;
	mapped &= a->s6_addr[10] == 0xff && a->s6_addr[11] == 0xff;
	ipv6_format(a, out);
	if (strlen(out) >= IPV6_STRLEN || ipv6_parse(out, &b) < 0 || !ipv6_equal(a, &b))
		__builtin_trap();
	if ((strchr(out, '.') != NULL) != mapped)
		__builtin_trap();
	if (inet_ntop(AF_INET6, a, ref, sizeof(ref)) == NULL)
		__builtin_trap();
	if (strchr(ref, '.') == NULL && strcmp(out, ref) != 0)
		__builtin_trap();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char text[128], back[IPV6_STRLEN + 8];
	struct in6_addr a, b, c;
	unsigned prefix = 999, p2;
	int ours, ref;

	if (size >= 16) {
		memcpy(&a, data, 16);
		check_format(&a);
	}
	if (size >= sizeof(text))
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	ours = ipv6_parse(text, &b);
	ref = inet_pton(AF_INET6, text, &c);
	if ((ours == 0) != (ref == 1) || (ours == 0 && !ipv6_equal(&b, &c)))
		__builtin_trap();
	if (ours == 0)
		check_format(&b);

	if (ipv6_cidr_parse(text, &b, &prefix) == 0) {
		char addr[IPV6_STRLEN];

		if (prefix > 128)
			__builtin_trap();
		ipv6_format(&b, addr);
		snprintf(back, sizeof(back), "%s/%u", addr, prefix);
		if (ipv6_cidr_parse(back, &c, &p2) < 0 || !ipv6_equal(&b, &c) || p2 != prefix)
			__builtin_trap();
	}
	return 0;
}
