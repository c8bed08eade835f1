/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libcurl multi driven by the process's event_base (curl's multi-event pattern): curl tells
 * us which sockets to watch (CURLMOPT_SOCKETFUNCTION) and when to wake it
 * (CURLMOPT_TIMERFUNCTION); each socket event calls curl_multi_socket_action, then finished
 * transfers are collected. Connections are kept alive in the multi handle's pool.
 *
 * Cancellation marks a call and lets a deferred event reap it, so it is safe from inside
 * curl's callbacks (a watch handler stopping its own stream).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <openssl/ssl.h>

#include "kube/kube-internal.h"

#define DEFAULT_REQUEST_MS 30000
#define DEFAULT_CONNECT_MS 10000
#define MAX_BODY (256u << 20)
#define MAX_ACTIVE 64 /* plain requests in flight at once; watches are not counted */

struct kube_http {
	struct event_base *base;
	struct kube_config *cfg; /* borrowed */
	CURLM *multi;
	struct event *timer;
	struct event *reaper;
	struct kube_http_call *calls, *tail; /* all live calls, oldest first */
	unsigned active;                    /* non-stream calls in the multi handle */
	unsigned max_active;
	long request_ms, connect_ms;
	bool in_check;
};

struct kube_http_call {
	struct kube_http *http;
	struct kube_http_call *next, *prev;
	CURL *easy;
	struct curl_slist *headers;
	struct kube_http_owned rq; /* method, url, content type, body */
	long timeout_ms;
	bool counted; /* holds one of the max_active slots */
	char *resp;
	size_t resp_len, resp_cap;
	bool stream;
	bool cancelled;
	bool added; /* in the multi handle (adds are deferred to the loop) */
	bool aborted_by_cb;
	bool (*on_data)(void *, const char *, size_t);
	void (*on_done)(void *, int, long, const char *, size_t, const char *);
	void (*release)(void *);
	bool reported; /* on_done ran */
	void *userdata;
	char errbuf[CURL_ERROR_SIZE];
};

struct sock_ctx {
	struct event *ev;
	struct kube_http *http;
};

static void check_multi_info(struct kube_http *h);

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
	if (call->counted) {
		h->active--;
		event_active(h->reaper, EV_TIMEOUT, 0); /* admit a waiting call */
	}
	if (call->easy) {
		if (call->added)
			curl_multi_remove_handle(h->multi, call->easy);
		curl_easy_cleanup(call->easy);
	}
	if (!call->reported && call->release)
		call->release(call->userdata);
	curl_slist_free_all(call->headers);
	kube_http_owned_release(&call->rq);
	free(call->resp);
	free(call);
}

static int call_start(struct kube_http_call *call);

