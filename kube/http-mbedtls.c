/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The kube_http engine of kube-internal.h over HTTP/1.1 and mbed TLS, on the caller's
 * event_base: what vm-dhcp-agent's Kubernetes mode links instead of kube/http.c (libcurl).
 * libcurl with OpenSSL maps ~30 libraries and its TLS start-up alone leaves ~4 MiB of
 * libcrypto resident; this keeps the agent's whole footprint under its 8 MiB bar
 * (docs/benchmarks.md, "End to end").
 *
 * One connection carries one request at a time; after a complete answer that allows it the
 * connection goes to an idle pool (at most MAX_IDLE, closed after IDLE_MS or when the
 * server closes it) and is reused by the next call. A reused connection that fails before
 * the first byte of the answer is retried once on a new connection, as curl does. Answers
 * are read by kube/http-parse.c; stream (watch) bodies go to on_data as they arrive.
 *
 * Host names are resolved with evdns (never blocking the loop); an IP-literal server is
 * checked against the certificate's iPAddress names (mbed TLS 2.28 checks DNS names only)
 * by kube/tls-mbedtls.c, which holds the TLS configuration and words TLS failures. The
 * server URL is split by kube/server-url.c. The call list, admission, timeouts and
 * cancellation are kube/call.c's; this engine starts, feeds and aborts the calls it is
 * given (its ops table, kube_http_engine).
 */
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>

#include "kube/kube-internal.h"
#include "kube/tls-mbedtls.h"

#define MAX_ACTIVE 32 /* plain requests in flight (one connection each); watches not counted */
#define MAX_IDLE MAX_ACTIVE /* a burst of requests finds its connections again */
#define IDLE_MS 90000
#define READ_CHUNK 16384

enum conn_state { C_RESOLVING, C_CONNECTING, C_HANDSHAKE, C_READY };

struct conn {
	struct engine *http;
	struct conn *next; /* idle list */
	struct mbed_call *call;
	enum conn_state state;
	int fd;
	struct event *ev, *timer;
	struct evutil_addrinfo *ai, *ai_cur;
	struct evdns_getaddrinfo_request *dns_req;
	bool tls;
	bool ssl_ready;
	mbedtls_ssl_context ssl;
	int sys_errno; /* last socket error seen by the TLS I/O callbacks */
	unsigned uses; /* requests started on this connection */
};

struct engine {
	struct kube_http *layer;
	struct event_base *base;
	struct kube_config *cfg; /* borrowed */
	struct conn *idle;
	unsigned n_idle;
	struct kube_server_url srv; /* from cfg->server */
	struct evdns_base *dns;
	struct kube_tls mbed; /* TLS, set up on the first connection */
};

struct mbed_call {
	struct kube_http_call call; /* first: the call layer's part */
	struct conn *conn;
	char *target; /* request target: prefix + path */
	char *req;    /* serialized request */
	size_t req_len, req_off;
	struct kube_http_parser parser;
	bool parser_ready;
	bool retried;
};

static struct engine *
call_engine(const struct mbed_call *call)
{
	return kube_http_state(call->call.http);
}

static void conn_io_cb(evutil_socket_t fd, short what, void *arg);
static void conn_timer_cb(evutil_socket_t fd, short what, void *arg);
static void conn_start_io(struct conn *c);
static int call_attach(struct mbed_call *call);

/* --- connections ------------------------------------------------------------------------- */

static void
conn_close(struct conn *c)
{
	if (!c)
		return;
	if (c->dns_req)
		evdns_getaddrinfo_cancel(c->dns_req); /* its callback sees the cancel and returns */
	if (c->ev)
		event_free(c->ev);
	if (c->timer)
		event_free(c->timer);
	if (c->ssl_ready && c->state == C_READY && !c->call)
		(void)mbedtls_ssl_close_notify(&c->ssl); /* best effort, non-blocking */
	if (c->tls)
		mbedtls_ssl_free(&c->ssl);
	if (c->fd >= 0)
		close(c->fd);
	if (c->ai)
		evutil_freeaddrinfo(c->ai);
	free(c);
}

