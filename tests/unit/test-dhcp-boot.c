/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp/boot.c through the message handler (no sockets): DISCOVER/REQUEST with options 93, 94,
 * 77, 60, 97 in every combination the answer depends on, and what the reply carries (siaddr,
 * file, options 60, 66, 67, 97), counted per answer; malformed and truncated options ignored
 * and counted, never a crash; a pool without boot configuration answers as before. And the
 * agent's part: an IPPool document's networkBoot into the engine's options (local mode reads
 * the same IPPool format as Kubernetes mode), and the decision log's " boot=<file>".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/apply-config.h"
#include "agent/decisions.h"
#include "agent/pool-config.h"
#include "agent/source.h"
#include "dhcp/dhcp-internal.h"
#include "lib/buf.h"
#include "lib/log.h"
#include "lib/util.h"
#include "tests/helpers/capture.h"
#include "tests/runner.h"

#define SERVER_IP 0x0a000001u  /* 10.0.0.1 */
#define VM_IP 0x0a000064u      /* 10.0.0.100 */
#define NEXT_SERVER 0x0a000005 /* 10.0.0.5 */

static const uint8_t vm_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};

#define LONG_URL                                                                                   \
	"http://10.0.0.5/a-rather-long-path/that-goes-on/and-on/and-on/past-the-bootp-file-field/" \
	"so-that-it-needs-option-67/because-the-bootp-file-field-holds-127/boot.ipxe"

struct req {
	struct dhcp_msg m;
	uint8_t cookie[4];
	uint8_t opts[1024];
} __attribute__((packed));

static size_t
build(struct req *r, uint8_t type, const uint8_t *opts, size_t opts_len)
{
	size_t n = 0;

	memset(r, 0, sizeof(*r));
	r->m.op = BOOTREQUEST;
	r->m.htype = 1;
	r->m.hlen = 6;
	be32_put(r->m.xid, 0x11223344);
	memcpy(r->m.chaddr, vm_mac, 6);
	be32_put(r->cookie, DHCP_MAGIC_COOKIE);
	r->opts[n++] = DHCP_OPT_MESSAGE_TYPE;
	r->opts[n++] = 1;
	r->opts[n++] = type;
	if (type == DHCP_MSG_REQUEST) {
		static const uint8_t sel[] = {
		    DHCP_OPT_SERVER_ID, 4, 10, 0, 0, 1, DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 100};
		memcpy(r->opts + n, sel, sizeof(sel));
		n += sizeof(sel);
	}
	memcpy(r->opts + n, opts, opts_len);
	n += opts_len;
	r->opts[n++] = DHCP_OPT_END;
	return sizeof(struct dhcp_msg) + 4 + n;
}

static void
boot_options(struct dhcp_options *o, bool with_boot)
{
	memset(o, 0, sizeof(*o));
	o->server_ip = SERVER_IP;
	o->prefix = 24;
	o->lease_time = 3600;
	if (!with_boot)
		return;
	o->boot.next_server = NEXT_SERVER;
	strcpy(o->boot.tftp_server_name, "tftp.example");
	strcpy(o->boot.files[DHCP_BOOT_BIOS], "undionly.kpxe");
	strcpy(o->boot.files[DHCP_BOOT_UEFI], "ipxe.efi");
	strcpy(o->boot.files[DHCP_BOOT_UEFI_ARM64], "ipxe-arm64.efi");
	strcpy(o->boot.files[DHCP_BOOT_UEFI_HTTP], "http://10.0.0.5/ipxe.efi");
	strcpy(o->boot.files[DHCP_BOOT_IPXE], "http://10.0.0.5/boot.ipxe");
}

static struct dhcp_server *
server_with(const struct dhcp_options *o)
{
	struct dhcp_server *s = NULL;

	CU_ASSERT_FATAL(dhcp_server_new(&s) == 0);
	CU_ASSERT_FATAL(dhcp_server_set_options(s, o) == 0);
	CU_ASSERT_FATAL(dhcp_server_set_binding(s, vm_mac, VM_IP, "vm-one") == 0);
	return s;
}

static struct dhcp_server *
server(void)
{
	struct dhcp_options o;

	boot_options(&o, true);
	return server_with(&o);
}

