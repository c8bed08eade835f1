/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Informer on the scripted transport and fake clock (tests/helpers/scripted-http.c): each
 * test scripts the API server's answers (list pages, watch streams fed event by event, 410,
 * 429, 500, 503, refused and reset connections) and moves time on itself. Paginated initial
 * sync, watch events into a typed store, reconnect after a dropped stream (at once after a
 * long-lived watch, after a backoff after a quick close), after a reset connection and
 * refusals, relist after 410 (an HTTP answer or an ERROR event), bookmarks, periodic resync,
 * a typed codec, freeing with a list page in flight, and no per-event memory growth over
 * 100 000 events. Failures are logged (rate limited) and described for /readyz; a quiet watch
 * lives until the server ends it and resumes without a list, one the server does not end by
 * its deadline is replaced; the backoff before the first list is capped low.
 *
 * The transports (libcurl, mbed TLS) against the test API server are covered by
 * test-kube-client and test-kube-watch (and their -mbedtls variants).
 *
 * Size: about 1100 lines, one file on purpose: one module's cases on one scripted fixture.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "lib/clock.h"
#include "lib/jscan.h"
#include "lib/util.h"
#include "lib/log.h"
#include "tests/helpers/capture.h"
#include "tests/helpers/scripted-http.h"
#include "tests/runner.h"

/* This binary's transport and clock (kube/http.c and lib/clock.c are not linked). */
const struct kube_http_engine kube_http_engine = SCRIPTED_HTTP_ENGINE;
SCRIPTED_CLOCK_DEFINE

#define SEC (1000 * UINT64_C(1000))

/* --- the typed item --------------------------------------------------------------------- */

struct cm {
	char app[24];
	int value;
};

static int transformed, destroyed_items;

static void *
cm_transform(void *userdata, json_t *obj)
{
	struct cm *c = calloc(1, sizeof(*c));
	const char *app = kube_obj_label(obj, "app");
	const char *v = json_string_value(json_object_get(json_object_get(obj, "data"), "v"));

	if (!c)
		return NULL;
	snprintf(c->app, sizeof(c->app), "%s", app ? app : "");
	c->value = v ? atoi(v) : -1;
	transformed++;
	return c;
}

static void
cm_destroy(void *item)
{
	destroyed_items++;
	free(item);
}

static void
by_app(const void *item, kube_index_emit_fn emit, void *ctx)
{
	const struct cm *c = item;

	if (c->app[0])
		emit(ctx, c->app);
}

/* --- handlers ------------------------------------------------------------------------------ */

struct seen {
	int adds, updates, deletes;
	char last_key[128];
	int last_old_value, last_value;
};

static void
on_add(void *userdata, const char *key, const void *item)
{
	struct seen *s = userdata;

	s->adds++;
	snprintf(s->last_key, sizeof(s->last_key), "%s", key);
	s->last_value = ((const struct cm *)item)->value;
}

static void
on_update(void *userdata, const char *key, const void *old, const void *item)
{
	struct seen *s = userdata;

	s->updates++;
	snprintf(s->last_key, sizeof(s->last_key), "%s", key);
	s->last_old_value = ((const struct cm *)old)->value;
	s->last_value = ((const struct cm *)item)->value;
}

static void
on_delete(void *userdata, const char *key, const void *item)
{
	struct seen *s = userdata;

	s->deletes++;
	snprintf(s->last_key, sizeof(s->last_key), "%s", key);
	s->last_value = ((const struct cm *)item)->value;
}

/* --- the scripted API server's texts ---------------------------------------------------------- */

/* A ConfigMap with labels grp (selected on) and app, data.v and its resourceVersion. */
static void
cm_json(char *out, size_t len, const char *ns, const char *name, const char *app, int v, int rv)
{
	snprintf(out, len,
	    "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"resourceVersion\":\"%d\","
	    "\"labels\":{\"app\":\"%s\"}},\"data\":{\"v\":\"%d\"}}",
	    name, ns, rv, app, v);
}

/* A watch line. */
static const char *
event_line(const char *type, const char *ns, const char *name, const char *app, int v, int rv)
{
	static char line[1024];
	char obj[900];

	cm_json(obj, sizeof(obj), ns, name, app, v, rv);
	snprintf(line, sizeof(line), "{\"type\":\"%s\",\"object\":%s}\n", type, obj);
	return line;
}

static const char *
bookmark_line(int rv)
{
	static char line[256];

	snprintf(line, sizeof(line),
	    "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":"
	    "{\"resourceVersion\":\"%d\"}}}\n",
	    rv);
	return line;
}

static const char gone_event[] =
    "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
    "\"Failure\",\"message\":\"too old resource version: 5 (90)\",\"reason\":\"Expired\","
    "\"code\":410}}\n";

static const char gone_status[] =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":"
    "\"too old resource version\",\"reason\":\"Gone\",\"code\":410}";

/* A list answer under construction: items, then its metadata. */
struct list_body {
	char *text;
	size_t len, cap;
	int n;
};

static void lb_add(struct list_body *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
lb_add(struct list_body *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->text + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && b->len + (size_t)n < b->cap)
			break;
		b->cap = b->cap ? b->cap * 2 : 4096;
		b->text = realloc(b->text, b->cap);
		CU_ASSERT_PTR_NOT_NULL_FATAL(b->text);
		if (b->len == 0)
			b->text[0] = '\0';
	}
	b->len += (size_t)n;
}

static void
lb_item(struct list_body *b, const char *ns, const char *name, const char *app, int v, int rv)
{
	char obj[900];

	cm_json(obj, sizeof(obj), ns, name, app, v, rv);
	lb_add(b, "%s%s", b->n++ ? "," : "{\"kind\":\"ConfigMapList\",\"items\":[", obj);
}

/* Ends the body (cont NULL: the last page) and returns it; free it. */
static char *
lb_end(struct list_body *b, int rv, const char *cont)
{
	if (!b->n)
		lb_add(b, "{\"kind\":\"ConfigMapList\",\"items\":[");
	lb_add(b, "],\"metadata\":{\"resourceVersion\":\"%d\"", rv);
	if (cont)
		lb_add(b, ",\"continue\":\"%s\"", cont);
	lb_add(b, "}}");
	return b->text;
}

/* Scripts a one-page list answer of n items NAME1..NAMEn (value i, resourceVersion i). */
static void
expect_list(const char *path, const char *ns, const char *prefix, int n, int rv)
{
	struct list_body b = {0};
	char name[64], *body;

	for (int i = 1; i <= n; i++) {
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		lb_item(&b, ns, name, "a", i, i);
	}
	body = lb_end(&b, rv, NULL);
	scripted_expect("GET", path, 200, body);
	free(body);
}

