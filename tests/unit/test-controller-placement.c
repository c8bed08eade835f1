/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/placement.c: the agent Deployment manifest (two replicas electing the active one
 * through a Lease by default, or one), the admin's knobs and the re-placement decision.
 *
 * Size: about 950 lines, one file on purpose: one manifest renderer's cases sharing its
 * input fixtures and manifest assertions (arguments, volumes).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "controller/foreign-kinds.h"
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
	CU_ASSERT_STRING_EQUAL(
	    out, "default-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-0e597-agent");
	CU_ASSERT_EQUAL(strlen(out), 63);

	/* a cut landing on '.' keeps 50 characters and 6 hex digits */
	memset(name, 'b', 42);
	name[42] = '.';
	memset(name + 43, 'c', 20);
	name[63] = '\0';
	CU_ASSERT_EQUAL(placement_agent_name("default", name, out), 0);
	CU_ASSERT_STRING_EQUAL(
	    out, "default-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb-7f9461-agent");
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

/* The agent container's args equal want (n strings). */
static void
assert_args(json_t *dep, const char *const *want, size_t n)
{
	json_t *c =
	    json_array_get(kind_get(dep, "spec", "template", "spec", "containers", NULL), 0);
	json_t *args = json_object_get(c, "args");

	CU_ASSERT_EQUAL_FATAL(json_array_size(args), n);
	for (size_t i = 0; i < n; i++) {
		const char *got = json_string_value(json_array_get(args, i));

		CU_ASSERT_PTR_NOT_NULL_FATAL(got);
		if (strcmp(got, want[i]) != 0) {
			fprintf(stderr, "args[%zu]: got \"%s\", want \"%s\"\n", i, got, want[i]);
			CU_FAIL("args");
		}
	}
}

/* The snapshot's emptyDir (16Mi, default medium) mounted at /var/lib/vm-dhcp. */
static void
assert_state_volume(json_t *dep)
{
	json_t *pod = kind_get(dep, "spec", "template", "spec", NULL);
	json_t *c = json_array_get(json_object_get(pod, "containers"), 0);
	json_t *vol = json_array_get(json_object_get(pod, "volumes"), 0);
	json_t *mount = json_array_get(json_object_get(c, "volumeMounts"), 0);

	CU_ASSERT_EQUAL(json_array_size(json_object_get(pod, "volumes")), 1);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(c, "volumeMounts")), 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(kind_get_str(vol, "name", NULL));
	CU_ASSERT_STRING_EQUAL(kind_get_str(vol, "emptyDir", "sizeLimit", NULL), "16Mi");
	CU_ASSERT_PTR_NULL(kind_get(vol, "emptyDir", "medium", NULL));
	CU_ASSERT_EQUAL(json_object_size(vol), 2); /* name, emptyDir: no host path */
	CU_ASSERT_STRING_EQUAL(kind_get_str(mount, "name", NULL), kind_get_str(vol, "name", NULL));
	CU_ASSERT_STRING_EQUAL(kind_get_str(mount, "mountPath", NULL), "/var/lib/vm-dhcp");
	CU_ASSERT_PTR_NULL(kind_get(mount, "readOnly", NULL));
	/* the root file system stays read-only */
	CU_ASSERT_TRUE(
	    json_is_true(kind_get(c, "securityContext", "readOnlyRootFilesystem", NULL)));
}

