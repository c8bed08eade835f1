/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The libcurl engine of the HTTP call layer (kube/call.c): what vm-dhcp-controller links
 * (HTTP/2 when the server offers it, one connection for all calls). A libcurl multi handle
 * is driven by the process's event_base (curl's multi-event pattern): curl tells us which
 * sockets to watch (CURLMOPT_SOCKETFUNCTION) and when to wake it (CURLMOPT_TIMERFUNCTION);
 * each socket event calls curl_multi_socket_action, then finished transfers are reported to
 * the call layer. Connections are kept alive in the multi handle's pool; curl itself retries
 * a request whose reused connection turns out dead. The connect timeout is curl's; the total
 * timeout, admission and cancellation are the call layer's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <openssl/ssl.h>

#include "kube/kube-internal.h"
#include "lib/util.h"

#define MAX_ACTIVE 64 /* plain requests in flight at once; watches are not counted */

struct engine {
	struct kube_http *http;
	struct event_base *base;
	CURLM *multi;
	struct event *timer;
	bool in_check;
};

struct curl_call {
	struct kube_http_call call; /* first: the call layer's part */
	CURL *easy;
	struct curl_slist *headers;
	bool added; /* in the multi handle */
	char errbuf[CURL_ERROR_SIZE];
};

struct sock_ctx {
	struct event *ev;
	struct engine *e;
};

static const struct {
	CURLcode code;
	int err;
} curl_errors[] = {
    {CURLE_OK, 0},
    {CURLE_OPERATION_TIMEDOUT, -ETIMEDOUT},
    {CURLE_COULDNT_CONNECT, -ECONNREFUSED},
    {CURLE_COULDNT_RESOLVE_HOST, -EHOSTUNREACH},
    {CURLE_COULDNT_RESOLVE_PROXY, -EHOSTUNREACH},
    {CURLE_URL_MALFORMAT, -EINVAL},
    {CURLE_UNSUPPORTED_PROTOCOL, -EINVAL},
    {CURLE_OUT_OF_MEMORY, -ENOMEM},
    {CURLE_PEER_FAILED_VERIFICATION, -EPROTO},
    {CURLE_SSL_CONNECT_ERROR, -EPROTO},
    {CURLE_SSL_CERTPROBLEM, -EPROTO},
    {CURLE_SSL_CACERT_BADFILE, -EPROTO},
    {CURLE_SSL_CIPHER, -EPROTO},
    {CURLE_SSL_ISSUER_ERROR, -EPROTO},
    {CURLE_GOT_NOTHING, -EIO},
    {CURLE_RECV_ERROR, -EIO},
    {CURLE_SEND_ERROR, -EIO},
    {CURLE_PARTIAL_FILE, -EIO},
    {CURLE_HTTP2, -EIO},
    {CURLE_HTTP2_STREAM, -EIO},
    {CURLE_WRITE_ERROR, -ECANCELED},
};

int
kube_curl_errno(int curl_code)
{
	for (size_t i = 0; i < ELEMENTSOF(curl_errors); i++)
		if ((int)curl_errors[i].code == curl_code)
			return curl_errors[i].err;
	return -EIO;
}

static void check_multi_info(struct engine *e);

/* Drops the transfer of a call (not from inside curl's callbacks). */
static void
curl_abort(struct kube_http_call *call)
{
	struct curl_call *cc = (struct curl_call *)call;
	struct engine *e = kube_http_state(call->http);

	if (cc->easy) {
		if (cc->added)
			curl_multi_remove_handle(e->multi, cc->easy);
		curl_easy_cleanup(cc->easy);
		cc->easy = NULL;
		cc->added = false;
	}
	curl_slist_free_all(cc->headers);
	cc->headers = NULL;
}

