/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission webhook's certificates (the design is in controller/webcert.h): the Secret
 * read and written, the serving pair handed on, readiness. Beside it: webcert-x509.c (the
 * certificate material, OpenSSL), webcert-plan.c (the next write, decided from the Secret's
 * content and the time), webcert-cabundle.c (the webhook configurations' caBundle).
 *
 * State: the Secret, read by an informer limited to its name (fieldSelector
 * metadata.name=NAME, so RBAC may grant get/list/watch on that resourceName only), is the
 * truth shared by the replicas. Each pass (reconcile) takes the Secret as last seen (or as
 * this replica last wrote it, until the informer has caught up), parses it, hands a changed
 * serving pair to on_cert, has the webhook configurations' caBundle checked when ca.crt
 * changed, and decides at most one write:
 *
 *   absent                      create it with a new CA and serving certificate
 *   ca.crt/ca.key unusable      fill: a new CA and serving certificate (update)
 *   serving pair broken, expired or not signed by a CA of the bundle
 *                               a serving certificate from the current CA at once
 *   CA past 2/3 of its validity add a new CA in front of the bundle (it signs from now on);
 *                               the serving certificate stays
 *   serving certificate past 2/3 of its validity, or lacking a wanted SAN
 *                               signed by the current CA: renew at once; signed by an older
 *                               CA of the bundle (a CA rotation half done): renew only once
 *                               every webhook configuration trusts the bundle (patched, or
 *                               absent) and a short settling time has passed
 *   an older CA expired         drop it from the bundle
 *
 * Writes are conditional (create, or update with the resourceVersion read): a replica that
 * loses (409) takes the winner's content from the informer. A 403 on create is reported
 * (the chart creates the Secret) and retried.
 *
 * The caBundle of each named configuration is compared and written (GET, PUT with its
 * resourceVersion, again on conflict: kube_update_retry) when ca.crt changes, every 60 s
 * (a `helm upgrade` that resets it is repaired) and on webcert_recheck; a check that failed
 * (not a missing configuration) again after 1 s, doubling up to 60 s. A configuration that
 * does not exist is never created; it is looked for again at those times.
 *
 * The settling time of a CA rotation is a tenth of the serving validity, at most 30 s of the
 * wall clock, counted from this replica's first check that found every caBundle set: room for
 * the API servers to load the new caBundle before a certificate they need it for is served.
 *
 * Ready: a serving pair is known, and the caBundle last seen in each configuration holds the
 * CA that signed it (a configuration not found is not ready; a check that fails while the
 * caBundle in place still trusts the serving certificate is a note, not a failure: every
 * replica turning unready at once would take the Service's endpoints away).
 *
 * Metrics (when a registry is given): vmdhcp_admission_certificate_expiry_timestamp_seconds
 * (notAfter of the serving certificate in use), vmdhcp_admission_certificate_rotations_total
 * (this replica's writes of the Secret). Log: one info line per write (fill, renewal, CA
 * rotation step, CA dropped) and per caBundle set, with names and notAfter.
 */
#include "controller/webcert.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>
#include <openssl/err.h>
#include <openssl/x509.h>

#include "controller/webcert-cabundle.h"
#include "controller/webcert-plan.h"
#include "controller/webcert-x509.h"
#include "kube/kube.h"
#include "lib/log.h"
#include "lib/metrics.h"

#define SYNC_POLL_MS 50	      /* until the Secret's informer has synced */
#define RETRY_MIN_MS 1000     /* a failed write: again after 1 s, doubling ... */
#define RETRY_MAX_MS 60000    /* ... up to 60 s (and after a refused create) */
#define CONFLICT_WAIT_MS 5000 /* a lost race: the winner's content comes by the watch */

static const struct kube_resource res_secrets = {"", "v1", "secrets", "Secret", true};

struct webcert {
	struct event_base *base;
	struct kube_client *client;
	/* options, copied */
	char *ns, *secret, *service;
	struct webcert_names names; /* of the serving certificate */
	uint64_t validity_s;
	int64_t (*now)(void *userdata);
	void (*on_cert)(void *userdata, const char *cert_pem, const char *key_pem);
	void *userdata;
	struct metric *m_expiry, *m_rotations;

	struct kube_informer *inf;
	char key[512]; /* "ns/name" in the store */
	struct event *kick, *due, *retry, *cfg_timer;
	bool started;

	/* writes */
	struct kube_call *write_call;
	bool write_create;
	char write_what[512];
	char *based_rv;	 /* the resourceVersion the last write was based on ("" = absent) */
	bool waiting;	 /* until the informer's copy moves past based_rv */
	json_t *written; /* what the last successful write returned (while waiting) */
	bool hold;	 /* no write until the retry timer (failures, refused create) */
	bool stopped;	 /* webcert_stop: the replica is leaving, it writes nothing more */
	bool create_denied;
	unsigned failures;
	char status[512]; /* why not ready, about the Secret */

	/* what is in use: the serving pair, and the caBundle wanted in the configurations */
	char *served_cert, *served_key;
	int64_t served_not_after;
	struct webcert_cabundles cabundles;
};

/* --- small helpers ------------------------------------------------------------------------ */

static char *
xstrdup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

static int64_t
wc_now(const struct webcert *wc)
{
	return wc->now != NULL ? wc->now(wc->userdata) : (int64_t)time(NULL);
}

/* --- timers ----------------------------------------------------------------------------------- */

static void
kick(struct webcert *wc)
{
	if (wc->started && !event_pending(wc->kick, EV_TIMEOUT, NULL))
		event_active(wc->kick, EV_TIMEOUT, 0);
}

static void
timer_in_ms(struct event *ev, uint64_t ms)
{
	struct timeval tv = {
	    .tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	evtimer_add(ev, &tv);
}

static void
retry_later(struct webcert *wc, uint64_t ms)
{
	wc->hold = true;
	timer_in_ms(wc->retry, ms);
}

static uint64_t
backoff_ms(struct webcert *wc)
{
	uint64_t ms = RETRY_MIN_MS;

	for (unsigned i = 1; i < wc->failures && ms < RETRY_MAX_MS; i++)
		ms *= 2;
	return ms < RETRY_MAX_MS ? ms : RETRY_MAX_MS;
}

/* --- reconcile -------------------------------------------------------------------------------- */

static void reconcile(struct webcert *wc);

/* The Secret as last seen, or as this replica last wrote it until the informer caught up.
 * *wait: a write lost a race and the winner's content has not arrived yet. */
static const json_t *
effective(struct webcert *wc, bool *wait)
{
	const json_t *obj = kube_store_get(kube_informer_store(wc->inf), wc->key);
	const char *rv = obj != NULL ? kube_obj_resource_version(obj) : "";

	*wait = false;
	if (wc->waiting) {
		if (strcmp(rv != NULL ? rv : "", wc->based_rv != NULL ? wc->based_rv : "") == 0) {
			if (wc->written != NULL)
				return wc->written;
			*wait = true;
			return NULL;
		}
		wc->waiting = false;
		json_decref(wc->written);
		wc->written = NULL;
	}
	return obj;
}

/* Takes in what the Secret holds: the caBundle wanted, the serving pair. */
static void
adopt(struct webcert *wc, const struct webcert_material *m, int64_t now)
{
	if (m->ca_ok)
		webcert_cabundles_want(&wc->cabundles, m->ca_pem);
	if (m->leaf_ok && (wc->served_cert == NULL || strcmp(wc->served_cert, m->tls_crt) != 0 ||
			      strcmp(wc->served_key, m->tls_key) != 0)) {
		char *c = strdup(m->tls_crt), *k = strdup(m->tls_key);
		char na[RFC3339_MAX], ca_na[RFC3339_MAX] = "none";

		if (c == NULL || k == NULL) {
			free(c);
			free(k);
			return;
		}
		free(wc->served_cert);
		free(wc->served_key);
		wc->served_cert = c;
		wc->served_key = k;
		wc->served_not_after = webcert_not_after(m->leaf);
		webcert_fmt_time(wc->served_not_after, na);
		for (size_t i = 0; i < m->ncas; i++)
			if (webcert_issued_by(m->cas[i], m->leaf))
				webcert_fmt_time(webcert_not_after(m->cas[i]), ca_na);
		log_info(
		    "webhook certificate: serving the certificate of Secret %s/%s (notAfter %s, "
		    "CA notAfter %s)",
		    wc->ns, wc->secret, na, ca_na);
		if (wc->m_expiry != NULL)
			metric_set(wc->m_expiry, 0, (double)wc->served_not_after);
		if (wc->on_cert != NULL)
			wc->on_cert(wc->userdata, wc->served_cert, wc->served_key);
	}
	(void)now;
}

static void
write_done(void *userdata, const struct kube_result *res)
{
	struct webcert *wc = userdata;

	wc->write_call = NULL;
	if (res->error == 0) {
		log_info("webhook certificate: %s", wc->write_what);
		if (wc->m_rotations != NULL)
			metric_inc(wc->m_rotations, 0);
		wc->failures = 0;
		wc->create_denied = false;
		wc->waiting = true;
		json_decref(wc->written);
		wc->written = json_is_object(res->object) ? json_incref(res->object) : NULL;
		if (wc->written == NULL) /* no answer to go by: the watch brings it */
			timer_in_ms(wc->retry, CONFLICT_WAIT_MS);
	} else if (res->error == -EEXIST || res->error == -ESTALE) {
		log_info("webhook certificate: Secret %s/%s was written by another replica first; "
			 "using its content",
		    wc->ns, wc->secret);
		wc->waiting = true;
		json_decref(wc->written);
		wc->written = NULL;
		timer_in_ms(wc->retry, CONFLICT_WAIT_MS);
	} else if (res->error == -EACCES && wc->write_create) {
		if (!wc->create_denied)
			log_warn(
			    "webhook certificate: Secret %s/%s does not exist and this service "
			    "account may not create it (%s); the chart creates it: waiting for it",
			    wc->ns, wc->secret, res->message != NULL ? res->message : "");
		wc->create_denied = true;
		snprintf(wc->status, sizeof(wc->status),
		    "Secret %s/%s does not exist and may not be created here (the chart creates "
		    "it)",
		    wc->ns, wc->secret);
		retry_later(wc, RETRY_MAX_MS);
	} else {
		wc->failures++;
		log_warn("webhook certificate: cannot write Secret %s/%s: %s: %s (again in %" PRIu64
			 " ms)",
		    wc->ns, wc->secret, kube_errno_name(res->error),
		    res->message != NULL ? res->message : "", backoff_ms(wc));
		snprintf(wc->status, sizeof(wc->status), "cannot write Secret %s/%s: %s", wc->ns,
		    wc->secret, kube_errno_name(res->error));
		retry_later(wc, backoff_ms(wc));
	}
	kick(wc);
}

static int
start_write(struct webcert *wc, const json_t *secret, json_t *data)
{
	json_t *obj;
	const char *rv = secret != NULL ? kube_obj_resource_version(secret) : "";
	int r;

	if (secret == NULL) {
		obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:O}", "apiVersion", "v1", "kind",
		    "Secret", "metadata", "name", wc->secret, "namespace", wc->ns, "type",
		    "kubernetes.io/tls", "data", data);
	} else {
		json_t *d;
		const char *k;
		json_t *v;

		obj = json_deep_copy(secret);
		d = json_object_get(obj, "data");
		if (obj != NULL && !json_is_object(d)) {
			d = json_object();
			json_object_set_new(obj, "data", d);
		}
		json_object_foreach(data, k, v) json_object_set(d, k, v);
	}
	if (obj == NULL)
		return -ENOMEM;
	free(wc->based_rv);
	wc->based_rv = strdup(rv != NULL ? rv : "");
	wc->write_create = secret == NULL;
	r = secret == NULL
		? kube_create(
		      wc->client, &res_secrets, wc->ns, obj, write_done, wc, &wc->write_call)
		: kube_update(wc->client, &res_secrets, obj, write_done, wc, &wc->write_call);
	json_decref(obj);
	return r;
}

static void
reconcile(struct webcert *wc)
{
	const json_t *secret;
	struct webcert_material m;
	struct webcert_plan p;
	struct webcert_plan_in in;
	int64_t now;
	bool wait;
	int r;

	if (!kube_informer_has_synced(wc->inf)) {
		timer_in_ms(wc->due, SYNC_POLL_MS);
		return;
	}
	if (wc->write_call != NULL)
		return; /* its end looks again */
	secret = effective(wc, &wait);
	if (wait)
		return; /* the winner's content is on its way (or the retry timer looks again) */
	now = wc_now(wc);
	webcert_material_parse(&m, secret, now);
	adopt(wc, &m, now);
	if (wc->hold || wc->stopped) {
		webcert_material_free(&m);
		return;
	}
	in = (struct webcert_plan_in){.ns = wc->ns,
	    .secret = wc->secret,
	    .names = &wc->names,
	    .validity_s = wc->validity_s,
	    .ca_validity_s = wc->validity_s * WEBCERT_CA_VALIDITY_FACTOR,
	    .bundle_ok_since = wc->cabundles.ok_since};
	r = webcert_plan(&in, &m, now, &p);
	if (r > 0) {
		json_t *data = webcert_plan_data(&p, &m);

		snprintf(wc->write_what, sizeof(wc->write_what), "%s", p.what);
		r = data != NULL ? start_write(wc, secret, data) : -ENOMEM;
		json_decref(data);
		if (r == 0 && wc->served_cert == NULL)
			snprintf(wc->status, sizeof(wc->status), "writing Secret %s/%s", wc->ns,
			    wc->secret);
	}
	if (r < 0) {
		wc->failures++;
		log_warn("webhook certificate: cannot make or write certificates for Secret %s/%s: "
			 "%s",
		    wc->ns, wc->secret, strerror(-r));
		retry_later(wc, backoff_ms(wc));
	} else if (r == 0) {
		int64_t d = p.next - now;

		if (d < 1)
			d = 1;
		if (d > WEBCERT_MAX_RECHECK_S)
			d = WEBCERT_MAX_RECHECK_S;
		timer_in_ms(wc->due, (uint64_t)d * 1000);
	}
	webcert_plan_clear(&p);
	webcert_material_free(&m);
}

/* --- events ---------------------------------------------------------------------------------- */

static void
kick_cb(evutil_socket_t fd, short what, void *arg)
{
	reconcile(arg);
}

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct webcert *wc = arg;

	wc->hold = false;
	if (wc->waiting && wc->written == NULL)
		wc->waiting = false; /* the winner's content never came: read again */
	reconcile(wc);
}

