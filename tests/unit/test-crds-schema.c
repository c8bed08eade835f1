/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CRD YAML files in crds/ against the C codec: every schema property is known to the codec and
 * vice versa, with the same type, required-ness, format, pattern, limits, default, enum and
 * immutability; CRD names, scope, subresource and printer columns are as the README (The API) says;
 * and on sample values the schema (evaluated here, patterns compiled from the YAML text) and the
 * codec accept and refuse the same things, except where the schema stores what upstream's
 * stores and the codec alone refuses (CODEC_REFUSES). For the operator: every property has a
 * description (what `kubectl explain` prints), both kinds are in the category vmdhcp, the -o
 * wide columns point at real fields, and status.conditions is a plain list as upstream's.
 *
 * Size: about 1000 lines, one file on purpose: the YAML schema evaluator these checks need lives
 * here and nowhere else in the tree.
 */
#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "crds/crds-internal.h"
#include "crds/ippool.h"
#include "crds/vmnetcfg.h"
#include "kube/yaml.h"
#include "lib/ip6.h"
#include "lib/util.h"
#include "tests/runner.h"

static unsigned problems;

static void __attribute__((format(printf, 1, 2))) problem(const char *fmt, ...)
{
	va_list ap;

	printf("\n  ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	problems++;
}

/* Source tree root: test_data_dir() is <root>/tests/data. */
static void
source_path(char *out, size_t size, const char *rel)
{
	const char *d = test_data_dir();
	size_t n = strlen(d), t = strlen("tests/data");

	if (n >= t && strcmp(d + n - t, "tests/data") == 0)
		snprintf(out, size, "%.*s%s", (int)(n - t), d, rel);
	else
		snprintf(out, size, "%s/../../%s", d, rel);
}

static json_t *
load_crd(const char *file)
{
	char path[512], rel[128], *text = NULL;
	size_t len = 0;
	json_t *doc = NULL;
	struct yaml_error err;

	snprintf(rel, sizeof(rel), "crds/%s", file);
	source_path(path, sizeof(path), rel);
	if (read_file(path, 1 << 20, &text, &len) < 0) {
		printf("\n  cannot read %s\n", path);
		return NULL;
	}
	if (yaml_parse_one(text, len, &doc, &err) < 0)
		printf("\n  %s:%u: %s\n", path, err.line, err.message);
	free(text);
	return doc;
}

static json_t *
crd_schema(json_t *crd)
{
	json_t *v = json_array_get(json_object_get(json_object_get(crd, "spec"), "versions"), 0);

	return json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
}

static const char *const type_names[] = {
    [CRD_STRING] = "string",
    [CRD_INTEGER] = "integer",
    [CRD_BOOLEAN] = "boolean",
    [CRD_ARRAY] = "array",
    [CRD_OBJECT] = "object",
    [CRD_MAP] = "object",
};

static bool
has_immutable_rule(const json_t *schema, const char *path)
{
	json_t *rules = json_object_get(schema, "x-kubernetes-validations"), *r;
	size_t i;
	bool found = false;

	json_array_foreach(rules, i, r)
	{
		const char *rule = json_string_value(json_object_get(r, "rule"));

		if (!json_is_string(json_object_get(r, "message")))
			problem("%s: validation rule without message", path);
		if (json_object_get(r, "messageExpression"))
			problem("%s: messageExpression needs Kubernetes 1.27; use message", path);
		if (rule && strcmp(rule, "self == oldSelf") == 0)
			found = true;
	}
	return found;
}

static void
compare_int(const json_t *schema, const char *key, bool has, long long want, const char *path)
{
	json_t *v = json_object_get(schema, key);

	if (!has && v)
		problem("%s: schema has %s, codec has none", path, key);
	else if (has && !v)
		problem("%s: codec has %s %lld, schema has none", path, key, want);
	else if (has && (!json_is_integer(v) || json_integer_value(v) != want))
		problem("%s: %s differs (codec %lld)", path, key, want);
}

static void compare(const json_t *schema, const struct crd_field *f, const char *path);

/*
 * Schema properties the codec does not decode (none now). The decoder reads these objects
 * non-strictly (unknown keys ignored), which the samples below check with a value in place.
 */
static const char *const schema_only[] = {NULL};

static bool
listed(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

static void
compare_children(const json_t *schema, const struct crd_field *children, const char *path)
{
	json_t *props = json_object_get(schema, "properties"), *req, *v;
	const char *k;
	char sub[256];
	size_t i;

	if (!children) {
		if (props)
			problem("%s: schema describes properties, codec does not", path);
		return;
	}
	json_object_foreach(props, k, v)
	{
		const struct crd_field *c = children;

		while (c->key && strcmp(c->key, k) != 0)
			c++;
		crd_path_key(sub, sizeof(sub), path, k);
		if (!c->key) {
			if (!listed(schema_only, sub))
				problem("%s: in the schema, unknown to the codec", sub);
			continue;
		}
		compare(v, c, sub);
	}
	for (const struct crd_field *c = children; c->key; c++) {
		bool in_req = false;

		req = json_object_get(schema, "required");
		json_array_foreach(req, i, v) if (strcmp(json_string_value(v), c->key) == 0)
		    in_req = true;
		crd_path_key(sub, sizeof(sub), path, c->key);
		if (!json_object_get(props, c->key))
			problem("%s: known to the codec, not in the schema", sub);
		if (in_req != c->required)
			problem(
			    "%s: required differs (codec %d, schema %d)", sub, c->required, in_req);
	}
}

static void
compare(const json_t *schema, const struct crd_field *f, const char *path)
{
	const char *type = json_string_value(json_object_get(schema, "type"));
	const char *s;
	char sub[256];
	json_t *en;

	if (!type || strcmp(type, type_names[f->type]) != 0) {
		problem("%s: type %s in the schema, %s in the codec", path, type ? type : "(none)",
		    type_names[f->type]);
		return;
	}
	s = json_string_value(json_object_get(schema, "format"));
	if ((s == NULL) != (f->format == NULL) || (s && strcmp(s, f->format) != 0))
		problem("%s: format differs (schema %s, codec %s)", path, s ? s : "-",
		    f->format ? f->format : "-");
	s = json_string_value(json_object_get(schema, "pattern"));
	if ((s == NULL) != (f->pattern == NULL) || (s && strcmp(s, f->pattern) != 0))
		problem("%s: pattern differs\n    schema %s\n    codec  %s", path, s ? s : "-",
		    f->pattern ? f->pattern : "-");
	compare_int(schema, "maxLength", f->max_length != 0, f->max_length, path);
	compare_int(schema, "maxItems", f->max_items != 0, f->max_items, path);
	compare_int(schema, "minimum", f->has_minimum, f->minimum, path);
	compare_int(schema, "maximum", f->has_maximum, f->maximum, path);
	compare_int(schema, "default", f->has_default, f->dflt, path);
	en = json_object_get(schema, "enum");
	if ((en == NULL) != (f->enum_values == NULL)) {
		problem("%s: enum in only one of schema and codec", path);
	} else if (en) {
		size_t n = 0;

		while (f->enum_values[n])
			n++;
		if (json_array_size(en) != n)
			problem("%s: enum sizes differ", path);
		for (size_t i = 0; i < n && i < json_array_size(en); i++)
			if (!json_is_string(json_array_get(en, i)) ||
			    strcmp(json_string_value(json_array_get(en, i)), f->enum_values[i]) !=
				0)
				problem(
				    "%s: enum[%zu] differs (codec %s)", path, i, f->enum_values[i]);
	}
	if (has_immutable_rule(schema, path) != f->immutable)
		problem("%s: immutability differs (codec %d)", path, f->immutable);

	switch (f->type) {
	case CRD_ARRAY:
		snprintf(sub, sizeof(sub), "%s[]", path);
		if (!f->items || !json_object_get(schema, "items"))
			problem("%s: items described in only one of schema and codec", path);
		else
			compare(json_object_get(schema, "items"), f->items, sub);
		break;
	case CRD_MAP:
		snprintf(sub, sizeof(sub), "%s{}", path);
		if (!f->items || !json_object_get(schema, "additionalProperties"))
			problem("%s: additionalProperties in only one of schema and codec", path);
		else
			compare(json_object_get(schema, "additionalProperties"), f->items, sub);
		break;
	case CRD_OBJECT:
		if (json_object_get(schema, "additionalProperties"))
			problem("%s: schema is a map, codec an object", path);
		compare_children(schema, f->children, path);
		break;
	default:
		break;
	}
}

static void
check_fields(const char *file, const struct crd_field *root)
{
	json_t *crd = load_crd(file);
	struct crd_field top = {.type = CRD_OBJECT, .children = root};

	CU_ASSERT_PTR_NOT_NULL_FATAL(crd);
	problems = 0;
	compare(crd_schema(crd), &top, "");
	CU_ASSERT_EQUAL(problems, 0);
	json_decref(crd);
}

static void
test_ippool_fields(void)
{
	check_fields("ippools.yaml", ippool_fields);
}

static void
test_vmnetcfg_fields(void)
{
	check_fields("virtualmachinenetworkconfigs.yaml", vmnetcfg_fields);
}

/* --- CRD-level settings --------------------------------------------------------------- */

static json_t *schema_at(json_t *schema, const char *path);

static const char *
str_at(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "(none)";
}

struct column {
	const char *name;
	const char *type;
	const char *json_path;
	int priority; /* 1: only with -o wide */
};

/* A plain path (".a.b[0].c"): not a filter, not metadata (the API server's, not ours). */
static bool
plain_field_path(const char *json_path)
{
	return json_path[0] == '.' && !strstr(json_path, "[?") &&
	       strncmp(json_path, ".metadata.", 10) != 0;
}

static void
check_crd(const char *file, const char *kind, const char *plural, const char *const *shorts,
    const struct column *columns)
{
	json_t *crd = load_crd(file), *spec, *names, *ver, *a, *v, *f;
	char name[128];
	size_t i;

	CU_ASSERT_PTR_NOT_NULL_FATAL(crd);
	spec = json_object_get(crd, "spec");
	names = json_object_get(spec, "names");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(crd, "apiVersion")), "apiextensions.k8s.io/v1");
	snprintf(name, sizeof(name), "%s.%s", plural, CRD_GROUP);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_object_get(crd, "metadata"), "name")), name);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(spec, "group")), CRD_GROUP);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(spec, "scope")), "Namespaced");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(names, "kind")), kind);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(names, "plural")), plural);
	a = json_object_get(names, "shortNames");
	CU_ASSERT_EQUAL(json_array_size(a), 2);
	json_array_foreach(a, i, v) if (i < 2)
	    CU_ASSERT_STRING_EQUAL(json_string_value(v), shorts[i]);
	CU_ASSERT_EQUAL_FATAL(json_array_size(json_object_get(spec, "versions")), 1);
	ver = json_array_get(json_object_get(spec, "versions"), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(ver, "name")), CRD_VERSION);
	CU_ASSERT_TRUE(json_is_true(json_object_get(ver, "served")));
	CU_ASSERT_TRUE(json_is_true(json_object_get(ver, "storage")));
	CU_ASSERT_TRUE(
	    json_is_object(json_object_get(json_object_get(ver, "subresources"), "status")));
	a = json_object_get(ver, "additionalPrinterColumns");
	problems = 0;
	for (i = 0; columns[i].name; i++) {
		const struct column *c = &columns[i];
		json_t *p;
		json_int_t prio;

		v = json_array_get(a, i);
		if (!v) {
			problem("%s: column %zu %s missing", file, i, c->name);
			continue;
		}
		p = json_object_get(v, "priority");
		prio = json_is_integer(p) ? json_integer_value(p) : 0; /* absent: 0 */
		if (strcmp(str_at(v, "name"), c->name) != 0 || strcmp(str_at(v, "type"), c->type) ||
		    strcmp(str_at(v, "jsonPath"), c->json_path) != 0 || prio != c->priority)
			problem("%s: column %zu is %s %s %s priority %lld, want %s %s %s priority "
				"%d",
			    file, i, str_at(v, "name"), str_at(v, "type"), str_at(v, "jsonPath"),
			    (long long)prio, c->name, c->type, c->json_path, c->priority);
		/* a column on a misspelt field is silently empty: the field must exist */
		if (!plain_field_path(c->json_path))
			continue;
		f = schema_at(crd_schema(crd), c->json_path + 1);
		if (!f)
			problem(
			    "%s: column %s: %s is not in the schema", file, c->name, c->json_path);
		else if (strcmp(str_at(f, "type"), c->type) != 0)
			problem("%s: column %s is %s, its field %s", file, c->name, c->type,
			    str_at(f, "type"));
	}
	if (json_array_size(a) != i)
		problem("%s: %zu columns, want %zu", file, json_array_size(a), i);
	CU_ASSERT_EQUAL(problems, 0);
	json_decref(crd);
}

