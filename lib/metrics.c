/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/metrics.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>

struct metric {
	enum metric_type type;
	const char *name;
	const char *help;
	const char *label;
	const char *const *label_values;
	size_t n_series;
	const double *buckets;
	size_t n_buckets;
	double *values;	    /* counter/gauge: n_series; histogram: sums, n_series */
	uint64_t *counts;   /* histogram: n_series * (n_buckets + 1), non-cumulative */
	char *const_labels; /* owned, escaped: a="x",b="y" before the label; NULL if none */
	/* dynamic families (metrics_add_dynamic): series written by emit at each render */
	void (*emit)(struct metric_emitter *e, void *userdata);
	void *emit_userdata;
	/* The members of one family (same name) are adjacent in the list: rendered under one
	 * HELP and TYPE. */
	struct metric *next;
};

/* The process metrics, refreshed before each render. */
struct proc_metrics {
	struct metric *cpu, *rss, *vsz, *fds, *max_fds, *start;
	double start_time; /* 0 until read once: it never changes */
};

struct metrics {
	struct metric *head, *tail;
	void (*collect)(void *);
	void *collect_userdata;
	struct proc_metrics *proc;
};

#define CONST_LABELS_MAX 256

int
metrics_new(struct metrics **ret)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return -ENOMEM;
	*ret = m;
	return 0;
}

struct metrics *
metrics_free(struct metrics *m)
{
	if (m == NULL)
		return NULL;
	for (struct metric *mt = m->head, *next; mt != NULL; mt = next) {
		next = mt->next;
		free(mt->values);
		free(mt->counts);
		free(mt->const_labels);
		free(mt);
	}
	free(m->proc);
	free(m);
	return NULL;
}

static size_t put_label(char *s, size_t len, size_t cap, const char *name, const char *value);

static bool
same_labels(const char *a, const char *b)
{
	return a == NULL || b == NULL ? a == b : strcmp(a, b) == 0;
}

/*
 * Where a new member of family `name` goes: after the family's last member (NULL: a new
 * family, at the tail). -EINVAL when the family has another type or is dynamic (or the new
 * one is), -EEXIST when it has a member with these constant labels.
 */
static int
family_find(struct metrics *m, const char *name, enum metric_type type, bool dynamic,
    const char *const_labels, struct metric **ret_last)
{
	*ret_last = NULL;
	for (struct metric *mt = m->head; mt != NULL; mt = mt->next) {
		if (strcmp(mt->name, name) != 0)
			continue;
		if (mt->type != type || mt->emit != NULL || dynamic)
			return -EINVAL;
		if (same_labels(mt->const_labels, const_labels))
			return -EEXIST;
		*ret_last = mt;
	}
	return 0;
}

static void
link_after(struct metrics *m, struct metric *mt, struct metric *after)
{
	if (after == NULL)
		after = m->tail;
	if (after == NULL) {
		m->head = m->tail = mt;
		return;
	}
	mt->next = after->next;
	after->next = mt;
	if (m->tail == after)
		m->tail = mt;
}

static struct metric *
fail_errno(int err)
{
	errno = err;
	return NULL;
}

struct metric *
metrics_add_const(struct metrics *m, enum metric_type type, const char *name, const char *help,
    const char *const_label, const char *const_value, const char *label,
    const char *const *label_values, size_t n_values, const double *buckets, size_t n_buckets)
{
	char lbl[CONST_LABELS_MAX + 1];
	struct metric *mt, *after;
	char *copy = NULL;
	int r;

	if (m == NULL || name == NULL || help == NULL || (label == NULL) != (n_values == 0) ||
	    (label != NULL && label_values == NULL) ||
	    (const_label == NULL) != (const_value == NULL))
		return fail_errno(EINVAL);
	if ((unsigned)type > METRIC_HISTOGRAM ||
	    (type == METRIC_HISTOGRAM && (buckets == NULL || n_buckets == 0)))
		return fail_errno(EINVAL);
	if (const_label != NULL) {
		if (put_label(lbl, 0, sizeof(lbl), const_label, const_value) >= sizeof(lbl))
			return fail_errno(EINVAL);
		if ((copy = strdup(lbl)) == NULL)
			return fail_errno(ENOMEM);
	}
	if ((r = family_find(m, name, type, false, copy, &after)) < 0) {
		free(copy);
		return fail_errno(-r);
	}
	mt = calloc(1, sizeof(*mt));
	if (mt == NULL) {
		free(copy);
		return fail_errno(ENOMEM);
	}
	mt->type = type;
	mt->name = name;
	mt->help = help;
	mt->label = label;
	mt->label_values = label_values;
	mt->n_series = n_values == 0 ? 1 : n_values;
	mt->buckets = buckets;
	mt->n_buckets = type == METRIC_HISTOGRAM ? n_buckets : 0;
	mt->const_labels = copy;
	mt->values = calloc(mt->n_series, sizeof(double));
	if (type == METRIC_HISTOGRAM)
		mt->counts = calloc(mt->n_series * (n_buckets + 1), sizeof(uint64_t));
	if (mt->values == NULL || (type == METRIC_HISTOGRAM && mt->counts == NULL)) {
		free(mt->values);
		free(mt->counts);
		free(mt->const_labels);
		free(mt);
		return fail_errno(ENOMEM);
	}
	link_after(m, mt, after);
	return mt;
}

