/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP call layer under kube_http_submit, the same whichever engine moves the bytes
 * (kube/http.c: libcurl; kube/http-mbedtls.c: mbed TLS): the list of live calls in the order
 * they were made, admission (at most the engine's max_active plain requests started at once,
 * so a burst of writes waits here as small records; streams are not counted), cancellation
 * (a mark and a deferred event, the reaper, that frees the call from the loop: safe from
 * inside any callback, its own included), the total timeout of each call (an evtimer from
 * its start), the answer body (kept up to the answer cap of kube/limits.c, or handed to
 * on_data for a 2xx stream)
 * and the one report of each call.
 *
 * The connect timeout belongs to the engines (only they know when a connection is up);
 * the deadline of watches to kube/watch.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"

#define DEFAULT_REQUEST_MS 30000
#define DEFAULT_CONNECT_MS 10000

struct kube_http {
	struct event_base *base;
	struct kube_config *cfg; /* borrowed */
	const struct kube_http_engine *engine;
	void *state; /* the engine's */
	struct event *reaper;
	struct kube_http_call *calls, *tail; /* all live calls, oldest first */
	unsigned active;		     /* plain calls started and not yet ended */
	unsigned max_active;
	long request_ms, connect_ms;
};

struct event_base *
kube_http_base(const struct kube_http *h)
{
	return h->base;
}

struct kube_config *
kube_http_config(const struct kube_http *h)
{
	return h->cfg;
}

void *
kube_http_state(const struct kube_http *h)
{
	return h->state;
}

long
kube_http_connect_ms(const struct kube_http *h)
{
	return h->connect_ms;
}

static void
release_slot(struct kube_http_call *call)
{
	struct kube_http *h = call->http;

	if (call->counted) {
		call->counted = false;
		h->active--;
		event_active(h->reaper, EV_TIMEOUT, 0); /* admit a waiting call */
	}
}

static void
call_free(struct kube_http_call *call)
{
	struct kube_http *h = call->http;

	if (call->prev)
		call->prev->next = call->next;
	else
		h->calls = call->next;
	if (call->next)
		call->next->prev = call->prev;
	else
		h->tail = call->prev;
	release_slot(call);
	if (call->started)
		h->engine->abort(call);
	if (call->timer)
		event_free(call->timer);
	if (!call->reported && call->release)
		call->release(call->userdata);
	kube_http_owned_release(&call->rq);
	free(call->resp);
	free(call);
}

static void
report(struct kube_http_call *call, int err, long status, const char *message)
{
	call->cancelled = true; /* no second report; the engine drops it */
	call->reported = true;
	release_slot(call);
	if (call->timer)
		evtimer_del(call->timer);
	if (err < 0)
		call->on_done(call->userdata, err, 0, "", 0, message);
	else
		call->on_done(call->userdata, 0, status, call->resp ? call->resp : "",
		    call->resp_len, message);
	call_free(call);
}

/* "answer too large: more than 16 MiB (or: Content-Length 1 GiB), the cap is 16 MiB (a
 * quarter of the cgroup v2 memory.max of 64 MiB; VMDHCP_KUBE_MAX_ANSWER overrides it)" */
static void
too_large_message(const struct kube_http_call *call, char *out, size_t len)
{
	const struct kube_answer_limit *lim = kube_answer_limit();
	char seen[32], cap[32];

	kube_format_size(call->body_seen, seen, sizeof(seen));
	kube_format_size(call->max_body, cap, sizeof(cap));
	snprintf(out, len,
	    "answer too large: %s%s, the cap is %s (%s; VMDHCP_KUBE_MAX_ANSWER overrides it)",
	    call->body_declared ? "Content-Length " : "more than ", seen, cap, lim->source);
}

