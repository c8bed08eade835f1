/* SPDX-License-Identifier: Apache-2.0 */
/*
 * IPPool reconciler: finalizer, IPAM build (from the VMNetCfg statuses and the pool's own
 * status), range changes, agent placement, conditions and the coalesced status write. Reads
 * the caches, makes at most one write, returns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctrl-internal.h"
#include "controller/placement.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/metrics.h"

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

int
ctrl_pool_build(struct ctrl *c, const struct pool_item *it, struct pool_rt *rt)
{
	const struct ippool *pool = it->pool;
	struct gather g = {
	    .network = rt->network, .pool_status = it->status_error == NULL ? &pool->status : NULL};
	struct ipam_conflict *conf = NULL;
	struct netpool *np = NULL;
	json_t *ref;
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
	ref = ctrl_event_ref(it->meta.ns, it->meta.name, it->meta.uid);
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
		const struct netpool_source *a = &g.src[conf[i].first], *b = &g.src[conf[i].second];
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
	free(conf);
	rt->n_conflicts = (size_t)n + (it->status_error != NULL);
	rt->np = np;
	rt->build_error = 0;
	rt->range_hash = range_hash(&pool->spec);
	rt->kick = true;
	gather_clear(&g);
	log_info("ippool %s: IPAM built for %s: %zu bindings, %d conflicts", rt->key, rt->network,
	    netpool_size(np), n);
	return 0;
fail:
	gather_clear(&g);
	netpool_free(np);
	rt->build_error = r;
	return r;
}

static struct pool_rt *
rt_new(struct ctrl *c, const char *key, const struct pool_item *it)
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

/* Forget a pool's IPAM; the VMNetCfgs on its network are reconciled again. */
static void
rt_forget(struct ctrl *c, const char *key)
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
		netpool_free(rt->np);
		free(rt->uid);
		free(rt);
		return;
	}
}

/* --- agent ------------------------------------------------------------------------------- */

static int
first_agent(void *userdata, const char *key, const void *item)
{
	*(const struct agent_item **)userdata = item;
	return 1;
}

static const struct agent_item *
agent_of(struct ctrl *c, const char *pool_key)
{
	const struct agent_item *a = NULL;

	kube_store_by_index(kube_informer_store(c->inf_agent), "pool", pool_key, first_agent, &a);
	return a;
}

static struct kube_reconcile_result
delete_agent(struct ctrl *c, const char *key, const struct agent_item *a)
{
	struct kube_delete_opts o = {.uid = a->meta.uid, .propagation = "Background"};
	struct ctrl_op *op = ctrl_op_new(c, c->c_pool, key, "delete agent of ippool");

	log_info("ippool %s: removing agent %s/%s", key, a->meta.ns, a->meta.name);
	if (op == NULL)
		return ctrl_error(-ENOMEM);
	return ctrl_op_started(op, kube_delete(c->client, &ctrl_res_deployments, a->meta.ns,
				       a->meta.name, &o, ctrl_op_done, op, &op->call));
}

struct node_count {
	const char *cn;
	size_t ready;
};

static int
count_nodes(void *userdata, const char *key, const void *item)
{
	struct node_count *nc = userdata;
	const struct node_item *it = item;

	if (!it->ready)
		return 0;
	for (size_t i = 0; i < it->n; i++)
		if (strcmp(it->cluster_networks[i], nc->cn) == 0) {
			nc->ready++;
			break;
		}
	return 0;
}

/* --- NAD labels ------------------------------------------------------------------------ */

/*
 * The labels network.harvesterhci.io/ippool-namespace and ippool-name of a
 * NetworkAttachmentDefinition name the IPPool that serves its network, as upstream's
 * pkg/controller/ippool/controller.go (ensureNADLabels) sets them, for the tools that find a
 * network's pool through them. Ours: set by the pool that serves the network (not a second
 * pool refused as a duplicate), whether paused or not; removed once that pool is gone
 * (upstream leaves them). A merge patch of the two labels only: the NAD's other labels and
 * fields are not touched.
 */
static bool
nad_names_pool(const struct nad_item *nad, const char *ns, const char *name)
{
	return nad->pool_ns != NULL && nad->pool_name != NULL && strcmp(nad->pool_ns, ns) == 0 &&
	       strcmp(nad->pool_name, name) == 0;
}

