/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The running agent: the DHCP engine's sockets on the event loop, opened and closed as the
 * interface comes and goes (link.c), the configuration pushed into the engine (and again on
 * reload), --dynamic allocation through the engine's on_unknown callback, and the
 * /healthz /readyz /metrics endpoint.
 *
 * With opts.drop_capabilities (always in Kubernetes mode), the first time the sockets are
 * open and the server address is set, every capability goes but CAP_NET_ADMIN (caps.c).
 * From then on the sockets are kept, never reopened: a link down -> up on the same ifindex
 * keeps them (a packet socket bound to an ifindex survives it) and only re-adds the address;
 * a change that needs new sockets (the interface re-created, serving again after the sockets
 * were closed for a pause or a deletion) ends the event loop with exit
 * status 1, so the kubelet restarts the container with its capabilities.
 */
#include <errno.h>
#include <inttypes.h>
#include <net/if.h>
#include <linux/capability.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/agent.h"
#include "kube/kube.h"
#include "lib/clock.h"
#include "lib/httpd.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/util.h"

#define REOPEN_RETRY_SEC 2	/* first retry after a failed open; doubles */
#define REOPEN_RETRY_MAX_SEC 60 /* up to this */
/*
 * Receive buffer of the DHCP sockets: a burst while the agent is not scheduled (a busy node)
 * must queue, not drop. 4 MiB holds ~2 000 queued requests (skb truesize ~2 KiB each).
 */
#define DHCP_RCVBUF (4 << 20)
/*
 * --dynamic leases and DECLINE marks are reclaimed by a sweep this often, over at most
 * EXPIRE_BUDGET table slots (and held addresses) each: a /16 of leases is swept in under a
 * minute, in slices that keep the event loop responsive. Expiry is at most that late, next to
 * a grace period of half the lease time by default.
 */
#define EXPIRE_TICK_SEC 5
#define EXPIRE_BUDGET 16384

struct agent {
	struct event_base *base;
	struct agent_opts opts;
	struct agent_source src; /* the pool: the file (local mode) or the IPPool */
	struct dhcp_server *dhcp;
	struct leasefile *lf;
	struct agent_dynamic *dyn;
	struct agent_dynamic_opts dyn_opts;
	struct agent_marks *marks;  /* DECLINE marks held down in the engine (all modes) */
	struct agent_declog declog; /* the engine's decisions, logged */
	struct event *ev_expire;    /* the sweep of both, every EXPIRE_TICK_SEC */
	uint64_t sweep_write_errors; /* failed lease file rewrites after a sweep */
	struct agent_link *link;
	struct event *ev_fd[2];
	size_t n_fd;
	struct event *ev_retry;
	unsigned retry_sec; /* next retry delay; 0 after a success */
	bool open;
	int open_ifindex;
	uint8_t open_hwaddr[6];

	bool started;	     /* agent_new() done: the capabilities may go */
	bool caps_dropped;   /* see the top of the file */
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
	struct metric *m_ha_state, *m_arp_probes, *m_arp_conflicts;
	struct metric *m_leader, *m_transitions, *m_garp, *m_snap_stale, *m_snap_writes,
	    *m_snap_errors, *m_snap_bytes, *m_snap_write_seconds;
};

/* Snapshot writes at most this often: a pool changing all the time costs one write a second. */
#define SNAPSHOT_MIN_INTERVAL_USEC USEC_PER_SEC
/* The second gratuitous ARP follows the first after this (RFC 5227 ANNOUNCE_INTERVAL: 2 s). */
#define GARP_INTERVAL_SEC 1
/*
 * ARP probes before taking the serverIP: PROBE_NUM, PROBE_INTERVAL_USEC apart, the verdict
 * PROBE_INTERVAL_USEC after the last. RFC 5227 waits seconds (PROBE_NUM 3, 1-2 s apart) for
 * hosts that may be slow to answer; here the holder is a Linux kernel on the same L2 segment,
 * which answers in microseconds, and every 100 ms counts in a failover.
 */
#define PROBE_NUM 2
#define PROBE_INTERVAL_USEC (50 * UINT64_C(1000))
/* While the API server does not answer, a standby tries to take the serverIP this often. */
#define HOLD_RETRY_USEC USEC_PER_SEC
/* A claim of our serverIP by another MAC is answered with a gratuitous ARP at most this often. */
#define DEFEND_INTERVAL_USEC USEC_PER_SEC
/* On SIGTERM the Lease is released (the standby takes over at once) within this, else given up. */
#define STOP_RELEASE_USEC (2 * USEC_PER_SEC)

/*
 * The configuration being served: the snapshot's until synced (Kubernetes mode), else the
 * source's (the file's, or the IPPool's last valid version; NULL before one).
 */
static const struct agent_config *
cur_cfg(const struct agent *a)
{
	if (a->snap != NULL)
		return a->snap;
	return a->src.ops != NULL ? a->src.ops->config(a->src.src) : NULL;
}

/* ---- metrics -------------------------------------------------------------------------- */

/* Series that cannot occur are not exported: clients send these, the server replies those
 * (a server's message received is counted as a drop, other_server). */
static const uint8_t rx_types[] = { DHCP_MSG_DISCOVER, DHCP_MSG_REQUEST, DHCP_MSG_DECLINE,
	DHCP_MSG_RELEASE, DHCP_MSG_INFORM };
static const uint8_t tx_types[] = { DHCP_MSG_OFFER, DHCP_MSG_ACK, DHCP_MSG_NAK };
static const char *rx_labels[ELEMENTSOF(rx_types)], *tx_labels[ELEMENTSOF(tx_types)];
static const char *drop_labels[_DHCP_DROP_MAX];
static double latency_bounds[DHCP_LATENCY_BUCKETS - 1];
static const char *const reload_labels[] = {"ok", "error"};
static const char *const ignored_labels[] = {"rate_limited", "not_bound"};
static const char *const ha_state_labels[] = {"standby", "probing", "active", "hold"};
enum { IGNORED_RATE_LIMITED, IGNORED_NOT_BOUND };

static void
collect(void *userdata)
{
	struct agent *a = userdata;
	const struct dhcp_stats *st = dhcp_server_stats(a->dhcp);

	for (size_t i = 0; i < ELEMENTSOF(rx_types); i++)
		metric_set(a->m_rx, i, (double)st->rx[rx_types[i]]);
	for (size_t i = 0; i < ELEMENTSOF(tx_types); i++)
		metric_set(a->m_tx, i, (double)st->tx[tx_types[i]]);
	for (size_t d = 0; d < _DHCP_DROP_MAX; d++)
		metric_set(a->m_drops, d, (double)st->drops[d]);
	metric_set(a->m_declines, 0, (double)st->declines);
	(void)metric_hist_set(
	    a->m_latency, 0, st->latency, DHCP_LATENCY_BUCKETS, (double)st->latency_sum_usec / 1e6);
	metric_set(a->m_bindings, 0, (double)dhcp_server_n_bindings(a->dhcp));
	/* the lease file counts its own refused lines, whichever path wrote them */
	metric_set(a->m_lease_errors, 0,
	    (double)((a->lf != NULL ? leasefile_append_errors(a->lf) : 0) + a->sweep_write_errors));
	metric_set(a->m_dynamic, 0, a->lf != NULL ? (double)leasefile_count(a->lf) : 0);
	metric_set(a->m_available, 0, a->dyn != NULL ? (double)agent_dynamic_available(a->dyn) : 0);
	metric_set(a->m_held, 0, a->dyn != NULL ? (double)agent_dynamic_held(a->dyn) : 0);
	metric_set(
	    a->m_serving, 0, a->open && a->link != NULL && agent_link_state(a->link)->up ? 1 : 0);
	metric_set(a->m_leader, 0, a->active ? 1 : 0);
	for (size_t i = 0; i < 4; i++)
		metric_set(a->m_ha_state, i, a->leader != NULL && (size_t)a->ha == i ? 1 : 0);
	metric_set(a->m_arp_probes, 0, (double)a->probes);
	metric_set(a->m_arp_conflicts, 0, (double)a->conflicts);
	metric_set(a->m_transitions, 0, (double)a->transitions);
	metric_set(a->m_garp, 0, (double)a->garp_sent);
	if (a->m_snap_stale != NULL) {
		metric_set(a->m_snap_stale, 0, a->snap != NULL ? 1 : 0);
		metric_set(a->m_snap_writes, 0, (double)a->snap_writes);
		metric_set(a->m_snap_errors, 0, (double)a->snap_write_errors);
		metric_set(a->m_snap_bytes, 0, (double)a->snap_bytes);
		metric_set(a->m_snap_write_seconds, 0, (double)a->snap_write_usec / 1e6);
	}
	if (a->m_kube_synced != NULL) { /* the IPPool source's series (Kubernetes mode) */
		struct agent_source_stats ks;
		a->src.ops->stats(a->src.src, &ks);
		metric_set(a->m_kube_synced, 0, ks.synced ? 1 : 0);
		metric_set(a->m_kube_last_sync, 0, (double)ks.last_sync_usec / 1e6);
		metric_set(a->m_kube_reconnects, 0, (double)ks.watch_reconnects);
		metric_set(a->m_kube_errors, 0, (double)ks.errors);
		metric_set(a->m_kube_relists, 0, (double)ks.relists_410);
		metric_set(a->m_kube_malformed, 0, (double)ks.malformed);
		metric_set(a->m_kube_duplicate_macs, 0, (double)ks.duplicate_macs);
	}
}

static int
kube_metrics_setup(struct agent *a)
{
	struct metrics *m = a->metrics;

	a->m_kube_synced = metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_agent_kube_synced",
	    "1 while a valid version of the IPPool is in the table");
	a->m_kube_last_sync = metrics_add_simple(m, METRIC_GAUGE,
	    "vmdhcp_agent_kube_last_sync_timestamp_seconds",
	    "Unix time of the last IPPool version applied to the table");
	a->m_kube_reconnects = metrics_add_simple(m, METRIC_COUNTER,
	    "vmdhcp_agent_kube_watch_reconnects_total",
	    "IPPool watch streams opened after the first");
	a->m_kube_errors = metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_kube_errors_total",
	    "Failed IPPool list or watch attempts (retried with backoff)");
	a->m_kube_relists = metrics_add_simple(m, METRIC_COUNTER,
	    "vmdhcp_agent_kube_relists_total", "IPPool relists forced by 410 Gone");
	a->m_kube_malformed = metrics_add_simple(m, METRIC_COUNTER,
	    "vmdhcp_agent_kube_malformed_total",
	    "IPPool versions refused as malformed (the previous one kept)");
	a->m_kube_duplicate_macs = metrics_add_simple(m, METRIC_GAUGE,
	    "vmdhcp_agent_kube_duplicate_macs",
	    "MACs under more than one address in the IPPool's status (only the lowest is served)");
	if (a->opts.snapshot_path != NULL) {
		a->m_snap_stale = metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_agent_snapshot_stale",
		    "1 while the table served is the snapshot read at start (not yet synced with "
		    "the API server)");
		a->m_snap_writes = metrics_add_simple(m, METRIC_COUNTER,
		    "vmdhcp_agent_snapshot_writes_total", "Snapshots of the table written");
		a->m_snap_errors = metrics_add_simple(m, METRIC_COUNTER,
		    "vmdhcp_agent_snapshot_write_errors_total",
		    "Snapshots that could not be written (the previous one is kept)");
		a->m_snap_bytes = metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_agent_snapshot_bytes",
		    "Size of the last snapshot written or read");
		a->m_snap_write_seconds =
		    metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_agent_snapshot_write_seconds",
			"Time the last snapshot write took (encode, write, fsync, rename)");
		if (a->m_snap_stale == NULL || a->m_snap_writes == NULL ||
		    a->m_snap_errors == NULL || a->m_snap_bytes == NULL ||
		    a->m_snap_write_seconds == NULL)
			return -ENOMEM;
	}
	if (a->m_kube_synced == NULL || a->m_kube_last_sync == NULL ||
	    a->m_kube_reconnects == NULL || a->m_kube_errors == NULL ||
	    a->m_kube_relists == NULL || a->m_kube_malformed == NULL ||
	    a->m_kube_duplicate_macs == NULL)
		return -ENOMEM;
	return 0;
}

