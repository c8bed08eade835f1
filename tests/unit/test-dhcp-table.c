/* SPDX-License-Identifier: Apache-2.0 */
/* dhcp/table.c: MAC -> binding table against a reference model, sync, memory. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/dhcp-internal.h"
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

static void
test_basic(void)
{
	struct dhcp_table *t = NULL;
	struct dhcp_binding *b;
	uint8_t a[6], c[6];
	char long_name[80];

	mac_of(1, a);
	mac_of(2, c);
	CU_ASSERT_FATAL(dhcp_table_new(&t) == 0);
	CU_ASSERT_PTR_NULL(dhcp_table_lookup(t, a));
	CU_ASSERT_EQUAL(dhcp_table_set(t, a, 0x0a000001, "vm-a"), 0);
	b = dhcp_table_lookup(t, a);
	CU_ASSERT_FATAL(b != NULL);
	CU_ASSERT_EQUAL(b->ip, 0x0a000001);
	CU_ASSERT_STRING_EQUAL(dhcp_table_hostname(t, b), "vm-a");
	CU_ASSERT_PTR_EQUAL(dhcp_table_lookup_ip(t, 0x0a000001), b);
	/* another MAC cannot take the address */
	CU_ASSERT_EQUAL(dhcp_table_set(t, c, 0x0a000001, NULL), -EEXIST);
	CU_ASSERT_EQUAL(dhcp_table_set(t, c, 0, NULL), -EINVAL);
	/* longer than one label: truncated to 63 bytes */
	memset(long_name, 'x', 70);
	long_name[70] = '\0';
	CU_ASSERT_EQUAL(dhcp_table_set(t, c, 0x0a000002, long_name), 0);
	long_name[63] = '\0';
	CU_ASSERT_STRING_EQUAL(dhcp_table_hostname(t, dhcp_table_lookup(t, c)), long_name);
	CU_ASSERT_EQUAL(dhcp_table_lookup(t, c)->hostname_len, 63);
	/* move a to a new address: the old one is free, hostname dropped */
	CU_ASSERT_EQUAL(dhcp_table_set(t, a, 0x0a000003, NULL), 0);
	CU_ASSERT_PTR_NULL(dhcp_table_lookup_ip(t, 0x0a000001));
	CU_ASSERT_PTR_NULL(dhcp_table_hostname(t, dhcp_table_lookup(t, a)));
	CU_ASSERT_EQUAL(dhcp_table_set(t, c, 0x0a000001, "vm-c"), 0);
	CU_ASSERT_EQUAL(dhcp_table_size(t), 2);
	CU_ASSERT_EQUAL(dhcp_table_remove(t, a), 0);
	CU_ASSERT_EQUAL(dhcp_table_remove(t, a), -ENOENT);
	CU_ASSERT_EQUAL(dhcp_table_size(t), 1);
	CU_ASSERT_PTR_NULL(dhcp_table_lookup_ip(t, 0x0a000003));
	CU_ASSERT_STRING_EQUAL(dhcp_table_hostname(t, dhcp_table_lookup(t, c)), "vm-c");
	CU_ASSERT_PTR_NULL(dhcp_table_free(t));
	CU_ASSERT_PTR_NULL(dhcp_table_free(NULL));
}

/* Reference model: arrays indexed by MAC number. */
#define N_MACS 3000
#define N_IPS 4000

static uint32_t ref_ip[N_MACS]; /* 0 = absent */
static int ref_name[N_MACS];	/* -1 = none */
static int ref_owner[N_IPS];	/* MAC number + 1, 0 = free */

static bool
check_all(struct dhcp_table *t)
{
	size_t n = 0;

	for (unsigned i = 0; i < N_MACS; i++) {
		uint8_t mac[6];
		struct dhcp_binding *b;
		char name[16];
		const char *h;

		mac_of(i, mac);
		b = dhcp_table_lookup(t, mac);
		if (ref_ip[i] == 0) {
			if (b != NULL)
				return false;
			continue;
		}
		n++;
		if (b == NULL || b->ip != ref_ip[i] || dhcp_table_lookup_ip(t, ref_ip[i]) != b)
			return false;
		h = dhcp_table_hostname(t, b);
		if (ref_name[i] < 0) {
			if (h != NULL)
				return false;
		} else {
			snprintf(name, sizeof(name), "vm-%d", ref_name[i]);
			if (h == NULL || strcmp(h, name) != 0)
				return false;
		}
	}
	return n == dhcp_table_size(t);
}