/* Set (ns and name) or remove (NULL) the two labels of the NAD nad_key ("ns/name"). */
static struct kube_reconcile_result
patch_nad_labels(
    struct ctrl *c, const char *key, const char *nad_key, const char *ns, const char *name)
{
	char nad_ns[KIND_REF_MAX];
	const char *slash = strchr(nad_key, '/');
	struct ctrl_op *op;
	json_t *patch;
	int r;

	if (slash == NULL || (size_t)(slash - nad_key) >= sizeof(nad_ns))
		return ctrl_ok(); /* store keys of namespaced objects always have one */
	snprintf(nad_ns, sizeof(nad_ns), "%.*s", (int)(slash - nad_key), nad_key);
	patch = json_pack("{s:{s:{s:o, s:o}}}", "metadata", "labels", PLACEMENT_LABEL_POOL_NS,
	    ns != NULL ? json_string(ns) : json_null(), PLACEMENT_LABEL_POOL_NAME,
	    name != NULL ? json_string(name) : json_null());
	if (patch == NULL)
		return ctrl_error(-ENOMEM);
	log_info("ippool %s: %s the ippool labels of NetworkAttachmentDefinition %s", key,
	    ns != NULL ? "setting" : "removing", nad_key);
	op = ctrl_op_new(
	    c, c->c_pool, key, ns != NULL ? "label NAD of ippool" : "unlabel NAD of ippool");
	r = op != NULL ? kube_patch(c->client, &ctrl_res_nads, nad_ns, slash + 1, KUBE_PATCH_MERGE,
			     patch, NULL, ctrl_op_done, op, &op->call)
		       : -ENOMEM;
	json_decref(patch);
	return ctrl_op_started(op, r);
}

/* The pool it serves its network: its NAD's labels must name it. */
static struct kube_reconcile_result
ensure_nad_labels(struct ctrl *c, const char *key, const struct pool_item *it)
{
	const char *network = it->pool->spec.network_name;
	const struct nad_item *nad = kube_store_get(kube_informer_store(c->inf_nad), network);

	if (nad == NULL || nad_names_pool(nad, it->meta.ns, it->meta.name))
		return ctrl_ok();
	return patch_nad_labels(c, key, network, it->meta.ns, it->meta.name);
}

struct nad_find {
	char ns[KIND_REF_MAX];
	const char *name;
	const char *found; /* the NAD's store key (borrowed) */
};

static int
nad_find_visit(void *userdata, const char *key, const void *item)
{
	struct nad_find *f = userdata;

	if (!nad_names_pool(item, f->ns, f->name))
		return 0;
	f->found = key;
	return 1;
}

/* The pool key ("ns/name") is gone: a NAD whose labels still name it loses them. */
static struct kube_reconcile_result
remove_nad_labels(struct ctrl *c, const char *key)
{
	const char *slash = strchr(key, '/');
	struct nad_find f = {.name = slash != NULL ? slash + 1 : key};

	snprintf(f.ns, sizeof(f.ns), "%.*s", slash != NULL ? (int)(slash - key) : 0, key);
	kube_store_foreach(kube_informer_store(c->inf_nad), nad_find_visit, &f);
	if (f.found == NULL)
		return ctrl_ok();
	return patch_nad_labels(c, key, f.found, NULL, NULL);
}

/* --- the object's size ------------------------------------------------------------------- */

/* The bytes the condition StatusFull takes at most (its message is under 400 characters). */
#define CTRL_STATUS_FULL_ROOM 600

uint64_t
ctrl_ippool_budget(const struct ctrl *c)
{
	return c->opts.ippool_budget != 0 ? c->opts.ippool_budget : CTRL_IPPOOL_BUDGET_DEFAULT;
}

size_t
ctrl_ippool_base_bytes(const struct ippool *pool)
{
	struct ippool tmp = *pool; /* shallow: encode only reads */
	const struct crd_conditions *cs = &pool->status.conditions;
	struct crd_condition *kept = calloc(cs->n + 1, sizeof(*kept));
	json_t *obj;
	size_t n;

	if (kept == NULL)
		return 0;
	/* without the condition StatusFull, counted at its most (CTRL_STATUS_FULL_ROOM) */
	tmp.status.conditions.items = kept;
	tmp.status.conditions.n = 0;
	for (size_t i = 0; i < cs->n; i++)
		if (cs->items[i].type == NULL ||
		    strcmp(cs->items[i].type, IPPOOL_COND_STATUS_FULL) != 0)
			kept[tmp.status.conditions.n++] = cs->items[i];
	tmp.status.allocated = NULL;
	tmp.status.n_allocated = 0;
	tmp.status.has_ipv4 = true;
	obj = ippool_encode(&tmp);
	free(kept);
	if (obj == NULL)
		return 0;
	n = json_dumpb(obj, NULL, 0, JSON_COMPACT);
	json_decref(obj);
	/* "allocated":{…}, : the key, and the braces counted again (an empty map may be left out)
	 */
	return n + sizeof("\"allocated\":{},") - 1 + CTRL_STATUS_FULL_ROOM;
}

