/* SPDX-License-Identifier: Apache-2.0 */
/* kubeconfig and in-cluster configuration, and their error messages. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/kube-internal.h"
#include "lib/util.h"
#include "tests/runner.h"

static char tmpdir[256];

/* The CA of tests/data/kube-kubeconfig-raw.yaml: a well-formed PEM certificate. */
static const char ca_pem[] = "-----BEGIN CERTIFICATE-----\n"
			     "MIIBhzCCAS2gAwIBAgIULXom7SLBJxpvAOHImkpwsOW19UowCgYIKoZIzj0EAwIw\n"
			     "GDEWMBQGA1UEAwwNa3ViZXJuZXRlcy1jYTAgFw0yNjExMjIxMTI1NDBaGA8yMTI2\n"
			     "MTAyOTExMjU0MFowGDEWMBQGA1UEAwwNa3ViZXJuZXRlcy1jYTBZMBMGByqGSM49\n"
			     "AgEGCCqGSM49AwEHA0IABI/e1rNBGkBuP/89ZNDht5Mp1+5QLDivJnsRfSNxGea5\n"
			     "42UEKN/ElDS9u106/SkaGp6XXms34v3yHAaWWLjfe5+jUzBRMB0GA1UdDgQWBBSz\n"
			     "lXnieHQ5QZ0hVjBeb2mgzNUZIDAfBgNVHSMEGDAWgBSzlXnieHQ5QZ0hVjBeb2mg\n"
			     "zNUZIDAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIQChZ0BbCVYM\n"
			     "API1ELNQehPqCflqaUjjOubWtdUY7uF43AIgaem2bmoUDpfpEPTZRK9JhRdLaMNT\n"
			     "2iQGVSWafrfWkSs=\n"
			     "-----END CERTIFICATE-----\n";

