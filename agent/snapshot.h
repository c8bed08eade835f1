/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_SNAPSHOT_H
#define VMDHCP_AGENT_SNAPSHOT_H

/*
 * Kubernetes mode's warm-start snapshot:
 *
 *   snapshot-format.c  the format (described there), its CRC-32C and the checks both
 *                      directions make
 *   snapshot-encode.c  agent_config + the engine's bindings -> bytes
 *   snapshot-decode.c  bytes -> agent_config, every field checked
 *   snapshot-file.c    the file: written atomically, read whole
 */

#include <stddef.h>
#include <stdint.h>

#include "agent/pool-config.h"
#include "dhcp/dhcp.h"
#include "dhcp/dhcp6.h"

/*
 * A restarted agent serves from its last snapshot until it has synced from the API server: the
 * pool's identity (pool_ns, pool_name), network, paused flag, range (cidr, prefix, pool_start,
 * pool_end, exclude) and options, and the engine's bindings with their hostnames, in one binary
 * file (format in snapshot-format.c: magic "VMDHSNAP", version, length, fields, 10 bytes a binding
 * without hostname, the ipv6Config part with 22 bytes an IPv6 binding, CRC-32C). Any mismatch
 * refuses the whole file. When to write is the caller's (warmstart.c): these functions only encode,
 * write, read and validate.
 */
#define AGENT_SNAPSHOT_VERSION 2 /* 2: the ipv6Config part; version 1 files still read */
#define AGENT_SNAPSHOT_RV_MAX 64 /* resourceVersion bytes, NUL included */
#define AGENT_SNAPSHOT_MAX_SIZE (256u << 20) /* larger files are refused unread */

struct agent_snapshot_info {
	uint64_t written_usec; /* CLOCK_REALTIME usec when it was written */
	/* the IPPool resourceVersion it was taken from ("" = unknown) */
	char resource_version[AGENT_SNAPSHOT_RV_MAX];
	size_t bindings;
	size_t bytes; /* file size */
};

/*
 * Writes cfg's pool identity, network, paused flag, range and options and the engine's bindings
 * of s (dhcp_server_foreach_binding, with hostnames; s NULL: none) to path atomically: PATH.tmp
 * (mode 0600), write, fsync, rename, fsync of the directory; on failure PATH.tmp is removed and
 * an earlier PATH left as it was. resource_version may be NULL (""; at most 63 bytes). info (may
 * be NULL) gets what was written. Negative errno with err filled ("PATH: cannot write: ...");
 * -EINVAL when cfg could not be read back (a string not NUL-terminated, a count over its
 * maximum, options the engine refuses, ...).
 */
int agent_snapshot_write(const char *path, const struct agent_config *cfg,
    const struct dhcp_server *s, const char *resource_version, struct agent_snapshot_info *info,
    char *err, size_t errlen);
/* The same, into a new buffer (*ret malloc'd, *ret_len bytes); for tests, fuzzers, benches. */
int agent_snapshot_encode(const struct agent_config *cfg, const struct dhcp_server *s,
    const char *resource_version, uint64_t written_usec, uint8_t **ret, size_t *ret_len);
/*
 * The same with the pool's IPv6 part: cfg->v6 (range, options, RA) and the DHCPv6 engine's
 * bindings of s6 (NULL: none; hostnames are not kept: an IPPool has none). A decoded config
 * has them in v6 (v6.bindings, each MAC and address once, ascending order).
 */
int agent_snapshot_write_dual(const char *path, const struct agent_config *cfg,
    const struct dhcp_server *s, const struct dhcp6_server *s6, const char *resource_version,
    struct agent_snapshot_info *info, char *err, size_t errlen);
int agent_snapshot_encode_dual(const struct agent_config *cfg, const struct dhcp_server *s,
    const struct dhcp6_server *s6, const char *resource_version, uint64_t written_usec,
    uint8_t **ret, size_t *ret_len);
/*
 * Reads path: a new agent_config (freed with agent_config_free) with the pool identity,
 * network, paused flag, range, options and the bindings (bindings[] + names), and info (may be
 * NULL). -ENOENT when there is none ("PATH: no snapshot"); -EINVAL when the magic, version,
 * length or checksum does not match or any field is out of range, err saying which ("PATH:
 * checksum mismatch (file 0x..., computed 0x...)": the caller logs it and ignores the file);
 * -ENOMEM; another errno when it cannot be read. ippool_ref ("ns/name", may be NULL): a
 * snapshot of another pool is -EINVAL ("PATH: snapshot of IPPool a/b, not c/d"). A decoded
 * config is one agent_apply_config() takes: options the engine accepts, bindable MACs, each
 * MAC and each address bound once.
 */
int agent_snapshot_load(const char *path, const char *ippool_ref, struct agent_config **ret,
    struct agent_snapshot_info *info, char *err, size_t errlen);
/* The same from memory (err without the "PATH: "); ret and info may be NULL (a check only). */
int agent_snapshot_decode(const uint8_t *buf, size_t len, const char *ippool_ref,
    struct agent_config **ret, struct agent_snapshot_info *info, char *err, size_t errlen);
/* CRC-32C (Castagnoli) of data, the snapshot's checksum. */
uint32_t agent_snapshot_crc32c(const void *data, size_t len);

#endif
