/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission webhook's HTTPS server (webhook.h) on lib/httpd: its limits (header size,
 * connection count, read/write inactivity timeout, accept back-off) with OpenSSL bufferevents
 * under evhttp; the AdmissionReview codec is webhook-review.c.
 *
 * TLS. Each accepted connection gets an SSL of the SSL_CTX current at accept time (SSL_new
 * takes a reference on it): webhook_set_cert builds a new SSL_CTX and drops the server's
 * reference to the old one, which lives on as long as connections made with it. Until a
 * certificate is set, connections are plain TCP and every request on them answers 503 "no
 * certificate yet" (a TLS client sees its handshake fail); admission is only ever answered
 * over TLS. TLS 1.2 minimum, ECDHE with AEAD ciphers for TLS 1.2 (Mozilla's "intermediate"
 * list without DHE; TLS 1.3's suites are OpenSSL's defaults), no compression, no
 * renegotiation.
 *
 * The review. The API server takes a non-200 answer, or one it cannot decode, as a failure of
 * the call (then failurePolicy decides). Bodies are bounded by WEBHOOK_BODY_MAX (evhttp
 * answers 413 past it, and the codec checks again) and their nesting by WEBHOOK_DEPTH_MAX.
 */
#include "controller/webhook.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "lib/clock.h"
#include "lib/httpd.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/util.h"

/* TLS 1.2 suites (TLS 1.3 has its own, all AEAD): what Go's API server client offers first. */
#define WEBHOOK_CIPHERS                                                                            \
	"ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"                               \
	"ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"                               \
	"ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305"

/* --- metrics ---------------------------------------------------------------------------- */

enum result_label { RES_ALLOWED, RES_PATCHED, RES_DENIED, RES_ERROR, N_RESULTS };
static const char *const result_names[N_RESULTS] = {"allowed", "patched", "denied", "error"};

#define N_KINDS (ADMIT_KIND_VM + 2) /* the kinds, and "unknown" (a review that did not parse) */
#define N_OPS (ADMIT_OP_CONNECT + 2)
#define UNKNOWN_KIND (N_KINDS - 1)
#define UNKNOWN_OP (N_OPS - 1)

/* sub-millisecond (the rules on a warm cache) to the API server's timeouts */
static const double duration_buckets[] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1};

struct route {
	struct webhook *w;
	enum admit_phase phase;
};

struct webhook {
	struct event_base *base;
	struct httpd *httpd;
	SSL_CTX *ctx; /* NULL until a certificate is set */
	webhook_admit_fn admit;
	void *userdata;
	struct route mutate, validate;
	bool stopped;
	bool draining; /* SIGTERM: replies ask clients to close (webhook_drain) */
	unsigned long cert_swaps;
	struct metric *requests; /* dynamic: counts below */
	struct metric *duration;
	uint64_t counts[N_KINDS][N_OPS][N_RESULTS];
};

static const char *
kind_label(unsigned k)
{
	return k == UNKNOWN_KIND ? "unknown" : admit_kind_name((enum admit_kind)k);
}

static const char *
op_label(unsigned o)
{
	return o == UNKNOWN_OP ? "unknown" : admit_op_name((enum admit_op)o);
}

static void
emit_requests(struct metric_emitter *e, void *userdata)
{
	const struct webhook *w = userdata;

	for (unsigned k = 0; k < N_KINDS; k++)
		for (unsigned o = 0; o < N_OPS; o++)
			for (unsigned r = 0; r < N_RESULTS; r++) {
				if (w->counts[k][o][r] == 0)
					continue;
				const struct metric_label labels[] = {{"kind", kind_label(k)},
				    {"operation", op_label(o)}, {"result", result_names[r]}};
				metric_emit(e, labels, 3, (double)w->counts[k][o][r]);
			}
}

static void
count(struct webhook *w, unsigned kind, unsigned op, enum result_label r, uint64_t t0)
{
	if (kind >= N_KINDS)
		kind = UNKNOWN_KIND;
	if (op >= N_OPS)
		op = UNKNOWN_OP;
	w->counts[kind][op][r]++;
	if (w->duration != NULL)
		metric_observe(
		    w->duration, 0, (double)(clock_now_usec() - t0) / (double)USEC_PER_SEC);
}

