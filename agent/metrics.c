/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the agent's HTTP endpoint reports (lib/httpd.c serves it): the /metrics series, read
 * from the engine, the lease file, the dynamic pool, the failover and the warm start when
 * scraped (collect), and the /readyz verdict: the pool synced (or its snapshot served), the
 * interface up and the DHCP sockets open on it.
 */
#include <errno.h>
#include <stdio.h>

#include "agent/agent.h"
#include "agent/serve-internal.h"
#include "kube/kube.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/util.h"

/* Series that cannot occur are not exported: clients send these, the server replies those
 * (a server's message received is counted as a drop, other_server). */
static const uint8_t rx_types[] = {
    DHCP_MSG_DISCOVER, DHCP_MSG_REQUEST, DHCP_MSG_DECLINE, DHCP_MSG_RELEASE, DHCP_MSG_INFORM};
static const uint8_t tx_types[] = {DHCP_MSG_OFFER, DHCP_MSG_ACK, DHCP_MSG_NAK};
static const char *rx_labels[ELEMENTSOF(rx_types)], *tx_labels[ELEMENTSOF(tx_types)];
static const char *drop_labels[_DHCP_DROP_MAX];
static double latency_bounds[DHCP_LATENCY_BUCKETS - 1];
static const char *const reload_labels[] = {"ok", "error"};
static const char *const ignored_labels[] = {"rate_limited", "not_bound"};
static const char *const ha_state_labels[] = {"standby", "probing", "active", "hold"};
static const char *const pass_labels[] = {"wakeup", "backlog", "after_wait"};

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
	metric_set(a->m_rx_passes, 0, (double)(st->rx_wakeups - st->rx_waits));
	metric_set(a->m_rx_passes, 1, (double)st->rx_immediate);
	metric_set(a->m_rx_passes, 2, (double)st->rx_waits);
	metric_set(a->m_rx_yields, 0, (double)st->rx_yields);
	metric_set(a->m_rx_wait, 0, (double)st->rx_wait_usec / 1e6);
	/* PACKET_STATISTICS resets on read: the engine accumulates (no socket: as they were) */
	(void)dhcp_server_read_kernel_stats(a->dhcp);
	metric_set(a->m_kernel_received, 0, (double)st->kernel_received);
	metric_set(a->m_kernel_drops, 0, (double)st->kernel_drops);
	(void)metric_hist_set(
	    a->m_latency, 0, st->latency, DHCP_LATENCY_BUCKETS, (double)st->latency_sum_usec / 1e6);
	metric_set(a->m_bindings, 0, (double)dhcp_server_n_bindings(a->dhcp));
	/* the lease file counts its own refused lines, whichever path wrote them */
	metric_set(a->m_lease_errors, 0,
	    (double)((a->lf != NULL ? leasefile_append_errors(a->lf) : 0) + a->sweep_write_errors));
	metric_set(a->m_dynamic, 0, a->lf != NULL ? (double)leasefile_count(a->lf) : 0);
	metric_set(a->m_lease_persistent, 0, a->lf == NULL || leasefile_persistent(a->lf) ? 1 : 0);
	metric_set(a->m_available, 0, a->dyn != NULL ? (double)agent_dynamic_available(a->dyn) : 0);
	metric_set(a->m_held, 0, a->dyn != NULL ? (double)agent_dynamic_held(a->dyn) : 0);
	if (a->dyn != NULL) {
		struct agent_offer_stats os;
		agent_dynamic_offer_stats(a->dyn, &os);
		metric_set(a->m_offers_pending, 0, (double)os.pending);
		metric_set(a->m_offers_expired, 0, (double)os.expired);
		metric_set(a->m_offers_refused, 0, (double)os.refused);
		metric_set(a->m_offers_evicted, 0, (double)os.evicted);
	}
	metric_set(
	    a->m_serving, 0, a->open && a->link != NULL && agent_link_state(a->link)->up ? 1 : 0);
	metric_set(a->m_leader, 0, a->fo.fsm.active ? 1 : 0);
	for (size_t i = 0; i < 4; i++)
		metric_set(
		    a->m_ha_state, i, a->fo.leader != NULL && (size_t)a->fo.fsm.state == i ? 1 : 0);
	metric_set(a->m_arp_probes, 0, (double)a->fo.fsm.probes);
	metric_set(a->m_arp_conflicts, 0, (double)a->fo.fsm.conflicts);
	metric_set(a->m_transitions, 0, (double)a->fo.fsm.transitions);
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

int
agent_kube_metrics_setup(struct agent *a)
{
	struct metrics *m = a->metrics;

	a->m_kube_synced = metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_agent_kube_synced",
	    "1 while a valid version of the IPPool is in the table");
	a->m_kube_last_sync =
	    metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_agent_kube_last_sync_timestamp_seconds",
		"Unix time of the last IPPool version applied to the table");
	a->m_kube_reconnects =
	    metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_kube_watch_reconnects_total",
		"IPPool watch streams opened after the first");
	a->m_kube_errors = metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_kube_errors_total",
	    "Failed IPPool list or watch attempts (retried with backoff)");
	a->m_kube_relists = metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_kube_relists_total",
	    "IPPool relists forced by 410 Gone");
	a->m_kube_malformed =
	    metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_kube_malformed_total",
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
	    a->m_kube_reconnects == NULL || a->m_kube_errors == NULL || a->m_kube_relists == NULL ||
	    a->m_kube_malformed == NULL || a->m_kube_duplicate_macs == NULL)
		return -ENOMEM;
	/* the API answers refused for their size, and the cap (kube/limits.c) */
	return kube_metrics_add(m) < 0 ? -ENOMEM : 0;
}

