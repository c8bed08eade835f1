/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A hostile or broken API server answers a list with a body that does not end (the test API
 * server's "flood" fault), then a watch with one event that does not end. The real programs,
 * BUILD/vm-dhcp-agent (Kubernetes mode, --dry-run: no sockets needed) and
 * BUILD/vm-dhcp-controller, run against it with a fake cgroup tree that gives them the chart's
 * memory limits (charts/vm-dhcp/values.yaml: agent 64Mi, controller 128Mi). Each must:
 *   - keep its peak resident memory (VmHWM) under that limit;
 *   - refuse each answer at the cap (a quarter of the limit) with a warning that names the
 *     URL, the size seen, the cap and where the cap comes from, at most one per attempt;
 *   - back off between attempts instead of fetching the answer again at once (each gap at
 *     least the first backoff step, 0.8 s jittered down to 0.4 s: a lower bound, which load
 *     only makes longer);
 *   - count the refusals in vmdhcp_api_answers_too_large_total and show the cap in
 *     vmdhcp_api_answer_limit_bytes;
 *   - work again once the server answers normally.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <jansson.h>

#include "tests/helpers/apiserver.h"
#include "tests/helpers/port.h"
#include "tests/helpers/proc.h"
#include "tests/runner.h"

#define POOLS "/apis/network.harvesterhci.io/v1alpha1/namespaces/default/ippools"
/* The programs next to an ASan build are ASan builds too: shadow memory and the quarantine of
 * freed blocks (256 MiB by default) make their resident size no measure of the program's. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define ALL_POOLS "/apis/network.harvesterhci.io/v1alpha1/ippools"
#define MIB (1024.0 * 1024.0)

static struct test_apiserver *api;
static char dir[64]; /* the fake cgroup trees and the logs */

static int
suite_init(void)
{
	char crds[PATH_MAX];

	snprintf(dir, sizeof(dir), "/tmp/vmd-flood-XXXXXX");
	if (!mkdtemp(dir) || test_apiserver_start(&api, "--log-level warn") < 0)
		return -1;
	snprintf(crds, sizeof(crds), "%s/../../crds", test_data_dir());
	return test_apiserver_apply_crds(api, crds) < 0 ? -1 : 0;
}

static int
suite_cleanup(void)
{
	char cmd[128];

	test_apiserver_stop(api);
	if (getenv("VMDHCP_TEST_KEEP")) { /* the programs' logs, to look at */
		fprintf(stderr, "kept %s\n", dir);
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* BUILD/tests/test-api-flood -> BUILD/NAME */
static int
find_program(const char *name, char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return -1;
	self[n] = '\0';
	snprintf(out, len, "%s/../%s", dirname(self), name);
	return access(out, X_OK);
}

/* DIR/NAME/memory.max = limit: what the program reads as its cgroup */
static void
fake_cgroup(const char *name, const char *limit, char *root, size_t len)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(root, len, "%s/%s", dir, name);
	mkdir(root, 0755);
	snprintf(p, sizeof(p), "%s/memory.max", root);
	f = fopen(p, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	fprintf(f, "%s\n", limit);
	fclose(f);
}

/* The child inherits $VMDHCP_CGROUP_ROOT from the test (set around the run). */
static pid_t
spawn(const char *program, char *const args[], const char *log)
{
	pid_t pid = fork();

	if (pid == 0) {
		FILE *f = freopen(log, "w", stdout);

		if (f == NULL || dup2(fileno(stdout), 2) < 0)
			_exit(127);
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a crashed test */
		unsetenv("VMDHCP_KUBE_MAX_ANSWER");
		execv(program, args);
		_exit(127);
	}
	return pid;
}

static int
stop(pid_t pid)
{
	int st = 0;

	kill(pid, SIGTERM);
	for (int i = 0; i < 400; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(50000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -ETIMEDOUT;
}

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n)
		buf[0] = '\0';
	fclose(f);
	return buf;
}

static int
count_of(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* Lines of text holding needle, each also holding every one of musts. */
static int
lines_with(const char *text, const char *needle, const char *const *musts, size_t n_musts, int *bad)
{
	int n = 0;

	*bad = 0;
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		char *line = strndup(l, len);

		if (strstr(line, needle)) {
			n++;
			for (size_t i = 0; i < n_musts; i++)
				if (!strstr(line, musts[i])) {
					(*bad)++;
					fprintf(
					    stderr, "line without \"%s\": %s\n", musts[i], line);
					break;
				}
		}
		free(line);
		l += len + (e ? 1 : 0);
	}
	return n;
}

/* The server's flood counters. */
static void
flood_stats(long long *floods, long long *bytes)
{
	long code = 0;
	char *body = NULL;
	json_t *j;

	*floods = *bytes = -1;
	if (test_apiserver_request(api, "GET", "/_test/stats", NULL, NULL, &code, &body) < 0)
		return;
	j = json_loads(body, 0, NULL);
	free(body);
	*floods = (long long)json_integer_value(json_object_get(j, "floods"));
	*bytes = (long long)json_integer_value(json_object_get(j, "floodBytes"));
	json_decref(j);
}

/* GET http://127.0.0.1:port/path into buf; the status, or -1. */
static int
http_get(int port, const char *path, char *buf, size_t len)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), status = -1;
	size_t got = 0;
	char req[256];
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: x\r\n\r\n", path);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(fd);
		return -1;
	}
	while (got + 1 < len && (n = read(fd, buf + got, len - got - 1)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(fd);
	if (sscanf(buf, "HTTP/1.%*d %d", &status) != 1)
		return -1;
	return status;
}

struct run {
	const char *what; /* "agent", "controller" */
	long limit_kib;	  /* the chart's memory limit */
	const char
	    *cap_text; /* "the cap is 16 MiB (a quarter of the cgroup v2 memory.max of 64 MiB" */
	const char *cap_bytes;	 /* "16777216" */
	const char *works_again; /* the informer's recovery line */
	const char *path;	 /* the IPPools' collection the program lists */
	int metrics_port;
	pid_t pid;
	char log[PATH_MAX];
	long peak_kib;
};

/*
 * Polls (50 ms) until done(text) or 120 s: the program's peak memory sampled throughout,
 * the time each new flooded answer started recorded into starts[].
 */
static bool
watch_run(struct run *r, bool (*done)(const char *text, long long floods), double *starts,
    int max_starts, int *n_starts)
{
	long long floods = 0, bytes, seen = -1;
	double end = now_s() + 120;
	bool ok = false;

	while (now_s() < end) {
		char *text = slurp(r->log);
		long hwm = test_proc_status_kib(r->pid, "VmHWM:");

		if (hwm > r->peak_kib)
			r->peak_kib = hwm;
		flood_stats(&floods, &bytes);
		if (seen < 0)
			seen = floods;
		while (seen < floods) {
			if (*n_starts < max_starts)
				starts[(*n_starts)++] = now_s();
			seen++;
		}
		ok = done(text, floods);
		free(text);
		if (ok || hwm < 0)
			break;
		usleep(50000);
	}
	return ok;
}

static long long flood_base;

/* four floods, and the line of the fourth failure (1st, 2nd, 4th are logged) */
static bool
list_refused_4(const char *text, long long floods)
{
	return floods - flood_base >= 4 && count_of(text, "list failed: answer too large") >= 3;
}

static const char *works_again_needle;

static bool
works_again(const char *text, long long floods)
{
	return strstr(text, works_again_needle) != NULL;
}

static bool
watch_refused(const char *text, long long floods)
{
	return strstr(text, "event too large: more than") != NULL;
}

static bool
works_again_twice(const char *text, long long floods)
{
	return count_of(text, works_again_needle) >= 2;
}

static void
check_metrics(struct run *r)
{
	char *buf = malloc(1 << 20);
	char want[128];

	CU_ASSERT_EQUAL(http_get(r->metrics_port, "/metrics", buf, 1 << 20), 200);
	snprintf(want, sizeof(want), "\nvmdhcp_api_answer_limit_bytes %s\n", r->cap_bytes);
	CU_ASSERT_PTR_NOT_NULL(strstr(buf, want));
	{
		const char *p = strstr(buf, "\nvmdhcp_api_answers_too_large_total ");

		CU_ASSERT_PTR_NOT_NULL(p);
		if (p)
			CU_ASSERT(atoi(p + strlen("\nvmdhcp_api_answers_too_large_total ")) >= 4);
	}
	free(buf);
}

static void
run_flood(struct run *r, char *const args[], const char *program)
{
	double starts[16];
	int n_starts = 0, bad = 0, lines;
	long long floods, bytes, b0;
	char *text;
	const char *musts[] = {"GET https://127.0.0.1:", r->path, "more than ", r->cap_text,
	    "VMDHCP_KUBE_MAX_ANSWER overrides it"};
	char fault[256];

	/* the next four lists of IPPools: an endless body each */
	flood_stats(&flood_base, &b0);
	snprintf(fault, sizeof(fault), "flood?count=4&path=%s", r->path);
	CU_ASSERT_EQUAL_FATAL(test_apiserver_fault(api, fault), 0);
	r->pid = spawn(program, args, r->log);
	CU_ASSERT_FATAL(r->pid > 0);
	CU_ASSERT_TRUE(watch_run(r, list_refused_4, starts, 16, &n_starts));
	text = slurp(r->log);
	/* a warning per logged failure, each naming the URL, the size, the cap and its source */
	lines = lines_with(text, "list failed: answer too large", musts, 5, &bad);
	CU_ASSERT(lines >= 3);
	CU_ASSERT(lines <= 4); /* at most one per attempt (1st, 2nd, 4th: 3) */
	CU_ASSERT_EQUAL(bad, 0);
	/* smaller pages after a page too large */
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "objects next]"));
	/* backoff between attempts: never fetched again at once */
	CU_ASSERT(n_starts >= 4);
	for (int i = 1; i < n_starts && i < 4; i++) {
		if (starts[i] - starts[i - 1] < 0.3)
			fprintf(stderr, "%s: attempt %d only %.3f s after the previous one\n",
			    r->what, i + 1, starts[i] - starts[i - 1]);
		CU_ASSERT(starts[i] - starts[i - 1] >= 0.3);
	}
	free(text);
	/* each answer read only up to the cap (plus what the sockets held) */
	flood_stats(&floods, &bytes);
	CU_ASSERT(floods - flood_base >= 4);
	CU_ASSERT((double)(bytes - b0) <=
		  (double)(floods - flood_base) * ((double)atoll(r->cap_bytes) + 16 * MIB));
	/* the floods are over: the informer lists again and works */
	works_again_needle = r->works_again;
	CU_ASSERT_TRUE(watch_run(r, works_again, starts, 16, &n_starts));
	check_metrics(r);
}

