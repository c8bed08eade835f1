/* SPDX-License-Identifier: Apache-2.0 */
/* Harness for build/test-apiserver: start, restart, stop, fault injection, requests. */
#include "tests/helpers/apiserver.h"

#include <errno.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "kube/yaml.h"
#include "lib/util.h"

#define MAX_ARGS 64

struct test_apiserver {
	pid_t pid;
	int port;
	char dir[256];
	char kubeconfig[PATH_MAX];
	char ca[PATH_MAX];
	char data[PATH_MAX];
	char url[64];
	char token[256];
	char bin[PATH_MAX];
	char *extra;	 /* copy of extra_args */
	int exit_status; /* of the last process that ended, -1 = abnormal */
	CURL *curl;	 /* reused: keeps the connection alive between requests */
};

static int
find_binary(char out[PATH_MAX])
{
	const char *env = getenv("VMDHCP_APISERVER");
	char exe[PATH_MAX];
	ssize_t n;

	if (env != NULL && env[0] != '\0') {
		snprintf(out, PATH_MAX, "%s", env);
		return access(out, X_OK) == 0 ? 0 : -ENOENT;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		char *d;
		exe[n] = '\0';
		d = dirname(exe); /* BUILD/tests */
		if (strcmp(basename(d), "tests") == 0) {
			snprintf(out, PATH_MAX, "%s/../test-apiserver", d);
			if (access(out, X_OK) == 0)
				return 0;
		}
	}
	snprintf(out, PATH_MAX, "build/test-apiserver");
	return access(out, X_OK) == 0 ? 0 : -ENOENT;
}

static int
spawn(struct test_apiserver *a, int port)
{
	char *argv[MAX_ARGS + 1], listen[64], portfile[PATH_MAX + 8], *copy = NULL, *save = NULL;
	char *wcopy = NULL;
	const char *wrapper;
	pid_t parent;
	int argc = 0, r;
	struct timespec ts = {0, 10 * 1000 * 1000};

	snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
	snprintf(portfile, sizeof(portfile), "%s/port", a->dir);
	unlink(portfile);
	wrapper = getenv("VMDHCP_APISERVER_WRAPPER");
	if (wrapper != NULL && wrapper[0] != '\0') {
		wcopy = strdup(wrapper);
		for (char *t = strtok_r(wcopy, " \t\n", &save); t != NULL && argc < MAX_ARGS / 2;
		     t = strtok_r(NULL, " \t\n", &save))
			argv[argc++] = t;
		save = NULL;
	}
	argv[argc++] = a->bin;
	argv[argc++] = "--listen";
	argv[argc++] = listen;
	argv[argc++] = "--state-dir";
	argv[argc++] = a->dir;
	argv[argc++] = "--data";
	argv[argc++] = a->data;
	argv[argc++] = "--token";
	argv[argc++] = a->token;
	if (a->extra != NULL) {
		copy = strdup(a->extra);
		for (char *t = strtok_r(copy, " \t\n", &save); t != NULL && argc < MAX_ARGS;
		     t = strtok_r(NULL, " \t\n", &save))
			argv[argc++] = t;
	}
	argv[argc] = NULL;
	parent = getpid();
	a->pid = fork();
	if (a->pid == 0) {
		/* The server must not outlive a test binary that crashes or is killed. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "test-apiserver: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	r = a->pid < 0 ? -errno : 0;
	free(copy);
	free(wcopy);
	if (r < 0) {
		a->pid = 0;
		return r;
	}
	/* Ready when DIR/port exists (written last, atomically); valgrind is slow. */
	for (int i = 0; i < 6000; i++) {
		FILE *f = fopen(portfile, "r");
		int status;

		if (f != NULL) {
			int p = 0;
			r = fscanf(f, "%d", &p);
			fclose(f);
			if (r == 1 && p > 0) {
				a->port = p;
				snprintf(a->url, sizeof(a->url), "https://127.0.0.1:%d", p);
				return 0;
			}
		}
		if (waitpid(a->pid, &status, WNOHANG) == a->pid) {
			a->pid = 0;
			a->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
			return -ECHILD;
		}
		nanosleep(&ts, NULL);
	}
	return -ETIMEDOUT;
}

/* SIGTERM and wait (SIGKILL after 60 s). Returns 0 when the server exited with status 0. */
static int
terminate(struct test_apiserver *a)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	int status;

	if (a->pid <= 0)
		return a->exit_status == 0 ? 0 : -EPROTO;
	kill(a->pid, SIGTERM);
	for (int i = 0; i < 6000; i++) {
		if (waitpid(a->pid, &status, WNOHANG) == a->pid) {
			a->pid = 0;
			a->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
			if (a->exit_status != 0)
				fprintf(stderr, "test-apiserver: exited with status %d\n",
				    a->exit_status);
			return a->exit_status == 0 ? 0 : -EPROTO;
		}
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "test-apiserver: did not exit on SIGTERM, killing it\n");
	kill(a->pid, SIGKILL);
	waitpid(a->pid, &status, 0);
	a->pid = 0;
	a->exit_status = -1;
	return -ETIMEDOUT;
}