static void
event_cb(evutil_socket_t fd, short what, void *arg)
{
	struct engine *e = arg;
	int running = 0;
	int action =
	    ((what & EV_READ) ? CURL_CSELECT_IN : 0) | ((what & EV_WRITE) ? CURL_CSELECT_OUT : 0);

	curl_multi_socket_action(e->multi, fd, action, &running);
	check_multi_info(e);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct engine *e = arg;
	int running = 0;

	curl_multi_socket_action(e->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_multi_info(e);
}

static int
start_timeout(CURLM *multi, long timeout_ms, void *userp)
{
	struct engine *e = userp;

	if (timeout_ms < 0) {
		evtimer_del(e->timer);
	} else {
		struct timeval tv = {
		    .tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};

		evtimer_add(e->timer, &tv);
	}
	return 0;
}

static int
handle_socket(CURL *easy, curl_socket_t s, int action, void *userp, void *socketp)
{
	struct engine *e = userp;
	struct sock_ctx *ctx = socketp;

	if (action == CURL_POLL_REMOVE) {
		if (ctx) {
			event_free(ctx->ev);
			free(ctx);
			curl_multi_assign(e->multi, s, NULL);
		}
		return 0;
	}
	if (!ctx) {
		ctx = calloc(1, sizeof(*ctx));
		if (!ctx)
			return -1;
		ctx->e = e;
		curl_multi_assign(e->multi, s, ctx);
	} else {
		event_free(ctx->ev);
	}
	ctx->ev = event_new(e->base, s,
	    ((action & CURL_POLL_IN) ? EV_READ : 0) | ((action & CURL_POLL_OUT) ? EV_WRITE : 0) |
		EV_PERSIST,
	    event_cb, e);
	if (!ctx->ev)
		return -1;
	event_add(ctx->ev, NULL);
	return 0;
}

static void
check_multi_info(struct engine *e)
{
	CURLMsg *msg;
	int left;

	if (e->in_check)
		return;
	e->in_check = true;
	while ((msg = curl_multi_info_read(e->multi, &left))) {
		struct curl_call *cc = NULL;
		CURLcode result = msg->data.result;
		long status = 0;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&cc);
		if (!cc)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
		/* Detach from curl before reporting: the callback may submit or cancel others. */
		curl_abort(&cc->call);
		if (result == CURLE_OK)
			kube_http_call_done(&cc->call, 0, status, NULL);
		else
			kube_http_call_done(&cc->call, kube_curl_errno((int)result), 0, "%s%s%s",
			    curl_easy_strerror(result), cc->errbuf[0] ? ": " : "", cc->errbuf);
	}
	e->in_check = false;
}

static size_t
write_cb(char *ptr, size_t size, size_t nmemb, void *userdata)
{
	struct curl_call *cc = userdata;
	size_t n = size * nmemb;
	long status = 0;

	curl_easy_getinfo(cc->easy, CURLINFO_RESPONSE_CODE, &status);
	if (!cc->call.stream && cc->call.resp_cap == 0) {
		curl_off_t length = -1;

		curl_easy_getinfo(cc->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
		if (length >= 0)
			kube_http_call_expect(&cc->call, (uint64_t)length);
	}
	/* a refused body fails the transfer (CURLE_WRITE_ERROR); the call layer says why */
	return kube_http_call_data(&cc->call, status, ptr, n) < 0 ? 0 : n;
}

static int
curl_init(struct kube_http *h, void **state)
{
	static bool global_init;
	struct engine *e;

	if (!global_init) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return -ENOMEM;
		global_init = true;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->http = h;
	e->base = kube_http_base(h);
	e->multi = curl_multi_init();
	e->timer = evtimer_new(e->base, timer_cb, e);
	if (!e->multi || !e->timer) {
		if (e->multi)
			curl_multi_cleanup(e->multi);
		if (e->timer)
			event_free(e->timer);
		free(e);
		return -ENOMEM;
	}
	curl_multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION, handle_socket);
	curl_multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e);
	curl_multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION, start_timeout);
	curl_multi_setopt(e->multi, CURLMOPT_TIMERDATA, e);
	curl_multi_setopt(e->multi, CURLMOPT_PIPELINING, CURLPIPE_MULTIPLEX);
	/* Bounded pool (HTTP/1.1 watches hold one connection each; HTTP/2 multiplexes). */
	curl_multi_setopt(e->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 32L);
	curl_multi_setopt(e->multi, CURLMOPT_MAXCONNECTS, 48L);
	*state = e;
	return 0;
}

static void
curl_free_engine(void *state)
{
	struct engine *e = state;

	curl_multi_cleanup(e->multi);
	event_free(e->timer);
	free(e);
}

/* Idle pooled connections give their TLS read/write buffers (~34 KiB each) back. */
static CURLcode
ssl_ctx_cb(CURL *curl, void *ssl_ctx, void *userdata)
{
	SSL_CTX_set_mode((SSL_CTX *)ssl_ctx, SSL_MODE_RELEASE_BUFFERS);
	return CURLE_OK;
}

