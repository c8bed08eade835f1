/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/ippool-load.c: ippool_json_loadb against json_loadb. For each text, every IPPool
 * candidate (the root, a watch event's "object", each list item) must decode to the same
 * result or the same error from both trees, and the trees must be equal once allocated and
 * the packed member are set aside. Plus the packed member's own validation in ippool_decode.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "crds/ippool.h"
#include "lib/util.h"
#include "tests/runner.h"

static const size_t flag_sets[] = {
    0,
    JSON_REJECT_DUPLICATES,
    JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK,
};

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

static size_t
candidates(json_t *root, json_t **out, size_t max)
{
	json_t *items = json_object_get(root, "items"), *obj = json_object_get(root, "object");
	size_t n = 0;

	if (!json_is_object(root))
		return 0;
	out[n++] = root;
	if (obj)
		out[n++] = obj;
	for (size_t i = 0; i < json_array_size(items) && n < max; i++)
		out[n++] = json_array_get(items, i);
	return n;
}

static bool
same_status(const struct ippool_status *a, const struct ippool_status *b)
{
	if (a->has_ipv4 != b->has_ipv4 || a->n_allocated != b->n_allocated || a->used != b->used ||
	    a->available != b->available)
		return false;
	for (size_t i = 0; i < a->n_allocated; i++) {
		const struct ippool_alloc *x = &a->allocated[i], *y = &b->allocated[i];

		if (x->addr != y->addr || x->kind != y->kind ||
		    memcmp(x->mac, y->mac, MAC_LEN) != 0)
			return false;
	}
	return true;
}

/* Drop status.ipv4's allocated and packed member (when the candidate has them). */
static void
strip(json_t *cand)
{
	json_t *ipv4 = json_object_get(json_object_get(cand, "status"), "ipv4");

	if (json_is_object(ipv4)) {
		json_object_del(ipv4, "allocated");
		json_object_del(ipv4, IPPOOL_ALLOCATED_PACKED);
	}
}

struct outcome {
	bool loaded;
	size_t n_packed;  /* packed members ippool_json_loadb added (not the text's own) */
	size_t n_decoded; /* candidates that decoded */
	size_t n_allocated;
};

/* The differential check of text with flags; CUnit assertions on every difference. */
static struct outcome
check_flags(const char *text, size_t len, size_t flags)
{
	struct outcome o = {0};
	json_error_t ea, eb;
	json_t *a = json_loadb(text, len, flags, &ea);
	json_t *b = ippool_json_loadb(text, len, flags, &eb);
	json_t *ca[64], *cb[64];
	size_t na, nb;

	CU_ASSERT_EQUAL(a == NULL, b == NULL);
	CU_ASSERT_STRING_EQUAL(ea.text, eb.text);
	CU_ASSERT_STRING_EQUAL(ea.source, eb.source);
	CU_ASSERT_EQUAL(ea.line, eb.line);
	CU_ASSERT_EQUAL(ea.column, eb.column);
	CU_ASSERT_EQUAL(ea.position, eb.position);
	if (!a || !b)
		goto out;
	o.loaded = true;
	na = candidates(a, ca, 64);
	nb = candidates(b, cb, 64);
	CU_ASSERT_EQUAL_FATAL(na, nb);
	for (size_t i = 0; i < na; i++) {
		struct ippool *pa = NULL, *pb = NULL;
		struct crd_error xa, xb;
		int ra, rb;
		json_t *v4 = json_object_get(json_object_get(cb[i], "status"), "ipv4");
		json_t *v4a = json_object_get(json_object_get(ca[i], "status"), "ipv4");

		memset(&xa, 0, sizeof(xa));
		memset(&xb, 0, sizeof(xb));
		ra = ippool_decode(ca[i], &pa, &xa);
		rb = ippool_decode(cb[i], &pb, &xb);
		if (json_object_get(v4, IPPOOL_ALLOCATED_PACKED) &&
		    !json_object_get(v4a, IPPOOL_ALLOCATED_PACKED)) {
			o.n_packed++;
			CU_ASSERT_EQUAL(json_object_size(json_object_get(v4, "allocated")), 0);
		}
		CU_ASSERT_EQUAL(ra, rb);
		CU_ASSERT_STRING_EQUAL(xa.message, xb.message);
		CU_ASSERT_STRING_EQUAL(xa.path, xb.path);
		if (ra == 0 && rb == 0) {
			json_t *ja = ippool_encode(pa), *jb = ippool_encode(pb);

			o.n_decoded++;
			o.n_allocated += pb->status.n_allocated;
			CU_ASSERT(json_equal(ja, jb));
			CU_ASSERT(same_status(&pa->status, &pb->status));
			json_decref(ja);
			json_decref(jb);
		}
		ippool_free(pa);
		ippool_free(pb);
		strip(ca[i]);
		strip(cb[i]);
	}
	CU_ASSERT(json_equal(a, b)); /* all the rest is jansson's own tree */
out:
	json_decref(a);
	json_decref(b);
	return o;
}

/* check_flags with every flag set; returns the outcome with flags 0. */
static struct outcome
check(const char *text)
{
	struct outcome o = check_flags(text, strlen(text), 0);

	for (size_t i = 1; i < ELEMENTSOF(flag_sets); i++)
		check_flags(text, strlen(text), flag_sets[i]);
	return o;
}

/* check() of the bare pool, the pool as a watch event, and in a list (with a plain one). */
static struct outcome
check_pool(const char *alloc)
{
	char *pool = pool_with(alloc), *ev, *list;
	size_t n = strlen(pool) + 128;
	struct outcome o, oe, ol;

	ev = malloc(n);
	list = malloc(2 * n + 200);
	CU_ASSERT_FATAL(ev && list);
	snprintf(ev, n, "{\"type\": \"MODIFIED\", \"object\": %s}", pool);
	snprintf(list, 2 * n + 200,
	    "{\"kind\": \"IPPoolList\", \"metadata\": {}, \"items\": [%s, " POOL_HEAD "}, %s]}",
	    pool, pool);
	o = check(pool);
	oe = check(ev);
	ol = check(list);
	CU_ASSERT_EQUAL(oe.n_packed, o.n_packed);
	CU_ASSERT_EQUAL(ol.n_packed, 2 * o.n_packed);
	if (o.loaded)
		CU_ASSERT_EQUAL(ol.n_decoded, o.n_decoded ? 3 : 1);
	free(pool);
	free(ev);
	free(list);
	return o;
}

static void
test_empty_absent_null(void)
{
	struct outcome o;

	o = check(POOL_HEAD "}");
	CU_ASSERT_EQUAL(o.n_decoded, 1);
	o = check(POOL_HEAD ", \"status\": {}}");
	CU_ASSERT_EQUAL(o.n_decoded, 1);
	o = check(POOL_HEAD ", \"status\": null}");
	CU_ASSERT_EQUAL(o.n_decoded, 1);
	o = check(POOL_HEAD ", \"status\": {\"ipv4\": {\"used\": 0, \"available\": 1}}}");
	CU_ASSERT_EQUAL(o.n_decoded, 1);
	for (size_t i = 0; i < 3; i++) {
		static const char *const allocs[] = {"{}", "{ \n }", "null"};

		o = check_pool(allocs[i]);
		CU_ASSERT_EQUAL(o.n_decoded, 1);
		CU_ASSERT_EQUAL(o.n_packed, 0);
		CU_ASSERT_EQUAL(o.n_allocated, 0);
	}
}

static void
test_marks_and_macs(void)
{
	struct outcome o = check_pool("{\"10.70.0.9\": \"EXCLUDED\", \"10.70.0.1\": \"RESERVED\","
				      " \"10.70.1.2\": \"52:54:00:AB:cd:EF\","
				      " \"10.70.0.200\": \"52-54-00-01-02-03\","
				      " \"10.70.0.20\": \"5254.0011.22FF\","
				      " \"10.70.0.3\": \"52:54:00:aa:bb:cc\"}");

	CU_ASSERT_EQUAL(o.n_packed, 1);
	CU_ASSERT_EQUAL(o.n_decoded, 1);
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
	json_t *j = ippool_json_loadb(pool, strlen(pool), 0, NULL);
	struct ippool *p = NULL;
	struct crd_error err;
	struct outcome o;

	CU_ASSERT_FATAL(j != NULL);
	CU_ASSERT_EQUAL_FATAL(ippool_decode(j, &p, &err), 0);
	CU_ASSERT_EQUAL_FATAL(p->status.n_allocated, 3);
	CU_ASSERT_EQUAL(p->status.allocated[0].kind, IPPOOL_ALLOC_EXCLUDED); /* .4 */
	CU_ASSERT_EQUAL(p->status.allocated[1].kind, IPPOOL_ALLOC_MAC);	     /* .5 */
	CU_ASSERT_EQUAL(p->status.allocated[1].mac[5], 2);
	CU_ASSERT_EQUAL(p->status.allocated[2].kind, IPPOOL_ALLOC_RESERVED); /* .6 */
	ippool_free(p);
	json_decref(j);
	/* JSON_REJECT_DUPLICATES: jansson's error, not a packed map. */
	CU_ASSERT_PTR_NULL(ippool_json_loadb(pool, strlen(pool), JSON_REJECT_DUPLICATES, NULL));
	free(pool);
	o = check_pool(alloc);
	CU_ASSERT_EQUAL(o.n_packed, 1);
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
	struct outcome o = check(text);

	CU_ASSERT_EQUAL(o.n_packed, 1);
	CU_ASSERT_EQUAL(o.n_decoded, 1);
	CU_ASSERT_EQUAL(o.n_allocated, 2);
	o = check_pool("\t{\"10.70.0.5\"  :  \"EXCLUDED\"  }  ");
	CU_ASSERT_EQUAL(o.n_packed, 1);
}

/* Maps that stay for jansson: same result, and nothing packed. */
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
		struct outcome o = check_pool(cases[i].alloc);

		CU_ASSERT_EQUAL(o.n_packed, 0);
		CU_ASSERT_EQUAL(o.n_decoded, cases[i].decodes);
	}
}

