/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller (controller/ctrl*.c) in-process against the test API server: VM → VMNetCfg →
 * binding → IPPool status → agent Deployment; duplicates and static IPs; a NIC moving
 * network; restart (IPAM rebuilt from the API, no address handed out twice); finalizers on
 * delete; a paused pool; injected 409s. Waits are bounded by a generous deadline; nothing
 * asserts on speed.
 *
 * Size: about 1100 lines, one file on purpose: one controller and one test API server shared
 * by every case; a scenario builds on the objects the fixtures make.
 */
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "controller/ctrl-internal.h"
#include "controller/placement.h"
#include "controller/vmplan.h"
#include "lib/log.h"
#include "lib/util.h"
#include "tests/helpers/apiserver.h"
#include "tests/helpers/ctrl-env.h"
#include "tests/helpers/poll.h"
#include "tests/runner.h"

#define WAIT_MS 20000
#define NS "default"
#define CTRL_NS "vmdhcp"
#define POOLS "/apis/network.harvesterhci.io/v1alpha1/namespaces/" NS "/ippools"
#define CFGS "/apis/network.harvesterhci.io/v1alpha1/namespaces/" NS "/virtualmachinenetworkconfigs"
#define VMS "/apis/kubevirt.io/v1/namespaces/" NS "/virtualmachines"
#define NADS "/apis/k8s.cni.cncf.io/v1/namespaces/" NS "/network-attachment-definitions"
#define DEPLOYS "/apis/apps/v1/namespaces/" CTRL_NS "/deployments"
#define EVENTS "/api/v1/namespaces/" NS "/events"

/* --- API helpers ------------------------------------------------------------------------- */

/* Request; returns the decoded body (new reference) and the code in *code. */
static json_t *
api(struct env *e, const char *method, const char *path, const char *ctype, json_t *body,
    long *code)
{
	return test_env_request(e, method, path, ctype, body, code);
}

static json_t *get(struct env *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static json_t *
get(struct env *e, const char *fmt, ...)
{
	char path[512];
	va_list ap;
	long code = 0;
	json_t *j;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	j = api(e, "GET", path, NULL, NULL, &code);
	if (code != 200) {
		json_decref(j);
		return NULL;
	}
	return j;
}

static long
post(struct env *e, const char *path, json_t *obj)
{
	long code = 0;

	json_decref(api(e, "POST", path, NULL, obj, &code));
	json_decref(obj);
	return code;
}

static long
merge_patch(struct env *e, const char *path, json_t *patch)
{
	long code = 0;

	json_decref(api(e, "PATCH", path, "application/merge-patch+json", patch, &code));
	json_decref(patch);
	return code;
}

static void
create_nad(struct env *e, const char *name, const char *cn)
{
	json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion",
	    "k8s.cni.cncf.io/v1", "kind", "NetworkAttachmentDefinition", "metadata", "name", name,
	    "namespace", NS, "spec", "config", "{}");

	if (cn != NULL)
		json_object_set_new(json_object_get(o, "metadata"), "labels",
		    json_pack("{s:s}", KIND_LABEL_CLUSTER_NETWORK, cn));
	CU_ASSERT_EQUAL(post(e, NADS, o), 201);
}

static void
create_pool(struct env *e, const char *name, const char *net, const char *cidr, const char *server,
    const char *start, const char *end)
{
	json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:{s:s, s:s, s:{s:s, s:s}}}}",
	    "apiVersion", CRD_API_VERSION, "kind", IPPOOL_KIND, "metadata", "name", name,
	    "namespace", NS, "spec", "networkName", net, "ipv4Config", "cidr", cidr, "serverIP",
	    server, "pool", "start", start, "end", end);

	CU_ASSERT_EQUAL(post(e, POOLS, o), 201);
}

/* A VM with one pod NIC and one Multus NIC "nic-1" on net with mac (static ip optional). */
static json_t *
vm_object(const char *name, const char *net, const char *mac, const char *static_ip)
{
	json_t *vm = json_pack("{s:s, s:s, s:{s:s, s:s, s:{}},"
			       " s:{s:{s:{s:{s:{s:[{s:s, s:{}}, {s:s, s:{}, s:s}]}},"
			       " s:[{s:s, s:{}}, {s:s, s:{s:s}}]}}}}",
	    "apiVersion", "kubevirt.io/v1", "kind", "VirtualMachine", "metadata", "name", name,
	    "namespace", NS, "annotations", "spec", "template", "spec", "domain", "devices",
	    "interfaces", "name", "default", "masquerade", "name", "nic-1", "bridge", "macAddress",
	    mac, "networks", "name", "default", "pod", "name", "nic-1", "multus", "networkName",
	    net);

	if (static_ip != NULL)
		json_object_set_new(kind_get(vm, "metadata", "annotations", NULL),
		    KIND_ANNOT_STATIC_IP_PREFIX "nic-1", json_string(static_ip));
	return vm;
}

static void
create_vm(struct env *e, const char *name, const char *net, const char *mac, const char *static_ip)
{
	CU_ASSERT_EQUAL(post(e, VMS, vm_object(name, net, mac, static_ip)), 201);
}

/* --- waiting ----------------------------------------------------------------------------- */

/* Runs the loop until pred holds, at most WAIT_MS. */
static bool
wait_for(struct env *e, pred_fn pred, const void *arg)
{
	return test_env_wait(e, pred, arg, WAIT_MS);
}

/* status.networkConfigs[0] of VMNetCfg `name` is in `state` (with `ip` when not NULL). */
struct nic_want {
	const char *name;
	const char *state;
	const char *ip;
	const char *net;
};

static bool
nic_is(struct env *e, const void *arg)
{
	const struct nic_want *w = arg;
	json_t *o = get(e, CFGS "/%s", w->name);
	json_t *nic = json_array_get(kind_get(o, "status", VMNETCFG_FIELD_NICS, NULL), 0);
	const char *st = kind_get_str(nic, "state", NULL);
	const char *ip = kind_get_str(nic, "allocatedIPAddress", NULL);
	const char *net = kind_get_str(nic, "networkName", NULL);
	bool ok = st != NULL && strcmp(st, w->state) == 0 &&
		  (w->ip == NULL || (ip != NULL && strcmp(ip, w->ip) == 0)) &&
		  (w->net == NULL || (net != NULL && strcmp(net, w->net) == 0));

	json_decref(o);
	return ok;
}

/* IPPool `name`'s status.ipv4.allocated[ip] == value (value NULL: absent). */
struct alloc_want {
	const char *pool;
	const char *ip;
	const char *value;
};

static bool
alloc_is(struct env *e, const void *arg)
{
	const struct alloc_want *w = arg;
	json_t *o = get(e, POOLS "/%s", w->pool);
	const char *v = kind_get_str(o, "status", "ipv4", "allocated", w->ip, NULL);
	bool ok =
	    o != NULL && (w->value == NULL ? v == NULL : v != NULL && strcmp(v, w->value) == 0);

	json_decref(o);
	return ok;
}

/* status.ipv4.used == value and allocated has that many entries */
static bool
pool_used_is(struct env *e, const void *arg)
{
	const struct alloc_want *w = arg;
	json_t *o = get(e, POOLS "/%s", w->pool);
	long long want = atoll(w->value);
	bool ok =
	    json_integer_value(kind_get(o, "status", "ipv4", "used", NULL)) == want &&
	    (long long)json_object_size(kind_get(o, "status", "ipv4", "allocated", NULL)) == want;

	json_decref(o);
	return ok;
}

