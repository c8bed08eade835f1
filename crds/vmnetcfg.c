/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/vmnetcfg.c - VirtualMachineNetworkConfig codec: field tables (the C mirror of
 * crds/virtualmachinenetworkconfigs.yaml), decode hooks, checks, encoders.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crds/crds-internal.h"
#include "crds/vmnetcfg.h"
#include "lib/util.h"

static const char *const state_names[] = {
    [VMNETCFG_STATE_NONE] = "",
    [VMNETCFG_STATE_ALLOCATED] = "Allocated",
    [VMNETCFG_STATE_PENDING] = "Pending",
    [VMNETCFG_STATE_STALE] = "Stale",
};

const char *
vmnetcfg_state_string(enum vmnetcfg_state state)
{
	if ((size_t)state < ELEMENTSOF(state_names))
		return state_names[state];
	return "";
}

int
vmnetcfg_state_parse(const char *s, enum vmnetcfg_state *ret)
{
	for (size_t i = 1; i < ELEMENTSOF(state_names); i++)
		if (strcmp(s, state_names[i]) == 0) {
			*ret = (enum vmnetcfg_state)i;
			return 0;
		}
	return -EINVAL;
}

/* --- spec.networkConfigs[] item (ctx: struct vmnetcfg_nic) ----------------------------- */

#define NIC(member) .offset = offsetof(struct vmnetcfg_nic, member)
#define NIC_STATUS(member) .offset = offsetof(struct vmnetcfg_nic_status, member)

static const struct crd_field nic_children[] = {
    {.key = "networkName",
	.type = CRD_STRING,
	.required = true,
	.max_length = CRD_NETWORK_NAME_INPUT_MAX,
	.store = CRD_S_NETNAME,
	NIC(network_name),
	.always = true},
    /* upstream's schema: maxLength 17, no pattern; the store refuses a non-MAC */
    {.key = "macAddress",
	.type = CRD_STRING,
	.required = true,
	.max_length = 17,
	.store = CRD_S_MAC,
	NIC(mac),
	.always = true},
    {.key = "ipAddress",
	.type = CRD_STRING,
	.format = "ipv4",
	.store = CRD_S_IPV4,
	NIC(ip_address)},
    /* Additive (upstream has no IPv6): a static IPv6 address in the pool's ipv6Config. */
    {.key = "ipv6Address",
	.type = CRD_STRING,
	.format = "ipv6",
	.store = CRD_S_IPV6,
	NIC(ipv6_address)},
    {.key = NULL},
};
static const struct crd_field nic_item = {
    .type = CRD_OBJECT,
    .strict = true,
    .children = nic_children,
    .store = CRD_S_STRUCT,
    .size = sizeof(struct vmnetcfg_nic),
};

/* --- spec (ctx: struct vmnetcfg_spec) ------------------------------------------------- */

static int
dec_vm_name(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct vmnetcfg_spec *s = ctx;
	int r = 0;

	if (json_string_length(v) == 0)
		return crd_error_set(err, path, "must not be empty");
	s->vm_name = crd_strdup(json_string_value(v), &r);
	return r;
}

static int
dec_nics(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct vmnetcfg_spec *s = ctx;
	size_t n = json_array_size(v);
	char sub[128];
	int r;

	if (n == 0)
		return 0;
	s->nics = calloc(n, sizeof(*s->nics));
	if (!s->nics)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct vmnetcfg_nic *nic = &s->nics[i];

		crd_path_index(sub, sizeof(sub), path, i);
		r = crd_decode_object(json_array_get(v, i), sub, nic_children, true, nic, err);
		if (r < 0)
			return r;
		s->n_nics++;
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->nics[j].mac, nic->mac) == 0 &&
			    strcmp(s->nics[j].network_name, nic->network_name) == 0) {
				char mp[128];

				crd_path_key(mp, sizeof(mp), sub, "macAddress");
				return crd_error_set(err, mp,
				    "%s is already used on network %s by networkConfigs[%zu]",
				    nic->mac, nic->network_name, j);
			}
	}
	return 0;
}