/* Objects on the path that could mislead a byte-level scan: the maps stay for jansson. */
static void
test_path_ambiguities(void)
{
	static const char *const texts[] = {
	    /* two allocated members in one ipv4 object (jansson keeps the last) */
	    POOL_HEAD
	    ", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"},"
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
	    " {}, \"used\": 1, \"available\": 2}}}",
	    POOL_HEAD ", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"},"
		      " \"used\": 1, \"available\": 2}, \"ipv\\u0034\": {\"allocated\": {},"
		      " \"used\": 1, \"available\": 2}}}",
	    /* a packed member written in the text itself */
	    POOL_HEAD ", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\": \"EXCLUDED\"},"
		      " \"used\": 1, \"available\": 2, \"" IPPOOL_ALLOCATED_PACKED "\": \"\"}}}",
	    /* object / items twice in a watch event or a list */
	    "{\"object\": " POOL_HEAD ", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\":"
	    " \"EXCLUDED\"}, \"used\": 1, \"available\": 2}}}, \"object\": " POOL_HEAD "}}",
	    "{\"items\": [" POOL_HEAD ", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\":"
	    " \"EXCLUDED\"}, \"used\": 1, \"available\": 2}}}], \"items\": [" POOL_HEAD "}]}",
	};

	for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
		struct outcome o = check(texts[i]);

		CU_ASSERT_EQUAL(o.n_packed, 0);
		CU_ASSERT(o.loaded);
	}
}

