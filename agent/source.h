/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_SOURCE_H
#define VMDHCP_AGENT_SOURCE_H

/*
 * Where the served pool comes from:
 *
 *   source-file.c       local mode: the YAML stream of IPPool/VMNetCfg documents, in steps
 *   source-file-pool.c  local mode: the documents read -> the served pool and its bindings,
 *                       checked
 *   source-kube.c       Kubernetes mode: an informer on the one IPPool, its NTP names, the
 *                       engine kept in sync
 *   source-kube-pool.c  Kubernetes mode: one version of the IPPool -> struct agent_config
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/pool-config.h"
#include "dhcp/dhcp.h"

/* ---- source-file.c: local-mode configuration ---------------------------------------- */

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

struct dhcp6_server;
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
	const char *ippool_ref;	    /* "namespace/name" (borrowed; copied) */
	struct dhcp6_server *dhcp6; /* borrowed: the ipv6Config's engine; NULL: IPv6 not served */
	agent_kube_fn on_change;    /* may be NULL */
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

#endif
