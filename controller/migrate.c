/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Taking over from the Go project (harvester/vm-dhcp-controller), without manual steps:
 *
 *  - Its agent Pods. Its IPPool controller creates one bare Pod per pool
 *    (upstream:pkg/controller/ippool/common.go, prepareAgentPod): in its agent namespace,
 *    named <pool-ns>-<pool-name>-agent, labelled network.harvesterhci.io/vm-dhcp-controller=agent
 *    and network.harvesterhci.io/ippool-{namespace,name}, no ownerReference. Nothing removes
 *    it when the Go project is uninstalled, and it keeps the pool's serverIP on the VM
 *    network: our agents then find the address taken (ARP probe, agent/failover.c) and stand
 *    by. An informer on those Pods (in --upstream-agent-namespace, bare ones only: ours belong
 *    to a ReplicaSet) lets the IPPool reconciler remove a pool's Pod as soon as our agent
 *    Deployment for the pool is ready (its pods synced, one takes the serverIP within its
 *    retry period of the Pod going), and keep AgentReady False (UpstreamAgentRunning) while
 *    it exists. A paused or deleted pool's Pod is removed at once (the Go project does the same).
 *  - Its webhook configurations. Its webhook program (upstream:cmd/webhook, the
 *    harvester/webhook library) creates at run time a ValidatingWebhookConfiguration and a
 *    MutatingWebhookConfiguration, both named after its --name (the chart's
 *    "<fullname>-webhook"), matching IPPools and VirtualMachineNetworkConfigs; they stay after
 *    its uninstall and, pointing at a Service that is gone, the validating one (failurePolicy
 *    Fail) refuses every create and update of those objects. The leader deletes the ones named
 *    by --upstream-webhook-configurations once (a 404 is fine). Our own admission webhook is
 *    a later addition; when it comes, it registers under its own names.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctrl-internal.h"
#include "controller/placement.h"
#include "lib/log.h"

#define UPSTREAM_LABEL_APP "network.harvesterhci.io/vm-dhcp-controller"
#define UPSTREAM_LABEL_POOL_NS "network.harvesterhci.io/ippool-namespace"
#define UPSTREAM_LABEL_POOL_NAME "network.harvesterhci.io/ippool-name"

