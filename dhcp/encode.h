/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_ENCODE_H
#define VMDHCP_DHCP_ENCODE_H

/*
 * Option encoders and the compiled option set. dhcp_server_set_options() compiles a
 * struct dhcp_options once into ready-to-copy TLV bytes per option code, so building a
 * reply is a handful of memcpy calls.
 */

#include <stddef.h>
#include <stdint.h>

#include "dhcp/boot.h"
#include "dhcp/dhcp.h"

/* lease_time 0: one year, as harvester/vm-dhcp-controller's agent serves an unset or
 * non-positive leaseTime (upstream pkg/dhcp/dhcp.go) */
#define DHCP_DEFAULT_LEASE_TIME 31536000u
#define DHCP_OPTSET_BLOB 8192

struct dhcp_optset {
	struct dhcp_options o; /* the validated source */
	uint16_t off[256];     /* TLV bytes of option `code` start at blob + off[code] */
	uint16_t len[256];     /* ... and are len[code] long (header(s) included); 0 = none */
	size_t blob_len;
	uint8_t blob[DHCP_OPTSET_BLOB];
	struct dhcp_boot_set boot; /* network boot answers (dhcp/boot.h) */
};

/*
 * RFC 1035 §4.1.4 compressed encoding of a list of domain names, as option 119 carries it
 * (RFC 3397: pointers are offsets from the start of the option data). names: n
 * NUL-terminated names (a trailing dot is accepted). Writes at most cap bytes into out.
 * Returns the length, -EINVAL for a bad name (empty label, label > 63, name > 253), or
 * -ENOBUFS when cap is too small.
 */
int dhcp_encode_search(const char (*names)[256], size_t n, uint8_t *out, size_t cap);

/*
 * RFC 3442 classless static routes (option 121 data): width, significant destination
 * octets, gateway. When default_router is non-zero and no route is 0.0.0.0/0, it is
 * appended as the default route (a client that gets 121 ignores option 3).
 * Returns the length, -EINVAL (prefix > 32) or -ENOBUFS.
 */
int dhcp_encode_routes(
    const struct dhcp_route *routes, size_t n, uint32_t default_router, uint8_t *out, size_t cap);

/*
 * Writes option code with data as one or more TLVs (RFC 3396 split above 255 bytes).
 * Returns bytes written or -ENOBUFS (nothing written).
 */
int dhcp_encode_tlv(uint8_t code, const uint8_t *data, size_t len, uint8_t *out, size_t cap);

/* Validates *o (borrowed) and compiles it into *set. -EINVAL on bad input. */
int dhcp_optset_compile(struct dhcp_optset *set, const struct dhcp_options *o);

#endif
