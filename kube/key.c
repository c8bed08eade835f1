/* SPDX-License-Identifier: Apache-2.0 */
/* Object keys: "ns/name" (or "name" when cluster-scoped) made and split. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kube/kube-internal.h"

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