static void
cfg_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct webcert *wc = arg;

	webcert_cabundles_check(&wc->cabundles);
	kick(wc);
}

static void
secret_changed(struct webcert *wc)
{
	wc->hold = false;
	event_del(wc->retry);
	kick(wc);
}

static void
on_add(void *userdata, const char *key, const void *item)
{
	secret_changed(userdata);
}

static void
on_update(void *userdata, const char *key, const void *old, const void *item)
{
	secret_changed(userdata);
}

/* --- public ---------------------------------------------------------------------------------- */

/* The caBundles' callbacks: the clock, and every configuration trusting the bundle. */
static int64_t
cabundles_now(void *userdata)
{
	return wc_now(userdata);
}

static void
cabundles_trusted(void *userdata)
{
	kick(userdata);
}

/* The serving certificate's names: the Service's (svc, svc.ns, svc.ns.svc,
 * svc.ns.svc.cluster.local), then the extra ones. */
static int
add_names(struct webcert *wc, const struct webcert_opts *opts)
{
	char entry[300];
	int r = 0;

	if (wc->service != NULL) {
		static const char *const suffixes[] = {"", "", ".svc", ".svc.cluster.local"};

		for (size_t i = 0; i < 4; i++) {
			snprintf(entry, sizeof(entry), "DNS:%s%s%s%s", wc->service,
			    i > 0 ? "." : "", i > 0 ? wc->ns : "", suffixes[i]);
			if ((r = webcert_names_add(&wc->names, entry)) < 0)
				return r;
		}
	}
	for (size_t i = 0; i < opts->n_extra_sans; i++)
		if (opts->extra_sans[i] == NULL ||
		    (r = webcert_names_add(&wc->names, opts->extra_sans[i])) < 0)
			return r < 0 ? r : -EINVAL;
	return 0;
}

