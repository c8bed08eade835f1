/* SPDX-License-Identifier: Apache-2.0 */
/* Borrowed-getter decoders for VirtualMachine, NAD, Deployment and Node objects. */
#include "controller/foreign-kinds.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static json_t *
kind_vget(json_t *obj, va_list ap)
{
	const char *key;

	while ((key = va_arg(ap, const char *)) != NULL) {
		if (!json_is_object(obj))
			return NULL;
		obj = json_object_get(obj, key);
	}
	return obj;
}

json_t *
kind_get(json_t *obj, ...)
{
	va_list ap;
	json_t *v;

	va_start(ap, obj);
	v = kind_vget(obj, ap);
	va_end(ap);
	return v;
}

const char *
kind_get_str(json_t *obj, ...)
{
	va_list ap;
	json_t *v;

	va_start(ap, obj);
	v = kind_vget(obj, ap);
	va_end(ap);
	return json_string_value(v); /* NULL unless a string */
}

const char *
kind_name(json_t *obj)
{
	return kind_get_str(obj, "metadata", "name", NULL);
}

const char *
kind_namespace(json_t *obj)
{
	return kind_get_str(obj, "metadata", "namespace", NULL);
}

const char *
kind_uid(json_t *obj)
{
	return kind_get_str(obj, "metadata", "uid", NULL);
}

const char *
kind_label(json_t *obj, const char *key)
{
	return json_string_value(json_object_get(kind_get(obj, "metadata", "labels", NULL), key));
}

const char *
kind_annotation(json_t *obj, const char *key)
{
	return json_string_value(
	    json_object_get(kind_get(obj, "metadata", "annotations", NULL), key));
}

bool
kind_is_deleting(json_t *obj)
{
	json_t *ts = kind_get(obj, "metadata", "deletionTimestamp", NULL);

	return ts != NULL && !json_is_null(ts);
}

int
kind_split_ref(
    const char *ref, const char *default_ns, char ns[KIND_NS_MAX], char name[KIND_NAME_MAX])
{
	const char *slash, *n;
	size_t nslen, namelen;

	if (ref == NULL)
		return -EINVAL;
	slash = strchr(ref, '/');
	if (slash == NULL) {
		if (default_ns == NULL)
			return -EINVAL;
		nslen = strlen(default_ns);
		if (nslen == 0 || nslen >= KIND_NS_MAX)
			return -EINVAL;
		memcpy(ns, default_ns, nslen + 1);
		n = ref;
	} else {
		if (strchr(slash + 1, '/') != NULL)
			return -EINVAL;
		nslen = (size_t)(slash - ref);
		if (nslen == 0 || nslen >= KIND_NS_MAX)
			return -EINVAL;
		memcpy(ns, ref, nslen);
		ns[nslen] = '\0';
		n = slash + 1;
	}
	namelen = strlen(n);
	if (namelen == 0 || namelen >= KIND_NAME_MAX)
		return -EINVAL;
	memcpy(name, n, namelen + 1);
	return 0;
}

int
kind_canon_ref(const char *ref, const char *default_ns, char out[KIND_REF_MAX])
{
	char ns[KIND_NS_MAX], name[KIND_NAME_MAX];
	int r = kind_split_ref(ref, default_ns, ns, name);

	if (r < 0)
		return r;
	snprintf(out, KIND_REF_MAX, "%s/%s", ns, name);
	return 0;
}

/* --- VirtualMachine --------------------------------------------------------------------- */

static json_t *
vm_networks(json_t *vm)
{
	return kind_get(vm, "spec", "template", "spec", "networks", NULL);
}

static json_t *
vm_interfaces(json_t *vm)
{
	return kind_get(vm, "spec", "template", "spec", "domain", "devices", "interfaces", NULL);
}

size_t
vm_network_count(json_t *vm)
{
	return json_array_size(vm_networks(vm)); /* 0 unless an array */
}

int
vm_network_at(json_t *vm, size_t i, struct vm_network *ret)
{
	json_t *net = json_array_get(vm_networks(vm), i);
	json_t *multus;

	if (net == NULL)
		return -ERANGE;
	ret->name = json_string_value(json_object_get(net, "name"));
	if (ret->name == NULL || ret->name[0] == '\0')
		return -EINVAL;
	ret->multus_net = NULL;
	multus = json_object_get(net, "multus");
	if (json_is_object(multus)) {
		ret->type = VM_NETWORK_MULTUS;
		ret->multus_net = json_string_value(json_object_get(multus, "networkName"));
	} else if (json_is_object(json_object_get(net, "pod"))) {
		ret->type = VM_NETWORK_POD;
	} else {
		ret->type = VM_NETWORK_OTHER;
	}
	return 0;
}

size_t
vm_interface_count(json_t *vm)
{
	return json_array_size(vm_interfaces(vm));
}

