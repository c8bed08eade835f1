/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The IPPool object's size against the API server's request limit (controller/netpool.c
 * size accounting, controller/ippool-status.c budget): the accounting itself (pure), then
 * the controller in-process against the test API server with a small --ippool-object-budget:
 * the pool fills to its budget, the next NIC is Pending (PoolStatusFull) with a Warning Event,
 * the pool's condition StatusFull turns True with a Warning Event, and every NIC that says
 * Allocated is listed in the pool's status.ipv4.allocated (what the agents serve); and the
 * API server's own "request is too large" answer (a 500 with etcd's message, as kube-apiserver
 * 1.25 answers) leads to the same state rather than endless retries. Waits are bounded by a
 * generous deadline; nothing asserts on speed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "controller/admit.h"
#include "controller/ctrl-internal.h"
#include "controller/netpool.h"
#include "lib/ip6.h"
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
#define EVENTS "/api/v1/namespaces/" NS "/events"

/* --- the accounting (pure) ------------------------------------------------------------- */

static struct netpool *
pool_of(const char *cidr, const char *start, const char *end, const uint32_t *excl, size_t n)
{
	struct ippool_spec s = {0};
	struct netpool *p = NULL;

	CU_ASSERT_EQUAL_FATAL(ipv4_cidr_parse(cidr, &s.cidr_addr, &s.prefix), 0);
	CU_ASSERT_EQUAL_FATAL(ipv4_parse(start, &s.start), 0);
	CU_ASSERT_EQUAL_FATAL(ipv4_parse(end, &s.end), 0);
	s.server_ip = s.cidr_addr + 1;
	s.exclude = (uint32_t *)excl;
	s.n_exclude = n;
	CU_ASSERT_EQUAL_FATAL(netpool_new(&s, &p), 0);
	return p;
}

/* The size netpool_status_bytes gives is that of the map the status renders (compact JSON,
 * one comma too many counted at most). */
