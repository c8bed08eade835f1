/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp/moderate.c, the engine's receive moderation, on a fake clock: requests arrive at a
 * fixed rate, the "caller" reads when the socket would be readable (delay 0: at the next
 * arrival) or when the delay asked for runs out, and feeds each read back.
 */
#include <stdio.h>
#include <string.h>

#include "dhcp/moderate.h"
#include "tests/runner.h"

/* Requests arrive every `gap` usec from t = 1 s on; the caller follows the returned delays. */
struct sim {
	struct dhcp_moderation m;
	uint64_t now;	   /* time of the next read */
	uint64_t arrived;  /* requests that have arrived up to now */
	uint64_t read;	   /* requests read */
	uint64_t gap;	   /* between arrivals, usec */
	uint64_t t0;	   /* first arrival of the current rate */
	uint64_t base;	   /* arrivals before t0 */
	uint32_t delay;	   /* the last delay returned */
	uint32_t max_seen; /* the largest delay returned */
	unsigned reads, delayed_reads;
	uint64_t max_wait; /* the longest a request waited for its read */
};

static void
sim_init(struct sim *s, uint64_t gap)
{
	memset(s, 0, sizeof(*s));
	dhcp_moderation_reset(&s->m);
	s->now = s->t0 = 1000000;
	s->gap = gap;
}

/* Requests arrived at or before t. */
static uint64_t
arrivals(const struct sim *s, uint64_t t)
{
	return t < s->t0 ? s->base : s->base + (t - s->t0) / s->gap + 1;
}

/* From now on, requests arrive every gap usec (the next one gap after the last). */
static void
sim_rate(struct sim *s, uint64_t gap)
{
	uint64_t last = s->t0 + (arrivals(s, s->now) - s->base - 1) * s->gap;

	s->base = arrivals(s, s->now);
	s->t0 = last + gap;
	s->gap = gap;
}

/* One read at s->now; then the time of the next read per the delay. */
static void
sim_step(struct sim *s)
{
	uint64_t have = arrivals(s, s->now), n = have - s->read;

	/* the oldest request read now arrived at the first arrival after the previous read */
	if (n > 0) {
		uint64_t first = s->t0 + (s->read - s->base) * s->gap;

		if (s->read >= s->base && s->now - first > s->max_wait)
			s->max_wait = s->now - first;
	}
	s->read = have;
	s->delay = dhcp_moderation_next(&s->m, s->now, (unsigned)n);
	s->reads++;
	if (s->delay > s->max_seen)
		s->max_seen = s->delay;
	if (s->delay > 0) {
		s->delayed_reads++;
		s->now += s->delay;
	} else {
		/* readable again at the next arrival; the caller reads 5 us later */
		uint64_t next = s->t0 + (have - s->base) * s->gap;

		s->now = (next > s->now ? next : s->now) + 5;
	}
}

static void
sim_run(struct sim *s, uint64_t until)
{
	while (s->now < until)
		sim_step(s);
}

/* Low rates: never a delay, every request read at its own wakeup. */
static void
test_low_rate(void)
{
	static const uint64_t gaps[] = {1000000, 10000, 2000, 1000, 600};

	for (size_t i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++) {
		struct sim s;

		sim_init(&s, gaps[i]);
		sim_run(&s, s.now + 2000000);
		CU_ASSERT_EQUAL(s.max_seen, 0);
		CU_ASSERT_EQUAL(s.delayed_reads, 0);
		CU_ASSERT(s.max_wait <= 5);
	}
}

/* A first request after start-up, or after an idle spell, is never delayed. */
static void
test_first_request(void)
{
	struct dhcp_moderation m;

	dhcp_moderation_reset(&m);
	CU_ASSERT_EQUAL(dhcp_moderation_next(&m, 0, 1), 0);
	CU_ASSERT_EQUAL(dhcp_moderation_next(&m, 0, 32), 0);
	dhcp_moderation_reset(&m);
	CU_ASSERT_EQUAL(dhcp_moderation_next(&m, 5000000, 1), 0);
}

/* Sustained high rates: the delay starts, grows, and stays within the bound. */
static void
test_high_rate(void)
{
	static const uint64_t gaps[] = {200, 125, 83, 40, 10, 1};

	for (size_t i = 0; i < sizeof(gaps) / sizeof(gaps[0]); i++) {
		struct sim s;
		uint32_t prev = 0;
		bool grew = false;

		sim_init(&s, gaps[i]);
		/* the first 100 ms: the average gap falls from idle, then moderation starts */
		sim_run(&s, s.now + 100000);
		CU_ASSERT(s.delayed_reads > 0);
		/* then: growing up to the bound, never past it */
		for (int k = 0; k < 20000; k++) {
			sim_step(&s);
			CU_ASSERT(s.delay <= DHCP_MOD_MAX_USEC);
			if (s.delay > prev && prev > 0)
				grew = true;
			if (s.delay > 0)
				prev = s.delay;
		}
		CU_ASSERT(s.max_seen <= DHCP_MOD_MAX_USEC);
		CU_ASSERT_EQUAL(s.max_seen, DHCP_MOD_MAX_USEC);
		CU_ASSERT(grew || s.max_seen == DHCP_MOD_MAX_USEC);
		/* no request waited for moderation longer than the bound (+ the 5 us wakeup) */
		CU_ASSERT(s.max_wait <= DHCP_MOD_MAX_USEC + 5);
		/* several requests per read */
		CU_ASSERT(gaps[i] > 100 || s.read / s.reads >= 2);
	}
}

