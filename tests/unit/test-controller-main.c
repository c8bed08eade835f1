/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The vm-dhcp-controller program: flags, leader election through a Lease, /healthz, /readyz,
 * /metrics, and a clean stop on SIGTERM (the Lease is given up). Runs BUILD/vm-dhcp-controller
 * against the test API server. Two processes: exactly one holds the Lease and reconciles, the
 * other stays idle until the leader is SIGKILLed, then takes the Lease over once it expired
 * (15 s: the program has no lease flags) and binds what is created afterwards.
 * --uninstall (the chart's post-delete hook): waits while a controller holds the Lease (and
 * times out with one line), then deletes the agent Deployments of its namespace and removes
 * the controller's finalizers, leaving foreign Deployments and finalizers alone.
 *
 * Size: about 1700 lines, one file on purpose: one binary that starts the program and the test
 * API server once for all its cases (flags, probes, the Lease, --uninstall).
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
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "lib/util.h"
#include "tests/helpers/apiserver.h"
#include "tests/helpers/port.h"
#include "tests/runner.h"

/* /tmp/NAME with this process's pid: the unit, ASan and valgrind runs may overlap */
static void
tmpname(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "/tmp/%ld-%s", (long)getpid(), name);
}

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
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive a crashed test */
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

struct body {
	char buf[65536];
	size_t len;
};

/* Occurrences of needle in text. */
static int
count_of(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* Debian's, or the one scripts/install-deps unpacks from its package; NULL when neither. */
static const char *
promtool(void)
{
	static const char *const paths[] = {
	    "/var/cache/vm-dhcp/promtool/promtool", "/usr/bin/promtool"};

	for (size_t i = 0; i < ELEMENTSOF(paths); i++)
		if (access(paths[i], X_OK) == 0)
			return paths[i];
	return NULL;
}

/* `promtool check metrics` accepts a scrape (true when promtool is not installed). */
static bool
promtool_accepts(const struct body *b, const char *tag)
{
	char path[80], cmd[200];
	FILE *f;
	int rc;

	if (promtool() == NULL)
		return true;
	snprintf(path, sizeof(path), "/tmp/%ld-vmdhcp-ctl-main-%s.prom", (long)getpid(), tag);
	if ((f = fopen(path, "w")) == NULL)
		return false;
	fwrite(b->buf, 1, b->len, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "%s check metrics <%s >&2", promtool(), path);
	rc = system(cmd);
	if (rc != 0)
		fprintf(stderr, "promtool refused the %s scrape:\n%s\n", tag, b->buf);
	unlink(path);
	return rc == 0;
}

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
		"/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/vm-dhcp-controllers",
		NULL, NULL, &code, &out) < 0 ||
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

static void read_log(const char *log, char *text, size_t len);

static void
test_flags(void)
{
	char *help[] = {program, "--help", NULL};
	char *noimage[] = {program, "--namespace", "x", NULL};
	char *badlevel[] = {program, "--agent-image", "a", "--log-level", "loud", NULL};
	char *extra[] = {program, "--agent-image", "a", "stray", NULL};
	char *unknown[] = {program, "--agent-image", "a", "--nope", NULL};
	char *novalue[] = {program, "--agent-image", "a", "--agent-interface", NULL};
	char log[80];
	tmpname(log, sizeof(log), "vmdhcp-ctl-main.log");
	char text[16384] = "";
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
	/* the Go project's names (cmd/controller/root.go) are listed too */
	{
		static const char *const up[] = {"\n  --image IMAGE ",
		    "\n  --service-account-name SA ", "\n  --no-agent ", "\n  --no-dhcp ",
		    "\n  --name NAME ", "\n  --debug ", "\n  --trace ", "$AGENT_IMAGE",
		    "$AGENT_NAMESPACE", "$AGENT_SERVICE_ACCOUNT_NAME", "$VM_DHCP_CONTROLLER_NAME",
		    "$VM_DHCP_CONTROLLER_DEBUG", "$VM_DHCP_CONTROLLER_TRACE",
		    "\n  --lease-namespace NS ", "\n  --lease-name NAME "};

		for (size_t i = 0; i < ELEMENTSOF(up); i++)
			CU_ASSERT_PTR_NOT_NULL(strstr(text, up[i]));
	}
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--enable-cache-dump-api"));
	CU_ASSERT_EQUAL(strncmp(text, "usage: vm-dhcp-controller --agent-image IMAGE", 45), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "\n       vm-dhcp-controller --uninstall "));
	/* each refusal: exit 2 and one line naming what is wrong, no usage dump */
	CU_ASSERT_EQUAL(wait_exit(spawn(log, noimage), 10), 2);
	read_log(log, text, sizeof(text));
	CU_ASSERT_STRING_EQUAL(
	    text, "vm-dhcp-controller: --agent-image is required (try --help)\n");
	CU_ASSERT_EQUAL(wait_exit(spawn(log, badlevel), 10), 2);
	read_log(log, text, sizeof(text));
	CU_ASSERT_STRING_EQUAL(text, "vm-dhcp-controller: --log-level: \"loud\" is not error, "
				     "warn, info or debug\n");
	CU_ASSERT_EQUAL(wait_exit(spawn(log, extra), 10), 2);
	read_log(log, text, sizeof(text));
	CU_ASSERT_STRING_EQUAL(
	    text, "vm-dhcp-controller: unexpected argument stray (try --help)\n");
	CU_ASSERT_EQUAL(wait_exit(spawn(log, unknown), 10), 2);
	read_log(log, text, sizeof(text));
	CU_ASSERT_STRING_EQUAL(text, "vm-dhcp-controller: unknown flag --nope (try --help)\n");
	CU_ASSERT_EQUAL(wait_exit(spawn(log, novalue), 10), 2);
	read_log(log, text, sizeof(text));
	CU_ASSERT_STRING_EQUAL(
	    text, "vm-dhcp-controller: --agent-interface needs a value (try --help)\n");
	unlink(log);
}

/* The whole output of the last run (at most len - 1 bytes). */
static void
read_log(const char *log, char *text, size_t len)
{
	FILE *f = fopen(log, "r");
	size_t n = 0;

	if (f != NULL) {
		n = fread(text, 1, len - 1, f);
		fclose(f);
	}
	text[n] = '\0';
}

/* The agent knobs: valid values pass, each bad one exits 2 with one line naming the flag. */
static void
test_agent_flags(void)
{
	static const struct {
		const char *flag, *value, *reason;
	} bad[] = {
	    {"--agent-interface", "eth1/x", "no '/'"},
	    {"--agent-interface", "", "1 to 15"},
	    {"--agent-image-pull-policy", "always", "not Always, IfNotPresent or Never"},
	    {"--agent-image-pull-secret", "Reg_Cred", "not an object name"},
	    {"--agent-resources", "{\"requests\":", "not JSON"},
	    {"--agent-resources", "[]", "must be a JSON object"},
	    {"--agent-resources", "{\"limits\":{\"memroy\":\"1Mi\"}}", "not a container resource"},
	    {"--agent-node-selector", "{\"zone\":1}", "must be a string"},
	    {"--agent-node-selector", "\"zone=a\"", "must be a JSON object"},
	    {"--agent-tolerations", "{\"key\":\"a\"}", "must be a JSON array"},
	    {"--agent-tolerations", "[{\"key\":\"a\",\"effect\":\"NoRun\"}]", "effect \"NoRun\""},
	    {"--agent-priority-class", "High", "not an object name"},
	    {"--agent-replicas", "0", "not a number of replicas from 1 to 10"},
	    {"--agent-replicas", "11", "not a number of replicas from 1 to 10"},
	    {"--agent-lease-duration", "0.5", "at least 1 second"},
	    {"--agent-renew-deadline", "1.5s", "not a number of seconds"},
	    {"--agent-retry-period", "0", "more than 0"},
	    /* the order retry < renew < lease, against the defaults (2, 1.5, 0.3) */
	    {"--agent-lease-duration", "1",
		"1 is not longer than the renew deadline (--agent-renew-deadline 1.5, the "
		"default)"},
	    {"--agent-retry-period", "2", "2 is not shorter than the renew deadline"},
	};
	char *good[] = {program, "--agent-image", "a", "--agent-interface", "br-vm",
	    "--agent-image-pull-policy", "Never", "--agent-image-pull-secret", "a",
	    "--agent-image-pull-secret", "b", "--agent-resources",
	    "{\"requests\":{\"cpu\":\"5m\"},\"limits\":{\"memory\":\"32Mi\"}}",
	    "--agent-node-selector", "{\"kubernetes.io/os\":\"linux\"}", "--agent-tolerations",
	    "[{\"operator\":\"Exists\"}]", "--agent-priority-class", "system-node-critical",
	    "--agent-replicas", "3", "--agent-lease-duration", "4.5", "--agent-renew-deadline", "3",
	    "--agent-retry-period", "0.5", "--help", NULL};
	/* both given, out of order: the renew deadline is at fault, the Lease named */
	char *order[] = {program, "--agent-image", "a", "--agent-renew-deadline", "3",
	    "--agent-lease-duration", "2", NULL};
	char *twice[] = {program, "--agent-image", "a", "--agent-image-pull-secret", "s",
	    "--agent-image-pull-secret", "s", NULL};
	char log[80];
	tmpname(log, sizeof(log), "vmdhcp-ctl-main-flags.log");
	char text[16384], want[128];

	if (find_program() < 0) {
		CU_FAIL("build/vm-dhcp-controller not built");
		return;
	}
	CU_ASSERT_EQUAL(wait_exit(spawn(log, good), 10), 0);
	read_log(log, text, sizeof(text));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--agent-tolerations JSON"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--agent-image-pull-policy Always|IfNotPresent|Never"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--agent-replicas N "));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--agent-lease-duration SECONDS "));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--agent-renew-deadline SECONDS "));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--agent-retry-period SECONDS "));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *args[] = {
		    program, "--agent-image", "a", (char *)bad[i].flag, (char *)bad[i].value, NULL};
		char *nl;

		CU_ASSERT_EQUAL(wait_exit(spawn(log, args), 10), 2);
		read_log(log, text, sizeof(text));
		snprintf(want, sizeof(want), "vm-dhcp-controller: %s: ", bad[i].flag);
		/* one line: the program, the flag, the reason; no usage dump */
		nl = strchr(text, '\n');
		CU_ASSERT_EQUAL(strncmp(text, want, strlen(want)), 0);
		CU_ASSERT_PTR_NOT_NULL(strstr(text, bad[i].reason));
		CU_ASSERT_TRUE(nl != NULL && nl[1] == '\0');
		if (strncmp(text, want, strlen(want)) != 0 || strstr(text, bad[i].reason) == NULL)
			fprintf(stderr, "%s %s: got \"%s\"\n", bad[i].flag, bad[i].value, text);
	}
	CU_ASSERT_EQUAL(wait_exit(spawn(log, twice), 10), 2);
	read_log(log, text, sizeof(text));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--agent-image-pull-secret: \"s\" is given twice"));
	CU_ASSERT_EQUAL(wait_exit(spawn(log, order), 10), 2);
	read_log(log, text, sizeof(text));
	CU_ASSERT_STRING_EQUAL(text, "vm-dhcp-controller: --agent-renew-deadline: 3 is not shorter "
				     "than the Lease duration (--agent-lease-duration 2)\n");
	unlink(log);
}

