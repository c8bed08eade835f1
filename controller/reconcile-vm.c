/* SPDX-License-Identifier: Apache-2.0 */
/*
 * VirtualMachine reconciler: keeps the VM's VirtualMachineNetworkConfig (same name, owned by
 * the VM) equal to what the VM's Multus NICs ask for. One write: create, or one update
 * (read-modify-write, retried on 409). The VMNetCfg is garbage-collected with its VM.
 * NICs listed in the VM's static-NICs annotation (vmplan.h) are not in the desired spec, so
 * adding a NIC there drops its entry (the VMNetCfg reconciler releases its address) and
 * removing it adds the entry back (bound again).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctrl-internal.h"
#include "controller/vmplan.h"
#include "lib/log.h"

json_t *
ctrl_vm_desired(const struct vm_item *vm)
{
	json_t *spec = vmnetcfg_spec_encode(&vm->want);

	if (spec == NULL)
		return NULL;
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:[{s:s, s:s, s:s, s:s, s:b, s:b}]},"
			 " s:o}",
	    "apiVersion", CRD_API_VERSION, "kind", VMNETCFG_KIND, "metadata", "name", vm->meta.name,
	    "namespace", vm->meta.ns, "labels", KIND_LABEL_VM_NAME, vm->meta.name,
	    "ownerReferences", "apiVersion", VM_API_VERSION, "kind", VM_KIND, "name", vm->meta.name,
	    "uid", vm->meta.uid, "controller", 1, "blockOwnerDeletion", 1, "spec", spec);
}

/* Does the cached VMNetCfg already say what the VM asks for? */
static bool
cfg_matches(const struct cfg_item *it, const struct vm_item *vm)
{
	const struct vmnetcfg_spec *want = &vm->want;
	bool same;

	if (it->cfg == NULL || !it->has_label || it->owner_uid == NULL)
		return false;
	same = want->vm_name != NULL && it->cfg->spec.vm_name != NULL &&
	       strcmp(want->vm_name, it->cfg->spec.vm_name) == 0 &&
	       want->n_nics == it->cfg->spec.n_nics;
	for (size_t i = 0; same && i < want->n_nics; i++) {
		const struct vmnetcfg_nic *a = &want->nics[i], *b = &it->cfg->spec.nics[i];

		same = strcmp(a->network_name, b->network_name) == 0 &&
		       strcmp(a->mac, b->mac) == 0 && a->ip_address == b->ip_address;
	}
	return same;
}

void
ctrl_vm_note_static(const char *key, const struct vm_item *old, const struct vm_item *vm)
{
	if (vm == NULL || vm->unknown_static == NULL)
		return;
	if (old != NULL && old->generation == vm->generation && old->unknown_static != NULL &&
	    strcmp(old->unknown_static, vm->unknown_static) == 0)
		return; /* said already for this generation */
	log_warn("vm %s: annotation %s names no NIC of the VM: %s (ignored)", key,
	    VM_ANNOT_STATIC_NICS, vm->unknown_static);
}

/* Warning Events: NICs that cannot be bound yet, names of the static-NICs annotation that
 * are no NIC. The recorder folds repeats into one Event's count. */
static void
vm_record_warnings(struct ctrl *c, const struct vm_item *vm)
{
	json_t *ref;

	if (vm->n_skipped == 0 && vm->unknown_static == NULL)
		return;
	ref = ctrl_event_ref(vm->meta.ns, vm->meta.name, vm->meta.uid);
	for (size_t i = 0; ref != NULL && i < vm->n_skipped; i++)
		kube_record_event(c->recorder, ref, "kubevirt.io/v1", "VirtualMachine", "Warning",
		    "NICSkipped", "no DHCP binding for NIC %s", vm->skipped[i]);
	if (ref != NULL && vm->unknown_static != NULL)
		kube_record_event(c->recorder, ref, "kubevirt.io/v1", "VirtualMachine", "Warning",
		    "UnknownStaticNIC", "annotation %s names no NIC of the VM: %s (ignored)",
		    VM_ANNOT_STATIC_NICS, vm->unknown_static);
	json_decref(ref);
}

