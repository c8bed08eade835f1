/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam/pool6.c and rebuild6.c: every operation and error, ranges of any size (a /64, ::/0),
 * exhaustion, range changes, rebuild conflicts, and seeded random runs against a naive model.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/ipam.h"
#include "ipam/pool6-internal.h"
#include "lib/ip6.h"
#include "lib/util.h"
#include "tests/runner.h"

static struct in6_addr
a6(const char *s)
{
	struct in6_addr a;

	if (ipv6_parse(s, &a) < 0)
		abort();
	return a;
}

/* net + off */
static struct in6_addr
a6_off(const char *net, ip6_u128 off)
{
	struct in6_addr a = a6(net);

	ipv6_from_u128(ipv6_to_u128(&a) + off, &a);
	return a;
}

static bool
eq6(const struct in6_addr *a, const char *s)
{
	struct in6_addr b = a6(s);
	char buf[IPV6_STRLEN];

	if (ipv6_equal(a, &b))
		return true;
	ipv6_format(a, buf);
	fprintf(stderr, "got %s, want %s\n", buf, s);
	return false;
}

static struct ipam_pool6 *
pool_small(void)
{
	/* 2001:db8::/64, range ::1-::20, server ::1, excludes ::5 ::6 ::6 and one outside */
	struct in6_addr ex[] = {
	    a6("2001:db8::5"), a6("2001:db8::6"), a6("2001:db8::6"), a6("2001:db8::100")};
	struct in6_addr net = a6("2001:db8::"), s = a6("2001:db8::1"), e = a6("2001:db8::20");
	struct in6_addr srv = a6("2001:db8::1");
	struct ipam_pool6 *p = NULL;

	CU_ASSERT_FATAL(ipam_pool6_new(&net, 64, &s, &e, &srv, ex, ELEMENTSOF(ex), &p) == 0);
	return p;
}

static void
test_new_errors(void)
{
	struct ipam_pool6 *p = (struct ipam_pool6 *)0x1;
	struct in6_addr net = a6("2001:db8::"), s = a6("2001:db8::10"), e = a6("2001:db8::20");
	struct in6_addr out = a6("2001:db8:0:1::1"), zero = {0};

	CU_ASSERT_EQUAL(ipam_pool6_new(&net, 129, &s, &e, NULL, NULL, 0, &p), -EINVAL);
	CU_ASSERT_EQUAL(ipam_pool6_new(&net, 64, &e, &s, NULL, NULL, 0, &p), -EINVAL);
	CU_ASSERT_EQUAL(ipam_pool6_new(&net, 64, &s, &e, NULL, NULL, 1, &p), -EINVAL);
	CU_ASSERT_EQUAL(ipam_pool6_new(&net, 64, &s, &out, NULL, NULL, 0, &p), -ERANGE);
	CU_ASSERT_EQUAL(ipam_pool6_new(&net, 120, &s, &e, &out, NULL, 0, &p), -ERANGE);
	CU_ASSERT_EQUAL(ipam_pool6_new(&net, 64, &s, &e, NULL, &out, 1, &p), -ERANGE);
	CU_ASSERT_EQUAL(ipam_pool6_new(&net, 124, &s, &e, NULL, NULL, 0, &p), -ERANGE);
	/* *ret untouched on failure */
	CU_ASSERT_PTR_EQUAL(p, (struct ipam_pool6 *)0x1);
	/* host bits of the CIDR ignored; a zero server IP means none */
	out = a6("2001:db8::ffff");
	CU_ASSERT_EQUAL_FATAL(ipam_pool6_new(&out, 64, &s, &e, &zero, NULL, 0, &p), 0);
	CU_ASSERT_EQUAL(ipam_pool6_used(p), 0);
	CU_ASSERT_EQUAL(ipam_pool6_available(p), 17);
	CU_ASSERT_EQUAL(ipam_pool6_prefix(p), 64);
	ipam_pool6_network(p, &out);
	CU_ASSERT(eq6(&out, "2001:db8::"));
	ipam_pool6_start(p, &out);
	CU_ASSERT(eq6(&out, "2001:db8::10"));
	ipam_pool6_end(p, &out);
	CU_ASSERT(eq6(&out, "2001:db8::20"));
	CU_ASSERT_PTR_NULL(ipam_pool6_free(p));
	CU_ASSERT_PTR_NULL(ipam_pool6_free(NULL));
}

