/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_ADMIT_IPPOOL_LOAD_H
#define VMDHCP_CONTROLLER_ADMIT_IPPOOL_LOAD_H

/*
 * An IPPool object as its admission rules (admit-ippool.c) read it: the spec's address fields
 * as written, their values in upstream's util.PoolInfo (harvester/vm-dhcp-controller
 * pkg/util/network.go LoadPool), and status.ipv4.allocated as its LoadAllocated reads it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "controller/admit-internal.h"
#include "crds/ippool.h"
#include "lib/util.h"

/* The spec's address fields as written (NULL: absent, Go's ""). */
struct raw_pool {
	const json_t *spec, *v4, *pool, *exclude;
	const char *network, *cidr, *server, *router, *start, *end;
};

/* upstream's util.PoolInfo, plus the excludes (sorted, unique). */
struct pinfo {
	uint32_t net, mask, bcast;
	unsigned prefix;
	bool has_start, has_end, has_server, has_router;
	uint32_t start, end, server, router;
	uint32_t *excl;
	size_t n_excl;
};

/* One status.ipv4.allocated entry, read as upstream's LoadAllocated reads it. */
struct st_entry {
	uint32_t addr;
	enum ippool_alloc_kind kind;
	bool mac_ok;
	uint8_t mac[MAC_LEN];
	char raw[MAC_STRLEN + 8];
};

struct st_list {
	struct st_entry *e;
	size_t n;
};

/* The shape Go's decoder needs: 0 and rp (borrowing obj), or -1 (refused, 400). */
int admit_raw_pool_load(struct admit_ctx *c, const json_t *obj, struct raw_pool *rp);
/* LoadPool's order (cidr, start, end, serverIP, router), then the excludes: 0, -1 with
 * Go's message in reason, -ENOMEM. Cleared with admit_pinfo_clear in every case. */
int admit_pinfo_load(const struct raw_pool *rp, struct pinfo *pi, char *reason, size_t len);
void admit_pinfo_clear(struct pinfo *pi);
/* a is in pool.exclude. */
bool admit_pinfo_excluded(const struct pinfo *pi, uint32_t a);
/* status.ipv4.allocated of obj (unparsable keys skipped), sorted by address: 0 or -ENOMEM;
 * free(st->e). */
int admit_st_load(const json_t *obj, struct st_list *st);
/* The entry of a in st, or NULL. */
const struct st_entry *admit_st_find(const struct st_list *st, uint32_t a);

#endif
