/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Agent placement: the per-IPPool agent Deployment (replicas that elect the active one
 * through a Lease, or a single one) and the re-placement decision. The admin's knobs of it
 * (struct placement_opts: parsing and checks) are in placement-opts.c.
 */
#include "controller/placement.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "controller/foreign-kinds.h"
#include "lib/util.h"

/* [a-z0-9]: where a DNS-1123 label may start and end. */
static bool
lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/* Bump when the manifest's shape changes so existing agents are re-placed once. */
/* 2: non-root with file capabilities (NET_BIND_SERVICE added, allowPrivilegeEscalation),
 * POD_IP and --listen $(POD_IP):PORT, the admin's knobs (struct placement_opts).
 * 3: the container port is named "metrics" (the chart's PodMonitor scrapes it by name).
 * 4: agent high availability (replicas, Lease election args, RollingUpdate, pod
 * anti-affinity) and the snapshot emptyDir (--snapshot). */
#define PLACEMENT_MANIFEST_VERSION "4"
/* The name of the agent's HTTP port (/metrics, /healthz, /readyz on $(POD_IP)):
 * charts/vm-dhcp/templates/podmonitor.yaml scrapes this port name (scripts/lint-charts.sh
 * reads it from here). */
#define PLACEMENT_PORT_NAME "metrics"
#define AGENT_SUFFIX "-agent"
#define AGENT_UID 65532
#define TOLERATION_SECONDS 30
#define STATE_VOLUME "state"
#define HOSTNAME_KEY "kubernetes.io/hostname"
#define ANTI_AFFINITY_WEIGHT 100

int
placement_agent_name(const char *pool_ns, const char *pool_name, char out[PLACEMENT_NAME_MAX])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	char full[KIND_REF_MAX], digest[13];
	unsigned int mdlen = 0;
	size_t len, keep, ndig;

	if (pool_ns == NULL || pool_name == NULL || pool_ns[0] == '\0' || pool_name[0] == '\0')
		return -EINVAL;
	if ((size_t)snprintf(full, sizeof(full), "%s-%s", pool_ns, pool_name) >= sizeof(full))
		return -EINVAL;
	len = strlen(full);
	if (len < 58) {
		snprintf(out, PLACEMENT_NAME_MAX, "%s" AGENT_SUFFIX, full);
		return 0;
	}
	if (EVP_Digest(full, len, md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen < 6)
		return -EINVAL;
	for (unsigned i = 0; i < 6; i++) {
		digest[2 * i] = hex[md[i] >> 4];
		digest[2 * i + 1] = hex[md[i] & 0xf];
	}
	/* Cut at 51 (5 hex digits) when the cut ends on [a-z0-9], else at 50 (6 digits). */
	if (lower_alnum(full[50])) {
		keep = 51;
		ndig = 5;
	} else {
		keep = 50;
		ndig = 6;
	}
	snprintf(
	    out, PLACEMENT_NAME_MAX, "%.*s-%.*s" AGENT_SUFFIX, (int)keep, full, (int)ndig, digest);
	return 0;
}

/* A label value of at most 63 characters: long values keep a prefix and a hash suffix. */

static void
label_value(const char *v, char out[PLACEMENT_NAME_MAX])
{
	size_t len = strlen(v);

	if (len < PLACEMENT_NAME_MAX) {
		memcpy(out, v, len + 1);
		return;
	}
	snprintf(out, PLACEMENT_NAME_MAX, "%.46s-%016" PRIx64, v, hash64(v, len, 0));
}

static const char *
opt_interface(const struct placement_input *in)
{
	if (in->opts != NULL && in->opts->interface != NULL)
		return in->opts->interface;
	return PLACEMENT_INTERFACE;
}

static const char *
opt_pull_policy(const struct placement_input *in)
{
	if (in->opts != NULL && in->opts->pull_policy != NULL)
		return in->opts->pull_policy;
	return PLACEMENT_PULL_POLICY;
}

static int
opt_replicas(const struct placement_input *in)
{
	return placement_or_default(in->opts != NULL ? in->opts->replicas : 0, PLACEMENT_REPLICAS);
}

