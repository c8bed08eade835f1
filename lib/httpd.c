/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The /healthz /readyz /metrics endpoint of lib/httpd.h on evhttp: the server made and freed,
 * its settings, its routes and their handlers. The connection table (accounting, limits, the
 * request deadline, drops, accept errors) is lib/httpd-conns.c's.
 */
#include "lib/httpd-internal.h"

#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/listener.h>
#include <event2/util.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/util.h"

static void
reply_text(struct evhttp_request *req, int code, const char *reason, const char *body, size_t len,
    const char *ctype)
{
	struct evbuffer *b = evbuffer_new();

	if (b == NULL) {
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", ctype);
	evbuffer_add(b, body, len);
	evhttp_send_reply(req, code, reason, b);
	evbuffer_free(b);
}

static bool
only_get(struct evhttp_request *req)
{
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);

	if (cmd == EVHTTP_REQ_GET || cmd == EVHTTP_REQ_HEAD)
		return true;
	evhttp_send_error(req, 405, "method not allowed");
	return false;
}

static void
healthz_cb(struct evhttp_request *req, void *arg)
{
	httpd_request_dispatched(arg, req);
	if (only_get(req))
		reply_text(req, 200, "OK", "ok\n", 3, "text/plain; charset=utf-8");
}

static void
readyz_cb(struct evhttp_request *req, void *arg)
{
	struct httpd *h = arg;
	char reason[256] = "", body[300];
	int n;

	httpd_request_dispatched(h, req);
	if (!only_get(req))
		return;
	if (h->ready == NULL || h->ready(h->ready_userdata, reason, sizeof(reason))) {
		/* ready, with a remark ("ok: standby ...") when the callback left one */
		n = snprintf(body, sizeof(body), "ok%s%s\n", reason[0] ? ": " : "", reason);
		reply_text(req, 200, "OK", body, n < 0 ? 0 : MIN((size_t)n, sizeof(body) - 1),
		    "text/plain; charset=utf-8");
		return;
	}
	n = snprintf(body, sizeof(body), "%s\n", reason[0] ? reason : "not ready");
	reply_text(req, 503, "Service Unavailable", body,
	    n < 0 ? 0 : MIN((size_t)n, sizeof(body) - 1), "text/plain; charset=utf-8");
}

static void
metrics_cb(struct evhttp_request *req, void *arg)
{
	struct httpd *h = arg;
	char *text = NULL;
	size_t len = 0;

	httpd_request_dispatched(h, req);
	if (!only_get(req))
		return;
	if (h->metrics == NULL) {
		reply_text(req, 200, "OK", "", 0, "text/plain; version=0.0.4");
		return;
	}
	if (metrics_render(h->metrics, &text, &len) < 0) {
		evhttp_send_error(req, 500, "cannot render metrics");
		return;
	}
	reply_text(req, 200, "OK", text, len, "text/plain; version=0.0.4; charset=utf-8");
	free(text);
}

/* Go's net/http answer to a path nothing serves (http.NotFound). */
static void
not_found(struct evhttp_request *req)
{
	static const char text[] = "404 page not found\n";

	reply_text(req, 404, "Not Found", text, sizeof(text) - 1, "text/plain; charset=utf-8");
}

static void
body_reply(struct evhttp_request *req, const struct body_handler *bh, const char *rest)
{
	const char *ctype = NULL;
	char *body = NULL;
	size_t len = 0;
	int code;

	code = bh->fn(bh->userdata, rest, &body, &len, &ctype);
	if (code < 0 || code < 100 || code > 599) {
		free(body);
		evhttp_send_error(req, 500, code < 0 ? strerror(-code) : NULL);
		return;
	}
	reply_text(req, code, NULL, body != NULL ? body : "", body != NULL ? len : 0,
	    ctype != NULL ? ctype : "text/plain; charset=utf-8");
	free(body);
}

static void
exact_cb(struct evhttp_request *req, void *arg)
{
	const struct body_handler *bh = arg;

	httpd_request_dispatched(bh->h, req);
	if (only_get(req))
		body_reply(req, arg, "");
}

