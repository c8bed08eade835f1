/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission warnings of statically configured NICs and foreign DHCP networks:
 * controller/admit-vm.c (the VM annotation network.harvesterhci.io/dhcp-static-nics) and
 * controller/admit-nad-route.c (an IPPool on a NAD whose network.harvesterhci.io/route says
 * mode auto). Both only warn: every request here is allowed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/admit-internal.h"
#include "controller/admit.h"
#include "controller/foreign-kinds.h"
#include "controller/vmplan.h"
#include "crds/ippool.h"
#include "tests/runner.h"

#define MAC1 "11:22:33:44:55:66"
#define ROUTE "network.harvesterhci.io/route"
#define STATICS "network.harvesterhci.io/dhcp-static-nics"

/* The world: NAD default/test-net naming pool default/test-pool, that pool; the NAD's
 * route annotation (NULL: none). */
struct fake {
	const char *route;
	struct ippool *pool;
};

static int
fake_nad(void *ud, const char *ns, const char *name, const char **pool_ns, const char **pool_name)
{
	(void)ud;
	if (strcmp(ns, "default") != 0 || strcmp(name, "test-net") != 0)
		return -ENOENT;
	*pool_ns = "default";
	*pool_name = "test-pool";
	return 0;
}

static int
fake_nad_route(void *ud, const char *ns, const char *name, const char **route)
{
	struct fake *f = ud;

	if (strcmp(ns, "default") != 0 || strcmp(name, "test-net") != 0)
		return -ENOENT;
	*route = f->route;
	return 0;
}

static const struct ippool *
fake_pool(void *ud, const char *ns, const char *name)
{
	struct fake *f = ud;

	return strcmp(ns, "default") == 0 && strcmp(name, "test-pool") == 0 ? f->pool : NULL;
}

/* Single quotes stand for double quotes. */
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
	if (j == NULL)
		fprintf(stderr, "fixture: %s: %s\n", err.text, s);
	free(s);
	CU_ASSERT_PTR_NOT_NULL_FATAL(j);
	return j;
}

#define POOL_WITH(extra)                                                                           \
	"{'apiVersion':'network.harvesterhci.io/v1alpha1','kind':'IPPool',"                        \
	"'metadata':{'namespace':'default','name':'test-pool'},'spec':{'networkName':'default/"    \
	"test-net','ipv4Config':{'cidr':'192.168.0.0/24','serverIP':'192.168.0.2','router':'192."  \
	"168.0.1','pool':{'start':'192.168.0.100','end':'192.168.0.200'}" extra "}}}"
#define POOL_JSON POOL_WITH("")

/* A VM default/vm-1: nic-1 (MAC1) and nic-2 on Multus test-net, default on the pod network. */
#define VM(ann)                                                                                    \
	"{'apiVersion':'kubevirt.io/v1','kind':'VirtualMachine',"                                  \
	"'metadata':{'namespace':'default','name':'vm-1','uid':'u1','annotations':{" ann "}},"     \
	"'spec':{'template':{'spec':{'networks':[{'name':'default','pod':{}},"                     \
	"{'name':'nic-1','multus':{'networkName':'test-net'}},"                                    \
	"{'name':'nic-2','multus':{'networkName':'test-net'}}],"                                   \
	"'domain':{'devices':{'interfaces':[{'name':'default'},"                                   \
	"{'name':'nic-1','macAddress':'" MAC1 "'},{'name':'nic-2'}]}}}}}}"

/* Reviews (validate) obj (and old: UPDATE) of kind against f; res to be cleared. */
static void
review(struct fake *f, enum admit_kind kind, const char *obj, const char *old,
    struct admit_result *res)
{
	const struct admit_view view = {
	    .userdata = f,
	    .nad = fake_nad,
	    .pool = fake_pool,
	    .nad_route = fake_nad_route,
	};
	const struct admit_opts opts = {.immutable = true};
	json_t *o = load_json(obj), *oo = old ? load_json(old) : NULL;
	const struct admit_request rq = {
	    .phase = ADMIT_VALIDATE,
	    .kind = kind,
	    .op = old ? ADMIT_OP_UPDATE : ADMIT_OP_CREATE,
	    .ns = "default",
	    .name = kind == ADMIT_KIND_IPPOOL ? "test-pool" : "vm-1",
	    .object = o,
	    .old_object = oo,
	};