/* One watch event without end: refused at the cap, the watch fails, listed again. */
static void
run_watch_flood(struct run *r)
{
	double starts[4];
	int n = 0, bad = 0;
	char *text;
	const char *musts[] = {"watch failed: answer too large",
	    "watch of ippools: event too large: more than ", r->cap_text};

	CU_ASSERT_EQUAL_FATAL(test_apiserver_fault(api, "flood?count=1&path=" POOLS), 0);
	CU_ASSERT_EQUAL(test_apiserver_fault(api, "close-watches"), 0); /* watched again at once */
	CU_ASSERT_TRUE(watch_run(r, watch_refused, starts, 4, &n));
	works_again_needle = r->works_again;
	CU_ASSERT_TRUE(watch_run(r, works_again_twice, starts, 4, &n));
	text = slurp(r->log);
	CU_ASSERT_EQUAL(lines_with(text, "event too large: more than", musts, 3, &bad), 1);
	CU_ASSERT_EQUAL(bad, 0);
	free(text);
}

static void
finish(struct run *r)
{
	int rc = stop(r->pid);

	fprintf(stderr, "%s: peak resident memory %.1f MiB (limit %.0f MiB)\n", r->what,
	    (double)r->peak_kib / 1024, (double)r->limit_kib / 1024);
	CU_ASSERT(r->peak_kib > 0);
	if (SANITIZED)
		fprintf(stderr,
		    "%s: sanitizer build, the memory bound is checked by the plain "
		    "build only\n",
		    r->what);
	else if (getenv("VALGRIND") != NULL && strcmp(getenv("VALGRIND"), "1") == 0)
		/* tests/run-tests.sh's valgrind pass: this binary crawls while the program it
		 * floods runs at full speed (once seen 65.6 MiB, the wait for its answers
		 * stretched); the bound is the plain pass's */
		fprintf(stderr,
		    "%s: valgrind pass, the memory bound is checked by the plain pass\n", r->what);
	else
		CU_ASSERT(r->peak_kib < r->limit_kib);
	CU_ASSERT_EQUAL(rc, 0);
}