/* Every path without an exact callback: the prefix handlers, else 404. */
static void
generic_cb(struct evhttp_request *req, void *arg)
{
	struct httpd *h = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *raw = uri != NULL ? evhttp_uri_get_path(uri) : NULL;
	size_t len = 0;
	char *path;

	httpd_request_dispatched(h, req);
	if (!only_get(req))
		return;
	path = evhttp_uridecode(raw != NULL ? raw : "", 0, &len);
	if (path == NULL) {
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	if (strlen(path) != len) { /* a NUL decoded */
		free(path);
		evhttp_send_error(req, 400, "bad path");
		return;
	}
	for (const struct body_handler *bh = h->handlers; bh != NULL; bh = bh->next)
		if (bh->prefix && strncmp(path, bh->path, bh->path_len) == 0) {
			body_reply(req, bh, path + bh->path_len);
			free(path);
			return;
		}
	free(path);
	not_found(req);
}

int
httpd_add_body_handler(struct httpd *h, const char *path, httpd_body_fn fn, void *userdata)
{
	struct body_handler *bh;
	size_t n = path != NULL ? strlen(path) : 0;

	if (n == 0 || path[0] != '/' || fn == NULL)
		return -EINVAL;
	for (bh = h->handlers; bh != NULL; bh = bh->next)
		if (strcmp(bh->path, path) == 0)
			return -EEXIST;
	bh = calloc(1, sizeof(*bh));
	if (bh == NULL)
		return -ENOMEM;
	*bh = (struct body_handler){.h = h,
	    .path = path,
	    .path_len = n,
	    .prefix = path[n - 1] == '/',
	    .fn = fn,
	    .userdata = userdata};
	if (!bh->prefix && evhttp_set_cb(h->http, path, exact_cb, bh) != 0) {
		free(bh);
		return -EEXIST;
	}
	bh->next = h->handlers;
	h->handlers = bh;
	return 0;
}

static int
split_listen(const char *listen, char *host, size_t hostlen, uint16_t *port)
{
	const char *colon;
	uint64_t p;
	size_t n;

	if (listen == NULL || *listen == '\0')
		return -EINVAL;
	if (listen[0] == '[') {
		const char *end = strchr(listen, ']');
		if (end == NULL || end[1] != ':')
			return -EINVAL;
		n = (size_t)(end - listen - 1);
		if (n >= hostlen)
			return -EINVAL;
		memcpy(host, listen + 1, n);
		host[n] = '\0';
		colon = end + 1;
	} else {
		colon = strrchr(listen, ':');
		if (colon == NULL)
			return -EINVAL;
		n = (size_t)(colon - listen);
		if (n >= hostlen)
			return -EINVAL;
		memcpy(host, listen, n);
		host[n] = '\0';
		if (n == 0)
			snprintf(host, hostlen, "0.0.0.0");
	}
	if (parse_uint(colon + 1, 0, 65535, &p) < 0)
		return -EINVAL;
	*port = (uint16_t)p;
	return 0;
}

/*
 * A listening TCP socket on a numeric address. We bind it ourselves rather than through
 * evhttp_bind_socket(): libevent resolves with AI_ADDRCONFIG, which refuses 127.0.0.1 in a
 * network namespace that has no non-loopback IPv4 address, and then reports a stale errno.
 * Returns the fd or negative errno.
 */
static int
listen_socket(const char *host, uint16_t port)
{
	struct sockaddr_storage ss = {0};
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	int fd, one = 1, r;

	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		len = sizeof(*sin6);
	} else if (strcmp(host, "localhost") == 0) {
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin->sin_port = htons(port);
		len = sizeof(*sin);
	} else {
		return -EINVAL; /* numeric addresses only */
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, SOMAXCONN) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

/* The server with its defaults (lib/httpd.h), not listening yet; NULL when out of memory. */
static struct httpd *
httpd_alloc(struct event_base *base, struct metrics *metrics)
{
	struct httpd *h = calloc(1, sizeof(*h));

	if (h == NULL)
		return NULL;
	h->metrics = metrics;
	h->http = evhttp_new(base);
	if (h->http == NULL) {
		free(h);
		return NULL;
	}
	evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_max_headers_size(h->http, HTTPD_MAX_HEADERS_SIZE);
	evhttp_set_max_body_size(h->http, HTTPD_MAX_BODY_SIZE);
	h->max_conns = HTTPD_MAX_CONNECTIONS;
	h->batch_max = httpd_batch_for(h->max_conns);
	h->max_per_peer = HTTPD_MAX_PER_PEER;
	h->hold_usec = HTTPD_HOLD_MSEC * USEC_PER_MSEC;
	h->grace_usec = HTTPD_SEND_GRACE_MSEC * USEC_PER_MSEC;
	h->deadline_msec = HTTPD_REQUEST_DEADLINE_MSEC;
	if (metrics != NULL)
		h->m_dropped = metrics_add(metrics, METRIC_COUNTER,
		    "vmdhcp_http_connections_dropped_total",
		    "Connections of the HTTP endpoint closed unanswered, by reason: table_full "
		    "(the oldest idle or incomplete one, for a new one), peer_limit (the oldest "
		    "of a source address over its limit), deadline (a request not complete in "
		    "time).",
		    "reason", httpd_drop_reasons, HTTPD_DROP_N, NULL, 0);
	h->read_max = HTTPD_READ_BUFFER_MAX;
	httpd_set_timeout(h, HTTPD_TIMEOUT_MSEC);
	evhttp_set_bevcb(h->http, httpd_conn_bufferevent, h);
	evhttp_set_cb(h->http, "/healthz", healthz_cb, h);
	evhttp_set_cb(h->http, "/readyz", readyz_cb, h);
	evhttp_set_cb(h->http, "/metrics", metrics_cb, h);
	evhttp_set_gencb(h->http, generic_cb, h);
	return h;
}

/* The port a listening socket is bound to (0 when it cannot be read). */
static int
bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET)
			return ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	return 0;
}

