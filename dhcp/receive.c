/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The engines' receive call (dhcp/receive.h): passes while dhcp/moderate.c says to read again.
 */
#include "dhcp/receive.h"

#include <stddef.h>

int
dhcp_receive_call(
    const struct dhcp_receive *rc, bool after_wait, uint64_t now, uint32_t *ret_wait_usec)
{
	struct dhcp_moderation *m = rc->mod;
	uint64_t t0 = now;
	uint32_t wait;
	enum dhcp_mod_next next;
	int n, total = 0;

	if (after_wait && m->asked > 0) {
		m->st.waits++;
		m->st.wait_usec += m->asked;
	}
	m->asked = 0;
	dhcp_moderation_begin(m);
	do {
		bool pending;

		n = rc->pass(rc->userdata, now);
		if (n < 0) {
			if (total == 0)
				total = n;
			n = 0;
		} else {
			total += n;
		}
		/* after the replies are sent: did more arrive meanwhile? (a full recvmmsg batch
		 * says there may be more) */
		pending = rc->ring->map != NULL ? dhcp_socket_ring_ready(rc->ring)
						: (unsigned)n == rc->batch;
		next = dhcp_moderation_pass(m, (unsigned)n, pending);
		/* frames of the next pass arrived after the first read */
		if (next == DHCP_MOD_READ_NOW && rc->clock != NULL)
			now = rc->clock(rc->clock_userdata);
	} while (next == DHCP_MOD_READ_NOW);
	wait = dhcp_moderation_end(m, t0);
	if (ret_wait_usec != NULL) {
		*ret_wait_usec = wait;
		m->asked = wait;
	}
	return total;
}