	admit_review(&view, &opts, &rq, res);
	if (!res->allowed)
		fprintf(stderr, "refused: %s\n", res->message);
	json_decref(o);
	json_decref(oo);
}

static size_t
count_warnings(const struct admit_result *res, const char *part)
{
	size_t n = 0;

	for (size_t i = 0; i < res->n_warnings; i++)
		n += strstr(res->warnings[i], part) != NULL;
	return n;
}

static void
test_vm_unknown_names(void)
{
	struct fake f = {0};
	struct admit_result res;

	/* names that are NICs (the pod network's too), "*", whitespace: no warning */
	review(&f, ADMIT_KIND_VM, VM("'" STATICS "':' nic-1 ,default, *'"), NULL, &res);
	CU_ASSERT_TRUE(res.allowed);
	CU_ASSERT_EQUAL(res.n_warnings, 0);
	admit_result_clear(&res);

	/* unknown names: allowed, one warning naming them in order, each once */
	review(&f, ADMIT_KIND_VM, VM("'" STATICS "':'eth0, nic-1,eth1,eth0'"), NULL, &res);
	CU_ASSERT_TRUE(res.allowed);
	CU_ASSERT_EQUAL(res.n_warnings, 1);
	CU_ASSERT_EQUAL(count_warnings(&res,
			    "annotation " STATICS " names no NIC of the VM: eth0, eth1 (ignored)"),
	    1);
	admit_result_clear(&res);

	/* UPDATE with the same unknown names: said already */
	review(&f, ADMIT_KIND_VM, VM("'" STATICS "':'eth0,eth1', 'x':'y'"),
	    VM("'" STATICS "':'eth1, eth0 ,eth1'"), &res);
	CU_ASSERT_TRUE(res.allowed);
	CU_ASSERT_EQUAL(res.n_warnings, 0);
	admit_result_clear(&res);

	/* UPDATE adding one: warned again, with all of them */
	review(
	    &f, ADMIT_KIND_VM, VM("'" STATICS "':'eth0,eth2'"), VM("'" STATICS "':'eth0'"), &res);
	CU_ASSERT_TRUE(res.allowed);
	CU_ASSERT_EQUAL(count_warnings(&res, "names no NIC of the VM: eth0, eth2"), 1);
	admit_result_clear(&res);

	/* no annotation, or an empty one: nothing to say */
	review(&f, ADMIT_KIND_VM, VM("'" STATICS "':''"), NULL, &res);
	CU_ASSERT_TRUE(res.allowed);
	CU_ASSERT_EQUAL(res.n_warnings, 0);
	admit_result_clear(&res);
}

