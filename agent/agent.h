/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_AGENT_H
#define VMDHCP_AGENT_AGENT_H

/*
 * vm-dhcp-agent: the agent as main.c sees it (struct agent_opts, agent_new and the calls on
 * the running agent), and the sections below of the files that have no header of their own
 * yet. One header per module:
 *
 *   link.c         link.h: libnl: interface state (ifindex, MAC, up), serverIP/prefix, events
 *   source-file.c  local mode: YAML IPPool/VMNetCfg documents -> struct agent_config
 *   source-kube.c  Kubernetes mode: an informer on the one IPPool -> struct agent_config
 *   config.c       an IPPool spec -> struct agent_config, for both sources
 *   dynamic.c      --dynamic leases: allocation, DECLINE holds, expiry; agent_apply_config
 *   leasefile.c    local-mode dynamic leases: snapshot (atomic) + append journal
 *   snapshot.c     Kubernetes mode: warm-start snapshot of the table and options (checksummed)
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

/* ---- source-file.c: local-mode configuration ---------------------------------------- */

struct agent_binding {
	uint8_t mac[6];
	uint32_t ip;
	uint32_t hostname; /* offset into agent_config.names, or UINT32_MAX for none */
};

struct agent_config {
	char pool_ns[254];
	char pool_name[254];
	char network[256]; /* canonical "namespace/name" */
	bool paused;
	uint32_t cidr; /* network address */
	unsigned prefix;
	uint32_t pool_start, pool_end;
	uint32_t *exclude; /* pool.exclude[] */
	size_t n_exclude;
	struct dhcp_options opts;	/* server_ip, prefix, router, ... (hostnames resolved) */
	struct agent_binding *bindings; /* static bindings (VMNetCfg NICs with ipAddress) */
	size_t n_bindings;
	char *names; /* NUL-separated hostname pool */
	size_t names_len, names_cap;
};

/*
 * Reads and validates the YAML file at path. ippool_ref ("ns/name", may be NULL) picks the
 * pool when the file holds several. Returns 0 and a new config in *ret, or negative errno
 * with err filled ("FILE: document N (line L): FIELD: problem").
 */
int agent_config_load(
    const char *path, const char *ippool_ref, struct agent_config **ret, char *err, size_t errlen);
/* Same, from text in memory; name is used in messages. */
int agent_config_parse(const char *name, const char *text, size_t len, const char *ippool_ref,
    struct agent_config **ret, char *err, size_t errlen);
/*
 * The same, in steps (a reload lets the event loop run between them): open reads the file
 * (path borrowed until the parser is freed); each step parses up to max_docs documents (0: all)
 * and returns 1 while some are left, 0 with *ret once done, or a negative errno with err filled
 * as agent_config_load's. Free the parser after it returned 0 or an error, or to abandon it.
 */
struct agent_config_parser;
int agent_config_parser_open(const char *path, const char *ippool_ref,
    struct agent_config_parser **ret, char *err, size_t errlen);
int agent_config_parser_step(struct agent_config_parser *ps, size_t max_docs,
    struct agent_config **ret, char *err, size_t errlen);
struct agent_config_parser *agent_config_parser_free(struct agent_config_parser *ps);
struct agent_config *agent_config_free(struct agent_config *c);
struct ippool_spec;
/*
 * config.c: an IPPool spec (borrowed) -> c's network, range, excludes and options, all but NTP
 * (c->opts.ntp is cleared; the caller resolves spec NTP names). Returns 0, -ENOMEM, or -EINVAL
 * with err naming the field.
 */
int agent_config_from_spec(
    struct agent_config *c, const struct ippool_spec *sp, char *err, size_t errlen);
/* Hostname of binding b (borrowed) or NULL. */
const char *agent_config_hostname(const struct agent_config *c, const struct agent_binding *b);

