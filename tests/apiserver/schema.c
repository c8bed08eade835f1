/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Structural-schema pruning and defaulting of custom resources, as the real API server does
 * on every write (Kubernetes "Specifying a structural schema", "Field pruning",
 * "Defaulting"), in that order:
 *
 *   - a field of an object that its schema's properties do not name is dropped, unless the
 *     schema has additionalProperties (a map: each value goes through that schema) or
 *     x-kubernetes-preserve-unknown-fields: true; an object schema with neither properties
 *     nor either of those keeps nothing;
 *   - array items go through the items schema;
 *   - a null where the schema is not nullable is dropped (so a default then fills it);
 *   - then every property missing from an object that has a default gets a copy of it;
 *   - apiVersion, kind and metadata stay at the root (and in an embedded resource).
 *
 * No validation (types, patterns, minimum, CEL): the product's codec checks what it reads,
 * and tests/unit/test-crds-schema.c checks the codec against the schemas. Values are never
 * modified in place: a stored object's subtrees are shared with its history and watchers.
 */
#include "tests/apiserver/schema.h"

#include <stdbool.h>
#include <string.h>

static bool
flag(json_t *schema, const char *key)
{
	return json_is_true(json_object_get(schema, key));
}

static bool
kept_meta(const char *key)
{
	return strcmp(key, "apiVersion") == 0 || strcmp(key, "kind") == 0 ||
	       strcmp(key, "metadata") == 0;
}

static json_t *fix(json_t *v, json_t *s, bool embedded);

/* *out: a shallow copy of v, made on the first change. */
static json_t *
writable(json_t **out, json_t *v)
{
	if (!*out)
		*out = json_copy(v);
	return *out;
}

static json_t *
fix_object(json_t *v, json_t *s, bool embedded)
{
	json_t *props = json_object_get(s, "properties");
	json_t *addl = json_object_get(s, "additionalProperties");
	bool keep_unknown = flag(s, "x-kubernetes-preserve-unknown-fields") || json_is_true(addl);
	json_t *out = NULL, *val, *sub, *dflt;
	const char *key;

	json_object_foreach(v, key, val)
	{
		json_t *nv;

		if (embedded && kept_meta(key))
			continue;
		sub = json_object_get(props, key);
		if (!sub && json_is_object(addl))
			sub = addl;
		if (!sub) {
			if (!keep_unknown)
				json_object_del(writable(&out, v), key);
			continue;
		}
		if (json_is_null(val) && !flag(sub, "nullable")) {
			json_object_del(writable(&out, v), key);
			continue;
		}
		nv = fix(val, sub, flag(sub, "x-kubernetes-embedded-resource"));
		if (nv != val)
			json_object_set_new(writable(&out, v), key, nv);
		else
			json_decref(nv);
	}
	json_object_foreach(props, key, sub)
	{
		if ((dflt = json_object_get(sub, "default")) != NULL &&
		    !json_object_get(out ? out : v, key))
			json_object_set_new(writable(&out, v), key, json_deep_copy(dflt));
	}
	return out ? out : json_incref(v);
}

static json_t *
fix_array(json_t *v, json_t *items)
{
	json_t *out = NULL, *val;
	size_t i;

	json_array_foreach(v, i, val)
	{
		json_t *nv = fix(val, items, flag(items, "x-kubernetes-embedded-resource"));

		if (nv != val)
			json_array_set_new(writable(&out, v), i, nv);
		else
			json_decref(nv);
	}
	return out ? out : json_incref(v);
}

static json_t *
fix(json_t *v, json_t *s, bool embedded)
{
	if (json_is_object(v) && json_is_object(s))
		return fix_object(v, s, embedded);
	if (json_is_array(v) && json_is_object(json_object_get(s, "items")))
		return fix_array(v, json_object_get(s, "items"));
	return json_incref(v);
}

json_t *
schema_apply(json_t *schema, json_t *obj)
{
	return fix(obj, schema, true);
}
