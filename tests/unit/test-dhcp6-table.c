/* SPDX-License-Identifier: Apache-2.0 */
/* dhcp/table6.c: MAC -> IPv6 binding table against a reference model, sync, memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/dhcp6-internal.h"
#include "lib/ip6.h"
#include "tests/runner.h"

static void
mac_of(unsigned i, uint8_t mac[6])
{
	mac[0] = 0x52;
	mac[1] = 0x54;
	mac[2] = (uint8_t)(i >> 24);
	mac[3] = (uint8_t)(i >> 16);
	mac[4] = (uint8_t)(i >> 8);
	mac[5] = (uint8_t)i;
}

/* 2001:db8::/32 + i, spread over the low 64 bits the way an IPAM hands them out */
static struct in6_addr
addr_of(unsigned i)
{
	struct in6_addr a;

	CU_ASSERT_FATAL(ipv6_parse("2001:db8::", &a) == 0);
	ipv6_from_u128(ipv6_to_u128(&a) + 0x100 + i, &a);
	return a;
}

static void
test_basic(void)
{
	struct dhcp6_table *t = NULL;
	struct dhcp6_binding *b;
	struct in6_addr x1 = addr_of(1), x2 = addr_of(2), x3 = addr_of(3), zero = {0};
	uint8_t a[6], c[6];
	char long_name[80];

	mac_of(1, a);
	mac_of(2, c);
	CU_ASSERT_FATAL(dhcp6_table_new(&t) == 0);
	CU_ASSERT_PTR_NULL(dhcp6_table_lookup(t, a));
	CU_ASSERT_PTR_NULL(dhcp6_table_lookup_addr(t, &x1));
	CU_ASSERT_EQUAL(dhcp6_table_set(t, a, &x1, "vm-a"), 0);
	b = dhcp6_table_lookup(t, a);
	CU_ASSERT_FATAL(b != NULL);
	CU_ASSERT(ipv6_equal(&b->addr, &x1));
	CU_ASSERT_STRING_EQUAL(dhcp6_table_hostname(t, b), "vm-a");
	CU_ASSERT_PTR_EQUAL(dhcp6_table_lookup_addr(t, &x1), b);
	/* one address, one MAC */
	CU_ASSERT_EQUAL(dhcp6_table_set(t, c, &x1, NULL), -EEXIST);
	CU_ASSERT_EQUAL(dhcp6_table_set(t, c, &zero, NULL), -EINVAL);
	CU_ASSERT_EQUAL(dhcp6_table_size(t), 1);
	memset(long_name, 'x', 70);
	long_name[70] = '\0';
	CU_ASSERT_EQUAL(dhcp6_table_set(t, c, &x2, long_name), 0);
	long_name[63] = '\0';
	CU_ASSERT_STRING_EQUAL(dhcp6_table_hostname(t, dhcp6_table_lookup(t, c)), long_name);
	/* a moves: its old address is free, its hostname dropped */
	CU_ASSERT_EQUAL(dhcp6_table_set(t, a, &x2, NULL), -EEXIST);
	CU_ASSERT_EQUAL(dhcp6_table_set(t, a, &x3, NULL), 0);
	CU_ASSERT_PTR_NULL(dhcp6_table_lookup_addr(t, &x1));
	CU_ASSERT_PTR_EQUAL(dhcp6_table_lookup_addr(t, &x3), dhcp6_table_lookup(t, a));
	CU_ASSERT_PTR_NULL(dhcp6_table_hostname(t, dhcp6_table_lookup(t, a)));
	CU_ASSERT_EQUAL(dhcp6_table_set(t, c, &x1, "vm-c"), 0);
	CU_ASSERT_PTR_NULL(dhcp6_table_lookup_addr(t, &x2));
	/* removing a moves c into its record: the address index follows */
	CU_ASSERT_EQUAL(dhcp6_table_remove(t, a), 0);
	CU_ASSERT_EQUAL(dhcp6_table_remove(t, a), -ENOENT);
	CU_ASSERT_PTR_NULL(dhcp6_table_lookup_addr(t, &x3));
	CU_ASSERT_PTR_EQUAL(dhcp6_table_lookup_addr(t, &x1), dhcp6_table_lookup(t, c));
	CU_ASSERT_STRING_EQUAL(dhcp6_table_hostname(t, dhcp6_table_lookup(t, c)), "vm-c");
	dhcp6_table_free(t);
}

static void
test_declined_mark(void)
{
	struct dhcp6_table *t = NULL;
	struct in6_addr x1 = addr_of(7), x2 = addr_of(8);
	uint8_t a[6];

	mac_of(9, a);
	CU_ASSERT_FATAL(dhcp6_table_new(&t) == 0);
	CU_ASSERT_EQUAL(dhcp6_table_set(t, a, &x1, "x"), 0);
	dhcp6_table_lookup(t, a)->flags |= DHCP6_BINDING_DECLINED;
	CU_ASSERT_EQUAL(dhcp6_table_set(t, a, &x1, "y"), 0); /* same address: kept */
	CU_ASSERT(dhcp6_table_lookup(t, a)->flags & DHCP6_BINDING_DECLINED);
	CU_ASSERT_EQUAL(dhcp6_table_set(t, a, &x2, "y"), 0); /* changed: cleared */
	CU_ASSERT_FALSE(dhcp6_table_lookup(t, a)->flags & DHCP6_BINDING_DECLINED);
	dhcp6_table_free(t);
}