static void
test_manifest(void)
{
	struct placement_input in = input();
	json_t *dep = build(&in), *tmpl, *pod, *c, *caps, *expr, *tol, *multus, *term;
	/* the default: two replicas electing the active one through the Lease <deployment> */
	const char *const args[] = {"--ippool-ref", "default/net-1", "--interface", "eth1",
	    "--listen", "$(POD_IP):8080", "--snapshot", "/var/lib/vm-dhcp/snapshot",
	    "--leader-elect", "--lease-name", "default-net-1-agent", "--lease-duration", "2",
	    "--renew-deadline", "1.5", "--retry-period", "0.3"};
	const char *add[] = {"NET_RAW", "NET_BIND_SERVICE", "NET_ADMIN"};
	json_t *env, *sc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dep);
	CU_ASSERT_STRING_EQUAL(kind_get_str(dep, "kind", NULL), "Deployment");
	CU_ASSERT_STRING_EQUAL(kind_name(dep), "default-net-1-agent");
	CU_ASSERT_STRING_EQUAL(kind_namespace(dep), "harvester-system");
	CU_ASSERT_STRING_EQUAL(kind_label(dep, PLACEMENT_LABEL_APP), "agent");
	CU_ASSERT_STRING_EQUAL(kind_label(dep, PLACEMENT_LABEL_POOL_NS), "default");
	CU_ASSERT_STRING_EQUAL(kind_label(dep, PLACEMENT_LABEL_POOL_NAME), "net-1");
	CU_ASSERT_STRING_EQUAL(placement_pool_ref(dep), "default/net-1");
	CU_ASSERT_EQUAL(json_integer_value(kind_get(dep, "spec", "replicas", NULL)), 2);
	/* the Lease keeps one active: a standby is ready before an old pod goes */
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(dep, "spec", "strategy", "type", NULL), "RollingUpdate");
	CU_ASSERT_TRUE(json_is_integer(
	    kind_get(dep, "spec", "strategy", "rollingUpdate", "maxUnavailable", NULL)));
	CU_ASSERT_EQUAL(json_integer_value(kind_get(
			    dep, "spec", "strategy", "rollingUpdate", "maxUnavailable", NULL)),
	    0);
	CU_ASSERT_EQUAL(json_integer_value(
			    kind_get(dep, "spec", "strategy", "rollingUpdate", "maxSurge", NULL)),
	    1);
	CU_ASSERT_TRUE(json_equal(kind_get(dep, "spec", "selector", "matchLabels", NULL),
	    kind_get(dep, "metadata", "labels", NULL)));

	tmpl = kind_get(dep, "spec", "template", NULL);
	CU_ASSERT_TRUE(json_equal(
	    kind_get(tmpl, "metadata", "labels", NULL), kind_get(dep, "metadata", "labels", NULL)));
	multus = json_loads(
	    kind_get_str(tmpl, "metadata", "annotations", KIND_ANNOT_MULTUS_NETWORKS, NULL), 0,
	    NULL);
	CU_ASSERT_EQUAL(json_array_size(multus), 1);
	CU_ASSERT_STRING_EQUAL(kind_get_str(json_array_get(multus, 0), "interface", NULL), "eth1");
	CU_ASSERT_STRING_EQUAL(kind_get_str(json_array_get(multus, 0), "name", NULL), "net-1");
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(multus, 0), "namespace", NULL), "default");
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
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_array_get(json_object_get(expr, "values"), 0)), "true");
	/* beside it, in the same affinity: replicas spread over nodes, preferred only */
	CU_ASSERT_EQUAL(json_object_size(kind_get(pod, "affinity", NULL)), 2);
	CU_ASSERT_PTR_NULL(kind_get(pod, "affinity", "podAntiAffinity",
	    "requiredDuringSchedulingIgnoredDuringExecution", NULL));
	CU_ASSERT_EQUAL_FATAL(json_array_size(kind_get(pod, "affinity", "podAntiAffinity",
				  "preferredDuringSchedulingIgnoredDuringExecution", NULL)),
	    1);
	term = json_array_get(kind_get(pod, "affinity", "podAntiAffinity",
				  "preferredDuringSchedulingIgnoredDuringExecution", NULL),
	    0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(term, "weight")), 100);
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(term, "podAffinityTerm", "topologyKey", NULL), "kubernetes.io/hostname");
	CU_ASSERT_TRUE(
	    json_equal(kind_get(term, "podAffinityTerm", "labelSelector", "matchLabels", NULL),
		kind_get(dep, "spec", "selector", "matchLabels", NULL)));
	CU_ASSERT_EQUAL(
	    json_object_size(kind_get(term, "podAffinityTerm", "labelSelector", NULL)), 1);
	tol = kind_get(pod, "tolerations", NULL);
	CU_ASSERT_EQUAL(json_array_size(tol), 2);
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(tol, 1), "key", NULL), "node.kubernetes.io/unreachable");
	CU_ASSERT(
	    json_integer_value(kind_get(json_array_get(tol, 0), "tolerationSeconds", NULL)) < 300);

	c = json_array_get(kind_get(pod, "containers", NULL), 0);
	CU_ASSERT_STRING_EQUAL(kind_get_str(c, "image", NULL), in.image);
	CU_ASSERT_STRING_EQUAL(placement_image(dep), in.image);
	assert_args(dep, args, sizeof(args) / sizeof(args[0]));
	assert_state_volume(dep);
	CU_ASSERT_STRING_EQUAL(kind_get_str(c, "imagePullPolicy", NULL), "IfNotPresent");
	/* least privilege for a non-root agent with file capabilities */
	sc = json_object_get(c, "securityContext");
	caps = json_object_get(sc, "capabilities");
	CU_ASSERT_EQUAL_FATAL(json_array_size(json_object_get(caps, "add")), 3);
	for (size_t i = 0; i < 3; i++)
		CU_ASSERT_STRING_EQUAL(
		    json_string_value(json_array_get(json_object_get(caps, "add"), i)), add[i]);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(caps, "drop")), 1);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_array_get(json_object_get(caps, "drop"), 0)), "ALL");
	CU_ASSERT_TRUE(json_is_true(json_object_get(sc, "runAsNonRoot")));
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(sc, "runAsUser")), 65532);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(sc, "runAsGroup")), 65532);
	CU_ASSERT_TRUE(json_is_true(json_object_get(sc, "readOnlyRootFilesystem")));
	/* false would set no_new_privs: the file capabilities would not apply */
	CU_ASSERT_TRUE(json_is_true(json_object_get(sc, "allowPrivilegeEscalation")));
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(pod, "securityContext", "seccompProfile", "type", NULL), "RuntimeDefault");
	/* $(POD_IP) of --listen comes from the downward API */
	env = json_object_get(c, "env");
	CU_ASSERT_EQUAL_FATAL(json_array_size(env), 3);
	CU_ASSERT_STRING_EQUAL(kind_get_str(json_array_get(env, 2), "name", NULL), "POD_IP");
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(env, 2), "valueFrom", "fieldRef", "fieldPath", NULL),
	    "status.podIP");
	CU_ASSERT_STRING_EQUAL(kind_get_str(c, "resources", "requests", "memory", NULL), "16Mi");
	CU_ASSERT_STRING_EQUAL(kind_get_str(c, "resources", "requests", "cpu", NULL), "10m");
	CU_ASSERT_STRING_EQUAL(kind_get_str(c, "resources", "limits", "memory", NULL), "64Mi");
	CU_ASSERT_PTR_NULL(kind_get(pod, "nodeSelector", NULL));
	CU_ASSERT_PTR_NULL(kind_get(pod, "imagePullSecrets", NULL));
	CU_ASSERT_PTR_NULL(kind_get(pod, "priorityClassName", NULL));
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(c, "readinessProbe", "httpGet", "path", NULL), "/readyz");
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(c, "livenessProbe", "httpGet", "path", NULL), "/healthz");
	CU_ASSERT_EQUAL(
	    json_integer_value(kind_get(c, "livenessProbe", "httpGet", "port", NULL)), 8080);
	CU_ASSERT_PTR_NOT_NULL(kind_annotation(dep, PLACEMENT_ANNOT_HASH));
	json_decref(dep);
}