/* The paths the informers of these tests use. */
static const char *
list_path(const char *ns, const char *sel)
{
	static char p[256];

	snprintf(p, sizeof(p), "/api/v1/namespaces/%s/configmaps?labelSelector=grp%%3D%s&limit=500",
	    ns, sel);
	return p;
}

static const char *
watch_path(const char *ns, const char *sel, int rv)
{
	static char p[256];

	snprintf(p, sizeof(p),
	    "/api/v1/namespaces/%s/configmaps?watch=true&labelSelector=grp%%3D%s&resourceVersion=%d"
	    "&allowWatchBookmarks=true&timeoutSeconds=3600",
	    ns, sel, rv);
	return p;
}

/* --- informers ------------------------------------------------------------------------------- */

static struct kube_informer *
new_informer(const char *ns, const char *grp_selector, unsigned page, struct seen *s)
{
	char sel[64];
	struct kube_informer_opts o = {
	    .res = &kube_res_configmaps,
	    .ns = ns,
	    .label_selector = sel,
	    .page_size = page,
	    .watch_timeout_s = 3600,
	    .backoff_base_usec = 1 * SEC,
	    .backoff_max_usec = 10 * SEC,
	    .transform = cm_transform,
	    .destroy = cm_destroy,
	};
	struct kube_informer_handlers h = {
	    .on_add = on_add,
	    .on_update = on_update,
	    .on_delete = on_delete,
	    .userdata = s,
	};
	struct kube_informer *inf = NULL;

	snprintf(sel, sizeof(sel), "grp=%s", grp_selector);
	CU_ASSERT_EQUAL_FATAL(kube_informer_new(scripted_client, &o, &inf), 0);
	CU_ASSERT_EQUAL(kube_informer_add_index(inf, "app", by_app), 0);
	CU_ASSERT_EQUAL(kube_informer_add_handlers(inf, &h), 0);
	return inf;
}

static struct kube_informer_stats
stats(struct kube_informer *inf)
{
	struct kube_informer_stats st;

	kube_informer_get_stats(inf, &st);
	return st;
}

static const struct cm *
get(struct kube_informer *inf, const char *key)
{
	return kube_store_get(kube_informer_store(inf), key);
}

/* --- tests --------------------------------------------------------------------------------------
 */

static void
test_sync_and_events(void)
{
	struct seen s = {0};
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct kube_store *store;
	struct scripted_exp *w1, *w2, *w3, *w4, *w5, *w6, *w7;
	char path[256], name[32], cont[32], *body;
	const struct cm *c;

	/* 250 objects in pages of 40: seven pages chained by continue tokens */
	for (int page = 0; page < 7; page++) {
		struct list_body b = {0};

		for (int i = page * 40; i < page * 40 + 40 && i < 250; i++) {
			snprintf(name, sizeof(name), "cm-%03d", i);
			lb_item(&b, "inf", name, i % 2 ? "odd" : "even", i, i + 1);
		}
		snprintf(cont, sizeof(cont), "tok%d", page + 1);
		body = lb_end(&b, 300, page < 6 ? cont : NULL);
		snprintf(path, sizeof(path),
		    "/api/v1/namespaces/inf/configmaps?labelSelector=grp%%3Da&limit=40%s%s",
		    page ? "&continue=tok" : "", page ? (char[2]){(char)('0' + page), 0} : "");
		scripted_expect("GET", path, 200, body);
		free(body);
	}
	snprintf(path, sizeof(path), "%s", watch_path("inf", "a", 300));
	w1 = scripted_expect_held("GET", path);

	transformed = destroyed_items = 0;
	inf = new_informer("inf", "a", 40, &s);
	CU_ASSERT_FALSE(kube_informer_has_synced(inf));
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	CU_ASSERT_EQUAL(kube_informer_start(inf), -EALREADY);
	scripted_run();
	CU_ASSERT_EQUAL_FATAL(kube_informers_wait_synced(&inf, 1, 0), 0);
	store = kube_informer_store(inf);
	CU_ASSERT_EQUAL(kube_store_len(store), 250);
	CU_ASSERT_EQUAL(s.adds, 250);
	CU_ASSERT_EQUAL(transformed, 250);
	st = stats(inf);
	CU_ASSERT_EQUAL(st.pages, 7); /* 250 / 40 */
	CU_ASSERT_EQUAL(st.lists, 1);
	CU_ASSERT_EQUAL(st.watches, 1);
	CU_ASSERT_STRING_EQUAL(st.last_resource_version, "300");
	CU_ASSERT_EQUAL(kube_store_index_count(store, "app", "odd"), 125);
	c = get(inf, "inf/cm-007");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->value, 7);
	CU_ASSERT_TRUE(scripted_arrived(w1));

	/* watch: add, update (old and new items), delete */
	scripted_send(w1, event_line("ADDED", "inf", "late", "odd", 1000, 301));
	CU_ASSERT_EQUAL(s.adds, 251);
	CU_ASSERT_STRING_EQUAL(s.last_key, "inf/late");
	CU_ASSERT_EQUAL(s.last_value, 1000);

	scripted_send(w1, event_line("MODIFIED", "inf", "cm-007", "odd", 77, 302));
	CU_ASSERT_EQUAL(s.updates, 1);
	CU_ASSERT_STRING_EQUAL(s.last_key, "inf/cm-007");
	CU_ASSERT_EQUAL(s.last_old_value, 7);
	CU_ASSERT_EQUAL(s.last_value, 77);
	CU_ASSERT_EQUAL(get(inf, "inf/cm-007")->value, 77);

	scripted_send(w1, event_line("DELETED", "inf", "cm-008", "even", 8, 303));
	CU_ASSERT_EQUAL(s.deletes, 1);
	CU_ASSERT_STRING_EQUAL(s.last_key, "inf/cm-008");
	CU_ASSERT_EQUAL(s.last_value, 8); /* the last known state */
	CU_ASSERT_PTR_NULL(get(inf, "inf/cm-008"));
	CU_ASSERT_EQUAL(kube_store_index_count(store, "app", "even"), 124);

	/* the server ends a long-lived stream: watch again at once from the last
	 * resourceVersion, no relist, no loss */
	snprintf(path, sizeof(path), "%s", watch_path("inf", "a", 303));
	w2 = scripted_expect_held("GET", path);
	scripted_advance(60 * SEC);
	scripted_close(w1);
	CU_ASSERT_TRUE(scripted_arrived(w2));
	scripted_send(w2, event_line("ADDED", "inf", "after-drop", "even", 5, 304));
	st = stats(inf);
	CU_ASSERT_EQUAL(st.watches, 2);
	CU_ASSERT_EQUAL(st.lists, 1);
	CU_ASSERT_EQUAL(st.relists_410, 0);
	CU_ASSERT_EQUAL(st.errors, 0);
	CU_ASSERT_PTR_NOT_NULL(get(inf, "inf/after-drop"));
	CU_ASSERT_EQUAL(kube_store_len(store), 251);

	/* ended by the server within a second, but after delivering an event (the API server
	 * drops a watcher that falls behind a burst): watch again at once, as client-go does */
	snprintf(path, sizeof(path), "%s", watch_path("inf", "a", 304));
	w3 = scripted_expect_held("GET", path);
	scripted_close(w2);
	CU_ASSERT_TRUE(scripted_arrived(w3));
	st = stats(inf);
	CU_ASSERT_EQUAL(st.watches, 3);
	CU_ASSERT_EQUAL(st.watch_ends, 2);
	CU_ASSERT_EQUAL(st.watch_ends_empty, 0);

	/* closed as soon as opened, nothing delivered (a proxy): not at once, after a backoff
	 * that grows while it goes on */
	snprintf(path, sizeof(path), "%s", watch_path("inf", "a", 304));
	w4 = scripted_expect_held("GET", path);
	scripted_close(w3);
	CU_ASSERT_FALSE(scripted_arrived(w4));
	st = stats(inf);
	CU_ASSERT_EQUAL(st.watch_ends_empty, 1);
	CU_ASSERT_TRUE(st.last_backoff_usec >= SEC / 2 && st.last_backoff_usec <= SEC);
	scripted_advance(SEC);
	CU_ASSERT_TRUE(scripted_arrived(w4));
	CU_ASSERT_EQUAL(stats(inf).watches, 4);
	snprintf(path, sizeof(path), "%s", watch_path("inf", "a", 304));
	w5 = scripted_expect_held("GET", path);
	scripted_close(w4);
	st = stats(inf);
	CU_ASSERT_EQUAL(st.watch_ends_empty, 2);
	CU_ASSERT_TRUE(st.last_backoff_usec >= SEC && st.last_backoff_usec <= 2 * SEC);
	scripted_advance(2 * SEC);
	CU_ASSERT_TRUE(scripted_arrived(w5));

	/* an event on the new watch: the next empty quick end backs off from the start again */
	scripted_send(w5, event_line("ADDED", "inf", "after-backoff", "even", 6, 305));
	CU_ASSERT_PTR_NOT_NULL(get(inf, "inf/after-backoff"));
	snprintf(path, sizeof(path), "%s", watch_path("inf", "a", 305));
	w6 = scripted_expect_held("GET", path);
	scripted_advance(2 * SEC);
	scripted_close(w5); /* after 2 s: a normal end, at once */
	CU_ASSERT_TRUE(scripted_arrived(w6));
	snprintf(path, sizeof(path), "%s", watch_path("inf", "a", 305));
	w7 = scripted_expect_held("GET", path);
	scripted_close(w6);
	st = stats(inf);
	CU_ASSERT_EQUAL(st.watch_ends_empty, 3);
	CU_ASSERT_TRUE(st.last_backoff_usec >= SEC / 2 && st.last_backoff_usec <= SEC);
	CU_ASSERT_EQUAL(st.relists_410, 0);
	CU_ASSERT_EQUAL(st.lists, 1);
	scripted_advance(SEC);
	CU_ASSERT_TRUE(scripted_arrived(w7));

	kube_informer_free(inf);
	scripted_run();
	CU_ASSERT_TRUE(scripted_aborted(w7));
	CU_ASSERT_EQUAL(destroyed_items, transformed);
	scripted_check_done();
}

