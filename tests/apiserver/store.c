/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Object store with the API server's write semantics, watch history and paginated lists.
 *
 * Size: about 1400 lines, one file on purpose: objects, history, lists and the write rules work
 * on the same records and must change together; a test fixture, not product code.
 */
#include "tests/apiserver/store.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "lib/hmap.h"
#include "lib/util.h"
#include "tests/apiserver/patch.h"
#include "tests/apiserver/schema.h"

struct store {
	struct hmap resources; /* struct resource by id */
	struct resource **reslist;
	size_t nres;
	uint64_t rv;
	uint64_t compacted_rv;
	uint64_t writes;
	size_t nobjects;
	struct event *hist; /* ring */
	size_t hist_cap;
	size_t hist_start;
	size_t hist_len;
	size_t hist_bytes;     /* serialised size of the events held */
	size_t hist_max_bytes; /* bound on it (0 = none) */
	store_event_fn event_cb;
	void *event_ud;
};

struct known_resource {
	const char *group;
	const char *version;
	const char *plural;
	const char *kind;
	bool namespaced;
	bool status_sub;
	bool builtin; /* false: a well-known CRD, treated like a custom resource */
};

/* Resources known without a CRD; anything else is accepted as a namespaced resource. */
static const struct known_resource known_resources[] = {
    {"", "v1", "pods", "Pod", true, true, true},
    {"", "v1", "services", "Service", true, true, true},
    {"", "v1", "configmaps", "ConfigMap", true, false, true},
    {"", "v1", "secrets", "Secret", true, false, true},
    {"", "v1", "events", "Event", true, false, true},
    {"", "v1", "endpoints", "Endpoints", true, false, true},
    {"", "v1", "serviceaccounts", "ServiceAccount", true, false, true},
    {"", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", true, true, true},
    {"", "v1", "nodes", "Node", false, true, true},
    {"", "v1", "namespaces", "Namespace", false, true, true},
    {"", "v1", "persistentvolumes", "PersistentVolume", false, true, true},
    {"apps", "v1", "deployments", "Deployment", true, true, true},
    {"apps", "v1", "daemonsets", "DaemonSet", true, true, true},
    {"apps", "v1", "statefulsets", "StatefulSet", true, true, true},
    {"apps", "v1", "replicasets", "ReplicaSet", true, true, true},
    {"batch", "v1", "jobs", "Job", true, true, true},
    {"coordination.k8s.io", "v1", "leases", "Lease", true, false, true},
    {"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
	"MutatingWebhookConfiguration", false, false, true},
    {"admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
	"ValidatingWebhookConfiguration", false, false, true},
    {"events.k8s.io", "v1", "events", "Event", true, false, true},
    {"rbac.authorization.k8s.io", "v1", "roles", "Role", true, false, true},
    {"rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", true, false, true},
    {"rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", false, false, true},
    {"rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", false, false,
	true},
    {"storage.k8s.io", "v1", "storageclasses", "StorageClass", false, false, true},
    {"apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false,
	true, true},
    {"k8s.cni.cncf.io", "v1", "network-attachment-definitions", "NetworkAttachmentDefinition", true,
	false, false},
    {"kubevirt.io", "v1", "virtualmachines", "VirtualMachine", true, true, false},
    {"kubevirt.io", "v1", "virtualmachineinstances", "VirtualMachineInstance", true, true, false},
    {"network.harvesterhci.io", "v1alpha1", "ippools", "IPPool", true, true, false},
    {"network.harvesterhci.io", "v1alpha1", "virtualmachinenetworkconfigs",
	"VirtualMachineNetworkConfig", true, true, false},
};

static void set_err(struct api_err *err, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void
set_err(struct api_err *err, int code, const char *reason, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	err->reason = reason;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
}

static char *
xstrdup(const char *s)
{
	char *d = strdup(s != NULL ? s : "");

	if (d == NULL)
		abort();
	return d;
}

static char *
make_key(const char *ns, const char *name)
{
	size_t n = (ns != NULL ? strlen(ns) + 1 : 0) + strlen(name) + 1;
	char *k = malloc(n);

	if (k == NULL)
		abort();
	if (ns != NULL)
		snprintf(k, n, "%s/%s", ns, name);
	else
		snprintf(k, n, "%s", name);
	return k;
}

void
key_namespace(const char *key, char *buf, size_t len)
{
	const char *slash = strchr(key, '/');
	size_t n = slash != NULL ? (size_t)(slash - key) : 0;

	if (n >= len)
		n = len - 1;
	memcpy(buf, key, n);
	buf[n] = '\0';
}

/* "group/resource" the way Status messages name a resource ("pods", "ippools.group"). */
static void
qualified(const struct resource *res, char *buf, size_t len)
{
	if (res->group[0] != '\0')
		snprintf(buf, len, "%s.%s", res->plural, res->group);
	else
		snprintf(buf, len, "%s", res->plural);
}

static void
now_rfc3339(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void
new_uid(char out[37])
{
	unsigned char b[16];

	RAND_bytes(b, sizeof(b));
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
	    b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
	    b[14], b[15]);
}

/* --- resources ------------------------------------------------------------------------- */

static struct resource *
resource_add(struct store *st, const char *group, const char *plural)
{
	struct resource *res = calloc(1, sizeof(*res));
	struct resource **nl;
	size_t n = strlen(group) + strlen(plural) + 2;

	if (res == NULL)
		abort();
	res->id = malloc(n);
	if (res->id == NULL)
		abort();
	snprintf(res->id, n, "%s/%s", group, plural);
	res->group = xstrdup(group);
	res->plural = xstrdup(plural);
	res->namespaced = true;
	res->status_sub = true;
	res->objs = (struct hmap)HMAP_INITIALIZER;
	if (hmap_insert(&st->resources, &res->node, hash64(res->id, strlen(res->id), 0)) < 0)
		abort();
	nl = realloc(st->reslist, (st->nres + 1) * sizeof(*nl));
	if (nl == NULL)
		abort();
	st->reslist = nl;
	st->reslist[st->nres++] = res;
	return res;
}

static void
set_str(char **field, const char *v)
{
	if (v == NULL || (*field != NULL && strcmp(*field, v) == 0))
		return;
	free(*field);
	*field = xstrdup(v);
}

static struct resource *
resource_find(struct store *st, const char *id)
{
	struct resource *res;

	HMAP_FOR_EACH_WITH_HASH(res, node, hash64(id, strlen(id), 0), &st->resources)
	if (strcmp(res->id, id) == 0)
		return res;
	return NULL;
}

static struct object *
object_find(const struct resource *res, const char *key)
{
	struct object *o;

	HMAP_FOR_EACH_WITH_HASH(o, node, hash64(key, strlen(key), 0), &res->objs)
	if (strcmp(o->key, key) == 0)
		return o;
	return NULL;
}

struct resource *
store_resource(struct store *st, const char *group, const char *plural, bool create)
{
	char id[512];
	struct resource *res;

	snprintf(id, sizeof(id), "%s/%s", group, plural);
	res = resource_find(st, id);
	if (res != NULL || !create)
		return res;
	res = resource_add(st, group, plural);
	/* Kind guessed from the plural until an object or a CRD says better. */
	{
		char kind[256];
		size_t n;

		snprintf(kind, sizeof(kind), "%s", plural);
		n = strlen(kind);
		if (n > 1 && kind[n - 1] == 's')
			kind[n - 1] = '\0';
		if (kind[0] >= 'a' && kind[0] <= 'z')
			kind[0] = (char)(kind[0] - 'a' + 'A');
		res->kind = xstrdup(kind);
	}
	res->version = xstrdup(group[0] == '\0' ? "v1" : "v1");
	return res;
}

struct resource *
store_resource_next(struct store *st, size_t *it)
{
	return *it < st->nres ? st->reslist[(*it)++] : NULL;
}

/* A CustomResourceDefinition was written: (re)register the resource it defines. */
static void
register_crd(struct store *st, json_t *crd)
{
	json_t *spec = json_object_get(crd, "spec");
	json_t *names = json_object_get(spec, "names");
	const char *group = json_string_value(json_object_get(spec, "group"));
	const char *plural = json_string_value(json_object_get(names, "plural"));
	const char *kind = json_string_value(json_object_get(names, "kind"));
	const char *scope = json_string_value(json_object_get(spec, "scope"));
	json_t *versions = json_object_get(spec, "versions"), *v;
	struct resource *res;
	size_t i;

	if (group == NULL || plural == NULL)
		return;
	res = store_resource(st, group, plural, true);
	set_str(&res->kind, kind);
	res->namespaced = scope == NULL || strcmp(scope, "Cluster") != 0;
	res->builtin = false;
	res->status_sub = false;
	json_decref(res->schema);
	res->schema = NULL;
	json_array_foreach(versions, i, v)
	{
		if (json_is_true(json_object_get(v, "storage")) || i == 0) {
			json_t *schema =
			    json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");

			set_str(&res->version, json_string_value(json_object_get(v, "name")));
			/* the stored CRD never changes: its schema may be shared */
			json_decref(res->schema);
			res->schema = json_is_object(schema) ? json_incref(schema) : NULL;
		}
		if (json_object_get(json_object_get(v, "subresources"), "status") != NULL)
			res->status_sub = true;
	}
	if (json_object_get(json_object_get(spec, "subresources"), "status") != NULL)
		res->status_sub = true;
	/* kubectl resolves `kubectl get ippl` through discovery's shortNames */
	json_decref(res->short_names);
	res->short_names = json_is_array(json_object_get(names, "shortNames"))
			       ? json_deep_copy(json_object_get(names, "shortNames"))
			       : NULL;
}

/* --- store ----------------------------------------------------------------------------- */

struct store *
store_new(size_t history, size_t history_bytes)
{
	struct store *st = calloc(1, sizeof(*st));

	if (st == NULL)
		abort();
	st->resources = (struct hmap)HMAP_INITIALIZER;
	st->hist_cap = history;
	st->hist_max_bytes = history_bytes;
	st->hist = calloc(history > 0 ? history : 1, sizeof(*st->hist));
	if (st->hist == NULL)
		abort();
	for (size_t i = 0; i < ELEMENTSOF(known_resources); i++) {
		const struct known_resource *k = &known_resources[i];
		struct resource *res = resource_add(st, k->group, k->plural);
		res->kind = xstrdup(k->kind);
		res->version = xstrdup(k->version);
		res->namespaced = k->namespaced;
		res->status_sub = k->status_sub;
		res->builtin = k->builtin;
		if (strcmp(k->plural, "customresourcedefinitions") == 0)
			res->short_names = json_pack("[s,s]", "crd", "crds");
	}
	return st;
}

void
store_set_event_cb(struct store *st, store_event_fn fn, void *userdata)
{
	st->event_cb = fn;
	st->event_ud = userdata;
}

static void
event_clear(struct event *ev)
{
	free(ev->key);
	json_decref(ev->obj);
	json_decref(ev->prev);
	free(ev->line);
	memset(ev, 0, sizeof(*ev));
}

static void
object_free(struct object *o)
{
	if (o == NULL)
		return;
	free(o->key);
	json_decref(o->json);
	free(o->ser);
	free(o);
}

struct store *
store_free(struct store *st)
{
	if (st == NULL)
		return NULL;
	for (size_t i = 0; i < st->hist_len; i++)
		event_clear(&st->hist[(st->hist_start + i) % st->hist_cap]);
	free(st->hist);
	for (size_t i = 0; i < st->nres; i++) {
		struct resource *res = st->reslist[i];
		struct object *o;

		HMAP_FOR_EACH_SAFE(o, node, &res->objs)
		object_free(o);
		hmap_destroy(&res->objs);
		free(res->sorted);
		free(res->id);
		free(res->group);
		free(res->plural);
		free(res->kind);
		free(res->version);
		json_decref(res->short_names);
		json_decref(res->schema);
		free(res);
	}
	free(st->reslist);
	hmap_destroy(&st->resources);
	free(st);
	return NULL;
}

uint64_t
store_rv(const struct store *st)
{
	return st->rv;
}

size_t
store_object_count(const struct store *st)
{
	return st->nobjects;
}

uint64_t
store_writes(const struct store *st)
{
	return st->writes;
}

uint64_t
store_compacted_rv(const struct store *st)
{
	return st->compacted_rv;
}

void
store_compact(struct store *st)
{
	for (size_t i = 0; i < st->hist_len; i++)
		event_clear(&st->hist[(st->hist_start + i) % st->hist_cap]);
	st->hist_start = 0;
	st->hist_len = 0;
	st->hist_bytes = 0;
	st->compacted_rv = st->rv;
}

static void
drop_oldest(struct store *st)
{
	struct event *old = &st->hist[st->hist_start];

	st->compacted_rv = old->rv;
	st->hist_bytes -= old->line != NULL ? strlen(old->line) : 0;
	event_clear(old);
	st->hist_start = (st->hist_start + 1) % st->hist_cap;
	st->hist_len--;
}

const char *
event_type_name(enum event_type t)
{
	static const char *const names[] = {
	    [EVENT_ADDED] = "ADDED",
	    [EVENT_MODIFIED] = "MODIFIED",
	    [EVENT_DELETED] = "DELETED",
	};
	return names[t];
}

const char *
store_object_ser(struct object *o)
{
	if (o->ser == NULL)
		o->ser = json_dumps(o->json, JSON_COMPACT);
	return o->ser;
}

const char *
store_event_line(struct event *ev)
{
	if (ev->line == NULL) {
		char *s = json_dumps(ev->obj, JSON_COMPACT);
		size_t n = strlen(s) + 64;

		ev->line = malloc(n);
		if (ev->line == NULL)
			abort();
		snprintf(
		    ev->line, n, "{\"type\":\"%s\",\"object\":%s}\n", event_type_name(ev->type), s);
		free(s);
	}
	return ev->line;
}

/* Record an event (takes obj and prev references) and notify. */
static void
emit(struct store *st, struct resource *res, enum event_type type, const char *key, json_t *obj,
    json_t *prev)
{
	struct event *ev;

	st->writes++;
	if (st->hist_cap == 0) {
		struct event tmp = {.rv = st->rv,
		    .type = type,
		    .res = res,
		    .key = xstrdup(key),
		    .obj = obj,
		    .prev = prev};
		st->compacted_rv = st->rv;
		if (st->event_cb != NULL)
			st->event_cb(st->event_ud, &tmp);
		event_clear(&tmp);
		return;
	}
	if (st->hist_len == st->hist_cap)
		drop_oldest(st);
	ev = &st->hist[(st->hist_start + st->hist_len) % st->hist_cap];
	st->hist_len++;
	*ev = (struct event){
	    .rv = st->rv, .type = type, .res = res, .key = xstrdup(key), .obj = obj, .prev = prev};
	/* The line is needed by watchers anyway; its size bounds the history's memory. */
	st->hist_bytes += strlen(store_event_line(ev));
	while (st->hist_max_bytes > 0 && st->hist_bytes > st->hist_max_bytes && st->hist_len > 1)
		drop_oldest(st);
	if (st->event_cb != NULL)
		st->event_cb(st->event_ud, ev);
}

static void
set_rv(json_t *obj, uint64_t rv)
{
	char buf[32];
	json_t *meta = json_object_get(obj, "metadata");

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
	json_object_set_new(meta, "resourceVersion", json_string(buf));
}

static bool
valid_name(const char *n)
{
	size_t len = strlen(n);

	if (len == 0 || len > 253)
		return false;
	for (const char *p = n; *p != '\0'; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' ||
			*p == '.' || *p == ':'))
			return false;
	return n[0] != '-' && n[0] != '.' && n[len - 1] != '-' && n[len - 1] != '.';
}

static void
insert_object(struct store *st, struct resource *res, const char *key, json_t *obj)
{
	struct object *o = calloc(1, sizeof(*o));

	if (o == NULL)
		abort();
	o->key = xstrdup(key);
	o->json = obj;
	if (hmap_insert(&res->objs, &o->node, hash64(key, strlen(key), 0)) < 0)
		abort();
	res->dirty = true;
	st->nobjects++;
}

static void
replace_object(struct store *st, struct object *o, json_t *obj)
{
	json_decref(o->json);
	o->json = obj;
	free(o->ser);
	o->ser = NULL;
}

static void
remove_object(struct store *st, struct resource *res, struct object *o)
{
	hmap_remove(&res->objs, &o->node);
	res->dirty = true;
	st->nobjects--;
	object_free(o);
}

static void
fill_type(struct resource *res, json_t *obj)
{
	if (!json_is_string(json_object_get(obj, "kind")))
		json_object_set_new(obj, "kind", json_string(res->kind));
	else if (res->kind == NULL || !res->builtin)
		set_str(&res->kind, json_string_value(json_object_get(obj, "kind")));
	if (!json_is_string(json_object_get(obj, "apiVersion"))) {
		char av[256];
		if (res->group[0] != '\0')
			snprintf(av, sizeof(av), "%s/%s", res->group, res->version);
		else
			snprintf(av, sizeof(av), "%s", res->version);
		json_object_set_new(obj, "apiVersion", json_string(av));
	}
}

static void
crd_status(json_t *crd)
{
	json_t *spec = json_object_get(crd, "spec");
	json_t *status = json_object(), *conds = json_array(), *stored = json_array();
	json_t *versions = json_object_get(spec, "versions"), *v;
	char now[32];
	size_t i;

	now_rfc3339(now);
	json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "NamesAccepted",
					 "status", "True", "reason", "NoConflicts", "message",
					 "no conflicts found", "lastTransitionTime", now));
	json_array_append_new(
	    conds, json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", "Established", "status", "True",
		       "reason", "InitialNamesAccepted", "message",
		       "the initial names have been accepted", "lastTransitionTime", now));
	json_array_foreach(versions, i, v)
	{
		if (json_is_true(json_object_get(v, "storage")))
			json_array_append(stored, json_object_get(v, "name"));
	}
	json_object_set_new(status, "conditions", conds);
	json_object_set(status, "acceptedNames",
	    json_object_get(spec, "names") != NULL ? json_object_get(spec, "names")
						   : json_object());
	json_object_set_new(status, "storedVersions", stored);
	json_object_set_new(crd, "status", status);
}