static bool
path_absent(struct env *e, const void *arg)
{
	json_t *o = get(e, "%s", (const char *)arg);

	json_decref(o);
	return o == NULL;
}

static bool
path_present(struct env *e, const void *arg)
{
	json_t *o = get(e, "%s", (const char *)arg);

	json_decref(o);
	return o != NULL;
}

struct cond_want {
	const char *path;
	const char *type;
	const char *status;
};

static bool
cond_is(struct env *e, const void *arg)
{
	const struct cond_want *w = arg;
	json_t *o = get(e, "%s", w->path), *c;
	bool ok = false;
	size_t i;

	json_array_foreach(kind_get(o, "status", "conditions", NULL), i, c)
	{
		const char *t = kind_get_str(c, "type", NULL), *s = kind_get_str(c, "status", NULL);

		if (t && s && strcmp(t, w->type) == 0 && strcmp(s, w->status) == 0)
			ok = true;
	}
	json_decref(o);
	return ok;
}

static bool
event_with_reason(struct env *e, const void *arg)
{
	json_t *o = get(e, EVENTS), *ev;
	bool ok = false;
	size_t i;

	json_array_foreach(json_object_get(o, "items"), i, ev)
	{
		const char *r = kind_get_str(ev, "reason", NULL);

		if (r != NULL && strcmp(r, (const char *)arg) == 0)
			ok = true;
	}
	json_decref(o);
	return ok;
}

/* Events of an object with type and reason: how many Event objects, their summed count. */
struct event_want {
	const char *object;
	const char *type;
	const char *reason;
	const char *message; /* a substring, or NULL */
};

static int
events_of(struct env *e, const struct event_want *w, long long *count)
{
	json_t *o = get(e, EVENTS), *ev;
	int n = 0;
	size_t i;

	*count = 0;
	json_array_foreach(json_object_get(o, "items"), i, ev)
	{
		const char *obj = kind_get_str(ev, "involvedObject", "name", NULL);
		const char *t = kind_get_str(ev, "type", NULL),
			   *r = kind_get_str(ev, "reason", NULL);
		const char *m = kind_get_str(ev, "message", NULL);

		if (obj && t && r && m && strcmp(obj, w->object) == 0 && strcmp(t, w->type) == 0 &&
		    strcmp(r, w->reason) == 0 && (w->message == NULL || strstr(m, w->message))) {
			n++;
			*count += json_integer_value(json_object_get(ev, "count"));
		}
	}
	json_decref(o);
	return n;
}

static bool
event_recorded(struct env *e, const void *arg)
{
	long long count;

	return events_of(e, arg, &count) > 0;
}

/* Every condition of the object at path: a CamelCase reason, observedGeneration equal to
 * its metadata.generation, which is at least arg's generation. */
struct gen_want {
	const char *path;
	long long generation;
	size_t n_conditions;
};

static bool
conditions_current(struct env *e, const void *arg)
{
	const struct gen_want *w = arg;
	json_t *o = get(e, "%s", w->path), *c;
	json_t *conds = kind_get(o, "status", "conditions", NULL);
	long long gen = json_integer_value(kind_get(o, "metadata", "generation", NULL));
	bool ok = gen >= w->generation && json_array_size(conds) == w->n_conditions;
	regex_t re;
	size_t i;

	if (regcomp(&re, "^[A-Z][A-Za-z0-9]*$", REG_EXTENDED | REG_NOSUB) != 0) {
		json_decref(o);
		return false;
	}
	json_array_foreach(conds, i, c)
	{
		const char *r = kind_get_str(c, "reason", NULL);

		ok = ok && r != NULL && regexec(&re, r, 0, NULL, 0) == 0 &&
		     json_integer_value(json_object_get(c, "observedGeneration")) == gen;
	}
	regfree(&re);
	json_decref(o);
	return ok;
}

static bool
agent_affinity_is(struct env *e, const void *arg)
{
	json_t *dep = get(e, DEPLOYS "/default-net-1-agent");
	json_t *expr = json_array_get(
	    json_object_get(
		json_array_get(kind_get(dep, "spec", "template", "spec", "affinity", "nodeAffinity",
				   "requiredDuringSchedulingIgnoredDuringExecution",
				   "nodeSelectorTerms", NULL),
		    0),
		"matchExpressions"),
	    0);
	const char *key = kind_get_str(expr, "key", NULL);
	bool ok = key != NULL && strcmp(key, (const char *)arg) == 0;

	json_decref(dep);
	return ok;
}

/* --- set-up ------------------------------------------------------------------------------ */

static const char *agent_image = "registry.example/vm-dhcp-agent:v1";
static const struct placement_opts *agent_knobs; /* NULL: defaults */

static int
ctrl_start(struct env *e)
{
	struct ctrl_opts o = {
	    .namespace = CTRL_NS,
	    .agent_image = agent_image,
	    .agent_sa = "vm-dhcp-agent",
	    .agent = agent_knobs,
	    .requeue_usec = 200000,
	};
	int r = ctrl_new(e->base, e->client, NULL, &o, &e->ctrl);

	if (r == 0)
		ctrl_lead(e->ctrl);
	return r;
}

static bool
env_start(struct env *e)
{
	return test_env_start(e, "test-controller", LOG_LEVEL_WARN, "../../crds");
}

/* net-1: 10.0.0.0/24, range .10-.20 (cluster network mgmt); net-2: 10.2.0.0/24 (plain). */
static bool
world(struct env *e)
{
	if (!env_start(e))
		return false;
	create_nad(e, "net-1", "mgmt");
	create_nad(e, "net-2", NULL);
	create_pool(
	    e, "net-1", "default/net-1", "10.0.0.0/24", "10.0.0.2", "10.0.0.10", "10.0.0.20");
	create_pool(e, "net-2", "net-2", "10.2.0.0/24", "10.2.0.2", "10.2.0.100", "10.2.0.200");
	if (ctrl_start(e) < 0 || !wait_for(e, test_env_ctrl_ready, NULL)) {
		CU_FAIL("controller did not start");
		return false;
	}
	return true;
}

/* --- tests ------------------------------------------------------------------------------- */

