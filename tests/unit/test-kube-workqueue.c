/* SPDX-License-Identifier: Apache-2.0 */
/* kube work queue, rate limiters and controller loop on a fake clock (no sleeps). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube.h"
#include "lib/clock.h"
#include "lib/metrics.h"
#include "tests/runner.h"

static uint64_t fake_now = 1000000;

static uint64_t
fake_clock(void *userdata)
{
	return fake_now;
}

static const struct kube_clock clk = {.now = fake_clock};

static struct kube_workqueue *
new_queue(double qps, unsigned burst)
{
	struct kube_workqueue_opts o = {
	    .clock = &clk,
	    .base_delay_usec = 5 * USEC_PER_MSEC,
	    .max_delay_usec = 1000 * USEC_PER_SEC,
	    .qps = qps,
	    .burst = burst,
	};
	struct kube_workqueue *q = NULL;

	CU_ASSERT_EQUAL_FATAL(kube_workqueue_new(&o, &q), 0);
	return q;
}

static void
test_dedup_and_order(void)
{
	struct kube_workqueue *q = new_queue(0, 0);
	const char *k;

	kube_workqueue_add(q, "ns/a");
	kube_workqueue_add(q, "ns/b");
	kube_workqueue_add(q, "ns/a");
	kube_workqueue_add(q, "ns/c");
	CU_ASSERT_EQUAL(kube_workqueue_len(q), 3);
	CU_ASSERT_EQUAL(kube_workqueue_get(q, &k), 0);
	CU_ASSERT_STRING_EQUAL(k, "ns/a");
	kube_workqueue_done(q, k);
	CU_ASSERT_EQUAL(kube_workqueue_get(q, &k), 0);
	CU_ASSERT_STRING_EQUAL(k, "ns/b");
	kube_workqueue_done(q, k);
	CU_ASSERT_EQUAL(kube_workqueue_get(q, &k), 0);
	CU_ASSERT_STRING_EQUAL(k, "ns/c");
	kube_workqueue_done(q, k);
	CU_ASSERT_EQUAL(kube_workqueue_get(q, &k), -EAGAIN);
	kube_workqueue_free(q);
}

static void
test_never_twice_at_once(void)
{
	struct kube_workqueue *q = new_queue(0, 0);
	const char *k, *k2;

	kube_workqueue_add(q, "x");
	CU_ASSERT_EQUAL_FATAL(kube_workqueue_get(q, &k), 0);
	/* Re-added while processing: not handed out again until done. */
	kube_workqueue_add(q, "x");
	kube_workqueue_add(q, "x");
	CU_ASSERT_EQUAL(kube_workqueue_len(q), 0);
	CU_ASSERT_EQUAL(kube_workqueue_get(q, &k2), -EAGAIN);
	kube_workqueue_done(q, "x");
	CU_ASSERT_EQUAL(kube_workqueue_len(q), 1);
	CU_ASSERT_EQUAL(kube_workqueue_get(q, &k2), 0);
	CU_ASSERT_STRING_EQUAL(k2, "x");
	kube_workqueue_done(q, k2);
	CU_ASSERT_EQUAL(kube_workqueue_len(q), 0);
	/* done on an unknown key is harmless */
	kube_workqueue_done(q, "nope");
	kube_workqueue_free(q);
}

