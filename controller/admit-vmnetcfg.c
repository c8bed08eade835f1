/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/admit-vmnetcfg.c - VirtualMachineNetworkConfig admission, and the desired-IP
 * checks a VM's static-ip annotation shares with it.
 *
 * Upstream's: harvester/vm-dhcp-controller pkg/webhook/vmnetcfg/validator.go as of PR #157
 * (commit a60f7a7): on CREATE every NIC's NetworkAttachmentDefinition exists and carries the
 * network.harvesterhci.io/ippool-namespace and ippool-name labels, the IPPool they name
 * exists, and each desired ipAddress is an IPv4 address, not twice on one network, inside
 * the pool's subnet and range, not its network/broadcast address, not EXCLUDED/RESERVED in
 * the pool's status and not allocated to another MAC. On UPDATE (unless being deleted) only
 * the NICs whose ipAddress is new or changed are checked (the unchanged ones still count for
 * duplicates).
 *
 * Ours: spec.vmName required and not empty; vmName immutable (the CRD's CEL rule, same
 * message, for API servers that do not evaluate it); the spec must decode with the codec
 * (crds/vmnetcfg.c: MACs, network names, limits), which the controller would otherwise only
 * report; "allocated to mac" names the VMNetCfg holding the address when the cache knows it.
 * Warning: a desired address in a paused IPPool is not served until the pool resumes.
 * A NIC's ipv6Address (ours; upstream has no IPv6) is checked alongside its ipAddress, by
 * admit-ipv6.c's admit_check_desired_ip6, when new or changed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/admit-internal.h"
#include "crds/vmnetcfg.h"
#include "lib/ip6.h"

/* --- shared with admit-vm.c -------------------------------------------------------------- */

int
admit_seen_add(struct admit_seen *s, const char *network, uint32_t addr)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->items[i].addr == addr && strcmp(s->items[i].network, network) == 0)
			return 1;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		void *p = realloc(s->items, cap * sizeof(*s->items));

		if (!p)
			return -ENOMEM;
		s->items = p;
		s->cap = cap;
	}
	snprintf(s->items[s->n].network, sizeof(s->items[s->n].network), "%s", network);
	s->items[s->n++].addr = addr;
	return 0;
}

void
admit_seen_clear(struct admit_seen *s)
{
	free(s->items);
	memset(s, 0, sizeof(*s));
}

struct holder_ctx {
	const char *network;
	uint32_t addr;
	const uint8_t *mac;
	char *out;
	size_t len;
};

static int
holder_visit(void *ctx, const char *key, const struct vmnetcfg *cfg)
{
	struct holder_ctx *h = ctx;
	uint8_t mac[MAC_LEN];

	for (size_t i = 0; cfg && i < cfg->status.n_nics; i++) {
		const struct vmnetcfg_nic_status *st = &cfg->status.nics[i];

		if (st->allocated_ip != h->addr || strcmp(st->network_name, h->network) != 0 ||
		    mac_parse(st->mac, mac) < 0 || memcmp(mac, h->mac, MAC_LEN) != 0)
			continue;
		snprintf(h->out, h->len, "%s", key);
		return 1;
	}
	return 0;
}

void
admit_find_holder(struct admit_ctx *c, const char *network, uint32_t addr,
    const uint8_t mac[MAC_LEN], char *out, size_t len)
{
	struct holder_ctx h = {network, addr, mac, out, len};

	out[0] = '\0';
	if (c->view->each_cfg_of_network)
		c->view->each_cfg_of_network(c->view->userdata, network, holder_visit, &h);
}

struct pool_on_network {
	const char *except;
	const struct ippool *pool;
	char *key;
};

static int
pool_on_network_visit(void *ctx, const char *key, const struct ippool *pool)
{
	struct pool_on_network *f = ctx;

	if (pool == NULL || (f->except != NULL && strcmp(key, f->except) == 0))
		return 0;
	f->pool = pool;
	snprintf(f->key, KIND_REF_MAX, "%s", key);
	return 1;
}

