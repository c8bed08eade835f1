/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scale run (the controller bar in docs/benchmarks.md: binding 10 000 NICs in one pool against a
 * local API server). As a unit test it binds 300 NICs; `make bench-controller` sets
 * VMDHCP_CONTROLLER_SCALE=10000. N VirtualMachineNetworkConfigs (or, with
 * VMDHCP_CONTROLLER_SCALE_VMS=1, N KubeVirt VirtualMachines: the whole pipeline) exist before the
 * controller starts; the run ends when every one is Allocated in the API and the IPPool status
 * lists N bindings. It asserts the outcome (N distinct addresses, pool status complete) and prints
 * the time taken and the RSS; the time itself is a measurement, not an assertion.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "controller/ctrl-internal.h"
#include "controller/vmplan.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "tests/helpers/apiserver.h"
#include "tests/helpers/proc.h"
#include "tests/runner.h"

#define NS "default"

struct scale {
	struct event_base *base;
	size_t next; /* next VMNetCfg to create */
	struct kube_client *client;
	struct ctrl *ctrl;
	unsigned created, failed, allocated;
	bool done;
	size_t want;
	bool from_vms; /* create VirtualMachines (the whole pipeline) instead of VMNetCfgs */
};

static void created_cb(void *userdata, const struct kube_result *res);

/* One create in flight: retried when it fails (a loaded machine, valgrind: a request can
 * time out), counted once. */
struct create_req {
	struct scale *s;
	size_t i;
	unsigned attempt;
};
#define CREATE_ATTEMPTS 5

static void
create_one(struct scale *s, size_t i, unsigned attempt)
{
	char name[32], mac[MAC_STRLEN];
	struct create_req *rq = malloc(sizeof(*rq));
	json_t *obj;
	int r;

	snprintf(name, sizeof(name), "vm-%05zu", i);
	snprintf(mac, sizeof(mac), "02:01:00:%02zx:%02zx:%02zx", (i >> 16) & 0xff, (i >> 8) & 0xff,
	    i & 0xff);
	if (s->from_vms)
		obj = json_pack("{s:s, s:s, s:{s:s, s:s},"
				" s:{s:{s:{s:{s:{s:[{s:s, s:{}, s:s}]}}, s:[{s:s, s:{s:s}}]}}}}",
		    "apiVersion", "kubevirt.io/v1", "kind", "VirtualMachine", "metadata", "name",
		    name, "namespace", NS, "spec", "template", "spec", "domain", "devices",
		    "interfaces", "name", "nic-1", "bridge", "macAddress", mac, "networks", "name",
		    "nic-1", "multus", "networkName", NS "/big");
	else /* as the VM reconciler creates them: with the VMNetCfg finalizer */
		obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:[s]}, s:{s:s, s:[{s:s, s:s}]}}",
		    "apiVersion", CRD_API_VERSION, "kind", VMNETCFG_KIND, "metadata", "name", name,
		    "namespace", NS, "finalizers", CTRL_FINALIZER_VMNETCFG, "spec", "vmName", name,
		    VMNETCFG_FIELD_NICS, "networkName", NS "/big", "macAddress", mac);
	r = -ENOMEM;
	if (rq != NULL && obj != NULL) {
		*rq = (struct create_req){s, i, attempt};
		r = kube_create(s->client, s->from_vms ? &ctrl_res_vms : &ctrl_res_vmnetcfgs, NS,
		    obj, created_cb, rq, NULL);
	}
	json_decref(obj);
	if (r < 0) {
		free(rq);
		s->failed++;
		if (s->created + s->failed == s->want)
			s->done = true;
	}
}

/* Create VMNetCfg (or VM) number s->next (one NIC); the callback creates the next one. */
static void
create_next(struct scale *s)
{
	size_t i = s->next++;

	if (i < s->want)
		create_one(s, i, 1);
}

static void
created_cb(void *userdata, const struct kube_result *res)
{
	struct create_req *rq = userdata;
	struct scale *s = rq->s;

	/* -EEXIST: an earlier attempt was stored but its answer was lost */
	if (res->error == 0 || (res->error == -EEXIST && rq->attempt > 1))
		s->created++;
	else if (rq->attempt < CREATE_ATTEMPTS) {
		fprintf(stderr, "scale: create %zu failed (%s), attempt %u: again\n", rq->i,
		    strerror(-res->error), rq->attempt);
		create_one(s, rq->i, rq->attempt + 1);
		free(rq);
		return;
	} else
		s->failed++;
	free(rq);
	if (s->created + s->failed == s->want)
		s->done = true;
	create_next(s);
}

static int
count_allocated(void *userdata, const char *key, const void *item)
{
	struct scale *s = userdata;
	const struct cfg_item *it = item;

	if (it->cfg != NULL && it->cfg->status.n_nics == 1 &&
	    it->cfg->status.nics[0].state == VMNETCFG_STATE_ALLOCATED)
		s->allocated++;
	return 0;
}

static void
check_cb(evutil_socket_t fd, short what, void *arg)
{
	struct scale *s = arg;
	struct pool_rt *rt;

	s->allocated = 0;
	kube_store_foreach(kube_informer_store(s->ctrl->inf_cfg), count_allocated, s);
	rt = ctrl_pool_rt(s->ctrl, NS "/big");
	if (s->allocated == s->want && rt != NULL && rt->np != NULL) {
		const struct pool_item *p =
		    kube_store_get(kube_informer_store(s->ctrl->inf_pool), NS "/big");

		if (p != NULL && p->pool != NULL && p->pool->status.used == (long long)s->want)
			s->done = true;
	}
}