/* "items", "object" and status shapes nested where they are not candidates. */
static void
test_nested_decoys(void)
{
	static const char decoy[] =
	    "{\"items\": [{\"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.7\": "
	    "\"EXCLUDED\"}}}}],"
	    " \"object\": {\"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.8\": \"RESERVED\"}}}},"
	    " \"s\": \"\\\"items\\\": [{\", \"q\": \"}]}\"}";
	char text[4096];
	struct outcome o;

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
	CU_ASSERT_EQUAL(o.n_packed, 1);
	CU_ASSERT_EQUAL(o.n_decoded, 1);
	CU_ASSERT_EQUAL(o.n_allocated, 1);
	/* In spec (strict: refused, the same way). */
	snprintf(text, sizeof(text),
	    POOL_HEAD ", \"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.11\": \"EXCLUDED\"},"
		      " \"used\": 1, \"available\": 2}}, \"spec2\": %s}",
	    decoy);
	o = check(text);
	CU_ASSERT_EQUAL(o.n_packed, 1);
	/* A watch event whose object carries a decoy list. */
	snprintf(
	    text, sizeof(text), "{\"type\": \"ADDED\", \"x\": %s, \"object\": %s}", decoy, decoy);
	o = check(text);
	CU_ASSERT_EQUAL(o.n_packed, 0);
}

