/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_CTRL_INTERNAL_H
#define VMDHCP_CONTROLLER_CTRL_INTERNAL_H

/*
 * The controller's context and what its files share: the items the informer transforms keep
 * (items.c), the runtime state of each IPPool (ctrl.c), the write lifecycle (writes.c), the
 * reconcilers (reconcile-*.c and the IPPool reconciler's parts) and the metrics (metrics.c).
 * For the controller's own files and its tests; main.c uses ctrl.h, lifecycle.h and dump.h.
 *
 * The file map, by floor: a file calls or includes only files of its own floor named
 * before it, or of lower floors, never one above (no circle of files); a lower file that needs
 * a higher one gets a pointer set by the higher one (c->kinds, set by ctrl_new).
 *   0  foreign-kinds.c  the foreign kinds' fields (VirtualMachine, NAD, Deployment, Node)
 *      netpool6.c       the IPv6 half of a network's IPAM and MAC ownership
 *      netpool.c        IPAM and MAC ownership of one network
 *      placement-opts.c the agent workload's knobs (--agent-*)
 *      crd-apply.c      --apply-crds
 *      webcert-x509.c, webcert-plan.c, webcert-cabundle.c, webcert.c  the admission
 *                       webhook's certificate: material, rotation plan (pure), caBundle, Secret
 *      webhook-review.c the AdmissionReview codec
 *      admission-cidr.c the service CIDR a Node's node-args annotation records
 *      admit-result.c, admit-goparse.c, admit-ippool-load.c  what the admission rules share
 *   1  placement.c      the agent Deployment of a pool
 *      vmplan.c         VirtualMachine -> the VMNetCfg it asks for
 *      nicbind6.c       a NIC's IPv6 address
 *      nicbind.c        per-NIC binding and the VMNetCfg status
 *      admit-*.c, admit.c  the admission decisions
 *   2  ctrl.c           the context: resources, pools' runtime state and lookups, enqueue
 *                       helpers, object budget, readiness (ctrl.h)
 *      webhook.c        the admission webhook's HTTPS server
 *   3  writes.c         the write lifecycle (struct ctrl_op), Event references, finalizers
 *      admission.c      the admission webhook's life cycle (reads ctrl.c's readiness)
 *      metrics.c, dump.c (dump.h), uninstall.c
 *   4  migrate.c        taking over from the Go project: its agent Pods, its webhooks
 *      ippool-ipam6.c   the IPv6 half of an IPPool's IPAM (ipv6Config)
 *      ippool-ipam.c    an IPPool's IPAM: built, kept in step with the spec, forgotten
 *      nad-labels.c     the NAD labels that name the pool serving a network
 *   5  ippool-status.c  an IPPool's size against its budget, the coalesced status write
 *      reconcile-vmnetcfg.c, reconcile-vm.c
 *   6  reconcile-ippool.c  the IPPool reconciler
 *      items.c          what each kind's informer keeps: transforms, destructors, indexes
 *   7  kind-table.c     the table of kinds: resource, items, handlers, reconciler
 *   8  lifecycle.c      ctrl_new, start-up once leading and synced, ctrl_free (lifecycle.h)
 *      cmdline.c        the command line: flags, defaults, checks across flags
 *   9  main.c           flags, leader election, the HTTP endpoints
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "controller/ctrl.h"
#include "controller/dump.h"
#include "controller/lifecycle.h"
#include "controller/foreign-kinds.h"
#include "controller/netpool.h"
#include "controller/nicbind.h"
#include "controller/placement.h"
#include "crds/ippool.h"
#include "crds/vmnetcfg.h"
#include "kube/kube.h"

struct event_base;
struct metrics;
struct metric;

/* --- store items (what the transforms keep) ----------------------------------------- */

/* What every cached object keeps of its metadata (owned, or packed with its item; rv NULL
 * where the item does not keep it). */
struct item_meta {
	char *ns, *name, *uid, *rv;
};

