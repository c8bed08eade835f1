/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission webhook's certificates (controller/webcert.c) in-process against the test API
 * server, with a fake wall clock for certificate times: the first start fills the Secret and
 * sets both configurations' caBundle; a second replica adopts the same pair; replicas that
 * start at once (Secret absent, or present and empty as the chart makes it) end with one pair;
 * the serving certificate is renewed after 2/3 of its validity from the same CA; a CA rotation
 * keeps the old CA in the bundle until it expires and signs the serving certificate with the
 * new CA only once the configurations trust it; a missing configuration is reported, then
 * patched once created; a garbage Secret is replaced (at start and while running); a refused
 * create is reported and the chart's Secret filled once it appears. Every serving certificate
 * is verified against the bundle at the fake time with its names (X509_verify_cert).
 * Waits poll with a generous bound; nothing asserts on speed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "controller/webcert.h"
#include "kube/kube.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "tests/helpers/apiserver.h"
#include "tests/helpers/poll.h"
#include "tests/runner.h"

#define WAIT_MS 20000
#define NS "vmdhcp"
#define SECRET "vmdhcp-webhook-tls"
#define SECRETS "/api/v1/namespaces/" NS "/secrets"
#define SECRET_PATH SECRETS "/" SECRET
#define MWC "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
#define VWC "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
#define MUTATING "vmdhcp-mutating"
#define VALIDATING "vmdhcp-validating"
#define VALIDITY 3000 /* CA: 30000; backdated by 300; settling 30 s */
#define T0 INT64_C(1800000000)

static int64_t fake_now;

static int64_t
clock_fn(void *userdata)
{
	return fake_now;
}

struct inst {
	struct kube_config *cfg;
	struct kube_client *client;
	struct metrics *metrics;
	struct webcert *wc;
	int ncert;
	char *cert, *key;
};

struct env {
	struct test_apiserver *api;
	struct event_base *base;
	struct inst a, b;
};

static void
on_cert(void *userdata, const char *cert, const char *key)
{
	struct inst *in = userdata;

	free(in->cert);
	free(in->key);
	in->cert = strdup(cert);
	in->key = strdup(key);
	in->ncert++;
}

/* --- the API -------------------------------------------------------------------------------- */

static json_t *
api(struct env *e, const char *method, const char *path, json_t *body, long *code)
{
	return test_apiserver_json(e->api, method, path, NULL, body, code);
}

static json_t *
get(struct env *e, const char *path)
{
	long code = 0;
	json_t *j = api(e, "GET", path, NULL, &code);

	if (code != 200) {
		json_decref(j);
		return NULL;
	}
	return j;
}

/* Takes body. */
static long
req(struct env *e, const char *method, const char *path, json_t *body)
{
	long code = 0;

	json_decref(api(e, method, path, body, &code));
	json_decref(body);
	return code;
}

static char *
b64enc(const char *s)
{
	size_t n = strlen(s);
	unsigned char *out = malloc(4 * ((n + 2) / 3) + 1);

	EVP_EncodeBlock(out, (const unsigned char *)s, (int)n);
	return (char *)out;
}

static char *
b64dec(const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0;
	unsigned char *out;
	int r;

	if (n == 0 || n % 4 != 0)
		return NULL;
	out = malloc(n / 4 * 3 + 1);
	r = EVP_DecodeBlock(out, (const unsigned char *)s, (int)n);
	if (r < 0) {
		free(out);
		return NULL;
	}
	r -= (s[n - 1] == '=') + (s[n - 2] == '=');
	out[r] = '\0';
	return (char *)out;
}

/* The Secret's data[key], base64 as stored (new string) or NULL. */
static char *
secret_b64(struct env *e, const char *key)
{
	json_t *s = get(e, SECRET_PATH);
	const char *v = json_string_value(json_object_get(json_object_get(s, "data"), key));
	char *r = v != NULL ? strdup(v) : NULL;

	json_decref(s);
	return r;
}

/* The Secret's data[key] decoded (new string) or NULL. */
static char *
secret_pem(struct env *e, const char *key)
{
	char *v = secret_b64(e, key), *d = b64dec(v);

	free(v);
	return d;
}

static json_t *
config(const char *name, int hooks)
{
	json_t *wh = json_array();

	for (int i = 0; i < hooks; i++) {
		char n[64];

		snprintf(n, sizeof(n), "hook-%d.network.harvesterhci.io", i);
		json_array_append_new(wh,
		    json_pack("{s:s, s:{s:{s:s, s:s, s:s}}, s:[s], s:s}", "name", n, "clientConfig",
			"service", "namespace", NS, "name", "vmdhcp-webhook", "path", "/validate",
			"admissionReviewVersions", "v1", "sideEffects", "None"));
	}
	return json_pack("{s:{s:s}, s:o}", "metadata", "name", name, "webhooks", wh);
}