/*
 * ---- the pool's source: source-file.c (local mode) or source-kube.c (Kubernetes mode) ----
 *
 * Where the served pool comes from. serve.c knows a source only through these five calls and
 * the configuration it serves; what is mode-specific beyond them (the file's reload, the
 * IPPool's state for the snapshot) stays with the code that created it.
 */

/* What a source counts, for /metrics; the file source counts nothing (all zero). */
struct agent_source_stats {
	bool synced;		 /* a valid version is in the engine */
	uint64_t applied;	 /* versions pushed into the engine */
	uint64_t malformed;	 /* versions refused (decode, conversion); previous one kept */
	uint64_t apply_errors;	 /* versions the engine refused (no memory) */
	uint64_t deleted;	 /* IPPool deletions seen */
	uint64_t last_sync_usec; /* wall clock (CLOCK_REALTIME) of the last apply; 0 = never */
	size_t bindings;	 /* bindings in the engine */
	size_t duplicate_macs;	 /* MACs under two or more addresses in the applied version */
	/* from the informer */
	uint64_t watch_reconnects; /* watch streams opened after the first */
	uint64_t lists;		   /* full lists (1 + relists) */
	uint64_t relists_410;	   /* relists forced by 410 Gone */
	uint64_t errors;	   /* failed list/watch attempts */
	uint64_t dropped;	   /* objects dropped by the informer (no memory, no key) */
};

struct agent_source_ops {
	/* Starts following the pool (on the agent's event loop); negative errno. */
	int (*start)(void *src);
	/* Frees the source; accepts NULL. */
	void (*free)(void *src);
	/* The configuration served (borrowed; its bindings are in the engine), or NULL. */
	const struct agent_config *(*config)(const void *src);
	/* Whether the pool may be served; else the reason, for /readyz. */
	bool (*ready)(const void *src, char *reason, size_t len);
	/* Whether the DHCP sockets should be open: a pool to serve, not paused. */
	bool (*serving)(const void *src);
	void (*stats)(const void *src, struct agent_source_stats *ret);
};

struct agent_source {
	const struct agent_source_ops *ops; /* NULL: none yet */
	void *src;
};

/*
 * Local mode: the object is the struct agent_config itself, owned by the source (free is
 * agent_config_free); a reload frees it and puts the new one in its place. Ready and serving
 * unless the pool is paused; start does nothing (SIGHUP re-reads the file).
 */
extern const struct agent_source_ops agent_file_source_ops;
/* Kubernetes mode: the object is a struct agent_kube (agent_kube_new). */
extern const struct agent_source_ops agent_kube_source_ops;

/* ---- source-kube.c: Kubernetes mode ----------------------------------------------------- */

struct kube_client;
struct kube_config;
struct kube_leader;
struct kube_leader_opts;

enum agent_kube_state {
	AGENT_KUBE_WAITING, /* first list not done */
	AGENT_KUBE_ABSENT,  /* listed: no such IPPool (never created, or deleted) */
	AGENT_KUBE_INVALID, /* only malformed versions seen so far */
	AGENT_KUBE_ACTIVE,  /* a valid version is in the engine */
};

/* Called after each change (borrowed config; NULL when the pool is gone or never valid). */
typedef void (*agent_kube_fn)(void *userdata, const struct agent_config *cfg);

struct agent_kube_opts {
	const char *ippool_ref;	 /* "namespace/name" (borrowed; copied) */
	agent_kube_fn on_change; /* may be NULL */
	void *userdata;
	uint64_t backoff_base_usec; /* informer reconnect backoff (0 = its defaults) */
	uint64_t backoff_max_usec;
	unsigned watch_timeout_s;  /* server-side watch timeout (0 = informer default) */
	uint64_t ntp_refresh_usec; /* NTP hostnames resolved again this often (0 = 60 s) */
	const char *resolv_conf;   /* for NTP hostnames (NULL = /etc/resolv.conf) */
};

struct agent_kube;

