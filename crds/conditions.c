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

static int
set_str(json_t *o, const char *k, const char *s)
{
	return s ? json_object_set_new(o, k, json_string(s)) : 0;
}

static json_t *
time_json(time_t t)
{
	char buf[21];

	crd_time_format(t, buf);
	return json_string(buf);
}

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

/* Field hooks of one condition (ctx: struct crd_condition). */
static int
dec_cond_type(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct crd_condition *c = ctx;
	int r = 0;

	c->type = crd_strdup(json_string_value(v), &r);
	return r;
}

static int
dec_cond_status(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct crd_condition *c = ctx;
	const char *s = json_string_value(v);

	for (size_t i = 0; i < ELEMENTSOF(cond_status_names); i++)
		if (strcmp(s, cond_status_names[i]) == 0) {
			c->status = (enum crd_cond_status)i;
			return 0;
		}
	return crd_error_set(err, path, "\"%s\" is not True, False or Unknown", s);
}

static int
dec_cond_reason(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct crd_condition *c = ctx;
	int r = 0;

	c->reason = crd_strdup(json_string_value(v), &r);
	return r;
}

static int
dec_cond_message(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct crd_condition *c = ctx;
	int r = 0;

	c->message = crd_strdup(json_string_value(v), &r);
	return r;
}

/*
 * The Go project writes these times with format date-time but its schema does not say
 * so; we accept any RFC 3339 string, and an empty string as unset.
 */
static int
dec_cond_time(const json_t *v, const char *path, time_t *dst, struct crd_error *err)
{
	const char *s = json_string_value(v);

	if (s[0] == '\0')
		return 0;
	if (crd_time_parse(s, dst) < 0)
		return crd_error_set(err, path, "\"%.40s\" is not an RFC 3339 date-time", s);
	return 0;
}

static int
dec_cond_update(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return dec_cond_time(v, path, &((struct crd_condition *)ctx)->last_update_time, err);
}

static int
dec_cond_transition(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return dec_cond_time(v, path, &((struct crd_condition *)ctx)->last_transition_time, err);
}

static int
dec_cond_generation(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	((struct crd_condition *)ctx)->observed_generation = json_integer_value(v);
	return 0;
}

static const char *const cond_status_enum[] = {"True", "False", "Unknown", NULL};

static const struct crd_field condition_children[] = {
    {.key = "type", .type = CRD_STRING, .required = true, .decode = dec_cond_type},
    {.key = "status",
	.type = CRD_STRING,
	.required = true,
	.enum_values = cond_status_enum,
	.decode = dec_cond_status},
    {.key = "reason", .type = CRD_STRING, .decode = dec_cond_reason},
    {.key = "message", .type = CRD_STRING, .decode = dec_cond_message},
    {.key = "lastUpdateTime", .type = CRD_STRING, .decode = dec_cond_update},
    {.key = "lastTransitionTime", .type = CRD_STRING, .decode = dec_cond_transition},
    {.key = "observedGeneration",
	.type = CRD_INTEGER,
	.format = "int64",
	.decode = dec_cond_generation},
    {.key = NULL},
};

const struct crd_field crd_condition_item = {
    .type = CRD_OBJECT,
    .children = condition_children,
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

	if (!a)
		return NULL;
	for (size_t i = 0; i < conds->n; i++) {
		const struct crd_condition *c = &conds->items[i];
		json_t *o = json_object();
		int r = 0;

		if (!o)
			goto fail;
		r |= json_object_set_new(o, "type", json_string(c->type));
		r |= json_object_set_new(
		    o, "status", json_string(crd_cond_status_string(c->status)));
		r |= set_str(o, "reason", c->reason);
		r |= set_str(o, "message", c->message);
		if (c->last_update_time)
			r |= json_object_set_new(
			    o, "lastUpdateTime", time_json(c->last_update_time));
		if (c->last_transition_time)
			r |= json_object_set_new(
			    o, "lastTransitionTime", time_json(c->last_transition_time));
		if (c->observed_generation)
			r |= json_object_set_new(
			    o, "observedGeneration", json_integer(c->observed_generation));
		if (json_array_append_new(a, o) < 0 || r)
			goto fail;
	}
	return a;
fail:
	json_decref(a);
	return NULL;
}
