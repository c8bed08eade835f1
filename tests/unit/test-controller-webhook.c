/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/webhook-review.c and webhook.c: the AdmissionReview codec (parse and answer,
 * every malformed case, the size and depth limits) and the HTTPS server end to end on
 * 127.0.0.1: a TLS client (OpenSSL, in a thread: blocking I/O while the loop serves) posts
 * reviews; TLS 1.1 refused; a certificate swap seen by a new connection while an open one
 * keeps its own; 503 before a certificate; 413; the metrics. The loop runs until the client
 * thread says it is done (a pipe); a wait is bounded (generously) only so that a regression
 * fails instead of hanging.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <event2/event.h>
#include <jansson.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "controller/webhook.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "tests/runner.h"

#define WAIT_SEC 30 /* bound on any wait for the client */

/* --- reviews ---------------------------------------------------------------------------- */

static const char *const V1 = "admission.k8s.io/v1";
static const char *const V1BETA1 = "admission.k8s.io/v1beta1";

/* An AdmissionReview with request members given as JSON text (after "request":{). */
static char *
review(const char *api, const char *request)
{
	char *s = NULL;

	if (asprintf(&s, "{\"apiVersion\":\"%s\",\"kind\":\"AdmissionReview\",\"request\":{%s}}",
		api, request) < 0)
		abort();
	return s;
}

#define POOL_RES                                                                                   \
	"\"resource\":{\"group\":\"network.harvesterhci.io\",\"version\":\"v1alpha1\","            \
	"\"resource\":\"ippools\"}"
#define CFG_RES                                                                                    \
	"\"resource\":{\"group\":\"network.harvesterhci.io\",\"version\":\"v1alpha1\","            \
	"\"resource\":\"virtualmachinenetworkconfigs\"}"
#define VM_RES                                                                                     \
	"\"resource\":{\"group\":\"kubevirt.io\",\"version\":\"v1\",\"resource\":"                 \
	"\"virtualmachines\"}"
#define POD_RES "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"}"
#define OBJ(name) "{\"metadata\":{\"name\":\"" name "\",\"namespace\":\"default\"}}"

static char *
pool_create(const char *api, const char *uid, const char *name)
{
	char *req = NULL, *s;

	if (asprintf(&req,
		"\"uid\":\"%s\",\"kind\":{\"group\":\"network.harvesterhci.io\",\"version\":"
		"\"v1alpha1\",\"kind\":\"IPPool\"}," POOL_RES ",\"operation\":\"CREATE\","
		"\"namespace\":\"default\",\"name\":\"%s\",\"object\":{\"metadata\":{\"name\":"
		"\"%s\",\"namespace\":\"default\"}},\"oldObject\":null,\"dryRun\":false,"
		"\"userInfo\":{\"username\":\"admin\",\"groups\":[\"system:masters\"]}",
		uid, name, name) < 0)
		abort();
	s = review(api, req);
	free(req);
	return s;
}

static void
test_parse_v1_create(void)
{
	struct webhook_review rv;
	char err[256];
	char *body = pool_create(V1, "705ab4f5-6393-11e8-b7cc-42010a800002", "pool1");

	CU_ASSERT_EQUAL_FATAL(webhook_review_parse(body, strlen(body), &rv, err, sizeof(err)), 0);
	CU_ASSERT_PTR_NOT_NULL(rv.doc);
	CU_ASSERT_STRING_EQUAL(rv.api_version, V1);
	CU_ASSERT_STRING_EQUAL(rv.uid, "705ab4f5-6393-11e8-b7cc-42010a800002");
	CU_ASSERT_STRING_EQUAL(rv.group, "network.harvesterhci.io");
	CU_ASSERT_STRING_EQUAL(rv.resource, "ippools");
	CU_ASSERT_EQUAL(rv.rq.kind, ADMIT_KIND_IPPOOL);
	CU_ASSERT_EQUAL(rv.rq.op, ADMIT_OP_CREATE);
	CU_ASSERT_STRING_EQUAL(rv.rq.ns, "default");
	CU_ASSERT_STRING_EQUAL(rv.rq.name, "pool1");
	CU_ASSERT_PTR_NOT_NULL(rv.rq.object);
	CU_ASSERT_PTR_NULL(rv.rq.old_object);
	CU_ASSERT_FALSE(rv.rq.dry_run);
	CU_ASSERT_STRING_EQUAL(rv.rq.user, "admin");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_object_get(rv.rq.object, "metadata"), "name")),
	    "pool1");
	webhook_review_clear(&rv);
	CU_ASSERT_PTR_NULL(rv.doc);
	webhook_review_clear(&rv); /* twice is fine */
	free(body);
}

