/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the agent's HTTP endpoint reports (lib/httpd.c serves it): the /metrics series, read
 * from the engine, the lease file, the dynamic pool, the failover and the warm start when
 * scraped (collect), the DHCPv6 engine's beside the DHCP engine's, and the /readyz verdict: the
 * pool synced (or its snapshot served), the interface up and the DHCP sockets open on it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>

#include "agent/dynamic.h"
#include "agent/leasefile.h"
#include "agent/link.h"
#include "agent/metrics.h"
#include "agent/serve-internal.h"
#include "dhcp/dhcp6.h"
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
static const char *boot_labels[_DHCP_BOOT_MAX];
static double latency_bounds[DHCP_LATENCY_BUCKETS - 1];
static const char *const reload_labels[] = {"ok", "error"};
static const char *const ignored_labels[] = {"rate_limited", "not_bound"};
static const char *const ha_state_labels[] = {"standby", "probing", "active", "hold"};
static const char *const pass_labels[] = {"wakeup", "backlog", "after_wait"};

/* DHCPv6: what clients send (RFC 8415 §7.3) and what the server answers */
static const uint8_t rx6_types[] = {DHCP6_MSG_SOLICIT, DHCP6_MSG_REQUEST, DHCP6_MSG_CONFIRM,
    DHCP6_MSG_RENEW, DHCP6_MSG_REBIND, DHCP6_MSG_RELEASE, DHCP6_MSG_DECLINE,
    DHCP6_MSG_INFORMATION_REQUEST, DHCP6_MSG_RELAY_FORW};
static const uint8_t tx6_types[] = {DHCP6_MSG_ADVERTISE, DHCP6_MSG_REPLY};
static const char *rx6_labels[ELEMENTSOF(rx6_types)], *tx6_labels[ELEMENTSOF(tx6_types)];
static const char *drop6_labels[_DHCP6_DROP_MAX];
static const char *const status6_labels[] = {"NoAddrsAvail", "NoBinding", "NotOnLink"};

/* The DHCPv6 engine's counts (zero while the pool has no ipv6Config). */
static void
collect6(struct agent *a)
{
	const struct dhcp6_stats *st = dhcp6_server_stats(a->dhcp6);

	for (size_t i = 0; i < ELEMENTSOF(rx6_types); i++)
		metric_set(a->mx.rx6, i, (double)st->rx[rx6_types[i]]);
	for (size_t i = 0; i < ELEMENTSOF(tx6_types); i++)
		metric_set(a->mx.tx6, i, (double)st->tx[tx6_types[i]]);
	for (size_t d = 0; d < _DHCP6_DROP_MAX; d++)
		metric_set(a->mx.drops6, d, (double)st->drops[d]);
	metric_set(a->mx.status6, 0, (double)st->no_addrs_avail);
	metric_set(a->mx.status6, 1, (double)st->no_binding);
	metric_set(a->mx.status6, 2, (double)st->not_on_link);
	metric_set(a->mx.declines6, 0, (double)st->declines);
	(void)metric_hist_set(a->mx.latency6, 0, st->latency, DHCP_LATENCY_BUCKETS,
	    (double)st->latency_sum_usec / 1e6);
	metric_set(a->mx.bindings6, 0, (double)dhcp6_server_n_bindings(a->dhcp6));
	metric_set(a->mx.serving6, 0,
	    a->sock6.open && a->link != NULL && agent_link_state(a->link)->up ? 1 : 0);
	metric_set(a->mx.rs6, 0, (double)st->rs_rx);
	metric_set(a->mx.ra6, 0, (double)st->ra_tx);
	metric_set(a->mx.na6, 0, (double)st->na_tx);
	(void)dhcp6_server_read_kernel_stats(a->dhcp6);
	metric_set(a->mx.kernel_drops6, 0, (double)st->kernel_drops);
	metric_set(a->mx.rx_passes6, 0, (double)(st->rx_wakeups - st->rx_waits));
	metric_set(a->mx.rx_passes6, 1, (double)st->rx_immediate);
	metric_set(a->mx.rx_passes6, 2, (double)st->rx_waits);
	metric_set(a->mx.rx_yields6, 0, (double)st->rx_yields);
	metric_set(a->mx.rx_wait6, 0, (double)st->rx_wait_usec / 1e6);
}

