/* SPDX-License-Identifier: Apache-2.0 */
/* controller/placement.c: the agent Deployment manifest and the re-placement decision. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "controller/kinds.h"
#include "controller/placement.h"
#include "tests/runner.h"

static struct placement_input
input(void)
{
	return (struct placement_input){
		.pool_ns = "default",
		.pool_name = "net-1",
		.network_name = "default/net-1",
		.cluster_network = "mgmt",
		.namespace = "harvester-system",
		.image = "rancher/harvester-vm-dhcp-agent:v1",
		.service_account = "vm-dhcp-agent",
	};
}

static void
test_names(void)
{
	char out[PLACEMENT_NAME_MAX];
	char name[80];

	CU_ASSERT_EQUAL(placement_agent_name("default", "net-1", out), 0);
	CU_ASSERT_STRING_EQUAL(out, "default-net-1-agent");

	/* past 63 characters: 51-char prefix + 5 hex digits of SHA-256 (Go project scheme) */
	memset(name, 'a', 60);
	name[60] = '\0';
	CU_ASSERT_EQUAL(placement_agent_name("default", name, out), 0);
	CU_ASSERT_STRING_EQUAL(out, "default-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-0e597-agent");
	CU_ASSERT_EQUAL(strlen(out), 63);

	/* a cut landing on '.' keeps 50 characters and 6 hex digits */
	memset(name, 'b', 42);
	name[42] = '.';
	memset(name + 43, 'c', 20);
	name[63] = '\0';
	CU_ASSERT_EQUAL(placement_agent_name("default", name, out), 0);
	CU_ASSERT_STRING_EQUAL(out, "default-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-7f9461-agent");
	CU_ASSERT_EQUAL(strlen(out), 63);

	/* the longest name that needs no hash: 57 characters before "-agent" */
	memset(name, 'x', 49);
	name[49] = '\0';
	CU_ASSERT_EQUAL(placement_agent_name("default", name, out), 0);
	CU_ASSERT_EQUAL(strlen(out), 63);
	CU_ASSERT_EQUAL(strncmp(out + 8, name, 49), 0);

	CU_ASSERT_EQUAL(placement_agent_name("", "x", out), -EINVAL);
	CU_ASSERT_EQUAL(placement_agent_name("x", NULL, out), -EINVAL);
}

static json_t *
build(const struct placement_input *in)
{
	json_t *dep = NULL;

	CU_ASSERT_EQUAL(placement_build(in, &dep), 0);
	return dep;
}