static void
test_vm_to_binding_and_agent(void)
{
	struct env e;
	json_t *cfg, *dep, *pool, *expr;

	if (!world(&e))
		goto out;
	create_vm(&e, "vm-1", "default/net-1", "02:AA:00:00:00:01", NULL);
	CU_ASSERT_TRUE(wait_for(
	    &e, nic_is, &(struct nic_want){"vm-1", "Allocated", "10.0.0.10", "default/net-1"}));
	CU_ASSERT_TRUE(wait_for(
	    &e, alloc_is, &(struct alloc_want){"net-1", "10.0.0.10", "02:aa:00:00:00:01"}));
	CU_ASSERT_TRUE(wait_for(&e, path_present, DEPLOYS "/default-net-1-agent"));
	CU_ASSERT_TRUE(wait_for(&e, path_present, DEPLOYS "/default-net-2-agent"));

	cfg = get(&e, CFGS "/vm-1");
	CU_ASSERT_STRING_EQUAL(kind_label(cfg, KIND_LABEL_VM_NAME), "vm-1");
	CU_ASSERT_TRUE(kube_obj_has_finalizer(cfg, CTRL_FINALIZER_VMNETCFG));
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(kind_get(cfg, "metadata", "ownerReferences", NULL), 0),
		"kind", NULL),
	    "VirtualMachine");
	json_decref(cfg);

	dep = get(&e, DEPLOYS "/default-net-1-agent");
	expr = json_array_get(
	    json_object_get(
		json_array_get(kind_get(dep, "spec", "template", "spec", "affinity", "nodeAffinity",
				   "requiredDuringSchedulingIgnoredDuringExecution",
				   "nodeSelectorTerms", NULL),
		    0),
		"matchExpressions"),
	    0);
	CU_ASSERT_STRING_EQUAL(kind_get_str(expr, "key", NULL), "network.harvesterhci.io/mgmt");
	json_decref(dep);
	/* plain Multus NAD: no node affinity (the replicas' pod anti-affinity only) */
	dep = get(&e, DEPLOYS "/default-net-2-agent");
	CU_ASSERT_PTR_NOT_NULL(dep);
	CU_ASSERT_PTR_NULL(
	    kind_get(dep, "spec", "template", "spec", "affinity", "nodeAffinity", NULL));
	CU_ASSERT_PTR_NOT_NULL(
	    kind_get(dep, "spec", "template", "spec", "affinity", "podAntiAffinity", NULL));
	json_decref(dep);

	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){POOLS "/net-1", IPPOOL_COND_REGISTERED, "True"}));
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){POOLS "/net-1", IPPOOL_COND_CACHE_READY, "True"}));
	/* no node carries the cluster network label yet, and no agent is ready */
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){POOLS "/net-1", IPPOOL_COND_AGENT_READY, "False"}));
	pool = get(&e, POOLS "/net-1");
	CU_ASSERT_TRUE(kube_obj_has_finalizer(pool, CTRL_FINALIZER_IPPOOL));
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(pool, "status", "agentPodRef", "name", NULL), "default-net-1-agent");
	json_decref(pool);

	/* the agent becomes ready → AgentReady True */
	CU_ASSERT_EQUAL(merge_patch(&e, DEPLOYS "/default-net-1-agent/status",
			    json_pack("{s:{s:i, s:i, s:i}}", "status", "observedGeneration", 1,
				"readyReplicas", 1, "availableReplicas", 1)),
	    200);
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){POOLS "/net-1", IPPOOL_COND_AGENT_READY, "True"}));

	/* a second IPPool on the same network: refused, no second agent */
	create_pool(
	    &e, "dup", "default/net-1", "10.0.0.0/24", "10.0.0.2", "10.0.0.30", "10.0.0.40");
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){POOLS "/dup", IPPOOL_COND_CACHE_READY, "False"}));
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){POOLS "/dup", IPPOOL_COND_REGISTERED, "False"}));
	CU_ASSERT_TRUE(path_absent(&e, DEPLOYS "/default-dup-agent"));
	/* and the first pool is unaffected */
	CU_ASSERT_TRUE(wait_for(
	    &e, alloc_is, &(struct alloc_want){"net-1", "10.0.0.10", "02:aa:00:00:00:01"}));
out:
	test_env_stop(&e);
}

static void
test_static_duplicate_and_move(void)
{
	struct env e;

	if (!world(&e))
		goto out;
	create_vm(&e, "vm-s", "default/net-1", "02:00:00:00:00:0a", "10.0.0.15");
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"vm-s", "Allocated", "10.0.0.15", NULL}));
	create_vm(&e, "vm-a", "default/net-1", "02:00:00:00:00:0b", NULL);
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"vm-a", "Allocated", "10.0.0.10", NULL}));

	/* the same static IP for another MAC: Pending + Event */
	create_vm(&e, "vm-t", "default/net-1", "02:00:00:00:00:0c", "10.0.0.15");
	CU_ASSERT_TRUE(wait_for(&e, nic_is, &(struct nic_want){"vm-t", "Pending", NULL, NULL}));
	CU_ASSERT_TRUE(wait_for(&e, event_with_reason, "StaticIPConflict"));
	/* the same MAC as vm-a on the same network: Pending + Event */
	create_vm(&e, "vm-d", "default/net-1", "02:00:00:00:00:0b", NULL);
	CU_ASSERT_TRUE(wait_for(&e, nic_is, &(struct nic_want){"vm-d", "Pending", NULL, NULL}));
	CU_ASSERT_TRUE(wait_for(&e, event_with_reason, "DuplicateMAC"));
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){CFGS "/vm-d", VMNETCFG_COND_ALLOCATED, "False"}));

	/* vm-a's NIC moves to net-2: its net-1 address is released */
	CU_ASSERT_EQUAL(merge_patch(&e, VMS "/vm-a",
			    json_pack("{s:{s:{s:{s:[{s:s, s:{}}, {s:s, s:{s:s}}]}}}}", "spec",
				"template", "spec", "networks", "name", "default", "pod", "name",
				"nic-1", "multus", "networkName", "default/net-2")),
	    200);
	CU_ASSERT_TRUE(wait_for(
	    &e, nic_is, &(struct nic_want){"vm-a", "Allocated", "10.2.0.100", "default/net-2"}));
	CU_ASSERT_TRUE(wait_for(
	    &e, alloc_is, &(struct alloc_want){"net-2", "10.2.0.100", "02:00:00:00:00:0b"}));
	/* the MAC is now free on net-1: vm-d (Pending as a duplicate) binds the lowest free
	 * address, the one vm-a released */
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"vm-d", "Allocated", "10.0.0.10", NULL}));
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){CFGS "/vm-d", VMNETCFG_COND_ALLOCATED, "True"}));
out:
	test_env_stop(&e);
}

static void
test_restart_rebuilds(void)
{
	struct env e;
	char name[16], mac[MAC_STRLEN];
	json_t *pool;

	if (!world(&e))
		goto out;
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "vm-%d", i);
		snprintf(mac, sizeof(mac), "02:00:00:00:01:%02x", i);
		create_vm(&e, name, "default/net-1", mac, NULL);
	}
	CU_ASSERT_TRUE(wait_for(&e, nic_is, &(struct nic_want){"vm-2", "Allocated", NULL, NULL}));
	CU_ASSERT_TRUE(wait_for(&e, nic_is, &(struct nic_want){"vm-0", "Allocated", NULL, NULL}));
	CU_ASSERT_TRUE(wait_for(&e, nic_is, &(struct nic_want){"vm-1", "Allocated", NULL, NULL}));

	/* "crash": drop every in-memory state, start a new controller on the same API */
	e.ctrl = ctrl_free(e.ctrl);
	CU_ASSERT_EQUAL_FATAL(ctrl_start(&e), 0);
	CU_ASSERT_TRUE(wait_for(&e, test_env_ctrl_ready, NULL));
	create_vm(&e, "vm-new", "default/net-1", "02:00:00:00:01:ff", NULL);
	/* .10 .11 .12 are held: the rebuilt IPAM hands out .13, never one of them */
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"vm-new", "Allocated", "10.0.0.13", NULL}));
	CU_ASSERT_TRUE(wait_for(
	    &e, alloc_is, &(struct alloc_want){"net-1", "10.0.0.13", "02:00:00:00:01:ff"}));
	pool = get(&e, POOLS "/net-1");
	CU_ASSERT_EQUAL(json_integer_value(kind_get(pool, "status", "ipv4", "used", NULL)), 4);
	CU_ASSERT_EQUAL(json_object_size(kind_get(pool, "status", "ipv4", "allocated", NULL)), 4);
	json_decref(pool);
out:
	test_env_stop(&e);
}

