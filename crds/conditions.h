/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CRDS_CONDITIONS_H
#define VMDHCP_CRDS_CONDITIONS_H

/*
 * Status conditions (the shape of wrangler's genericcondition, which the
 * Go project writes: type, status, reason, message, lastUpdateTime, lastTransitionTime;
 * plus metav1.Condition's observedGeneration, which we write).
 *
 * Ownership: every struct here owns its strings (malloc'd, NUL-terminated, NULL when
 * absent); release with crd_conditions_clear. Times as in crds/meta.h.
 */

#include <stddef.h>
#include <time.h>

#include <jansson.h>

#include "crds/meta.h" /* crd_error; callers that include only this header get meta too */

enum crd_cond_status {
	CRD_COND_UNKNOWN = 0,
	CRD_COND_TRUE,
	CRD_COND_FALSE,
};
/* "True" / "False" / "Unknown". */
const char *crd_cond_status_string(enum crd_cond_status status);

struct crd_condition {
	char *type; /* required */
	enum crd_cond_status status;
	char *reason;
	char *message;
	time_t last_update_time;
	time_t last_transition_time;
	/* metadata.generation the condition was computed from; 0 = unset (not written) */
	long long observed_generation;
};

struct crd_conditions {
	struct crd_condition *items;
	size_t n;
};

/* Condition type names of both kinds (README, "The API"; the schemas in crds/). */
#define IPPOOL_COND_REGISTERED "Registered"
#define IPPOOL_COND_CACHE_READY "CacheReady"
#define IPPOOL_COND_AGENT_READY "AgentReady"
#define IPPOOL_COND_STOPPED "Stopped"
/* ours: status.ipv4.allocated has no room for another binding (present once it has been) */
#define IPPOOL_COND_STATUS_FULL "StatusFull"
#define VMNETCFG_COND_ALLOCATED "Allocated"
#define VMNETCFG_COND_DISABLED "Disabled"
#define VMNETCFG_COND_IN_SYNCED "InSynced"

/* Borrowed pointer to the condition of that type, or NULL. */
const struct crd_condition *crd_conditions_get(
    const struct crd_conditions *conds, const char *type);

/*
 * Set (add or update) the condition `type` (reason, message borrowed, may be NULL), computed
 * from the object's metadata.generation `generation` (0: unknown, not written).
 * Nothing changes and 0 is returned when status, reason, message and observedGeneration are
 * already these. Otherwise lastUpdateTime = now, and lastTransitionTime = now only when the
 * status changes (or the condition is new); returns 1. Returns -ENOMEM on failure.
 */
int crd_conditions_set(struct crd_conditions *conds, const char *type, enum crd_cond_status status,
    const char *reason, const char *message, long long generation, time_t now);

/* "status.conditions" array (borrowed, may be NULL) -> *conds. path names errors. */
int crd_conditions_decode(
    const json_t *array, const char *path, struct crd_conditions *conds, struct crd_error *err);
/* New reference: JSON array. */
json_t *crd_conditions_encode(const struct crd_conditions *conds);
/* New deep copy into *dst (zeroed first). 0 or -ENOMEM. */
int crd_conditions_copy(struct crd_conditions *dst, const struct crd_conditions *src);
void crd_conditions_clear(struct crd_conditions *conds);

#endif
