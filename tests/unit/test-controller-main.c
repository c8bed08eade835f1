/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vm-dhcp-controller program: flags, leader election through a Lease, /healthz, /readyz,
 * /metrics, and a clean stop on SIGTERM (the Lease is given up). Runs BUILD/vm-dhcp-controller
 * against the test API server.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <curl/curl.h>
#include <jansson.h>

#include "lib/util.h"
#include "tests/helpers/apiserver.h"
#include "tests/runner.h"

static char program[PATH_MAX];

static int
find_program(void)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return -1;
	self[n] = '\0';
	/* BUILD/tests/test-controller-main -> BUILD/vm-dhcp-controller */
	snprintf(program, sizeof(program), "%s/../vm-dhcp-controller", dirname(self));
	return access(program, X_OK);
}

/* Runs the program with args (NULL-terminated), stdout/stderr to log; returns the pid. */
static pid_t
spawn(const char *log, char *const args[])
{
	pid_t pid = fork();

	if (pid == 0) {
		FILE *f = freopen(log, "w", stdout);

		if (f == NULL || dup2(fileno(stdout), 2) < 0)
			_exit(127);
		execv(program, args);
		_exit(127);
	}
	return pid;
}

static int
wait_exit(pid_t pid, int timeout_s)
{
	int st = 0;

	for (int i = 0; i < timeout_s * 20; i++) {
		if (waitpid(pid, &st, WNOHANG) == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		usleep(50000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -ETIMEDOUT;
}

static int
free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

struct body {
	char buf[65536];
	size_t len;
};

static size_t
collect(char *p, size_t size, size_t n, void *userdata)
{
	struct body *b = userdata;
	size_t take = MIN(size * n, sizeof(b->buf) - 1 - b->len);

	memcpy(b->buf + b->len, p, take);
	b->len += take;
	b->buf[b->len] = '\0';
	return size * n;
}

/* GET http://127.0.0.1:port/path; returns the HTTP code (0 when no answer). */
static long
http_get(int port, const char *path, struct body *b)
{
	char url[128];
	CURL *h = curl_easy_init();
	long code = 0;

	b->len = 0;
	b->buf[0] = '\0';
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 2000L);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	if (curl_easy_perform(h) == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(h);
	return code;
}

static bool
wait_http(int port, const char *path, long want, struct body *b)
{
	for (int i = 0; i < 400; i++) { /* 20 s */
		if (http_get(port, path, b) == want)
			return true;
		usleep(50000);
	}
	return false;
}

/* spec.holderIdentity of the controller's Lease ("" when released, NULL when absent). */
static char *
lease_holder(struct test_apiserver *api)
{
	const char *holder;
	char *out = NULL, *copy;
	long code = 0;
	json_t *j;

	if (test_apiserver_request(api, "GET",
		"/apis/coordination.k8s.io/v1/namespaces/vmdhcp/leases/vm-dhcp-controller", NULL,
		NULL, &code, &out) < 0 ||
	    code != 200) {
		free(out);
		return NULL;
	}
	j = json_loads(out, 0, NULL);
	holder = json_string_value(json_object_get(json_object_get(j, "spec"), "holderIdentity"));
	copy = strdup(holder != NULL ? holder : "");
	json_decref(j);
	free(out);
	return copy;
}

static void
test_flags(void)
{
	char *help[] = { program, "--help", NULL };
	char *noimage[] = { program, "--namespace", "x", NULL };
	char *badlevel[] = { program, "--agent-image", "a", "--log-level", "loud", NULL };
	char *extra[] = { program, "--agent-image", "a", "stray", NULL };
	char log[] = "/tmp/vmdhcp-ctl-main.log";
	char text[4096] = "";
	FILE *f;

	if (find_program() < 0) {
		CU_FAIL("build/vm-dhcp-controller not built");
		return;
	}
	CU_ASSERT_EQUAL(wait_exit(spawn(log, help), 10), 0);
	f = fopen(log, "r");
	if (f != NULL) {
		size_t n = fread(text, 1, sizeof(text) - 1, f);

		text[n] = '\0';
		fclose(f);
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--agent-image"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--no-leader-election"));
	CU_ASSERT_EQUAL(wait_exit(spawn(log, noimage), 10), 2);
	CU_ASSERT_EQUAL(wait_exit(spawn(log, badlevel), 10), 2);
	CU_ASSERT_EQUAL(wait_exit(spawn(log, extra), 10), 2);
	unlink(log);
}

static void
test_leader_health_metrics(void)
{
	struct test_apiserver *api = NULL;
	char listen[32], log[] = "/tmp/vmdhcp-ctl-main-run.log";
	struct body *b = calloc(1, sizeof(*b));
	int port = free_port();
	char *holder;
	pid_t pid;

	if (find_program() < 0 || b == NULL || port < 0) {
		CU_FAIL("set-up");
		free(b);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&api, NULL), 0);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	{
		char *args[] = { program, "--kubeconfig", (char *)test_apiserver_kubeconfig(api),
			"--namespace", "vmdhcp", "--agent-image", "agent:v1", "--listen", listen,
			"--log-level", "debug", NULL };

		pid = spawn(log, args);
	}
	CU_ASSERT_TRUE(wait_http(port, "/healthz", 200, b));
	/* leads (Lease held by this process), caches synced, reconciling: ready */
	CU_ASSERT_TRUE(wait_http(port, "/readyz", 200, b));
	holder = lease_holder(api);
	CU_ASSERT_PTR_NOT_NULL(holder);
	if (holder != NULL) {
		char want[32];

		snprintf(want, sizeof(want), "_%ld", (long)pid);
		CU_ASSERT_PTR_NOT_NULL(strstr(holder, want));
	}
	free(holder);
	CU_ASSERT_EQUAL(http_get(port, "/metrics", b), 200);
	CU_ASSERT_PTR_NOT_NULL(strstr(b->buf, "vmdhcp_controller_pool_addresses"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b->buf, "vmdhcp_controller_bindings"));
	/* the reconcile loops' own metrics (count, errors, latency, queue depth) */
	CU_ASSERT_PTR_NOT_NULL(strstr(b->buf, "ippool"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b->buf, "vmnetcfg"));

	/* SIGTERM: gives the Lease up and exits 0 */
	kill(pid, SIGTERM);
	CU_ASSERT_EQUAL(wait_exit(pid, 20), 0);
	holder = lease_holder(api);
	CU_ASSERT_PTR_NOT_NULL(holder);
	if (holder != NULL)
		CU_ASSERT_STRING_EQUAL(holder, "");
	free(holder);
	test_apiserver_stop(api);
	free(b);
	unlink(log);
}

static const struct test_case main_tests[] = {
	{ "flags", test_flags },
	{ "leader, health, metrics, stop", test_leader_health_metrics },
	{ NULL, NULL },
};

const struct test_suite test_suites[] = {
	{ .name = "controller-main", .tests = main_tests },
	{ .name = NULL },
};