static void
test_list_of_three(void)
{
	char *p1 = pool_with("{\"10.70.0.11\": \"52:54:00:00:00:01\"}");
	char *p2 = pool_with("{\"10.70.0.12\": \"EXCLUDED\", \"10.70.0.13\": \"RESERVED\"}");
	char *p3 = pool_with("{\"10.70.0.14\": \"bad\"}");
	size_t n = strlen(p1) + strlen(p2) + strlen(p3) + 200;
	char *list = malloc(n);
	struct outcome o;

	CU_ASSERT_FATAL(list != NULL);
	snprintf(list, n,
	    "{\"apiVersion\": \"network.harvesterhci.io/v1alpha1\", \"kind\": \"IPPoolList\","
	    " \"metadata\": {\"resourceVersion\": \"7\"}, \"items\": [%s, 42, %s, %s]}",
	    p1, p2, p3);
	o = check(list);
	CU_ASSERT_EQUAL(o.n_packed, 2);
	CU_ASSERT_EQUAL(o.n_decoded, 2); /* p1, p2 (not the root: no spec; not 42, p3) */
	CU_ASSERT_EQUAL(o.n_allocated, 3);
	free(list);
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
	json_t *j = ippool_json_loadb(text, strlen(text), 0, NULL);
	json_t *v4 = json_object_get(json_object_get(j, "status"), "ipv4");
	json_t *packed = json_object_get(v4, IPPOOL_ALLOCATED_PACKED);
	struct outcome o;

	CU_ASSERT_FATAL(j != NULL);
	CU_ASSERT(json_is_object(json_object_get(v4, "allocated")));
	CU_ASSERT_EQUAL(json_object_size(json_object_get(v4, "allocated")), 0);
	CU_ASSERT(json_is_string(packed));
	CU_ASSERT_EQUAL(json_string_length(packed), 65000 * sizeof(struct ippool_alloc));
	json_decref(j);
	o = check_flags(text, strlen(text), 0);
	CU_ASSERT_EQUAL(o.n_packed, 1);
	CU_ASSERT_EQUAL(o.n_decoded, 1);
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
	};

	for (size_t i = 0; i < ELEMENTSOF(texts); i++) {
		json_error_t e;

		check(texts[i]);
		CU_ASSERT_PTR_NULL(ippool_json_loadb(texts[i], strlen(texts[i]), 0, &e));
		CU_ASSERT(e.text[0] != '\0');
	}
	/* Text after the root: an error, or ignored with JSON_DISABLE_EOF_CHECK. */
	{
		const char *t = texts[11];
		json_error_t e;
		json_t *j = ippool_json_loadb(t, strlen(t), JSON_DISABLE_EOF_CHECK, &e);

		CU_ASSERT_PTR_NOT_NULL(j);
		CU_ASSERT_PTR_NOT_NULL(
		    json_object_get(json_object_get(json_object_get(j, "status"), "ipv4"),
			IPPOOL_ALLOCATED_PACKED));
		json_decref(j);
	}
	/* A NUL byte inside the map. */
	{
		static const char t[] = "{\"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\":"
					" \"EXCLUDED\0\"}, \"used\": 1, \"available\": 2}}}";

		for (size_t i = 0; i < ELEMENTSOF(flag_sets); i++)
			CU_ASSERT_FALSE(check_flags(t, sizeof(t) - 1, flag_sets[i]).loaded);
	}
}

static void
test_truncated(void)
{
	char *pool =
	    pool_with("{\"10.70.0.5\": \"EXCLUDED\", \"10.70.0.6\": \"52:54:00:00:00:01\"}");
	size_t n = strlen(pool), loaded = 0;

	for (size_t len = 0; len <= n; len++)
		for (size_t i = 0; i < ELEMENTSOF(flag_sets); i++)
			loaded += check_flags(pool, len, flag_sets[i]).loaded;
	/* Only the whole text loads (DECODE_ANY and no EOF check take no prefix either). */
	CU_ASSERT_EQUAL(loaded, ELEMENTSOF(flag_sets));
	free(pool);
}

/* --- the packed member in ippool_decode ------------------------------------------------- */

static int
decode_with_packed(json_t *packed, const char *alloc, struct ippool **ret, struct crd_error *err)
{
	char *text = pool_with(alloc);
	json_t *j = json_loads(text, 0, NULL);
	int r;

	CU_ASSERT_FATAL(j != NULL);
	json_object_set_new(
	    json_object_get(json_object_get(j, "status"), "ipv4"), IPPOOL_ALLOCATED_PACKED, packed);
	r = ippool_decode(j, ret, err);
	json_decref(j);
	free(text);
	return r;
}

