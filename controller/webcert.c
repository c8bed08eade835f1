/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission webhook's certificates (the design is in controller/webcert.h).
 *
 * State: the Secret, read by an informer limited to its name (fieldSelector
 * metadata.name=NAME, so RBAC may grant get/list/watch on that resourceName only), is the
 * truth shared by the replicas. Each pass (reconcile) takes the Secret as last seen (or as
 * this replica last wrote it, until the informer has caught up), parses it, hands a changed
 * serving pair to on_cert, has the webhook configurations' caBundle checked when ca.crt
 * changed, and decides at most one write:
 *
 *   absent                      create it with a new CA and serving certificate
 *   ca.crt/ca.key unusable      fill: a new CA and serving certificate (update)
 *   serving pair broken, expired or not signed by a CA of the bundle
 *                               a serving certificate from the current CA at once
 *   CA past 2/3 of its validity add a new CA in front of the bundle (it signs from now on);
 *                               the serving certificate stays
 *   serving certificate past 2/3 of its validity, or lacking a wanted SAN
 *                               signed by the current CA: renew at once; signed by an older
 *                               CA of the bundle (a CA rotation half done): renew only once
 *                               every webhook configuration trusts the bundle (patched, or
 *                               absent) and a short settling time has passed
 *   an older CA expired         drop it from the bundle
 *
 * Writes are conditional (create, or update with the resourceVersion read): a replica that
 * loses (409) takes the winner's content from the informer. A 403 on create is reported
 * (the chart creates the Secret) and retried.
 *
 * The caBundle of each named configuration is compared and written (GET, PUT with its
 * resourceVersion, again on conflict: kube_update_retry) when ca.crt changes, every 60 s
 * (a `helm upgrade` that resets it is repaired) and on webcert_recheck; a check that failed
 * (not a missing configuration) again after 1 s, doubling up to 60 s. A configuration that
 * does not exist is never created; it is looked for again at those times.
 *
 * The settling time of a CA rotation is a tenth of the serving validity, at most 30 s of the
 * wall clock, counted from this replica's first check that found every caBundle set: room for
 * the API servers to load the new caBundle before a certificate they need it for is served.
 *
 * Ready: a serving pair is known, and the caBundle last seen in each configuration holds the
 * CA that signed it (a configuration not found is not ready; a check that fails while the
 * caBundle in place still trusts the serving certificate is a note, not a failure: every
 * replica turning unready at once would take the Service's endpoints away).
 *
 * Metrics (when a registry is given): vmdhcp_admission_certificate_expiry_timestamp_seconds
 * (notAfter of the serving certificate in use), vmdhcp_admission_certificate_rotations_total
 * (this replica's writes of the Secret). Log: one info line per write (fill, renewal, CA
 * rotation step, CA dropped) and per caBundle set, with names and notAfter.
 */
#include "controller/webcert.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "kube/kube.h"
#include "lib/log.h"
#include "lib/metrics.h"

#define MAX_RECHECK_S 3600    /* re-evaluate at least hourly */
#define CONFIG_RECHECK_S 60   /* the caBundles are compared at least this often */
#define SYNC_POLL_MS 50	      /* until the Secret's informer has synced */
#define RETRY_MIN_MS 1000     /* a failed write: again after 1 s, doubling ... */
#define RETRY_MAX_MS 60000    /* ... up to 60 s (and after a refused create) */
#define CONFLICT_WAIT_MS 5000 /* a lost race: the winner's content comes by the watch */
#define SETTLE_MAX_S 30	      /* caBundle trusted this long before the new CA serves */
#define MAX_CAS 8	      /* certificates kept from a bundle */
#define BACKDATE_MAX_S 300    /* notBefore this far in the past (clock skew) */
#define PEM_MAX (256 * 1024)  /* a Secret's value we parse */

static const struct kube_resource res_secrets = {"", "v1", "secrets", "Secret", true};
static const struct kube_resource res_mutating = {"admissionregistration.k8s.io", "v1",
    "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", false};
static const struct kube_resource res_validating = {"admissionregistration.k8s.io", "v1",
    "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", false};

enum cfg_state {
	CFG_UNKNOWN,
	CFG_OK,	     /* every webhooks[].clientConfig.caBundle equals ok_b64 */
	CFG_MISSING, /* 404 */
	CFG_FAILED,
};

struct wcfg {
	struct webcert *wc;
	const struct kube_resource *res;
	char *name;
	struct kube_call *call;
	char *want;   /* the caBundle the call in flight writes */
	char *ok_b64; /* the caBundle last seen in place (kept when a later check fails) */
	enum cfg_state state;
	unsigned patched; /* webhooks changed by the last mutate */
	char err[256];
	unsigned failures;   /* failed checks in a row */
	struct event *retry; /* after a failed check: again after 1 s, doubling up to 60 s */
};

struct san {
	bool ip;
	char *dns;
	unsigned char addr[16];
	int addr_len;
};

struct webcert {
	struct event_base *base;
	struct kube_client *client;
	/* options, copied */
	char *ns, *secret, *service;
	struct san *sans;
	size_t nsans;
	char *san_conf; /* "DNS:a,DNS:b,IP:1.2.3.4" */
	uint64_t validity_s;
	int64_t (*now)(void *userdata);
	void (*on_cert)(void *userdata, const char *cert_pem, const char *key_pem);
	void *userdata;
	struct metric *m_expiry, *m_rotations;

	struct kube_informer *inf;
	char key[512]; /* "ns/name" in the store */
	struct event *kick, *due, *retry, *cfg_timer;
	bool started;

	/* writes */
	struct kube_call *write_call;
	bool write_create;
	char write_what[512];
	char *based_rv;	 /* the resourceVersion the last write was based on ("" = absent) */
	bool waiting;	 /* until the informer's copy moves past based_rv */
	json_t *written; /* what the last successful write returned (while waiting) */
	bool hold;	 /* no write until the retry timer (failures, refused create) */
	bool stopped;	 /* webcert_stop: the replica is leaving, it writes nothing more */
	bool create_denied;
	unsigned failures;
	char status[512]; /* why not ready, about the Secret */

	/* what is in use */
	char *ca_b64;		 /* base64(ca.crt) of a usable bundle: the caBundle wanted */
	int64_t bundle_ok_since; /* wall clock when every configuration trusted ca_b64; 0 */
	char *served_cert, *served_key;
	int64_t served_not_after;

	struct wcfg *cfgs;
	size_t ncfgs;
};

/* --- small helpers ------------------------------------------------------------------------ */

static char *
xstrdup(const char *s)
{
	return s != NULL ? strdup(s) : NULL;
}

static int64_t
wc_now(const struct webcert *wc)
{
	return wc->now != NULL ? wc->now(wc->userdata) : (int64_t)time(NULL);
}

static void
fmt_time(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm) == NULL || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "%" PRId64, t);
}