uint64_t
webhook_count(const struct webhook *w, enum admit_kind kind, enum admit_op op, const char *result)
{
	unsigned k = (unsigned)kind < N_KINDS - 1 ? (unsigned)kind : UNKNOWN_KIND;
	unsigned o = (unsigned)op < N_OPS - 1 ? (unsigned)op : UNKNOWN_OP;

	for (unsigned r = 0; r < N_RESULTS; r++)
		if (result != NULL && strcmp(result, result_names[r]) == 0)
			return w->counts[k][o][r];
	return 0;
}

/* --- TLS -------------------------------------------------------------------------------- */

static void
tls_error(char *out, size_t len)
{
	unsigned long e = ERR_peek_last_error();

	if (e != 0)
		ERR_error_string_n(e, out, len);
	else
		snprintf(out, len, "no PEM data");
	ERR_clear_error();
}

static SSL_CTX *
make_ctx(const char *cert_pem, const char *key_pem, char *why, size_t why_len)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
	BIO *b = NULL;
	X509 *cert = NULL;
	EVP_PKEY *key = NULL;
	int n = 0;

	if (ctx == NULL)
		goto bad;
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_cipher_list(ctx, WEBHOOK_CIPHERS) != 1)
		goto bad;
	SSL_CTX_set_options(
	    ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS);

	b = BIO_new_mem_buf(cert_pem, -1);
	if (b == NULL)
		goto bad;
	/* the leaf, then the rest of the chain */
	while ((cert = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL) {
		if ((n == 0 ? SSL_CTX_use_certificate(ctx, cert)
			    : SSL_CTX_add0_chain_cert(ctx, cert)) != 1)
			goto bad;
		if (n == 0)
			X509_free(cert);
		cert = NULL; /* add0: the context owns it */
		n++;
	}
	if (n == 0) {
		snprintf(why, why_len, "no certificate in the PEM data");
		goto out_bad;
	}
	ERR_clear_error(); /* the end of the PEM data */
	BIO_free(b);
	b = BIO_new_mem_buf(key_pem, -1);
	if (b == NULL)
		goto bad;
	key = PEM_read_bio_PrivateKey(b, NULL, NULL, (void *)"");
	if (key == NULL) {
		snprintf(why, why_len, "no private key in the PEM data");
		goto out_bad;
	}
	if (SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_check_private_key(ctx) != 1)
		goto bad;
	EVP_PKEY_free(key);
	BIO_free(b);
	return ctx;
bad:
	tls_error(why, why_len);
out_bad:
	ERR_clear_error();
	X509_free(cert);
	EVP_PKEY_free(key);
	BIO_free(b);
	SSL_CTX_free(ctx);
	return NULL;
}

