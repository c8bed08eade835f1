/* SPDX-License-Identifier: Apache-2.0 */
/* ipam/rebuild.c: rebuild from bindings, and every conflict reported, none hidden. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/ipam.h"
#include "lib/util.h"
#include "tests/runner.h"

static uint32_t
A(const char *s)
{
	uint32_t a = 0;

	if (ipv4_parse(s, &a) < 0)
		abort();
	return a;
}

static struct ipam_binding
B(const char *ip, const char *mac)
{
	struct ipam_binding b = { .addr = A(ip) };

	if (mac_parse(mac, b.mac) < 0)
		abort();
	return b;
}

static struct ipam_pool *
pool(void)
{
	/* 10.0.0.0/24, range .10-.50, server .10, router .1 (outside), exclude .20 */
	struct ipam_pool *p = NULL;
	uint32_t ex[] = { A("10.0.0.20") };

	CU_ASSERT_FATAL(ipam_pool_new(A("10.0.0.0"), 24, A("10.0.0.10"), A("10.0.0.50"),
	    A("10.0.0.10"), A("10.0.0.1"), ex, 1, &p) == 0);
	return p;
}

static void
test_clean_rebuild(void)
{
	struct ipam_pool *p = pool();
	struct ipam_binding b[] = {
		B("10.0.0.12", "02:00:00:00:00:01"),
		B("10.0.0.11", "02:00:00:00:00:02"),
		B("10.0.0.12", "02:00:00:00:00:01"), /* same pair again (VMNetCfg + IPPool) */
	};
	struct ipam_conflict *c = (struct ipam_conflict *)0x1;
	struct ipam_counts k;
	uint32_t a;

	/* Marks from before the rebuild are dropped. */
	CU_ASSERT_EQUAL(ipam_pool_allocate_addr(p, A("10.0.0.40")), 0);
	CU_ASSERT_EQUAL(ipam_pool_rebuild(p, b, ELEMENTSOF(b), &c), 0);
	CU_ASSERT_PTR_NULL(c);
	ipam_pool_counts(p, &k);
	CU_ASSERT_EQUAL(k.used, 2);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("10.0.0.40")), IPAM_FREE);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("10.0.0.11")), IPAM_USED);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("10.0.0.12")), IPAM_USED);
	/* Never hand out a rebuilt address again. */
	CU_ASSERT_EQUAL(ipam_pool_allocate(p, &a), 0);
	CU_ASSERT_EQUAL(a, A("10.0.0.13"));
	/* Empty rebuild clears everything. */
	CU_ASSERT_EQUAL(ipam_pool_rebuild(p, NULL, 0, NULL), 0);
	ipam_pool_counts(p, &k);
	CU_ASSERT_EQUAL(k.used, 0);
	CU_ASSERT_EQUAL(ipam_pool_allocate(p, &a), 0);
	CU_ASSERT_EQUAL(a, A("10.0.0.11"));
	ipam_pool_free(p);
}

static void
test_two_macs_one_ip(void)
{
	struct ipam_pool *p = pool();
	struct ipam_binding b[] = {
		B("10.0.0.30", "02:00:00:00:00:0a"),
		B("10.0.0.31", "02:00:00:00:00:0b"),
		B("10.0.0.30", "02:00:00:00:00:0c"), /* conflict with [0] */
		B("10.0.0.30", "02:00:00:00:00:0a"), /* same as owner: fine */
		B("10.0.0.30", "02:00:00:00:00:0d"), /* conflict with [0] */
	};
	struct ipam_conflict *c = NULL;
	struct ipam_counts k;
	int n;

	n = ipam_pool_rebuild(p, b, ELEMENTSOF(b), &c);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c[0].kind, IPAM_CONFLICT_DUPLICATE_IP);
	CU_ASSERT_EQUAL(c[0].addr, A("10.0.0.30"));
	CU_ASSERT_EQUAL(c[0].first, 0);
	CU_ASSERT_EQUAL(c[0].second, 2);
	CU_ASSERT_EQUAL(c[1].kind, IPAM_CONFLICT_DUPLICATE_IP);
	CU_ASSERT_EQUAL(c[1].first, 0);
	CU_ASSERT_EQUAL(c[1].second, 4);
	CU_ASSERT_STRING_EQUAL(ipam_conflict_kind_name(c[0].kind), "duplicate-ip");
	/* The contested address stays USED (never handed out twice). */
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("10.0.0.30")), IPAM_USED);
	ipam_pool_counts(p, &k);
	CU_ASSERT_EQUAL(k.used, 2);
	free(c);
	ipam_pool_free(p);
}

