/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_GUARD_H
#define VMDHCP_AGENT_GUARD_H

/*
 * guard.c: foreign DHCP servers on the served network (docs/foreign-servers.md). A packet
 * socket beside the DHCP ones (opened with them, before the capability drop, and kept) reads
 * every DHCP server reply (UDP 67 -> 68); a probe DISCOVER from the pool's reserved MAC goes
 * out when the sockets open and every probeInterval. Replies that are not the pool's own
 * (dhcp/foreign.h) fill a small table of servers, each forgotten two probe intervals after it
 * was last seen. Reported: the log, /metrics (metrics.c reads the table), and in Kubernetes
 * mode by the replica that answers: a Warning Event on the first sighting and the IPPool's
 * status condition ForeignDHCPServer, written with read-modify-write on the status (the
 * controller keeps conditions it does not own). Under spec.foreignServers.policy StandDown the
 * engine answers nothing while the table is not empty.
 *
 * Its state is struct agent's `guard`, written by guard.c only. The table functions below
 * (agent_guard_seen, agent_guard_expire, agent_guard_stand_down_wanted) do no I/O and take the
 * time: tests/unit/test-agent-guard.c drives them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>

#include "dhcp/foreign.h"

struct agent;
struct event;
struct kube_call;
struct kube_recorder;

#define AGENT_GUARD_SERVERS_MAX 16 /* servers tracked at once; more are counted, not kept */
#define AGENT_GUARD_FRAME_MAX 2048
/* The IPPool status condition and the Event's reason. */
#define AGENT_GUARD_COND "ForeignDHCPServer"
#define AGENT_GUARD_REASON_SEEN "ForeignServerSeen"
#define AGENT_GUARD_REASON_NONE "NoForeignServer"

struct agent_guard_server {
	uint8_t mac[6];
	uint32_t ip; /* its server identifier (host order) */
	uint64_t first_usec, last_usec;
	uint64_t replies;
	bool announced; /* its Event recorded (Kubernetes mode) */
};

struct agent_guard {
	int fd; /* the guard socket; -1 while closed */
	int ifindex;
	struct event *ev_fd;
	struct event *ev_probe; /* the next probe and table sweep */
	uint32_t interval_s;	/* the probe interval in use */
	int policy;		/* IPPOOL_FOREIGN_* in use */
	uint8_t probe_mac[6];	/* the pool's, from its namespace and name */
	char probe_pool[512];	/* "ns/name" probe_mac was derived from */
	struct agent_guard_server servers[AGENT_GUARD_SERVERS_MAX];
	size_t n;
	bool stand_down; /* the engine kept quiet by the policy (serve-internal.h composes it
			    with the failover's standby) */
	/* counts, for /metrics and the log */
	uint64_t replies;     /* foreign server replies seen */
	uint64_t own_replies; /* the pool's own replies seen (not reported) */
	uint64_t probes;      /* probe DISCOVERs sent */
	uint64_t probe_errors;
	uint64_t table_full; /* sightings not kept: the table was full */
	/* Kubernetes mode: the condition and the Events */
	struct kube_recorder *rec;
	struct kube_call *cond_call; /* the status read-modify-write in flight */
	bool cond_dirty;	     /* the table changed while it was in flight */
	bool cond_synced;	     /* the condition says what the table says */
	uint64_t ticks;		     /* probes since the socket opened */
	uint8_t frame[AGENT_GUARD_FRAME_MAX];
};

/* ---- the table (no I/O) ---- */

void agent_guard_init(struct agent_guard *g);
/*
 * A foreign reply seen at now: its server's entry refreshed or added. Returns 1 for a server
 * not in the table before, 0 for a known one, -ENOSPC when the table is full (counted).
 */
int agent_guard_seen(struct agent_guard *g, const struct dhcp_foreign_reply *r, uint64_t now);
/*
 * Forgets the servers not seen for two probe intervals (less a quarter interval of slack: the
 * reply to a probe comes a moment after the tick that sent it) at now. Copies up to max of the
 * forgotten entries to gone (may be NULL); returns how many were forgotten.
 */
size_t agent_guard_expire(
    struct agent_guard *g, uint64_t now, struct agent_guard_server *gone, size_t max);
/* Whether the policy asks the engine to be quiet now: StandDown and a server in the table. */
bool agent_guard_stand_down_wanted(const struct agent_guard *g);
/* The condition's message for the table (the servers by MAC and IP), into out. */
void agent_guard_message(const struct agent_guard *g, char *out, size_t len);

/* ---- on the agent ---- */

/* The timers on a->base. 0 or -ENOMEM. */
int agent_guard_setup(struct agent *a);
/* The guard socket on ifindex (with the DHCP sockets, before the capability drop), the first
 * probe armed. 0 or negative errno (logged; the agent serves without the guard). */
int agent_guard_open(struct agent *a, int ifindex);
void agent_guard_close(struct agent *a);
/* The pool's configuration changed (policy, interval, pool name) or the failover's state:
 * re-evaluated now. */
void agent_guard_update(struct agent *a);
void agent_guard_free(struct agent *a);

#endif