static void
test_manifest(void)
{
	struct placement_input in = input();
	json_t *dep = build(&in), *tmpl, *pod, *c, *caps, *expr, *tol, *multus;
	const char *args[] = { "--ippool-ref", "default/net-1", "--interface", "eth1", "--listen",
		":8080" };

	CU_ASSERT_PTR_NOT_NULL_FATAL(dep);
	CU_ASSERT_STRING_EQUAL(kind_get_str(dep, "kind", NULL), "Deployment");
	CU_ASSERT_STRING_EQUAL(kind_name(dep), "default-net-1-agent");
	CU_ASSERT_STRING_EQUAL(kind_namespace(dep), "harvester-system");
	CU_ASSERT_STRING_EQUAL(kind_label(dep, PLACEMENT_LABEL_APP), "agent");
	CU_ASSERT_STRING_EQUAL(kind_label(dep, PLACEMENT_LABEL_POOL_NS), "default");
	CU_ASSERT_STRING_EQUAL(kind_label(dep, PLACEMENT_LABEL_POOL_NAME), "net-1");
	CU_ASSERT_STRING_EQUAL(placement_pool_ref(dep), "default/net-1");
	CU_ASSERT_EQUAL(json_integer_value(kind_get(dep, "spec", "replicas", NULL)), 1);
	CU_ASSERT_STRING_EQUAL(kind_get_str(dep, "spec", "strategy", "type", NULL), "Recreate");
	CU_ASSERT_TRUE(json_equal(kind_get(dep, "spec", "selector", "matchLabels", NULL),
	    kind_get(dep, "metadata", "labels", NULL)));

	tmpl = kind_get(dep, "spec", "template", NULL);
	CU_ASSERT_TRUE(json_equal(kind_get(tmpl, "metadata", "labels", NULL),
	    kind_get(dep, "metadata", "labels", NULL)));
	multus = json_loads(kind_get_str(tmpl, "metadata", "annotations",
				KIND_ANNOT_MULTUS_NETWORKS, NULL),
	    0, NULL);
	CU_ASSERT_EQUAL(json_array_size(multus), 1);
	CU_ASSERT_STRING_EQUAL(kind_get_str(json_array_get(multus, 0), "interface", NULL), "eth1");
	CU_ASSERT_STRING_EQUAL(kind_get_str(json_array_get(multus, 0), "name", NULL), "net-1");
	CU_ASSERT_STRING_EQUAL(kind_get_str(json_array_get(multus, 0), "namespace", NULL),
	    "default");
	json_decref(multus);

	pod = kind_get(tmpl, "spec", NULL);
	CU_ASSERT_STRING_EQUAL(kind_get_str(pod, "serviceAccountName", NULL), "vm-dhcp-agent");
	CU_ASSERT_TRUE(json_is_true(kind_get(pod, "securityContext", "runAsNonRoot", NULL)));
	expr = json_array_get(
	    json_object_get(json_array_get(kind_get(pod, "affinity", "nodeAffinity",
					       "requiredDuringSchedulingIgnoredDuringExecution",
					       "nodeSelectorTerms", NULL),
				0),
		"matchExpressions"),
	    0);
	CU_ASSERT_STRING_EQUAL(kind_get_str(expr, "key", NULL), "network.harvesterhci.io/mgmt");
	CU_ASSERT_STRING_EQUAL(kind_get_str(expr, "operator", NULL), "In");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(json_object_get(expr, "values"),
				   0)),
	    "true");
	tol = kind_get(pod, "tolerations", NULL);
	CU_ASSERT_EQUAL(json_array_size(tol), 2);
	CU_ASSERT_STRING_EQUAL(kind_get_str(json_array_get(tol, 1), "key", NULL),
	    "node.kubernetes.io/unreachable");
	CU_ASSERT(json_integer_value(kind_get(json_array_get(tol, 0), "tolerationSeconds", NULL)) <
	    300);

	c = json_array_get(kind_get(pod, "containers", NULL), 0);
	CU_ASSERT_STRING_EQUAL(kind_get_str(c, "image", NULL), in.image);
	CU_ASSERT_STRING_EQUAL(placement_image(dep), in.image);
	CU_ASSERT_EQUAL_FATAL(json_array_size(json_object_get(c, "args")), 6);
	for (size_t i = 0; i < 6; i++)
		CU_ASSERT_STRING_EQUAL(
		    json_string_value(json_array_get(json_object_get(c, "args"), i)), args[i]);
	caps = kind_get(c, "securityContext", "capabilities", NULL);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(caps, "add")), 2);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(json_object_get(caps, "add"), 0)),
	    "NET_RAW");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(json_object_get(caps, "add"), 1)),
	    "NET_ADMIN");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_array_get(json_object_get(caps, "drop"), 0)),
	    "ALL");
	CU_ASSERT_TRUE(json_is_true(kind_get(c, "securityContext", "runAsNonRoot", NULL)));
	CU_ASSERT_STRING_EQUAL(kind_get_str(c, "resources", "requests", "memory", NULL), "16Mi");
	CU_ASSERT_PTR_NOT_NULL(kind_get(c, "resources", "limits", "memory", NULL));
	CU_ASSERT_STRING_EQUAL(kind_get_str(c, "readinessProbe", "httpGet", "path", NULL),
	    "/readyz");
	CU_ASSERT_STRING_EQUAL(kind_get_str(c, "livenessProbe", "httpGet", "path", NULL),
	    "/healthz");
	CU_ASSERT_EQUAL(json_integer_value(kind_get(c, "livenessProbe", "httpGet", "port", NULL)),
	    8080);
	CU_ASSERT_PTR_NOT_NULL(kind_annotation(dep, PLACEMENT_ANNOT_HASH));
	json_decref(dep);
}

static void
test_plain_multus_and_bare_network(void)
{
	struct placement_input in = input();
	json_t *dep, *multus;

	in.cluster_network = NULL;
	in.network_name = "net-9"; /* bare name: namespace default */
	in.service_account = NULL;
	dep = build(&in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dep);
	CU_ASSERT_PTR_NULL(kind_get(dep, "spec", "template", "spec", "affinity", NULL));
	CU_ASSERT_PTR_NULL(kind_get(dep, "spec", "template", "spec", "serviceAccountName", NULL));
	multus = json_loads(kind_get_str(dep, "spec", "template", "metadata", "annotations",
				KIND_ANNOT_MULTUS_NETWORKS, NULL),
	    0, NULL);
	CU_ASSERT_STRING_EQUAL(kind_get_str(json_array_get(multus, 0), "namespace", NULL),
	    "default");
	CU_ASSERT_STRING_EQUAL(kind_get_str(json_array_get(multus, 0), "name", NULL), "net-9");
	json_decref(multus);
	json_decref(dep);

	in.network_name = "a/b/c";
	CU_ASSERT_EQUAL(placement_build(&in, &dep), -EINVAL);
	CU_ASSERT_PTR_NULL(dep);
	in = input();
	in.image = NULL;
	CU_ASSERT_EQUAL(placement_build(&in, &dep), -EINVAL);
}