struct pool_item {
	struct ippool *pool; /* NULL when the object does not decode */
	char *error;	     /* decode error (owned) or NULL */
	char *status_error;  /* the status did not decode (ignored, rewritten) or NULL */
	struct item_meta meta;
	bool deleting;
	bool has_finalizer;
	bool hold; /* hold-ippool-agent-upgrade annotation */
};

struct cfg_item {
	struct vmnetcfg *cfg; /* NULL when the object does not decode */
	char *error;
	struct item_meta meta;
	char *owner_uid; /* the controller ownerReference's uid, or NULL */
	bool has_label;	 /* harvesterhci.io/vmName present */
	bool deleting;
	bool has_finalizer;
	bool pending; /* some status NIC is Pending */
};

/* A VM reduced to what it asks for: the VMNetCfg spec (compact, no json_t kept). */
struct vm_item {
	struct vmnetcfg_spec want; /* the VMNetCfg spec the VM asks for (owned) */
	struct item_meta meta;
	bool deleting;
	char **skipped; /* "nic: reason" (owned) */
	size_t n_skipped;
	size_t n_static;      /* NICs left out as statically configured (vmplan.h) */
	char *unknown_static; /* names in its static-NICs annotation that are no NIC, or NULL */
	int64_t generation;   /* metadata.generation */
};

struct nad_item {
	char *cluster_network; /* NULL: plain Multus */
	/* its network.harvesterhci.io/ippool-namespace and ippool-name labels (NULL: absent) */
	char *pool_ns, *pool_name;
	char *route; /* its network.harvesterhci.io/route annotation (admission warns), or NULL */
};

struct node_item {
	bool ready;
	char *service_cidr; /* --service-cidr of its rke2.io/k3s.io node-args annotation, or NULL */
	char **cluster_networks; /* label keys network.harvesterhci.io/<cn>=true → "<cn>" */
	size_t n;
};

struct agent_item {
	struct item_meta meta;
	char *pool_ref; /* "ns/name" of the IPPool */
	char *hash;	/* inputs hash annotation */
	char *image;
	bool ready;
	const char *why; /* static: why not ready */
	bool deleting;
};

/* A bare agent Pod of the Go project (migrate.c), by the pool its labels name. */
struct upstream_pod {
	char pool_ref[KIND_REF_MAX]; /* "ns/name" of the IPPool */
	char *ns, *name, *uid;
	bool deleting;
};

/* --- runtime state of one IPPool ------------------------------------------------------ */

struct pool_rt {
	char key[KIND_REF_MAX];			/* the IPPool's "ns/name" */
	char network[CRD_NETWORK_NAME_MAX + 1]; /* canonical network name */
	char *uid;
	struct netpool *np; /* NULL until built */
	uint64_t range_hash;
	int range_error;		 /* 0, or the error of the last refused range change */
	uint32_t range_conflict;	 /* with -EBUSY: the stranded address */
	int build_error;		 /* netpool_new error (range too big, …) */
	uint64_t range6_hash;		 /* of the ipv6Config's pool (0: none) */
	int range6_error;		 /* 0, or the error of the last refused IPv6 range change */
	struct in6_addr range6_conflict; /* with -EBUSY: the stranded IPv6 address */
	size_t n_conflicts;		 /* reported by the last rebuild */
	char conflicts[256];		 /* their summary */
	bool kick;			 /* addresses freed: retry Pending VMNetCfgs */
	/* the size of the IPPool object (ctrl_pool_budget) */
	size_t base_bytes;	/* the object but its status.ipv4.allocated entries */
	char *base_rv;		/* the resourceVersion base_bytes was counted for (NULL: none) */
	size_t written_bytes;	/* the map at the last status write attempted */
	size_t too_large_bytes; /* the map the API server last refused as too large (0: none) */
	bool omit_said;		/* the EXCLUDED entries left out: logged */
	struct pool_rt *next;
};

/* Informer list page size (objects decoded at once while listing). */
#define CTRL_LIST_PAGE 100

