/* SPDX-License-Identifier: Apache-2.0 */
/* Watch stream framing from byte chunks, Status -> errno, paths, queries, backoff. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube-internal.h"
#include "lib/rfc3339.h"
#include "lib/util.h"
#include "tests/runner.h"

struct collect {
	char out[4096];
	int n;
};

static void
collect_event(void *userdata, enum kube_watch_type type, json_t *obj)
{
	struct collect *c = userdata;
	const char *rv = kube_obj_resource_version(obj);
	const char *name = kube_obj_name(obj);
	size_t len = strlen(c->out);

	if (type == KUBE_WATCH_ERROR)
		snprintf(c->out + len, sizeof(c->out) - len, "%s:%lld;", kube_watch_type_name(type),
		    (long long)json_integer_value(json_object_get(obj, "code")));
	else
		snprintf(c->out + len, sizeof(c->out) - len, "%s:%s@%s;",
		    kube_watch_type_name(type), name ? name : "-", rv ? rv : "-");
	c->n++;
}

static const char expected[] = "ADDED:a@101;MODIFIED:a@102;BOOKMARK:-@150;ADDED:b@151;"
			       "DELETED:a@160;ERROR:410;MODIFIED:crlf@170;";

static char *
load_stream(size_t *len)
{
	char path[512];
	char *data = NULL;

	snprintf(path, sizeof(path), "%s/kube-watch-stream.jsonl", test_data_dir());
	CU_ASSERT_EQUAL_FATAL(read_file(path, 1 << 20, &data, len), 0);
	return data;
}

static void
test_whole_stream(void)
{
	struct kube_watch_framer f;
	struct collect c = {.n = 0};
	size_t len;
	char *data = load_stream(&len);

	kube_watch_framer_init(&f, 0);
	CU_ASSERT_EQUAL(kube_watch_framer_feed(&f, data, len, collect_event, &c), 0);
	CU_ASSERT_STRING_EQUAL(c.out, expected);
	CU_ASSERT_EQUAL(f.dropped, 2); /* unknown type, truncated object */
	CU_ASSERT_EQUAL(f.lines, 9);   /* the blank keep-alive line is not counted */
	kube_watch_framer_release(&f);
	free(data);
}

