/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/httpd.h"

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

/*
 * The limits are evhttp's own (evhttp_set_max_headers_size, _max_body_size, _timeout_tv), on
 * evhttp's usual data path: a socket bufferevent per connection, nothing between it and
 * evhttp. (70e5034 put a pass-through filter bufferevent there, to see connections go; evhttp
 * takes "the filter's output is empty" for "the reply is written", so after a reply with
 * Connection: close it freed the connection while the reply still sat in the socket
 * bufferevent below, and shut the socket down: the kubelet's probes got an empty reply.)
 *
 * Connection accounting. libevent 2.1 has no evhttp_set_max_connections(); it has a close
 * callback per evhttp_connection, called when evhttp frees (or resets) a connection that
 * is still open, and evhttp_set_bevcb(), which evhttp calls for every accepted connection to
 * get its bufferevent. We make that bufferevent (the one evhttp would make), count the
 * connection, and, once evhttp has built the connection around it, register the close
 * callback: from an event run right after the accept, because evhttp builds the
 * evhttp_connection after asking for the bufferevent. evhttp passes its evhttp_connection as
 * the argument of every callback it sets on the bufferevent; bufferevent_getcb() reads it,
 * and evhttp_connection_get_bufferevent() confirms it.
 *
 * The connection table (the request deadline, the per-address limit, the drop order; see
 * lib/httpd.h). What evhttp does not tell, we see beside it: the bytes of a request arriving
 * (a callback on the bufferevent's input evbuffer, which evhttp does not use), a complete
 * request (every handler is ours, or wrapped: it marks the connection first), and its reply
 * written (the request's on-complete callback). A dropped connection is freed with
 * evhttp_connection_free(), from a timer or the adopt event, never from inside one of
 * evhttp's callbacks; handlers answer before they return, so no request is left to one.
 */
enum conn_state {
	CONN_WAITING,  /* no byte of a request yet: just accepted, or kept alive after a reply */
	CONN_READING,  /* a request under way, not complete yet */
	CONN_REPLYING, /* complete: at its handler, or its reply being written */
};

/* An open connection, in the table of its server (oldest accepted first). */
struct conn {
	struct httpd *h;
	struct bufferevent *bev;	    /* referenced until adopted */
	struct evhttp_connection *evcon;    /* once adopted: evhttp's connection around bev */
	struct evbuffer_cb_entry *input_cb; /* sees the bytes of a request arrive */
	struct event *deadline;		    /* the request deadline, while one is under way */
	struct conn *prev, *next;
	uint64_t order;		/* accept (or, once a reply is done, idle-since) sequence number */
	uint64_t since_usec;	/* when it entered its state (clock_now_usec) */
	uint64_t batch;		/* the accept pass that took it */
	unsigned long requests; /* answered */
	enum conn_state state;
	bool adopted;
	bool have_peer;
	uint8_t peer_family;
	uint8_t peer[16]; /* the source address (an IPv4-mapped one as IPv4) */
};

/* A httpd_add_handler registration. */
struct user_handler {
	struct httpd *h;
	httpd_handler_fn fn;
	void *userdata;
	struct user_handler *next;
};

/* A httpd_add_body_handler registration. */
struct body_handler {
	struct httpd *h;
	const char *path; /* borrowed */
	size_t path_len;
	bool prefix; /* path ends with '/' */
	httpd_body_fn fn;
	void *userdata;
	struct body_handler *next;
};

