/* SPDX-License-Identifier: Apache-2.0 */
/* crds/ippool.c: decode/encode round trips and every validation error with its path. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "crds/ippool.h"
#include "lib/util.h"
#include "tests/runner.h"

static const char full_pool[] =
    "{\"apiVersion\": \"network.harvesterhci.io/v1alpha1\", \"kind\": \"IPPool\","
    " \"metadata\": {\"name\": \"net-48\", \"namespace\": \"default\", \"uid\": \"u-1\","
    "  \"resourceVersion\": \"42\", \"generation\": 3,"
    "  \"creationTimestamp\": \"2024-05-01T10:00:00Z\","
    "  \"labels\": {\"a\": \"b\"}, \"annotations\": {\"x\": \"y\"},"
    "  \"finalizers\": [\"network.harvesterhci.io/ippool-controller\"]},"
    " \"spec\": {\"networkName\": \"default/net-48\", \"paused\": true,"
    "  \"ipv4Config\": {\"serverIP\": \"192.168.48.77\", \"cidr\": \"192.168.48.0/24\","
    "   \"pool\": {\"start\": \"192.168.48.81\", \"end\": \"192.168.48.90\","
    "             \"exclude\": [\"192.168.48.81\", \"192.168.48.90\"]},"
    "   \"router\": \"192.168.48.1\", \"dns\": [\"1.1.1.1\", \"8.8.8.8\"],"
    "   \"domainName\": \"example.com\", \"domainSearch\": [\"example.com\", \"lab.local\"],"
    "   \"ntp\": [\"pool.ntp.org\", \"10.0.0.1\"], \"leaseTime\": 300, \"mtu\": 9000,"
    "   \"routes\": [{\"destination\": \"10.10.0.0/16\", \"gateway\": \"192.168.48.2\"},"
    "              {\"destination\": \"0.0.0.0/0\", \"gateway\": \"192.168.48.1\"}]}},"
    " \"status\": {\"ipv4\": {\"allocated\": {\"192.168.48.85\": \"aa:bb:cc:dd:ee:ff\","
    "   \"192.168.48.81\": \"EXCLUDED\", \"192.168.48.77\": \"RESERVED\"},"
    "   \"used\": 1, \"available\": 7},"
    "  \"agentPodRef\": {\"namespace\": \"harvester-system\", \"name\": \"default-net-48-agent\","
    "   \"image\": \"vm-dhcp-agent:v1\", \"uid\": \"p-1\"},"
    "  \"lastUpdate\": \"2024-05-01T10:05:00Z\","
    "  \"conditions\": [{\"type\": \"Registered\", \"status\": \"True\", \"reason\": \"Placed\","
    "   \"message\": \"ok\", \"lastUpdateTime\": \"2024-05-01T10:01:00Z\","
    "   \"lastTransitionTime\": \"2024-05-01T10:01:00Z\", \"observedGeneration\": 3},"
    "   {\"type\": \"CacheReady\", \"status\": \"False\"}]}}";

static const char minimal_pool[] =
    "{\"apiVersion\": \"network.harvesterhci.io/v1alpha1\", \"kind\": \"IPPool\","
    " \"metadata\": {\"name\": \"p\", \"namespace\": \"ns\"},"
    " \"spec\": {\"networkName\": \"net\", \"ipv4Config\": {\"serverIP\": \"10.0.0.2\","
    "  \"cidr\": \"10.0.0.0/24\", \"pool\": {\"start\": \"10.0.0.10\", \"end\": \"10.0.0.20\"}}}}";

static json_t *
load(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);

	if (!j) {
		fprintf(stderr, "bad test JSON: %s at %d\n", e.text, e.position);
		abort();
	}
	return j;
}

static uint32_t
A(const char *s)
{
	uint32_t a = 0;

	if (ipv4_parse(s, &a) < 0)
		abort();
	return a;
}

/* Set (value != NULL, stolen) or delete (NULL) the member at a dotted path with [i]. */
static void
set_path(json_t *root, const char *path, json_t *value)
{
	char buf[256], *save = NULL, *tok;
	json_t *cur = root, *parent = NULL;
	char last[64] = "";
	long idx = -1;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok; tok = strtok_r(NULL, ".", &save)) {
		char *br = strchr(tok, '[');

		idx = -1;
		if (br) {
			*br = '\0';
			idx = strtol(br + 1, NULL, 10);
		}
		parent = cur;
		snprintf(last, sizeof(last), "%s", tok);
		if (idx >= 0) {
			parent = json_object_get(cur, tok);
			cur = json_array_get(parent, (size_t)idx);
		} else {
			cur = json_object_get(cur, tok);
		}
		if (!cur && strtok_r(NULL, "", &save) != NULL)
			abort();
	}
	if (idx >= 0) {
		if (value)
			json_array_set_new(parent, (size_t)idx, value);
		else
			json_array_remove(parent, (size_t)idx);
	} else if (value) {
		json_object_set_new(parent, last, value);
	} else {
		json_object_del(parent, last);
	}
}

