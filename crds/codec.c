/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/codec.c - the table-driven codec. The decoder walks a JSON object and a crd_field
 * table together, enforcing type, required, format, pattern and limits, then stores each
 * value (the field's decode hook, or its store). Errors carry the field path. The encoder
 * and the equality walk the same tables over the C structs.
 */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crds/crds-internal.h"
#include "lib/ip6.h"
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
	struct in6_addr a6;
	int64_t usec;
	int m;

	quote(q, sizeof(q), s);
	if (strlen(s) != len)
		return crd_error_set(err, path, "contains a NUL character");
	if (f->format && strcmp(f->format, "ipv4") == 0 && ipv4_parse(s, &a) < 0)
		return crd_error_set(err, path, "%s is not an IPv4 address", q);
	if (f->format && strcmp(f->format, "ipv6") == 0 && ipv6_parse(s, &a6) < 0)
		return crd_error_set(err, path, "%s is not an IPv6 address", q);
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

			if (strcmp(f->pattern, CRD_PATTERN_ROUTE_CIDR) == 0)
				what = "is not an IPv4 CIDR";
			else if (strcmp(f->pattern, CRD_PATTERN_NTP) == 0)
				what = "is not an IPv4 address or host name";
			else if (strcmp(f->pattern, CRD_PATTERN_DOMAIN) == 0)
				what = "is not a domain name";
			else if (strcmp(f->pattern, CRD_PATTERN_BOOT_URL) == 0)
				what = "is not an http:// or https:// URL (printable, no spaces)";
			else if (strcmp(f->pattern, CRD_PATTERN_BOOT_NAME) == 0)
				what = "is not a file name, URL or host (printable, no spaces)";
			return crd_error_set(err, path, "%s %s", q, what);
		}
	}
	return 0;
}

/* The checks f itself describes (not f->codec). */
static int
validate_own(const json_t *v, const char *path, const struct crd_field *f, struct crd_error *err)
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

int
crd_validate_value(
    const json_t *v, const char *path, const struct crd_field *f, struct crd_error *err)
{
	int r = validate_own(v, path, f, err);

	if (r == 0 && f->codec)
		r = validate_own(v, path, f->codec, err);
	return r;
}

static const struct crd_field *
find_field(const struct crd_field *fields, const char *key)
{
	for (const struct crd_field *f = fields; f->key; f++)
		if (strcmp(f->key, key) == 0)
			return f;
	return NULL;
}

static void *
at(const void *base, size_t offset)
{
	return (char *)base + offset;
}

/* Size of one array item kept as f says. */
static size_t
item_size(const struct crd_field *f)
{
	switch (f->store) {
	case CRD_S_STR:
		return sizeof(char *);
	case CRD_S_IPV4:
		return sizeof(uint32_t);
	case CRD_S_IPV6:
		return sizeof(struct in6_addr);
	default:
		return f->size; /* CRD_S_STRUCT */
	}
}

/* First item and count of an array field of base. */
static char *
array_items(const struct crd_field *f, const void *base, size_t *n)
{
	*n = *(size_t *)at(base, f->aux);
	return f->size ? at(base, f->offset) : *(char **)at(base, f->offset);
}

static int decode_value(const json_t *v, const char *path, const struct crd_field *f, void *base,
    struct crd_error *err);

static int
decode_array(
    const json_t *v, const char *path, const struct crd_field *f, void *base, struct crd_error *err)
{
	size_t n = json_array_size(v), size = item_size(f->items);
	size_t *count = at(base, f->aux);
	char sub[128], *items;
	int r;

	if (n == 0)
		return 0;
	if (f->size) {
		items = at(base, f->offset);
		n = n < f->size ? n : f->size;
	} else {
		items = calloc(n, size);
		if (!items)
			return -ENOMEM;
		*(char **)at(base, f->offset) = items;
	}
	for (size_t i = 0; i < n; i++) {
		crd_path_index(sub, sizeof(sub), path, i);
		r = decode_value(json_array_get(v, i), sub, f->items, items + i * size, err);
		if (r < 0)
			return r;
		(*count)++;
	}
	return 0;
}

