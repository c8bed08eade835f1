/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller's start-up and life cycle: the resources, the runtime state of each IPPool
 * (its netpool), start-up once leading and every cache synced (IPAM built from the caches,
 * reconcilers started, everything enqueued), readiness. What is watched and how keys are
 * enqueued is in informers.c, the writes in writes.c, the metrics in metrics.c.
 */
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

const struct kube_resource ctrl_res_ippools = {
    CRD_GROUP, CRD_VERSION, IPPOOL_PLURAL, IPPOOL_KIND, true};
const struct kube_resource ctrl_res_vmnetcfgs = {
    CRD_GROUP, CRD_VERSION, VMNETCFG_PLURAL, VMNETCFG_KIND, true};
const struct kube_resource ctrl_res_vms = {
    "kubevirt.io", "v1", "virtualmachines", "VirtualMachine", true};
const struct kube_resource ctrl_res_nads = {
    "k8s.cni.cncf.io", "v1", "network-attachment-definitions", "NetworkAttachmentDefinition", true};
const struct kube_resource ctrl_res_deployments = {"apps", "v1", "deployments", "Deployment", true};

static char *
xstrdup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

uint64_t
ctrl_now_usec(const struct ctrl *c)
{
	return kube_clock_now(c->opts.clock);
}

/* --- pools runtime ---------------------------------------------------------------------- */

struct pool_rt *
ctrl_pool_rt(struct ctrl *c, const char *pool_key)
{
	for (struct pool_rt *rt = c->pools; rt != NULL; rt = rt->next)
		if (strcmp(rt->key, pool_key) == 0)
			return rt;
	return NULL;
}

struct pool_rt *
ctrl_pool_rt_by_network(struct ctrl *c, const char *network)
{
	for (struct pool_rt *rt = c->pools; rt != NULL; rt = rt->next)
		if (strcmp(rt->network, network) == 0)
			return rt;
	return NULL;
}

struct netpool *
ctrl_lookup(void *userdata, const char *network, enum netpool_avail *avail)
{
	struct ctrl *c = userdata;
	struct pool_rt *rt = ctrl_pool_rt_by_network(c, network);

	if (rt != NULL && rt->np != NULL) {
		*avail = NETPOOL_READY;
		return rt->np;
	}
	/* an IPPool for the network exists but its IPAM is not built (yet) */
	*avail = rt != NULL || kube_store_index_count(
				   kube_informer_store(c->inf_pool), "network", network) > 0
		     ? NETPOOL_NOT_READY
		     : NETPOOL_ABSENT;
	return NULL;
}

/* --- start-up, readiness ----------------------------------------------------------------- */

bool
ctrl_synced(const struct ctrl *c)
{
	for (size_t i = 0; i < ctrl_n_kinds; i++)
		if (!kube_informer_has_synced(
			*ctrl_kind_informer((struct ctrl *)c, &ctrl_kinds[i])))
			return false;
	return ctrl_migrate_synced(c);
}

/*
 * Whether the API server has been out of reach for the outage threshold: every informer's
 * list/watch failing (one failing alone is a problem of its resource, e.g. RBAC, which the
 * reason describes anyway), the last of them since longer than the threshold. The seconds
 * it has lasted in *secs.
 */
static bool
api_unreachable(const struct ctrl *c, int64_t *secs)
{
	uint64_t limit = c->opts.api_outage_usec ? c->opts.api_outage_usec : CTRL_API_OUTAGE_USEC;
	int64_t latest = 0, now = clock_realtime_usec();
	size_t n = 0;

	for (size_t i = 0; i < ctrl_n_kinds; i++) {
		struct kube_informer *inf = *ctrl_kind_informer((struct ctrl *)c, &ctrl_kinds[i]);
		struct kube_informer_stats st;

		if (inf == NULL)
			continue;
		kube_informer_get_stats(inf, &st);
		if (st.failures == 0)
			return false;
		latest = MAX(latest, st.failing_since);
		n++;
	}
	if (n == 0 || now < latest * 1000000)
		return false;
	*secs = now / 1000000 - latest;
	return (uint64_t)(now - latest * 1000000) >= limit;
}

bool
ctrl_ready(struct ctrl *c, char *reason, size_t len)
{
	int64_t secs = 0;

	if (!ctrl_synced(c)) {
		snprintf(reason, len, "caches not synced");
		return false;
	}
	/*
	 * Not ready while the API server is out of reach (a short outage is ridden out): the
	 * caches go stale and no write lands. Liveness (/healthz) stays: a restart would not
	 * bring the API server back. The admission webhook on this replica leaves the Service
	 * with it (its decisions read the same stale caches); replicas that still reach the API
	 * server keep serving it.
	 */
	if (api_unreachable(c, &secs)) {
		snprintf(reason, len, "API server unreachable for %llds", (long long)secs);
		return false;
	}
	if (c->leading && !c->reconciling) {
		snprintf(reason, len, "leader, reconcilers not started");
		return false;
	}
	return true;
}