static const struct column ippl_cols[] = {
    {"NETWORK", "string", ".spec.networkName", 0},
    {"AVAILABLE", "integer", ".status.ipv4.available", 0},
    {"USED", "integer", ".status.ipv4.used", 0},
    {"REGISTERED", "string", ".status.conditions[?(@.type=='Registered')].status", 0},
    {"CACHEREADY", "string", ".status.conditions[?(@.type=='CacheReady')].status", 0},
    {"AGENTREADY", "string", ".status.conditions[?(@.type=='AgentReady')].status", 0},
    {"AGE", "date", ".metadata.creationTimestamp", 0},
    {"CIDR", "string", ".spec.ipv4Config.cidr", 1},
    {"SERVERIP", "string", ".spec.ipv4Config.serverIP", 1},
    {"START", "string", ".spec.ipv4Config.pool.start", 1},
    {"END", "string", ".spec.ipv4Config.pool.end", 1},
    {"CIDR6", "string", ".spec.ipv6Config.cidr", 1},
    {"AVAILABLE6", "integer", ".status.ipv6.available", 1},
    {"USED6", "integer", ".status.ipv6.used", 1},
    {NULL, NULL, NULL, 0},
};

static const struct column vm_cols[] = {
    {"VMNAME", "string", ".spec.vmName", 0},
    {"ALLOCATED", "string", ".status.conditions[?(@.type=='Allocated')].status", 0},
    {"DISABLED", "string", ".status.conditions[?(@.type=='Disabled')].status", 0},
    {"INSYNCED", "string", ".status.conditions[?(@.type=='InSynced')].status", 0},
    {"AGE", "date", ".metadata.creationTimestamp", 0},
    {"MAC", "string", ".status.networkConfigs[0].macAddress", 1},
    {"IP", "string", ".status.networkConfigs[0].allocatedIPAddress", 1},
    {"IP6", "string", ".status.networkConfigs[0].allocatedIPv6Address", 1},
    {NULL, NULL, NULL, 0},
};