struct httpd {
	struct evhttp *http;
	struct body_handler *handlers;
	struct evhttp_bound_socket *sock;
	struct evconnlistener *listener; /* owned by sock */
	struct event *retry;		 /* re-enables the listener after an accept error */
	struct event *adopt;		 /* adopts the connections of an accept pass */
	struct conn *head, *tail;	 /* the connection table, oldest accepted first */
	struct user_handler *user_handlers;
	struct metrics *metrics;
	struct metric *m_dropped; /* vmdhcp_http_connections_dropped_total{reason} */
	httpd_ready_fn ready;
	void *ready_userdata;
	httpd_bufferevent_fn make_bev; /* NULL: a plain socket bufferevent */
	void *make_bev_userdata;
	int port;
	int fd; /* the listening socket (owned by the listener) */
	unsigned conns, max_conns;
	unsigned max_per_peer;
	uint64_t hold_usec;	/* HTTPD_HOLD_MSEC */
	uint64_t grace_usec;	/* HTTPD_SEND_GRACE_MSEC */
	struct event *resume;	/* ends table_paused once a connection may have become old enough */
	unsigned deadline_msec; /* a request must be complete within it */
	unsigned batch_max;	/* connections accepted in one pass of the loop at most */
	unsigned batch_accepts; /* in the current pass */
	uint64_t batch;		/* the current accept pass */
	uint64_t seq;		/* orders the connections (struct conn.order) */
	unsigned long dropped[HTTPD_DROP_N];
	size_t read_max; /* read-ahead watermark of a connection */
	bool accepting, backing_off;
	bool batch_full;   /* batch_max reached: accepting resumes once the pass is adopted */
	bool table_paused; /* over the table and nothing could go: resumes when one can */
	bool stopped;	   /* httpd_stop_accepting() */
	bool closing;	   /* in httpd_free(): the listener is gone */
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
	bool want = !h->stopped && !h->backing_off && !h->batch_full && !h->table_paused;

	if (h->closing || want == h->accepting)
		return;
	if (want)
		evconnlistener_enable(h->listener);
	else
		evconnlistener_disable(h->listener);
	h->accepting = want;
}

/* A quarter of the table per pass, 1 to 16. */
static unsigned
batch_for(unsigned max_conns)
{
	return MAX(1u, MIN(16u, max_conns / 4));
}

static const char *const drop_reasons[HTTPD_DROP_N] = {
    [HTTPD_DROP_TABLE_FULL] = "table_full",
    [HTTPD_DROP_PEER_LIMIT] = "peer_limit",
    [HTTPD_DROP_DEADLINE] = "deadline",
};

/* Takes c out of the table and frees it: its connection is gone (or going) in evhttp. */
static void
conn_remove(struct conn *c)
{
	struct httpd *h = c->h;

	if (c->input_cb != NULL && c->evcon != NULL)
		evbuffer_remove_cb_entry(
		    bufferevent_get_input(evhttp_connection_get_bufferevent(c->evcon)),
		    c->input_cb);
	if (!c->adopted)
		bufferevent_decref(c->bev);
	event_free(c->deadline);
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		h->head = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	else
		h->tail = c->prev;
	free(c);
	h->conns--;
	if (h->conns < h->max_conns)
		h->table_paused = false;
	listener_update(h);
}

/* evhttp frees or resets a connection: once per connection. */
static void
conn_closed(struct evhttp_connection *evcon, void *arg)
{
	(void)evcon;
	conn_remove(arg);
}

/* Closes an adopted connection (no answer) for reason why. */
static void
conn_drop(struct conn *c, enum httpd_drop why)
{
	struct httpd *h = c->h;
	struct evhttp_connection *evcon = c->evcon;

	h->dropped[why]++;
	if (h->m_dropped != NULL)
		metric_inc(h->m_dropped, why);
	log_debug("http :%d: connection dropped (%s)", h->port, drop_reasons[why]);
	evhttp_connection_set_closecb(evcon, NULL, NULL);
	conn_remove(c);
	evhttp_connection_free(evcon);
}

static void
deadline_arm(struct conn *c)
{
	struct timeval tv = {
	    .tv_sec = c->h->deadline_msec / 1000, .tv_usec = (c->h->deadline_msec % 1000) * 1000};

	evtimer_add(c->deadline, &tv);
}

/* The request under way was not complete in time (a slow or stalled client). */
static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn *c = arg;

	(void)fd;
	(void)what;
	if (c->adopted && c->state != CONN_REPLYING)
		conn_drop(c, HTTPD_DROP_DEADLINE);
}

/* Bytes arrive on a connection: the first of a request starts its deadline. */
static void
conn_input(struct evbuffer *buf, const struct evbuffer_cb_info *info, void *arg)
{
	struct conn *c = arg;

	(void)buf;
	if (info->n_added == 0 || c->state != CONN_WAITING)
		return;
	c->state = CONN_READING;
	if (c->requests > 0) { /* the first request's deadline runs from the accept */
		c->since_usec = clock_now_usec();
		deadline_arm(c);
	}
}

