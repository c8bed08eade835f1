/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller's /metrics. Every replica exports vmdhcp_controller_leader (1 while it
 * leads) and vmdhcp_controller_api_writes_total. The leader, once it reconciles, exports one
 * series per IPPool and family (vmdhcp_ippool_*), labelled namespace, pool and network
 * (spec.networkName): only the leader has the IPAM, so a follower exports none of them and a
 * sum() over the replicas counts each pool once. A pool with an ipv6Config also has
 * vmdhcp_ippool_ipv6_used_addresses and vmdhcp_ippool_ipv6_available_addresses (their own
 * families, so the IPv4 series keep their label sets). The series are produced from the caches at
 * each scrape, so a deleted pool's go with it. Labels are object names (bounded), never a
 * MAC or an address.
 *
 * Beside them, the Go project's series under its names and labels (upstream
 * pkg/metrics/metrics.go, set by pkg/controller/ippool/controller.go and
 * pkg/controller/vmnetcfg/controller.go), from the same caches and on the leader only too:
 *   vmdhcpcontroller_ippool_used{ippool,cidr,network}       addresses bound (status.ipv4.used)
 *   vmdhcpcontroller_ippool_available{ippool,cidr,network}  addresses free (status.ipv4.available)
 *   vmdhcpcontroller_vmnetcfg_status{vmnetcfg,network,mac,ip,state} 1 per NIC in the status of
 *                                                          a VMNetCfg that is not paused
 * ippool and vmnetcfg are "namespace/name", cidr the spec's ipv4Config.cidr, network the
 * networkName, state the NIC's status state (Allocated, Pending, Stale), ip "" while it has
 * none; a paused IPPool has no ippool series. These carry a MAC and an address by upstream's
 * design: one series per NIC.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctrl-internal.h"
#include "lib/metrics.h"

enum { BINDING_ALLOCATED, BINDING_PENDING, BINDING_STALE, N_BINDING_STATES };
static const char *const binding_states[N_BINDING_STATES] = {"allocated", "pending", "stale"};
static const char *const conditions[] = {IPPOOL_COND_REGISTERED, IPPOOL_COND_CACHE_READY,
    IPPOOL_COND_AGENT_READY, IPPOOL_COND_STOPPED, IPPOOL_COND_STATUS_FULL};

/* --- gathering (before each render) ----------------------------------------------------- */

static int
sample_visit(void *userdata, const char *key, const void *item)
{
	struct ctrl *c = userdata;
	const struct pool_item *it = item;

	if (it->pool == NULL) /* the spec does not decode: no network to name */
		return 0;
	if (c->n_samples == c->cap_samples) {
		size_t cap = c->cap_samples ? c->cap_samples * 2 : 16;
		struct ctrl_pool_sample *s = realloc(c->samples, cap * sizeof(*s));

		if (s == NULL)
			return 1; /* this scrape shows the pools gathered so far */
		c->samples = s;
		c->cap_samples = cap;
	}
	c->samples[c->n_samples++] = (struct ctrl_pool_sample){.it = it, .key = key};
	return 0;
}

static int
sample_cmp(const void *a, const void *b)
{
	return strcmp(
	    ((const struct ctrl_pool_sample *)a)->key, ((const struct ctrl_pool_sample *)b)->key);
}

struct binding_count {
	const char *network;
	double *counts;
};

static int
count_bindings(void *userdata, const char *key, const void *item)
{
	struct binding_count *bc = userdata;
	const struct cfg_item *it = item;

	if (it->cfg == NULL)
		return 0;
	for (size_t i = 0; i < it->cfg->status.n_nics; i++) {
		const struct vmnetcfg_nic_status *n = &it->cfg->status.nics[i];

		if (strcmp(n->network_name, bc->network) != 0)
			continue;
		switch (n->state) {
		case VMNETCFG_STATE_ALLOCATED:
			bc->counts[BINDING_ALLOCATED]++;
			break;
		case VMNETCFG_STATE_PENDING:
			bc->counts[BINDING_PENDING]++;
			break;
		case VMNETCFG_STATE_STALE:
			bc->counts[BINDING_STALE]++;
			break;
		default:
			break;
		}
	}
	return 0;
}

