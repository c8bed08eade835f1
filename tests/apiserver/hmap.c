/* SPDX-License-Identifier: Apache-2.0 */
/* A small chained hash map keyed by strings (hash64 from lib/util). */
#include "tests/apiserver/hmap.h"

#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

struct hnode {
	struct hnode *next;
	uint64_t hash;
	void *value;
	char key[];
};

struct hmap {
	struct hnode **buckets;
	size_t nbuckets; /* power of two */
	size_t size;
};

static void *
xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n, sz);

	if (p == NULL)
		abort();
	return p;
}

struct hmap *
hmap_new(void)
{
	struct hmap *m = xcalloc(1, sizeof(*m));

	m->nbuckets = 64;
	m->buckets = xcalloc(m->nbuckets, sizeof(*m->buckets));
	return m;
}

struct hmap *
hmap_free(struct hmap *m)
{
	if (m == NULL)
		return NULL;
	for (size_t i = 0; i < m->nbuckets; i++) {
		struct hnode *n = m->buckets[i];
		while (n != NULL) {
			struct hnode *next = n->next;
			free(n);
			n = next;
		}
	}
	free(m->buckets);
	free(m);
	return NULL;
}

static uint64_t
hkey(const char *key)
{
	return hash64(key, strlen(key), 0x6b756265);
}

void *
hmap_get(const struct hmap *m, const char *key)
{
	uint64_t h = hkey(key);

	for (struct hnode *n = m->buckets[h & (m->nbuckets - 1)]; n != NULL; n = n->next)
		if (n->hash == h && strcmp(n->key, key) == 0)
			return n->value;
	return NULL;
}

static void
grow(struct hmap *m)
{
	size_t nb = m->nbuckets * 2;
	struct hnode **b = xcalloc(nb, sizeof(*b));

	for (size_t i = 0; i < m->nbuckets; i++) {
		struct hnode *n = m->buckets[i];
		while (n != NULL) {
			struct hnode *next = n->next;
			n->next = b[n->hash & (nb - 1)];
			b[n->hash & (nb - 1)] = n;
			n = next;
		}
	}
	free(m->buckets);
	m->buckets = b;
	m->nbuckets = nb;
}

void *
hmap_put(struct hmap *m, const char *key, void *value)
{
	uint64_t h = hkey(key);
	struct hnode **slot = &m->buckets[h & (m->nbuckets - 1)];
	size_t klen = strlen(key);
	struct hnode *n;

	for (n = *slot; n != NULL; n = n->next)
		if (n->hash == h && strcmp(n->key, key) == 0) {
			void *old = n->value;
			n->value = value;
			return old;
		}
	n = malloc(sizeof(*n) + klen + 1);
	if (n == NULL)
		abort();
	n->hash = h;
	n->value = value;
	memcpy(n->key, key, klen + 1);
	n->next = *slot;
	*slot = n;
	if (++m->size > m->nbuckets)
		grow(m);
	return NULL;
}

void *
hmap_del(struct hmap *m, const char *key)
{
	uint64_t h = hkey(key);

	for (struct hnode **p = &m->buckets[h & (m->nbuckets - 1)]; *p != NULL; p = &(*p)->next) {
		struct hnode *n = *p;
		if (n->hash == h && strcmp(n->key, key) == 0) {
			void *v = n->value;
			*p = n->next;
			free(n);
			m->size--;
			return v;
		}
	}
	return NULL;
}

size_t
hmap_size(const struct hmap *m)
{
	return m->size;
}

int
hmap_next(const struct hmap *m, struct hmap_iter *it, const char **ret_key, void **ret_value)
{
	struct hnode *n = it->node;

	if (n != NULL)
		n = n->next;
	while (n == NULL) {
		if (it->bucket >= m->nbuckets)
			return 0;
		n = m->buckets[it->bucket++];
	}
	it->node = n;
	if (ret_key != NULL)
		*ret_key = n->key;
	if (ret_value != NULL)
		*ret_value = n->value;
	return 1;
}