/* The exact steps: one gap, doubling, capped; an empty read halves the delay and waits. */
static void
test_steps(void)
{
	struct dhcp_moderation m;
	uint64_t t = 1000000;
	uint32_t d = 0, prev;

	dhcp_moderation_reset(&m);
	/* requests 100 us apart, read one by one: once the average gap is under ON, a delay of
	 * one average gap */
	for (int i = 0; i < 1000 && d == 0; i++, t += 100)
		d = dhcp_moderation_next(&m, t, 1);
	CU_ASSERT(m.gap <= DHCP_MOD_ON_USEC);
	CU_ASSERT_EQUAL(d, m.gap < DHCP_MOD_MAX_USEC ? m.gap : DHCP_MOD_MAX_USEC);
	CU_ASSERT(d >= DHCP_MOD_MIN_USEC && d <= DHCP_MOD_MAX_USEC);
	/* each read that finds requests doubles it, up to the bound */
	for (int i = 0; i < 4; i++) {
		prev = d;
		t += d;
		d = dhcp_moderation_next(&m, t, 2);
		CU_ASSERT_EQUAL(d, prev * 2 < DHCP_MOD_MAX_USEC ? prev * 2 : DHCP_MOD_MAX_USEC);
	}
	CU_ASSERT_EQUAL(d, DHCP_MOD_MAX_USEC);
	/* nothing came in 200 us: back to readability, the level halved */
	t += d;
	CU_ASSERT_EQUAL(dhcp_moderation_next(&m, t, 0), 0);
	CU_ASSERT_EQUAL(m.delay, DHCP_MOD_MAX_USEC / 2);
	/* the next request's read doubles it again */
	t += 60;
	CU_ASSERT_EQUAL(dhcp_moderation_next(&m, t, 1), DHCP_MOD_MAX_USEC);
	/* empty reads in a row: halved down to 0, under DHCP_MOD_MIN_USEC */
	for (d = DHCP_MOD_MAX_USEC; d >= DHCP_MOD_MIN_USEC; d /= 2)
		CU_ASSERT_EQUAL(dhcp_moderation_next(&m, t, 0), 0);
	CU_ASSERT_EQUAL(m.delay, 0);
	/* a zero-length gap (many requests in one microsecond) still starts at the minimum */
	dhcp_moderation_reset(&m);
	m.started = true;
	m.last = t;
	m.gap = 0;
	CU_ASSERT_EQUAL(dhcp_moderation_next(&m, t, 32), DHCP_MOD_MIN_USEC);
}

/* Load dropping: back to 0, and no delay from then on. */
static void
test_load_drops(void)
{
	struct sim s;
	unsigned delayed;

	sim_init(&s, 83); /* 12 000/s */
	sim_run(&s, s.now + 200000);
	CU_ASSERT_EQUAL(s.delay, DHCP_MOD_MAX_USEC);
	sim_rate(&s, 2000); /* 500/s */
	sim_run(&s, s.now + 20000);
	CU_ASSERT_EQUAL(s.delay, 0);
	CU_ASSERT_EQUAL(s.m.delay, 0);
	delayed = s.delayed_reads;
	s.max_wait = 0;
	sim_run(&s, s.now + 2000000);
	CU_ASSERT_EQUAL(s.delayed_reads, delayed);
	CU_ASSERT(s.max_wait <= 5);
	/* and up again */
	sim_rate(&s, 83);
	sim_run(&s, s.now + 200000);
	CU_ASSERT_EQUAL(s.delay, DHCP_MOD_MAX_USEC);
	/* an idle spell ends it at once: the next request is read on its wakeup */
	s.now += 1000000;
	CU_ASSERT_EQUAL(dhcp_moderation_next(&s.m, s.now, 1), 0);
	CU_ASSERT_EQUAL(s.m.delay, 0);
}

/* Between ON and OFF (hysteresis): no start, but no end either. */
static void
test_hysteresis(void)
{
	struct sim s;

	sim_init(&s, 350); /* ~2 900/s: above ON, below OFF */
	sim_run(&s, s.now + 500000);
	CU_ASSERT_EQUAL(s.delayed_reads, 0);
	sim_init(&s, 83);
	sim_run(&s, s.now + 200000);
	CU_ASSERT(s.delayed_reads > 0);
	sim_rate(&s, 350);
	sim_run(&s, s.now + 500000);
	/* still moderating now and then: empty delayed reads halve, requests double again */
	CU_ASSERT(s.m.gap > DHCP_MOD_ON_USEC && s.m.gap <= DHCP_MOD_OFF_USEC);
	CU_ASSERT(s.max_seen <= DHCP_MOD_MAX_USEC);
}

static const struct test_case moderate_tests[] = {
    {"low rates: no delay", test_low_rate},
    {"first request: no delay", test_first_request},
    {"high rates: delay grows to the bound", test_high_rate},
    {"steps", test_steps},
    {"load dropping: back to 0", test_load_drops},
    {"hysteresis", test_hysteresis},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp-moderate", .tests = moderate_tests},
    {.name = NULL},
};