static void
test_bytes_match_render(void)
{
	uint32_t excl[3];
	struct netpool *p;
	struct ippool_status st = {0};
	struct ippool pool = {0};
	uint8_t mac[MAC_LEN] = {0x02, 0, 0, 0, 0, 0};
	uint32_t a;
	json_t *obj, *m;
	size_t n;

	ipv4_parse("10.0.0.50", &excl[0]);
	ipv4_parse("10.0.1.7", &excl[1]);
	ipv4_parse("10.0.200.200", &excl[2]);
	p = pool_of("10.0.0.0/16", "10.0.0.2", "10.0.255.254", excl, 3);
	for (int i = 0; i < 300; i++) {
		mac[5] = (uint8_t)i;
		mac[4] = (uint8_t)(i >> 8);
		CU_ASSERT_EQUAL(netpool_bind(p, mac, 0, "default/x", &a), 0);
	}
	CU_ASSERT_EQUAL(netpool_render_status(p, &st), 0);
	pool.status = st;
	obj = ippool_encode(&pool);
	m = kind_get(obj, "status", "ipv4", "allocated", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	n = json_dumpb(m, NULL, 0, JSON_COMPACT);
	CU_ASSERT_EQUAL(json_object_size(m), 300 + 3); /* the bindings and the excluded */
	CU_ASSERT_TRUE(netpool_status_bytes(p) >= n && netpool_status_bytes(p) <= n + 1);
	/* one entry: "10.0.0.2":"02:00:00:00:00:00", */
	CU_ASSERT_EQUAL(netpool_entry_bytes(UINT32_C(0x0a000002), IPPOOL_ALLOC_MAC), 8 + 17 + 6);
	CU_ASSERT_EQUAL(
	    netpool_entry_bytes(UINT32_C(0x0a000002), IPPOOL_ALLOC_EXCLUDED), 8 + 8 + 6);
	json_decref(obj);
	ippool_status_clear(&st);
	netpool_free(p);
}

/* Past the budget a new binding is refused (-EFBIG), what is bound stays, a release makes
 * room again; a range change re-counts the marks. */
static void
test_budget_refuses(void)
{
	struct netpool *p = pool_of("10.0.0.0/24", "10.0.0.10", "10.0.0.200", NULL, 0);
	uint8_t mac[MAC_LEN] = {0x02, 0, 0, 0, 0, 1};
	size_t base = netpool_status_bytes(p), each, bound = 0;
	uint32_t a;
	int r = 0;

	each = netpool_entry_bytes(UINT32_C(0x0a00000a), IPPOOL_ALLOC_MAC); /* 10.0.0.10: 32 */
	netpool_set_budget(p, base + 5 * each);
	CU_ASSERT_FALSE(netpool_status_full(p));
	for (int i = 0; i < 20 && r == 0; i++) {
		mac[5] = (uint8_t)(i + 1);
		r = netpool_bind(p, mac, 0, "default/x", &a);
		bound += r == 0;
	}
	CU_ASSERT_EQUAL(r, -EFBIG);
	CU_ASSERT_EQUAL(bound, 5);
	CU_ASSERT_EQUAL(netpool_size(p), 5);
	CU_ASSERT_TRUE(netpool_status_bytes(p) <= base + 5 * each);
	CU_ASSERT_TRUE(netpool_status_full(p));
	/* a static address is refused the same way, and does not stay taken */
	CU_ASSERT_EQUAL(netpool_bind(p, mac, UINT32_C(0x0a000064), "default/y", &a), -EFBIG);
	CU_ASSERT_TRUE(ipam_pool_is_free(netpool_ipam(p), UINT32_C(0x0a000064)));
	/* an existing binding asked again is no new entry */
	mac[5] = 1;
	CU_ASSERT_EQUAL(netpool_bind(p, mac, 0, "default/x", &a), 0);
	CU_ASSERT_EQUAL(netpool_release(p, mac, "default/x"), 0);
	mac[5] = 99;
	CU_ASSERT_EQUAL(netpool_bind(p, mac, 0, "default/x", &a), 0);
	netpool_set_budget(p, 0); /* no limit */
	mac[5] = 100;
	CU_ASSERT_EQUAL(netpool_bind(p, mac, 0, "default/x", &a), 0);
	netpool_free(p);
}

/* A long exclude list: its EXCLUDED entries are left out once they would take more than
 * half the budget, so the room goes to bindings; the render follows. */
static void
test_excluded_left_out(void)
{
	uint32_t excl[1000];
	struct ippool_status st = {0};
	struct netpool *p;
	size_t with;

	for (size_t i = 0; i < ELEMENTSOF(excl); i++)
		excl[i] = UINT32_C(0x0a000000) + 1000 + (uint32_t)i;
	p = pool_of("10.0.0.0/16", "10.0.0.2", "10.0.255.254", excl, ELEMENTSOF(excl));
	with = netpool_status_bytes(p);
	CU_ASSERT_TRUE(netpool_excluded_bytes(p) >= 1000 * (8 + 8 + 6));
	netpool_set_budget(p, with * 4);
	CU_ASSERT_FALSE(netpool_omitting_excluded(p));
	CU_ASSERT_EQUAL(netpool_status_bytes(p), with);
	netpool_set_budget(p, with);
	CU_ASSERT_TRUE(netpool_omitting_excluded(p));
	CU_ASSERT_EQUAL(netpool_status_bytes(p), with - netpool_excluded_bytes(p));
	CU_ASSERT_EQUAL(netpool_render_status(p, &st), 0);
	for (size_t i = 0; i < st.n_allocated; i++)
		CU_ASSERT_NOT_EQUAL(st.allocated[i].kind, IPPOOL_ALLOC_EXCLUDED);
	CU_ASSERT_EQUAL(st.n_allocated, 0); /* no binding, no RESERVED inside this range */
	ippool_status_clear(&st);
	netpool_free(p);
}

/*
 * Dual stack: status.ipv6.allocated is counted as status.ipv4.allocated is (its map's bytes
 * match its render), and the object's estimate (ctrl_ippool_base_bytes, with status.ipv6's
 * key, braces and counts at their longest, plus both maps) is never below the object the
 * status write sends, nor far above it.
 */
static void
test_dual_stack_bytes(void)
{
	struct in6_addr excl6[3];
	struct ippool_spec s = {0};
	struct ippool_status st = {0};
	struct ippool pool = {0};
	struct netpool *p = NULL;
	uint8_t mac[MAC_LEN] = {0x02, 0, 0, 0, 0, 0};
	struct in6_addr a6;
	uint32_t a;
	size_t n, est;
	json_t *obj, *m;

	CU_ASSERT_EQUAL_FATAL(ipv4_cidr_parse("10.0.0.0/16", &s.cidr_addr, &s.prefix), 0);
	ipv4_parse("10.0.0.2", &s.start);
	ipv4_parse("10.0.255.254", &s.end);
	s.server_ip = s.cidr_addr + 1;
	snprintf(s.network_name, sizeof(s.network_name), "default/net-1");
	s.has_ipv6 = true;
	CU_ASSERT_EQUAL_FATAL(
	    ipv6_cidr_parse("2001:db8::/64", &s.ipv6.cidr_addr, &s.ipv6.prefix), 0);
	ipv6_parse("2001:db8::1", &s.ipv6.server_ip);
	ipv6_parse("2001:db8::100", &s.ipv6.start);
	ipv6_parse("2001:db8::ffff:ffff", &s.ipv6.end);
	ipv6_parse("2001:db8::105", &excl6[0]);
	ipv6_parse("2001:db8::abcd:1", &excl6[1]);
	ipv6_parse("2001:db8::ffff:fffe", &excl6[2]);
	s.ipv6.exclude = excl6;
	s.ipv6.n_exclude = 3;
	CU_ASSERT_EQUAL_FATAL(netpool_new(&s, &p), 0);
	for (int i = 0; i < 300; i++) {
		mac[5] = (uint8_t)i;
		mac[4] = (uint8_t)(i >> 8);
		CU_ASSERT_EQUAL(netpool_bind(p, mac, 0, "default/x", &a), 0);
		CU_ASSERT_EQUAL(netpool_bind6(p, mac, NULL, "default/x", &a6), 0);
	}
	CU_ASSERT_EQUAL_FATAL(netpool_render_status(p, &st), 0);
	pool.spec = s;
	pool.status = st;
	obj = ippool_encode(&pool);
	m = kind_get(obj, "status", "ipv6", "allocated", NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(m);
	CU_ASSERT_EQUAL(json_object_size(m), 300 + 3);
	n = json_dumpb(m, NULL, 0, JSON_COMPACT);
	CU_ASSERT_TRUE(netpool6_map_bytes(netpool_v6(p), false) >= n &&
		       netpool6_map_bytes(netpool_v6(p), false) <= n + 1);
	/* the whole object against its estimate */
	n = json_dumpb(obj, NULL, 0, JSON_COMPACT);
	est = ctrl_ippool_base_bytes(&pool) + netpool_status_bytes(p);
	CU_ASSERT_TRUE(est >= n);
	CU_ASSERT_TRUE(est <= n + 600 + 200); /* the StatusFull room, the longest counts */
	if (est < n || est > n + 800)
		printf("\n  estimate %zu, object %zu", est, n);
	json_decref(obj);
	ippool_status_clear(&st);
	netpool_free(p);
}

/* --- admission (controller/admit-ippool.c, admit-vmnetcfg.c) ------------------------------- */

static struct ippool *adm_pool; /* default/net-1, StatusFull True */

static int
adm_nad(void *ud, const char *ns, const char *name, const char **pool_ns, const char **pool_name)
{
	(void)ud;
	(void)ns;
	(void)name;
	*pool_ns = "default";
	*pool_name = "net-1";
	return 0;
}

static const struct ippool *
adm_pool_get(void *ud, const char *ns, const char *name)
{
	(void)ud;
	return strcmp(ns, "default") == 0 && strcmp(name, "net-1") == 0 ? adm_pool : NULL;
}

static int
adm_each_pool(void *ud, const char *network, admit_pool_visit_fn fn, void *ctx)
{
	(void)ud;
	return strcmp(network, "default/net-1") == 0 ? fn(ctx, "default/net-1", adm_pool) : 0;
}

static void
adm_review(enum admit_kind kind, enum admit_op op, json_t *obj, json_t *old, uint64_t budget,
    struct admit_result *res)
{
	const struct admit_view view = {
	    .nad = adm_nad, .pool = adm_pool_get, .each_pool_of_network = adm_each_pool};
	struct admit_opts opts = {.immutable = true, .ippool_budget = budget};
	struct admit_request rq = {.phase = ADMIT_VALIDATE,
	    .kind = kind,
	    .op = op,
	    .ns = "default",
	    .name = kind_get_str(obj, "metadata", "name", NULL),
	    .object = obj,
	    .old_object = old};

	ipv4_cidr_parse("10.53.0.0/16", &opts.service_net, &opts.service_prefix);
	admit_review(&view, &opts, &rq, res);
}

/* An IPPool whose object cannot record its status within the budget is refused. */
static void
test_admit_ippool_size(void)
{
	json_t *ex = json_array(), *pool;
	struct admit_result res;
	char ip[IPV4_STRLEN];

	for (uint32_t i = 0; i < 5000; i++) {
		ipv4_format(UINT32_C(0x0a010000) + 100 + i, ip);
		json_array_append_new(ex, json_string(ip));
	}
	pool = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:{s:s, s:s, s:{s:s, s:s, s:o}}}}",
	    "apiVersion", CRD_API_VERSION, "kind", IPPOOL_KIND, "metadata", "name", "big",
	    "namespace", "default", "spec", "networkName", "default/net-9", "ipv4Config", "cidr",
	    "10.1.0.0/16", "serverIP", "10.1.0.2", "pool", "start", "10.1.0.10", "end",
	    "10.1.255.250", "exclude", ex);
	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	/* spec ~70 KB; the EXCLUDED entries (~120 KB) left out past half the map's room */
	adm_review(ADMIT_KIND_IPPOOL, ADMIT_OP_CREATE, pool, NULL, 1024 * 1024, &res);
	CU_ASSERT_TRUE(res.allowed);
	admit_result_clear(&res);
	adm_review(ADMIT_KIND_IPPOOL, ADMIT_OP_CREATE, pool, NULL, 0, &res);
	CU_ASSERT_TRUE(res.allowed);
	admit_result_clear(&res);
	adm_review(ADMIT_KIND_IPPOOL, ADMIT_OP_CREATE, pool, NULL, 60000, &res);
	CU_ASSERT_FALSE(res.allowed);
	CU_ASSERT_EQUAL(res.code, 403);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.message, "--ippool-object-budget"));
	CU_ASSERT_PTR_NOT_NULL(strstr(res.message, "exclude"));
	admit_result_clear(&res);
	/* an update that does not grow it passes (the pool may only shrink) */
	adm_review(ADMIT_KIND_IPPOOL, ADMIT_OP_UPDATE, pool, pool, 60000, &res);
	CU_ASSERT_TRUE(res.allowed);
	admit_result_clear(&res);
	json_decref(pool);
}