static void
test_decode_full(void)
{
	json_t *j = load(full_pool);
	struct ippool *p = NULL;
	struct crd_error err = {0};
	const struct crd_condition *c;
	const struct ippool_alloc *a;

	CU_ASSERT_EQUAL_FATAL(ippool_decode(j, &p, &err), 0);
	CU_ASSERT_STRING_EQUAL(p->meta.name, "net-48");
	CU_ASSERT_STRING_EQUAL(p->meta.namespace, "default");
	CU_ASSERT_STRING_EQUAL(p->meta.resource_version, "42");
	CU_ASSERT_EQUAL(p->meta.generation, 3);
	CU_ASSERT_EQUAL(p->meta.n_finalizers, 1);
	CU_ASSERT_STRING_EQUAL(p->spec.network_name, "default/net-48");
	CU_ASSERT_TRUE(p->spec.paused);
	CU_ASSERT_EQUAL(p->spec.server_ip, A("192.168.48.77"));
	CU_ASSERT_EQUAL(p->spec.cidr_addr, A("192.168.48.0"));
	CU_ASSERT_EQUAL(p->spec.prefix, 24);
	CU_ASSERT_EQUAL(p->spec.start, A("192.168.48.81"));
	CU_ASSERT_EQUAL(p->spec.end, A("192.168.48.90"));
	CU_ASSERT_EQUAL(p->spec.n_exclude, 2);
	CU_ASSERT_EQUAL(p->spec.router, A("192.168.48.1"));
	CU_ASSERT_EQUAL(p->spec.n_dns, 2);
	CU_ASSERT_EQUAL(p->spec.dns[1], A("8.8.8.8"));
	CU_ASSERT_STRING_EQUAL(p->spec.domain_name, "example.com");
	CU_ASSERT_EQUAL(p->spec.n_domain_search, 2);
	CU_ASSERT_EQUAL(p->spec.n_ntp, 2);
	CU_ASSERT_STRING_EQUAL(p->spec.ntp[0], "pool.ntp.org");
	CU_ASSERT_EQUAL(p->spec.lease_time, 300);
	CU_ASSERT_EQUAL(p->spec.mtu, 9000);
	CU_ASSERT_EQUAL_FATAL(p->spec.n_routes, 2);
	CU_ASSERT_EQUAL(p->spec.routes[0].destination, A("10.10.0.0"));
	CU_ASSERT_EQUAL(p->spec.routes[0].prefix, 16);
	CU_ASSERT_EQUAL(p->spec.routes[1].prefix, 0);
	CU_ASSERT_TRUE(p->status.has_ipv4);
	CU_ASSERT_EQUAL(p->status.used, 1);
	CU_ASSERT_EQUAL(p->status.available, 7);
	CU_ASSERT_EQUAL_FATAL(p->status.n_allocated, 3);
	/* sorted by address */
	CU_ASSERT_EQUAL(p->status.allocated[0].addr, A("192.168.48.77"));
	CU_ASSERT_EQUAL(p->status.allocated[0].kind, IPPOOL_ALLOC_RESERVED);
	a = ippool_status_find(&p->status, A("192.168.48.85"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL(a->kind, IPPOOL_ALLOC_MAC);
	CU_ASSERT_EQUAL(a->mac[5], 0xff);
	CU_ASSERT_PTR_NULL(ippool_status_find(&p->status, A("192.168.48.86")));
	CU_ASSERT_TRUE(p->status.has_agent_pod_ref);
	CU_ASSERT_STRING_EQUAL(p->status.agent_pod_ref.image, "vm-dhcp-agent:v1");
	CU_ASSERT_EQUAL(p->status.last_update, 1714557900);
	c = crd_conditions_get(&p->status.conditions, IPPOOL_COND_REGISTERED);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->status, CRD_COND_TRUE);
	CU_ASSERT_STRING_EQUAL(c->reason, "Placed");
	CU_ASSERT_EQUAL(c->observed_generation, 3);
	c = crd_conditions_get(&p->status.conditions, IPPOOL_COND_CACHE_READY);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->status, CRD_COND_FALSE);
	CU_ASSERT_PTR_NULL(c->reason);
	CU_ASSERT_EQUAL(c->observed_generation, 0); /* absent: unset */
	ippool_free(p);
	json_decref(j);
}

