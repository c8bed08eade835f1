/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_AGENT_H
#define VMDHCP_AGENT_AGENT_H

/*
 * vm-dhcp-agent: shared context of the program's parts (agent/ only).
 *
 *   link.c         libnl: interface state (ifindex, MAC, up), serverIP/prefix, link events
 *   source*.c      the pool's source, local mode or Kubernetes mode (source.h)
 *   pool-config.c  struct agent_config, an IPPool spec -> it, for both sources (pool-config.h)
 *   dynamic.c      --dynamic leases: allocation, DECLINE holds, expiry; agent_apply_config
 *   leasefile*.c   local-mode dynamic leases: snapshot (atomic) + append journal (leasefile.h)
 *   snapshot*.c    Kubernetes mode: warm-start snapshot of the table and options, checksummed
 *                  (snapshot.h)
 *   ha.c           --leader-elect on the wire: gratuitous ARP, ARP probes, the ARP fence socket
 *   caps.c         capabilities: raised at start, dropped once the sockets are open
 *   listen.c       where the HTTP endpoint may listen (never on the served interface)
 *   serve.c        the running agent: agent_new/agent_free, the source, the engine's callbacks
 *   sockets.c      DHCP and ARP sockets <-> libevent, the serverIP, link events, capability drop
 *   failover.c     --leader-elect: standby/probing/active/hold, ARP fencing, Lease callbacks
 *   warmstart.c    --snapshot: written on change, served at start until synced
 *   metrics.c      /metrics series and /readyz
 *   decisions.c    the DHCP decision log
 *                  (all six but decisions.c share struct agent: serve-internal.h)
 *   main.c         flags, start-up, signals
 *
 * Fallible functions return negative errno; those that take `err` fill it with one line
 * fit for the user (naming the file and line or field) on failure.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dhcp/dhcp.h"
#include "lib/log.h"

struct event_base;
struct ipam_pool;

#define AGENT_ERR_MAX 512

/* the sections of these modules, in their own headers */
#include "agent/leasefile.h"   /* transitional */
#include "agent/pool-config.h" /* transitional */
#include "agent/snapshot.h"    /* transitional */
#include "agent/source.h"      /* transitional */

/* ---- link.c: the served interface ---------------------------------------------------- */

struct agent_link_state {
	bool exists;
	bool up; /* IFF_UP */
	int ifindex;
	uint8_t hwaddr[6];
	unsigned mtu; /* IFLA_MTU; 0 unknown */
};

struct agent_link;
/* Called on the event loop whenever the watched interface's state changes (borrowed). */
typedef void (*agent_link_fn)(
    void *userdata, const struct agent_link_state *old, const struct agent_link_state *now);

/*
 * Watches ifname (borrowed; copied) through a libnl cache manager whose fd is on base.
 * Returns 0 and a new object in *ret, or negative errno.
 */
int agent_link_new(struct event_base *base, const char *ifname, agent_link_fn fn, void *userdata,
    struct agent_link **ret);
struct agent_link *agent_link_free(struct agent_link *l);
const struct agent_link_state *agent_link_state(const struct agent_link *l);
const char *agent_link_name(const struct agent_link *l);
/* Adds ip/prefix to the interface (already present is fine). Negative errno. */
int agent_link_add_address(struct agent_link *l, uint32_t ip, unsigned prefix);
/*
 * The same with a valid and preferred lifetime of lifetime_s seconds (0: forever): the kernel
 * removes the address when it is not added again in time, so an address whose agent died
 * (SIGKILL, its node frozen) leaves the interface by itself. Adding it again renews it.
 */
int agent_link_add_address_lifetime(
    struct agent_link *l, uint32_t ip, unsigned prefix, uint32_t lifetime_s);
/* Removes ip/prefix from the interface (absent is fine: 0). Negative errno. */
int agent_link_del_address(struct agent_link *l, uint32_t ip, unsigned prefix);

/* ---- ha.c: the active replica's announcement --------------------------------------------- */

#define AGENT_GARP_LEN 42 /* Ethernet header + ARP for IPv4 over Ethernet */
/*
 * A gratuitous ARP announcement (RFC 5227 §2.3: an ARP request whose sender and target
 * protocol addresses are both ip, target hardware address zero) from hwaddr, broadcast: the
 * new active replica tells the VMs' and relays' neighbour caches where ip is now.
 */
