/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The informer cache (client-go's threadSafeStore without the threads): key -> typed item
 * with its resourceVersion, plus named indexes (index value -> items). Index values of an
 * item are recomputed from the item itself on replace/delete, so nothing else is stored.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube-internal.h"
#include "lib/util.h"

#define MAX_INDEXES 8

struct entry {
	struct entry *next; /* hash chain */
	uint64_t hash;
	void *item;
	char *rv;
	char key[];
};

struct bucket {
	struct bucket *next;
	uint64_t hash;
	size_t n, cap;
	struct entry **v;
	char value[];
};

struct index {
	const char *name;
	kube_index_fn fn;
	struct bucket **slots;
	size_t nslots, count;
};

struct kube_store {
	kube_destroy_fn destroy;
	struct entry **slots;
	size_t nslots, count;
	struct index indexes[MAX_INDEXES];
	size_t nindexes;
};

static uint64_t
str_hash(const char *s)
{
	return hash64(s, strlen(s), 0x6b756265);
}

static void
default_destroy(void *item)
{
	json_decref(item);
}

int
kube_store_new(kube_destroy_fn destroy, struct kube_store **ret)
{
	struct kube_store *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->destroy = destroy ? destroy : default_destroy;
	s->nslots = 64;
	s->slots = calloc(s->nslots, sizeof(*s->slots));
	if (!s->slots) {
		free(s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

void
kube_store_destroy_item(const struct kube_store *s, void *item)
{
	if (item)
		s->destroy(item);
}

static void
index_clear(struct index *ix)
{
	for (size_t i = 0; i < ix->nslots; i++) {
		struct bucket *b = ix->slots[i], *next;

		for (; b; b = next) {
			next = b->next;
			free(b->v);
			free(b);
		}
	}
	free(ix->slots);
	ix->slots = NULL;
	ix->nslots = ix->count = 0;
}

struct kube_store *
kube_store_free(struct kube_store *s)
{
	if (!s)
		return NULL;
	for (size_t i = 0; i < s->nslots; i++) {
		struct entry *e = s->slots[i], *next;

		for (; e; e = next) {
			next = e->next;
			s->destroy(e->item);
			free(e->rv);
			free(e);
		}
	}
	free(s->slots);
	for (size_t i = 0; i < s->nindexes; i++)
		index_clear(&s->indexes[i]);
	free(s);
	return NULL;
}

/* --- indexes ------------------------------------------------------------------------------ */

static struct bucket *
bucket_find(const struct index *ix, const char *value, uint64_t h)
{
	if (!ix->nslots)
		return NULL;
	for (struct bucket *b = ix->slots[h & (ix->nslots - 1)]; b; b = b->next)
		if (b->hash == h && strcmp(b->value, value) == 0)
			return b;
	return NULL;
}

static int
index_grow(struct index *ix)
{
	size_t n = ix->nslots ? ix->nslots * 2 : 16;
	struct bucket **slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < ix->nslots; i++) {
		struct bucket *b = ix->slots[i], *next;

		for (; b; b = next) {
			next = b->next;
			b->next = slots[b->hash & (n - 1)];
			slots[b->hash & (n - 1)] = b;
		}
	}
	free(ix->slots);
	ix->slots = slots;
	ix->nslots = n;
	return 0;
}

struct emit_ctx {
	struct index *ix;
	struct entry *e;
	bool add;
	int rc;
};

static void
index_emit(void *ctx_, const char *value)
{
	struct emit_ctx *ctx = ctx_;
	struct index *ix = ctx->ix;
	uint64_t h = str_hash(value);
	struct bucket *b = bucket_find(ix, value, h);

	if (!ctx->add) {
		if (!b)
			return;
		for (size_t i = 0; i < b->n; i++) {
			if (b->v[i] == ctx->e) {
				b->v[i] = b->v[--b->n];
				break;
			}
		}
		return; /* empty buckets are kept: values tend to come back */
	}
	if (!b) {
		size_t vl = strlen(value);

		if (ix->count >= ix->nslots && index_grow(ix) < 0) {
			ctx->rc = -ENOMEM;
			return;
		}
		b = calloc(1, sizeof(*b) + vl + 1);
		if (!b) {
			ctx->rc = -ENOMEM;
			return;
		}
		memcpy(b->value, value, vl + 1);
		b->hash = h;
		b->next = ix->slots[h & (ix->nslots - 1)];
		ix->slots[h & (ix->nslots - 1)] = b;
		ix->count++;
	}
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i] == ctx->e)
			return; /* the same value emitted twice */
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 2;
		struct entry **v = realloc(b->v, cap * sizeof(*v));

		if (!v) {
			ctx->rc = -ENOMEM;
			return;
		}
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = ctx->e;
}

static int
index_update(struct kube_store *s, struct entry *e, const void *item, bool add)
{
	int rc = 0;

	for (size_t i = 0; i < s->nindexes; i++) {
		struct emit_ctx ctx = { .ix = &s->indexes[i], .e = e, .add = add };

		s->indexes[i].fn(item, index_emit, &ctx);
		if (ctx.rc < 0)
			rc = ctx.rc;
	}
	return rc;
}

int
kube_store_add_index(struct kube_store *s, const char *name, kube_index_fn fn)
{
	struct index *ix;

	if (!name || !fn)
		return -EINVAL;
	for (size_t i = 0; i < s->nindexes; i++)
		if (strcmp(s->indexes[i].name, name) == 0)
			return -EEXIST;
	if (s->nindexes == MAX_INDEXES)
		return -ENOSPC;
	ix = &s->indexes[s->nindexes++];
	memset(ix, 0, sizeof(*ix));
	ix->name = name;
	ix->fn = fn;
	for (size_t i = 0; i < s->nslots; i++) {
		for (struct entry *e = s->slots[i]; e; e = e->next) {
			struct emit_ctx ctx = { .ix = ix, .e = e, .add = true };

			fn(e->item, index_emit, &ctx);
			if (ctx.rc < 0)
				return ctx.rc;
		}
	}
	return 0;
}

static const struct index *
index_find(const struct kube_store *s, const char *name)
{
	for (size_t i = 0; i < s->nindexes; i++)
		if (strcmp(s->indexes[i].name, name) == 0)
			return &s->indexes[i];
	return NULL;
}

int
kube_store_by_index(const struct kube_store *s, const char *name, const char *value,
    kube_store_visit_fn fn, void *userdata)
{
	const struct index *ix = index_find(s, name);
	const struct bucket *b;

	if (!ix)
		return -ENOENT;
	b = bucket_find(ix, value, str_hash(value));
	if (!b)
		return 0;
	for (size_t i = 0; i < b->n; i++) {
		int rc = fn(userdata, b->v[i]->key, b->v[i]->item);

		if (rc)
			return rc;
	}
	return 0;
}

size_t
kube_store_index_count(const struct kube_store *s, const char *name, const char *value)
{
	const struct index *ix = index_find(s, name);
	const struct bucket *b;

	if (!ix)
		return 0;
	b = bucket_find(ix, value, str_hash(value));
	return b ? b->n : 0;
}

/* --- items ----------------------------------------------------------------------------------- */

static struct entry **
entry_slot(const struct kube_store *s, const char *key, uint64_t h)
{
	struct entry **pp = &s->slots[h & (s->nslots - 1)];

	for (; *pp; pp = &(*pp)->next)
		if ((*pp)->hash == h && strcmp((*pp)->key, key) == 0)
			return pp;
	return pp;
}

static int
store_grow(struct kube_store *s)
{
	size_t n = s->nslots * 2;
	struct entry **slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < s->nslots; i++) {
		struct entry *e = s->slots[i], *next;

		for (; e; e = next) {
			next = e->next;
			e->next = slots[e->hash & (n - 1)];
			slots[e->hash & (n - 1)] = e;
		}
	}
	free(s->slots);
	s->slots = slots;
	s->nslots = n;
	return 0;
}

