/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube/ client calls on the scripted transport and fake clock (tests/helpers/scripted-http.c):
 * the request each verb sends (method, path with its query, body, content type), the HTTP
 * status and Status reason -> errno table, the request timeout, the conflict retry loop,
 * cancellation at every point of a call's life (before it is sent, while its answer is held,
 * from inside callbacks, between the GET and the PUT of a retry loop, by freeing the
 * scripted_client) and a watch's deadline past its timeoutSeconds. The order of events is the
 * script's, not the machine's speed.
 *
 * The transports (libcurl, mbed TLS) against the test API server over HTTPS are covered by
 * test-kube-client and test-kube-watch (and their -mbedtls variants).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "lib/clock.h"
#include "tests/helpers/scripted-http.h"
#include "tests/runner.h"

/* This binary's transport and clock (kube/http.c and lib/clock.c are not linked). */
const struct kube_http_engine kube_http_engine = SCRIPTED_HTTP_ENGINE;
SCRIPTED_CLOCK_DEFINE

#define MS (UINT64_C(1000))
#define CMS "/api/v1/namespaces/t/configmaps"

struct answer {
	int calls;
	int error;
	long status;
	char reason[64];
	char message[512];
	json_t *obj;
};

static void
answer_cb(void *userdata, const struct kube_result *res)
{
	struct answer *a = userdata;

	a->calls++;
	a->error = res->error;
	a->status = res->http_status;
	snprintf(a->reason, sizeof(a->reason), "%s", res->reason ? res->reason : "");
	snprintf(a->message, sizeof(a->message), "%s", res->message ? res->message : "");
	json_decref(a->obj);
	a->obj = json_incref(res->object);
}

static void
answer_reset(struct answer *a)
{
	json_decref(a->obj);
	memset(a, 0, sizeof(*a));
}

static const char *
cm_text(const char *name, const char *rv, const char *v)
{
	static char t[512];

	snprintf(t, sizeof(t),
	    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
	    "\"namespace\":\"t\",\"resourceVersion\":\"%s\"},\"data\":{\"v\":\"%s\"}}",
	    name, rv, v);
	return t;
}

static json_t *
cm(const char *name, const char *rv, const char *v)
{
	return json_loads(cm_text(name, rv, v), 0, NULL);
}

static const char *
status_text(long code, const char *reason, const char *message)
{
	static char t[512];

	snprintf(t, sizeof(t),
	    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"%s\","
	    "\"message\":\"%s\",\"code\":%ld}",
	    reason, message, code);
	return t;
}

static const char *
body_str(struct scripted_exp *e, const char *a, const char *b)
{
	static char v[256];
	json_t *j = scripted_body(e), *x = json_object_get(j, a);

	if (b)
		x = json_object_get(x, b);
	snprintf(v, sizeof(v), "%s", json_string_value(x) ? json_string_value(x) : "");
	json_decref(j);
	return v;
}

/* --- requests ----------------------------------------------------------------------------- */

