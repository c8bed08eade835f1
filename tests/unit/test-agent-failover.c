/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent/failover-fsm.c, --leader-elect's decisions: case by case, each event's actions, then
 * on a fake clock whose timers are the ones the actions set (as failover.c sets libevent's):
 * a Lease won and the address found free, a previous holder still answering (fenced), the
 * Lease lost with and without the API server, the API server silent (hold) and back, a warm
 * start, the address defended and claimed, a stop.
 */
#include <errno.h>
#include <string.h>

#include "agent/failover-fsm.h"
#include "tests/runner.h"

#define SEC UINT64_C(1000000)
#define MS UINT64_C(1000)
#define RENEW (10 * SEC) /* the renew deadline */
#define RETRY (2 * SEC)	 /* the retry period */
#define T0 (1000 * SEC)	 /* a monotonic clock's value at start */

static const uint8_t mac_x[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x0a};
static const uint8_t mac_y[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x0b};

/* ---- a replica on a fake clock: the timers the actions set, and what they asked ---- */

struct sim {
	struct failover_fsm f;
	struct failover_actions act; /* the last event's */
	uint64_t now;
	bool probe_on, hold_on;
	uint64_t probe_at, hold_at;
	bool can_probe; /* the sockets and the ARP socket open, a pool served */
	bool snapshot;
	unsigned claims, stand_downs, sent, announces, releases;
};

static void
sim_init(struct sim *s, bool leader_elect)
{
	memset(s, 0, sizeof(*s));
	s->now = T0;
	s->can_probe = true;
	failover_fsm_init(&s->f, leader_elect, s->now, RENEW, RETRY);
}

static void
timer_apply(const struct failover_timer *t, uint64_t now, bool *on, uint64_t *at)
{
	if (t->op == FAILOVER_TIMER_CANCEL)
		*on = false;
	if (t->op == FAILOVER_TIMER_ARM) {
		*on = true;
		/* the random part: its upper bound, the latest the glue may fire */
		*at = now + t->usec + (t->jitter_usec != 0 ? t->jitter_usec - 1 : 0);
	}
}

/* Does what the last event asked (failover.c's perform), and checks the fsm's own view. */
static void
sim_apply(struct sim *s)
{
	timer_apply(&s->act.probe, s->now, &s->probe_on, &s->probe_at);
	timer_apply(&s->act.hold, s->now, &s->hold_on, &s->hold_at);
	s->claims += s->act.claim;
	s->stand_downs += s->act.stand_down;
	s->sent += s->act.send_probe;
	s->announces += s->act.announce;
	s->releases += s->act.release;
	CU_ASSERT_EQUAL(s->f.probe_armed, s->probe_on);
	CU_ASSERT_EQUAL(s->f.hold_armed, s->hold_on);
	/* answering exactly in ACTIVE and HOLD (with --leader-elect) */
	CU_ASSERT_EQUAL(s->f.active, s->f.state == FAILOVER_ACTIVE || s->f.state == FAILOVER_HOLD);
}

static void
ev_won(struct sim *s)
{
	failover_fsm_lease_won(&s->f, s->can_probe, &s->act);
	sim_apply(s);
}

static void
ev_lost(struct sim *s)
{
	failover_fsm_lease_lost(&s->f, &s->act);
	sim_apply(s);
}

static void
ev_other(struct sim *s)
{
	failover_fsm_lease_other(&s->f, &s->act);
	sim_apply(s);
}

static void
ev_api(struct sim *s, bool answered)
{
	failover_fsm_api_result(&s->f, s->now, answered, &s->act);
	sim_apply(s);
}

static void
ev_open(struct sim *s)
{
	failover_fsm_sockets_open(&s->f, s->can_probe, s->snapshot, &s->act);
	sim_apply(s);
}

static void
ev_arp(struct sim *s, enum failover_arp kind, const uint8_t mac[6])
{
	failover_fsm_arp(&s->f, s->now, kind, mac, &s->act);
	sim_apply(s);
}

/* Fires the due timers in time order up to now + usec; the clock ends there. */
static void
sim_run(struct sim *s, uint64_t usec)
{
	uint64_t end = s->now + usec;

	for (;;) {
		bool probe = s->probe_on && s->probe_at <= end;
		bool hold = s->hold_on && s->hold_at <= end;
		if (!probe && !hold)
			break;
		if (probe && (!hold || s->probe_at <= s->hold_at)) {
			s->now = s->probe_at;
			s->probe_on = false;
			failover_fsm_probe_timer(&s->f, s->can_probe, s->can_probe, &s->act);
		} else {
			s->now = s->hold_at;
			s->hold_on = false;
			failover_fsm_hold_timer(&s->f, s->now, s->can_probe, &s->act);
		}
		sim_apply(s);
	}
	s->now = end;
}

/* ---- the cases ---- */

static void
test_init(void)
{
	struct failover_fsm f;

	failover_fsm_init(&f, true, T0, RENEW, RETRY);
	CU_ASSERT_EQUAL(f.state, FAILOVER_STANDBY);
	CU_ASSERT_FALSE(f.active);
	CU_ASSERT_EQUAL(f.api_answered_at, T0);
	/* without --leader-elect the one replica answers */
	failover_fsm_init(&f, false, T0, RENEW, RETRY);
	CU_ASSERT_TRUE(f.active);
}

/* The Lease won, the probes unanswered: ACTIVE after FAILOVER_PROBE_NUM probes and a wait. */
static void
test_won_free(void)
{
	struct sim s;

	sim_init(&s, true);
	ev_won(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_PROBING);
	CU_ASSERT_FALSE(s.f.probe_for_hold);
	CU_ASSERT_EQUAL(s.act.probe.op, FAILOVER_TIMER_ARM);
	CU_ASSERT_EQUAL(s.act.probe.usec, 0);
	CU_ASSERT_EQUAL(s.act.hold.op, FAILOVER_TIMER_CANCEL);
	CU_ASSERT_FALSE(s.act.claim);
	/* the first probe at once, the second 50 ms later */
	sim_run(&s, 0);
	CU_ASSERT_EQUAL(s.sent, 1);
	CU_ASSERT_EQUAL(s.probe_at, T0 + FAILOVER_PROBE_INTERVAL_USEC);
	sim_run(&s, FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_EQUAL(s.sent, 2);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_PROBING);
	CU_ASSERT_EQUAL(s.claims, 0);
	/* the verdict 50 ms after the last: nobody answered, taken */
	sim_run(&s, FAILOVER_PROBE_INTERVAL_USEC - 1);
	CU_ASSERT_EQUAL(s.claims, 0);
	sim_run(&s, 1);
	CU_ASSERT_EQUAL(s.claims, 1);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_ACTIVE);
	CU_ASSERT_TRUE(s.f.active);
	CU_ASSERT_EQUAL(s.f.transitions, 1);
	CU_ASSERT_EQUAL(s.f.probes, FAILOVER_PROBE_NUM);
	CU_ASSERT_EQUAL(s.sent, FAILOVER_PROBE_NUM);
	CU_ASSERT_EQUAL(s.stand_downs, 0);
	CU_ASSERT_FALSE(s.probe_on);
	CU_ASSERT_FALSE(s.hold_on);
	/* won again while active: nothing new */
	ev_won(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_ACTIVE);
	CU_ASSERT_EQUAL(s.act.note, FAILOVER_NOTE_NONE);
	CU_ASSERT_FALSE(s.probe_on);
}

