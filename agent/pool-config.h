/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_POOL_CONFIG_H
#define VMDHCP_AGENT_POOL_CONFIG_H

/*
 * pool-config.c: the served pool as both sources give it (source-file.c from YAML documents,
 * source-kube.c from the IPPool object, snapshot-decode.c from a warm-start snapshot): the
 * network, range, excludes, DHCP options and static bindings, and the IPPool spec -> options
 * translation they share.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <netinet/in.h>

#include "dhcp/dhcp.h"
#include "dhcp/dhcp6.h"

/* Room for the one-line errors the agent's fallible functions fill (`err`, `errlen`). */
#define AGENT_ERR_MAX 512

struct agent_binding {
	uint8_t mac[6];
	uint32_t ip;
	uint32_t hostname; /* offset into agent_config.names, or UINT32_MAX for none */
};

/* A static IPv6 binding: VMNetCfg NIC ipv6Address (local mode), status.ipv6.allocated. */
struct agent_binding6 {
	uint8_t mac[6];
	uint32_t hostname; /* offset into agent_config.names, or UINT32_MAX for none */
	struct in6_addr ip;
};

/*
 * The pool's IPv6 part (spec.ipv6Config), served by the DHCPv6 engine beside the IPv4 one:
 * enabled false when the pool has none (everything else zero then).
 */
struct agent_config6 {
	bool enabled;
	struct in6_addr cidr; /* network address */
	unsigned prefix;
	struct in6_addr pool_start, pool_end;
	struct in6_addr *exclude; /* pool.exclude[] */
	size_t n_exclude;
	struct dhcp6_options opts; /* server_ip, prefix, DNS, search, lifetimes, DUID */
	struct dhcp6_ra ra;	   /* router advertisements (ra.enabled false: none) */
	struct agent_binding6 *bindings;
	size_t n_bindings;
};

struct agent_config {
	char pool_ns[254];
	char pool_name[254];
	char network[256]; /* canonical "namespace/name" */
	bool paused;
	uint32_t cidr; /* network address */
	unsigned prefix;
	uint32_t pool_start, pool_end;
	uint32_t *exclude; /* pool.exclude[] */
	size_t n_exclude;
	struct dhcp_options opts;	/* server_ip, prefix, router, ... (hostnames resolved) */
	struct agent_binding *bindings; /* static bindings (VMNetCfg NICs with ipAddress) */
	size_t n_bindings;
	char *names; /* NUL-separated hostname pool */
	size_t names_len, names_cap;
	struct agent_config6 v6; /* spec.ipv6Config */
	int foreign_policy;	 /* spec.foreignServers.policy: IPPOOL_FOREIGN_* */
	uint32_t probe_interval; /* spec.foreignServers.probeInterval (0: the default) */
};

struct agent_config *agent_config_free(struct agent_config *c);
struct ippool_spec;
/*
 * An IPPool spec (borrowed) -> c's network, range, excludes and options, all but NTP
 * (c->opts.ntp is cleared; the caller resolves spec NTP names), and c->v6 from
 * spec.ipv6Config (its bindings untouched; the server DUID from c->pool_ns and c->pool_name,
 * set before). Returns 0, -ENOMEM, or -EINVAL with err naming the field.
 */
int agent_config_from_spec(
    struct agent_config *c, const struct ippool_spec *sp, char *err, size_t errlen);
/* Hostname of binding b (borrowed) or NULL. */
const char *agent_config_hostname(const struct agent_config *c, const struct agent_binding *b);
const char *agent_config_hostname6(const struct agent_config *c, const struct agent_binding6 *b);
/* c->v6's bindings sorted by MAC, one kept per MAC (the lowest address); returns how many went. */
size_t agent_config6_dedup_macs(struct agent_config *c, struct agent_binding6 *first_dropped);

#endif
