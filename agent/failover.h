/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_FAILOVER_H
#define VMDHCP_AGENT_FAILOVER_H

/*
 * --leader-elect (failover.c): the pool's Lease (kube/leader.c), the ARP socket's reads and
 * the timers, turned into events of the state machine (failover-fsm.h), whose actions it
 * does. Its part of struct agent is struct agent_failover; what it needs of the sockets and
 * the serverIP it asks through hooks set by the file that owns them (sockets.c), so that
 * it calls nothing above it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>

#include "agent/failover-fsm.h"

struct agent_opts;
struct event;
struct event_base;
struct kube_client;
struct kube_leader;

/* The wire as it is now (agent_failover_hooks.wire). */
struct agent_failover_wire {
	bool open;	    /* the DHCP sockets are open */
	int arp_fd;	    /* the ARP socket (arp.h), -1 while closed */
	int ifindex;	    /* the interface the sockets are bound to ... */
	uint8_t hwaddr[6];  /* ... and its MAC */
	bool pool;	    /* a pool is served: its serverIP below */
	uint32_t server_ip; /* host order */
	bool snapshot;	    /* the table served is the warm-start snapshot (stale) */
};

struct agent_failover_hooks {
	void (*wire)(void *userdata, struct agent_failover_wire *w);
	/* Answer: the engine out of standby, the sockets and the serverIP as they should be. */
	void (*take)(void *userdata);
	/* Stop answering: the engine in standby, the serverIP removed (why: for the log). */
	void (*drop)(void *userdata, const char *why);
	/* Add the serverIP again with this lifetime (renews it), if it is on the interface. */
	void (*renew)(void *userdata, uint32_t lifetime_s);
	/* A gratuitous ARP for the serverIP. */
	void (*announce)(void *userdata);
};

struct agent_failover {
	struct failover_fsm fsm;    /* the decisions; fsm.active: may answer */
	struct kube_leader *leader; /* NULL without --leader-elect */
	const struct agent_opts *opts;
	const struct agent_failover_hooks *hooks;
	void *userdata;		  /* the hooks' */
	uint32_t addr_lifetime_s; /* the serverIP's lifetime while active (0: forever) */
	struct event *ev_refresh; /* renews the address's lifetime while active */
	struct event *ev_probe;	  /* the next probe, then the verdict */
	struct event *ev_hold;	  /* the next try to take the serverIP (fenced, or no API) */
	struct event *ev_stop;	  /* the Lease release's time limit */
	void (*stop_done)(void *userdata);
	void *stop_userdata;
};

/* Sets up *f (answering at once without opts->leader_elect) at time now. 0 or -ENOMEM. */
int agent_failover_init(
    struct agent_failover *f, struct event_base *base, const struct agent_opts *opts, uint64_t now);
/*
 * --leader-elect: the Lease on kc, the hooks (called with userdata). err filled on failure.
 * Started by kube_leader_start(f->leader).
 */
int agent_failover_setup(struct agent_failover *f, struct kube_client *kc,
    const struct agent_failover_hooks *hooks, void *userdata, char *err, size_t errlen);
/* Stands down if answering (not answering, the serverIP gone), then frees the Lease's client
 * and the timers. */
void agent_failover_free(struct agent_failover *f);
/* The DHCP sockets (and the ARP socket) are open: a Lease held meanwhile is acted on. */
void agent_failover_sockets_open(struct agent_failover *f);
/* The ARP socket is readable (arg: the struct agent_failover). */
void agent_failover_arp_readable(evutil_socket_t fd, short what, void *arg);
/* agent_stop (agent.h) of the failover part. */
int agent_failover_stop(struct agent_failover *f, void (*done)(void *userdata), void *userdata);

#endif