static void
test_parse_v1beta1_update_delete(void)
{
	struct webhook_review rv;
	char err[256];
	char *body = review(V1BETA1, "\"uid\":\"u2\"," CFG_RES ",\"operation\":\"UPDATE\","
				     "\"namespace\":\"ns\",\"name\":\"c\",\"object\":" OBJ(
					 "c") ",\"oldObject\":" OBJ("c") ",\"dryRun\":true");

	CU_ASSERT_EQUAL_FATAL(webhook_review_parse(body, strlen(body), &rv, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(rv.api_version, V1BETA1);
	CU_ASSERT_EQUAL(rv.rq.kind, ADMIT_KIND_VMNETCFG);
	CU_ASSERT_EQUAL(rv.rq.op, ADMIT_OP_UPDATE);
	CU_ASSERT_PTR_NOT_NULL(rv.rq.object);
	CU_ASSERT_PTR_NOT_NULL(rv.rq.old_object);
	CU_ASSERT_TRUE(rv.rq.dry_run);
	CU_ASSERT_PTR_NULL(rv.rq.user);
	webhook_review_clear(&rv);
	free(body);

	/* DELETE: the object is the old one; a stray object is not handed on */
	body = review(V1, "\"uid\":\"u3\"," VM_RES ",\"operation\":\"DELETE\",\"namespace\":\"ns\","
			  "\"name\":\"vm\",\"object\":" OBJ("vm") ",\"oldObject\":" OBJ("vm"));
	CU_ASSERT_EQUAL_FATAL(webhook_review_parse(body, strlen(body), &rv, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(rv.rq.kind, ADMIT_KIND_VM);
	CU_ASSERT_EQUAL(rv.rq.op, ADMIT_OP_DELETE);
	CU_ASSERT_PTR_NULL(rv.rq.object);
	CU_ASSERT_PTR_NOT_NULL(rv.rq.old_object);
	webhook_review_clear(&rv);
	free(body);

	/* not ours: pods, and a subresource of ours; cluster-scoped (no namespace), no name */
	body = review(V1, "\"uid\":\"u4\"," POD_RES ",\"operation\":\"CONNECT\"");
	CU_ASSERT_EQUAL_FATAL(webhook_review_parse(body, strlen(body), &rv, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(rv.rq.kind, ADMIT_KIND_OTHER);
	CU_ASSERT_EQUAL(rv.rq.op, ADMIT_OP_CONNECT);
	CU_ASSERT_STRING_EQUAL(rv.rq.ns, "");
	CU_ASSERT_STRING_EQUAL(rv.rq.name, "");
	webhook_review_clear(&rv);
	free(body);
	body = review(V1, "\"uid\":\"u5\"," POOL_RES ",\"subResource\":\"status\","
			  "\"operation\":\"UPDATE\",\"object\":{},\"oldObject\":{}");
	CU_ASSERT_EQUAL_FATAL(webhook_review_parse(body, strlen(body), &rv, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(rv.rq.kind, ADMIT_KIND_OTHER);
	webhook_review_clear(&rv);
	free(body);
}

static void
test_parse_malformed(void)
{
	static const struct {
		const char *body; /* NULL: built from request below */
		const char *request;
		int r;
		const char *msg; /* a substring of the error */
	} cases[] = {
	    {"", NULL, -EINVAL, "empty body"},
	    {"{", NULL, -EINVAL, "invalid JSON"},
	    {"{\"a\":1} x", NULL, -EINVAL, "invalid JSON"},
	    {"[]", NULL, -EINVAL, "not a JSON object"},
	    {"\"AdmissionReview\"", NULL, -EINVAL, "invalid JSON"}, /* jansson: no bare values */
	    {"{\"kind\":\"AdmissionReview\",\"request\":{}}", NULL, -EINVAL,
		"apiVersion is missing"},
	    {"{\"apiVersion\":1,\"kind\":\"AdmissionReview\"}", NULL, -EINVAL,
		"apiVersion is not a string"},
	    {"{\"apiVersion\":\"admission.k8s.io/v2\",\"kind\":\"AdmissionReview\",\"request\":{}}",
		NULL, -EINVAL, "is not admission.k8s.io/v1"},
	    {"{\"apiVersion\":\"admission.k8s.io/v1\",\"request\":{}}", NULL, -EINVAL,
		"kind is missing"},
	    {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Status\",\"request\":{}}", NULL,
		-EINVAL, "is not AdmissionReview"},
	    {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}", NULL, -EINVAL,
		"request is missing"},
	    {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":[]}",
		NULL, -EINVAL, "request is not an object"},
	    {NULL, POOL_RES ",\"operation\":\"CREATE\",\"object\":{}", -EINVAL,
		"request.uid is missing"},
	    {NULL, "\"uid\":\"\"," POOL_RES ",\"operation\":\"CREATE\",\"object\":{}", -EINVAL,
		"request.uid is empty"},
	    {NULL, "\"uid\":7," POOL_RES ",\"operation\":\"CREATE\",\"object\":{}", -EINVAL,
		"request.uid is not a string"},
	    {NULL, "\"uid\":\"a\\u0000b\"," POOL_RES ",\"operation\":\"CREATE\",\"object\":{}",
		-EINVAL, "invalid JSON"}, /* jansson refuses \u0000 without JSON_ALLOW_NUL */
	    {NULL, "\"uid\":\"u\",\"operation\":\"CREATE\",\"object\":{}", -EINVAL,
		"request.resource is missing"},
	    {NULL, "\"uid\":\"u\",\"resource\":\"ippools\",\"operation\":\"CREATE\",\"object\":{}",
		-EINVAL, "request.resource is not an object"},
	    {NULL,
		"\"uid\":\"u\",\"resource\":{\"group\":\"g\"},\"operation\":\"CREATE\",\"object\":{"
		"}",
		-EINVAL, "request.resource.resource is missing"},
	    {NULL,
		"\"uid\":\"u\",\"resource\":{\"resource\":\"\"},\"operation\":\"CREATE\","
		"\"object\":{}",
		-EINVAL, "request.resource.resource is empty"},
	    {NULL,
		"\"uid\":\"u\",\"resource\":{\"group\":\"0123456789012345678901234567890123456789"
		"01234567890123456789012345\",\"resource\":\"r\"},\"operation\":\"CREATE\","
		"\"object\":{}",
		-EINVAL, "request.resource.group is longer than 63"},
	    {NULL,
		"\"uid\":\"u\",\"resource\":{\"group\":[],\"resource\":\"r\"},\"operation\":"
		"\"CREATE\"",
		-EINVAL, "request.resource.group is not a string"},
	    {NULL, "\"uid\":\"u\"," POOL_RES ",\"object\":{}", -EINVAL,
		"request.operation is missing"},
	    {NULL, "\"uid\":\"u\"," POOL_RES ",\"operation\":\"create\",\"object\":{}", -EINVAL,
		"\"create\" is not CREATE, UPDATE, DELETE or CONNECT"},
	    {NULL, "\"uid\":\"u\"," POOL_RES ",\"operation\":\"PATCH\",\"object\":{}", -EINVAL,
		"is not CREATE"},
	    {NULL, "\"uid\":\"u\"," POOL_RES ",\"operation\":\"CREATE\"", -EINVAL,
		"request.object is missing in a CREATE"},
	    {NULL, "\"uid\":\"u\"," POOL_RES ",\"operation\":\"CREATE\",\"object\":null", -EINVAL,
		"request.object is missing in a CREATE"},
	    {NULL, "\"uid\":\"u\"," POOL_RES ",\"operation\":\"CREATE\",\"object\":\"x\"", -EINVAL,
		"request.object is not an object"},
	    {NULL, "\"uid\":\"u\"," POOL_RES ",\"operation\":\"UPDATE\",\"object\":{}", -EINVAL,
		"request.oldObject is missing in an UPDATE"},
	    {NULL,
		"\"uid\":\"u\"," POOL_RES
		",\"operation\":\"UPDATE\",\"object\":{},\"oldObject\":[]",
		-EINVAL, "request.oldObject is not an object"},
	    {NULL,
		"\"uid\":\"u\"," POOL_RES ",\"operation\":\"CREATE\",\"object\":{},\"namespace\":1",
		-EINVAL, "request.namespace is not a string"},
	    {NULL,
		"\"uid\":\"u\"," POOL_RES ",\"operation\":\"CREATE\",\"object\":{},\"name\":true",
		-EINVAL, "request.name is not a string"},
	    {NULL,
		"\"uid\":\"u\"," POOL_RES
		",\"operation\":\"CREATE\",\"object\":{},\"dryRun\":\"yes\"",
		-EINVAL, "request.dryRun is not a boolean"},
	    {NULL,
		"\"uid\":\"u\"," POOL_RES
		",\"operation\":\"CREATE\",\"object\":{},\"userInfo\":\"x\"",
		-EINVAL, "request.userInfo is not an object"},
	    {NULL,
		"\"uid\":\"u\"," POOL_RES ",\"operation\":\"CREATE\",\"object\":{},\"userInfo\":{"
		"\"username\":5}",
		-EINVAL, "request.userInfo.username is not a string"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct webhook_review rv;
		char err[256] = "unset", *body;
		int r;

		body = cases[i].body != NULL ? strdup(cases[i].body) : review(V1, cases[i].request);
		r = webhook_review_parse(body, strlen(body), &rv, err, sizeof(err));
		if (r != cases[i].r || strstr(err, cases[i].msg) == NULL)
			fprintf(stderr, "case %zu: %d \"%s\" (expected %d \"%s\")\n", i, r, err,
			    cases[i].r, cases[i].msg);
		CU_ASSERT_EQUAL(r, cases[i].r);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].msg));
		CU_ASSERT_PTR_NULL(rv.doc); /* nothing to clear on failure */
		free(body);
	}
	/* NULL body, and a NULL err buffer */
	{
		struct webhook_review rv;

		CU_ASSERT_EQUAL(webhook_review_parse(NULL, 0, &rv, NULL, 0), -EINVAL);
		CU_ASSERT_EQUAL(webhook_review_parse("[", 1, &rv, NULL, 0), -EINVAL);
	}
}

/* A valid review whose object holds extra levels of arrays: total depth 3 + extra. */
static char *
deep_review(unsigned extra, bool in_string)
{
	size_t n = 2 * extra + 4;
	char *nest = malloc(n), *req = NULL, *s;

	if (nest == NULL)
		abort();
	if (in_string) {
		nest[0] = '"';
		memset(nest + 1, '[', 2 * extra);
		nest[2 * extra + 1] = '"';
		nest[2 * extra + 2] = '\0';
	} else {
		memset(nest, '[', extra);
		memset(nest + extra, ']', extra);
		nest[2 * extra] = '\0';
		if (extra == 0)
			strcpy(nest, "0");
	}
	if (asprintf(&req,
		"\"uid\":\"d\"," POOL_RES ",\"operation\":\"CREATE\",\"object\":{\"a\":%s}",
		nest) < 0)
		abort();
	s = review(V1, req);
	free(req);
	free(nest);
	return s;
}

static void
test_parse_limits(void)
{
	struct webhook_review rv;
	char err[256];
	char *body;
	size_t len;

	/* the review is 1 level, request 2, object 3: 61 more arrays are the 64th level */
	body = deep_review(WEBHOOK_DEPTH_MAX - 3, false);
	CU_ASSERT_EQUAL(webhook_review_parse(body, strlen(body), &rv, err, sizeof(err)), 0);
	webhook_review_clear(&rv);
	free(body);
	body = deep_review(WEBHOOK_DEPTH_MAX - 2, false);
	CU_ASSERT_EQUAL(webhook_review_parse(body, strlen(body), &rv, err, sizeof(err)), -E2BIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "deeper than 64 levels"));
	free(body);
	/* jansson's own limit is far deeper: refused before it parses */
	body = deep_review(100000, false);
	CU_ASSERT_EQUAL(webhook_review_parse(body, strlen(body), &rv, err, sizeof(err)), -E2BIG);
	free(body);
	/* brackets in strings do not nest */
	body = deep_review(1000, true);
	CU_ASSERT_EQUAL(webhook_review_parse(body, strlen(body), &rv, err, sizeof(err)), 0);
	webhook_review_clear(&rv);
	free(body);
	/* an escaped quote does not end a string */
	body = review(V1, "\"uid\":\"q\"," POOL_RES
			  ",\"operation\":\"CREATE\",\"object\":{\"a\":\"\\\"[[[[[[[[[[[[[[[[[[[[[["
			  "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\"}");
	CU_ASSERT_EQUAL(webhook_review_parse(body, strlen(body), &rv, err, sizeof(err)), 0);
	webhook_review_clear(&rv);
	free(body);

	/* size: exactly the limit passes (padded with spaces), one more byte does not */
	body = pool_create(V1, "s", "p");
	len = strlen(body);
	body = realloc(body, WEBHOOK_BODY_MAX + 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(body);
	memset(body + len, ' ', WEBHOOK_BODY_MAX + 1 - len);
	CU_ASSERT_EQUAL(webhook_review_parse(body, WEBHOOK_BODY_MAX, &rv, err, sizeof(err)), 0);
	webhook_review_clear(&rv);
	CU_ASSERT_EQUAL(
	    webhook_review_parse(body, WEBHOOK_BODY_MAX + 1, &rv, err, sizeof(err)), -E2BIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "larger than"));
	free(body);

	/* a huge string value is fine under the size limit */
	{
		size_t n = 1024 * 1024;
		char *big = malloc(n + 1), *req = NULL;

		CU_ASSERT_PTR_NOT_NULL_FATAL(big);
		memset(big, 'x', n);
		big[n] = '\0';
		CU_ASSERT_FATAL(asprintf(&req,
				    "\"uid\":\"%s\"," POOL_RES ",\"operation\":\"CREATE\","
				    "\"object\":{}",
				    big) > 0);
		body = review(V1, req);
		CU_ASSERT_EQUAL(webhook_review_parse(body, strlen(body), &rv, err, sizeof(err)), 0);
		CU_ASSERT_EQUAL(strlen(rv.uid), n);
		webhook_review_clear(&rv);
		free(body);
		free(req);
		free(big);
	}
}

/* base64 decoding for the checks (OpenSSL's). */
static char *
unbase64(const char *s)
{
	size_t n = strlen(s);
	unsigned char *out = malloc(n + 1);
	int m;

	if (out == NULL)
		abort();
	m = EVP_DecodeBlock(out, (const unsigned char *)s, (int)n);
	if (m < 0) {
		free(out);
		return NULL;
	}
	/* EVP_DecodeBlock counts the padding's zero bytes */
	while (n > 0 && s[n - 1] == '=') {
		m--;
		n--;
	}
	out[m] = '\0';
	return (char *)out;
}

static void
test_answer(void)
{
	struct admit_result res = {0};
	json_t *doc, *resp, *st;
	char *s, *patch;

	/* allowed, nothing else */
	res.allowed = true;
	s = webhook_review_answer(V1, "uid-1", &res);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	doc = json_loads(s, 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(doc, "apiVersion")), V1);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(doc, "kind")), "AdmissionReview");
	resp = json_object_get(doc, "response");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(resp, "uid")), "uid-1");
	CU_ASSERT_TRUE(json_is_true(json_object_get(resp, "allowed")));
	CU_ASSERT_PTR_NULL(json_object_get(resp, "status"));
	CU_ASSERT_PTR_NULL(json_object_get(resp, "patch"));
	CU_ASSERT_PTR_NULL(json_object_get(resp, "patchType"));
	CU_ASSERT_PTR_NULL(json_object_get(resp, "warnings"));
	json_decref(doc);
	free(s);

	/* patched, with warnings, answered in v1beta1 */
	res.patch = json_loads("[{\"op\":\"add\",\"path\":\"/spec/ipv4Config/serverIP\","
			       "\"value\":\"10.0.0.2\"}]",
	    0, NULL);
	res.n_warnings = 2;
	snprintf(res.warnings[0], sizeof(res.warnings[0]), "first warning");
	snprintf(res.warnings[1], sizeof(res.warnings[1]), "second warning");
	s = webhook_review_answer(V1BETA1, "uid-2", &res);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	doc = json_loads(s, 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(doc, "apiVersion")), V1BETA1);
	resp = json_object_get(doc, "response");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(resp, "patchType")), "JSONPatch");
	patch = unbase64(json_string_value(json_object_get(resp, "patch")));
	CU_ASSERT_PTR_NOT_NULL_FATAL(patch);
	{
		json_t *p = json_loads(patch, 0, NULL);
		CU_ASSERT_TRUE(json_equal(p, res.patch));
		json_decref(p);
	}
	free(patch);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(resp, "warnings")), 2);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_array_get(json_object_get(resp, "warnings"), 1)),
	    "second warning");
	json_decref(doc);
	free(s);

	/* refused: status with code, message, reason; never a patch */
	res.allowed = false;
	res.code = 403;
	snprintf(res.message, sizeof(res.message), "cannot create IPPool default/p because x");
	res.n_warnings = 0;
	s = webhook_review_answer(V1, "uid-3", &res);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	doc = json_loads(s, 0, NULL);
	resp = json_object_get(doc, "response");
	CU_ASSERT_TRUE(json_is_false(json_object_get(resp, "allowed")));
	st = json_object_get(resp, "status");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(st, "code")), 403);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(st, "reason")), "Forbidden");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(st, "message")),
	    "cannot create IPPool default/p because x");
	CU_ASSERT_PTR_NULL(json_object_get(resp, "patch"));
	json_decref(doc);
	free(s);
	json_decref(res.patch);
	res.patch = NULL;

	/* a refusal without a code is a 403; bytes that are not UTF-8 do not break the answer;
	 * a message without its NUL stays within its buffer */
	res.code = 0;
	memset(res.message, 'm', sizeof(res.message));
	res.message[3] = (char)0xff;
	s = webhook_review_answer(V1, "uid-4", &res);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	doc = json_loads(s, 0, NULL);
	st = json_object_get(json_object_get(doc, "response"), "status");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(st, "code")), 403);
	CU_ASSERT_EQUAL(
	    strlen(json_string_value(json_object_get(st, "message"))), ADMIT_MESSAGE_MAX);
	CU_ASSERT_EQUAL(json_string_value(json_object_get(st, "message"))[3], '?');
	json_decref(doc);
	free(s);

	/* 500: InternalError */
	res.code = 500;
	snprintf(res.message, sizeof(res.message), "out of memory");
	s = webhook_review_answer(V1, "uid-5", &res);
	CU_ASSERT_PTR_NOT_NULL(strstr(s, "\"reason\":\"InternalError\""));
	free(s);
}