/*
 * The chart's PodMonitor (charts/vm-dhcp/templates/podmonitor.yaml) selects the agent pods by
 * the label PLACEMENT_LABEL_APP=agent and scrapes their container port named "metrics":
 * both must be on the pod template, the port on the --listen port.
 */
static void
test_metrics_port(void)
{
	struct placement_input in = input();
	json_t *dep = build(&in), *c, *ports, *p;
	char hash[PLACEMENT_HASH_LEN];

	CU_ASSERT_PTR_NOT_NULL_FATAL(dep);
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(dep, "spec", "template", "metadata", "labels", PLACEMENT_LABEL_APP, NULL),
	    PLACEMENT_LABEL_APP_VALUE);
	c = json_array_get(kind_get(dep, "spec", "template", "spec", "containers", NULL), 0);
	ports = json_object_get(c, "ports");
	CU_ASSERT_EQUAL_FATAL(json_array_size(ports), 1);
	p = json_array_get(ports, 0);
	CU_ASSERT_STRING_EQUAL(kind_get_str(p, "name", NULL), "metrics");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(p, "containerPort")), PLACEMENT_PORT);
	CU_ASSERT_STRING_EQUAL(kind_get_str(p, "protocol", NULL), "TCP");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_array_get(json_object_get(c, "args"), 5)), "$(POD_IP):8080");
	json_decref(dep);

	/*
	 * Agents placed by an older controller (manifest 2: the port was named "http") must be
	 * re-placed once, so the PodMonitor finds their port: the inputs hash of the same inputs
	 * differs from what manifest 2 gave (09a7859db14a754e for input()). Likewise manifest 3
	 * (one replica, no election, no snapshot volume: 8e9eb65354f9721d).
	 */
	CU_ASSERT_EQUAL(placement_inputs_hash(&in, hash), 0);
	CU_ASSERT_STRING_NOT_EQUAL(hash, "09a7859db14a754e");
	CU_ASSERT_STRING_NOT_EQUAL(hash, "8e9eb65354f9721d");
}

static void
test_plain_multus_and_bare_network(void)
{
	struct placement_input in = input();
	struct placement_opts one = {.replicas = 1};
	json_t *dep, *multus;

	in.cluster_network = NULL;
	in.network_name = "net-9"; /* bare name: namespace default */
	in.service_account = NULL;
	dep = build(&in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dep);
	/* no node affinity; the replicas' anti-affinity alone */
	CU_ASSERT_PTR_NULL(
	    kind_get(dep, "spec", "template", "spec", "affinity", "nodeAffinity", NULL));
	CU_ASSERT_PTR_NOT_NULL(
	    kind_get(dep, "spec", "template", "spec", "affinity", "podAntiAffinity", NULL));
	CU_ASSERT_PTR_NULL(kind_get(dep, "spec", "template", "spec", "serviceAccountName", NULL));
	multus = json_loads(kind_get_str(dep, "spec", "template", "metadata", "annotations",
				KIND_ANNOT_MULTUS_NETWORKS, NULL),
	    0, NULL);
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(multus, 0), "namespace", NULL), "default");
	CU_ASSERT_STRING_EQUAL(kind_get_str(json_array_get(multus, 0), "name", NULL), "net-9");
	json_decref(multus);
	json_decref(dep);
	/* one replica on plain Multus: no affinity at all */
	in.opts = &one;
	dep = build(&in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dep);
	CU_ASSERT_PTR_NULL(kind_get(dep, "spec", "template", "spec", "affinity", NULL));
	json_decref(dep);
	in.opts = NULL;

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
	json_object_set_new(json_object_get(have, "metadata"), "resourceVersion", json_string("7"));
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

/* Sets one knob, which must be accepted. */
static void
set_ok(struct placement_opts *o, enum placement_opt which, const char *value)
{
	char err[256] = "";
	int r = placement_opts_set(o, which, value, err, sizeof(err));

	if (r != 0)
		fprintf(stderr, "unexpected refusal of %s: %s\n", value, err);
	CU_ASSERT_EQUAL(r, 0);
}

/* The hash of in with one knob changed differs from base, and says UPDATE on have. */
static void
assert_replaces(const struct placement_input *in, json_t *have)
{
	json_t *want = build(in);

	CU_ASSERT_PTR_NOT_NULL_FATAL(want);
	CU_ASSERT_STRING_NOT_EQUAL(kind_annotation(want, PLACEMENT_ANNOT_HASH),
	    kind_annotation(have, PLACEMENT_ANNOT_HASH));
	CU_ASSERT_EQUAL(placement_decide(have, want, false), PLACEMENT_UPDATE);
	CU_ASSERT_EQUAL(placement_decide(have, want, true), PLACEMENT_KEEP);
	json_decref(want);
}