/* The connection of a request that reached a handler, or NULL (not one of ours). */
static struct conn *
conn_of_request(struct httpd *h, struct evhttp_request *req)
{
	struct evhttp_connection *evcon = evhttp_request_get_connection(req);

	for (struct conn *c = h->head; c != NULL; c = c->next)
		if (c->evcon == evcon)
			return c;
	return NULL;
}

/* A reply is written: the connection waits for its next request (or evhttp closes it). */
static void
request_done(struct evhttp_request *req, void *arg)
{
	struct conn *c = arg;

	(void)req;
	c->requests++;
	c->state = CONN_WAITING;
	c->order = ++c->h->seq;
	c->since_usec = clock_now_usec();
	/* an idle connection can go for a new one now: accepting may resume */
	c->h->table_paused = false;
	listener_update(c->h);
	if (evbuffer_get_length(
		bufferevent_get_input(evhttp_connection_get_bufferevent(c->evcon))) > 0) {
		c->state = CONN_READING; /* pipelined */
		deadline_arm(c);
	}
}

/* Every request that reaches a handler comes here first: it is complete. */
static void
request_dispatched(struct httpd *h, struct evhttp_request *req)
{
	struct conn *c = conn_of_request(h, req);

	if (c == NULL)
		return;
	c->state = CONN_REPLYING;
	c->since_usec = clock_now_usec();
	evtimer_del(c->deadline);
	evhttp_request_set_on_complete_cb(req, request_done, c);
}

/*
 * Which connection goes first when one must (lowest first): one kept alive and idle after
 * a reply; then one without a complete request (none yet, or half of one); then one whose
 * reply has waited HTTPD_HOLD_MSEC for a client that does not read it. Within a rank the
 * oldest goes first. Never (-1): one accepted in the current pass, which has not had a
 * chance to send its request yet, one whose reply is under way, and one without a complete
 * request younger than HTTPD_SEND_GRACE_MSEC (for the per-address rule, gentle:
 * HTTPD_HOLD_MSEC), so that a burst of well-behaved clients, which connect and then send,
 * is served, not cut down to the limits.
 */
static int
conn_rank(const struct conn *c, uint64_t now, bool gentle)
{
	bool young = now - c->since_usec < c->h->hold_usec;

	if (c->batch == c->h->batch)
		return -1;
	if (c->state == CONN_REPLYING)
		return young ? -1 : 2;
	if (c->state == CONN_WAITING && c->requests > 0)
		return 0;
	if (now - c->since_usec < (gentle ? c->h->hold_usec : c->h->grace_usec))
		return -1; /* give it time to send its request */
	return 1;
}

static bool
same_peer(const struct conn *a, const struct conn *b)
{
	return a->have_peer && b->have_peer && a->peer_family == b->peer_family &&
	       memcmp(a->peer, b->peer, sizeof(a->peer)) == 0;
}

/* The connection to drop among those (of peer's source, when not NULL), or NULL. */
static struct conn *
pick_victim(struct httpd *h, const struct conn *peer)
{
	struct conn *best = NULL;
	int best_rank = 0;
	uint64_t now = clock_now_usec();

	for (struct conn *c = h->head; c != NULL; c = c->next) {
		int rank;

		if (!c->adopted || (peer != NULL && !same_peer(c, peer)))
			continue;
		rank = conn_rank(c, now, peer != NULL);
		if (rank < 0)
			continue;
		if (best == NULL || rank < best_rank ||
		    (rank == best_rank && c->order < best->order)) {
			best = c;
			best_rank = rank;
		}
	}
	return best;
}

static void
conn_peer(struct conn *c, evutil_socket_t s)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	memset(c->peer, 0, sizeof(c->peer));
	if (s < 0 || getpeername(s, (struct sockaddr *)&ss, &len) < 0)
		return;
	if (ss.ss_family == AF_INET) {
		c->peer_family = AF_INET;
		memcpy(c->peer, &((struct sockaddr_in *)&ss)->sin_addr, 4);
		c->have_peer = true;
	} else if (ss.ss_family == AF_INET6) {
		const struct in6_addr *a = &((struct sockaddr_in6 *)&ss)->sin6_addr;

		if (IN6_IS_ADDR_V4MAPPED(a)) {
			c->peer_family = AF_INET;
			memcpy(c->peer, a->s6_addr + 12, 4);
		} else {
			c->peer_family = AF_INET6;
			memcpy(c->peer, a->s6_addr, 16);
		}
		c->have_peer = true;
	}
}

