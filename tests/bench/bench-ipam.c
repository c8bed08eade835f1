/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-ipam: memory of a /16 pool, and the amortised cost of allocate (filling a /16),
 * of release + allocate churn, and of a rebuild from 65 000 bindings. `make bench-ipam`.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ipam/ipam.h"
#include "lib/util.h"

static double
now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng_state = 88172645463325252ull;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

int
main(int argc, char **argv)
{
	const int rounds = argc > 1 ? atoi(argv[1]) : 20;
	struct ipam_pool *p = NULL;
	uint32_t net, start, end, a;
	struct ipam_counts c;
	struct mallinfo2 before, after;
	double t0, fill = 0, churn = 0, rebuild = 0;
	size_t filled = 0, churned = 0;
	struct ipam_binding *b;

	ipv4_parse("10.20.0.0", &net);
	start = net;
	end = net + 0xffff;

	before = mallinfo2();
	if (ipam_pool_new(net, 16, start, end, net + 1, net + 1, NULL, 0, &p) < 0)
		return 1;
	after = mallinfo2();
	printf(
	    "pool /16 (65536 addresses): ipam_pool_memory = %zu bytes; heap growth = %zu bytes\n",
	    ipam_pool_memory(p), (size_t)(after.uordblks - before.uordblks));

	for (int r = 0; r < rounds; r++) {
		if (r > 0 && ipam_pool_rebuild(p, NULL, 0, NULL) < 0)
			return 1;
		t0 = now_sec();
		while (ipam_pool_allocate(p, &a) == 0)
			filled++;
		fill += now_sec() - t0;
	}
	ipam_pool_counts(p, &c);
	printf("fill a /16 (%u allocations x %d rounds): %.1f ns per allocation\n", c.used, rounds,
	    fill * 1e9 / (double)filled);

	/* Churn on a full pool: release a random used address, allocate the lowest free. */
	t0 = now_sec();
	for (int i = 0; i < 1000000; i++) {
		uint32_t x = start + 2 + (uint32_t)(rng() % (c.size - 3));

		if (ipam_pool_release(p, x) == 0 && ipam_pool_allocate(p, &a) == 0 && a == x)
			churned++;
	}
	churn = now_sec() - t0;
	printf("release random + allocate lowest on a full /16: %.1f ns per pair (%zu pairs)\n",
	    churn * 1e9 / (double)churned, churned);

	b = calloc(65000, sizeof(*b));
	if (!b)
		return 1;
	for (size_t i = 0; i < 65000; i++) {
		b[i].addr = start + 2 + (uint32_t)((i * 7919) % 65000);
		b[i].mac[0] = 2;
		b[i].mac[3] = (uint8_t)(i >> 16);
		b[i].mac[4] = (uint8_t)(i >> 8);
		b[i].mac[5] = (uint8_t)i;
	}
	t0 = now_sec();
	for (int r = 0; r < 10; r++)
		if (ipam_pool_rebuild(p, b, 65000, NULL) != 0)
			return 1;
	rebuild = (now_sec() - t0) / 10;
	printf("rebuild from 65000 bindings (conflict checks included): %.2f ms\n", rebuild * 1e3);
	free(b);
	ipam_pool_free(p);
	return 0;
}
