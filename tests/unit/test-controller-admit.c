/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/admit.c: the admission rules, as a table of cases against a fake view of the
 * cluster built from small JSON fixtures.
 *
 * Every case of harvester/vm-dhcp-controller's pkg/webhook/ippool/mutator_test.go and
 * validator_test.go (main at c3042d6) and of pkg/webhook/vmnetcfg/validator_test.go as of PR #157
 * (a60f7a7) is here, decided the same way, with upstream's message where its test asserts
 * one. How the fixtures differ from upstream's builders, and why:
 *  - upstream's validator tests call the validator alone; an object the API server would
 *    hand it has been through the mutator on CREATE, and an UPDATE's object was stored
 *    that way. Accepted cases therefore run mutator-then-validator (.chain) on CREATE, and
 *    upstream's UPDATE objects carry the pool range the mutator gave them, because our
 *    codec check (ours) refuses a spec without one; the refused cases run as upstream's do.
 *  - upstream's CRD has no immutable fields: its UPDATE cases run with opts.immutable off
 *    (.mutable); the same changes with it on are ours, below.
 *  - upstream's VMNetCfg builder leaves vmName and (in the lookup cases) macAddress empty,
 *    and its IPPools have no CIDR: ours refuses such objects (the codec; the view only holds
 *    pools that decode), so the fixtures carry a vmName, a MAC and a whole pool.
 * Single quotes in the fixtures stand for double quotes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/admit.h"
#include "controller/foreign-kinds.h"
#include "crds/ippool.h"
#include "crds/vmnetcfg.h"
#include "tests/runner.h"

/* --- fixtures ------------------------------------------------------------------------------ */

#define MAC1 "11:22:33:44:55:66"
#define MAC2 "22:33:44:55:66:77"

/* An IPPool named default/net-1 on network default/net-1 (upstream's validator tests). */
#define POOL_ST(v4, status)                                                                        \
	"{'apiVersion':'network.harvesterhci.io/v1alpha1','kind':'IPPool',"                        \
	"'metadata':{'namespace':'default','name':'net-1'},"                                       \
	"'spec':{'networkName':'default/net-1','ipv4Config':{" v4 "}}" status "}"
#define POOL(v4) POOL_ST(v4, "")
#define POOL_NET(net, v4)                                                                          \
	"{'metadata':{'namespace':'default','name':'net-1'},"                                      \
	"'spec':{'networkName':'" net "','ipv4Config':{" v4 "}}}"
#define ALLOC(ip, val)                                                                             \
	",'status':{'ipv4':{'allocated':{'" ip "':'" val "'},'used':1,'available':1}}"
#define RANGE(s, e) "'pool':{'start':'" s "','end':'" e "'}"
#define R24 RANGE("192.168.0.1", "192.168.0.254")

/* A VMNetCfg default/test-vmnetcfg with its NIC list (upstream's vmnetcfg tests). */
#define CFG(nics)                                                                                  \
	"{'apiVersion':'network.harvesterhci.io/v1alpha1','kind':'VirtualMachineNetworkConfig',"   \
	"'metadata':{'namespace':'default','name':'test-vmnetcfg'},"                               \
	"'spec':{'vmName':'test-vm','networkConfigs':[" nics "]}}"
/* ... written by the VM controller: a controller ownerReference to the VM (or not). */
#define CFG_OWNER(nics, ctl)                                                                       \
	"{'apiVersion':'network.harvesterhci.io/v1alpha1','kind':'VirtualMachineNetworkConfig',"   \
	"'metadata':{'namespace':'default','name':'test-vmnetcfg','ownerReferences':[{"            \
	"'apiVersion':'kubevirt.io/v1','kind':'VirtualMachine','name':'test-vm','uid':'u1',"       \
	"'controller':" ctl "}]},'spec':{'vmName':'test-vm','networkConfigs':[" nics "]}}"
#define CFG_VM(nics) CFG_OWNER(nics, "true")
#define NIC(ip, mac)                                                                               \
	"{'networkName':'default/test-net','macAddress':'" mac "','ipAddress':'" ip "'}"
#define NIC_DYN(mac) "{'networkName':'default/test-net','macAddress':'" mac "'}"

/* A VM default/vm-1: nic-1 on Multus test-net (MAC1), nic-2 on test-net without a MAC,
 * default on the pod network. */
#define VM_ANN(ann)                                                                                \
	"{'apiVersion':'kubevirt.io/v1','kind':'VirtualMachine',"                                  \
	"'metadata':{'namespace':'default','name':'vm-1','uid':'u1','annotations':{" ann "}},"     \
	"'spec':{'template':{'spec':{"                                                             \
	"'networks':[{'name':'default','pod':{}},{'name':'nic-1','multus':{'networkName':'test-"   \
	"net'}},"                                                                                  \
	"{'name':'nic-2','multus':{'networkName':'test-net'}},"                                    \
	"{'name':'nic-3','multus':{'networkName':'no-such-net'}}],"                                \
	"'domain':{'devices':{'interfaces':[{'name':'default'},"                                   \
	"{'name':'nic-1','macAddress':'" MAC1 "'},{'name':'nic-2'},{'name':'nic-3'}]}}}}}}"
#define SIP "'static-ip.harvesterhci.io/"

/* The world a case is decided against: NADs, IPPools and VMNetCfgs (JSON). */
struct world {
	const char *nads[4];
	const char *pools[4];
	const char *cfgs[4];
};

#define NAD(name, labels)                                                                          \
	"{'metadata':{'namespace':'default','name':'" name "','labels':{" labels "}}}"
#define LABELS(ns, name)                                                                           \
	"'network.harvesterhci.io/ippool-namespace':'" ns                                          \
	"','network.harvesterhci.io/ippool-name':'" name "'"
#define TEST_POOL_ST(name, extra, status)                                                          \
	"{'metadata':{'namespace':'default','name':'" name "'},"                                   \
	"'spec':{'networkName':'default/test-net'" extra ",'ipv4Config':{'cidr':'192.168.0.0/24'," \
	"'serverIP':'192.168.0.2','pool':{'start':'192.168.0.100','end':'192.168.0.200'}}}" status \
	"}"
#define TEST_POOL(status) TEST_POOL_ST("test-pool", "", status)

static const struct world w_none = {.nads = {NULL}, .pools = {NULL}, .cfgs = {NULL}};
/* upstream's ippool validator tests: the NAD default/net-1 */
static const struct world w_net1 = {.nads = {NAD("net-1", "")}, .pools = {NULL}, .cfgs = {NULL}};
/* ours: two networks, a pool on each, VMNetCfgs using net-1 (vm-a holds 192.168.0.150) */
static const struct world w_pools = {{NAD("net-1", ""), NAD("net-2", "")},
    {POOL(R24 ",'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'"),
	"{'metadata':{'namespace':'default','name':'other'},'spec':{'networkName':'default/net-2',"
	"'ipv4Config':{'cidr':'10.2.0.0/24','serverIP':'10.2.0.1'," RANGE(
	    "10.2.0.2", "10.2.0.254") "}}}"},
    {"{'metadata':{'namespace':'default','name':'vm-a'},'spec':{'vmName':'vm-a','networkConfigs':"
     "[{'networkName':'default/net-1','macAddress':'" MAC1 "'}]},'status':{'networkConfigs':"
     "[{'networkName':'default/net-1','macAddress':'" MAC1 "','allocatedIPAddress':'192.168.0.150',"
     "'state':'Allocated'}]}}",
	"{'metadata':{'namespace':'default','name':'vm-b'},'spec':{'vmName':'vm-b','networkConfigs'"
	":"
	"[{'networkName':'net-1','macAddress':'" MAC2 "'}]}}"}};
/* upstream's vmnetcfg tests */
static const struct world w_ok = {.nads = {NAD("test-net", LABELS("default", "test-pool"))},
    .pools = {TEST_POOL("")},
    .cfgs = {NULL}};
static const struct world w_same_name = {.nads = {NAD("test-net", LABELS("default", "test-net"))},
    .pools = {TEST_POOL_ST("test-net", "", "")},
    .cfgs = {NULL}};
static const struct world w_no_pool = {
    .nads = {NAD("test-net", LABELS("default", "test-pool"))}, .pools = {NULL}, .cfgs = {NULL}};
static const struct world w_no_nad = {.nads = {NULL}, .pools = {TEST_POOL("")}, .cfgs = {NULL}};
/* upstream's fixtures: NADs without (all) the labels, and a pool not on their network
 * (upstream's builder gives it no networkName) */
#define OTHER_POOL                                                                                 \
	"{'metadata':{'namespace':'default','name':'test-pool'},"                                  \
	"'spec':{'networkName':'default/other-net','ipv4Config':{'cidr':'192.168.0.0/24',"         \
	"'serverIP':'192.168.0.2','pool':{'start':'192.168.0.100','end':'192.168.0.200'}}}}"
static const struct world w_no_labels = {
    .nads = {NAD("test-net", "")}, .pools = {OTHER_POOL}, .cfgs = {NULL}};
static const struct world w_half_labels = {
    .nads = {NAD("test-net", "'network.harvesterhci.io/ippool-name':'test-pool'")},
    .pools = {OTHER_POOL},
    .cfgs = {NULL}};
/* ours: the NAD not labelled yet, the pool on its network already in the cache */
static const struct world w_unlabelled = {
    .nads = {NAD("test-net", "")}, .pools = {TEST_POOL("")}, .cfgs = {NULL}};
static const struct world w_excluded = {.nads = {NAD("test-net", LABELS("default", "test-pool"))},
    .pools = {TEST_POOL(ALLOC("192.168.0.111", "EXCLUDED"))},
    .cfgs = {NULL}};
static const struct world w_reserved = {.nads = {NAD("test-net", LABELS("default", "test-pool"))},
    .pools = {TEST_POOL(ALLOC("192.168.0.111", "RESERVED"))},
    .cfgs = {NULL}};
static const struct world w_mac2 = {{NAD("test-net", LABELS("default", "test-pool"))},
    {TEST_POOL(ALLOC("192.168.0.111", MAC2))},
    {"{'metadata':{'namespace':'default','name':'other-vm'},'spec':{'vmName':'other-vm',"
     "'networkConfigs':[{'networkName':'default/test-net','macAddress':'" MAC2 "'}]},"
     "'status':{'networkConfigs':[{'networkName':'default/test-net','macAddress':'" MAC2 "',"
     "'allocatedIPAddress':'192.168.0.111','state':'Allocated'}]}}"}};
static const struct world w_paused = {.nads = {NAD("test-net", LABELS("default", "test-pool"))},
    .pools = {TEST_POOL_ST("test-pool", ",'paused':true", "")},
    .cfgs = {NULL}};
