/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/ippool-v6.c: IPPool spec.ipv6Config and status.ipv6 decode, defaults, canonical forms,
 * encode round trip, every validation error with its path, status equality, allocated6
 * helpers; VMNetCfg ipv6Address / allocatedIPv6Address.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "crds/ippool.h"
#include "crds/vmnetcfg.h"
#include "lib/ip6.h"
#include "lib/util.h"
#include "tests/runner.h"

static const char dual_pool[] =
    "{\"apiVersion\": \"network.harvesterhci.io/v1alpha1\", \"kind\": \"IPPool\","
    " \"metadata\": {\"name\": \"p\", \"namespace\": \"ns\"},"
    " \"spec\": {\"networkName\": \"net\", \"ipv4Config\": {\"serverIP\": \"10.0.0.2\","
    "  \"cidr\": \"10.0.0.0/24\", \"pool\": {\"start\": \"10.0.0.10\", \"end\": \"10.0.0.20\"}},"
    "  \"ipv6Config\": {\"cidr\": \"2001:db8::/64\", \"serverIP\": \"2001:db8::2\","
    "   \"pool\": {\"start\": \"2001:db8::10\", \"end\": \"2001:db8::ffff\"}}}}";

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

static struct in6_addr
A6(const char *s) {
	struct in6_addr a;

	if (ipv6_parse(s, &a) < 0)
		abort();
	return a;
}

#define CU_ASSERT_IP6(got, text)                                                                   \
	do {                                                                                       \
		struct in6_addr want_ = A6(text);                                                  \
		CU_ASSERT_TRUE(ipv6_equal(&(got), &want_));                                        \
	} while (0)

/* Set (value stolen) or delete (NULL) the member at a dotted path (objects only). */
static void
set_path(json_t *root, const char *path, json_t *value)
{
	char buf[256], *save = NULL, *tok, *next;
	json_t *cur = root;

	snprintf(buf, sizeof(buf), "%s", path);
	tok = strtok_r(buf, ".", &save);
	while (tok) {
		next = strtok_r(NULL, ".", &save);
		if (!next) {
			if (value)
				json_object_set_new(cur, tok, value);
			else
				json_object_del(cur, tok);
			return;
		}
		if (!json_object_get(cur, tok))
			json_object_set_new(cur, tok, json_object());
		cur = json_object_get(cur, tok);
		tok = next;
	}
}

static struct ippool *
decode_with(const char *path, const char *value, int want)
{
	json_t *j = load(dual_pool);
	struct ippool *p = NULL;
	struct crd_error err = {0};
	int r;

	if (path)
		set_path(j, path, value ? json_loads(value, JSON_DECODE_ANY, NULL) : NULL);
	r = ippool_decode(j, &p, &err);
	if (r != want)
		printf("\n  %s = %s: r=%d (%s)\n", path ? path : "-", value ? value : "-", r,
		    err.message);
	CU_ASSERT_EQUAL(r, want);
	json_decref(j);
	return r == 0 ? p : NULL;
}