static char *
b64_encode(const char *data, size_t len)
{
	size_t n = 4 * ((len + 2) / 3) + 1;
	unsigned char *out = malloc(n);

	if (out == NULL)
		return NULL;
	EVP_EncodeBlock(out, (const unsigned char *)data, (int)len);
	return (char *)out;
}

/* Canonical base64 (as the API server writes a Secret's data) into a new NUL-terminated
 * string; NULL when absent, not base64 or too large. */
static char *
b64_decode(const char *s)
{
	size_t n = s != NULL ? strlen(s) : 0, pad = 0;
	unsigned char *out;
	int r;

	if (n == 0 || n % 4 != 0 || n > PEM_MAX)
		return NULL;
	out = malloc(n / 4 * 3 + 1);
	if (out == NULL)
		return NULL;
	r = EVP_DecodeBlock(out, (const unsigned char *)s, (int)n);
	if (r < 0) {
		free(out);
		return NULL;
	}
	if (s[n - 1] == '=')
		pad++;
	if (s[n - 2] == '=')
		pad++;
	out[(size_t)r - pad] = '\0';
	if (strlen((char *)out) != (size_t)r - pad) { /* a NUL inside: not PEM */
		free(out);
		return NULL;
	}
	return (char *)out;
}

static char *
bio_take(BIO *b)
{
	char *data, *s;
	long n = BIO_get_mem_data(b, &data);

	s = n >= 0 ? malloc((size_t)n + 1) : NULL;
	if (s != NULL) {
		memcpy(s, data, (size_t)n);
		s[n] = '\0';
	}
	BIO_free(b);
	return s;
}

static char *
certs_pem(X509 *const *certs, size_t n)
{
	BIO *b = BIO_new(BIO_s_mem());

	if (b == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (PEM_write_bio_X509(b, certs[i]) != 1) {
			BIO_free(b);
			return NULL;
		}
	return bio_take(b);
}

static char *
key_pem(EVP_PKEY *key)
{
	BIO *b = BIO_new(BIO_s_mem());

	if (b == NULL)
		return NULL;
	if (PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL) != 1) {
		BIO_free(b);
		return NULL;
	}
	return bio_take(b);
}

static int64_t
asn1_epoch(const ASN1_TIME *t)
{
	struct tm tm;

	if (t == NULL || ASN1_TIME_to_tm(t, &tm) != 1)
		return 0;
	return (int64_t)timegm(&tm);
}

static int64_t
not_before(X509 *x)
{
	return asn1_epoch(X509_get0_notBefore(x));
}

static int64_t
not_after(X509 *x)
{
	return asn1_epoch(X509_get0_notAfter(x));
}

/* Two thirds of the validity passed. */
static int64_t
renew_at(X509 *x)
{
	int64_t nb = not_before(x), na = not_after(x);

	return nb + (na - nb) / 3 * 2;
}

static bool
issued_by(X509 *ca, X509 *cert)
{
	bool ok = X509_check_issued(ca, cert) == X509_V_OK &&
		  X509_verify(cert, X509_get0_pubkey(ca)) == 1;

	ERR_clear_error();
	return ok;
}

/* --- making certificates ------------------------------------------------------------------ */

static int
add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (ext == NULL)
		return -EINVAL;
	ok = X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return ok == 1 ? 0 : -ENOMEM;
}

/*
 * A certificate for key valid [nb, na]: a CA (self-signed; issuer NULL) or a serving
 * certificate signed by issuer/issuer_key with the SANs of san_conf.
 */
static X509 *
make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key, const char *san_conf,
    int64_t nb, int64_t na)
{
	X509 *cert = X509_new();
	unsigned char serial[16];
	BIGNUM *bn = NULL;
	X509_NAME *name;
	X509 *iss = issuer != NULL ? issuer : cert;
	bool ok;

	if (cert == NULL || RAND_bytes(serial, sizeof(serial)) != 1)
		goto fail;
	serial[0] = (unsigned char)((serial[0] & 0x7f) | 0x01); /* positive, 16 bytes */
	bn = BN_bin2bn(serial, sizeof(serial), NULL);
	name = X509_get_subject_name(cert);
	ok = bn != NULL && X509_set_version(cert, 2) == 1 &&
	     BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != NULL &&
	     ASN1_TIME_set(X509_getm_notBefore(cert), (time_t)nb) != NULL &&
	     ASN1_TIME_set(X509_getm_notAfter(cert), (time_t)na) != NULL &&
	     X509_set_pubkey(cert, key) == 1 &&
	     X509_NAME_add_entry_by_txt(
		 name, "O", MBSTRING_ASC, (const unsigned char *)"vm-dhcp", -1, -1, 0) == 1 &&
	     X509_NAME_add_entry_by_txt(
		 name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0) == 1 &&
	     X509_set_issuer_name(cert, X509_get_subject_name(iss)) == 1;
	BN_free(bn);
	if (!ok)
		goto fail;
	if (issuer == NULL) {
		if (add_ext(cert, cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
		    add_ext(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
		    add_ext(cert, cert, NID_subject_key_identifier, "hash") < 0)
			goto fail;
	} else {
		if (add_ext(cert, issuer, NID_basic_constraints, "critical,CA:FALSE") < 0 ||
		    add_ext(cert, issuer, NID_key_usage, "critical,digitalSignature") < 0 ||
		    add_ext(cert, issuer, NID_ext_key_usage, "serverAuth") < 0 ||
		    add_ext(cert, issuer, NID_subject_alt_name, san_conf) < 0 ||
		    add_ext(cert, issuer, NID_subject_key_identifier, "hash") < 0 ||
		    add_ext(cert, issuer, NID_authority_key_identifier, "keyid:always") < 0)
			goto fail;
	}
	if (X509_sign(cert, issuer_key != NULL ? issuer_key : key, EVP_sha256()) == 0)
		goto fail;
	ERR_clear_error();
	return cert;
fail:
	ERR_clear_error();
	X509_free(cert);
	return NULL;
}

static int64_t
backdate(const struct webcert *wc)
{
	int64_t b = (int64_t)(wc->validity_s / 10);

	return b < BACKDATE_MAX_S ? b : BACKDATE_MAX_S;
}

/* A new CA valid for WEBCERT_CA_VALIDITY_FACTOR times the serving validity. */
static int
new_ca(const struct webcert *wc, int64_t now, X509 **ret_cert, EVP_PKEY **ret_key)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	char cn[64];
	X509 *cert;

	if (key == NULL) {
		ERR_clear_error();
		return -ENOMEM;
	}
	snprintf(cn, sizeof(cn), "vm-dhcp-webhook-ca@%" PRId64, now);
	cert = make_cert(key, cn, NULL, NULL, NULL, now - backdate(wc),
	    now + (int64_t)(wc->validity_s * WEBCERT_CA_VALIDITY_FACTOR));
	if (cert == NULL) {
		EVP_PKEY_free(key);
		return -EINVAL;
	}
	*ret_cert = cert;
	*ret_key = key;
	return 0;
}

/* A serving certificate signed by ca (not valid past the CA), as PEM text. */
static int
new_leaf(const struct webcert *wc, int64_t now, X509 *ca, EVP_PKEY *ca_key, char **ret_cert,
    char **ret_key, int64_t *ret_not_after)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	int64_t na = now + (int64_t)wc->validity_s;
	const char *cn = wc->sans[0].ip ? "vm-dhcp-webhook" : wc->sans[0].dns;
	X509 *cert;
	char *c, *k;

	if (key == NULL) {
		ERR_clear_error();
		return -ENOMEM;
	}
	if (na > not_after(ca))
		na = not_after(ca);
	cert = make_cert(key, cn, ca, ca_key, wc->san_conf, now - backdate(wc), na);
	if (cert == NULL) {
		EVP_PKEY_free(key);
		return -EINVAL;
	}
	c = certs_pem(&cert, 1);
	k = key_pem(key);
	X509_free(cert);
	EVP_PKEY_free(key);
	if (c == NULL || k == NULL) {
		free(c);
		free(k);
		return -ENOMEM;
	}
	*ret_cert = c;
	*ret_key = k;
	*ret_not_after = na;
	return 0;
}

