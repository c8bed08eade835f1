/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/admit-ippool.c - IPPool admission (the object read as upstream reads it:
 * admit-ippool-load.c).
 *
 * Upstream's (harvester/vm-dhcp-controller, read at main c3042d6):
 *  - pkg/webhook/ippool/mutator.go, CREATE: ensureServerIP (an unset serverIP becomes the
 *    first address after the network address that is neither the router nor excluded, never
 *    the broadcast address; else "fail to assign ip for dhcp server") and ensurePoolRange
 *    (an unset pool.start is network+1, an unset pool.end broadcast-1; "invalid pool range"
 *    when start > end).
 *  - pkg/webhook/ippool/validator.go, CREATE and UPDATE (an UPDATE of an object being deleted
 *    is not checked): the addresses parse (pkg/util/network.go LoadPool: Go's messages), the
 *    NetworkAttachmentDefinition of spec.networkName exists, the CIDR does not overlap the
 *    service CIDR, pool.start/end and serverIP/router inside the subnet and not its network
 *    or broadcast address, serverIP not the router and, on UPDATE, not an address the status
 *    holds for a MAC or EXCLUDED (RESERVED is the server's own mark). DELETE: refused while a
 *    VirtualMachineNetworkConfig uses the pool.
 *
 * Where ours differ from upstream's, on purpose:
 *  - The mutator refuses a malformed address instead of replacing it (upstream overwrites an
 *    unparsable serverIP/start/end with a default: the admin's typo would silently become
 *    another address); its message is the one upstream's validator gives for it.
 *  - Strict IPv4: "010.1.0.2" is refused (Go's message) and so is every IPv6 form Go would
 *    accept ("::ffff:10.1.0.2": "<field> ip ... is not an IPv4 address").
 *
 * Ours, after upstream's, in the same message form:
 *  - the CRD's CEL transition rules when opts.immutable (same messages: networkName,
 *    serverIP, cidr, router immutable when present in the old and the new object; "router
 *    cannot be removed once set"), checked first as the API server evaluates them first;
 *  - serverIP in pool.exclude; a second IPPool on the same network; on UPDATE a router newly
 *    set on an address the status binds to a MAC, and a change of pool.start/end/exclude that
 *    leaves out an address the status binds to a MAC (naming the VMNetCfg holding it);
 *  - the codec (crds/ippool.c ippool_spec_decode) must accept the spec (code 400, its
 *    message), so what the controller would only report as InvalidSpec is refused;
 *  - spec.ipv6Config (ours entirely, upstream has no IPv6): admit-ipv6.c, mutated and
 *    checked after the ipv4Config rules.
 *  An UPDATE that leaves the spec as it was (metadata, finalizers) is not checked, neither
 *  by upstream's rules nor by ours (upstream checks every UPDATE: a finalizer could not be
 *  added or removed once the NAD is gone; its PR #157 skips what did not change for VMNetCfgs,
 *  and so do we here): a pool stored before these rules can still be changed and deleted.
 *
 * Warnings (allowed, but said), on CREATE and on a spec change:
 *  - the pool range holds no allocatable address (serverIP, router and excludes take it all:
 *    upstream's mutator test "/30 ippool with router" is such a pool);
 *  - leaseTime under 60 s (clients renew every half of it), or not above 0 (served as one
 *    year, as upstream's agent does: pkg/dhcp/dhcp.go);
 *  - a CIDR written with host bits set (net.ParseCIDR ignores them);
 *  - networkBoot (ours; its fields are refused by the codec with the field's path when
 *    malformed): a TFTP boot file (bootFiles other than the uefiHttp URL, or an ipxeScript
 *    that is not a URL) with neither nextServer nor tftpServerName, so PXE clients would not
 *    know where to fetch it;
 *  - a DELETE by the garbage collector or the namespace controller while VMNetCfgs still
 *    use the pool (allowed: refusing would wedge the namespace's or owner's deletion).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/admit-internal.h"
#include "controller/admit-ippool-load.h"
#include "controller/netpool.h"

#define S(x) ((x) ? (x) : "")

/* --- mutate (CREATE) --------------------------------------------------------------------- */

static bool
masked(const struct pinfo *pi, uint32_t a)
{
	return (pi->has_router && a == pi->router) || admit_pinfo_excluded(pi, a);
}

/* ensureServerIP: 0 and *ret, or -1 when no address is left. */
static int
auto_server_ip(const struct pinfo *pi, uint32_t *ret)
{
	for (uint32_t a = pi->net + 1; a != 0 && (a & pi->mask) == pi->net; a++) {
		if (masked(pi, a))
			continue;
		if (a == pi->bcast)
			break;
		*ret = a;
		return 0;
	}
	return -1;
}

static int
patch_add(json_t *ops, const char *path, json_t *value)
{
	json_t *op = json_pack("{s:s, s:s, s:o}", "op", "add", "path", path, "value", value);

	return op && json_array_append_new(ops, op) == 0 ? 0 : -ENOMEM;
}

static int
patch_addr(json_t *ops, const char *path, uint32_t a)
{
	char s[IPV4_STRLEN];

	ipv4_format(a, s);
	return patch_add(ops, path, json_string(s));
}

/* "add" ops: they set a member whether or not it exists; parents made when missing. */
static int
mutate_patch(const struct raw_pool *rp, const struct pinfo *pi, uint32_t start, uint32_t end,
    const uint32_t *server, json_t *ops)
{
	char s[IPV4_STRLEN], e[IPV4_STRLEN];
	int r = 0;

	if (!pi->has_start || !pi->has_end) {
		if (rp->pool) {
			if (!pi->has_start)
				r = patch_addr(ops, "/spec/ipv4Config/pool/start", start);
			if (r == 0 && !pi->has_end)
				r = patch_addr(ops, "/spec/ipv4Config/pool/end", end);
		} else {
			ipv4_format(start, s);
			ipv4_format(end, e);
			r = patch_add(ops, "/spec/ipv4Config/pool",
			    json_pack("{s:s, s:s}", "start", s, "end", e));
		}
	}
	if (r == 0 && server)
		r = patch_addr(ops, "/spec/ipv4Config/serverIP", *server);
	return r;
}

static void
mutate_create(struct admit_ctx *c)
{
	char reason[ADMIT_REASON_MAX];
	struct raw_pool rp;
	struct pinfo pi = {0};
	uint32_t server, start, end;
	json_t *ops = NULL;
	int r;

	if (admit_raw_pool_load(c, c->rq->object, &rp) < 0)
		return;
	r = admit_pinfo_load(&rp, &pi, reason, sizeof(reason));
	if (r == -ENOMEM)
		goto nomem;
	if (r < 0)
		goto refuse;
	if (!pi.has_server && auto_server_ip(&pi, &server) < 0) {
		snprintf(reason, sizeof(reason), "fail to assign ip for dhcp server");
		goto refuse;
	}
	start = pi.has_start ? pi.start : pi.net + 1;
	end = pi.has_end ? pi.end : pi.bcast - 1;
	if (start > end) {
		snprintf(reason, sizeof(reason), "invalid pool range");
		goto refuse;
	}
	if (!(ops = json_array()) ||
	    mutate_patch(&rp, &pi, start, end, pi.has_server ? NULL : &server, ops) < 0)
		goto nomem;
	if (admit_ippool6_mutate(c, c->rq->object, ops) < 0) { /* refused: c->res says why */
		json_decref(ops);
		admit_pinfo_clear(&pi);
		return;
	}
	if (json_array_size(ops) > 0)
		c->res->patch = json_incref(ops);
	json_decref(ops);
	admit_pinfo_clear(&pi);
	return;
nomem:
	json_decref(ops);
	admit_pinfo_clear(&pi);
	admit_nomem(c);
	return;
refuse:
	admit_pinfo_clear(&pi);
	admit_refuse(c, 403, "%s", reason);
}

/* --- validate: upstream's checks ----------------------------------------------------------- */

static int
check_nad(struct admit_ctx *c, const struct raw_pool *rp)
{
	char ns[KIND_NS_MAX], name[KIND_NAME_MAX], canon[KIND_REF_MAX];
	const char *pns, *pname;

	admit_split_network(S(rp->network), ns, name, canon);
	if (c->view->nad && c->view->nad(c->view->userdata, ns, name, &pns, &pname) == 0)
		return 0;
	return admit_refuse(
	    c, 403, "network-attachment-definitions.k8s.cni.cncf.io \"%s\" not found", name);
}

static int
check_cidr(struct admit_ctx *c, const struct raw_pool *rp, const struct pinfo *pi)
{
	const struct admit_opts *o = c->opts;
	uint32_t smask, snet, common;
	char s[IPV4_STRLEN];

	/* prefix 0 means "not configured": a service CIDR of 0.0.0.0/0 is not one */
	if (o->service_prefix == 0 || o->service_prefix > 32)
		return 0;
	smask = ipv4_prefix_mask(o->service_prefix);
	snet = o->service_net & smask;
	common = smask & pi->mask; /* the shorter prefix's mask */
	if ((snet & common) != (pi->net & common))
		return 0;
	ipv4_format(snet, s);
	return admit_refuse(c, 403, "cidr %s overlaps cluster service cidr %s/%u", S(rp->cidr), s,
	    o->service_prefix);
}

/* The three checks every address of checkPoolRange/checkServerIP/checkRouter starts with. */
static int
check_in_subnet(struct admit_ctx *c, const struct pinfo *pi, const char *label, uint32_t a)
{
	char s[IPV4_STRLEN];

	ipv4_format(a, s);
	if ((a & pi->mask) != pi->net)
		return admit_refuse(c, 403, "%s ip %s is not within subnet", label, s);
	if (a == pi->net)
		return admit_refuse(c, 403, "%s ip %s is the same as network ip", label, s);
	if (a == pi->bcast)
		return admit_refuse(c, 403, "%s ip %s is the same as broadcast ip", label, s);
	return 0;
}

static int
check_upstream(struct admit_ctx *c, const struct raw_pool *rp, const struct pinfo *pi,
    const struct st_list *st)
{
	char s[IPV4_STRLEN];

	if (check_nad(c, rp) < 0 || check_cidr(c, rp, pi) < 0)
		return -1;
	if ((pi->has_start && check_in_subnet(c, pi, "start", pi->start) < 0) ||
	    (pi->has_end && check_in_subnet(c, pi, "end", pi->end) < 0))
		return -1;
	if (pi->has_server) {
		const struct st_entry *e = st ? admit_st_find(st, pi->server) : NULL;

		ipv4_format(pi->server, s);
		if (check_in_subnet(c, pi, "server", pi->server) < 0)
			return -1;
		if (pi->has_router && pi->server == pi->router)
			return admit_refuse(c, 403, "server ip %s is the same as router ip", s);
		if (e && e->kind != IPPOOL_ALLOC_RESERVED)
			return admit_refuse(c, 403, "server ip %s is already occupied", s);
	}
	if (pi->has_router && check_in_subnet(c, pi, "router", pi->router) < 0)
		return -1;
	return 0;
}

/* --- validate: ours ------------------------------------------------------------------------- */

/* The CRD's CEL rules (crds/ippools.yaml), evaluated as the API server does: a transition
 * rule only where the field is in the old and the new object. */
static int
check_immutable(struct admit_ctx *c, const json_t *obj, const json_t *old)
{
	static const char *const keys[] = {"serverIP", "cidr", "router"};
	const json_t *spec = json_object_get(obj, "spec"), *ospec = json_object_get(old, "spec");
	const json_t *v4 = json_object_get(spec, "ipv4Config");
	const json_t *ov4 = json_object_get(ospec, "ipv4Config");
	const json_t *a, *b;

	a = json_object_get(spec, "networkName");
	b = json_object_get(ospec, "networkName");
	if (a && b && !json_is_null(a) && !json_is_null(b) && !json_equal(a, b))
		return admit_refuse(c, 403, "networkName is immutable");
	if (!json_is_object(v4) || !json_is_object(ov4))
		return admit_ippool6_immutable(c, obj, old);
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		a = json_object_get(v4, keys[i]);
		b = json_object_get(ov4, keys[i]);
		if (a && b && !json_is_null(a) && !json_is_null(b) && !json_equal(a, b))
			return admit_refuse(c, 403, "%s is immutable", keys[i]);
	}
	a = json_object_get(v4, "router");
	b = json_object_get(ov4, "router");
	if (b && !json_is_null(b) && (!a || json_is_null(a)))
		return admit_refuse(c, 403, "router cannot be removed once set");
	return admit_ippool6_immutable(c, obj, old);
}

static int
check_second_pool(struct admit_ctx *c, const struct raw_pool *rp, const struct raw_pool *old)
{
	char ns[KIND_NS_MAX], name[KIND_NAME_MAX], canon[KIND_REF_MAX], ocanon[KIND_REF_MAX];
	char self[KIND_REF_MAX], other[KIND_REF_MAX];

	admit_split_network(S(rp->network), ns, name, canon);
	if (old) {
		admit_split_network(S(old->network), ns, name, ocanon);
		if (strcmp(canon, ocanon) == 0)
			return 0; /* only a new or changed network is checked */
	}
	snprintf(self, sizeof(self), "%s/%s", c->ns, c->name);
	if (admit_pool_on_network(c, canon, self, other) == NULL)
		return 0;
	return admit_refuse(c, 403, "network %s already has IPPool %s", canon, other);
}

static void
bound_to(struct admit_ctx *c, const char *network, const struct st_entry *e, char *out, size_t len)
{
	char holder[KIND_REF_MAX] = "";

	if (e->mac_ok)
		admit_find_holder(c, network, e->addr, e->mac, holder, sizeof(holder));
	if (holder[0])
		snprintf(out, len, "mac %s (VirtualMachineNetworkConfig %s)", e->raw, holder);
	else
		snprintf(out, len, "mac %s", e->raw);
}

/* In the range start..end (defaults as the mutator's) and not excluded. */
static bool
in_range(const struct pinfo *pi, uint32_t a)
{
	uint32_t start = pi->has_start ? pi->start : pi->net + 1;
	uint32_t end = pi->has_end ? pi->end : pi->bcast - 1;

	return a >= start && a <= end && !admit_pinfo_excluded(pi, a);
}

/* UPDATE: a range/exclude change must not leave out an address bound to a MAC. */
static int
check_strand(struct admit_ctx *c, const char *network, const struct pinfo *pi,
    const struct pinfo *old, const struct st_list *st)
{
	char s[IPV4_STRLEN], x[IPV4_STRLEN], y[IPV4_STRLEN], who[ADMIT_REASON_MAX / 2];

	for (size_t i = 0; i < st->n; i++) {
		const struct st_entry *e = &st->e[i];

		if (e->kind != IPPOOL_ALLOC_MAC || in_range(pi, e->addr) ||
		    (old && !in_range(old, e->addr)))
			continue;
		ipv4_format(e->addr, s);
		bound_to(c, network, e, who, sizeof(who));
		if (admit_pinfo_excluded(pi, e->addr))
			return admit_refuse(c, 403,
			    "address %s bound to %s would be stranded: pool.exclude covers it", s,
			    who);
		ipv4_format(pi->has_start ? pi->start : pi->net + 1, x);
		ipv4_format(pi->has_end ? pi->end : pi->bcast - 1, y);
		return admit_refuse(c, 403,
		    "address %s bound to %s would be stranded: outside the new pool range %s-%s", s,
		    who, x, y);
	}
	return 0;
}

static int
check_ours(struct admit_ctx *c, const struct raw_pool *rp, const struct pinfo *pi,
    const struct raw_pool *orp, const struct pinfo *opi, const struct st_list *st)
{
	char ns[KIND_NS_MAX], name[KIND_NAME_MAX], network[KIND_REF_MAX], s[IPV4_STRLEN];
	char who[ADMIT_REASON_MAX / 2];
	const struct st_entry *e;

	admit_split_network(S(rp->network), ns, name, network);
	ipv4_format(pi->server, s);
	if (pi->has_server && admit_pinfo_excluded(pi, pi->server))
		return admit_refuse(c, 403, "server ip %s is in pool.exclude", s);
	if (check_second_pool(c, rp, orp) < 0)
		return -1;
	if (pi->has_router && (!opi || !opi->has_router || opi->router != pi->router) &&
	    (e = admit_st_find(st, pi->router)) && e->kind == IPPOOL_ALLOC_MAC) {
		ipv4_format(pi->router, s);
		bound_to(c, network, e, who, sizeof(who));
		return admit_refuse(c, 403, "router ip %s is already allocated to %s", s, who);
	}
	if (orp && check_strand(c, network, pi, opi, st) < 0)
		return -1;
	return 0;
}

static int
check_codec(struct admit_ctx *c, const struct raw_pool *rp)
{
	struct ippool_spec spec;
	struct crd_error err;
	int r;

	if (!rp->spec)
		return admit_refuse(c, 400, "spec: required");
	r = ippool_spec_decode(rp->spec, &spec, &err);
	if (r == -ENOMEM)
		return admit_nomem(c);
	if (r < 0)
		return admit_refuse(c, 400, "%s", err.message);
	ippool_spec_clear(&spec);
	return 0;
}

/*
 * The object's size once the controller writes its status (controller/ippool-status.c):
 * the object as sent, less the status.ipv4.allocated it carries, plus that map as the
 * controller renders it for this spec (EXCLUDED and RESERVED marks) with the bindings st
 * lists. 0 and *ret, -EINVAL (a spec the codec refuses: said elsewhere), -ENOMEM.
 */
static int
object_bytes(
    const json_t *obj, const struct st_list *st, uint64_t budget, size_t *ret, size_t *marks)
{
	const json_t *m =
	    json_object_get(json_object_get(json_object_get(obj, "status"), "ipv4"), "allocated");
	struct ippool_spec spec;
	struct netpool *np = NULL;
	struct crd_error err;
	size_t n;
	int r;

	r = ippool_spec_decode(json_object_get(obj, "spec"), &spec, &err);
	if (r < 0)
		return r == -ENOMEM ? r : -EINVAL;
	r = netpool_new(&spec, &np);
	ippool_spec_clear(&spec);
	if (r < 0)
		return r == -ENOMEM ? r : -EINVAL;
	n = json_dumpb(obj, NULL, 0, JSON_COMPACT);
	if (m != NULL)
		n -= json_dumpb(m, NULL, 0, JSON_COMPACT);
	n += sizeof("\"allocated\":,") - 1;
	/* as the controller's netpool_set_budget decides for the map's budget */
	netpool_set_budget(np, budget > n ? (size_t)(budget - n) : 2);
	*marks = netpool_status_bytes(np);
	netpool_free(np);
	n += *marks;
	for (size_t i = 0; st != NULL && i < st->n; i++)
		if (st->e[i].kind == IPPOOL_ALLOC_MAC)
			n += netpool_entry_bytes(st->e[i].addr, IPPOOL_ALLOC_MAC);
	*ret = n;
	return 0;
}

/*
 * Ours: the pool must be able to record its status within the controller's object budget
 * (--ippool-object-budget, under etcd's request limit): a long exclude list is written twice
 * (spec.ipv4Config.pool.exclude, and EXCLUDED in status.ipv4.allocated, as upstream's
 * pkg/controller/ippool/controller.go does). An update that does not grow the estimate
 * passes (a pool already over it can still shrink).
 */
static int
check_size(struct admit_ctx *c, const struct st_list *st)
{
	const json_t *old = c->rq->op == ADMIT_OP_UPDATE ? c->rq->old_object : NULL;
	size_t n, marks, old_n, old_marks;
	int r;

	if (c->opts->ippool_budget == 0)
		return 0;
	r = object_bytes(c->rq->object, st, c->opts->ippool_budget, &n, &marks);
	if (r == -ENOMEM)
		return admit_nomem(c);
	if (r < 0 || n <= c->opts->ippool_budget)
		return 0;
	if (json_is_object(old) &&
	    object_bytes(old, st, c->opts->ippool_budget, &old_n, &old_marks) == 0 && n <= old_n)
		return 0;
	return admit_refuse(c, 403,
	    "the IPPool object would take about %zu bytes once its status is written (%zu of "
	    "them for status.ipv4.allocated's marks%s), more than the %llu bytes an IPPool may "
	    "take (the controller's --ippool-object-budget, under etcd's request limit): list "
	    "fewer exclude addresses (narrow pool.start and pool.end instead)",
	    n, marks, st != NULL && st->n > 0 ? ", with its current bindings" : "",
	    (unsigned long long)c->opts->ippool_budget);
}

static void
warn_pool(struct admit_ctx *c, const struct raw_pool *rp, const struct pinfo *pi)
{
	uint32_t start = pi->has_start ? pi->start : pi->net + 1;
	uint32_t end = pi->has_end ? pi->end : pi->bcast - 1;
	uint64_t n = start <= end ? (uint64_t)end - start + 1 : 0;
	const json_t *lt = json_object_get(rp->v4, "leaseTime");
	char x[IPV4_STRLEN], y[IPV4_STRLEN];

	for (size_t i = 0; i < pi->n_excl; i++)
		n -= pi->excl[i] >= start && pi->excl[i] <= end;
	if (pi->has_server && pi->server >= start && pi->server <= end &&
	    !admit_pinfo_excluded(pi, pi->server))
		n--;
	if (pi->has_router && pi->router >= start && pi->router <= end &&
	    !admit_pinfo_excluded(pi, pi->router) && !(pi->has_server && pi->router == pi->server))
		n--;
	ipv4_format(start, x);
	ipv4_format(end, y);
	if (n == 0)
		admit_warn(c,
		    "pool range %s-%s holds no allocatable address (serverIP, router and "
		    "pool.exclude take all of it)",
		    x, y);
	if (json_is_integer(lt) && json_integer_value(lt) > 0 && json_integer_value(lt) < 60)
		admit_warn(c, "leaseTime %lld s is under 60 s: clients renew every %lld s",
		    (long long)json_integer_value(lt), (long long)json_integer_value(lt) / 2);
	else if (json_is_integer(lt) && json_integer_value(lt) <= 0)
		admit_warn(c, "leaseTime %lld is served as %d s (one year)",
		    (long long)json_integer_value(lt), IPPOOL_LEASE_TIME_DEFAULT);
	ipv4_format(pi->net, x);
	if (rp->cidr && (strncmp(rp->cidr, x, strlen(x)) != 0 || rp->cidr[strlen(x)] != '/'))
		admit_warn(
		    c, "cidr %s has host bits set: the network is %s/%u", rp->cidr, x, pi->prefix);
}

/* spec.ipv4Config.networkBoot: a TFTP file with no server to fetch it from. */
static void
warn_boot(struct admit_ctx *c, const struct raw_pool *rp)
{
	static const char *const tftp_files[] = {"bios", "uefi", "uefiArm64"};
	const json_t *nb = json_object_get(rp->v4, "networkBoot");
	const json_t *files = json_object_get(nb, "bootFiles");
	const char *script = json_string_value(json_object_get(nb, "ipxeScript"));
	const char *which = NULL;

	if (!json_is_object(nb) || json_object_get(nb, "nextServer") != NULL ||
	    json_object_get(nb, "tftpServerName") != NULL)
		return;
	for (size_t i = 0; i < ELEMENTSOF(tftp_files) && which == NULL; i++)
		if (json_is_string(json_object_get(files, tftp_files[i])))
			which = tftp_files[i];
	if (which == NULL && script != NULL && strncmp(script, "http://", 7) != 0 &&
	    strncmp(script, "https://", 8) != 0)
		which = "ipxeScript";
	if (which != NULL)
		admit_warn(c,
		    "networkBoot: %s%s is a TFTP file but neither nextServer nor tftpServerName "
		    "is set: PXE clients will not know which server to fetch it from",
		    strcmp(which, "ipxeScript") == 0 ? "" : "bootFiles.", which);
}

/* --- validate: CREATE, UPDATE --------------------------------------------------------------- */

static void
validate_write(struct admit_ctx *c)
{
	const json_t *obj = c->rq->object;
	const json_t *old = c->rq->op == ADMIT_OP_UPDATE ? c->rq->old_object : NULL;
	char reason[ADMIT_REASON_MAX];
	char ns[KIND_NS_MAX], name[KIND_NAME_MAX], network[KIND_REF_MAX];
	struct raw_pool rp, orp;
	struct pinfo pi = {0}, opi = {0};
	struct st_list st = {0};
	bool have_old = false;
	int r;

	memset(&orp, 0, sizeof(orp));
	if (!json_is_object(obj)) {
		admit_refuse(c, 400, "the object is not a JSON object");
		return;
	}
	if (c->rq->op == ADMIT_OP_UPDATE &&
	    json_is_string(json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp")))
		return;
	/* PR #157's reasoning for VMNetCfgs (what did not change needs no lookup), for pools:
	 * a metadata-only update (finalizers, labels) passes even when the NAD is gone */
	if (json_is_object(old) && json_object_get(obj, "spec") &&
	    json_equal(json_object_get(obj, "spec"), json_object_get(old, "spec")))
		return;
	if (admit_raw_pool_load(c, obj, &rp) < 0)
		return;
	if (old && c->opts->immutable && check_immutable(c, obj, old) < 0)
		return;
	if ((r = admit_pinfo_load(&rp, &pi, reason, sizeof(reason))) < 0) {
		if (r == -ENOMEM)
			admit_nomem(c);
		else
			admit_refuse(c, 403, "%s", reason);
		goto out;
	}
	if (admit_st_load(obj, &st) < 0) {
		admit_nomem(c);
		goto out;
	}
	if (check_upstream(c, &rp, &pi, c->rq->op == ADMIT_OP_UPDATE ? &st : NULL) < 0)
		goto out;
	/* the old object as the reference for "changed" (its own errors do not matter) */
	if (old && json_is_object(old)) {
		struct admit_result scratch = {0};
		struct admit_ctx oc = *c;

		oc.res = &scratch;
		have_old = admit_raw_pool_load(&oc, old, &orp) == 0 &&
			   admit_pinfo_load(&orp, &opi, reason, sizeof(reason)) == 0;
	}
	admit_split_network(S(rp.network), ns, name, network);
	if (check_ours(c, &rp, &pi, old ? &orp : NULL, have_old ? &opi : NULL, &st) < 0 ||
	    admit_ippool6_validate(c, obj, json_is_object(old) ? old : NULL, network) < 0 ||
	    check_codec(c, &rp) < 0 || check_size(c, &st) < 0)
		goto out;
	admit_warn_nad_route(c, ns, name, pi.has_server ? &pi.server : NULL);
	warn_pool(c, &rp, &pi);
	warn_boot(c, &rp);
out:
	free(st.e);
	admit_pinfo_clear(&pi);
	admit_pinfo_clear(&opi);
}

/* --- validate: DELETE ----------------------------------------------------------------------- */

#define DELETE_NAMES_MAX 10

struct users {
	char names[ADMIT_REASON_MAX / 2];
	size_t n;
};

static int
users_visit(void *ctx, const char *key, const struct vmnetcfg *cfg)
{
	struct users *u = ctx;
	size_t l = strlen(u->names);

	(void)cfg;
	if (u->n < DELETE_NAMES_MAX)
		snprintf(u->names + l, sizeof(u->names) - l, "%s%s", u->n ? ", " : "", key);
	u->n++;
	return 0;
}

static bool
is_cleanup_user(const char *user)
{
	return user &&
	       (strcmp(user, "system:serviceaccount:kube-system:generic-garbage-collector") == 0 ||
		   strcmp(user, "system:serviceaccount:kube-system:namespace-controller") == 0);
}

/*
 * Upstream (pkg/util/vmnetcfg.go WhoUseIPPool) looks the VMNetCfgs up by the pool's own
 * "ns/name", which in Harvester is also its NetworkAttachmentDefinition's; ours by the pool's
 * spec.networkName (canonical), which is what VMNetCfg NICs name whatever the pool is called.
 */
static void
validate_delete(struct admit_ctx *c)
{
	const json_t *old = c->rq->old_object;
	const struct ippool *cached;
	const char *network = NULL;
	char ns[KIND_NS_MAX], name[KIND_NAME_MAX], canon[KIND_REF_MAX];
	struct users u = {"", 0};

	if (admit_json_str(json_object_get(old, "spec"), "networkName", &network) == 0 && network)
		admit_split_network(network, ns, name, canon);
	else if (c->view->pool && (cached = c->view->pool(c->view->userdata, c->ns, c->name)))
		snprintf(canon, sizeof(canon), "%s", cached->spec.network_name);
	else
		snprintf(canon, sizeof(canon), "%s/%s", c->ns, c->name);
	if (c->view->each_cfg_of_network)
		c->view->each_cfg_of_network(c->view->userdata, canon, users_visit, &u);
	if (u.n == 0)
		return;
	if (u.n > DELETE_NAMES_MAX) {
		size_t l = strlen(u.names);

		snprintf(u.names + l, sizeof(u.names) - l, " and %zu more", u.n - DELETE_NAMES_MAX);
	}
	if (is_cleanup_user(c->rq->user)) {
		admit_warn(c,
		    "IPPool %s/%s is deleted by %s while still used by "
		    "VirtualMachineNetworkConfig(s) %s",
		    c->ns, c->name, c->rq->user, u.names);
		return;
	}
	admit_refuse(c, 403,
	    "it's still used by VirtualMachineNetworkConfig(s) %s, which must be removed at first",
	    u.names);
}

void
admit_ippool(struct admit_ctx *c)
{
	const struct admit_request *rq = c->rq;

	if (rq->phase == ADMIT_MUTATE) {
		if (rq->op == ADMIT_OP_CREATE)
			mutate_create(c);
		return;
	}
	if (rq->op == ADMIT_OP_DELETE)
		validate_delete(c);
	else if (rq->op == ADMIT_OP_CREATE || rq->op == ADMIT_OP_UPDATE)
		validate_write(c);
}
