/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_HTTPD_H
#define VMDHCP_LIB_HTTPD_H

#include <stdbool.h>
#include <stddef.h>

struct event_base;
struct evhttp_request;
struct metrics;
struct httpd;

/*
 * The health/metrics HTTP endpoint of a process, on its libevent loop:
 *   GET /healthz  -> 200 "ok" while the loop runs
 *   GET /readyz   -> 200 "ok" when the ready callback says so ("ok: REMARK" when it left
 *                    one in reason), else 503 with its reason
 *   GET /metrics  -> Prometheus text of the registry
 * listen is "HOST:PORT", ":PORT" (all IPv4 addresses) or "[V6]:PORT"; HOST is numeric (or
 * "localhost" for 127.0.0.1).
 * Returns 0 and a new server in *ret, or negative errno (-EINVAL bad address,
 * -EADDRINUSE, ...). base and metrics are borrowed; metrics may be NULL.
 */
int httpd_new(
    struct event_base *base, const char *listen, struct metrics *metrics, struct httpd **ret);
struct httpd *httpd_free(struct httpd *h);

/*
 * Limits. The endpoint serves kubelet probes and Prometheus scrapes: one small GET at a time
 * from a handful of clients, so everything beyond that is refused early and cheaply.
 *
 * HTTPD_MAX_HEADERS_SIZE  bytes of request line + headers; past it evhttp answers 400 and
 *                         closes (it checks after each read, also within one endless line:
 *                         the heap stays bounded).
 * HTTPD_MAX_BODY_SIZE     bytes of request body (only GET and HEAD are served); past it: 413.
 * HTTPD_READ_BUFFER_MAX   bytes read ahead of evhttp's parser (a client that pipelines requests
 *                         and reads no reply): reading pauses there until the parser drains it.
 * HTTPD_TIMEOUT_MSEC      read/write inactivity timeout of a connection: a request that stops
 *                         making progress (a slow client), a reply the client does not read
 *                         and an idle keep-alive connection are closed after it.
 * HTTPD_REQUEST_DEADLINE_MSEC
 *                         a request (request line, headers and body) must be complete within
 *                         it, counted from the accept for the first request of a connection
 *                         and from its first byte for a later one (keep-alive): a client
 *                         trickling one byte per interval, or one that connects and sends
 *                         nothing, is closed after it (reason "deadline").
 * HTTPD_MAX_CONNECTIONS   the connection table. New connections keep being accepted; when
 *                         the table is over the limit, one goes (reason "table_full"), in
 *                         this order: the oldest idle keep-alive connection, else the oldest
 *                         without a complete request (open for HTTPD_SEND_GRACE_MSEC at
 *                         least), else the oldest whose reply has waited HTTPD_HOLD_MSEC for
 *                         a client that does not read it. Never one accepted in the same
 *                         loop pass (a pass accepts a quarter of the table at most, 1 to 16,
 *                         so every new connection reads its request before others can push
 *                         it out), nor a reply under way: when only those are left, accepting
 *                         pauses until one ends (the next wait in the listen backlog).
 *                         Connections held open by others never keep a probe out.
 * HTTPD_MAX_PER_PEER      connections of one source address; a new one over it replaces that
 *                         address's own oldest (same order, among those open for
 *                         HTTPD_HOLD_MSEC at least; reason "peer_limit"), so that one client
 *                         cannot push out the connections of others, while a burst of quick
 *                         requests from one address is still served. 0: no limit.
 * HTTPD_HOLD_MSEC, HTTPD_SEND_GRACE_MSEC
 *                         see the two above.
 * HTTPD_ACCEPT_BACKOFF_*  when accept() fails (EMFILE, ENFILE, ENOBUFS, ENOMEM) the listener
 *                         is paused for an interval doubling from MIN to MAX, reset by the next
 *                         successful accept; one warning per second at most, with the count.
 */
#define HTTPD_MAX_HEADERS_SIZE 8192
#define HTTPD_MAX_BODY_SIZE 4096
#define HTTPD_READ_BUFFER_MAX 16384
#define HTTPD_TIMEOUT_MSEC 10000
#define HTTPD_MAX_CONNECTIONS 64
#define HTTPD_REQUEST_DEADLINE_MSEC 5000
#define HTTPD_MAX_PER_PEER 16
#define HTTPD_HOLD_MSEC 1000
#define HTTPD_SEND_GRACE_MSEC 25
#define HTTPD_ACCEPT_BACKOFF_MIN_MSEC 100
#define HTTPD_ACCEPT_BACKOFF_MAX_MSEC 1000

/* Overrides of the defaults above (tests use short ones). msec and max must be > 0. */
int httpd_set_timeout(struct httpd *h, unsigned msec);
int httpd_set_max_connections(struct httpd *h, unsigned max);
/* msec > 0; for requests started from now on. */
int httpd_set_request_deadline(struct httpd *h, unsigned msec);
/* 0: no per-address limit. For connections accepted from now on. */
int httpd_set_max_per_peer(struct httpd *h, unsigned max);
/* HTTPD_HOLD_MSEC, and HTTPD_SEND_GRACE_MSEC at most msec (tests: 0, every connection but
 * those of the current pass and replies under way can go). */