struct metric *
metrics_add(struct metrics *m, enum metric_type type, const char *name, const char *help,
    const char *label, const char *const *label_values, size_t n_values, const double *buckets,
    size_t n_buckets)
{
	return metrics_add_const(
	    m, type, name, help, NULL, NULL, label, label_values, n_values, buckets, n_buckets);
}

struct metric *
metrics_add_dynamic(struct metrics *m, enum metric_type type, const char *name, const char *help,
    void (*emit)(struct metric_emitter *e, void *userdata), void *userdata)
{
	struct metric *mt, *after;

	if (m == NULL || name == NULL || help == NULL || emit == NULL ||
	    (type != METRIC_COUNTER && type != METRIC_GAUGE))
		return fail_errno(EINVAL);
	if (family_find(m, name, type, true, NULL, &after) < 0)
		return fail_errno(EINVAL);
	mt = calloc(1, sizeof(*mt));
	if (mt == NULL)
		return fail_errno(ENOMEM);
	mt->type = type;
	mt->name = name;
	mt->help = help;
	mt->n_series = 0; /* nothing stored: updates are ignored */
	mt->emit = emit;
	mt->emit_userdata = userdata;
	link_after(m, mt, NULL);
	return mt;
}

void
metric_inc(struct metric *mt, size_t idx)
{
	metric_add(mt, idx, 1);
}

void
metric_add(struct metric *mt, size_t idx, double v)
{
	if (mt == NULL || idx >= mt->n_series || mt->type == METRIC_HISTOGRAM)
		return;
	mt->values[idx] += v;
}

void
metric_set(struct metric *mt, size_t idx, double v)
{
	if (mt == NULL || idx >= mt->n_series || mt->type == METRIC_HISTOGRAM)
		return;
	mt->values[idx] = v;
}

void
metric_observe(struct metric *mt, size_t idx, double v)
{
	size_t b;

	if (mt == NULL || idx >= mt->n_series || mt->type != METRIC_HISTOGRAM)
		return;
	for (b = 0; b < mt->n_buckets; b++)
		if (v <= mt->buckets[b])
			break;
	mt->counts[idx * (mt->n_buckets + 1) + b]++;
	mt->values[idx] += v;
}

double
metric_get(const struct metric *mt, size_t idx)
{
	if (mt == NULL || idx >= mt->n_series)
		return 0;
	return mt->values[idx];
}

int
metric_hist_set(struct metric *mt, size_t idx, const uint64_t *counts, size_t n_counts, double sum)
{
	if (mt == NULL || idx >= mt->n_series || mt->type != METRIC_HISTOGRAM ||
	    n_counts != mt->n_buckets + 1)
		return -EINVAL;
	memcpy(mt->counts + idx * (mt->n_buckets + 1), counts, n_counts * sizeof(*counts));
	mt->values[idx] = sum;
	return 0;
}

uint64_t
metric_hist_count(const struct metric *mt, size_t idx)
{
	uint64_t n = 0;

	if (mt == NULL || idx >= mt->n_series || mt->type != METRIC_HISTOGRAM)
		return 0;
	for (size_t b = 0; b <= mt->n_buckets; b++)
		n += mt->counts[idx * (mt->n_buckets + 1) + b];
	return n;
}

void
metrics_set_collect(struct metrics *m, void (*collect)(void *), void *userdata)
{
	m->collect = collect;
	m->collect_userdata = userdata;
}

