/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/mactable.c: both lookups with collisions and backward-shift deletion, duplicate
 * refusal, growth, reserve, shrink, dense iteration after deletes, the bounded sweep, the
 * table without its address index, memory per record.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mactable.h"
#include "tests/runner.h"

struct rec {
	uint8_t mac[6];
	uint8_t mark; /* a payload in the key's spare bytes */
	uint8_t spare;
	uint32_t ip;
	uint64_t due; /* a payload after the key */
};
MACTABLE_RECORD_CHECK(struct rec, mac, ip);

static void
mac_n(uint32_t n, uint8_t mac[6])
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	mac[2] = (uint8_t)(n >> 24);
	mac[3] = (uint8_t)(n >> 16);
	mac[4] = (uint8_t)(n >> 8);
	mac[5] = (uint8_t)n;
}

static struct rec *
insert(struct mactable *t, uint32_t n, uint32_t ip)
{
	uint8_t mac[6];
	void *r;

	mac_n(n, mac);
	return mactable_insert(t, mac, ip, &r) == 0 ? r : NULL;
}

static struct rec *
find(const struct mactable *t, uint32_t n)
{
	uint8_t mac[6];

	mac_n(n, mac);
	return mactable_find_mac(t, mac);
}

/* Every record is found by its MAC and its address, and each slot of each index is one. */
static bool
consistent(const struct mactable *t)
{
	size_t used_mac = 0, used_ip = 0;
	bool ok = true;

	for (size_t i = 0; i < mactable_count(t); i++) {
		struct rec *r = mactable_at(t, i);

		ok = ok && mactable_find_mac(t, r->mac) == r;
		if (t->ip_index)
			ok = ok && mactable_find_ip(t, r->ip) == r;
	}
	for (size_t s = 0; s < t->slots; s++) {
		used_mac += t->by_mac[s] != UINT32_MAX;
		if (t->by_ip != NULL)
			used_ip += t->by_ip[s] != UINT32_MAX;
	}
	return ok && used_mac == mactable_count(t) &&
	       used_ip == (t->ip_index ? mactable_count(t) : 0);
}

