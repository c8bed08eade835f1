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
 *   serve6.c      `dhcp6`: the DHCPv6 engine, its callbacks, the pool's IPv6 part pushed in
 *   sockets6.c    `sock6` (sockets6.h): the DHCPv6 sockets, the IPv6 serverIP, the RA timer,
 *                 the unsolicited NA
 *   failover.c    `fo` (failover.h): --leader-elect: the Lease's callbacks, ARP reads and timers
 *                 fed to failover-fsm.c (STANDBY/PROBING/ACTIVE/HOLD, pure), its actions done
 *                 through sockets.c's hooks; the serverIP's lifetime, SIGTERM's Lease release
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
#include "agent/dynamic.h"
#include "agent/metrics.h"
#include "agent/sockets.h"
#include "agent/sockets6.h"
#include "agent/warmstart.h"
#include "agent/failover.h"
#include "agent/guard.h"

struct event;
struct httpd;

/*
 * Coalescing windows (dhcp/moderate.h: DHCPv4 above 20 000 requests/s, DHCPv6 above 10 000)
 * served in one wakeup of the loop before it gets its turn again: at most 16 x 800 us. The
 * engines ask for them; sockets.c and sockets6.c wait them out with nanosleep.
 */
#define AGENT_WINDOWS_PER_WAKEUP 16

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
	struct agent_sockets sock;   /* sockets.c's */
	struct dhcp6_server *dhcp6;  /* the DHCPv6 engine (serve6.c's): the pool's ipv6Config */
	struct agent_sockets6 sock6; /* sockets6.c's */
	int exit_status;	     /* non-zero: the loop was broken, the process must restart */
	uint32_t listen_ip;	     /* --listen's IPv4 address (host order) or 0 */

	/* Kubernetes mode (opts.kube): the client of the IPPool source (src) */
	struct kube_config *kcfg;
	struct kube_client *kc;

	/*
	 * --leader-elect: replicas of one pool hold identical tables; only the holder of the
	 * pool's Lease (active) owns the serverIP on its interface and answers. A standby keeps
	 * its sockets open (they could not be reopened once the capabilities are dropped) and
	 * drains them: the engine drops every request (dhcp_server_set_standby). The Lease, the
	 * decisions (fo.fsm: fo.fsm.active, fo.fsm.state) and their timers: failover.h.
	 */
	struct agent_failover fo;
	/* the announcements and the ARP socket sockets.c keeps for failover.c (arp.h) */
	struct event *ev_garp; /* the second announcement */
	uint64_t garp_sent;
	uint32_t cleared_ip; /* a standby's serverIP removed from the interface, once per IP */
	int arp_fd;	     /* ARP for the serverIP (agent_arp_open), with the DHCP sockets */
	uint32_t arp_ip;     /* the address its filter passes */
	struct event *ev_arp;

	struct agent_warmstart warm; /* warmstart.c's: --snapshot */

	/* guard.c's: foreign DHCP servers on the network (spec.foreignServers) */
	struct agent_guard guard;

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

/*
 * Whether the DHCPv4 engine must answer nothing: a standby replica (--leader-elect), or a
 * foreign DHCP server seen under foreignServers.policy StandDown (guard.c). Every call of
 * dhcp_server_set_standby passes this.
 */
static inline bool
agent_dhcp_quiet(const struct agent *a)
{
	return !a->fo.fsm.active || a->guard.stand_down;
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
	free(c->v6.bindings);
	c->v6.bindings = NULL;
	c->v6.n_bindings = 0;
	free(c->names);
	c->names = NULL;
	c->names_len = c->names_cap = 0;
	malloc_trim(0);
}

#endif
