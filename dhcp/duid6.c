/* SPDX-License-Identifier: Apache-2.0 */
/* The server DUID of a pool: DUID-UUID (RFC 6355) from a hash of "namespace/name". */
#include <string.h>

#include "dhcp/dhcp6-internal.h"
#include "lib/buf.h"

#define DUID_TYPE_UUID 4 /* RFC 6355 §4 */

/* FNV-1a 64 over "ns/name", from a given offset basis. */
static uint64_t
fnv1a(uint64_t h, const char *ns, const char *name)
{
	const char *parts[3] = {ns, "/", name};

	for (size_t k = 0; k < 3; k++)
		for (const unsigned char *p = (const unsigned char *)parts[k]; *p != '\0'; p++) {
			h ^= *p;
			h *= 0x100000001b3ull;
		}
	return h;
}

/*
 * The UUID is two FNV-1a 64 hashes of "ns/name" (different offset bases), with the RFC 9562
 * version 8 (custom) and variant bits set. Never change this: a pool's DUID must be the same
 * on every replica and across upgrades, or clients lose their Server Identifier.
 */
size_t
dhcp6_duid_for_pool(const char *pool_ns, const char *pool_name, uint8_t *out)
{
	uint64_t a = fnv1a(0xcbf29ce484222325ull, pool_ns, pool_name);
	uint64_t b = fnv1a(0x6c62272e07bb0142ull ^ a, pool_ns, pool_name);

	be16_put(out, DUID_TYPE_UUID);
	for (int i = 0; i < 8; i++) {
		out[2 + i] = (uint8_t)(a >> (56 - 8 * i));
		out[10 + i] = (uint8_t)(b >> (56 - 8 * i));
	}
	out[2 + 6] = (uint8_t)((out[2 + 6] & 0x0f) | 0x80); /* version 8 */
	out[2 + 8] = (uint8_t)((out[2 + 8] & 0x3f) | 0x80); /* variant 10 */
	return 18;
}
