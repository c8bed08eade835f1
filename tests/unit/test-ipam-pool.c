/* SPDX-License-Identifier: Apache-2.0 */
/* ipam/pool.c: every operation and error, plus a seeded property test against a model. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static struct ipam_pool *
pool_24(void)
{
	/* 192.168.10.0/24, range .1-.20, server .1, router .254 (outside range), excl .5 .6 */
	uint32_t ex[] = {A("192.168.10.5"), A("192.168.10.6"), A("192.168.10.6")};
	struct ipam_pool *p = NULL;

	CU_ASSERT_FATAL(ipam_pool_new(A("192.168.10.0"), 24, A("192.168.10.1"), A("192.168.10.20"),
			    A("192.168.10.1"), A("192.168.10.254"), ex, ELEMENTSOF(ex), &p) == 0);
	return p;
}

static void
test_new_errors(void)
{
	struct ipam_pool *p = (struct ipam_pool *)0x1;
	uint32_t net = A("10.0.0.0");
	uint32_t ex_out[] = {A("10.0.1.1")};

	CU_ASSERT_EQUAL(ipam_pool_new(net, 33, net, net + 10, 0, 0, NULL, 0, &p), -EINVAL);
	/* a short prefix is taken; only a range larger than IPAM_MAX_RANGE is not */
	CU_ASSERT_EQUAL(
	    ipam_pool_new(net, 7, net, net + IPAM_MAX_RANGE, 0, 0, NULL, 0, &p), -E2BIG);
	CU_ASSERT_EQUAL(ipam_pool_new(0, 0, 0, UINT32_MAX, 0, 0, NULL, 0, &p), -E2BIG);
	CU_ASSERT_EQUAL(ipam_pool_new(net, 24, net + 10, net + 9, 0, 0, NULL, 0, &p), -EINVAL);
	CU_ASSERT_EQUAL(ipam_pool_new(net, 24, net + 10, net + 256, 0, 0, NULL, 0, &p), -ERANGE);
	CU_ASSERT_EQUAL(ipam_pool_new(net, 24, net - 1, net + 10, 0, 0, NULL, 0, &p), -ERANGE);
	CU_ASSERT_EQUAL(
	    ipam_pool_new(net, 24, net + 1, net + 10, A("10.0.1.1"), 0, NULL, 0, &p), -ERANGE);
	CU_ASSERT_EQUAL(
	    ipam_pool_new(net, 24, net + 1, net + 10, 0, A("10.0.2.1"), NULL, 0, &p), -ERANGE);
	CU_ASSERT_EQUAL(ipam_pool_new(net, 24, net + 1, net + 10, 0, 0, ex_out, 1, &p), -ERANGE);
	CU_ASSERT_EQUAL(ipam_pool_new(net, 24, net + 1, net + 10, 0, 0, NULL, 1, &p), -EINVAL);
	/* *ret untouched on failure */
	CU_ASSERT_PTR_EQUAL(p, (struct ipam_pool *)0x1);
	/* The largest pool: a whole /8 (2 MiB per bitmap). */
	CU_ASSERT_EQUAL_FATAL(
	    ipam_pool_new(net, 8, A("10.0.0.0"), A("10.255.255.255"), 0, 0, NULL, 0, &p), 0);
	CU_ASSERT(ipam_pool_memory(p) <= 4u * 1024 * 1024 + 64 * 1024);
	p = ipam_pool_free(p);
	/* a /0 or /7 network with a small range (upstream takes any prefix) */
	CU_ASSERT_EQUAL_FATAL(ipam_pool_new(net, 7, net + 1, net + 10, 0, 0, NULL, 0, &p), 0);
	p = ipam_pool_free(p);
	CU_ASSERT_EQUAL_FATAL(ipam_pool_new(0, 0, net + 1, net + 10, net, 0, NULL, 0, &p), 0);
	p = ipam_pool_free(p);
	CU_ASSERT_PTR_NULL(p);
	CU_ASSERT_PTR_NULL(ipam_pool_free(NULL));
}

