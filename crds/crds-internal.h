/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CRDS_INTERNAL_H
#define VMDHCP_CRDS_INTERNAL_H

/*
 * The codec's field tables: one const struct crd_field per JSON property, mirroring the
 * openAPIV3Schema of the crds/ YAML files (type, required, format, pattern, limits, default,
 * immutability). The generic decoder enforces what the table says, then calls the field's
 * decode hook to store the value; tests/unit/test-crds-schema.c walks the YAML schema and
 * these tables side by side and fails on any difference.
 *
 * Patterns are written in the common subset of POSIX ERE (regcomp, used here) and RE2/ECMA
 * (used by the API server): anchored, classes, groups, alternation, bounded repetition.
 */

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "crds/meta.h"

enum crd_type {
	CRD_STRING = 1,
	CRD_INTEGER,
	CRD_BOOLEAN,
	CRD_ARRAY,
	CRD_OBJECT,
	CRD_MAP, /* object with additionalProperties (items describes the values) */
};

/* Dotted-quad part with no leading zeros (as lib/util.h's ipv4_parse). */
#define CRD_RE_OCTET "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])"
#define CRD_RE_IPV4 "(" CRD_RE_OCTET "\\.){3}" CRD_RE_OCTET
/* Pool CIDR: prefix 8..32 (ipam's limits). */
#define CRD_PATTERN_CIDR "^" CRD_RE_IPV4 "/([89]|[12][0-9]|3[0-2])$"
/* Route destination: prefix 0..32. */
#define CRD_PATTERN_ROUTE_CIDR "^" CRD_RE_IPV4 "/([0-9]|[12][0-9]|3[0-2])$"
/* aa:bb:cc:dd:ee:ff, aa-bb-cc-dd-ee-ff (any case) or aabb.ccdd.eeff */
#define CRD_PATTERN_MAC                                                                            \
	"^(([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}|([0-9A-Fa-f]{2}-){5}[0-9A-Fa-f]{2}|"                 \
	"([0-9A-Fa-f]{4}\\.){2}[0-9A-Fa-f]{4})$"
/* DNS label / name (RFC 1123; '_' tolerated, trailing dot allowed). */
#define CRD_RE_LABEL "[A-Za-z0-9_]([-A-Za-z0-9_]{0,61}[A-Za-z0-9_])?"
#define CRD_PATTERN_DOMAIN "^" CRD_RE_LABEL "(\\." CRD_RE_LABEL ")*\\.?$"
/* NTP server: an IPv4 address, or a host name whose last label is not all digits. */
#define CRD_PATTERN_NTP                                                                            \
	"^(" CRD_RE_IPV4 "|(" CRD_RE_LABEL "\\.)*[0-9]*[A-Za-z_]([-A-Za-z0-9_]{0,61}"              \
	"[A-Za-z0-9_])?\\.?)$"
/* networkName: "namespace/name" or "name" (Kubernetes object names). */
#define CRD_PATTERN_NETWORK_NAME "^([a-z0-9]([-a-z0-9]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"

struct crd_field {
	const char *key; /* property name; NULL ends a table */
	enum crd_type type;
	bool required;
	bool immutable;			/* schema: x-kubernetes-validations rule self == oldSelf */
	bool strict;			/* objects: unknown properties are an error */
	const char *format;		/* strings: "ipv4", "date-time" or NULL */
	const char *pattern;		/* strings: CRD_PATTERN_* or NULL */
	const char *const *enum_values; /* strings: NULL-terminated allowed values, or NULL */
	long long max_length;		/* strings: 0 = none */
	bool has_minimum, has_maximum, has_default;
	long long minimum, maximum, dflt; /* integers */
	long long max_items;		  /* arrays: 0 = none */
	const struct crd_field *items;	  /* arrays, maps: the element's description */
	const struct crd_field *children; /* objects: properties (NULL = not described) */
	/*
	 * Store the (already validated) value v into ctx. path is the field's own path.
	 * Arrays of objects: the hook decodes each item (crd_decode_object on items->children).
	 * NULL: objects recurse into children with the same ctx; scalars are not stored.
	 */
	int (*decode)(const json_t *v, const char *path, void *ctx, struct crd_error *err);
};

/* Root tables (apiVersion, kind, metadata, spec, status) of both kinds. */
extern const struct crd_field ippool_fields[];
extern const struct crd_field vmnetcfg_fields[];
/* The element of status.conditions[], shared by both kinds. */
extern const struct crd_field crd_condition_item;

/*
 * Validate obj against fields and decode every present property into ctx. path is the
 * object's own path ("" for the root). Returns 0, -EINVAL (err), -ENOMEM.
 */
int crd_decode_object(const json_t *obj, const char *path, const struct crd_field *fields,
    bool strict, void *ctx, struct crd_error *err);
/* Validate one value against f (type, format, pattern, limits, items; not children). */
int crd_validate_value(
    const json_t *v, const char *path, const struct crd_field *f, struct crd_error *err);
/* Whole-string match of a CRD_PATTERN_* (compiled once and cached). 1, 0, or -ENOMEM. */
int crd_pattern_match(const char *pattern, const char *s);

/* Join path + "." + key (or key alone at the root) / path + "[i]" into out. */
void crd_path_key(char *out, size_t size, const char *path, const char *key);
void crd_path_index(char *out, size_t size, const char *path, size_t i);

/* strdup that maps NULL to NULL; returns -ENOMEM through *r when it fails. */
char *crd_strdup(const char *s, int *r);

/* One status.ipv4.allocated value (a MAC, EXCLUDED or RESERVED) into a->kind and a->mac:
 * 0, or -EINVAL. Shared by ippool.c's decoder and ippool-load.c's packed loader. */
struct ippool_alloc;
int ippool_alloc_value_parse(const char *val, struct ippool_alloc *a);

#endif