/* The Lease won before the sockets are open: acted on once they are. */
static void
test_won_before_sockets(void)
{
	struct sim s;

	sim_init(&s, true);
	s.can_probe = false;
	ev_won(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	CU_ASSERT_FALSE(s.probe_on);
	CU_ASSERT_FALSE(s.hold_on); /* with the Lease, no look for hold */
	s.can_probe = true;
	ev_open(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_PROBING);
	CU_ASSERT_FALSE(s.f.probe_for_hold);
	sim_run(&s, 3 * FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_ACTIVE);
	/* the sockets reopened while active: nothing */
	ev_open(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_ACTIVE);
	CU_ASSERT_FALSE(s.probe_on);
	/* the probe timer fires without the ARP socket: nothing sent, nothing decided */
	sim_init(&s, true);
	ev_won(&s);
	failover_fsm_probe_timer(&s.f, false, false, &s.act);
	s.probe_on = false;
	sim_apply(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_PROBING);
	CU_ASSERT_FALSE(s.act.send_probe);
	CU_ASSERT_EQUAL(s.f.probes, 0);
}

/*
 * The Lease won, but a previous holder still answers for the serverIP: standby, fenced, the
 * MAC logged once; a look again every retry period; taken once nobody answers.
 */
static void
test_fenced(void)
{
	struct sim s;

	sim_init(&s, true);
	ev_won(&s);
	sim_run(&s, 0); /* the first probe */
	ev_arp(&s, FAILOVER_ARP_CLAIM, mac_x);
	CU_ASSERT_EQUAL(s.f.conflicts, 1);
	CU_ASSERT_TRUE(s.f.probe_conflict);
	ev_arp(&s, FAILOVER_ARP_CLAIM, mac_x); /* counted once per probe */
	CU_ASSERT_EQUAL(s.f.conflicts, 1);
	CU_ASSERT_FALSE(s.act.stand_down);
	/* the next timer: no second probe, the verdict */
	sim_run(&s, FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_EQUAL(s.sent, 1);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	CU_ASSERT_FALSE(s.f.active);
	CU_ASSERT_EQUAL(s.claims, 0);
	CU_ASSERT_EQUAL(s.act.note, FAILOVER_NOTE_FENCED);
	CU_ASSERT_EQUAL(memcmp(s.f.fenced_mac, mac_x, 6), 0);
	CU_ASSERT_TRUE(s.hold_on);
	CU_ASSERT_EQUAL(s.act.hold.usec, RETRY);
	CU_ASSERT_EQUAL(s.act.hold.jitter_usec, 0);
	/* a retry period later: probes again; the same MAC answers: not logged again */
	sim_run(&s, RETRY);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_PROBING);
	CU_ASSERT_FALSE(s.f.probe_for_hold);
	ev_arp(&s, FAILOVER_ARP_CLAIM, mac_x);
	CU_ASSERT_EQUAL(s.f.conflicts, 2);
	sim_run(&s, 2 * FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	CU_ASSERT_EQUAL(s.act.note, FAILOVER_NOTE_NONE);
	/* another MAC: logged */
	sim_run(&s, RETRY);
	ev_arp(&s, FAILOVER_ARP_PROBE, mac_y); /* probing for it at once counts too */
	sim_run(&s, 2 * FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_EQUAL(s.act.note, FAILOVER_NOTE_FENCED);
	CU_ASSERT_EQUAL(memcmp(s.f.fenced_mac, mac_y, 6), 0);
	/* the holder gone: taken, the fence forgotten */
	sim_run(&s, RETRY + 3 * FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_ACTIVE);
	CU_ASSERT_EQUAL(s.claims, 1);
	CU_ASSERT_EQUAL(s.f.transitions, 1);
	CU_ASSERT_EQUAL(memcmp(s.f.fenced_mac, (uint8_t[6]){0}, 6), 0);
	CU_ASSERT_FALSE(s.hold_on);
}

/* The Lease lost with the API server answering: stand down, the address given up. */
static void
test_lost(void)
{
	struct sim s;

	sim_init(&s, true);
	ev_api(&s, true);
	ev_won(&s);
	sim_run(&s, SEC);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_ACTIVE);
	ev_lost(&s);
	CU_ASSERT_TRUE(s.act.stand_down);
	CU_ASSERT_TRUE(s.act.was_active);
	CU_ASSERT_EQUAL(s.act.why, FAILOVER_WHY_LEASE_LOST);
	CU_ASSERT_EQUAL(s.act.hold.op, FAILOVER_TIMER_CANCEL);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	CU_ASSERT_FALSE(s.f.active);
	CU_ASSERT_FALSE(s.f.lease_held);
	/* the API server answering: no look for hold */
	sim_run(&s, 10 * SEC);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	CU_ASSERT_EQUAL(s.stand_downs, 1);
	/* lost while probing with it: the probe ends, no verdict */
	sim_init(&s, true);
	ev_api(&s, true);
	ev_won(&s);
	sim_run(&s, 0);
	ev_lost(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	CU_ASSERT_EQUAL(s.act.probe.op, FAILOVER_TIMER_CANCEL);
	CU_ASSERT_FALSE(s.act.stand_down); /* was not answering */
	sim_run(&s, SEC);
	CU_ASSERT_EQUAL(s.claims, 0);
	CU_ASSERT_EQUAL(s.sent, 1);
}

/*
 * The Lease lost because the API server does not answer: HOLD, answering on; the Lease back:
 * ACTIVE; another replica's Lease seen while in HOLD: stand down.
 */
static void
test_lost_without_api(void)
{
	struct sim s;

	sim_init(&s, true);
	ev_won(&s);
	sim_run(&s, SEC);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_ACTIVE);
	ev_api(&s, false);
	CU_ASSERT_FALSE(s.hold_on); /* active: no look */
	ev_lost(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_HOLD);
	CU_ASSERT_TRUE(s.f.active);
	CU_ASSERT_FALSE(s.act.stand_down);
	CU_ASSERT_EQUAL(s.act.note, FAILOVER_NOTE_HOLD_NO_API);
	/* the Lease renewed again: ACTIVE, said once */
	ev_won(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_ACTIVE);
	CU_ASSERT_EQUAL(s.act.note, FAILOVER_NOTE_HOLDS_AGAIN);
	CU_ASSERT_EQUAL(s.f.transitions, 1); /* never stopped answering */
	CU_ASSERT_EQUAL(s.claims, 1);
	/* lost again without the API server; then another replica holds it: stand down */
	ev_lost(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_HOLD);
	ev_other(&s);
	CU_ASSERT_TRUE(s.act.stand_down);
	CU_ASSERT_TRUE(s.act.was_active);
	CU_ASSERT_EQUAL(s.act.why, FAILOVER_WHY_LEASE_OTHER);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	/* another holder seen by an ACTIVE or STANDBY replica: nothing */
	ev_other(&s);
	CU_ASSERT_FALSE(s.act.stand_down);
	CU_ASSERT_EQUAL(s.stand_downs, 1);
}

/*
 * The API server does not answer and the Lease is nobody's here: a standby looks at once after
 * the first failed attempt, probes for hold, takes the serverIP (HOLD) when nobody answers;
 * stands down when another MAC claims it, and looks again 1 to 1.5 s later.
 */
static void
test_hold(void)
{
	struct sim s;

	sim_init(&s, true);
	ev_api(&s, false);
	CU_ASSERT_TRUE(s.hold_on);
	CU_ASSERT_EQUAL(s.act.hold.usec, 0); /* the first failure: at once */
	CU_ASSERT_EQUAL(s.act.hold.jitter_usec, 0);
	ev_api(&s, false); /* a look already due: not moved */
	CU_ASSERT_EQUAL(s.act.hold.op, FAILOVER_TIMER_KEEP);
	sim_run(&s, 0);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_PROBING);
	CU_ASSERT_TRUE(s.f.probe_for_hold);
	sim_run(&s, 2 * FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_HOLD);
	CU_ASSERT_TRUE(s.f.active);
	CU_ASSERT_EQUAL(s.claims, 1);
	CU_ASSERT_EQUAL(s.f.transitions, 1);
	/* a probe for the address from another: our kernel answers it, nothing here */
	ev_arp(&s, FAILOVER_ARP_PROBE, mac_x);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_HOLD);
	CU_ASSERT_EQUAL(s.f.conflicts, 0);
	/* claimed by another MAC: stand down, look again later */
	ev_arp(&s, FAILOVER_ARP_CLAIM, mac_x);
	CU_ASSERT_TRUE(s.act.stand_down);
	CU_ASSERT_EQUAL(s.act.why, FAILOVER_WHY_CLAIMED);
	CU_ASSERT_FALSE(s.act.announce);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	CU_ASSERT_EQUAL(s.f.conflicts, 1);
	CU_ASSERT_EQUAL(s.act.hold.usec, FAILOVER_HOLD_RETRY_USEC);
	CU_ASSERT_EQUAL(s.act.hold.jitter_usec, FAILOVER_HOLD_JITTER_USEC);
	/* the next look: still silent, the other still answers: stays standby */
	sim_run(&s, FAILOVER_HOLD_RETRY_USEC + FAILOVER_HOLD_JITTER_USEC);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_PROBING);
	ev_arp(&s, FAILOVER_ARP_CLAIM, mac_x);
	sim_run(&s, 2 * FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	CU_ASSERT_EQUAL(s.act.note, FAILOVER_NOTE_STAYS_STANDBY);
	CU_ASSERT_EQUAL(s.act.hold.jitter_usec, FAILOVER_HOLD_JITTER_USEC);
	CU_ASSERT_EQUAL(s.claims, 1);
	/* a later failed attempt while a look is due: no change; answered: the look called off */
	ev_api(&s, false);
	CU_ASSERT_EQUAL(s.act.hold.op, FAILOVER_TIMER_KEEP);
	ev_api(&s, true);
	CU_ASSERT_EQUAL(s.act.hold.op, FAILOVER_TIMER_CANCEL);
	CU_ASSERT_FALSE(s.hold_on);
	/* failed again, not the first: 1 to 1.5 s */
	ev_api(&s, false);
	CU_ASSERT_EQUAL(s.act.hold.usec, FAILOVER_HOLD_RETRY_USEC);
	CU_ASSERT_EQUAL(s.act.hold.jitter_usec, FAILOVER_HOLD_JITTER_USEC);
}