static const struct world w_wide = {{NAD("test-net", LABELS("default", "test-pool"))},
    {"{'metadata':{'namespace':'default','name':'test-pool'},'spec':{'networkName':"
     "'default/test-net','ipv4Config':{'cidr':'192.168.0.0/24','serverIP':'192.168.0.2',"
     "'pool':{'start':'192.168.0.0','end':'192.168.0.255'}}}}"},
    {NULL}};

/* the NADs of upstream's README pool and of examples/ippool-full.yaml */
static const struct world w_real = {
    .nads = {NAD("net-48", ""), "{'metadata':{'namespace':'lab','name':'net-49'}}"},
    .pools = {NULL},
    .cfgs = {NULL}};

/* --- the fake view ------------------------------------------------------------------------- */

struct fake {
	json_t *nads[4];
	struct ippool *pools[4];
	struct vmnetcfg *cfgs[4];
};

static json_t *
load_json(const char *text)
{
	char *s = strdup(text);
	json_error_t err;
	json_t *j;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	j = json_loads(s, 0, &err);
	if (!j)
		fprintf(stderr, "fixture: %s: %s\n", err.text, s);
	free(s);
	return j;
}

static int
fake_nad(void *ud, const char *ns, const char *name, const char **pool_ns, const char **pool_name)
{
	struct fake *f = ud;

	for (size_t i = 0; i < ELEMENTSOF(f->nads) && f->nads[i]; i++) {
		if (strcmp(kind_namespace(f->nads[i]), ns) != 0 ||
		    strcmp(kind_name(f->nads[i]), name) != 0)
			continue;
		*pool_ns = kind_label(f->nads[i], "network.harvesterhci.io/ippool-namespace");
		*pool_name = kind_label(f->nads[i], "network.harvesterhci.io/ippool-name");
		return 0;
	}
	return -ENOENT;
}

static const struct ippool *
fake_pool(void *ud, const char *ns, const char *name)
{
	struct fake *f = ud;

	for (size_t i = 0; i < ELEMENTSOF(f->pools) && f->pools[i]; i++)
		if (strcmp(f->pools[i]->meta.namespace, ns) == 0 &&
		    strcmp(f->pools[i]->meta.name, name) == 0)
			return f->pools[i];
	return NULL;
}

static int
fake_each_pool(void *ud, const char *network, admit_pool_visit_fn fn, void *ctx)
{
	struct fake *f = ud;
	char key[300];
	int r;

	for (size_t i = 0; i < ELEMENTSOF(f->pools) && f->pools[i]; i++) {
		if (strcmp(f->pools[i]->spec.network_name, network) != 0)
			continue;
		snprintf(
		    key, sizeof(key), "%s/%s", f->pools[i]->meta.namespace, f->pools[i]->meta.name);
		if ((r = fn(ctx, key, f->pools[i])) != 0)
			return r;
	}
	return 0;
}

static int
fake_each_cfg(void *ud, const char *network, admit_cfg_visit_fn fn, void *ctx)
{
	struct fake *f = ud;
	char key[300];
	int r;

	for (size_t i = 0; i < ELEMENTSOF(f->cfgs) && f->cfgs[i]; i++) {
		const struct vmnetcfg *c = f->cfgs[i];
		bool uses = false;

		for (size_t j = 0; j < c->spec.n_nics; j++)
			uses |= strcmp(c->spec.nics[j].network_name, network) == 0;
		if (!uses)
			continue;
		snprintf(key, sizeof(key), "%s/%s", c->meta.namespace, c->meta.name);
		if ((r = fn(ctx, key, c)) != 0)
			return r;
	}
	return 0;
}

static void
fake_build(struct fake *f, const struct world *w)
{
	struct crd_error err;

	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < ELEMENTSOF(w->nads) && w->nads[i]; i++) {
		f->nads[i] = load_json(w->nads[i]);
		CU_ASSERT_PTR_NOT_NULL_FATAL(f->nads[i]);
	}
	for (size_t i = 0; i < ELEMENTSOF(w->pools) && w->pools[i]; i++) {
		json_t *j = load_json(w->pools[i]);

		CU_ASSERT_PTR_NOT_NULL_FATAL(j);
		if (ippool_decode(j, &f->pools[i], &err) < 0)
			fprintf(stderr, "pool fixture: %s\n", err.message);
		CU_ASSERT_PTR_NOT_NULL_FATAL(f->pools[i]);
		json_decref(j);
	}
	for (size_t i = 0; i < ELEMENTSOF(w->cfgs) && w->cfgs[i]; i++) {
		json_t *j = load_json(w->cfgs[i]);

		CU_ASSERT_PTR_NOT_NULL_FATAL(j);
		if (vmnetcfg_decode(j, &f->cfgs[i], &err) < 0)
			fprintf(stderr, "cfg fixture: %s\n", err.message);
		CU_ASSERT_PTR_NOT_NULL_FATAL(f->cfgs[i]);
		json_decref(j);
	}
}

static void
fake_free(struct fake *f)
{
	for (size_t i = 0; i < 4; i++) {
		json_decref(f->nads[i]);
		ippool_free(f->pools[i]);
		vmnetcfg_free(f->cfgs[i]);
	}
}

/* --- the table ----------------------------------------------------------------------------- */

enum { MUT = 1, VAL, CHAIN }; /* mutate only, validate only, mutate then validate */

struct tcase {
	const char *name;
	int flow;
	enum admit_kind kind;
	enum admit_op op;
	const struct world *world;
	const char *obj, *old;
	const char *user;
	bool mutable_; /* opts.immutable off */
	bool refused;
	const char *msg;    /* the whole message */
	const char *substr; /* ... or a part of it */
	int code;	    /* when refused: 403 unless said */
	/* MUT/CHAIN: "serverIP start end" after the patch, or "-" for no patch */
	const char *patched;
	const char *warn; /* a part of a warning */
};

#define CP "cannot create IPPool default/net-1 because "
#define UP "cannot update IPPool default/net-1 because "
#define CC "cannot create VirtualMachineNetworkConfig default/test-vmnetcfg because "
#define UC "cannot update VirtualMachineNetworkConfig default/test-vmnetcfg because "
#define CV "cannot create VirtualMachine default/vm-1 because annotation static-ip.harvesterhci.io/"
#define UV "cannot update VirtualMachine default/vm-1 because annotation static-ip.harvesterhci.io/"
#define FAIL_SERVER CP "fail to assign ip for dhcp server"

#define M(n, o, p)                                                                                 \
	{                                                                                          \
		.name = n, .flow = MUT, .kind = ADMIT_KIND_IPPOOL, .op = ADMIT_OP_CREATE,          \
		.world = &w_net1, .obj = o, .patched = p                                           \
	}
#define MREF(n, o, m)                                                                              \
	{                                                                                          \
		.name = n, .flow = MUT, .kind = ADMIT_KIND_IPPOOL, .op = ADMIT_OP_CREATE,          \
		.world = &w_net1, .obj = o, .refused = true, .msg = m                              \
	}
#define VC(n, o, m)                                                                                \
	{                                                                                          \
		.name = n, .flow = VAL, .kind = ADMIT_KIND_IPPOOL, .op = ADMIT_OP_CREATE,          \
		.world = &w_net1, .obj = o, .refused = true, .msg = m                              \
	}
#define VU(n, old_, o, m)                                                                          \
	{                                                                                          \
		.name = n, .flow = VAL, .kind = ADMIT_KIND_IPPOOL, .op = ADMIT_OP_UPDATE,          \
		.world = &w_net1, .obj = o, .old = old_, .mutable_ = true, .refused = m != NULL,   \
		.msg = m                                                                           \
	}
#define VNC(n, w, o, ref)                                                                          \
	{                                                                                          \
		.name = n, .flow = VAL, .kind = ADMIT_KIND_VMNETCFG, .op = ADMIT_OP_CREATE,        \
		.world = w, .obj = o, .refused = ref                                               \
	}
#define VNCM(n, w, o, m)                                                                           \
	{                                                                                          \
		.name = n, .flow = VAL, .kind = ADMIT_KIND_VMNETCFG, .op = ADMIT_OP_CREATE,        \
		.world = w, .obj = o, .refused = true, .msg = m                                    \
	}
#define VNU(n, w, old_, o, m)                                                                      \
	{                                                                                          \
		.name = n, .flow = VAL, .kind = ADMIT_KIND_VMNETCFG, .op = ADMIT_OP_UPDATE,        \
		.world = w, .obj = o, .old = old_, .refused = m != NULL, .msg = m                  \
	}
#define VM_C(n, w, o, m)                                                                           \
	{                                                                                          \
		.name = n, .flow = VAL, .kind = ADMIT_KIND_VM, .op = ADMIT_OP_CREATE, .world = w,  \
		.obj = o, .refused = m != NULL, .msg = m                                           \
	}

