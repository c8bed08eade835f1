/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_PLACEMENT_OPTS_H
#define VMDHCP_CONTROLLER_PLACEMENT_OPTS_H

/*
 * The admin's knobs of the agent workload (placement-opts.c): parsed and checked from the
 * controller's --agent-* flags, copied into the context, read by the manifest (placement.c,
 * which includes this header through placement.h).
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* Defaults and bounds of the replica and election knobs (durations in milliseconds). */
#define PLACEMENT_REPLICAS 2
#define PLACEMENT_REPLICAS_MAX 10
#define PLACEMENT_LEASE_MS 2000
#define PLACEMENT_RENEW_MS 1500
#define PLACEMENT_RETRY_MS 300
#define PLACEMENT_LEASE_MIN_MS 1000
#define PLACEMENT_DURATION_MAX_MS 3600000

/*
 * The admin's knobs of the agent workload (the controller's --agent-* flags), filled by
 * placement_opts_set(); a zeroed struct means every default. Owned by the struct.
 */
struct placement_opts {
	char *interface;       /* VM-facing interface = Multus interface name; NULL: eth1 */
	char *pull_policy;     /* Always | IfNotPresent | Never; NULL: IfNotPresent */
	char *priority_class;  /* priorityClassName, or NULL */
	json_t *pull_secrets;  /* [{"name": …}] (core/v1 LocalObjectReference), or NULL */
	json_t *resources;     /* core/v1 ResourceRequirements; NULL: the default requests/limits */
	json_t *node_selector; /* {label: value} beside the cluster-network affinity, or NULL */
	json_t *tolerations;   /* core/v1 Toleration[] appended to ours, or NULL */
	int replicas;	       /* agent pods of a pool, 1..10; 0: PLACEMENT_REPLICAS */
	int lease_ms;	       /* Lease duration; 0: PLACEMENT_LEASE_MS (used from 2 replicas) */
	int renew_ms;	       /* renew deadline; 0: PLACEMENT_RENEW_MS */
	int retry_ms;	       /* retry period; 0: PLACEMENT_RETRY_MS */
	bool no_dhcp; /* agents follow their pool without serving DHCP: their --dry-run (the
		       * controller's --no-dhcp, as the Go project's, cmd/controller/root.go) */
};

enum placement_opt {
	PLACEMENT_OPT_INTERFACE,      /* --agent-interface NAME */
	PLACEMENT_OPT_PULL_POLICY,    /* --agent-image-pull-policy Always|IfNotPresent|Never */
	PLACEMENT_OPT_PULL_SECRET,    /* --agent-image-pull-secret NAME (repeatable: appends) */
	PLACEMENT_OPT_RESOURCES,      /* --agent-resources JSON object */
	PLACEMENT_OPT_NODE_SELECTOR,  /* --agent-node-selector JSON object of strings */
	PLACEMENT_OPT_TOLERATIONS,    /* --agent-tolerations JSON array */
	PLACEMENT_OPT_PRIORITY_CLASS, /* --agent-priority-class NAME */
	PLACEMENT_OPT_REPLICAS,	      /* --agent-replicas N (1: no leader election) */
	PLACEMENT_OPT_LEASE_DURATION, /* --agent-lease-duration SECONDS (decimal, >= 1) */
	PLACEMENT_OPT_RENEW_DEADLINE, /* --agent-renew-deadline SECONDS */
	PLACEMENT_OPT_RETRY_PERIOD,   /* --agent-retry-period SECONDS */
};

/*
 * Validates value (borrowed) as the knob `which` and stores a copy in o (a pull secret is
 * appended to those given before; any other knob replaces its earlier value; an empty JSON
 * object or array of node selector or tolerations means none). Checks what the API
 * server would refuse later (names, JSON shape, field names and enums, quantities, requests
 * above limits) so a bad flag fails at start instead of every placement. Returns 0; -EINVAL
 * with a one-line reason (no flag name, no newline) in err; -ENOMEM.
 */
int placement_opts_set(struct placement_opts *o, enum placement_opt which, const char *value,
    char *err, size_t errlen);
/*
 * The checks that span knobs, once every one is set: retry period < renew deadline < Lease
 * duration (given or default). Returns 0; -EINVAL with *which set to the knob at fault (one
 * the admin gave) and a one-line reason in err that names the other knob's flag.
 */
int placement_opts_check(
    const struct placement_opts *o, enum placement_opt *which, char *err, size_t errlen);
/* Deep copy of src (borrowed; NULL gives defaults) into dst (zeroed). 0 or -ENOMEM. */
int placement_opts_copy(struct placement_opts *dst, const struct placement_opts *src);
/* Frees what o holds and zeroes it; accepts NULL. */
void placement_opts_clear(struct placement_opts *o);

/* --- also used by the manifest (placement.c) ------------------------------------------- */

/* Seconds with at most 3 decimals, as text: "3600.5" + NUL, with room. */
#define PLACEMENT_SECONDS_LEN 24

/* v when the admin set it (non-zero), else dflt. */
int placement_or_default(int v, int dflt);
/* ms as the agent's seconds flags take it: "2", "1.5", "0.3". */
void placement_format_seconds(int ms, char out[PLACEMENT_SECONDS_LEN]);

#endif
