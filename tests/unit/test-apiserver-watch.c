/* SPDX-License-Identifier: Apache-2.0 */
/* Watches on the test API server: replay, live events, selectors, bookmarks, 410, faults. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>

#include "tests/helpers/apiserver.h"
#include "tests/runner.h"

#define POOLS "/apis/network.harvesterhci.io/v1alpha1/namespaces/%s/ippools"
#define MERGE "application/merge-patch+json"
#define WAIT_MS 10000 /* upper bound for something that should happen at once */

static struct test_apiserver *srv;

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

/* --- a streaming watch client on libcurl multi -------------------------------------------- */

struct watcher {
	CURLM *multi;
	CURL *easy;
	struct curl_slist *hdrs;
	char *buf;
	size_t len;
	json_t *events; /* parsed lines */
	bool headers;	/* response started: the server has registered the watch */
	bool done;
};

static size_t
w_write(char *p, size_t size, size_t n, void *ud)
{
	struct watcher *w = ud;
	size_t total = size * n;
	char *nl;

	w->buf = realloc(w->buf, w->len + total + 1);
	memcpy(w->buf + w->len, p, total);
	w->len += total;
	w->buf[w->len] = '\0';
	while ((nl = memchr(w->buf, '\n', w->len)) != NULL) {
		size_t l = (size_t)(nl - w->buf);
		json_t *ev = json_loadb(w->buf, l, 0, NULL);
		if (ev != NULL)
			json_array_append_new(w->events, ev);
		else
			json_array_append_new(w->events, json_string("unparsable"));
		memmove(w->buf, nl + 1, w->len - l - 1);
		w->len -= l + 1;
		w->buf[w->len] = '\0';
	}
	return total;
}

static size_t
w_header(char *p, size_t size, size_t n, void *ud)
{
	struct watcher *w = ud;

	if (size * n == 2 && p[0] == '\r')
		w->headers = true;
	return size * n;
}

static void
w_pump(struct watcher *w, int ms)
{
	int running;
	CURLMsg *m;
	int left;

	curl_multi_perform(w->multi, &running);
	curl_multi_poll(w->multi, NULL, 0, ms, NULL);
	curl_multi_perform(w->multi, &running);
	while ((m = curl_multi_info_read(w->multi, &left)) != NULL)
		if (m->msg == CURLMSG_DONE)
			w->done = true;
}

