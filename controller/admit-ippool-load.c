/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/admit-ippool-load.c - an IPPool object read for its admission
 * (admit-ippool-load.h): the shape Go's decoder needs, the addresses in upstream's LoadPool
 * order with Go's messages, status.ipv4.allocated as upstream's LoadAllocated reads it.
 */
#include "controller/admit-ippool-load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S(x) ((x) ? (x) : "")

static int
cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

static int
cmp_entry(const void *x, const void *y)
{
	return cmp_u32(&((const struct st_entry *)x)->addr, &((const struct st_entry *)y)->addr);
}

bool
admit_pinfo_excluded(const struct pinfo *pi, uint32_t a)
{
	return bsearch(&a, pi->excl, pi->n_excl, sizeof(*pi->excl), cmp_u32) != NULL;
}

const struct st_entry *
admit_st_find(const struct st_list *st, uint32_t a)
{
	struct st_entry key = {.addr = a};

	return bsearch(&key, st->e, st->n, sizeof(*st->e), cmp_entry);
}

/* --- loading ----------------------------------------------------------------------------- */

static int
sub_object(const json_t *parent, const char *key, const json_t **ret)
{
	const json_t *v = json_is_object(parent) ? json_object_get(parent, key) : NULL;

	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_object(v))
		return -EINVAL;
	*ret = v;
	return 0;
}

/* The shape Go's decoder needs; -1 (refused, 400) when it does not decode. */
int
admit_raw_pool_load(struct admit_ctx *c, const json_t *obj, struct raw_pool *rp)
{
	const char *bad = NULL;

	memset(rp, 0, sizeof(*rp));
	if (!json_is_object(obj))
		return admit_refuse(c, 400, "the object is not a JSON object");
	if (sub_object(obj, "spec", &rp->spec) < 0)
		bad = "spec";
	else if (sub_object(rp->spec, "ipv4Config", &rp->v4) < 0)
		bad = "spec.ipv4Config";
	else if (sub_object(rp->v4, "pool", &rp->pool) < 0)
		bad = "spec.ipv4Config.pool";
	else if (admit_json_str(rp->spec, "networkName", &rp->network) < 0)
		bad = "spec.networkName";
	else if (admit_json_str(rp->v4, "cidr", &rp->cidr) < 0)
		bad = "spec.ipv4Config.cidr";
	else if (admit_json_str(rp->v4, "serverIP", &rp->server) < 0)
		bad = "spec.ipv4Config.serverIP";
	else if (admit_json_str(rp->v4, "router", &rp->router) < 0)
		bad = "spec.ipv4Config.router";
	else if (admit_json_str(rp->pool, "start", &rp->start) < 0)
		bad = "spec.ipv4Config.pool.start";
	else if (admit_json_str(rp->pool, "end", &rp->end) < 0)
		bad = "spec.ipv4Config.pool.end";
	if (bad)
		return admit_refuse(c, 400, "%s does not decode", bad);
	rp->exclude = json_object_get(rp->pool, "exclude");
	if (rp->exclude && json_is_null(rp->exclude))
		rp->exclude = NULL;
	if (rp->exclude && !json_is_array(rp->exclude))
		return admit_refuse(c, 400, "spec.ipv4Config.pool.exclude does not decode");
	return 0;
}

static int
field(const char *label, const char *s, bool *has, uint32_t *ret, char *reason, size_t len)
{
	*has = s && s[0];
	return *has ? admit_parse_field(label, s, ret, reason, len) : 0;
}

/* LoadPool's order (cidr, start, end, serverIP, router), then the excludes. */
int
admit_pinfo_load(const struct raw_pool *rp, struct pinfo *pi, char *reason, size_t len)
{
	size_t n = json_array_size(rp->exclude), k = 0;
	bool has;

	memset(pi, 0, sizeof(*pi));
	if (admit_go_parse_cidr(S(rp->cidr), &pi->net, &pi->prefix, reason, len) < 0)
		return -1;
	pi->mask = ipv4_prefix_mask(pi->prefix);
	pi->bcast = pi->net | ~pi->mask;
	if (field("start ip", rp->start, &pi->has_start, &pi->start, reason, len) < 0 ||
	    field("end ip", rp->end, &pi->has_end, &pi->end, reason, len) < 0 ||
	    field("server ip", rp->server, &pi->has_server, &pi->server, reason, len) < 0 ||
	    field("router ip", rp->router, &pi->has_router, &pi->router, reason, len) < 0)
		return -1;
	pi->excl = calloc(n ? n : 1, sizeof(*pi->excl));
	if (!pi->excl)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *s = json_string_value(json_array_get(rp->exclude, i));

		if (!s) {
			snprintf(
			    reason, len, "spec.ipv4Config.pool.exclude[%zu] is not a string", i);
			return -1;
		}
		if (field("exclude ip", s, &has, &pi->excl[k], reason, len) < 0)
			return -1;
		k += has;
	}
	qsort(pi->excl, k, sizeof(*pi->excl), cmp_u32);
	pi->n_excl = 0;
	for (size_t i = 0; i < k; i++)
		if (i == 0 || pi->excl[i] != pi->excl[i - 1])
			pi->excl[pi->n_excl++] = pi->excl[i];
	return 0;
}

void
admit_pinfo_clear(struct pinfo *pi)
{
	free(pi->excl);
	pi->excl = NULL;
}

/* status.ipv4.allocated as upstream's LoadAllocated reads it (unparsable keys skipped). */
int
admit_st_load(const json_t *obj, struct st_list *st)
{
	const json_t *m =
	    json_object_get(json_object_get(json_object_get(obj, "status"), "ipv4"), "allocated");
	const char *k;
	json_t *v;

	st->n = 0;
	st->e = calloc(json_object_size(m) ? json_object_size(m) : 1, sizeof(*st->e));
	if (!st->e)
		return -ENOMEM;
	json_object_foreach((json_t *)m, k, v)
	{
		struct st_entry *e = &st->e[st->n];
		const char *val = json_string_value(v);

		if (!val || admit_go_parse_addr(k, &e->addr, NULL, 0) < 0)
			continue;
		if (strcmp(val, IPPOOL_ALLOCATED_EXCLUDED) == 0)
			e->kind = IPPOOL_ALLOC_EXCLUDED;
		else if (strcmp(val, IPPOOL_ALLOCATED_RESERVED) == 0)
			e->kind = IPPOOL_ALLOC_RESERVED;
		else
			e->mac_ok = mac_parse(val, e->mac) == 0;
		snprintf(e->raw, sizeof(e->raw), "%s", val);
		if (e->mac_ok)
			mac_format(e->mac, e->raw);
		st->n++;
	}
	qsort(st->e, st->n, sizeof(*st->e), cmp_entry);
	return 0;
}
