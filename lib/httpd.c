/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/httpd.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
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

/*
 * Connection accounting. libevent 2.1 has no evhttp_set_max_connections() and no hook when
 * evhttp accepts or frees a connection, but it asks evhttp_set_bevcb() for the bufferevent of
 * every accepted connection. We hand it a pass-through filter over a socket bufferevent: the
 * filter's free_context callback runs when evhttp frees the connection (from a libevent
 * finaliser, so possibly after httpd_free(): the struct then lives until the last one).
 */
struct httpd {
	struct evhttp *http;
	struct evhttp_bound_socket *sock;
	struct evconnlistener *listener; /* owned by sock */
	struct event *retry;		 /* re-enables the listener after an accept error */
	struct metrics *metrics;
	httpd_ready_fn ready;
	void *ready_userdata;
	int port;
	int fd; /* the listening socket (owned by the listener) */
	struct timeval timeout; /* of each connection's socket */
	unsigned conns, max_conns;
	bool accepting, backing_off;
	bool closing; /* in httpd_free(): the listener is going */
	bool freed;   /* httpd_free() returned: the last conn_closed() frees */
	unsigned backoff_msec;
	unsigned long accept_errors;
	unsigned long errors_unlogged; /* since the last warning */
	uint64_t last_log_usec;
	struct httpd *next; /* in live_httpds */
};

/*
 * The listener's error callback gets the listener's user pointer, which evhttp_bind_listener()
 * sets to the struct evhttp: find our server by its listener instead (one loop, one thread).
 */
static struct httpd *live_httpds;

static struct httpd *
httpd_of_listener(const struct evconnlistener *lev)
{
	for (struct httpd *h = live_httpds; h != NULL; h = h->next)
		if (h->listener == lev)
			return h;
	return NULL;
}

static void
listener_update(struct httpd *h)
{
	bool want = !h->backing_off && h->conns < h->max_conns;

	if (h->closing || want == h->accepting)
		return;
	if (want)
		evconnlistener_enable(h->listener);
	else
		evconnlistener_disable(h->listener);
	h->accepting = want;
}

/*
 * One accepted connection. The filter passes data through unchanged, with a quirk: output
 * that evhttp adds while writing is disabled stays in the filter when evhttp then enables
 * writing (the filter only moves it on a write event of the socket below, and there is none
 * pending). So whenever output is added, kick one from the loop, after evhttp has enabled
 * writing.
 */
struct httpd_conn {
	struct httpd *h;
	struct bufferevent *bev;  /* the filter */
	struct bufferevent *sock; /* under it */
	struct event *kick;
	struct evbuffer_cb_entry *output_cb;
};

static void
conn_kick(evutil_socket_t fd, short what, void *arg)
{
	struct httpd_conn *c = arg;

	(void)fd;
	(void)what;
	/* what a write event of the socket would do: the filter moves its output down */
	bufferevent_trigger(c->sock, EV_WRITE, BEV_TRIG_IGNORE_WATERMARKS);
}

static void
conn_output_added(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct httpd_conn *c = arg;

	(void)buf;
	if (info->n_added > 0)
		event_active(c->kick, EV_TIMEOUT, 0);
}

static void
conn_closed(void *arg)
{
	struct httpd_conn *c = arg;
	struct httpd *h = c->h;

	if (c->output_cb != NULL)
		evbuffer_remove_cb_entry(bufferevent_get_output(c->bev), c->output_cb);
	event_free(c->kick);
	free(c);
	h->conns--;
	if (h->freed) {
		if (h->conns == 0)
			free(h);
		return;
	}
	listener_update(h);
}

