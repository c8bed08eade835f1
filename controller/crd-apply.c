/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vm-dhcp-controller --apply-crds (see crd-apply.h): at start, before any informer, the
 * CustomResourceDefinitions this build carries (the files of crds/, embedded at build time) replace
 * the spec of those on the cluster, as the Go project's controller applies its own at start
 * (upstream:pkg/crd/crd.go). Helm installs a chart's crds/ only when they are absent and never
 * upgrades them: over the Go project's CRDs, or after `helm upgrade`, the cluster would keep
 * an older schema that prunes our additive fields.
 *
 * Only existing CRDs are updated (get, then update with their resourceVersion): the chart's
 * crds/ creates them when absent, so the RBAC rule can name the two CRDs (resourceNames; a
 * create cannot be named). Their labels and annotations are kept, ours added. Start-up style:
 * one call at a time, waited for with kube_run_until.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "controller/crd-apply.h"
#include "kube/kube.h"
#include "kube/yaml.h"
#include "lib/log.h"
#include "lib/util.h"

/*
 * The CRD files, embedded as they are in the source tree (the Makefile makes this object
 * depend on them), each followed by a NUL byte.
 */
__asm__(".section .rodata\n"
	".balign 8\n"
	"crd_apply_ippools:\n"
	".incbin \"crds/ippools.yaml\"\n"
	".byte 0\n"
	"crd_apply_ippools_end:\n"
	".balign 8\n"
	"crd_apply_vmnetcfgs:\n"
	".incbin \"crds/virtualmachinenetworkconfigs.yaml\"\n"
	".byte 0\n"
	"crd_apply_vmnetcfgs_end:\n"
	".previous\n");
extern const char crd_apply_ippools[], crd_apply_ippools_end[];
extern const char crd_apply_vmnetcfgs[], crd_apply_vmnetcfgs_end[];

static const struct kube_resource crd_res = {
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false};

#define CALL_GUARD_MS (60 * 1000L)
#define MAX_CONFLICTS 3

/* into[key] gets from's members that it does not have (objects of strings). */
static void
merge_map(json_t *meta, const json_t *from, const char *key)
{
	json_t *dst = json_object_get(meta, key);
	const char *k;
	json_t *v;

	if (!json_is_object(from))
		return;
	if (!json_is_object(dst)) {
		dst = json_object();
		if (dst == NULL || json_object_set_new(meta, key, dst) < 0)
			return;
	}
	json_object_foreach((json_t *)from, k, v)
	{
		if (json_object_get(dst, k) == NULL)
			json_object_set(dst, k, v);
	}
}

/*
 * The object to PUT: ours (want, borrowed) with the cluster's (have, borrowed) resourceVersion,
 * and its labels and annotations where ours do not set them. New reference or NULL.
 */
static json_t *
desired(const json_t *want, const json_t *have)
{
	json_t *obj = json_deep_copy(want), *meta, *hmeta = json_object_get(have, "metadata");
	const char *rv = kube_obj_resource_version(have);

	if (obj == NULL || rv == NULL)
		goto fail;
	meta = json_object_get(obj, "metadata");
	if (!json_is_object(meta) ||
	    json_object_set_new(meta, "resourceVersion", json_string(rv)) < 0)
		goto fail;
	merge_map(meta, json_object_get(hmeta, "labels"), "labels");
	merge_map(meta, json_object_get(hmeta, "annotations"), "annotations");
	return obj;
fail:
	json_decref(obj);
	return NULL;
}

/* One CRD document: get it, replace its spec (retried on Conflict). */
static int
apply_one(struct event_base *base, struct kube_client *client, const json_t *want, char *err,
    size_t errlen)
{
	const char *name = kube_obj_name(want);
	struct kube_sync c = {0};
	json_t *obj;
	int r;

	if (name == NULL) {
		snprintf(err, errlen, "an embedded CRD has no metadata.name");
		return -EINVAL;
	}
	for (int attempt = 0;; attempt++) {
		kube_sync_reset(&c);
		r = kube_sync_wait(base, &c, CALL_GUARD_MS,
		    kube_get(client, &crd_res, NULL, name, kube_sync_done, &c, NULL));
		if (r == -ENOENT) {
			snprintf(err, errlen,
			    "CustomResourceDefinition %s not found: install it first (the chart "
			    "installs it from its crds/, or kubectl apply -f crds/)",
			    name);
			kube_sync_reset(&c);
			return r;
		}
		if (r < 0) {
			snprintf(
			    err, errlen, "get CustomResourceDefinition %s: %s", name, c.message);
			kube_sync_reset(&c);
			return r;
		}
		obj = desired(want, c.object);
		kube_sync_reset(&c);
		if (obj == NULL) {
			snprintf(err, errlen, "CustomResourceDefinition %s: out of memory", name);
			return -ENOMEM;
		}
		r = kube_sync_wait(base, &c, CALL_GUARD_MS,
		    kube_update(client, &crd_res, obj, kube_sync_done, &c, NULL));
		json_decref(obj);
		json_decref(kube_sync_take(&c)); /* c.message stays for the error below */
		if (r == 0) {
			log_info("CustomResourceDefinition %s applied (this build's schema)", name);
			return 0;
		}
		if (r != -ESTALE || attempt + 1 >= MAX_CONFLICTS) {
			snprintf(
			    err, errlen, "update CustomResourceDefinition %s: %s", name, c.message);
			return r;
		}
		/* another replica applied it meanwhile: read it again */
	}
}

int
ctrl_apply_crds(struct event_base *base, struct kube_client *client, char *err, size_t errlen)
{
	const struct {
		const char *start, *end, *file;
	} files[] = {
	    {crd_apply_ippools, crd_apply_ippools_end, "crds/ippools.yaml"},
	    {crd_apply_vmnetcfgs, crd_apply_vmnetcfgs_end,
		"crds/virtualmachinenetworkconfigs.yaml"},
	};
	int r = 0;

	for (size_t i = 0; i < ELEMENTSOF(files) && r == 0; i++) {
		struct yaml_error ye = {0};
		json_t **docs = NULL;
		int n = yaml_parse_documents(
		    files[i].start, (size_t)(files[i].end - files[i].start) - 1, &docs, NULL, &ye);

		if (n < 0) {
			snprintf(err, errlen, "embedded %s: line %u: %s", files[i].file, ye.line,
			    ye.message);
			return n;
		}
		for (int d = 0; d < n; d++) {
			if (r == 0)
				r = apply_one(base, client, docs[d], err, errlen);
			json_decref(docs[d]);
		}
		free(docs);
	}
	return r;
}
