/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_WEBCERT_H
#define VMDHCP_CONTROLLER_WEBCERT_H

/*
 * The admission webhook's certificates, made and rotated by the program (no cert-manager):
 * a CA and a serving certificate kept in one Secret (keys ca.crt, ca.key, tls.crt, tls.key),
 * shared by every replica. The first replica that finds the Secret empty (or missing, if it
 * may create it) fills it; a write is conditional on the resourceVersion read, so replicas
 * that race agree on one winner and take its pair from the Secret (watched by name). The
 * caBundle of the named webhook configurations is patched to ca.crt whenever it differs.
 *
 * Rotation: the serving certificate is renewed once two thirds of its validity have passed;
 * the CA likewise, in two steps so that no admission fails: first the new CA is added to
 * ca.crt (the bundle then trusts the old and the new CA) and the webhook configurations
 * patched; only then is a serving certificate signed by the new CA issued; the old CA
 * leaves the bundle after it expires. OpenSSL only (EC P-256, SHA-256); no hand-written
 * crypto.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct event_base;
struct kube_client;
struct metrics;
struct webcert;

#define WEBCERT_VALIDITY_DEFAULT_S (365u * 24 * 3600) /* serving certificate */
#define WEBCERT_CA_VALIDITY_FACTOR 10		      /* CA validity = factor * serving */

struct webcert_opts {
	const char *ns;		       /* the Secret's namespace (required) */
	const char *secret;	       /* the Secret's name (required) */
	const char *service;	       /* the webhook Service's name: SANs svc, svc.ns, svc.ns.svc,
					  svc.ns.svc.cluster.local (NULL: none) */
	const char *const *extra_sans; /* "IP:127.0.0.1" / "DNS:name" entries; n_extra_sans */
	size_t n_extra_sans;
	const char *const *mutating; /* MutatingWebhookConfiguration names to keep patched */
	size_t n_mutating;
	const char *const *validating; /* ValidatingWebhookConfiguration names */
	size_t n_validating;
	uint64_t validity_s; /* serving certificate validity (0: WEBCERT_VALIDITY_DEFAULT_S) */
	/* Wall clock in seconds since the epoch (certificate times); NULL: time(). Tests give
	 * a fake one and call webcert_recheck after moving it. */
	int64_t (*now)(void *userdata);
	struct metrics *metrics; /* borrowed, may be NULL */
	/* Called with the serving pair (PEM) each time it is first known or changes. */
	void (*on_cert)(void *userdata, const char *cert_pem, const char *key_pem);
	void *userdata;
};

/* Validates opts; nothing is started. 0 and *ret, or negative errno. */
int webcert_new(struct event_base *base, struct kube_client *client,
    const struct webcert_opts *opts, struct webcert **ret);
/* Read (watch) the Secret, fill or rotate it, patch the caBundles. 0 or negative errno. */
int webcert_start(struct webcert *wc);
struct webcert *webcert_free(struct webcert *wc);
/* A serving pair is known and the caBundles match it (each configuration's caBundle last
 * seen holds the CA that signed the serving certificate): true; else false and why. True
 * may come with a note in reason (a check that failed since, while the caBundle in place
 * still trusts the serving certificate), else reason is "". */
bool webcert_ready(const struct webcert *wc, char *reason, size_t len);
/* The replica is leaving (SIGTERM): the Secret is not written any more (a write under way
 * ends), so that a replica of the previous rollout, with other options, does not undo what
 * the new ones do; the serving pair in use and changes to it are still taken in. */
void webcert_stop(struct webcert *wc);
/* Evaluate expiry now (the program also does it on a timer, at least hourly, and on every
 * change of the Secret). */
void webcert_recheck(struct webcert *wc);

#endif
