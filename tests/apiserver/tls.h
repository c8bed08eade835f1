/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_APISERVER_TLS_H
#define VMDHCP_APISERVER_TLS_H

#include <openssl/ssl.h>

/*
 * Load DIR/ca.crt + DIR/ca.key, or make a new self-signed CA (EC P-256) and write them;
 * then issue a fresh server certificate for 127.0.0.1, ::1 and localhost signed by it.
 * Returns 0 and a new server SSL_CTX in *ret_ctx and the CA certificate as a new PEM
 * string in *ret_ca_pem (caller frees), or negative errno.
 */
/* extra_san (may be NULL): more subjectAltName entries for the server certificate, e.g.
 * "IP:10.0.0.1" */
int tls_setup(const char *dir, const char *extra_san, SSL_CTX **ret_ctx, char **ret_ca_pem);

#endif