static const struct tcase cases[] = {
    /* ---- upstream: pkg/webhook/ippool/mutator_test.go ---- */
    M("mutator: no router ippool with server, start, and end ips undefined",
	POOL("'cidr':'192.168.0.0/24'"), "192.168.0.1 192.168.0.1 192.168.0.254"),
    M("mutator: ippool with server, start, and end ips undefined",
	POOL("'cidr':'172.19.64.128/29','router':'172.19.64.129'"),
	"172.19.64.130 172.19.64.129 172.19.64.134"),
    M("mutator: ippool with server, start, and end ips all defined",
	POOL("'cidr':'172.19.64.128/29','serverIP':'172.19.64.130','router':'172.19.64.129',"
	     "'pool':{'start':'172.19.64.131','end':'172.19.64.133'}"),
	"-"),
    M("mutator: /30 ippool with router (zero allocatable ip left effectively)",
	POOL("'cidr':'172.19.64.128/30','router':'172.19.64.129'"),
	"172.19.64.130 172.19.64.129 172.19.64.130"),
    M("mutator: /30 ippool without router (one allocatable ip left effectively)",
	POOL("'cidr':'172.19.64.128/30'"), "172.19.64.129 172.19.64.129 172.19.64.130"),
    M("mutator: /30 ippool without router but with start ip defined",
	POOL("'cidr':'172.19.64.128/30','pool':{'start':'172.19.64.130','end':''}"),
	"172.19.64.129 172.19.64.130 172.19.64.130"),
    M("mutator: no router ippool with excluded ips",
	POOL("'cidr':'172.19.64.128/29','pool':{'exclude':['172.19.64.129','172.19.64.131']}"),
	"172.19.64.130 172.19.64.129 172.19.64.134"),
    MREF("mutator: the only available ip left is the broadcast ip",
	POOL("'cidr':'172.19.64.128/29','router':'172.19.64.130','pool':{'exclude':["
	     "'172.19.64.129','172.19.64.131','172.19.64.132','172.19.64.133','172.19.64.134']}"),
	FAIL_SERVER),
    MREF("mutator: /32 ippool", POOL("'cidr':'172.19.64.128/32'"), FAIL_SERVER),
    MREF("mutator: /31 ippool", POOL("'cidr':'172.19.64.128/31'"), FAIL_SERVER),
    M("mutator: server ip and router are in the middle of pool range",
	POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.50','router':'192.168.0.100'"),
	"192.168.0.50 192.168.0.1 192.168.0.254"),

    /* ---- upstream: pkg/webhook/ippool/validator_test.go, TestValidator_Create ---- */
    {.name = "validator create: valid server ip",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2'"),
	.patched = "192.168.0.2 192.168.0.1 192.168.0.254"},
    VC("validator create: invalid server ip which is out of range",
	POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.100.2'"),
	CP "server ip 192.168.100.2 is not within subnet"),
    VC("validator create: invalid server ip which is the same as network ip",
	POOL("'cidr':'192.168.0.128/25','serverIP':'192.168.0.128'"),
	CP "server ip 192.168.0.128 is the same as network ip"),
    VC("validator create: invalid server ip which is the same as broadcast ip",
	POOL("'cidr':'192.168.0.0/25','serverIP':'192.168.0.127'"),
	CP "server ip 192.168.0.127 is the same as broadcast ip"),
    VC("validator create: invalid server ip which is the same as router ip",
	POOL("'cidr':'192.168.0.254/24','serverIP':'192.168.0.254','router':'192.168.0.254'"),
	CP "server ip 192.168.0.254 is the same as router ip"),
    VC("validator create: invalid router ip which is malformed",
	POOL("'cidr':'192.168.0.0/24','router':'192.168.0.1000'"),
	CP "ParseAddr(\"192.168.0.1000\"): IPv4 field has value >255"),
    VC("validator create: invalid router ip which is out of subnet",
	POOL("'cidr':'192.168.0.0/24','router':'192.168.1.1'"),
	CP "router ip 192.168.1.1 is not within subnet"),
    VC("validator create: invalid router ip which is the same as network ip",
	POOL("'cidr':'192.168.0.0/24','router':'192.168.0.0'"),
	CP "router ip 192.168.0.0 is the same as network ip"),
    VC("validator create: invalid router ip which is the same as broadcast ip",
	POOL("'cidr':'192.168.0.0/24','router':'192.168.0.255'"),
	CP "router ip 192.168.0.255 is the same as broadcast ip"),
    VC("validator create: invalid start ip which is malformed",
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'192.168.0.1000','end':''}"),
	CP "ParseAddr(\"192.168.0.1000\"): IPv4 field has value >255"),
    VC("validator create: invalid start ip which is out of subnet",
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'192.168.1.100','end':''}"),
	CP "start ip 192.168.1.100 is not within subnet"),
    VC("validator create: invalid start ip which is the same as network ip",
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'192.168.0.0','end':''}"),
	CP "start ip 192.168.0.0 is the same as network ip"),
    VC("validator create: invalid start ip which is the same as broadcast ip",
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'192.168.0.255','end':''}"),
	CP "start ip 192.168.0.255 is the same as broadcast ip"),
    VC("validator create: invalid end ip which is malformed",
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'','end':'192.168.0.1000'}"),
	CP "ParseAddr(\"192.168.0.1000\"): IPv4 field has value >255"),
    VC("validator create: invalid end ip which is out of subnet",
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'','end':'192.168.1.100'}"),
	CP "end ip 192.168.1.100 is not within subnet"),
    VC("validator create: invalid emd ip which is the same as network ip",
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'','end':'192.168.0.0'}"),
	CP "end ip 192.168.0.0 is the same as network ip"),
    VC("validator create: invalid end ip which is the same as broadcast ip",
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'','end':'192.168.0.255'}"),
	CP "end ip 192.168.0.255 is the same as broadcast ip"),
    VC("validator create: non-existed network name",
	POOL_NET("nonexist", "'cidr':'192.168.0.0/24'"),
	CP "network-attachment-definitions.k8s.cni.cncf.io \"nonexist\" not found"),
    VC("validator create: cidr overlaps cluster's service cidr (node-args annotation)",
	POOL("'cidr':'10.53.0.0/24'"),
	CP "cidr 10.53.0.0/24 overlaps cluster service cidr 10.53.0.0/16"),
    VC("validator create: cidr overlaps cluster's service cidr (default service cidr)",
	POOL("'cidr':'10.53.0.0/24'"),
	CP "cidr 10.53.0.0/24 overlaps cluster service cidr 10.53.0.0/16"),

    /* ---- upstream: pkg/webhook/ippool/validator_test.go, TestValidator_Update ---- */
    VU("validator update: valid server ip",
	POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2'," R24),
	POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.254'," R24), NULL),
    VU("validator update: invalid server ip which is out of range",
	POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2'," R24),
	POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.100.2'," R24),
	UP "server ip 192.168.100.2 is not within subnet"),
    VU("validator update: invalid server ip which is the same as network ip",
	POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2'," R24),
	POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.0'," R24),
	UP "server ip 192.168.0.0 is the same as network ip"),
    VU("validator update: invalid server ip which is the same as broadcast ip",
	POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2'," R24),
	POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.255'," R24),
	UP "server ip 192.168.0.255 is the same as broadcast ip"),
    VU("validator update: invalid server ip which is the same as router ip",
	POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2','router':'192.168.0.254'," R24),
	POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.254','router':'192.168.0.254'," R24),
	UP "server ip 192.168.0.254 is the same as router ip"),
    VU("validator update: invalid server ip which collides with other allocated ips",
	POOL_ST(
	    "'cidr':'192.168.0.0/24','serverIP':'192.168.0.2'," R24, ALLOC("192.168.0.100", MAC1)),
	POOL_ST("'cidr':'192.168.0.0/24','serverIP':'192.168.0.100'," R24,
	    ALLOC("192.168.0.100", MAC1)),
	UP "server ip 192.168.0.100 is already occupied"),
    VU("validator update: invalid router ip which is malformed", NULL,
	POOL("'cidr':'192.168.0.0/24','router':'192.168.0.1000'"),
	UP "ParseAddr(\"192.168.0.1000\"): IPv4 field has value >255"),
    VU("validator update: invalid router ip which is out of subnet", NULL,
	POOL("'cidr':'192.168.0.0/24','router':'192.168.1.1'"),
	UP "router ip 192.168.1.1 is not within subnet"),
    VU("validator update: invalid router ip which is the same as network ip", NULL,
	POOL("'cidr':'192.168.0.0/24','router':'192.168.0.0'"),
	UP "router ip 192.168.0.0 is the same as network ip"),
    VU("validator update: invalid router ip which is the same as broadcast ip", NULL,
	POOL("'cidr':'192.168.0.0/24','router':'192.168.0.255'"),
	UP "router ip 192.168.0.255 is the same as broadcast ip"),
    VU("validator update: invalid start ip which is malformed", NULL,
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'192.168.0.1000','end':''}"),
	UP "ParseAddr(\"192.168.0.1000\"): IPv4 field has value >255"),
    VU("validator update: invalid start ip which is out of subnet", NULL,
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'192.168.1.100','end':''}"),
	UP "start ip 192.168.1.100 is not within subnet"),
    VU("validator update: invalid start ip which is the same as network ip", NULL,
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'192.168.0.0','end':''}"),
	UP "start ip 192.168.0.0 is the same as network ip"),
    VU("validator update: invalid start ip which is the same as broadcast ip", NULL,
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'192.168.0.255','end':''}"),
	UP "start ip 192.168.0.255 is the same as broadcast ip"),
    VU("validator update: invalid end ip which is malformed", NULL,
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'','end':'192.168.0.1000'}"),
	UP "ParseAddr(\"192.168.0.1000\"): IPv4 field has value >255"),
    VU("validator update: invalid end ip which is out of subnet", NULL,
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'','end':'192.168.1.100'}"),
	UP "end ip 192.168.1.100 is not within subnet"),
    VU("validator update: invalid emd ip which is the same as network ip", NULL,
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'','end':'192.168.0.0'}"),
	UP "end ip 192.168.0.0 is the same as network ip"),
    VU("validator update: invalid end ip which is the same as broadcast ip", NULL,
	POOL("'cidr':'192.168.0.0/24','pool':{'start':'','end':'192.168.0.255'}"),
	UP "end ip 192.168.0.255 is the same as broadcast ip"),
    VU("validator update: non-existed network name", NULL,
	POOL_NET("nonexist", "'cidr':'192.168.0.0/24'"),
	UP "network-attachment-definitions.k8s.cni.cncf.io \"nonexist\" not found"),
    VU("validator update: cidr overlaps cluster's service cidr (node-args annotation)", NULL,
	POOL("'cidr':'10.53.0.0/24'"),
	UP "cidr 10.53.0.0/24 overlaps cluster service cidr 10.53.0.0/16"),
    VU("validator update: cidr overlaps cluster's service cidr (default service cidr)", NULL,
	POOL("'cidr':'10.53.0.0/24'"),
	UP "cidr 10.53.0.0/24 overlaps cluster service cidr 10.53.0.0/16"),
    VU("validator update: server ip collides with excluded ip", NULL,
	POOL_ST("'cidr':'192.168.0.0/24','serverIP':'192.168.0.100'",
	    ALLOC("192.168.0.100", "EXCLUDED")),
	UP "server ip 192.168.0.100 is already occupied"),
    VU("validator update: server ip within the pool range", NULL,
	POOL_ST("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2'," R24,
	    ALLOC("192.168.0.2", "RESERVED")),
	NULL),
    VU("validator update: server ip collides with excluded ip (second copy)", NULL,
	POOL_ST("'cidr':'192.168.0.0/24','serverIP':'192.168.0.100'",
	    ALLOC("192.168.0.100", "EXCLUDED")),
	UP "server ip 192.168.0.100 is already occupied"),
    VU("validator update: server ip within the pool range (second copy)", NULL,
	POOL_ST("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2'," R24,
	    ALLOC("192.168.0.2", "RESERVED")),
	NULL),

    /* ---- upstream (a60f7a7): pkg/webhook/vmnetcfg/validator_test.go, TestValidator_Create ---- */
    VNC("vmnetcfg create: ippool name different from nad name with the nad properly labeled", &w_ok,
	CFG(NIC_DYN(MAC1)), false),
    VNC("vmnetcfg create: ippool and nad share the same name with the nad properly labeled",
	&w_same_name, CFG(NIC_DYN(MAC1)), false),
    VNCM("vmnetcfg create: non-existed ippool referenced", &w_no_pool, CFG(NIC_DYN(MAC1)),
	CC "ippools.network.harvesterhci.io \"test-pool\" not found"),
    VNCM("vmnetcfg create: non-existed nad referenced", &w_no_nad, CFG(NIC_DYN(MAC1)),
	CC "network-attachment-definitions.k8s.cni.cncf.io \"test-net\" not found"),
    VNCM("vmnetcfg create: nad referenced does not have proper labels", &w_no_labels,
	CFG(NIC_DYN(MAC1)), CC "network.harvesterhci.io/ippool-namespace label not found"),
    VNCM("vmnetcfg create: nad referenced has incomplete labels set", &w_half_labels,
	CFG(NIC_DYN(MAC1)), CC "network.harvesterhci.io/ippool-namespace label not found"),
    VNC("vmnetcfg create: desired static ip inside pool is allowed", &w_ok,
	CFG(NIC("192.168.0.111", MAC1)), false),
    VNCM("vmnetcfg create: desired static ip outside cidr is denied", &w_ok,
	CFG(NIC("192.168.1.111", MAC1)),
	CC "ip address 192.168.1.111 is not within subnet 192.168.0.0/24"),
    VNCM("vmnetcfg create: desired static ip outside pool range is denied", &w_ok,
	CFG(NIC("192.168.0.50", MAC1)),
	CC "ip address 192.168.0.50 is not within pool range 192.168.0.100-192.168.0.200"),
    VNCM("vmnetcfg create: desired static ip marked excluded is denied", &w_excluded,
	CFG(NIC("192.168.0.111", MAC1)), CC "ip address 192.168.0.111 is not allocatable"),
    VNCM("vmnetcfg create: desired static ip marked reserved is denied", &w_reserved,
	CFG(NIC("192.168.0.111", MAC1)), CC "ip address 192.168.0.111 is not allocatable"),
    VNCM("vmnetcfg create: desired static ip allocated to a different mac is denied", &w_mac2,
	CFG(NIC("192.168.0.111", MAC1)),
	CC "ip address 192.168.0.111 is already allocated to mac " MAC2
	   " (VirtualMachineNetworkConfig default/other-vm)"),
    VNCM("vmnetcfg create: duplicate desired static ip on same network is denied", &w_ok,
	CFG(NIC("192.168.0.111", MAC1) "," NIC("192.168.0.111", MAC2)),
	CC "duplicate desired ip 192.168.0.111 on network default/test-net"),

    /* ---- upstream (a60f7a7): vmnetcfg validator_test.go, TestValidator_Update ---- */
    VNU("vmnetcfg update: desired static ip inside pool is allowed", &w_ok, CFG(NIC_DYN(MAC1)),
	CFG(NIC("192.168.0.111", MAC1)), NULL),
    VNU("vmnetcfg update: desired static ip outside pool range is denied", &w_ok,
	CFG(NIC_DYN(MAC1)), CFG(NIC("192.168.0.50", MAC1)),
	UC "ip address 192.168.0.50 is not within pool range 192.168.0.100-192.168.0.200"),
    VNU("vmnetcfg update: unchanged desired static ip does not require nad or ippool lookup",
	&w_none, CFG(NIC("192.168.0.111", MAC1)), CFG(NIC("192.168.0.111", MAC1)), NULL),
    VNU("vmnetcfg update: removed network config does not require nad or ippool lookup", &w_none,
	CFG(NIC("192.168.0.111", MAC1)), CFG(""), NULL),
    VNU("vmnetcfg update: removed desired static ip does not require nad or ippool lookup", &w_none,
	CFG(NIC("192.168.0.111", MAC1)), CFG(NIC_DYN(MAC1)), NULL),
    VNU("vmnetcfg update: changed desired static ip requires nad and ippool lookup", &w_none,
	CFG(NIC("192.168.0.111", MAC1)), CFG(NIC("192.168.0.112", MAC1)),
	UC "network-attachment-definitions.k8s.cni.cncf.io \"test-net\" not found"),
    VNU("vmnetcfg update: new dynamic network config does not require nad or ippool lookup",
	&w_none, CFG(""), CFG(NIC_DYN(MAC1)), NULL),
    VNU("vmnetcfg update: changed desired static ip duplicated with unchanged config is denied",
	&w_ok, CFG(NIC_DYN(MAC1) "," NIC("192.168.0.112", MAC2)),
	CFG(NIC("192.168.0.112", MAC1) "," NIC("192.168.0.112", MAC2)),
	UC "duplicate desired ip 192.168.0.112 on network default/test-net"),

    /* ---- objects upstream stores (tests/data/upstream/ippool-readme.yaml) and ours
     * (examples/ippool-full.yaml), transcribed: allowed as they are ---- */
    {.name = "upstream's README IPPool",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_real,
	.obj = "{'apiVersion':'network.harvesterhci.io/v1alpha1','kind':'IPPool','metadata':{"
	       "'name':'net-48','namespace':'default'},'spec':{'ipv4Config':{'serverIP':"
	       "'192.168.48.77','cidr':'192.168.48.0/24','pool':{'start':'192.168.48.81','end':"
	       "'192.168.48.90','exclude':['192.168.48.81','192.168.48.90']},'router':"
	       "'192.168.48.1','dns':['1.1.1.1'],'domainName':'aibao.moe','domainSearch':["
	       "'aibao.moe'],'ntp':['pool.ntp.org'],'leaseTime':300},'networkName':"
	       "'default/net-48'}}",
	.patched = "-"},
    {.name = "examples/ippool-full.yaml",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_real,
	.obj =
	    "{'apiVersion':'network.harvesterhci.io/v1alpha1','kind':'IPPool','metadata':{"
	    "'name':'net-49','namespace':'lab'},'spec':{'networkName':'lab/net-49','ipv4Config':{"
	    "'serverIP':'10.49.0.2','cidr':'10.49.0.0/16','pool':{'start':'10.49.1.0','end':"
	    "'10.49.255.254','exclude':['10.49.1.0','10.49.1.1','10.49.10.53']},'router':"
	    "'10.49.0.1','dns':['10.49.10.53','1.1.1.1'],'domainName':'lab.example.com',"
	    "'domainSearch':['lab.example.com','example.com'],'ntp':['10.49.0.1',"
	    "'pool.ntp.org'],'leaseTime':600,'mtu':9000,'routes':[{'destination':"
	    "'10.50.0.0/16','gateway':'10.49.0.254'},{'destination':'172.16.0.0/12',"
	    "'gateway':'10.49.0.253'}]}}}",
	.patched = "-"},

    /* ---- ours: IPPool ---- */
    {.name = "ours: serverIP with a leading zero",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'10.1.0.0/24','serverIP':'010.1.0.2'"),
	.refused = true,
	.msg = CP "ParseAddr(\"010.1.0.2\"): IPv4 field has octet with leading zero"},
    {.name = "ours: serverIP IPv4-mapped IPv6",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'10.1.0.0/24','serverIP':'::ffff:10.1.0.2'"),
	.refused = true,
	.msg = CP "server ip ::ffff:10.1.0.2 is not an IPv4 address"},
    VC("ours: router IPv4-mapped IPv6 (validator)",
	POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2','router':'::ffff:192.168.0.1'," R24),
	CP "router ip ::ffff:192.168.0.1 is not an IPv4 address"),
    {.name = "ours: an exclude with a leading zero",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','pool':{'exclude':['192.168.0.010']}"),
	.refused = true,
	.msg = CP "ParseAddr(\"192.168.0.010\"): IPv4 field has octet with leading zero"},
    {.name = "ours: a malformed start is refused by the mutator, not replaced",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','pool':{'start':'192.168.0.1000'}"),
	.refused = true,
	.msg = CP "ParseAddr(\"192.168.0.1000\"): IPv4 field has value >255"},
    {.name = "ours: start outside the subnet through the mutator: invalid pool range",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','pool':{'start':'192.168.1.100'}"),
	.refused = true,
	.msg = CP "invalid pool range"},
    {.name = "ours: a CIDR Go refuses",
	.flow = MUT,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/33'"),
	.refused = true,
	.msg = CP "invalid CIDR address: 192.168.0.0/33"},
    {.name = "ours: no ipv4Config at all",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = "{'metadata':{'namespace':'default','name':'net-1'},'spec':{'networkName':'net-1'}}",
	.refused = true,
	.msg = CP "invalid CIDR address: "},
    {.name = "ours: an IPv6 CIDR",
	.flow = MUT,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'fd00::/64'"),
	.refused = true,
	.msg = CP "cidr fd00::/64 is not an IPv4 CIDR"},
    {.name = "ours: a serverIP that is not a string (400)",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = "{'metadata':{'namespace':'default','name':'net-1'},'spec':{'networkName':'net-1',"
	       "'ipv4Config':{'cidr':'192.168.0.0/24','serverIP':17}}}",
	.refused = true,
	.code = 400,
	.substr = "spec.ipv4Config.serverIP does not decode"},
    {.name = "ours: a spec that is not an object (400)",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = "{'metadata':{'namespace':'default','name':'net-1'},'spec':'x'}",
	.refused = true,
	.code = 400,
	.substr = "spec does not decode"},
    {.name = "ours: codec: a DNS server with a leading zero (400)",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','dns':['010.0.0.1']"),
	.refused = true,
	.code = 400,
	.substr = "spec.ipv4Config.dns[0]: "},
    {.name = "ours: codec: an unknown field (a typo) (400)",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','leasetime':300"),
	.refused = true,
	.code = 400,
	.msg = CP "spec.ipv4Config.leasetime: unknown field"},
    {.name = "ours: codec: pool.start after pool.end (400)",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.1',"
		    "'pool':{'start':'192.168.0.200','end':'192.168.0.100'}"),
	.refused = true,
	.code = 400,
	.msg = CP "spec.ipv4Config.pool.end: 192.168.0.100 is before pool.start 192.168.0.200"},
    {.name = "ours: codec: an MTU out of range (400)",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','mtu':20"),
	.refused = true,
	.code = 400,
	.substr = "spec.ipv4Config.mtu"},
    {.name = "ours: a second IPPool on the same network",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_pools,
	.obj = POOL_NET("default/net-2", "'cidr':'10.3.0.0/24'"),
	.refused = true,
	.msg = CP "network default/net-2 already has IPPool default/other"},
    {.name = "ours: a second IPPool on the same network, written bare",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_pools,
	.obj = POOL_NET("net-2", "'cidr':'10.3.0.0/24'"),
	.refused = true,
	.msg = CP "network default/net-2 already has IPPool default/other"},
    {.name = "ours: the cached copy of the same pool is not a second one",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_pools,
	.obj = POOL("'cidr':'192.168.0.0/24'"),
	.patched = "192.168.0.1 192.168.0.1 192.168.0.254"},
    {.name = "ours: excludes covering the serverIP",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2',"
		    "'pool':{'exclude':['192.168.0.2']}"),
	.refused = true,
	.msg = CP "server ip 192.168.0.2 is in pool.exclude"},
    {.name = "ours: a range change that strands a bound address",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_pools,
	.old = POOL_ST(
	    "'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," R24, ALLOC("192.168.0.150", MAC1)),
	.obj = POOL_ST("'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," RANGE(
			   "192.168.0.160", "192.168.0.254"),
	    ALLOC("192.168.0.150", MAC1)),
	.refused = true,
	.msg = UP "address 192.168.0.150 bound to mac " MAC1
		  " (VirtualMachineNetworkConfig default/vm-a) would be stranded: outside the new "
		  "pool range 192.168.0.160-192.168.0.254"},
    {.name = "ours: an exclude change that strands a bound address",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_pools,
	.old = POOL_ST(
	    "'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," R24, ALLOC("192.168.0.150", MAC1)),
	.obj = POOL_ST(
	    "'cidr':'192.168.0.0/24','serverIP':'192.168.0.1',"
	    "'pool':{'start':'192.168.0.1','end':'192.168.0.254','exclude':['192.168.0.150']}",
	    ALLOC("192.168.0.150", MAC1)),
	.refused = true,
	.msg = UP "address 192.168.0.150 bound to mac " MAC1
		  " (VirtualMachineNetworkConfig default/vm-a) would be stranded: pool.exclude "
		  "covers it"},
    {.name = "ours: a stranded address with no VMNetCfg in the cache",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_pools,
	.old = POOL_ST(
	    "'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," R24, ALLOC("192.168.0.20", MAC2)),
	.obj = POOL_ST("'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," RANGE(
			   "192.168.0.100", "192.168.0.254"),
	    ALLOC("192.168.0.20", MAC2)),
	.refused = true,
	.msg = UP "address 192.168.0.20 bound to mac " MAC2
		  " would be stranded: outside the new pool range 192.168.0.100-192.168.0.254"},
    {.name = "ours: a range change that keeps every bound address",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_pools,
	.old = POOL_ST(
	    "'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," R24, ALLOC("192.168.0.150", MAC1)),
	.obj = POOL_ST(
	    "'cidr':'192.168.0.0/24','serverIP':'192.168.0.1',"
	    "'pool':{'start':'192.168.0.100','end':'192.168.0.200','exclude':['192.168.0.151']}",
	    ALLOC("192.168.0.150", MAC1))},
    {.name = "ours: an address already outside the old range is not stranded by the change",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_pools,
	.old = POOL_ST("'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," RANGE(
			   "192.168.0.100", "192.168.0.254"),
	    ALLOC("192.168.0.20", MAC2)),
	.obj = POOL_ST("'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," RANGE(
			   "192.168.0.110", "192.168.0.254"),
	    ALLOC("192.168.0.20", MAC2))},
    {.name = "ours: a router added on an address bound to a MAC",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_pools,
	.old = POOL_ST(
	    "'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," R24, ALLOC("192.168.0.150", MAC1)),
	.obj = POOL_ST(
	    "'cidr':'192.168.0.0/24','serverIP':'192.168.0.1','router':'192.168.0.150'," R24,
	    ALLOC("192.168.0.150", MAC1)),
	.refused = true,
	.msg = UP "router ip 192.168.0.150 is already allocated to mac " MAC1
		  " (VirtualMachineNetworkConfig default/vm-a)"},
    {.name = "ours: a router added on a free address",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_pools,
	.old = POOL_ST(
	    "'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," R24, ALLOC("192.168.0.150", MAC1)),
	.obj = POOL_ST(
	    "'cidr':'192.168.0.0/24','serverIP':'192.168.0.1','router':'192.168.0.254'," R24,
	    ALLOC("192.168.0.150", MAC1))},
    {.name = "ours: immutable networkName",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_pools,
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," R24),
	.obj = POOL_NET("default/net-2", "'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," R24),
	.refused = true,
	.msg = UP "networkName is immutable"},
    {.name = "ours: a networkName change without the CEL rule meets the second-pool rule",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_pools,
	.mutable_ = true,
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," R24),
	.obj = POOL_NET("default/net-2", "'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," R24),
	.refused = true,
	.msg = UP "network default/net-2 already has IPPool default/other"},
    {.name = "ours: immutable serverIP (upstream's \"valid server ip\" update with the CEL rule)",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_net1,
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2'," R24),
	.obj = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.254'," R24),
	.refused = true,
	.msg = UP "serverIP is immutable"},
    {.name = "ours: immutable cidr",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_net1,
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2'," R24),
	.obj = POOL("'cidr':'192.168.0.0/23','serverIP':'192.168.0.2'," R24),
	.refused = true,
	.msg = UP "cidr is immutable"},
    {.name = "ours: immutable router",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_net1,
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2','router':'192.168.0.1'," R24),
	.obj = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2','router':'192.168.0.3'," R24),
	.refused = true,
	.msg = UP "router is immutable"},
    {.name = "ours: a router cannot be removed once set",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_net1,
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2','router':'192.168.0.1'," R24),
	.obj = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2'," R24),
	.refused = true,
	.msg = UP "router cannot be removed once set"},
    {.name = "ours: a serverIP removed is not the CEL rule's but the codec's (400)",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_net1,
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2'," R24),
	.obj = POOL("'cidr':'192.168.0.0/24'," R24),
	.refused = true,
	.code = 400,
	.msg = UP "spec.ipv4Config.serverIP: required"},
    {.name = "ours: an update of an object being deleted is not checked",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_none,
	.old = POOL("'cidr':'192.168.0.0/24'"),
	.obj = "{'metadata':{'namespace':'default','name':'net-1','deletionTimestamp':"
	       "'2026-01-01T00:00:00Z'},'spec':{'networkName':'gone','ipv4Config':{'cidr':'x'}}}"},
    {.name = "ours: a metadata-only update of a pool stored before the rules",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_net1,
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2','dns':['010.0.0.1']," R24),
	.obj = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2','dns':['010.0.0.1']," R24)},
    {.name = "ours: a metadata-only update of a pool whose NAD is gone",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_none,
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2'," R24),
	.obj = "{'metadata':{'namespace':'default','name':'net-1','finalizers':['x']},'spec':{"
	       "'networkName':'default/net-1','ipv4Config':{'cidr':'192.168.0.0/24','serverIP':"
	       "'192.168.0.2'," R24 "}}}"},
    {.name = "ours: a spec change of a pool whose NAD is gone",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_none,
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2'," R24),
	.obj = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2','leaseTime':600," R24),
	.refused = true,
	.msg = UP "network-attachment-definitions.k8s.cni.cncf.io \"net-1\" not found"},
    {.name = "ours: a dns change on such a pool meets the codec",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_net1,
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2','dns':['010.0.0.1']," R24),
	.obj = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.2','dns':['010.0.0.2']," R24),
	.refused = true,
	.code = 400,
	.substr = "spec.ipv4Config.dns[0]: "},
    {.name = "ours: the mutator only acts on CREATE",
	.flow = MUT,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_net1,
	.old = POOL("'cidr':'192.168.0.0/24'"),
	.obj = POOL("'cidr':'192.168.0.0/24'"),
	.patched = "-"},
    {.name = "ours: delete refused while VMNetCfgs use the network",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_DELETE,
	.world = &w_pools,
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," R24),
	.refused = true,
	.msg = "cannot delete IPPool default/net-1 because it's still used by "
	       "VirtualMachineNetworkConfig(s) default/vm-a, default/vm-b, which must be removed "
	       "at first"},
    {.name = "ours: delete without the old object: the cached pool's network",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_DELETE,
	.world = &w_pools,
	.refused = true,
	.substr = "still used by VirtualMachineNetworkConfig(s) default/vm-a, default/vm-b"},
    {.name = "ours: delete by the garbage collector is allowed with a warning",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_DELETE,
	.world = &w_pools,
	.user = "system:serviceaccount:kube-system:generic-garbage-collector",
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," R24),
	.warn = "while still used by VirtualMachineNetworkConfig(s) default/vm-a, default/vm-b"},
    {.name = "ours: delete by the namespace controller is allowed with a warning",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_DELETE,
	.world = &w_pools,
	.user = "system:serviceaccount:kube-system:namespace-controller",
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," R24),
	.warn = "is deleted by system:serviceaccount:kube-system:namespace-controller"},
    {.name = "ours: delete by anyone else is refused",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_DELETE,
	.world = &w_pools,
	.user = "system:admin",
	.old = POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'," R24),
	.refused = true,
	.substr = "which must be removed at first"},
    {.name = "ours: delete of an unused pool",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_DELETE,
	.world = &w_pools,
	.old = POOL_NET("default/net-2", "'cidr':'10.2.0.0/24'")},
    {.name = "ours: warning: a range with no allocatable address",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'172.19.64.128/30','router':'172.19.64.129'"),
	.patched = "172.19.64.130 172.19.64.129 172.19.64.130",
	.warn = "pool range 172.19.64.129-172.19.64.130 holds no allocatable address"},
    {.name = "ours: codec: networkBoot uefiHttp not a URL (400)",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','networkBoot':{'bootFiles':{'uefiHttp':'ipxe.efi'}}"),
	.refused = true,
	.code = 400,
	.substr = "spec.ipv4Config.networkBoot.bootFiles.uefiHttp: \"ipxe.efi\" is not an http:// "
		  "or https:// URL"},
    {.name = "ours: codec: networkBoot nextServer not an address (400)",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','networkBoot':{'nextServer':'tftp.lan'}"),
	.refused = true,
	.code = 400,
	.substr = "spec.ipv4Config.networkBoot.nextServer"},
    {.name = "ours: warning: a TFTP boot file without a server",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','networkBoot':{'bootFiles':{'bios':'undionly.kpxe'}}"),
	.patched = "192.168.0.1 192.168.0.1 192.168.0.254",
	.warn = "networkBoot: bootFiles.bios is a TFTP file but neither nextServer nor "
		"tftpServerName is set"},
    {.name = "ours: networkBoot served over HTTP only: no warning",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','networkBoot':{'bootFiles':{'uefiHttp':"
		    "'http://10.0.0.5/ipxe.efi'},'ipxeScript':'http://10.0.0.5/boot.ipxe'}"),
	.patched = "192.168.0.1 192.168.0.1 192.168.0.254"},
    {.name = "ours: warning: a short leaseTime",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','leaseTime':30"),
	.patched = "192.168.0.1 192.168.0.1 192.168.0.254",
	.warn = "leaseTime 30 s is under 60 s"},
    {.name = "ours: warning: a leaseTime of 0",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.0/24','leaseTime':0"),
	.patched = "192.168.0.1 192.168.0.1 192.168.0.254",
	.warn = "leaseTime 0 is served as 31536000 s"},
    {.name = "ours: warning: a CIDR with host bits",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = POOL("'cidr':'192.168.0.7/24'"),
	.patched = "192.168.0.1 192.168.0.1 192.168.0.254",
	.warn = "cidr 192.168.0.7/24 has host bits set: the network is 192.168.0.0/24"},
    {.name = "ours: the mutator adds pool.start and pool.end into an existing pool",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj =
	    POOL("'cidr':'192.168.0.0/24','serverIP':'192.168.0.9','pool':{'end':'192.168.0.99'}"),
	.patched = "192.168.0.9 192.168.0.1 192.168.0.99"},
    {.name = "ours: another kind is not ours",
	.flow = CHAIN,
	.kind = ADMIT_KIND_OTHER,
	.op = ADMIT_OP_CREATE,
	.world = &w_none,
	.obj = "{'spec':'anything'}",
	.patched = "-"},

    /* ---- ours: VirtualMachineNetworkConfig ---- */
    VNCM("ours: vmName missing", &w_ok,
	"{'metadata':{'namespace':'default','name':'test-vmnetcfg'},'spec':{'networkConfigs':"
	"[" NIC_DYN(MAC1) "]}}",
	CC "spec.vmName is required"),
    VNCM("ours: vmName empty", &w_ok,
	"{'metadata':{'namespace':'default','name':'test-vmnetcfg'},'spec':{'vmName':'','"
	"networkConfigs':[" NIC_DYN(MAC1) "]}}",
	CC "spec.vmName must not be empty"),
    {.name = "ours: vmName immutable",
	.flow = VAL,
	.kind = ADMIT_KIND_VMNETCFG,
	.op = ADMIT_OP_UPDATE,
	.world = &w_ok,
	.old = CFG(NIC_DYN(MAC1)),
	.obj = "{'metadata':{'namespace':'default','name':'test-vmnetcfg'},'spec':{'vmName':'vm-x',"
	       "'networkConfigs':[" NIC_DYN(MAC1) "]}}",
	.refused = true,
	.msg = UC "vmName is immutable"},
    {.name = "ours: codec: an empty MAC (400)",
	.flow = VAL,
	.kind = ADMIT_KIND_VMNETCFG,
	.op = ADMIT_OP_CREATE,
	.world = &w_ok,
	.obj = CFG(NIC_DYN("")),
	.refused = true,
	.code = 400,
	.substr = CC "spec.networkConfigs[0].macAddress: "},
    {.name = "ours: codec: the same MAC twice on one network (400)",
	.flow = VAL,
	.kind = ADMIT_KIND_VMNETCFG,
	.op = ADMIT_OP_CREATE,
	.world = &w_ok,
	.obj = CFG(NIC_DYN(MAC1) "," NIC_DYN(MAC1)),
	.refused = true,
	.code = 400,
	.substr = "is already used on network default/test-net"},
    VNCM("ours: a desired IPv4-mapped IPv6 address", &w_ok, CFG(NIC("::ffff:192.168.0.111", MAC1)),
	CC "ip address ::ffff:192.168.0.111 is not an IPv4 address"),
    VNCM("ours: a desired address with a leading zero", &w_ok, CFG(NIC("192.168.0.0111", MAC1)),
	CC "ParseAddr(\"192.168.0.0111\"): IPv4 field has octet with leading zero"),
    VNCM("ours: a desired network address", &w_wide, CFG(NIC("192.168.0.0", MAC1)),
	CC "ip address 192.168.0.0 is the same as network ip"),
    VNCM("ours: a desired broadcast address", &w_wide, CFG(NIC("192.168.0.255", MAC1)),
	CC "ip address 192.168.0.255 is the same as broadcast ip"),
    VNC("ours: a desired address already bound to the same MAC (upper case)", &w_mac2,
	CFG(NIC("192.168.0.111", "22:33:44:55:66:77")), false),
    VNC("ours: the NAD not labelled yet, its pool cached: allowed (one kubectl apply)",
	&w_unlabelled, CFG(NIC_DYN(MAC1)), false),
    VNCM("ours: the NAD not labelled yet, its pool cached: desired addresses checked",
	&w_unlabelled, CFG(NIC("192.168.0.50", MAC1)),
	CC "ip address 192.168.0.50 is not within pool range 192.168.0.100-192.168.0.200"),
    {.name = "ours: a VM's VMNetCfg with a NIC on a network without a pool: a warning",
	.flow = VAL,
	.kind = ADMIT_KIND_VMNETCFG,
	.op = ADMIT_OP_CREATE,
	.world = &w_no_labels,
	.obj = CFG_VM(NIC_DYN(MAC1)),
	.warn = "stays Pending until an IPPool serves it: network.harvesterhci.io/ippool-namespace "
		"label not found"},
    VNCM("ours: an owner that is not a VM's controller reference: decided as upstream",
	&w_no_labels, CFG_OWNER(NIC_DYN(MAC1), "false"),
	CC "network.harvesterhci.io/ippool-namespace label not found"),
    VNCM("ours: a VM's VMNetCfg still has its desired addresses checked", &w_ok,
	CFG_VM(NIC("192.168.1.111", MAC1)),
	CC "ip address 192.168.1.111 is not within subnet 192.168.0.0/24"),
    {.name = "ours: a desired address in a paused pool is allowed with a warning",
	.flow = VAL,
	.kind = ADMIT_KIND_VMNETCFG,
	.op = ADMIT_OP_CREATE,
	.world = &w_paused,
	.obj = CFG(NIC("192.168.0.111", MAC1)),
	.warn = "IPPool default/test-pool is paused: ip address 192.168.0.111"},
    {.name = "ours: an update of a VMNetCfg being deleted is not checked",
	.flow = VAL,
	.kind = ADMIT_KIND_VMNETCFG,
	.op = ADMIT_OP_UPDATE,
	.world = &w_none,
	.old = CFG(NIC_DYN(MAC1)),
	.obj = "{'metadata':{'namespace':'default','name':'test-vmnetcfg','deletionTimestamp':"
	       "'2026-01-01T00:00:00Z'},'spec':{'vmName':'','networkConfigs':[" NIC(
		   "1.2.3", "") "]}}"},
    VNU("ours: a metadata-only update of a VMNetCfg stored before the rules", &w_none,
	CFG(NIC_DYN("")), CFG(NIC_DYN("")), NULL),
    {.name = "ours: networkConfigs that is not a list (400)",
	.flow = VAL,
	.kind = ADMIT_KIND_VMNETCFG,
	.op = ADMIT_OP_CREATE,
	.world = &w_ok,
	.obj = "{'metadata':{'namespace':'default','name':'test-vmnetcfg'},'spec':{'vmName':'v','"
	       "networkConfigs':7}}",
	.refused = true,
	.code = 400,
	.substr = "not a list"},
    {.name = "ours: a VMNetCfg delete is not ours to check",
	.flow = VAL,
	.kind = ADMIT_KIND_VMNETCFG,
	.op = ADMIT_OP_DELETE,
	.world = &w_none,
	.old = CFG(NIC("1.2.3.4", MAC1))},

    VNU("ours: an update from a VMNetCfg without a NIC list looks up the new static NICs only",
	&w_none,
	"{'metadata':{'namespace':'default','name':'test-vmnetcfg'},'spec':{'vmName':'test-vm'}}",
	CFG(NIC_DYN(MAC1)), NULL),
    VNU("ours: an update without the old object checks every NIC, as upstream's", &w_none, NULL,
	CFG(NIC_DYN(MAC1)),
	UC "network-attachment-definitions.k8s.cni.cncf.io \"test-net\" not found"),

    /* ---- ours: VirtualMachine static-ip annotations ---- */
    VM_C("vm: a valid static ip", &w_ok, VM_ANN(SIP "nic-1':'192.168.0.111'"), NULL),
    VM_C("vm: a malformed static ip", &w_ok, VM_ANN(SIP "nic-1':'192.168.0.1000'"),
	CV "nic-1: ParseAddr(\"192.168.0.1000\"): IPv4 field has value >255"),
    VM_C("vm: an IPv6 static ip", &w_ok, VM_ANN(SIP "nic-1':'::ffff:192.168.0.111'"),
	CV "nic-1: ip address ::ffff:192.168.0.111 is not an IPv4 address"),
    VM_C("vm: a static ip for a NIC the VM does not have", &w_ok,
	VM_ANN(SIP "nic-9':'192.168.0.111'"), CV "nic-9: nic nic-9 not found in the VM"),
    VM_C("vm: a static ip for the pod network", &w_ok, VM_ANN(SIP "default':'192.168.0.111'"),
	CV "default: nic default is not on a Multus network"),
    VM_C("vm: a static ip outside the pool range", &w_ok, VM_ANN(SIP "nic-1':'192.168.0.50'"),
	CV "nic-1: ip address 192.168.0.50 is not within pool range 192.168.0.100-192.168.0.200"),
    VM_C("vm: a static ip allocated to another MAC", &w_mac2, VM_ANN(SIP "nic-1':'192.168.0.111'"),
	CV "nic-1: ip address 192.168.0.111 is already allocated to mac " MAC2
	   " (VirtualMachineNetworkConfig default/other-vm)"),
    VM_C("vm: a NIC with no MAC yet skips the other-MAC check", &w_mac2,
	VM_ANN(SIP "nic-2':'192.168.0.111'"), NULL),
    VM_C("vm: the MAC from the mac-address annotation", &w_mac2,
	VM_ANN("'harvesterhci.io/mac-address':'{\\'nic-2\\':\\'" MAC2 "\\'}'," SIP
	       "nic-2':'192.168.0.111'"),
	NULL),
    VM_C("vm: a static ip marked EXCLUDED", &w_excluded, VM_ANN(SIP "nic-1':'192.168.0.111'"),
	CV "nic-1: ip address 192.168.0.111 is not allocatable"),
    VM_C("vm: the same static ip on two NICs of one network", &w_ok,
	VM_ANN(SIP "nic-1':'192.168.0.111'," SIP "nic-2':'192.168.0.111'"),
	CV "nic-2: duplicate desired ip 192.168.0.111 on network default/test-net"),
    VM_C("vm: a NIC whose network has no NAD", &w_ok, VM_ANN(SIP "nic-3':'192.168.0.111'"),
	CV "nic-3: network-attachment-definitions.k8s.cni.cncf.io \"no-such-net\" not found"),
    VM_C("vm: a static-ip annotation naming no NIC", &w_ok, VM_ANN(SIP "':'192.168.0.111'"),
	CV ": the annotation names no nic"),
    VM_C("vm: an empty static-ip annotation asks for none", &w_none, VM_ANN(SIP "nic-9':''"), NULL),
    VM_C("vm: no static-ip annotation at all", &w_none, VM_ANN("'other':'x'"), NULL),
    {.name = "vm: an unchanged bad annotation on update",
	.flow = VAL,
	.kind = ADMIT_KIND_VM,
	.op = ADMIT_OP_UPDATE,
	.world = &w_none,
	.old = VM_ANN(SIP "nic-9':'bad'"),
	.obj = VM_ANN(SIP "nic-9':'bad','other':'changed'")},
    {.name = "vm: a changed annotation on update",
	.flow = VAL,
	.kind = ADMIT_KIND_VM,
	.op = ADMIT_OP_UPDATE,
	.world = &w_ok,
	.old = VM_ANN(SIP "nic-1':'192.168.0.111'"),
	.obj = VM_ANN(SIP "nic-1':'192.168.0.250'"),
	.refused = true,
	.msg = UV "nic-1: ip address 192.168.0.250 is not within pool range "
		  "192.168.0.100-192.168.0.200"},
    {.name = "vm: a changed annotation duplicating an unchanged one",
	.flow = VAL,
	.kind = ADMIT_KIND_VM,
	.op = ADMIT_OP_UPDATE,
	.world = &w_ok,
	.old = VM_ANN(SIP "nic-1':'192.168.0.111'," SIP "nic-2':'192.168.0.112'"),
	.obj = VM_ANN(SIP "nic-1':'192.168.0.112'," SIP "nic-2':'192.168.0.112'"),
	.refused = true,
	.msg = UV "nic-1: duplicate desired ip 192.168.0.112 on network default/test-net"},
    {.name = "vm: a delete is not ours to check",
	.flow = VAL,
	.kind = ADMIT_KIND_VM,
	.op = ADMIT_OP_DELETE,
	.world = &w_none,
	.old = VM_ANN(SIP "nic-1':'bad'")},
    {.name = "vm: the mutating phase leaves a VM alone",
	.flow = MUT,
	.kind = ADMIT_KIND_VM,
	.op = ADMIT_OP_CREATE,
	.world = &w_none,
	.obj = VM_ANN(SIP "nic-1':'bad'"),
	.patched = "-"},
    /* dual stack (ours; the IPv6 rules' own table is tests/unit/test-controller-admit6.c):
     * here so that the robustness pass below perturbs the IPv6 fields too */
    {.name = "ours: a dual-stack pool, IPv6 defaults from its CIDR",
	.flow = CHAIN,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_CREATE,
	.world = &w_net1,
	.obj = "{'metadata':{'namespace':'default','name':'net-1'},'spec':{'networkName':"
	       "'default/net-1','ipv4Config':{'cidr':'192.168.0.0/24'},'ipv6Config':{'cidr':"
	       "'2001:db8::/64','pool':{'exclude':['2001:db8::1']}}}}",
	.patched = "192.168.0.1 192.168.0.1 192.168.0.254"},
    {.name = "ours: a dual-stack pool's update",
	.flow = VAL,
	.kind = ADMIT_KIND_IPPOOL,
	.op = ADMIT_OP_UPDATE,
	.world = &w_net1,
	.old = POOL_ST(R24 ",'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'},'ipv6Config':{"
			   "'cidr':'2001:db8::/64','serverIP':'2001:db8::2','pool':{'start':"
			   "'2001:db8::10','end':'2001:db8::ffff'}",
	    ",'status':{'ipv6':{'allocated':{'2001:db8::100':'" MAC1 "'},'used':1,"
	    "'available':1}}"),
	.obj = POOL_ST(R24 ",'cidr':'192.168.0.0/24','serverIP':'192.168.0.1'},'ipv6Config':{"
			   "'cidr':'2001:db8::/64','serverIP':'2001:db8::2','pool':{'start':"
			   "'2001:db8::10','end':'2001:db8::fff','exclude':['2001:db8::20']}",
	    ",'status':{'ipv6':{'allocated':{'2001:db8::100':'" MAC1 "'},'used':1,"
	    "'available':1}}")},
    {.name = "ours: a NIC with both addresses",
	.flow = VAL,
	.kind = ADMIT_KIND_VMNETCFG,
	.op = ADMIT_OP_CREATE,
	.world = &w_ok,
	.obj = CFG("{'networkName':'default/test-net','macAddress':'" MAC1 "','ipAddress':"
		   "'192.168.0.111','ipv6Address':'2001:db8::5'}"),
	.refused = true,
	.msg = CC "IPPool default/test-pool has no ipv6Config: ipv6 address 2001:db8::5 cannot be "
		  "served"},
};

