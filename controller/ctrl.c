/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller's context as its other files share it: the resources, the runtime state of
 * each IPPool (its netpool) and its lookups, the enqueue helpers beside the lookups they use,
 * the IPPool object budget and readiness (every cache synced, the API server in reach). The
 * lowest of the controller's core files: it calls none of them (the table of kinds it walks
 * is c->kinds, set by ctrl_new in lifecycle.c).
 */
#include "controller/ctrl-internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
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

uint64_t
ctrl_now_usec(const struct ctrl *c)
{
	return kube_clock_now(c->opts.clock);
}

uint64_t
ctrl_ippool_budget(const struct ctrl *c)
{
	return c->opts.ippool_budget != 0 ? c->opts.ippool_budget : CTRL_IPPOOL_BUDGET_DEFAULT;
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

struct pool_rt *
ctrl_pool_rt_new(struct ctrl *c, const char *key, const struct pool_item *it)
{
	struct pool_rt *rt = calloc(1, sizeof(*rt));

	if (rt == NULL)
		return NULL;
	snprintf(rt->key, sizeof(rt->key), "%s", key);
	snprintf(rt->network, sizeof(rt->network), "%s", it->pool->spec.network_name);
	rt->uid = it->meta.uid != NULL ? strdup(it->meta.uid) : NULL;
	rt->next = c->pools;
	c->pools = rt;
	return rt;
}

void
ctrl_pool_rt_free(struct pool_rt *rt)
{
	netpool_free(rt->np);
	free(rt->uid);
	free(rt->base_rv);
	free(rt);
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

/* --- enqueueing ------------------------------------------------------------------------- */

void
ctrl_enqueue_pool(struct ctrl *c, const char *pool_key)
{
	if (c->c_pool != NULL && pool_key != NULL)
		kube_controller_enqueue(c->c_pool, pool_key);
}

static int
enqueue_pool_visit(void *userdata, const char *key, const void *item)
{
	ctrl_enqueue_pool(userdata, key);
	return 0;
}

void
ctrl_enqueue_network_pool(struct ctrl *c, const char *network)
{
	kube_store_by_index(
	    kube_informer_store(c->inf_pool), "network", network, enqueue_pool_visit, c);
}

void
ctrl_enqueue_cfg(struct ctrl *c, const char *key)
{
	if (c->c_cfg != NULL)
		kube_controller_enqueue(c->c_cfg, key);
}

struct cfg_visit {
	struct ctrl *c;
	bool pending_only;
};

static int
enqueue_cfg_visit(void *userdata, const char *key, const void *item)
{
	const struct cfg_visit *v = userdata;
	const struct cfg_item *it = item;

	if (!v->pending_only || it->pending)
		ctrl_enqueue_cfg(v->c, key);
	return 0;
}

void
ctrl_enqueue_cfgs_of_network(struct ctrl *c, const char *network, bool pending_only)
{
	struct cfg_visit v = {.c = c, .pending_only = pending_only};

	kube_store_by_index(
	    kube_informer_store(c->inf_cfg), "network", network, enqueue_cfg_visit, &v);
}

void
ctrl_enqueue_vm(struct ctrl *c, const char *key)
{
	if (c->c_vm != NULL)
		kube_controller_enqueue(c->c_vm, key);
}

void
ctrl_enqueue_all_pools(struct ctrl *c)
{
	kube_store_foreach(kube_informer_store(c->inf_pool), enqueue_pool_visit, c);
}

/* --- readiness -------------------------------------------------------------------------- */

bool
ctrl_synced(const struct ctrl *c)
{
	for (size_t i = 0; i < c->n_kinds; i++)
		if (!kube_informer_has_synced(*ctrl_kind_informer((struct ctrl *)c, &c->kinds[i])))
			return false;
	/* the Go project's agent Pods (migrate.c), when watched */
	return c->inf_upstream == NULL || kube_informer_has_synced(c->inf_upstream);
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

	for (size_t i = 0; i < c->n_kinds; i++) {
		struct kube_informer *inf = *ctrl_kind_informer((struct ctrl *)c, &c->kinds[i]);
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
	for (size_t i = 0; i < c->n_kinds; i++) {
		struct kube_informer *inf = *ctrl_kind_informer(c, &c->kinds[i]);
		size_t used = strlen(reason);
		char why[512];

		if (inf != NULL && used + 1 < len &&
		    kube_informer_describe_failure(inf, why, sizeof(why)))
			snprintf(reason + used, len - used, "; %s", why);
	}
}
