/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Informer = reflector + store + handlers (client-go tools/cache, single-threaded):
 *
 *   LIST (paged, limit/continue) --> apply each item, remember the keys seen
 *        last page: delete what was not seen, synced, remember list resourceVersion
 *   WATCH from that resourceVersion (bookmarks, server timeoutSeconds)
 *        event: transform, put/delete, call handlers, advance resourceVersion
 *        closed by the server        --> WATCH again at once
 *        410 Gone / Expired          --> LIST again (relist)
 *        other failure (refused ...) --> WATCH again after jittered exponential backoff
 *        no byte for the idle timeout --> WATCH again at once (a stalled stream)
 *
 * Backoff is capped at 2 s until the first list succeeds, then at 30 s. Failures are logged
 * (the first at warn, then at the 2nd, 4th, 8th ... and at most once per backoff cap) and the
 * last one is kept for /readyz (kube_informer_describe_failure).
 *
 * Objects are transformed into the caller's compact struct as they arrive, and the json_t
 * is dropped; items whose resourceVersion did not change on relist are not transformed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "lib/clock.h"
#include "lib/log.h"

#define MAX_HANDLERS 8
#define KEY_MAX 512
#define UNSYNCED_BACKOFF_MAX (2 * USEC_PER_SEC)
#define WATCH_IDLE_TIMEOUT (120 * USEC_PER_SEC)

enum inf_state {
	INF_IDLE,
	INF_LISTING,
	INF_WATCHING,
	INF_BACKOFF,
};

struct kube_informer {
	struct kube_client *c;
	const struct kube_resource *res;
	char *ns, *label_selector, *field_selector;
	unsigned page_size;
	uint64_t resync_usec;
	unsigned watch_timeout_s;
	uint64_t backoff_base, backoff_max, backoff_unsynced_max;
	uint64_t watch_idle;
	uint64_t last_log; /* of a failure line (monotonic, like the loop's timers) */
	unsigned attempt;
	uint64_t seed;
	kube_transform_fn transform;
	void *transform_userdata;
	kube_decode_fn decode;
	void *decode_userdata;
	struct kube_store *store;
	struct kube_store *seen; /* keys seen during the current list */
	struct kube_informer_handlers handlers[MAX_HANDLERS];
	size_t nhandlers;
	enum inf_state state;
	bool synced;
	bool backoff_relist; /* what to do when the backoff timer fires */
	char rv[64];
	char *continue_token;
	struct kube_watch *watch;
	struct kube_http_call *list_call; /* a list page in flight */
	uint64_t watch_started;
	struct event *backoff_timer;
	struct event *resync_timer;
	struct kube_informer_stats stats;
};

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
	if (opts->transform && !opts->destroy)
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
	inf->watch_idle =
	    opts->watch_idle_timeout_usec ? opts->watch_idle_timeout_usec : WATCH_IDLE_TIMEOUT;
	inf->seed = clock_now_usec() | 1;
	inf->transform = opts->transform;
	inf->transform_userdata = opts->transform_userdata;
	inf->decode = opts->decode;
	inf->decode_userdata = opts->decode_userdata;
	rc = -ENOMEM;
	if ((opts->ns && !(inf->ns = strdup(opts->ns))) ||
	    (opts->label_selector && !(inf->label_selector = strdup(opts->label_selector))) ||
	    (opts->field_selector && !(inf->field_selector = strdup(opts->field_selector))))
		goto fail;
	rc = kube_store_new(opts->transform ? opts->destroy : NULL, &inf->store);
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

/* For messages: the kind ("IPPool"), else the plural resource name. */
static const char *
inf_name(const struct kube_informer *inf)
{
	return inf->res->kind && *inf->res->kind ? inf->res->kind : inf->res->resource;
}

static void
format_since(int64_t epoch, char out[16])
{
	time_t t = (time_t)epoch;
	struct tm tm;

	if (!gmtime_r(&t, &tm) || strftime(out, 16, "%H:%M:%SZ", &tm) == 0)
		snprintf(out, 16, "?");
}

bool
kube_informer_describe_failure(const struct kube_informer *inf, char *buf, size_t len)
{
	char since[16];

	if (len)
		buf[0] = '\0';
	if (!inf->stats.failures)
		return false;
	format_since(inf->stats.failing_since, since);
	snprintf(buf, len, "%s informer: %s - %llu failure%s since %s", inf_name(inf),
	    inf->stats.last_error, (unsigned long long)inf->stats.failures,
	    inf->stats.failures == 1 ? "" : "s", since);
	return true;
}

/* --- failures -------------------------------------------------------------------------------- */

static bool
power_of_two(uint64_t n)
{
	return n && !(n & (n - 1));
}

