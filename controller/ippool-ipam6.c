/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The IPv6 half of an IPPool's IPAM (spec.ipv6Config): rebuilt from the union of the VMNetCfg
 * statuses (allocatedIPv6Address, the commit point) and the pool's status.ipv6.allocated, as
 * the IPv4 half is (ippool-ipam.c); made when an ipv6Config appears, dropped (its bindings
 * released) when it goes, kept in step with range changes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctrl-internal.h"
#include "lib/ip6.h"
#include "lib/log.h"

struct gather6 {
	const char *network;
	bool removed; /* this pass: the NICs no longer in their spec (else those in it) */
	const struct ippool_status *pool_status; /* NULL: ignored (did not decode) */
	struct netpool6_source *src;
	char **owners;
	size_t n, cap;
	int error;
};

static int
push(struct gather6 *g, const struct in6_addr *a, const uint8_t mac[MAC_LEN], const char *owner)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		struct netpool6_source *s = realloc(g->src, cap * sizeof(*s));
		char **o;

		if (s == NULL)
			return -ENOMEM;
		g->src = s;
		if ((o = realloc(g->owners, cap * sizeof(*o))) == NULL)
			return -ENOMEM;
		g->owners = o;
		g->cap = cap;
	}
	g->owners[g->n] = owner != NULL ? strdup(owner) : NULL;
	if (owner != NULL && g->owners[g->n] == NULL)
		return -ENOMEM;
	g->src[g->n].addr = *a;
	memcpy(g->src[g->n].mac, mac, MAC_LEN);
	g->src[g->n].owner = g->owners[g->n];
	g->n++;
	return 0;
}

static int
gather_cfg(void *userdata, const char *key, const void *item)
{
	struct gather6 *g = userdata;
	const struct cfg_item *it = item;

	/* a paused VMNetCfg holds nothing (ippool-ipam.c says why) */
	if (it->cfg == NULL || it->cfg->spec.paused)
		return 0;
	for (size_t i = 0; i < it->cfg->status.n_nics; i++) {
		const struct vmnetcfg_nic_status *n = &it->cfg->status.nics[i];
		const struct ippool_alloc6 *a;
		uint8_t mac[MAC_LEN];

		if (ipv6_is_zero(&n->allocated_ipv6) || strcmp(n->network_name, g->network) != 0 ||
		    mac_parse(n->mac, mac) < 0)
			continue;
		/* a Pending NIC's address counts only as the pool status shows it: held while
		 * it waits for its other address or a static one, only remembered after a pause */
		if (ctrl_cfg_asks(it->cfg, n) == g->removed)
			continue;
		if (n->state == VMNETCFG_STATE_PENDING &&
		    (g->pool_status == NULL ||
			(a = ippool_status_find6(g->pool_status, &n->allocated_ipv6)) == NULL ||
			a->kind != IPPOOL_ALLOC_MAC || memcmp(a->mac, mac, MAC_LEN) != 0))
			continue;
		if ((g->error = push(g, &n->allocated_ipv6, mac, key)) < 0)
			return 1;
	}
	return 0;
}

static void
gather_clear(struct gather6 *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->owners[i]);
	free(g->owners);
	free(g->src);
}

/* Each conflict logged, recorded as a Warning Event and added to rt->conflicts. */
static void
report(struct ctrl *c, const struct pool_item *it, struct pool_rt *rt, const struct gather6 *g,
    const struct netpool6_conflict *conf, int n)
{
	json_t *ref = n > 0 ? ctrl_event_ref(it->meta.ns, it->meta.name, it->meta.uid) : NULL;

	for (int i = 0; i < n; i++) {
		const struct netpool6_source *a = &g->src[conf[i].first],
					     *b = &g->src[conf[i].second];
		char ip[IPV6_STRLEN], mac_a[MAC_STRLEN], mac_b[MAC_STRLEN], line[240];
		size_t len = strlen(rt->conflicts);

		ipv6_format(&conf[i].addr, ip);
		mac_format(a->mac, mac_a);
		mac_format(b->mac, mac_b);
		snprintf(line, sizeof(line), "%s %s: %s (%s) vs %s (%s)",
		    ipam_conflict_kind_name(conf[i].kind), ip, mac_a,
		    a->owner != NULL ? a->owner : "IPPool status", mac_b,
		    b->owner != NULL ? b->owner : "IPPool status");
		log_warn("ippool %s: IPv6 IPAM conflict: %s", rt->key, line);
		if (ref != NULL)
			kube_record_event(c->recorder, ref, CRD_API_VERSION, IPPOOL_KIND, "Warning",
			    "IPAMConflict", "%s", line);
		if (len + 3 < sizeof(rt->conflicts))
			snprintf(rt->conflicts + len, sizeof(rt->conflicts) - len, "%s%s",
			    len > 0 ? "; " : "", line);
	}
	json_decref(ref);
}