static void
test_crd_settings(void)
{
	static const char *const ippl_short[] = {"ippl", "ippls"};
	static const char *const vm_short[] = {"vmnetcfg", "vmnetcfgs"};

	check_crd("ippools.yaml", IPPOOL_KIND, IPPOOL_PLURAL, ippl_short, ippl_cols);
	check_crd(
	    "virtualmachinenetworkconfigs.yaml", VMNETCFG_KIND, VMNETCFG_PLURAL, vm_short, vm_cols);
}

/* `kubectl get vmdhcp -A` lists both kinds. */
static void
test_crd_category(void)
{
	static const char *const files[] = {"ippools.yaml", "virtualmachinenetworkconfigs.yaml"};

	for (size_t f = 0; f < ELEMENTSOF(files); f++) {
		json_t *crd = load_crd(files[f]), *v;
		json_t *cats = json_object_get(
		    json_object_get(json_object_get(crd, "spec"), "names"), "categories");
		bool found = false;
		size_t i;

		CU_ASSERT_PTR_NOT_NULL_FATAL(crd);
		json_array_foreach(cats, i, v) found =
		    found || (json_is_string(v) && strcmp(json_string_value(v), "vmdhcp") == 0);
		if (!found)
			printf("\n  %s: no category vmdhcp in spec.names.categories", files[f]);
		CU_ASSERT_TRUE(found);
		json_decref(crd);
	}
}

/* --- descriptions: what `kubectl explain` prints ---------------------------------------- */

/*
 * Properties that need no description: the root metadata, about which a structural schema
 * may say nothing but name and generateName (the API server documents it as ObjectMeta).
 */
static const char *const undescribed_ok[] = {"metadata", NULL};
static char offenders[1024]; /* the paths found without a description, space separated */

static bool
has_description(const json_t *schema)
{
	const char *d = json_string_value(json_object_get(schema, "description"));

	return d && strspn(d, " \t\n") < strlen(d);
}

/* Walk properties, array items and map values; returns the number of properties seen. */
static unsigned
check_descriptions(json_t *schema, const char *path)
{
	json_t *v;
	const char *k;
	char sub[256];
	unsigned n = 0;

	json_object_foreach(json_object_get(schema, "properties"), k, v)
	{
		crd_path_key(sub, sizeof(sub), path, k);
		n++;
		if (!listed(undescribed_ok, sub) && !has_description(v)) {
			problem("%s: no description", sub);
			snprintf(offenders + strlen(offenders),
			    sizeof(offenders) - strlen(offenders), "%s ", sub);
		}
		n += check_descriptions(v, sub);
	}
	if ((v = json_object_get(schema, "items"))) {
		snprintf(sub, sizeof(sub), "%s[]", path);
		n += check_descriptions(v, sub);
	}
	if (json_is_object(v = json_object_get(schema, "additionalProperties"))) {
		snprintf(sub, sizeof(sub), "%s{}", path);
		n += check_descriptions(v, sub);
	}
	return n;
}

static void
check_described(const char *file, unsigned min_props)
{
	json_t *crd = load_crd(file), *schema;
	unsigned n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(crd);
	schema = crd_schema(crd);
	CU_ASSERT_PTR_NOT_NULL_FATAL(schema);
	problems = 0;
	offenders[0] = '\0';
	if (!has_description(schema))
		problem("%s: openAPIV3Schema (the kind) has no description", file);
	n = check_descriptions(schema, "");
	CU_ASSERT_EQUAL(problems, 0);
	CU_ASSERT(n >= min_props); /* the walk did reach the nested properties */
	json_decref(crd);
}

static void
test_ippool_described(void)
{
	check_described("ippools.yaml", 40);
}

static void
test_vmnetcfg_described(void)
{
	check_described("virtualmachinenetworkconfigs.yaml", 20);
}