/* "https://host:port" of the first URL in a transport message ("GET https://h:p/api/...: ..."),
 * else the whole message. */
static void
message_origin(const char *message, char *out, size_t len)
{
	const char *scheme = strstr(message, "://"), *start, *end;

	if (!scheme) {
		snprintf(out, len, "%s", message);
		return;
	}
	for (start = scheme; start > message && start[-1] != ' '; start--)
		;
	end = scheme + 3 + strcspn(scheme + 3, "/ ");
	snprintf(out, len, "%.*s", (int)(end - start), start);
}

/*
 * what: "list" or "watch"; status/reason of an HTTP answer (0/NULL for a transport error);
 * message the full text (for the log). Keeps a short cause for /readyz and logs the first
 * failure of a run at warn, then the 2nd, 4th, 8th ... and at least once per backoff cap.
 */
static void
record_failure(struct kube_informer *inf, const char *what, int err, long status,
    const char *reason, const char *message)
{
	struct kube_informer_stats *st = &inf->stats;
	uint64_t now = clock_now_usec();
	char desc[sizeof(st->last_error) + 128], where[200] = "";
	const char *more;

	if (!message)
		message = "";
	if (status) {
		snprintf(st->last_error, sizeof(st->last_error), "%s failed: HTTP %ld %s", what,
		    status, reason && *reason ? reason : kube_errno_name(err));
	} else {
		message_origin(message, where, sizeof(where));
		snprintf(st->last_error, sizeof(st->last_error), "%s failed: %s%s%s%s", what,
		    strerror(err < 0 ? -err : EIO), where[0] ? " (" : "", where,
		    where[0] ? ")" : "");
	}
	more = *message && strcmp(where, message) != 0 ? message : NULL; /* the full text */
	if (st->failures++ == 0) {
		st->failing_since = (int64_t)time(NULL);
		inf->last_log = now;
		log_warn("%s informer: %s%s%s%s", inf_name(inf), st->last_error, more ? " [" : "",
		    more ? more : "", more ? "]" : "");
		return;
	}
	if (!power_of_two(st->failures) && now - inf->last_log < inf->backoff_max)
		return;
	inf->last_log = now;
	kube_informer_describe_failure(inf, desc, sizeof(desc));
	log_warn("%s%s%s%s", desc, more ? " [" : "", more ? more : "", more ? "]" : "");
}