static int
add_metrics(struct webcert *wc, struct metrics *metrics)
{
	wc->m_expiry = metrics_add_simple(metrics, METRIC_GAUGE,
	    "vmdhcp_admission_certificate_expiry_timestamp_seconds",
	    "notAfter of the admission webhook's serving certificate in use (Unix time)");
	wc->m_rotations = metrics_add_simple(metrics, METRIC_COUNTER,
	    "vmdhcp_admission_certificate_rotations_total",
	    "Writes of the webhook certificate Secret by this replica: first fill, serving "
	    "certificate renewals, CA rotation steps");
	return wc->m_expiry == NULL || wc->m_rotations == NULL ? -ENOMEM : 0;
}

int
webcert_new(struct event_base *base, struct kube_client *client, const struct webcert_opts *opts,
    struct webcert **ret)
{
	struct webcert *wc;
	int r = -ENOMEM;

	if (base == NULL || client == NULL || opts == NULL || ret == NULL || opts->ns == NULL ||
	    !webcert_dns_name_ok(opts->ns) || opts->secret == NULL ||
	    !webcert_dns_name_ok(opts->secret) ||
	    (opts->service != NULL && !webcert_dns_name_ok(opts->service)) ||
	    (opts->n_extra_sans > 0 && opts->extra_sans == NULL) ||
	    (opts->n_mutating > 0 && opts->mutating == NULL) ||
	    (opts->n_validating > 0 && opts->validating == NULL) ||
	    (opts->service == NULL && opts->n_extra_sans == 0) || opts->n_extra_sans > 64 ||
	    opts->validity_s > 100ull * 365 * 24 * 3600 ||
	    (opts->validity_s != 0 && opts->validity_s < 3))
		return -EINVAL;
	wc = calloc(1, sizeof(*wc));
	if (wc == NULL)
		return -ENOMEM;
	wc->base = base;
	wc->client = client;
	wc->validity_s = opts->validity_s != 0 ? opts->validity_s : WEBCERT_VALIDITY_DEFAULT_S;
	wc->now = opts->now;
	wc->on_cert = opts->on_cert;
	wc->userdata = opts->userdata;
	wc->ns = strdup(opts->ns);
	wc->secret = strdup(opts->secret);
	wc->service = xstrdup(opts->service);
	wc->names.sans = calloc(4 + opts->n_extra_sans, sizeof(*wc->names.sans));
	wc->cabundles = (struct webcert_cabundles){.base = base,
	    .client = client,
	    .ns = wc->ns,
	    .secret = wc->secret,
	    .now = cabundles_now,
	    .on_trusted = cabundles_trusted,
	    .userdata = wc};
	if (wc->ns == NULL || wc->secret == NULL ||
	    (opts->service != NULL && wc->service == NULL) || wc->names.sans == NULL)
		goto fail;
	snprintf(wc->key, sizeof(wc->key), "%s/%s", wc->ns, wc->secret);
	if ((r = add_names(wc, opts)) < 0 ||
	    (r = webcert_cabundles_add(&wc->cabundles, opts->mutating, opts->n_mutating,
		 opts->validating, opts->n_validating)) < 0)
		goto fail;
	r = -ENOMEM;
	wc->kick = event_new(base, -1, 0, kick_cb, wc);
	wc->due = evtimer_new(base, kick_cb, wc);
	wc->retry = evtimer_new(base, retry_cb, wc);
	wc->cfg_timer = event_new(base, -1, EV_PERSIST, cfg_timer_cb, wc);
	if (wc->kick == NULL || wc->due == NULL || wc->retry == NULL || wc->cfg_timer == NULL)
		goto fail;
	snprintf(wc->status, sizeof(wc->status), "reading Secret %s/%s", wc->ns, wc->secret);
	if (opts->metrics != NULL && add_metrics(wc, opts->metrics) < 0)
		goto fail;
	*ret = wc;
	return 0;
fail:
	webcert_free(wc);
	return r;
}