/* The codec both ways: a parsed review's uid and version come back in the answer. */
static void
test_round_trip(void)
{
	const char *apis[] = {V1, V1BETA1};

	for (size_t i = 0; i < 2; i++) {
		struct webhook_review rv;
		struct admit_result res = {.allowed = true};
		char err[256], *body = pool_create(apis[i], "rt-uid", "p"), *s;
		json_t *doc;

		CU_ASSERT_EQUAL_FATAL(
		    webhook_review_parse(body, strlen(body), &rv, err, sizeof(err)), 0);
		s = webhook_review_answer(rv.api_version, rv.uid, &res);
		doc = json_loads(s, 0, NULL);
		CU_ASSERT_STRING_EQUAL(
		    json_string_value(json_object_get(doc, "apiVersion")), apis[i]);
		CU_ASSERT_STRING_EQUAL(
		    json_string_value(json_object_get(json_object_get(doc, "response"), "uid")),
		    "rt-uid");
		json_decref(doc);
		free(s);
		webhook_review_clear(&rv);
		free(body);
	}
}

/* --- certificates ----------------------------------------------------------------------- */

struct pem_pair {
	char *cert, *key;
	unsigned char fp[32]; /* SHA-256 of the certificate's DER */
};

static char *
bio_string(BIO *b)
{
	char *data;
	long n = BIO_get_mem_data(b, &data);
	char *s = malloc((size_t)n + 1);

	if (s == NULL)
		abort();
	memcpy(s, data, (size_t)n);
	s[n] = '\0';
	return s;
}