static void
test_delete_paths(void)
{
	struct env e;
	long code = 0;

	if (!world(&e))
		goto out;
	create_vm(&e, "vm-x", "default/net-1", "02:00:00:00:02:01", NULL);
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"vm-x", "Allocated", "10.0.0.10", NULL}));
	CU_ASSERT_TRUE(wait_for(
	    &e, alloc_is, &(struct alloc_want){"net-1", "10.0.0.10", "02:00:00:00:02:01"}));

	/* VMNetCfg deleted: the finalizer releases the address, then lets it go */
	json_decref(api(&e, "DELETE", VMS "/vm-x", NULL, NULL, &code));
	CU_ASSERT_EQUAL(code, 200);
	json_decref(api(&e, "DELETE", CFGS "/vm-x", NULL, NULL, &code));
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_TRUE(wait_for(&e, path_absent, CFGS "/vm-x"));
	CU_ASSERT_TRUE(wait_for(&e, alloc_is, &(struct alloc_want){"net-1", "10.0.0.10", NULL}));

	/* paused pool: agent removed, Stopped, bindings kept */
	CU_ASSERT_TRUE(wait_for(&e, path_present, DEPLOYS "/default-net-2-agent"));
	CU_ASSERT_EQUAL(
	    merge_patch(&e, POOLS "/net-2", json_pack("{s:{s:b}}", "spec", "paused", 1)), 200);
	CU_ASSERT_TRUE(wait_for(&e, path_absent, DEPLOYS "/default-net-2-agent"));
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){POOLS "/net-2", IPPOOL_COND_STOPPED, "True"}));

	/* IPPool deleted: agent removed, finalizer released, object gone; its NICs Pending */
	create_vm(&e, "vm-y", "default/net-1", "02:00:00:00:02:02", NULL);
	CU_ASSERT_TRUE(wait_for(&e, nic_is, &(struct nic_want){"vm-y", "Allocated", NULL, NULL}));
	CU_ASSERT_TRUE(wait_for(&e, path_present, DEPLOYS "/default-net-1-agent"));
	json_decref(api(&e, "DELETE", POOLS "/net-1", NULL, NULL, &code));
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_TRUE(wait_for(&e, path_absent, DEPLOYS "/default-net-1-agent"));
	CU_ASSERT_TRUE(wait_for(&e, path_absent, POOLS "/net-1"));
	CU_ASSERT_TRUE(wait_for(&e, nic_is, &(struct nic_want){"vm-y", "Pending", NULL, NULL}));
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){CFGS "/vm-y", VMNETCFG_COND_ALLOCATED, "False"}));
out:
	test_env_stop(&e);
}

static void
test_conflicts_injected(void)
{
	struct env e;
	char name[16], mac[MAC_STRLEN];
	json_t *pool;

	if (!world(&e))
		goto out;
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "vm-c%d", i);
		snprintf(mac, sizeof(mac), "02:00:00:00:03:%02x", i);
		create_vm(&e, name, "default/net-1", mac, NULL);
	}
	/* the controller's next requests fail with 409 Conflict: it re-reads and retries */
	CU_ASSERT_EQUAL(test_apiserver_fault(e.api, "fail?code=409&count=6"), 0);
	for (int i = 0; i < 5; i++) {
		struct nic_want w = {.state = "Allocated"};

		snprintf(name, sizeof(name), "vm-c%d", i);
		w.name = name;
		CU_ASSERT_TRUE(wait_for(&e, nic_is, &w));
	}
	/* converged: five distinct addresses, all in the pool status */
	{
		bool seen[11] = {false};
		bool distinct = true;

		for (int i = 0; i < 5; i++) {
			json_t *o;
			const char *ip;
			unsigned last = 0;

			snprintf(name, sizeof(name), "vm-c%d", i);
			o = get(&e, CFGS "/%s", name);
			ip = kind_get_str(
			    json_array_get(kind_get(o, "status", VMNETCFG_FIELD_NICS, NULL), 0),
			    "allocatedIPAddress", NULL);
			if (ip == NULL || sscanf(ip, "10.0.0.%u", &last) != 1 || last < 10 ||
			    last > 20 || seen[last - 10])
				distinct = false;
			else
				seen[last - 10] = true;
			json_decref(o);
		}
		CU_ASSERT_TRUE(distinct);
	}
	/* and the pool status lists exactly those five (one coalesced view) */
	CU_ASSERT_TRUE(wait_for(&e, pool_used_is, &(struct alloc_want){"net-1", NULL, "5"}));
	pool = get(&e, POOLS "/net-1");
	CU_ASSERT_EQUAL(json_object_size(kind_get(pool, "status", "ipv4", "allocated", NULL)), 5);
	json_decref(pool);
out:
	test_env_stop(&e);
}

/* A VMNetCfg (with our finalizer) whose status already claims ip for mac on default/net-1. */
static void
create_cfg_with_status(struct env *e, const char *name, const char *mac, const char *ip)
{
	char path[256];

	CU_ASSERT_EQUAL(
	    post(e, CFGS,
		json_pack("{s:s, s:s, s:{s:s, s:s, s:[s]}, s:{s:s, s:[{s:s, s:s}]}}", "apiVersion",
		    CRD_API_VERSION, "kind", VMNETCFG_KIND, "metadata", "name", name, "namespace",
		    NS, "finalizers", CTRL_FINALIZER_VMNETCFG, "spec", "vmName", name,
		    VMNETCFG_FIELD_NICS, "networkName", "default/net-1", "macAddress", mac)),
	    201);
	snprintf(path, sizeof(path), CFGS "/%s/status", name);
	CU_ASSERT_EQUAL(merge_patch(e, path,
			    json_pack("{s:{s:[{s:s, s:s, s:s, s:s}]}}", "status",
				VMNETCFG_FIELD_NICS, "networkName", "default/net-1", "macAddress",
				mac, "allocatedIPAddress", ip, "state", "Allocated")),
	    200);
}

static bool
cache_ready_conflicts(struct env *e, const void *arg)
{
	json_t *o = get(e, POOLS "/net-1"), *c;
	bool ok = false;
	size_t i;

	json_array_foreach(kind_get(o, "status", "conditions", NULL), i, c)
	{
		const char *t = kind_get_str(c, "type", NULL), *r = kind_get_str(c, "reason", NULL);
		const char *m = kind_get_str(c, "message", NULL);

		if (t && r && m && strcmp(t, IPPOOL_COND_CACHE_READY) == 0 &&
		    strcmp(r, "Conflicts") == 0 && strstr(m, "duplicate-ip") != NULL)
			ok = true;
	}
	json_decref(o);
	return ok;
}

/* Existing bindings that contradict each other: reported (Event, condition), never two MACs
 * on one address, and a binding known only from the IPPool status stays reserved. */
