/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_RECEIVE_H
#define VMDHCP_DHCP_RECEIVE_H

/*
 * The receive call both engines make when their packet socket is readable (dhcp/receive.c):
 * passes over the socket, each reading what is waiting and answering it, for as long as
 * dhcp/moderate.h says to read again, then the coalescing wait it asks for. The engines give
 * their own pass (the receive ring, or one recvmmsg batch without it).
 */

#include <stdbool.h>
#include <stdint.h>

#include "dhcp/moderate.h"
#include "dhcp/socket-raw.h"

struct dhcp_receive {
	struct dhcp_moderation *mod;
	const struct dhcp_ring *ring; /* map NULL: the passes read recvmmsg batches */
	unsigned batch;		      /* a pass that read this many (no ring): there may be more */
	/* one pass: reads and answers what is waiting; frames read, or negative errno */
	int (*pass)(void *userdata, uint64_t now);
	void *userdata;
	uint64_t (*clock)(void *userdata); /* optional: the receive time of later passes */
	void *clock_userdata;
};

/*
 * One call: after_wait says the caller waited the time the previous call asked for (counted in
 * mod->st.waits and wait_usec). Returns the frames read (the first pass's negative errno when
 * none was read). *ret_wait_usec (may be NULL: the caller never waits) gets how long to wait
 * before the next call, 0 to wait for readability.
 */
int dhcp_receive_call(
    const struct dhcp_receive *rc, bool after_wait, uint64_t now, uint32_t *ret_wait_usec);

#endif