/* The election durations (given or default) as the agent's flags take them. */
static void
opt_election(const struct placement_input *in, char lease[PLACEMENT_SECONDS_LEN],
    char renew[PLACEMENT_SECONDS_LEN], char retry[PLACEMENT_SECONDS_LEN])
{
	const struct placement_opts *o = in->opts;

	placement_format_seconds(
	    placement_or_default(o != NULL ? o->lease_ms : 0, PLACEMENT_LEASE_MS), lease);
	placement_format_seconds(
	    placement_or_default(o != NULL ? o->renew_ms : 0, PLACEMENT_RENEW_MS), renew);
	placement_format_seconds(
	    placement_or_default(o != NULL ? o->retry_ms : 0, PLACEMENT_RETRY_MS), retry);
}

/* The container's resources: the admin's, else ours. New reference or NULL. */
static json_t *
opt_resources(const struct placement_input *in)
{
	if (in->opts != NULL && in->opts->resources != NULL)
		return json_deep_copy(in->opts->resources);
	return json_pack("{s:{s:s, s:s}, s:{s:s}}", "requests", "cpu", "10m", "memory", "16Mi",
	    "limits", "memory", "64Mi");
}

/* --- the manifest -------------------------------------------------------------------- */

static bool
input_ok(const struct placement_input *in)
{
	return in != NULL && in->pool_ns != NULL && in->pool_name != NULL &&
	       in->network_name != NULL && in->namespace != NULL && in->image != NULL &&
	       in->image[0] != '\0' && in->namespace[0] != '\0';
}

/* h folded with v as canonical JSON ("" for NULL), the NUL ending it. 0 or -ENOMEM. */
static int
hash_json(uint64_t *h, const json_t *v)
{
	char *s;

	if (v == NULL) {
		*h = hash64("", 1, *h);
		return 0;
	}
	s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	if (s == NULL)
		return -ENOMEM;
	*h = hash64(s, strlen(s) + 1, *h);
	free(s);
	return 0;
}

int
placement_inputs_hash(const struct placement_input *in, char out[PLACEMENT_HASH_LEN])
{
	const struct placement_opts *o;
	char replicas[16], lease[PLACEMENT_SECONDS_LEN], renew[PLACEMENT_SECONDS_LEN],
	    retry[PLACEMENT_SECONDS_LEN];
	const char *parts[16];
	size_t nparts = 0;
	json_t *res;
	uint64_t h = 0;
	int r;

	if (!input_ok(in))
		return -EINVAL;
	o = in->opts;
	parts[nparts++] = PLACEMENT_MANIFEST_VERSION;
	parts[nparts++] = in->image;
	parts[nparts++] = in->cluster_network != NULL ? in->cluster_network : "";
	parts[nparts++] = in->network_name;
	parts[nparts++] = in->pool_ns;
	parts[nparts++] = in->pool_name;
	parts[nparts++] = in->service_account != NULL ? in->service_account : "";
	parts[nparts++] = opt_interface(in);
	parts[nparts++] = opt_pull_policy(in);
	parts[nparts++] = o != NULL && o->priority_class != NULL ? o->priority_class : "";
	/* the effective replicas; the election durations only where the manifest has them */
	snprintf(replicas, sizeof(replicas), "%d", opt_replicas(in));
	parts[nparts++] = replicas;
	if (opt_replicas(in) >= 2) {
		opt_election(in, lease, renew, retry);
		parts[nparts++] = lease;
		parts[nparts++] = renew;
		parts[nparts++] = retry;
	}
	if (o != NULL && o->no_dhcp)
		parts[nparts++] = "no-dhcp"; /* only when set: hashes of agents before it stay */
	for (size_t i = 0; i < nparts; i++)
		h = hash64(parts[i], strlen(parts[i]) + 1, h); /* the NUL separates fields */
	/* the effective resources: passing the defaults explicitly changes nothing */
	if ((res = opt_resources(in)) == NULL)
		return -ENOMEM;
	r = hash_json(&h, res);
	json_decref(res);
	if (r < 0 || (r = hash_json(&h, o != NULL ? o->pull_secrets : NULL)) < 0 ||
	    (r = hash_json(&h, o != NULL ? o->node_selector : NULL)) < 0 ||
	    (r = hash_json(&h, o != NULL ? o->tolerations : NULL)) < 0)
		return r;
	snprintf(out, PLACEMENT_HASH_LEN, "%016" PRIx64, h);
	return 0;
}

