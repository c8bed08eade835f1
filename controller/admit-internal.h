/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_ADMIT_INTERNAL_H
#define VMDHCP_CONTROLLER_ADMIT_INTERNAL_H

/*
 * What the admission rules (admit.c, admit-ippool.c, admit-vmnetcfg.c, admit-vm.c) share:
 * the state of one review, refusals and warnings in upstream's message form (admit-result.c),
 * Go-compatible address parsing (admit-goparse.c), and the desired-IP checks a VMNetCfg NIC
 * and a VM's static-ip annotation both go through (admit-vmnetcfg.c).
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "controller/admit.h"
#include "controller/foreign-kinds.h"
#include "crds/ippool.h"
#include "lib/util.h"

#define ADMIT_REASON_MAX 768
#define ADMIT_ROUTE_SERVER_MAX 64

/* Label keys on a NetworkAttachmentDefinition naming its IPPool (upstream pkg/util/common.go). */
#define ADMIT_LABEL_POOL_NS "network.harvesterhci.io/ippool-namespace"
#define ADMIT_LABEL_POOL_NAME "network.harvesterhci.io/ippool-name"

/* One review: the request, where the answer goes, and the names its messages use. */
struct admit_ctx {
	const struct admit_view *view;
	const struct admit_opts *opts;
	const struct admit_request *rq;
	struct admit_result *res;
	const char *kind; /* "IPPool", "VirtualMachineNetworkConfig", "VirtualMachine" */
	const char *verb; /* "create", "update", "delete" */
	const char *ns;
	const char *name;
};

/*
 * Refuse with "cannot <verb> <kind> <ns>/<name> because <reason>" (upstream's
 * pkg/webhook/common.go form) and code (403 policy, 400 undecodable, 500 internal).
 * Returns -1 so that callers can `return admit_refuse(...)`.
 */
