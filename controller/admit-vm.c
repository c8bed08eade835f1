/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/admit-vm.c - the static-IP annotations of KubeVirt VirtualMachines (ours:
 * upstream's VM controller, commit 5972861, only logs and skips a bad one, and its VMNetCfg
 * webhook then refuses the VMNetCfg the controller writes, which nobody sees).
 *
 * Only `static-ip.harvesterhci.io/<nic>` annotations are looked at, on CREATE and, on
 * UPDATE, the new or changed ones (unless the VM is being deleted); anything else about a VM
 * is allowed untouched. Each one checked: the value is a strict IPv4 literal; <nic> is one of
 * the VM's networks (spec.template.spec.networks[].name) and a Multus one; then the
 * checks a VMNetCfg NIC's ipAddress goes through (admit-vmnetcfg.c) against the IPPool of
 * that network (its networkName qualified with the VM's namespace, as the VM controller
 * does: controller/vmplan.h), with the NIC's MAC from its interface or the
 * harvesterhci.io/mac-address annotation (an unknown MAC only skips "allocated to another
 * MAC"). An empty value asks for no static address and is not checked. Refusals read "cannot <verb>
 * VirtualMachine ns/name because annotation static-ip.harvesterhci.io/<nic>: <reason>".
 *
 * Ours: the static-NICs annotation (network.harvesterhci.io/dhcp-static-nics, vmplan.h) is
 * never refused. Names in it that are no NIC of the VM are warned about (on CREATE, and on
 * UPDATE when they differ from the old object's), and so is a listed NIC whose static-ip
 * annotation is new or changed: a statically configured NIC gets no binding, so that address
 * is not reserved for it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/admit-internal.h"
#include "controller/vmplan.h"

#define PREFIX KIND_ANNOT_STATIC_IP_PREFIX

static const json_t *
annotations_of(const json_t *obj)
{
	const json_t *a = json_object_get(json_object_get(obj, "metadata"), "annotations");

	return json_is_object(a) ? a : NULL;
}

static int
cmp_str(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The canonical network of the VM's NIC nic: 0, -ENOENT (no such NIC), -EPROTOTYPE (not
 * Multus), -EINVAL (a network name that is no reference). */
static int
nic_network(const json_t *vm, const char *ns, const char *nic, char canon[KIND_REF_MAX])
{
	struct vm_network net;

	for (size_t i = 0; i < vm_network_count((json_t *)vm); i++) {
		if (vm_network_at((json_t *)vm, i, &net) < 0 || strcmp(net.name, nic) != 0)
			continue;
		if (net.type != VM_NETWORK_MULTUS || !net.multus_net)
			return -EPROTOTYPE;
		return kind_canon_ref(net.multus_net, ns, canon) < 0 ? -EINVAL : 0;
	}
	return -ENOENT;
}

/* One annotation (key, value): 0, or -1 with reason. */
static int
check_one(struct admit_ctx *c, const json_t *vm, const char *key, const char *value,
    struct admit_seen *seen, char *reason, size_t len)
{
	const char *nic = key + strlen(PREFIX);
	char canon[KIND_REF_MAX], net2[KIND_REF_MAX], pool_key[KIND_REF_MAX], mac[MAC_STRLEN];
	const struct ippool *pool;
	uint32_t a;
	int r;

	if (!value)
		return snprintf(reason, len, "the value is not a string"), -1;
	if (!nic[0])
		return snprintf(reason, len, "the annotation names no nic"), -1;
	if (admit_parse_field("ip address", value, &a, reason, len) < 0)
		return -1;
	r = nic_network(vm, c->ns, nic, canon);
	if (r == -ENOENT)
		return snprintf(reason, len, "nic %s not found in the VM", nic), -1;
	if (r == -EPROTOTYPE)
		return snprintf(reason, len, "nic %s is not on a Multus network", nic), -1;
	if (r < 0)
		return snprintf(reason, len, "nic %s has an invalid network name", nic), -1;
	if (admit_pool_of_network(c, canon, net2, &pool, pool_key, reason, len) < 0)
		return -1;
	r = admit_check_desired_ip(c, value, vm_nic_mac((json_t *)vm, nic, mac) == 0 ? mac : NULL,
	    net2, pool_key, pool, seen, reason, len);
	return r;
}

/* Keys of the static-ip annotations of a, sorted (a deterministic first refusal). */
static const char **
static_keys(const json_t *a, size_t *n)
{
	const char **keys = calloc(json_object_size(a) + 1, sizeof(*keys));
	const char *k;
	json_t *v;

	*n = 0;
	if (!keys)
		return NULL;
	json_object_foreach((json_t *)a, k, v)
	{
		(void)v;
		if (strncmp(k, PREFIX, strlen(PREFIX)) == 0)
			keys[(*n)++] = k;
	}
	qsort(keys, *n, sizeof(*keys), cmp_str);
	return keys;
}

static bool
unchanged(const json_t *old_ann, const char *key, const json_t *v)
{
	const json_t *o = old_ann ? json_object_get(old_ann, key) : NULL;

	return o && json_equal((json_t *)o, (json_t *)v);
}

/* The unknown names of obj's static-NICs annotation (NULL obj: none): 0 or -ENOMEM. */
static int
unknown_statics(const json_t *obj, char **ret)
{
	*ret = NULL;
	if (!json_is_object(obj))
		return 0;
	return vm_static_nics_unknown(
	    (json_t *)obj, kind_annotation((json_t *)obj, VM_ANNOT_STATIC_NICS), ret);
}

/* Whether every name of list (", "-joined, as vm_static_nics_unknown writes it) is in was
 * (NULL: none): -ENOMEM, 1 or 0. */
static int
all_listed(const char *list, const char *was)
{
	char *copy = strdup(list), *save = NULL, *name;
	int r = 1;

	if (copy == NULL)
		return -ENOMEM;
	for (name = strtok_r(copy, ",", &save); name != NULL && r == 1;
	     name = strtok_r(NULL, ",", &save))
		r = vm_static_nics_has(was, name + strspn(name, " "));
	free(copy);
	return r;
}

/* Warnings for the static-NICs annotation (never a refusal). 0 or -ENOMEM. */
static int
warn_static_nics(struct admit_ctx *c, const json_t *vm, const json_t *old)
{
	const char *value = kind_annotation((json_t *)vm, VM_ANNOT_STATIC_NICS);
	const json_t *ann = annotations_of(vm), *old_ann = old ? annotations_of(old) : NULL;
	char *unknown = NULL, *was = NULL, key[KIND_NAME_MAX + sizeof(PREFIX)];
	struct vm_network net;
	int r;

	if (value == NULL)
		return 0;
	if (unknown_statics(vm, &unknown) < 0 || unknown_statics(old, &was) < 0) {
		free(unknown);
		return -ENOMEM;
	}
	/* on UPDATE, said already when the same names were unknown before */
	r = unknown != NULL ? all_listed(unknown, was) : 1;
	if (r == 0)
		admit_warn(c, "annotation %s names no NIC of the VM: %s (ignored)",
		    VM_ANNOT_STATIC_NICS, unknown);
	free(unknown);
	free(was);
	if (r < 0)
		return r;
	for (size_t i = 0; i < vm_network_count((json_t *)vm); i++) {
		const json_t *ip;

		if (vm_network_at((json_t *)vm, i, &net) < 0 ||
		    !vm_static_nics_has(value, net.name))
			continue;
		snprintf(key, sizeof(key), "%s%s", PREFIX, net.name);
		ip = json_object_get(ann, key);
		if (json_string_length(ip) > 0 && !unchanged(old_ann, key, ip))
			admit_warn(c,
			    "nic %s is listed in annotation %s: it gets no DHCP binding, so its "
			    "address %s is not reserved",
			    net.name, VM_ANNOT_STATIC_NICS, json_string_value(ip));
	}
	return 0;
}

void
admit_vm(struct admit_ctx *c)
{
	const struct admit_request *rq = c->rq;
	const json_t *vm = rq->object, *ann, *old_ann = NULL;
	char reason[ADMIT_REASON_MAX], canon[KIND_REF_MAX];
	struct admit_seen seen = {0};
	const char **keys;
	size_t n;
	uint32_t a;
	int r = 0;

	if (rq->phase != ADMIT_VALIDATE || (rq->op != ADMIT_OP_CREATE && rq->op != ADMIT_OP_UPDATE))
		return;
	if (!json_is_object(vm)) {
		admit_refuse(c, 400, "the object is not a JSON object");
		return;
	}
	if (rq->op == ADMIT_OP_UPDATE &&
	    json_is_string(json_object_get(json_object_get(vm, "metadata"), "deletionTimestamp")))
		return;
	if (!(ann = annotations_of(vm)))
		return;
	if (warn_static_nics(c, vm, rq->op == ADMIT_OP_UPDATE ? rq->old_object : NULL) < 0) {
		admit_nomem(c);
		return;
	}
	if (rq->op == ADMIT_OP_UPDATE)
		old_ann = annotations_of(rq->old_object);
	if (!(keys = static_keys(ann, &n))) {
		admit_nomem(c);
		return;
	}
	/* the unchanged ones count for duplicates, as upstream's validateUpdate does */
	for (size_t i = 0; i < n && r == 0; i++) {
		const json_t *v = json_object_get(ann, keys[i]);

		if (unchanged(old_ann, keys[i], v) && json_is_string(v) &&
		    nic_network(vm, c->ns, keys[i] + strlen(PREFIX), canon) == 0 &&
		    admit_go_parse_addr(json_string_value(v), &a, NULL, 0) == 0)
			r = admit_seen_add(&seen, canon, a) < 0 ? admit_nomem(c) : 0;
	}
	for (size_t i = 0; i < n && r == 0; i++) {
		const json_t *v = json_object_get(ann, keys[i]);

		/* "" asks for no static address (upstream's VM controller skips it too) */
		if (unchanged(old_ann, keys[i], v) || (json_is_string(v) && !json_string_length(v)))
			continue;
		r = check_one(c, vm, keys[i], json_string_value(v), &seen, reason, sizeof(reason));
		if (r == -ENOMEM)
			admit_nomem(c);
		else if (r < 0)
			admit_refuse(c, 403, "annotation %s: %s", keys[i], reason);
	}
	admit_seen_clear(&seen);
	free(keys);
}