static void
test_leader_health_metrics(void)
{
	struct test_apiserver *api = NULL;
	char listen[32], log[80];
	tmpname(log, sizeof(log), "vmdhcp-ctl-main-run.log");
	struct body *b = calloc(1, sizeof(*b));
	int port = test_free_port();
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
		char *args[] = {program, "--kubeconfig", (char *)test_apiserver_kubeconfig(api),
		    "--namespace", "vmdhcp", "--agent-image", "agent:v1", "--listen", listen,
		    "--log-level", "debug", NULL};

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
	CU_ASSERT_PTR_NOT_NULL(strstr(b->buf, "\nvmdhcp_controller_leader 1\n"));
	/* the reconcile loops' own metrics, controller-runtime's names (count by result,
	 * errors, time, queue depth/adds/retries), one family each for the three loops */
	{
		static const char *const loops[] = {"ippool", "vmnetcfg", "vm"};
		static const char *const fams[][2] = {
		    {"vmdhcp_reconcile_total{controller=\"", "\",result=\"success\"} "},
		    {"vmdhcp_reconcile_errors_total{controller=\"", "\"} "},
		    {"vmdhcp_reconcile_time_seconds_count{controller=\"", "\"} "},
		    {"vmdhcp_workqueue_depth{name=\"", "\"} "},
		    {"vmdhcp_workqueue_adds_total{name=\"", "\"} "},
		    {"vmdhcp_workqueue_retries_total{name=\"", "\"} "},
		};

		for (size_t i = 0; i < ELEMENTSOF(loops); i++)
			for (size_t j = 0; j < ELEMENTSOF(fams); j++) {
				char want[128];

				snprintf(want, sizeof(want), "\n%s%s%s", fams[j][0], loops[i],
				    fams[j][1]);
				CU_ASSERT_PTR_NOT_NULL(strstr(b->buf, want));
			}
		CU_ASSERT_EQUAL(count_of(b->buf, "# TYPE vmdhcp_reconcile_total counter\n"), 1);
	}
	/* no pool yet: no per-pool series; the old names are gone */
	CU_ASSERT_PTR_NULL(strstr(b->buf, "vmdhcp_ippool_"));
	CU_ASSERT_PTR_NULL(strstr(b->buf, "kube_"));
	CU_ASSERT_PTR_NULL(strstr(b->buf, "vmdhcp_controller_pool"));
	CU_ASSERT_PTR_NULL(strstr(b->buf, "vmdhcp_controller_bindings"));

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

/* The API server is gone: /readyz says 503 and why (which informer, what failed), so
 * `kubectl describe pod` shows the cause instead of a bare "not ready". */
static void
test_readyz_says_why(void)
{
	struct test_apiserver *api = NULL;
	char listen[32], kc[] = "/tmp/vmdhcp-ctl-main-kcXXXXXX", log[80];
	tmpname(log, sizeof(log), "vmdhcp-ctl-main-why.log");
	struct body *b = calloc(1, sizeof(*b));
	int port = test_free_port(), fd = -1;
	bool said = false;
	pid_t pid;

	if (find_program() < 0 || b == NULL || port < 0 || (fd = mkstemp(kc)) < 0) {
		CU_FAIL("set-up");
		free(b);
		return;
	}
	/* a kubeconfig for a server that answered once and is gone now: connection refused */
	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&api, NULL), 0);
	{
		FILE *in = fopen(test_apiserver_kubeconfig(api), "r");
		char buf[16384];
		size_t n = in != NULL ? fread(buf, 1, sizeof(buf), in) : 0;

		CU_ASSERT_TRUE(n > 0 && write(fd, buf, n) == (ssize_t)n);
		if (in != NULL)
			fclose(in);
		close(fd);
	}
	test_apiserver_stop(api);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	{
		char *args[] = {program, "--kubeconfig", kc, "--namespace", "vmdhcp",
		    "--agent-image", "agent:v1", "--listen", listen, "--no-leader-election", NULL};

		pid = spawn(log, args);
	}
	CU_ASSERT_TRUE(wait_http(port, "/healthz", 200, b));
	for (int i = 0; i < 400 && !said; i++) { /* the first list fails within its backoff */
		said = http_get(port, "/readyz", b) == 503 && strstr(b->buf, "list failed") != NULL;
		if (!said)
			usleep(50000);
	}
	CU_ASSERT_TRUE(said);
	CU_ASSERT_PTR_NOT_NULL(strstr(b->buf, "IPPool informer: list failed: "));
	CU_ASSERT_PTR_NOT_NULL(strstr(b->buf, "Connection refused"));
	CU_ASSERT_PTR_NOT_NULL(strstr(b->buf, " since "));
	if (!said || strstr(b->buf, "Connection refused") == NULL)
		fprintf(stderr, "/readyz said: %s\n", b->buf);
	kill(pid, SIGTERM);
	CU_ASSERT_EQUAL(wait_exit(pid, 20), 0);
	{
		char text[8192];

		/* and the log said it too, once per backoff step (not once per retry) */
		read_log(log, text, sizeof(text));
		CU_ASSERT_PTR_NOT_NULL(strstr(text, "informer: list failed: "));
	}
	unlink(kc);
	unlink(log);
	free(b);
}

/* --- two controllers: exactly one reconciles --------------------------------------------- */

#define NS "default"
#define POOLS "/apis/network.harvesterhci.io/v1alpha1/namespaces/" NS "/ippools"
#define CFGS "/apis/network.harvesterhci.io/v1alpha1/namespaces/" NS "/virtualmachinenetworkconfigs"
#define NADS "/apis/k8s.cni.cncf.io/v1/namespaces/" NS "/network-attachment-definitions"
#define N_CFGS 5
/* kube/leader.c defaults, the program has no flags for them */
#define LEASE_S 15
#define RETRY_S 2

/* Value of the unlabelled series `name` in a /metrics body; -1 when absent. */
static double
metric_value(const char *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, name, n) == 0 && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return -1;
}