static void
test_sync(void)
{
	struct dhcp6_table *t = NULL;
	uint8_t m[6];

	CU_ASSERT_FATAL(dhcp6_table_new(&t) == 0);
	for (unsigned i = 0; i < 100; i++) {
		struct in6_addr x = addr_of(i);

		mac_of(i, m);
		CU_ASSERT_EQUAL(dhcp6_table_set(t, m, &x, i % 2 ? "odd" : NULL), 0);
	}
	dhcp6_table_sync_begin(t);
	for (unsigned i = 0; i < 100; i += 3) {
		struct in6_addr x = addr_of(i);

		mac_of(i, m);
		CU_ASSERT_EQUAL(dhcp6_table_set(t, m, &x, "kept"), 0);
	}
	CU_ASSERT_EQUAL(dhcp6_table_sync_end(t), 66);
	CU_ASSERT_EQUAL(dhcp6_table_size(t), 34);
	for (unsigned i = 0; i < 100; i++) {
		struct in6_addr x = addr_of(i);
		struct dhcp6_binding *b;

		mac_of(i, m);
		b = dhcp6_table_lookup(t, m);
		CU_ASSERT_EQUAL(b != NULL, i % 3 == 0);
		CU_ASSERT_PTR_EQUAL(dhcp6_table_lookup_addr(t, &x), b);
		if (b != NULL)
			CU_ASSERT_STRING_EQUAL(dhcp6_table_hostname(t, b), "kept");
	}
	dhcp6_table_free(t);
}

/* Random sets, moves and removes against a plain array model. */
static void
test_model(void)
{
	enum { N = 3000, ADDRS = 4000 };
	static int model[N]; /* address number + 1, 0 = none */
	static int owner[ADDRS];
	struct dhcp6_table *t = NULL;
	unsigned seed = 12345, bad = 0;
	uint8_t m[6];

	memset(model, 0, sizeof(model));
	memset(owner, 0xff, sizeof(owner));
	CU_ASSERT_FATAL(dhcp6_table_new(&t) == 0);
	for (unsigned step = 0; step < 60000; step++) {
		unsigned i, x;
		struct in6_addr a;
		int r;

		seed = seed * 1103515245u + 12345u;
		i = (seed >> 8) % N;
		x = (seed >> 3) % ADDRS;
		a = addr_of(x);
		mac_of(i, m);
		if ((seed >> 28) < 3) {
			r = dhcp6_table_remove(t, m);
			bad += (r == 0) != (model[i] != 0);
			if (model[i] != 0)
				owner[model[i] - 1] = -1;
			model[i] = 0;
			continue;
		}
		r = dhcp6_table_set(t, m, &a, "h");
		if (owner[x] >= 0 && owner[x] != (int)i) {
			bad += r != -EEXIST;
			continue;
		}
		bad += r != 0;
		if (model[i] != 0)
			owner[model[i] - 1] = -1;
		model[i] = (int)x + 1;
		owner[x] = (int)i;
	}
	for (unsigned x = 0; x < ADDRS; x++) {
		struct in6_addr a = addr_of(x);
		struct dhcp6_binding *b = dhcp6_table_lookup_addr(t, &a);

		if (owner[x] < 0) {
			bad += b != NULL;
			continue;
		}
		mac_of((unsigned)owner[x], m);
		bad += b == NULL || memcmp(b->mac, m, 6) != 0;
	}
	CU_ASSERT_EQUAL(bad, 0);
	dhcp6_table_free(t);
}

/* The agent holds 65 000 IPv6 bindings in little memory: about 60 bytes each here. */
static void
test_memory(void)
{
	struct dhcp6_table *t = NULL;
	unsigned bad = 0;
	char name[32];
	uint8_t m[6];
	size_t mem;

	CU_ASSERT_FATAL(dhcp6_table_new(&t) == 0);
	for (unsigned i = 0; i < 65000; i++) {
		struct in6_addr a = addr_of(i * 7919u);

		mac_of(i, m);
		snprintf(name, sizeof(name), "vm-%u", i);
		bad += dhcp6_table_set(t, m, &a, name) != 0;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(dhcp6_table_size(t), 65000);
	mem = dhcp6_table_memory(t);
	printf("\n  65000 IPv6 bindings: %zu bytes (%zu per binding)\n", mem, mem / 65000);
	CU_ASSERT(mem / 65000 < 96);
	for (unsigned i = 0; i < 65000; i++) {
		struct in6_addr a = addr_of(i * 7919u);

		mac_of(i, m);
		bad += dhcp6_table_lookup_addr(t, &a) != dhcp6_table_lookup(t, m);
	}
	CU_ASSERT_EQUAL(bad, 0);
	dhcp6_table_free(t);
}

static const struct test_case table_tests[] = {
    {"basic", test_basic},
    {"declined mark", test_declined_mark},
    {"sync", test_sync},
    {"model", test_model},
    {"memory", test_memory},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp6-table", .tests = table_tests},
    {.name = NULL},
};