/* --- the Secret's content ------------------------------------------------------------------- */

struct material {
	char *ca_pem, *ca_key_pem, *tls_crt, *tls_key; /* decoded values */
	X509 *cas[MAX_CAS];
	size_t ncas;
	EVP_PKEY *ca_key;
	X509 *leaf;
	EVP_PKEY *leaf_key;
	bool ca_ok;   /* cas[0] is a CA, ca.key its key, not expired */
	bool leaf_ok; /* tls.crt's first certificate and tls.key match */
	char why[160];
};

static void
material_free(struct material *m)
{
	free(m->ca_pem);
	free(m->ca_key_pem);
	free(m->tls_crt);
	free(m->tls_key);
	for (size_t i = 0; i < m->ncas; i++)
		X509_free(m->cas[i]);
	EVP_PKEY_free(m->ca_key);
	X509_free(m->leaf);
	EVP_PKEY_free(m->leaf_key);
	memset(m, 0, sizeof(*m));
}

static EVP_PKEY *
parse_key(const char *pem)
{
	BIO *b = pem != NULL ? BIO_new_mem_buf(pem, -1) : NULL;
	EVP_PKEY *k = b != NULL ? PEM_read_bio_PrivateKey(b, NULL, NULL, NULL) : NULL;

	BIO_free(b);
	return k;
}

static size_t
parse_certs(const char *pem, X509 **out, size_t max)
{
	BIO *b = pem != NULL ? BIO_new_mem_buf(pem, -1) : NULL;
	size_t n = 0;
	X509 *x;

	while (b != NULL && n < max && (x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL)
		out[n++] = x;
	BIO_free(b);
	return n;
}

static void
material_parse(struct material *m, const json_t *secret, int64_t now)
{
	json_t *data = json_object_get(secret, "data");

	memset(m, 0, sizeof(*m));
	if (secret == NULL) {
		snprintf(m->why, sizeof(m->why), "the Secret does not exist");
		return;
	}
	m->ca_pem = b64_decode(json_string_value(json_object_get(data, "ca.crt")));
	m->ca_key_pem = b64_decode(json_string_value(json_object_get(data, "ca.key")));
	m->tls_crt = b64_decode(json_string_value(json_object_get(data, "tls.crt")));
	m->tls_key = b64_decode(json_string_value(json_object_get(data, "tls.key")));
	m->ncas = parse_certs(m->ca_pem, m->cas, MAX_CAS);
	m->ca_key = parse_key(m->ca_key_pem);
	if (parse_certs(m->tls_crt, &m->leaf, 1) == 0)
		m->leaf = NULL;
	m->leaf_key = parse_key(m->tls_key);
	if (m->ncas == 0)
		snprintf(m->why, sizeof(m->why), "ca.crt holds no certificate");
	else if (m->ca_key == NULL)
		snprintf(m->why, sizeof(m->why), "ca.key holds no private key");
	else if (X509_check_ca(m->cas[0]) < 1)
		snprintf(m->why, sizeof(m->why), "the first certificate of ca.crt is not a CA");
	else if (X509_check_private_key(m->cas[0], m->ca_key) != 1)
		snprintf(m->why, sizeof(m->why), "ca.key is not the key of ca.crt's first CA");
	else if (not_after(m->cas[0]) <= now)
		snprintf(m->why, sizeof(m->why), "the CA has expired");
	else
		m->ca_ok = true;
	m->leaf_ok = m->leaf != NULL && m->leaf_key != NULL &&
		     X509_check_private_key(m->leaf, m->leaf_key) == 1;
	if (m->ca_ok && !m->leaf_ok)
		snprintf(m->why, sizeof(m->why), "tls.crt and tls.key are not a matching pair");
	ERR_clear_error();
}

static bool
has_san(const GENERAL_NAMES *gens, const struct san *s)
{
	for (int i = 0; i < sk_GENERAL_NAME_num(gens); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(gens, i);

		if (s->ip && g->type == GEN_IPADD &&
		    ASN1_STRING_length(g->d.iPAddress) == s->addr_len &&
		    memcmp(ASN1_STRING_get0_data(g->d.iPAddress), s->addr, (size_t)s->addr_len) ==
			0)
			return true;
		if (!s->ip && g->type == GEN_DNS &&
		    (size_t)ASN1_STRING_length(g->d.dNSName) == strlen(s->dns) &&
		    strncasecmp((const char *)ASN1_STRING_get0_data(g->d.dNSName), s->dns,
			strlen(s->dns)) == 0)
			return true;
	}
	return false;
}

/* Every wanted SAN is in the certificate (more are fine: a replica of another version may
 * want more, and the two must not undo each other's work). */
static bool
has_sans(const struct webcert *wc, X509 *x)
{
	GENERAL_NAMES *gens = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	bool ok = gens != NULL;

	for (size_t i = 0; ok && i < wc->nsans; i++)
		ok = has_san(gens, &wc->sans[i]);
	GENERAL_NAMES_free(gens);
	ERR_clear_error();
	return ok;
}

/* --- timers ----------------------------------------------------------------------------------- */

static void
kick(struct webcert *wc)
{
	if (wc->started && !event_pending(wc->kick, EV_TIMEOUT, NULL))
		event_active(wc->kick, EV_TIMEOUT, 0);
}

static void
timer_in_ms(struct event *ev, uint64_t ms)
{
	struct timeval tv = {
	    .tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000};

	evtimer_add(ev, &tv);
}

static void
retry_later(struct webcert *wc, uint64_t ms)
{
	wc->hold = true;
	timer_in_ms(wc->retry, ms);
}

static uint64_t
backoff_ms(struct webcert *wc)
{
	uint64_t ms = RETRY_MIN_MS;

	for (unsigned i = 1; i < wc->failures && ms < RETRY_MAX_MS; i++)
		ms *= 2;
	return ms < RETRY_MAX_MS ? ms : RETRY_MAX_MS;
}

/* --- the webhook configurations' caBundle ----------------------------------------------------- */

static void update_bundle_ok(struct webcert *wc);

static int
cfg_mutate(void *userdata, json_t *obj)
{
	struct wcfg *cf = userdata;
	json_t *hooks = json_object_get(obj, "webhooks"), *h;
	size_t i;

	cf->patched = 0;
	json_array_foreach(hooks, i, h)
	{
		json_t *cc = json_object_get(h, "clientConfig");
		const char *cur;

		if (!json_is_object(cc)) {
			cc = json_object();
			if (cc == NULL || json_object_set_new(h, "clientConfig", cc) < 0)
				return -ENOMEM;
		}
		cur = json_string_value(json_object_get(cc, "caBundle"));
		if (cur != NULL && strcmp(cur, cf->want) == 0)
			continue;
		if (json_object_set_new(cc, "caBundle", json_string(cf->want)) < 0)
			return -ENOMEM;
		cf->patched++;
	}
	return cf->patched > 0 ? 0 : 1;
}

static void
cfg_done(void *userdata, const struct kube_result *res)
{
	struct wcfg *cf = userdata;
	struct webcert *wc = cf->wc;
	enum cfg_state old = cf->state;

	cf->call = NULL;
	if (res->error == 0) {
		if (cf->patched > 0)
			log_info(
			    "webhook certificate: caBundle of %s %s set to the CA bundle of Secret "
			    "%s/%s (%u webhook%s)",
			    cf->res->kind, cf->name, wc->ns, wc->secret, cf->patched,
			    cf->patched == 1 ? "" : "s");
		cf->state = CFG_OK;
		free(cf->ok_b64);
		cf->ok_b64 = cf->want;
		cf->want = NULL;
		cf->err[0] = '\0';
	} else if (res->error == -ENOENT) {
		if (old != CFG_MISSING)
			log_warn(
			    "webhook certificate: %s %s not found; its caBundle is set once it "
			    "exists (checked every %d s)",
			    cf->res->kind, cf->name, CONFIG_RECHECK_S);
		cf->state = CFG_MISSING;
		free(cf->ok_b64);
		cf->ok_b64 = NULL;
		snprintf(cf->err, sizeof(cf->err), "not found");
	} else {
		char err[256];

		snprintf(err, sizeof(err), "%s: %s", kube_errno_name(res->error),
		    res->message != NULL ? res->message : "");
		if (old != CFG_FAILED || strcmp(err, cf->err) != 0)
			log_warn("webhook certificate: cannot set the caBundle of %s %s: %s",
			    cf->res->kind, cf->name, err);
		cf->state = CFG_FAILED;
		snprintf(cf->err, sizeof(cf->err), "%s", err);
	}
	if (cf->state == CFG_FAILED) {
		uint64_t ms = RETRY_MIN_MS;

		for (unsigned i = 0; i < cf->failures && ms < RETRY_MAX_MS; i++)
			ms *= 2;
		cf->failures++;
		timer_in_ms(cf->retry, ms < RETRY_MAX_MS ? ms : RETRY_MAX_MS);
	} else {
		cf->failures = 0;
		event_del(cf->retry);
	}
	free(cf->want);
	cf->want = NULL;
	update_bundle_ok(wc);
}

static void
cfg_check(struct wcfg *cf)
{
	struct webcert *wc = cf->wc;
	int r;

	if (wc->ca_b64 == NULL)
		return;
	if (cf->call != NULL) {
		if (strcmp(cf->want, wc->ca_b64) == 0)
			return; /* already on it */
		kube_call_cancel(cf->call);
		cf->call = NULL;
	}
	free(cf->want);
	cf->want = strdup(wc->ca_b64);
	if (cf->want == NULL)
		return;
	r = kube_update_retry(
	    wc->client, cf->res, NULL, cf->name, false, 5, cfg_mutate, cfg_done, cf, &cf->call);
	if (r < 0) {
		cf->state = CFG_FAILED;
		snprintf(cf->err, sizeof(cf->err), "cannot start: %s", strerror(-r));
	}
}

static void
cfg_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	cfg_check(arg);
}

