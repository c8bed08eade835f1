/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_METRICS_H
#define VMDHCP_AGENT_METRICS_H

/*
 * metrics.c: what the agent's HTTP endpoint reports: the /metrics series and the /readyz
 * verdict. Its state is struct agent's `mx`: the registry and the handles of the series it
 * registered, written by metrics.c only: it reads the other parts' counts when scraped.
 */

#include <stdbool.h>
#include <stddef.h>

struct agent;
struct metric;
struct metrics;

struct agent_metrics {
	struct metrics *registry;
	struct metric *kube_synced, *kube_last_sync, *kube_reconnects, *kube_errors, *kube_relists,
	    *kube_malformed, *kube_duplicate_macs;
	struct metric *rx, *tx, *drops, *declines, *latency, *bindings, *dynamic, *available,
	    *reloads, *serving, *link_events, *lease_errors, *expired, *held, *declines_ignored;
	struct metric *boot; /* vmdhcp_agent_boot_replies_total{arch} */
	struct metric *offers_pending, *offers_expired, *offers_refused, *offers_evicted;
	/* the DHCP socket's receive passes (dhcp/moderate.h) and its kernel counters */
	struct metric *rx_passes, *rx_yields, *kernel_received, *kernel_drops, *rx_wait;
	struct metric *ha_state, *arp_probes, *arp_conflicts;
	struct metric *leader, *transitions, *garp, *snap_stale, *snap_writes, *snap_errors,
	    *snap_bytes, *snap_write_seconds;
	struct metric *lease_persistent;
	/* foreign DHCP servers (guard.c) */
	struct metric *foreign_replies, *foreign_own, *foreign_probes, *foreign_stand_down,
	    *foreign_servers;
	/* DHCPv6 (the pool's ipv6Config), beside the IPv4 series */
	struct metric *rx6, *tx6, *drops6, *status6, *declines6, *latency6, *bindings6, *serving6,
	    *rs6, *ra6, *na6, *kernel_drops6, *rx_passes6, *rx_yields6, *rx_wait6;
};

/* vmdhcp_agent_config_reloads_total's results and vmdhcp_agent_declines_ignored_total's
 * reasons (their labels, in this order) */
enum { RELOAD_OK, RELOAD_ERROR };
enum { IGNORED_RATE_LIMITED, IGNORED_NOT_BOUND };

/* The registry and the series of both modes. 0 or negative errno. */
int agent_metrics_setup(struct agent *a);
/* Kubernetes mode: the IPPool source's series (and the snapshot's with --snapshot). */
int agent_kube_metrics_setup(struct agent *a);
/* httpd's /readyz (userdata: the agent): true when serving, else false and the reason. */
bool agent_ready(void *userdata, char *reason, size_t len);

#endif
