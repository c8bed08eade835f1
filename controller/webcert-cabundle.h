/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_WEBCERT_CABUNDLE_H
#define VMDHCP_CONTROLLER_WEBCERT_CABUNDLE_H

/*
 * The caBundle of the named Mutating/ValidatingWebhookConfigurations kept equal to the
 * webhook certificate Secret's ca.crt (controller/webcert.c's opening comment tells when it
 * is compared and written, and what is logged). A configuration that does not exist is never
 * created.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/x509.h>

struct event_base;
struct kube_client;
struct webcert_cfg;

#define WEBCERT_CONFIG_RECHECK_S 60 /* the caBundles are compared at least this often */

struct webcert_cabundles {
	/* set by the owner before webcert_cabundles_add */
	struct event_base *base;
	struct kube_client *client;
	const char *ns, *secret;	/* the Secret's (borrowed), for the log lines */
	int64_t (*now)(void *userdata); /* wall clock; NULL: time() */
	/* every configuration trusts the bundle (or does not exist): a CA rotation may go on */
	void (*on_trusted)(void *userdata);
	void *userdata;

	char *ca_b64;	  /* base64(ca.crt) of a usable bundle: the caBundle wanted */
	int64_t ok_since; /* wall clock when every configuration trusted ca_b64; 0 */
	struct webcert_cfg *cfgs;
	size_t ncfgs;
};

/* The configurations to keep patched. 0, -EINVAL (a name is not one), -ENOMEM. */
int webcert_cabundles_add(struct webcert_cabundles *cb, const char *const *mutating,
    size_t n_mutating, const char *const *validating, size_t n_validating);
/* The bundle wanted is ca_pem (PEM): when it changes, every configuration is checked. */
void webcert_cabundles_want(struct webcert_cabundles *cb, const char *ca_pem);
/* Compare (and write) every configuration's caBundle now. */
void webcert_cabundles_check(struct webcert_cabundles *cb);
/* Each configuration's caBundle last seen holds the CA that signed leaf (NULL: unknown):
 * true, with a note when a check failed since; else false and why in reason. */
bool webcert_cabundles_ready(const struct webcert_cabundles *cb, X509 *leaf, char *reason,
    size_t len, char *note, size_t note_len);
void webcert_cabundles_clear(struct webcert_cabundles *cb);

#endif