int
kube_store_put(struct kube_store *s, const char *key, const char *resource_version,
    void *item, void **ret_old)
{
	uint64_t h = str_hash(key);
	struct entry **pp = entry_slot(s, key, h), *e = *pp;
	char *rv = NULL;
	int rc;

	if (ret_old)
		*ret_old = NULL;
	if (resource_version) {
		rv = strdup(resource_version);
		if (!rv) {
			s->destroy(item);
			return -ENOMEM;
		}
	}
	if (e) {
		void *old = e->item;

		index_update(s, e, old, false);
		e->item = item;
		free(e->rv);
		e->rv = rv;
		rc = index_update(s, e, item, true);
		if (ret_old)
			*ret_old = old;
		else
			s->destroy(old);
		return rc;
	}
	if (s->count >= s->nslots && store_grow(s) == 0)
		pp = entry_slot(s, key, h);
	e = malloc(sizeof(*e) + strlen(key) + 1);
	if (!e) {
		free(rv);
		s->destroy(item);
		return -ENOMEM;
	}
	strcpy(e->key, key);
	e->hash = h;
	e->item = item;
	e->rv = rv;
	e->next = NULL;
	*pp = e;
	s->count++;
	return index_update(s, e, item, true);
}

int
kube_store_delete(struct kube_store *s, const char *key, void **ret_item)
{
	uint64_t h = str_hash(key);
	struct entry **pp = entry_slot(s, key, h), *e = *pp;

	if (ret_item)
		*ret_item = NULL;
	if (!e)
		return -ENOENT;
	index_update(s, e, e->item, false);
	*pp = e->next;
	s->count--;
	if (ret_item)
		*ret_item = e->item;
	else
		s->destroy(e->item);
	free(e->rv);
	free(e);
	return 0;
}

const void *
kube_store_get(const struct kube_store *s, const char *key)
{
	const struct entry *e = *entry_slot(s, key, str_hash(key));

	return e ? e->item : NULL;
}

const char *
kube_store_resource_version(const struct kube_store *s, const char *key)
{
	const struct entry *e = *entry_slot(s, key, str_hash(key));

	return e ? e->rv : NULL;
}

size_t
kube_store_len(const struct kube_store *s)
{
	return s->count;
}

int
kube_store_foreach(const struct kube_store *s, kube_store_visit_fn fn, void *userdata)
{
	for (size_t i = 0; i < s->nslots; i++) {
		for (const struct entry *e = s->slots[i]; e; e = e->next) {
			int rc = fn(userdata, e->key, e->item);

			if (rc)
				return rc;
		}
	}
	return 0;
}