static int
handle(struct dhcp_server *s, uint8_t type, const uint8_t *opts, size_t len, struct dhcp_reply *rep)
{
	struct req r;
	size_t n = build(&r, type, opts, len);

	return dhcp_handle_message(s, (const uint8_t *)&r, n, 1, rep);
}

static const uint8_t *
reply_opt(const struct dhcp_reply *r, uint8_t code, size_t *len)
{
	static struct dhcp_option_table t;

	if (r->payload == NULL || dhcp_option_parse(&t, r->payload, r->payload_len) < 0)
		return NULL;
	return dhcp_option_get(&t, code, len);
}

static const struct dhcp_msg *
hdr(const struct dhcp_reply *r)
{
	static const struct dhcp_msg none;

	/* no reply (a failed assertion already said so): an all-zero header, not a crash */
	return r->payload != NULL ? (const struct dhcp_msg *)r->payload : &none;
}

static bool
opt_is(const struct dhcp_reply *r, uint8_t code, const char *want)
{
	size_t len = 0;
	const uint8_t *v = reply_opt(r, code, &len);

	return v != NULL && len == strlen(want) && memcmp(v, want, len) == 0;
}

static bool
opt_absent(const struct dhcp_reply *r, uint8_t code)
{
	size_t len;

	return reply_opt(r, code, &len) == NULL;
}

#define ARCH(a) DHCP_OPT_CLIENT_ARCH, 2, 0, (a)
#define NDI DHCP_OPT_CLIENT_NDI, 3, 1, 3, 16
#define PXE60                                                                                      \
	DHCP_OPT_VENDOR_CLASS, 32, 'P', 'X', 'E', 'C', 'l', 'i', 'e', 'n', 't', ':', 'A', 'r',     \
	    'c', 'h', ':', '0', '0', '0', '0', '0', ':', 'U', 'N', 'D', 'I', ':', '0', '0', '2',   \
	    '0', '0', '1'
#define HTTP60 DHCP_OPT_VENDOR_CLASS, 10, 'H', 'T', 'T', 'P', 'C', 'l', 'i', 'e', 'n', 't'
#define IPXE77 DHCP_OPT_USER_CLASS, 4, 'i', 'P', 'X', 'E'
#define UUID97 DHCP_OPT_CLIENT_UUID, 17, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16

/* One arch, as a PXE ROM asks: 93, 94, 60 PXEClient, 97. */
static void
check_arch(uint8_t arch, enum dhcp_boot_kind kind, const char *file)
{
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	const uint8_t opts[] = {ARCH(arch), NDI, PXE60, UUID97};
	size_t len = 0;
	const uint8_t *v;

	CU_ASSERT_FATAL(handle(s, DHCP_MSG_DISCOVER, opts, sizeof(opts), &rep) == DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(be32_get(hdr(&rep)->siaddr), NEXT_SERVER);
	CU_ASSERT_STRING_EQUAL((const char *)hdr(&rep)->file, file);
	CU_ASSERT(opt_is(&rep, DHCP_OPT_VENDOR_CLASS, "PXEClient"));
	CU_ASSERT(opt_is(&rep, DHCP_OPT_TFTP_SERVER, "tftp.example")); /* PXE: sent unasked */
	CU_ASSERT(opt_absent(&rep, DHCP_OPT_BOOTFILE));		       /* not asked, fits `file` */
	v = reply_opt(&rep, DHCP_OPT_CLIENT_UUID, &len);
	CU_ASSERT(v != NULL && len == 17 && v[0] == 0 && v[16] == 16);
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->boot[kind], 1);
	CU_ASSERT_EQUAL(handle(s, DHCP_MSG_REQUEST, opts, sizeof(opts), &rep), DHCP_MSG_ACK);
	CU_ASSERT_STRING_EQUAL((const char *)hdr(&rep)->file, file);
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->boot[kind], 2);
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->boot_malformed, 0);
	dhcp_server_free(s);
}

static void
test_each_arch(void)
{
	check_arch(0, DHCP_BOOT_BIOS, "undionly.kpxe");
	check_arch(6, DHCP_BOOT_UEFI, "ipxe.efi");
	check_arch(7, DHCP_BOOT_UEFI, "ipxe.efi");
	check_arch(9, DHCP_BOOT_UEFI, "ipxe.efi");
	check_arch(11, DHCP_BOOT_UEFI_ARM64, "ipxe-arm64.efi");
}

