/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_KUBE_KUBE_H
#define VMDHCP_KUBE_KUBE_H

/*
 * Generic asynchronous Kubernetes client on one libevent loop: configuration, verbs,
 * watches, informers (list+watch into a typed store), a rate-limited work queue, a
 * reconcile loop, Lease leader election and an Event recorder. Knows no project kinds.
 *
 * Error model (project convention, not something Kubernetes defines). Every fallible call
 * returns a negative errno; an API answer maps as follows (kube/status.c):
 *
 *   HTTP / Status.reason                      errno
 *   404 NotFound                              -ENOENT
 *   409 AlreadyExists                         -EEXIST
 *   409 Conflict (resourceVersion, uid)       -ESTALE      re-read and retry
 *   410 Gone / Expired                        -EKEYEXPIRED relist
 *   401 Unauthorized, 403 Forbidden           -EACCES
 *   400 BadRequest                            -EBADMSG
 *   422 Invalid                               -EINVAL
 *   429 TooManyRequests                       -EBUSY
 *   5xx (500, 503, 504 ...)                   -EIO
 *   client or server timeout                  -ETIMEDOUT
 *   connection refused / host unreachable     -ECONNREFUSED / -EHOSTUNREACH
 *   TLS failure (bad CA, bad certificate)     -EPROTO
 *   answer larger than the cap (see below)    -EFBIG
 *   other transport failure                   -EIO
 *
 * The Status message (or the curl error with the URL) is kept in the result for logs.
 *
 * Callbacks: every asynchronous call reports exactly once through its callback, from the
 * event loop (never from inside the call that started it), unless the owning object is
 * freed or the call cancelled first, in which case it never reports. Callbacks may start
 * new requests; they must not free the client, or the informer/leader/recorder that is
 * calling them (a watch may free itself from its own callbacks).
 *
 * Transport, one of two linked in (kube-internal.h's kube_http_*), both on the caller's
 * event_base: kube/http.c, libcurl multi (HTTP/2 when the server offers it, keep-alive pool
 * of at most 32 connections per host, at most 64 plain requests in flight); or
 * kube/http-mbedtls.c, HTTP/1.1 over mbed TLS (one request per connection at a time, at most
 * 32 plain requests in flight, as many idle connections kept for 90 s), used by the agent.
 * Both: more requests wait in order as small records, 10 s connect and 30 s request
 * timeouts by default, watches without a total timeout, TLS verified against the configured
 * CA unless insecure-skip-tls-verify.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct event_base;
struct metrics;

/* --- clock (clock.c) --------------------------------------------------------------- */

/* A monotonic usec clock; NULL `now` (or a NULL struct pointer) means lib/clock.h. */
struct kube_clock {
	uint64_t (*now)(void *userdata);
	void *userdata;
};
uint64_t kube_clock_now(const struct kube_clock *clk);

/* --- errors ------------------------------------------------------------------------ */

/* HTTP status + Status.reason (may be NULL) -> negative errno (0 for 2xx). */
int kube_status_to_errno(long http_status, const char *reason);
/* Short name of an errno from the table above ("NotFound", "Conflict", ...). */
const char *kube_errno_name(int err);

/* --- resources (resource.c) ----------------------------------------------------------- */

/* A resource addressed generically. All strings static/borrowed. group "" = core. */
struct kube_resource {
	const char *group;
	const char *version;
	const char *resource; /* plural, lower case: "leases" */
	const char *kind;     /* "Lease" (for Events' involvedObject and created objects) */
	bool namespaced;
};

extern const struct kube_resource kube_res_namespaces;
extern const struct kube_resource kube_res_configmaps;
extern const struct kube_resource kube_res_pods;
extern const struct kube_resource kube_res_nodes;
extern const struct kube_resource kube_res_events;
extern const struct kube_resource kube_res_leases;

/* "v1" or "group/version" into out; returns out. */
const char *kube_resource_api_version(const struct kube_resource *res, char *out, size_t len);

/* --- object helpers (metadata.c, key.c; all borrowed from obj; NULL when absent) -------- */

