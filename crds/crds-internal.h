/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CRDS_INTERNAL_H
#define VMDHCP_CRDS_INTERNAL_H

/*
 * The codec's field tables: one const struct crd_field per JSON property, mirroring the
 * openAPIV3Schema of the crds/ YAML files (type, required, format, pattern, limits, default,
 * immutability), and saying where and how the value is kept in the C struct (store, offset).
 * The generic decoder enforces what the table says, then stores the value (a decode hook
 * when the field has one, else by its store); the encoder writes the fields in table order
 * from the same storage, and the status equality compares them.
 * tests/unit/test-crds-schema.c walks the YAML schema and these tables side by side and
 * fails on any difference.
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
/* Route destination: prefix 0..32. */
#define CRD_PATTERN_ROUTE_CIDR "^" CRD_RE_IPV4 "/([0-9]|[12][0-9]|3[0-2])$"
/* DNS label / name (RFC 1123; '_' tolerated, trailing dot allowed). */
#define CRD_RE_LABEL "[A-Za-z0-9_]([-A-Za-z0-9_]{0,61}[A-Za-z0-9_])?"
#define CRD_PATTERN_DOMAIN "^" CRD_RE_LABEL "(\\." CRD_RE_LABEL ")*\\.?$"
/* NTP server: an IPv4 address, or a host name whose last label is not all digits. */
#define CRD_PATTERN_NTP                                                                            \
	"^(" CRD_RE_IPV4 "|(" CRD_RE_LABEL "\\.)*[0-9]*[A-Za-z_]([-A-Za-z0-9_]{0,61}"              \
	"[A-Za-z0-9_])?\\.?)$"

/* Network boot: a file name or host (printable ASCII, no space), an http(s) URL. */
#define CRD_PATTERN_BOOT_NAME "^[!-~]+$"
#define CRD_PATTERN_BOOT_URL "^https?://[!-~]+$"

/*
 * How a field's value is kept at .offset of the struct the table describes (the ctx of its
 * hooks). "Unset" is what the encoder omits unless the field is .always written.
 */
enum crd_store {
	CRD_S_NONE = 0, /* not kept (or only by hooks) */
	CRD_S_CONST,	/* nothing kept: the value must be, and is written as, .value */
	CRD_S_STR,	/* char *, NULL = unset (written as "" when .always) */
	CRD_S_CHARS,	/* char[.size], "" = unset */
	CRD_S_NETNAME,	/* char[CRD_NETWORK_NAME_MAX + 1], canonical; written in spec form */
	CRD_S_MAC,	/* char[MAC_STRLEN], canonical (lower case, colons), "" = unset */
	CRD_S_IPV4,	/* uint32_t, host order, 0 = unset */
	CRD_S_CIDR,	/* uint32_t address, and the unsigned prefix at .aux */
	CRD_S_IPV6,	/* struct in6_addr, all zero = unset; written in RFC 5952 form */
	CRD_S_CIDR6,	/* struct in6_addr address, and the unsigned prefix at .aux */
	CRD_S_BOOL,	/* bool, false = unset */
	CRD_S_U32,	/* uint32_t integer, 0 = unset */
	CRD_S_LL,	/* long long, 0 = unset */
	CRD_S_TIME,	/* time_t, 0 = unset; "" reads as unset */
	CRD_S_ENUM,	/* int-sized enum: index into .names (n_names), 0 = unset */
	CRD_S_STRUCT,	/* nested struct at .offset described by .children (array items: .size) */
	CRD_S_ARRAY,	/* items (.items): a pointer to them at .offset, or an inline array of
			   .size items; their size_t count at .aux; none = unset */
};