static void
create_configs(struct env *e, bool mutating, bool validating)
{
	if (mutating)
		CU_ASSERT_EQUAL(req(e, "POST", MWC, config(MUTATING, 1)), 201);
	if (validating)
		CU_ASSERT_EQUAL(req(e, "POST", VWC, config(VALIDATING, 2)), 201);
}

/* Every webhook of the configuration at path has caBundle == want (base64). */
static bool
config_has_bundle(struct env *e, const char *path, const char *want)
{
	json_t *c = get(e, path), *h;
	bool ok = c != NULL && want != NULL && json_array_size(json_object_get(c, "webhooks")) > 0;
	size_t i;

	json_array_foreach(json_object_get(c, "webhooks"), i, h)
	{
		const char *v = json_string_value(
		    json_object_get(json_object_get(h, "clientConfig"), "caBundle"));
		if (v == NULL || strcmp(v, want) != 0)
			ok = false;
	}
	json_decref(c);
	return ok;
}

static bool
configs_have_bundle(struct env *e)
{
	char *ca = secret_b64(e, "ca.crt");
	bool ok = config_has_bundle(e, MWC "/" MUTATING, ca) &&
		  config_has_bundle(e, VWC "/" VALIDATING, ca);

	free(ca);
	return ok;
}

/* --- waiting ------------------------------------------------------------------------------- */

typedef bool (*pred_fn)(struct env *e, const void *arg);

/* Run the loop until pred holds (tests/helpers/poll.h), at most WAIT_MS. */
struct pred_call {
	struct env *e;
	pred_fn pred;
	const void *arg;
};

static bool
pred_call(void *p)
{
	const struct pred_call *c = p;

	return c->pred(c->e, c->arg);
}

static bool
wait_for(struct env *e, pred_fn pred, const void *arg)
{
	struct pred_call c = {e, pred, arg};

	return test_poll_until(e->base, pred_call, &c, WAIT_MS);
}

static bool
is_ready(struct env *e, const void *arg)
{
	const struct inst *in = arg;
	char why[512];

	return webcert_ready(in->wc, why, sizeof(why));
}

/* Ready without a note. */
static bool
ready_clean(struct env *e, const void *arg)
{
	const struct inst *in = arg;
	char why[512];

	return webcert_ready(in->wc, why, sizeof(why)) && why[0] == '\0';
}

static bool
reason_has(struct env *e, const void *arg)
{
	char why[512];

	webcert_ready(e->a.wc, why, sizeof(why));
	return strstr(why, arg) != NULL;
}

/* The Secret's data[key] differs from arg (a base64 value, or NULL: is present). */
struct changed {
	const char *key, *old;
};

static bool
secret_changed(struct env *e, const void *arg)
{
	const struct changed *c = arg;
	char *v = secret_b64(e, c->key);
	bool ok = v != NULL && (c->old == NULL || strcmp(v, c->old) != 0);

	free(v);
	return ok;
}

/* A serving pair equal to the Secret's was handed to inst. */
static bool
serves_secret(struct env *e, const void *arg)
{
	const struct inst *in = arg;
	char *crt = secret_pem(e, "tls.crt"), *key = secret_pem(e, "tls.key");
	bool ok = crt != NULL && key != NULL && in->cert != NULL && strcmp(crt, in->cert) == 0 &&
		  strcmp(key, in->key) == 0;

	free(crt);
	free(key);
	return ok;
}

static bool
configs_bundle_pred(struct env *e, const void *arg)
{
	return configs_have_bundle(e);
}

/* --- certificates -------------------------------------------------------------------------- */