static void
test_round_trip(void)
{
	json_t *j = load(full_pool), *out, *again;
	struct ippool *p = NULL, *q = NULL;
	struct crd_error err;

	CU_ASSERT_EQUAL_FATAL(ippool_decode(j, &p, &err), 0);
	out = ippool_encode(p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	/* Every field of the input is canonical already: encode gives it back exactly. */
	CU_ASSERT_TRUE(json_equal(out, j));
	if (!json_equal(out, j)) {
		char *s = json_dumps(out, JSON_SORT_KEYS);

		printf("\n  encoded: %s\n", s);
		free(s);
	}
	CU_ASSERT_EQUAL_FATAL(ippool_decode(out, &q, &err), 0);
	again = ippool_encode(q);
	CU_ASSERT_TRUE(json_equal(again, out));
	json_decref(again);
	json_decref(out);
	ippool_free(q);
	ippool_free(p);
	json_decref(j);
}

/* leaseTime is served as upstream serves it (pkg/dhcp/dhcp.go): above 0 as written, else one
 * year; and what upstream's schema stores is read (prefixes below /8, upper-case networks). */
static void
test_upstream_values(void)
{
	static const struct {
		const char *value; /* NULL: unset */
		uint32_t served;
	} cases[] = {
	    {NULL, 31536000},
	    {"0", 31536000},
	    {"-30", 31536000},
	    {"1", 1},
	    {"59", 59},
	    {"3600", 3600},
	    {"4294967295", 4294967295u},
	    {"4294967296", 4294967295u},
	};
	json_t *j, *spec;
	struct ippool *p = NULL;
	struct crd_error err;

	CU_ASSERT_EQUAL(IPPOOL_LEASE_TIME_DEFAULT, 31536000);
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		j = load(minimal_pool);
		if (cases[i].value)
			set_path(j, "spec.ipv4Config.leaseTime",
			    json_loads(cases[i].value, JSON_DECODE_ANY, NULL));
		CU_ASSERT_EQUAL_FATAL(ippool_decode(j, &p, &err), 0);
		CU_ASSERT_EQUAL(p->spec.lease_time, cases[i].served);
		/* written back as read, nothing when unset */
		spec = ippool_spec_encode(&p->spec);
		if (cases[i].value) {
			CU_ASSERT_TRUE(json_equal(
			    json_object_get(json_object_get(spec, "ipv4Config"), "leaseTime"),
			    json_object_get(
				json_object_get(json_object_get(j, "spec"), "ipv4Config"),
				"leaseTime")));
		} else {
			CU_ASSERT_PTR_NULL(
			    json_object_get(json_object_get(spec, "ipv4Config"), "leaseTime"));
		}
		json_decref(spec);
		p = ippool_free(p);
		json_decref(j);
	}

	/* a /7 (and shorter) network with a range the IPAM can hold */
	j = load(minimal_pool);
	set_path(j, "spec.ipv4Config.cidr", json_string("10.0.0.0/7"));
	CU_ASSERT_EQUAL(ippool_decode(j, &p, &err), 0);
	CU_ASSERT_EQUAL(p ? p->spec.prefix : 0, 7);
	p = ippool_free(p);
	/* upper case: read as written (no NetworkAttachmentDefinition will match) */
	set_path(j, "spec.networkName", json_string("Lab/Net"));
	CU_ASSERT_EQUAL(ippool_decode(j, &p, &err), 0);
	CU_ASSERT_STRING_EQUAL(p ? p->spec.network_name : "", "Lab/Net");
	p = ippool_free(p);
	json_decref(j);
}