/* The DHCP socket's receive passes (dhcp/moderate.h) and the kernel's counters. */
static void
collect_receive(struct agent *a, const struct dhcp_stats *st)
{
	metric_set(a->mx.rx_passes, 0, (double)(st->rx_wakeups - st->rx_waits));
	metric_set(a->mx.rx_passes, 1, (double)st->rx_immediate);
	metric_set(a->mx.rx_passes, 2, (double)st->rx_waits);
	metric_set(a->mx.rx_yields, 0, (double)st->rx_yields);
	metric_set(a->mx.rx_wait, 0, (double)st->rx_wait_usec / 1e6);
	/* PACKET_STATISTICS resets on read: the engine accumulates (no socket: as they were) */
	(void)dhcp_server_read_kernel_stats(a->dhcp);
	metric_set(a->mx.kernel_received, 0, (double)st->kernel_received);
	metric_set(a->mx.kernel_drops, 0, (double)st->kernel_drops);
}

static void
collect(void *userdata)
{
	struct agent *a = userdata;
	const struct dhcp_stats *st = dhcp_server_stats(a->dhcp);

	for (size_t i = 0; i < ELEMENTSOF(rx_types); i++)
		metric_set(a->mx.rx, i, (double)st->rx[rx_types[i]]);
	for (size_t i = 0; i < ELEMENTSOF(tx_types); i++)
		metric_set(a->mx.tx, i, (double)st->tx[tx_types[i]]);
	for (size_t d = 0; d < _DHCP_DROP_MAX; d++)
		metric_set(a->mx.drops, d, (double)st->drops[d]);
	metric_set(a->mx.declines, 0, (double)st->declines);
	for (size_t k = 0; k < _DHCP_BOOT_MAX; k++)
		metric_set(a->mx.boot, k, (double)st->boot[k]);
	for (size_t i = 0; i < ELEMENTSOF(a->declines_ignored); i++)
		metric_set(a->mx.declines_ignored, i, (double)a->declines_ignored[i]);
	for (size_t i = 0; i < ELEMENTSOF(a->reloads); i++)
		metric_set(a->mx.reloads, i, (double)a->reloads[i]);
	metric_set(a->mx.expired, 0, (double)a->expired);
	collect_receive(a, st);
	(void)metric_hist_set(a->mx.latency, 0, st->latency, DHCP_LATENCY_BUCKETS,
	    (double)st->latency_sum_usec / 1e6);
	metric_set(a->mx.bindings, 0, (double)dhcp_server_n_bindings(a->dhcp));
	/* the lease file counts its own refused lines, whichever path wrote them */
	metric_set(a->mx.lease_errors, 0,
	    (double)((a->lf != NULL ? leasefile_append_errors(a->lf) : 0) + a->sweep_write_errors));
	metric_set(a->mx.dynamic, 0, a->lf != NULL ? (double)leasefile_count(a->lf) : 0);
	metric_set(a->mx.lease_persistent, 0, a->lf == NULL || leasefile_persistent(a->lf) ? 1 : 0);
	metric_set(
	    a->mx.available, 0, a->dyn != NULL ? (double)agent_dynamic_available(a->dyn) : 0);
	metric_set(a->mx.held, 0, a->dyn != NULL ? (double)agent_dynamic_held(a->dyn) : 0);
	if (a->dyn != NULL) {
		struct agent_offer_stats os;
		agent_dynamic_offer_stats(a->dyn, &os);
		metric_set(a->mx.offers_pending, 0, (double)os.pending);
		metric_set(a->mx.offers_expired, 0, (double)os.expired);
		metric_set(a->mx.offers_refused, 0, (double)os.refused);
		metric_set(a->mx.offers_evicted, 0, (double)os.evicted);
	}
	metric_set(a->mx.serving, 0,
	    a->sock.open && a->link != NULL && agent_link_state(a->link)->up ? 1 : 0);
	metric_set(a->mx.link_events, 0, (double)a->sock.link_events);
	metric_set(a->mx.leader, 0, a->fo.fsm.active ? 1 : 0);
	for (size_t i = 0; i < 4; i++)
		metric_set(a->mx.ha_state, i,
		    a->fo.leader != NULL && (size_t)a->fo.fsm.state == i ? 1 : 0);
	metric_set(a->mx.arp_probes, 0, (double)a->fo.fsm.probes);
	metric_set(a->mx.arp_conflicts, 0, (double)a->fo.fsm.conflicts);
	metric_set(a->mx.transitions, 0, (double)a->fo.fsm.transitions);
	metric_set(a->mx.garp, 0, (double)a->garp_sent);
	metric_set(a->mx.foreign_replies, 0, (double)a->guard.replies);
	metric_set(a->mx.foreign_own, 0, (double)a->guard.own_replies);
	metric_set(a->mx.foreign_probes, 0, (double)a->guard.probes);
	metric_set(a->mx.foreign_stand_down, 0, a->guard.stand_down ? 1 : 0);
	collect6(a);
	if (a->mx.snap_stale != NULL) {
		metric_set(a->mx.snap_stale, 0, a->warm.snap != NULL ? 1 : 0);
		metric_set(a->mx.snap_writes, 0, (double)a->warm.writes);
		metric_set(a->mx.snap_errors, 0, (double)a->warm.write_errors);
		metric_set(a->mx.snap_bytes, 0, (double)a->warm.bytes);
		metric_set(a->mx.snap_write_seconds, 0, (double)a->warm.write_usec / 1e6);
	}
	if (a->mx.kube_synced != NULL) { /* the IPPool source's series (Kubernetes mode) */
		struct agent_source_stats ks;
		a->src.ops->stats(a->src.src, &ks);
		metric_set(a->mx.kube_synced, 0, ks.synced ? 1 : 0);
		metric_set(a->mx.kube_last_sync, 0, (double)ks.last_sync_usec / 1e6);
		metric_set(a->mx.kube_reconnects, 0, (double)ks.watch_reconnects);
		metric_set(a->mx.kube_errors, 0, (double)ks.errors);
		metric_set(a->mx.kube_relists, 0, (double)ks.relists_410);
		metric_set(a->mx.kube_malformed, 0, (double)ks.malformed);
		metric_set(a->mx.kube_duplicate_macs, 0, (double)ks.duplicate_macs);
	}
}

