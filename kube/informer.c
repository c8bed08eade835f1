/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Informer = reflector + store + handlers (client-go tools/cache, single-threaded):
 *
 *   LIST (paged, limit/continue) --> apply each item, remember the keys seen
 *        last page: delete what was not seen, synced, remember list resourceVersion
 *   WATCH from that resourceVersion (bookmarks, server timeoutSeconds)
 *        event: transform, put/delete, call handlers, advance resourceVersion
 *        closed by the server        --> WATCH again at once, from the last resourceVersion
 *                                        (its timeoutSeconds: the normal end, logged at debug)
 *        410 Gone / Expired          --> LIST again (relist)
 *        other failure (refused ...) --> WATCH again after jittered exponential backoff
 *        still open past the deadline --> WATCH again at once (a stalled stream, warned)
 *        an event larger than the cap --> LIST again after backoff
 *   LIST answer larger than the cap (kube/limits.c) --> half the page size, LIST again after
 *        backoff (capped at the full 30 s even before the first sync)
 *
 * A quiet watch is healthy: the API server sends no bookmark for a kind that has not changed
 * since it started (kube/watch.c), so there is no no-byte timer. A dead connection is found by
 * TCP keep-alive (kube/http-keepalive.c), a server that stopped serving a live one by the
 * watch's deadline a little past its timeoutSeconds (300..600 s jittered, as client-go's
 * reflector picks: the watches of many informers do not end together).
 *
 * Backoff is capped at 2 s until the first list succeeds, then at 30 s. Failures are logged
 * (the first at warn, then at the 2nd, 4th, 8th ... and at most once per backoff cap) and the
 * last one is kept for /readyz (kube_informer_describe_failure).
 *
 * List pages and watch lines are scanned with lib/jscan.h (items[] and metadata of a page;
 * type and object of an event) and each object's text goes to the codec: the caller's typed
 * decoder, or json_loadb and the transform (the json_t is dropped once transformed). The key
 * (namespace/name) and resourceVersion are read from the object's text first, so items whose
 * resourceVersion did not change on relist, and deletions, are never decoded.
 *
 * List, watch and store application are one state machine (client-go's reflector) over the
 * same record, here; what a failure leaves for logs and /readyz is in kube/informer-failures.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/informer-internal.h"
#include "lib/clock.h"
#include "lib/jscan.h"
#include "lib/log.h"

#define KEY_MAX 512
#define UNSYNCED_BACKOFF_MAX (2 * USEC_PER_SEC)

static void start_list(struct kube_informer *inf);
static void start_watch(struct kube_informer *inf);
static void backoff_fired(evutil_socket_t fd, short what, void *arg);
static void resync_fired(evutil_socket_t fd, short what, void *arg);

static void
noop_destroy(void *item)
{
}

int
kube_informer_new(
    struct kube_client *c, const struct kube_informer_opts *opts, struct kube_informer **ret)
{
	struct kube_informer *inf;
	struct event_base *base = kube_client_base(c);
	int rc;

	if (!opts || !opts->res)
		return -EINVAL;
	if ((opts->transform && !opts->destroy) || (opts->transform && opts->codec) ||
	    (opts->codec && (!opts->codec->decode || !opts->codec->destroy)))
		return -EINVAL;
	inf = calloc(1, sizeof(*inf));
	if (!inf)
		return -ENOMEM;
	inf->c = c;
	inf->res = opts->res;
	inf->page_size = opts->page_size ? opts->page_size : 500;
	inf->resync_usec = opts->resync_usec;
	inf->watch_timeout_s = opts->watch_timeout_s;
	inf->backoff_base = opts->backoff_base_usec ? opts->backoff_base_usec : 800 * USEC_PER_MSEC;
	inf->backoff_max = opts->backoff_max_usec ? opts->backoff_max_usec : 30 * USEC_PER_SEC;
	inf->backoff_unsynced_max = opts->backoff_unsynced_max_usec
					? opts->backoff_unsynced_max_usec
					: UNSYNCED_BACKOFF_MAX;
	if (inf->backoff_unsynced_max > inf->backoff_max)
		inf->backoff_unsynced_max = inf->backoff_max;
	inf->seed = clock_now_usec() | 1;
	inf->transform = opts->transform;
	inf->transform_userdata = opts->transform_userdata;
	if (opts->codec)
		inf->codec = *opts->codec;
	rc = -ENOMEM;
	if ((opts->ns && !(inf->ns = strdup(opts->ns))) ||
	    (opts->label_selector && !(inf->label_selector = strdup(opts->label_selector))) ||
	    (opts->field_selector && !(inf->field_selector = strdup(opts->field_selector))))
		goto fail;
	rc = kube_store_new(opts->codec	      ? opts->codec->destroy
			    : opts->transform ? opts->destroy
					      : NULL,
	    &inf->store);
	if (rc < 0)
		goto fail;
	rc = -ENOMEM;
	inf->backoff_timer = evtimer_new(base, backoff_fired, inf);
	inf->resync_timer = event_new(base, -1, EV_PERSIST, resync_fired, inf);
	if (!inf->backoff_timer || !inf->resync_timer)
		goto fail;
	*ret = inf;
	return 0;
fail:
	kube_informer_free(inf);
	return rc;
}

struct kube_informer *
kube_informer_free(struct kube_informer *inf)
{
	if (!inf)
		return NULL;
	kube_watch_free(inf->watch);
	kube_http_cancel(inf->list_call);
	if (inf->backoff_timer)
		event_free(inf->backoff_timer);
	if (inf->resync_timer)
		event_free(inf->resync_timer);
	kube_store_free(inf->store);
	kube_store_free(inf->seen);
	free(inf->continue_token);
	free(inf->ns);
	free(inf->label_selector);
	free(inf->field_selector);
	free(inf);
	return NULL;
}

int
kube_informer_add_index(struct kube_informer *inf, const char *name, kube_index_fn fn)
{
	return kube_store_add_index(inf->store, name, fn);
}

int
kube_informer_add_handlers(struct kube_informer *inf, const struct kube_informer_handlers *h)
{
	if (inf->nhandlers == MAX_HANDLERS)
		return -ENOSPC;
	inf->handlers[inf->nhandlers++] = *h;
	return 0;
}

bool
kube_informer_has_synced(const struct kube_informer *inf)
{
	return inf->synced;
}

struct kube_store *
kube_informer_store(struct kube_informer *inf)
{
	return inf->store;
}

void
kube_informer_get_stats(const struct kube_informer *inf, struct kube_informer_stats *ret)
{
	*ret = inf->stats;
	snprintf(ret->last_resource_version, sizeof(ret->last_resource_version), "%s", inf->rv);
}

/* --- applying objects ----------------------------------------------------------------------- */

static void
notify_add(struct kube_informer *inf, const char *key, const void *item)
{
	for (size_t i = 0; i < inf->nhandlers; i++)
		if (inf->handlers[i].on_add)
			inf->handlers[i].on_add(inf->handlers[i].userdata, key, item);
}

static void
notify_update(struct kube_informer *inf, const char *key, const void *old, const void *item)
{
	for (size_t i = 0; i < inf->nhandlers; i++)
		if (inf->handlers[i].on_update)
			inf->handlers[i].on_update(inf->handlers[i].userdata, key, old, item);
}

static void
notify_delete(struct kube_informer *inf, const char *key, const void *item)
{
	for (size_t i = 0; i < inf->nhandlers; i++)
		if (inf->handlers[i].on_delete)
			inf->handlers[i].on_delete(inf->handlers[i].userdata, key, item);
}

static void
set_rv(struct kube_informer *inf, const char *rv)
{
	if (rv && *rv && strlen(rv) < sizeof(inf->rv))
		strcpy(inf->rv, rv);
}

/* What the informer reads of an object's metadata before decoding it. */
struct obj_meta {
	char key[KEY_MAX];
	bool has_key;
	char rv[KEY_MAX];
	bool has_rv;
};

/* metadata.<name> as a string into out; false when absent, not a string or too long. */
static bool
meta_string(struct jscan_span meta, const char *name, char *out, size_t len)
{
	struct jscan_span v;

	return jscan_get_span(meta, name, &v) == 1 && jscan_type(v) == '"' &&
	       jscan_string(v, out, len, NULL) == 0;
}

/* The key and resourceVersion of the object in [text, text + len) (a span jscan checked: a
 * list item or a watch event's object), as kube_obj_key and kube_obj_resource_version read
 * them from its tree. */
static void
scan_meta(const char *text, size_t len, struct obj_meta *m)
{
	struct jscan_span meta;
	char ns[KEY_MAX], name[KEY_MAX];
	bool has_ns;

	m->has_key = m->has_rv = false;
	if (jscan_get_span((struct jscan_span){text, len}, "metadata", &meta) != 1 ||
	    jscan_type(meta) != '{')
		return;
	has_ns = meta_string(meta, "namespace", ns, sizeof(ns));
	if (meta_string(meta, "name", name, sizeof(name)))
		m->has_key = kube_key_make(has_ns ? ns : NULL, name, m->key, sizeof(m->key)) == 0;
	m->has_rv = meta_string(meta, "resourceVersion", m->rv, sizeof(m->rv));
}

/* The codec: the caller's, or json_loadb then the transform (or the json_t itself). */
static void *
decode_item(struct kube_informer *inf, const char *text, size_t len)
{
	json_t *obj;
	void *item;

	if (inf->codec.decode)
		return inf->codec.decode(inf->codec.userdata, text, len);
	obj = json_loadb(text, len, 0, NULL);
	if (!obj || !inf->transform)
		return obj;
	item = inf->transform(inf->transform_userdata, obj);
	json_decref(obj);
	return item;
}

/* Adds or replaces the object in [text, text + len) (meta: scan_meta of it). */
static void
apply_upsert(struct kube_informer *inf, const char *text, size_t len, const struct obj_meta *m,
    bool from_list)
{
	const char *rv = m->has_rv ? m->rv : NULL;
	const char *old_rv;
	void *item, *old = NULL;
	bool existed;

	if (!m->has_key) {
		inf->stats.dropped++;
		return;
	}
	if (from_list && inf->seen)
		kube_store_put(inf->seen, m->key, NULL, (void *)1, NULL);
	old_rv = kube_store_resource_version(inf->store, m->key);
	existed = kube_store_get(inf->store, m->key) != NULL;
	if (existed && from_list && rv && old_rv && strcmp(rv, old_rv) == 0)
		return; /* unchanged since we saw it */
	item = decode_item(inf, text, len);
	if (!item) {
		inf->stats.dropped++;
		return;
	}
	if (kube_store_put(inf->store, m->key, rv, item, &old) < 0) {
		inf->stats.dropped++;
		kube_store_destroy_item(inf->store, old);
		return;
	}
	if (old) {
		notify_update(inf, m->key, old, item);
		kube_store_destroy_item(inf->store, old);
	} else {
		notify_add(inf, m->key, item);
	}
}

static void
apply_delete_key(struct kube_informer *inf, const char *key)
{
	void *old = NULL;

	if (kube_store_delete(inf->store, key, &old) == 0) {
		notify_delete(inf, key, old);
		kube_store_destroy_item(inf->store, old);
	}
}

/* --- backoff ----------------------------------------------------------------------------- */

static void
backoff_fired(evutil_socket_t fd, short what, void *arg)
{
	struct kube_informer *inf = arg;

	if (inf->backoff_relist)
		start_list(inf);
	else
		start_watch(inf);
}

/* An answer too large comes back as large: never the short backoff of a process waiting
 * for its first sync, which would fetch it again every 2 s. */
static void
schedule_retry_max(struct kube_informer *inf, bool relist, bool count_error, bool full)
{
	uint64_t d = kube_backoff_delay(inf->backoff_base,
	    inf->synced || full ? inf->backoff_max : inf->backoff_unsynced_max, inf->attempt,
	    &inf->seed);
	struct timeval tv = {
	    .tv_sec = (time_t)(d / USEC_PER_SEC), .tv_usec = (suseconds_t)(d % USEC_PER_SEC)};

	if (inf->attempt < 32)
		inf->attempt++;
	if (count_error)
		inf->stats.errors++;
	inf->stats.last_backoff_usec = d;
	inf->state = INF_BACKOFF;
	inf->backoff_relist = relist;
	evtimer_add(inf->backoff_timer, &tv);
}

static void
schedule_retry(struct kube_informer *inf, bool relist, bool count_error)
{
	schedule_retry_max(inf, relist, count_error, false);
}

/* --- list ------------------------------------------------------------------------------------ */

struct seen_ctx {
	struct kube_informer *inf;
	char **keys;
	size_t n, cap;
};

static int
collect_unseen(void *userdata, const char *key, const void *item)
{
	struct seen_ctx *ctx = userdata;

	if (kube_store_get(ctx->inf->seen, key))
		return 0;
	if (ctx->n == ctx->cap) {
		size_t cap = ctx->cap ? ctx->cap * 2 : 16;
		char **k = realloc(ctx->keys, cap * sizeof(*k));

		if (!k)
			return -ENOMEM;
		ctx->keys = k;
		ctx->cap = cap;
	}
	ctx->keys[ctx->n] = strdup(key);
	if (!ctx->keys[ctx->n])
		return -ENOMEM;
	ctx->n++;
	return 0;
}

static void
finish_list(struct kube_informer *inf)
{
	struct seen_ctx ctx = {.inf = inf};

	kube_store_foreach(inf->store, collect_unseen, &ctx);
	for (size_t i = 0; i < ctx.n; i++) {
		apply_delete_key(inf, ctx.keys[i]);
		free(ctx.keys[i]);
	}
	free(ctx.keys);
	inf->seen = kube_store_free(inf->seen);
	inf->stats.lists++;
	inf->synced = true;
	inf->attempt = 0;
	informer_record_success(inf, "list");
	start_watch(inf);
}

static void list_page(struct kube_informer *inf);

static void
list_failed(struct kube_informer *inf, int err, long status, const char *reason, const char *msg)
{
	char more[1400];

	if (err == -EFBIG) {
		/* a page too large: smaller pages next time (down to one object), after backoff */
		unsigned was = inf->page_size;

		inf->stats.too_large++;
		if (inf->page_size > 1)
			inf->page_size /= 2;
		if (inf->page_size != was) {
			snprintf(more, sizeof(more), "%s; pages of %u objects next", msg ? msg : "",
			    inf->page_size);
			msg = more;
		}
	}
	informer_record_failure(inf, "list", err, status, reason, msg);
	free(inf->continue_token);
	inf->continue_token = NULL;
	inf->seen = kube_store_free(inf->seen);
	schedule_retry_max(inf, true, true, err == -EFBIG);
}

/*
 * A page's items[] and metadata spans (the last of duplicate members, as jansson keeps);
 * -EBADMSG when the text is not JSON.
 */
static int
scan_page(const char *body, size_t len, struct jscan_span *items, struct jscan_span *meta)
{
	struct jscan_iter it;
	struct jscan_span k, v;
	int r;

	*items = *meta = (struct jscan_span){NULL, 0};
	if (len == 0)
		return 0; /* no answer: nothing listed, and no resourceVersion */
	if (jscan_open(&it, body, len, true) < 0)
		return jscan_value(body, len, &v) < 0 ? -EBADMSG : 0; /* JSON, not an object */
	while ((r = jscan_next(&it, &k, &v)) == 1) {
		if (jscan_key_is(k, "items"))
			*items = v;
		else if (jscan_key_is(k, "metadata"))
			*meta = v;
	}
	return r;
}

static void
list_done(void *userdata, const struct kube_result *res, const char *body, size_t len)
{
	struct kube_informer *inf = userdata;
	struct jscan_span items, meta, item;
	struct jscan_iter it;
	struct obj_meta m;
	struct jscan_span cont = {NULL, 0};
	char rv[sizeof(inf->rv)];

	inf->list_call = NULL;
	if (res->error < 0) {
		list_failed(inf, res->error, res->http_status, res->reason, res->message);
		return;
	}
	if (scan_page(body, len, &items, &meta) < 0) {
		list_failed(inf, -EBADMSG, res->http_status, "", "response is not JSON");
		return;
	}
	inf->stats.pages++;
	if (jscan_type(items) == '[' && jscan_open_span(&it, items, false) == 0) {
		while (jscan_next(&it, NULL, &item) == 1) {
			if (jscan_type(item) != '{') {
				inf->stats.dropped++;
				continue;
			}
			scan_meta(item.p, item.len, &m);
			apply_upsert(inf, item.p, item.len, &m, true);
		}
	}
	if (jscan_type(meta) == '{' && jscan_get_span(meta, "continue", &cont) == 1 &&
	    jscan_type(cont) != '"')
		cont.len = 0;
	free(inf->continue_token);
	inf->continue_token = NULL;
	if (cont.len > 2) { /* a non-empty string */
		inf->continue_token = malloc(cont.len);
		if (!inf->continue_token ||
		    jscan_string(cont, inf->continue_token, cont.len, NULL) < 0) {
			free(inf->continue_token);
			inf->continue_token = NULL;
			inf->seen = kube_store_free(inf->seen);
			schedule_retry(inf, true, true);
			return;
		}
		list_page(inf);
		return;
	}
	if (jscan_type(meta) == '{' && meta_string(meta, "resourceVersion", rv, sizeof(rv)))
		set_rv(inf, rv);
	if (!inf->rv[0]) {
		/* nothing to watch from: list again later rather than spin */
		informer_record_failure(
		    inf, "list", -EBADMSG, 0, NULL, "no metadata.resourceVersion in the answer");
		inf->seen = kube_store_free(inf->seen);
		schedule_retry(inf, true, true);
		return;
	}
	finish_list(inf);
}

static void
list_page(struct kube_informer *inf)
{
	struct kube_list_opts lo = {
	    .label_selector = inf->label_selector,
	    .field_selector = inf->field_selector,
	    .limit = inf->page_size,
	    .continue_token = inf->continue_token,
	};

	int rc =
	    kube_list_raw_call(inf->c, inf->res, inf->ns, &lo, list_done, inf, &inf->list_call);

	if (rc < 0) {
		informer_record_failure(inf, "list", rc, 0, NULL, "not started");
		inf->seen = kube_store_free(inf->seen);
		schedule_retry(inf, true, true);
	}
}

static void
start_list(struct kube_informer *inf)
{
	inf->state = INF_LISTING;
	kube_store_free(inf->seen);
	inf->seen = NULL;
	if (kube_store_new(noop_destroy, &inf->seen) < 0) {
		schedule_retry(inf, true, true);
		return;
	}
	free(inf->continue_token);
	inf->continue_token = NULL;
	list_page(inf);
}

/* --- watch ---------------------------------------------------------------------------------- */

static void
watch_event(void *userdata, enum kube_watch_type type, const char *text, size_t len)
{
	struct kube_informer *inf = userdata;
	struct obj_meta m;

	if (type == KUBE_WATCH_ERROR)
		return; /* the stream ends; watch_end decides */
	scan_meta(text, len, &m);
	switch (type) {
	case KUBE_WATCH_ADDED:
	case KUBE_WATCH_MODIFIED:
		apply_upsert(inf, text, len, &m, false);
		break;
	case KUBE_WATCH_DELETED:
		if (m.has_key)
			apply_delete_key(inf, m.key);
		break;
	case KUBE_WATCH_BOOKMARK:
	case KUBE_WATCH_ERROR:
		break;
	}
	informer_record_success(inf, "watch");
	inf->stats.events++;
	if (inf->watch_events++ == 0)
		inf->attempt = 0; /* the watch works: a later quick end starts its backoff afresh */
	if (m.has_rv)
		set_rv(inf, m.rv);
}

static void
watch_end(void *userdata, int error, const char *message)
{
	struct kube_informer *inf = userdata;
	/* As client-go's reflector ("very short watch"): a watch that ends within a second of
	 * its start without delivering anything is taken as a proxy or an overloaded server
	 * closing it, and is not opened again at once. One that delivered events is not: a
	 * CPU-starved API server ends watches every second or two during a burst of changes
	 * (seen on 1.20; why, it does not log), and backing off there leaves the cache stale
	 * for seconds while the changes pile up. */
	bool quick = clock_now_usec() - inf->watch_started < USEC_PER_SEC && !inf->watch_events;
	char why[512];

	/* message may live in the watch freed below */
	snprintf(why, sizeof(why), "%s", message ? message : "");
	message = why;
	inf->watch = kube_watch_free(inf->watch);
	if (error == 0 && quick) {
		/* closed as soon as opened (a proxy, an overloaded server): do not spin */
		inf->stats.watch_ends_empty++;
		schedule_retry(inf, false, false);
		log_debug("%s informer: watch ended by the server at once, with no event; watching "
			  "again from resourceVersion %s in %llu ms",
		    inf_name(inf), inf->rv,
		    (unsigned long long)(inf->stats.last_backoff_usec / USEC_PER_MSEC));
	} else if (error == 0) {
		/* the server's timeoutSeconds (or its shutdown): the normal end of a watch */
		inf->stats.watch_ends++;
		log_debug(
		    "%s informer: watch ended by the server after %llu s; watching again from "
		    "resourceVersion %s",
		    inf_name(inf),
		    (unsigned long long)((clock_now_usec() - inf->watch_started) / USEC_PER_SEC),
		    inf->rv);
		inf->attempt = 0;
		informer_record_success(inf, "watch");
		start_watch(inf);
	} else if (error == -EKEYEXPIRED) {
		inf->stats.relists_410++;
		inf->rv[0] = '\0';
		start_list(inf);
	} else if (error == -EFBIG) {
		/* an event too large was skipped: the cache misses it, list again after backoff */
		inf->stats.too_large++;
		inf->rv[0] = '\0';
		informer_record_failure(inf, "watch", error, 0, NULL, message);
		schedule_retry_max(inf, true, true, true);
	} else if (error == -ETIMEDOUT && !quick) {
		/* not ended by the server by its deadline (or the connect timed out): at once */
		inf->stats.stalls++;
		inf->stats.errors++;
		informer_record_failure(inf, "watch", error, 0, NULL, message);
		start_watch(inf);
	} else {
		informer_record_failure(inf, "watch", error, 0, NULL, message);
		schedule_retry(inf, false, true);
	}
}

void
kube_informer_apply_event_text(
    struct kube_informer *inf, enum kube_watch_type type, const char *text, size_t len)
{
	watch_event(inf, type, text, len);
}

static void
start_watch(struct kube_informer *inf)
{
	struct kube_watch_opts wo = {
	    .label_selector = inf->label_selector,
	    .field_selector = inf->field_selector,
	    .resource_version = inf->rv,
	    .bookmarks = true,
	};
	int rc;

	if (!inf->rv[0]) {
		start_list(inf);
		return;
	}
	wo.timeout_seconds = inf->watch_timeout_s;
	if (!wo.timeout_seconds) {
		uint64_t jitter = kube_backoff_delay(600, 600, 0, &inf->seed); /* 300..600 */

		wo.timeout_seconds = (unsigned)jitter;
	}
	inf->state = INF_WATCHING;
	inf->watch_started = clock_now_usec();
	inf->watch_events = 0;
	rc = kube_watch_start_raw(
	    inf->c, inf->res, inf->ns, &wo, watch_event, watch_end, inf, &inf->watch);
	if (rc < 0) {
		informer_record_failure(inf, "watch", rc, 0, NULL, "not started");
		inf->watch = NULL;
		schedule_retry(inf, false, true);
		return;
	}
	inf->stats.watches++;
}

/* --- resync ------------------------------------------------------------------------------- */

static int
resync_visit(void *userdata, const char *key, const void *item)
{
	notify_update(userdata, key, item, item);
	return 0;
}

static void
resync_fired(evutil_socket_t fd, short what, void *arg)
{
	struct kube_informer *inf = arg;

	if (inf->synced)
		kube_store_foreach(inf->store, resync_visit, inf);
}

int
kube_informer_start(struct kube_informer *inf)
{
	if (inf->state != INF_IDLE)
		return -EALREADY;
	if (inf->resync_usec) {
		struct timeval tv = {.tv_sec = (time_t)(inf->resync_usec / USEC_PER_SEC),
		    .tv_usec = (suseconds_t)(inf->resync_usec % USEC_PER_SEC)};

		evtimer_add(inf->resync_timer, &tv);
	}
	start_list(inf);
	return 0;
}

static void
wait_tick(evutil_socket_t fd, short what, void *arg)
{
}

int
kube_informers_wait_synced(struct kube_informer *const *infs, size_t n, long timeout_ms)
{
	struct event_base *base;
	struct event *tick;
	struct timeval tv = {0, 50000};
	uint64_t end = clock_now_usec() + (uint64_t)timeout_ms * USEC_PER_MSEC;
	bool all;

	if (n == 0)
		return 0;
	base = kube_client_base(infs[0]->c);
	tick = event_new(base, -1, EV_PERSIST, wait_tick, NULL);
	if (!tick)
		return -ENOMEM;
	evtimer_add(tick, &tv);
	for (;;) {
		all = true;
		for (size_t i = 0; i < n; i++)
			all = all && infs[i]->synced;
		if (all || clock_now_usec() >= end)
			break;
		event_base_loop(base, EVLOOP_ONCE);
	}
	event_free(tick);
	return all ? 0 : -ETIMEDOUT;
}