static void
test_defaults_and_canonical(void)
{
	json_t *j = load(minimal_pool), *spec;
	struct ippool *p = NULL;
	struct crd_error err;

	set_path(j, "spec.ipv4Config.cidr", json_string("10.0.0.77/24")); /* host bits */
	CU_ASSERT_EQUAL_FATAL(ippool_decode(j, &p, &err), 0);
	CU_ASSERT_STRING_EQUAL(p->spec.network_name, "default/net");
	CU_ASSERT_EQUAL(p->spec.lease_time, IPPOOL_LEASE_TIME_DEFAULT);
	CU_ASSERT_FALSE(p->spec.lease_time_set);
	CU_ASSERT_FALSE(p->spec.paused);
	CU_ASSERT_EQUAL(p->spec.mtu, 0);
	CU_ASSERT_EQUAL(p->spec.router, 0);
	CU_ASSERT_FALSE(p->status.has_ipv4);
	spec = ippool_spec_encode(&p->spec);
	/* Defaults are not written back; the CIDR is kept as written. */
	CU_ASSERT_PTR_NULL(json_object_get(json_object_get(spec, "ipv4Config"), "leaseTime"));
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_object_get(spec, "ipv4Config"), "cidr")),
	    "10.0.0.77/24");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(spec, "networkName")), "default/net");
	json_decref(spec);
	ippool_free(p);

	/* MACs in status are canonicalised. */
	set_path(j, "status",
	    load("{\"ipv4\": {\"allocated\": {\"10.0.0.11\": "
		 "\"AA-BB-CC-00-11-22\"}, \"used\": 1, \"available\": 9}}"));
	CU_ASSERT_EQUAL_FATAL(ippool_decode(j, &p, &err), 0);
	spec = ippool_status_encode(&p->status);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(spec, "ipv4"), "allocated"), "10.0.0.11")),
	    "aa:bb:cc:00:11:22");
	json_decref(spec);
	ippool_free(p);
	json_decref(j);
}

struct bad_case {
	const char *path;  /* member to change */
	const char *value; /* JSON text, or NULL to delete it */
	const char *message;
};

