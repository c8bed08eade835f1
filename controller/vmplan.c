/* SPDX-License-Identifier: Apache-2.0 */
/* VirtualMachine → VirtualMachineNetworkConfig: the pure part of the VM reconciler. */
#include "controller/vmplan.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "controller/foreign-kinds.h"
#include "lib/util.h"

static int
plan_skip(struct vm_plan *p, const char *nic, const char *reason)
{
	struct vm_skip *s = realloc(p->skipped, (p->n_skipped + 1) * sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	p->skipped = s;
	s[p->n_skipped].nic = nic;
	s[p->n_skipped].reason = reason;
	p->n_skipped++;
	return 0;
}

/*
 * The next name of an annotation value from *pos: its start and length, whitespace around it
 * trimmed, empty ones passed over. false at the end.
 */
static bool
next_name(const char **pos, const char **name, size_t *len)
{
	const char *s = *pos;

	while (*s != '\0') {
		const char *comma = strchr(s, ',');
		const char *e = comma != NULL ? comma : s + strlen(s), *b = s;

		s = comma != NULL ? comma + 1 : e;
		while (b < e && isspace((unsigned char)*b))
			b++;
		while (e > b && isspace((unsigned char)e[-1]))
			e--;
		if (e > b) {
			*name = b;
			*len = (size_t)(e - b);
			*pos = s;
			return true;
		}
	}
	*pos = s;
	return false;
}

static bool
name_is(const char *name, size_t len, const char *s)
{
	return strlen(s) == len && memcmp(name, s, len) == 0;
}

bool
vm_static_nics_has(const char *value, const char *nic)
{
	const char *pos = value, *name;
	size_t len;

	while (pos != NULL && next_name(&pos, &name, &len))
		if (name_is(name, len, "*") || name_is(name, len, nic))
			return true;
	return false;
}

/* Whether name (len bytes) is the name of one of vm's networks. */
static bool
vm_has_nic(json_t *vm, const char *name, size_t len)
{
	struct vm_network net;

	for (size_t i = 0; i < vm_network_count(vm); i++)
		if (vm_network_at(vm, i, &net) == 0 && name_is(name, len, net.name))
			return true;
	return false;
}

/* Whether name (len bytes) is listed in value before the byte at stop. */
static bool
listed_before(const char *value, const char *stop, const char *name, size_t len)
{
	const char *pos = value, *n;
	size_t l;

	while (next_name(&pos, &n, &l) && n < stop)
		if (l == len && memcmp(n, name, len) == 0)
			return true;
	return false;
}

int
vm_static_nics_unknown(json_t *vm, const char *value, char **ret)
{
	const char *pos = value, *name;
	char *out = NULL;
	size_t len, used = 0;

	*ret = NULL;
	while (pos != NULL && next_name(&pos, &name, &len)) {
		char *grown;

		if (name_is(name, len, "*") || vm_has_nic(vm, name, len) ||
		    listed_before(value, name, name, len))
			continue;
		grown = realloc(out, used + len + 3);
		if (grown == NULL) {
			free(out);
			return -ENOMEM;
		}
		out = grown;
		used += (size_t)sprintf(out + used, "%s%.*s", used > 0 ? ", " : "", (int)len, name);
	}
	*ret = out;
	return 0;
}

/* One networkConfigs[] entry for a Multus NIC, or a skip. Returns 0 or -ENOMEM. */
static int
plan_nic(json_t *vm, const struct vm_network *net, json_t *ncs, struct vm_plan *p)
{
	char mac[MAC_STRLEN], ipbuf[IPV4_STRLEN], netname[KIND_REF_MAX];
	const char *ipstr = NULL;
	uint32_t ip = 0;
	json_t *nc;
	int r;

	if (net->multus_net == NULL || net->multus_net[0] == '\0')
		return plan_skip(p, net->name, "multus network without networkName");
	/* Multus resolves a bare NAD name in the VM's own namespace: say so explicitly, since
	 * a bare networkName in a VMNetCfg means namespace "default". */
	if (kind_canon_ref(net->multus_net, kind_namespace(vm), netname) < 0)
		return plan_skip(p, net->name, "invalid multus networkName");
	if (strlen(netname) > VMNETCFG_NETWORK_NAME_MAX)
		return plan_skip(p, net->name, "multus networkName too long");
	r = vm_nic_mac(vm, net->name, mac);
	if (r == -ENOENT)
		return plan_skip(p, net->name, "no MAC address assigned yet");
	if (r < 0)
		return plan_skip(p, net->name, "invalid MAC address");
	r = vm_nic_static_ip(vm, net->name, &ip, &ipstr);
	if (r == -EINVAL)
		return plan_skip(p, net->name, "invalid static IP annotation");
	nc = json_pack("{s:s, s:s}", "networkName", netname, "macAddress", mac);
	if (nc == NULL)
		return -ENOMEM;
	if (r == 0) {
		ipv4_format(ip, ipbuf);
		if (json_object_set_new(nc, "ipAddress", json_string(ipbuf)) < 0) {
			json_decref(nc);
			return -ENOMEM;
		}
	}
	return json_array_append_new(ncs, nc) < 0 ? -ENOMEM : 0;
}

int
vm_plan_build(json_t *vm, struct vm_plan *ret)
{
	const char *name = kind_name(vm), *ns = kind_namespace(vm), *uid = kind_uid(vm);
	const char *statics = kind_annotation(vm, VM_ANNOT_STATIC_NICS);
	struct vm_plan p = {0};
	size_t n = vm_network_count(vm);
	json_t *ncs, *obj;
	int r = -ENOMEM;

	memset(ret, 0, sizeof(*ret));
	if (name == NULL || ns == NULL || uid == NULL)
		return -EINVAL;
	if (vm_static_nics_unknown(vm, statics, &p.unknown_static) < 0)
		return -ENOMEM;
	ncs = json_array();
	if (ncs == NULL)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		struct vm_network net;

		if (vm_network_at(vm, i, &net) < 0 || net.type != VM_NETWORK_MULTUS)
			continue; /* pod network (or unnamed entry): nothing to bind */
		if (vm_static_nics_has(statics, net.name)) {
			p.n_static++; /* the guest configures it: no binding */
			continue;
		}
		if ((r = plan_nic(vm, &net, ncs, &p)) < 0)
			goto fail;
	}
	obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:[{s:s, s:s, s:s, s:s, s:b, s:b}]},"
			" s:{s:s, s:o}}",
	    "apiVersion", CRD_API_VERSION, "kind", VMNETCFG_KIND, "metadata", "name", name,
	    "namespace", ns, "labels", KIND_LABEL_VM_NAME, name, "ownerReferences", "apiVersion",
	    VM_API_VERSION, "kind", VM_KIND, "name", name, "uid", uid, "controller", 1,
	    "blockOwnerDeletion", 1, "spec", "vmName", name, VMNETCFG_FIELD_NICS, ncs);
	ncs = NULL; /* "o" stole it, even on failure */
	if (obj == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	p.vmnetcfg = obj;
	*ret = p;
	return 0;
fail:
	json_decref(ncs);
	vm_plan_clear(&p);
	return r;
}