static struct watcher *w_start(struct test_apiserver *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static struct watcher *
w_start(struct test_apiserver *a, const char *fmt, ...)
{
	struct watcher *w = calloc(1, sizeof(*w));
	char path[2048], url[4096], auth[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	snprintf(url, sizeof(url), "%s%s", test_apiserver_url(a), path);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", test_apiserver_token(a));
	w->events = json_array();
	w->multi = curl_multi_init();
	w->easy = curl_easy_init();
	w->hdrs = curl_slist_append(NULL, auth);
	curl_easy_setopt(w->easy, CURLOPT_URL, url);
	curl_easy_setopt(w->easy, CURLOPT_CAINFO, test_apiserver_ca_file(a));
	curl_easy_setopt(w->easy, CURLOPT_HTTPHEADER, w->hdrs);
	curl_easy_setopt(w->easy, CURLOPT_WRITEFUNCTION, w_write);
	curl_easy_setopt(w->easy, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(w->easy, CURLOPT_HEADERFUNCTION, w_header);
	curl_easy_setopt(w->easy, CURLOPT_HEADERDATA, w);
	curl_easy_setopt(w->easy, CURLOPT_NOSIGNAL, 1L);
	curl_multi_add_handle(w->multi, w->easy);
	for (int i = 0; i < WAIT_MS / 10 && !w->headers && !w->done; i++)
		w_pump(w, 10);
	CU_ASSERT(w->headers);
	return w;
}

/* Pump until at least n events arrived (or the stream ended / the bound passed). */
static bool
w_wait(struct watcher *w, size_t n)
{
	for (int i = 0; i < WAIT_MS / 10 && json_array_size(w->events) < n && !w->done; i++)
		w_pump(w, 10);
	return json_array_size(w->events) >= n;
}

static bool
w_wait_done(struct watcher *w)
{
	for (int i = 0; i < WAIT_MS / 10 && !w->done; i++)
		w_pump(w, 10);
	return w->done;
}

static void
w_free(struct watcher *w)
{
	if (w == NULL)
		return;
	curl_multi_remove_handle(w->multi, w->easy);
	curl_easy_cleanup(w->easy);
	curl_multi_cleanup(w->multi);
	curl_slist_free_all(w->hdrs);
	json_decref(w->events);
	free(w->buf);
	free(w);
}

static const char *
ev_type(struct watcher *w, size_t i)
{
	return json_string_value(json_object_get(json_array_get(w->events, i), "type"));
}

static json_t *
ev_obj(struct watcher *w, size_t i)
{
	return json_object_get(json_array_get(w->events, i), "object");
}

static const char *
ev_name(struct watcher *w, size_t i)
{
	return json_string_value(
	    json_object_get(json_object_get(ev_obj(w, i), "metadata"), "name"));
}

static unsigned long long
ev_rv(struct watcher *w, size_t i)
{
	const char *s = json_string_value(
	    json_object_get(json_object_get(ev_obj(w, i), "metadata"), "resourceVersion"));
	return s != NULL ? strtoull(s, NULL, 10) : 0;
}

/* Checks the event at i has the type and object name. */
static void
check_ev(struct watcher *w, size_t i, const char *type, const char *name)
{
	const char *t = ev_type(w, i), *n = ev_name(w, i);

	CU_ASSERT_PTR_NOT_NULL_FATAL(t);
	CU_ASSERT_PTR_NOT_NULL_FATAL(n);
	if (strcmp(t, type) != 0 || strcmp(n, name) != 0)
		fprintf(stderr, "event %zu: %s %s, want %s %s\n", i, t, n, type, name);
	CU_ASSERT_STRING_EQUAL(t, type);
	CU_ASSERT_STRING_EQUAL(n, name);
}

/* A write through the harness; returns the resourceVersion of the answer (0 on error). */
static unsigned long long write_req(struct test_apiserver *a, const char *method, const char *ct,
    const char *body, long want, const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static unsigned long long
write_req(struct test_apiserver *a, const char *method, const char *ct, const char *body, long want,
    const char *fmt, ...)
{
	char path[2048], *out = NULL;
	long code = 0;
	va_list ap;
	json_t *j;
	unsigned long long rv = 0;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	CU_ASSERT_EQUAL_FATAL(test_apiserver_request(a, method, path, ct, body, &code, &out), 0);
	CU_ASSERT_EQUAL(code, want);
	j = json_loads(out, 0, NULL);
	free(out);
	const char *s =
	    json_string_value(json_object_get(json_object_get(j, "metadata"), "resourceVersion"));
	if (s != NULL)
		rv = strtoull(s, NULL, 10);
	json_decref(j);
	return rv;
}

static unsigned long long
create(struct test_apiserver *a, const char *ns, const char *name, const char *labels)
{
	char body[512];

	snprintf(body, sizeof(body), "{\"metadata\":{\"name\":\"%s\",\"labels\":{%s}},\"spec\":{}}",
	    name, labels != NULL ? labels : "");
	return write_req(a, "POST", NULL, body, 201, POOLS, ns);
}

/* --- tests ------------------------------------------------------------------------------- */

static void
test_watch_initial_and_live(void)
{
	struct watcher *w;

	create(srv, "w1", "a", NULL);
	create(srv, "other", "zz", NULL);
	w = w_start(srv, POOLS "?watch=true", "w1");
	CU_ASSERT_FATAL(w_wait(w, 1));
	check_ev(w, 0, "ADDED", "a"); /* synthetic ADDED for what exists */
	create(srv, "w1", "b", NULL);
	write_req(srv, "PATCH", MERGE, "{\"spec\":{\"x\":1}}", 200, POOLS "/a", "w1");
	write_req(srv, "DELETE", NULL, NULL, 200, POOLS "/b", "w1");
	create(srv, "other", "not-seen", NULL);
	CU_ASSERT_FATAL(w_wait(w, 4));
	check_ev(w, 1, "ADDED", "b");
	check_ev(w, 2, "MODIFIED", "a");
	check_ev(w, 3, "DELETED", "b");
	CU_ASSERT(ev_rv(w, 1) < ev_rv(w, 2));
	CU_ASSERT(ev_rv(w, 2) < ev_rv(w, 3));
	/* nothing from the other namespace, nothing more */
	w_pump(w, 100);
	CU_ASSERT_EQUAL(json_array_size(w->events), 4);
	CU_ASSERT_FALSE(w->done);
	w_free(w);
}

static void
test_watch_from_resource_version(void)
{
	struct watcher *w, *all;
	unsigned long long rv1;

	rv1 = create(srv, "w2", "x", NULL);
	write_req(srv, "PATCH", MERGE, "{\"spec\":{\"x\":2}}", 200, POOLS "/x", "w2");
	create(srv, "w2", "y", NULL);
	w = w_start(srv, POOLS "?watch=1&resourceVersion=%llu", "w2", rv1);
	CU_ASSERT_FATAL(w_wait(w, 2));
	check_ev(w, 0, "MODIFIED", "x");
	check_ev(w, 1, "ADDED", "y");
	w_pump(w, 50);
	CU_ASSERT_EQUAL(json_array_size(w->events), 2);
	/* the same from a cluster-wide watch, and "0" gives the current state as ADDED */
	all = w_start(srv, "/apis/network.harvesterhci.io/v1alpha1/ippools?watch=true"
			   "&resourceVersion=0&fieldSelector=metadata.namespace%%3Dw2");
	CU_ASSERT_FATAL(w_wait(all, 2));
	CU_ASSERT_STRING_EQUAL(ev_type(all, 0), "ADDED");
	CU_ASSERT_STRING_EQUAL(ev_type(all, 1), "ADDED");
	write_req(srv, "DELETE", NULL, NULL, 200, POOLS "/x", "w2");
	CU_ASSERT_FATAL(w_wait(all, 3));
	check_ev(all, 2, "DELETED", "x");
	CU_ASSERT_FATAL(w_wait(w, 3));
	check_ev(w, 2, "DELETED", "x");
	w_free(all);
	w_free(w);
}

static void
test_watch_selectors(void)
{
	struct watcher *w, *byname;

	w = w_start(srv, POOLS "?watch=true&labelSelector=role%%3Da", "w3");
	byname = w_start(srv, POOLS "?watch=true&fieldSelector=metadata.name%%3Dq", "w3");
	create(srv, "w3", "p", "\"role\":\"a\"");
	create(srv, "w3", "q", "\"role\":\"b\"");
	write_req(srv, "PATCH", MERGE, "{\"metadata\":{\"labels\":{\"role\":\"b\"}}}", 200,
	    POOLS "/p", "w3");
	write_req(srv, "PATCH", MERGE, "{\"metadata\":{\"labels\":{\"role\":\"a\"}}}", 200,
	    POOLS "/p", "w3");
	write_req(srv, "PATCH", MERGE, "{\"spec\":{\"v\":1}}", 200, POOLS "/q", "w3");
	write_req(srv, "DELETE", NULL, NULL, 200, POOLS "/p", "w3");
	CU_ASSERT_FATAL(w_wait(w, 4));
	check_ev(w, 0, "ADDED", "p");
	check_ev(w, 1, "DELETED", "p"); /* left the selector */
	check_ev(w, 2, "ADDED", "p");	/* came back */
	check_ev(w, 3, "DELETED", "p");
	w_pump(w, 50);
	CU_ASSERT_EQUAL(json_array_size(w->events), 4);
	CU_ASSERT_FATAL(w_wait(byname, 2));
	check_ev(byname, 0, "ADDED", "q");
	check_ev(byname, 1, "MODIFIED", "q");
	w_pump(byname, 50);
	CU_ASSERT_EQUAL(json_array_size(byname->events), 2);
	w_free(w);
	w_free(byname);
}

static void
test_watch_finalizer_flow(void)
{
	struct watcher *w = w_start(srv, POOLS "?watch=true", "w4");

	write_req(srv, "POST", NULL, "{\"metadata\":{\"name\":\"f\",\"finalizers\":[\"a/b\"]}}",
	    201, POOLS, "w4");
	write_req(srv, "DELETE", NULL, NULL, 200, POOLS "/f", "w4");
	write_req(srv, "PATCH", "application/json-patch+json",
	    "[{\"op\":\"remove\",\"path\":\"/metadata/finalizers/0\"}]", 200, POOLS "/f", "w4");
	CU_ASSERT_FATAL(w_wait(w, 3));
	check_ev(w, 0, "ADDED", "f");
	check_ev(w, 1, "MODIFIED", "f");
	CU_ASSERT_PTR_NOT_NULL(
	    json_object_get(json_object_get(ev_obj(w, 1), "metadata"), "deletionTimestamp"));
	check_ev(w, 2, "DELETED", "f");
	w_free(w);
}

static void
test_watch_410_after_compact(void)
{
	struct watcher *w;
	unsigned long long rv;
	json_t *st;

	rv = create(srv, "w5", "c1", NULL);
	create(srv, "w5", "c2", NULL);
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "compact"), 0);
	w = w_start(srv, POOLS "?watch=true&resourceVersion=%llu", "w5", rv);
	CU_ASSERT_FATAL(w_wait(w, 1));
	CU_ASSERT_STRING_EQUAL(ev_type(w, 0), "ERROR");
	st = ev_obj(w, 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(st, "kind")), "Status");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(st, "code")), 410);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(st, "reason")), "Expired");
	CU_ASSERT(w_wait_done(w)); /* and the stream ends */
	w_free(w);
	/* watching from the current version works */
	w = w_start(srv, POOLS "?watch=true&resourceVersion=%llu", "w5", rv + 1);
	create(srv, "w5", "c3", NULL);
	CU_ASSERT_FATAL(w_wait(w, 1));
	check_ev(w, 0, "ADDED", "c3");
	w_free(w);
}

