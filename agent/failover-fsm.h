/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_FAILOVER_FSM_H
#define VMDHCP_AGENT_FAILOVER_FSM_H

/*
 * --leader-elect: what a replica of a pool's agent does, as a state machine its glue
 * (failover.c) feeds with events and whose actions it performs. It reads no clock (the time
 * is passed in), does no I/O and draws no random numbers (a jittered delay is given as a base
 * and a bound).
 *
 * The states:
 *   STANDBY  drains its sockets and answers nothing;
 *   PROBING  sends ARP probes for the serverIP before taking it (RFC 5227): with the Lease, or
 *            without it (for hold) while the API server does not answer;
 *   ACTIVE   holds the Lease, has the serverIP on its interface and answers; defends the
 *            address against another MAC claiming it (a gratuitous ARP, at most one per
 *            FAILOVER_DEFEND_INTERVAL_USEC);
 *   HOLD     answers without the Lease while the API server does not answer (its Lease could
 *            not be renewed, or it started from its snapshot with the API server down), and
 *            stands down as soon as another replica is seen holding the Lease or claiming
 *            the address.
 *
 * The rules:
 *   - The Lease won (kube/leader.c's on_started): probe, then take the address if no other
 *     MAC answered the probes (ACTIVE), else stay standby fenced and look again every retry
 *     period. Won while answering without it (HOLD): ACTIVE at once.
 *   - The Lease lost: a probe for it ends; answering with the API server answering, or while
 *     stopping: stand down; answering without the API server: HOLD (no replica can take the
 *     Lease without the API server, and one that does takes the address only once nobody
 *     answers for it).
 *   - Another replica holds the Lease: HOLD stands down; a probe for hold ends.
 *   - The API server silent (its last Lease attempt failed, or none answered for the renew
 *     deadline) and no Lease: a standby probes for hold, at once after the first failed
 *     attempt, then every 1 to 1.5 s; its verdict holds only if the API server is still
 *     silent and the Lease still not ours. Answered: the look is called off.
 *   - The sockets open: a Lease held meanwhile is acted on; a warm start (the snapshot
 *     served, or a Lease attempt already failed) probes for hold at once.
 *   - Stop (SIGTERM): stand down, release the Lease (given up after
 *     FAILOVER_STOP_RELEASE_USEC); nothing is taken from then on.
 */

#include <stdbool.h>
#include <stdint.h>

/*
 * ARP probes before taking the serverIP: FAILOVER_PROBE_NUM, FAILOVER_PROBE_INTERVAL_USEC
 * apart, the verdict FAILOVER_PROBE_INTERVAL_USEC after the last. RFC 5227 waits seconds
 * (PROBE_NUM 3, 1-2 s apart) for hosts that may be slow to answer; here the holder is a Linux
 * kernel on the same L2 segment, which answers in microseconds, and every 100 ms counts in a
 * failover.
 */
#define FAILOVER_PROBE_NUM 2
#define FAILOVER_PROBE_INTERVAL_USEC (50 * UINT64_C(1000))
/* While the API server does not answer, a standby tries to take the serverIP this often,
 * plus a random part under FAILOVER_HOLD_JITTER_USEC. */
#define FAILOVER_HOLD_RETRY_USEC UINT64_C(1000000)
#define FAILOVER_HOLD_JITTER_USEC 500000u
/* A claim of our serverIP by another MAC is answered with a gratuitous ARP at most this often. */
#define FAILOVER_DEFEND_INTERVAL_USEC UINT64_C(1000000)
/* On stop the Lease is released (the standby takes over at once) within this, else given up. */
#define FAILOVER_STOP_RELEASE_USEC UINT64_C(2000000)

/* In this order: the labels of vmdhcp_agent_ha_state (metrics.c). */
enum failover_state { FAILOVER_STANDBY, FAILOVER_PROBING, FAILOVER_ACTIVE, FAILOVER_HOLD };

/* What an ARP frame about the serverIP from another MAC says (arp.h's agent_arp_kind). */
enum failover_arp { FAILOVER_ARP_CLAIM, FAILOVER_ARP_PROBE };

/* Why a replica stands down (the glue words it; CLAIMED and LEASE_OTHER name who). */
enum failover_why {
	FAILOVER_WHY_NONE,
	FAILOVER_WHY_STOPPING,	  /* "stopping" */
	FAILOVER_WHY_LEASE_LOST,  /* "no longer holds the Lease" */
	FAILOVER_WHY_LEASE_OTHER, /* "the Lease is held by ID" */
	FAILOVER_WHY_CLAIMED,	  /* "IP claimed by MAC while held without the Lease" */
};

/* A line for the log, beside the actions. */
enum failover_note {
	FAILOVER_NOTE_NONE,
	FAILOVER_NOTE_HOLDS_AGAIN,   /* HOLD -> ACTIVE: the Lease won back */
	FAILOVER_NOTE_HOLD_NO_API,   /* the Lease lost without the API server: answering on */
	FAILOVER_NOTE_FENCED,	     /* with the Lease, the probes answered by a new MAC */
	FAILOVER_NOTE_STAYS_STANDBY, /* without the Lease, the probes answered: standby */
	FAILOVER_NOTE_DEFEND,	     /* ACTIVE, the address claimed: a gratuitous ARP */
};