static json_t *
cfg_object(const char *mac, bool vm_owned)
{
	json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:[{s:s, s:s}]}}", "apiVersion",
	    CRD_API_VERSION, "kind", "VirtualMachineNetworkConfig", "metadata", "name", "vm-x",
	    "namespace", "default", "spec", "vmName", "vm-x", "networkConfigs", "networkName",
	    "default/net-1", "macAddress", mac);

	if (vm_owned)
		json_object_set_new(json_object_get(o, "metadata"), "ownerReferences",
		    json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", "kubevirt.io/v1", "kind",
			"VirtualMachine", "name", "vm-x", "uid", "u-1", "controller", 1));
	return o;
}

/* A new NIC on a pool whose status is full is refused; the VM controller's is warned. */
static void
test_admit_nic_on_full_pool(void)
{
	json_t *p = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:{s:s, s:s, s:{s:s, s:s}}},"
			      " s:{s:{s:{s:s}, s:i, s:i}, s:[{s:s, s:s, s:s, s:s}]}}",
	    "apiVersion", CRD_API_VERSION, "kind", IPPOOL_KIND, "metadata", "name", "net-1",
	    "namespace", "default", "spec", "networkName", "default/net-1", "ipv4Config", "cidr",
	    "10.0.0.0/24", "serverIP", "10.0.0.2", "pool", "start", "10.0.0.10", "end",
	    "10.0.0.200", "status", "ipv4", "allocated", "10.0.0.10", "02:00:00:00:00:01", "used",
	    1, "available", 190, "conditions", "type", IPPOOL_COND_STATUS_FULL, "status", "True",
	    "reason", IPPOOL_REASON_STATUS_FULL, "message", "no room for another binding");
	struct crd_error err;
	struct admit_result res;
	json_t *cfg, *old;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_EQUAL_FATAL(ippool_decode(p, &adm_pool, &err), 0);
	cfg = cfg_object("02:00:00:00:00:09", false);
	adm_review(ADMIT_KIND_VMNETCFG, ADMIT_OP_CREATE, cfg, NULL, 1 << 20, &res);
	CU_ASSERT_FALSE(res.allowed);
	CU_ASSERT_PTR_NOT_NULL(strstr(res.message, "StatusFull"));
	admit_result_clear(&res);
	/* not checked without a budget */
	adm_review(ADMIT_KIND_VMNETCFG, ADMIT_OP_CREATE, cfg, NULL, 0, &res);
	CU_ASSERT_TRUE(res.allowed);
	admit_result_clear(&res);
	/* the NIC was there before: an update passes */
	old = json_deep_copy(cfg);
	adm_review(ADMIT_KIND_VMNETCFG, ADMIT_OP_UPDATE, cfg, old, 1 << 20, &res);
	CU_ASSERT_TRUE(res.allowed);
	admit_result_clear(&res);
	json_decref(old);
	json_decref(cfg);
	/* a MAC the status already binds: served, allowed */
	cfg = cfg_object("02:00:00:00:00:01", false);
	adm_review(ADMIT_KIND_VMNETCFG, ADMIT_OP_CREATE, cfg, NULL, 1 << 20, &res);
	CU_ASSERT_TRUE(res.allowed);
	admit_result_clear(&res);
	json_decref(cfg);
	/* written by the VM controller: allowed, with a warning (the NIC stays Pending) */
	cfg = cfg_object("02:00:00:00:00:09", true);
	adm_review(ADMIT_KIND_VMNETCFG, ADMIT_OP_CREATE, cfg, NULL, 1 << 20, &res);
	CU_ASSERT_TRUE(res.allowed);
	CU_ASSERT_TRUE(res.n_warnings >= 1);
	admit_result_clear(&res);
	json_decref(cfg);
	ippool_free(adm_pool);
	adm_pool = NULL;
	json_decref(p);
}