static void
make_pair(struct pem_pair *p, const char *cn)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *cert = X509_new();
	X509_NAME *name;
	X509_EXTENSION *ext;
	X509V3_CTX ctx;
	unsigned int n = 0;
	BIO *b;

	CU_ASSERT_PTR_NOT_NULL_FATAL(key);
	CU_ASSERT_PTR_NOT_NULL_FATAL(cert);
	X509_set_version(cert, 2);
	ASN1_INTEGER_set(X509_get_serialNumber(cert), (long)(cn[0] + 1000));
	X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
	X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
	X509_set_pubkey(cert, key);
	name = X509_get_subject_name(cert);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(cert, name);
	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, cert, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, NID_subject_alt_name, "IP:127.0.0.1");
	X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	CU_ASSERT_FATAL(X509_sign(cert, key, EVP_sha256()) > 0);
	X509_digest(cert, EVP_sha256(), p->fp, &n);
	b = BIO_new(BIO_s_mem());
	PEM_write_bio_X509(b, cert);
	p->cert = bio_string(b);
	BIO_free(b);
	b = BIO_new(BIO_s_mem());
	PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL);
	p->key = bio_string(b);
	BIO_free(b);
	X509_free(cert);
	EVP_PKEY_free(key);
}

static void
free_pair(struct pem_pair *p)
{
	free(p->cert);
	free(p->key);
}

/* --- the server ------------------------------------------------------------------------- */

struct decided {
	unsigned n;
	enum admit_phase phase;
	enum admit_kind kind;
	enum admit_op op;
	char name[64];
	bool dry_run;
};

/* The rules of the tests: by the object's name. */
static void
test_admit(void *userdata, const struct admit_request *rq, struct admit_result *res)
{
	struct decided *d = userdata;
	const char *name = rq->name;

	d->n++;
	d->phase = rq->phase;
	d->kind = rq->kind;
	d->op = rq->op;
	d->dry_run = rq->dry_run;
	snprintf(d->name, sizeof(d->name), "%s", name);
	res->allowed = true;
	if (strcmp(name, "deny") == 0) {
		res->allowed = false;
		res->code = 403;
		snprintf(res->message, sizeof(res->message), "cannot create IPPool default/deny");
	} else if (strcmp(name, "patch") == 0) {
		/* in both phases: the server drops it from the validating one */
		res->patch = json_loads("[{\"op\":\"add\",\"path\":\"/metadata/labels\","
					"\"value\":{\"a\":\"b\"}}]",
		    0, NULL);
	} else if (strcmp(name, "warn") == 0) {
		res->n_warnings = 1;
		snprintf(res->warnings[0], sizeof(res->warnings[0]), "only suspicious");
	} else if (strcmp(name, "fail") == 0) {
		res->allowed = false;
		res->code = 500;
		snprintf(res->message, sizeof(res->message), "internal error");
	}
}

struct fixture {
	struct event_base *base;
	struct metrics *metrics;
	struct webhook *w;
	struct decided decided;
	int wake[2]; /* the client thread writes a byte when it has something */
	struct event *wake_ev, *guard;
	bool woken, timed_out;
};

static void
wake_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fixture *f = arg;
	char c;

	(void)what;
	if (read(fd, &c, 1) == 1)
		f->woken = true;
	event_base_loopbreak(f->base);
}

