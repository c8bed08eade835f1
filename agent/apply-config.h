/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_APPLY_CONFIG_H
#define VMDHCP_AGENT_APPLY_CONFIG_H

/* apply-config.c: a configuration and the dynamic leases into the engine. */

#include <stddef.h>

struct agent_config;
struct agent_dynamic;
struct dhcp_server;
struct dhcp6_server;

/*
 * Pushes cfg (borrowed) into the engine: options, then a full binding resync of the static
 * bindings plus every dynamic lease not shadowed by a static one. Returns the number of
 * bindings removed by the resync, or negative errno with err filled.
 */
int agent_apply_config(struct dhcp_server *s, const struct agent_config *cfg,
    struct agent_dynamic *dyn, char *err, size_t errlen);

/*
 * The same for cfg's IPv6 part into the DHCPv6 engine: options, router advertisements and a
 * full resync of the IPv6 bindings; without an ipv6Config every binding goes and RAs stop
 * (the options stay: nothing is answered without bindings, and the sockets close). Returns the
 * number of bindings removed, or negative errno with err filled.
 */
int agent_apply_config6(
    struct dhcp6_server *s, const struct agent_config *cfg, char *err, size_t errlen);

#endif
