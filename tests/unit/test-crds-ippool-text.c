/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/ippool-text.c: ippool_decode_text against json_loadb + ippool_decode. For each text
 * both give the same result (the same pool, every allocated entry included) or the same error
 * (code, path and message); a text that is not JSON is refused by both. status.ipv4.allocated
 * and status.ipv6.allocated alike (ipv6: keys in any textual form, duplicates in two forms).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "crds/ippool.h"
#include "lib/util.h"
#include "tests/helpers/ippool-diff.h"
#include "tests/runner.h"

#define POOL_HEAD                                                                                  \
	"{\"apiVersion\": \"network.harvesterhci.io/v1alpha1\", \"kind\": \"IPPool\","             \
	" \"metadata\": {\"name\": \"p\", \"namespace\": \"ns\"},"                                 \
	" \"spec\": {\"networkName\": \"net\", \"ipv4Config\": {\"serverIP\": \"10.70.0.1\","      \
	"  \"cidr\": \"10.70.0.0/16\", \"pool\": {\"start\": \"10.70.0.10\","                      \
	"  \"end\": \"10.70.255.250\"}}}"

/* A pool whose status.ipv4.allocated is the JSON text alloc (new string, caller frees). */
#define POOL_WITH_FMT                                                                              \
	POOL_HEAD ", \"status\": {\"ipv4\": {\"allocated\": %s, \"used\": 3, \"available\": 4}}}"

static char *
pool_with(const char *alloc)
{
	size_t n = sizeof(POOL_WITH_FMT) + strlen(alloc);
	char *s = malloc(n);

	CU_ASSERT_FATAL(s != NULL);
	snprintf(s, n, POOL_WITH_FMT, alloc);
	return s;
}

/* The differential check of text (tests/helpers/ippool-diff.c); a difference fails the test. */
static struct ippool_diff
check_len(const char *text, size_t len)
{
	struct ippool_diff o;
	const char *why = ippool_diff(text, len, &o);

	if (why)
		fprintf(stderr,
		    "ippool_decode_text and json_loadb + ippool_decode differ: %s: %.*s\n", why,
		    (int)(len < 200 ? len : 200), text);
	CU_ASSERT_PTR_NULL(why);
	return o;
}

static struct ippool_diff
check(const char *text)
{
	return check_len(text, strlen(text));
}

/* check() of the pool whose status.ipv4.allocated is alloc. */
static struct ippool_diff
check_pool(const char *alloc)
{
	char *pool = pool_with(alloc);
	struct ippool_diff o = check(pool);

	free(pool);
	return o;
}

static void
test_empty_absent_null(void)
{
	struct ippool_diff o;

	o = check(POOL_HEAD "}");
	CU_ASSERT(o.decoded);
	o = check(POOL_HEAD ", \"status\": {}}");
	CU_ASSERT(o.decoded);
	o = check(POOL_HEAD ", \"status\": null}");
	CU_ASSERT(o.decoded);
	o = check(POOL_HEAD ", \"status\": {\"ipv4\": {\"used\": 0, \"available\": 1}}}");
	CU_ASSERT(o.decoded);
	o = check(POOL_HEAD ", \"status\": {\"ipv4\": 5}}");
	CU_ASSERT_FALSE(o.decoded);
	for (size_t i = 0; i < 3; i++) {
		static const char *const allocs[] = {"{}", "{ \n }", "null"};

		o = check_pool(allocs[i]);
		CU_ASSERT(o.decoded);
		CU_ASSERT_EQUAL(o.n_allocated, 0);
	}
}

static void
test_marks_and_macs(void)
{
	struct ippool_diff o =
	    check_pool("{\"10.70.0.9\": \"EXCLUDED\", \"10.70.0.1\": \"RESERVED\","
		       " \"10.70.1.2\": \"52:54:00:AB:cd:EF\","
		       " \"10.70.0.200\": \"52-54-00-01-02-03\","
		       " \"10.70.0.20\": \"5254.0011.22FF\","
		       " \"10.70.0.3\": \"52:54:00:aa:bb:cc\"}");

	CU_ASSERT(o.decoded);
	CU_ASSERT_EQUAL(o.n_allocated, 6);
}