static void
test_model(void)
{
	struct dhcp_table *t = NULL;
	unsigned seed = 12345, bad = 0;

	memset(ref_ip, 0, sizeof(ref_ip));
	memset(ref_owner, 0, sizeof(ref_owner));
	for (unsigned i = 0; i < N_MACS; i++)
		ref_name[i] = -1;
	CU_ASSERT_FATAL(dhcp_table_new(&t) == 0);
	for (unsigned op = 0; op < 60000; op++) {
		unsigned m = (unsigned)rand_r(&seed) % N_MACS, k = (unsigned)rand_r(&seed) % N_IPS;
		int name = rand_r(&seed) % 4 == 0 ? -1 : rand_r(&seed) % 1000;
		uint8_t mac[6];
		char buf[16];
		int r;

		mac_of(m, mac);
		if (rand_r(&seed) % 3 == 0) {
			r = dhcp_table_remove(t, mac);
			if (r != (ref_ip[m] ? 0 : -ENOENT))
				bad++;
			if (ref_ip[m]) {
				ref_owner[ref_ip[m] - 0x0a000001] = 0;
				ref_ip[m] = 0;
			}
			continue;
		}
		snprintf(buf, sizeof(buf), "vm-%d", name);
		r = dhcp_table_set(t, mac, 0x0a000001 + k, name < 0 ? NULL : buf);
		if (ref_owner[k] != 0 && ref_owner[k] != (int)m + 1) {
			if (r != -EEXIST)
				bad++;
			continue;
		}
		if (r != 0) {
			bad++;
			continue;
		}
		if (ref_ip[m])
			ref_owner[ref_ip[m] - 0x0a000001] = 0;
		ref_ip[m] = 0x0a000001 + k;
		ref_owner[k] = (int)m + 1;
		ref_name[m] = name;
		if (op % 5000 == 0 && !check_all(t))
			bad++;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_TRUE(check_all(t));
	/* sync: refresh every other binding, the rest go */
	{
		size_t before = dhcp_table_size(t), kept = 0;

		dhcp_table_sync_begin(t);
		for (unsigned i = 0; i < N_MACS; i += 2) {
			uint8_t mac[6];
			char buf[16];

			if (ref_ip[i] == 0)
				continue;
			mac_of(i, mac);
			snprintf(buf, sizeof(buf), "vm-%d", ref_name[i]);
			CU_ASSERT_EQUAL(
			    dhcp_table_set(t, mac, ref_ip[i], ref_name[i] < 0 ? NULL : buf), 0);
			kept++;
		}
		for (unsigned i = 1; i < N_MACS; i += 2)
			ref_ip[i] = 0;
		CU_ASSERT_EQUAL(dhcp_table_sync_end(t), before - kept);
		CU_ASSERT_EQUAL(dhcp_table_size(t), kept);
		CU_ASSERT_TRUE(check_all(t));
	}
	dhcp_table_free(t);
}

static void
test_declined_flag(void)
{
	struct dhcp_table *t = NULL;
	struct dhcp_binding *b;
	uint8_t a[6];

	mac_of(7, a);
	CU_ASSERT_FATAL(dhcp_table_new(&t) == 0);
	CU_ASSERT_EQUAL(dhcp_table_set(t, a, 0x0a000007, "x"), 0);
	b = dhcp_table_lookup(t, a);
	b->flags |= DHCP_BINDING_DECLINED;
	CU_ASSERT_EQUAL(dhcp_table_set(t, a, 0x0a000007, "y"), 0); /* same address: kept */
	CU_ASSERT(dhcp_table_lookup(t, a)->flags & DHCP_BINDING_DECLINED);
	CU_ASSERT_EQUAL(dhcp_table_set(t, a, 0x0a000008, "y"), 0); /* changed: cleared */
	CU_ASSERT_FALSE(dhcp_table_lookup(t, a)->flags & DHCP_BINDING_DECLINED);
	dhcp_table_free(t);
}

struct count {
	size_t n;
	uint64_t ip_sum;
};

static void
count_cb(void *userdata, const uint8_t mac[6], uint32_t ip, const char *hostname)
{
	struct count *c = userdata;

	c->n++;
	c->ip_sum += ip;
}

static void
test_65000(void)
{
	struct dhcp_table *t = NULL;
	struct count c = {0, 0};
	uint64_t want = 0;
	size_t mem;
	int bad = 0;

	CU_ASSERT_FATAL(dhcp_table_new(&t) == 0);
	for (unsigned i = 0; i < 65000; i++) {
		uint8_t mac[6];
		char name[32];

		mac_of(i * 2654435761u, mac);
		snprintf(name, sizeof(name), "vm-%05u", i);
		if (dhcp_table_set(t, mac, 0x0a000000 + i + 1, name) != 0)
			bad++;
		want += 0x0a000000 + i + 1;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(dhcp_table_size(t), 65000);
	dhcp_table_foreach(t, count_cb, &c);
	CU_ASSERT_EQUAL(c.n, 65000);
	CU_ASSERT_EQUAL(c.ip_sum, want);
	mem = dhcp_table_memory(t);
	printf("\n  table memory for 65000 bindings: %zu bytes (%.1f per binding)\n", mem,
	    (double)mem / 65000);
	/* records 16 + indexes 2 x 4 / load + hostname pool: under 48 bytes per binding */
	CU_ASSERT(mem / 65000 < 48);
	/* hostname churn does not grow the pool without bound */
	for (unsigned round = 0; round < 4; round++) {
		for (unsigned i = 0; i < 65000; i++) {
			uint8_t mac[6];
			char name[32];

			mac_of(i * 2654435761u, mac);
			snprintf(name, sizeof(name), "r%u-vm-%05u", round, i);
			if (dhcp_table_set(t, mac, 0x0a000000 + i + 1, name) != 0)
				bad++;
		}
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(dhcp_table_memory(t) < mem * 2);
	dhcp_table_free(t);
}

static const struct test_case table_tests[] = {
    {"basic", test_basic},
    {"against a reference model, sync", test_model},
    {"declined mark", test_declined_flag},
    {"65000 bindings", test_65000},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp-table", .tests = table_tests},
    {.name = NULL},
};
