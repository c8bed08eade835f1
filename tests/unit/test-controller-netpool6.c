/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/netpool6.c and the IPv6 half of controller/netpool.c: pin, keep, lowest free,
 * the error rules, the rebuild from the union of sources (conflicts reported, a contested
 * address never free), status.ipv6 rendering, the bytes counted in the status budget.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/netpool.h"
#include "lib/ip6.h"
#include "tests/runner.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static struct in6_addr
A6(const char *s) {
	struct in6_addr a;

	if (ipv6_parse(s, &a) < 0) {
		fprintf(stderr, "bad test address %s\n", s);
		abort();
	}
	return a;
}

/* A pointer to a parsed address (a compound literal: valid in the enclosing block). */
#define PA6(s) (&(struct in6_addr[1]){A6(s)}[0])

static bool
eq6(const struct in6_addr *a, const char *s)
{
	struct in6_addr b = A6(s);

	return ipv6_equal(a, &b);
}

static const uint8_t MAC_A[MAC_LEN] = {2, 0, 0, 0, 0, 0xa};
static const uint8_t MAC_B[MAC_LEN] = {2, 0, 0, 0, 0, 0xb};
static const uint8_t MAC_C[MAC_LEN] = {2, 0, 0, 0, 0, 0xc};
static const uint8_t MAC_D[MAC_LEN] = {2, 0, 0, 0, 0, 0xd};

static struct in6_addr excl[2];

/* 2001:db8::/64, server ::1, range ::10 - ::14, ::12 excluded (as the IPv4 fixtures). */
static void
spec6(struct ippool_ipv6_config *c, const char *start, const char *end)
{
	memset(c, 0, sizeof(*c));
	c->cidr_addr = A6("2001:db8::");
	c->prefix = 64;
	c->server_ip = A6("2001:db8::1");
	c->start = A6(start);
	c->end = A6(end);
	excl[0] = A6("2001:db8::12");
	c->exclude = excl;
	c->n_exclude = 1;
}

static void
spec_dual(struct ippool_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->cidr_addr = IP(10, 0, 0, 0);
	s->prefix = 24;
	s->server_ip = IP(10, 0, 0, 1);
	s->start = IP(10, 0, 0, 10);
	s->end = IP(10, 0, 0, 20);
	s->has_ipv6 = true;
	spec6(&s->ipv6, "2001:db8::10", "2001:db8::14");
}

static void
test_bind_rules(void)
{
	struct ippool_ipv6_config c;
	struct netpool6 *p;
	struct in6_addr a, pin;

	spec6(&c, "2001:db8::10", "2001:db8::14");
	CU_ASSERT_EQUAL_FATAL(netpool6_new(&c, &p), 0);
	/* lowest free, deterministic */
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_A, NULL, "ns/a", SIZE_MAX, &a), 0);
	CU_ASSERT_TRUE(eq6(&a, "2001:db8::10"));
	/* the same MAC and owner again: its address, no new binding */
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_A, NULL, "ns/a", SIZE_MAX, &a), 0);
	CU_ASSERT_TRUE(eq6(&a, "2001:db8::10"));
	CU_ASSERT_EQUAL(netpool6_size(p), 1);
	/* another owner of the MAC: duplicate */
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_A, NULL, "ns/other", SIZE_MAX, &a), -EBUSY);
	/* a pin: held by A, excluded, reserved (server), outside, the network's first address */
	pin = A6("2001:db8::10");
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_B, &pin, "ns/b", SIZE_MAX, &a), -EEXIST);
	pin = A6("2001:db8::12");
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_B, &pin, "ns/b", SIZE_MAX, &a), -EPERM);
	pin = A6("2001:db8::99");
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_B, &pin, "ns/b", SIZE_MAX, &a), -ERANGE);
	pin = A6("2001:db8::13");
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_B, &pin, "ns/b", SIZE_MAX, &a), 0);
	CU_ASSERT_TRUE(eq6(&a, "2001:db8::13"));
	/* bound at ::13, asked for ::14: released first */
	pin = A6("2001:db8::14");
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_B, &pin, "ns/b", SIZE_MAX, &a), -EALREADY);
	/* the lowest free skips the exclude and the held ones */
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_C, NULL, "ns/c", SIZE_MAX, &a), 0);
	CU_ASSERT_TRUE(eq6(&a, "2001:db8::11"));
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_D, NULL, "ns/d", SIZE_MAX, &a), 0);
	CU_ASSERT_TRUE(eq6(&a, "2001:db8::14"));
	CU_ASSERT_EQUAL(
	    netpool6_bind(p, (uint8_t[]){2, 0, 0, 0, 0, 0xe}, NULL, "ns/e", SIZE_MAX, &a), -ENOSPC);
	CU_ASSERT_EQUAL(netpool6_used(p), 4);
	CU_ASSERT_EQUAL(netpool6_available(p), 0);
	/* release: only by its owner */
	CU_ASSERT_EQUAL(netpool6_release(p, MAC_C, "ns/a"), -EPERM);
	CU_ASSERT_EQUAL(netpool6_release(p, MAC_C, "ns/c"), 0);
	CU_ASSERT_EQUAL(netpool6_release(p, MAC_C, "ns/c"), -ENOENT);
	CU_ASSERT_TRUE(netpool6_is_free(p, PA6("2001:db8::11")));
	CU_ASSERT_EQUAL(netpool6_available(p), 1);
	/* no room in the budget for an entry: refused, the address not taken */
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_C, NULL, "ns/c", 10, &a), -EFBIG);
	CU_ASSERT_TRUE(netpool6_is_free(p, PA6("2001:db8::11")));
	netpool6_free(p);
}

