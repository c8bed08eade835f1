/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller's wiring: resources, informer transforms and indexes, event handlers that
 * enqueue keys, start-up once the caches synced, readiness. The metrics are in metrics.c.
 */
#include "controller/ctrl.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <malloc.h>

#include <event2/event.h>

#include "controller/placement.h"
#include "controller/vmplan.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/metrics.h"

const struct kube_resource ctrl_res_ippools = { CRD_GROUP, CRD_VERSION, IPPOOL_PLURAL,
	IPPOOL_KIND, true };
const struct kube_resource ctrl_res_vmnetcfgs = { CRD_GROUP, CRD_VERSION, VMNETCFG_PLURAL,
	VMNETCFG_KIND, true };
const struct kube_resource ctrl_res_vms = { "kubevirt.io", "v1", "virtualmachines",
	"VirtualMachine", true };
const struct kube_resource ctrl_res_nads = { "k8s.cni.cncf.io", "v1",
	"network-attachment-definitions", "NetworkAttachmentDefinition", true };
const struct kube_resource ctrl_res_deployments = { "apps", "v1", "deployments", "Deployment",
	true };

static char *
xstrdup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

uint64_t
ctrl_now_usec(const struct ctrl *c)
{
	return kube_clock_now(c->opts.clock);
}

/* --- transforms ------------------------------------------------------------------------- */

static void
pool_item_free(void *p)
{
	struct pool_item *it = p;

	if (it == NULL)
		return;
	ippool_free(it->pool);
	free(it->error);
	free(it->status_error);
	free(it->ns);
	free(it->name);
	free(it->uid);
	free(it->rv);
	free(it);
}

static void *
pool_transform(void *userdata, json_t *obj)
{
	struct pool_item *it = calloc(1, sizeof(*it));
	struct crd_error err = { 0 };

	if (it == NULL)
		return NULL;
	it->ns = xstrdup(kube_obj_namespace(obj));
	it->name = xstrdup(kube_obj_name(obj));
	it->uid = xstrdup(kube_obj_uid(obj));
	it->rv = xstrdup(kube_obj_resource_version(obj));
	it->deleting = kube_obj_is_deleting(obj);
	it->has_finalizer = kube_obj_has_finalizer(obj, CTRL_FINALIZER_IPPOOL);
	it->hold = kube_obj_annotation(obj, PLACEMENT_ANNOT_HOLD) != NULL;
	if (it->ns == NULL || it->name == NULL) {
		pool_item_free(it);
		return NULL;
	}
	if (ippool_decode(obj, &it->pool, &err) < 0) {
		/* a broken status is ours to rewrite: keep the spec, report the status */
		json_t *copy = json_object_get(obj, "status") != NULL ? json_copy(obj) : NULL;
		struct crd_error err2 = { 0 };

		it->pool = NULL;
		if (copy != NULL && json_object_del(copy, "status") == 0 &&
		    ippool_decode(copy, &it->pool, &err2) == 0) {
			it->status_error = strdup(err.message[0] ? err.message : "cannot decode");
		} else {
			it->pool = NULL;
			it->error = strdup(err.message[0] ? err.message : "cannot decode");
		}
		json_decref(copy);
	}
	return it;
}

/*
 * Cached items are packed into one allocation (item, decoded object, arrays, strings): at
 * 10 000 VMs the ~20 malloc chunks of a decoded VMNetCfg (16 bytes of header and rounding
 * each) cost more than their contents. A layout function runs twice: with base NULL it only
 * sizes, then it fills a block of that size.
 */
struct pack {
	char *base;
	size_t off;
};

static void *
pack_take(struct pack *p, size_t n, size_t align)
{
	size_t off = (p->off + align - 1) & ~(align - 1);

	p->off = off + n;
	return p->base != NULL && n > 0 ? p->base + off : NULL;
}

/* Copy of n bytes of src (8-byte aligned); NULL while sizing or when n is 0. */
static void *
pack_mem(struct pack *p, const void *src, size_t n)
{
	void *d = pack_take(p, n, 8);

	if (d != NULL)
		memcpy(d, src, n);
	return d;
}

static char *
pack_str(struct pack *p, const char *s)
{
	size_t n;
	char *d;

	if (s == NULL)
		return NULL;
	n = strlen(s) + 1;
	d = pack_take(p, n, 1);
	if (d != NULL)
		memcpy(d, s, n);
	return d;
}

/*
 * Strings most cached VMNetCfgs repeat (finalizer, condition types and reasons) point to one
 * static copy: the block is freed as a whole, never string by string.
 */