/* One series to register: where its handle goes in struct agent_metrics, and metrics_add's. */
struct series {
	size_t off;
	enum metric_type type;
	const char *name, *help, *label;
	const char *const *values;
	size_t n_values;
	const double *buckets;
	size_t n_buckets;
};
#define SERIES(f, t, n, h)                                                                         \
	{                                                                                          \
		offsetof(struct agent_metrics, f), t, n, h, NULL, NULL, 0, NULL, 0                 \
	}
#define SERIES_LABELED(f, t, n, h, l, v)                                                           \
	{                                                                                          \
		offsetof(struct agent_metrics, f), t, n, h, l, v, ELEMENTSOF(v), NULL, 0           \
	}
#define SERIES_HIST(f, t, n, h, b)                                                                 \
	{                                                                                          \
		offsetof(struct agent_metrics, f), t, n, h, NULL, NULL, 0, b, ELEMENTSOF(b)        \
	}

/* Both modes' series, in the order /metrics lists them. */
static const struct series agent_series[] = {
    SERIES_LABELED(rx, METRIC_COUNTER, "vmdhcp_agent_packets_received_total",
	"DHCP messages received from clients, by message type", "type", rx_labels),
    SERIES_LABELED(tx, METRIC_COUNTER, "vmdhcp_agent_replies_sent_total",
	"DHCP replies sent, by message type", "type", tx_labels),
    SERIES_LABELED(drops, METRIC_COUNTER, "vmdhcp_agent_drops_total",
	"Received datagrams not answered, by reason", "reason", drop_labels),
    SERIES(declines, METRIC_COUNTER, "vmdhcp_agent_declines_total",
	"DHCPDECLINE messages (address in use on the network)"),
    SERIES_LABELED(boot, METRIC_COUNTER, "vmdhcp_agent_boot_replies_total",
	"OFFERs and ACKs to network boot clients (spec.ipv4Config.networkBoot), by the answer: "
	"the file for the client architecture (option 93), the iPXE script, or other (none "
	"configured for it, unknown or malformed architecture)",
	"arch", boot_labels),
    SERIES_HIST(latency, METRIC_HISTOGRAM, "vmdhcp_agent_reply_latency_seconds",
	"Time from the kernel receiving a request (the packet ring's timestamp: waits for the "
	"agent to wake up are included) to sending its reply",
	latency_bounds),
    SERIES(bindings, METRIC_GAUGE, "vmdhcp_agent_bindings",
	"MAC to address bindings in the table (static and dynamic)"),
    SERIES(dynamic, METRIC_GAUGE, "vmdhcp_agent_dynamic_leases",
	"Leases handed out to unknown MACs (--dynamic)"),
    SERIES(available, METRIC_GAUGE, "vmdhcp_agent_pool_available",
	"Free addresses left in the pool range for --dynamic"),
    SERIES_LABELED(reloads, METRIC_COUNTER, "vmdhcp_agent_config_reloads_total",
	"Configuration reloads (SIGHUP), by result", "result", reload_labels),
    SERIES(serving, METRIC_GAUGE, "vmdhcp_agent_serving",
	"1 while the DHCP sockets are open on the interface"),
    SERIES(link_events, METRIC_COUNTER, "vmdhcp_agent_link_events_total",
	"Changes of the served interface (deleted, re-created, down, up, MAC, MTU)"),
    SERIES(lease_errors, METRIC_COUNTER, "vmdhcp_agent_lease_file_errors_total",
	"Failed writes of the lease file"),
    SERIES(lease_persistent, METRIC_GAUGE, "vmdhcp_agent_lease_file_persistent",
	"1 while --dynamic leases are written to the lease file (or none is used); 0 while "
	"it cannot be written (read-only, deleted) and leases are kept in memory only"),
    SERIES(expired, METRIC_COUNTER, "vmdhcp_agent_dynamic_expired_total",
	"Dynamic leases reclaimed: not renewed for the lease time plus the grace period"),
    SERIES(held, METRIC_GAUGE, "vmdhcp_agent_declined_held",
	"Pool addresses held after a DHCPDECLINE until their hold-down ends (--dynamic)"),
    SERIES(leader, METRIC_GAUGE, "vmdhcp_agent_leader",
	"1 while this replica answers: it holds the pool's Lease (--leader-elect) or runs "
	"without election; 0 on a standby"),
    SERIES(transitions, METRIC_COUNTER, "vmdhcp_agent_leader_transitions_total",
	"Times this replica became the active one (--leader-elect)"),
    SERIES(garp, METRIC_COUNTER, "vmdhcp_agent_gratuitous_arp_sent_total",
	"Gratuitous ARP announcements of the serverIP sent (when it is added to the "
	"interface)"),
    SERIES(foreign_replies, METRIC_COUNTER, "vmdhcp_agent_foreign_dhcp_replies_total",
	"DHCP server replies (OFFER, ACK, NAK) seen on the network from a server that is not "
	"the pool's agents"),
    SERIES(foreign_own, METRIC_COUNTER, "vmdhcp_agent_own_dhcp_replies_seen_total",
	"DHCP server replies of the pool's own agents (this one or another replica: the "
	"pool's serverIP) seen by the foreign server guard, not reported"),
    SERIES(foreign_probes, METRIC_COUNTER, "vmdhcp_agent_foreign_dhcp_probes_sent_total",
	"Probe DISCOVERs sent from the pool's reserved MAC to find foreign DHCP servers"),
    SERIES(foreign_stand_down, METRIC_GAUGE, "vmdhcp_agent_foreign_dhcp_stand_down",
	"1 while the agent answers no DHCPv4 because a foreign server is seen "
	"(foreignServers.policy StandDown)"),
    SERIES_LABELED(ha_state, METRIC_GAUGE, "vmdhcp_agent_ha_state",
	"1 for this replica's state (--leader-elect): standby, probing (ARP for the serverIP "
	"before taking it), active (holds the Lease), hold (answers without the Lease while "
	"the API server does not answer)",
	"state", ha_state_labels),
    SERIES(arp_probes, METRIC_COUNTER, "vmdhcp_agent_arp_probes_total",
	"ARP probes for the serverIP sent before taking it (--leader-elect)"),
    SERIES(arp_conflicts, METRIC_COUNTER, "vmdhcp_agent_arp_conflicts_total",
	"Times another MAC answered or claimed the serverIP while this replica probed for it "
	"or held it (--leader-elect)"),
    SERIES_LABELED(declines_ignored, METRIC_COUNTER, "vmdhcp_agent_declines_ignored_total",
	"DHCPDECLINE messages ignored: over the per-MAC limit, or not for the MAC's address",
	"reason", ignored_labels),
    SERIES(offers_pending, METRIC_GAUGE, "vmdhcp_agent_dynamic_offers_pending",
	"Addresses offered to MACs without a lease and held for their REQUEST until "
	"--offer-hold ends (--dynamic)"),
    SERIES(offers_expired, METRIC_COUNTER, "vmdhcp_agent_dynamic_offers_expired_total",
	"Offers whose hold ended without a REQUEST: the address went back to the pool "
	"(--dynamic)"),
    SERIES(offers_refused, METRIC_COUNTER, "vmdhcp_agent_dynamic_discovers_refused_total",
	"DHCPDISCOVERs from MACs without a lease dropped: --max-pending-offers offers were "
	"pending (--dynamic)"),
    SERIES(offers_evicted, METRIC_COUNTER, "vmdhcp_agent_dynamic_offers_evicted_total",
	"Offers taken over by a DHCPDISCOVER from a new MAC while --max-pending-offers "
	"were pending (the offer at least 250 ms old; --dynamic)"),
    SERIES_LABELED(rx_passes, METRIC_COUNTER, "vmdhcp_agent_receive_passes_total",
	"Passes over the DHCP packet socket, each reading what is waiting and answering it: "
	"wakeup = the first of an event-loop wakeup (the socket readable), backlog = begun at "
	"once after answering because more had arrived meanwhile, after_wait = after a "
	"coalescing wait (above 20 000 requests/s only)",
	"trigger", pass_labels),
    SERIES(rx_yields, METRIC_COUNTER, "vmdhcp_agent_receive_budget_yields_total",
	"Wakeups that read their budget of frames with more still waiting, and gave the "
	"event loop its turn before reading on"),
    SERIES(kernel_received, METRIC_COUNTER, "vmdhcp_agent_kernel_received_total",
	"Frames the kernel passed through the DHCP packet socket's filter, those dropped "
	"included (PACKET_STATISTICS tp_packets, accumulated)"),
    SERIES(kernel_drops, METRIC_COUNTER, "vmdhcp_agent_kernel_drops_total",
	"Frames for the DHCP packet socket the kernel dropped because its receive ring was "
	"full: requests never read (PACKET_STATISTICS tp_drops, accumulated)"),
    SERIES(rx_wait, METRIC_COUNTER, "vmdhcp_agent_receive_wait_seconds_total",
	"Time the DHCP socket was left unread on purpose to serve several requests per wakeup "
	"(coalescing: above 20 000 requests/s only, at most 800 us at a time)"),
    /* DHCPv6: the pool's ipv6Config (all zero without one) */
    SERIES_LABELED(rx6, METRIC_COUNTER, "vmdhcp_agent_dhcp6_packets_received_total",
	"DHCPv6 messages received from clients, by message type (the innermost for relayed)",
	"type", rx6_labels),
    SERIES_LABELED(tx6, METRIC_COUNTER, "vmdhcp_agent_dhcp6_replies_sent_total",
	"DHCPv6 replies sent, by message type", "type", tx6_labels),
    SERIES_LABELED(drops6, METRIC_COUNTER, "vmdhcp_agent_dhcp6_drops_total",
	"Received DHCPv6 messages and router solicitations not answered, by reason "
	"(use_multicast: answered with that status)",
	"reason", drop6_labels),
    SERIES_LABELED(status6, METRIC_COUNTER, "vmdhcp_agent_dhcp6_status_sent_total",
	"IAs and messages answered with a status code other than Success, by code", "code",
	status6_labels),
    SERIES(declines6, METRIC_COUNTER, "vmdhcp_agent_dhcp6_declines_total",
	"DHCPv6 DECLINE messages (address in use on the network)"),
    SERIES_HIST(latency6, METRIC_HISTOGRAM, "vmdhcp_agent_dhcp6_reply_latency_seconds",
	"Time from the kernel receiving a DHCPv6 request (the packet ring's timestamp) to "
	"sending its reply",
	latency_bounds),
    SERIES(bindings6, METRIC_GAUGE, "vmdhcp_agent_dhcp6_bindings",
	"MAC to IPv6 address bindings in the DHCPv6 table"),
    SERIES(serving6, METRIC_GAUGE, "vmdhcp_agent_dhcp6_serving",
	"1 while the DHCPv6 sockets are open on the interface"),
    SERIES(rs6, METRIC_COUNTER, "vmdhcp_agent_dhcp6_router_solicitations_total",
	"Router solicitations received"),
    SERIES(ra6, METRIC_COUNTER, "vmdhcp_agent_dhcp6_router_advertisements_sent_total",
	"Router advertisements sent, unsolicited and in answer to solicitations"),
    SERIES(na6, METRIC_COUNTER, "vmdhcp_agent_dhcp6_neighbor_advertisements_sent_total",
	"Unsolicited neighbor advertisements of the IPv6 serverIP sent (when it is added to "
	"the interface)"),
    SERIES(kernel_drops6, METRIC_COUNTER, "vmdhcp_agent_dhcp6_kernel_drops_total",
	"Frames for the DHCPv6 packet socket the kernel dropped because its receive ring was "
	"full (PACKET_STATISTICS tp_drops, accumulated)"),
    SERIES_LABELED(rx_passes6, METRIC_COUNTER, "vmdhcp_agent_dhcp6_receive_passes_total",
	"Passes over the DHCPv6 packet socket's receive ring, as "
	"vmdhcp_agent_receive_passes_total: wakeup = the first of an event-loop wakeup, backlog "
	"= begun at once after answering because more had arrived meanwhile, after_wait = after "
	"a coalescing wait (above 10 000 requests/s only)",
	"trigger", pass_labels),
    SERIES(rx_yields6, METRIC_COUNTER, "vmdhcp_agent_dhcp6_receive_budget_yields_total",
	"DHCPv6 wakeups that read their budget of frames with more still waiting, and gave the "
	"event loop its turn before reading on"),
    SERIES(rx_wait6, METRIC_COUNTER, "vmdhcp_agent_dhcp6_receive_wait_seconds_total",
	"Time the DHCPv6 socket was left unread on purpose to serve several requests per wakeup "
	"(coalescing: above 10 000 requests/s only, at most 200 us at a time)"),
};

