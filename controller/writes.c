/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The write lifecycle of the reconcilers: one struct ctrl_op per asynchronous write (PENDING
 * until its answer completes the key; a freed controller cancels the writes still in flight)
 * and the Events a write commits. Backpressure is the reconcilers'
 * concurrency limit (kube/reconciler.c, see CTRL_MAX_INFLIGHT). Also small payload helpers (Event
 * reference, finalizer patch).
 */
#include "controller/ctrl-internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/metrics.h"

json_t *
ctrl_event_ref(const char *ns, const char *name, const char *uid)
{
	return json_pack(
	    "{s:{s:s?, s:s?, s:s?}}", "metadata", "name", name, "namespace", ns, "uid", uid);
}

json_t *
ctrl_finalizer_patch(const char *rv, char *const *current, size_t n, bool add, const char *fin,
    const char *also_remove)
{
	json_t *list = json_array();
	bool present = false;

	if (list == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (strcmp(current[i], fin) == 0) {
			present = true;
			if (!add)
				continue;
		}
		if (!add && also_remove != NULL && strcmp(current[i], also_remove) == 0)
			continue;
		json_array_append_new(list, json_string(current[i]));
	}
	if (add && !present)
		json_array_append_new(list, json_string(fin));
	return json_pack("{s:{s:s?, s:o}}", "metadata", "resourceVersion", rv, "finalizers", list);
}

int
ctrl_op_defer_event(struct ctrl_op *op, const json_t *ref, const char *kind, const char *type,
    const char *reason, const char *message)
{
	json_t *ev;

	if (op->events == NULL && (op->events = json_array()) == NULL)
		return -ENOMEM;
	if (op->ev_ref == NULL)
		op->ev_ref = json_incref((json_t *)ref);
	op->ev_kind = kind;
	ev = json_pack("{s:s, s:s, s:s}", "type", type, "reason", reason, "message", message);
	return ev != NULL && json_array_append_new(op->events, ev) == 0 ? 0 : -ENOMEM;
}

/* The write of op succeeded: record the Events it commits. */
static void
op_record_events(struct ctrl_op *op)
{
	json_t *ev;
	size_t i;

	json_array_foreach(op->events, i, ev)
	{
		const char *type = json_string_value(json_object_get(ev, "type"));
		const char *reason = json_string_value(json_object_get(ev, "reason"));
		const char *msg = json_string_value(json_object_get(ev, "message"));

		log_info("%s %s: %s: %s", op->ev_kind, op->key, reason, msg);
		kube_record_event(op->c->recorder, op->ev_ref, CRD_API_VERSION, op->ev_kind, type,
		    reason, "%s", msg);
	}
}

struct ctrl_op *
ctrl_op_new(struct ctrl *c, struct kube_controller *ctl, const char *key, const char *what)
{
	struct ctrl_op *op = calloc(1, sizeof(*op));

	if (op == NULL)
		return NULL;
	op->c = c;
	op->ctl = ctl;
	op->what = what;
	snprintf(op->key, sizeof(op->key), "%s", key);
	op->next = c->ops;
	if (c->ops != NULL)
		c->ops->prev = op;
	c->ops = op;
	c->inflight++;
	return op;
}

static void
op_free(struct ctrl_op *op)
{
	struct ctrl *c = op->c;

	if (op->prev != NULL)
		op->prev->next = op->next;
	else
		c->ops = op->next;
	if (op->next != NULL)
		op->next->prev = op->prev;
	json_decref(op->payload);
	json_decref(op->ev_ref);
	json_decref(op->events);
	free(op);
	c->inflight--;
}

void
ctrl_ops_cancel(struct ctrl *c)
{
	while (c->ops != NULL) {
		kube_call_cancel(c->ops->call); /* its answer, if it comes, is dropped */
		op_free(c->ops);
	}
}

void
ctrl_op_done(void *userdata, const struct kube_result *res)
{
	struct ctrl_op *op = userdata;
	struct kube_reconcile_result rr = ctrl_ok();

	op->call = NULL; /* answered: the handle is spent */
	switch (res->error) {
	case 0:
		log_debug("%s %s: done", op->what, op->key);
		op_record_events(op);
		break;
	case -ESTALE: /* 409 Conflict: re-read (the cache catches up) and retry */
	case -EEXIST: /* created meanwhile */
	case -ENOENT: /* gone meanwhile */
		log_debug("%s %s: %s, retrying", op->what, op->key, kube_errno_name(res->error));
		rr.action = KUBE_RECONCILE_REQUEUE;
		break;
	default:
		log_warn("%s %s: %s (%s)", op->what, op->key, kube_errno_name(res->error),
		    res->message != NULL ? res->message : "");
		rr = ctrl_error(res->error);
		break;
	}
	kube_controller_complete(op->ctl, op->key, rr);
	op_free(op);
}

struct kube_reconcile_result
ctrl_op_started(struct ctrl_op *op, int rc)
{
	if (op == NULL)
		return ctrl_error(-ENOMEM);
	if (rc < 0) {
		log_warn("%s %s: %s", op->what, op->key, strerror(-rc));
		op_free(op);
		return ctrl_error(rc);
	}
	metric_inc(op->c->m_writes, 0);
	return (struct kube_reconcile_result){.action = KUBE_RECONCILE_PENDING};
}
