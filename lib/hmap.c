// SPDX-License-Identifier: Apache-2.0
/* The intrusive chained hash map (see hmap.h). */
#include "lib/hmap.h"

#include <errno.h>
#include <stdlib.h>

#define MIN_SLOTS 16

void
hmap_destroy(struct hmap *m)
{
	free(m->slots);
	m->slots = NULL;
	m->mask = 0;
	m->count = 0;
}

/* Moves every node into a new array of n slots (a power of two). */
static int
resize(struct hmap *m, size_t n)
{
	struct hmap_node **slots = calloc(n, sizeof(*slots));

	if (slots == NULL)
		return -ENOMEM;
	if (m->slots != NULL) {
		for (size_t i = 0; i <= m->mask; i++) {
			struct hmap_node *node = m->slots[i], *next;

			for (; node != NULL; node = next) {
				next = node->next;
				node->next = slots[node->hash & (n - 1)];
				slots[node->hash & (n - 1)] = node;
			}
		}
	}
	free(m->slots);
	m->slots = slots;
	m->mask = n - 1;
	return 0;
}

int
hmap_reserve(struct hmap *m, size_t n)
{
	size_t want = MIN_SLOTS;

	while (want < n) {
		if (want > SIZE_MAX / 2 / sizeof(struct hmap_node *))
			return -ENOMEM;
		want *= 2;
	}
	if (m->slots != NULL && want <= m->mask + 1)
		return 0;
	return resize(m, want);
}

int
hmap_insert(struct hmap *m, struct hmap_node *node, uint64_t hash)
{
	struct hmap_node **slot;

	if (m->slots == NULL) {
		if (resize(m, MIN_SLOTS) < 0)
			return -ENOMEM;
	} else if (m->count > m->mask && m->mask < SIZE_MAX / 4 / sizeof(*slot)) {
		(void)resize(m, (m->mask + 1) * 2); /* on failure: longer chains */
	}
	node->hash = hash;
	slot = &m->slots[hash & m->mask];
	node->next = *slot;
	*slot = node;
	m->count++;
	return 0;
}

void
hmap_remove(struct hmap *m, struct hmap_node *node)
{
	struct hmap_node **pp = &m->slots[node->hash & m->mask];

	while (*pp != node)
		pp = &(*pp)->next;
	*pp = node->next;
	m->count--;
}

struct hmap_node *
hmap_first_with_hash(const struct hmap *m, uint64_t hash)
{
	struct hmap_node *node;

	if (m->slots == NULL)
		return NULL;
	for (node = m->slots[hash & m->mask]; node != NULL && node->hash != hash; node = node->next)
		;
	return node;
}

struct hmap_node *
hmap_next_with_hash(const struct hmap_node *node)
{
	uint64_t hash = node->hash;

	for (node = node->next; node != NULL && node->hash != hash; node = node->next)
		;
	return (struct hmap_node *)node;
}

static struct hmap_node *
first_from(const struct hmap *m, size_t i)
{
	for (; m->slots != NULL && i <= m->mask; i++)
		if (m->slots[i] != NULL)
			return m->slots[i];
	return NULL;
}

struct hmap_node *
hmap_first(const struct hmap *m)
{
	return first_from(m, 0);
}

struct hmap_node *
hmap_next(const struct hmap *m, const struct hmap_node *node)
{
	if (node->next != NULL)
		return node->next;
	return first_from(m, (size_t)(node->hash & m->mask) + 1);
}