/* --- running a case ------------------------------------------------------------------------ */

/* RFC 6902 "add" (the only op the mutator emits): the parent must exist. */
static int
apply_patch(json_t *obj, const json_t *ops)
{
	size_t i;
	json_t *op;

	json_array_foreach(ops, i, op)
	{
		const char *path = json_string_value(json_object_get(op, "path"));
		char buf[256], *last, *seg, *save = NULL;
		json_t *parent = obj;

		if (strcmp(json_string_value(json_object_get(op, "op")), "add") != 0 || !path ||
		    path[0] != '/')
			return -1;
		snprintf(buf, sizeof(buf), "%s", path + 1);
		last = strrchr(buf, '/');
		if (last) {
			*last++ = '\0';
			for (seg = strtok_r(buf, "/", &save); seg;
			     seg = strtok_r(NULL, "/", &save)) {
				parent = json_object_get(parent, seg);
				if (!json_is_object(parent))
					return -1;
			}
		} else {
			last = buf;
		}
		json_object_set(parent, last, json_object_get(op, "value"));
	}
	return 0;
}

static void
check_patched(const struct tcase *t, const json_t *obj, const json_t *patch)
{
	const json_t *v4 = json_object_get(json_object_get(obj, "spec"), "ipv4Config");
	const json_t *pool = json_object_get(v4, "pool");
	char got[128];

	if (strcmp(t->patched, "-") == 0) {
		if (patch)
			fprintf(stderr, "%s: unexpected patch\n", t->name);
		CU_ASSERT_PTR_NULL(patch);
		return;
	}
	snprintf(got, sizeof(got), "%s %s %s", json_string_value(json_object_get(v4, "serverIP")),
	    json_string_value(json_object_get(pool, "start")),
	    json_string_value(json_object_get(pool, "end")));
	if (strcmp(got, t->patched) != 0)
		fprintf(stderr, "%s: patched to %s, expected %s\n", t->name, got, t->patched);
	CU_ASSERT_STRING_EQUAL(got, t->patched);
}