enum failover_timer_op { FAILOVER_TIMER_KEEP, FAILOVER_TIMER_CANCEL, FAILOVER_TIMER_ARM };

struct failover_timer {
	enum failover_timer_op op;
	uint64_t usec;	      /* ARM: after this ... */
	uint32_t jitter_usec; /* ... plus a random part under this (0: none) */
};

/*
 * What an event asks of the glue, done in this order: the note logged, the timers set,
 * claim or stand down, a probe sent, a gratuitous ARP sent, the Lease released.
 */
struct failover_actions {
	enum failover_note note;
	struct failover_timer probe; /* the next probe, then the verdict */
	struct failover_timer hold;  /* the next try to take the serverIP (fenced, or no API) */
	/* take the serverIP and answer (the state says ACTIVE or HOLD) */
	bool claim;
	/* stop answering and give the serverIP up; was_active: it was answering */
	bool stand_down, was_active;
	enum failover_why why;
	bool send_probe; /* an ARP probe for the serverIP */
	bool announce;	 /* a gratuitous ARP for the serverIP */
	bool release;	 /* release the Lease (stop), given up after FAILOVER_STOP_RELEASE_USEC */
};

struct failover_fsm {
	enum failover_state state;
	bool active;		  /* may answer (always, without --leader-elect) */
	bool stopping;		  /* stop asked: nothing taken from then on */
	bool lease_held;	  /* between kube_leader's on_started and on_stopped */
	bool api_answered;	  /* the last Lease attempt got the API server's answer */
	bool api_tried;		  /* a Lease attempt has ended */
	uint64_t api_answered_at; /* time of the last answered attempt (or the start) */
	bool probe_for_hold;	  /* the probe under way is to hold without the Lease */
	bool probe_conflict;	  /* another MAC answered (or probed) during it */
	uint8_t conflict_mac[6];
	uint8_t fenced_mac[6]; /* the MAC last logged as still answering for the serverIP */
	unsigned probes_sent;  /* by the probe under way */
	bool probe_armed;      /* the probe timer, as last set (cleared when it fires) */
	bool hold_armed;       /* the hold timer, likewise */
	uint64_t defended_at;
	uint64_t renew_deadline_usec, retry_period_usec;
	/* for the metrics */
	uint64_t probes, conflicts; /* ARP probes sent; probes answered and claims seen */
	uint64_t transitions;	    /* times this replica began answering */
};

/*
 * Sets up *f at time now (the API server counts as answered then: silent from the renew
 * deadline on): STANDBY, answering only without leader_elect.
 */
void failover_fsm_init(struct failover_fsm *f, bool leader_elect, uint64_t now,
    uint64_t renew_deadline_usec, uint64_t retry_period_usec);

/*
 * The events. can_probe: the sockets and the ARP socket are open and a pool is served (a
 * probe can go out); each fills *act (cleared first).
 */
/* kube/leader.c's on_started: this replica holds the Lease. */
void failover_fsm_lease_won(struct failover_fsm *f, bool can_probe, struct failover_actions *act);
/* on_stopped: it no longer does. */
void failover_fsm_lease_lost(struct failover_fsm *f, struct failover_actions *act);
/* on_new_leader, with another replica's name. */
void failover_fsm_lease_other(struct failover_fsm *f, struct failover_actions *act);
/* on_result: a Lease attempt ended at now, with or without the API server's answer. */
void failover_fsm_api_result(
    struct failover_fsm *f, uint64_t now, bool answered, struct failover_actions *act);
/* The probe timer fired; can_send: the ARP socket is open and a pool is served. */
void failover_fsm_probe_timer(
    struct failover_fsm *f, bool can_send, bool can_probe, struct failover_actions *act);
/* The hold timer fired at now. */
void failover_fsm_hold_timer(
    struct failover_fsm *f, uint64_t now, bool can_probe, struct failover_actions *act);
/* The sockets were (re)opened; snapshot: the warm-start snapshot is served. */
void failover_fsm_sockets_open(
    struct failover_fsm *f, bool can_probe, bool snapshot, struct failover_actions *act);
/* An ARP frame at now from mac, another MAC, about the serverIP. */
void failover_fsm_arp(struct failover_fsm *f, uint64_t now, enum failover_arp kind,
    const uint8_t mac[6], struct failover_actions *act);
/* Stand down now (the agent freed while answering). */
void failover_fsm_stand_down(
    struct failover_fsm *f, enum failover_why why, struct failover_actions *act);
/*
 * Stop asked (SIGTERM); elected: with --leader-elect. -EALREADY when asked before, else 0
 * (stand down and release with elected; nothing to wait for without).
 */
int failover_fsm_stop(struct failover_fsm *f, bool elected, struct failover_actions *act);

#endif