/*
 * Changes while disconnected: the stream drops, the resume point was compacted away (410
 * Gone on the next watch), meanwhile x2 was deleted and x3 created: the relist notices both.
 */
static void
test_relist_after_410(void)
{
	struct seen s = {0};
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct scripted_exp *w1, *w3;
	struct list_body b = {0};
	char *body;

	expect_list(list_path("rl", "r"), "rl", "x", 2, 10);
	w1 = scripted_expect_held("GET", watch_path("rl", "r", 10));
	scripted_expect("GET", watch_path("rl", "r", 10), 410, gone_status);
	lb_item(&b, "rl", "x1", "a", 1, 1);
	lb_item(&b, "rl", "x3", "a", 3, 15);
	body = lb_end(&b, 20, NULL);
	scripted_expect("GET", list_path("rl", "r"), 200, body);
	free(body);
	w3 = scripted_expect_held("GET", watch_path("rl", "r", 20));

	inf = new_informer("rl", "r", 0, &s);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	scripted_run();
	CU_ASSERT_TRUE_FATAL(kube_informer_has_synced(inf));
	CU_ASSERT_EQUAL(s.adds, 2);

	scripted_advance(60 * SEC);
	scripted_close(w1);
	CU_ASSERT_TRUE(scripted_arrived(w3));
	st = stats(inf);
	CU_ASSERT_EQUAL(st.relists_410, 1);
	CU_ASSERT_EQUAL(st.lists, 2);
	CU_ASSERT_EQUAL(s.adds, 3);
	CU_ASSERT_EQUAL(s.deletes, 1);
	CU_ASSERT_STRING_EQUAL(s.last_key, "rl/x2");
	CU_ASSERT_PTR_NULL(get(inf, "rl/x2"));
	CU_ASSERT_PTR_NOT_NULL(get(inf, "rl/x3"));
	CU_ASSERT_EQUAL(kube_store_len(kube_informer_store(inf)), 2);
	kube_informer_free(inf);
	scripted_check_done();
}

/* An ERROR event (410 Expired) in the stream: one relist, which replaces nothing when nothing
 * changed, then the informer watches again from the list's resourceVersion. */