static void
review(const struct tcase *t, struct fake *f, enum admit_phase phase, const json_t *obj,
    const json_t *old, struct admit_result *res)
{
	const struct admit_view view = {
	    .userdata = f,
	    .nad = fake_nad,
	    .pool = fake_pool,
	    .each_pool_of_network = fake_each_pool,
	    .each_cfg_of_network = fake_each_cfg,
	};
	const struct admit_opts opts = {
	    .service_net = 0x0a350000, .service_prefix = 16, .immutable = !t->mutable_};
	const struct admit_request rq = {
	    .phase = phase,
	    .kind = t->kind,
	    .op = t->op,
	    .ns = "default",
	    .name = t->kind == ADMIT_KIND_IPPOOL     ? "net-1"
		    : t->kind == ADMIT_KIND_VMNETCFG ? "test-vmnetcfg"
						     : "vm-1",
	    .object = obj,
	    .old_object = old,
	    .user = t->user,
	};

	admit_review(&view, &opts, &rq, res);
}

static bool
has_warning(const struct admit_result *res, const char *w)
{
	for (size_t i = 0; i < res->n_warnings; i++)
		if (strstr(res->warnings[i], w))
			return true;
	return false;
}

static void
run_case(const struct tcase *t)
{
	json_t *obj = t->obj ? load_json(t->obj) : NULL, *old = t->old ? load_json(t->old) : NULL;
	struct admit_result res, mres = {0};
	struct fake f;
	bool ok;

	CU_ASSERT_FATAL(!t->obj || obj);
	CU_ASSERT_FATAL(!t->old || old);
	fake_build(&f, t->world);
	if (t->flow == MUT || t->flow == CHAIN) {
		review(t, &f, ADMIT_MUTATE, obj, old, &mres);
		if (mres.allowed && mres.patch)
			CU_ASSERT_EQUAL(apply_patch(obj, mres.patch), 0);
		if (mres.allowed && t->patched)
			check_patched(t, obj, mres.patch);
	}
	if (t->flow == MUT || (t->flow == CHAIN && !mres.allowed))
		res = mres, mres.patch = NULL;
	else
		review(t, &f, ADMIT_VALIDATE, obj, old, &res);
	ok = res.allowed == !t->refused && (!t->msg || strcmp(res.message, t->msg) == 0) &&
	     (!t->substr || strstr(res.message, t->substr)) &&
	     (!t->refused || res.code == (t->code ? t->code : 403)) &&
	     (!t->warn || has_warning(&res, t->warn));
	if (!ok) {
		fprintf(stderr, "\n  case \"%s\": %s (%d) \"%s\"", t->name,
		    res.allowed ? "allowed" : "refused", res.code, res.message);
		for (size_t i = 0; i < res.n_warnings; i++)
			fprintf(stderr, " [warning: %s]", res.warnings[i]);
		fprintf(stderr, "\n");
	}
	CU_ASSERT(ok);
	if (t->flow == VAL || (t->flow == CHAIN && mres.allowed))
		CU_ASSERT_PTR_NULL(res.patch); /* validate never patches */
	admit_result_clear(&res);
	admit_result_clear(&mres);
	json_decref(obj);
	json_decref(old);
	fake_free(&f);
}