static void
test_description_check_detects(void)
{
	/* a blank description, one missing inside array items and one inside map values; the
	 * root metadata is exempt */
	json_t *s = json_loads(
	    "{\"type\": \"object\", \"properties\": {\"metadata\": {\"type\": \"object\"},"
	    " \"a\": {\"description\": \" \\n\", \"type\": \"string\"},"
	    " \"b\": {\"description\": \"b\", \"type\": \"array\","
	    "  \"items\": {\"type\": \"object\", \"properties\": {\"c\": {\"type\": \"string\"}}}},"
	    " \"d\": {\"description\": \"d\", \"type\": \"object\", \"additionalProperties\":"
	    "  {\"type\": \"object\", \"properties\": {\"e\": {\"type\": \"string\"},"
	    "   \"f\": {\"description\": \"f\", \"type\": \"string\"}}}}}}",
	    0, NULL);
	unsigned n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(s);
	problems = 0;
	offenders[0] = '\0';
	printf("\n  (expected offenders follow)");
	n = check_descriptions(s, "");
	CU_ASSERT_EQUAL(n, 7);
	CU_ASSERT_EQUAL(problems, 3);
	CU_ASSERT_STRING_EQUAL(offenders, "a b[].c d{}.e ");
	json_decref(s);
}

/* --- status.conditions: a plain list, as upstream's ------------------------------------- */

/*
 * Upstream's schema declares status.conditions without x-kubernetes-list-type, so the API
 * server stores a list with a type twice; ours must store it too (the codec refuses it and
 * the controller rewrites the status with one entry per type).
 */
static void
check_conditions_map(const char *file)
{
	json_t *crd = load_crd(file), *conds, *items, *og;

	CU_ASSERT_PTR_NOT_NULL_FATAL(crd);
	conds = schema_at(crd_schema(crd), "status.conditions");
	CU_ASSERT_PTR_NOT_NULL_FATAL(conds);
	items = json_object_get(conds, "items");
	problems = 0;
	if (json_object_get(conds, "x-kubernetes-list-type") ||
	    json_object_get(conds, "x-kubernetes-list-map-keys"))
		problem("%s: status.conditions: a list type upstream's schema does not have", file);
	if (json_array_size(json_object_get(items, "required")) != 2)
		problem("%s: status.conditions[]: required is not [type, status]", file);
	og = schema_at(crd_schema(crd), "status.conditions[0].observedGeneration");
	if (!og || strcmp(str_at(og, "type"), "integer") || strcmp(str_at(og, "format"), "int64"))
		problem(
		    "%s: status.conditions[].observedGeneration is not an integer (int64)", file);
	CU_ASSERT_EQUAL(problems, 0);
	json_decref(crd);
}

static void
test_conditions_list_map(void)
{
	check_conditions_map("ippools.yaml");
	check_conditions_map("virtualmachinenetworkconfigs.yaml");
}

/* --- sample values: schema verdict == codec verdict ------------------------------------ */

/* A small evaluator of the structural-schema keywords the CRDs use. */
static bool
schema_accepts(const json_t *schema, const json_t *v)
{
	const char *type = json_string_value(json_object_get(schema, "type"));
	json_t *x, *sub;
	const char *k;
	size_t i;

	if (!type)
		return true;
	if (strcmp(type, "string") == 0) {
		const char *s = json_string_value(v), *fmt, *pat;
		json_t *en = json_object_get(schema, "enum");
		uint32_t a;
		struct in6_addr a6;

		if (!json_is_string(v))
			return false;
		x = json_object_get(schema, "maxLength");
		if (x && (long long)json_string_length(v) > json_integer_value(x))
			return false;
		fmt = json_string_value(json_object_get(schema, "format"));
		if (fmt && strcmp(fmt, "ipv4") == 0 && ipv4_parse(s, &a) < 0)
			return false;
		if (fmt && strcmp(fmt, "ipv6") == 0 && ipv6_parse(s, &a6) < 0)
			return false;
		pat = json_string_value(json_object_get(schema, "pattern"));
		if (pat) {
			regex_t re;
			int m;

			if (regcomp(&re, pat, REG_EXTENDED | REG_NOSUB) != 0) {
				problem("pattern does not compile: %s", pat);
				return false;
			}
			m = regexec(&re, s, 0, NULL, 0);
			regfree(&re);
			if (m != 0)
				return false;
		}
		if (en) {
			bool ok = false;

			json_array_foreach(en, i, x) ok =
			    ok || (json_is_string(x) && strcmp(json_string_value(x), s) == 0);
			return ok;
		}
		return true;
	}
	if (strcmp(type, "integer") == 0) {
		if (!json_is_integer(v))
			return false;
		x = json_object_get(schema, "minimum");
		if (x && json_integer_value(v) < json_integer_value(x))
			return false;
		x = json_object_get(schema, "maximum");
		return !(x && json_integer_value(v) > json_integer_value(x));
	}
	if (strcmp(type, "boolean") == 0)
		return json_is_boolean(v);
	if (strcmp(type, "array") == 0) {
		if (!json_is_array(v))
			return false;
		x = json_object_get(schema, "maxItems");
		if (x && (long long)json_array_size(v) > json_integer_value(x))
			return false;
		json_array_foreach(v, i,
		    sub) if (!schema_accepts(json_object_get(schema, "items"), sub)) return false;
		return true;
	}
	if (strcmp(type, "object") == 0) {
		if (!json_is_object(v))
			return false;
		json_array_foreach(json_object_get(schema, "required"), i,
		    x) if (!json_object_get(v, json_string_value(x))) return false;
		json_object_foreach((json_t *)v, k, sub)
		{
			json_t *ps = json_object_get(json_object_get(schema, "properties"), k);

			if (!ps)
				ps = json_object_get(schema, "additionalProperties");
			if (ps && !schema_accepts(ps, sub))
				return false;
		}
		return true;
	}
	return false;
}

/* Schema node of a dotted path with [i] (array items). */
static json_t *
schema_at(json_t *schema, const char *path)
{
	char buf[256], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && schema; tok = strtok_r(NULL, ".", &save)) {
		char *br = strchr(tok, '[');

		if (br)
			*br = '\0';
		schema = json_object_get(json_object_get(schema, "properties"), tok);
		if (br)
			schema = json_object_get(schema, "items");
	}
	return schema;
}

