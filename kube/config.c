/* SPDX-License-Identifier: Apache-2.0 */
/* kubeconfig (YAML) and in-cluster configuration. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/kube-internal.h"
#include "kube/yaml.h"
#include "lib/util.h"

#define SA_ROOT "/var/run/secrets/kubernetes.io/serviceaccount"
#define CONFIG_FILE_MAX (16u << 20)

static void __attribute__((format(printf, 3, 4)))
set_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

struct kube_config *
kube_config_free(struct kube_config *cfg)
{
	if (!cfg)
		return NULL;
	free(cfg->server);
	free(cfg->ca_file);
	free(cfg->ca_data);
	free(cfg->cert_file);
	free(cfg->key_file);
	free(cfg->cert_data);
	if (cfg->key_data)
		memset(cfg->key_data, 0, cfg->key_data_len);
	free(cfg->key_data);
	if (cfg->token)
		memset(cfg->token, 0, strlen(cfg->token));
	free(cfg->token);
	free(cfg->token_file);
	free(cfg->namespace);
	free(cfg);
	return NULL;
}

const char *
kube_config_server(const struct kube_config *cfg)
{
	return cfg->server;
}

const char *
kube_config_namespace(const struct kube_config *cfg)
{
	return cfg->namespace ? cfg->namespace : "default";
}

bool
kube_config_insecure(const struct kube_config *cfg)
{
	return cfg->insecure;
}

static void
trim_trailing_space(char *s)
{
	size_t n = strlen(s);

	while (
	    n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

/* A token goes into an HTTP header line: CR or LF in it would end that line early. */
static bool
token_has_line_break(const char *t)
{
	return t && t[strcspn(t, "\r\n")] != '\0';
}

/* -EBADMSG: the file holds a line break inside the token (the old token is kept). */
static int
reload_token(struct kube_config *cfg)
{
	struct stat st;
	uint64_t stamp[3];
	char *data = NULL;
	size_t len;
	int rc;

	if (stat(cfg->token_file, &st) < 0)
		return -errno;
	stamp[0] = (uint64_t)st.st_ino;
	stamp[1] = (uint64_t)st.st_size;
	stamp[2] = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
	if (cfg->token && memcmp(stamp, cfg->token_stamp, sizeof(stamp)) == 0)
		return 0;
	rc = read_file(cfg->token_file, 1 << 20, &data, &len);
	if (rc < 0)
		return rc;
	trim_trailing_space(data);
	if (token_has_line_break(data)) {
		memset(data, 0, len);
		free(data);
		return -EBADMSG;
	}
	if (cfg->token) {
		memset(cfg->token, 0, strlen(cfg->token));
		free(cfg->token);
	}
	cfg->token = data;
	memcpy(cfg->token_stamp, stamp, sizeof(stamp));
	return 0;
}

const char *
kube_config_token(struct kube_config *cfg)
{
	if (cfg->token_file)
		(void)reload_token(cfg); /* keep the last good token on a failed re-read */
	return cfg->token && *cfg->token ? cfg->token : NULL;
}

/* --- base64 ------------------------------------------------------------------------ */

static int
b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/* Decodes base64 (whitespace ignored, padding optional) into a new NUL-terminated buffer. */
static int
b64_decode(const char *in, char **ret, size_t *ret_len)
{
	size_t n = strlen(in), o = 0;
	unsigned acc = 0, bits = 0;
	bool pad = false;
	char *out = malloc(n / 4 * 3 + 4);

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)in[i];
		int v;

		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pad = true;
			continue;
		}
		v = b64_value(c);
		if (v < 0 || pad) {
			free(out);
			return -EINVAL;
		}
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (char)((acc >> bits) & 0xff);
		}
	}
	if (bits >= 6) {
		free(out);
		return -EINVAL;
	}
	out[o] = '\0';
	*ret = out;
	*ret_len = o;
	return 0;
}

/* --- certificate authority sanity check ----------------------------------------------- */

#define PEM_BEGIN_CERT "-----BEGIN CERTIFICATE-----"
#define PEM_END_CERT "-----END CERTIFICATE-----"

/*
 * True when text holds at least one BEGIN/END CERTIFICATE block whose body is base64 of
 * something that starts like DER (a SEQUENCE). Not a certificate parser: it catches a
 * garbage or truncated CA at start instead of at the first TLS handshake (the transports
 * parse for real; the agent's must not pull OpenSSL into config.c).
 */