struct sbuf {
	char *p;
	size_t len, cap;
	bool failed;
};

/* Room for n more bytes and the NUL; false once failed. */
static bool
sbuf_reserve(struct sbuf *s, size_t n)
{
	size_t ncap;
	char *np;

	if (s->failed)
		return false;
	if (s->cap - s->len > n)
		return true;
	ncap = s->cap * 2 + n + 1;
	np = realloc(s->p, ncap);
	if (np == NULL) {
		s->failed = true;
		return false;
	}
	s->p = np;
	s->cap = ncap;
	return true;
}

/* A label value as the text format wants it: '\', '"' and newlines escaped. */
static void
sbuf_put_escaped(struct sbuf *s, const char *v)
{
	if (!sbuf_reserve(s, 2 * strlen(v)))
		return;
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"' || *v == '\n') {
			s->p[s->len++] = '\\';
			s->p[s->len++] = *v == '\n' ? 'n' : *v;
		} else {
			s->p[s->len++] = *v;
		}
	}
	s->p[s->len] = '\0';
}

static void __attribute__((format(printf, 2, 3))) sbuf_printf(struct sbuf *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (s->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(s->p + s->len, s->cap - s->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			s->failed = true;
			return;
		}
		if ((size_t)n < s->cap - s->len) {
			s->len += (size_t)n;
			return;
		}
		size_t ncap = s->cap * 2 + (size_t)n;
		char *np = realloc(s->p, ncap);
		if (np == NULL) {
			s->failed = true;
			return;
		}
		s->p = np;
		s->cap = ncap;
	}
}

/*
 * The shortest of %.15g, %.16g, %.17g that reads back as v (%.17g always does): "%.9g" would
 * round a Unix time to 10 s. Integral values below 2^63 are written whole, without exponent.
 */
static void
fmt_value(char *out, size_t n, double v)
{
	if (isinf(v))
		snprintf(out, n, v > 0 ? "+Inf" : "-Inf");
	else if (isnan(v))
		snprintf(out, n, "NaN");
	else if (v == 0)
		snprintf(out, n, "0"); /* and not "-0" */
	else if (v == trunc(v) && fabs(v) < 0x1p63)
		snprintf(out, n, "%.0f", v);
	else
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(out, n, "%.*g", prec, v);
			if (strtod(out, NULL) == v)
				break;
		}
}

static const char *const type_names[] = {
    [METRIC_COUNTER] = "counter",
    [METRIC_GAUGE] = "gauge",
    [METRIC_HISTOGRAM] = "histogram",
};

/* Appends a="value" to s (len bytes used of cap), escaping '\', '"' and newlines as the
 * text format wants; returns the new length, or cap when it does not fit. */
static size_t
put_label(char *s, size_t len, size_t cap, const char *name, const char *value)
{
	int n = snprintf(s + len, cap - len, "%s%s=\"", len > 0 ? "," : "", name);

	if (n < 0 || (size_t)n >= cap - len)
		return cap;
	len += (size_t)n;
	for (const char *p = value; *p != '\0'; p++) {
		char c = *p == '\n' ? 'n' : *p;
		bool esc = *p == '\\' || *p == '"' || *p == '\n';

		if (len + esc + 3 > cap) /* the character(s), the quote, the NUL */
			return cap;
		if (esc)
			s[len++] = '\\';
		s[len++] = c;
	}
	s[len++] = '"';
	s[len] = '\0';
	return len;
}

struct metric *
metrics_add_build_info(struct metrics *m, const char *version, const char *revision)
{
	char lbl[CONST_LABELS_MAX + 1], *copy;
	size_t len = 0;
	struct metric *mt;

	if (m == NULL || version == NULL || revision == NULL)
		return NULL;
	len = put_label(lbl, len, sizeof(lbl), "version", version);
	if (len < sizeof(lbl))
		len = put_label(lbl, len, sizeof(lbl), "revision", revision);
	if (len >= sizeof(lbl))
		return NULL;
	if ((copy = strdup(lbl)) == NULL)
		return NULL;
	mt = metrics_add_simple(m, METRIC_GAUGE, "vmdhcp_build_info",
	    "The running build: version (the file VERSION) and revision (the commit); always 1.");
	if (mt == NULL) {
		free(copy);
		return NULL;
	}
	mt->const_labels = copy; /* freed with mt by metrics_free() */
	metric_set(mt, 0, 1);
	return mt;
}

