/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_SERVE_INTERNAL_H
#define VMDHCP_AGENT_SERVE_INTERNAL_H

/*
 * The running agent's own parts (agent/ only; main.c sees agent.h's agent_new and friends):
 * struct agent, the composition of the parts, each owned (written) by one file:
 *
 *   serve.c       the object: agent_new/agent_free, the pool's source (file or IPPool) and
 *                 reload, the engine's callbacks (--dynamic, DECLINE, ACK), the expiry sweep;
 *                 struct agent's own members and `offers`
 *   sockets.c     `sock` (sockets.h): the DHCP and ARP sockets on the event loop, the serverIP
 *                 on the interface, link events, the capability drop
 *   failover.c    the --leader-elect block: STANDBY/PROBING/ACTIVE/HOLD, ARP fencing, the
 *                 Lease's callbacks, the serverIP's lifetime, SIGTERM's Lease release
 *   warmstart.c   `warm` (warmstart.h): --snapshot: the table written on change, read at
 *                 start, dropped once synced
 *   metrics.c     `mx` (metrics.h): what /metrics and /readyz report
 *
 * A file calls only the files below it (agent.h's order); the inline helpers here read the
 * parts and call no file of agent/ (only the source's function pointers).
 */

#include <malloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <event2/util.h>

#include "agent/agent.h"
#include "agent/metrics.h"
#include "agent/sockets.h"
#include "agent/warmstart.h"

struct event;
struct httpd;

/* --dynamic: DISCOVERs refused at the cap of pending offers, said in the log (serve.c) */
struct agent_offers_refused {
	bool refusing;	      /* warned; until a summary period without any */
	uint64_t first, last; /* first and last refused since the last summary (0: none) */
	uint64_t summary_at;  /* when the last summary was written */
	uint64_t logged;      /* the refused count the last line covered */
};

struct agent {
	struct event_base *base;
	struct agent_opts opts;
	struct agent_source src; /* the pool: the file (local mode) or the IPPool */
	struct dhcp_server *dhcp;
	struct leasefile *lf;
	struct agent_dynamic *dyn;
	struct agent_dynamic_opts dyn_opts;
	struct agent_marks *marks;	    /* DECLINE marks held down in the engine (all modes) */
	struct agent_declog declog;	    /* the engine's decisions, logged */
	struct event *ev_expire;	    /* the sweep of both, every EXPIRE_TICK_SEC */
	uint64_t sweep_write_errors;	    /* failed lease file rewrites after a sweep */
	struct agent_offers_refused offers; /* serve.c's: on_offer, offers_summary */
	/* serve.c's counts, for /metrics */
	uint64_t reloads[2];	      /* by result: RELOAD_OK, RELOAD_ERROR */
	uint64_t declines_ignored[2]; /* by reason: IGNORED_RATE_LIMITED, IGNORED_NOT_BOUND */
	uint64_t expired;	      /* dynamic leases reclaimed */
	struct agent_link *link;
	struct agent_sockets sock; /* sockets.c's */
	int exit_status;	   /* non-zero: the loop was broken, the process must restart */
	uint32_t listen_ip;	   /* --listen's IPv4 address (host order) or 0 */

	/* Kubernetes mode (opts.kube): the client of the IPPool source (src) */
	struct kube_config *kcfg;
	struct kube_client *kc;

