/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The admission webhook's certificate material (webcert-x509.h): OpenSSL's X509 and EVP_PKEY
 * in and out of PEM and base64, certificates made, the Secret's values checked.
 */
#include "controller/webcert-x509.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#define BACKDATE_MAX_S 300   /* notBefore this far in the past (clock skew) */
#define PEM_MAX (256 * 1024) /* a Secret's value we parse */

/* --- base64, PEM, times ---------------------------------------------------------------------- */

char *
webcert_b64_encode(const char *data, size_t len)
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
char *
webcert_b64_decode(const char *s)
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

char *
webcert_certs_pem(X509 *const *certs, size_t n)
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

char *
webcert_key_pem(EVP_PKEY *key)
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
webcert_not_before(X509 *x)
{
	return asn1_epoch(X509_get0_notBefore(x));
}

int64_t
webcert_not_after(X509 *x)
{
	return asn1_epoch(X509_get0_notAfter(x));
}

void
webcert_fmt_time(int64_t t, char out[RFC3339_MAX])
{
	rfc3339_format(t * 1000000, 0, out);
}

/* Two thirds of the validity passed. */
int64_t
webcert_renew_at(X509 *x)
{
	int64_t nb = webcert_not_before(x), na = webcert_not_after(x);

	return nb + (na - nb) / 3 * 2;
}

bool
webcert_issued_by(X509 *ca, X509 *cert)
{
	bool ok = X509_check_issued(ca, cert) == X509_V_OK &&
		  X509_verify(cert, X509_get0_pubkey(ca)) == 1;

	ERR_clear_error();
	return ok;
}

bool
webcert_bundle_signed(const char *b64, X509 *leaf)
{
	char *pem = b64 != NULL ? webcert_b64_decode(b64) : NULL;
	X509 *cas[WEBCERT_MAX_CAS];
	size_t n = webcert_parse_certs(pem, cas, WEBCERT_MAX_CAS);
	bool ok = false;

	for (size_t i = 0; i < n; i++) {
		ok = ok || webcert_issued_by(cas[i], leaf);
		X509_free(cas[i]);
	}
	free(pem);
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

/* notBefore this far before now: a tenth of the serving validity, at most BACKDATE_MAX_S. */
static int64_t
backdate(uint64_t validity_s)
{
	int64_t b = (int64_t)(validity_s / 10);

	return b < BACKDATE_MAX_S ? b : BACKDATE_MAX_S;
}

int
webcert_new_ca(
    uint64_t validity_s, uint64_t ca_validity_s, int64_t now, X509 **ret_cert, EVP_PKEY **ret_key)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	char cn[64];
	X509 *cert;

	if (key == NULL) {
		ERR_clear_error();
		return -ENOMEM;
	}
	snprintf(cn, sizeof(cn), "vm-dhcp-webhook-ca@%" PRId64, now);
	cert = make_cert(
	    key, cn, NULL, NULL, NULL, now - backdate(validity_s), now + (int64_t)ca_validity_s);
	if (cert == NULL) {
		EVP_PKEY_free(key);
		return -EINVAL;
	}
	*ret_cert = cert;
	*ret_key = key;
	return 0;
}

int
webcert_new_leaf(const struct webcert_names *names, uint64_t validity_s, int64_t now, X509 *ca,
    EVP_PKEY *ca_key, char **ret_cert, char **ret_key, int64_t *ret_not_after)
{
	EVP_PKEY *key = EVP_EC_gen("P-256");
	int64_t na = now + (int64_t)validity_s;
	const char *cn = names->sans[0].ip ? "vm-dhcp-webhook" : names->sans[0].dns;
	X509 *cert;
	char *c, *k;

	if (key == NULL) {
		ERR_clear_error();
		return -ENOMEM;
	}
	if (na > webcert_not_after(ca))
		na = webcert_not_after(ca);
	cert = make_cert(key, cn, ca, ca_key, names->san_conf, now - backdate(validity_s), na);
	if (cert == NULL) {
		EVP_PKEY_free(key);
		return -EINVAL;
	}
	c = webcert_certs_pem(&cert, 1);
	k = webcert_key_pem(key);
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

void
webcert_material_free(struct webcert_material *m)
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

size_t
webcert_parse_certs(const char *pem, X509 **out, size_t max)
{
	BIO *b = pem != NULL ? BIO_new_mem_buf(pem, -1) : NULL;
	size_t n = 0;
	X509 *x;

	while (b != NULL && n < max && (x = PEM_read_bio_X509(b, NULL, NULL, NULL)) != NULL)
		out[n++] = x;
	BIO_free(b);
	return n;
}

void
webcert_material_parse(struct webcert_material *m, const json_t *secret, int64_t now)
{
	json_t *data = json_object_get(secret, "data");

	memset(m, 0, sizeof(*m));
	if (secret == NULL) {
		snprintf(m->why, sizeof(m->why), "the Secret does not exist");
		return;
	}
	m->ca_pem = webcert_b64_decode(json_string_value(json_object_get(data, "ca.crt")));
	m->ca_key_pem = webcert_b64_decode(json_string_value(json_object_get(data, "ca.key")));
	m->tls_crt = webcert_b64_decode(json_string_value(json_object_get(data, "tls.crt")));
	m->tls_key = webcert_b64_decode(json_string_value(json_object_get(data, "tls.key")));
	m->ncas = webcert_parse_certs(m->ca_pem, m->cas, WEBCERT_MAX_CAS);
	m->ca_key = parse_key(m->ca_key_pem);
	if (webcert_parse_certs(m->tls_crt, &m->leaf, 1) == 0)
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
	else if (webcert_not_after(m->cas[0]) <= now)
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
has_san(const GENERAL_NAMES *gens, const struct webcert_san *s)
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

bool
webcert_has_names(const struct webcert_names *n, X509 *x)
{
	GENERAL_NAMES *gens = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	bool ok = gens != NULL;

	for (size_t i = 0; ok && i < n->nsans; i++)
		ok = has_san(gens, &n->sans[i]);
	GENERAL_NAMES_free(gens);
	ERR_clear_error();
	return ok;
}

/* --- names ------------------------------------------------------------------------------------ */

bool
webcert_dns_name_ok(const char *s)
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

int
webcert_names_add(struct webcert_names *n, const char *entry)
{
	struct webcert_san *s = &n->sans[n->nsans];
	size_t cl = n->san_conf != NULL ? strlen(n->san_conf) : 0;
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
	} else if (strncmp(entry, "DNS:", 4) == 0 && webcert_dns_name_ok(entry + 4)) {
		s->dns = strdup(entry + 4);
		if (s->dns == NULL)
			return -ENOMEM;
	} else {
		return -EINVAL;
	}
	conf = realloc(n->san_conf, cl + strlen(entry) + 2);
	if (conf == NULL) {
		free(s->dns);
		return -ENOMEM;
	}
	snprintf(conf + cl, strlen(entry) + 2, "%s%s", cl > 0 ? "," : "", entry);
	n->san_conf = conf;
	n->nsans++;
	return 0;
}

void
webcert_names_clear(struct webcert_names *n)
{
	for (size_t i = 0; i < n->nsans; i++)
		free(n->sans[i].dns);
	free(n->sans);
	free(n->san_conf);
	memset(n, 0, sizeof(*n));
}