static void
test_delayed_add(void)
{
	struct kube_workqueue *q = new_queue(0, 0);
	const char *k;

	fake_now = 10 * USEC_PER_SEC;
	kube_workqueue_add_after(q, "late", 3 * USEC_PER_SEC);
	kube_workqueue_add_after(q, "early", 1 * USEC_PER_SEC);
	/* a second, later add of the same key keeps the earlier time */
	kube_workqueue_add_after(q, "early", 5 * USEC_PER_SEC);
	CU_ASSERT_EQUAL(kube_workqueue_delayed_len(q), 2);
	CU_ASSERT_EQUAL(kube_workqueue_next_due(q), 11 * USEC_PER_SEC);
	kube_workqueue_tick(q);
	CU_ASSERT_EQUAL(kube_workqueue_len(q), 0);
	fake_now += USEC_PER_SEC;
	kube_workqueue_tick(q);
	CU_ASSERT_EQUAL(kube_workqueue_len(q), 1);
	CU_ASSERT_EQUAL(kube_workqueue_get(q, &k), 0);
	CU_ASSERT_STRING_EQUAL(k, "early");
	kube_workqueue_done(q, k);
	/* an earlier re-add moves the key up */
	kube_workqueue_add_after(q, "late", USEC_PER_SEC / 2);
	CU_ASSERT_EQUAL(kube_workqueue_next_due(q), fake_now + USEC_PER_SEC / 2);
	fake_now += USEC_PER_SEC / 2;
	kube_workqueue_tick(q);
	CU_ASSERT_EQUAL(kube_workqueue_get(q, &k), 0);
	CU_ASSERT_STRING_EQUAL(k, "late");
	kube_workqueue_done(q, k);
	CU_ASSERT_EQUAL(kube_workqueue_delayed_len(q), 0);
	/* a delayed key that is already waiting in the FIFO is not queued twice */
	kube_workqueue_add(q, "dup");
	kube_workqueue_add_after(q, "dup", 1);
	fake_now += 1;
	kube_workqueue_tick(q);
	CU_ASSERT_EQUAL(kube_workqueue_len(q), 1);
	kube_workqueue_free(q);
}

static void
test_item_backoff(void)
{
	/* Huge bucket so only the per-item limiter matters. */
	struct kube_workqueue *q = new_queue(1e9, 1000000);
	uint64_t expect = 5 * USEC_PER_MSEC;

	for (int i = 0; i < 10; i++) {
		CU_ASSERT_EQUAL(kube_workqueue_when(q, "k"), expect);
		expect *= 2;
	}
	CU_ASSERT_EQUAL(kube_workqueue_num_requeues(q, "k"), 10);
	/* another key has its own count */
	CU_ASSERT_EQUAL(kube_workqueue_when(q, "other"), 5 * USEC_PER_MSEC);
	/* capped at max */
	for (int i = 0; i < 40; i++)
		kube_workqueue_when(q, "k");
	CU_ASSERT_EQUAL(kube_workqueue_when(q, "k"), 1000 * USEC_PER_SEC);
	/* forget resets */
	kube_workqueue_forget(q, "k");
	CU_ASSERT_EQUAL(kube_workqueue_num_requeues(q, "k"), 0);
	CU_ASSERT_EQUAL(kube_workqueue_when(q, "k"), 5 * USEC_PER_MSEC);
	kube_workqueue_free(q);
}

static void
test_token_bucket(void)
{
	struct kube_workqueue *q = new_queue(10, 3);
	char key[16];

	fake_now = 100 * USEC_PER_SEC;
	/* Burst of 3 goes through at the per-item delay (first failure: 5 ms). */
	for (int i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		CU_ASSERT_EQUAL(kube_workqueue_when(q, key), 5 * USEC_PER_MSEC);
	}
	/* Then each one waits one more 1/qps slot: 100 ms, 200 ms, ... */
	CU_ASSERT_EQUAL(kube_workqueue_when(q, "k3"), 100 * USEC_PER_MSEC);
	CU_ASSERT_EQUAL(kube_workqueue_when(q, "k4"), 200 * USEC_PER_MSEC);
	/* Time refills the bucket. */
	fake_now += 10 * USEC_PER_SEC;
	CU_ASSERT_EQUAL(kube_workqueue_when(q, "k5"), 5 * USEC_PER_MSEC);
	kube_workqueue_free(q);
}

