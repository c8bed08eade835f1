/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reconcile loop (controller-runtime's reconcileHandler): take a key from the queue, call
 * reconcile, then by result: OK -> forget; REQUEUE -> rate-limited add; REQUEUE_AFTER ->
 * forget + delayed add; ERROR -> count + rate-limited add; PENDING -> the key stays in
 * processing until kube_controller_complete. Concurrency (MaxConcurrentReconciles): a limit
 * counts the keys in reconcile, PENDING ones until complete; at the limit keys wait in the
 * queue, and a completion wakes the loops that share the limit. Metrics (controller-runtime's
 * names, label controller="<name>"): reconciles by result, errors, time (histogram); the queue's
 * own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "lib/clock.h"
#include "lib/metrics.h"
#include "lib/util.h"

/* A concurrency budget, own or shared by several controllers (refcounted by its members). */
struct limit {
	unsigned max; /* 0: none */
	unsigned active;
	unsigned refs;
	struct kube_controller *members; /* woken when a slot frees */
};

struct kube_controller {
	const char *name;
	struct event_base *base;
	struct kube_clock clock;
	kube_reconcile_fn reconcile;
	void *userdata;
	struct kube_workqueue *queue;
	struct event *run_ev;
	unsigned max_per_pass;
	struct limit *limit;
	struct kube_controller *next_member; /* in limit->members */
	struct kube_controller_stats stats;
	struct metric *m_total, *m_errors, *m_latency; /* NULL without metrics */
	/* start times of PENDING reconciles are not tracked per key: latency is measured for
	 * the synchronous part only, which is where the loop's time goes. */
};

static const double latency_buckets[] = {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5};

/* vmdhcp_reconcile_total{result}: REQUEUE and REQUEUE_AFTER are both "requeue" */
enum { RESULT_SUCCESS, RESULT_ERROR, RESULT_REQUEUE };
static const char *const result_names[] = {"success", "error", "requeue"};

static bool
limit_full(const struct limit *l)
{
	return l->max > 0 && l->active >= l->max;
}

static void
limit_release(struct limit *l)
{
	if (l->active > 0)
		l->active--;
	/* a slot is free: the members with keys waiting take it in their next pass */
	for (struct kube_controller *m = l->members; m != NULL && !limit_full(l);
	     m = m->next_member)
		if (m->run_ev != NULL && kube_workqueue_len(m->queue) > 0)
			event_active(m->run_ev, EV_TIMEOUT, 0);
}

static void
run_cb(evutil_socket_t fd, short what, void *arg)
{
	struct kube_controller *ctl = arg;

	kube_controller_run_pending(ctl, ctl->max_per_pass);
	/* yield to I/O, then continue; at the limit a completion wakes the loop */
	if (kube_workqueue_len(ctl->queue) && !limit_full(ctl->limit))
		event_active(ctl->run_ev, EV_TIMEOUT, 0);
}

static void
queue_notify(void *userdata)
{
	struct kube_controller *ctl = userdata;

	if (ctl->run_ev)
		event_active(ctl->run_ev, EV_TIMEOUT, 0);
}

int
kube_controller_new(const struct kube_controller_opts *opts, struct kube_controller **ret)
{
	struct kube_workqueue_opts qo;
	struct kube_controller *ctl;
	int rc;

	if (!opts || !opts->reconcile)
		return -EINVAL;
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return -ENOMEM;
	ctl->name = opts->name ? opts->name : "controller";
	ctl->base = opts->base;
	if (opts->clock)
		ctl->clock = *opts->clock;
	ctl->reconcile = opts->reconcile;
	ctl->userdata = opts->userdata;
	ctl->max_per_pass = opts->max_per_pass ? opts->max_per_pass : 64;
	if (opts->share_limit) {
		ctl->limit = opts->share_limit->limit;
	} else {
		ctl->limit = calloc(1, sizeof(*ctl->limit));
		if (!ctl->limit) {
			free(ctl);
			return -ENOMEM;
		}
		ctl->limit->max = opts->max_concurrent;
	}
	ctl->limit->refs++;
	ctl->next_member = ctl->limit->members;
	ctl->limit->members = ctl;
	qo = opts->queue;
	qo.base = opts->base;
	qo.clock = opts->clock;
	qo.metrics = opts->metrics;
	qo.name = ctl->name;
	rc = kube_workqueue_new(&qo, &ctl->queue);
	if (rc < 0)
		goto fail;
	if (ctl->base) {
		ctl->run_ev = event_new(ctl->base, -1, 0, run_cb, ctl);
		if (!ctl->run_ev) {
			rc = -ENOMEM;
			goto fail;
		}
		kube_workqueue_set_notify(ctl->queue, queue_notify, ctl);
	}
	if (opts->metrics) {
		/* one family per name, shared by every controller of the registry */
		ctl->m_total =
		    metrics_add_const(opts->metrics, METRIC_COUNTER, "vmdhcp_reconcile_total",
			"Total number of reconciliations per controller", "controller", ctl->name,
			"result", result_names, ELEMENTSOF(result_names), NULL, 0);
		if (ctl->m_total)
			ctl->m_errors = metrics_add_const(opts->metrics, METRIC_COUNTER,
			    "vmdhcp_reconcile_errors_total",
			    "Total number of reconciliation errors per controller", "controller",
			    ctl->name, NULL, NULL, 0, NULL, 0);
		if (ctl->m_errors)
			ctl->m_latency = metrics_add_const(opts->metrics, METRIC_HISTOGRAM,
			    "vmdhcp_reconcile_time_seconds",
			    "Length of time per reconciliation per controller", "controller",
			    ctl->name, NULL, NULL, 0, latency_buckets, ELEMENTSOF(latency_buckets));
		if (!ctl->m_latency) {
			rc = -errno;
			goto fail;
		}
	}
	*ret = ctl;
	return 0;
fail:
	kube_controller_free(ctl);
	return rc;
}

struct kube_controller *
kube_controller_free(struct kube_controller *ctl)
{
	if (!ctl)
		return NULL;
	for (struct kube_controller **m = &ctl->limit->members; *m; m = &(*m)->next_member) {
		if (*m == ctl) {
			*m = ctl->next_member;
			break;
		}
	}
	if (--ctl->limit->refs == 0)
		free(ctl->limit);
	if (ctl->run_ev)
		event_free(ctl->run_ev);
	kube_workqueue_free(ctl->queue);
	free(ctl);
	return NULL;
}

int
kube_controller_enqueue(struct kube_controller *ctl, const char *key)
{
	return kube_workqueue_add(ctl->queue, key);
}

struct kube_workqueue *
kube_controller_queue(struct kube_controller *ctl)
{
	return ctl->queue;
}

unsigned
kube_controller_active(const struct kube_controller *ctl)
{
	return ctl->limit->active;
}

void
kube_controller_get_stats(const struct kube_controller *ctl, struct kube_controller_stats *ret)
{
	*ret = ctl->stats;
}

static void
apply_result(struct kube_controller *ctl, const char *key, struct kube_reconcile_result res)
{
	/* the queue counts its retries (rate-limited adds) itself */
	switch (res.action) {
	case KUBE_RECONCILE_OK:
		metric_inc(ctl->m_total, RESULT_SUCCESS);
		kube_workqueue_forget(ctl->queue, key);
		break;
	case KUBE_RECONCILE_REQUEUE:
		ctl->stats.requeues++;
		metric_inc(ctl->m_total, RESULT_REQUEUE);
		kube_workqueue_add_rate_limited(ctl->queue, key);
		break;
	case KUBE_RECONCILE_REQUEUE_AFTER:
		metric_inc(ctl->m_total, RESULT_REQUEUE);
		kube_workqueue_forget(ctl->queue, key);
		kube_workqueue_add_after(ctl->queue, key, res.after_usec);
		break;
	case KUBE_RECONCILE_ERROR:
	default:
		ctl->stats.errors++;
		ctl->stats.requeues++;
		metric_inc(ctl->m_total, RESULT_ERROR);
		metric_inc(ctl->m_errors, 0);
		kube_workqueue_add_rate_limited(ctl->queue, key);
		break;
	}
}

void
kube_controller_complete(
    struct kube_controller *ctl, const char *key, struct kube_reconcile_result res)
{
	char *copy = strdup(key); /* key may be the queue's own string */

	if (!copy)
		return;
	if (res.action == KUBE_RECONCILE_PENDING)
		res.action = KUBE_RECONCILE_ERROR;
	apply_result(ctl, copy, res);
	kube_workqueue_done(ctl->queue, copy);
	free(copy);
	limit_release(ctl->limit);
}

unsigned
kube_controller_run_pending(struct kube_controller *ctl, unsigned max)
{
	unsigned n = 0;
	const char *key;

	while (n < max && !limit_full(ctl->limit) && kube_workqueue_get(ctl->queue, &key) == 0) {
		uint64_t t0 = kube_clock_now(&ctl->clock);
		struct kube_reconcile_result res;
		uint64_t t1;

		ctl->limit->active++; /* released below, or by kube_controller_complete */
		res = ctl->reconcile(ctl->userdata, key);
		t1 = kube_clock_now(&ctl->clock);

		n++;
		ctl->stats.reconciles++;
		/* seconds, as the family's name says (the clock counts microseconds) */
		metric_observe(ctl->m_latency, 0, (double)(t1 - t0) / (double)USEC_PER_SEC);
		if (res.action == KUBE_RECONCILE_PENDING)
			continue;
		apply_result(ctl, key, res);
		kube_workqueue_done(ctl->queue, key);
		ctl->limit->active--; /* no wake-up: this loop goes on */
	}
	return n;
}

static void
handler_add(void *userdata, const char *key, const void *item)
{
	kube_controller_enqueue(userdata, key);
}

static void
handler_update(void *userdata, const char *key, const void *old, const void *item)
{
	kube_controller_enqueue(userdata, key);
}

struct kube_informer_handlers
kube_controller_handlers(struct kube_controller *ctl)
{
	return (struct kube_informer_handlers){
	    .on_add = handler_add,
	    .on_update = handler_update,
	    .on_delete = handler_add,
	    .userdata = ctl,
	};
}
