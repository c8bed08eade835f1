/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The test API server over HTTPS: verbs, errors, selectors, pagination, faults, restart.
 *
 * Size: about 1300 lines, one file on purpose: one test API server started once for all the
 * cases of its HTTP API, with shared request helpers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "kube/yaml.h"
#include "lib/util.h"
#include "tests/helpers/apiserver.h"
#include "tests/runner.h"

static struct test_apiserver *srv;

#define POOLS "/apis/network.harvesterhci.io/v1alpha1/namespaces/%s/ippools"
#define MERGE "application/merge-patch+json"
#define JSONPATCH "application/json-patch+json"

static int
suite_init(void)
{
	return test_apiserver_start(&srv, NULL) < 0 ? -1 : 0;
}

static int
suite_cleanup(void)
{
	srv = test_apiserver_stop(srv);
	return 0;
}

/* Request returning the parsed body (new reference, NULL when not JSON) and the code. */
static json_t *req(const char *method, const char *ct, const char *body, long *code,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static json_t *
req(const char *method, const char *ct, const char *body, long *code, const char *fmt, ...)
{
	char path[2048], *out = NULL;
	va_list ap;
	json_t *j;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	*code = 0;
	if (test_apiserver_request(srv, method, path, ct, body, code, &out) < 0)
		return NULL;
	j = json_loads(out, 0, NULL);
	free(out);
	return j;
}

static const char *
meta_str(json_t *o, const char *k)
{
	return json_string_value(json_object_get(json_object_get(o, "metadata"), k));
}

static long long
meta_int(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(json_object_get(o, "metadata"), k));
}

static unsigned long long
rv_of(json_t *o)
{
	const char *s = meta_str(o, "resourceVersion");

	return s != NULL ? strtoull(s, NULL, 10) : 0;
}

/* Asserts a Status body with code and reason. */
static void
check_status(json_t *j, long code, long want_code, const char *reason)
{
	CU_ASSERT_EQUAL(code, want_code);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "kind")), "Status");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "apiVersion")), "v1");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "status")), "Failure");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(j, "code")), want_code);
	CU_ASSERT_PTR_NOT_NULL(json_string_value(json_object_get(j, "message")));
	if (reason != NULL) {
		const char *r = json_string_value(json_object_get(j, "reason"));
		CU_ASSERT_PTR_NOT_NULL_FATAL(r);
		CU_ASSERT_STRING_EQUAL(r, reason);
	}
}

static json_t *
create_pool(const char *ns, const char *name, const char *labels, long *code)
{
	char body[1024];

	snprintf(body, sizeof(body),
	    "{\"apiVersion\":\"network.harvesterhci.io/v1alpha1\",\"kind\":\"IPPool\","
	    "\"metadata\":{\"name\":\"%s\",\"labels\":{%s}},"
	    "\"spec\":{\"networkName\":\"default/net\",\"ipv4Config\":{\"cidr\":\"10.0.0.0/24\"}},"
	    "\"status\":{\"ipv4\":{\"used\":5}}}",
	    name, labels != NULL ? labels : "");
	return req("POST", NULL, body, code, POOLS, ns);
}

/* --- tests ------------------------------------------------------------------------------ */

static void
test_auth(void)
{
	long code;
	char *out = NULL;
	CURL *c = curl_easy_init();
	char url[256];

	/* No token at all: plain libcurl. */
	snprintf(url, sizeof(url), "%s/api/v1/namespaces/default/pods", test_apiserver_url(srv));
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CAINFO, test_apiserver_ca_file(srv));
	FILE *devnull = fopen("/dev/null", "w");
	curl_easy_setopt(c, CURLOPT_WRITEDATA, devnull);
	CU_ASSERT_EQUAL(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	CU_ASSERT_EQUAL(code, 401);
	fclose(devnull);
	curl_easy_cleanup(c);
	(void)out;

	/* The right token works and health needs none. */
	json_t *j = req("GET", NULL, NULL, &code, "/api/v1/namespaces/default/pods");
	CU_ASSERT_EQUAL(code, 200);
	json_decref(j);
}

static void
test_discovery(void)
{
	long code;
	json_t *j = req("GET", NULL, NULL, &code, "/version");

	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "major")), "1");
	json_decref(j);
	j = req("GET", NULL, NULL, &code, "/api");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "kind")), "APIVersions");
	json_decref(j);
	j = req("GET", NULL, NULL, &code, "/apis");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "kind")), "APIGroupList");
	CU_ASSERT(json_array_size(json_object_get(j, "groups")) > 3);
	json_decref(j);
	j = req("GET", NULL, NULL, &code, "/apis/network.harvesterhci.io/v1alpha1");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(j, "kind")), "APIResourceList");
	{
		json_t *r;
		size_t i;
		int found = 0;
		json_array_foreach(json_object_get(j, "resources"), i,
		    r) if (strcmp(json_string_value(json_object_get(r, "name")), "ippools") == 0)
		{
			found = 1;
			CU_ASSERT_STRING_EQUAL(
			    json_string_value(json_object_get(r, "kind")), "IPPool");
			CU_ASSERT(json_is_true(json_object_get(r, "namespaced")));
		}
		CU_ASSERT(found);
	}
	json_decref(j);
	j = req("GET", NULL, NULL, &code, "/api/v1");
	CU_ASSERT_EQUAL(code, 200);
	json_decref(j);
}

static void
test_create_get(void)
{
	long code;
	json_t *o = create_pool("crud", "p1", "\"app\":\"x\"", &code), *g, *e;

	CU_ASSERT_EQUAL_FATAL(code, 201);
	CU_ASSERT_STRING_EQUAL(meta_str(o, "name"), "p1");
	CU_ASSERT_STRING_EQUAL(meta_str(o, "namespace"), "crud");
	CU_ASSERT_EQUAL(strlen(meta_str(o, "uid")), 36);
	CU_ASSERT_PTR_NOT_NULL(meta_str(o, "creationTimestamp"));
	CU_ASSERT_EQUAL(meta_int(o, "generation"), 1);
	CU_ASSERT(rv_of(o) > 0);
	/* A custom resource with the status subresource: create drops status. */
	CU_ASSERT_PTR_NULL(json_object_get(o, "status"));

	g = req("GET", NULL, NULL, &code, POOLS "/p1", "crud");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT(json_equal(o, g));
	json_decref(g);

	/* AlreadyExists */
	e = create_pool("crud", "p1", NULL, &code);
	check_status(e, code, 409, "AlreadyExists");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_object_get(e, "details"), "name")), "p1");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_object_get(e, "details"), "kind")), "ippools");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_object_get(e, "details"), "group")),
	    "network.harvesterhci.io");
	json_decref(e);

	/* NotFound */
	e = req("GET", NULL, NULL, &code, POOLS "/nope", "crud");
	check_status(e, code, 404, "NotFound");
	json_decref(e);

	/* Missing name, mismatched namespace: 422 */
	e = req("POST", NULL, "{\"metadata\":{}}", &code, POOLS, "crud");
	check_status(e, code, 422, "Invalid");
	json_decref(e);
	e = req("POST", NULL, "{\"metadata\":{\"name\":\"x\",\"namespace\":\"other\"}}", &code,
	    POOLS, "crud");
	check_status(e, code, 422, "Invalid");
	json_decref(e);
	e = req("POST", NULL, "{\"metadata\":{\"name\":\"Bad_Name\"}}", &code, POOLS, "crud");
	check_status(e, code, 422, "Invalid");
	json_decref(e);

	/* Not JSON: 400 */
	e = req("POST", NULL, "{nope", &code, POOLS, "crud");
	check_status(e, code, 400, "BadRequest");
	json_decref(e);

	/* generateName */
	g = req("POST", NULL, "{\"metadata\":{\"generateName\":\"gen-\"}}", &code, POOLS, "crud");
	CU_ASSERT_EQUAL(code, 201);
	CU_ASSERT_EQUAL(strncmp(meta_str(g, "name"), "gen-", 4), 0);
	CU_ASSERT_EQUAL(strlen(meta_str(g, "name")), 9);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(g, "kind")), "IPPool");
	json_decref(g);
	json_decref(o);
}