static const struct crd_field spec_children[] = {
    {.key = "vmName",
	.type = CRD_STRING,
	.required = true,
	.immutable = true,
	.max_length = VMNETCFG_VM_NAME_MAX,
	.decode = dec_vm_name,
	.store = CRD_S_STR,
	.offset = offsetof(struct vmnetcfg_spec, vm_name),
	.always = true},
    {.key = "paused",
	.type = CRD_BOOLEAN,
	.store = CRD_S_BOOL,
	.offset = offsetof(struct vmnetcfg_spec, paused)},
    {.key = VMNETCFG_FIELD_NICS,
	.type = CRD_ARRAY,
	.items = &nic_item,
	.max_items = VMNETCFG_NICS_MAX,
	.decode = dec_nics,
	.store = CRD_S_ARRAY,
	.offset = offsetof(struct vmnetcfg_spec, nics),
	.aux = offsetof(struct vmnetcfg_spec, n_nics),
	.always = true},
    /* Deprecated alias (our releases before the rename, and the Go project's v0.1.0): read
     * in place of networkConfigs when that is absent (nics_alias() renames it before
     * decoding), never written. */
    {.key = VMNETCFG_FIELD_NICS_OLD,
	.type = CRD_ARRAY,
	.items = &nic_item,
	.max_items = VMNETCFG_NICS_MAX,
	.deprecated = true},
    {.key = NULL},
};

/* --- status (ctx: struct vmnetcfg_status; items: struct vmnetcfg_nic_status) --------- */

static int
dec_st_network(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct vmnetcfg_nic_status *ns = ctx;

	const char *name = json_string_value(v);

	/* Written by the controller in canonical form (up to 72 characters); tolerate the
	 * bare form too. */
	if (strchr(name, '/') && strlen(name) <= CRD_NETWORK_NAME_MAX) {
		snprintf(ns->network_name, sizeof(ns->network_name), "%s", name);
		return 0;
	}
	if (crd_network_name_canonicalize(name, ns->network_name) < 0)
		return crd_error_set(err, path, "\"%.64s\" is not a \"namespace/name\" or \"name\"",
		    json_string_value(v));
	return 0;
}

static int
dec_st_state_old(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	struct vmnetcfg_nic_status *ns = ctx;
	int state;

	if (ns->state != VMNETCFG_STATE_NONE)
		return 0; /* state wins */
	if (vmnetcfg_state_parse(json_string_value(v), (enum vmnetcfg_state *)&state) < 0)
		return crd_error_set(
		    err, path, "\"%.40s\" is not one of the allowed values", json_string_value(v));
	ns->state = (enum vmnetcfg_state)state;
	return 0;
}

/* Upstream's schema has plain strings here; what the codec cannot read, the controller
 * rewrites. */
static const struct crd_field st_network_check = {
    .type = CRD_STRING, .max_length = CRD_NETWORK_NAME_MAX};

static const struct crd_field nic_status_children[] = {
    {.key = "allocatedIPAddress",
	.type = CRD_STRING,
	.store = CRD_S_IPV4,
	NIC_STATUS(allocated_ip)},
    /* Additive, as spec's ipv6Address; any textual form read, RFC 5952 written. */
    {.key = "allocatedIPv6Address",
	.type = CRD_STRING,
	.store = CRD_S_IPV6,
	NIC_STATUS(allocated_ipv6)},
    {.key = "macAddress", .type = CRD_STRING, .store = CRD_S_MAC, NIC_STATUS(mac)},
    {.key = "networkName",
	.type = CRD_STRING,
	.codec = &st_network_check,
	.decode = dec_st_network,
	.store = CRD_S_CHARS,
	NIC_STATUS(network_name),
	.size = CRD_NETWORK_NAME_MAX + 1},
    {.key = "state",
	.type = CRD_STRING,
	.store = CRD_S_ENUM,
	.names = state_names,
	.n_names = ELEMENTSOF(state_names),
	NIC_STATUS(state)},
    /* Deprecated: the Go project's v0.1.0 name of state (renamed in its commit 733fe3d),
     * which our earlier releases wrote beside state. Read when state is absent, never
     * written: upstream's CRD prunes it. */
    {.key = "status", .type = CRD_STRING, .decode = dec_st_state_old, .deprecated = true},
    {.key = NULL},
};
static const struct crd_field nic_status_item = {
    .type = CRD_OBJECT,
    .children = nic_status_children,
    .store = CRD_S_STRUCT,
    .size = sizeof(struct vmnetcfg_nic_status),
};