/*
 * The registry's collect hook. The samples borrow cache items: valid for this render only
 * (one thread: nothing changes the caches until it returns).
 */
static void
collect(void *userdata)
{
	struct ctrl *c = userdata;

	metric_set(c->m_leader, 0, c->leading ? 1 : 0);
	c->n_samples = 0;
	/* a follower has no IPAM, and a leader's caches are complete only once it reconciles */
	if (!c->leading || !c->reconciling)
		return;
	kube_store_foreach(kube_informer_store(c->inf_pool), sample_visit, c);
	if (c->n_samples == 0)
		return;
	/* sorted by key: a stable order, and each pool runtime finds its sample in log n */
	qsort(c->samples, c->n_samples, sizeof(*c->samples), sample_cmp);
	for (const struct pool_rt *rt = c->pools; rt != NULL; rt = rt->next) {
		struct ctrl_pool_sample want = {.key = rt->key}, *s;

		s = bsearch(&want, c->samples, c->n_samples, sizeof(*c->samples), sample_cmp);
		if (s != NULL)
			s->rt = rt;
	}
	for (size_t i = 0; i < c->n_samples; i++) {
		struct ctrl_pool_sample *s = &c->samples[i];
		struct binding_count bc = {.counts = s->bindings};

		memset(s->bindings, 0, sizeof(s->bindings));
		/* the NICs on a network are the bindings of the pool serving it (a second pool
		 * on that network has no runtime: it serves nothing) */
		if (s->rt == NULL)
			continue;
		bc.network = s->rt->network;
		kube_store_by_index(kube_informer_store(c->inf_cfg), "network", s->rt->network,
		    count_bindings, &bc);
	}
}

/* --- the vmdhcp_ippool_* families -------------------------------------------------------- */

enum family {
	FAM_CAPACITY,
	FAM_USED,
	FAM_AVAILABLE,
	FAM_EXCLUDED,
	FAM_BINDINGS,
	FAM_CONDITION,
	FAM_STATUS_BYTES,
	FAM_STATUS_BUDGET,
	FAM_USED6,
	FAM_AVAILABLE6,
};

static void
emit_pools(struct metric_emitter *e, const struct ctrl *c, enum family f)
{
	for (size_t i = 0; i < c->n_samples; i++) {
		const struct ctrl_pool_sample *s = &c->samples[i];
		struct metric_label l[4] = {
		    {"namespace", s->it->meta.ns},
		    {"pool", s->it->meta.name},
		    {"network", s->it->pool->spec.network_name},
		};
		struct ipam_counts n;

		if (f == FAM_BINDINGS) {
			l[3].name = "state";
			for (size_t k = 0; k < N_BINDING_STATES; k++) {
				l[3].value = binding_states[k];
				metric_emit(e, l, 4, s->bindings[k]);
			}
			continue;
		}
		if (f == FAM_CONDITION) {
			l[3].name = "condition";
			for (size_t k = 0; k < ELEMENTSOF(conditions); k++) {
				const struct crd_condition *cond = crd_conditions_get(
				    &s->it->pool->status.conditions, conditions[k]);

				/* StatusFull: only on a pool that has had it */
				if (cond == NULL &&
				    strcmp(conditions[k], IPPOOL_COND_STATUS_FULL) == 0)
					continue;
				l[3].value = conditions[k];
				metric_emit(
				    e, l, 4, cond != NULL && cond->status == CRD_COND_TRUE ? 1 : 0);
			}
			continue;
		}
		/* no IPAM (not built yet, a bad range, a second pool on a network): no address
		 * counts rather than zeros that would read as an exhausted pool */
		if (s->rt == NULL || s->rt->np == NULL)
			continue;
		if (f == FAM_USED6 || f == FAM_AVAILABLE6) {
			const struct netpool6 *v6 = netpool_v6(s->rt->np);

			/* only the pools with an ipv6Config have IPv6 series */
			if (v6 != NULL)
				metric_emit(e, l, 3,
				    f == FAM_USED6 ? (double)netpool6_used(v6)
						   : (double)netpool6_available(v6));
			continue;
		}
		netpool_counts(s->rt->np, &n);
		switch (f) {
		case FAM_CAPACITY:
			metric_emit(e, l, 3, (double)n.used + (double)n.available);
			break;
		case FAM_USED:
			metric_emit(e, l, 3, n.used);
			break;
		case FAM_AVAILABLE:
			metric_emit(e, l, 3, n.available);
			break;
		case FAM_EXCLUDED:
			metric_emit(e, l, 3, (double)n.excluded + (double)n.reserved);
			break;
		case FAM_STATUS_BYTES:
			metric_emit(e, l, 3,
			    (double)s->rt->base_bytes + (double)netpool_status_bytes(s->rt->np));
			break;
		case FAM_STATUS_BUDGET:
			metric_emit(e, l, 3, (double)ctrl_ippool_budget(c));
			break;
		default:
			break;
		}
	}
}

