/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: bytes -> webhook_review_parse -> webhook_review_answer
 * (controller/webhook-review.c).
 * Parsing never crashes or leaks; a refusal says why and holds nothing; a parsed review is
 * consistent (its kind is admit_kind_of its group and resource, ns and name are set, no object
 * on DELETE, no old object on CREATE), and its answer, for a result derived from the input
 * (allowed, patched with the request's object, refused with its name, warnings), is JSON that
 * echoes the version and uid, whose patch decodes back to the patch given. Any difference
 * traps.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <openssl/evp.h>

#include "controller/webhook.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_patch(const json_t *resp, const json_t *patch)
{
	const char *b64 = json_string_value(json_object_get(resp, "patch"));
	size_t n;
	unsigned char *out;
	int m;
	json_t *back;

	if (b64 == NULL)
		__builtin_trap();
	n = strlen(b64);
	out = malloc(n + 1);
	if (out == NULL)
		abort();
	m = EVP_DecodeBlock(out, (const unsigned char *)b64, (int)n);
	if (m < 0)
		__builtin_trap();
	while (n > 0 && b64[n - 1] == '=') {
		m--;
		n--;
	}
	back = json_loadb((const char *)out, (size_t)m, 0, NULL);
	if (back == NULL || !json_equal(back, patch))
		__builtin_trap();
	json_decref(back);
	free(out);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct webhook_review rv;
	struct admit_result res;
	char err[256] = "";
	json_t *doc, *resp;
	char *answer;
	int r;

	r = webhook_review_parse((const char *)data, size, &rv, err, sizeof(err));
	if (r < 0) {
		if ((r != -EINVAL && r != -E2BIG && r != -ENOMEM) || err[0] == '\0' ||
		    rv.doc != NULL)
			__builtin_trap();
		return 0;
	}
	if (rv.doc == NULL || rv.uid == NULL || rv.uid[0] == '\0' || rv.api_version == NULL ||
	    rv.rq.ns == NULL || rv.rq.name == NULL)
		__builtin_trap();
	if (strcmp(rv.api_version, "admission.k8s.io/v1") != 0 &&
	    strcmp(rv.api_version, "admission.k8s.io/v1beta1") != 0)
		__builtin_trap();
	if (rv.rq.kind != ADMIT_KIND_OTHER && rv.rq.kind != admit_kind_of(rv.group, rv.resource))
		__builtin_trap();
	if ((rv.rq.op == ADMIT_OP_DELETE && rv.rq.object != NULL) ||
	    (rv.rq.op == ADMIT_OP_CREATE && (rv.rq.old_object != NULL || rv.rq.object == NULL)))
		__builtin_trap();

	/* a result derived from the input */
	memset(&res, 0, sizeof(res));
	res.allowed = size % 3 != 0;
	res.code = size % 3 == 0 ? (int)(size % 700) : 0;
	snprintf(
	    res.message, sizeof(res.message), "refused %s/%s: %s", rv.rq.ns, rv.rq.name, rv.uid);
	if (size % 2 == 0 && rv.rq.object != NULL) {
		res.patch = json_array();
		json_array_append_new(res.patch, json_pack("{s:s, s:s, s:O}", "op", "replace",
						     "path", "", "value", rv.rq.object));
	}
	res.n_warnings = size % ADMIT_WARNINGS_MAX;
	for (size_t i = 0; i < res.n_warnings; i++)
		snprintf(res.warnings[i], sizeof(res.warnings[i]), "%s %zu", rv.rq.name, i);

	answer = webhook_review_answer(rv.api_version, rv.uid, &res);
	if (answer == NULL)
		__builtin_trap();
	doc = json_loads(answer, 0, NULL);
	resp = json_object_get(doc, "response");
	if (doc == NULL || !json_is_object(resp) ||
	    strcmp(json_string_value(json_object_get(doc, "apiVersion")), rv.api_version) != 0 ||
	    strcmp(json_string_value(json_object_get(resp, "uid")), rv.uid) != 0 ||
	    json_is_true(json_object_get(resp, "allowed")) != res.allowed)
		__builtin_trap();
	if (!res.allowed &&
	    (json_object_get(resp, "patch") != NULL ||
		json_integer_value(json_object_get(json_object_get(resp, "status"), "code")) < 400))
		__builtin_trap();
	if (res.allowed && res.patch != NULL)
		check_patch(resp, res.patch);
	json_decref(doc);
	free(answer);
	json_decref(res.patch);
	webhook_review_clear(&rv);
	return 0;
}