static void
test_every_split(void)
{
	size_t len;
	char *data = load_stream(&len);
	int bad = 0;

	/* Two chunks split at every offset, and three chunks at a coarser grid. */
	for (size_t i = 0; i <= len; i++) {
		struct kube_watch_framer f;
		struct collect c = {.n = 0};

		kube_watch_framer_init(&f, 0);
		kube_watch_framer_feed(&f, data, i, collect_event, &c);
		kube_watch_framer_feed(&f, data + i, len - i, collect_event, &c);
		if (strcmp(c.out, expected) != 0 || f.dropped != 2)
			bad++;
		kube_watch_framer_release(&f);
	}
	for (size_t i = 0; i <= len; i += 7) {
		for (size_t j = i; j <= len; j += 13) {
			struct kube_watch_framer f;
			struct collect c = {.n = 0};

			kube_watch_framer_init(&f, 0);
			kube_watch_framer_feed(&f, data, i, collect_event, &c);
			kube_watch_framer_feed(&f, data + i, j - i, collect_event, &c);
			kube_watch_framer_feed(&f, data + j, len - j, collect_event, &c);
			if (strcmp(c.out, expected) != 0)
				bad++;
			kube_watch_framer_release(&f);
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
	free(data);
}

static void
test_byte_at_a_time(void)
{
	struct kube_watch_framer f;
	struct collect c = {.n = 0};
	size_t len;
	char *data = load_stream(&len);

	kube_watch_framer_init(&f, 0);
	for (size_t i = 0; i < len; i++)
		kube_watch_framer_feed(&f, data + i, 1, collect_event, &c);
	CU_ASSERT_STRING_EQUAL(c.out, expected);
	kube_watch_framer_release(&f);
	free(data);
}

static void
test_overlong_line(void)
{
	struct kube_watch_framer f;
	struct collect c = {.n = 0};
	char big[600];
	const char good[] = "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"ok\","
			    "\"resourceVersion\":\"1\"}}}\n";

	memset(big, 'x', sizeof(big));
	kube_watch_framer_init(&f, 256);
	/* an over-long line arriving in pieces, then a good line */
	kube_watch_framer_feed(&f, big, 200, collect_event, &c);
	kube_watch_framer_feed(&f, big, sizeof(big), collect_event, &c);
	kube_watch_framer_feed(&f, big, 100, collect_event, &c);
	kube_watch_framer_feed(&f, "\n", 1, collect_event, &c);
	kube_watch_framer_feed(&f, good, strlen(good), collect_event, &c);
	CU_ASSERT_EQUAL(f.dropped, 1);
	CU_ASSERT_STRING_EQUAL(c.out, "ADDED:ok@1;");
	kube_watch_framer_release(&f);
}

static void
test_decode_line(void)
{
	enum kube_watch_type t;
	json_t *o = NULL;

	CU_ASSERT_EQUAL(kube_watch_decode_line("{}", 2, &t, &o), -EBADMSG);
	CU_ASSERT_EQUAL(kube_watch_decode_line("[1]", 3, &t, &o), -EBADMSG);
	CU_ASSERT_EQUAL(
	    kube_watch_decode_line("{\"type\":\"ADDED\",\"object\":5}", 27, &t, &o), -EBADMSG);
	CU_ASSERT_EQUAL(
	    kube_watch_decode_line("{\"type\":\"ADDED\",\"object\":{}}", 28, &t, &o), 0);
	CU_ASSERT_EQUAL(t, KUBE_WATCH_ADDED);
	CU_ASSERT_TRUE(json_is_object(o));
	json_decref(o);
}

struct raw_seen {
	int n;
	enum kube_watch_type type;
	char object[128];
};

static void
collect_raw(void *userdata, enum kube_watch_type type, const char *text, size_t len)
{
	struct raw_seen *r = userdata;

	r->n++;
	r->type = type;
	snprintf(r->object, sizeof(r->object), "%.*s", (int)len, text);
}

/* The informer's path: type and the object's exact span; the last of duplicate members. */
static void
test_scan_line(void)
{
	static const char stream[] =
	    "{\"type\":\"ADDED\",\"object\": {\"a\": [1, {}]} }\n"
	    "{\"object\":{\"x\":1},\"type\":\"DELETED\",\"object\":{\"y\":\"}\"}}\n"
	    "{\"type\":\"ADDED\",\"object\":{}} x\n"
	    "{\"type\":\"NOPE\",\"object\":{}}\n"
	    "{\"type\":\"ADD\\u0045D\",\"object\":{\"z\":null}}\n";
	static const char bookmark[] = "{\"type\":\"BOOKMARK\",\"object\":{\"k\":2}}";
	static const char bad_type[] = "{\"type\":5,\"object\":{}}";
	struct kube_watch_framer f;
	struct raw_seen r = {0};
	enum kube_watch_type t;
	const char *obj;
	size_t n;

	CU_ASSERT_EQUAL(kube_watch_scan_line(bookmark, sizeof(bookmark) - 1, &t, &obj, &n), 0);
	CU_ASSERT_EQUAL(t, KUBE_WATCH_BOOKMARK);
	CU_ASSERT_EQUAL(n, 7);
	CU_ASSERT_EQUAL(memcmp(obj, "{\"k\":2}", 7), 0);
	CU_ASSERT_EQUAL(
	    kube_watch_scan_line(bad_type, sizeof(bad_type) - 1, &t, &obj, &n), -EBADMSG);
	kube_watch_framer_init(&f, 0);
	CU_ASSERT_EQUAL(kube_watch_framer_feed_raw(&f, stream, strlen(stream), collect_raw, &r), 0);
	CU_ASSERT_EQUAL(r.n, 3);
	CU_ASSERT_EQUAL(f.dropped, 2); /* text after the object; an unknown type */
	CU_ASSERT_EQUAL(r.type, KUBE_WATCH_ADDED);
	CU_ASSERT_STRING_EQUAL(r.object, "{\"z\":null}");
	kube_watch_framer_release(&f);
}

/* --- Status -> errno --------------------------------------------------------------------- */

static void
test_status_table(void)
{
	static const struct {
		long status;
		const char *reason;
		int err;
	} cases[] = {
	    {200, NULL, 0},
	    {201, NULL, 0},
	    {404, "NotFound", -ENOENT},
	    {409, "AlreadyExists", -EEXIST},
	    {409, "Conflict", -ESTALE},
	    {409, NULL, -ESTALE},
	    {410, "Gone", -EKEYEXPIRED},
	    {410, "Expired", -EKEYEXPIRED},
	    {500, "Expired", -EKEYEXPIRED}, /* watch ERROR events carry the reason */
	    {401, "Unauthorized", -EACCES},
	    {403, "Forbidden", -EACCES},
	    {400, "BadRequest", -EBADMSG},
	    {422, "Invalid", -EINVAL},
	    {429, "TooManyRequests", -EBUSY},
	    {500, "InternalError", -EIO},
	    {503, "ServiceUnavailable", -EIO},
	    {504, NULL, -ETIMEDOUT},
	    {500, "Timeout", -ETIMEDOUT},
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		int got = kube_status_to_errno(cases[i].status, cases[i].reason);

		if (got != cases[i].err)
			fprintf(stderr, "status %ld %s: got %d want %d\n", cases[i].status,
			    cases[i].reason ? cases[i].reason : "-", got, cases[i].err);
		CU_ASSERT_EQUAL(got, cases[i].err);
	}
	CU_ASSERT_STRING_EQUAL(kube_errno_name(-ESTALE), "Conflict");
	CU_ASSERT_STRING_EQUAL(kube_errno_name(-EKEYEXPIRED), "Expired");
}

static void
test_result_from_http(void)
{
	static const char status_body[] =
	    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
	    "\"message\":\"configmaps \\\"x\\\" already exists\",\"reason\":\"AlreadyExists\","
	    "\"code\":409}";
	static const char conflict_body[] =
	    "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"the object has been "
	    "modified\",\"reason\":\"Conflict\",\"code\":409}";
	struct kube_result r;
	json_t *obj;

	kube_result_from_http(&r, 0, 409, status_body, strlen(status_body), "", &obj);
	CU_ASSERT_EQUAL(r.error, -EEXIST);
	CU_ASSERT_STRING_EQUAL(r.reason, "AlreadyExists");
	CU_ASSERT_STRING_EQUAL(r.message, "configmaps \"x\" already exists");
	json_decref(obj);

	kube_result_from_http(&r, 0, 409, conflict_body, strlen(conflict_body), "", &obj);
	CU_ASSERT_EQUAL(r.error, -ESTALE);
	json_decref(obj);

	kube_result_from_http(&r, 0, 502, "bad gateway", 11, "", &obj);
	CU_ASSERT_EQUAL(r.error, -EIO);
	CU_ASSERT_STRING_EQUAL(r.message, "bad gateway");
	CU_ASSERT_PTR_NULL(obj);

	kube_result_from_http(&r, -ECONNREFUSED, 0, "", 0,
	    "GET https://127.0.0.1:1/api/v1/pods: Couldn't connect to server", &obj);
	CU_ASSERT_EQUAL(r.error, -ECONNREFUSED);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.message, "https://127.0.0.1:1"));

	kube_result_from_http(&r, 0, 200, "{\"a\":1}", 7, "", &obj);
	CU_ASSERT_EQUAL(r.error, 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(r.object, "a")), 1);
	json_decref(obj);

	kube_result_from_http(&r, 0, 200, "{nope", 5, "", &obj);
	CU_ASSERT_EQUAL(r.error, -EBADMSG);
}