static int
rm_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

int
test_apiserver_start(struct test_apiserver **ret, const char *extra_args)
{
	struct test_apiserver *a = calloc(1, sizeof(*a));
	const char *tok;
	int r;

	if (a == NULL)
		return -ENOMEM;
	r = find_binary(a->bin);
	if (r < 0) {
		fprintf(stderr, "test-apiserver binary not found (build it with make, or set "
				"VMDHCP_APISERVER)\n");
		free(a);
		return r;
	}
	snprintf(a->dir, sizeof(a->dir), "/tmp/vmdhcp-apiserver-XXXXXX");
	if (mkdtemp(a->dir) == NULL) {
		r = -errno;
		free(a);
		return r;
	}
	snprintf(a->kubeconfig, sizeof(a->kubeconfig), "%s/kubeconfig", a->dir);
	snprintf(a->ca, sizeof(a->ca), "%s/ca.crt", a->dir);
	snprintf(a->data, sizeof(a->data), "%s/data.json", a->dir);
	snprintf(a->token, sizeof(a->token), "test-token");
	if (extra_args != NULL) {
		a->extra = strdup(extra_args);
		/* a --token in the extra arguments wins (it comes later on the command line) */
		tok = strstr(extra_args, "--token");
		if (tok != NULL && sscanf(tok + 7, " %255s", a->token) != 1)
			snprintf(a->token, sizeof(a->token), "test-token");
	}
	r = spawn(a, 0);
	if (r < 0) {
		test_apiserver_stop(a);
		return r;
	}
	*ret = a;
	return 0;
}

