/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The AdmissionReview codec (webhook-review.h). The API server sends application/json
 * AdmissionReview (admission.k8s.io/v1, or v1beta1 from an old configuration), and takes a
 * non-200 answer or one it cannot decode as a failure of the call (then failurePolicy
 * decides). Bodies are bounded by WEBHOOK_BODY_MAX and their nesting by WEBHOOK_DEPTH_MAX
 * (a byte scan before jansson, which would accept 2048 levels).
 */
#include "controller/webhook-review.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "lib/util.h"

#define API_V1 "admission.k8s.io/v1"
#define API_V1BETA1 "admission.k8s.io/v1beta1"

static int __attribute__((format(printf, 4, 5)))
fail(int r, char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && err_len > 0) {
		va_start(ap, fmt);
		vsnprintf(err, err_len, fmt, ap);
		va_end(ap);
	}
	return r;
}

/*
 * Nesting deeper than max anywhere in the text: -E2BIG. Strings are followed (brackets in
 * them do not count); the grammar is jansson's to check.
 */
static int
check_depth(const char *p, size_t len, unsigned max)
{
	unsigned depth = 0;
	bool in_string = false;

	for (size_t i = 0; i < len; i++) {
		char c = p[i];

		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
			continue;
		}
		if (c == '"') {
			in_string = true;
		} else if (c == '{' || c == '[') {
			if (++depth > max)
				return -E2BIG;
		} else if ((c == '}' || c == ']') && depth > 0) {
			depth--;
		}
	}
	return 0;
}

/* Member key of obj: a string (or absent/null: *ret NULL when optional). */
static int
get_string(const json_t *obj, const char *key, bool required, const char *where, const char **ret,
    char *err, size_t err_len)
{
	const json_t *v = json_object_get(obj, key);

	*ret = NULL;
	if (v == NULL || json_is_null(v)) {
		if (required)
			return fail(-EINVAL, err, err_len, "%s.%s is missing", where, key);
		return 0;
	}
	if (!json_is_string(v))
		return fail(-EINVAL, err, err_len, "%s.%s is not a string", where, key);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return fail(-EINVAL, err, err_len, "%s.%s holds a NUL character", where, key);
	*ret = json_string_value(v);
	return 0;
}

static int
copy_field(char *dst, size_t dst_len, const char *s, const char *what, char *err, size_t err_len)
{
	size_t n = strlen(s);

	if (n >= dst_len)
		return fail(
		    -EINVAL, err, err_len, "%s is longer than %zu characters", what, dst_len - 1);
	memcpy(dst, s, n + 1);
	return 0;
}

/* request.object / oldObject: an object, or absent/null. */
static int
get_object(const json_t *req, const char *key, const json_t **ret, char *err, size_t err_len)
{
	const json_t *v = json_object_get(req, key);

	*ret = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return fail(-EINVAL, err, err_len, "request.%s is not an object", key);
	*ret = v;
	return 0;
}