static int
setup_tls(CURL *e, struct kube_config *cfg)
{
	curl_easy_setopt(e, CURLOPT_SSL_CTX_FUNCTION, ssl_ctx_cb);

	if (cfg->insecure) {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
	} else {
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 1L);
		curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 2L);
		if (cfg->ca_data) {
			struct curl_blob blob = {
			    .data = cfg->ca_data, .len = cfg->ca_data_len, .flags = CURL_BLOB_COPY};

			curl_easy_setopt(e, CURLOPT_CAINFO_BLOB, &blob);
		} else if (cfg->ca_file) {
			curl_easy_setopt(e, CURLOPT_CAINFO, cfg->ca_file);
		}
	}
	if (cfg->cert_data) {
		struct curl_blob blob = {
		    .data = cfg->cert_data, .len = cfg->cert_data_len, .flags = CURL_BLOB_COPY};

		curl_easy_setopt(e, CURLOPT_SSLCERT_BLOB, &blob);
		curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
	} else if (cfg->cert_file) {
		curl_easy_setopt(e, CURLOPT_SSLCERT, cfg->cert_file);
	}
	if (cfg->key_data) {
		struct curl_blob blob = {
		    .data = cfg->key_data, .len = cfg->key_data_len, .flags = CURL_BLOB_COPY};

		curl_easy_setopt(e, CURLOPT_SSLKEY_BLOB, &blob);
		curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
	} else if (cfg->key_file) {
		curl_easy_setopt(e, CURLOPT_SSLKEY, cfg->key_file);
	}
	return 0;
}

/* Each new connection: TCP keep-alive and a user timeout (kube/http-keepalive.c). */
static int
sockopt_cb(void *userdata, curl_socket_t fd, curlsocktype purpose)
{
	if (purpose == CURLSOCKTYPE_IPCXN)
		(void)kube_http_keepalive(fd);
	return CURL_SOCKOPT_OK;
}

/* Creates the curl handle of an admitted call and adds it to the multi handle. */
static int
curl_start(struct kube_http_call *call, const char *token)
{
	struct curl_call *cc = (struct curl_call *)call;
	struct kube_http *h = call->http;
	struct engine *en = kube_http_state(h);
	struct curl_slist *hl;
	CURL *e;

	e = cc->easy = curl_easy_init();
	if (!e)
		return -ENOMEM;
	hl = curl_slist_append(NULL, "Accept: application/json");
	if (!hl)
		return -ENOMEM;
	cc->headers = hl;
	if (call->rq.content_type) {
		char line[160];

		snprintf(line, sizeof(line), "Content-Type: %s", call->rq.content_type);
		if (!curl_slist_append(hl, line))
			return -ENOMEM;
	}
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
	curl_easy_setopt(e, CURLOPT_PRIVATE, cc);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, cc->errbuf);
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, cc->headers);
	curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(e, CURLOPT_WRITEDATA, cc);
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_USERAGENT, "vm-dhcp/kube");
	curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
	curl_easy_setopt(e, CURLOPT_PIPEWAIT, 1L);
	/* curl's own keep-alive options with the same values (whichever curl applies last), and
	 * the rest (probe count, user timeout) in sockopt_cb */
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, (long)KUBE_TCP_KEEPIDLE_S);
	curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, (long)KUBE_TCP_KEEPINTVL_S);
	curl_easy_setopt(e, CURLOPT_SOCKOPTFUNCTION, sockopt_cb);
	/*
	 * Memory per transfer in flight: request bodies are sent from memory, so the upload
	 * buffer (64 KiB by default) can be curl's minimum; the answers to writes are one
	 * object, so a small receive buffer does (lists and watches keep the default).
	 */
	curl_easy_setopt(e, CURLOPT_UPLOAD_BUFFERSIZE, 16384L);
	if (call->rq.body)
		curl_easy_setopt(e, CURLOPT_BUFFERSIZE, 4096L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, kube_http_connect_ms(h));
	if (strcmp(call->rq.method, "GET") != 0)
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, call->rq.method);
	if (call->rq.body) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDS, call->rq.body);
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, (long)call->rq.body_len);
	}
	setup_tls(e, kube_http_config(h));
	if (curl_multi_add_handle(en->multi, e) != CURLM_OK)
		return -ENOMEM;
	cc->added = true;
	return 0;
}

const struct kube_http_engine kube_http_engine = {
    .name = "libcurl",
    .call_size = sizeof(struct curl_call),
    .max_active = MAX_ACTIVE,
    .init = curl_init,
    .free = curl_free_engine,
    .start = curl_start,
    .abort = curl_abort,
};
