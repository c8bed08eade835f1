/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CRDS_VMNETCFG_H
#define VMDHCP_CRDS_VMNETCFG_H

/*
 * VirtualMachineNetworkConfig (network.harvesterhci.io/v1alpha1,
 * crds/virtualmachinenetworkconfigs.yaml) <-> struct vmnetcfg.
 *
 * Wire names follow harvester/vm-dhcp-controller's current CRD exactly
 * (upstream chart/crds/network.harvesterhci.io_virtualmachinenetworkconfigs.yaml and
 * pkg/apis/network.harvesterhci.io/v1alpha1/virtualmachinenetworkconfig.go): the NIC list
 * is `spec.networkConfigs` and `status.networkConfigs`, a NIC's state is `state`. Read
 * only, as deprecated aliases: the singular `networkConfig` (our releases before the
 * rename, and the Go project's v0.1.0) when the plural is absent, and a NIC's `status`
 * when `state` is absent. Writes carry the current names only.
 *
 * Ownership: struct vmnetcfg owns everything it points to; vmnetcfg_free() releases it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <netinet/in.h>

#include "crds/conditions.h"
#include "lib/util.h"

#define VMNETCFG_KIND "VirtualMachineNetworkConfig"
#define VMNETCFG_PLURAL "virtualmachinenetworkconfigs"
#define VMNETCFG_NICS_MAX 32
/* spec.networkConfigs / status.networkConfigs: the NIC lists' wire name. */
#define VMNETCFG_FIELD_NICS "networkConfigs"
/* The deprecated singular name, read when the plural is absent, never written. */
#define VMNETCFG_FIELD_NICS_OLD "networkConfig"
#define VMNETCFG_VM_NAME_MAX 253
/* Label the controller puts on the VMNetCfg it creates for a VM. */
#define VMNETCFG_LABEL_VM_NAME "harvesterhci.io/vmName"

struct vmnetcfg_nic {
	char network_name[CRD_NETWORK_NAME_MAX + 1]; /* canonical "namespace/name" */
	char mac[MAC_STRLEN];			     /* canonical */
	uint32_t ip_address;			     /* static binding; 0 = none */
	struct in6_addr ipv6_address; /* ipv6Address: static IPv6 binding; all zero = none */
};

enum vmnetcfg_state {
	VMNETCFG_STATE_NONE = 0, /* absent */
	VMNETCFG_STATE_ALLOCATED,
	VMNETCFG_STATE_PENDING,
	VMNETCFG_STATE_STALE,
};
/* "Allocated" / "Pending" / "Stale" / "" ; and back (-EINVAL on others). */
const char *vmnetcfg_state_string(enum vmnetcfg_state state);
int vmnetcfg_state_parse(const char *s, enum vmnetcfg_state *ret);

struct vmnetcfg_nic_status {
	char network_name[CRD_NETWORK_NAME_MAX + 1];
	char mac[MAC_STRLEN];
	uint32_t allocated_ip; /* 0 = none */
	enum vmnetcfg_state state;
	struct in6_addr allocated_ipv6; /* allocatedIPv6Address; all zero = none */
};

struct vmnetcfg_spec {
	char *vm_name; /* required */
	bool paused;
	struct vmnetcfg_nic *nics; /* spec.networkConfigs[], n_nics <= VMNETCFG_NICS_MAX */
	size_t n_nics;
};

struct vmnetcfg_status {
	struct vmnetcfg_nic_status *nics; /* status.networkConfigs[] */
	size_t n_nics;
	struct crd_conditions conditions;
};

struct vmnetcfg {
	struct crd_meta meta;
	struct vmnetcfg_spec spec;
	struct vmnetcfg_status status;
};

/*
 * Decode a whole object (borrowed). Validates vmName (required), networkConfigs (≤ 32;
 * each networkName required, ≤ 64, canonicalised; macAddress required, canonicalised;
 * ipAddress IPv4 and ipv6Address IPv6 when present; the same MAC twice on one network is
 * refused), and status (allocatedIPv6Address in any textual form; written in RFC 5952 form).
 * Unknown spec fields are refused. Returns 0 and *ret (new), -EINVAL (err), -ENOMEM.
 */
int vmnetcfg_decode(const json_t *obj, struct vmnetcfg **ret, struct crd_error *err);
int vmnetcfg_spec_decode(
    const json_t *spec_json, struct vmnetcfg_spec *spec, struct crd_error *err);
int vmnetcfg_status_decode(
    const json_t *status_json, struct vmnetcfg_status *status, struct crd_error *err);

/* New references. */
json_t *vmnetcfg_encode(const struct vmnetcfg *cfg);
json_t *vmnetcfg_spec_encode(const struct vmnetcfg_spec *spec);
json_t *vmnetcfg_status_encode(const struct vmnetcfg_status *status);

/*
 * Whether writing b over a would change the status: every field compared but the
 * conditions' lastUpdateTime and lastTransitionTime; conditions matched by type in any
 * order; a NULL string equals "".
 */
bool vmnetcfg_status_equal(const struct vmnetcfg_status *a, const struct vmnetcfg_status *b);

void vmnetcfg_spec_clear(struct vmnetcfg_spec *spec);
void vmnetcfg_status_clear(struct vmnetcfg_status *status);
/* Accepts NULL; returns NULL. */
struct vmnetcfg *vmnetcfg_free(struct vmnetcfg *cfg);

#endif
