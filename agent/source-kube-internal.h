/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_SOURCE_KUBE_INTERNAL_H
#define VMDHCP_AGENT_SOURCE_KUBE_INTERNAL_H

/* What Kubernetes mode's source (source-kube.c) and its IPPool translation share. */

#include <stdbool.h>
#include <stddef.h>

#include "agent/agent.h"
#include "agent/pool-config.h"
#include "crds/ippool.h"

/* spec.ipv4Config.ntp as written (IPv4 literals or hostnames). */
struct ntp_names {
	char name[IPPOOL_NTP_MAX][IPPOOL_NTP_LEN_MAX + 1];
	size_t n;
};

/* What the store keeps for one version of the IPPool: a config, or why there is none. */
struct kpool {
	struct agent_config *cfg; /* NULL when the version was refused, or once applied */
	bool applied;		  /* cfg moved to agent_kube.cur */
	struct ntp_names ntp;
	int error;
	char message[AGENT_ERR_MAX];
	size_t duplicate_macs; /* MACs under two or more addresses: only the lowest is served */
	char duplicate_example[128];
	size_t invalid_macs; /* broadcast, multicast or all-zero MACs: not bindings, skipped */
	char invalid_example[160];
};

/*
 * IPPool p's spec (borrowed) -> kp->cfg's network, range, excludes and options, and its NTP
 * entries as written into kp->ntp (resolving them is the caller's). The pool's identity is
 * ns/name. 0, -ENOMEM, or -EINVAL with kp->message filled.
 */
int kpool_convert_spec(struct kpool *kp, const char *ns, const char *name, const struct ippool *p);
/*
 * status.ipv4.allocated IP -> MAC entries become kp->cfg's bindings (after the spec: checked
 * against the pool); the marks are skipped, a MAC no NIC has is skipped and counted, a MAC
 * under several addresses keeps the lowest. The same for status.ipv6.allocated into
 * kp->cfg->v6's bindings when the pool has an ipv6Config. 0, -ENOMEM, or -EINVAL with
 * kp->message filled.
 */
int kpool_convert_status(struct kpool *kp, const struct ippool *p);
/* The store's destructor of a struct kpool; accepts NULL. */
void kpool_destroy(void *item);

#endif
