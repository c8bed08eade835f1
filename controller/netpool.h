/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_NETPOOL_H
#define VMDHCP_CONTROLLER_NETPOOL_H

/*
 * The controller's state of one pool's network ("netpool"): the IPAM bitmap (ipam/) plus
 * the MAC ownership table MAC → {address, owner}, where owner is the key ("ns/name") of the
 * VirtualMachineNetworkConfig that holds the binding, or NULL for a binding known only from
 * the IPPool's status.ipv4.allocated (adopted by the first VMNetCfg that asks for that MAC).
 *
 * Pure: no API calls, no logging. The IPPool reconciler builds it from the spec and the
 * existing bindings, the VMNetCfg reconciler binds and releases through it, and both render
 * the IPPool status from it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "controller/netpool6.h"
#include "crds/ippool.h"
#include "ipam/ipam.h"
#include "ipam/leases.h"
#include "lib/util.h"

struct netpool;

/* A record of ipam/leases.h's table: the binding, then its owner. */
struct netpool_entry {
	union {
		struct ipam_lease lease;
		struct { /* the same fields by their names */
			uint8_t mac[MAC_LEN];
			uint32_t addr;
		};
	};
	char *owner; /* owned; NULL: known only from the IPPool status */
};

/*
 * New, empty netpool for a spec (borrowed). Returns 0 and *ret, or the errors of
 * ipam_pool_new (-EINVAL, -ERANGE, -E2BIG) and -ENOMEM.
 */
int netpool_new(const struct ippool_spec *spec, struct netpool **ret);
/* Accepts NULL; returns NULL. */
struct netpool *netpool_free(struct netpool *p);

/*
 * True when the spec's immutable parts (CIDR, prefix, server IP, router) match the netpool's;
 * when they do not, the netpool must be built anew.
 */
bool netpool_same_network(const struct netpool *p, const struct ippool_spec *spec);

/*
 * Apply a range / exclude change. 0 when applied (or nothing changed); -EBUSY when a bound
 * address would be stranded (outside the new range or on a new exclude; *ret_conflict gets
 * the lowest one), the netpool unchanged; -EINVAL/-ERANGE/-E2BIG/-ENOMEM as ipam.
 */
int netpool_set_range(struct netpool *p, const struct ippool_spec *spec, uint32_t *ret_conflict);

/* One existing binding for a rebuild. owner borrowed (NULL: from the IPPool status). */
struct netpool_source {
	uint32_t addr;
	uint8_t mac[MAC_LEN];
	const char *owner;
};

/*
 * Rebuild bindings after a restart or a new IPPool: every binding is dropped, then
 * sources[0..n) are applied in order (put VMNetCfg statuses first: they are the commit
 * point; IPPool status entries after). The same MAC on the same address twice merges (an
 * owner fills a NULL owner). Conflicts are never resolved silently: each is reported as an
 * ipam_conflict whose first/second index sources[]; the earlier source keeps the address,
 * and a contested address is never free. Returns the number of conflicts (>= 0) with
 * *ret_conflicts a new array (free(); NULL when none) when ret_conflicts is not NULL, or
 * -ENOMEM.
 */
int netpool_rebuild(struct netpool *p, const struct netpool_source *sources, size_t n,
    struct ipam_conflict **ret_conflicts);

/* Borrowed entry for a MAC / an address, or NULL. */
const struct netpool_entry *netpool_by_mac(const struct netpool *p, const uint8_t mac[MAC_LEN]);
const struct netpool_entry *netpool_by_addr(const struct netpool *p, uint32_t addr);

/*
 * Bind mac to addr (0: the lowest free address) for owner (borrowed, copied). When the MAC is
 * already bound to the same owner (or to none: adopted) and addr is 0 or its address, this
 * is a no-op returning its address. Returns 0 and *ret_addr, or
 *   -EBUSY   the MAC is bound by another owner (duplicate MAC on the network);
 *   -EALREADY the MAC is bound to this owner at another address (release it first);
 *   -EEXIST  addr is held by another MAC;
 *   -EPERM   addr is excluded or reserved;
 *   -ERANGE  addr is outside the range;
 *   -ENOSPC  no free address;
 *   -EFBIG   the status has no room for another entry (netpool_set_budget);
 *   -ENOMEM.
 */