/* UEFI HTTP boot (arch 16, 60 HTTPClient): the URL, and 60 "HTTPClient" back. */
static void
test_http_boot(void)
{
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	const uint8_t opts[] = {ARCH(16), HTTP60, DHCP_OPT_PRL, 3, 1, 3, 67};

	CU_ASSERT_EQUAL(handle(s, DHCP_MSG_DISCOVER, opts, sizeof(opts), &rep), DHCP_MSG_OFFER);
	CU_ASSERT(opt_is(&rep, DHCP_OPT_VENDOR_CLASS, "HTTPClient"));
	CU_ASSERT(opt_is(&rep, DHCP_OPT_BOOTFILE, "http://10.0.0.5/ipxe.efi")); /* asked */
	CU_ASSERT_STRING_EQUAL((const char *)hdr(&rep)->file, "http://10.0.0.5/ipxe.efi");
	CU_ASSERT(opt_absent(&rep, DHCP_OPT_TFTP_SERVER)); /* neither asked nor PXE */
	CU_ASSERT(opt_absent(&rep, DHCP_OPT_CLIENT_UUID));
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->boot[DHCP_BOOT_UEFI_HTTP], 1);
	dhcp_server_free(s);
}

/* iPXE (77 "iPXE", plain and RFC 3004 forms) gets the script, not the ROM again. */
static void
test_ipxe(void)
{
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	const uint8_t plain[] = {ARCH(0), NDI, PXE60, IPXE77};
	const uint8_t rfc3004[] = {
	    ARCH(7), DHCP_OPT_USER_CLASS, 10, 4, 'a', 'b', 'c', 'd', 4, 'i', 'P', 'X', 'E'};

	CU_ASSERT_EQUAL(handle(s, DHCP_MSG_DISCOVER, plain, sizeof(plain), &rep), DHCP_MSG_OFFER);
	CU_ASSERT_STRING_EQUAL((const char *)hdr(&rep)->file, "http://10.0.0.5/boot.ipxe");
	CU_ASSERT(opt_is(&rep, DHCP_OPT_VENDOR_CLASS, "PXEClient"));
	CU_ASSERT_EQUAL(
	    handle(s, DHCP_MSG_DISCOVER, rfc3004, sizeof(rfc3004), &rep), DHCP_MSG_OFFER);
	CU_ASSERT_STRING_EQUAL((const char *)hdr(&rep)->file, "http://10.0.0.5/boot.ipxe");
	CU_ASSERT(opt_absent(&rep, DHCP_OPT_VENDOR_CLASS)); /* not PXE */
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->boot[DHCP_BOOT_IPXE], 2);
	dhcp_server_free(s);
}

/* iPXE with no ipxeScript configured: answered by its architecture. */
static void
test_ipxe_without_script(void)
{
	struct dhcp_options o;
	struct dhcp_server *s;
	struct dhcp_reply rep;
	const uint8_t opts[] = {ARCH(0), IPXE77};

	boot_options(&o, true);
	o.boot.files[DHCP_BOOT_IPXE][0] = '\0';
	s = server_with(&o);
	CU_ASSERT_EQUAL(handle(s, DHCP_MSG_DISCOVER, opts, sizeof(opts), &rep), DHCP_MSG_OFFER);
	CU_ASSERT_STRING_EQUAL((const char *)hdr(&rep)->file, "undionly.kpxe");
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->boot[DHCP_BOOT_BIOS], 1);
	dhcp_server_free(s);
}

/* An address but no boot answer: counted as "other", the reply as a plain client's. */
static void
check_no_answer(const struct dhcp_options *o, const uint8_t *opts, size_t len, uint64_t malformed)
{
	struct dhcp_server *s = server_with(o);
	struct dhcp_reply rep;
	static const uint8_t zero[128];

	CU_ASSERT_EQUAL(handle(s, DHCP_MSG_DISCOVER, opts, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(be32_get(hdr(&rep)->yiaddr), VM_IP);
	CU_ASSERT_EQUAL(be32_get(hdr(&rep)->siaddr), 0);
	CU_ASSERT(memcmp(hdr(&rep)->file, zero, sizeof(zero)) == 0);
	CU_ASSERT(opt_absent(&rep, DHCP_OPT_BOOTFILE));
	CU_ASSERT(opt_absent(&rep, DHCP_OPT_VENDOR_CLASS));
	CU_ASSERT(opt_absent(&rep, DHCP_OPT_CLIENT_UUID));
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->boot[DHCP_BOOT_OTHER], 1);
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->boot_malformed, malformed);
	dhcp_server_free(s);
}