static int
metrics_setup(struct agent *a)
{
	struct metrics *m;
	int r;

	for (size_t i = 0; i < ELEMENTSOF(rx_types); i++)
		rx_labels[i] = dhcp_message_type_name(rx_types[i]);
	for (size_t i = 0; i < ELEMENTSOF(tx_types); i++)
		tx_labels[i] = dhcp_message_type_name(tx_types[i]);
	for (size_t d = 0; d < _DHCP_DROP_MAX; d++)
		drop_labels[d] = dhcp_drop_reason_name((enum dhcp_drop_reason)d);
	for (size_t b = 0; b < DHCP_LATENCY_BUCKETS - 1; b++)
		latency_bounds[b] = (double)dhcp_latency_bounds_usec[b] / 1e6;
	if ((r = metrics_new(&a->metrics)) < 0)
		return r;
	m = a->metrics;
	if (metrics_add_build_info(m, a->opts.version ? a->opts.version : "unknown",
		a->opts.revision ? a->opts.revision : "unknown") == NULL)
		return -ENOMEM;
	if ((r = metrics_add_process(m)) < 0)
		return r;
	a->m_rx = metrics_add(m, METRIC_COUNTER, "vmdhcp_agent_packets_received_total",
	    "DHCP messages received from clients, by message type", "type", rx_labels,
	    ELEMENTSOF(rx_labels), NULL, 0);
	a->m_tx = metrics_add(m, METRIC_COUNTER, "vmdhcp_agent_replies_sent_total",
	    "DHCP replies sent, by message type", "type", tx_labels, ELEMENTSOF(tx_labels), NULL,
	    0);
	a->m_drops = metrics_add(m, METRIC_COUNTER, "vmdhcp_agent_drops_total",
	    "Received datagrams not answered, by reason", "reason", drop_labels,
	    ELEMENTSOF(drop_labels), NULL, 0);
	a->m_declines = metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_declines_total",
	    "DHCPDECLINE messages (address in use on the network)");
	a->m_latency = metrics_add(m, METRIC_HISTOGRAM, "vmdhcp_agent_reply_latency_seconds",
	    "Time from receiving a request to sending its reply", NULL, NULL, 0, latency_bounds,
	    ELEMENTSOF(latency_bounds));
	a->m_bindings = metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_agent_bindings",
	    "MAC to address bindings in the table (static and dynamic)");
	a->m_dynamic = metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_agent_dynamic_leases",
	    "Leases handed out to unknown MACs (--dynamic)");
	a->m_available = metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_agent_pool_available",
	    "Free addresses left in the pool range for --dynamic");
	a->m_reloads = metrics_add(m, METRIC_COUNTER, "vmdhcp_agent_config_reloads_total",
	    "Configuration reloads (SIGHUP), by result", "result", reload_labels,
	    ELEMENTSOF(reload_labels), NULL, 0);
	a->m_serving = metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_agent_serving",
	    "1 while the DHCP sockets are open on the interface");
	a->m_link_events = metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_link_events_total",
	    "Changes of the served interface (deleted, re-created, down, up)");
	a->m_lease_errors = metrics_add_simple(m, METRIC_COUNTER,
	    "vmdhcp_agent_lease_file_errors_total", "Failed writes of the lease file");
	a->m_expired = metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_dynamic_expired_total",
	    "Dynamic leases reclaimed: not renewed for the lease time plus the grace period");
	a->m_held = metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_agent_declined_held",
	    "Pool addresses held after a DHCPDECLINE until their hold-down ends (--dynamic)");
	a->m_leader = metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_agent_leader",
	    "1 while this replica answers: it holds the pool's Lease (--leader-elect) or runs "
	    "without election; 0 on a standby");
	a->m_transitions =
	    metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_leader_transitions_total",
		"Times this replica became the active one (--leader-elect)");
	a->m_garp = metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_gratuitous_arp_sent_total",
	    "Gratuitous ARP announcements of the serverIP sent (when it is added to the "
	    "interface)");
	a->m_ha_state = metrics_add(m, METRIC_GAUGE, "vmdhcp_agent_ha_state",
	    "1 for this replica's state (--leader-elect): standby, probing (ARP for the serverIP "
	    "before taking it), active (holds the Lease), hold (answers without the Lease while "
	    "the API server does not answer)",
	    "state", ha_state_labels, ELEMENTSOF(ha_state_labels), NULL, 0);
	a->m_arp_probes = metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_arp_probes_total",
	    "ARP probes for the serverIP sent before taking it (--leader-elect)");
	a->m_arp_conflicts = metrics_add_simple(m, METRIC_COUNTER,
	    "vmdhcp_agent_arp_conflicts_total",
	    "Times another MAC answered or claimed the serverIP while this replica probed for it "
	    "or held it (--leader-elect)");
	a->m_declines_ignored = metrics_add(m, METRIC_COUNTER,
	    "vmdhcp_agent_declines_ignored_total",
	    "DHCPDECLINE messages ignored: over the per-MAC limit, or not for the MAC's address",
	    "reason", ignored_labels, ELEMENTSOF(ignored_labels), NULL, 0);
	if (a->m_rx == NULL || a->m_tx == NULL || a->m_drops == NULL || a->m_declines == NULL ||
	    a->m_latency == NULL || a->m_bindings == NULL || a->m_dynamic == NULL ||
	    a->m_available == NULL || a->m_reloads == NULL || a->m_serving == NULL ||
	    a->m_link_events == NULL || a->m_lease_errors == NULL || a->m_expired == NULL ||
	    a->m_held == NULL || a->m_declines_ignored == NULL || a->m_leader == NULL ||
	    a->m_transitions == NULL || a->m_garp == NULL || a->m_ha_state == NULL ||
	    a->m_arp_probes == NULL || a->m_arp_conflicts == NULL)
		return -ENOMEM;
	metrics_set_collect(m, collect, a);
	return 0;
}

/* Whether cfg's serverIP is the --listen address (listen.c). */
static bool
server_ip_is_listen(const struct agent *a, const struct agent_config *cfg)
{
	return a->listen_ip != 0 && cfg != NULL && cfg->opts.server_ip == a->listen_ip;
}

static bool
ready(void *userdata, char *reason, size_t len)
{
	struct agent *a = userdata;
	const struct agent_link_state *st;

	const struct agent_config *cfg;

	/* the snapshot is served until the source is synced */
	if (a->snap == NULL && !a->src.ops->ready(a->src.src, reason, len))
		return false;
	if (a->opts.dry_run)
		return true; /* synced; no sockets in a dry run */
	/* (local mode refuses such a file at start and on reload) */
	cfg = cur_cfg(a);
	if (server_ip_is_listen(a, cfg)) {
		snprintf(reason, len,
		    "IPPool %s/%s: its serverIP is the --listen address; not served", cfg->pool_ns,
		    cfg->pool_name);
		return false;
	}
	st = agent_link_state(a->link);
	/* once the capabilities are dropped the sockets stay open while the link is down */
	if (a->open && st->exists && st->up && st->ifindex == a->open_ifindex) {
		size_t n = 0;
		if (a->snap != NULL)
			n = (size_t)snprintf(reason, len,
			    "stale: serving the snapshot written at %s, not synced with the API "
			    "server yet",
			    a->snap_written);
		if (a->leader != NULL && n < len)
			snprintf(
			    reason + n, len - n, "%s%s", n ? "; " : "", ha_state_labels[a->ha]);
		return true;
	}
	if (!st->exists)
		snprintf(reason, len, "interface %s does not exist", a->opts.ifname);
	else if (!st->up)
		snprintf(reason, len, "interface %s is down", a->opts.ifname);
	else
		snprintf(reason, len, "DHCP sockets on %s are not open", a->opts.ifname);
	return false;
}

/* ---- the DHCP decision log (see agent.h) ------------------------------------------------ */

#define DECLOG_LINE USEC_PER_SEC /* tokens of one line: refilled AGENT_DECLOG_RATE per usec */
#define DECLOG_FULL ((uint64_t)AGENT_DECLOG_BURST * DECLOG_LINE)

static const char *const msg_upper[_DHCP_MSG_MAX] = {
    [DHCP_MSG_DISCOVER] = "DHCPDISCOVER",
    [DHCP_MSG_OFFER] = "DHCPOFFER",
    [DHCP_MSG_REQUEST] = "DHCPREQUEST",
    [DHCP_MSG_DECLINE] = "DHCPDECLINE",
    [DHCP_MSG_ACK] = "DHCPACK",
    [DHCP_MSG_NAK] = "DHCPNAK",
    [DHCP_MSG_RELEASE] = "DHCPRELEASE",
    [DHCP_MSG_INFORM] = "DHCPINFORM",
};

static const char *
msg_name(int type)
{
	/* type 0: options that did not parse, or no option 53 (the drop reason says which) */
	return type > 0 && type < _DHCP_MSG_MAX ? msg_upper[type] : "DHCP request";
}

int
agent_log_dhcp_from_string(const char *s, enum agent_log_dhcp *ret)
{
	static const char *const names[] = {"all", "drops", "none"};

	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (strcmp(s, names[i]) == 0) {
			*ret = (enum agent_log_dhcp)i;
			return 0;
		}
	return -EINVAL;
}

void
agent_declog_init(struct agent_declog *l, enum agent_log_dhcp mode)
{
	memset(l, 0, sizeof(*l));
	l->mode = mode;
}