static void
test_requests(void)
{
	struct answer a = {0};
	struct kube_list_opts lo = {.label_selector = "app=db",
	    .field_selector = "metadata.name=x",
	    .limit = 500,
	    .continue_token = "tok"};
	struct kube_delete_opts dopt = {
	    .uid = "u-1", .resource_version = "7", .propagation = "Background"};
	struct scripted_exp *e;
	json_t *obj = cm("one", "5", "1"), *patch = json_pack("{s:{s:s}}", "data", "v", "2");
	json_t *jp = json_pack("[{s:s, s:s}]", "op", "remove", "path", "/data/v");

	scripted_expect("GET", CMS "/one", 200, cm_text("one", "5", "1"));
	CU_ASSERT_EQUAL(
	    kube_get(scripted_client, &kube_res_configmaps, "t", "one", answer_cb, &a, NULL), 0);
	CU_ASSERT_EQUAL(a.calls, 0); /* never from inside the call */
	scripted_run();
	CU_ASSERT_EQUAL(a.calls, 1);
	CU_ASSERT_EQUAL(a.error, 0);
	CU_ASSERT_EQUAL(a.status, 200);
	CU_ASSERT_STRING_EQUAL(kube_obj_resource_version(a.obj), "5");
	answer_reset(&a);

	e = scripted_expect("GET", CMS "?*", 200, "{\"kind\":\"ConfigMapList\",\"items\":[]}");
	CU_ASSERT_EQUAL(
	    kube_list(scripted_client, &kube_res_configmaps, "t", &lo, answer_cb, &a, NULL), 0);
	scripted_run();
	CU_ASSERT_PTR_NOT_NULL(strstr(scripted_path(e), "labelSelector=app%3Ddb"));
	CU_ASSERT_PTR_NOT_NULL(strstr(scripted_path(e), "fieldSelector=metadata.name%3Dx"));
	CU_ASSERT_PTR_NOT_NULL(strstr(scripted_path(e), "limit=500"));
	CU_ASSERT_PTR_NOT_NULL(strstr(scripted_path(e), "continue=tok"));
	CU_ASSERT_EQUAL(a.error, 0);
	answer_reset(&a);
	/* all namespaces */
	scripted_expect("GET", "/api/v1/configmaps", 200, "{\"items\":[]}");
	CU_ASSERT_EQUAL(
	    kube_list(scripted_client, &kube_res_configmaps, NULL, NULL, answer_cb, &a, NULL), 0);
	scripted_run();
	CU_ASSERT_EQUAL(a.error, 0);
	answer_reset(&a);

	e = scripted_expect("POST", CMS, 201, cm_text("one", "6", "1"));
	CU_ASSERT_EQUAL(
	    kube_create(scripted_client, &kube_res_configmaps, "t", obj, answer_cb, &a, NULL), 0);
	scripted_run();
	CU_ASSERT_EQUAL(a.status, 201);
	CU_ASSERT_STRING_EQUAL(body_str(e, "metadata", "name"), "one");
	CU_ASSERT_STRING_EQUAL(scripted_content_type(e), "application/json");
	answer_reset(&a);

	e = scripted_expect("PUT", CMS "/one", 200, cm_text("one", "7", "1"));
	CU_ASSERT_EQUAL(
	    kube_update(scripted_client, &kube_res_configmaps, obj, answer_cb, &a, NULL), 0);
	scripted_run();
	CU_ASSERT_STRING_EQUAL(body_str(e, "metadata", "resourceVersion"), "5");
	answer_reset(&a);
	e = scripted_expect("PUT", CMS "/one/status", 200, cm_text("one", "8", "1"));
	CU_ASSERT_EQUAL(
	    kube_update_status(scripted_client, &kube_res_configmaps, obj, answer_cb, &a, NULL), 0);
	scripted_run();
	CU_ASSERT_TRUE(scripted_arrived(e));
	answer_reset(&a);

	e = scripted_expect("PATCH", CMS "/one", 200, cm_text("one", "9", "2"));
	CU_ASSERT_EQUAL(kube_patch(scripted_client, &kube_res_configmaps, "t", "one",
			    KUBE_PATCH_MERGE, patch, NULL, answer_cb, &a, NULL),
	    0);
	scripted_run();
	CU_ASSERT_STRING_EQUAL(scripted_content_type(e), "application/merge-patch+json");
	CU_ASSERT_STRING_EQUAL(body_str(e, "data", "v"), "2");
	answer_reset(&a);
	e = scripted_expect("PATCH", CMS "/one/status", 200, cm_text("one", "10", "2"));
	CU_ASSERT_EQUAL(kube_patch(scripted_client, &kube_res_configmaps, "t", "one",
			    KUBE_PATCH_JSON, jp, "status", answer_cb, &a, NULL),
	    0);
	scripted_run();
	CU_ASSERT_STRING_EQUAL(scripted_content_type(e), "application/json-patch+json");
	answer_reset(&a);
	/* a merge patch must be an object, a JSON patch an array: refused before any request */
	CU_ASSERT_EQUAL(kube_patch(scripted_client, &kube_res_configmaps, "t", "one",
			    KUBE_PATCH_JSON, patch, NULL, answer_cb, &a, NULL),
	    -EINVAL);
	CU_ASSERT_EQUAL(kube_patch(scripted_client, &kube_res_configmaps, "t", "one",
			    KUBE_PATCH_MERGE, jp, NULL, answer_cb, &a, NULL),
	    -EINVAL);

	e = scripted_expect("DELETE", CMS "/one", 200, cm_text("one", "11", "2"));
	CU_ASSERT_EQUAL(kube_delete(scripted_client, &kube_res_configmaps, "t", "one", &dopt,
			    answer_cb, &a, NULL),
	    0);
	scripted_run();
	CU_ASSERT_STRING_EQUAL(body_str(e, "preconditions", "uid"), "u-1");
	CU_ASSERT_STRING_EQUAL(body_str(e, "preconditions", "resourceVersion"), "7");
	CU_ASSERT_STRING_EQUAL(body_str(e, "propagationPolicy", NULL), "Background");
	answer_reset(&a);

	/* bad arguments are refused before any request */
	CU_ASSERT_EQUAL(
	    kube_get(scripted_client, &kube_res_configmaps, NULL, "x", answer_cb, &a, NULL),
	    -EINVAL);
	json_decref(obj);
	obj = json_object();
	CU_ASSERT_EQUAL(
	    kube_create(scripted_client, &kube_res_configmaps, NULL, obj, answer_cb, &a, NULL),
	    -EINVAL);
	scripted_run();
	CU_ASSERT_EQUAL(a.calls, 0);
	json_decref(obj);
	json_decref(patch);
	json_decref(jp);
	scripted_check_done();
}

