/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_HMAP_H
#define VMDHCP_LIB_HMAP_H

/*
 * The project's hash map: intrusive and chained, after Open vSwitch's hmap. The caller embeds
 * a struct hmap_node in its record, computes the hash (lib/util.h's hash64) and compares keys
 * itself while walking the nodes of one hash; the map only keeps the chains and grows them.
 * Nothing is allocated per insertion, records keep their addresses, and removal during a
 * walk is safe when the next node is taken first (HMAP_FOR_EACH_SAFE).
 *
 *	struct item { struct hmap_node node; char key[]; };
 *	uint64_t h = hash64(key, strlen(key), 0);
 *	HMAP_FOR_EACH_WITH_HASH (it, node, h, &map)
 *		if (strcmp(it->key, key) == 0)
 *			return it;
 *
 * The slot array doubles when the count reaches it (load factor at most 1); a failed growth
 * leaves the map as it was and longer chains, never a lost record.
 */

#include <stddef.h>
#include <stdint.h>

struct hmap_node {
	struct hmap_node *next;
	uint64_t hash;
};

struct hmap {
	struct hmap_node **slots; /* NULL until the first insertion */
	size_t mask;		  /* slots - 1 */
	size_t count;
};

#define HMAP_INITIALIZER                                                                           \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

#define HMAP_CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* Frees the slot array (not the records: free them first, e.g. with HMAP_FOR_EACH_SAFE). */
void hmap_destroy(struct hmap *m);
/* Makes room for n records without growing later: 0 or -ENOMEM (the map is unchanged). */
int hmap_reserve(struct hmap *m, size_t n);
/*
 * Links node under hash; duplicates are the caller's business. Grows when needed; when growth
 * fails the node is still linked (into a longer chain). Only the very first insertion can
 * fail (-ENOMEM, node not linked), when no slot array could be allocated at all.
 */
int hmap_insert(struct hmap *m, struct hmap_node *node, uint64_t hash);
/* Unlinks a node that is in the map. */
void hmap_remove(struct hmap *m, struct hmap_node *node);

static inline size_t
hmap_count(const struct hmap *m)
{
	return m->count;
}

/* The first node whose hash is `hash` (or NULL); hmap_next_with_hash() continues. */
struct hmap_node *hmap_first_with_hash(const struct hmap *m, uint64_t hash);
struct hmap_node *hmap_next_with_hash(const struct hmap_node *node);
/* Every node, in no particular order. */
struct hmap_node *hmap_first(const struct hmap *m);
struct hmap_node *hmap_next(const struct hmap *m, const struct hmap_node *node);

/* Walks the records of `type *var` whose node member is `member` and whose hash is `hash`. */
#define HMAP_FOR_EACH_WITH_HASH(var, member, hash, map)                                            \
	for (struct hmap_node *hmap_n_ = hmap_first_with_hash(map, hash);                          \
	     hmap_n_ != NULL && ((var) = HMAP_CONTAINER(hmap_n_, __typeof__(*(var)), member), 1);  \
	     hmap_n_ = hmap_next_with_hash(hmap_n_))

/* Walks every record; the body must not remove one (use HMAP_FOR_EACH_SAFE). */
#define HMAP_FOR_EACH(var, member, map)                                                            \
	for (struct hmap_node *hmap_n_ = hmap_first(map);                                          \
	     hmap_n_ != NULL && ((var) = HMAP_CONTAINER(hmap_n_, __typeof__(*(var)), member), 1);  \
	     hmap_n_ = hmap_next(map, hmap_n_))

/* Walks every record; the body may remove (and free) the current one. */
#define HMAP_FOR_EACH_SAFE(var, member, map)                                                       \
	for (struct hmap_node *hmap_n_ = hmap_first(map), *hmap_nx_ = NULL;                        \
	     hmap_n_ != NULL && (hmap_nx_ = hmap_next(map, hmap_n_), 1) &&                         \
	     ((var) = HMAP_CONTAINER(hmap_n_, __typeof__(*(var)), member), 1);                     \
	     hmap_n_ = hmap_nx_)

#endif