/* Appends to buf[*n] (cap bytes), snprintf-like; a full buffer stays full. */
static void append(char *buf, size_t cap, size_t *n, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void
append(char *buf, size_t cap, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (*n >= cap)
		return;
	va_start(ap, fmt);
	r = vsnprintf(buf + *n, cap - *n, fmt, ap);
	va_end(ap);
	if (r > 0)
		*n = MIN(*n + (size_t)r, cap);
}

void
agent_declog_flush(struct agent_declog *l, uint64_t now, bool force)
{
	char text[1024], count[24];
	const char *sep = "";
	size_t n = 0;
	uint64_t drops = 0;

	if (l->suppressed == 0 || (!force && now - l->since < AGENT_DECLOG_SUMMARY_USEC))
		return;
	append(text, sizeof(text), &n,
	    "suppressed %" PRIu64 " DHCP decision lines in the last %" PRIu64 " s:", l->suppressed,
	    (now - l->since + USEC_PER_SEC / 2) / USEC_PER_SEC);
	for (int t = 1; t < _DHCP_MSG_MAX; t++) {
		if (l->by_reply[t] > 0) {
			append(text, sizeof(text), &n, "%s %" PRIu64 " %s", sep, l->by_reply[t],
			    msg_name(t));
			sep = ",";
		}
	}
	for (int t = 1; t < _DHCP_MSG_MAX; t++) {
		if (l->by_request[t] > 0) {
			append(text, sizeof(text), &n, "%s %" PRIu64 " %s", sep, l->by_request[t],
			    msg_name(t));
			sep = ",";
		}
	}
	for (int r = 0; r < _DHCP_DROP_MAX; r++)
		drops += l->by_drop[r];
	if (drops > 0) {
		append(text, sizeof(text), &n, "%s %" PRIu64 " dropped (", sep, drops);
		sep = "";
		for (int r = 0; r < _DHCP_DROP_MAX; r++) {
			if (l->by_drop[r] > 0) {
				append(text, sizeof(text), &n, "%s%s %" PRIu64, sep,
				    dhcp_drop_reason_name((enum dhcp_drop_reason)r), l->by_drop[r]);
				sep = ", ";
			}
		}
		append(text, sizeof(text), &n, ")");
	}
	snprintf(count, sizeof(count), "%" PRIu64, l->suppressed);
	log_kv(LOG_LEVEL_INFO, LOG_KV("suppressed", count), "%s", text);
	l->suppressed = 0;
	l->since = 0;
	memset(l->by_reply, 0, sizeof(l->by_reply));
	memset(l->by_request, 0, sizeof(l->by_request));
	memset(l->by_drop, 0, sizeof(l->by_drop));
}

/* The token bucket: true when a line may be written now (and takes its token). */
static bool
declog_take(struct agent_declog *l, uint64_t now)
{
	uint64_t dt = now > l->refilled ? now - l->refilled : 0;

	/* dt * rate cannot overflow: from what fills the bucket on, it is full */
	if (l->refilled == 0 || dt >= DECLOG_FULL / AGENT_DECLOG_RATE)
		l->tokens = DECLOG_FULL;
	else
		l->tokens = MIN(l->tokens + dt * AGENT_DECLOG_RATE, DECLOG_FULL);
	if (l->refilled == 0 || now > l->refilled)
		l->refilled = MAX(now, 1);
	if (l->tokens < DECLOG_LINE)
		return false;
	l->tokens -= DECLOG_LINE;
	return true;
}

static void
declog_write(const struct dhcp_decision *d, const struct agent_config *cfg)
{
	char mac[MAC_STRLEN], ip[IPV4_STRLEN], gi[IPV4_STRLEN], xid[12], pool[512];
	char vm[DHCP_HOSTNAME_MAX + 4] = "", via[IPV4_STRLEN + 8] = "", what[IPV4_STRLEN + 8] = "";
	const char *kv[20];
	uint32_t addr = d->ip != 0 ? d->ip : d->requested;
	bool json = log_get_format() == LOG_FORMAT_JSON;
	size_t k = 0;

	mac_format(d->mac, mac);
	ipv4_format(addr, ip);
	snprintf(xid, sizeof(xid), "0x%08" PRIx32, d->xid);
	if (d->hostname != NULL)
		snprintf(vm, sizeof(vm), " (%s)", d->hostname);
	if (d->giaddr != 0) {
		ipv4_format(d->giaddr, gi);
		snprintf(via, sizeof(via), " via %s", gi);
	}
	/* text: everything is in the message, only the xid follows; JSON: every key */
	if (json) {
		kv[k++] = "type";
		kv[k++] = dhcp_message_type_name(d->type); /* "unknown" for 0 */
		kv[k++] = "mac";
		kv[k++] = mac;
		if (addr != 0) {
			kv[k++] = "ip";
			kv[k++] = ip;
		}
		if (d->hostname != NULL) {
			kv[k++] = "vm";
			kv[k++] = d->hostname;
		}
		kv[k++] = d->dropped ? "drop" : "reply";
		if (d->dropped)
			kv[k++] = dhcp_drop_reason_name(d->drop);
		else /* "none": a DECLINE or RELEASE, taken note of */
			kv[k++] = d->reply != 0 ? dhcp_message_type_name(d->reply) : "none";
	}
	kv[k++] = "xid";
	kv[k++] = xid;
	if (json && d->giaddr != 0) {
		kv[k++] = "giaddr";
		kv[k++] = gi;
	}
	if (json && cfg != NULL) {
		snprintf(pool, sizeof(pool), "%s/%s", cfg->pool_ns, cfg->pool_name);
		kv[k++] = "ippool";
		kv[k++] = pool;
	}
	kv[k] = NULL;

	if (!d->dropped && (d->reply == DHCP_MSG_OFFER || d->reply == DHCP_MSG_ACK)) {
		/* "DHCPACK 10.0.0.5 to 52:54:00:12:34:56 (vm-1) for DHCPREQUEST" */
		log_kv(LOG_LEVEL_INFO, kv, "%s%s%s to %s%s for %s%s", msg_name(d->reply),
		    addr != 0 ? " " : "", addr != 0 ? ip : "", mac, vm, msg_name(d->type), via);
		return;
	}
	if (addr != 0)
		snprintf(what, sizeof(what), " %s %s", d->reply == DHCP_MSG_NAK ? "of" : "for", ip);
	if (!d->dropped && d->reply == DHCP_MSG_NAK)
		/* "DHCPNAK to 52:54:00:12:34:56 (vm-1) for DHCPREQUEST of 10.0.0.77" */
		log_kv(LOG_LEVEL_INFO, kv, "DHCPNAK to %s%s for %s%s%s", mac, vm, msg_name(d->type),
		    what, via);
	else if (d->dropped)
		/* "DHCPREQUEST from 52:54:00:aa:bb:cc for 10.0.0.9 dropped: unknown_mac" */
		log_kv(LOG_LEVEL_INFO, kv, "%s from %s%s%s%s dropped: %s", msg_name(d->type), mac,
		    vm, what, via, dhcp_drop_reason_name(d->drop));
	else
		/* "DHCPRELEASE from 52:54:00:12:34:56 (vm-1) for 10.0.0.5" */
		log_kv(
		    LOG_LEVEL_INFO, kv, "%s from %s%s%s%s", msg_name(d->type), mac, vm, what, via);
}

void
agent_declog_decision(
    struct agent_declog *l, const struct dhcp_decision *d, const struct agent_config *cfg)
{
	if (l->mode == AGENT_LOG_DHCP_NONE || log_get_level() < LOG_LEVEL_INFO)
		return;
	if (l->mode == AGENT_LOG_DHCP_DROPS && !d->dropped && d->reply != DHCP_MSG_NAK)
		return;
	if (l->suppressed > 0 && d->now - l->since >= AGENT_DECLOG_SUMMARY_USEC)
		agent_declog_flush(l, d->now, false);
	if (declog_take(l, d->now)) {
		declog_write(d, cfg);
		return;
	}
	/* suppressed: counters only */
	if (l->suppressed++ == 0)
		l->since = d->now != 0 ? d->now : 1;
	if (d->dropped)
		l->by_drop[(unsigned)d->drop < _DHCP_DROP_MAX ? d->drop : DHCP_DROP_MALFORMED]++;
	else if (d->reply != 0)
		l->by_reply[d->reply < _DHCP_MSG_MAX ? d->reply : 0]++;
	else
		l->by_request[d->type < _DHCP_MSG_MAX ? d->type : 0]++;
}

/* ---- serving --------------------------------------------------------------------------- */

static struct log_ratelimit rl_read = LOG_RATELIMIT_INIT(10 * USEC_PER_SEC, 5);
static struct log_ratelimit rl_snapshot = LOG_RATELIMIT_INIT(60 * USEC_PER_SEC, 1);
static struct log_ratelimit rl_lease = LOG_RATELIMIT_INIT(10 * USEC_PER_SEC, 5);

/*
 * Interrupt moderation: while requests keep coming, the agent sleeps DHCP_POLL_USEC between
 * reads of the packet socket's ring (a memory load when empty) instead of taking one wakeup
 * per request, so one wakeup and one sendmmsg serve several exchanges. It goes back to the
 * event loop when a read finds nothing, or after DHCP_POLL_MAX_USEC so other events run.
 * Adds at most DHCP_POLL_USEC to a reply's latency.
 */
#define DHCP_POLL_USEC 200
#define DHCP_POLL_MAX_USEC 10000

/*
 * The engine's send-time clock: vmdhcp_agent_reply_latency_seconds is receive -> send. Also the
 * clock of the dynamic leases' expiry and of the DECLINE hold-downs.
 */
static uint64_t
dhcp_clock(void *userdata)
{
	(void)userdata;
	return clock_now_usec();
}

static void
dhcp_readable(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	uint64_t now = clock_now_usec(), start = now;
	bool first = true;

	(void)what;
	for (;;) {
		int got = dhcp_server_on_readable(a->dhcp, fd, now);

		if ((got == 0 || got == -EAGAIN) && first) {
			/*
			 * Woken with nothing to read: a socket error is pending, ENETDOWN when the
			 * interface went down under sockets that are kept (see the top of the
			 * file). Reading the packet ring does not clear it: it would keep the fd
			 * readable (a busy loop) and fail the next reply sent, so clear it here.
			 */
			int e = 0;
			socklen_t elen = sizeof(e);
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) == 0 && e != 0)
				log_debug("%s: DHCP socket: %s", a->opts.ifname, strerror(e));
		}
		first = false;
		if (got < 0 && got != -EAGAIN && got != -EINTR)
			log_ratelimited(&rl_read, now, LOG_LEVEL_WARN, "%s: receive: %s",
			    a->opts.ifname, strerror(-got));
		/* fds[0] of dhcp_server_fds is the packet socket; the UDP one is only drained */
		if (got <= 0 || a->n_fd == 0 || fd != event_get_fd(a->ev_fd[0]) ||
		    now - start >= DHCP_POLL_MAX_USEC)
			break;
		(void)nanosleep(&(struct timespec){.tv_nsec = DHCP_POLL_USEC * 1000L}, NULL);
		now = clock_now_usec();
	}
}

static void arp_readable(evutil_socket_t fd, short what, void *arg);
static void ha_sockets_open(struct agent *a);

/* --leader-elect: the ARP socket that fences the serverIP (ha.c), beside the DHCP sockets. */
static int
arp_open(struct agent *a, int ifindex)
{
	const struct agent_config *cfg = cur_cfg(a);
	int r;

	a->arp_ip = cfg != NULL ? cfg->opts.server_ip : 0;
	if ((r = agent_arp_open(ifindex, a->arp_ip, &a->arp_fd)) < 0) {
		a->arp_fd = -1;
		log_error("%s: cannot open the ARP socket: %s", a->opts.ifname, strerror(-r));
		return r;
	}
	a->ev_arp = event_new(a->base, a->arp_fd, EV_READ | EV_PERSIST, arp_readable, a);
	if (a->ev_arp == NULL || event_add(a->ev_arp, NULL) < 0)
		return -ENOMEM;
	return 0;
}