static void
test_watch_history_window(void)
{
	struct test_apiserver *a;
	struct watcher *w;
	unsigned long long rvs[10];

	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&a, "--history 3"), 0);
	for (int i = 0; i < 10; i++) {
		char name[16];
		snprintf(name, sizeof(name), "h%d", i);
		rvs[i] = create(a, "hist", name, NULL);
	}
	w = w_start(a, POOLS "?watch=true&resourceVersion=%llu", "hist", rvs[0]);
	CU_ASSERT_FATAL(w_wait(w, 1));
	CU_ASSERT_STRING_EQUAL(ev_type(w, 0), "ERROR");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(ev_obj(w, 0), "code")), 410);
	w_free(w);
	w = w_start(a, POOLS "?watch=true&resourceVersion=%llu", "hist", rvs[7]);
	CU_ASSERT_FATAL(w_wait(w, 2));
	check_ev(w, 0, "ADDED", "h8");
	check_ev(w, 1, "ADDED", "h9");
	w_free(w);
	CU_ASSERT_EQUAL(test_apiserver_terminate(a), 0);
	test_apiserver_stop(a);

	/* the window is also bounded in bytes */
	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&a, "--history-bytes 3000"), 0);
	for (int i = 0; i < 10; i++) {
		char body[1024];
		snprintf(body, sizeof(body),
		    "{\"metadata\":{\"name\":\"b%d\"},\"spec\":{\"pad\":\"%0500d\"}}", i, i);
		rvs[i] = write_req(a, "POST", NULL, body, 201, POOLS, "hist");
	}
	w = w_start(a, POOLS "?watch=true&resourceVersion=%llu", "hist", rvs[0]);
	CU_ASSERT_FATAL(w_wait(w, 1));
	CU_ASSERT_STRING_EQUAL(ev_type(w, 0), "ERROR");
	w_free(w);
	w = w_start(a, POOLS "?watch=true&resourceVersion=%llu", "hist", rvs[8]);
	CU_ASSERT_FATAL(w_wait(w, 1));
	check_ev(w, 0, "ADDED", "b9");
	w_free(w);
	CU_ASSERT_EQUAL(test_apiserver_terminate(a), 0);
	test_apiserver_stop(a);
}

