/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_KUBE_TLS_MBEDTLS_H
#define VMDHCP_KUBE_TLS_MBEDTLS_H

/* The TLS client configuration of kube/http-mbedtls.c (kube/tls-mbedtls.c). */

#include <stdbool.h>
#include <stddef.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

struct kube_config;

struct kube_tls {
	bool loaded;
	int error; /* of the one load, returned again */
	char message[256];
	const unsigned char *ip; /* an IP-literal server's address (ip_len 4 or 16), else NULL */
	size_t ip_len;
	mbedtls_ssl_config conf;
	mbedtls_x509_crt ca, own_cert;
	mbedtls_pk_context own_key;
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
};

void kube_tls_init(struct kube_tls *t);
void kube_tls_free(struct kube_tls *t);
/*
 * Loads cfg's TLS settings into t->conf, once (later calls return the first result): 0, or
 * -EIO / -EPROTO with the cause in t->message. ip (borrowed, must outlive t): the server's
 * address when it is an IP literal, checked against the certificate's iPAddress names.
 */
int kube_tls_load(
    struct kube_tls *t, const struct kube_config *cfg, const unsigned char *ip, size_t ip_len);
/* mbed TLS's text for error r in buf; returns buf. */
const char *kube_tls_text(int r, char *buf, size_t len);
/* Why handshake step r failed, as curl words it ("SSL peer certificate ... was not OK: ...",
 * "SSL connect error: ..."), with the socket's errno when one was seen. */
void kube_tls_handshake_error(
    const mbedtls_ssl_context *ssl, int r, int sys_errno, char *what, size_t what_len);

#endif
