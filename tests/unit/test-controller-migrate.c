/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Taking over from the Go project, in-process against the test API server:
 *  - --apply-crds (controller/crd-apply.c): the Go project's CRDs (tests/data/upstream/, as its
 *    chart installs them) are replaced by this build's, their labels and annotations kept;
 *  - its bare agent Pod (controller/migrate.c): left alone, and AgentReady False
 *    (UpstreamAgentRunning), while our agent Deployment is not ready; deleted once it is, then
 *    AgentReady True; a Pod of ours with the same labels (owned by a ReplicaSet) is never
 *    touched; a paused pool's Pod goes at once.
 * Waits are bounded by a generous deadline; nothing asserts on speed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>

#include "controller/crd-apply.h"
#include "controller/ctrl-internal.h"
#include "kube/yaml.h"
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
#define NADS "/apis/k8s.cni.cncf.io/v1/namespaces/" NS "/network-attachment-definitions"
#define DEPLOYS "/apis/apps/v1/namespaces/" CTRL_NS "/deployments"
#define PODS "/api/v1/namespaces/" CTRL_NS "/pods"
#define CRDS "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
#define CRD_POOLS CRDS "/ippools.network.harvesterhci.io"

static json_t *
api(struct env *e, const char *method, const char *path, const char *ctype, json_t *body,
    long *code)
{
	return test_env_request(e, method, path, ctype, body, code);
}

static json_t *
get(struct env *e, const char *path)
{
	long code = 0;
	json_t *j = api(e, "GET", path, NULL, NULL, &code);

	if (code != 200) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* Takes obj. */
static long
req(struct env *e, const char *method, const char *path, const char *ctype, json_t *obj)
{
	long code = 0;

	json_decref(api(e, method, path, ctype, obj, &code));
	json_decref(obj);
	return code;
}

/* Runs the loop until pred holds, at most WAIT_MS. */
static bool
wait_for(struct env *e, pred_fn pred, const void *arg)
{
	return test_env_wait(e, pred, arg, WAIT_MS);
}

static bool
path_absent(struct env *e, const void *arg)
{
	json_t *o = get(e, arg);

	json_decref(o);
	return o == NULL;
}

static bool
path_present(struct env *e, const void *arg)
{
	return !path_absent(e, arg);
}

struct cond_want {
	const char *type, *status, *reason; /* reason NULL: any */
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

		if (t && s && strcmp(t, w->type) == 0 && strcmp(s, w->status) == 0 &&
		    (w->reason == NULL || (r != NULL && strcmp(r, w->reason) == 0)))
			ok = true;
	}
	json_decref(o);
	return ok;
}

static bool
env_start(struct env *e, const char *crd_dir)
{
	return test_env_start(e, "test-controller-migrate", LOG_LEVEL_WARN, crd_dir);
}

/* --- --apply-crds ------------------------------------------------------------------------- */

/* The IPPool CRD's v1alpha1 schema has spec.ipv4Config.mtu (ours, not the Go project's). */
static bool
crd_has_mtu(struct env *e)
{
	json_t *crd = get(e, CRD_POOLS);
	json_t *v = json_array_get(kind_get(crd, "spec", "versions", NULL), 0);
	bool ok = kind_get(v, "schema", "openAPIV3Schema", "properties", "spec", "properties",
		      "ipv4Config", "properties", "mtu", NULL) != NULL;

	json_decref(crd);
	return ok;
}

/* POSTs the CRDs of a file of tests/data (the Go project's files start with a header). */
static void
post_crds(struct env *e, const char *file)
{
	struct yaml_error ye;
	char path[512], *text = NULL;
	json_t **docs = NULL;
	size_t len = 0;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "%s/%s", test_data_dir(), file);
	f = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(getdelim(&text, &len, '\0', f) > 0, true);
	fclose(f);
	n = yaml_parse_documents(text, strlen(text), &docs, NULL, &ye);
	CU_ASSERT_EQUAL(n, 1);
	for (int i = 0; i < n; i++)
		CU_ASSERT_EQUAL(req(e, "POST", CRDS, NULL, docs[i]), 201);
	free(docs);
	free(text);
}

