/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_NICBIND6_H
#define VMDHCP_CONTROLLER_NICBIND6_H

/*
 * The IPv6 address of one NIC on a pool with an ipv6Config (nicbind.c does the rest): the
 * rules of the IPv4 address, on the pool's IPv6 half (netpool6.h):
 *   - a static ipv6Address: bound; held by another MAC -> Pending (StaticIPConflict) + Event;
 *     excluded, reserved or outside the range -> Pending (StaticIPUnavailable); a NIC that
 *     holds another IPv6 address moves to the static one only once it is free;
 *   - else the IPv6 address the MAC already holds;
 *   - else the one its status remembers (a Pending NIC after a pause) when still free; held
 *     by another MAC -> Pending (AddressTaken) + Event, still remembered;
 *   - else the lowest free (PoolExhausted + Event when none);
 *   - a new binding past the status budget -> Pending (PoolStatusFull) + Event.
 * A static ipv6Address on a pool without ipv6Config -> Pending (StaticIPUnavailable).
 * Pure: no API calls, no logging.
 */

#include <stdbool.h>
#include <stddef.h>

#include <netinet/in.h>

#include "controller/netpool.h"
#include "crds/vmnetcfg.h"

#define NICBIND6_TEXT_MAX 256

struct nicbind6_outcome {
	struct in6_addr addr; /* bound (Allocated), or held / remembered (Pending), or zero */
	bool pending;	      /* the NIC waits for its IPv6 address: reason, event, text say why */
	const char *reason;   /* static: a VMNETCFG_REASON_* */
	bool event;	      /* a Warning Event with the text */
	char text[NICBIND6_TEXT_MAX];
	bool bound;    /* a new binding was made (the pool's status changes) */
	bool released; /* an address was released (a move to a static one) */
};

/*
 * The IPv6 address of nic (borrowed; mac its parsed MAC) on p for owner key; old: its entry
 * in the VMNetCfg's current status (NULL: none). Returns 0 with *out filled, or -ENOMEM, -EIO
 * (an inconsistency that cannot happen).
 */
int nicbind6_nic(struct netpool *p, const struct vmnetcfg_nic *nic, const uint8_t mac[MAC_LEN],
    const char *key, const struct vmnetcfg_nic_status *old, struct nicbind6_outcome *out);

#endif
