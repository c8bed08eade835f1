/* SPDX-License-Identifier: Apache-2.0 */
/*
 * HTTPS front end: auth, routing to the store, watches, discovery, fault injection.
 *
 * Size: about 1400 lines, one file on purpose: the routing table and every handler share the
 * request and answer helpers; a test fixture, not product code.
 */
#include "tests/apiserver/server.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/queue.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <jansson.h>

#include "lib/log.h"
#include "lib/util.h"
#include "tests/apiserver/selector.h"
#include "tests/apiserver/store.h"

enum verb {
	VERB_GET,
	VERB_LIST,
	VERB_WATCH,
	VERB_CREATE,
	VERB_UPDATE,
	VERB_PATCH,
	VERB_DELETE,
	VERB_OTHER,
	VERB_MAX,
};

static const char *const verb_names[VERB_MAX] = {
    [VERB_GET] = "get",
    [VERB_LIST] = "list",
    [VERB_WATCH] = "watch",
    [VERB_CREATE] = "create",
    [VERB_UPDATE] = "update",
    [VERB_PATCH] = "patch",
    [VERB_DELETE] = "delete",
    [VERB_OTHER] = "other",
};

struct watch {
	struct server *srv;
	struct watch *prev, *next;   /* all watches */
	struct watch *rprev, *rnext; /* watches of one resource */
	struct resource *res;
	struct evhttp_request *req;
	struct evhttp_connection *evcon;
	char *ns; /* NULL = all namespaces */
	struct selector *labels;
	struct selector *fields;
	bool bookmarks;
	bool dying;
	bool stalled; /* fault injection: send nothing more, keep the stream open */
	struct event *timeout_ev;
	struct event *kill_ev;
};

struct delayed {
	struct server *srv;
	struct delayed *prev, *next;
	struct evhttp_request *req;
	struct evhttp_connection *evcon;
	struct event *ev;
};

/* An answer that does not end (fault "flood"): chunks sent as the client reads them. */
struct flood {
	struct server *srv;
	struct flood *prev, *next;
	struct evhttp_request *req;
	struct evhttp_connection *evcon;
	uint64_t left; /* body bytes still to send; UINT64_MAX: endless */
	bool watch;    /* one endless watch event instead of a list */
};

struct server {
	struct event_base *base;
	SSL_CTX *ssl;
	struct evhttp *http;
	struct store *st;
	struct server_config cfg;
	char *token;
	char *data_file;
	int port;
	struct watch *watches;
	size_t nwatches;
	struct delayed *delayed;
	struct event *bookmark_ev;
	/* faults */
	int fail_code;
	unsigned fail_count;
	char fail_message[256]; /* the Status message of the injected failure ("": the table's) */
	char fail_method[32];	/* "" = any */
	char fail_path[256];	/* a path prefix; "" = any */
	unsigned delay_ms;
	unsigned delay_count;
	unsigned flood_count;
	uint64_t flood_bytes; /* 0: endless */
	bool flood_length;    /* announce flood_bytes as Content-Length (no chunking) */
	char flood_path[256]; /* a path prefix; "" = any */
	struct flood *floods;
	uint64_t flood_sent;   /* body bytes of every flood (stats) */
	uint64_t flood_starts; /* flooded answers started (stats) */
	/* stats */
	uint64_t counts[VERB_MAX];
	uint64_t requests;
};

/* --- responses ------------------------------------------------------------------------- */

static const struct {
	int code;
	const char *phrase;
} phrases[] = {
    {200, "OK"},
    {201, "Created"},
    {400, "Bad Request"},
    {401, "Unauthorized"},
    {404, "Not Found"},
    {405, "Method Not Allowed"},
    {409, "Conflict"},
    {410, "Gone"},
    {415, "Unsupported Media Type"},
    {422, "Unprocessable Entity"},
    {429, "Too Many Requests"},
    {500, "Internal Server Error"},
    {503, "Service Unavailable"},
};

static const char *
phrase(int code)
{
	for (size_t i = 0; i < ELEMENTSOF(phrases); i++)
		if (phrases[i].code == code)
			return phrases[i].phrase;
	return "Status";
}

static const char *
method_name(struct evhttp_request *req)
{
	static const struct {
		enum evhttp_cmd_type cmd;
		const char *name;
	} methods[] = {
	    {EVHTTP_REQ_GET, "GET"},
	    {EVHTTP_REQ_POST, "POST"},
	    {EVHTTP_REQ_PUT, "PUT"},
	    {EVHTTP_REQ_PATCH, "PATCH"},
	    {EVHTTP_REQ_DELETE, "DELETE"},
	    {EVHTTP_REQ_HEAD, "HEAD"},
	    {EVHTTP_REQ_OPTIONS, "OPTIONS"},
	};

	for (size_t i = 0; i < ELEMENTSOF(methods); i++)
		if (methods[i].cmd == evhttp_request_get_command(req))
			return methods[i].name;
	return "?";
}

static void
log_request(struct evhttp_request *req, int code)
{
	const char *m = method_name(req);

	if (log_get_level() < LOG_LEVEL_DEBUG)
		return;
	log_debug("%s %s -> %d", m, evhttp_request_get_uri(req), code);
}

static void
send_text(struct evhttp_request *req, int code, const char *ctype, const char *data, size_t len)
{
	struct evbuffer *b = evbuffer_new();

	evbuffer_add(b, data, len);
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", ctype);
	log_request(req, code);
	evhttp_send_reply(req, code, phrase(code), b);
	evbuffer_free(b);
}

/* Sends and releases j. */
static void
send_json(struct evhttp_request *req, int code, json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);

	send_text(req, code, "application/json", s, strlen(s));
	free(s);
	json_decref(j);
}

static json_t *
status_json(
    int code, const char *reason, const char *message, const struct resource *res, const char *name)
{
	json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status",
	    "apiVersion", "v1", "metadata", "status", "Failure", "message", message, "reason",
	    reason, "code", code);

	if (res != NULL || name != NULL) {
		json_t *d = json_object();
		if (name != NULL && name[0] != '\0')
			json_object_set_new(d, "name", json_string(name));
		if (res != NULL) {
			json_object_set_new(d, "group", json_string(res->group));
			json_object_set_new(d, "kind", json_string(res->plural));
		}
		json_object_set_new(st, "details", d);
	}
	return st;
}

static void
send_status(struct evhttp_request *req, int code, const char *reason, const char *message,
    const struct resource *res, const char *name)
{
	send_json(req, code, status_json(code, reason, message, res, name));
}

static void
send_err(struct evhttp_request *req, const struct api_err *err, const struct resource *res,
    const char *name)
{
	send_status(req, err->code, err->reason, err->message, res, name);
}

static void
send_not_found(struct evhttp_request *req)
{
	send_status(
	    req, 404, "NotFound", "the server could not find the requested resource", NULL, NULL);
}