static void
guard_cb(evutil_socket_t fd, short what, void *arg)
{
	struct fixture *f = arg;

	(void)fd;
	(void)what;
	f->timed_out = true;
	event_base_loopbreak(f->base);
}

static void
fixture_init(struct fixture *f)
{
	struct webhook_opts o = {0};

	memset(f, 0, sizeof(*f));
	f->base = event_base_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->base);
	CU_ASSERT_EQUAL_FATAL(metrics_new(&f->metrics), 0);
	CU_ASSERT_EQUAL_FATAL(pipe(f->wake), 0);
	f->wake_ev = event_new(f->base, f->wake[0], EV_READ | EV_PERSIST, wake_cb, f);
	f->guard = evtimer_new(f->base, guard_cb, f);
	event_add(f->wake_ev, NULL);
	o.listen = "127.0.0.1:0";
	o.metrics = f->metrics;
	o.admit = test_admit;
	o.userdata = &f->decided;
	CU_ASSERT_EQUAL_FATAL(webhook_new(f->base, &o, &f->w), 0);
	CU_ASSERT(webhook_port(f->w) > 0);
}

static void
fixture_done(struct fixture *f)
{
	webhook_free(f->w);
	metrics_free(f->metrics);
	event_free(f->wake_ev);
	event_free(f->guard);
	close(f->wake[0]);
	close(f->wake[1]);
	event_base_free(f->base);
}

/* Runs the loop until the client thread wakes it (bounded). */
static void
wait_client(struct fixture *f)
{
	struct timeval tv = {.tv_sec = WAIT_SEC};

	f->woken = false;
	evtimer_add(f->guard, &tv);
	while (!f->woken && !f->timed_out)
		event_base_loop(f->base, EVLOOP_ONCE);
	evtimer_del(f->guard);
	CU_ASSERT_FALSE(f->timed_out);
}

/* One client connection, in a thread. */
struct client {
	int port;
	bool tls;
	int max_version;	 /* 0: any */
	const char *requests[4]; /* sent one after another on the connection (NULL ends) */
	int wake_fd;		 /* written after each answer */
	int go[2]; /* the thread waits for a byte here before each request but the first */
	pthread_t thread;
	bool idle; /* sends nothing, reads until the server closes */
	/* results */
	bool connected, handshake, closed_by_server;
	unsigned char fp[32];
	struct {
		int status;
		char *text; /* the whole reply */
		const char *body;
	} replies[4];
	unsigned n_replies;
};

static void
wake(struct client *c)
{
	char b = 1;

	if (write(c->wake_fd, &b, 1) != 1)
		abort();
}

/* One HTTP/1.1 reply (Content-Length framed), read by bytes: 0 or -1. */
static int
read_reply(struct client *c, SSL *ssl, int fd)
{
	size_t cap = 4096, len = 0, want = (size_t)-1, head = 0;
	char *buf = malloc(cap);

	if (buf == NULL)
		abort();
	for (;;) {
		int n;

		if (len + 1 >= cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			if (buf == NULL)
				abort();
		}
		n = ssl != NULL ? SSL_read(ssl, buf + len, 1) : (int)read(fd, buf + len, 1);
		if (n <= 0)
			break;
		len++;
		buf[len] = '\0';
		if (head == 0 && len >= 4 && memcmp(buf + len - 4, "\r\n\r\n", 4) == 0) {
			const char *cl = strcasestr(buf, "\r\nContent-Length:");

			head = len;
			want = cl != NULL ? head + strtoul(cl + 17, NULL, 10) : (size_t)-1;
		}
		if (head != 0 && len >= want)
			break;
	}
	buf[len] = '\0';
	if (len < 12) {
		free(buf);
		return -1;
	}
	c->replies[c->n_replies].status = atoi(buf + 9);
	c->replies[c->n_replies].text = buf;
	c->replies[c->n_replies].body = head != 0 ? buf + head : buf + len;
	c->n_replies++;
	return 0;
}