/* Finds evhttp's connection around a bufferevent of the pass: false when there is none. */
static bool
conn_adopt(struct httpd *h, struct conn *c)
{
	bufferevent_event_cb eventcb = NULL;
	void *cbarg = NULL;
	evutil_socket_t s = bufferevent_getfd(c->bev);
	int one = 1;

	/*
	 * Answers go out at once: with Nagle's algorithm a reply written in more than one
	 * segment (a TLS record, then the next) waits for the client's delayed ACK, about
	 * 40 ms per request on Linux (seen as the API server's admission latency).
	 */
	if (s >= 0 && setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		log_debug("http :%d: TCP_NODELAY: %s", h->port, strerror(errno));
	bufferevent_getcb(c->bev, NULL, NULL, &eventcb, &cbarg);
	if (eventcb == NULL) {
		/* evhttp has let it go already (bufferevent_free() clears the callbacks) */
		return false;
	}
	if (cbarg == NULL || evhttp_connection_get_bufferevent(cbarg) != c->bev ||
	    evhttp_connection_get_server(cbarg) != h->http) {
		/* not evhttp's connection: never the case with libevent 2.1 */
		log_warn("http :%d: cannot track a connection: not counted", h->port);
		return false;
	}
	c->evcon = cbarg;
	conn_peer(c, s);
	c->input_cb = evbuffer_add_cb(bufferevent_get_input(c->bev), conn_input, c);
	if (evbuffer_get_length(bufferevent_get_input(c->bev)) > 0)
		c->state = CONN_READING;
	evhttp_connection_set_closecb(c->evcon, conn_closed, c);
	bufferevent_decref(c->bev);
	c->adopted = true;
	return true;
}

/*
 * Runs right after an accept pass (evhttp builds its connection after asking for the
 * bufferevent): adopts the new connections, then enforces the per-peer limit (a peer over
 * it loses its own oldest connection) and the table size (the lowest-ranked connection of
 * all goes, see conn_rank), so that a new connection always gets in: the kubelet's probe
 * is never kept out by connections that others hold.
 */
static void
adopt_accepted(evutil_socket_t fd, short what, void *arg)
{
	struct httpd *h = arg;
	struct conn *c, *next;

	(void)fd;
	(void)what;
	for (c = h->head; c != NULL; c = next) {
		next = c->next;
		if (!c->adopted && !conn_adopt(h, c))
			conn_remove(c);
	}
	for (c = h->head; c != NULL; c = next) {
		next = c->next;
		if (c->batch != h->batch || h->max_per_peer == 0 || !c->have_peer)
			continue;
		unsigned n = 0;
		for (struct conn *o = h->head; o != NULL; o = o->next)
			n += same_peer(o, c);
		while (n-- > h->max_per_peer) {
			struct conn *v = pick_victim(h, c); /* never c: accepted in this pass */
			if (v == NULL)
				break;
			if (v == next)
				next = v->next;
			conn_drop(v, HTTPD_DROP_PEER_LIMIT);
		}
	}
	while (h->conns > h->max_conns) {
		c = pick_victim(h, NULL);
		if (c == NULL) {
			/* only new ones and replies under way: they end or age soon; the
			 * next connections wait in the listen backlog meanwhile */
			uint64_t usec = MAX(h->grace_usec, 10 * USEC_PER_MSEC);
			struct timeval tv = {.tv_sec = (time_t)(usec / USEC_PER_SEC),
			    .tv_usec = (suseconds_t)(usec % USEC_PER_SEC)};

			h->table_paused = true;
			evtimer_add(h->resume, &tv);
			break;
		}
		conn_drop(c, HTTPD_DROP_TABLE_FULL);
	}
	h->batch++;
	h->batch_accepts = 0;
	h->batch_full = false;
	listener_update(h);
}

/* Closes what evhttp_free() left: nothing, or connections never adopted. */
static void
drop_accepted(struct httpd *h)
{
	while (h->head != NULL)
		conn_remove(h->head);
}

static struct bufferevent *
conn_bufferevent(struct event_base *base, void *arg)
{
	struct httpd *h = arg;
	struct conn *c;

	/* Only an accepted connection asks for one: accept() works again. */
	h->backoff_msec = 0;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL; /* evhttp makes its own (uncounted) */
	c->h = h;
	c->deadline = evtimer_new(base, deadline_cb, c);
	/* the program's (TLS), else what evhttp makes itself when there is no bevcb */
	if (c->deadline != NULL && h->make_bev != NULL)
		c->bev = h->make_bev(base, h->make_bev_userdata);
	if (c->deadline != NULL && c->bev == NULL)
		c->bev = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL) {
		if (c->deadline != NULL)
			event_free(c->deadline);
		free(c);
		return NULL;
	}
	/*
	 * evhttp keeps reading while it writes a reply (to see the peer close), into the
	 * input buffer, which a client that pipelines requests and reads no reply would grow
	 * without end: stop reading at this much; evhttp's parser drains it as it goes, and
	 * needs no more than the header and body limits.
	 */
	bufferevent_setwatermark(c->bev, EV_READ, 0, h->read_max);
	bufferevent_incref(c->bev); /* valid until adopted, whatever evhttp does */
	c->order = ++h->seq;
	c->since_usec = clock_now_usec();
	c->batch = h->batch;
	c->state = CONN_WAITING;
	c->prev = h->tail;
	if (h->tail != NULL)
		h->tail->next = c;
	else
		h->head = c;
	h->tail = c;
	deadline_arm(c); /* the first request runs from the accept */
	event_active(h->adopt, EV_TIMEOUT, 0);
	h->conns++;
	/* let this pass's connections read before the next ones come (see conn_rank) */
	if (++h->batch_accepts >= h->batch_max)
		h->batch_full = true;
	listener_update(h);
	return c->bev;
}

