/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/admit.c - the admission rules' entry point (admit_review: the names a review's
 * messages use, then the rules of its kind: admit-ippool.c, admit-vmnetcfg.c, admit-vm.c)
 * and the names of kinds and operations.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "controller/admit-internal.h"

/* --- names ------------------------------------------------------------------------------- */

enum admit_kind
admit_kind_of(const char *group, const char *resource)
{
	if (!group || !resource)
		return ADMIT_KIND_OTHER;
	if (strcmp(group, CRD_GROUP) == 0 && strcmp(resource, IPPOOL_PLURAL) == 0)
		return ADMIT_KIND_IPPOOL;
	if (strcmp(group, CRD_GROUP) == 0 && strcmp(resource, "virtualmachinenetworkconfigs") == 0)
		return ADMIT_KIND_VMNETCFG;
	if (strcmp(group, "kubevirt.io") == 0 && strcmp(resource, "virtualmachines") == 0)
		return ADMIT_KIND_VM;
	return ADMIT_KIND_OTHER;
}

static const char *const op_names[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};

int
admit_op_parse(const char *s, enum admit_op *ret)
{
	for (size_t i = 0; s && i < ELEMENTSOF(op_names); i++)
		if (strcmp(s, op_names[i]) == 0) {
			*ret = (enum admit_op)i;
			return 0;
		}
	return -EINVAL;
}

const char *
admit_op_name(enum admit_op op)
{
	return (unsigned)op < ELEMENTSOF(op_names) ? op_names[op] : "OTHER";
}

const char *
admit_kind_name(enum admit_kind kind)
{
	switch (kind) {
	case ADMIT_KIND_IPPOOL:
		return "IPPool";
	case ADMIT_KIND_VMNETCFG:
		return "VirtualMachineNetworkConfig";
	case ADMIT_KIND_VM:
		return "VirtualMachine";
	default:
		return "other";
	}
}

/* --- entry point ------------------------------------------------------------------------- */

static const char *
verb_of(enum admit_op op)
{
	switch (op) {
	case ADMIT_OP_CREATE:
		return "create";
	case ADMIT_OP_UPDATE:
		return "update";
	case ADMIT_OP_DELETE:
		return "delete";
	default:
		return "connect";
	}
}

/* The object's name: the request's, else metadata.name, else metadata.generateName. */
static const char *
name_of(const struct admit_request *rq)
{
	const json_t *o = rq->object ? rq->object : rq->old_object;
	const char *s = NULL;

	if (rq->name && rq->name[0])
		return rq->name;
	if (json_is_object(o)) {
		json_t *md = json_object_get(o, "metadata");

		s = json_string_value(json_object_get(md, "name"));
		if (!s || !s[0])
			s = json_string_value(json_object_get(md, "generateName"));
	}
	return s ? s : "";
}

static const char *
ns_of(const struct admit_request *rq)
{
	const json_t *o = rq->object ? rq->object : rq->old_object;
	const char *s = NULL;

	if (rq->ns && rq->ns[0])
		return rq->ns;
	if (json_is_object(o))
		s = json_string_value(json_object_get(json_object_get(o, "metadata"), "namespace"));
	return s ? s : "";
}

void
admit_review(const struct admit_view *view, const struct admit_opts *opts,
    const struct admit_request *rq, struct admit_result *res)
{
	static const struct admit_view no_view;
	static const struct admit_opts no_opts;
	struct admit_ctx c = {
	    .view = view ? view : &no_view,
	    .opts = opts ? opts : &no_opts,
	    .rq = rq,
	    .res = res,
	    .kind = admit_kind_name(rq->kind),
	    .verb = verb_of(rq->op),
	};

	memset(res, 0, sizeof(*res));
	res->allowed = true;
	c.ns = ns_of(rq);
	c.name = name_of(rq);
	if (rq->op == ADMIT_OP_CONNECT)
		return;
	switch (rq->kind) {
	case ADMIT_KIND_IPPOOL:
		admit_ippool(&c);
		break;
	case ADMIT_KIND_VMNETCFG:
		admit_vmnetcfg(&c);
		break;
	case ADMIT_KIND_VM:
		admit_vm(&c);
		break;
	default:
		break;
	}
	if (!res->allowed) {
		json_decref(res->patch);
		res->patch = NULL;
	}
}