/* Sum of the series of family `name` (every label set, `name{...} v` lines). */
static double
metric_sum(const char *text, const char *name)
{
	size_t n = strlen(name);
	double sum = 0;

	for (const char *p = text; p != NULL && *p != '\0';) {
		if (strncmp(p, name, n) == 0 && p[n] == '{') {
			const char *sp = strstr(p, "} ");

			if (sp != NULL)
				sum += strtod(sp + 2, NULL);
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return sum;
}

/* What one controller process reports about itself. */
struct ctl_view {
	bool up;	   /* answered /metrics */
	double leader;	   /* vmdhcp_controller_leader (-1: absent) */
	bool pool_series;  /* any vmdhcp_ippool_* series: only a leader exports them */
	double reconciles; /* ippool + vmnetcfg + vm reconciles */
	double writes;	   /* API writes of the reconcilers */
};

static void
ctl_view(int port, struct body *b, struct ctl_view *v)
{
	memset(v, 0, sizeof(*v));
	if (http_get(port, "/metrics", b) != 200)
		return;
	v->up = true;
	v->leader = metric_value(b->buf, "vmdhcp_controller_leader");
	v->pool_series = strstr(b->buf, "\nvmdhcp_ippool_") != NULL;
	v->writes = metric_value(b->buf, "vmdhcp_controller_api_writes_total");
	/* the reconcile loops (and their metrics) exist once the process leads */
	v->reconciles = metric_sum(b->buf, "vmdhcp_reconcile_total");
}

/* pid in the Lease's holderIdentity (HOST_PID): 0 when released, -1 when no Lease. */
static long
lease_holder_pid(struct test_apiserver *api)
{
	char *h = lease_holder(api), *us;
	long pid = -1;

	if (h != NULL) {
		us = strrchr(h, '_');
		pid = us != NULL ? strtol(us + 1, NULL, 10) : 0;
	}
	free(h);
	return pid;
}

struct duo {
	struct test_apiserver *api;
	struct body *b;
	pid_t pid[2];
	int port[2];
	bool dead[2]; /* SIGKILLed by the test */
	long leader;  /* pid that must hold the Lease (0: not known yet) */
	unsigned samples;
	unsigned both_leading;	/* samples where both processes said they lead */
	unsigned foreign;	/* the Lease named another process, or moved from a live holder */
	unsigned follower_busy; /* samples where the non-leader had reconciled or written */
	struct ctl_view view[2];
};

/* One look at both processes and the Lease; counts every broken invariant. */
static void
duo_sample(struct duo *d)
{
	long holder;

	/* the processes first, then the Lease: a process that leads already holds it */
	for (int i = 0; i < 2; i++)
		if (!d->dead[i])
			ctl_view(d->port[i], d->b, &d->view[i]);
		else
			memset(&d->view[i], 0, sizeof(d->view[i]));
	holder = lease_holder_pid(d->api);
	/* the holder was killed: whoever took the Lease over is the leader from now on */
	for (int i = 0; i < 2; i++)
		if (d->leader == d->pid[i] && d->dead[i] && holder > 0 && holder != d->leader)
			d->leader = holder;
	d->samples++;
	if (d->view[0].leader == 1 && d->view[1].leader == 1)
		d->both_leading++;
	if (holder > 0 && holder != d->pid[0] && holder != d->pid[1])
		d->foreign++;
	if (d->leader != 0 && holder > 0 && holder != d->leader && !d->dead[0] && !d->dead[1])
		d->foreign++; /* the Lease moved while its holder was alive */
	for (int i = 0; i < 2; i++)
		if (d->leader != 0 && d->pid[i] != d->leader && d->view[i].up &&
		    (d->view[i].reconciles > 0 || d->view[i].writes > 0 || d->view[i].pool_series ||
			d->view[i].leader != 0))
			d->follower_busy++;
}

typedef bool (*duo_pred)(struct duo *d, const void *arg);

/* Sample every 100 ms until pred holds, at most timeout_s. */
static bool
duo_wait(struct duo *d, duo_pred pred, const void *arg, int timeout_s)
{
	for (int i = 0; i < timeout_s * 10; i++) {
		duo_sample(d);
		if (pred(d, arg))
			return true;
		usleep(100000);
	}
	return false;
}

static json_t *
api_get(struct test_apiserver *api, const char *path)
{
	char *out = NULL;
	long code = 0;
	json_t *j = NULL;

	if (test_apiserver_request(api, "GET", path, NULL, NULL, &code, &out) == 0 && code == 200)
		j = json_loads(out, 0, NULL);
	free(out);
	return j;
}

static long
api_post(struct test_apiserver *api, const char *path, json_t *obj)
{
	char *text = json_dumps(obj, JSON_COMPACT), *out = NULL;
	long code = 0;

	if (text == NULL || test_apiserver_request(api, "POST", path, NULL, text, &code, &out) < 0)
		code = 0;
	free(text);
	free(out);
	json_decref(obj);
	return code;
}

static long
create_cfg(struct test_apiserver *api, int i)
{
	char name[32], mac[32];

	snprintf(name, sizeof(name), "vm-%d", i);
	snprintf(mac, sizeof(mac), "02:00:00:00:01:%02x", i);
	return api_post(api, CFGS,
	    json_pack("{s:s, s:s, s:{s:s, s:s, s:[s]}, s:{s:s, s:[{s:s, s:s}]}}", "apiVersion",
		"network.harvesterhci.io/v1alpha1", "kind", "VirtualMachineNetworkConfig",
		"metadata", "name", name, "namespace", NS, "finalizers",
		"wrangler.cattle.io/vm-dhcp-vmnetcfg-controller", "spec", "vmName", name,
		"networkConfigs", "networkName", NS "/net-1", "macAddress", mac));
}

/* status.networkConfigs[0] of vm-<i>: Allocated address (new string) or NULL. */
static char *
cfg_ip(struct test_apiserver *api, int i, char *rv, size_t rvlen)
{
	char path[256];
	json_t *o, *nic;
	const char *st, *ip, *ver;
	char *out = NULL;

	snprintf(path, sizeof(path), CFGS "/vm-%d", i);
	o = api_get(api, path);
	nic = json_array_get(json_object_get(json_object_get(o, "status"), "networkConfigs"), 0);
	st = json_string_value(json_object_get(nic, "state"));
	ip = json_string_value(json_object_get(nic, "allocatedIPAddress"));
	if (st != NULL && strcmp(st, "Allocated") == 0 && ip != NULL)
		out = strdup(ip);
	ver = json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
	if (rv != NULL)
		snprintf(rv, rvlen, "%s", ver != NULL ? ver : "");
	json_decref(o);
	return out;
}

/* vm-0 .. vm-(*n - 1) all Allocated */
static bool
cfgs_allocated(struct duo *d, const void *arg)
{
	int n = *(const int *)arg;

	for (int i = 0; i < n; i++) {
		char *ip = cfg_ip(d->api, i, NULL, 0);

		free(ip);
		if (ip == NULL)
			return false;
	}
	return true;
}

static bool
lease_taken(struct duo *d, const void *arg)
{
	return lease_holder_pid(d->api) > 0;
}

static bool
lease_held_by(struct duo *d, const void *arg)
{
	return lease_holder_pid(d->api) == *(const pid_t *)arg;
}

/* process i says it leads, exports the pools and has reconciled */
static bool
leading(struct duo *d, const void *arg)
{
	int i = *(const int *)arg;

	return d->view[i].leader == 1 && d->view[i].pool_series && d->view[i].reconciles > 0;
}

/* IPPool net-1: status.ipv4.used */
static long long
pool_used(struct test_apiserver *api)
{
	json_t *o = api_get(api, POOLS "/net-1");
	long long used = json_integer_value(
	    json_object_get(json_object_get(json_object_get(o, "status"), "ipv4"), "used"));

	json_decref(o);
	return used;
}

/* IPPool net-1's status.ipv4.used is *arg: written after the VMNetCfgs' (its own write) */
static bool
pool_used_is(struct duo *d, const void *arg)
{
	return pool_used(d->api) == *(const int *)arg;
}

static void
test_two_controllers(void)
{
	struct duo d = {0};
	char listen[2][32], log[2][64];
	char *ips[N_CFGS + 1] = {0}, rv[N_CFGS][32], rv2[32];
	int n = N_CFGS, n1 = N_CFGS + 1, li = 0, fi = 1;
	double leader_writes;
	struct timespec t0, t1;
	double took;

	d.b = calloc(1, sizeof(*d.b));
	if (find_program() < 0 || d.b == NULL) {
		CU_FAIL("set-up");
		free(d.b);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&d.api, NULL), 0);
	for (int i = 0; i < 2; i++) {
		d.port[i] = test_free_port();
		snprintf(listen[i], sizeof(listen[i]), "127.0.0.1:%d", d.port[i]);
		snprintf(
		    log[i], sizeof(log[i]), "/tmp/vmdhcp-ctl-duo-%d-%ld.log", i, (long)getpid());
		char *args[] = {program, "--kubeconfig", (char *)test_apiserver_kubeconfig(d.api),
		    "--namespace", "vmdhcp", "--agent-image", "agent:v1", "--listen", listen[i],
		    NULL};

		d.pid[i] = spawn(log[i], args);
	}
	/* both up and ready (the follower is ready too: caches synced, waiting warm) */
	CU_ASSERT_TRUE(wait_http(d.port[0], "/readyz", 200, d.b));
	CU_ASSERT_TRUE(wait_http(d.port[1], "/readyz", 200, d.b));
	CU_ASSERT_TRUE(duo_wait(&d, lease_taken, NULL, 20));
	d.leader = lease_holder_pid(d.api);
	if (d.leader != d.pid[0] && d.leader != d.pid[1]) {
		CU_FAIL("neither controller took the Lease");
		goto out;
	}
	li = d.leader == d.pid[0] ? 0 : 1;
	fi = 1 - li;

	/* NAD, IPPool, VMNetCfgs */
	CU_ASSERT_EQUAL(
	    api_post(d.api, NADS,
		json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "k8s.cni.cncf.io/v1",
		    "kind", "NetworkAttachmentDefinition", "metadata", "name", "net-1", "namespace",
		    NS, "spec", "config", "{}")),
	    201);
	CU_ASSERT_EQUAL(
	    api_post(d.api, POOLS,
		json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:{s:s, s:s, s:{s:s, s:s}}}}",
		    "apiVersion", "network.harvesterhci.io/v1alpha1", "kind", "IPPool", "metadata",
		    "name", "net-1", "namespace", NS, "spec", "networkName", NS "/net-1",
		    "ipv4Config", "cidr", "10.0.0.0/24", "serverIP", "10.0.0.2", "pool", "start",
		    "10.0.0.10", "end", "10.0.0.20")),
	    201);
	for (int i = 0; i < N_CFGS; i++)
		CU_ASSERT_EQUAL(create_cfg(d.api, i), 201);
	CU_ASSERT_TRUE(duo_wait(&d, cfgs_allocated, &n, 30));
	CU_ASSERT_TRUE(duo_wait(&d, leading, &li, 20));

	/* only the leader reconciled and wrote; the bindings are distinct and in the pool */
	CU_ASSERT_TRUE(d.view[li].reconciles > 0);
	CU_ASSERT_TRUE(d.view[li].writes > 0);
	CU_ASSERT_EQUAL(d.view[fi].reconciles, 0);
	CU_ASSERT_EQUAL(d.view[fi].writes, 0);
	CU_ASSERT_EQUAL(d.view[fi].leader, 0);
	CU_ASSERT_FALSE(d.view[fi].pool_series);
	for (int i = 0; i < N_CFGS; i++) {
		ips[i] = cfg_ip(d.api, i, rv[i], sizeof(rv[i]));
		CU_ASSERT_PTR_NOT_NULL(ips[i]);
		for (int j = 0; j < i; j++)
			CU_ASSERT_FALSE(ips[i] && ips[j] && strcmp(ips[i], ips[j]) == 0);
	}
	CU_ASSERT_TRUE(duo_wait(&d, pool_used_is, &n, 30));

	/* settled: over two renew periods nobody writes the bindings again. The baseline is a
	 * fresh sample once the count has stopped moving (the last sample of duo_wait may predate
	 * the final status write that pool_used() just saw). */
	duo_sample(&d);
	for (int k = 0; k < 50; k++) {
		leader_writes = d.view[li].writes;
		usleep(200000);
		duo_sample(&d);
		if (d.view[li].writes == leader_writes)
			break;
	}
	leader_writes = d.view[li].writes;
	for (int k = 0; k < 2 * RETRY_S * 10; k++) {
		duo_sample(&d);
		usleep(100000);
	}
	CU_ASSERT_EQUAL(d.view[li].writes, leader_writes);
	for (int i = 0; i < N_CFGS; i++) {
		free(cfg_ip(d.api, i, rv2, sizeof(rv2)));
		CU_ASSERT_STRING_EQUAL(rv2, rv[i]);
	}

	/* SIGKILL the leader: the follower takes the Lease once it expired */
	kill(d.pid[li], SIGKILL);
	CU_ASSERT_EQUAL(wait_exit(d.pid[li], 10), 128 + SIGKILL);
	d.dead[li] = true;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CU_ASSERT_TRUE(duo_wait(&d, lease_held_by, &d.pid[fi], 3 * LEASE_S));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	/* a protocol bound, not speed: the last renew observed + lease duration, then the next
	 * retry; one more retry period and 3 s of slack for a loaded 2-core machine */
	CU_ASSERT_TRUE(took <= LEASE_S + 2 * RETRY_S + 3);
	fprintf(stderr, "takeover %.1f s after the leader was killed\n", took);
	d.leader = d.pid[fi];
	CU_ASSERT_TRUE(duo_wait(&d, leading, &fi, 20));

	/* the new leader rebuilt the IPAM from the API: the old bindings stay, a new one is
	 * bound to a free address */
	CU_ASSERT_EQUAL(create_cfg(d.api, N_CFGS), 201);
	CU_ASSERT_TRUE(duo_wait(&d, cfgs_allocated, &n1, 30));
	ips[N_CFGS] = cfg_ip(d.api, N_CFGS, NULL, 0);
	CU_ASSERT_PTR_NOT_NULL(ips[N_CFGS]);
	for (int i = 0; i < N_CFGS; i++) {
		char *ip = cfg_ip(d.api, i, NULL, 0);

		CU_ASSERT_TRUE(ip != NULL && ips[i] != NULL && strcmp(ip, ips[i]) == 0);
		CU_ASSERT_FALSE(ips[N_CFGS] && ips[i] && strcmp(ips[N_CFGS], ips[i]) == 0);
		free(ip);
	}
	CU_ASSERT_TRUE(duo_wait(&d, pool_used_is, &n1, 30));
	/* and it did not write the bindings the first leader made again */
	for (int i = 0; i < N_CFGS; i++) {
		free(cfg_ip(d.api, i, rv2, sizeof(rv2)));
		CU_ASSERT_STRING_EQUAL(rv2, rv[i]);
	}

	/* never two leaders, never a stranger or a move while the holder lived, and the
	 * follower idle while it followed */
	CU_ASSERT_TRUE(d.samples > 50);
	CU_ASSERT_EQUAL(d.both_leading, 0);
	CU_ASSERT_EQUAL(d.foreign, 0);
	CU_ASSERT_EQUAL(d.follower_busy, 0);

	kill(d.pid[fi], SIGTERM);
	CU_ASSERT_EQUAL(wait_exit(d.pid[fi], 20), 0);
	d.dead[fi] = true;
	CU_ASSERT_EQUAL(lease_holder_pid(d.api), 0);