static void
test_rate_limited_add(void)
{
	struct kube_workqueue *q = new_queue(1e9, 1000000);
	const char *k;

	fake_now = 1000 * USEC_PER_SEC;
	kube_workqueue_add_rate_limited(q, "r");
	CU_ASSERT_EQUAL(kube_workqueue_len(q), 0);
	CU_ASSERT_EQUAL(kube_workqueue_delayed_len(q), 1);
	fake_now += 5 * USEC_PER_MSEC - 1;
	kube_workqueue_tick(q);
	CU_ASSERT_EQUAL(kube_workqueue_len(q), 0);
	fake_now += 1;
	kube_workqueue_tick(q);
	CU_ASSERT_EQUAL_FATAL(kube_workqueue_get(q, &k), 0);
	kube_workqueue_done(q, k);
	kube_workqueue_shutdown(q);
	CU_ASSERT_EQUAL(kube_workqueue_add(q, "z"), -ESHUTDOWN);
	CU_ASSERT_EQUAL(kube_workqueue_get(q, &k), -ESHUTDOWN);
	kube_workqueue_free(q);
}

static void
test_many_keys(void)
{
	struct kube_workqueue *q = new_queue(0, 0);
	char key[32];
	const char *k;
	unsigned n = 0;

	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 5000; i++) {
			snprintf(key, sizeof(key), "ns/obj-%d", i);
			kube_workqueue_add(q, key);
		}
	CU_ASSERT_EQUAL(kube_workqueue_len(q), 5000);
	while (kube_workqueue_get(q, &k) == 0) {
		kube_workqueue_done(q, k);
		n++;
	}
	CU_ASSERT_EQUAL(n, 5000);
	kube_workqueue_free(q);
}

/* The value of series `name{labels}` in a rendering of m; -1 when absent. */
static double
series_value(struct metrics *m, const char *series)
{
	char *text = NULL, *p;
	size_t n = strlen(series);
	double v = -1;

	if (metrics_render(m, &text, NULL) < 0)
		return -1;
	for (p = text; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, series, n) == 0 && p[n] == ' ') {
			v = strtod(p + n + 1, NULL);
			break;
		}
	free(text);
	return v;
}

/* client-go's queue metrics, one family per registry shared by the queues (label name):
 * depth = keys ready, adds = keys made due (not a duplicate add), retries = rate-limited
 * adds. */
static void
test_queue_metrics(void)
{
	struct kube_workqueue_opts o = {.clock = &clk, .qps = 1e9, .burst = 1000000, .name = "a"};
	struct kube_workqueue *a = NULL, *b = NULL, *dup = NULL;
	struct metrics *m = NULL;
	const char *k;

	CU_ASSERT_EQUAL_FATAL(metrics_new(&m), 0);
	CU_ASSERT_EQUAL(kube_workqueue_new(&o, &a), 0); /* no registry: no metrics, fine */
	kube_workqueue_free(a);
	a = NULL;
	o.metrics = m;
	CU_ASSERT_EQUAL_FATAL(kube_workqueue_new(&o, &a), 0);
	CU_ASSERT_EQUAL(kube_workqueue_new(&o, &dup), -EEXIST); /* the name is taken */
	CU_ASSERT_PTR_NULL(dup);
	o.name = NULL;
	CU_ASSERT_EQUAL(kube_workqueue_new(&o, &dup), -EINVAL);
	o.name = "b";
	CU_ASSERT_EQUAL_FATAL(kube_workqueue_new(&o, &b), 0);

	kube_workqueue_add(a, "ns/x");
	kube_workqueue_add(a, "ns/x");
	kube_workqueue_add(a, "ns/y");
	kube_workqueue_add(b, "ns/z");
	CU_ASSERT_EQUAL(series_value(m, "vmdhcp_workqueue_depth{name=\"a\"}"), 2);
	CU_ASSERT_EQUAL(series_value(m, "vmdhcp_workqueue_adds_total{name=\"a\"}"), 2);
	CU_ASSERT_EQUAL(series_value(m, "vmdhcp_workqueue_depth{name=\"b\"}"), 1);
	CU_ASSERT_EQUAL(kube_workqueue_get(a, &k), 0);
	CU_ASSERT_EQUAL(series_value(m, "vmdhcp_workqueue_depth{name=\"a\"}"), 1);
	/* failed: a rate-limited retry, due later: not an add until then */
	CU_ASSERT_EQUAL(kube_workqueue_add_rate_limited(a, k), 0);
	kube_workqueue_done(a, k);
	CU_ASSERT_EQUAL(series_value(m, "vmdhcp_workqueue_retries_total{name=\"a\"}"), 1);
	CU_ASSERT_EQUAL(series_value(m, "vmdhcp_workqueue_adds_total{name=\"a\"}"), 2);
	fake_now = kube_workqueue_next_due(a);
	kube_workqueue_tick(a);
	CU_ASSERT_EQUAL(series_value(m, "vmdhcp_workqueue_adds_total{name=\"a\"}"), 3);
	CU_ASSERT_EQUAL(series_value(m, "vmdhcp_workqueue_depth{name=\"a\"}"), 2);
	CU_ASSERT_EQUAL(series_value(m, "vmdhcp_workqueue_retries_total{name=\"b\"}"), 0);
	CU_ASSERT_EQUAL(series_value(m, "vmdhcp_workqueue_adds_total{name=\"b\"}"), 1);
	kube_workqueue_free(a);
	kube_workqueue_free(b);
	metrics_free(m);
}

