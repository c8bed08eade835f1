/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_WEBCERT_X509_H
#define VMDHCP_CONTROLLER_WEBCERT_X509_H

/*
 * The admission webhook's certificate material (controller/webcert.h tells the design), with
 * OpenSSL only (EC P-256, SHA-256): the names a serving certificate carries, a CA and a
 * serving certificate made, the Secret's four values read back and checked, base64 as the
 * API server writes a Secret's data. No I/O but OpenSSL's random numbers.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/x509.h>

#include "lib/rfc3339.h"

#define WEBCERT_MAX_CAS 8 /* certificates kept from a bundle */

/* --- base64, PEM, times --------------------------------------------------------------- */

/* Base64 of data (padded) into a new string; NULL (ENOMEM). */
char *webcert_b64_encode(const char *data, size_t len);
/* Canonical base64 (as the API server writes a Secret's data) into a new NUL-terminated
 * string; NULL when absent, not base64, too large or holding a NUL. */
char *webcert_b64_decode(const char *s);
/* PEM text of certs, of key: a new string, or NULL. */
char *webcert_certs_pem(X509 *const *certs, size_t n);
char *webcert_key_pem(EVP_PKEY *key);
/* Up to max certificates of pem (NULL: none) into out: how many. */
size_t webcert_parse_certs(const char *pem, X509 **out, size_t max);
/* notAfter (seconds since the epoch; 0 when unreadable), and the time two thirds of the
 * validity have passed. */
int64_t webcert_not_after(X509 *x);
int64_t webcert_renew_at(X509 *x);
/* t (seconds since the epoch) as RFC 3339 in UTC, "2026-11-27T05:13:58Z" (lib/rfc3339). */
void webcert_fmt_time(int64_t t, char out[RFC3339_MAX]);
/* ca signed cert. */
bool webcert_issued_by(X509 *ca, X509 *cert);
/* b64 (a caBundle, NULL: none) holds the CA that signed leaf. */
bool webcert_bundle_signed(const char *b64, X509 *leaf);

/* --- the names a serving certificate carries ------------------------------------------ */

struct webcert_san {
	bool ip;
	char *dns;
	unsigned char addr[16];
	int addr_len;
};

struct webcert_names {
	struct webcert_san *sans; /* room for the entries added (the caller sizes it) */
	size_t nsans;
	char *san_conf; /* "DNS:a,DNS:b,IP:1.2.3.4" */
};

/* Letters, digits, '-', '.', '*', 1 to 253 characters. */
bool webcert_dns_name_ok(const char *s);
/* Adds "IP:addr" or "DNS:name" at n->sans[n->nsans]: 0, -EINVAL, -ENOMEM. */
int webcert_names_add(struct webcert_names *n, const char *entry);
void webcert_names_clear(struct webcert_names *n);
/* Every name of n is in x (more are fine: a replica of another version may want more, and
 * the two must not undo each other's work). */
bool webcert_has_names(const struct webcert_names *n, X509 *x);

/* --- making certificates -------------------------------------------------------------- */

/* A new CA at now, valid ca_validity_s (backdated as a serving certificate valid validity_s):
 * 0, -ENOMEM, -EINVAL. */
int webcert_new_ca(
    uint64_t validity_s, uint64_t ca_validity_s, int64_t now, X509 **ret_cert, EVP_PKEY **ret_key);
/* A serving certificate for names valid validity_s from now (not past the CA), signed by ca,
 * as PEM text, and its notAfter: 0, -ENOMEM, -EINVAL. */
int webcert_new_leaf(const struct webcert_names *names, uint64_t validity_s, int64_t now, X509 *ca,
    EVP_PKEY *ca_key, char **ret_cert, char **ret_key, int64_t *ret_not_after);

/* --- the Secret's content ------------------------------------------------------------- */

struct webcert_material {
	char *ca_pem, *ca_key_pem, *tls_crt, *tls_key; /* decoded values */
	X509 *cas[WEBCERT_MAX_CAS];
	size_t ncas;
	EVP_PKEY *ca_key;
	X509 *leaf;
	EVP_PKEY *leaf_key;
	bool ca_ok;   /* cas[0] is a CA, ca.key its key, not expired */
	bool leaf_ok; /* tls.crt's first certificate and tls.key match */
	char why[160];
};

/* The Secret (NULL: absent) read at now: m filled (why says what is unusable). */
void webcert_material_parse(struct webcert_material *m, const json_t *secret, int64_t now);
void webcert_material_free(struct webcert_material *m);

#endif