const char *kube_obj_name(const json_t *obj);
const char *kube_obj_namespace(const json_t *obj);
const char *kube_obj_uid(const json_t *obj);
const char *kube_obj_resource_version(const json_t *obj);
const char *kube_obj_label(const json_t *obj, const char *key);
const char *kube_obj_annotation(const json_t *obj, const char *key);
int64_t kube_obj_generation(const json_t *obj);
bool kube_obj_is_deleting(const json_t *obj); /* metadata.deletionTimestamp set */
bool kube_obj_has_finalizer(const json_t *obj, const char *finalizer);
/* Adds/removes a finalizer in place; returns 1 if changed, 0 if not, -ENOMEM. */
int kube_obj_add_finalizer(json_t *obj, const char *finalizer);
int kube_obj_remove_finalizer(json_t *obj, const char *finalizer);
/* Returns a new reference: an ownerReference to owner (controller=true, blockOwnerDeletion). */
json_t *kube_owner_reference(const json_t *owner, const char *api_version, const char *kind);
/* "ns/name" (or "name" for cluster-scoped) into out; -ENAMETOOLONG if it does not fit,
 * -EINVAL without a name. */
int kube_obj_key(const json_t *obj, char *out, size_t len);
int kube_key_make(const char *ns, const char *name, char *out, size_t len);
/* Splits "ns/name" into out buffers (ns empty for cluster-scoped keys). */
int kube_key_split(const char *key, char *ns, size_t ns_len, char *name, size_t name_len);

/* --- configuration ------------------------------------------------------------------- */

struct kube_config;

/*
 * Loads a kubeconfig: path, else $KUBECONFIG (first entry), else ~/.kube/config. context
 * NULL = current-context. On failure returns -EINVAL/-ENOENT/-EACCES and one clear error in
 * err naming the file and field ("kubeconfig /x: users[0].user.client-key-data: not base64").
 */
int kube_config_from_kubeconfig(
    const char *path, const char *context, struct kube_config **ret, char *err, size_t err_len);
/*
 * In-cluster: KUBERNETES_SERVICE_HOST/PORT, the service-account token (re-read whenever the
 * file changes, so rotated tokens are picked up), its CA and namespace. root NULL =
 * /var/run/secrets/kubernetes.io/serviceaccount (tests pass another directory).
 */
int kube_config_in_cluster(const char *root, struct kube_config **ret, char *err, size_t err_len);
/* Explicit kubeconfig path if given, else $KUBECONFIG, else in-cluster. */
int kube_config_load(const char *kubeconfig, struct kube_config **ret, char *err, size_t err_len);
/*
 * The same with the kubeconfig's context named (NULL or "": its current-context); in-cluster
 * (no kubeconfig) ignores it, as client-go's clientcmd does with no file.
 */
int kube_config_load_context(const char *kubeconfig, const char *context, struct kube_config **ret,
    char *err, size_t err_len);
struct kube_config *kube_config_free(struct kube_config *cfg);
/* Borrowed. */
const char *kube_config_server(const struct kube_config *cfg);
const char *kube_config_namespace(const struct kube_config *cfg); /* "default" if unset */
bool kube_config_insecure(const struct kube_config *cfg);
/* The current bearer token (re-read from its file when it changed); NULL when none. */
const char *kube_config_token(struct kube_config *cfg);

/* --- client and verbs (client.c; waits in sync.c) ------------------------------------ */

struct kube_client;

/* base borrowed; cfg borrowed and must outlive the client. */
int kube_client_new(struct event_base *base, struct kube_config *cfg, struct kube_client **ret);
/* Drops pending requests without calling their callbacks. Accepts NULL; returns NULL. */
struct kube_client *kube_client_free(struct kube_client *c);
/* Per-request timeout for non-watch requests (default 30 s) and connect timeout (10 s). */
void kube_client_set_timeouts(struct kube_client *c, long request_ms, long connect_ms);
struct event_base *kube_client_base(const struct kube_client *c);

struct kube_result {
	int error;	     /* 0 or negative errno (table above) */
	long http_status;    /* 0 when no HTTP answer */
	json_t *object;	     /* borrowed: the answer (object, List or Status); may be NULL */
	const char *reason;  /* borrowed: Status.reason or "" */
	const char *message; /* borrowed: Status.message, or "METHOD URL: curl error", or "" */
};
typedef void (*kube_done_fn)(void *userdata, const struct kube_result *res);

