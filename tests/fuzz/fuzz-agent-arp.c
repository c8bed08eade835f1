/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: agent_arp_classify (agent/arp.c) on frames as the ARP socket hands them over
 * (any bytes, any length): never reads past the frame; a CLAIM or PROBE is only ever an ARP
 * request or reply for IPv4 over Ethernet about the address asked, from a MAC not ours, whose
 * sender MAC it returns. Anything else traps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/arp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t self[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x01};

static uint32_t
be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *f, mac[6];
	uint32_t ip = 0x0a420001;
	int kind;

	/* an exact-size copy, so ASan sees any read past the frame */
	f = malloc(size ? size : 1);
	if (f == NULL)
		return 0;
	memcpy(f, data, size);
	if (size >= 4) /* sometimes about the address the frame names */
		ip = (data[0] & 1) ? be32(f + (size >= 42 ? 28 : 0)) : 0x0a420001;
	memset(mac, 0xee, sizeof(mac));
	kind = agent_arp_classify(f, size, self, ip, mac);
	if (kind != AGENT_ARP_OTHER) {
		if (size < AGENT_GARP_LEN || f[12] != 0x08 || f[13] != 0x06 ||
		    (f[21] != 1 && f[21] != 2) || memcmp(f + 22, self, 6) == 0 ||
		    memcmp(mac, f + 22, 6) != 0)
			abort();
		if (kind == AGENT_ARP_CLAIM && be32(f + 28) != ip)
			abort();
		if (kind == AGENT_ARP_PROBE &&
		    (be32(f + 28) != 0 || be32(f + 38) != ip || f[21] != 1))
			abort();
	}
	free(f);
	return 0;
}
