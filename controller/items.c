/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cached items: per watched kind, the informer's transform of an object into a compact
 * item (the json_t is dropped), its destructor and its index, gathered as the kind's struct
 * ctrl_item_ops for the table of kinds (kind-table.c).
 */
#include "controller/ctrl-internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/admission-cidr.h"
#include "controller/admit.h"
#include "controller/placement.h"
#include "controller/vmplan.h"
#include "lib/util.h"

static char *
xstrdup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

/* --- transforms ------------------------------------------------------------------------- */

/* The item's copy of obj's metadata (NULL for what obj lacks or without memory). */
static void
item_meta_fill(struct item_meta *m, const json_t *obj)
{
	m->ns = xstrdup(kube_obj_namespace(obj));
	m->name = xstrdup(kube_obj_name(obj));
	m->uid = xstrdup(kube_obj_uid(obj));
	m->rv = xstrdup(kube_obj_resource_version(obj));
}

static void
item_meta_free(struct item_meta *m)
{
	free(m->ns);
	free(m->name);
	free(m->uid);
	free(m->rv);
}

static void
pool_item_free(void *p)
{
	struct pool_item *it = p;

	if (it == NULL)
		return;
	ippool_free(it->pool);
	free(it->error);
	free(it->status_error);
	item_meta_free(&it->meta);
	free(it);
}

static void *
pool_transform(void *userdata, json_t *obj)
{
	struct pool_item *it = calloc(1, sizeof(*it));
	struct crd_error err = {0};

	if (it == NULL)
		return NULL;
	item_meta_fill(&it->meta, obj);
	it->deleting = kube_obj_is_deleting(obj);
	it->has_finalizer = kube_obj_has_finalizer(obj, CTRL_FINALIZER_IPPOOL);
	it->hold = kube_obj_annotation(obj, PLACEMENT_ANNOT_HOLD) != NULL;
	if (it->meta.ns == NULL || it->meta.name == NULL) {
		pool_item_free(it);
		return NULL;
	}
	if (ippool_decode(obj, &it->pool, &err) < 0) {
		/* a broken status is ours to rewrite: keep the spec, report the status */
		json_t *copy = json_object_get(obj, "status") != NULL ? json_copy(obj) : NULL;
		struct crd_error err2 = {0};

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
	    VMNETCFG_REASON_ADDRESS_TAKEN,
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
	struct pack p = {0};

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
	struct vmnetcfg_nic *nics =
	    pack_mem(p, src->spec.nics, src->spec.n_nics * sizeof(*src->spec.nics));
	struct vmnetcfg_nic_status *st =
	    pack_mem(p, src->status.nics, src->status.n_nics * sizeof(*src->status.nics));
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
	cfg->meta.namespace = it->meta.ns = ns;
	cfg->meta.name = it->meta.name = name;
	cfg->meta.uid = it->meta.uid = uid;
	cfg->meta.resource_version = it->meta.rv = rv;
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
		item_meta_free(&it->meta);
		free(it->error);
		free(it->owner_uid);
	}
	free(it);
}