/*
 * Deferred work, from the loop: free cancelled calls and start waiting ones in order (curl
 * refuses adds from inside its callbacks). At most max_active plain requests run at once,
 * so a burst of writes queues here as small records instead of as curl handles.
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
		if (call->added || (!call->stream && h->active >= h->max_active))
			continue;
		if (call_start(call) < 0) {
			call->cancelled = true;
			call->reported = true;
			snprintf(call->errbuf, sizeof(call->errbuf), "%s %s: cannot start transfer",
			    call->rq.method, call->rq.url);
			call->on_done(call->userdata, -ENOMEM, 0, "", 0, call->errbuf);
			call_free(call);
		}
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

static void
event_cb(evutil_socket_t fd, short what, void *arg)
{
	struct kube_http *h = arg;
	int running = 0;
	int action = ((what & EV_READ) ? CURL_CSELECT_IN : 0) |
	    ((what & EV_WRITE) ? CURL_CSELECT_OUT : 0);

	curl_multi_socket_action(h->multi, fd, action, &running);
	check_multi_info(h);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct kube_http *h = arg;
	int running = 0;

	curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_multi_info(h);
}

static int
start_timeout(CURLM *multi, long timeout_ms, void *userp)
{
	struct kube_http *h = userp;

	if (timeout_ms < 0) {
		evtimer_del(h->timer);
	} else {
		struct timeval tv = { .tv_sec = timeout_ms / 1000,
			.tv_usec = (timeout_ms % 1000) * 1000 };

		evtimer_add(h->timer, &tv);
	}
	return 0;
}

static int
handle_socket(CURL *easy, curl_socket_t s, int action, void *userp, void *socketp)
{
	struct kube_http *h = userp;
	struct sock_ctx *ctx = socketp;

	if (action == CURL_POLL_REMOVE) {
		if (ctx) {
			event_free(ctx->ev);
			free(ctx);
			curl_multi_assign(h->multi, s, NULL);
		}
		return 0;
	}
	if (!ctx) {
		ctx = calloc(1, sizeof(*ctx));
		if (!ctx)
			return -1;
		ctx->http = h;
		curl_multi_assign(h->multi, s, ctx);
	} else {
		event_free(ctx->ev);
	}
	ctx->ev = event_new(h->base, s,
	    ((action & CURL_POLL_IN) ? EV_READ : 0) | ((action & CURL_POLL_OUT) ? EV_WRITE : 0) |
		EV_PERSIST,
	    event_cb, h);
	if (!ctx->ev)
		return -1;
	event_add(ctx->ev, NULL);
	return 0;
}

static void
check_multi_info(struct kube_http *h)
{
	CURLMsg *msg;
	int left;

	if (h->in_check)
		return;
	h->in_check = true;
	while ((msg = curl_multi_info_read(h->multi, &left))) {
		struct kube_http_call *call = NULL;
		long status = 0;
		int err = 0;
		char message[CURL_ERROR_SIZE + 600];

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&call);
		if (!call || call->cancelled)
			continue; /* the reaper frees it */
		curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
		message[0] = '\0';
		if (msg->data.result != CURLE_OK && !(call->aborted_by_cb)) {
			err = kube_curl_errno(msg->data.result);
			snprintf(message, sizeof(message), "%s %s: %s%s%s", call->rq.method,
			    call->rq.url, curl_easy_strerror(msg->data.result),
			    call->errbuf[0] ? ": " : "", call->errbuf);
			status = 0;
		} else if (msg->data.result != CURLE_OK) {
			err = -ECANCELED;
			snprintf(message, sizeof(message), "%s %s: aborted", call->rq.method,
			    call->rq.url);
		}
		/* Detach from curl before reporting: the callback may submit or cancel others. */
		curl_multi_remove_handle(h->multi, call->easy);
		curl_easy_cleanup(call->easy);
		call->easy = NULL;
		call->added = false;
		call->cancelled = true; /* no second report */
		call->reported = true;
		call->on_done(call->userdata, err, status, call->resp ? call->resp : "",
		    call->resp_len, message);
		call_free(call);
	}
	h->in_check = false;
}

static size_t
write_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct kube_http_call *call = userdata;
	size_t n = size * nmemb;
	long status = 0;

	if (call->cancelled)
		return 0;
	curl_easy_getinfo(call->easy, CURLINFO_RESPONSE_CODE, &status);
	if (call->stream && status >= 200 && status < 300) {
		if (!call->on_data(call->userdata, ptr, n)) {
			call->aborted_by_cb = true;
			return 0;
		}
		return call->cancelled ? 0 : n;
	}
	if (call->resp_len + n + 1 > call->resp_cap) {
		size_t cap = call->resp_cap ? call->resp_cap : 4096;
		char *p;

		while (cap < call->resp_len + n + 1)
			cap *= 2;
		if (cap > MAX_BODY)
			return 0;
		p = realloc(call->resp, cap);
		if (!p)
			return 0;
		call->resp = p;
		call->resp_cap = cap;
	}
	memcpy(call->resp + call->resp_len, ptr, n);
	call->resp_len += n;
	call->resp[call->resp_len] = '\0';
	return n;
}

int
kube_http_new(struct event_base *base, struct kube_config *cfg, struct kube_http **ret)
{
	static bool global_init;
	struct kube_http *h;

	if (!global_init) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return -ENOMEM;
		global_init = true;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->base = base;
	h->cfg = cfg;
	h->request_ms = DEFAULT_REQUEST_MS;
	h->max_active = MAX_ACTIVE;
	h->connect_ms = DEFAULT_CONNECT_MS;
	h->multi = curl_multi_init();
	h->timer = evtimer_new(base, timer_cb, h);
	h->reaper = event_new(base, -1, 0, reaper_cb, h);
	if (!h->multi || !h->timer || !h->reaper) {
		kube_http_free(h);
		return -ENOMEM;
	}
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, handle_socket);
	curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, start_timeout);
	curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
	curl_multi_setopt(h->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
	/* Bounded pool (HTTP/1.1 watches hold one connection each; HTTP/2 multiplexes). */
	curl_multi_setopt(h->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 32L);
	curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS, 48L);
	*ret = h;
	return 0;
}