static void
test_resource_versions_increase(void)
{
	long code;
	json_t *a = create_pool("rv", "a", NULL, &code);
	json_t *b = create_pool("rv", "b", NULL, &code);
	json_t *l = req("GET", NULL, NULL, &code, POOLS, "rv");
	unsigned long long lrv;

	CU_ASSERT(rv_of(b) > rv_of(a));
	lrv = strtoull(
	    json_string_value(json_object_get(json_object_get(l, "metadata"), "resourceVersion")),
	    NULL, 10);
	CU_ASSERT(lrv >= rv_of(b));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(l, "kind")), "IPPoolList");
	CU_ASSERT_EQUAL(json_array_size(json_object_get(l, "items")), 2);
	json_decref(a);
	json_decref(b);
	json_decref(l);
}

static void
test_update_conflict_and_status_rules(void)
{
	long code;
	json_t *o = create_pool("upd", "u1", NULL, &code), *u, *e, *s;
	char *body;
	unsigned long long rv0 = rv_of(o);

	/* main endpoint: spec change bumps generation, status is ignored */
	json_object_set_new(json_object_get(o, "spec"), "paused", json_true());
	json_object_set_new(o, "status", json_pack("{s:{s:i}}", "ipv4", "used", 7));
	body = json_dumps(o, 0);
	u = req("PUT", NULL, body, &code, POOLS "/u1", "upd");
	free(body);
	CU_ASSERT_EQUAL_FATAL(code, 200);
	CU_ASSERT_EQUAL(meta_int(u, "generation"), 2);
	CU_ASSERT(rv_of(u) > rv0);
	CU_ASSERT_PTR_NULL(json_object_get(u, "status"));
	CU_ASSERT(json_is_true(json_object_get(json_object_get(u, "spec"), "paused")));

	/* stale resourceVersion: 409 Conflict (o still carries rv0) */
	body = json_dumps(o, 0);
	e = req("PUT", NULL, body, &code, POOLS "/u1", "upd");
	free(body);
	check_status(e, code, 409, "Conflict");
	json_decref(e);

	/* /status: only status changes, generation unchanged */
	json_object_set_new(u, "status", json_pack("{s:{s:i}}", "ipv4", "used", 9));
	json_object_set_new(json_object_get(u, "spec"), "networkName", json_string("changed"));
	body = json_dumps(u, 0);
	s = req("PUT", NULL, body, &code, POOLS "/u1/status", "upd");
	free(body);
	CU_ASSERT_EQUAL_FATAL(code, 200);
	CU_ASSERT_EQUAL(meta_int(s, "generation"), 2);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(
			    json_object_get(json_object_get(s, "status"), "ipv4"), "used")),
	    9);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_object_get(s, "spec"), "networkName")),
	    "default/net");

	/* metadata-only change: no generation bump; unconditional (no resourceVersion) */
	json_object_del(json_object_get(s, "metadata"), "resourceVersion");
	json_object_set_new(json_object_get(s, "metadata"), "labels", json_pack("{s:s}", "k", "v"));
	body = json_dumps(s, 0);
	json_decref(u);
	u = req("PUT", NULL, body, &code, POOLS "/u1", "upd");
	free(body);
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_EQUAL(meta_int(u, "generation"), 2);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(
				   json_object_get(json_object_get(u, "metadata"), "labels"), "k")),
	    "v");
	/* status survived the main-endpoint update */
	CU_ASSERT_PTR_NOT_NULL(json_object_get(u, "status"));

	/* a write that changes nothing keeps the resourceVersion */
	body = json_dumps(u, 0);
	json_decref(s);
	s = req("PUT", NULL, body, &code, POOLS "/u1", "upd");
	free(body);
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_EQUAL(rv_of(s), rv_of(u));

	/* name mismatch: 400; missing object: 404 */
	e = req("PUT", NULL, "{\"metadata\":{\"name\":\"other\"}}", &code, POOLS "/u1", "upd");
	check_status(e, code, 400, "BadRequest");
	json_decref(e);
	e = req("PUT", NULL, "{\"metadata\":{\"name\":\"zz\"}}", &code, POOLS "/zz", "upd");
	check_status(e, code, 404, "NotFound");
	json_decref(e);
	json_decref(o);
	json_decref(u);
	json_decref(s);
}

static void
test_merge_patch(void)
{
	long code;
	json_t *o = create_pool("mp", "m1", "\"a\":\"1\",\"b\":\"2\"", &code), *p, *e;
	char body[512];

	p = req("PATCH", MERGE,
	    "{\"metadata\":{\"labels\":{\"a\":null,\"c\":\"3\"}},"
	    "\"spec\":{\"ipv4Config\":{\"serverIP\":\"10.0.0.2\"}}}",
	    &code, POOLS "/m1", "mp");
	CU_ASSERT_EQUAL_FATAL(code, 200);
	json_t *labels = json_object_get(json_object_get(p, "metadata"), "labels");
	CU_ASSERT_PTR_NULL(json_object_get(labels, "a"));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(labels, "b")), "2");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(labels, "c")), "3");
	json_t *v4 = json_object_get(json_object_get(p, "spec"), "ipv4Config");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(v4, "cidr")), "10.0.0.0/24");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(v4, "serverIP")), "10.0.0.2");
	CU_ASSERT_EQUAL(meta_int(p, "generation"), 2);
	json_decref(p);

	/* status through the main endpoint is ignored; through /status it is applied */
	p = req("PATCH", MERGE, "{\"status\":{\"ipv4\":{\"used\":3}}}", &code, POOLS "/m1", "mp");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_PTR_NULL(json_object_get(p, "status"));
	json_decref(p);
	p = req("PATCH", "application/strategic-merge-patch+json",
	    "{\"status\":{\"ipv4\":{\"used\":3}},\"spec\":{\"paused\":true}}", &code,
	    POOLS "/m1/status", "mp");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(
			    json_object_get(json_object_get(p, "status"), "ipv4"), "used")),
	    3);
	CU_ASSERT_PTR_NULL(json_object_get(json_object_get(p, "spec"), "paused"));
	CU_ASSERT_EQUAL(meta_int(p, "generation"), 2);

	/* resourceVersion in a patch is a precondition */
	snprintf(body, sizeof(body),
	    "{\"metadata\":{\"resourceVersion\":\"%llu\"},\"spec\":{\"x\":1}}", rv_of(o));
	e = req("PATCH", MERGE, body, &code, POOLS "/m1", "mp");
	check_status(e, code, 409, "Conflict");
	json_decref(e);
	snprintf(body, sizeof(body),
	    "{\"metadata\":{\"resourceVersion\":\"%llu\"},\"spec\":{\"x\":1}}", rv_of(p));
	e = req("PATCH", MERGE, body, &code, POOLS "/m1", "mp");
	CU_ASSERT_EQUAL(code, 200);
	json_decref(e);

	/* unsupported media type, missing object */
	e = req("PATCH", "application/apply-patch+yaml", "{}", &code, POOLS "/m1", "mp");
	check_status(e, code, 415, "UnsupportedMediaType");
	json_decref(e);
	e = req("PATCH", MERGE, "{}", &code, POOLS "/none", "mp");
	check_status(e, code, 404, "NotFound");
	json_decref(e);
	json_decref(p);
	json_decref(o);
}

