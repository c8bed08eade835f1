/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/admit-ipv6.c: the IPv6 admission rules (IPPool spec.ipv6Config, a VMNetCfg NIC's
 * ipv6Address), as a table of cases against a fake view of the cluster built from small JSON
 * fixtures (the same shape as tests/unit/test-controller-admit.c's, which holds upstream's
 * IPv4 cases). Single quotes in the fixtures stand for double quotes.
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

#define V4                                                                                         \
	"'ipv4Config':{'cidr':'192.168.0.0/"                                                       \
	"24','serverIP':'192.168.0.1','pool':{'start':'192.168.0.10','end':'192.168.0.200'}}"
/* The IPPool default/net-1 on network default/net-1, with ipv6Config {v6} and a status. */
#define POOL6_ST(v6, status)                                                                       \
	"{'apiVersion':'network.harvesterhci.io/v1alpha1','kind':'IPPool',"                        \
	"'metadata':{'namespace':'default','name':'net-1'},"                                       \
	"'spec':{'networkName':'default/net-1'," V4 ",'ipv6Config':{" v6 "}}" status "}"
#define POOL6(v6) POOL6_ST(v6, "")
#define POOL4_ST(status)                                                                           \
	"{'apiVersion':'network.harvesterhci.io/v1alpha1','kind':'IPPool',"                        \
	"'metadata':{'namespace':'default','name':'net-1'},"                                       \
	"'spec':{'networkName':'default/net-1'," V4 "}" status "}"
#define ALLOC6(ip, val)                                                                            \
	",'status':{'ipv6':{'allocated':{'" ip "':'" val "'},'used':1,'available':1}}"
#define C64 "'cidr':'2001:db8::/64'"
#define RANGE6(s, e) "'pool':{'start':'" s "','end':'" e "'}"
#define FULL6 C64 ",'serverIP':'2001:db8::2'," RANGE6("2001:db8::10", "2001:db8::ffff")

/* VMNetCfgs default/test-vmnetcfg on network default/test-net. */
#define CFG(nics)                                                                                  \
	"{'apiVersion':'network.harvesterhci.io/v1alpha1','kind':'VirtualMachineNetworkConfig',"   \
	"'metadata':{'namespace':'default','name':'test-vmnetcfg'},"                               \
	"'spec':{'vmName':'test-vm','networkConfigs':[" nics "]}}"
#define NIC6(ip6, mac)                                                                             \
	"{'networkName':'default/test-net','macAddress':'" mac "','ipv6Address':'" ip6 "'}"
#define NIC46(ip, ip6, mac)                                                                        \
	"{'networkName':'default/test-net','macAddress':'" mac "','ipAddress':'" ip                \
	"','ipv6Address':'" ip6 "'}"

#define NAD(name, labels)                                                                          \
	"{'metadata':{'namespace':'default','name':'" name "','labels':{" labels "}}}"
#define LABELS(ns, name)                                                                           \
	"'network.harvesterhci.io/ippool-namespace':'" ns                                          \
	"','network.harvesterhci.io/ippool-name':'" name "'"
/* The IPPool default/test-pool on default/test-net. */
#define TEST_POOL6(extra, v6, status)                                                              \
	"{'metadata':{'namespace':'default','name':'test-pool'},"                                  \
	"'spec':{'networkName':'default/test-net'" extra "," V4 v6 "}" status "}"
#define TP_V6                                                                                      \
	",'ipv6Config':{'cidr':'2001:db8::/64','serverIP':'2001:db8::2','pool':{"                  \
	"'start':'2001:db8::10','end':'2001:db8::ffff','exclude':['2001:db8::11']}}"
/* A VMNetCfg holding addr6 for mac on network (its status). */
#define HOLDER(name, network, mac, addr6)                                                          \
	"{'metadata':{'namespace':'default','name':'" name "'},'spec':{'vmName':'" name "',"       \
	"'networkConfigs':[{'networkName':'" network "','macAddress':'" mac "'}]},"                \
	"'status':{'networkConfigs':[{'networkName':'" network "','macAddress':'" mac "',"         \
	"'allocatedIPv6Address':'" addr6 "','state':'Allocated'}]}}"