static int
parse_request(struct webhook_review *r, const json_t *req, char *err, size_t err_len)
{
	const json_t *res, *v, *ui;
	const char *s, *sub;
	int k;

	k = get_string(req, "uid", true, "request", &r->uid, err, err_len);
	if (k < 0)
		return k;
	if (r->uid[0] == '\0')
		return fail(-EINVAL, err, err_len, "request.uid is empty");

	res = json_object_get(req, "resource");
	if (!json_is_object(res))
		return fail(-EINVAL, err, err_len, "request.resource is %s",
		    res == NULL ? "missing" : "not an object");
	if ((k = get_string(res, "group", false, "request.resource", &s, err, err_len)) < 0 ||
	    (k = copy_field(r->group, sizeof(r->group), s != NULL ? s : "",
		 "request.resource.group", err, err_len)) < 0)
		return k;
	if ((k = get_string(res, "resource", true, "request.resource", &s, err, err_len)) < 0 ||
	    (k = copy_field(r->resource, sizeof(r->resource), s, "request.resource.resource", err,
		 err_len)) < 0)
		return k;
	if (r->resource[0] == '\0')
		return fail(-EINVAL, err, err_len, "request.resource.resource is empty");
	if ((k = get_string(req, "subResource", false, "request", &sub, err, err_len)) < 0)
		return k;
	/* a subresource (status, scale) is not the object's spec: not ours to decide */
	r->rq.kind =
	    sub != NULL && sub[0] != '\0' ? ADMIT_KIND_OTHER : admit_kind_of(r->group, r->resource);

	if ((k = get_string(req, "operation", true, "request", &s, err, err_len)) < 0)
		return k;
	if (admit_op_parse(s, &r->rq.op) < 0)
		return fail(-EINVAL, err, err_len,
		    "request.operation \"%.64s\" is not CREATE, UPDATE, DELETE or CONNECT", s);

	if ((k = get_string(req, "namespace", false, "request", &r->rq.ns, err, err_len)) < 0 ||
	    (k = get_string(req, "name", false, "request", &r->rq.name, err, err_len)) < 0)
		return k;
	if (r->rq.ns == NULL)
		r->rq.ns = ""; /* cluster-scoped */
	if (r->rq.name == NULL)
		r->rq.name = ""; /* a create with generateName */

	if ((k = get_object(req, "object", &r->rq.object, err, err_len)) < 0 ||
	    (k = get_object(req, "oldObject", &r->rq.old_object, err, err_len)) < 0)
		return k;
	if ((r->rq.op == ADMIT_OP_CREATE || r->rq.op == ADMIT_OP_UPDATE) && r->rq.object == NULL)
		return fail(-EINVAL, err, err_len, "request.object is missing in a %s",
		    admit_op_name(r->rq.op));
	if (r->rq.op == ADMIT_OP_UPDATE && r->rq.old_object == NULL)
		return fail(-EINVAL, err, err_len, "request.oldObject is missing in an UPDATE");
	if (r->rq.op == ADMIT_OP_CREATE)
		r->rq.old_object = NULL; /* admit.h: NULL on CREATE */
	if (r->rq.op == ADMIT_OP_DELETE)
		r->rq.object = NULL; /* and on DELETE */

	v = json_object_get(req, "dryRun");
	if (v != NULL && !json_is_null(v) && !json_is_boolean(v))
		return fail(-EINVAL, err, err_len, "request.dryRun is not a boolean");
	r->rq.dry_run = json_is_true(v);

	ui = json_object_get(req, "userInfo");
	if (ui != NULL && !json_is_null(ui)) {
		if (!json_is_object(ui))
			return fail(-EINVAL, err, err_len, "request.userInfo is not an object");
		if ((k = get_string(
			 ui, "username", false, "request.userInfo", &r->rq.user, err, err_len)) < 0)
			return k;
	}
	return 0;
}

int
webhook_review_parse(
    const char *body, size_t len, struct webhook_review *ret, char *err, size_t err_len)
{
	json_error_t jerr;
	const json_t *req;
	const char *kind;
	int r;

	memset(ret, 0, sizeof(*ret));
	if (err != NULL && err_len > 0)
		err[0] = '\0';
	if (body == NULL || len == 0)
		return fail(-EINVAL, err, err_len, "empty body: an AdmissionReview was expected");
	if (len > WEBHOOK_BODY_MAX)
		return fail(-E2BIG, err, err_len, "body of %zu bytes is larger than %d bytes", len,
		    WEBHOOK_BODY_MAX);
	if (check_depth(body, len, WEBHOOK_DEPTH_MAX) < 0)
		return fail(
		    -E2BIG, err, err_len, "body nests deeper than %d levels", WEBHOOK_DEPTH_MAX);
	ret->doc = json_loadb(body, len, 0, &jerr);
	if (ret->doc == NULL) {
		if (json_error_code(&jerr) == json_error_out_of_memory)
			return fail(-ENOMEM, err, err_len, "out of memory");
		return fail(-EINVAL, err, err_len, "invalid JSON: %s (line %d, column %d)",
		    jerr.text, jerr.line, jerr.column);
	}
	r = -EINVAL;
	if (!json_is_object(ret->doc)) {
		fail(r, err, err_len, "not an AdmissionReview: the body is not a JSON object");
		goto bad;
	}
	if ((r = get_string(ret->doc, "apiVersion", true, "AdmissionReview", &ret->api_version, err,
		 err_len)) < 0 ||
	    (r = get_string(ret->doc, "kind", true, "AdmissionReview", &kind, err, err_len)) < 0)
		goto bad;
	r = -EINVAL;
	if (strcmp(ret->api_version, API_V1) != 0 && strcmp(ret->api_version, API_V1BETA1) != 0) {
		fail(r, err, err_len, "apiVersion \"%.64s\" is not " API_V1 " or " API_V1BETA1,
		    ret->api_version);
		goto bad;
	}
	if (strcmp(kind, "AdmissionReview") != 0) {
		fail(r, err, err_len, "kind \"%.64s\" is not AdmissionReview", kind);
		goto bad;
	}
	req = json_object_get(ret->doc, "request");
	if (!json_is_object(req)) {
		fail(r, err, err_len, "request is %s", req == NULL ? "missing" : "not an object");
		goto bad;
	}
	r = parse_request(ret, req, err, err_len);
	if (r < 0)
		goto bad;
	return 0;
bad:
	webhook_review_clear(ret);
	return r;
}

