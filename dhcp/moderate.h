/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_MODERATE_H
#define VMDHCP_DHCP_MODERATE_H

/*
 * Receive moderation of the packet socket, NAPI-style, as a state machine the engine's one
 * receive call (dhcp_server_on_readable) follows: it is told of every pass over the socket
 * (frames read and answered, whether frames were still waiting once the replies were sent)
 * and says whether to read again at once or to return to the event loop. It reads no clock
 * and does no I/O; no decision depends on time.
 *
 * The rules:
 *   - A wakeup (the socket readable) reads at once what is in the receive ring, answers it
 *     and sends the replies (one sendmmsg per DHCP_BATCH): a request that arrives at an idle
 *     agent is answered on its own wakeup, without waiting for company.
 *   - After answering, frames still waiting in the ring (they arrived while the pass ran: a
 *     real backlog) are read at once, in another pass: reading the ring is a memory load, no
 *     syscall, so the batch of the next pass is what queued during this one. Under load the
 *     passes grow by themselves (batching without added delay); when the agent keeps up, they
 *     hold one request each and cost one wakeup each.
 *   - Nothing waiting after answering: back to the event loop, to wait for readability.
 *   - After DHCP_MOD_BUDGET frames in one call, back to the event loop even with frames
 *     waiting (the socket stays readable, so the loop calls again after its other events):
 *     a flood does not starve the loop's timers, its Kubernetes watch and its /metrics.
 *   - Never a deliberate wait. A wait would save at most one pass (one sendmmsg and, when
 *     the ring was empty, one wakeup) per window, and cost every request of the window up to
 *     the window in latency, plus a timer: a libevent precise timer is a timerfd re-armed on
 *     every loop turn while any timer is pending, about 9% more CPU per exchange measured
 *     against perfdhcp at 12 000 DORA/s (docs/benchmarks.md, "Re-run for the
 *     simplification"), about what the batching it bought saved. The previous design here
 *     (a window of up to 200 us once the average gap between requests fell under 250 us)
 *     put the median DISCOVER->OFFER at 2-4 times the wire's (the AF_PACKET reflector's) at
 *     1 000-8 000 requests/s. Without a timer the agent's event base needs no precise
 *     timers at all.
 *
 * The counters (struct dhcp_moderation_stats) say what was decided, for the metrics.
 */

#include <stdbool.h>
#include <stdint.h>

#define DHCP_MOD_BUDGET 512u /* frames read in one call before the loop gets its turn */

enum dhcp_mod_next {
	DHCP_MOD_WATCH,	   /* return to the event loop: wait for readability */
	DHCP_MOD_READ_NOW, /* another pass, at once: frames are waiting */
};

struct dhcp_moderation_stats {
	uint64_t wakeups;   /* calls (the first pass of each: woken by readability) */
	uint64_t immediate; /* further passes begun at once: frames waited after answering */
	uint64_t yields;    /* calls ended by DHCP_MOD_BUDGET with frames still waiting */
	uint64_t frames;    /* frames read, all passes */
};

struct dhcp_moderation {
	unsigned call_frames; /* read in the current call */
	struct dhcp_moderation_stats st;
};

/* Sets up *m: no call under way, the counters at 0. */
void dhcp_moderation_reset(struct dhcp_moderation *m);
/* A call begins (its first pass follows). */
void dhcp_moderation_begin(struct dhcp_moderation *m);
/*
 * A pass read n frames and answered them; pending: frames were still waiting once the replies
 * were sent. Returns what to do next.
 */
enum dhcp_mod_next dhcp_moderation_pass(struct dhcp_moderation *m, unsigned n, bool pending);

#endif