static void
test_table(void)
{
	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		run_case(&cases[i]);
	printf("(%zu cases) ", ELEMENTSOF(cases));
}

/* admit_parse_ipv4 against Go 1.19's net/netip.ParseAddr (the outputs of a Go program run on
 * these inputs; upstream's webhook returns these messages). */
static const struct {
	const char *in;
	const char *err; /* NULL: parses to out */
	uint32_t out;
} parse_cases[] = {
    {"192.168.0.1", NULL, 0xc0a80001},
    {"0.0.0.0", NULL, 0},
    {"255.255.255.255", NULL, 0xffffffff},
    {"0.1.2.3", NULL, 0x00010203},
    {"192.168.0.1000", "ParseAddr(\"192.168.0.1000\"): IPv4 field has value >255", 0},
    {"010.1.0.2", "ParseAddr(\"010.1.0.2\"): IPv4 field has octet with leading zero", 0},
    {"1.2.3.04", "ParseAddr(\"1.2.3.04\"): IPv4 field has octet with leading zero", 0},
    {"00.1.2.3", "ParseAddr(\"00.1.2.3\"): IPv4 field has octet with leading zero", 0},
    {"1.2.3.00", "ParseAddr(\"1.2.3.00\"): IPv4 field has octet with leading zero", 0},
    {"1.2.3", "ParseAddr(\"1.2.3\"): IPv4 address too short", 0},
    {"1.2.3.4.5", "ParseAddr(\"1.2.3.4.5\"): IPv4 address too long", 0},
    {".1.2.3", "ParseAddr(\".1.2.3\"): IPv4 field must have at least one digit (at \".1.2.3\")", 0},
    {"1.2.3.", "ParseAddr(\"1.2.3.\"): IPv4 field must have at least one digit (at \".\")", 0},
    {"1..2.3", "ParseAddr(\"1..2.3\"): IPv4 field must have at least one digit (at \".2.3\")", 0},
    {"1.2.3.4.", "ParseAddr(\"1.2.3.4.\"): IPv4 field must have at least one digit (at \".\")", 0},
    {"", "ParseAddr(\"\"): unable to parse IP", 0},
    {"abc", "ParseAddr(\"abc\"): unable to parse IP", 0},
    {"1.2.3.4 ", "ParseAddr(\"1.2.3.4 \"): unexpected character (at \" \")", 0},
    {" 1.2.3.4", "ParseAddr(\" 1.2.3.4\"): unexpected character (at \" 1.2.3.4\")", 0},
    {"1.2.3.-4", "ParseAddr(\"1.2.3.-4\"): unexpected character (at \"-4\")", 0},
    {"1.2.3.4%eth0", "ParseAddr(\"1.2.3.4%eth0\"): unexpected character (at \"%eth0\")", 0},
    {"%x", "ParseAddr(\"%x\"): missing IPv6 address", 0},
    {"1.2.3.256", "ParseAddr(\"1.2.3.256\"): IPv4 field has value >255", 0},
    {"300.1.1.1", "ParseAddr(\"300.1.1.1\"): IPv4 field has value >255", 0},
    {"1.2.3.4/24", "ParseAddr(\"1.2.3.4/24\"): unexpected character (at \"/24\")", 0},
    {"1.2.3.a", "ParseAddr(\"1.2.3.a\"): unexpected character (at \"a\")", 0},
    {"\"q\".1", "ParseAddr(\"\\\"q\\\".1\"): unexpected character (at \"\\\"q\\\".1\")", 0},
    {"1.2.3.\n", "ParseAddr(\"1.2.3.\\n\"): unexpected character (at \"\\n\")", 0},
    {"1.2.3.\xff", "ParseAddr(\"1.2.3.\\xff\"): unexpected character (at \"\\xff\")", 0},
    {"1.2.3.\xc3\xa9", "ParseAddr(\"1.2.3.\xc3\xa9\"): unexpected character (at \"\xc3\xa9\")", 0},
    {"1e3.1.1.1", "ParseAddr(\"1e3.1.1.1\"): unexpected character (at \"e3.1.1.1\")", 0},
    {"\xef\xbc\x91.2.3.4",
	"ParseAddr(\"\xef\xbc\x91.2.3.4\"): unexpected character (at \"\xef\xbc\x91.2.3.4\")", 0},
    /* Go reads these as IPv6 (and accepts the first two): refused, ours */
    {"::1", "\"::1\" is not an IPv4 address", 0},
    {"::ffff:10.1.0.2", "\"::ffff:10.1.0.2\" is not an IPv4 address", 0},
    {"1:2", "\"1:2\" is not an IPv4 address", 0},
};