/* HTTP status and Status reason -> negative errno, with the Status message kept. */
static void
test_status_to_errno(void)
{
	static const struct {
		long code;
		const char *reason;
		int err;
	} cases[] = {
	    {404, "NotFound", -ENOENT}, {409, "AlreadyExists", -EEXIST}, {409, "Conflict", -ESTALE},
	    {410, "Expired", -EKEYEXPIRED}, {401, "Unauthorized", -EACCES},
	    {403, "Forbidden", -EACCES}, {400, "BadRequest", -EBADMSG}, {422, "Invalid", -EINVAL},
	    {429, "TooManyRequests", -EBUSY}, {500, "InternalError", -EIO},
	    {503, "ServiceUnavailable", -EIO},
	    {504, "Timeout", -ETIMEDOUT}, /* the server's own timeout */
	};
	struct answer a = {0};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		scripted_expect("GET", CMS "/x", cases[i].code,
		    status_text(cases[i].code, cases[i].reason, "what the server said"));
		CU_ASSERT_EQUAL(
		    kube_get(scripted_client, &kube_res_configmaps, "t", "x", answer_cb, &a, NULL),
		    0);
		scripted_run();
		if (a.error != cases[i].err)
			fprintf(stderr, "%ld %s: %d, want %d\n", cases[i].code, cases[i].reason,
			    a.error, cases[i].err);
		CU_ASSERT_EQUAL(a.error, cases[i].err);
		CU_ASSERT_EQUAL(a.status, cases[i].code);
		CU_ASSERT_STRING_EQUAL(a.reason, cases[i].reason);
		CU_ASSERT_PTR_NOT_NULL(strstr(a.message, "what the server said"));
		answer_reset(&a);
	}
	/* transport errors */
	scripted_expect_error("GET", CMS "/x", -ECONNREFUSED, "Connection refused");
	CU_ASSERT_EQUAL(
	    kube_get(scripted_client, &kube_res_configmaps, "t", "x", answer_cb, &a, NULL), 0);
	scripted_run();
	CU_ASSERT_EQUAL(a.error, -ECONNREFUSED);
	CU_ASSERT_EQUAL(a.status, 0);
	answer_reset(&a);
	scripted_check_done();
}