static void
test_json_patch(void)
{
	long code;
	json_t *o = create_pool("jp", "j1", "\"a\":\"1\"", &code), *p, *e;

	json_decref(o);
	p = req("PATCH", JSONPATCH,
	    "[{\"op\":\"add\",\"path\":\"/spec/list\",\"value\":[1,2]},"
	    "{\"op\":\"add\",\"path\":\"/spec/list/-\",\"value\":3},"
	    "{\"op\":\"add\",\"path\":\"/spec/list/0\",\"value\":0},"
	    "{\"op\":\"replace\",\"path\":\"/spec/networkName\",\"value\":\"ns/n2\"},"
	    "{\"op\":\"remove\",\"path\":\"/spec/list/1\"},"
	    "{\"op\":\"add\",\"path\":\"/metadata/labels/a~1b\",\"value\":\"slash\"}]",
	    &code, POOLS "/j1", "jp");
	CU_ASSERT_EQUAL_FATAL(code, 200);
	json_t *spec = json_object_get(p, "spec");
	json_t *want = json_loads("[0,2,3]", 0, NULL);
	CU_ASSERT(json_equal(json_object_get(spec, "list"), want));
	json_decref(want);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(spec, "networkName")), "ns/n2");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(
		json_object_get(json_object_get(json_object_get(p, "metadata"), "labels"), "a/b")),
	    "slash");

	/* an operation that does not apply leaves the object unchanged (all or nothing) */
	e = req("PATCH", JSONPATCH,
	    "[{\"op\":\"replace\",\"path\":\"/spec/networkName\",\"value\":\"zzz\"},"
	    "{\"op\":\"replace\",\"path\":\"/spec/nothere\",\"value\":\"other\"}]",
	    &code, POOLS "/j1", "jp");
	check_status(e, code, 422, NULL);
	json_decref(e);
	e = req("GET", NULL, NULL, &code, POOLS "/j1", "jp");
	CU_ASSERT(json_equal(e, p));
	json_decref(e);
	/* remove of a missing path, malformed documents */
	e = req("PATCH", JSONPATCH, "[{\"op\":\"remove\",\"path\":\"/spec/nothere\"}]", &code,
	    POOLS "/j1", "jp");
	check_status(e, code, 422, NULL);
	json_decref(e);
	e = req("PATCH", JSONPATCH, "{\"op\":\"remove\"}", &code, POOLS "/j1", "jp");
	check_status(e, code, 400, "BadRequest");
	json_decref(e);
	e = req("PATCH", JSONPATCH, "[{\"op\":\"frobnicate\",\"path\":\"/a\"}]", &code, POOLS "/j1",
	    "jp");
	check_status(e, code, 400, "BadRequest");
	json_decref(e);
	/* move, copy and test are not served (nothing sends them) */
	e = req("PATCH", JSONPATCH,
	    "[{\"op\":\"copy\",\"from\":\"/spec/networkName\",\"path\":\"/spec/c\"}]", &code,
	    POOLS "/j1", "jp");
	check_status(e, code, 400, "BadRequest");
	json_decref(e);
	/* status through /status with a JSON patch */
	e = req("PATCH", JSONPATCH, "[{\"op\":\"add\",\"path\":\"/status\",\"value\":{\"x\":1}}]",
	    &code, POOLS "/j1/status", "jp");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(e, "status"), "x")), 1);
	json_decref(e);
	json_decref(p);
}

static void
test_delete_and_finalizers(void)
{
	long code;
	json_t *o = create_pool("del", "d1", NULL, &code), *d, *e, *g;
	char body[512];

	/* preconditions */
	e = req("DELETE", NULL, "{\"preconditions\":{\"uid\":\"not-the-uid\"}}", &code, POOLS "/d1",
	    "del");
	check_status(e, code, 409, "Conflict");
	json_decref(e);
	e = req("DELETE", NULL, "{\"preconditions\":{\"resourceVersion\":\"1\"}}", &code,
	    POOLS "/d1", "del");
	check_status(e, code, 409, "Conflict");
	json_decref(e);
	snprintf(body, sizeof(body), "{\"preconditions\":{\"uid\":\"%s\"}}", meta_str(o, "uid"));
	d = req("DELETE", NULL, body, &code, POOLS "/d1", "del");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_STRING_EQUAL(meta_str(d, "name"), "d1");
	CU_ASSERT(rv_of(d) > rv_of(o));
	json_decref(d);
	e = req("GET", NULL, NULL, &code, POOLS "/d1", "del");
	check_status(e, code, 404, "NotFound");
	json_decref(e);
	e = req("DELETE", NULL, NULL, &code, POOLS "/d1", "del");
	check_status(e, code, 404, "NotFound");
	json_decref(e);
	json_decref(o);

	/* with a finalizer: marked, kept, removed once the finalizer goes */
	o = req("POST", NULL, "{\"metadata\":{\"name\":\"d2\",\"finalizers\":[\"x/y\"]}}", &code,
	    POOLS, "del");
	CU_ASSERT_EQUAL_FATAL(code, 201);
	d = req("DELETE", NULL, NULL, &code, POOLS "/d2", "del");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_PTR_NOT_NULL(meta_str(d, "deletionTimestamp"));
	g = req("GET", NULL, NULL, &code, POOLS "/d2", "del");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_PTR_NOT_NULL(meta_str(g, "deletionTimestamp"));
	json_decref(g);
	/* deleting again changes nothing */
	g = req("DELETE", NULL, NULL, &code, POOLS "/d2", "del");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_EQUAL(rv_of(g), rv_of(d));
	json_decref(g);
	/* no new finalizers while deleting */
	e = req("PATCH", MERGE, "{\"metadata\":{\"finalizers\":[\"x/y\",\"z\"]}}", &code,
	    POOLS "/d2", "del");
	check_status(e, code, 422, "Invalid");
	json_decref(e);
	g = req("PATCH", MERGE, "{\"metadata\":{\"finalizers\":null}}", &code, POOLS "/d2", "del");
	CU_ASSERT_EQUAL(code, 200);
	json_decref(g);
	e = req("GET", NULL, NULL, &code, POOLS "/d2", "del");
	check_status(e, code, 404, "NotFound");
	json_decref(e);
	json_decref(d);
	json_decref(o);
}

static size_t
list_count(const char *fmt, const char *query)
{
	long code;
	json_t *l = req("GET", NULL, NULL, &code, "%s%s", fmt, query);
	size_t n = json_array_size(json_object_get(l, "items"));

	CU_ASSERT_EQUAL(code, 200);
	json_decref(l);
	return n;
}

