/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/admit-result.c - refusals and warnings in upstream's message form ("cannot
 * <verb> <kind> <ns>/<name> because ...", harvester/vm-dhcp-controller pkg/webhook/common.go),
 * one line each.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "controller/admit-internal.h"

/* One line: control characters (from names or values in the object) become spaces. */
static void
one_line(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = ' ';
}

int
admit_refuse(struct admit_ctx *c, int code, const char *fmt, ...)
{
	char reason[ADMIT_REASON_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	c->res->allowed = false;
	c->res->code = code;
	snprintf(c->res->message, sizeof(c->res->message), "cannot %s %s %s/%s because %s", c->verb,
	    c->kind, c->ns, c->name, reason);
	one_line(c->res->message);
	return -1;
}

int
admit_nomem(struct admit_ctx *c)
{
	return admit_refuse(c, 500, "of an internal error: %s", strerror(ENOMEM));
}

void
admit_warn(struct admit_ctx *c, const char *fmt, ...)
{
	struct admit_result *res = c->res;
	va_list ap;

	if (res->n_warnings >= ADMIT_WARNINGS_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(res->warnings[res->n_warnings], ADMIT_WARNING_MAX, fmt, ap);
	va_end(ap);
	one_line(res->warnings[res->n_warnings]);
	res->n_warnings++;
}

void
admit_result_clear(struct admit_result *res)
{
	if (!res)
		return;
	json_decref(res->patch);
	res->patch = NULL;
}