out:
	for (int i = 0; i < 2; i++)
		if (d.pid[i] > 0 && !d.dead[i]) {
			kill(d.pid[i], SIGKILL);
			waitpid(d.pid[i], NULL, 0);
		}
	for (int i = 0; i <= N_CFGS; i++)
		free(ips[i]);
	test_apiserver_stop(d.api);
	free(d.b);
	unlink(log[0]);
	unlink(log[1]);
}

/* --- per-pool metrics: the leader only ------------------------------------------------- */

static long api_delete(struct test_apiserver *api, const char *path);

static long
post_nad(struct test_apiserver *api, const char *name)
{
	return api_post(api, NADS,
	    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "k8s.cni.cncf.io/v1",
		"kind", "NetworkAttachmentDefinition", "metadata", "name", name, "namespace", NS,
		"spec", "config", "{}"));
}

/* IPPool NS/name on network NS/name; router may be NULL; excludes a JSON array of IPs. */
static long
post_pool(struct test_apiserver *api, const char *name, const char *cidr, const char *server,
    const char *router, const char *start, const char *end, json_t *excludes)
{
	char net[64];
	json_t *v4 = json_pack("{s:s, s:s, s:{s:s, s:s, s:o}}", "cidr", cidr, "serverIP", server,
	    "pool", "start", start, "end", end, "exclude", excludes);

	snprintf(net, sizeof(net), NS "/%s", name);
	if (router != NULL)
		json_object_set_new(v4, "router", json_string(router));
	return api_post(api, POOLS,
	    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:o}}", "apiVersion",
		"network.harvesterhci.io/v1alpha1", "kind", "IPPool", "metadata", "name", name,
		"namespace", NS, "spec", "networkName", net, "ipv4Config", v4));
}

/* VMNetCfg name with one NIC on NS/network; ip (static) may be NULL. */
static long
post_cfg(struct test_apiserver *api, const char *name, const char *network, const char *mac,
    const char *ip)
{
	char net[64];
	json_t *nic;

	snprintf(net, sizeof(net), NS "/%s", network);
	nic = json_pack("{s:s, s:s}", "networkName", net, "macAddress", mac);
	if (ip != NULL)
		json_object_set_new(nic, "ipAddress", json_string(ip));
	return api_post(api, CFGS,
	    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:[o]}}", "apiVersion",
		"network.harvesterhci.io/v1alpha1", "kind", "VirtualMachineNetworkConfig",
		"metadata", "name", name, "namespace", NS, "spec", "vmName", name, "networkConfigs",
		nic));
}

/* Value of vmdhcp_ippool_<fam>{namespace,pool,network[,extra]} in text; -1 when absent. */
static double
pool_metric(const char *text, const char *fam, const char *pool, const char *extra)
{
	char series[256];

	snprintf(series, sizeof(series),
	    "vmdhcp_ippool_%s{namespace=\"" NS "\",pool=\"%s\",network=\"" NS "/%s\"%s%s}", fam,
	    pool, pool, extra != NULL ? "," : "", extra != NULL ? extra : "");
	return metric_value(text, series);
}

struct pool_want {
	const char *pool;
	double capacity, used, available, excluded, allocated, pending;
};

/* Every per-pool series of p has its value (and the conditions the test can predict). */
static bool
pool_metrics_are(const char *text, const struct pool_want *p)
{
	return pool_metric(text, "capacity_addresses", p->pool, NULL) == p->capacity &&
	       pool_metric(text, "used_addresses", p->pool, NULL) == p->used &&
	       pool_metric(text, "available_addresses", p->pool, NULL) == p->available &&
	       pool_metric(text, "excluded_addresses", p->pool, NULL) == p->excluded &&
	       pool_metric(text, "bindings", p->pool, "state=\"allocated\"") == p->allocated &&
	       pool_metric(text, "bindings", p->pool, "state=\"pending\"") == p->pending &&
	       pool_metric(text, "bindings", p->pool, "state=\"stale\"") == 0 &&
	       /* IPAM built, agent Deployment placed; no kubelet: never ready; not paused */
	       pool_metric(text, "condition", p->pool, "condition=\"CacheReady\"") == 1 &&
	       pool_metric(text, "condition", p->pool, "condition=\"Registered\"") == 1 &&
	       pool_metric(text, "condition", p->pool, "condition=\"AgentReady\"") == 0 &&
	       pool_metric(text, "condition", p->pool, "condition=\"Stopped\"") == 0;
}

/* Poll the leader's /metrics until every pool of want[0..n) shows its values. */
static bool
wait_pool_metrics(int port, struct body *b, const struct pool_want *want, size_t n)
{
	for (int i = 0; i < 300; i++) { /* 30 s */
		bool ok = http_get(port, "/metrics", b) == 200;

		for (size_t k = 0; ok && k < n; k++)
			ok = pool_metrics_are(b->buf, &want[k]);
		if (ok)
			return true;
		usleep(100000);
	}
	fprintf(stderr, "leader /metrics:\n%s\n", b->buf);
	return false;
}

/* Whether text has a line that starts with prefix and ends with suffix. */
static bool
line_with(const char *text, const char *prefix, const char *suffix)
{
	size_t np = strlen(prefix), ns = strlen(suffix);

	for (const char *p = text; p != NULL && *p != '\0';) {
		const char *end = strchr(p, '\n');
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

		if (len >= np + ns && strncmp(p, prefix, np) == 0 &&
		    strncmp(p + len - ns, suffix, ns) == 0)
			return true;
		p = end != NULL ? end + 1 : NULL;
	}
	return false;
}

/* No vmdhcp_* line carries s (our own series' labels are bounded: no MAC, no address). */
static bool
own_series_lack(const char *text, const char *s)
{
	for (const char *p = text; p != NULL && *p != '\0';) {
		const char *end = strchr(p, '\n');
		size_t len = end != NULL ? (size_t)(end - p) : strlen(p);

		if (strncmp(p, "vmdhcp_", 7) == 0 && memmem(p, len, s, strlen(s)) != NULL)
			return false;
		p = end != NULL ? end + 1 : NULL;
	}
	return true;
}

/*
 * The Go project's series of the same two pools (upstream pkg/metrics/metrics.go): used and
 * available per IPPool labelled ippool, cidr, network; one vmnetcfg_status per NIC labelled
 * vmnetcfg, network, mac, ip, state.
 */
static void
check_upstream_series(const char *text)
{
#define UP_POOL(fam, pool, cidr)                                                                   \
	"vmdhcpcontroller_ippool_" fam "{ippool=\"" NS "/" pool "\",cidr=\"" cidr                  \
	"\",network=\"" NS "/" pool "\"}"
#define UP_CFG(cfg, net, mac)                                                                      \
	"vmdhcpcontroller_vmnetcfg_status{vmnetcfg=\"" NS "/" cfg "\",network=\"" NS "/" net       \
	"\",mac=\"" mac "\",ip=\""
	CU_ASSERT_EQUAL(count_of(text, "# TYPE vmdhcpcontroller_ippool_used gauge\n"), 1);
	CU_ASSERT_EQUAL(count_of(text, "# TYPE vmdhcpcontroller_ippool_available gauge\n"), 1);
	CU_ASSERT_EQUAL(count_of(text, "# TYPE vmdhcpcontroller_vmnetcfg_status gauge\n"), 1);
	CU_ASSERT_EQUAL(
	    count_of(text, "# HELP vmdhcpcontroller_ippool_used Amount of IP addresses which are "
			   "in use\n"),
	    1);
	CU_ASSERT_EQUAL(metric_value(text, UP_POOL("used", "net-1", "10.0.0.0/24")), 3);
	CU_ASSERT_EQUAL(metric_value(text, UP_POOL("available", "net-1", "10.0.0.0/24")), 7);
	CU_ASSERT_EQUAL(metric_value(text, UP_POOL("used", "net-2", "10.0.1.0/24")), 1);
	CU_ASSERT_EQUAL(metric_value(text, UP_POOL("available", "net-2", "10.0.1.0/24")), 35);
	CU_ASSERT_EQUAL(count_of(text, "\nvmdhcpcontroller_ippool_used{"), 2);
	CU_ASSERT_EQUAL(count_of(text, "\nvmdhcpcontroller_vmnetcfg_status{"), 5);
	/* net-1's three took .10-.12 in some order */
	CU_ASSERT_TRUE(line_with(text, UP_CFG("a-1", "net-1", "02:00:00:00:02:01") "10.0.0.1",
	    "\",state=\"Allocated\"} 1"));
	CU_ASSERT_TRUE(line_with(text, UP_CFG("a-2", "net-1", "02:00:00:00:02:02") "10.0.0.1",
	    "\",state=\"Allocated\"} 1"));
	CU_ASSERT_TRUE(line_with(text, UP_CFG("a-3", "net-1", "02:00:00:00:02:03") "10.0.0.1",
	    "\",state=\"Allocated\"} 1"));
	/* net-2: router .1 and server .2 reserved, the lowest free is .3 */
	CU_ASSERT_EQUAL(
	    metric_value(text,
		UP_CFG("b-1", "net-2", "02:00:00:00:02:11") "10.0.1.3\",state=\"Allocated\"}"),
	    1);
	/* a NIC waiting for its address: its state, no address */
	CU_ASSERT_EQUAL(
	    metric_value(text, UP_CFG("b-2", "net-2", "02:00:00:00:02:12") "\",state=\"Pending\"}"),
	    1);
#undef UP_POOL
#undef UP_CFG
}

/*
 * Two replicas, two pools of different size and use: the leader exports one series per
 * pool and family with the pool's own values (not sums), the follower vmdhcp_controller_leader
 * 0 and no per-pool series at all (a sum() over replicas counts each pool once); a deleted
 * pool's series go away; both scrapes pass `promtool check metrics`.
 */