static void
run_configs(struct webcert *wc)
{
	for (size_t i = 0; i < wc->ncfgs; i++)
		cfg_check(&wc->cfgs[i]);
}

static bool
cfg_trusts(const struct webcert *wc, const struct wcfg *cf)
{
	return cf->state == CFG_MISSING ||
	       (cf->state == CFG_OK && cf->ok_b64 != NULL && wc->ca_b64 != NULL &&
		   strcmp(cf->ok_b64, wc->ca_b64) == 0);
}

/* Every configuration trusts the current bundle (or does not exist): note since when, and
 * look again at a CA rotation that waits for it. */
static void
update_bundle_ok(struct webcert *wc)
{
	if (wc->bundle_ok_since != 0 || wc->ca_b64 == NULL)
		return;
	for (size_t i = 0; i < wc->ncfgs; i++)
		if (!cfg_trusts(wc, &wc->cfgs[i]))
			return;
	wc->bundle_ok_since = wc_now(wc);
	kick(wc);
}

/* --- reconcile -------------------------------------------------------------------------------- */

static void reconcile(struct webcert *wc);

/* The Secret as last seen, or as this replica last wrote it until the informer caught up.
 * *wait: a write lost a race and the winner's content has not arrived yet. */
static const json_t *
effective(struct webcert *wc, bool *wait)
{
	const json_t *obj = kube_store_get(kube_informer_store(wc->inf), wc->key);
	const char *rv = obj != NULL ? kube_obj_resource_version(obj) : "";

	*wait = false;
	if (wc->waiting) {
		if (strcmp(rv != NULL ? rv : "", wc->based_rv != NULL ? wc->based_rv : "") == 0) {
			if (wc->written != NULL)
				return wc->written;
			*wait = true;
			return NULL;
		}
		wc->waiting = false;
		json_decref(wc->written);
		wc->written = NULL;
	}
	return obj;
}

