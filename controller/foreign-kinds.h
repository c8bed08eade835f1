/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_FOREIGN_KINDS_H
#define VMDHCP_CONTROLLER_FOREIGN_KINDS_H

/*
 * Small decoders for the foreign kinds the controller reads: KubeVirt VirtualMachine,
 * Multus NetworkAttachmentDefinition, apps/v1 Deployment (the agent workload) and Node.
 * Every getter borrows from the json_t it is given (the result lives as long as the object)
 * and returns NULL / a negative errno when the field is absent or of the wrong type; none
 * of them allocates unless it says so.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "lib/util.h"

/* Label and annotation keys shared with the Go project (wire compatible). */
#define KIND_LABEL_VM_NAME "harvesterhci.io/vmName"
#define KIND_ANNOT_VM_MACS "harvesterhci.io/mac-address"
#define KIND_ANNOT_STATIC_IP_PREFIX "static-ip.harvesterhci.io/"
#define KIND_LABEL_CLUSTER_NETWORK "network.harvesterhci.io/clusternetwork"
#define KIND_ANNOT_MULTUS_NETWORKS "k8s.v1.cni.cncf.io/networks"

/*
 * Walks objects by key: kind_get(obj, "spec", "template", "spec", NULL). Borrowed result,
 * NULL when any step is missing or not an object.
 */
json_t *kind_get(json_t *obj, ...) __attribute__((sentinel));
/* Borrowed string at a path (NULL when absent or not a string). */
const char *kind_get_str(json_t *obj, ...) __attribute__((sentinel));

/* metadata.name / namespace / uid / resourceVersion (borrowed, NULL when absent). */
const char *kind_name(json_t *obj);
const char *kind_namespace(json_t *obj);
const char *kind_uid(json_t *obj);
/* metadata.labels[key] / metadata.annotations[key] (borrowed, NULL when absent). */
const char *kind_label(json_t *obj, const char *key);
const char *kind_annotation(json_t *obj, const char *key);
/* true when metadata.deletionTimestamp is set. */
bool kind_is_deleting(json_t *obj);

/*
 * "ns/name" network references. A bare "name" takes default_ns. Fills ns and name (NUL
 * terminated) and returns 0, or -EINVAL on an empty part, more than one '/', or a part that
 * does not fit (namespace > 63, name > 253 characters).
 */
#define KIND_NS_MAX 64
#define KIND_NAME_MAX 254
int kind_split_ref(
    const char *ref, const char *default_ns, char ns[KIND_NS_MAX], char name[KIND_NAME_MAX]);
/* Canonical "ns/name" of a reference into out (size KIND_NS_MAX + KIND_NAME_MAX). */
#define KIND_REF_MAX (KIND_NS_MAX + KIND_NAME_MAX)
int kind_canon_ref(const char *ref, const char *default_ns, char out[KIND_REF_MAX]);

/* --- kubevirt.io/v1 VirtualMachine ---------------------------------------------------- */

enum vm_network_type {
	VM_NETWORK_OTHER = 0,
	VM_NETWORK_POD,
	VM_NETWORK_MULTUS,
};

struct vm_network {
	const char *name; /* borrowed: spec.template.spec.networks[i].name */
	enum vm_network_type type;
	const char *multus_net; /* borrowed: multus.networkName (MULTUS only) */
};

struct vm_interface {
	const char *name; /* borrowed */
	const char *mac;  /* borrowed, as written (may be NULL) */
};

/* Number of spec.template.spec.networks[] entries (0 when absent). */
size_t vm_network_count(json_t *vm);
/* Fills *ret with entry i. Returns 0, -ERANGE past the end, -EINVAL for an entry without a name. */
int vm_network_at(json_t *vm, size_t i, struct vm_network *ret);
/* Number of spec.template.spec.domain.devices.interfaces[] entries. */
size_t vm_interface_count(json_t *vm);
int vm_interface_at(json_t *vm, size_t i, struct vm_interface *ret);

/*
 * The MAC of NIC `nic`, canonical (lower case, colons) into out: from the interface's
 * macAddress, else from the `harvesterhci.io/mac-address` annotation (a JSON object NIC → MAC).
 * Returns 0; -ENOENT when neither has one; -EINVAL when the one found is not a MAC (or the
 * annotation is not a JSON object). Allocates only to parse the annotation.
 */
int vm_nic_mac(json_t *vm, const char *nic, char out[MAC_STRLEN]);

/*
 * The static IP asked for NIC `nic` by the annotation `static-ip.harvesterhci.io/<nic>`:
 * 0 and *ret (host order) when present and valid, -ENOENT when absent, -EINVAL when invalid.
 * ret_str (optional) gets the borrowed annotation value.
 */
int vm_nic_static_ip(json_t *vm, const char *nic, uint32_t *ret, const char **ret_str);

/* --- k8s.cni.cncf.io/v1 NetworkAttachmentDefinition ----------------------------------- */

/* The NAD's `network.harvesterhci.io/clusternetwork` label (borrowed; NULL: plain Multus). */
const char *nad_cluster_network(json_t *nad);

/* --- apps/v1 Deployment ------------------------------------------------------------------ */

struct deployment_state {
	int64_t generation; /* metadata.generation (0 when absent) */
	int64_t observed;   /* status.observedGeneration */
	int64_t replicas;   /* spec.replicas (default 1) */
	int64_t ready;	    /* status.readyReplicas */
	int64_t available;  /* status.availableReplicas */
};

void deployment_state(json_t *dep, struct deployment_state *ret);
/*
 * Ready (the pool is served) when the controller has observed the current generation and at
 * least one replica is ready and available: of several agent replicas the Lease makes one of
 * the ready ones active. A Deployment scaled to 0 is never ready: no agent serves.
 * reason (optional, borrowed static string) says why not.
 */
bool deployment_ready(json_t *dep, const char **reason);

/* --- v1 Node --------------------------------------------------------------------------- */

/* status.conditions[type=Ready].status == "True". */
bool node_is_ready(json_t *node);

#endif
