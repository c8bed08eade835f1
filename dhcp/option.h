/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_OPTION_H
#define VMDHCP_DHCP_OPTION_H

/*
 * Received options, parsed once into a table by code (OpenBSD dhcpd's parse_option_buffer
 * pattern): after dhcp_option_parse() a lookup is dhcp_option_get(t, CODE, &len).
 * Option overload (52) is handled here, not by callers. Values point into the message
 * (borrowed) or, for an option split over several instances (RFC 3396), into the table's
 * scratch space.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DHCP_OPTION_SCRATCH 1024

struct dhcp_option_table {
	uint8_t present[32];	 /* bitmap by code; the only part cleared per packet */
	uint16_t len[256];	 /* valid when present */
	const uint8_t *val[256]; /* borrowed; valid when present */
	size_t scratch_used;
	uint8_t scratch[DHCP_OPTION_SCRATCH]; /* RFC 3396 concatenations */
};

static inline bool
dhcp_option_has(const struct dhcp_option_table *t, uint8_t code)
{
	return (t->present[code >> 3] >> (code & 7)) & 1;
}

/* Returns the value (borrowed) and its length, or NULL when absent. */
static inline const uint8_t *
dhcp_option_get(const struct dhcp_option_table *t, uint8_t code, size_t *ret_len)
{
	if (!dhcp_option_has(t, code))
		return NULL;
	*ret_len = t->len[code];
	return t->val[code];
}

/*
 * Parses the options of a whole DHCP message (msg, len: the BOOTP header onwards; borrowed
 * and must outlive the table's use): the magic cookie, the options field, then `file` and
 * `sname` when option 52 says they are overloaded (RFC 2131 §4.1 order). Option 52 is only
 * honoured in the options field, so overload cannot loop. Returns 0, or -EBADMSG for a
 * short message, a bad cookie, an option running past its area, or a bad option 52.
 */
int dhcp_option_parse(struct dhcp_option_table *t, const uint8_t *msg, size_t len);

/* Option 57 clamped to [576, 65535]; 576 when absent or malformed. */
uint16_t dhcp_option_max_size(const struct dhcp_option_table *t);

/* Reads a 4-byte address option into *ret (host order). -ENOENT when absent, -EBADMSG bad. */
int dhcp_option_get_addr(const struct dhcp_option_table *t, uint8_t code, uint32_t *ret);

#endif