static void
test_duplicates_last_wins(void)
{
	static const char alloc[] =
	    "{\"10.70.0.5\": \"EXCLUDED\", \"10.70.0.4\": \"RESERVED\","
	    " \"10.70.0.5\": \"52:54:00:00:00:01\", \"10.70.0.4\": \"EXCLUDED\","
	    " \"10.70.0.6\": \"RESERVED\", \"10.70.0.5\": \"52:54:00:00:00:02\"}";
	char *pool = pool_with(alloc);
	struct ippool *p = NULL;
	struct crd_error err;
	struct ippool_diff o;

	CU_ASSERT_EQUAL_FATAL(ippool_decode_text(pool, strlen(pool), &p, &err), 0);
	CU_ASSERT_EQUAL_FATAL(p->status.n_allocated, 3);
	CU_ASSERT_EQUAL(p->status.allocated[0].kind, IPPOOL_ALLOC_EXCLUDED); /* .4 */
	CU_ASSERT_EQUAL(p->status.allocated[1].kind, IPPOOL_ALLOC_MAC);	     /* .5 */
	CU_ASSERT_EQUAL(p->status.allocated[1].mac[5], 2);
	CU_ASSERT_EQUAL(p->status.allocated[2].kind, IPPOOL_ALLOC_RESERVED); /* .6 */
	ippool_free(p);
	free(pool);
	o = check_pool(alloc);
	CU_ASSERT_EQUAL(o.n_allocated, 3);
}

static void
test_whitespace(void)
{
	static const char text[] =
	    " \r\n\t{ \"status\" :\n{ \"ipv4\"\t:\r{\"used\" : 1 , \"allocated\"\n:\n{\n"
	    "\t\"10.70.0.5\"\t:\t\"EXCLUDED\" \r\n,\"10.70.0.6\":\"52:54:00:00:00:01\"\n}\n,"
	    " \"available\": 2 } } , \"spec\" : { \"networkName\" : \"net\" , \"ipv4Config\" :"
	    " { \"serverIP\" : \"10.70.0.1\" , \"cidr\" : \"10.70.0.0/16\" , \"pool\" :"
	    " { \"start\" : \"10.70.0.10\" , \"end\" : \"10.70.0.20\" } } } } \n\t ";
	struct ippool_diff o = check(text);

	CU_ASSERT(o.decoded);
	CU_ASSERT_EQUAL(o.n_allocated, 2);
	o = check_pool("\t{\"10.70.0.5\"  :  \"EXCLUDED\"  }  ");
	CU_ASSERT_EQUAL(o.n_allocated, 1);
}

/* Maps that go through jansson with the rest: the same result or error text. */
static void
test_not_taken(void)
{
	static const struct {
		const char *alloc;
		bool decodes;
	} cases[] = {
	    {"{\"10.70.0.\\u0035\": \"EXCLUDED\"}", true},
	    {"{\"10.70.0.5\": \"EXCLUDE\\u0044\"}", true},
	    {"{\"10.70.0.5\": \"52:54:00:aa:bb:c\\u0063\"}", true},
	    {"{\"10.70.0.5\": \"52:54:00:aa:bb:cc\\u0000\"}", false},
	    {"{\"10.70.0.5\": \"EXCLUDED\", \"10.70.0.6\": 5}", false},
	    {"{\"10.70.0.5\": null}", false},
	    {"{\"10.70.0.5\": [\"EXCLUDED\"]}", false},
	    {"{\"10.70.0.5\": {}}", false},
	    {"{\"10.70.0.5\": true}", false},
	    {"{\"10.70.0.300\": \"EXCLUDED\"}", false},
	    {"{\"010.70.0.5\": \"EXCLUDED\"}", false},
	    {"{\"10.70.0\": \"EXCLUDED\"}", false},
	    {"{\"\": \"EXCLUDED\"}", false},
	    {"{\"10.70.0.5 \": \"EXCLUDED\"}", false},
	    {"{\"10.70.0.5\": \"52:54:00:aa:bb\"}", false},
	    {"{\"10.70.0.5\": \"52:54:00:aa:bb:cg\"}", false},
	    {"{\"10.70.0.5\": \"excluded\"}", false},
	    {"{\"10.70.0.5\": \"\"}", false},
	    {"{\"10.70.0.5\": \"52:54:00:aa:bb:cc:dd:ee:ff\"}", false},
	    {"{\"10.70.0.5\": \"EXCLUDED\", \"x\": \"\xc3\xa9\"}", false},
	    {"[\"10.70.0.5\"]", false},
	    {"\"EXCLUDED\"", false},
	};

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		struct ippool_diff o = check_pool(cases[i].alloc);

		CU_ASSERT_EQUAL(o.decoded, cases[i].decodes);
	}
}

