/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/meta.c - what both kinds share outside spec and status: the metadata subset,
 * RFC 3339 times (lib/rfc3339.c, as time_t seconds), networkName canonical form.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crds/crds-internal.h"
#include "crds/meta.h"
#include "lib/rfc3339.h"
#include "lib/util.h"

/* --- times -------------------------------------------------------------------------- */

int
crd_time_parse(const char *s, time_t *ret)
{
	int64_t usec;

	if (rfc3339_parse(s, &usec) < 0)
		return -EINVAL;
	/* floor: a fraction before the epoch belongs to the second before */
	*ret = (time_t)(usec / 1000000 - (usec % 1000000 < 0));
	return 0;
}

void
crd_time_format(time_t t, char out[21])
{
	char buf[RFC3339_MAX];

	rfc3339_format((int64_t)t * 1000000, 0, buf);
	memcpy(out, buf, 20);
	out[20] = '\0';
}

static json_t *
time_json(time_t t)
{
	char buf[21];

	crd_time_format(t, buf);
	return json_string(buf);
}

/* --- networkName -------------------------------------------------------------------- */

int
crd_network_name_canonicalize(const char *s, char out[CRD_NETWORK_NAME_MAX + 1])
{
	const char *slash;
	size_t len = strlen(s);

	if (len == 0 || len > CRD_NETWORK_NAME_INPUT_MAX)
		return -EINVAL;
	/* Upstream's schema takes any string of up to 64 characters: a name that is not a
	 * Kubernetes object name (upper case, say) is kept as written and simply matches no
	 * NetworkAttachmentDefinition. Refused: a second "/", an empty part, blanks and
	 * control characters. */
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return -EINVAL;
	slash = strchr(s, '/');
	if (slash && (slash == s || slash[1] == '\0' || strchr(slash + 1, '/')))
		return -EINVAL;
	if (slash)
		snprintf(out, CRD_NETWORK_NAME_MAX + 1, "%s", s);
	else
		snprintf(out, CRD_NETWORK_NAME_MAX + 1, "default/%s", s);
	return 0;
}

const char *
crd_network_name_spec_form(const char *canonical)
{
	if (strlen(canonical) > CRD_NETWORK_NAME_INPUT_MAX &&
	    strncmp(canonical, "default/", 8) == 0)
		return canonical + 8;
	return canonical;
}

/* --- metadata ----------------------------------------------------------------------- */

static int
meta_string(const json_t *md, const char *key, char **dst, struct crd_error *err)
{
	json_t *v = json_object_get(md, key);
	char path[64];
	int r = 0;

	if (!v || json_is_null(v))
		return 0;
	snprintf(path, sizeof(path), "metadata.%s", key);
	if (!json_is_string(v))
		return crd_error_set(err, path, "must be a string");
	*dst = crd_strdup(json_string_value(v), &r);
	return r;
}

static int
meta_time(const json_t *md, const char *key, time_t *dst, struct crd_error *err)
{
	json_t *v = json_object_get(md, key);
	char path[64];

	if (!v || json_is_null(v))
		return 0;
	snprintf(path, sizeof(path), "metadata.%s", key);
	if (!json_is_string(v) || crd_time_parse(json_string_value(v), dst) < 0)
		return crd_error_set(err, path, "is not an RFC 3339 date-time");
	return 0;
}

static int
meta_map(const json_t *md, const char *key, json_t **dst, struct crd_error *err)
{
	json_t *v = json_object_get(md, key), *x;
	const char *k;
	char path[64];

	if (!v || json_is_null(v))
		return 0;
	snprintf(path, sizeof(path), "metadata.%s", key);
	if (!json_is_object(v))
		return crd_error_set(err, path, "must be an object");
	json_object_foreach(v, k, x) if (!json_is_string(x)) return crd_error_set(
	    err, path, "value of \"%s\" must be a string", k);
	*dst = json_deep_copy(v);
	return *dst ? 0 : -ENOMEM;
}