/* A request held past the client's request timeout: -ETIMEDOUT naming the URL, at the
 * timeout to the millisecond, and the request is aborted. */
static void
test_request_timeout(void)
{
	struct answer a = {0};
	struct scripted_exp *e;

	kube_client_set_timeouts(scripted_client, 300, 0);
	e = scripted_expect_held("GET", CMS "/slow");
	CU_ASSERT_EQUAL(
	    kube_get(scripted_client, &kube_res_configmaps, "t", "slow", answer_cb, &a, NULL), 0);
	scripted_advance(299 * MS);
	CU_ASSERT_EQUAL(a.calls, 0);
	scripted_advance(MS);
	CU_ASSERT_EQUAL(a.calls, 1);
	CU_ASSERT_EQUAL(a.error, -ETIMEDOUT);
	CU_ASSERT_TRUE(scripted_aborted(e));
	CU_ASSERT_PTR_NOT_NULL(strstr(a.message, CMS "/slow"));
	answer_reset(&a);
	kube_client_set_timeouts(scripted_client, 30000, 10000); /* the defaults again */
	scripted_check_done();
}

/* --- conflict retry ------------------------------------------------------------------------ */

struct retry {
	struct answer a;
	struct kube_call *call;
	int mutated;
	bool cancel_here; /* cancel from inside mutate */
};

static int
mutate(void *userdata, json_t *obj)
{
	struct retry *r = userdata;

	r->mutated++;
	json_object_set_new(json_object_get(obj, "data"), "counter", json_string("bumped"));
	if (r->cancel_here) {
		kube_call_cancel(r->call);
		r->call = NULL;
	}
	return 0;
}

static void
retry_done(void *userdata, const struct kube_result *res)
{
	struct retry *r = userdata;

	r->call = NULL;
	answer_cb(&r->a, res);
}

/* Someone else writes between the read and the write: Conflict, read again, write again. */
static void
test_conflict_retry(void)
{
	struct retry r = {0};
	struct scripted_exp *put1, *put2;

	scripted_expect("GET", CMS "/db1", 200, cm_text("db1", "1", "1"));
	put1 = scripted_expect("PUT", CMS "/db1", 409, status_text(409, "Conflict", "modified"));
	scripted_expect("GET", CMS "/db1", 200,
	    "{\"metadata\":{\"name\":\"db1\",\"namespace\":\"t\",\"resourceVersion\":\"2\"},"
	    "\"data\":{\"v\":\"1\",\"other\":\"writer\"}}");
	put2 = scripted_expect("PUT", CMS "/db1", 200, cm_text("db1", "3", "1"));
	CU_ASSERT_EQUAL(kube_update_retry(scripted_client, &kube_res_configmaps, "t", "db1", false,
			    5, mutate, retry_done, &r, NULL),
	    0);
	scripted_run();
	CU_ASSERT_EQUAL(r.a.calls, 1);
	CU_ASSERT_EQUAL(r.a.error, 0);
	CU_ASSERT_EQUAL(r.mutated, 2);
	CU_ASSERT_STRING_EQUAL(body_str(put1, "metadata", "resourceVersion"), "1");
	CU_ASSERT_STRING_EQUAL(body_str(put2, "metadata", "resourceVersion"), "2");
	CU_ASSERT_STRING_EQUAL(body_str(put2, "data", "other"), "writer");
	CU_ASSERT_STRING_EQUAL(body_str(put2, "data", "counter"), "bumped");
	answer_reset(&r.a);

	/* attempts run out: the last Conflict is the answer */
	memset(&r, 0, sizeof(r));
	for (int i = 0; i < 2; i++) {
		scripted_expect("GET", CMS "/db1", 200, cm_text("db1", "4", "1"));
		scripted_expect("PUT", CMS "/db1", 409, status_text(409, "Conflict", "modified"));
	}
	CU_ASSERT_EQUAL(kube_update_retry(scripted_client, &kube_res_configmaps, "t", "db1", false,
			    2, mutate, retry_done, &r, NULL),
	    0);
	scripted_run();
	CU_ASSERT_EQUAL(r.a.error, -ESTALE);
	CU_ASSERT_EQUAL(r.mutated, 2);
	answer_reset(&r.a);
	scripted_check_done();
}