/* Duplicate and escaped keys on the path: jansson keeps the last, so does the codec. */
static void
test_path_ambiguities(void)
{
	static const char *const texts[] = {
	    /* two allocated members in one ipv4 object */
	    POOL_HEAD
	    ", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"},"
	    " \"used\": 1, \"available\": 2, \"allocated\": {\"10.70.0.6\": \"RESERVED\"}}}}",
	    POOL_HEAD
	    ", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"bad\"},"
	    " \"used\": 1, \"available\": 2, \"allocated\": {\"10.70.0.6\": \"RESERVED\"}}}}",
	    /* "allocated" spelled with an escape, alone and after a plain one */
	    POOL_HEAD
	    ", \"status\": {\"ipv4\": {\"allocat\\u0065d\": {\"10.70.0.5\": \"EXCLUDED\"},"
	    " \"used\": 1, \"available\": 2}}}",
	    POOL_HEAD ", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"},"
		      " \"used\": 1, \"available\": 2, \"allocat\\u0065d\": {}}}}",
	    /* status / ipv4 twice, or spelled with an escape */
	    POOL_HEAD ", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"},"
		      " \"used\": 1, \"available\": 2}}, \"status\": {\"ipv4\": {\"allocated\": {},"
		      " \"used\": 1, \"available\": 2}}}",
	    POOL_HEAD
	    ", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"},"
	    " \"used\": 1, \"available\": 2}}, \"st\\u0061tus\": {\"ipv4\": {\"allocated\":"
	    " {\"10.70.0.7\": \"RESERVED\"}, \"used\": 1, \"available\": 2}}}",
	    POOL_HEAD ", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"},"
		      " \"used\": 1, \"available\": 2}, \"ipv\\u0034\": {\"allocated\": {},"
		      " \"used\": 1, \"available\": 2}}}",
	    /* the removed packed member's name is an unknown key like any other */
	    POOL_HEAD ", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"},"
		      " \"used\": 1, \"available\": 2, \"vmdhcp.internal/allocated-packed\":"
		      " \"\"}}}",
	};

	for (size_t i = 0; i < ELEMENTSOF(texts); i++)
		check(texts[i]);
}

/* status shapes nested where they are not the pool's. */
static void
test_nested_decoys(void)
{
	static const char decoy[] =
	    "{\"items\": [{\"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.7\": "
	    "\"EXCLUDED\"}}}}],"
	    " \"object\": {\"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.8\": \"RESERVED\"}}}},"
	    " \"s\": \"\\\"items\\\": [{\", \"q\": \"}]}\"}";
	char text[4096];
	struct ippool_diff o;

	/* In a pool's metadata and at its root under an unknown key. */
	snprintf(text, sizeof(text),
	    "{\"apiVersion\": \"network.harvesterhci.io/v1alpha1\", \"kind\": \"IPPool\","
	    " \"metadata\": {\"name\": \"p\", \"namespace\": \"ns\", \"labels\": {}, \"x\": %s},"
	    " \"extra\": %s, \"spec\": {\"networkName\": \"net\", \"ipv4Config\": {"
	    "  \"serverIP\": \"10.70.0.1\", \"cidr\": \"10.70.0.0/16\", \"pool\": {"
	    "  \"start\": \"10.70.0.10\", \"end\": \"10.70.0.20\"}}},"
	    " \"status\": {\"conditions\": [], \"x\": %s, \"ipv4\": {\"x\": %s, \"allocated\":"
	    " {\"10.70.0.11\": \"EXCLUDED\"}, \"used\": 1, \"available\": 2}}}",
	    decoy, decoy, decoy, decoy);
	o = check(text);
	CU_ASSERT(o.decoded);
	CU_ASSERT_EQUAL(o.n_allocated, 1);
	/* In spec (strict: refused, the same way). */
	snprintf(text, sizeof(text),
	    POOL_HEAD ", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.11\": \"EXCLUDED\"},"
		      " \"used\": 1, \"available\": 2}}, \"spec2\": %s}",
	    decoy);
	check(text);
	/* A watch event is not a pool. */
	snprintf(
	    text, sizeof(text), "{\"type\": \"ADDED\", \"x\": %s, \"object\": %s}", decoy, decoy);
	o = check(text);
	CU_ASSERT_FALSE(o.decoded);
}

