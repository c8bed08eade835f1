/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Informer against the in-memory API server: paginated initial sync, watch events into a
 * typed store, reconnect after a dropped stream and after a server restart, relist after
 * 410, and no per-event memory growth over 100 000 events. Failures are logged (rate
 * limited) and described for /readyz; a stalled watch is replaced; the backoff before the
 * first list is capped low.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "lib/util.h"
#include "tests/helpers/apiserver.h"
#include "tests/runner.h"

static struct test_apiserver *srv;
static struct event_base *base;
static struct kube_config *cfg;
static struct kube_client *client;

static int
suite_init(void)
{
	char err[512];

	/* no periodic bookmarks: the relist test needs the informer's resourceVersion to lag */
	if (test_apiserver_start(&srv, "--bookmark-interval 3600") < 0)
		return -1;
	base = event_base_new();
	if (kube_config_from_kubeconfig(test_apiserver_kubeconfig(srv), NULL, &cfg, err,
		sizeof(err)) < 0)
		return -1;
	return kube_client_new(base, cfg, &client);
}

static int
suite_cleanup(void)
{
	kube_client_free(client);
	kube_config_free(cfg);
	event_base_free(base);
	test_apiserver_stop(srv);
	return 0;
}

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

/* --- helpers --------------------------------------------------------------------------------- */

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
}

/* Runs the loop until cond(arg) or ms pass. */
static bool
wait_for(bool (*cond)(void *), void *arg, long ms)
{
	struct timeval tv = { 0, 20000 };
	struct event *t = event_new(base, -1, EV_PERSIST, tick_cb, NULL);
	long loops = ms / 20 + 1;
	bool ok;

	evtimer_add(t, &tv);
	while (!(ok = cond(arg)) && loops-- > 0)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(t);
	return ok;
}

static void
api(const char *method, const char *path, const char *body, long want)
{
	long code = 0;

	CU_ASSERT_EQUAL(test_apiserver_request(srv, method, path,
			    method[0] == 'P' && method[1] == 'A' ? "application/merge-patch+json"
								 : NULL,
			    body, &code, NULL),
	    0);
	if (code != want)
		fprintf(stderr, "%s %s: %ld (want %ld)\n", method, path, code, want);
	CU_ASSERT_EQUAL(code, want);
}

static void
create_cm(const char *ns, const char *name, const char *grp, const char *app, int v)
{
	char path[256], body[512];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps", ns);
	snprintf(body, sizeof(body),
	    "{\"metadata\":{\"name\":\"%s\",\"labels\":{\"grp\":\"%s\",\"app\":\"%s\"}},"
	    "\"data\":{\"v\":\"%d\"}}",
	    name, grp, app, v);
	api("POST", path, body, 201);
}

static void
patch_cm(const char *ns, const char *name, int v)
{
	char path[256], body[128];

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/configmaps/%s", ns, name);
	snprintf(body, sizeof(body), "{\"data\":{\"v\":\"%d\"}}", v);
	api("PATCH", path, body, 200);
}

struct inf_wait {
	struct kube_informer *inf;
	struct seen *s;
	int adds, updates, deletes;
	uint64_t watches, relists, lists;
};

static bool
synced(void *arg)
{
	return kube_informer_has_synced(arg);
}

static bool
counts_reached(void *arg)
{
	struct inf_wait *w = arg;
	struct kube_informer_stats st;

	kube_informer_get_stats(w->inf, &st);
	return w->s->adds >= w->adds && w->s->updates >= w->updates &&
	    w->s->deletes >= w->deletes && st.watches >= w->watches &&
	    st.relists_410 >= w->relists && st.lists >= w->lists;
}