/*
 * An attempt that hangs fails only at the client's timeout: a standby counts the API server
 * silent once no attempt was answered for the renew deadline.
 */
static void
test_silent_past_deadline(void)
{
	struct sim s;

	sim_init(&s, true);
	ev_open(&s); /* no Lease, no snapshot, no attempt yet: keeps watching */
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	CU_ASSERT_TRUE(s.hold_on);
	CU_ASSERT_EQUAL(s.act.hold.usec, FAILOVER_HOLD_RETRY_USEC);
	/* looks before the renew deadline: not silent, no probe */
	while (s.now + FAILOVER_HOLD_RETRY_USEC + FAILOVER_HOLD_JITTER_USEC < T0 + RENEW) {
		sim_run(&s, FAILOVER_HOLD_RETRY_USEC + FAILOVER_HOLD_JITTER_USEC);
		CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
		CU_ASSERT_TRUE(s.hold_on);
	}
	CU_ASSERT_EQUAL(s.sent, 0);
	/* the deadline passed: probes for hold, takes it */
	sim_run(&s, 3 * (FAILOVER_HOLD_RETRY_USEC + FAILOVER_HOLD_JITTER_USEC));
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_HOLD);
	CU_ASSERT_EQUAL(s.claims, 1);
	/* an answered attempt resets the deadline (a standby again, by another's Lease) */
	ev_other(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	ev_api(&s, true);
	CU_ASSERT_EQUAL(s.f.api_answered_at, s.now);
	failover_fsm_hold_timer(&s.f, s.now + RENEW - 1, true, &s.act);
	CU_ASSERT_EQUAL(s.act.probe.op, FAILOVER_TIMER_KEEP);
	failover_fsm_hold_timer(&s.f, s.now + RENEW, true, &s.act);
	CU_ASSERT_EQUAL(s.act.probe.op, FAILOVER_TIMER_ARM);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_PROBING);
}