static void
test_unknown_arch_and_missing_file(void)
{
	struct dhcp_options o;
	const uint8_t arm32[] = {ARCH(10), PXE60, UUID97};
	const uint8_t bios[] = {ARCH(0), PXE60};
	const uint8_t no93[] = {PXE60};

	boot_options(&o, true);
	check_no_answer(&o, arm32, sizeof(arm32), 0);
	check_no_answer(&o, no93, sizeof(no93), 0);
	o.boot.files[DHCP_BOOT_BIOS][0] = '\0';
	check_no_answer(&o, bios, sizeof(bios), 0);
}

/* Malformed and truncated 93/94/97/77: ignored, counted, the client still gets its address. */
static void
test_malformed(void)
{
	struct dhcp_options o;
	const uint8_t odd93[] = {DHCP_OPT_CLIENT_ARCH, 3, 0, 0, 0, PXE60};
	const uint8_t empty93[] = {DHCP_OPT_CLIENT_ARCH, 0, PXE60};
	const uint8_t one93[] = {DHCP_OPT_CLIENT_ARCH, 1, 0};
	const uint8_t bad94[] = {DHCP_OPT_CLIENT_ARCH, 1, 0, DHCP_OPT_CLIENT_NDI, 2, 1, 3};
	const uint8_t bad97[] = {
	    DHCP_OPT_CLIENT_ARCH, 1, 7, DHCP_OPT_CLIENT_UUID, 5, 1, 2, 3, 4, 5, PXE60};
	/* 77 neither "iPXE" nor RFC 3004 (a length past the end): not iPXE; arch 10 unknown */
	const uint8_t bad77[] = {ARCH(10), DHCP_OPT_USER_CLASS, 3, 9, 'i', 'P'};
	const uint8_t zero77[] = {ARCH(10), DHCP_OPT_USER_CLASS, 2, 0, 0};

	boot_options(&o, true);
	check_no_answer(&o, odd93, sizeof(odd93), 1);
	check_no_answer(&o, empty93, sizeof(empty93), 1);
	check_no_answer(&o, one93, sizeof(one93), 1);
	check_no_answer(&o, bad94, sizeof(bad94), 1);
	check_no_answer(&o, bad97, sizeof(bad97), 1);
	check_no_answer(&o, bad77, sizeof(bad77), 0);
	check_no_answer(&o, zero77, sizeof(zero77), 0);
}

/* Option 93 truncated by the end of the message: the whole message is malformed (dropped). */
static void
test_truncated_options(void)
{
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	struct req r;
	const uint8_t opts[] = {ARCH(0)};
	size_t n = build(&r, DHCP_MSG_DISCOVER, opts, sizeof(opts));

	/* cut inside option 93's value (END and its last byte gone) */
	CU_ASSERT_EQUAL(dhcp_handle_message(s, (const uint8_t *)&r, n - 2, 1, &rep), 0);
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->drops[DHCP_DROP_MALFORMED], 1);
	dhcp_server_free(s);
}

/* A name longer than the `file` field goes in option 67, asked for or not. */
static void
test_long_name_in_option_67(void)
{
	struct dhcp_options o;
	struct dhcp_server *s;
	struct dhcp_reply rep;
	const uint8_t opts[] = {ARCH(7), IPXE77};
	static const uint8_t zero[128];

	boot_options(&o, true);
	CU_ASSERT_FATAL(strlen(LONG_URL) > 127);
	strcpy(o.boot.files[DHCP_BOOT_IPXE], LONG_URL);
	s = server_with(&o);
	CU_ASSERT_EQUAL(handle(s, DHCP_MSG_DISCOVER, opts, sizeof(opts), &rep), DHCP_MSG_OFFER);
	CU_ASSERT(opt_is(&rep, DHCP_OPT_BOOTFILE, LONG_URL));
	CU_ASSERT(memcmp(hdr(&rep)->file, zero, sizeof(zero)) == 0);
	dhcp_server_free(s);
}