static void
idle_remove(struct engine *h, struct conn *c)
{
	for (struct conn **p = &h->idle; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			c->next = NULL;
			h->n_idle--;
			return;
		}
}

/* mbed TLS I/O on the non-blocking socket (MSG_NOSIGNAL: no SIGPIPE on a closed peer). */
static int
tls_send(void *ctx, const unsigned char *buf, size_t len)
{
	struct conn *c = ctx;
	ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);

	if (n >= 0)
		return (int)n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return MBEDTLS_ERR_SSL_WANT_WRITE;
	c->sys_errno = errno;
	return (errno == EPIPE || errno == ECONNRESET) ? MBEDTLS_ERR_NET_CONN_RESET
						       : MBEDTLS_ERR_NET_SEND_FAILED;
}

static int
tls_recv(void *ctx, unsigned char *buf, size_t len)
{
	struct conn *c = ctx;
	ssize_t n = recv(c->fd, buf, len, 0);

	if (n >= 0)
		return (int)n;
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return MBEDTLS_ERR_SSL_WANT_READ;
	c->sys_errno = errno;
	return errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_RECV_FAILED;
}

/* --- calls ------------------------------------------------------------------------------- */

/* Drops what the engine holds for a call: mid-request, the connection cannot be reused. */
static void
mbed_abort(struct kube_http_call *kc)
{
	struct mbed_call *call = (struct mbed_call *)kc;

	if (call->conn) {
		call->conn->call = NULL;
		conn_close(call->conn);
		call->conn = NULL;
	}
	if (call->parser_ready) {
		kube_http_parser_release(&call->parser);
		call->parser_ready = false;
	}
	free(call->target);
	call->target = NULL;
	free(call->req);
	call->req = NULL;
}

/* Fails a call whose connection broke: closes it, retries once if nothing was answered yet. */
static void
call_conn_failed(struct mbed_call *call, int err, const char *what)
{
	struct conn *c = call->conn;
	bool reused = c && c->uses > 1;

	call->conn = NULL;
	if (c) {
		c->call = NULL;
		conn_close(c);
	}
	if (reused && !call->retried && !kube_http_parser_started(&call->parser)) {
		call->retried = true;
		call->req_off = 0;
		if (call_attach(call) == 0)
			return;
	}
	kube_http_call_done(&call->call, err, 0, "%s", what);
}

static bool
body_cb(void *userdata, const char *data, size_t len)
{
	struct mbed_call *call = userdata;

	long status = call->parser.status;

	if (call->parser.has_length && !(call->call.stream && status >= 200 && status < 300))
		kube_http_call_expect(&call->call, call->parser.length);
	return kube_http_call_data(&call->call, status, data, len) == 0;
}

/* The answer is complete: the connection goes back to the pool when it may, then report. */
static void
call_complete(struct mbed_call *call, bool reusable)
{
	struct engine *h = call_engine(call);
	struct conn *c = call->conn;

	call->conn = NULL;
	c->call = NULL;
	if (reusable && call->parser.keep_alive && h->n_idle < MAX_IDLE) {
		struct timeval tv = {.tv_sec = IDLE_MS / 1000, .tv_usec = (IDLE_MS % 1000) * 1000};

		c->next = h->idle;
		h->idle = c;
		h->n_idle++;
		/* watch for the server closing it while idle */
		event_del(c->ev);
		event_assign(c->ev, h->base, c->fd, EV_READ, conn_io_cb, c);
		event_add(c->ev, NULL);
		evtimer_add(c->timer, &tv);
	} else {
		conn_close(c);
	}
	kube_http_call_done(&call->call, 0, call->parser.status, NULL);
}

/* --- connection I/O ------------------------------------------------------------------------ */

static void
conn_arm(struct conn *c, short what)
{
	event_del(c->ev);
	event_assign(c->ev, c->http->base, c->fd, what, conn_io_cb, c);
	event_add(c->ev, NULL);
}