struct kube_list_opts {
	const char *label_selector;
	const char *field_selector;
	unsigned limit;		      /* 0: no limit */
	const char *continue_token;   /* from the previous page's metadata.continue */
	const char *resource_version; /* NULL: most recent */
	/* Each item reduced to apiVersion, kind and metadata: the rest of the page is checked
	 * and skipped by lib/jscan.h, never built (callers that read only metadata of kinds
	 * with large objects, like an IPPool's status.ipv4.allocated). */
	bool metadata_only;
};

enum kube_patch_type {
	KUBE_PATCH_MERGE, /* application/merge-patch+json */
	KUBE_PATCH_JSON,  /* application/json-patch+json (an array of operations) */
};

struct kube_delete_opts {
	const char *uid;	      /* precondition */
	const char *resource_version; /* precondition */
	const char *propagation;      /* "Background", "Foreground", "Orphan" or NULL */
};

/*
 * All return 0 (the callback will report) or a negative errno (no callback). ns is ignored
 * for cluster-scoped resources and required for namespaced ones (except list: NULL = all).
 * ret_call (optional, NULL when not wanted) gets the call, to cancel it with kube_call_cancel;
 * the handle is valid until the callback has run (the holder clears its pointer there) or the
 * call is cancelled.
 */
struct kube_call;
int kube_get(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const char *name, kube_done_fn done, void *userdata, struct kube_call **ret_call);
int kube_list(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const struct kube_list_opts *opts, kube_done_fn done, void *userdata,
    struct kube_call **ret_call);
/* obj borrowed (serialised at once). update/update_status take name and ns from obj. */
int kube_create(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const json_t *obj, kube_done_fn done, void *userdata, struct kube_call **ret_call);
int kube_update(struct kube_client *c, const struct kube_resource *res, const json_t *obj,
    kube_done_fn done, void *userdata, struct kube_call **ret_call);
int kube_update_status(struct kube_client *c, const struct kube_resource *res, const json_t *obj,
    kube_done_fn done, void *userdata, struct kube_call **ret_call);
/* patch borrowed. subresource NULL or "status". */
int kube_patch(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const char *name, enum kube_patch_type type, const json_t *patch, const char *subresource,
    kube_done_fn done, void *userdata, struct kube_call **ret_call);
int kube_delete(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const char *name, const struct kube_delete_opts *opts, kube_done_fn done, void *userdata,
    struct kube_call **ret_call);

/*
 * Read-modify-write with retry on conflict (client-go's retry.RetryOnConflict): GET, call
 * mutate on the object (borrowed; change it in place; return 0 to write, 1 for nothing to
 * do, negative errno to stop), PUT (or PUT status when status is true); on -ESTALE start
 * again, up to max_attempts (0 = 5). done gets the last result. Its call is the whole loop:
 * cancelling stops whichever of its GET and PUT is in flight.
 */
typedef int (*kube_mutate_fn)(void *userdata, json_t *obj);
int kube_update_retry(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const char *name, bool status, unsigned max_attempts, kube_mutate_fn mutate, kube_done_fn done,
    void *userdata, struct kube_call **ret_call);
/*
 * The callback (and mutate) of call will not run. Safe from inside any callback, the call's
 * own included (a no-op once its done runs). Accepts NULL. call is invalid afterwards.
 */
void kube_call_cancel(struct kube_call *call);

/* Runs base until *flag becomes true or timeout_ms passes (-ETIMEDOUT). For start-up code
 * and tests; never from inside a callback. */
int kube_run_until(struct event_base *base, const bool *flag, long timeout_ms);

/*
 * One call awaited in place, for start-up code and one-shot commands: pass kube_sync_done and
 * the struct as a verb's callback and userdata, then kube_sync_wait with the verb's return
 * value. Not from inside a callback.
 */
