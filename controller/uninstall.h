/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_UNINSTALL_H
#define VMDHCP_CONTROLLER_UNINSTALL_H

/*
 * vm-dhcp-controller --uninstall: removes what the controller made and `helm uninstall` does
 * not know about (the chart's post-delete hook runs it). One shot, synchronous on the
 * client's event_base (kube_run_until), in rounds:
 *
 *  1. Wait until no controller replica can act. The signal is the leader Lease: a replica
 *     writes only while it holds a live one, so once the Lease is free no replica can re-create
 *     what the next steps delete. Free means absent, released (holderIdentity "", what a
 *     replica writes on SIGTERM) or held but unchanged for its leaseDurationSeconds as seen
 *     on our monotonic clock (as kube/leader.c judges it: the writer's renewTime is never
 *     compared with our clock, so clock skew cannot make a live Lease look expired). A free
 *     Lease must then stay unchanged for a settle period longer than twice the electors'
 *     retry period, so a replica still running has had the time to take it over.
 *  2. Delete every agent Deployment of the namespace (label selector, propagation
 *     Background: their ReplicaSets and Pods go too).
 *  3. Remove the controller's finalizer from every IPPool and VirtualMachineNetworkConfig in
 *     all namespaces: a merge patch of metadata.finalizers with the object's resourceVersion
 *     as precondition (nothing else of the object is written); on Conflict read it again.
 *  4. Read the Lease again: unchanged since step 1, done; changed (a replica took it over
 *     meanwhile), from step 1 again.
 *
 * Logs one line per object changed and a summary. A controller run with
 * --no-leader-election takes no Lease and is not seen.
 */

#include <stddef.h>
#include <stdint.h>

struct kube_client;

struct ctrl_uninstall_opts {
	const char *namespace;	     /* the controller's namespace: its agents */
	const char *lease_namespace; /* the leader Lease's (NULL: CTRL_LEASE_NAMESPACE) */
	const char *lease_name;	     /* the leader Lease (NULL: CTRL_LEASE_NAME) */
	/* How long to wait for a live Lease to be released or expire (0 = 120 s). A free Lease
	 * seen by then still gets its settle period. */
	uint64_t timeout_usec;
	uint64_t settle_usec; /* 0 = 5 s (kube/leader.c retries every 2 s) */
	uint64_t poll_usec;   /* Lease reads while waiting (0 = 1 s) */
};

/*
 * Runs the cleanup above with client (borrowed; its event_base must not be running: start-up
 * style, never from a callback). Returns 0 when everything was removed, else a negative errno
 * and one line in err saying what failed (-ETIMEDOUT: a controller still holds the Lease).
 * After a failure the client may still have a request pending: free it before running its
 * loop again.
 */
int ctrl_uninstall(
    struct kube_client *client, const struct ctrl_uninstall_opts *opts, char *err, size_t err_len);

#endif
