/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The table of kinds, ctrl_kinds[]: per kind the controller watches, its resource, its
 * items (items.c: the informer's transform, destructor and index), the event handlers that
 * enqueue keys into the reconcilers' queues (below), and for the kinds it reconciles, the
 * reconciler (reconcile-*.c). lifecycle.c walks it to start the informers and reconcilers.
 */
#include "controller/ctrl-internal.h"

#include <stddef.h>
#include <string.h>

#include "controller/placement.h"
#include "lib/util.h"

/* --- handlers --------------------------------------------------------------------------- */

static void
pool_on_add(void *userdata, const char *key, const void *item)
{
	ctrl_enqueue_pool(userdata, key);
}

static void
pool_on_update(void *userdata, const char *key, const void *old, const void *item)
{
	ctrl_enqueue_pool(userdata, key);
}

static void
pool_on_delete(void *userdata, const char *key, const void *item)
{
	struct ctrl *c = userdata;
	const struct pool_item *it = item;

	ctrl_enqueue_pool(c, key);
	/* its VMNetCfgs now have no IPPool: say so in their status */
	if (it->pool != NULL && c->reconciling)
		ctrl_enqueue_cfgs_of_network(c, it->pool->spec.network_name, false);
}

static void
cfg_on_add(void *userdata, const char *key, const void *item)
{
	ctrl_enqueue_cfg(userdata, key);
	ctrl_enqueue_vm(userdata, key);
}

static void
cfg_on_update(void *userdata, const char *key, const void *old, const void *item)
{
	cfg_on_add(userdata, key, item);
}

static void
cfg_on_delete(void *userdata, const char *key, const void *item)
{
	struct ctrl *c = userdata;

	if (c->reconciling)
		ctrl_cfg_forget(c, key, item);
	ctrl_enqueue_vm(c, key);
}

static void
vm_on_add(void *userdata, const char *key, const void *item)
{
	ctrl_vm_note_static(key, NULL, item);
	ctrl_enqueue_vm(userdata, key);
}

static void
vm_on_update(void *userdata, const char *key, const void *old, const void *item)
{
	ctrl_vm_note_static(key, old, item);
	ctrl_enqueue_vm(userdata, key);
}

static void
vm_on_delete(void *userdata, const char *key, const void *item)
{
	ctrl_enqueue_vm(userdata, key);
}

static void
nad_on_add(void *userdata, const char *key, const void *item)
{
	ctrl_enqueue_network_pool(userdata, key);
}

static void
nad_on_update(void *userdata, const char *key, const void *old, const void *item)
{
	ctrl_enqueue_network_pool(userdata, key);
}

static bool
node_same(const struct node_item *a, const struct node_item *b)
{
	if (a->ready != b->ready || a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->cluster_networks[i], b->cluster_networks[i]) != 0)
			return false;
	return true;
}

static void
node_on_add(void *userdata, const char *key, const void *item)
{
	ctrl_enqueue_all_pools(userdata);
}

static void
node_on_update(void *userdata, const char *key, const void *old, const void *item)
{
	if (!node_same(old, item))
		ctrl_enqueue_all_pools(userdata);
}

static void
agent_on_add(void *userdata, const char *key, const void *item)
{
	const struct agent_item *it = item;

	ctrl_enqueue_pool(userdata, it->pool_ref);
}

static void
agent_on_update(void *userdata, const char *key, const void *old, const void *item)
{
	agent_on_add(userdata, key, item);
}

/* --- the table of kinds ---------------------------------------------------------------- */

const struct ctrl_kind ctrl_kinds[] = {
    {
	.what = "IPPools",
	.res = &ctrl_res_ippools,
	.items = &ctrl_items_pool,
	.handlers = {pool_on_add, pool_on_update, pool_on_delete, NULL},
	.inf_off = offsetof(struct ctrl, inf_pool),
	.name = "ippool",
	.reconcile = ctrl_reconcile_pool,
	.ctl_off = offsetof(struct ctrl, c_pool),
    },
    {
	.what = "VMNetCfgs",
	.res = &ctrl_res_vmnetcfgs,
	.items = &ctrl_items_cfg,
	.handlers = {cfg_on_add, cfg_on_update, cfg_on_delete, NULL},
	.inf_off = offsetof(struct ctrl, inf_cfg),
	.name = "vmnetcfg",
	.reconcile = ctrl_reconcile_cfg,
	.ctl_off = offsetof(struct ctrl, c_cfg),
	.write_budget = true,
    },
    {
	.what = "VMs",
	.res = &ctrl_res_vms,
	.items = &ctrl_items_vm,
	.handlers = {vm_on_add, vm_on_update, vm_on_delete, NULL},
	.inf_off = offsetof(struct ctrl, inf_vm),
	.name = "vm",
	.reconcile = ctrl_reconcile_vm,
	.ctl_off = offsetof(struct ctrl, c_vm),
	.write_budget = true,
    },
    {
	.what = "NADs",
	.res = &ctrl_res_nads,
	.items = &ctrl_items_nad,
	.handlers = {nad_on_add, nad_on_update, nad_on_add, NULL},
	.inf_off = offsetof(struct ctrl, inf_nad),
    },
    {
	.what = "Nodes",
	.res = &kube_res_nodes,
	.items = &ctrl_items_node,
	.handlers = {node_on_add, node_on_update, node_on_add, NULL},
	.inf_off = offsetof(struct ctrl, inf_node),
    },
    {
	/* the agents' Deployments: ours only, in the controller's namespace */
	.what = "agent Deployments",
	.res = &ctrl_res_deployments,
	.in_namespace = true,
	.label_selector = PLACEMENT_LABEL_APP "=" PLACEMENT_LABEL_APP_VALUE,
	.items = &ctrl_items_agent,
	.handlers = {agent_on_add, agent_on_update, agent_on_add, NULL},
	.inf_off = offsetof(struct ctrl, inf_agent),
    },
};
const size_t ctrl_n_kinds = ELEMENTSOF(ctrl_kinds);