struct test_apiserver *
test_apiserver_stop(struct test_apiserver *a)
{
	if (a == NULL)
		return NULL;
	terminate(a);
	if (a->curl != NULL)
		curl_easy_cleanup(a->curl);
	nftw(a->dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	free(a->extra);
	free(a);
	return NULL;
}

int
test_apiserver_terminate(struct test_apiserver *a)
{
	return terminate(a);
}

int
test_apiserver_restart(struct test_apiserver *a)
{
	int port = a->port;
	int r = terminate(a);

	if (r < 0)
		return r;
	if (a->curl != NULL) {
		curl_easy_cleanup(a->curl); /* drop the old connection */
		a->curl = NULL;
	}
	return spawn(a, port);
}

const char *
test_apiserver_kubeconfig(const struct test_apiserver *a)
{
	return a->kubeconfig;
}

const char *
test_apiserver_url(const struct test_apiserver *a)
{
	return a->url;
}

const char *
test_apiserver_token(const struct test_apiserver *a)
{
	return a->token;
}

const char *
test_apiserver_ca_file(const struct test_apiserver *a)
{
	return a->ca;
}

const char *
test_apiserver_dir(const struct test_apiserver *a)
{
	return a->dir;
}

int
test_apiserver_port(const struct test_apiserver *a)
{
	return a->port;
}

int
test_apiserver_pid(const struct test_apiserver *a)
{
	return (int)a->pid;
}

struct body {
	char *p;
	size_t len;
};

static size_t
write_cb(char *ptr, size_t size, size_t nmemb, void *ud)
{
	struct body *b = ud;
	size_t n = size * nmemb;
	char *np = realloc(b->p, b->len + n + 1);

	if (np == NULL)
		return 0;
	b->p = np;
	memcpy(b->p + b->len, ptr, n);
	b->len += n;
	b->p[b->len] = '\0';
	return n;
}

int
test_apiserver_request(struct test_apiserver *a, const char *method, const char *path,
    const char *content_type, const char *body, long *ret_code, char **ret_body)
{
	struct curl_slist *hdrs = NULL;
	struct body out = {NULL, 0};
	char url[8192], auth[300], ct[256];
	CURLcode cc;

	if (a->curl == NULL) {
		a->curl = curl_easy_init();
		if (a->curl == NULL)
			return -ENOMEM;
	} else {
		curl_easy_reset(a->curl);
	}
	snprintf(url, sizeof(url), "%s%s", a->url, path);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", a->token);
	hdrs = curl_slist_append(hdrs, auth);
	if (body != NULL) {
		snprintf(ct, sizeof(ct), "Content-Type: %s",
		    content_type != NULL ? content_type : "application/json");
		hdrs = curl_slist_append(hdrs, ct);
		curl_easy_setopt(a->curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(a->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	hdrs = curl_slist_append(hdrs, "Expect:");
	curl_easy_setopt(a->curl, CURLOPT_URL, url);
	curl_easy_setopt(a->curl, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "GET") == 0 && body == NULL)
		curl_easy_setopt(a->curl, CURLOPT_HTTPGET, 1L);
	curl_easy_setopt(a->curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(a->curl, CURLOPT_CAINFO, a->ca);
	curl_easy_setopt(a->curl, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(a->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(a->curl, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(a->curl, CURLOPT_WRITEDATA, &out);
	cc = curl_easy_perform(a->curl);
	curl_slist_free_all(hdrs);
	if (cc != CURLE_OK) {
		free(out.p);
		fprintf(stderr, "test_apiserver_request %s %s: %s\n", method, path,
		    curl_easy_strerror(cc));
		return cc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO;
	}
	curl_easy_getinfo(a->curl, CURLINFO_RESPONSE_CODE, ret_code);
	if (ret_body != NULL) {
		if (out.p == NULL)
			out.p = strdup("");
		*ret_body = out.p;
	} else {
		free(out.p);
	}
	return 0;
}

int
test_apiserver_fault(struct test_apiserver *a, const char *what)
{
	char path[1024];
	long code = 0;
	int r;

	snprintf(path, sizeof(path), "/_test/%s", what);
	r = test_apiserver_request(a, "POST", path, NULL, NULL, &code, NULL);
	if (r < 0)
		return r;
	return code >= 200 && code < 300 ? 0 : -EIO;
}

json_t *
test_apiserver_json(struct test_apiserver *a, const char *method, const char *path,
    const char *content_type, json_t *body, long *ret_code)
{
	char *text = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
	char *out = NULL;
	long c = 0;
	json_t *j = NULL;

	if (test_apiserver_request(a, method, path, content_type, text, &c, &out) == 0 && out)
		j = json_loads(out, 0, NULL);
	free(text);
	free(out);
	if (ret_code != NULL)
		*ret_code = c;
	return j;
}

int
test_apiserver_apply_crds(struct test_apiserver *a, const char *crds_dir)
{
	static const char *const files[] = {"ippools.yaml", "virtualmachinenetworkconfigs.yaml"};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[PATH_MAX], *text = NULL, *body;
		struct yaml_error yerr;
		json_t *crd = NULL;
		size_t len = 0;
		long code = 0;
		int r;

		snprintf(path, sizeof(path), "%s/%s", crds_dir, files[i]);
		if ((r = read_file(path, 1 << 20, &text, &len)) < 0) {
			fprintf(stderr, "apply_crds: %s: %s\n", path, strerror(-r));
			return r;
		}
		r = yaml_parse_one(text, len, &crd, &yerr);
		free(text);
		if (r < 0) {
			fprintf(stderr, "apply_crds: %s:%u: %s\n", path, yerr.line, yerr.message);
			return r;
		}
		body = json_dumps(crd, JSON_COMPACT);
		json_decref(crd);
		if (!body)
			return -ENOMEM;
		r = test_apiserver_request(a, "POST",
		    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", NULL, body, &code,
		    NULL);
		free(body);
		if (r < 0)
			return r;
		if (code != 201) {
			fprintf(stderr, "apply_crds: %s: HTTP %ld\n", path, code);
			return -EIO;
		}
	}
	return 0;
}
