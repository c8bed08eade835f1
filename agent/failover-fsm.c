/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --leader-elect's decisions (failover-fsm.h has the states and the rules). Pure: no clock,
 * no I/O; failover.c feeds it and does what it asks.
 */
#include <errno.h>
#include <string.h>

#include "agent/failover-fsm.h"

void
failover_fsm_init(struct failover_fsm *f, bool leader_elect, uint64_t now,
    uint64_t renew_deadline_usec, uint64_t retry_period_usec)
{
	memset(f, 0, sizeof(*f));
	f->state = FAILOVER_STANDBY;
	f->active = !leader_elect;
	f->api_answered_at = now;
	f->renew_deadline_usec = renew_deadline_usec;
	f->retry_period_usec = retry_period_usec;
}

static void
begin(struct failover_actions *act)
{
	memset(act, 0, sizeof(*act));
}

static void
arm_probe(struct failover_fsm *f, struct failover_actions *act, uint64_t usec)
{
	act->probe = (struct failover_timer){.op = FAILOVER_TIMER_ARM, .usec = usec};
	f->probe_armed = true;
}

static void
cancel_probe(struct failover_fsm *f, struct failover_actions *act)
{
	act->probe = (struct failover_timer){.op = FAILOVER_TIMER_CANCEL};
	f->probe_armed = false;
}

static void
cancel_hold(struct failover_fsm *f, struct failover_actions *act)
{
	act->hold = (struct failover_timer){.op = FAILOVER_TIMER_CANCEL};
	f->hold_armed = false;
}

/* The next try to take the serverIP after usec (plus up to jitter); none once stopping. */
static void
schedule_hold(struct failover_fsm *f, struct failover_actions *act, uint64_t usec, uint32_t jitter)
{
	if (f->stopping)
		return;
	act->hold =
	    (struct failover_timer){.op = FAILOVER_TIMER_ARM, .usec = usec, .jitter_usec = jitter};
	f->hold_armed = true;
}

/* The next look at the serverIP while the API server may be silent: 1 to 1.5 s from now. */
static void
schedule_hold_retry(struct failover_fsm *f, struct failover_actions *act)
{
	schedule_hold(f, act, FAILOVER_HOLD_RETRY_USEC, FAILOVER_HOLD_JITTER_USEC);
}

/* A standby without the Lease keeps looking (the hold timer), unless a look is already due. */
static void
keep_watching(struct failover_fsm *f, struct failover_actions *act)
{
	if (f->state == FAILOVER_STANDBY && !f->lease_held && !f->hold_armed)
		schedule_hold_retry(f, act);
}

/* Probes for the serverIP before taking it (for_hold: without the Lease). */
static void
probe_start(struct failover_fsm *f, struct failover_actions *act, bool can_probe, bool for_hold)
{
	if (f->stopping || !can_probe || f->active)
		return;
	f->state = FAILOVER_PROBING;
	f->probe_for_hold = for_hold;
	f->probe_conflict = false;
	f->probes_sent = 0;
	cancel_hold(f, act);
	arm_probe(f, act, 0);
}

/* Takes the serverIP and answers: ACTIVE with the Lease, HOLD without it. */
static void
claim(struct failover_fsm *f, struct failover_actions *act)
{
	if (!f->active)
		f->transitions++;
	f->state = f->lease_held ? FAILOVER_ACTIVE : FAILOVER_HOLD;
	f->active = true;
	memset(f->fenced_mac, 0, sizeof(f->fenced_mac));
	act->claim = true;
}

/* Stops answering, then gives the serverIP up. */
static void
stand_down(struct failover_fsm *f, struct failover_actions *act, enum failover_why why)
{
	cancel_probe(f, act);
	act->stand_down = true;
	act->was_active = f->active;
	act->why = why;
	f->state = FAILOVER_STANDBY;
	f->active = false;
}

void
failover_fsm_lease_won(struct failover_fsm *f, bool can_probe, struct failover_actions *act)
{
	begin(act);
	f->lease_held = true;
	if (f->stopping)
		return;
	if (f->active) {
		if (f->state == FAILOVER_HOLD)
			act->note = FAILOVER_NOTE_HOLDS_AGAIN;
		f->state = FAILOVER_ACTIVE;
		return;
	}
	probe_start(f, act, can_probe, false); /* or, sockets not open yet, once they are */
}

void
failover_fsm_lease_lost(struct failover_fsm *f, struct failover_actions *act)
{
	begin(act);
	f->lease_held = false;
	if (f->state == FAILOVER_PROBING && !f->probe_for_hold) {
		cancel_probe(f, act);
		f->state = FAILOVER_STANDBY;
	}
	cancel_hold(f, act);
	if (!f->active)
		return;
	if (!f->api_answered && !f->stopping) {
		f->state = FAILOVER_HOLD;
		act->note = FAILOVER_NOTE_HOLD_NO_API;
		return;
	}
	stand_down(f, act, f->stopping ? FAILOVER_WHY_STOPPING : FAILOVER_WHY_LEASE_LOST);
}

void
failover_fsm_lease_other(struct failover_fsm *f, struct failover_actions *act)
{
	begin(act);
	if (f->state == FAILOVER_HOLD) {
		stand_down(f, act, FAILOVER_WHY_LEASE_OTHER);
	} else if (f->state == FAILOVER_PROBING && f->probe_for_hold) {
		cancel_probe(f, act);
		f->state = FAILOVER_STANDBY;
	}
}

void
failover_fsm_api_result(
    struct failover_fsm *f, uint64_t now, bool answered, struct failover_actions *act)
{
	bool first = !f->api_tried;