/* --- controller loop ------------------------------------------------------------------- */

struct rec_state {
	int calls;
	struct kube_reconcile_result next;
	char last[64];
	struct kube_controller *ctl;
	bool reenqueue_self;
	uint64_t takes_usec; /* on the fake clock */
};

static struct kube_reconcile_result
reconcile(void *userdata, const char *key)
{
	struct rec_state *s = userdata;

	s->calls++;
	fake_now += s->takes_usec;
	snprintf(s->last, sizeof(s->last), "%s", key);
	if (s->reenqueue_self)
		kube_controller_enqueue(s->ctl, key); /* dirty while processing */
	return s->next;
}

static struct kube_controller *
new_controller(struct rec_state *s, struct metrics *m)
{
	struct kube_controller_opts o = {
	    .name = "test",
	    .clock = &clk,
	    .metrics = m,
	    .reconcile = reconcile,
	    .userdata = s,
	    .queue = {.qps = 1e9, .burst = 1000000},
	};
	struct kube_controller *ctl = NULL;

	CU_ASSERT_EQUAL_FATAL(kube_controller_new(&o, &ctl), 0);
	s->ctl = ctl;
	return ctl;
}

static void
test_controller_results(void)
{
	struct rec_state s = {0};
	struct metrics *m = NULL;
	struct kube_controller *ctl;
	struct kube_controller_stats st;
	struct kube_workqueue *q;
	char *text = NULL;
	size_t len;

	CU_ASSERT_EQUAL_FATAL(metrics_new(&m), 0);
	ctl = new_controller(&s, m);
	q = kube_controller_queue(ctl);
	fake_now = 5000 * USEC_PER_SEC;

	/* error -> backoff 5 ms, 10 ms, then success forgets */
	s.next = (struct kube_reconcile_result){.action = KUBE_RECONCILE_ERROR, .error = -EIO};
	kube_controller_enqueue(ctl, "ns/a");
	kube_controller_enqueue(ctl, "ns/a");
	CU_ASSERT_EQUAL(kube_controller_run_pending(ctl, 10), 1);
	CU_ASSERT_EQUAL(kube_workqueue_num_requeues(q, "ns/a"), 1);
	CU_ASSERT_EQUAL(kube_workqueue_next_due(q), fake_now + 5 * USEC_PER_MSEC);
	CU_ASSERT_EQUAL(kube_controller_run_pending(ctl, 10), 0);
	fake_now += 5 * USEC_PER_MSEC;
	kube_workqueue_tick(q);
	CU_ASSERT_EQUAL(kube_controller_run_pending(ctl, 10), 1);
	CU_ASSERT_EQUAL(kube_workqueue_next_due(q), fake_now + 10 * USEC_PER_MSEC);
	fake_now += 10 * USEC_PER_MSEC;
	kube_workqueue_tick(q);
	s.next = (struct kube_reconcile_result){.action = KUBE_RECONCILE_OK};
	CU_ASSERT_EQUAL(kube_controller_run_pending(ctl, 10), 1);
	CU_ASSERT_EQUAL(kube_workqueue_num_requeues(q, "ns/a"), 0);
	CU_ASSERT_EQUAL(kube_workqueue_delayed_len(q), 0);

	/* requeue-after: exact delay, backoff forgotten */
	s.next = (struct kube_reconcile_result){
	    .action = KUBE_RECONCILE_REQUEUE_AFTER, .after_usec = 30 * USEC_PER_SEC};
	kube_controller_enqueue(ctl, "ns/b");
	CU_ASSERT_EQUAL(kube_controller_run_pending(ctl, 10), 1);
	CU_ASSERT_EQUAL(kube_workqueue_next_due(q), fake_now + 30 * USEC_PER_SEC);
	CU_ASSERT_EQUAL(kube_workqueue_num_requeues(q, "ns/b"), 0);

	/* an add while processing runs it once more afterwards, not concurrently */
	s.next = (struct kube_reconcile_result){.action = KUBE_RECONCILE_OK};
	s.reenqueue_self = true;
	s.calls = 0;
	kube_controller_enqueue(ctl, "ns/c");
	CU_ASSERT_EQUAL(kube_controller_run_pending(ctl, 1), 1);
	CU_ASSERT_EQUAL(kube_workqueue_len(q), 1);
	s.reenqueue_self = false;
	CU_ASSERT_EQUAL(kube_controller_run_pending(ctl, 10), 1);
	CU_ASSERT_EQUAL(s.calls, 2);

	/* pending: stays processing until completed; its synchronous part takes 250 ms */
	s.next = (struct kube_reconcile_result){.action = KUBE_RECONCILE_PENDING};
	kube_controller_enqueue(ctl, "ns/d");
	s.takes_usec = 250 * USEC_PER_MSEC;
	CU_ASSERT_EQUAL(kube_controller_run_pending(ctl, 10), 1);
	s.takes_usec = 0;
	kube_controller_enqueue(ctl, "ns/d");
	CU_ASSERT_EQUAL(kube_controller_run_pending(ctl, 10), 0);
	kube_controller_complete(
	    ctl, "ns/d", (struct kube_reconcile_result){.action = KUBE_RECONCILE_OK});
	CU_ASSERT_EQUAL(kube_workqueue_len(q), 1);

	kube_controller_get_stats(ctl, &st);
	CU_ASSERT_EQUAL(st.errors, 2);
	CU_ASSERT_EQUAL(st.reconciles, 7);
	CU_ASSERT_EQUAL_FATAL(metrics_render(m, &text, &len), 0);
	/* controller-runtime's names: results ns/a error, error, success; ns/b requeue (after);
	 * ns/c success twice; ns/d success once completed */
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "\nvmdhcp_reconcile_total{controller=\"test\",result=\"success\"} 4\n"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "\nvmdhcp_reconcile_total{controller=\"test\",result=\"error\"} 2\n"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "\nvmdhcp_reconcile_total{controller=\"test\",result=\"requeue\"} 1\n"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "\nvmdhcp_reconcile_errors_total{controller=\"test\"} 2\n"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "\nvmdhcp_reconcile_time_seconds_count{controller=\"test\"} 7\n"));
	/* seconds, not microseconds: only ns/d took time on the fake clock */
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "\nvmdhcp_reconcile_time_seconds_sum{controller=\"test\"} 0.25\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(
	    text, "\nvmdhcp_reconcile_time_seconds_bucket{controller=\"test\",le=\"0.1\"} 6\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(
	    text, "\nvmdhcp_reconcile_time_seconds_bucket{controller=\"test\",le=\"0.5\"} 7\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nvmdhcp_workqueue_depth{name=\"test\"} 1\n"));
	/* ns/a, its two retries coming due, ns/b, ns/c and its re-add while processing, ns/d
	 * and its re-add while processing; the second add of a waiting ns/a is not one */
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nvmdhcp_workqueue_adds_total{name=\"test\"} 8\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nvmdhcp_workqueue_retries_total{name=\"test\"} 2\n"));
	CU_ASSERT_PTR_NULL(strstr(text, "kube_"));
	free(text);
	kube_controller_free(ctl);
	metrics_free(m);
}