/* Store the validated value v as f says, into base. */
static int
decode_value(
    const json_t *v, const char *path, const struct crd_field *f, void *base, struct crd_error *err)
{
	const char *s = json_string_value(v);
	void *p = at(base, f->offset);
	int r = 0;

	switch (f->store) {
	case CRD_S_NONE:
		return 0;
	case CRD_S_CONST:
		if (strcmp(s, f->value) != 0)
			return crd_error_set(err, path, "\"%.60s\" is not %s", s, f->value);
		return 0;
	case CRD_S_STR:
		free(*(char **)p);
		*(char **)p = crd_strdup(s, &r);
		return r;
	case CRD_S_CHARS:
		snprintf(p, f->size, "%s", s);
		return 0;
	case CRD_S_NETNAME:
		if (crd_network_name_canonicalize(s, p) < 0)
			return crd_error_set(
			    err, path, "\"%.64s\" is not a \"namespace/name\" or \"name\"", s);
		return 0;
	case CRD_S_MAC:
		if (mac_canonicalize(s, p) < 0)
			return crd_error_set(err, path, "\"%.40s\" is not a MAC address", s);
		return 0;
	case CRD_S_IPV4:
		if (ipv4_parse(s, p) < 0)
			return crd_error_set(err, path, "\"%.40s\" is not an IPv4 address", s);
		return 0;
	case CRD_S_CIDR:
		if (ipv4_cidr_parse(s, p, at(base, f->aux)) < 0)
			return crd_error_set(err, path, "\"%.40s\" is not an IPv4 CIDR", s);
		return 0;
	case CRD_S_IPV6:
		if (ipv6_parse(s, p) < 0)
			return crd_error_set(err, path, "\"%.50s\" is not an IPv6 address", s);
		return 0;
	case CRD_S_CIDR6:
		if (ipv6_cidr_parse(s, p, at(base, f->aux)) < 0)
			return crd_error_set(err, path, "\"%.50s\" is not an IPv6 CIDR", s);
		return 0;
	case CRD_S_BOOL:
		*(bool *)p = json_is_true(v);
		return 0;
	case CRD_S_U32:
		*(uint32_t *)p = (uint32_t)json_integer_value(v);
		return 0;
	case CRD_S_LL:
		*(long long *)p = json_integer_value(v);
		return 0;
	case CRD_S_TIME:
		/* The Go project writes condition times with format date-time but its schema
		 * does not say so; any RFC 3339 string is read, and "" as unset. */
		if (s[0] != '\0' && crd_time_parse(s, p) < 0)
			return crd_error_set(
			    err, path, "\"%.40s\" is not an RFC 3339 date-time", s);
		return 0;
	case CRD_S_ENUM:
		for (size_t i = 0; i < f->n_names; i++)
			if (strcmp(s, f->names[i]) == 0) {
				*(int *)p = (int)i;
				return 0;
			}
		return crd_error_set(err, path, "\"%.40s\" is not one of the allowed values", s);
	case CRD_S_STRUCT:
		return crd_decode_object(v, path, f->children, f->strict, p, err);
	case CRD_S_ARRAY:
		return decode_array(v, path, f, base, err);
	}
	return 0;
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
		if (f->present)
			*(bool *)at(ctx, f->present - 1) = true;
		if (f->decode)
			r = f->decode(v, sub, ctx, err);
		else if (f->store)
			r = decode_value(v, sub, f, ctx, err);
		else if (f->type == CRD_OBJECT && f->children)
			r = crd_decode_object(v, sub, f->children, f->strict, ctx, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* --- encode ------------------------------------------------------------------------- */

/* Whether the field of base is written. */
static bool
is_set(const struct crd_field *f, const void *base)
{
	const void *p = at(base, f->offset);
	size_t n;

	if (f->present)
		return *(const bool *)at(base, f->present - 1);
	if (f->always)
		return true;
	switch (f->store) {
	case CRD_S_STR:
		return *(char *const *)p != NULL;
	case CRD_S_CHARS:
	case CRD_S_NETNAME:
	case CRD_S_MAC:
		return *(const char *)p != '\0';
	case CRD_S_IPV4:
	case CRD_S_U32:
		return *(const uint32_t *)p != 0;
	case CRD_S_IPV6:
		return !ipv6_is_zero(p);
	case CRD_S_BOOL:
		return *(const bool *)p;
	case CRD_S_LL:
		return *(const long long *)p != 0;
	case CRD_S_TIME:
		return *(const time_t *)p != 0;
	case CRD_S_ENUM:
		return *(const int *)p != 0;
	case CRD_S_ARRAY:
		array_items(f, base, &n);
		return n != 0;
	default:
		return true;
	}
}

/* New reference: the value of the field f of base. */
static json_t *
encode_value(const struct crd_field *f, const void *base)
{
	const void *p = at(base, f->offset);
	char buf[IPV6_STRLEN + 4], ip[IPV6_STRLEN];
	const char *s;
	json_t *a;
	size_t n;

	switch (f->store) {
	case CRD_S_CONST:
		return json_string(f->value);
	case CRD_S_STR:
		s = *(char *const *)p;
		return json_string(s ? s : "");
	case CRD_S_CHARS:
	case CRD_S_MAC:
		return json_string(p);
	case CRD_S_NETNAME:
		return json_string(crd_network_name_spec_form(p));
	case CRD_S_IPV4:
		ipv4_format(*(const uint32_t *)p, ip);
		return json_string(ip);
	case CRD_S_CIDR:
		ipv4_format(*(const uint32_t *)p, ip);
		snprintf(buf, sizeof(buf), "%s/%u", ip, *(const unsigned *)at(base, f->aux));
		return json_string(buf);
	case CRD_S_IPV6:
		ipv6_format(p, ip);
		return json_string(ip);
	case CRD_S_CIDR6:
		ipv6_format(p, ip);
		snprintf(buf, sizeof(buf), "%s/%u", ip, *(const unsigned *)at(base, f->aux));
		return json_string(buf);
	case CRD_S_BOOL:
		return json_boolean(*(const bool *)p);
	case CRD_S_U32:
		return json_integer(*(const uint32_t *)p);
	case CRD_S_LL:
		return json_integer(*(const long long *)p);
	case CRD_S_TIME:
		crd_time_format(*(const time_t *)p, buf);
		return json_string(buf);
	case CRD_S_ENUM: {
		int i = *(const int *)p;

		return json_string(f->names[i >= 0 && (size_t)i < f->n_names ? i : 0]);
	}
	case CRD_S_STRUCT:
		return crd_encode_object(f->children, p);
	case CRD_S_ARRAY: {
		const char *items = array_items(f, base, &n);
		size_t size = item_size(f->items);

		a = json_array();
		for (size_t i = 0; a && i < n; i++)
			if (json_array_append_new(a, encode_value(f->items, items + i * size)) <
			    0) {
				json_decref(a);
				return NULL;
			}
		return a;
	}
	default:
		return NULL;
	}
}

json_t *
crd_encode_object(const struct crd_field *fields, const void *ctx)
{
	json_t *o = json_object(), *v;

	for (const struct crd_field *f = fields; o && f->key; f++) {
		if (f->encode) {
			v = NULL;
			if (f->encode(at(ctx, f->offset), &v) < 0)
				goto fail;
			if (!v)
				continue;
		} else if (f->store && is_set(f, ctx)) {
			v = encode_value(f, ctx);
		} else {
			continue;
		}
		if (json_object_set_new(o, f->key, v) < 0)
			goto fail;
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

/* --- equality ----------------------------------------------------------------------- */

static bool equal_value(const struct crd_field *f, const void *a, const void *b);

static bool
str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool
equal_array(const struct crd_field *f, const void *a, const void *b)
{
	size_t na, nb, size = item_size(f->items);
	const char *ia = array_items(f, a, &na), *ib = array_items(f, b, &nb);
	const struct crd_field *key = f->keyed ? &f->items->children[0] : NULL;

	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++) {
		const char *x = ia + i * size, *y = NULL;

		if (!key)
			y = ib + i * size;
		for (size_t j = 0; key && !y && j < nb; j++)
			if (str_eq(*(char *const *)at(x, key->offset),
				*(char *const *)at(ib + j * size, key->offset)))
				y = ib + j * size;
		if (!y || !equal_value(f->items, x, y))
			return false;
	}
	return true;
}

/* Whether the field f of a and of b are equal. */
static bool
equal_value(const struct crd_field *f, const void *a, const void *b)
{
	const void *x = at(a, f->offset), *y = at(b, f->offset);

	switch (f->store) {
	case CRD_S_STR:
		return str_eq(*(char *const *)x, *(char *const *)y);
	case CRD_S_CHARS:
	case CRD_S_NETNAME:
	case CRD_S_MAC:
		return strcmp(x, y) == 0;
	case CRD_S_CIDR:
		return *(const uint32_t *)x == *(const uint32_t *)y &&
		       *(const unsigned *)at(a, f->aux) == *(const unsigned *)at(b, f->aux);
	case CRD_S_CIDR6:
		return ipv6_equal(x, y) &&
		       *(const unsigned *)at(a, f->aux) == *(const unsigned *)at(b, f->aux);
	case CRD_S_IPV6:
		return ipv6_equal(x, y);
	case CRD_S_IPV4:
	case CRD_S_U32:
		return *(const uint32_t *)x == *(const uint32_t *)y;
	case CRD_S_BOOL:
		return *(const bool *)x == *(const bool *)y;
	case CRD_S_LL:
		return *(const long long *)x == *(const long long *)y;
	case CRD_S_TIME:
		return *(const time_t *)x == *(const time_t *)y;
	case CRD_S_ENUM:
		return *(const int *)x == *(const int *)y;
	case CRD_S_STRUCT:
		return crd_equal_object(f->children, x, y);
	case CRD_S_ARRAY:
		return equal_array(f, a, b);
	default:
		return true;
	}
}

bool
crd_equal_object(const struct crd_field *fields, const void *a, const void *b)
{
	for (const struct crd_field *f = fields; f->key; f++) {
		if (f->unequal_ok)
			continue;
		if (f->present) {
			bool pa = *(const bool *)at(a, f->present - 1);

			if (pa != *(const bool *)at(b, f->present - 1))
				return false;
			if (!pa)
				continue;
		}
		if (f->equal ? !f->equal(at(a, f->offset), at(b, f->offset))
			     : !equal_value(f, a, b))
			return false;
	}
	return true;
}
