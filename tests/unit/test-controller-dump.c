/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/dump.c: --enable-cache-dump-api's /ipams/{network} and /caches/{network} bodies,
 * byte for byte what the Go project's handlers write for the same pool (upstream
 * pkg/server/handler.go: json.Marshal of pkg/ipam/ipam.go and pkg/cache/cache.go ListAll,
 * map[string]string: compact, keys in byte order).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctrl-internal.h"
#include "tests/runner.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/* 10.0.0.0/24, range .8-.12, server .9 (in the range), router .1 (outside), .10 excluded:
 * upstream's IPAM holds .8, .11 and .12 */
static struct ippool_spec
small_spec(uint32_t *exclude)
{
	struct ippool_spec s;

	memset(&s, 0, sizeof(s));
	snprintf(s.network_name, sizeof(s.network_name), "default/net-1");
	s.cidr_addr = IP(10, 0, 0, 0);
	s.prefix = 24;
	s.server_ip = IP(10, 0, 0, 9);
	s.router = IP(10, 0, 0, 1);
	s.start = IP(10, 0, 0, 8);
	s.end = IP(10, 0, 0, 12);
	*exclude = IP(10, 0, 0, 10);
	s.exclude = exclude;
	s.n_exclude = 1;
	return s;
}

static void
test_small_pool(void)
{
	static const uint8_t a[MAC_LEN] = {0x02, 0, 0, 0, 0, 0x01},
			     b[MAC_LEN] = {0x02, 0, 0, 0, 0, 0x0a};
	uint32_t exclude, addr;
	struct ippool_spec s = small_spec(&exclude);
	struct netpool *p = NULL;
	char *json = NULL;

	CU_ASSERT_EQUAL_FATAL(netpool_new(&s, &p), 0);
	/* empty: every address free, no binding */
	CU_ASSERT_EQUAL_FATAL(ctrl_dump_ipam_json(p, &json), 0);
	CU_ASSERT_STRING_EQUAL(json, "{\"10.0.0.11\":\"false\",\"10.0.0.12\":\"false\","
				     "\"10.0.0.8\":\"false\"}");
	free(json);
	CU_ASSERT_EQUAL_FATAL(ctrl_dump_cache_json(p, &json), 0);
	CU_ASSERT_STRING_EQUAL(json, "{}");
	free(json);

	CU_ASSERT_EQUAL(netpool_bind(p, a, IP(10, 0, 0, 12), "default/vm-a", &addr), 0);
	CU_ASSERT_EQUAL(netpool_bind(p, b, 0, "default/vm-b", &addr), 0);
	CU_ASSERT_EQUAL(addr, IP(10, 0, 0, 8));
	CU_ASSERT_EQUAL_FATAL(ctrl_dump_ipam_json(p, &json), 0);
	CU_ASSERT_STRING_EQUAL(json, "{\"10.0.0.11\":\"false\",\"10.0.0.12\":\"true\","
				     "\"10.0.0.8\":\"true\"}");
	free(json);
	CU_ASSERT_EQUAL_FATAL(ctrl_dump_cache_json(p, &json), 0);
	CU_ASSERT_STRING_EQUAL(
	    json, "{\"02:00:00:00:00:01\":\"10.0.0.12\",\"02:00:00:00:00:0a\":\"10.0.0.8\"}");
	free(json);

	/* released: free again, gone from the cache */
	CU_ASSERT_EQUAL(netpool_release(p, a, "default/vm-a"), 0);
	CU_ASSERT_EQUAL_FATAL(ctrl_dump_ipam_json(p, &json), 0);
	CU_ASSERT_STRING_EQUAL(json, "{\"10.0.0.11\":\"false\",\"10.0.0.12\":\"false\","
				     "\"10.0.0.8\":\"true\"}");
	free(json);
	CU_ASSERT_EQUAL_FATAL(ctrl_dump_cache_json(p, &json), 0);
	CU_ASSERT_STRING_EQUAL(json, "{\"02:00:00:00:00:0a\":\"10.0.0.8\"}");
	free(json);
	netpool_free(p);
}

/* A range too large to list in one body is refused, not built. */
static void
test_huge_range(void)
{
	struct ippool_spec s;
	struct netpool *p = NULL;
	char *json = NULL;

	memset(&s, 0, sizeof(s));
	snprintf(s.network_name, sizeof(s.network_name), "default/big");
	s.cidr_addr = IP(10, 0, 0, 0);
	s.prefix = 8;
	s.server_ip = IP(10, 0, 0, 1);
	s.start = IP(10, 0, 0, 2);
	s.end = IP(10, 255, 255, 254);
	CU_ASSERT_EQUAL_FATAL(netpool_new(&s, &p), 0);
	CU_ASSERT_EQUAL(ctrl_dump_ipam_json(p, &json), -E2BIG);
	CU_ASSERT_PTR_NULL(json);
	CU_ASSERT_EQUAL_FATAL(ctrl_dump_cache_json(p, &json), 0);
	CU_ASSERT_STRING_EQUAL(json, "{}");
	free(json);
	netpool_free(p);
}

static const struct test_case dump_tests[] = {
    {"ipam and cache of a small pool", test_small_pool},
    {"range too large to list", test_huge_range},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "controller-dump", .tests = dump_tests},
    {.name = NULL},
};