static void vdone(struct kube_http_call *call, int err, long status, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

static void
vdone(struct kube_http_call *call, int err, long status, const char *fmt, va_list ap)
{
	char message[1024] = "";
	const char *why = NULL;

	if (call->cancelled)
		return; /* the reaper frees it */
	if (call->body_error) {
		/* the body was refused: that is the end's cause, not the engine's view of it */
		err = call->body_error;
		why = call->body_error == -ECANCELED ? "aborted"
		      : call->body_error == -EFBIG   ? "too large"
						     : "out of memory";
	}
	if (fmt || why) {
		int n =
		    snprintf(message, sizeof(message), "%s %s: ", call->rq.method, call->rq.url);

		if (n < 0 || (size_t)n >= sizeof(message))
			n = 0;
		if (call->body_error == -EFBIG)
			too_large_message(call, message + n, sizeof(message) - (size_t)n);
		else if (why)
			snprintf(message + n, sizeof(message) - (size_t)n, "%s", why);
		else
			vsnprintf(message + n, sizeof(message) - (size_t)n, fmt, ap);
		for (char *p = message; *p; p++)
			if (*p == '\n' || *p == '\r')
				*p = ' ';
	}
	report(call, err, status, message);
}

void
kube_http_call_done(struct kube_http_call *call, int err, long status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vdone(call, err, status, fmt, ap);
	va_end(ap);
}

/* From the loop, never from inside the engine: it may drop the transfer at once. */
static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct kube_http_call *call = arg;
	long ms = call->timeout_ms ? call->timeout_ms : call->http->request_ms;

	if (call->cancelled)
		return;
	call->http->engine->abort(call);
	kube_http_call_done(call, -ETIMEDOUT, 0, "Operation timed out after %ld milliseconds", ms);
}

/* The body is refused for its size: the transfer stops, the call fails with -EFBIG. */
static int
too_large(struct kube_http_call *call, uint64_t seen, bool declared)
{
	call->body_error = -EFBIG;
	call->body_seen = seen;
	call->body_declared = declared;
	kube_answer_refused_count();
	free(call->resp); /* give the memory back at once, not when the call is reaped */
	call->resp = NULL;
	call->resp_len = call->resp_cap = 0;
	return -EFBIG;
}

void
kube_http_call_expect(struct kube_http_call *call, uint64_t len)
{
	if (call->body_error || call->cancelled)
		return;
	if (len > call->max_body) {
		too_large(call, len, true); /* refused before a byte is held */
		return;
	}
	/* the whole body at once: no doubling past it (a 2.6 MB IPPool would take 4 MB) */
	if (call->resp_cap == 0) {
		call->resp = malloc((size_t)len + 1);
		if (call->resp)
			call->resp_cap = (size_t)len + 1;
	}
}

int
kube_http_call_data(struct kube_http_call *call, long status, const char *data, size_t len)
{
	if (call->cancelled)
		return -ECANCELED;
	if (call->body_error)
		return call->body_error;
	if (call->stream && status >= 200 && status < 300) {
		if (!call->on_data(call->userdata, data, len)) {
			/* on_data may have cancelled the call and freed its userdata */
			if (!call->cancelled)
				call->body_error = -ECANCELED;
			return -ECANCELED;
		}
		return call->cancelled ? -ECANCELED : 0;
	}
	if ((uint64_t)call->resp_len + len > call->max_body)
		return too_large(call, (uint64_t)call->resp_len + len, false);
	if (call->resp_len + len + 1 > call->resp_cap) {
		size_t cap = call->resp_cap ? call->resp_cap : 4096;
		char *p;

		while (cap < call->resp_len + len + 1)
			cap *= 2;
		if (cap > call->max_body + 1)
			cap = (size_t)call->max_body + 1; /* no doubling past the cap */
		p = realloc(call->resp, cap);
		if (!p) {
			call->body_error = -ENOMEM;
			return -ENOMEM;
		}
		call->resp = p;
		call->resp_cap = cap;
	}
	memcpy(call->resp + call->resp_len, data, len);
	call->resp_len += len;
	call->resp[call->resp_len] = '\0';
	return 0;
}