/* --- watches --------------------------------------------------------------------------- */

static void
watch_unlink_free(struct watch *w)
{
	struct server *srv = w->srv;

	if (w->prev != NULL)
		w->prev->next = w->next;
	else if (srv->watches == w)
		srv->watches = w->next;
	if (w->next != NULL)
		w->next->prev = w->prev;
	if (w->res != NULL) {
		if (w->rprev != NULL)
			w->rprev->rnext = w->rnext;
		else if (w->res->watches == w)
			w->res->watches = w->rnext;
		if (w->rnext != NULL)
			w->rnext->rprev = w->rprev;
	}
	srv->nwatches--;
	if (w->timeout_ev != NULL)
		event_free(w->timeout_ev);
	if (w->kill_ev != NULL)
		event_free(w->kill_ev);
	selector_free(w->labels);
	selector_free(w->fields);
	free(w->ns);
	free(w);
}

/* The client went away (or the connection is being freed). */
static void
watch_closecb(struct evhttp_connection *evcon, void *arg)
{
	struct watch *w = arg;

	log_debug("watch on %s: client closed", w->res->id);
	/* A failed incoming connection detaches the unfinished request: it is ours to free. */
	if (evhttp_request_get_connection(w->req) == NULL)
		evhttp_request_free(w->req);
	watch_unlink_free(w);
}

/* End the stream cleanly (timeout, fault injection, 410). */
static void
watch_end(struct watch *w)
{
	evhttp_connection_set_closecb(w->evcon, NULL, NULL);
	evhttp_send_reply_end(w->req);
	watch_unlink_free(w);
}

/* Drop a watcher that does not read: free its connection. */
static void
watch_kill_cb(evutil_socket_t fd, short what, void *arg)
{
	struct watch *w = arg;
	struct evhttp_connection *evcon = w->evcon;

	log_warn("watch on %s: client too slow, closing its connection", w->res->id);
	evhttp_connection_set_closecb(evcon, NULL, NULL);
	watch_unlink_free(w);
	evhttp_connection_free(evcon);
}

static void
watch_send(struct watch *w, const char *line, size_t len)
{
	struct evbuffer *b;
	struct bufferevent *bev;

	if (w->dying || w->stalled)
		return;
	b = evbuffer_new();
	evbuffer_add(b, line, len);
	evhttp_send_reply_chunk(w->req, b);
	evbuffer_free(b);
	bev = evhttp_connection_get_bufferevent(w->evcon);
	if (bev != NULL &&
	    evbuffer_get_length(bufferevent_get_output(bev)) > w->srv->cfg.max_watch_buffer) {
		struct timeval now = {0, 0};
		w->dying = true;
		w->kill_ev = evtimer_new(w->srv->base, watch_kill_cb, w);
		evtimer_add(w->kill_ev, &now);
	}
}

static void
watch_send_obj(struct watch *w, const char *type, json_t *obj)
{
	char *s = json_dumps(obj, JSON_COMPACT);
	size_t n = strlen(s) + strlen(type) + 32;
	char *line = malloc(n);
	int len;

	if (line == NULL)
		abort();
	len = snprintf(line, n, "{\"type\":\"%s\",\"object\":%s}\n", type, s);
	watch_send(w, line, (size_t)len);
	free(line);
	free(s);
}

static bool
watch_ns_match(const struct watch *w, const char *key)
{
	size_t n;

	if (w->ns == NULL)
		return true;
	n = strlen(w->ns);
	return strncmp(key, w->ns, n) == 0 && key[n] == '/';
}

static bool
watch_match(const struct watch *w, json_t *obj)
{
	return obj != NULL && selector_match(w->labels, obj) && selector_match(w->fields, obj);
}

/* Deliver one event to one watcher, translating selector transitions. */
static void
watch_deliver(struct watch *w, struct event *ev)
{
	bool now, before;

	if (w->dying || !watch_ns_match(w, ev->key))
		return;
	now = watch_match(w, ev->obj);
	before = ev->type != EVENT_ADDED && watch_match(w, ev->prev);
	if (ev->type == EVENT_DELETED) {
		if (now) {
			const char *l = store_event_line(ev);
			watch_send(w, l, strlen(l));
		}
		return;
	}
	if (now && (before || ev->type == EVENT_ADDED)) {
		const char *l = store_event_line(ev);
		watch_send(w, l, strlen(l));
	} else if (now) {
		watch_send_obj(w, "ADDED", ev->obj);
	} else if (before) {
		/* Left the selector: DELETED with the last matching state at the new version. */
		json_t *o = json_deep_copy(ev->prev);
		char rv[32];
		snprintf(rv, sizeof(rv), "%llu", (unsigned long long)ev->rv);
		json_object_set_new(
		    json_object_get(o, "metadata"), "resourceVersion", json_string(rv));
		watch_send_obj(w, "DELETED", o);
		json_decref(o);
	}
}

static void
on_store_event(void *userdata, struct event *ev)
{
	struct watch *w, *next;

	(void)userdata;
	for (w = ev->res->watches; w != NULL; w = next) {
		next = w->rnext;
		watch_deliver(w, ev);
	}
}

static void
replay_cb(void *userdata, struct event *ev)
{
	watch_deliver(userdata, ev);
}

static void
watch_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	watch_end(arg);
}

static void
send_bookmark(struct server *srv, struct watch *w)
{
	char av[300], rv[32];
	json_t *o;

	if (w->res->group[0] != '\0')
		snprintf(av, sizeof(av), "%s/%s", w->res->group, w->res->version);
	else
		snprintf(av, sizeof(av), "%s", w->res->version);
	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)store_rv(srv->st));
	o = json_pack("{s:s, s:s, s:{s:s}}", "kind", w->res->kind, "apiVersion", av, "metadata",
	    "resourceVersion", rv);
	watch_send_obj(w, "BOOKMARK", o);
	json_decref(o);
}

static void
bookmark_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server *srv = arg;

	for (struct watch *w = srv->watches, *next; w != NULL; w = next) {
		next = w->next;
		if (w->bookmarks)
			send_bookmark(srv, w);
	}
}

/* --- helpers ----------------------------------------------------------------------------- */

struct route {
	const char *group; /* "" = core */
	const char *version;
	struct resource *res;
	const char *ns;	  /* NULL = none in the path */
	const char *name; /* NULL = collection */
	bool status;
	bool watch_path; /* legacy /watch/ prefix */
};

static const char *
query_get(struct evkeyvalq *q, const char *k)
{
	return evhttp_find_header(q, k);
}

static bool
query_true(struct evkeyvalq *q, const char *k)
{
	const char *v = query_get(q, k);

	return v != NULL && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0);
}

