/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/conditions.c - status conditions: set with the transition-time rules, copy, and
 * the codec of status.conditions[] shared by both kinds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crds/conditions.h"
#include "crds/crds-internal.h"
#include "lib/util.h"

/* --- conditions --------------------------------------------------------------------- */

static const char *const cond_status_names[] = {
    [CRD_COND_UNKNOWN] = "Unknown",
    [CRD_COND_TRUE] = "True",
    [CRD_COND_FALSE] = "False",
};

const char *
crd_cond_status_string(enum crd_cond_status status)
{
	if ((size_t)status < ELEMENTSOF(cond_status_names))
		return cond_status_names[status];
	return "Unknown";
}

const struct crd_condition *
crd_conditions_get(const struct crd_conditions *conds, const char *type)
{
	for (size_t i = 0; i < conds->n; i++)
		if (strcmp(conds->items[i].type, type) == 0)
			return &conds->items[i];
	return NULL;
}

static bool
str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

int
crd_conditions_set(struct crd_conditions *conds, const char *type, enum crd_cond_status status,
    const char *reason, const char *message, long long generation, time_t now)
{
	struct crd_condition *c = (struct crd_condition *)crd_conditions_get(conds, type);
	char *nr = NULL, *nm = NULL;
	int r = 0;

	if (c && c->status == status && str_eq(c->reason, reason) && str_eq(c->message, message) &&
	    c->observed_generation == generation)
		return 0;
	nr = crd_strdup(reason && reason[0] ? reason : NULL, &r);
	nm = crd_strdup(message && message[0] ? message : NULL, &r);
	if (r < 0)
		goto fail;
	if (!c) {
		struct crd_condition *items =
		    realloc(conds->items, (conds->n + 1) * sizeof(*items));
		char *t;

		if (!items)
			goto nomem;
		conds->items = items;
		t = strdup(type);
		if (!t)
			goto nomem;
		c = &conds->items[conds->n++];
		*c = (struct crd_condition){
		    .type = t, .status = status, .last_transition_time = now};
	} else if (c->status != status) {
		c->status = status;
		c->last_transition_time = now;
	}
	free(c->reason);
	free(c->message);
	c->reason = nr;
	c->message = nm;
	c->observed_generation = generation;
	c->last_update_time = now;
	return 1;
nomem:
	r = -ENOMEM;
fail:
	free(nr);
	free(nm);
	return r;
}

static void
condition_clear(struct crd_condition *c)
{
	free(c->type);
	free(c->reason);
	free(c->message);
	memset(c, 0, sizeof(*c));
}

void
crd_conditions_clear(struct crd_conditions *conds)
{
	for (size_t i = 0; i < conds->n; i++)
		condition_clear(&conds->items[i]);
	free(conds->items);
	conds->items = NULL;
	conds->n = 0;
}

int
crd_conditions_copy(struct crd_conditions *dst, const struct crd_conditions *src)
{
	int r = 0;

	memset(dst, 0, sizeof(*dst));
	if (src->n == 0)
		return 0;
	dst->items = calloc(src->n, sizeof(*dst->items));
	if (!dst->items)
		return -ENOMEM;
	for (size_t i = 0; i < src->n; i++) {
		const struct crd_condition *s = &src->items[i];
		struct crd_condition *d = &dst->items[i];

		*d = *s;
		d->type = crd_strdup(s->type, &r);
		d->reason = crd_strdup(s->reason, &r);
		d->message = crd_strdup(s->message, &r);
		dst->n++;
		if (r < 0) {
			crd_conditions_clear(dst);
			return r;
		}
	}
	return 0;
}

#define COND_FIELD(member) .offset = offsetof(struct crd_condition, member)

static const struct crd_field condition_children[] = {
    {.key = "type",
	.type = CRD_STRING,
	.required = true,
	.store = CRD_S_STR,
	.always = true,
	COND_FIELD(type)},
    {.key = "status",
	.type = CRD_STRING,
	.required = true,
	/* True, False or Unknown: the codec's check (CRD_S_ENUM); upstream's schema has none */
	.store = CRD_S_ENUM,
	.names = cond_status_names,
	.n_names = ELEMENTSOF(cond_status_names),
	.always = true,
	COND_FIELD(status)},
    {.key = "reason", .type = CRD_STRING, .store = CRD_S_STR, COND_FIELD(reason)},
    {.key = "message", .type = CRD_STRING, .store = CRD_S_STR, COND_FIELD(message)},
    {.key = "lastUpdateTime",
	.type = CRD_STRING,
	.store = CRD_S_TIME,
	.unequal_ok = true,
	COND_FIELD(last_update_time)},
    {.key = "lastTransitionTime",
	.type = CRD_STRING,
	.store = CRD_S_TIME,
	.unequal_ok = true,
	COND_FIELD(last_transition_time)},
    {.key = "observedGeneration",
	.type = CRD_INTEGER,
	.format = "int64",
	.store = CRD_S_LL,
	COND_FIELD(observed_generation)},
    {.key = NULL},
};

const struct crd_field crd_condition_item = {
    .type = CRD_OBJECT,
    .children = condition_children,
    .store = CRD_S_STRUCT,
    .size = sizeof(struct crd_condition),
};

int
crd_conditions_decode(
    const json_t *array, const char *path, struct crd_conditions *conds, struct crd_error *err)
{
	size_t n;
	char sub[128];
	int r;

	memset(conds, 0, sizeof(*conds));
	if (!array || json_is_null(array))
		return 0;
	if (!json_is_array(array))
		return crd_error_set(err, path, "must be an array");
	n = json_array_size(array);
	if (n == 0)
		return 0;
	conds->items = calloc(n, sizeof(*conds->items));
	if (!conds->items)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct crd_condition *c = &conds->items[conds->n];

		crd_path_index(sub, sizeof(sub), path, i);
		r = crd_decode_object(
		    json_array_get(array, i), sub, condition_children, false, c, err);
		conds->n++;
		if (r == 0) {
			for (size_t j = 0; j + 1 < conds->n; j++)
				if (strcmp(conds->items[j].type, c->type) == 0) {
					r = crd_error_set(err, sub,
					    "condition type \"%s\" appears twice", c->type);
					break;
				}
		}
		if (r < 0) {
			crd_conditions_clear(conds);
			return r;
		}
	}
	return 0;
}

json_t *
crd_conditions_encode(const struct crd_conditions *conds)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < conds->n; i++)
		if (json_array_append_new(
			a, crd_encode_object(condition_children, &conds->items[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}