static void
test_selectors(void)
{
	static const struct {
		const char *name, *labels;
	} objs[] = {
	    {"s1", "\"env\":\"prod\",\"tier\":\"web\""},
	    {"s2", "\"env\":\"dev\",\"tier\":\"web\""},
	    {"s3", "\"env\":\"qa\""},
	    {"s4", ""},
	};
	static const struct {
		const char *query;
		size_t want;
	} cases[] = {
	    {"", 4},
	    {"?labelSelector=env%3Dprod", 1},
	    {"?labelSelector=env%3D%3Dprod", 1},
	    {"?labelSelector=env!%3Dprod", 3},
	    {"?labelSelector=env%20in%20(prod,dev)", 2},
	    {"?labelSelector=env%20notin%20(prod,dev)", 2},
	    {"?labelSelector=tier", 2},
	    {"?labelSelector=!tier", 2},
	    {"?labelSelector=tier%3Dweb,env!%3Ddev", 1},
	    {"?labelSelector=env%20in%20(prod,qa),!tier", 1},
	    {"?fieldSelector=metadata.name%3Ds3", 1},
	    {"?fieldSelector=metadata.name!%3Ds3", 3},
	    {"?fieldSelector=metadata.namespace%3D%3Dsel", 4},
	    {"?fieldSelector=metadata.namespace%3Dother", 0},
	    {"?fieldSelector=metadata.name%3Ds1&labelSelector=env%3Ddev", 0},
	};
	char path[256];
	long code;
	json_t *e;

	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++) {
		json_t *o = create_pool("sel", objs[i].name, objs[i].labels, &code);
		CU_ASSERT_EQUAL(code, 201);
		json_decref(o);
	}
	json_decref(create_pool("sel-other", "s5", "\"env\":\"prod\"", &code));
	snprintf(path, sizeof(path), POOLS, "sel");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = list_count(path, cases[i].query);
		if (n != cases[i].want)
			fprintf(stderr, "selector %s: %zu items, want %zu\n", cases[i].query, n,
			    cases[i].want);
		CU_ASSERT_EQUAL(n, cases[i].want);
	}
	/* across namespaces */
	CU_ASSERT(list_count("/apis/network.harvesterhci.io/v1alpha1/ippools",
		      "?labelSelector=env%3Dprod") >= 2);
	e = req("GET", NULL, NULL, &code, POOLS "?labelSelector=env%%20in%%20(a", "sel");
	check_status(e, code, 400, "BadRequest");
	json_decref(e);
}

static void
test_cluster_scoped_and_crd(void)
{
	long code;
	json_t *o, *e, *l;

	o = req("POST", NULL, "{\"metadata\":{\"name\":\"node-a\",\"labels\":{\"r\":\"1\"}}}",
	    &code, "/api/v1/nodes");
	CU_ASSERT_EQUAL(code, 201);
	CU_ASSERT_PTR_NULL(meta_str(o, "namespace"));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "kind")), "Node");
	json_decref(o);
	o = req("GET", NULL, NULL, &code, "/api/v1/nodes/node-a");
	CU_ASSERT_EQUAL(code, 200);
	json_decref(o);
	e = req("GET", NULL, NULL, &code, "/api/v1/namespaces/default/nodes/node-a");
	CU_ASSERT_EQUAL(code, 404);
	json_decref(e);
	/* webhook configurations are cluster-scoped */
	o = req("POST", NULL, "{\"metadata\":{\"name\":\"hook\"},\"webhooks\":[]}", &code,
	    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations");
	CU_ASSERT_EQUAL(code, 201);
	CU_ASSERT_PTR_NULL(meta_str(o, "namespace"));
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(o, "kind")), "ValidatingWebhookConfiguration");
	json_decref(o);
	o = req("GET", NULL, NULL, &code,
	    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/hook");
	CU_ASSERT_EQUAL(code, 404);
	json_decref(o);
	o = req("GET", NULL, NULL, &code,
	    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/hook");
	CU_ASSERT_EQUAL(code, 200);
	json_decref(o);
	/* namespaces are cluster-scoped; /namespaces/NAME is the namespace itself */
	o = req("POST", NULL, "{\"metadata\":{\"name\":\"team\"}}", &code, "/api/v1/namespaces");
	CU_ASSERT_EQUAL(code, 201);
	json_decref(o);
	o = req("GET", NULL, NULL, &code, "/api/v1/namespaces/team");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "kind")), "Namespace");
	json_decref(o);

	/* A CRD with scope Cluster makes its resource cluster-scoped. */
	o = req("POST", NULL,
	    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
	    "\"metadata\":{\"name\":\"widgets.example.com\"},\"spec\":{\"group\":\"example.com\","
	    "\"scope\":\"Cluster\",\"names\":{\"plural\":\"widgets\",\"kind\":\"Widget\"},"
	    "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true}]}}",
	    &code, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
	CU_ASSERT_EQUAL(code, 201);
	json_decref(o);
	o = req("GET", NULL, NULL, &code,
	    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_PTR_NOT_NULL(json_object_get(json_object_get(o, "status"), "conditions"));
	json_decref(o);
	o = req("POST", NULL,
	    "{\"metadata\":{\"name\":\"w1\"},\"spec\":{\"a\":1},"
	    "\"status\":{\"kept\":true}}",
	    &code, "/apis/example.com/v1/widgets");
	CU_ASSERT_EQUAL(code, 201);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "kind")), "Widget");
	/* no status subresource in that CRD: status is an ordinary field */
	CU_ASSERT_PTR_NOT_NULL(json_object_get(o, "status"));
	json_decref(o);
	o = req("PATCH", MERGE, "{\"status\":{\"kept\":false}}", &code,
	    "/apis/example.com/v1/widgets/w1");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT(json_is_false(json_object_get(json_object_get(o, "status"), "kept")));
	json_decref(o);
	e = req("POST", NULL, "{\"metadata\":{\"name\":\"w2\"}}", &code,
	    "/apis/example.com/v1/namespaces/default/widgets");
	CU_ASSERT_EQUAL(code, 404);
	json_decref(e);
	l = req("GET", NULL, NULL, &code, "/apis/example.com/v1/widgets");
	CU_ASSERT_EQUAL(json_array_size(json_object_get(l, "items")), 1);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(l, "kind")), "WidgetList");
	json_decref(l);
	/* a namespaced resource needs a namespace to create in */
	e = req("POST", NULL, "{\"metadata\":{\"name\":\"x\"}}", &code,
	    "/apis/network.harvesterhci.io/v1alpha1/ippools");
	CU_ASSERT_EQUAL(code, 404);
	json_decref(e);
}