static void
test_forced_410(void)
{
	struct seen s = {0};
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct scripted_exp *w1, *w2;
	int before;

	expect_list(list_path("gone", "g"), "gone", "g", 1, 5);
	w1 = scripted_expect_held("GET", watch_path("gone", "g", 5));
	expect_list(list_path("gone", "g"), "gone", "g", 1, 90);
	w2 = scripted_expect_held("GET", watch_path("gone", "g", 90));

	transformed = 0;
	inf = new_informer("gone", "g", 0, &s);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	scripted_run();
	CU_ASSERT_TRUE_FATAL(kube_informer_has_synced(inf));
	before = transformed;

	scripted_send(w1, gone_event);
	CU_ASSERT_FALSE(scripted_aborted(w1)); /* ended by the client after the ERROR line */
	CU_ASSERT_TRUE(scripted_arrived(w2));
	st = stats(inf);
	CU_ASSERT_EQUAL(st.relists_410, 1);
	CU_ASSERT_EQUAL(st.lists, 2);
	CU_ASSERT_EQUAL(st.watches, 2);
	CU_ASSERT_TRUE(kube_informer_has_synced(inf));
	/* nothing changed for us: the relist transforms nothing, emits nothing */
	CU_ASSERT_EQUAL(transformed, before);
	CU_ASSERT_EQUAL(s.adds, 1);
	CU_ASSERT_EQUAL(s.updates, 0);

	/* and it keeps watching after the relist */
	scripted_send(w2, event_line("ADDED", "gone", "g2", "a", 2, 91));
	CU_ASSERT_EQUAL(s.adds, 2);
	kube_informer_free(inf);
	scripted_run();
	CU_ASSERT_TRUE(scripted_aborted(w2));
	scripted_check_done();
}

/*
 * The API server goes away (the stream reset, then connections refused) and comes back: the
 * informer watches again after growing backoffs from its last resourceVersion (no relist)
 * and the first event ends the failure run.
 */
static void
test_server_restart(void)
{
	struct seen s = {0};
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct scripted_exp *w1, *w4;
	uint64_t first;

	expect_list(list_path("rs", "rs"), "rs", "r", 1, 7);
	w1 = scripted_expect_held("GET", watch_path("rs", "rs", 7));
	scripted_expect_error("GET", watch_path("rs", "rs", 8), -ECONNREFUSED,
	    "Failed to connect to apiserver.test port 443: Connection refused");
	scripted_expect_error("GET", watch_path("rs", "rs", 8), -ECONNREFUSED,
	    "Failed to connect to apiserver.test port 443: Connection refused");
	w4 = scripted_expect_held("GET", watch_path("rs", "rs", 8));

	inf = new_informer("rs", "rs", 0, &s);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	scripted_run();
	scripted_send(w1, event_line("ADDED", "rs", "r0", "a", 0, 8));
	CU_ASSERT_EQUAL(s.adds, 2);

	scripted_advance(10 * SEC);
	scripted_error(w1, -ECONNRESET, "Connection reset by peer");
	st = stats(inf);
	CU_ASSERT_EQUAL(st.failures, 1);
	first = st.last_backoff_usec;
	CU_ASSERT_TRUE(first >= SEC / 2 && first <= SEC);
	scripted_advance(first);
	st = stats(inf);
	CU_ASSERT_EQUAL(st.failures, 2);
	CU_ASSERT_TRUE(st.last_backoff_usec >= SEC && st.last_backoff_usec <= 2 * SEC);
	CU_ASSERT_STRING_EQUAL(
	    st.last_error, "watch failed: Connection refused (https://apiserver.test)");
	scripted_advance(st.last_backoff_usec);
	CU_ASSERT_EQUAL(stats(inf).failures, 3);
	CU_ASSERT_FALSE(scripted_arrived(w4));
	scripted_advance(4 * SEC);
	CU_ASSERT_TRUE(scripted_arrived(w4));

	scripted_send(w4, event_line("ADDED", "rs", "r2", "a", 2, 9));
	scripted_send(w4, event_line("MODIFIED", "rs", "r1", "a", 10, 10));
	st = stats(inf);
	CU_ASSERT_EQUAL(st.watches, 4);
	CU_ASSERT_EQUAL(st.lists, 1);
	CU_ASSERT_EQUAL(st.errors, 3);
	CU_ASSERT_EQUAL(st.failures, 0);
	CU_ASSERT_EQUAL(s.adds, 3);
	CU_ASSERT_EQUAL(s.updates, 1);
	CU_ASSERT_EQUAL(get(inf, "rs/r1")->value, 10);
	CU_ASSERT_EQUAL(kube_store_len(kube_informer_store(inf)), 3);
	kube_informer_free(inf);
	scripted_check_done();
}

/* Bookmarks carry no object but move the resume point: the next watch starts from there. */
static void
test_bookmarks(void)
{
	struct seen s = {0};
	struct kube_informer *inf;
	struct scripted_exp *w1, *w2;

	expect_list(list_path("bm", "b"), "bm", "b", 1, 3);
	w1 = scripted_expect_held("GET", watch_path("bm", "b", 3));
	w2 = scripted_expect_held("GET", watch_path("bm", "b", 500));

	inf = new_informer("bm", "b", 0, &s);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	scripted_run();
	scripted_send(w1, bookmark_line(400));
	scripted_send(w1, bookmark_line(500));
	CU_ASSERT_STRING_EQUAL(stats(inf).last_resource_version, "500");
	CU_ASSERT_EQUAL(s.adds + s.updates + s.deletes, 1); /* the list's one add */
	scripted_advance(60 * SEC);
	scripted_close(w1);
	CU_ASSERT_TRUE(scripted_arrived(w2));
	CU_ASSERT_EQUAL(stats(inf).lists, 1);
	kube_informer_free(inf);
	scripted_check_done();
}

/* A list answered 429 then 500: each ends the list, which starts over from the first page
 * after a backoff; the third attempt syncs. */
static void
test_list_errors_retried(void)
{
	struct seen s = {0};
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct list_body b = {0};
	char *body;

	lb_item(&b, "le", "p1", "a", 1, 1);
	body = lb_end(&b, 9, "more");
	scripted_expect(
	    "GET", "/api/v1/namespaces/le/configmaps?labelSelector=grp%3Dl&limit=1", 200, body);
	free(body);
	scripted_expect("GET",
	    "/api/v1/namespaces/le/configmaps?labelSelector=grp%3Dl&limit=1&continue=more", 429,
	    "{\"kind\":\"Status\",\"code\":429,\"reason\":\"TooManyRequests\"}");
	scripted_expect("GET", "/api/v1/namespaces/le/configmaps?labelSelector=grp%3Dl&limit=1",
	    500, "{\"kind\":\"Status\",\"code\":500,\"reason\":\"InternalError\"}");
	b = (struct list_body){0};
	lb_item(&b, "le", "p1", "a", 1, 1);
	body = lb_end(&b, 9, NULL);
	scripted_expect(
	    "GET", "/api/v1/namespaces/le/configmaps?labelSelector=grp%3Dl&limit=1", 200, body);
	free(body);
	scripted_expect_held("GET", "/api/v1/namespaces/le/configmaps?watch=true*");

	inf = new_informer("le", "l", 1, &s);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	scripted_run();
	st = stats(inf);
	CU_ASSERT_FALSE(kube_informer_has_synced(inf));
	CU_ASSERT_EQUAL(st.errors, 1);
	CU_ASSERT_STRING_EQUAL(st.last_error, "list failed: HTTP 429 TooManyRequests");
	scripted_advance(SEC);
	st = stats(inf);
	CU_ASSERT_EQUAL(st.errors, 2);
	CU_ASSERT_STRING_EQUAL(st.last_error, "list failed: HTTP 500 InternalError");
	scripted_advance(2 * SEC);
	st = stats(inf);
	CU_ASSERT_TRUE(kube_informer_has_synced(inf));
	CU_ASSERT_EQUAL(st.lists, 1);
	CU_ASSERT_EQUAL(st.pages, 2);
	CU_ASSERT_EQUAL(st.failures, 0);
	CU_ASSERT_EQUAL(s.adds, 1); /* p1 listed twice, added once */
	kube_informer_free(inf);
	scripted_check_done();
}