static size_t
pem_certs(const char *pem, X509 **out, size_t max)
{
	BIO *b = BIO_new_mem_buf(pem, -1);
	size_t n = 0;
	X509 *x;

	while (n < max && (x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL)
		out[n++] = x;
	BIO_free(b);
	return n;
}

static void
free_certs(X509 **c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		X509_free(c[i]);
}

static size_t
bundle_len(struct env *e)
{
	char *pem = secret_pem(e, "ca.crt");
	X509 *c[8];
	size_t n = pem != NULL ? pem_certs(pem, c, 8) : 0;

	free_certs(c, n);
	free(pem);
	return n;
}

/* The Secret's serving certificate chains to its bundle at the fake time, for every name,
 * its key matches, and it was signed by the bundle's CA number `by` (-1: any). */
static void
check_secret(struct env *e, int by)
{
	char *ca = secret_pem(e, "ca.crt"), *crt = secret_pem(e, "tls.crt");
	char *key = secret_pem(e, "tls.key"), *cakey = secret_pem(e, "ca.key");
	X509 *cas[8] = {NULL}, *leaf[1] = {NULL};
	size_t ncas = ca != NULL ? pem_certs(ca, cas, 8) : 0;
	size_t nleaf = crt != NULL ? pem_certs(crt, leaf, 1) : 0;
	static const char *const names[] = {"vmdhcp-webhook", "vmdhcp-webhook.vmdhcp",
	    "vmdhcp-webhook.vmdhcp.svc", "vmdhcp-webhook.vmdhcp.svc.cluster.local"};

	CU_ASSERT_TRUE_FATAL(ncas >= 1 && nleaf == 1 && key != NULL && cakey != NULL);
	{
		BIO *b = BIO_new_mem_buf(key, -1);
		EVP_PKEY *k = PEM_read_bio_PrivateKey(b, NULL, NULL, NULL);
		BIO *cb = BIO_new_mem_buf(cakey, -1);
		EVP_PKEY *ck = PEM_read_bio_PrivateKey(cb, NULL, NULL, NULL);

		CU_ASSERT_EQUAL(X509_check_private_key(leaf[0], k), 1);
		CU_ASSERT_EQUAL(X509_check_private_key(cas[0], ck), 1); /* ca.key: the first CA */
		CU_ASSERT_EQUAL(EVP_PKEY_get_base_id(k), EVP_PKEY_EC);
		EVP_PKEY_free(k);
		EVP_PKEY_free(ck);
		BIO_free(b);
		BIO_free(cb);
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) + 1; i++) {
		X509_STORE *st = X509_STORE_new();
		X509_STORE_CTX *ctx = X509_STORE_CTX_new();
		X509_VERIFY_PARAM *p;

		for (size_t j = 0; j < ncas; j++)
			X509_STORE_add_cert(st, cas[j]);
		X509_STORE_CTX_init(ctx, st, leaf[0], NULL);
		p = X509_STORE_CTX_get0_param(ctx);
		X509_VERIFY_PARAM_set_time(p, (time_t)fake_now);
		X509_VERIFY_PARAM_set_purpose(p, X509_PURPOSE_SSL_SERVER);
		if (i < sizeof(names) / sizeof(names[0]))
			X509_VERIFY_PARAM_set1_host(p, names[i], 0);
		else
			X509_VERIFY_PARAM_set1_ip_asc(p, "127.0.0.1");
		if (X509_verify_cert(ctx) != 1) {
			fprintf(stderr, "verify (%zu): %s\n", i,
			    X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
			CU_FAIL("the serving certificate does not verify");
		}
		X509_STORE_CTX_free(ctx);
		X509_STORE_free(st);
	}
	CU_ASSERT_EQUAL(X509_check_host(leaf[0], "other.vmdhcp.svc", 0, 0, NULL), 0);
	if (by >= 0) {
		CU_ASSERT_TRUE_FATAL((size_t)by < ncas);
		CU_ASSERT_EQUAL(X509_verify(leaf[0], X509_get0_pubkey(cas[by])), 1);
	}
	free_certs(cas, ncas);
	free_certs(leaf, nleaf);
	free(ca);
	free(crt);
	free(key);
	free(cakey);
}

/* The first (or, i = 1, second) certificate of the Secret's bundle, PEM (new string). */
static char *
bundle_cert(struct env *e, size_t i)
{
	char *pem = secret_pem(e, "ca.crt"), *out = NULL;
	X509 *c[8];
	size_t n = pem != NULL ? pem_certs(pem, c, 8) : 0;

	if (i < n) {
		BIO *b = BIO_new(BIO_s_mem());
		char *d;
		long l;

		PEM_write_bio_X509(b, c[i]);
		l = BIO_get_mem_data(b, &d);
		out = strndup(d, (size_t)l);
		BIO_free(b);
	}
	free_certs(c, n);
	free(pem);
	return out;
}

/* --- set-up --------------------------------------------------------------------------------- */

static const char *const extra_sans[] = {"IP:127.0.0.1", "DNS:webhook.example.org"};
static size_t n_extra = 1; /* the second: a replica of a newer configuration */
static const char *const mutating[] = {MUTATING};
static const char *const validating[] = {VALIDATING};

static bool
inst_new(struct env *e, struct inst *in)
{
	char err[256];
	struct webcert_opts o = {
	    .ns = NS,
	    .secret = SECRET,
	    .service = "vmdhcp-webhook",
	    .extra_sans = extra_sans,
	    .n_extra_sans = n_extra,
	    .mutating = mutating,
	    .n_mutating = 1,
	    .validating = validating,
	    .n_validating = 1,
	    .validity_s = VALIDITY,
	    .now = clock_fn,
	    .on_cert = on_cert,
	    .userdata = in,
	};

	memset(in, 0, sizeof(*in));
	if (kube_config_from_kubeconfig(
		test_apiserver_kubeconfig(e->api), NULL, &in->cfg, err, sizeof(err)) < 0 ||
	    kube_client_new(e->base, in->cfg, &in->client) < 0 || metrics_new(&in->metrics) < 0) {
		CU_FAIL("client set-up");
		return false;
	}
	o.metrics = in->metrics;
	CU_ASSERT_EQUAL_FATAL(webcert_new(e->base, in->client, &o, &in->wc), 0);
	return true;
}

static void
inst_free(struct inst *in)
{
	in->wc = webcert_free(in->wc);
	kube_client_free(in->client);
	kube_config_free(in->cfg);
	metrics_free(in->metrics);
	free(in->cert);
	free(in->key);
	memset(in, 0, sizeof(*in));
}

static bool
env_start(struct env *e)
{
	memset(e, 0, sizeof(*e));
	fake_now = T0;
	n_extra = 1;
	log_init(
	    "test-controller-webcert", getenv("WEBCERT_DEBUG") ? LOG_LEVEL_INFO : LOG_LEVEL_WARN);
	if (test_apiserver_start(&e->api, NULL) < 0) {
		CU_FAIL("test API server did not start");
		return false;
	}
	e->base = event_base_new();
	return e->base != NULL;
}

static void
env_stop(struct env *e)
{
	inst_free(&e->a);
	inst_free(&e->b);
	if (e->base != NULL)
		event_base_free(e->base);
	CU_ASSERT_EQUAL(test_apiserver_terminate(e->api), 0);
	test_apiserver_stop(e->api);
}

/* A started and serving the Secret's pair, both configurations trusting it. */
static bool
start_a(struct env *e)
{
	if (!inst_new(e, &e->a))
		return false;
	CU_ASSERT_EQUAL_FATAL(webcert_start(e->a.wc), 0);
	CU_ASSERT_TRUE_FATAL(wait_for(e, is_ready, &e->a));
	CU_ASSERT_TRUE(serves_secret(e, &e->a));
	CU_ASSERT_TRUE(configs_have_bundle(e));
	return true;
}

/* Moves the fake clock, re-checks and waits until the Secret's key changed. */
static void
advance_and_wait(struct env *e, int64_t to, const char *key)
{
	char *old = secret_b64(e, key);
	struct changed c = {key, old};

	fake_now = to;
	webcert_recheck(e->a.wc);
	CU_ASSERT_TRUE(wait_for(e, secret_changed, &c));
	free(old);
}

/* --- tests ---------------------------------------------------------------------------------- */

static void
test_opts(void)
{
	struct event_base *base = event_base_new();
	struct kube_client *fake = (struct kube_client *)base; /* never used: refused first */
	struct webcert *wc = NULL;
	static const char *const bad_san[] = {"IP:300.1.1.1"};
	static const char *const bad_kind[] = {"URI:x"};
	struct webcert_opts o = {.ns = NS, .secret = SECRET, .service = "svc"};

	o.ns = NULL;
	CU_ASSERT_EQUAL(webcert_new(base, fake, &o, &wc), -EINVAL);
	o.ns = NS;
	o.secret = "Bad_Name";
	CU_ASSERT_EQUAL(webcert_new(base, fake, &o, &wc), -EINVAL);
	o.secret = SECRET;
	o.service = NULL; /* no name at all */
	CU_ASSERT_EQUAL(webcert_new(base, fake, &o, &wc), -EINVAL);
	o.extra_sans = bad_san;
	o.n_extra_sans = 1;
	CU_ASSERT_EQUAL(webcert_new(base, fake, &o, &wc), -EINVAL);
	o.extra_sans = bad_kind;
	CU_ASSERT_EQUAL(webcert_new(base, fake, &o, &wc), -EINVAL);
	o.extra_sans = extra_sans;
	o.n_mutating = 1; /* without names */
	CU_ASSERT_EQUAL(webcert_new(base, fake, &o, &wc), -EINVAL);
	o.n_mutating = 0;
	CU_ASSERT_EQUAL(webcert_new(base, fake, &o, &wc), 0);
	CU_ASSERT_FALSE(webcert_ready(wc, NULL, 0));
	webcert_free(wc);
	event_base_free(base);
}

static void
test_fill_and_adopt(void)
{
	struct env e;
	json_t *s;
	char *rv;
	char *ca, *crt;

	if (!env_start(&e))
		goto out;
	create_configs(&e, true, true);
	if (!start_a(&e))
		goto out;
	CU_ASSERT_EQUAL(e.a.ncert, 1);
	check_secret(&e, 0);
	CU_ASSERT_EQUAL(bundle_len(&e), 1);
	s = get(&e, SECRET_PATH);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(s, "type")), "kubernetes.io/tls");
	rv = strdup(
	    json_string_value(json_object_get(json_object_get(s, "metadata"), "resourceVersion")));
	json_decref(s);
	/* metrics: the serving certificate's notAfter, one write */
	{
		char *text = NULL;
		size_t len;
		char want[128];

		CU_ASSERT_EQUAL(metrics_render(e.a.metrics, &text, &len), 0);
		snprintf(want, sizeof(want),
		    "vmdhcp_admission_certificate_expiry_timestamp_seconds %lld",
		    (long long)(T0 + VALIDITY));
		CU_ASSERT_PTR_NOT_NULL(strstr(text, want));
		CU_ASSERT_PTR_NOT_NULL(
		    strstr(text, "vmdhcp_admission_certificate_rotations_total 1"));
		free(text);
	}

	/* a second replica takes the same pair and writes nothing */
	CU_ASSERT_FATAL(inst_new(&e, &e.b));
	CU_ASSERT_EQUAL_FATAL(webcert_start(e.b.wc), 0);
	CU_ASSERT_TRUE(wait_for(&e, is_ready, &e.b));
	CU_ASSERT_EQUAL(e.b.ncert, 1);
	CU_ASSERT_TRUE(e.a.cert && e.b.cert && strcmp(e.a.cert, e.b.cert) == 0);
	CU_ASSERT_TRUE(e.a.key && e.b.key && strcmp(e.a.key, e.b.key) == 0);
	s = get(&e, SECRET_PATH);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_object_get(s, "metadata"), "resourceVersion")),
	    rv);
	json_decref(s);
	free(rv);

	/* a caBundle reset (a helm upgrade) is set again at the next check */
	ca = secret_b64(&e, "ca.crt");
	CU_ASSERT_EQUAL(req(&e, "PUT", MWC "/" MUTATING, config(MUTATING, 1)), 200);
	CU_ASSERT_FALSE(configs_have_bundle(&e));
	webcert_recheck(e.b.wc);
	CU_ASSERT_TRUE(wait_for(&e, configs_bundle_pred, NULL));
	crt = secret_b64(&e, "ca.crt");
	CU_ASSERT_STRING_EQUAL(crt, ca);
	free(ca);
	free(crt);