static void
close_sockets(struct agent *a)
{
	for (size_t i = 0; i < a->n_fd; i++)
		event_free(a->ev_fd[i]);
	a->n_fd = 0;
	if (a->ev_arp != NULL)
		event_free(a->ev_arp);
	a->ev_arp = NULL;
	if (a->arp_fd >= 0)
		close(a->arp_fd);
	a->arp_fd = -1;
	if (a->open)
		dhcp_server_close(a->dhcp);
	a->open = false;
	a->open_ifindex = 0;
}

/* Removes the serverIP this replica added (a standby, a stop, a new serverIP). */
static void
del_address(struct agent *a, const char *why)
{
	char ip[IPV4_STRLEN];
	int r;

	if (a->addr_ip == 0 || a->link == NULL)
		return;
	ipv4_format(a->addr_ip, ip);
	r = agent_link_del_address(a->link, a->addr_ip, a->addr_prefix);
	if (r < 0)
		log_error("%s: cannot remove %s/%u (%s): %s", a->opts.ifname, ip, a->addr_prefix,
		    why, strerror(-r));
	else
		log_info("%s: address %s/%u removed (%s)", a->opts.ifname, ip, a->addr_prefix, why);
	a->addr_ip = 0;
	a->addr_prefix = 0;
}

/*
 * A standby makes sure the pool's serverIP is not on its interface: a container of this pod
 * that was active and died (SIGKILL, OOM) left it there, and the kernel would go on answering
 * ARP for it. Once per serverIP.
 */
static void
clear_stale_address(struct agent *a, const struct agent_config *cfg)
{
	char ip[IPV4_STRLEN];
	int r;

	if (a->active || a->link == NULL || cfg == NULL || !a->opts.assign_server_ip ||
	    a->cleared_ip == cfg->opts.server_ip || !agent_link_state(a->link)->exists)
		return;
	r = agent_link_del_address(a->link, cfg->opts.server_ip, cfg->prefix);
	ipv4_format(cfg->opts.server_ip, ip);
	if (r < 0) {
		log_warn("%s: standby: cannot make sure %s is not on the interface: %s",
		    a->opts.ifname, ip, strerror(-r));
		return;
	}
	a->cleared_ip = cfg->opts.server_ip;
}

/* With --assign-server-ip: serverIP/prefix on the interface (already there is fine). */
static int
add_address(struct agent *a)
{
	const struct agent_config *cfg = cur_cfg(a);
	char ip[IPV4_STRLEN];
	int r;

	if (!a->opts.assign_server_ip || !a->active)
		return 0;
	if (a->addr_ip != 0 && (a->addr_ip != cfg->opts.server_ip || a->addr_prefix != cfg->prefix))
		del_address(a, "the pool's serverIP changed");
	ipv4_format(cfg->opts.server_ip, ip);
	r = agent_link_add_address_lifetime(
	    a->link, cfg->opts.server_ip, cfg->prefix, a->addr_lifetime_s);
	if (r < 0) {
		log_error("%s: cannot add %s/%u: %s%s", a->opts.ifname, ip, cfg->prefix,
		    strerror(-r), r == -EPERM || r == -EACCES ? " (needs CAP_NET_ADMIN)" : "");
		return r;
	}
	if (a->addr_ip != cfg->opts.server_ip || a->addr_prefix != cfg->prefix)
		log_info("%s: address %s/%u present", a->opts.ifname, ip, cfg->prefix);
	a->addr_ip = cfg->opts.server_ip;
	a->addr_prefix = cfg->prefix;
	return 0;
}

/* Gratuitous ARP for the serverIP: now, and once more GARP_INTERVAL_SEC later (ev_garp). */
static void
announce(struct agent *a)
{
	int fds[2];
	char ip[IPV4_STRLEN];
	int r;

	/* whoever adds the serverIP announces it: a new active replica, or a single agent that
	 * (re)starts, so VMs whose neighbour entry is stale or incomplete send to it at once */
	if (!a->active || !a->open || a->addr_ip == 0 || dhcp_server_fds(a->dhcp, fds) == 0)
		return;
	r = agent_garp_send(
	    a->arp_fd >= 0 ? a->arp_fd : fds[0], a->open_ifindex, a->open_hwaddr, a->addr_ip);
	ipv4_format(a->addr_ip, ip);
	if (r < 0) {
		log_warn("%s: cannot send a gratuitous ARP for %s: %s", a->opts.ifname, ip,
		    strerror(-r));
		return;
	}
	a->garp_sent++;
	log_debug("%s: gratuitous ARP for %s sent", a->opts.ifname, ip);
}

static void
garp_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	announce(arg);
}

static void
announce_twice(struct agent *a)
{
	announce(a);
	evtimer_add(a->ev_garp, &(struct timeval){.tv_sec = GARP_INTERVAL_SEC});
}

