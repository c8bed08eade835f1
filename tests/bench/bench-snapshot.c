/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bench-snapshot: the agent's warm-start snapshot (agent/snapshot*.c) of a pool with 65 000
 * bindings. Medians over RUNS runs of agent_snapshot_encode (memory only), agent_snapshot_write
 * (encode, PATH.tmp, write, fsync, rename, fsync of the directory) and agent_snapshot_load +
 * agent_apply_config into a fresh engine (what a restarted agent does before it serves), for a
 * table without hostnames and one where every binding has one. `make bench-snapshot`.
 *
 * Usage: bench-snapshot [DIR [RUNS]]   DIR (default /tmp; a tmpfs measures the code, a disk
 * adds its fsync), RUNS (default 21). The last line is the parseable summary:
 *   bench-snapshot: bindings=65000 bytes=... write_ms=... load_apply_ms=... ...
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/apply-config.h"
#include "agent/pool-config.h"
#include "agent/snapshot.h"
#include "tests/bench/bench.h"

#define N_BINDINGS 65000
#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void
die(const char *what, int r, const char *err)
{
	fprintf(stderr, "bench-snapshot: %s: %s%s%s\n", what, strerror(-r), err ? ": " : "",
	    err ? err : "");
	exit(1);
}

/* A /16 pool with every option kind, like a real IPPool. */
static struct agent_config *
make_config(void)
{
	struct agent_config *c = calloc(1, sizeof(*c));
	struct dhcp_options *o;

	if (c == NULL)
		die("config", -ENOMEM, NULL);
	o = &c->opts;
	snprintf(c->pool_ns, sizeof(c->pool_ns), "default");
	snprintf(c->pool_name, sizeof(c->pool_name), "big");
	snprintf(c->network, sizeof(c->network), "default/big");
	c->cidr = IP(10, 70, 0, 0);
	c->prefix = 16;
	c->pool_start = IP(10, 70, 0, 10);
	c->pool_end = IP(10, 70, 255, 250);
	o->server_ip = IP(10, 70, 0, 1);
	o->prefix = 16;
	o->router = IP(10, 70, 0, 1);
	o->dns[0] = IP(10, 70, 0, 2);
	o->n_dns = 1;
	snprintf(o->domain_name, sizeof(o->domain_name), "example.org");
	snprintf(o->search[0], sizeof(o->search[0]), "example.org");
	o->n_search = 1;
	o->lease_time = 3600;
	return c;
}

/* The engine with N_BINDINGS bindings in a shuffled order (the encoder sorts them). */
static struct dhcp_server *
make_engine(const struct agent_config *c, bool hostnames)
{
	uint64_t rng = 88172645463325252ull;
	struct dhcp_server *s = NULL;
	unsigned *order = malloc(N_BINDINGS * sizeof(*order));
	int r;

	if (order == NULL || (r = dhcp_server_new(&s)) < 0 ||
	    (r = dhcp_server_set_options(s, &c->opts)) < 0)
		die("engine", order == NULL ? -ENOMEM : r, NULL);
	for (unsigned i = 0; i < N_BINDINGS; i++)
		order[i] = i;
	for (unsigned i = N_BINDINGS - 1; i > 0; i--) {
		unsigned j, t;

		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		j = (unsigned)(rng % (i + 1));
		t = order[i], order[i] = order[j], order[j] = t;
	}
	for (unsigned i = 0; i < N_BINDINGS; i++) {
		unsigned k = order[i];
		uint8_t mac[6] = {
		    0x52, 0x54, 0x01, (uint8_t)(k >> 16), (uint8_t)(k >> 8), (uint8_t)k};
		char name[32];

		snprintf(name, sizeof(name), "vm-%05u-default", k);
		r = dhcp_server_set_binding(s, mac, IP(10, 70, 0, 10) + k, hostnames ? name : NULL);
		if (r < 0)
			die("binding", r, NULL);
	}
	free(order);
	return s;
}

struct result {
	size_t bytes;
	double encode, write, load, apply, load_apply;
};