static struct kube_informer *
new_informer(const char *ns, const char *grp_selector, unsigned page, struct seen *s)
{
	char sel[64];
	struct kube_informer_opts o = {
		.res = &kube_res_configmaps,
		.ns = ns,
		.label_selector = sel,
		.page_size = page,
		.backoff_base_usec = 50000,
		.backoff_max_usec = 500000,
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
	CU_ASSERT_EQUAL_FATAL(kube_informer_new(client, &o, &inf), 0);
	CU_ASSERT_EQUAL(kube_informer_add_index(inf, "app", by_app), 0);
	CU_ASSERT_EQUAL(kube_informer_add_handlers(inf, &h), 0);
	return inf;
}

/* --- tests -------------------------------------------------------------------------------------- */

static void
test_sync_and_events(void)
{
	struct seen s = { 0 };
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct kube_store *store;
	struct inf_wait w;
	char name[32];
	const struct cm *c;

	for (int i = 0; i < 250; i++) {
		snprintf(name, sizeof(name), "cm-%03d", i);
		create_cm("inf", name, "a", i % 2 ? "odd" : "even", i);
	}
	create_cm("inf", "not-mine", "b", "odd", 1); /* filtered out by the label selector */

	transformed = destroyed_items = 0;
	inf = new_informer("inf", "a", 40, &s);
	CU_ASSERT_FALSE(kube_informer_has_synced(inf));
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	CU_ASSERT_EQUAL(kube_informer_start(inf), -EALREADY);
	CU_ASSERT_EQUAL_FATAL(kube_informers_wait_synced(&inf, 1, 20000), 0);
	store = kube_informer_store(inf);
	CU_ASSERT_EQUAL(kube_store_len(store), 250);
	CU_ASSERT_EQUAL(s.adds, 250);
	CU_ASSERT_EQUAL(transformed, 250);
	kube_informer_get_stats(inf, &st);
	CU_ASSERT_EQUAL(st.pages, 7); /* 250 / 40 */
	CU_ASSERT_EQUAL(st.lists, 1);
	CU_ASSERT_EQUAL(kube_store_index_count(store, "app", "odd"), 125);
	c = kube_store_get(store, "inf/cm-007");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->value, 7);
	CU_ASSERT_PTR_NULL(kube_store_get(store, "inf/not-mine"));

	/* watch: add, update (old and new items), delete */
	w = (struct inf_wait){ .inf = inf, .s = &s, .adds = 251, .watches = 1 };
	create_cm("inf", "late", "a", "odd", 1000);
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 20000));
	CU_ASSERT_STRING_EQUAL(s.last_key, "inf/late");
	CU_ASSERT_EQUAL(s.last_value, 1000);

	w.updates = 1;
	patch_cm("inf", "cm-007", 77);
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 20000));
	CU_ASSERT_STRING_EQUAL(s.last_key, "inf/cm-007");
	CU_ASSERT_EQUAL(s.last_old_value, 7);
	CU_ASSERT_EQUAL(s.last_value, 77);
	CU_ASSERT_EQUAL(((const struct cm *)kube_store_get(store, "inf/cm-007"))->value, 77);

	w.deletes = 1;
	api("DELETE", "/api/v1/namespaces/inf/configmaps/cm-008", NULL, 200);
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 20000));
	CU_ASSERT_STRING_EQUAL(s.last_key, "inf/cm-008");
	CU_ASSERT_EQUAL(s.last_value, 8); /* the last known state */
	CU_ASSERT_PTR_NULL(kube_store_get(store, "inf/cm-008"));
	CU_ASSERT_EQUAL(kube_store_index_count(store, "app", "even"), 124);

	/* a dropped stream: reconnect from the last resourceVersion, no relist, no loss */
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "close-watches"), 0);
	w.watches = 2;
	w.adds = 252;
	create_cm("inf", "after-drop", "a", "even", 5);
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 20000));
	kube_informer_get_stats(inf, &st);
	CU_ASSERT_EQUAL(st.lists, 1);
	CU_ASSERT_EQUAL(st.relists_410, 0);
	CU_ASSERT_PTR_NOT_NULL(kube_store_get(store, "inf/after-drop"));
	CU_ASSERT_EQUAL(kube_store_len(store), 251);

	kube_informer_free(inf);
	CU_ASSERT_EQUAL(destroyed_items, transformed);
}