static bool
pem_has_certificate(const char *text, size_t len)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *b =
		    memmem(p, (size_t)(end - p), PEM_BEGIN_CERT, strlen(PEM_BEGIN_CERT));
		const char *body, *e;
		char *copy, *der;
		size_t der_len;
		bool ok;

		if (!b)
			return false;
		body = b + strlen(PEM_BEGIN_CERT);
		e = memmem(body, (size_t)(end - body), PEM_END_CERT, strlen(PEM_END_CERT));
		if (!e)
			return false;
		p = e + strlen(PEM_END_CERT);
		copy = strndup(body, (size_t)(e - body));
		if (!copy)
			return false;
		ok = b64_decode(copy, &der, &der_len) == 0;
		free(copy);
		if (ok) {
			ok = der_len >= 64 && (unsigned char)der[0] == 0x30;
			free(der);
			if (ok)
				return true;
		}
	}
	return false;
}

/* 0, -EINVAL (not a PEM certificate), or the negative errno of reading path. */
static int
check_ca_file(const char *path)
{
	char *text = NULL;
	size_t len;
	int rc;

	rc = read_file(path, CONFIG_FILE_MAX, &text, &len);
	if (rc < 0)
		return rc;
	rc = pem_has_certificate(text, len) ? 0 : -EINVAL;
	free(text);
	return rc;
}

/* --- kubeconfig ---------------------------------------------------------------------- */

struct kc_ctx {
	const char *path;
	char *dir; /* directory of the kubeconfig, for relative file names */
	char *err;
	size_t err_len;
};

static const json_t *
find_named(const json_t *doc, const char *list, const char *name, const char *inner,
    struct kc_ctx *k, int *ret_index)
{
	const json_t *arr = json_object_get(doc, list);
	size_t i;
	json_t *v;

	if (arr && !json_is_array(arr)) {
		set_err(k->err, k->err_len, "kubeconfig %s: %s: not a list", k->path, list);
		return NULL;
	}
	json_array_foreach(arr, i, v)
	{
		const char *n = json_string_value(json_object_get(v, "name"));

		if (n && strcmp(n, name) == 0) {
			const json_t *in = json_object_get(v, inner);

			if (!json_is_object(in)) {
				set_err(k->err, k->err_len,
				    "kubeconfig %s: %s[%zu].%s: missing or not a mapping", k->path,
				    list, i, inner);
				return NULL;
			}
			*ret_index = (int)i;
			return in;
		}
	}
	set_err(
	    k->err, k->err_len, "kubeconfig %s: %s: no entry named \"%s\"", k->path, list, name);
	return NULL;
}

/* Reads an optional string field; -EINVAL (error set) if present but not a string. */
static int
opt_string(const json_t *obj, const char *field, const char *where, int idx, struct kc_ctx *k,
    const char **ret)
{
	const json_t *v = json_object_get(obj, field);

	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_string(v)) {
		set_err(k->err, k->err_len, "kubeconfig %s: %s[%d].%.*s.%s: not a string", k->path,
		    where, idx, (int)strlen(where) - 1, where, field);
		return -EINVAL;
	}
	*ret = json_string_value(v);
	return 0;
}

static char *
resolve_path(const struct kc_ctx *k, const char *p)
{
	char *out;

	if (p[0] == '/' || !k->dir)
		return strdup(p);
	if (asprintf(&out, "%s/%s", k->dir, p) < 0)
		return NULL;
	return out;
}

static int
file_field(
    const json_t *obj, const char *field, const char *where, int idx, struct kc_ctx *k, char **ret)
{
	const char *s;
	struct stat st;
	int rc;

	rc = opt_string(obj, field, where, idx, k, &s);
	if (rc < 0 || !s)
		return rc;
	*ret = resolve_path(k, s);
	if (!*ret)
		return -ENOMEM;
	if (stat(*ret, &st) < 0) {
		rc = -errno;
		set_err(k->err, k->err_len, "kubeconfig %s: %s[%d].%.*s.%s: %s: %s", k->path, where,
		    idx, (int)strlen(where) - 1, where, field, *ret, strerror(errno));
		return rc;
	}
	return 0;
}