static void
test_states_and_counts(void)
{
	struct ipam_pool6 *p = pool_small();
	struct ipam_counts6 c;
	struct in6_addr a;

	CU_ASSERT_EQUAL(ipam_pool6_state(p, &(struct in6_addr){0}), -ERANGE);
	a = a6("2001:db8::");
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), -ERANGE); /* anycast, outside the range */
	a = a6("2001:db8::21");
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), -ERANGE);
	a = a6("2001:db8::1");
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), IPAM_RESERVED);
	a = a6("2001:db8::5");
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), IPAM_EXCLUDED);
	a = a6("2001:db8::6");
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), IPAM_EXCLUDED);
	a = a6("2001:db8::7");
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), IPAM_FREE);
	CU_ASSERT(ipam_pool6_is_free(p, &a));
	a = a6("2001:db8::20");
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), IPAM_FREE);

	ipam_pool6_counts(p, &c);
	CU_ASSERT(c.size_minus_1 == 0x1f);
	CU_ASSERT_EQUAL(c.used, 0);
	CU_ASSERT_EQUAL(c.excluded, 2);
	CU_ASSERT_EQUAL(c.reserved, 1);
	CU_ASSERT_EQUAL(c.available, 32 - 3);

	/* take: the IPv4 pool's error rules */
	a = a6("2001:db8::1");
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &a), -EPERM);
	a = a6("2001:db8::5");
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &a), -EPERM);
	a = a6("2001:db8::21");
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &a), -ERANGE);
	a = a6("2001:db8::9");
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &a), 0);
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &a), -EEXIST);
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), IPAM_USED);
	CU_ASSERT_FALSE(ipam_pool6_is_free(p, &a));
	CU_ASSERT_EQUAL(ipam_pool6_used(p), 1);
	CU_ASSERT_EQUAL(ipam_pool6_available(p), 28);

	/* release */
	CU_ASSERT_EQUAL(ipam_pool6_release(p, &a), 0);
	CU_ASSERT_EQUAL(ipam_pool6_release(p, &a), -ENOENT);
	a = a6("2001:db8::5");
	CU_ASSERT_EQUAL(ipam_pool6_release(p, &a), -ENOENT);
	a = a6("2001:db8::ff");
	CU_ASSERT_EQUAL(ipam_pool6_release(p, &a), -ERANGE);
	CU_ASSERT_EQUAL(ipam_pool6_used(p), 0);
	CU_ASSERT_EQUAL(ipam_pool6_available(p), 29);
	ipam_pool6_free(p);
}

static void
test_reserved_anycast(void)
{
	struct in6_addr net = a6("2001:db8::"), s = a6("2001:db8::"), e = a6("2001:db8::3"), a;
	struct in6_addr srv = a6("2001:db8::"), net127 = a6("2001:db8::2");
	struct ipam_pool6 *p;

	/* RFC 4291 §2.6.1: the Subnet-Router anycast address is never handed out */
	CU_ASSERT_EQUAL_FATAL(ipam_pool6_new(&net, 64, &s, &e, NULL, NULL, 0, &p), 0);
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &s), IPAM_RESERVED);
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8::1"));
	CU_ASSERT_EQUAL(ipam_pool6_available(p), 2);
	ipam_pool6_free(p);

	/* the server IP on the anycast address: reserved once */
	CU_ASSERT_EQUAL_FATAL(ipam_pool6_new(&net, 64, &s, &e, &srv, NULL, 0, &p), 0);
	CU_ASSERT_EQUAL(ipam_pool6_available(p), 3);
	ipam_pool6_free(p);

	/* a /127 (RFC 6164) has no anycast address; a /128 neither */
	s = a6("2001:db8::2");
	e = a6("2001:db8::3");
	CU_ASSERT_EQUAL_FATAL(ipam_pool6_new(&net127, 127, &s, &e, NULL, NULL, 0, &p), 0);
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &s), IPAM_FREE);
	CU_ASSERT_EQUAL(ipam_pool6_available(p), 2);
	ipam_pool6_free(p);
	CU_ASSERT_EQUAL_FATAL(ipam_pool6_new(&s, 128, &s, &s, NULL, NULL, 0, &p), 0);
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8::2"));
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), -ENOSPC);
	ipam_pool6_free(p);

	/* an exclude on a reserved address counts as RESERVED only */
	s = a6("2001:db8::");
	e = a6("2001:db8::ff");
	{
		struct in6_addr ex[] = {a6("2001:db8::"), a6("2001:db8::10"), a6("2001:db8::11")};

		srv = a6("2001:db8::10");
		CU_ASSERT_EQUAL_FATAL(ipam_pool6_new(&net, 64, &s, &e, &srv, ex, 3, &p), 0);
	}
	{
		struct ipam_counts6 c;

		ipam_pool6_counts(p, &c);
		CU_ASSERT_EQUAL(c.reserved, 2);
		CU_ASSERT_EQUAL(c.excluded, 1);
		CU_ASSERT_EQUAL(c.available, 256 - 3);
	}
	a = a6("2001:db8::10");
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), IPAM_RESERVED);
	ipam_pool6_free(p);
}