static void
test_rebuild_conflicts_reported(void)
{
	struct env e;

	if (!env_start(&e))
		goto out;
	create_nad(&e, "net-1", "mgmt");
	create_pool(
	    &e, "net-1", "default/net-1", "10.0.0.0/24", "10.0.0.2", "10.0.0.10", "10.0.0.20");
	CU_ASSERT_EQUAL(merge_patch(&e, POOLS "/net-1/status",
			    json_pack("{s:{s:{s:{s:s}, s:i, s:i}}}", "status", "ipv4", "allocated",
				"10.0.0.13", "02:00:00:00:04:0c", "used", 1, "available", 9)),
	    200);
	/* a second pool whose status does not decode (no "used"): ignored, reported, rewritten */
	create_nad(&e, "net-2", NULL);
	create_pool(
	    &e, "net-2", "default/net-2", "10.2.0.0/24", "10.2.0.2", "10.2.0.100", "10.2.0.200");
	CU_ASSERT_EQUAL(merge_patch(&e, POOLS "/net-2/status",
			    json_pack("{s:{s:{s:{s:s}}}}", "status", "ipv4", "allocated",
				"10.2.0.150", "02:00:00:00:04:ff")),
	    200);
	create_cfg_with_status(&e, "c-a", "02:00:00:00:04:0a", "10.0.0.12");
	create_cfg_with_status(&e, "c-b", "02:00:00:00:04:0b", "10.0.0.12");
	CU_ASSERT_EQUAL_FATAL(ctrl_start(&e), 0);
	CU_ASSERT_TRUE(wait_for(&e, test_env_ctrl_ready, NULL));

	CU_ASSERT_TRUE(wait_for(&e, cache_ready_conflicts, NULL));
	CU_ASSERT_TRUE(wait_for(&e, event_with_reason, "IPAMConflict"));
	/* the first claim keeps the address; the other NIC is bound elsewhere, never .12 */
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"c-a", "Allocated", "10.0.0.12", NULL}));
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"c-b", "Allocated", "10.0.0.10", NULL}));
	CU_ASSERT_TRUE(wait_for(
	    &e, alloc_is, &(struct alloc_want){"net-1", "10.0.0.12", "02:00:00:00:04:0a"}));
	/* .13 is held by a MAC known only from the pool status: not handed out */
	create_vm(&e, "vm-n", "default/net-1", "02:00:00:00:04:0d", NULL);
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"vm-n", "Allocated", "10.0.0.11", NULL}));
	create_vm(&e, "vm-m", "default/net-1", "02:00:00:00:04:0e", NULL);
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"vm-m", "Allocated", "10.0.0.14", NULL}));
	CU_ASSERT_TRUE(wait_for(
	    &e, alloc_is, &(struct alloc_want){"net-1", "10.0.0.13", "02:00:00:00:04:0c"}));

	CU_ASSERT_TRUE(wait_for(&e, event_with_reason, "InvalidStatus"));
	CU_ASSERT_TRUE(wait_for(&e, pool_used_is, &(struct alloc_want){"net-2", NULL, "0"}));
out:
	test_env_stop(&e);
}

struct image_want {
	const char *deploy;
	const char *image;
};

static bool
agent_image_is(struct env *e, const void *arg)
{
	const struct image_want *w = arg;
	json_t *o = get(e, DEPLOYS "/%s", w->deploy);
	const char *img = placement_image(o);
	bool ok = img != NULL && strcmp(img, w->image) == 0;

	json_decref(o);
	return ok;
}

/* The agent net-1 runs with the knobs of test_replacement_and_hold. */
static bool
agent_knobs_are(struct env *e, const void *arg)
{
	json_t *dep = get(e, DEPLOYS "/default-net-1-agent");
	json_t *pod = kind_get(dep, "spec", "template", "spec", NULL);
	const char *multus = kind_get_str(
	    dep, "spec", "template", "metadata", "annotations", KIND_ANNOT_MULTUS_NETWORKS, NULL);
	const char *pc = kind_get_str(pod, "priorityClassName", NULL);
	const char *zone = kind_get_str(pod, "nodeSelector", "zone", NULL);
	bool ok = pc != NULL && strcmp(pc, "vm-dhcp") == 0 && zone != NULL &&
		  strcmp(zone, "a") == 0 && multus != NULL && strstr(multus, "\"br1\"") != NULL &&
		  json_array_size(kind_get(pod, "tolerations", NULL)) == 3;

	json_decref(dep);
	return ok;
}

/*
 * A new agent image, a new cluster network of the NAD or a new agent knob re-places the
 * agents, except for a pool holding agent upgrades.
 */
static void
test_replacement_and_hold(void)
{
	struct env e;
	json_t *dep;
	char *rv;

	agent_image = "registry.example/vm-dhcp-agent:v1";
	if (!world(&e))
		goto out;
	CU_ASSERT_TRUE(wait_for(&e, agent_image_is,
	    &(struct image_want){"default-net-1-agent", "registry.example/vm-dhcp-agent:v1"}));
	CU_ASSERT_TRUE(wait_for(&e, agent_image_is,
	    &(struct image_want){"default-net-2-agent", "registry.example/vm-dhcp-agent:v1"}));
	CU_ASSERT_EQUAL(merge_patch(&e, POOLS "/net-2",
			    json_pack("{s:{s:{s:s}}}", "metadata", "annotations",
				PLACEMENT_ANNOT_HOLD, "true")),
	    200);
	dep = get(&e, DEPLOYS "/default-net-2-agent");
	rv = strdup(kube_obj_resource_version(dep) ? kube_obj_resource_version(dep) : "");
	json_decref(dep);

	/* upgrade: a controller with a new agent image */
	CU_ASSERT_TRUE(wait_for(&e, test_env_no_writes_in_flight, NULL));
	e.ctrl = ctrl_free(e.ctrl);
	agent_image = "registry.example/vm-dhcp-agent:v2";
	CU_ASSERT_EQUAL_FATAL(ctrl_start(&e), 0);
	CU_ASSERT_TRUE(wait_for(&e, test_env_ctrl_ready, NULL));
	CU_ASSERT_TRUE(wait_for(&e, agent_image_is,
	    &(struct image_want){"default-net-1-agent", "registry.example/vm-dhcp-agent:v2"}));
	/* the held pool keeps its agent untouched */
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){POOLS "/net-1", IPPOOL_COND_REGISTERED, "True"}));
	dep = get(&e, DEPLOYS "/default-net-2-agent");
	CU_ASSERT_STRING_EQUAL(placement_image(dep), "registry.example/vm-dhcp-agent:v1");
	CU_ASSERT_STRING_EQUAL(kube_obj_resource_version(dep), rv);
	json_decref(dep);
	free(rv);

	/* the NAD moves to another cluster network: re-placed with the new affinity */
	CU_ASSERT_EQUAL(merge_patch(&e, NADS "/net-1",
			    json_pack("{s:{s:{s:s}}}", "metadata", "labels",
				KIND_LABEL_CLUSTER_NETWORK, "vlan-net")),
	    200);
	CU_ASSERT_TRUE(wait_for(&e, agent_affinity_is, "network.harvesterhci.io/vlan-net"));

	/* the controller restarted with agent knobs (flags): re-placed with them, net-2 held */
	{
		static const struct {
			enum placement_opt which;
			const char *value;
		} knobs[] = {
		    {PLACEMENT_OPT_INTERFACE, "br1"},
		    {PLACEMENT_OPT_PRIORITY_CLASS, "vm-dhcp"},
		    {PLACEMENT_OPT_NODE_SELECTOR, "{\"zone\":\"a\"}"},
		    {PLACEMENT_OPT_TOLERATIONS, "[{\"key\":\"net\",\"operator\":\"Exists\"}]"},
		};
		struct placement_opts o = {0};
		char err[256];

		for (size_t i = 0; i < ELEMENTSOF(knobs); i++)
			CU_ASSERT_EQUAL(placement_opts_set(
					    &o, knobs[i].which, knobs[i].value, err, sizeof(err)),
			    0);
		CU_ASSERT_TRUE(wait_for(&e, test_env_no_writes_in_flight, NULL));
		e.ctrl = ctrl_free(e.ctrl);
		agent_knobs = &o;
		CU_ASSERT_EQUAL(ctrl_start(&e), 0);
		placement_opts_clear(&o); /* the controller holds its own copy */
		agent_knobs = NULL;
		CU_ASSERT_TRUE(wait_for(&e, agent_knobs_are, NULL));
		dep = get(&e, DEPLOYS "/default-net-2-agent");
		CU_ASSERT_PTR_NULL(
		    kind_get(dep, "spec", "template", "spec", "priorityClassName", NULL));
		json_decref(dep);
	}