static void
test_scale(void)
{
	const char *env = getenv("VMDHCP_CONTROLLER_SCALE");
	struct test_apiserver *api = NULL;
	struct kube_config *cfg = NULL;
	struct scale s = {0};
	struct ctrl_opts o = {.namespace = "vmdhcp", .agent_image = "agent:v1"};
	struct event *tick;
	struct timeval tv = {.tv_sec = 0, .tv_usec = 100000};
	char err[256], body[512];
	uint64_t t0, t1;
	long code = 0;

	/*
	 * As a test: a few hundred NICs, every one bound exactly once. As a benchmark,
	 * `make bench-controller` sets VMDHCP_CONTROLLER_SCALE=10000.
	 */
	s.want = env != NULL ? strtoul(env, NULL, 10) : 300;
	s.from_vms = getenv("VMDHCP_CONTROLLER_SCALE_VMS") != NULL;
	if (s.want == 0 || s.want > 60000) {
		CU_FAIL("VMDHCP_CONTROLLER_SCALE must be 1..60000");
		return;
	}
	log_init("test-controller-scale", LOG_LEVEL_WARN);
	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&api, NULL), 0);
	s.base = event_base_new();
	CU_ASSERT_EQUAL_FATAL(kube_config_from_kubeconfig(
				  test_apiserver_kubeconfig(api), NULL, &cfg, err, sizeof(err)),
	    0);
	CU_ASSERT_EQUAL_FATAL(kube_client_new(s.base, cfg, &s.client), 0);

	snprintf(body, sizeof(body),
	    "{\"apiVersion\":\"k8s.cni.cncf.io/v1\",\"kind\":\"NetworkAttachmentDefinition\","
	    "\"metadata\":{\"name\":\"big\",\"namespace\":\"" NS
	    "\"},\"spec\":{\"config\":\"{}\"}}");
	test_apiserver_request(api, "POST",
	    "/apis/k8s.cni.cncf.io/v1/namespaces/" NS "/network-attachment-definitions", NULL, body,
	    &code, NULL);
	CU_ASSERT_EQUAL(code, 201);
	snprintf(body, sizeof(body),
	    "{\"apiVersion\":\"" CRD_API_VERSION "\",\"kind\":\"IPPool\",\"metadata\":{\"name\":"
	    "\"big\",\"namespace\":\"" NS "\"},\"spec\":{\"networkName\":\"" NS "/big\","
	    "\"ipv4Config\":{\"cidr\":\"10.1.0.0/16\",\"serverIP\":\"10.1.0.2\",\"router\":"
	    "\"10.1.0.1\",\"pool\":{\"start\":\"10.1.0.10\",\"end\":\"10.1.255.250\"}}}}");
	test_apiserver_request(api, "POST", "/apis/" CRD_API_VERSION "/namespaces/" NS "/ippools",
	    NULL, body, &code, NULL);
	CU_ASSERT_EQUAL(code, 201);

	/* N VMNetCfgs, one NIC each, 32 requests in flight */
	for (int i = 0; i < 32; i++)
		create_next(&s);
	t0 = clock_now_usec();
	kube_run_until(s.base, &s.done, 600000);
	CU_ASSERT_EQUAL_FATAL(s.created, s.want);
	printf("\nscale: %zu %s created in %.2f s; RSS before the controller %ld KiB\n", s.want,
	    s.from_vms ? "VMs" : "VMNetCfgs", (double)(clock_now_usec() - t0) / 1e6,
	    test_proc_status_kib(0, "VmRSS:"));

	/* the controller starts on a populated API; time until everything is bound */
	s.done = false;
	t0 = clock_now_usec();
	CU_ASSERT_EQUAL_FATAL(ctrl_new(s.base, s.client, NULL, &o, &s.ctrl), 0);
	ctrl_lead(s.ctrl);
	tick = event_new(s.base, -1, EV_PERSIST, check_cb, &s);
	event_add(tick, &tv);
	kube_run_until(s.base, &s.done, 300000);
	t1 = clock_now_usec();
	event_free(tick);

	CU_ASSERT_TRUE(s.done);
	CU_ASSERT_EQUAL(s.allocated, s.want);
	{
		struct pool_rt *rt = ctrl_pool_rt(s.ctrl, NS "/big");
		struct ipam_counts counts = {0};

		CU_ASSERT_PTR_NOT_NULL_FATAL(rt);
		CU_ASSERT_PTR_NOT_NULL_FATAL(rt->np);
		netpool_counts(rt->np, &counts);
		/* N distinct addresses: the IPAM holds N used, one per MAC */
		CU_ASSERT_EQUAL(counts.used, s.want);
		CU_ASSERT_EQUAL(netpool_size(rt->np), s.want);
		long rss_peak = test_proc_status_kib(0, "VmRSS:");

		malloc_trim(0);
		printf("\nscale: RSS %ld KiB at the end, %ld KiB after malloc_trim\n", rss_peak,
		    test_proc_status_kib(0, "VmRSS:"));
		printf("\nscale: %zu NICs bound in one pool in %.2f s (%.0f NICs/s); RSS %ld KiB;"
		       " IPAM %zu bytes\n",
		    s.want, (double)(t1 - t0) / 1e6, (double)s.want * 1e6 / (double)(t1 - t0),
		    test_proc_status_kib(0, "VmRSS:"), ipam_pool_memory(netpool_ipam(rt->np)));
	}
	s.ctrl = ctrl_free(s.ctrl);
	kube_client_free(s.client);
	kube_config_free(cfg);
	event_base_free(s.base);
	test_apiserver_stop(api);
}

static const struct test_case scale_tests[] = {
    {"bind N NICs in one pool", test_scale},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "controller-scale", .tests = scale_tests},
    {.name = NULL},
};
