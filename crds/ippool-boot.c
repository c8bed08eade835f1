/* SPDX-License-Identifier: Apache-2.0 */
/*
 * crds/ippool-boot.c - IPPool spec.ipv4Config.networkBoot: next server, TFTP server name and
 * boot files by client architecture, for PXE, UEFI (HTTP) and iPXE clients. Additive
 * (harvester/vm-dhcp-controller has no network boot; its schema prunes the field). The field
 * table is the C mirror of that part of crds/ippools.yaml, whose schema refuses what these
 * tables refuse (formats, patterns, lengths, unknown fields): the API server and the webhook
 * give the same answer, and the agent (dhcp/boot.c) serves what is stored.
 */
#include <stdlib.h>
#include <string.h>

#include "crds/crds-internal.h"
#include "crds/ippool.h"

#define BOOT(member) .offset = offsetof(struct ippool_network_boot, member)
#define FILES(member) .offset = offsetof(struct ippool_boot_files, member)

/* A file name: fits the BOOTP `file` field (128 bytes with its NUL), printable, no space. */
#define BOOT_FILE(k, member)                                                                       \
	{                                                                                          \
		.key = k, .type = CRD_STRING, .pattern = CRD_PATTERN_BOOT_NAME,                    \
		.max_length = IPPOOL_BOOT_FILE_MAX, .store = CRD_S_STR, FILES(member)              \
	}

static const struct crd_field boot_files_children[] = {
    BOOT_FILE("bios", bios),
    BOOT_FILE("uefi", uefi),
    BOOT_FILE("uefiArm64", uefi_arm64),
    /* a URL (UEFI HTTP boot): sent in option 67 when it does not fit `file` */
    {.key = "uefiHttp",
	.type = CRD_STRING,
	.pattern = CRD_PATTERN_BOOT_URL,
	.max_length = IPPOOL_BOOT_URL_MAX,
	.store = CRD_S_STR,
	FILES(uefi_http)},
    {.key = NULL},
};

const struct crd_field ippool_network_boot_children[] = {
    {.key = "nextServer",
	.type = CRD_STRING,
	.format = "ipv4",
	.store = CRD_S_IPV4,
	BOOT(next_server)},
    {.key = "tftpServerName",
	.type = CRD_STRING,
	.pattern = CRD_PATTERN_BOOT_NAME,
	.max_length = IPPOOL_BOOT_URL_MAX,
	.store = CRD_S_STR,
	BOOT(tftp_server_name)},
    {.key = "bootFiles",
	.type = CRD_OBJECT,
	.strict = true,
	.children = boot_files_children,
	.store = CRD_S_STRUCT,
	BOOT(files)},
    {.key = "ipxeScript",
	.type = CRD_STRING,
	.pattern = CRD_PATTERN_BOOT_NAME,
	.max_length = IPPOOL_BOOT_URL_MAX,
	.store = CRD_S_STR,
	BOOT(ipxe_script)},
    {.key = NULL},
};

void
ippool_network_boot_clear(struct ippool_network_boot *b)
{
	free(b->tftp_server_name);
	free(b->files.bios);
	free(b->files.uefi);
	free(b->files.uefi_arm64);
	free(b->files.uefi_http);
	free(b->ipxe_script);
	memset(b, 0, sizeof(*b));
}