static int
data_field(const json_t *obj, const char *field, const char *where, int idx, struct kc_ctx *k,
    char **ret, size_t *ret_len)
{
	const char *s;
	int rc;

	rc = opt_string(obj, field, where, idx, k, &s);
	if (rc < 0 || !s)
		return rc;
	rc = b64_decode(s, ret, ret_len);
	if (rc == -EINVAL)
		set_err(k->err, k->err_len, "kubeconfig %s: %s[%d].%.*s.%s: not valid base64",
		    k->path, where, idx, (int)strlen(where) - 1, where, field);
	else if (rc == 0 && (*ret_len == 0 || !strstr(*ret, "-----BEGIN"))) {
		set_err(k->err, k->err_len, "kubeconfig %s: %s[%d].%.*s.%s: not a PEM block",
		    k->path, where, idx, (int)strlen(where) - 1, where, field);
		free(*ret);
		*ret = NULL;
		rc = -EINVAL;
	}
	return rc;
}

/* The context's entries: its context, cluster and user (NULL when it names none). */
struct kc_entries {
	const json_t *ctx, *cluster, *user;
	int ci, ui; /* indexes in clusters[] and users[], for messages */
};

/* Finds the context (NULL: current-context), its cluster and user; -EINVAL, error set. */
static int
kc_find_entries(const json_t *doc, const char *context, struct kc_ctx *k, struct kc_entries *e)
{
	const char *cluster_name, *user_name;
	int xi;

	if (!json_is_object(doc)) {
		set_err(k->err, k->err_len, "kubeconfig %s: not a YAML mapping", k->path);
		return -EINVAL;
	}
	if (!context) {
		context = json_string_value(json_object_get(doc, "current-context"));
		if (!context || !*context) {
			set_err(
			    k->err, k->err_len, "kubeconfig %s: current-context: not set", k->path);
			return -EINVAL;
		}
	}
	e->ctx = find_named(doc, "contexts", context, "context", k, &xi);
	if (!e->ctx)
		return -EINVAL;
	cluster_name = json_string_value(json_object_get(e->ctx, "cluster"));
	if (!cluster_name) {
		set_err(k->err, k->err_len, "kubeconfig %s: contexts[%d].context.cluster: missing",
		    k->path, xi);
		return -EINVAL;
	}
	e->cluster = find_named(doc, "clusters", cluster_name, "cluster", k, &e->ci);
	if (!e->cluster)
		return -EINVAL;
	user_name = json_string_value(json_object_get(e->ctx, "user"));
	if (user_name && *user_name) {
		e->user = find_named(doc, "users", user_name, "user", k, &e->ui);
		if (!e->user)
			return -EINVAL;
	}
	return 0;
}

/* k->dir: the kubeconfig's directory (NULL for a bare file name or no path). */
static int
kc_set_dir(struct kc_ctx *k, const char *path)
{
	char *slash;

	if (!path)
		return 0;
	k->dir = strdup(path);
	if (!k->dir)
		return -ENOMEM;
	slash = strrchr(k->dir, '/');
	if (slash) {
		*slash = '\0';
	} else {
		free(k->dir);
		k->dir = NULL;
	}
	return 0;
}

/* The cluster's server, insecure-skip-tls-verify and certificate authority into cfg. */
static int
kc_read_cluster(const json_t *cluster, int ci, struct kc_ctx *k, struct kube_config *cfg)
{
	const json_t *v;
	const char *s;
	int rc;

	rc = opt_string(cluster, "server", "clusters", ci, k, &s);
	if (rc < 0)
		return rc;
	if (!s || (strncmp(s, "https://", 8) != 0 && strncmp(s, "http://", 7) != 0)) {
		set_err(k->err, k->err_len, "kubeconfig %s: clusters[%d].cluster.server: %s",
		    k->path, ci, s ? "not an http(s):// URL" : "missing");
		return -EINVAL;
	}
	cfg->server = strdup(s);
	if (!cfg->server)
		return -ENOMEM;
	while (strlen(cfg->server) > 8 && cfg->server[strlen(cfg->server) - 1] == '/')
		cfg->server[strlen(cfg->server) - 1] = '\0';

	v = json_object_get(cluster, "insecure-skip-tls-verify");
	if (v && !json_is_boolean(v) && !json_is_null(v)) {
		set_err(k->err, k->err_len,
		    "kubeconfig %s: clusters[%d].cluster.insecure-skip-tls-verify: not a boolean",
		    k->path, ci);
		return -EINVAL;
	}
	cfg->insecure = json_is_true(v);
	if ((rc = file_field(cluster, "certificate-authority", "clusters", ci, k, &cfg->ca_file)) <
		0 ||
	    (rc = data_field(cluster, "certificate-authority-data", "clusters", ci, k,
		 &cfg->ca_data, &cfg->ca_data_len)) < 0)
		return rc;
	if (cfg->ca_data && !pem_has_certificate(cfg->ca_data, cfg->ca_data_len)) {
		set_err(k->err, k->err_len,
		    "kubeconfig %s: clusters[%d].cluster.certificate-authority-data: no PEM "
		    "CERTIFICATE block",
		    k->path, ci);
		return -EINVAL;
	}
	if (cfg->ca_file && !cfg->ca_data && (rc = check_ca_file(cfg->ca_file)) < 0) {
		set_err(k->err, k->err_len,
		    "kubeconfig %s: clusters[%d].cluster.certificate-authority: %s: %s", k->path,
		    ci, cfg->ca_file, rc == -EINVAL ? "no PEM CERTIFICATE block" : strerror(-rc));
		return rc;
	}
	return 0;
}

