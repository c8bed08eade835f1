/* SPDX-License-Identifier: Apache-2.0 */
/* lib/: bounded buffers, flags, the hash map, MAC/IPv4 parsing, RFC 3339 times, metrics rendering
 * (values, build info, process metrics, families shared by constant labels, dynamic series), atomic
 * files.
 *
 * Size: about 1000 lines, one file on purpose: lib/'s small utilities in one binary (one short
 * suite each) rather than one binary per utility.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "lib/buf.h"
#include "lib/flags.h"
#include "lib/hmap.h"
#include "lib/httpd.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/rfc3339.h"
#include "lib/util.h"
#include "tests/runner.h"

static void
test_reader_bounds(void)
{
	static const uint8_t data[] = {0x01, 0x02, 0x03, 0x04, 0x05};
	struct buf_reader r = buf_reader_init(data, sizeof(data));
	uint32_t v32 = 0;
	uint16_t v16 = 0;
	uint8_t v8 = 0;

	CU_ASSERT_EQUAL(buf_get_be32(&r, &v32), 0);
	CU_ASSERT_EQUAL(v32, 0x01020304u);
	CU_ASSERT_EQUAL(buf_get_be16(&r, &v16), -EBADMSG);
	CU_ASSERT_EQUAL(r.left, 1u); /* unchanged by the failed read */
	CU_ASSERT_EQUAL(buf_get_u8(&r, &v8), 0);
	CU_ASSERT_EQUAL(v8, 5);
	CU_ASSERT_EQUAL(buf_get_u8(&r, &v8), -EBADMSG);
	CU_ASSERT_EQUAL(buf_skip(&r, 1), -EBADMSG);
}

static void
test_writer_overflow(void)
{
	uint8_t out[6];
	struct buf_writer w = buf_writer_init(out, sizeof(out));

	buf_put_be32(&w, 0xdeadbeef);
	buf_put_be16(&w, 0x0102);
	CU_ASSERT_FALSE(w.overflow);
	CU_ASSERT_EQUAL(w.len, 6u);
	buf_put_u8(&w, 7);
	CU_ASSERT_TRUE(w.overflow);
	CU_ASSERT_EQUAL(w.len, 6u);
	CU_ASSERT_EQUAL(out[0], 0xde);
	CU_ASSERT_EQUAL(out[5], 0x02);
}

static void
test_mac(void)
{
	char out[MAC_STRLEN];
	uint8_t mac[6];

	CU_ASSERT_EQUAL(mac_canonicalize("AA:BB:cc:01:02:0F", out), 0);
	CU_ASSERT_STRING_EQUAL(out, "aa:bb:cc:01:02:0f");
	CU_ASSERT_EQUAL(mac_canonicalize("aa-bb-cc-01-02-0f", out), 0);
	CU_ASSERT_STRING_EQUAL(out, "aa:bb:cc:01:02:0f");
	CU_ASSERT_EQUAL(mac_canonicalize("aabb.cc01.020f", out), 0);
	CU_ASSERT_STRING_EQUAL(out, "aa:bb:cc:01:02:0f");
	CU_ASSERT_EQUAL(mac_parse("aa:bb:cc:01:02", mac), -EINVAL);
	CU_ASSERT_EQUAL(mac_parse("aa:bb-cc:01:02:0f", mac), -EINVAL);
	CU_ASSERT_EQUAL(mac_parse("aa:bb:cc:01:02:0g", mac), -EINVAL);
	CU_ASSERT_EQUAL(mac_parse("", mac), -EINVAL);
}

static void
test_ipv4(void)
{
	char out[IPV4_STRLEN];
	uint32_t a = 0;
	unsigned p = 0;

	CU_ASSERT_EQUAL(ipv4_parse("10.0.255.1", &a), 0);
	CU_ASSERT_EQUAL(a, 0x0a00ff01u);
	ipv4_format(a, out);
	CU_ASSERT_STRING_EQUAL(out, "10.0.255.1");
	/* every digit count, and the longest form fills IPV4_STRLEN exactly */
	ipv4_format(0, out);
	CU_ASSERT_STRING_EQUAL(out, "0.0.0.0");
	ipv4_format(0xffffffffu, out);
	CU_ASSERT_STRING_EQUAL(out, "255.255.255.255");
	CU_ASSERT_EQUAL(strlen(out) + 1, IPV4_STRLEN);
	ipv4_format(0x640a0963u, out);
	CU_ASSERT_STRING_EQUAL(out, "100.10.9.99");
	for (uint32_t v = 0; v < 256; v++) {
		char want[IPV4_STRLEN];

		snprintf(want, sizeof(want), "%u.%u.1.%u", v, 255 - v, v);
		ipv4_format(v << 24 | (255 - v) << 16 | 1u << 8 | v, out);
		CU_ASSERT_STRING_EQUAL(out, want);
	}
	CU_ASSERT_EQUAL(ipv4_parse("256.0.0.1", &a), -EINVAL);
	CU_ASSERT_EQUAL(ipv4_parse("10.0.0", &a), -EINVAL);
	CU_ASSERT_EQUAL(ipv4_parse("10.0.0.1.", &a), -EINVAL);
	CU_ASSERT_EQUAL(ipv4_parse("010.0.0.1", &a), -EINVAL);
	CU_ASSERT_EQUAL(ipv4_parse(" 10.0.0.1", &a), -EINVAL);
	CU_ASSERT_EQUAL(ipv4_cidr_parse("192.168.0.0/16", &a, &p), 0);
	CU_ASSERT_EQUAL(a, 0xc0a80000u);
	CU_ASSERT_EQUAL(p, 16u);
	CU_ASSERT_EQUAL(ipv4_cidr_parse("192.168.0.0/33", &a, &p), -EINVAL);
	CU_ASSERT_EQUAL(ipv4_cidr_parse("192.168.0.0", &a, &p), -EINVAL);
	CU_ASSERT_EQUAL(ipv4_cidr_parse("192.168.0.0/", &a, &p), -EINVAL);
	CU_ASSERT_EQUAL(ipv4_prefix_mask(24), 0xffffff00u);
	CU_ASSERT_EQUAL(ipv4_prefix_mask(0), 0u);
}

static const char *const kinds[] = {"discover", "request"};
static const double bounds[] = {0.001, 0.01};

