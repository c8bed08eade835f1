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
B(const char *ip, const char *mac) {
	struct ipam_binding b = {.addr = A(ip)};

	if (mac_parse(mac, b.mac) < 0)
		abort();
	return b;
}

static struct ipam_pool *
pool(void)
{
	/* 10.0.0.0/24, range .10-.50, server .10, router .1 (outside), exclude .20 */
	struct ipam_pool *p = NULL;
	uint32_t ex[] = {A("10.0.0.20")};

	CU_ASSERT_FATAL(ipam_pool_new(A("10.0.0.0"), 24, A("10.0.0.10"), A("10.0.0.50"),
			    A("10.0.0.10"), A("10.0.0.1"), ex, 1, &p) == 0);
	return p;
}

static void
test_clean_rebuild(void)
{
	struct ipam_pool *p = pool();
	struct ipam_binding b[] = {
	    B("10.0.0.12", "02:00:00:00:00:01"), B("10.0.0.11", "02:00:00:00:00:02"),
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
	    B("10.0.0.30", "02:00:00:00:00:0a"), B("10.0.0.31", "02:00:00:00:00:0b"),
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
	    B("10.0.0.33", "02:00:00:00:00:01"), B("10.0.0.34", "02:00:00:00:00:02"),
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

/* Randomised: rebuild's conflicts equal those of a naive O(n^2) reading of the rules. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t
rng_below(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

static int
cmp_conf(const void *x, const void *y)
{
	const struct ipam_conflict *a = x, *b = y;

	if (a->second != b->second)
		return a->second < b->second ? -1 : 1;
	return (int)a->kind - (int)b->kind;
}

static void
test_rebuild_random(void)
{
	enum { N = 60, ROUNDS = 300 };
	unsigned mismatches = 0;

	for (int round = 0; round < ROUNDS; round++) {
		struct ipam_pool *p = pool(); /* range .10-.50, server .10, exclude .20 */
		struct ipam_binding b[N];
		struct ipam_conflict want[2 * N], *got = NULL;
		bool valid[N];
		size_t n_want = 0, used = 0;
		struct ipam_counts k;
		int n;

		for (size_t i = 0; i < N; i++) {
			memset(&b[i], 0, sizeof(b[i]));
			/* .5-.54: mostly inside, some outside, excluded or reserved */
			b[i].addr = A("10.0.0.5") + rng_below(50);
			b[i].mac[0] = 2;
			b[i].mac[5] = (uint8_t)rng_below(25);
		}
		for (size_t i = 0; i < N; i++) {
			int st = ipam_pool_state(p, b[i].addr);
			size_t owner = SIZE_MAX, f = SIZE_MAX;
			bool seen_pair = false;

			valid[i] = false;
			if (st < 0 || st == IPAM_EXCLUDED || st == IPAM_RESERVED) {
				want[n_want++] = (struct ipam_conflict){
				    .kind = st < 0		  ? IPAM_CONFLICT_OUTSIDE
					    : st == IPAM_EXCLUDED ? IPAM_CONFLICT_EXCLUDED
								  : IPAM_CONFLICT_RESERVED,
				    .addr = b[i].addr,
				    .first = i,
				    .second = i};
				continue;
			}
			valid[i] = true;
			for (size_t j = 0; j < i; j++)
				if (valid[j] && b[j].addr == b[i].addr && owner == SIZE_MAX)
					owner = j;
			if (owner == SIZE_MAX)
				used++;
			else if (memcmp(b[owner].mac, b[i].mac, MAC_LEN) != 0)
				want[n_want++] =
				    (struct ipam_conflict){.kind = IPAM_CONFLICT_DUPLICATE_IP,
					.addr = b[i].addr,
					.first = owner,
					.second = i};
			for (size_t j = 0; j < i; j++) {
				if (!valid[j] || memcmp(b[j].mac, b[i].mac, MAC_LEN) != 0)
					continue;
				if (f == SIZE_MAX)
					f = j;
				if (b[j].addr == b[i].addr)
					seen_pair = true;
			}
			if (f != SIZE_MAX && b[f].addr != b[i].addr && !seen_pair)
				want[n_want++] =
				    (struct ipam_conflict){.kind = IPAM_CONFLICT_DUPLICATE_MAC,
					.addr = b[i].addr,
					.first = f,
					.second = i};
		}
		qsort(want, n_want, sizeof(want[0]), cmp_conf);
		n = ipam_pool_rebuild(p, b, N, &got);
		ipam_pool_counts(p, &k);
		if (n != (int)n_want || k.used != used ||
		    (n > 0 && memcmp(got, want, n_want * sizeof(want[0])) != 0))
			mismatches++;
		free(got);
		ipam_pool_free(p);
	}
	CU_ASSERT_EQUAL(mismatches, 0);
}

static const struct test_case rebuild_tests[] = {
    {"clean rebuild", test_clean_rebuild},
    {"two MACs one IP reported", test_two_macs_one_ip},
    {"one MAC two IPs reported", test_one_mac_two_ips},
    {"outside/excluded/reserved reported", test_invalid_addresses},
    {"rebuild 60000 bindings", test_rebuild_many},
    {"random bindings: conflicts match a naive model", test_rebuild_random},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "ipam-rebuild", .tests = rebuild_tests},
    {.name = NULL},
};