out:
	env_stop(&e);
}

static bool
both_serve_secret(struct env *e, const void *arg)
{
	return serves_secret(e, &e->a) && serves_secret(e, &e->b) && is_ready(e, &e->a) &&
	       is_ready(e, &e->b);
}

static void
race(bool chart_secret)
{
	struct env e;

	if (!env_start(&e))
		goto out;
	create_configs(&e, true, true);
	if (chart_secret) /* as a chart makes it: empty */
		CU_ASSERT_EQUAL(req(&e, "POST", SECRETS,
				    json_pack("{s:{s:s}, s:s}", "metadata", "name", SECRET, "type",
					"kubernetes.io/tls")),
		    201);
	CU_ASSERT_FATAL(inst_new(&e, &e.a));
	CU_ASSERT_FATAL(inst_new(&e, &e.b));
	CU_ASSERT_EQUAL_FATAL(webcert_start(e.a.wc), 0);
	CU_ASSERT_EQUAL_FATAL(webcert_start(e.b.wc), 0);
	CU_ASSERT_TRUE(wait_for(&e, both_serve_secret, NULL));
	/* one pair: each was handed only the winner's */
	CU_ASSERT_EQUAL(e.a.ncert, 1);
	CU_ASSERT_EQUAL(e.b.ncert, 1);
	CU_ASSERT_TRUE(e.a.cert && e.b.cert && strcmp(e.a.cert, e.b.cert) == 0);
	CU_ASSERT_TRUE(configs_have_bundle(&e));
	check_secret(&e, 0);
out:
	env_stop(&e);
}

