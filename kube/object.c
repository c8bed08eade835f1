/* SPDX-License-Identifier: Apache-2.0 */
/* Resources, borrowed metadata getters, keys, times, clock and backoff helpers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kube/kube-internal.h"
#include "lib/clock.h"

const struct kube_resource kube_res_namespaces = {"", "v1", "namespaces", "Namespace", false};
const struct kube_resource kube_res_configmaps = {"", "v1", "configmaps", "ConfigMap", true};
const struct kube_resource kube_res_pods = {"", "v1", "pods", "Pod", true};
const struct kube_resource kube_res_nodes = {"", "v1", "nodes", "Node", false};
const struct kube_resource kube_res_events = {"", "v1", "events", "Event", true};
const struct kube_resource kube_res_leases = {"coordination.k8s.io", "v1", "leases", "Lease", true};

uint64_t
kube_clock_now(const struct kube_clock *clk)
{
	if (clk && clk->now)
		return clk->now(clk->userdata);
	return clock_now_usec();
}

const char *
kube_resource_api_version(const struct kube_resource *res, char *out, size_t len)
{
	if (!res->group || !*res->group)
		snprintf(out, len, "%s", res->version);
	else
		snprintf(out, len, "%s/%s", res->group, res->version);
	return out;
}

static const json_t *
meta(const json_t *obj)
{
	return json_object_get(obj, "metadata");
}

static const char *
meta_str(const json_t *obj, const char *field)
{
	return json_string_value(json_object_get(meta(obj), field));
}

const char *
kube_obj_name(const json_t *obj)
{
	return meta_str(obj, "name");
}

const char *
kube_obj_namespace(const json_t *obj)
{
	return meta_str(obj, "namespace");
}

const char *
kube_obj_uid(const json_t *obj)
{
	return meta_str(obj, "uid");
}

const char *
kube_obj_resource_version(const json_t *obj)
{
	return meta_str(obj, "resourceVersion");
}

const char *
kube_obj_label(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(json_object_get(meta(obj), "labels"), key));
}

const char *
kube_obj_annotation(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(json_object_get(meta(obj), "annotations"), key));
}

int64_t
kube_obj_generation(const json_t *obj)
{
	return (int64_t)json_integer_value(json_object_get(meta(obj), "generation"));
}

bool
kube_obj_is_deleting(const json_t *obj)
{
	const json_t *ts = json_object_get(meta(obj), "deletionTimestamp");

	return ts && !json_is_null(ts);
}

bool
kube_obj_has_finalizer(const json_t *obj, const char *finalizer)
{
	const json_t *list = json_object_get(meta(obj), "finalizers");
	size_t i;
	json_t *v;

	json_array_foreach(list, i,
	    v) if (json_is_string(v) && strcmp(json_string_value(v), finalizer) == 0) return true;
	return false;
}

int
kube_obj_add_finalizer(json_t *obj, const char *finalizer)
{
	json_t *m = json_object_get(obj, "metadata");
	json_t *list;

	if (!json_is_object(m))
		return -EINVAL;
	if (kube_obj_has_finalizer(obj, finalizer))
		return 0;
	list = json_object_get(m, "finalizers");
	if (!json_is_array(list)) {
		list = json_array();
		if (!list || json_object_set_new(m, "finalizers", list) < 0)
			return -ENOMEM;
	}
	if (json_array_append_new(list, json_string(finalizer)) < 0)
		return -ENOMEM;
	return 1;
}

int
kube_obj_remove_finalizer(json_t *obj, const char *finalizer)
{
	json_t *list = json_object_get(json_object_get(obj, "metadata"), "finalizers");
	int changed = 0;

	for (size_t i = 0; i < json_array_size(list);) {
		json_t *v = json_array_get(list, i);

		if (json_is_string(v) && strcmp(json_string_value(v), finalizer) == 0) {
			json_array_remove(list, i);
			changed = 1;
		} else {
			i++;
		}
	}
	return changed;
}

json_t *
kube_owner_reference(const json_t *owner, const char *api_version, const char *kind)
{
	const char *name = kube_obj_name(owner), *uid = kube_obj_uid(owner);

	if (!name || !uid || !api_version || !kind)
		return NULL;
	return json_pack("{s:s, s:s, s:s, s:s, s:b, s:b}", "apiVersion", api_version, "kind", kind,
	    "name", name, "uid", uid, "controller", 1, "blockOwnerDeletion", 1);
}

int
kube_key_make(const char *ns, const char *name, char *out, size_t len)
{
	int n;

	if (!name || !*name)
		return -EINVAL;
	if (ns && *ns)
		n = snprintf(out, len, "%s/%s", ns, name);
	else
		n = snprintf(out, len, "%s", name);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

int
kube_obj_key(const json_t *obj, char *out, size_t len)
{
	return kube_key_make(kube_obj_namespace(obj), kube_obj_name(obj), out, len);
}

int
kube_key_split(const char *key, char *ns, size_t ns_len, char *name, size_t name_len)
{
	const char *slash = strchr(key, '/');
	size_t nl = slash ? (size_t)(slash - key) : 0;
	const char *n = slash ? slash + 1 : key;

	if (!*n || (slash && strchr(n, '/')))
		return -EINVAL;
	if (nl >= ns_len || strlen(n) >= name_len)
		return -ENAMETOOLONG;
	memcpy(ns, key, nl);
	ns[nl] = '\0';
	strcpy(name, n);
	return 0;
}

uint64_t
kube_backoff_delay(uint64_t base, uint64_t max, unsigned attempt, uint64_t *seed)
{
	uint64_t d = base, x;

	for (unsigned i = 0; i < attempt && d < max; i++)
		d *= 2;
	if (d > max)
		d = max;
	/* xorshift64*: jitter in [0.5, 1.0) of d */
	x = *seed ? *seed : UINT64_C(0x9e3779b97f4a7c15);
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*seed = x;
	x *= UINT64_C(0x2545f4914f6cdd1d);
	return d / 2 +
	       (uint64_t)((double)(x >> 11) / (double)(UINT64_C(1) << 53) * (double)(d / 2));
}