const struct ippool *
admit_pool_on_network(
    struct admit_ctx *c, const char *network, const char *except, char key[KIND_REF_MAX])
{
	struct pool_on_network f = {.except = except, .key = key};

	key[0] = '\0';
	if (c->view->each_pool_of_network)
		c->view->each_pool_of_network(
		    c->view->userdata, network, pool_on_network_visit, &f);
	return f.pool;
}

int
admit_pool_of_network(struct admit_ctx *c, const char *network, char canon[KIND_REF_MAX],
    const struct ippool **pool, char pool_key[KIND_REF_MAX], char *reason, size_t len)
{
	const struct admit_view *v = c->view;
	char ns[KIND_NS_MAX], name[KIND_NAME_MAX];
	const char *pns = NULL, *pname = NULL;

	admit_split_network(network, ns, name, canon);
	if (!v->nad || v->nad(v->userdata, ns, name, &pns, &pname) < 0) {
		snprintf(reason, len,
		    "network-attachment-definitions.k8s.cni.cncf.io \"%s\" not found", name);
		return -1;
	}
	/*
	 * The NAD's labels are written by the controller once it has reconciled the pool: a
	 * VMNetCfg applied in the same `kubectl apply` as its IPPool would be refused for want
	 * of them. An IPPool on the network, already in the cache, is what the labels would
	 * name (ours; upstream's cases without labels have no such pool and are refused).
	 */
	if ((!pns || !pname) && (*pool = admit_pool_on_network(c, canon, NULL, pool_key)) != NULL)
		return 0;
	if (!pns) {
		snprintf(reason, len, "%s label not found", ADMIT_LABEL_POOL_NS);
		return -1;
	}
	if (!pname) {
		snprintf(reason, len, "%s label not found", ADMIT_LABEL_POOL_NAME);
		return -1;
	}
	*pool = v->pool ? v->pool(v->userdata, pns, pname) : NULL;
	if (!*pool) {
		snprintf(reason, len, "ippools.network.harvesterhci.io \"%s\" not found", pname);
		return -1;
	}
	snprintf(pool_key, KIND_REF_MAX, "%s/%s", pns, pname);
	return 0;
}

/* The status entry of a (EXCLUDED, RESERVED or a MAC) against the NIC's mac. */
static int
check_allocated(struct admit_ctx *c, const char *network, const struct ippool *pool, uint32_t a,
    const char *mac, char *reason, size_t len)
{
	const struct ippool_alloc *al = ippool_status_find(&pool->status, a);
	char s[IPV4_STRLEN], m[MAC_STRLEN], holder[KIND_REF_MAX];
	uint8_t want[MAC_LEN];

	ipv4_format(a, s);
	if (!al)
		return 0;
	if (al->kind != IPPOOL_ALLOC_MAC) {
		snprintf(reason, len, "ip address %s is not allocatable", s);
		return -1;
	}
	if (!mac || mac_parse(mac, want) < 0 || memcmp(want, al->mac, MAC_LEN) == 0)
		return 0;
	mac_format(al->mac, m);
	admit_find_holder(c, network, a, al->mac, holder, sizeof(holder));
	if (holder[0])
		snprintf(reason, len,
		    "ip address %s is already allocated to mac %s (VirtualMachineNetworkConfig %s)",
		    s, m, holder);
	else
		snprintf(reason, len, "ip address %s is already allocated to mac %s", s, m);
	return -1;
}