struct world {
	const char *nads[4];
	const char *pools[4];
	const char *cfgs[4];
};

static const struct world w_net1 = {.nads = {NAD("net-1", "")}};
static const struct world w_net1_held = {
    .nads = {NAD("net-1", "")}, .cfgs = {HOLDER("vm-a", "default/net-1", MAC1, "2001:db8::100")}};
static const struct world w_ok = {.nads = {NAD("test-net", LABELS("default", "test-pool"))},
    .pools = {TEST_POOL6("", TP_V6, "")}};
static const struct world w_no_v6 = {
    .nads = {NAD("test-net", LABELS("default", "test-pool"))}, .pools = {TEST_POOL6("", "", "")}};
static const struct world w_paused = {.nads = {NAD("test-net", LABELS("default", "test-pool"))},
    .pools = {TEST_POOL6(",'paused':true", TP_V6, "")}};
static const struct world w_st_mac2 = {.nads = {NAD("test-net", LABELS("default", "test-pool"))},
    .pools = {TEST_POOL6("", TP_V6, ALLOC6("2001:db8::111", MAC2))},
    .cfgs = {HOLDER("other-vm", "default/test-net", MAC2, "2001:db8::111")}};
static const struct world w_st_excl = {.nads = {NAD("test-net", LABELS("default", "test-pool"))},
    .pools = {TEST_POOL6("", TP_V6, ALLOC6("2001:db8::111", "EXCLUDED"))}};
/* the VMNetCfg's status binds it, the pool's status does not yet */
static const struct world w_cfg_mac2 = {.nads = {NAD("test-net", LABELS("default", "test-pool"))},
    .pools = {TEST_POOL6("", TP_V6, "")},
    .cfgs = {HOLDER("other-vm", "default/test-net", MAC2, "2001:db8::111")}};

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
	bool mutable_; /* opts.immutable off */
	bool refused;
	const char *msg;     /* the whole message */
	const char *substr;  /* ... or a part of it */
	int code;	     /* when refused: 403 unless said */
	const char *patched; /* MUT/CHAIN: "serverIP start end" of ipv6Config, "-": no patch */
	const char *warn;    /* a part of a warning */
};

#define CP "cannot create IPPool default/net-1 because "
#define UP "cannot update IPPool default/net-1 because "
#define CC "cannot create VirtualMachineNetworkConfig default/test-vmnetcfg because "
#define UC "cannot update VirtualMachineNetworkConfig default/test-vmnetcfg because "
#define IPL ADMIT_KIND_IPPOOL
#define VMC ADMIT_KIND_VMNETCFG
#define CR ADMIT_OP_CREATE
#define UPD ADMIT_OP_UPDATE
#define LAST64 "2001:db8::ffff:ffff:ffff:ffff"
#define BOUND ALLOC6("2001:db8::100", MAC1)