static void
test_pagination_5000(void)
{
	enum { N = 5000, LIMIT = 700 };
	char name[64], body[256], *seen = calloc(N, 1);
	long code;
	json_t *o, *l;
	char *cont = NULL;
	size_t pages = 0, total = 0;
	unsigned long long list_rv = 0;

	for (int i = 0; i < N; i++) {
		snprintf(body, sizeof(body),
		    "{\"metadata\":{\"name\":\"obj-%05d\"},\"data\":{\"v\":\"0\"}}", i);
		o = req("POST", NULL, body, &code, "/api/v1/namespaces/page/configmaps");
		if (code != 201) {
			CU_FAIL("create failed");
			json_decref(o);
			break;
		}
		json_decref(o);
	}
	for (;;) {
		char path[1024];
		json_t *item;
		size_t i;

		if (cont == NULL)
			snprintf(path, sizeof(path), "/api/v1/namespaces/page/configmaps?limit=%d",
			    LIMIT);
		else
			snprintf(path, sizeof(path),
			    "/api/v1/namespaces/page/configmaps?limit=%d&continue=%s", LIMIT, cont);
		l = req("GET", NULL, NULL, &code, "%s", path);
		CU_ASSERT_EQUAL_FATAL(code, 200);
		unsigned long long rv = strtoull(
		    json_string_value(
			json_object_get(json_object_get(l, "metadata"), "resourceVersion")),
		    NULL, 10);
		if (pages == 0)
			list_rv = rv;
		CU_ASSERT_EQUAL(rv, list_rv); /* every page is served at the first page's version */
		CU_ASSERT(json_array_size(json_object_get(l, "items")) <= LIMIT);
		json_array_foreach(json_object_get(l, "items"), i, item)
		{
			int idx;
			CU_ASSERT_EQUAL(sscanf(meta_str(item, "name"), "obj-%d", &idx), 1);
			if (idx >= 0 && idx < N) {
				CU_ASSERT_EQUAL(seen[idx], 0);
				seen[idx] = 1;
				/* the state at the list's version, not later writes */
				CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(
							   json_object_get(item, "data"), "v")),
				    "0");
			} else {
				CU_FAIL("object created after the list started");
			}
			total++;
		}
		free(cont);
		cont = NULL;
		const char *c =
		    json_string_value(json_object_get(json_object_get(l, "metadata"), "continue"));
		if (c != NULL)
			cont = strdup(c);
		json_decref(l);
		pages++;
		if (cont == NULL)
			break;
		if (pages == 1) {
			/* writes between pages: delete a later object, modify another, add one */
			o = req("DELETE", NULL, NULL, &code,
			    "/api/v1/namespaces/page/configmaps/obj-04000");
			CU_ASSERT_EQUAL(code, 200);
			json_decref(o);
			o = req("PATCH", MERGE, "{\"data\":{\"v\":\"1\"}}", &code,
			    "/api/v1/namespaces/page/configmaps/obj-03000");
			CU_ASSERT_EQUAL(code, 200);
			json_decref(o);
			o = req("POST", NULL, "{\"metadata\":{\"name\":\"obj-99999\"}}", &code,
			    "/api/v1/namespaces/page/configmaps");
			CU_ASSERT_EQUAL(code, 201);
			json_decref(o);
		}
		CU_ASSERT_FATAL(pages < 100);
	}
	CU_ASSERT_EQUAL(total, N);
	CU_ASSERT_EQUAL(pages, (N + LIMIT - 1) / LIMIT);
	for (int i = 0; i < N; i++)
		if (!seen[i]) {
			snprintf(name, sizeof(name), "missing obj-%05d", i);
			CU_FAIL(name);
			break;
		}
	free(seen);

	/* a continue token older than the history window: 410 Expired */
	l = req("GET", NULL, NULL, &code, "/api/v1/namespaces/page/configmaps?limit=10");
	cont =
	    strdup(json_string_value(json_object_get(json_object_get(l, "metadata"), "continue")));
	json_decref(l);
	json_decref(
	    req("DELETE", NULL, NULL, &code, "/api/v1/namespaces/page/configmaps/obj-00000"));
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "compact"), 0);
	l = req("GET", NULL, NULL, &code, "/api/v1/namespaces/page/configmaps?limit=10&continue=%s",
	    cont);
	check_status(l, code, 410, "Expired");
	json_decref(l);
	free(cont);
	l = req("GET", NULL, NULL, &code, "/api/v1/namespaces/page/configmaps?continue=garbage");
	check_status(l, code, 400, "BadRequest");
	json_decref(l);
}

static size_t
header_cb(char *buf, size_t size, size_t n, void *ud)
{
	int *found = ud;

	if (strncasecmp(buf, "Retry-After:", 12) == 0)
		*found = 1;
	return size * n;
}

static void
test_faults(void)
{
	long code;
	json_t *j, *stats;

	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "fail?code=500&count=2"), 0);
	for (int i = 0; i < 2; i++) {
		j = req("GET", NULL, NULL, &code, "/api/v1/namespaces/default/pods");
		check_status(j, code, 500, "InternalError");
		json_decref(j);
	}
	j = req("GET", NULL, NULL, &code, "/api/v1/namespaces/default/pods");
	CU_ASSERT_EQUAL(code, 200);
	json_decref(j);

	/* limited to a method and a path prefix: other requests pass and do not count */
	CU_ASSERT_EQUAL(
	    test_apiserver_fault(
		srv, "fail?code=403&count=1&method=POST&path=/api/v1/namespaces/default/secrets"),
	    0);
	j = req("GET", NULL, NULL, &code, "/api/v1/namespaces/default/secrets");
	CU_ASSERT_EQUAL(code, 200);
	json_decref(j);
	j = req("POST", NULL, "{\"metadata\":{\"name\":\"cm-f\"}}", &code,
	    "/api/v1/namespaces/default/configmaps");
	CU_ASSERT_EQUAL(code, 201);
	json_decref(j);
	j = req("POST", NULL, "{\"metadata\":{\"name\":\"s-f\"}}", &code,
	    "/api/v1/namespaces/default/secrets");
	check_status(j, code, 403, "Forbidden");
	json_decref(j);
	j = req("POST", NULL, "{\"metadata\":{\"name\":\"s-f\"}}", &code,
	    "/api/v1/namespaces/default/secrets");
	CU_ASSERT_EQUAL(code, 201);
	json_decref(j);

	/* 429 carries Retry-After */
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "fail?code=429&count=1"), 0);
	{
		CURL *c = curl_easy_init();
		struct curl_slist *h = NULL;
		char url[256], auth[300];
		int found = 0;
		FILE *devnull = fopen("/dev/null", "w");

		snprintf(url, sizeof(url), "%s/api/v1/pods", test_apiserver_url(srv));
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", test_apiserver_token(srv));
		h = curl_slist_append(h, auth);
		curl_easy_setopt(c, CURLOPT_URL, url);
		curl_easy_setopt(c, CURLOPT_CAINFO, test_apiserver_ca_file(srv));
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
		curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
		curl_easy_setopt(c, CURLOPT_HEADERDATA, &found);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, devnull);
		CU_ASSERT_EQUAL(curl_easy_perform(c), CURLE_OK);
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
		CU_ASSERT_EQUAL(code, 429);
		CU_ASSERT(found);
		curl_slist_free_all(h);
		curl_easy_cleanup(c);
		fclose(devnull);
	}

	/* a delay holds the request back (lower bound only) */
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "delay?ms=300&count=1"), 0);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	j = req("GET", NULL, NULL, &code, "/api/v1/namespaces/default/pods");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 >= 290);
	json_decref(j);

	/* stats */
	j = req("GET", NULL, NULL, &code, "/_test/stats");
	CU_ASSERT_EQUAL(code, 200);
	json_t *r = json_object_get(j, "requests");
	CU_ASSERT(json_integer_value(json_object_get(r, "list")) >= 4);
	CU_ASSERT(json_integer_value(json_object_get(j, "objects")) > 0);
	CU_ASSERT_PTR_NOT_NULL(json_string_value(json_object_get(j, "resourceVersion")));
	stats = j;
	j = req("POST", NULL, "{\"code\":503,\"count\":1}", &code, "/_test/fail");
	CU_ASSERT_EQUAL(code, 200);
	json_decref(j);
	j = req("GET", NULL, NULL, &code, "/api/v1/pods");
	check_status(j, code, 503, NULL);
	json_decref(j);
	j = req("POST", NULL, NULL, &code, "/_test/nonsense");
	CU_ASSERT_EQUAL(code, 404);
	json_decref(j);
	j = req("POST", NULL, NULL, &code, "/_test/fail?code=abc");
	CU_ASSERT_EQUAL(code, 400);
	json_decref(j);
	json_decref(stats);
}