static void
test_marks_and_counts(void)
{
	struct ipam_pool *p = pool_24();
	struct ipam_counts c;

	ipam_pool_counts(p, &c);
	CU_ASSERT_EQUAL(c.size, 20);
	CU_ASSERT_EQUAL(c.reserved, 1); /* server .1 (network .0 and router outside range) */
	CU_ASSERT_EQUAL(c.excluded, 2); /* .5 .6, the repeat counted once */
	CU_ASSERT_EQUAL(c.used, 0);
	CU_ASSERT_EQUAL(c.available, 17);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("192.168.10.1")), IPAM_RESERVED);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("192.168.10.5")), IPAM_EXCLUDED);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("192.168.10.2")), IPAM_FREE);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("192.168.10.21")), -ERANGE);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("192.168.10.254")), -ERANGE);
	CU_ASSERT_TRUE(ipam_pool_is_free(p, A("192.168.10.2")));
	CU_ASSERT_FALSE(ipam_pool_is_free(p, A("192.168.10.5")));
	CU_ASSERT_FALSE(ipam_pool_is_free(p, A("192.168.10.99")));
	CU_ASSERT_EQUAL(ipam_pool_start(p), A("192.168.10.1"));
	CU_ASSERT_EQUAL(ipam_pool_end(p), A("192.168.10.20"));
	CU_ASSERT_EQUAL(ipam_pool_network(p), A("192.168.10.0"));
	CU_ASSERT_EQUAL(ipam_pool_prefix(p), 24);
	ipam_pool_free(p);
}

static void
test_network_broadcast_reserved(void)
{
	struct ipam_pool *p = NULL;
	struct ipam_counts c;
	uint32_t a;

	/* Whole /29 as the range, host bits of the CIDR address ignored, server = router. */
	CU_ASSERT_FATAL(ipam_pool_new(A("10.9.9.3"), 29, A("10.9.9.0"), A("10.9.9.7"),
			    A("10.9.9.1"), A("10.9.9.1"), NULL, 0, &p) == 0);
	ipam_pool_counts(p, &c);
	CU_ASSERT_EQUAL(c.reserved, 3); /* .0 .7 .1 */
	CU_ASSERT_EQUAL(c.available, 5);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("10.9.9.0")), IPAM_RESERVED);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("10.9.9.7")), IPAM_RESERVED);
	CU_ASSERT_EQUAL(ipam_pool_allocate(p, &a), 0);
	CU_ASSERT_EQUAL(a, A("10.9.9.2"));
	ipam_pool_free(p);

	/* A /31 has no network/broadcast: both addresses are hosts (RFC 3021). */
	CU_ASSERT_FATAL(ipam_pool_new(A("10.9.9.0"), 31, A("10.9.9.0"), A("10.9.9.1"),
			    A("10.9.9.0"), 0, NULL, 0, &p) == 0);
	CU_ASSERT_EQUAL(ipam_pool_allocate(p, &a), 0);
	CU_ASSERT_EQUAL(a, A("10.9.9.1"));
	CU_ASSERT_EQUAL(ipam_pool_allocate(p, &a), -ENOSPC);
	ipam_pool_free(p);
}