static void
test_adopt(void)
{
	struct ippool_ipv6_config c;
	struct netpool6 *p;
	struct netpool6_source src[] = {{A6("2001:db8::11"), {2, 0, 0, 0, 0, 0xa}, NULL}};
	struct in6_addr a;

	spec6(&c, "2001:db8::10", "2001:db8::14");
	CU_ASSERT_EQUAL_FATAL(netpool6_new(&c, &p), 0);
	CU_ASSERT_EQUAL(netpool6_rebuild(p, src, 1, NULL), 0);
	CU_ASSERT_PTR_NULL(netpool6_by_mac(p, MAC_A)->owner);
	/* known only from the IPPool status: the first VMNetCfg that asks adopts it */
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_A, NULL, "ns/a", SIZE_MAX, &a), 0);
	CU_ASSERT_TRUE(eq6(&a, "2001:db8::11"));
	CU_ASSERT_STRING_EQUAL(netpool6_by_mac(p, MAC_A)->owner, "ns/a");
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_A, NULL, "ns/b", SIZE_MAX, &a), -EBUSY);
	netpool6_free(p);
}

static void
test_rebuild_union(void)
{
	struct ippool_ipv6_config c;
	struct netpool6 *p;
	struct netpool6_conflict *conf = NULL;
	/* VMNetCfg statuses first, then the IPPool status (owner NULL) */
	const struct netpool6_source src[] = {
	    {A6("2001:db8::10"), {2, 0, 0, 0, 0, 0xa}, "ns/a"}, /* 0 */
	    {A6("2001:db8::13"), {2, 0, 0, 0, 0, 0xb}, "ns/b"}, /* 1 */
	    {A6("2001:db8::10"), {2, 0, 0, 0, 0, 0xc}, "ns/c"}, /* 2 duplicate ip: 0 keeps it */
	    {A6("2001:db8::14"), {2, 0, 0, 0, 0, 0xa}, "ns/a"}, /* 3 duplicate mac: ::14 USED */
	    {A6("2001:db8::12"), {2, 0, 0, 0, 0, 0xd}, "ns/d"}, /* 4 excluded */
	    {A6("2001:db8::99"), {2, 0, 0, 0, 0, 0xd}, "ns/d"}, /* 5 outside */
	    {A6("2001:db8::10"), {2, 0, 0, 0, 0, 0xa}, NULL},	/* 6 the pool status agrees */
	    {A6("2001:db8::11"), {2, 0, 0, 0, 0, 0xe}, NULL},	/* 7 the pool status only */
	};
	struct in6_addr a;
	int n;

	spec6(&c, "2001:db8::10", "2001:db8::14");
	CU_ASSERT_EQUAL_FATAL(netpool6_new(&c, &p), 0);
	n = netpool6_rebuild(p, src, ELEMENTSOF(src), &conf);
	CU_ASSERT_EQUAL_FATAL(n, 4);
	CU_ASSERT_EQUAL(conf[0].kind, IPAM_CONFLICT_DUPLICATE_IP);
	CU_ASSERT_EQUAL(conf[0].first, 0);
	CU_ASSERT_EQUAL(conf[0].second, 2);
	CU_ASSERT_EQUAL(conf[1].kind, IPAM_CONFLICT_DUPLICATE_MAC);
	CU_ASSERT_EQUAL(conf[1].first, 0);
	CU_ASSERT_EQUAL(conf[1].second, 3);
	CU_ASSERT_EQUAL(conf[2].kind, IPAM_CONFLICT_EXCLUDED);
	CU_ASSERT_EQUAL(conf[3].kind, IPAM_CONFLICT_OUTSIDE);
	free(conf);
	CU_ASSERT_EQUAL(netpool6_size(p), 3);
	CU_ASSERT_STRING_EQUAL(netpool6_by_mac(p, MAC_A)->owner, "ns/a");
	CU_ASSERT_TRUE(eq6(&netpool6_by_mac(p, MAC_A)->addr, "2001:db8::10"));
	CU_ASSERT_PTR_NULL(netpool6_by_mac(p, MAC_C));
	CU_ASSERT_PTR_NULL(netpool6_by_mac(p, (uint8_t[]){2, 0, 0, 0, 0, 0xe})->owner);
	/* the contested ::14 is never handed out: every address is held, none free */
	CU_ASSERT_EQUAL(netpool6_state(p, PA6("2001:db8::14")), IPAM_USED);
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_C, NULL, "ns/c", SIZE_MAX, &a), -ENOSPC);
	/* rebuilt from nothing: all free again */
	CU_ASSERT_EQUAL(netpool6_rebuild(p, NULL, 0, NULL), 0);
	CU_ASSERT_EQUAL(netpool6_size(p), 0);
	CU_ASSERT_EQUAL(netpool6_used(p), 0);
	netpool6_free(p);
}