/* kube_mutate_fn: userdata is the op, its payload the desired VMNetCfg. */
static int
vm_mutate(void *userdata, json_t *obj)
{
	struct ctrl_op *op = userdata;
	json_t *upd = NULL;
	int r = vm_vmnetcfg_update(obj, op->payload, &upd);

	if (r <= 0)
		return r == 0 ? 1 : r; /* nothing to write, or refuse */
	json_object_clear(obj);
	r = json_object_update(obj, upd) < 0 ? -ENOMEM : 0;
	json_decref(upd);
	return r;
}

struct kube_reconcile_result
ctrl_reconcile_vm(void *userdata, const char *key)
{
	struct ctrl *c = userdata;
	const struct vm_item *vm = kube_store_get(kube_informer_store(c->inf_vm), key);
	const struct cfg_item *cfg;
	struct ctrl_op *op;
	size_t n_nics;
	int r;

	if (vm == NULL || vm->deleting)
		return ctrl_ok(); /* the VMNetCfg goes with its owner */
	vm_record_warnings(c, vm);
	n_nics = vm->want.n_nics;
	cfg = kube_store_get(kube_informer_store(c->inf_cfg), key);
	if (cfg == NULL) {
		/* nothing to bind (no Multus NIC, or all configured statically): no object
		 * needed, as the Go project does for a VM without a NIC to bind */
		if (n_nics == 0)
			return ctrl_ok();
		json_t *obj = ctrl_vm_desired(vm);

		/* born with the VMNetCfg finalizer: saves that reconciler a write */
		if (obj == NULL || kube_obj_add_finalizer(obj, CTRL_FINALIZER_VMNETCFG) < 0) {
			json_decref(obj);
			return ctrl_error(-ENOMEM);
		}
		op = ctrl_op_new(c, c->c_vm, key, "create vmnetcfg for vm");
		log_info("vm %s: creating its VirtualMachineNetworkConfig (%zu NICs, %zu static)",
		    key, n_nics, vm->n_static);
		r = op != NULL ? kube_create(c->client, &ctrl_res_vmnetcfgs, vm->meta.ns, obj,
				     ctrl_op_done, op, &op->call)
			       : -ENOMEM;
		json_decref(obj);
		return ctrl_op_started(op, r);
	}
	if (cfg->deleting)
		return ctrl_after(c->opts.requeue_usec); /* recreate once it is gone */
	if (cfg->owner_uid != NULL &&
	    (vm->meta.uid == NULL || strcmp(cfg->owner_uid, vm->meta.uid) != 0)) {
		log_debug("vm %s: its VMNetCfg belongs to another owner (%s)", key, cfg->owner_uid);
		return ctrl_after(10 * c->opts.requeue_usec);
	}
	if (cfg_matches(cfg, vm))
		return ctrl_ok();
	op = ctrl_op_new(c, c->c_vm, key, "update vmnetcfg for vm");
	if (op == NULL)
		return ctrl_error(-ENOMEM);
	op->payload = ctrl_vm_desired(vm);
	if (op->payload == NULL)
		return ctrl_op_started(op, -ENOMEM);
	/* an existing one is kept, with no NICs when all are static: its reconciler releases
	 * what the dropped NICs held, as for NICs removed from the VM */
	log_info("vm %s: updating its VirtualMachineNetworkConfig (%zu NICs, %zu static)", key,
	    n_nics, vm->n_static);
	r = kube_update_retry(c->client, &ctrl_res_vmnetcfgs, vm->meta.ns, vm->meta.name, false, 0,
	    vm_mutate, ctrl_op_done, op, &op->call);
	return ctrl_op_started(op, r);
}