static void
test_relist_after_410(void)
{
	struct seen s = { 0 };
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct inf_wait w;

	create_cm("rl", "x1", "r", "a", 1);
	create_cm("rl", "x2", "r", "a", 2);
	inf = new_informer("rl", "r", 0, &s);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	CU_ASSERT_TRUE_FATAL(wait_for(synced, inf, 20000));
	w = (struct inf_wait){ .inf = inf, .s = &s, .adds = 2, .watches = 1 };
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 20000));

	/*
	 * Objects the informer does not watch move the resourceVersion on; then history is
	 * compacted and the stream dropped: resuming from the old resourceVersion is 410 Gone.
	 * Meanwhile x2 was deleted and x3 created: the relist must notice both.
	 */
	create_cm("rl", "other", "zz", "a", 1);
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "close-watches"), 0);
	api("DELETE", "/api/v1/namespaces/rl/configmaps/x2", NULL, 200);
	create_cm("rl", "x3", "r", "a", 3);
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "compact"), 0);

	w.adds = 3;
	w.deletes = 1;
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 20000));
	kube_informer_get_stats(inf, &st);
	/* The stream may have delivered the changes before it closed; either way the store
	 * ends up right. A 410 relist happens when the resume point was compacted away. */
	CU_ASSERT_PTR_NULL(kube_store_get(kube_informer_store(inf), "rl/x2"));
	CU_ASSERT_PTR_NOT_NULL(kube_store_get(kube_informer_store(inf), "rl/x3"));
	CU_ASSERT_EQUAL(kube_store_len(kube_informer_store(inf)), 2);
	kube_informer_free(inf);
}

static void
test_forced_410(void)
{
	struct seen s = { 0 };
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct inf_wait w;

	create_cm("gone", "g1", "g", "a", 1);
	inf = new_informer("gone", "g", 0, &s);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	CU_ASSERT_TRUE_FATAL(wait_for(synced, inf, 20000));
	w = (struct inf_wait){ .inf = inf, .s = &s, .adds = 1, .watches = 1 };
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 20000));

	/* The informer's resourceVersion lags (it sees nothing of the "other" objects), so
	 * after compaction its resume point is gone. */
	create_cm("gone", "o1", "other", "a", 1);
	create_cm("gone", "o2", "other", "a", 1);
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "compact"), 0);
	CU_ASSERT_EQUAL(test_apiserver_fault(srv, "close-watches"), 0);
	/* the 410 may end the first watch or the one opened after close-watches: either way
	 * one relist follows, and the informer watches again after it */
	w.relists = 1;
	w.lists = 2;
	w.watches = 2;
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 20000));
	kube_informer_get_stats(inf, &st);
	CU_ASSERT_EQUAL(st.relists_410, 1);
	CU_ASSERT_EQUAL(st.lists, 2);
	CU_ASSERT_TRUE(kube_informer_has_synced(inf));
	/* nothing changed for us: the relist replaces nothing and emits nothing */
	CU_ASSERT_EQUAL(s.adds, 1);
	CU_ASSERT_EQUAL(s.updates, 0);

	/* and it keeps watching after the relist */
	w.adds = 2;
	create_cm("gone", "g2", "g", "a", 2);
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 20000));
	kube_informer_free(inf);
}