static void
record_success(struct kube_informer *inf, const char *what)
{
	struct kube_informer_stats *st = &inf->stats;

	if (!st->failures)
		return;
	log_info("%s informer: %s works again after %llu failure%s", inf_name(inf), what,
	    (unsigned long long)st->failures, st->failures == 1 ? "" : "s");
	st->failures = 0;
	st->failing_since = 0;
	st->last_error[0] = '\0';
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

/* Adds or replaces obj (borrowed). */
static void
apply_upsert(struct kube_informer *inf, json_t *obj, bool from_list)
{
	const char *rv = kube_obj_resource_version(obj);
	const char *old_rv;
	char key[KEY_MAX];
	void *item, *old = NULL;
	bool existed;

	if (kube_obj_key(obj, key, sizeof(key)) < 0) {
		inf->stats.dropped++;
		return;
	}
	if (from_list && inf->seen)
		kube_store_put(inf->seen, key, NULL, (void *)1, NULL);
	old_rv = kube_store_resource_version(inf->store, key);
	existed = kube_store_get(inf->store, key) != NULL;
	if (existed && from_list && rv && old_rv && strcmp(rv, old_rv) == 0)
		return; /* unchanged since we saw it */
	item = inf->transform ? inf->transform(inf->transform_userdata, obj) : json_incref(obj);
	if (!item) {
		inf->stats.dropped++;
		return;
	}
	if (kube_store_put(inf->store, key, rv, item, &old) < 0) {
		inf->stats.dropped++;
		kube_store_destroy_item(inf->store, old);
		return;
	}
	if (old) {
		notify_update(inf, key, old, item);
		kube_store_destroy_item(inf->store, old);
	} else {
		notify_add(inf, key, item);
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

static void
schedule_retry(struct kube_informer *inf, bool relist, bool count_error)
{
	uint64_t d = kube_backoff_delay(inf->backoff_base,
	    inf->synced ? inf->backoff_max : inf->backoff_unsynced_max, inf->attempt, &inf->seed);
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
	record_success(inf, "list");
	start_watch(inf);
}

static void list_page(struct kube_informer *inf);

static void
list_done(void *userdata, const struct kube_result *res)
{
	struct kube_informer *inf = userdata;
	const json_t *items, *meta;
	const char *cont;
	size_t i;
	json_t *v;

	inf->list_call = NULL;
	if (res->error < 0) {
		record_failure(
		    inf, "list", res->error, res->http_status, res->reason, res->message);
		free(inf->continue_token);
		inf->continue_token = NULL;
		inf->seen = kube_store_free(inf->seen);
		schedule_retry(inf, true, true);
		return;
	}
	inf->stats.pages++;
	items = json_object_get(res->object, "items");
	json_array_foreach(items, i, v) apply_upsert(inf, v, true);
	meta = json_object_get(res->object, "metadata");
	cont = json_string_value(json_object_get(meta, "continue"));
	free(inf->continue_token);
	inf->continue_token = NULL;
	if (cont && *cont) {
		inf->continue_token = strdup(cont);
		if (!inf->continue_token) {
			inf->seen = kube_store_free(inf->seen);
			schedule_retry(inf, true, true);
			return;
		}
		list_page(inf);
		return;
	}
	set_rv(inf, json_string_value(json_object_get(meta, "resourceVersion")));
	if (!inf->rv[0]) {
		/* nothing to watch from: list again later rather than spin */
		record_failure(
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
	    .decode = inf->decode,
	    .decode_userdata = inf->decode_userdata,
	};

	int rc = kube_list_call(inf->c, inf->res, inf->ns, &lo, list_done, inf, &inf->list_call);

	if (rc < 0) {
		record_failure(inf, "list", rc, 0, NULL, "not started");
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
watch_event(void *userdata, enum kube_watch_type type, json_t *obj)
{
	struct kube_informer *inf = userdata;
	char key[KEY_MAX];

	switch (type) {
	case KUBE_WATCH_ADDED:
	case KUBE_WATCH_MODIFIED:
		apply_upsert(inf, obj, false);
		break;
	case KUBE_WATCH_DELETED:
		if (kube_obj_key(obj, key, sizeof(key)) == 0)
			apply_delete_key(inf, key);
		break;
	case KUBE_WATCH_BOOKMARK:
		break;
	case KUBE_WATCH_ERROR:
		return; /* the stream ends; watch_end decides */
	}
	record_success(inf, "watch");
	inf->stats.events++;
	set_rv(inf, kube_obj_resource_version(obj));
}

static void
watch_end(void *userdata, int error, const char *message)
{
	struct kube_informer *inf = userdata;
	bool quick = clock_now_usec() - inf->watch_started < USEC_PER_SEC;
	char why[512];

	/* message may live in the watch freed below */
	snprintf(why, sizeof(why), "%s", message ? message : "");
	message = why;
	inf->watch = kube_watch_free(inf->watch);
	if (error == 0 && quick) {
		/* closed as soon as opened (a proxy, an overloaded server): do not spin */
		schedule_retry(inf, false, false);
	} else if (error == 0) {
		inf->attempt = 0;
		record_success(inf, "watch");
		start_watch(inf);
	} else if (error == -EKEYEXPIRED) {
		inf->stats.relists_410++;
		inf->rv[0] = '\0';
		start_list(inf);
	} else if (error == -ETIMEDOUT && !quick) {
		/* silent for the idle timeout (or the connect timeout): watch again at once */
		inf->stats.stalls++;
		inf->stats.errors++;
		record_failure(inf, "watch", error, 0, NULL, message);
		start_watch(inf);
	} else {
		record_failure(inf, "watch", error, 0, NULL, message);
		schedule_retry(inf, false, true);
	}
}

void
kube_informer_apply_event(struct kube_informer *inf, enum kube_watch_type type, json_t *obj)
{
	watch_event(inf, type, obj);
}

static void
start_watch(struct kube_informer *inf)
{
	struct kube_watch_opts wo = {
	    .label_selector = inf->label_selector,
	    .field_selector = inf->field_selector,
	    .resource_version = inf->rv,
	    .bookmarks = true,
	    .decode = inf->decode,
	    .decode_userdata = inf->decode_userdata,
	};
	int rc;

	if (!inf->rv[0]) {
		start_list(inf);
		return;
	}
	wo.timeout_seconds = inf->watch_timeout_s;
	wo.idle_timeout_ms = (unsigned)((inf->watch_idle + USEC_PER_MSEC - 1) / USEC_PER_MSEC);
	if (!wo.timeout_seconds) {
		uint64_t jitter = kube_backoff_delay(600, 600, 0, &inf->seed); /* 300..600 */

		wo.timeout_seconds = (unsigned)jitter;
	}
	inf->state = INF_WATCHING;
	inf->watch_started = clock_now_usec();
	rc = kube_watch_start(
	    inf->c, inf->res, inf->ns, &wo, watch_event, watch_end, inf, &inf->watch);
	if (rc < 0) {
		record_failure(inf, "watch", rc, 0, NULL, "not started");
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
