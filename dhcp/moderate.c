/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Receive moderation: the delay before the next read of the packet socket, from the recent
 * gaps between requests (dhcp/moderate.h has the rules). Pure: no clock, no I/O.
 */
#include <string.h>

#include "dhcp/moderate.h"

void
dhcp_moderation_reset(struct dhcp_moderation *m)
{
	memset(m, 0, sizeof(*m));
	m->gap = DHCP_MOD_IDLE_USEC;
}

uint32_t
dhcp_moderation_next(struct dhcp_moderation *m, uint64_t now, unsigned n)
{
	uint64_t elapsed, sample;

	if (n == 0) {
		/* nothing waited: back to readability, the level halved; the average is left for
		 * the next read that finds requests, which counts the time since the last one */
		m->delay /= 2;
		if (m->delay < DHCP_MOD_MIN_USEC)
			m->delay = 0;
		return 0;
	}
	elapsed = !m->started ? DHCP_MOD_IDLE_USEC : now > m->last ? now - m->last : 0;
	sample = elapsed / n;
	if (sample > DHCP_MOD_IDLE_USEC)
		sample = DHCP_MOD_IDLE_USEC;
	m->started = true;
	m->last = now;
	m->gap = (uint32_t)((int64_t)m->gap + ((int64_t)sample - (int64_t)m->gap) / 8);
	if (m->gap > DHCP_MOD_OFF_USEC) {
		m->delay = 0;
		return 0;
	}
	if (m->delay == 0) {
		if (m->gap > DHCP_MOD_ON_USEC)
			return 0;
		/* a window of about one gap: the next read likely finds a request */
		m->delay = m->gap < DHCP_MOD_MIN_USEC ? DHCP_MOD_MIN_USEC : m->gap;
	} else {
		m->delay *= 2;
	}
	if (m->delay > DHCP_MOD_MAX_USEC)
		m->delay = DHCP_MOD_MAX_USEC;
	return m->delay;
}