static void
test_decode_defaults(void)
{
	struct ippool *p = decode_with(NULL, NULL, 0);
	const struct ippool_ipv6_config *c;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_TRUE(p->spec.has_ipv6);
	c = &p->spec.ipv6;
	CU_ASSERT_IP6(c->cidr_addr, "2001:db8::");
	CU_ASSERT_EQUAL(c->prefix, 64);
	CU_ASSERT_IP6(c->server_ip, "2001:db8::2");
	CU_ASSERT_IP6(c->start, "2001:db8::10");
	CU_ASSERT_IP6(c->end, "2001:db8::ffff");
	CU_ASSERT_EQUAL(c->n_exclude, 0);
	CU_ASSERT_EQUAL(c->n_dns, 0);
	CU_ASSERT_EQUAL(c->n_domain_search, 0);
	CU_ASSERT_FALSE(c->preferred_set);
	CU_ASSERT_FALSE(c->valid_set);
	CU_ASSERT_EQUAL(c->valid_lifetime, IPPOOL_LEASE_TIME_DEFAULT);
	CU_ASSERT_EQUAL(c->preferred_lifetime, IPPOOL_LEASE_TIME_DEFAULT);
	CU_ASSERT_FALSE(c->rapid_commit);
	CU_ASSERT_FALSE(c->ra_set);
	CU_ASSERT_FALSE(c->ra.enabled);
	CU_ASSERT_EQUAL(c->ra.interval, IPPOOL6_RA_INTERVAL_DEFAULT);
	CU_ASSERT_EQUAL(c->ra.router_lifetime, 0);
	CU_ASSERT_FALSE(p->status.has_ipv6_status);
	ippool_free(p);

	/* no ipv6Config: all zero, as before the IPv6 fields existed */
	p = decode_with("spec.ipv6Config", NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	CU_ASSERT_FALSE(p->spec.has_ipv6);
	CU_ASSERT_TRUE(ipv6_is_zero(&p->spec.ipv6.server_ip));
	CU_ASSERT_EQUAL(p->spec.ipv6.ra.interval, 0);
	CU_ASSERT_EQUAL(p->spec.ipv6.valid_lifetime, 0);
	ippool_free(p);
}

static void
test_decode_all_fields(void)
{
	static const char cfg[] =
	    "{\"cidr\": \"2001:DB8:0:0:1::77/80\", \"serverIP\": \"2001:db8::1:0:0:2\","
	    " \"pool\": {\"start\": \"2001:db8::1:0:0:100\", \"end\": \"2001:db8::1:0:ffff:ffff\","
	    "  \"exclude\": [\"2001:db8::1:0:0:101\", \"2001:0DB8:0000::1:0:0:102\"]},"
	    " \"dns\": [\"2001:4860:4860::8888\", \"::1\"], \"domainSearch\": [\"a.example\"],"
	    " \"preferredLifetime\": 1800, \"validLifetime\": 3600, \"rapidCommit\": true,"
	    " \"routerAdvertisement\": {\"enabled\": true, \"interval\": 30,"
	    "  \"routerLifetime\": 1800}}";
	struct ippool *p = decode_with("spec.ipv6Config", cfg, 0), *q = NULL;
	const struct ippool_ipv6_config *c;
	struct crd_error err;
	json_t *enc, *v6;
	char *s;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	c = &p->spec.ipv6;
	/* the CIDR as written (host bits kept), any textual form */
	CU_ASSERT_IP6(c->cidr_addr, "2001:db8:0:0:1::77");
	CU_ASSERT_EQUAL(c->prefix, 80);
	CU_ASSERT_EQUAL(c->n_exclude, 2);
	CU_ASSERT_IP6(c->exclude[1], "2001:db8::1:0:0:102");
	CU_ASSERT_EQUAL(c->n_dns, 2);
	CU_ASSERT_IP6(c->dns[1], "::1");
	CU_ASSERT_STRING_EQUAL(c->domain_search[0], "a.example");
	CU_ASSERT_EQUAL(c->preferred_lifetime, 1800);
	CU_ASSERT_EQUAL(c->valid_lifetime, 3600);
	CU_ASSERT_TRUE(c->rapid_commit);
	CU_ASSERT_TRUE(c->ra_set);
	CU_ASSERT_TRUE(c->ra.enabled);
	CU_ASSERT_EQUAL(c->ra.interval, 30);
	CU_ASSERT_EQUAL(c->ra.router_lifetime, 1800);

	/* encoded in RFC 5952 form, then decoded to the same */
	enc = ippool_encode(p);
	CU_ASSERT_PTR_NOT_NULL_FATAL(enc);
	v6 = json_object_get(json_object_get(enc, "spec"), "ipv6Config");
	s = json_dumps(v6, JSON_COMPACT | JSON_SORT_KEYS);
	CU_ASSERT_STRING_EQUAL(s,
	    "{\"cidr\":\"2001:db8::1:0:0:77/80\",\"dns\":[\"2001:4860:4860::8888\",\"::1\"],"
	    "\"domainSearch\":[\"a.example\"],\"pool\":{\"end\":\"2001:db8::1:0:ffff:ffff\","
	    "\"exclude\":[\"2001:db8::1:0:0:101\",\"2001:db8::1:0:0:102\"],"
	    "\"start\":\"2001:db8::1:0:0:100\"},\"preferredLifetime\":1800,\"rapidCommit\":true,"
	    "\"routerAdvertisement\":{\"enabled\":true,\"interval\":30,\"routerLifetime\":1800},"
	    "\"serverIP\":\"2001:db8::1:0:0:2\",\"validLifetime\":3600}");
	free(s);
	CU_ASSERT_EQUAL_FATAL(ippool_decode(enc, &q, &err), 0);
	CU_ASSERT_EQUAL(memcmp(&q->spec.ipv6.ra, &c->ra, sizeof(c->ra)), 0);
	CU_ASSERT_TRUE(ipv6_equal(&q->spec.ipv6.cidr_addr, &c->cidr_addr));
	CU_ASSERT_EQUAL(q->spec.ipv6.n_exclude, 2);
	json_decref(enc);
	ippool_free(q);
	ippool_free(p);

	/* without ipv6Config, the encoder writes none */
	p = decode_with("spec.ipv6Config", NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	enc = ippool_spec_encode(&p->spec);
	CU_ASSERT_PTR_NULL(json_object_get(enc, "ipv6Config"));
	json_decref(enc);
	enc = ippool_status_encode(&p->status);
	CU_ASSERT_PTR_NULL(json_object_get(enc, "ipv6"));
	json_decref(enc);
	ippool_free(p);
}

/* Lifetimes as written -> served (preferred, valid), or refused (0). */
static void
test_lifetimes(void)
{
	static const struct {
		const char *preferred, *valid;
		uint32_t want_preferred, want_valid;
	} cases[] = {
	    {NULL, NULL, 31536000, 31536000},
	    {NULL, "3600", 3600, 3600}, /* preferred follows valid */
	    {"0", "3600", 3600, 3600},
	    {"-5", "-5", 31536000, 31536000},
	    {"1800", NULL, 1800, 31536000},
	    {"3600", "3600", 3600, 3600},
	    {"4294967295", "4294967296", UINT32_MAX, UINT32_MAX}, /* infinity, RFC 8415 §7.7 */
	    {"600", "4294967295", 600, UINT32_MAX},
	    {"3601", "3600", 0, 0},
	    {"4294967295", "3600", 0, 0},
	    {"40000000", NULL, 0, 0},
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		json_t *j = load(dual_pool);
		json_t *cfg = json_object_get(json_object_get(j, "spec"), "ipv6Config");
		struct ippool *p = NULL;
		struct crd_error err = {0};
		int r;

		if (cases[i].preferred)
			json_object_set_new(cfg, "preferredLifetime",
			    json_integer(strtoll(cases[i].preferred, NULL, 10)));
		if (cases[i].valid)
			json_object_set_new(
			    cfg, "validLifetime", json_integer(strtoll(cases[i].valid, NULL, 10)));
		r = ippool_decode(j, &p, &err);
		if (cases[i].want_valid == 0) {
			CU_ASSERT_EQUAL(r, -EINVAL);
			CU_ASSERT_STRING_EQUAL(err.path, "spec.ipv6Config.preferredLifetime");
		} else if (r != 0) {
			CU_FAIL("refused");
			printf("\n  case %zu: %s\n", i, err.message);
		} else {
			CU_ASSERT_EQUAL(p->spec.ipv6.preferred_lifetime, cases[i].want_preferred);
			CU_ASSERT_EQUAL(p->spec.ipv6.valid_lifetime, cases[i].want_valid);
		}
		ippool_free(p);
		json_decref(j);
	}
}

struct bad_case {
	const char *path;
	const char *value; /* JSON, NULL = delete */
	const char *message;
};

static const struct bad_case bad_cases[] = {
    {"spec.ipv6Config.cidr", NULL, "spec.ipv6Config.cidr: required"},
    {"spec.ipv6Config.serverIP", NULL, "spec.ipv6Config.serverIP: required"},
    {"spec.ipv6Config.pool", NULL, "spec.ipv6Config.pool: required"},
    {"spec.ipv6Config.pool.end", NULL, "spec.ipv6Config.pool.end: required"},
    {"spec.ipv6Config", "[]", "spec.ipv6Config: must be an object"},
    {"spec.ipv6Config.leaseTime", "60", "spec.ipv6Config.leaseTime: unknown field"},
    {"spec.ipv6Config.pool.step", "1", "spec.ipv6Config.pool.step: unknown field"},
    {"spec.ipv6Config.routerAdvertisement.managed", "true",
	"spec.ipv6Config.routerAdvertisement.managed: unknown field"},
    {"spec.ipv6Config.cidr", "\"2001:db8::\"",
	"spec.ipv6Config.cidr: \"2001:db8::\" is not an IPv6 CIDR (address/8..128)"},
    {"spec.ipv6Config.cidr", "\"10.0.0.0/24\"",
	"spec.ipv6Config.cidr: \"10.0.0.0/24\" is not an IPv6 CIDR (address/8..128)"},
    {"spec.ipv6Config.cidr", "\"2001:db8::/129\"",
	"spec.ipv6Config.cidr: \"2001:db8::/129\" is not an IPv6 CIDR (address/8..128)"},
    {"spec.ipv6Config.cidr", "\"2001:db8::/7\"",
	"spec.ipv6Config.cidr: prefix /7 is shorter than /8"},
    {"spec.ipv6Config.cidr", "\"2001:db8::/064\"",
	"spec.ipv6Config.cidr: \"2001:db8::/064\" is not an IPv6 CIDR (address/8..128)"},
    {"spec.ipv6Config.cidr", "\"fe80::1%eth0/64\"",
	"spec.ipv6Config.cidr: \"fe80::1%eth0/64\" is not an IPv6 CIDR (address/8..128)"},
    {"spec.ipv6Config.serverIP", "\"10.0.0.2\"",
	"spec.ipv6Config.serverIP: \"10.0.0.2\" is not an IPv6 address"},
    {"spec.ipv6Config.serverIP", "\"2001:db9::2\"",
	"spec.ipv6Config.serverIP: 2001:db9::2 is outside 2001:db8::/64"},
    {"spec.ipv6Config.serverIP", "\"2001:db8::\"",
	"spec.ipv6Config.serverIP: 2001:db8:: is the Subnet-Router anycast address of "
	"2001:db8::/64"},
    {"spec.ipv6Config.pool.start", "\"2001:db8:1::10\"",
	"spec.ipv6Config.pool.start: 2001:db8:1::10 is outside 2001:db8::/64"},
    {"spec.ipv6Config.pool.end", "\"2001:db8::f\"",
	"spec.ipv6Config.pool.end: 2001:db8::f is before pool.start 2001:db8::10"},
    {"spec.ipv6Config.pool.exclude", "[\"2001:db8::11\", \"2001:db9::11\"]",
	"spec.ipv6Config.pool.exclude[1]: 2001:db9::11 is outside 2001:db8::/64"},
    {"spec.ipv6Config.pool.exclude", "[\"2001:db8::zz\"]",
	"spec.ipv6Config.pool.exclude[0]: \"2001:db8::zz\" is not an IPv6 address"},
    {"spec.ipv6Config.dns", "[\"::1\", \"::2\", \"::3\", \"::4\"]",
	"spec.ipv6Config.dns: at most 3 items (got 4)"},
    {"spec.ipv6Config.dns", "[\"8.8.8.8\"]",
	"spec.ipv6Config.dns[0]: \"8.8.8.8\" is not an IPv6 address"},
    {"spec.ipv6Config.domainSearch", "[\"ok.example\", \"bad..example\"]",
	"spec.ipv6Config.domainSearch[1]: \"bad..example\" is not a domain name"},
    {"spec.ipv6Config.preferredLifetime", "\"60\"",
	"spec.ipv6Config.preferredLifetime: must be an integer"},
    {"spec.ipv6Config.rapidCommit", "1", "spec.ipv6Config.rapidCommit: must be a boolean"},
    {"spec.ipv6Config.routerAdvertisement.interval", "3",
	"spec.ipv6Config.routerAdvertisement.interval: 3 is below the minimum 4"},
    {"spec.ipv6Config.routerAdvertisement.interval", "1801",
	"spec.ipv6Config.routerAdvertisement.interval: 1801 is above the maximum 1800"},
    {"spec.ipv6Config.routerAdvertisement.routerLifetime", "9001",
	"spec.ipv6Config.routerAdvertisement.routerLifetime: 9001 is above the maximum 9000"},
    {"spec.ipv6Config.routerAdvertisement.routerLifetime", "199",
	"spec.ipv6Config.routerAdvertisement.routerLifetime: 199 is neither 0 nor at least the "
	"interval (200 s)"},
    {"status.ipv6", "{\"used\": 1}", "status.ipv6.available: required"},
    {"status.ipv6", "{\"used\": 0, \"available\": 1, \"allocated\": {\"10.0.0.1\": \"RESERVED\"}}",
	"status.ipv6.allocated[10.0.0.1]: key is not an IPv6 address"},
    {"status.ipv6", "{\"used\": 0, \"available\": 1, \"allocated\": {\"::1\": \"x\"}}",
	"status.ipv6.allocated[::1]: \"x\" is not a MAC address, EXCLUDED or RESERVED"},
    {"status.ipv6", "{\"used\": 0, \"available\": 1, \"allocated\": {\"::1\": 5}}",
	"status.ipv6.allocated[::1]: must be a string"},
    {"status.ipv6",
	"{\"used\": 0, \"available\": 1, \"allocated\": {\"::1\": \"RESERVED\", \"0::1\": "
	"\"EXCLUDED\"}}",
	"status.ipv6.allocated: ::1 appears twice (in two textual forms)"},
};

static void
test_errors(void)
{
	for (size_t i = 0; i < ELEMENTSOF(bad_cases); i++) {
		const struct bad_case *bc = &bad_cases[i];
		json_t *j = load(dual_pool);
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

/* Corner cases the checks allow: /127 and /128 have no Subnet-Router anycast address in use
 * (RFC 6164 §6), a multicast server is refused, a /8 is accepted. */
static void
test_prefix_corners(void)
{
	struct ippool *p;

	p = decode_with("spec.ipv6Config",
	    "{\"cidr\": \"2001:db8::/127\", \"serverIP\": \"2001:db8::\","
	    " \"pool\": {\"start\": \"2001:db8::1\", \"end\": \"2001:db8::1\"}}",
	    0);
	ippool_free(p);
	p = decode_with("spec.ipv6Config",
	    "{\"cidr\": \"2001:db8::5/128\", \"serverIP\": \"2001:db8::5\","
	    " \"pool\": {\"start\": \"2001:db8::5\", \"end\": \"2001:db8::5\"}}",
	    0);
	ippool_free(p);
	p = decode_with("spec.ipv6Config",
	    "{\"cidr\": \"2000::/8\", \"serverIP\": \"2001:db8::5\","
	    " \"pool\": {\"start\": \"2000::1\", \"end\": "
	    "\"20ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff\"}}",
	    0);
	CU_ASSERT_PTR_NOT_NULL(p);
	ippool_free(p);
	p = decode_with("spec.ipv6Config",
	    "{\"cidr\": \"ff05::/16\", \"serverIP\": \"ff05::2\","
	    " \"pool\": {\"start\": \"ff05::10\", \"end\": \"ff05::20\"}}",
	    -EINVAL);
	CU_ASSERT_PTR_NULL(p);
}

/* status.ipv6: any textual key read, RFC 5952 written; sorted; equality covers it. */
static void
test_status6(void)
{
	static const char st[] =
	    "{\"used\": 2, \"available\": 9223372036854775807, \"allocated\": {"
	    "\"2001:DB8::0:30\": \"52:54:00:AA:BB:CC\", \"2001:db8::11\": \"EXCLUDED\","
	    " \"2001:0db8:0000::2\": \"RESERVED\", \"2001:db8::ffff:10.0.0.1\": "
	    "\"02-00-00-00-00-01\"}}";
	struct ippool *a = decode_with("status.ipv6", st, 0),
		      *b = decode_with("status.ipv6", st, 0);
	const struct ippool_alloc6 *e;
	struct in6_addr k;
	json_t *enc;
	char *s;

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_TRUE(a->status.has_ipv6_status);
	CU_ASSERT_FALSE(a->status.has_ipv4);
	CU_ASSERT_EQUAL(a->status.used6, 2);
	CU_ASSERT_EQUAL(a->status.available6, INT64_MAX);
	CU_ASSERT_EQUAL_FATAL(a->status.n_allocated6, 4);
	CU_ASSERT_IP6(a->status.allocated6[0].addr, "2001:db8::2");
	CU_ASSERT_EQUAL(a->status.allocated6[0].kind, IPPOOL_ALLOC_RESERVED);
	CU_ASSERT_EQUAL(a->status.allocated6[1].kind, IPPOOL_ALLOC_EXCLUDED);
	k = A6("2001:db8::30");
	e = ippool_status_find6(&a->status, &k);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL(e->kind, IPPOOL_ALLOC_MAC);
	CU_ASSERT_EQUAL(e->mac[5], 0xcc);
	k = A6("2001:db8::31");
	CU_ASSERT_PTR_NULL(ippool_status_find6(&a->status, &k));
	enc = ippool_status_encode(&a->status);
	s = json_dumps(json_object_get(enc, "ipv6"), JSON_COMPACT);
	CU_ASSERT_STRING_EQUAL(s,
	    "{\"allocated\":{\"2001:db8::2\":\"RESERVED\",\"2001:db8::11\":\"EXCLUDED\","
	    "\"2001:db8::30\":\"52:54:00:aa:bb:cc\",\"2001:db8::ffff:a00:1\":\"02:00:00:00:00:01\"}"
	    ","
	    "\"used\":2,\"available\":9223372036854775807}");
	free(s);
	json_decref(enc);

	CU_ASSERT_TRUE(ippool_status_equal(&a->status, &b->status));
	b->status.allocated6[2].mac[0] ^= 1;
	CU_ASSERT_FALSE(ippool_status_equal(&a->status, &b->status));
	b->status.allocated6[2].mac[0] ^= 1;
	b->status.allocated6[3].addr.s6_addr[15] ^= 1;
	CU_ASSERT_FALSE(ippool_status_equal(&a->status, &b->status));
	b->status.allocated6[3].addr.s6_addr[15] ^= 1;
	b->status.allocated6[1].kind = IPPOOL_ALLOC_RESERVED;
	CU_ASSERT_FALSE(ippool_status_equal(&a->status, &b->status));
	b->status.allocated6[1].kind = IPPOOL_ALLOC_EXCLUDED;
	b->status.n_allocated6--;
	CU_ASSERT_FALSE(ippool_status_equal(&a->status, &b->status));
	b->status.n_allocated6++;
	b->status.used6++;
	CU_ASSERT_FALSE(ippool_status_equal(&a->status, &b->status));
	b->status.used6--;
	b->status.available6--;
	CU_ASSERT_FALSE(ippool_status_equal(&a->status, &b->status));
	b->status.available6++;
	b->status.has_ipv6_status = false;
	CU_ASSERT_FALSE(ippool_status_equal(&a->status, &b->status));
	b->status.has_ipv6_status = true;
	CU_ASSERT_TRUE(ippool_status_equal(&a->status, &b->status));
	ippool_free(a);
	ippool_free(b);
}

static void
test_set_allocated6(void)
{
	struct ippool_status st = {0};
	struct ippool_alloc6 v[3] = {
	    {.addr = A6("2001:db8::30"), .kind = IPPOOL_ALLOC_MAC, .mac = {2, 0, 0, 0, 0, 1}},
	    {.addr = A6("2001:db8::2"), .kind = IPPOOL_ALLOC_RESERVED},
	    {.addr = A6("2001:db8::1:0"), .kind = IPPOOL_ALLOC_EXCLUDED},
	};
	struct in6_addr k = A6("2001:db8::1:0");
	const struct ippool_alloc6 *e;

	CU_ASSERT_EQUAL(ippool_status_set_allocated6(&st, v, 3), 0);
	CU_ASSERT_EQUAL(st.n_allocated6, 3);
	CU_ASSERT_IP6(st.allocated6[0].addr, "2001:db8::2");
	CU_ASSERT_IP6(st.allocated6[2].addr, "2001:db8::1:0");
	e = ippool_status_find6(&st, &k);
	CU_ASSERT_PTR_NOT_NULL_FATAL(e);
	CU_ASSERT_EQUAL(e->kind, IPPOOL_ALLOC_EXCLUDED);
	/* a duplicate is refused and the old entries kept */
	v[2].addr = v[0].addr;
	CU_ASSERT_EQUAL(ippool_status_set_allocated6(&st, v, 3), -EEXIST);
	CU_ASSERT_EQUAL(st.n_allocated6, 3);
	CU_ASSERT_EQUAL(ippool_status_set_allocated6(&st, v, 0), 0);
	CU_ASSERT_EQUAL(st.n_allocated6, 0);
	CU_ASSERT_PTR_NULL(ippool_status_find6(&st, &k));
	ippool_status_clear(&st);
}

/* VMNetCfg: ipv6Address (spec) and allocatedIPv6Address (status). */
static void
test_vmnetcfg6(void)
{
	static const char text[] =
	    "{\"apiVersion\": \"network.harvesterhci.io/v1alpha1\","
	    " \"kind\": \"VirtualMachineNetworkConfig\", \"metadata\": {\"name\": \"vm\","
	    " \"namespace\": \"ns\"}, \"spec\": {\"vmName\": \"vm\", \"networkConfigs\": ["
	    "  {\"networkName\": \"net\", \"macAddress\": \"52:54:00:00:00:01\","
	    "   \"ipv6Address\": \"2001:DB8:0::5\"},"
	    "  {\"networkName\": \"net2\", \"macAddress\": \"52:54:00:00:00:02\"}]},"
	    " \"status\": {\"networkConfigs\": [{\"networkName\": \"default/net\","
	    "  \"macAddress\": \"52:54:00:00:00:01\", \"allocatedIPv6Address\": \"2001:db8::5\","
	    "  \"state\": \"Allocated\"}]}}";
	json_t *j = load(text), *enc;
	struct vmnetcfg *c = NULL, *d = NULL;
	struct crd_error err = {0};
	char *s;

	CU_ASSERT_EQUAL_FATAL(vmnetcfg_decode(j, &c, &err), 0);
	CU_ASSERT_IP6(c->spec.nics[0].ipv6_address, "2001:db8::5");
	CU_ASSERT_TRUE(ipv6_is_zero(&c->spec.nics[1].ipv6_address));
	CU_ASSERT_IP6(c->status.nics[0].allocated_ipv6, "2001:db8::5");
	enc = vmnetcfg_encode(c);
	s = json_dumps(json_object_get(enc, "spec"), JSON_COMPACT);
	CU_ASSERT_STRING_EQUAL(s,
	    "{\"vmName\":\"vm\",\"networkConfigs\":[{\"networkName\":\"default/net\","
	    "\"macAddress\":\"52:54:00:00:00:01\",\"ipv6Address\":\"2001:db8::5\"},"
	    "{\"networkName\":\"default/net2\",\"macAddress\":\"52:54:00:00:00:02\"}]}");
	free(s);
	CU_ASSERT_EQUAL_FATAL(vmnetcfg_decode(enc, &d, &err), 0);
	CU_ASSERT_TRUE(vmnetcfg_status_equal(&c->status, &d->status));
	d->status.nics[0].allocated_ipv6.s6_addr[15] = 6;
	CU_ASSERT_FALSE(vmnetcfg_status_equal(&c->status, &d->status));
	memset(&d->status.nics[0].allocated_ipv6, 0, sizeof(struct in6_addr));
	CU_ASSERT_FALSE(vmnetcfg_status_equal(&c->status, &d->status));
	json_decref(enc);
	enc = vmnetcfg_status_encode(&d->status);
	CU_ASSERT_PTR_NULL(json_object_get(
	    json_array_get(json_object_get(enc, "networkConfigs"), 0), "allocatedIPv6Address"));
	json_decref(enc);
	vmnetcfg_free(d);
	vmnetcfg_free(c);

	/* bad forms are refused with their path */
	json_object_set_new(
	    json_array_get(json_object_get(json_object_get(j, "spec"), "networkConfigs"), 1),
	    "ipv6Address", json_string("10.0.0.5"));
	CU_ASSERT_EQUAL(vmnetcfg_decode(j, &c, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(
	    err.message, "spec.networkConfigs[1].ipv6Address: \"10.0.0.5\" is not an IPv6 address");
	json_decref(j);
}

static const struct test_case ippool6_tests[] = {
    {"ipv6Config decoded with its defaults; absent is all zero", test_decode_defaults},
    {"every ipv6Config field, canonical encode, round trip", test_decode_all_fields},
    {"lifetimes: defaults, infinity, preferred <= valid", test_lifetimes},
    {"every IPv6 validation error names its path", test_errors},
    {"/127, /128, /8 and a multicast network", test_prefix_corners},
    {"status.ipv6: any key form read, RFC 5952 written, equality", test_status6},
    {"allocated6 helpers: sorted copy, duplicate, lookup", test_set_allocated6},
    {"VMNetCfg ipv6Address and allocatedIPv6Address", test_vmnetcfg6},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "crds-ippool6", .tests = ippool6_tests},
    {.name = NULL},
};