/* --- in-process, against the test API server ----------------------------------------------- */

static json_t *
api(struct env *e, const char *method, const char *path, json_t *body, long *code)
{
	return test_env_request(e, method, path, NULL, body, code);
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
	j = api(e, "GET", path, NULL, &code);
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

	json_decref(api(e, "POST", path, obj, &code));
	json_decref(obj);
	return code;
}

/* Runs the loop until pred holds, at most WAIT_MS. */
static bool
wait_for(struct env *e, pred_fn pred, const void *arg)
{
	return test_env_wait(e, pred, arg, WAIT_MS);
}

static void
create_vm(struct env *e, const char *name, const char *mac)
{
	json_t *vm = json_pack("{s:s, s:s, s:{s:s, s:s},"
			       " s:{s:{s:{s:{s:{s:[{s:s, s:{}, s:s}]}},"
			       " s:[{s:s, s:{s:s}}]}}}}",
	    "apiVersion", "kubevirt.io/v1", "kind", "VirtualMachine", "metadata", "name", name,
	    "namespace", NS, "spec", "template", "spec", "domain", "devices", "interfaces", "name",
	    "nic-1", "bridge", "macAddress", mac, "networks", "name", "nic-1", "multus",
	    "networkName", "default/net-1");

	CU_ASSERT_EQUAL(post(e, VMS, vm), 201);
}