/*
 * Backpressure: at most this many VMNetCfg and VM reconciles in flight, their writes included
 * (one budget for both queues: kube_controller_opts.max_concurrent / share_limit); further
 * keys wait in their queues, so a burst does not queue one request body per object. The
 * IPPool reconciler has no limit (its writes are few: coalesced per pool).
 */
#define CTRL_MAX_INFLIGHT 32

/*
 * One IPPool as /metrics shows it, gathered before each render (metrics.c): the leader
 * exports one series per pool and family, labelled namespace, pool, network.
 */
struct ctrl_pool_sample {
	const struct pool_item *it; /* borrowed from the cache for one render */
	const char *key;	    /* "ns/name", borrowed likewise */
	const struct pool_rt *rt;   /* its IPAM (the pool serving its network), or NULL */
	double bindings[3];	    /* NICs Allocated, Pending, Stale on rt's network */
};

/* An IPPool whose spec is invalid, and the error logged for it (said once per text). */
struct ctrl_invalid_pool {
	char *key, *error;
	struct ctrl_invalid_pool *next;
};

struct ctrl_kind;

struct ctrl {
	const struct ctrl_kind *kinds; /* the table of kinds (kind-table.c), set by ctrl_new */
	size_t n_kinds;
	struct event_base *base;
	struct kube_client *client; /* borrowed */
	struct kube_recorder *recorder;
	struct metrics *metrics; /* borrowed */
	struct ctrl_opts opts;
	char *namespace, *agent_image, *agent_sa;
	struct placement_opts agent; /* owned copy of opts.agent */

	struct kube_informer *inf_pool, *inf_cfg, *inf_vm, *inf_nad, *inf_node, *inf_agent;
	struct kube_informer *inf_upstream; /* the Go project's agent Pods (migrate.c) or NULL */
	struct kube_controller *c_pool, *c_cfg, *c_vm;
	struct ctrl_admission *admission; /* admission.c (NULL: off); owned by main.c */
	struct event *sync_ev;
	struct event *trim_ev;

	struct pool_rt *pools;
	struct ctrl_op *ops; /* writes in flight */
	size_t inflight;
	bool leading;	  /* allowed to reconcile */
	bool reconciling; /* controllers started */

	struct metric *m_leader, *m_writes;
	struct metric *m_invalid;	   /* vmdhcp_controller_ippool_invalid_total */
	struct metric *m_refused;	   /* vmdhcp_controller_allocations_refused_total */
	struct metric *m_too_large;	   /* vmdhcp_controller_ippool_status_too_large_total */
	struct ctrl_invalid_pool *invalid; /* the error last logged per invalid IPPool */
	struct ctrl_pool_sample *samples;  /* reused from render to render */
	size_t n_samples, cap_samples;
};

/* What the informer of a kind keeps of its objects (items.c). */
struct ctrl_item_ops {
	kube_transform_fn transform;
	kube_destroy_fn destroy;
	const char *index_name; /* NULL: no index */
	kube_index_fn index;
};
extern const struct ctrl_item_ops ctrl_items_pool, ctrl_items_cfg, ctrl_items_vm, ctrl_items_nad,
    ctrl_items_node, ctrl_items_agent;

/*
 * The table of kinds (kind-table.c), iterated by start-up (lifecycle.c) and readiness (ctrl.c,
 * through c->kinds): per watched kind its informer (resource, scope, items, handlers that
 * enqueue keys) and, for the kinds the controller reconciles, the reconciler (started once
 * leading and synced, then given every cached key).
 */
struct ctrl_kind {
	const char *what; /* plural for the logs: "IPPools" */
	const struct kube_resource *res;
	bool in_namespace; /* only the controller's namespace */
	const char *label_selector;
	const struct ctrl_item_ops *items;
	struct kube_informer_handlers handlers;
	size_t inf_off; /* of its struct kube_informer * in struct ctrl */
	/* reconciled kinds only (reconcile NULL: watched for the others' sake) */
	const char *name; /* the controller's name (metrics label) */
	kube_reconcile_fn reconcile;
	size_t ctl_off;	   /* of its struct kube_controller * in struct ctrl */
	bool write_budget; /* shares the CTRL_MAX_INFLIGHT budget */
};
extern const struct ctrl_kind ctrl_kinds[];
extern const size_t ctrl_n_kinds;