static const struct bad_case bad_cases[] = {
    {"spec.ipv4Config.pool.start", "\"10.0.0.300\"",
	"spec.ipv4Config.pool.start: \"10.0.0.300\" is not an IPv4 address"},
    {"spec.ipv4Config.pool.end", "\"010.0.0.20\"",
	"spec.ipv4Config.pool.end: \"010.0.0.20\" is not an IPv4 address"},
    {"spec.ipv4Config.pool.start", NULL, "spec.ipv4Config.pool.start: required"},
    {"spec.ipv4Config.pool", NULL, "spec.ipv4Config.pool: required"},
    {"spec.ipv4Config.serverIP", NULL, "spec.ipv4Config.serverIP: required"},
    {"spec.ipv4Config.cidr", NULL, "spec.ipv4Config.cidr: required"},
    {"spec.ipv4Config", NULL, "spec.ipv4Config: required"},
    {"spec.networkName", NULL, "spec.networkName: required"},
    {"spec", NULL, "spec: required"},
    {"spec.ipv4Config.cidr", "\"10.0.0.0/33\"",
	"spec.ipv4Config.cidr: \"10.0.0.0/33\" is not an IPv4 CIDR (a.b.c.d/0..32)"},
    {"spec.ipv4Config.cidr", "\"10.0.0.0\"",
	"spec.ipv4Config.cidr: \"10.0.0.0\" is not an IPv4 CIDR (a.b.c.d/0..32)"},
    {"spec.ipv4Config.cidr", "24", "spec.ipv4Config.cidr: must be a string"},
    {"spec.ipv4Config.serverIP", "\"10.0.1.2\"",
	"spec.ipv4Config.serverIP: 10.0.1.2 is outside 10.0.0.0/24"},
    {"spec.ipv4Config.serverIP", "\"10.0.0.255\"",
	"spec.ipv4Config.serverIP: 10.0.0.255 is the network or broadcast address of "
	"10.0.0.0/24"},
    {"spec.ipv4Config.router", "\"10.0.1.1\"",
	"spec.ipv4Config.router: 10.0.1.1 is outside 10.0.0.0/24"},
    {"spec.ipv4Config.router", "\"router\"",
	"spec.ipv4Config.router: \"router\" is not an IPv4 address"},
    {"spec.ipv4Config.pool.start", "\"10.0.1.10\"",
	"spec.ipv4Config.pool.start: 10.0.1.10 is outside 10.0.0.0/24"},
    {"spec.ipv4Config.pool.end", "\"10.0.0.5\"",
	"spec.ipv4Config.pool.end: 10.0.0.5 is before pool.start 10.0.0.10"},
    {"spec.ipv4Config.pool.exclude", "[\"10.0.0.11\", \"10.0.5.1\"]",
	"spec.ipv4Config.pool.exclude[1]: 10.0.5.1 is outside 10.0.0.0/24"},
    {"spec.ipv4Config.pool.exclude", "[\"10.0.0.11\", \"x\"]",
	"spec.ipv4Config.pool.exclude[1]: \"x\" is not an IPv4 address"},
    {"spec.ipv4Config.pool.exclude", "\"10.0.0.11\"",
	"spec.ipv4Config.pool.exclude: must be an array"},
    {"spec.ipv4Config.dns", "[\"1.1.1.1\", \"1.0.0.1\", \"8.8.8.8\", \"8.8.4.4\"]",
	"spec.ipv4Config.dns: at most 3 items (got 4)"},
    {"spec.ipv4Config.dns", "[\"1.1.1\"]",
	"spec.ipv4Config.dns[0]: \"1.1.1\" is not an IPv4 address"},
    {"spec.ipv4Config.ntp", "[\"a\", \"b\", \"c\", \"d\", \"e\"]",
	"spec.ipv4Config.ntp: at most 4 items (got 5)"},
    {"spec.ipv4Config.ntp", "[\"300.1.1.1\"]",
	"spec.ipv4Config.ntp[0]: \"300.1.1.1\" is not an IPv4 address or host name"},
    {"spec.ipv4Config.ntp", "[\"-bad.example\"]",
	"spec.ipv4Config.ntp[0]: \"-bad.example\" is not an IPv4 address or host name"},
    {"spec.ipv4Config.domainName", "\"exa mple.com\"",
	"spec.ipv4Config.domainName: \"exa mple.com\" is not a domain name"},
    {"spec.ipv4Config.domainSearch", "[\"ok.example\", \"bad..example\"]",
	"spec.ipv4Config.domainSearch[1]: \"bad..example\" is not a domain name"},
    {"spec.ipv4Config.leaseTime", "\"3600\"", "spec.ipv4Config.leaseTime: must be an integer"},
    {"spec.ipv4Config.leaseTime", "3600.5", "spec.ipv4Config.leaseTime: must be an integer"},
    {"spec.ipv4Config.mtu", "67", "spec.ipv4Config.mtu: 67 is below the minimum 68"},
    {"spec.ipv4Config.mtu", "65536", "spec.ipv4Config.mtu: 65536 is above the maximum 65535"},
    {"spec.ipv4Config.routes", "[{\"destination\": \"10.1.0.0/16\"}]",
	"spec.ipv4Config.routes[0].gateway: required"},
    {"spec.ipv4Config.routes", "[{\"destination\": \"10.1.0.1/16\", \"gateway\": \"10.0.0.1\"}]",
	"spec.ipv4Config.routes[0].destination: \"10.1.0.1/16\" has host bits set"},
    {"spec.ipv4Config.routes", "[{\"destination\": \"10.1.0.0/33\", \"gateway\": \"10.0.0.1\"}]",
	"spec.ipv4Config.routes[0].destination: \"10.1.0.0/33\" is not an IPv4 CIDR"},
    {"spec.ipv4Config.routes",
	"[{\"destination\": \"10.1.0.0/16\", \"gateway\": \"10.0.0.1\", \"metric\": 1}]",
	"spec.ipv4Config.routes[0].metric: unknown field"},
    {"spec.ipv4Config.routes", "[\"10.1.0.0/16\"]", "spec.ipv4Config.routes[0]: must be an object"},
    {"spec.networkName", "\"a/b/c\"",
	"spec.networkName: \"a/b/c\" is not a \"namespace/name\" or \"name\""},
    {"spec.networkName", "\"lab/net 1\"",
	"spec.networkName: \"lab/net 1\" is not a \"namespace/name\" or \"name\""},
    {"spec.networkName", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
	"spec.networkName: \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\" "
	"is "
	"longer than 64 characters"},
    {"spec.paused", "\"yes\"", "spec.paused: must be a boolean"},
    {"spec.ipv4Config.leasetime", "3600", "spec.ipv4Config.leasetime: unknown field"},
    {"spec.ipv4Config.pool.excludes", "[]", "spec.ipv4Config.pool.excludes: unknown field"},
    {"spec.networkname", "\"x\"", "spec.networkname: unknown field"},
    {"spec", "[]", "spec: must be an object"},
    {"apiVersion", "\"network.harvesterhci.io/v1\"",
	"apiVersion: \"network.harvesterhci.io/v1\" is not network.harvesterhci.io/v1alpha1"},
    {"kind", "\"VirtualMachineNetworkConfig\"",
	"kind: \"VirtualMachineNetworkConfig\" is not IPPool"},
    {"metadata.name", "7", "metadata.name: must be a string"},
    {"metadata.labels", "{\"a\": 1}", "metadata.labels: value of \"a\" must be a string"},
    {"status", "{\"ipv4\": {\"used\": 1}}", "status.ipv4.available: required"},
    {"status",
	"{\"ipv4\": {\"used\": 1, \"available\": 2, \"allocated\": {\"10.0.0.x\": "
	"\"EXCLUDED\"}}}",
	"status.ipv4.allocated[10.0.0.x]: key is not an IPv4 address"},
    {"status",
	"{\"ipv4\": {\"used\": 1, \"available\": 2, \"allocated\": {\"10.0.0.11\": "
	"\"excluded\"}}}",
	"status.ipv4.allocated[10.0.0.11]: \"excluded\" is not a MAC address, EXCLUDED or "
	"RESERVED"},
    {"status", "{\"ipv4\": {\"used\": 1, \"available\": 2, \"allocated\": {\"10.0.0.11\": 5}}}",
	"status.ipv4.allocated[10.0.0.11]: must be a string"},
    {"status", "{\"lastUpdate\": \"yesterday\"}",
	"status.lastUpdate: \"yesterday\" is not an RFC 3339 date-time"},
    {"status", "{\"conditions\": [{\"type\": \"Registered\"}]}",
	"status.conditions[0].status: required"},
    {"status", "{\"conditions\": [{\"type\": \"Registered\", \"status\": \"yes\"}]}",
	"status.conditions[0].status: \"yes\" is not one of the allowed values"},
    {"status",
	"{\"conditions\": [{\"type\": \"A\", \"status\": \"True\"}, "
	"{\"type\": \"A\", \"status\": \"False\"}]}",
	"status.conditions[1]: condition type \"A\" appears twice"},
    {"status",
	"{\"conditions\": [{\"type\": \"A\", \"status\": \"True\", "
	"\"lastTransitionTime\": \"2024-13-01T00:00:00Z\"}]}",
	"status.conditions[0].lastTransitionTime: \"2024-13-01T00:00:00Z\" is not an RFC 3339 "
	"date-time"},
};