/*
 * One send (out) or receive (in) on the connection, over TLS or plain: the byte count (0: the
 * server closed it), IO_WAIT after arming the event it waits for, or IO_FAILED with curl's
 * words in what ("Send failure: ...", "Recv failure: ...").
 */
#define IO_WAIT (-1)
#define IO_FAILED (-2)
static inline ssize_t
conn_io(struct conn *c, const char *out, char *in, size_t n, char *what, size_t what_len)
{
	const char *verb = out ? "Send" : "Recv";
	char text[200];
	ssize_t r;

	if (c->tls) {
		int t = out ? mbedtls_ssl_write(&c->ssl, (const unsigned char *)out, n)
			    : mbedtls_ssl_read(&c->ssl, (unsigned char *)in, n);

		if (t == MBEDTLS_ERR_SSL_WANT_WRITE || t == MBEDTLS_ERR_SSL_WANT_READ) {
			conn_arm(c, t == MBEDTLS_ERR_SSL_WANT_WRITE ? EV_WRITE : EV_READ);
			return IO_WAIT;
		}
		if (!out &&
		    (t == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || t == MBEDTLS_ERR_SSL_CONN_EOF))
			t = 0;
		if (t < 0) {
			snprintf(what, what_len, "%s failure: %s", verb,
			    kube_tls_text(t, text, sizeof(text)));
			return IO_FAILED;
		}
		return t;
	}
	r = out ? send(c->fd, out, n, MSG_NOSIGNAL) : recv(c->fd, in, n, 0);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
		conn_arm(c, out ? EV_WRITE : EV_READ);
		return IO_WAIT;
	}
	if (r < 0) {
		snprintf(what, what_len, "%s failure: %s", verb, strerror(errno));
		return IO_FAILED;
	}
	return r;
}

/* The answer's bytes so far in the parser: true when the call is over (completed, failed or
 * cancelled), false to read on. */
static bool
conn_answer(struct conn *c, const char *buf, ssize_t n)
{
	struct mbed_call *call = c->call;
	ssize_t used;

	if (n == 0) { /* the server closed the connection */
		if (kube_http_parse_eof(&call->parser) == 0) {
			call_complete(call, false);
			return true;
		}
		call_conn_failed(call, -EIO,
		    kube_http_parser_started(&call->parser)
			? "Transferred a partial file (connection closed in the answer)"
			: "Empty reply from server");
		return true;
	}
	used = kube_http_parse(&call->parser, buf, (size_t)n, body_cb, call);
	if (call->call.cancelled) /* on_data cancelled it: the reaper frees it */
		return true;
	if (used < 0) {
		/* -ECANCELED: the call layer refused the body and says why */
		if (used == -ECANCELED)
			call_conn_failed(call, -ECANCELED, "aborted");
		else if (used == -ENOMEM)
			call_conn_failed(call, -ENOMEM, "out of memory");
		else
			call_conn_failed(call, -EIO, "malformed HTTP answer");
		return true;
	}
	if (kube_http_parser_done(&call->parser)) {
		/* bytes after the answer: the server is confused, do not reuse */
		bool extra = used < n || (c->tls && mbedtls_ssl_get_bytes_avail(&c->ssl));

		call_complete(call, !extra);
		return true;
	}
	return false;
}

/* Sends what is left of the request, then reads the answer. */
static void
conn_exchange(struct conn *c)
{
	struct mbed_call *call = c->call;
	char buf[READ_CHUNK], what[260];
	ssize_t n;

	while (call->req_off < call->req_len) {
		n = conn_io(c, call->req + call->req_off, NULL, call->req_len - call->req_off, what,
		    sizeof(what));
		if (n == IO_WAIT)
			return;
		if (n == IO_FAILED) {
			call_conn_failed(call, -EIO, what);
			return;
		}
		call->req_off += (size_t)n;
	}
	do {
		n = conn_io(c, NULL, buf, sizeof(buf), what, sizeof(what));
		if (n == IO_WAIT)
			return;
		if (n == IO_FAILED) {
			call_conn_failed(call, -EIO, what);
			return;
		}
	} while (!conn_answer(c, buf, n));
}