static int
dec_conditions(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return crd_conditions_decode(v, path, &((struct vmnetcfg_status *)ctx)->conditions, err);
}

static const struct crd_field status_children[] = {
    {.key = VMNETCFG_FIELD_NICS,
	.type = CRD_ARRAY,
	.items = &nic_status_item,
	.store = CRD_S_ARRAY,
	.offset = offsetof(struct vmnetcfg_status, nics),
	.aux = offsetof(struct vmnetcfg_status, n_nics)},
    /* Deprecated alias, as in spec. */
    {.key = VMNETCFG_FIELD_NICS_OLD,
	.type = CRD_ARRAY,
	.items = &nic_status_item,
	.deprecated = true},
    {.key = "conditions",
	.type = CRD_ARRAY,
	.items = &crd_condition_item,
	.decode = dec_conditions,
	.store = CRD_S_ARRAY,
	.offset = offsetof(struct vmnetcfg_status, conditions.items),
	.aux = offsetof(struct vmnetcfg_status, conditions.n),
	.keyed = true},
    {.key = NULL},
};

/* --- root (ctx: struct vmnetcfg) ------------------------------------------------------ */

static int
dec_metadata(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return crd_meta_decode(v, &((struct vmnetcfg *)ctx)->meta, err);
}

/*
 * The deprecated singular NIC list: when obj has networkConfig but no networkConfigs, a new
 * shallow copy with the list under networkConfigs (*renamed = true); else obj with a new
 * reference. NULL: no memory.
 */
static json_t *
nics_alias(const json_t *obj, bool *renamed)
{
	json_t *old = json_object_get(obj, VMNETCFG_FIELD_NICS_OLD), *cur, *copy;

	cur = json_object_get(obj, VMNETCFG_FIELD_NICS);
	*renamed = false;
	if (!json_is_object(obj) || !old || json_is_null(old) || (cur && !json_is_null(cur)))
		return json_incref((json_t *)obj);
	copy = json_copy((json_t *)obj);
	if (!copy || json_object_set(copy, VMNETCFG_FIELD_NICS, old) < 0 ||
	    json_object_del(copy, VMNETCFG_FIELD_NICS_OLD) < 0) {
		json_decref(copy);
		return NULL;
	}
	*renamed = true;
	return copy;
}

/* Replace the first `from` in s (of size bytes) by `to`. */
static void
replace_once(char *s, size_t size, const char *from, const char *to)
{
	char buf[512];
	char *p = strstr(s, from);
	size_t n;

	if (!p)
		return;

	snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(p - s), s, to, p + strlen(from));
	n = strlen(buf) < size ? strlen(buf) : size - 1;
	memcpy(s, buf, n);
	s[n] = '\0';
}

/* An error on a renamed list names the field as written: "<path>.networkConfig...". */
static void
error_unalias(struct crd_error *err, const char *path)
{
	char from[64], to[64];

	crd_path_key(from, sizeof(from), path, VMNETCFG_FIELD_NICS);
	crd_path_key(to, sizeof(to), path, VMNETCFG_FIELD_NICS_OLD);
	replace_once(err->path, sizeof(err->path), from, to);
	replace_once(err->message, sizeof(err->message), from, to);
}

/* Decode obj (spec or status) by fields, reading the deprecated singular list name too. */
static int
decode_aliased(const json_t *v, const char *path, const struct crd_field *fields, bool strict,
    void *ctx, struct crd_error *err)
{
	bool renamed;
	json_t *o = nics_alias(v, &renamed);
	int r;

	if (!o)
		return -ENOMEM;
	r = crd_decode_object(o, path, fields, strict, ctx, err);
	json_decref(o);
	if (r == -EINVAL && renamed && err)
		error_unalias(err, path);
	return r;
}