static void
test_errors(void)
{
	for (size_t i = 0; i < ELEMENTSOF(bad_cases); i++) {
		const struct bad_case *bc = &bad_cases[i];
		json_t *j = load(minimal_pool);
		struct ippool *p = (struct ippool *)0x1;
		struct crd_error err = {0};
		int r;

		set_path(
		    j, bc->path, bc->value ? json_loads(bc->value, JSON_DECODE_ANY, NULL) : NULL);
		r = ippool_decode(j, &p, &err);
		CU_ASSERT_EQUAL(r, -EINVAL);
		CU_ASSERT_PTR_EQUAL(p, (struct ippool *)0x1);
		if (r != -EINVAL || strcmp(err.message, bc->message) != 0) {
			printf("\n  case %zu (%s): r=%d\n    got:  %s\n    want: %s\n", i, bc->path,
			    r, err.message, bc->message);
			CU_FAIL("error message differs");
		}
		if (r == 0)
			ippool_free(p);
		json_decref(j);
	}
}

static void
test_error_path_field(void)
{
	json_t *j = load(minimal_pool);
	struct ippool *p = NULL;
	struct crd_error err;

	set_path(j, "spec.ipv4Config.pool.start", json_string("10.0.0.300"));
	CU_ASSERT_EQUAL(ippool_decode(j, &p, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.path, "spec.ipv4Config.pool.start");
	/* A NULL error struct is allowed. */
	CU_ASSERT_EQUAL(ippool_decode(j, &p, NULL), -EINVAL);
	/* Not an object at all. */
	json_decref(j);
	j = json_string("IPPool");
	CU_ASSERT_EQUAL(ippool_decode(j, &p, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.message, "(root): must be an object");
	json_decref(j);
}

static void
test_spec_status_only(void)
{
	json_t *j = load(full_pool);
	struct ippool_spec spec;
	struct ippool_status st;
	struct crd_error err;
	json_t *enc;

	CU_ASSERT_EQUAL_FATAL(ippool_spec_decode(json_object_get(j, "spec"), &spec, &err), 0);
	enc = ippool_spec_encode(&spec);
	CU_ASSERT_TRUE(json_equal(enc, json_object_get(j, "spec")));
	json_decref(enc);
	ippool_spec_clear(&spec);
	CU_ASSERT_EQUAL_FATAL(ippool_status_decode(json_object_get(j, "status"), &st, &err), 0);
	enc = ippool_status_encode(&st);
	CU_ASSERT_TRUE(json_equal(enc, json_object_get(j, "status")));
	json_decref(enc);
	ippool_status_clear(&st);
	CU_ASSERT_EQUAL(ippool_status_decode(NULL, &st, &err), 0);
	CU_ASSERT_FALSE(st.has_ipv4);
	set_path(j, "spec.ipv4Config.mtu", json_integer(1));
	CU_ASSERT_EQUAL(ippool_spec_decode(json_object_get(j, "spec"), &spec, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.message, "spec.ipv4Config.mtu: 1 is below the minimum 68");
	json_decref(j);
}

static void
test_set_allocated(void)
{
	struct ippool_status st = {0};
	struct ippool_alloc in[3] = {
	    {.addr = A("10.0.0.12"), .kind = IPPOOL_ALLOC_MAC, .mac = {2, 0, 0, 0, 0, 1}},
	    {.addr = A("10.0.0.10"), .kind = IPPOOL_ALLOC_RESERVED},
	    {.addr = A("10.0.0.11"), .kind = IPPOOL_ALLOC_EXCLUDED},
	};
	json_t *enc;

	CU_ASSERT_EQUAL(ippool_status_set_allocated(&st, in, 3), 0);
	CU_ASSERT_EQUAL(st.n_allocated, 3);
	CU_ASSERT_EQUAL(st.allocated[0].addr, A("10.0.0.10"));
	CU_ASSERT_PTR_NOT_NULL(ippool_status_find(&st, A("10.0.0.12")));
	st.has_ipv4 = true;
	st.used = 1;
	st.available = 5;
	enc = ippool_status_encode(&st);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(enc, "ipv4"), "allocated"), "10.0.0.12")),
	    "02:00:00:00:00:01");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(
		json_object_get(json_object_get(enc, "ipv4"), "allocated"), "10.0.0.10")),
	    "RESERVED");
	CU_ASSERT_EQUAL(
	    json_integer_value(json_object_get(json_object_get(enc, "ipv4"), "available")), 5);
	json_decref(enc);
	in[1].addr = in[0].addr;
	CU_ASSERT_EQUAL(ippool_status_set_allocated(&st, in, 3), -EEXIST);
	CU_ASSERT_EQUAL(st.n_allocated, 3); /* unchanged */
	CU_ASSERT_EQUAL(ippool_status_set_allocated(&st, NULL, 0), 0);
	CU_ASSERT_EQUAL(st.n_allocated, 0);
	CU_ASSERT_PTR_NULL(ippool_status_find(&st, A("10.0.0.12")));
	ippool_status_clear(&st);
	CU_ASSERT_PTR_NULL(ippool_free(NULL));
}