static void
run(const char *path, int runs, bool hostnames, struct result *res)
{
	struct agent_config *c = make_config();
	struct dhcp_server *s = make_engine(c, hostnames);
	double *enc = calloc((size_t)runs, sizeof(double)),
	       *wr = calloc((size_t)runs, sizeof(double));
	double *ld = calloc((size_t)runs, sizeof(double)),
	       *ap = calloc((size_t)runs, sizeof(double));
	double *la = calloc((size_t)runs, sizeof(double));
	char err[AGENT_ERR_MAX] = "";
	int r;

	if (enc == NULL || wr == NULL || ld == NULL || ap == NULL || la == NULL)
		die("alloc", -ENOMEM, NULL);
	for (int i = 0; i < runs; i++) {
		struct agent_snapshot_info info;
		struct agent_config *d = NULL;
		struct dhcp_server *fresh = NULL;
		uint8_t *buf = NULL;
		size_t len = 0;
		double t0, t1, t2;

		t0 = bench_now_ms();
		if ((r = agent_snapshot_encode(c, s, "123456", 1, &buf, &len)) < 0)
			die("encode", r, NULL);
		enc[i] = bench_now_ms() - t0;
		free(buf);

		t0 = bench_now_ms();
		if ((r = agent_snapshot_write(path, c, s, "123456", &info, err, sizeof(err))) < 0)
			die("write", r, err);
		wr[i] = bench_now_ms() - t0;
		res->bytes = info.bytes;

		t0 = bench_now_ms();
		if ((r = agent_snapshot_load(path, "default/big", &d, &info, err, sizeof(err))) < 0)
			die("load", r, err);
		t1 = bench_now_ms();
		if ((r = dhcp_server_new(&fresh)) < 0 ||
		    (r = agent_apply_config(fresh, d, NULL, err, sizeof(err))) < 0)
			die("apply", r, err);
		t2 = bench_now_ms();
		if (dhcp_server_n_bindings(fresh) != N_BINDINGS)
			die("apply", -EIO, "bindings missing");
		ld[i] = t1 - t0;
		ap[i] = t2 - t1;
		la[i] = t2 - t0;
		dhcp_server_free(fresh);
		agent_config_free(d);
	}
	res->encode = median(enc, runs);
	res->write = median(wr, runs);
	res->load = median(ld, runs);
	res->apply = median(ap, runs);
	res->load_apply = median(la, runs);
	printf("%-15s %9zu bytes  encode %7.2f ms  write %7.2f ms  load %7.2f ms  apply %7.2f ms"
	       "  load+apply %7.2f ms\n",
	    hostnames ? "hostnames:" : "no hostnames:", res->bytes, res->encode, res->write,
	    res->load, res->apply, res->load_apply);
	unlink(path);
	free(enc);
	free(wr);
	free(ld);
	free(ap);
	free(la);
	dhcp_server_free(s);
	agent_config_free(c);
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/tmp";
	int runs = argc > 2 ? atoi(argv[2]) : 21;
	struct result plain, named;
	char path[4096];

	if (runs < 1)
		runs = 1;
	snprintf(path, sizeof(path), "%s/bench-snapshot.%ld", dir, (long)getpid());
	printf(
	    "bench-snapshot: %d bindings, medians of %d runs, file %s\n", N_BINDINGS, runs, path);
	run(path, runs, false, &plain);
	run(path, runs, true, &named);
	printf("bench-snapshot: bindings=%d runs=%d bytes=%zu encode_ms=%.2f write_ms=%.2f "
	       "load_ms=%.2f apply_ms=%.2f load_apply_ms=%.2f hostnames_bytes=%zu "
	       "hostnames_write_ms=%.2f hostnames_load_apply_ms=%.2f\n",
	    N_BINDINGS, runs, plain.bytes, plain.encode, plain.write, plain.load, plain.apply,
	    plain.load_apply, named.bytes, named.write, named.load_apply);
	return 0;
}