static void
test_server_restart(void)
{
	struct seen s = { 0 };
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct inf_wait w;

	create_cm("rs", "r1", "rs", "a", 1);
	inf = new_informer("rs", "rs", 0, &s);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	CU_ASSERT_TRUE_FATAL(wait_for(synced, inf, 20000));
	/* an event through the stream proves it is established before the restart */
	create_cm("rs", "r0", "rs", "a", 0);
	w = (struct inf_wait){ .inf = inf, .s = &s, .adds = 2, .watches = 1 };
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 20000));

	CU_ASSERT_EQUAL_FATAL(test_apiserver_restart(srv), 0);
	/* after the restart the informer reconnects by itself (backoff) and sees new objects */
	create_cm("rs", "r2", "rs", "a", 2);
	patch_cm("rs", "r1", 10);
	w.adds = 3;
	w.updates = 1;
	w.watches = 2;
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 30000));
	kube_informer_get_stats(inf, &st);
	CU_ASSERT_TRUE(st.watches >= 2);
	CU_ASSERT_EQUAL(((const struct cm *)kube_store_get(kube_informer_store(inf), "rs/r1"))->value,
	    10);
	CU_ASSERT_EQUAL(kube_store_len(kube_informer_store(inf)), 3);
	kube_informer_free(inf);
}

static int resync_same;

static void
on_update_resync(void *userdata, const char *key, const void *old, const void *item)
{
	if (old == item)
		resync_same++;
}

static void
test_resync(void)
{
	struct seen s = { 0 };
	struct kube_informer_handlers h = { .on_update = on_update_resync };
	struct kube_informer *inf;
	struct inf_wait w;
	char sel[] = "grp=sy";
	struct kube_informer_opts o = {
		.res = &kube_res_configmaps,
		.ns = "sy",
		.label_selector = sel,
		.resync_usec = 200 * 1000,
		.transform = cm_transform,
		.destroy = cm_destroy,
	};

	create_cm("sy", "s1", "sy", "a", 1);
	create_cm("sy", "s2", "sy", "a", 2);
	CU_ASSERT_EQUAL_FATAL(kube_informer_new(client, &o, &inf), 0);
	h.userdata = &s;
	kube_informer_add_handlers(inf, &h);
	h = (struct kube_informer_handlers){ .on_add = on_add, .on_update = on_update,
		.userdata = &s };
	kube_informer_add_handlers(inf, &h);
	resync_same = 0;
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	/* no writes at all: periodic resync delivers every cached item as an update */
	w = (struct inf_wait){ .inf = inf, .s = &s, .adds = 2, .updates = 4 };
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 20000));
	CU_ASSERT_TRUE(resync_same >= 4);
	CU_ASSERT_EQUAL(s.adds, 2);
	kube_informer_free(inf);
}

/* --- 100 000 events through framer + informer: no growth --------------------------------------- */

static void
apply_framed(void *userdata, enum kube_watch_type type, json_t *obj)
{
	kube_informer_apply_event(userdata, type, obj);
}