static void
test_alloc_lowest(void)
{
	struct ipam_pool6 *p = pool_small(), *q = pool_small();
	struct in6_addr a, b;
	static const char *const want[] = {
	    "2001:db8::2", "2001:db8::3", "2001:db8::4", "2001:db8::7", "2001:db8::8"};

	for (size_t i = 0; i < ELEMENTSOF(want); i++) {
		CU_ASSERT_EQUAL_FATAL(ipam_pool6_alloc(p, &a), 0);
		CU_ASSERT(eq6(&a, want[i]));
	}
	/* a released address is the next one out, then the fill goes on */
	a = a6("2001:db8::3");
	CU_ASSERT_EQUAL(ipam_pool6_release(p, &a), 0);
	a = a6("2001:db8::7");
	CU_ASSERT_EQUAL(ipam_pool6_release(p, &a), 0);
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8::3"));
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8::7"));
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8::9"));
	/* a pinned address is skipped */
	a = a6("2001:db8::a");
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &a), 0);
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8::b"));

	/* deterministic: the same operations give the same addresses */
	for (int i = 0; i < 40; i++) {
		int ra = ipam_pool6_alloc(q, &a);

		if (i % 3 == 2 && ra == 0)
			ipam_pool6_release(q, &a);
	}
	ipam_pool6_free(p);
	p = pool_small();
	for (int i = 0; i < 40; i++) {
		int rb = ipam_pool6_alloc(p, &b);

		if (i % 3 == 2 && rb == 0)
			ipam_pool6_release(p, &b);
	}
	CU_ASSERT_EQUAL(ipam_pool6_used(p), ipam_pool6_used(q));
	for (int i = 0; i < 32; i++) {
		a = a6_off("2001:db8::", (ip6_u128)i);
		CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), ipam_pool6_state(q, &a));
	}
	ipam_pool6_free(p);
	ipam_pool6_free(q);
}

static void
test_exhaust_120(void)
{
	struct in6_addr net = a6("fd00:1::"), s = a6("fd00:1::"), e = a6("fd00:1::ff");
	struct in6_addr srv = a6("fd00:1::fe"), a;
	struct ipam_pool6 *p;
	int n = 0;

	CU_ASSERT_EQUAL_FATAL(ipam_pool6_new(&net, 120, &s, &e, &srv, NULL, 0, &p), 0);
	CU_ASSERT_EQUAL(ipam_pool6_available(p), 254);
	while (ipam_pool6_alloc(p, &a) == 0) {
		/* ascending, skipping ::0 (anycast) and ::fe (server) */
		ip6_u128 want = ipv6_to_u128(&s) + (ip6_u128)(n < 253 ? n + 1 : 255);

		CU_ASSERT(ipv6_to_u128(&a) == want);
		n++;
		if (n > 300)
			break;
	}
	CU_ASSERT_EQUAL(n, 254);
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), -ENOSPC);
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), -ENOSPC);
	CU_ASSERT_EQUAL(ipam_pool6_used(p), 254);
	CU_ASSERT_EQUAL(ipam_pool6_available(p), 0);
	a = a6("fd00:1::80");
	CU_ASSERT_EQUAL(ipam_pool6_release(p, &a), 0);
	a = a6("fd00:1::40");
	CU_ASSERT_EQUAL(ipam_pool6_release(p, &a), 0);
	CU_ASSERT_EQUAL(ipam_pool6_available(p), 2);
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "fd00:1::40"));
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "fd00:1::80"));
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), -ENOSPC);
	ipam_pool6_free(p);
}