#define EMITTER(fn, fam)                                                                           \
	static void fn(struct metric_emitter *e, void *userdata)                                   \
	{                                                                                          \
		emit_pools(e, userdata, fam);                                                      \
	}
EMITTER(emit_capacity, FAM_CAPACITY)
EMITTER(emit_used, FAM_USED)
EMITTER(emit_available, FAM_AVAILABLE)
EMITTER(emit_excluded, FAM_EXCLUDED)
EMITTER(emit_bindings, FAM_BINDINGS)
EMITTER(emit_condition, FAM_CONDITION)
EMITTER(emit_status_bytes, FAM_STATUS_BYTES)
EMITTER(emit_status_budget, FAM_STATUS_BUDGET)
EMITTER(emit_used6, FAM_USED6)
EMITTER(emit_available6, FAM_AVAILABLE6)

/* --- the Go project's vmdhcpcontroller_* families ---------------------------------------- */

static void
emit_upstream_pool(struct metric_emitter *e, void *userdata, bool used)
{
	const struct ctrl *c = userdata;

	for (size_t i = 0; i < c->n_samples; i++) {
		const struct ctrl_pool_sample *s = &c->samples[i];
		const struct ippool_spec *sp = &s->it->pool->spec;
		char cidr[IPV4_STRLEN + 3];
		struct metric_label l[3] = {
		    {"ippool", s->key},
		    {"cidr", cidr},
		    {"network", sp->network_name},
		};
		struct ipam_counts n;

		/* upstream sets them once the pool's IPAM exists, from the IPAM, and means to
		 * drop them while the pool is paused (its cleanup) */
		if (s->rt == NULL || s->rt->np == NULL || sp->paused)
			continue;
		ipv4_format(sp->cidr_addr, cidr);
		snprintf(cidr + strlen(cidr), sizeof(cidr) - strlen(cidr), "/%u", sp->prefix);
		netpool_counts(s->rt->np, &n);
		metric_emit(e, l, 3, used ? n.used : n.available);
	}
}

static void
emit_upstream_used(struct metric_emitter *e, void *userdata)
{
	emit_upstream_pool(e, userdata, true);
}

static void
emit_upstream_available(struct metric_emitter *e, void *userdata)
{
	emit_upstream_pool(e, userdata, false);
}

static int
emit_cfg_nics(void *userdata, const char *key, const void *item)
{
	struct metric_emitter *e = userdata;
	const struct cfg_item *it = item;

	/* upstream drops a VMNetCfg's series when it is paused (cleanup) */
	if (it->cfg == NULL || it->cfg->spec.paused)
		return 0;
	for (size_t i = 0; i < it->cfg->status.n_nics; i++) {
		const struct vmnetcfg_nic_status *n = &it->cfg->status.nics[i];
		char ip[IPV4_STRLEN] = "";
		struct metric_label l[5] = {
		    {"vmnetcfg", key},
		    {"network", n->network_name},
		    {"mac", n->mac},
		    {"ip", ip},
		    {"state", vmnetcfg_state_string(n->state)},
		};

		if (n->state == VMNETCFG_STATE_NONE)
			continue;
		if (n->allocated_ip != 0)
			ipv4_format(n->allocated_ip, ip);
		metric_emit(e, l, 5, 1);
	}
	return 0;
}

static void
emit_upstream_vmnetcfg(struct metric_emitter *e, void *userdata)
{
	struct ctrl *c = userdata;

	if (!c->leading || !c->reconciling)
		return;
	kube_store_foreach(kube_informer_store(c->inf_cfg), emit_cfg_nics, e);
}