/* The same loop driven by an event_base: notify -> reconcile, evtimer -> delayed retry. */
struct loop_state {
	int calls;
	bool done;
};

static struct kube_reconcile_result
reconcile_flaky(void *userdata, const char *key)
{
	struct loop_state *s = userdata;

	if (++s->calls < 3)
		return (struct kube_reconcile_result){
		    .action = KUBE_RECONCILE_ERROR, .error = -EIO};
	s->done = true;
	return (struct kube_reconcile_result){.action = KUBE_RECONCILE_OK};
}

static void
test_controller_on_event_loop(void)
{
	struct event_base *base = event_base_new();
	struct loop_state s = {0};
	struct kube_controller_opts o = {
	    .name = "loop",
	    .base = base,
	    .reconcile = reconcile_flaky,
	    .userdata = &s,
	    .queue = {.base_delay_usec = 1000, .qps = 1e6, .burst = 1000},
	};
	struct kube_controller *ctl = NULL;
	struct kube_controller_stats st;

	CU_ASSERT_EQUAL_FATAL(kube_controller_new(&o, &ctl), 0);
	kube_controller_enqueue(ctl, "ns/x");
	CU_ASSERT_EQUAL(kube_run_until(base, &s.done, 10000), 0);
	kube_controller_get_stats(ctl, &st);
	CU_ASSERT_EQUAL(s.calls, 3);
	CU_ASSERT_EQUAL(st.errors, 2);
	CU_ASSERT_EQUAL(kube_workqueue_num_requeues(kube_controller_queue(ctl), "ns/x"), 0);
	kube_controller_free(ctl);
	event_base_free(base);
}