static void
test_metrics_render(void)
{
	struct metrics *m = NULL;
	char *text = NULL;

	CU_ASSERT_EQUAL_FATAL(metrics_new(&m), 0);
	struct metric *c = metrics_add(
	    m, METRIC_COUNTER, "x_packets_total", "Packets.", "type", kinds, 2, NULL, 0);
	struct metric *g = metrics_add_simple(m, METRIC_GAUGE, "x_bindings", "Bindings.");
	struct metric *h = metrics_add(
	    m, METRIC_HISTOGRAM, "x_latency_seconds", "Latency.", NULL, NULL, 0, bounds, 2);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_PTR_NULL(metrics_add(m, METRIC_COUNTER, "bad", "x", "type", NULL, 0, NULL, 0));
	metric_inc(c, 1);
	metric_inc(c, 1);
	metric_inc(c, 5); /* out of range: ignored */
	metric_set(g, 0, 42);
	metric_observe(h, 0, 0.0005);
	metric_observe(h, 0, 0.5);
	CU_ASSERT_EQUAL(metrics_render(m, &text, NULL), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "# TYPE x_packets_total counter\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_packets_total{type=\"discover\"} 0\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_packets_total{type=\"request\"} 2\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_bindings 42\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_latency_seconds_bucket{le=\"0.001\"} 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_latency_seconds_bucket{le=\"0.01\"} 1\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_latency_seconds_bucket{le=\"+Inf\"} 2\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_latency_seconds_count 2\n"));
	CU_ASSERT_EQUAL(metric_hist_count(h, 0), 2u);
	free(text);
	metrics_free(m);
}

/* The text after "name " on the line of that series in a rendering, or NULL. */
static const char *
series(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, name, n) == 0 && p[n] == ' ')
			return p + n + 1;
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return NULL;
}

/* Each value is written so that it reads back as the same double: a Unix time in ms is not
 * rounded to 10 s ("%.9g" did), integers up to 2^63 carry no exponent. */