int
admit_check_desired_ip(struct admit_ctx *c, const char *ip, const char *mac, const char *network,
    const char *pool_key, const struct ippool *pool, struct admit_seen *seen, char *reason,
    size_t len)
{
	const struct ippool_spec *sp = &pool->spec;
	uint32_t a, mask = ipv4_prefix_mask(sp->prefix), net = sp->cidr_addr & mask;
	char s[IPV4_STRLEN], x[IPV4_STRLEN], y[IPV4_STRLEN];
	int r;

	if (admit_parse_field("ip address", ip, &a, reason, len) < 0)
		return -1;
	ipv4_format(a, s);
	r = admit_seen_add(seen, network, a);
	if (r < 0)
		return r;
	if (r == 1) {
		snprintf(reason, len, "duplicate desired ip %s on network %s", s, network);
		return -1;
	}
	if ((a & mask) != net) {
		ipv4_format(sp->cidr_addr, x);
		snprintf(reason, len, "ip address %s is not within subnet %s/%u", s, x, sp->prefix);
		return -1;
	}
	if (a < sp->start || a > sp->end) {
		ipv4_format(sp->start, x);
		ipv4_format(sp->end, y);
		snprintf(reason, len, "ip address %s is not within pool range %s-%s", s, x, y);
		return -1;
	}
	if (a == net || a == (net | ~mask)) {
		snprintf(reason, len, "ip address %s is the same as %s ip", s,
		    a == net ? "network" : "broadcast");
		return -1;
	}
	if (check_allocated(c, network, pool, a, mac, reason, len) < 0)
		return -1;
	if (sp->paused)
		admit_warn(c, "IPPool %s is paused: ip address %s is not served until it resumes",
		    pool_key, s);
	return 0;
}

/* --- VirtualMachineNetworkConfig --------------------------------------------------------- */

/* One spec.networkConfigs[] entry as written. */
struct raw_nic {
	const char *network; /* "" when absent */
	const char *mac;     /* "" when absent */
	const char *ip;	     /* NULL when absent (upstream's nil IPAddress) */
	const char *ip6;     /* ipv6Address, NULL when absent (ours) */
};

static const json_t *
nics_of(const json_t *obj)
{
	const json_t *spec = json_object_get(obj, "spec");
	const json_t *v = json_object_get(spec, VMNETCFG_FIELD_NICS);

	return v ? v : json_object_get(spec, VMNETCFG_FIELD_NICS_OLD);
}

/* Entry i of a NIC list; -1 when it is not shaped as one. */
static int
raw_nic_get(const json_t *nics, size_t i, struct raw_nic *n)
{
	const json_t *e = json_array_get(nics, i);

	if (!json_is_object(e) || admit_json_str(e, "networkName", &n->network) < 0 ||
	    admit_json_str(e, "macAddress", &n->mac) < 0 ||
	    admit_json_str(e, "ipAddress", &n->ip) < 0 ||
	    admit_json_str(e, "ipv6Address", &n->ip6) < 0)
		return -1;
	if (!n->network)
		n->network = "";
	if (!n->mac)
		n->mac = "";
	return 0;
}

/* The same, refused (400: the object does not decode) when it is not one. */
static int
raw_nic_at(struct admit_ctx *c, const json_t *nics, size_t i, struct raw_nic *n)
{
	if (raw_nic_get(nics, i, n) < 0)
		return admit_refuse(c, 400, "spec.networkConfigs[%zu] is not a network config", i);
	return 0;
}

static bool
same_nic_key(const struct raw_nic *a, const struct raw_nic *b)
{
	char x[KIND_NS_MAX], y[KIND_NAME_MAX], ca[KIND_REF_MAX], cb[KIND_REF_MAX];
	char ma[MAC_STRLEN], mb[MAC_STRLEN];

	admit_split_network(a->network, x, y, ca);
	admit_split_network(b->network, x, y, cb);
	if (strcmp(ca, cb) != 0)
		return false;
	if (mac_canonicalize(a->mac, ma) == 0 && mac_canonicalize(b->mac, mb) == 0)
		return strcmp(ma, mb) == 0;
	return strcmp(a->mac, b->mac) == 0;
}

/* upstream's desiredIPAddressChanged: no old NIC with this key, or another ipAddress. */
static bool
ip_changed(const json_t *old_nics, const struct raw_nic *n)
{
	struct raw_nic o;

	for (size_t i = 0; i < json_array_size(old_nics); i++) {
		/* an old entry that is not a NIC is not this one */
		if (raw_nic_get(old_nics, i, &o) < 0 || !same_nic_key(&o, n))
			continue;
		return !o.ip || strcmp(o.ip, n->ip) != 0;
	}
	return true;
}