/* --- cancellation -------------------------------------------------------------------------- */

struct cancel_state {
	struct answer a;
	struct kube_call *self;	    /* this call's handle (cleared in its callback) */
	struct cancel_state *other; /* its call cancelled from inside this callback */
	bool cancel_self;	    /* cancel this very call from inside its callback */
};

static void
cancel_cb(void *userdata, const struct kube_result *res)
{
	struct cancel_state *s = userdata;

	answer_cb(&s->a, res);
	if (s->cancel_self)
		kube_call_cancel(s->self); /* has reported: a no-op */
	s->self = NULL;
	if (s->other && s->other->self) {
		kube_call_cancel(s->other->self);
		s->other->self = NULL;
	}
}

/* Cancelled before it is sent: never sent, never reports; cancelled while its answer is
 * held: aborted, never reports. */
static void
test_cancel_before_answer(void)
{
	struct cancel_state s = {0}, w = {0}, slow = {0};
	struct scripted_exp *held;
	json_t *obj = cm("cancelled", "", "1");

	CU_ASSERT_EQUAL_FATAL(
	    kube_get(scripted_client, &kube_res_configmaps, "t", "db1", cancel_cb, &s, &s.self), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(s.self);
	kube_call_cancel(s.self);
	s.self = NULL;
	CU_ASSERT_EQUAL_FATAL(
	    kube_create(scripted_client, &kube_res_configmaps, "t", obj, cancel_cb, &w, &w.self),
	    0);
	kube_call_cancel(w.self); /* a write cancelled before it started is never sent */
	w.self = NULL;
	scripted_run(); /* a request here would fail the script: none is expected */
	CU_ASSERT_EQUAL(s.a.calls, 0);
	CU_ASSERT_EQUAL(w.a.calls, 0);

	held = scripted_expect_held("GET", CMS);
	CU_ASSERT_EQUAL_FATAL(kube_list(scripted_client, &kube_res_configmaps, "t", NULL, cancel_cb,
				  &slow, &slow.self),
	    0);
	scripted_run();
	CU_ASSERT_TRUE(scripted_arrived(held));
	kube_call_cancel(slow.self);
	slow.self = NULL;
	kube_call_cancel(NULL); /* accepted */
	scripted_run();
	CU_ASSERT_TRUE(scripted_aborted(held));
	CU_ASSERT_EQUAL(slow.a.calls, 0);
	json_decref(obj);
	scripted_check_done();
}

/* One call's callback cancels another whose answer is held; a third cancels itself inside
 * its own callback (too late: a no-op). */
static void
test_cancel_from_callback(void)
{
	struct cancel_state first = {0}, second = {0}, third = {0};
	struct scripted_exp *held, *get;
	json_t *patch = json_pack("{s:{s:s}}", "data", "cancel", "no");

	held = scripted_expect_held("PATCH", CMS "/db2");
	get = scripted_expect_held("GET", CMS "/db1");
	CU_ASSERT_EQUAL_FATAL(kube_patch(scripted_client, &kube_res_configmaps, "t", "db2",
				  KUBE_PATCH_MERGE, patch, NULL, cancel_cb, &second, &second.self),
	    0);
	CU_ASSERT_EQUAL_FATAL(kube_get(scripted_client, &kube_res_configmaps, "t", "db1", cancel_cb,
				  &first, &first.self),
	    0);
	first.other = &second;
	first.cancel_self = true;
	scripted_run();
	scripted_answer(get, 200, cm_text("db1", "1", "1"));
	CU_ASSERT_EQUAL(first.a.calls, 1);
	CU_ASSERT_EQUAL(first.a.error, 0);
	CU_ASSERT_PTR_NULL(second.self);
	CU_ASSERT_TRUE(scripted_aborted(held));
	CU_ASSERT_EQUAL(second.a.calls, 0); /* a cancelled call never reports */

	third.cancel_self = true;
	scripted_expect("DELETE", CMS "/absent", 404, status_text(404, "NotFound", "absent"));
	CU_ASSERT_EQUAL_FATAL(kube_delete(scripted_client, &kube_res_configmaps, "t", "absent",
				  NULL, cancel_cb, &third, &third.self),
	    0);
	scripted_run();
	CU_ASSERT_EQUAL(third.a.calls, 1);
	CU_ASSERT_EQUAL(third.a.error, -ENOENT);
	json_decref(patch);
	answer_reset(&first.a);
	answer_reset(&third.a);
	scripted_check_done();
}

/* A retry loop cancelled during its GET, inside mutate, with its PUT in flight; and one not
 * cancelled, whose handle is spent when done runs. */
static void
test_cancel_update_retry(void)
{
	struct retry before = {0}, in_mutate = {0}, between = {0}, whole = {0};
	struct scripted_exp *get, *put, *wput;

	get = scripted_expect_held("GET", CMS "/rc");
	CU_ASSERT_EQUAL_FATAL(kube_update_retry(scripted_client, &kube_res_configmaps, "t", "rc",
				  false, 0, mutate, retry_done, &before, &before.call),
	    0);
	scripted_run();
	kube_call_cancel(before.call);
	before.call = NULL;
	scripted_run();
	CU_ASSERT_TRUE(scripted_aborted(get));
	CU_ASSERT_EQUAL(before.mutated, 0);
	CU_ASSERT_EQUAL(before.a.calls, 0);

	/* cancelled inside mutate: the PUT is never sent (none is expected) */
	in_mutate.cancel_here = true;
	scripted_expect("GET", CMS "/rc", 200, cm_text("rc", "1", "initial"));
	CU_ASSERT_EQUAL_FATAL(kube_update_retry(scripted_client, &kube_res_configmaps, "t", "rc",
				  false, 0, mutate, retry_done, &in_mutate, &in_mutate.call),
	    0);
	scripted_run();
	CU_ASSERT_EQUAL(in_mutate.mutated, 1);
	CU_ASSERT_PTR_NULL(in_mutate.call);
	CU_ASSERT_EQUAL(in_mutate.a.calls, 0);

	/* cancelled with its PUT in flight */
	scripted_expect("GET", CMS "/rc", 200, cm_text("rc", "1", "initial"));
	put = scripted_expect_held("PUT", CMS "/rc");
	CU_ASSERT_EQUAL_FATAL(kube_update_retry(scripted_client, &kube_res_configmaps, "t", "rc",
				  false, 0, mutate, retry_done, &between, &between.call),
	    0);
	scripted_run();
	CU_ASSERT_TRUE(scripted_arrived(put));
	kube_call_cancel(between.call);
	between.call = NULL;
	scripted_run();
	CU_ASSERT_TRUE(scripted_aborted(put));
	CU_ASSERT_EQUAL(between.mutated, 1);
	CU_ASSERT_EQUAL(between.a.calls, 0);

	/* not cancelled */
	scripted_expect("GET", CMS "/rc", 200, cm_text("rc", "1", "initial"));
	wput = scripted_expect("PUT", CMS "/rc", 200, cm_text("rc", "2", "initial"));
	CU_ASSERT_EQUAL_FATAL(kube_update_retry(scripted_client, &kube_res_configmaps, "t", "rc",
				  false, 0, mutate, retry_done, &whole, &whole.call),
	    0);
	scripted_run();
	CU_ASSERT_EQUAL(whole.a.calls, 1);
	CU_ASSERT_EQUAL(whole.a.error, 0);
	CU_ASSERT_PTR_NULL(whole.call);
	CU_ASSERT_STRING_EQUAL(body_str(wput, "data", "counter"), "bumped");
	answer_reset(&whole.a);
	scripted_check_done();
}

/* A client freed with calls in flight and a cancelled one not yet reaped: all aborted, no
 * callback, no leak. */
static void
test_cancel_then_free_client(void)
{
	static struct kube_config cfg = {.server = (char *)"https://apiserver.test"};
	struct kube_client *c = NULL;
	struct cancel_state s = {0}, t = {0};
	struct retry r = {0};
	struct scripted_exp *e1, *e2, *e3;

	CU_ASSERT_EQUAL_FATAL(kube_client_new(scripted_base, &cfg, &c), 0);
	e1 = scripted_expect_held("GET", CMS "/db1");
	e2 = scripted_expect_held("GET", CMS "/db1");
	e3 = scripted_expect_held("GET", CMS "/db1");
	CU_ASSERT_EQUAL_FATAL(
	    kube_get(c, &kube_res_configmaps, "t", "db1", cancel_cb, &s, &s.self), 0);
	CU_ASSERT_EQUAL_FATAL(
	    kube_get(c, &kube_res_configmaps, "t", "db1", cancel_cb, &t, &t.self), 0);
	CU_ASSERT_EQUAL_FATAL(kube_update_retry(c, &kube_res_configmaps, "t", "db1", false, 0,
				  mutate, retry_done, &r, &r.call),
	    0);
	scripted_run();
	kube_call_cancel(s.self);
	kube_client_free(c); /* t and r still in flight */
	scripted_run();
	CU_ASSERT_TRUE(scripted_aborted(e1));
	CU_ASSERT_TRUE(scripted_aborted(e2));
	CU_ASSERT_TRUE(scripted_aborted(e3));
	CU_ASSERT_EQUAL(s.a.calls + t.a.calls + r.a.calls, 0);
	CU_ASSERT_EQUAL(r.mutated, 0);
	scripted_check_done();
}

/* --- watch deadline ------------------------------------------------------------------------- */

struct wstate {
	int added;
	bool ended;
	int end_error;
	char end_message[256];
	struct kube_watch *w;
};

static void
w_event(void *userdata, enum kube_watch_type type, json_t *obj)
{
	struct wstate *s = userdata;

	if (type == KUBE_WATCH_ADDED)
		s->added++;
}

static void
w_end(void *userdata, int error, const char *message)
{
	struct wstate *s = userdata;

	s->ended = true;
	s->end_error = error;
	snprintf(s->end_message, sizeof(s->end_message), "%s", message);
	s->w = kube_watch_free(s->w);
}

/*
 * A watch asked with timeoutSeconds=20 that stays silent is healthy until the server should
 * have ended it: nothing happens at 20 s + the connect timeout + 2 s less a millisecond (no
 * byte at all meanwhile, as on a kind that never changes), then it ends with -ETIMEDOUT, the
 * message saying why. Bytes do not move the deadline: a server that keeps sending but never
 * ends the watch is stalled too.
 */
static void
test_watch_deadline(void)
{
	struct wstate s = {0};
	struct kube_watch_opts wo = {.timeout_seconds = 20};
	struct scripted_exp *w;
	long deadline = kube_watch_deadline_ms(20, 10000);

	kube_client_set_timeouts(scripted_client, 30000, 10000);
	CU_ASSERT_EQUAL(deadline, 20000 + 10000 + 2000);
	w = scripted_expect_held("GET", "/api/v1/namespaces/wi/configmaps?*");
	CU_ASSERT_EQUAL_FATAL(kube_watch_start(scripted_client, &kube_res_configmaps, "wi", &wo,
				  w_event, w_end, &s, &s.w),
	    0);
	scripted_run();
	CU_ASSERT_PTR_NOT_NULL(strstr(scripted_path(w), "watch=true&timeoutSeconds=20"));
	scripted_advance(25000 * MS); /* silent past the timeout: still waiting for the server */
	CU_ASSERT_FALSE(s.ended);
	scripted_send(w, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
			 "\"namespace\":\"wi\",\"resourceVersion\":\"3\"}}}\n");
	CU_ASSERT_EQUAL(s.added, 1);
	scripted_advance((uint64_t)(deadline - 25000 - 1) * MS);
	CU_ASSERT_FALSE(s.ended);
	scripted_advance(MS);
	CU_ASSERT_TRUE(s.ended);
	CU_ASSERT_EQUAL(s.end_error, -ETIMEDOUT);
	CU_ASSERT_PTR_NOT_NULL(strstr(s.end_message, "watch of configmaps: still open 32000 ms "
						     "after it started, its timeoutSeconds is 20, "
						     "last byte 7 s ago (stalled stream)"));
	CU_ASSERT_PTR_NULL(s.w);
	CU_ASSERT_TRUE(scripted_aborted(w));
	scripted_check_done();
}

/* Ended by the server at its timeout: a clean end (0), and the deadline is gone with it. */
static void
test_watch_server_end(void)
{
	struct wstate s = {0};
	struct kube_watch_opts wo = {.timeout_seconds = 20};
	struct scripted_exp *w;

	w = scripted_expect_held("GET", "/api/v1/namespaces/we/configmaps?*");
	CU_ASSERT_EQUAL_FATAL(kube_watch_start(scripted_client, &kube_res_configmaps, "we", &wo,
				  w_event, w_end, &s, &s.w),
	    0);
	scripted_run();
	scripted_advance(20000 * MS);
	scripted_close(w);
	CU_ASSERT_TRUE(s.ended);
	CU_ASSERT_EQUAL(s.end_error, 0);
	s.ended = false;
	scripted_advance(60000 * MS); /* past where the deadline was: nothing more */
	CU_ASSERT_FALSE(s.ended);
	scripted_check_done();
}

/* The deadline's margin: a tenth of the timeout, 2 s at least and 30 s at most. */
static void
test_watch_deadline_margin(void)
{
	CU_ASSERT_EQUAL(kube_watch_deadline_ms(1, 0), 1000 + 2000);
	CU_ASSERT_EQUAL(kube_watch_deadline_ms(100, 0), 100000 + 10000);
	CU_ASSERT_EQUAL(kube_watch_deadline_ms(300, 10000), 300000 + 10000 + 30000);
	CU_ASSERT_EQUAL(kube_watch_deadline_ms(600, 10000), 600000 + 10000 + 30000);
	CU_ASSERT_EQUAL(kube_watch_deadline_ms(600, -1), 600000 + 30000);
}

static const struct test_case tests[] = {
    {"each verb's request", test_requests},
    {"HTTP status and Status reason -> errno", test_status_to_errno},
    {"request timeout", test_request_timeout},
    {"retry on conflict", test_conflict_retry},
    {"calls cancelled before their answer", test_cancel_before_answer},
    {"calls cancelled from inside callbacks", test_cancel_from_callback},
    {"retry loop cancelled at each step", test_cancel_update_retry},
    {"cancelled calls and a client freed", test_cancel_then_free_client},
    {"a silent watch lives until its deadline, then ends as stalled", test_watch_deadline},
    {"a watch the server ends is a clean end", test_watch_server_end},
    {"the watch deadline's margin", test_watch_deadline_margin},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "kube-calls",
	.init = scripted_suite_init,
	.cleanup = scripted_suite_cleanup,
	.tests = tests},
    {.name = NULL},
};