/* ippool_status_equal: every field but the times of the last write; conditions by type. */
static void
test_status_equal(void)
{
	json_t *j = load(full_pool);
	struct ippool *a = NULL, *b = NULL;
	struct crd_error err;
	struct crd_condition tmp;
	char *s;

	CU_ASSERT_EQUAL_FATAL(ippool_decode(j, &a, &err), 0);
	CU_ASSERT_EQUAL_FATAL(ippool_decode(j, &b, &err), 0);
	CU_ASSERT_TRUE(ippool_status_equal(&a->status, &b->status));
	/* times of the last write and the order of conditions do not count */
	b->status.last_update += 60;
	b->status.conditions.items[0].last_update_time += 60;
	b->status.conditions.items[0].last_transition_time += 60;
	tmp = b->status.conditions.items[0];
	b->status.conditions.items[0] = b->status.conditions.items[1];
	b->status.conditions.items[1] = tmp;
	CU_ASSERT_TRUE(ippool_status_equal(&a->status, &b->status));
	/* a NULL string equals "" */
	s = b->status.conditions.items[0].reason;
	b->status.conditions.items[0].reason = "";
	CU_ASSERT_TRUE(ippool_status_equal(&a->status, &b->status));
	b->status.conditions.items[0].reason = s;
	/* everything else does */
	b->status.conditions.items[1].observed_generation++;
	CU_ASSERT_FALSE(ippool_status_equal(&a->status, &b->status));
	b->status.conditions.items[1].observed_generation--;
	b->status.conditions.items[1].status = CRD_COND_FALSE;
	CU_ASSERT_FALSE(ippool_status_equal(&a->status, &b->status));
	b->status.conditions.items[1].status = CRD_COND_TRUE;
	CU_ASSERT_TRUE(ippool_status_equal(&a->status, &b->status));
	b->status.allocated[2].mac[5] ^= 1;
	CU_ASSERT_FALSE(ippool_status_equal(&a->status, &b->status));
	b->status.allocated[2].mac[5] ^= 1;
	b->status.used++;
	CU_ASSERT_FALSE(ippool_status_equal(&a->status, &b->status));
	b->status.used--;
	b->status.agent_pod_ref.image[0] = 'X';
	CU_ASSERT_FALSE(ippool_status_equal(&a->status, &b->status));
	b->status.agent_pod_ref.image[0] = 'v';
	b->status.has_agent_pod_ref = false;
	CU_ASSERT_FALSE(ippool_status_equal(&a->status, &b->status));
	b->status.has_agent_pod_ref = true;
	b->status.conditions.n--;
	CU_ASSERT_FALSE(ippool_status_equal(&a->status, &b->status));
	b->status.conditions.n++;
	CU_ASSERT_TRUE(ippool_status_equal(&a->status, &b->status));
	ippool_free(a);
	ippool_free(b);
	json_decref(j);
}

static const struct test_case ippool_tests[] = {
    {"decode a full object", test_decode_full},
    {"round trip", test_round_trip},
    {"defaults and canonical forms", test_defaults_and_canonical},
    {"leaseTime served as upstream, short prefixes, upper-case networks", test_upstream_values},
    {"every validation error names its path", test_errors},
    {"error path field, NULL err, non-object", test_error_path_field},
    {"spec/status decode and encode alone", test_spec_status_only},
    {"status allocated helpers", test_set_allocated},
    {"status equality", test_status_equal},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "crds-ippool", .tests = ippool_tests},
    {.name = NULL},
};
