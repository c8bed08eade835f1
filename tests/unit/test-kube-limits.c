/* SPDX-License-Identifier: Apache-2.0 */
/*
 * kube/limits.c: the pod's memory limit read from fake cgroup trees (v2 memory.max, v1
 * memory/memory.limit_in_bytes, "max", absent, malformed), the answer cap derived from it,
 * the VMDHCP_KUBE_MAX_ANSWER override, sizes, and the two metrics.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/kube-internal.h"
#include "lib/metrics.h"
#include "tests/runner.h"

static char root[64];

static int
suite_init(void)
{
	snprintf(root, sizeof(root), "/tmp/vmd-limits-XXXXXX");
	return mkdtemp(root) ? 0 : -1;
}

static void
clear_tree(void)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/memory.max", root);
	unlink(p);
	snprintf(p, sizeof(p), "%s/memory/memory.limit_in_bytes", root);
	unlink(p);
	snprintf(p, sizeof(p), "%s/memory", root);
	rmdir(p);
}

static int
suite_cleanup(void)
{
	clear_tree();
	return rmdir(root);
}

/* A fresh tree with file (relative to root) holding text. */
static void
tree(const char *file, const char *text)
{
	char p[256];
	FILE *f;

	clear_tree();
	if (!file)
		return;
	if (strchr(file, '/')) {
		snprintf(p, sizeof(p), "%s/memory", root);
		mkdir(p, 0755);
	}
	snprintf(p, sizeof(p), "%s/%s", root, file);
	f = fopen(p, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

static void
test_memory_limit_read(void)
{
	uint64_t v = 1;
	const char *what = NULL;

	/* cgroup v2 */
	tree("memory.max", "67108864\n");
	CU_ASSERT_EQUAL(kube_memory_limit_read(root, &v, &what), 1);
	CU_ASSERT_EQUAL(v, 67108864);
	CU_ASSERT_STRING_EQUAL(what, "cgroup v2 memory.max");
	tree("memory.max", "max\n");
	CU_ASSERT_EQUAL(kube_memory_limit_read(root, &v, &what), 0);
	CU_ASSERT_EQUAL(v, 0);
	CU_ASSERT_STRING_EQUAL(what, "cgroup v2 memory.max");
	tree("memory.max", "64M\n");
	CU_ASSERT_EQUAL(kube_memory_limit_read(root, &v, &what), -EBADMSG);
	tree("memory.max", "");
	CU_ASSERT_EQUAL(kube_memory_limit_read(root, &v, &what), -EBADMSG);
	tree("memory.max", "-5\n");
	CU_ASSERT_EQUAL(kube_memory_limit_read(root, &v, &what), -EBADMSG);
	tree("memory.max", "99999999999999999999999\n"); /* past 64 bits */
	CU_ASSERT_EQUAL(kube_memory_limit_read(root, &v, &what), -EBADMSG);
	/* cgroup v1 */
	tree("memory/memory.limit_in_bytes", "134217728\n");
	CU_ASSERT_EQUAL(kube_memory_limit_read(root, &v, &what), 1);
	CU_ASSERT_EQUAL(v, 134217728);
	CU_ASSERT_STRING_EQUAL(what, "cgroup v1 memory.limit_in_bytes");
	tree("memory/memory.limit_in_bytes", "9223372036854771712\n"); /* v1's "no limit" */
	CU_ASSERT_EQUAL(kube_memory_limit_read(root, &v, &what), 0);
	tree("memory/memory.limit_in_bytes", "-1\n");
	CU_ASSERT_EQUAL(kube_memory_limit_read(root, &v, &what), 0);
	tree("memory/memory.limit_in_bytes", "lots\n");
	CU_ASSERT_EQUAL(kube_memory_limit_read(root, &v, &what), -EBADMSG);
	/* neither: no limit, nothing named */
	tree(NULL, NULL);
	CU_ASSERT_EQUAL(kube_memory_limit_read(root, &v, &what), 0);
	CU_ASSERT_PTR_NULL(what);
	CU_ASSERT_EQUAL(kube_memory_limit_read("/nonexistent/cgroup", &v, &what), 0);
}

static void
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fputs(text, f);
	fclose(f);
}

/* A container in the host's cgroup namespace: its own cgroup, named in /proc/self/cgroup, is
 * nested under the root it sees. */
static void
test_memory_limit_nested(void)
{
	char self[256], p[512], cmd[600];
	uint64_t v = 0;
	const char *what = NULL;

	snprintf(self, sizeof(self), "%s/self-cgroup", root);
	tree("memory.max", "max\n"); /* the host's root: no limit */
	snprintf(p, sizeof(p), "mkdir -p %s/kubepods/pod1/c1 %s/memory/kubepods/x", root, root);
	CU_ASSERT_EQUAL_FATAL(system(p), 0);
	snprintf(p, sizeof(p), "%s/kubepods/pod1/c1/memory.max", root);
	write_file(p, "67108864\n");
	/* v2: 0::/path */
	write_file(self, "0::/kubepods/pod1/c1\n");
	CU_ASSERT_EQUAL(kube_memory_limit_find(root, self, &v, &what), 1);
	CU_ASSERT_EQUAL(v, 64u << 20);
	CU_ASSERT_STRING_EQUAL(what, "cgroup v2 memory.max");
	/* its own namespace: "/" is the root */
	write_file(self, "0::/\n");
	CU_ASSERT_EQUAL(kube_memory_limit_find(root, self, &v, &what), 0);
	CU_ASSERT_STRING_EQUAL(what, "cgroup v2 memory.max");
	/* a path that climbs is not followed; an absent nested file falls back to the root */
	write_file(self, "0::/kubepods/../kubepods/pod1/c1\n");
	CU_ASSERT_EQUAL(kube_memory_limit_find(root, self, &v, &what), 0);
	write_file(self, "0::/elsewhere\n");
	CU_ASSERT_EQUAL(kube_memory_limit_find(root, self, &v, &what), 0);
	CU_ASSERT_EQUAL(kube_memory_limit_find(root, "/nonexistent/self", &v, &what), 0);
	/* v1: the memory controller's line, among others */
	snprintf(p, sizeof(p), "%s/memory/kubepods/x/memory.limit_in_bytes", root);
	write_file(p, "134217728\n");
	write_file(self, "12:cpu,cpuacct:/kubepods/y\n5:memory:/kubepods/x\n0::/\n");
	CU_ASSERT_EQUAL(kube_memory_limit_find(root, self, &v, &what), 1);
	CU_ASSERT_EQUAL(v, 128u << 20);
	CU_ASSERT_STRING_EQUAL(what, "cgroup v1 memory.limit_in_bytes");
	snprintf(cmd, sizeof(cmd), "rm -rf %s/kubepods %s/memory %s", root, root, self);
	CU_ASSERT_EQUAL(system(cmd), 0);
}

static void
test_answer_limit(void)
{
	struct kube_answer_limit l;

	/* the agent's chart limit (64 Mi): a quarter */
	tree("memory.max", "67108864\n");
	CU_ASSERT_EQUAL(kube_answer_limit_compute(root, NULL, NULL, &l), 0);
	CU_ASSERT_EQUAL(l.bytes, 16u << 20);
	CU_ASSERT_EQUAL(l.memory_limit, 64u << 20);
	CU_ASSERT_STRING_EQUAL(l.source, "a quarter of the cgroup v2 memory.max of 64 MiB");
	/* the controller's (128 Mi) through cgroup v1 */
	tree("memory/memory.limit_in_bytes", "134217728\n");
	CU_ASSERT_EQUAL(kube_answer_limit_compute(root, NULL, "", &l), 0);
	CU_ASSERT_EQUAL(l.bytes, 32u << 20);
	CU_ASSERT_STRING_EQUAL(
	    l.source, "a quarter of the cgroup v1 memory.limit_in_bytes of 128 MiB");
	/* bounded: at least 1 MiB, at most 256 MiB */
	tree("memory.max", "2097152\n");
	CU_ASSERT_EQUAL(kube_answer_limit_compute(root, NULL, NULL, &l), 0);
	CU_ASSERT_EQUAL(l.bytes, 1u << 20);
	CU_ASSERT_STRING_EQUAL(l.source, "a quarter of the cgroup v2 memory.max of 2 MiB, bounded");
	tree("memory.max", "17179869184\n");
	CU_ASSERT_EQUAL(kube_answer_limit_compute(root, NULL, NULL, &l), 0);
	CU_ASSERT_EQUAL(l.bytes, 256u << 20);
	/* no limit: the fixed default */
	tree("memory.max", "max\n");
	CU_ASSERT_EQUAL(kube_answer_limit_compute(root, NULL, NULL, &l), 0);
	CU_ASSERT_EQUAL(l.bytes, 64u << 20);
	CU_ASSERT_STRING_EQUAL(
	    l.source, "the default: no cgroup memory limit in cgroup v2 memory.max");
	tree(NULL, NULL);
	CU_ASSERT_EQUAL(kube_answer_limit_compute(root, NULL, NULL, &l), 0);
	CU_ASSERT_EQUAL(l.bytes, 64u << 20);
	CU_ASSERT_STRING_EQUAL(l.source, "the default: no cgroup memory limit");
	/* unreadable: the default and why */
	tree("memory.max", "junk\n");
	CU_ASSERT_EQUAL(kube_answer_limit_compute(root, NULL, NULL, &l), -EBADMSG);
	CU_ASSERT_EQUAL(l.bytes, 64u << 20);
	CU_ASSERT_PTR_NOT_NULL(strstr(l.source, "unreadable"));
	/* the override wins over the cgroup */
	tree("memory.max", "67108864\n");
	CU_ASSERT_EQUAL(kube_answer_limit_compute(root, NULL, "8Mi", &l), 0);
	CU_ASSERT_EQUAL(l.bytes, 8u << 20);
	CU_ASSERT_STRING_EQUAL(l.source, "VMDHCP_KUBE_MAX_ANSWER=8Mi");
	CU_ASSERT_EQUAL(kube_answer_limit_compute(root, NULL, "100", &l), -EINVAL); /* < 4096 */
	CU_ASSERT_EQUAL(l.bytes, 64u << 20);
	CU_ASSERT_EQUAL(kube_answer_limit_compute(root, NULL, "lots", &l), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(l.source, "VMDHCP_KUBE_MAX_ANSWER=lots is not a size"));
}

static void
test_sizes(void)
{
	uint64_t v;
	char s[32];

	CU_ASSERT_EQUAL(kube_parse_size("1048576", &v), 0);
	CU_ASSERT_EQUAL(v, 1048576);
	CU_ASSERT_EQUAL(kube_parse_size("64Mi", &v), 0);
	CU_ASSERT_EQUAL(v, 64u << 20);
	CU_ASSERT_EQUAL(kube_parse_size("2G", &v), 0);
	CU_ASSERT_EQUAL(v, 2000000000u);
	CU_ASSERT_EQUAL(kube_parse_size("5Ki", &v), 0);
	CU_ASSERT_EQUAL(v, 5120);
	CU_ASSERT_EQUAL(kube_parse_size("", &v), -EINVAL);
	CU_ASSERT_EQUAL(kube_parse_size("-1", &v), -EINVAL);
	CU_ASSERT_EQUAL(kube_parse_size("12 Mi", &v), -EINVAL);
	CU_ASSERT_EQUAL(kube_parse_size("1Ti", &v), -EINVAL);
	CU_ASSERT_EQUAL(kube_parse_size("99999999999999999999Gi", &v), -EINVAL);
	CU_ASSERT_EQUAL(kube_parse_size("17179869184Gi", &v), -EINVAL); /* wraps */
	kube_format_size(512, s, sizeof(s));
	CU_ASSERT_STRING_EQUAL(s, "512 bytes");
	kube_format_size(64u << 20, s, sizeof(s));
	CU_ASSERT_STRING_EQUAL(s, "64 MiB");
	kube_format_size(1000000, s, sizeof(s));
	CU_ASSERT_STRING_EQUAL(s, "976.6 KiB");
	kube_format_size((uint64_t)3 << 29, s, sizeof(s));
	CU_ASSERT_STRING_EQUAL(s, "1.5 GiB");
}

static void
test_metrics(void)
{
	struct metrics *m = NULL;
	char *text = NULL;
	size_t len;

	kube_answer_limit_set(16u << 20, "set by the test");
	CU_ASSERT_EQUAL_FATAL(metrics_new(&m), 0);
	CU_ASSERT_EQUAL(kube_metrics_add(m), 0);
	CU_ASSERT_EQUAL(metrics_render(m, &text, &len), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nvmdhcp_api_answer_limit_bytes 16777216\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nvmdhcp_api_answers_too_large_total 0\n"));
	free(text);
	kube_answer_refused_count();
	CU_ASSERT_EQUAL(metrics_render(m, &text, &len), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\nvmdhcp_api_answers_too_large_total 1\n"));
	free(text);
	metrics_free(m);
}

static const struct test_case tests[] = {
    {"memory limit: cgroup v2, v1, max, absent, malformed", test_memory_limit_read},
    {"memory limit: the own cgroup nested (host cgroup namespace)", test_memory_limit_nested},
    {"answer cap: a quarter of the limit, bounds, default, override", test_answer_limit},
    {"sizes: parsed and formatted", test_sizes},
    {"metrics: the cap and the answers refused", test_metrics},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "kube-limits", .init = suite_init, .cleanup = suite_cleanup, .tests = tests},
    {.name = NULL},
};