static void
test_slash64(void)
{
	struct in6_addr net = a6("2001:db8:1:2::"), s = a6("2001:db8:1:2::");
	struct in6_addr e = a6("2001:db8:1:2:ffff:ffff:ffff:ffff"), srv = a6("2001:db8:1:2::1");
	struct in6_addr top = e, a;
	struct ipam_counts6 c;
	struct ipam_pool6 *p;

	CU_ASSERT_EQUAL_FATAL(ipam_pool6_new(&net, 64, &s, &e, &srv, NULL, 0, &p), 0);
	CU_ASSERT_EQUAL(ipam_pool6_available(p), INT64_MAX); /* 2^64 - 2 saturates */
	ipam_pool6_counts(p, &c);
	CU_ASSERT(c.size_minus_1 == UINT64_MAX);
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8:1:2::2"));
	/* the very top of the range */
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &top), 0);
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &top), IPAM_USED);
	a = a6_off("2001:db8:1:2::", (ip6_u128)1 << 63);
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &a), 0);
	CU_ASSERT_EQUAL(ipam_pool6_used(p), 3);
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8:1:2::3"));
	CU_ASSERT_EQUAL(ipam_pool6_release(p, &top), 0);
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &top), IPAM_FREE);
	a = a6("2001:db8:1:3::");
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), -ERANGE);
	/* a few thousand from the bottom stay in a few kilobytes */
	for (int i = 0; i < 5000; i++)
		CU_ASSERT_EQUAL_FATAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(ipv6_to_u128(&a) == ipv6_to_u128(&s) + 5003);
	CU_ASSERT(ipam_pool6_memory(p) < 16384);
	ipam_pool6_free(p);
}

static void
test_whole_space(void)
{
	/* ::/0 with the whole space as range: the size does not fit 128 bits */
	struct in6_addr z = {0}, top = a6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"), a;
	struct ipam_counts6 c;
	struct ipam_pool6 *p;

	CU_ASSERT_EQUAL_FATAL(ipam_pool6_new(&z, 0, &z, &top, NULL, &top, 1, &p), 0);
	ipam_pool6_counts(p, &c);
	CU_ASSERT(c.size_minus_1 == ~(ip6_u128)0);
	CU_ASSERT_EQUAL(c.available, INT64_MAX);
	CU_ASSERT_EQUAL(c.excluded, 1);
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &top), IPAM_EXCLUDED);
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &z), IPAM_RESERVED);
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "::1"));
	a = a6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe");
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &a), 0);
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), IPAM_USED);
	CU_ASSERT_EQUAL(ipam_pool6_release(p, &a), 0);
	ipam_pool6_free(p);

	/* a /126 range at the very top: exhausted without wrapping */
	a = a6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffc");
	CU_ASSERT_EQUAL_FATAL(ipam_pool6_new(&a, 126, &a, &top, NULL, NULL, 0, &p), 0);
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"));
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), -ENOSPC);
	ipam_pool6_free(p);
}

struct seen {
	struct in6_addr a[64];
	int s[64];
	size_t n;
	size_t stop_at;
};

static int
collect(const struct in6_addr *addr, enum ipam_state state, void *userdata)
{
	struct seen *v = userdata;

	if (v->n < ELEMENTSOF(v->a)) {
		v->a[v->n] = *addr;
		v->s[v->n] = (int)state;
	}
	v->n++;
	return v->n == v->stop_at ? 42 : 0;
}

static void
test_foreach(void)
{
	struct ipam_pool6 *p = pool_small();
	struct seen v = {0};
	struct in6_addr a;

	a = a6("2001:db8::20");
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &a), 0);
	a = a6("2001:db8::4");
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &a), 0);
	CU_ASSERT_EQUAL(ipam_pool6_foreach(p, IPAM_MASK_ALL, collect, &v), 0);
	CU_ASSERT_EQUAL_FATAL(v.n, 5);
	CU_ASSERT(eq6(&v.a[0], "2001:db8::1") && v.s[0] == IPAM_RESERVED);
	CU_ASSERT(eq6(&v.a[1], "2001:db8::4") && v.s[1] == IPAM_USED);
	CU_ASSERT(eq6(&v.a[2], "2001:db8::5") && v.s[2] == IPAM_EXCLUDED);
	CU_ASSERT(eq6(&v.a[3], "2001:db8::6") && v.s[3] == IPAM_EXCLUDED);
	CU_ASSERT(eq6(&v.a[4], "2001:db8::20") && v.s[4] == IPAM_USED);

	v = (struct seen){0};
	CU_ASSERT_EQUAL(ipam_pool6_foreach(p, IPAM_MASK(IPAM_USED), collect, &v), 0);
	CU_ASSERT_EQUAL(v.n, 2);
	v = (struct seen){.stop_at = 2};
	CU_ASSERT_EQUAL(ipam_pool6_foreach(p, IPAM_MASK_ALL, collect, &v), 42);
	CU_ASSERT_EQUAL(v.n, 2);
	v = (struct seen){0};
	CU_ASSERT_EQUAL(ipam_pool6_foreach(p, IPAM_MASK(IPAM_EXCLUDED), collect, &v), 0);
	CU_ASSERT_EQUAL(v.n, 2);
	ipam_pool6_free(p);
}