static void
set_path(json_t *root, const char *path, json_t *value)
{
	char buf[256], *save = NULL, *tok, *next;
	json_t *cur = root;

	snprintf(buf, sizeof(buf), "%s", path);
	tok = strtok_r(buf, ".", &save);
	while (tok) {
		char *br = strchr(tok, '[');
		long idx = -1;

		next = strtok_r(NULL, ".", &save);
		if (br) {
			*br = '\0';
			idx = strtol(br + 1, NULL, 10);
		}
		if (!next) {
			if (idx >= 0)
				json_array_set_new(json_object_get(cur, tok), (size_t)idx, value);
			else
				json_object_set_new(cur, tok, value);
			return;
		}
		cur = json_object_get(cur, tok);
		if (idx >= 0)
			cur = json_array_get(cur, (size_t)idx);
		tok = next;
	}
}

/* A sample's verdict: refused by both, accepted by both, or stored by the API server (as
 * upstream's schema stores it) and refused by the codec only (a Warning Event InvalidSpec for
 * a spec; a status the controller rewrites). */
#define CODEC_REFUSES 2

struct sample {
	const char *path;
	const char *value; /* JSON */
	int valid;	   /* false, true or CODEC_REFUSES */
};

static const char ippool_base[] =
    "{\"spec\": {\"networkName\": \"net\", \"ipv4Config\": {\"serverIP\": \"10.0.0.2\","
    " \"cidr\": \"10.0.0.0/24\", \"pool\": {\"start\": \"10.0.0.10\", \"end\": \"10.0.0.20\"}},"
    " \"ipv6Config\": {\"cidr\": \"2001:db8::/64\", \"serverIP\": \"2001:db8::2\","
    "  \"pool\": {\"start\": \"2001:db8::10\", \"end\": \"2001:db8::ffff\"},"
    "  \"routerAdvertisement\": {}}},"
    " \"status\": {\"conditions\": [{\"type\": \"A\", \"status\": \"True\"}],"
    "  \"ipv6\": {\"used\": 0, \"available\": 9223372036854775807}}}";