static void
test_pool_metrics_leader_only(void)
{
	struct duo d = {0};
	char listen[2][32], log[2][80];
	int li, fi;
	/* net-1: .10-.20 (11), server .2 outside, .15 excluded: 10 to hand out, 3 bound.
	 * net-2: .1-.40 (40), router .1 and server .2 reserved, .30 .31 excluded: 36, 1 bound
	 * and a NIC Pending on a static address outside the range. */
	const struct pool_want want[2] = {
	    {"net-1", 10, 3, 7, 1, 3, 0},
	    {"net-2", 36, 1, 35, 4, 1, 1},
	};

	d.b = calloc(1, sizeof(*d.b));
	if (find_program() < 0 || d.b == NULL) {
		CU_FAIL("set-up");
		free(d.b);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&d.api, NULL), 0);
	for (int i = 0; i < 2; i++) {
		d.port[i] = test_free_port();
		snprintf(listen[i], sizeof(listen[i]), "127.0.0.1:%d", d.port[i]);
		snprintf(
		    log[i], sizeof(log[i]), "/tmp/%ld-vmdhcp-ctl-poolm-%d.log", (long)getpid(), i);
		char *args[] = {program, "--kubeconfig", (char *)test_apiserver_kubeconfig(d.api),
		    "--namespace", "vmdhcp", "--agent-image", "agent:v1", "--listen", listen[i],
		    NULL};

		d.pid[i] = spawn(log[i], args);
	}
	CU_ASSERT_TRUE(wait_http(d.port[0], "/readyz", 200, d.b));
	CU_ASSERT_TRUE(wait_http(d.port[1], "/readyz", 200, d.b));
	CU_ASSERT_TRUE(duo_wait(&d, lease_taken, NULL, 20));
	d.leader = lease_holder_pid(d.api);
	if (d.leader != d.pid[0] && d.leader != d.pid[1]) {
		CU_FAIL("neither controller took the Lease");
		goto out;
	}
	li = d.leader == d.pid[0] ? 0 : 1;
	fi = 1 - li;

	CU_ASSERT_EQUAL(post_nad(d.api, "net-1"), 201);
	CU_ASSERT_EQUAL(post_nad(d.api, "net-2"), 201);
	CU_ASSERT_EQUAL(post_pool(d.api, "net-1", "10.0.0.0/24", "10.0.0.2", NULL, "10.0.0.10",
			    "10.0.0.20", json_pack("[s]", "10.0.0.15")),
	    201);
	CU_ASSERT_EQUAL(post_pool(d.api, "net-2", "10.0.1.0/24", "10.0.1.2", "10.0.1.1", "10.0.1.1",
			    "10.0.1.40", json_pack("[s, s]", "10.0.1.30", "10.0.1.31")),
	    201);
	CU_ASSERT_EQUAL(post_cfg(d.api, "a-1", "net-1", "02:00:00:00:02:01", NULL), 201);
	CU_ASSERT_EQUAL(post_cfg(d.api, "a-2", "net-1", "02:00:00:00:02:02", NULL), 201);
	CU_ASSERT_EQUAL(post_cfg(d.api, "a-3", "net-1", "02:00:00:00:02:03", NULL), 201);
	CU_ASSERT_EQUAL(post_cfg(d.api, "b-1", "net-2", "02:00:00:00:02:11", NULL), 201);
	CU_ASSERT_EQUAL(post_cfg(d.api, "b-2", "net-2", "02:00:00:00:02:12", "10.0.1.200"), 201);

	CU_ASSERT_TRUE(wait_pool_metrics(d.port[li], d.b, want, 2));
	CU_ASSERT_PTR_NOT_NULL(strstr(d.b->buf, "\nvmdhcp_controller_leader 1\n"));
	/* one HELP/TYPE per family, whatever the number of pools */
	CU_ASSERT_EQUAL(count_of(d.b->buf, "# TYPE vmdhcp_ippool_used_addresses gauge\n"), 1);
	CU_ASSERT_EQUAL(count_of(d.b->buf, "\nvmdhcp_ippool_used_addresses{"), 2);
	CU_ASSERT_EQUAL(count_of(d.b->buf, "\nvmdhcp_ippool_bindings{"), 6);
	CU_ASSERT_EQUAL(count_of(d.b->buf, "\nvmdhcp_ippool_condition{"), 8);
	/* bounded labels: no MAC, no address in our own series (upstream's have them) */
	CU_ASSERT_TRUE(own_series_lack(d.b->buf, "02:00:00:00:02"));
	CU_ASSERT_TRUE(own_series_lack(d.b->buf, "10.0."));
	check_upstream_series(d.b->buf);
	CU_ASSERT_TRUE(promtool_accepts(d.b, "leader"));
	/* without --enable-cache-dump-api: no debug endpoints, as upstream */
	CU_ASSERT_EQUAL(http_get(d.port[li], "/ipams/" NS "/net-1", d.b), 404);
	CU_ASSERT_EQUAL(http_get(d.port[li], "/caches/" NS "/net-1", d.b), 404);

	/* the follower: not leading, no per-pool series, not even their HELP */
	CU_ASSERT_EQUAL(http_get(d.port[fi], "/metrics", d.b), 200);
	CU_ASSERT_EQUAL(metric_value(d.b->buf, "vmdhcp_controller_leader"), 0);
	CU_ASSERT_PTR_NULL(strstr(d.b->buf, "vmdhcp_ippool_"));
	CU_ASSERT_PTR_NULL(strstr(d.b->buf, "vmdhcpcontroller_"));
	CU_ASSERT_TRUE(promtool_accepts(d.b, "follower"));

	/* net-2 deleted (finalizer: the leader removes its agent, then the finalizer): its
	 * series go, net-1's stay */
	CU_ASSERT_EQUAL(api_delete(d.api, POOLS "/net-2"), 200);
	{
		bool gone = false;

		for (int i = 0; i < 300 && !gone; i++) { /* 30 s */
			gone = http_get(d.port[li], "/metrics", d.b) == 200 &&
			       strstr(d.b->buf, "pool=\"net-2\"") == NULL;
			if (!gone)
				usleep(100000);
		}
		CU_ASSERT_TRUE(gone);
		CU_ASSERT_PTR_NULL(strstr(d.b->buf, "ippool=\"" NS "/net-2\""));
		CU_ASSERT_EQUAL(count_of(d.b->buf, "\nvmdhcpcontroller_ippool_used{"), 1);
		CU_ASSERT_TRUE(pool_metrics_are(d.b->buf, &want[0]));
		CU_ASSERT_EQUAL(count_of(d.b->buf, "\nvmdhcp_ippool_used_addresses{"), 1);
		CU_ASSERT_TRUE(promtool_accepts(d.b, "leader-after-delete"));
	}

	for (int i = 0; i < 2; i++) {
		kill(d.pid[i], SIGTERM);
		CU_ASSERT_EQUAL(wait_exit(d.pid[i], 20), 0);
		d.dead[i] = true;
	}
out:
	for (int i = 0; i < 2; i++)
		if (d.pid[i] > 0 && !d.dead[i]) {
			kill(d.pid[i], SIGKILL);
			waitpid(d.pid[i], NULL, 0);
		}
	test_apiserver_stop(d.api);
	free(d.b);
	unlink(log[0]);
	unlink(log[1]);
}

/* Poll GET path until it answers code with body want (30 s). */
static bool
wait_body(int port, const char *path, long code, const char *want, struct body *b)
{
	for (int i = 0; i < 300; i++) {
		if (http_get(port, path, b) == code && strcmp(b->buf, want) == 0)
			return true;
		usleep(100000);
	}
	fprintf(stderr, "GET %s: %s\n", path, b->buf);
	return false;
}

/*
 * --enable-cache-dump-api: the Go project's /ipams/{network} and /caches/{network} with its
 * JSON (upstream pkg/server/handler.go), {network} the IPPool's networkName, slashes as they
 * are or escaped; an unknown network answers as upstream: 500 and its message.
 */
static void
test_cache_dump_api(void)
{
	struct test_apiserver *api = NULL;
	struct body *b = calloc(1, sizeof(*b));
	char listen[32], log[80];
	int port = test_free_port();
	pid_t pid;

	if (find_program() < 0 || b == NULL) {
		CU_FAIL("set-up");
		free(b);
		return;
	}
	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&api, NULL), 0);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	snprintf(log, sizeof(log), "/tmp/%ld-vmdhcp-ctl-dump.log", (long)getpid());
	char *args[] = {program, "--kubeconfig", (char *)test_apiserver_kubeconfig(api),
	    "--namespace", "vmdhcp", "--agent-image", "agent:v1", "--listen", listen,
	    "--no-leader-election", "--enable-cache-dump-api", NULL};
	pid = spawn(log, args);
	CU_ASSERT_TRUE(wait_http(port, "/readyz", 200, b));

	/* range .8-.11, .9 excluded, server .2 outside: upstream's IPAM holds .8, .10, .11 */
	CU_ASSERT_EQUAL(post_nad(api, "net-1"), 201);
	CU_ASSERT_EQUAL(post_pool(api, "net-1", "10.0.0.0/24", "10.0.0.2", NULL, "10.0.0.8",
			    "10.0.0.11", json_pack("[s]", "10.0.0.9")),
	    201);
	CU_ASSERT_EQUAL(post_cfg(api, "c-1", "net-1", "02:00:00:00:03:01", "10.0.0.11"), 201);
	CU_ASSERT_TRUE(wait_body(
	    port, "/caches/" NS "/net-1", 200, "{\"02:00:00:00:03:01\":\"10.0.0.11\"}", b));
	CU_ASSERT_TRUE(wait_body(port, "/ipams/" NS "/net-1", 200,
	    "{\"10.0.0.10\":\"false\",\"10.0.0.11\":\"true\",\"10.0.0.8\":\"false\"}", b));
	CU_ASSERT_EQUAL(http_get(port, "/ipams/" NS "%2Fnet-1", b), 200);
	CU_ASSERT_STRING_EQUAL(
	    b->buf, "{\"10.0.0.10\":\"false\",\"10.0.0.11\":\"true\",\"10.0.0.8\":\"false\"}");
	/* a bare name is in "default" */
	CU_ASSERT_EQUAL(http_get(port, "/caches/net-1", b), 200);
	CU_ASSERT_STRING_EQUAL(b->buf, "{\"02:00:00:00:03:01\":\"10.0.0.11\"}");
	/* unknown networks, as upstream answers them */
	CU_ASSERT_EQUAL(http_get(port, "/ipams/" NS "/nope", b), 500);
	CU_ASSERT_STRING_EQUAL(
	    b->buf, "failed to list ipam of " NS "/nope: network " NS "/nope does not exist");
	CU_ASSERT_EQUAL(http_get(port, "/caches/x/y/z", b), 500);
	CU_ASSERT_STRING_EQUAL(
	    b->buf, "failed to list cache of x/y/z: network x/y/z does not exist");
	CU_ASSERT_EQUAL(http_get(port, "/leases", b), 404); /* the agent's */
	CU_ASSERT_EQUAL(http_get(port, "/healthz", b), 200);

	kill(pid, SIGTERM);
	CU_ASSERT_EQUAL(wait_exit(pid, 20), 0);
	test_apiserver_stop(api);
	free(b);
	unlink(log);
}

/* --- --uninstall: the chart's post-delete hook ------------------------------------------- */