/*
 * Follows one IPPool through an informer on c (borrowed; must outlive the source) and keeps
 * s (borrowed) in sync with it through agent_apply_config(): options and bindings of each
 * valid version; a malformed version is counted and logged and the previous one kept; a
 * deletion clears the bindings. NTP hostnames are resolved asynchronously on c's event
 * loop and the options pushed again when they resolve. Returns 0 and a new object in *ret
 * (not started), or negative errno with err filled.
 */
int agent_kube_new(struct kube_client *c, struct dhcp_server *s, const struct agent_kube_opts *opts,
    struct agent_kube **ret, char *err, size_t errlen);
int agent_kube_start(struct agent_kube *k);
/* Accepts NULL; returns NULL. */
struct agent_kube *agent_kube_free(struct agent_kube *k);
enum agent_kube_state agent_kube_get_state(const struct agent_kube *k);
/* The applied version (borrowed; bindings not kept: the engine has them) or NULL. */
const struct agent_config *agent_kube_config(const struct agent_kube *k);
/* Whether the DHCP sockets should be open: a valid version applied and not paused. */
bool agent_kube_serving(const struct agent_kube *k);
/* Ready: the first full sync done, the pool present, valid and not paused; else reason. */
bool agent_kube_ready(const struct agent_kube *k, char *reason, size_t len);
void agent_kube_get_stats(const struct agent_kube *k, struct agent_source_stats *ret);

/* ---- leasefile.c: dynamic leases ---------------------------------------------------- */

/*
 * The key of a --dynamic lease (RFC 2131 §4.2, RFC 2132 §9.14): the client identifier (option
 * 61) when the client sends one, else 0x01 (htype Ethernet) + its MAC, the form most clients
 * that send an identifier derive from their MAC anyway (so the two are one key, and a lease file
 * of v1, keyed by MAC, reads as it always did). An identifier shorter than AGENT_ID_MIN bytes
 * (RFC 2132's minimum) is taken for none. Functions taking a key take (id, id_len, mac): the
 * identifier, or NULL for 0x01 + mac.
 */
#define AGENT_ID_MIN 2
#define AGENT_ID_MAX 255 /* option 61's length is one byte */
/* Whether (id, id_len) sent from mac keys mac's own lease: none, too short, or 0x01 + mac. */
bool agent_id_is_mac(const uint8_t mac[6], const uint8_t *id, size_t id_len);

/*
 * The lease file is a text file, one "MAC IP" or "MAC IP id=HEX" line per lease: the MAC the
 * lease is bound to, its address and, for a lease keyed by a client identifier, that identifier
 * in hex (header "v2"; "v1" files, without id=, are read as MAC-keyed leases). A later line
 * wins over an earlier one with the same key; at open, of the leases left, a later line also
 * wins over one with the same address, then over one with the same MAC (a lease moved to a new
 * key of its MAC, an address expired and handed out again before a compaction). It is written
 * whole, atomically (temp + fsync + rename), at start, on reload and at exit; in between,
 * leasefile_add_id() appends each new or changed lease as one complete line before it records
 * it, so a crash or kill -9 loses nothing that was answered, and a lease that cannot be
 * written (disk full, I/O error) is refused: never answered, never handed out twice after a
 * restart. At open, a torn last line (no newline) is ignored with a warning; any other bad line
 * (NUL byte, garbage, bad MAC, address or identifier, too long) is copied byte for byte to
 * PATH.quarantine (appended, synced before the rewrite) and counted; the good leases around it
 * are kept. CRLF line endings are accepted. Per lease: a 24-byte slot (at most half full), and
 * the identifier's bytes for a lease keyed by one.
 */
struct leasefile;

/*
 * Opens path (created when missing; NULL keeps the leases in memory only): loads its leases,
 * quarantines bad lines, rewrites it compacted, opens the journal. Returns 0 and a new object
 * in *ret, or negative errno with err filled (unreadable file, no memory, the quarantine or the
 * rewrite cannot be written; bad content is never an error).
 */