static void
test_metrics_values_round_trip(void)
{
	static const struct {
		double v;
		const char *want; /* NULL: any text that reads back as v */
	} cases[] = {
	    {1764072000.123, "1764072000.123"},
	    {9007199254740992.0, "9007199254740992"},	/* 2^53 */
	    {18014398509481988.0, "18014398509481988"}, /* 2^54 + 4 */
	    {-42, "-42"},
	    {-0.0, "0"},
	    {0.1, "0.1"},
	    {1.0 / 3, NULL},
	    {1e-7, "1e-07"},
	    {5e-324, NULL},
	    {1.7976931348623157e308, NULL},
	    {0x1p63, NULL},
	    {123456789.987654321, NULL},
	};
	struct metrics *m = NULL;
	struct metric *g;
	char *text = NULL, *end;
	const char *v;

	CU_ASSERT_EQUAL_FATAL(metrics_new(&m), 0);
	g = metrics_add_simple(m, METRIC_GAUGE, "x_value", "A value.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		metric_set(g, 0, cases[i].v);
		CU_ASSERT_EQUAL_FATAL(metrics_render(m, &text, NULL), 0);
		v = series(text, "x_value");
		CU_ASSERT_PTR_NOT_NULL_FATAL(v);
		CU_ASSERT_EQUAL(strtod(v, &end), cases[i].v);
		CU_ASSERT_EQUAL(*end, '\n');
		if (cases[i].want != NULL) {
			CU_ASSERT_EQUAL(strncmp(v, cases[i].want, strlen(cases[i].want)), 0);
			CU_ASSERT_EQUAL(v[strlen(cases[i].want)], '\n');
		}
		if (strtod(v, NULL) != cases[i].v ||
		    (cases[i].want != NULL &&
			strncmp(v, cases[i].want, strlen(cases[i].want)) != 0))
			fprintf(stderr, "%.17g written as %.*s\n", cases[i].v,
			    (int)strcspn(v, "\n"), v);
		free(text);
	}
	/* what Prometheus wants for the special values */
	metric_set(g, 0, INFINITY);
	CU_ASSERT_EQUAL_FATAL(metrics_render(m, &text, NULL), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_value +Inf\n"));
	free(text);
	metric_set(g, 0, -INFINITY);
	CU_ASSERT_EQUAL_FATAL(metrics_render(m, &text, NULL), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_value -Inf\n"));
	free(text);
	metric_set(g, 0, NAN);
	CU_ASSERT_EQUAL_FATAL(metrics_render(m, &text, NULL), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_value NaN\n"));
	free(text);
	metrics_free(m);
}

static void
test_metrics_build_info(void)
{
	struct metrics *m = NULL;
	char *text = NULL, big[300];

	CU_ASSERT_EQUAL_FATAL(metrics_new(&m), 0);
	CU_ASSERT_PTR_NOT_NULL(metrics_add_build_info(m, "0.1.0", "ab\"c\\d\ne"));
	/* labels that would not fit are refused, not cut */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CU_ASSERT_PTR_NULL(metrics_add_build_info(m, big, "r"));
	CU_ASSERT_EQUAL_FATAL(metrics_render(m, &text, NULL), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "# TYPE vmdhcp_build_info gauge\n"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "vmdhcp_build_info{version=\"0.1.0\",revision=\"ab\\\"c\\\\d\\ne\"} 1\n"));
	CU_ASSERT_PTR_NULL(strstr(text, "xxx"));
	free(text);
	metrics_free(m);
}

/* From /proc/self at render time: present, typed, and plausible for this process. */
static void
test_metrics_process(void)
{
	struct metrics *m = NULL;
	char *text = NULL;
	const char *v;
	double rss, vsz, fds, max_fds, start, cpu;
	int fd;

	CU_ASSERT_EQUAL_FATAL(metrics_new(&m), 0);
	CU_ASSERT_EQUAL_FATAL(metrics_add_process(m), 0);
	CU_ASSERT_EQUAL_FATAL(metrics_render(m, &text, NULL), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "# TYPE process_cpu_seconds_total counter\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "# TYPE process_resident_memory_bytes gauge\n"));
	v = series(text, "process_cpu_seconds_total");
	cpu = v != NULL ? strtod(v, NULL) : -1;
	v = series(text, "process_resident_memory_bytes");
	rss = v != NULL ? strtod(v, NULL) : -1;
	v = series(text, "process_virtual_memory_bytes");
	vsz = v != NULL ? strtod(v, NULL) : -1;
	v = series(text, "process_open_fds");
	fds = v != NULL ? strtod(v, NULL) : -1;
	v = series(text, "process_max_fds");
	max_fds = v != NULL ? strtod(v, NULL) : -1;
	v = series(text, "process_start_time_seconds");
	start = v != NULL ? strtod(v, NULL) : -1;
	free(text);
	CU_ASSERT_TRUE(cpu >= 0);
	CU_ASSERT_TRUE(rss > 0);
	CU_ASSERT_TRUE(vsz >= rss);
	CU_ASSERT_TRUE(fds >= 3); /* stdin, stdout, stderr at least */
	CU_ASSERT_TRUE(max_fds >= fds);
	/* this process started within the last day, not in the future */
	CU_ASSERT_TRUE(start > (double)time(NULL) - 86400);
	CU_ASSERT_TRUE(start <= (double)time(NULL) + 1);
	/* scrape time, not registration time: one more descriptor is seen at once */
	fd = dup(0);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL_FATAL(metrics_render(m, &text, NULL), 0);
	v = series(text, "process_open_fds");
	CU_ASSERT_TRUE(v != NULL && strtod(v, NULL) == fds + 1);
	free(text);
	close(fd);
	metrics_free(m);
}

/* `promtool check metrics` accepts text (true when promtool is not installed). */
static bool
promtool_accepts(const char *text)
{
	char path[64], cmd[128];
	FILE *f;
	int rc;

	if (access("/usr/bin/promtool", X_OK) != 0)
		return true;
	snprintf(path, sizeof(path), "/tmp/%ld-vmdhcp-test-lib.prom", (long)getpid());
	f = fopen(path, "w");
	if (f == NULL)
		return false;
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "/usr/bin/promtool check metrics <%s >&2", path);
	rc = system(cmd);
	unlink(path);
	return rc == 0;
}

/* Occurrences of needle in text. */
static int
count_of(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

static const char *const results[] = {"success", "error", "requeue"};
static const double time_bounds[] = {0.25, 1};

/* One family from several registrations told apart by a constant label (one per controller),
 * rendered together under one HELP/TYPE even when registered apart; histogram sums in the
 * unit observed (seconds), not rounded. */
static void
test_metrics_const_label_families(void)
{
	struct metrics *m = NULL;
	struct metric *a, *b, *c, *h1, *h2;
	const char *p_last, *p_other;
	char *text = NULL;
	uint64_t counts[3] = {1, 0, 1};

	CU_ASSERT_EQUAL_FATAL(metrics_new(&m), 0);
	a = metrics_add_const(m, METRIC_COUNTER, "x_reconcile_total", "Reconciles.", "controller",
	    "ippool", "result", results, 3, NULL, 0);
	b = metrics_add_const(m, METRIC_COUNTER, "x_reconcile_total", "Reconciles.", "controller",
	    "v\"m\\x", "result", results, 3, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL(metrics_add_simple(m, METRIC_GAUGE, "x_other", "Other."));
	h1 = metrics_add_const(m, METRIC_HISTOGRAM, "x_time_seconds", "Time.", "controller",
	    "ippool", NULL, NULL, 0, time_bounds, 2);
	h2 = metrics_add_const(m, METRIC_HISTOGRAM, "x_time_seconds", "Time.", "controller", "vm",
	    NULL, NULL, 0, time_bounds, 2);
	/* registered after x_other: still rendered with its family */
	c = metrics_add_const(m, METRIC_COUNTER, "x_reconcile_total", "Reconciles.", "controller",
	    "vmnetcfg", "result", results, 3, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h2);
	/* the same series twice, another type under a taken name, a bare duplicate */
	errno = 0;
	CU_ASSERT_PTR_NULL(metrics_add_const(m, METRIC_COUNTER, "x_reconcile_total", "R.",
	    "controller", "ippool", "result", results, 3, NULL, 0));
	CU_ASSERT_EQUAL(errno, EEXIST);
	errno = 0;
	CU_ASSERT_PTR_NULL(metrics_add_const(m, METRIC_GAUGE, "x_reconcile_total", "R.",
	    "controller", "vmx", NULL, NULL, 0, NULL, 0));
	CU_ASSERT_EQUAL(errno, EINVAL);
	errno = 0;
	CU_ASSERT_PTR_NULL(metrics_add_simple(m, METRIC_GAUGE, "x_other", "Other."));
	CU_ASSERT_EQUAL(errno, EEXIST);
	CU_ASSERT_PTR_NULL(metrics_add_const(
	    m, METRIC_COUNTER, "x_y", "Y.", "controller", NULL, NULL, NULL, 0, NULL, 0));

	metric_inc(a, 0);
	metric_inc(c, 2);
	metric_inc(c, 2);
	metric_observe(h1, 0, 0.125);
	metric_observe(h1, 0, 0.25);
	metric_observe(h1, 0, 3);
	CU_ASSERT_EQUAL(metric_hist_set(h2, 0, counts, 3, 2.0625), 0);
	CU_ASSERT_EQUAL_FATAL(metrics_render(m, &text, NULL), 0);
	CU_ASSERT_EQUAL(count_of(text, "# TYPE x_reconcile_total counter\n"), 1);
	CU_ASSERT_EQUAL(count_of(text, "# HELP x_reconcile_total "), 1);
	CU_ASSERT_EQUAL(count_of(text, "# TYPE x_time_seconds histogram\n"), 1);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "x_reconcile_total{controller=\"ippool\",result=\"success\"} 1\n"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "x_reconcile_total{controller=\"v\\\"m\\\\x\",result=\"error\"} 0\n"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "x_reconcile_total{controller=\"vmnetcfg\",result=\"requeue\"} 2\n"));
	/* the family is contiguous: its last series comes before the next family */
	p_last = strstr(text, "x_reconcile_total{controller=\"vmnetcfg\"");
	p_other = strstr(text, "# HELP x_other ");
	CU_ASSERT_TRUE(p_last != NULL && p_other != NULL && p_last < p_other);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "x_time_seconds_bucket{controller=\"ippool\",le=\"0.25\"} 2\n"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "x_time_seconds_bucket{controller=\"ippool\",le=\"+Inf\"} 3\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_time_seconds_sum{controller=\"ippool\"} 3.375\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_time_seconds_count{controller=\"ippool\"} 3\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_time_seconds_sum{controller=\"vm\"} 2.0625\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_time_seconds_count{controller=\"vm\"} 2\n"));
	CU_ASSERT_TRUE(promtool_accepts(text));
	free(text);
	metrics_free(m);
}

struct dyn_pools {
	size_t n;
	const char *names[3];
	double used[3];
	int calls;
};

