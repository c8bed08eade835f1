/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_AGENT_H
#define VMDHCP_AGENT_AGENT_H

/*
 * vm-dhcp-agent: the agent as main.c sees it (struct agent_opts, agent_new and the calls on
 * the running agent), and the sections below of the files that have no header of their own
 * yet. One header per module:
 *
 *   link.c         link.h: libnl: interface state (ifindex, MAC, up), serverIP/prefix, events
 *   source*.c      source.h: the pool's source, local mode (YAML IPPool/VMNetCfg documents)
 *                  or Kubernetes mode (an informer on the one IPPool) -> struct agent_config
 *   pool-config.c  pool-config.h: struct agent_config, an IPPool spec -> it, for both sources
 *   dynamic.c      --dynamic leases: allocation, DECLINE holds, expiry; agent_apply_config
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
 *   sockets.c      sockets.h: DHCP and ARP sockets <-> libevent, the serverIP, link events,
 *                  capability drop
 *   failover-fsm.c failover-fsm.h: --leader-elect's decisions (standby/probing/active/hold), a
 *                  pure state machine
 *   failover.c     failover.h: its glue: the Lease's callbacks, ARP reads and timers fed to the
 *                  machine, its actions done (through sockets.c's hooks)
 *   warmstart.c    warmstart.h: --snapshot: written on change, served at start until synced
 *   metrics.c      metrics.h: /metrics series and /readyz
 *   cli.c          cli.h: the command line: flags and the checks across them
 *   main.c         start-up, signals
 *
 * Calls go one way, from the higher file to the lower: main.c > cli.c, serve.c > metrics.c,
 * warmstart.c > sockets.c > failover.c > failover-fsm.c, arp.c, link.c, caps.c, listen.c,
 * decisions.c, dump.c; a lower file reaches a higher one only through a function pointer the
 * higher one set (failover.c does what it decides through sockets.c's hooks).
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

#include "agent/caps.h"	  /* transitional */
#include "agent/dump.h"	  /* transitional */
#include "agent/link.h"	  /* transitional */
#include "agent/listen.h" /* transitional */

struct event_base;
struct ipam_pool;

#define AGENT_ERR_MAX 512

/* the sections of these modules, in their own headers */
#include "agent/leasefile.h"   /* transitional */
#include "agent/pool-config.h" /* transitional */
#include "agent/snapshot.h"    /* transitional */
#include "agent/source.h"      /* transitional */

/* ---- serve.c: the running agent ---------------------------------------------------- */