static void
test_set_range(void)
{
	struct ipam_pool6 *p = pool_small();
	struct in6_addr s, e, a, bad = {0};
	struct in6_addr ex[] = {a6("2001:db8::9")};

	a = a6("2001:db8::8");
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &a), 0);
	a = a6("2001:db8::9");
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &a), 0);
	a = a6("2001:db8::1e");
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &a), 0);

	/* errors */
	s = a6("2001:db8::10");
	e = a6("2001:db8::f");
	CU_ASSERT_EQUAL(ipam_pool6_set_range(p, &s, &e, NULL, 0, NULL), -EINVAL);
	e = a6("2001:db8:1::");
	CU_ASSERT_EQUAL(ipam_pool6_set_range(p, &s, &e, NULL, 0, NULL), -ERANGE);
	/* stranding: outside the new range (lowest reported) */
	s = a6("2001:db8::9");
	e = a6("2001:db8::1d");
	CU_ASSERT_EQUAL(ipam_pool6_set_range(p, &s, &e, NULL, 0, &bad), -EBUSY);
	CU_ASSERT(eq6(&bad, "2001:db8::8"));
	/* stranding: onto a new exclude */
	s = a6("2001:db8::1");
	e = a6("2001:db8::20");
	CU_ASSERT_EQUAL(ipam_pool6_set_range(p, &s, &e, ex, 1, &bad), -EBUSY);
	CU_ASSERT(eq6(&bad, "2001:db8::9"));
	/* unchanged after refusals */
	CU_ASSERT_EQUAL(ipam_pool6_used(p), 3);
	a = a6("2001:db8::5");
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), IPAM_EXCLUDED);
	ipam_pool6_start(p, &a);
	CU_ASSERT(eq6(&a, "2001:db8::1"));

	/* a new start (the chunks re-cut) that keeps every USED address */
	s = a6("2001:db8::7");
	e = a6("2001:db8::1000");
	CU_ASSERT_EQUAL(ipam_pool6_set_range(p, &s, &e, NULL, 0, &bad), 0);
	CU_ASSERT_EQUAL(ipam_pool6_used(p), 3);
	a = a6("2001:db8::8");
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), IPAM_USED);
	a = a6("2001:db8::1e");
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), IPAM_USED);
	a = a6("2001:db8::5");
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), -ERANGE);
	a = a6("2001:db8::1"); /* the server IP, now outside */
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), -ERANGE);
	CU_ASSERT_EQUAL(ipam_pool6_available(p), 0x1000 - 7 + 1 - 3);
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8::7"));
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8::a"));
	/* the same start, a shorter end, new excludes */
	s = a6("2001:db8::7");
	e = a6("2001:db8::40");
	ex[0] = a6("2001:db8::b");
	CU_ASSERT_EQUAL(ipam_pool6_set_range(p, &s, &e, ex, 1, NULL), 0);
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8::c"));
	CU_ASSERT_EQUAL(ipam_pool6_used(p), 6);
	ipam_pool6_free(p);
}