static void
test_race_absent(void)
{
	race(false);
}

static void
test_race_empty(void)
{
	race(true);
}

static void
test_serving_rotation(void)
{
	struct env e;
	char *ca, *cab, *crt;

	if (!env_start(&e))
		goto out;
	create_configs(&e, true, true);
	if (!start_a(&e))
		goto out;
	ca = secret_b64(&e, "ca.crt");
	crt = secret_b64(&e, "tls.crt");
	cab = secret_b64(&e, "ca.key");
	/* notBefore T0-300, notAfter T0+3000: renewed at T0+1900 */
	advance_and_wait(&e, T0 + 1901, "tls.crt");
	CU_ASSERT_TRUE(wait_for(&e, serves_secret, &e.a));
	CU_ASSERT_EQUAL(e.a.ncert, 2);
	{
		char *ca2 = secret_b64(&e, "ca.crt"), *cak2 = secret_b64(&e, "ca.key");

		CU_ASSERT_STRING_EQUAL(ca2, ca); /* same CA */
		CU_ASSERT_STRING_EQUAL(cak2, cab);
		free(ca2);
		free(cak2);
	}
	CU_ASSERT_TRUE(configs_have_bundle(&e)); /* unchanged */
	check_secret(&e, 0);
	/* still valid after the old one would have expired */
	fake_now = T0 + 3500;
	check_secret(&e, 0);
	free(ca);
	free(crt);
	free(cab);
out:
	env_stop(&e);
}