static struct bufferevent *
conn_bufferevent(struct event_base *base, void *arg)
{
	struct httpd *h = arg;
	struct httpd_conn *c;
	struct bufferevent *sock;

	/* Only an accepted connection asks for one: accept() works again. */
	h->backoff_msec = 0;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL; /* evhttp makes its own (uncounted) */
	c->h = h;
	c->kick = event_new(base, -1, 0, conn_kick, c);
	sock = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (c->kick == NULL || sock == NULL)
		goto fail;
	/*
	 * The timeouts go on the socket, not on the filter (evhttp_set_timeout_tv() would put
	 * them there): a filter's timer-based timeouts can be re-armed after evhttp has freed
	 * it, and fire into freed memory (valgrind shows it). The socket reports a timeout
	 * through the filter to evhttp, which drops the connection.
	 */
	bufferevent_set_timeouts(sock, &h->timeout, &h->timeout);
	c->sock = sock;
	c->bev = bufferevent_filter_new(sock, NULL, NULL, BEV_OPT_CLOSE_ON_FREE, conn_closed, c);
	if (c->bev == NULL)
		goto fail;
	c->output_cb = evbuffer_add_cb(bufferevent_get_output(c->bev), conn_output_added, c);
	if (c->output_cb == NULL) {
		bufferevent_free(c->bev); /* conn_closed() runs, from a finaliser */
		h->conns++;
		return NULL;
	}
	h->conns++;
	listener_update(h);
	return c->bev;
fail:
	if (sock != NULL)
		bufferevent_free(sock);
	if (c->kick != NULL)
		event_free(c->kick);
	free(c);
	return NULL;
}

static void
accept_retry(evutil_socket_t fd, short what, void *arg)
{
	struct httpd *h = arg;

	(void)fd;
	(void)what;
	h->backing_off = false;
	listener_update(h);
}

/*
 * accept() failed with something that is not "try again" (EMFILE, ENFILE, ENOBUFS, ENOMEM,
 * ...). The pending connection keeps the socket readable, so without a pause libevent would
 * call accept() again at once, forever.
 */
static void
accept_error(struct evconnlistener *lev, void *arg)
{
	struct httpd *h = httpd_of_listener(lev);
	int err = EVUTIL_SOCKET_ERROR();
	uint64_t now = clock_now_usec();

	(void)arg; /* the struct evhttp */
	if (h == NULL) {
		evconnlistener_disable(lev); /* cannot happen; never spin */
		return;
	}
	h->accept_errors++;
	h->errors_unlogged++;
	h->backoff_msec = h->backoff_msec == 0
	    ? HTTPD_ACCEPT_BACKOFF_MIN_MSEC
	    : MIN(h->backoff_msec * 2, (unsigned)HTTPD_ACCEPT_BACKOFF_MAX_MSEC);
	h->backing_off = true;
	listener_update(h);
	struct timeval tv = { .tv_sec = h->backoff_msec / 1000,
		.tv_usec = (h->backoff_msec % 1000) * 1000 };
	evtimer_add(h->retry, &tv);
	if (h->last_log_usec == 0 || now - h->last_log_usec >= USEC_PER_SEC) {
		log_warn("http :%d: accept: %s (%lu failures since the last report); "
			 "pausing accepts for %u ms",
		    h->port, strerror(err), h->errors_unlogged, h->backoff_msec);
		h->errors_unlogged = 0;
		h->last_log_usec = now ? now : 1;
	}
}

static void
reply_text(struct evhttp_request *req, int code, const char *reason, const char *body,
    size_t len, const char *ctype)
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
	(void)arg;
	if (only_get(req))
		reply_text(req, 200, "OK", "ok\n", 3, "text/plain; charset=utf-8");
}

static void
readyz_cb(struct evhttp_request *req, void *arg)
{
	struct httpd *h = arg;
	char reason[256] = "not ready";

	if (!only_get(req))
		return;
	if (h->ready == NULL || h->ready(h->ready_userdata, reason, sizeof(reason))) {
		reply_text(req, 200, "OK", "ok\n", 3, "text/plain; charset=utf-8");
		return;
	}
	char body[300];
	int n = snprintf(body, sizeof(body), "%s\n", reason);
	reply_text(req, 503, "Service Unavailable", body,
	    n < 0 ? 0 : MIN((size_t)n, sizeof(body) - 1), "text/plain; charset=utf-8");
}

