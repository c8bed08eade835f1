/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The schedule of unsolicited Router Advertisements (RFC 4861 §6.2.4): "the first few
 * advertisements (up to MAX_INITIAL_RTR_ADVERTISEMENTS) sent from an interface when it becomes
 * an advertising interface" go at most MAX_INITIAL_RTR_ADVERT_INTERVAL apart, so hosts that
 * missed the first learn the prefix soon; then "a uniformly distributed random value between
 * the router's configured MinRtrAdvInterval and MaxRtrAdvInterval", so routers on one link do
 * not synchronise.
 */
#include "agent/ra-timer.h"

#define USEC_PER_SEC_U64 1000000ull

uint64_t
agent_ra_next_usec(uint32_t interval_s, unsigned sent, uint32_t rnd)
{
	uint64_t max = (uint64_t)(interval_s > 0 ? interval_s : 1) * USEC_PER_SEC_U64;
	/* §6.2.1: MinRtrAdvInterval defaults to 0.33 * MaxRtrAdvInterval when Max >= 9 s */
	uint64_t min = interval_s >= 9 ? max * 33 / 100 : max;
	uint64_t d = min + (((max - min) * (uint64_t)rnd) >> 32);

	if (sent < AGENT_RA_INITIAL_COUNT && d > AGENT_RA_INITIAL_MAX_SEC * USEC_PER_SEC_U64)
		d = AGENT_RA_INITIAL_MAX_SEC * USEC_PER_SEC_U64;
	return d;
}