void
vm_plan_clear(struct vm_plan *p)
{
	json_decref(p->vmnetcfg);
	free(p->skipped);
	free(p->unknown_static);
	memset(p, 0, sizeof(*p));
}

/* Index of the ownerReference with controller: true in refs, or -1. */
static ssize_t
controller_ref(json_t *refs)
{
	size_t i;
	json_t *ref;

	json_array_foreach(refs, i, ref)
	{
		if (json_is_true(json_object_get(ref, "controller")))
			return (ssize_t)i;
	}
	return -1;
}

/*
 * Sets obj[key] = value (borrowed value, copied) when it differs. Returns 1 when changed,
 * 0 when equal, -ENOMEM.
 */
static int
set_if_differs(json_t *obj, const char *key, json_t *value)
{
	json_t *cur = json_object_get(obj, key);

	if (cur != NULL && json_equal(cur, value))
		return 0;
	return json_object_set_new(obj, key, json_deep_copy(value)) < 0 ? -ENOMEM : 1;
}

/* Borrowed sub-object obj[key], created empty when absent or not an object. NULL on ENOMEM. */
static json_t *
ensure_object(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	if (json_is_object(v))
		return v;
	v = json_object();
	if (v == NULL || json_object_set_new(obj, key, v) < 0)
		return NULL;
	return v;
}

int
vm_vmnetcfg_update(json_t *existing, json_t *desired, json_t **ret_update)
{
	json_t *want_refs = kind_get(desired, "metadata", "ownerReferences", NULL);
	json_t *want_ref = json_array_get(want_refs, 0);
	json_t *want_spec = kind_get(desired, "spec", NULL);
	json_t *want_label =
	    json_object_get(kind_get(desired, "metadata", "labels", NULL), KIND_LABEL_VM_NAME);
	json_t *upd, *meta, *labels, *refs, *spec;
	const char *vmname = kind_name(desired);
	int changed = 0, r;
	ssize_t ci;

	*ret_update = NULL;
	if (want_ref == NULL || want_spec == NULL || want_label == NULL || vmname == NULL)
		return -EINVAL;
	ci = controller_ref(kind_get(existing, "metadata", "ownerReferences", NULL));
	if (ci >= 0) {
		json_t *cur = json_array_get(
		    kind_get(existing, "metadata", "ownerReferences", NULL), (size_t)ci);
		const char *uid = json_string_value(json_object_get(cur, "uid"));
		const char *want_uid = json_string_value(json_object_get(want_ref, "uid"));

		if (uid == NULL || want_uid == NULL || strcmp(uid, want_uid) != 0)
			return -EEXIST;
	}

	upd = json_deep_copy(existing);
	if (upd == NULL || (meta = ensure_object(upd, "metadata")) == NULL ||
	    (labels = ensure_object(meta, "labels")) == NULL ||
	    (spec = ensure_object(upd, "spec")) == NULL)
		goto nomem;

	if ((r = set_if_differs(labels, KIND_LABEL_VM_NAME, want_label)) < 0)
		goto nomem;
	changed |= r;
	refs = json_object_get(meta, "ownerReferences");
	if (ci < 0) {
		if (!json_is_array(refs)) {
			refs = json_array();
			if (refs == NULL || json_object_set_new(meta, "ownerReferences", refs) < 0)
				goto nomem;
		}
		if (json_array_append_new(refs, json_deep_copy(want_ref)) < 0)
			goto nomem;
		changed = 1;
	}
	if ((r = set_if_differs(spec, "vmName", json_object_get(want_spec, "vmName"))) < 0)
		goto nomem;
	changed |= r;
	if ((r = set_if_differs(
		 spec, VMNETCFG_FIELD_NICS, json_object_get(want_spec, VMNETCFG_FIELD_NICS))) < 0)
		goto nomem;
	changed |= r;
	/* the deprecated singular list goes once the plural is written */
	if (json_object_get(spec, VMNETCFG_FIELD_NICS_OLD) != NULL) {
		json_object_del(spec, VMNETCFG_FIELD_NICS_OLD);
		changed = 1;
	}

	if (!changed) {
		json_decref(upd);
		return 0;
	}
	*ret_update = upd;
	return 1;
nomem:
	json_decref(upd);
	return -ENOMEM;
}