static int
open_sockets(struct agent *a)
{
	const struct agent_link_state *st = agent_link_state(a->link);
	const struct agent_config *cfg = cur_cfg(a);
	int fds[2], r;
	size_t n;

	close_sockets(a);
	if ((r = add_address(a)) < 0)
		return r;
	r = dhcp_server_open(a->dhcp, st->ifindex, a->opts.ifname, st->hwaddr);
	if (r < 0) {
		char hint[160] = "";
		if (r == -EACCES || r == -EPERM) {
			uint64_t need = AGENT_CAP(CAP_NET_RAW) | AGENT_CAP(CAP_NET_BIND_SERVICE);
			struct agent_caps caps;
			char names[64];
			if (agent_caps_get(&caps) == 0 && (need & ~caps.effective) != 0)
				snprintf(hint, sizeof(hint), " (missing capabilities: %s)",
				    agent_caps_format(
					need & ~caps.effective, 2, names, sizeof(names)));
			else
				snprintf(hint, sizeof(hint),
				    " (needs CAP_NET_RAW for the packet socket, "
				    "CAP_NET_BIND_SERVICE for UDP port 67)");
		}
		log_error("%s: cannot open DHCP sockets: %s%s", a->opts.ifname, strerror(-r), hint);
		return r;
	}
	a->open = true;
	a->open_ifindex = st->ifindex;
	memcpy(a->open_hwaddr, st->hwaddr, 6);
	n = dhcp_server_fds(a->dhcp, fds);
	for (size_t i = 0; i < n; i++) {
		int sz = DHCP_RCVBUF;
		/* SO_RCVBUFFORCE passes rmem_max with CAP_NET_ADMIN; else the capped SO_RCVBUF */
		if (setsockopt(fds[i], SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
			(void)setsockopt(fds[i], SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
		a->ev_fd[i] = event_new(a->base, fds[i], EV_READ | EV_PERSIST, dhcp_readable, a);
		if (a->ev_fd[i] == NULL || event_add(a->ev_fd[i], NULL) < 0) {
			if (a->ev_fd[i] != NULL)
				event_free(a->ev_fd[i]);
			a->n_fd = i;
			close_sockets(a);
			log_error("%s: cannot watch DHCP sockets", a->opts.ifname);
			return -ENOMEM;
		}
		a->n_fd = i + 1;
	}
	if (a->leader != NULL && (r = arp_open(a, st->ifindex)) < 0) {
		close_sockets(a);
		return r;
	}
	dhcp_server_set_standby(a->dhcp, !a->active);
	log_info("%s: %s pool %s/%s (ifindex %d)", a->opts.ifname,
	    a->active ? "serving" : "standby for", cfg->pool_ns, cfg->pool_name, st->ifindex);
	announce_twice(a);
	return 0;
}

/* Ends the event loop with exit status 1: the process must restart (see the top). */
static void
must_restart(struct agent *a, const char *what)
{
	log_error("%s: %s needs new DHCP sockets: capabilities were dropped after start-up; "
		  "exiting so the container restarts with them",
	    a->opts.ifname, what);
	a->exit_status = 1;
	evtimer_del(a->ev_retry);
	event_base_loopbreak(a->base);
}

/*
 * Drops every capability but CAP_NET_ADMIN (kept with --assign-server-ip to re-add the
 * address; nothing is kept in a dry run), once: after agent_new() and the first open.
 */
static int
drop_capabilities(struct agent *a)
{
	uint64_t keep = a->opts.assign_server_ip && !a->opts.dry_run ? AGENT_CAP(CAP_NET_ADMIN) : 0;
	uint64_t sockets = AGENT_CAP(CAP_NET_RAW) | AGENT_CAP(CAP_NET_BIND_SERVICE), gone;
	struct agent_caps before, after;
	char kept[64], dropped[128];
	int others, r;

	if (!a->opts.drop_capabilities || a->caps_dropped || !a->started)
		return 0;
	if ((r = agent_caps_drop(keep, &before, &after)) < 0)
		return r;
	a->caps_dropped = true;
	a->dropped_ifindex = a->open_ifindex;
	/* the two the sockets needed by name, the others (uid 0 has them all) counted */
	gone = before.permitted & ~after.permitted;
	others = __builtin_popcountll(gone & ~sockets);
	if ((gone & sockets) != 0 && others > 0) {
		agent_caps_format(gone & sockets, 2, kept, sizeof(kept));
		snprintf(dropped, sizeof(dropped), "%s and %d others", kept, others);
	} else {
		agent_caps_format(gone, 4, dropped, sizeof(dropped));
	}
	log_info("capabilities dropped: kept %s%s; dropped %s from the permitted, effective and "
		 "inheritable sets%s; %s",
	    agent_caps_format(after.permitted, 4, kept, sizeof(kept)),
	    after.permitted != 0 ? " (re-adds the server address after link events)" : "", dropped,
	    before.effective & AGENT_CAP(CAP_SETPCAP) ? " and the bounding set" : "",
	    a->opts.dry_run ? "dry run: no sockets, no netlink"
			    : "the DHCP sockets cannot be reopened from now on");
	return 0;
}

/*
 * A pool version whose serverIP is the --listen address is not served: the agent would add
 * the address to the served interface and open /metrics to the VMs (listen.c). Logged once.
 */
static bool
server_ip_refused(struct agent *a, const struct agent_config *cfg)
{
	char ip[IPV4_STRLEN];

	if (!server_ip_is_listen(a, cfg)) {
		a->refused_server_ip = 0;
		return false;
	}
	if (a->refused_server_ip != cfg->opts.server_ip) {
		ipv4_format(cfg->opts.server_ip, ip);
		log_error("IPPool %s/%s: serverIP %s is the --listen address: not serving it on "
			  "%s, the VMs would reach /metrics; listen on another address (the pod "
			  "IP) or change the serverIP",
		    cfg->pool_ns, cfg->pool_name, ip, a->opts.ifname);
		a->refused_server_ip = cfg->opts.server_ip;
	}
	return true;
}

static void
retry_later(struct agent *a)
{
	struct timeval tv;

	a->retry_sec =
	    a->retry_sec == 0 ? REOPEN_RETRY_SEC : MIN(a->retry_sec * 2, REOPEN_RETRY_MAX_SEC);
	tv = (struct timeval){.tv_sec = a->retry_sec};
	log_info("%s: retrying in %u s", a->opts.ifname, a->retry_sec);
	evtimer_add(a->ev_retry, &tv);
}

/*
 * After the drop: serving on the interface again. The sockets bound to it are kept (force:
 * it came up again, or the serverIP changed: the address is re-added); anything else needs
 * new sockets.
 */
static void
serve_kept(struct agent *a, const struct agent_link_state *st, bool force)
{
	char what[96];

	/* the sockets are never reopened after the drop: while open, they are on dropped_ifindex */
	if (st->ifindex != a->dropped_ifindex)
		snprintf(what, sizeof(what), "the interface re-created (ifindex %d -> %d)",
		    a->dropped_ifindex, st->ifindex);
	else if (!a->open)
		snprintf(what, sizeof(what),
		    "serving again after the sockets were closed (pool paused, deleted or "
		    "refused)");
	else {
		if (memcmp(st->hwaddr, a->open_hwaddr, 6) != 0) {
			/* a bridge takes a port's MAC: the sockets stay, replies take the new one */
			char m[MAC_STRLEN];
			dhcp_server_set_hwaddr(a->dhcp, st->hwaddr);
			memcpy(a->open_hwaddr, st->hwaddr, 6);
			mac_format(st->hwaddr, m);
			log_info("%s: replies now sent from %s (DHCP sockets kept)",
			    a->opts.ifname, m);
		}
		if (!force)
			return;
		if (add_address(a) < 0) {
			retry_later(a);
			return;
		}
		announce_twice(a);
		evtimer_del(a->ev_retry);
		a->retry_sec = 0;
		if (a->kept_down)
			log_info("%s: serving again on the DHCP sockets kept (ifindex %d)",
			    a->opts.ifname, st->ifindex);
		a->kept_down = false;
		return;
	}
	must_restart(a, what);
}

/* Brings the sockets to what the interface and the pool ask for; force reopens. */
static void
update_sockets(struct agent *a, bool force)
{
	const struct agent_link_state *st;
	bool pool, want;
	int r;

	if (a->link == NULL || a->exit_status != 0)
		return; /* dry run: no sockets; or on the way out */
	st = agent_link_state(a->link);
	pool = (a->snap != NULL ? !a->snap->paused : a->src.ops->serving(a->src.src)) &&
	       !server_ip_refused(a, cur_cfg(a));
	want = pool && st->exists && st->up;
	if (pool)
		clear_stale_address(a, cur_cfg(a));
	/* the ARP fence follows the serverIP */
	if (a->arp_fd >= 0 && cur_cfg(a) != NULL && cur_cfg(a)->opts.server_ip != a->arp_ip &&
	    agent_arp_set_filter(a->arp_fd, cur_cfg(a)->opts.server_ip) == 0)
		a->arp_ip = cur_cfg(a)->opts.server_ip;
	/* a new serverIP/prefix (a new pool version): the address is added again */
	if (want && a->open && a->opts.assign_server_ip && a->active &&
	    (cur_cfg(a)->opts.server_ip != a->addr_ip || cur_cfg(a)->prefix != a->addr_prefix))
		force = true;

	if (!want) {
		evtimer_del(a->ev_retry);
		a->retry_sec = 0;
		if (!a->open)
			return;
		if (a->caps_dropped && pool && st->exists && st->ifindex == a->open_ifindex) {
			if (!a->kept_down)
				log_info("%s: DHCP sockets kept while the interface is down "
					 "(capabilities were dropped: they could not be reopened)",
				    a->opts.ifname);
			a->kept_down = true;
			return;
		}
		close_sockets(a);
		log_info("%s: DHCP sockets closed; waiting%s", a->opts.ifname,
		    a->caps_dropped ? " (capabilities were dropped: serving again will need a "
				      "restart)"
				    : "");
		return;
	}
	if (a->caps_dropped) {
		serve_kept(a, st, force);
		return;
	}
	if (a->open && !force && a->open_ifindex == st->ifindex)
		return;
	if (open_sockets(a) < 0) {
		retry_later(a);
		return;
	}
	evtimer_del(a->ev_retry);
	a->retry_sec = 0;
	if ((r = drop_capabilities(a)) < 0) {
		log_error("cannot drop capabilities: %s; exiting", strerror(-r));
		a->exit_status = 1;
		event_base_loopbreak(a->base);
		return;
	}
	ha_sockets_open(a);
}

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	update_sockets(arg, true);
}

static void
link_changed(void *userdata, const struct agent_link_state *old, const struct agent_link_state *now)
{
	struct agent *a = userdata;
	const char *ifname = a->opts.ifname;
	bool force = false;

	metric_inc(a->m_link_events, 0);
	if (!now->exists) {
		log_warn("%s: interface deleted", ifname);
	} else if (!old->exists) {
		log_info("%s: interface appeared (ifindex %d, %s)", ifname, now->ifindex,
		    now->up ? "up" : "down");
		force = true;
	} else if (old->ifindex != now->ifindex) {
		log_info("%s: interface re-created (ifindex %d -> %d)", ifname, old->ifindex,
		    now->ifindex);
		force = true;
	} else if (old->up && !now->up) {
		log_warn("%s: interface down", ifname);
	} else if (!old->up && now->up) {
		log_info("%s: interface up", ifname);
		force = true;
	} else if (memcmp(old->hwaddr, now->hwaddr, 6) != 0) {
		char m[MAC_STRLEN];
		mac_format(now->hwaddr, m);
		log_info("%s: MAC address changed to %s", ifname, m);
		force = true;
	}
	update_sockets(a, force);
}

/*
 * The engine asks before it builds the OFFER/ACK; replies leave at the end of the batch. The
 * lease line is written here (leasefile_add, through agent_dynamic_allocate), so it is in the
 * file (page cache) before the reply is sent: a kill -9 can never lose a lease a client was
 * told about. When it cannot be written (disk full, I/O error) the allocation is undone and
 * the request dropped (counted as unknown_mac): an address that is not in the file would go to
 * another MAC after a restart. The next request tries again, so serving resumes with the space.
 */
static int
on_unknown(void *userdata, const uint8_t mac[6], uint32_t *ret_ip)
{
	struct agent *a = userdata;
	const uint8_t *id;
	uint64_t failed;
	char m[MAC_STRLEN];
	size_t id_len;
	int r;

	if (a->dyn == NULL)
		return -ENOENT;
	/* the lease is the client identifier's (option 61), else the MAC's: RFC 2131 §4.2 */
	id = dhcp_server_client_id(a->dhcp, &id_len);
	failed = leasefile_append_errors(a->lf);
	if ((r = agent_dynamic_allocate_id(a->dyn, a->dhcp, mac, id, id_len, ret_ip)) < 0 &&
	    leasefile_append_errors(a->lf) != failed) {
		mac_format(mac, m);
		log_ratelimited(&rl_lease, clock_now_usec(), LOG_LEVEL_ERROR,
		    "%s: cannot record a lease for %s: %s; not answered", a->opts.lease_path, m,
		    strerror(-r));
	}
	return r;
}

/* Every request handled: one info line (rate-limited, see agent.h). */
static void
on_decision(void *userdata, const struct dhcp_decision *d)
{
	struct agent *a = userdata;

	agent_declog_decision(&a->declog, d, cur_cfg(a));
}

static struct log_ratelimit rl_decline = LOG_RATELIMIT_INIT(10 * USEC_PER_SEC, 10);

/*
 * The engine marked mac's binding declined and answers it no more: the mark is cleared once
 * the hold-down is over (agent_marks_expire, from expire_cb).
 */
static void
hold_mark(
    struct agent *a, const uint8_t mac[6], uint32_t ip, uint64_t now, const char *m, const char *s)
{
	if (agent_marks_add(a->marks, mac, ip, now) < 0)
		log_ratelimited(&rl_decline, now, LOG_LEVEL_ERROR,
		    "%s -> %s: out of memory: its DHCPDECLINE mark stays until a restart", m, s);
}

static void
on_decline(void *userdata, const uint8_t mac[6], uint32_t ip)
{
	struct agent *a = userdata;
	char m[MAC_STRLEN], s[IPV4_STRLEN], n[IPV4_STRLEN];
	uint64_t now = dhcp_clock(NULL);
	uint32_t nip, bound;
	int r;

	mac_format(mac, m);
	ipv4_format(ip, s);
	if (a->dyn != NULL && (r = agent_dynamic_decline(a->dyn, mac, ip, &nip)) != -ENOENT) {
		/* a dynamic lease: move the MAC; the engine clears its DECLINE mark */
		if (r == 0)
			r = dhcp_server_set_binding(a->dhcp, mac, nip, NULL);
		if (r == 0) {
			ipv4_format(nip, n);
			log_ratelimited(&rl_decline, now, LOG_LEVEL_WARN,
			    "DHCPDECLINE from %s for %s: the address is in use on the network; "
			    "%s moved to %s, %s held for %u s",
			    m, s, m, n, s, a->opts.decline_hold_s);
			return;
		}
		hold_mark(a, mac, ip, now, m, s);
		if (r == -EBUSY) {
			metric_inc(a->m_declines_ignored, IGNORED_RATE_LIMITED);
			log_ratelimited(&rl_decline, now, LOG_LEVEL_WARN,
			    "DHCPDECLINE from %s for %s ignored: %d DECLINEs of this MAC were "
			    "honoured within %u s already; no reply to it until its lease "
			    "expires or the hold-down ends",
			    m, s, AGENT_DECLINE_LIMIT, a->opts.decline_hold_s);
			return;
		}
		log_ratelimited(&rl_decline, now, LOG_LEVEL_WARN,
		    "DHCPDECLINE from %s for %s: the address is in use on the network; no other "
		    "address for it: %s; no reply to it for %u s",
		    m, s, strerror(-r), a->opts.decline_hold_s);
		return;
	}
	/* the engine marks a binding only when the DECLINE names its address */
	if (dhcp_server_get_binding(a->dhcp, mac, &bound) < 0 || bound != ip) {
		metric_inc(a->m_declines_ignored, IGNORED_NOT_BOUND);
		log_ratelimited(&rl_decline, now, LOG_LEVEL_WARN,
		    "DHCPDECLINE from %s for %s ignored: not the address bound to it", m, s);
		return;
	}
	hold_mark(a, mac, ip, now, m, s);
	log_ratelimited(&rl_decline, now, LOG_LEVEL_WARN,
	    "DHCPDECLINE from %s for %s: the address is in use on the network; not offered to "
	    "it again for %u s (the hold-down) unless its binding changes",
	    m, s, a->opts.decline_hold_s);
}

/*
 * A lease granted or renewed: a dynamic one now lives lease time + grace from now, keyed by the
 * request's client identifier when it brought a new one (a line in the lease file; when that
 * cannot be written the lease keeps its key, and the error is counted).
 */
static void
on_ack(void *userdata, const uint8_t mac[6], uint32_t ip)
{
	struct agent *a = userdata;
	const uint8_t *id;
	size_t id_len;

	if (a->dyn == NULL)
		return;
	id = dhcp_server_client_id(a->dhcp, &id_len);
	(void)agent_dynamic_renew_id(a->dyn, mac, id, id_len, ip);
}

/*
 * Reclaims expired dynamic leases, held addresses and DECLINE marks, a bounded slice at a
 * time. The lease file is rewritten when leases went: removals are not journaled, and an
 * address given to another MAC must not meet its old lease line again after a crash.
 */
static void
expire_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	size_t n;
	int r;

	(void)fd;
	(void)what;
	/* a storm that stopped still gets its summary of suppressed decision lines */
	agent_declog_flush(&a->declog, dhcp_clock(NULL), false);
	(void)agent_marks_expire(a->marks, a->dhcp, dhcp_clock(NULL), EXPIRE_BUDGET);
	if (a->dyn == NULL || (n = agent_dynamic_expire(a->dyn, a->dhcp, EXPIRE_BUDGET)) == 0)
		return;
	metric_add(a->m_expired, 0, (double)n);
	if (a->opts.lease_path != NULL && (r = leasefile_compact(a->lf)) < 0) {
		a->sweep_write_errors++;
		log_ratelimited(&rl_lease, clock_now_usec(), LOG_LEVEL_ERROR,
		    "%s: cannot write lease file: %s", a->opts.lease_path, strerror(-r));
	}
}

static void
log_config(const struct agent *a, const struct agent_config *c, const char *what, int removed)
{
	char sip[IPV4_STRLEN], net[IPV4_STRLEN], st[IPV4_STRLEN], en[IPV4_STRLEN];

	ipv4_format(c->opts.server_ip, sip);
	ipv4_format(c->cidr, net);
	ipv4_format(c->pool_start, st);
	ipv4_format(c->pool_end, en);
	log_info("%s %s: pool %s/%s network %s, %s/%u server %s range %s-%s, %zu static "
		 "bindings, %zu dynamic leases%s, %d removed",
	    what, a->opts.config_path, c->pool_ns, c->pool_name, c->network, net, c->prefix, sip,
	    st, en, c->n_bindings, a->lf ? leasefile_count(a->lf) : 0, c->paused ? " (paused)" : "",
	    removed);
}

/* The static binding array is not needed once the engine has it; options and pool are. */
static void
shrink_config(struct agent_config *c)
{
	free(c->bindings);
	c->bindings = NULL;
	c->n_bindings = 0;
	free(c->names);
	c->names = NULL;
	c->names_len = c->names_cap = 0;
	malloc_trim(0);
}

int
agent_reload(struct agent *a)
{
	char err[AGENT_ERR_MAX];
	struct agent_config *cfg = NULL;
	struct agent_dynamic *dyn = NULL;
	bool was_paused;
	uint32_t old_server;
	int r;

	if (a->opts.kube) {
		log_info("reload: nothing to re-read in Kubernetes mode (the IPPool is watched)");
		return 0;
	}
	was_paused = cur_cfg(a)->paused;
	old_server = cur_cfg(a)->opts.server_ip;
	r = agent_config_load(a->opts.config_path, a->opts.ippool_ref, &cfg, err, sizeof(err));
	if (r < 0) {
		log_error("reload: %s; keeping the previous configuration", err);
		metric_inc(a->m_reloads, 1);
		return r;
	}
	if (a->listen_ip != 0 && cfg->opts.server_ip == a->listen_ip) {
		log_error("reload: %s: serverIP is the --listen address, which would open /metrics "
			  "to the VMs on %s; keeping the previous configuration",
		    a->opts.config_path, a->opts.ifname);
		agent_config_free(cfg);
		metric_inc(a->m_reloads, 1);
		return -EINVAL;
	}
	/* expiries, hints and held addresses carry over from the pool being replaced */
	if (a->opts.dynamic &&
	    (r = agent_dynamic_new_opts(cfg, a->lf, &a->dyn_opts, a->dyn, &dyn)) < 0) {
		log_error("reload: %s: pool range: %s; keeping the previous configuration",
		    a->opts.config_path, strerror(-r));
		agent_config_free(cfg);
		metric_inc(a->m_reloads, 1);
		return r;
	}
	r = agent_apply_config(a->dhcp, cfg, dyn, err, sizeof(err));
	if (r < 0) {
		log_error("reload: %s: %s", a->opts.config_path, err);
		agent_dynamic_free(dyn);
		agent_config_free(cfg);
		metric_inc(a->m_reloads, 1);
		return r;
	}
	agent_dynamic_free(a->dyn);
	a->dyn = dyn;
	log_config(a, cfg, "reloaded", r);
	shrink_config(cfg);
	/* the file source's object is the config: the new one takes the old one's place */
	a->src.ops->free(a->src.src);
	a->src.src = cfg;
	if (a->lf != NULL && (r = leasefile_compact(a->lf)) < 0)
		log_error("%s: cannot write lease file: %s", a->opts.lease_path, strerror(-r));
	metric_inc(a->m_reloads, 0);
	if (was_paused != cfg->paused || old_server != cfg->opts.server_ip)
		update_sockets(a, true);
	return 0;
}

/* ---- warm start: the snapshot ------------------------------------------------------------ */

static void
snapshot_write(struct agent *a)
{
	const struct agent_config *cfg = cur_cfg(a);
	char err[AGENT_ERR_MAX];
	struct agent_snapshot_info info;
	uint64_t t0 = clock_now_usec();
	int r;

	a->snap_last = t0;
	if (cfg == NULL || a->snap != NULL)
		return; /* nothing synced to write (a stale table is never written back) */
	r = agent_snapshot_write(
	    a->opts.snapshot_path, cfg, a->dhcp, NULL, &info, err, sizeof(err));
	a->snap_write_usec = clock_now_usec() - t0;
	if (r < 0) {
		a->snap_write_errors++;
		log_ratelimited(&rl_snapshot, t0, LOG_LEVEL_WARN,
		    "snapshot not written: %s (a warm start would serve an older one, or none)",
		    err);
		return;
	}
	a->snap_writes++;
	a->snap_bytes = info.bytes;
	/* the encoded file (0.6 MiB at 65 000 bindings) goes back to the system, not the heap */
	malloc_trim(0);
	log_debug("snapshot %s written: %zu bindings, %zu bytes in %" PRIu64 " us",
	    a->opts.snapshot_path, info.bindings, info.bytes, a->snap_write_usec);
}

static void
snapshot_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	snapshot_write(arg);
}