#define UNS "vmdhcp"
/* the leader Lease: the Go project's, kube-system/vm-dhcp-controllers, by default */
#define LEASE_PATH "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/vm-dhcp-controllers"
#define GROUP_PATH "/apis/network.harvesterhci.io/v1alpha1/namespaces/"
#define FIN_POOL "wrangler.cattle.io/vm-dhcp-ippool-controller"
#define FIN_CFG "wrangler.cattle.io/vm-dhcp-vmnetcfg-controller"
#define FIN_KEEP "example.com/keep-me"
#define AGENT_LABEL "network.harvesterhci.io/vm-dhcp-controller"

static long
api_delete(struct test_apiserver *api, const char *path)
{
	char *out = NULL;
	long code = 0;

	if (test_apiserver_request(api, "DELETE", path, NULL, NULL, &code, &out) < 0)
		code = 0;
	free(out);
	return code;
}

/* HTTP status of GET path (404 once deleted). */
static long
api_status(struct test_apiserver *api, const char *path)
{
	char *out = NULL;
	long code = 0;

	if (test_apiserver_request(api, "GET", path, NULL, NULL, &code, &out) < 0)
		code = 0;
	free(out);
	return code;
}

static long
create_deployment(struct test_apiserver *api, const char *ns, const char *name, bool agent)
{
	char path[256];

	snprintf(path, sizeof(path), "/apis/apps/v1/namespaces/%s/deployments", ns);
	return api_post(api, path,
	    json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:i}}", "apiVersion", "apps/v1", "kind",
		"Deployment", "metadata", "name", name, "namespace", ns, "labels",
		agent ? AGENT_LABEL : "app", agent ? "agent" : "other", "spec", "replicas", 1));
}

/* An IPPool (plural "ippools") or a VMNetCfg with the given finalizers (NULL-terminated). */
static long
create_finalized(struct test_apiserver *api, const char *plural, const char *ns, const char *name,
    const char *const *fins)
{
	bool pool = strcmp(plural, "ippools") == 0;
	char path[256], net[128];
	json_t *obj, *list = json_array();

	for (size_t i = 0; fins[i] != NULL; i++)
		json_array_append_new(list, json_string(fins[i]));
	snprintf(path, sizeof(path), GROUP_PATH "%s/%s", ns, plural);
	snprintf(net, sizeof(net), "%s/net-%s", ns, name);
	if (pool)
		obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:o, s:{s:s}, s:{s:s}}, "
				"s:{s:s, s:{s:s, s:s, s:{s:s, s:s}}}}",
		    "apiVersion", "network.harvesterhci.io/v1alpha1", "kind", "IPPool", "metadata",
		    "name", name, "namespace", ns, "finalizers", list, "labels", "team", "blue",
		    "annotations", "note", "kept", "spec", "networkName", net, "ipv4Config", "cidr",
		    "10.0.0.0/24", "serverIP", "10.0.0.2", "pool", "start", "10.0.0.10", "end",
		    "10.0.0.20");
	else
		obj = json_pack("{s:s, s:s, s:{s:s, s:s, s:o, s:{s:s}}, s:{s:s, s:[{s:s, s:s}]}}",
		    "apiVersion", "network.harvesterhci.io/v1alpha1", "kind",
		    "VirtualMachineNetworkConfig", "metadata", "name", name, "namespace", ns,
		    "finalizers", list, "labels", "harvesterhci.io/vmName", name, "spec", "vmName",
		    name, "networkConfigs", "networkName", net, "macAddress", "02:00:00:00:02:01");
	return api_post(api, path, obj);
}

/* The object without what --uninstall may change (finalizers, resourceVersion). */
static json_t *
api_get_unversioned(struct test_apiserver *api, const char *path)
{
	json_t *o = api_get(api, path), *m = json_object_get(o, "metadata");

	json_object_del(m, "finalizers");
	json_object_del(m, "resourceVersion");
	return o;
}

/* metadata.finalizers joined with ',' ("" when none; "404" when the object is gone). */
static void
finalizers_of(struct test_apiserver *api, const char *path, char *out, size_t len)
{
	json_t *o = api_get(api, path), *v;
	size_t i, n = 0;

	out[0] = '\0';
	if (o == NULL) {
		snprintf(out, len, "404");
		return;
	}
	json_array_foreach(json_object_get(json_object_get(o, "metadata"), "finalizers"), i, v) n +=
	    (size_t)snprintf(
		out + n, len - MIN(n, len), "%s%s", i > 0 ? "," : "", json_string_value(v));
	json_decref(o);
}

static size_t
count_lines(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* The names of the Deployments in ns, sorted by the server, joined with ','. */
static void
deployments_in(struct test_apiserver *api, const char *ns, char *out, size_t len)
{
	char path[256];
	json_t *list, *item;
	size_t i, n = 0;

	snprintf(path, sizeof(path), "/apis/apps/v1/namespaces/%s/deployments", ns);
	list = api_get(api, path);
	out[0] = '\0';
	json_array_foreach(json_object_get(list, "items"), i, item) n +=
	    (size_t)snprintf(out + n, len - MIN(n, len), "%s%s", i > 0 ? "," : "",
		json_string_value(json_object_get(json_object_get(item, "metadata"), "name")));
	json_decref(list);
}

static pid_t
spawn_uninstall(struct test_apiserver *api, const char *log, const char *timeout)
{
	char *args[] = {program, "--uninstall", "--kubeconfig",
	    (char *)test_apiserver_kubeconfig(api), "--namespace", UNS,
	    timeout != NULL ? "--uninstall-timeout" : NULL, (char *)timeout, NULL};

	return spawn(log, args);
}

/* An expired Lease, agents, foreign Deployments and finalizers: exit 0, ours gone, theirs kept */
static void
test_uninstall_cleanup(void)
{
	static const char *const ours_keep_pool[] = {FIN_POOL, FIN_KEEP, NULL};
	static const char *const ours_pool[] = {FIN_POOL, NULL};
	static const char *const ours_keep_cfg[] = {FIN_CFG, FIN_KEEP, NULL};
	static const char *const ours_cfg[] = {FIN_CFG, NULL};
	static const char *const keep[] = {FIN_KEEP, NULL};
	struct test_apiserver *api = NULL;
	char log[64], text[65536], got[1024], rv[32], rv2[32];
	json_t *pool_before, *cfg_before, *after, *o;
	int n_many = 12; /* more than a page of IPPools (10) */

	snprintf(log, sizeof(log), "/tmp/vmdhcp-ctl-uninstall-%ld.log", (long)getpid());
	if (find_program() < 0) {
		CU_FAIL("build/vm-dhcp-controller not built");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&api, NULL), 0);
	/* the holder died an hour ago without releasing (leaseDurationSeconds 2) */
	CU_ASSERT_EQUAL(
	    api_post(api, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
		json_pack("{s:{s:s}, s:{s:s, s:i, s:s, s:s}}", "metadata", "name",
		    "vm-dhcp-controllers", "spec", "holderIdentity", "gone-pod_7",
		    "leaseDurationSeconds", 2, "renewTime", "2020-01-01T00:00:00.000000Z",
		    "acquireTime", "2020-01-01T00:00:00.000000Z")),
	    201);
	CU_ASSERT_EQUAL(create_deployment(api, UNS, "default-net-1-agent", true), 201);
	CU_ASSERT_EQUAL(create_deployment(api, UNS, "other-net-2-agent", true), 201);
	CU_ASSERT_EQUAL(create_deployment(api, UNS, "unrelated", false), 201);
	CU_ASSERT_EQUAL(create_deployment(api, "elsewhere", "default-net-9-agent", true), 201);
	CU_ASSERT_EQUAL(create_finalized(api, "ippools", "default", "net-1", ours_keep_pool), 201);
	CU_ASSERT_EQUAL(create_finalized(api, "ippools", "other", "net-2", ours_pool), 201);
	CU_ASSERT_EQUAL(create_finalized(api, "ippools", "default", "net-3", keep), 201);
	CU_ASSERT_EQUAL(create_finalized(api, "ippools", "default", "net-4", ours_pool), 201);
	for (int i = 0; i < n_many; i++) {
		char name[16];

		snprintf(name, sizeof(name), "p-%02d", i);
		CU_ASSERT_EQUAL(create_finalized(api, "ippools", "many", name, ours_pool), 201);
	}
	CU_ASSERT_EQUAL(
	    create_finalized(api, "virtualmachinenetworkconfigs", "default", "vm-1", ours_keep_cfg),
	    201);
	CU_ASSERT_EQUAL(
	    create_finalized(api, "virtualmachinenetworkconfigs", "other", "vm-2", ours_cfg), 201);
	CU_ASSERT_EQUAL(
	    create_finalized(api, "virtualmachinenetworkconfigs", "default", "vm-3", ours_cfg),
	    201);
	/* deleted while the controller was gone: stuck on our finalizer */
	CU_ASSERT_EQUAL(api_delete(api, GROUP_PATH "default/ippools/net-4"), 200);
	CU_ASSERT_EQUAL(
	    api_delete(api, GROUP_PATH "default/virtualmachinenetworkconfigs/vm-3"), 200);
	CU_ASSERT_EQUAL(api_status(api, GROUP_PATH "default/ippools/net-4"), 200);
	pool_before = api_get_unversioned(api, GROUP_PATH "default/ippools/net-1");
	cfg_before =
	    api_get_unversioned(api, GROUP_PATH "default/virtualmachinenetworkconfigs/vm-1");
	o = api_get(api, GROUP_PATH "default/ippools/net-3");
	snprintf(rv, sizeof(rv), "%s",
	    json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion")));
	json_decref(o);

	CU_ASSERT_EQUAL(wait_exit(spawn_uninstall(api, log, NULL), 60), 0);
	read_log(log, text, sizeof(text));

	/* agents of this namespace gone; the others stay */
	deployments_in(api, UNS, got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "unrelated");
	deployments_in(api, "elsewhere", got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "default-net-9-agent");
	/* our finalizers gone, the foreign one kept, nothing else written */
	finalizers_of(api, GROUP_PATH "default/ippools/net-1", got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, FIN_KEEP);
	finalizers_of(api, GROUP_PATH "other/ippools/net-2", got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "");
	finalizers_of(api, GROUP_PATH "default/ippools/net-3", got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, FIN_KEEP);
	finalizers_of(api, GROUP_PATH "default/ippools/net-4", got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "404"); /* its deletion completed */
	for (int i = 0; i < n_many; i++) {
		char path[128];

		snprintf(path, sizeof(path), GROUP_PATH "many/ippools/p-%02d", i);
		finalizers_of(api, path, got, sizeof(got));
		CU_ASSERT_STRING_EQUAL(got, "");
	}
	finalizers_of(
	    api, GROUP_PATH "default/virtualmachinenetworkconfigs/vm-1", got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, FIN_KEEP);
	finalizers_of(api, GROUP_PATH "other/virtualmachinenetworkconfigs/vm-2", got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "");
	finalizers_of(
	    api, GROUP_PATH "default/virtualmachinenetworkconfigs/vm-3", got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "404");
	after = api_get_unversioned(api, GROUP_PATH "default/ippools/net-1");
	CU_ASSERT_TRUE(pool_before != NULL && json_equal(pool_before, after));
	json_decref(after);
	after = api_get_unversioned(api, GROUP_PATH "default/virtualmachinenetworkconfigs/vm-1");
	CU_ASSERT_TRUE(cfg_before != NULL && json_equal(cfg_before, after));
	json_decref(after);
	o = api_get(api, GROUP_PATH "default/ippools/net-3");
	snprintf(rv2, sizeof(rv2), "%s",
	    json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion")));
	json_decref(o);
	CU_ASSERT_STRING_EQUAL(rv2, rv); /* not written at all */

	/* one line per object changed, and a summary */
	CU_ASSERT_EQUAL(count_lines(text, "deleted agent Deployment "), 2);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "deleted agent Deployment " UNS "/default-net-1-agent"));
	CU_ASSERT_EQUAL(count_lines(text, "removed the finalizer " FIN_POOL " from IPPool "),
	    3 + (size_t)n_many);
	CU_ASSERT_EQUAL(count_lines(text,
			    "removed the finalizer " FIN_CFG " from VirtualMachineNetworkConfig "),
	    3);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "IPPool default/net-4 (it was being deleted"));
	snprintf(got, sizeof(got),
	    "uninstall: 2 agent Deployment(s) deleted, the finalizer removed from %d IPPool(s) "
	    "and 3 VirtualMachineNetworkConfig(s)\n",
	    3 + n_many);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, got));
	CU_ASSERT_PTR_NULL(strstr(text, "Z error ")); /* log lines: TIME LEVEL PROG: */
	if (strstr(text, got) == NULL)
		fprintf(stderr, "--uninstall output:\n%s", text);

	/* again without a Lease: nothing left to do */
	CU_ASSERT_EQUAL(api_delete(api, LEASE_PATH), 200);
	CU_ASSERT_EQUAL(wait_exit(spawn_uninstall(api, log, NULL), 60), 0);
	read_log(log, text, sizeof(text));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "no Lease kube-system/vm-dhcp-controllers"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "uninstall: 0 agent Deployment(s) deleted, the "
					    "finalizer removed from 0 IPPool(s) and 0 "
					    "VirtualMachineNetworkConfig(s)"));
	deployments_in(api, UNS, got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "unrelated");

	json_decref(pool_before);
	json_decref(cfg_before);
	CU_ASSERT_EQUAL(test_apiserver_terminate(api), 0);
	test_apiserver_stop(api);
	unlink(log);
}