static json_t *
read_body(struct evhttp_request *req, bool allow_empty, bool *ret_bad)
{
	struct evbuffer *in = evhttp_request_get_input_buffer(req);
	size_t len = evbuffer_get_length(in);
	json_t *j;

	*ret_bad = false;
	if (len == 0) {
		if (!allow_empty)
			*ret_bad = true;
		return NULL;
	}
	j = json_loadb((const char *)evbuffer_pullup(in, -1), len, 0, NULL);
	if (j == NULL)
		*ret_bad = true;
	return j;
}

static const char *
content_type(struct evhttp_request *req)
{
	const char *ct = evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Type");

	return ct != NULL ? ct : "";
}

static bool
ct_is(const char *ct, const char *want)
{
	size_t n = strlen(want);

	return strncasecmp(ct, want, n) == 0 && (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ');
}

/* --- list / get / watch ---------------------------------------------------------------- */

static void
send_list(struct server *srv, struct evhttp_request *req, struct route *rt, struct list_result *lr)
{
	struct evbuffer *b = evbuffer_new();
	char av[300];

	if (rt->res->group[0] != '\0')
		snprintf(av, sizeof(av), "%s/%s", rt->res->group, rt->version);
	else
		snprintf(av, sizeof(av), "%s", rt->version);
	evbuffer_add_printf(b,
	    "{\"kind\":\"%sList\",\"apiVersion\":\"%s\",\"metadata\":{\"resourceVersion\":\"%llu\"",
	    rt->res->kind, av, (unsigned long long)lr->rv);
	if (lr->cont != NULL)
		evbuffer_add_printf(b, ",\"continue\":\"%s\"", lr->cont);
	evbuffer_add_printf(b, "},\"items\":[");
	for (size_t i = 0; i < lr->n; i++) {
		if (i > 0)
			evbuffer_add(b, ",", 1);
		if (lr->items[i].obj != NULL) {
			const char *s = store_object_ser(lr->items[i].obj);
			evbuffer_add(b, s, strlen(s));
		} else {
			char *s = json_dumps(lr->items[i].json, JSON_COMPACT);
			evbuffer_add(b, s, strlen(s));
			free(s);
		}
	}
	evbuffer_add(b, "]}", 2);
	evhttp_add_header(
	    evhttp_request_get_output_headers(req), "Content-Type", "application/json");
	log_request(req, 200);
	evhttp_send_reply(req, 200, "OK", b);
	evbuffer_free(b);
}

static int
parse_selectors(struct evhttp_request *req, struct evkeyvalq *q, struct selector **labels,
    struct selector **fields)
{
	*labels = NULL;
	*fields = NULL;
	if (label_selector_parse(query_get(q, "labelSelector"), labels) < 0) {
		send_status(req, 400, "BadRequest",
		    "unable to parse requirement: invalid label selector", NULL, NULL);
		return -1;
	}
	if (field_selector_parse(query_get(q, "fieldSelector"), fields) < 0) {
		*labels = selector_free(*labels);
		send_status(req, 400, "BadRequest", "invalid field selector", NULL, NULL);
		return -1;
	}
	return 0;
}

static void
handle_list(struct server *srv, struct evhttp_request *req, struct route *rt, struct evkeyvalq *q)
{
	struct selector *labels, *fields;
	struct list_result lr;
	struct api_err err;
	uint64_t limit = 0, at_rv = 0;
	const char *l = query_get(q, "limit");
	const char *rvs = query_get(q, "resourceVersion");
	const char *match = query_get(q, "resourceVersionMatch");

	srv->counts[VERB_LIST]++;
	if (l != NULL && l[0] != '\0' && parse_uint(l, 0, UINT32_MAX, &limit) < 0) {
		send_status(req, 400, "BadRequest", "invalid limit", NULL, NULL);
		return;
	}
	if (parse_selectors(req, q, &labels, &fields) < 0)
		return;
	if (rvs != NULL && rvs[0] != '\0' && parse_uint(rvs, 0, UINT64_MAX, &at_rv) < 0) {
		send_status(req, 400, "BadRequest", "invalid resourceVersion", NULL, NULL);
		selector_free(labels);
		selector_free(fields);
		return;
	}
	/* resourceVersionMatch=Exact reads the past; otherwise (NotOlderThan, or "0" = any)
	 * the latest state qualifies unless the version is still in the future. */
	if (match == NULL || strcmp(match, "Exact") != 0)
		at_rv = at_rv > store_rv(srv->st) ? at_rv : 0;
	if (store_list(srv->st, rt->res, rt->ns, labels, fields, (size_t)limit, at_rv,
		query_get(q, "continue"), &lr, &err) < 0)
		send_err(req, &err, rt->res, NULL);
	else
		send_list(srv, req, rt, &lr);
	list_result_clear(&lr);
	selector_free(labels);
	selector_free(fields);
}

static void
handle_watch(struct server *srv, struct evhttp_request *req, struct route *rt, struct evkeyvalq *q)
{
	const char *rvs = query_get(q, "resourceVersion");
	const char *ts = query_get(q, "timeoutSeconds");
	struct selector *labels, *fields;
	uint64_t rv = 0, timeout = 0;
	bool from_now = rvs == NULL || rvs[0] == '\0' || strcmp(rvs, "0") == 0;
	struct watch *w;
	struct api_err err;

	srv->counts[VERB_WATCH]++;
	if (!from_now && parse_uint(rvs, 0, UINT64_MAX, &rv) < 0) {
		send_status(req, 400, "BadRequest", "invalid resourceVersion", NULL, NULL);
		return;
	}
	if (ts != NULL && ts[0] != '\0' && parse_uint(ts, 0, UINT32_MAX, &timeout) < 0) {
		send_status(req, 400, "BadRequest", "invalid timeoutSeconds", NULL, NULL);
		return;
	}
	if (parse_selectors(req, q, &labels, &fields) < 0)
		return;
	if (rt->name != NULL) {
		/* legacy /watch/.../NAME: a field selector on the name */
		char fs[300];
		selector_free(fields);
		snprintf(fs, sizeof(fs), "metadata.name=%s", rt->name);
		field_selector_parse(fs, &fields);
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		abort();
	w->srv = srv;
	w->res = rt->res;
	w->req = req;
	w->evcon = evhttp_request_get_connection(req);
	w->ns = rt->ns != NULL && rt->res->namespaced ? strdup(rt->ns) : NULL;
	w->labels = labels;
	w->fields = fields;
	w->bookmarks = query_true(q, "allowWatchBookmarks");
	/* link first so that watch_unlink_free works on every path */
	w->next = srv->watches;
	if (w->next != NULL)
		w->next->prev = w;
	srv->watches = w;
	w->rnext = rt->res->watches;
	if (w->rnext != NULL)
		w->rnext->rprev = w;
	rt->res->watches = w;
	srv->nwatches++;

	evhttp_add_header(
	    evhttp_request_get_output_headers(req), "Content-Type", "application/json");
	log_request(req, 200);
	evhttp_send_reply_start(req, 200, "OK");
	evhttp_connection_set_closecb(w->evcon, watch_closecb, w);
	if (from_now) {
		struct list_result lr;
		if (store_list(srv->st, rt->res, w->ns, labels, fields, 0, 0, NULL, &lr, &err) ==
		    0) {
			for (size_t i = 0; i < lr.n; i++) {
				const char *s = store_object_ser(lr.items[i].obj);
				size_t n = strlen(s) + 32;
				char *line = malloc(n);
				if (line == NULL)
					abort();
				int len =
				    snprintf(line, n, "{\"type\":\"ADDED\",\"object\":%s}\n", s);
				watch_send(w, line, (size_t)len);
				free(line);
			}
		}
		list_result_clear(&lr);
	} else if (store_replay(srv->st, rt->res, rv, replay_cb, w, &err) < 0) {
		/* As the real server: an ERROR event carrying a 410 Status, then the end. */
		json_t *st = status_json(410, "Expired", err.message, NULL, NULL);
		watch_send_obj(w, "ERROR", st);
		json_decref(st);
		if (!w->dying)
			watch_end(w);
		return;
	}
	if (timeout > 0 && !w->dying) {
		struct timeval tv = {.tv_sec = (time_t)timeout, .tv_usec = 0};
		w->timeout_ev = evtimer_new(srv->base, watch_timeout_cb, w);
		evtimer_add(w->timeout_ev, &tv);
	}
}

/* --- writes ---------------------------------------------------------------------------- */

static void
reply_obj(struct evhttp_request *req, int code, json_t *obj)
{
	send_json(req, code, obj);
}

static void
handle_create(struct server *srv, struct evhttp_request *req, struct route *rt)
{
	bool bad;
	json_t *body = read_body(req, false, &bad), *obj;
	struct api_err err;

	srv->counts[VERB_CREATE]++;
	if (bad) {
		send_status(
		    req, 400, "BadRequest", "the request body is not valid JSON", rt->res, NULL);
		return;
	}
	if (store_create(srv->st, rt->res, rt->ns, body, &obj, &err) < 0)
		send_err(req, &err, rt->res,
		    json_string_value(json_object_get(json_object_get(body, "metadata"), "name")));
	else
		reply_obj(req, 201, obj);
	json_decref(body);
}

static void
handle_update(struct server *srv, struct evhttp_request *req, struct route *rt)
{
	bool bad;
	json_t *body = read_body(req, false, &bad), *obj;
	struct api_err err;

	srv->counts[VERB_UPDATE]++;
	if (bad) {
		send_status(req, 400, "BadRequest", "the request body is not valid JSON", rt->res,
		    rt->name);
		return;
	}
	if (store_update(srv->st, rt->res, rt->ns, rt->name, body, rt->status, &obj, &err) < 0)
		send_err(req, &err, rt->res, rt->name);
	else
		reply_obj(req, 200, obj);
	json_decref(body);
}

static void
handle_patch(struct server *srv, struct evhttp_request *req, struct route *rt)
{
	const char *ct = content_type(req);
	enum patch_type type;
	json_t *body, *obj;
	struct api_err err;
	bool bad;

	srv->counts[VERB_PATCH]++;
	if (ct_is(ct, "application/merge-patch+json") ||
	    ct_is(ct, "application/strategic-merge-patch+json")) {
		type = PATCH_MERGE;
	} else if (ct_is(ct, "application/json-patch+json")) {
		type = PATCH_JSON;
	} else {
		char msg[300];
		snprintf(msg, sizeof(msg),
		    "the body of the request was in an unknown format - "
		    "accepted media types include: application/json-patch+json, "
		    "application/merge-patch+json, application/strategic-merge-patch+json "
		    "(got \"%s\")",
		    ct);
		send_status(req, 415, "UnsupportedMediaType", msg, rt->res, rt->name);
		return;
	}
	body = read_body(req, false, &bad);
	if (bad) {
		send_status(req, 400, "BadRequest", "the request body is not valid JSON", rt->res,
		    rt->name);
		return;
	}
	if (store_patch(srv->st, rt->res, rt->ns, rt->name, type, body, rt->status, &obj, &err) < 0)
		send_err(req, &err, rt->res, rt->name);
	else
		reply_obj(req, 200, obj);
	json_decref(body);
}

static void
handle_delete(struct server *srv, struct evhttp_request *req, struct route *rt, struct evkeyvalq *q)
{
	bool bad;
	json_t *body = read_body(req, true, &bad), *obj;
	struct api_err err;

	srv->counts[VERB_DELETE]++;
	if (bad) {
		send_status(req, 400, "BadRequest", "the request body is not valid JSON", rt->res,
		    rt->name);
		return;
	}
	if (store_delete(srv->st, rt->res, rt->ns, rt->name, body, &obj, &err) < 0)
		send_err(req, &err, rt->res, rt->name);
	else
		reply_obj(req, 200, obj);
	json_decref(body);
}

/* --- discovery ------------------------------------------------------------------------- */

static json_t *
resource_list(struct server *srv, const char *group, const char *version)
{
	json_t *list = json_array();
	struct resource *res;
	size_t it = 0;
	char gv[300];

	while ((res = store_resource_next(srv->st, &it)) != NULL) {
		if (strcmp(res->group, group) != 0)
			continue;
		json_t *entry =
		    json_pack("{s:s, s:s, s:b, s:s, s:[s,s,s,s,s,s,s]}", "name", res->plural,
			"singularName", "", "namespaced", res->namespaced, "kind", res->kind,
			"verbs", "create", "delete", "get", "list", "patch", "update", "watch");
		if (entry != NULL && res->short_names != NULL)
			json_object_set(entry, "shortNames", res->short_names);
		json_array_append_new(list, entry);
		if (res->status_sub) {
			char sub[300];
			snprintf(sub, sizeof(sub), "%s/status", res->plural);
			json_array_append_new(
			    list, json_pack("{s:s, s:s, s:b, s:s, s:[s,s,s]}", "name", sub,
				      "singularName", "", "namespaced", res->namespaced, "kind",
				      res->kind, "verbs", "get", "patch", "update"));
		}
	}
	if (group[0] != '\0')
		snprintf(gv, sizeof(gv), "%s/%s", group, version);
	else
		snprintf(gv, sizeof(gv), "%s", version);
	return json_pack("{s:s, s:s, s:s, s:o}", "kind", "APIResourceList", "apiVersion", "v1",
	    "groupVersion", gv, "resources", list);
}

static json_t *
group_json(struct resource *res)
{
	char gv[300];

	snprintf(gv, sizeof(gv), "%s/%s", res->group, res->version);
	return json_pack("{s:s, s:[{s:s, s:s}], s:{s:s, s:s}}", "name", res->group, "versions",
	    "groupVersion", gv, "version", res->version, "preferredVersion", "groupVersion", gv,
	    "version", res->version);
}

static bool
handle_discovery(struct server *srv, struct evhttp_request *req, char **seg, size_t nseg)
{
	struct resource *res;
	size_t it = 0;

	if (nseg == 1 && strcmp(seg[0], "version") == 0) {
		send_json(req, 200,
		    json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "major", "1", "minor", "29",
			"gitVersion", "v1.29.0-vmdhcp-test", "gitCommit", "", "buildDate",
			"2024-01-01T00:00:00Z", "goVersion", "none", "platform", "linux/amd64"));
		return true;
	}
	if (nseg == 1 && strcmp(seg[0], "api") == 0) {
		send_json(req, 200,
		    json_pack("{s:s, s:[s], s:[{s:s, s:s}]}", "kind", "APIVersions", "versions",
			"v1", "serverAddressByClientCIDRs", "clientCIDR", "0.0.0.0/0",
			"serverAddress", "127.0.0.1"));
		return true;
	}
	if (nseg == 2 && strcmp(seg[0], "api") == 0 && strcmp(seg[1], "v1") == 0) {
		send_json(req, 200, resource_list(srv, "", "v1"));
		return true;
	}
	if (nseg == 1 && strcmp(seg[0], "apis") == 0) {
		json_t *groups = json_array();
		struct seen_groups {
			char *names[256];
			size_t n;
		} seen = {.n = 0};
		while ((res = store_resource_next(srv->st, &it)) != NULL) {
			bool dup = false;
			if (res->group[0] == '\0')
				continue;
			for (size_t i = 0; i < seen.n; i++)
				if (strcmp(seen.names[i], res->group) == 0)
					dup = true;
			if (dup || seen.n == ELEMENTSOF(seen.names))
				continue;
			seen.names[seen.n++] = res->group;
			json_array_append_new(groups, group_json(res));
		}
		send_json(req, 200,
		    json_pack("{s:s, s:s, s:o}", "kind", "APIGroupList", "apiVersion", "v1",
			"groups", groups));
		return true;
	}
	if (nseg == 2 && strcmp(seg[0], "apis") == 0) {
		while ((res = store_resource_next(srv->st, &it)) != NULL) {
			if (strcmp(res->group, seg[1]) == 0) {
				json_t *g = group_json(res);
				json_object_set_new(g, "kind", json_string("APIGroup"));
				json_object_set_new(g, "apiVersion", json_string("v1"));
				send_json(req, 200, g);
				return true;
			}
		}
		send_not_found(req);
		return true;
	}
	if (nseg == 3 && strcmp(seg[0], "apis") == 0) {
		send_json(req, 200, resource_list(srv, seg[1], seg[2]));
		return true;
	}
	return false;
}

/* --- fault injection ------------------------------------------------------------------- */

static void
handle_test(struct server *srv, struct evhttp_request *req, const char *what, struct evkeyvalq *q)
{
	bool bad;
	json_t *body = read_body(req, true, &bad);
	char buf[32];

	/* parameters from the query string or from a JSON body */
	const char *(*param)(const char *) = NULL;
	(void)param;
#define PARAM(k)                                                                                   \
	(query_get(q, k) != NULL                                                                   \
		? query_get(q, k)                                                                  \
		: (json_is_integer(json_object_get(body, k))                                       \
			  ? (snprintf(buf, sizeof(buf), "%lld",                                    \
				 (long long)json_integer_value(json_object_get(body, k))),         \
				buf)                                                               \
			  : json_string_value(json_object_get(body, k))))

	if (strcmp(what, "close-watches") == 0) {
		unsigned n = 0;
		while (srv->watches != NULL) {
			watch_end(srv->watches);
			n++;
		}
		send_json(req, 200, json_pack("{s:i}", "closed", n));
	} else if (strcmp(what, "stall-watches") == 0) {
		/* the open streams go silent (no events, no bookmarks) but stay open */
		unsigned n = 0;
		for (struct watch *w = srv->watches; w != NULL; w = w->next, n++)
			w->stalled = true;
		send_json(req, 200, json_pack("{s:i}", "stalled", n));
	} else if (strcmp(what, "fail") == 0) {
		uint64_t code = 500, count = 1;
		const char *c = PARAM("code");
		if (c != NULL && parse_uint(c, 400, 599, &code) < 0)
			goto bad;
		c = PARAM("count");
		if (c != NULL && parse_uint(c, 0, UINT32_MAX, &count) < 0)
			goto bad;
		srv->fail_code = (int)code;
		srv->fail_count = (unsigned)count;
		c = PARAM("method");
		snprintf(srv->fail_method, sizeof(srv->fail_method), "%s", c != NULL ? c : "");
		c = PARAM("path");
		snprintf(srv->fail_path, sizeof(srv->fail_path), "%s", c != NULL ? c : "");
		c = PARAM("message");
		snprintf(srv->fail_message, sizeof(srv->fail_message), "%s", c != NULL ? c : "");
		send_json(
		    req, 200, json_pack("{s:i, s:i}", "code", (int)code, "count", (int)count));
	} else if (strcmp(what, "delay") == 0) {
		uint64_t ms = 100, count = 1;
		const char *c = PARAM("ms");
		if (c != NULL && parse_uint(c, 0, 600000, &ms) < 0)
			goto bad;
		c = PARAM("count");
		if (c != NULL && parse_uint(c, 0, UINT32_MAX, &count) < 0)
			goto bad;
		srv->delay_ms = (unsigned)ms;
		srv->delay_count = (unsigned)count;
		send_json(req, 200, json_pack("{s:i, s:i}", "ms", (int)ms, "count", (int)count));
	} else if (strcmp(what, "flood") == 0) {
		uint64_t bytes = 0, count = 1, length = 0;
		const char *c = PARAM("bytes");
		if (c != NULL && parse_uint(c, 0, (uint64_t)1 << 50, &bytes) < 0)
			goto bad;
		c = PARAM("count");
		if (c != NULL && parse_uint(c, 0, UINT32_MAX, &count) < 0)
			goto bad;
		c = PARAM("length");
		if (c != NULL && parse_uint(c, 0, 1, &length) < 0)
			goto bad;
		if (length && bytes == 0)
			goto bad; /* an announced length needs bytes */
		srv->flood_bytes = bytes;
		srv->flood_count = (unsigned)count;
		srv->flood_length = length != 0;
		c = PARAM("path");
		snprintf(srv->flood_path, sizeof(srv->flood_path), "%s", c != NULL ? c : "");
		send_json(req, 200,
		    json_pack("{s:I, s:i}", "bytes", (json_int_t)bytes, "count", (int)count));
	} else if (strcmp(what, "compact") == 0) {
		store_compact(srv->st);
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)store_rv(srv->st));
		send_json(req, 200, json_pack("{s:s}", "compactedResourceVersion", buf));
	} else if (strcmp(what, "save") == 0) {
		int r = server_save(srv);
		if (r < 0)
			send_status(req, 500, "InternalError", strerror(-r), NULL, NULL);
		else
			send_json(req, 200, json_pack("{s:b}", "saved", srv->data_file != NULL));
	} else if (strcmp(what, "stats") == 0) {
		json_t *counts = json_object();
		for (int i = 0; i < VERB_MAX; i++)
			json_object_set_new(
			    counts, verb_names[i], json_integer((json_int_t)srv->counts[i]));
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)store_rv(srv->st));
		send_json(req, 200,
		    json_pack("{s:o, s:I, s:I, s:s, s:I, s:I, s:I, s:I}", "requests", counts,
			"total", (json_int_t)srv->requests, "writes",
			(json_int_t)store_writes(srv->st), "resourceVersion", buf, "objects",
			(json_int_t)store_object_count(srv->st), "watches",
			(json_int_t)srv->nwatches, "floodBytes", (json_int_t)srv->flood_sent,
			"floods", (json_int_t)srv->flood_starts));
	} else {
		send_not_found(req);
	}