static char *
pack_intern(struct pack *p, const char *s)
{
	static const char *const common[] = {
		CTRL_FINALIZER_VMNETCFG,
		VMNETCFG_COND_ALLOCATED,
		VMNETCFG_COND_DISABLED,
		VMNETCFG_COND_IN_SYNCED,
		VMNETCFG_REASON_NO_IPPOOL,
		VMNETCFG_REASON_NOT_READY,
		VMNETCFG_REASON_DUPLICATE_MAC,
		VMNETCFG_REASON_STATIC_CONFLICT,
		VMNETCFG_REASON_STATIC_UNAVAILABLE,
		VMNETCFG_REASON_EXHAUSTED,
		VMNETCFG_REASON_PAUSED,
		VMNETCFG_REASON_INVALID_MAC,
		VMNETCFG_REASON_ALLOCATED,
		VMNETCFG_REASON_IN_SYNC,
		VMNETCFG_REASON_PENDING,
		VMNETCFG_REASON_STALE,
		VMNETCFG_REASON_NOT_PAUSED,
	};

	for (size_t i = 0; s != NULL && i < ELEMENTSOF(common); i++)
		if (strcmp(s, common[i]) == 0)
			return (char *)common[i];
	return pack_str(p, s);
}

/* Runs layout(p, arg) twice; returns the new block (NULL on ENOMEM). */
static void *
pack_new(void (*layout)(struct pack *, const void *), const void *arg)
{
	struct pack p = { 0 };

	layout(&p, arg);
	p.base = malloc(p.off > 0 ? p.off : 1);
	if (p.base == NULL)
		return NULL;
	p.off = 0;
	layout(&p, arg);
	return p.base;
}

/* cfg_item with a decoded cfg (labels and annotations dropped: not needed past decode). */
static void
cfg_item_layout(struct pack *p, const void *arg)
{
	const struct cfg_item *in = arg;
	const struct vmnetcfg *src = in->cfg;
	const struct crd_conditions *cs = &src->status.conditions;
	struct cfg_item *it = pack_take(p, sizeof(*it), 8);
	struct vmnetcfg *cfg = pack_take(p, sizeof(*cfg), 8);
	struct crd_condition *conds = pack_mem(p, cs->items, cs->n * sizeof(*cs->items));
	char **fins = pack_mem(p, src->meta.finalizers, src->meta.n_finalizers * sizeof(char *));
	struct vmnetcfg_nic *nics = pack_mem(p, src->spec.nics,
	    src->spec.n_nics * sizeof(*src->spec.nics));
	struct vmnetcfg_nic_status *st = pack_mem(p, src->status.nics,
	    src->status.n_nics * sizeof(*src->status.nics));
	char *ns = pack_str(p, src->meta.namespace), *name = pack_str(p, src->meta.name);
	char *uid = pack_str(p, src->meta.uid), *rv = pack_str(p, src->meta.resource_version);
	char *vm_name = pack_str(p, src->spec.vm_name), *owner = pack_str(p, in->owner_uid);

	for (size_t i = 0; i < cs->n; i++) {
		char *type = pack_intern(p, cs->items[i].type);
		char *reason = pack_intern(p, cs->items[i].reason);
		char *message = pack_str(p, cs->items[i].message);

		if (conds != NULL) {
			conds[i].type = type;
			conds[i].reason = reason;
			conds[i].message = message;
		}
	}
	for (size_t i = 0; i < src->meta.n_finalizers; i++) {
		char *f = pack_intern(p, src->meta.finalizers[i]);

		if (fins != NULL)
			fins[i] = f;
	}
	if (it == NULL)
		return;
	*it = *in;
	*cfg = *src;
	cfg->meta.namespace = it->ns = ns;
	cfg->meta.name = it->name = name;
	cfg->meta.uid = it->uid = uid;
	cfg->meta.resource_version = it->rv = rv;
	cfg->meta.labels = cfg->meta.annotations = NULL;
	cfg->meta.finalizers = fins;
	cfg->spec.vm_name = vm_name;
	cfg->spec.nics = nics;
	cfg->status.nics = st;
	cfg->status.conditions.items = conds;
	it->cfg = cfg;
	it->owner_uid = owner;
	it->error = NULL;
}

static void
cfg_item_free(void *p)
{
	struct cfg_item *it = p;

	if (it == NULL)
		return;
	if (it->cfg == NULL) { /* else the item is one block (cfg_item_layout) */
		free(it->ns);
		free(it->name);
		free(it->uid);
		free(it->rv);
		free(it->error);
		free(it->owner_uid);
	}
	free(it);
}

