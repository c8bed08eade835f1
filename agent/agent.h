/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_AGENT_H
#define VMDHCP_AGENT_AGENT_H

/*
 * vm-dhcp-agent: shared context of the program's parts (agent/ only).
 *
 *   link.c         libnl: interface state (ifindex, MAC, up), serverIP/prefix, link events
 *   source-file.c  local mode: YAML IPPool/VMNetCfg documents -> struct agent_config
 *   source-kube.c  Kubernetes mode: an informer on the one IPPool -> struct agent_config
 *   config.c       an IPPool spec -> struct agent_config, for both sources
 *   dynamic.c      --dynamic leases: the pool over the lease file, reload carry-over (dynamic.h)
 *   dynamic-alloc.c   allocation, identifier moves, pending offers
 *   dynamic-expiry.c  renewal, DECLINE holds, expiry
 *   dynamic-state.c   their shared in-memory state: entries, held addresses, offers
 *   decline-marks.c   the engine's DECLINE marks, cleared after the hold-down
 *   apply-config.c    agent_apply_config: options, bindings and leases into the engine
 *   leasefile.c    local-mode dynamic leases: snapshot (atomic) + append journal
 *   snapshot.c     Kubernetes mode: warm-start snapshot of the table and options (checksummed)
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
	/* Kubernetes mode: the warm-start snapshot (snapshot.c); NULL: none */
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

/* ---- dynamic*.c, decline-marks.c, apply-config.c: --dynamic leases ------------------- */
#include "agent/apply-config.h"	 /* transitional */
#include "agent/decline-marks.h" /* transitional */
#include "agent/dynamic.h"	 /* transitional */

#endif
