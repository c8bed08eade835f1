/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The webhook configurations' caBundle (webcert-cabundle.h): each named configuration is
 * read and written with its resourceVersion (kube_update_retry) when the bundle wanted
 * changes and when the owner asks; a check that failed (not a missing configuration) again
 * after 1 s, doubling up to 60 s.
 */
#include "controller/webcert-cabundle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "controller/webcert-x509.h"
#include "kube/kube.h"
#include "lib/log.h"

#define RETRY_MIN_MS 1000  /* a failed check: again after 1 s, doubling ... */
#define RETRY_MAX_MS 60000 /* ... up to 60 s */

static const struct kube_resource res_mutating = {"admissionregistration.k8s.io", "v1",
    "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false};
static const struct kube_resource res_validating = {"admissionregistration.k8s.io", "v1",
    "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false};

enum cfg_state {
	CFG_UNKNOWN,
	CFG_OK,	     /* every webhooks[].clientConfig.caBundle equals ok_b64 */
	CFG_MISSING, /* 404 */
	CFG_FAILED,
};

struct webcert_cfg {
	struct webcert_cabundles *cb;
	const struct kube_resource *res;
	char *name;
	struct kube_call *call;
	char *want;   /* the caBundle the call in flight writes */
	char *ok_b64; /* the caBundle last seen in place (kept when a later check fails) */
	enum cfg_state state;
	unsigned patched; /* webhooks changed by the last mutate */
	char err[256];
	unsigned failures;   /* failed checks in a row */
	struct event *retry; /* after a failed check: again after 1 s, doubling up to 60 s */
};

static void update_bundle_ok(struct webcert_cabundles *cb);

static int64_t
cb_now(const struct webcert_cabundles *cb)
{
	return cb->now != NULL ? cb->now(cb->userdata) : (int64_t)time(NULL);
}

static int
cfg_mutate(void *userdata, json_t *obj)
{
	struct webcert_cfg *cf = userdata;
	json_t *hooks = json_object_get(obj, "webhooks"), *h;
	size_t i;

	cf->patched = 0;
	json_array_foreach(hooks, i, h)
	{
		json_t *cc = json_object_get(h, "clientConfig");
		const char *cur;

		if (!json_is_object(cc)) {
			cc = json_object();
			if (cc == NULL || json_object_set_new(h, "clientConfig", cc) < 0)
				return -ENOMEM;
		}
		cur = json_string_value(json_object_get(cc, "caBundle"));
		if (cur != NULL && strcmp(cur, cf->want) == 0)
			continue;
		if (json_object_set_new(cc, "caBundle", json_string(cf->want)) < 0)
			return -ENOMEM;
		cf->patched++;
	}
	return cf->patched > 0 ? 0 : 1;
}

static void
cfg_done(void *userdata, const struct kube_result *res)
{
	struct webcert_cfg *cf = userdata;
	struct webcert_cabundles *cb = cf->cb;
	enum cfg_state old = cf->state;

	cf->call = NULL;
	if (res->error == 0) {
		if (cf->patched > 0)
			log_info(
			    "webhook certificate: caBundle of %s %s set to the CA bundle of Secret "
			    "%s/%s (%u webhook%s)",
			    cf->res->kind, cf->name, cb->ns, cb->secret, cf->patched,
			    cf->patched == 1 ? "" : "s");
		cf->state = CFG_OK;
		free(cf->ok_b64);
		cf->ok_b64 = cf->want;
		cf->want = NULL;
		cf->err[0] = '\0';
	} else if (res->error == -ENOENT) {
		if (old != CFG_MISSING)
			log_warn(
			    "webhook certificate: %s %s not found; its caBundle is set once it "
			    "exists (checked every %d s)",
			    cf->res->kind, cf->name, WEBCERT_CONFIG_RECHECK_S);
		cf->state = CFG_MISSING;
		free(cf->ok_b64);
		cf->ok_b64 = NULL;
		snprintf(cf->err, sizeof(cf->err), "not found");
	} else {
		char err[256];

		snprintf(err, sizeof(err), "%s: %s", kube_errno_name(res->error),
		    res->message != NULL ? res->message : "");
		if (old != CFG_FAILED || strcmp(err, cf->err) != 0)
			log_warn("webhook certificate: cannot set the caBundle of %s %s: %s",
			    cf->res->kind, cf->name, err);
		cf->state = CFG_FAILED;
		snprintf(cf->err, sizeof(cf->err), "%s", err);
	}
	if (cf->state == CFG_FAILED) {
		uint64_t ms = RETRY_MIN_MS;
		struct timeval tv;

		for (unsigned i = 0; i < cf->failures && ms < RETRY_MAX_MS; i++)
			ms *= 2;
		cf->failures++;
		ms = ms < RETRY_MAX_MS ? ms : RETRY_MAX_MS;
		tv = (struct timeval){
		    .tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000};
		evtimer_add(cf->retry, &tv);
	} else {
		cf->failures = 0;
		event_del(cf->retry);
	}
	free(cf->want);
	cf->want = NULL;
	update_bundle_ok(cb);
}

static void
cfg_check(struct webcert_cfg *cf)
{
	struct webcert_cabundles *cb = cf->cb;
	int r;

	if (cb->ca_b64 == NULL)
		return;
	if (cf->call != NULL) {
		if (strcmp(cf->want, cb->ca_b64) == 0)
			return; /* already on it */
		kube_call_cancel(cf->call);
		cf->call = NULL;
	}
	free(cf->want);
	cf->want = strdup(cb->ca_b64);
	if (cf->want == NULL)
		return;
	r = kube_update_retry(
	    cb->client, cf->res, NULL, cf->name, false, 5, cfg_mutate, cfg_done, cf, &cf->call);
	if (r < 0) {
		cf->state = CFG_FAILED;
		snprintf(cf->err, sizeof(cf->err), "cannot start: %s", strerror(-r));
	}
}

static void
cfg_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	cfg_check(arg);
}

void
webcert_cabundles_check(struct webcert_cabundles *cb)
{
	for (size_t i = 0; i < cb->ncfgs; i++)
		cfg_check(&cb->cfgs[i]);
}

static bool
cfg_trusts(const struct webcert_cabundles *cb, const struct webcert_cfg *cf)
{
	return cf->state == CFG_MISSING ||
	       (cf->state == CFG_OK && cf->ok_b64 != NULL && cb->ca_b64 != NULL &&
		   strcmp(cf->ok_b64, cb->ca_b64) == 0);
}

/* Every configuration trusts the current bundle (or does not exist): note since when, and
 * look again at a CA rotation that waits for it. */
static void
update_bundle_ok(struct webcert_cabundles *cb)
{
	if (cb->ok_since != 0 || cb->ca_b64 == NULL)
		return;
	for (size_t i = 0; i < cb->ncfgs; i++)
		if (!cfg_trusts(cb, &cb->cfgs[i]))
			return;
	cb->ok_since = cb_now(cb);
	if (cb->on_trusted != NULL)
		cb->on_trusted(cb->userdata);
}

void
webcert_cabundles_want(struct webcert_cabundles *cb, const char *ca_pem)
{
	char *b64 = webcert_b64_encode(ca_pem, strlen(ca_pem));

	if (b64 != NULL && (cb->ca_b64 == NULL || strcmp(b64, cb->ca_b64) != 0)) {
		free(cb->ca_b64);
		cb->ca_b64 = b64;
		cb->ok_since = 0;
		webcert_cabundles_check(cb);
		update_bundle_ok(cb); /* no configurations: trusted at once */
	} else {
		free(b64);
	}
}
static int
add_cfgs(struct webcert_cabundles *cb, const struct kube_resource *res, const char *const *names,
    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct webcert_cfg *cf = &cb->cfgs[cb->ncfgs];

		if (names[i] == NULL || !webcert_dns_name_ok(names[i]))
			return -EINVAL;
		memset(cf, 0, sizeof(*cf));
		cf->cb = cb;
		cf->res = res;
		cf->name = strdup(names[i]);
		cf->retry = evtimer_new(cb->base, cfg_retry_cb, cf);
		cb->ncfgs++;
		if (cf->name == NULL || cf->retry == NULL)
			return -ENOMEM;
	}
	return 0;
}