static void
test_parse_ipv4(void)
{
	char err[256];
	uint32_t a;
	int r;

	for (size_t i = 0; i < ELEMENTSOF(parse_cases); i++) {
		a = 0xdeadbeef;
		err[0] = '\0';
		r = admit_parse_ipv4(parse_cases[i].in, &a, err, sizeof(err));
		if (parse_cases[i].err) {
			CU_ASSERT_EQUAL(r, -EINVAL);
			CU_ASSERT_EQUAL(a, 0xdeadbeef);
			if (strcmp(err, parse_cases[i].err) != 0)
				fprintf(stderr, "\n  %s: got %s\n", parse_cases[i].err, err);
			CU_ASSERT_STRING_EQUAL(err, parse_cases[i].err);
		} else {
			CU_ASSERT_EQUAL(r, 0);
			CU_ASSERT_EQUAL(a, parse_cases[i].out);
		}
	}
	/* a small buffer is truncated, never overrun; NULL reads as "" */
	CU_ASSERT_EQUAL(admit_parse_ipv4("1.2.3.1000", &a, err, 8), -EINVAL);
	CU_ASSERT_EQUAL(strlen(err), 7);
	CU_ASSERT_EQUAL(admit_parse_ipv4(NULL, &a, err, sizeof(err)), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err, "ParseAddr(\"\"): unable to parse IP");
}