static bool
is_crd_resource(const struct resource *res)
{
	return strcmp(res->id, "apiextensions.k8s.io/customresourcedefinitions") == 0;
}

static const char generate_chars[] = "bcdfghjklmnpqrstvwxz2456789";

int
store_create(struct store *st, struct resource *res, const char *ns, json_t *body, json_t **ret,
    struct api_err *err)
{
	char qn[300], name[300], uid[37], now[32], *key;
	json_t *obj, *meta;
	const char *n, *bns;

	qualified(res, qn, sizeof(qn));
	if (!json_is_object(body)) {
		set_err(err, 400, "BadRequest", "the body of the request was not a JSON object");
		return -1;
	}
	obj = json_deep_copy(body);
	meta = json_object_get(obj, "metadata");
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(obj, "metadata", meta);
	}
	n = json_string_value(json_object_get(meta, "name"));
	bns = json_string_value(json_object_get(meta, "namespace"));
	if (res->namespaced && bns != NULL && bns[0] != '\0' && strcmp(bns, ns) != 0) {
		set_err(err, 422, "Invalid",
		    "the namespace of the provided object (%s) does not match the namespace sent "
		    "on the request (%s)",
		    bns, ns);
		json_decref(obj);
		return -1;
	}
	if (n == NULL || n[0] == '\0') {
		const char *gen = json_string_value(json_object_get(meta, "generateName"));
		if (gen == NULL || gen[0] == '\0') {
			set_err(err, 422, "Invalid",
			    "%s \"\" is invalid: metadata.name: Required value: name or "
			    "generateName is required",
			    res->kind);
			json_decref(obj);
			return -1;
		}
		for (int tries = 0;; tries++) {
			unsigned char rnd[5];
			size_t gl = strlen(gen);
			char *k;

			if (gl > 58)
				gl = 58;
			RAND_bytes(rnd, sizeof(rnd));
			memcpy(name, gen, gl);
			for (size_t i = 0; i < 5; i++)
				name[gl + i] =
				    generate_chars[rnd[i] % (sizeof(generate_chars) - 1)];
			name[gl + 5] = '\0';
			k = make_key(res->namespaced ? ns : NULL, name);
			bool taken = object_find(res, k) != NULL;
			free(k);
			if (!taken || tries > 100)
				break;
		}
		json_object_set_new(meta, "name", json_string(name));
	} else {
		snprintf(name, sizeof(name), "%s", n);
	}
	if (!valid_name(name)) {
		set_err(err, 422, "Invalid",
		    "%s \"%s\" is invalid: metadata.name: Invalid value: \"%s\": a lowercase RFC "
		    "1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'",
		    res->kind, name, name);
		json_decref(obj);
		return -1;
	}
	key = make_key(res->namespaced ? ns : NULL, name);
	if (object_find(res, key) != NULL) {
		set_err(err, 409, "AlreadyExists", "%s \"%s\" already exists", qn, name);
		free(key);
		json_decref(obj);
		return -1;
	}
	if (res->namespaced)
		json_object_set_new(meta, "namespace", json_string(ns));
	else
		json_object_del(meta, "namespace");
	new_uid(uid);
	now_rfc3339(now);
	json_object_set_new(meta, "uid", json_string(uid));
	json_object_set_new(meta, "creationTimestamp", json_string(now));
	json_object_set_new(meta, "generation", json_integer(1));
	json_object_del(meta, "deletionTimestamp");
	json_object_del(meta, "deletionGracePeriodSeconds");
	json_object_del(meta, "managedFields");
	json_object_del(meta, "selfLink");
	if (json_is_array(json_object_get(meta, "finalizers")) &&
	    json_array_size(json_object_get(meta, "finalizers")) == 0)
		json_object_del(meta, "finalizers"); /* omitempty */
	if (res->status_sub && !res->builtin)
		json_object_del(obj, "status");
	fill_type(res, obj);
	if (res->schema) {
		json_t *fixed = schema_apply(res->schema, obj);

		json_decref(obj);
		obj = fixed;
	}
	if (is_crd_resource(res)) {
		crd_status(obj);
		register_crd(st, obj);
	}
	st->rv++;
	set_rv(obj, st->rv);
	insert_object(st, res, key, obj);
	emit(st, res, EVENT_ADDED, key, json_incref(obj), NULL);
	free(key);
	*ret = json_incref(obj);
	return 0;
}

