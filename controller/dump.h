/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_DUMP_H
#define VMDHCP_CONTROLLER_DUMP_H

/* --enable-cache-dump-api (dump.c). */

#include <stdint.h>

struct ctrl;
struct httpd;
struct netpool;

/*
 * Serve the Go project's debug endpoints /ipams/{network} and /caches/{network} on h
 * (borrowed; freed after the ctrl). 0 or negative errno.
 */
int ctrl_add_dump_api(struct ctrl *c, struct httpd *h);

/*
 * --enable-cache-dump-api's bodies (dump.c), as upstream's /ipams/{network} and
 * /caches/{network} (pkg/server/handler.go): Go's json.Marshal of a map[string]string,
 * compact, keys in byte order. ipam: {"<ip>":"true"|"false"} for each address of the range
 * that can be handed out (neither excluded nor reserved), "true" when bound; -E2BIG when the
 * range has more than CTRL_DUMP_IPAM_MAX addresses. cache: {"<mac>":"<ip>"} for each binding.
 * 0 and a new string in *ret (free()), or -ENOMEM.
 */
#define CTRL_DUMP_IPAM_MAX (UINT32_C(1) << 20)
int ctrl_dump_ipam_json(const struct netpool *p, char **ret);
int ctrl_dump_cache_json(const struct netpool *p, char **ret);

#endif