static void
test_restart_keeps_data(void)
{
	struct test_apiserver *saved = srv;
	long code;
	json_t *o, *g, *n;
	char *ca1 = NULL, *ca2 = NULL, path[512];
	FILE *f;
	unsigned long long rv1;
	int port;

	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&srv, NULL), 0);
	port = test_apiserver_port(srv);
	o = create_pool("rs", "keep", "\"a\":\"b\"", &code);
	CU_ASSERT_EQUAL(code, 201);
	n = req("PATCH", MERGE, "{\"status\":{\"x\":1}}", &code, POOLS "/keep/status", "rs");
	rv1 = rv_of(n);
	json_decref(n);
	snprintf(path, sizeof(path), "%s/ca.crt", test_apiserver_dir(srv));
	f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	ca1 = calloc(1, 8192);
	CU_ASSERT(fread(ca1, 1, 8191, f) > 0);
	fclose(f);

	CU_ASSERT_EQUAL_FATAL(test_apiserver_restart(srv), 0);
	CU_ASSERT_EQUAL(test_apiserver_port(srv), port);
	f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	ca2 = calloc(1, 8192);
	CU_ASSERT(fread(ca2, 1, 8191, f) > 0);
	fclose(f);
	CU_ASSERT_STRING_EQUAL(ca1, ca2);

	g = req("GET", NULL, NULL, &code, POOLS "/keep", "rs");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_EQUAL(rv_of(g), rv1);
	CU_ASSERT_STRING_EQUAL(meta_str(g, "uid"), meta_str(o, "uid"));
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(json_object_get(g, "status"), "x")), 1);
	json_decref(g);
	/* the resourceVersion continues from where it was */
	n = create_pool("rs", "new", NULL, &code);
	CU_ASSERT_EQUAL(code, 201);
	CU_ASSERT(rv_of(n) > rv1);
	json_decref(n);
	/* explicit save */
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "save"), 0);
	snprintf(path, sizeof(path), "%s/data.json", test_apiserver_dir(srv));
	json_t *d = json_load_file(path, 0, NULL);
	CU_ASSERT_PTR_NOT_NULL(d);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(d, "objects")), 2);
	json_decref(d);
	json_decref(o);
	free(ca1);
	free(ca2);
	CU_ASSERT_EQUAL(test_apiserver_terminate(srv), 0);
	srv = test_apiserver_stop(srv);
	srv = saved;
}

static void
test_methods_and_odd_requests(void)
{
	static const struct {
		const char *method, *path, *ct, *body;
		long code;
	} cases[] = {
	    {"PUT", "/api/v1/namespaces/odd/configmaps", NULL, "{}", 405},
	    {"POST", "/api/v1/namespaces/odd/configmaps/x", NULL, "{}", 405},
	    {"DELETE", "/api/v1/namespaces/odd/pods/x/status", NULL, NULL, 405},
	    {"GET", "/api/v1/namespaces/odd/pods/x/log", NULL, NULL, 404},
	    {"GET", "/api/v2/pods", NULL, NULL, 404},
	    {"GET", "/", NULL, NULL, 404},
	    {"POST", "/api/v1/namespaces/odd/configmaps", NULL, "[1,2]", 400},
	    {"POST", "/api/v1/namespaces/odd/configmaps", NULL, "{\"metadata\":5}", 422},
	    {"GET", "/api/v1/namespaces/odd/pods?limit=-1", NULL, NULL, 400},
	    {"GET", "/api/v1/namespaces/odd/pods?watch=1&resourceVersion=abc", NULL, NULL, 400},
	    {"GET", "/api/v1/namespaces/odd/pods?fieldSelector=novalue", NULL, NULL, 400},
	    {"GET", "/api/v1/namespaces/odd/pods?continue=eyJ9", NULL, NULL, 400},
	    {"PATCH", "/api/v1/namespaces/odd/configmaps/c", "application/json", "{}", 415},
	    {"PATCH", "/api/v1/namespaces/odd/configmaps/c", MERGE, "[1]", 400},
	    {"PATCH", "/api/v1/namespaces/odd/configmaps/c", MERGE, "{\"metadata\":null}", 422},
	    {"PATCH", "/api/v1/namespaces/odd/configmaps/c", JSONPATCH,
		"[{\"op\":\"move\",\"from\":\"/data\",\"path\":\"/data/x\"}]", 400},
	    {"DELETE", "/api/v1/namespaces/odd/configmaps", NULL, NULL, 405},
	    {"PATCH", "/api/v1/namespaces/odd/configmaps/c", JSONPATCH,
		"[{\"op\":\"add\",\"path\":\"/data/a/b\",\"value\":1}]", 422},
	    {"PUT", "/api/v1/namespaces/odd/configmaps/c", NULL, "nope", 400},
	    {"DELETE", "/api/v1/namespaces/odd/configmaps/c", NULL, "{bad", 400},
	    {"GET", "/healthz", NULL, NULL, 200},
	};
	long code;
	json_t *j;

	j = req("POST", NULL, "{\"metadata\":{\"name\":\"c\"},\"data\":{\"a\":\"1\"}}", &code,
	    "/api/v1/namespaces/odd/configmaps");
	CU_ASSERT_EQUAL(code, 201);
	json_decref(j);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		j = req(cases[i].method, cases[i].ct, cases[i].body, &code, "%s", cases[i].path);
		if (code != cases[i].code)
			fprintf(stderr, "%s %s: %ld, want %ld\n", cases[i].method, cases[i].path,
			    code, cases[i].code);
		CU_ASSERT_EQUAL(code, cases[i].code);
		if (code >= 400)
			CU_ASSERT_STRING_EQUAL(
			    json_string_value(json_object_get(j, "kind")), "Status");
		json_decref(j);
	}
	/* the object came through all that unchanged */
	j = req("GET", NULL, NULL, &code, "/api/v1/namespaces/odd/configmaps/c");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_object_get(j, "data"), "a")), "1");
	json_decref(j);
}