/* Freed while a list page is in flight: the call is dropped, no callback runs after. */
static void
test_free_with_list_in_flight(void)
{
	struct seen s = {0};
	struct kube_informer *inf;
	struct scripted_exp *l;

	l = scripted_expect_held("GET", list_path("fl", "f"));
	inf = new_informer("fl", "f", 0, &s);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	scripted_run();
	CU_ASSERT_TRUE(scripted_arrived(l));
	kube_informer_free(inf);
	scripted_run();
	CU_ASSERT_TRUE(scripted_aborted(l));
	CU_ASSERT_EQUAL(s.adds, 0);
	scripted_check_done();
}

static int resync_same;

static void
on_update_resync(void *userdata, const char *key, const void *old, const void *item)
{
	if (old == item)
		resync_same++;
}

/* No writes at all: every resync period delivers each cached item as an update (old == new). */
static void
test_resync(void)
{
	struct seen s = {0};
	struct kube_informer_handlers h = {.on_update = on_update_resync};
	struct kube_informer *inf;
	char sel[] = "grp=sy";
	struct kube_informer_opts o = {
	    .res = &kube_res_configmaps,
	    .ns = "sy",
	    .label_selector = sel,
	    .watch_timeout_s = 3600,
	    .resync_usec = 30 * SEC,
	    .transform = cm_transform,
	    .destroy = cm_destroy,
	};

	expect_list(
	    "/api/v1/namespaces/sy/configmaps?labelSelector=grp%3Dsy&limit=500", "sy", "s", 2, 2);
	scripted_expect_held("GET", watch_path("sy", "sy", 2));
	CU_ASSERT_EQUAL_FATAL(kube_informer_new(scripted_client, &o, &inf), 0);
	h.userdata = &s;
	kube_informer_add_handlers(inf, &h);
	h = (struct kube_informer_handlers){
	    .on_add = on_add, .on_update = on_update, .userdata = &s};
	kube_informer_add_handlers(inf, &h);
	resync_same = 0;
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	scripted_run();
	CU_ASSERT_EQUAL(s.adds, 2);
	scripted_advance(29 * SEC);
	CU_ASSERT_EQUAL(resync_same, 0);
	scripted_advance(2 * SEC);
	CU_ASSERT_EQUAL(resync_same, 2);
	CU_ASSERT_EQUAL(s.updates, 2);
	scripted_advance(30 * SEC);
	CU_ASSERT_EQUAL(resync_same, 4);
	CU_ASSERT_EQUAL(s.adds, 2);
	kube_informer_free(inf);
	scripted_check_done();
}

/* --- 100 000 events through framer + informer: no growth ---------------------------------------
 */

static void
apply_framed(void *userdata, enum kube_watch_type type, const char *text, size_t len)
{
	kube_informer_apply_event_text(userdata, type, text, len);
}

static void
test_no_per_event_leak(void)
{
	struct seen s = {0};
	struct kube_informer *inf = new_informer("mem", "m", 0, &s);
	struct kube_watch_framer f;
	char line[512];
	size_t before = 0, after;
	int n = 100000;

	kube_watch_framer_init(&f, 0);
	for (int i = 0; i < n; i++) {
		/* 100 objects, each modified 1000 times, then a delete/re-add every 10th round */
		int obj = i % 100, round = i / 100;
		const char *type =
		    round == 0
			? "ADDED"
			: (round % 10 == 5 ? "DELETED" : (round % 10 == 6 ? "ADDED" : "MODIFIED"));

		snprintf(line, sizeof(line),
		    "{\"type\":\"%s\",\"object\":{\"metadata\":{\"name\":\"o%d\",\"namespace\":"
		    "\"mem\","
		    "\"resourceVersion\":\"%d\",\"labels\":{\"app\":\"a%d\"}},\"data\":{\"v\":\"%"
		    "d\"}}}\n",
		    type, obj, i + 1, round % 3, i);
		CU_ASSERT_EQUAL_FATAL(
		    kube_watch_framer_feed_raw(&f, line, strlen(line), apply_framed, inf), 0);
		if (i == 10000 - 1)
			before = mallinfo2().uordblks;
	}
	after = mallinfo2().uordblks;
	CU_ASSERT_EQUAL(kube_store_len(kube_informer_store(inf)), 100);
	CU_ASSERT_EQUAL(s.adds, 100 + 100 * 100);
	CU_ASSERT_EQUAL(s.deletes, 100 * 100);
	/* steady state: 90 000 more events must not grow the heap (allow 256 KiB of noise) */
	if (after > before + 256 * 1024)
		fprintf(stderr, "heap grew from %zu to %zu\n", before, after);
	CU_ASSERT_TRUE(after <= before + 256 * 1024);
	kube_watch_framer_release(&f);
	kube_informer_free(inf);
}

/* A typed codec that reads data.v from the object's text with lib/jscan.h (no jansson) and
 * keeps ten times the value: the handlers seeing it prove list items and watch objects went
 * through it; the count shows deletions and unchanged items at a relist are not decoded. */
struct codec_count {
	int decodes;
	size_t last_len;
	char last_tail;
};

static void *
cm_decode_times_ten(void *userdata, const char *text, size_t len)
{
	struct codec_count *d = userdata;
	struct jscan_span data, v;
	struct cm *c;
	char buf[32];

	d->decodes++;
	d->last_len = len;
	d->last_tail = len ? text[len - 1] : 0;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->value = -1;
	if (jscan_get(text, len, "data", &data) == 1 && jscan_type(data) == '{' &&
	    jscan_get(data.p, data.len, "v", &v) == 1 &&
	    jscan_string(v, buf, sizeof(buf), NULL) == 0)
		c->value = 10 * atoi(buf);
	return c;
}