/* Foreign DHCP servers (guard.c): one series per server in the guard's table (at most
 * AGENT_GUARD_SERVERS_MAX, so the MAC and IP labels stay bounded). */
static void
emit_foreign(struct metric_emitter *e, void *userdata)
{
	const struct agent *a = userdata;

	for (size_t i = 0; i < a->guard.n; i++) {
		char mac[MAC_STRLEN], ip[IPV4_STRLEN];
		struct metric_label l[2] = {{"mac", mac}, {"ip", ip}};

		mac_format(a->guard.servers[i].mac, mac);
		ipv4_format(a->guard.servers[i].ip, ip);
		metric_emit(e, l, 2, 1);
	}
}

/* Kubernetes mode: the IPPool source's series. */
static const struct series kube_series[] = {
    SERIES(kube_synced, METRIC_GAUGE, "vmdhcp_agent_kube_synced",
	"1 while a valid version of the IPPool is in the table"),
    SERIES(kube_last_sync, METRIC_GAUGE, "vmdhcp_agent_kube_last_sync_timestamp_seconds",
	"Unix time of the last IPPool version applied to the table"),
    SERIES(kube_reconnects, METRIC_COUNTER, "vmdhcp_agent_kube_watch_reconnects_total",
	"IPPool watch streams opened after the first"),
    SERIES(kube_errors, METRIC_COUNTER, "vmdhcp_agent_kube_errors_total",
	"Failed IPPool list or watch attempts (retried with backoff)"),
    SERIES(kube_relists, METRIC_COUNTER, "vmdhcp_agent_kube_relists_total",
	"IPPool relists forced by 410 Gone"),
    SERIES(kube_malformed, METRIC_COUNTER, "vmdhcp_agent_kube_malformed_total",
	"IPPool versions refused as malformed (the previous one kept)"),
    SERIES(kube_duplicate_macs, METRIC_GAUGE, "vmdhcp_agent_kube_duplicate_macs",
	"MACs under more than one address in the IPPool's status (only the lowest is served)"),
};