/* Takes in what the Secret holds: the caBundle wanted, the serving pair. */
static void
adopt(struct webcert *wc, const struct material *m, int64_t now)
{
	if (m->ca_ok) {
		char *b64 = b64_encode(m->ca_pem, strlen(m->ca_pem));

		if (b64 != NULL && (wc->ca_b64 == NULL || strcmp(b64, wc->ca_b64) != 0)) {
			free(wc->ca_b64);
			wc->ca_b64 = b64;
			wc->bundle_ok_since = 0;
			run_configs(wc);
			update_bundle_ok(wc); /* no configurations: trusted at once */
		} else {
			free(b64);
		}
	}
	if (m->leaf_ok && (wc->served_cert == NULL || strcmp(wc->served_cert, m->tls_crt) != 0 ||
			      strcmp(wc->served_key, m->tls_key) != 0)) {
		char *c = strdup(m->tls_crt), *k = strdup(m->tls_key);
		char na[32], ca_na[32] = "none";

		if (c == NULL || k == NULL) {
			free(c);
			free(k);
			return;
		}
		free(wc->served_cert);
		free(wc->served_key);
		wc->served_cert = c;
		wc->served_key = k;
		wc->served_not_after = not_after(m->leaf);
		fmt_time(wc->served_not_after, na, sizeof(na));
		for (size_t i = 0; i < m->ncas; i++)
			if (issued_by(m->cas[i], m->leaf))
				fmt_time(not_after(m->cas[i]), ca_na, sizeof(ca_na));
		log_info(
		    "webhook certificate: serving the certificate of Secret %s/%s (notAfter %s, "
		    "CA notAfter %s)",
		    wc->ns, wc->secret, na, ca_na);
		if (wc->m_expiry != NULL)
			metric_set(wc->m_expiry, 0, (double)wc->served_not_after);
		if (wc->on_cert != NULL)
			wc->on_cert(wc->userdata, wc->served_cert, wc->served_key);
	}
	(void)now;
}

static int
settle_s(const struct webcert *wc)
{
	int64_t s = (int64_t)(wc->validity_s / 10);

	return (int)(s < 1 ? 1 : s > SETTLE_MAX_S ? SETTLE_MAX_S : s);
}

struct plan {
	/* the new content (NULL: unchanged) */
	X509 *cas[MAX_CAS + 1];
	size_t ncas;
	X509 *new_ca;
	EVP_PKEY *new_ca_key;
	char *leaf_pem, *leaf_key_pem;
	int64_t leaf_not_after;
	char what[512];
	int64_t now;
	int64_t next; /* wall clock of the next look */
};

static void
plan_clear(struct plan *p)
{
	X509_free(p->new_ca);
	EVP_PKEY_free(p->new_ca_key);
	free(p->leaf_pem);
	free(p->leaf_key_pem);
}

/* A time to look again; one already past is acted on now or waits for an event (the
 * configurations' check), not for a timer. */
static void
plan_next(struct plan *p, int64_t t)
{
	if (t > p->now && t < p->next)
		p->next = t;
}

/* The Secret's data for the plan: ca.crt from p->cas, the rest new or kept from m. */
static json_t *
plan_data(const struct plan *p, const struct material *m)
{
	char *ca = certs_pem(p->cas, p->ncas);
	char *cak = p->new_ca_key != NULL ? key_pem(p->new_ca_key) : xstrdup(m->ca_key_pem);
	const char *crt = p->leaf_pem != NULL ? p->leaf_pem : m->tls_crt;
	const char *key = p->leaf_key_pem != NULL ? p->leaf_key_pem : m->tls_key;
	char *v[4] = {NULL, NULL, NULL, NULL};
	json_t *data = NULL;

	if (ca != NULL && cak != NULL && crt != NULL && key != NULL) {
		v[0] = b64_encode(ca, strlen(ca));
		v[1] = b64_encode(cak, strlen(cak));
		v[2] = b64_encode(crt, strlen(crt));
		v[3] = b64_encode(key, strlen(key));
	}
	if (v[0] != NULL && v[1] != NULL && v[2] != NULL && v[3] != NULL)
		data = json_pack("{s:s, s:s, s:s, s:s}", "ca.crt", v[0], "ca.key", v[1], "tls.crt",
		    v[2], "tls.key", v[3]);
	for (int i = 0; i < 4; i++)
		free(v[i]);
	free(ca);
	free(cak);
	return data;
}

/*
 * What to write, if anything: 1 and p filled (p->what says what for the log), 0 for nothing
 * (p->next: when to look again), negative errno.
 */
static int
plan(struct webcert *wc, const struct material *m, int64_t now, struct plan *p)
{
	char t1[32], t2[32];
	X509 *signer;
	EVP_PKEY *signer_key;
	int issuer = -1, r;
	bool leaf_broken, leaf_due, ca_due;
	size_t dropped = 0;
	char gone[32] = "";

	memset(p, 0, sizeof(*p));
	p->now = now;
	p->next = now + MAX_RECHECK_S;
	if (!m->ca_ok) {
		/* fill: a new CA and serving certificate */
		if ((r = new_ca(wc, now, &p->new_ca, &p->new_ca_key)) < 0 ||
		    (r = new_leaf(wc, now, p->new_ca, p->new_ca_key, &p->leaf_pem, &p->leaf_key_pem,
			 &p->leaf_not_after)) < 0)
			return r;
		p->cas[p->ncas++] = p->new_ca;
		fmt_time(not_after(p->new_ca), t1, sizeof(t1));
		fmt_time(p->leaf_not_after, t2, sizeof(t2));
		snprintf(p->what, sizeof(p->what),
		    "filled Secret %s/%s (%s): new CA (notAfter %s) and serving certificate for %s "
		    "(notAfter %s)",
		    wc->ns, wc->secret, m->why, t1, wc->san_conf, t2);
		return 1;
	}
	/* the bundle without expired older CAs */
	for (size_t i = 0; i < m->ncas; i++) {
		if (i > 0 && not_after(m->cas[i]) <= now) {
			dropped++;
			fmt_time(not_after(m->cas[i]), gone, sizeof(gone));
			continue;
		}
		if (i > 0)
			plan_next(p, not_after(m->cas[i]));
		if (m->leaf_ok && issuer < 0 && issued_by(m->cas[i], m->leaf))
			issuer = (int)p->ncas;
		p->cas[p->ncas++] = m->cas[i];
	}
	signer = m->cas[0];
	signer_key = m->ca_key;
	leaf_broken = !m->leaf_ok || issuer < 0 || not_after(m->leaf) <= now;
	ca_due = now >= renew_at(m->cas[0]);
	leaf_due = leaf_broken || now >= renew_at(m->leaf) || issuer != 0 || !has_sans(wc, m->leaf);
	plan_next(p, renew_at(m->cas[0]));
	if (!leaf_broken)
		plan_next(p, renew_at(m->leaf));
	fmt_time(not_after(signer), t1, sizeof(t1));
	if (leaf_broken) {
		snprintf(p->what, sizeof(p->what),
		    "serving certificate of Secret %s/%s replaced (%s)", wc->ns, wc->secret,
		    !m->leaf_ok	 ? m->why
		    : issuer < 0 ? "not signed by a CA of the bundle"
				 : "expired");
	} else if (ca_due && issuer == 0) {
		/* CA rotation, step 1: the new CA joins the bundle and signs from now on; the
		 * serving certificate waits until the configurations trust the new CA */
		if (p->ncas > MAX_CAS - 1)
			p->ncas = MAX_CAS - 1; /* the oldest go */
		memmove(&p->cas[1], &p->cas[0], p->ncas * sizeof(p->cas[0]));
		if ((r = new_ca(wc, now, &p->new_ca, &p->new_ca_key)) < 0)
			return r;
		p->cas[0] = p->new_ca;
		p->ncas++;
		fmt_time(not_after(p->new_ca), t2, sizeof(t2));
		snprintf(p->what, sizeof(p->what),
		    "CA rotation: new CA (notAfter %s) added to the bundle of Secret %s/%s before "
		    "the CA (notAfter %s); the serving certificate follows once the webhook "
		    "configurations trust it",
		    t2, wc->ns, wc->secret, t1);
		return 1;
	} else if (leaf_due && issuer == 0) {
		snprintf(p->what, sizeof(p->what),
		    "serving certificate of Secret %s/%s renewed (%s)", wc->ns, wc->secret,
		    !has_sans(wc, m->leaf) ? "names changed" : "2/3 of its validity passed");
	} else if (leaf_due) {
		/* CA rotation, step 2: only once every configuration trusts the new CA */
		int64_t at = wc->bundle_ok_since + settle_s(wc);

		if (wc->bundle_ok_since == 0 || now < at) {
			if (wc->bundle_ok_since != 0)
				plan_next(p, at);
			if (dropped == 0)
				return 0;
			snprintf(p->what, sizeof(p->what),
			    "expired CA (notAfter %s) dropped from the bundle of Secret %s/%s",
			    gone, wc->ns, wc->secret);
			return 1;
		}
		snprintf(p->what, sizeof(p->what),
		    "CA rotation: serving certificate of Secret %s/%s now signed by the new CA "
		    "(notAfter %s), which the webhook configurations trust",
		    wc->ns, wc->secret, t1);
	} else if (dropped > 0) {
		snprintf(p->what, sizeof(p->what),
		    "expired CA (notAfter %s) dropped from the bundle of Secret %s/%s", gone,
		    wc->ns, wc->secret);
		return 1;
	} else {
		return 0;
	}
	if ((r = new_leaf(wc, now, signer, signer_key, &p->leaf_pem, &p->leaf_key_pem,
		 &p->leaf_not_after)) < 0)
		return r;
	fmt_time(p->leaf_not_after, t2, sizeof(t2));
	snprintf(p->what + strlen(p->what), sizeof(p->what) - strlen(p->what),
	    ": notAfter %s, CA notAfter %s%s%s%s", t2, t1,
	    dropped > 0 ? "; expired CA (notAfter " : "", gone, dropped > 0 ? ") dropped" : "");
	return 1;
}