static void
test_ca_rotation(void)
{
	struct env e;
	char *old_ca, *old_leaf, *new_ca;

	if (!env_start(&e))
		goto out;
	create_configs(&e, true, true);
	if (!start_a(&e))
		goto out;
	old_ca = bundle_cert(&e, 0);
	/* the serving certificate renewed every 2000 s, always from the first CA */
	for (int64_t t = T0 + 2000; t <= T0 + 18000; t += 2000) {
		advance_and_wait(&e, t, "tls.crt");
		CU_ASSERT_EQUAL(bundle_len(&e), 1);
	}
	CU_ASSERT_TRUE(wait_for(&e, serves_secret, &e.a));
	old_leaf = secret_b64(&e, "tls.crt");

	/* CA: notBefore T0-300, notAfter T0+30000, due at T0+19900. Step 1: the new CA joins
	 * the bundle, the serving certificate stays. The configurations' first update fails. */
	CU_ASSERT_EQUAL(test_apiserver_fault(e.api, "fail?code=500&count=2&method=PUT&path="
						    "/apis/admissionregistration.k8s.io/"),
	    0);
	advance_and_wait(&e, T0 + 19950, "ca.crt");
	CU_ASSERT_EQUAL(bundle_len(&e), 2);
	new_ca = bundle_cert(&e, 0);
	{
		char *second = bundle_cert(&e, 1), *leaf = secret_b64(&e, "tls.crt");

		CU_ASSERT_STRING_EQUAL(second, old_ca);
		CU_ASSERT_STRING_NOT_EQUAL(new_ca, old_ca);
		CU_ASSERT_STRING_EQUAL(leaf, old_leaf);
		free(second);
		free(leaf);
	}
	CU_ASSERT_TRUE(wait_for(&e, reason_has, "not set: ServerError"));
	CU_ASSERT_FALSE(configs_have_bundle(&e));
	/* still ready: the caBundle in place trusts the serving certificate */
	CU_ASSERT_TRUE(is_ready(&e, &e.a));
	/* Later, past the settling time: the configurations get the two-CA bundle at this
	 * check, and the serving certificate waits 30 s of the clock from now */
	fake_now = T0 + 20050;
	webcert_recheck(e.a.wc);
	CU_ASSERT_TRUE(wait_for(&e, ready_clean, &e.a)); /* both checks succeeded */
	CU_ASSERT_TRUE(configs_have_bundle(&e));
	{
		char *leaf = secret_b64(&e, "tls.crt");

		CU_ASSERT_STRING_EQUAL(leaf, old_leaf);
		free(leaf);
	}
	check_secret(&e, 1);
	/* Step 2: signed by the new CA, while both stay in the bundle */
	advance_and_wait(&e, T0 + 20081, "tls.crt");
	CU_ASSERT_TRUE(configs_have_bundle(&e)); /* trusted before it was issued */
	CU_ASSERT_EQUAL(bundle_len(&e), 2);
	check_secret(&e, 0);
	CU_ASSERT_TRUE(wait_for(&e, serves_secret, &e.a));
	/* just before the old CA's expiry it is still in the bundle */
	advance_and_wait(&e, T0 + 29990, "tls.crt"); /* the serving certificate had expired */
	CU_ASSERT_EQUAL(bundle_len(&e), 2);
	check_secret(&e, 0);
	/* after: dropped, the configurations follow */
	advance_and_wait(&e, T0 + 30001, "ca.crt");
	CU_ASSERT_EQUAL(bundle_len(&e), 1);
	{
		char *first = bundle_cert(&e, 0);

		CU_ASSERT_STRING_EQUAL(first, new_ca);
		free(first);
	}
	CU_ASSERT_TRUE(wait_for(&e, configs_bundle_pred, NULL));
	CU_ASSERT_TRUE(wait_for(&e, is_ready, &e.a));
	check_secret(&e, 0);
	free(old_ca);
	free(new_ca);
	free(old_leaf);
out:
	env_stop(&e);
}

static bool
mutating_has_bundle(struct env *e, const void *arg)
{
	return config_has_bundle(e, MWC "/" MUTATING, arg);
}