#undef PARAM
	json_decref(body);
	return;
bad:
	send_status(req, 400, "BadRequest", "invalid fault parameters", NULL, NULL);
	json_decref(body);
}

/* --- routing --------------------------------------------------------------------------- */

static bool
is_cluster_path_sub(const char *s)
{
	return strcmp(s, "status") == 0 || strcmp(s, "finalize") == 0;
}

/* Parse /api/v1/... or /apis/G/V/... into rt. Returns false when it is not such a path. */
static bool
parse_route(struct server *srv, char **seg, size_t nseg, struct route *rt)
{
	size_t i;
	char **r;
	size_t nr;

	memset(rt, 0, sizeof(*rt));
	if (nseg >= 3 && strcmp(seg[0], "api") == 0 && strcmp(seg[1], "v1") == 0) {
		rt->group = "";
		rt->version = "v1";
		i = 2;
	} else if (nseg >= 4 && strcmp(seg[0], "apis") == 0) {
		rt->group = seg[1];
		rt->version = seg[2];
		i = 3;
	} else {
		return false;
	}
	r = seg + i;
	nr = nseg - i;
	if (nr > 0 && strcmp(r[0], "watch") == 0) {
		rt->watch_path = true;
		r++;
		nr--;
	}
	if (nr == 0)
		return false;
	if (strcmp(r[0], "namespaces") == 0 && nr >= 3 && !(nr == 3 && is_cluster_path_sub(r[2]))) {
		rt->ns = r[1];
		r += 2;
		nr -= 2;
	}
	if (nr > 3)
		return false;
	rt->res = store_resource(srv->st, rt->group, r[0], true);
	if (nr >= 2)
		rt->name = r[1];
	if (nr == 3) {
		if (strcmp(r[2], "status") != 0)
			return false;
		rt->status = true;
	}
	/* scope checks */
	if (rt->res->namespaced && rt->name != NULL && rt->ns == NULL)
		return false;
	if (!rt->res->namespaced && rt->ns != NULL)
		return false;
	/* any version of a group is served from the same storage (no conversion) */
	return true;
}

