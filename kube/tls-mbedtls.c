/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The TLS side of kube/http-mbedtls.c: the client configuration loaded once from the
 * kubeconfig (CA or the system bundle, client certificate and key, TLS 1.2 at least), the
 * check of an IP-literal server against the certificate's iPAddress names (mbed TLS 2.28
 * checks DNS names only), and the texts of TLS failures as curl words them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/error.h>
#include <mbedtls/oid.h>
#include <mbedtls/version.h>

#include "kube/kube-internal.h"
#include "kube/tls-mbedtls.h"

#define SYSTEM_CA "/etc/ssl/certs/ca-certificates.crt"

void
kube_tls_init(struct kube_tls *t)
{
	mbedtls_ssl_config_init(&t->conf);
	mbedtls_x509_crt_init(&t->ca);
	mbedtls_x509_crt_init(&t->own_cert);
	mbedtls_pk_init(&t->own_key);
	mbedtls_entropy_init(&t->entropy);
	mbedtls_ctr_drbg_init(&t->drbg);
}

void
kube_tls_free(struct kube_tls *t)
{
	mbedtls_ssl_config_free(&t->conf);
	mbedtls_x509_crt_free(&t->ca);
	mbedtls_x509_crt_free(&t->own_cert);
	mbedtls_pk_free(&t->own_key);
	mbedtls_ctr_drbg_free(&t->drbg);
	mbedtls_entropy_free(&t->entropy);
}

const char *
kube_tls_text(int r, char *buf, size_t len)
{
	mbedtls_strerror(r, buf, len);
	return buf;
}

/* An IP-literal server must be named by an iPAddress subjectAltName of its certificate. */
static int
verify_cb(void *ctx, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
	struct kube_tls *h = ctx;
	const mbedtls_x509_sequence *san;

	if (depth != 0 || !h->ip_len)
		return 0;
	for (san = &crt->subject_alt_names; san && san->buf.p; san = san->next)
		if (san->buf.tag == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 7) &&
		    san->buf.len == h->ip_len && memcmp(san->buf.p, h->ip, h->ip_len) == 0)
			return 0;
	*flags |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
	return 0;
}

static int
tls_fail(struct kube_tls *h, int err, const char *what, int mbed_err)
{
	char text[160] = "";

	if (mbed_err)
		mbedtls_strerror(mbed_err, text, sizeof(text));
	snprintf(h->message, sizeof(h->message), "%s%s%s", what, text[0] ? ": " : "", text);
	h->error = err;
	return err;
}

/* PEM from memory: mbed TLS wants the terminating NUL counted. */
static int
parse_crt(mbedtls_x509_crt *crt, const char *data, size_t len, const char *file)
{
	if (data) {
		unsigned char *copy = malloc(len + 1);
		int r;

		if (!copy)
			return MBEDTLS_ERR_X509_ALLOC_FAILED;
		memcpy(copy, data, len);
		copy[len] = '\0';
		r = mbedtls_x509_crt_parse(crt, copy, len + 1);
		free(copy);
		return r;
	}
	return mbedtls_x509_crt_parse_file(crt, file);
}

static int
parse_key(struct kube_tls *h, const char *data, size_t len, const char *file)
{
#if MBEDTLS_VERSION_MAJOR >= 3
#define PK_RNG , mbedtls_ctr_drbg_random, &h->drbg
#else
#define PK_RNG
#endif
	if (data) {
		unsigned char *copy = malloc(len + 1);
		int r;

		if (!copy)
			return MBEDTLS_ERR_PK_ALLOC_FAILED;
		memcpy(copy, data, len);
		copy[len] = '\0';
		r = mbedtls_pk_parse_key(&h->own_key, copy, len + 1, NULL, 0 PK_RNG);
		mbedtls_platform_zeroize(copy, len);
		free(copy);
		return r;
	}
	return mbedtls_pk_parse_keyfile(&h->own_key, file, NULL PK_RNG);
#undef PK_RNG
}

int
kube_tls_load(
    struct kube_tls *h, const struct kube_config *cfg, const unsigned char *ip, size_t ip_len)
{
	int r;

