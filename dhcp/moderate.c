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