static void
evicted_cfg(void *userdata, const char *owner)
{
	struct ctrl *c = userdata;

	if (owner != NULL)
		ctrl_enqueue_cfg(c, owner); /* its NIC goes Pending (PoolStatusFull) */
}

/*
 * The budget of the pool's status.ipv4.allocated: the object budget less the rest of the
 * object, lowered to what the API server last refused (less 1/16) when it refused a write as
 * too large. A map over it (bindings restored from VMNetCfg statuses the pool status never
 * recorded, a lowered budget) loses its unrecorded bindings: their VMNetCfgs are reconciled
 * again, and go Pending. Fills the StatusFull facts.
 */
static void
apply_budget(struct ctrl *c, const char *key, const struct pool_item *it, struct pool_rt *rt,
    struct ippool_facts *f, char *msg, size_t len)
{
	uint64_t total = ctrl_ippool_budget(c);
	size_t budget, n;

	rt->base_bytes = ctrl_ippool_base_bytes(it->pool);
	budget = total > rt->base_bytes + 2 ? (size_t)(total - rt->base_bytes) : 2;
	if (rt->too_large_bytes != 0 && rt->too_large_bytes - rt->too_large_bytes / 16 < budget)
		budget = rt->too_large_bytes - rt->too_large_bytes / 16;
	netpool_set_budget(rt->np, budget);
	if (netpool_status_bytes(rt->np) > budget &&
	    (n = netpool_evict_unrecorded(rt->np, &it->pool->status, evicted_cfg, c)) > 0)
		log_warn("ippool %s: %zu bindings the IPPool status does not list released: the "
			 "status has no room for them",
		    key, n);
	f->status_full = netpool_status_full(rt->np) || rt->too_large_bytes != 0;
	if (netpool_omitting_excluded(rt->np) && !rt->omit_said) {
		rt->omit_said = true;
		log_warn(
		    "ippool %s: the excluded addresses (%zu bytes as EXCLUDED entries) are not "
		    "listed in status.ipv4.allocated: they would take more than half of its %zu "
		    "bytes",
		    key, netpool_excluded_bytes(rt->np), budget);
	}
	if (!f->status_full) {
		snprintf(msg, len, "status.ipv4.allocated takes %zu of at most %zu bytes%s",
		    netpool_status_bytes(rt->np), budget,
		    netpool_omitting_excluded(rt->np) ? " (excluded addresses not listed)" : "");
		f->status_full_message = msg;
		return;
	}
	f->status_full_reason =
	    rt->too_large_bytes != 0 ? IPPOOL_REASON_TOO_LARGE : IPPOOL_REASON_STATUS_FULL;
	if (rt->too_large_bytes != 0)
		snprintf(msg, len,
		    "the API server refused the status as too large (status.ipv4.allocated of %zu "
		    "bytes): no new binding past %zu bytes; new NICs stay Pending (PoolStatusFull)",
		    rt->too_large_bytes, budget);
	else
		snprintf(msg, len,
		    "no room for another binding: the IPPool object would outgrow %llu bytes "
		    "(--ippool-object-budget; status.ipv4.allocated takes %zu of at most %zu "
		    "bytes); new NICs stay Pending (PoolStatusFull)",
		    (unsigned long long)total, netpool_status_bytes(rt->np), budget);
	f->status_full_message = msg;
}

/* An answer that says the object is too large for the API server or etcd. */
static bool
answer_too_large(const struct kube_result *res)
{
	return res->http_status == 413 || (res->http_status >= 500 && res->message != NULL &&
					      strstr(res->message, "request is too large") != NULL);
}

