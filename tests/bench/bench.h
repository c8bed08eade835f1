/* SPDX-License-Identifier: Apache-2.0 */
/* tests/bench/: what the micro-benchmarks share (header only: each bench is one program). */
#ifndef VMDHCP_TESTS_BENCH_H
#define VMDHCP_TESTS_BENCH_H

#include <stdlib.h>
#include <time.h>

/* The monotonic clock in milliseconds. */
static inline double
bench_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* qsort() order of doubles. */
static inline int
bench_cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return a < b ? -1 : a > b;
}

#endif