static void
dispatch(struct server *srv, struct evhttp_request *req)
{
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = evhttp_uri_get_path(uri), *query = evhttp_uri_get_query(uri);
	struct evkeyvalq q;
	char *copy, *seg[16], *save = NULL;
	size_t nseg = 0;
	struct route rt;
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);

	TAILQ_INIT(&q);
	if (query != NULL && evhttp_parse_query_str(query, &q) < 0) {
		send_status(req, 400, "BadRequest", "invalid query string", NULL, NULL);
		return;
	}
	copy = strdup(path != NULL ? path : "/");
	for (char *s = strtok_r(copy, "/", &save); s != NULL && nseg < ELEMENTSOF(seg);
	     s = strtok_r(NULL, "/", &save))
		seg[nseg++] = s;

	if (cmd == EVHTTP_REQ_GET && handle_discovery(srv, req, seg, nseg))
		goto out;
	if (!parse_route(srv, seg, nseg, &rt)) {
		srv->counts[VERB_OTHER]++;
		send_not_found(req);
		goto out;
	}
	if (rt.watch_path) {
		if (cmd == EVHTTP_REQ_GET)
			handle_watch(srv, req, &rt, &q);
		else
			send_status(
			    req, 405, "MethodNotAllowed", "method not allowed", rt.res, NULL);
		goto out;
	}
	if (rt.name == NULL) {
		/* collection */
		if (rt.status) {
			send_not_found(req);
		} else if (cmd == EVHTTP_REQ_GET) {
			if (query_true(&q, "watch"))
				handle_watch(srv, req, &rt, &q);
			else
				handle_list(srv, req, &rt, &q);
		} else if (cmd == EVHTTP_REQ_POST) {
			if (rt.res->namespaced && rt.ns == NULL)
				send_not_found(req);
			else
				handle_create(srv, req, &rt);
		} else {
			send_status(
			    req, 405, "MethodNotAllowed", "method not allowed", rt.res, NULL);
		}
		goto out;
	}
	switch (cmd) {
	case EVHTTP_REQ_GET: {
		struct object *o;
		struct api_err err;
		srv->counts[VERB_GET]++;
		if (query_true(&q, "watch")) {
			handle_watch(srv, req, &rt, &q);
			break;
		}
		if (store_get(srv->st, rt.res, rt.ns, rt.name, &o, &err) < 0) {
			send_err(req, &err, rt.res, rt.name);
		} else {
			const char *s = store_object_ser(o);
			send_text(req, 200, "application/json", s, strlen(s));
		}
		break;
	}
	case EVHTTP_REQ_PUT:
		handle_update(srv, req, &rt);
		break;
	case EVHTTP_REQ_PATCH:
		handle_patch(srv, req, &rt);
		break;
	case EVHTTP_REQ_DELETE:
		if (rt.status)
			send_status(
			    req, 405, "MethodNotAllowed", "method not allowed", rt.res, rt.name);
		else
			handle_delete(srv, req, &rt, &q);
		break;
	default:
		send_status(req, 405, "MethodNotAllowed", "method not allowed", rt.res, rt.name);
		break;
	}