void
webhook_review_clear(struct webhook_review *r)
{
	if (r == NULL)
		return;
	json_decref(r->doc);
	memset(r, 0, sizeof(*r));
}

/* A JSON string of s (at most max bytes): bytes that are not valid UTF-8 become '?'. */
static json_t *
text_string(const char *s, size_t max)
{
	size_t n = strnlen(s, max);
	json_t *j = json_stringn(s, n);
	char *copy;

	if (j != NULL)
		return j;
	copy = malloc(n + 1);
	if (copy == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		copy[i] = (unsigned char)s[i] < 0x80 ? s[i] : '?';
	copy[n] = '\0';
	j = json_stringn(copy, n);
	free(copy);
	return j;
}

/* metav1.StatusReason of a refusal's code (k8s.io/apimachinery/pkg/apis/meta/v1/types.go). */
static const char *
status_reason(int code)
{
	switch (code) {
	case 400:
		return "BadRequest";
	case 403:
		return "Forbidden";
	case 404:
		return "NotFound";
	case 409:
		return "Conflict";
	case 422:
		return "Invalid";
	case 429:
		return "TooManyRequests";
	case 500:
		return "InternalError";
	case 503:
		return "ServiceUnavailable";
	case 504:
		return "Timeout";
	default:
		return NULL;
	}
}

/* Base64 (RFC 4648, padded) of the compact JSON text of patch, as a JSON string. */
static json_t *
patch_string(const json_t *patch)
{
	char *text = json_dumps(patch, JSON_COMPACT | JSON_ENCODE_ANY);
	size_t n;
	unsigned char *b64;
	json_t *j;

	if (text == NULL)
		return NULL;
	n = strlen(text);
	if (n > INT_MAX / 2) {
		free(text);
		return NULL;
	}
	b64 = malloc(4 * ((n + 2) / 3) + 1);
	if (b64 == NULL) {
		free(text);
		return NULL;
	}
	int m = EVP_EncodeBlock(b64, (const unsigned char *)text, (int)n);
	free(text);
	j = m < 0 ? NULL : json_stringn((const char *)b64, (size_t)m);
	free(b64);
	return j;
}

bool
webhook_review_has_patch(const struct admit_result *res)
{
	return res->allowed && res->patch != NULL &&
	       !(json_is_array(res->patch) && json_array_size(res->patch) == 0);
}

char *
webhook_review_answer(const char *api_version, const char *uid, const struct admit_result *res)
{
	json_t *doc = json_object(), *resp = json_object();
	char *out = NULL;
	bool ok;

	if (doc == NULL || resp == NULL)
		goto out;
	ok = json_object_set_new(
		 doc, "apiVersion", json_string(api_version != NULL ? api_version : API_V1)) == 0 &&
	     json_object_set_new(doc, "kind", json_string("AdmissionReview")) == 0 &&
	     json_object_set_new(resp, "uid", json_string(uid != NULL ? uid : "")) == 0 &&
	     json_object_set_new(resp, "allowed", json_boolean(res->allowed)) == 0;
	if (ok && !res->allowed) {
		int code = res->code >= 400 && res->code <= 599 ? res->code : 403;
		const char *reason = status_reason(code);
		json_t *st = json_object();

		ok =
		    st != NULL && json_object_set_new(resp, "status", st) == 0 &&
		    json_object_set_new(st, "code", json_integer(code)) == 0 &&
		    json_object_set_new(
			st, "message", text_string(res->message, sizeof(res->message))) == 0 &&
		    (reason == NULL || json_object_set_new(st, "reason", json_string(reason)) == 0);
	}
	if (ok && webhook_review_has_patch(res))
		ok = json_object_set_new(resp, "patchType", json_string("JSONPatch")) == 0 &&
		     json_object_set_new(resp, "patch", patch_string(res->patch)) == 0;
	if (ok && res->n_warnings > 0) {
		json_t *ws = json_array();

		ok = ws != NULL && json_object_set_new(resp, "warnings", ws) == 0;
		for (size_t i = 0; ok && i < MIN(res->n_warnings, (size_t)ADMIT_WARNINGS_MAX); i++)
			if (res->warnings[i][0] != '\0')
				ok = json_array_append_new(
					 ws, text_string(res->warnings[i], ADMIT_WARNING_MAX)) == 0;
	}
	if (ok && json_object_set(doc, "response", resp) == 0)
		out = json_dumps(doc, JSON_COMPACT);
out:
	json_decref(resp);
	json_decref(doc);
	return out;
}