static void
test_vm_static_ip_listed(void)
{
	struct fake f = {0};
	struct admit_result res;
	struct crd_error err;
	json_t *pj = load_json(POOL_JSON);

	CU_ASSERT_EQUAL_FATAL(ippool_decode(pj, &f.pool, &err), 0);
	json_decref(pj);
	/* a static-ip annotation on a listed NIC: checked as always, and said to be unused */
	review(&f, ADMIT_KIND_VM,
	    VM("'" STATICS "':'nic-1', 'static-ip.harvesterhci.io/nic-1':'192.168.0.150'"), NULL,
	    &res);
	CU_ASSERT_TRUE(res.allowed);
	CU_ASSERT_EQUAL(res.n_warnings, 1);
	CU_ASSERT_EQUAL(count_warnings(&res, "nic nic-1 is listed in annotation " STATICS
					     ": it gets no DHCP binding, so its address "
					     "192.168.0.150 is not reserved"),
	    1);
	admit_result_clear(&res);
	/* "*" lists it too */
	review(&f, ADMIT_KIND_VM,
	    VM("'" STATICS "':'*', 'static-ip.harvesterhci.io/nic-1':'192.168.0.150'"), NULL, &res);
	CU_ASSERT_EQUAL(count_warnings(&res, "nic nic-1 is listed"), 1);
	admit_result_clear(&res);
	/* a NIC not listed: no warning */
	review(&f, ADMIT_KIND_VM,
	    VM("'" STATICS "':'nic-2', 'static-ip.harvesterhci.io/nic-1':'192.168.0.150'"), NULL,
	    &res);
	CU_ASSERT_TRUE(res.allowed);
	CU_ASSERT_EQUAL(res.n_warnings, 0);
	admit_result_clear(&res);
	/* the static-ip annotation unchanged on UPDATE: said already */
	review(&f, ADMIT_KIND_VM,
	    VM("'" STATICS "':'nic-1', 'static-ip.harvesterhci.io/nic-1':'192.168.0.150'"),
	    VM("'" STATICS "':'nic-1', 'static-ip.harvesterhci.io/nic-1':'192.168.0.150'"), &res);
	CU_ASSERT_EQUAL(res.n_warnings, 0);
	admit_result_clear(&res);
	/* a refused static-ip annotation stays refused */
	review(&f, ADMIT_KIND_VM,
	    VM("'" STATICS "':'nic-1', 'static-ip.harvesterhci.io/nic-1':'10.9.9.9'"), NULL, &res);
	CU_ASSERT_FALSE(res.allowed);
	admit_result_clear(&res);
	ippool_free(f.pool);
}

static void
test_route_parse(void)
{
	struct admit_nad_route rt;

	CU_ASSERT_EQUAL(
	    admit_nad_route_parse("{\"mode\":\"auto\",\"serverIPAddr\":\"\",\"cidr\":\"\"}", &rt),
	    0);
	CU_ASSERT_TRUE(rt.auto_mode);
	CU_ASSERT_STRING_EQUAL(rt.server, "");
	CU_ASSERT_EQUAL(
	    admit_nad_route_parse(
		"{\"mode\":\"auto\",\"serverIPAddr\":\"10.0.0.1\",\"connectivity\":\"true\"}", &rt),
	    0);
	CU_ASSERT_TRUE(rt.auto_mode);
	CU_ASSERT_STRING_EQUAL(rt.server, "10.0.0.1");
	CU_ASSERT_EQUAL(
	    admit_nad_route_parse(
		"{\"mode\":\"manual\",\"cidr\":\"10.0.0.0/24\",\"gateway\":\"10.0.0.1\"}", &rt),
	    0);
	CU_ASSERT_FALSE(rt.auto_mode);
	CU_ASSERT_EQUAL(admit_nad_route_parse("{}", &rt), 0); /* no mode: not auto */
	CU_ASSERT_FALSE(rt.auto_mode);
	CU_ASSERT_EQUAL(admit_nad_route_parse("{\"mode\":\"AUTO\"}", &rt), 0);
	CU_ASSERT_FALSE(rt.auto_mode); /* Harvester refuses other spellings */
	CU_ASSERT_EQUAL(admit_nad_route_parse("{\"mode\":7,\"serverIPAddr\":[]}", &rt), 0);
	CU_ASSERT_FALSE(rt.auto_mode);
	CU_ASSERT_EQUAL(admit_nad_route_parse("not json", &rt), -EINVAL);
	CU_ASSERT_EQUAL(admit_nad_route_parse("[\"auto\"]", &rt), -EINVAL);
	CU_ASSERT_EQUAL(admit_nad_route_parse(NULL, &rt), -EINVAL);
	CU_ASSERT_FALSE(rt.auto_mode);
}