/* Fields of /proc/self/stat after "(comm) ": index 0 is field 3 (state). */
#define STAT_UTIME 11
#define STAT_STIME 12
#define STAT_STARTTIME 19
#define STAT_VSIZE 20
#define STAT_RSS 21

static int
read_proc_stat(unsigned long long *f, size_t nf)
{
	char buf[1024], *p, *end;
	size_t i, n;
	FILE *fp = fopen("/proc/self/stat", "re");

	if (fp == NULL)
		return -errno;
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	fclose(fp);
	buf[n] = '\0';
	/* the command name may hold spaces and ')': the fields start after the last ')' */
	p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ')
		return -EBADMSG;
	p += 2;
	for (i = 0; i < nf; i++) {
		while (*p == ' ')
			p++;
		if (i == 0) { /* the state, a letter */
			f[i] = 0;
			p = strchr(p, ' ');
			if (p == NULL)
				return -EBADMSG;
			continue;
		}
		f[i] = strtoull(p, &end, 10);
		if (end == p)
			return -EBADMSG;
		p = end;
	}
	return 0;
}

/* The boot time (btime of /proc/stat, seconds since the epoch), 0 when unreadable. */
static double
boot_time(void)
{
	FILE *fp = fopen("/proc/stat", "re");
	char *line = NULL;
	size_t cap = 0;
	double t = 0;
	unsigned long long v;

	if (fp == NULL)
		return 0;
	while (getline(&line, &cap, fp) > 0)
		if (sscanf(line, "btime %llu", &v) == 1) {
			t = (double)v;
			break;
		}
	free(line);
	fclose(fp);
	return t;
}