out:
	evhttp_clear_headers(&q);
	free(copy);
}

/* Answer with an injected failure. */
static void
send_fault(struct server *srv, struct evhttp_request *req)
{
	static const struct {
		int code;
		const char *reason;
		const char *message;
	} faults[] = {
	    {429, "TooManyRequests", "Too many requests, please try again later."},
	    {500, "InternalError", "Internal error occurred: injected fault"},
	    {503, "ServiceUnavailable", "The server is currently unable to handle the request"},
	    {504, "Timeout", "The server was unable to return a response in time"},
	    {409, "Conflict", "Operation cannot be fulfilled: injected conflict"},
	    {410, "Expired", "The resourceVersion is too old: injected fault"},
	    {404, "NotFound", "injected not found"},
	    {401, "Unauthorized", "Unauthorized"},
	    {403, "Forbidden", "forbidden: injected fault"},
	};
	const char *reason = "InternalError", *message = "injected fault";

	for (size_t i = 0; i < ELEMENTSOF(faults); i++)
		if (faults[i].code == srv->fail_code) {
			reason = faults[i].reason;
			message = faults[i].message;
		}
	if (srv->fail_message[0] != '\0')
		message = srv->fail_message;
	if (srv->fail_code == 429)
		evhttp_add_header(evhttp_request_get_output_headers(req), "Retry-After", "1");
	send_status(req, srv->fail_code, reason, message, NULL, NULL);
}