static void
test_packed_decode(void)
{
	struct ippool_alloc v[3] = {
	    {.addr = 0x0a460005, .kind = IPPOOL_ALLOC_EXCLUDED},
	    {.addr = 0x0a460006, .kind = IPPOOL_ALLOC_MAC, .mac = {0x52, 0x54, 0, 0, 0, 1}},
	    {.addr = 0x0a460007, .kind = IPPOOL_ALLOC_RESERVED},
	};
	struct ippool *p = NULL;
	struct crd_error err;
	json_t *s;

	/* Valid: the entries, and the packed bytes need no alignment of their own. */
	s = json_stringn_nocheck((const char *)v, sizeof(v));
	CU_ASSERT_EQUAL_FATAL(decode_with_packed(s, "{}", &p, &err), 0);
	CU_ASSERT_EQUAL_FATAL(p->status.n_allocated, 3);
	CU_ASSERT(same_status(&p->status,
	    &(struct ippool_status){
		.has_ipv4 = true, .allocated = v, .n_allocated = 3, .used = 3, .available = 4}));
	p = ippool_free(p);
	/* Empty packed, absent allocated. */
	CU_ASSERT_EQUAL(decode_with_packed(json_string(""), "null", &p, &err), 0);
	CU_ASSERT_EQUAL(p->status.n_allocated, 0);
	p = ippool_free(p);

	/* Odd length. */
	s = json_stringn_nocheck((const char *)v, sizeof(v) - 1);
	CU_ASSERT_EQUAL(decode_with_packed(s, "{}", &p, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.path, "status.ipv4.allocated");
	CU_ASSERT(strstr(err.message, "malformed packed form") != NULL);
	/* Bad kind. */
	v[2].kind = IPPOOL_ALLOC_RESERVED + 1;
	s = json_stringn_nocheck((const char *)v, sizeof(v));
	CU_ASSERT_EQUAL(decode_with_packed(s, "{}", &p, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.path, "status.ipv4.allocated");
	v[2].kind = IPPOOL_ALLOC_RESERVED;
	/* Unsorted, and a repeated address. */
	v[2].addr = 0x0a460001;
	s = json_stringn_nocheck((const char *)v, sizeof(v));
	CU_ASSERT_EQUAL(decode_with_packed(s, "{}", &p, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.path, "status.ipv4.allocated");
	v[2].addr = v[1].addr;
	s = json_stringn_nocheck((const char *)v, sizeof(v));
	CU_ASSERT_EQUAL(decode_with_packed(s, "{}", &p, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.path, "status.ipv4.allocated");
	v[2].addr = 0x0a460007;
	/* Not a string; beside a non-empty map. */
	CU_ASSERT_EQUAL(decode_with_packed(json_integer(5), "{}", &p, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.path, "status.ipv4.allocated");
	s = json_stringn_nocheck((const char *)v, sizeof(v));
	CU_ASSERT_EQUAL(decode_with_packed(s, "{\"10.70.0.9\": \"EXCLUDED\"}", &p, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.path, "status.ipv4.allocated");
	CU_ASSERT_PTR_NULL(p);
}

/* ippool_status_decode reads the packed member too. */
static void
test_packed_status_decode(void)
{
	static const char text[] = "{\"status\": {\"ipv4\": {\"allocated\": {\"10.70.0.5\":"
				   " \"EXCLUDED\"}, \"used\": 1, \"available\": 2}}}";
	json_t *j = ippool_json_loadb(text, strlen(text), 0, NULL);
	struct ippool_status st;
	struct crd_error err;

	CU_ASSERT_FATAL(j != NULL);
	CU_ASSERT_EQUAL_FATAL(ippool_status_decode(json_object_get(j, "status"), &st, &err), 0);
	CU_ASSERT_EQUAL(st.n_allocated, 1);
	CU_ASSERT_EQUAL(st.allocated[0].addr, 0x0a460005u);
	CU_ASSERT_EQUAL(st.allocated[0].kind, IPPOOL_ALLOC_EXCLUDED);
	ippool_status_clear(&st);
	json_decref(j);
}

static const struct test_case load_tests[] = {
    {"empty, absent, null", test_empty_absent_null},
    {"marks and MACs", test_marks_and_macs},
    {"duplicate keys: the last wins", test_duplicates_last_wins},
    {"whitespace everywhere", test_whitespace},
    {"maps left to jansson", test_not_taken},
    {"ambiguous paths", test_path_ambiguities},
    {"nested decoys", test_nested_decoys},
    {"list of three", test_list_of_three},
    {"65 000 entries", test_65000},
    {"not JSON", test_not_json},
    {"truncated", test_truncated},
    {NULL, NULL},
};

static const struct test_case packed_tests[] = {
    {"ippool_decode", test_packed_decode},
    {"ippool_status_decode", test_packed_status_decode},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "ippool_json_loadb", .tests = load_tests},
    {.name = "packed", .tests = packed_tests},
    {.name = NULL},
};
