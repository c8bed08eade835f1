/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_VMPLAN_H
#define VMDHCP_CONTROLLER_VMPLAN_H

/*
 * KubeVirt VirtualMachine → desired VirtualMachineNetworkConfig (pure part of the VM
 * reconciler). The desired object has the VM's name and namespace, an ownerReference to the
 * VM (controller, blockOwnerDeletion), the label `harvesterhci.io/vmName`, spec.vmName and one
 * spec.networkConfigs[] entry (as in the Go project)
 * per Multus NIC, in the order of spec.template.spec.networks:
 *   { networkName: the NIC's multus networkName, qualified with the VM's namespace when
 *                  bare ("net-1" in namespace "ns" → "ns/net-1", which is what Multus
 *                  attaches; a bare name in a VMNetCfg would mean namespace "default"),
 *     macAddress:  canonical MAC from the interface, else from the mac-address annotation,
 *     ipAddress:   from `static-ip.harvesterhci.io/<nic>` when present }.
 * Pod-network NICs are left out silently; a Multus NIC that cannot be described yet (no MAC,
 * invalid MAC or static IP) is left out and reported in `skipped` with a reason.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "crds/vmnetcfg.h"

/* Longest networkName a VMNetCfg accepts. */
#define VMNETCFG_NETWORK_NAME_MAX CRD_NETWORK_NAME_INPUT_MAX
#define VM_API_VERSION "kubevirt.io/v1"
#define VM_KIND "VirtualMachine"

struct vm_skip {
	const char *nic;    /* borrowed from the VM object */
	const char *reason; /* static string */
};

struct vm_plan {
	json_t *vmnetcfg;	 /* new reference: the desired object */
	struct vm_skip *skipped; /* owned array */
	size_t n_skipped;
};

/*
 * Builds the plan for `vm` (borrowed; the plan borrows NIC names from it, so keep it alive).
 * Returns 0; -EINVAL when the VM lacks name, namespace or uid; -ENOMEM.
 * On failure *ret is left empty (safe to clear).
 */
int vm_plan_build(json_t *vm, struct vm_plan *ret);
/* Frees what a plan owns and zeroes it. Accepts an empty plan. */
void vm_plan_clear(struct vm_plan *p);

/*
 * Decide the one write for an existing VMNetCfg (borrowed) against the desired one
 * (borrowed). Returns 0 when nothing needs writing; 1 with *ret_update a new reference to the
 * full object to PUT (the existing one with the desired spec.vmName, spec.networkConfigs,
 * label and ownerReference merged in, resourceVersion, finalizers, status and foreign labels
 * kept); -EEXIST when the existing object is owned (controller: true) by another object and
 * must not be taken over; -ENOMEM.
 */
int vm_vmnetcfg_update(json_t *existing, json_t *desired, json_t **ret_update);

#endif