static void
test_typed_codec(void)
{
	struct seen s = {0};
	struct codec_count d = {0};
	struct kube_codec codec = {
	    .decode = cm_decode_times_ten, .destroy = cm_destroy, .userdata = &d};
	struct kube_informer_opts o = {
	    .res = &kube_res_configmaps,
	    .ns = "dec",
	    .label_selector = "grp=dec",
	    .watch_timeout_s = 3600,
	    .codec = &codec,
	};
	struct kube_informer_handlers h = {
	    .on_add = on_add,
	    .on_update = on_update,
	    .on_delete = on_delete,
	    .userdata = &s,
	};
	struct kube_informer *inf = NULL;
	struct scripted_exp *w;
	struct list_body b = {0};
	char *body;

	lb_item(&b, "dec", "d1", "a", 4, 1);
	lb_item(&b, "dec", "d0", "a", 3, 1);
	body = lb_end(&b, 1, NULL);
	scripted_expect("GET", list_path("dec", "dec"), 200, body);
	free(body);
	w = scripted_expect_held("GET", watch_path("dec", "dec", 1));
	CU_ASSERT_EQUAL_FATAL(kube_informer_new(scripted_client, &o, &inf), 0);
	codec.userdata = NULL; /* copied by kube_informer_new */
	CU_ASSERT_EQUAL_FATAL(kube_informer_add_handlers(inf, &h), 0);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	scripted_run();
	CU_ASSERT_TRUE_FATAL(kube_informer_has_synced(inf));
	CU_ASSERT_EQUAL(d.decodes, 2);
	CU_ASSERT_EQUAL(d.last_tail, '}'); /* the object's span, not the rest of the page */
	CU_ASSERT_EQUAL(s.adds, 2);
	CU_ASSERT_EQUAL(s.last_value, 30);
	CU_ASSERT_STRING_EQUAL(s.last_key, "dec/d0");

	scripted_send(w, event_line("ADDED", "dec", "d2", "a", 5, 2));
	CU_ASSERT_EQUAL(s.adds, 3);
	CU_ASSERT_EQUAL(d.decodes, 3);
	CU_ASSERT_EQUAL(s.last_value, 50);
	CU_ASSERT_EQUAL(d.last_tail, '}');
	scripted_send(w, event_line("MODIFIED", "dec", "d2", "a", 6, 3));
	CU_ASSERT_EQUAL(s.updates, 1);
	CU_ASSERT_EQUAL(s.last_old_value, 50);
	CU_ASSERT_EQUAL(s.last_value, 60);
	/* a deletion needs only the key: no decode */
	scripted_send(w, event_line("DELETED", "dec", "d1", "a", 4, 4));
	CU_ASSERT_EQUAL(s.deletes, 1);
	CU_ASSERT_EQUAL(d.decodes, 4);
	CU_ASSERT_EQUAL(kube_store_len(kube_informer_store(inf)), 2);
	kube_informer_free(inf);
	scripted_check_done();
}

static void
test_codec_options(void)
{
	struct kube_codec codec = {.decode = cm_decode_times_ten, .destroy = cm_destroy};
	struct kube_informer_opts o = {.res = &kube_res_configmaps, .codec = &codec};
	struct kube_informer *inf = NULL;

	/* a codec and a transform at once, or a codec without destroy */
	o.transform = cm_transform;
	o.destroy = cm_destroy;
	CU_ASSERT_EQUAL(kube_informer_new(scripted_client, &o, &inf), -EINVAL);
	o.transform = NULL;
	o.destroy = NULL;
	codec.destroy = NULL;
	CU_ASSERT_EQUAL(kube_informer_new(scripted_client, &o, &inf), -EINVAL);
	codec.destroy = cm_destroy;
	CU_ASSERT_EQUAL(kube_informer_new(scripted_client, &o, &inf), 0);
	kube_informer_free(inf);
}

/* --- failures, stalls, start-up backoff ------------------------------------------------------ */

static struct kube_informer *
new_cm_informer(
    struct kube_client *c, const char *ns, struct seen *s, const struct kube_informer_opts *tune)
{
	struct kube_informer_opts o = *tune;
	struct kube_informer_handlers h = {
	    .on_add = on_add,
	    .on_update = on_update,
	    .on_delete = on_delete,
	    .userdata = s,
	};
	struct kube_informer *inf = NULL;

	o.res = &kube_res_configmaps;
	o.ns = ns;
	o.watch_timeout_s = tune->watch_timeout_s ? tune->watch_timeout_s : 3600;
	o.transform = cm_transform;
	o.destroy = cm_destroy;
	CU_ASSERT_EQUAL_FATAL(kube_informer_new(c, &o, &inf), 0);
	CU_ASSERT_EQUAL_FATAL(kube_informer_add_handlers(inf, &h), 0);
	return inf;
}