int
vm_interface_at(json_t *vm, size_t i, struct vm_interface *ret)
{
	json_t *ifc = json_array_get(vm_interfaces(vm), i);

	if (ifc == NULL)
		return -ERANGE;
	ret->name = json_string_value(json_object_get(ifc, "name"));
	if (ret->name == NULL || ret->name[0] == '\0')
		return -EINVAL;
	ret->mac = json_string_value(json_object_get(ifc, "macAddress"));
	if (ret->mac != NULL && ret->mac[0] == '\0')
		ret->mac = NULL;
	return 0;
}

static const char *
vm_interface_mac(json_t *vm, const char *nic)
{
	size_t n = vm_interface_count(vm);

	for (size_t i = 0; i < n; i++) {
		struct vm_interface ifc;

		if (vm_interface_at(vm, i, &ifc) == 0 && strcmp(ifc.name, nic) == 0)
			return ifc.mac;
	}
	return NULL;
}

int
vm_nic_mac(json_t *vm, const char *nic, char out[MAC_STRLEN])
{
	const char *mac = vm_interface_mac(vm, nic);
	const char *annot;
	json_t *map;
	int r;

	if (mac != NULL)
		return mac_canonicalize(mac, out);
	annot = kind_annotation(vm, KIND_ANNOT_VM_MACS);
	if (annot == NULL)
		return -ENOENT;
	map = json_loads(annot, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(map)) {
		json_decref(map);
		return -EINVAL;
	}
	mac = json_string_value(json_object_get(map, nic));
	if (mac == NULL)
		r = json_object_get(map, nic) == NULL ? -ENOENT : -EINVAL;
	else
		r = mac_canonicalize(mac, out);
	json_decref(map);
	return r;
}

int
vm_nic_static_ip(json_t *vm, const char *nic, uint32_t *ret, const char **ret_str)
{
	char key[sizeof(KIND_ANNOT_STATIC_IP_PREFIX) + 64];
	const char *v;
	uint32_t a;

	if ((size_t)snprintf(key, sizeof(key), "%s%s", KIND_ANNOT_STATIC_IP_PREFIX, nic) >=
	    sizeof(key))
		return -ENOENT; /* a NIC name that long cannot be an annotation key */
	v = kind_annotation(vm, key);
	if (v == NULL)
		return -ENOENT;
	if (ret_str != NULL)
		*ret_str = v;
	if (ipv4_parse(v, &a) < 0)
		return -EINVAL;
	*ret = a;
	return 0;
}

/* --- NetworkAttachmentDefinition --------------------------------------------------------- */

const char *
nad_cluster_network(json_t *nad)
{
	const char *cn = kind_label(nad, KIND_LABEL_CLUSTER_NETWORK);

	return cn != NULL && cn[0] != '\0' ? cn : NULL;
}

/* --- Deployment ---------------------------------------------------------------------------- */

static int64_t
int_at(json_t *obj, const char *a, const char *b, int64_t dflt)
{
	json_t *v = kind_get(obj, a, b, NULL);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : dflt;
}

void
deployment_state(json_t *dep, struct deployment_state *ret)
{
	ret->generation = int_at(dep, "metadata", "generation", 0);
	ret->observed = int_at(dep, "status", "observedGeneration", 0);
	ret->replicas = int_at(dep, "spec", "replicas", 1);
	ret->ready = int_at(dep, "status", "readyReplicas", 0);
	ret->available = int_at(dep, "status", "availableReplicas", 0);
}

bool
deployment_ready(json_t *dep, const char **reason)
{
	struct deployment_state st;
	const char *why = NULL;

	deployment_state(dep, &st);
	if (st.observed < st.generation)
		why = "rollout not observed yet";
	else if (st.replicas < 1)
		why = "scaled to zero";
	/*
	 * One ready replica serves the pool: with several, the Lease makes one of the ready
	 * ones active (a standby is ready too), and one lost with its node leaves the pool
	 * served, with less redundancy, until the Deployment replaces it.
	 */
	else if (st.ready < 1)
		why = "agent pod not ready";
	else if (st.available < 1)
		why = "agent pod not available";
	if (reason != NULL)
		*reason = why;
	return why == NULL;
}

/* --- Node ------------------------------------------------------------------------------------ */

bool
node_is_ready(json_t *node)
{
	json_t *conds = kind_get(node, "status", "conditions", NULL);
	size_t i;
	json_t *c;

	json_array_foreach(conds, i, c)
	{
		const char *type = json_string_value(json_object_get(c, "type"));

		if (type != NULL && strcmp(type, "Ready") == 0) {
			const char *st = json_string_value(json_object_get(c, "status"));
			return st != NULL && strcmp(st, "True") == 0;
		}
	}
	return false;
}