static inline struct kube_informer **
ctrl_kind_informer(struct ctrl *c, const struct ctrl_kind *k)
{
	return (struct kube_informer **)((char *)c + k->inf_off);
}

static inline struct kube_controller **
ctrl_kind_controller(struct ctrl *c, const struct ctrl_kind *k)
{
	return (struct kube_controller **)((char *)c + k->ctl_off);
}

/* --- the context (ctrl.c) ---------------------------------------------------------- */

struct pool_rt *ctrl_pool_rt(struct ctrl *c, const char *pool_key);
struct pool_rt *ctrl_pool_rt_by_network(struct ctrl *c, const char *network);
/* A new runtime state for the pool item it (key "ns/name"), first of c->pools; NULL on ENOMEM. */
struct pool_rt *ctrl_pool_rt_new(struct ctrl *c, const char *key, const struct pool_item *it);
/* Frees rt and its netpool (rt already off c->pools). */
void ctrl_pool_rt_free(struct pool_rt *rt);
/* The netpool lookup used by the VMNetCfg computation (userdata = struct ctrl). */
struct netpool *ctrl_lookup(void *userdata, const char *network, enum netpool_avail *avail);
void ctrl_enqueue_pool(struct ctrl *c, const char *pool_key);
void ctrl_enqueue_network_pool(struct ctrl *c, const char *network);
void ctrl_enqueue_cfg(struct ctrl *c, const char *key);
void ctrl_enqueue_vm(struct ctrl *c, const char *key);
void ctrl_enqueue_all_pools(struct ctrl *c);
/* Enqueue the VMNetCfgs that reference network (only Pending ones when pending_only). */
void ctrl_enqueue_cfgs_of_network(struct ctrl *c, const char *network, bool pending_only);
uint64_t ctrl_now_usec(const struct ctrl *c);
/* The object budget of an IPPool: opts.ippool_budget, else CTRL_IPPOOL_BUDGET_DEFAULT. */
uint64_t ctrl_ippool_budget(const struct ctrl *c);

/* Strings equal, NULL and "" alike. */
static inline bool
ctrl_str_eq(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return (a == NULL || a[0] == '\0') && (b == NULL || b[0] == '\0');
	return strcmp(a, b) == 0;
}

/* Whether cfg's spec asks for the NIC of a status entry (same network and MAC). */
static inline bool
ctrl_cfg_asks(const struct vmnetcfg *cfg, const struct vmnetcfg_nic_status *n)
{
	for (size_t i = 0; i < cfg->spec.n_nics; i++)
		if (strcmp(cfg->spec.nics[i].network_name, n->network_name) == 0 &&
		    strcmp(cfg->spec.nics[i].mac, n->mac) == 0)
			return true;
	return false;
}

/* --- the write lifecycle (writes.c) ------------------------------------------------- */

/* Tiny object {metadata{name,namespace,uid}} for Events (new reference). */
json_t *ctrl_event_ref(const char *ns, const char *name, const char *uid);
/* Finalizer merge patch {"metadata":{"resourceVersion":rv,"finalizers":[...]}}: the current
 * list with fin added (add) or removed (every listed name removed). New reference. */
json_t *ctrl_finalizer_patch(const char *rv, char *const *current, size_t n, bool add,
    const char *fin, const char *also_remove);

/* One asynchronous write of a reconcile (PENDING until its callback completes the key). */
struct ctrl_op {
	struct ctrl *c;
	struct kube_controller *ctl;
	struct kube_call *call; /* the write in flight (cancelled by ctrl_free), or NULL */
	struct ctrl_op *prev, *next;
	const char *what; /* static, for logs */
	json_t *payload;  /* optional, owned (freed with the op) */
	/* Events recorded once the write succeeds (see ctrl_op_defer_event); owned or NULL */
	json_t *ev_ref;	     /* the involved object */
	const char *ev_kind; /* static */
	json_t *events;	     /* [{type, reason, message}] */
	char key[KIND_REF_MAX];
};
/* New op for key (copied); NULL on ENOMEM. */
struct ctrl_op *ctrl_op_new(
    struct ctrl *c, struct kube_controller *ctl, const char *key, const char *what);