static void
emit_dyn_pools(struct metric_emitter *e, void *userdata)
{
	struct dyn_pools *d = userdata;

	d->calls++;
	for (size_t i = 0; i < d->n; i++) {
		struct metric_label l[] = {{"pool", d->names[i]}, {"state", "allocated"}};

		metric_emit(e, l, 2, d->used[i]);
	}
}

/* Series that come and go: written by a callback at each render, escaped; a family with no
 * series is left out entirely (no HELP/TYPE), the others are unaffected. */
static void
test_metrics_dynamic_series(void)
{
	struct dyn_pools d = {.n = 2, .names = {"net-1", "we\"ird\\\n"}, .used = {3, 0.5}};
	struct metrics *m = NULL;
	struct metric *g;
	char *text = NULL;

	CU_ASSERT_EQUAL_FATAL(metrics_new(&m), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(metrics_add_dynamic(
	    m, METRIC_GAUGE, "x_pool_used", "Used per pool.", emit_dyn_pools, &d));
	g = metrics_add_simple(m, METRIC_GAUGE, "x_leader", "Leader.");
	CU_ASSERT_PTR_NOT_NULL_FATAL(g);
	metric_set(g, 0, 1);
	/* no histograms, no second family under the name, either way round */
	CU_ASSERT_PTR_NULL(
	    metrics_add_dynamic(m, METRIC_HISTOGRAM, "x_h", "H.", emit_dyn_pools, &d));
	CU_ASSERT_PTR_NULL(
	    metrics_add_dynamic(m, METRIC_GAUGE, "x_pool_used", "U.", emit_dyn_pools, &d));
	CU_ASSERT_PTR_NULL(
	    metrics_add_dynamic(m, METRIC_GAUGE, "x_leader", "U.", emit_dyn_pools, &d));
	CU_ASSERT_PTR_NULL(metrics_add_const(
	    m, METRIC_GAUGE, "x_pool_used", "U.", "pool", "a", NULL, NULL, 0, NULL, 0));
	CU_ASSERT_PTR_NULL(metrics_add_dynamic(m, METRIC_GAUGE, "x_n", "N.", NULL, NULL));

	CU_ASSERT_EQUAL_FATAL(metrics_render(m, &text, NULL), 0);
	CU_ASSERT_EQUAL(d.calls, 1);
	CU_ASSERT_EQUAL(count_of(text, "# TYPE x_pool_used gauge\n"), 1);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_pool_used{pool=\"net-1\",state=\"allocated\"} 3\n"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "x_pool_used{pool=\"we\\\"ird\\\\\\n\",state=\"allocated\"} 0.5\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nx_leader 1\n"));
	CU_ASSERT_TRUE(promtool_accepts(text));
	free(text);

	/* one pool gone: its series with it */
	d.n = 1;
	CU_ASSERT_EQUAL_FATAL(metrics_render(m, &text, NULL), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "x_pool_used{pool=\"net-1\",state=\"allocated\"} 3\n"));
	CU_ASSERT_PTR_NULL(strstr(text, "we\\\"ird"));
	free(text);

	/* none: the family is not there at all */
	d.n = 0;
	CU_ASSERT_EQUAL_FATAL(metrics_render(m, &text, NULL), 0);
	CU_ASSERT_PTR_NULL(strstr(text, "x_pool_used"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "# TYPE x_leader gauge\nx_leader 1\n"));
	CU_ASSERT_TRUE(promtool_accepts(text));
	free(text);
	CU_ASSERT_EQUAL(d.calls, 3);
	metrics_free(m);
}

static void
test_atomic_file(void)
{
	char dir[] = "/tmp/vmdhcp-test-XXXXXX";
	char path[64], *data = NULL;
	size_t len = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	CU_ASSERT_EQUAL(write_file_atomic(path, "one\n", 4, 0600), 0);
	CU_ASSERT_EQUAL(write_file_atomic(path, "two!\n", 5, 0600), 0);
	CU_ASSERT_EQUAL(read_file(path, 1 << 20, &data, &len), 0);
	CU_ASSERT_EQUAL(len, 5u);
	CU_ASSERT_STRING_EQUAL(data, "two!\n");
	free(data);
	CU_ASSERT_EQUAL(read_file(path, 2, &data, &len), -EFBIG);
	CU_ASSERT_EQUAL(read_file("/nonexistent/x", 100, &data, &len), -ENOENT);
	unlink(path);
	rmdir(dir);
}