/* The request is one the injected failure is for (its method and path prefix, when set). */
static bool
fault_matches(struct server *srv, struct evhttp_request *req)
{
	const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));

	if (srv->fail_method[0] != '\0' && strcasecmp(srv->fail_method, method_name(req)) != 0)
		return false;
	return srv->fail_path[0] == '\0' ||
	       (path != NULL && strncmp(path, srv->fail_path, strlen(srv->fail_path)) == 0);
}

/* --- flood: an answer too large to hold, sent as fast as the client reads it -------------- */

#define FLOOD_CHUNK 65536

static void
flood_free(struct flood *f)
{
	struct server *srv = f->srv;

	if (f->prev != NULL)
		f->prev->next = f->next;
	else
		srv->floods = f->next;
	if (f->next != NULL)
		f->next->prev = f->prev;
	free(f);
}

static void
flood_closecb(struct evhttp_connection *evcon, void *arg)
{
	struct flood *f = arg;

	log_debug("flood: client closed");
	if (evhttp_request_get_connection(f->req) == NULL)
		evhttp_request_free(f->req);
	flood_free(f);
}

static void flood_next(struct evhttp_connection *evcon, void *arg);

/* The next chunk once the previous one is written: at most FLOOD_CHUNK waits in memory. */
static void
flood_send(struct flood *f)
{
	static char filler[FLOOD_CHUNK];
	struct evbuffer *b = evbuffer_new();
	size_t n = FLOOD_CHUNK;

	if (b == NULL)
		abort();
	if (filler[0] != 'x')
		memset(filler, 'x', sizeof(filler));
	if (f->left != UINT64_MAX && f->left < n)
		n = (size_t)f->left;
	evbuffer_add(b, filler, n);
	if (f->left != UINT64_MAX)
		f->left -= n;
	f->srv->flood_sent += n;
	evhttp_send_reply_chunk_with_cb(f->req, b, flood_next, f);
	evbuffer_free(b);
}

static void
flood_next(struct evhttp_connection *evcon, void *arg)
{
	struct flood *f = arg;

	if (f->left == 0) {
		evhttp_connection_set_closecb(f->evcon, NULL, NULL);
		evhttp_send_reply_end(f->req);
		flood_free(f);
		return;
	}
	flood_send(f);
}

/*
 * A 200 answer whose body starts as a list (or, for a watch, one event) and goes on with a
 * string that never closes: endless, or flood_bytes long in all (then it just stops: the
 * answer is not valid JSON, a client must refuse it before it matters).
 */
static void
flood_start(struct server *srv, struct evhttp_request *req)
{
	static const char list_head[] =
	    "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"metadata\":{\"resourceVersion\":\"1\"},"
	    "\"items\":[{\"metadata\":{\"name\":\"flood\"},\"data\":\"";
	static const char event_head[] = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{"
					 "\"name\":\"flood\"},\"data\":\"";
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	const char *query = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
	struct flood *f = calloc(1, sizeof(*f));
	const char *head;
	struct evbuffer *b;
	size_t hl;

	if (f == NULL)
		abort();
	f->srv = srv;
	f->req = req;
	srv->flood_starts++;
	f->evcon = evhttp_request_get_connection(req);
	f->watch = query != NULL && strstr(query, "watch=true") != NULL;
	head = f->watch ? event_head : list_head;
	hl = strlen(head);
	f->left =
	    srv->flood_bytes ? (srv->flood_bytes > hl ? srv->flood_bytes - hl : 0) : UINT64_MAX;
	f->next = srv->floods;
	if (f->next != NULL)
		f->next->prev = f;
	srv->floods = f;
	evhttp_add_header(h, "Content-Type", "application/json");
	if (srv->flood_length) {
		char len[32];

		snprintf(len, sizeof(len), "%llu", (unsigned long long)(hl + f->left));
		evhttp_add_header(h, "Content-Length", len);
	}
	evhttp_connection_set_closecb(f->evcon, flood_closecb, f);
	log_info("flood: %s %s: a %s answer of %s", method_name(req), evhttp_request_get_uri(req),
	    f->watch ? "watch" : "list", srv->flood_bytes ? "bounded length" : "endless length");
	evhttp_send_reply_start(req, 200, "OK");
	b = evbuffer_new();
	if (b == NULL)
		abort();
	evbuffer_add(b, head, hl);
	srv->flood_sent += hl;
	evhttp_send_reply_chunk_with_cb(req, b, flood_next, f);
	evbuffer_free(b);
}

static bool
flood_matches(struct server *srv, struct evhttp_request *req)
{
	const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));

	if (evhttp_request_get_command(req) != EVHTTP_REQ_GET)
		return false;
	return srv->flood_path[0] == '\0' ||
	       (path != NULL && strncmp(path, srv->flood_path, strlen(srv->flood_path)) == 0);
}

static void
process(struct server *srv, struct evhttp_request *req)
{
	if (srv->fail_count > 0 && fault_matches(srv, req)) {
		srv->fail_count--;
		send_fault(srv, req);
		return;
	}
	if (srv->flood_count > 0 && flood_matches(srv, req)) {
		srv->flood_count--;
		flood_start(srv, req);
		return;
	}
	dispatch(srv, req);
}

static void
delayed_free(struct delayed *d)
{
	struct server *srv = d->srv;

	if (d->prev != NULL)
		d->prev->next = d->next;
	else
		srv->delayed = d->next;
	if (d->next != NULL)
		d->next->prev = d->prev;
	event_free(d->ev);
	free(d);
}

static void
delayed_cb(evutil_socket_t fd, short what, void *arg)
{
	struct delayed *d = arg;
	struct server *srv = d->srv;
	struct evhttp_request *req = d->req;

	evhttp_connection_set_closecb(d->evcon, NULL, NULL);
	delayed_free(d);
	process(srv, req);
}

static void
delayed_closecb(struct evhttp_connection *evcon, void *arg)
{
	struct delayed *d = arg;

	if (evhttp_request_get_connection(d->req) == NULL)
		evhttp_request_free(d->req);
	delayed_free(d);
}

