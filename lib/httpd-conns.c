/* SPDX-License-Identifier: Apache-2.0 */
/* The connection table of lib/httpd.c's endpoint: what evhttp does not limit, limited here. */
#include "lib/httpd-internal.h"

#include <errno.h>
#include <limits.h>
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

void
httpd_listener_update(struct httpd *h)
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
unsigned
httpd_batch_for(unsigned max_conns)
{
	return MAX(1u, MIN(16u, max_conns / 4));
}

const char *const httpd_drop_reasons[HTTPD_DROP_N] = {
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
	httpd_listener_update(h);
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
	log_debug("http :%d: connection dropped (%s)", h->port, httpd_drop_reasons[why]);
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
	httpd_listener_update(c->h);
	if (evbuffer_get_length(
		bufferevent_get_input(evhttp_connection_get_bufferevent(c->evcon))) > 0) {
		c->state = CONN_READING; /* pipelined */
		deadline_arm(c);
	}
}

/* Every request that reaches a handler comes here first: it is complete. */
void
httpd_request_dispatched(struct httpd *h, struct evhttp_request *req)
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
	httpd_listener_update(h);
}

/* Closes what evhttp_free() left: nothing, or connections never adopted. */
static void
drop_accepted(struct httpd *h)
{
	while (h->head != NULL)
		conn_remove(h->head);
}

struct bufferevent *
httpd_conn_bufferevent(struct event_base *base, void *arg)
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
	httpd_listener_update(h);
	return c->bev;
}

static void
table_resume(evutil_socket_t fd, short what, void *arg)
{
	struct httpd *h = arg;

	(void)fd;
	(void)what;
	h->table_paused = false;
	httpd_listener_update(h);
}

static void
accept_retry(evutil_socket_t fd, short what, void *arg)
{
	struct httpd *h = arg;

	(void)fd;
	(void)what;
	h->backing_off = false;
	httpd_listener_update(h);
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
	httpd_listener_update(h);
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

/*
 * The listening socket fd (numeric, listening already) handed to evhttp through a listener,
 * the events of the table made, and h put in the live list: 0, or -ENOMEM with fd closed and
 * what was made freed.
 */
int
httpd_conns_start(struct httpd *h, struct event_base *base, int fd)
{
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
		return -ENOMEM;
	}
	evconnlistener_set_error_cb(h->listener, accept_error);
	h->accepting = true;
	h->next = live_httpds;
	live_httpds = h;
	return 0;
}

/* h out of the live list: its listener's errors no longer find it. */
void
httpd_conns_unlink(struct httpd *h)
{
	for (struct httpd **p = &live_httpds; *p != NULL; p = &(*p)->next)
		if (*p == h) {
			*p = h->next;
			break;
		}
}

/* After evhttp_free(): the connections it left and the table's events freed. */
void
httpd_conns_free(struct httpd *h)
{
	drop_accepted(h);
	event_free(h->adopt);
	event_free(h->resume);
	event_free(h->retry);
}
