/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_WEBHOOK_H
#define VMDHCP_CONTROLLER_WEBHOOK_H

/*
 * The admission webhook's HTTPS server, on the controller's event_base: POST /mutate and
 * POST /validate take an admission.k8s.io/v1 AdmissionReview (v1beta1 answered in kind),
 * hand the request to the rules (admit.h, through the callback) and answer the review.
 * TLS 1.2 or newer only (OpenSSL); the certificate and key are set, and replaced at any
 * time, with webhook_set_cert (new connections use the new pair). Bodies are bounded in
 * size and nesting depth before they are parsed. Every replica serves (not leader-only).
 *
 * Metrics (on the registry given): vmdhcp_admission_requests_total{kind,operation,result}
 * (result: allowed, patched, denied, error) and vmdhcp_admission_duration_seconds
 * (histogram).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/admit.h"
#include "controller/webhook-review.h"

struct event_base;
struct metrics;
struct webhook;

typedef void (*webhook_admit_fn)(
    void *userdata, const struct admit_request *rq, struct admit_result *res);

/* Connections at once, and the read/write inactivity timeout of one, also the request
 * deadline; no per-address limit (lib/httpd's limits otherwise: HTTPD_MAX_HEADERS_SIZE,
 * accept back-off, the table's drop order). */
#define WEBHOOK_MAX_CONNECTIONS 128
#define WEBHOOK_TIMEOUT_MSEC 10000

struct webhook_opts {
	const char *listen;	 /* "HOST:PORT", ":PORT" or "[V6]:PORT" */
	struct metrics *metrics; /* borrowed, may be NULL */
	webhook_admit_fn admit;	 /* required */
	void *userdata;
};

/*
 * Listens at once; answers 503 until a certificate is set. 0 and *ret, or negative errno
 * (-EINVAL: no admit callback or a bad listen address, which takes a numeric host or
 * "localhost"; -EADDRINUSE; -EEXIST: the registry has the metrics already). The metrics
 * registry must not be rendered after webhook_free (its counters family reads the webhook).
 * Also served: GET /healthz ("ok") and GET /readyz (webhook_ready), over TLS once a
 * certificate is set. A GET of another path answers 404; any other method than POST on
 * /mutate and /validate, and than GET/HEAD elsewhere, 405 (lib/httpd's).
 */
int webhook_new(struct event_base *base, const struct webhook_opts *opts, struct webhook **ret);
struct webhook *webhook_free(struct webhook *w);
/* PEM certificate chain and private key (copied). 0, or -EINVAL when they do not load or
 * do not match (the previous pair stays). */
int webhook_set_cert(struct webhook *w, const char *cert_pem, const char *key_pem);
/* Serving with a certificate: true; else false and why in reason. */
bool webhook_ready(const struct webhook *w, char *reason, size_t len);
/*
 * The replica is leaving (SIGTERM): still accepting and serving, not ready, and every reply
 * carries Connection: close, so that the API server stops reusing its kept-alive connections
 * to this replica during the drain instead of finding them cut when the process exits.
 */
void webhook_drain(struct webhook *w);
/* Stop accepting new connections (shutdown drain); connections open are served. */
void webhook_stop_accepting(struct webhook *w);
/* The inactivity timeout for connections accepted from now on (WEBHOOK_TIMEOUT_MSEC; tests
 * use short ones): 0 or -EINVAL (0 ms). */
int webhook_set_timeout(struct webhook *w, unsigned msec);
/* The port bound (":0" in tests), open connections, and requests_total{kind,op,result}
 * (a kind or op out of range: the "unknown" series of reviews that did not parse). */
int webhook_port(const struct webhook *w);
unsigned webhook_connections(const struct webhook *w);
uint64_t webhook_count(
    const struct webhook *w, enum admit_kind kind, enum admit_op op, const char *result);

#endif
