/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_LISTEN_H
#define VMDHCP_AGENT_LISTEN_H

/* listen.c: where the HTTP endpoint may listen (never on the served interface). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Checks --listen against the served interface ifname: an address of ifname, or server_ip
 * (the pool's serverIP, host order; 0 = not known yet), is refused (-EINVAL); so is a
 * wildcard in Kubernetes mode (kube). Returns 0 when fine, 1 when allowed with a warning
 * (a wildcard in local mode), negative errno when refused; msg gets the warning or the error.
 * *ret_ip is the listen address when it is IPv4 (host order), else 0, so the serverIP of a
 * later pool version can be checked against it.
 */
int agent_listen_check(const char *listen, const char *ifname, bool kube, uint32_t server_ip,
    uint32_t *ret_ip, char *msg, size_t msglen);
/*
 * The interface that holds the --listen address (a specific one, not a wildcard) into
 * ifname (IF_NAMESIZE bytes): 0, or -ENOENT when no interface has it (or it is a wildcard),
 * -EINVAL for an address httpd_new() does not take.
 */
int agent_listen_device(const char *listen, char *ifname, size_t len);

#endif