static struct bufferevent *
make_bufferevent(struct event_base *base, void *userdata)
{
	struct webhook *w = userdata;
	struct bufferevent *bev;
	SSL *ssl;

	if (w->ctx == NULL)
		return NULL;   /* plain: answered 503 */
	ssl = SSL_new(w->ctx); /* holds a reference on the context */
	if (ssl == NULL)
		return NULL;
	bev = bufferevent_openssl_socket_new(
	    base, -1, ssl, BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL) {
		SSL_free(ssl);
		return NULL;
	}
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

static bool
over_tls(struct evhttp_request *req)
{
	struct evhttp_connection *c = evhttp_request_get_connection(req);
	struct bufferevent *bev = c != NULL ? evhttp_connection_get_bufferevent(c) : NULL;

	return bev != NULL && bufferevent_openssl_get_ssl(bev) != NULL;
}

/* --- HTTP ------------------------------------------------------------------------------- */

static void
reply(struct webhook *w, struct evhttp_request *req, int code, const char *reason,
    const char *ctype, const char *body, size_t len)
{
	struct evkeyvalq *h = evhttp_request_get_output_headers(req);
	struct evbuffer *b = evbuffer_new();

	if (b == NULL) {
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	evhttp_add_header(h, "Content-Type", ctype);
	if (w->stopped || w->draining) /* the client reconnects, to another replica */
		evhttp_add_header(h, "Connection", "close");
	evbuffer_add(b, body, len);
	evhttp_send_reply(req, code, reason, b);
	evbuffer_free(b);
}

static void
reply_text(
    struct webhook *w, struct evhttp_request *req, int code, const char *reason, const char *text)
{
	char line[ADMIT_MESSAGE_MAX + 2];
	int n = snprintf(line, sizeof(line), "%s\n", text);

	reply(w, req, code, reason, "text/plain; charset=utf-8", line,
	    n < 0 ? 0 : MIN((size_t)n, sizeof(line) - 1));
}

static bool
json_content_type(struct evhttp_request *req)
{
	const char *ct = evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Type");
	size_t n = strlen("application/json");

	if (ct == NULL)
		return false;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	return strncasecmp(ct, "application/json", n) == 0 &&
	       (ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ' || ct[n] == '\t');
}

static void
log_decision(const struct webhook_review *rv, enum admit_phase phase,
    const struct admit_result *res, bool patched)
{
	char obj[512];
	const char *kind = admit_kind_name(rv->rq.kind), *op = admit_op_name(rv->rq.op);
	const char *ph = phase == ADMIT_MUTATE ? "mutate" : "validate";

	snprintf(obj, sizeof(obj), "%s%s%s", rv->rq.ns, rv->rq.ns[0] ? "/" : "", rv->rq.name);
	if (!res->allowed)
		log_kv(LOG_LEVEL_INFO,
		    LOG_KV("kind", kind, "object", obj, "operation", op, "phase", ph, "user",
			rv->rq.user != NULL ? rv->rq.user : "", "dryRun",
			rv->rq.dry_run ? "true" : "false"),
		    "admission refused (%d): %.*s", res->code, (int)sizeof(res->message),
		    res->message);
	else
		log_kv(LOG_LEVEL_DEBUG,
		    LOG_KV("kind", kind, "object", obj, "operation", op, "phase", ph),
		    "admission allowed%s (%zu warnings)", patched ? " with a patch" : "",
		    res->n_warnings);
}

/*
 * The request's body when it may be a review (over TLS, POST, application/json, within
 * WEBHOOK_BODY_MAX: *body NULL when empty); else false, answered (and counted) here.
 */
static bool
review_body(struct webhook *w, struct evhttp_request *req, uint64_t t0, char **body, size_t *len)
{
	struct evbuffer *in;

	if (!over_tls(req)) {
		reply_text(w, req, 503, "Service Unavailable", "no certificate yet");
		return false;
	}
	if (evhttp_request_get_command(req) != EVHTTP_REQ_POST) {
		evhttp_add_header(evhttp_request_get_output_headers(req), "Allow", "POST");
		reply_text(w, req, 405, "Method Not Allowed", "method not allowed: POST only");
		return false;
	}
	if (!json_content_type(req)) {
		reply_text(
		    w, req, 415, "Unsupported Media Type", "Content-Type must be application/json");
		count(w, UNKNOWN_KIND, UNKNOWN_OP, RES_ERROR, t0);
		return false;
	}
	in = evhttp_request_get_input_buffer(req);
	*len = evbuffer_get_length(in);
	if (*len > WEBHOOK_BODY_MAX) { /* evhttp refuses it first; never trust that alone */
		reply_text(w, req, 413, "Payload Too Large", "request body too large");
		count(w, UNKNOWN_KIND, UNKNOWN_OP, RES_ERROR, t0);
		return false;
	}
	*body = *len > 0 ? (char *)evbuffer_pullup(in, -1) : NULL;
	if (*len > 0 && *body == NULL) {
		reply_text(w, req, 500, "Internal Server Error", "out of memory");
		count(w, UNKNOWN_KIND, UNKNOWN_OP, RES_ERROR, t0);
		return false;
	}
	return true;
}

/* A body that is no AdmissionReview: 413, 500 or 400 with why. */
static void
reply_unparsed(struct webhook *w, struct evhttp_request *req, int r, const char *err)
{
	log_info("admission: refused an AdmissionReview: %s", err);
	reply_text(w, req,
	    r == -E2BIG	   ? 413
	    : r == -ENOMEM ? 500
			   : 400,
	    r == -E2BIG	   ? "Payload Too Large"
	    : r == -ENOMEM ? "Internal Server Error"
			   : "Bad Request",
	    err);
}

/* The rules' decision on rv, kept within what an answer may carry (res zeroed first). */
static void
decide(
    struct webhook *w, enum admit_phase phase, struct webhook_review *rv, struct admit_result *res)
{
	rv->rq.phase = phase;
	memset(res, 0, sizeof(*res));
	w->admit(w->userdata, &rv->rq, res);
	if (res->n_warnings > ADMIT_WARNINGS_MAX)
		res->n_warnings = ADMIT_WARNINGS_MAX;
	if (res->patch != NULL && (phase != ADMIT_MUTATE || !res->allowed)) {
		json_decref(res->patch); /* a patch only from the mutating phase, when allowed */
		res->patch = NULL;
	}
}

static void
review_cb(struct evhttp_request *req, void *arg)
{
	struct route *rt = arg;
	struct webhook *w = rt->w;
	uint64_t t0 = clock_now_usec();
	struct webhook_review rv;
	struct admit_result res;
	enum result_label result;
	char err[ADMIT_MESSAGE_MAX];
	size_t len = 0;
	char *body = NULL, *answer;
	int r;

	if (!review_body(w, req, t0, &body, &len))
		return;
	r = webhook_review_parse(body, len, &rv, err, sizeof(err));
	if (r < 0) {
		reply_unparsed(w, req, r, err);
		count(w, UNKNOWN_KIND, UNKNOWN_OP, RES_ERROR, t0);
		return;
	}
	decide(w, rt->phase, &rv, &res);
	answer = webhook_review_answer(rv.api_version, rv.uid, &res);
	if (answer == NULL)
		result = RES_ERROR;
	else if (!res.allowed)
		result = res.code >= 500 ? RES_ERROR : RES_DENIED;
	else
		result = webhook_review_has_patch(&res) ? RES_PATCHED : RES_ALLOWED;
	log_decision(&rv, rt->phase, &res, result == RES_PATCHED);
	if (answer != NULL) {
		reply(w, req, 200, "OK", "application/json", answer, strlen(answer));
		free(answer);
	} else {
		reply_text(w, req, 500, "Internal Server Error", "out of memory");
	}
	count(w, rv.rq.kind, rv.rq.op, result, t0);
	json_decref(res.patch);
	webhook_review_clear(&rv);
}

bool
webhook_ready(const struct webhook *w, char *reason, size_t len)
{
	if (w->stopped || w->draining) {
		snprintf(reason, len, "admission webhook: shutting down (draining)");
		return false;
	}
	if (w->ctx == NULL) {
		snprintf(reason, len, "admission webhook: no certificate yet");
		return false;
	}
	return true;
}

static bool
ready_cb(void *userdata, char *reason, size_t len)
{
	return webhook_ready(userdata, reason, len);
}

int
webhook_new(struct event_base *base, const struct webhook_opts *opts, struct webhook **ret)
{
	struct webhook *w;
	int r;

	if (base == NULL || opts == NULL || opts->admit == NULL || opts->listen == NULL ||
	    ret == NULL)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (w == NULL)
		return -ENOMEM;
	w->base = base;
	w->admit = opts->admit;
	w->userdata = opts->userdata;
	w->mutate = (struct route){w, ADMIT_MUTATE};
	w->validate = (struct route){w, ADMIT_VALIDATE};
	if (opts->metrics != NULL) {
		/* the histogram first: the counters' family refers to w */
		w->duration = metrics_add(opts->metrics, METRIC_HISTOGRAM,
		    "vmdhcp_admission_duration_seconds",
		    "Time from an AdmissionReview's arrival to its answer.", NULL, NULL, 0,
		    duration_buckets, sizeof(duration_buckets) / sizeof(duration_buckets[0]));
		w->requests = w->duration == NULL
				  ? NULL
				  : metrics_add_dynamic(opts->metrics, METRIC_COUNTER,
					"vmdhcp_admission_requests_total",
					"AdmissionReviews answered, by kind, operation and result "
					"(allowed, patched, denied, error).",
					emit_requests, w);
		if (w->requests == NULL) {
			r = errno == ENOMEM ? -ENOMEM : -EEXIST;
			free(w);
			return r;
		}
	}
	r = httpd_new(base, opts->listen, NULL, &w->httpd);
	if (r < 0) {
		free(w);
		return r;
	}
	httpd_set_methods(w->httpd, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD | EVHTTP_REQ_POST |
					EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE | EVHTTP_REQ_PATCH |
					EVHTTP_REQ_OPTIONS);
	httpd_set_max_body_size(w->httpd, WEBHOOK_BODY_MAX);
	/* a whole request without stopping (see lib/httpd.h: OpenSSL's bufferevent stalls at
	 * the watermark) */
	httpd_set_read_buffer_max(w->httpd, WEBHOOK_BODY_MAX + 2 * HTTPD_MAX_HEADERS_SIZE);
	httpd_set_max_connections(w->httpd, WEBHOOK_MAX_CONNECTIONS);
	httpd_set_timeout(w->httpd, WEBHOOK_TIMEOUT_MSEC);
	/* the API server (a few addresses) is nearly the only client: no per-address limit
	 * below the table's; a request (TLS handshake included) within the API server's own
	 * webhook timeout */
	httpd_set_max_per_peer(w->httpd, 0);
	httpd_set_request_deadline(w->httpd, WEBHOOK_TIMEOUT_MSEC);
	httpd_set_bufferevent(w->httpd, make_bufferevent, w);
	httpd_set_ready(w->httpd, ready_cb, w);
	httpd_remove_handler(w->httpd, "/metrics"); /* on the metrics port, not here */
	if (httpd_add_handler(w->httpd, "/mutate", review_cb, &w->mutate) < 0 ||
	    httpd_add_handler(w->httpd, "/validate", review_cb, &w->validate) < 0) {
		webhook_free(w);
		return -ENOMEM;
	}
	*ret = w;
	return 0;
}

struct webhook *
webhook_free(struct webhook *w)
{
	if (w == NULL)
		return NULL;
	httpd_free(w->httpd);
	SSL_CTX_free(w->ctx);
	free(w);
	return NULL;
}

int
webhook_set_cert(struct webhook *w, const char *cert_pem, const char *key_pem)
{
	char why[256] = "";
	SSL_CTX *ctx;

	if (cert_pem == NULL || key_pem == NULL)
		return -EINVAL;
	ctx = make_ctx(cert_pem, key_pem, why, sizeof(why));
	if (ctx == NULL) {
		log_debug("admission webhook: the certificate does not load: %s; keeping the %s",
		    why, w->ctx != NULL ? "previous one" : "server unready");
		return -EINVAL;
	}
	/* connections made with the old context hold their own references to it */
	SSL_CTX_free(w->ctx);
	w->ctx = ctx;
	w->cert_swaps++;
	log_debug("admission webhook: %s certificate for new connections",
	    w->cert_swaps == 1 ? "serving with a" : "a new");
	return 0;
}

void
webhook_drain(struct webhook *w)
{
	if (w->draining || w->stopped)
		return;
	w->draining = true;
	log_info("admission webhook: draining: each reply asks its client to close the connection");
}

void
webhook_stop_accepting(struct webhook *w)
{
	if (w->stopped)
		return;
	w->stopped = true;
	httpd_stop_accepting(w->httpd);
	log_info("admission webhook: no longer accepting connections");
}

int
webhook_set_timeout(struct webhook *w, unsigned msec)
{
	return httpd_set_timeout(w->httpd, msec);
}

int
webhook_port(const struct webhook *w)
{
	return httpd_port(w->httpd);
}

unsigned
webhook_connections(const struct webhook *w)
{
	return httpd_connections(w->httpd);
}