/* The route annotation the NAD carries → whether the IPPool's create is warned about. */
static const struct {
	const char *route;
	bool warned;
	const char *part;
} route_cases[] = {
    {"{\"mode\":\"auto\",\"serverIPAddr\":\"\",\"cidr\":\"\",\"gateway\":\"\"}", true,
	"NetworkAttachmentDefinition default/test-net: route mode auto, so Harvester learns its "
	"route from a DHCP server already on the network; with this pool's agent two DHCP "
	"servers would answer the VMs"},
    {"{\"mode\":\"auto\",\"serverIPAddr\":\"192.168.0.9\"}", true,
	"already on the network (serverIPAddr 192.168.0.9);"},
    /* the server Harvester learns from is this pool's serverIP: its own agent */
    {"{\"mode\":\"auto\",\"serverIPAddr\":\"192.168.0.2\"}", false, NULL},
    {"{\"mode\":\"manual\",\"cidr\":\"192.168.0.0/24\",\"gateway\":\"192.168.0.1\"}", false, NULL},
    {"garbage", false, NULL},
    {NULL, false, NULL},
};

static void
test_ippool_route_warning(void)
{
	for (size_t i = 0; i < sizeof(route_cases) / sizeof(route_cases[0]); i++) {
		struct fake f = {.route = route_cases[i].route};
		struct admit_result res;

		review(&f, ADMIT_KIND_IPPOOL, POOL_JSON, NULL, &res);
		CU_ASSERT_TRUE(res.allowed);
		CU_ASSERT_EQUAL(count_warnings(&res, "route mode auto"), route_cases[i].warned);
		if (route_cases[i].part != NULL && count_warnings(&res, route_cases[i].part) != 1) {
			fprintf(
			    stderr, "case %zu: no warning with \"%s\"\n", i, route_cases[i].part);
			CU_FAIL("warning text");
		}
		admit_result_clear(&res);
	}
}

/* Warned on UPDATE too (a spec change; an unchanged spec is not looked at), and never
 * without a nad_route callback. */
static void
test_ippool_route_update_and_no_view(void)
{
	struct fake f = {.route = "{\"mode\":\"auto\"}"};
	const struct admit_view bare = {.userdata = &f, .nad = fake_nad, .pool = fake_pool};
	const struct admit_opts opts = {.immutable = true};
	json_t *o = load_json(POOL_JSON);
	const struct admit_request rq = {.phase = ADMIT_VALIDATE,
	    .kind = ADMIT_KIND_IPPOOL,
	    .op = ADMIT_OP_CREATE,
	    .ns = "default",
	    .name = "test-pool",
	    .object = o};
	struct admit_result res;

	review(&f, ADMIT_KIND_IPPOOL, POOL_WITH(",'leaseTime':600"), POOL_JSON, &res);
	CU_ASSERT_TRUE(res.allowed);
	CU_ASSERT_EQUAL(count_warnings(&res, "route mode auto"), 1);
	admit_result_clear(&res);
	review(&f, ADMIT_KIND_IPPOOL, POOL_JSON, POOL_JSON, &res);
	CU_ASSERT_TRUE(res.allowed);
	CU_ASSERT_EQUAL(res.n_warnings, 0);
	admit_result_clear(&res);
	admit_review(&bare, &opts, &rq, &res);
	CU_ASSERT_TRUE(res.allowed);
	CU_ASSERT_EQUAL(res.n_warnings, 0);
	admit_result_clear(&res);
	json_decref(o);
}

static const struct test_case vm_tests[] = {
    {"unknown names warned", test_vm_unknown_names},
    {"static-ip on a listed NIC warned", test_vm_static_ip_listed},
    {NULL, NULL},
};

static const struct test_case route_tests[] = {
    {"route annotation parse", test_route_parse},
    {"IPPool on an auto network warned", test_ippool_route_warning},
    {"update, view without nad_route", test_ippool_route_update_and_no_view},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "vm static NICs", .tests = vm_tests},
    {.name = "NAD route", .tests = route_tests},
    {.name = NULL},
};