/* A NAK carries nothing of it; 66 only when asked (or PXE); the decision names the file. */
static const char *decided_file;
static int decided_kind;

static void
on_decision(void *userdata, const struct dhcp_decision *d)
{
	decided_file = d->boot_file;
	decided_kind = d->boot_kind;
}

static void
test_nak_and_decision(void)
{
	struct dhcp_server *s = server();
	struct dhcp_callbacks cb = {.on_decision = on_decision};
	struct dhcp_reply rep;
	struct req r;
	const uint8_t asked66[] = {ARCH(9), DHCP_OPT_PRL, 2, 66, 67};
	const uint8_t pxe[] = {ARCH(0), PXE60};
	size_t n;

	dhcp_server_set_callbacks(s, &cb);
	n = build(&r, DHCP_MSG_DISCOVER, asked66, sizeof(asked66));
	CU_ASSERT_EQUAL(dhcp_handle_message(s, (const uint8_t *)&r, n, 1, &rep), DHCP_MSG_OFFER);
	CU_ASSERT(opt_is(&rep, DHCP_OPT_TFTP_SERVER, "tftp.example"));
	CU_ASSERT(opt_is(&rep, DHCP_OPT_BOOTFILE, "ipxe.efi"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(decided_file);
	CU_ASSERT_STRING_EQUAL(decided_file, "ipxe.efi");
	CU_ASSERT_EQUAL(decided_kind, DHCP_BOOT_UEFI);
	/* the MAC's binding moved: its REQUEST for 10.0.0.100 is NAKed */
	CU_ASSERT_FATAL(dhcp_server_set_binding(s, vm_mac, VM_IP + 1, NULL) == 0);
	n = build(&r, DHCP_MSG_REQUEST, pxe, sizeof(pxe));
	CU_ASSERT_FATAL(dhcp_handle_message(s, (const uint8_t *)&r, n, 1, &rep) == DHCP_MSG_NAK);
	CU_ASSERT_EQUAL(be32_get(hdr(&rep)->siaddr), 0);
	CU_ASSERT(opt_absent(&rep, DHCP_OPT_VENDOR_CLASS));
	CU_ASSERT_PTR_NULL(decided_file);
	CU_ASSERT_EQUAL(dhcp_server_stats(s)->boot[DHCP_BOOT_BIOS], 0);
	dhcp_server_free(s);
}

/* The same requests to a pool without networkBoot, and a plain client to a pool with it:
 * byte for byte what a pool without it answers. */
static void
test_plain_unchanged(void)
{
	struct dhcp_options with, without;
	struct dhcp_server *a, *b;
	struct dhcp_reply ra, rb;
	const uint8_t pxe[] = {ARCH(0), NDI, PXE60, UUID97, IPXE77, DHCP_OPT_PRL, 3, 66, 67, 1};
	const uint8_t plain[] = {
	    DHCP_OPT_PRL, 4, 1, 3, 66, 67, DHCP_OPT_USER_CLASS, 3, 2, 'x', 'y'};
	uint8_t copy[DHCP_TX_BUF];
	size_t copy_len;

	boot_options(&with, true);
	boot_options(&without, false);
	a = server_with(&without);
	b = server_with(&with);
	/* a boot client of a pool without boot configuration is not even counted */
	CU_ASSERT_EQUAL(handle(a, DHCP_MSG_DISCOVER, pxe, sizeof(pxe), &ra), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(be32_get(hdr(&ra)->siaddr), 0);
	CU_ASSERT(opt_absent(&ra, DHCP_OPT_VENDOR_CLASS));
	for (int k = 0; k < _DHCP_BOOT_MAX; k++)
		CU_ASSERT_EQUAL(dhcp_server_stats(a)->boot[k], 0);
	CU_ASSERT_EQUAL(handle(a, DHCP_MSG_DISCOVER, plain, sizeof(plain), &ra), DHCP_MSG_OFFER);
	copy_len = ra.payload_len;
	memcpy(copy, ra.payload, copy_len);
	CU_ASSERT_EQUAL(handle(b, DHCP_MSG_DISCOVER, plain, sizeof(plain), &rb), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(rb.payload_len, copy_len);
	CU_ASSERT(memcmp(rb.payload, copy, copy_len) == 0);
	for (int k = 0; k < _DHCP_BOOT_MAX; k++)
		CU_ASSERT_EQUAL(dhcp_server_stats(b)->boot[k], 0);
	dhcp_server_free(a);
	dhcp_server_free(b);
}

/* Compile-time refusals: strings not terminated, a file in the unused slot. */
static void
test_options_refused(void)
{
	struct dhcp_options o;
	struct dhcp_server *s = NULL;

	CU_ASSERT_FATAL(dhcp_server_new(&s) == 0);
	boot_options(&o, true);
	memset(o.boot.files[DHCP_BOOT_UEFI], 'a', sizeof(o.boot.files[0]));
	CU_ASSERT_EQUAL(dhcp_server_set_options(s, &o), -EINVAL);
	boot_options(&o, true);
	memset(o.boot.tftp_server_name, 'a', sizeof(o.boot.tftp_server_name));
	CU_ASSERT_EQUAL(dhcp_server_set_options(s, &o), -EINVAL);
	boot_options(&o, true);
	strcpy(o.boot.files[DHCP_BOOT_OTHER], "x");
	CU_ASSERT_EQUAL(dhcp_server_set_options(s, &o), -EINVAL);
	CU_ASSERT_STRING_EQUAL(dhcp_boot_kind_name(DHCP_BOOT_UEFI_ARM64), "uefi-arm64");
	CU_ASSERT_STRING_EQUAL(dhcp_boot_kind_name((enum dhcp_boot_kind)99), "other");
	dhcp_server_free(s);
}

/* --- the agent: IPPool networkBoot -> engine options; the decision log ------------------- */

#define POOL_DOC(boot)                                                                             \
	"apiVersion: network.harvesterhci.io/v1alpha1\n"                                           \
	"kind: IPPool\n"                                                                           \
	"metadata: {name: net1, namespace: default}\n"                                             \
	"spec:\n"                                                                                  \
	"  networkName: net1\n"                                                                    \
	"  ipv4Config:\n"                                                                          \
	"    serverIP: 10.0.0.1\n"                                                                 \
	"    cidr: 10.0.0.0/24\n"                                                                  \
	"    pool: {start: 10.0.0.10, end: 10.0.0.200}\n" boot "---\n"                             \
	"apiVersion: network.harvesterhci.io/v1alpha1\n"                                           \
	"kind: VirtualMachineNetworkConfig\n"                                                      \
	"metadata: {name: vm-one, namespace: default}\n"                                           \
	"spec:\n"                                                                                  \
	"  vmName: vm-one\n"                                                                       \
	"  networkConfigs:\n"                                                                      \
	"    - {networkName: net1, macAddress: \"52:54:00:12:34:56\", ipAddress: 10.0.0.100}\n"

static const char pool_with_boot[] = POOL_DOC(
    "    networkBoot:\n"
    "      nextServer: 10.0.0.5\n"
    "      tftpServerName: tftp.example\n"
    "      bootFiles: {bios: undionly.kpxe, uefi: ipxe.efi, uefiHttp: \"http://10.0.0.5/x.efi\"}\n"
    "      ipxeScript: http://10.0.0.5/boot.ipxe\n");

static void
test_agent_config(void)
{
	struct agent_config *c = NULL;
	char err[AGENT_ERR_MAX] = "";
	const struct dhcp_boot *b;

	CU_ASSERT_FATAL(agent_config_parse("pool.yaml", pool_with_boot, strlen(pool_with_boot),
			    NULL, &c, err, sizeof(err)) == 0);
	b = &c->opts.boot;
	CU_ASSERT_EQUAL(b->next_server, NEXT_SERVER);
	CU_ASSERT_STRING_EQUAL(b->tftp_server_name, "tftp.example");
	CU_ASSERT_STRING_EQUAL(b->files[DHCP_BOOT_BIOS], "undionly.kpxe");
	CU_ASSERT_STRING_EQUAL(b->files[DHCP_BOOT_UEFI], "ipxe.efi");
	CU_ASSERT_STRING_EQUAL(b->files[DHCP_BOOT_UEFI_ARM64], "");
	CU_ASSERT_STRING_EQUAL(b->files[DHCP_BOOT_UEFI_HTTP], "http://10.0.0.5/x.efi");
	CU_ASSERT_STRING_EQUAL(b->files[DHCP_BOOT_IPXE], "http://10.0.0.5/boot.ipxe");
	agent_config_free(c);
	c = NULL;
	/* a refused networkBoot refuses the file, with the field's path */
	static const char bad[] = POOL_DOC("    networkBoot: {bootFiles: {uefiHttp: x.efi}}\n");
	CU_ASSERT_EQUAL(
	    agent_config_parse("pool.yaml", bad, strlen(bad), NULL, &c, err, sizeof(err)), -EINVAL);
	CU_ASSERT(strstr(err, "networkBoot.bootFiles.uefiHttp") != NULL);
	CU_ASSERT_PTR_NULL(c);
}

static struct agent_declog declog;
static struct agent_config declog_cfg = {.pool_ns = "default", .pool_name = "net1"};

static void
on_decision_log(void *userdata, const struct dhcp_decision *d)
{
	(void)userdata;
	agent_declog_decision(&declog, d, &declog_cfg);
}

/* The served pool, through agent_apply_config, and its decision log lines. */
static void
test_agent_decision_log(void)
{
	struct agent_config *c = NULL;
	struct dhcp_server *s = NULL;
	struct dhcp_callbacks cb = {.on_decision = on_decision_log};
	struct dhcp_reply rep;
	char err[AGENT_ERR_MAX] = "";
	const uint8_t bios[] = {ARCH(0), PXE60};
	const uint8_t plain[] = {DHCP_OPT_PRL, 2, 1, 3};
	char *text;

	CU_ASSERT_FATAL(agent_config_parse("pool.yaml", pool_with_boot, strlen(pool_with_boot),
			    NULL, &c, err, sizeof(err)) == 0);
	CU_ASSERT_FATAL(dhcp_server_new(&s) == 0);
	CU_ASSERT_FATAL(agent_apply_config(s, c, NULL, err, sizeof(err)) >= 0);
	dhcp_server_set_callbacks(s, &cb);
	agent_declog_init(&declog, AGENT_LOG_DHCP_ALL);
	log_set_level(LOG_LEVEL_INFO);
	log_set_format(LOG_FORMAT_TEXT);
	CU_ASSERT_EQUAL_FATAL(test_capture_stderr(), 0);
	CU_ASSERT_EQUAL(handle(s, DHCP_MSG_DISCOVER, bios, sizeof(bios), &rep), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(handle(s, DHCP_MSG_DISCOVER, plain, sizeof(plain), &rep), DHCP_MSG_OFFER);
	text = test_captured_stderr(NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	CU_ASSERT(
	    strstr(text, "DHCPOFFER 10.0.0.100 to 52:54:00:12:34:56 (vm-one) for DHCPDISCOVER "
			 "boot=undionly.kpxe") != NULL);
	/* two OFFER lines; the plain client's has no boot= */
	CU_ASSERT_PTR_NOT_NULL(strstr(strstr(text, "DHCPOFFER") + 1, "DHCPOFFER"));
	CU_ASSERT_PTR_NULL(strstr(strstr(text, "boot=") + 1, "boot="));
	free(text);
	log_set_level(LOG_LEVEL_WARN);
	dhcp_server_free(s);
	agent_config_free(c);
}

static const struct test_case agent_tests[] = {
    {"IPPool networkBoot into the engine", test_agent_config},
    {"decision log boot=", test_agent_decision_log},
    {NULL, NULL},
};

static const struct test_case boot_tests[] = {
    {"each architecture", test_each_arch},
    {"UEFI HTTP boot", test_http_boot},
    {"iPXE gets the script", test_ipxe},
    {"iPXE without a script", test_ipxe_without_script},
    {"unknown arch, missing file", test_unknown_arch_and_missing_file},
    {"malformed 93/94/97/77", test_malformed},
    {"truncated options", test_truncated_options},
    {"long name in option 67", test_long_name_in_option_67},
    {"NAK and decision", test_nak_and_decision},
    {"plain clients unchanged", test_plain_unchanged},
    {"options refused", test_options_refused},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp-boot", .tests = boot_tests},
    {.name = "agent-boot", .tests = agent_tests},
    {.name = NULL},
};