static void
test_knobs_manifest(void)
{
	struct placement_input in = input();
	struct placement_opts o = {0}, copy;
	json_t *dep, *pod, *c, *tol, *multus;

	set_ok(&o, PLACEMENT_OPT_INTERFACE, "br-vms");
	set_ok(&o, PLACEMENT_OPT_PULL_POLICY, "Always");
	set_ok(&o, PLACEMENT_OPT_PULL_SECRET, "regcred");
	set_ok(&o, PLACEMENT_OPT_PULL_SECRET, "mirror.example.com");
	set_ok(&o, PLACEMENT_OPT_RESOURCES,
	    "{\"requests\":{\"cpu\":\"50m\",\"memory\":\"32Mi\",\"ephemeral-storage\":0.1},"
	    "\"limits\":{\"cpu\":1,\"memory\":\"0.125Gi\"}}");
	set_ok(&o, PLACEMENT_OPT_NODE_SELECTOR,
	    "{\"kubernetes.io/os\":\"linux\",\"example.com/dhcp\":\"\"}");
	set_ok(&o, PLACEMENT_OPT_TOLERATIONS,
	    "[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"net\",\"effect\":"
	    "\"NoSchedule\"},{\"operator\":\"Exists\",\"effect\":\"NoExecute\","
	    "\"tolerationSeconds\":10}]");
	set_ok(&o, PLACEMENT_OPT_PRIORITY_CLASS, "system-node-critical");
	/* the controller keeps its own copy */
	CU_ASSERT_EQUAL_FATAL(placement_opts_copy(&copy, &o), 0);
	placement_opts_clear(&o);
	in.opts = &copy;
	dep = build(&in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dep);
	pod = kind_get(dep, "spec", "template", "spec", NULL);
	c = json_array_get(kind_get(pod, "containers", NULL), 0);

	/* --agent-interface: the agent's --interface and the Multus interface name */
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_array_get(json_object_get(c, "args"), 3)), "br-vms");
	multus = json_loads(kind_get_str(dep, "spec", "template", "metadata", "annotations",
				KIND_ANNOT_MULTUS_NETWORKS, NULL),
	    0, NULL);
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(multus, 0), "interface", NULL), "br-vms");
	json_decref(multus);
	CU_ASSERT_STRING_EQUAL(kind_get_str(c, "imagePullPolicy", NULL), "Always");
	CU_ASSERT_EQUAL(json_array_size(kind_get(pod, "imagePullSecrets", NULL)), 2);
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(kind_get(pod, "imagePullSecrets", NULL), 1), "name", NULL),
	    "mirror.example.com");
	/* resources replaced whole: no default left behind */
	CU_ASSERT_STRING_EQUAL(kind_get_str(c, "resources", "requests", "cpu", NULL), "50m");
	CU_ASSERT_STRING_EQUAL(kind_get_str(c, "resources", "limits", "memory", NULL), "0.125Gi");
	/* JSON numbers are written as quantity strings (0.1 stays 100m, not 101m) */
	CU_ASSERT_STRING_EQUAL(kind_get_str(c, "resources", "limits", "cpu", NULL), "1");
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(c, "resources", "requests", "ephemeral-storage", NULL), "0.1");
	/* node selector beside the cluster-network affinity (both apply) */
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(pod, "nodeSelector", "kubernetes.io/os", NULL), "linux");
	CU_ASSERT_STRING_EQUAL(kind_get_str(pod, "nodeSelector", "example.com/dhcp", NULL), "");
	CU_ASSERT_PTR_NOT_NULL(kind_get(pod, "affinity", "nodeAffinity", NULL));
	/* tolerations: ours first, the admin's appended */
	tol = kind_get(pod, "tolerations", NULL);
	CU_ASSERT_EQUAL_FATAL(json_array_size(tol), 4);
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(tol, 0), "key", NULL), "node.kubernetes.io/not-ready");
	CU_ASSERT_STRING_EQUAL(kind_get_str(json_array_get(tol, 2), "key", NULL), "dedicated");
	CU_ASSERT_EQUAL(
	    json_integer_value(kind_get(json_array_get(tol, 3), "tolerationSeconds", NULL)), 10);
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(pod, "priorityClassName", NULL), "system-node-critical");
	json_decref(dep);
	placement_opts_clear(&copy);
	placement_opts_clear(&copy); /* twice: the struct is zeroed */
}

static void
test_knobs_hash(void)
{
	struct placement_input in = input();
	struct placement_opts o = {0};
	json_t *base = build(&in), *dep;

	CU_ASSERT_PTR_NOT_NULL_FATAL(base);
	/* the defaults given explicitly are the defaults: no re-placement */
	set_ok(&o, PLACEMENT_OPT_INTERFACE, "eth1");
	set_ok(&o, PLACEMENT_OPT_PULL_POLICY, "IfNotPresent");
	set_ok(&o, PLACEMENT_OPT_RESOURCES,
	    "{\"limits\":{\"memory\":\"64Mi\"},\"requests\":{\"memory\":\"16Mi\",\"cpu\":\"10m\"}"
	    "}");
	set_ok(&o, PLACEMENT_OPT_NODE_SELECTOR, "{}");
	set_ok(&o, PLACEMENT_OPT_TOLERATIONS, "[]");
	in.opts = &o;
	dep = build(&in);
	CU_ASSERT_STRING_EQUAL(kind_annotation(dep, PLACEMENT_ANNOT_HASH),
	    kind_annotation(base, PLACEMENT_ANNOT_HASH));
	CU_ASSERT_PTR_NULL(kind_get(dep, "spec", "template", "spec", "nodeSelector", NULL));
	CU_ASSERT_EQUAL(
	    json_array_size(kind_get(dep, "spec", "template", "spec", "tolerations", NULL)), 2);
	CU_ASSERT_EQUAL(placement_decide(base, dep, false), PLACEMENT_KEEP);
	json_decref(dep);

	/* each knob re-places the agent (unless held) */
	set_ok(&o, PLACEMENT_OPT_INTERFACE, "eth2");
	assert_replaces(&in, base);
	set_ok(&o, PLACEMENT_OPT_INTERFACE, "eth1");
	set_ok(&o, PLACEMENT_OPT_PULL_POLICY, "Never");
	assert_replaces(&in, base);
	set_ok(&o, PLACEMENT_OPT_PULL_POLICY, "IfNotPresent");
	set_ok(&o, PLACEMENT_OPT_RESOURCES, "{}"); /* explicit: no requests nor limits */
	assert_replaces(&in, base);
	dep = build(&in);
	CU_ASSERT_EQUAL(
	    json_object_size(kind_get(
		json_array_get(kind_get(dep, "spec", "template", "spec", "containers", NULL), 0),
		"resources", NULL)),
	    0);
	json_decref(dep);
	set_ok(&o, PLACEMENT_OPT_RESOURCES, "{\"requests\":{\"cpu\":\"10m\",\"memory\":\"17Mi\"}}");
	assert_replaces(&in, base);
	json_decref(o.resources);
	o.resources = NULL;
	set_ok(&o, PLACEMENT_OPT_NODE_SELECTOR, "{\"zone\":\"a\"}");
	assert_replaces(&in, base);
	set_ok(&o, PLACEMENT_OPT_NODE_SELECTOR, "{}");
	set_ok(&o, PLACEMENT_OPT_TOLERATIONS, "[{\"operator\":\"Exists\"}]");
	assert_replaces(&in, base);
	set_ok(&o, PLACEMENT_OPT_TOLERATIONS, "[]");
	set_ok(&o, PLACEMENT_OPT_PRIORITY_CLASS, "high");
	assert_replaces(&in, base);
	free(o.priority_class);
	o.priority_class = NULL;
	set_ok(&o, PLACEMENT_OPT_PULL_SECRET, "regcred");
	assert_replaces(&in, base);
	placement_opts_clear(&o);
	/* --no-dhcp: the agents' --dry-run, last; switching it re-places them */
	o.no_dhcp = true;
	assert_replaces(&in, base);
	dep = build(&in);
	{
		json_t *args =
		    kind_get(json_array_get(
				 kind_get(dep, "spec", "template", "spec", "containers", NULL), 0),
			"args", NULL);

		CU_ASSERT_STRING_EQUAL(
		    json_string_value(json_array_get(args, json_array_size(args) - 1)) ?: "",
		    "--dry-run");
	}
	json_decref(dep);
	o.no_dhcp = false;
	/* back to the defaults: same hash as at first */
	dep = build(&in);
	CU_ASSERT_STRING_EQUAL(kind_annotation(dep, PLACEMENT_ANNOT_HASH),
	    kind_annotation(base, PLACEMENT_ANNOT_HASH));
	json_decref(dep);
	json_decref(base);
}