static void
test_rebuild(void)
{
	struct ipam_pool6 *p = pool_small();
	struct ipam_conflict6 *c = NULL;
	struct ipam_binding6 b[] = {
	    {a6("2001:db8::2"), {2, 0, 0, 0, 0, 1}},  /* 0 ok */
	    {a6("2001:db8::3"), {2, 0, 0, 0, 0, 2}},  /* 1 ok */
	    {a6("2001:db8::2"), {2, 0, 0, 0, 0, 3}},  /* 2 duplicate IP of 0 */
	    {a6("2001:db8::4"), {2, 0, 0, 0, 0, 1}},  /* 3 duplicate MAC of 0 */
	    {a6("2001:db8::5"), {2, 0, 0, 0, 0, 5}},  /* 4 excluded */
	    {a6("2001:db8::1"), {2, 0, 0, 0, 0, 6}},  /* 5 reserved */
	    {a6("2001:db8::99"), {2, 0, 0, 0, 0, 7}}, /* 6 outside */
	    {a6("2001:db8::3"), {2, 0, 0, 0, 0, 2}},  /* 7 same pair again: fine */
	};
	struct in6_addr a;
	int n;

	a = a6("2001:db8::10");
	CU_ASSERT_EQUAL(ipam_pool6_take(p, &a), 0); /* dropped by the rebuild */
	n = ipam_pool6_rebuild(p, b, ELEMENTSOF(b), &c);
	CU_ASSERT_EQUAL_FATAL(n, 5);
	CU_ASSERT(c[0].kind == IPAM_CONFLICT_DUPLICATE_IP && c[0].first == 0 && c[0].second == 2);
	CU_ASSERT(c[1].kind == IPAM_CONFLICT_DUPLICATE_MAC && c[1].first == 0 && c[1].second == 3);
	CU_ASSERT(eq6(&c[1].addr, "2001:db8::4"));
	CU_ASSERT(c[2].kind == IPAM_CONFLICT_EXCLUDED && c[2].second == 4);
	CU_ASSERT(c[3].kind == IPAM_CONFLICT_RESERVED && c[3].second == 5);
	CU_ASSERT(c[4].kind == IPAM_CONFLICT_OUTSIDE && c[4].second == 6 && c[4].first == 6);
	free(c);
	CU_ASSERT_EQUAL(ipam_pool6_used(p), 3); /* ::2 ::3 ::4 */
	CU_ASSERT_EQUAL(ipam_pool6_state(p, &a), IPAM_FREE);
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8::7"));

	/* empty rebuild drops everything */
	c = (struct ipam_conflict6 *)0x1;
	CU_ASSERT_EQUAL(ipam_pool6_rebuild(p, NULL, 0, &c), 0);
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_EQUAL(ipam_pool6_used(p), 0);
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8::2"));
	ipam_pool6_free(p);
}

/* --- a seeded random run against a naive model --------------------------------------- */

static uint64_t rng_state;