static void
conn_handshake(struct conn *c)
{
	int r = mbedtls_ssl_handshake(&c->ssl);
	char what[600];

	if (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE) {
		conn_arm(c, r == MBEDTLS_ERR_SSL_WANT_READ ? EV_READ : EV_WRITE);
		return;
	}
	if (r != 0) {
		kube_tls_handshake_error(&c->ssl, r, c->sys_errno, what, sizeof(what));
		call_conn_failed(c->call, -EPROTO, what);
		return;
	}
	c->state = C_READY;
	evtimer_del(c->timer);
	conn_exchange(c);
}

static void conn_connect_next(struct conn *c);

static void
conn_io_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct engine *h = c->http;

	if (!c->call) {
		/* idle: the server closed it (or sent something unasked) */
		idle_remove(h, c);
		conn_close(c);
		return;
	}
	if (c->call->call.cancelled)
		return; /* the reaper frees the call and closes this connection */
	switch (c->state) {
	case C_RESOLVING:
		break;
	case C_CONNECTING: {
		int err = 0;
		socklen_t len = sizeof(err);

		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err) {
			c->sys_errno = err;
			close(c->fd);
			c->fd = -1;
			c->ai_cur = c->ai_cur->ai_next;
			conn_connect_next(c);
			return;
		}
		conn_start_io(c);
		break;
	}
	case C_HANDSHAKE:
		conn_handshake(c);
		break;
	case C_READY:
		conn_exchange(c);
		break;
	}
}

/* Connected: TLS handshake or straight to the exchange. */
static void
conn_start_io(struct conn *c)
{
	struct engine *h = c->http;
	int one = 1, r;

	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)kube_http_keepalive(c->fd); /* a dead peer found within a minute */
	if (!c->tls) {
		c->state = C_READY;
		evtimer_del(c->timer);
		conn_exchange(c);
		return;
	}
	mbedtls_ssl_init(&c->ssl);
	r = mbedtls_ssl_setup(&c->ssl, &h->mbed.conf);
	if (r == 0)
		r = mbedtls_ssl_set_hostname(&c->ssl, h->srv.host_is_ip ? NULL : h->srv.host);
	if (r) {
		char text[200], what[260];

		mbedtls_ssl_free(&c->ssl);
		c->tls = false; /* nothing left to free */
		snprintf(what, sizeof(what), "SSL connect error: %s",
		    kube_tls_text(r, text, sizeof(text)));
		call_conn_failed(c->call, -EPROTO, what);
		return;
	}
	mbedtls_ssl_set_bio(&c->ssl, c, tls_send, tls_recv, NULL);
	c->ssl_ready = true;
	c->state = C_HANDSHAKE;
	conn_handshake(c);
}