/* The items of a list, each on its own (the informer hands the codec one object). */
static void
test_items(void)
{
	char *p1 = pool_with("{\"10.70.0.11\": \"52:54:00:00:00:01\"}");
	char *p2 = pool_with("{\"10.70.0.12\": \"EXCLUDED\", \"10.70.0.13\": \"RESERVED\"}");
	char *p3 = pool_with("{\"10.70.0.14\": \"bad\"}");
	struct ippool_diff o;

	o = check(p1);
	CU_ASSERT_EQUAL(o.n_allocated, 1);
	o = check(p2);
	CU_ASSERT_EQUAL(o.n_allocated, 2);
	o = check(p3);
	CU_ASSERT_FALSE(o.decoded);
	o = check("42");
	CU_ASSERT_FALSE(o.decoded);
	o = check("[]");
	CU_ASSERT_FALSE(o.decoded);
	free(p1);
	free(p2);
	free(p3);
}

/* status.ipv4.allocated with n entries (as scripts/bench-e2e.sh writes it). */
static char *
big_pool(size_t n)
{
	size_t cap = n * 40 + 1024, o;
	char *s = malloc(cap);

	CU_ASSERT_FATAL(s != NULL);
	o = (size_t)snprintf(s, cap,
	    POOL_HEAD ", \"status\": {\"ipv4\": {\"used\": %zu,"
		      " \"available\": %zu, \"allocated\": {",
	    n, 65527 - n);
	for (size_t i = 0; i < n; i++) {
		size_t a = i + 10;

		o += (size_t)snprintf(s + o, cap - o,
		    "%s\"10.70.%zu.%zu\":\"52:54:01:%02zx:%02zx:%02zx\"", i ? "," : "", a / 256,
		    a % 256, i / 65536, (i / 256) % 256, i % 256);
	}
	snprintf(s + o, cap - o, "}}}}");
	return s;
}

static void
test_65000(void)
{
	char *text = big_pool(65000);
	struct ippool_diff o = check(text);

	CU_ASSERT(o.decoded);
	CU_ASSERT_EQUAL(o.n_allocated, 65000);
	free(text);
}

static void
test_not_json(void)
{
	static const char *const texts[] = {
	    "",
	    " ",
	    "{",
	    "}",
	    "nope",
	    "{\"status\": }",
	    "{\"status\" {}}",
	    "[1, 2",
	    "{\"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"}}}",
	    "{\"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"}}}}}",
	    "{\"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"}]}}",
	    "{\"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"}}}} x",
	    "{\"a\": [1}, \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"}}}}",
	    "{\"a\": tru, \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"}}}}",
	    "{\"a\": 1\"b\", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": "
	    "\"EXCLUDED\"}}}}",
	    "{\"a\": \"\x01\", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": "
	    "\"EXCLUDED\"}}}}",
	    "{\"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\",}}}}",
	    "{\"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\" \"EXCLUDED\"}}}}",
	    /* jansson alone refuses a number out of range, beside a map the codec takes */
	    "{\"a\": 123456789012345678901234567890, \"status\": {\"ipv4\": {\"allocated\":"
	    " {\"10.70.0.5\": \"EXCLUDED\"}}}}",
	};

	for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
		struct ippool *p = NULL;
		struct crd_error e = {0};

		check(texts[i]);
		CU_ASSERT_EQUAL(ippool_decode_text(texts[i], strlen(texts[i]), &p, &e), -EBADMSG);
		CU_ASSERT(strncmp(e.message, "not JSON: ", 10) == 0);
	}
	/* A NUL byte inside the map. */
	{
		static const char t[] = "{\"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\":"
					" \"EXCLUDED\0\"}, \"used\": 1, \"available\": 2}}}";

		CU_ASSERT_FALSE(check_len(t, sizeof(t) - 1).decoded);
	}
}

static void
test_truncated(void)
{
	char *pool =
	    pool_with("{\"10.70.0.5\": \"EXCLUDED\", \"10.70.0.6\": \"52:54:00:00:00:01\"}");
	size_t n = strlen(pool), decoded = 0;

	for (size_t len = 0; len <= n; len++)
		decoded += check_len(pool, len).decoded;
	CU_ASSERT_EQUAL(decoded, 1); /* only the whole text */
	free(pool);
}

