/* SPDX-License-Identifier: Apache-2.0 */
/* ipam/leases.c: both lookups, remove, rebind, growth against a model, the bounded sweep. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/leases.h"
#include "lib/util.h"
#include "tests/runner.h"

struct rec {
	struct ipam_lease lease;
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

static struct rec *
R(struct ipam_lease *l)
{
	return (struct rec *)(void *)l;
}

static void
test_add_lookup_remove(void)
{
	struct ipam_leases t;
	struct ipam_lease *l, *m;
	uint8_t a[MAC_LEN], b[MAC_LEN], c[MAC_LEN];

	mac_n(1, a);
	mac_n(2, b);
	mac_n(3, c);
	ipam_leases_init(&t, sizeof(struct rec), true);
	CU_ASSERT_PTR_NULL(ipam_leases_by_mac(&t, a));
	CU_ASSERT_PTR_NULL(ipam_leases_by_addr(&t, 10));
	CU_ASSERT_EQUAL(ipam_leases_sweep(&t, 10, NULL, NULL), 0);

	CU_ASSERT_EQUAL_FATAL(ipam_leases_add(&t, a, 10, &l), 0);
	CU_ASSERT_EQUAL(R(l)->due, 0); /* payload zeroed */
	R(l)->due = 111;
	CU_ASSERT_EQUAL_FATAL(ipam_leases_add(&t, b, 11, &m), 0);
	R(m)->due = 222;
	CU_ASSERT_EQUAL(ipam_leases_add(&t, a, 12, &l), -EEXIST); /* MAC bound */
	CU_ASSERT_EQUAL(ipam_leases_add(&t, c, 11, &l), -EEXIST); /* address held */
	CU_ASSERT_EQUAL(ipam_leases_count(&t), 2);

	l = ipam_leases_by_mac(&t, a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(l);
	CU_ASSERT_EQUAL(l->addr, 10);
	CU_ASSERT_EQUAL(R(l)->due, 111);
	CU_ASSERT_PTR_EQUAL(ipam_leases_by_addr(&t, 10), l);
	CU_ASSERT_EQUAL(memcmp(ipam_leases_by_addr(&t, 11)->mac, b, MAC_LEN), 0);
	CU_ASSERT_PTR_NULL(ipam_leases_by_mac(&t, c));

	/* the last record moves into the hole, payload and both indexes with it */
	ipam_leases_remove(&t, l);
	CU_ASSERT_EQUAL(ipam_leases_count(&t), 1);
	CU_ASSERT_PTR_NULL(ipam_leases_by_mac(&t, a));
	CU_ASSERT_PTR_NULL(ipam_leases_by_addr(&t, 10));
	m = ipam_leases_by_mac(&t, b);
	CU_ASSERT_PTR_EQUAL(m, ipam_leases_at(&t, 0));
	CU_ASSERT_PTR_EQUAL(ipam_leases_by_addr(&t, 11), m);
	CU_ASSERT_EQUAL(R(m)->due, 222);

	/* the address is free again */
	CU_ASSERT_EQUAL(ipam_leases_add(&t, c, 10, &l), 0);
	CU_ASSERT_PTR_EQUAL(ipam_leases_by_addr(&t, 10), ipam_leases_by_mac(&t, c));

	ipam_leases_clear(&t);
	CU_ASSERT_EQUAL(ipam_leases_count(&t), 0);
	CU_ASSERT_PTR_NULL(ipam_leases_by_mac(&t, b));
	CU_ASSERT_PTR_NULL(ipam_leases_by_addr(&t, 11));
	CU_ASSERT_EQUAL(ipam_leases_add(&t, b, 11, &l), 0);
	ipam_leases_destroy(&t);
	CU_ASSERT_EQUAL(ipam_leases_count(&t), 0);
	ipam_leases_destroy(&t); /* twice is fine */
}