struct kube_sync {
	bool done;
	int error;	   /* 0 or the call's negative errno */
	json_t *object;	   /* the answer (new reference, owned by the struct) or NULL */
	char message[512]; /* "ENOENT: the server's message", or why the call did not start */
};
void kube_sync_done(void *userdata, const struct kube_result *res);
/* Drops the answer and clears the struct for the next call. */
void kube_sync_reset(struct kube_sync *s);
/* Takes the answer (new reference, or NULL): the struct no longer owns it. */
json_t *kube_sync_take(struct kube_sync *s);
/*
 * Waits at most guard_ms for the call a verb started with return value rc (its error when
 * negative); returns the call's error (0 on success), -ETIMEDOUT when it did not end. A call
 * still pending then must not outlive base: free the client before the loop runs again.
 */
int kube_sync_wait(struct event_base *base, struct kube_sync *s, long guard_ms, int rc);

/*
 * The largest answer held in memory: a list or get body, or one watch event (kube/limits.c).
 * By default a quarter of the pod's memory limit read from the cgroup (at least 1 MiB, at
 * most 256 MiB), 64 MiB without a limit; $VMDHCP_KUBE_MAX_ANSWER (bytes, or 64Mi, 2G ...)
 * overrides it, and so does kube_answer_limit_set (process-wide, for every client; source
 * says where the value comes from, for the error messages). A larger answer fails its call
 * with -EFBIG and one message naming the size seen, the cap and its source; an informer backs
 * off and lists again (halving its page size) and a watch event larger is a failure of the
 * watch (relist after backoff), never a silent drop.
 */
void kube_answer_limit_set(uint64_t bytes, const char *source);
uint64_t kube_answers_refused(void);
/* vmdhcp_api_answers_too_large_total (counter) and vmdhcp_api_answer_limit_bytes (gauge). */
int kube_metrics_add(struct metrics *m);

/* --- watch (one stream) -------------------------------------------------------------- */

enum kube_watch_type {
	KUBE_WATCH_ADDED,
	KUBE_WATCH_MODIFIED,
	KUBE_WATCH_DELETED,
	KUBE_WATCH_BOOKMARK,
	KUBE_WATCH_ERROR,
};
const char *kube_watch_type_name(enum kube_watch_type t);

struct kube_watch_opts {
	const char *label_selector;
	const char *field_selector;
	const char *resource_version; /* resume point */
	/* Server-side timeoutSeconds: the server ends the watch then (0, the end callback's 0).
	 * A watch still open at kube_watch_deadline_ms() of it is stopped and ends with -ETIMEDOUT
	 * (a stalled stream). 0 = the server's default (30 to 60 min) and no deadline: only TCP
	 * keep-alive finds a dead connection. Silence before the deadline is no failure (see
	 * kube/watch.c: the API server sends bookmarks only for kinds that changed). */
	unsigned timeout_seconds;
	bool bookmarks; /* allowWatchBookmarks */
};
/* When a watch with timeout_seconds counts as stalled, in ms from its start: the timeout, plus
 * connect_ms (the server's clock starts once the connection is up), plus a tenth of the
 * timeout (2 s at least, 30 s at most). */
long kube_watch_deadline_ms(unsigned timeout_seconds, long connect_ms);

/* object borrowed for the duration of the call. For ERROR it is the Status. */
typedef void (*kube_watch_event_fn)(void *userdata, enum kube_watch_type type, json_t *object);
/* The stream ended: 0 = closed by the server (timeout), -EKEYEXPIRED = 410 (relist), other
 * negative errno on failure (message borrowed, for logs). Not called after kube_watch_free. */
typedef void (*kube_watch_end_fn)(void *userdata, int error, const char *message);

struct kube_watch;
int kube_watch_start(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const struct kube_watch_opts *opts, kube_watch_event_fn on_event, kube_watch_end_fn on_end,
    void *userdata, struct kube_watch **ret);
/* Stops the stream. Safe from inside its own callbacks. Accepts NULL; returns NULL. */
struct kube_watch *kube_watch_free(struct kube_watch *w);
/* Lines dropped (bad JSON or unknown type) so far. */
uint64_t kube_watch_dropped(const struct kube_watch *w);

/* --- store ----------------------------------------------------------------------------- */

