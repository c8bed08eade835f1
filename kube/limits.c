/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The largest answer of the API server the client holds in memory: a list or get body (the
 * call layer, kube/call.c) and one watch event (the framer, kube/watch.c). A hostile or
 * broken server could otherwise push the process past its pod's memory limit (an endless
 * list body, a single event of gigabytes) and have it OOM-killed over and over.
 *
 * The cap follows the pod's memory limit, read from the cgroup the process runs in (a
 * container sees its own cgroup at /sys/fs/cgroup; in the host's cgroup namespace, its own is
 * found through /proc/self/cgroup): a quarter of it, so the body, its
 * decoded objects and the rest of the process fit. Without a limit, a fixed 64 MiB. The
 * environment variable VMDHCP_KUBE_MAX_ANSWER (bytes, or with a K/M/G or Ki/Mi/Gi suffix)
 * overrides both.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube-internal.h"
#include "lib/log.h"
#include "lib/metrics.h"

#define DEFAULT_ANSWER ((uint64_t)64 << 20)
#define MIN_ANSWER ((uint64_t)1 << 20)
#define MAX_ANSWER ((uint64_t)256 << 20)
/* cgroup v1 reports "no limit" as the largest page-aligned signed 64-bit value */
#define V1_UNLIMITED ((uint64_t)1 << 60)

static struct {
	bool init;
	struct kube_answer_limit lim;
	uint64_t refused;
} g;

/* The first line of path, trimmed: 1, 0 when the file is absent, negative errno. */
static int
read_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return errno == ENOENT || errno == ENOTDIR ? 0 : -errno;
	if (!fgets(out, (int)len, f)) {
		int e = ferror(f) ? -EIO : -EBADMSG;

		fclose(f);
		return e;
	}
	fclose(f);
	n = strcspn(out, "\n");
	out[n] = '\0';
	while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t' || out[n - 1] == '\r'))
		out[--n] = '\0';
	return 1;
}

static int
parse_u64(const char *s, uint64_t *ret)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EBADMSG;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EBADMSG;
	*ret = v;
	return 0;
}

/*
 * One limit file: cgroup v2 memory.max ("max" or bytes) or v1 memory.limit_in_bytes (bytes,
 * a huge value or -1 for none). *present false when the file is absent (then 0).
 */
static int
limit_file(const char *path, bool v2, uint64_t *ret, bool *present)
{
	char line[64];
	uint64_t v;
	int r = read_line(path, line, sizeof(line));

	*present = r != 0;
	*ret = 0;
	if (r <= 0)
		return r;
	if (v2 && strcmp(line, "max") == 0)
		return 0;
	if (!v2 && line[0] == '-') /* -1: no limit, as some kernels print it */
		return strcmp(line, "-1") == 0 ? 0 : -EBADMSG;
	if (parse_u64(line, &v) < 0)
		return -EBADMSG;
	if (v == 0 || (!v2 && v >= V1_UNLIMITED))
		return 0;
	*ret = v;
	return 1;
}

int
kube_memory_limit_read(const char *root, uint64_t *ret, const char **ret_what)
{
	char path[4096];
	bool present;
	int r;

	*ret_what = NULL;
	snprintf(path, sizeof(path), "%s/memory.max", root);
	r = limit_file(path, true, ret, &present);
	if (present) {
		*ret_what = "cgroup v2 memory.max";
		return r;
	}
	snprintf(path, sizeof(path), "%s/memory/memory.limit_in_bytes", root);
	r = limit_file(path, false, ret, &present);
	if (present)
		*ret_what = "cgroup v1 memory.limit_in_bytes";
	return r;
}

/*
 * The process's own cgroup from self_cgroup (/proc/self/cgroup): the cgroup v2 line "0::/path",
 * else the v1 memory controller's "N:...memory...:/path". 1 and path, 0 when none (or "/").
 */
static int
own_cgroup(const char *self_cgroup, char *out, size_t len, bool *v1)
{
	char line[1024];
	FILE *f = self_cgroup ? fopen(self_cgroup, "re") : NULL;
	int found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL, *p;
		bool is_v2, is_mem = false;

		if (!c2)
			continue;
		line[strcspn(line, "\n")] = '\0';
		*c2 = '\0';
		p = c2 + 1;
		is_v2 = strncmp(line, "0:", 2) == 0 && c1 + 1 == c2;
		for (char *tok = strtok(c1 + 1, ","); tok && !is_v2; tok = strtok(NULL, ","))
			is_mem = is_mem || strcmp(tok, "memory") == 0;
		if ((!is_v2 && !is_mem) || p[0] != '/' || strstr(p, "/..") || p[1] == '\0')
			continue;
		snprintf(out, len, "%s", p);
		*v1 = is_mem;
		found = 1;
		if (is_mem)
			break; /* v1's memory controller holds the limit on a hybrid host */
	}
	fclose(f);
	return found;
}

int
kube_memory_limit_find(
    const char *root, const char *self_cgroup, uint64_t *ret, const char **ret_what)
{
	char own[512], path[4096];
	bool v1 = false, present;
	int r;

	/* a container in the host's cgroup namespace sees every cgroup: its own is nested */
	if (own_cgroup(self_cgroup, own, sizeof(own), &v1)) {
		if (v1)
			snprintf(
			    path, sizeof(path), "%s/memory%s/memory.limit_in_bytes", root, own);
		else
			snprintf(path, sizeof(path), "%s%s/memory.max", root, own);
		r = limit_file(path, !v1, ret, &present);
		if (present) {
			*ret_what = v1 ? "cgroup v1 memory.limit_in_bytes" : "cgroup v2 memory.max";
			return r;
		}
	}
	return kube_memory_limit_read(root, ret, ret_what);
}

