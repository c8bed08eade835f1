/* SPDX-License-Identifier: Apache-2.0 */
/* Certificates for the test API server, made with the OpenSSL API. */
#include "tests/apiserver/tls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include "lib/log.h"
#include "lib/util.h"

static int
add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (ext == NULL)
		return -EINVAL;
	X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return 0;
}

/* New certificate for key, signed by issuer_key (issuer NULL = self-signed). */
static X509 *
make_cert(
    EVP_PKEY *key, const char *cn, X509 *issuer, EVP_PKEY *issuer_key, bool ca, const char *san)
{
	X509 *cert = X509_new();
	unsigned char serial[16];
	BIGNUM *bn;
	X509_NAME *name;

	if (cert == NULL)
		return NULL;
	X509_set_version(cert, 2);
	RAND_bytes(serial, sizeof(serial));
	serial[0] &= 0x7f;
	bn = BN_bin2bn(serial, sizeof(serial), NULL);
	BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
	BN_free(bn);
	X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
	X509_gmtime_adj(X509_getm_notAfter(cert), 10L * 365 * 24 * 3600);
	X509_set_pubkey(cert, key);
	name = X509_get_subject_name(cert);
	X509_NAME_add_entry_by_txt(
	    name, "O", MBSTRING_ASC, (const unsigned char *)"vm-dhcp tests", -1, -1, 0);
	X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
	X509_set_issuer_name(cert, issuer != NULL ? X509_get_subject_name(issuer) : name);
	if (ca) {
		add_ext(cert, cert, NID_basic_constraints, "critical,CA:TRUE");
		add_ext(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
		add_ext(cert, cert, NID_subject_key_identifier, "hash");
	} else {
		add_ext(cert, issuer, NID_basic_constraints, "critical,CA:FALSE");
		add_ext(cert, issuer, NID_key_usage, "critical,digitalSignature,keyEncipherment");
		add_ext(cert, issuer, NID_ext_key_usage, "serverAuth");
		add_ext(cert, issuer, NID_subject_alt_name, san);
		add_ext(cert, issuer, NID_authority_key_identifier, "keyid:always");
	}
	if (X509_sign(cert, issuer_key, EVP_sha256()) == 0) {
		X509_free(cert);
		return NULL;
	}
	return cert;
}

static char *
bio_string(BIO *b)
{
	char *data;
	long n = BIO_get_mem_data(b, &data);
	char *s = malloc((size_t)n + 1);

	if (s == NULL)
		abort();
	memcpy(s, data, (size_t)n);
	s[n] = '\0';
	return s;
}

static int
load_ca(const char *dir, X509 **ret_cert, EVP_PKEY **ret_key)
{
	char path[4096];
	FILE *f;
	X509 *cert;
	EVP_PKEY *key;

	snprintf(path, sizeof(path), "%s/ca.crt", dir);
	f = fopen(path, "r");
	if (f == NULL)
		return -errno;
	cert = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	snprintf(path, sizeof(path), "%s/ca.key", dir);
	f = fopen(path, "r");
	if (f == NULL) {
		X509_free(cert);
		return -errno;
	}
	key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (cert == NULL || key == NULL) {
		X509_free(cert);
		EVP_PKEY_free(key);
		return -EBADMSG;
	}
	*ret_cert = cert;
	*ret_key = key;
	return 0;
}

static int
save_ca(const char *dir, X509 *cert, EVP_PKEY *key)
{
	char path[4096];
	BIO *b = BIO_new(BIO_s_mem());
	char *s;
	int r;

	PEM_write_bio_PrivateKey(b, key, NULL, NULL, 0, NULL, NULL);
	s = bio_string(b);
	BIO_free(b);
	snprintf(path, sizeof(path), "%s/ca.key", dir);
	r = write_file_atomic(path, s, strlen(s), 0600);
	free(s);
	if (r < 0)
		return r;
	b = BIO_new(BIO_s_mem());
	PEM_write_bio_X509(b, cert);
	s = bio_string(b);
	BIO_free(b);
	snprintf(path, sizeof(path), "%s/ca.crt", dir);
	r = write_file_atomic(path, s, strlen(s), 0644);
	free(s);
	return r;
}

int
tls_setup(const char *dir, const char *extra_san, SSL_CTX **ret_ctx, char **ret_ca_pem)
{
	X509 *ca = NULL, *cert = NULL;
	EVP_PKEY *cakey = NULL, *key = NULL;
	SSL_CTX *ctx = NULL;
	BIO *b;
	int r;

	if (load_ca(dir, &ca, &cakey) < 0) {
		cakey = EVP_EC_gen("P-256");
		if (cakey == NULL)
			return -ENOMEM;
		ca = make_cert(cakey, "vm-dhcp test CA", NULL, cakey, true, NULL);
		if (ca == NULL) {
			r = -EINVAL;
			goto out;
		}
		r = save_ca(dir, ca, cakey);
		if (r < 0)
			goto out;
		log_debug("made a new CA in %s", dir);
	}
	key = EVP_EC_gen("P-256");
	if (key == NULL) {
		r = -ENOMEM;
		goto out;
	}
	{
		char san[512];
		/* the tests' addresses, plus one a test in network namespaces reaches it on */
		if ((size_t)snprintf(san, sizeof(san), "IP:127.0.0.1,IP:::1,DNS:localhost%s%s",
			extra_san != NULL ? "," : "",
			extra_san != NULL ? extra_san : "") >= sizeof(san)) {
			r = -EINVAL;
			goto out;
		}
		cert = make_cert(key, "127.0.0.1", ca, cakey, false, san);
	}
	if (cert == NULL) {
		r = -EINVAL;
		goto out;
	}
	ctx = SSL_CTX_new(TLS_server_method());
	if (ctx == NULL || SSL_CTX_use_certificate(ctx, cert) != 1 ||
	    SSL_CTX_use_PrivateKey(ctx, key) != 1 || SSL_CTX_add1_chain_cert(ctx, ca) != 1) {
		r = -EINVAL;
		goto out;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	b = BIO_new(BIO_s_mem());
	PEM_write_bio_X509(b, ca);
	*ret_ca_pem = bio_string(b);
	BIO_free(b);
	*ret_ctx = ctx;
	ctx = NULL;
	r = 0;
out:
	if (r < 0)
		log_error("TLS setup: %s", ERR_error_string(ERR_get_error(), NULL));
	SSL_CTX_free(ctx);
	X509_free(ca);
	X509_free(cert);
	EVP_PKEY_free(cakey);
	EVP_PKEY_free(key);
	return r;
}