/* --- status.ipv6.allocated ------------------------------------------------------------ */

#define POOL6_HEAD                                                                                 \
	"{\"apiVersion\": \"network.harvesterhci.io/v1alpha1\", \"kind\": \"IPPool\","             \
	" \"metadata\": {\"name\": \"p\", \"namespace\": \"ns\"},"                                 \
	" \"spec\": {\"networkName\": \"net\", \"ipv4Config\": {\"serverIP\": \"10.70.0.1\","      \
	"  \"cidr\": \"10.70.0.0/16\", \"pool\": {\"start\": \"10.70.0.10\","                      \
	"  \"end\": \"10.70.255.250\"}}, \"ipv6Config\": {\"cidr\": \"2001:db8::/64\","            \
	"  \"serverIP\": \"2001:db8::1\", \"pool\": {\"start\": \"2001:db8::10\","                 \
	"  \"end\": \"2001:db8::ffff:ffff\"}}}"

/* check() of a dual-stack pool with the given status.ipv4 and status.ipv6 members (JSON text
 * of each object's inside, NULL: absent), in that order or ipv6 first. */
static struct ippool_diff
check6(const char *v4, const char *v6, bool v6_first)
{
	char text[8192];
	char a[4096] = "", b[4096] = "";

	if (v4)
		snprintf(a, sizeof(a), "\"ipv4\": {%s}", v4);
	if (v6)
		snprintf(b, sizeof(b), "\"ipv6\": {%s}", v6);
	snprintf(text, sizeof(text), POOL6_HEAD ", \"status\": {%s%s%s}}", v6_first ? b : a,
	    v4 && v6 ? ", " : "", v6_first ? a : b);
	return check(text);
}

static void
test_ipv6_taken(void)
{
	static const char v6[] =
	    "\"used\": 2, \"available\": 9223372036854775807, \"allocated\": {"
	    "\"2001:db8::1\": \"RESERVED\", \"2001:db8::11\": \"EXCLUDED\","
	    " \"2001:db8::1:10\": \"52:54:00:AB:cd:EF\", \"2001:db8::10\": \"52-54-00-01-02-03\","
	    " \"::ffff:10.0.0.1\": \"5254.0011.22FF\", \"2001:db8::a:b:c:d\": \"EXCLUDED\"}";
	static const char v4[] =
	    "\"used\": 1, \"available\": 3, \"allocated\": {\"10.70.0.11\": \"52:54:00:00:00:01\"}";
	struct ippool_diff o;

	for (int first = 0; first < 2; first++) {
		o = check6(v4, v6, first);
		CU_ASSERT(o.decoded);
		CU_ASSERT_EQUAL(o.n_allocated, 1);
		CU_ASSERT_EQUAL(o.n_allocated6, 6);
		o = check6(NULL, v6, first);
		CU_ASSERT_EQUAL(o.n_allocated6, 6);
		/* one map taken, the other left to jansson (refused there, or read there) */
		o = check6("\"used\": 1, \"available\": 3, \"allocated\": {\"10.70.0.11\": \"x\"}",
		    v6, first);
		CU_ASSERT_FALSE(o.decoded);
		o = check6(v4,
		    "\"used\": 0, \"available\": 1, \"allocated\": {\"2001:db8::5\": \"bad\"}",
		    first);
		CU_ASSERT_FALSE(o.decoded);
		o = check6(v4,
		    "\"used\": 0, \"available\": 1, \"allocated\": {\"2001:DB8::5\": \"EXCLUDED\"}",
		    first);
		CU_ASSERT(o.decoded);
		CU_ASSERT_EQUAL(o.n_allocated, 1);
		CU_ASSERT_EQUAL(o.n_allocated6, 1);
		/* a taken map beside an error elsewhere in status.ipv6 */
		o = check6(
		    v4, "\"used\": 0, \"allocated\": {\"2001:db8::5\": \"EXCLUDED\"}", first);
		CU_ASSERT_FALSE(o.decoded);
	}
	/* empty and null maps, no status.ipv6 */
	o = check6(v4, "\"used\": 0, \"available\": 1, \"allocated\": {}", false);
	CU_ASSERT_EQUAL(o.n_allocated6, 0);
	o = check6(v4, "\"used\": 0, \"available\": 1, \"allocated\": null", false);
	CU_ASSERT(o.decoded);
	o = check6(v4, NULL, false);
	CU_ASSERT(o.decoded);
}