int
webcert_start(struct webcert *wc)
{
	char fs[300];
	struct kube_informer_opts io = {
	    .res = &res_secrets,
	    .ns = wc->ns,
	    .field_selector = fs,
	};
	struct kube_informer_handlers h = {
	    .on_add = on_add, .on_update = on_update, .on_delete = on_add, .userdata = wc};
	struct timeval tv = {.tv_sec = WEBCERT_CONFIG_RECHECK_S};
	int r;

	if (wc->started)
		return -EALREADY;
	snprintf(fs, sizeof(fs), "metadata.name=%s", wc->secret);
	if ((r = kube_informer_new(wc->client, &io, &wc->inf)) < 0 ||
	    (r = kube_informer_add_handlers(wc->inf, &h)) < 0 ||
	    (r = kube_informer_start(wc->inf)) < 0) {
		wc->inf = kube_informer_free(wc->inf);
		return r;
	}
	event_add(wc->cfg_timer, &tv);
	wc->started = true;
	kick(wc);
	return 0;
}

struct webcert *
webcert_free(struct webcert *wc)
{
	if (wc == NULL)
		return NULL;
	kube_call_cancel(wc->write_call);
	webcert_cabundles_clear(&wc->cabundles);
	kube_informer_free(wc->inf);
	if (wc->kick != NULL)
		event_free(wc->kick);
	if (wc->due != NULL)
		event_free(wc->due);
	if (wc->retry != NULL)
		event_free(wc->retry);
	if (wc->cfg_timer != NULL)
		event_free(wc->cfg_timer);
	webcert_names_clear(&wc->names);
	free(wc->ns);
	free(wc->secret);
	free(wc->service);
	free(wc->based_rv);
	json_decref(wc->written);
	free(wc->served_cert);
	free(wc->served_key);
	free(wc);
	return NULL;
}