out:
	agent_image = "registry.example/vm-dhcp-agent:v1";
	agent_knobs = NULL;
	test_env_stop(&e);
}

/*
 * What an operator sees: every condition with a reason and the generation it was computed
 * from (a spec edit is acknowledged by a new observedGeneration), and Normal Events for the
 * agent placed, the pool ready, a NIC's address allocated and released, each recorded once.
 */
static void
test_conditions_and_normal_events(void)
{
	struct env e;
	long long count;
	long code = 0;

	if (!world(&e))
		goto out;
	/* a VMNetCfg of its own (no VM: its spec is ours to edit below) */
	CU_ASSERT_EQUAL(
	    post(&e, CFGS,
		json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:[{s:s, s:s}]}}", "apiVersion",
		    CRD_API_VERSION, "kind", VMNETCFG_KIND, "metadata", "name", "c-ev", "namespace",
		    NS, "spec", "vmName", "c-ev", VMNETCFG_FIELD_NICS, "networkName",
		    "default/net-1", "macAddress", "02:00:00:00:05:01")),
	    201);
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"c-ev", "Allocated", "10.0.0.10", NULL}));
	CU_ASSERT_TRUE(wait_for(&e, event_recorded,
	    &(struct event_want){"c-ev", "Normal", "Allocated",
		"02:00:00:00:05:01 on default/net-1: allocated 10.0.0.10"}));
	CU_ASSERT_TRUE(wait_for(&e, event_recorded,
	    &(struct event_want){"net-1", "Normal", "AgentPlaced", "default-net-1-agent"}));
	CU_ASSERT_EQUAL(
	    events_of(&e, &(struct event_want){"net-1", "Normal", "Ready", NULL}, &count),
	    0); /* the agent is not ready yet */
	CU_ASSERT_EQUAL(merge_patch(&e, DEPLOYS "/default-net-1-agent/status",
			    json_pack("{s:{s:i, s:i, s:i}}", "status", "observedGeneration", 1,
				"readyReplicas", 1, "availableReplicas", 1)),
	    200);
	CU_ASSERT_TRUE(wait_for(
	    &e, event_recorded, &(struct event_want){"net-1", "Normal", "Ready", "default/net-1"}));
	CU_ASSERT_TRUE(wait_for(&e, conditions_current, &(struct gen_want){POOLS "/net-1", 1, 4}));
	CU_ASSERT_TRUE(wait_for(&e, conditions_current, &(struct gen_want){CFGS "/c-ev", 1, 3}));

	/* spec edits that change no outcome: generation 2, conditions rewritten with it */
	CU_ASSERT_EQUAL(merge_patch(&e, POOLS "/net-1",
			    json_pack("{s:{s:{s:[s]}}}", "spec", "ipv4Config", "dns", "10.0.0.53")),
	    200);
	CU_ASSERT_TRUE(wait_for(&e, conditions_current, &(struct gen_want){POOLS "/net-1", 2, 4}));
	CU_ASSERT_EQUAL(
	    merge_patch(&e, CFGS "/c-ev", json_pack("{s:{s:s}}", "spec", "vmName", "c-ev2")), 200);
	CU_ASSERT_TRUE(wait_for(&e, conditions_current, &(struct gen_want){CFGS "/c-ev", 2, 3}));
	CU_ASSERT_TRUE(wait_for(&e, test_env_no_writes_in_flight, NULL));
	/* those rewrites were no transition: still one Event each, counted once */
	CU_ASSERT_EQUAL(
	    events_of(&e, &(struct event_want){"c-ev", "Normal", "Allocated", NULL}, &count), 1);
	CU_ASSERT_EQUAL(count, 1);
	CU_ASSERT_EQUAL(
	    events_of(&e, &(struct event_want){"net-1", "Normal", "AgentPlaced", NULL}, &count), 1);
	CU_ASSERT_EQUAL(count, 1);
	CU_ASSERT_EQUAL(
	    events_of(&e, &(struct event_want){"net-1", "Normal", "Ready", NULL}, &count), 1);
	CU_ASSERT_EQUAL(count, 1);

	/* deleted: the finalizer gives the address back, Released */
	json_decref(api(&e, "DELETE", CFGS "/c-ev", NULL, NULL, &code));
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_TRUE(wait_for(&e, path_absent, CFGS "/c-ev"));
	CU_ASSERT_TRUE(wait_for(&e, event_recorded,
	    &(struct event_want){"c-ev", "Normal", "Released",
		"02:00:00:00:05:01 on default/net-1: released 10.0.0.10"}));
out:
	test_env_stop(&e);
}

/* The controller's cache (not the API: a test request would take an injected fault) shows
 * VMNetCfg arg with its NIC Allocated. */
static bool
cached_allocated(struct env *e, const void *arg)
{
	const struct cfg_item *it = kube_store_get(kube_informer_store(e->ctrl->inf_cfg), arg);

	return it != NULL && it->cfg != NULL && it->cfg->status.n_nics == 1 &&
	       it->cfg->status.nics[0].state == VMNETCFG_STATE_ALLOCATED;
}

/*
 * A status write refused (409) is computed and written again: the Allocated Event is
 * recorded once, when the write that shows the address succeeds, not once per attempt.
 */
static void
test_normal_event_once_despite_conflict(void)
{
	struct env e;
	long long count;
	long code = 0;

	if (!world(&e))
		goto out;
	CU_ASSERT_TRUE(wait_for(
	    &e, event_recorded, &(struct event_want){"net-1", "Normal", "AgentPlaced", NULL}));
	CU_ASSERT_TRUE(wait_for(&e, test_env_no_writes_in_flight, NULL));
	/* with our finalizer already: the controller's first request is the status write */
	CU_ASSERT_EQUAL(
	    post(&e, CFGS,
		json_pack("{s:s, s:s, s:{s:s, s:s, s:[s]}, s:{s:s, s:[{s:s, s:s}]}}", "apiVersion",
		    CRD_API_VERSION, "kind", VMNETCFG_KIND, "metadata", "name", "c-409",
		    "namespace", NS, "finalizers", CTRL_FINALIZER_VMNETCFG, "spec", "vmName",
		    "c-409", VMNETCFG_FIELD_NICS, "networkName", "default/net-1", "macAddress",
		    "02:00:00:00:06:01")),
	    201);
	/* the loop does not run in between: the next two requests the controller makes (its
	 * status write, then its retry or the pool's status write) fail with 409; the Event
	 * create can only come after a write succeeded, so never takes one */
	CU_ASSERT_EQUAL(test_apiserver_fault(e.api, "fail?code=409&count=2"), 0);
	CU_ASSERT_TRUE(wait_for(&e, cached_allocated, NS "/c-409"));
	CU_ASSERT_TRUE(wait_for(&e, event_recorded,
	    &(struct event_want){"c-409", "Normal", "Allocated", "allocated 10.0.0.10"}));
	/* a later Event on the same object, so that anything recorded before it is in */
	json_decref(api(&e, "DELETE", CFGS "/c-409", NULL, NULL, &code));
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_TRUE(wait_for(&e, event_recorded,
	    &(struct event_want){"c-409", "Normal", "Released", "released 10.0.0.10"}));
	CU_ASSERT_EQUAL(
	    events_of(&e, &(struct event_want){"c-409", "Normal", "Allocated", NULL}, &count), 1);
	CU_ASSERT_EQUAL(count, 1);
out:
	test_env_stop(&e);
}