/* value refused for which with one line containing reason; nothing kept in o */
static void
expect_refused(
    struct placement_opts *o, enum placement_opt which, const char *value, const char *reason)
{
	char err[256] = "";

	CU_ASSERT_EQUAL(placement_opts_set(o, which, value, err, sizeof(err)), -EINVAL);
	if (strstr(err, reason) == NULL) {
		fprintf(stderr, "\"%s\": got \"%s\", want \"%s\"\n", value, err, reason);
		CU_FAIL("reason");
	}
	CU_ASSERT_PTR_NULL(strchr(err, '\n'));
}
static void
test_knobs_refused(void)
{
	static const struct {
		enum placement_opt which;
		const char *value;
		const char *reason; /* a substring of the message */
	} bad[] = {
	    {PLACEMENT_OPT_INTERFACE, "", "1 to 15"},
	    {PLACEMENT_OPT_INTERFACE, "a-very-long-name0", "1 to 15"},
	    {PLACEMENT_OPT_INTERFACE, "eth/1", "no '/'"},
	    {PLACEMENT_OPT_INTERFACE, "eth 1", "space"},
	    {PLACEMENT_OPT_INTERFACE, "..", "not an interface name"},
	    {PLACEMENT_OPT_PULL_POLICY, "always", "Always, IfNotPresent or Never"},
	    {PLACEMENT_OPT_PULL_SECRET, "RegCred", "DNS subdomain"},
	    {PLACEMENT_OPT_PULL_SECRET, "-x", "DNS subdomain"},
	    {PLACEMENT_OPT_PRIORITY_CLASS, "high_prio", "DNS subdomain"},
	    {PLACEMENT_OPT_PRIORITY_CLASS, "", "DNS subdomain"},
	    {PLACEMENT_OPT_RESOURCES, "{", "not JSON"},
	    {PLACEMENT_OPT_RESOURCES, "{\"a\":1,\"a\":2}", "not JSON"},
	    {PLACEMENT_OPT_RESOURCES, "[]", "must be a JSON object"},
	    {PLACEMENT_OPT_RESOURCES, "\"10m\"", "must be a JSON object"},
	    {PLACEMENT_OPT_RESOURCES, "{\"request\":{}}", "unknown field \"request\""},
	    {PLACEMENT_OPT_RESOURCES, "{\"limits\":[]}", "limits must be an object"},
	    {PLACEMENT_OPT_RESOURCES, "{\"limits\":{\"memroy\":\"1Mi\"}}", "\"memroy\""},
	    {PLACEMENT_OPT_RESOURCES, "{\"limits\":{\"memory\":\"64MB\"}}", "quantity"},
	    {PLACEMENT_OPT_RESOURCES, "{\"limits\":{\"memory\":\"-1\"}}", "quantity"},
	    {PLACEMENT_OPT_RESOURCES, "{\"limits\":{\"memory\":-1}}", "quantity"},
	    {PLACEMENT_OPT_RESOURCES, "{\"limits\":{\"cpu\":\"1.2.3\"}}", "quantity"},
	    {PLACEMENT_OPT_RESOURCES, "{\"limits\":{\"cpu\":true}}", "quantity"},
	    {PLACEMENT_OPT_RESOURCES,
		"{\"requests\":{\"memory\":\"128Mi\"},\"limits\":{\"memory\":\"0.0625Gi\"}}",
		"requests.memory is above limits.memory"},
	    {PLACEMENT_OPT_NODE_SELECTOR, "[]", "must be a JSON object of strings"},
	    {PLACEMENT_OPT_NODE_SELECTOR, "{\"a\":1}", "must be a string"},
	    {PLACEMENT_OPT_NODE_SELECTOR, "{\"a b\":\"c\"}", "not a label key"},
	    {PLACEMENT_OPT_NODE_SELECTOR, "{\"a\":\"-c\"}", "not a label value"},
	    {PLACEMENT_OPT_TOLERATIONS, "{}", "must be a JSON array"},
	    {PLACEMENT_OPT_TOLERATIONS, "[1]", "[0] must be an object"},
	    {PLACEMENT_OPT_TOLERATIONS, "[{\"operator\":\"Exists\"},{\"keys\":\"a\"}]",
		"[1]: unknown field \"keys\""},
	    {PLACEMENT_OPT_TOLERATIONS, "[{\"key\":\"a\",\"operator\":\"In\"}]",
		"not Exists or Equal"},
	    {PLACEMENT_OPT_TOLERATIONS, "[{\"value\":\"a\"}]", "empty key needs operator Exists"},
	    {PLACEMENT_OPT_TOLERATIONS, "[{\"key\":\"a\",\"operator\":\"Exists\",\"value\":\"b\"}]",
		"takes no value"},
	    {PLACEMENT_OPT_TOLERATIONS, "[{\"key\":\"a\",\"effect\":\"NoRun\"}]",
		"effect \"NoRun\""},
	    {PLACEMENT_OPT_TOLERATIONS,
		"[{\"key\":\"a\",\"effect\":\"NoSchedule\","
		"\"tolerationSeconds\":5}]",
		"needs effect NoExecute"},
	    {PLACEMENT_OPT_TOLERATIONS,
		"[{\"key\":\"a\",\"effect\":\"NoExecute\","
		"\"tolerationSeconds\":\"5\"}]",
		"must be an integer"},
	    {PLACEMENT_OPT_TOLERATIONS, "[{\"key\":5}]", "must be a string"},
	};
	struct placement_opts o = {0};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_refused(&o, bad[i].which, bad[i].value, bad[i].reason);
	/* nothing was kept from the refused values */
	CU_ASSERT_PTR_NULL(o.interface);
	CU_ASSERT_PTR_NULL(o.pull_policy);
	CU_ASSERT_PTR_NULL(o.priority_class);
	CU_ASSERT_PTR_NULL(o.pull_secrets);
	CU_ASSERT_PTR_NULL(o.resources);
	CU_ASSERT_PTR_NULL(o.node_selector);
	CU_ASSERT_PTR_NULL(o.tolerations);
	/* a repeated pull secret */
	set_ok(&o, PLACEMENT_OPT_PULL_SECRET, "regcred");
	CU_ASSERT_EQUAL(
	    placement_opts_set(&o, PLACEMENT_OPT_PULL_SECRET, "regcred", err, sizeof(err)),
	    -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "given twice"));
	/* quantities the API server takes */
	set_ok(&o, PLACEMENT_OPT_RESOURCES,
	    "{\"requests\":{\"cpu\":\".5\",\"memory\":\"1e6\",\"hugepages-2Mi\":\"2Mi\","
	    "\"example.com/dev\":\"1\",\"ephemeral-storage\":\"1G\"},\"limits\":{\"cpu\":\"500m\","
	    "\"memory\":\"1E\",\"hugepages-2Mi\":\"2Mi\"}}");
	set_ok(&o, PLACEMENT_OPT_RESOURCES, "{\"limits\":{\"memory\":\"1Ei\"}}");
	placement_opts_clear(&o);
}