static void
test_missing_config(void)
{
	struct env e;

	if (!env_start(&e))
		goto out;
	create_configs(&e, true, false);
	CU_ASSERT_FATAL(inst_new(&e, &e.a));
	CU_ASSERT_EQUAL_FATAL(webcert_start(e.a.wc), 0);
	CU_ASSERT_TRUE(
	    wait_for(&e, reason_has, "ValidatingWebhookConfiguration " VALIDATING " not found"));
	CU_ASSERT_FALSE(is_ready(&e, &e.a));
	CU_ASSERT_TRUE(serves_secret(&e, &e.a));
	{
		char *ca = secret_b64(&e, "ca.crt");

		CU_ASSERT_TRUE(wait_for(&e, mutating_has_bundle, ca));
		free(ca);
	}
	create_configs(&e, false, true);
	webcert_recheck(e.a.wc);
	CU_ASSERT_TRUE(wait_for(&e, is_ready, &e.a));
	CU_ASSERT_TRUE(configs_have_bundle(&e));
out:
	env_stop(&e);
}

static void
test_garbage(void)
{
	struct env e;
	char *g = b64enc("not a certificate");
	char *crt;
	struct changed c = {"tls.crt", NULL};

	if (!env_start(&e))
		goto out;
	create_configs(&e, true, true);
	CU_ASSERT_EQUAL(req(&e, "POST", SECRETS,
			    json_pack("{s:{s:s}, s:{s:s, s:s, s:s}}", "metadata", "name", SECRET,
				"data", "ca.crt", g, "tls.crt", "%%%%", "other", g)),
	    201);
	if (!start_a(&e))
		goto out;
	check_secret(&e, 0);
	/* a key of someone else's stays */
	{
		char *o = secret_b64(&e, "other");

		CU_ASSERT_STRING_EQUAL(o, g);
		free(o);
	}
	/* garbage written while running: replaced, and the new pair handed over */
	crt = secret_b64(&e, "tls.crt");
	c.old = crt;
	{
		json_t *s = get(&e, SECRET_PATH);

		json_object_set_new(json_object_get(s, "data"), "ca.key", json_string(g));
		json_object_set_new(json_object_get(s, "data"), "tls.key", json_string(g));
		CU_ASSERT_EQUAL(req(&e, "PUT", SECRET_PATH, s), 200);
	}
	CU_ASSERT_TRUE(wait_for(&e, secret_changed, &c));
	CU_ASSERT_TRUE(wait_for(&e, serves_secret, &e.a));
	CU_ASSERT_TRUE(wait_for(&e, is_ready, &e.a));
	CU_ASSERT_EQUAL(e.a.ncert, 2);
	check_secret(&e, 0);
	free(crt);
out:
	free(g);
	env_stop(&e);
}

static void
test_create_forbidden(void)
{
	struct env e;

	if (!env_start(&e))
		goto out;
	create_configs(&e, true, true);
	CU_ASSERT_EQUAL(
	    test_apiserver_fault(e.api, "fail?code=403&count=1&method=POST&path=" SECRETS), 0);
	CU_ASSERT_FATAL(inst_new(&e, &e.a));
	CU_ASSERT_EQUAL_FATAL(webcert_start(e.a.wc), 0);
	CU_ASSERT_TRUE(wait_for(&e, reason_has, "the chart creates it"));
	CU_ASSERT_FALSE(is_ready(&e, &e.a));
	CU_ASSERT_PTR_NULL(e.a.cert);
	/* the chart's Secret appears: filled */
	CU_ASSERT_EQUAL(
	    req(&e, "POST", SECRETS,
		json_pack("{s:{s:s}, s:s}", "metadata", "name", SECRET, "type", "Opaque")),
	    201);
	CU_ASSERT_TRUE(wait_for(&e, is_ready, &e.a));
	CU_ASSERT_TRUE(serves_secret(&e, &e.a));
	check_secret(&e, 0);
out:
	env_stop(&e);
}

/* A failed caBundle check is tried again on its own (after 1 s), not only at the 60 s one. */
static void
test_config_retry(void)
{
	struct env e;

	if (!env_start(&e))
		goto out;
	create_configs(&e, true, true);
	if (!start_a(&e))
		goto out;
	CU_ASSERT_EQUAL(req(&e, "PUT", MWC "/" MUTATING, config(MUTATING, 1)), 200);
	CU_ASSERT_EQUAL(
	    test_apiserver_fault(e.api, "fail?code=500&count=1&method=PUT&path=" MWC), 0);
	webcert_recheck(e.a.wc);
	CU_ASSERT_TRUE(wait_for(&e, reason_has, "not set: ServerError"));
	CU_ASSERT_TRUE(wait_for(&e, configs_bundle_pred, NULL));
	CU_ASSERT_TRUE(wait_for(&e, ready_clean, &e.a));
out:
	env_stop(&e);
}

static bool
metric_has(const struct inst *in, const char *want)
{
	char *text = NULL;
	size_t len;
	bool ok = metrics_render(in->metrics, &text, &len) == 0 && strstr(text, want) != NULL;

	free(text);
	return ok;
}

/* The replica wrote the Secret once. */
static bool
wrote_once(struct env *e, const void *arg)
{
	return metric_has(arg, "vmdhcp_admission_certificate_rotations_total 1\n");
}

