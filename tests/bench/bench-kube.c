/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-kube: Kubernetes client benchmark against the in-memory API server.
 *
 *   1. informer initial sync of N objects (paginated list), with the transform hook
 *      (compact typed struct) and without it (json_t kept): time, RSS, heap bytes per object
 *   2. N watch events (PATCHes by another client) through the informer's store: time from
 *      the first write to the last event applied
 *   3. N watch lines decoded and applied in-process (framer + informer, no HTTP)
 *
 * Prints a Markdown section on stdout. Usage: bench-kube [N] (default 10000).
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "lib/clock.h"
#include "tests/helpers/apiserver.h"
#include "tests/helpers/proc.h"

static struct event_base *base;
static struct kube_client *client;

static long
rss_kib(void)
{
	return test_proc_status_kib(0, "VmRSS:");
}

static size_t
heap_bytes(void)
{
	malloc_trim(0);
	return mallinfo2().uordblks;
}

struct item {
	uint32_t value;
	char app[12];
};

static void *
transform(void *userdata, json_t *obj)
{
	struct item *it = malloc(sizeof(*it));
	const char *app = kube_obj_label(obj, "app");
	const char *v = json_string_value(json_object_get(json_object_get(obj, "data"), "v"));

	if (!it)
		return NULL;
	it->value = v ? (uint32_t)strtoul(v, NULL, 10) : 0;
	snprintf(it->app, sizeof(it->app), "%s", app ? app : "");
	return it;
}

struct counter {
	int pending, failed;
	bool done;
	long updates, target;
};

static void
bulk_cb(void *userdata, const struct kube_result *res)
{
	struct counter *c = userdata;

	if (res->error < 0)
		c->failed++;
	if (--c->pending == 0)
		c->done = true;
}

static void
on_update(void *userdata, const char *key, const void *old, const void *item)
{
	struct counter *c = userdata;

	if (++c->updates >= c->target)
		c->done = true;
}

static bool
run_synced(struct kube_informer *inf, long ms)
{
	uint64_t end = clock_now_usec() + (uint64_t)ms * 1000;

	while (!kube_informer_has_synced(inf) && clock_now_usec() < end)
		event_base_loop(base, EVLOOP_ONCE);
	return kube_informer_has_synced(inf);
}

static int
bulk_write(int n, bool patch)
{
	struct counter c = {0};
	char name[32], v[16];

	for (int i = 0; i < n; i++) {
		json_t *o;
		int rc;

		snprintf(name, sizeof(name), "obj-%05d", i);
		snprintf(v, sizeof(v), "%d", patch ? i + 1000000 : i);
		if (patch) {
			o = json_pack("{s:{s:s}}", "data", "v", v);
			rc = kube_patch(client, &kube_res_configmaps, "bench", name,
			    KUBE_PATCH_MERGE, o, NULL, bulk_cb, &c, NULL);
		} else {
			o = json_pack("{s:{s:s, s:{s:s, s:s}}, s:{s:s, s:s}}", "metadata", "name",
			    name, "labels", "app", i % 2 ? "web" : "db", "tier", "backend", "data",
			    "v", v, "blob", "0123456789abcdef0123456789abcdef");
			rc = kube_create(
			    client, &kube_res_configmaps, "bench", o, bulk_cb, &c, NULL);
		}
		json_decref(o);
		if (rc < 0)
			return rc;
		c.pending++;
	}
	if (kube_run_until(base, &c.done, 600000) < 0)
		return -ETIMEDOUT;
	return c.failed ? -EIO : 0;
}

struct sync_result {
	double secs;
	long rss_delta_kib;
	double heap_per_obj;
	size_t objs;
};