/* Tries the addresses from ai_cur on; the last failure is reported. */
static void
conn_connect_next(struct conn *c)
{
	struct engine *h = c->http;

	for (; c->ai_cur; c->ai_cur = c->ai_cur->ai_next) {
		struct evutil_addrinfo *a = c->ai_cur;

		c->fd = socket(a->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->fd < 0) {
			c->sys_errno = errno;
			continue;
		}
		if (connect(c->fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) {
			c->state = C_CONNECTING;
			conn_arm(c, EV_WRITE);
			return;
		}
		c->sys_errno = errno;
		close(c->fd);
		c->fd = -1;
	}
	{
		char what[300];
		int err = c->sys_errno;

		snprintf(what, sizeof(what), "Failed to connect to %s port %s: %s", h->srv.host,
		    h->srv.port, strerror(err ? err : ECONNREFUSED));
		call_conn_failed(c->call,
		    err == ETIMEDOUT				  ? -ETIMEDOUT
		    : (err == ENETUNREACH || err == EHOSTUNREACH) ? -EHOSTUNREACH
								  : -ECONNREFUSED,
		    what);
	}
}

static void
dns_cb(int result, struct evutil_addrinfo *res, void *arg)
{
	struct conn *c = arg;
	char what[300];

	if (result == EVUTIL_EAI_CANCEL)
		return; /* conn_close cancelled it: c is being freed */
	c->dns_req = NULL;
	if (result != 0) {
		snprintf(what, sizeof(what), "Could not resolve host: %s (%s)", c->http->srv.host,
		    evutil_gai_strerror(result));
		call_conn_failed(c->call, -EHOSTUNREACH, what);
		return;
	}
	c->ai = c->ai_cur = res;
	conn_connect_next(c);
}

static void
conn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;
	struct engine *h = c->http;
	char msg[200];

	if (!c->call) { /* idle too long */
		idle_remove(h, c);
		conn_close(c);
		return;
	}
	if (c->call->call.cancelled)
		return;
	snprintf(msg, sizeof(msg), "%s to %s port %s timed out after %ld milliseconds",
	    c->state == C_HANDSHAKE   ? "TLS handshake"
	    : c->state == C_RESOLVING ? "Resolving"
				      : "Connection",
	    h->srv.host, h->srv.port, kube_http_connect_ms(h->layer));
	c->sys_errno = 0;
	call_conn_failed(c->call, -ETIMEDOUT, msg);
}

/* A new connection for call: resolve, connect, handshake (each step from the loop). */
static int
conn_open(struct mbed_call *call)
{
	struct engine *h = call_engine(call);
	long connect_ms = kube_http_connect_ms(h->layer);
	struct timeval tv = {.tv_sec = connect_ms / 1000, .tv_usec = (connect_ms % 1000) * 1000};
	struct evutil_addrinfo hints = {
	    .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_protocol = IPPROTO_TCP};
	struct conn *c;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->http = h;
	c->fd = -1;
	c->tls = h->srv.tls;
	c->ev = event_new(h->base, -1, 0, conn_io_cb, c);
	c->timer = evtimer_new(h->base, conn_timer_cb, c);
	if (!c->ev || !c->timer) {
		conn_close(c);
		return -ENOMEM;
	}
	c->call = call;
	call->conn = c;
	c->uses = 1;
	c->state = C_RESOLVING;
	evtimer_add(c->timer, &tv);
	if (h->srv.host_is_ip) {
		hints.ai_flags = EVUTIL_AI_NUMERICHOST | EVUTIL_AI_NUMERICSERV;
		if (evutil_getaddrinfo(h->srv.host, h->srv.port, &hints, &c->ai) != 0) {
			call_conn_failed(call, -EINVAL, "bad server address");
			return 0;
		}
		c->ai_cur = c->ai;
		conn_connect_next(c);
		return 0;
	}
	if (!h->dns) {
		/* idle, it must not keep the loop alive */
		h->dns = evdns_base_new(
		    h->base, EVDNS_BASE_INITIALIZE_NAMESERVERS | EVDNS_BASE_DISABLE_WHEN_INACTIVE);
		if (!h->dns) /* no usable resolv.conf: /etc/hosts only */
			h->dns = evdns_base_new(h->base, EVDNS_BASE_DISABLE_WHEN_INACTIVE);
		if (!h->dns) {
			call->conn = NULL;
			c->call = NULL;
			conn_close(c);
			return -ENOMEM;
		}
	}
	hints.ai_flags = EVUTIL_AI_ADDRCONFIG;
	/* may call dns_cb at once (hosts file, cache) and return NULL: c may be gone then */
	{
		struct evdns_getaddrinfo_request *req =
		    evdns_getaddrinfo(h->dns, h->srv.host, h->srv.port, &hints, dns_cb, c);

		if (req)
			c->dns_req = req;
	}
	return 0;
}

