/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_APISERVER_STORE_H
#define VMDHCP_APISERVER_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/hmap.h"
#include "tests/apiserver/selector.h"

/*
 * The object store of the test API server: resources by group/plural, objects by key
 * ("ns/name" or "name"), one global resourceVersion, a bounded event history for watches
 * and consistent paginated lists. Objects (json_t) are immutable once stored: every write
 * stores a new document, so references taken by the history and by lists stay valid.
 */

struct object {
	struct hmap_node node; /* in its resource's objs, by key */
	char *key;
	json_t *json; /* current document (owned) */
	char *ser;    /* cached compact serialisation or NULL */
};

struct watch;

struct resource {
	struct hmap_node node; /* in the store's resources, by id */
	char *id;	       /* "group/plural" ("" group for the core API) */
	char *group;
	char *plural;
	char *kind;
	char *version;
	bool namespaced;
	bool status_sub; /* main endpoint ignores status, /status ignores the rest */
	bool builtin;
	json_t *short_names; /* discovery shortNames (array of strings, owned) or NULL */
	json_t *schema;	     /* a CRD's storage version openAPIV3Schema (owned) or NULL */
	struct hmap objs;    /* struct object by key */
	struct object **sorted;
	size_t nsorted;
	bool dirty;
	struct watch *watches; /* owned by the HTTP layer */
};

enum event_type {
	EVENT_ADDED,
	EVENT_MODIFIED,
	EVENT_DELETED,
};

struct event {
	uint64_t rv;
	enum event_type type;
	struct resource *res;
	char *key;
	json_t *obj;  /* state after the event (for DELETED: the last state) */
	json_t *prev; /* state before, NULL for ADDED */
	char *line;   /* cached watch line for (type, obj) or NULL */
};

struct api_err {
	int code;
	const char *reason;
	char message[512];
};

enum patch_type {
	PATCH_MERGE,
	PATCH_JSON,
};

struct store;

typedef void (*store_event_fn)(void *userdata, struct event *ev);

/* history: events kept for watches and continues; history_bytes: bound on their serialised
 * size (0 = none). Older events are dropped (compacted) first. */
struct store *store_new(size_t history, size_t history_bytes);
struct store *store_free(struct store *st);
/* Called after every write with the event (borrowed). */
void store_set_event_cb(struct store *st, store_event_fn fn, void *userdata);

/* Resource by group and plural (borrowed); create makes an unknown one (namespaced). */
struct resource *store_resource(
    struct store *st, const char *group, const char *plural, bool create);
/* Iterate resources: it starts at 0; returns NULL at the end. */
struct resource *store_resource_next(struct store *st, size_t *it);

uint64_t store_rv(const struct store *st);
size_t store_object_count(const struct store *st);
uint64_t store_writes(const struct store *st);
/* Compacted: watches/continues from an older resourceVersion get 410. */
uint64_t store_compacted_rv(const struct store *st);
/* Drop the whole history. */
void store_compact(struct store *st);

/* Compact serialisation of a stored object (borrowed, cached). */
const char *store_object_ser(struct object *o);
/* "{"type":T,"object":O}\n" for an event (borrowed, cached). */
const char *store_event_line(struct event *ev);
const char *event_type_name(enum event_type t);

/* All return 0 and fill *ret with a new reference, or -1 and fill err. ns is NULL for
 * cluster-scoped resources. body/patch/opts are borrowed. */
int store_create(struct store *st, struct resource *res, const char *ns, json_t *body, json_t **ret,
    struct api_err *err);
int store_get(struct store *st, struct resource *res, const char *ns, const char *name,
    struct object **ret, struct api_err *err);
int store_update(struct store *st, struct resource *res, const char *ns, const char *name,
    json_t *body, bool status, json_t **ret, struct api_err *err);
int store_patch(struct store *st, struct resource *res, const char *ns, const char *name,
    enum patch_type type, json_t *patch, bool status, json_t **ret, struct api_err *err);
int store_delete(struct store *st, struct resource *res, const char *ns, const char *name,
    json_t *opts, json_t **ret, struct api_err *err);

/* A list result: items are either current objects (obj set) or past states (json set, new
 * reference). */
struct list_item {
	struct object *obj;
	json_t *json;
};
struct list_result {
	struct list_item *items;
	size_t n;
	uint64_t rv;
	char *cont; /* continue token or NULL */
};
/* ns NULL = every namespace. limit 0 = no limit. at_rv: 0 = now, else the state at that
 * resourceVersion (410 when older than the history, 504 when in the future). cont (borrowed,
 * may be NULL) continues an earlier page at its version. */
int store_list(struct store *st, struct resource *res, const char *ns,
    const struct selector *labels, const struct selector *fields, size_t limit, uint64_t at_rv,
    const char *cont, struct list_result *ret, struct api_err *err);
void list_result_clear(struct list_result *lr);

/* Events after rv for res, in order: returns -1 (410 in err) when rv is too old. */
typedef void (*store_replay_fn)(void *userdata, struct event *ev);
int store_replay(struct store *st, struct resource *res, uint64_t rv, store_replay_fn fn,
    void *userdata, struct api_err *err);

/* Persistence: whole state as JSON (new reference) / load into an empty store. */
json_t *store_dump(struct store *st);
int store_load(struct store *st, json_t *data);

/* Namespace part of an object key (copied into buf) - "" for cluster-scoped keys. */
void key_namespace(const char *key, char *buf, size_t len);

#endif