static void
test_insert_find_delete(void)
{
	struct mactable t;
	struct rec *a, *b, *c;
	uint8_t mac[6];
	void *r;

	mactable_init(&t, sizeof(struct rec), true);
	mac_n(1, mac);
	CU_ASSERT_PTR_NULL(mactable_find_mac(&t, mac));
	CU_ASSERT_PTR_NULL(mactable_find_ip(&t, 10));
	CU_ASSERT_EQUAL(mactable_memory(&t), 0);

	a = insert(&t, 1, 10);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL(a->due, 0); /* payload zeroed */
	CU_ASSERT_EQUAL(a->mark, 0);
	a->due = 111;
	a->mark = 7;
	b = insert(&t, 2, 11);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	b->due = 222;
	/* duplicates refused, the table unchanged */
	mac_n(1, mac);
	CU_ASSERT_EQUAL(mactable_insert(&t, mac, 12, &r), -EEXIST); /* MAC has a record */
	mac_n(3, mac);
	CU_ASSERT_EQUAL(mactable_insert(&t, mac, 11, &r), -EEXIST); /* address has one */
	CU_ASSERT_EQUAL(mactable_count(&t), 2);
	CU_ASSERT_PTR_NULL(mactable_find_mac(&t, mac));
	CU_ASSERT_PTR_NULL(mactable_find_ip(&t, 12));

	a = find(&t, 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_EQUAL(a->ip, 10);
	CU_ASSERT_EQUAL(a->due, 111);
	CU_ASSERT_EQUAL(a->mark, 7);
	CU_ASSERT_PTR_EQUAL(mactable_find_ip(&t, 10), a);

	/* the last record moves into the hole, payload and both indexes with it */
	mactable_delete(&t, a);
	CU_ASSERT_EQUAL(mactable_count(&t), 1);
	CU_ASSERT_PTR_NULL(find(&t, 1));
	CU_ASSERT_PTR_NULL(mactable_find_ip(&t, 10));
	b = find(&t, 2);
	CU_ASSERT_PTR_EQUAL(b, mactable_at(&t, 0));
	CU_ASSERT_PTR_EQUAL(mactable_find_ip(&t, 11), b);
	CU_ASSERT_EQUAL(b->due, 222);

	/* the address is free again */
	c = insert(&t, 3, 10);
	CU_ASSERT_PTR_NOT_NULL(c);
	CU_ASSERT_PTR_EQUAL(mactable_find_ip(&t, 10), find(&t, 3));

	/* set_ip: refuses another's address, keeps the payload */
	b = find(&t, 2);
	CU_ASSERT_EQUAL(mactable_set_ip(&t, b, 10), -EEXIST);
	CU_ASSERT_EQUAL(b->ip, 11);
	CU_ASSERT_EQUAL(mactable_set_ip(&t, b, 11), 0); /* its own */
	CU_ASSERT_EQUAL(mactable_set_ip(&t, b, 20), 0);
	CU_ASSERT_EQUAL(b->ip, 20);
	CU_ASSERT_EQUAL(b->due, 222);
	CU_ASSERT_PTR_NULL(mactable_find_ip(&t, 11));
	CU_ASSERT_PTR_EQUAL(mactable_find_ip(&t, 20), b);
	CU_ASSERT_TRUE(consistent(&t));

	mactable_clear(&t);
	CU_ASSERT_EQUAL(mactable_count(&t), 0);
	CU_ASSERT_PTR_NULL(find(&t, 2));
	CU_ASSERT_PTR_NULL(mactable_find_ip(&t, 20));
	CU_ASSERT_PTR_NOT_NULL(insert(&t, 2, 20));
	CU_ASSERT_TRUE(consistent(&t));
	mactable_destroy(&t);
	CU_ASSERT_EQUAL(mactable_count(&t), 0);
	mactable_destroy(&t); /* twice is fine */
}

/*
 * Collisions: far more records than the smallest index has slots, so runs of occupied slots
 * wrap and cross; deleting every third one (backward shift) must leave every other findable
 * both ways, with no slot left behind.
 */
static void
test_collisions_backward_shift(void)
{
	enum { N = 3000 };
	struct mactable t;
	bool ok = true;

	mactable_init(&t, sizeof(struct rec), true);
	for (uint32_t i = 0; i < N; i++) {
		struct rec *r = insert(&t, i, 0x0a000000 + i);

		ok = ok && r != NULL;
		if (r != NULL)
			r->due = i;
	}
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_TRUE(consistent(&t));
	for (uint32_t i = 0; i < N; i += 3) {
		struct rec *r = find(&t, i);

		ok = ok && r != NULL;
		if (r != NULL)
			mactable_delete(&t, r);
	}
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_EQUAL(mactable_count(&t), N - N / 3);
	CU_ASSERT_TRUE(consistent(&t));
	for (uint32_t i = 0; i < N; i++) {
		struct rec *r = find(&t, i);

		if (i % 3 == 0)
			ok = ok && r == NULL && mactable_find_ip(&t, 0x0a000000 + i) == NULL;
		else
			ok = ok && r != NULL && r->due == i && r->ip == 0x0a000000 + i &&
			     mactable_find_ip(&t, 0x0a000000 + i) == r;
	}
	CU_ASSERT_TRUE(ok);

	/* dense iteration after the deletes: each remaining record once */
	{
		static uint8_t seen[N];
		size_t dup = 0;

		memset(seen, 0, sizeof(seen));
		for (size_t k = 0; k < mactable_count(&t); k++) {
			const struct rec *r = mactable_at(&t, k);

			dup += seen[r->due]++ != 0;
			ok = ok && r->due % 3 != 0;
		}
		CU_ASSERT_EQUAL(dup, 0);
		CU_ASSERT_TRUE(ok);
	}
	mactable_destroy(&t);
}

/* Many inserts, deletes and moves, checked both ways against a model after each round. */
static void
test_growth_model(void)
{
	enum { N = 20000 };
	static uint32_t model[N]; /* MAC n's address, 0: none */
	struct mactable t;
	unsigned seed = 7;
	bool ok = true;
	size_t n = 0;

	memset(model, 0, sizeof(model));
	mactable_init(&t, sizeof(struct rec), true);
	for (int round = 0; round < 4; round++) {
		for (int k = 0; k < N; k++) {
			uint32_t i = (uint32_t)rand_r(&seed) % N;
			struct rec *r = find(&t, i);

			ok = ok && (r == NULL) == (model[i] == 0);
			if (r == NULL) {
				/* address = 1000000 + i * 2 + round parity: never another's */
				uint32_t ip = 1000000 + i * 2 + (uint32_t)(round & 1);

				ok = ok && (r = insert(&t, i, ip)) != NULL;
				if (r != NULL)
					r->due = i;
				model[i] = ip;
				n++;
			} else if (rand_r(&seed) % 3 == 0) {
				ok = ok && mactable_set_ip(&t, r, model[i] ^ 1) == 0;
				model[i] ^= 1;
			} else {
				mactable_delete(&t, r);
				model[i] = 0;
				n--;
			}
		}
		ok = ok && mactable_count(&t) == n && consistent(&t);
		for (uint32_t i = 0; i < N; i++) {
			struct rec *r = find(&t, i);

			if (model[i] == 0)
				ok = ok && r == NULL &&
				     mactable_find_ip(&t, 1000000 + i * 2) == NULL &&
				     mactable_find_ip(&t, 1000000 + i * 2 + 1) == NULL;
			else
				ok = ok && r != NULL && r->ip == model[i] && r->due == i &&
				     mactable_find_ip(&t, model[i]) == r &&
				     mactable_find_ip(&t, model[i] ^ 1) == NULL;
		}
	}
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_TRUE(n > 1000);
	mactable_destroy(&t);
}

/* Reserve makes inserts infallible and keeps records in place; shrink gives memory back. */
static void
test_reserve_shrink(void)
{
	struct mactable t;
	unsigned char *before;
	size_t big;
	bool ok = true;

	mactable_init(&t, sizeof(struct rec), true);
	CU_ASSERT_EQUAL(mactable_reserve(&t, MACTABLE_MAX + 1), -ENOMEM);
	CU_ASSERT_EQUAL_FATAL(mactable_reserve(&t, 5000), 0);
	before = t.recs;
	for (uint32_t i = 0; i < 5000; i++)
		ok = ok && insert(&t, i, 100 + i) != NULL;
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_PTR_EQUAL(t.recs, before); /* reserved: nothing moved */
	big = mactable_memory(&t);
	for (uint32_t i = 10; i < 5000; i++)
		mactable_delete(&t, find(&t, i));
	CU_ASSERT_EQUAL(mactable_count(&t), 10);
	mactable_shrink(&t);
	CU_ASSERT_TRUE(mactable_memory(&t) < big / 10);
	CU_ASSERT_TRUE(consistent(&t));
	for (uint32_t i = 0; i < 10; i++) {
		struct rec *r = find(&t, i);

		ok = ok && r != NULL && r->ip == 100 + i && mactable_find_ip(&t, 100 + i) == r;
	}
	CU_ASSERT_TRUE(ok);
	/* it grows again */
	for (uint32_t i = 10; i < 200; i++)
		ok = ok && insert(&t, i, 100 + i) != NULL;
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_TRUE(consistent(&t));
	/* empty: shrink frees everything */
	mactable_clear(&t);
	mactable_shrink(&t);
	CU_ASSERT_EQUAL(mactable_memory(&t), 0);
	CU_ASSERT_PTR_NULL(find(&t, 1));
	CU_ASSERT_PTR_NOT_NULL(insert(&t, 1, 1));
	mactable_destroy(&t);
}

/* Without the address index: addresses may repeat, set_ip just sets. */
static void
test_mac_only(void)
{
	struct mactable t;
	struct rec *a;
	bool ok = true;

	mactable_init(&t, sizeof(struct rec), false);
	for (uint32_t i = 0; i < 1000; i++)
		ok = ok && insert(&t, i, 10) != NULL; /* all the same address */
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_PTR_NULL(insert(&t, 5, 11)); /* the MAC is still unique */
	CU_ASSERT_PTR_NULL(mactable_find_ip(&t, 10));
	CU_ASSERT_PTR_NULL(t.by_ip);
	a = find(&t, 5);
	CU_ASSERT_EQUAL(mactable_set_ip(&t, a, 12), 0);
	CU_ASSERT_EQUAL(find(&t, 5)->ip, 12);
	mactable_delete(&t, a);
	CU_ASSERT_PTR_NULL(find(&t, 5));
	CU_ASSERT_EQUAL(mactable_count(&t), 999);
	CU_ASSERT_TRUE(consistent(&t));
	/* records + one index: under rec_size + 10 bytes a record once grown */
	CU_ASSERT_TRUE(mactable_memory(&t) < 999 * (sizeof(struct rec) + 10) * 2);
	mactable_destroy(&t);
}

struct sweep_ctx {
	struct mactable *t;
	uint64_t now;
	size_t seen, removed;
};

static bool
expire_one(void *rec, void *userdata)
{
	struct sweep_ctx *s = userdata;
	struct rec *r = rec;

	s->seen++;
	if (r->due > s->now)
		return false;
	mactable_delete(s->t, r);
	s->removed++;
	return true;
}

static void
test_sweep(void)
{
	struct mactable t;
	struct sweep_ctx s = {.t = &t};

	mactable_init(&t, sizeof(struct rec), true);
	CU_ASSERT_EQUAL(mactable_sweep(&t, 10, expire_one, &s), 0);
	for (uint32_t i = 0; i < 100; i++) {
		struct rec *r = insert(&t, i, 500 + i);

		CU_ASSERT_PTR_NOT_NULL_FATAL(r);
		r->due = i % 2 ? 10 : 20; /* odd ones expire first */
	}
	/* bounded: 30 calls, then the cursor goes on from there */
	s.now = 10;
	CU_ASSERT_EQUAL(mactable_sweep(&t, 30, expire_one, &s), 30);
	CU_ASSERT_EQUAL(s.seen, 30);
	CU_ASSERT_TRUE(s.removed > 0 && s.removed < 50);
	while (s.removed < 50)
		(void)mactable_sweep(&t, 7, expire_one, &s);
	CU_ASSERT_EQUAL(mactable_count(&t), 50);
	/* a full turn sees every record and removes nothing more */
	s.seen = 0;
	CU_ASSERT_EQUAL(mactable_sweep(&t, 50, expire_one, &s), 50);
	CU_ASSERT_EQUAL(s.seen, 50);
	CU_ASSERT_EQUAL(s.removed, 50);
	for (uint32_t i = 0; i < 100; i++) {
		struct rec *r = find(&t, i);

		CU_ASSERT_TRUE(
		    i % 2 ? r == NULL : (r != NULL && mactable_find_ip(&t, 500 + i) == r));
	}
	/* everything expires: the sweep stops when the table is empty */
	s.now = 20;
	CU_ASSERT_EQUAL(mactable_sweep(&t, 1000, expire_one, &s), 50);
	CU_ASSERT_EQUAL(mactable_count(&t), 0);
	CU_ASSERT_EQUAL(s.removed, 100);
	mactable_destroy(&t);
}

/* 65 000 records of 16 bytes with both indexes: the engine's figure, about 40 bytes each. */
static void
test_memory(void)
{
	struct mactable t;
	bool ok = true;
	size_t mem;

	mactable_init(&t, 16, true);
	for (uint32_t i = 0; i < 65000; i++)
		ok = ok && insert(&t, i * 2654435761u, 0x0a000001 + i) != NULL;
	CU_ASSERT_TRUE(ok);
	mem = mactable_memory(&t);
	CU_ASSERT_TRUE(mem / 65000 < 42);
	mactable_destroy(&t);
}

static const struct test_case mactable_tests[] = {
    {"insert, find both ways, duplicates, delete, set_ip, clear", test_insert_find_delete},
    {"collisions and backward-shift deletion, dense iteration", test_collisions_backward_shift},
    {"growth: 80k random ops agree with a model", test_growth_model},
    {"reserve keeps records in place, shrink", test_reserve_shrink},
    {"MAC index only: repeated addresses", test_mac_only},
    {"bounded sweep with deletion", test_sweep},
    {"memory of 65000 records", test_memory},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "lib-mactable", .tests = mactable_tests},
    {.name = NULL},
};