static void *
client_main(void *arg)
{
	struct client *c = arg;
	struct sockaddr_in sin = {.sin_family = AF_INET};
	struct timeval tv = {.tv_sec = WAIT_SEC};
	SSL_CTX *ctx = NULL;
	SSL *ssl = NULL;
	int fd;

	sin.sin_port = htons((uint16_t)c->port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		goto out;
	c->connected = true;
	if (c->idle) {
		char b;
		ssize_t n = read(fd, &b, 1);

		c->closed_by_server = n == 0 || (n < 0 && errno == ECONNRESET);
		goto out;
	}
	if (c->tls) {
		X509 *peer;
		unsigned int n = 0;

		ctx = SSL_CTX_new(TLS_client_method());
		if (c->max_version != 0) {
			/* old versions need the old security level on our side */
			SSL_CTX_set_security_level(ctx, 0);
			SSL_CTX_set_cipher_list(ctx, "DEFAULT:@SECLEVEL=0");
			SSL_CTX_set_min_proto_version(ctx, 0);
			SSL_CTX_set_max_proto_version(ctx, c->max_version);
		}
		SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, NULL);
		ssl = SSL_new(ctx);
		SSL_set_fd(ssl, fd);
		if (SSL_connect(ssl) != 1) {
			ERR_clear_error();
			goto out;
		}
		c->handshake = true;
		peer = SSL_get1_peer_certificate(ssl);
		if (peer != NULL) {
			X509_digest(peer, EVP_sha256(), c->fp, &n);
			X509_free(peer);
		}
	}
	for (unsigned i = 0; i < 4 && c->requests[i] != NULL; i++) {
		const char *rq = c->requests[i];
		size_t len = strlen(rq), off = 0;

		if (i > 0) {
			char b;
			if (read(c->go[0], &b, 1) != 1)
				break;
		}
		while (off < len) {
			int n = ssl != NULL ? SSL_write(ssl, rq + off, (int)(len - off))
					    : (int)write(fd, rq + off, len - off);
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		if (read_reply(c, ssl, fd) < 0)
			break;
		if (c->requests[i + 1] != NULL)
			wake(c); /* the main thread answers with go */
	}
out:
	if (ssl != NULL) {
		SSL_shutdown(ssl);
		SSL_free(ssl);
	}
	SSL_CTX_free(ctx);
	ERR_clear_error();
	OPENSSL_thread_stop();
	if (fd >= 0)
		close(fd);
	wake(c);
	return NULL;
}

static void
client_start(struct fixture *f, struct client *c, bool tls)
{
	memset(c, 0, sizeof(*c));
	c->port = webhook_port(f->w);
	c->tls = tls;
	c->wake_fd = f->wake[1];
	CU_ASSERT_EQUAL_FATAL(pipe(c->go), 0);
}

static void
client_run(struct fixture *f, struct client *c)
{
	CU_ASSERT_EQUAL_FATAL(pthread_create(&c->thread, NULL, client_main, c), 0);
}

static void
client_join(struct fixture *f, struct client *c)
{
	(void)f;
	pthread_join(c->thread, NULL);
	close(c->go[0]);
	close(c->go[1]);
}

static void
client_free(struct client *c)
{
	for (unsigned i = 0; i < c->n_replies; i++)
		free(c->replies[i].text);
	for (unsigned i = 0; i < 4; i++)
		free((char *)c->requests[i]);
}

/* The whole exchange of one connection that sends one request. */
static void
exchange(struct fixture *f, struct client *c, bool tls, char *request)
{
	client_start(f, c, tls);
	c->requests[0] = request;
	client_run(f, c);
	wait_client(f);
	client_join(f, c);
}

/* One request on a TLS connection of its own, answered once with status want. */
static void
expect_status(struct fixture *f, char *request, int want)
{
	struct client c;

	exchange(f, &c, true, request);
	CU_ASSERT_EQUAL_FATAL(c.n_replies, 1);
	CU_ASSERT_EQUAL(c.replies[0].status, want);
	client_free(&c);
}

static char *
post(const char *path, const char *ctype, const char *body, bool keep_alive)
{
	char *s = NULL;

	if (asprintf(&s,
		"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: %s\r\n"
		"Content-Length: %zu\r\n%s\r\n%s",
		path, ctype, strlen(body), keep_alive ? "" : "Connection: close\r\n", body) < 0)
		abort();
	return s;
}

static char *
get(const char *path)
{
	char *s = NULL;

	if (asprintf(&s, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path) <
	    0)
		abort();
	return s;
}

static void
test_no_cert(void)
{
	struct fixture f;
	struct client c;
	char reason[128] = "";
	char *body = pool_create(V1, "u", "p");

	fixture_init(&f);
	CU_ASSERT_FALSE(webhook_ready(f.w, reason, sizeof(reason)));
	CU_ASSERT_PTR_NOT_NULL(strstr(reason, "no certificate yet"));
	/* plain HTTP: 503 */
	exchange(&f, &c, false, post("/validate", "application/json", body, false));
	CU_ASSERT_EQUAL_FATAL(c.n_replies, 1);
	CU_ASSERT_EQUAL(c.replies[0].status, 503);
	CU_ASSERT_PTR_NOT_NULL(strstr(c.replies[0].body, "no certificate yet"));
	client_free(&c);
	/* TLS: no handshake */
	exchange(&f, &c, true, post("/validate", "application/json", body, false));
	CU_ASSERT_TRUE(c.connected);
	CU_ASSERT_FALSE(c.handshake);
	client_free(&c);
	CU_ASSERT_EQUAL(f.decided.n, 0);
	/* a bad pair is refused and leaves it unready */
	CU_ASSERT_EQUAL(webhook_set_cert(f.w, "junk", "junk"), -EINVAL);
	CU_ASSERT_FALSE(webhook_ready(f.w, reason, sizeof(reason)));
	fixture_done(&f);
	free(body);
}

static void
test_reviews(void)
{
	struct fixture f;
	struct client c;
	struct pem_pair a;
	char reason[128] = "";
	char *body, *text = NULL;
	json_t *doc, *resp;
	size_t len;

	make_pair(&a, "a");
	fixture_init(&f);
	CU_ASSERT_EQUAL_FATAL(webhook_set_cert(f.w, a.cert, a.key), 0);
	CU_ASSERT_TRUE(webhook_ready(f.w, reason, sizeof(reason)));

	/* allowed (validate), with the query string the API server adds */
	body = pool_create(V1, "uid-ok", "ok");
	exchange(&f, &c, true, post("/validate?timeout=10s", "application/json", body, false));
	free(body);
	CU_ASSERT_TRUE(c.handshake);
	CU_ASSERT_EQUAL(memcmp(c.fp, a.fp, 32), 0);
	CU_ASSERT_EQUAL_FATAL(c.n_replies, 1);
	CU_ASSERT_EQUAL(c.replies[0].status, 200);
	CU_ASSERT_PTR_NOT_NULL(strcasestr(c.replies[0].text, "Content-Type: application/json"));
	doc = json_loads(c.replies[0].body, 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	resp = json_object_get(doc, "response");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(resp, "uid")), "uid-ok");
	CU_ASSERT_TRUE(json_is_true(json_object_get(resp, "allowed")));
	json_decref(doc);
	client_free(&c);
	CU_ASSERT_EQUAL(f.decided.n, 1);
	CU_ASSERT_EQUAL(f.decided.phase, ADMIT_VALIDATE);
	CU_ASSERT_EQUAL(f.decided.kind, ADMIT_KIND_IPPOOL);
	CU_ASSERT_EQUAL(f.decided.op, ADMIT_OP_CREATE);
	CU_ASSERT_EQUAL(webhook_count(f.w, ADMIT_KIND_IPPOOL, ADMIT_OP_CREATE, "allowed"), 1);

	/* patched (mutate), v1beta1 */
	body = pool_create(V1BETA1, "uid-patch", "patch");
	exchange(&f, &c, true, post("/mutate", "application/json; charset=utf-8", body, false));
	free(body);
	CU_ASSERT_EQUAL_FATAL(c.n_replies, 1);
	CU_ASSERT_EQUAL(c.replies[0].status, 200);
	doc = json_loads(c.replies[0].body, 0, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(doc, "apiVersion")), V1BETA1);
	resp = json_object_get(doc, "response");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(resp, "patchType")), "JSONPatch");
	CU_ASSERT_PTR_NOT_NULL(json_object_get(resp, "patch"));
	json_decref(doc);
	client_free(&c);
	CU_ASSERT_EQUAL(f.decided.phase, ADMIT_MUTATE);
	CU_ASSERT_EQUAL(webhook_count(f.w, ADMIT_KIND_IPPOOL, ADMIT_OP_CREATE, "patched"), 1);

	/* the same rules' patch from the validating phase is dropped */
	body = pool_create(V1, "uid-patch2", "patch");
	exchange(&f, &c, true, post("/validate", "application/json", body, false));
	free(body);
	CU_ASSERT_EQUAL_FATAL(c.n_replies, 1);
	CU_ASSERT_PTR_NULL(strstr(c.replies[0].body, "patch\""));
	client_free(&c);
	CU_ASSERT_EQUAL(webhook_count(f.w, ADMIT_KIND_IPPOOL, ADMIT_OP_CREATE, "allowed"), 2);

	/* denied */
	body = pool_create(V1, "uid-deny", "deny");
	exchange(&f, &c, true, post("/validate", "application/json", body, false));
	free(body);
	CU_ASSERT_EQUAL_FATAL(c.n_replies, 1);
	CU_ASSERT_EQUAL(c.replies[0].status, 200);
	doc = json_loads(c.replies[0].body, 0, NULL);
	resp = json_object_get(doc, "response");
	CU_ASSERT_TRUE(json_is_false(json_object_get(resp, "allowed")));
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_object_get(resp, "status"), "message")),
	    "cannot create IPPool default/deny");
	json_decref(doc);
	client_free(&c);
	CU_ASSERT_EQUAL(webhook_count(f.w, ADMIT_KIND_IPPOOL, ADMIT_OP_CREATE, "denied"), 1);

	/* an internal error of the rules: error */
	body = pool_create(V1, "uid-fail", "fail");
	exchange(&f, &c, true, post("/validate", "application/json", body, false));
	free(body);
	CU_ASSERT_EQUAL_FATAL(c.n_replies, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(c.replies[0].body, "\"code\":500"));
	client_free(&c);
	CU_ASSERT_EQUAL(webhook_count(f.w, ADMIT_KIND_IPPOOL, ADMIT_OP_CREATE, "error"), 1);

	/* an unparsable review: 400 with the message, not handed to the rules */
	f.decided.n = 0;
	exchange(
	    &f, &c, true, post("/validate", "application/json", "{\"apiVersion\":\"v1\"}", false));
	CU_ASSERT_EQUAL_FATAL(c.n_replies, 1);
	CU_ASSERT_EQUAL(c.replies[0].status, 400);
	CU_ASSERT_PTR_NOT_NULL(strstr(c.replies[0].body, "kind is missing"));
	client_free(&c);
	CU_ASSERT_EQUAL(f.decided.n, 0);
	CU_ASSERT_EQUAL(webhook_count(f.w, (enum admit_kind)99, (enum admit_op)99, "error"), 1);

	/* nested too deep: 413 */
	body = deep_review(WEBHOOK_DEPTH_MAX, false);
	exchange(&f, &c, true, post("/validate", "application/json", body, false));
	free(body);
	CU_ASSERT_EQUAL_FATAL(c.n_replies, 1);
	CU_ASSERT_EQUAL(c.replies[0].status, 413);
	CU_ASSERT_PTR_NOT_NULL(strstr(c.replies[0].body, "deeper than"));
	client_free(&c);

	/* wrong content type: 415 */
	body = pool_create(V1, "u", "ok");
	expect_status(&f, post("/validate", "text/plain", body, false), 415);
	expect_status(&f, post("/validate", "application/jsonx", body, false), 415);
	free(body);
	CU_ASSERT_EQUAL(f.decided.n, 0);

	/* body over the limit: evhttp answers 413 from the Content-Length */
	CU_ASSERT_FATAL(asprintf(&text,
			    "POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
			    "application/json\r\nContent-Length: %d\r\n\r\n{",
			    WEBHOOK_BODY_MAX + 1) > 0);
	expect_status(&f, text, 413);

	/* methods and paths */
	expect_status(&f, get("/validate"), 405);
	expect_status(&f, get("/nothing"), 404);
	expect_status(&f, get("/metrics"), 404);
	exchange(&f, &c, true, get("/healthz"));
	CU_ASSERT_EQUAL_FATAL(c.n_replies, 1);
	CU_ASSERT_EQUAL(c.replies[0].status, 200);
	CU_ASSERT_STRING_EQUAL(c.replies[0].body, "ok\n");
	client_free(&c);
	expect_status(&f, get("/readyz"), 200);

	/* the metrics on the registry */
	CU_ASSERT_EQUAL_FATAL(metrics_render(f.metrics, &text, &len), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "vmdhcp_admission_requests_total{kind=\"IPPool\","
					    "operation=\"CREATE\",result=\"allowed\"} 2\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "vmdhcp_admission_requests_total{kind=\"IPPool\","
					    "operation=\"CREATE\",result=\"patched\"} 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "vmdhcp_admission_requests_total{kind=\"IPPool\","
					    "operation=\"CREATE\",result=\"denied\"} 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "vmdhcp_admission_requests_total{kind=\"unknown\","
					    "operation=\"unknown\",result=\"error\"} 4\n"));
	/* 5 reviews decided, 4 refused before (400, 413, 415 twice); evhttp's own 413 is not seen
	 */
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "vmdhcp_admission_duration_seconds_count 9\n"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "vmdhcp_admission_duration_seconds_bucket{le=\"0.0001\"}"));
	free(text);

	/* a second webhook on the same registry is refused */
	{
		struct webhook *w2 = NULL;
		struct webhook_opts o = {
		    .listen = "127.0.0.1:0", .metrics = f.metrics, .admit = test_admit};

		CU_ASSERT_EQUAL(webhook_new(f.base, &o, &w2), -EEXIST);
		o.metrics = NULL;
		o.listen = "nonsense";
		CU_ASSERT_EQUAL(webhook_new(f.base, &o, &w2), -EINVAL);
		o.listen = "127.0.0.1:0";
		o.admit = NULL;
		CU_ASSERT_EQUAL(webhook_new(f.base, &o, &w2), -EINVAL);
	}
	fixture_done(&f);
	free_pair(&a);
}

