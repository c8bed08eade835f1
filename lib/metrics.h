/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_METRICS_H
#define VMDHCP_LIB_METRICS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Counters, gauges and histograms in fixed arrays, rendered in the Prometheus text
 * exposition format (version 0.0.4). Registration allocates; updates never do.
 *
 * A metric has at most one variable label; its series are indexed 0..n-1 in the order of
 * `label_values` (or a single series 0 when there is no label). Constant labels
 * (metrics_add_const) let several metrics share one family name; metrics_add_dynamic gives a
 * family whose labelled series are produced at each render.
 * Values are written as integers when they are integral (below 2^63), else in the shortest
 * %g form that reads back as the same double (a Unix time keeps its milliseconds).
 */

enum metric_type {
	METRIC_COUNTER,
	METRIC_GAUGE,
	METRIC_HISTOGRAM,
};

struct metrics;
struct metric;

/* Returns 0 and a new registry in *ret, or -ENOMEM. */
int metrics_new(struct metrics **ret);
/* Frees the registry and every metric in it. Accepts NULL; returns NULL. */
struct metrics *metrics_free(struct metrics *m);

/*
 * Registers a family. name/help/label/label_values/buckets are borrowed and must outlive the
 * registry (string literals and static tables). label may be NULL (then n_values must be 0).
 * Histograms take ascending upper bounds (the +Inf bucket is implicit); their sums are the
 * observed values' sum as given (seconds for a *_seconds family).
 * Returns a borrowed pointer owned by the registry, or NULL on bad arguments / no memory
 * (see metrics_add_const).
 */
struct metric *metrics_add(struct metrics *m, enum metric_type type, const char *name,
    const char *help, const char *label, const char *const *label_values, size_t n_values,
    const double *buckets, size_t n_buckets);

static inline struct metric *
metrics_add_simple(struct metrics *m, enum metric_type type, const char *name, const char *help)
{
	return metrics_add(m, type, name, help, NULL, NULL, 0, NULL, 0);
}

/*
 * Like metrics_add, with one constant label const_label="const_value" (the value is copied
 * and escaped) written before the variable label. Registrations under one name form one
 * family, rendered together under one HELP and TYPE (the first registration's help), e.g. one
 * per controller told apart by the constant label. Returns the metric, or NULL with errno
 * EINVAL (bad arguments, a family of another type or a dynamic one), EEXIST (a registration
 * with that name and constant label exists) or ENOMEM.
 */
struct metric *metrics_add_const(struct metrics *m, enum metric_type type, const char *name,
    const char *help, const char *const_label, const char *const_value, const char *label,
    const char *const *label_values, size_t n_values, const double *buckets, size_t n_buckets);

/*
 * Series that come and go (one per object, e.g. per IPPool), counters or gauges: nothing is
 * stored; at each render, emit(e, userdata) calls metric_emit() once per series that exists
 * now. A family that emits nothing is left out, its HELP and TYPE too. Label values are
 * escaped; keep them bounded (object names, never a MAC or an address). name/help borrowed
 * as in metrics_add. Returns the metric, or NULL with errno EINVAL (a histogram, bad
 * arguments, the name taken) or ENOMEM.
 */
struct metric_emitter;
struct metric_label {
	const char *name, *value;
};
struct metric *metrics_add_dynamic(struct metrics *m, enum metric_type type, const char *name,
    const char *help, void (*emit)(struct metric_emitter *e, void *userdata), void *userdata);
/* One series of the family being emitted: name{labels...} v. */
void metric_emit(
    struct metric_emitter *e, const struct metric_label *labels, size_t n_labels, double v);

/* Updates; idx out of range is ignored. */
void metric_inc(struct metric *mt, size_t idx);
void metric_add(struct metric *mt, size_t idx, double v);
void metric_set(struct metric *mt, size_t idx, double v);
void metric_observe(struct metric *mt, size_t idx, double v);
double metric_get(const struct metric *mt, size_t idx);
/*
 * Histogram: replace series idx with counts[0..n_buckets] (non-cumulative, the last one the
 * +Inf bucket; n_counts must be n_buckets + 1) and sum. For programs that copy a histogram
 * kept elsewhere (e.g. the DHCP engine's stats). Returns 0 or -EINVAL.
 */
int metric_hist_set(
    struct metric *mt, size_t idx, const uint64_t *counts, size_t n_counts, double sum);
/* Histogram: number of observations in series idx. */
uint64_t metric_hist_count(const struct metric *mt, size_t idx);

/* Called before rendering so a program can refresh gauges from its own state, and gather
 * what its dynamic families emit (one per registry; metrics_add_process() refreshes its own
 * besides). */
void metrics_set_collect(struct metrics *m, void (*collect)(void *userdata), void *userdata);

/*
 * vmdhcp_build_info{version="...",revision="..."} 1, a gauge: which build is running (the
 * strings are copied and escaped). Returns the metric, or NULL on no memory or labels longer
 * than 256 bytes.
 */
struct metric *metrics_add_build_info(struct metrics *m, const char *version, const char *revision);

/*
 * The standard process metrics, read from /proc/self at each render: process_cpu_seconds_total,
 * process_resident_memory_bytes, process_virtual_memory_bytes, process_open_fds,
 * process_max_fds, process_start_time_seconds. A value that cannot be read keeps its last one.
 * Returns 0 or -ENOMEM.
 */
int metrics_add_process(struct metrics *m);

/* Renders the whole registry into a new NUL-terminated string (caller frees). */
int metrics_render(struct metrics *m, char **ret, size_t *ret_len);

#endif