/* A leaving replica (SIGTERM) writes nothing more: the serving pair emptied in the Secret is
 * filled by the other one, and the leaving one still takes in the new pair. */
static void
test_stopped_writes_nothing(void)
{
	struct env e;
	json_t *s;
	struct changed c = {"tls.crt", NULL};
	char *crt = NULL;

	if (!env_start(&e))
		goto out;
	create_configs(&e, true, true);
	if (!start_a(&e))
		goto out;
	c.old = crt = secret_b64(&e, "tls.crt");
	webcert_stop(e.a.wc);
	s = get(&e, SECRET_PATH);
	json_object_set_new(json_object_get(s, "data"), "tls.crt", json_string(""));
	json_object_set_new(json_object_get(s, "data"), "tls.key", json_string(""));
	CU_ASSERT_EQUAL(req(&e, "PUT", SECRET_PATH, s), 200);
	webcert_recheck(e.a.wc);
	CU_ASSERT_FATAL(inst_new(&e, &e.b));
	CU_ASSERT_EQUAL_FATAL(webcert_start(e.b.wc), 0);
	CU_ASSERT_TRUE(wait_for(&e, secret_changed, &c));
	CU_ASSERT_TRUE(wait_for(&e, both_serve_secret, NULL));
	/* B's write ends (its count) on its own connection, maybe after the watch brought it */
	CU_ASSERT_TRUE(wait_for(&e, wrote_once, &e.b));
	CU_ASSERT_TRUE(wrote_once(&e, &e.a));
	CU_ASSERT_EQUAL(e.a.ncert, 2);
	check_secret(&e, 0);
out:
	free(crt);
	env_stop(&e);
}

static bool
has_name(const char *pem, const char *name)
{
	X509 *x[1] = {NULL};
	bool ok = pem != NULL && pem_certs(pem, x, 1) == 1 &&
		  X509_check_host(x[0], name, 0, 0, NULL) == 1;

	X509_free(x[0]);
	return ok;
}

static void
test_names_changed(void)
{
	struct env e;
	char *crt, *rv;
	struct changed c = {"tls.crt", NULL};
	json_t *s;

	if (!env_start(&e))
		goto out;
	create_configs(&e, true, true);
	if (!start_a(&e))
		goto out;
	CU_ASSERT_FALSE(has_name(e.a.cert, "webhook.example.org"));
	/* a replica that wants one more name renews the serving certificate once (same CA) */
	crt = secret_b64(&e, "tls.crt");
	c.old = crt;
	n_extra = 2;
	CU_ASSERT_FATAL(inst_new(&e, &e.b));
	CU_ASSERT_EQUAL_FATAL(webcert_start(e.b.wc), 0);
	CU_ASSERT_TRUE(wait_for(&e, secret_changed, &c));
	CU_ASSERT_TRUE(wait_for(&e, both_serve_secret, NULL));
	CU_ASSERT_TRUE(has_name(e.a.cert, "webhook.example.org"));
	check_secret(&e, 0);
	/* the first replica is content with more names than it wants: nothing more is written
	 * (a rewrite by it would follow the Secret's change at once, and the re-checks) */
	s = get(&e, SECRET_PATH);
	rv = strdup(
	    json_string_value(json_object_get(json_object_get(s, "metadata"), "resourceVersion")));
	json_decref(s);
	webcert_recheck(e.a.wc);
	webcert_recheck(e.b.wc);
	CU_ASSERT_TRUE(wait_for(&e, both_serve_secret, NULL));
	s = get(&e, SECRET_PATH);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_object_get(s, "metadata"), "resourceVersion")),
	    rv);
	json_decref(s);
	CU_ASSERT_EQUAL(e.a.ncert, 2);
	CU_ASSERT_EQUAL(e.b.ncert, 2); /* the pair it found, then its own */
	free(rv);
	free(crt);
out:
	env_stop(&e);
}

static const struct test_case webcert_tests[] = {
    {"options are checked", test_opts},
    {"first start fills the Secret; a second replica adopts it", test_fill_and_adopt},
    {"two replicas race on an absent Secret", test_race_absent},
    {"two replicas race on the chart's empty Secret", test_race_empty},
    {"serving certificate renewed after 2/3 of its validity", test_serving_rotation},
    {"CA rotation in two steps, old CA kept until it expires", test_ca_rotation},
    {"a missing webhook configuration is reported, then patched", test_missing_config},
    {"a garbage Secret is replaced", test_garbage},
    {"a replica wanting another name renews once", test_names_changed},
    {"a refused create waits for the chart's Secret", test_create_forbidden},
    {"a stopped replica writes nothing more", test_stopped_writes_nothing},
    {"a failed caBundle check is tried again", test_config_retry},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "webcert", .tests = webcert_tests},
    {.name = NULL},
};