int leasefile_open(const char *path, struct leasefile **ret, char *err, size_t errlen);
/* Closes and frees. Accepts NULL; returns NULL. */
struct leasefile *leasefile_free(struct leasefile *lf);
/*
 * Writes the line key (id, id_len, mac) -> bound to mac, ip to the journal, then records it in
 * memory, replacing the key's earlier lease. The caller keeps one lease per MAC and per address
 * (it removes the one a new key replaces). On failure (-ENOMEM, -EINVAL for an identifier over
 * AGENT_ID_MAX bytes, or the write's errno: -ENOSPC, -EIO, -EROFS, ...) nothing changes: not
 * in memory, not in the file (an earlier lease of the key stays), and
 * leasefile_append_errors() counts the write errors.
 */
int leasefile_add_id(
    struct leasefile *lf, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip);
/* The lease of key (id, id_len, mac): 0 with the MAC it is bound to and its address (either
 * output may be NULL), or -ENOENT. */
int leasefile_lookup_id(const struct leasefile *lf, const uint8_t *id, size_t id_len,
    const uint8_t mac[6], uint8_t ret_mac[6], uint32_t *ret_ip);
/* Forgets the key's lease (persisted at the next compaction). -ENOENT when absent. */
int leasefile_remove_id(
    struct leasefile *lf, const uint8_t *id, size_t id_len, const uint8_t mac[6]);
/* The same for the key 0x01 + mac (a lease keyed by its MAC). */
int leasefile_add(struct leasefile *lf, const uint8_t mac[6], uint32_t ip);
int leasefile_remove(struct leasefile *lf, const uint8_t mac[6]);
int leasefile_lookup(const struct leasefile *lf, const uint8_t mac[6], uint32_t *ret_ip);
size_t leasefile_count(const struct leasefile *lf);
/* Every lease: the MAC it is bound to and its address. */
void leasefile_foreach(const struct leasefile *lf,
    void (*fn)(void *userdata, const uint8_t mac[6], uint32_t ip), void *userdata);
/*
 * Every lease with its key: id (borrowed, id_len bytes), or NULL when it is keyed by 0x01 +
 * mac. fn may remove the lease it is given (leasefile_remove_id), and change nothing else.
 */
void leasefile_foreach_id(const struct leasefile *lf,
    void (*fn)(void *userdata, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip),
    void *userdata);
/* Nothing is ever queued (leasefile_add writes each line itself): returns 0. */
int leasefile_flush(struct leasefile *lf);
/* Rewrites the whole file atomically from memory and reopens the journal (streamed through
 * a 64 KiB buffer). Without persistence: tries to, and returns 0 either way. */
int leasefile_compact(struct leasefile *lf);
/* Number of leases read from the file at open (for logs/tests). */
size_t leasefile_loaded(const struct leasefile *lf);
/* Bad lines moved to PATH.quarantine at open. */
size_t leasefile_rejected(const struct leasefile *lf);
/* Leases refused by leasefile_add because their line could not be written. */
uint64_t leasefile_append_errors(const struct leasefile *lf);
/*
 * Whether leases are written to the file (always true without a path). false: serving
 * without persistence: the file could not be written at open (a read-only directory or
 * file system, no permission, a full disk: one warning; any other error, such as a missing
 * directory, fails the open), or it was deleted or replaced and cannot be recreated. Leases
 * are then kept in memory only, and leasefile_check() or leasefile_compact() writing the file
 * ends that (one info line).
 */
bool leasefile_persistent(const struct leasefile *lf);
/*
 * Called periodically: when the file at the path is no longer the one the journal writes to
 * (deleted, or replaced by rename), warns once and writes every lease in memory to a new
 * file at the path; when serving without persistence, tries to write the file again.
 * Returns 1 when the file was (re)written, 0 when nothing was needed or it still cannot be
 * written, negative errno when a lost file could not be recreated (then memory only).
 */
