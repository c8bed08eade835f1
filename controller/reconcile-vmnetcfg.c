/* SPDX-License-Identifier: Apache-2.0 */
/*
 * VirtualMachineNetworkConfig reconciler: finalizer, per-NIC binding through the netpools,
 * Events (Warning for conflicts, at once; Normal Allocated / Released once the status write
 * that shows them succeeds), and the status write (the commit point of a binding). The
 * IPPools whose bindings changed are enqueued, so their status writes coalesce in the IPPool
 * queue.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctrl-internal.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/metrics.h"

/* After bindings changed: refresh the pools' status; freed addresses may serve others. */
static void
after_touch(struct ctrl *c, const struct vmnetcfg_result *res)
{
	for (size_t i = 0; i < res->n_touched; i++) {
		struct pool_rt *rt = ctrl_pool_rt_by_network(c, res->touched[i]);

		if (rt == NULL)
			continue;
		if (res->released)
			rt->kick = true;
		ctrl_enqueue_pool(c, rt->key);
	}
}

/* Record (and log) the Events of res of type `type` (NULL: all) on the VMNetCfg now. */
static void
record_events(struct ctrl *c, const char *key, const struct cfg_item *it,
    const struct vmnetcfg_result *res, const char *type)
{
	json_t *ref;

	if (res->n_events == 0 ||
	    (ref = ctrl_event_ref(it->meta.ns, it->meta.name, it->meta.uid)) == NULL)
		return;
	for (size_t i = 0; i < res->n_events; i++) {
		const struct vmnetcfg_event *e = &res->events[i];

		if (type != NULL && strcmp(e->type, type) != 0)
			continue;
		if (strcmp(e->type, "Warning") == 0)
			log_warn("vmnetcfg %s: %s: %s", key, e->reason, e->message);
		else
			log_info("vmnetcfg %s: %s: %s", key, e->reason, e->message);
		kube_record_event(c->recorder, ref, CRD_API_VERSION, VMNETCFG_KIND, e->type,
		    e->reason, "%s", e->message);
	}
	json_decref(ref);
}

void
ctrl_cfg_forget(struct ctrl *c, const char *key, const struct cfg_item *it)
{
	struct vmnetcfg_result res;

	if (it == NULL || it->cfg == NULL)
		return;
	(void)vmnetcfg_release_all(it->cfg, key, ctrl_lookup, c, &res);
	after_touch(c, &res);
	record_events(c, key, it, &res, NULL); /* Released: the object is gone, no write */
	vmnetcfg_result_clear(&res);
}

static struct kube_reconcile_result
patch_finalizer(struct ctrl *c, const char *key, const struct cfg_item *it, bool add)
{
	const struct crd_meta *m = &it->cfg->meta;
	json_t *patch = ctrl_finalizer_patch(
	    it->meta.rv, m->finalizers, m->n_finalizers, add, CTRL_FINALIZER_VMNETCFG, NULL);
	struct ctrl_op *op;
	int r;

	if (patch == NULL)
		return ctrl_error(-ENOMEM);
	op = ctrl_op_new(
	    c, c->c_cfg, key, add ? "add vmnetcfg finalizer" : "remove vmnetcfg finalizer");
	r = op != NULL ? kube_patch(c->client, &ctrl_res_vmnetcfgs, it->meta.ns, it->meta.name,
			     KUBE_PATCH_MERGE, patch, NULL, ctrl_op_done, op, &op->call)
		       : -ENOMEM;
	json_decref(patch);
	return ctrl_op_started(op, r);
}

struct kube_reconcile_result
ctrl_reconcile_cfg(void *userdata, const char *key)
{
	struct ctrl *c = userdata;
	const struct cfg_item *it = kube_store_get(kube_informer_store(c->inf_cfg), key);
	struct vmnetcfg_result res;
	struct vmnetcfg tmp;
	struct ctrl_op *op;
	json_t *obj, *ref;
	int r;

	if (it == NULL)
		return ctrl_ok(); /* released by the delete handler */
	if (it->cfg == NULL) {
		ref = ctrl_event_ref(it->meta.ns, it->meta.name, it->meta.uid);
		log_warn("vmnetcfg %s: invalid: %s", key, it->error);
		if (ref != NULL)
			kube_record_event(c->recorder, ref, CRD_API_VERSION, VMNETCFG_KIND,
			    "Warning", "InvalidSpec", "%s", it->error);
		json_decref(ref);
		return ctrl_ok();
	}
	if (it->deleting) {
		if (!it->has_finalizer)
			return ctrl_ok();
		r = vmnetcfg_release_all(it->cfg, key, ctrl_lookup, c, &res);
		after_touch(c, &res);
		/* now: a release happens once, and the finalizer patch that follows carries no
		 * status to derive it from again */
		record_events(c, key, it, &res, NULL);
		vmnetcfg_result_clear(&res);
		if (r == -EAGAIN)
			return ctrl_after(c->opts.requeue_usec); /* a pool's IPAM is not built */
		if (r < 0)
			return ctrl_error(r);
		return patch_finalizer(c, key, it, false);
	}
	if (!it->has_finalizer)
		return patch_finalizer(c, key, it, true);

	r = vmnetcfg_compute(it->cfg, key, ctrl_lookup, c, (time_t)clock_realtime_sec(), &res);
	if (r < 0)
		return ctrl_error(r);
	after_touch(c, &res);
	for (size_t i = 0; c->m_refused != NULL && i < res.n_events; i++)
		if (strcmp(res.events[i].reason, VMNETCFG_REASON_STATUS_FULL) == 0)
			metric_inc(c->m_refused, 0);
	/* Warnings report a state that lasts (the recorder folds the repeats): now */
	record_events(c, key, it, &res, "Warning");
	if (!res.changed) { /* no transition: no Normal Event either */
		vmnetcfg_result_clear(&res);
		return ctrl_ok();
	}
	tmp = *it->cfg; /* shallow: encode only reads */
	tmp.status = res.status;
	obj = vmnetcfg_encode(&tmp);
	op = obj != NULL ? ctrl_op_new(c, c->c_cfg, key, "update vmnetcfg status") : NULL;
	ref = op != NULL ? ctrl_event_ref(it->meta.ns, it->meta.name, it->meta.uid) : NULL;
	for (size_t i = 0; ref != NULL && i < res.n_events; i++)
		if (strcmp(res.events[i].type, "Normal") == 0)
			(void)ctrl_op_defer_event(op, ref, VMNETCFG_KIND, "Normal",
			    res.events[i].reason, res.events[i].message);
	json_decref(ref);
	vmnetcfg_result_clear(&res);
	if (obj == NULL)
		return ctrl_error(-ENOMEM);
	r = op != NULL ? kube_update_status(
			     c->client, &ctrl_res_vmnetcfgs, obj, ctrl_op_done, op, &op->call)
		       : -ENOMEM;
	json_decref(obj);
	return ctrl_op_started(op, r);
}