static const struct tcase cases[] = {
    /* --- mutate: defaults as upstream's ensureServerIP/ensurePoolRange for IPv4 --- */
    {"cidr only: server and range from the CIDR", MUT, IPL, CR, &w_net1, POOL6(C64),
	.patched = "2001:db8::1 2001:db8::1 " LAST64},
    {"server skips excluded addresses", MUT, IPL, CR, &w_net1,
	POOL6(C64 ",'pool':{'exclude':['2001:db8::1','2001:db8::2']}"),
	.patched = "2001:db8::3 2001:db8::1 " LAST64},
    {"only the missing end", MUT, IPL, CR, &w_net1,
	POOL6(C64 ",'serverIP':'2001:db8::2','pool':{'start':'2001:db8::100'}"),
	.patched = "2001:db8::2 2001:db8::100 " LAST64},
    {"nothing missing: no patch", MUT, IPL, CR, &w_net1, POOL6(FULL6), .patched = "-"},
    {"no ipv6Config: no patch", MUT, IPL, CR, &w_net1, POOL4_ST(""), .patched = "-"},
    {"/127: the one address after the network", MUT, IPL, CR, &w_net1,
	POOL6("'cidr':'2001:db8::/127'"), .patched = "2001:db8::1 2001:db8::1 2001:db8::1"},
    {"/128: no address for the server", MUT, IPL, CR, &w_net1, POOL6("'cidr':'2001:db8::5/128'"),
	.refused = true, .msg = CP "fail to assign ipv6 address for dhcp server"},
    {"/128 with its server: no range", MUT, IPL, CR, &w_net1,
	POOL6("'cidr':'2001:db8::5/128','serverIP':'2001:db8::5'"), .refused = true,
	.msg = CP "invalid ipv6 pool range"},
    {"start after the default end", MUT, IPL, CR, &w_net1,
	POOL6(C64 ",'pool':{'start':'2001:db9::1'}"), .refused = true,
	.msg = CP "invalid ipv6 pool range"},
    {"a cidr that does not parse: left to validation", CHAIN, IPL, CR, &w_net1,
	POOL6("'cidr':'2001:db8::'"), .refused = true, .code = 400,
	.msg = CP "spec.ipv6Config.cidr: \"2001:db8::\" is not an IPv6 CIDR (address/8..128)"},
    /* --- validate: CREATE --- */
    {"a complete pool", CHAIN, IPL, CR, &w_net1, POOL6(FULL6), .patched = "-"},
    {"defaults then validation", CHAIN, IPL, CR, &w_net1, POOL6(C64),
	.patched = "2001:db8::1 2001:db8::1 " LAST64},
    {"server outside", VAL, IPL, CR, &w_net1,
	POOL6(C64 ",'serverIP':'2001:db9::2'," RANGE6("2001:db8::10", "2001:db8::ffff")),
	.refused = true, .msg = CP "server ipv6 2001:db9::2 is not within subnet 2001:db8::/64"},
    {"start outside", VAL, IPL, CR, &w_net1,
	POOL6(C64 ",'serverIP':'2001:db8::2'," RANGE6("2001:db7::10", "2001:db8::ffff")),
	.refused = true, .msg = CP "start ipv6 2001:db7::10 is not within subnet 2001:db8::/64"},
    {"end outside", VAL, IPL, CR, &w_net1,
	POOL6(C64 ",'serverIP':'2001:db8::2'," RANGE6("2001:db8::10", "2001:db8:1::")),
	.refused = true, .msg = CP "end ipv6 2001:db8:1:: is not within subnet 2001:db8::/64"},
    {"server: the subnet-router anycast address", VAL, IPL, CR, &w_net1,
	POOL6(C64 ",'serverIP':'2001:db8::'," RANGE6("2001:db8::10", "2001:db8::ffff")),
	.refused = true,
	.msg = CP "server ipv6 2001:db8:: is the subnet-router anycast address of 2001:db8::/64"},
    {"server multicast", VAL, IPL, CR, &w_net1,
	POOL6("'cidr':'ff05::/16','serverIP':'ff05::2'," RANGE6("ff05::10", "ff05::20")),
	.refused = true, .msg = CP "server ipv6 ff05::2 is a multicast address"},
    {"server excluded", VAL, IPL, CR, &w_net1,
	POOL6(C64 ",'serverIP':'2001:db8::2','pool':{'start':'2001:db8::1','end':'2001:db8::ff',"
		  "'exclude':['2001:db8::2']}"),
	.refused = true, .msg = CP "server ipv6 2001:db8::2 is in pool.exclude"},
    {"end before start: the codec's", VAL, IPL, CR, &w_net1,
	POOL6(C64 ",'serverIP':'2001:db8::2'," RANGE6("2001:db8::10", "2001:db8::f")),
	.refused = true, .code = 400,
	.msg = CP "spec.ipv6Config.pool.end: 2001:db8::f is before pool.start 2001:db8::10"},
    {"preferred above valid: the codec's", VAL, IPL, CR, &w_net1,
	POOL6(FULL6 ",'preferredLifetime':7200,'validLifetime':3600"), .refused = true, .code = 400,
	.msg = CP "spec.ipv6Config.preferredLifetime: 7200 is above validLifetime 3600"},
    {"unknown field: the codec's", VAL, IPL, CR, &w_net1, POOL6(FULL6 ",'leaseTime':60"),
	.refused = true, .code = 400, .msg = CP "spec.ipv6Config.leaseTime: unknown field"},
    {"a bad address: the codec's", VAL, IPL, CR, &w_net1,
	POOL6(C64 ",'serverIP':'2001:db8::g'," RANGE6("2001:db8::10", "2001:db8::ffff")),
	.refused = true, .code = 400,
	.msg = CP "spec.ipv6Config.serverIP: \"2001:db8::g\" is not an IPv6 address"},
    {"warn: host bits", VAL, IPL, CR, &w_net1,
	POOL6("'cidr':'2001:db8::5/64','serverIP':'2001:db8::2'," RANGE6(
	    "2001:db8::10", "2001:db8::ffff")),
	.warn = "ipv6Config.cidr 2001:db8::5/64 is not the network's own form: the network is "
		"2001:db8::/64"},
    {"warn: no allocatable address", VAL, IPL, CR, &w_net1,
	POOL6(C64 ",'serverIP':'2001:db8::2','pool':{'start':'2001:db8::1','end':'2001:db8::3',"
		  "'exclude':['2001:db8::1','2001:db8::3','2001:db8::1']}"),
	.warn = "ipv6 pool range 2001:db8::1-2001:db8::3 holds no allocatable address"},
    {"warn: short valid lifetime", VAL, IPL, CR, &w_net1, POOL6(FULL6 ",'validLifetime':30"),
	.warn = "validLifetime 30 s is under 60 s"},
    {"warn: the agent as default router", VAL, IPL, CR, &w_net1,
	POOL6(FULL6 ",'routerAdvertisement':{'enabled':true,'routerLifetime':1800}"),
	.warn =
	    "routerAdvertisement.routerLifetime 1800 s makes the agent the VMs' default router"},
    /* --- validate: UPDATE --- */
    {"cidr immutable", VAL, IPL, UPD, &w_net1,
	POOL6("'cidr':'2001:db8:1::/64','serverIP':'2001:db8:1::2'," RANGE6(
	    "2001:db8:1::10", "2001:db8:1::ffff")),
	POOL6(FULL6), .refused = true, .msg = UP "cidr is immutable"},
    {"serverIP immutable", VAL, IPL, UPD, &w_net1,
	POOL6(C64 ",'serverIP':'2001:db8::3'," RANGE6("2001:db8::10", "2001:db8::ffff")),
	POOL6(FULL6), .refused = true, .msg = UP "serverIP is immutable"},
    {"serverIP rewritten in another form: still a change", VAL, IPL, UPD, &w_net1,
	POOL6(C64 ",'serverIP':'2001:DB8::2'," RANGE6("2001:db8::10", "2001:db8::ffff")),
	POOL6(FULL6), .refused = true, .msg = UP "serverIP is immutable"},
    {"serverIP changed, rules off (before 1.25 without us)", VAL, IPL, UPD, &w_net1,
	POOL6(C64 ",'serverIP':'2001:db8::3'," RANGE6("2001:db8::10", "2001:db8::ffff")),
	POOL6(FULL6), .mutable_ = true},
    {"range shrinks around no binding", VAL, IPL, UPD, &w_net1,
	POOL6_ST(C64 ",'serverIP':'2001:db8::2'," RANGE6("2001:db8::100", "2001:db8::fff"), BOUND),
	POOL6_ST(FULL6, BOUND), .refused = false},
    {"range strands a binding", VAL, IPL, UPD, &w_net1_held,
	POOL6_ST(C64 ",'serverIP':'2001:db8::2'," RANGE6("2001:db8::200", "2001:db8::ffff"), BOUND),
	POOL6_ST(FULL6, BOUND), .refused = true,
	.msg = UP "ipv6 address 2001:db8::100 bound to mac " MAC1
		  " (VirtualMachineNetworkConfig default/vm-a) would be stranded: outside the new "
		  "pool range 2001:db8::200-2001:db8::ffff"},
    {"exclude strands a binding", VAL, IPL, UPD, &w_net1,
	POOL6_ST(C64 ",'serverIP':'2001:db8::2','pool':{'start':'2001:db8::10','end':"
		     "'2001:db8::ffff','exclude':['2001:db8:0::100']}",
	    BOUND),
	POOL6_ST(FULL6, BOUND), .refused = true,
	.msg = UP "ipv6 address 2001:db8::100 bound to mac " MAC1
		  " would be stranded: pool.exclude covers it"},
    {"ipv6Config removed with a binding in the status", VAL, IPL, UPD, &w_net1_held,
	POOL4_ST(BOUND), POOL6_ST(FULL6, BOUND), .refused = true,
	.msg =
	    UP "ipv6Config cannot be removed while ipv6 address 2001:db8::100 is bound to mac " MAC1
	       " (VirtualMachineNetworkConfig default/vm-a)"},
    {"ipv6Config removed with a binding in a VMNetCfg only", VAL, IPL, UPD, &w_net1_held,
	POOL4_ST(""), POOL6(FULL6), .refused = true,
	.msg =
	    UP "ipv6Config cannot be removed while ipv6 address 2001:db8::100 is bound to mac " MAC1
	       " (VirtualMachineNetworkConfig default/vm-a)"},
    {"ipv6Config removed, nothing bound", VAL, IPL, UPD, &w_net1,
	POOL4_ST(ALLOC6("2001:db8::2", "RESERVED")),
	POOL6_ST(FULL6, ALLOC6("2001:db8::2", "RESERVED")), .refused = false},
    {"ipv6Config added on a server a stale status holds", VAL, IPL, UPD, &w_net1,
	POOL6_ST(FULL6, ALLOC6("2001:db8::2", MAC1)), POOL4_ST(ALLOC6("2001:db8::2", MAC1)),
	.refused = true, .msg = UP "server ipv6 2001:db8::2 is already occupied"},
    {"metadata-only update of a pool with a bad ipv6Config", VAL, IPL, UPD, &w_net1,
	POOL6("'cidr':'x'"), POOL6("'cidr':'x'"), .refused = false},
    /* --- VMNetCfg ipv6Address --- */
    {"free address in range", VAL, VMC, CR, &w_ok, CFG(NIC6("2001:db8::20", MAC1)),
	.refused = false},
    {"both families", VAL, VMC, CR, &w_ok, CFG(NIC46("192.168.0.20", "2001:db8::20", MAC1)),
	.refused = false},
    {"not IPv6", VAL, VMC, CR, &w_ok, CFG(NIC6("192.168.0.20", MAC1)), .refused = true,
	.msg = CC "ipv6 address \"192.168.0.20\" is not an IPv6 address"},
    {"outside the subnet", VAL, VMC, CR, &w_ok, CFG(NIC6("2001:db9::20", MAC1)), .refused = true,
	.msg = CC "ipv6 address 2001:db9::20 is not within subnet 2001:db8::/64"},
    {"outside the range", VAL, VMC, CR, &w_ok, CFG(NIC6("2001:db8::1:0", MAC1)), .refused = true,
	.msg =
	    CC "ipv6 address 2001:db8::1:0 is not within pool range 2001:db8::10-2001:db8::ffff"},
    {"excluded in the spec", VAL, VMC, CR, &w_ok, CFG(NIC6("2001:db8::11", MAC1)), .refused = true,
	.msg = CC "ipv6 address 2001:db8::11 is not allocatable"},
    {"EXCLUDED in the status", VAL, VMC, CR, &w_st_excl, CFG(NIC6("2001:db8::111", MAC1)),
	.refused = true, .msg = CC "ipv6 address 2001:db8::111 is not allocatable"},
    {"held by another MAC", VAL, VMC, CR, &w_st_mac2, CFG(NIC6("2001:DB8::111", MAC1)),
	.refused = true,
	.msg = CC "ipv6 address 2001:db8::111 is already allocated to mac " MAC2
		  " (VirtualMachineNetworkConfig default/other-vm)"},
    {"held by its own MAC", VAL, VMC, CR, &w_st_mac2, CFG(NIC6("2001:db8::111", MAC2)),
	.refused = false},
    {"held by another MAC in a VMNetCfg, not yet in the pool's status", VAL, VMC, CR, &w_cfg_mac2,
	CFG(NIC6("2001:db8::111", MAC1)), .refused = true,
	.msg = CC "ipv6 address 2001:db8::111 is already allocated to mac " MAC2
		  " (VirtualMachineNetworkConfig default/other-vm)"},
    {"twice on one network, two forms", VAL, VMC, CR, &w_ok,
	CFG(NIC6("2001:db8::20", MAC1) "," NIC6("2001:DB8:0::20", MAC2)), .refused = true,
	.msg = CC "duplicate desired ipv6 2001:db8::20 on network default/test-net"},
    {"the pool has no ipv6Config", VAL, VMC, CR, &w_no_v6, CFG(NIC6("2001:db8::20", MAC1)),
	.refused = true,
	.msg = CC "IPPool default/test-pool has no ipv6Config: ipv6 address 2001:db8::20 cannot be "
		  "served"},
    {"paused pool: a warning", VAL, VMC, CR, &w_paused, CFG(NIC6("2001:db8::20", MAC1)),
	.warn = "IPPool default/test-pool is paused: ipv6 address 2001:db8::20 is not served"},
    {"UPDATE: the same address in another form is not checked again", VAL, VMC, UPD, &w_st_mac2,
	CFG(NIC6("2001:DB8::111", MAC1)), CFG(NIC6("2001:db8::111", MAC1)), .refused = false},
    {"UPDATE: a changed address is", VAL, VMC, UPD, &w_st_mac2, CFG(NIC6("2001:db8::111", MAC1)),
	CFG(NIC6("2001:db8::20", MAC1)), .refused = true,
	.substr = "ipv6 address 2001:db8::111 is already allocated to mac " MAC2},
    {"UPDATE: an unchanged one still counts for duplicates", VAL, VMC, UPD, &w_ok,
	CFG(NIC6("2001:db8::20", MAC1) "," NIC6("2001:db8::20", MAC2)),
	CFG(NIC6("2001:db8::20", MAC1)), .refused = true,
	.msg = UC "duplicate desired ipv6 2001:db8::20 on network default/test-net"},
    {"UPDATE: an IPv4 change leaves the IPv6 address alone", VAL, VMC, UPD, &w_st_mac2,
	CFG(NIC46("192.168.0.21", "2001:db8::111", MAC1)),
	CFG(NIC46("192.168.0.20", "2001:db8::111", MAC1)), .refused = false},
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
		*last++ = '\0';
		for (seg = strtok_r(buf, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
			parent = json_object_get(parent, seg);
			if (!json_is_object(parent))
				return -1;
		}
		json_object_set(parent, last, json_object_get(op, "value"));
	}
	return 0;
}