void
ctrl_describe_failures(struct ctrl *c, char *reason, size_t len)
{
	/* "IPPool informer: list failed: ... since ..." */
	for (size_t i = 0; i < ctrl_n_kinds; i++) {
		struct kube_informer *inf = *ctrl_kind_informer(c, &ctrl_kinds[i]);
		size_t used = strlen(reason);
		char why[512];

		if (inf != NULL && used + 1 < len &&
		    kube_informer_describe_failure(inf, why, sizeof(why)))
			snprintf(reason + used, len - used, "; %s", why);
	}
}

static int
build_visit(void *userdata, const char *key, const void *item)
{
	struct ctrl *c = userdata;
	const struct pool_item *it = item;
	struct pool_rt *rt;

	if (it->pool == NULL || ctrl_pool_rt_by_network(c, it->pool->spec.network_name) != NULL)
		return 0;
	rt = calloc(1, sizeof(*rt));
	if (rt == NULL)
		return 0;
	snprintf(rt->key, sizeof(rt->key), "%s", key);
	snprintf(rt->network, sizeof(rt->network), "%s", it->pool->spec.network_name);
	rt->uid = xstrdup(it->meta.uid);
	rt->next = c->pools;
	c->pools = rt;
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

	for (size_t i = 0; i < ctrl_n_kinds; i++) {
		const struct ctrl_kind *k = &ctrl_kinds[i];
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
	{
		char counts[256] = "";
		size_t used = 0;

		/* "caches synced: 1 IPPools, 2 VMNetCfgs, 2 VMs; reconciling" */
		for (size_t i = 0; i < ctrl_n_kinds; i++) {
			const struct ctrl_kind *k = &ctrl_kinds[i];
			int n;

			if (k->reconcile == NULL || used >= sizeof(counts))
				continue;
			n = snprintf(counts + used, sizeof(counts) - used, "%s%zu %s",
			    used > 0 ? ", " : "",
			    kube_store_len(kube_informer_store(*ctrl_kind_informer(c, k))),
			    k->what);
			used += n > 0 ? (size_t)n : 0;
		}
		log_info("caches synced: %s; reconciling", counts);
	}
	for (size_t i = 0; i < ctrl_n_kinds; i++) {
		const struct ctrl_kind *k = &ctrl_kinds[i];

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

int
ctrl_new(struct event_base *base, struct kube_client *client, struct metrics *metrics,
    const struct ctrl_opts *opts, struct ctrl **ret)
{
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
	    placement_opts_copy(&c->agent, opts->agent) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	if ((r = kube_recorder_new(client, CTRL_COMPONENT, NULL, &c->recorder)) < 0 ||
	    (r = ctrl_metrics_add(c)) < 0)
		goto fail;
	c->sync_ev = event_new(base, -1, EV_PERSIST, sync_cb, c);
	c->trim_ev = event_new(base, -1, EV_PERSIST, trim_cb, c);
	if (c->sync_ev == NULL || c->trim_ev == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < ctrl_n_kinds; i++) {
		const struct ctrl_kind *d = &ctrl_kinds[i];
		struct kube_informer_opts io = {
		    .res = d->res,
		    .ns = d->in_namespace ? c->namespace : NULL,
		    .label_selector = d->label_selector,
		    .resync_usec = opts->resync_usec,
		    /* a page of big objects is decoded at once: small pages keep the peak low */
		    .page_size = CTRL_LIST_PAGE,
		    .transform = d->transform,
		    .destroy = d->destroy,
		    .transform_userdata = c,
		    .clock = opts->clock,
		};
		struct kube_informer_handlers h = d->handlers;
		struct kube_informer **slot = ctrl_kind_informer(c, d);

		h.userdata = c;
		if ((r = kube_informer_new(client, &io, slot)) < 0)
			goto fail;
		if (d->index != NULL &&
		    (r = kube_informer_add_index(*slot, d->index_name, d->index)) < 0)
			goto fail;
		if ((r = kube_informer_add_handlers(*slot, &h)) < 0)
			goto fail;
	}
	for (size_t i = 0; i < ctrl_n_kinds; i++) {
		if ((r = kube_informer_start(*ctrl_kind_informer(c, &ctrl_kinds[i]))) < 0)
			goto fail;
	}
	if ((r = ctrl_migrate_new(c)) < 0)
		goto fail;
	{
		struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
		struct timeval trim = {.tv_sec = 5, .tv_usec = 0};

		event_add(c->sync_ev, &tv);
		event_add(c->trim_ev, &trim);
	}
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
	for (size_t i = 0; i < ctrl_n_kinds; i++)
		if (ctrl_kinds[i].reconcile != NULL)
			*ctrl_kind_controller(c, &ctrl_kinds[i]) =
			    kube_controller_free(*ctrl_kind_controller(c, &ctrl_kinds[i]));
	for (size_t i = 0; i < ctrl_n_kinds; i++)
		kube_informer_free(*ctrl_kind_informer(c, &ctrl_kinds[i]));
	ctrl_migrate_free(c);
	if (c->sync_ev != NULL)
		event_free(c->sync_ev);
	if (c->trim_ev != NULL)
		event_free(c->trim_ev);
	kube_recorder_free(c->recorder);
	for (rt = c->pools; rt != NULL; rt = next) {
		next = rt->next;
		netpool_free(rt->np);
		free(rt->uid);
		free(rt);
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
