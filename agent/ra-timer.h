/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_RA_TIMER_H
#define VMDHCP_AGENT_RA_TIMER_H

/*
 * ra-timer.c: when the next unsolicited Router Advertisement goes (RFC 4861 §6.2.4), a pure
 * function: no clock, the random draw passed in.
 */

#include <stdint.h>

/* RFC 4861 §10: MAX_INITIAL_RTR_ADVERTISEMENTS, MAX_INITIAL_RTR_ADVERT_INTERVAL (16 s). */
#define AGENT_RA_INITIAL_COUNT 3
#define AGENT_RA_INITIAL_MAX_SEC 16

/*
 * Microseconds from the RA just sent (the sent-th since RAs started on this interface, 1 for
 * the first) to the next: uniformly in [MinRtrAdvInterval, MaxRtrAdvInterval] (RFC 4861
 * §6.2.4) with interval_s as MaxRtrAdvInterval and MinRtrAdvInterval its default (§6.2.1:
 * 0.33 x Max from 9 s up, else Max); while fewer than AGENT_RA_INITIAL_COUNT were sent, at
 * most AGENT_RA_INITIAL_MAX_SEC. rnd: a uniform random 32-bit value.
 */
uint64_t agent_ra_next_usec(uint32_t interval_s, unsigned sent, uint32_t rnd);

#endif
