/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_MODERATE_H
#define VMDHCP_DHCP_MODERATE_H

/*
 * Receive moderation of the packet socket, as a state machine fed with (time, requests read)
 * for every read of the socket and returning how long to wait before the next one: 0 = wait
 * for readability, as usual (the next request is answered on its own wakeup), > 0 = read
 * again after that many microseconds, whatever arrives meanwhile, so that one wakeup and one
 * sendmmsg serve the requests of that window. It reads no clock (tests give it theirs).
 *
 * Load: an exponentially weighted moving average (weight 1/8) of the gap between requests,
 * each read that finds requests giving the time since the previous such read divided by how
 * many it found; a single sample counts at most DHCP_MOD_IDLE_USEC, so one idle spell ends
 * moderation at once.
 *   - No delay while the average gap is above DHCP_MOD_ON_USEC (below ~4 000 requests/s).
 *   - Below it, a read that finds requests starts moderation with a delay of one average gap
 *     (at least DHCP_MOD_MIN_USEC); every further read that finds some doubles the delay, up
 *     to DHCP_MOD_MAX_USEC, the most a request waits for moderation.
 *   - A read that finds nothing halves it (under DHCP_MOD_MIN_USEC: 0) and goes back to
 *     readability for now: nothing is waiting, so a timer would gain nothing; the next
 *     request is answered on its own wakeup, and doubles the delay again. (Staying on the
 *     timer with halved windows instead gave a third fewer DORA per CPU-second against
 *     perfdhcp at 12 000 DORA/s: the shorter windows mostly found nothing.)
 *   - The average rising above DHCP_MOD_OFF_USEC (below ~2 000 requests/s) ends it (0).
 */

#include <stdbool.h>
#include <stdint.h>

#include "dhcp/dhcp.h"

#define DHCP_MOD_MIN_USEC 25u
#define DHCP_MOD_MAX_USEC ((uint32_t)DHCP_MODERATION_MAX_USEC) /* dhcp.h */
#define DHCP_MOD_ON_USEC 250u	  /* average gap under which moderation may start */
#define DHCP_MOD_OFF_USEC 500u	  /* and over which it ends */
#define DHCP_MOD_IDLE_USEC 10000u /* the most one sample counts; the starting average */

struct dhcp_moderation {
	uint64_t last; /* time of the previous read, when started */
	bool started;
	uint32_t gap;	/* average gap between requests, usec */
	uint32_t delay; /* current delay, usec; 0: not moderating */
};

/* Sets up *m, or forgets its history (sockets reopened): no delay until load is seen again. */
void dhcp_moderation_reset(struct dhcp_moderation *m);
/* A read of the socket at now found n requests: returns the delay before the next read. */
uint32_t dhcp_moderation_next(struct dhcp_moderation *m, uint64_t now, unsigned n);

#endif
