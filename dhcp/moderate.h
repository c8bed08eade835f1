/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_DHCP_MODERATE_H
#define VMDHCP_DHCP_MODERATE_H

/*
 * Receive moderation of the packet socket, NAPI-style, as a state machine the engine's one
 * receive call (dhcp_server_on_readable) follows: it is told of every pass over the socket
 * (frames read and answered, whether frames were still waiting once the replies were sent)
 * and says whether to read again at once or to return to the event loop. It reads no clock
 * and does no I/O: the caller gives it the time of each call.
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
 *   - No wait at all up to 20 000 requests/s (10 000 DORA/s): a wait saves wakeups (each a
 *     sleep and a wake-up, the largest cost per request on a virtual machine: half the
 *     agent's CPU samples at 7 000 DORA/s) and costs every request of its window up to the
 *     window in latency. The previous design (windows of up to 200 us once the average gap
 *     fell under 250 us, ~2 000 DORA/s) put the median DISCOVER->OFFER at 2-4 times the
 *     wire's (the AF_PACKET reflector's) at 1 000-8 000 requests/s.
 *   - Above 20 000 requests/s (the rule below), where one wakeup per request would cost ~40%
 *     more CPU per exchange (measured against perfdhcp at 12 000 DORA/s: 40 000 against
 *     70 000 DORA per CPU-second), a call that found requests asks for a wait of one
 *     average gap, doubled by each call that finds more, at most DHCP_MOD_MAX_USEC; a call
 *     that finds none ends it. The longest wait is 800 us: at 24 000 requests/s (perfdhcp at
 *     12 000 DORA/s), interleaved runs of 10 s gave 73 000-82 000 DORA per CPU-second with
 *     200 us, 87 000-101 000 with 400, 93 000-109 000 with 500 and 105 000-115 000 with
 *     800 (2026-11-28; this VM's spread from run to run is about 10 %), the sleeps and
 *     wake-ups being the cost; the mean kernel-receive-to-send delay at 12 000 DORA/s grows
 *     from 0.20 ms (200 us) and 0.42 ms (500 us) to 0.65 ms, p99 under 1 ms: nothing a DHCP
 *     client can notice (it retransmits after seconds), while the rates of the latency goals
 *     never wait.
 *     The caller waits without a libevent timer (a precise timer re-arms a timerfd on every
 *     loop turn: ~9% CPU, docs/benchmarks.md "Re-run for the simplification"): the agent
 *     sleeps in its callback, a bounded number of windows.
 *
 * The counters (struct dhcp_moderation_stats) say what was decided, for the metrics.
 */

#include <stdbool.h>
#include <stdint.h>

#define DHCP_MOD_BUDGET 512u /* frames read in one call before the loop gets its turn */

/*
 * Coalescing at high rates only: the average gap between requests (over time: the requests
 * read in at least DHCP_MOD_RATE_USEC, counted from the call that found requests and began
 * the window; at most DHCP_MOD_IDLE_USEC) under DHCP_MOD_ON_USEC (the window's on_usec) (above
 * 20 000 requests/s: 10 000 DORA/s, each exchange two requests) starts it, over
 * DHCP_MOD_OFF_USEC ends it. Over time, not over calls: perfdhcp, and VMs booting together,
 * send in bursts, read by several calls a few microseconds apart; an average of the calls'
 * gaps (the EWMA this replaced) took the bursts for the rate and waited inside them: at
 * 8 000 DORA/s under perfdhcp -x t, 650-721 waits in 10 s (0.20-0.22 s in all, several
 * requests delayed by each); over 2 ms windows 275-324, over 10 ms 73-100 (what is left:
 * perfdhcp catching up after a stall of its own, really faster than 20 000/s). While on, a
 * call that found requests asks its caller to wait before reading again: one average gap first,
 * doubled by every call that finds requests, at most DHCP_MOD_MAX_USEC; a call that finds
 * none ends the wait (readability again). At steady rates below 20 000 requests/s (those of
 * the latency goals, up to 8 000 DORA/s, bursts included) no request waits.
 */
#define DHCP_MOD_ON_USEC 50u
#define DHCP_MOD_OFF_USEC 55u
#define DHCP_MOD_MAX_USEC 800u
#define DHCP_MOD_MIN_USEC 25u
#define DHCP_MOD_IDLE_USEC 10000u
#define DHCP_MOD_RATE_USEC 10000u /* the rate is measured over windows at least this long */

enum dhcp_mod_next {
	DHCP_MOD_WATCH,	   /* return to the event loop: wait for readability */
	DHCP_MOD_READ_NOW, /* another pass, at once: frames are waiting */
};

struct dhcp_moderation_stats {
	uint64_t wakeups;   /* calls (the first pass of each: woken by readability) */
	uint64_t immediate; /* further passes begun at once: frames waited after answering */
	uint64_t yields;    /* calls ended by DHCP_MOD_BUDGET with frames still waiting */
	uint64_t frames;    /* frames read, all passes */
	uint64_t waits;	    /* coalescing waits asked for and made (dhcp_receive_call) */
	uint64_t wait_usec; /* their total */
};

/*
 * Where coalescing starts, ends and its longest wait (usec): DHCP_MOD_ON_USEC,
 * DHCP_MOD_OFF_USEC and DHCP_MOD_MAX_USEC after dhcp_moderation_reset (DHCPv4, whose latency
 * goals reach 8 000 DORA/s); dhcp_moderation_set_window gives other ones (DHCPv6).
 */
struct dhcp_mod_window {
	uint32_t on_usec, off_usec, max_usec;
};

struct dhcp_moderation {
	struct dhcp_mod_window w;
	unsigned call_frames; /* read in the current call */
	uint64_t win_start;   /* the rate's window: the call that began it */
	uint32_t win_frames;  /* requests read since (by later calls) */
	bool started;
	uint32_t gap;	/* average gap between requests over the last window, usec */
	uint32_t delay; /* the current wait, usec (0: not coalescing) */
	uint32_t asked; /* the wait the last call asked its caller for (0: none) */
	struct dhcp_moderation_stats st;
};

/* Sets up *m: no call under way, the counters at 0, the DHCPv4 window. */
void dhcp_moderation_reset(struct dhcp_moderation *m);
/* Another coalescing window (off_usec >= on_usec, max_usec >= DHCP_MOD_MIN_USEC); the wait
 * under way ends. */
void dhcp_moderation_set_window(struct dhcp_moderation *m, const struct dhcp_mod_window *w);
/* A call begins (its first pass follows). */
void dhcp_moderation_begin(struct dhcp_moderation *m);
/*
 * A pass read n frames and answered them; pending: frames were still waiting once the replies
 * were sent. Returns what to do next.
 */
enum dhcp_mod_next dhcp_moderation_pass(struct dhcp_moderation *m, unsigned n, bool pending);
/*
 * The call that began at now is over: how long its caller should wait before reading again
 * (0: wait for readability), per the coalescing rule above.
 */
uint32_t dhcp_moderation_end(struct dhcp_moderation *m, uint64_t now);

#endif