/* MaxConcurrentReconciles: PENDING keys hold their slot until completed; the others wait. */
static void
test_controller_limit(void)
{
	struct rec_state s = {0}, s2 = {0};
	struct kube_controller_opts o = {
	    .name = "lim",
	    .clock = &clk,
	    .reconcile = reconcile,
	    .userdata = &s,
	    .queue = {.qps = 1e9, .burst = 1000000},
	    .max_concurrent = 2,
	};
	struct kube_controller *ctl = NULL, *other = NULL;

	CU_ASSERT_EQUAL_FATAL(kube_controller_new(&o, &ctl), 0);
	s.ctl = ctl;
	s.next = (struct kube_reconcile_result){.action = KUBE_RECONCILE_PENDING};
	kube_controller_enqueue(ctl, "ns/a");
	kube_controller_enqueue(ctl, "ns/b");
	kube_controller_enqueue(ctl, "ns/c");
	CU_ASSERT_EQUAL(kube_controller_run_pending(ctl, 10), 2);
	CU_ASSERT_EQUAL(kube_controller_active(ctl), 2);
	CU_ASSERT_EQUAL(kube_workqueue_len(kube_controller_queue(ctl)), 1); /* ns/c waits */
	CU_ASSERT_EQUAL(kube_controller_run_pending(ctl, 10), 0);

	/* a second controller drawing from the same budget waits too */
	o.name = "lim_shared";
	o.userdata = &s2;
	o.max_concurrent = 0;
	o.share_limit = ctl;
	CU_ASSERT_EQUAL_FATAL(kube_controller_new(&o, &other), 0);
	s2.ctl = other;
	s2.next = (struct kube_reconcile_result){.action = KUBE_RECONCILE_OK};
	kube_controller_enqueue(other, "ns/x");
	CU_ASSERT_EQUAL(kube_controller_run_pending(other, 10), 0);

	/* one completion frees one slot: the first taker gets it */
	kube_controller_complete(
	    ctl, "ns/a", (struct kube_reconcile_result){.action = KUBE_RECONCILE_OK});
	CU_ASSERT_EQUAL(kube_controller_active(other), 1);
	CU_ASSERT_EQUAL(kube_controller_run_pending(other, 10), 1); /* synchronous: slot back */
	CU_ASSERT_STRING_EQUAL(s2.last, "ns/x");
	CU_ASSERT_EQUAL(kube_controller_active(ctl), 1);
	CU_ASSERT_EQUAL(kube_controller_run_pending(ctl, 10), 1);
	CU_ASSERT_STRING_EQUAL(s.last, "ns/c");
	CU_ASSERT_EQUAL(kube_controller_active(ctl), 2);

	/* either may be freed first: the budget stays with the other */
	kube_controller_free(ctl);
	CU_ASSERT_EQUAL(kube_controller_active(other), 2);
	kube_controller_free(other);
}