static const struct sample ippool_samples[] = {
    {"spec.ipv4Config.cidr", "\"10.0.0.0/24\"", true},
    {"spec.ipv4Config.cidr", "\"10.0.0.0/8\"", true},
    {"spec.ipv4Config.cidr", "\"10.0.0.0/7\"", true},
    {"spec.ipv4Config.cidr", "\"0.0.0.0/0\"", true},
    {"spec.ipv4Config.cidr", "\"10.0.0.0/33\"", CODEC_REFUSES},
    {"spec.ipv4Config.cidr", "\"10.0.0.0/024\"", CODEC_REFUSES},
    {"spec.ipv4Config.cidr", "\"10.0.0.0\"", CODEC_REFUSES},
    {"spec.ipv4Config.cidr", "\"10.0.0.0/24\\n\"", CODEC_REFUSES},
    {"spec.ipv4Config.cidr", "\" 10.0.0.0/24\"", CODEC_REFUSES},
    {"spec.ipv4Config.cidr", "\"10.00.0.0/24\"", CODEC_REFUSES},
    {"spec.ipv4Config.cidr", "\"256.0.0.0/24\"", CODEC_REFUSES},
    {"spec.ipv4Config.serverIP", "\"10.0.0.3\"", true},
    {"spec.ipv4Config.serverIP", "\"10.0.0.03\"", false},
    {"spec.ipv4Config.serverIP", "\"10.0.0\"", false},
    {"spec.networkName", "\"net\"", true},
    {"spec.networkName", "\"lab/net-1.a\"", true},
    {"spec.networkName", "\"a/b/c\"", CODEC_REFUSES},
    {"spec.networkName", "\"NET\"", true},
    {"spec.networkName", "\"Lab/Net_1\"", true},
    {"spec.networkName", "\"lab net\"", CODEC_REFUSES},
    {"spec.networkName", "\"-net\"", true},
    {"spec.networkName", "\"ns/\"", CODEC_REFUSES},
    {"spec.networkName", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
	true},
    {"spec.networkName", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
	false},
    {"spec.paused", "false", true},
    {"spec.paused", "\"false\"", false},
    {"spec.ipv4Config.leaseTime", "60", true},
    {"spec.ipv4Config.leaseTime", "59", true},
    {"spec.ipv4Config.leaseTime", "0", true},
    {"spec.ipv4Config.leaseTime", "-5", true},
    {"spec.ipv4Config.leaseTime", "4294967295", true},
    {"spec.ipv4Config.leaseTime", "4294967296", true},
    {"spec.ipv4Config.mtu", "68", true},
    {"spec.ipv4Config.mtu", "67", false},
    {"spec.ipv4Config.mtu", "65535", true},
    {"spec.ipv4Config.mtu", "65536", false},
    {"spec.ipv4Config.dns", "[\"1.1.1.1\", \"1.0.0.1\", \"9.9.9.9\"]", true},
    {"spec.ipv4Config.dns", "[\"1.1.1.1\", \"1.0.0.1\", \"9.9.9.9\", \"8.8.8.8\"]", false},
    {"spec.ipv4Config.dns", "[\"1.1.1.256\"]", CODEC_REFUSES},
    {"spec.ipv4Config.ntp", "[\"pool.ntp.org\", \"10.0.0.1\", \"ntp_1.lab\", \"ntp1\"]", true},
    {"spec.ipv4Config.ntp", "[\"0.pool.ntp.org.\"]", true},
    {"spec.ipv4Config.ntp", "[\"300.1.1.1\"]", CODEC_REFUSES},
    {"spec.ipv4Config.ntp", "[\"a..b\"]", CODEC_REFUSES},
    {"spec.ipv4Config.ntp", "[\"ntp-.lab\"]", CODEC_REFUSES},
    {"spec.ipv4Config.ntp", "[\"a\", \"b\", \"c\", \"d\", \"e\"]", false},
    {"spec.ipv4Config.domainName", "\"example.com\"", true},
    {"spec.ipv4Config.domainName", "\"example.com.\"", true},
    {"spec.ipv4Config.domainName", "\"exa mple.com\"", CODEC_REFUSES},
    {"spec.ipv4Config.domainName", "\".example.com\"", CODEC_REFUSES},
    {"spec.ipv4Config.domainSearch", "[\"a.example\", \"b.example\"]", true},
    {"spec.ipv4Config.domainSearch", "[\"a.example\", \"b..example\"]", CODEC_REFUSES},
    {"spec.ipv4Config.pool.exclude", "[\"10.0.0.11\"]", true},
    {"spec.ipv4Config.pool.exclude", "[\"10.0.0.x\"]", false},
    {"spec.ipv4Config.routes", "[{\"destination\": \"0.0.0.0/0\", \"gateway\": \"10.0.0.1\"}]",
	true},
    {"spec.ipv4Config.routes", "[{\"destination\": \"10.8.0.0/33\", \"gateway\": \"10.0.0.1\"}]",
	false},
    {"spec.ipv4Config.routes", "[{\"destination\": \"10.8.0.0/16\"}]", false},
    {"spec.ipv4Config.routes", "[{\"destination\": \"10.8.0.0/16\", \"gateway\": \"x\"}]", false},
    /* spec.ipv6Config: our own schema, which refuses what it can express */
    {"spec.ipv6Config.cidr", "\"2001:db8::/64\"", true},
    {"spec.ipv6Config.cidr", "\"2001:DB8:0:0::1/64\"", true},
    {"spec.ipv6Config.cidr", "\"2001:db8::/8\"", true},
    {"spec.ipv6Config.cidr", "\"2001:db8::/7\"", CODEC_REFUSES},
    {"spec.ipv6Config.cidr", "\"2001:db8::/129\"", CODEC_REFUSES},
    {"spec.ipv6Config.cidr", "\"2001:db8::/064\"", CODEC_REFUSES},
    {"spec.ipv6Config.cidr", "\"2001:db8::\"", CODEC_REFUSES},
    {"spec.ipv6Config.cidr", "\"10.0.0.0/24\"", CODEC_REFUSES},
    {"spec.ipv6Config.cidr", "\"fe80::1%eth0/64\"", CODEC_REFUSES},
    {"spec.ipv6Config.cidr", "\"2001:0db8:0000:0000:0000:0000:0000:0001/64/64/64/64\"", false},
    {"spec.ipv6Config.serverIP", "\"2001:db8::3\"", true},
    {"spec.ipv6Config.serverIP", "\"2001:DB8:0::3\"", true},
    {"spec.ipv6Config.serverIP", "\"2001:db8::\"", CODEC_REFUSES},  /* subnet-router anycast */
    {"spec.ipv6Config.serverIP", "\"2001:db9::3\"", CODEC_REFUSES}, /* outside */
    {"spec.ipv6Config.serverIP", "\"2001:db8::g\"", false},
    {"spec.ipv6Config.serverIP", "\"10.0.0.2\"", false},
    {"spec.ipv6Config.serverIP", "\"2001:db8::3/64\"", false},
    {"spec.ipv6Config.pool.start", "\"2001:db8::ffff\"", true},
    {"spec.ipv6Config.pool.start", "\"2001:db8::1:0\"", CODEC_REFUSES}, /* after end */
    {"spec.ipv6Config.pool.end", "\"2001:db8:1::\"", CODEC_REFUSES},
    {"spec.ipv6Config.pool.exclude", "[\"2001:db8::11\", \"2001:db8::12\"]", true},
    {"spec.ipv6Config.pool.exclude", "[\"2001:db8::x\"]", false},
    {"spec.ipv6Config.pool.exclude", "[\"2001:db9::11\"]", CODEC_REFUSES},
    {"spec.ipv6Config.dns", "[\"2001:4860:4860::8888\", \"2606:4700:4700::1111\", \"::1\"]", true},
    {"spec.ipv6Config.dns", "[\"::1\", \"::2\", \"::3\", \"::4\"]", false},
    {"spec.ipv6Config.dns", "[\"1.1.1.1\"]", false},
    {"spec.ipv6Config.domainSearch", "[\"a.example\", \"b.example.\"]", true},
    {"spec.ipv6Config.domainSearch", "[\"a..example\"]", false},
    {"spec.ipv6Config.preferredLifetime", "3600", true},
    {"spec.ipv6Config.preferredLifetime", "-1", true},
    {"spec.ipv6Config.preferredLifetime", "31536001", CODEC_REFUSES}, /* above valid */
    {"spec.ipv6Config.validLifetime", "7200", true},
    {"spec.ipv6Config.validLifetime", "0", true},
    {"spec.ipv6Config.validLifetime", "4294967296", true},
    {"spec.ipv6Config.rapidCommit", "true", true},
    {"spec.ipv6Config.rapidCommit", "1", false},
    {"spec.ipv6Config.routerAdvertisement.enabled", "true", true},
    {"spec.ipv6Config.routerAdvertisement.interval", "4", true},
    {"spec.ipv6Config.routerAdvertisement.interval", "3", false},
    {"spec.ipv6Config.routerAdvertisement.interval", "1800", true},
    {"spec.ipv6Config.routerAdvertisement.interval", "1801", false},
    {"spec.ipv6Config.routerAdvertisement.routerLifetime", "0", true},
    {"spec.ipv6Config.routerAdvertisement.routerLifetime", "9000", true},
    {"spec.ipv6Config.routerAdvertisement.routerLifetime", "9001", false},
    {"spec.ipv6Config.routerAdvertisement.routerLifetime", "-1", false},
    {"spec.ipv6Config.routerAdvertisement.routerLifetime", "30", CODEC_REFUSES}, /* < 200 */
    {"status.ipv6.allocated", "{\"2001:db8::10\": \"52:54:00:00:00:01\"}", true},
    {"status.ipv6.allocated", "{\"2001:DB8:0::10\": \"EXCLUDED\"}", true},
    {"status.ipv6.allocated", "{\"2001:db8::10\": \"x\"}", CODEC_REFUSES},
    {"status.ipv6.allocated", "{\"10.0.0.1\": \"RESERVED\"}", CODEC_REFUSES},
    {"status.ipv6.allocated", "{\"2001:db8::10\": \"RESERVED\", \"2001:db8:0::10\": \"RESERVED\"}",
	CODEC_REFUSES},
    {"status.ipv6.used", "\"1\"", false},
    {"status.ipv6.available", "9223372036854775807", true},
    {"status.conditions[0].status", "\"Unknown\"", true},
    {"status.conditions[0].status", "\"true\"", CODEC_REFUSES},
    {"status.conditions[0].observedGeneration", "7", true},
    {"status.lastUpdate", "\"2024-05-01T10:00:00Z\"", true},
};

