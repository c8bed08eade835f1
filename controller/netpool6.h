/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_NETPOOL6_H
#define VMDHCP_CONTROLLER_NETPOOL6_H

/*
 * The IPv6 half of a pool's network (an IPPool with spec.ipv6Config): the IPv6 IPAM
 * (ipam/'s ipam_pool6: any range size, memory by the bindings) plus the MAC ownership table
 * (ipam_leases6) MAC -> {IPv6 address, owner}, owner being the VMNetCfg key ("ns/name") that holds
 * the binding or NULL for one known only from the IPPool's status.ipv6.allocated. The rules are the
 * IPv4 half's (netpool.h): a static pin, else the address the MAC holds, else the lowest free; one
 * address per MAC and one MAC per address; a rebuild that never resolves a conflict silently and
 * never leaves a contested address free.
 *
 * Standalone: it knows nothing of the IPv4 half nor of the status budget (netpool.c wraps it
 * and passes the room left). Pure: no API calls, no logging.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>

#include "crds/ippool.h"
#include "ipam/ipam.h"
#include "lib/util.h"

struct netpool6;

/* A record of ipam_leases6's table: the binding, then its owner. */
struct netpool6_entry {
	union {
		struct ipam_lease6 lease;
		struct { /* the same fields by their names */
			uint8_t mac[MAC_LEN];
			uint8_t user_[2];
			struct in6_addr addr;
		};
	};
	char *owner; /* owned; NULL: known only from the IPPool status */
};

/* New, empty half for an ipv6Config (borrowed). 0, the errors of ipam_pool6_new, -ENOMEM. */
int netpool6_new(const struct ippool_ipv6_config *cfg, struct netpool6 **ret);
/* Accepts NULL; returns NULL. */
struct netpool6 *netpool6_free(struct netpool6 *p);

/* The immutable parts (CIDR's network, prefix, server address) match cfg's. */
bool netpool6_same_network(const struct netpool6 *p, const struct ippool_ipv6_config *cfg);
/* A hash of the mutable parts (pool start, end, exclude): a change calls netpool6_set_range. */
uint64_t netpool6_range_hash(const struct ippool_ipv6_config *cfg);
/*
 * A range / exclude change: 0, or -EBUSY when a bound address would be stranded
 * (*ret_conflict, optional, gets it), the half unchanged; else ipam_pool6_set_range's errors.
 */
int netpool6_set_range(
    struct netpool6 *p, const struct ippool_ipv6_config *cfg, struct in6_addr *ret_conflict);

/* One existing binding for a rebuild (owner borrowed; NULL: from the IPPool status). */
struct netpool6_source {
	struct in6_addr addr;
	uint8_t mac[MAC_LEN];
	const char *owner;
};
struct netpool6_conflict {
	enum ipam_conflict_kind kind;
	struct in6_addr addr;
	size_t first, second; /* indexes in the sources (first == second when alone) */
};
/*
 * Every binding dropped, then sources[0..n) applied in order (VMNetCfg statuses first: the
 * commit point). As netpool_rebuild: the same MAC on the same address twice merges (an owner
 * fills a NULL one); a second MAC on an address (duplicate-ip: the first keeps it), one MAC on
 * a second address (duplicate-mac: that address stays USED, owned by no one, never handed
 * out), an address outside the range, excluded or reserved: each reported, none resolved
 * silently. Returns the number of conflicts with *ret_conflicts (free(); NULL when none), or
 * -ENOMEM (the half then holds part of the sources: the caller drops it and builds again).
 */
int netpool6_rebuild(struct netpool6 *p, const struct netpool6_source *src, size_t n,
    struct netpool6_conflict **ret_conflicts);

const struct netpool6_entry *netpool6_by_mac(const struct netpool6 *p, const uint8_t mac[MAC_LEN]);
const struct netpool6_entry *netpool6_by_addr(const struct netpool6 *p, const struct in6_addr *a);
/* The state of a (enum ipam_state), or -ERANGE outside [start, end]. */
int netpool6_state(const struct netpool6 *p, const struct in6_addr *a);
bool netpool6_is_free(const struct netpool6 *p, const struct in6_addr *a);

/*
 * Bind mac to *addr (NULL or zero: the lowest free address) for owner (borrowed, copied), as
 * netpool_bind: a MAC bound to the same owner (or to none: adopted) at that address (or any,
 * with no address asked) is a no-op returning its address. A new binding whose status entry
 * would take more than room bytes is refused (-EFBIG; SIZE_MAX: no limit). Returns 0 and
 * *ret, or -EBUSY (another owner), -EALREADY (bound here at another address), -EEXIST (held
 * by another MAC, or contested), -EPERM (excluded, reserved), -ERANGE, -ENOSPC, -EFBIG,
 * -ENOMEM.
 */
int netpool6_bind(struct netpool6 *p, const uint8_t mac[MAC_LEN], const struct in6_addr *addr,
    const char *owner, size_t room, struct in6_addr *ret);
/* 0, -ENOENT (not bound), -EPERM (another owner holds it). */
int netpool6_release(struct netpool6 *p, const uint8_t mac[MAC_LEN], const char *owner);

size_t netpool6_size(const struct netpool6 *p);
uint64_t netpool6_used(const struct netpool6 *p);
int64_t netpool6_available(const struct netpool6 *p); /* saturated at INT64_MAX */

/*
 * Bytes of status.ipv6.allocated as stored (compact JSON, braces included): each entry
 * "addr":"<MAC or EXCLUDED/RESERVED>"; without the EXCLUDED ones when omit_excluded.
 */
size_t netpool6_entry_bytes(const struct in6_addr *a, enum ippool_alloc_kind kind);
/* The longest entry a binding can take (a 39-character address). */
size_t netpool6_entry_bytes_max(void);
size_t netpool6_map_bytes(const struct netpool6 *p, bool omit_excluded);
size_t netpool6_excluded_bytes(const struct netpool6 *p);

/*
 * Release bindings the recorded IPPool status (borrowed) does not list at their MAC, until
 * at least `over` bytes of entries went, calling evicted with each one's owner first.
 * Returns how many were released.
 */
size_t netpool6_evict_unrecorded(struct netpool6 *p, const struct ippool_status *recorded,
    size_t over, void (*evicted)(void *userdata, const char *owner), void *userdata);

/*
 * Fill status->allocated6 (the bindings, the EXCLUDED and RESERVED marks inside the range,
 * EXCLUDED ones left out when omit_excluded), used6, available6; has_ipv6_status set.
 * 0 or -ENOMEM.
 */
int netpool6_render(const struct netpool6 *p, bool omit_excluded, struct ippool_status *status);

#endif