static void
test_apply_crds(void)
{
	struct env e;
	char err[256] = "";
	json_t *crd;

	if (!env_start(&e, NULL))
		goto out;
	post_crds(&e, "upstream/network.harvesterhci.io_ippools.yaml");
	post_crds(&e, "upstream/network.harvesterhci.io_virtualmachinenetworkconfigs.yaml");
	CU_ASSERT_FALSE(crd_has_mtu(&e)); /* the Go project's */
	/* a label and an annotation someone else put there stay */
	CU_ASSERT_EQUAL(req(&e, "PATCH", CRD_POOLS, "application/merge-patch+json",
			    json_pack("{s:{s:{s:s}, s:{s:s}}}", "metadata", "labels", "keep", "me",
				"annotations", "controller-gen.kubebuilder.io/version", "v0.14.0")),
	    200);
	CU_ASSERT_EQUAL(ctrl_apply_crds(e.base, e.client, err, sizeof(err)), 0);
	if (err[0] != '\0')
		fprintf(stderr, "ctrl_apply_crds: %s\n", err);
	CU_ASSERT_TRUE(crd_has_mtu(&e));
	crd = get(&e, CRD_POOLS);
	CU_ASSERT_STRING_EQUAL(kind_get_str(crd, "metadata", "labels", "keep", NULL), "me");
	CU_ASSERT_PTR_NOT_NULL(kind_get_str(
	    crd, "metadata", "annotations", "controller-gen.kubebuilder.io/version", NULL));
	json_decref(crd);
	/* again: nothing to change, still fine */
	CU_ASSERT_EQUAL(ctrl_apply_crds(e.base, e.client, err, sizeof(err)), 0);
	/* absent: refused with a clear error (the chart's crds/ creates them) */
	CU_ASSERT_EQUAL(req(&e, "DELETE", CRD_POOLS, NULL, NULL), 200);
	CU_ASSERT_TRUE(wait_for(&e, path_absent, CRD_POOLS));
	CU_ASSERT_EQUAL(ctrl_apply_crds(e.base, e.client, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "ippools.network.harvesterhci.io not found"));
out:
	test_env_stop(&e);
}

/* --- the Go project's agent Pod ---------------------------------------------------------- */

/* A Pod with the Go project's agent labels for default/net-1; owner: a ReplicaSet or none. */
static json_t *
agent_pod(const char *name, bool owned)
{
	json_t *p = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}}, s:{s:[{s:s, s:s}]}}",
	    "apiVersion", "v1", "kind", "Pod", "metadata", "name", name, "namespace", CTRL_NS,
	    "labels", "network.harvesterhci.io/vm-dhcp-controller", "agent",
	    "network.harvesterhci.io/ippool-namespace", NS, "network.harvesterhci.io/ippool-name",
	    "net-1", "spec", "containers", "name", "agent", "image",
	    "rancher/harvester-vm-dhcp-agent");

	if (owned)
		json_object_set_new(json_object_get(p, "metadata"), "ownerReferences",
		    json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", "apps/v1", "kind",
			"ReplicaSet", "name", "default-net-1-agent-5d9c", "uid",
			"00000000-0000-0000-0000-000000000001", "controller", 1));
	return p;
}