static const char vmnetcfg_base[] =
    "{\"spec\": {\"vmName\": \"vm\", \"networkConfigs\": [{\"networkName\": \"net\","
    " \"macAddress\": \"52:54:00:00:00:01\"}]},"
    " \"status\": {\"networkConfigs\": [{\"state\": \"Allocated\"}],"
    "  \"conditions\": [{\"type\": \"A\", \"status\": \"True\"}]}}";

static const struct sample vmnetcfg_samples[] = {
    {"spec.networkConfigs[0].macAddress", "\"52:54:00:AA:BB:CC\"", true},
    {"spec.networkConfigs[0].macAddress", "\"52-54-00-aa-bb-cc\"", true},
    {"spec.networkConfigs[0].macAddress", "\"5254.00aa.bbcc\"", true},
    {"spec.networkConfigs[0].macAddress", "\"52:54:00:aa:bb\"", CODEC_REFUSES},
    {"spec.networkConfigs[0].macAddress", "\"52:54-00:aa:bb:cc\"", CODEC_REFUSES},
    {"spec.networkConfigs[0].macAddress", "\"52:54:00:aa:bb:cg\"", CODEC_REFUSES},
    {"spec.networkConfigs[0].macAddress", "\"52:54:00:aa:bb:cc:dd\"", false},
    {"spec.networkConfigs[0].networkName", "\"lab/net\"", true},
    {"spec.networkConfigs[0].networkName", "\"lab/net/x\"", CODEC_REFUSES},
    {"spec.networkConfigs[0].networkName", "\"Lab/Net\"", true},
    {"spec.networkConfigs[0].ipAddress", "\"10.0.0.5\"", true},
    {"spec.networkConfigs[0].ipAddress", "\"10.0.0.5/32\"", false},
    {"spec.networkConfigs[0].ipv6Address", "\"2001:db8::5\"", true},
    {"spec.networkConfigs[0].ipv6Address", "\"2001:DB8::0:5\"", true},
    {"spec.networkConfigs[0].ipv6Address", "\"10.0.0.5\"", false},
    {"spec.networkConfigs[0].ipv6Address", "\"2001:db8::5/128\"", false},
    {"spec.networkConfig[0].ipv6Address", "\"2001:db8::5\"", true},
    {"spec.vmName", "\"vm-1\"", true},
    {"spec.vmName", "7", false},
    {"status.networkConfigs[0].state", "\"Stale\"", true},
    {"status.networkConfigs[0].state", "\"stale\"", CODEC_REFUSES},
    {"status.networkConfig[0].state", "\"Stale\"", true},
    {"status.networkConfigs[0].status", "\"Stale\"", true},
    {"spec.networkConfig[0].macAddress", "\"52:54:00:AA:BB:CC\"", true},
    {"status.networkConfigs[0].allocatedIPAddress", "\"10.0.0.5\"", true},
    {"status.networkConfigs[0].allocatedIPAddress", "\"10.0.0.500\"", CODEC_REFUSES},
    {"status.networkConfigs[0].allocatedIPv6Address", "\"2001:db8::5\"", true},
    {"status.networkConfigs[0].allocatedIPv6Address", "\"2001:db8::5::\"", CODEC_REFUSES},
    {"status.conditions[0].status", "\"False\"", true},
    {"status.conditions[0].status", "\"false\"", CODEC_REFUSES},
    {"status.conditions[0].observedGeneration", "7", true},
};

static int
decode_ippool(const json_t *j, struct crd_error *err)
{
	struct ippool *p = NULL;
	int r = ippool_decode(j, &p, err);

	ippool_free(p);
	return r;
}

static int
decode_vmnetcfg(const json_t *j, struct crd_error *err)
{
	struct vmnetcfg *c = NULL;
	int r = vmnetcfg_decode(j, &c, err);

	vmnetcfg_free(c);
	return r;
}

static void
run_samples(const char *file, const char *base, const struct sample *samples, size_t n,
    int (*decode)(const json_t *, struct crd_error *))
{
	json_t *crd = load_crd(file);
	json_t *schema;

	CU_ASSERT_PTR_NOT_NULL_FATAL(crd);
	schema = crd_schema(crd);
	problems = 0;
	for (size_t i = 0; i < n; i++) {
		const struct sample *s = &samples[i];
		json_t *doc = json_loads(base, 0, NULL);
		json_t *value = json_loads(s->value, JSON_DECODE_ANY, NULL);
		json_t *node = schema_at(schema, s->path);
		struct crd_error err = {0};
		bool by_schema, by_codec;

		if (!doc || !value || !node) {
			problem("sample %zu (%s): bad test data", i, s->path);
			json_decref(doc);
			json_decref(value);
			continue;
		}
		by_schema = schema_accepts(node, value);
		set_path(doc, s->path, value);
		/* the whole document must be valid for the schema too, else the sample is moot */
		by_schema = by_schema && schema_accepts(schema, doc);
		by_codec = decode(doc, &err) == 0;
		if (by_schema != (s->valid != false) || by_codec != (s->valid == true))
			problem("%s = %s: expected %s, schema %s, codec %s (%s)", s->path, s->value,
			    s->valid == CODEC_REFUSES ? "schema-only valid"
			    : s->valid		      ? "valid"
						      : "invalid",
			    by_schema ? "accepts" : "refuses", by_codec ? "accepts" : "refuses",
			    by_codec ? "" : err.message);
		json_decref(doc);
	}
	CU_ASSERT_EQUAL(problems, 0);
	json_decref(crd);
}

static void
test_ippool_samples(void)
{
	run_samples(
	    "ippools.yaml", ippool_base, ippool_samples, ELEMENTSOF(ippool_samples), decode_ippool);
}