int
store_get(struct store *st, struct resource *res, const char *ns, const char *name,
    struct object **ret, struct api_err *err)
{
	char *key = make_key(res->namespaced ? ns : NULL, name);
	struct object *o = object_find(res, key);

	free(key);
	if (o == NULL) {
		char qn[300];
		qualified(res, qn, sizeof(qn));
		set_err(err, 404, "NotFound", "%s \"%s\" not found", qn, name);
		return -1;
	}
	*ret = o;
	return 0;
}

/* Everything but metadata and status, for the generation rule. */
static bool
spec_equal(json_t *a, json_t *b)
{
	json_t *ca = json_copy(a), *cb = json_copy(b);
	bool eq;

	json_object_del(ca, "metadata");
	json_object_del(ca, "status");
	json_object_del(cb, "metadata");
	json_object_del(cb, "status");
	eq = json_equal(ca, cb);
	json_decref(ca);
	json_decref(cb);
	return eq;
}

static bool
finalizers_empty(json_t *obj)
{
	return json_array_size(json_object_get(json_object_get(obj, "metadata"), "finalizers")) ==
	       0;
}

/*
 * A new document for a write: a new top level and a private copy of metadata (the only parts
 * the store changes), every other subtree shared with src. Stored documents are never
 * changed in place, so sharing their subtrees (and those of request bodies, which nothing
 * changes either) is safe and saves deep copies of large specs and statuses.
 */