/* The first NIC of VMNetCfg name: its state, reason of Allocated and address (borrowed until
 * the next call). */
struct nic_view {
	char state[32], reason[64], ip[IPV4_STRLEN];
};

static bool
nic_of(struct env *e, const char *name, struct nic_view *v)
{
	json_t *o = get(e, CFGS "/%s", name), *c;
	json_t *nic = json_array_get(kind_get(o, "status", VMNETCFG_FIELD_NICS, NULL), 0);
	const char *s = kind_get_str(nic, "state", NULL), *ip;
	size_t i;

	memset(v, 0, sizeof(*v));
	if (s == NULL) {
		json_decref(o);
		return false;
	}
	snprintf(v->state, sizeof(v->state), "%s", s);
	ip = kind_get_str(nic, "allocatedIPAddress", NULL);
	snprintf(v->ip, sizeof(v->ip), "%s", ip != NULL ? ip : "");
	json_array_foreach(kind_get(o, "status", "conditions", NULL), i, c)
	{
		const char *t = kind_get_str(c, "type", NULL), *r = kind_get_str(c, "reason", NULL);

		if (t != NULL && r != NULL && strcmp(t, VMNETCFG_COND_ALLOCATED) == 0)
			snprintf(v->reason, sizeof(v->reason), "%s", r);
	}
	json_decref(o);
	return true;
}