static void *
cfg_transform(void *userdata, json_t *obj)
{
	struct cfg_item *it = calloc(1, sizeof(*it)), *packed;
	struct crd_error err = { 0 };
	json_t *refs = kind_get(obj, "metadata", "ownerReferences", NULL), *ref;
	size_t i;

	if (it == NULL)
		return NULL;
	it->deleting = kube_obj_is_deleting(obj);
	it->has_finalizer = kube_obj_has_finalizer(obj, CTRL_FINALIZER_VMNETCFG);
	it->has_label = kube_obj_label(obj, VMNETCFG_LABEL_VM_NAME) != NULL;
	json_array_foreach(refs, i, ref) {
		if (json_is_true(json_object_get(ref, "controller")))
			it->owner_uid = xstrdup(json_string_value(json_object_get(ref, "uid")));
	}
	if (vmnetcfg_decode(obj, &it->cfg, &err) < 0) {
		it->cfg = NULL;
		it->error = strdup(err.message[0] ? err.message : "cannot decode");
		it->ns = xstrdup(kube_obj_namespace(obj));
		it->name = xstrdup(kube_obj_name(obj));
		it->uid = xstrdup(kube_obj_uid(obj));
		it->rv = xstrdup(kube_obj_resource_version(obj));
		if (it->ns == NULL || it->name == NULL) {
			cfg_item_free(it);
			return NULL;
		}
		return it;
	}
	for (size_t n = 0; n < it->cfg->status.n_nics; n++)
		if (it->cfg->status.nics[n].state == VMNETCFG_STATE_PENDING)
			it->pending = true;
	/* 10 000 of these are cached: one block each */
	packed = it->cfg->meta.namespace != NULL && it->cfg->meta.name != NULL
	    ? pack_new(cfg_item_layout, it)
	    : NULL;
	vmnetcfg_free(it->cfg);
	free(it->owner_uid);
	free(it);
	return packed;
}

/* A vm_item with its spec (want), strings and skipped list in one block. */
static void
vm_item_layout(struct pack *p, const void *arg)
{
	const struct vm_item *in = arg;
	struct vm_item *it = pack_take(p, sizeof(*it), 8);
	struct vmnetcfg_nic *nics = pack_mem(p, in->want.nics,
	    in->want.n_nics * sizeof(*in->want.nics));
	char **skipped = pack_mem(p, in->skipped, in->n_skipped * sizeof(char *));
	char *ns = pack_str(p, in->ns), *name = pack_str(p, in->name);
	char *uid = pack_str(p, in->uid), *vm_name = pack_str(p, in->want.vm_name);

	for (size_t i = 0; i < in->n_skipped; i++) {
		char *sk = pack_str(p, in->skipped[i]);

		if (skipped != NULL)
			skipped[i] = sk;
	}
	if (it == NULL)
		return;
	*it = *in;
	it->want.nics = nics;
	it->want.vm_name = vm_name;
	it->ns = ns;
	it->name = name;
	it->uid = uid;
	it->skipped = skipped;
}

static void
vm_item_free(void *p)
{
	free(p); /* one block (vm_item_layout) */
}

static void *
vm_transform(void *userdata, json_t *obj)
{
	struct vm_item it = { 0 }, *packed = NULL;
	struct crd_error err;
	struct vm_plan plan;

	if (vm_plan_build(obj, &plan) < 0)
		return NULL; /* no name, namespace or uid: not an object we can own anything for */
	/* keep the spec as a struct: a json_t per VM would cost kilobytes at 10 000 VMs */
	if (vmnetcfg_spec_decode(kind_get(plan.vmnetcfg, "spec", NULL), &it.want, &err) < 0) {
		vm_plan_clear(&plan);
		return NULL;
	}
	/* borrowed from obj until packed */
	it.ns = (char *)kube_obj_namespace(obj);
	it.name = (char *)kube_obj_name(obj);
	it.uid = (char *)kube_obj_uid(obj);
	it.deleting = kube_obj_is_deleting(obj);
	if (plan.n_skipped > 0)
		it.skipped = calloc(plan.n_skipped, sizeof(char *));
	for (size_t i = 0; it.skipped != NULL && i < plan.n_skipped; i++) {
		if (asprintf(&it.skipped[it.n_skipped], "%s: %s", plan.skipped[i].nic,
			plan.skipped[i].reason) >= 0)
			it.n_skipped++;
	}
	if (plan.n_skipped == 0 || it.skipped != NULL)
		packed = pack_new(vm_item_layout, &it);
	for (size_t i = 0; i < it.n_skipped; i++)
		free(it.skipped[i]);
	free(it.skipped);
	vmnetcfg_spec_clear(&it.want);
	vm_plan_clear(&plan);
	return packed;
}