struct agent_opts {
	const char *config_path;
	const char *ippool_ref;
	const char *ifname;
	const char *lease_path; /* NULL: leases kept in memory only */
	const char *listen;	/* NULL: no HTTP */
	bool dynamic;
	bool assign_server_ip;
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

/*
 * ---- dynamic.c: --dynamic leases -------------------------------------------------------
 *
 * Unknown MACs get the lowest free address of the pool range (sticky per client), recorded in
 * the lease file. A lease is keyed by the client identifier when the client sends one, else by
 * 0x01 + MAC (see AGENT_ID_MIN), and bound to one MAC, the engine's binding: a known identifier
 * from a MAC without a lease takes its lease to that MAC (the old MAC's binding goes); a MAC
 * with a lease is served it whatever identifier it sends, and an ACK with another real
 * identifier keys the lease by that one (agent_dynamic_renew_id). A lease lives for the pool's
 * lease time plus a grace period after the last ACK
 * the engine sent for it (agent_dynamic_renew_id from the engine's on_ack); leases loaded from the
 * lease file start afresh (now + lease + grace: an address possibly in use is never handed out
 * again early). An expired lease leaves the engine and the lease file and its address goes back
 * to the pool; its last MAC keeps an in-memory hint of it, so it gets that address again while
 * it is free. A DECLINEd address is held for the hold-down period (RFC 2131 §3.1; Kea's probation
 * period), at most AGENT_DECLINE_LIMIT DECLINEs per MAC are honoured per hold-down period, and
 * at most half the addresses the range can hand out are held at once (the oldest hold is
 * released first). Time is the monotonic microsecond clock of agent_dynamic_opts, the one the
 * agent gives the engine too (dhcp_server_set_clock).
 */
#define AGENT_DEFAULT UINT32_MAX	 /* an agent_opts / agent_dynamic_opts value not set */
#define AGENT_DECLINE_HOLD_DEFAULT 86400 /* seconds: Kea's decline-probation-period */
#define AGENT_DECLINE_LIMIT 4		 /* DECLINEs honoured per MAC per hold-down period */
/*
 * Pending offers: a DISCOVER from a MAC without a lease reserves an address for
 * AGENT_OFFER_HOLD_DEFAULT seconds (--offer-hold) after its last OFFER, nothing more; only a
 * REQUEST commits a lease (the lease file's line). At most one per MAC (a repeated DISCOVER is
 * offered the same address) and max_offers in all: by default half of what the range can hand
 * out, at most AGENT_OFFERS_MAX (--max-pending-offers). Over it a DISCOVER from a new MAC is
 * refused (-EBUSY, counted): a flood of made-up MACs holds at most that many addresses, for
 * seconds, and costs no memory beyond it.
 */
#define AGENT_OFFER_HOLD_DEFAULT 10 /* seconds */
#define AGENT_OFFERS_MAX 4096

struct agent_dynamic_opts {
	uint64_t (*clock)(void *userdata); /* monotonic usec; NULL: lib/clock.h clock_now_usec */
	void *clock_userdata;
	uint32_t grace_s;	 /* AGENT_DEFAULT: lease time / 2 */
	uint32_t decline_hold_s; /* AGENT_DEFAULT: AGENT_DECLINE_HOLD_DEFAULT */
	uint32_t offer_hold_s;	 /* 0: AGENT_OFFER_HOLD_DEFAULT */
	size_t max_offers; /* 0: half of what the range can hand out, at most AGENT_OFFERS_MAX */
};

/* Pending offers now and since start (the counters carry over a reload). */
struct agent_offer_stats {
	size_t pending, max_pending;
	uint64_t expired;   /* holds that ended without a REQUEST: the address went back */
	uint64_t refused;   /* DISCOVERs from new MACs refused: max_pending were pending */
	uint64_t evicted;   /* offers taken over by a DISCOVER at the cap (250 ms old at least) */
	uint64_t committed; /* leases made by a REQUEST (agent_dynamic_request_id, _allocate_id) */
};

struct agent_dynamic;
/* agent_dynamic_new_opts() with the default options and no previous state. */
int agent_dynamic_new(
    const struct agent_config *cfg, struct leasefile *lf, struct agent_dynamic **ret);
/*
 * The dynamic pool of cfg (borrowed) over the leases of lf (borrowed; must outlive it): leases
 * that no longer fit (outside the range, excluded, a static MAC, a taken address) are removed
 * from lf. opts may be NULL (defaults). prev (may be NULL), the pool being replaced on a
 * reload: its expiries, hints, held addresses and DECLINE counts carry over where they still
 * fit; without it every lease gets now + lease time + grace. Negative errno.
 */
int agent_dynamic_new_opts(const struct agent_config *cfg, struct leasefile *lf,
    const struct agent_dynamic_opts *opts, const struct agent_dynamic *prev,
    struct agent_dynamic **ret);
struct agent_dynamic *agent_dynamic_free(struct agent_dynamic *d);
/*
 * Allocation for a MAC the engine has no binding for, whose request carried the client
 * identifier (id, id_len) (NULL: none; dhcp_server_client_id): the MAC's lease if it has one;
 * else the identifier's lease, moved to mac when it was bound to another MAC (whose binding
 * leaves s, when s is not NULL and still binds it there; the caller's engine then binds mac);
 * else mac's hint's address while free, else the lowest free address, recorded in the lease
 * file with a fresh expiry. -ENOSPC when full, -EINVAL for an identifier over AGENT_ID_MAX
 * bytes, or the lease file's error (nothing changed).
 */
int agent_dynamic_allocate_id(struct agent_dynamic *d, struct dhcp_server *s, const uint8_t mac[6],
    const uint8_t *id, size_t id_len, uint32_t *ret_ip);
/* The same without an identifier (keyed by mac) and without an engine to update. */
int agent_dynamic_allocate(struct agent_dynamic *d, const uint8_t mac[6], uint32_t *ret_ip);
/*
 * A DISCOVER from a MAC the engine has no binding for (the engine's on_offer). 1 and *ret_ip:
 * the MAC's lease, as agent_dynamic_allocate_id finds it (its own, or its identifier's moved
 * to it): the caller binds it. 0 and *ret_ip: an address offered, not leased: mac's pending
 * offer (the same address as before, held from now on), else a new one, mac's hint's address
 * while free, else the lowest free one; nothing is written to the lease file. -EBUSY: the cap
 * of pending offers is reached (counted in refused); -ENOSPC: the range is full; -EINVAL: an
 * identifier over AGENT_ID_MAX bytes.
 */
int agent_dynamic_offer_id(struct agent_dynamic *d, struct dhcp_server *s, const uint8_t mac[6],
    const uint8_t *id, size_t id_len, uint32_t *ret_ip);
/*
 * A REQUEST (SELECTING, INIT-REBOOT, RENEWING/REBINDING) from a MAC the engine has no binding
 * for, naming requested (option 50, else ciaddr; dhcp_server_requested_ip): the MAC's lease
 * when it has one (*ret_ip, which the engine compares with requested); else requested when it
 * is offered to mac, or free (a hold that ended, a lease that expired): committed as mac's lease
 * (the lease file's line, a fresh expiry), its other offer let go. -EADDRNOTAVAIL: requested
 * is none or not free (the engine NAKs a SELECTING or RENEWING client); the lease file's error
 * when the lease could not be written (nothing changed: the caller tells the engine -EAGAIN, to
 * stay silent while the client retries).
 * While the last lease could not be written, agent_dynamic_offer_id writes a new MAC's lease at
 * once (agent_dynamic_allocate_id, returning 1) instead of offering, until one is written.
 */
int agent_dynamic_request_id(struct agent_dynamic *d, struct dhcp_server *s, const uint8_t mac[6],
    const uint8_t *id, size_t id_len, uint32_t requested, uint32_t *ret_ip);
/* Pending offers and their counters. */
void agent_dynamic_offer_stats(const struct agent_dynamic *d, struct agent_offer_stats *ret);
/* mac's pending offer: its address and when its hold ends. 0, or -ENOENT. */
int agent_dynamic_offered(
    const struct agent_dynamic *d, const uint8_t mac[6], uint32_t *ret_ip, uint64_t *ret_due);
/*
 * A DECLINE of mac's dynamic lease ip (the lease bound to mac, whatever its key: the engine's
 * binding is the MAC's): the address is in use on the network, so it is held for
 * the hold-down period and mac moves to the lowest free address (*ret_ip, recorded in the lease
 * file). -ENOENT when ip is not mac's dynamic lease, -EBUSY when mac already had
 * AGENT_DECLINE_LIMIT DECLINEs honoured this hold-down period (nothing changes: the caller
 * counts and ignores it), -ENOSPC when the pool is full.
 */
int agent_dynamic_decline(
    struct agent_dynamic *d, const uint8_t mac[6], uint32_t ip, uint32_t *ret_ip);
/*
 * The engine ACKed mac on ip for a request with the client identifier (id, id_len) (NULL:
 * none): if that is the lease bound to mac, it now expires lease + grace from now, and when
 * the identifier is a real one (not 0x01 + mac) that is not the lease's key and has no lease
 * of its own, the lease is keyed by it from now on (a line in the lease file). 0; -ENOENT when
 * ip is not mac's lease; the lease file's error when the new key could not be written (the
 * lease is renewed and keeps its key).
 */
int agent_dynamic_renew_id(
    struct agent_dynamic *d, const uint8_t mac[6], const uint8_t *id, size_t id_len, uint32_t ip);
/* The same without an identifier: renews, keeps the key. */
int agent_dynamic_renew(struct agent_dynamic *d, const uint8_t mac[6], uint32_t ip);
/*
 * Reclaims what is due, looking at no more than budget entries and held addresses (the
 * rest waits for the next call): expired leases leave s (when s still binds mac to them; s
 * may be NULL) and the lease file (leasefile_remove: the caller flushes or compacts), and
 * their addresses go back to the pool; held addresses whose hold-down is over go back too, and
 * so do the addresses of pending offers whose hold is over (counted in the offer stats).
 * Returns the number of leases expired (so the caller knows to persist the lease file).
 */
size_t agent_dynamic_expire(struct agent_dynamic *d, struct dhcp_server *s, size_t budget);
/* Free addresses left in the pool range. */
size_t agent_dynamic_available(const struct agent_dynamic *d);
/* DECLINEd addresses held now, and the most that may be held at once. */
size_t agent_dynamic_held(const struct agent_dynamic *d);
size_t agent_dynamic_held_max(const struct agent_dynamic *d);
/* When the lease bound to mac expires (the clock of opts; UINT64_MAX: never): 0, or -ENOENT. */
int agent_dynamic_expiry(const struct agent_dynamic *d, const uint8_t mac[6], uint64_t *ret_usec);

/*
 * The engine's DECLINE marks of bindings that stay where they are (static bindings; dynamic
 * ones whose DECLINE was not honoured): the engine answers such a MAC no more until its mark
 * is cleared, which agent_marks_expire does once the hold-down is over; the engine itself
 * clears it only when the binding's address changes, which a static binding's never does.
 * A MAC is recorded once, at its first DECLINE (its hold-down is not extended by more).
 */
struct agent_marks;
int agent_marks_new(uint32_t hold_s, struct agent_marks **ret);
struct agent_marks *agent_marks_free(struct agent_marks *m);
/* Records mac's mark on ip at now (a MAC already recorded keeps its time). -ENOMEM. */
int agent_marks_add(struct agent_marks *m, const uint8_t mac[6], uint32_t ip, uint64_t now);
/* Clears in s the marks whose hold-down is over at now (budget entries at most); returns how many.
 */
size_t agent_marks_expire(
    struct agent_marks *m, struct dhcp_server *s, uint64_t now, size_t budget);
size_t agent_marks_count(const struct agent_marks *m);

/*
 * Pushes cfg (borrowed) into the engine: options, then a full binding resync of the static
 * bindings plus every dynamic lease not shadowed by a static one. Returns the number of
 * bindings removed by the resync, or negative errno with err filled.
 */
int agent_apply_config(struct dhcp_server *s, const struct agent_config *cfg,
    struct agent_dynamic *dyn, char *err, size_t errlen);

#endif