static void
test_agent(void)
{
	char program[PATH_MAX], cgroup[PATH_MAX], listen[32];
	struct run r = {
	    .what = "agent",
	    .limit_kib = 64 * 1024,
	    .cap_text = "the cap is 16 MiB (a quarter of the cgroup v2 memory.max of 64 MiB",
	    .cap_bytes = "16777216",
	    .works_again = "IPPool informer: list works again",
	    .path = POOLS,
	};

	if (find_program("vm-dhcp-agent", program, sizeof(program)) < 0) {
		CU_FAIL("vm-dhcp-agent not built");
		return;
	}
	fake_cgroup("agent", "67108864", cgroup, sizeof(cgroup));
	r.metrics_port = test_free_port();
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", r.metrics_port);
	snprintf(r.log, sizeof(r.log), "%s/agent.log", dir);
	{
		char *args[] = {program, "--ippool-ref", "default/flood-pool", "--kubeconfig",
		    (char *)test_apiserver_kubeconfig(api), "--dry-run", "--listen", listen, NULL};
		setenv("VMDHCP_CGROUP_ROOT", cgroup, 1);
		run_flood(&r, args, program);
		if (r.pid > 0) {
			run_watch_flood(&r);
			finish(&r);
		}
		unsetenv("VMDHCP_CGROUP_ROOT");
	}
}