static X509 *
parse_served(const struct webcert *wc)
{
	X509 *leaf = NULL;

	if (webcert_parse_certs(wc->served_cert, &leaf, 1) == 0)
		leaf = NULL;
	ERR_clear_error();
	return leaf;
}

/* b64 (a caBundle) holds the CA that signed leaf. */

bool
webcert_ready(const struct webcert *wc, char *reason, size_t len)
{
	char buf[400], note[512] = "";
	X509 *leaf;

	if (reason != NULL && len > 0)
		reason[0] = '\0';
	if (wc == NULL || !wc->started) {
		snprintf(reason, len, "webhook certificate: not started");
		return false;
	}
	if (!kube_informer_has_synced(wc->inf)) {
		if (!kube_informer_describe_failure(wc->inf, buf, sizeof(buf)))
			snprintf(buf, sizeof(buf), "reading Secret %s/%s", wc->ns, wc->secret);
		snprintf(reason, len, "webhook certificate: %s", buf);
		return false;
	}
	if (wc->served_cert == NULL) {
		snprintf(reason, len, "webhook certificate: %s", wc->status);
		return false;
	}
	if (wc->served_not_after <= wc_now(wc)) {
		snprintf(reason, len, "webhook certificate: the serving certificate has expired");
		return false;
	}
	leaf = parse_served(wc);
	if (!webcert_cabundles_ready(&wc->cabundles, leaf, reason, len, note, sizeof(note))) {
		X509_free(leaf);
		return false;
	}
	X509_free(leaf);
	snprintf(reason, len, "%s", note);
	return true;
}

void
webcert_stop(struct webcert *wc)
{
	if (wc == NULL || wc->stopped)
		return;
	wc->stopped = true;
	log_info("webhook certificate: stopping: Secret %s/%s left to the other replicas", wc->ns,
	    wc->secret);
}

void
webcert_recheck(struct webcert *wc)
{
	if (wc == NULL || !wc->started)
		return;
	wc->hold = false;
	event_del(wc->retry);
	webcert_cabundles_check(&wc->cabundles);
	kick(wc);
}
