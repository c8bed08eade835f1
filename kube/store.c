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
#include "lib/hmap.h"
#include "lib/util.h"

#define MAX_INDEXES 8

struct entry {
	struct hmap_node node; /* in kube_store.entries, by str_hash(key) */
	void *item;
	char *rv;
	char key[];
};

struct bucket {
	struct hmap_node node; /* in index.buckets, by str_hash(value) */
	size_t n, cap;
	struct entry **v;
	char value[];
};

struct index {
	const char *name;
	kube_index_fn fn;
	struct hmap buckets;
};

struct kube_store {
	kube_destroy_fn destroy;
	struct hmap entries;
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
	if (hmap_reserve(&s->entries, 64) < 0) {
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
	struct bucket *b;

	HMAP_FOR_EACH_SAFE(b, node, &ix->buckets)
	{
		free(b->v);
		free(b);
	}
	hmap_destroy(&ix->buckets);
}

struct kube_store *
kube_store_free(struct kube_store *s)
{
	struct entry *e;

	if (!s)
		return NULL;
	HMAP_FOR_EACH_SAFE(e, node, &s->entries)
	{
		s->destroy(e->item);
		free(e->rv);
		free(e);
	}
	hmap_destroy(&s->entries);
	for (size_t i = 0; i < s->nindexes; i++)
		index_clear(&s->indexes[i]);
	free(s);
	return NULL;
}

/* --- indexes ------------------------------------------------------------------------------ */

static struct bucket *
bucket_find(const struct index *ix, const char *value, uint64_t h)
{
	struct bucket *b;

	HMAP_FOR_EACH_WITH_HASH(b, node, h, &ix->buckets)
	if (strcmp(b->value, value) == 0)
		return b;
	return NULL;
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

		b = calloc(1, sizeof(*b) + vl + 1);
		if (!b || hmap_insert(&ix->buckets, &b->node, h) < 0) {
			free(b);
			ctx->rc = -ENOMEM;
			return;
		}
		memcpy(b->value, value, vl + 1);
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
		struct emit_ctx ctx = {.ix = &s->indexes[i], .e = e, .add = add};

		s->indexes[i].fn(item, index_emit, &ctx);
		if (ctx.rc < 0)
			rc = ctx.rc;
	}
	return rc;
}

int
kube_store_add_index(struct kube_store *s, const char *name, kube_index_fn fn)
{
	struct entry *e;
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
	HMAP_FOR_EACH(e, node, &s->entries)
	{
		struct emit_ctx ctx = {.ix = ix, .e = e, .add = true};

		fn(e->item, index_emit, &ctx);
		if (ctx.rc < 0)
			return ctx.rc;
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

static struct entry *
entry_find(const struct kube_store *s, const char *key, uint64_t h)
{
	struct entry *e;

	HMAP_FOR_EACH_WITH_HASH(e, node, h, &s->entries)
	if (strcmp(e->key, key) == 0)
		return e;
	return NULL;
}

int
kube_store_put(
    struct kube_store *s, const char *key, const char *resource_version, void *item, void **ret_old)
{
	uint64_t h = str_hash(key);
	struct entry *e = entry_find(s, key, h);
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
	e = malloc(sizeof(*e) + strlen(key) + 1);
	if (!e || hmap_insert(&s->entries, &e->node, h) < 0) {
		free(e);
		free(rv);
		s->destroy(item);
		return -ENOMEM;
	}
	strcpy(e->key, key);
	e->item = item;
	e->rv = rv;
	return index_update(s, e, item, true);
}

int
kube_store_delete(struct kube_store *s, const char *key, void **ret_item)
{
	struct entry *e = entry_find(s, key, str_hash(key));

	if (ret_item)
		*ret_item = NULL;
	if (!e)
		return -ENOENT;
	index_update(s, e, e->item, false);
	hmap_remove(&s->entries, &e->node);
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
	const struct entry *e = entry_find(s, key, str_hash(key));

	return e ? e->item : NULL;
}

const char *
kube_store_resource_version(const struct kube_store *s, const char *key)
{
	const struct entry *e = entry_find(s, key, str_hash(key));

	return e ? e->rv : NULL;
}

size_t
kube_store_len(const struct kube_store *s)
{
	return hmap_count(&s->entries);
}

int
kube_store_foreach(const struct kube_store *s, kube_store_visit_fn fn, void *userdata)
{
	const struct entry *e;

	HMAP_FOR_EACH(e, node, &s->entries)
	{
		int rc = fn(userdata, e->key, e->item);

		if (rc)
			return rc;
	}
	return 0;
}