static void
test_set_range(void)
{
	struct ippool_ipv6_config c;
	struct netpool6 *p;
	struct in6_addr a, conflict;

	spec6(&c, "2001:db8::10", "2001:db8::14");
	CU_ASSERT_EQUAL_FATAL(netpool6_new(&c, &p), 0);
	CU_ASSERT_TRUE(netpool6_same_network(p, &c));
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_A, NULL, "ns/a", SIZE_MAX, &a), 0);
	/* shrinking past a bound address: refused, unchanged */
	spec6(&c, "2001:db8::11", "2001:db8::14");
	CU_ASSERT_EQUAL(netpool6_set_range(p, &c, &conflict), -EBUSY);
	CU_ASSERT_TRUE(eq6(&conflict, "2001:db8::10"));
	/* growing: applied */
	spec6(&c, "2001:db8::10", "2001:db8::20");
	CU_ASSERT_EQUAL(netpool6_set_range(p, &c, &conflict), 0);
	CU_ASSERT_TRUE(netpool6_is_free(p, PA6("2001:db8::20")));
	c.server_ip = A6("2001:db8::2");
	CU_ASSERT_FALSE(netpool6_same_network(p, &c));
	netpool6_free(p);
}

/* The dual-stack netpool: both maps rendered, counted and budgeted. */
static void
test_dual_status(void)
{
	struct ippool_spec s;
	struct ippool_status st;
	struct netpool *p;
	struct in6_addr a6;
	uint32_t a4;
	size_t before;

	spec_dual(&s);
	CU_ASSERT_EQUAL_FATAL(netpool_new(&s, &p), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(netpool_v6(p));
	before = netpool_status_bytes(p);
	CU_ASSERT_EQUAL(netpool_bind(p, MAC_A, 0, "ns/a", &a4), 0);
	CU_ASSERT_EQUAL(netpool_bind6(p, MAC_A, NULL, "ns/a", &a6), 0);
	CU_ASSERT_TRUE(eq6(&a6, "2001:db8::10"));
	/* "10.0.0.10":"02:..." and "2001:db8::10":"02:..." */
	CU_ASSERT_EQUAL(netpool_status_bytes(p) - before, (9 + 17 + 6) + (12 + 17 + 6));
	memset(&st, 0, sizeof(st));
	CU_ASSERT_EQUAL_FATAL(netpool_render_status(p, &st), 0);
	CU_ASSERT_TRUE(st.has_ipv4);
	CU_ASSERT_TRUE(st.has_ipv6_status);
	CU_ASSERT_EQUAL(st.used6, 1);
	CU_ASSERT_EQUAL(st.available6, 3); /* ::11 ::13 ::14 */
	/* the binding and the EXCLUDED mark, sorted */
	CU_ASSERT_EQUAL_FATAL(st.n_allocated6, 2);
	CU_ASSERT_TRUE(eq6(&st.allocated6[0].addr, "2001:db8::10"));
	CU_ASSERT_EQUAL(st.allocated6[0].kind, IPPOOL_ALLOC_MAC);
	CU_ASSERT_EQUAL(memcmp(st.allocated6[0].mac, MAC_A, MAC_LEN), 0);
	CU_ASSERT_TRUE(eq6(&st.allocated6[1].addr, "2001:db8::12"));
	CU_ASSERT_EQUAL(st.allocated6[1].kind, IPPOOL_ALLOC_EXCLUDED);
	/* the measured bytes are what the map holds */
	CU_ASSERT_EQUAL(netpool6_map_bytes(netpool_v6(p), false),
	    2 + netpool6_entry_bytes(&st.allocated6[0].addr, IPPOOL_ALLOC_MAC) +
		netpool6_entry_bytes(&st.allocated6[1].addr, IPPOOL_ALLOC_EXCLUDED));
	ippool_status_clear(&st);

	/* a budget with room for the IPv4 entry of one more NIC but not its IPv6 one */
	netpool_set_budget(p, netpool_status_bytes(p) + 33);
	CU_ASSERT_TRUE(netpool_status_full(p));
	CU_ASSERT_EQUAL(netpool_bind(p, MAC_B, 0, "ns/b", &a4), 0);
	CU_ASSERT_EQUAL(netpool_bind6(p, MAC_B, NULL, "ns/b", &a6), -EFBIG);
	CU_ASSERT_EQUAL(netpool6_size(netpool_v6(p)), 1);
	CU_ASSERT_TRUE(netpool6_is_free(netpool_v6(p), PA6("2001:db8::11")));
	/* over the budget: the bindings the recorded status does not list are evicted, from both
	 * maps (nothing recorded here) */
	netpool_set_budget(p, 30);
	memset(&st, 0, sizeof(st));
	CU_ASSERT_EQUAL(netpool_evict_unrecorded(p, &st, NULL, NULL), 3);
	CU_ASSERT_EQUAL(netpool_size(p), 0);
	CU_ASSERT_EQUAL(netpool6_size(netpool_v6(p)), 0);
	netpool_free(p);
}

/* ipv6Config added later, removed, changed network: the half anew (or none). */
static void
test_reset(void)
{
	struct ippool_spec s;
	struct ippool_status st;
	struct netpool *p;
	struct in6_addr a6, conflict;

	spec_dual(&s);
	s.has_ipv6 = false;
	memset(&s.ipv6, 0, sizeof(s.ipv6));
	CU_ASSERT_EQUAL_FATAL(netpool_new(&s, &p), 0);
	CU_ASSERT_PTR_NULL(netpool_v6(p));
	CU_ASSERT_EQUAL(netpool_bind6(p, MAC_A, NULL, "ns/a", &a6), -ENOENT);
	memset(&st, 0, sizeof(st));
	CU_ASSERT_EQUAL(netpool_render_status(p, &st), 0);
	CU_ASSERT_FALSE(st.has_ipv6_status);
	ippool_status_clear(&st);
	CU_ASSERT_TRUE(netpool_same_ipv6(p, &s));

	spec_dual(&s);
	CU_ASSERT_FALSE(netpool_same_ipv6(p, &s));
	CU_ASSERT_EQUAL(netpool_reset_ipv6(p, &s), 0);
	CU_ASSERT_TRUE(netpool_same_ipv6(p, &s));
	CU_ASSERT_EQUAL(netpool_bind6(p, MAC_A, NULL, "ns/a", &a6), 0);
	/* a range change through the netpool */
	s.ipv6.start = A6("2001:db8::11");
	CU_ASSERT_EQUAL(netpool_set_range6(p, &s, &conflict), -EBUSY);
	s.ipv6.start = A6("2001:db8::10");
	s.ipv6.end = A6("2001:db8::ff");
	CU_ASSERT_EQUAL(netpool_set_range6(p, &s, &conflict), 0);

	s.has_ipv6 = false;
	CU_ASSERT_FALSE(netpool_same_ipv6(p, &s));
	CU_ASSERT_EQUAL(netpool_reset_ipv6(p, &s), 0);
	CU_ASSERT_PTR_NULL(netpool_v6(p));
	CU_ASSERT_EQUAL(netpool_release6(p, MAC_A, "ns/a"), -ENOENT);
	netpool_free(p);
}

/* A /64 range: available saturated, lowest free still the first address. */
static void
test_huge_range(void)
{
	struct ippool_ipv6_config c;
	struct netpool6 *p;
	struct in6_addr a;

	spec6(&c, "2001:db8::100", "2001:db8::ffff:ffff:ffff:ffff");
	CU_ASSERT_EQUAL_FATAL(netpool6_new(&c, &p), 0);
	CU_ASSERT_EQUAL(netpool6_available(p), INT64_MAX);
	CU_ASSERT_EQUAL(netpool6_bind(p, MAC_A, NULL, "ns/a", SIZE_MAX, &a), 0);
	CU_ASSERT_TRUE(eq6(&a, "2001:db8::100"));
	CU_ASSERT_EQUAL(netpool6_available(p), INT64_MAX);
	netpool6_free(p);
}

static const struct test_case netpool6_tests[] = {
    {"pin, keep, lowest free, errors", test_bind_rules},
    {"a binding known from the pool status is adopted", test_adopt},
    {"rebuild from the union: conflicts, contested never free", test_rebuild_union},
    {"range change refused / applied", test_set_range},
    {"dual-stack status: render, bytes, budget, eviction", test_dual_status},
    {"ipv6Config added, changed, removed", test_reset},
    {"a /64 range", test_huge_range},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "netpool6", .tests = netpool6_tests},
    {.name = NULL},
};