int
kube_parse_size(const char *s, uint64_t *ret)
{
	static const struct {
		const char *suffix;
		unsigned shift;
		uint64_t mult;
	} units[] = {
	    {"", 0, 1},
	    {"K", 0, 1000},
	    {"M", 0, 1000000},
	    {"G", 0, 1000000000},
	    {"Ki", 10, 1},
	    {"Mi", 20, 1},
	    {"Gi", 30, 1},
	};
	char *end;
	unsigned long long v;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		uint64_t m = units[i].mult << units[i].shift;

		if (strcmp(end, units[i].suffix) != 0)
			continue;
		if (v > UINT64_MAX / m)
			return -EINVAL;
		*ret = v * m;
		return 0;
	}
	return -EINVAL;
}

/* "64 MiB", "1.5 GiB", "976.6 KiB", "512 bytes" (one decimal, none when it is 0) */
void
kube_format_size(uint64_t n, char *out, size_t len)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
	double v = (double)n;
	size_t u = 0;

	if (n < 1024) {
		snprintf(out, len, "%llu bytes", (unsigned long long)n);
		return;
	}
	v /= 1024;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	snprintf(out, len, "%.1f %s", v, units[u]);
	{
		char *dot = strstr(out, ".0 "); /* "300 MiB", not "300.0 MiB" */

		if (dot)
			memmove(dot, dot + 2, strlen(dot + 2) + 1);
	}
}

int
kube_answer_limit_compute(const char *cgroup_root, const char *self_cgroup, const char *env,
    struct kube_answer_limit *ret)
{
	char a[32], b[32];
	uint64_t mem = 0, v;
	const char *what = NULL;
	int r;

	memset(ret, 0, sizeof(*ret));
	if (env && *env) {
		if (kube_parse_size(env, &v) < 0 || v < 4096) {
			snprintf(ret->source, sizeof(ret->source),
			    "VMDHCP_KUBE_MAX_ANSWER=%.32s is not a size of at least 4096 bytes",
			    env);
			ret->bytes = DEFAULT_ANSWER;
			return -EINVAL;
		}
		ret->bytes = v;
		snprintf(ret->source, sizeof(ret->source), "VMDHCP_KUBE_MAX_ANSWER=%.32s", env);
		return 0;
	}
	r = kube_memory_limit_find(cgroup_root, self_cgroup, &mem, &what);
	if (r <= 0) {
		ret->bytes = DEFAULT_ANSWER;
		if (r < 0)
			snprintf(ret->source, sizeof(ret->source),
			    "the default: the cgroup memory limit under %.64s is unreadable (%s)",
			    cgroup_root, strerror(-r));
		else
			snprintf(ret->source, sizeof(ret->source),
			    "the default: no cgroup memory limit%s%s", what ? " in " : "",
			    what ? what : "");
		return r < 0 ? r : 0;
	}
	ret->memory_limit = mem;
	v = mem / 4;
	if (v < MIN_ANSWER)
		v = MIN_ANSWER;
	if (v > MAX_ANSWER)
		v = MAX_ANSWER;
	ret->bytes = v;
	kube_format_size(mem, a, sizeof(a));
	kube_format_size(v, b, sizeof(b));
	snprintf(ret->source, sizeof(ret->source), "a quarter of the %s of %s%s", what, a,
	    v != mem / 4 ? ", bounded" : "");
	return 0;
}

const struct kube_answer_limit *
kube_answer_limit(void)
{
	if (!g.init) {
		const char *root = getenv("VMDHCP_CGROUP_ROOT");
		/* where the cgroup file system is mounted, when not at /sys/fs/cgroup (the tests
		 * give a tree of their own); then /proc/self/cgroup is not followed */
		bool fake = root && *root;

		if (kube_answer_limit_compute(fake ? root : "/sys/fs/cgroup",
			fake ? NULL : "/proc/self/cgroup", getenv("VMDHCP_KUBE_MAX_ANSWER"),
			&g.lim) < 0)
			log_warn("API answer cap: %s; using %llu bytes", g.lim.source,
			    (unsigned long long)g.lim.bytes);
		g.init = true;
	}
	return &g.lim;
}

void
kube_answer_limit_set(uint64_t bytes, const char *source)
{
	g.init = true;
	g.lim.bytes = bytes;
	g.lim.memory_limit = 0;
	snprintf(g.lim.source, sizeof(g.lim.source), "%s", source ? source : "set by the program");
}

void
kube_answer_refused_count(void)
{
	g.refused++;
}

uint64_t
kube_answers_refused(void)
{
	return g.refused;
}

static void
emit_refused(struct metric_emitter *e, void *userdata)
{
	metric_emit(e, NULL, 0, (double)g.refused);
}

static void
emit_limit(struct metric_emitter *e, void *userdata)
{
	metric_emit(e, NULL, 0, (double)kube_answer_limit()->bytes);
}

int
kube_metrics_add(struct metrics *m)
{
	if (!metrics_add_dynamic(m, METRIC_COUNTER, "vmdhcp_api_answers_too_large_total",
		"API server answers (list or get bodies, single watch events) refused for being "
		"larger than vmdhcp_api_answer_limit_bytes",
		emit_refused, NULL) ||
	    !metrics_add_dynamic(m, METRIC_GAUGE, "vmdhcp_api_answer_limit_bytes",
		"The largest API server answer held in memory (a quarter of the cgroup memory "
		"limit, or VMDHCP_KUBE_MAX_ANSWER)",
		emit_limit, NULL))
		return -errno;
	return 0;
}
