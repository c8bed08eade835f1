/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: dhcp_foreign_classify (dhcp/foreign.c) on frames as the guard socket hands them
 * over (any bytes, any length), with and without checksum verification: never reads past the
 * frame; a server reply is only ever a BOOTREPLY OFFER, ACK or NAK from UDP port 67 to 68,
 * ours exactly when its MAC or server address is in the own set. Anything else traps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/foreign.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check(const uint8_t *f, size_t size, enum dhcp_foreign_kind k, const struct dhcp_foreign_own *own,
    const struct dhcp_foreign_reply *r)
{
	bool own_hit = false;
	size_t ihl;

	if (k == DHCP_FOREIGN_NONE)
		return;
	if (size < 14 + 20 + 8 + 236 || f[12] != 0x08 || f[13] != 0x00 || f[14] >> 4 != 4)
		abort();
	ihl = (size_t)(f[14] & 0x0f) * 4;
	if (size < 14 + ihl + 8 + 236 || f[23] != 17)
		abort();
	if (f[14 + ihl] != 0 || f[14 + ihl + 1] != 67 || f[14 + ihl + 2] != 0 ||
	    f[14 + ihl + 3] != 68 || f[14 + ihl + 8] != 2)
		abort();
	if (r->msg_type != 2 && r->msg_type != 5 && r->msg_type != 6)
		abort();
	if (memcmp(r->mac, f + 6, 6) != 0)
		abort();
	for (size_t i = 0; i < own->n_mac; i++)
		own_hit |= memcmp(own->mac[i], r->mac, 6) == 0;
	for (size_t i = 0; i < own->n_ip; i++)
		own_hit |= own->ip[i] == r->server_ip;
	if (own_hit && k != DHCP_FOREIGN_OWN)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dhcp_foreign_own own = {.n_mac = 1, .n_ip = 1, .ip = {0x0a000002}};
	struct dhcp_foreign_reply r;
	enum dhcp_foreign_kind k;
	uint8_t *f;

	memcpy(own.mac[0], "\x52\x54\x00\x00\x00\x01", 6);
	/* an exact-size copy, so ASan sees any read past the frame */
	f = malloc(size ? size : 1);
	if (f == NULL)
		return 0;
	memcpy(f, data, size);
	k = dhcp_foreign_classify(f, size, false, &own, &r);
	check(f, size, k, &own, &r);
	k = dhcp_foreign_classify(f, size, true, &own, &r);
	check(f, size, k, &own, &r);
	free(f);
	return 0;
}