static void
test_controller(void)
{
	char program[PATH_MAX], cgroup[PATH_MAX], listen[32];
	struct run r = {
	    .what = "controller",
	    .limit_kib = 128 * 1024,
	    .cap_text = "the cap is 32 MiB (a quarter of the cgroup v2 memory.max of 128 MiB",
	    .cap_bytes = "33554432",
	    .works_again = "IPPool informer: list works again",
	    .path = ALL_POOLS,
	};

	if (find_program("vm-dhcp-controller", program, sizeof(program)) < 0) {
		CU_FAIL("vm-dhcp-controller not built");
		return;
	}
	fake_cgroup("controller", "134217728", cgroup, sizeof(cgroup));
	r.metrics_port = test_free_port();
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", r.metrics_port);
	snprintf(r.log, sizeof(r.log), "%s/controller.log", dir);
	{
		char *args[] = {program, "--kubeconfig", (char *)test_apiserver_kubeconfig(api),
		    "--namespace", "vmdhcp", "--agent-image", "agent:v1", "--listen", listen,
		    "--no-leader-election", NULL};

		setenv("VMDHCP_CGROUP_ROOT", cgroup, 1);
		run_flood(&r, args, program);
		if (r.pid > 0)
			finish(&r);
		unsetenv("VMDHCP_CGROUP_ROOT");
	}
}

static const struct test_case tests[] = {
    {"agent: endless list and watch answers under 64Mi, backoff, one line each", test_agent},
    {"controller: endless list answers under 128Mi, backoff, one line each", test_controller},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "api-flood", .init = suite_init, .cleanup = suite_cleanup, .tests = tests},
    {.name = NULL},
};