/* A new table to snapshot: written now, or when SNAPSHOT_MIN_INTERVAL_USEC since the last. */
static void
snapshot_schedule(struct agent *a)
{
	uint64_t now = clock_now_usec(), due;

	if (a->opts.snapshot_path == NULL || a->ev_snap == NULL ||
	    evtimer_pending(a->ev_snap, NULL))
		return;
	due = a->snap_last != 0 ? a->snap_last + SNAPSHOT_MIN_INTERVAL_USEC : now;
	due = due > now ? due - now : 0;
	struct timeval tv = {
	    .tv_sec = (time_t)(due / USEC_PER_SEC), .tv_usec = (suseconds_t)(due % USEC_PER_SEC)};
	evtimer_add(a->ev_snap, &tv);
}

/* Reads the snapshot at start and puts it in the engine: served, stale, until the first sync. */
static void
snapshot_load(struct agent *a)
{
	struct agent_config *snap = NULL;
	char err[AGENT_ERR_MAX];
	struct tm tm;
	time_t t;
	int r;

	r = agent_snapshot_load(
	    a->opts.snapshot_path, a->opts.ippool_ref, &snap, &a->snap_info, err, sizeof(err));
	if (r == -ENOENT) {
		log_info("no snapshot at %s yet: serving once synced with the API server",
		    a->opts.snapshot_path);
		return;
	}
	if (r < 0) {
		log_warn("%s: snapshot ignored; serving once synced with the API server", err);
		return;
	}
	if ((r = agent_apply_config(a->dhcp, snap, NULL, err, sizeof(err))) < 0) {
		log_warn("%s: snapshot not applied: %s", a->opts.snapshot_path, err);
		agent_config_free(snap);
		return;
	}
	/* the engine has the bindings now: keep the options, the pool range, the identity */
	shrink_config(snap);
	a->snap = snap;
	a->snap_bytes = a->snap_info.bytes;
	t = (time_t)(a->snap_info.written_usec / USEC_PER_SEC);
	if (gmtime_r(&t, &tm) == NULL ||
	    strftime(a->snap_written, sizeof(a->snap_written), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(a->snap_written, sizeof(a->snap_written), "?");
	log_kv(LOG_LEVEL_INFO,
	    LOG_KV("snapshot", a->opts.snapshot_path, "written", a->snap_written, "ippool",
		a->opts.ippool_ref),
	    "warm start: %zu bindings of IPPool %s served from the snapshot (stale until synced "
	    "with the API server)",
	    a->snap_info.bindings, a->opts.ippool_ref);
}

/* The API server answered for the pool: the snapshot's table is over. */
static void
snapshot_done(struct agent *a, enum agent_kube_state st)
{
	if (a->snap == NULL)
		return;
	if (st == AGENT_KUBE_ABSENT) {
		/* the pool is gone: its bindings leave the engine with the snapshot */
		dhcp_server_sync_begin(a->dhcp);
		(void)dhcp_server_sync_end(a->dhcp);
		log_warn("IPPool %s does not exist: the snapshot's table is dropped",
		    a->opts.ippool_ref);
	} else {
		log_info("synced with the API server: the snapshot's table is replaced by IPPool "
			 "%s's current version",
		    a->opts.ippool_ref);
	}
	a->snap = agent_config_free(a->snap);
}

/* Kubernetes mode: a new valid IPPool version, a pause, a deletion: open or close. */
static void
kube_changed(void *userdata, const struct agent_config *cfg)
{
	struct agent *a = userdata;
	enum agent_kube_state st = agent_kube_get_state(a->src.src);

	if (st == AGENT_KUBE_ACTIVE || st == AGENT_KUBE_ABSENT)
		snapshot_done(a, st);
	if (cfg != NULL)
		snapshot_schedule(a);
	update_sockets(a, false);
}

/* ---- --leader-elect ---------------------------------------------------------------------- */

/* Renews the serverIP's lifetime while active (so a dead agent's address goes by itself). */
static void
refresh_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;

	(void)fd;
	(void)what;
	if (!a->active || a->addr_ip == 0 || a->link == NULL)
		return;
	(void)agent_link_add_address_lifetime(
	    a->link, a->addr_ip, a->addr_prefix, a->addr_lifetime_s);
}

/* Takes the serverIP and answers: ACTIVE with the Lease, HOLD without it. */
static void
claim(struct agent *a)
{
	bool was = a->active;

	a->ha = a->lease_held ? HA_ACTIVE : HA_HOLD;
	a->active = true;
	if (!was)
		a->transitions++;
	a->cleared_ip = 0;
	memset(a->fenced_mac, 0, 6);
	if (a->ha == HA_ACTIVE)
		log_kv(LOG_LEVEL_INFO,
		    LOG_KV("ippool", a->opts.ippool_ref, "lease", a->opts.lease_name),
		    "this replica (%s) holds the Lease: active, answering and announcing the "
		    "serverIP",
		    a->opts.identity);
	else
		log_kv(LOG_LEVEL_WARN,
		    LOG_KV("ippool", a->opts.ippool_ref, "lease", a->opts.lease_name),
		    "the API server does not answer and no replica answers for the serverIP: this "
		    "replica (%s) answers without the Lease (hold) until the API server is back",
		    a->opts.identity);
	dhcp_server_set_standby(a->dhcp, false);
	update_sockets(a, true);
	if (a->addr_lifetime_s != 0 && !event_pending(a->ev_refresh, EV_TIMEOUT, NULL))
		event_add(a->ev_refresh, &(struct timeval){.tv_usec = 250000});
}

/* Stops answering, then gives the serverIP up. */
static void
stand_down(struct agent *a, const char *why)
{
	bool was = a->active;

	evtimer_del(a->ev_probe);
	a->ha = HA_STANDBY;
	a->active = false;
	dhcp_server_set_standby(a->dhcp, true);
	evtimer_del(a->ev_garp);
	event_del(a->ev_refresh);
	if (a->addr_ip != 0)
		a->cleared_ip = a->addr_ip;
	del_address(a, why);
	if (was)
		log_kv(LOG_LEVEL_WARN,
		    LOG_KV("ippool", a->opts.ippool_ref, "lease", a->opts.lease_name),
		    "this replica (%s) stands by, not answering: %s", a->opts.identity, why);
}

static void
schedule_hold(struct agent *a, uint64_t delay)
{
	struct timeval tv = {.tv_sec = (time_t)(delay / USEC_PER_SEC),
	    .tv_usec = (suseconds_t)(delay % USEC_PER_SEC)};

	if (a->stopping || a->ev_hold == NULL)
		return;
	evtimer_add(a->ev_hold, &tv);
}

/* The next look at the serverIP while the API server may be silent: 1 to 1.5 s from now. */
static void
schedule_hold_retry(struct agent *a)
{
	schedule_hold(a, HOLD_RETRY_USEC + (uint64_t)(random() % 500000));
}

/* A standby without the Lease keeps looking (hold_cb), unless a look is already due. */
static void
keep_watching(struct agent *a)
{
	if (a->ha == HA_STANDBY && !a->lease_held && !evtimer_pending(a->ev_hold, NULL))
		schedule_hold_retry(a);
}

/* Probes for the serverIP before taking it (for_hold: without the Lease). */
static void
probe_start(struct agent *a, bool for_hold)
{
	if (a->stopping || !a->open || a->arp_fd < 0 || cur_cfg(a) == NULL || a->active)
		return;
	a->ha = HA_PROBING;
	a->probe_for_hold = for_hold;
	a->probe_conflict = false;
	a->probes_sent = 0;
	evtimer_del(a->ev_hold);
	evtimer_add(a->ev_probe, &(struct timeval){0});
}

static void
probe_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	const struct agent_config *cfg = cur_cfg(a);
	char ip[IPV4_STRLEN], m[MAC_STRLEN];
	int r;

	(void)fd;
	(void)what;
	if (a->ha != HA_PROBING || cfg == NULL || a->arp_fd < 0)
		return;
	if (a->probes_sent < PROBE_NUM && !a->probe_conflict) {
		r = agent_arp_probe_send(
		    a->arp_fd, a->open_ifindex, a->open_hwaddr, cfg->opts.server_ip);
		if (r < 0)
			log_warn("%s: cannot send an ARP probe: %s", a->opts.ifname, strerror(-r));
		a->probes_sent++;
		a->probes++;
		evtimer_add(a->ev_probe, &(struct timeval){.tv_usec = PROBE_INTERVAL_USEC});
		return;
	}
	ipv4_format(cfg->opts.server_ip, ip);
	if (a->probe_conflict) {
		a->ha = HA_STANDBY;
		mac_format(a->conflict_mac, m);
		if (!a->probe_for_hold) {
			if (memcmp(a->fenced_mac, a->conflict_mac, 6) != 0)
				log_warn(
				    "%s: this replica holds the Lease but %s is still answered by "
				    "%s (a previous active replica cut off from the API server?): "
				    "not taking it until nobody answers",
				    a->opts.ifname, ip, m);
			memcpy(a->fenced_mac, a->conflict_mac, 6);
			schedule_hold(a, a->opts.retry_period_usec);
		} else {
			log_debug("%s: %s answered by %s: stays standby", a->opts.ifname, ip, m);
			schedule_hold_retry(a);
		}
		return;
	}
	if ((a->probe_for_hold && (a->lease_held || a->api_answered)) ||
	    (!a->probe_for_hold && !a->lease_held)) {
		/* the API server answered meanwhile (the Lease decides), or the Lease was lost */
		a->ha = HA_STANDBY;
		if (a->lease_held)
			probe_start(a, false);
		else /* keep watching for the API server falling silent */
			schedule_hold_retry(a);
		return;
	}
	claim(a);
}