static void
nad_item_free(void *p)
{
	struct nad_item *it = p;

	if (it != NULL)
		free(it->cluster_network);
	free(it);
}

static void *
nad_transform(void *userdata, json_t *obj)
{
	struct nad_item *it = calloc(1, sizeof(*it));

	if (it != NULL)
		it->cluster_network = xstrdup(nad_cluster_network(obj));
	return it;
}

static void
node_item_free(void *p)
{
	struct node_item *it = p;

	if (it == NULL)
		return;
	for (size_t i = 0; i < it->n; i++)
		free(it->cluster_networks[i]);
	free(it->cluster_networks);
	free(it);
}

static void *
node_transform(void *userdata, json_t *obj)
{
	struct node_item *it = calloc(1, sizeof(*it));
	json_t *labels = kind_get(obj, "metadata", "labels", NULL), *v;
	const size_t plen = strlen(PLACEMENT_NODE_LABEL_PREFIX);
	const char *k;

	if (it == NULL)
		return NULL;
	it->ready = node_is_ready(obj);
	json_object_foreach(labels, k, v) {
		char **n;

		if (strncmp(k, PLACEMENT_NODE_LABEL_PREFIX, plen) != 0 || k[plen] == '\0' ||
		    json_string_value(v) == NULL || strcmp(json_string_value(v), "true") != 0)
			continue;
		n = realloc(it->cluster_networks, (it->n + 1) * sizeof(*n));
		if (n == NULL)
			break;
		it->cluster_networks = n;
		if ((n[it->n] = strdup(k + plen)) != NULL)
			it->n++;
	}
	return it;
}

static void
agent_item_free(void *p)
{
	struct agent_item *it = p;

	if (it == NULL)
		return;
	free(it->ns);
	free(it->name);
	free(it->uid);
	free(it->rv);
	free(it->pool_ref);
	free(it->hash);
	free(it->image);
	free(it);
}

static void *
agent_transform(void *userdata, json_t *obj)
{
	const char *ref = placement_pool_ref(obj);
	struct agent_item *it;

	if (ref == NULL)
		return NULL; /* not one of ours */
	it = calloc(1, sizeof(*it));
	if (it == NULL)
		return NULL;
	it->ns = xstrdup(kube_obj_namespace(obj));
	it->name = xstrdup(kube_obj_name(obj));
	it->uid = xstrdup(kube_obj_uid(obj));
	it->rv = xstrdup(kube_obj_resource_version(obj));
	it->pool_ref = xstrdup(ref);
	it->hash = xstrdup(kube_obj_annotation(obj, PLACEMENT_ANNOT_HASH));
	it->image = xstrdup(placement_image(obj));
	it->ready = deployment_ready(obj, &it->why);
	it->deleting = kube_obj_is_deleting(obj);
	return it;
}

/* --- indexes ---------------------------------------------------------------------------- */

static void
pool_index_network(const void *item, kube_index_emit_fn emit, void *ctx)
{
	const struct pool_item *it = item;

	if (it->pool != NULL)
		emit(ctx, it->pool->spec.network_name);
}

static void
cfg_index_network(const void *item, kube_index_emit_fn emit, void *ctx)
{
	const struct cfg_item *it = item;
	const char *seen[2 * VMNETCFG_NICS_MAX];
	size_t n = 0;

	if (it->cfg == NULL)
		return;
	for (size_t pass = 0; pass < 2; pass++) {
		size_t count = pass == 0 ? it->cfg->spec.n_nics : it->cfg->status.n_nics;

		for (size_t i = 0; i < count; i++) {
			const char *net = pass == 0 ? it->cfg->spec.nics[i].network_name :
						      it->cfg->status.nics[i].network_name;
			bool dup = false;

			for (size_t j = 0; j < n && !dup; j++)
				dup = strcmp(seen[j], net) == 0;
			if (dup)
				continue;
			if (n < ELEMENTSOF(seen))
				seen[n++] = net;
			emit(ctx, net);
		}
	}
}

static void
agent_index_pool(const void *item, kube_index_emit_fn emit, void *ctx)
{
	const struct agent_item *it = item;

	emit(ctx, it->pool_ref);
}

/* --- pools runtime ---------------------------------------------------------------------- */

struct pool_rt *
ctrl_pool_rt(struct ctrl *c, const char *pool_key)
{
	for (struct pool_rt *rt = c->pools; rt != NULL; rt = rt->next)
		if (strcmp(rt->key, pool_key) == 0)
			return rt;
	return NULL;
}