static void
test_long_label_values(void)
{
	struct placement_input in = input();
	char name[120];
	json_t *dep;

	memset(name, 'p', 100);
	name[100] = '\0';
	in.pool_name = name;
	dep = build(&in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dep);
	CU_ASSERT(strlen(kind_label(dep, PLACEMENT_LABEL_POOL_NAME)) <= 63);
	CU_ASSERT(strlen(kind_name(dep)) <= 63);
	/* the exact pool reference survives in the annotation and the args */
	CU_ASSERT_EQUAL(strncmp(placement_pool_ref(dep), "default/pppp", 12), 0);
	CU_ASSERT_EQUAL(strlen(placement_pool_ref(dep)), 108);
	json_decref(dep);
}

static void
test_replacement_decision(void)
{
	struct placement_input in = input();
	json_t *want = build(&in), *have, *merged, *want2;

	CU_ASSERT_PTR_NOT_NULL_FATAL(want);
	CU_ASSERT_EQUAL(placement_decide(NULL, want, false), PLACEMENT_CREATE);
	CU_ASSERT_EQUAL(placement_decide(NULL, want, true), PLACEMENT_CREATE);

	/* what the API server returns: ours plus server fields */
	have = json_deep_copy(want);
	json_object_set_new(json_object_get(have, "metadata"), "resourceVersion",
	    json_string("7"));
	json_object_set_new(json_object_get(have, "metadata"), "uid", json_string("u-1"));
	json_object_set_new(have, "status", json_pack("{s:i}", "readyReplicas", 1));
	CU_ASSERT_EQUAL(placement_decide(have, want, false), PLACEMENT_KEEP);

	/* same inputs → same hash (stable) */
	want2 = build(&in);
	CU_ASSERT_STRING_EQUAL(kind_annotation(want2, PLACEMENT_ANNOT_HASH),
	    kind_annotation(want, PLACEMENT_ANNOT_HASH));
	json_decref(want2);

	/* new agent image → re-place, unless held */
	in.image = "rancher/harvester-vm-dhcp-agent:v2";
	want2 = build(&in);
	CU_ASSERT_STRING_NOT_EQUAL(kind_annotation(want2, PLACEMENT_ANNOT_HASH),
	    kind_annotation(want, PLACEMENT_ANNOT_HASH));
	CU_ASSERT_EQUAL(placement_decide(have, want2, false), PLACEMENT_UPDATE);
	CU_ASSERT_EQUAL(placement_decide(have, want2, true), PLACEMENT_KEEP);
	merged = placement_merge(have, want2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(merged);
	CU_ASSERT_STRING_EQUAL(kind_get_str(merged, "metadata", "resourceVersion", NULL), "7");
	CU_ASSERT_STRING_EQUAL(placement_image(merged), "rancher/harvester-vm-dhcp-agent:v2");
	CU_ASSERT_STRING_EQUAL(kind_annotation(merged, PLACEMENT_ANNOT_HASH),
	    kind_annotation(want2, PLACEMENT_ANNOT_HASH));
	/* after the update, the decision is stable */
	CU_ASSERT_EQUAL(placement_decide(merged, want2, false), PLACEMENT_KEEP);
	json_decref(merged);
	json_decref(want2);

	/* the NAD moved to another cluster network → re-place */
	in = input();
	in.cluster_network = "vlan-net";
	want2 = build(&in);
	CU_ASSERT_EQUAL(placement_decide(have, want2, false), PLACEMENT_UPDATE);
	json_decref(want2);
	/* the NAD lost its label (plain Multus) → re-place without affinity */
	in.cluster_network = NULL;
	want2 = build(&in);
	CU_ASSERT_EQUAL(placement_decide(have, want2, false), PLACEMENT_UPDATE);
	json_decref(want2);

	/* an agent being deleted: wait */
	json_object_set_new(json_object_get(have, "metadata"), "deletionTimestamp",
	    json_string("2026-01-01T00:00:00Z"));
	CU_ASSERT_EQUAL(placement_decide(have, want, false), PLACEMENT_WAIT);
	/* a Deployment without our hash (hand-made or older) is re-placed */
	json_object_del(json_object_get(have, "metadata"), "deletionTimestamp");
	json_object_del(kind_get(have, "metadata", "annotations", NULL), PLACEMENT_ANNOT_HASH);
	CU_ASSERT_EQUAL(placement_decide(have, want, false), PLACEMENT_UPDATE);

	json_decref(have);
	json_decref(want);
}

static const struct test_case placement_tests[] = {
	{ "agent names", test_names },
	{ "manifest", test_manifest },
	{ "plain multus, bare network", test_plain_multus_and_bare_network },
	{ "long label values", test_long_label_values },
	{ "re-placement decision", test_replacement_decision },
	{ NULL, NULL },
};

const struct test_suite test_suites[] = {
	{ .name = "placement", .tests = placement_tests },
	{ .name = NULL },
};