int
ctrl_metrics_add(struct ctrl *c)
{
	static const struct {
		enum metric_type type;
		const char *name, *help;
		void (*emit)(struct metric_emitter *e, void *userdata);
	} fams[] = {
	    {METRIC_GAUGE, "vmdhcp_ippool_capacity_addresses",
		"Addresses the IPPool's range can hand out (neither excluded nor reserved)",
		emit_capacity},
	    {METRIC_GAUGE, "vmdhcp_ippool_used_addresses", "Addresses of the IPPool bound",
		emit_used},
	    {METRIC_GAUGE, "vmdhcp_ippool_available_addresses", "Addresses of the IPPool free",
		emit_available},
	    {METRIC_GAUGE, "vmdhcp_ippool_excluded_addresses",
		"Addresses inside the IPPool's range excluded or reserved (network, broadcast, "
		"server, router)",
		emit_excluded},
	    {METRIC_GAUGE, "vmdhcp_ippool_bindings",
		"VirtualMachineNetworkConfig NICs on the IPPool's network by state", emit_bindings},
	    {METRIC_GAUGE, "vmdhcp_ippool_condition",
		"IPPool status conditions: 1 when True, else 0", emit_condition},
	    {METRIC_GAUGE, "vmdhcp_ippool_object_bytes",
		"Estimated size of the IPPool object as stored (compact JSON), its "
		"status.ipv4.allocated included",
		emit_status_bytes},
	    {METRIC_GAUGE, "vmdhcp_ippool_ipv6_used_addresses",
		"IPv6 addresses of the IPPool's ipv6Config range bound (pools with an ipv6Config "
		"only)",
		emit_used6},
	    {METRIC_GAUGE, "vmdhcp_ippool_ipv6_available_addresses",
		"IPv6 addresses of the IPPool's ipv6Config range free, saturated at "
		"9223372036854775807 as status.ipv6.available (a /64 cannot be counted out)",
		emit_available6},
	    {METRIC_GAUGE, "vmdhcp_ippool_object_budget_bytes",
		"Most bytes an IPPool object may take (--ippool-object-budget): no binding past it",
		emit_status_budget},
	    /* the Go project's (upstream pkg/metrics/metrics.go: names and help text) */
	    {METRIC_GAUGE, "vmdhcpcontroller_ippool_used",
		"Amount of IP addresses which are in use", emit_upstream_used},
	    {METRIC_GAUGE, "vmdhcpcontroller_ippool_available",
		"Amount of IP addresses which are available", emit_upstream_available},
	    {METRIC_GAUGE, "vmdhcpcontroller_vmnetcfg_status", "Status of the vmnetcfg objects",
		emit_upstream_vmnetcfg},
	};
	struct metrics *m = c->metrics;

	if (m == NULL)
		return 0;
	c->m_leader = metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_controller_leader",
	    "1 while this replica leads (holds the Lease, or runs without leader election), "
	    "else 0");
	c->m_writes = metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_controller_api_writes_total",
	    "Writes sent to the API server");
	c->m_invalid =
	    metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_controller_ippool_invalid_total",
		"Reconciles that found an IPPool's spec invalid (logged once per error text)");
	c->m_refused =
	    metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_controller_allocations_refused_total",
		"NIC bindings refused because the IPPool's status had no room for them "
		"(PoolStatusFull)");
	c->m_too_large =
	    metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_controller_ippool_status_too_large_total",
		"IPPool status writes the API server refused as too large (HTTP 413, or etcd's "
		"request is too large)");
	if (c->m_leader == NULL || c->m_writes == NULL || c->m_invalid == NULL ||
	    c->m_refused == NULL || c->m_too_large == NULL)
		return -errno;
	for (size_t i = 0; i < ELEMENTSOF(fams); i++)
		if (metrics_add_dynamic(
			m, fams[i].type, fams[i].name, fams[i].help, fams[i].emit, c) == NULL)
			return -errno;
	/* the API answers refused for their size, and the cap (kube/limits.c) */
	if (kube_metrics_add(m) < 0)
		return -errno;
	metrics_set_collect(m, collect, c);
	return 0;
}

void
ctrl_metrics_free(struct ctrl *c)
{
	free(c->samples);
	c->samples = NULL;
	c->n_samples = c->cap_samples = 0;
}
