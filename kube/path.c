/* SPDX-License-Identifier: Apache-2.0 */
/* The URL path of a resource or object, and query parameters URL-encoded onto it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kube/kube-internal.h"

static bool
path_segment_ok(const char *s)
{
	return s && *s && !strpbrk(s, "/?#%& ") && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

int
kube_resource_path(const struct kube_resource *res, const char *ns, const char *name,
    const char *subresource, char *out, size_t len)
{
	size_t n;
	int w;

	if (res->group && *res->group)
		w = snprintf(out, len, "/apis/%s/%s", res->group, res->version);
	else
		w = snprintf(out, len, "/api/%s", res->version);
	if (w < 0 || (size_t)w >= len)
		return -ENAMETOOLONG;
	n = (size_t)w;
	if (res->namespaced && ns && *ns) {
		if (!path_segment_ok(ns))
			return -EINVAL;
		w = snprintf(out + n, len - n, "/namespaces/%s", ns);
		if (w < 0 || (size_t)w >= len - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	} else if (res->namespaced && name) {
		return -EINVAL; /* an object of a namespaced resource needs its namespace */
	}
	w = snprintf(out + n, len - n, "/%s", res->resource);
	if (w < 0 || (size_t)w >= len - n)
		return -ENAMETOOLONG;
	n += (size_t)w;
	if (name) {
		if (!path_segment_ok(name))
			return -EINVAL;
		w = snprintf(out + n, len - n, "/%s", name);
		if (w < 0 || (size_t)w >= len - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	}
	if (subresource) {
		w = snprintf(out + n, len - n, "/%s", subresource);
		if (w < 0 || (size_t)w >= len - n)
			return -ENAMETOOLONG;
	}
	return 0;
}

int
kube_query_add(char *out, size_t len, const char *k, const char *v)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(out);

	if (!v)
		return 0;
	if (n + strlen(k) + 2 >= len)
		return -ENAMETOOLONG;
	out[n++] = strchr(out, '?') ? '&' : '?';
	memcpy(out + n, k, strlen(k));
	n += strlen(k);
	out[n++] = '=';
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' ||
			     *p == '~';

		if (n + 4 >= len)
			return -ENAMETOOLONG;
		if (plain) {
			out[n++] = (char)*p;
		} else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	out[n] = '\0';
	return 0;
}