/*
 * Transform: turns an object (borrowed) into the compact typed item the store keeps (new,
 * freed with destroy). Returning NULL drops the object (counted). With no transform the
 * store keeps the json_t itself (a new reference; destroy = json_decref).
 */
typedef void *(*kube_transform_fn)(void *userdata, json_t *obj);
typedef void (*kube_destroy_fn)(void *item);
/* Index function: calls emit(ctx, value) once for each index value of item. */
typedef void (*kube_index_emit_fn)(void *ctx, const char *value);
typedef void (*kube_index_fn)(const void *item, kube_index_emit_fn emit, void *ctx);
/* Iteration callback; return non-zero to stop. It must not change the store. */
typedef int (*kube_store_visit_fn)(void *userdata, const char *key, const void *item);

struct kube_store;
int kube_store_new(kube_destroy_fn destroy, struct kube_store **ret);
struct kube_store *kube_store_free(struct kube_store *s);
/* name borrowed (static). Adding an index re-indexes what is stored. */
int kube_store_add_index(struct kube_store *s, const char *name, kube_index_fn fn);
/* Takes item (destroyed on failure too). *ret_old (optional) gets the replaced item, which
 * the caller must then destroy; without ret_old it is destroyed here. */
int kube_store_put(struct kube_store *s, const char *key, const char *resource_version, void *item,
    void **ret_old);
/* Removes key; *ret_item gets the item (caller destroys) or, if NULL, it is destroyed. */
int kube_store_delete(struct kube_store *s, const char *key, void **ret_item);
/* Borrowed item or NULL. */
const void *kube_store_get(const struct kube_store *s, const char *key);
const char *kube_store_resource_version(const struct kube_store *s, const char *key);
size_t kube_store_len(const struct kube_store *s);
int kube_store_foreach(const struct kube_store *s, kube_store_visit_fn fn, void *userdata);
/* Visits the items whose index `name` has value; -ENOENT for an unknown index. */
int kube_store_by_index(const struct kube_store *s, const char *name, const char *value,
    kube_store_visit_fn fn, void *userdata);
size_t kube_store_index_count(const struct kube_store *s, const char *name, const char *value);
void kube_store_destroy_item(const struct kube_store *s, void *item);

/*
 * Typed codec: one object's JSON text (a list item or a watch event's object: a span of the
 * page or line, not NUL-terminated; checked by lib/jscan.h already) -> the item the store
 * keeps (new, freed with destroy). NULL drops the object (counted). The informer reads the
 * key and resourceVersion from the text's metadata itself, so decode runs only for objects
 * it stores, never for deletions or for items unchanged at a relist.
 */
struct kube_codec {
	void *(*decode)(void *userdata, const char *text, size_t len);
	kube_destroy_fn destroy;
	void *userdata;
};

/* --- informer (informer.c, informer-failures.c) --------------------------------------- */

struct kube_informer_opts {
	const struct kube_resource *res; /* borrowed */
	const char *ns;			 /* NULL: all namespaces */
	const char *label_selector;
	const char *field_selector;
	unsigned page_size;   /* list limit per page (0 = 500) */
	uint64_t resync_usec; /* periodic resync (update events for all items); 0 = off */
	/* Server timeoutSeconds per watch (0 = 300..600 jittered). The server ends each watch then
	 * and the informer watches again from its last resourceVersion, without a list; a watch
	 * not ended by kube_watch_deadline_ms() of it is a stall. No bytes in between (no event,
	 * no bookmark) is no failure. */
	unsigned watch_timeout_s;
	uint64_t backoff_base_usec; /* reconnect backoff (0 = 800 ms), doubling ... */
	uint64_t backoff_max_usec;  /* ... up to this (0 = 30 s), jittered */
	/* Until the first list succeeds the backoff is capped lower (0 = 2 s), so a process
	 * that started while the API server was away syncs within seconds of its return. */
	uint64_t backoff_unsynced_max_usec;
	/* Either a transform of the json_load'ed object (with its destroy), or a typed codec
	 * (copied) that decodes the object's text itself; neither: the store keeps json_t. */
	kube_transform_fn transform;
	kube_destroy_fn destroy;
	void *transform_userdata;
	const struct kube_codec *codec;
	const struct kube_clock *clock;
};