static void
test_vmnetcfg_samples(void)
{
	run_samples("virtualmachinenetworkconfigs.yaml", vmnetcfg_base, vmnetcfg_samples,
	    ELEMENTSOF(vmnetcfg_samples), decode_vmnetcfg);
}

static void
test_checker_detects_drift(void)
{
	/* The comparison itself must notice a difference: a table with one extra field,
	 * one missing pattern and a wrong limit against the real schema. */
	static const struct crd_field ip_item = {.type = CRD_STRING, .format = "ipv4"};
	static const struct crd_field pool_children[] = {
	    {.key = "start", .type = CRD_STRING, .required = true, .format = "ipv4"},
	    {.key = "end", .type = CRD_STRING, .required = true},
	    {.key = "exclude", .type = CRD_ARRAY, .max_items = 10, .items = &ip_item},
	    {.key = "step", .type = CRD_INTEGER},
	    {.key = NULL},
	};
	json_t *crd = load_crd("ippools.yaml");
	json_t *pool;
	struct crd_field top = {.type = CRD_OBJECT, .children = pool_children};

	CU_ASSERT_PTR_NOT_NULL_FATAL(crd);
	pool = schema_at(crd_schema(crd), "spec.ipv4Config.pool");
	CU_ASSERT_PTR_NOT_NULL_FATAL(pool);
	problems = 0;
	printf("\n  (expected differences follow)");
	compare(pool, &top, "spec.ipv4Config.pool");
	CU_ASSERT_EQUAL(problems, 3); /* end format, exclude maxItems, step unknown */
	json_decref(crd);
}

/*
 * The C storage of every field fits its JSON type, and every field is both read (decode
 * hook, store, or children) and written (encode hook or store): a property added to a table
 * without storage would be validated and then dropped.
 */
static unsigned
check_storage(const struct crd_field *f, const char *path)
{
	static const enum crd_type type_of[] = {
	    [CRD_S_CONST] = CRD_STRING,
	    [CRD_S_STR] = CRD_STRING,
	    [CRD_S_CHARS] = CRD_STRING,
	    [CRD_S_NETNAME] = CRD_STRING,
	    [CRD_S_MAC] = CRD_STRING,
	    [CRD_S_IPV4] = CRD_STRING,
	    [CRD_S_CIDR] = CRD_STRING,
	    [CRD_S_IPV6] = CRD_STRING,
	    [CRD_S_CIDR6] = CRD_STRING,
	    [CRD_S_BOOL] = CRD_BOOLEAN,
	    [CRD_S_U32] = CRD_INTEGER,
	    [CRD_S_LL] = CRD_INTEGER,
	    [CRD_S_TIME] = CRD_STRING,
	    [CRD_S_ENUM] = CRD_STRING,
	    [CRD_S_STRUCT] = CRD_OBJECT,
	    [CRD_S_ARRAY] = CRD_ARRAY,
	};
	char sub[256];
	unsigned bad = 0;

	if (f->store && type_of[f->store] != f->type) {
		printf("\n  %s: store does not fit the type", path);
		bad++;
	}
	if (f->store == CRD_S_ENUM && !f->names) {
		printf("\n  %s: enum without names", path);
		bad++;
	}
	if (f->store == CRD_S_ARRAY && !(f->items && f->items->store)) {
		printf("\n  %s: array items without storage", path);
		bad++;
	}
	if (f->store == CRD_S_STRUCT && !f->children) {
		printf("\n  %s: struct without children", path);
		bad++;
	}
	if (f->items && f->store == CRD_S_ARRAY) {
		snprintf(sub, sizeof(sub), "%s[]", path);
		bad += check_storage(f->items, sub);
	}
	if (f->children && (f->store == CRD_S_STRUCT || f->decode))
		for (const struct crd_field *c = f->children; c->key; c++) {
			snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", c->key);
			if (c->deprecated)
				continue; /* a read-only alias, decoded under the current name */
			if (!c->decode && !c->store && !c->children) {
				printf("\n  %s: not stored when read", sub);
				bad++;
			}
			if (!c->encode && !c->store) {
				printf("\n  %s: never written", sub);
				bad++;
			}
			bad += check_storage(c, sub);
		}
	return bad;
}

static void
test_tables_storage(void)
{
	const struct crd_field ippool_root = {
	    .type = CRD_OBJECT, .store = CRD_S_STRUCT, .children = ippool_fields};
	const struct crd_field vmnetcfg_root = {
	    .type = CRD_OBJECT, .store = CRD_S_STRUCT, .children = vmnetcfg_fields};
	const struct crd_field bad_children[] = {
	    {.key = "dropped", .type = CRD_STRING},
	    {.key = "n", .type = CRD_INTEGER, .store = CRD_S_STR},
	    {.key = NULL},
	};
	const struct crd_field bad_root = {
	    .type = CRD_OBJECT, .store = CRD_S_STRUCT, .children = bad_children};

	CU_ASSERT_EQUAL(check_storage(&ippool_root, ""), 0);
	CU_ASSERT_EQUAL(check_storage(&vmnetcfg_root, ""), 0);
	CU_ASSERT_EQUAL(check_storage(&crd_condition_item, "status.conditions[]"), 0);
	/* the check finds a field neither stored nor written, and a store of the wrong type */
	CU_ASSERT_EQUAL(check_storage(&bad_root, "(test)"), 3);
	printf("\n");
}

static const struct test_case schema_tests[] = {
    {"IPPool: schema and codec fields agree", test_ippool_fields},
    {"VMNetCfg: schema and codec fields agree", test_vmnetcfg_fields},
    {"CRD names, scope, subresource, columns (-o wide too)", test_crd_settings},
    {"CRD category vmdhcp on both kinds", test_crd_category},
    {"IPPool: every property has a description", test_ippool_described},
    {"VMNetCfg: every property has a description", test_vmnetcfg_described},
    {"the description check detects omissions", test_description_check_detects},
    {"status.conditions: a plain list as upstream's, observedGeneration", test_conditions_list_map},
    {"IPPool: same verdicts on samples", test_ippool_samples},
    {"VMNetCfg: same verdicts on samples", test_vmnetcfg_samples},
    {"the comparison detects drift", test_checker_detects_drift},
    {"every field is stored, written, and kept as its type says", test_tables_storage},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "crds-schema", .tests = schema_tests},
    {.name = NULL},
};