/* --agent-replicas 1: today's single agent, Recreate, no election; the snapshot volume stays. */
static void
test_one_replica(void)
{
	struct placement_input in = input();
	struct placement_opts o = {0};
	const char *const args[] = {"--ippool-ref", "default/net-1", "--interface", "eth1",
	    "--listen", "$(POD_IP):8080", "--snapshot", "/var/lib/vm-dhcp/snapshot"};
	json_t *dep, *pod;

	set_ok(&o, PLACEMENT_OPT_REPLICAS, "1");
	in.opts = &o;
	dep = build(&in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dep);
	CU_ASSERT_EQUAL(json_integer_value(kind_get(dep, "spec", "replicas", NULL)), 1);
	CU_ASSERT_STRING_EQUAL(kind_get_str(dep, "spec", "strategy", "type", NULL), "Recreate");
	CU_ASSERT_PTR_NULL(kind_get(dep, "spec", "strategy", "rollingUpdate", NULL));
	assert_args(dep, args, sizeof(args) / sizeof(args[0]));
	assert_state_volume(dep);
	pod = kind_get(dep, "spec", "template", "spec", NULL);
	/* the node affinity alone */
	CU_ASSERT_PTR_NOT_NULL(kind_get(pod, "affinity", "nodeAffinity", NULL));
	CU_ASSERT_PTR_NULL(kind_get(pod, "affinity", "podAntiAffinity", NULL));
	json_decref(dep);
	placement_opts_clear(&o);
}

