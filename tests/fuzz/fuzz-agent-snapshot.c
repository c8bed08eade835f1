/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: agent_snapshot_decode on the input as it is, then on a copy whose magic, version,
 * length and CRC-32C are set right, so the mutations reach the fields behind the checksum.
 * Whatever decodes must be taken by agent_apply_config() and agent_apply_config6() on fresh
 * engines and encode back to exactly the bytes decoded (the format is canonical); a version 1
 * file encodes as version 2, one byte longer (the ipv6Config part's flags), which decodes to
 * the same again. Anything else traps.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/apply-config.h"
#include "agent/pool-config.h"
#include "agent/snapshot.h"
#include "dhcp/dhcp6.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static void
check(const uint8_t *buf, size_t len)
{
	struct agent_snapshot_info info;
	struct agent_config *c = NULL;
	struct dhcp_server *s = NULL;
	struct dhcp6_server *s6 = NULL;
	char err[AGENT_ERR_MAX];
	bool v1;
	uint8_t *again = NULL;
	size_t again_len = 0;
	int r;

	err[0] = '\0';
	r = agent_snapshot_decode(buf, len, NULL, &c, &info, err, sizeof(err));
	if (r == -ENOMEM)
		return;
	if (r < 0) {
		if (r != -EINVAL || c != NULL || err[0] == '\0')
			__builtin_trap();
		return;
	}
	if (info.bytes != len || info.bindings != c->n_bindings)
		__builtin_trap();
	if (dhcp_server_new(&s) < 0 || dhcp6_server_new(&s6) < 0)
		goto out;
	r = agent_apply_config(s, c, NULL, err, sizeof(err));
	if (r == -ENOMEM)
		goto out;
	if (r != 0 || dhcp_server_n_bindings(s) != c->n_bindings)
		__builtin_trap();
	r = agent_apply_config6(s6, c, err, sizeof(err));
	if (r == -ENOMEM)
		goto out;
	if (r != 0 || dhcp6_server_n_bindings(s6) != c->v6.n_bindings)
		__builtin_trap();
	r = agent_snapshot_encode_dual(
	    c, s, s6, info.resource_version, info.written_usec, &again, &again_len);
	if (r == -ENOMEM)
		goto out;
	v1 = buf[8] == 1;
	if (r < 0 || (!v1 && (again_len != len || memcmp(again, buf, len) != 0)))
		__builtin_trap();
	if (v1 &&
	    (again_len != len + 1 || again[8] != 2 ||
		agent_snapshot_decode(again, again_len, NULL, NULL, NULL, err, sizeof(err)) != 0))
		__builtin_trap();
	/* and the pool it names is the one it is taken for */
	{
		char ref[2 * 256 + 2];

		strcpy(ref, c->pool_ns);
		strcat(ref, "/");
		strcat(ref, c->pool_name);
		if (agent_snapshot_decode(buf, len, ref, NULL, NULL, err, sizeof(err)) != 0)
			__builtin_trap();
	}
out:
	free(again);
	dhcp_server_free(s);
	dhcp6_server_free(s6);
	agent_config_free(c);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *fixed;

	check(data, size);
	if (size < 20 || size > (1u << 20))
		return 0;
	fixed = malloc(size);
	if (fixed == NULL)
		return 0;
	memcpy(fixed, data, size);
	memcpy(fixed, "VMDHSNAP", 8);
	/* both versions read: a version 1 input keeps its version, anything else gets 2 */
	le32(fixed + 8, data[8] == 1 ? 1 : AGENT_SNAPSHOT_VERSION);
	le32(fixed + 12, (uint32_t)size);
	le32(fixed + size - 4, agent_snapshot_crc32c(fixed, size - 4));
	check(fixed, size);
	free(fixed);
	return 0;
}