int leasefile_check(struct leasefile *lf);

/* ---- snapshot.c: Kubernetes mode's warm-start snapshot --------------------------------- */

/*
 * A restarted agent serves from its last snapshot until it has synced from the API server: the
 * pool's identity (pool_ns, pool_name), network, paused flag, range (cidr, prefix, pool_start,
 * pool_end, exclude) and options, and the engine's bindings with their hostnames, in one binary
 * file (format in snapshot.c: magic "VMDHSNAP", version, length, fields, 10 bytes a binding
 * without hostname, CRC-32C). Any mismatch refuses the whole file. When to write is the
 * caller's (warmstart.c): these functions only encode, write, read and validate.
 */
#define AGENT_SNAPSHOT_VERSION 1
#define AGENT_SNAPSHOT_RV_MAX 64	     /* resourceVersion bytes, NUL included */
#define AGENT_SNAPSHOT_MAX_SIZE (256u << 20) /* larger files are refused unread */

struct agent_snapshot_info {
	uint64_t written_usec; /* CLOCK_REALTIME usec when it was written */
	/* the IPPool resourceVersion it was taken from ("" = unknown) */
	char resource_version[AGENT_SNAPSHOT_RV_MAX];
	size_t bindings;
	size_t bytes; /* file size */
};

/*
 * Writes cfg's pool identity, network, paused flag, range and options and the engine's bindings
 * of s (dhcp_server_foreach_binding, with hostnames; s NULL: none) to path atomically: PATH.tmp
 * (mode 0600), write, fsync, rename, fsync of the directory; on failure PATH.tmp is removed and
 * an earlier PATH left as it was. resource_version may be NULL (""; at most 63 bytes). info (may
 * be NULL) gets what was written. Negative errno with err filled ("PATH: cannot write: ...");
 * -EINVAL when cfg could not be read back (a string not NUL-terminated, a count over its
 * maximum, options the engine refuses, ...).
 */
int agent_snapshot_write(const char *path, const struct agent_config *cfg,
    const struct dhcp_server *s, const char *resource_version, struct agent_snapshot_info *info,
    char *err, size_t errlen);
/* The same, into a new buffer (*ret malloc'd, *ret_len bytes); for tests, fuzzers, benches. */
int agent_snapshot_encode(const struct agent_config *cfg, const struct dhcp_server *s,
    const char *resource_version, uint64_t written_usec, uint8_t **ret, size_t *ret_len);
/*
 * Reads path: a new agent_config (freed with agent_config_free) with the pool identity,
 * network, paused flag, range, options and the bindings (bindings[] + names), and info (may be
 * NULL). -ENOENT when there is none ("PATH: no snapshot"); -EINVAL when the magic, version,
 * length or checksum does not match or any field is out of range, err saying which ("PATH:
 * checksum mismatch (file 0x..., computed 0x...)": the caller logs it and ignores the file);
 * -ENOMEM; another errno when it cannot be read. ippool_ref ("ns/name", may be NULL): a
 * snapshot of another pool is -EINVAL ("PATH: snapshot of IPPool a/b, not c/d"). A decoded
 * config is one agent_apply_config() takes: options the engine accepts, bindable MACs, each
 * MAC and each address bound once.
 */
int agent_snapshot_load(const char *path, const char *ippool_ref, struct agent_config **ret,
    struct agent_snapshot_info *info, char *err, size_t errlen);
/* The same from memory (err without the "PATH: "); ret and info may be NULL (a check only). */
int agent_snapshot_decode(const uint8_t *buf, size_t len, const char *ippool_ref,
    struct agent_config **ret, struct agent_snapshot_info *info, char *err, size_t errlen);
/* CRC-32C (Castagnoli) of data, the snapshot's checksum. */
uint32_t agent_snapshot_crc32c(const void *data, size_t len);

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
	/* Kubernetes mode: the warm-start snapshot (snapshot.c); NULL: none */
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