static bool
nic_settled(struct env *e, const void *arg)
{
	struct nic_view v;

	return nic_of(e, arg, &v) &&
	       (strcmp(v.state, "Allocated") == 0 || strcmp(v.reason, "PoolStatusFull") == 0);
}

static bool
nic_status_full(struct env *e, const void *arg)
{
	struct nic_view v;

	return nic_of(e, arg, &v) && strcmp(v.state, "Pending") == 0 &&
	       strcmp(v.reason, "PoolStatusFull") == 0;
}

static bool
nic_allocated(struct env *e, const void *arg)
{
	struct nic_view v;

	return nic_of(e, arg, &v) && strcmp(v.state, "Allocated") == 0;
}

/* Every VMNetCfg NIC that says Allocated is in the pool's status with its MAC. */
static bool
allocated_all_recorded(struct env *e, const void *arg)
{
	json_t *cfgs = get(e, "%s", CFGS), *pool = get(e, POOLS "/net-1"), *cfg, *nic;
	json_t *m = kind_get(pool, "status", "ipv4", "allocated", NULL);
	bool ok = cfgs != NULL && pool != NULL;
	size_t i, j;

	json_array_foreach(json_object_get(cfgs, "items"), i, cfg)
	{
		json_array_foreach(kind_get(cfg, "status", VMNETCFG_FIELD_NICS, NULL), j, nic)
		{
			const char *s = kind_get_str(nic, "state", NULL);
			const char *ip = kind_get_str(nic, "allocatedIPAddress", NULL);
			const char *mac = kind_get_str(nic, "macAddress", NULL);
			const char *v =
			    ip != NULL ? json_string_value(json_object_get(m, ip)) : NULL;

			if (s != NULL && strcmp(s, "Allocated") == 0 &&
			    (v == NULL || mac == NULL || strcasecmp(v, mac) != 0))
				ok = false;
		}
	}
	json_decref(cfgs);
	json_decref(pool);
	return ok;
}

struct cond_want {
	const char *type, *status, *reason;
};

static bool
pool_cond_is(struct env *e, const void *arg)
{
	const struct cond_want *w = arg;
	json_t *o = get(e, POOLS "/net-1"), *c;
	bool ok = false;
	size_t i;

	json_array_foreach(kind_get(o, "status", "conditions", NULL), i, c)
	{
		const char *t = kind_get_str(c, "type", NULL), *s = kind_get_str(c, "status", NULL);
		const char *r = kind_get_str(c, "reason", NULL);

		if (t && s && r && strcmp(t, w->type) == 0 && strcmp(s, w->status) == 0 &&
		    (w->reason == NULL || strcmp(r, w->reason) == 0))
			ok = true;
	}
	json_decref(o);
	return ok;
}

struct event_want {
	const char *object, *type, *reason;
};

static bool
event_recorded(struct env *e, const void *arg)
{
	const struct event_want *w = arg;
	json_t *o = get(e, EVENTS), *ev;
	bool ok = false;
	size_t i;

	json_array_foreach(json_object_get(o, "items"), i, ev)
	{
		const char *obj = kind_get_str(ev, "involvedObject", "name", NULL);
		const char *t = kind_get_str(ev, "type", NULL),
			   *r = kind_get_str(ev, "reason", NULL);

		if (obj && t && r && strcmp(obj, w->object) == 0 && strcmp(t, w->type) == 0 &&
		    strcmp(r, w->reason) == 0)
			ok = true;
	}
	json_decref(o);
	return ok;
}

static bool
pool_has_status(struct env *e, const void *arg)
{
	json_t *o = get(e, POOLS "/net-1");
	bool ok = kind_get(o, "status", "ipv4", NULL) != NULL &&
		  kind_get(o, "status", "conditions", NULL) != NULL;

	json_decref(o);
	return ok;
}

static bool
budget_applied(struct env *e, const void *arg)
{
	const struct pool_rt *rt = ctrl_pool_rt(e->ctrl, NS "/net-1");

	return rt != NULL && rt->np != NULL && netpool_budget(rt->np) != 0 &&
	       netpool_budget(rt->np) < 4096;
}

/* The stored pool object's compact size. */
static size_t
pool_object_bytes(struct env *e)
{
	json_t *o = get(e, POOLS "/net-1");
	size_t n = o != NULL ? json_dumpb(o, NULL, 0, JSON_COMPACT) : 0;

	json_decref(o);
	return n;
}

