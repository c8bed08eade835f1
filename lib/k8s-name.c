/* SPDX-License-Identifier: Apache-2.0 */
/* Kubernetes names checked as the API server checks them (see lib/k8s-name.h). */
#include <string.h>

#include "lib/k8s-name.h"

static bool
is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static bool
is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

bool
k8s_is_dns_subdomain(const char *s, size_t n)
{
	size_t i, start = 0;

	if (n == 0 || n > K8S_DNS_SUBDOMAIN_MAX)
		return false;
	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			if (!is_lower_alnum(s[i]) && s[i] != '-')
				return false;
			continue;
		}
		/* a label [a-z0-9]([-a-z0-9]*[a-z0-9])? ends at i */
		if (i == start || !is_lower_alnum(s[start]) || !is_lower_alnum(s[i - 1]))
			return false;
		start = i + 1;
	}
	return true;
}

bool
k8s_is_label_name(const char *s, size_t n)
{
	if (n == 0 || n > K8S_LABEL_NAME_MAX || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

bool
k8s_is_qualified_name(const char *s)
{
	const char *slash = strchr(s, '/');

	if (slash == NULL)
		return k8s_is_label_name(s, strlen(s));
	return k8s_is_dns_subdomain(s, (size_t)(slash - s)) &&
	       k8s_is_label_name(slash + 1, strlen(slash + 1));
}

bool
k8s_is_label_value(const char *s)
{
	return s[0] == '\0' || k8s_is_label_name(s, strlen(s));
}
