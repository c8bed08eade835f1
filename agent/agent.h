/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_AGENT_H
#define VMDHCP_AGENT_AGENT_H

/*
 * vm-dhcp-agent: the agent as main.c sees it (struct agent_opts, agent_new and the calls on
 * the running agent: serve.c's header). Every other module has its own header (a file
 * includes the headers of what it uses; *-internal.h are shared by the files of one module):
 *
 *   link.c         link.h: libnl: interface state (ifindex, MAC, up), serverIP/prefix, events
 *   source*.c      source.h: the pool's source, local mode (YAML IPPool/VMNetCfg documents)
 *                  or Kubernetes mode (an informer on the one IPPool) -> struct agent_config
 *   pool-config.c  pool-config.h: struct agent_config, an IPPool spec -> it, for both sources
 *   dynamic.c      dynamic.h: --dynamic leases: the pool over the lease file, reload carry-over
 *   dynamic-alloc.c   allocation, identifier moves, pending offers
 *   dynamic-expiry.c  renewal, DECLINE holds, expiry
 *   dynamic-state.c   their shared in-memory state: entries, held addresses, offers
 *   decline-marks.c   decline-marks.h: the engine's DECLINE marks, cleared after the hold-down
 *   apply-config.c    apply-config.h: agent_apply_config: options, bindings and leases into
 *                     the engine; agent_apply_config6: the IPv6 part into the DHCPv6 engine
 *   leasefile*.c   leasefile.h: local-mode dynamic leases: snapshot (atomic) + append journal
 *   snapshot*.c    snapshot.h: Kubernetes mode: warm-start snapshot of the table and options,
 *                  checksummed
 *   arp.c          arp.h: --leader-elect on the wire: gratuitous ARP, ARP probes, the fence socket
 *   caps.c         caps.h: capabilities: raised at start, dropped once the sockets are open
 *   listen.c       listen.h: where the HTTP endpoint may listen (never the served interface)
 *   decisions.c    decisions.h: the DHCP decision log
 *   dump.c         dump.h: --enable-cache-dump-api's GET /leases
 *   serve.c        this header: the running agent: agent_new/agent_free, the source, the
 *                  engine's callbacks; serve-internal.h: struct agent, the composition of the
 *                  parts owned by the files below, for the files that share it
 *   serve6.c       serve6.h: the DHCPv6 engine of the pool's ipv6Config, its callbacks
 *   sockets.c      sockets.h: DHCP and ARP sockets <-> libevent, the serverIP, link events,
 *                  capability drop
 *   sockets6.c     sockets6.h: the DHCPv6 sockets beside them, the IPv6 serverIP, the
 *                  unsolicited RA timer and NA
 *   ra-timer.c     ra-timer.h: when the next unsolicited RA goes (RFC 4861 §6.2.4), pure
 *   failover-fsm.c failover-fsm.h: --leader-elect's decisions (standby/probing/active/hold), a
 *                  pure state machine
 *   failover.c     failover.h: its glue: the Lease's callbacks, ARP reads and timers fed to the
 *                  machine, its actions done (through sockets.c's hooks)
 *   guard.c        guard.h: foreign DHCP servers on the network: the guard socket, the probe,
 *                  the table, StandDown, the IPPool condition and Events
 *   warmstart.c    warmstart.h: --snapshot: written on change, served at start until synced
 *   metrics.c      metrics.h: /metrics series and /readyz
 *   cli.c          cli.h: the command line: flags and the checks across them
 *   main.c         start-up, signals
 *
 * Calls go one way, from the higher file to the lower: main.c > cli.c, serve.c > serve6.c >
 * metrics.c, warmstart.c > sockets.c > guard.c, sockets6.c > failover.c > failover-fsm.c, arp.c,
 * link.c, ra-timer.c, caps.c, listen.c, decisions.c, dump.c; a lower file reaches a higher one only
 * through a function pointer the higher one set (failover.c does what it decides through
 * sockets.c's hooks).
 *
 * Fallible functions return negative errno; those that take `err` fill it with one line
 * fit for the user (naming the file and line or field) on failure.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/decisions.h" /* enum agent_log_dhcp, in struct agent_opts */
#include "dhcp/dhcp.h"
#include "lib/log.h"

struct agent_config;
struct event_base;

/* ---- serve.c: the running agent ---------------------------------------------------- */

