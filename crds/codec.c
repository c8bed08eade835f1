/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/codec.c - the table-driven decoder: walks a JSON object and a crd_field table
 * together, enforcing type, required, format, pattern and limits, then calls each field's
 * decode hook. Errors carry the field path.
 */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crds/crds-internal.h"
#include "lib/rfc3339.h"
#include "lib/util.h"

int
crd_error_set(struct crd_error *err, const char *path, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (!err)
		return -EINVAL;
	snprintf(err->path, sizeof(err->path), "%s", path);
	if (path[0])
		n = snprintf(err->message, sizeof(err->message), "%s: ", err->path);
	if (n < 0 || (size_t)n >= sizeof(err->message))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(err->message + n, sizeof(err->message) - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

void
crd_path_key(char *out, size_t size, const char *path, const char *key)
{
	if (path[0])
		snprintf(out, size, "%s.%s", path, key);
	else
		snprintf(out, size, "%s", key);
}

void
crd_path_index(char *out, size_t size, const char *path, size_t i)
{
	snprintf(out, size, "%s[%zu]", path, i);
}

char *
crd_strdup(const char *s, int *r)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*r = -ENOMEM;
	return d;
}

/* Compiled patterns, cached by the address of the pattern string (a constant). */
struct compiled {
	const char *pattern;
	regex_t re;
};
static struct compiled compiled[16];
static size_t n_compiled;

int
crd_pattern_match(const char *pattern, const char *s)
{
	regex_t *re = NULL;

	for (size_t i = 0; i < n_compiled; i++)
		if (compiled[i].pattern == pattern || strcmp(compiled[i].pattern, pattern) == 0) {
			re = &compiled[i].re;
			break;
		}
	if (!re) {
		if (n_compiled == ELEMENTSOF(compiled))
			return -ENOMEM;
		if (regcomp(&compiled[n_compiled].re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
			return -ENOMEM;
		compiled[n_compiled].pattern = pattern;
		re = &compiled[n_compiled++].re;
	}
	return regexec(re, s, 0, NULL, 0) == 0;
}

static const char *const type_names[] = {
    [CRD_STRING] = "a string",
    [CRD_INTEGER] = "an integer",
    [CRD_BOOLEAN] = "a boolean",
    [CRD_ARRAY] = "an array",
    [CRD_OBJECT] = "an object",
    [CRD_MAP] = "an object",
};

static bool
type_ok(const json_t *v, enum crd_type t)
{
	switch (t) {
	case CRD_STRING:
		return json_is_string(v);
	case CRD_INTEGER:
		return json_is_integer(v);
	case CRD_BOOLEAN:
		return json_is_boolean(v);
	case CRD_ARRAY:
		return json_is_array(v);
	case CRD_OBJECT:
	case CRD_MAP:
		return json_is_object(v);
	}
	return false;
}

/* Quote a string for a message, shortened and with control characters escaped. */
static void
quote(char *out, size_t size, const char *s)
{
	size_t o = 0;

	out[o++] = '"';
	for (; *s && o + 6 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
		else
			out[o++] = (char)c;
	}
	if (*s && o + 4 < size) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o++] = '"';
	out[o] = '\0';
}

static int
validate_string(const json_t *v, const char *path, const struct crd_field *f, struct crd_error *err)
{
	const char *s = json_string_value(v);
	size_t len = json_string_length(v);
	char q[80];
	uint32_t a;
	int64_t usec;
	int m;

	quote(q, sizeof(q), s);
	if (strlen(s) != len)
		return crd_error_set(err, path, "contains a NUL character");
	if (f->format && strcmp(f->format, "ipv4") == 0 && ipv4_parse(s, &a) < 0)
		return crd_error_set(err, path, "%s is not an IPv4 address", q);
	if (f->format && strcmp(f->format, "date-time") == 0 && rfc3339_parse(s, &usec) < 0)
		return crd_error_set(err, path, "%s is not an RFC 3339 date-time", q);
	if (f->max_length && (long long)len > f->max_length)
		return crd_error_set(
		    err, path, "%s is longer than %lld characters", q, f->max_length);
	if (f->enum_values) {
		bool found = false;

		for (const char *const *e = f->enum_values; *e && !found; e++)
			found = strcmp(*e, s) == 0;
		if (!found)
			return crd_error_set(err, path, "%s is not one of the allowed values", q);
	}
	if (f->pattern) {
		m = crd_pattern_match(f->pattern, s);
		if (m < 0)
			return m;
		if (m == 0) {
			const char *what = "does not match the pattern";

			if (strcmp(f->pattern, CRD_PATTERN_CIDR) == 0)
				what = "is not an IPv4 CIDR (a.b.c.d/8..32)";
			else if (strcmp(f->pattern, CRD_PATTERN_ROUTE_CIDR) == 0)
				what = "is not an IPv4 CIDR";
			else if (strcmp(f->pattern, CRD_PATTERN_MAC) == 0)
				what = "is not a MAC address";
			else if (strcmp(f->pattern, CRD_PATTERN_NTP) == 0)
				what = "is not an IPv4 address or host name";
			else if (strcmp(f->pattern, CRD_PATTERN_DOMAIN) == 0)
				what = "is not a domain name";
			else if (strcmp(f->pattern, CRD_PATTERN_NETWORK_NAME) == 0)
				what = "is not a \"namespace/name\" or \"name\"";
			return crd_error_set(err, path, "%s %s", q, what);
		}
	}
	return 0;
}

int
crd_validate_value(
    const json_t *v, const char *path, const struct crd_field *f, struct crd_error *err)
{
	char sub[128];
	int r;

	if (!type_ok(v, f->type))
		return crd_error_set(err, path, "must be %s", type_names[f->type]);
	switch (f->type) {
	case CRD_STRING:
		return validate_string(v, path, f, err);
	case CRD_INTEGER: {
		long long n = json_integer_value(v);

		if (f->has_minimum && n < f->minimum)
			return crd_error_set(
			    err, path, "%lld is below the minimum %lld", n, f->minimum);
		if (f->has_maximum && n > f->maximum)
			return crd_error_set(
			    err, path, "%lld is above the maximum %lld", n, f->maximum);
		return 0;
	}
	case CRD_ARRAY: {
		size_t n = json_array_size(v);

		if (f->max_items && (long long)n > f->max_items)
			return crd_error_set(
			    err, path, "at most %lld items (got %zu)", f->max_items, n);
		if (f->items && f->items->type != CRD_OBJECT)
			for (size_t i = 0; i < n; i++) {
				crd_path_index(sub, sizeof(sub), path, i);
				r = crd_validate_value(json_array_get(v, i), sub, f->items, err);
				if (r < 0)
					return r;
			}
		return 0;
	}
	case CRD_MAP: {
		const char *k;
		json_t *x;

		if (!f->items)
			return 0;
		json_object_foreach((json_t *)v, k, x)
		{
			snprintf(sub, sizeof(sub), "%s[%s]", path, k);
			r = crd_validate_value(x, sub, f->items, err);
			if (r < 0)
				return r;
		}
		return 0;
	}
	default:
		return 0;
	}
}

static const struct crd_field *
find_field(const struct crd_field *fields, const char *key)
{
	for (const struct crd_field *f = fields; f->key; f++)
		if (strcmp(f->key, key) == 0)
			return f;
	return NULL;
}

int
crd_decode_object(const json_t *obj, const char *path, const struct crd_field *fields, bool strict,
    void *ctx, struct crd_error *err)
{
	char sub[128];
	const char *k;
	json_t *v;
	int r;

	if (!json_is_object(obj))
		return crd_error_set(err, path[0] ? path : "(root)", "must be an object");
	if (strict)
		json_object_foreach((json_t *)obj, k, v)
		{
			if (!find_field(fields, k)) {
				crd_path_key(sub, sizeof(sub), path, k);
				return crd_error_set(err, sub, "unknown field");
			}
		}
	for (const struct crd_field *f = fields; f->key; f++) {
		v = json_object_get(obj, f->key);
		crd_path_key(sub, sizeof(sub), path, f->key);
		if (!v || json_is_null(v)) {
			if (f->required)
				return crd_error_set(err, sub, "required");
			continue;
		}
		r = crd_validate_value(v, sub, f, err);
		if (r < 0)
			return r;
		if (f->decode)
			r = f->decode(v, sub, ctx, err);
		else if (f->type == CRD_OBJECT && f->children)
			r = crd_decode_object(v, sub, f->children, f->strict, ctx, err);
		if (r < 0)
			return r;
	}
	return 0;
}