static void
test_watch_bookmarks(void)
{
	struct test_apiserver *a;
	struct watcher *plain, *w;
	unsigned long long rv;
	size_t n, added, bm;
	json_t *o;

	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&a, "--bookmark-interval 1"), 0);
	plain = w_start(a, POOLS "?watch=true", "bm");
	w = w_start(a, POOLS "?watch=true&allowWatchBookmarks=true", "bm");
	rv = create(a, "bm", "b1", NULL);
	/*
	 * Bookmarks come every second whatever else happens, so one may come before the ADDED
	 * (a slow machine); what must hold is that the ADDED comes and a bookmark follows it,
	 * at its resourceVersion or later.
	 */
	added = bm = SIZE_MAX;
	for (n = 1; n <= 8 && bm == SIZE_MAX; n++) {
		CU_ASSERT_FATAL(w_wait(w, n));
		if (added == SIZE_MAX && strcmp(ev_type(w, n - 1), "ADDED") == 0)
			added = n - 1;
		else if (added != SIZE_MAX && strcmp(ev_type(w, n - 1), "BOOKMARK") == 0)
			bm = n - 1;
		else
			CU_ASSERT_STRING_EQUAL(ev_type(w, n - 1), "BOOKMARK");
	}
	CU_ASSERT_FATAL(added != SIZE_MAX && bm != SIZE_MAX);
	check_ev(w, added, "ADDED", "b1");
	o = ev_obj(w, bm);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "kind")), "IPPool");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(o, "apiVersion")),
	    "network.harvesterhci.io/v1alpha1");
	CU_ASSERT(ev_rv(w, bm) >= rv);
	/* the watch that did not ask gets none (w got its bookmark already: the same tick) */
	CU_ASSERT(w_wait(plain, 1));
	w_pump(plain, 50);
	n = json_array_size(plain->events);
	CU_ASSERT_EQUAL(n, 1);
	w_free(plain);
	w_free(w);
	CU_ASSERT_EQUAL(test_apiserver_terminate(a), 0);
	test_apiserver_stop(a);
}