/* The same for ipv6Address (ours): another address, whatever its textual form. */
static bool
ip6_changed(const json_t *old_nics, const struct raw_nic *n)
{
	struct in6_addr a, b;
	struct raw_nic o;

	for (size_t i = 0; i < json_array_size(old_nics); i++) {
		if (raw_nic_get(old_nics, i, &o) < 0 || !same_nic_key(&o, n))
			continue;
		if (!o.ip6)
			return true;
		if (ipv6_parse(o.ip6, &a) == 0 && ipv6_parse(n->ip6, &b) == 0)
			return !ipv6_equal(&a, &b);
		return strcmp(o.ip6, n->ip6) != 0;
	}
	return true;
}

/*
 * Written by the VM controller for a KubeVirt VirtualMachine (its controller ownerReference)?
 * Upstream's controller writes such a VMNetCfg with every Multus NIC of the VM, and upstream's
 * webhook then refuses it when one NIC's network has no pool: the VM gets no addresses at all.
 * Ours serves each NIC on its own (a NIC without a pool stays Pending, each NIC independent
 * of the others: controller/nicbind.h), so for these the missing pool is a warning. A VMNetCfg
 * written by hand is decided as upstream decides it.
 */
static bool
vm_owned(const json_t *obj)
{
	const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
	const json_t *r;
	size_t i;

	json_array_foreach(refs, i, r)
	{
		const char *kind = json_string_value(json_object_get(r, "kind"));
		const char *api = json_string_value(json_object_get(r, "apiVersion"));

		if (json_is_true(json_object_get(r, "controller")) && kind != NULL &&
		    strcmp(kind, "VirtualMachine") == 0 && api != NULL &&
		    strncmp(api, "kubevirt.io/", strlen("kubevirt.io/")) == 0)
			return true;
	}
	return false;
}

/* Desired addresses seen on the object: IPv4 (upstream's) and IPv6 (ours). */
struct seen {
	struct admit_seen v4;
	struct admit_seen6 v6;
};

/* The NIC's pool, and its desired addresses when check4 / check6. */
static int
check_nic(struct admit_ctx *c, const struct raw_nic *n, bool check4, bool check6, struct seen *seen)
{
	char canon[KIND_REF_MAX], pool_key[KIND_REF_MAX], reason[ADMIT_REASON_MAX], m[MAC_STRLEN];
	const char *mac = mac_canonicalize(n->mac, m) == 0 ? m : n->mac;
	const struct ippool *pool;
	int r = 0;

	if (admit_pool_of_network(c, n->network, canon, &pool, pool_key, reason, sizeof(reason)) <
	    0) {
		if (!vm_owned(c->rq->object))
			return admit_refuse(c, 403, "%s", reason);
		admit_warn(c, "NIC %s on network %s stays Pending until an IPPool serves it: %s",
		    n->mac, canon, reason);
		return 0;
	}
	if (check4 && n->ip)
		r = admit_check_desired_ip(
		    c, n->ip, mac, canon, pool_key, pool, &seen->v4, reason, sizeof(reason));
	if (r == 0 && check6 && n->ip6)
		r = admit_check_desired_ip6(
		    c, n->ip6, mac, canon, pool_key, pool, &seen->v6, reason, sizeof(reason));
	if (r == -ENOMEM)
		return admit_nomem(c);
	return r < 0 ? admit_refuse(c, 403, "%s", reason) : 0;
}

/* CREATE (or an UPDATE without the old object): every NIC. */
static int
validate_all(struct admit_ctx *c, const json_t *nics, struct seen *seen)
{
	struct raw_nic n;

	for (size_t i = 0; i < json_array_size(nics); i++) {
		if (raw_nic_at(c, nics, i, &n) < 0 || check_nic(c, &n, true, true, seen) < 0)
			return -1;
	}
	return 0;
}