/* Keys in another form than RFC 5952 and every other map the strict pass refuses. */
static void
test_ipv6_not_taken(void)
{
	static const struct {
		const char *alloc;
		bool decodes;
	} cases[] = {
	    {"{\"2001:DB8::5\": \"EXCLUDED\"}", true},
	    {"{\"2001:db8:0::5\": \"EXCLUDED\"}", true},
	    {"{\"2001:0db8::5\": \"EXCLUDED\"}", true},
	    {"{\"2001:db8:0:0:0:0:0:5\": \"EXCLUDED\"}", true},
	    {"{\"::ffff:a00:1\": \"EXCLUDED\"}", true},
	    {"{\"2001:db8::5\": \"EXCLUDED\", \"2001:db8::05\": \"EXCLUDED\"}", false},
	    {"{\"2001:db8::5\": \"EXCLUDED\", \"2001:DB8::5\": \"RESERVED\"}", false},
	    {"{\"2001:db8::\\u0035\": \"EXCLUDED\"}", true},
	    {"{\"2001:db8::5\": \"EXCLUDE\\u0044\"}", true},
	    {"{\"2001:db8::5\": 5}", false},
	    {"{\"2001:db8::5\": null}", false},
	    {"{\"2001:db8::g\": \"EXCLUDED\"}", false},
	    {"{\"2001:db8::5%eth0\": \"EXCLUDED\"}", false},
	    {"{\"2001:db8::5/64\": \"EXCLUDED\"}", false},
	    {"{\"10.0.0.5\": \"EXCLUDED\"}", false},
	    {"{\"\": \"EXCLUDED\"}", false},
	    {"{\"2001:db8::5 \": \"EXCLUDED\"}", false},
	    {"{\"2001:db8:1:2:3:4:5:6:7\": \"EXCLUDED\"}", false},
	    {"{\"0000:0000:0000:0000:0000:ffff:255.255.255.255\": \"EXCLUDED\"}", true},
	    {"{\"00000:0000:0000:0000:0000:ffff:255.255.255.255\": \"EXCLUDED\"}", false},
	    {"{\"2001:db8::5\": \"excluded\"}", false},
	    {"{\"2001:db8::5\": \"52:54:00:aa:bb\"}", false},
	    {"[\"2001:db8::5\"]", false},
	};
	char v6[512];
	struct ippool_diff o;

	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		snprintf(v6, sizeof(v6), "\"used\": 0, \"available\": 1, \"allocated\": %s",
		    cases[i].alloc);
		o = check6(NULL, v6, false);
		if (o.decoded != cases[i].decodes)
			printf("\n  case %zu: decoded %d\n", i, o.decoded);
		CU_ASSERT_EQUAL(o.decoded, cases[i].decodes);
	}
}