static void
test_no_per_event_leak(void)
{
	struct seen s = { 0 };
	struct kube_informer *inf = new_informer("mem", "m", 0, &s);
	struct kube_watch_framer f;
	char line[512];
	size_t before = 0, after;
	int n = 100000;

	kube_watch_framer_init(&f, 0);
	for (int i = 0; i < n; i++) {
		/* 100 objects, each modified 1000 times, then a delete/re-add every 10th round */
		int obj = i % 100, round = i / 100;
		const char *type = round == 0 ? "ADDED" : (round % 10 == 5 ? "DELETED"
				      : (round % 10 == 6 ? "ADDED" : "MODIFIED"));

		snprintf(line, sizeof(line),
		    "{\"type\":\"%s\",\"object\":{\"metadata\":{\"name\":\"o%d\",\"namespace\":\"mem\","
		    "\"resourceVersion\":\"%d\",\"labels\":{\"app\":\"a%d\"}},\"data\":{\"v\":\"%d\"}}}\n",
		    type, obj, i + 1, round % 3, i);
		CU_ASSERT_EQUAL_FATAL(kube_watch_framer_feed(&f, line, strlen(line), apply_framed,
					  inf),
		    0);
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

/* A decoder that parses like json_loadb, then appends "0" to each ConfigMap's data.v: the
 * transform seeing ten times the value proves list pages and watch lines went through it. */
struct dec_count {
	int lists, lines;
};

static void
times_ten(json_t *cm)
{
	json_t *data = json_object_get(cm, "data");
	const char *v = json_string_value(json_object_get(data, "v"));
	char buf[32];

	if (v) {
		snprintf(buf, sizeof(buf), "%s0", v);
		json_object_set_new(data, "v", json_string(buf));
	}
}

static json_t *
decode_times_ten(void *userdata, const char *text, size_t len)
{
	struct dec_count *d = userdata;
	json_t *root = json_loadb(text, len, JSON_DECODE_ANY, NULL), *items, *v;
	size_t i;

	items = json_object_get(root, "items");
	if (json_is_array(items)) {
		d->lists++;
		json_array_foreach(items, i, v)
			times_ten(v);
	} else if (json_is_object(json_object_get(root, "object"))) {
		d->lines++;
		times_ten(json_object_get(root, "object"));
	}
	return root;
}

static void
test_custom_decoder(void)
{
	struct seen s = { 0 };
	struct dec_count d = { 0 };
	struct kube_informer_opts o = {
		.res = &kube_res_configmaps,
		.ns = "dec",
		.label_selector = "grp=dec",
		.backoff_base_usec = 50000,
		.backoff_max_usec = 500000,
		.transform = cm_transform,
		.destroy = cm_destroy,
		.decode = decode_times_ten,
		.decode_userdata = &d,
	};
	struct kube_informer_handlers h = {
		.on_add = on_add,
		.on_update = on_update,
		.on_delete = on_delete,
		.userdata = &s,
	};
	struct kube_informer *inf = NULL;
	struct inf_wait w;

	create_cm("dec", "d1", "dec", "a", 4);
	CU_ASSERT_EQUAL_FATAL(kube_informer_new(client, &o, &inf), 0);
	CU_ASSERT_EQUAL_FATAL(kube_informer_add_handlers(inf, &h), 0);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	CU_ASSERT_TRUE_FATAL(wait_for(synced, inf, 20000));
	CU_ASSERT_TRUE(d.lists >= 1);
	CU_ASSERT_EQUAL(s.adds, 1);
	CU_ASSERT_EQUAL(s.last_value, 40);
	w = (struct inf_wait){ .inf = inf, .s = &s, .adds = 1, .watches = 1 };
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 20000));

	create_cm("dec", "d2", "dec", "a", 5);
	w.adds = 2;
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 20000));
	CU_ASSERT_TRUE(d.lines >= 1);
	CU_ASSERT_EQUAL(s.last_value, 50);
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
	o.transform = cm_transform;
	o.destroy = cm_destroy;
	CU_ASSERT_EQUAL_FATAL(kube_informer_new(c, &o, &inf), 0);
	CU_ASSERT_EQUAL_FATAL(kube_informer_add_handlers(inf, &h), 0);
	return inf;
}

struct fail_wait {
	struct kube_informer *inf;
	uint64_t failures;
};