static json_t *
copy_shared(json_t *src)
{
	json_t *obj = json_copy(src), *meta = json_object_get(src, "metadata");

	json_object_set_new(
	    obj, "metadata", json_is_object(meta) ? json_deep_copy(meta) : json_object());
	return obj;
}

/* Server-owned metadata is kept from the stored object. */
static const char *const server_meta[] = {
    "uid",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "namespace",
    "name",
    "resourceVersion",
};

static int
update_object(struct store *st, struct resource *res, struct object *o, json_t *body, bool status,
    json_t **ret, struct api_err *err)
{
	json_t *old = o->json, *obj, *meta, *ometa = json_object_get(old, "metadata");
	const char *name = json_string_value(json_object_get(ometa, "name"));
	const char *brv, *bname, *bns, *ons;
	char qn[300];

	qualified(res, qn, sizeof(qn));
	if (!json_is_object(body)) {
		set_err(err, 400, "BadRequest", "the body of the request was not a JSON object");
		return -1;
	}
	meta = json_object_get(body, "metadata");
	bname = json_string_value(json_object_get(meta, "name"));
	bns = json_string_value(json_object_get(meta, "namespace"));
	ons = json_string_value(json_object_get(ometa, "namespace"));
	if (bname != NULL && strcmp(bname, name) != 0) {
		set_err(err, 400, "BadRequest",
		    "the name of the object (%s) does not match the name on the URL (%s)", bname,
		    name);
		return -1;
	}
	if (res->namespaced && bns != NULL && bns[0] != '\0' && ons != NULL &&
	    strcmp(bns, ons) != 0) {
		set_err(err, 400, "BadRequest",
		    "the namespace of the object (%s) does not match the namespace on the URL (%s)",
		    bns, ons);
		return -1;
	}
	brv = json_string_value(json_object_get(meta, "resourceVersion"));
	if (brv != NULL && brv[0] != '\0' &&
	    strcmp(brv, json_string_value(json_object_get(ometa, "resourceVersion"))) != 0) {
		set_err(err, 409, "Conflict",
		    "Operation cannot be fulfilled on %s \"%s\": the object has been modified; "
		    "please apply your changes to the latest version and try again",
		    qn, name);
		return -1;
	}
	if (status) {
		json_t *s = json_object_get(body, "status");
		obj = copy_shared(old);
		if (s != NULL)
			json_object_set(obj, "status", s);
		else
			json_object_del(obj, "status");
	} else {
		json_t *nmeta;
		obj = copy_shared(body);
		nmeta = json_object_get(obj, "metadata");
		for (size_t i = 0; i < ELEMENTSOF(server_meta); i++) {
			json_t *v = json_object_get(ometa, server_meta[i]);
			if (v != NULL)
				json_object_set_new(nmeta, server_meta[i], json_deep_copy(v));
			else
				json_object_del(nmeta, server_meta[i]);
		}
		json_object_del(nmeta, "managedFields");
		if (res->status_sub) {
			json_t *s = json_object_get(old, "status");
			if (s != NULL)
				json_object_set(obj, "status", s);
			else
				json_object_del(obj, "status");
		}
		fill_type(res, obj);
		/* Once deleting, finalizers may only be removed. */
		if (json_object_get(ometa, "deletionTimestamp") != NULL &&
		    json_array_size(json_object_get(nmeta, "finalizers")) >
			json_array_size(json_object_get(ometa, "finalizers"))) {
			set_err(err, 422, "Invalid",
			    "%s \"%s\" is invalid: metadata.finalizers: Forbidden: no new "
			    "finalizers "
			    "can be added if the object is being deleted",
			    res->kind, name);
			json_decref(obj);
			return -1;
		}
		if (is_crd_resource(res) && json_object_get(obj, "status") == NULL)
			crd_status(obj);
	}
	if (json_is_array(json_object_get(json_object_get(obj, "metadata"), "finalizers")) &&
	    finalizers_empty(obj))
		json_object_del(json_object_get(obj, "metadata"), "finalizers"); /* omitempty */
	if (res->schema) {
		json_t *fixed = schema_apply(res->schema, obj);

		json_decref(obj);
		obj = fixed;
	}
	if (json_equal(obj, old)) {
		/* No-op write: no new resourceVersion, no event. */
		json_decref(obj);
		*ret = json_incref(old);
		return 0;
	}
	if (!spec_equal(obj, old)) {
		json_t *g = json_object_get(json_object_get(obj, "metadata"), "generation");
		json_object_set_new(json_object_get(obj, "metadata"), "generation",
		    json_integer(json_integer_value(g) + 1));
	}
	st->rv++;
	set_rv(obj, st->rv);
	if (is_crd_resource(res))
		register_crd(st, obj);
	if (json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp") != NULL &&
	    finalizers_empty(obj)) {
		char *key = xstrdup(o->key);
		json_t *prev = json_incref(old);
		remove_object(st, res, o);
		emit(st, res, EVENT_DELETED, key, json_incref(obj), prev);
		free(key);
		*ret = obj;
		return 0;
	}
	json_incref(old);
	replace_object(st, o, obj);
	emit(st, res, EVENT_MODIFIED, o->key, json_incref(obj), old);
	*ret = json_incref(obj);
	return 0;
}

