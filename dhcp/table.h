/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_TABLE_H
#define VMDHCP_DHCP_TABLE_H

/*
 * MAC -> binding table. Records are 16 bytes in one dense array of lib/mactable.h, whose two
 * open-addressing (linear probing, backward-shift deletion) index arrays of uint32_t map MAC
 * and IP to a record; hostnames live in one string pool. About 40 bytes per binding in all.
 * Lookups never allocate.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DHCP_BINDING_STALE 0x01	   /* set by sync_begin, cleared by set */
#define DHCP_BINDING_DECLINED 0x02 /* the client declined ip; cleared when ip changes */

struct dhcp_binding {
	uint8_t mac[6];
	uint8_t flags;	       /* DHCP_BINDING_* */
	uint8_t hostname_len;  /* 0 = none */
	uint32_t ip;	       /* host order */
	uint32_t hostname_off; /* into the pool; NUL-terminated there */
};
_Static_assert(sizeof(struct dhcp_binding) == 16, "binding records are 16 bytes");

struct dhcp_table;

/* Returns 0 and a new empty table in *ret, or -ENOMEM. */
int dhcp_table_new(struct dhcp_table **ret);
/* Accepts NULL; returns NULL. */
struct dhcp_table *dhcp_table_free(struct dhcp_table *t);

/*
 * Inserts or updates mac -> ip (hostname borrowed and copied, may be NULL; truncated to
 * 63 bytes). Clears the STALE mark; clears the DECLINED mark when ip changes.
 * Returns 0, -EINVAL (ip 0), -EEXIST (ip bound to another MAC), -ENOMEM.
 */
int dhcp_table_set(struct dhcp_table *t, const uint8_t mac[6], uint32_t ip, const char *hostname);
/* Returns 0 or -ENOENT. */
int dhcp_table_remove(struct dhcp_table *t, const uint8_t mac[6]);
/* Borrowed record, valid until the next set/remove/sync_end; NULL if absent. */
struct dhcp_binding *dhcp_table_lookup(const struct dhcp_table *t, const uint8_t mac[6]);
struct dhcp_binding *dhcp_table_lookup_ip(const struct dhcp_table *t, uint32_t ip);
/* Borrowed NUL-terminated hostname of b, or NULL when it has none. */
const char *dhcp_table_hostname(const struct dhcp_table *t, const struct dhcp_binding *b);
size_t dhcp_table_size(const struct dhcp_table *t);
void dhcp_table_sync_begin(struct dhcp_table *t);
size_t dhcp_table_sync_end(struct dhcp_table *t);
void dhcp_table_foreach(const struct dhcp_table *t,
    void (*fn)(void *userdata, const uint8_t mac[6], uint32_t ip, const char *hostname),
    void *userdata);
/* Bytes of heap held by the table (records, indexes, hostname pool). */
size_t dhcp_table_memory(const struct dhcp_table *t);

#endif