/* Decimal seconds: the form both programs' duration flags take. */
static void
test_parse_seconds(void)
{
	uint64_t v = 0;

	CU_ASSERT_EQUAL(parse_seconds_usec("2", 3, 3600000000u, &v), 0);
	CU_ASSERT_EQUAL(v, 2000000);
	CU_ASSERT_EQUAL(parse_seconds_usec("1.5", 3, 3600000000u, &v), 0);
	CU_ASSERT_EQUAL(v, 1500000);
	CU_ASSERT_EQUAL(parse_seconds_usec("0.025", 3, 3600000000u, &v), 0);
	CU_ASSERT_EQUAL(v, 25000);
	CU_ASSERT_EQUAL(parse_seconds_usec("0.000001", 6, 3600000000u, &v), 0);
	CU_ASSERT_EQUAL(v, 1);
	CU_ASSERT_EQUAL(parse_seconds_usec("0", 3, 3600000000u, &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	CU_ASSERT_EQUAL(parse_seconds_usec("3600", 3, 3600000000u, &v), 0);
	/* too many decimals for the caller, or beyond microseconds */
	CU_ASSERT_EQUAL(parse_seconds_usec("0.0001", 3, 3600000000u, &v), -EINVAL);
	CU_ASSERT_EQUAL(parse_seconds_usec("0.0000001", 9, 3600000000u, &v), -EINVAL);
	/* not the form */
	static const char *const bad[] = {"", ".5", "1.", "2s", "-1", "1.5.", " 1", "1e3", "0x10"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(parse_seconds_usec(bad[i], 3, 3600000000u, &v), -EINVAL);
	CU_ASSERT_EQUAL(parse_seconds_usec(NULL, 3, 3600000000u, &v), -EINVAL);
	/* over the bound, including digits that would overflow */
	CU_ASSERT_EQUAL(parse_seconds_usec("3600.001", 3, 3600000000u, &v), -ERANGE);
	CU_ASSERT_EQUAL(parse_seconds_usec("3601", 3, 3600000000u, &v), -ERANGE);
	CU_ASSERT_EQUAL(parse_seconds_usec("99999999999999999999999", 3, 3600000000u, &v), -ERANGE);
}

static void
test_parse_uint(void)
{
	uint64_t v = 0;

	CU_ASSERT_EQUAL(parse_uint("3600", 60, 100000, &v), 0);
	CU_ASSERT_EQUAL(v, 3600u);
	CU_ASSERT_EQUAL(parse_uint("59", 60, 100000, &v), -ERANGE);
	CU_ASSERT_EQUAL(parse_uint("12a", 0, 100, &v), -EINVAL);
	CU_ASSERT_EQUAL(parse_uint("", 0, 100, &v), -EINVAL);
	CU_ASSERT_EQUAL(parse_uint("99999999999999999999999", 0, UINT64_MAX, &v), -ERANGE);
}

static void
test_ratelimit(void)
{
	struct log_ratelimit rl = LOG_RATELIMIT_INIT(1000000, 2);
	enum log_level saved = log_get_level();

	log_set_level(LOG_LEVEL_ERROR); /* keep the test quiet; counting still happens */
	log_set_level(LOG_LEVEL_WARN);
	CU_ASSERT_EQUAL(log_ratelimited(&rl, 10, LOG_LEVEL_WARN, "a"), 1);
	CU_ASSERT_EQUAL(log_ratelimited(&rl, 20, LOG_LEVEL_WARN, "b"), 1);
	CU_ASSERT_EQUAL(log_ratelimited(&rl, 30, LOG_LEVEL_WARN, "c"), 0);
	CU_ASSERT_EQUAL(rl.suppressed, 1u);
	CU_ASSERT_EQUAL(log_ratelimited(&rl, 2000000, LOG_LEVEL_WARN, "d"), 1);
	CU_ASSERT_EQUAL(rl.suppressed, 0u);
	log_set_level(saved);
}

static void
test_httpd_listen(void)
{
	struct event_base *base = event_base_new();
	struct httpd *h = NULL, *h2 = NULL;
	char addr[32];

	CU_ASSERT_PTR_NOT_NULL_FATAL(base);
	CU_ASSERT_EQUAL(httpd_new(base, "127.0.0.1:0", NULL, &h), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(h);
	CU_ASSERT_TRUE(httpd_port(h) > 0);
	/* the same port again: in use, said as such */
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", httpd_port(h));
	CU_ASSERT_EQUAL(httpd_new(base, addr, NULL, &h2), -EADDRINUSE);
	CU_ASSERT_EQUAL(httpd_new(base, "nonsense", NULL, &h2), -EINVAL);
	CU_ASSERT_EQUAL(httpd_new(base, "127.0.0.1:99999", NULL, &h2), -EINVAL);
	CU_ASSERT_EQUAL(httpd_new(base, "example.org:80", NULL, &h2), -EINVAL);
	CU_ASSERT_EQUAL(httpd_new(base, "[::1:80", NULL, &h2), -EINVAL);
	CU_ASSERT_PTR_NULL(h2);
	httpd_free(h);
	event_base_free(base);
}

static void
test_rfc3339(void)
{
	static const struct {
		const char *s;
		int64_t usec;
	} good[] = {
	    {"1970-01-01T00:00:00Z", 0},
	    {"2023-11-14T22:13:20Z", INT64_C(1700000000000000)},
	    {"2023-11-14T22:13:20.123456Z", INT64_C(1700000000123456)},
	    {"2023-11-14T22:13:20.1234567891Z", INT64_C(1700000000123456)}, /* truncated */
	    {"2023-11-14T22:13:20.5z", INT64_C(1700000000500000)},
	    {"2023-11-14t23:13:20+01:00", INT64_C(1700000000000000)},
	    {"2023-11-14T21:43:20-00:30", INT64_C(1700000000000000)},
	    {"2024-02-29T00:00:00Z", INT64_C(1709164800000000)},
	    {"2016-12-31T23:59:60Z", INT64_C(1483228800000000)}, /* leap second: the next one */
	    {"1969-12-31T23:59:59.5Z", INT64_C(-500000)},
	    {"0000-01-01T00:00:00Z", INT64_C(-62167219200000000)},
	    {"9999-12-31T23:59:59Z", INT64_C(253402300799000000)},
	};
	static const char *const bad[] = {
	    "",
	    "2023-11-14",
	    "2023-11-14 22:13:20Z",
	    "2023-11-14T22:13:20",
	    "2023-11-14T22:13:20ZZ",
	    "2023-11-14T22:13:20.Z",
	    "2023-1-14T22:13:20Z",
	    " 2023-11-14T22:13:20Z",
	    "2023-13-14T22:13:20Z",
	    "2023-00-14T22:13:20Z",
	    "2023-02-29T00:00:00Z",
	    "2100-02-29T00:00:00Z",
	    "2023-04-31T00:00:00Z",
	    "2023-11-14T24:00:00Z",
	    "2023-11-14T22:60:00Z",
	    "2023-11-14T22:13:61Z",
	    "2023-11-14T22:13:20+1:00",
	    "2023-11-14T22:13:20+24:00",
	    "2023-11-14T22:13:20+01:60",
	    "2023-11-14T22:13:20+0100",
	    "2023-11-14T22:13:20+01:00x",
	    "+023-11-14T22:13:20Z",
	};
	char out[RFC3339_MAX];
	int64_t v;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		v = -1;
		CU_ASSERT_EQUAL(rfc3339_parse(good[i].s, &v), 0);
		if (v != good[i].usec)
			fprintf(stderr, "%s: %lld, want %lld\n", good[i].s, (long long)v,
			    (long long)good[i].usec);
		CU_ASSERT_EQUAL(v, good[i].usec);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (rfc3339_parse(bad[i], &v) != -EINVAL)
			fprintf(stderr, "accepted: \"%s\"\n", bad[i]);
		CU_ASSERT_EQUAL(rfc3339_parse(bad[i], &v), -EINVAL);
	}
	CU_ASSERT_EQUAL(rfc3339_parse(NULL, &v), -EINVAL);

	rfc3339_format(INT64_C(1700000000123456), 6, out);
	CU_ASSERT_STRING_EQUAL(out, "2023-11-14T22:13:20.123456Z");
	rfc3339_format(INT64_C(1700000000123456), 3, out);
	CU_ASSERT_STRING_EQUAL(out, "2023-11-14T22:13:20.123Z");
	rfc3339_format(INT64_C(1700000000123456), 0, out);
	CU_ASSERT_STRING_EQUAL(out, "2023-11-14T22:13:20Z");
	rfc3339_format(INT64_C(-500000), 6, out);
	CU_ASSERT_STRING_EQUAL(out, "1969-12-31T23:59:59.500000Z");
	rfc3339_format(INT64_MAX, 6, out);
	CU_ASSERT_STRING_EQUAL(out, "9999-12-31T23:59:59.999999Z");
	rfc3339_format(INT64_MIN, 0, out);
	CU_ASSERT_STRING_EQUAL(out, "0000-01-01T00:00:00Z");
	/* what it writes, it reads back */
	for (int64_t t = INT64_C(-86400000001); t < INT64_C(4102444800000000);
	     t += INT64_C(123456789012345)) {
		rfc3339_format(t, 6, out);
		CU_ASSERT_EQUAL_FATAL(rfc3339_parse(out, &v), 0);
		CU_ASSERT_EQUAL(v, t);
	}
}

struct hitem {
	struct hmap_node node;
	unsigned key;
	bool seen;
};

static struct hitem *
hfind(struct hmap *m, unsigned key, uint64_t hash)
{
	struct hitem *it;

	HMAP_FOR_EACH_WITH_HASH(it, node, hash, m)
	if (it->key == key)
		return it;
	return NULL;
}

static void
test_hmap(void)
{
	enum { N = 5000 };
	struct hitem *items = calloc(N, sizeof(*items));
	struct hmap m = HMAP_INITIALIZER;
	struct hitem *it;
	size_t n;

	CU_ASSERT_FATAL(items != NULL);
	CU_ASSERT_PTR_NULL(hmap_first(&m));
	CU_ASSERT_PTR_NULL(hfind(&m, 1, 1));
	for (unsigned i = 0; i < N; i++) {
		items[i].key = i;
		/* every tenth shares its hash with its neighbour: chains carry equal hashes */
		CU_ASSERT_EQUAL_FATAL(
		    hmap_insert(&m, &items[i].node, hash64(&i, sizeof(i), 0) + (i % 10 == 1)), 0);
	}
	CU_ASSERT_EQUAL(hmap_count(&m), N);
	CU_ASSERT(m.mask + 1 >= N); /* grown: load at most 1 */
	for (unsigned i = 0; i < N; i++)
		CU_ASSERT_PTR_EQUAL(hfind(&m, i, items[i].node.hash), &items[i]);
	CU_ASSERT_PTR_NULL(hfind(&m, N + 1, hash64(&(unsigned){N + 1}, sizeof(unsigned), 0)));

	/* every record once; the odd ones removed during the walk */
	n = 0;
	HMAP_FOR_EACH_SAFE(it, node, &m)
	{
		CU_ASSERT_FALSE(it->seen);
		it->seen = true;
		n++;
		if (it->key % 2)
			hmap_remove(&m, &it->node);
	}
	CU_ASSERT_EQUAL(n, N);
	CU_ASSERT_EQUAL(hmap_count(&m), N / 2);
	n = 0;
	HMAP_FOR_EACH(it, node, &m)
	{
		CU_ASSERT_EQUAL(it->key % 2, 0);
		n++;
	}
	CU_ASSERT_EQUAL(n, N / 2);
	for (unsigned i = 0; i < N; i++)
		CU_ASSERT_PTR_EQUAL(hfind(&m, i, items[i].node.hash), i % 2 ? NULL : &items[i]);
	hmap_destroy(&m);
	CU_ASSERT_EQUAL(hmap_count(&m), 0);

	/* reserve: no growth afterwards, records keep their place */
	CU_ASSERT_EQUAL(hmap_reserve(&m, 1000), 0);
	n = m.mask;
	for (unsigned i = 0; i < 1000; i++)
		CU_ASSERT_EQUAL(hmap_insert(&m, &items[i].node, i), 0);
	CU_ASSERT_EQUAL(m.mask, n);
	CU_ASSERT_EQUAL(hmap_reserve(&m, 10), 0);
	CU_ASSERT_EQUAL(m.mask, n);
	CU_ASSERT_EQUAL(hmap_reserve(&m, SIZE_MAX), -ENOMEM);
	CU_ASSERT_EQUAL(hmap_count(&m), 1000);
	CU_ASSERT_PTR_EQUAL(hfind(&m, 999, 999), &items[999]);
	hmap_destroy(&m);
	free(items);
}

struct fargs {
	bool dry;
	const char *file;
	uint64_t n, usec, secs;
	int level;
	int odd;
	bool n_given;
};

static int
parse_odd(void *dst, const char *v, char *err, size_t len)
{
	uint64_t u;

	if (parse_uint(v, 0, 99, &u) < 0 || u % 2 == 0) {
		snprintf(err, len, "\"%s\" is not an odd number below 100", v);
		return -EINVAL;
	}
	*(int *)dst = (int)u;
	return 0;
}

static int
fparse(struct fargs *a, int *next, ...)
{
	static const char *const levels[] = {"error", "warn", "info", NULL};
	const struct flag table[] = {
	    {.name = "dry-run",
		.type = FLAG_BOOL,
		.dst = &a->dry,
		.help = "only print",
		.env = "TEST_FLAGS_DRY"},
	    {.name = "config",
		.type = FLAG_STRING,
		.dst = &a->file,
		.arg = "FILE",
		.help = "the file\nsecond line",
		.alias = "file",
		.env = "TEST_FLAGS_CONFIG"},
	    {.name = "count",
		.type = FLAG_UINT,
		.dst = &a->n,
		.arg = "N",
		.help = "how many",
		.min = 1,
		.max = 10,
		.given = &a->n_given,
		.alias = "number",
		.env = "TEST_FLAGS_COUNT"},
	    {.name = "timeout",
		.type = FLAG_UINT,
		.dst = &a->secs,
		.arg = "SECONDS",
		.help = "how long",
		.min = 1,
		.max = 86400,
		.unit = "seconds"},
	    {.name = "period",
		.type = FLAG_SECONDS,
		.dst = &a->usec,
		.arg = "SECONDS",
		.help = "how often",
		.min = 1000,
		.max = 3600000000},
	    {.name = "log-level",
		.type = FLAG_CHOICE,
		.dst = &a->level,
		.arg = "LEVEL",
		.help = "verbosity",
		.choices = levels},
	    {.name = "odd",
		.type = FLAG_FUNC,
		.dst = &a->odd,
		.arg = "N",
		.help = "an odd number",
		.parse = parse_odd},
	    {.name = NULL},
	};
	const struct flags f = {.prog = "prog",
	    .synopsis = "usage: prog [options]\n",
	    .version = "1.2.3",
	    .table = table};
	char *argv[16] = {"prog"};
	int argc = 1;
	va_list ap;

	va_start(ap, next);
	for (char *v; (v = va_arg(ap, char *)) != NULL && argc < 15;)
		argv[argc++] = v;
	va_end(ap);
	memset(a, 0, sizeof(*a));
	return flags_parse(&f, argc, argv, next);
}

/* fparse()'s stderr (one line expected) into out; its return in *r. */
static void
fparse_err(char *out, size_t len, int *r, const char *flag, const char *value)
{
	struct fargs a;
	FILE *tmp = tmpfile();
	int saved = dup(2), next;
	size_t n = 0;

	CU_ASSERT_FATAL(tmp != NULL && saved >= 0);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	*r = fparse(&a, &next, flag, value, NULL);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	n = fread(out, 1, len - 1, tmp);
	out[n] = '\0';
	fclose(tmp);
}

static void
test_flags(void)
{
	static const char *const levels[] = {"a", "b", NULL};
	const struct flag table[] = {
	    {.name = "x", .type = FLAG_BOOL, .help = "short"},
	    {.name = "a-rather-long-flag-name",
		.type = FLAG_CHOICE,
		.arg = "a|b",
		.help = "one\ntwo",
		.choices = levels},
	    {.name = NULL},
	};
	const struct flags f = {
	    .prog = "prog", .synopsis = "usage: prog\n", .footer = "footer\n", .table = table};
	struct fargs a;
	char *text = NULL;
	size_t len = 0;
	FILE *mem;
	int next = -1;

	CU_ASSERT_EQUAL(fparse(&a, &next, "--dry-run", "--config", "f.yaml", "--count=3",
			    "--period", "0.25", "--log-level", "info", "--odd", "7", "op", NULL),
	    0);
	CU_ASSERT(a.dry);
	CU_ASSERT_STRING_EQUAL(a.file, "f.yaml");
	CU_ASSERT_EQUAL(a.n, 3);
	CU_ASSERT(a.n_given);
	CU_ASSERT_EQUAL(a.usec, 250000);
	CU_ASSERT_EQUAL(a.level, 2);
	CU_ASSERT_EQUAL(a.odd, 7);
	CU_ASSERT_EQUAL(next, 11); /* "op" */
	CU_ASSERT_EQUAL(fparse(&a, &next, NULL), 0);
	CU_ASSERT_FALSE(a.n_given);
	CU_ASSERT_EQUAL(next, 1);

	/* refused: each names the flag on stderr */
	CU_ASSERT_EQUAL(fparse(&a, &next, "--count", "0", NULL), -EINVAL);
	CU_ASSERT_EQUAL(fparse(&a, &next, "--count", "11", NULL), -EINVAL);
	CU_ASSERT_EQUAL(fparse(&a, &next, "--count", "3x", NULL), -EINVAL);
	CU_ASSERT_EQUAL(fparse(&a, &next, "--period", "0.0001", NULL), -EINVAL);
	CU_ASSERT_EQUAL(fparse(&a, &next, "--period", "0.0000001", NULL), -EINVAL);
	CU_ASSERT_EQUAL(fparse(&a, &next, "--period", "3601", NULL), -EINVAL);
	CU_ASSERT_EQUAL(fparse(&a, &next, "--log-level", "debug", NULL), -EINVAL);
	CU_ASSERT_EQUAL(fparse(&a, &next, "--odd", "8", NULL), -EINVAL);
	CU_ASSERT_EQUAL(fparse(&a, &next, "--nope", NULL), -EINVAL);
	CU_ASSERT_EQUAL(fparse(&a, &next, "--config", NULL), -EINVAL);
	CU_ASSERT_EQUAL(fparse(&a, &next, "--dry-run=yes", NULL), -EINVAL);
	CU_ASSERT_EQUAL(flags_exit_status(-EINVAL), FLAGS_EXIT_USAGE);

	/* the messages: the flag, the value, what was expected */
	{
		static const struct {
			const char *flag, *value, *want;
		} cases[] = {
		    {"--count", "11", "prog: --count: \"11\" is not a number from 1 to 10\n"},
		    {"--timeout", "5s",
			"prog: --timeout: \"5s\" is not a number of seconds from 1 to 86400\n"},
		    {"--period", "0.0001",
			"prog: --period: \"0.0001\" is not a number of seconds from 0.001 to "
			"3600\n"},
		    {"--log-level", "debug",
			"prog: --log-level: \"debug\" is not error, warn or info\n"},
		    {"--nope", NULL, "prog: unknown flag --nope (try --help)\n"},
		    {"--config", NULL, "prog: --config needs a value (try --help)\n"},
		};
		char out[256];
		int r;

		for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
			fparse_err(out, sizeof(out), &r, cases[i].flag, cases[i].value);
			CU_ASSERT_EQUAL(r, -EINVAL);
			CU_ASSERT_STRING_EQUAL(out, cases[i].want);
		}
	}
	CU_ASSERT_EQUAL(fparse(&a, &next, "--timeout", "86400", NULL), 0);
	CU_ASSERT_EQUAL(a.secs, 86400);

	/* --help and --version: 1, exit 0 */
	CU_ASSERT_EQUAL(fparse(&a, &next, "--version", NULL), 1);
	CU_ASSERT_EQUAL(flags_exit_status(1), 0);

	mem = open_memstream(&text, &len);
	CU_ASSERT_FATAL(mem != NULL);
	flags_usage(&f, mem);
	fclose(mem);
	CU_ASSERT_STRING_EQUAL(text, "usage: prog\n"
				     "  --x                         short\n"
				     "  --a-rather-long-flag-name a|b one\n"
				     "                              two\n"
				     "  --help                      print this help\n"
				     "footer\n");
	free(text);
}

/*
 * Aliases and environment variables: an alias parses as its flag and errors name it as
 * written; a variable gives the value unless the command line does; an empty one is unset;
 * a bad one is refused naming the variable; booleans take Go's strconv.ParseBool words;
 * --help and --version work whatever the environment; the help lists both.
 */
static void
test_flags_alias_env(void)
{
	const struct flag table[] = {
	    {.name = "agent-image",
		.type = FLAG_STRING,
		.arg = "IMAGE",
		.help = "image",
		.alias = "image",
		.env = "AGENT_IMAGE"},
	    {.name = "debug", .type = FLAG_BOOL, .help = "more", .env = "X_DEBUG"},
	    {.name = NULL},
	};
	const struct flags f = {.prog = "prog", .synopsis = "usage: prog\n", .table = table};
	static const char *const truths[] = {"1", "t", "T", "true", "TRUE", "True"};
	static const char *const lies[] = {"0", "f", "F", "false", "FALSE", "False"};
	struct fargs a;
	char out[256], *text = NULL;
	size_t len = 0;
	FILE *mem;
	int next, r;

	unsetenv("TEST_FLAGS_DRY");
	unsetenv("TEST_FLAGS_CONFIG");
	unsetenv("TEST_FLAGS_COUNT");
	/* the alias */
	CU_ASSERT_EQUAL(fparse(&a, &next, "--file", "a.yaml", "--number=4", NULL), 0);
	CU_ASSERT_STRING_EQUAL(a.file, "a.yaml");
	CU_ASSERT_EQUAL(a.n, 4);
	CU_ASSERT(a.n_given);
	fparse_err(out, sizeof(out), &r, "--number", "11");
	CU_ASSERT_EQUAL(r, -EINVAL);
	CU_ASSERT_STRING_EQUAL(out, "prog: --number: \"11\" is not a number from 1 to 10\n");
	fparse_err(out, sizeof(out), &r, "--count", "11");
	CU_ASSERT_STRING_EQUAL(out, "prog: --count: \"11\" is not a number from 1 to 10\n");

	/* the environment, overridden by the command line */
	setenv("TEST_FLAGS_CONFIG", "env.yaml", 1);
	setenv("TEST_FLAGS_COUNT", "7", 1);
	CU_ASSERT_EQUAL(fparse(&a, &next, NULL), 0);
	CU_ASSERT_STRING_EQUAL(a.file, "env.yaml");
	CU_ASSERT_EQUAL(a.n, 7);
	CU_ASSERT(a.n_given);
	CU_ASSERT_EQUAL(fparse(&a, &next, "--config", "cli.yaml", "--count", "2", NULL), 0);
	CU_ASSERT_STRING_EQUAL(a.file, "cli.yaml");
	CU_ASSERT_EQUAL(a.n, 2);
	CU_ASSERT_EQUAL(fparse(&a, &next, "--file", "alias.yaml", NULL), 0);
	CU_ASSERT_STRING_EQUAL(a.file, "alias.yaml");
	setenv("TEST_FLAGS_COUNT", "", 1); /* empty: unset */
	CU_ASSERT_EQUAL(fparse(&a, &next, NULL), 0);
	CU_ASSERT_EQUAL(a.n, 0);
	CU_ASSERT_FALSE(a.n_given);
	/* a bad variable: refused, naming it; not with --help or --version */
	setenv("TEST_FLAGS_COUNT", "99", 1);
	fparse_err(out, sizeof(out), &r, NULL, NULL);
	CU_ASSERT_EQUAL(r, -EINVAL);
	CU_ASSERT_STRING_EQUAL(
	    out, "prog: $TEST_FLAGS_COUNT: \"99\" is not a number from 1 to 10\n");
	CU_ASSERT_EQUAL(fparse(&a, &next, "--version", NULL), 1);
	unsetenv("TEST_FLAGS_COUNT");

	/* booleans: Go's words, true and false; anything else refused */
	for (size_t i = 0; i < ELEMENTSOF(truths); i++) {
		setenv("TEST_FLAGS_DRY", truths[i], 1);
		CU_ASSERT_EQUAL(fparse(&a, &next, NULL), 0);
		CU_ASSERT_TRUE(a.dry);
		setenv("TEST_FLAGS_DRY", lies[i], 1);
		CU_ASSERT_EQUAL(fparse(&a, &next, NULL), 0);
		CU_ASSERT_FALSE(a.dry);
		CU_ASSERT_EQUAL(fparse(&a, &next, "--dry-run", NULL), 0);
		CU_ASSERT_TRUE(a.dry); /* the command line wins */
	}
	setenv("TEST_FLAGS_DRY", "yes", 1);
	fparse_err(out, sizeof(out), &r, NULL, NULL);
	CU_ASSERT_EQUAL(r, -EINVAL);
	CU_ASSERT_STRING_EQUAL(out, "prog: $TEST_FLAGS_DRY: \"yes\" is not true or false\n");
	unsetenv("TEST_FLAGS_DRY");
	unsetenv("TEST_FLAGS_CONFIG");

	/* the help: the variable under the flag, the alias as a flag of its own */
	mem = open_memstream(&text, &len);
	CU_ASSERT_FATAL(mem != NULL);
	flags_usage(&f, mem);
	fclose(mem);
	CU_ASSERT_STRING_EQUAL(text, "usage: prog\n"
				     "  --agent-image IMAGE         image\n"
				     "                              (environment: $AGENT_IMAGE)\n"
				     "  --image IMAGE               the same as --agent-image\n"
				     "  --debug                     more\n"
				     "                              (environment: $X_DEBUG)\n"
				     "  --help                      print this help\n");
	free(text);
}

static const struct test_case lib_tests[] = {
    {"httpd binds numeric addresses, clear errors", test_httpd_listen},
    {"buf reader never reads past the end", test_reader_bounds},
    {"buf writer overflow is sticky", test_writer_overflow},
    {"MAC parse/canonicalise", test_mac},
    {"IPv4 and CIDR parsing is strict", test_ipv4},
    {"metrics render Prometheus text", test_metrics_render},
    {"metrics values round-trip (Unix time in ms, 2^53)", test_metrics_values_round_trip},
    {"metrics: vmdhcp_build_info with escaped labels", test_metrics_build_info},
    {"metrics: process metrics from /proc/self", test_metrics_process},
    {"metrics: one family from constant-labelled registrations", test_metrics_const_label_families},
    {"metrics: dynamic series come and go", test_metrics_dynamic_series},
    {"atomic file write and bounded read", test_atomic_file},
    {"parse_uint bounds", test_parse_uint},
    {"parse_seconds_usec", test_parse_seconds},
    {"RFC 3339 parse and format, one of each", test_rfc3339},
    {"hash map: find, walk, remove while walking, reserve", test_hmap},
    {"flags: one table for parsing, checks and help", test_flags},
    {"flags: aliases and environment variables", test_flags_alias_env},
    {"rate-limited logging", test_ratelimit},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "lib", .tests = lib_tests},
    {.name = NULL},
};