int
store_update(struct store *st, struct resource *res, const char *ns, const char *name, json_t *body,
    bool status, json_t **ret, struct api_err *err)
{
	struct object *o = NULL;

	if (store_get(st, res, ns, name, &o, err) < 0)
		return -1;
	return update_object(st, res, o, body, status, ret, err);
}

int
store_patch(struct store *st, struct resource *res, const char *ns, const char *name,
    enum patch_type type, json_t *patch, bool status, json_t **ret, struct api_err *err)
{
	struct object *o = NULL;
	json_t *doc;
	int r;

	if (store_get(st, res, ns, name, &o, err) < 0)
		return -1;
	if (type == PATCH_MERGE) {
		if (!json_is_object(patch)) {
			set_err(err, 400, "BadRequest", "a merge patch must be a JSON object");
			return -1;
		}
		doc = merge_patch(o->json, patch);
	} else {
		r = json_patch(o->json, patch, &doc);
		if (r == -EBADMSG) {
			set_err(err, 400, "BadRequest", "invalid JSON patch document");
			return -1;
		}
		if (r < 0) {
			set_err(err, 422, "Invalid",
			    "the server rejected our request due to an error in our request: a "
			    "JSON "
			    "patch operation does not apply");
			return -1;
		}
	}
	if (!json_is_object(doc) || !json_is_object(json_object_get(doc, "metadata"))) {
		json_decref(doc);
		set_err(err, 422, "Invalid", "the patched object is not a Kubernetes object");
		return -1;
	}
	r = update_object(st, res, o, doc, status, ret, err);
	json_decref(doc);
	return r;
}