/* Replicas and election durations: in the manifest as given, and in the inputs hash. */
static void
test_election_knobs(void)
{
	struct placement_input in = input();
	struct placement_opts o = {0}, copy;
	const char *const args[] = {"--ippool-ref", "default/net-1", "--interface", "eth1",
	    "--listen", "$(POD_IP):8080", "--snapshot", "/var/lib/vm-dhcp/snapshot",
	    "--leader-elect", "--lease-name", "default-net-1-agent", "--lease-duration", "15",
	    "--renew-deadline", "10.25", "--retry-period", "0.025"};
	json_t *base = build(&in), *dep, *one, *c;
	char name[80];

	CU_ASSERT_PTR_NOT_NULL_FATAL(base);
	/* the defaults given explicitly (2, 2.000, 1.50, 0.3) are the defaults */
	set_ok(&o, PLACEMENT_OPT_REPLICAS, "2");
	set_ok(&o, PLACEMENT_OPT_LEASE_DURATION, "2.000");
	set_ok(&o, PLACEMENT_OPT_RENEW_DEADLINE, "1.50");
	set_ok(&o, PLACEMENT_OPT_RETRY_PERIOD, "0.3");
	in.opts = &o;
	dep = build(&in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dep);
	CU_ASSERT_TRUE(json_equal(dep, base));
	json_decref(dep);

	/* each re-places the agent */
	set_ok(&o, PLACEMENT_OPT_REPLICAS, "3");
	assert_replaces(&in, base);
	dep = build(&in);
	CU_ASSERT_EQUAL(json_integer_value(kind_get(dep, "spec", "replicas", NULL)), 3);
	json_decref(dep);
	set_ok(&o, PLACEMENT_OPT_REPLICAS, "2");
	set_ok(&o, PLACEMENT_OPT_LEASE_DURATION, "3");
	assert_replaces(&in, base);
	set_ok(&o, PLACEMENT_OPT_LEASE_DURATION, "2");
	set_ok(&o, PLACEMENT_OPT_RENEW_DEADLINE, "1");
	assert_replaces(&in, base);
	set_ok(&o, PLACEMENT_OPT_RENEW_DEADLINE, "1.5");
	set_ok(&o, PLACEMENT_OPT_RETRY_PERIOD, "0.2");
	assert_replaces(&in, base);

	/* the agent's flags take the durations as the admin wrote them, without trailing zeros */
	set_ok(&o, PLACEMENT_OPT_LEASE_DURATION, "15");
	set_ok(&o, PLACEMENT_OPT_RENEW_DEADLINE, "10.250");
	set_ok(&o, PLACEMENT_OPT_RETRY_PERIOD, "0.025");
	CU_ASSERT_EQUAL(placement_opts_check(&o, NULL, NULL, 0), 0);
	dep = build(&in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dep);
	assert_args(dep, args, sizeof(args) / sizeof(args[0]));
	json_decref(dep);

	/* one replica: the durations are not in the manifest, so they re-place nothing */
	set_ok(&o, PLACEMENT_OPT_REPLICAS, "1");
	one = build(&in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(one);
	CU_ASSERT_EQUAL(placement_decide(one, base, false), PLACEMENT_UPDATE);
	o.lease_ms = o.renew_ms = o.retry_ms = 0;
	dep = build(&in);
	CU_ASSERT_STRING_EQUAL(
	    kind_annotation(dep, PLACEMENT_ANNOT_HASH), kind_annotation(one, PLACEMENT_ANNOT_HASH));
	CU_ASSERT_EQUAL(placement_decide(one, dep, false), PLACEMENT_KEEP);
	json_decref(dep);
	json_decref(one);

	/* the Lease is the Deployment's name, also when that is cut with a hash suffix */
	memset(name, 'l', 70);
	name[70] = '\0';
	in.pool_name = name;
	set_ok(&o, PLACEMENT_OPT_REPLICAS, "2");
	dep = build(&in);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dep);
	c = json_array_get(kind_get(dep, "spec", "template", "spec", "containers", NULL), 0);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_array_get(json_object_get(c, "args"), 9)), "--lease-name");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_array_get(json_object_get(c, "args"), 10)), kind_name(dep));
	CU_ASSERT_EQUAL(strlen(kind_name(dep)), 63);
	json_decref(dep);

	/* the copy keeps them */
	set_ok(&o, PLACEMENT_OPT_LEASE_DURATION, "7.5");
	CU_ASSERT_EQUAL_FATAL(placement_opts_copy(&copy, &o), 0);
	CU_ASSERT_EQUAL(copy.replicas, 2);
	CU_ASSERT_EQUAL(copy.lease_ms, 7500);
	placement_opts_clear(&copy);
	placement_opts_clear(&o);
	json_decref(base);
}

