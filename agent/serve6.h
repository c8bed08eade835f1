/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_SERVE6_H
#define VMDHCP_AGENT_SERVE6_H

/*
 * serve6.c: the running agent's DHCPv6 engine (struct agent's `dhcp6`): made with the agent,
 * its callbacks (the decision log, DECLINE and RELEASE said), the pool's IPv6 part pushed in
 * with each configuration. Called by serve.c only.
 */

struct agent;
struct agent_config;

/* The engine and its callbacks. 0 or -ENOMEM. */
int agent_serve6_new(struct agent *a);
/*
 * cfg's IPv6 part into the engine (agent_apply_config6); what: "loaded", "reloaded" for the
 * log line. Negative errno logged (IPv4 goes on: the caller does not fail on it).
 */
int agent_serve6_apply(struct agent *a, const struct agent_config *cfg, const char *what);
void agent_serve6_free(struct agent *a);

#endif