int admit_refuse(struct admit_ctx *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Add a warning (allowed, but said); extra ones beyond ADMIT_WARNINGS_MAX are dropped. */
void admit_warn(struct admit_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Refuse with 500 for an allocation failure. */
int admit_nomem(struct admit_ctx *c);

/*
 * Go's netip.ParseAddr for an IPv4 literal: 0 and *ret; -EINVAL with Go's message in err
 * ("ParseAddr(\"x\"): IPv4 field has value >255"); -EAFNOSUPPORT when Go would read it as
 * IPv6 (a ':' first: "::ffff:10.1.0.2"), with "\"x\" is not an IPv4 address" in err.
 */
int admit_go_parse_addr(const char *s, uint32_t *ret, char *err, size_t err_len);
/*
 * Go's net.ParseCIDR for an IPv4 CIDR: 0, the network (host bits cleared) and prefix;
 * -EINVAL "invalid CIDR address: x"; -EAFNOSUPPORT "cidr x is not an IPv4 CIDR".
 */
int admit_go_parse_cidr(const char *s, uint32_t *net, unsigned *prefix, char *err, size_t err_len);
/*
 * An address field of a spec, labelled as upstream labels it ("server ip", "ip address"):
 * Go's message for malformed input, "<label> <s> is not an IPv4 address" for an IPv6 form.
 */
int admit_parse_field(const char *label, const char *s, uint32_t *ret, char *reason, size_t len);
/* strconv.Quote of s into out (truncated to fit). */
void admit_go_quote(const char *s, char *out, size_t len);

/*
 * A string member of obj (NULL obj: absent). 0 and *ret (NULL when absent or JSON null,
 * as Go's decoder leaves the field empty); -EINVAL when present with another type or a NUL.
 */
int admit_json_str(const json_t *obj, const char *key, const char **ret);

/* upstream's kv.RSplit(networkName, "/") with namespace "default" when empty. */
void admit_split_network(
    const char *network, char ns[KIND_NS_MAX], char name[KIND_NAME_MAX], char canon[KIND_REF_MAX]);

/* "ns/name" of the VMNetCfg whose status binds addr to mac on network, or "" (out). */
void admit_find_holder(struct admit_ctx *c, const char *network, uint32_t addr,
    const uint8_t mac[MAC_LEN], char *out, size_t len);

/*
 * The cached IPPool on network (canonical "ns/name") other than the one keyed except (NULL:
 * none excepted): the pool, and its key in key; NULL when there is none.
 */
const struct ippool *admit_pool_on_network(
    struct admit_ctx *c, const char *network, const char *except, char key[KIND_REF_MAX]);

/*
 * upstream's getIPPoolFromNetworkConfig: the NAD of network (as written) must exist and carry
 * both ippool labels, the IPPool they name must exist. 0 and *pool, canon (the network's
 * "ns/name") and pool_key ("ns/name" of the pool); -1 with reason (upstream's messages).
 */
int admit_pool_of_network(struct admit_ctx *c, const char *network, char canon[KIND_REF_MAX],
    const struct ippool **pool, char pool_key[KIND_REF_MAX], char *reason, size_t len);

/* Desired addresses seen on one object, per network (upstream's seenDesiredIPs). */
struct admit_seen {
	struct admit_seen_item {
		char network[KIND_REF_MAX];
		uint32_t addr;
	} * items;
	size_t n, cap;
};
/* 1 when (network, addr) was seen, else adds it and returns 0; -ENOMEM. */
int admit_seen_add(struct admit_seen *s, const char *network, uint32_t addr);
void admit_seen_clear(struct admit_seen *s);

/*
 * PR #157's validateDesiredIPAddress: ip (as written) for a NIC with mac (canonical, or NULL
 * when unknown: the "another MAC" check is skipped) on network (canonical) served by pool.
 * 0 (allowed; may warn), -1 with reason, -ENOMEM.
 */
int admit_check_desired_ip(struct admit_ctx *c, const char *ip, const char *mac,
    const char *network, const char *pool_key, const struct ippool *pool, struct admit_seen *seen,
    char *reason, size_t len);

/* --- IPv6 (admit-ipv6.c) --- */

/* Desired IPv6 addresses seen on one object, per network. */
struct admit_seen6 {
	struct admit_seen6_item {
		char network[KIND_REF_MAX];
		struct in6_addr addr;
	} * items;
	size_t n, cap;
};
/* 1 when (network, a) was seen, else adds it and returns 0; -ENOMEM. */
int admit_seen6_add(struct admit_seen6 *s, const char *network, const struct in6_addr *a);
void admit_seen6_clear(struct admit_seen6 *s);

/* IPPool CREATE, mutate: "add" operations onto ops for an unset ipv6Config.serverIP and
 * pool.start/end. 0, or -1 when refused (c->res filled). */
int admit_ippool6_mutate(struct admit_ctx *c, const json_t *obj, json_t *ops);
/* The CRD's CEL rules on ipv6Config.cidr and serverIP: 0 or -1 (refused). */
int admit_ippool6_immutable(struct admit_ctx *c, const json_t *obj, const json_t *old);
/* IPPool CREATE/UPDATE (old NULL on CREATE) on network (canonical): ipv6Config's checks and
 * warnings. 0 (allowed) or -1 (refused). */
int admit_ippool6_validate(
    struct admit_ctx *c, const json_t *obj, const json_t *old, const char *network);
/*
 * A NIC's ipv6Address ip (as written) for mac (canonical, or NULL: the "another MAC" check is
 * skipped) on network (canonical) served by pool: 0 (allowed; may warn), -1 with reason,
 * -ENOMEM.
 */
int admit_check_desired_ip6(struct admit_ctx *c, const char *ip, const char *mac,
    const char *network, const char *pool_key, const struct ippool *pool, struct admit_seen6 *seen,
    char *reason, size_t len);

/* --- the NAD's route annotation (admit-nad-route.c) --- */

struct admit_nad_route {
	bool auto_mode;			     /* "mode": "auto" */
	char server[ADMIT_ROUTE_SERVER_MAX]; /* "serverIPAddr" as written ("" when absent) */
};
/* Parses a route annotation value: 0, or -EINVAL when it is not a JSON object. */
int admit_nad_route_parse(const char *value, struct admit_nad_route *ret);
/*
 * IPPool CREATE/UPDATE on the NAD ns/name: a warning when its route annotation says the
 * network gets its addresses from a DHCP server already on it (mode auto), unless that
 * server is the pool's own serverIP (server: host order, NULL when unset).
 */
void admit_warn_nad_route(
    struct admit_ctx *c, const char *ns, const char *name, const uint32_t *server);

/* The rules per kind. Each returns after filling c->res (allowed unless refused). */
void admit_ippool(struct admit_ctx *c);
void admit_vmnetcfg(struct admit_ctx *c);
void admit_vm(struct admit_ctx *c);

#endif
