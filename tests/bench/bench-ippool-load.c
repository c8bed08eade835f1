/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-ippool-load FILE [REPS]: decode an IPPool JSON text into struct ippool two ways:
 * json_loadb then ippool_decode (a jansson tree of the whole object), and ippool_decode_text
 * (the agent informer's codec: status.ipv4.allocated parsed straight into its entries).
 * Prints for each the median times over REPS runs and the heap: the peak from the text to
 * the struct (the tree's, for json_loadb), and what the struct ippool holds after it.
 * The heap is counted by this program's own malloc family (usable sizes, glibc), which
 * jansson's allocations go through too. The text itself is not counted.
 */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "crds/ippool.h"
#include "lib/util.h"
#include "tests/bench/bench.h"

/* --- heap accounting ---------------------------------------------------------------------- */

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static long long heap_cur, heap_peak;

static void
account(void *p, long long sign)
{
	if (!p)
		return;
	heap_cur += sign * (long long)malloc_usable_size(p);
	if (heap_cur > heap_peak)
		heap_peak = heap_cur;
}

void *
malloc(size_t n)
{
	void *p = __libc_malloc(n);

	account(p, 1);
	return p;
}

void *
calloc(size_t n, size_t size)
{
	void *p = __libc_calloc(n, size);

	account(p, 1);
	return p;
}

void *
realloc(void *p, size_t n)
{
	void *q;

	account(p, -1);
	q = __libc_realloc(p, n);
	account(q ? q : p, 1);
	return q;
}

void
free(void *p)
{
	account(p, -1);
	__libc_free(p);
}

/* --- the runs ---------------------------------------------------------------------------- */

static void
report(const char *name, size_t n_alloc, double *t_a, double *t_b, int reps, long long peak,
    long long held)
{
	qsort(t_a, (size_t)reps, sizeof(double), bench_cmp_double);
	if (t_b) {
		qsort(t_b, (size_t)reps, sizeof(double), bench_cmp_double);
		printf("%-26s %zu entries: load %.2f ms + decode %.2f ms (medians of %d); heap peak"
		       " %.2f MiB, held by the pool %.2f MiB\n",
		    name, n_alloc, t_a[reps / 2], t_b[reps / 2], reps, (double)peak / 1048576.0,
		    (double)held / 1048576.0);
	} else {
		printf("%-26s %zu entries: decode %.2f ms (median of %d); heap peak %.2f MiB,"
		       " held by the pool %.2f MiB\n",
		    name, n_alloc, t_a[reps / 2], reps, (double)peak / 1048576.0,
		    (double)held / 1048576.0);
	}
}

/* json_loadb, then ippool_decode of the tree. */
static int
run_json(const char *text, size_t len, int reps)
{
	double *t_load = calloc((size_t)reps, sizeof(double));
	double *t_dec = calloc((size_t)reps, sizeof(double));
	long long peak = 0, held = 0;
	size_t n_alloc = 0;

	if (!t_load || !t_dec)
		return -ENOMEM;
	for (int i = 0; i < reps; i++) {
		long long base = heap_cur;
		struct ippool *p = NULL;
		struct crd_error err;
		json_error_t jerr;
		json_t *j;
		double t0, t1, t2;

		heap_peak = heap_cur;
		t0 = bench_now_ms();
		j = json_loadb(text, len, 0, &jerr);
		t1 = bench_now_ms();
		if (!j) {
			fprintf(stderr, "json_loadb: %s\n", jerr.text);
			return -EINVAL;
		}
		if (ippool_decode(j, &p, &err) < 0) {
			fprintf(stderr, "ippool_decode: %s\n", err.message);
			return -EINVAL;
		}
		t2 = bench_now_ms();
		json_decref(j);
		peak = heap_peak - base;
		held = heap_cur - base;
		n_alloc = p->status.n_allocated;
		t_load[i] = t1 - t0;
		t_dec[i] = t2 - t1;
		ippool_free(p);
	}
	report("json_loadb + ippool_decode", n_alloc, t_load, t_dec, reps, peak, held);
	free(t_load);
	free(t_dec);
	return 0;
}

static int
run_text(const char *text, size_t len, int reps)
{
	double *t = calloc((size_t)reps, sizeof(double));
	long long peak = 0, held = 0;
	size_t n_alloc = 0;

	if (!t)
		return -ENOMEM;
	for (int i = 0; i < reps; i++) {
		long long base = heap_cur;
		struct ippool *p = NULL;
		struct crd_error err;
		double t0;

		heap_peak = heap_cur;
		t0 = bench_now_ms();
		if (ippool_decode_text(text, len, &p, &err) < 0) {
			fprintf(stderr, "ippool_decode_text: %s\n", err.message);
			return -EINVAL;
		}
		t[i] = bench_now_ms() - t0;
		peak = heap_peak - base;
		held = heap_cur - base;
		n_alloc = p->status.n_allocated;
		ippool_free(p);
	}
	report("ippool_decode_text", n_alloc, t, NULL, reps, peak, held);
	free(t);
	return 0;
}

int
main(int argc, char **argv)
{
	int reps = argc > 2 ? atoi(argv[2]) : 11;
	char *text;
	size_t len;

	if (argc < 2 || reps < 1) {
		fprintf(stderr, "usage: bench-ippool-load FILE [REPS]\n");
		return 2;
	}
	if (read_file(argv[1], 256u << 20, &text, &len) < 0) {
		fprintf(stderr, "bench-ippool-load: cannot read %s\n", argv[1]);
		return 1;
	}
	printf("%s: %zu bytes\n", argv[1], len);
	if (run_json(text, len, reps) < 0 || run_text(text, len, reps) < 0) {
		free(text);
		return 1;
	}
	free(text);
	return 0;
}