static void
check_patched(const struct tcase *t, const json_t *obj, const json_t *patch)
{
	const json_t *v6 = json_object_get(json_object_get(obj, "spec"), "ipv6Config");
	const json_t *pool = json_object_get(v6, "pool");
	char got[256];

	if (strcmp(t->patched, "-") == 0) {
		if (patch)
			fprintf(stderr, "%s: unexpected patch\n", t->name);
		CU_ASSERT_PTR_NULL(patch);
		return;
	}
	snprintf(got, sizeof(got), "%s %s %s", json_string_value(json_object_get(v6, "serverIP")),
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
	    .name = t->kind == ADMIT_KIND_IPPOOL ? "net-1" : "test-vmnetcfg",
	    .object = obj,
	    .old_object = old,
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
	json_t *obj = load_json(t->obj), *old = t->old ? load_json(t->old) : NULL;
	struct admit_result res, mres = {0};
	struct fake f;
	bool ok;

	CU_ASSERT_FATAL(obj != NULL);
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
	     (!t->warn || has_warning(&res, t->warn)) &&
	     (t->warn || t->refused || res.n_warnings == 0);
	if (!ok) {
		fprintf(stderr, "\n  case \"%s\": %s (%d) \"%s\"", t->name,
		    res.allowed ? "allowed" : "refused", res.code, res.message);
		for (size_t i = 0; i < res.n_warnings; i++)
			fprintf(stderr, " [warning: %s]", res.warnings[i]);
		fprintf(stderr, "\n");
	}
	CU_ASSERT(ok);
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

static const struct test_case admit6_tests[] = {
    {"table", test_table},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "admit6", .tests = admit6_tests},
    {.name = NULL},
};