static void
write_done(void *userdata, const struct kube_result *res)
{
	struct webcert *wc = userdata;

	wc->write_call = NULL;
	if (res->error == 0) {
		log_info("webhook certificate: %s", wc->write_what);
		if (wc->m_rotations != NULL)
			metric_inc(wc->m_rotations, 0);
		wc->failures = 0;
		wc->create_denied = false;
		wc->waiting = true;
		json_decref(wc->written);
		wc->written = json_is_object(res->object) ? json_incref(res->object) : NULL;
		if (wc->written == NULL) /* no answer to go by: the watch brings it */
			timer_in_ms(wc->retry, CONFLICT_WAIT_MS);
	} else if (res->error == -EEXIST || res->error == -ESTALE) {
		log_info("webhook certificate: Secret %s/%s was written by another replica first; "
			 "using its content",
		    wc->ns, wc->secret);
		wc->waiting = true;
		json_decref(wc->written);
		wc->written = NULL;
		timer_in_ms(wc->retry, CONFLICT_WAIT_MS);
	} else if (res->error == -EACCES && wc->write_create) {
		if (!wc->create_denied)
			log_warn(
			    "webhook certificate: Secret %s/%s does not exist and this service "
			    "account may not create it (%s); the chart creates it: waiting for it",
			    wc->ns, wc->secret, res->message != NULL ? res->message : "");
		wc->create_denied = true;
		snprintf(wc->status, sizeof(wc->status),
		    "Secret %s/%s does not exist and may not be created here (the chart creates "
		    "it)",
		    wc->ns, wc->secret);
		retry_later(wc, RETRY_MAX_MS);
	} else {
		wc->failures++;
		log_warn("webhook certificate: cannot write Secret %s/%s: %s: %s (again in %" PRIu64
			 " ms)",
		    wc->ns, wc->secret, kube_errno_name(res->error),
		    res->message != NULL ? res->message : "", backoff_ms(wc));
		snprintf(wc->status, sizeof(wc->status), "cannot write Secret %s/%s: %s", wc->ns,
		    wc->secret, kube_errno_name(res->error));
		retry_later(wc, backoff_ms(wc));
	}
	kick(wc);
}

static int
start_write(struct webcert *wc, const json_t *secret, json_t *data)
{
	json_t *obj;
	const char *rv = secret != NULL ? kube_obj_resource_version(secret) : "";
	int r;

	if (secret == NULL) {
		obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:O}", "apiVersion", "v1", "kind",
		    "Secret", "metadata", "name", wc->secret, "namespace", wc->ns, "type",
		    "kubernetes.io/tls", "data", data);
	} else {
		json_t *d;
		const char *k;
		json_t *v;

		obj = json_deep_copy(secret);
		d = json_object_get(obj, "data");
		if (obj != NULL && !json_is_object(d)) {
			d = json_object();
			json_object_set_new(obj, "data", d);
		}
		json_object_foreach(data, k, v) json_object_set(d, k, v);
	}
	if (obj == NULL)
		return -ENOMEM;
	free(wc->based_rv);
	wc->based_rv = strdup(rv != NULL ? rv : "");
	wc->write_create = secret == NULL;
	r = secret == NULL
		? kube_create(
		      wc->client, &res_secrets, wc->ns, obj, write_done, wc, &wc->write_call)
		: kube_update(wc->client, &res_secrets, obj, write_done, wc, &wc->write_call);
	json_decref(obj);
	return r;
}

static void
reconcile(struct webcert *wc)
{
	const json_t *secret;
	struct material m;
	struct plan p;
	int64_t now;
	bool wait;
	int r;

	if (!kube_informer_has_synced(wc->inf)) {
		timer_in_ms(wc->due, SYNC_POLL_MS);
		return;
	}
	if (wc->write_call != NULL)
		return; /* its end looks again */
	secret = effective(wc, &wait);
	if (wait)
		return; /* the winner's content is on its way (or the retry timer looks again) */
	now = wc_now(wc);
	material_parse(&m, secret, now);
	adopt(wc, &m, now);
	if (wc->hold || wc->stopped) {
		material_free(&m);
		return;
	}
	r = plan(wc, &m, now, &p);
	if (r > 0) {
		json_t *data = plan_data(&p, &m);

		snprintf(wc->write_what, sizeof(wc->write_what), "%s", p.what);
		r = data != NULL ? start_write(wc, secret, data) : -ENOMEM;
		json_decref(data);
		if (r == 0 && wc->served_cert == NULL)
			snprintf(wc->status, sizeof(wc->status), "writing Secret %s/%s", wc->ns,
			    wc->secret);
	}
	if (r < 0) {
		wc->failures++;
		log_warn("webhook certificate: cannot make or write certificates for Secret %s/%s: "
			 "%s",
		    wc->ns, wc->secret, strerror(-r));
		retry_later(wc, backoff_ms(wc));
	} else if (r == 0) {
		int64_t d = p.next - now;

		if (d < 1)
			d = 1;
		if (d > MAX_RECHECK_S)
			d = MAX_RECHECK_S;
		timer_in_ms(wc->due, (uint64_t)d * 1000);
	}
	plan_clear(&p);
	material_free(&m);
}