int netpool_bind(struct netpool *p, const uint8_t mac[MAC_LEN], uint32_t addr, const char *owner,
    uint32_t *ret_addr);

/*
 * Release the binding of mac when it belongs to owner (or to none). Returns 0, -ENOENT when
 * the MAC is not bound, -EPERM when another owner holds it.
 */
int netpool_release(struct netpool *p, const uint8_t mac[MAC_LEN], const char *owner);

/*
 * The size of status.ipv4.allocated as the API server stores it (compact JSON; kept up to
 * date as bindings come and go, and on range changes): each entry is "a.b.c.d":"<value>",
 * with the value a MAC (17 characters) or EXCLUDED/RESERVED (8), the braces included.
 * netpool_entry_bytes: one entry's share.
 */
size_t netpool_status_bytes(const struct netpool *p);
size_t netpool_entry_bytes(uint32_t addr, enum ippool_alloc_kind kind);
/*
 * The most bytes status.ipv4.allocated may take (0: no limit): a new binding that would take
 * it past that is refused (-EFBIG); bindings made before, and those a rebuild restores, are
 * kept. netpool_status_full: not even one more binding fits.
 */
void netpool_set_budget(struct netpool *p, size_t budget);
/*
 * The EXCLUDED entries are left out of the status (netpool_render_status, and its size)
 * when they would take more than half the budget: neither agent serves from them (ours:
 * agent/source-kube-pool.c; upstream's pkg/agent/ippool/ippool.go skips them) and the controllers
 * rebuild them from spec.ipv4Config.pool.exclude (upstream's BuildCache too), so the room
 * goes to bindings. netpool_omits_excluded: that rule, for a budget and the bytes the
 * EXCLUDED entries take (netpool_excluded_bytes).
 */
bool netpool_omits_excluded(size_t budget, size_t excluded_bytes);
bool netpool_omitting_excluded(const struct netpool *p);
size_t netpool_excluded_bytes(const struct netpool *p);
size_t netpool_budget(const struct netpool *p);
bool netpool_status_full(const struct netpool *p);

/*
 * While the map is over its budget: release the bindings that recorded (the IPPool status
 * as last stored, borrowed) does not list, calling evicted with each one's owner (borrowed,
 * NULL for none) before it goes. Bindings the status lists are kept (an agent serves them).
 * Returns how many were released.
 */
size_t netpool_evict_unrecorded(struct netpool *p, const struct ippool_status *recorded,
    void (*evicted)(void *userdata, const char *owner), void *userdata);

/* Number of MAC bindings. */
size_t netpool_size(const struct netpool *p);
void netpool_counts(const struct netpool *p, struct ipam_counts *ret);
/* Borrowed IPAM (read-only use: state queries, iteration). */
const struct ipam_pool *netpool_ipam(const struct netpool *p);

/*
 * Fill status->allocated (MAC bindings plus EXCLUDED and RESERVED marks inside the range;
 * no EXCLUDED ones when netpool_omitting_excluded),
 * status->used and status->available from the netpool; has_ipv4 set. 0 or -ENOMEM.
 */
int netpool_render_status(const struct netpool *p, struct ippool_status *status);

/*
 * The IPv6 half (netpool6.h), present when the spec has an ipv6Config. The status budget and
 * the omission of EXCLUDED entries count both maps: netpool_status_bytes is the bytes of
 * status.ipv4.allocated plus those of status.ipv6.allocated, netpool_status_full leaves no
 * room for a NIC's two entries, netpool_evict_unrecorded evicts from both.
 *
 * netpool_same_ipv6: the spec's ipv6Config is present as the half is, with the same
 * immutable parts; when not, netpool_reset_ipv6 puts a new empty half (or none) in its place,
 * and the caller restores its bindings with netpool6_rebuild(netpool_v6(p), ...).
 * netpool_set_range6: a range / exclude change (-ENOENT without a half; else as
 * netpool6_set_range). netpool_bind6 / netpool_release6: as netpool6_bind / netpool6_release
 * with the room left in the budget (-ENOENT without a half). netpool_v6: the half or NULL.
 */
bool netpool_same_ipv6(const struct netpool *p, const struct ippool_spec *spec);
int netpool_reset_ipv6(struct netpool *p, const struct ippool_spec *spec);
int netpool_set_range6(
    struct netpool *p, const struct ippool_spec *spec, struct in6_addr *ret_conflict);