static int
suite_init(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-kube-config-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int
suite_cleanup(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void
write_text(const char *name, const char *text, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", tmpdir, name);
	CU_ASSERT_EQUAL_FATAL(write_file_atomic(path, text, strlen(text), 0600), 0);
}

static void
raw_path(char *out, size_t len)
{
	snprintf(out, len, "%s/kube-kubeconfig-raw.yaml", test_data_dir());
}

static void
test_raw_kubeconfig(void)
{
	struct kube_config *cfg = NULL;
	char err[512] = "", path[512];

	raw_path(path, sizeof(path));
	CU_ASSERT_EQUAL_FATAL(kube_config_from_kubeconfig(path, NULL, &cfg, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(kube_config_server(cfg), "https://127.0.0.1:6443");
	CU_ASSERT_FALSE(kube_config_insecure(cfg));
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg->ca_data);
	CU_ASSERT_PTR_NOT_NULL(strstr(cfg->ca_data, "-----BEGIN CERTIFICATE-----"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg->cert_data);
	CU_ASSERT_PTR_NOT_NULL(strstr(cfg->cert_data, "-----BEGIN CERTIFICATE-----"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(cfg->key_data);
	CU_ASSERT_PTR_NOT_NULL(strstr(cfg->key_data, "PRIVATE KEY-----"));
	CU_ASSERT_EQUAL(cfg->ca_data_len, strlen(cfg->ca_data));
	CU_ASSERT_PTR_NULL(kube_config_token(cfg));
	CU_ASSERT_STRING_EQUAL(kube_config_namespace(cfg), "default");
	kube_config_free(cfg);

	/* the other context: token, namespace, insecure */
	CU_ASSERT_EQUAL_FATAL(
	    kube_config_from_kubeconfig(path, "other", &cfg, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(kube_config_server(cfg), "https://10.0.0.1:443");
	CU_ASSERT_TRUE(kube_config_insecure(cfg));
	CU_ASSERT_STRING_EQUAL(kube_config_token(cfg), "eyJhbGciOiJSUzI1NiJ9.test-token");
	CU_ASSERT_STRING_EQUAL(kube_config_namespace(cfg), "team-a");
	kube_config_free(cfg);

	/* KUBECONFIG (first entry of a list) when no path is given */
	{
		char list[600];

		snprintf(list, sizeof(list), "%s:/nonexistent", path);
		setenv("KUBECONFIG", list, 1);
		CU_ASSERT_EQUAL(kube_config_load(NULL, &cfg, err, sizeof(err)), 0);
		CU_ASSERT_STRING_EQUAL(kube_config_server(cfg), "https://127.0.0.1:6443");
		kube_config_free(cfg);
		/* a context named (the agent's --kubecontext / $KUBECONTEXT) */
		CU_ASSERT_EQUAL(kube_config_load_context(NULL, "other", &cfg, err, sizeof(err)), 0);
		CU_ASSERT_STRING_EQUAL(kube_config_server(cfg), "https://10.0.0.1:443");
		kube_config_free(cfg);
		CU_ASSERT_EQUAL(kube_config_load_context(path, "", &cfg, err, sizeof(err)), 0);
		CU_ASSERT_STRING_EQUAL(kube_config_server(cfg), "https://127.0.0.1:6443");
		kube_config_free(cfg);
		cfg = NULL;
		CU_ASSERT_EQUAL(
		    kube_config_load_context(path, "nope", &cfg, err, sizeof(err)), -EINVAL);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "no entry named \"nope\""));
		CU_ASSERT_PTR_NULL(cfg);
		unsetenv("KUBECONFIG");
	}
}

static void
test_files_relative(void)
{
	static const char kc[] = "apiVersion: v1\n"
				 "kind: Config\n"
				 "current-context: c\n"
				 "contexts:\n"
				 "- name: c\n"
				 "  context: {cluster: k, user: u}\n"
				 "clusters:\n"
				 "- name: k\n"
				 "  cluster:\n"
				 "    server: https://[::1]:6443\n"
				 "    certificate-authority: ca.pem\n"
				 "users:\n"
				 "- name: u\n"
				 "  user:\n"
				 "    tokenFile: tok\n"
				 "    client-certificate: c.pem\n"
				 "    client-key: k.pem\n";
	struct kube_config *cfg = NULL;
	char path[512], p2[512], err[512] = "";

	write_text("ca.pem", ca_pem, p2, sizeof(p2));
	write_text("c.pem", "x", p2, sizeof(p2));
	write_text("k.pem", "x", p2, sizeof(p2));
	write_text("tok", "first-token\n", p2, sizeof(p2));
	write_text("kc-files.yaml", kc, path, sizeof(path));
	CU_ASSERT_EQUAL_FATAL(kube_config_from_kubeconfig(path, NULL, &cfg, err, sizeof(err)), 0);
	snprintf(p2, sizeof(p2), "%s/ca.pem", tmpdir);
	CU_ASSERT_STRING_EQUAL(cfg->ca_file, p2);
	snprintf(p2, sizeof(p2), "%s/k.pem", tmpdir);
	CU_ASSERT_STRING_EQUAL(cfg->key_file, p2);
	CU_ASSERT_STRING_EQUAL(kube_config_server(cfg), "https://[::1]:6443");
	CU_ASSERT_STRING_EQUAL(kube_config_token(cfg), "first-token");
	/* a rotated token file is picked up */
	write_text("tok", "second-token-longer\n", p2, sizeof(p2));
	CU_ASSERT_STRING_EQUAL(kube_config_token(cfg), "second-token-longer");
	kube_config_free(cfg);
}

struct bad_case {
	const char *name;
	const char *yaml;
	int err;
	const char *needle; /* must appear in the message */
};

static const struct bad_case bad_cases[] = {
    {"syntax", "clusters:\n  - name: a\n   bad: [\n", -EINVAL, ":3:"},
    {"not a map", "- a\n- b\n", -EINVAL, "not a YAML mapping"},
    {"no current-context", "kind: Config\n", -EINVAL, "current-context"},
    {"missing context", "current-context: x\ncontexts:\n- name: y\n  context: {cluster: a}\n",
	-EINVAL, "contexts: no entry named \"x\""},
    {"missing cluster", "current-context: x\ncontexts:\n- name: x\n  context: {cluster: a}\n",
	-EINVAL, "clusters: no entry named \"a\""},
    {"no server",
	"current-context: x\ncontexts:\n- name: x\n  context: {cluster: a}\n"
	"clusters:\n- name: a\n  cluster: {}\n",
	-EINVAL, "clusters[0].cluster.server: missing"},
    {"bad server",
	"current-context: x\ncontexts:\n- name: x\n  context: {cluster: a}\n"
	"clusters:\n- name: a\n  cluster: {server: 'ftp://x'}\n",
	-EINVAL, "clusters[0].cluster.server: not an http(s):// URL"},
    {"bad base64",
	"current-context: x\ncontexts:\n- name: x\n  context: {cluster: a}\n"
	"clusters:\n- name: z\n  cluster: {server: 'https://z'}\n"
	"- name: a\n  cluster: {server: 'https://x', certificate-authority-data: '!!notb64'}\n",
	-EINVAL, "clusters[1].cluster.certificate-authority-data: not valid base64"},
    {"not pem",
	"current-context: x\ncontexts:\n- name: x\n  context: {cluster: a, user: u}\n"
	"clusters:\n- name: a\n  cluster: {server: 'https://x'}\n"
	"users:\n- name: u\n  user: {client-certificate-data: aGVsbG8=, client-key-data: "
	"aGVsbG8=}\n",
	-EINVAL, "users[0].user.client-certificate-data: not a PEM block"},
    {"garbage CA file",
	"current-context: x\ncontexts:\n- name: x\n  context: {cluster: a}\n"
	"clusters:\n- name: a\n  cluster: {server: 'https://x', certificate-authority: @CA@}\n",
	-EINVAL, "clusters[0].cluster.certificate-authority: @CA@: no PEM CERTIFICATE block"},
    {"CA data that is PEM but not a certificate",
	"current-context: x\ncontexts:\n- name: x\n  context: {cluster: a}\n"
	"clusters:\n- name: a\n  cluster: {server: 'https://x', certificate-authority-data: "
	"LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCmdhcmJhZ2UKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=}\n",
	-EINVAL, "clusters[0].cluster.certificate-authority-data: no PEM CERTIFICATE block"},
    {"token with LF",
	"current-context: x\ncontexts:\n- name: x\n  context: {cluster: a, user: u}\n"
	"clusters:\n- name: a\n  cluster: {server: 'https://x'}\n"
	"users:\n- name: u\n  user: {token: \"abc\\nX-Injected: 1\"}\n",
	-EINVAL, "users[0].user.token: contains a line break"},
    {"token with CR",
	"current-context: x\ncontexts:\n- name: x\n  context: {cluster: a, user: u}\n"
	"clusters:\n- name: a\n  cluster: {server: 'https://x'}\n"
	"users:\n- name: u\n  user: {token: \"abc\\rdef\"}\n",
	-EINVAL, "users[0].user.token: contains a line break"},
    {"token file with a line break inside",
	"current-context: x\ncontexts:\n- name: x\n  context: {cluster: a, user: u}\n"
	"clusters:\n- name: a\n  cluster: {server: 'https://x'}\n"
	"users:\n- name: u\n  user: {tokenFile: @TOK@}\n",
	-EINVAL, "users[0].user.tokenFile: @TOK@: token contains a line break"},
    {"missing file",
	"current-context: x\ncontexts:\n- name: x\n  context: {cluster: a}\n"
	"clusters:\n- name: a\n  cluster: {server: 'https://x', certificate-authority: "
	"/nonexistent/ca.crt}\n",
	-ENOENT, "clusters[0].cluster.certificate-authority: /nonexistent/ca.crt"},
    {"token not string",
	"current-context: x\ncontexts:\n- name: x\n  context: {cluster: a, user: u}\n"
	"clusters:\n- name: a\n  cluster: {server: 'https://x'}\n"
	"users:\n- name: u\n  user: {token: [1]}\n",
	-EINVAL, "users[0].user.token: not a string"},
    {"insecure not bool",
	"current-context: x\ncontexts:\n- name: x\n  context: {cluster: a}\n"
	"clusters:\n- name: a\n  cluster: {server: 'https://x', insecure-skip-tls-verify: 'yes'}\n",
	-EINVAL, "insecure-skip-tls-verify: not a boolean"},
    {"cert without key",
	"current-context: x\ncontexts:\n- name: x\n  context: {cluster: a, user: u}\n"
	"clusters:\n- name: a\n  cluster: {server: 'https://x'}\n"
	"users:\n- name: u\n  user: {client-certificate-data: LS0tLS1CRUdJTiBYLS0tLS0K}\n",
	-EINVAL, "certificate and key must be given together"},
    {"exec plugin",
	"current-context: x\ncontexts:\n- name: x\n  context: {cluster: a, user: u}\n"
	"clusters:\n- name: a\n  cluster: {server: 'https://x'}\n"
	"users:\n- name: u\n  user: {exec: {command: aws}}\n",
	-ENOTSUP, "exec/auth-provider"},
};

/* Copies in to out with @CA@ and @TOK@ replaced by the paths of the files they name. */
static void
expand(const char *in, const char *ca, const char *tok, char *out, size_t len)
{
	size_t o = 0;

	while (*in && o + 1 < len) {
		const char *with = NULL;

		if (strncmp(in, "@CA@", 4) == 0)
			with = ca;
		else if (strncmp(in, "@TOK@", 5) == 0)
			with = tok;
		if (with) {
			o += (size_t)snprintf(out + o, len - o, "%s", with);
			in += with == ca ? 4 : 5;
			continue;
		}
		out[o++] = *in++;
	}
	CU_ASSERT_FATAL(o + 1 < len);
	out[o] = '\0';
}

static void
test_malformed(void)
{
	char ca[512], tok[512];

	write_text("garbage-ca.pem", "not a certificate\n", ca, sizeof(ca));
	write_text("bad-token", "abc\nX-Injected: 1\n", tok, sizeof(tok));
	for (size_t i = 0; i < ELEMENTSOF(bad_cases); i++) {
		const struct bad_case *b = &bad_cases[i];
		struct kube_config *cfg = NULL;
		char path[512], err[512] = "", yaml[2048], needle[1024];
		int rc;

		expand(b->yaml, ca, tok, yaml, sizeof(yaml));
		expand(b->needle, ca, tok, needle, sizeof(needle));
		write_text("bad.yaml", yaml, path, sizeof(path));
		rc = kube_config_from_kubeconfig(path, NULL, &cfg, err, sizeof(err));
		if (rc != b->err || !strstr(err, needle) || !strstr(err, path))
			fprintf(stderr, "case %s: rc %d err '%s'\n", b->name, rc, err);
		CU_ASSERT_EQUAL(rc, b->err);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, needle));
		CU_ASSERT_PTR_NOT_NULL(strstr(err, path)); /* names the file */
		CU_ASSERT_PTR_NULL(cfg);
	}
	{
		struct kube_config *cfg = NULL;
		char err[512] = "";

		CU_ASSERT_EQUAL(
		    kube_config_from_kubeconfig("/nonexistent/kc", NULL, &cfg, err, sizeof(err)),
		    -ENOENT);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "/nonexistent/kc"));
	}
}

static void
test_in_cluster(void)
{
	struct kube_config *cfg = NULL;
	char err[512] = "", sa[300], p[512];

	snprintf(sa, sizeof(sa), "%s/sa", tmpdir);
	mkdir(sa, 0700);
	unsetenv("KUBERNETES_SERVICE_HOST");
	CU_ASSERT_EQUAL(kube_config_in_cluster(sa, &cfg, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "KUBERNETES_SERVICE_HOST"));

	setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	CU_ASSERT_EQUAL(kube_config_in_cluster(sa, &cfg, err, sizeof(err)), -ENOENT);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/sa/token"));

	write_text("sa/token", "tok-1", p, sizeof(p));
	/* a garbage ca.crt is an error at start, not at the first handshake */
	write_text("sa/token", "tok-1", p, sizeof(p));
	write_text("sa/ca.crt", "-----BEGIN CERTIFICATE-----\n", p, sizeof(p));
	CU_ASSERT_EQUAL(kube_config_in_cluster(sa, &cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "/sa/ca.crt: no PEM CERTIFICATE block"));
	CU_ASSERT_PTR_NULL(cfg);
	/* a token file with a line break inside the token would inject a header */
	write_text("sa/ca.crt", ca_pem, p, sizeof(p));
	write_text("sa/token", "tok-1\r\nX-Injected: 1\n", p, sizeof(p));
	CU_ASSERT_EQUAL(kube_config_in_cluster(sa, &cfg, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "line break"));
	CU_ASSERT_PTR_NULL(cfg);
	write_text("sa/token", "tok-1", p, sizeof(p));

	write_text("sa/namespace", "kube-system\n", p, sizeof(p));
	CU_ASSERT_EQUAL_FATAL(kube_config_in_cluster(sa, &cfg, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(kube_config_server(cfg), "https://10.96.0.1:443");
	CU_ASSERT_STRING_EQUAL(kube_config_token(cfg), "tok-1");
	CU_ASSERT_STRING_EQUAL(kube_config_namespace(cfg), "kube-system");
	/* rotation (kubelet swaps the file): the next read sees the new token */
	write_text("sa/token", "tok-2-rotated", p, sizeof(p));
	CU_ASSERT_STRING_EQUAL(kube_config_token(cfg), "tok-2-rotated");
	/* a vanished file keeps the last good token */
	unlink(p);
	CU_ASSERT_STRING_EQUAL(kube_config_token(cfg), "tok-2-rotated");
	kube_config_free(cfg);

	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	write_text("sa/token", "tok-3", p, sizeof(p));
	CU_ASSERT_EQUAL_FATAL(kube_config_in_cluster(sa, &cfg, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(kube_config_server(cfg), "https://[fd00::1]:443");
	kube_config_free(cfg);
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
}

static const struct test_case config_tests[] = {
    {"kubectl config view --raw", test_raw_kubeconfig},
    {"relative files, token file rotation", test_files_relative},
    {"malformed kubeconfigs", test_malformed},
    {"in-cluster", test_in_cluster},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "kube-config", .init = suite_init, .cleanup = suite_cleanup, .tests = config_tests},
    {.name = NULL},
};
