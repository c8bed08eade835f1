/* SPDX-License-Identifier: Apache-2.0 */
/*
 * IPPool reconciler: the gone, invalid and deleting pool, the finalizer, the IPAM kept in step
 * (ippool-ipam.c), agent placement, the conditions and the coalesced status write
 * (ippool-status.c; then the NAD labels, nad-labels.c). Reads the caches, makes at most one
 * write, returns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctrl-internal.h"
#include "controller/placement.h"
#include "lib/log.h"
#include "lib/metrics.h"

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

/* --- reconcile --------------------------------------------------------------------------- */

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

/* Gone: forget its IPAM, remove the agent (ours, then the Go project's), then the NAD labels
 * naming it. */
static struct kube_reconcile_result
pool_gone(struct ctrl *c, const char *key, const struct pool_rt *rt, const struct agent_item *agent,
    const struct upstream_pod *up)
{
	if (rt != NULL)
		ctrl_pool_forget(c, key);
	if (agent != NULL && !agent->deleting)
		return delete_agent(c, key, agent);
	if (up != NULL && !up->deleting)
		return ctrl_upstream_agent_delete(c, key, up, "its IPPool is gone");
	return ctrl_nad_labels_remove(c, key);
}

/* A spec that does not decode: counted, logged once per error, a Warning Event. */
static struct kube_reconcile_result
pool_invalid(struct ctrl *c, const char *key, const struct pool_item *it)
{
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

/* Being deleted: the agents go first, then the IPAM, then our finalizer. */
static struct kube_reconcile_result
pool_deleting(struct ctrl *c, const char *key, const struct pool_item *it, const struct pool_rt *rt,
    const struct agent_item *agent, const struct upstream_pod *up)
{
	if (up != NULL && !up->deleting)
		return ctrl_upstream_agent_delete(c, key, up, "its IPPool is being deleted");
	if (!it->has_finalizer)
		return ctrl_ok();
	if (agent != NULL)
		return agent->deleting ? ctrl_after(c->opts.requeue_usec)
				       : delete_agent(c, key, agent);
	if (rt != NULL)
		ctrl_pool_forget(c, key);
	return patch_finalizer(c, key, it, false);
}

/* No placement while paused, nor for a second pool on an already served network. */
static struct kube_reconcile_result
pool_unplaced(struct ctrl *c, const char *key, const struct pool_item *it, const struct pool_rt *rt,
    const struct agent_item *agent, const struct upstream_pod *up, struct ippool_facts *f)
{
	if (agent != NULL && !agent->deleting)
		return delete_agent(c, key, agent);
	if (f->paused && up != NULL && !up->deleting)
		return ctrl_upstream_agent_delete(c, key, up, "its IPPool is paused");
	if (!f->paused) {
		f->registered_reason = "DuplicateNetwork";
		f->agent_reason = "DuplicateNetwork";
	}
	return ctrl_pool_write_status(c, key, it, rt, NULL, f);
}

/*
 * The agent Deployment as the inputs want it: created when absent, replaced when its inputs
 * changed (unless the pool holds agent upgrades). *wrote: a write was started (or failed), the
 * result is the reconcile's; else the agent stands as it should, or is terminating (then
 * f says so).
 */
static struct kube_reconcile_result
place_agent(struct ctrl *c, const char *key, const struct pool_item *it, const struct nad_item *nad,
    const struct agent_item *agent, struct ippool_facts *f, bool *wrote)
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
	json_t *desired = NULL;
	struct ctrl_op *op;
	int r;

	*wrote = true;
	if ((r = placement_build(&in, &desired)) < 0 ||
	    (r = placement_inputs_hash(&in, hash)) < 0) {
		log_warn("ippool %s: cannot build the agent: %s", key, strerror(-r));
		return ctrl_error(r);
	}
	if (agent == NULL) {
		op = ctrl_op_new(c, c->c_pool, key, "create agent of ippool");
		log_info("ippool %s: placing agent in %s (cluster network %s)", key, c->namespace,
		    nad->cluster_network ? nad->cluster_network : "-");
		r = op != NULL ? kube_create(c->client, &ctrl_res_deployments, c->namespace,
				     desired, ctrl_op_done, op, &op->call)
			       : -ENOMEM;
		json_decref(desired);
		return ctrl_op_started(op, r);
	}
	if (agent->deleting) {
		json_decref(desired);
		/* its delete event brings the pool back here */
		f->registered_reason = "AgentTerminating";
		f->agent_reason = "AgentTerminating";
		*wrote = false;
		return ctrl_ok();
	}
	if (!it->hold && !ctrl_str_eq(agent->hash, hash)) {
		op = ctrl_op_new(c, c->c_pool, key, "re-place agent of ippool");
		log_info("ippool %s: re-placing agent %s (inputs changed)", key, agent->meta.name);
		json_object_set_new(json_object_get(desired, "metadata"), "resourceVersion",
		    json_string(agent->meta.rv != NULL ? agent->meta.rv : ""));
		r = op != NULL ? kube_update(c->client, &ctrl_res_deployments, desired,
				     ctrl_op_done, op, &op->call)
			       : -ENOMEM;
		json_decref(desired);
		return ctrl_op_started(op, r);
	}
	json_decref(desired);
	*wrote = false;
	return ctrl_ok();
}