static void
test_names(void)
{
	enum admit_op op;

	CU_ASSERT_EQUAL(admit_kind_of("network.harvesterhci.io", "ippools"), ADMIT_KIND_IPPOOL);
	CU_ASSERT_EQUAL(admit_kind_of("network.harvesterhci.io", "virtualmachinenetworkconfigs"),
	    ADMIT_KIND_VMNETCFG);
	CU_ASSERT_EQUAL(admit_kind_of("kubevirt.io", "virtualmachines"), ADMIT_KIND_VM);
	CU_ASSERT_EQUAL(admit_kind_of("kubevirt.io", "virtualmachineinstances"), ADMIT_KIND_OTHER);
	CU_ASSERT_EQUAL(admit_kind_of("", "ippools"), ADMIT_KIND_OTHER);
	CU_ASSERT_EQUAL(admit_kind_of(NULL, NULL), ADMIT_KIND_OTHER);
	CU_ASSERT_STRING_EQUAL(admit_kind_name(ADMIT_KIND_IPPOOL), "IPPool");
	CU_ASSERT_STRING_EQUAL(admit_kind_name(ADMIT_KIND_VMNETCFG), "VirtualMachineNetworkConfig");
	CU_ASSERT_STRING_EQUAL(admit_kind_name(ADMIT_KIND_VM), "VirtualMachine");
	CU_ASSERT_EQUAL(admit_op_parse("DELETE", &op), 0);
	CU_ASSERT_EQUAL(op, ADMIT_OP_DELETE);
	CU_ASSERT_EQUAL(admit_op_parse("CONNECT", &op), 0);
	CU_ASSERT_EQUAL(op, ADMIT_OP_CONNECT);
	CU_ASSERT_EQUAL(admit_op_parse("delete", &op), -EINVAL);
	CU_ASSERT_EQUAL(admit_op_parse(NULL, &op), -EINVAL);
	CU_ASSERT_STRING_EQUAL(admit_op_name(ADMIT_OP_UPDATE), "UPDATE");
	admit_result_clear(NULL);
}

/* A message stays one line whatever the object holds; no view and no opts are fine. */
static void
test_one_line_no_view(void)
{
	json_t *obj = load_json(POOL_NET("a\\nb", "'cidr':'192.168.0.0/24'"));
	struct admit_request rq = {.phase = ADMIT_VALIDATE,
	    .kind = ADMIT_KIND_IPPOOL,
	    .op = ADMIT_OP_CREATE,
	    .ns = "default",
	    .name = "x\ny",
	    .object = obj};
	struct admit_result res;

	CU_ASSERT_PTR_NOT_NULL_FATAL(obj);
	admit_review(NULL, NULL, &rq, &res);
	CU_ASSERT_FALSE(res.allowed);
	CU_ASSERT_PTR_NULL(strchr(res.message, '\n'));
	CU_ASSERT_PTR_NOT_NULL(strstr(res.message, "IPPool default/x y because"));
	admit_result_clear(&res);
	/* CONNECT and an object that is no JSON object */
	rq.op = ADMIT_OP_CONNECT;
	admit_review(NULL, NULL, &rq, &res);
	CU_ASSERT_TRUE(res.allowed);
	rq.op = ADMIT_OP_CREATE;
	rq.object = json_object_get(obj, "metadata") ? json_string("x") : NULL;
	admit_review(NULL, NULL, &rq, &res);
	CU_ASSERT_FALSE(res.allowed);
	CU_ASSERT_EQUAL(res.code, 400);
	json_decref((json_t *)rq.object);
	json_decref(obj);
}

/*
 * Robustness: every member of every case's objects replaced in turn by values of other types
 * and by odd addresses; each review must answer (allowed, or refused with a message and a
 * code) and a mutation must be a list of "add" operations. Under ASan and valgrind this is
 * also the memory check of the error paths.
 */
static const char *const odd_values[] = {"null", "7", "-1", "true", "\"\"", "\"::1\"",
    "\"1.2.3.4\"", "\"300.1.2.3\"", "\"10.0.0.0/8\"", "[]", "[7]", "{}", "{\"a\":[null]}"};

static size_t n_reviews;

static void
check_answer(const struct admit_result *res)
{
	size_t i;
	json_t *op;

	n_reviews++;
	if (!res->allowed) {
		CU_ASSERT(res->message[0] != '\0');
		CU_ASSERT(res->code == 400 || res->code == 403 || res->code == 500);
		CU_ASSERT_PTR_NULL(strchr(res->message, '\n'));
	}
	if (res->patch) {
		CU_ASSERT(json_is_array(res->patch));
		json_array_foreach(res->patch, i, op)
		    CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(op, "op")), "add");
	}
}

static void
review_all_ways(const struct tcase *t, struct fake *f, json_t *obj, json_t *old)
{
	struct admit_result res;

	for (int phase = ADMIT_MUTATE; phase <= ADMIT_VALIDATE; phase++) {
		review(t, f, (enum admit_phase)phase, obj, old, &res);
		check_answer(&res);
		admit_result_clear(&res);
	}
}

/* Replace each member under v (inside obj or old) in turn, review, put it back. */
static void
perturb(const struct tcase *t, struct fake *f, json_t *obj, json_t *old, json_t *v)
{
	const char *key;
	json_t *child, *tmp;
	size_t i;

	if (json_is_object(v)) {
		void *iter;

		for (iter = json_object_iter(v); iter; iter = json_object_iter_next(v, iter)) {
			key = json_object_iter_key(iter);
			child = json_incref(json_object_iter_value(iter));
			for (i = 0; i < ELEMENTSOF(odd_values); i++) {
				json_object_iter_set_new(
				    v, iter, json_loads(odd_values[i], JSON_DECODE_ANY, NULL));
				review_all_ways(t, f, obj, old);
			}
			json_object_iter_set_new(v, iter, child);
			perturb(t, f, obj, old, json_object_get(v, key));
		}
	} else if (json_is_array(v)) {
		for (size_t j = 0; j < json_array_size(v); j++) {
			child = json_incref(json_array_get(v, j));
			for (i = 0; i < ELEMENTSOF(odd_values); i++) {
				tmp = json_loads(odd_values[i], JSON_DECODE_ANY, NULL);
				json_array_set_new(v, j, tmp);
				review_all_ways(t, f, obj, old);
			}
			json_array_set_new(v, j, child);
			perturb(t, f, obj, old, child);
		}
	}
}

static void
test_robust(void)
{
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		const struct tcase *t = &cases[i];
		json_t *obj = t->obj ? load_json(t->obj) : NULL;
		json_t *old = t->old ? load_json(t->old) : NULL;
		struct fake f;

		fake_build(&f, t->world);
		if (obj)
			perturb(t, &f, obj, old, obj);
		if (old)
			perturb(t, &f, obj, old, old);
		json_decref(obj);
		json_decref(old);
		fake_free(&f);
	}
	printf("(%zu reviews) ", n_reviews);
}

static const struct test_case admit_tests[] = {
    {"table", test_table},
    {"robust", test_robust},
    {"parse_ipv4", test_parse_ipv4},
    {"names", test_names},
    {"one line, no view", test_one_line_no_view},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "admit", .tests = admit_tests},
    {.name = NULL},
};
