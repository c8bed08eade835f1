/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_IPAM_INTERNAL_H
#define VMDHCP_IPAM_INTERNAL_H

/* Body of struct ipam_pool, for ipam/ itself and its tests. */

#include <stdint.h>

#include "ipam/ipam.h"

#define IPAM_RESERVED_MAX 4 /* network, broadcast, server IP, router */

struct ipam_pool {
	uint32_t network;   /* masked CIDR address */
	uint32_t broadcast; /* last address of the CIDR */
	unsigned prefix;
	uint32_t server_ip; /* 0 = none */
	uint32_t router;    /* 0 = none */

	uint32_t start;
	uint32_t end;
	uint32_t size; /* end - start + 1 */

	/*
	 * Bit i stands for address start + i. used: USED. blocked: EXCLUDED or RESERVED,
	 * and every bit past `size` in the last word (so scans need no tail check).
	 */
	uint64_t *used;
	uint64_t *blocked;
	size_t nwords;
	/*
	 * Summary: bit w set when word w of used|blocked has a free bit. One
	 * bit per 64 addresses, 128 bytes for a /16; lets allocation skip full words 64 at a
	 * time, so even a full pool with random releases allocates in O(range / 4096).
	 */
	uint64_t *nonfull;
	size_t nsummary;
	/* Low-water hint: every word below it has used|blocked == all ones. */
	size_t hint;

	uint32_t reserved[IPAM_RESERVED_MAX]; /* RESERVED addresses inside the range */
	unsigned n_reserved;

	uint32_t n_used;
	uint32_t n_excluded;
};

static inline uint64_t
ipam_tail_mask(uint32_t size)
{
	/* Bits of the last word that lie past the range (0 when the range fills it). */
	unsigned r = size % 64;
	return r == 0 ? 0 : ~UINT64_C(0) << r;
}

/* Fill the range part of p (bitmaps, reserved, excludes) for [start, end]. */
int ipam_pool_init_range(
    struct ipam_pool *p, uint32_t start, uint32_t end, const uint32_t *excludes, size_t n_excludes);

/* Recompute every summary bit from used|blocked (after bulk changes). */
void ipam_pool_summary_rebuild(struct ipam_pool *p);

#endif