struct kube_http *
kube_http_free(struct kube_http *h)
{
	if (!h)
		return NULL;
	while (h->calls)
		call_free(h->calls);
	if (h->multi)
		curl_multi_cleanup(h->multi);
	if (h->timer)
		event_free(h->timer);
	if (h->reaper)
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

/* Idle pooled connections give their TLS read/write buffers (~34 KiB each) back. */
static CURLcode
ssl_ctx_cb(CURL *curl, void *ssl_ctx, void *userdata)
{
	SSL_CTX_set_mode((SSL_CTX *)ssl_ctx, SSL_MODE_RELEASE_BUFFERS);
	return CURLE_OK;
}

static int
setup_tls(struct kube_http_call *call, struct kube_config *cfg)
{
	CURL *e = call->easy;

	curl_easy_setopt(e, CURLOPT_SSL_CTX_FUNCTION, ssl_ctx_cb);

	if (cfg->insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	} else {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
		if (cfg->ca_data) {
			struct curl_blob blob = { .data = cfg->ca_data, .len = cfg->ca_data_len,
				.flags = CURL_BLOB_COPY };

			curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
		} else if (cfg->ca_file) {
			curl_easy_setopt(e, CURLOPT_CAINFO, cfg->ca_file);
		}
	}
	if (cfg->cert_data) {
		struct curl_blob blob = { .data = cfg->cert_data, .len = cfg->cert_data_len,
			.flags = CURL_BLOB_COPY };

		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &blob);
		curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
	} else if (cfg->cert_file) {
		curl_easy_setopt(e, CURLOPT_SSLCERT, cfg->cert_file);
	}
	if (cfg->key_data) {
		struct curl_blob blob = { .data = cfg->key_data, .len = cfg->key_data_len,
			.flags = CURL_BLOB_COPY };

		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &blob);
		curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (cfg->key_file) {
		curl_easy_setopt(e, CURLOPT_SSLKEY, cfg->key_file);
	}
	return 0;
}

/* Creates the curl handle of a waiting call and adds it to the multi handle. */
static int
call_start(struct kube_http_call *call)
{
	struct kube_http *h = call->http;
	struct curl_slist *hl;
	const char *token;
	CURL *e;

	e = call->easy = curl_easy_init();
	if (!e)
		return -ENOMEM;
	hl = curl_slist_append(NULL, "Accept: application/json");
	if (!hl)
		return -ENOMEM;
	call->headers = hl;
	if (call->rq.content_type) {
		char line[160];

		snprintf(line, sizeof(line), "Content-Type: %s", call->rq.content_type);
		if (!curl_slist_append(hl, line))
			return -ENOMEM;
	}
	token = kube_config_token(h->cfg); /* read now: a rotated token is used at once */
	if (token) {
		char *line;

		if (asprintf(&line, "Authorization: Bearer %s", token) < 0)
			return -ENOMEM;
		if (!curl_slist_append(hl, line)) {
			free(line);
			return -ENOMEM;
		}
		free(line);
	}

	curl_easy_setopt(e, CURLOPT_URL, call->rq.url);
	curl_easy_setopt(e, CURLOPT_PRIVATE, call);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, call->errbuf);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, call->headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, call);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "vm-dhcp/kube");
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	/*
	 * Memory per transfer in flight: request bodies are sent from memory, so the upload
	 * buffer (64 KiB by default) can be curl's minimum; the answers to writes are one
	 * object, so a small receive buffer does (lists and watches keep the default).
	 */
	curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 16384L);
	if (call->rq.body)
		curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 4096L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, h->connect_ms);
	curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
	    call->timeout_ms ? call->timeout_ms : (call->stream ? 0L : h->request_ms));
	if (strcmp(call->rq.method, "GET") != 0)
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, call->rq.method);
	if (call->rq.body) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, call->rq.body);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)call->rq.body_len);
	}
	setup_tls(call, h->cfg);
	if (curl_multi_add_handle(h->multi, e) != CURLM_OK)
		return -ENOMEM;
	call->added = true;
	if (!call->stream) {
		call->counted = true;
		h->active++;
	}
	return 0;
}

int
kube_http_submit(struct kube_http *h, const struct kube_http_request *req,
    struct kube_http_call **ret)
{
	struct kube_http_call *call;

	call = calloc(1, sizeof(*call));
	if (!call)
		return -ENOMEM;
	call->http = h;
	call->stream = req->stream;
	call->timeout_ms = req->timeout_ms;
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