static void
test_rebind(void)
{
	struct ipam_leases t;
	struct ipam_lease *l, *m;
	uint8_t a[MAC_LEN], b[MAC_LEN];

	mac_n(1, a);
	mac_n(2, b);
	ipam_leases_init(&t, sizeof(struct rec), true);
	CU_ASSERT_EQUAL_FATAL(ipam_leases_add(&t, a, 10, &l), 0);
	R(l)->due = 7;
	CU_ASSERT_EQUAL_FATAL(ipam_leases_add(&t, b, 11, &m), 0);
	l = ipam_leases_by_mac(&t, a);
	CU_ASSERT_EQUAL(ipam_leases_rebind(&t, l, 11), -EEXIST);
	CU_ASSERT_EQUAL(l->addr, 10);
	CU_ASSERT_EQUAL(ipam_leases_rebind(&t, l, 10), 0); /* its own: nothing to do */
	CU_ASSERT_EQUAL(ipam_leases_rebind(&t, l, 20), 0);
	CU_ASSERT_EQUAL(l->addr, 20);
	CU_ASSERT_EQUAL(R(l)->due, 7);
	CU_ASSERT_PTR_NULL(ipam_leases_by_addr(&t, 10));
	CU_ASSERT_PTR_EQUAL(ipam_leases_by_addr(&t, 20), l);
	CU_ASSERT_PTR_EQUAL(ipam_leases_by_mac(&t, a), l);
	CU_ASSERT_EQUAL(ipam_leases_add(&t, b, 10, &m), -EEXIST); /* b keeps its one */
	ipam_leases_destroy(&t);
}

/* Many adds, removes and rebinds, checked both ways against a model after each round. */
static void
test_growth_model(void)
{
	enum { N = 20000 };
	static uint32_t model[N]; /* MAC n's address, 0: unbound */
	struct ipam_leases t;
	struct ipam_lease *l;
	unsigned seed = 42;
	bool ok = true;
	size_t n = 0;

	memset(model, 0, sizeof(model));
	ipam_leases_init(&t, sizeof(struct rec), true);
	for (int round = 0; round < 4; round++) {
		for (int k = 0; k < N; k++) {
			uint32_t i = (uint32_t)rand_r(&seed) % N;
			uint8_t mac[MAC_LEN];

			mac_n(i, mac);
			l = ipam_leases_by_mac(&t, mac);
			ok = ok && (l == NULL) == (model[i] == 0);
			if (l == NULL) {
				/* address = 1000000 + i * 2 + round parity: never another's */
				uint32_t addr = 1000000 + i * 2 + (uint32_t)(round & 1);

				ok = ok && ipam_leases_add(&t, mac, addr, &l) == 0;
				R(l)->due = i;
				model[i] = addr;
				n++;
			} else if (rand_r(&seed) % 3 == 0) {
				uint32_t addr = model[i] ^ 1;

				ok = ok && ipam_leases_rebind(&t, l, addr) == 0;
				model[i] = addr;
			} else {
				ipam_leases_remove(&t, l);
				model[i] = 0;
				n--;
			}
		}
		ok = ok && ipam_leases_count(&t) == n;
		for (uint32_t i = 0; i < N; i++) {
			uint8_t mac[MAC_LEN];

			mac_n(i, mac);
			l = ipam_leases_by_mac(&t, mac);
			if (model[i] == 0) {
				ok = ok && l == NULL &&
				     ipam_leases_by_addr(&t, 1000000 + i * 2) == NULL &&
				     ipam_leases_by_addr(&t, 1000000 + i * 2 + 1) == NULL;
				continue;
			}
			ok = ok && l != NULL && l->addr == model[i] && R(l)->due == i &&
			     ipam_leases_by_addr(&t, model[i]) == l &&
			     ipam_leases_by_addr(&t, model[i] ^ 1) == NULL;
		}
	}
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_TRUE(n > 1000);
	ipam_leases_destroy(&t);
}

struct sweep_ctx {
	struct ipam_leases *t;
	uint64_t now;
	size_t seen, removed;
};

static bool
expire_one(struct ipam_lease *l, void *userdata)
{
	struct sweep_ctx *s = userdata;

	s->seen++;
	if (R(l)->due > s->now)
		return false;
	ipam_leases_remove(s->t, l);
	s->removed++;
	return true;
}

