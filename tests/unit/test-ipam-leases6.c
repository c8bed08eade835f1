/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam/leases6.c: both lookups, set, remove, rebind, growth against a model, the bounded
 * sweep, foreach, and the memory a binding costs at 65 000 (printed, not timed).
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/ipam.h"
#include "lib/ip6.h"
#include "lib/util.h"
#include "tests/runner.h"

struct rec {
	struct ipam_lease6 lease;
	uint64_t due; /* a payload */
};

static void
mac_n(uint32_t n, uint8_t mac[MAC_LEN])
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	mac[2] = (uint8_t)(n >> 24);
	mac[3] = (uint8_t)(n >> 16);
	mac[4] = (uint8_t)(n >> 8);
	mac[5] = (uint8_t)n;
}

/* 2001:db8:: + n, with bits in both halves so both matter to the hash */
static struct in6_addr
addr_n(uint64_t n)
{
	struct in6_addr a;

	ipv6_from_u128((ip6_u128)0x20010db8 << 96 | (ip6_u128)(n % 7) << 64 | n, &a);
	return a;
}

static struct rec *
R(struct ipam_lease6 *l)
{
	return (struct rec *)(void *)l;
}

static void
test_add_lookup_remove(void)
{
	struct ipam_leases6 t;
	struct ipam_lease6 *l, *m;
	uint8_t a[MAC_LEN], b[MAC_LEN], c[MAC_LEN], got[MAC_LEN];
	struct in6_addr a10 = addr_n(10), a11 = addr_n(11), a12 = addr_n(12), x;

	mac_n(1, a);
	mac_n(2, b);
	mac_n(3, c);
	ipam_leases6_init(&t, sizeof(struct rec), true);
	CU_ASSERT_PTR_NULL(ipam_leases6_by_mac(&t, a));
	CU_ASSERT_PTR_NULL(ipam_leases6_by_addr(&t, &a10));
	CU_ASSERT_EQUAL(ipam_leases6_get_by_mac(&t, a, &x), -ENOENT);
	CU_ASSERT_EQUAL(ipam_leases6_sweep(&t, 10, NULL, NULL), 0);

	CU_ASSERT_EQUAL_FATAL(ipam_leases6_add(&t, a, &a10, &l), 0);
	CU_ASSERT_EQUAL(R(l)->due, 0); /* payload zeroed */
	R(l)->due = 111;
	CU_ASSERT_EQUAL_FATAL(ipam_leases6_add(&t, b, &a11, &m), 0);
	R(m)->due = 222;
	CU_ASSERT_EQUAL(ipam_leases6_add(&t, a, &a12, &l), -EEXIST); /* MAC bound */
	CU_ASSERT_EQUAL(ipam_leases6_add(&t, c, &a11, &l), -EEXIST); /* address held */
	CU_ASSERT_EQUAL(ipam_leases6_count(&t), 2);

	l = ipam_leases6_by_mac(&t, a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	CU_ASSERT(ipv6_equal(&l->addr, &a10));
	CU_ASSERT_EQUAL(R(l)->due, 111);
	CU_ASSERT_PTR_EQUAL(ipam_leases6_by_addr(&t, &a10), l);
	CU_ASSERT_EQUAL(memcmp(ipam_leases6_by_addr(&t, &a11)->mac, b, MAC_LEN), 0);
	CU_ASSERT_PTR_NULL(ipam_leases6_by_mac(&t, c));
	CU_ASSERT_EQUAL(ipam_leases6_get_by_mac(&t, b, &x), 0);
	CU_ASSERT(ipv6_equal(&x, &a11));
	CU_ASSERT_EQUAL(ipam_leases6_get_by_addr(&t, &a10, got), 0);
	CU_ASSERT_EQUAL(memcmp(got, a, MAC_LEN), 0);
	CU_ASSERT_EQUAL(ipam_leases6_get_by_addr(&t, &a12, got), -ENOENT);

	/* the last record moves into the hole, payload and both indexes with it */
	ipam_leases6_remove(&t, l);
	CU_ASSERT_EQUAL(ipam_leases6_count(&t), 1);
	CU_ASSERT_PTR_NULL(ipam_leases6_by_mac(&t, a));
	CU_ASSERT_PTR_NULL(ipam_leases6_by_addr(&t, &a10));
	m = ipam_leases6_by_mac(&t, b);
	CU_ASSERT_PTR_EQUAL(m, ipam_leases6_at(&t, 0));
	CU_ASSERT_PTR_EQUAL(ipam_leases6_by_addr(&t, &a11), m);
	CU_ASSERT_EQUAL(R(m)->due, 222);

	/* the address is free again */
	CU_ASSERT_EQUAL(ipam_leases6_add(&t, c, &a10, NULL), 0);
	CU_ASSERT_PTR_EQUAL(ipam_leases6_by_addr(&t, &a10), ipam_leases6_by_mac(&t, c));
	CU_ASSERT_EQUAL(ipam_leases6_remove_mac(&t, c), 0);
	CU_ASSERT_EQUAL(ipam_leases6_remove_mac(&t, c), -ENOENT);
	CU_ASSERT_PTR_NULL(ipam_leases6_by_addr(&t, &a10));

	ipam_leases6_clear(&t);
	CU_ASSERT_EQUAL(ipam_leases6_count(&t), 0);
	CU_ASSERT_PTR_NULL(ipam_leases6_by_mac(&t, b));
	CU_ASSERT_PTR_NULL(ipam_leases6_by_addr(&t, &a11));
	CU_ASSERT_EQUAL(ipam_leases6_add(&t, b, &a11, &l), 0);
	ipam_leases6_destroy(&t);
	CU_ASSERT_EQUAL(ipam_leases6_count(&t), 0);
	ipam_leases6_destroy(&t); /* twice is fine */
}

static void
test_rebind_set(void)
{
	struct ipam_leases6 t;
	struct ipam_lease6 *l, *m;
	uint8_t a[MAC_LEN], b[MAC_LEN];
	struct in6_addr a10 = addr_n(10), a11 = addr_n(11), a20 = addr_n(20), a30 = addr_n(30);

	mac_n(1, a);
	mac_n(2, b);
	ipam_leases6_init(&t, sizeof(struct rec), true);
	CU_ASSERT_EQUAL_FATAL(ipam_leases6_add(&t, a, &a10, &l), 0);
	R(l)->due = 7;
	CU_ASSERT_EQUAL_FATAL(ipam_leases6_add(&t, b, &a11, &m), 0);
	l = ipam_leases6_by_mac(&t, a);
	CU_ASSERT_EQUAL(ipam_leases6_rebind(&t, l, &a11), -EEXIST);
	CU_ASSERT(ipv6_equal(&l->addr, &a10));
	CU_ASSERT_EQUAL(ipam_leases6_rebind(&t, l, &a10), 0); /* its own: nothing to do */
	CU_ASSERT_EQUAL(ipam_leases6_rebind(&t, l, &a20), 0);
	CU_ASSERT(ipv6_equal(&l->addr, &a20));
	CU_ASSERT_EQUAL(R(l)->due, 7);
	CU_ASSERT_PTR_NULL(ipam_leases6_by_addr(&t, &a10));
	CU_ASSERT_PTR_EQUAL(ipam_leases6_by_addr(&t, &a20), l);
	CU_ASSERT_EQUAL(ipam_leases6_add(&t, b, &a10, &m), -EEXIST); /* b keeps its one */

	/* set: moves a bound MAC (payload kept), adds a new one, refuses a held address */
	CU_ASSERT_EQUAL(ipam_leases6_set(&t, a, &a30, &l), 0);
	CU_ASSERT(ipv6_equal(&l->addr, &a30));
	CU_ASSERT_EQUAL(R(l)->due, 7);
	CU_ASSERT_EQUAL(ipam_leases6_set(&t, a, &a11, &l), -EEXIST);
	CU_ASSERT(ipv6_equal(&ipam_leases6_by_mac(&t, a)->addr, &a30));
	{
		uint8_t c[MAC_LEN];

		mac_n(3, c);
		CU_ASSERT_EQUAL(ipam_leases6_set(&t, c, &a30, NULL), -EEXIST);
		CU_ASSERT_EQUAL(ipam_leases6_set(&t, c, &a20, &l), 0);
		CU_ASSERT_EQUAL(ipam_leases6_count(&t), 3);
		CU_ASSERT_PTR_EQUAL(ipam_leases6_by_addr(&t, &a20), l);
	}
	ipam_leases6_destroy(&t);
}

/* Many adds, removes and rebinds, checked both ways against a model after each round. */
static void
test_growth_model(void)
{
	enum { N = 20000 };
	static uint64_t model[N]; /* MAC n's address number, 0: unbound */
	struct ipam_leases6 t;
	struct ipam_lease6 *l;
	unsigned seed = 42;
	bool ok = true;
	size_t n = 0;

	memset(model, 0, sizeof(model));
	ipam_leases6_init(&t, sizeof(struct rec), true);
	for (int round = 0; round < 4; round++) {
		for (int k = 0; k < N; k++) {
			uint32_t i = (uint32_t)rand_r(&seed) % N;
			uint8_t mac[MAC_LEN];

			mac_n(i, mac);
			l = ipam_leases6_by_mac(&t, mac);
			ok = ok && (l == NULL) == (model[i] == 0);
			if (l == NULL) {
				/* address = 1000000 + i * 2 + round parity: never another's */
				uint64_t an = 1000000 + i * 2 + (uint64_t)(round & 1);
				struct in6_addr addr = addr_n(an);

				ok = ok && ipam_leases6_add(&t, mac, &addr, &l) == 0;
				R(l)->due = i;
				model[i] = an;
				n++;
			} else if (rand_r(&seed) % 3 == 0) {
				struct in6_addr addr = addr_n(model[i] ^ 1);

				ok = ok && ipam_leases6_rebind(&t, l, &addr) == 0;
				model[i] ^= 1;
			} else {
				ipam_leases6_remove(&t, l);
				model[i] = 0;
				n--;
			}
		}
		ok = ok && ipam_leases6_count(&t) == n;
		for (uint32_t i = 0; i < N; i++) {
			uint8_t mac[MAC_LEN];
			struct in6_addr x0 = addr_n(1000000 + i * 2), x1 = addr_n(1000001 + i * 2);

			mac_n(i, mac);
			l = ipam_leases6_by_mac(&t, mac);
			if (model[i] == 0) {
				ok = ok && l == NULL && ipam_leases6_by_addr(&t, &x0) == NULL &&
				     ipam_leases6_by_addr(&t, &x1) == NULL;
				continue;
			}
			x0 = addr_n(model[i]);
			x1 = addr_n(model[i] ^ 1);
			ok = ok && l != NULL && ipv6_equal(&l->addr, &x0) && R(l)->due == i &&
			     ipam_leases6_by_addr(&t, &x0) == l &&
			     ipam_leases6_by_addr(&t, &x1) == NULL;
		}
	}
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_TRUE(n > 1000);
	/* shrink after mass removal keeps every binding */
	while (ipam_leases6_count(&t) > 100)
		ipam_leases6_remove(&t, ipam_leases6_at(&t, 0));
	ipam_leases6_shrink(&t);
	CU_ASSERT(ipam_leases6_memory(&t) < 100 * 64);
	for (size_t i = 0; i < ipam_leases6_count(&t); i++) {
		l = ipam_leases6_at(&t, i);
		ok = ok && ipam_leases6_by_mac(&t, l->mac) == l &&
		     ipam_leases6_by_addr(&t, &l->addr) == l;
	}
	CU_ASSERT_TRUE(ok);
	while (ipam_leases6_count(&t) > 0)
		ipam_leases6_remove(&t, ipam_leases6_at(&t, 0));
	ipam_leases6_shrink(&t);
	CU_ASSERT_EQUAL(ipam_leases6_memory(&t), 0);
	ipam_leases6_destroy(&t);
}

struct sweep_ctx {
	struct ipam_leases6 *t;
	uint64_t now;
	size_t seen, removed;
};

static bool
expire_one(struct ipam_lease6 *l, void *userdata)
{
	struct sweep_ctx *s = userdata;

	s->seen++;
	if (R(l)->due > s->now)
		return false;
	ipam_leases6_remove(s->t, l);
	s->removed++;
	return true;
}

static void
test_sweep(void)
{
	struct ipam_leases6 t;
	struct sweep_ctx s = {.t = &t};
	struct ipam_lease6 *l;

	ipam_leases6_init(&t, sizeof(struct rec), true);
	for (uint32_t i = 0; i < 100; i++) {
		uint8_t mac[MAC_LEN];
		struct in6_addr a = addr_n(500 + i);

		mac_n(i, mac);
		CU_ASSERT_EQUAL_FATAL(ipam_leases6_add(&t, mac, &a, &l), 0);
		R(l)->due = i % 2 ? 10 : 20; /* odd ones expire first */
	}
	s.now = 10;
	CU_ASSERT_EQUAL(ipam_leases6_sweep(&t, 30, expire_one, &s), 30);
	CU_ASSERT_EQUAL(s.seen, 30);
	CU_ASSERT_TRUE(s.removed > 0 && s.removed < 50);
	while (s.removed < 50)
		(void)ipam_leases6_sweep(&t, 7, expire_one, &s);
	CU_ASSERT_EQUAL(ipam_leases6_count(&t), 50);
	s.seen = 0;
	CU_ASSERT_EQUAL(ipam_leases6_sweep(&t, 50, expire_one, &s), 50);
	CU_ASSERT_EQUAL(s.removed, 50);
	for (uint32_t i = 0; i < 100; i++) {
		uint8_t mac[MAC_LEN];
		struct in6_addr a = addr_n(500 + i);

		mac_n(i, mac);
		l = ipam_leases6_by_mac(&t, mac);
		CU_ASSERT_TRUE(
		    i % 2 ? l == NULL : (l != NULL && ipam_leases6_by_addr(&t, &a) == l));
	}
	s.now = 20;
	CU_ASSERT_EQUAL(ipam_leases6_sweep(&t, 1000, expire_one, &s), 50);
	CU_ASSERT_EQUAL(ipam_leases6_count(&t), 0);
	CU_ASSERT_EQUAL(s.removed, 100);
	ipam_leases6_destroy(&t);
}

static int
count_odd(struct ipam_lease6 *l, void *userdata)
{
	size_t *n = userdata;

	*n += l->mac[5] & 1;
	return l->mac[4] == 0 && l->mac[5] == 77 ? 9 : 0;
}

/* Without the address index: addresses may repeat; reserve makes adds infallible; heap API. */
static void
test_mac_only_heap(void)
{
	struct ipam_leases6 *t = NULL;
	struct ipam_lease6 *l, *m;
	uint8_t a[MAC_LEN], b[MAC_LEN], got[MAC_LEN];
	struct in6_addr a10 = addr_n(10), a12 = addr_n(12);
	unsigned char *before;
	size_t odd = 0;

	mac_n(1, a);
	mac_n(2, b);
	CU_ASSERT_EQUAL(ipam_leases6_new(sizeof(struct ipam_lease6) - 1, false, &t), -EINVAL);
	CU_ASSERT_EQUAL_FATAL(ipam_leases6_new(sizeof(struct ipam_lease6), false, &t), 0);
	CU_ASSERT_EQUAL_FATAL(ipam_leases6_reserve(t, 1000), 0);
	before = t->recs;
	CU_ASSERT_EQUAL_FATAL(ipam_leases6_add(t, a, &a10, &l), 0);
	CU_ASSERT_EQUAL_FATAL(ipam_leases6_add(t, b, &a10, &m), 0); /* the same address */
	CU_ASSERT_EQUAL(ipam_leases6_add(t, a, &a12, &m), -EEXIST);
	CU_ASSERT_PTR_NULL(ipam_leases6_by_addr(t, &a10));
	CU_ASSERT_EQUAL(ipam_leases6_get_by_addr(t, &a10, got), 0); /* a walk finds one */
	CU_ASSERT_EQUAL(ipam_leases6_get_by_addr(t, &a12, got), -ENOENT);
	for (uint32_t i = 3; i <= 1000; i++) {
		uint8_t mac[MAC_LEN];

		mac_n(i, mac);
		CU_ASSERT_EQUAL_FATAL(ipam_leases6_add(t, mac, &a10, NULL), 0);
	}
	CU_ASSERT_PTR_EQUAL(t->recs, before); /* reserved: nothing moved */
	l = ipam_leases6_by_mac(t, a);
	CU_ASSERT_EQUAL(ipam_leases6_rebind(t, l, &a12), 0);
	CU_ASSERT(ipv6_equal(&ipam_leases6_by_mac(t, a)->addr, &a12));
	ipam_leases6_remove(t, l);
	CU_ASSERT_PTR_NULL(ipam_leases6_by_mac(t, a));
	CU_ASSERT(ipv6_equal(&ipam_leases6_by_mac(t, b)->addr, &a10));
	CU_ASSERT_EQUAL(ipam_leases6_count(t), 999);
	/* foreach: all, or stopped by the callback's value */
	CU_ASSERT_EQUAL(ipam_leases6_foreach(t, count_odd, &odd), 9);
	CU_ASSERT(odd > 0 && odd < 500);
	CU_ASSERT_EQUAL(ipam_leases6_remove_mac(t, (uint8_t[]){2, 0, 0, 0, 0, 77}), 0);
	odd = 0;
	CU_ASSERT_EQUAL(ipam_leases6_foreach(t, count_odd, &odd), 0);
	CU_ASSERT_EQUAL(odd, 499 - 1);
	ipam_leases6_clear(t);
	CU_ASSERT_PTR_NULL(ipam_leases6_by_mac(t, b));
	CU_ASSERT_PTR_NULL(ipam_leases6_free(t));
	CU_ASSERT_PTR_NULL(ipam_leases6_free(NULL));
}

static size_t
heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static void
test_memory_65000(void)
{
	struct ipam_leases6 t;
	size_t before = heap_in_use(), used;

	ipam_leases6_init(&t, sizeof(struct ipam_lease6), true);
	for (uint32_t i = 0; i < 65000; i++) {
		uint8_t mac[MAC_LEN];
		struct in6_addr a = addr_n(i * 7919);

		mac_n(i, mac);
		CU_ASSERT_EQUAL_FATAL(ipam_leases6_add(&t, mac, &a, NULL), 0);
	}
	used = heap_in_use() - before;
	printf("\n  leases6, 65000 bare records (24 bytes): %zu bytes (%.2f a binding; mallinfo2 "
	       "%zu)",
	    ipam_leases6_memory(&t), (double)ipam_leases6_memory(&t) / 65000, used);
	CU_ASSERT(ipam_leases6_memory(&t) <= 65000 * 64);
	ipam_leases6_reserve(&t, 65000);
	ipam_leases6_shrink(&t);
	printf("\n  leases6, after shrink: %zu bytes (%.2f a binding)\n  ", ipam_leases6_memory(&t),
	    (double)ipam_leases6_memory(&t) / 65000);
	CU_ASSERT(ipam_leases6_memory(&t) <= 65000 * 40);
	ipam_leases6_destroy(&t);
}

static const struct test_case leases6_tests[] = {
    {"MAC index only, reserve, foreach, heap API", test_mac_only_heap},
    {"add, lookup both ways, remove, clear", test_add_lookup_remove},
    {"rebind and set keep the payload, refuse a held address", test_rebind_set},
    {"growth: 80k random ops agree with a model", test_growth_model},
    {"bounded sweep with removal", test_sweep},
    {"memory at 65000 bindings", test_memory_65000},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "ipam-leases6", .tests = leases6_tests},
    {.name = NULL},
};