static void
test_watch_timeout_and_close(void)
{
	struct watcher *t, *c[3];

	t = w_start(srv, POOLS "?watch=true&timeoutSeconds=1", "w6");
	for (int i = 0; i < 3; i++)
		c[i] = w_start(srv, POOLS "?watch=true", "w6");
	CU_ASSERT(w_wait_done(t));
	CU_ASSERT_EQUAL(json_array_size(t->events), 0);
	for (int i = 0; i < 3; i++)
		CU_ASSERT_FALSE(c[i]->done);
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "close-watches"), 0);
	for (int i = 0; i < 3; i++) {
		CU_ASSERT(w_wait_done(c[i]));
		w_free(c[i]);
	}
	w_free(t);
}

static void
test_legacy_watch_paths(void)
{
	struct watcher *w, *one;

	w = w_start(srv, "/apis/network.harvesterhci.io/v1alpha1/watch/namespaces/w7/ippools");
	one = w_start(srv, POOLS "/target?watch=1", "w7");
	create(srv, "w7", "other", NULL);
	create(srv, "w7", "target", NULL);
	CU_ASSERT_FATAL(w_wait(w, 2));
	check_ev(w, 0, "ADDED", "other");
	check_ev(w, 1, "ADDED", "target");
	CU_ASSERT_FATAL(w_wait(one, 1));
	check_ev(one, 0, "ADDED", "target");
	w_pump(one, 50);
	CU_ASSERT_EQUAL(json_array_size(one->events), 1);
	w_free(w);
	w_free(one);
}

/* Watchers that go away while events flow must not upset the server. */
static void
test_watchers_leave_midstream(void)
{
	struct watcher *w[5];

	for (int i = 0; i < 5; i++)
		w[i] = w_start(srv, POOLS "?watch=true", "w8");
	for (int i = 0; i < 20; i++) {
		char name[16];
		snprintf(name, sizeof(name), "o%d", i);
		create(srv, "w8", name, NULL);
		if (i % 4 == 0) {
			w_free(w[i / 4]);
			w[i / 4] = NULL;
		}
	}
	for (int i = 0; i < 5; i++)
		w_free(w[i]);
	/* still serving */
	w[0] = w_start(srv, POOLS "?watch=true", "w8");
	CU_ASSERT_FATAL(w_wait(w[0], 20));
	w_free(w[0]);
}

static void
test_many_watchers(void)
{
	enum { N = 40 };
	struct watcher *w[N];
	char *out = NULL;
	long code;
	json_t *stats;

	for (int i = 0; i < N; i++)
		w[i] = w_start(srv, POOLS "?watch=true", "many");
	CU_ASSERT_EQUAL(
	    test_apiserver_request(srv, "GET", "/_test/stats", NULL, NULL, &code, &out), 0);
	stats = json_loads(out, 0, NULL);
	free(out);
	CU_ASSERT(json_integer_value(json_object_get(stats, "watches")) >= N);
	json_decref(stats);
	create(srv, "many", "one", NULL);
	for (int i = 0; i < N; i++) {
		CU_ASSERT(w_wait(w[i], 1));
		check_ev(w[i], 0, "ADDED", "one");
		w_free(w[i]);
	}
}