static json_t *
build_labels(const struct placement_input *in)
{
	char ns[PLACEMENT_NAME_MAX], name[PLACEMENT_NAME_MAX];

	label_value(in->pool_ns, ns);
	label_value(in->pool_name, name);
	return json_pack("{s:s, s:s, s:s}", PLACEMENT_LABEL_APP, PLACEMENT_LABEL_APP_VALUE,
	    PLACEMENT_LABEL_POOL_NS, ns, PLACEMENT_LABEL_POOL_NAME, name);
}

/* Multus network selection: [{"namespace":…,"name":…,"interface":ifname}] as a string. */
static json_t *
build_multus(const char *nad_ns, const char *nad_name, const char *ifname)
{
	json_t *sel = json_pack(
	    "[{s:s, s:s, s:s}]", "namespace", nad_ns, "name", nad_name, "interface", ifname);
	char *s;
	json_t *v;

	if (sel == NULL)
		return NULL;
	s = json_dumps(sel, JSON_COMPACT);
	json_decref(sel);
	if (s == NULL)
		return NULL;
	v = json_string(s);
	free(s);
	return v;
}

/*
 * The pod's affinity into *ret (NULL when none): a required node affinity on
 * `network.harvesterhci.io/<cn>=true` for a NAD of a cluster network, and from two replicas
 * a PREFERRED pod anti-affinity on the node (the pods of this pool, by the Deployment's
 * selector labels): the replicas go to different nodes of the cluster network when it has
 * several, and a single node still runs them all. 0 or -ENOMEM.
 */
static int
build_affinity(const struct placement_input *in, const json_t *labels, json_t **ret)
{
	json_t *aff = json_object(), *v;
	char key[256];

	*ret = NULL;
	if (aff == NULL)
		return -ENOMEM;
	if (in->cluster_network != NULL) {
		if ((size_t)snprintf(key, sizeof(key), PLACEMENT_NODE_LABEL_PREFIX "%s",
			in->cluster_network) >= sizeof(key))
			goto fail;
		v = json_pack("{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}",
		    "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
		    "matchExpressions", "key", key, "operator", "In", "values", "true");
		if (v == NULL || json_object_set_new(aff, "nodeAffinity", v) < 0)
			goto fail;
	}
	if (opt_replicas(in) >= 2) {
		v = json_pack("{s:[{s:i, s:{s:{s:o}, s:s}}]}",
		    "preferredDuringSchedulingIgnoredDuringExecution", "weight",
		    ANTI_AFFINITY_WEIGHT, "podAffinityTerm", "labelSelector", "matchLabels",
		    json_deep_copy(labels), "topologyKey", HOSTNAME_KEY);
		if (v == NULL || json_object_set_new(aff, "podAntiAffinity", v) < 0)
			goto fail;
	}
	if (json_object_size(aff) == 0)
		json_decref(aff);
	else
		*ret = aff;
	return 0;
fail:
	json_decref(aff);
	return -ENOMEM;
}

/*
 * Least privilege for the non-root agent. The image's binary carries the file capabilities
 * cap_net_raw,cap_net_bind_service,cap_net_admin+ep and the container runs as 65532: the
 * runtime puts the added capabilities in the bounding set only, and execve() raises them from
 * the file capabilities. allowPrivilegeEscalation must therefore stay TRUE: false sets
 * no_new_privs, under which execve() ignores file capabilities and the agent starts with
 * none (no raw socket). Every other capability is dropped:
 *   NET_RAW           the AF_PACKET socket that receives and sends DHCP frames
 *   NET_BIND_SERVICE  the UDP socket on port 67 (keeps ICMP port-unreachable away)
 *   NET_ADMIN         the pool's serverIP/prefix set on the interface (Kubernetes mode)
 */
static json_t *
build_security_context(void)
{
	return json_pack("{s:b, s:i, s:i, s:b, s:b, s:{s:[s], s:[s,s,s]}}", "runAsNonRoot", 1,
	    "runAsUser", AGENT_UID, "runAsGroup", AGENT_UID, "readOnlyRootFilesystem", 1,
	    "allowPrivilegeEscalation", 1, "capabilities", "drop", "ALL", "add", "NET_RAW",
	    "NET_BIND_SERVICE", "NET_ADMIN");
}

