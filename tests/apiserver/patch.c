/* SPDX-License-Identifier: Apache-2.0 */
/* JSON merge patch (RFC 7386) and JSON patch (RFC 6902: add, remove and replace). */
#include "tests/apiserver/patch.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

json_t *
merge_patch(json_t *target, json_t *patch)
{
	json_t *out;
	const char *k;
	json_t *v;

	if (!json_is_object(patch))
		return json_deep_copy(patch);
	out = json_is_object(target) ? json_copy(target) : json_object();
	json_object_foreach(patch, k, v)
	{
		if (json_is_null(v)) {
			json_object_del(out, k);
		} else {
			json_t *nv = merge_patch(json_object_get(out, k), v);
			json_object_set_new(out, k, nv);
		}
	}
	return out;
}

/* Decode one RFC 6901 reference token (~1 -> /, ~0 -> ~) into a new string. */
static char *
decode_token(const char *s, size_t len)
{
	char *out = malloc(len + 1), *o = out;

	if (out == NULL)
		abort();
	for (size_t i = 0; i < len; i++) {
		if (s[i] == '~' && i + 1 < len && (s[i + 1] == '0' || s[i + 1] == '1')) {
			*o++ = s[i + 1] == '0' ? '~' : '/';
			i++;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

static int
array_index(json_t *arr, const char *tok, bool allow_end, size_t *ret)
{
	char *end;
	unsigned long v;

	if (allow_end && strcmp(tok, "-") == 0) {
		*ret = json_array_size(arr);
		return 0;
	}
	if (*tok == '\0' || (tok[0] == '0' && tok[1] != '\0'))
		return -EINVAL;
	for (const char *p = tok; *p != '\0'; p++)
		if (*p < '0' || *p > '9')
			return -EINVAL;
	v = strtoul(tok, &end, 10);
	if (v > json_array_size(arr) || (!allow_end && v == json_array_size(arr)))
		return -EINVAL;
	*ret = v;
	return 0;
}

/*
 * Resolve a pointer to its parent container (borrowed) and last token (new string).
 * The empty pointer "" has no parent: *ret_parent = NULL, *ret_tok = NULL.
 */
static int
resolve_parent(json_t *doc, const char *ptr, json_t **ret_parent, char **ret_tok)
{
	json_t *cur = doc;
	const char *p;

	if (*ptr == '\0') {
		*ret_parent = NULL;
		*ret_tok = NULL;
		return 0;
	}
	if (*ptr != '/')
		return -EINVAL;
	p = ptr + 1;
	for (;;) {
		const char *slash = strchr(p, '/');
		size_t len = slash != NULL ? (size_t)(slash - p) : strlen(p);
		char *tok = decode_token(p, len);

		if (slash == NULL) {
			*ret_parent = cur;
			*ret_tok = tok;
			return 0;
		}
		if (json_is_object(cur)) {
			cur = json_object_get(cur, tok);
		} else if (json_is_array(cur)) {
			size_t i;
			cur = array_index(cur, tok, false, &i) < 0 ? NULL : json_array_get(cur, i);
		} else {
			cur = NULL;
		}
		free(tok);
		if (cur == NULL)
			return -EINVAL;
		p = slash + 1;
	}
}

/* Value at pointer (borrowed) or NULL. */
static json_t *
get_ptr(json_t *doc, const char *ptr)
{
	json_t *parent, *v = NULL;
	char *tok;
	size_t i;

	if (resolve_parent(doc, ptr, &parent, &tok) < 0)
		return NULL;
	if (tok == NULL)
		return doc;
	if (json_is_object(parent))
		v = json_object_get(parent, tok);
	else if (json_is_array(parent) && array_index(parent, tok, false, &i) == 0)
		v = json_array_get(parent, i);
	free(tok);
	return v;
}

/* Add value (takes the reference) at ptr; *doc may be replaced. */
static int
op_add(json_t **doc, const char *ptr, json_t *value, bool replace)
{
	json_t *parent;
	char *tok;
	size_t i;
	int r = -EINVAL;

	if (resolve_parent(*doc, ptr, &parent, &tok) < 0) {
		json_decref(value);
		return -EINVAL;
	}
	if (tok == NULL) {
		json_decref(*doc);
		*doc = value;
		return 0;
	}
	if (json_is_object(parent)) {
		if (!replace || json_object_get(parent, tok) != NULL) {
			json_object_set(parent, tok, value);
			r = 0;
		}
	} else if (json_is_array(parent)) {
		if (array_index(parent, tok, !replace, &i) == 0) {
			if (replace)
				json_array_set(parent, i, value);
			else
				json_array_insert(parent, i, value);
			r = 0;
		}
	}
	free(tok);
	json_decref(value);
	return r;
}

static int
op_remove(json_t *doc, const char *ptr)
{
	json_t *parent;
	char *tok;
	size_t i;
	int r = -EINVAL;

	if (resolve_parent(doc, ptr, &parent, &tok) < 0 || tok == NULL)
		return -EINVAL;
	if (json_is_object(parent)) {
		if (json_object_del(parent, tok) == 0)
			r = 0;
	} else if (json_is_array(parent)) {
		if (array_index(parent, tok, false, &i) == 0 && json_array_remove(parent, i) == 0)
			r = 0;
	}
	free(tok);
	return r;
}

int
json_patch(json_t *doc, json_t *ops, json_t **ret)
{
	json_t *out, *op;
	size_t idx;

	if (!json_is_array(ops))
		return -EBADMSG;
	json_array_foreach(ops, idx, op)
	{
		const char *o = json_string_value(json_object_get(op, "op"));
		const char *path = json_string_value(json_object_get(op, "path"));
		if (o == NULL || path == NULL)
			return -EBADMSG;
		if ((strcmp(o, "add") == 0 || strcmp(o, "replace") == 0) &&
		    json_object_get(op, "value") == NULL)
			return -EBADMSG;
		/* move, copy and test are RFC 6902 too, but nothing here sends them */
		if (strcmp(o, "add") != 0 && strcmp(o, "remove") != 0 && strcmp(o, "replace") != 0)
			return -EBADMSG;
	}
	out = json_deep_copy(doc);
	json_array_foreach(ops, idx, op)
	{
		const char *o = json_string_value(json_object_get(op, "op"));
		const char *path = json_string_value(json_object_get(op, "path"));
		json_t *value = json_object_get(op, "value");
		int r = 0;

		if (strcmp(o, "add") == 0) {
			r = op_add(&out, path, json_deep_copy(value), false);
		} else if (strcmp(o, "remove") == 0) {
			r = op_remove(out, path);
		} else if (strcmp(o, "replace") == 0) {
			r = get_ptr(out, path) == NULL
				? -EINVAL
				: op_add(&out, path, json_deep_copy(value), true);
		}
		if (r < 0) {
			json_decref(out);
			return -EINVAL;
		}
	}
	*ret = out;
	return 0;
}