static void
arp_readable(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	const struct agent_config *cfg = cur_cfg(a);
	uint8_t f[128], mac[6];
	char ip[IPV4_STRLEN], m[MAC_STRLEN];
	uint64_t now = clock_now_usec();
	ssize_t n;
	int kind;

	(void)what;
	while ((n = recv(fd, f, sizeof(f), 0)) > 0) {
		if (cfg == NULL)
			continue;
		kind = agent_arp_classify(f, (size_t)n, a->open_hwaddr, cfg->opts.server_ip, mac);
		if (kind == AGENT_ARP_OTHER)
			continue;
		if (a->ha == HA_PROBING) {
			/* answered (CLAIM), or another probing for it at once (PROBE): not ours */
			if (!a->probe_conflict)
				a->conflicts++;
			a->probe_conflict = true;
			memcpy(a->conflict_mac, mac, 6);
			continue;
		}
		if (kind != AGENT_ARP_CLAIM || !a->active)
			continue; /* our kernel answers probes for an address we hold */
		a->conflicts++;
		ipv4_format(cfg->opts.server_ip, ip);
		mac_format(mac, m);
		if (a->ha == HA_HOLD) {
			char why[128];
			snprintf(why, sizeof(why), "%s claimed by %s while held without the Lease",
			    ip, m);
			stand_down(a, why);
			schedule_hold_retry(a);
			return;
		}
		if (now - a->defended_at >= DEFEND_INTERVAL_USEC) {
			/* ACTIVE with the Lease: defend the address (RFC 5227 §2.4 (b)) */
			a->defended_at = now;
			log_warn(
			    "%s: %s also claimed by %s; this replica holds the Lease: defending "
			    "it with a gratuitous ARP",
			    a->opts.ifname, ip, m);
			announce(a);
		}
	}
}

/*
 * Whether the API server is silent for the Lease: its last attempt failed without an answer,
 * or none was answered for the renew deadline (a request that hangs fails only at the
 * client's connect or request timeout, seconds later).
 */
static bool
api_silent(const struct agent *a)
{
	return (a->api_tried && !a->api_answered) ||
	       clock_now_usec() - a->api_answered_at >= a->opts.renew_deadline_usec;
}

static void
hold_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;

	(void)fd;
	(void)what;
	if (a->active || a->ha == HA_PROBING || a->stopping)
		return;
	if (a->lease_held)
		probe_start(a, false); /* fenced: is the address free now? */
	else if (api_silent(a))
		probe_start(a, true);
	/* the probe's verdict schedules the next look; here when no probe could start */
	keep_watching(a);
}

/* The DHCP sockets (and the ARP socket) are open: a Lease held meanwhile is acted on. */
static void
ha_sockets_open(struct agent *a)
{
	if (a->leader == NULL || a->active || a->ha == HA_PROBING)
		return;
	if (a->lease_held)
		probe_start(a, false);
	else if (!a->api_answered && (a->snap != NULL || a->api_tried))
		/*
		 * a warm start: serving the snapshot at once, without waiting for the API server
		 * (which may take its connect timeout to fail), if nobody answers for the serverIP;
		 * the Lease decides once the API server answers
		 */
		probe_start(a, true);
	keep_watching(a);
}

static void
leader_started(void *userdata)
{
	struct agent *a = userdata;

	a->lease_held = true;
	if (a->stopping)
		return;
	if (a->active) {
		if (a->ha == HA_HOLD)
			log_info(
			    "this replica (%s) holds the Lease again: active", a->opts.identity);
		a->ha = HA_ACTIVE;
		return;
	}
	probe_start(a, false); /* or, sockets not open yet, from ha_sockets_open */
}

static void
leader_stopped(void *userdata)
{
	struct agent *a = userdata;

	a->lease_held = false;
	if (a->ha == HA_PROBING && !a->probe_for_hold) {
		evtimer_del(a->ev_probe);
		a->ha = HA_STANDBY;
	}
	evtimer_del(a->ev_hold);
	if (!a->active)
		return;
	if (!a->api_answered && !a->stopping) {
		a->ha = HA_HOLD;
		log_kv(LOG_LEVEL_WARN,
		    LOG_KV("ippool", a->opts.ippool_ref, "lease", a->opts.lease_name),
		    "cannot renew the Lease: the API server does not answer; this replica (%s) "
		    "keeps answering (hold): no replica can take the Lease without the API server, "
		    "and one that does takes the serverIP only once nobody answers for it",
		    a->opts.identity);
		return;
	}
	stand_down(a, a->stopping ? "stopping" : "no longer holds the Lease");
}

static void
leader_new_holder(void *userdata, const char *id)
{
	struct agent *a = userdata;
	char why[320];

	/* kube_leader calls this when the holder changed to another, non-empty one */
	if (strcmp(id, a->opts.identity) == 0)
		return;
	log_info("IPPool %s: the active replica is %s", a->opts.ippool_ref, id);
	if (a->ha == HA_HOLD) {
		snprintf(why, sizeof(why), "the Lease is held by %.200s", id);
		stand_down(a, why);
	} else if (a->ha == HA_PROBING && a->probe_for_hold) {
		evtimer_del(a->ev_probe);
		a->ha = HA_STANDBY;
	}
}

static void
leader_result(void *userdata, bool answered)
{
	struct agent *a = userdata;
	bool first = !a->api_tried;

	a->api_tried = true;
	a->api_answered = answered;
	if (answered) {
		a->api_answered_at = clock_now_usec();
		if (!a->lease_held)
			evtimer_del(a->ev_hold);
		return;
	}
	/* no API server: a standby with a table takes the serverIP if nobody answers for it */
	if (!a->active && a->ha == HA_STANDBY && !a->lease_held &&
	    !evtimer_pending(a->ev_hold, NULL))
		schedule_hold(a, first ? 0 : HOLD_RETRY_USEC + (uint64_t)(random() % 500000));
}

static int
leader_setup(struct agent *a, char *err, size_t errlen)
{
	struct kube_leader_opts lo = {
	    .ns = a->opts.lease_ns,
	    .name = a->opts.lease_name,
	    .identity = a->opts.identity,
	    .lease_duration_usec = a->opts.lease_duration_usec,
	    .renew_deadline_usec = a->opts.renew_deadline_usec,
	    .retry_period_usec = a->opts.retry_period_usec,
	    .on_started = leader_started,
	    .on_stopped = leader_stopped,
	    .on_new_leader = leader_new_holder,
	    .on_result = leader_result,
	    .userdata = a,
	};
	int r;

	if ((r = kube_leader_new(a->kc, &lo, &a->leader)) < 0) {
		snprintf(err, errlen,
		    "--leader-elect: %s (the renew deadline must be under the lease duration, the "
		    "retry period under the renew deadline, the lease duration at least 1 s)",
		    strerror(-r));
		return r;
	}
	/*
	 * The address dies with the agent (renewed every 250 ms while it answers): gone before a
	 * standby may take the Lease (the lease duration), so its ARP probes find it free.
	 */
	a->addr_lifetime_s = a->opts.lease_duration_usec >= 3 * USEC_PER_SEC
				 ? (uint32_t)(a->opts.lease_duration_usec / USEC_PER_SEC) - 1
				 : 1;
	log_info("leader election: Lease %s/%s as %s (lease %.1f s, renew deadline %.1f s, retry "
		 "%.2f s)",
	    a->opts.lease_ns, a->opts.lease_name, a->opts.identity,
	    (double)a->opts.lease_duration_usec / 1e6, (double)a->opts.renew_deadline_usec / 1e6,
	    (double)a->opts.retry_period_usec / 1e6);
	return 0;
}