/* Polls pred every 100 ms for at most timeout_s. */
static bool
wait_for(bool (*pred)(struct test_apiserver *api), struct test_apiserver *api, int timeout_s)
{
	for (int i = 0; i < timeout_s * 10; i++) {
		if (pred(api))
			return true;
		usleep(100000);
	}
	return false;
}

static bool
agent_placed(struct test_apiserver *api)
{
	char got[256];

	deployments_in(api, UNS, got, sizeof(got));
	finalizers_of(api, POOLS "/net-1", got + strlen(got) + 1, sizeof(got) - strlen(got) - 1);
	return strcmp(got, "default-net-1-agent") == 0 &&
	       strcmp(got + strlen(got) + 1, FIN_POOL) == 0;
}

/* NAD net-1 and its IPPool net-1 in NS: the status of the second POST (201 when both were). */
static long
create_net1(struct test_apiserver *api)
{
	long code = api_post(api, NADS,
	    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}", "apiVersion", "k8s.cni.cncf.io/v1",
		"kind", "NetworkAttachmentDefinition", "metadata", "name", "net-1", "namespace", NS,
		"spec", "config", "{}"));

	if (code != 201)
		return code;
	return api_post(api, POOLS,
	    json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:{s:s, s:s, s:{s:s, s:s}}}}", "apiVersion",
		"network.harvesterhci.io/v1alpha1", "kind", "IPPool", "metadata", "name", "net-1",
		"namespace", NS, "spec", "networkName", NS "/net-1", "ipv4Config", "cidr",
		"10.0.0.0/24", "serverIP", "10.0.0.2", "pool", "start", "10.0.0.10", "end",
		"10.0.0.20"));
}

/*
 * A running controller holds the Lease: --uninstall waits, times out with one line naming
 * the holder and changes nothing; once the controller stops (SIGTERM, the Lease released)
 * it cleans up what that controller made.
 */
static void
test_uninstall_waits_for_controller(void)
{
	struct test_apiserver *api = NULL;
	char log[64], ctl_log[64], text[65536], want[256], got[256], *last, *holder;
	int port = test_free_port();
	pid_t ctl = -1, un;

	snprintf(log, sizeof(log), "/tmp/vmdhcp-ctl-uninstall-w-%ld.log", (long)getpid());
	snprintf(ctl_log, sizeof(ctl_log), "/tmp/vmdhcp-ctl-uninstall-c-%ld.log", (long)getpid());
	if (find_program() < 0 || port < 0) {
		CU_FAIL("set-up");
		return;
	}
	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&api, NULL), 0);
	{
		char listen[32];
		char *args[] = {program, "--kubeconfig", (char *)test_apiserver_kubeconfig(api),
		    "--namespace", UNS, "--agent-image", "agent:v1", "--listen", listen, NULL};

		snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
		ctl = spawn(ctl_log, args);
	}
	CU_ASSERT_EQUAL(create_net1(api), 201);
	/* the controller leads, placed the agent and put its finalizer on the pool */
	CU_ASSERT_TRUE_FATAL(wait_for(agent_placed, api, 30));
	holder = lease_holder(api);
	CU_ASSERT_PTR_NOT_NULL_FATAL(holder);

	/* live holder: waits, then times out with one clear line; nothing changed */
	CU_ASSERT_EQUAL(wait_exit(spawn_uninstall(api, log, "2"), 60), 1);
	read_log(log, text, sizeof(text));
	snprintf(want, sizeof(want),
	    "Z error vm-dhcp-controller: --uninstall: timed out after 2 s waiting for the "
	    "controller to stop: the Lease kube-system/vm-dhcp-controllers is held by %s (",
	    holder);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
	if (strstr(text, want) == NULL)
		fprintf(stderr, "--uninstall output:\n%s", text);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "; nothing was changed\n"));
	/* ... the only error, and the last line */
	CU_ASSERT_EQUAL(count_lines(text, "Z error "), 1);
	if (strlen(text) > 1)
		text[strlen(text) - 1] = '\0';
	last = strrchr(text, '\n');
	CU_ASSERT_PTR_NOT_NULL(strstr(last != NULL ? last : text, "timed out after 2 s"));
	CU_ASSERT_TRUE(agent_placed(api));
	free(holder);

	/* the controller stops (helm deleted its Deployment): the Lease is released and the
	 * cleanup runs */
	un = spawn_uninstall(api, log, NULL);
	usleep(500000);
	kill(ctl, SIGTERM);
	CU_ASSERT_EQUAL(wait_exit(ctl, 20), 0);
	ctl = -1;
	CU_ASSERT_EQUAL(wait_exit(un, 60), 0);
	read_log(log, text, sizeof(text));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "the Lease kube-system/vm-dhcp-controllers is released"));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "deleted agent Deployment " UNS "/default-net-1-agent"));
	deployments_in(api, UNS, got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "");
	finalizers_of(api, POOLS "/net-1", got, sizeof(got));
	CU_ASSERT_STRING_EQUAL(got, "");
	if (strstr(text, "deleted agent Deployment") == NULL)
		fprintf(stderr, "--uninstall output:\n%s", text);

	if (ctl > 0) {
		kill(ctl, SIGKILL);
		waitpid(ctl, NULL, 0);
	}
	CU_ASSERT_EQUAL(test_apiserver_terminate(api), 0);
	test_apiserver_stop(api);
	unlink(log);
	unlink(ctl_log);
}

/* The holder of the Lease ns/name ("" when released, NULL when absent). */
static char *
lease_holder_at(struct test_apiserver *api, const char *ns, const char *name)
{
	char path[256];
	const char *h;
	char *copy;
	json_t *j;

	snprintf(
	    path, sizeof(path), "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s", ns, name);
	if ((j = api_get(api, path)) == NULL)
		return NULL;
	h = json_string_value(json_object_get(json_object_get(j, "spec"), "holderIdentity"));
	copy = strdup(h != NULL ? h : "");
	json_decref(j);
	return copy;
}

static bool
pool_no_agent(struct test_apiserver *api)
{
	json_t *pool = api_get(api, POOLS "/net-1"), *c;
	size_t i, n = 0;

	json_array_foreach(json_object_get(json_object_get(pool, "status"), "conditions"), i, c)
	{
		const char *type = json_string_value(json_object_get(c, "type"));

		if (type != NULL &&
		    (strcmp(type, "Registered") == 0 || strcmp(type, "AgentReady") == 0) &&
		    strcmp(json_string_value(json_object_get(c, "status")) ?: "", "True") == 0 &&
		    strcmp(json_string_value(json_object_get(c, "reason")) ?: "", "NoAgent") == 0)
			n++;
	}
	json_decref(pool);
	return n == 2;
}

static bool
agent_exists(struct test_apiserver *api)
{
	char got[256];

	deployments_in(api, UNS, got, sizeof(got));
	return strcmp(got, "default-net-1-agent") == 0;
}

/*
 * The Go project's flags and environment variables (cmd/controller/root.go), with their
 * meaning: $AGENT_IMAGE and $AGENT_NAMESPACE place the agent, --service-account-name (an
 * alias) wins over $AGENT_SERVICE_ACCOUNT_NAME, --no-dhcp gives the agents --dry-run,
 * $VM_DHCP_CONTROLLER_NAME and $VM_DHCP_CONTROLLER_DEBUG reach the log, --lease-namespace and
 * --lease-name move the Lease; then --no-agent (no --agent-image needed): the pool is
 * Registered and AgentReady with reason NoAgent and the agent left there is not deleted. A
 * bad boolean variable is refused naming it.
 */
