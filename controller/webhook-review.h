/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_WEBHOOK_REVIEW_H
#define VMDHCP_CONTROLLER_WEBHOOK_REVIEW_H

/*
 * The AdmissionReview codec, pure (the webhook server's, controller/webhook.c, and the
 * fuzzer's): an admission.k8s.io/v1 or v1beta1 AdmissionReview body to the request the rules
 * take (admit.h), and their result to the answer, in the review's apiVersion.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "controller/admit.h"

#define WEBHOOK_BODY_MAX (3 * 1024 * 1024) /* the API server's own request limit */
#define WEBHOOK_DEPTH_MAX 64

/*
 * Parse body (len bytes): 0 and *ret filled (rq's json pointers borrow ret->doc), or
 * -EINVAL / -E2BIG / -ENOMEM with why in err.
 */
struct webhook_review {
	json_t *doc;		 /* the parsed body (owned) */
	const char *api_version; /* "admission.k8s.io/v1" or ".../v1beta1" */
	const char *uid;
	char group[64], resource[64];
	struct admit_request rq; /* phase set by the caller */
};
int webhook_review_parse(
    const char *body, size_t len, struct webhook_review *ret, char *err, size_t err_len);
void webhook_review_clear(struct webhook_review *r);
/* The AdmissionReview answer for uid and res: a new string (free()), or NULL (ENOMEM). */
char *webhook_review_answer(
    const char *api_version, const char *uid, const struct admit_result *res);
/* The answer carries a patch: allowed, with a non-empty one. */
bool webhook_review_has_patch(const struct admit_result *res);

#endif