int
store_delete(struct store *st, struct resource *res, const char *ns, const char *name, json_t *opts,
    json_t **ret, struct api_err *err)
{
	struct object *o = NULL;
	json_t *pre = json_object_get(opts, "preconditions"), *obj, *meta, *ometa;
	const char *puid = json_string_value(json_object_get(pre, "uid"));
	const char *prv = json_string_value(json_object_get(pre, "resourceVersion"));
	const char *ouid, *orv;
	char qn[300], now[32];

	if (store_get(st, res, ns, name, &o, err) < 0)
		return -1;
	qualified(res, qn, sizeof(qn));
	ometa = json_object_get(o->json, "metadata");
	ouid = json_string_value(json_object_get(ometa, "uid"));
	orv = json_string_value(json_object_get(ometa, "resourceVersion"));
	if (puid != NULL && strcmp(puid, ouid != NULL ? ouid : "") != 0) {
		set_err(err, 409, "Conflict",
		    "Operation cannot be fulfilled on %s \"%s\": Precondition failed: UID in "
		    "precondition: %s, UID in object meta: %s",
		    qn, name, puid, ouid != NULL ? ouid : "");
		return -1;
	}
	if (prv != NULL && strcmp(prv, orv != NULL ? orv : "") != 0) {
		set_err(err, 409, "Conflict",
		    "Operation cannot be fulfilled on %s \"%s\": Precondition failed: "
		    "ResourceVersion in precondition: %s, ResourceVersion in object meta: %s",
		    qn, name, prv, orv != NULL ? orv : "");
		return -1;
	}
	if (!finalizers_empty(o->json)) {
		if (json_object_get(ometa, "deletionTimestamp") != NULL) {
			*ret = json_incref(o->json);
			return 0;
		}
		obj = copy_shared(o->json);
		meta = json_object_get(obj, "metadata");
		now_rfc3339(now);
		json_object_set_new(meta, "deletionTimestamp", json_string(now));
		json_object_set_new(meta, "deletionGracePeriodSeconds", json_integer(0));
		st->rv++;
		set_rv(obj, st->rv);
		json_t *old = json_incref(o->json);
		replace_object(st, o, obj);
		emit(st, res, EVENT_MODIFIED, o->key, json_incref(obj), old);
		*ret = json_incref(obj);
		return 0;
	}
	obj = copy_shared(o->json);
	st->rv++;
	set_rv(obj, st->rv);
	{
		char *key = xstrdup(o->key);
		json_t *prev = json_incref(o->json);
		remove_object(st, res, o);
		emit(st, res, EVENT_DELETED, key, json_incref(obj), prev);
		free(key);
	}
	*ret = obj;
	return 0;
}

/* --- lists ----------------------------------------------------------------------------- */

static int
cmp_obj(const void *a, const void *b)
{
	const struct object *const *x = a, *const *y = b;

	return strcmp((*x)->key, (*y)->key);
}

static void
sort_resource(struct resource *res)
{
	struct object *o;
	size_t n = 0;

	if (!res->dirty && res->sorted != NULL)
		return;
	free(res->sorted);
	res->sorted = malloc((hmap_count(&res->objs) + 1) * sizeof(*res->sorted));
	if (res->sorted == NULL)
		abort();
	HMAP_FOR_EACH(o, node, &res->objs)
	res->sorted[n++] = o;
	qsort(res->sorted, n, sizeof(*res->sorted), cmp_obj);
	res->nsorted = n;
	res->dirty = false;
}