/* The status write's answer: a refusal for its size lowers the budget (apply_budget). */
static void
status_done(void *userdata, const struct kube_result *res)
{
	struct ctrl_op *op = userdata;
	struct ctrl *c = op->c;
	struct pool_rt *rt = ctrl_pool_rt(c, op->key);
	struct kube_result again;
	char ns[KIND_REF_MAX];
	const char *slash;
	json_t *ref;

	if (res->error == 0 || !answer_too_large(res)) {
		ctrl_op_done(op, res);
		return;
	}
	if (c->m_too_large != NULL)
		metric_inc(c->m_too_large, 0);
	log_warn("ippool %s: status refused as too large (HTTP %ld: %s), status.ipv4.allocated "
		 "of %zu bytes: no new binding past it",
	    op->key, res->http_status, res->message != NULL ? res->message : "",
	    rt != NULL ? rt->written_bytes : 0);
	if (rt != NULL && (rt->too_large_bytes == 0 || rt->written_bytes < rt->too_large_bytes)) {
		rt->too_large_bytes = rt->written_bytes;
		slash = strchr(op->key, '/');
		snprintf(
		    ns, sizeof(ns), "%.*s", slash != NULL ? (int)(slash - op->key) : 0, op->key);
		ref = ctrl_event_ref(ns, slash != NULL ? slash + 1 : op->key, rt->uid);
		if (ref != NULL)
			kube_record_event(c->recorder, ref, CRD_API_VERSION, IPPOOL_KIND, "Warning",
			    IPPOOL_EVENT_STATUS_FULL,
			    "the API server refused the status as too large (%s): no new binding "
			    "past %zu bytes of status.ipv4.allocated",
			    res->message != NULL ? res->message : "", rt->too_large_bytes);
		json_decref(ref);
		/* computed again at once, with the lower budget */
		again = *res;
		again.error = -ESTALE;
		ctrl_op_done(op, &again);
		return;
	}
	ctrl_op_done(op, res); /* refused again at the same size: retried with backoff */
}

/* --- status ------------------------------------------------------------------------------ */

static bool
str_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return (a == NULL || a[0] == '\0') && (b == NULL || b[0] == '\0');
	return strcmp(a, b) == 0;
}

static int
set_agent_ref(struct ippool_status *st, const struct agent_item *a)
{
	struct ippool_agent_pod_ref *r = &st->agent_pod_ref;

	if (a == NULL)
		return 0;
	st->has_agent_pod_ref = true;
	r->namespace = a->meta.ns != NULL ? strdup(a->meta.ns) : NULL;
	r->name = a->meta.name != NULL ? strdup(a->meta.name) : NULL;
	r->image = a->image != NULL ? strdup(a->image) : NULL;
	r->uid = a->meta.uid != NULL ? strdup(a->meta.uid) : NULL;
	return 0;
}

/*
 * The one status write, when the status computed differs from the cached one. The Normal
 * Events of the transition (agent placed, pool ready) are recorded once that write succeeds.
 */
static struct kube_reconcile_result
write_status(struct ctrl *c, const char *key, const struct pool_item *it, const struct pool_rt *rt,
    const struct agent_item *agent, const struct ippool_facts *f)
{
	const struct ippool_status *old = &it->pool->status;
	time_t now = (time_t)clock_realtime_sec();
	struct ippool_event ev[IPPOOL_EVENTS_MAX];
	struct ippool_status st;
	struct ippool tmp;
	struct ctrl_op *op;
	json_t *obj, *ref;
	size_t n_ev;
	int r;

	memset(&st, 0, sizeof(st));
	if (rt != NULL && rt->np != NULL) {
		r = netpool_render_status(rt->np, &st);
	} else {
		r = ippool_status_set_allocated(&st, old->allocated, old->n_allocated);
		st.has_ipv4 = old->has_ipv4;
		st.used = old->used;
		st.available = old->available;
	}
	if (r < 0 || (r = set_agent_ref(&st, agent)) < 0 ||
	    (r = crd_conditions_copy(&st.conditions, &old->conditions)) < 0 ||
	    (r = ippool_conditions_apply(&st.conditions, f, now)) < 0)
		goto fail;
	st.last_update = old->last_update;
	if (ippool_status_equal(&st, old)) {
		ippool_status_clear(&st);
		/* the status is settled: then the NAD labels (never in the way of the status) */
		if (f->cache_reason != NULL && strcmp(f->cache_reason, "DuplicateNetwork") == 0)
			return ctrl_ok();
		return ensure_nad_labels(c, key, it);
	}
	st.last_update = now;
	n_ev = ippool_status_events(old, &st, it->pool->spec.network_name, ev);
	tmp = *it->pool; /* shallow: encode only reads */
	tmp.status = st;
	obj = ippool_encode(&tmp);
	ippool_status_clear(&st);
	if (obj == NULL)
		return ctrl_error(-ENOMEM);
	op = ctrl_op_new(c, c->c_pool, key, "update ippool status");
	if (rt != NULL && rt->np != NULL)
		((struct pool_rt *)rt)->written_bytes = netpool_status_bytes(rt->np);
	ref = op != NULL && n_ev > 0 ? ctrl_event_ref(it->meta.ns, it->meta.name, it->meta.uid)
				     : NULL;
	for (size_t i = 0; ref != NULL && i < n_ev; i++)
		(void)ctrl_op_defer_event(
		    op, ref, IPPOOL_KIND, ev[i].type, ev[i].reason, ev[i].message);
	json_decref(ref);
	r = op != NULL
		? kube_update_status(c->client, &ctrl_res_ippools, obj, status_done, op, &op->call)
		: -ENOMEM;
	json_decref(obj);
	return ctrl_op_started(op, r);
fail:
	ippool_status_clear(&st);
	return ctrl_error(r);
}

