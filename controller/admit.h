/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_ADMIT_H
#define VMDHCP_CONTROLLER_ADMIT_H

/*
 * Admission rules for IPPool, VirtualMachineNetworkConfig and the static-IP annotations of
 * KubeVirt VirtualMachines: pure functions of one request and a read-only view of the
 * cluster (the controller's informer caches). No I/O, no clock, no globals: what the
 * HTTPS server (webhook.c) calls for each AdmissionReview, and what the unit tests drive
 * case by case.
 *
 * Upstream's rules (harvester/vm-dhcp-controller pkg/webhook/ippool/{mutator,validator}.go,
 * pkg/webhook/vmnetcfg/validator.go and the static-IP checks of its PR #157) are decided as
 * upstream decides them, with upstream's messages ("cannot create IPPool ns/name because
 * ..."); ours follow in the same form. What is only suspicious is a warning, not a refusal.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct ippool;
struct vmnetcfg;

/* Harvester's NAD annotation: the network's layer-3 settings, JSON {"mode": "auto" (learned
 * from a DHCP server on the network) | "manual", "serverIPAddr", "cidr", "gateway", ...}. */
#define ADMIT_ANNOT_NAD_ROUTE "network.harvesterhci.io/route"

enum admit_kind {
	ADMIT_KIND_OTHER = 0, /* anything else: allowed untouched */
	ADMIT_KIND_IPPOOL,
	ADMIT_KIND_VMNETCFG,
	ADMIT_KIND_VM, /* kubevirt.io VirtualMachine: static-ip.harvesterhci.io/<nic> */
};

enum admit_op {
	ADMIT_OP_CREATE = 0,
	ADMIT_OP_UPDATE,
	ADMIT_OP_DELETE,
	ADMIT_OP_CONNECT,
};

enum admit_phase {
	ADMIT_MUTATE = 0, /* defaults (JSON Patch) and the refusals upstream's mutator makes */
	ADMIT_VALIDATE,
};

/*
 * Read-only lookups into the cluster's state. Every callback may be NULL (treated as "not
 * found"/no items). Borrowed results live until the rules return. Network references are
 * canonical "ns/name".
 */
typedef int (*admit_pool_visit_fn)(void *ctx, const char *key, const struct ippool *pool);
typedef int (*admit_cfg_visit_fn)(void *ctx, const char *key, const struct vmnetcfg *cfg);
struct admit_view {
	void *userdata;
	/* NetworkAttachmentDefinition ns/name: 0 and its network.harvesterhci.io/ippool-namespace
	 * and ippool-name labels (borrowed; NULL when absent), or -ENOENT. */
	int (*nad)(void *ud, const char *ns, const char *name, const char **pool_ns,
	    const char **pool_name);
	/* IPPool ns/name, decoded (NULL: absent, or its object does not decode). */
	const struct ippool *(*pool)(void *ud, const char *ns, const char *name);
	/* Each cached IPPool ("ns/name", decoded) whose spec.networkName is network, until fn
	 * returns non-zero (returned). */
	int (*each_pool_of_network)(
	    void *ud, const char *network, admit_pool_visit_fn fn, void *ctx);
	/* Each cached VMNetCfg one of whose spec NICs names network, until fn returns non-zero. */
	int (*each_cfg_of_network)(void *ud, const char *network, admit_cfg_visit_fn fn, void *ctx);
	/* NetworkAttachmentDefinition ns/name: 0 and its network.harvesterhci.io/route
	 * annotation (borrowed; NULL when absent), or -ENOENT. */
	int (*nad_route)(void *ud, const char *ns, const char *name, const char **route);
};

struct admit_opts {
	/* The cluster's service CIDR (upstream's --service-cidr, default 10.53.0.0/16). */
	uint32_t service_net;
	unsigned service_prefix;
	/* Enforce the fields the CRD declares immutable (its CEL rules, evaluated by the API
	 * server from 1.25 on only). Always on in the product; the messages are the CRD's. */
	bool immutable;
	/* The most bytes an IPPool object may take with its status (the controller's
	 * --ippool-object-budget): an IPPool spec whose object cannot record its excluded and
	 * reserved addresses and bindings within it is refused, and so are new NICs on a pool
	 * whose condition StatusFull is True. 0: not checked. */
	uint64_t ippool_budget;
};

struct admit_request {
	enum admit_phase phase;
	enum admit_kind kind;
	enum admit_op op;
	const char *ns;		  /* request.namespace */
	const char *name;	  /* request.name ("" on a create with generateName) */
	const json_t *object;	  /* request.object (NULL on DELETE) */
	const json_t *old_object; /* request.oldObject (NULL on CREATE) */
	const char *user;	  /* request.userInfo.username (NULL: unknown) */
	bool dry_run;
};

#define ADMIT_MESSAGE_MAX 1024
#define ADMIT_WARNINGS_MAX 8
#define ADMIT_WARNING_MAX 256

struct admit_result {
	bool allowed;
	int code;			 /* when refused: 403 (policy) or 400 (undecodable) */
	char message[ADMIT_MESSAGE_MAX]; /* when refused: one line, what and why */
	json_t *patch;			 /* mutate: RFC 6902 operations (owned) or NULL */
	char warnings[ADMIT_WARNINGS_MAX][ADMIT_WARNING_MAX];
	size_t n_warnings;
};

/*
 * Decide rq against view. Fills *res (zeroed first): allowed, or refused with code and
 * message; a patch only in ADMIT_MUTATE. Never fails: an internal error (ENOMEM) refuses
 * with code 500 and says so. Free res->patch with admit_result_clear.
 */
void admit_review(const struct admit_view *view, const struct admit_opts *opts,
    const struct admit_request *rq, struct admit_result *res);
void admit_result_clear(struct admit_result *res);

/* The kind of a request's resource (group, plural resource), ADMIT_KIND_OTHER if not ours. */
enum admit_kind admit_kind_of(const char *group, const char *resource);
/* "CREATE"/"UPDATE"/"DELETE"/"CONNECT" → op; -EINVAL on others. */
int admit_op_parse(const char *s, enum admit_op *ret);
const char *admit_kind_name(enum admit_kind kind); /* "IPPool", ... (metrics label) */
const char *admit_op_name(enum admit_op op);	   /* "CREATE", ... */

/*
 * A strict IPv4 literal (dotted quad, no leading zeros, no IPv4-in-IPv6): 0 and the address
 * in host order, or -EINVAL with why (Go's net/netip messages, "ParseAddr(\"s\"): IPv4 field
 * has value >255") in err.
 */
int admit_parse_ipv4(const char *s, uint32_t *ret, char *err, size_t err_len);

#endif