static void
test_tls_versions(void)
{
	struct fixture f;
	struct client c;
	struct pem_pair a;

	make_pair(&a, "a");
	fixture_init(&f);
	CU_ASSERT_EQUAL_FATAL(webhook_set_cert(f.w, a.cert, a.key), 0);
	/* TLS 1.1 and 1.0: refused */
	client_start(&f, &c, true);
	c.max_version = TLS1_1_VERSION;
	c.requests[0] = get("/healthz");
	client_run(&f, &c);
	wait_client(&f);
	client_join(&f, &c);
	CU_ASSERT_TRUE(c.connected);
	CU_ASSERT_FALSE(c.handshake);
	CU_ASSERT_EQUAL(c.n_replies, 0);
	client_free(&c);
	client_start(&f, &c, true);
	c.max_version = TLS1_VERSION;
	c.requests[0] = get("/healthz");
	client_run(&f, &c);
	wait_client(&f);
	client_join(&f, &c);
	CU_ASSERT_FALSE(c.handshake);
	client_free(&c);
	/* the same client limited to TLS 1.2: served */
	client_start(&f, &c, true);
	c.max_version = TLS1_2_VERSION;
	c.requests[0] = get("/healthz");
	client_run(&f, &c);
	wait_client(&f);
	client_join(&f, &c);
	CU_ASSERT_TRUE(c.handshake);
	CU_ASSERT_EQUAL_FATAL(c.n_replies, 1);
	CU_ASSERT_EQUAL(c.replies[0].status, 200);
	client_free(&c);
	fixture_done(&f);
	free_pair(&a);
}

