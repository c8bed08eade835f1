/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Watch streams: the API server sends one JSON object per line ({"type":..., "object":...});
 * chunks may split a line anywhere, or carry many lines. The framer reassembles lines, scans
 * each with lib/jscan.h for its type and the span of its object, and counts what it drops.
 * The object is then decoded by json_loadb (kube_watch_start) or handed as text to a typed
 * codec (kube_watch_start_raw: the informer's path).
 *
 * Liveness. Silence is normal on a watch: the API server's watch cache sends bookmarks
 * (about once a minute, and 2 s before the watch's deadline) only after it has dispatched an
 * event of that resource since it started (k8s.io/apiserver storage/cacher; seen on 1.20 and
 * 1.25), so a watch of a kind that never changes (Node, NAD, VirtualMachine) carries no byte
 * until the server ends it at its timeoutSeconds. A short no-byte timer would tear such healthy
 * watches down over and over. As client-go does, a stream is judged by two things instead:
 *   - a dead peer or path (host gone, connection reset by a middlebox, NAT entry dropped):
 *     TCP keep-alive and TCP_USER_TIMEOUT on the connection (kube/http-keepalive.c) fail the
 *     stream within about a minute, silent or not;
 *   - a live connection on which the server stopped serving the watch (a stuck server or
 *     proxy): a watch asked with timeoutSeconds must be ended by the server then; one still
 *     open at the deadline below (timeoutSeconds + the connect timeout + a margin of a tenth
 *     of the timeout, 2..30 s) is stopped and ends with -ETIMEDOUT ("stalled").
 * A watch the server ends at its timeoutSeconds ends with 0: the owner watches again from its
 * last resourceVersion (no list).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "lib/clock.h"
#include "lib/jscan.h"
#include "lib/util.h"

static const char *const watch_type_names[] = {
    [KUBE_WATCH_ADDED] = "ADDED",
    [KUBE_WATCH_MODIFIED] = "MODIFIED",
    [KUBE_WATCH_DELETED] = "DELETED",
    [KUBE_WATCH_BOOKMARK] = "BOOKMARK",
    [KUBE_WATCH_ERROR] = "ERROR",
};

const char *
kube_watch_type_name(enum kube_watch_type t)
{
	if ((size_t)t >= ELEMENTSOF(watch_type_names))
		return "?";
	return watch_type_names[t];
}

int
kube_watch_scan_line(const char *line, size_t len, enum kube_watch_type *ret_type,
    const char **ret_object, size_t *ret_len)
{
	struct jscan_iter it;
	struct jscan_span k, v, type = {0}, obj = {0};
	char name[16];
	int r;

	if (jscan_open(&it, line, len, true) < 0)
		return -EBADMSG;
	while ((r = jscan_next(&it, &k, &v)) == 1) {
		if (jscan_key_is(k, "type"))
			type = v; /* the last one, as jansson keeps */
		else if (jscan_key_is(k, "object"))
			obj = v;
	}
	if (r < 0 || jscan_type(type) != '"' || jscan_type(obj) != '{' ||
	    jscan_string(type, name, sizeof(name), NULL) < 0)
		return -EBADMSG;
	for (size_t i = 0; i < ELEMENTSOF(watch_type_names); i++) {
		if (strcmp(name, watch_type_names[i]) == 0) {
			*ret_type = (enum kube_watch_type)i;
			*ret_object = obj.p;
			*ret_len = obj.len;
			return 0;
		}
	}
	return -EBADMSG;
}

int
kube_watch_decode_line(
    const char *line, size_t len, enum kube_watch_type *ret_type, json_t **ret_object)
{
	const char *obj;
	size_t n;

	if (kube_watch_scan_line(line, len, ret_type, &obj, &n) < 0)
		return -EBADMSG;
	*ret_object = json_loadb(obj, n, 0, NULL);
	return *ret_object ? 0 : -EBADMSG;
}

void
kube_watch_framer_init(struct kube_watch_framer *f, size_t max_line)
{
	memset(f, 0, sizeof(*f));
	f->max_line = max_line ? max_line : (size_t)kube_answer_limit()->bytes;
}

void
kube_watch_framer_release(struct kube_watch_framer *f)
{
	free(f->buf);
	f->buf = NULL;
	f->len = f->cap = 0;
}

/* Where complete lines go: decoded (fn) or scanned (raw). */
struct emit {
	kube_framer_event_fn fn;
	kube_framer_raw_fn raw;
	void *userdata;
};

static void
emit_line(struct kube_watch_framer *f, const char *line, size_t len, const struct emit *e)
{
	enum kube_watch_type type;
	const char *text;
	size_t n;
	json_t *obj;

	while (len > 0 && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (len == 0)
		return; /* blank keep-alive line */
	f->lines++;
	if (e->raw) {
		if (kube_watch_scan_line(line, len, &type, &text, &n) < 0) {
			f->dropped++;
			return;
		}
		e->raw(e->userdata, type, text, n);
		return;
	}
	if (kube_watch_decode_line(line, len, &type, &obj) < 0) {
		f->dropped++;
		return;
	}
	e->fn(e->userdata, type, obj);
	json_decref(obj);
}

static int
buffer_append(struct kube_watch_framer *f, const char *data, size_t n)
{
	if (f->len + n > f->cap) {
		size_t cap = f->cap ? f->cap : 16384;
		char *p;

		while (cap < f->len + n)
			cap *= 2;
		if (cap > f->max_line && f->len + n <= f->max_line)
			cap = f->max_line; /* no doubling past the longest line kept */
		p = realloc(f->buf, cap);
		if (!p)
			return -ENOMEM;
		f->buf = p;
		f->cap = cap;
	}
	memcpy(f->buf + f->len, data, n);
	f->len += n;
	return 0;
}

static int
feed(struct kube_watch_framer *f, const char *data, size_t len, const struct emit *e)
{
	while (len > 0) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl ? (size_t)(nl - data) : len;

		if (f->skipping) {
			if (nl)
				f->skipping = false;
		} else if (f->len + n > f->max_line) {
			f->dropped++;
			f->overlong++;
			f->long_seen = f->len + n;
			f->len = 0;
			f->skipping = !nl;
			/* the part held is given back at once (the watch ends anyway) */
			free(f->buf);
			f->buf = NULL;
			f->cap = 0;
		} else if (!nl) {
			if (buffer_append(f, data, n) < 0)
				return -ENOMEM;
		} else if (f->len == 0) {
			emit_line(f, data, n, e); /* whole line in this chunk */
		} else {
			if (buffer_append(f, data, n) < 0)
				return -ENOMEM;
			emit_line(f, f->buf, f->len, e);
			f->len = 0;
		}
		if (!nl)
			break;
		data = nl + 1;
		len -= n + 1;
	}
	/* Give back a big buffer once a huge line (e.g. a big IPPool status) is done. */
	if (f->len == 0 && f->cap > (64u << 10)) {
		free(f->buf);
		f->buf = NULL;
		f->cap = 0;
	}
	return 0;
}

int
kube_watch_framer_feed(struct kube_watch_framer *f, const char *data, size_t len,
    kube_framer_event_fn fn, void *userdata)
{
	return feed(f, data, len, &(struct emit){.fn = fn, .userdata = userdata});
}

int
kube_watch_framer_feed_raw(struct kube_watch_framer *f, const char *data, size_t len,
    kube_framer_raw_fn fn, void *userdata)
{
	return feed(f, data, len, &(struct emit){.raw = fn, .userdata = userdata});
}

/* --- one watch stream ------------------------------------------------------------------------ */

long
kube_watch_deadline_ms(unsigned timeout_seconds, long connect_ms)
{
	long t = (long)timeout_seconds * 1000, margin = t / 10;

	if (margin < 2000)
		margin = 2000;
	if (margin > 30000)
		margin = 30000;
	/* the server's clock starts when it has the request: after the connection is up */
	return t + (connect_ms > 0 ? connect_ms : 0) + margin;
}

struct kube_watch {
	struct kube_http_call *call;
	struct kube_watch_framer framer;
	const char *resource;	      /* the plural name (static), for messages */
	kube_watch_event_fn on_event; /* or: */
	kube_framer_raw_fn on_raw;
	kube_watch_end_fn on_end;
	void *userdata;
	bool stopped;  /* freed by the user from a callback: drop the rest */
	bool in_event; /* inside on_event */
	bool free_later;
	bool gone;     /* an ERROR event said 410 */
	int error_err; /* errno of an ERROR event */
	char error_message[512];
	struct event *deadline; /* not ended by the server by then: the stream is stalled */
	unsigned timeout_s;	/* the timeoutSeconds asked */
	long deadline_ms;	/* from the start */
	uint64_t last_byte;	/* clock_now_usec() of the last byte, 0 before */
};

static void
watch_destroy(struct kube_watch *w)
{
	if (w->deadline)
		event_free(w->deadline);
	kube_watch_framer_release(&w->framer);
	free(w);
}

/* The server did not end the watch at its timeoutSeconds (a server or proxy holding a stream
 * it no longer serves, a server stalled mid-line): stop it and report -ETIMEDOUT so the owner
 * watches again from its last resourceVersion. */
static void
watch_deadline_fired(evutil_socket_t fd, short what, void *arg)
{
	struct kube_watch *w = arg;
	uint64_t now = clock_now_usec();
	char last[64];

	if (w->stopped || !w->call)
		return;
	kube_http_cancel(w->call);
	w->call = NULL;
	if (w->last_byte)
		snprintf(last, sizeof(last), "last byte %llu s ago",
		    (unsigned long long)((now - w->last_byte) / USEC_PER_SEC));
	else
		snprintf(last, sizeof(last), "no byte of the answer");
	snprintf(w->error_message, sizeof(w->error_message),
	    "watch of %s: still open %ld ms after it started, its timeoutSeconds is %u, %s "
	    "(stalled stream)",
	    w->resource, w->deadline_ms, w->timeout_s, last);
	w->on_end(w->userdata, -ETIMEDOUT, w->error_message); /* may free w */
}

/* An ERROR event's Status (object borrowed): what the stream ends with. */
static void
watch_error(struct kube_watch *w, const json_t *object)
{
	long code = (long)json_integer_value(json_object_get(object, "code"));
	const char *reason = json_string_value(json_object_get(object, "reason"));
	const char *msg = json_string_value(json_object_get(object, "message"));

	w->error_err = kube_status_to_errno(code ? code : 500, reason);
	snprintf(w->error_message, sizeof(w->error_message), "%s", msg ? msg : "watch error");
}

static void
framed_event(void *userdata, enum kube_watch_type type, json_t *object)
{
	struct kube_watch *w = userdata;

	if (w->stopped)
		return;
	if (type == KUBE_WATCH_ERROR)
		watch_error(w, object);
	w->in_event = true;
	w->on_event(w->userdata, type, object);
	w->in_event = false;
}

static void
framed_raw(void *userdata, enum kube_watch_type type, const char *text, size_t len)
{
	struct kube_watch *w = userdata;

	if (w->stopped)
		return;
	if (type == KUBE_WATCH_ERROR) {
		json_t *status = json_loadb(text, len, 0, NULL);

		watch_error(w, status);
		json_decref(status);
	}
	w->in_event = true;
	w->on_raw(w->userdata, type, text, len);
	w->in_event = false;
}

/* One event larger than the cap: the stream ends with -EFBIG (the owner lists again: an
 * event skipped silently would leave its cache wrong until the next relist). */
static void
watch_too_large(struct kube_watch *w)
{
	char seen[32], cap[32];

	kube_answer_refused_count();
	kube_format_size(w->framer.long_seen, seen, sizeof(seen));
	kube_format_size(w->framer.max_line, cap, sizeof(cap));
	w->error_err = -EFBIG;
	snprintf(w->error_message, sizeof(w->error_message),
	    "watch of %s: event too large: more than %s, the cap is %s (%s; "
	    "VMDHCP_KUBE_MAX_ANSWER overrides it)",
	    w->resource, seen, cap, kube_answer_limit()->source);
}

static bool
watch_data(void *userdata, const char *data, size_t len)
{
	struct kube_watch *w = userdata;
	uint64_t overlong = w->framer.overlong;

	w->last_byte = clock_now_usec();
	if ((w->on_raw ? kube_watch_framer_feed_raw(&w->framer, data, len, framed_raw, w)
		       : kube_watch_framer_feed(&w->framer, data, len, framed_event, w)) < 0)
		return false;
	if (w->free_later) {
		watch_destroy(w);
		return false; /* the call was cancelled already */
	}
	if (w->framer.overlong != overlong && w->error_err == 0)
		watch_too_large(w);
	/* An ERROR event ends the stream: the server closes it anyway. */
	return w->error_err == 0;
}

static void
watch_done(
    void *userdata, int error, long status, const char *body, size_t len, const char *message)
{
	struct kube_watch *w = userdata;
	struct kube_result res;
	json_t *obj = NULL;
	int err = 0;
	const char *msg = "";

	w->call = NULL;
	if (w->deadline)
		evtimer_del(w->deadline);
	if (w->error_err) {
		err = w->error_err;
		msg = w->error_message;
	} else if (error < 0 && error != -ECANCELED) {
		err = error;
		msg = message;
	} else if (error == 0 && (status < 200 || status >= 300)) {
		kube_result_from_http(&res, error, status, body, len, message, &obj);
		err = res.error;
		snprintf(w->error_message, sizeof(w->error_message), "watch: HTTP %ld %s", status,
		    res.message);
		msg = w->error_message;
	}
	w->on_end(w->userdata, err, msg);
	json_decref(obj);
}

static int
watch_start(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const struct kube_watch_opts *opts, kube_watch_event_fn on_event, kube_framer_raw_fn on_raw,
    kube_watch_end_fn on_end, void *userdata, struct kube_watch **ret)
{
	struct kube_http_request req = {.method = "GET", .stream = true};
	char path[2048], num[24];
	struct kube_watch *w;
	int rc;

	if ((!on_event && !on_raw) || !on_end || !ret)
		return -EINVAL;
	rc = kube_resource_path(res, ns, NULL, NULL, path, sizeof(path));
	if (rc < 0)
		return rc;
	if ((rc = kube_query_add(path, sizeof(path), "watch", "true")) < 0)
		return rc;
	if (opts) {
		snprintf(num, sizeof(num), "%u", opts->timeout_seconds);
		if ((rc = kube_query_add(
			 path, sizeof(path), "labelSelector", opts->label_selector)) < 0 ||
		    (rc = kube_query_add(
			 path, sizeof(path), "fieldSelector", opts->field_selector)) < 0 ||
		    (rc = kube_query_add(path, sizeof(path), "resourceVersion",
			 opts->resource_version && *opts->resource_version ? opts->resource_version
									   : NULL)) < 0 ||
		    (rc = kube_query_add(path, sizeof(path), "allowWatchBookmarks",
			 opts->bookmarks ? "true" : NULL)) < 0 ||
		    (rc = kube_query_add(path, sizeof(path), "timeoutSeconds",
			 opts->timeout_seconds ? num : NULL)) < 0)
			return rc;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	kube_watch_framer_init(&w->framer, 0);
	w->resource = res->resource;
	w->on_event = on_event;
	w->on_raw = on_raw;
	w->on_end = on_end;
	w->userdata = userdata;
	req.path = path;
	req.on_data = watch_data;
	req.on_done = watch_done;
	req.userdata = w;
	if (opts && opts->timeout_seconds) {
		w->timeout_s = opts->timeout_seconds;
		w->deadline_ms = kube_watch_deadline_ms(
		    opts->timeout_seconds, kube_http_connect_ms(kube_client_http(c)));
		w->deadline = evtimer_new(kube_client_base(c), watch_deadline_fired, w);
		if (!w->deadline) {
			watch_destroy(w);
			return -ENOMEM;
		}
	}
	rc = kube_http_submit(kube_client_http(c), &req, &w->call);
	if (rc < 0) {
		watch_destroy(w);
		return rc;
	}
	if (w->deadline) {
		struct timeval tv = {.tv_sec = w->deadline_ms / 1000,
		    .tv_usec = (suseconds_t)(w->deadline_ms % 1000) * 1000};

		evtimer_add(w->deadline, &tv);
	}
	*ret = w;
	return 0;
}

int
kube_watch_start(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const struct kube_watch_opts *opts, kube_watch_event_fn on_event, kube_watch_end_fn on_end,
    void *userdata, struct kube_watch **ret)
{
	if (!on_event)
		return -EINVAL;
	return watch_start(c, res, ns, opts, on_event, NULL, on_end, userdata, ret);
}

int
kube_watch_start_raw(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const struct kube_watch_opts *opts, kube_framer_raw_fn on_event, kube_watch_end_fn on_end,
    void *userdata, struct kube_watch **ret)
{
	if (!on_event)
		return -EINVAL;
	return watch_start(c, res, ns, opts, NULL, on_event, on_end, userdata, ret);
}

struct kube_watch *
kube_watch_free(struct kube_watch *w)
{
	if (!w)
		return NULL;
	if (w->call)
		kube_http_cancel(w->call);
	w->call = NULL;
	w->stopped = true;
	if (w->deadline)
		evtimer_del(w->deadline);
	if (w->in_event) {
		w->free_later = true; /* watch_data frees it when the handler returns */
		return NULL;
	}
	watch_destroy(w);
	return NULL;
}

uint64_t
kube_watch_dropped(const struct kube_watch *w)
{
	return w->framer.dropped;
}
