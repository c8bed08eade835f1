/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_SNAPSHOT_INTERNAL_H
#define VMDHCP_AGENT_SNAPSHOT_INTERNAL_H

/* What the snapshot's encoder, decoder and file code share (format in snapshot-format.c). */

#include <stddef.h>
#include <stdint.h>

#include "agent/snapshot.h"

#define SNAP_MAGIC "VMDHSNAP"
#define SNAP_MAGIC_LEN 8
#define SNAP_PREAMBLE 16	     /* magic, version, length */
#define SNAP_MIN (SNAP_PREAMBLE + 4) /* ... and the checksum */
#define SNAP_FIXED_MAX 8192	     /* upper bound of everything but excludes and bindings */
#define SNAP_RECORD 10		     /* MAC + IP */
#define SNAP_RECORD6 22		     /* MAC + IPv6 */
#define SNAP_VERSION_V4_ONLY 1	     /* the format before the ipv6Config part */
#define SNAP_V6_ENABLED UINT8_C(0x1) /* the ipv6Config part's flags byte */
#define SNAP_FLAG_PAUSED UINT32_C(0x1)

static inline uint32_t
le32_get(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void
le32_put(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Fills err (may be NULL) and returns -EINVAL. */
int snap_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/*
 * The rules a snapshot's configuration part obeys: checked on what is encoded (so a written
 * snapshot always reads back) and on what is decoded. 0, -ENOMEM, or -EINVAL with err filled.
 */
int snap_config_check(const struct agent_config *c, char *err, size_t errlen);
/* agent_snapshot_encode_dual, with err filled on -EINVAL. */
int snap_encode(const struct agent_config *cfg, const struct dhcp_server *s,
    const struct dhcp6_server *s6, const char *resource_version, uint64_t written_usec,
    uint8_t **ret, size_t *ret_len, char *err, size_t errlen);

#endif