/* A hand-written VMNetCfg: one dynamic NIC with mac on default/net-1. */
static void
create_cfg(struct env *e, const char *name, const char *mac)
{
	CU_ASSERT_EQUAL(
	    post(e, CFGS,
		json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:[{s:s, s:s}]}}", "apiVersion",
		    CRD_API_VERSION, "kind", VMNETCFG_KIND, "metadata", "name", name, "namespace",
		    NS, "spec", "vmName", name, VMNETCFG_FIELD_NICS, "networkName", "default/net-1",
		    "macAddress", mac)),
	    201);
}

static long
set_paused(struct env *e, const char *name, bool paused)
{
	char path[256];

	snprintf(path, sizeof(path), CFGS "/%s", name);
	return merge_patch(e, path, json_pack("{s:{s:b}}", "spec", "paused", paused));
}

/* The controller restarts: every in-memory state dropped, the IPAM rebuilt from the API. */
static bool
restart(struct env *e)
{
	wait_for(e, test_env_no_writes_in_flight, NULL);
	e->ctrl = ctrl_free(e->ctrl);
	return ctrl_start(e) == 0 && wait_for(e, test_env_ctrl_ready, NULL);
}

/*
 * A paused VMNetCfg, as upstream's: its address leaves the IPPool status (the agent stops
 * answering its MAC) and stays in its own status; another NIC may take it meanwhile, and a
 * restart in any of these states never gives it to two MACs; resumed, the NIC takes it back
 * when free, else waits Pending (AddressTaken, Warning Event) until it is.
 */
static void
test_vmnetcfg_pause_resume(void)
{
	static const char mac_p[] = "02:00:00:00:05:01", mac_q[] = "02:00:00:00:05:02";
	struct env e;

	if (!world(&e))
		goto out;
	create_cfg(&e, "c-p", mac_p);
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"c-p", "Allocated", "10.0.0.10", NULL}));
	CU_ASSERT_TRUE(wait_for(&e, alloc_is, &(struct alloc_want){"net-1", "10.0.0.10", mac_p}));

	/* paused: released from the pool, remembered in its status */
	CU_ASSERT_EQUAL(set_paused(&e, "c-p", true), 200);
	CU_ASSERT_TRUE(wait_for(&e, alloc_is, &(struct alloc_want){"net-1", "10.0.0.10", NULL}));
	CU_ASSERT_TRUE(wait_for(&e, pool_used_is, &(struct alloc_want){"net-1", NULL, "0"}));
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"c-p", "Pending", "10.0.0.10", NULL}));
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){CFGS "/c-p", VMNETCFG_COND_DISABLED, "True"}));
	CU_ASSERT_TRUE(
	    cond_is(&e, &(struct cond_want){CFGS "/c-p", VMNETCFG_COND_ALLOCATED, "False"}));
	CU_ASSERT_TRUE(
	    cond_is(&e, &(struct cond_want){CFGS "/c-p", VMNETCFG_COND_IN_SYNCED, "False"}));
	CU_ASSERT_TRUE(wait_for(&e, event_recorded,
	    &(struct event_want){"c-p", "Normal", "Released", "released 10.0.0.10"}));

	/* a restart while paused: the remembered address is not held */
	CU_ASSERT_TRUE_FATAL(restart(&e));
	CU_ASSERT_TRUE(alloc_is(&e, &(struct alloc_want){"net-1", "10.0.0.10", NULL}));
	create_cfg(&e, "c-q", mac_q);
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"c-q", "Allocated", "10.0.0.10", NULL}));
	CU_ASSERT_TRUE(wait_for(&e, alloc_is, &(struct alloc_want){"net-1", "10.0.0.10", mac_q}));

	/* resumed: its address is taken, it waits (never steals it) */
	CU_ASSERT_EQUAL(set_paused(&e, "c-p", false), 200);
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){CFGS "/c-p", VMNETCFG_COND_DISABLED, "False"}));
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"c-p", "Pending", "10.0.0.10", NULL}));
	CU_ASSERT_TRUE(wait_for(&e, event_recorded,
	    &(struct event_want){"c-p", "Warning", VMNETCFG_REASON_ADDRESS_TAKEN,
		"10.0.0.10, its address before the pause, is now held by MAC "
		"02:00:00:00:05:02"}));
	CU_ASSERT_TRUE(
	    cond_is(&e, &(struct cond_want){CFGS "/c-p", VMNETCFG_COND_ALLOCATED, "False"}));
	CU_ASSERT_TRUE(alloc_is(&e, &(struct alloc_want){"net-1", "10.0.0.10", mac_q}));
	CU_ASSERT_TRUE(pool_used_is(&e, &(struct alloc_want){"net-1", NULL, "1"}));

	/* a restart now: the Pending NIC's remembered address still is not held, no conflict */
	CU_ASSERT_TRUE_FATAL(restart(&e));
	create_cfg(&e, "c-r", "02:00:00:00:05:03");
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"c-r", "Allocated", "10.0.0.11", NULL}));
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"c-p", "Pending", "10.0.0.10", NULL}));
	CU_ASSERT_TRUE(alloc_is(&e, &(struct alloc_want){"net-1", "10.0.0.10", mac_q}));
	CU_ASSERT_FALSE(event_with_reason(&e, "IPAMConflict"));
	CU_ASSERT_TRUE(
	    cond_is(&e, &(struct cond_want){POOLS "/net-1", IPPOOL_COND_CACHE_READY, "True"}));

	/* the holder goes: c-p takes its address back */
	{
		long code = 0;

		json_decref(api(&e, "DELETE", CFGS "/c-q", NULL, NULL, &code));
		CU_ASSERT_EQUAL(code, 200);
	}
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"c-p", "Allocated", "10.0.0.10", NULL}));
	CU_ASSERT_TRUE(wait_for(&e, alloc_is, &(struct alloc_want){"net-1", "10.0.0.10", mac_p}));
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){CFGS "/c-p", VMNETCFG_COND_ALLOCATED, "True"}));

	/* paused and resumed with nothing in between: the same address, not the lowest free */
	CU_ASSERT_EQUAL(set_paused(&e, "c-r", true), 200);
	CU_ASSERT_TRUE(wait_for(&e, alloc_is, &(struct alloc_want){"net-1", "10.0.0.11", NULL}));
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"c-r", "Pending", "10.0.0.11", NULL}));
	CU_ASSERT_EQUAL(set_paused(&e, "c-r", false), 200);
	CU_ASSERT_TRUE(
	    wait_for(&e, nic_is, &(struct nic_want){"c-r", "Allocated", "10.0.0.11", NULL}));
	CU_ASSERT_TRUE(wait_for(
	    &e, alloc_is, &(struct alloc_want){"net-1", "10.0.0.11", "02:00:00:00:05:03"}));
out:
	test_env_stop(&e);
}

/* The NAD's ippool labels: name (exactly) the pool that serves its network. */
struct nad_want {
	const char *nad;
	const char *ns; /* NULL: both labels absent */
	const char *name;
};

static bool
nad_labels_are(struct env *e, const void *arg)
{
	const struct nad_want *w = arg;
	json_t *o = get(e, NADS "/%s", w->nad);
	const char *ns = kind_label(o, PLACEMENT_LABEL_POOL_NS);
	const char *name = kind_label(o, PLACEMENT_LABEL_POOL_NAME);
	bool ok =
	    o != NULL && (w->ns == NULL ? ns == NULL && name == NULL
					: ns != NULL && name != NULL && strcmp(ns, w->ns) == 0 &&
					      strcmp(name, w->name) == 0);

	json_decref(o);
	return ok;
}