/* With --snapshot: the warm start's. */
static const struct series snapshot_series[] = {
    SERIES(snap_stale, METRIC_GAUGE, "vmdhcp_agent_snapshot_stale",
	"1 while the table served is the snapshot read at start (not yet synced with "
	"the API server)"),
    SERIES(snap_writes, METRIC_COUNTER, "vmdhcp_agent_snapshot_writes_total",
	"Snapshots of the table written"),
    SERIES(snap_errors, METRIC_COUNTER, "vmdhcp_agent_snapshot_write_errors_total",
	"Snapshots that could not be written (the previous one is kept)"),
    SERIES(snap_bytes, METRIC_GAUGE, "vmdhcp_agent_snapshot_bytes",
	"Size of the last snapshot written or read"),
    SERIES(snap_write_seconds, METRIC_GAUGE, "vmdhcp_agent_snapshot_write_seconds",
	"Time the last snapshot write took (encode, write, fsync, rename)"),
};

/* Registers series[0..n) into m, each handle into mx. 0, or -ENOMEM. */
static int
add_series(struct metrics *m, struct agent_metrics *mx, const struct series *series, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct series *s = &series[i];
		struct metric **dst = (struct metric **)((char *)mx + s->off);

		*dst = metrics_add(m, s->type, s->name, s->help, s->label, s->values, s->n_values,
		    s->buckets, s->n_buckets);
		if (*dst == NULL)
			return -ENOMEM;
	}
	return 0;
}

