/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_ADMISSION_CIDR_H
#define VMDHCP_CONTROLLER_ADMISSION_CIDR_H

/*
 * The service CIDR a Node records in its rke2.io/node-args or k3s.io/node-args annotation
 * (what RKE2, Harvester's distribution, and k3s write), which the admission rules compare
 * IPPools with when --service-cidr is not given (controller/admission.h tells the order).
 * Pure: the Node informer's transform calls it, the admission reads what it kept.
 */

#include <stddef.h>

/* A Node's service CIDR from its node-args annotation value (a JSON array of strings):
 * 0 and the CIDR text in out, or -ENOENT / -EINVAL. */
int ctrl_admission_node_args_cidr(const char *node_args, char *out, size_t len);

#endif