static void
test_list_at_resource_version(void)
{
	long code;
	json_t *a, *l, *e;
	unsigned long long rv0;

	a = create_pool("exact", "a", "\"v\":\"0\"", &code);
	json_decref(create_pool("exact", "b", NULL, &code));
	l = req("GET", NULL, NULL, &code, POOLS, "exact");
	rv0 = strtoull(
	    json_string_value(json_object_get(json_object_get(l, "metadata"), "resourceVersion")),
	    NULL, 10);
	json_decref(l);
	json_decref(req("PATCH", MERGE, "{\"metadata\":{\"labels\":{\"v\":\"1\"}}}", &code,
	    POOLS "/a", "exact"));
	json_decref(req("DELETE", NULL, NULL, &code, POOLS "/b", "exact"));
	json_decref(create_pool("exact", "c", NULL, &code));

	/* Exact: the state at rv0 */
	l = req("GET", NULL, NULL, &code, POOLS "?resourceVersion=%llu&resourceVersionMatch=Exact",
	    "exact", rv0);
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(l, "items")), 2);
	CU_ASSERT_STRING_EQUAL(
	    meta_str(json_array_get(json_object_get(l, "items"), 0), "name"), "a");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(
		json_object_get(
		    json_object_get(json_array_get(json_object_get(l, "items"), 0), "metadata"),
		    "labels"),
		"v")),
	    "0");
	CU_ASSERT_STRING_EQUAL(
	    meta_str(json_array_get(json_object_get(l, "items"), 1), "name"), "b");
	json_decref(l);
	/* NotOlderThan (the default) and "0": the latest */
	l = req("GET", NULL, NULL, &code, POOLS "?resourceVersion=%llu", "exact", rv0);
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(l, "items")), 2); /* a, c */
	CU_ASSERT_STRING_EQUAL(
	    meta_str(json_array_get(json_object_get(l, "items"), 1), "name"), "c");
	json_decref(l);
	l = req("GET", NULL, NULL, &code, POOLS "?resourceVersion=0", "exact");
	CU_ASSERT_EQUAL(code, 200);
	json_decref(l);
	/* the future: 504; before the history: 410 */
	e = req("GET", NULL, NULL, &code, POOLS "?resourceVersion=99999999", "exact");
	check_status(e, code, 504, "Timeout");
	json_decref(e);
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "compact"), 0);
	e = req("GET", NULL, NULL, &code, POOLS "?resourceVersion=%llu&resourceVersionMatch=Exact",
	    "exact", rv0);
	check_status(e, code, 410, "Expired");
	json_decref(e);
	json_decref(a);
}

/* --- CRD schemas: pruning and defaulting ------------------------------------------------- */

#define GADGETS "/apis/example.com/v1/namespaces/sch/gadgets"

static const char gadget_crd[] =
    "{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"CustomResourceDefinition\","
    "\"metadata\":{\"name\":\"gadgets.example.com\"},\"spec\":{\"group\":\"example.com\","
    "\"scope\":\"Namespaced\",\"names\":{\"plural\":\"gadgets\",\"kind\":\"Gadget\"},"
    "\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
    "\"subresources\":{\"status\":{}},\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
    "\"properties\":{\"apiVersion\":{\"type\":\"string\"},\"kind\":{\"type\":\"string\"},"
    "\"metadata\":{\"type\":\"object\"},"
    "\"spec\":{\"type\":\"object\",\"properties\":{"
    "\"a\":{\"type\":\"string\",\"default\":\"x\"},"
    "\"n\":{\"type\":\"integer\",\"default\":5},"
    "\"nul\":{\"type\":\"string\",\"nullable\":true},"
    "\"keep\":{\"type\":\"object\",\"x-kubernetes-preserve-unknown-fields\":true},"
    "\"m\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"object\",\"properties\":{"
    "\"v\":{\"type\":\"string\"},\"d\":{\"type\":\"integer\",\"default\":1}}}},"
    "\"list\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
    "\"k\":{\"type\":\"string\"},\"d\":{\"type\":\"string\",\"default\":\"dd\"}}}},"
    "\"inner\":{\"type\":\"object\",\"properties\":{\"z\":{\"type\":\"integer\","
    "\"default\":7}}}}},"
    "\"status\":{\"type\":\"object\",\"properties\":{\"s\":{\"type\":\"string\"}}}}}}}]}}";

static json_t *
at(json_t *j, const char *path)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *t = strtok_r(buf, ".", &save); t && j; t = strtok_r(NULL, ".", &save))
		j = json_is_array(j) ? json_array_get(j, (size_t)atoi(t)) : json_object_get(j, t);
	return j;
}

/* The string at path, "" when there is none. */
static const char *
str_at(json_t *j, const char *path)
{
	const char *s = json_string_value(at(j, path));

	return s ? s : "";
}

/*
 * A custom resource is stored as the real server stores it: fields its CRD's schema does not
 * name are dropped (kept under x-kubernetes-preserve-unknown-fields, checked against
 * additionalProperties in a map, against items in an array), a null that is not nullable is
 * dropped, and defaults fill what is missing, on create, update, patch and /status alike. A
 * write that only adds unknown fields changes nothing (no new resourceVersion). Stored
 * versions are never modified (the list at an older version still shows it as it was).
 */