static int
spec_decode_strict(
    const json_t *v, const char *path, struct vmnetcfg_spec *s, struct crd_error *err)
{
	return decode_aliased(v, path, spec_children, true, s, err);
}

static int
dec_spec(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return spec_decode_strict(v, path, &((struct vmnetcfg *)ctx)->spec, err);
}

static int
dec_status(const json_t *v, const char *path, void *ctx, struct crd_error *err)
{
	return decode_aliased(
	    v, path, status_children, false, &((struct vmnetcfg *)ctx)->status, err);
}

const struct crd_field vmnetcfg_fields[] = {
    {.key = "apiVersion", .type = CRD_STRING, .store = CRD_S_CONST, .value = CRD_API_VERSION},
    {.key = "kind", .type = CRD_STRING, .store = CRD_S_CONST, .value = VMNETCFG_KIND},
    {.key = "metadata",
	.type = CRD_OBJECT,
	.decode = dec_metadata,
	.encode = crd_meta_encode_field,
	.offset = offsetof(struct vmnetcfg, meta)},
    {.key = "spec",
	.type = CRD_OBJECT,
	.strict = true,
	.children = spec_children,
	.decode = dec_spec,
	.store = CRD_S_STRUCT,
	.offset = offsetof(struct vmnetcfg, spec)},
    {.key = "status",
	.type = CRD_OBJECT,
	.children = status_children,
	.decode = dec_status,
	.store = CRD_S_STRUCT,
	.offset = offsetof(struct vmnetcfg, status)},
    {.key = NULL},
};

/* --- public --------------------------------------------------------------------------- */

int
vmnetcfg_spec_decode(const json_t *spec_json, struct vmnetcfg_spec *spec, struct crd_error *err)
{
	int r;

	memset(spec, 0, sizeof(*spec));
	r = spec_decode_strict(spec_json, "spec", spec, err);
	if (r < 0)
		vmnetcfg_spec_clear(spec);
	return r;
}

int
vmnetcfg_status_decode(
    const json_t *status_json, struct vmnetcfg_status *status, struct crd_error *err)
{
	int r;

	memset(status, 0, sizeof(*status));
	if (!status_json || json_is_null(status_json))
		return 0;
	r = decode_aliased(status_json, "status", status_children, false, status, err);
	if (r < 0)
		vmnetcfg_status_clear(status);
	return r;
}

int
vmnetcfg_decode(const json_t *obj, struct vmnetcfg **ret, struct crd_error *err)
{
	struct vmnetcfg *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	r = crd_decode_object(obj, "", vmnetcfg_fields, false, c, err);
	if (r == 0 && !json_is_object(json_object_get(obj, "spec")))
		r = crd_error_set(err, "spec", "required"); /* the codec's: upstream's schema
							       does not require it */
	if (r < 0) {
		vmnetcfg_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

json_t *
vmnetcfg_spec_encode(const struct vmnetcfg_spec *s)
{
	return crd_encode_object(spec_children, s);
}

json_t *
vmnetcfg_status_encode(const struct vmnetcfg_status *st)
{
	return crd_encode_object(status_children, st);
}

json_t *
vmnetcfg_encode(const struct vmnetcfg *c)
{
	return crd_encode_object(vmnetcfg_fields, c);
}

bool
vmnetcfg_status_equal(const struct vmnetcfg_status *a, const struct vmnetcfg_status *b)
{
	return crd_equal_object(status_children, a, b);
}

void
vmnetcfg_spec_clear(struct vmnetcfg_spec *s)
{
	free(s->vm_name);
	free(s->nics);
	memset(s, 0, sizeof(*s));
}

void
vmnetcfg_status_clear(struct vmnetcfg_status *st)
{
	free(st->nics);
	crd_conditions_clear(&st->conditions);
	memset(st, 0, sizeof(*st));
}

struct vmnetcfg *
vmnetcfg_free(struct vmnetcfg *c)
{
	if (!c)
		return NULL;
	crd_meta_clear(&c->meta);
	vmnetcfg_spec_clear(&c->spec);
	vmnetcfg_status_clear(&c->status);
	free(c);
	return NULL;
}
