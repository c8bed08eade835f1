/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Receive moderation: after each pass over the packet socket, read again at once or return to
 * the event loop (dhcp/moderate.h has the rules). Pure: no clock, no I/O.
 */
#include <string.h>

#include "dhcp/moderate.h"

void
dhcp_moderation_reset(struct dhcp_moderation *m)
{
	memset(m, 0, sizeof(*m));
	m->gap = DHCP_MOD_IDLE_USEC;
	m->w = (struct dhcp_mod_window){DHCP_MOD_ON_USEC, DHCP_MOD_OFF_USEC, DHCP_MOD_MAX_USEC};
}

void
dhcp_moderation_set_window(struct dhcp_moderation *m, const struct dhcp_mod_window *w)
{
	m->w = *w;
	if (m->w.off_usec < m->w.on_usec)
		m->w.off_usec = m->w.on_usec;
	if (m->w.max_usec < DHCP_MOD_MIN_USEC)
		m->w.max_usec = DHCP_MOD_MIN_USEC;
	m->delay = 0;
}

void
dhcp_moderation_begin(struct dhcp_moderation *m)
{
	m->call_frames = 0;
	m->st.wakeups++;
}

enum dhcp_mod_next
dhcp_moderation_pass(struct dhcp_moderation *m, unsigned n, bool pending)
{
	m->st.frames += n;
	m->call_frames =
	    n > DHCP_MOD_BUDGET - m->call_frames ? DHCP_MOD_BUDGET : m->call_frames + n;
	if (!pending || n == 0) /* (a pass that read nothing cannot make progress) */
		return DHCP_MOD_WATCH;
	if (m->call_frames >= DHCP_MOD_BUDGET) {
		m->st.yields++;
		return DHCP_MOD_WATCH;
	}
	m->st.immediate++;
	return DHCP_MOD_READ_NOW;
}

uint32_t
dhcp_moderation_end(struct dhcp_moderation *m, uint64_t now)
{
	uint64_t elapsed, sample;
	unsigned n = m->call_frames;

	if (n == 0) {
		m->delay = 0; /* nothing waited: readability, the next request on its own wakeup */
		return 0;
	}
	if (!m->started) {
		/* the first window begins: this call's requests arrived before it */
		m->started = true;
		m->win_start = now;
		m->win_frames = 0;
	} else {
		m->win_frames = n > UINT32_MAX - m->win_frames ? UINT32_MAX : m->win_frames + n;
		elapsed = now > m->win_start ? now - m->win_start : 0;
		if (elapsed >= DHCP_MOD_RATE_USEC) {
			sample = elapsed / m->win_frames;
			m->gap =
			    sample > DHCP_MOD_IDLE_USEC ? DHCP_MOD_IDLE_USEC : (uint32_t)sample;
			m->win_start = now;
			m->win_frames = 0;
		}
	}
	if (m->gap > m->w.off_usec || (m->delay == 0 && m->gap > m->w.on_usec)) {
		m->delay = 0;
		return 0;
	}
	if (m->delay == 0)
		m->delay = m->gap < DHCP_MOD_MIN_USEC ? DHCP_MOD_MIN_USEC : m->gap;
	else
		m->delay *= 2;
	if (m->delay > m->w.max_usec)
		m->delay = m->w.max_usec;
	return m->delay;
}