/* The user's token or token file; the token read at once from its file. */
static int
kc_read_token(const json_t *user, int ui, struct kc_ctx *k, struct kube_config *cfg)
{
	const char *s;
	int rc;

	rc = opt_string(user, "token", "users", ui, k, &s);
	if (rc < 0)
		return rc;
	if (token_has_line_break(s)) {
		set_err(k->err, k->err_len,
		    "kubeconfig %s: users[%d].user.token: contains a line break (CR or LF)",
		    k->path, ui);
		return -EINVAL;
	}
	if (s) {
		cfg->token = strdup(s);
		if (!cfg->token)
			return -ENOMEM;
	}
	if (cfg->token_file) {
		rc = reload_token(cfg);
		if (rc < 0) {
			set_err(k->err, k->err_len,
			    "kubeconfig %s: users[%d].user.tokenFile: %s: %s", k->path, ui,
			    cfg->token_file,
			    rc == -EBADMSG ? "token contains a line break (CR or LF)"
					   : strerror(-rc));
			return -EINVAL;
		}
	}
	return 0;
}

/* The user's client certificate and key, token or token file into cfg. */
static int
kc_read_user(const json_t *user, int ui, struct kc_ctx *k, struct kube_config *cfg)
{
	int rc;

	if ((rc = file_field(user, "client-certificate", "users", ui, k, &cfg->cert_file)) < 0 ||
	    (rc = file_field(user, "client-key", "users", ui, k, &cfg->key_file)) < 0 ||
	    (rc = data_field(user, "client-certificate-data", "users", ui, k, &cfg->cert_data,
		 &cfg->cert_data_len)) < 0 ||
	    (rc = data_field(user, "client-key-data", "users", ui, k, &cfg->key_data,
		 &cfg->key_data_len)) < 0 ||
	    (rc = file_field(user, "tokenFile", "users", ui, k, &cfg->token_file)) < 0)
		return rc;
	rc = kc_read_token(user, ui, k, cfg);
	if (rc < 0)
		return rc;
	if (!!(cfg->cert_file || cfg->cert_data) != !!(cfg->key_file || cfg->key_data)) {
		set_err(k->err, k->err_len,
		    "kubeconfig %s: users[%d].user: client certificate and key must be "
		    "given together",
		    k->path, ui);
		return -EINVAL;
	}
	if ((json_object_get(user, "exec") || json_object_get(user, "auth-provider")) &&
	    !cfg->token && !cfg->cert_data && !cfg->cert_file) {
		set_err(k->err, k->err_len,
		    "kubeconfig %s: users[%d].user: exec/auth-provider credentials "
		    "are not supported",
		    k->path, ui);
		return -ENOTSUP;
	}
	return 0;
}

int
kube_config_from_json(const json_t *doc, const char *path, const char *context,
    struct kube_config **ret, char *err, size_t err_len)
{
	struct kc_ctx k = {.path = path ? path : "(inline)", .err = err, .err_len = err_len};
	struct kc_entries e = {0};
	struct kube_config *cfg;
	const char *ns;
	int rc;

	rc = kc_find_entries(doc, context, &k, &e);
	if (rc < 0)
		return rc;
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return -ENOMEM;
	if ((rc = kc_set_dir(&k, path)) < 0 ||
	    (rc = kc_read_cluster(e.cluster, e.ci, &k, cfg)) < 0 ||
	    (e.user && (rc = kc_read_user(e.user, e.ui, &k, cfg)) < 0))
		goto fail;
	ns = json_string_value(json_object_get(e.ctx, "namespace"));
	if (ns && *ns) {
		cfg->namespace = strdup(ns);
		if (!cfg->namespace) {
			rc = -ENOMEM;
			goto fail;
		}
	}
	free(k.dir);
	*ret = cfg;
	return 0;
fail:
	free(k.dir);
	kube_config_free(cfg);
	return rc;
}

