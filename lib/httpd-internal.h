/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_HTTPD_INTERNAL_H
#define VMDHCP_LIB_HTTPD_INTERNAL_H

/*
 * The server record of lib/httpd.h, shared by its two files: lib/httpd.c (the server made and
 * freed, its settings, its routes) and lib/httpd-conns.c (the connection table: accounting,
 * limits, the request deadline, drops, accept errors).
 */

#include <stdint.h>

#include "lib/httpd.h"

struct bufferevent;
struct conn;
struct event;
struct evconnlistener;
struct evhttp;
struct evhttp_bound_socket;

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

/* --- the connection table (lib/httpd-conns.c) ------------------------------------------ */

/* The reasons of enum httpd_drop, the label values of the drops metric. */
extern const char *const httpd_drop_reasons[HTTPD_DROP_N];
/* Connections accepted in one pass of the loop at most, for a table of max_conns. */
unsigned httpd_batch_for(unsigned max_conns);
/* The listener enabled or disabled as the state of h wants. */
void httpd_listener_update(struct httpd *h);
/* evhttp's bevcb (arg: h): the bufferevent of an accepted connection, counted in the table. */
struct bufferevent *httpd_conn_bufferevent(struct event_base *base, void *arg);
/* Every handler calls it first: the request is complete, its connection replying. */
void httpd_request_dispatched(struct httpd *h, struct evhttp_request *req);
int httpd_conns_start(struct httpd *h, struct event_base *base, int fd);
void httpd_conns_unlink(struct httpd *h);
void httpd_conns_free(struct httpd *h);

#endif
