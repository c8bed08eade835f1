/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Watch streams: the API server sends one JSON object per line ({"type":..., "object":...});
 * chunks may split a line anywhere, or carry many lines. The framer reassembles lines, scans
 * each with lib/jscan.h for its type and the span of its object, and counts what it drops.
 * The object is then decoded by json_loadb (kube_watch_start) or handed as text to a typed
 * codec (kube_watch_start_raw: the informer's path).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
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
	struct event *idle_timer; /* no byte for idle_tv: the stream is stalled */
	struct timeval idle_tv;
};

static void
watch_destroy(struct kube_watch *w)
{
	if (w->idle_timer)
		event_free(w->idle_timer);
	kube_watch_framer_release(&w->framer);
	free(w);
}

/* A silent stream (a half-open connection, a proxy holding it, a server stalled mid-line):
 * stop it and report -ETIMEDOUT so the owner watches again from its last resourceVersion. */
static void
watch_idle_fired(evutil_socket_t fd, short what, void *arg)
{
	struct kube_watch *w = arg;

	if (w->stopped || !w->call)
		return;
	kube_http_cancel(w->call);
	w->call = NULL;
	snprintf(w->error_message, sizeof(w->error_message),
	    "watch: no data for %lld.%03lld s (stalled stream)", (long long)w->idle_tv.tv_sec,
	    (long long)(w->idle_tv.tv_usec / 1000));
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

	if (w->idle_timer && !w->stopped)
		evtimer_add(w->idle_timer, &w->idle_tv); /* any byte counts, bookmarks too */
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
	if (w->idle_timer)
		evtimer_del(w->idle_timer);
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
		/* Client-side guard a little past the server's own timeout. */
		if (opts->timeout_seconds)
			req.timeout_ms = (long)opts->timeout_seconds * 1000 + 30000;
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
	if (opts && opts->idle_timeout_ms) {
		w->idle_tv.tv_sec = (time_t)(opts->idle_timeout_ms / 1000);
		w->idle_tv.tv_usec = (suseconds_t)(opts->idle_timeout_ms % 1000) * 1000;
		w->idle_timer = evtimer_new(kube_client_base(c), watch_idle_fired, w);
		if (!w->idle_timer) {
			watch_destroy(w);
			return -ENOMEM;
		}
	}
	rc = kube_http_submit(kube_client_http(c), &req, &w->call);
	if (rc < 0) {
		watch_destroy(w);
		return rc;
	}
	if (w->idle_timer)
		evtimer_add(w->idle_timer, &w->idle_tv); /* the answer's first byte counts too */
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
	if (w->idle_timer)
		evtimer_del(w->idle_timer);
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
