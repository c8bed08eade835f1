/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller's life cycle: ctrl_new (the context, the informers of the table of kinds,
 * the take-over informer, the metrics), start-up once leading and every cache synced (each
 * pool's IPAM built from the caches, the reconcilers started, every cached key enqueued),
 * and ctrl_free. The top of the controller's core files (main.c aside): what is watched is
 * in kind-table.c, the shared context and readiness in ctrl.c.
 */
#include "controller/lifecycle.h"

#include "controller/ctrl-internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <malloc.h>

#include <event2/event.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"

static char *
xstrdup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

/* --- start-up ------------------------------------------------------------------------------ */

static int
build_visit(void *userdata, const char *key, const void *item)
{
	struct ctrl *c = userdata;
	const struct pool_item *it = item;
	struct pool_rt *rt;

	if (it->pool == NULL || ctrl_pool_rt_by_network(c, it->pool->spec.network_name) != NULL)
		return 0;
	rt = ctrl_pool_rt_new(c, key, it);
	if (rt == NULL)
		return 0;
	if (ctrl_pool_build(c, it, rt) < 0)
		log_warn("ippool %s: IPAM not built: %s", key, strerror(-rt->build_error));
	return 0;
}

static int
enqueue_visit(void *userdata, const char *key, const void *item)
{
	kube_controller_enqueue(userdata, key);
	return 0;
}

static int
start_controllers(struct ctrl *c)
{
	struct kube_controller *budget = NULL; /* the first controller of the write budget */

	for (size_t i = 0; i < c->n_kinds; i++) {
		const struct ctrl_kind *k = &c->kinds[i];
		struct kube_controller_opts o = {
		    .name = k->name,
		    .base = c->base,
		    .clock = c->opts.clock,
		    .metrics = c->metrics,
		    .reconcile = k->reconcile,
		    .userdata = c,
		    .queue = {.qps = 500, .burst = 1000, .max_delay_usec = 60 * USEC_PER_SEC},
		    .max_concurrent = k->write_budget ? CTRL_MAX_INFLIGHT : 0,
		    .share_limit = k->write_budget ? budget : NULL,
		};
		struct kube_controller **slot = ctrl_kind_controller(c, k);
		int r;

		if (k->reconcile == NULL)
			continue;
		if ((r = kube_controller_new(&o, slot)) < 0)
			return r;
		if (k->write_budget && budget == NULL)
			budget = *slot;
	}
	return 0;
}

/* "caches synced: 1 IPPools, 2 VMNetCfgs, 2 VMs; reconciling" */
static void
log_synced(struct ctrl *c)
{
	char counts[256] = "";
	size_t used = 0;

	for (size_t i = 0; i < c->n_kinds; i++) {
		const struct ctrl_kind *k = &c->kinds[i];
		int n;

		if (k->reconcile == NULL || used >= sizeof(counts))
			continue;
		n = snprintf(counts + used, sizeof(counts) - used, "%s%zu %s", used > 0 ? ", " : "",
		    kube_store_len(kube_informer_store(*ctrl_kind_informer(c, k))), k->what);
		used += n > 0 ? (size_t)n : 0;
	}
	log_info("caches synced: %s; reconciling", counts);
}

/* Once leading and synced: build every pool's IPAM from the caches, then reconcile all. */
static void
sync_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctrl *c = arg;
	int r;

	if (!c->leading || c->reconciling || !ctrl_synced(c))
		return;
	/* first: the Go project's webhook configurations refuse the writes that follow */
	ctrl_migrate_remove_webhooks(c);
	kube_store_foreach(kube_informer_store(c->inf_pool), build_visit, c);
	if ((r = start_controllers(c)) < 0)
		fatalx("cannot start the reconcilers: %s", strerror(-r));
	c->reconciling = true;
	event_del(c->sync_ev);
	log_synced(c);
	for (size_t i = 0; i < c->n_kinds; i++) {
		const struct ctrl_kind *k = &c->kinds[i];

		if (k->reconcile != NULL)
			kube_store_foreach(kube_informer_store(*ctrl_kind_informer(c, k)),
			    enqueue_visit, *ctrl_kind_controller(c, k));
	}
}

void
ctrl_lead(struct ctrl *c)
{
	c->leading = true;
	sync_cb(-1, 0, c);
}

/* Give freed heap (list pages, large status bodies) back to the system now and then. */
static void
trim_cb(evutil_socket_t fd, short what, void *arg)
{
	malloc_trim(0);
}

/* --- life cycle ------------------------------------------------------------------------- */