	/*
	 * --leader-elect: replicas of one pool hold identical tables; only the holder of the
	 * pool's Lease (active) owns the serverIP on its interface and answers. A standby keeps
	 * its sockets open (they could not be reopened once the capabilities are dropped) and
	 * drains them: the engine drops every request (dhcp_server_set_standby).
	 */
	struct kube_leader *leader;
	bool active;		  /* may answer (always, without --leader-elect) */
	uint64_t transitions;	  /* times this replica became active */
	uint32_t addr_lifetime_s; /* the serverIP's lifetime while active (0: forever) */
	struct event *ev_refresh; /* renews the address's lifetime while active */
	struct event *ev_garp;	  /* the second announcement */
	uint64_t garp_sent;
	uint32_t cleared_ip; /* a standby's serverIP removed from the interface, once per IP */
	/*
	 * Fencing on the wire (RFC 5227): a replica takes the serverIP (PROBING -> ACTIVE or HOLD)
	 * only when no other MAC answers ARP probes for it. ACTIVE holds the Lease; HOLD answers
	 * without it while the API server does not answer (its Lease could not be renewed, or it
	 * started from its snapshot with the API server down) and steps down as soon as another
	 * replica is seen holding the Lease or claiming the address.
	 */
	enum { HA_STANDBY, HA_PROBING, HA_ACTIVE, HA_HOLD } ha;
	bool lease_held;	  /* between kube_leader's on_started and on_stopped */
	bool api_answered;	  /* the last Lease attempt got the API server's answer */
	bool api_tried;		  /* a Lease attempt has ended */
	uint64_t api_answered_at; /* monotonic usec of the last answered attempt (or the start) */
	bool probe_for_hold;	  /* the probe under way is to hold without the Lease */
	bool probe_conflict;
	uint8_t conflict_mac[6];
	uint8_t fenced_mac[6]; /* the MAC last logged as still answering for the serverIP */
	unsigned probes_sent;
	int arp_fd;	 /* ARP for the serverIP (agent_arp_open), with the DHCP sockets */
	uint32_t arp_ip; /* the address its filter passes */
	struct event *ev_arp;
	struct event *ev_probe; /* the next probe, then the verdict */
	struct event *ev_hold;	/* the next try to take the serverIP (fenced, or without the API) */
	uint64_t defended_at;
	uint64_t probes, conflicts;
	bool stopping;
	void (*stop_done)(void *userdata);
	void *stop_userdata;
	struct event *ev_stop; /* the Lease release's time limit */

	struct agent_warmstart warm; /* warmstart.c's: --snapshot */

	struct agent_metrics mx; /* metrics.c's: the /metrics series */
	struct httpd *httpd;
};

/*
 * The configuration being served: the snapshot's until synced (Kubernetes mode), else the
 * source's (the file's, or the IPPool's last valid version; NULL before one).
 */
static inline const struct agent_config *
agent_cur_cfg(const struct agent *a)
{
	if (a->warm.snap != NULL)
		return a->warm.snap;
	return a->src.ops != NULL ? a->src.ops->config(a->src.src) : NULL;
}

/* Whether the pool served is to be served now: the snapshot's, else the source's, not paused. */
static inline bool
agent_pool_serving(const struct agent *a)
{
	return a->warm.snap != NULL ? !a->warm.snap->paused : a->src.ops->serving(a->src.src);
}

/* Whether cfg's serverIP is the --listen address (listen.c). */
static inline bool
agent_server_ip_is_listen(const struct agent *a, const struct agent_config *cfg)
{
	return a->listen_ip != 0 && cfg != NULL && cfg->opts.server_ip == a->listen_ip;
}

/* The static binding array is not needed once the engine has it; options and pool are. */
static inline void
agent_shrink_config(struct agent_config *c)
{
	free(c->bindings);
	c->bindings = NULL;
	c->n_bindings = 0;
	free(c->names);
	c->names = NULL;
	c->names_len = c->names_cap = 0;
	malloc_trim(0);
}

/* failover.c */
int agent_leader_setup(struct agent *a, char *err, size_t errlen);
void agent_ha_sockets_open(struct agent *a);
void agent_stand_down(struct agent *a, const char *why);
void agent_arp_readable(evutil_socket_t fd, short what, void *arg);
void agent_refresh_cb(evutil_socket_t fd, short what, void *arg);
void agent_probe_cb(evutil_socket_t fd, short what, void *arg);
void agent_hold_cb(evutil_socket_t fd, short what, void *arg);
void agent_stop_timeout_cb(evutil_socket_t fd, short what, void *arg);

#endif