void httpd_set_hold(struct httpd *h, unsigned msec);

/*
 * Connections closed unanswered, by reason. With a metrics registry, httpd_new() registers
 * them as vmdhcp_http_connections_dropped_total{reason} (a second server on the same registry
 * keeps them here only).
 */
enum httpd_drop {
	HTTPD_DROP_TABLE_FULL, /* the lowest-ranked connection, for a new one */
	HTTPD_DROP_PEER_LIMIT, /* a source address's own oldest, for its new one */
	HTTPD_DROP_DEADLINE,   /* a request not complete within the deadline */
	HTTPD_DROP_N,
};
unsigned long httpd_dropped(const struct httpd *h, enum httpd_drop why);

/* The request body limit (default HTTPD_MAX_BODY_SIZE; past it evhttp answers 413), and the
 * methods evhttp lets through to the handlers (a mask of enum evhttp_cmd_type; default GET |
 * HEAD; others get 501 from evhttp, and the built-in handlers answer 405 to all but GET/HEAD). */
int httpd_set_max_body_size(struct httpd *h, size_t max);
/*
 * The read-ahead bound of a connection (HTTPD_READ_BUFFER_MAX) for those accepted from now on.
 * A TLS server needs it above its largest request: OpenSSL's bufferevent (libevent 2.1) stalls
 * when it stops at the watermark with decrypted bytes pending in the SSL object, as the
 * socket is then no longer readable to resume it; a client that pipelines past the bound then
 * waits for the inactivity timeout, which closes it.
 */
int httpd_set_read_buffer_max(struct httpd *h, size_t max);
void httpd_set_methods(struct httpd *h, unsigned methods);

/*
 * The bufferevent of each accepted connection, for a server that speaks TLS: fn(base,
 * userdata) returns a new bufferevent without a socket yet (fd -1, BEV_OPT_CLOSE_ON_FREE),
 * e.g. bufferevent_openssl_socket_new(base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, ...); NULL
 * makes a plain socket one (evhttp's). The limits and connection accounting above apply to
 * either. fn NULL: plain sockets (the default).
 */
struct bufferevent;
typedef struct bufferevent *(*httpd_bufferevent_fn)(struct event_base *base, void *userdata);
void httpd_set_bufferevent(struct httpd *h, httpd_bufferevent_fn fn, void *userdata);

/* Drops the handler of an exact path (one of the built-in three, say): 0 or -ENOENT. */
int httpd_remove_handler(struct httpd *h, const char *path);

/* Stops accepting new connections for good (a shutdown drain); open ones are served. */
void httpd_stop_accepting(struct httpd *h);

/* Open connections, and accept() failures since start (for tests and metrics). */
unsigned httpd_connections(const struct httpd *h);
unsigned long httpd_accept_errors(const struct httpd *h);

/* ready(userdata, reason, reason_len) returns true when ready (reason, "" on entry, may carry
 * a remark); else fills reason. */
typedef bool (*httpd_ready_fn)(void *userdata, char *reason, size_t reason_len);
void httpd_set_ready(struct httpd *h, httpd_ready_fn ready, void *userdata);

/*
 * Extra handler for an exact path (borrowed string). It must not set the close callback of
 * the request's connection, nor the request's on-complete callback: lib/httpd tracks
 * connections with them. It answers before it returns (a connection whose request has been
 * handled may be dropped for a new one while its reply is written).
 */
typedef void (*httpd_handler_fn)(struct evhttp_request *req, void *userdata);
int httpd_add_handler(struct httpd *h, const char *path, httpd_handler_fn fn, void *userdata);

/*
 * A handler that produces a whole reply body, for GET paths the program serves beside the
 * three above (e.g. debug dumps): path (borrowed) is exact, or, when it ends with '/', a
 * prefix that also takes every path below it, whose rest (percent-decoded, "" for the prefix
 * itself) fn gets; exact handlers get "". fn returns the HTTP status and sets *body (malloc'd,
 * freed by httpd; NULL: empty), *len and *ctype (static; NULL: text/plain), or returns a
 * negative errno (500). A path that matches no handler answers 404 "404 page not found".
 * A request whose path does not decode (a %00, a bad escape) answers 400. Returns 0,
 * -EEXIST (the path is taken), -EINVAL or -ENOMEM.
 */
typedef int (*httpd_body_fn)(
    void *userdata, const char *rest, char **body, size_t *len, const char **ctype);
int httpd_add_body_handler(struct httpd *h, const char *path, httpd_body_fn fn, void *userdata);

/* The port actually bound (useful with ":0" in tests). */
int httpd_port(const struct httpd *h);

/*
 * Accepts connections that arrive on interface ifname only (SO_BINDTODEVICE on the listening
 * socket): Linux delivers a packet for any local address whatever interface it came in on,
 * so an address alone does not keep the hosts of another interface out. Needs CAP_NET_RAW
 * unless the socket has no device yet (Linux >= 5.7). Returns 0 or negative errno.
 */
int httpd_bind_device(struct httpd *h, const char *ifname);

#endif