static void
proc_collect(struct proc_metrics *pm)
{
	unsigned long long f[STAT_RSS + 1];
	long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	struct rlimit rl;
	DIR *d;

	if (tck > 0 && page > 0 && read_proc_stat(f, sizeof(f) / sizeof(f[0])) == 0) {
		metric_set(pm->cpu, 0, (double)(f[STAT_UTIME] + f[STAT_STIME]) / (double)tck);
		metric_set(pm->vsz, 0, (double)f[STAT_VSIZE]);
		metric_set(pm->rss, 0, (double)f[STAT_RSS] * (double)page);
		if (pm->start_time == 0) {
			double bt = boot_time();

			if (bt > 0)
				pm->start_time = bt + (double)f[STAT_STARTTIME] / (double)tck;
		}
		metric_set(pm->start, 0, pm->start_time);
	}
	if ((d = opendir("/proc/self/fd")) != NULL) {
		struct dirent *e;
		double n = 0;

		while ((e = readdir(d)) != NULL)
			if (e->d_name[0] != '.' && atoi(e->d_name) != dirfd(d))
				n++;
		closedir(d);
		metric_set(pm->fds, 0, n);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		metric_set(
		    pm->max_fds, 0, rl.rlim_cur == RLIM_INFINITY ? INFINITY : (double)rl.rlim_cur);
}

int
metrics_add_process(struct metrics *m)
{
	struct proc_metrics *pm;

	if (m == NULL)
		return -EINVAL;
	if (m->proc != NULL)
		return 0;
	pm = calloc(1, sizeof(*pm));
	if (pm == NULL)
		return -ENOMEM;
	pm->cpu = metrics_add_simple(m, METRIC_COUNTER, "process_cpu_seconds_total",
	    "Total user and system CPU time spent in seconds.");
	pm->rss = metrics_add_simple(
	    m, METRIC_GAUGE, "process_resident_memory_bytes", "Resident memory size in bytes.");
	pm->vsz = metrics_add_simple(
	    m, METRIC_GAUGE, "process_virtual_memory_bytes", "Virtual memory size in bytes.");
	pm->fds = metrics_add_simple(
	    m, METRIC_GAUGE, "process_open_fds", "Number of open file descriptors.");
	pm->max_fds = metrics_add_simple(
	    m, METRIC_GAUGE, "process_max_fds", "Maximum number of open file descriptors.");
	pm->start = metrics_add_simple(m, METRIC_GAUGE, "process_start_time_seconds",
	    "Start time of the process since unix epoch in seconds.");
	/* a family that could not be added is left out of the collection (metric_set(NULL)) */
	m->proc = pm;
	if (pm->cpu == NULL || pm->rss == NULL || pm->vsz == NULL || pm->fds == NULL ||
	    pm->max_fds == NULL || pm->start == NULL)
		return -ENOMEM;
	return 0;
}

struct metric_emitter {
	struct sbuf *s;
	const struct metric *mt;
	bool header; /* HELP and TYPE written */
};

static void
put_header(struct sbuf *s, const struct metric *mt)
{
	sbuf_printf(
	    s, "# HELP %s %s\n# TYPE %s %s\n", mt->name, mt->help, mt->name, type_names[mt->type]);
}

void
metric_emit(struct metric_emitter *e, const struct metric_label *labels, size_t n_labels, double v)
{
	char val[64];

	if (e == NULL)
		return;
	if (!e->header) {
		put_header(e->s, e->mt);
		e->header = true;
	}
	sbuf_printf(e->s, "%s", e->mt->name);
	for (size_t i = 0; i < n_labels; i++) {
		sbuf_printf(e->s, "%c%s=\"", i == 0 ? '{' : ',', labels[i].name);
		sbuf_put_escaped(e->s, labels[i].value != NULL ? labels[i].value : "");
		sbuf_printf(e->s, "\"");
	}
	fmt_value(val, sizeof(val), v);
	sbuf_printf(e->s, "%s %s\n", n_labels > 0 ? "}" : "", val);
}

int
metrics_render(struct metrics *m, char **ret, size_t *ret_len)
{
	struct sbuf s = {.cap = 4096};
	const struct metric *prev = NULL;
	char v[64];

	if (m->proc != NULL)
		proc_collect(m->proc);
	if (m->collect != NULL)
		m->collect(m->collect_userdata);
	s.p = malloc(s.cap);
	if (s.p == NULL)
		return -ENOMEM;
	s.p[0] = '\0';
	for (struct metric *mt = m->head; mt != NULL; prev = mt, mt = mt->next) {
		if (mt->emit != NULL) {
			struct metric_emitter e = {.s = &s, .mt = mt};

			mt->emit(&e, mt->emit_userdata);
			continue;
		}
		/* one header per family: its members follow each other */
		if (prev == NULL || strcmp(prev->name, mt->name) != 0)
			put_header(&s, mt);
		for (size_t i = 0; i < mt->n_series; i++) {
			char lbl[CONST_LABELS_MAX + 128] = "";
			if (mt->label != NULL)
				snprintf(lbl, sizeof(lbl), "%s%s%s=\"%s\"",
				    mt->const_labels != NULL ? mt->const_labels : "",
				    mt->const_labels != NULL ? "," : "", mt->label,
				    mt->label_values[i]);
			else if (mt->const_labels != NULL)
				snprintf(lbl, sizeof(lbl), "%s", mt->const_labels);
			if (mt->type != METRIC_HISTOGRAM) {
				fmt_value(v, sizeof(v), mt->values[i]);
				if (lbl[0])
					sbuf_printf(&s, "%s{%s} %s\n", mt->name, lbl, v);
				else
					sbuf_printf(&s, "%s %s\n", mt->name, v);
				continue;
			}
			uint64_t cum = 0;
			const uint64_t *c = mt->counts + i * (mt->n_buckets + 1);
			for (size_t b = 0; b <= mt->n_buckets; b++) {
				cum += c[b];
				if (b < mt->n_buckets)
					fmt_value(v, sizeof(v), mt->buckets[b]);
				else
					snprintf(v, sizeof(v), "+Inf");
				sbuf_printf(&s, "%s_bucket{%s%sle=\"%s\"} %llu\n", mt->name, lbl,
				    lbl[0] ? "," : "", v, (unsigned long long)cum);
			}
			fmt_value(v, sizeof(v), mt->values[i]);
			sbuf_printf(&s, "%s_sum%s%s%s %s\n", mt->name, lbl[0] ? "{" : "", lbl,
			    lbl[0] ? "}" : "", v);
			sbuf_printf(&s, "%s_count%s%s%s %llu\n", mt->name, lbl[0] ? "{" : "", lbl,
			    lbl[0] ? "}" : "", (unsigned long long)cum);
		}
	}
	if (s.failed) {
		free(s.p);
		return -ENOMEM;
	}
	*ret = s.p;
	if (ret_len != NULL)
		*ret_len = s.len;
	return 0;
}
