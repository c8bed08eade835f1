/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Object metadata read in place (name, namespace, uid, resourceVersion, labels, annotations,
 * generation, deletion), finalizers added and removed, and an ownerReference to an object.
 */
#include <errno.h>
#include <string.h>

#include "kube/kube-internal.h"

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