static int
measure_sync(bool with_transform, struct sync_result *r)
{
	struct kube_informer_opts o = {
	    .res = &kube_res_configmaps,
	    .ns = "bench",
	    .page_size = 500,
	    .transform = with_transform ? transform : NULL,
	    .destroy = with_transform ? free : NULL,
	};
	struct kube_informer *inf = NULL;
	size_t h0, h1;
	long r0, r1;
	uint64_t t0, t1;
	int rc;

	h0 = heap_bytes();
	r0 = rss_kib();
	rc = kube_informer_new(client, &o, &inf);
	if (rc < 0)
		return rc;
	t0 = clock_now_usec();
	kube_informer_start(inf);
	if (!run_synced(inf, 600000)) {
		kube_informer_free(inf);
		return -ETIMEDOUT;
	}
	t1 = clock_now_usec();
	/* the watch request is in flight too; its buffers are small */
	h1 = heap_bytes();
	r1 = rss_kib();
	r->secs = (double)(t1 - t0) / 1e6;
	r->objs = kube_store_len(kube_informer_store(inf));
	r->rss_delta_kib = r1 - r0;
	r->heap_per_obj = r->objs ? (double)(h1 - h0) / (double)r->objs : 0;
	kube_informer_free(inf);
	return 0;
}

static int
measure_watch(int n, double *secs, long *seen)
{
	struct counter c = {.target = n};
	struct kube_informer_opts o = {
	    .res = &kube_res_configmaps,
	    .ns = "bench",
	    .page_size = 500,
	    .transform = transform,
	    .destroy = free,
	};
	struct kube_informer_handlers h = {.on_update = on_update, .userdata = &c};
	struct kube_informer *inf = NULL;
	uint64_t t0;
	int rc;

	rc = kube_informer_new(client, &o, &inf);
	if (rc < 0)
		return rc;
	kube_informer_add_handlers(inf, &h);
	kube_informer_start(inf);
	if (!run_synced(inf, 600000)) {
		kube_informer_free(inf);
		return -ETIMEDOUT;
	}
	/* let the watch connect before the writes start */
	for (int i = 0; i < 50; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
	t0 = clock_now_usec();
	rc = bulk_write(n, true);
	if (rc == 0 && kube_run_until(base, &c.done, 600000) < 0)
		rc = -ETIMEDOUT;
	*secs = (double)(clock_now_usec() - t0) / 1e6;
	*seen = c.updates;
	kube_informer_free(inf);
	return rc;
}

static void
apply_cb(void *userdata, enum kube_watch_type type, const char *text, size_t len)
{
	kube_informer_apply_event_text(userdata, type, text, len);
}

static int
measure_inprocess(int n, double *secs, double *heap_growth)
{
	struct kube_informer_opts o = {
	    .res = &kube_res_configmaps,
	    .ns = "bench",
	    .transform = transform,
	    .destroy = free,
	};
	struct kube_informer *inf = NULL;
	struct kube_watch_framer f;
	char line[512];
	size_t h0 = 0;
	uint64_t t0;
	int rc;

	rc = kube_informer_new(client, &o, &inf);
	if (rc < 0)
		return rc;
	kube_watch_framer_init(&f, 0);
	t0 = clock_now_usec();
	for (int i = 0; i < 2 * n; i++) {
		snprintf(line, sizeof(line),
		    "{\"type\":\"%s\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
		    "\"metadata\":{\"name\":\"obj-%05d\",\"namespace\":\"bench\",\"uid\":\"u-%d\","
		    "\"resourceVersion\":\"%d\",\"labels\":{\"app\":\"web\",\"tier\":\"backend\"}},"
		    "\"data\":{\"v\":\"%d\",\"blob\":\"0123456789abcdef0123456789abcdef\"}}}\n",
		    i < n ? "ADDED" : "MODIFIED", i % n, i % n, i + 1, i);
		kube_watch_framer_feed_raw(&f, line, strlen(line), apply_cb, inf);
		if (i == n - 1) {
			*secs = (double)(clock_now_usec() - t0) / 1e6; /* adds */
			h0 = heap_bytes();
			t0 = clock_now_usec();
		}
	}
	*secs = (double)(clock_now_usec() - t0) / 1e6; /* the n modifications */
	*heap_growth = (double)heap_bytes() - (double)h0;
	kube_watch_framer_release(&f);
	kube_informer_free(inf);
	return 0;
}

int
main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10000;
	struct test_apiserver *srv = NULL;
	struct kube_config *cfg = NULL;
	struct sync_result tr, jr;
	double wsecs = 0, psecs = 0, growth = 0, csecs;
	long seen = 0;
	char err[512];
	uint64_t t0;
	int rc;

	if (n <= 0)
		n = 10000;
	rc = test_apiserver_start(&srv, "--log-level warn");
	if (rc < 0) {
		fprintf(stderr, "bench-kube: cannot start test-apiserver: %s\n", strerror(-rc));
		return 1;
	}
	base = event_base_new();
	if (kube_config_from_kubeconfig(
		test_apiserver_kubeconfig(srv), NULL, &cfg, err, sizeof(err)) < 0 ||
	    kube_client_new(base, cfg, &client) < 0) {
		fprintf(stderr, "bench-kube: %s\n", err);
		return 1;
	}
	t0 = clock_now_usec();
	if ((rc = bulk_write(n, false)) < 0) {
		fprintf(stderr, "bench-kube: creating %d objects: %s\n", n, strerror(-rc));
		return 1;
	}
	csecs = (double)(clock_now_usec() - t0) / 1e6;
	if ((rc = measure_sync(true, &tr)) < 0 || (rc = measure_sync(false, &jr)) < 0) {
		fprintf(stderr, "bench-kube: sync: %s\n", strerror(-rc));
		return 1;
	}
	if ((rc = measure_watch(n, &wsecs, &seen)) < 0) {
		fprintf(stderr, "bench-kube: watch: %s (%ld events seen)\n", strerror(-rc), seen);
		return 1;
	}
	measure_inprocess(n, &psecs, &growth);

	printf("Measured by `make bench-kube` (tests/bench/bench-kube.c, %d ConfigMaps with two\n"
	       "labels and two data keys, in-memory API server over HTTPS on loopback, one\n"
	       "event loop; 2-core machine shared with other work, so treat times as rough).\n\n",
	    n);
	printf("| measurement | result |\n|---|---|\n");
	printf("| create %d objects (async POSTs, pooled connections) | %.2f s (%.0f/s) |\n", n,
	    csecs, n / csecs);
	printf("| informer initial sync, transform to a 16-byte struct (pages of 500) | %.2f s, "
	       "%zu objects |\n",
	    tr.secs, tr.objs);
	printf("| heap per cached object, with transform (key, resourceVersion, struct) | "
	       "%.0f bytes |\n",
	    tr.heap_per_obj);
	printf("| RSS growth for the sync, with transform | %ld KiB |\n", tr.rss_delta_kib);
	printf("| informer initial sync, json_t kept (no transform) | %.2f s |\n", jr.secs);
	printf("| heap per cached object, json_t kept | %.0f bytes |\n", jr.heap_per_obj);
	printf("| %d watch events end to end (PATCH by the same process -> watch -> store -> "
	       "handler) | %.2f s (%.0f events/s), %ld seen |\n",
	    n, wsecs, seen / wsecs, seen);
	printf("| %d watch lines decoded and applied in-process (framer + transform + store) | "
	       "%.3f s (%.0f events/s) |\n",
	    n, psecs, n / psecs);
	printf("| heap growth over those %d MODIFIED events (steady state) | %.0f bytes |\n", n,
	    growth);
	printf(
	    "| peak RSS of the benchmark process | %ld KiB |\n", test_proc_status_kib(0, "VmHWM:"));

	kube_client_free(client);
	kube_config_free(cfg);
	event_base_free(base);
	test_apiserver_stop(srv);
	return 0;
}