static void
test_slow_reader_dropped(void)
{
	struct test_apiserver *a;
	struct watcher *slow, *fast;
	char body[8192], *out = NULL;
	long code = 0;
	json_t *stats;
	size_t got;

	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&a, "--max-watch-buffer 65536"), 0);
	slow = w_start(a, POOLS "?watch=true", "slow");
	fast = w_start(a, POOLS "?watch=true", "slow");
	create(a, "slow", "big", NULL);
	/* ~24 MiB of events; the slow watcher is never read, the fast one is */
	memset(body, 0, sizeof(body));
	strcpy(body, "{\"spec\":{\"pad\":\"");
	size_t off = strlen(body);
	for (int i = 0; i < 6000; i++) {
		size_t k = off;
		for (int j = 0; j < 4000; j++)
			body[k++] = (char)('a' + (i + j) % 26);
		snprintf(body + k, sizeof(body) - k, "\"}}");
		write_req(a, "PATCH", MERGE, body, 200, POOLS "/big", "slow");
		w_pump(fast, 0);
	}
	CU_ASSERT(w_wait(fast, 6001));
	got = json_array_size(fast->events);
	CU_ASSERT_EQUAL(got, 6001);
	CU_ASSERT_FALSE(fast->done);
	CU_ASSERT_EQUAL(
	    test_apiserver_request(a, "GET", "/_test/stats", NULL, NULL, &code, &out), 0);
	stats = json_loads(out, 0, NULL);
	free(out);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(stats, "watches")), 1);
	json_decref(stats);
	w_free(slow);
	w_free(fast);
	CU_ASSERT_EQUAL(test_apiserver_terminate(a), 0);
	test_apiserver_stop(a);
}

static void
test_watch_survives_restart_as_relist(void)
{
	struct test_apiserver *a;
	struct watcher *w;
	unsigned long long rv;

	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&a, NULL), 0);
	rv = create(a, "rs", "r1", NULL);
	w = w_start(a, POOLS "?watch=true&resourceVersion=%llu", "rs", rv);
	CU_ASSERT_EQUAL_FATAL(test_apiserver_restart(a), 0);
	CU_ASSERT(w_wait_done(w)); /* the old stream ended with the old process */
	w_free(w);
	/* from the saved version it goes on; older versions are gone */
	w = w_start(a, POOLS "?watch=true&resourceVersion=%llu", "rs", rv);
	create(a, "rs", "r2", NULL);
	CU_ASSERT_FATAL(w_wait(w, 1));
	check_ev(w, 0, "ADDED", "r2");
	CU_ASSERT(ev_rv(w, 0) > rv);
	w_free(w);
	CU_ASSERT_EQUAL(test_apiserver_terminate(a), 0);
	test_apiserver_stop(a);
}

/* Last: the suite's server saves and exits with status 0 (no sanitizer/valgrind error). */
static void
test_clean_exit(void)
{
	CU_ASSERT_EQUAL(test_apiserver_terminate(srv), 0);
}

static const struct test_case watch_tests[] = {
    {"initial ADDED and live events", test_watch_initial_and_live},
    {"from a resourceVersion", test_watch_from_resource_version},
    {"selectors and transitions", test_watch_selectors},
    {"finalizer deletion flow", test_watch_finalizer_flow},
    {"410 after compact", test_watch_410_after_compact},
    {"history window", test_watch_history_window},
    {"bookmarks", test_watch_bookmarks},
    {"timeoutSeconds and close-watches", test_watch_timeout_and_close},
    {"legacy /watch/ path and watch on a name", test_legacy_watch_paths},
    {"watchers leave mid-stream", test_watchers_leave_midstream},
    {"many concurrent watchers", test_many_watchers},
    {"slow reader is dropped, writes go on", test_slow_reader_dropped},
    {"restart ends streams, data stays", test_watch_survives_restart_as_relist},
    {"server exits cleanly", test_clean_exit},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "apiserver-watch", .init = suite_init, .cleanup = suite_cleanup, .tests = watch_tests},
    {.name = NULL},
};
