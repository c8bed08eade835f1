/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An IPPool's IPAM (its netpool): built from the caches (the VMNetCfg statuses, then the
 * pool's own status) at start-up and by the reconciler, kept in step with the spec (a new
 * object, a changed network, a range change), forgotten with the pool.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctrl-internal.h"
#include "lib/log.h"

static uint64_t
range_hash(const struct ippool_spec *s)
{
	uint64_t h = hash64(&s->start, sizeof(s->start), 0);

	h = hash64(&s->end, sizeof(s->end), h);
	return s->n_exclude > 0 ? hash64(s->exclude, s->n_exclude * sizeof(*s->exclude), h) : h;
}

/* --- IPAM build ------------------------------------------------------------------------- */

struct gather {
	const char *network;
	bool removed; /* this pass: the NICs no longer in their spec (else those in it) */
	const struct ippool_status *pool_status; /* the pool's own status (NULL: ignored) */
	struct netpool_source *src;
	char **owners;
	size_t n, cap;
	int error;
};

static int
gather_push(struct gather *g, uint32_t addr, const uint8_t mac[MAC_LEN], const char *owner)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 64;
		struct netpool_source *s = realloc(g->src, cap * sizeof(*s));
		char **o;

		if (s == NULL)
			return -ENOMEM;
		g->src = s;
		o = realloc(g->owners, cap * sizeof(*o));
		if (o == NULL)
			return -ENOMEM;
		g->owners = o;
		g->cap = cap;
	}
	g->owners[g->n] = owner != NULL ? strdup(owner) : NULL;
	if (owner != NULL && g->owners[g->n] == NULL)
		return -ENOMEM;
	g->src[g->n].addr = addr;
	memcpy(g->src[g->n].mac, mac, MAC_LEN);
	g->src[g->n].owner = g->owners[g->n];
	g->n++;
	return 0;
}

static int
gather_cfg(void *userdata, const char *key, const void *item)
{
	struct gather *g = userdata;
	const struct cfg_item *it = item;

	/* a paused VMNetCfg holds nothing: its status only remembers addresses (which other
	 * NICs may have taken since, and committed in their own statuses) */
	if (it->cfg == NULL || it->cfg->spec.paused)
		return 0;
	for (size_t i = 0; i < it->cfg->status.n_nics; i++) {
		const struct vmnetcfg_nic_status *n = &it->cfg->status.nics[i];
		const struct ippool_alloc *a;
		uint8_t mac[MAC_LEN];

		if (n->allocated_ip == 0 || strcmp(n->network_name, g->network) != 0 ||
		    mac_parse(n->mac, mac) < 0)
			continue;
		/* A Pending NIC's address is held when it keeps one while waiting for a static
		 * address (then the pool status lists it), and only remembered after a pause (then
		 * the pool status does not): it counts only as the pool status shows it. */
		if (ctrl_cfg_asks(it->cfg, n) == g->removed)
			continue;
		if (n->state == VMNETCFG_STATE_PENDING &&
		    (g->pool_status == NULL ||
			(a = ippool_status_find(g->pool_status, n->allocated_ip)) == NULL ||
			a->kind != IPPOOL_ALLOC_MAC || memcmp(a->mac, mac, MAC_LEN) != 0))
			continue;
		if ((g->error = gather_push(g, n->allocated_ip, mac, key)) < 0)
			return 1;
	}
	return 0;
}

static void
gather_clear(struct gather *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->owners[i]);
	free(g->owners);
	free(g->src);
}

static const char *
source_owner(const struct netpool_source *s)
{
	return s->owner != NULL ? s->owner : "IPPool status";
}

/*
 * What the build found, said: the pool status ignored (it did not decode) and each conflict
 * (two MACs on one address, ...) logged, recorded as a Warning Event and summed up in
 * rt->conflicts.
 */