/* First index with key > after (or >= prefix when after is NULL). */
static size_t
lower_bound(struct resource *res, const char *k, bool strictly_after)
{
	size_t lo = 0, hi = res->nsorted;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(res->sorted[mid]->key, k);
		if (c < 0 || (strictly_after && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static char *
encode_continue(uint64_t rv, const char *key)
{
	json_t *j =
	    json_pack("{s:s, s:I, s:s}", "v", "meta.k8s.io/v1", "rv", (json_int_t)rv, "start", key);
	char *s = json_dumps(j, JSON_COMPACT);
	size_t n = strlen(s);
	char *out = malloc(4 * ((n + 2) / 3) + 1);

	if (out == NULL)
		abort();
	EVP_EncodeBlock((unsigned char *)out, (unsigned char *)s, (int)n);
	free(s);
	json_decref(j);
	return out;
}

static int
decode_continue(const char *tok, uint64_t *ret_rv, char **ret_key)
{
	size_t n = strlen(tok);
	unsigned char *buf = malloc(n + 4);
	json_t *j;
	int len;
	const char *key;
	json_int_t rv;

	if (buf == NULL || n % 4 != 0) {
		free(buf);
		return -EINVAL;
	}
	len = EVP_DecodeBlock(buf, (const unsigned char *)tok, (int)n);
	if (len < 0) {
		free(buf);
		return -EINVAL;
	}
	while (len > 0 && buf[len - 1] == '\0')
		len--; /* padding */
	j = json_loadb((const char *)buf, (size_t)len, 0, NULL);
	free(buf);
	if (j == NULL)
		return -EINVAL;
	key = json_string_value(json_object_get(j, "start"));
	rv = json_integer_value(json_object_get(j, "rv"));
	if (key == NULL || rv <= 0) {
		json_decref(j);
		return -EINVAL;
	}
	*ret_rv = (uint64_t)rv;
	*ret_key = xstrdup(key);
	json_decref(j);
	return 0;
}

struct past {
	char *key;
	uint64_t rv;  /* of the event after the list's resourceVersion */
	json_t *prev; /* state at the list's resourceVersion, NULL = did not exist */
	bool exists_now;
};

/* By key, then by event (the first event after the list's version holds its state then). */
static int
cmp_past(const void *a, const void *b)
{
	const struct past *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c != 0 ? c : (x->rv > y->rv) - (x->rv < y->rv);
}

static int
cmp_past_key(const void *key, const void *b)
{
	return strcmp(key, ((const struct past *)b)->key);
}

static void
push_item(struct list_result *lr, size_t *cap, struct object *o, json_t *json)
{
	if (lr->n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		lr->items = realloc(lr->items, *cap * sizeof(*lr->items));
		if (lr->items == NULL)
			abort();
	}
	lr->items[lr->n++] = (struct list_item){.obj = o, .json = json};
}

int
store_list(struct store *st, struct resource *res, const char *ns, const struct selector *labels,
    const struct selector *fields, size_t limit, uint64_t at_rv, const char *cont,
    struct list_result *ret, struct api_err *err)
{
	uint64_t rv = st->rv;
	char *after = NULL, prefix[300];
	struct past *pasts = NULL;
	size_t npasts = 0, cap = 0, i, pi = 0, plen;
	const char *last = NULL;
	bool more = false;

	memset(ret, 0, sizeof(*ret));
	if (ns != NULL && res->namespaced)
		snprintf(prefix, sizeof(prefix), "%s/", ns);
	else
		prefix[0] = '\0';
	plen = strlen(prefix);
	if (cont != NULL && cont[0] != '\0') {
		if (decode_continue(cont, &rv, &after) < 0) {
			set_err(err, 400, "BadRequest", "continue key is not valid");
			return -1;
		}
		if (rv < st->compacted_rv || rv > st->rv) {
			set_err(err, 410, "Expired",
			    "The provided continue parameter is too old to display a consistent "
			    "list "
			    "result. You can start a new list without the continue parameter.");
			free(after);
			return -1;
		}
	} else if (at_rv > 0) {
		if (at_rv > st->rv) {
			set_err(err, 504, "Timeout",
			    "Timeout: Too large resource version: %llu, current: %llu",
			    (unsigned long long)at_rv, (unsigned long long)st->rv);
			return -1;
		}
		if (at_rv < st->compacted_rv) {
			set_err(err, 410, "Expired", "too old resource version: %llu (%llu)",
			    (unsigned long long)at_rv, (unsigned long long)st->compacted_rv);
			return -1;
		}
		rv = at_rv;
	}
	if (rv != st->rv) {
		/* Objects changed since rv: their state at rv is the prev of the first later
		 * event. */
		for (size_t h = 0; h < st->hist_len; h++) {
			struct event *ev = &st->hist[(st->hist_start + h) % st->hist_cap];
			if (ev->rv <= rv || ev->res != res)
				continue;
			if (strncmp(ev->key, prefix, plen) != 0 ||
			    (after != NULL && strcmp(ev->key, after) <= 0))
				continue;
			pasts = realloc(pasts, (npasts + 1) * sizeof(*pasts));
			if (pasts == NULL)
				abort();
			pasts[npasts++] = (struct past){.key = ev->key,
			    .rv = ev->rv,
			    .prev = ev->prev,
			    .exists_now = object_find(res, ev->key) != NULL};
		}
		if (npasts > 0) { /* pasts is NULL when no later event falls in the range */
			size_t n = 1;

			/* sorted by key, each key's first later event kept */
			qsort(pasts, npasts, sizeof(*pasts), cmp_past);
			for (size_t p = 1; p < npasts; p++)
				if (strcmp(pasts[p].key, pasts[n - 1].key) != 0)
					pasts[n++] = pasts[p];
			npasts = n;
		}
	}
	ret->rv = rv;
	sort_resource(res);
	i = after != NULL ? lower_bound(res, after, true) : lower_bound(res, prefix, false);
	if (after != NULL && strcmp(after, prefix) < 0)
		i = lower_bound(res, prefix, false);
	for (;;) {
		struct object *o = NULL;
		struct past *p = NULL;
		json_t *state;
		const char *key;

		/* skip past entries that exist now: they are handled in the main sequence */
		while (pi < npasts && pasts[pi].exists_now)
			pi++;
		bool have_o = i < res->nsorted && strncmp(res->sorted[i]->key, prefix, plen) == 0;
		bool have_p = pi < npasts;
		if (!have_o && !have_p)
			break;
		if (have_o && (!have_p || strcmp(res->sorted[i]->key, pasts[pi].key) < 0)) {
			o = res->sorted[i++];
			key = o->key;
			if (npasts > 0 &&
			    (p = bsearch(key, pasts, npasts, sizeof(*pasts), cmp_past_key)) != NULL)
				state = p->prev;
			else
				state = o->json;
		} else {
			p = &pasts[pi++];
			key = p->key;
			state = p->prev;
			o = NULL;
		}
		if (state == NULL)
			continue; /* created after the list's resourceVersion */
		if (limit > 0 && ret->n == limit) {
			more = true;
			break;
		}
		if (!selector_match(labels, state) || !selector_match(fields, state)) {
			last = key;
			continue;
		}
		if (p != NULL)
			push_item(ret, &cap, NULL, json_incref(state));
		else
			push_item(ret, &cap, o, NULL);
		last = key;
	}
	if (more && last != NULL)
		ret->cont = encode_continue(rv, last);
	free(pasts);
	free(after);
	return 0;
}

void
list_result_clear(struct list_result *lr)
{
	for (size_t i = 0; i < lr->n; i++)
		json_decref(lr->items[i].json);
	free(lr->items);
	free(lr->cont);
	memset(lr, 0, sizeof(*lr));
}

int
store_replay(struct store *st, struct resource *res, uint64_t rv, store_replay_fn fn,
    void *userdata, struct api_err *err)
{
	size_t lo = 0, hi = st->hist_len;

	if (rv < st->compacted_rv) {
		set_err(err, 410, "Expired", "too old resource version: %llu (%llu)",
		    (unsigned long long)rv, (unsigned long long)st->compacted_rv);
		return -1;
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (st->hist[(st->hist_start + mid) % st->hist_cap].rv <= rv)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < st->hist_len; i++) {
		struct event *ev = &st->hist[(st->hist_start + i) % st->hist_cap];
		if (ev->res == res)
			fn(userdata, ev);
	}
	return 0;
}

/* --- persistence ----------------------------------------------------------------------- */

json_t *
store_dump(struct store *st)
{
	json_t *out = json_object(), *resources = json_array(), *objects = json_array();

	json_object_set_new(out, "resourceVersion", json_integer((json_int_t)st->rv));
	for (size_t i = 0; i < st->nres; i++) {
		struct resource *res = st->reslist[i];

		json_array_append_new(
		    resources, json_pack("{s:s, s:s, s:s, s:s, s:b, s:b, s:b}", "group", res->group,
				   "plural", res->plural, "kind", res->kind, "version",
				   res->version, "namespaced", res->namespaced, "statusSubresource",
				   res->status_sub, "builtin", res->builtin));
		sort_resource(res);
		for (size_t j = 0; j < res->nsorted; j++)
			json_array_append_new(
			    objects, json_pack("{s:s, s:s, s:O}", "resource", res->id, "key",
					 res->sorted[j]->key, "object", res->sorted[j]->json));
	}
	json_object_set_new(out, "resources", resources);
	json_object_set_new(out, "objects", objects);
	return out;
}

int
store_load(struct store *st, json_t *data)
{
	json_t *resources = json_object_get(data, "resources");
	json_t *objects = json_object_get(data, "objects"), *v;
	size_t i;

	if (!json_is_object(data) || !json_is_array(objects))
		return -EBADMSG;
	json_array_foreach(resources, i, v)
	{
		const char *group = json_string_value(json_object_get(v, "group"));
		const char *plural = json_string_value(json_object_get(v, "plural"));
		struct resource *res;

		if (group == NULL || plural == NULL)
			return -EBADMSG;
		res = store_resource(st, group, plural, true);
		set_str(&res->kind, json_string_value(json_object_get(v, "kind")));
		set_str(&res->version, json_string_value(json_object_get(v, "version")));
		res->namespaced = json_is_true(json_object_get(v, "namespaced"));
		res->status_sub = json_is_true(json_object_get(v, "statusSubresource"));
		res->builtin = json_is_true(json_object_get(v, "builtin"));
	}
	json_array_foreach(objects, i, v)
	{
		const char *id = json_string_value(json_object_get(v, "resource"));
		const char *key = json_string_value(json_object_get(v, "key"));
		json_t *obj = json_object_get(v, "object");
		struct resource *res = id != NULL ? resource_find(st, id) : NULL;

		if (res == NULL || key == NULL || !json_is_object(obj))
			return -EBADMSG;
		if (object_find(res, key) == NULL) {
			insert_object(st, res, key, json_deep_copy(obj));
			if (is_crd_resource(res)) /* its schema again (not in the resource table) */
				register_crd(st, object_find(res, key)->json);
		}
	}
	st->rv = (uint64_t)json_integer_value(json_object_get(data, "resourceVersion"));
	st->compacted_rv = st->rv;
	return 0;
}