static size_t
count_lines_with(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/*
 * A server that refuses connections: each failure is counted and described (cause, URL,
 * count, since when) for /readyz, and logged at warn: the first one, then rate limited
 * (the 2nd, 4th, 8th, 16th: 20 failures well inside the backoff cap give five lines).
 */
static void
test_failures_described_and_logged(void)
{
	struct kube_informer_opts tune = {
	    .backoff_base_usec = 1 * SEC,
	    .backoff_unsynced_max_usec = 3 * SEC,
	    .backoff_max_usec = 600 * SEC, /* no time-based log line during the test */
	};
	struct kube_config dead = {.server = (char *)"https://127.0.0.1:1"};
	struct kube_client *c = NULL;
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct seen s = {0};
	char desc[512], logpath[] = "/tmp/test-kube-informer-log-XXXXXX", *log = NULL;
	int logfd, saved;
	size_t loglen, lines;

	CU_ASSERT_EQUAL_FATAL(kube_client_new(scripted_base, &dead, &c), 0);
	inf = new_cm_informer(c, "dead", &s, &tune);
	CU_ASSERT_FALSE(kube_informer_describe_failure(inf, desc, sizeof(desc)));
	CU_ASSERT_STRING_EQUAL(desc, "");
	for (int i = 0; i < 20; i++)
		scripted_expect_error("GET", "/api/v1/namespaces/dead/configmaps?limit=500",
		    -ECONNREFUSED, "Failed to connect to 127.0.0.1 port 1: Connection refused");

	logfd = mkstemp(logpath);
	CU_ASSERT_FATAL(logfd >= 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(logfd, STDERR_FILENO);
	CU_ASSERT_EQUAL(kube_informer_start(inf), 0);
	scripted_run();
	for (int i = 1; i < 20; i++) /* one retry each */
		scripted_advance(stats(inf).last_backoff_usec);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(logfd);

	st = stats(inf);
	CU_ASSERT_FALSE(kube_informer_has_synced(inf));
	CU_ASSERT_EQUAL(st.failures, 20);
	CU_ASSERT_EQUAL(st.errors, 20);
	CU_ASSERT_TRUE(st.failing_since > 0);
	CU_ASSERT_TRUE(st.last_backoff_usec <= 3 * SEC);
	CU_ASSERT_STRING_EQUAL(
	    st.last_error, "list failed: Connection refused (https://127.0.0.1:1)");
	CU_ASSERT_TRUE(kube_informer_describe_failure(inf, desc, sizeof(desc)));
	/* short enough for a /readyz reason, the count and time included */
	CU_ASSERT_PTR_NOT_NULL(strstr(desc,
	    "ConfigMap informer: list failed: Connection refused (https://127.0.0.1:1) - 20 "
	    "failures since "));
	CU_ASSERT_EQUAL(desc[strlen(desc) - 1], 'Z');
	CU_ASSERT_TRUE(strlen(desc) < 140);

	CU_ASSERT_EQUAL_FATAL(read_file(logpath, 1 << 20, &log, &loglen), 0);
	unlink(logpath);
	lines = count_lines_with(log, "ConfigMap informer: list failed: Connection refused");
	if (lines != 5)
		fprintf(stderr, "%zu failure lines for %llu failures:\n%s", lines,
		    (unsigned long long)st.failures, log);
	CU_ASSERT_EQUAL(lines, 5);		      /* 1, 2, 4, 8, 16: rate limited, not silent */
	CU_ASSERT_PTR_NOT_NULL(strstr(log, "warn ")); /* at warn, from the first one */
	CU_ASSERT_PTR_NOT_NULL(strstr(log, "failures since"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(log, "Failed to connect to 127.0.0.1 port 1")); /* the full text */
	free(log);
	kube_informer_free(inf);
	kube_client_free(c);
	scripted_check_done();
}

/*
 * The API server answers 503 twelve times, then recovers: with the start-up cap (5 s) each
 * retry comes within the cap instead of after a backoff that grew toward the 3000 s cap
 * (1 s doubled 11 times is 2048 s). Afterwards the failure run is over.
 */
static void
test_unsynced_backoff_cap(void)
{
	struct kube_informer_opts tune = {
	    .backoff_base_usec = 1 * SEC,
	    .backoff_unsynced_max_usec = 5 * SEC,
	    .backoff_max_usec = 3000 * SEC,
	};
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct seen s = {0};
	char desc[512];

	for (int i = 0; i < 12; i++)
		scripted_expect("GET", "/api/v1/namespaces/capped/configmaps?limit=500", 503,
		    "{\"kind\":\"Status\",\"code\":503,\"reason\":\"ServiceUnavailable\"}");
	expect_list("/api/v1/namespaces/capped/configmaps?limit=500", "capped", "c", 1, 1);
	scripted_expect_held("GET", "/api/v1/namespaces/capped/configmaps?watch=true*");
	inf = new_cm_informer(scripted_client, "capped", &s, &tune);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	scripted_run();
	for (int i = 0; i < 12; i++) {
		uint64_t d = stats(inf).last_backoff_usec;

		CU_ASSERT_TRUE(d <= 5 * SEC);
		scripted_advance(d); /* one retry each */
	}
	CU_ASSERT_TRUE(kube_informer_has_synced(inf));
	st = stats(inf);
	CU_ASSERT_EQUAL(st.errors, 12);
	CU_ASSERT_EQUAL(st.lists, 1);
	CU_ASSERT_TRUE(st.last_backoff_usec <= 5 * SEC);
	CU_ASSERT_TRUE(st.last_backoff_usec >= 5 * SEC / 2); /* it did reach the cap */
	CU_ASSERT_EQUAL(st.stalls, 0);
	CU_ASSERT_EQUAL(s.adds, 1);
	CU_ASSERT_EQUAL(st.failures, 0);
	CU_ASSERT_STRING_EQUAL(st.last_error, "");
	CU_ASSERT_FALSE(kube_informer_describe_failure(inf, desc, sizeof(desc)));
	kube_informer_free(inf);
	scripted_check_done();
}

/*
 * A kind that never changes: the API server sends no event and no bookmark on its watch (it
 * sends bookmarks only for kinds it has seen change), so the stream is silent until the
 * server ends it at its timeoutSeconds. Silent for 149 s of its 150 s (past the 120 s no-byte
 * timer of earlier releases) the watch is left alone; ended by the server, the informer
 * watches again at once from the same resourceVersion (the next request scripted is that
 * watch: a list would fail the test), logs it at debug and warns of nothing; the new watch
 * still delivers events.
 */
static void
test_quiet_watch(void)
{
	struct kube_informer_opts tune = {.watch_timeout_s = 150};
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct seen s = {0};
	struct scripted_exp *w1, *w2;
	enum log_level level = log_get_level();
	char *log;

	expect_list("/api/v1/namespaces/quiet/configmaps?limit=500", "quiet", "q", 1, 1);
	w1 = scripted_expect_held("GET",
	    "/api/v1/namespaces/quiet/configmaps?watch=true&"
	    "resourceVersion=1&allowWatchBookmarks=true&timeoutSeconds=150");
	w2 = scripted_expect_held("GET",
	    "/api/v1/namespaces/quiet/configmaps?watch=true&"
	    "resourceVersion=1&allowWatchBookmarks=true&timeoutSeconds=150");
	inf = new_cm_informer(scripted_client, "quiet", &s, &tune);
	CU_ASSERT_EQUAL_FATAL(test_capture_stderr(), 0);
	log_set_level(LOG_LEVEL_DEBUG);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	scripted_run();
	CU_ASSERT_TRUE(scripted_arrived(w1));
	scripted_advance(149 * SEC); /* past the 120 s no-byte timer of earlier releases */
	CU_ASSERT_FALSE(scripted_aborted(w1));
	CU_ASSERT_FALSE(scripted_arrived(w2));
	scripted_advance(1 * SEC);
	scripted_close(w1); /* the server's timeoutSeconds */
	CU_ASSERT_TRUE(scripted_arrived(w2));
	scripted_advance(149 * SEC);
	CU_ASSERT_FALSE(scripted_aborted(w2));
	scripted_send(w2, event_line("ADDED", "quiet", "q2", "a", 2, 2));
	log_set_level(level);
	log = test_captured_stderr(NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(log);
	CU_ASSERT_STRING_EQUAL(s.last_key, "quiet/q2");
	st = stats(inf);
	CU_ASSERT_EQUAL(st.lists, 1);
	CU_ASSERT_EQUAL(st.watches, 2);
	CU_ASSERT_EQUAL(st.watch_ends, 1);
	CU_ASSERT_EQUAL(st.stalls, 0);
	CU_ASSERT_EQUAL(st.errors, 0);
	CU_ASSERT_EQUAL(st.failures, 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(log, "ConfigMap informer: watch ended by the server after "
					   "150 s; watching again from resourceVersion 1"));
	CU_ASSERT_PTR_NULL(strstr(log, "warn"));
	CU_ASSERT_PTR_NULL(strstr(log, "stalled"));
	free(log);
	kube_informer_free(inf);
	scripted_check_done();
}

/*
 * The server keeps the watch open past its timeoutSeconds (a proxy holding a stream the server
 * no longer serves, a server stuck mid-line): at the watch's deadline the informer drops it,
 * warns, and watches again at once from its last resourceVersion (no relist), and gets what
 * it missed. Bytes on the stream do not put the deadline off.
 */
static void
test_stalled_watch(void)
{
	struct kube_informer_opts tune = {
	    .backoff_base_usec = 1 * SEC,
	    .backoff_max_usec = 10 * SEC,
	    .watch_timeout_s = 150,
	};
	uint64_t deadline = (uint64_t)kube_watch_deadline_ms(150, 10000) * 1000;
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct seen s = {0};
	struct scripted_exp *w1, *w2;
	char *log;

	CU_ASSERT_EQUAL(deadline, 175 * SEC);
	kube_client_set_timeouts(scripted_client, 30000, 10000);
	expect_list("/api/v1/namespaces/stall/configmaps?limit=500", "stall", "s", 1, 1);
	w1 = scripted_expect_held("GET",
	    "/api/v1/namespaces/stall/configmaps?watch=true&"
	    "resourceVersion=1&allowWatchBookmarks=true&timeoutSeconds=150");
	w2 = scripted_expect_held("GET",
	    "/api/v1/namespaces/stall/configmaps?watch=true&"
	    "resourceVersion=2&allowWatchBookmarks=true&timeoutSeconds=150");
	inf = new_cm_informer(scripted_client, "stall", &s, &tune);
	CU_ASSERT_EQUAL_FATAL(test_capture_stderr(), 0);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	scripted_run();
	scripted_advance(100 * SEC);
	scripted_send(w1, event_line("ADDED", "stall", "s2", "a", 2, 2));
	scripted_advance(deadline - 100 * SEC - 1);
	CU_ASSERT_FALSE(scripted_arrived(w2));
	scripted_advance(1);
	log = test_captured_stderr(NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(log);
	CU_ASSERT_TRUE(scripted_aborted(w1));
	CU_ASSERT_TRUE(scripted_arrived(w2));
	st = stats(inf);
	CU_ASSERT_EQUAL(st.stalls, 1);
	CU_ASSERT_EQUAL(st.watch_ends, 0);
	CU_ASSERT_EQUAL(st.failures, 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(log, "warn"));
	CU_ASSERT_PTR_NOT_NULL(strstr(log, "its timeoutSeconds is 150, last byte 75 s ago "
					   "(stalled stream)"));
	free(log);

	scripted_send(w2, event_line("ADDED", "stall", "s3", "a", 3, 3));
	CU_ASSERT_STRING_EQUAL(s.last_key, "stall/s3");
	st = stats(inf);
	CU_ASSERT_EQUAL(st.stalls, 1);
	CU_ASSERT_EQUAL(st.lists, 1); /* watched again from the last resourceVersion */
	CU_ASSERT_EQUAL(st.relists_410, 0);
	CU_ASSERT_EQUAL(st.failures, 0); /* the event on the new watch ended the failure run */
	kube_informer_free(inf);
	scripted_check_done();
}

/*
 * After a clean end the next watch may be refused with 410 (its resourceVersion compacted
 * away meanwhile): that, and only that, lists again.
 */
static void
test_quiet_watch_then_gone(void)
{
	struct kube_informer_opts tune = {.watch_timeout_s = 150};
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct seen s = {0};
	struct scripted_exp *w1, *w2;

	expect_list("/api/v1/namespaces/qg/configmaps?limit=500", "qg", "q", 1, 1);
	w1 = scripted_expect_held("GET",
	    "/api/v1/namespaces/qg/configmaps?watch=true&"
	    "resourceVersion=1&allowWatchBookmarks=true&timeoutSeconds=150");
	w2 = scripted_expect_held("GET",
	    "/api/v1/namespaces/qg/configmaps?watch=true&"
	    "resourceVersion=1&allowWatchBookmarks=true&timeoutSeconds=150");
	expect_list("/api/v1/namespaces/qg/configmaps?limit=500", "qg", "q", 2, 9);
	scripted_expect_held("GET",
	    "/api/v1/namespaces/qg/configmaps?watch=true&"
	    "resourceVersion=9&allowWatchBookmarks=true&timeoutSeconds=150");
	inf = new_cm_informer(scripted_client, "qg", &s, &tune);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	scripted_run();
	scripted_advance(150 * SEC);
	scripted_close(w1);
	CU_ASSERT_TRUE(scripted_arrived(w2));
	scripted_send(w2, gone_event);
	st = stats(inf);
	CU_ASSERT_EQUAL(st.watch_ends, 1);
	CU_ASSERT_EQUAL(st.relists_410, 1);
	CU_ASSERT_EQUAL(st.lists, 2);
	CU_ASSERT_EQUAL(st.stalls, 0);
	CU_ASSERT_EQUAL(s.adds, 2);
	kube_informer_free(inf);
	scripted_check_done();
}

static const struct test_case informer_tests[] = {
    {"paginated sync and watch events", test_sync_and_events},
    {"changes while disconnected", test_relist_after_410},
    {"relist after 410 Gone", test_forced_410},
    {"reconnect after API server restart", test_server_restart},
    {"bookmarks move the resume point", test_bookmarks},
    {"list errors restart the list after a backoff", test_list_errors_retried},
    {"freed with a list page in flight", test_free_with_list_in_flight},
    {"periodic resync", test_resync},
    {"no per-event leak over 100000 events", test_no_per_event_leak},
    {"a typed codec decodes each object's text", test_typed_codec},
    {"codec options checked", test_codec_options},
    {"failures are described and logged, rate limited", test_failures_described_and_logged},
    {"start-up backoff capped until the first list", test_unsynced_backoff_cap},
    {"a quiet watch lives until the server ends it, then resumes without a list", test_quiet_watch},
    {"a watch not ended by its deadline is replaced", test_stalled_watch},
    {"after a clean end, 410 Gone still lists again", test_quiet_watch_then_gone},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "kube-informer",
	.init = scripted_suite_init,
	.cleanup = scripted_suite_cleanup,
	.tests = informer_tests},
    {.name = NULL},
};