/*
 * Record an Event on ref (borrowed; the same object for every call on op) of kind (static)
 * when op's write succeeds, and log it. For the Events of a status transition: the status
 * write commits it, and a write that fails is retried from a new computation that reports
 * the transition again, so each is recorded once. 0 or -ENOMEM.
 */
int ctrl_op_defer_event(struct ctrl_op *op, const json_t *ref, const char *kind, const char *type,
    const char *reason, const char *message);
/* kube_done_fn: completes the reconcile by the result and frees the op. */
void ctrl_op_done(void *userdata, const struct kube_result *res);
/* On ctrl_free: cancels the writes in flight (their answers are dropped) and frees them. */
void ctrl_ops_cancel(struct ctrl *c);
/* After starting a call with op (its handle in op->call): rc >= 0 → PENDING; rc < 0 → the op
 * is freed, ERROR. */
struct kube_reconcile_result ctrl_op_started(struct ctrl_op *op, int rc);

static inline struct kube_reconcile_result
ctrl_ok(void)
{
	return (struct kube_reconcile_result){.action = KUBE_RECONCILE_OK};
}

static inline struct kube_reconcile_result
ctrl_error(int err)
{
	return (struct kube_reconcile_result){.action = KUBE_RECONCILE_ERROR, .error = err};
}

static inline struct kube_reconcile_result
ctrl_pending(void)
{
	return (struct kube_reconcile_result){.action = KUBE_RECONCILE_PENDING};
}

static inline struct kube_reconcile_result
ctrl_after(uint64_t usec)
{
	return (struct kube_reconcile_result){
	    .action = KUBE_RECONCILE_REQUEUE_AFTER, .after_usec = usec};
}

/* --- the IPPool reconciler's parts ------------------------------------------------- */

/*
 * An IPPool's IPAM (ippool-ipam.c). ctrl_pool_build builds (or rebuilds) the netpool of a
 * pool item from the caches. ctrl_pool_ensure_ipam keeps *rtp (NULL: none yet, then made)
 * in step with the spec: a new object or network starts over, a range change is applied or
 * refused; fills the CacheReady facts in f (messages in msg). ctrl_pool_forget drops a
 * pool's IPAM; the VMNetCfgs on its network are reconciled again.
 */
int ctrl_pool_build(struct ctrl *c, const struct pool_item *it, struct pool_rt *rt);
void ctrl_pool_ensure_ipam(struct ctrl *c, const char *key, const struct pool_item *it,
    struct pool_rt **rtp, struct ippool_facts *f, char *msg, size_t len);
void ctrl_pool_forget(struct ctrl *c, const char *key);
/*
 * The IPv6 half (ippool-ipam6.c). ctrl_pool_build6 makes it anew for the spec (none without
 * an ipv6Config) from the VMNetCfg statuses, then the pool's status.ipv6.allocated; its
 * conflicts are reported as the IPv4 ones and added to rt->n_conflicts. 0 or -errno (the half
 * is then empty). ctrl_pool_ensure_ipam6 keeps it in step with the spec: an ipv6Config added,
 * removed (its bindings released) or with another network, made anew and the network's
 * VMNetCfgs reconciled again; a range change applied or refused. A half that cannot be built
 * drops the whole netpool (rt->build_error): no pool serves IPv4 alone when its spec asks for
 * both. ctrl_pool_range6_facts: true and the CacheReady message when an IPv6 range change
 * was refused.
 */
int ctrl_pool_build6(struct ctrl *c, const struct pool_item *it, struct pool_rt *rt);
void ctrl_pool_ensure_ipam6(
    struct ctrl *c, const char *key, const struct pool_item *it, struct pool_rt *rt);
bool ctrl_pool_range6_facts(const struct pool_rt *rt, char *msg, size_t len);

