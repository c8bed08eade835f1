/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_BOOT_H
#define VMDHCP_DHCP_BOOT_H

/*
 * Network boot (internal to dhcp/): what a request says about the client's firmware (options
 * 60, 77, 93, 94, 97), the answer chosen for it, and the bytes that answer adds to a reply.
 *
 * Received (RFC 4578, RFC 3004, PXE 2.1, UEFI 2.x §24 HTTP boot):
 *  - 93 client system architecture: a list of 16-bit types, length 2n, n >= 1; the first is
 *    the one answered (RFC 4578 §2.1: "the client's pre-boot runtime environment(s)").
 *  - 94 client network interface identifier: 3 bytes, type 1 (UNDI), major, minor.
 *  - 97 client machine identifier: type 0 then a 16-byte UUID (17 bytes).
 *  - 60 vendor class: "PXEClient:Arch:xxxxx:UNDI:yyyzzz" (PXE) or "HTTPClient:..." (UEFI
 *    HTTP boot): the prefix is what counts.
 *  - 77 user class: RFC 3004 (length-prefixed instances) or, as iPXE sends it, the plain
 *    string "iPXE" (src/net/udp/dhcp.c: DHCP_USER_CLASS_ID, DHCP_STRING('i','P','X','E')).
 * A malformed 93, 94 or 97 is ignored (the request is answered as if it were absent) and
 * counted (dhcp_stats.boot_malformed); a 77 that is neither form is not "iPXE".
 *
 * Sent in a boot answer (OFFER/ACK, never NAK):
 *  - siaddr = nextServer; the file in the BOOTP `file` field when it fits (127 bytes + NUL);
 *  - option 67 when the client asked for it (option 55) or the name is too long for `file`
 *    (RFC 2132 §9.5), then mandatory;
 *  - option 66 when configured and the client asked for it or is PXE;
 *  - option 60 "HTTPClient" for an HTTP boot answer (UEFI 2.x §24.7.2: the client only takes
 *    an offer naming HTTPClient), else "PXEClient" to a PXE client (PXE 2.1 §2.2.4);
 *  - option 97 echoed to a PXE client that sent it (RFC 4578 §2.5 note, PXE 2.1 table 2-1).
 * Everything else is as for any client: a request that is not a boot client's, or a pool
 * with no boot configuration, gets the same bytes as before boot answers existed.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dhcp/dhcp.h"
#include "dhcp/option.h"
#include "dhcp/proto.h"

#define DHCP_BOOT_FILE_FIELD_MAX 127 /* the BOOTP file field, NUL-terminated */

/* The compiled boot part of an option set (dhcp_optset.boot). */
struct dhcp_boot_set {
	bool any;			   /* a file for some kind */
	uint16_t file_len[_DHCP_BOOT_MAX]; /* strlen of o.boot.files[k]; 0 = none */
	uint8_t opt67[_DHCP_BOOT_MAX][2 + DHCP_BOOT_NAME_MAX]; /* TLV, file_len + 2 bytes */
	uint8_t opt66[2 + DHCP_BOOT_NAME_MAX];
	uint16_t opt66_len; /* TLV length; 0 = none */
};

/* What a request says and the answer chosen (dhcp_request.boot). */
struct dhcp_boot_req {
	int8_t kind;	     /* enum dhcp_boot_kind; -1: not a boot client */
	bool pxe;	     /* option 60 begins with "PXEClient" */
	bool http;	     /* option 60 begins with "HTTPClient" */
	bool ipxe;	     /* option 77 is or holds "iPXE" */
	bool has_arch;	     /* a well-formed option 93: */
	uint16_t arch;	     /* its first type */
	const uint8_t *uuid; /* a well-formed option 97 (17 bytes, borrowed), or NULL */
};

/* Validates b (strings NUL-terminated in their arrays) and compiles it. -EINVAL. */
int dhcp_boot_compile(struct dhcp_boot_set *set, const struct dhcp_boot *b);

/*
 * Reads options 60, 77, 93, 94, 97 of opts and chooses the answer from set: iPXE with an
 * ipxeScript -> DHCP_BOOT_IPXE; else the kind of the first option 93 type when a file is
 * configured for it; else DHCP_BOOT_OTHER for a boot client (93, a PXE/HTTP vendor class or
 * iPXE) and -1 for any other or when the set has no file at all. Returns true when a boot
 * client's 93, 94 or 97 was malformed (then ignored).
 */
bool dhcp_boot_classify(const struct dhcp_boot_set *set, const struct dhcp_option_table *opts,
    struct dhcp_boot_req *ret);

/* The kind an option 93 type is answered as; DHCP_BOOT_OTHER for an unknown type. */
enum dhcp_boot_kind dhcp_boot_arch_kind(uint16_t arch);

/* Whether req gets a file (kind below DHCP_BOOT_OTHER). */
static inline bool
dhcp_boot_answers(const struct dhcp_boot_req *req)
{
	return req->kind >= 0 && req->kind < DHCP_BOOT_OTHER;
}

/* siaddr and `file` of a boot answer into the reply header m (nothing for other requests). */
void dhcp_boot_header(const struct dhcp_boot_set *set, const struct dhcp_boot *b,
    const struct dhcp_boot_req *req, struct dhcp_msg *m);

/*
 * The TLV of option code (60, 66, 67 or 97) in this boot answer, or NULL (len 0) when not sent.
 * asked: the client listed code in option 55. *ret_mandatory: kept even when option 57 is
 * tight (67 when `file` cannot carry the name, 60 and 97 echoes). uuid_tlv: 19 bytes of
 * scratch for the option 97 echo.
 */
const uint8_t *dhcp_boot_option(const struct dhcp_boot_set *set, const struct dhcp_boot_req *req,
    uint8_t code, bool asked, uint8_t uuid_tlv[19], size_t *ret_len, bool *ret_mandatory);

#endif