static void
test_allocate_lowest(void)
{
	struct ipam_pool *p = pool_24();
	uint32_t a = 0;
	static const char *const expect[] = {
	    "192.168.10.2",
	    "192.168.10.3",
	    "192.168.10.4",
	    "192.168.10.7",
	    "192.168.10.8",
	};
	struct ipam_counts c;

	for (size_t i = 0; i < ELEMENTSOF(expect); i++) {
		CU_ASSERT_EQUAL(ipam_pool_allocate(p, &a), 0);
		CU_ASSERT_EQUAL(a, A(expect[i]));
	}
	/* Release .3: it is the lowest again. */
	CU_ASSERT_EQUAL(ipam_pool_release(p, A("192.168.10.3")), 0);
	CU_ASSERT_EQUAL(ipam_pool_allocate(p, &a), 0);
	CU_ASSERT_EQUAL(a, A("192.168.10.3"));
	/* Fill: 17 available in all, 5 taken. */
	for (int i = 0; i < 12; i++)
		CU_ASSERT_EQUAL(ipam_pool_allocate(p, &a), 0);
	CU_ASSERT_EQUAL(a, A("192.168.10.20"));
	a = 12345;
	CU_ASSERT_EQUAL(ipam_pool_allocate(p, &a), -ENOSPC);
	CU_ASSERT_EQUAL(a, 12345); /* untouched on failure */
	ipam_pool_counts(p, &c);
	CU_ASSERT_EQUAL(c.used, 17);
	CU_ASSERT_EQUAL(c.available, 0);
	/* Release after full: found again. */
	CU_ASSERT_EQUAL(ipam_pool_release(p, A("192.168.10.11")), 0);
	CU_ASSERT_EQUAL(ipam_pool_allocate(p, &a), 0);
	CU_ASSERT_EQUAL(a, A("192.168.10.11"));
	ipam_pool_free(p);
}

static void
test_allocate_specific(void)
{
	struct ipam_pool *p = pool_24();
	uint32_t a;

	CU_ASSERT_EQUAL(ipam_pool_allocate_addr(p, A("192.168.10.10")), 0);
	CU_ASSERT_EQUAL(ipam_pool_allocate_addr(p, A("192.168.10.10")), -EEXIST);
	CU_ASSERT_EQUAL(ipam_pool_allocate_addr(p, A("192.168.10.21")), -ERANGE);
	CU_ASSERT_EQUAL(ipam_pool_allocate_addr(p, A("192.168.10.0")), -ERANGE);
	CU_ASSERT_EQUAL(ipam_pool_allocate_addr(p, A("192.168.10.5")), -EPERM);
	CU_ASSERT_EQUAL(ipam_pool_allocate_addr(p, A("192.168.10.1")), -EPERM);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("192.168.10.10")), IPAM_USED);
	CU_ASSERT_EQUAL(ipam_pool_allocate_addr(p, A("192.168.10.2")), 0);
	CU_ASSERT_EQUAL(ipam_pool_allocate(p, &a), 0);
	CU_ASSERT_EQUAL(a, A("192.168.10.3"));
	ipam_pool_free(p);
}

static void
test_release_errors(void)
{
	struct ipam_pool *p = pool_24();
	struct ipam_counts c;

	CU_ASSERT_EQUAL(ipam_pool_release(p, A("192.168.10.2")), -ENOENT);
	CU_ASSERT_EQUAL(ipam_pool_release(p, A("192.168.10.5")), -ENOENT);
	CU_ASSERT_EQUAL(ipam_pool_release(p, A("192.168.10.1")), -ENOENT);
	CU_ASSERT_EQUAL(ipam_pool_release(p, A("192.168.11.2")), -ERANGE);
	CU_ASSERT_EQUAL(ipam_pool_allocate_addr(p, A("192.168.10.2")), 0);
	CU_ASSERT_EQUAL(ipam_pool_release(p, A("192.168.10.2")), 0);
	CU_ASSERT_EQUAL(ipam_pool_release(p, A("192.168.10.2")), -ENOENT);
	ipam_pool_counts(p, &c);
	CU_ASSERT_EQUAL(c.used, 0);
	CU_ASSERT_EQUAL(c.excluded, 2);
	CU_ASSERT_EQUAL(c.reserved, 1);
	ipam_pool_free(p);
}

struct seen {
	uint32_t addr[64];
	int state[64];
	size_t n;
	size_t stop_after;
};

static int
collect(uint32_t addr, enum ipam_state state, void *userdata)
{
	struct seen *s = userdata;

	if (s->n < ELEMENTSOF(s->addr)) {
		s->addr[s->n] = addr;
		s->state[s->n] = state;
	}
	s->n++;
	return s->stop_after && s->n == s->stop_after ? 42 : 0;
}