/*
 * The NAD labels naming the pool that serves a network (nad-labels.c): set on the NAD of
 * the pool's network when they name another or none; removed from the NAD that still names
 * a pool (key "ns/name") that is gone. One write at most.
 */
struct kube_reconcile_result ctrl_nad_labels_ensure(
    struct ctrl *c, const char *key, const struct pool_item *it);
struct kube_reconcile_result ctrl_nad_labels_remove(struct ctrl *c, const char *key);

/*
 * An IPPool's status (ippool-status.c). ctrl_ippool_base_bytes: the part of the object
 * budget (ctrl_ippool_budget) the rest of the object (pool, borrowed) takes, the object as
 * compact JSON with an empty status.ipv4.allocated map, its condition StatusFull counted at
 * its most whether there or not (0 on ENOMEM).
 */
size_t ctrl_ippool_base_bytes(const struct ippool *pool);
/*
 * The budget of the pool's status.ipv4.allocated: the object budget less the rest of the
 * object, lowered to what the API server last refused (less 1/16) when it refused a write as
 * too large. A map over it (bindings restored from VMNetCfg statuses the pool status never
 * recorded, a lowered budget) loses its unrecorded bindings: their VMNetCfgs are reconciled
 * again, and go Pending. Fills the StatusFull facts (messages in msg).
 */
void ctrl_pool_apply_budget(struct ctrl *c, const char *key, const struct pool_item *it,
    struct pool_rt *rt, struct ippool_facts *f, char *msg, size_t len);
/*
 * The one status write, when the status computed from rt (NULL: the cached bindings kept),
 * agent and f differs from the cached one; once it is settled, the NAD labels. The Normal
 * Events of the transition (agent placed, pool ready) are recorded once that write succeeds.
 */
struct kube_reconcile_result ctrl_pool_write_status(struct ctrl *c, const char *key,
    const struct pool_item *it, const struct pool_rt *rt, const struct agent_item *agent,
    const struct ippool_facts *f);

/* --- the reconcilers ---------------------------------------------------------------- */

struct kube_reconcile_result ctrl_reconcile_pool(void *userdata, const char *key);
struct kube_reconcile_result ctrl_reconcile_cfg(void *userdata, const char *key);
struct kube_reconcile_result ctrl_reconcile_vm(void *userdata, const char *key);
/* On a VMNetCfg gone without passing its finalizer: release what it held. */
void ctrl_cfg_forget(struct ctrl *c, const char *key, const struct cfg_item *item);
/* The desired VMNetCfg object of a VM item (new reference, or NULL). */
json_t *ctrl_vm_desired(const struct vm_item *vm);
/*
 * Logs the names of vm's static-NICs annotation that match no NIC, once per change of the
 * VM's generation or of those names (old: the item before, NULL when new).
 */
void ctrl_vm_note_static(const char *key, const struct vm_item *old, const struct vm_item *vm);

/*
 * Taking over from the Go project (migrate.c): the informer on its agent Pods (none without
 * opts.upstream_agent_ns), the Pod of a pool (borrowed from the cache, or NULL), its removal
 * (one write; why for the log), and the removal of its webhook configurations (the leader,
 * once).
 */
int ctrl_migrate_new(struct ctrl *c);
void ctrl_migrate_free(struct ctrl *c);
const struct upstream_pod *ctrl_upstream_agent(struct ctrl *c, const char *pool_key);
struct kube_reconcile_result ctrl_upstream_agent_delete(
    struct ctrl *c, const char *key, const struct upstream_pod *p, const char *why);
void ctrl_migrate_remove_webhooks(struct ctrl *c);

/*
 * The controller's metrics (metrics.c): vmdhcp_controller_leader on every replica,
 * vmdhcp_controller_api_writes_total, and the per-pool vmdhcp_ippool_* families, exported
 * only by the leader once it reconciles. 0 or -errno; nothing without c->metrics.
 */
int ctrl_metrics_add(struct ctrl *c);
void ctrl_metrics_free(struct ctrl *c);

#endif