struct crd_field {
	const char *key; /* property name; NULL ends a table */
	enum crd_type type;
	bool required;
	bool immutable;			/* schema: x-kubernetes-validations rule self == oldSelf */
	bool strict;			/* objects: unknown properties are an error */
	const char *format;		/* strings: "ipv4", "ipv6", "date-time" or NULL */
	const char *pattern;		/* strings: CRD_PATTERN_* or NULL */
	const char *const *enum_values; /* strings: NULL-terminated allowed values, or NULL */
	long long max_length;		/* strings: 0 = none */
	bool has_minimum, has_maximum, has_default;
	long long minimum, maximum, dflt; /* integers */
	long long max_items;		  /* arrays: 0 = none */
	const struct crd_field *items;	  /* arrays, maps: the element's description */
	const struct crd_field *children; /* objects: properties (NULL = not described) */
	/*
	 * Checks of the codec only (type, format, pattern, limits, items of this description
	 * applied to the same value after the field's own): what our schema leaves open because
	 * upstream's (harvester/vm-dhcp-controller chart/crds/) does, so that the API server
	 * stores every object upstream's CRD stores. A spec refused here gets a Warning Event
	 * InvalidSpec; a status refused here is rewritten by the controller.
	 */
	const struct crd_field *codec;
	/*
	 * Store the (already validated) value v into ctx. path is the field's own path.
	 * Arrays of objects: the hook decodes each item (crd_decode_object on items->children).
	 * NULL: objects recurse into children with the same ctx; scalars are not stored.
	 */
	int (*decode)(const json_t *v, const char *path, void *ctx, struct crd_error *err);

	/* C storage: used to decode when there is no decode hook, to encode, to compare */
	enum crd_store store;
	size_t offset, aux, size; /* see enum crd_store */
	size_t present;		  /* CRD_PRESENT(): a bool set when the field is present and
				     that decides whether it is written; 0 = none */
	bool always;		  /* written even when unset */
	bool deprecated;	  /* a read-only alias of another field (the schema keeps it so
				     the API server does not prune it): never written */
	bool unequal_ok;	  /* ignored by crd_equal_object (times of the last write) */
	bool keyed;		  /* arrays of objects: crd_equal_object matches items by their
				     first child (a string key), in any order */
	const char *value;	  /* CRD_S_CONST */
	const char *const *names; /* CRD_S_ENUM: the string of each C value */
	size_t n_names;
	/* Instead of the store: *ret = new reference, or NULL to omit. 0 or -ENOMEM. */
	int (*encode)(const void *ctx, json_t **ret);
	bool (*equal)(const void *a, const void *b);
};

#define CRD_PRESENT(type, member) (offsetof(type, member) + 1)

/* Encode hook of the metadata field (ctx: struct crd_meta): crd_meta_encode. */
int crd_meta_encode_field(const void *meta, json_t **ret);

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
/* New reference: the object of the fields of ctx (see enum crd_store), or NULL (no memory). */
json_t *crd_encode_object(const struct crd_field *fields, const void *ctx);
/* Whether every compared field of a and b is equal (strings: NULL equals ""). */
bool crd_equal_object(const struct crd_field *fields, const void *a, const void *b);

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

/* IPPool's IPv6 half (crds/ippool-v6.c): the properties of spec.ipv6Config (ctx: struct
 * ippool_ipv6_config) and of status.ipv6 (ctx: struct ippool_status), the cross-field checks
 * and defaults of ipv6Config (nothing when the spec has none). */
extern const struct crd_field ippool_ipv6_config_children[];
extern const struct crd_field ippool_ipv6_status_children[];
struct ippool_spec;
int ippool_spec_check6(const struct ippool_spec *s, struct crd_error *err);
void ippool_spec_defaults6(struct ippool_spec *s);

/* One status.ipv4.allocated value (a MAC, EXCLUDED or RESERVED) into a->kind and a->mac:
 * 0, or -EINVAL. Shared by ippool.c's decoder and ippool-text.c's map parser. */
struct ippool_alloc;
/* spec.ipv4Config.networkBoot (crds/ippool-boot.c; ctx: struct ippool_network_boot). */
struct ippool_network_boot;
extern const struct crd_field ippool_network_boot_children[];
void ippool_network_boot_clear(struct ippool_network_boot *b);

int ippool_alloc_value_parse(const char *val, struct ippool_alloc *a);

#endif
