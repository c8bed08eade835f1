/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_NICBIND_H
#define VMDHCP_CONTROLLER_NICBIND_H

/*
 * VirtualMachineNetworkConfig, pure part: from a VMNetCfg and the netpools of its networks,
 * bind or release each NIC and compute the status to write.
 *
 * Per NIC (each independent of the others):
 *   - the network has no IPPool                 → Pending (reason NoIPPool);
 *   - the pool's IPAM is not built yet          → Pending (IPPoolNotReady);
 *   - its MAC is bound on that network by another VMNetCfg → Pending (DuplicateMAC) + Event;
 *   - a static ipAddress is asked: bind it; held by another MAC → Pending
 *     (StaticIPConflict) + Event; excluded/reserved/outside → Pending (StaticIPUnavailable);
 *     a NIC that holds another address moves to the static one only once it is free;
 *   - else the address the MAC already holds;
 *   - else the address its status remembers (a Pending NIC with an address that it does not
 *     hold: after a pause) when still free; held by another MAC → Pending (AddressTaken) +
 *     Event, the address still remembered, taken when it is released; excluded, reserved or
 *     outside the range by now → forgotten;
 *   - else the lowest free (PoolExhausted + Event when none).
 *   Any new binding that would take the IPPool's status.ipv4.allocated past its budget
 *   (netpool_set_budget) → Pending (PoolStatusFull) + Event: nothing says Allocated for an
 *   address the IPPool status, which the agents serve from, could not record.
 *   When the pool has an ipv6Config the NIC's IPv6 address follows the same rules on its own
 *   (nicbind6.h: ipv6Address pin, kept, remembered, lowest free; the same Pending reasons),
 *   and the NIC is Allocated only once it has both addresses; a NIC waiting for one keeps
 *   the other (listed Pending with it). An ipv6Address on a pool without ipv6Config →
 *   Pending (StaticIPUnavailable).
 * NICs of the previous status that are no longer in the spec (removed, or moved to another
 * network) release their addresses (both families); when their pool is not ready they stay listed
 * as Stale until it is. Paused (spec.paused, as upstream's pkg/controller/vmnetcfg/controller.go):
 * every binding of the VMNetCfg is released (the IPPool status drops its MACs, so the agent stops
 * answering them); the status lists the spec's NICs, each Pending with the address its previous
 * status had for it (remembered, not held: another NIC may take it meanwhile); Disabled True,
 * Allocated and InSynced False, all three with reason Paused. Resuming binds each NIC as
 * above, so to its remembered address when still free.
 * Conditions: Allocated (every NIC has an address), Disabled (paused), InSynced (the status
 * lists exactly the spec's NICs, none Pending or Stale); each with a CamelCase reason, True or
 * False, and observedGeneration = the VMNetCfg's metadata.generation.
 * Normal Events come from the transition of the status (the object's → the computed one):
 * Allocated for a NIC now Allocated at an address it was not Allocated at before, Released for
 * an address a NIC held (in any state but paused) and holds no more, or held Allocated before
 * a pause.
 * Idempotent: computing again on the result binds and releases nothing, yields the same
 * status and no Normal Event.
 */

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "controller/netpool.h"
#include "controller/vmnetcfg-reasons.h"
#include "crds/vmnetcfg.h"

enum netpool_avail {
	NETPOOL_ABSENT = 0, /* no IPPool for this network */
	NETPOOL_NOT_READY,  /* an IPPool exists but its IPAM is not built */
	NETPOOL_READY,
};

/*
 * Finds the netpool of a canonical network name ("ns/name"). Returns the borrowed netpool
 * (NULL unless READY) and sets *avail.
 */
typedef struct netpool *(*vmnetcfg_lookup_fn)(
    void *userdata, const char *network, enum netpool_avail *avail);

/* The reasons (VMNETCFG_REASON_*) and VMNETCFG_MESSAGE_MAX: controller/vmnetcfg-reasons.h */

/* An Event to emit on the VMNetCfg. */
struct vmnetcfg_event {
	const char *type;   /* static: "Normal" or "Warning" */
	const char *reason; /* static */
	char message[VMNETCFG_MESSAGE_MAX];
};

struct vmnetcfg_result {
	struct vmnetcfg_status status; /* the status to write (owned) */
	struct vmnetcfg_event *events; /* owned */
	size_t n_events;
	/* networks whose bindings changed (their IPPool status must be refreshed) */
	char (*touched)[CRD_NETWORK_NAME_MAX + 1];
	size_t n_touched;
	bool changed;  /* status differs from the input's */
	bool released; /* some address was released (Pending NICs elsewhere may now bind) */
};

/*
 * Compute (and apply to the netpools) the bindings of cfg (borrowed), owned by key
 * ("ns/name", borrowed). now stamps condition times. Returns 0 and fills *ret (clear it with
 * vmnetcfg_result_clear), or -ENOMEM (netpool changes made so far are kept: they are
 * idempotent and the next run continues from them).
 */
int vmnetcfg_compute(const struct vmnetcfg *cfg, const char *key, vmnetcfg_lookup_fn lookup,
    void *userdata, time_t now, struct vmnetcfg_result *ret);

/*
 * Release everything cfg holds (on delete): the NICs of its status and of its spec. Networks
 * touched are reported in *ret, with a Normal Released Event per binding released (only
 * touched/n_touched, events/n_events and released are filled). Returns 0 or -ENOMEM;
 * -EAGAIN when some network's pool is not ready (retry later, the finalizer stays).
 */
int vmnetcfg_release_all(const struct vmnetcfg *cfg, const char *key, vmnetcfg_lookup_fn lookup,
    void *userdata, struct vmnetcfg_result *ret);

void vmnetcfg_result_clear(struct vmnetcfg_result *r);

#endif