static void
test_foreach(void)
{
	struct ipam_pool *p = pool_24();
	struct seen s = {0};

	CU_ASSERT_EQUAL(ipam_pool_allocate_addr(p, A("192.168.10.9")), 0);
	CU_ASSERT_EQUAL(ipam_pool_allocate_addr(p, A("192.168.10.3")), 0);
	CU_ASSERT_EQUAL(ipam_pool_foreach(p, IPAM_MASK_ALL, collect, &s), 0);
	CU_ASSERT_EQUAL_FATAL(s.n, 5);
	CU_ASSERT_EQUAL(s.addr[0], A("192.168.10.1"));
	CU_ASSERT_EQUAL(s.state[0], IPAM_RESERVED);
	CU_ASSERT_EQUAL(s.addr[1], A("192.168.10.3"));
	CU_ASSERT_EQUAL(s.state[1], IPAM_USED);
	CU_ASSERT_EQUAL(s.addr[2], A("192.168.10.5"));
	CU_ASSERT_EQUAL(s.state[2], IPAM_EXCLUDED);
	CU_ASSERT_EQUAL(s.addr[4], A("192.168.10.9"));

	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(ipam_pool_foreach(p, IPAM_MASK(IPAM_USED), collect, &s), 0);
	CU_ASSERT_EQUAL(s.n, 2);
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(ipam_pool_foreach(p, IPAM_MASK(IPAM_EXCLUDED), collect, &s), 0);
	CU_ASSERT_EQUAL(s.n, 2);
	memset(&s, 0, sizeof(s));
	CU_ASSERT_EQUAL(ipam_pool_foreach(p, IPAM_MASK(IPAM_RESERVED), collect, &s), 0);
	CU_ASSERT_EQUAL(s.n, 1);
	memset(&s, 0, sizeof(s));
	s.stop_after = 2;
	CU_ASSERT_EQUAL(ipam_pool_foreach(p, IPAM_MASK_ALL, collect, &s), 42);
	CU_ASSERT_EQUAL(s.n, 2);
	ipam_pool_free(p);
}