/* old/new/item borrowed for the call. For delete, item is the last known state. */
struct kube_informer_handlers {
	void (*on_add)(void *userdata, const char *key, const void *item);
	void (*on_update)(void *userdata, const char *key, const void *old_item, const void *item);
	void (*on_delete)(void *userdata, const char *key, const void *item);
	void *userdata;
};

struct kube_informer_stats {
	uint64_t lists;		   /* full lists done (1 + relists) */
	uint64_t pages;		   /* list pages fetched */
	uint64_t watches;	   /* watch streams opened */
	uint64_t events;	   /* watch events applied */
	uint64_t relists_410;	   /* relists forced by 410 Gone */
	uint64_t errors;	   /* failed list/watch attempts */
	uint64_t dropped;	   /* objects the transform dropped or without a key */
	uint64_t stalls;	   /* watches the server did not end by their deadline (stopped) */
	uint64_t too_large;	   /* list pages or watch events refused for their size */
	uint64_t watch_ends;	   /* watches the server ended cleanly (its timeoutSeconds) */
	uint64_t watch_ends_empty; /* ended cleanly within 1 s with no event: backed off */
	char last_resource_version[64];
	/* The current run of failures (cleared by a successful list or a watch event): */
	uint64_t failures;	    /* list/watch failures in a row, 0 when healthy */
	int64_t failing_since;	    /* wall clock (epoch seconds) of the first of them */
	uint64_t last_backoff_usec; /* delay of the last retry scheduled */
	char last_error[320];	    /* "list failed: Connection refused (https://10.0.0.1:443)" */
};

struct kube_informer;
/* c and opts->res borrowed; strings in opts copied. */
int kube_informer_new(
    struct kube_client *c, const struct kube_informer_opts *opts, struct kube_informer **ret);
struct kube_informer *kube_informer_free(struct kube_informer *inf);
int kube_informer_add_index(struct kube_informer *inf, const char *name, kube_index_fn fn);
/* Up to 8 handler sets; copied. */
int kube_informer_add_handlers(struct kube_informer *inf, const struct kube_informer_handlers *h);
int kube_informer_start(struct kube_informer *inf);
bool kube_informer_has_synced(const struct kube_informer *inf);
/* Start-up helper (client-go's WaitForCacheSync): runs the loop until every informer has
 * synced (0) or timeout_ms passes (-ETIMEDOUT). Never from inside a callback. */
int kube_informers_wait_synced(struct kube_informer *const *infs, size_t n, long timeout_ms);
/* Borrowed. */
struct kube_store *kube_informer_store(struct kube_informer *inf);
void kube_informer_get_stats(const struct kube_informer *inf, struct kube_informer_stats *ret);
/*
 * While list/watch fails: "IPPool informer: list failed: Connection refused (https://h:443)
 * - 5 failures since 12:00:01Z" into buf and true (for a /readyz reason); false and "" when
 * healthy.
 */
bool kube_informer_describe_failure(const struct kube_informer *inf, char *buf, size_t len);

/* --- work queue ------------------------------------------------------------------------ */

/*
 * With metrics and a name, the queue registers (client-go's workqueue metrics, the label
 * name="<name>"): vmdhcp_workqueue_depth (keys ready), vmdhcp_workqueue_adds_total (keys
 * that became due: an add of a key already waiting is not one) and
 * vmdhcp_workqueue_retries_total (rate-limited adds). One family per registry, shared by
 * every queue: names must differ.
 */
struct kube_workqueue_opts {
	struct event_base *base;	/* for delayed adds; NULL = caller calls _tick */
	const struct kube_clock *clock; /* borrowed; NULL = monotonic clock */
	uint64_t base_delay_usec;	/* per-item backoff start (0 = 5 ms) */
	uint64_t max_delay_usec;	/* per-item backoff cap (0 = 1000 s) */
	double qps;			/* overall token bucket (0 = 10/s) */
	unsigned burst;			/* (0 = 100) */
	struct metrics *metrics;	/* borrowed; NULL = none */
	const char *name;		/* the label value (copied); required with metrics */
};

