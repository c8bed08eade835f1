/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Agent placement: the per-IPPool agent Deployment (replicas that elect the active one
 * through a Lease, or a single one), the admin's knobs of it, and the re-placement decision.
 */
#include "controller/placement.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "controller/kinds.h"
#include "lib/util.h"

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
/* Seconds with at most 3 decimals, as text: "3600.5" + NUL, with room. */
#define SECONDS_LEN 24

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

/* --- the admin's knobs (struct placement_opts) ---------------------------------------- */

#define IFNAME_MAX 15 /* IFNAMSIZ - 1 */
#define DNS_SUBDOMAIN_MAX 253
#define LABEL_NAME_MAX 63

static int fail(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Formats the one-line reason into err; returns -EINVAL. */
static int
fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && len > 0) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static bool
is_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* DNS-1123 subdomain (object names: Secrets, PriorityClasses, label key prefixes). */
static bool
is_dns_subdomain(const char *s, size_t n)
{
	size_t i, start = 0;

	if (n == 0 || n > DNS_SUBDOMAIN_MAX)
		return false;
	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '.') {
			if (!is_lower_alnum(s[i]) && s[i] != '-')
				return false;
			continue;
		}
		/* a label [a-z0-9]([-a-z0-9]*[a-z0-9])? ends at i */
		if (i == start || !is_lower_alnum(s[start]) || !is_lower_alnum(s[i - 1]))
			return false;
		start = i + 1;
	}
	return true;
}

/* The name part of a label key, and a non-empty label value:
 * ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] */