struct pool_rt *
ctrl_pool_rt_by_network(struct ctrl *c, const char *network)
{
	for (struct pool_rt *rt = c->pools; rt != NULL; rt = rt->next)
		if (strcmp(rt->network, network) == 0)
			return rt;
	return NULL;
}

struct netpool *
ctrl_lookup(void *userdata, const char *network, enum netpool_avail *avail)
{
	struct ctrl *c = userdata;
	struct pool_rt *rt = ctrl_pool_rt_by_network(c, network);

	if (rt != NULL && rt->np != NULL) {
		*avail = NETPOOL_READY;
		return rt->np;
	}
	/* an IPPool for the network exists but its IPAM is not built (yet) */
	*avail = rt != NULL || kube_store_index_count(kube_informer_store(c->inf_pool), "network",
				   network) > 0 ?
	    NETPOOL_NOT_READY :
	    NETPOOL_ABSENT;
	return NULL;
}

/* --- enqueueing ------------------------------------------------------------------------- */

void
ctrl_enqueue_pool(struct ctrl *c, const char *pool_key)
{
	if (c->c_pool != NULL && pool_key != NULL)
		kube_controller_enqueue(c->c_pool, pool_key);
}

static int
enqueue_pool_visit(void *userdata, const char *key, const void *item)
{
	ctrl_enqueue_pool(userdata, key);
	return 0;
}

void
ctrl_enqueue_network_pool(struct ctrl *c, const char *network)
{
	kube_store_by_index(kube_informer_store(c->inf_pool), "network", network,
	    enqueue_pool_visit, c);
}

void
ctrl_enqueue_cfg(struct ctrl *c, const char *key)
{
	if (c->c_cfg != NULL)
		kube_controller_enqueue(c->c_cfg, key);
}

struct cfg_visit {
	struct ctrl *c;
	bool pending_only;
};

static int
enqueue_cfg_visit(void *userdata, const char *key, const void *item)
{
	const struct cfg_visit *v = userdata;
	const struct cfg_item *it = item;

	if (!v->pending_only || it->pending)
		ctrl_enqueue_cfg(v->c, key);
	return 0;
}

void
ctrl_enqueue_cfgs_of_network(struct ctrl *c, const char *network, bool pending_only)
{
	struct cfg_visit v = { .c = c, .pending_only = pending_only };

	kube_store_by_index(kube_informer_store(c->inf_cfg), "network", network,
	    enqueue_cfg_visit, &v);
}

static void
enqueue_vm(struct ctrl *c, const char *key)
{
	if (c->c_vm != NULL)
		kube_controller_enqueue(c->c_vm, key);
}

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
	enqueue_vm(userdata, key);
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
	enqueue_vm(c, key);
}

static void
vm_on_add(void *userdata, const char *key, const void *item)
{
	enqueue_vm(userdata, key);
}