/* --- events ---------------------------------------------------------------------------------- */

static void
kick_cb(evutil_socket_t fd, short what, void *arg)
{
	reconcile(arg);
}

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct webcert *wc = arg;

	wc->hold = false;
	if (wc->waiting && wc->written == NULL)
		wc->waiting = false; /* the winner's content never came: read again */
	reconcile(wc);
}

static void
cfg_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct webcert *wc = arg;

	run_configs(wc);
	kick(wc);
}

static void
secret_changed(struct webcert *wc)
{
	wc->hold = false;
	event_del(wc->retry);
	kick(wc);
}

static void
on_add(void *userdata, const char *key, const void *item)
{
	secret_changed(userdata);
}

static void
on_update(void *userdata, const char *key, const void *old, const void *item)
{
	secret_changed(userdata);
}

/* --- public ---------------------------------------------------------------------------------- */

static bool
dns_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 253)
		return false;
	for (const char *c = s; *c != '\0'; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
			(*c >= '0' && *c <= '9') || *c == '-' || *c == '.' || *c == '*'))
			return false;
	return true;
}

static int
add_san(struct webcert *wc, const char *entry)
{
	struct san *s = &wc->sans[wc->nsans];
	size_t cl = wc->san_conf != NULL ? strlen(wc->san_conf) : 0;
	char *conf;

	memset(s, 0, sizeof(*s));
	if (strncmp(entry, "IP:", 3) == 0) {
		s->ip = true;
		if (inet_pton(AF_INET, entry + 3, s->addr) == 1)
			s->addr_len = 4;
		else if (inet_pton(AF_INET6, entry + 3, s->addr) == 1)
			s->addr_len = 16;
		else
			return -EINVAL;
	} else if (strncmp(entry, "DNS:", 4) == 0 && dns_name_ok(entry + 4)) {
		s->dns = strdup(entry + 4);
		if (s->dns == NULL)
			return -ENOMEM;
	} else {
		return -EINVAL;
	}
	conf = realloc(wc->san_conf, cl + strlen(entry) + 2);
	if (conf == NULL) {
		free(s->dns);
		return -ENOMEM;
	}
	snprintf(conf + cl, strlen(entry) + 2, "%s%s", cl > 0 ? "," : "", entry);
	wc->san_conf = conf;
	wc->nsans++;
	return 0;
}

static int
add_cfgs(struct webcert *wc, const struct kube_resource *res, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct wcfg *cf = &wc->cfgs[wc->ncfgs];

		if (names[i] == NULL || !dns_name_ok(names[i]))
			return -EINVAL;
		memset(cf, 0, sizeof(*cf));
		cf->wc = wc;
		cf->res = res;
		cf->name = strdup(names[i]);
		cf->retry = evtimer_new(wc->base, cfg_retry_cb, cf);
		wc->ncfgs++;
		if (cf->name == NULL || cf->retry == NULL)
			return -ENOMEM;
	}
	return 0;
}

int
webcert_new(struct event_base *base, struct kube_client *client, const struct webcert_opts *opts,
    struct webcert **ret)
{
	struct webcert *wc;
	char entry[300];
	int r = -ENOMEM;

	if (base == NULL || client == NULL || opts == NULL || ret == NULL || opts->ns == NULL ||
	    !dns_name_ok(opts->ns) || opts->secret == NULL || !dns_name_ok(opts->secret) ||
	    (opts->service != NULL && !dns_name_ok(opts->service)) ||
	    (opts->n_extra_sans > 0 && opts->extra_sans == NULL) ||
	    (opts->n_mutating > 0 && opts->mutating == NULL) ||
	    (opts->n_validating > 0 && opts->validating == NULL) ||
	    (opts->service == NULL && opts->n_extra_sans == 0) || opts->n_extra_sans > 64 ||
	    opts->validity_s > 100ull * 365 * 24 * 3600 ||
	    (opts->validity_s != 0 && opts->validity_s < 3))
		return -EINVAL;
	wc = calloc(1, sizeof(*wc));
	if (wc == NULL)
		return -ENOMEM;
	wc->base = base;
	wc->client = client;
	wc->validity_s = opts->validity_s != 0 ? opts->validity_s : WEBCERT_VALIDITY_DEFAULT_S;
	wc->now = opts->now;
	wc->on_cert = opts->on_cert;
	wc->userdata = opts->userdata;
	wc->ns = strdup(opts->ns);
	wc->secret = strdup(opts->secret);
	wc->service = xstrdup(opts->service);
	wc->sans = calloc(4 + opts->n_extra_sans, sizeof(*wc->sans));
	wc->cfgs = calloc(opts->n_mutating + opts->n_validating + 1, sizeof(*wc->cfgs));
	if (wc->ns == NULL || wc->secret == NULL ||
	    (opts->service != NULL && wc->service == NULL) || wc->sans == NULL || wc->cfgs == NULL)
		goto fail;
	snprintf(wc->key, sizeof(wc->key), "%s/%s", wc->ns, wc->secret);
	if (wc->service != NULL) {
		static const char *const suffixes[] = {"", "", ".svc", ".svc.cluster.local"};

		for (size_t i = 0; i < 4; i++) {
			snprintf(entry, sizeof(entry), "DNS:%s%s%s%s", wc->service,
			    i > 0 ? "." : "", i > 0 ? wc->ns : "", suffixes[i]);
			if ((r = add_san(wc, entry)) < 0)
				goto fail;
		}
	}
	for (size_t i = 0; i < opts->n_extra_sans; i++)
		if (opts->extra_sans[i] == NULL || (r = add_san(wc, opts->extra_sans[i])) < 0) {
			r = r < 0 ? r : -EINVAL;
			goto fail;
		}
	if ((r = add_cfgs(wc, &res_mutating, opts->mutating, opts->n_mutating)) < 0 ||
	    (r = add_cfgs(wc, &res_validating, opts->validating, opts->n_validating)) < 0)
		goto fail;
	r = -ENOMEM;
	wc->kick = event_new(base, -1, 0, kick_cb, wc);
	wc->due = evtimer_new(base, kick_cb, wc);
	wc->retry = evtimer_new(base, retry_cb, wc);
	wc->cfg_timer = event_new(base, -1, EV_PERSIST, cfg_timer_cb, wc);
	if (wc->kick == NULL || wc->due == NULL || wc->retry == NULL || wc->cfg_timer == NULL)
		goto fail;
	snprintf(wc->status, sizeof(wc->status), "reading Secret %s/%s", wc->ns, wc->secret);
	if (opts->metrics != NULL) {
		wc->m_expiry = metrics_add_simple(opts->metrics, METRIC_GAUGE,
		    "vmdhcp_admission_certificate_expiry_timestamp_seconds",
		    "notAfter of the admission webhook's serving certificate in use (Unix time)");
		wc->m_rotations = metrics_add_simple(opts->metrics, METRIC_COUNTER,
		    "vmdhcp_admission_certificate_rotations_total",
		    "Writes of the webhook certificate Secret by this replica: first fill, serving "
		    "certificate renewals, CA rotation steps");
		if (wc->m_expiry == NULL || wc->m_rotations == NULL)
			goto fail;
	}
	*ret = wc;
	return 0;
fail:
	webcert_free(wc);
	return r;
}