static void
test_one_mac_two_ips(void)
{
	struct ipam_pool *p = pool();
	struct ipam_binding b[] = {
		B("10.0.0.33", "02:00:00:00:00:01"),
		B("10.0.0.34", "02:00:00:00:00:02"),
		B("10.0.0.35", "02:00:00:00:00:01"), /* same MAC, second address */
		B("10.0.0.35", "02:00:00:00:00:01"), /* repeat: reported once */
		B("10.0.0.33", "02:00:00:00:00:01"), /* its own address again: fine */
	};
	struct ipam_conflict *c = NULL;
	int n;

	n = ipam_pool_rebuild(p, b, ELEMENTSOF(b), &c);
	CU_ASSERT_EQUAL_FATAL(n, 1);
	CU_ASSERT_EQUAL(c[0].kind, IPAM_CONFLICT_DUPLICATE_MAC);
	CU_ASSERT_EQUAL(c[0].addr, A("10.0.0.35"));
	CU_ASSERT_EQUAL(c[0].first, 0);
	CU_ASSERT_EQUAL(c[0].second, 2);
	/* Both stay USED until the caller resolves it. */
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("10.0.0.33")), IPAM_USED);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("10.0.0.35")), IPAM_USED);
	free(c);
	ipam_pool_free(p);
}

static void
test_invalid_addresses(void)
{
	struct ipam_pool *p = pool();
	struct ipam_binding b[] = {
		B("10.0.0.60", "02:00:00:00:00:01"), /* outside the range */
		B("10.0.0.20", "02:00:00:00:00:02"), /* excluded */
		B("10.0.0.10", "02:00:00:00:00:03"), /* server IP: reserved */
		B("10.0.0.15", "02:00:00:00:00:04"),
	};
	struct ipam_conflict *c = NULL;
	struct ipam_counts k;
	int n;

	n = ipam_pool_rebuild(p, b, ELEMENTSOF(b), &c);
	CU_ASSERT_EQUAL_FATAL(n, 3);
	CU_ASSERT_EQUAL(c[0].kind, IPAM_CONFLICT_OUTSIDE);
	CU_ASSERT_EQUAL(c[0].second, 0);
	CU_ASSERT_EQUAL(c[0].first, 0);
	CU_ASSERT_EQUAL(c[1].kind, IPAM_CONFLICT_EXCLUDED);
	CU_ASSERT_EQUAL(c[1].addr, A("10.0.0.20"));
	CU_ASSERT_EQUAL(c[2].kind, IPAM_CONFLICT_RESERVED);
	CU_ASSERT_EQUAL(c[2].second, 2);
	CU_ASSERT_STRING_EQUAL(ipam_conflict_kind_name(c[2].kind), "reserved");
	CU_ASSERT_STRING_EQUAL(ipam_conflict_kind_name(0), "unknown");
	ipam_pool_counts(p, &k);
	CU_ASSERT_EQUAL(k.used, 1);
	CU_ASSERT_EQUAL(k.excluded, 1);
	CU_ASSERT_EQUAL(k.reserved, 1);
	/* No conflict count without an output array still reports the number. */
	CU_ASSERT_EQUAL(ipam_pool_rebuild(p, b, ELEMENTSOF(b), NULL), 3);
	free(c);
	ipam_pool_free(p);
}

static void
test_rebuild_many(void)
{
	/* A full /16 of bindings rebuilt; each address once, lowest free afterwards. */
	struct ipam_pool *p = NULL;
	size_t n = 60000;
	struct ipam_binding *b = calloc(n, sizeof(*b));
	struct ipam_counts k;
	uint32_t a;

	CU_ASSERT_FATAL(b != NULL);
	CU_ASSERT_FATAL(ipam_pool_new(A("10.1.0.0"), 16, A("10.1.0.2"), A("10.1.255.254"),
	    A("10.1.0.1"), 0, NULL, 0, &p) == 0);
	for (size_t i = 0; i < n; i++) {
		/* reverse order, skipping the 100th address */
		uint32_t idx = (uint32_t)(n - i);

		b[i].addr = A("10.1.0.2") + idx + (idx >= 100);
		b[i].mac[0] = 0x02;
		b[i].mac[3] = (uint8_t)(i >> 16);
		b[i].mac[4] = (uint8_t)(i >> 8);
		b[i].mac[5] = (uint8_t)i;
	}
	CU_ASSERT_EQUAL(ipam_pool_rebuild(p, b, n, NULL), 0);
	ipam_pool_counts(p, &k);
	CU_ASSERT_EQUAL(k.used, n);
	CU_ASSERT_EQUAL(ipam_pool_allocate(p, &a), 0);
	CU_ASSERT_EQUAL(a, A("10.1.0.2"));
	CU_ASSERT_EQUAL(ipam_pool_allocate(p, &a), 0);
	CU_ASSERT_EQUAL(a, A("10.1.0.2") + 100);
	free(b);
	ipam_pool_free(p);
}

static const struct test_case rebuild_tests[] = {
	{ "clean rebuild", test_clean_rebuild },
	{ "two MACs one IP reported", test_two_macs_one_ip },
	{ "one MAC two IPs reported", test_one_mac_two_ips },
	{ "outside/excluded/reserved reported", test_invalid_addresses },
	{ "rebuild 60000 bindings", test_rebuild_many },
	{ NULL, NULL },
};

const struct test_suite test_suites[] = {
	{ .name = "ipam-rebuild", .tests = rebuild_tests },
	{ .name = NULL },
};