static void
test_set_range(void)
{
	struct ipam_pool *p = pool_24();
	uint32_t conflict = 0, a;
	uint32_t ex[] = {A("192.168.10.12")};
	uint32_t ex_bad[] = {A("192.168.11.12")};
	struct ipam_counts c;

	CU_ASSERT_EQUAL(ipam_pool_allocate_addr(p, A("192.168.10.12")), 0);
	CU_ASSERT_EQUAL(ipam_pool_allocate_addr(p, A("192.168.10.15")), 0);
	/* Shrinking below .15 strands it. */
	CU_ASSERT_EQUAL(
	    ipam_pool_set_range(p, A("192.168.10.1"), A("192.168.10.14"), NULL, 0, &conflict),
	    -EBUSY);
	CU_ASSERT_EQUAL(conflict, A("192.168.10.15"));
	/* Moving the start above .12 strands .12 first (the lowest). */
	CU_ASSERT_EQUAL(
	    ipam_pool_set_range(p, A("192.168.10.13"), A("192.168.10.14"), NULL, 0, &conflict),
	    -EBUSY);
	CU_ASSERT_EQUAL(conflict, A("192.168.10.12"));
	/* Excluding a bound address is refused. */
	CU_ASSERT_EQUAL(
	    ipam_pool_set_range(p, A("192.168.10.1"), A("192.168.10.20"), ex, 1, &conflict),
	    -EBUSY);
	CU_ASSERT_EQUAL(conflict, A("192.168.10.12"));
	CU_ASSERT_EQUAL(
	    ipam_pool_set_range(p, A("192.168.10.1"), A("192.168.10.20"), ex_bad, 1, &conflict),
	    -ERANGE);
	CU_ASSERT_EQUAL(
	    ipam_pool_set_range(p, A("192.168.10.9"), A("192.168.10.8"), NULL, 0, &conflict),
	    -EINVAL);
	CU_ASSERT_EQUAL(
	    ipam_pool_set_range(p, A("192.168.10.9"), A("192.168.11.8"), NULL, 0, &conflict),
	    -ERANGE);
	CU_ASSERT_EQUAL(
	    ipam_pool_set_range(p, A("192.168.10.9"), A("192.168.10.8"), NULL, 1, &conflict),
	    -EINVAL);
	/* Failures left the pool as it was. */
	ipam_pool_counts(p, &c);
	CU_ASSERT_EQUAL(c.size, 20);
	CU_ASSERT_EQUAL(c.used, 2);
	CU_ASSERT_EQUAL(c.excluded, 2);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("192.168.10.5")), IPAM_EXCLUDED);

	/* Growing to the whole /24 with new excludes: .254 router and .255 broadcast now
	 * RESERVED, .5/.6 no longer excluded, bindings kept. */
	CU_ASSERT_EQUAL(ipam_pool_set_range(p, A("192.168.10.0"), A("192.168.10.255"),
			    (uint32_t[]){A("192.168.10.100")}, 1, NULL),
	    0);
	ipam_pool_counts(p, &c);
	CU_ASSERT_EQUAL(c.size, 256);
	CU_ASSERT_EQUAL(c.reserved, 4);
	CU_ASSERT_EQUAL(c.excluded, 1);
	CU_ASSERT_EQUAL(c.used, 2);
	CU_ASSERT_EQUAL(c.available, 249);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("192.168.10.254")), IPAM_RESERVED);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("192.168.10.255")), IPAM_RESERVED);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("192.168.10.12")), IPAM_USED);
	CU_ASSERT_EQUAL(ipam_pool_state(p, A("192.168.10.5")), IPAM_FREE);
	CU_ASSERT_EQUAL(ipam_pool_allocate(p, &a), 0);
	CU_ASSERT_EQUAL(a, A("192.168.10.2"));
	/* Shrink exactly around the bindings: accepted. */
	CU_ASSERT_EQUAL(
	    ipam_pool_set_range(p, A("192.168.10.2"), A("192.168.10.15"), NULL, 0, &conflict), 0);
	ipam_pool_counts(p, &c);
	CU_ASSERT_EQUAL(c.size, 14);
	CU_ASSERT_EQUAL(c.used, 3);
	CU_ASSERT_EQUAL(c.reserved, 0);
	ipam_pool_free(p);
}

static void
test_memory_slash16(void)
{
	struct ipam_pool *p = NULL;
	struct ipam_counts c;
	uint32_t a, prev = 0;
	int ok = 1;

	CU_ASSERT_FATAL(ipam_pool_new(A("10.20.0.0"), 16, A("10.20.0.0"), A("10.20.255.255"),
			    A("10.20.0.1"), A("10.20.0.1"), NULL, 0, &p) == 0);
	CU_ASSERT(ipam_pool_memory(p) <= 64 * 1024);
	/* Filling returns strictly ascending addresses and ends with -ENOSPC. */
	while (ipam_pool_allocate(p, &a) == 0) {
		if (a <= prev)
			ok = 0;
		prev = a;
	}
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_EQUAL(prev, A("10.20.255.254"));
	ipam_pool_counts(p, &c);
	CU_ASSERT_EQUAL(c.used, 65536 - 3);
	CU_ASSERT_EQUAL(c.available, 0);
	ipam_pool_free(p);
}

/* --- property test ------------------------------------------------------------------- */

/* xorshift64*: small, seeded, reproducible. */
static uint64_t rng_state;

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(2685821657736338717);
}

static uint32_t
rng_below(uint32_t n)
{
	return (uint32_t)(rng() % n);
}

#define MODEL_MAX 1024 /* addresses of the largest CIDR the test uses (/22) */

struct model {
	uint32_t network;
	unsigned prefix;
	uint32_t n; /* CIDR size */
	uint32_t server, router;
	uint32_t start, end;
	bool used[MODEL_MAX];
	bool excluded[MODEL_MAX];
};