static void
test_sweep(void)
{
	struct ipam_leases t;
	struct sweep_ctx s = {.t = &t};
	struct ipam_lease *l;

	ipam_leases_init(&t, sizeof(struct rec), true);
	for (uint32_t i = 0; i < 100; i++) {
		uint8_t mac[MAC_LEN];

		mac_n(i, mac);
		CU_ASSERT_EQUAL_FATAL(ipam_leases_add(&t, mac, 500 + i, &l), 0);
		R(l)->due = i % 2 ? 10 : 20; /* odd ones expire first */
	}
	/* bounded: 30 calls, then the cursor goes on from there */
	s.now = 10;
	CU_ASSERT_EQUAL(ipam_leases_sweep(&t, 30, expire_one, &s), 30);
	CU_ASSERT_EQUAL(s.seen, 30);
	CU_ASSERT_TRUE(s.removed > 0 && s.removed < 50);
	while (s.removed < 50)
		(void)ipam_leases_sweep(&t, 7, expire_one, &s);
	CU_ASSERT_EQUAL(ipam_leases_count(&t), 50);
	/* a full turn sees every record and removes nothing more */
	s.seen = 0;
	CU_ASSERT_EQUAL(ipam_leases_sweep(&t, 50, expire_one, &s), 50);
	CU_ASSERT_EQUAL(s.removed, 50);
	for (uint32_t i = 0; i < 100; i++) {
		uint8_t mac[MAC_LEN];

		mac_n(i, mac);
		l = ipam_leases_by_mac(&t, mac);
		CU_ASSERT_TRUE(
		    i % 2 ? l == NULL : (l != NULL && ipam_leases_by_addr(&t, 500 + i) == l));
	}
	/* everything expires: the sweep stops when the table is empty */
	s.now = 20;
	CU_ASSERT_EQUAL(ipam_leases_sweep(&t, 1000, expire_one, &s), 50);
	CU_ASSERT_EQUAL(ipam_leases_count(&t), 0);
	CU_ASSERT_EQUAL(s.removed, 100);
	ipam_leases_destroy(&t);
}

/* Without the address index: addresses may repeat; reserve makes adds infallible. */
static void
test_mac_only(void)
{
	struct ipam_leases t;
	struct ipam_lease *l, *m;
	uint8_t a[MAC_LEN], b[MAC_LEN];
	unsigned char *before;

	mac_n(1, a);
	mac_n(2, b);
	ipam_leases_init(&t, sizeof(struct rec), false);
	CU_ASSERT_EQUAL_FATAL(ipam_leases_reserve(&t, 1000), 0);
	before = t.tab.recs;
	CU_ASSERT_EQUAL_FATAL(ipam_leases_add(&t, a, 10, &l), 0);
	CU_ASSERT_EQUAL_FATAL(ipam_leases_add(&t, b, 10, &m), 0); /* the same address */
	CU_ASSERT_EQUAL(ipam_leases_add(&t, a, 11, &m), -EEXIST);
	CU_ASSERT_PTR_NULL(ipam_leases_by_addr(&t, 10));
	for (uint32_t i = 3; i <= 1000; i++) {
		uint8_t mac[MAC_LEN];

		mac_n(i, mac);
		CU_ASSERT_EQUAL_FATAL(ipam_leases_add(&t, mac, 10, &m), 0);
	}
	CU_ASSERT_PTR_EQUAL(t.tab.recs, before); /* reserved: nothing moved */
	l = ipam_leases_by_mac(&t, a);
	CU_ASSERT_EQUAL(ipam_leases_rebind(&t, l, 12), 0);
	CU_ASSERT_EQUAL(ipam_leases_by_mac(&t, a)->addr, 12);
	ipam_leases_remove(&t, l);
	CU_ASSERT_PTR_NULL(ipam_leases_by_mac(&t, a));
	CU_ASSERT_EQUAL(ipam_leases_by_mac(&t, b)->addr, 10);
	CU_ASSERT_EQUAL(ipam_leases_count(&t), 999);
	ipam_leases_clear(&t);
	CU_ASSERT_PTR_NULL(ipam_leases_by_mac(&t, b));
	ipam_leases_destroy(&t);
}

static const struct test_case leases_tests[] = {
    {"MAC index only: repeated addresses, reserve", test_mac_only},
    {"add, lookup both ways, remove, clear", test_add_lookup_remove},
    {"rebind keeps the payload, refuses a held address", test_rebind},
    {"growth: 80k random ops agree with a model", test_growth_model},
    {"bounded sweep with removal", test_sweep},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "ipam-leases", .tests = leases_tests},
    {.name = NULL},
};