int
agent_kube_metrics_setup(struct agent *a)
{
	struct metrics *m = a->mx.registry;

	if (add_series(m, &a->mx, kube_series, ELEMENTSOF(kube_series)) < 0)
		return -ENOMEM;
	if (a->opts.snapshot_path != NULL &&
	    add_series(m, &a->mx, snapshot_series, ELEMENTSOF(snapshot_series)) < 0)
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
	for (size_t k = 0; k < _DHCP_BOOT_MAX; k++)
		boot_labels[k] = dhcp_boot_kind_name((enum dhcp_boot_kind)k);
	for (size_t i = 0; i < ELEMENTSOF(rx6_types); i++)
		rx6_labels[i] = dhcp6_message_type_name(rx6_types[i]);
	for (size_t i = 0; i < ELEMENTSOF(tx6_types); i++)
		tx6_labels[i] = dhcp6_message_type_name(tx6_types[i]);
	for (size_t d = 0; d < _DHCP6_DROP_MAX; d++)
		drop6_labels[d] = dhcp6_drop_reason_name((int)d);
	for (size_t b = 0; b < DHCP_LATENCY_BUCKETS - 1; b++)
		latency_bounds[b] = (double)dhcp_latency_bounds_usec[b] / 1e6;
	if ((r = metrics_new(&a->mx.registry)) < 0)
		return r;
	m = a->mx.registry;
	if (metrics_add_build_info(m, a->opts.version ? a->opts.version : "unknown",
		a->opts.revision ? a->opts.revision : "unknown") == NULL)
		return -ENOMEM;
	if ((r = metrics_add_process(m)) < 0)
		return r;
	if ((r = add_series(m, &a->mx, agent_series, ELEMENTSOF(agent_series))) < 0)
		return r;
	a->mx.foreign_servers = metrics_add_dynamic(m, METRIC_GAUGE,
	    "vmdhcp_agent_foreign_dhcp_servers",
	    "1 per foreign DHCP server seen on the network (a reply from another MAC and "
	    "server address than the pool's agents'), until two probe intervals pass without one",
	    emit_foreign, a);
	if (a->mx.foreign_servers == NULL)
		return -ENOMEM;
	metrics_set_collect(m, collect, a);
	return 0;
}

bool
agent_ready(void *userdata, char *reason, size_t len)
{
	struct agent *a = userdata;
	const struct agent_link_state *st;

	const struct agent_config *cfg;

	/* the snapshot is served until the source is synced */
	if (a->warm.snap == NULL && !a->src.ops->ready(a->src.src, reason, len))
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
	if (a->sock.open && st->exists && st->up && st->ifindex == a->sock.open_ifindex) {
		size_t n = 0;
		if (a->warm.snap != NULL)
			n = (size_t)snprintf(reason, len,
			    "stale: serving the snapshot written at %s, not synced with the API "
			    "server yet",
			    a->warm.written);
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