int
agent_metrics_setup(struct agent *a)
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
	    "Changes of the served interface (deleted, re-created, down, up, MAC, MTU)");
	a->m_lease_errors = metrics_add_simple(m, METRIC_COUNTER,
	    "vmdhcp_agent_lease_file_errors_total", "Failed writes of the lease file");
	a->m_lease_persistent =
	    metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_agent_lease_file_persistent",
		"1 while --dynamic leases are written to the lease file (or none is used); 0 while "
		"it cannot be written (read-only, deleted) and leases are kept in memory only");
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
	a->m_offers_pending =
	    metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_agent_dynamic_offers_pending",
		"Addresses offered to MACs without a lease and held for their REQUEST until "
		"--offer-hold ends (--dynamic)");
	a->m_offers_expired =
	    metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_dynamic_offers_expired_total",
		"Offers whose hold ended without a REQUEST: the address went back to the pool "
		"(--dynamic)");
	a->m_offers_refused =
	    metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_dynamic_discovers_refused_total",
		"DHCPDISCOVERs from MACs without a lease dropped: --max-pending-offers offers were "
		"pending (--dynamic)");
	a->m_offers_evicted =
	    metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_dynamic_offers_evicted_total",
		"Offers taken over by a DHCPDISCOVER from a new MAC while --max-pending-offers "
		"were pending (the offer at least 250 ms old; --dynamic)");
	a->m_rx_passes = metrics_add(m, METRIC_COUNTER, "vmdhcp_agent_receive_passes_total",
	    "Passes over the DHCP packet socket, each reading what is waiting and answering it: "
	    "wakeup = the first of an event-loop wakeup (the socket readable), backlog = begun at "
	    "once after answering because more had arrived meanwhile, after_wait = after a "
	    "coalescing wait (above 20 000 requests/s only)",
	    "trigger", pass_labels, ELEMENTSOF(pass_labels), NULL, 0);
	a->m_rx_yields =
	    metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_receive_budget_yields_total",
		"Wakeups that read their budget of frames with more still waiting, and gave the "
		"event loop its turn before reading on");
	a->m_kernel_received =
	    metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_kernel_received_total",
		"Frames the kernel passed through the DHCP packet socket's filter, those dropped "
		"included (PACKET_STATISTICS tp_packets, accumulated)");
	a->m_kernel_drops = metrics_add_simple(m, METRIC_COUNTER, "vmdhcp_agent_kernel_drops_total",
	    "Frames for the DHCP packet socket the kernel dropped because its receive ring was "
	    "full: requests never read (PACKET_STATISTICS tp_drops, accumulated)");
	a->m_rx_wait = metrics_add_simple(m, METRIC_COUNTER,
	    "vmdhcp_agent_receive_wait_seconds_total",
	    "Time the DHCP socket was left unread on purpose to serve several requests per wakeup "
	    "(coalescing: above 20 000 requests/s only, at most 200 us at a time)");
	if (a->m_rx_passes == NULL || a->m_rx_yields == NULL || a->m_rx_wait == NULL ||
	    a->m_kernel_received == NULL || a->m_kernel_drops == NULL)
		return -ENOMEM;
	if (a->m_offers_pending == NULL || a->m_offers_expired == NULL ||
	    a->m_offers_refused == NULL || a->m_offers_evicted == NULL)
		return -ENOMEM;
	if (a->m_rx == NULL || a->m_tx == NULL || a->m_drops == NULL || a->m_declines == NULL ||
	    a->m_latency == NULL || a->m_bindings == NULL || a->m_dynamic == NULL ||
	    a->m_available == NULL || a->m_reloads == NULL || a->m_serving == NULL ||
	    a->m_link_events == NULL || a->m_lease_errors == NULL || a->m_expired == NULL ||
	    a->m_held == NULL || a->m_declines_ignored == NULL || a->m_leader == NULL ||
	    a->m_transitions == NULL || a->m_garp == NULL || a->m_ha_state == NULL ||
	    a->m_arp_probes == NULL || a->m_arp_conflicts == NULL || a->m_lease_persistent == NULL)
		return -ENOMEM;
	metrics_set_collect(m, collect, a);
	return 0;
}

/* Whether cfg's serverIP is the --listen address (listen.c). */
bool
agent_server_ip_is_listen(const struct agent *a, const struct agent_config *cfg)
{
	return a->listen_ip != 0 && cfg != NULL && cfg->opts.server_ip == a->listen_ip;
}

bool
agent_ready(void *userdata, char *reason, size_t len)
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
	cfg = agent_cur_cfg(a);
	if (agent_server_ip_is_listen(a, cfg)) {
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
		if (a->fo.leader != NULL && n < len)
			snprintf(reason + n, len - n, "%s%s", n ? "; " : "",
			    ha_state_labels[a->fo.fsm.state]);
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