static void
test_cert_swap_and_drain(void)
{
	struct fixture f;
	struct client c1, c2;
	struct pem_pair a, b;
	char reason[128];
	char *body = pool_create(V1, "u", "ok");

	make_pair(&a, "a");
	make_pair(&b, "b");
	fixture_init(&f);
	CU_ASSERT_EQUAL_FATAL(webhook_set_cert(f.w, a.cert, a.key), 0);

	/* c1: a keep-alive connection with a's certificate */
	client_start(&f, &c1, true);
	c1.requests[0] = post("/validate", "application/json", body, true);
	c1.requests[1] = post("/validate", "application/json", body, true);
	c1.requests[2] = post("/validate", "application/json", body, false);
	client_run(&f, &c1);
	wait_client(&f); /* first answer */
	CU_ASSERT_EQUAL_FATAL(c1.n_replies, 1);
	CU_ASSERT_EQUAL(memcmp(c1.fp, a.fp, 32), 0);

	/* swaps: a mismatched pair and junk are refused, b taken */
	CU_ASSERT_EQUAL(webhook_set_cert(f.w, a.cert, b.key), -EINVAL);
	CU_ASSERT_EQUAL(webhook_set_cert(f.w, b.cert, "-----BEGIN PRIVATE KEY-----\n"), -EINVAL);
	CU_ASSERT_EQUAL(webhook_set_cert(f.w, "", b.key), -EINVAL);
	CU_ASSERT_EQUAL(webhook_set_cert(f.w, b.cert, b.key), 0);

	/* a new connection sees b */
	exchange(&f, &c2, true, post("/validate", "application/json", body, false));
	CU_ASSERT_TRUE(c2.handshake);
	CU_ASSERT_EQUAL(memcmp(c2.fp, b.fp, 32), 0);
	CU_ASSERT_EQUAL_FATAL(c2.n_replies, 1);
	CU_ASSERT_EQUAL(c2.replies[0].status, 200);
	client_free(&c2);

	/* the open one still works on a's context */
	CU_ASSERT_EQUAL(write(c1.go[1], "g", 1), 1);
	wait_client(&f);
	CU_ASSERT_EQUAL_FATAL(c1.n_replies, 2);
	CU_ASSERT_EQUAL(c1.replies[1].status, 200);
	CU_ASSERT_PTR_NULL(strcasestr(c1.replies[1].text, "Connection: close"));

	/* drain (SIGTERM): still accepting, not ready, a new keep-alive connection is served
	 * and told to close */
	webhook_drain(f.w);
	CU_ASSERT_FALSE(webhook_ready(f.w, reason, sizeof(reason)));
	CU_ASSERT_PTR_NOT_NULL(strstr(reason, "draining"));
	exchange(&f, &c2, true, post("/validate", "application/json", body, true));
	CU_ASSERT_EQUAL_FATAL(c2.n_replies, 1);
	CU_ASSERT_EQUAL(c2.replies[0].status, 200);
	CU_ASSERT_PTR_NOT_NULL(strcasestr(c2.replies[0].text, "Connection: close"));
	client_free(&c2);

	/* then no more connections: not ready, the open connection is served and told to close */
	webhook_stop_accepting(f.w);
	webhook_stop_accepting(f.w); /* twice is fine */
	CU_ASSERT_FALSE(webhook_ready(f.w, reason, sizeof(reason)));
	CU_ASSERT_PTR_NOT_NULL(strstr(reason, "shutting down"));
	CU_ASSERT_EQUAL(write(c1.go[1], "g", 1), 1);
	wait_client(&f);
	client_join(&f, &c1);
	CU_ASSERT_EQUAL_FATAL(c1.n_replies, 3);
	CU_ASSERT_EQUAL(c1.replies[2].status, 200);
	CU_ASSERT_PTR_NOT_NULL(strcasestr(c1.replies[2].text, "Connection: close"));
	client_free(&c1);

	fixture_done(&f);
	free_pair(&a);
	free_pair(&b);
	free(body);
}

/* A body near the limit goes through TLS and evhttp's read limits whole. */
static void
test_large_body(void)
{
	struct fixture f;
	struct client c;
	struct pem_pair a;
	size_t n = WEBHOOK_BODY_MAX - 4096;
	char *big = malloc(n + 1), *req = NULL, *body;

	CU_ASSERT_PTR_NOT_NULL_FATAL(big);
	memset(big, 'x', n);
	big[n] = '\0';
	CU_ASSERT_FATAL(asprintf(&req,
			    "\"uid\":\"big\"," POOL_RES ",\"operation\":\"CREATE\",\"name\":\"ok\","
			    "\"object\":{\"data\":\"%s\"}",
			    big) > 0);
	free(big);
	body = review(V1, req);
	free(req);
	CU_ASSERT_FATAL(strlen(body) <= WEBHOOK_BODY_MAX);
	make_pair(&a, "a");
	fixture_init(&f);
	CU_ASSERT_EQUAL_FATAL(webhook_set_cert(f.w, a.cert, a.key), 0);
	/* the size is under test, not the speed: under valgrind on a busy machine, 3 MiB through
	 * TLS once took longer than the 10 s request timeout */
	CU_ASSERT_EQUAL_FATAL(webhook_set_timeout(f.w, 120000), 0);
	exchange(&f, &c, true, post("/validate", "application/json", body, false));
	CU_ASSERT_EQUAL_FATAL(c.n_replies, 1);
	CU_ASSERT_EQUAL(c.replies[0].status, 200);
	CU_ASSERT_PTR_NOT_NULL(strstr(c.replies[0].body, "\"uid\":\"big\""));
	CU_ASSERT_EQUAL(f.decided.n, 1);
	client_free(&c);
	fixture_done(&f);
	free_pair(&a);
	free(body);
}

/* A client that connects and says nothing (no TLS handshake) is closed after the timeout. */
static void
test_idle_client(void)
{
	struct fixture f;
	struct client c;
	struct pem_pair a;

	make_pair(&a, "a");
	fixture_init(&f);
	CU_ASSERT_EQUAL_FATAL(webhook_set_cert(f.w, a.cert, a.key), 0);
	CU_ASSERT_EQUAL(webhook_set_timeout(f.w, 0), -EINVAL);
	CU_ASSERT_EQUAL_FATAL(webhook_set_timeout(f.w, 50), 0);
	client_start(&f, &c, true);
	c.idle = true;
	client_run(&f, &c);
	wait_client(&f);
	client_join(&f, &c);
	CU_ASSERT_TRUE(c.connected);
	CU_ASSERT_TRUE(c.closed_by_server);
	/* the slot is given back (bounded wait on the loop) */
	for (int i = 0; i < 1000 && webhook_connections(f.w) > 0; i++)
		event_base_loop(f.base, EVLOOP_NONBLOCK);
	CU_ASSERT_EQUAL(webhook_connections(f.w), 0);
	client_free(&c);
	fixture_done(&f);
	free_pair(&a);
}

static int
suite_init(void)
{
	log_init("test-controller-webhook",
	    getenv("VMDHCP_TEST_DEBUG") ? LOG_LEVEL_DEBUG : LOG_LEVEL_ERROR);
	return 0;
}

static const struct test_case codec_tests[] = {
    {"parse v1 create", test_parse_v1_create},
    {"parse v1beta1 update, delete, others", test_parse_v1beta1_update_delete},
    {"parse malformed", test_parse_malformed},
    {"parse limits", test_parse_limits},
    {"answer", test_answer},
    {"round trip", test_round_trip},
    {NULL, NULL},
};

static const struct test_case server_tests[] = {
    {"no certificate", test_no_cert},
    {"reviews", test_reviews},
    {"tls versions", test_tls_versions},
    {"certificate swap and drain", test_cert_swap_and_drain},
    {"large body", test_large_body},
    {"idle client", test_idle_client},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "codec", .init = suite_init, .tests = codec_tests},
    {.name = "server", .init = suite_init, .tests = server_tests},
    {.name = NULL},
};