int
httpd_new(struct event_base *base, const char *listen, struct metrics *metrics, struct httpd **ret)
{
	char host[128];
	uint16_t port;
	struct httpd *h;
	int fd, r;

	r = split_listen(listen, host, sizeof(host), &port);
	if (r < 0)
		return r;
	h = httpd_alloc(base, metrics);
	if (h == NULL)
		return -ENOMEM;
	fd = listen_socket(host, port);
	if (fd < 0) {
		evhttp_free(h->http);
		free(h);
		return fd;
	}
	h->fd = fd;
	r = httpd_conns_start(h, base, fd);
	if (r < 0) {
		evhttp_free(h->http);
		free(h);
		return r;
	}
	h->port = bound_port(fd);
	*ret = h;
	return 0;
}

struct httpd *
httpd_free(struct httpd *h)
{
	if (h == NULL)
		return NULL;
	httpd_conns_unlink(h);
	h->closing = true;
	/* the listener, and the open connections (their close callbacks run here) */
	evhttp_free(h->http);
	httpd_conns_free(h);
	while (h->user_handlers != NULL) {
		struct user_handler *uh = h->user_handlers;

		h->user_handlers = uh->next;
		free(uh);
	}
	while (h->handlers != NULL) {
		struct body_handler *bh = h->handlers;

		h->handlers = bh->next;
		free(bh);
	}
	free(h);
	return NULL;
}

int
httpd_set_timeout(struct httpd *h, unsigned msec)
{
	struct timeval tv = {.tv_sec = msec / 1000, .tv_usec = (msec % 1000) * 1000};

	if (msec == 0)
		return -EINVAL;
	evhttp_set_timeout_tv(h->http, &tv); /* for connections accepted from now on */
	return 0;
}

int
httpd_set_max_body_size(struct httpd *h, size_t max)
{
	if (max == 0)
		return -EINVAL;
	evhttp_set_max_body_size(h->http, (ev_ssize_t)MIN(max, (size_t)SSIZE_MAX));
	return 0;
}

int
httpd_set_read_buffer_max(struct httpd *h, size_t max)
{
	if (max == 0)
		return -EINVAL;
	h->read_max = max;
	return 0;
}

void
httpd_set_methods(struct httpd *h, unsigned methods)
{
	evhttp_set_allowed_methods(h->http, (ev_uint16_t)methods);
}

void
httpd_set_bufferevent(struct httpd *h, httpd_bufferevent_fn fn, void *userdata)
{
	h->make_bev = fn;
	h->make_bev_userdata = userdata;
}

int
httpd_remove_handler(struct httpd *h, const char *path)
{
	return evhttp_del_cb(h->http, path) == 0 ? 0 : -ENOENT;
}

void
httpd_stop_accepting(struct httpd *h)
{
	h->stopped = true;
	httpd_listener_update(h);
}

int
httpd_set_max_connections(struct httpd *h, unsigned max)
{
	if (max == 0)
		return -EINVAL;
	h->max_conns = max;
	h->batch_max = httpd_batch_for(max);
	return 0;
}

int
httpd_set_max_per_peer(struct httpd *h, unsigned max)
{
	h->max_per_peer = max;
	return 0;
}

void
httpd_set_hold(struct httpd *h, unsigned msec)
{
	h->hold_usec = msec * USEC_PER_MSEC;
	h->grace_usec = MIN(h->hold_usec, HTTPD_SEND_GRACE_MSEC * USEC_PER_MSEC);
}

int
httpd_set_request_deadline(struct httpd *h, unsigned msec)
{
	if (msec == 0)
		return -EINVAL;
	h->deadline_msec = msec;
	return 0;
}

unsigned long
httpd_dropped(const struct httpd *h, enum httpd_drop why)
{
	return (unsigned)why < HTTPD_DROP_N ? h->dropped[why] : 0;
}

unsigned
httpd_connections(const struct httpd *h)
{
	return h->conns;
}

unsigned long
httpd_accept_errors(const struct httpd *h)
{
	return h->accept_errors;
}

void
httpd_set_ready(struct httpd *h, httpd_ready_fn ready, void *userdata)
{
	h->ready = ready;
	h->ready_userdata = userdata;
}

static void
user_cb(struct evhttp_request *req, void *arg)
{
	struct user_handler *uh = arg;

	httpd_request_dispatched(uh->h, req);
	uh->fn(req, uh->userdata);
}

int
httpd_add_handler(struct httpd *h, const char *path, httpd_handler_fn fn, void *userdata)
{
	struct user_handler *uh = calloc(1, sizeof(*uh));

	if (uh == NULL)
		return -ENOMEM;
	*uh = (struct user_handler){.h = h, .fn = fn, .userdata = userdata};
	if (evhttp_set_cb(h->http, path, user_cb, uh) != 0) {
		free(uh);
		return -EEXIST;
	}
	uh->next = h->user_handlers;
	h->user_handlers = uh;
	return 0;
}

int
httpd_port(const struct httpd *h)
{
	return h->port;
}

int
httpd_bind_device(struct httpd *h, const char *ifname)
{
	size_t len = strlen(ifname);

	if (len == 0 || len >= IF_NAMESIZE)
		return -EINVAL;
	if (setsockopt(h->fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)len + 1) < 0)
		return -errno;
	return 0;
}