static void
test_upstream_flags(void)
{
	static const char *const env[][2] = {
	    {"AGENT_IMAGE", "agent:from-env"},
	    {"AGENT_NAMESPACE", UNS},
	    {"AGENT_SERVICE_ACCOUNT_NAME", "sa-from-env"},
	    {"VM_DHCP_CONTROLLER_NAME", "ctl-up"},
	    {"VM_DHCP_CONTROLLER_DEBUG", "true"},
	};
	struct test_apiserver *api = NULL;
	char log[80], listen[32], text[65536], path[256];
	int port = test_free_port();
	json_t *dep, *args, *a;
	char *holder;
	bool dry = false;
	size_t i;
	pid_t pid;

	tmpname(log, sizeof(log), "vmdhcp-ctl-main-upstream.log");
	if (find_program() < 0 || port < 0) {
		CU_FAIL("set-up");
		return;
	}
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&api, NULL), 0);
	for (i = 0; i < ELEMENTSOF(env); i++)
		setenv(env[i][0], env[i][1], 1);
	{
		char *argv[] = {program, "--kubeconfig", (char *)test_apiserver_kubeconfig(api),
		    "--listen", listen, "--service-account-name", "sa-up", "--no-dhcp",
		    "--lease-namespace", UNS, "--lease-name", "up-lease", NULL};

		pid = spawn(log, argv);
	}
	for (i = 0; i < ELEMENTSOF(env); i++)
		unsetenv(env[i][0]);
	CU_ASSERT_EQUAL(create_net1(api), 201);
	CU_ASSERT_TRUE(wait_for(agent_exists, api, 30));
	snprintf(
	    path, sizeof(path), "/apis/apps/v1/namespaces/%s/deployments/default-net-1-agent", UNS);
	dep = api_get(api, path);
	{
		json_t *pod = json_object_get(json_object_get(dep, "spec"), "template");
		json_t *c0 =
		    json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);

		CU_ASSERT_STRING_EQUAL(
		    json_string_value(json_object_get(c0, "image")) ?: "", "agent:from-env");
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(
					   json_object_get(pod, "spec"), "serviceAccountName"))
					   ?: "",
		    "sa-up");
		args = json_object_get(c0, "args");
		json_array_foreach(args, i, a) dry |=
		    strcmp(json_string_value(a) ?: "", "--dry-run") == 0;
		CU_ASSERT_TRUE(dry);
	}
	json_decref(dep);
	holder = lease_holder_at(api, UNS, "up-lease");
	CU_ASSERT_PTR_NOT_NULL(holder);
	free(holder);
	holder = lease_holder_at(api, "kube-system", "vm-dhcp-controllers");
	CU_ASSERT_PTR_NULL(holder); /* the default Lease is not touched */
	free(holder);
	kill(pid, SIGTERM);
	CU_ASSERT_EQUAL(wait_exit(pid, 20), 0);
	read_log(log, text, sizeof(text));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "instance name ctl-up"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, " debug "));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "agents without DHCP: --no-dhcp"));

	/* --no-agent: no --agent-image needed, pools served without agents, none deleted */
	{
		char *argv[] = {program, "--kubeconfig", (char *)test_apiserver_kubeconfig(api),
		    "--listen", listen, "--namespace", UNS, "--no-agent", NULL};

		pid = spawn(log, argv);
	}
	CU_ASSERT_TRUE(wait_for(pool_no_agent, api, 30));
	CU_ASSERT_TRUE(agent_exists(api));
	holder = lease_holder_at(api, "kube-system", "vm-dhcp-controllers");
	CU_ASSERT_PTR_NOT_NULL(holder); /* the Go project's Lease, by default */
	free(holder);
	kill(pid, SIGTERM);
	CU_ASSERT_EQUAL(wait_exit(pid, 20), 0);

	/* a bad boolean in the environment: exit 2, one line naming the variable */
	setenv("VM_DHCP_CONTROLLER_TRACE", "yes", 1);
	{
		char *argv[] = {program, "--agent-image", "a", NULL};

		CU_ASSERT_EQUAL(wait_exit(spawn(log, argv), 10), 2);
	}
	unsetenv("VM_DHCP_CONTROLLER_TRACE");
	read_log(log, text, sizeof(text));
	CU_ASSERT_STRING_EQUAL(
	    text, "vm-dhcp-controller: $VM_DHCP_CONTROLLER_TRACE: \"yes\" is not true or false\n");
	test_apiserver_stop(api);
	unlink(log);
}

/* Flags of the mode: --agent-image not needed, --uninstall-timeout only with --uninstall. */
static void
test_uninstall_flags(void)
{
	char *help[] = {program, "--uninstall", "--help", NULL};
	char *lone[] = {program, "--uninstall-timeout", "5", "--agent-image", "a", NULL};
	char *bad[] = {program, "--uninstall", "--uninstall-timeout", "5s", NULL};
	char log[80];
	tmpname(log, sizeof(log), "vmdhcp-ctl-main-uflags.log");
	char text[8192];

	if (find_program() < 0) {
		CU_FAIL("build/vm-dhcp-controller not built");
		return;
	}
	CU_ASSERT_EQUAL(wait_exit(spawn(log, help), 10), 0);
	read_log(log, text, sizeof(text));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--uninstall-timeout SECONDS"));
	CU_ASSERT_EQUAL(wait_exit(spawn(log, lone), 10), 2);
	read_log(log, text, sizeof(text));
	CU_ASSERT_STRING_EQUAL(text, "vm-dhcp-controller: --uninstall-timeout needs --uninstall\n");
	CU_ASSERT_EQUAL(wait_exit(spawn(log, bad), 10), 2);
	read_log(log, text, sizeof(text));
	CU_ASSERT_STRING_EQUAL(text, "vm-dhcp-controller: --uninstall-timeout: \"5s\" is not a "
				     "number of seconds from 1 to 86400\n");
	unlink(log);
}

/* The admission flags refused at start, with the flag named. */
static void
test_admission_flags(void)
{
	char *cidr[] = {program, "--no-agent", "--service-cidr", "10.0.0/8", NULL};
	char *validity[] = {program, "--no-agent", "--webhook-cert-validity", "59", NULL};
	char log[80];
	tmpname(log, sizeof(log), "vmdhcp-ctl-main-aflags.log");
	char text[8192];

	if (find_program() < 0) {
		CU_FAIL("build/vm-dhcp-controller not built");
		return;
	}
	CU_ASSERT_EQUAL(wait_exit(spawn(log, cidr), 10), 2);
	read_log(log, text, sizeof(text));
	CU_ASSERT_STRING_EQUAL(
	    text, "vm-dhcp-controller: --service-cidr 10.0.0/8: not an IPv4 CIDR (a.b.c.d/n)\n");
	CU_ASSERT_EQUAL(wait_exit(spawn(log, validity), 10), 2);
	read_log(log, text, sizeof(text));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--webhook-cert-validity"));
	unlink(log);
}

/* What an operator sees: --version; --log-format (a bad one exits 2, json gives one JSON
 * object per line, the first saying version and revision); the build and process metrics on
 * /metrics, which `promtool check metrics` accepts when promtool is installed. */
static void
test_version_log_format_metrics(void)
{
	char *version[] = {program, "--version", NULL};
	char *bad[] = {program, "--agent-image", "a", "--log-format", "xml", NULL};
	char log[80];
	tmpname(log, sizeof(log), "vmdhcp-ctl-main-fmt.log");
	struct test_apiserver *api = NULL;
	struct body *b = calloc(1, sizeof(*b));
	char *text = calloc(1, 1 << 20), listen[32], *line, *save = NULL;
	int port = test_free_port(), lines = 0, bad_lines = 0, started = 0;
	size_t n;
	pid_t pid;

	if (find_program() < 0 || b == NULL || text == NULL || port < 0) {
		CU_FAIL("set-up");
		free(b);
		free(text);
		return;
	}
	CU_ASSERT_EQUAL(wait_exit(spawn(log, version), 10), 0);
	read_log(log, text, 1 << 20);
	n = strlen(text);
	/* "vm-dhcp-controller VERSION (REVISION)\n" */
	CU_ASSERT_EQUAL(strncmp(text, "vm-dhcp-controller ", 19), 0);
	CU_ASSERT_TRUE(n > 22 && strstr(text, " (") != NULL && strcmp(text + n - 2, ")\n") == 0);
	CU_ASSERT_EQUAL(wait_exit(spawn(log, bad), 10), 2);
	read_log(log, text, 1 << 20);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "--log-format: \"xml\" is not text or json"));

	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&api, NULL), 0);
	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	{
		char *args[] = {program, "--kubeconfig", (char *)test_apiserver_kubeconfig(api),
		    "--namespace", "vmdhcp", "--agent-image", "agent:v1", "--listen", listen,
		    "--no-leader-election", "--log-format", "json", NULL};

		pid = spawn(log, args);
	}
	CU_ASSERT_TRUE(wait_http(port, "/metrics", 200, b));
	CU_ASSERT_PTR_NOT_NULL(strstr(b->buf, "\nvmdhcp_build_info{version=\""));
	CU_ASSERT_TRUE(metric_value(b->buf, "process_resident_memory_bytes") > 0);
	CU_ASSERT_TRUE(metric_value(b->buf, "process_open_fds") > 0);
	CU_ASSERT_TRUE(metric_value(b->buf, "process_start_time_seconds") > 0);
	CU_ASSERT_TRUE(promtool_accepts(b, "fmt"));
	kill(pid, SIGTERM);
	CU_ASSERT_EQUAL(wait_exit(pid, 20), 0);
	test_apiserver_stop(api);
	read_log(log, text, 1 << 20);
	for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		json_t *j = json_loads(line, 0, NULL);

		lines++;
		if (!json_is_string(json_object_get(j, "ts")) ||
		    !json_is_string(json_object_get(j, "level")) ||
		    !json_is_string(json_object_get(j, "msg"))) {
			fprintf(stderr, "not a JSON log line: %s\n", line);
			bad_lines++;
		}
		if (json_is_string(json_object_get(j, "version")) &&
		    json_is_string(json_object_get(j, "revision")))
			started++;
		json_decref(j);
	}
	CU_ASSERT_TRUE(lines > 1);
	CU_ASSERT_EQUAL(bad_lines, 0);
	CU_ASSERT_EQUAL(started, 1);
	free(text);
	free(b);
	unlink(log);
}

static const struct test_case main_tests[] = {
    {"flags", test_flags},
    {"agent flags", test_agent_flags},
    {"leader, health, metrics, stop", test_leader_health_metrics},
    {"/readyz says why when the API server is gone", test_readyz_says_why},
    {"two controllers: exactly one reconciles", test_two_controllers},
    {"two controllers: per-pool metrics on the leader only", test_pool_metrics_leader_only},
    {"--enable-cache-dump-api: /ipams and /caches", test_cache_dump_api},
    {"uninstall: flags", test_uninstall_flags},
    {"admission: flags", test_admission_flags},
    {"uninstall: agents and finalizers removed, foreign ones kept", test_uninstall_cleanup},
    {"uninstall: waits for a running controller, times out", test_uninstall_waits_for_controller},
    {"version, --log-format, build and process metrics", test_version_log_format_metrics},
    {"the Go project's flags and environment variables", test_upstream_flags},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "controller-main", .tests = main_tests},
    {.name = NULL},
};