int
ctrl_pool_build6(struct ctrl *c, const struct pool_item *it, struct pool_rt *rt)
{
	const struct ippool *pool = it->pool;
	struct gather6 g = {
	    .network = rt->network, .pool_status = it->status_error == NULL ? &pool->status : NULL};
	struct netpool6_conflict *conf = NULL;
	int n, r;

	rt->range6_error = 0;
	if ((r = netpool_reset_ipv6(rt->np, &pool->spec)) < 0)
		return r;
	rt->range6_hash = pool->spec.has_ipv6 ? netpool6_range_hash(&pool->spec.ipv6) : 0;
	if (netpool_v6(rt->np) == NULL)
		return 0;
	/* VMNetCfg statuses first (the commit point), then the IPPool's derived view */
	/* the NICs their specs still ask for first, then those removed whose release was not
	 * committed yet: a removed NIC never keeps an address from one still asked for */
	kube_store_by_index(
	    kube_informer_store(c->inf_cfg), "network", rt->network, gather_cfg, &g);
	g.removed = true;
	if (g.error == 0)
		kube_store_by_index(
		    kube_informer_store(c->inf_cfg), "network", rt->network, gather_cfg, &g);
	for (size_t i = 0; g.error == 0 && g.pool_status != NULL && i < pool->status.n_allocated6;
	     i++)
		if (pool->status.allocated6[i].kind == IPPOOL_ALLOC_MAC)
			g.error = push(&g, &pool->status.allocated6[i].addr,
			    pool->status.allocated6[i].mac, NULL);
	if ((r = g.error) < 0 ||
	    (r = n = netpool6_rebuild(netpool_v6(rt->np), g.src, g.n, &conf)) < 0) {
		(void)netpool_reset_ipv6(rt->np, &pool->spec); /* empty, never half built */
		gather_clear(&g);
		return r;
	}
	report(c, it, rt, &g, conf, n);
	rt->n_conflicts += (size_t)n;
	free(conf);
	gather_clear(&g);
	rt->kick = true;
	log_info("ippool %s: IPv6 IPAM built for %s: %zu bindings, %d conflicts", rt->key,
	    rt->network, netpool6_size(netpool_v6(rt->np)), n);
	return 0;
}

/* A range change of the IPv6 half applied, or refused (said once per refusal). */
static void
apply_range6(struct ctrl *c, const char *key, const struct pool_item *it, struct pool_rt *rt)
{
	struct in6_addr conflict = {0};
	int r = netpool_set_range6(rt->np, &it->pool->spec, &conflict);
	char ip[IPV6_STRLEN];
	json_t *ref;

	if (r == 0) {
		rt->range6_hash = netpool6_range_hash(&it->pool->spec.ipv6);
		rt->range6_error = 0;
		rt->kick = true;
		log_info("ippool %s: IPv6 range changed", key);
		return;
	}
	if (rt->range6_error == r && ipv6_equal(&rt->range6_conflict, &conflict))
		return;
	rt->range6_error = r;
	rt->range6_conflict = conflict;
	ipv6_format(&conflict, ip);
	log_warn("ippool %s: IPv6 range change refused: %s", key,
	    r == -EBUSY ? "a bound address would be stranded" : strerror(-r));
	ref = ctrl_event_ref(it->meta.ns, it->meta.name, it->meta.uid);
	if (ref != NULL)
		kube_record_event(c->recorder, ref, CRD_API_VERSION, IPPOOL_KIND, "Warning",
		    "RangeChangeRefused",
		    r == -EBUSY ? "bound IPv6 address %s would fall outside the new ipv6Config "
				  "range or on an exclude"
				: "invalid ipv6Config range (%s)",
		    r == -EBUSY ? ip : strerror(-r));
	json_decref(ref);
}

void
ctrl_pool_ensure_ipam6(
    struct ctrl *c, const char *key, const struct pool_item *it, struct pool_rt *rt)
{
	const struct ippool_spec *spec = &it->pool->spec;
	bool had = netpool_v6(rt->np) != NULL;
	int r;

	if (!netpool_same_ipv6(rt->np, spec)) {
		/* an ipv6Config added, removed, or its network changed: the half anew. Removed:
		 * its bindings are released; every NIC of the network is computed again (its
		 * status drops, or gets, the IPv6 address). */
		if ((r = ctrl_pool_build6(c, it, rt)) < 0) {
			/* never a pool that serves IPv4 alone while its spec asks for both */
			log_warn("ippool %s: IPv6 IPAM not built: %s", key, strerror(-r));
			rt->np = netpool_free(rt->np);
			rt->build_error = r;
		} else
			log_info("ippool %s: ipv6Config %s", key,
			    !spec->has_ipv6 ? "removed: IPv6 bindings released"
			    : had	    ? "network changed: IPv6 IPAM rebuilt"
					    : "added");
		ctrl_enqueue_cfgs_of_network(c, rt->network, false);
	} else if (spec->has_ipv6 && rt->range6_hash != netpool6_range_hash(&spec->ipv6)) {
		apply_range6(c, key, it, rt);
	}
}

bool
ctrl_pool_range6_facts(const struct pool_rt *rt, char *msg, size_t len)
{
	char ip[IPV6_STRLEN];

	if (rt->range6_error == 0)
		return false;
	if (rt->range6_error == -EBUSY) {
		ipv6_format(&rt->range6_conflict, ip);
		snprintf(msg, len,
		    "ipv6Config range change refused: bound address %s would be "
		    "stranded",
		    ip);
	} else {
		snprintf(
		    msg, len, "ipv6Config range change refused: %s", strerror(-rt->range6_error));
	}
	return true;
}
