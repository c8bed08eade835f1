/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CRDS_META_H
#define VMDHCP_CRDS_META_H

/*
 * What both kinds share outside their spec and status: group/version, the decode error
 * type, object metadata, RFC 3339 times (as time_t) and the networkName canonical form.
 *
 * Ownership: struct crd_meta owns its strings (malloc'd, NUL-terminated, NULL when absent)
 * and json_t references; release with crd_meta_clear.
 * Times are UTC seconds since the epoch (0 = unset), written as RFC 3339 "…Z" strings.
 */

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include <jansson.h>

#define CRD_GROUP "network.harvesterhci.io"
#define CRD_VERSION "v1alpha1"
#define CRD_API_VERSION CRD_GROUP "/" CRD_VERSION

/*
 * Decode error. path is the JSON field path ("spec.ipv4Config.pool.start",
 * "spec.networkConfigs[2].macAddress"); message is the whole line, path first:
 *   spec.ipv4Config.pool.start: "10.0.0.300" is not an IPv4 address
 */
struct crd_error {
	char path[128];
	char message[384];
};

/* Fill err (may be NULL) with path and message "path: <fmt…>". Returns -EINVAL. */
int crd_error_set(struct crd_error *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The subset of metadata the controller and the agent use. */
struct crd_meta {
	char *namespace;
	char *name;
	char *uid;
	char *resource_version;
	long long generation;
	time_t creation_timestamp;
	time_t deletion_timestamp; /* 0 when not being deleted */
	json_t *labels;		   /* new reference (object) or NULL */
	json_t *annotations;	   /* new reference (object) or NULL */
	char **finalizers;	   /* n_finalizers owned strings */
	size_t n_finalizers;
};

/*
 * metadata (borrowed, may be NULL) -> *meta (zeroed first). Errors name "metadata.…".
 * Returns 0, -EINVAL (err filled), -ENOMEM.
 */
int crd_meta_decode(const json_t *metadata, struct crd_meta *meta, struct crd_error *err);
/* New reference: metadata object with the set fields only (labels/annotations copied). */
json_t *crd_meta_encode(const struct crd_meta *meta);
void crd_meta_clear(struct crd_meta *meta);

/* RFC 3339 (Z or ±hh:mm, optional fraction) -> UTC seconds. 0 or -EINVAL. */
int crd_time_parse(const char *s, time_t *ret);
/* UTC seconds -> "YYYY-MM-DDTHH:MM:SSZ" into out[21]. */
void crd_time_format(time_t t, char out[21]);

/*
 * networkName canonical form "namespace/name": a bare "name" becomes "default/name".
 * Refuses (-EINVAL) empty parts, more than one '/', and input longer than 64 characters.
 * out must hold CRD_NETWORK_NAME_MAX + 1 bytes.
 */
#define CRD_NETWORK_NAME_INPUT_MAX 64
#define CRD_NETWORK_NAME_MAX (CRD_NETWORK_NAME_INPUT_MAX + 8) /* "default/" + 64 */
int crd_network_name_canonicalize(const char *s, char out[CRD_NETWORK_NAME_MAX + 1]);
/*
 * The form to write back into a spec (borrowed pointer into canonical): the canonical
 * form, or the bare name when "default/<name>" would exceed the 64 characters the schema
 * allows.
 */
const char *crd_network_name_spec_form(const char *canonical);

#endif