static void *
cfg_transform(void *userdata, json_t *obj)
{
	struct cfg_item *it = calloc(1, sizeof(*it)), *packed;
	struct crd_error err = {0};
	json_t *refs = kind_get(obj, "metadata", "ownerReferences", NULL), *ref;
	size_t i;

	if (it == NULL)
		return NULL;
	it->deleting = kube_obj_is_deleting(obj);
	it->has_finalizer = kube_obj_has_finalizer(obj, CTRL_FINALIZER_VMNETCFG);
	it->has_label = kube_obj_label(obj, VMNETCFG_LABEL_VM_NAME) != NULL;
	json_array_foreach(refs, i, ref)
	{
		if (json_is_true(json_object_get(ref, "controller")))
			it->owner_uid = xstrdup(json_string_value(json_object_get(ref, "uid")));
	}
	if (vmnetcfg_decode(obj, &it->cfg, &err) < 0) {
		it->cfg = NULL;
		it->error = strdup(err.message[0] ? err.message : "cannot decode");
		item_meta_fill(&it->meta, obj);
		if (it->meta.ns == NULL || it->meta.name == NULL) {
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
	struct vmnetcfg_nic *nics =
	    pack_mem(p, in->want.nics, in->want.n_nics * sizeof(*in->want.nics));
	char **skipped = pack_mem(p, in->skipped, in->n_skipped * sizeof(char *));
	char *ns = pack_str(p, in->meta.ns), *name = pack_str(p, in->meta.name);
	char *uid = pack_str(p, in->meta.uid), *vm_name = pack_str(p, in->want.vm_name);
	char *unknown_static = pack_str(p, in->unknown_static);

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
	it->meta.ns = ns;
	it->meta.name = name;
	it->meta.uid = uid;
	it->skipped = skipped;
	it->unknown_static = unknown_static;
}

static void
vm_item_free(void *p)
{
	free(p); /* one block (vm_item_layout) */
}

static void *
vm_transform(void *userdata, json_t *obj)
{
	struct vm_item it = {0}, *packed = NULL;
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
	it.meta.ns = (char *)kube_obj_namespace(obj);
	it.meta.name = (char *)kube_obj_name(obj);
	it.meta.uid = (char *)kube_obj_uid(obj);
	it.deleting = kube_obj_is_deleting(obj);
	it.generation = kube_obj_generation(obj);
	it.n_static = plan.n_static;
	it.unknown_static = plan.unknown_static; /* borrowed from the plan until packed */
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

	if (it != NULL) {
		free(it->cluster_network);
		free(it->pool_ns);
		free(it->pool_name);
		free(it->route);
	}
	free(it);
}

static void *
nad_transform(void *userdata, json_t *obj)
{
	struct nad_item *it = calloc(1, sizeof(*it));

	if (it != NULL) {
		it->cluster_network = xstrdup(nad_cluster_network(obj));
		it->pool_ns = xstrdup(kind_label(obj, PLACEMENT_LABEL_POOL_NS));
		it->pool_name = xstrdup(kind_label(obj, PLACEMENT_LABEL_POOL_NAME));
		it->route = xstrdup(kind_annotation(obj, ADMIT_ANNOT_NAD_ROUTE));
	}
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
	free(it->service_cidr);
	free(it);
}

/* The service CIDR RKE2 (Harvester) or k3s records in the node's arguments (admission-cidr.h). */
static void
node_service_cidr(json_t *obj, struct node_item *it)
{
	static const char *const keys[] = {"rke2.io/node-args", "k3s.io/node-args"};
	char cidr[64];

	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		const char *v = kind_annotation(obj, keys[i]);

		if (v != NULL && ctrl_admission_node_args_cidr(v, cidr, sizeof(cidr)) == 0) {
			it->service_cidr = strdup(cidr);
			return;
		}
	}
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
	node_service_cidr(obj, it);
	json_object_foreach(labels, k, v)
	{
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
	item_meta_free(&it->meta);
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
	item_meta_fill(&it->meta, obj);
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
			const char *net = pass == 0 ? it->cfg->spec.nics[i].network_name
						    : it->cfg->status.nics[i].network_name;
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

/* --- what each kind's informer keeps ------------------------------------------------- */

const struct ctrl_item_ops ctrl_items_pool = {
    .transform = pool_transform,
    .destroy = pool_item_free,
    .index_name = "network",
    .index = pool_index_network,
};

const struct ctrl_item_ops ctrl_items_cfg = {
    .transform = cfg_transform,
    .destroy = cfg_item_free,
    .index_name = "network",
    .index = cfg_index_network,
};

const struct ctrl_item_ops ctrl_items_vm = {
    .transform = vm_transform,
    .destroy = vm_item_free,
};

const struct ctrl_item_ops ctrl_items_nad = {
    .transform = nad_transform,
    .destroy = nad_item_free,
};

const struct ctrl_item_ops ctrl_items_node = {
    .transform = node_transform,
    .destroy = node_item_free,
};

const struct ctrl_item_ops ctrl_items_agent = {
    .transform = agent_transform,
    .destroy = agent_item_free,
    .index_name = "pool",
    .index = agent_index_pool,
};