static void
vm_on_update(void *userdata, const char *key, const void *old, const void *item)
{
	enqueue_vm(userdata, key);
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

static void
enqueue_all_pools(struct ctrl *c)
{
	kube_store_foreach(kube_informer_store(c->inf_pool), enqueue_pool_visit, c);
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
	enqueue_all_pools(userdata);
}

static void
node_on_update(void *userdata, const char *key, const void *old, const void *item)
{
	if (!node_same(old, item))
		enqueue_all_pools(userdata);
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

/* --- helpers for the reconcilers -------------------------------------------------------- */

json_t *
ctrl_event_ref(const char *ns, const char *name, const char *uid)
{
	return json_pack("{s:{s:s?, s:s?, s:s?}}", "metadata", "name", name, "namespace", ns,
	    "uid", uid);
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
	return json_pack("{s:{s:s?, s:o}}", "metadata", "resourceVersion", rv, "finalizers",
	    list);
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

	json_array_foreach(op->events, i, ev) {
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

bool
ctrl_gate(struct ctrl *c, struct kube_controller *ctl, const char *key)
{
	struct ctrl_parked *p;
	size_t len = strlen(key) + 1;

	if (c->inflight < CTRL_MAX_INFLIGHT)
		return true;
	p = malloc(sizeof(*p) + len);
	if (p == NULL)
		return true; /* no memory to wait: go ahead */
	p->next = NULL;
	p->ctl = ctl;
	memcpy(p->key, key, len);
	if (c->parked_tail == NULL)
		c->parked_tail = &c->parked;
	*c->parked_tail = p;
	c->parked_tail = &p->next;
	return false;
}

/*
 * Write slots are free: send the oldest parked reconciles back to their queues, one per free
 * slot. Called when a write completes and after every reconcile (one that wrote nothing
 * leaves its slot free).
 */
static void
unpark(struct ctrl *c)
{
	size_t n = c->inflight < CTRL_MAX_INFLIGHT ? CTRL_MAX_INFLIGHT - c->inflight : 0;

	while (n-- > 0 && c->parked != NULL) {
		struct ctrl_parked *p = c->parked;

		c->parked = p->next;
		if (c->parked == NULL)
			c->parked_tail = &c->parked;
		kube_controller_complete(p->ctl, p->key,
		    (struct kube_reconcile_result){ .action = KUBE_RECONCILE_REQUEUE_AFTER });
		free(p);
	}
}

/* Writes of freed controllers whose answers have not come (yet). */
static struct ctrl_op *orphans;

static void unpark(struct ctrl *c);

static void
op_free(struct ctrl_op *op)
{
	struct ctrl *c = op->c;
	struct ctrl_op **head = c != NULL ? &c->ops : &orphans;

	if (op->prev != NULL)
		op->prev->next = op->next;
	else
		*head = op->next;
	if (op->next != NULL)
		op->next->prev = op->prev;
	json_decref(op->payload);
	json_decref(op->ev_ref);
	json_decref(op->events);
	free(op);
	if (c != NULL) {
		c->inflight--;
		unpark(c);
	}
}

void
ctrl_reap_orphans(void)
{
	while (orphans != NULL)
		op_free(orphans);
}

void
ctrl_op_done(void *userdata, const struct kube_result *res)
{
	struct ctrl_op *op = userdata;
	struct kube_reconcile_result rr = ctrl_ok();

	if (op->c == NULL) { /* the controller went away meanwhile */
		op_free(op);
		return;
	}
	switch (res->error) {
	case 0:
		log_debug("%s %s: done", op->what, op->key);
		op_record_events(op);
		break;
	case -ESTALE:	/* 409 Conflict: re-read (the cache catches up) and retry */
	case -EEXIST:	/* created meanwhile */
	case -ENOENT:	/* gone meanwhile */
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
	return (struct kube_reconcile_result){ .action = KUBE_RECONCILE_PENDING };
}

/* --- start-up, readiness ----------------------------------------------------------------- */

bool
ctrl_synced(const struct ctrl *c)
{
	return kube_informer_has_synced(c->inf_pool) && kube_informer_has_synced(c->inf_cfg) &&
	    kube_informer_has_synced(c->inf_vm) && kube_informer_has_synced(c->inf_nad) &&
	    kube_informer_has_synced(c->inf_node) && kube_informer_has_synced(c->inf_agent);
}

bool
ctrl_ready(struct ctrl *c, char *reason, size_t len)
{
	if (!ctrl_synced(c)) {
		snprintf(reason, len, "caches not synced");
		return false;
	}
	if (c->leading && !c->reconciling) {
		snprintf(reason, len, "leader, reconcilers not started");
		return false;
	}
	return true;
}

static int
build_visit(void *userdata, const char *key, const void *item)
{
	struct ctrl *c = userdata;
	const struct pool_item *it = item;
	struct pool_rt *rt;

	if (it->pool == NULL || ctrl_pool_rt_by_network(c, it->pool->spec.network_name) != NULL)
		return 0;
	rt = calloc(1, sizeof(*rt));
	if (rt == NULL)
		return 0;
	snprintf(rt->key, sizeof(rt->key), "%s", key);
	snprintf(rt->network, sizeof(rt->network), "%s", it->pool->spec.network_name);
	rt->uid = xstrdup(it->uid);
	rt->next = c->pools;
	c->pools = rt;
	if (ctrl_pool_build(c, it, rt) < 0)
		log_warn("ippool %s: IPAM not built: %s", key, strerror(-rt->build_error));
	return 0;
}

static int
enqueue_cfg_all_visit(void *userdata, const char *key, const void *item)
{
	ctrl_enqueue_cfg(userdata, key);
	return 0;
}

static int
enqueue_vm_all_visit(void *userdata, const char *key, const void *item)
{
	enqueue_vm(userdata, key);
	return 0;
}

/* Every reconcile goes through here: after it, free write slots go to parked keys. */
#define RECONCILE_WRAPPER(wrapper, fn)                                                         \
	static struct kube_reconcile_result wrapper(void *userdata, const char *key)           \
	{                                                                                      \
		struct kube_reconcile_result r = fn(userdata, key);                            \
                                                                                               \
		unpark(userdata);                                                              \
		return r;                                                                      \
	}
RECONCILE_WRAPPER(reconcile_pool, ctrl_reconcile_pool)
RECONCILE_WRAPPER(reconcile_cfg, ctrl_reconcile_cfg)
RECONCILE_WRAPPER(reconcile_vm, ctrl_reconcile_vm)

static int
start_controllers(struct ctrl *c)
{
	static const struct {
		const char *name;
		kube_reconcile_fn fn;
		size_t off;
	} table[] = {
		{ "ippool", reconcile_pool, offsetof(struct ctrl, c_pool) },
		{ "vmnetcfg", reconcile_cfg, offsetof(struct ctrl, c_cfg) },
		{ "vm", reconcile_vm, offsetof(struct ctrl, c_vm) },
	};

	for (size_t i = 0; i < ELEMENTSOF(table); i++) {
		struct kube_controller_opts o = {
			.name = table[i].name,
			.base = c->base,
			.clock = c->opts.clock,
			.metrics = c->metrics,
			.reconcile = table[i].fn,
			.userdata = c,
			.queue = { .qps = 500, .burst = 1000, .max_delay_usec = 60 * USEC_PER_SEC },
		};
		struct kube_controller **slot =
		    (struct kube_controller **)((char *)c + table[i].off);
		int r = kube_controller_new(&o, slot);

		if (r < 0)
			return r;
	}
	return 0;
}

/* Once leading and synced: build every pool's IPAM from the caches, then reconcile all. */
static void
sync_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ctrl *c = arg;
	int r;

	if (!c->leading || c->reconciling || !ctrl_synced(c))
		return;
	kube_store_foreach(kube_informer_store(c->inf_pool), build_visit, c);
	if ((r = start_controllers(c)) < 0)
		fatalx("cannot start the reconcilers: %s", strerror(-r));
	c->reconciling = true;
	event_del(c->sync_ev);
	log_info("caches synced: %zu IPPools, %zu VMNetCfgs, %zu VMs; reconciling",
	    kube_store_len(kube_informer_store(c->inf_pool)),
	    kube_store_len(kube_informer_store(c->inf_cfg)),
	    kube_store_len(kube_informer_store(c->inf_vm)));
	enqueue_all_pools(c);
	kube_store_foreach(kube_informer_store(c->inf_cfg), enqueue_cfg_all_visit, c);
	kube_store_foreach(kube_informer_store(c->inf_vm), enqueue_vm_all_visit, c);
}

void
ctrl_lead(struct ctrl *c)
{
	c->leading = true;
	sync_cb(-1, 0, c);
}

/* Give freed heap (list pages, large status bodies) back to the system now and then. */
static void
trim_cb(evutil_socket_t fd, short what, void *arg)
{
	malloc_trim(0);
}

/* --- life cycle ------------------------------------------------------------------------- */

struct informer_def {
	const struct kube_resource *res;
	bool in_namespace; /* only the controller's namespace */
	const char *label_selector;
	kube_transform_fn transform;
	kube_destroy_fn destroy;
	const char *index_name;
	kube_index_fn index;
	struct kube_informer_handlers handlers;
	size_t off;
};

int
ctrl_new(struct event_base *base, struct kube_client *client, struct metrics *metrics,
    const struct ctrl_opts *opts, struct ctrl **ret)
{
	const struct informer_def defs[] = {
		{ &ctrl_res_ippools, false, NULL, pool_transform, pool_item_free, "network",
		    pool_index_network, { pool_on_add, pool_on_update, pool_on_delete, NULL },
		    offsetof(struct ctrl, inf_pool) },
		{ &ctrl_res_vmnetcfgs, false, NULL, cfg_transform, cfg_item_free, "network",
		    cfg_index_network, { cfg_on_add, cfg_on_update, cfg_on_delete, NULL },
		    offsetof(struct ctrl, inf_cfg) },
		{ &ctrl_res_vms, false, NULL, vm_transform, vm_item_free, NULL, NULL,
		    { vm_on_add, vm_on_update, vm_on_add, NULL }, offsetof(struct ctrl, inf_vm) },
		{ &ctrl_res_nads, false, NULL, nad_transform, nad_item_free, NULL, NULL,
		    { nad_on_add, nad_on_update, nad_on_add, NULL },
		    offsetof(struct ctrl, inf_nad) },
		{ &kube_res_nodes, false, NULL, node_transform, node_item_free, NULL, NULL,
		    { node_on_add, node_on_update, node_on_add, NULL },
		    offsetof(struct ctrl, inf_node) },
		{ &ctrl_res_deployments, true, PLACEMENT_LABEL_APP "=" PLACEMENT_LABEL_APP_VALUE,
		    agent_transform, agent_item_free, "pool", agent_index_pool,
		    { agent_on_add, agent_on_update, agent_on_add, NULL },
		    offsetof(struct ctrl, inf_agent) },
	};
	struct ctrl *c;
	int r;

	if (opts->namespace == NULL || opts->agent_image == NULL)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	c->base = base;
	c->client = client;
	c->metrics = metrics;
	c->opts = *opts;
	c->namespace = strdup(opts->namespace);
	c->agent_image = strdup(opts->agent_image);
	c->agent_sa = xstrdup(opts->agent_sa);
	c->opts.namespace = c->namespace;
	c->opts.agent_image = c->agent_image;
	c->opts.agent_sa = c->agent_sa;
	c->opts.agent = &c->agent;
	if (c->opts.requeue_usec == 0)
		c->opts.requeue_usec = 2 * USEC_PER_SEC;
	if (c->namespace == NULL || c->agent_image == NULL ||
	    (opts->agent_sa != NULL && c->agent_sa == NULL) ||
	    placement_opts_copy(&c->agent, opts->agent) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	if ((r = kube_recorder_new(client, CTRL_COMPONENT, NULL, &c->recorder)) < 0 ||
	    (r = ctrl_metrics_add(c)) < 0)
		goto fail;
	c->sync_ev = event_new(base, -1, EV_PERSIST, sync_cb, c);
	c->trim_ev = event_new(base, -1, EV_PERSIST, trim_cb, c);
	if (c->sync_ev == NULL || c->trim_ev == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < ELEMENTSOF(defs); i++) {
		struct kube_informer_opts io = {
			.res = defs[i].res,
			.ns = defs[i].in_namespace ? c->namespace : NULL,
			.label_selector = defs[i].label_selector,
			.resync_usec = opts->resync_usec,
			/* a page of big objects is decoded at once: small pages keep the peak low */
			.page_size = CTRL_LIST_PAGE,
			.transform = defs[i].transform,
			.destroy = defs[i].destroy,
			.transform_userdata = c,
			.clock = opts->clock,
		};
		struct kube_informer_handlers h = defs[i].handlers;
		struct kube_informer **slot = (struct kube_informer **)((char *)c + defs[i].off);

		h.userdata = c;
		if ((r = kube_informer_new(client, &io, slot)) < 0)
			goto fail;
		if (defs[i].index != NULL &&
		    (r = kube_informer_add_index(*slot, defs[i].index_name, defs[i].index)) < 0)
			goto fail;
		if ((r = kube_informer_add_handlers(*slot, &h)) < 0)
			goto fail;
	}
	for (size_t i = 0; i < ELEMENTSOF(defs); i++) {
		struct kube_informer *inf = *(struct kube_informer **)((char *)c + defs[i].off);

		if ((r = kube_informer_start(inf)) < 0)
			goto fail;
	}
	{
		struct timeval tv = { .tv_sec = 0, .tv_usec = 100000 };
		struct timeval trim = { .tv_sec = 5, .tv_usec = 0 };

		event_add(c->sync_ev, &tv);
		event_add(c->trim_ev, &trim);
	}
	*ret = c;
	return 0;
fail:
	ctrl_free(c);
	return r;
}

struct ctrl *
ctrl_free(struct ctrl *c)
{
	struct pool_rt *rt, *next;

	if (c == NULL)
		return NULL;
	c->reconciling = false;
	while (c->ops != NULL) { /* answers still in flight will be dropped */
		struct ctrl_op *op = c->ops;

		c->ops = op->next;
		op->c = NULL;
		op->prev = NULL;
		op->next = orphans;
		if (orphans != NULL)
			orphans->prev = op;
		orphans = op;
	}
	while (c->parked != NULL) {
		struct ctrl_parked *p = c->parked;

		c->parked = p->next;
		free(p);
	}
	kube_controller_free(c->c_pool);
	kube_controller_free(c->c_cfg);
	kube_controller_free(c->c_vm);
	c->c_pool = c->c_cfg = c->c_vm = NULL;
	kube_informer_free(c->inf_pool);
	kube_informer_free(c->inf_cfg);
	kube_informer_free(c->inf_vm);
	kube_informer_free(c->inf_nad);
	kube_informer_free(c->inf_node);
	kube_informer_free(c->inf_agent);
	if (c->sync_ev != NULL)
		event_free(c->sync_ev);
	if (c->trim_ev != NULL)
		event_free(c->trim_ev);
	kube_recorder_free(c->recorder);
	for (rt = c->pools; rt != NULL; rt = next) {
		next = rt->next;
		netpool_free(rt->np);
		free(rt->uid);
		free(rt);
	}
	ctrl_metrics_free(c);
	free(c->namespace);
	free(c->agent_image);
	free(c->agent_sa);
	placement_opts_clear(&c->agent);
	free(c);
	return NULL;
}