/* The unchanged desired addresses of n still count for duplicates. */
static int
seen_unchanged(const struct raw_nic *n, bool c4, bool c6, struct seen *seen)
{
	char x[KIND_NS_MAX], y[KIND_NAME_MAX], canon[KIND_REF_MAX];
	struct in6_addr a6;
	uint32_t a;

	admit_split_network(n->network, x, y, canon);
	if (n->ip && !c4 && admit_go_parse_addr(n->ip, &a, NULL, 0) == 0 &&
	    admit_seen_add(&seen->v4, canon, a) < 0)
		return -ENOMEM;
	if (n->ip6 && !c6 && ipv6_parse(n->ip6, &a6) == 0 &&
	    admit_seen6_add(&seen->v6, canon, &a6) < 0)
		return -ENOMEM;
	return 0;
}

/* UPDATE: the NICs whose desired address (IPv4 or IPv6) is new or changed. */
static int
validate_changed(struct admit_ctx *c, const json_t *nics, const json_t *old_nics, struct seen *seen)
{
	size_t n_nics = json_array_size(nics);
	bool *changed = calloc(n_nics ? 2 * n_nics : 1, sizeof(bool)); /* [2i]: v4, [2i+1]: v6 */
	struct raw_nic n;
	int r = 0;

	if (!changed)
		return admit_nomem(c);
	for (size_t i = 0; i < n_nics && r == 0; i++) {
		if ((r = raw_nic_at(c, nics, i, &n)) < 0)
			continue;
		changed[2 * i] = n.ip && ip_changed(old_nics, &n);
		changed[2 * i + 1] = n.ip6 && ip6_changed(old_nics, &n);
		if (seen_unchanged(&n, changed[2 * i], changed[2 * i + 1], seen) < 0)
			r = admit_nomem(c);
	}
	for (size_t i = 0; i < n_nics && r == 0; i++)
		if ((changed[2 * i] || changed[2 * i + 1]) && (r = raw_nic_at(c, nics, i, &n)) == 0)
			r = check_nic(c, &n, changed[2 * i], changed[2 * i + 1], seen);
	free(changed);
	return r;
}

/* The NIC (network as written, canonical in canon) is in the old spec. */
static bool
nic_in(const json_t *old_nics, const struct raw_nic *n)
{
	struct raw_nic o;

	for (size_t i = 0; i < json_array_size(old_nics); i++)
		if (raw_nic_get(old_nics, i, &o) == 0 && same_nic_key(&o, n))
			return true;
	return false;
}

/* pool's status lists mac (canonical text) bound to an address. */
static bool
pool_binds_mac(const struct ippool *pool, const char *mac)
{
	uint8_t m[MAC_LEN];

	if (mac_parse(mac, m) < 0)
		return false;
	for (size_t i = 0; i < pool->status.n_allocated; i++)
		if (pool->status.allocated[i].kind == IPPOOL_ALLOC_MAC &&
		    memcmp(pool->status.allocated[i].mac, m, MAC_LEN) == 0)
			return true;
	return false;
}

/*
 * Ours: a NIC new to the object, on a pool whose status has no room left for another binding
 * (its condition StatusFull True: the controller's --ippool-object-budget is reached, or the
 * API server refused the status as too large), would never be served: refused. A VMNetCfg the
 * VM controller writes for a VirtualMachine is allowed with a warning (its NIC stays Pending,
 * reason PoolStatusFull, until the pool has room).
 */