/* A probe for hold whose verdict comes after the API server answered, or the Lease came. */
static void
test_hold_probe_overtaken(void)
{
	struct sim s;

	/* the API server answered meanwhile: the Lease decides; standby, watching */
	sim_init(&s, true);
	ev_api(&s, false);
	sim_run(&s, 0);
	CU_ASSERT_TRUE(s.f.probe_for_hold);
	ev_api(&s, true);
	sim_run(&s, 2 * FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	CU_ASSERT_EQUAL(s.claims, 0);
	CU_ASSERT_TRUE(s.hold_on);
	CU_ASSERT_EQUAL(s.act.hold.jitter_usec, FAILOVER_HOLD_JITTER_USEC);
	/* the Lease won during a probe for hold: probing again, for the Lease */
	sim_init(&s, true);
	ev_api(&s, false);
	sim_run(&s, FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_EQUAL(s.sent, 2);
	ev_won(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_PROBING);
	CU_ASSERT_FALSE(s.f.probe_for_hold);
	CU_ASSERT_EQUAL(s.f.probes_sent, 0);
	sim_run(&s, 3 * FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_EQUAL(s.sent, 4);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_ACTIVE);
	/* another replica's Lease seen during a probe for hold: it ends */
	sim_init(&s, true);
	ev_api(&s, false);
	sim_run(&s, 0);
	ev_other(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	CU_ASSERT_EQUAL(s.act.probe.op, FAILOVER_TIMER_CANCEL);
	CU_ASSERT_FALSE(s.act.stand_down);
	sim_run(&s, FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_EQUAL(s.claims, 0);
	/* the verdict of a Lease probe after a verdict timer without the Lease: see test_lost */
}

/* A warm start: the snapshot served, the API server not answered yet: probe for hold at once. */
static void
test_warm_start(void)
{
	struct sim s;

	sim_init(&s, true);
	s.snapshot = true;
	ev_open(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_PROBING);
	CU_ASSERT_TRUE(s.f.probe_for_hold);
	sim_run(&s, 2 * FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_HOLD);
	/* the Lease won: ACTIVE without a new probe */
	ev_won(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_ACTIVE);
	CU_ASSERT_EQUAL(s.sent, FAILOVER_PROBE_NUM);
	/* the API server answered already: the Lease decides, no probe */
	sim_init(&s, true);
	s.snapshot = true;
	ev_api(&s, true);
	ev_open(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	CU_ASSERT_TRUE(s.hold_on);
	/* a Lease attempt already failed (no snapshot): probe for hold */
	sim_init(&s, true);
	s.can_probe = false;
	ev_api(&s, false);
	sim_run(&s, 0); /* the look: sockets not open, watching */
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	s.can_probe = true;
	ev_open(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_PROBING);
	CU_ASSERT_TRUE(s.f.probe_for_hold);
}

/* ACTIVE: another MAC claiming the address is answered with a gratuitous ARP, at most 1/s. */
static void
test_defend(void)
{
	struct sim s;

	sim_init(&s, true);
	ev_won(&s);
	sim_run(&s, SEC);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_ACTIVE);
	ev_arp(&s, FAILOVER_ARP_CLAIM, mac_x);
	CU_ASSERT_TRUE(s.act.announce);
	CU_ASSERT_EQUAL(s.act.note, FAILOVER_NOTE_DEFEND);
	CU_ASSERT_FALSE(s.act.stand_down);
	CU_ASSERT_EQUAL(s.f.conflicts, 1);
	s.now += FAILOVER_DEFEND_INTERVAL_USEC - 1;
	ev_arp(&s, FAILOVER_ARP_CLAIM, mac_x);
	CU_ASSERT_FALSE(s.act.announce);
	CU_ASSERT_EQUAL(s.f.conflicts, 2);
	s.now += 1;
	ev_arp(&s, FAILOVER_ARP_CLAIM, mac_x);
	CU_ASSERT_TRUE(s.act.announce);
	CU_ASSERT_EQUAL(s.announces, 2);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_ACTIVE);
	/* probes for it: our kernel answers them; not a conflict */
	ev_arp(&s, FAILOVER_ARP_PROBE, mac_y);
	CU_ASSERT_FALSE(s.act.announce);
	CU_ASSERT_EQUAL(s.f.conflicts, 3);
	/* a standby hears claims of the holder: nothing */
	sim_init(&s, true);
	ev_arp(&s, FAILOVER_ARP_CLAIM, mac_x);
	CU_ASSERT_FALSE(s.act.announce);
	CU_ASSERT_EQUAL(s.f.conflicts, 0);
}

/* Stop: stand down and release the Lease; nothing is taken from then on. */
static void
test_stop(void)
{
	struct sim s;

	sim_init(&s, true);
	ev_won(&s);
	sim_run(&s, SEC);
	CU_ASSERT_EQUAL(failover_fsm_stop(&s.f, true, &s.act), 0);
	sim_apply(&s);
	CU_ASSERT_TRUE(s.act.stand_down);
	CU_ASSERT_TRUE(s.act.was_active);
	CU_ASSERT_EQUAL(s.act.why, FAILOVER_WHY_STOPPING);
	CU_ASSERT_TRUE(s.act.release);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	CU_ASSERT_EQUAL(failover_fsm_stop(&s.f, true, &s.act), -EALREADY);
	CU_ASSERT_FALSE(s.act.release);
	/* the release loses the Lease: nothing more to do */
	ev_lost(&s);
	CU_ASSERT_FALSE(s.act.stand_down);
	/* nothing is taken while stopping */
	ev_won(&s);
	CU_ASSERT_EQUAL(s.f.state, FAILOVER_STANDBY);
	CU_ASSERT_FALSE(s.probe_on);
	ev_lost(&s);
	ev_api(&s, false);
	CU_ASSERT_FALSE(s.hold_on);
	ev_open(&s);
	CU_ASSERT_FALSE(s.probe_on);
	CU_ASSERT_FALSE(s.hold_on);
	CU_ASSERT_EQUAL(s.releases, 1);
	/* the Lease lost while stopping and still answering (without the API server): down */
	sim_init(&s, true);
	ev_won(&s);
	sim_run(&s, SEC);
	ev_api(&s, false);
	s.f.stopping = true; /* as failover_fsm_stop sets it, before its stand down */
	ev_lost(&s);
	CU_ASSERT_TRUE(s.act.stand_down);
	CU_ASSERT_EQUAL(s.act.why, FAILOVER_WHY_STOPPING);
	/* without --leader-elect: nothing to release, nothing to stand down */
	sim_init(&s, false);
	CU_ASSERT_EQUAL(failover_fsm_stop(&s.f, false, &s.act), 0);
	CU_ASSERT_FALSE(s.act.release);
	CU_ASSERT_FALSE(s.act.stand_down);
	CU_ASSERT_TRUE(s.f.stopping);
	/* freed while answering: stand down */
	sim_init(&s, true);
	ev_won(&s);
	sim_run(&s, SEC);
	failover_fsm_stand_down(&s.f, FAILOVER_WHY_STOPPING, &s.act);
	sim_apply(&s);
	CU_ASSERT_TRUE(s.act.stand_down);
	CU_ASSERT_TRUE(s.act.was_active);
	CU_ASSERT_FALSE(s.f.active);
}

/*
 * One failover on the fake clock, two replicas of one pool: A active, B standby; A's node
 * vanishes; B wins the Lease once A's expired, probes, finds the address free (A's lifetime
 * ran out) and answers: never both answering.
 */
static void
test_two_replicas(void)
{
	struct sim a, b;

	sim_init(&a, true);
	sim_init(&b, true);
	ev_api(&a, true);
	ev_api(&b, true);
	ev_won(&a);
	ev_other(&b);
	sim_run(&a, SEC);
	sim_run(&b, SEC);
	CU_ASSERT_TRUE(a.f.active);
	CU_ASSERT_FALSE(b.f.active);
	/* A vanishes; B wins, A's address still there: fenced by A's MAC */
	ev_won(&b);
	sim_run(&b, 0);
	ev_arp(&b, FAILOVER_ARP_CLAIM, mac_x);
	sim_run(&b, 2 * FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_FALSE(b.f.active);
	CU_ASSERT_EQUAL(b.act.note, FAILOVER_NOTE_FENCED);
	/* a retry period later the address is gone: B answers */
	sim_run(&b, RETRY + 3 * FAILOVER_PROBE_INTERVAL_USEC);
	CU_ASSERT_TRUE(b.f.active);
	CU_ASSERT_EQUAL(b.f.state, FAILOVER_ACTIVE);
	CU_ASSERT_EQUAL(b.f.transitions, 1);
	CU_ASSERT_EQUAL(b.f.probes, 2 * FAILOVER_PROBE_NUM - 1);
}

static const struct test_case failover_tests[] = {
    {"init: standby with --leader-elect, answering without", test_init},
    {"Lease won, probes unanswered: active", test_won_free},
    {"Lease won before the sockets open", test_won_before_sockets},
    {"Lease won, address still answered: fenced, retried", test_fenced},
    {"Lease lost: stand down", test_lost},
    {"Lease lost without the API server: hold, then back", test_lost_without_api},
    {"API server silent: hold, claimed: stand down", test_hold},
    {"API server silent past the renew deadline", test_silent_past_deadline},
    {"probe for hold overtaken by the API or the Lease", test_hold_probe_overtaken},
    {"warm start: probe for hold at once", test_warm_start},
    {"active: defend the address, 1/s", test_defend},
    {"stop: stand down, release, take nothing", test_stop},
    {"two replicas: one failover on the fake clock", test_two_replicas},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-failover", .tests = failover_tests},
    {.name = NULL},
};