/* --- paths, queries, keys, times ------------------------------------------------------------ */

static void
test_paths(void)
{
	static const struct kube_resource ippools = {
	    "network.harvesterhci.io", "v1alpha1", "ippools", "IPPool", true};
	char p[256];

	CU_ASSERT_EQUAL(kube_resource_path(&kube_res_pods, "default", "p1", NULL, p, sizeof(p)), 0);
	CU_ASSERT_STRING_EQUAL(p, "/api/v1/namespaces/default/pods/p1");
	CU_ASSERT_EQUAL(kube_resource_path(&kube_res_pods, NULL, NULL, NULL, p, sizeof(p)), 0);
	CU_ASSERT_STRING_EQUAL(p, "/api/v1/pods");
	CU_ASSERT_EQUAL(
	    kube_resource_path(&kube_res_nodes, "ignored", "n1", "status", p, sizeof(p)), 0);
	CU_ASSERT_STRING_EQUAL(p, "/api/v1/nodes/n1/status");
	CU_ASSERT_EQUAL(kube_resource_path(&ippools, "ns", "pool", "status", p, sizeof(p)), 0);
	CU_ASSERT_STRING_EQUAL(
	    p, "/apis/network.harvesterhci.io/v1alpha1/namespaces/ns/ippools/pool/status");
	CU_ASSERT_EQUAL(
	    kube_resource_path(&kube_res_leases, NULL, "x", NULL, p, sizeof(p)), -EINVAL);
	CU_ASSERT_EQUAL(
	    kube_resource_path(&kube_res_pods, "ns", "../x", NULL, p, sizeof(p)), -EINVAL);
	CU_ASSERT_EQUAL(
	    kube_resource_path(&kube_res_pods, "ns", "a/b", NULL, p, sizeof(p)), -EINVAL);
	CU_ASSERT_EQUAL(kube_resource_path(&kube_res_pods, "ns", "p", NULL, p, 10), -ENAMETOOLONG);
}