static uint64_t
rng(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

#define M_CIDR 1024 /* the model's /118: offsets 0..1023 from the network */

struct model {
	int state[M_CIDR]; /* -1 outside the range, else an ipam_state */
	unsigned start, end, server;
	uint64_t used;
};

static void
model_range(struct model *m, unsigned start, unsigned end, const unsigned *ex, size_t n_ex)
{
	for (unsigned i = 0; i < M_CIDR; i++) {
		int used = m->state[i] == IPAM_USED;

		m->state[i] = i < start || i > end ? -1 : used ? IPAM_USED : IPAM_FREE;
	}
	for (size_t k = 0; k < n_ex; k++)
		if (ex[k] >= start && ex[k] <= end)
			m->state[ex[k]] = IPAM_EXCLUDED;
	if (start == 0)
		m->state[0] = IPAM_RESERVED;
	if (m->server >= start && m->server <= end)
		m->state[m->server] = IPAM_RESERVED;
	m->start = start;
	m->end = end;
}

static void
model_check(struct ipam_pool6 *p, const struct model *m, const char *net)
{
	int64_t avail = 0;

	for (unsigned i = 0; i < M_CIDR; i++) {
		struct in6_addr a = a6_off(net, i);
		int st = ipam_pool6_state(p, &a);

		CU_ASSERT_EQUAL_FATAL(st, m->state[i] < 0 ? -ERANGE : m->state[i]);
		avail += m->state[i] == IPAM_FREE;
	}
	CU_ASSERT_EQUAL_FATAL(ipam_pool6_used(p), m->used);
	CU_ASSERT_EQUAL_FATAL(ipam_pool6_available(p), avail);
}

static void
random_set_range(struct ipam_pool6 *p, struct model *m, const char *net)
{
	unsigned s = (unsigned)(rng() % M_CIDR), e = (unsigned)(rng() % M_CIDR), ex[8];
	struct in6_addr xa[8], as = a6_off(net, s), ae = a6_off(net, e), bad = {0};
	size_t n = rng() % 8;
	unsigned lowest = UINT32_MAX;
	int r, want;

	for (size_t k = 0; k < n; k++) {
		ex[k] = (unsigned)(rng() % M_CIDR);
		xa[k] = a6_off(net, ex[k]);
	}
	if (s > e) {
		CU_ASSERT_EQUAL_FATAL(ipam_pool6_set_range(p, &as, &ae, xa, n, NULL), -EINVAL);
		return;
	}
	/* the model's verdict: the lowest USED address outside or blocked */
	for (unsigned i = 0; i < M_CIDR && lowest == UINT32_MAX; i++) {
		bool blocked = (i == 0) || i == m->server;

		for (size_t k = 0; k < n; k++)
			blocked |= ex[k] == i;
		if (m->state[i] == IPAM_USED && (i < s || i > e || blocked))
			lowest = i;
	}
	want = lowest == UINT32_MAX ? 0 : -EBUSY;
	r = ipam_pool6_set_range(p, &as, &ae, xa, n, &bad);
	CU_ASSERT_EQUAL_FATAL(r, want);
	if (r == -EBUSY) {
		struct in6_addr w = a6_off(net, lowest);

		CU_ASSERT_FATAL(ipv6_equal(&bad, &w));
	} else {
		model_range(m, s, e, ex, n);
	}
}

static void
model_step(struct ipam_pool6 *p, struct model *m, const char *net)
{
	unsigned op = (unsigned)(rng() % 100), i = (unsigned)(rng() % M_CIDR);
	struct in6_addr a = a6_off(net, i);

	if (op < 45) {
		/* alloc: the model's lowest FREE */
		unsigned want = UINT32_MAX;

		for (unsigned k = 0; k < M_CIDR && want == UINT32_MAX; k++)
			if (m->state[k] == IPAM_FREE)
				want = k;
		if (want == UINT32_MAX) {
			CU_ASSERT_EQUAL_FATAL(ipam_pool6_alloc(p, &a), -ENOSPC);
			return;
		}
		CU_ASSERT_EQUAL_FATAL(ipam_pool6_alloc(p, &a), 0);
		{
			struct in6_addr w = a6_off(net, want);

			CU_ASSERT_FATAL(ipv6_equal(&a, &w));
		}
		m->state[want] = IPAM_USED;
		m->used++;
	} else if (op < 60) {
		int want = m->state[i] < 0	      ? -ERANGE
			   : m->state[i] == IPAM_USED ? -EEXIST
			   : m->state[i] != IPAM_FREE ? -EPERM
						      : 0;

		CU_ASSERT_EQUAL_FATAL(ipam_pool6_take(p, &a), want);
		if (want == 0) {
			m->state[i] = IPAM_USED;
			m->used++;
		}
	} else if (op < 98) {
		/* release, mostly of a USED address */
		int want;

		for (unsigned k = 0; k < 8 && m->state[i] != IPAM_USED; k++)
			i = (unsigned)(rng() % M_CIDR);
		a = a6_off(net, i);
		want = m->state[i] < 0 ? -ERANGE : m->state[i] == IPAM_USED ? 0 : -ENOENT;
		CU_ASSERT_EQUAL_FATAL(ipam_pool6_release(p, &a), want);
		if (want == 0) {
			m->state[i] = IPAM_FREE;
			m->used--;
		}
	} else {
		random_set_range(p, m, net);
	}
}

static void
test_model(void)
{
	static const char net[] = "fd12:3456:789a:1::";
	size_t slots_max = 0;

	for (uint64_t seed = 1; seed <= 6; seed++) {
		struct model m = {.server = 700};
		unsigned ex[] = {3, 64, 65, 127, 128, 500, 700, 1023};
		struct in6_addr xa[ELEMENTSOF(ex)], n = a6(net), s = a6_off(net, 0),
						    e = a6_off(net, 1000);
		struct in6_addr srv = a6_off(net, 700);
		struct ipam_pool6 *p;

		rng_state = seed;
		for (size_t k = 0; k < ELEMENTSOF(ex); k++)
			xa[k] = a6_off(net, ex[k]);
		CU_ASSERT_EQUAL_FATAL(
		    ipam_pool6_new(&n, 118, &s, &e, &srv, xa, ELEMENTSOF(ex), &p), 0);
		model_range(&m, 0, 1000, ex, ELEMENTSOF(ex));
		model_check(p, &m, net);
		for (int step = 0; step < 20000; step++) {
			model_step(p, &m, net);
			if (step % 500 == 0)
				model_check(p, &m, net);
			if (p->tab.n_slots > slots_max)
				slots_max = p->tab.n_slots;
		}
		model_check(p, &m, net);
		ipam_pool6_free(p);
	}
	/* at most 16 chunks live: the table stays small */
	CU_ASSERT(slots_max <= 64);
}

/* --- memory at 65 000 bindings (printed, not timed) ----------------------------------- */

static size_t
heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static void
test_memory_65000(void)
{
	struct in6_addr net = a6("2001:db8:aa::"), s = net;
	struct in6_addr e = a6("2001:db8:aa::ffff:ffff:ffff:ffff"), a;
	struct ipam_pool6 *p;
	size_t before = heap_in_use(), bottom, scattered;

	CU_ASSERT_EQUAL_FATAL(ipam_pool6_new(&net, 64, &s, &e, NULL, NULL, 0, &p), 0);
	for (int i = 0; i < 65000; i++)
		CU_ASSERT_EQUAL_FATAL(ipam_pool6_alloc(p, &a), 0);
	bottom = heap_in_use() - before;
	CU_ASSERT(ipam_pool6_memory(p) < 65000); /* under a byte an address */
	printf("\n  pool6 /64, 65000 from the bottom: %zu bytes (%.2f a binding; mallinfo2 %zu)",
	    ipam_pool6_memory(p), (double)ipam_pool6_memory(p) / 65000, bottom);
	ipam_pool6_free(p);

	/* the worst case: one address per chunk, spread over the whole /64 */
	rng_state = 7;
	before = heap_in_use();
	CU_ASSERT_EQUAL_FATAL(ipam_pool6_new(&net, 64, &s, &e, NULL, NULL, 0, &p), 0);
	for (int i = 0; i < 65000;) {
		a = a6_off("2001:db8:aa::", rng() | 1);
		i += ipam_pool6_take(p, &a) == 0;
	}
	scattered = heap_in_use() - before;
	CU_ASSERT(ipam_pool6_memory(p) <= 65000 * 48);
	printf("\n  pool6 /64, 65000 scattered: %zu bytes (%.2f a binding; mallinfo2 %zu)\n  ",
	    ipam_pool6_memory(p), (double)ipam_pool6_memory(p) / 65000, scattered);
	CU_ASSERT_EQUAL(ipam_pool6_used(p), 65000);
	/* releasing them all keeps lowest-free right */
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8:aa::1"));
	ipam_pool6_free(p);
}

static void
test_churn_heap(void)
{
	/* fill 4096, release every third, refill: each refill is the lowest free */
	struct in6_addr net = a6("2001:db8:bb::"), s = net, e = a6("2001:db8:bb::ffff:ffff"), a;
	struct ipam_pool6 *p;

	CU_ASSERT_EQUAL_FATAL(ipam_pool6_new(&net, 96, &s, &e, NULL, NULL, 0, &p), 0);
	CU_ASSERT_EQUAL(ipam_pool6_reserve(p, 5000), 0);
	for (int i = 0; i < 4096; i++)
		CU_ASSERT_EQUAL_FATAL(ipam_pool6_alloc(p, &a), 0);
	for (int i = 4000; i > 0; i -= 3) {
		a = a6_off("2001:db8:bb::", (ip6_u128)i);
		CU_ASSERT_EQUAL_FATAL(ipam_pool6_release(p, &a), 0);
	}
	for (int i = 1; i <= 4000; i += 3) {
		CU_ASSERT_EQUAL_FATAL(ipam_pool6_alloc(p, &a), 0);
		CU_ASSERT_FATAL(ipv6_to_u128(&a) == ipv6_to_u128(&s) + (ip6_u128)i);
	}
	CU_ASSERT_EQUAL(ipam_pool6_alloc(p, &a), 0);
	CU_ASSERT(eq6(&a, "2001:db8:bb::1001"));
	CU_ASSERT_EQUAL(p->heap_n, 0); /* every reopened chunk is full again */
	ipam_pool6_free(p);
}

static const struct test_case pool6_tests[] = {
    {"new refuses bad input", test_new_errors},
    {"states, counts, take and release", test_states_and_counts},
    {"subnet-router anycast and server reserved", test_reserved_anycast},
    {"alloc lowest free, deterministic", test_alloc_lowest},
    {"exhaustion of a /120", test_exhaust_120},
    {"a /64 range", test_slash64},
    {"the whole address space", test_whole_space},
    {"foreach in address order", test_foreach},
    {"set_range refuses stranding", test_set_range},
    {"rebuild reports conflicts", test_rebuild},
    {"churn through the heap", test_churn_heap},
    {"random runs agree with a model", test_model},
    {"memory at 65000 bindings", test_memory_65000},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "ipam-pool6", .tests = pool6_tests},
    {.name = NULL},
};