void agent_garp_build(uint8_t frame[AGENT_GARP_LEN], const uint8_t hwaddr[6], uint32_t ip);
/*
 * Sends it on the packet socket fd (the engine's, bound to ifindex; no new capability is
 * needed once it is open). 0 or negative errno.
 */
int agent_garp_send(int fd, int ifindex, const uint8_t hwaddr[6], uint32_t ip);
/*
 * An ARP probe for ip (RFC 5227 §2.1.1: a request with sender protocol address 0): whoever
 * has ip answers it, so a replica about to take the serverIP learns whether another still
 * holds it. Sent like agent_garp_send.
 */
void agent_arp_probe_build(uint8_t frame[AGENT_GARP_LEN], const uint8_t hwaddr[6], uint32_t ip);
int agent_arp_probe_send(int fd, int ifindex, const uint8_t hwaddr[6], uint32_t ip);
/*
 * A packet socket for ARP on ifindex (non-blocking; CAP_NET_RAW) whose BPF filter passes only
 * frames about ip: its holder's replies and announcements (sender ip) and others' probes for
 * it. agent_arp_set_filter moves it to a new ip. Negative errno.
 */
int agent_arp_open(int ifindex, uint32_t ip, int *ret_fd);
int agent_arp_set_filter(int fd, uint32_t ip);
enum agent_arp_kind {
	AGENT_ARP_OTHER, /* not about ip, not ARP for IPv4 over Ethernet, or sent by self */
	AGENT_ARP_CLAIM, /* another MAC has ip: a reply, an announcement, any ARP from it */
	AGENT_ARP_PROBE, /* another MAC probes for ip: it is about to take it */
};
/* What the frame f says about ip; the sender's MAC in ret_mac (for CLAIM and PROBE). */
int agent_arp_classify(
    const uint8_t *f, size_t len, const uint8_t self[6], uint32_t ip, uint8_t ret_mac[6]);

/* ---- caps.c: capabilities ------------------------------------------------------------- */

#define AGENT_CAP(cap) (UINT64_C(1) << (cap))

/* The process's capability sets, one bit per capability (AGENT_CAP(CAP_NET_RAW), ...). */
struct agent_caps {
	uint64_t effective, permitted, inheritable, bounding;
};

/* Reads the calling thread's sets into *ret. Negative errno. */
int agent_caps_get(struct agent_caps *ret);
/*
 * Makes every permitted capability effective (file capabilities set without the effective
 * bit, "+p"). *ret_raised: the ones that were not. Negative errno.
 */
int agent_caps_raise(uint64_t *ret_raised);
/*
 * Drops for good every capability but those of keep that are permitted: permitted and
 * effective = keep, inheritable and ambient empty; the rest leaves the bounding set too when
 * CAP_SETPCAP is effective; no_new_privs set. The sets before and after go to *ret_before and
 * *ret_after (either may be NULL) on success. Negative errno (-EPERM: the kernel did not
 * leave exactly keep; -EBUSY: the process has other threads, which capset() would not reach).
 */
int agent_caps_drop(uint64_t keep, struct agent_caps *ret_before, struct agent_caps *ret_after);
/*
 * "NET_ADMIN, NET_RAW" (at most max_names names, then " and N more"), or "none", into buf;
 * returns buf.
 */
const char *agent_caps_format(uint64_t mask, unsigned max_names, char *buf, size_t len);

/* ---- listen.c: the HTTP endpoint's address ----------------------------------------------- */

/*
 * Checks --listen against the served interface ifname: an address of ifname, or server_ip
 * (the pool's serverIP, host order; 0 = not known yet), is refused (-EINVAL); so is a
 * wildcard in Kubernetes mode (kube). Returns 0 when fine, 1 when allowed with a warning
 * (a wildcard in local mode), negative errno when refused; msg gets the warning or the error.
 * *ret_ip is the listen address when it is IPv4 (host order), else 0, so the serverIP of a
 * later pool version can be checked against it.
 */
