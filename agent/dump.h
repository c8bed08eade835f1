/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_DUMP_H
#define VMDHCP_AGENT_DUMP_H

/* dump.c: --enable-cache-dump-api's GET /leases. */

#include "dhcp/dhcp.h"

struct agent;

/*
 * The body of --enable-cache-dump-api's GET /leases, as the Go project's (upstream
 * pkg/server/handler.go, pkg/dhcp/dhcp.go): {"<mac>":"<lease as JSON text>"} for every binding
 * of s, each with the options o (NULL: no leases yet, "{}"). 0 and a new string in *ret
 * (free()), or -ENOMEM.
 */
int agent_dump_leases_json(const struct dhcp_server *s, const struct dhcp_options *o, char **ret);
/* Adds GET /leases to a->httpd. 0 or negative errno. */
int agent_add_dump_api(struct agent *a);

#endif