static struct kube_reconcile_result
patch_finalizer(struct ctrl *c, const char *key, const struct pool_item *it, bool add)
{
	const struct crd_meta *m = &it->pool->meta;
	json_t *patch = ctrl_finalizer_patch(
	    it->meta.rv, m->finalizers, m->n_finalizers, add, CTRL_FINALIZER_IPPOOL, NULL);
	struct ctrl_op *op;
	int r;

	if (patch == NULL)
		return ctrl_error(-ENOMEM);
	op = ctrl_op_new(
	    c, c->c_pool, key, add ? "add ippool finalizer" : "remove ippool finalizer");
	r = op != NULL ? kube_patch(c->client, &ctrl_res_ippools, it->meta.ns, it->meta.name,
			     KUBE_PATCH_MERGE, patch, NULL, ctrl_op_done, op, &op->call)
		       : -ENOMEM;
	json_decref(patch);
	return ctrl_op_started(op, r);
}

/* --- reconcile --------------------------------------------------------------------------- */

/* Keep the IPAM in step with the spec; fills the CacheReady facts. */
static void
ensure_ipam(struct ctrl *c, const char *key, const struct pool_item *it, struct pool_rt **rtp,
    struct ippool_facts *f, char *msg, size_t len)
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
		if ((rt = rt_new(c, key, it)) == NULL) {
			f->cache_reason = "OutOfMemory";
			return;
		}
		*rtp = rt;
		ctrl_pool_build(c, it, rt);
	} else if (rt->np == NULL || !str_eq(rt->uid, it->meta.uid) ||
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
				kube_record_event(c->recorder, ref, CRD_API_VERSION, IPPOOL_KIND,
				    "Warning", "RangeChangeRefused",
				    r == -EBUSY ? "bound address %s would fall outside the new "
						  "range or on an exclude"
						: "invalid range (%s)",
				    r == -EBUSY ? ip : strerror(-r));
			json_decref(ref);
		}
	}
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
		return;
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
	} else if (rt->n_conflicts > 0) {
		f->cache_reason = "Conflicts";
		snprintf(msg, len, "%zu conflicts: %s", rt->n_conflicts, rt->conflicts);
		f->cache_message = msg;
	}
	if (rt->kick) {
		rt->kick = false;
		ctrl_enqueue_cfgs_of_network(c, rt->network, true);
	}
}

/*
 * Whether the error of an invalid IPPool is new (to be logged): an IPPool rewritten in a loop
 * with the same fault, or reconciled again for other reasons, says it once; a changed error
 * is said again. error NULL: the pool is valid or gone, forgotten.
 */
static bool
invalid_is_new(struct ctrl *c, const char *key, const char *error)
{
	struct ctrl_invalid_pool **p, *ip;

	for (p = &c->invalid; (ip = *p) != NULL; p = &ip->next)
		if (strcmp(ip->key, key) == 0)
			break;
	if (error == NULL) {
		if (ip != NULL) {
			*p = ip->next;
			free(ip->key);
			free(ip->error);
			free(ip);
		}
		return false;
	}
	if (ip != NULL && strcmp(ip->error, error) == 0)
		return false;
	char *copy = strdup(error);
	if (copy == NULL)
		return true; /* said again rather than never */
	if (ip == NULL) {
		ip = calloc(1, sizeof(*ip));
		if (ip == NULL || (ip->key = strdup(key)) == NULL) {
			free(ip);
			free(copy);
			return true;
		}
		ip->next = c->invalid;
		c->invalid = ip;
	}
	free(ip->error);
	ip->error = copy;
	return true;
}