static void
test_ipv6_duplicates_and_paths(void)
{
	static const char *const texts[] = {
	    /* the same key twice: the last wins */
	    POOL6_HEAD ", \"status\": {\"ipv6\": {\"allocated\": {\"2001:db8::5\": \"EXCLUDED\","
		       " \"2001:db8::4\": \"RESERVED\", \"2001:db8::5\": \"52:54:00:00:00:01\","
		       " \"2001:db8::4\": \"EXCLUDED\", \"2001:db8::5\": \"52:54:00:00:00:02\"},"
		       " \"used\": 1, \"available\": 2}}}",
	    /* two allocated members, ipv6 twice, status twice, escaped names */
	    POOL6_HEAD
	    ", \"status\": {\"ipv6\": {\"allocated\": {\"2001:db8::5\": \"EXCLUDED\"},"
	    " \"used\": 1, \"available\": 2, \"allocated\": {\"2001:db8::6\": \"RESERVED\"}}}}",
	    POOL6_HEAD ", \"status\": {\"ipv6\": {\"allocated\": {\"2001:db8::5\": \"EXCLUDED\"},"
		       " \"used\": 1, \"available\": 2}, \"ipv4\": {\"allocated\": {\"10.70.0.5\":"
		       " \"EXCLUDED\"}, \"used\": 1, \"available\": 2}, \"ipv6\": {\"allocated\":"
		       " {\"2001:db8::7\": \"RESERVED\"}, \"used\": 1, \"available\": 2}}}",
	    POOL6_HEAD ", \"status\": {\"ipv6\": {\"allocated\": {\"2001:db8::5\": \"EXCLUDED\"},"
		       " \"used\": 1, \"available\": 2}}, \"status\": {\"ipv4\": {\"allocated\":"
		       " {\"10.70.0.5\": \"EXCLUDED\"}, \"used\": 1, \"available\": 2}}}",
	    POOL6_HEAD ", \"status\": {\"ipv6\": {\"allocated\": {\"2001:db8::5\": \"EXCLUDED\"},"
		       " \"used\": 1, \"available\": 2}, \"ipv\\u0036\": {\"allocated\": {},"
		       " \"used\": 1, \"available\": 2}}}",
	    POOL6_HEAD ", \"status\": {\"ipv6\": {\"allocated\": {\"2001:db8::5\": \"EXCLUDED\"},"
		       " \"used\": 1, \"available\": 2}, \"ipv6\": 7}}",
	    /* the IPv6 map where an IPv4 one is expected and the other way round */
	    POOL6_HEAD ", \"status\": {\"ipv4\": {\"allocated\": {\"2001:db8::5\": \"EXCLUDED\"},"
		       " \"used\": 1, \"available\": 2}}}",
	    POOL6_HEAD ", \"status\": {\"ipv6\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"},"
		       " \"used\": 1, \"available\": 2}}}",
	    /* no spec.ipv6Config: the status is read all the same */
	    POOL_HEAD ", \"status\": {\"ipv6\": {\"allocated\": {\"2001:db8::5\": \"EXCLUDED\"},"
		      " \"used\": 1, \"available\": 2}}}",
	};

	for (size_t i = 0; i < ELEMENTSOF(texts); i++)
		check(texts[i]);
}

static void
test_ipv6_65000_truncated(void)
{
	size_t n = 65000, cap = n * 48 + 2048, o;
	char *s = malloc(cap);
	struct ippool_diff d;
	size_t decoded = 0;

	CU_ASSERT_FATAL(s != NULL);
	o = (size_t)snprintf(s, cap,
	    POOL6_HEAD ", \"status\": {\"ipv6\": {\"used\": %zu,"
		       " \"available\": 9223372036854775807, \"allocated\": {",
	    n);
	for (size_t i = 0; i < n; i++)
		o += (size_t)snprintf(s + o, cap - o,
		    "%s\"2001:db8::%zx:%zx\":\"52:54:01:%02zx:%02zx:%02zx\"", i ? "," : "",
		    i / 65536 + 1, i % 65536, i / 65536, (i / 256) % 256, i % 256);
	snprintf(s + o, cap - o, "}}}}");
	d = check(s);
	CU_ASSERT(d.decoded);
	CU_ASSERT_EQUAL(d.n_allocated6, n);
	free(s);

	s = strdup(POOL6_HEAD ", \"status\": {\"ipv6\": {\"allocated\": {\"2001:db8::5\":"
			      " \"EXCLUDED\", \"2001:db8::6\": \"52:54:00:00:00:01\"}, \"used\": 1,"
			      " \"available\": 2}}}");
	CU_ASSERT_FATAL(s != NULL);
	for (size_t len = 0; len <= strlen(s); len++)
		decoded += check_len(s, len).decoded;
	CU_ASSERT_EQUAL(decoded, 1); /* only the whole text */
	free(s);
}

static const struct test_case text_tests[] = {
    {"empty, absent, null", test_empty_absent_null},
    {"marks and MACs", test_marks_and_macs},
    {"duplicate keys: the last wins", test_duplicates_last_wins},
    {"whitespace everywhere", test_whitespace},
    {"maps left to jansson", test_not_taken},
    {"ambiguous paths", test_path_ambiguities},
    {"nested decoys", test_nested_decoys},
    {"the items of a list", test_items},
    {"65 000 entries", test_65000},
    {"not JSON", test_not_json},
    {"truncated", test_truncated},
    {"ipv6: maps taken beside ipv4's, in either order", test_ipv6_taken},
    {"ipv6: other key forms and bad maps left to jansson", test_ipv6_not_taken},
    {"ipv6: duplicate keys and ambiguous paths", test_ipv6_duplicates_and_paths},
    {"ipv6: 65 000 entries, truncated", test_ipv6_65000_truncated},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "ippool_decode_text", .tests = text_tests},
    {.name = NULL},
};