/* The facts Registered and AgentReady of a placed agent (messages in msg). */
static void
agent_facts(struct ctrl *c, const struct nad_item *nad, const struct agent_item *agent,
    struct ippool_facts *f, char *msg, size_t len)
{
	struct node_count nc = {.cn = nad->cluster_network};

	f->registered = true;
	f->agent_ready = agent->ready;
	if (agent->ready)
		return;
	f->agent_reason = "AgentNotReady";
	snprintf(msg, len, "%s", agent->why ? agent->why : "not ready");
	if (nad->cluster_network != NULL) {
		kube_store_foreach(kube_informer_store(c->inf_node), count_nodes, &nc);
		if (nc.ready == 0) {
			f->agent_reason = "NoEligibleNode";
			snprintf(msg, len, "no ready node has label %s%s=true",
			    PLACEMENT_NODE_LABEL_PREFIX, nad->cluster_network);
		}
	}
	f->agent_message = msg;
}

/* The agent and its readiness, then the status. */
static struct kube_reconcile_result
pool_placed(struct ctrl *c, const char *key, const struct pool_item *it, const struct pool_rt *rt,
    const struct agent_item *agent, const struct upstream_pod *up, struct ippool_facts *f)
{
	const struct nad_item *nad =
	    kube_store_get(kube_informer_store(c->inf_nad), it->pool->spec.network_name);
	struct kube_reconcile_result res;
	char reg_msg[512], agent_msg[512];
	bool wrote;

	if (nad == NULL) {
		f->registered_reason = "NetworkNotFound";
		snprintf(reg_msg, sizeof(reg_msg), "NetworkAttachmentDefinition %s not found",
		    it->pool->spec.network_name);
		f->registered_message = reg_msg;
		f->agent_reason = "NotRegistered";
		return ctrl_pool_write_status(c, key, it, rt, agent, f);
	}
	res = place_agent(c, key, it, nad, agent, f, &wrote);
	if (wrote)
		return res;
	if (agent->deleting)
		return ctrl_pool_write_status(c, key, it, rt, NULL, f);
	agent_facts(c, nad, agent, f, agent_msg, sizeof(agent_msg));
	if (up != NULL) {
		/*
		 * The Go project's agent Pod holds the serverIP: ours stand by (their ARP probe
		 * finds it taken) and do not serve, whatever their readiness says. Once ours can
		 * serve (Deployment ready: synced), the Pod goes and one of ours takes the address.
		 */
		if (agent->ready && !up->deleting)
			return ctrl_upstream_agent_delete(
			    c, key, up, "this pool's agent is ready to take over the serverIP");
		f->agent_ready = false;
		f->agent_reason = "UpstreamAgentRunning";
		snprintf(agent_msg, sizeof(agent_msg),
		    "the serverIP is held by the Go project's agent pod %s/%s%s", up->ns, up->name,
		    up->deleting ? " (terminating)" : ", removed once this pool's agent is ready");
		f->agent_message = agent_msg;
	}
	return ctrl_pool_write_status(c, key, it, rt, agent, f);
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
	char cache_msg[512], full_msg[512];

	/* no backpressure gate here: at most one write per pool is in flight, and pool status
	 * writes (what agents serve from) must not wait behind a burst of VMNetCfgs */

	if (c->opts.no_agent)
		agent = NULL; /* --no-agent: agents are none of our business */
	if (it == NULL || it->pool != NULL)
		invalid_is_new(c, key, NULL); /* valid or gone: an error is news again */
	if (it == NULL)
		return pool_gone(c, key, rt, agent, up);
	if (it->pool == NULL)
		return pool_invalid(c, key, it);
	if (it->deleting)
		return pool_deleting(c, key, it, rt, agent, up);
	if (!it->has_finalizer)
		return patch_finalizer(c, key, it, true);

	f.generation = it->pool->meta.generation;
	f.paused = it->pool->spec.paused;
	ctrl_pool_ensure_ipam(c, key, it, &rt, &f, cache_msg, sizeof(cache_msg));
	if (rt != NULL && rt->np != NULL && ctrl_pool_rt(c, key) == rt)
		ctrl_pool_apply_budget(c, key, it, rt, &f, full_msg, sizeof(full_msg));

	if (f.paused || (f.cache_reason != NULL && strcmp(f.cache_reason, "DuplicateNetwork") == 0))
		return pool_unplaced(c, key, it, rt, agent, up, &f);
	if (c->opts.no_agent) {
		/* as the Go project's DeployAgent and MonitorAgent with noAgent: no error */
		f.registered = f.agent_ready = true;
		f.registered_reason = f.agent_reason = "NoAgent";
		f.registered_message = f.agent_message =
		    "the controller places no agent (--no-agent)";
		return ctrl_pool_write_status(c, key, it, rt, NULL, &f);
	}
	return pool_placed(c, key, it, rt, agent, up, &f);
}