	begin(act);
	f->api_tried = true;
	f->api_answered = answered;
	if (answered) {
		f->api_answered_at = now;
		if (!f->lease_held)
			cancel_hold(f, act);
		return;
	}
	/* no API server: a standby with a table takes the serverIP if nobody answers for it */
	if (!f->active && f->state == FAILOVER_STANDBY && !f->lease_held && !f->hold_armed) {
		if (first)
			schedule_hold(f, act, 0, 0);
		else
			schedule_hold_retry(f, act);
	}
}

/* The probes are over and were answered: not ours. */
static void
probe_fenced(struct failover_fsm *f, struct failover_actions *act)
{
	f->state = FAILOVER_STANDBY;
	if (f->probe_for_hold) {
		act->note = FAILOVER_NOTE_STAYS_STANDBY;
		schedule_hold_retry(f, act);
		return;
	}
	/* the Lease is ours but a previous active replica still answers: look again */
	if (memcmp(f->fenced_mac, f->conflict_mac, sizeof(f->fenced_mac)) != 0)
		act->note = FAILOVER_NOTE_FENCED;
	memcpy(f->fenced_mac, f->conflict_mac, sizeof(f->fenced_mac));
	schedule_hold(f, act, f->retry_period_usec, 0);
}

void
failover_fsm_probe_timer(
    struct failover_fsm *f, bool can_send, bool can_probe, struct failover_actions *act)
{
	begin(act);
	f->probe_armed = false;
	if (f->state != FAILOVER_PROBING || !can_send)
		return;
	if (f->probes_sent < FAILOVER_PROBE_NUM && !f->probe_conflict) {
		act->send_probe = true;
		f->probes_sent++;
		f->probes++;
		arm_probe(f, act, FAILOVER_PROBE_INTERVAL_USEC);
		return;
	}
	if (f->probe_conflict) {
		probe_fenced(f, act);
		return;
	}
	if ((f->probe_for_hold && (f->lease_held || f->api_answered)) ||
	    (!f->probe_for_hold && !f->lease_held)) {
		/* the API server answered meanwhile (the Lease decides), or the Lease was lost */
		f->state = FAILOVER_STANDBY;
		if (f->lease_held)
			probe_start(f, act, can_probe, false);
		else /* keep watching for the API server falling silent */
			schedule_hold_retry(f, act);
		return;
	}
	claim(f, act);
}

/*
 * Whether the API server is silent for the Lease: its last attempt failed without an answer,
 * or none was answered for the renew deadline (a request that hangs fails only at the
 * client's connect or request timeout, seconds later).
 */
static bool
api_silent(const struct failover_fsm *f, uint64_t now)
{
	return (f->api_tried && !f->api_answered) ||
	       now - f->api_answered_at >= f->renew_deadline_usec;
}

void
failover_fsm_hold_timer(
    struct failover_fsm *f, uint64_t now, bool can_probe, struct failover_actions *act)
{
	begin(act);
	f->hold_armed = false;
	if (f->active || f->state == FAILOVER_PROBING || f->stopping)
		return;
	if (f->lease_held)
		probe_start(f, act, can_probe, false); /* fenced: is the address free now? */
	else if (api_silent(f, now))
		probe_start(f, act, can_probe, true);
	/* the probe's verdict schedules the next look; here when no probe could start */
	keep_watching(f, act);
}

void
failover_fsm_sockets_open(
    struct failover_fsm *f, bool can_probe, bool snapshot, struct failover_actions *act)
{
	begin(act);
	if (f->active || f->state == FAILOVER_PROBING)
		return;
	if (f->lease_held)
		probe_start(f, act, can_probe, false);
	else if (!f->api_answered && (snapshot || f->api_tried))
		/*
		 * a warm start: serving the snapshot at once, without waiting for the API server
		 * (which may take its connect timeout to fail), if nobody answers for the serverIP;
		 * the Lease decides once the API server answers
		 */
		probe_start(f, act, can_probe, true);
	keep_watching(f, act);
}

void
failover_fsm_arp(struct failover_fsm *f, uint64_t now, enum failover_arp kind, const uint8_t mac[6],
    struct failover_actions *act)
{
	begin(act);
	if (f->state == FAILOVER_PROBING) {
		/* answered (CLAIM), or another probing for it at once (PROBE): not ours */
		if (!f->probe_conflict)
			f->conflicts++;
		f->probe_conflict = true;
		memcpy(f->conflict_mac, mac, sizeof(f->conflict_mac));
		return;
	}
	if (kind != FAILOVER_ARP_CLAIM || !f->active)
		return; /* our kernel answers probes for an address we hold */
	f->conflicts++;
	if (f->state == FAILOVER_HOLD) {
		stand_down(f, act, FAILOVER_WHY_CLAIMED);
		schedule_hold_retry(f, act);
		return;
	}
	if (now - f->defended_at >= FAILOVER_DEFEND_INTERVAL_USEC) {
		/* ACTIVE with the Lease: defend the address (RFC 5227 §2.4 (b)) */
		f->defended_at = now;
		act->note = FAILOVER_NOTE_DEFEND;
		act->announce = true;
	}
}

void
failover_fsm_stand_down(struct failover_fsm *f, enum failover_why why, struct failover_actions *act)
{
	begin(act);
	stand_down(f, act, why);
}

int
failover_fsm_stop(struct failover_fsm *f, bool elected, struct failover_actions *act)
{
	begin(act);
	if (f->stopping)
		return -EALREADY;
	f->stopping = true;
	if (!elected)
		return 0;
	stand_down(f, act, FAILOVER_WHY_STOPPING);
	act->release = true;
	return 0;
}
