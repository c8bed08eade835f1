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
 *
 * NICs the guest configures itself (cloud-init network data, a static address typed in the
 * console) are listed in the VM annotation `network.harvesterhci.io/dhcp-static-nics`:
 * comma-separated NIC names (spec.template.spec.networks[].name, which KubeVirt also uses as
 * the interface name), whitespace around each ignored, or `*` for all of them. A listed NIC
 * gets no networkConfigs entry (so no address is taken from a pool for it), even when it also
 * has a static-ip annotation; names that match no NIC of the VM are ignored and reported in
 * `unknown_static`.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "crds/vmnetcfg.h"

/* Longest networkName a VMNetCfg accepts. */
#define VMNETCFG_NETWORK_NAME_MAX CRD_NETWORK_NAME_INPUT_MAX
#define VM_API_VERSION "kubevirt.io/v1"
#define VM_KIND "VirtualMachine"
/* Our annotation: NICs that get no DHCP binding (see above). */
#define VM_ANNOT_STATIC_NICS "network.harvesterhci.io/dhcp-static-nics"

struct vm_skip {
	const char *nic;    /* borrowed from the VM object */
	const char *reason; /* static string */
};

struct vm_plan {
	json_t *vmnetcfg;	 /* new reference: the desired object */
	struct vm_skip *skipped; /* owned array */
	size_t n_skipped;
	size_t n_static;      /* Multus NICs left out as statically configured */
	char *unknown_static; /* owned: names in the annotation that are no NIC, ", "-joined;
				 NULL when there are none */
};

/*
 * Whether NIC nic is listed in value, an annotation value as above (NULL or "": no NIC).
 * Pure, allocates nothing.
 */
bool vm_static_nics_has(const char *value, const char *nic);
/*
 * The names listed in value (as above; "*" is never unknown) that are not among vm's networks
 * (borrowed), in the order written, duplicates once, joined with ", " into *ret (malloc'ed),
 * or *ret NULL when there are none. Returns 0 or -ENOMEM.
 */
int vm_static_nics_unknown(json_t *vm, const char *value, char **ret);

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
