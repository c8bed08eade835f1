/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_KUBE_INTERNAL_H
#define VMDHCP_KUBE_INTERNAL_H

/* kube/ internals shared by its files, its tests and its fuzzers. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "kube/kube.h"

/* --- config (config.c) -------------------------------------------------------------- */

struct kube_config {
	char *server; /* "https://host:port", no trailing slash */
	char *ca_file;
	char *ca_data; /* PEM */
	size_t ca_data_len;
	char *cert_file, *key_file;
	char *cert_data, *key_data; /* PEM */
	size_t cert_data_len, key_data_len;
	char *token;	  /* current bearer token */
	char *token_file; /* re-read when its inode/size/mtime change */
	uint64_t token_stamp[3];
	char *namespace;
	bool insecure;
};

/* Parses a kubeconfig document (already YAML-decoded; borrowed). path only for messages. */
int kube_config_from_json(const json_t *doc, const char *path, const char *context,
    struct kube_config **ret, char *err, size_t err_len);

/* --- HTTP calls (call.c) over an engine (http.c: libcurl; http-mbedtls.c: mbed TLS) ------- */

struct kube_http;
struct kube_http_call;

struct kube_http_request {
	const char *method;
	const char *path;	  /* "/api/v1/..." with query string */
	const char *content_type; /* of body, or NULL */
	const char *body;
	size_t body_len;
	bool stream;	 /* deliver 2xx body through on_data as it arrives (watch) */
	long timeout_ms; /* 0 = client default; stream: 0 = none */
	/* stream only: a 2xx body chunk (borrowed). Return false to abort the call quietly. */
	bool (*on_data)(void *userdata, const char *data, size_t len);
	/*
	 * Completion: error 0 when an HTTP answer came (any status), else negative errno of the
	 * transport (status 0, body empty) with message "METHOD URL: transport text". body
	 * (non-stream, or a non-2xx stream answer) borrowed for the call.
	 */
	void (*on_done)(void *userdata, int error, long status, const char *body, size_t len,
	    const char *message);
	void *userdata;
	/* Optional: frees userdata when the call ends without on_done (cancel, free). */
	void (*release)(void *userdata);
};

/* A transport's own copy of a request (http-request.c). */
struct kube_http_owned {
	char *method;
	char *url;	    /* server + path, for messages */
	char *content_type; /* or NULL */
	char *body;	    /* NUL-terminated copy, or NULL */
	size_t body_len;
};
/* Copies req with server before its path: 0, or -ENOMEM with nothing kept. */
int kube_http_request_copy(
    struct kube_http_owned *o, const char *server, const struct kube_http_request *req);
void kube_http_owned_release(struct kube_http_owned *o);

/* On the engine linked in (kube_http_engine below). */
int kube_http_new(struct event_base *base, struct kube_config *cfg, struct kube_http **ret);
struct kube_http *kube_http_free(struct kube_http *h);
void kube_http_set_timeouts(struct kube_http *h, long request_ms, long connect_ms);
/* req copied. *ret (optional) is a handle valid until on_done runs or it is cancelled. */
int kube_http_submit(
    struct kube_http *h, const struct kube_http_request *req, struct kube_http_call **ret);
/* No callback after this. Safe from inside any callback. */
void kube_http_cancel(struct kube_http_call *call);

/*
 * The call layer (call.c) owns the list of calls, admission (at most the engine's
 * max_active plain requests started at once; streams are not counted), their order (calls
 * start in the order they were submitted), cancellation (a mark; the reaper, a deferred event,
 * frees the call from the loop, so cancel is safe from inside any callback), the total
 * timeout of each call (an evtimer from its start), the answer body (kept up to the answer
 * cap, kube_answer_limit, or handed to on_data for a 2xx stream) and the one report of each call.
 * An engine only moves bytes: it starts an admitted call, aborts one, and reports data and the end
 * back.
 */