static bool
world(struct env *e)
{
	struct ctrl_opts o = {
	    .namespace = CTRL_NS,
	    .agent_image = "registry.example/vm-dhcp-agent:v1",
	    .requeue_usec = 200000,
	    .upstream_agent_ns = CTRL_NS,
	};

	if (!env_start(e, "../../crds"))
		return false;
	CU_ASSERT_EQUAL(
	    req(e, "POST", NADS, NULL,
		json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "k8s.cni.cncf.io/v1",
		    "kind", "NetworkAttachmentDefinition", "metadata", "name", "net-1", "namespace",
		    NS, "spec", "config", "{}")),
	    201);
	CU_ASSERT_EQUAL(
	    req(e, "POST", POOLS, NULL,
		json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:{s:s, s:s, s:{s:s, s:s}}}}",
		    "apiVersion", CRD_API_VERSION, "kind", IPPOOL_KIND, "metadata", "name", "net-1",
		    "namespace", NS, "spec", "networkName", "default/net-1", "ipv4Config", "cidr",
		    "10.0.0.0/24", "serverIP", "10.0.0.2", "pool", "start", "10.0.0.10", "end",
		    "10.0.0.20")),
	    201);
	CU_ASSERT_EQUAL(req(e, "POST", PODS, NULL, agent_pod("default-net-1-agent", false)), 201);
	CU_ASSERT_EQUAL(
	    req(e, "POST", PODS, NULL, agent_pod("default-net-1-agent-5d9c-x2", true)), 201);
	if (ctrl_new(e->base, e->client, NULL, &o, &e->ctrl) < 0) {
		CU_FAIL("controller did not start");
		return false;
	}
	ctrl_lead(e->ctrl);
	if (!wait_for(e, test_env_ctrl_ready, NULL)) {
		CU_FAIL("controller not ready");
		return false;
	}
	return true;
}

static void
test_upstream_agent_removed_once_ours_ready(void)
{
	struct env e;

	if (!world(&e))
		goto out;
	CU_ASSERT_TRUE(wait_for(&e, path_present, DEPLOYS "/default-net-1-agent"));
	CU_ASSERT_TRUE(wait_for(&e, pool_cond_is,
	    &(struct cond_want){IPPOOL_COND_AGENT_READY, "False", "UpstreamAgentRunning"}));
	CU_ASSERT_TRUE(wait_for(&e, test_env_no_writes_in_flight, NULL));
	/* ours not ready: the Go project's Pod keeps serving */
	CU_ASSERT_TRUE(path_present(&e, PODS "/default-net-1-agent"));

	/* ours ready: the Go project's Pod goes, AgentReady True; our own Pod stays */
	CU_ASSERT_EQUAL(
	    req(&e, "PATCH", DEPLOYS "/default-net-1-agent/status", "application/merge-patch+json",
		json_pack("{s:{s:i, s:i, s:i}}", "status", "observedGeneration", 1, "readyReplicas",
		    1, "availableReplicas", 1)),
	    200);
	CU_ASSERT_TRUE(wait_for(&e, path_absent, PODS "/default-net-1-agent"));
	CU_ASSERT_TRUE(
	    wait_for(&e, pool_cond_is, &(struct cond_want){IPPOOL_COND_AGENT_READY, "True", NULL}));
	CU_ASSERT_TRUE(path_present(&e, PODS "/default-net-1-agent-5d9c-x2"));

	/* a Pod of the Go project for a paused pool goes at once */
	CU_ASSERT_EQUAL(req(&e, "PATCH", POOLS "/net-1", "application/merge-patch+json",
			    json_pack("{s:{s:b}}", "spec", "paused", 1)),
	    200);
	CU_ASSERT_TRUE(wait_for(&e, path_absent, DEPLOYS "/default-net-1-agent"));
	CU_ASSERT_EQUAL(req(&e, "POST", PODS, NULL, agent_pod("default-net-1-agent", false)), 201);
	CU_ASSERT_TRUE(wait_for(&e, path_absent, PODS "/default-net-1-agent"));
	CU_ASSERT_TRUE(path_present(&e, PODS "/default-net-1-agent-5d9c-x2"));
out:
	test_env_stop(&e);
}

static const struct test_case migrate_tests[] = {
    {"--apply-crds over the Go project's CRDs", test_apply_crds},
    {"the Go project's agent Pod removed once ours is ready",
	test_upstream_agent_removed_once_ours_ready},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "controller-migrate", .tests = migrate_tests},
    {.name = NULL},
};
