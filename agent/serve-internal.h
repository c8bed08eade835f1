/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_SERVE_INTERNAL_H
#define VMDHCP_AGENT_SERVE_INTERNAL_H

/*
 * The running agent's own parts (agent/ only; main.c sees agent.h's agent_new and friends):
 * struct agent, and the functions its files share. One object, one event loop, split by role:
 *
 *   serve.c       the object: agent_new/agent_free, the pool's source (file or IPPool) and
 *                 reload, the engine's callbacks (--dynamic, DECLINE, ACK), the expiry sweep
 *   sockets.c     the DHCP and ARP sockets on the event loop, the serverIP on the interface,
 *                 link events, the capability drop
 *   failover.c    --leader-elect (its part: struct agent_failover, failover.h): the Lease's
 *                 callbacks, ARP reads and timers fed to failover-fsm.c, its actions done
 *                 through sockets.c's hooks; the serverIP's lifetime, SIGTERM's Lease release
 *   warmstart.c   --snapshot: the table written on change, read at start, dropped once synced
 *   metrics.c     what /metrics and /readyz report
 *   decisions.c   the DHCP decision log (agent.h; it needs nothing of struct agent)
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>

#include "agent/agent.h"
#include "agent/failover.h"

struct event;
struct httpd;
struct metric;
struct metrics;

struct agent {
	struct event_base *base;
	struct agent_opts opts;
	struct agent_source src; /* the pool: the file (local mode) or the IPPool */
	struct dhcp_server *dhcp;
	struct leasefile *lf;
	struct agent_dynamic *dyn;
	struct agent_dynamic_opts dyn_opts;
	struct agent_marks *marks;   /* DECLINE marks held down in the engine (all modes) */
	struct agent_declog declog;  /* the engine's decisions, logged */
	struct event *ev_expire;     /* the sweep of both, every EXPIRE_TICK_SEC */
	uint64_t sweep_write_errors; /* failed lease file rewrites after a sweep */
	/* --dynamic: DISCOVERs refused at the cap of pending offers, said in the log (on_offer) */
	bool offers_refusing;	       /* warned; until a summary period without any */
	uint64_t offers_first_refused; /* first and last refused since the last summary (0: none) */
	uint64_t offers_last_refused;
	uint64_t offers_summary_at;	/* when the last summary was written */
	uint64_t offers_refused_logged; /* the refused count the last line covered */
	struct agent_link *link;
	struct event *ev_fd; /* dhcp_server_fd readable; NULL while closed */
	struct event *ev_retry;
	unsigned retry_sec; /* next retry delay; 0 after a success */
	bool open;
	int open_ifindex;
	uint8_t open_hwaddr[6];

	bool started;	     /* agent_new() done: the capabilities may go */
	bool caps_dropped;   /* see the top of sockets.c */
	int dropped_ifindex; /* the ifindex the sockets were bound to at the drop */
	bool kept_down;	     /* the sockets are kept while the interface is down (logged) */
	uint32_t addr_ip;    /* the server address last added (--assign-server-ip) */
	unsigned addr_prefix;
	int exit_status;	    /* non-zero: the loop was broken, the process must restart */
	uint32_t listen_ip;	    /* --listen's IPv4 address (host order) or 0 */
	uint32_t refused_server_ip; /* a serverIP equal to listen_ip, already logged */

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

	/*
	 * --snapshot: the table written on change (rate-limited), read at start and served,
	 * stale, until the first sync with the API server replaces it.
	 */
	struct agent_config *snap; /* the snapshot's config while it is served (stale) */
	struct agent_snapshot_info snap_info;
	char snap_written[32]; /* snap_info.written_usec as UTC RFC 3339 */
	struct event *ev_snap; /* a write pending */
	uint64_t snap_last;    /* monotonic usec of the last write attempt */
	uint64_t snap_writes, snap_write_errors, snap_write_usec;
	size_t snap_bytes;

	struct metrics *metrics;
	struct httpd *httpd;
	struct metric *m_kube_synced, *m_kube_last_sync, *m_kube_reconnects, *m_kube_errors,
	    *m_kube_relists, *m_kube_malformed, *m_kube_duplicate_macs;
	struct metric *m_rx, *m_tx, *m_drops, *m_declines, *m_latency, *m_bindings, *m_dynamic,
	    *m_available, *m_reloads, *m_serving, *m_link_events, *m_lease_errors, *m_expired,
	    *m_held, *m_declines_ignored;
	struct metric *m_offers_pending, *m_offers_expired, *m_offers_refused, *m_offers_evicted;
	/* the DHCP socket's receive passes (dhcp/moderate.h) and its kernel counters */
	struct metric *m_rx_passes, *m_rx_yields, *m_kernel_received, *m_kernel_drops, *m_rx_wait;
	struct metric *m_ha_state, *m_arp_probes, *m_arp_conflicts;
	struct metric *m_leader, *m_transitions, *m_garp, *m_snap_stale, *m_snap_writes,
	    *m_snap_errors, *m_snap_bytes, *m_snap_write_seconds;
	struct metric *m_lease_persistent;
};

/* vmdhcp_agent_declines_ignored_total's reasons (metrics.c's labels, in this order) */
enum { IGNORED_RATE_LIMITED, IGNORED_NOT_BOUND };

/* serve.c */
const struct agent_config *agent_cur_cfg(const struct agent *a);
/* --enable-cache-dump-api: GET /leases on a->httpd (dump.c). 0 or negative errno. */
int agent_add_dump_api(struct agent *a);
void agent_shrink_config(struct agent_config *c);

/* metrics.c */
int agent_metrics_setup(struct agent *a);
int agent_kube_metrics_setup(struct agent *a);
bool agent_server_ip_is_listen(const struct agent *a, const struct agent_config *cfg);
bool agent_ready(void *userdata, char *reason, size_t len); /* httpd's /readyz */

/* sockets.c */
void agent_update_sockets(struct agent *a, bool force);
void agent_close_sockets(struct agent *a);
int agent_drop_capabilities(struct agent *a);
void agent_del_address(struct agent *a, const char *why);
void agent_announce(struct agent *a);
void agent_garp_cb(evutil_socket_t fd, short what, void *arg);
void agent_retry_cb(evutil_socket_t fd, short what, void *arg);
void agent_link_changed(
    void *userdata, const struct agent_link_state *old, const struct agent_link_state *now);
/* what failover.c asks of the sockets and the serverIP (agent_failover_setup's hooks) */
extern const struct agent_failover_hooks agent_sockets_failover_hooks;

/* warmstart.c */
void agent_warmstart_load(struct agent *a);
void agent_warmstart_schedule(struct agent *a);
void agent_warmstart_done(struct agent *a, enum agent_kube_state st);
void agent_warmstart_cb(evutil_socket_t fd, short what, void *arg);

#endif