struct kube_workqueue;
int kube_workqueue_new(const struct kube_workqueue_opts *opts, struct kube_workqueue **ret);
struct kube_workqueue *kube_workqueue_free(struct kube_workqueue *q);
/* Called (from the loop) when an item becomes ready to get; one pending call at most. */
void kube_workqueue_set_notify(
    struct kube_workqueue *q, void (*fn)(void *userdata), void *userdata);
/* key borrowed (copied). A key already waiting is not added twice; a key being processed is
 * marked dirty and comes back once done. */
int kube_workqueue_add(struct kube_workqueue *q, const char *key);
int kube_workqueue_add_after(struct kube_workqueue *q, const char *key, uint64_t delay_usec);
/* Adds after max(per-item exponential backoff, token-bucket delay); counts a requeue. */
int kube_workqueue_add_rate_limited(struct kube_workqueue *q, const char *key);
/* The delay add_rate_limited would use now (and records the attempt). */
uint64_t kube_workqueue_when(struct kube_workqueue *q, const char *key);
void kube_workqueue_forget(struct kube_workqueue *q, const char *key);
unsigned kube_workqueue_num_requeues(const struct kube_workqueue *q, const char *key);
/* Takes the next ready key: returns 0 and a key borrowed until _done, or -EAGAIN when none
 * is ready, -ESHUTDOWN after shutdown. */
int kube_workqueue_get(struct kube_workqueue *q, const char **ret_key);
void kube_workqueue_done(struct kube_workqueue *q, const char *key);
/* Moves delayed keys whose time has come into the queue (the evtimer calls this). */
void kube_workqueue_tick(struct kube_workqueue *q);
/* Monotonic time of the next delayed key, 0 when none. */
uint64_t kube_workqueue_next_due(const struct kube_workqueue *q);
size_t kube_workqueue_len(const struct kube_workqueue *q);	   /* ready */
size_t kube_workqueue_delayed_len(const struct kube_workqueue *q); /* waiting */
void kube_workqueue_shutdown(struct kube_workqueue *q);

/* --- controller loop (reconciler.c) ---------------------------------------------------- */

enum kube_reconcile_action {
	KUBE_RECONCILE_OK,	      /* forget the key */
	KUBE_RECONCILE_REQUEUE,	      /* again with rate limiting (not an error) */
	KUBE_RECONCILE_REQUEUE_AFTER, /* again after `after_usec`; forget the backoff */
	KUBE_RECONCILE_ERROR,	      /* count the error, requeue with backoff */
	KUBE_RECONCILE_PENDING,	      /* asynchronous: finish with kube_controller_complete */
};

struct kube_reconcile_result {
	enum kube_reconcile_action action;
	uint64_t after_usec;
	int error;
};

/* key borrowed for the call (and until complete for PENDING). */
typedef struct kube_reconcile_result (*kube_reconcile_fn)(void *userdata, const char *key);

/*
 * With metrics, the controller registers controller-runtime's families with the label
 * controller="<name>": vmdhcp_reconcile_total{result} (result success, error, or requeue for
 * REQUEUE and REQUEUE_AFTER; a PENDING reconcile counts when completed),
 * vmdhcp_reconcile_errors_total and vmdhcp_reconcile_time_seconds (histogram of the
 * synchronous part), and its queue's (kube_workqueue_opts) with name="<name>". The series
 * stay in the registry after kube_controller_free (their last values).
 */
struct kube_controller_opts {
	const char *name; /* [a-z_]+, unique per registry (copied) */
	struct event_base *base;
	const struct kube_clock *clock;
	struct metrics *metrics; /* borrowed; NULL = none */
	kube_reconcile_fn reconcile;
	void *userdata;
	struct kube_workqueue_opts queue; /* base/clock taken from above */
	unsigned max_per_pass;		  /* reconciles per loop pass (0 = 64) */
	/*
	 * MaxConcurrentReconciles (controller-runtime): at most this many keys in reconcile at
	 * once, PENDING ones included until kube_controller_complete; further keys wait in the
	 * queue (0 = no limit). With share_limit, the controller draws from that controller's
	 * limit instead of its own (one budget for several queues, e.g. for their writes);
	 * max_concurrent is then ignored. Either may be freed first.
	 */
	unsigned max_concurrent;
	struct kube_controller *share_limit;
};

