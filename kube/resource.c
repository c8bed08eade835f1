/* SPDX-License-Identifier: Apache-2.0 */
/* The core resources the client knows by name, and a resource's apiVersion. */
#include <stdio.h>

#include "kube/kube-internal.h"

const struct kube_resource kube_res_namespaces = {"", "v1", "namespaces", "Namespace", false};
const struct kube_resource kube_res_configmaps = {"", "v1", "configmaps", "ConfigMap", true};
const struct kube_resource kube_res_pods = {"", "v1", "pods", "Pod", true};
const struct kube_resource kube_res_nodes = {"", "v1", "nodes", "Node", false};
const struct kube_resource kube_res_events = {"", "v1", "events", "Event", true};
const struct kube_resource kube_res_leases = {"coordination.k8s.io", "v1", "leases", "Lease", true};

const char *
kube_resource_api_version(const struct kube_resource *res, char *out, size_t len)
{
	if (!res->group || !*res->group)
		snprintf(out, len, "%s", res->version);
	else
		snprintf(out, len, "%s/%s", res->group, res->version);
	return out;
}