/* net-1: 10.0.0.0/24, range .10-.200, no agents; the controller's object budget budget. */
static bool
env_start(struct env *e, uint64_t budget)
{
	struct ctrl_opts o = {
	    .namespace = CTRL_NS,
	    .agent_image = "registry.example/vm-dhcp-agent:v1",
	    .no_agent = true,
	    .requeue_usec = 200000,
	    .ippool_budget = budget,
	};

	if (!test_env_start(e, "test-controller", LOG_LEVEL_ERROR, "../../crds"))
		return false;
	CU_ASSERT_EQUAL(
	    post(e, NADS,
		json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "k8s.cni.cncf.io/v1",
		    "kind", "NetworkAttachmentDefinition", "metadata", "name", "net-1", "namespace",
		    NS, "spec", "config", "{}")),
	    201);
	CU_ASSERT_EQUAL(
	    post(e, POOLS,
		json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:{s:s, s:s, s:{s:s, s:s}}}}",
		    "apiVersion", CRD_API_VERSION, "kind", IPPOOL_KIND, "metadata", "name", "net-1",
		    "namespace", NS, "spec", "networkName", "default/net-1", "ipv4Config", "cidr",
		    "10.0.0.0/24", "serverIP", "10.0.0.2", "pool", "start", "10.0.0.10", "end",
		    "10.0.0.200")),
	    201);
	if (ctrl_new(e->base, e->client, NULL, &o, &e->ctrl) < 0) {
		CU_FAIL("controller did not start");
		return false;
	}
	ctrl_lead(e->ctrl);
	if (!wait_for(e, test_env_ctrl_ready, NULL) || !wait_for(e, pool_has_status, NULL)) {
		CU_FAIL("controller not ready");
		return false;
	}
	return true;
}

#define N_VMS 12

/* As many of vm-1 … vm-(N_VMS-1) are Allocated as *arg. */
static bool
allocated_count_is(struct env *e, const void *arg)
{
	struct nic_view v;
	char name[32];
	size_t n = 0;

	for (int i = 1; i < N_VMS; i++) {
		snprintf(name, sizeof(name), "vm-%d", i);
		n += nic_of(e, name, &v) && strcmp(v.state, "Allocated") == 0;
	}
	return n == *(const size_t *)arg;
}

/*
 * A budget with room for a few bindings: the pool fills to it, the next NICs are Pending
 * (PoolStatusFull) with their Warning Event, the pool says StatusFull with a Warning Event,
 * nothing says Allocated that the pool status does not list, the stored object stays within
 * the budget; a VM gone makes room for one Pending NIC.
 */
static void
test_pool_fills_to_budget(void)
{
	struct env e;
	char name[32], mac[MAC_STRLEN], first_pending[32] = "";
	struct nic_view v;
	size_t base, allocated = 0, pending = 0;
	long code = 0;

	/* measure the object with no binding first (the default budget), then restart small */
	if (!env_start(&e, 0))
		goto out;
	base = pool_object_bytes(&e);
	CU_ASSERT_TRUE_FATAL(base > 500);
	/* the condition StatusFull (600 bytes set aside) and room for a few bindings (32 bytes
	 * each) */
	e.ctrl->opts.ippool_budget = base + 600 + 4 * 32;
	ctrl_enqueue_pool(e.ctrl, NS "/net-1");
	CU_ASSERT_TRUE(wait_for(&e, budget_applied, NULL));
	for (int i = 0; i < N_VMS; i++) {
		snprintf(name, sizeof(name), "vm-%d", i);
		snprintf(mac, sizeof(mac), "02:00:00:00:00:%02x", i + 1);
		create_vm(&e, name, mac);
		CU_ASSERT_TRUE(wait_for(&e, nic_settled, name));
	}
	for (int i = 0; i < N_VMS; i++) {
		snprintf(name, sizeof(name), "vm-%d", i);
		if (!nic_of(&e, name, &v))
			continue;
		if (strcmp(v.state, "Allocated") == 0) {
			allocated++;
		} else {
			pending++;
			CU_ASSERT_STRING_EQUAL(v.reason, "PoolStatusFull");
			CU_ASSERT_STRING_EQUAL(v.ip, ""); /* no address said for it */
			if (first_pending[0] == '\0')
				snprintf(first_pending, sizeof(first_pending), "%s", name);
		}
	}
	CU_ASSERT_TRUE(allocated >= 1);
	CU_ASSERT_TRUE(pending >= 1);
	CU_ASSERT_EQUAL(allocated + pending, N_VMS);
	CU_ASSERT_TRUE(wait_for(&e, pool_cond_is,
	    &(struct cond_want){IPPOOL_COND_STATUS_FULL, "True", IPPOOL_REASON_STATUS_FULL}));
	CU_ASSERT_TRUE(wait_for(&e, event_recorded,
	    &(struct event_want){"net-1", "Warning", IPPOOL_EVENT_STATUS_FULL}));
	CU_ASSERT_TRUE(wait_for(
	    &e, event_recorded, &(struct event_want){first_pending, "Warning", "PoolStatusFull"}));
	CU_ASSERT_TRUE(wait_for(&e, allocated_all_recorded, NULL));
	CU_ASSERT_TRUE(wait_for(&e, test_env_no_writes_in_flight, NULL));
	CU_ASSERT_TRUE(pool_object_bytes(&e) <= e.ctrl->opts.ippool_budget);
	/* a VM gone (vm-0, the first bound): its address released, a Pending NIC takes it */
	CU_ASSERT_TRUE(nic_allocated(&e, "vm-0"));
	json_decref(api(&e, "DELETE", VMS "/vm-0", NULL, &code));
	CU_ASSERT_EQUAL(code, 200);
	/* no garbage collector here: its VMNetCfg goes by hand */
	json_decref(api(&e, "DELETE", CFGS "/vm-0", NULL, &code));
	CU_ASSERT_EQUAL(code, 200);
	/* one of the Pending NICs (whichever is reconciled first) takes vm-0's place */
	CU_ASSERT_TRUE(wait_for(&e, allocated_count_is, &allocated));
	CU_ASSERT_TRUE(wait_for(&e, allocated_all_recorded, NULL));
out:
	test_env_stop(&e);
}