static void
metrics_cb(struct evhttp_request *req, void *arg)
{
	struct httpd *h = arg;
	char *text = NULL;
	size_t len = 0;

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
	struct sockaddr_storage ss = { 0 };
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
	    bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 128) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int
httpd_new(struct event_base *base, const char *listen, struct metrics *metrics,
    struct httpd **ret)
{
	char host[128];
	uint16_t port;
	struct httpd *h;
	int fd, r;

	r = split_listen(listen, host, sizeof(host), &port);
	if (r < 0)
		return r;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->metrics = metrics;
	h->http = evhttp_new(base);
	if (h->http == NULL) {
		free(h);
		return -ENOMEM;
	}
	evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_max_headers_size(h->http, HTTPD_MAX_HEADERS_SIZE);
	evhttp_set_max_body_size(h->http, HTTPD_MAX_BODY_SIZE);
	h->max_conns = HTTPD_MAX_CONNECTIONS;
	httpd_set_timeout(h, HTTPD_TIMEOUT_MSEC);
	evhttp_set_bevcb(h->http, conn_bufferevent, h);
	evhttp_set_cb(h->http, "/healthz", healthz_cb, h);
	evhttp_set_cb(h->http, "/readyz", readyz_cb, h);
	evhttp_set_cb(h->http, "/metrics", metrics_cb, h);
	fd = listen_socket(host, port);
	if (fd < 0) {
		r = fd;
		evhttp_free(h->http);
		free(h);
		return r;
	}
	h->fd = fd;
	h->retry = evtimer_new(base, accept_retry, h);
	/* backlog 0: already listening; the callback is evhttp's (evhttp_bind_listener) */
	h->listener = h->retry == NULL
	    ? NULL
	    : evconnlistener_new(base, NULL, NULL, LEV_OPT_CLOSE_ON_FREE, 0, fd);
	if (h->listener != NULL)
		h->sock = evhttp_bind_listener(h->http, h->listener);
	if (h->sock == NULL) {
		if (h->listener != NULL)
			evconnlistener_free(h->listener);
		else
			evutil_closesocket(fd);
		if (h->retry != NULL)
			event_free(h->retry);
		evhttp_free(h->http);
		free(h);
		return -ENOMEM;
	}
	evconnlistener_set_error_cb(h->listener, accept_error);
	h->accepting = true;
	h->next = live_httpds;
	live_httpds = h;
	{
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
			if (ss.ss_family == AF_INET)
				h->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
			else if (ss.ss_family == AF_INET6)
				h->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		}
	}
	*ret = h;
	return 0;
}

struct httpd *
httpd_free(struct httpd *h)
{
	if (h == NULL)
		return NULL;
	for (struct httpd **p = &live_httpds; *p != NULL; p = &(*p)->next)
		if (*p == h) {
			*p = h->next;
			break;
		}
	h->closing = true;
	event_free(h->retry);
	evhttp_free(h->http); /* and the listener, and the open connections */
	h->freed = true;
	if (h->conns == 0)
		free(h);
	/* else conn_closed() frees it when the last connection's finaliser has run */
	return NULL;
}

int
httpd_set_timeout(struct httpd *h, unsigned msec)
{
	struct timeval tv = { .tv_sec = msec / 1000, .tv_usec = (msec % 1000) * 1000 };

	if (msec == 0)
		return -EINVAL;
	h->timeout = tv; /* for connections accepted from now on */
	return 0;
}

int
httpd_set_max_connections(struct httpd *h, unsigned max)
{
	if (max == 0)
		return -EINVAL;
	h->max_conns = max;
	listener_update(h);
	return 0;
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

int
httpd_add_handler(struct httpd *h, const char *path, httpd_handler_fn fn, void *userdata)
{
	return evhttp_set_cb(h->http, path, fn, userdata) == 0 ? 0 : -EEXIST;
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
