/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_CRD_APPLY_H
#define VMDHCP_CONTROLLER_CRD_APPLY_H

/*
 * vm-dhcp-controller --apply-crds: the CustomResourceDefinitions of crds/ (embedded in the
 * program) replace the spec of the cluster's IPPool and VirtualMachineNetworkConfig CRDs at
 * start, before the informers (the Go project's controller does the same,
 * upstream:pkg/crd/crd.go). Only existing CRDs are updated (get + update, retried on
 * Conflict); metadata labels and annotations are kept. Synchronous on the client's
 * event_base (kube_run_until). 0, or negative errno with err filled.
 */

#include <stddef.h>

struct event_base;
struct kube_client;

int ctrl_apply_crds(struct event_base *base, struct kube_client *client, char *err, size_t errlen);

#endif