static bool
model_reserved(const struct model *m, uint32_t a)
{
	if (m->prefix <= 30 && (a == m->network || a == m->network + m->n - 1))
		return true;
	return (m->server && a == m->server) || (m->router && a == m->router);
}

static int
model_state(const struct model *m, uint32_t a)
{
	uint32_t i = a - m->network;

	if (a < m->start || a > m->end)
		return -ERANGE;
	if (model_reserved(m, a))
		return IPAM_RESERVED;
	if (m->excluded[i])
		return IPAM_EXCLUDED;
	return m->used[i] ? IPAM_USED : IPAM_FREE;
}

static void
model_counts(const struct model *m, struct ipam_counts *c)
{
	memset(c, 0, sizeof(*c));
	c->size = m->end - m->start + 1;
	for (uint32_t a = m->start; a <= m->end; a++) {
		switch (model_state(m, a)) {
		case IPAM_USED:
			c->used++;
			break;
		case IPAM_FREE:
			c->available++;
			break;
		case IPAM_EXCLUDED:
			c->excluded++;
			break;
		case IPAM_RESERVED:
			c->reserved++;
			break;
		default:
			break;
		}
	}
}

/* Random address in the CIDR, sometimes one just outside it. */
static uint32_t
pick_addr(const struct model *m)
{
	if (rng_below(50) == 0)
		return rng_below(2) ? m->network - 1 : m->network + m->n;
	return m->network + rng_below(m->n);
}

static void
random_range(const struct model *m, uint32_t *start, uint32_t *end, uint32_t *ex, size_t *n_ex)
{
	uint32_t x = m->network + rng_below(m->n), y = m->network + rng_below(m->n);

	/* Bias towards wide ranges so that bindings survive many changes. */
	if (rng_below(3) == 0) {
		x = m->network + rng_below(m->n / 8 + 1);
		y = m->network + m->n - 1 - rng_below(m->n / 8 + 1);
	}
	*start = MIN(x, y);
	*end = MAX(x, y);
	*n_ex = rng_below(6);
	for (size_t i = 0; i < *n_ex; i++)
		ex[i] = m->network + rng_below(m->n);
}

static struct ipam_pool *
model_init(struct model *m)
{
	static const unsigned prefixes[] = {22, 23, 24, 26, 29, 30, 31, 32};
	uint32_t ex[8];
	size_t n_ex;
	struct ipam_pool *p = NULL;

	memset(m, 0, sizeof(*m));
	m->prefix = prefixes[rng_below(ELEMENTSOF(prefixes))];
	m->n = UINT32_C(1) << (32 - m->prefix);
	m->network = A("172.16.0.0") + rng_below(64) * 1024;
	m->server = rng_below(4) ? m->network + rng_below(m->n) : 0;
	m->router = rng_below(3) ? m->network + rng_below(m->n) : 0;
	random_range(m, &m->start, &m->end, ex, &n_ex);
	for (size_t i = 0; i < n_ex; i++)
		if (ex[i] >= m->start && ex[i] <= m->end)
			m->excluded[ex[i] - m->network] = true;
	CU_ASSERT_FATAL(ipam_pool_new(m->network, m->prefix, m->start, m->end, m->server, m->router,
			    ex, n_ex, &p) == 0);
	return p;
}

static bool
model_check(const struct model *m, const struct ipam_pool *p)
{
	struct ipam_counts c, mc;

	ipam_pool_counts(p, &c);
	model_counts(m, &mc);
	if (memcmp(&c, &mc, sizeof(c)) != 0)
		return false;
	for (uint32_t a = m->network - 1; a != m->network + m->n + 1; a++)
		if (ipam_pool_state(p, a) != model_state(m, a))
			return false;
	return true;
}