int
kube_config_from_kubeconfig(
    const char *path, const char *context, struct kube_config **ret, char *err, size_t err_len)
{
	char *text = NULL, *pathbuf = NULL;
	struct yaml_error yerr;
	json_t *doc = NULL;
	size_t len;
	int rc;

	if (!path || !*path) {
		const char *env = getenv("KUBECONFIG");

		if (env && *env) {
			pathbuf = strndup(env, strcspn(env, ":"));
		} else {
			const char *home = getenv("HOME");

			if (!home) {
				set_err(err, err_len, "kubeconfig: no path, KUBECONFIG or HOME");
				return -ENOENT;
			}
			if (asprintf(&pathbuf, "%s/.kube/config", home) < 0)
				pathbuf = NULL;
		}
		if (!pathbuf)
			return -ENOMEM;
		path = pathbuf;
	}
	rc = read_file(path, CONFIG_FILE_MAX, &text, &len);
	if (rc < 0) {
		set_err(err, err_len, "kubeconfig %s: %s", path, strerror(-rc));
		goto out;
	}
	rc = yaml_parse_one(text, len, &doc, &yerr);
	if (rc < 0) {
		set_err(err, err_len, "kubeconfig %s:%u:%u: %s", path, yerr.line, yerr.column,
		    yerr.message);
		goto out;
	}
	rc = kube_config_from_json(doc, path, context, ret, err, err_len);
out:
	json_decref(doc);
	free(text);
	free(pathbuf);
	return rc;
}

int
kube_config_in_cluster(const char *root, struct kube_config **ret, char *err, size_t err_len)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	struct kube_config *cfg;
	char *ns = NULL;
	size_t len;
	int rc;

	if (!root)
		root = SA_ROOT;
	if (!host || !*host || !port || !*port) {
		set_err(err, err_len,
		    "in-cluster config: KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT not set "
		    "(not running in a pod? use --kubeconfig)");
		return -ENOENT;
	}
	cfg = calloc(1, sizeof(*cfg));
	if (!cfg)
		return -ENOMEM;
	if (asprintf(&cfg->server, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host,
		port) < 0) {
		cfg->server = NULL;
		rc = -ENOMEM;
		goto fail;
	}
	if (asprintf(&cfg->token_file, "%s/token", root) < 0 ||
	    asprintf(&cfg->ca_file, "%s/ca.crt", root) < 0) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = reload_token(cfg);
	if (rc < 0) {
		set_err(err, err_len, "in-cluster config: %s: %s", cfg->token_file,
		    rc == -EBADMSG ? "token contains a line break (CR or LF)" : strerror(-rc));
		if (rc == -EBADMSG)
			rc = -EINVAL;
		goto fail;
	}
	rc = check_ca_file(cfg->ca_file);
	if (rc < 0) {
		set_err(err, err_len, "in-cluster config: %s: %s", cfg->ca_file,
		    rc == -EINVAL ? "no PEM CERTIFICATE block" : strerror(-rc));
		goto fail;
	}
	{
		char *nspath;

		if (asprintf(&nspath, "%s/namespace", root) < 0) {
			rc = -ENOMEM;
			goto fail;
		}
		if (read_file(nspath, 4096, &ns, &len) == 0) {
			trim_trailing_space(ns);
			cfg->namespace = ns;
		}
		free(nspath);
	}
	*ret = cfg;
	return 0;
fail:
	kube_config_free(cfg);
	return rc;
}

int
kube_config_load_context(const char *kubeconfig, const char *context, struct kube_config **ret,
    char *err, size_t err_len)
{
	const char *env = getenv("KUBECONFIG");

	if (context != NULL && *context == '\0')
		context = NULL;
	if ((kubeconfig && *kubeconfig) || (env && *env))
		return kube_config_from_kubeconfig(kubeconfig, context, ret, err, err_len);
	return kube_config_in_cluster(NULL, ret, err, err_len);
}

int
kube_config_load(const char *kubeconfig, struct kube_config **ret, char *err, size_t err_len)
{
	return kube_config_load_context(kubeconfig, NULL, ret, err, err_len);
}