static const struct kube_resource res_validating = {"admissionregistration.k8s.io", "v1",
    "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false};
static const struct kube_resource res_mutating = {"admissionregistration.k8s.io", "v1",
    "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false};

/* --- the Go project's agent Pods ---------------------------------------------------------- */

static char *
xstrdup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

static void
upstream_pod_free(void *p)
{
	struct upstream_pod *it = p;

	if (it == NULL)
		return;
	free(it->ns);
	free(it->name);
	free(it->uid);
	free(it);
}

/* A Pod with any controller ownerReference (ours: a ReplicaSet) is not the Go project's. */
static bool
has_controller_owner(const json_t *obj)
{
	json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
	size_t i;
	json_t *r;

	json_array_foreach(refs, i, r)
	{
		if (json_is_true(json_object_get(r, "controller")))
			return true;
	}
	return false;
}

static void *
upstream_pod_transform(void *userdata, json_t *obj)
{
	const char *pns = kube_obj_label(obj, UPSTREAM_LABEL_POOL_NS);
	const char *pname = kube_obj_label(obj, UPSTREAM_LABEL_POOL_NAME);
	struct upstream_pod *it;

	if (pns == NULL || pname == NULL || has_controller_owner(obj))
		return NULL;
	it = calloc(1, sizeof(*it));
	if (it == NULL)
		return NULL;
	snprintf(it->pool_ref, sizeof(it->pool_ref), "%s/%s", pns, pname);
	it->ns = xstrdup(kube_obj_namespace(obj));
	it->name = xstrdup(kube_obj_name(obj));
	it->uid = xstrdup(kube_obj_uid(obj));
	it->deleting = kube_obj_is_deleting(obj);
	if (it->ns == NULL || it->name == NULL) {
		upstream_pod_free(it);
		return NULL;
	}
	return it;
}

static void
upstream_pod_index(const void *item, kube_index_emit_fn emit, void *ctx)
{
	emit(ctx, ((const struct upstream_pod *)item)->pool_ref);
}

static void
upstream_pod_changed(void *userdata, const char *key, const void *item)
{
	const struct upstream_pod *it = item;

	ctrl_enqueue_pool(userdata, it->pool_ref);
}

static void
upstream_pod_updated(void *userdata, const char *key, const void *old, const void *item)
{
	upstream_pod_changed(userdata, key, item);
}

int
ctrl_migrate_new(struct ctrl *c)
{
	struct kube_informer_opts io = {
	    .res = &kube_res_pods,
	    .ns = c->opts.upstream_agent_ns,
	    .label_selector = UPSTREAM_LABEL_APP "=agent",
	    .resync_usec = c->opts.resync_usec,
	    .page_size = CTRL_LIST_PAGE,
	    .transform = upstream_pod_transform,
	    .destroy = upstream_pod_free,
	    .transform_userdata = c,
	    .clock = c->opts.clock,
	};
	struct kube_informer_handlers h = {
	    upstream_pod_changed, upstream_pod_updated, upstream_pod_changed, c};
	int r;

	if (c->opts.upstream_agent_ns == NULL || c->opts.upstream_agent_ns[0] == '\0')
		return 0;
	if ((r = kube_informer_new(c->client, &io, &c->inf_upstream)) < 0 ||
	    (r = kube_informer_add_index(c->inf_upstream, "pool", upstream_pod_index)) < 0 ||
	    (r = kube_informer_add_handlers(c->inf_upstream, &h)) < 0 ||
	    (r = kube_informer_start(c->inf_upstream)) < 0)
		return r;
	return 0;
}

void
ctrl_migrate_free(struct ctrl *c)
{
	kube_informer_free(c->inf_upstream);
	c->inf_upstream = NULL;
}

static int
first_pod(void *userdata, const char *key, const void *item)
{
	*(const struct upstream_pod **)userdata = item;
	return 1;
}

const struct upstream_pod *
ctrl_upstream_agent(struct ctrl *c, const char *pool_key)
{
	const struct upstream_pod *p = NULL;

	/* --no-agent: no agent of ours takes over, and none is deleted (as the Go project's) */
	if (c->inf_upstream != NULL && !c->opts.no_agent)
		kube_store_by_index(
		    kube_informer_store(c->inf_upstream), "pool", pool_key, first_pod, &p);
	return p;
}

struct kube_reconcile_result
ctrl_upstream_agent_delete(
    struct ctrl *c, const char *key, const struct upstream_pod *p, const char *why)
{
	struct kube_delete_opts o = {.uid = p->uid};
	struct ctrl_op *op = ctrl_op_new(c, c->c_pool, key, "delete the Go project's agent pod");

	if (op == NULL)
		return ctrl_error(-ENOMEM);
	log_info(
	    "ippool %s: removing the Go project's agent pod %s/%s (%s)", key, p->ns, p->name, why);
	return ctrl_op_started(op, kube_delete(c->client, &kube_res_pods, p->ns, p->name, &o,
				       ctrl_op_done, op, &op->call));
}

/* --- the Go project's webhook configurations ----------------------------------------------- */

struct wh_del {
	const char *what;
	char name[256];
};

static void
webhook_deleted(void *userdata, const struct kube_result *res)
{
	struct wh_del *d = userdata;

	if (res->error == 0)
		log_info("deleted the Go project's %s %s (it pointed at a webhook that is gone)",
		    d->what, d->name);
	else if (res->error == -ENOENT)
		log_debug("no %s %s to delete", d->what, d->name);
	else
		log_warn("cannot delete the Go project's %s %s: %s%s%s", d->what, d->name,
		    kube_errno_name(res->error),
		    res->message != NULL && res->message[0] != '\0' ? ": " : "",
		    res->message != NULL ? res->message : "");
	free(d);
}

static void
delete_webhook(struct ctrl *c, bool validating, const char *name)
{
	struct wh_del *d = calloc(1, sizeof(*d));
	int r;

	if (d == NULL)
		return;
	snprintf(d->name, sizeof(d->name), "%s", name);
	if (validating) {
		d->what = res_validating.kind;
		r = kube_delete(
		    c->client, &res_validating, NULL, d->name, NULL, webhook_deleted, d, NULL);
	} else {
		d->what = res_mutating.kind;
		r = kube_delete(
		    c->client, &res_mutating, NULL, d->name, NULL, webhook_deleted, d, NULL);
	}
	if (r < 0) {
		log_warn("cannot delete %s %s: %s", d->what, d->name, strerror(-r));
		free(d);
	}
}

void
ctrl_migrate_remove_webhooks(struct ctrl *c)
{
	const char *list = c->opts.upstream_webhooks;

	while (list != NULL && *list != '\0') {
		size_t n = strcspn(list, ",");
		char name[256];

		if (n > 0 && n < sizeof(name)) {
			memcpy(name, list, n);
			name[n] = '\0';
			delete_webhook(c, true, name);
			delete_webhook(c, false, name);
		}
		list += n;
		if (*list == ',')
			list++;
	}
}