static void
report_conflicts(struct ctrl *c, const struct pool_item *it, struct pool_rt *rt,
    const struct gather *g, const struct ipam_conflict *conf, int n)
{
	json_t *ref = ctrl_event_ref(it->meta.ns, it->meta.name, it->meta.uid);

	if (it->status_error != NULL) {
		/* its bindings could not be read: only the VMNetCfg statuses count */
		log_warn("ippool %s: status ignored: %s", rt->key, it->status_error);
		if (ref != NULL)
			kube_record_event(c->recorder, ref, CRD_API_VERSION, IPPOOL_KIND, "Warning",
			    "InvalidStatus", "status ignored and rewritten: %s", it->status_error);
		snprintf(
		    rt->conflicts, sizeof(rt->conflicts), "status ignored (%s)", it->status_error);
	}
	for (int i = 0; i < n; i++) {
		const struct netpool_source *a = &g->src[conf[i].first],
					    *b = &g->src[conf[i].second];
		char ip[IPV4_STRLEN], mac_a[MAC_STRLEN], mac_b[MAC_STRLEN], line[200];
		size_t len = strlen(rt->conflicts);

		ipv4_format(conf[i].addr, ip);
		mac_format(a->mac, mac_a);
		mac_format(b->mac, mac_b);
		snprintf(line, sizeof(line), "%s %s: %s (%s) vs %s (%s)",
		    ipam_conflict_kind_name(conf[i].kind), ip, mac_a, source_owner(a), mac_b,
		    source_owner(b));
		log_warn("ippool %s: IPAM conflict: %s", rt->key, line);
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
ctrl_pool_build(struct ctrl *c, const struct pool_item *it, struct pool_rt *rt)
{
	const struct ippool *pool = it->pool;
	struct gather g = {
	    .network = rt->network, .pool_status = it->status_error == NULL ? &pool->status : NULL};
	struct ipam_conflict *conf = NULL;
	struct netpool *np = NULL;
	int n, r;

	rt->np = netpool_free(rt->np);
	rt->n_conflicts = 0;
	rt->conflicts[0] = '\0';
	rt->range_error = 0;
	r = netpool_new(&pool->spec, &np);
	if (r < 0) {
		rt->build_error = r;
		return r;
	}
	/* VMNetCfg statuses first (the commit point), then the IPPool's derived view */
	/* the NICs their specs still ask for first, then those removed whose release was not
	 * committed yet: a removed NIC never keeps an address from one still asked for */
	kube_store_by_index(
	    kube_informer_store(c->inf_cfg), "network", rt->network, gather_cfg, &g);
	g.removed = true;
	if (g.error == 0)
		kube_store_by_index(
		    kube_informer_store(c->inf_cfg), "network", rt->network, gather_cfg, &g);
	for (size_t i = 0; g.error == 0 && i < pool->status.n_allocated; i++)
		if (pool->status.allocated[i].kind == IPPOOL_ALLOC_MAC)
			g.error = gather_push(&g, pool->status.allocated[i].addr,
			    pool->status.allocated[i].mac, NULL);
	if (g.error < 0) {
		r = g.error;
		goto fail;
	}
	n = netpool_rebuild(np, g.src, g.n, &conf);
	if (n < 0) {
		r = n;
		goto fail;
	}
	report_conflicts(c, it, rt, &g, conf, n);
	free(conf);
	rt->n_conflicts = (size_t)n + (it->status_error != NULL);
	rt->np = np;
	rt->build_error = 0;
	rt->range_hash = range_hash(&pool->spec);
	rt->kick = true;
	gather_clear(&g);
	/* the IPv6 half from its own sources (ippool-ipam6.c) */
	if ((r = ctrl_pool_build6(c, it, rt)) < 0) {
		rt->np = netpool_free(rt->np);
		rt->build_error = r;
		return r;
	}
	log_info("ippool %s: IPAM built for %s: %zu bindings, %d conflicts", rt->key, rt->network,
	    netpool_size(np), n);
	return 0;
fail:
	gather_clear(&g);
	netpool_free(np);
	rt->build_error = r;
	return r;
}

/* --- kept in step, forgotten --------------------------------------------------------------- */

struct other_pools {
	struct ctrl *c;
	const char *except;
};

static int
enqueue_other(void *userdata, const char *key, const void *item)
{
	const struct other_pools *o = userdata;

	if (strcmp(key, o->except) != 0)
		ctrl_enqueue_pool(o->c, key);
	return 0;
}

static void
enqueue_other_pools(struct ctrl *c, const char *network, const char *except)
{
	struct other_pools o = {.c = c, .except = except};

	kube_store_by_index(
	    kube_informer_store(c->inf_pool), "network", network, enqueue_other, &o);
}

void
ctrl_pool_forget(struct ctrl *c, const char *key)
{
	for (struct pool_rt **pp = &c->pools; *pp != NULL; pp = &(*pp)->next) {
		struct pool_rt *rt = *pp;

		if (strcmp(rt->key, key) != 0)
			continue;
		*pp = rt->next;
		ctrl_enqueue_cfgs_of_network(c, rt->network, false);
		/* another IPPool on that network (refused as a duplicate) may serve it now */
		enqueue_other_pools(c, rt->network, key);
		log_info("ippool %s: IPAM for %s forgotten", key, rt->network);
		ctrl_pool_rt_free(rt);
		return;
	}
}

/* A range change applied to the netpool, or refused (said once per refusal). */
static void
apply_range(struct ctrl *c, const char *key, const struct pool_item *it, struct pool_rt *rt)
{
	const struct ippool_spec *spec = &it->pool->spec;
	uint32_t conflict = 0;
	int r = netpool_set_range(rt->np, spec, &conflict);

	if (r == 0) {
		rt->range_hash = range_hash(spec);
		rt->range_error = 0;
		rt->kick = true; /* the range may have grown */
		log_info("ippool %s: range changed", key);
	} else if (rt->range_error != r || rt->range_conflict != conflict) {
		char ip[IPV4_STRLEN];
		json_t *ref = ctrl_event_ref(it->meta.ns, it->meta.name, it->meta.uid);

		rt->range_error = r;
		rt->range_conflict = conflict;
		ipv4_format(conflict, ip);
		log_warn("ippool %s: range change refused: %s", key,
		    r == -EBUSY ? "a bound address would be stranded" : strerror(-r));
		if (ref != NULL)
			kube_record_event(c->recorder, ref, CRD_API_VERSION, IPPOOL_KIND, "Warning",
			    "RangeChangeRefused",
			    r == -EBUSY ? "bound address %s would fall outside the new "
					  "range or on an exclude"
					: "invalid range (%s)",
			    r == -EBUSY ? ip : strerror(-r));
		json_decref(ref);
	}
}

/* The CacheReady facts of rt's IPAM; false when it has none. */
static bool
cache_facts(const struct pool_rt *rt, struct ippool_facts *f, char *msg, size_t len)
{
	if (rt->np == NULL) {
		f->cache_ready = false;
		f->cache_reason = "InvalidRange";
		if (rt->build_error == -E2BIG) /* any prefix is taken; the range is bounded */
			snprintf(msg, len, "the range has more than %lu addresses",
			    (unsigned long)IPAM_MAX_RANGE);
		else
			snprintf(msg, len, "the address cache cannot be built: %s",
			    strerror(-rt->build_error));
		f->cache_message = msg;
		return false;
	}
	f->cache_ready = true;
	if (rt->range_error == -EBUSY) {
		char ip[IPV4_STRLEN];

		ipv4_format(rt->range_conflict, ip);
		f->cache_reason = "RangeChangeRefused";
		snprintf(msg, len, "range change refused: bound address %s would be stranded", ip);
		f->cache_message = msg;
	} else if (rt->range_error < 0) {
		f->cache_reason = "RangeChangeRefused";
		snprintf(msg, len, "range change refused: %s", strerror(-rt->range_error));
		f->cache_message = msg;
	} else if (ctrl_pool_range6_facts(rt, msg, len)) {
		f->cache_reason = "RangeChangeRefused";
		f->cache_message = msg;
	} else if (rt->n_conflicts > 0) {
		f->cache_reason = "Conflicts";
		snprintf(msg, len, "%zu conflicts: %s", rt->n_conflicts, rt->conflicts);
		f->cache_message = msg;
	}
	return true;
}

void
ctrl_pool_ensure_ipam(struct ctrl *c, const char *key, const struct pool_item *it,
    struct pool_rt **rtp, struct ippool_facts *f, char *msg, size_t len)
{
	const struct ippool_spec *spec = &it->pool->spec;
	struct pool_rt *rt = *rtp;
	struct pool_rt *other = ctrl_pool_rt_by_network(c, spec->network_name);

	if (other != NULL && other != rt) {
		f->cache_ready = false;
		f->cache_reason = "DuplicateNetwork";
		snprintf(msg, len, "network %s is already served by IPPool %s", spec->network_name,
		    other->key);
		f->cache_message = msg;
		return;
	}
	if (rt == NULL) {
		if ((rt = ctrl_pool_rt_new(c, key, it)) == NULL) {
			f->cache_reason = "OutOfMemory";
			return;
		}
		*rtp = rt;
		ctrl_pool_build(c, it, rt);
	} else if (rt->np == NULL || !ctrl_str_eq(rt->uid, it->meta.uid) ||
		   strcmp(rt->network, spec->network_name) != 0 ||
		   !netpool_same_network(rt->np, spec)) {
		/* new object under the same name, or an immutable field changed: start over */
		if (strcmp(rt->network, spec->network_name) != 0)
			ctrl_enqueue_cfgs_of_network(c, rt->network, false);
		snprintf(rt->network, sizeof(rt->network), "%s", spec->network_name);
		free(rt->uid);
		rt->uid = it->meta.uid != NULL ? strdup(it->meta.uid) : NULL;
		ctrl_pool_build(c, it, rt);
	} else if (rt->range_hash != range_hash(spec)) {
		apply_range(c, key, it, rt);
	}
	if (rt->np != NULL)
		ctrl_pool_ensure_ipam6(c, key, it, rt);
	if (!cache_facts(rt, f, msg, len))
		return;
	if (rt->kick) {
		rt->kick = false;
		ctrl_enqueue_cfgs_of_network(c, rt->network, true);
	}
}