int
crd_meta_decode(const json_t *md, struct crd_meta *meta, struct crd_error *err)
{
	json_t *v;
	int r;

	memset(meta, 0, sizeof(*meta));
	if (!md || json_is_null(md))
		return 0;
	if (!json_is_object(md))
		return crd_error_set(err, "metadata", "must be an object");
	if ((r = meta_string(md, "namespace", &meta->namespace, err)) < 0 ||
	    (r = meta_string(md, "name", &meta->name, err)) < 0 ||
	    (r = meta_string(md, "uid", &meta->uid, err)) < 0 ||
	    (r = meta_string(md, "resourceVersion", &meta->resource_version, err)) < 0 ||
	    (r = meta_time(md, "creationTimestamp", &meta->creation_timestamp, err)) < 0 ||
	    (r = meta_time(md, "deletionTimestamp", &meta->deletion_timestamp, err)) < 0 ||
	    (r = meta_map(md, "labels", &meta->labels, err)) < 0 ||
	    (r = meta_map(md, "annotations", &meta->annotations, err)) < 0)
		goto fail;
	v = json_object_get(md, "generation");
	if (v && !json_is_null(v)) {
		if (!json_is_integer(v)) {
			r = crd_error_set(err, "metadata.generation", "must be an integer");
			goto fail;
		}
		meta->generation = json_integer_value(v);
	}
	v = json_object_get(md, "finalizers");
	if (v && !json_is_null(v)) {
		size_t n = json_array_size(v);

		if (!json_is_array(v)) {
			r = crd_error_set(err, "metadata.finalizers", "must be an array");
			goto fail;
		}
		meta->finalizers = n ? calloc(n, sizeof(char *)) : NULL;
		if (n && !meta->finalizers) {
			r = -ENOMEM;
			goto fail;
		}
		for (size_t i = 0; i < n; i++) {
			json_t *x = json_array_get(v, i);

			if (!json_is_string(x)) {
				char path[64];

				snprintf(path, sizeof(path), "metadata.finalizers[%zu]", i);
				r = crd_error_set(err, path, "must be a string");
				goto fail;
			}
			r = 0;
			meta->finalizers[i] = crd_strdup(json_string_value(x), &r);
			if (r < 0)
				goto fail;
			meta->n_finalizers++;
		}
	}
	return 0;
fail:
	crd_meta_clear(meta);
	return r;
}

static int
set_str(json_t *o, const char *k, const char *s)
{
	return s ? json_object_set_new(o, k, json_string(s)) : 0;
}

json_t *
crd_meta_encode(const struct crd_meta *meta)
{
	json_t *o = json_object();
	int r = 0;

	if (!o)
		return NULL;
	r |= set_str(o, "name", meta->name);
	r |= set_str(o, "namespace", meta->namespace);
	r |= set_str(o, "uid", meta->uid);
	r |= set_str(o, "resourceVersion", meta->resource_version);
	if (meta->generation)
		r |= json_object_set_new(o, "generation", json_integer(meta->generation));
	if (meta->creation_timestamp)
		r |= json_object_set_new(
		    o, "creationTimestamp", time_json(meta->creation_timestamp));
	if (meta->deletion_timestamp)
		r |= json_object_set_new(
		    o, "deletionTimestamp", time_json(meta->deletion_timestamp));
	if (meta->labels)
		r |= json_object_set_new(o, "labels", json_deep_copy(meta->labels));
	if (meta->annotations)
		r |= json_object_set_new(o, "annotations", json_deep_copy(meta->annotations));
	if (meta->n_finalizers) {
		json_t *a = json_array();

		for (size_t i = 0; a && i < meta->n_finalizers; i++)
			r |= json_array_append_new(a, json_string(meta->finalizers[i]));
		r |= json_object_set_new(o, "finalizers", a);
	}
	if (r) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int
crd_meta_encode_field(const void *meta, json_t **ret)
{
	*ret = crd_meta_encode(meta);
	return *ret ? 0 : -ENOMEM;
}

void
crd_meta_clear(struct crd_meta *meta)
{
	free(meta->namespace);
	free(meta->name);
	free(meta->uid);
	free(meta->resource_version);
	json_decref(meta->labels);
	json_decref(meta->annotations);
	for (size_t i = 0; i < meta->n_finalizers; i++)
		free(meta->finalizers[i]);
	free(meta->finalizers);
	memset(meta, 0, sizeof(*meta));
}
