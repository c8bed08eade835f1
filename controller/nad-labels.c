/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The labels network.harvesterhci.io/ippool-namespace and ippool-name of a
 * NetworkAttachmentDefinition name the IPPool that serves its network, as upstream's
 * pkg/controller/ippool/controller.go (ensureNADLabels) sets them, for the tools that find a
 * network's pool through them. Ours: set by the pool that serves the network (not a second
 * pool refused as a duplicate), whether paused or not; removed once that pool is gone
 * (upstream leaves them). A merge patch of the two labels only: the NAD's other labels and
 * fields are not touched.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "controller/ctrl-internal.h"
#include "controller/placement.h"
#include "lib/log.h"

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

struct kube_reconcile_result
ctrl_nad_labels_ensure(struct ctrl *c, const char *key, const struct pool_item *it)
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

struct kube_reconcile_result
ctrl_nad_labels_remove(struct ctrl *c, const char *key)
{
	const char *slash = strchr(key, '/');
	struct nad_find f = {.name = slash != NULL ? slash + 1 : key};

	snprintf(f.ns, sizeof(f.ns), "%.*s", slash != NULL ? (int)(slash - key) : 0, key);
	kube_store_foreach(kube_informer_store(c->inf_nad), nad_find_visit, &f);
	if (f.found == NULL)
		return ctrl_ok();
	return patch_nad_labels(c, key, f.found, NULL, NULL);
}