static void
table_resume(evutil_socket_t fd, short what, void *arg)
{
	struct httpd *h = arg;

	(void)fd;
	(void)what;
	h->table_paused = false;
	listener_update(h);
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
	struct timeval tv = {
	    .tv_sec = h->backoff_msec / 1000, .tv_usec = (h->backoff_msec % 1000) * 1000};
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
	request_dispatched(arg, req);
	if (only_get(req))
		reply_text(req, 200, "OK", "ok\n", 3, "text/plain; charset=utf-8");
}

static void
readyz_cb(struct evhttp_request *req, void *arg)
{
	struct httpd *h = arg;
	char reason[256] = "", body[300];
	int n;

	request_dispatched(h, req);
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

	request_dispatched(h, req);
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

	request_dispatched(bh->h, req);
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

	request_dispatched(h, req);
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
	h->batch_max = batch_for(h->max_conns);
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
		    "reason", drop_reasons, HTTPD_DROP_N, NULL, 0);
	h->read_max = HTTPD_READ_BUFFER_MAX;
	httpd_set_timeout(h, HTTPD_TIMEOUT_MSEC);
	evhttp_set_bevcb(h->http, conn_bufferevent, h);
	evhttp_set_cb(h->http, "/healthz", healthz_cb, h);
	evhttp_set_cb(h->http, "/readyz", readyz_cb, h);
	evhttp_set_cb(h->http, "/metrics", metrics_cb, h);
	evhttp_set_gencb(h->http, generic_cb, h);
	fd = listen_socket(host, port);
	if (fd < 0) {
		r = fd;
		evhttp_free(h->http);
		free(h);
		return r;
	}
	h->fd = fd;
	h->retry = evtimer_new(base, accept_retry, h);
	h->adopt = event_new(base, -1, 0, adopt_accepted, h);
	h->resume = evtimer_new(base, table_resume, h);
	/* backlog 0: already listening; the callback is evhttp's (evhttp_bind_listener) */
	h->listener = h->retry == NULL || h->adopt == NULL || h->resume == NULL
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
		if (h->adopt != NULL)
			event_free(h->adopt);
		if (h->resume != NULL)
			event_free(h->resume);
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
	/* the listener, and the open connections (their close callbacks run here) */
	evhttp_free(h->http);
	drop_accepted(h);
	event_free(h->adopt);
	event_free(h->resume);
	event_free(h->retry);
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
	listener_update(h);
}

int
httpd_set_max_connections(struct httpd *h, unsigned max)
{
	if (max == 0)
		return -EINVAL;
	h->max_conns = max;
	h->batch_max = batch_for(max);
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

	request_dispatched(uh->h, req);
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