static bool
is_label_name(const char *s, size_t n)
{
	if (n == 0 || n > LABEL_NAME_MAX || !is_alnum(s[0]) || !is_alnum(s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

/* A qualified name (label key, toleration key, extended resource name): [prefix/]name. */
static bool
is_qualified_name(const char *s)
{
	const char *slash = strchr(s, '/');

	if (slash == NULL)
		return is_label_name(s, strlen(s));
	return is_dns_subdomain(s, (size_t)(slash - s)) &&
	       is_label_name(slash + 1, strlen(slash + 1));
}

static bool
is_label_value(const char *s)
{
	return s[0] == '\0' || is_label_name(s, strlen(s));
}

static bool
one_of(const char *v, const char *const *set)
{
	for (; *set != NULL; set++)
		if (strcmp(v, *set) == 0)
			return true;
	return false;
}

/* Linux accepts 1..15 bytes but for "." and "..", '/', ':' and white space. */
static int
check_ifname(const char *v, char *err, size_t len)
{
	size_t n = strlen(v);

	if (n == 0 || n > IFNAME_MAX)
		return fail(err, len, "an interface name has 1 to %d characters", IFNAME_MAX);
	if (strcmp(v, ".") == 0 || strcmp(v, "..") == 0)
		return fail(err, len, "'%s' is not an interface name", v);
	for (size_t i = 0; i < n; i++)
		if (v[i] <= ' ' || v[i] == 0x7f || v[i] == '/' || v[i] == ':')
			return fail(err, len,
			    "an interface name has no '/', ':', space or control character");
	return 0;
}

/*
 * A resource quantity (core/v1 Quantity, non-negative): a decimal number with an optional
 * suffix (Ki Mi Gi Ti Pi Ei, n u m k M G T P E, or an exponent e<n>). *ret gets its value
 * (approximate: enough to compare a request with a limit).
 */
static bool
quantity_parse(const char *s, double *ret)
{
	static const struct {
		const char *suffix;
		double mult;
	} suffixes[] = {
		{ "Ki", 0x1p10 }, { "Mi", 0x1p20 }, { "Gi", 0x1p30 }, { "Ti", 0x1p40 },
		{ "Pi", 0x1p50 }, { "Ei", 0x1p60 }, { "n", 1e-9 }, { "u", 1e-6 }, { "m", 1e-3 },
		{ "", 1 }, { "k", 1e3 }, { "M", 1e6 }, { "G", 1e9 }, { "T", 1e12 }, { "P", 1e15 },
		{ "E", 1e18 },
	};
	size_t digits = 0, dots = 0;
	char num[64], *end;
	const char *p;
	long e;

	for (p = s; (*p >= '0' && *p <= '9') || *p == '.'; p++) {
		if (*p == '.')
			dots++;
		else
			digits++;
	}
	if (digits == 0 || dots > 1 || (size_t)(p - s) >= sizeof(num))
		return false;
	memcpy(num, s, (size_t)(p - s));
	num[p - s] = '\0';
	*ret = strtod(num, NULL);
	for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
		if (strcmp(p, suffixes[i].suffix) == 0) {
			*ret *= suffixes[i].mult;
			return true;
		}
	/* decimal exponent: e<signed integer> */
	if ((*p != 'e' && *p != 'E') || p[1] == '\0')
		return false;
	e = strtol(p + 1, &end, 10);
	if (*end != '\0' || e < -30 || e > 30 ||
	    !(p[1] == '+' || p[1] == '-' || (p[1] >= '0' && p[1] <= '9')))
		return false;
	*ret *= pow(10, (double)e);
	return true;
}

/* A quantity as a JSON string or a non-negative JSON number (the API server takes both). */
static bool
quantity_value(const json_t *q, double *ret)
{
	if (json_is_number(q)) {
		*ret = json_number_value(q);
		return *ret >= 0;
	}
	return json_is_string(q) && quantity_parse(json_string_value(q), ret);
}

/* A container resource name: cpu, memory, ephemeral-storage, hugepages-<size>, or a/b. */
static bool
is_container_resource(const char *name)
{
	static const char *const std[] = { "cpu", "memory", "ephemeral-storage", NULL };

	if (strchr(name, '/') != NULL)
		return is_qualified_name(name);
	if (strncmp(name, "hugepages-", 10) == 0) {
		double size;

		return quantity_parse(name + 10, &size) && size > 0;
	}
	return one_of(name, std);
}

/* The value of a flag that takes JSON: any JSON text, duplicate keys refused. */
static int
load_json(const char *value, json_t **ret, char *err, size_t len)
{
	json_error_t jerr;

	*ret = json_loads(value, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (*ret == NULL)
		return fail(err, len, "not JSON: %s (column %d)", jerr.text, jerr.column);
	return 0;
}

/* core/v1 ResourceRequirements: {"requests": {name: quantity}, "limits": {…}}. */
static int
check_resources(const json_t *v, char *err, size_t len)
{
	static const char *const keys[] = { "requests", "limits", NULL };
	const char *k, *name;
	json_t *m, *q;
	double req, lim;

	if (!json_is_object(v))
		return fail(err, len,
		    "must be a JSON object like "
		    "{\"requests\":{\"cpu\":\"10m\"},\"limits\":{\"memory\":\"64Mi\"}}");
	json_object_foreach((json_t *)v, k, m)
	{
		if (!one_of(k, keys))
			return fail(err, len, "unknown field \"%s\" (requests, limits)", k);
		if (!json_is_object(m))
			return fail(err, len, "%s must be an object of quantities", k);
		json_object_foreach(m, name, q)
		{
			if (!is_container_resource(name))
				return fail(err, len,
				    "%s: \"%s\" is not a container resource (cpu, memory, "
				    "ephemeral-storage, hugepages-<size> or a domain/name)",
				    k, name);
			if (!quantity_value(q, &req))
				return fail(err, len,
				    "%s.%s: not a non-negative quantity (like 10m, 64Mi)", k, name);
		}
	}
	/* the API server refuses a request above its limit */
	json_object_foreach((json_t *)json_object_get(v, "requests"), name, q)
	{
		json_t *l = json_object_get(json_object_get(v, "limits"), name);

		if (l != NULL && quantity_value(q, &req) && quantity_value(l, &lim) && req > lim)
			return fail(err, len, "requests.%s is above limits.%s", name, name);
	}
	return 0;
}

/*
 * Numbers in requests/limits become strings ("1", "0.5"): the API server reads both, but a
 * real re-serialised at full precision (0.1 → 0.10000000000000001) would round up to 101m.
 */
static int
quantities_as_strings(json_t *res)
{
	const char *k, *name;
	json_t *m, *q;
	char buf[64];

	json_object_foreach(res, k, m)
	{
		json_object_foreach(m, name, q)
		{
			if (json_is_integer(q))
				snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT,
				    json_integer_value(q));
			else if (json_is_real(q))
				snprintf(buf, sizeof(buf), "%.15g", json_real_value(q));
			else
				continue;
			if (json_object_set_new(m, name, json_string(buf)) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

/* {label key: label value}. */
static int
check_node_selector(const json_t *v, char *err, size_t len)
{
	const char *k;
	json_t *val;

	if (!json_is_object(v))
		return fail(err, len,
		    "must be a JSON object of strings like {\"kubernetes.io/os\":\"linux\"}");
	json_object_foreach((json_t *)v, k, val)
	{
		if (!is_qualified_name(k))
			return fail(err, len, "\"%s\" is not a label key", k);
		if (!json_is_string(val))
			return fail(err, len, "the value of \"%s\" must be a string", k);
		if (!is_label_value(json_string_value(val)))
			return fail(err, len, "the value of \"%s\" is not a label value", k);
	}
	return 0;
}

/* core/v1 Toleration[], with the rules the API server applies. */
static int
check_tolerations(const json_t *v, char *err, size_t len)
{
	static const char *const keys[] = {
	    "key", "operator", "value", "effect", "tolerationSeconds", NULL};
	static const char *const operators[] = { "Exists", "Equal", NULL };
	static const char *const effects[] = {
	    "", "NoSchedule", "PreferNoSchedule", "NoExecute", NULL};
	size_t i;
	json_t *t;

	if (!json_is_array(v))
		return fail(err, len,
		    "must be a JSON array like "
		    "[{\"key\":\"k\",\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]");
	json_array_foreach((json_t *)v, i, t)
	{
		const char *k, *key = "", *op = "Equal", *value = "", *effect = "";
		json_t *f, *secs;

		if (!json_is_object(t))
			return fail(err, len, "[%zu] must be an object", i);
		json_object_foreach(t, k, f)
		{
			if (!one_of(k, keys))
				return fail(err, len,
				    "[%zu]: unknown field \"%s\" (key, operator, value, effect, "
				    "tolerationSeconds)",
				    i, k);
			if (strcmp(k, "tolerationSeconds") != 0 && !json_is_string(f))
				return fail(err, len, "[%zu].%s must be a string", i, k);
		}
		if ((f = json_object_get(t, "key")) != NULL)
			key = json_string_value(f);
		if ((f = json_object_get(t, "operator")) != NULL && json_string_length(f) > 0)
			op = json_string_value(f);
		if ((f = json_object_get(t, "value")) != NULL)
			value = json_string_value(f);
		if ((f = json_object_get(t, "effect")) != NULL)
			effect = json_string_value(f);
		secs = json_object_get(t, "tolerationSeconds");
		if (key[0] != '\0' && !is_qualified_name(key))
			return fail(err, len, "[%zu]: key \"%s\" is not a label key", i, key);
		if (!one_of(op, operators))
			return fail(
			    err, len, "[%zu]: operator \"%s\" is not Exists or Equal", i, op);
		if (key[0] == '\0' && strcmp(op, "Exists") != 0)
			return fail(err, len, "[%zu]: an empty key needs operator Exists", i);
		if (strcmp(op, "Exists") == 0 && value[0] != '\0')
			return fail(err, len, "[%zu]: operator Exists takes no value", i);
		if (!is_label_value(value))
			return fail(err, len, "[%zu]: value \"%s\" is not a label value", i, value);
		if (!one_of(effect, effects))
			return fail(err, len,
			    "[%zu]: effect \"%s\" is not NoSchedule, PreferNoSchedule or NoExecute",
			    i, effect);
		if (secs != NULL && !json_is_integer(secs))
			return fail(err, len, "[%zu].tolerationSeconds must be an integer", i);
		if (secs != NULL && strcmp(effect, "NoExecute") != 0)
			return fail(err, len, "[%zu]: tolerationSeconds needs effect NoExecute", i);
	}
	return 0;
}

/* A number of replicas: decimal digits, 1..PLACEMENT_REPLICAS_MAX. */
static int
parse_replicas(const char *v, int *ret, char *err, size_t len)
{
	int n = 0;

	for (const char *p = v; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || n > PLACEMENT_REPLICAS_MAX)
			return fail(err, len, "\"%.32s\" is not a number of replicas from 1 to %d",
			    v, PLACEMENT_REPLICAS_MAX);
		n = n * 10 + (*p - '0');
	}
	if (n < 1 || n > PLACEMENT_REPLICAS_MAX)
		return fail(err, len, "\"%.32s\" is not a number of replicas from 1 to %d", v,
		    PLACEMENT_REPLICAS_MAX);
	*ret = n;
	return 0;
}

/*
 * Seconds as decimal digits with at most 3 decimals (what the agent's flags take) into
 * milliseconds, more than 0 and at most PLACEMENT_DURATION_MAX_MS.
 */
static int
parse_seconds(const char *v, int *ms, char *err, size_t len)
{
	uint64_t usec;
	int r = parse_seconds_usec(v, 3, (uint64_t)PLACEMENT_DURATION_MAX_MS * 1000, &usec);

	if (r == -ERANGE)
		return fail(
		    err, len, "%.32s is more than %d seconds", v, PLACEMENT_DURATION_MAX_MS / 1000);
	if (r < 0)
		return fail(err, len,
		    "\"%.32s\" is not a number of seconds (digits, at most 3 decimals)", v);
	*ms = (int)(usec / 1000);
	if (*ms == 0)
		return fail(err, len, "%.32s: must be more than 0 seconds", v);
	return 0;
}

/* Milliseconds as the seconds the agent's flags take: "2", "1.5", "0.3", "0.025". */
static void
format_seconds(int ms, char out[SECONDS_LEN])
{
	size_t n;

	if (ms % 1000 == 0) {
		snprintf(out, SECONDS_LEN, "%d", ms / 1000);
		return;
	}
	snprintf(out, SECONDS_LEN, "%d.%03d", ms / 1000, ms % 1000);
	for (n = strlen(out); out[n - 1] == '0'; n--)
		out[n - 1] = '\0';
}

static int
set_seconds(int *slot, enum placement_opt which, const char *value, char *err, size_t len)
{
	int ms = 0, r;

	if ((r = parse_seconds(value, &ms, err, len)) < 0)
		return r;
	if (which == PLACEMENT_OPT_LEASE_DURATION && ms < PLACEMENT_LEASE_MIN_MS)
		return fail(err, len, "%.32s: the Lease duration must be at least %d second", value,
		    PLACEMENT_LEASE_MIN_MS / 1000);
	*slot = ms;
	return 0;
}

/* *slot = a copy of s (the old value freed). */
static int
set_str(char **slot, const char *s)
{
	char *copy = strdup(s);

	if (copy == NULL)
		return -ENOMEM;
	free(*slot);
	*slot = copy;
	return 0;
}

/* *slot = v (stolen; the old value released). An empty object or array means "none". */
static void
set_json(json_t **slot, json_t *v)
{
	json_decref(*slot);
	*slot = v;
	if ((json_is_object(v) && json_object_size(v) == 0) ||
	    (json_is_array(v) && json_array_size(v) == 0)) {
		json_decref(v);
		*slot = NULL;
	}
}

/* Appends {"name": name} to o->pull_secrets; a name given twice is refused. */
static int
add_pull_secret(struct placement_opts *o, const char *name, char *err, size_t len)
{
	size_t i;
	json_t *s;

	json_array_foreach(o->pull_secrets, i, s)
	{
		if (strcmp(kind_get_str(s, "name", NULL), name) == 0)
			return fail(err, len, "\"%s\" is given twice", name);
	}
	if (o->pull_secrets == NULL && (o->pull_secrets = json_array()) == NULL)
		return -ENOMEM;
	if (json_array_append_new(o->pull_secrets, json_pack("{s:s}", "name", name)) < 0)
		return -ENOMEM;
	return 0;
}

int
placement_opts_set(
    struct placement_opts *o, enum placement_opt which, const char *value, char *err, size_t errlen)
{
	static const char *const policies[] = { "Always", "IfNotPresent", "Never", NULL };
	json_t *v = NULL;
	int r;

	if (o == NULL || value == NULL)
		return fail(err, errlen, "no value");
	switch (which) {
	case PLACEMENT_OPT_INTERFACE:
		if ((r = check_ifname(value, err, errlen)) < 0)
			return r;
		return set_str(&o->interface, value);
	case PLACEMENT_OPT_PULL_POLICY:
		if (!one_of(value, policies))
			return fail(
			    err, errlen, "\"%s\" is not Always, IfNotPresent or Never", value);
		return set_str(&o->pull_policy, value);
	case PLACEMENT_OPT_PRIORITY_CLASS:
	case PLACEMENT_OPT_PULL_SECRET:
		if (!is_dns_subdomain(value, strlen(value)))
			return fail(err, errlen,
			    "\"%s\" is not an object name (lower-case DNS subdomain, at most %d "
			    "characters)",
			    value, DNS_SUBDOMAIN_MAX);
		if (which == PLACEMENT_OPT_PRIORITY_CLASS)
			return set_str(&o->priority_class, value);
		return add_pull_secret(o, value, err, errlen);
	case PLACEMENT_OPT_REPLICAS:
		return parse_replicas(value, &o->replicas, err, errlen);
	case PLACEMENT_OPT_LEASE_DURATION:
		return set_seconds(&o->lease_ms, which, value, err, errlen);
	case PLACEMENT_OPT_RENEW_DEADLINE:
		return set_seconds(&o->renew_ms, which, value, err, errlen);
	case PLACEMENT_OPT_RETRY_PERIOD:
		return set_seconds(&o->retry_ms, which, value, err, errlen);
	case PLACEMENT_OPT_RESOURCES:
	case PLACEMENT_OPT_NODE_SELECTOR:
	case PLACEMENT_OPT_TOLERATIONS:
		if ((r = load_json(value, &v, err, errlen)) < 0)
			return r;
		r = which == PLACEMENT_OPT_RESOURCES	   ? check_resources(v, err, errlen)
		    : which == PLACEMENT_OPT_NODE_SELECTOR ? check_node_selector(v, err, errlen)
							   : check_tolerations(v, err, errlen);
		if (r < 0) {
			json_decref(v);
			return r;
		}
		if (which == PLACEMENT_OPT_RESOURCES) {
			if (quantities_as_strings(v) < 0) {
				json_decref(v);
				return -ENOMEM;
			}
			/* {} is "no requests, no limits", not the default: keep it */
			json_decref(o->resources);
			o->resources = v;
		} else {
			set_json(which == PLACEMENT_OPT_NODE_SELECTOR ? &o->node_selector
								      : &o->tolerations,
			    v);
		}
		return 0;
	}
	return fail(err, errlen, "unknown option");
}

/* v, or dflt when v is 0 (not given). */
static int
or_default(int v, int dflt)
{
	return v != 0 ? v : dflt;
}

/*
 * The election durations must be ordered: below < above. When they are not, the one the
 * admin gave is at fault (below when both were given); the reason names the other's flag.
 */
static int
check_order(enum placement_opt below, int below_set, int below_ms, enum placement_opt above,
    int above_set, int above_ms, enum placement_opt *which, char *err, size_t len)
{
	static const struct {
		enum placement_opt opt;
		const char *what, *flag;
	} names[] = {
	    {PLACEMENT_OPT_LEASE_DURATION, "Lease duration", "--agent-lease-duration"},
	    {PLACEMENT_OPT_RENEW_DEADLINE, "renew deadline", "--agent-renew-deadline"},
	    {PLACEMENT_OPT_RETRY_PERIOD, "retry period", "--agent-retry-period"},
	};
	char mine[SECONDS_LEN], other[SECONDS_LEN];
	bool blame_below = below_set != 0 || above_set == 0;
	enum placement_opt o = blame_below ? above : below; /* the other knob */
	size_t i;

	if (below_ms < above_ms)
		return 0;
	for (i = 0; i < ELEMENTSOF(names) - 1; i++)
		if (names[i].opt == o)
			break;
	format_seconds(blame_below ? below_ms : above_ms, mine);
	format_seconds(blame_below ? above_ms : below_ms, other);
	if (which != NULL)
		*which = blame_below ? below : above;
	return fail(err, len, "%s is not %s than the %s (%s %s%s)", mine,
	    blame_below ? "shorter" : "longer", names[i].what, names[i].flag, other,
	    (blame_below ? above_set : below_set) != 0 ? "" : ", the default");
}

int
placement_opts_check(
    const struct placement_opts *o, enum placement_opt *which, char *err, size_t errlen)
{
	static const struct placement_opts none;
	int lease, renew, retry, r;

	if (o == NULL)
		o = &none;
	lease = or_default(o->lease_ms, PLACEMENT_LEASE_MS);
	renew = or_default(o->renew_ms, PLACEMENT_RENEW_MS);
	retry = or_default(o->retry_ms, PLACEMENT_RETRY_MS);
	if ((r = check_order(PLACEMENT_OPT_RENEW_DEADLINE, o->renew_ms, renew,
		 PLACEMENT_OPT_LEASE_DURATION, o->lease_ms, lease, which, err, errlen)) < 0)
		return r;
	return check_order(PLACEMENT_OPT_RETRY_PERIOD, o->retry_ms, retry,
	    PLACEMENT_OPT_RENEW_DEADLINE, o->renew_ms, renew, which, err, errlen);
}

void
placement_opts_clear(struct placement_opts *o)
{
	if (o == NULL)
		return;
	free(o->interface);
	free(o->pull_policy);
	free(o->priority_class);
	json_decref(o->pull_secrets);
	json_decref(o->resources);
	json_decref(o->node_selector);
	json_decref(o->tolerations);
	memset(o, 0, sizeof(*o));
}

/* *dst = a copy of src; false on ENOMEM. */
static bool
copy_str(char **dst, const char *src)
{
	return src == NULL || (*dst = strdup(src)) != NULL;
}

static bool
copy_json(json_t **dst, const json_t *src)
{
	return src == NULL || (*dst = json_deep_copy(src)) != NULL;
}

int
placement_opts_copy(struct placement_opts *dst, const struct placement_opts *src)
{
	memset(dst, 0, sizeof(*dst));
	if (src == NULL)
		return 0;
	dst->replicas = src->replicas;
	dst->lease_ms = src->lease_ms;
	dst->renew_ms = src->renew_ms;
	dst->retry_ms = src->retry_ms;
	if (copy_str(&dst->interface, src->interface) &&
	    copy_str(&dst->pull_policy, src->pull_policy) &&
	    copy_str(&dst->priority_class, src->priority_class) &&
	    copy_json(&dst->pull_secrets, src->pull_secrets) &&
	    copy_json(&dst->resources, src->resources) &&
	    copy_json(&dst->node_selector, src->node_selector) &&
	    copy_json(&dst->tolerations, src->tolerations))
		return 0;
	placement_opts_clear(dst);
	return -ENOMEM;
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
	return or_default(in->opts != NULL ? in->opts->replicas : 0, PLACEMENT_REPLICAS);
}

/* The election durations (given or default) as the agent's flags take them. */
static void
opt_election(const struct placement_input *in, char lease[SECONDS_LEN], char renew[SECONDS_LEN],
    char retry[SECONDS_LEN])
{
	const struct placement_opts *o = in->opts;

	format_seconds(or_default(o != NULL ? o->lease_ms : 0, PLACEMENT_LEASE_MS), lease);
	format_seconds(or_default(o != NULL ? o->renew_ms : 0, PLACEMENT_RENEW_MS), renew);
	format_seconds(or_default(o != NULL ? o->retry_ms : 0, PLACEMENT_RETRY_MS), retry);
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
	char replicas[16], lease[SECONDS_LEN], renew[SECONDS_LEN], retry[SECONDS_LEN];
	const char *parts[14];
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
	char lease[SECONDS_LEN], renew[SECONDS_LEN], retry[SECONDS_LEN];
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

	json_array_foreach(cs, i, c) {
		const char *n = json_string_value(json_object_get(c, "name"));

		if (n != NULL && strcmp(n, PLACEMENT_CONTAINER) == 0)
			return json_string_value(json_object_get(c, "image"));
	}
	return NULL;
}