/*
 * The API server refuses the status as too large (kube-apiserver 1.25 with etcd's default
 * --max-request-bytes answers 500 "etcdserver: request is too large"): the NIC bound
 * meanwhile is taken back (Pending, PoolStatusFull), the pool says StatusFull with reason
 * RequestTooLarge, and the status is written again.
 */
static void
test_request_too_large(void)
{
	struct env e;

	if (!env_start(&e, 0))
		goto out;
	create_vm(&e, "vm-a", "02:00:00:00:01:01");
	CU_ASSERT_TRUE(wait_for(&e, nic_allocated, "vm-a"));
	CU_ASSERT_TRUE(wait_for(&e, allocated_all_recorded, NULL));
	CU_ASSERT_TRUE(wait_for(&e, test_env_no_writes_in_flight, NULL));
	CU_ASSERT_EQUAL(test_apiserver_fault(e.api,
			    "fail?code=500&count=1&method=PUT&path=" POOLS
			    "/net-1/status&message=etcdserver:%20request%20is%20too%20large"),
	    0);
	create_vm(&e, "vm-b", "02:00:00:00:01:02");
	CU_ASSERT_TRUE(wait_for(&e, nic_status_full, "vm-b"));
	CU_ASSERT_TRUE(wait_for(&e, pool_cond_is,
	    &(struct cond_want){IPPOOL_COND_STATUS_FULL, "True", IPPOOL_REASON_TOO_LARGE}));
	CU_ASSERT_TRUE(wait_for(&e, event_recorded,
	    &(struct event_want){"net-1", "Warning", IPPOOL_EVENT_STATUS_FULL}));
	CU_ASSERT_TRUE(wait_for(&e, allocated_all_recorded, NULL));
	CU_ASSERT_TRUE(nic_allocated(&e, "vm-a"));
out:
	test_env_stop(&e);
}

static const struct test_case budget_tests[] = {
    {"status bytes match the rendered map", test_bytes_match_render},
    {"dual stack: both maps counted, the object estimated", test_dual_stack_bytes},
    {"a binding past the budget is refused", test_budget_refuses},
    {"EXCLUDED entries left out past half the budget", test_excluded_left_out},
    {"admission: an IPPool that cannot fit", test_admit_ippool_size},
    {"admission: a new NIC on a full pool", test_admit_nic_on_full_pool},
    {"a pool fills to its budget, visibly", test_pool_fills_to_budget},
    {"request is too large: the same state, no endless retries", test_request_too_large},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "controller-status-budget", .tests = budget_tests},
    {.name = NULL},
};