struct kube_http_call {
	/* read by the engine */
	struct kube_http *http;
	struct kube_http_owned rq; /* method, url, content type, body */
	bool stream;
	bool cancelled; /* reported or cancelled: the engine drops it, the reaper frees it */
	/* the call layer's */
	struct kube_http_call *next, *prev; /* all live calls, oldest first */
	struct event *timer;
	long timeout_ms;
	bool started, counted, reported;
	int body_error;	    /* why the body was refused: -ECANCELED (on_data), -EFBIG, -ENOMEM */
	uint64_t max_body;  /* the answer cap when the call was made (kube_answer_limit) */
	uint64_t body_seen; /* -EFBIG: bytes read, or the Content-Length announced */
	bool body_declared; /* body_seen is the Content-Length */
	char *resp;
	size_t resp_len, resp_cap;
	bool (*on_data)(void *, const char *, size_t);
	void (*on_done)(void *, int, long, const char *, size_t, const char *);
	void (*release)(void *);
	void *userdata;
};

struct kube_http_engine {
	const char *name;
	size_t call_size;    /* the engine's call, which starts with a struct kube_http_call */
	unsigned max_active; /* plain requests in flight at once */
	/* kube_http_new: the engine's state for h (*state), 0 or negative errno. */
	int (*init)(struct kube_http *h, void **state);
	/* kube_http_free, after every call was aborted. */
	void (*free)(void *state);
	/*
	 * An admitted call: begin it with this bearer token (NULL: none; never with a line
	 * break). 0: the engine has it (it may have reported already, and the call be gone);
	 * negative errno: nothing happened and the call layer reports the failure.
	 */
	int (*start)(struct kube_http_call *call, const char *token);
	/* Drop what the engine holds for call (started or not, maybe twice); no report. Called
	 * from the loop or from kube_http_free, never from inside the engine's callbacks. */
	void (*abort)(struct kube_http_call *call);
};

/* The engine linked in: kube/http.c or kube/http-mbedtls.c (tests may bring their own). */
extern const struct kube_http_engine kube_http_engine;
int kube_http_new_engine(struct event_base *base, struct kube_config *cfg,
    const struct kube_http_engine *engine, struct kube_http **ret);

/*
 * TCP keep-alive on a connection to the API server (http-keepalive.c: why): probes after 30 s
 * without traffic, every 10 s, 3 unanswered drop it; TCP_USER_TIMEOUT the same 60 s for data
 * left unacknowledged. Best effort: 0, or -1 when an option was refused (the socket works on).
 */
#define KUBE_TCP_KEEPIDLE_S 30
#define KUBE_TCP_KEEPINTVL_S 10
#define KUBE_TCP_KEEPCNT 3
int kube_http_keepalive(int fd);

/* The libcurl engine's curl error code -> negative errno (http.c only). */
int kube_curl_errno(int curl_code);

/* For engines. */
struct event_base *kube_http_base(const struct kube_http *h);
struct kube_config *kube_http_config(const struct kube_http *h);
void *kube_http_state(const struct kube_http *h);
long kube_http_connect_ms(const struct kube_http *h);
/* The answer will have len body bytes (Content-Length): the body is allocated once. */
void kube_http_call_expect(struct kube_http_call *call, uint64_t len);
/*
 * Bytes of the answer's body (status known). 0, or negative errno when the engine must stop
 * the transfer: -ECANCELED (on_data said stop, or the call was cancelled), -EFBIG, -ENOMEM.
 * The engine then reports the end as for any failure; the call layer says why.
 */
int kube_http_call_data(struct kube_http_call *call, long status, const char *data, size_t len);
/*
 * The call ended: err 0 with the answer's status, or a negative errno with a message (fmt,
 * printf-style, after "METHOD URL: "). The engine let go of the call before (a connection
 * back in its pool or closed). Reports once and frees the call; nothing for a cancelled call.
 */
