/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/metrics.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct metric {
	enum metric_type type;
	const char *name;
	const char *help;
	const char *label;
	const char *const *label_values;
	size_t n_series;
	const double *buckets;
	size_t n_buckets;
	double *values;     /* counter/gauge: n_series; histogram: sums, n_series */
	uint64_t *counts;   /* histogram: n_series * (n_buckets + 1), non-cumulative */
	struct metric *next;
};

struct metrics {
	struct metric *head, *tail;
	void (*collect)(void *);
	void *collect_userdata;
};

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
		free(mt);
	}
	free(m);
	return NULL;
}

struct metric *
metrics_add(struct metrics *m, enum metric_type type, const char *name, const char *help,
    const char *label, const char *const *label_values, size_t n_values, const double *buckets,
    size_t n_buckets)
{
	struct metric *mt;

	if (m == NULL || name == NULL || help == NULL || (label == NULL) != (n_values == 0))
		return NULL;
	if (type == METRIC_HISTOGRAM && (buckets == NULL || n_buckets == 0))
		return NULL;
	mt = calloc(1, sizeof(*mt));
	if (mt == NULL)
		return NULL;
	mt->type = type;
	mt->name = name;
	mt->help = help;
	mt->label = label;
	mt->label_values = label_values;
	mt->n_series = n_values == 0 ? 1 : n_values;
	mt->buckets = buckets;
	mt->n_buckets = type == METRIC_HISTOGRAM ? n_buckets : 0;
	mt->values = calloc(mt->n_series, sizeof(double));
	if (type == METRIC_HISTOGRAM)
		mt->counts = calloc(mt->n_series * (n_buckets + 1), sizeof(uint64_t));
	if (mt->values == NULL || (type == METRIC_HISTOGRAM && mt->counts == NULL)) {
		free(mt->values);
		free(mt->counts);
		free(mt);
		return NULL;
	}
	if (m->tail != NULL)
		m->tail->next = mt;
	else
		m->head = mt;
	m->tail = mt;
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
metric_hist_set(struct metric *mt, size_t idx, const uint64_t *counts, size_t n_counts,
    double sum)
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

static void __attribute__((format(printf, 2, 3)))
sbuf_printf(struct sbuf *s, const char *fmt, ...)
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

static void
fmt_value(char *out, size_t n, double v)
{
	if (isinf(v))
		snprintf(out, n, v > 0 ? "+Inf" : "-Inf");
	else if (isnan(v))
		snprintf(out, n, "NaN");
	else if (v == (double)(int64_t)v && fabs(v) < 9e15)
		snprintf(out, n, "%lld", (long long)v);
	else
		snprintf(out, n, "%.9g", v);
}

static const char *const type_names[] = {
	[METRIC_COUNTER] = "counter",
	[METRIC_GAUGE] = "gauge",
	[METRIC_HISTOGRAM] = "histogram",
};

int
metrics_render(struct metrics *m, char **ret, size_t *ret_len)
{
	struct sbuf s = { .cap = 4096 };
	char v[64];

	if (m->collect != NULL)
		m->collect(m->collect_userdata);
	s.p = malloc(s.cap);
	if (s.p == NULL)
		return -ENOMEM;
	s.p[0] = '\0';
	for (struct metric *mt = m->head; mt != NULL; mt = mt->next) {
		sbuf_printf(&s, "# HELP %s %s\n# TYPE %s %s\n", mt->name, mt->help, mt->name,
		    type_names[mt->type]);
		for (size_t i = 0; i < mt->n_series; i++) {
			char lbl[128] = "";
			if (mt->label != NULL)
				snprintf(lbl, sizeof(lbl), "%s=\"%s\"", mt->label, mt->label_values[i]);
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