static void
test_crd_schema_pruning_and_defaults(void)
{
	long code;
	json_t *o, *g, *l;
	char rv1[32], rv2[32];

	o = req("POST", NULL, gadget_crd, &code,
	    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
	CU_ASSERT_EQUAL_FATAL(code, 201);
	json_decref(o);
	o = req("POST", NULL,
	    "{\"apiVersion\":\"example.com/v1\",\"kind\":\"Gadget\",\"top\":\"junk\","
	    "\"metadata\":{\"name\":\"g1\",\"labels\":{\"l\":\"1\"}},"
	    "\"spec\":{\"a\":\"given\",\"junk\":1,\"n\":null,\"nul\":null,"
	    "\"keep\":{\"any\":{\"deep\":1}},\"m\":{\"k1\":{\"v\":\"1\",\"extra\":2}},"
	    "\"list\":[{\"k\":\"a\",\"bad\":1},{\"k\":\"b\",\"d\":\"set\"}]},"
	    "\"status\":{\"s\":\"dropped on create\"}}",
	    &code, GADGETS);
	CU_ASSERT_EQUAL_FATAL(code, 201);
	CU_ASSERT_PTR_NULL(json_object_get(o, "top"));
	CU_ASSERT_PTR_NULL(json_object_get(o, "status"));
	CU_ASSERT_STRING_EQUAL(str_at(o, "metadata.labels.l"), "1");
	CU_ASSERT_STRING_EQUAL(str_at(o, "kind"), "Gadget");
	CU_ASSERT_STRING_EQUAL(str_at(o, "spec.a"), "given");
	CU_ASSERT_PTR_NULL(at(o, "spec.junk"));
	CU_ASSERT_EQUAL(json_integer_value(at(o, "spec.n")), 5); /* null dropped, defaulted */
	CU_ASSERT_TRUE(json_is_null(at(o, "spec.nul")));
	CU_ASSERT_EQUAL(json_integer_value(at(o, "spec.keep.any.deep")), 1);
	CU_ASSERT_STRING_EQUAL(str_at(o, "spec.m.k1.v"), "1");
	CU_ASSERT_PTR_NULL(at(o, "spec.m.k1.extra"));
	CU_ASSERT_EQUAL(json_integer_value(at(o, "spec.m.k1.d")), 1);
	CU_ASSERT_PTR_NULL(at(o, "spec.list.0.bad"));
	CU_ASSERT_STRING_EQUAL(str_at(o, "spec.list.0.d"), "dd");
	CU_ASSERT_STRING_EQUAL(str_at(o, "spec.list.1.d"), "set");
	CU_ASSERT_PTR_NULL(at(o, "spec.inner")); /* defaults only inside objects that exist */
	snprintf(rv1, sizeof(rv1), "%s", meta_str(o, "resourceVersion") ?: "");
	g = req("GET", NULL, NULL, &code, GADGETS "/g1");
	CU_ASSERT_TRUE(json_equal(g, o)); /* stored as answered */
	json_decref(g);
	json_decref(o);

	/* a merge patch: unknown fields dropped, defaults inside the new object */
	o = req("PATCH", MERGE, "{\"spec\":{\"junk2\":1,\"inner\":{},\"a\":null}}", &code,
	    GADGETS "/g1");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_PTR_NULL(at(o, "spec.junk2"));
	CU_ASSERT_EQUAL(json_integer_value(at(o, "spec.inner.z")), 7);
	CU_ASSERT_STRING_EQUAL(str_at(o, "spec.a"), "x"); /* removed: default */
	snprintf(rv2, sizeof(rv2), "%s", meta_str(o, "resourceVersion") ?: "");
	CU_ASSERT_STRING_NOT_EQUAL(rv2, rv1);
	json_decref(o);
	/* only unknown fields: a no-op write */
	o = req("PATCH", MERGE, "{\"spec\":{\"junk3\":1},\"other\":2}", &code, GADGETS "/g1");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_STRING_EQUAL(meta_str(o, "resourceVersion") ?: "", rv2);
	json_decref(o);
	/* the version at rv1, from the history, is as it was stored */
	l = req("GET", NULL, NULL, &code, GADGETS "?resourceVersion=%s&resourceVersionMatch=Exact",
	    rv1);
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_PTR_NULL(at(l, "items.0.spec.inner"));
	CU_ASSERT_STRING_EQUAL(str_at(l, "items.0.spec.a"), "given");
	json_decref(l);

	/* an update (PUT) and a /status write */
	o = req("GET", NULL, NULL, &code, GADGETS "/g1");
	json_object_set_new(json_object_get(o, "spec"), "junk4", json_true());
	json_object_del(json_object_get(o, "spec"), "n");
	{
		char *body = json_dumps(o, JSON_COMPACT);

		json_decref(o);
		o = req("PUT", NULL, body, &code, GADGETS "/g1");
		free(body);
	}
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_PTR_NULL(at(o, "spec.junk4"));
	CU_ASSERT_EQUAL(json_integer_value(at(o, "spec.n")), 5);
	json_decref(o);
	o = req("PUT", NULL,
	    "{\"metadata\":{\"name\":\"g1\"},\"status\":{\"s\":\"ok\",\"extra\":1}}", &code,
	    GADGETS "/g1/status");
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_STRING_EQUAL(str_at(o, "status.s"), "ok");
	CU_ASSERT_PTR_NULL(at(o, "status.extra"));
	CU_ASSERT_STRING_EQUAL(str_at(o, "spec.a"), "x");
	json_decref(o);
}

/* The project's IPPool CRD (crds/ippools.yaml): no default written into the object (as
 * upstream's CRD: leaseTime stays unset), a default the test adds to mtu is applied, an
 * unknown field of the spec is dropped; the schema survives a restart of the server. */
static void
test_crd_schema_ippool(void)
{
	const char *d = test_data_dir();
	size_t n = strlen(d), t = strlen("tests/data"), len = 0;
	char path[1024], *text = NULL, *body;
	struct yaml_error yerr;
	json_t *crd = NULL, *o, *mtu;
	long code;

	if (n >= t && strcmp(d + n - t, "tests/data") == 0)
		snprintf(path, sizeof(path), "%.*scrds/ippools.yaml", (int)(n - t), d);
	else
		snprintf(path, sizeof(path), "%s/../../crds/ippools.yaml", d);
	CU_ASSERT_EQUAL_FATAL(read_file(path, 1 << 20, &text, &len), 0);
	CU_ASSERT_EQUAL_FATAL(yaml_parse_one(text, len, &crd, &yerr), 0);
	free(text);
	mtu = json_object_get(
	    json_object_get(
		json_object_get(
		    json_object_get(
			json_object_get(
			    json_object_get(
				json_object_get(
				    json_object_get(
					json_array_get(json_object_get(json_object_get(crd, "spec"),
							   "versions"),
					    0),
					"schema"),
				    "openAPIV3Schema"),
				"properties"),
			    "spec"),
			"properties"),
		    "ipv4Config"),
		"properties"),
	    "mtu");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mtu);
	json_object_set_new(mtu, "default", json_integer(1450));
	body = json_dumps(crd, JSON_COMPACT);
	json_decref(crd);
	o = req(
	    "POST", NULL, body, &code, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
	free(body);
	CU_ASSERT_EQUAL_FATAL(code, 201);
	json_decref(o);
	CU_ASSERT_EQUAL_FATAL(test_apiserver_restart(srv), 0);
	o = req("POST", NULL,
	    "{\"metadata\":{\"name\":\"sch1\"},\"spec\":{\"networkName\":\"sch/net\",\"typo\":1,"
	    "\"ipv4Config\":{\"serverIP\":\"10.0.0.2\",\"cidr\":\"10.0.0.0/24\","
	    "\"pool\":{\"start\":\"10.0.0.10\",\"end\":\"10.0.0.20\"}}}}",
	    &code, POOLS, "sch");
	CU_ASSERT_EQUAL(code, 201);
	CU_ASSERT_PTR_NULL(at(o, "spec.ipv4Config.leaseTime"));
	CU_ASSERT_EQUAL(json_integer_value(at(o, "spec.ipv4Config.mtu")), 1450);
	CU_ASSERT_PTR_NULL(at(o, "spec.typo"));
	CU_ASSERT_STRING_EQUAL(str_at(o, "spec.ipv4Config.pool.start"), "10.0.0.10");
	json_decref(o);
}

/* A client that gives up during an injected delay must not upset the server. */
static void
test_client_gone_during_delay(void)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	char url[256], auth[300];
	long code;
	json_t *j;
	FILE *devnull = fopen("/dev/null", "w");

	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "delay?ms=1500&count=1"), 0);
	snprintf(url, sizeof(url), "%s/api/v1/namespaces/default/pods", test_apiserver_url(srv));
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", test_apiserver_token(srv));
	h = curl_slist_append(h, auth);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CAINFO, test_apiserver_ca_file(srv));
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 200L);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, devnull);
	CU_ASSERT_EQUAL(curl_easy_perform(c), CURLE_OPERATION_TIMEDOUT);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	fclose(devnull);
	/* the server goes on answering (the delay was used up) */
	j = req("GET", NULL, NULL, &code, "/api/v1/namespaces/default/pods");
	CU_ASSERT_EQUAL(code, 200);
	json_decref(j);
}

/* Last: the suite's server saves and exits with status 0 (no sanitizer/valgrind error). */
static void
test_clean_exit(void)
{
	CU_ASSERT_EQUAL(test_apiserver_terminate(srv), 0);
}

static const struct test_case api_tests[] = {
    {"auth", test_auth},
    {"discovery", test_discovery},
    {"create and get", test_create_get},
    {"resource versions increase", test_resource_versions_increase},
    {"update: conflict, status and generation rules", test_update_conflict_and_status_rules},
    {"merge patch", test_merge_patch},
    {"json patch", test_json_patch},
    {"delete, preconditions, finalizers", test_delete_and_finalizers},
    {"label and field selectors", test_selectors},
    {"cluster-scoped resources and CRDs", test_cluster_scoped_and_crd},
    {"pagination of 5000 objects", test_pagination_5000},
    {"fault injection and stats", test_faults},
    {"restart keeps data", test_restart_keeps_data},
    {"list at a resourceVersion", test_list_at_resource_version},
    {"methods and odd requests", test_methods_and_odd_requests},
    {"CRD schema: pruning and defaults", test_crd_schema_pruning_and_defaults},
    {"CRD schema: the IPPool CRD", test_crd_schema_ippool},
    {"client gone during a delay", test_client_gone_during_delay},
    {"server exits cleanly", test_clean_exit},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "apiserver-api", .init = suite_init, .cleanup = suite_cleanup, .tests = api_tests},
    {.name = NULL},
};