int
webcert_start(struct webcert *wc)
{
	char fs[300];
	struct kube_informer_opts io = {
	    .res = &res_secrets,
	    .ns = wc->ns,
	    .field_selector = fs,
	};
	struct kube_informer_handlers h = {
	    .on_add = on_add, .on_update = on_update, .on_delete = on_add, .userdata = wc};
	struct timeval tv = {.tv_sec = CONFIG_RECHECK_S};
	int r;

	if (wc->started)
		return -EALREADY;
	snprintf(fs, sizeof(fs), "metadata.name=%s", wc->secret);
	if ((r = kube_informer_new(wc->client, &io, &wc->inf)) < 0 ||
	    (r = kube_informer_add_handlers(wc->inf, &h)) < 0 ||
	    (r = kube_informer_start(wc->inf)) < 0) {
		wc->inf = kube_informer_free(wc->inf);
		return r;
	}
	event_add(wc->cfg_timer, &tv);
	wc->started = true;
	kick(wc);
	return 0;
}

struct webcert *
webcert_free(struct webcert *wc)
{
	if (wc == NULL)
		return NULL;
	kube_call_cancel(wc->write_call);
	for (size_t i = 0; i < wc->ncfgs; i++) {
		kube_call_cancel(wc->cfgs[i].call);
		if (wc->cfgs[i].retry != NULL)
			event_free(wc->cfgs[i].retry);
		free(wc->cfgs[i].name);
		free(wc->cfgs[i].want);
		free(wc->cfgs[i].ok_b64);
	}
	free(wc->cfgs);
	kube_informer_free(wc->inf);
	if (wc->kick != NULL)
		event_free(wc->kick);
	if (wc->due != NULL)
		event_free(wc->due);
	if (wc->retry != NULL)
		event_free(wc->retry);
	if (wc->cfg_timer != NULL)
		event_free(wc->cfg_timer);
	for (size_t i = 0; i < wc->nsans; i++)
		free(wc->sans[i].dns);
	free(wc->sans);
	free(wc->san_conf);
	free(wc->ns);
	free(wc->secret);
	free(wc->service);
	free(wc->based_rv);
	json_decref(wc->written);
	free(wc->ca_b64);
	free(wc->served_cert);
	free(wc->served_key);
	free(wc);
	return NULL;
}

static X509 *
parse_served(const struct webcert *wc)
{
	X509 *leaf = NULL;

	if (parse_certs(wc->served_cert, &leaf, 1) == 0)
		leaf = NULL;
	ERR_clear_error();
	return leaf;
}

/* b64 (a caBundle) holds the CA that signed leaf. */
static bool
bundle_signed(const char *b64, X509 *leaf)
{
	char *pem = b64 != NULL ? b64_decode(b64) : NULL;
	X509 *cas[MAX_CAS];
	size_t n = parse_certs(pem, cas, MAX_CAS);
	bool ok = false;

	for (size_t i = 0; i < n; i++) {
		ok = ok || issued_by(cas[i], leaf);
		X509_free(cas[i]);
	}
	free(pem);
	ERR_clear_error();
	return ok;
}

bool
webcert_ready(const struct webcert *wc, char *reason, size_t len)
{
	char buf[400], note[512] = "";
	X509 *leaf;

	if (reason != NULL && len > 0)
		reason[0] = '\0';
	if (wc == NULL || !wc->started) {
		snprintf(reason, len, "webhook certificate: not started");
		return false;
	}
	if (!kube_informer_has_synced(wc->inf)) {
		if (!kube_informer_describe_failure(wc->inf, buf, sizeof(buf)))
			snprintf(buf, sizeof(buf), "reading Secret %s/%s", wc->ns, wc->secret);
		snprintf(reason, len, "webhook certificate: %s", buf);
		return false;
	}
	if (wc->served_cert == NULL) {
		snprintf(reason, len, "webhook certificate: %s", wc->status);
		return false;
	}
	if (wc->served_not_after <= wc_now(wc)) {
		snprintf(reason, len, "webhook certificate: the serving certificate has expired");
		return false;
	}
	leaf = parse_served(wc);
	for (size_t i = 0; i < wc->ncfgs; i++) {
		const struct wcfg *cf = &wc->cfgs[i];

		if (leaf != NULL && bundle_signed(cf->ok_b64, leaf)) {
			/* the API server trusts what is served; a check that failed since, or a
			 * newer bundle not set yet, is noted */
			if (note[0] == '\0' && cf->state == CFG_FAILED)
				snprintf(note, sizeof(note),
				    "webhook certificate: caBundle of %s %s not set: %s (the one "
				    "in "
				    "place trusts the serving certificate)",
				    cf->res->kind, cf->name, cf->err);
			continue;
		}
		if (cf->state == CFG_MISSING)
			snprintf(reason, len,
			    "webhook certificate: %s %s not found (its caBundle is set once it "
			    "exists)",
			    cf->res->kind, cf->name);
		else if (cf->state == CFG_FAILED)
			snprintf(reason, len, "webhook certificate: caBundle of %s %s not set: %s",
			    cf->res->kind, cf->name, cf->err);
		else
			snprintf(reason, len, "webhook certificate: caBundle of %s %s being set",
			    cf->res->kind, cf->name);
		X509_free(leaf);
		return false;
	}
	X509_free(leaf);
	snprintf(reason, len, "%s", note);
	return true;
}

void
webcert_stop(struct webcert *wc)
{
	if (wc == NULL || wc->stopped)
		return;
	wc->stopped = true;
	log_info("webhook certificate: stopping: Secret %s/%s left to the other replicas", wc->ns,
	    wc->secret);
}

void
webcert_recheck(struct webcert *wc)
{
	if (wc == NULL || !wc->started)
		return;
	wc->hold = false;
	event_del(wc->retry);
	run_configs(wc);
	kick(wc);
}