static int
check_status_room(struct admit_ctx *c, const json_t *nics, const json_t *old_nics)
{
	char x[KIND_NS_MAX], y[KIND_NAME_MAX], canon[KIND_REF_MAX], key[KIND_REF_MAX];
	const struct crd_condition *full;
	const struct ippool *pool;
	struct raw_nic n;

	if (c->opts->ippool_budget == 0)
		return 0;
	for (size_t i = 0; i < json_array_size(nics); i++) {
		if (raw_nic_get(nics, i, &n) < 0 || (old_nics != NULL && nic_in(old_nics, &n)))
			continue;
		admit_split_network(n.network, x, y, canon);
		pool = admit_pool_on_network(c, canon, NULL, key);
		if (pool == NULL)
			continue;
		full = crd_conditions_get(&pool->status.conditions, IPPOOL_COND_STATUS_FULL);
		if (full == NULL || full->status != CRD_COND_TRUE || pool_binds_mac(pool, n.mac))
			continue;
		if (vm_owned(c->rq->object)) {
			admit_warn(c,
			    "NIC %s stays Pending: IPPool %s has no room left in its status "
			    "(StatusFull)",
			    n.mac, key);
			continue;
		}
		return admit_refuse(c, 403,
		    "IPPool %s has no room left in its status for another binding (condition "
		    "StatusFull: %s): NIC %s on network %s would never be served",
		    key, full->message != NULL ? full->message : full->reason, n.mac, canon);
	}
	return 0;
}

/* Ours: vmName present, not empty, immutable; the codec's cross-checks. */
static int
validate_ours(struct admit_ctx *c, const json_t *obj, const json_t *old)
{
	const json_t *spec = json_object_get(obj, "spec");
	const json_t *old_spec = old ? json_object_get(old, "spec") : NULL;
	const char *vm = NULL;
	struct vmnetcfg_spec s;
	struct crd_error err;
	int r;

	if (admit_json_str(spec, "vmName", &vm) < 0)
		return admit_refuse(c, 400, "spec.vmName is not a string");
	if (old_spec && json_equal((json_t *)spec, (json_t *)old_spec))
		return 0; /* written before these rules: its metadata may still change */
	if (!vm)
		return admit_refuse(c, 403, "spec.vmName is required");
	if (!vm[0])
		return admit_refuse(c, 403, "spec.vmName must not be empty");
	if (!json_is_object(spec))
		return admit_refuse(c, 400, "spec is required");
	r = vmnetcfg_spec_decode(spec, &s, &err);
	if (r == -ENOMEM)
		return admit_nomem(c);
	if (r < 0)
		return admit_refuse(c, 400, "%s", err.message);
	vmnetcfg_spec_clear(&s);
	return 0;
}

void
admit_vmnetcfg(struct admit_ctx *c)
{
	const struct admit_request *rq = c->rq;
	const json_t *obj = rq->object, *old = rq->op == ADMIT_OP_UPDATE ? rq->old_object : NULL;
	const json_t *nics, *spec;
	const char *vm, *old_vm;
	struct seen seen = {{0}, {0}};
	int r;

	if (rq->phase != ADMIT_VALIDATE || (rq->op != ADMIT_OP_CREATE && rq->op != ADMIT_OP_UPDATE))
		return;
	if (!json_is_object(obj)) {
		admit_refuse(c, 400, "the object is not a JSON object");
		return;
	}
	if (rq->op == ADMIT_OP_UPDATE &&
	    json_is_string(json_object_get(json_object_get(obj, "metadata"), "deletionTimestamp")))
		return;
	spec = json_object_get(obj, "spec");
	nics = nics_of(obj);
	if ((spec && !json_is_object(spec)) || (nics && !json_is_array(nics))) {
		admit_refuse(c, 400, "spec.networkConfigs is not a list");
		return;
	}
	/* The CEL rule first: the API server evaluates it before calling webhooks. */
	if (c->opts->immutable && old &&
	    admit_json_str(json_object_get(old, "spec"), "vmName", &old_vm) == 0 &&
	    admit_json_str(spec, "vmName", &vm) == 0 && vm && old_vm && strcmp(vm, old_vm) != 0) {
		admit_refuse(c, 403, "vmName is immutable");
		return;
	}
	if (json_is_object(old))
		r = validate_changed(c, nics, nics_of(old), &seen);
	else
		r = validate_all(c, nics, &seen);
	admit_seen_clear(&seen.v4);
	admit_seen6_clear(&seen.v6);
	if (r == 0 && check_status_room(c, nics, json_is_object(old) ? nics_of(old) : NULL) == 0)
		validate_ours(c, obj, old);
}