struct kube_controller_stats {
	uint64_t reconciles;
	uint64_t errors;
	uint64_t requeues;
};

struct kube_controller;
int kube_controller_new(const struct kube_controller_opts *opts, struct kube_controller **ret);
struct kube_controller *kube_controller_free(struct kube_controller *ctl);
int kube_controller_enqueue(struct kube_controller *ctl, const char *key);
/* For PENDING reconciles. */
void kube_controller_complete(
    struct kube_controller *ctl, const char *key, struct kube_reconcile_result res);
/* Runs up to max reconciles that are ready now (within the concurrency limit); returns how
 * many ran. Tests call this. */
unsigned kube_controller_run_pending(struct kube_controller *ctl, unsigned max);
struct kube_workqueue *kube_controller_queue(struct kube_controller *ctl);
/* Keys in reconcile now against the controller's limit (shared: all its members'). */
unsigned kube_controller_active(const struct kube_controller *ctl);
void kube_controller_get_stats(
    const struct kube_controller *ctl, struct kube_controller_stats *ret);
/* Handlers for an informer that enqueue the object's key. */
struct kube_informer_handlers kube_controller_handlers(struct kube_controller *ctl);

/* --- leader election ------------------------------------------------------------------- */

struct kube_leader_opts {
	const char *ns, *name; /* the Lease */
	const char *identity;
	uint64_t lease_duration_usec; /* 0 = 15 s */
	uint64_t renew_deadline_usec; /* 0 = 10 s; must be < lease duration */
	uint64_t retry_period_usec;   /* 0 = 2 s; must be < renew deadline */
	const struct kube_clock *clock;
	void (*on_started)(void *userdata);		       /* became leader */
	void (*on_stopped)(void *userdata);		       /* lost or released */
	void (*on_new_leader)(void *userdata, const char *id); /* observed holder changed */
	/*
	 * After each attempt: whether the API server answered it (false: no connection, a
	 * timeout, a 5xx or a 429: the Lease could be neither read nor written); false too when
	 * the renew deadline passes with no renewal answered (then on_stopped). May be NULL.
	 */
	void (*on_result)(void *userdata, bool answered);
	void *userdata;
};

struct kube_leader;
int kube_leader_new(
    struct kube_client *c, const struct kube_leader_opts *opts, struct kube_leader **ret);
struct kube_leader *kube_leader_free(struct kube_leader *l);
int kube_leader_start(struct kube_leader *l);
/*
 * True only while this process may act as leader: a successful renew started less than the
 * renew deadline ago (so well inside the lease duration others wait).
 */
bool kube_leader_is_leader(const struct kube_leader *l);
/* Gives the Lease up (holder cleared) and stops; done(userdata) called after (may be NULL). */
int kube_leader_release(struct kube_leader *l, void (*done)(void *userdata), void *userdata);

/* --- events ----------------------------------------------------------------------------- */

struct kube_recorder;
/* component borrowed (static) e.g. "vm-dhcp-controller"; host may be NULL. */
int kube_recorder_new(
    struct kube_client *c, const char *component, const char *host, struct kube_recorder **ret);
struct kube_recorder *kube_recorder_free(struct kube_recorder *r);
/*
 * Records an Event about involved (borrowed; needs metadata.name/namespace/uid and
 * apiVersion/kind, or pass api_version/kind). type "Normal" or "Warning". A repeat of the
 * same object/type/reason/message within the cache patches count and lastTimestamp.
 * Fire and forget: returns 0 or -errno (bad arguments, no memory).
 */
int kube_record_event(struct kube_recorder *r, const json_t *involved, const char *api_version,
    const char *kind, const char *type, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));
struct kube_recorder_stats {
	uint64_t created;
	uint64_t patched;
	uint64_t failed;
	uint64_t dropped;	 /* evicted from the cache while waiting for a call */
	unsigned peak_in_flight; /* most calls in flight at once */
};
void kube_recorder_get_stats(const struct kube_recorder *r, struct kube_recorder_stats *ret);

#endif
