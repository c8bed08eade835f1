/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An IPPool's status: its size against the object budget (the room left for
 * status.ipv4.allocated, the StatusFull facts) and the one coalesced status write, whose
 * refusal as too large lowers that room.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctrl-internal.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/metrics.h"

/* --- the object's size ------------------------------------------------------------------- */

/* The bytes the condition StatusFull takes at most (its message is under 400 characters). */
#define CTRL_STATUS_FULL_ROOM 600

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
	/* status.ipv6 with its counts at their longest (19 digits each) */
	tmp.status.has_ipv6_status = pool->spec.has_ipv6;
	tmp.status.allocated6 = NULL;
	tmp.status.n_allocated6 = 0;
	tmp.status.used6 = tmp.status.available6 = INT64_MAX;
	obj = ippool_encode(&tmp);
	free(kept);
	if (obj == NULL)
		return 0;
	n = json_dumpb(obj, NULL, 0, JSON_COMPACT);
	json_decref(obj);
	/* "allocated":{…}, : the key, and the braces counted again (an empty map may be left out);
	 * as many again for status.ipv6.allocated */
	n += (sizeof("\"allocated\":{},") - 1) * (pool->spec.has_ipv6 ? 2 : 1);
	return n + CTRL_STATUS_FULL_ROOM;
}

static void
evicted_cfg(void *userdata, const char *owner)
{
	struct ctrl *c = userdata;

	if (owner != NULL)
		ctrl_enqueue_cfg(c, owner); /* its NIC goes Pending (PoolStatusFull) */
}

void
ctrl_pool_apply_budget(struct ctrl *c, const char *key, const struct pool_item *it,
    struct pool_rt *rt, struct ippool_facts *f, char *msg, size_t len)
{
	uint64_t total = ctrl_ippool_budget(c);
	size_t budget, n;

	/* the same resourceVersion is the same object: counted once, not at every reconcile */
	if (it->meta.rv == NULL || rt->base_rv == NULL || strcmp(rt->base_rv, it->meta.rv) != 0) {
		free(rt->base_rv);
		rt->base_bytes = ctrl_ippool_base_bytes(it->pool);
		rt->base_rv =
		    it->meta.rv != NULL && rt->base_bytes != 0 ? strdup(it->meta.rv) : NULL;
	}
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

/* The status write's answer: a refusal for its size lowers the budget (ctrl_pool_apply_budget). */
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

struct kube_reconcile_result
ctrl_pool_write_status(struct ctrl *c, const char *key, const struct pool_item *it,
    const struct pool_rt *rt, const struct agent_item *agent, const struct ippool_facts *f)
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
		if (r == 0 && old->has_ipv6_status) {
			r = ippool_status_set_allocated6(&st, old->allocated6, old->n_allocated6);
			st.has_ipv6_status = true;
			st.used6 = old->used6;
			st.available6 = old->available6;
		}
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
		return ctrl_nad_labels_ensure(c, key, it);
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