struct netpool6 *netpool_v6(const struct netpool *p);
int netpool_bind6(struct netpool *p, const uint8_t mac[MAC_LEN], const struct in6_addr *addr,
    const char *owner, struct in6_addr *ret);
int netpool_release6(struct netpool *p, const uint8_t mac[MAC_LEN], const char *owner);

/*
 * IPPool conditions from the facts (README, "The API"): Registered (agent placed), CacheReady (IPAM
 * built), AgentReady (agent serving), Stopped (paused). Reasons and messages borrowed; a NULL
 * reason takes the condition's default below, so every condition carries a CamelCase reason,
 * True or False. generation: the IPPool's metadata.generation the facts were computed from
 * (each condition's observedGeneration).
 */
struct ippool_facts {
	long long generation;
	bool paused;
	bool cache_ready;
	const char *cache_reason;
	const char *cache_message;
	bool registered;
	const char *registered_reason;
	const char *registered_message;
	bool agent_ready;
	const char *agent_reason;
	const char *agent_message;
	/* status.ipv4.allocated has no room for another binding (condition StatusFull, set
	 * once true and kept from then on; reason NULL: StatusFull / StatusHasRoom) */
	bool status_full;
	const char *status_full_reason;
	const char *status_full_message;
};

/* Default reasons (True / False) when the facts give none; the Go project's where it has one. */
#define IPPOOL_REASON_AGENT_PLACED "AgentPlaced"       /* Registered True */
#define IPPOOL_REASON_NOT_REGISTERED "NotRegistered"   /* Registered False */
#define IPPOOL_REASON_CACHE_BUILT "CacheBuilt"	       /* CacheReady True */
#define IPPOOL_REASON_NOT_INITIALIZED "NotInitialized" /* CacheReady False (Go project) */
#define IPPOOL_REASON_AGENT_READY "AgentReady"	       /* AgentReady True */
#define IPPOOL_REASON_AGENT_NOT_READY "AgentNotReady"  /* AgentReady False */
#define IPPOOL_REASON_PAUSED "Paused"		       /* Stopped True; the others False */
#define IPPOOL_REASON_NOT_PAUSED "NotPaused"	       /* Stopped False */
#define IPPOOL_REASON_STATUS_FULL "StatusFull"	       /* StatusFull True: the budget is reached */
#define IPPOOL_REASON_TOO_LARGE "RequestTooLarge"      /* StatusFull True: the API server said so */
#define IPPOOL_REASON_STATUS_ROOM "StatusHasRoom"      /* StatusFull False */
/* Normal Event reasons (IPPool). */
#define IPPOOL_EVENT_AGENT_PLACED "AgentPlaced"
#define IPPOOL_EVENT_READY "Ready"
#define IPPOOL_EVENT_STATUS_FULL "StatusFull" /* Warning: StatusFull turned True */

/* Returns the number of conditions that changed (0: nothing to write), or -ENOMEM. */
int ippool_conditions_apply(struct crd_conditions *conds, const struct ippool_facts *f, time_t now);

/* An Event to record on the IPPool. */
#define IPPOOL_EVENT_MESSAGE_MAX 256
#define IPPOOL_EVENTS_MAX 3
struct ippool_event {
	const char *type;   /* static: "Normal" or "Warning" */
	const char *reason; /* static */
	char message[IPPOOL_EVENT_MESSAGE_MAX];
};

/*
 * The Normal Events of a status transition old → new (both borrowed) of the pool serving
 * network: AgentPlaced when new names an agent that old did not (a first placement, another
 * Deployment, or the same one re-placed with another image), Ready when the pool becomes ready
 * (Registered, CacheReady and AgentReady all True in new, not all in old). Nothing when the
 * status did not move that way: a resync that rewrites nothing, or rewrites the same facts,
 * emits none. And a Warning StatusFull when the condition StatusFull turns True (its
 * message). Fills ev[0..n) and returns n (<= IPPOOL_EVENTS_MAX).
 */
size_t ippool_status_events(const struct ippool_status *old, const struct ippool_status *new,
    const char *network, struct ippool_event ev[IPPOOL_EVENTS_MAX]);

#endif