static void
stop_finish(struct agent *a)
{
	void (*done)(void *) = a->stop_done;

	a->stop_done = NULL;
	if (a->ev_stop != NULL)
		evtimer_del(a->ev_stop);
	if (done != NULL)
		done(a->stop_userdata);
}

static void
released(void *userdata)
{
	struct agent *a = userdata;

	log_info("Lease %s/%s released", a->opts.lease_ns, a->opts.lease_name);
	stop_finish(a);
}

static void
stop_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;

	(void)fd;
	(void)what;
	log_warn("Lease %s/%s: release not confirmed in time; the standby takes over when it "
		 "expires",
	    a->opts.lease_ns, a->opts.lease_name);
	stop_finish(a);
}

int
agent_stop(struct agent *a, void (*done)(void *userdata), void *userdata)
{
	if (a->stopping)
		return -EALREADY;
	a->stopping = true;
	a->stop_done = done;
	a->stop_userdata = userdata;
	if (a->leader == NULL || a->ev_stop == NULL) {
		stop_finish(a);
		return 0;
	}
	stand_down(a, "stopping");
	if (kube_leader_release(a->leader, released, a) < 0) {
		stop_finish(a);
		return 0;
	}
	evtimer_add(a->ev_stop, &(struct timeval){.tv_sec = STOP_RELEASE_USEC / USEC_PER_SEC});
	return 0;
}

static int
kube_setup(struct agent *a, char *err, size_t errlen)
{
	struct agent_kube_opts ko = {
		.ippool_ref = a->opts.ippool_ref,
		.on_change = kube_changed,
		.userdata = a,
	};
	struct agent_kube *k;
	int r;

	if ((r = kube_config_load(a->opts.kubeconfig, &a->kcfg, err, errlen)) < 0)
		return r;
	if ((r = kube_client_new(a->base, a->kcfg, &a->kc)) < 0) {
		snprintf(err, errlen, "Kubernetes client: %s", strerror(-r));
		return r;
	}
	if ((r = agent_kube_new(a->kc, a->dhcp, &ko, &k, err, errlen)) < 0)
		return r;
	a->src = (struct agent_source){.ops = &agent_kube_source_ops, .src = k};
	if (a->opts.leader_elect && (r = leader_setup(a, err, errlen)) < 0)
		return r;
	if ((r = kube_metrics_setup(a)) < 0) {
		snprintf(err, errlen, "out of memory");
		return r;
	}
	log_info("Kubernetes mode: IPPool %s from %s%s", a->opts.ippool_ref,
	    kube_config_server(a->kcfg), a->opts.dry_run ? " (dry run: no sockets)" : "");
	return 0;
}

int
agent_new(struct event_base *base, const struct agent_opts *opts, struct agent_config *cfg,
    struct agent **ret, char *err, size_t errlen)
{
	struct agent *a = calloc(1, sizeof(*a));
	struct dhcp_callbacks cb = {0};
	int r;

	if (a == NULL) {
		agent_config_free(cfg);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	a->base = base;
	a->opts = *opts;
	if (!opts->kube) /* local mode: the file read by the caller is the source */
		a->src = (struct agent_source){.ops = &agent_file_source_ops, .src = cfg};
	a->active = !opts->leader_elect;
	a->api_answered_at = clock_now_usec(); /* silent from the renew deadline after start */
	a->arp_fd = -1;
	agent_declog_init(&a->declog, opts->log_dhcp);
	if (a->opts.decline_hold_s == AGENT_DEFAULT)
		a->opts.decline_hold_s = AGENT_DECLINE_HOLD_DEFAULT;
	a->dyn_opts = (struct agent_dynamic_opts){
	    .clock = dhcp_clock,
	    .grace_s = a->opts.lease_grace_s,
	    .decline_hold_s = a->opts.decline_hold_s,
	};
	if ((r = dhcp_server_new(&a->dhcp)) < 0 || (r = metrics_setup(a)) < 0 ||
	    (r = agent_marks_new(a->opts.decline_hold_s, &a->marks)) < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (opts->kube && (r = kube_setup(a, err, errlen)) < 0)
		goto fail;
	if (opts->dynamic) {
		r = leasefile_open(opts->lease_path, &a->lf, err, errlen);
		if (r < 0)
			goto fail;
		if ((r = agent_dynamic_new_opts(cfg, a->lf, &a->dyn_opts, NULL, &a->dyn)) < 0) {
			snprintf(
			    err, errlen, "%s: pool range: %s", opts->config_path, strerror(-r));
			goto fail;
		}
		if (opts->lease_path != NULL && (r = leasefile_compact(a->lf)) < 0) {
			snprintf(err, errlen, "%s: cannot write lease file: %s", opts->lease_path,
			    strerror(-r));
			goto fail;
		}
	}
	cb.on_unknown = on_unknown;
	cb.on_decline = on_decline;
	cb.on_ack = on_ack;
	if (opts->log_dhcp != AGENT_LOG_DHCP_NONE && log_get_level() >= LOG_LEVEL_INFO)
		cb.on_decision = on_decision;
	cb.userdata = a;
	dhcp_server_set_callbacks(a->dhcp, &cb);
	dhcp_server_set_clock(a->dhcp, dhcp_clock, NULL);
	if (!opts->kube) {
		r = agent_apply_config(a->dhcp, cfg, a->dyn, err, errlen);
		if (r < 0)
			goto fail;
		log_config(a, cfg, "loaded", 0);
		shrink_config(cfg);
	}

	a->ev_retry = evtimer_new(base, retry_cb, a);
	a->ev_expire = event_new(base, -1, EV_PERSIST, expire_cb, a);
	a->ev_garp = evtimer_new(base, garp_cb, a);
	a->ev_refresh = event_new(base, -1, EV_PERSIST, refresh_cb, a);
	a->ev_stop = evtimer_new(base, stop_timeout_cb, a);
	a->ev_snap = evtimer_new(base, snapshot_cb, a);
	a->ev_probe = evtimer_new(base, probe_cb, a);
	a->ev_hold = evtimer_new(base, hold_cb, a);
	if (a->ev_retry == NULL || a->ev_expire == NULL || a->ev_garp == NULL ||
	    a->ev_refresh == NULL || a->ev_stop == NULL || a->ev_snap == NULL ||
	    a->ev_probe == NULL || a->ev_hold == NULL ||
	    event_add(a->ev_expire, &(struct timeval){.tv_sec = EXPIRE_TICK_SEC}) < 0) {
		r = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	r = opts->dry_run ? 0 : agent_link_new(base, opts->ifname, link_changed, a, &a->link);
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot watch the interface (netlink): %s", opts->ifname,
		    strerror(-r));
		goto fail;
	}
	if (a->link != NULL) {
		const struct agent_link_state *st = agent_link_state(a->link);
		if (!st->exists)
			log_warn("%s: no such interface yet; waiting for it", opts->ifname);
		else if (!st->up)
			log_warn("%s: interface is down; waiting for it to come up", opts->ifname);
	}

	if (opts->listen != NULL) {
		char msg[AGENT_ERR_MAX], dev[IF_NAMESIZE];
		r = agent_listen_check(opts->listen, opts->ifname, opts->kube,
		    cfg != NULL ? cfg->opts.server_ip : 0, &a->listen_ip, msg, sizeof(msg));
		if (r < 0) {
			snprintf(err, errlen, "%s", msg); /* -EINVAL: exit status 2 */
			goto fail;
		}
		if (r > 0)
			log_warn("%s", msg);
		r = httpd_new(base, opts->listen, a->metrics, &a->httpd);
		if (r < 0) {
			snprintf(err, errlen, "--listen %s: %s", opts->listen, strerror(-r));
			goto fail;
		}
		httpd_set_ready(a->httpd, ready, a);
		log_info("HTTP /healthz /readyz /metrics on %s (port %d)", opts->listen,
		    httpd_port(a->httpd));
		/* a VM could still reach that address through the served interface (Linux
		 * takes any local address on any interface): accept on its own device only */
		if (agent_listen_device(opts->listen, dev, sizeof(dev)) == 0) {
			if ((r = httpd_bind_device(a->httpd, dev)) < 0) {
				snprintf(err, errlen,
				    "--listen %s: cannot restrict it to %s: %s (needs CAP_NET_RAW)",
				    opts->listen, dev, strerror(-r));
				if (opts->kube)
					goto fail;
				log_warn("%s; VMs on %s may reach it", err, opts->ifname);
			} else {
				log_info("HTTP accepts connections that arrive on %s only", dev);
			}
		}
	}
	if (a->opts.snapshot_path != NULL) /* Kubernetes mode only (main.c) */
		snapshot_load(a);
	update_sockets(a, true);
	if ((r = a->src.ops->start(a->src.src)) < 0) {
		snprintf(err, errlen, "IPPool informer: %s", strerror(-r));
		goto fail;
	}
	if (a->leader != NULL && (r = kube_leader_start(a->leader)) < 0) {
		snprintf(err, errlen, "leader election: %s", strerror(-r));
		goto fail;
	}
	/* the capabilities go now if the sockets are open (local mode), else at the first open */
	a->started = true;
	if ((a->open || opts->dry_run) && (r = drop_capabilities(a)) < 0) {
		snprintf(err, errlen, "cannot drop capabilities: %s", strerror(-r));
		goto fail;
	}
	*ret = a;
	return 0;
fail:
	agent_free(a);
	return r;
}

int
agent_exit_status(const struct agent *a)
{
	return a != NULL ? a->exit_status : 0;
}

struct agent *
agent_free(struct agent *a)
{
	int r;

	if (a == NULL)
		return NULL;
	httpd_free(a->httpd);
	if (a->leader != NULL && a->active)
		stand_down(
		    a, "stopping"); /* not answering, the address gone, before the sockets close */
	a->leader = kube_leader_free(a->leader);
	close_sockets(a);
	agent_declog_flush(&a->declog, dhcp_clock(NULL), true);
	if (a->ev_retry != NULL)
		event_free(a->ev_retry);
	if (a->ev_expire != NULL)
		event_free(a->ev_expire);
	if (a->ev_garp != NULL)
		event_free(a->ev_garp);
	if (a->ev_refresh != NULL)
		event_free(a->ev_refresh);
	if (a->ev_stop != NULL)
		event_free(a->ev_stop);
	if (a->ev_snap != NULL)
		event_free(a->ev_snap);
	if (a->ev_probe != NULL)
		event_free(a->ev_probe);
	if (a->ev_hold != NULL)
		event_free(a->ev_hold);
	agent_config_free(a->snap);
	agent_link_free(a->link);
	if (a->lf != NULL && a->opts.lease_path != NULL && (r = leasefile_compact(a->lf)) < 0)
		log_error("%s: cannot write lease file: %s", a->opts.lease_path, strerror(-r));
	agent_dynamic_free(a->dyn);
	agent_marks_free(a->marks);
	leasefile_free(a->lf);
	if (a->src.ops != NULL)
		a->src.ops->free(a->src.src); /* before the client it uses */
	kube_client_free(a->kc);
	kube_config_free(a->kcfg);
	dhcp_server_free(a->dhcp);
	metrics_free(a->metrics);
	free(a);
	return NULL;
}