static void
test_query(void)
{
	char q[128] = "/api/v1/pods";

	CU_ASSERT_EQUAL(kube_query_add(q, sizeof(q), "labelSelector", "app=x,tier in (a,b)"), 0);
	CU_ASSERT_EQUAL(kube_query_add(q, sizeof(q), "limit", "500"), 0);
	CU_ASSERT_EQUAL(kube_query_add(q, sizeof(q), "skip", NULL), 0);
	CU_ASSERT_STRING_EQUAL(
	    q, "/api/v1/pods?labelSelector=app%3Dx%2Ctier%20in%20%28a%2Cb%29&limit=500");
	CU_ASSERT_EQUAL(kube_query_add(q, 80, "continue", "aaaaaaaaaaaaaaaaaaaaaa"), -ENAMETOOLONG);
}

static void
test_keys_and_times(void)
{
	char key[64], ns[16], name[16], ts[40];
	json_t *obj = json_pack("{s:{s:s, s:s, s:s, s:[s]}}", "metadata", "name", "n", "namespace",
	    "ns", "uid", "u1", "finalizers", "f1");
	int64_t usec;

	CU_ASSERT_EQUAL(kube_obj_key(obj, key, sizeof(key)), 0);
	CU_ASSERT_STRING_EQUAL(key, "ns/n");
	CU_ASSERT_EQUAL(kube_key_split("ns/n", ns, sizeof(ns), name, sizeof(name)), 0);
	CU_ASSERT_STRING_EQUAL(ns, "ns");
	CU_ASSERT_STRING_EQUAL(name, "n");
	CU_ASSERT_EQUAL(kube_key_split("node1", ns, sizeof(ns), name, sizeof(name)), 0);
	CU_ASSERT_STRING_EQUAL(ns, "");
	CU_ASSERT_EQUAL(kube_key_split("a/b/c", ns, sizeof(ns), name, sizeof(name)), -EINVAL);
	CU_ASSERT_TRUE(kube_obj_has_finalizer(obj, "f1"));
	CU_ASSERT_EQUAL(kube_obj_add_finalizer(obj, "f2"), 1);
	CU_ASSERT_EQUAL(kube_obj_add_finalizer(obj, "f2"), 0);
	CU_ASSERT_EQUAL(kube_obj_remove_finalizer(obj, "f1"), 1);
	CU_ASSERT_FALSE(kube_obj_has_finalizer(obj, "f1"));
	CU_ASSERT_TRUE(kube_obj_has_finalizer(obj, "f2"));
	json_decref(obj);

	rfc3339_format(INT64_C(1700000000123456), 6, ts);
	CU_ASSERT_STRING_EQUAL(ts, "2023-11-14T22:13:20.123456Z");
	CU_ASSERT_EQUAL(rfc3339_parse(ts, &usec), 0);
	CU_ASSERT_EQUAL(usec, INT64_C(1700000000123456));
	rfc3339_format(INT64_C(1700000000000000), 0, ts);
	CU_ASSERT_STRING_EQUAL(ts, "2023-11-14T22:13:20Z");
	CU_ASSERT_EQUAL(rfc3339_parse(ts, &usec), 0);
	CU_ASSERT_EQUAL(usec, INT64_C(1700000000000000));
	CU_ASSERT_EQUAL(rfc3339_parse("2023-11-14 22:13:20", &usec), -EINVAL);
}

static void
test_backoff(void)
{
	uint64_t seed = 1, base = 800000, max = 30000000;
	uint64_t lo = UINT64_MAX, hi = 0;

	for (unsigned a = 0; a < 12; a++) {
		uint64_t full = base;

		for (unsigned i = 0; i < a && full < max; i++)
			full *= 2;
		if (full > max)
			full = max;
		for (int i = 0; i < 200; i++) {
			uint64_t d = kube_backoff_delay(base, max, a, &seed);

			CU_ASSERT_TRUE(d >= full / 2 && d < full);
			if (a == 0) {
				lo = MIN(lo, d);
				hi = MAX(hi, d);
			}
		}
	}
	/* jittered: not all the same */
	CU_ASSERT_TRUE(hi > lo);
}

static const struct test_case framing_tests[] = {
    {"whole stream", test_whole_stream},
    {"every split point", test_every_split},
    {"byte at a time", test_byte_at_a_time},
    {"over-long line dropped", test_overlong_line},
    {"decode line", test_decode_line},
    {"scan line: type and object span", test_scan_line},
    {NULL, NULL},
};

static const struct test_case status_tests[] = {
    {"status table", test_status_table},
    {"result from http", test_result_from_http},
    {NULL, NULL},
};

static const struct test_case misc_tests[] = {
    {"resource paths", test_paths},
    {"query encoding", test_query},
    {"keys, finalizers, times", test_keys_and_times},
    {"jittered backoff", test_backoff},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "kube-watch-framing", .tests = framing_tests},
    {.name = "kube-status", .tests = status_tests},
    {.name = "kube-misc", .tests = misc_tests},
    {.name = NULL},
};
