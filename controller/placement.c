/* SPDX-License-Identifier: Apache-2.0 */
/* Agent placement: the per-IPPool agent Deployment and the re-placement decision. */
#include "controller/placement.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "controller/kinds.h"
#include "lib/util.h"

/* Bump when the manifest's shape changes so existing agents are re-placed once. */
#define PLACEMENT_MANIFEST_VERSION "1"
#define AGENT_SUFFIX "-agent"
#define AGENT_UID 65532
#define TOLERATION_SECONDS 30

static bool
is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

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
	if (is_lower_alnum(full[50])) {
		keep = 51;
		ndig = 5;
	} else {
		keep = 50;
		ndig = 6;
	}
	snprintf(out, PLACEMENT_NAME_MAX, "%.*s-%.*s" AGENT_SUFFIX, (int)keep, full, (int)ndig,
	    digest);
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

static bool
input_ok(const struct placement_input *in)
{
	return in != NULL && in->pool_ns != NULL && in->pool_name != NULL &&
	    in->network_name != NULL && in->namespace != NULL && in->image != NULL &&
	    in->image[0] != '\0' && in->namespace[0] != '\0';
}

int
placement_inputs_hash(const struct placement_input *in, char out[PLACEMENT_HASH_LEN])
{
	const char *parts[7];
	uint64_t h = 0;

	if (!input_ok(in))
		return -EINVAL;
	parts[0] = PLACEMENT_MANIFEST_VERSION;
	parts[1] = in->image;
	parts[2] = in->cluster_network != NULL ? in->cluster_network : "";
	parts[3] = in->network_name;
	parts[4] = in->pool_ns;
	parts[5] = in->pool_name;
	parts[6] = in->service_account != NULL ? in->service_account : "";
	for (size_t i = 0; i < ELEMENTSOF(parts); i++)
		h = hash64(parts[i], strlen(parts[i]) + 1, h); /* the NUL separates fields */
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

/* Multus network selection: [{"namespace":…,"name":…,"interface":"eth1"}] as a string. */
static json_t *
build_multus(const char *nad_ns, const char *nad_name)
{
	json_t *sel = json_pack("[{s:s, s:s, s:s}]", "namespace", nad_ns, "name", nad_name,
	    "interface", PLACEMENT_INTERFACE);
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

/* Required node affinity on `network.harvesterhci.io/<cn>=true`. New reference or NULL. */
static json_t *
build_affinity(const char *cluster_network)
{
	char key[256];

	if ((size_t)snprintf(key, sizeof(key), PLACEMENT_NODE_LABEL_PREFIX "%s",
		cluster_network) >= sizeof(key))
		return NULL;
	return json_pack("{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}", "nodeAffinity",
	    "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms",
	    "matchExpressions", "key", key, "operator", "In", "values", "true");
}

static json_t *
build_container(const struct placement_input *in)
{
	char ref[KIND_REF_MAX], listen[16];
	json_t *probe_ready, *probe_live;

	snprintf(ref, sizeof(ref), "%s/%s", in->pool_ns, in->pool_name);
	snprintf(listen, sizeof(listen), ":%d", PLACEMENT_PORT);
	probe_ready = json_pack("{s:{s:s, s:i}, s:i, s:i}", "httpGet", "path", "/readyz", "port",
	    PLACEMENT_PORT, "periodSeconds", 5, "failureThreshold", 3);
	probe_live = json_pack("{s:{s:s, s:i}, s:i, s:i, s:i}", "httpGet", "path", "/healthz",
	    "port", PLACEMENT_PORT, "initialDelaySeconds", 5, "periodSeconds", 10,
	    "failureThreshold", 3);
	if (probe_ready == NULL || probe_live == NULL) {
		json_decref(probe_ready);
		json_decref(probe_live);
		return NULL;
	}
	return json_pack("{s:s, s:s, s:s, s:[s,s,s,s,s,s],"
			 " s:[{s:s, s:{s:{s:s}}}, {s:s, s:{s:{s:s}}}],"
			 " s:[{s:s, s:i, s:s}],"
			 " s:{s:{s:s, s:s}, s:{s:s}},"
			 " s:{s:b, s:b, s:{s:[s,s], s:[s]}},"
			 " s:o, s:o}",
	    "name", PLACEMENT_CONTAINER, "image", in->image, "imagePullPolicy", "IfNotPresent",
	    "args", "--ippool-ref", ref, "--interface", PLACEMENT_INTERFACE, "--listen", listen,
	    "env", "name", "POD_NAME", "valueFrom", "fieldRef", "fieldPath", "metadata.name",
	    "name", "POD_NAMESPACE", "valueFrom", "fieldRef", "fieldPath", "metadata.namespace",
	    "ports", "name", "http", "containerPort", PLACEMENT_PORT, "protocol", "TCP",
	    "resources", "requests", "cpu", "10m", "memory", "16Mi", "limits", "memory", "64Mi",
	    "securityContext", "runAsNonRoot", 1, "readOnlyRootFilesystem", 1, "capabilities",
	    "add", "NET_RAW", "NET_ADMIN", "drop", "ALL",
	    "readinessProbe", probe_ready, "livenessProbe", probe_live);
}

static json_t *
build_pod_spec(const struct placement_input *in)
{
	json_t *container = build_container(in);
	json_t *spec;

	if (container == NULL)
		return NULL;
	spec = json_pack("{s:[o], s:{s:b, s:i, s:i, s:{s:s}},"
			 " s:[{s:s, s:s, s:s, s:i}, {s:s, s:s, s:s, s:i}], s:i}",
	    "containers", container,
	    "securityContext", "runAsNonRoot", 1, "runAsUser", AGENT_UID, "runAsGroup", AGENT_UID,
	    "seccompProfile", "type", "RuntimeDefault",
	    /* leave a failed node quickly: the pool has no DHCP service meanwhile */
	    "tolerations",
	    "key", "node.kubernetes.io/not-ready", "operator", "Exists", "effect", "NoExecute",
	    "tolerationSeconds", TOLERATION_SECONDS,
	    "key", "node.kubernetes.io/unreachable", "operator", "Exists", "effect", "NoExecute",
	    "tolerationSeconds", TOLERATION_SECONDS,
	    "terminationGracePeriodSeconds", 5);
	if (spec == NULL)
		return NULL;
	/* A NAD without a cluster network (plain Multus) means no affinity. */
	if (in->cluster_network != NULL &&
	    json_object_set_new(spec, "affinity", build_affinity(in->cluster_network)) < 0)
		goto fail;
	if (in->service_account != NULL && in->service_account[0] != '\0' &&
	    json_object_set_new(spec, "serviceAccountName", json_string(in->service_account)) < 0)
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
	json_t *labels = NULL, *multus = NULL, *podspec = NULL, *dep;
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
	multus = build_multus(nad_ns, nad_name);
	podspec = build_pod_spec(in);
	if (labels == NULL || multus == NULL || podspec == NULL)
		goto nomem;
	dep = json_pack("{s:s, s:s,"
			" s:{s:s, s:s, s:o, s:{s:s, s:s}},"
			" s:{s:i, s:i, s:{s:s}, s:{s:o},"
			"    s:{s:{s:o, s:{s:o}}, s:o}}}",
	    "apiVersion", "apps/v1", "kind", "Deployment",
	    "metadata", "name", name, "namespace", in->namespace, "labels", json_deep_copy(labels),
	    "annotations", PLACEMENT_ANNOT_POOL_REF, ref, PLACEMENT_ANNOT_HASH, hash,
	    "spec", "replicas", 1, "revisionHistoryLimit", 2,
	    /* never two agents with the same server IP on one L2 segment */
	    "strategy", "type", "Recreate",
	    "selector", "matchLabels", json_deep_copy(labels),
	    "template", "metadata", "labels", json_deep_copy(labels), "annotations",
	    KIND_ANNOT_MULTUS_NETWORKS, multus, "spec", podspec);
	multus = podspec = NULL; /* stolen by "o" */
	json_decref(labels);
	if (dep == NULL)
		return -ENOMEM;
	*ret = dep;
	return 0;
nomem:
	json_decref(labels);
	json_decref(multus);
	json_decref(podspec);
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

	json_array_foreach(cs, i, c) {
		const char *n = json_string_value(json_object_get(c, "name"));

		if (n != NULL && strcmp(n, PLACEMENT_CONTAINER) == 0)
			return json_string_value(json_object_get(c, "image"));
	}
	return NULL;
}
