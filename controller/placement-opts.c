/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/placement-opts.c - the admin's knobs of the agent Deployment (struct
 * placement_opts, the controller's --agent-* flags and the chart's agent.* values): parsing,
 * the checks Kubernetes would make of them (names, quantities, tolerations, label
 * selectors), the order of the election durations, copy and clear.
 */
#include "controller/placement-opts.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/foreign-kinds.h"
#include "lib/k8s-name.h"
#include "lib/util.h"

/* --- the admin's knobs (struct placement_opts) ---------------------------------------- */

#define IFNAME_MAX 15 /* IFNAMSIZ - 1 */

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
	    {"Ki", 0x1p10},
	    {"Mi", 0x1p20},
	    {"Gi", 0x1p30},
	    {"Ti", 0x1p40},
	    {"Pi", 0x1p50},
	    {"Ei", 0x1p60},
	    {"n", 1e-9},
	    {"u", 1e-6},
	    {"m", 1e-3},
	    {"", 1},
	    {"k", 1e3},
	    {"M", 1e6},
	    {"G", 1e9},
	    {"T", 1e12},
	    {"P", 1e15},
	    {"E", 1e18},
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
	static const char *const std[] = {"cpu", "memory", "ephemeral-storage", NULL};

	if (strchr(name, '/') != NULL)
		return k8s_is_qualified_name(name);
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
	static const char *const keys[] = {"requests", "limits", NULL};
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
		if (!k8s_is_qualified_name(k))
			return fail(err, len, "\"%s\" is not a label key", k);
		if (!json_is_string(val))
			return fail(err, len, "the value of \"%s\" must be a string", k);
		if (!k8s_is_label_value(json_string_value(val)))
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
	static const char *const operators[] = {"Exists", "Equal", NULL};
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
		if (key[0] != '\0' && !k8s_is_qualified_name(key))
			return fail(err, len, "[%zu]: key \"%s\" is not a label key", i, key);
		if (!one_of(op, operators))
			return fail(
			    err, len, "[%zu]: operator \"%s\" is not Exists or Equal", i, op);
		if (key[0] == '\0' && strcmp(op, "Exists") != 0)
			return fail(err, len, "[%zu]: an empty key needs operator Exists", i);
		if (strcmp(op, "Exists") == 0 && value[0] != '\0')
			return fail(err, len, "[%zu]: operator Exists takes no value", i);
		if (!k8s_is_label_value(value))
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
void
placement_format_seconds(int ms, char out[PLACEMENT_SECONDS_LEN])
{
	size_t n;

	if (ms % 1000 == 0) {
		snprintf(out, PLACEMENT_SECONDS_LEN, "%d", ms / 1000);
		return;
	}
	snprintf(out, PLACEMENT_SECONDS_LEN, "%d.%03d", ms / 1000, ms % 1000);
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
	static const char *const policies[] = {"Always", "IfNotPresent", "Never", NULL};
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
		if (!k8s_is_dns_subdomain(value, strlen(value)))
			return fail(err, errlen,
			    "\"%s\" is not an object name (lower-case DNS subdomain, at most %d "
			    "characters)",
			    value, K8S_DNS_SUBDOMAIN_MAX);
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
int
placement_or_default(int v, int dflt)
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
	char mine[PLACEMENT_SECONDS_LEN], other[PLACEMENT_SECONDS_LEN];
	bool blame_below = below_set != 0 || above_set == 0;
	enum placement_opt o = blame_below ? above : below; /* the other knob */
	size_t i;

	if (below_ms < above_ms)
		return 0;
	for (i = 0; i < ELEMENTSOF(names) - 1; i++)
		if (names[i].opt == o)
			break;
	placement_format_seconds(blame_below ? below_ms : above_ms, mine);
	placement_format_seconds(blame_below ? above_ms : below_ms, other);
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
	lease = placement_or_default(o->lease_ms, PLACEMENT_LEASE_MS);
	renew = placement_or_default(o->renew_ms, PLACEMENT_RENEW_MS);
	retry = placement_or_default(o->retry_ms, PLACEMENT_RETRY_MS);
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
	dst->no_dhcp = src->no_dhcp;
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