static bool
failures_reached(void *arg)
{
	struct fail_wait *fw = arg;
	struct kube_informer_stats st;

	kube_informer_get_stats(fw->inf, &st);
	return st.failures >= fw->failures;
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
 * (the 2nd, 4th, 8th, 16th ... here, all well inside the backoff cap).
 */
static void
test_failures_described_and_logged(void)
{
	struct kube_informer_opts tune = {
	    .backoff_base_usec = 1000,
	    .backoff_unsynced_max_usec = 3000,
	    .backoff_max_usec = 600 * 1000000ull, /* no time-based log line during the test */
	};
	struct kube_config *dead = NULL;
	struct kube_client *c = NULL;
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct seen s = {0};
	struct fail_wait fw;
	char err[512], desc[512], logpath[] = "/tmp/test-kube-informer-log-XXXXXX", *log = NULL;
	int logfd, saved;
	size_t loglen, lines;

	CU_ASSERT_EQUAL_FATAL(kube_config_from_kubeconfig(
				  test_apiserver_kubeconfig(srv), NULL, &dead, err, sizeof(err)),
	    0);
	free(dead->server);
	dead->server = strdup("https://127.0.0.1:1"); /* nothing listens there */
	CU_ASSERT_EQUAL_FATAL(kube_client_new(base, dead, &c), 0);
	inf = new_cm_informer(c, "dead", &s, &tune);
	CU_ASSERT_FALSE(kube_informer_describe_failure(inf, desc, sizeof(desc)));
	CU_ASSERT_STRING_EQUAL(desc, "");

	logfd = mkstemp(logpath);
	CU_ASSERT_FATAL(logfd >= 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(logfd, STDERR_FILENO);
	CU_ASSERT_EQUAL(kube_informer_start(inf), 0);
	fw = (struct fail_wait){.inf = inf, .failures = 20};
	CU_ASSERT_TRUE(wait_for(failures_reached, &fw, 20000));
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(logfd);

	kube_informer_get_stats(inf, &st);
	CU_ASSERT_FALSE(kube_informer_has_synced(inf));
	CU_ASSERT_TRUE(st.failures >= 20);
	CU_ASSERT_TRUE(st.errors >= st.failures);
	CU_ASSERT_TRUE(st.failing_since > 0);
	CU_ASSERT_STRING_EQUAL(
	    st.last_error, "list failed: Connection refused (https://127.0.0.1:1)");
	CU_ASSERT_TRUE(kube_informer_describe_failure(inf, desc, sizeof(desc)));
	/* short enough for a /readyz reason, the count and time included */
	CU_ASSERT_PTR_NOT_NULL(strstr(
	    desc, "ConfigMap informer: list failed: Connection refused (https://127.0.0.1:1) - "));
	CU_ASSERT_PTR_NOT_NULL(strstr(desc, " failures since "));
	CU_ASSERT_EQUAL(desc[strlen(desc) - 1], 'Z');
	CU_ASSERT_TRUE(strlen(desc) < 140);

	CU_ASSERT_EQUAL_FATAL(read_file(logpath, 1 << 20, &log, &loglen), 0);
	unlink(logpath);
	lines = count_lines_with(log, "ConfigMap informer: list failed: Connection refused");
	if (lines < 1 || lines > 7)
		fprintf(stderr, "%zu failure lines for %llu failures:\n%s", lines,
		    (unsigned long long)st.failures, log);
	CU_ASSERT_TRUE(lines >= 1);		      /* not silent */
	CU_ASSERT_TRUE(lines <= 7);		      /* 1, 2, 4, 8, 16, 32, 64: rate limited */
	CU_ASSERT_PTR_NOT_NULL(strstr(log, "warn ")); /* at warn, from the first one */
	CU_ASSERT_PTR_NOT_NULL(strstr(log, "failures since"));
	free(log);
	kube_informer_free(inf);
	kube_client_free(c);
	kube_config_free(dead);
}

/*
 * The API server answers 503 twelve times, then recovers: with the start-up cap, the first
 * successful list follows within a cap of the recovery instead of after a backoff that grew
 * toward the 30 s cap (10 ms doubled 11 times is 20 s): the last backoff stays at the cap. Afterwards the failure run is over.
 */
static void
test_unsynced_backoff_cap(void)
{
	struct kube_informer_opts tune = {
	    .backoff_base_usec = 10000,
	    .backoff_unsynced_max_usec = 50000,
	    .backoff_max_usec = 30 * 1000000ull,
	};
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct seen s = {0};
	char desc[512];

	create_cm("capped", "c1", "c", "a", 1);
	inf = new_cm_informer(client, "capped", &s, &tune);
	CU_ASSERT_EQUAL_FATAL(test_apiserver_fault(srv, "fail?code=503&count=12"), 0);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	/* a generous bound (no cap would still sync, after about 41 s): what is asserted is the
	 * backoff the informer chose, not how long it took */
	CU_ASSERT_TRUE(wait_for(synced, inf, 120000));
	kube_informer_get_stats(inf, &st);
	CU_ASSERT_EQUAL(st.errors, 12);
	CU_ASSERT_EQUAL(st.lists, 1);
	CU_ASSERT_TRUE(st.last_backoff_usec <= 50000);
	CU_ASSERT_TRUE(st.stalls == 0);
	CU_ASSERT_EQUAL(s.adds, 1);
	CU_ASSERT_EQUAL(st.failures, 0);
	CU_ASSERT_STRING_EQUAL(st.last_error, "");
	CU_ASSERT_FALSE(kube_informer_describe_failure(inf, desc, sizeof(desc)));
	kube_informer_free(inf);
	test_apiserver_fault(srv, "fail?count=0");
}

static bool
stalled_once(void *arg)
{
	struct kube_informer_stats st;

	kube_informer_get_stats(arg, &st);
	return st.stalls >= 1;
}

/*
 * The server keeps the watch open but sends nothing (a proxy holding a dead stream, a
 * server stuck mid-line): after the idle timeout the informer watches again from its last
 * resourceVersion (no relist) and gets what it missed.
 */
static void
test_stalled_watch(void)
{
	struct kube_informer_opts tune = {
	    .backoff_base_usec = 50000,
	    .backoff_max_usec = 500000,
	    .watch_idle_timeout_usec = 1500000,
	};
	struct kube_informer *inf;
	struct kube_informer_stats st;
	struct seen s = {0};
	struct inf_wait w;

	create_cm("stall", "s1", "s", "a", 1);
	inf = new_cm_informer(client, "stall", &s, &tune);
	CU_ASSERT_EQUAL_FATAL(kube_informer_start(inf), 0);
	CU_ASSERT_TRUE_FATAL(wait_for(synced, inf, 20000));
	w = (struct inf_wait){.inf = inf, .s = &s, .adds = 2, .watches = 1};
	create_cm("stall", "s2", "s", "a", 2); /* proves the first watch is open */
	CU_ASSERT_TRUE_FATAL(wait_for(counts_reached, &w, 20000));

	CU_ASSERT_EQUAL_FATAL(test_apiserver_fault(srv, "stall-watches"), 0);
	create_cm("stall", "s3", "s", "a", 3); /* not sent on the stalled stream */
	w.adds = 3;
	w.watches = 2;
	CU_ASSERT_TRUE(wait_for(counts_reached, &w, 20000));
	CU_ASSERT_STRING_EQUAL(s.last_key, "stall/s3");
	CU_ASSERT_TRUE(wait_for(stalled_once, inf, 1000));
	kube_informer_get_stats(inf, &st);
	CU_ASSERT_TRUE(st.stalls >= 1);
	CU_ASSERT_EQUAL(st.lists, 1); /* watched again from the last resourceVersion */
	CU_ASSERT_EQUAL(st.relists_410, 0);
	CU_ASSERT_EQUAL(st.failures, 0); /* the event on the new watch ended the failure run */
	kube_informer_free(inf);
}

static const struct test_case informer_tests[] = {
	{ "paginated sync and watch events", test_sync_and_events },
	{ "changes while disconnected", test_relist_after_410 },
	{ "relist after 410 Gone", test_forced_410 },
	{ "reconnect after API server restart", test_server_restart },
	{ "periodic resync", test_resync },
	{ "no per-event leak over 100000 events", test_no_per_event_leak },
	{ "a decoder for list pages and watch lines", test_custom_decoder },
	{ "failures are described and logged, rate limited", test_failures_described_and_logged },
	{ "start-up backoff capped until the first list", test_unsynced_backoff_cap },
	{ "a stalled watch is replaced", test_stalled_watch },
	{ NULL, NULL },
};

const struct test_suite test_suites[] = {
	{ .name = "kube-informer", .init = suite_init, .cleanup = suite_cleanup,
	    .tests = informer_tests },
	{ .name = NULL },
};
