/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/helpers/ippool-diff.c - the differential check of crds/ippool-text.c shared by its unit
 * test and its fuzz target: ippool_decode_text against json_loadb + ippool_decode on the same
 * bytes.
 */
#ifndef VMDHCP_TESTS_IPPOOL_DIFF_H
#define VMDHCP_TESTS_IPPOOL_DIFF_H

#include <stdbool.h>
#include <stddef.h>

struct ippool_diff {
	bool decoded;	     /* both decoded the text */
	size_t n_allocated;  /* then: status.ipv4.allocated entries */
	size_t n_allocated6; /* and status.ipv6.allocated entries */
};

/*
 * NULL when both agree: the same pool (its encoding and every allocated entry, IPv4 and
 * IPv6) or the same error code, path and message; for a text that is not JSON, ippool_decode_text's
 * -EBADMSG "not JSON: " and jansson's error. Otherwise what differs (static text). out optional.
 */
const char *ippool_diff(const char *text, size_t len, struct ippool_diff *out);

#endif