/* Values refused one by one, and durations out of order (retry < renew < lease). */
static void
test_election_refused(void)
{
	static const struct {
		enum placement_opt which;
		const char *value;
		const char *reason;
	} bad[] = {
	    {PLACEMENT_OPT_REPLICAS, "0", "from 1 to 10"},
	    {PLACEMENT_OPT_REPLICAS, "11", "from 1 to 10"},
	    {PLACEMENT_OPT_REPLICAS, "", "from 1 to 10"},
	    {PLACEMENT_OPT_REPLICAS, "-1", "from 1 to 10"},
	    {PLACEMENT_OPT_REPLICAS, "2.0", "from 1 to 10"},
	    {PLACEMENT_OPT_REPLICAS, "99999999999999999999", "from 1 to 10"},
	    {PLACEMENT_OPT_LEASE_DURATION, "0.5", "at least 1 second"},
	    {PLACEMENT_OPT_LEASE_DURATION, "0", "more than 0"},
	    {PLACEMENT_OPT_LEASE_DURATION, "2s", "not a number of seconds"},
	    {PLACEMENT_OPT_LEASE_DURATION, "3601", "more than 3600 seconds"},
	    {PLACEMENT_OPT_LEASE_DURATION, "99999999999999999999", "more than 3600 seconds"},
	    {PLACEMENT_OPT_RENEW_DEADLINE, "-1", "not a number of seconds"},
	    {PLACEMENT_OPT_RENEW_DEADLINE, "1.", "not a number of seconds"},
	    {PLACEMENT_OPT_RENEW_DEADLINE, ".5", "not a number of seconds"},
	    {PLACEMENT_OPT_RENEW_DEADLINE, "1e3", "not a number of seconds"},
	    {PLACEMENT_OPT_RETRY_PERIOD, "0.0001", "at most 3 decimals"},
	    {PLACEMENT_OPT_RETRY_PERIOD, "0.000", "more than 0"},
	    {PLACEMENT_OPT_RETRY_PERIOD, "", "not a number of seconds"},
	};
	static const struct {
		const char *lease, *renew, *retry; /* NULL: not given (the default) */
		enum placement_opt which;
		const char *reason;
	} order[] = {
	    {"1", NULL, NULL, PLACEMENT_OPT_LEASE_DURATION,
		"1 is not longer than the renew deadline (--agent-renew-deadline 1.5, the "
		"default)"},
	    {NULL, "2", NULL, PLACEMENT_OPT_RENEW_DEADLINE,
		"2 is not shorter than the Lease duration (--agent-lease-duration 2, the "
		"default)"},
	    {"3", "3", NULL, PLACEMENT_OPT_RENEW_DEADLINE,
		"3 is not shorter than the Lease duration (--agent-lease-duration 3)"},
	    {NULL, NULL, "1.5", PLACEMENT_OPT_RETRY_PERIOD,
		"1.5 is not shorter than the renew deadline (--agent-renew-deadline 1.5, the "
		"default)"},
	    {NULL, "0.25", NULL, PLACEMENT_OPT_RENEW_DEADLINE,
		"0.25 is not longer than the retry period (--agent-retry-period 0.3, the "
		"default)"},
	    {NULL, "1", "1.001", PLACEMENT_OPT_RETRY_PERIOD,
		"1.001 is not shorter than the renew deadline (--agent-renew-deadline 1)"},
	};
	struct placement_opts o = {0};
	enum placement_opt which;
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_refused(&o, bad[i].which, bad[i].value, bad[i].reason);
	CU_ASSERT_EQUAL(o.replicas, 0);
	CU_ASSERT_EQUAL(o.lease_ms + o.renew_ms + o.retry_ms, 0);
	/* the defaults are in order; so are the bounds of each */
	CU_ASSERT_EQUAL(placement_opts_check(&o, &which, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(placement_opts_check(NULL, &which, err, sizeof(err)), 0);
	set_ok(&o, PLACEMENT_OPT_REPLICAS, "10");
	set_ok(&o, PLACEMENT_OPT_LEASE_DURATION, "3600");
	set_ok(&o, PLACEMENT_OPT_RENEW_DEADLINE, "3599.999");
	set_ok(&o, PLACEMENT_OPT_RETRY_PERIOD, "0.001");
	CU_ASSERT_EQUAL(placement_opts_check(&o, &which, err, sizeof(err)), 0);
	placement_opts_clear(&o);

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		memset(&o, 0, sizeof(o));
		if (order[i].lease != NULL)
			set_ok(&o, PLACEMENT_OPT_LEASE_DURATION, order[i].lease);
		if (order[i].renew != NULL)
			set_ok(&o, PLACEMENT_OPT_RENEW_DEADLINE, order[i].renew);
		if (order[i].retry != NULL)
			set_ok(&o, PLACEMENT_OPT_RETRY_PERIOD, order[i].retry);
		err[0] = '\0';
		which = PLACEMENT_OPT_INTERFACE;
		CU_ASSERT_EQUAL(placement_opts_check(&o, &which, err, sizeof(err)), -EINVAL);
		CU_ASSERT_EQUAL(which, order[i].which);
		if (strcmp(err, order[i].reason) != 0) {
			fprintf(stderr, "order %zu: got \"%s\", want \"%s\"\n", i, err,
			    order[i].reason);
			CU_FAIL("reason");
		}
	}
}

/*
 * The IPPool's AgentReady (controller/foreign-kinds.c deployment_ready) of the placed Deployment:
 * one ready replica of two serves the pool (the Lease makes a ready one active); none does not.
 */
static void
test_ready_with_standby(void)
{
	struct placement_input in = input();
	json_t *dep = build(&in), *st;
	const char *why = NULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(dep);
	json_object_set_new(json_object_get(dep, "metadata"), "generation", json_integer(1));
	st = json_pack("{s:i, s:i, s:i, s:i}", "observedGeneration", 1, "replicas", 2,
	    "readyReplicas", 2, "availableReplicas", 2);
	json_object_set_new(dep, "status", st);
	CU_ASSERT_TRUE(deployment_ready(dep, &why));
	/* a node with one replica died: the other took the Lease over */
	json_object_set_new(st, "readyReplicas", json_integer(1));
	json_object_set_new(st, "availableReplicas", json_integer(1));
	CU_ASSERT_TRUE(deployment_ready(dep, &why));
	CU_ASSERT_PTR_NULL(why);
	/* a rollout surging a third pod */
	json_object_set_new(st, "readyReplicas", json_integer(3));
	json_object_set_new(st, "availableReplicas", json_integer(3));
	CU_ASSERT_TRUE(deployment_ready(dep, NULL));
	json_object_set_new(st, "readyReplicas", json_integer(0));
	json_object_set_new(st, "availableReplicas", json_integer(0));
	CU_ASSERT_FALSE(deployment_ready(dep, &why));
	CU_ASSERT_STRING_EQUAL(why, "agent pod not ready");
	json_decref(dep);
}

static const struct test_case placement_tests[] = {
    {"agent names", test_names},
    {"manifest", test_manifest},
    {"metrics port and pod label (PodMonitor)", test_metrics_port},
    {"plain multus, bare network", test_plain_multus_and_bare_network},
    {"long label values", test_long_label_values},
    {"re-placement decision", test_replacement_decision},
    {"agent knobs in the manifest", test_knobs_manifest},
    {"agent knobs in the inputs hash", test_knobs_hash},
    {"agent knobs refused", test_knobs_refused},
    {"one replica: Recreate, no election", test_one_replica},
    {"replicas and election durations", test_election_knobs},
    {"replicas and election durations refused", test_election_refused},
    {"AgentReady with a standby", test_ready_with_standby},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "placement", .tests = placement_tests},
    {.name = NULL},
};