/* On an event loop: a completion wakes the loops that wait for a slot, of every member. */
struct async_state {
	struct event_base *base;
	struct kube_controller *ctl;
	unsigned *peak, *done;
};

struct async_call {
	struct kube_controller *ctl;
	char key[16];
};

static void
async_complete(evutil_socket_t fd, short what, void *arg)
{
	struct async_call *call = arg;

	kube_controller_complete(
	    call->ctl, call->key, (struct kube_reconcile_result){.action = KUBE_RECONCILE_OK});
	free(call);
}

static struct kube_reconcile_result
reconcile_async(void *userdata, const char *key)
{
	struct async_state *s = userdata;
	struct async_call *call = calloc(1, sizeof(*call));
	struct timeval tv = {0, 1000};

	CU_ASSERT_PTR_NOT_NULL_FATAL(call);
	call->ctl = s->ctl;
	snprintf(call->key, sizeof(call->key), "%s", key);
	if (kube_controller_active(s->ctl) > *s->peak)
		*s->peak = kube_controller_active(s->ctl);
	(*s->done)++;
	event_base_once(s->base, -1, EV_TIMEOUT, async_complete, call, &tv);
	return (struct kube_reconcile_result){.action = KUBE_RECONCILE_PENDING};
}

static void
test_controller_limit_on_event_loop(void)
{
	struct event_base *base = event_base_new();
	unsigned peak = 0, done = 0;
	struct async_state s[2] = {{base, NULL, &peak, &done}, {base, NULL, &peak, &done}};
	struct kube_controller_opts o = {
	    .name = "async_a",
	    .base = base,
	    .reconcile = reconcile_async,
	    .userdata = &s[0],
	    .queue = {.qps = 1e6, .burst = 1000},
	    .max_concurrent = 3,
	};
	char key[16];

	CU_ASSERT_EQUAL_FATAL(kube_controller_new(&o, &s[0].ctl), 0);
	o.name = "async_b";
	o.userdata = &s[1];
	o.share_limit = s[0].ctl;
	CU_ASSERT_EQUAL_FATAL(kube_controller_new(&o, &s[1].ctl), 0);
	for (int i = 0; i < 20; i++) {
		snprintf(key, sizeof(key), "ns/%d", i);
		kube_controller_enqueue(s[i % 2].ctl, key);
	}
	for (int round = 0; round < 2000 && done < 20; round++)
		event_base_loop(base, EVLOOP_ONCE);
	CU_ASSERT_EQUAL(done, 20);
	CU_ASSERT_EQUAL(peak, 3);
	while (kube_controller_active(s[0].ctl) > 0)
		event_base_loop(base, EVLOOP_ONCE);
	kube_controller_free(s[0].ctl);
	kube_controller_free(s[1].ctl);
	event_base_free(base);
}

static const struct test_case wq_tests[] = {
    {"dedup and order", test_dedup_and_order},
    {"never twice at once", test_never_twice_at_once},
    {"delayed add", test_delayed_add},
    {"per-item backoff", test_item_backoff},
    {"token bucket", test_token_bucket},
    {"rate-limited add and shutdown", test_rate_limited_add},
    {"5000 keys", test_many_keys},
    {"depth, adds, retries metrics", test_queue_metrics},
    {NULL, NULL},
};

static const struct test_case ctl_tests[] = {
    {"reconcile results", test_controller_results},
    {"on an event loop", test_controller_on_event_loop},
    {"concurrency limit, shared", test_controller_limit},
    {"concurrency limit on an event loop", test_controller_limit_on_event_loop},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "kube-workqueue", .tests = wq_tests},
    {.name = "kube-controller", .tests = ctl_tests},
    {.name = NULL},
};