int agent_listen_check(const char *listen, const char *ifname, bool kube, uint32_t server_ip,
    uint32_t *ret_ip, char *msg, size_t msglen);
/*
 * The interface that holds the --listen address (a specific one, not a wildcard) into
 * ifname (IF_NAMESIZE bytes): 0, or -ENOENT when no interface has it (or it is a wildcard),
 * -EINVAL for an address httpd_new() does not take.
 */
int agent_listen_device(const char *listen, char *ifname, size_t len);

/* ---- decisions.c: the DHCP decision log ------------------------------------------ */

/*
 * The DHCP decision log: one info line per request the engine handled (its on_decision), e.g.
 *
 *   DHCPACK 10.0.0.5 to 52:54:00:12:34:56 (vm-1) for DHCPREQUEST xid=0x3903f326
 *   DHCPDISCOVER from 52:54:00:aa:bb:cc dropped: unknown_mac xid=0x1c2d3e4f
 *
 * Text lines carry everything in the message (a relayed request adds " via GIADDR") and the
 * key xid; JSON lines the same message and the keys type, mac, ip, vm, reply (offer, ack, nak,
 * none) or drop (dhcp_drop_reason_name), xid, giaddr (relayed only) and ippool. --log-level warn
 * silences them. A token bucket (AGENT_DECLOG_RATE lines/s, AGENT_DECLOG_BURST at once) keeps a
 * storm (perfdhcp, a client in a loop) out of the log: a suppressed line costs a few counters,
 * nothing is formatted, and once AGENT_DECLOG_SUMMARY_USEC passed since the first suppressed
 * one, one line counts what was suppressed by reply and drop reason.
 */
enum agent_log_dhcp {
	AGENT_LOG_DHCP_ALL = 0, /* every decision (default) */
	AGENT_LOG_DHCP_DROPS,	/* requests dropped or NAKed only */
	AGENT_LOG_DHCP_NONE,	/* none (the engine is not even asked) */
};
/* "all|drops|none" -> mode; -EINVAL on anything else. */
int agent_log_dhcp_from_string(const char *s, enum agent_log_dhcp *ret);

#define AGENT_DECLOG_RATE 20
#define AGENT_DECLOG_BURST 100
#define AGENT_DECLOG_SUMMARY_USEC (10 * UINT64_C(1000000))

struct agent_declog {
	enum agent_log_dhcp mode;
	uint64_t tokens;   /* millionths of a line */
	uint64_t refilled; /* time of the last refill (the decisions' clock); 0: full bucket */
	uint64_t since;	   /* time of the first line suppressed since the last summary; 0: none */
	uint64_t suppressed;
	uint64_t by_reply[_DHCP_MSG_MAX];   /* suppressed, by reply type (OFFER, ACK, NAK) */
	uint64_t by_request[_DHCP_MSG_MAX]; /* suppressed, neither answered nor dropped (DECLINE,
					     * RELEASE), by request type */
	uint64_t by_drop[_DHCP_DROP_MAX];   /* suppressed drops, by reason */
};
void agent_declog_init(struct agent_declog *l, enum agent_log_dhcp mode);
/*
 * Logs d (the engine's, borrowed) unless the mode or the log level leaves it out, or the bucket
 * suppresses it (counted). cfg (may be NULL) gives the ippool key. A summary due is logged first.
 */
void agent_declog_decision(
    struct agent_declog *l, const struct dhcp_decision *d, const struct agent_config *cfg);
/*
 * The summary of suppressed lines, when there are some and AGENT_DECLOG_SUMMARY_USEC passed
 * since the first (always with force: at exit). now: the decisions' clock.
 */
void agent_declog_flush(struct agent_declog *l, uint64_t now, bool force);

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
 * dump.c: the body of --enable-cache-dump-api's GET /leases, as the Go project's (upstream
 * pkg/server/handler.go, pkg/dhcp/dhcp.go): {"<mac>":"<lease as JSON text>"} for every binding
 * of s, each with the options o (NULL: no leases yet, "{}"). 0 and a new string in *ret
 * (free()), or -ENOMEM.
 */
int agent_dump_leases_json(const struct dhcp_server *s, const struct dhcp_options *o, char **ret);

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