/* Serializes the request and puts it on an idle or a new connection. */
static int
call_attach(struct mbed_call *call)
{
	struct engine *h = call_engine(call);
	struct conn *c;

	if (call->parser_ready)
		kube_http_parser_release(&call->parser);
	kube_http_parser_init(&call->parser, strcmp(call->call.rq.method, "HEAD") == 0);
	call->parser_ready = true;
	if (h->srv.tls) {
		int r = kube_tls_load(
		    &h->mbed, h->cfg, h->srv.host_is_ip ? h->srv.ip : NULL, h->srv.ip_len);

		if (r < 0) {
			kube_http_call_done(&call->call, r, 0, "%s", h->mbed.message);
			return 0;
		}
	}
	while ((c = h->idle)) {
		h->idle = c->next;
		c->next = NULL;
		h->n_idle--;
		evtimer_del(c->timer);
		c->call = call;
		c->uses++;
		call->conn = c;
		conn_exchange(c);
		return 0;
	}
	return conn_open(call);
}

/* An admitted call: serializes the request and puts it on an idle or a new connection. */
static int
mbed_start(struct kube_http_call *kc, const char *token)
{
	struct mbed_call *call = (struct mbed_call *)kc;
	struct engine *h = call_engine(call);
	const struct kube_http_owned *rq = &kc->rq;
	size_t cap;
	int n;

	/* the request target: the server URL's path prefix, then the call's path */
	if (asprintf(&call->target, "%s%s", h->srv.prefix, rq->url + strlen(h->cfg->server)) < 0) {
		call->target = NULL;
		return -ENOMEM;
	}
	cap = strlen(rq->method) + strlen(call->target) + strlen(h->srv.authority) +
	      (token ? strlen(token) : 0) + (rq->content_type ? strlen(rq->content_type) : 0) +
	      256 + rq->body_len;
	call->req = malloc(cap);
	if (!call->req)
		return -ENOMEM;
	n = snprintf(call->req, cap,
	    "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: vm-dhcp/kube\r\n"
	    "Accept: application/json\r\n%s%s%s%s%s%s",
	    rq->method, call->target, h->srv.authority, token ? "Authorization: Bearer " : "",
	    token ? token : "", token ? "\r\n" : "", rq->content_type ? "Content-Type: " : "",
	    rq->content_type ? rq->content_type : "", rq->content_type ? "\r\n" : "");
	if (n < 0 || (size_t)n >= cap)
		return -ENOMEM;
	if (rq->body || strcmp(rq->method, "POST") == 0 || strcmp(rq->method, "PUT") == 0 ||
	    strcmp(rq->method, "PATCH") == 0)
		n += snprintf(
		    call->req + n, cap - (size_t)n, "Content-Length: %zu\r\n", rq->body_len);
	n += snprintf(call->req + n, cap - (size_t)n, "\r\n");
	if (rq->body_len)
		memcpy(call->req + n, rq->body, rq->body_len);
	call->req_len = (size_t)n + rq->body_len;
	free(kc->rq.body); /* the request holds it now */
	kc->rq.body = NULL;
	return call_attach(call);
}

/* --- setup ------------------------------------------------------------------------------- */

static void mbed_free(void *state);

static int
mbed_init(struct kube_http *layer, void **state)
{
	struct kube_config *cfg = kube_http_config(layer);
	struct engine *h;
	int r;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->layer = layer;
	h->base = kube_http_base(layer);
	h->cfg = cfg;
	kube_tls_init(&h->mbed);
	r = kube_server_url_parse(&h->srv, cfg->server ? cfg->server : "");
	if (r < 0) {
		mbed_free(h);
		return r;
	}
	*state = h;
	return 0;
}

static void
mbed_free(void *state)
{
	struct engine *h = state;

	while (h->idle) {
		struct conn *c = h->idle;

		h->idle = c->next;
		conn_close(c);
	}
	if (h->dns)
		evdns_base_free(h->dns, 0);
	kube_tls_free(&h->mbed);
	kube_server_url_free(&h->srv);
	free(h);
}

const struct kube_http_engine kube_http_engine = {
    .name = "mbedtls",
    .call_size = sizeof(struct mbed_call),
    .max_active = MAX_ACTIVE,
    .init = mbed_init,
    .free = mbed_free,
    .start = mbed_start,
    .abort = mbed_abort,
};