	if (h->loaded)
		return h->error;
	h->loaded = true;
	h->ip = ip;
	h->ip_len = ip_len;
	r = mbedtls_ctr_drbg_seed(
	    &h->drbg, mbedtls_entropy_func, &h->entropy, (const unsigned char *)"vm-dhcp/kube", 12);
	if (r)
		return tls_fail(h, -EIO, "TLS random generator", r);
	r = mbedtls_ssl_config_defaults(&h->conf, MBEDTLS_SSL_IS_CLIENT,
	    MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
	if (r)
		return tls_fail(h, -EIO, "TLS configuration", r);
	mbedtls_ssl_conf_rng(&h->conf, mbedtls_ctr_drbg_random, &h->drbg);
#if MBEDTLS_VERSION_MAJOR >= 3
	mbedtls_ssl_conf_min_tls_version(&h->conf, MBEDTLS_SSL_VERSION_TLS1_2);
#else
	mbedtls_ssl_conf_min_version(
	    &h->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
#endif
	if (cfg->insecure) {
		mbedtls_ssl_conf_authmode(&h->conf, MBEDTLS_SSL_VERIFY_NONE);
	} else {
		const char *file = cfg->ca_file ? cfg->ca_file : SYSTEM_CA;
		char what[300];

		r = parse_crt(&h->ca, cfg->ca_data, cfg->ca_data_len, file);
		if (r) {
			snprintf(what, sizeof(what), "certificate authority %s",
			    cfg->ca_data ? "data" : file);
			return tls_fail(h, -EPROTO, what, r < 0 ? r : 0);
		}
		mbedtls_ssl_conf_authmode(&h->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
		mbedtls_ssl_conf_ca_chain(&h->conf, &h->ca, NULL);
		mbedtls_ssl_conf_verify(&h->conf, verify_cb, h);
	}
	if (cfg->cert_data || cfg->cert_file) {
		char what[300];

		r = parse_crt(&h->own_cert, cfg->cert_data, cfg->cert_data_len, cfg->cert_file);
		if (r) {
			snprintf(what, sizeof(what), "client certificate %s",
			    cfg->cert_data ? "data" : cfg->cert_file);
			return tls_fail(h, -EPROTO, what, r < 0 ? r : 0);
		}
		if (!cfg->key_data && !cfg->key_file)
			return tls_fail(h, -EPROTO, "client certificate without a key", 0);
		r = parse_key(h, cfg->key_data, cfg->key_data_len, cfg->key_file);
		if (r) {
			snprintf(what, sizeof(what), "client key %s",
			    cfg->key_data ? "data" : cfg->key_file);
			return tls_fail(h, -EPROTO, what, r);
		}
#if MBEDTLS_VERSION_MAJOR >= 3
		r = mbedtls_pk_check_pair(
		    &h->own_cert.pk, &h->own_key, mbedtls_ctr_drbg_random, &h->drbg);
#else
		r = mbedtls_pk_check_pair(&h->own_cert.pk, &h->own_key);
#endif
		if (r)
			return tls_fail(h, -EPROTO, "client certificate and key do not match", 0);
		r = mbedtls_ssl_conf_own_cert(&h->conf, &h->own_cert, &h->own_key);
		if (r)
			return tls_fail(h, -EPROTO, "client certificate", r);
	}
	return 0;
}

void
kube_tls_handshake_error(
    const mbedtls_ssl_context *ssl, int r, int sys_errno, char *what, size_t what_len)
{
	char text[200];
	uint32_t flags = mbedtls_ssl_get_verify_result(ssl);

	if (r == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED && flags) {
		char info[400];
		size_t l;

		mbedtls_x509_crt_verify_info(info, sizeof(info), "", flags);
		l = strlen(info);
		while (l && info[l - 1] == '\n')
			info[--l] = '\0';
		for (char *p = info; *p; p++)
			if (*p == '\n')
				*p = ';';
		snprintf(
		    what, what_len, "SSL peer certificate or SSH remote key was not OK: %s", info);
	} else {
		snprintf(what, what_len, "SSL connect error: %s%s%s",
		    kube_tls_text(r, text, sizeof(text)), sys_errno ? ": " : "",
		    sys_errno ? strerror(sys_errno) : "");
	}
}