int
webcert_cabundles_add(struct webcert_cabundles *cb, const char *const *mutating, size_t n_mutating,
    const char *const *validating, size_t n_validating)
{
	int r;

	cb->cfgs = calloc(n_mutating + n_validating + 1, sizeof(*cb->cfgs));
	if (cb->cfgs == NULL)
		return -ENOMEM;
	if ((r = add_cfgs(cb, &res_mutating, mutating, n_mutating)) < 0 ||
	    (r = add_cfgs(cb, &res_validating, validating, n_validating)) < 0)
		return r;
	return 0;
}

/* One reason per state, for a configuration that does not trust the serving certificate. */
static void
untrusted_reason(const struct webcert_cfg *cf, char *reason, size_t len)
{
	if (cf->state == CFG_MISSING)
		snprintf(reason, len,
		    "webhook certificate: %s %s not found (its caBundle is set once it "
		    "exists)",
		    cf->res->kind, cf->name);
	else if (cf->state == CFG_FAILED)
		snprintf(reason, len, "webhook certificate: caBundle of %s %s not set: %s",
		    cf->res->kind, cf->name, cf->err);
	else
		snprintf(reason, len, "webhook certificate: caBundle of %s %s being set",
		    cf->res->kind, cf->name);
}

bool
webcert_cabundles_ready(const struct webcert_cabundles *cb, X509 *leaf, char *reason, size_t len,
    char *note, size_t note_len)
{
	for (size_t i = 0; i < cb->ncfgs; i++) {
		const struct webcert_cfg *cf = &cb->cfgs[i];

		if (leaf != NULL && webcert_bundle_signed(cf->ok_b64, leaf)) {
			/* the API server trusts what is served; a check that failed since, or a
			 * newer bundle not set yet, is noted */
			if (note[0] == '\0' && cf->state == CFG_FAILED)
				snprintf(note, note_len,
				    "webhook certificate: caBundle of %s %s not set: %s (the one "
				    "in "
				    "place trusts the serving certificate)",
				    cf->res->kind, cf->name, cf->err);
			continue;
		}
		untrusted_reason(cf, reason, len);
		return false;
	}
	return true;
}

void
webcert_cabundles_clear(struct webcert_cabundles *cb)
{
	for (size_t i = 0; i < cb->ncfgs; i++) {
		kube_call_cancel(cb->cfgs[i].call);
		if (cb->cfgs[i].retry != NULL)
			event_free(cb->cfgs[i].retry);
		free(cb->cfgs[i].name);
		free(cb->cfgs[i].want);
		free(cb->cfgs[i].ok_b64);
	}
	free(cb->cfgs);
	free(cb->ca_b64);
	cb->cfgs = NULL;
	cb->ncfgs = 0;
	cb->ca_b64 = NULL;
}