static void
test_property(void)
{
	const char *env = getenv("IPAM_SEED");
	uint64_t seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
	const unsigned ops = 200000;
	struct model *m = calloc(1, sizeof(*m));
	struct ipam_pool *p;
	unsigned failures = 0, step;

	printf("\n  ipam property test: IPAM_SEED=%" PRIu64 " (%u operations)\n", seed, ops);
	rng_state = seed ? seed : 1;
	CU_ASSERT_FATAL(m != NULL);
	p = model_init(m);

	for (step = 0; step < ops && failures == 0; step++) {
		unsigned op = rng_below(100);
		int r, want;
		uint32_t a = 0;

		if (step % 20000 == 19999) { /* new random pool shape */
			ipam_pool_free(p);
			p = model_init(m);
		} else if (op < 40) { /* allocate lowest free */
			uint32_t lowest = 0;

			want = -ENOSPC;
			for (uint32_t x = m->start; x <= m->end; x++)
				if (model_state(m, x) == IPAM_FREE) {
					lowest = x;
					want = 0;
					break;
				}
			r = ipam_pool_allocate(p, &a);
			if (r != want || (r == 0 && a != lowest))
				failures++;
			if (r == 0 && want == 0)
				m->used[lowest - m->network] = true;
		} else if (op < 55) { /* allocate a specific address */
			a = pick_addr(m);
			switch (model_state(m, a)) {
			case IPAM_FREE:
				want = 0;
				break;
			case IPAM_USED:
				want = -EEXIST;
				break;
			case IPAM_EXCLUDED:
			case IPAM_RESERVED:
				want = -EPERM;
				break;
			default:
				want = -ERANGE;
				break;
			}
			r = ipam_pool_allocate_addr(p, a);
			if (r != want)
				failures++;
			if (want == 0)
				m->used[a - m->network] = true;
		} else if (op < 90) { /* release */
			a = pick_addr(m);
			want = model_state(m, a) == IPAM_USED ? 0
			       : model_state(m, a) == -ERANGE ? -ERANGE
							      : -ENOENT;
			r = ipam_pool_release(p, a);
			if (r != want)
				failures++;
			if (want == 0)
				m->used[a - m->network] = false;
		} else { /* range change */
			uint32_t s, e, ex[8], conflict = 0, got = 0;
			size_t n_ex;
			bool is_ex[MODEL_MAX] = {false};

			random_range(m, &s, &e, ex, &n_ex);
			for (size_t i = 0; i < n_ex; i++)
				is_ex[ex[i] - m->network] = true;
			want = 0;
			for (uint32_t i = 0; i < m->n; i++) {
				uint32_t x = m->network + i;

				if (m->used[i] && (x < s || x > e || is_ex[i])) {
					/* a reserved address is never used, so is_ex alone
					 * decides exclusion of a bound address */
					want = -EBUSY;
					conflict = x;
					break;
				}
			}
			r = ipam_pool_set_range(p, s, e, ex, n_ex, &got);
			if (r != want || (r == -EBUSY && got != conflict))
				failures++;
			if (r == 0 && want == 0) {
				m->start = s;
				m->end = e;
				for (uint32_t i = 0; i < m->n; i++)
					m->excluded[i] = is_ex[i];
			}
		}
		if (failures == 0 && !model_check(m, p))
			failures++;
	}
	if (failures)
		printf("  diverged at step %u (IPAM_SEED=%" PRIu64 ")\n", step, seed);
	CU_ASSERT_EQUAL(failures, 0);
	CU_ASSERT_EQUAL(step, ops);
	ipam_pool_free(p);
	free(m);
}

static const struct test_case pool_tests[] = {
    {"new refuses bad input", test_new_errors},
    {"marks and counts", test_marks_and_counts},
    {"network, broadcast, /31", test_network_broadcast_reserved},
    {"allocate lowest free", test_allocate_lowest},
    {"allocate specific", test_allocate_specific},
    {"release errors", test_release_errors},
    {"foreach", test_foreach},
    {"set_range refuses stranding", test_set_range},
    {"/16 memory and fill order", test_memory_slash16},
    {NULL, NULL},
};

static const struct test_case property_tests[] = {
    {"200k random ops agree with a model", test_property},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "ipam-pool", .tests = pool_tests},
    {.name = "ipam-property", .tests = property_tests},
    {.name = NULL},
};