/*
 * The agent's args. From two replicas, the Lease election: the Lease is named after the
 * Deployment (unique per pool, in the controller's namespace, which is the agents'
 * $POD_NAMESPACE). New reference or NULL.
 */
static json_t *
build_args(const struct placement_input *in, const char *name)
{
	char ref[KIND_REF_MAX], listen[32];
	char lease[PLACEMENT_SECONDS_LEN], renew[PLACEMENT_SECONDS_LEN],
	    retry[PLACEMENT_SECONDS_LEN];
	const char *argv[20];
	size_t n = 0;
	json_t *args;

	snprintf(ref, sizeof(ref), "%s/%s", in->pool_ns, in->pool_name);
	/* the pod's own address (the kubelet expands $(POD_IP)): never the VM-facing side */
	snprintf(listen, sizeof(listen), "$(POD_IP):%d", PLACEMENT_PORT);
	argv[n++] = "--ippool-ref";
	argv[n++] = ref;
	argv[n++] = "--interface";
	argv[n++] = opt_interface(in);
	argv[n++] = "--listen";
	argv[n++] = listen;
	argv[n++] = "--snapshot";
	argv[n++] = PLACEMENT_SNAPSHOT;
	if (opt_replicas(in) >= 2) {
		opt_election(in, lease, renew, retry);
		argv[n++] = "--leader-elect";
		argv[n++] = "--lease-name";
		argv[n++] = name;
		argv[n++] = "--lease-duration";
		argv[n++] = lease;
		argv[n++] = "--renew-deadline";
		argv[n++] = renew;
		argv[n++] = "--retry-period";
		argv[n++] = retry;
	}
	if (in->opts != NULL && in->opts->no_dhcp)
		argv[n++] = "--dry-run"; /* sync and report ready, no sockets, no netlink */
	if ((args = json_array()) == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (json_array_append_new(args, json_string(argv[i])) < 0) {
			json_decref(args);
			return NULL;
		}
	return args;
}

static json_t *
build_container(const struct placement_input *in, const char *name)
{
	json_t *probe_ready, *probe_live, *sc, *res, *args;

	args = build_args(in, name);
	probe_ready = json_pack("{s:{s:s, s:i}, s:i, s:i}", "httpGet", "path", "/readyz", "port",
	    PLACEMENT_PORT, "periodSeconds", 5, "failureThreshold", 3);
	probe_live = json_pack("{s:{s:s, s:i}, s:i, s:i, s:i}", "httpGet", "path", "/healthz",
	    "port", PLACEMENT_PORT, "initialDelaySeconds", 5, "periodSeconds", 10,
	    "failureThreshold", 3);
	sc = build_security_context();
	res = opt_resources(in);
	if (args == NULL || probe_ready == NULL || probe_live == NULL || sc == NULL ||
	    res == NULL) {
		json_decref(args);
		json_decref(probe_ready);
		json_decref(probe_live);
		json_decref(sc);
		json_decref(res);
		return NULL;
	}
	/* the snapshot's emptyDir: the root file system is read-only */
	return json_pack("{s:s, s:s, s:s, s:o,"
			 " s:[{s:s, s:{s:{s:s}}}, {s:s, s:{s:{s:s}}}, {s:s, s:{s:{s:s}}}],"
			 " s:[{s:s, s:i, s:s}], s:[{s:s, s:s}],"
			 " s:o, s:o, s:o, s:o}",
	    "name", PLACEMENT_CONTAINER, "image", in->image, "imagePullPolicy", opt_pull_policy(in),
	    "args", args, "env", "name", "POD_NAME", "valueFrom", "fieldRef", "fieldPath",
	    "metadata.name", "name", "POD_NAMESPACE", "valueFrom", "fieldRef", "fieldPath",
	    "metadata.namespace", "name", "POD_IP", "valueFrom", "fieldRef", "fieldPath",
	    "status.podIP", "ports", "name", PLACEMENT_PORT_NAME, "containerPort", PLACEMENT_PORT,
	    "protocol", "TCP", "volumeMounts", "name", STATE_VOLUME, "mountPath",
	    PLACEMENT_STATE_DIR, "resources", res, "securityContext", sc, "readinessProbe",
	    probe_ready, "livenessProbe", probe_live);
}

/* spec[key] = a copy of v when v is not NULL. 0 or -ENOMEM. */
static int
set_copy(json_t *spec, const char *key, const json_t *v)
{
	if (v == NULL)
		return 0;
	return json_object_set_new(spec, key, json_deep_copy(v)) < 0 ? -ENOMEM : 0;
}

static json_t *
build_pod_spec(const struct placement_input *in, const char *name, const json_t *labels)
{
	const struct placement_opts *o = in->opts;
	json_t *container = build_container(in, name);
	json_t *spec, *tol, *aff;

	if (container == NULL)
		return NULL;
	spec = json_pack("{s:[o], s:{s:b, s:i, s:i, s:{s:s}},"
			 " s:[{s:s, s:s, s:s, s:i}, {s:s, s:s, s:s, s:i}], s:i,"
			 " s:[{s:s, s:{s:s}}]}",
	    "containers", container, "securityContext", "runAsNonRoot", 1, "runAsUser", AGENT_UID,
	    "runAsGroup", AGENT_UID, "seccompProfile", "type", "RuntimeDefault",
	    /*
	     * leave a failed node quickly: one replica leaves the pool without DHCP service
	     * meanwhile; from two, a standby took over once the Lease expired, and the
	     * replacement restores the redundancy
	     */
	    "tolerations", "key", "node.kubernetes.io/not-ready", "operator", "Exists", "effect",
	    "NoExecute", "tolerationSeconds", TOLERATION_SECONDS, "key",
	    "node.kubernetes.io/unreachable", "operator", "Exists", "effect", "NoExecute",
	    "tolerationSeconds", TOLERATION_SECONDS, "terminationGracePeriodSeconds", 5, "volumes",
	    "name", STATE_VOLUME, "emptyDir", "sizeLimit", PLACEMENT_STATE_SIZE);
	if (spec == NULL)
		return NULL;
	/* A NAD without a cluster network (plain Multus) means no node affinity. */
	if (build_affinity(in, labels, &aff) < 0 ||
	    (aff != NULL && json_object_set_new(spec, "affinity", aff) < 0))
		goto fail;
	if (in->service_account != NULL && in->service_account[0] != '\0' &&
	    json_object_set_new(spec, "serviceAccountName", json_string(in->service_account)) < 0)
		goto fail;
	if (o == NULL)
		return spec;
	/* the admin's knobs: tolerations after ours; the node selector ANDs with the affinity */
	tol = json_object_get(spec, "tolerations");
	if ((o->tolerations != NULL && json_array_extend(tol, o->tolerations) < 0) ||
	    set_copy(spec, "nodeSelector", o->node_selector) < 0 ||
	    set_copy(spec, "imagePullSecrets", o->pull_secrets) < 0 ||
	    (o->priority_class != NULL &&
		json_object_set_new(spec, "priorityClassName", json_string(o->priority_class)) < 0))
		goto fail;
	return spec;
fail:
	json_decref(spec);
	return NULL;
}

int
placement_build(const struct placement_input *in, json_t **ret)
{
	char name[PLACEMENT_NAME_MAX], hash[PLACEMENT_HASH_LEN], ref[KIND_REF_MAX];
	char nad_ns[KIND_NS_MAX], nad_name[KIND_NAME_MAX];
	json_t *labels = NULL, *multus = NULL, *podspec = NULL, *strategy = NULL, *dep;
	int r;

	*ret = NULL;
	if (!input_ok(in))
		return -EINVAL;
	if ((r = placement_agent_name(in->pool_ns, in->pool_name, name)) < 0 ||
	    (r = kind_split_ref(in->network_name, "default", nad_ns, nad_name)) < 0 ||
	    (r = placement_inputs_hash(in, hash)) < 0)
		return r;
	snprintf(ref, sizeof(ref), "%s/%s", in->pool_ns, in->pool_name);
	labels = build_labels(in);
	multus = build_multus(nad_ns, nad_name, opt_interface(in));
	if (labels == NULL || multus == NULL)
		goto nomem;
	podspec = build_pod_spec(in, name, labels);
	/*
	 * From two replicas the Lease keeps one active (only it answers DHCP): roll one pod at a
	 * time, a new standby ready before an old pod goes. One replica has no Lease to arbitrate:
	 * never two agents with the same server IP on one L2 segment.
	 */
	if (opt_replicas(in) >= 2)
		strategy = json_pack("{s:s, s:{s:i, s:i}}", "type", "RollingUpdate",
		    "rollingUpdate", "maxUnavailable", 0, "maxSurge", 1);
	else
		strategy = json_pack("{s:s}", "type", "Recreate");
	if (podspec == NULL || strategy == NULL)
		goto nomem;
	dep = json_pack("{s:s, s:s,"
			" s:{s:s, s:s, s:o, s:{s:s, s:s}},"
			" s:{s:i, s:i, s:o, s:{s:o},"
			"    s:{s:{s:o, s:{s:o}}, s:o}}}",
	    "apiVersion", "apps/v1", "kind", "Deployment", "metadata", "name", name, "namespace",
	    in->namespace, "labels", json_deep_copy(labels), "annotations",
	    PLACEMENT_ANNOT_POOL_REF, ref, PLACEMENT_ANNOT_HASH, hash, "spec", "replicas",
	    opt_replicas(in), "revisionHistoryLimit", 2, "strategy", strategy, "selector",
	    "matchLabels", json_deep_copy(labels), "template", "metadata", "labels",
	    json_deep_copy(labels), "annotations", KIND_ANNOT_MULTUS_NETWORKS, multus, "spec",
	    podspec);
	multus = podspec = strategy = NULL; /* stolen by "o" */
	json_decref(labels);
	if (dep == NULL)
		return -ENOMEM;
	*ret = dep;
	return 0;
nomem:
	json_decref(labels);
	json_decref(multus);
	json_decref(podspec);
	json_decref(strategy);
	return -ENOMEM;
}

enum placement_action
placement_decide(json_t *existing, json_t *desired, bool hold)
{
	const char *have, *want;

	if (existing == NULL)
		return PLACEMENT_CREATE;
	if (kind_is_deleting(existing))
		return PLACEMENT_WAIT;
	have = kind_annotation(existing, PLACEMENT_ANNOT_HASH);
	want = kind_annotation(desired, PLACEMENT_ANNOT_HASH);
	if (have != NULL && want != NULL && strcmp(have, want) == 0)
		return PLACEMENT_KEEP;
	return hold ? PLACEMENT_KEEP : PLACEMENT_UPDATE;
}

/* dst[key] |= src[key] for every key of the object src[key] (values copied). */
static int
merge_map(json_t *dst_meta, json_t *src_meta, const char *key)
{
	json_t *src = json_object_get(src_meta, key), *dst = json_object_get(dst_meta, key);

	if (!json_is_object(src))
		return 0;
	if (!json_is_object(dst)) {
		dst = json_object();
		if (dst == NULL || json_object_set_new(dst_meta, key, dst) < 0)
			return -ENOMEM;
	}
	return json_object_update(dst, src) < 0 ? -ENOMEM : 0;
}

json_t *
placement_merge(json_t *existing, json_t *desired)
{
	json_t *out = json_deep_copy(existing);
	json_t *meta = json_object_get(out, "metadata");
	json_t *dmeta = json_object_get(desired, "metadata");
	json_t *spec = json_deep_copy(json_object_get(desired, "spec"));

	if (out == NULL || !json_is_object(meta) || spec == NULL ||
	    merge_map(meta, dmeta, "labels") < 0 || merge_map(meta, dmeta, "annotations") < 0) {
		json_decref(spec);
		json_decref(out);
		return NULL;
	}
	if (json_object_set_new(out, "spec", spec) < 0) { /* steals spec even on error */
		json_decref(out);
		return NULL;
	}
	return out;
}

const char *
placement_pool_ref(json_t *dep)
{
	const char *app = kind_label(dep, PLACEMENT_LABEL_APP);

	if (app == NULL || strcmp(app, PLACEMENT_LABEL_APP_VALUE) != 0)
		return NULL;
	return kind_annotation(dep, PLACEMENT_ANNOT_POOL_REF);
}

const char *
placement_image(json_t *dep)
{
	json_t *cs = kind_get(dep, "spec", "template", "spec", "containers", NULL);
	size_t i;
	json_t *c;

	json_array_foreach(cs, i, c)
	{
		const char *n = json_string_value(json_object_get(c, "name"));

		if (n != NULL && strcmp(n, PLACEMENT_CONTAINER) == 0)
			return json_string_value(json_object_get(c, "image"));
	}
	return NULL;
}