struct agent_opts {
	const char *config_path;
	const char *ippool_ref;
	const char *ifname;
	const char *lease_path; /* NULL: leases kept in memory only */
	const char *listen;	/* NULL: no HTTP */
	bool dynamic;
	bool assign_server_ip;
	/* --dhcp6-duid-mac: a DHCPv6 client whose MAC has no binding is matched by the Ethernet
	 * address of its DUID-LL/DUID-LLT (dhcp6_server_set_duid_mac); off by default */
	bool dhcp6_duid_mac;
	/* Kubernetes mode: the pool ippool_ref is watched through the API server; no config */
	bool kube;
	const char *kubeconfig;	 /* NULL: $KUBECONFIG, else in-cluster */
	const char *kubecontext; /* the kubeconfig's context; NULL: its current-context */
	bool dry_run;		 /* sync (and serve /readyz, /metrics) without sockets or netlink */
	/*
	 * Once the DHCP sockets are open and the server address set, drop every capability but
	 * CAP_NET_ADMIN (kept with assign_server_ip, to re-add the address after link events):
	 * the sockets can then never be reopened, so a change that needs it ends the process.
	 * Always on in Kubernetes mode; --drop-capabilities in local mode.
	 */
	bool drop_capabilities;
	/*
	 * --dynamic: a lease not renewed (ACKed) for its lease time plus this grace is reclaimed.
	 * AGENT_DEFAULT: half the pool's lease time.
	 */
	uint32_t lease_grace_s;
	/*
	 * Seconds a DECLINEd address is held before it is offered again (static and dynamic);
	 * AGENT_DEFAULT: AGENT_DECLINE_HOLD_DEFAULT.
	 */
	uint32_t decline_hold_s;
	/* --dynamic: --offer-hold (0: AGENT_OFFER_HOLD_DEFAULT), --max-pending-offers (0: default)
	 */
	uint32_t offer_hold_s;
	uint32_t max_offers;
	enum agent_log_dhcp log_dhcp; /* --log-dhcp */
	/*
	 * Kubernetes mode, --leader-elect: replicas of one pool elect the active one through the
	 * Lease lease_ns/lease_name; identity names this replica. Only the active one has the
	 * serverIP on its interface (announced with gratuitous ARP) and answers; a standby keeps
	 * its table synced and its sockets open, drains them and answers nothing. Durations as
	 * kube_leader_opts (client-go's LeaseDuration, RenewDeadline, RetryPeriod).
	 */
	bool leader_elect;
	const char *lease_ns, *lease_name, *identity;
	uint64_t lease_duration_usec, renew_deadline_usec, retry_period_usec;
	/* Kubernetes mode: the warm-start snapshot (snapshot.h); NULL: none */
	const char *snapshot_path;
	/* for vmdhcp_build_info; NULL: "unknown" */
	const char *version, *revision;
	/* --enable-cache-dump-api: GET /leases on the HTTP endpoint (dump.c); needs listen */
	bool dump_api;
};

struct agent;

/*
 * Builds the agent from a loaded config (takes cfg): engine, bindings, dynamic pool,
 * lease file, link watcher, HTTP endpoint, signal handlers. err is filled on failure.
 * In Kubernetes mode (opts->kube) cfg is NULL: the IPPool source is started instead.
 */
int agent_new(struct event_base *base, const struct agent_opts *opts, struct agent_config *cfg,
    struct agent **ret, char *err, size_t errlen);
struct agent *agent_free(struct agent *a);
/*
 * SIGTERM (failover.c): with --leader-elect, stops answering, removes the serverIP and
 * releases the Lease so a standby takes over at once (given up after 2 s: it then waits for
 * the Lease to expire); done(userdata) is called from the loop when that is over (at once
 * otherwise).
 */
int agent_stop(struct agent *a, void (*done)(void *userdata), void *userdata);
/*
 * 0 while the agent runs; non-zero once it broke the event loop because it must be
 * restarted (its capabilities were dropped and its sockets need reopening): main's exit status.
 */
int agent_exit_status(const struct agent *a);
/* Re-reads the config file; a bad file is logged and the old config kept. */
int agent_reload(struct agent *a);
/*
 * The second half of agent_reload, for a file parsed in steps (agent_config_parser_step): r and
 * err its result, cfg (taken) the new configuration when r is 0. Applies it or keeps the old
 * one, logs and counts the reload. Local mode only.
 */
int agent_reload_done(struct agent *a, int r, struct agent_config *cfg, const char *err);

#endif