/* An admitted call: its slot, its timer, the engine. It may be gone on return. */
static void
call_start(struct kube_http_call *call)
{
	struct kube_http *h = call->http;
	const char *token = kube_config_token(h->cfg); /* read now: a rotated token at once */
	long ms = call->timeout_ms ? call->timeout_ms : (call->stream ? 0 : h->request_ms);
	int r;

	if (token && strpbrk(token, "\r\n")) {
		kube_http_call_done(call, -EINVAL, 0, "bearer token holds a line break");
		return;
	}
	call->timer = evtimer_new(h->base, timeout_cb, call);
	if (!call->timer) {
		kube_http_call_done(call, -ENOMEM, 0, "cannot start transfer");
		return;
	}
	call->started = true;
	if (!call->stream) {
		call->counted = true;
		h->active++;
	}
	if (ms > 0) {
		struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};

		evtimer_add(call->timer, &tv);
	}
	r = h->engine->start(call, token);
	if (r < 0)
		kube_http_call_done(call, r, 0, "cannot start transfer");
}

/*
 * Deferred work, from the loop: free cancelled calls and start waiting ones in order. A call
 * that fails to start is reported at once, and its callback may change the list: the walk
 * starts over from the head after each start.
 */
static void
reaper_cb(evutil_socket_t fd, short what, void *arg)
{
	struct kube_http *h = arg;
	struct kube_http_call *call = h->calls, *next;

	for (; call; call = next) {
		next = call->next;
		if (call->cancelled) {
			call_free(call);
			continue;
		}
		if (call->started || (!call->stream && h->active >= h->max_active))
			continue;
		call_start(call);
		next = h->calls;
	}
}

void
kube_http_cancel(struct kube_http_call *call)
{
	if (!call || call->cancelled)
		return;
	call->cancelled = true;
	event_active(call->http->reaper, EV_TIMEOUT, 0);
}

int
kube_http_new_engine(struct event_base *base, struct kube_config *cfg,
    const struct kube_http_engine *engine, struct kube_http **ret)
{
	struct kube_http *h;
	int r;

	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->base = base;
	h->cfg = cfg;
	h->engine = engine;
	h->request_ms = DEFAULT_REQUEST_MS;
	h->connect_ms = DEFAULT_CONNECT_MS;
	h->max_active = engine->max_active;
	h->reaper = event_new(base, -1, 0, reaper_cb, h);
	if (!h->reaper) {
		free(h);
		return -ENOMEM;
	}
	r = engine->init(h, &h->state);
	if (r < 0) {
		event_free(h->reaper);
		free(h);
		return r;
	}
	*ret = h;
	return 0;
}

int
kube_http_new(struct event_base *base, struct kube_config *cfg, struct kube_http **ret)
{
	return kube_http_new_engine(base, cfg, &kube_http_engine, ret);
}

struct kube_http *
kube_http_free(struct kube_http *h)
{
	if (!h)
		return NULL;
	while (h->calls)
		call_free(h->calls);
	h->engine->free(h->state);
	event_free(h->reaper);
	free(h);
	return NULL;
}

void
kube_http_set_timeouts(struct kube_http *h, long request_ms, long connect_ms)
{
	if (request_ms > 0)
		h->request_ms = request_ms;
	if (connect_ms > 0)
		h->connect_ms = connect_ms;
}

int
kube_http_submit(
    struct kube_http *h, const struct kube_http_request *req, struct kube_http_call **ret)
{
	struct kube_http_call *call;

	call = calloc(1, h->engine->call_size);
	if (!call)
		return -ENOMEM;
	call->http = h;
	call->stream = req->stream;
	call->timeout_ms = req->timeout_ms;
	call->max_body = kube_answer_limit()->bytes;
	call->on_data = req->on_data;
	call->on_done = req->on_done;
	call->release = req->release;
	call->userdata = req->userdata;
	if (kube_http_request_copy(&call->rq, h->cfg->server, req) < 0) {
		free(call);
		return -ENOMEM;
	}
	/* append: calls start in the order they were made */
	call->prev = h->tail;
	if (h->tail)
		h->tail->next = call;
	else
		h->calls = call;
	h->tail = call;
	event_active(h->reaper, EV_TIMEOUT, 0);
	if (ret)
		*ret = call;
	return 0;
}