/*
 * network.harvesterhci.io/ippool-namespace and ippool-name on the NAD, as upstream's IPPool
 * controller sets them: set by the pool that serves the network (paused too), not by a second
 * pool refused as a duplicate, put back when changed, moved to the duplicate once it serves,
 * removed when no pool serves; other labels untouched.
 */
static void
test_nad_labels(void)
{
	struct env e;
	long code = 0;
	json_t *o;

	if (!world(&e))
		goto out;
	CU_ASSERT_TRUE(wait_for(&e, nad_labels_are, &(struct nad_want){"net-1", NS, "net-1"}));
	CU_ASSERT_TRUE(wait_for(&e, nad_labels_are, &(struct nad_want){"net-2", NS, "net-2"}));
	o = get(&e, NADS "/net-1");
	CU_ASSERT_STRING_EQUAL(kind_label(o, KIND_LABEL_CLUSTER_NETWORK), "mgmt");
	json_decref(o);

	/* a second pool on net-1: refused, the labels keep naming the first */
	create_pool(
	    &e, "dup", "default/net-1", "10.0.0.0/24", "10.0.0.2", "10.0.0.30", "10.0.0.40");
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){POOLS "/dup", IPPOOL_COND_CACHE_READY, "False"}));
	CU_ASSERT_TRUE(wait_for(&e, test_env_no_writes_in_flight, NULL));
	CU_ASSERT_TRUE(nad_labels_are(&e, &(struct nad_want){"net-1", NS, "net-1"}));

	/* changed by hand: put back */
	CU_ASSERT_EQUAL(merge_patch(&e, NADS "/net-1",
			    json_pack("{s:{s:{s:s}}}", "metadata", "labels",
				PLACEMENT_LABEL_POOL_NAME, "someone-else")),
	    200);
	CU_ASSERT_TRUE(wait_for(&e, nad_labels_are, &(struct nad_want){"net-1", NS, "net-1"}));

	/* a paused pool still serves its network: labels kept */
	CU_ASSERT_EQUAL(
	    merge_patch(&e, POOLS "/net-2", json_pack("{s:{s:b}}", "spec", "paused", 1)), 200);
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){POOLS "/net-2", IPPOOL_COND_STOPPED, "True"}));
	CU_ASSERT_TRUE(wait_for(&e, test_env_no_writes_in_flight, NULL));
	CU_ASSERT_TRUE(nad_labels_are(&e, &(struct nad_want){"net-2", NS, "net-2"}));

	/* the serving pool deleted: the duplicate serves now, the labels name it */
	json_decref(api(&e, "DELETE", POOLS "/net-1", NULL, NULL, &code));
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_TRUE(wait_for(&e, path_absent, POOLS "/net-1"));
	CU_ASSERT_TRUE(wait_for(&e, nad_labels_are, &(struct nad_want){"net-1", NS, "dup"}));
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){POOLS "/dup", IPPOOL_COND_CACHE_READY, "True"}));
	/* the last pool of the network deleted: the labels go, the others stay */
	json_decref(api(&e, "DELETE", POOLS "/dup", NULL, NULL, &code));
	CU_ASSERT_EQUAL(code, 200);
	CU_ASSERT_TRUE(wait_for(&e, nad_labels_are, &(struct nad_want){"net-1", NULL, NULL}));
	o = get(&e, NADS "/net-1");
	CU_ASSERT_STRING_EQUAL(kind_label(o, KIND_LABEL_CLUSTER_NETWORK), "mgmt");
	json_decref(o);
	CU_ASSERT_TRUE(nad_labels_are(&e, &(struct nad_want){"net-2", NS, "net-2"}));
out:
	test_env_stop(&e);
}

/* Condition type of the object at path has status and reason. */
struct reason_want {
	const char *path, *type, *status, *reason;
};

static bool
reason_is(struct env *e, const void *arg)
{
	const struct reason_want *w = arg;
	json_t *o = get(e, "%s", w->path), *c;
	bool ok = false;
	size_t i;

	json_array_foreach(kind_get(o, "status", "conditions", NULL), i, c)
	{
		const char *t = kind_get_str(c, "type", NULL), *s = kind_get_str(c, "status", NULL);
		const char *r = kind_get_str(c, "reason", NULL);

		if (t && s && r && strcmp(t, w->type) == 0 && strcmp(s, w->status) == 0 &&
		    strcmp(r, w->reason) == 0)
			ok = true;
	}
	json_decref(o);
	return ok;
}

/*
 * IPPools upstream's schema stores (harvester/vm-dhcp-controller chart/crds/): a /7 network
 * with a small range is served; a range the address cache cannot hold is CacheReady=False
 * InvalidRange; an upper-case network name matches no NAD (NetworkNotFound); no ipv4Config
 * is not served (a Warning Event InvalidSpec).
 */
static void
test_upstream_shaped_pools(void)
{
	struct env e;

	if (!world(&e))
		goto out;
	create_nad(&e, "net-7", NULL);
	create_pool(
	    &e, "net-7", "default/net-7", "12.0.0.0/7", "12.0.0.2", "12.0.0.10", "12.0.0.20");
	CU_ASSERT_TRUE(wait_for(
	    &e, cond_is, &(struct cond_want){POOLS "/net-7", IPPOOL_COND_CACHE_READY, "True"}));
	create_nad(&e, "net-big", NULL);
	create_pool(
	    &e, "net-big", "default/net-big", "14.0.0.0/7", "14.0.0.1", "14.0.0.2", "15.0.0.2");
	CU_ASSERT_TRUE(wait_for(&e, reason_is,
	    &(struct reason_want){
		POOLS "/net-big", IPPOOL_COND_CACHE_READY, "False", "InvalidRange"}));
	create_pool(
	    &e, "upper", "default/Net-Upper", "10.9.0.0/24", "10.9.0.2", "10.9.0.10", "10.9.0.20");
	CU_ASSERT_TRUE(wait_for(&e, reason_is,
	    &(struct reason_want){
		POOLS "/upper", IPPOOL_COND_REGISTERED, "False", "NetworkNotFound"}));
	CU_ASSERT_EQUAL(post(&e, POOLS,
			    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion",
				CRD_API_VERSION, "kind", IPPOOL_KIND, "metadata", "name", "bare",
				"namespace", NS, "spec", "networkName", "default/net-2")),
	    201);
	CU_ASSERT_TRUE(wait_for(&e, event_recorded,
	    &(struct event_want){"bare", "Warning", "InvalidSpec", "spec.ipv4Config: required"}));
out:
	test_env_stop(&e);
}

static const struct test_case apiserver_tests[] = {
    {"re-placement and hold", test_replacement_and_hold},
    {"rebuild conflicts reported", test_rebuild_conflicts_reported},
    {"VM to binding and agent", test_vm_to_binding_and_agent},
    {"static IP, duplicate MAC, NIC move", test_static_duplicate_and_move},
    {"restart rebuilds IPAM", test_restart_rebuilds},
    {"delete paths and pause", test_delete_paths},
    {"VMNetCfg paused: released, remembered, resumed", test_vmnetcfg_pause_resume},
    {"NAD ippool labels follow the serving pool", test_nad_labels},
    {"injected 409s converge", test_conflicts_injected},
    {"conditions: reason, observedGeneration; Normal Events", test_conditions_and_normal_events},
    {"a refused status write: the Normal Event once", test_normal_event_once_despite_conflict},
    {"upstream-shaped IPPools: /7, too large, upper case, no ipv4Config",
	test_upstream_shaped_pools},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "controller-apiserver", .tests = apiserver_tests},
    {.name = NULL},
};