struct kube_reconcile_result
ctrl_reconcile_pool(void *userdata, const char *key)
{
	struct ctrl *c = userdata;
	const struct pool_item *it = kube_store_get(kube_informer_store(c->inf_pool), key);
	const struct agent_item *agent = agent_of(c, key);
	const struct upstream_pod *up = ctrl_upstream_agent(c, key);
	struct pool_rt *rt = ctrl_pool_rt(c, key);
	struct ippool_facts f = {0};
	char cache_msg[512], reg_msg[512], agent_msg[512], full_msg[512];
	const struct nad_item *nad;
	json_t *desired = NULL;
	int r;

	/* no backpressure gate here: at most one write per pool is in flight, and pool status
	 * writes (what agents serve from) must not wait behind a burst of VMNetCfgs */

	if (c->opts.no_agent)
		agent = NULL; /* --no-agent: agents are none of our business */
	if (it == NULL || it->pool != NULL)
		invalid_is_new(c, key, NULL); /* valid or gone: an error is news again */
	if (it == NULL) { /* gone: forget, remove the agent, then the NAD labels naming it */
		if (rt != NULL)
			rt_forget(c, key);
		if (agent != NULL && !agent->deleting)
			return delete_agent(c, key, agent);
		if (up != NULL && !up->deleting)
			return ctrl_upstream_agent_delete(c, key, up, "its IPPool is gone");
		return remove_nad_labels(c, key);
	}
	if (it->pool == NULL) {
		json_t *ref = ctrl_event_ref(it->meta.ns, it->meta.name, it->meta.uid);

		if (c->m_invalid != NULL)
			metric_inc(c->m_invalid, 0);
		if (invalid_is_new(c, key, it->error != NULL ? it->error : ""))
			log_warn("ippool %s: invalid: %s", key, it->error);
		else
			log_debug("ippool %s: invalid: %s", key, it->error);
		if (ref != NULL)
			kube_record_event(c->recorder, ref, CRD_API_VERSION, IPPOOL_KIND, "Warning",
			    "InvalidSpec", "%s", it->error);
		json_decref(ref);
		return ctrl_ok();
	}
	if (it->deleting) {
		if (up != NULL && !up->deleting)
			return ctrl_upstream_agent_delete(
			    c, key, up, "its IPPool is being deleted");
		if (!it->has_finalizer)
			return ctrl_ok();
		if (agent != NULL)
			return agent->deleting ? ctrl_after(c->opts.requeue_usec)
					       : delete_agent(c, key, agent);
		if (rt != NULL)
			rt_forget(c, key);
		return patch_finalizer(c, key, it, false);
	}
	if (!it->has_finalizer)
		return patch_finalizer(c, key, it, true);

	f.generation = it->pool->meta.generation;
	f.paused = it->pool->spec.paused;
	ensure_ipam(c, key, it, &rt, &f, cache_msg, sizeof(cache_msg));
	if (rt != NULL && rt->np != NULL && ctrl_pool_rt(c, key) == rt)
		apply_budget(c, key, it, rt, &f, full_msg, sizeof(full_msg));

	/* placement: none while paused, nor for a second pool on an already served network */
	if (f.paused ||
	    (f.cache_reason != NULL && strcmp(f.cache_reason, "DuplicateNetwork") == 0)) {
		if (agent != NULL && !agent->deleting)
			return delete_agent(c, key, agent);
		if (f.paused && up != NULL && !up->deleting)
			return ctrl_upstream_agent_delete(c, key, up, "its IPPool is paused");
		if (!f.paused) {
			f.registered_reason = "DuplicateNetwork";
			f.agent_reason = "DuplicateNetwork";
		}
		return write_status(c, key, it, rt, NULL, &f);
	}
	if (c->opts.no_agent) {
		/* as the Go project's DeployAgent and MonitorAgent with noAgent: no error */
		f.registered = f.agent_ready = true;
		f.registered_reason = f.agent_reason = "NoAgent";
		f.registered_message = f.agent_message =
		    "the controller places no agent (--no-agent)";
		return write_status(c, key, it, rt, NULL, &f);
	}
	nad = kube_store_get(kube_informer_store(c->inf_nad), it->pool->spec.network_name);
	if (nad == NULL) {
		f.registered_reason = "NetworkNotFound";
		snprintf(reg_msg, sizeof(reg_msg), "NetworkAttachmentDefinition %s not found",
		    it->pool->spec.network_name);
		f.registered_message = reg_msg;
		f.agent_reason = "NotRegistered";
		return write_status(c, key, it, rt, agent, &f);
	}
	{
		struct placement_input in = {
		    .pool_ns = it->meta.ns,
		    .pool_name = it->meta.name,
		    .network_name = it->pool->spec.network_name,
		    .cluster_network = nad->cluster_network,
		    .namespace = c->namespace,
		    .image = c->agent_image,
		    .service_account = c->agent_sa,
		    .opts = &c->agent,
		};
		char hash[PLACEMENT_HASH_LEN];

		if ((r = placement_build(&in, &desired)) < 0 ||
		    (r = placement_inputs_hash(&in, hash)) < 0) {
			log_warn("ippool %s: cannot build the agent: %s", key, strerror(-r));
			return ctrl_error(r);
		}
		if (agent == NULL) {
			struct ctrl_op *op =
			    ctrl_op_new(c, c->c_pool, key, "create agent of ippool");

			log_info("ippool %s: placing agent in %s (cluster network %s)", key,
			    c->namespace, nad->cluster_network ? nad->cluster_network : "-");
			r = op != NULL ? kube_create(c->client, &ctrl_res_deployments, c->namespace,
					     desired, ctrl_op_done, op, &op->call)
				       : -ENOMEM;
			json_decref(desired);
			return ctrl_op_started(op, r);
		}
		if (agent->deleting) {
			json_decref(desired);
			/* its delete event brings the pool back here */
			f.registered_reason = "AgentTerminating";
			f.agent_reason = "AgentTerminating";
			return write_status(c, key, it, rt, NULL, &f);
		}
		if (!it->hold && !str_eq(agent->hash, hash)) {
			struct ctrl_op *op =
			    ctrl_op_new(c, c->c_pool, key, "re-place agent of ippool");

			log_info("ippool %s: re-placing agent %s (inputs changed)", key,
			    agent->meta.name);
			json_object_set_new(json_object_get(desired, "metadata"), "resourceVersion",
			    json_string(agent->meta.rv != NULL ? agent->meta.rv : ""));
			r = op != NULL ? kube_update(c->client, &ctrl_res_deployments, desired,
					     ctrl_op_done, op, &op->call)
				       : -ENOMEM;
			json_decref(desired);
			return ctrl_op_started(op, r);
		}
		json_decref(desired);
	}
	f.registered = true;
	f.agent_ready = agent->ready;
	if (!agent->ready) {
		struct node_count nc = {.cn = nad->cluster_network};

		f.agent_reason = "AgentNotReady";
		snprintf(agent_msg, sizeof(agent_msg), "%s", agent->why ? agent->why : "not ready");
		if (nad->cluster_network != NULL) {
			kube_store_foreach(kube_informer_store(c->inf_node), count_nodes, &nc);
			if (nc.ready == 0) {
				f.agent_reason = "NoEligibleNode";
				snprintf(agent_msg, sizeof(agent_msg),
				    "no ready node has label %s%s=true",
				    PLACEMENT_NODE_LABEL_PREFIX, nad->cluster_network);
			}
		}
		f.agent_message = agent_msg;
	}
	if (up != NULL) {
		/*
		 * The Go project's agent Pod holds the serverIP: ours stand by (their ARP probe
		 * finds it taken) and do not serve, whatever their readiness says. Once ours can
		 * serve (Deployment ready: synced), the Pod goes and one of ours takes the address.
		 */
		if (agent->ready && !up->deleting)
			return ctrl_upstream_agent_delete(
			    c, key, up, "this pool's agent is ready to take over the serverIP");
		f.agent_ready = false;
		f.agent_reason = "UpstreamAgentRunning";
		snprintf(agent_msg, sizeof(agent_msg),
		    "the serverIP is held by the Go project's agent pod %s/%s%s", up->ns, up->name,
		    up->deleting ? " (terminating)" : ", removed once this pool's agent is ready");
		f.agent_message = agent_msg;
	}
	return write_status(c, key, it, rt, agent, &f);
}