void kube_http_call_done(struct kube_http_call *call, int err, long status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* --- the server's URL (server-url.c; used by http-mbedtls.c) ---------------------------- */

struct kube_server_url {
	bool tls;	 /* https */
	char *host;	 /* without brackets */
	char *authority; /* Host header */
	char *prefix;	 /* path prefix of the server URL ("" or "/k8s/clusters/x") */
	char port[8];	 /* 443 or 80 when the URL names none */
	bool host_is_ip;
	unsigned char ip[16]; /* host_is_ip: the address, ip_len 4 or 16 */
	size_t ip_len;
};

/*
 * https://host[:port][/prefix], http://..., [v6]:port into u (zeroed by the caller): 0,
 * -EINVAL or -ENOMEM; free u with kube_server_url_free either way.
 */
int kube_server_url_parse(struct kube_server_url *u, const char *url);
void kube_server_url_free(struct kube_server_url *u);

/* --- HTTP/1.1 response parser (http-parse.c; used by http-mbedtls.c) -------------------- */

struct kube_http_parser {
	int state;
	long status;	   /* once the status line is read */
	bool keep_alive;   /* the connection may carry another request after this answer */
	bool header_done;  /* status and header complete (final, not 1xx) */
	bool head_request; /* the answer to a HEAD has no body */
	bool has_length, has_te, chunked;
	uint64_t length; /* Content-Length left, or of the current chunk */
	uint64_t header_bytes, body_bytes;
	char *line; /* header or chunk-size line under construction */
	size_t line_len, line_cap;
};

void kube_http_parser_init(struct kube_http_parser *p, bool head_request);
void kube_http_parser_release(struct kube_http_parser *p);
/*
 * Feeds bytes of the answer. body (may be NULL) gets each piece of the body, de-chunked;
 * returning false stops with -ECANCELED. Returns the bytes used: fewer than len once the
 * answer is complete (the rest is not part of it). -EBADMSG on a malformed or over-long
 * answer, -ENOMEM.
 */
ssize_t kube_http_parse(struct kube_http_parser *p, const char *data, size_t len,
    bool (*body)(void *userdata, const char *data, size_t len), void *userdata);
/* The connection ended: 0 when that completes the answer (body read to close), else -EIO. */
int kube_http_parse_eof(struct kube_http_parser *p);
bool kube_http_parser_done(const struct kube_http_parser *p);
/* Any byte of the answer seen (a reused connection that fails before this may be retried). */
bool kube_http_parser_started(const struct kube_http_parser *p);

/* --- client internals (client.c, path.c, result.c) ------------------------------------ */

struct kube_http *kube_client_http(struct kube_client *c);
/* Path of a collection or object: /api/v1/namespaces/NS/RES[/NAME][/SUB]. */
int kube_resource_path(const struct kube_resource *res, const char *ns, const char *name,
    const char *subresource, char *out, size_t len);
/* Appends "k=v" (URL-encoded value) with ? or & to a query under construction. */
int kube_query_add(char *out, size_t len, const char *k, const char *v);
/* Fills a result from an HTTP answer; *ret_obj gets the parsed JSON (new ref, may be NULL). */
void kube_result_from_http(struct kube_result *res, int error, long status, const char *body,
    size_t len, const char *message, json_t **ret_obj);
/* The same; metadata_only as in struct kube_list_opts. */
void kube_result_from_http_opts(struct kube_result *res, int error, long status, const char *body,
    size_t len, const char *message, bool metadata_only, json_t **ret_obj);
/*
 * kube_list whose callback gets the page's text (borrowed for the call) instead of a
 * json_t: res->object is NULL; body is non-NULL only when res->error is 0 (a 2xx answer).
 * For the informer, which scans pages with lib/jscan.h and decodes objects one by one; *ret
 * cancels it with kube_http_cancel.
 */
typedef void (*kube_raw_done_fn)(
    void *userdata, const struct kube_result *res, const char *body, size_t len);
int kube_list_raw_call(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const struct kube_list_opts *opts, kube_raw_done_fn done, void *userdata,
    struct kube_http_call **ret);

/* Applies one watch event as if it came from the stream (tests, benchmarks): text is the
 * object's span, checked by lib/jscan.h, as kube_watch_framer_feed_raw hands it. */
void kube_informer_apply_event_text(
    struct kube_informer *inf, enum kube_watch_type type, const char *text, size_t len);

/* --- watch stream framing (watch.c) -------------------------------------------------- */

/*
 * Newline-delimited JSON: bytes in, one event per complete line out. A line longer than
 * max_line is dropped (counted in dropped and overlong) and the framer resynchronises at the
 * next newline; a watch stream (kube_watch_start) ends with -EFBIG on such a line.
 */
struct kube_watch_framer {
	char *buf;
	size_t len, cap;
	size_t max_line;
	bool skipping; /* inside an over-long line */
	uint64_t lines, dropped;
	uint64_t overlong;  /* lines longer than max_line */
	uint64_t long_seen; /* bytes of the last over-long line seen when it was refused */
};

typedef void (*kube_framer_event_fn)(void *userdata, enum kube_watch_type type, json_t *object);
/* The event's object as a span of the line (borrowed for the call; not NUL-terminated). */
typedef void (*kube_framer_raw_fn)(
    void *userdata, enum kube_watch_type type, const char *object, size_t len);

/* max_line 0: the answer cap (kube_answer_limit). */
void kube_watch_framer_init(struct kube_watch_framer *f, size_t max_line);
void kube_watch_framer_release(struct kube_watch_framer *f);
/* Feeds bytes; calls fn for each decoded event. Returns 0 or -ENOMEM. */
int kube_watch_framer_feed(struct kube_watch_framer *f, const char *data, size_t len,
    kube_framer_event_fn fn, void *userdata);
/* The same, each event's object handed as a span (a line that does not scan is dropped). */
int kube_watch_framer_feed_raw(struct kube_watch_framer *f, const char *data, size_t len,
    kube_framer_raw_fn fn, void *userdata);
/* Decodes one line: returns 0 with type and object (new reference) or -EBADMSG. */
int kube_watch_decode_line(
    const char *line, size_t len, enum kube_watch_type *ret_type, json_t **ret_object);
/* Scans one line (lib/jscan.h): 0 with type and the span of its object, or -EBADMSG. */
int kube_watch_scan_line(const char *line, size_t len, enum kube_watch_type *ret_type,
    const char **ret_object, size_t *ret_len);
/*
 * kube_watch_start whose events carry the object's text, not a json_t (the informer's typed
 * path). ERROR events still end the stream as with kube_watch_start.
 */
int kube_watch_start_raw(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const struct kube_watch_opts *opts, kube_framer_raw_fn on_event, kube_watch_end_fn on_end,
    void *userdata, struct kube_watch **ret);

/* --- the cap on answers held in memory (limits.c) ------------------------------------- */

struct kube_answer_limit {
	uint64_t bytes;	       /* the largest list/get body or watch event held */
	uint64_t memory_limit; /* the cgroup's, 0 when none was read */
	char source[160];      /* where the cap comes from, for messages */
};
/*
 * The pod's memory limit under a cgroup root (/sys/fs/cgroup): cgroup v2 memory.max, else v1
 * memory/memory.limit_in_bytes. 1 and *ret, 0 for no limit ("max", absent, v1's huge value),
 * negative errno for an unreadable or malformed file. *ret_what names the file read, or NULL.
 */
int kube_memory_limit_read(const char *root, uint64_t *ret, const char **ret_what);
/*
 * The same, first at the process's own cgroup named in self_cgroup (/proc/self/cgroup: the v2
 * line "0::/path", or v1's memory controller) under root, as a container in the host's
 * cgroup namespace sees it; then at root. self_cgroup may be NULL.
 */
int kube_memory_limit_find(
    const char *root, const char *self_cgroup, uint64_t *ret, const char **ret_what);
/* "1048576", "64Mi", "2G": 0 and *ret, or -EINVAL. */
int kube_parse_size(const char *s, uint64_t *ret);
/* "64 MiB", "1.5 GiB", "512 bytes". */
void kube_format_size(uint64_t n, char *out, size_t len);
/*
 * The cap from env (VMDHCP_KUBE_MAX_ANSWER's value, may be NULL) or a quarter of the memory
 * limit kube_memory_limit_find reads (at least 1 MiB, at most 256 MiB), else 64 MiB. 0, or
 * negative errno with the default in *ret and the problem in ret->source.
 */
int kube_answer_limit_compute(const char *cgroup_root, const char *self_cgroup, const char *env,
    struct kube_answer_limit *ret);
/* The process's cap, computed at first use (/sys/fs/cgroup and /proc/self/cgroup; tests give
 * a tree of their own in $VMDHCP_CGROUP_ROOT). */
const struct kube_answer_limit *kube_answer_limit(void);
/* One answer refused for its size (vmdhcp_api_answers_too_large_total). */
void kube_answer_refused_count(void);

/* --- backoff (clock.c) ------------------------------------------------------------------ */

/* Exponential with jitter: base * 2^attempt capped at max, then scaled by [0.5, 1.0). */
uint64_t kube_backoff_delay(uint64_t base, uint64_t max, unsigned attempt, uint64_t *seed);

#endif