static bool
is_health(const char *path)
{
	return strcmp(path, "/healthz") == 0 || strcmp(path, "/readyz") == 0 ||
	       strcmp(path, "/livez") == 0;
}

static void
request_cb(struct evhttp_request *req, void *arg)
{
	struct server *srv = arg;
	const struct evhttp_uri *uri = evhttp_request_get_evhttp_uri(req);
	const char *path = evhttp_uri_get_path(uri);
	const char *auth =
	    evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
	char want[512];

	if (path == NULL)
		path = "/";
	if (is_health(path)) {
		send_text(req, 200, "text/plain", "ok", 2);
		return;
	}
	snprintf(want, sizeof(want), "Bearer %s", srv->token);
	if (auth == NULL || strcmp(auth, want) != 0) {
		send_status(req, 401, "Unauthorized", "Unauthorized", NULL, NULL);
		return;
	}
	if (strncmp(path, "/_test/", 7) == 0) {
		struct evkeyvalq q;
		const char *query = evhttp_uri_get_query(uri);
		TAILQ_INIT(&q);
		if (query != NULL)
			evhttp_parse_query_str(query, &q);
		if (evhttp_request_get_command(req) == EVHTTP_REQ_POST ||
		    (evhttp_request_get_command(req) == EVHTTP_REQ_GET &&
			strcmp(path + 7, "stats") == 0))
			handle_test(srv, req, path + 7, &q);
		else
			send_status(req, 405, "MethodNotAllowed", "use POST", NULL, NULL);
		evhttp_clear_headers(&q);
		return;
	}
	srv->requests++;
	if (srv->delay_count > 0) {
		struct delayed *d = calloc(1, sizeof(*d));
		struct timeval tv = {.tv_sec = srv->delay_ms / 1000,
		    .tv_usec = (suseconds_t)(srv->delay_ms % 1000) * 1000};
		if (d == NULL)
			abort();
		srv->delay_count--;
		d->srv = srv;
		d->req = req;
		d->evcon = evhttp_request_get_connection(req);
		d->ev = evtimer_new(srv->base, delayed_cb, d);
		d->next = srv->delayed;
		if (d->next != NULL)
			d->next->prev = d;
		srv->delayed = d;
		evhttp_connection_set_closecb(d->evcon, delayed_closecb, d);
		evtimer_add(d->ev, &tv);
		return;
	}
	process(srv, req);
}

static struct bufferevent *
bevcb(struct event_base *base, void *arg)
{
	struct server *srv = arg;
	SSL *ssl = SSL_new(srv->ssl);
	struct bufferevent *bev;

	if (ssl == NULL)
		return NULL;
	bev = bufferevent_openssl_socket_new(
	    base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	if (bev != NULL)
		bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

/* --- lifecycle ------------------------------------------------------------------------- */

int
server_new(
    struct event_base *base, SSL_CTX *ssl, const struct server_config *cfg, struct server **ret)
{
	struct server *srv = calloc(1, sizeof(*srv));
	struct timeval tv;

	if (srv == NULL)
		return -ENOMEM;
	srv->base = base;
	srv->ssl = ssl;
	srv->cfg = *cfg;
	srv->token = strdup(cfg->token);
	srv->data_file = cfg->data_file != NULL ? strdup(cfg->data_file) : NULL;
	srv->st = store_new(cfg->history, cfg->history_bytes);
	store_set_event_cb(srv->st, on_store_event, srv);
	if (srv->data_file != NULL && access(srv->data_file, F_OK) == 0) {
		json_error_t jerr;
		json_t *data = json_load_file(srv->data_file, 0, &jerr);
		int r = data != NULL ? store_load(srv->st, data) : -EBADMSG;
		json_decref(data);
		if (r < 0) {
			log_error("cannot load %s: %s", srv->data_file,
			    data == NULL ? jerr.text : strerror(-r));
			server_free(srv);
			return r;
		}
		log_info("loaded %zu objects at resourceVersion %llu from %s",
		    store_object_count(srv->st), (unsigned long long)store_rv(srv->st),
		    srv->data_file);
	}
	srv->http = evhttp_new(base);
	evhttp_set_bevcb(srv->http, bevcb, srv);
	evhttp_set_allowed_methods(srv->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST | EVHTTP_REQ_PUT |
						  EVHTTP_REQ_PATCH | EVHTTP_REQ_DELETE |
						  EVHTTP_REQ_HEAD | EVHTTP_REQ_OPTIONS);
	evhttp_set_max_body_size(srv->http, 64 << 20);
	/* Watches are long-lived; idle keep-alive connections may be too. */
	evhttp_set_timeout(srv->http, 24 * 3600);
	evhttp_set_gencb(srv->http, request_cb, srv);
	if (cfg->bookmark_secs > 0) {
		tv.tv_sec = cfg->bookmark_secs;
		tv.tv_usec = 0;
		srv->bookmark_ev = event_new(base, -1, EV_PERSIST, bookmark_cb, srv);
		event_add(srv->bookmark_ev, &tv);
	}
	*ret = srv;
	return 0;
}

int
server_listen(struct server *srv, const char *host, int port)
{
	struct evhttp_bound_socket *bs;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	bs = evhttp_bind_socket_with_handle(srv->http, host, (ev_uint16_t)port);
	if (bs == NULL)
		return -EADDRINUSE;
	if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	/* Accepted sockets inherit TCP_NODELAY: small TLS records must not wait for ACKs. */
	setsockopt(
	    evhttp_bound_socket_get_fd(bs), IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
	if (ss.ss_family == AF_INET)
		srv->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
	else
		srv->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return srv->port;
}

int
server_save(struct server *srv)
{
	json_t *d;
	char *s;
	int r;

	if (srv->data_file == NULL)
		return 0;
	d = store_dump(srv->st);
	s = json_dumps(d, JSON_COMPACT);
	json_decref(d);
	if (s == NULL)
		return -ENOMEM;
	r = write_file_atomic(srv->data_file, s, strlen(s), 0600);
	free(s);
	if (r == 0)
		log_debug("saved %zu objects to %s", store_object_count(srv->st), srv->data_file);
	return r;
}

struct server *
server_free(struct server *srv)
{
	if (srv == NULL)
		return NULL;
	while (srv->watches != NULL)
		watch_end(srv->watches);
	while (srv->floods != NULL) {
		evhttp_connection_set_closecb(srv->floods->evcon, NULL, NULL);
		flood_free(srv->floods); /* their connections go with the evhttp */
	}
	while (srv->delayed != NULL) {
		struct delayed *d = srv->delayed;
		evhttp_connection_set_closecb(d->evcon, NULL, NULL);
		delayed_free(d);
	}
	if (srv->bookmark_ev != NULL)
		event_free(srv->bookmark_ev);
	if (srv->http != NULL)
		evhttp_free(srv->http);
	store_free(srv->st);
	free(srv->token);
	free(srv->data_file);
	free(srv);
	return NULL;
}
