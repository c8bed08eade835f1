/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_PLACEMENT_H
#define VMDHCP_CONTROLLER_PLACEMENT_H

/*
 * Agent placement: the apps/v1 Deployment that runs the DHCP agent of one IPPool, in the
 * controller's namespace, pinned to nodes that reach the pool's network.
 *
 * High availability: by default two replicas (--agent-replicas), which elect the one that
 * answers DHCP through a coordination.k8s.io/v1 Lease named after the Deployment (in the
 * controller's namespace); the others stand by, ready, to take over once the Lease expires.
 * They are spread over nodes when the cluster network has several (preferred pod
 * anti-affinity: a single-node cluster still runs them all) and rolled one at a time with a
 * standby ready first (RollingUpdate, maxUnavailable 0, maxSurge 1). One replica means no
 * election and the Recreate strategy. Every replica keeps a warm-start snapshot in an
 * emptyDir at PLACEMENT_STATE_DIR (the root file system is read-only).
 *
 * Topology: the pool's NAD carries `network.harvesterhci.io/clusternetwork=<cn>`; nodes that
 * are wired to that cluster network carry `network.harvesterhci.io/<cn>=true`, so the agent
 * gets a required node affinity on that label. A NAD without the label (plain Multus) gives
 * no affinity. The Multus annotation attaches the NAD as `eth1` (or the interface the admin
 * names with --agent-interface).
 *
 * Least privilege: the agent runs as uid/gid 65532 with every capability dropped but
 * NET_RAW, NET_BIND_SERVICE and NET_ADMIN, which its binary holds as file capabilities.
 *
 * Re-placement is decided by comparing an annotation that records a hash of the inputs
 * (image, cluster network, NAD, pool, service account, the admin's knobs of struct
 * placement_opts, manifest version) with the hash of the current inputs, so a change of the
 * NAD's cluster network, of the agent image or of a knob re-places the agent, unless the
 * IPPool carries `network.harvesterhci.io/hold-ippool-agent-upgrade`.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "controller/placement-opts.h"

#define PLACEMENT_LABEL_APP "network.harvesterhci.io/vm-dhcp-controller"
#define PLACEMENT_LABEL_APP_VALUE "agent"
#define PLACEMENT_LABEL_POOL_NS "network.harvesterhci.io/ippool-namespace"
#define PLACEMENT_LABEL_POOL_NAME "network.harvesterhci.io/ippool-name"
#define PLACEMENT_ANNOT_POOL_REF "network.harvesterhci.io/ippool-ref"
#define PLACEMENT_ANNOT_HASH "network.harvesterhci.io/agent-inputs-hash"
#define PLACEMENT_ANNOT_HOLD "network.harvesterhci.io/hold-ippool-agent-upgrade"
#define PLACEMENT_NODE_LABEL_PREFIX "network.harvesterhci.io/"
#define PLACEMENT_INTERFACE "eth1" /* default of placement_opts.interface */
#define PLACEMENT_PULL_POLICY "IfNotPresent"
#define PLACEMENT_PORT 8080
#define PLACEMENT_CONTAINER "agent"
/* The emptyDir of the agent's warm-start snapshot, and the file (--snapshot). */
#define PLACEMENT_STATE_DIR "/var/lib/vm-dhcp"
#define PLACEMENT_SNAPSHOT PLACEMENT_STATE_DIR "/snapshot"
#define PLACEMENT_STATE_SIZE "16Mi"

/* Kubernetes object names of a DNS-1123 label: at most 63 characters. */
#define PLACEMENT_NAME_MAX 64
/* Hex of a 64-bit hash + NUL. */
#define PLACEMENT_HASH_LEN 17

struct placement_input {
	const char *pool_ns;	     /* borrowed: the IPPool's namespace */
	const char *pool_name;	     /* borrowed: the IPPool's name */
	const char *network_name;    /* borrowed: spec.networkName ("ns/name"; bare → default) */
	const char *cluster_network; /* borrowed: the NAD's clusternetwork label, or NULL */
	const char *namespace;	     /* borrowed: the controller's namespace */
	const char *image;	     /* borrowed: agent image */
	const char *service_account; /* borrowed: may be NULL (namespace default) */
	const struct placement_opts *opts; /* borrowed: may be NULL (every default) */
};

/*
 * `<pool-ns>-<pool-name>-agent`, or past 63 characters a prefix + a SHA-256 suffix (the Go
 * project's scheme, so names stay stable across an upgrade). Returns 0, or -EINVAL.
 */
int placement_agent_name(const char *pool_ns, const char *pool_name, char out[PLACEMENT_NAME_MAX]);

/* Hash of the inputs (hex) into out. Returns 0, -EINVAL on missing inputs, or -ENOMEM. */
int placement_inputs_hash(const struct placement_input *in, char out[PLACEMENT_HASH_LEN]);

/*
 * The desired Deployment. Returns 0 and a new reference in *ret; -EINVAL on missing inputs
 * or a bad network name; -ENOMEM.
 */
int placement_build(const struct placement_input *in, json_t **ret);

enum placement_action {
	PLACEMENT_KEEP = 0, /* the running agent matches (or is held) */
	PLACEMENT_CREATE,   /* no agent: create the desired Deployment */
	PLACEMENT_UPDATE,   /* inputs changed: PUT placement_merge(existing, desired) */
	PLACEMENT_WAIT,	    /* the existing Deployment is being deleted: try again later */
};

/*
 * What to do given the existing Deployment (borrowed, NULL when absent), the desired one
 * (borrowed) and whether the IPPool holds agent upgrades.
 */
enum placement_action placement_decide(json_t *existing, json_t *desired, bool hold);

/*
 * The object to PUT for PLACEMENT_UPDATE: existing metadata (resourceVersion, uid, foreign
 * labels/annotations kept) with desired labels, annotations and spec. New reference or NULL.
 */
json_t *placement_merge(json_t *existing, json_t *desired);

/* The IPPool "ns/name" a Deployment belongs to (borrowed), or NULL when not an agent. */
const char *placement_pool_ref(json_t *deployment);
/* The image of the agent container (borrowed), or NULL. */
const char *placement_image(json_t *deployment);

#endif
