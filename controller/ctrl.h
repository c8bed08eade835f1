/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_CTRL_H
#define VMDHCP_CONTROLLER_CTRL_H

/*
 * The running controller: informers (with transforms into compact items), one reconcile loop
 * per kind (IPPool, VirtualMachineNetworkConfig, VirtualMachine), the in-memory netpools, the
 * Event recorder and the metrics. One event_base, one thread.
 *
 * Informers run in every replica (warm standby); reconcilers run only once this replica
 * leads (or with leader election off) and every cache has synced. Readiness: caches synced
 * and, for the leader, reconciling.
 *
 * This header is ctrl.c's: the resources, the options, readiness. main.c also uses
 * lifecycle.h (ctrl_new, ctrl_lead, ctrl_free) and dump.h; the context itself (struct ctrl),
 * the cached items and the helpers the controller's files share are in ctrl-internal.h (also
 * used by the tests).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/kube.h"

struct event_base;
struct metrics;
struct placement_opts;

/* Finalizers: the Go project's (wrangler) names, so objects move between both unchanged. */
#define CTRL_FINALIZER_IPPOOL "wrangler.cattle.io/vm-dhcp-ippool-controller"
#define CTRL_FINALIZER_VMNETCFG "wrangler.cattle.io/vm-dhcp-vmnetcfg-controller"
#define CTRL_COMPONENT "vm-dhcp-controller"
/*
 * The leader Lease by default: the Go project's (cmd/controller/run.go, wrangler
 * leader.RunOrDie(ctx, "kube-system", "vm-dhcp-controllers", ...)), so that its controller,
 * left running, and ours never act at once: both are client-go-style electors of one Lease.
 */
#define CTRL_LEASE_NAMESPACE "kube-system"
#define CTRL_LEASE_NAME "vm-dhcp-controllers"

extern const struct kube_resource ctrl_res_ippools;
extern const struct kube_resource ctrl_res_vmnetcfgs;
extern const struct kube_resource ctrl_res_vms;
extern const struct kube_resource ctrl_res_nads;
extern const struct kube_resource ctrl_res_deployments;

struct ctrl_opts {
	const char *namespace;		    /* the controller's namespace (agents go there) */
	const char *agent_image;	    /* required */
	const char *agent_sa;		    /* may be NULL */
	const struct placement_opts *agent; /* the agents' knobs (copied); NULL: defaults */
	bool no_agent; /* place no agent, delete none (the Go project's --no-agent): pools are
			* Registered and AgentReady with reason NoAgent */
	uint64_t resync_usec;  /* informer resync (0 = off) */
	uint64_t requeue_usec; /* delay for retry-later cases (0 = 2 s) */
	/* Taking over from the Go project (migrate.c): the namespace of its agent Pods (NULL:
	 * not watched), its webhook configurations to delete (comma-separated names, or NULL).
	 * Borrowed for the ctrl's life. */
	const char *upstream_agent_ns;
	const char *upstream_webhooks;
	const struct kube_clock *clock;
	/* /readyz turns not ready once every informer's list/watch has been failing this long
	 * (the API server unreachable); 0: CTRL_API_OUTAGE_USEC. Liveness is not touched. */
	uint64_t api_outage_usec;
	/* The most bytes an IPPool object may take as the API server stores it (compact JSON:
	 * metadata, spec and status with its status.ipv4.allocated map), under etcd's request
	 * limit (--max-request-bytes, 1.5 MiB by default); no binding is made past it. 0:
	 * CTRL_IPPOOL_BUDGET_DEFAULT. */
	uint64_t ippool_budget;
};

#define CTRL_API_OUTAGE_USEC (30 * UINT64_C(1000000))
/* 1.25 MiB: 256 KiB under etcd's default 1.5 MiB request limit (the margin covers what the
 * estimate does not see: managedFields, the request's own framing) */
#define CTRL_IPPOOL_BUDGET_DEFAULT (UINT64_C(1280) * 1024)

struct ctrl;

/* Every informer's cache synced (the take-over informer's too, when it runs). */
bool ctrl_synced(const struct ctrl *c);
/* The /readyz decision: reason filled when not ready. */
bool ctrl_ready(struct ctrl *c, char *reason, size_t len);
/* Append "; <why>" to reason for each informer whose list or watch is failing. */
void ctrl_describe_failures(struct ctrl *c, char *reason, size_t len);

#endif
