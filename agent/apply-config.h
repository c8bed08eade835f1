/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_APPLY_CONFIG_H
#define VMDHCP_AGENT_APPLY_CONFIG_H

/* apply-config.c: a configuration and the dynamic leases into the engine. */

#include <stddef.h>

struct agent_config;
struct agent_dynamic;
struct dhcp_server;

/*
 * Pushes cfg (borrowed) into the engine: options, then a full binding resync of the static
 * bindings plus every dynamic lease not shadowed by a static one. Returns the number of
 * bindings removed by the resync, or negative errno with err filled.
 */
int agent_apply_config(struct dhcp_server *s, const struct agent_config *cfg,
    struct agent_dynamic *dyn, char *err, size_t errlen);

#endif