/* The context's own copy of opts (strings and agent knobs owned). 0 or -ENOMEM. */
static int
copy_opts(struct ctrl *c, const struct ctrl_opts *opts)
{
	c->opts = *opts;
	c->namespace = strdup(opts->namespace);
	c->agent_image = strdup(opts->agent_image);
	c->agent_sa = xstrdup(opts->agent_sa);
	c->opts.namespace = c->namespace;
	c->opts.agent_image = c->agent_image;
	c->opts.agent_sa = c->agent_sa;
	c->opts.agent = &c->agent;
	if (c->opts.requeue_usec == 0)
		c->opts.requeue_usec = 2 * USEC_PER_SEC;
	if (c->namespace == NULL || c->agent_image == NULL ||
	    (opts->agent_sa != NULL && c->agent_sa == NULL) ||
	    placement_opts_copy(&c->agent, opts->agent) < 0)
		return -ENOMEM;
	return 0;
}

/* One informer per kind of the table, with its index and handlers, then all started. */
static int
start_informers(struct ctrl *c)
{
	int r;

	for (size_t i = 0; i < c->n_kinds; i++) {
		const struct ctrl_kind *d = &c->kinds[i];
		struct kube_informer_opts io = {
		    .res = d->res,
		    .ns = d->in_namespace ? c->namespace : NULL,
		    .label_selector = d->label_selector,
		    .resync_usec = c->opts.resync_usec,
		    /* a page of big objects is decoded at once: small pages keep the peak low */
		    .page_size = CTRL_LIST_PAGE,
		    .transform = d->items->transform,
		    .destroy = d->items->destroy,
		    .transform_userdata = c,
		    .clock = c->opts.clock,
		};
		struct kube_informer_handlers h = d->handlers;
		struct kube_informer **slot = ctrl_kind_informer(c, d);

		h.userdata = c;
		if ((r = kube_informer_new(c->client, &io, slot)) < 0)
			return r;
		if (d->items->index != NULL &&
		    (r = kube_informer_add_index(*slot, d->items->index_name, d->items->index)) < 0)
			return r;
		if ((r = kube_informer_add_handlers(*slot, &h)) < 0)
			return r;
	}
	for (size_t i = 0; i < c->n_kinds; i++) {
		if ((r = kube_informer_start(*ctrl_kind_informer(c, &c->kinds[i]))) < 0)
			return r;
	}
	return 0;
}

int
ctrl_new(struct event_base *base, struct kube_client *client, struct metrics *metrics,
    const struct ctrl_opts *opts, struct ctrl **ret)
{
	struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
	struct timeval trim = {.tv_sec = 5, .tv_usec = 0};
	struct ctrl *c;
	int r;

	if (opts->namespace == NULL || opts->agent_image == NULL)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->base = base;
	c->client = client;
	c->metrics = metrics;
	c->kinds = ctrl_kinds;
	c->n_kinds = ctrl_n_kinds;
	if ((r = copy_opts(c, opts)) < 0)
		goto fail;
	if ((r = kube_recorder_new(client, CTRL_COMPONENT, NULL, &c->recorder)) < 0 ||
	    (r = ctrl_metrics_add(c)) < 0)
		goto fail;
	c->sync_ev = event_new(base, -1, EV_PERSIST, sync_cb, c);
	c->trim_ev = event_new(base, -1, EV_PERSIST, trim_cb, c);
	if (c->sync_ev == NULL || c->trim_ev == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	if ((r = start_informers(c)) < 0 || (r = ctrl_migrate_new(c)) < 0)
		goto fail;
	event_add(c->sync_ev, &tv);
	event_add(c->trim_ev, &trim);
	*ret = c;
	return 0;
fail:
	ctrl_free(c);
	return r;
}

struct ctrl *
ctrl_free(struct ctrl *c)
{
	struct pool_rt *rt, *next;

	if (c == NULL)
		return NULL;
	c->reconciling = false;
	ctrl_ops_cancel(c); /* answers still in flight will not come */
	for (size_t i = 0; i < c->n_kinds; i++)
		if (c->kinds[i].reconcile != NULL)
			*ctrl_kind_controller(c, &c->kinds[i]) =
			    kube_controller_free(*ctrl_kind_controller(c, &c->kinds[i]));
	for (size_t i = 0; i < c->n_kinds; i++)
		kube_informer_free(*ctrl_kind_informer(c, &c->kinds[i]));
	ctrl_migrate_free(c);
	if (c->sync_ev != NULL)
		event_free(c->sync_ev);
	if (c->trim_ev != NULL)
		event_free(c->trim_ev);
	kube_recorder_free(c->recorder);
	for (rt = c->pools; rt != NULL; rt = next) {
		next = rt->next;
		ctrl_pool_rt_free(rt);
	}
	while (c->invalid != NULL) {
		struct ctrl_invalid_pool *ip = c->invalid;

		c->invalid = ip->next;
		free(ip->key);
		free(ip->error);
		free(ip);
	}
	ctrl_metrics_free(c);
	free(c->namespace);
	free(c->agent_image);
	free(c->agent_sa);
	placement_opts_clear(&c->agent);
	free(c);
	return NULL;
}
