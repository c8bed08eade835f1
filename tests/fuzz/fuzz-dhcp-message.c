/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target: the whole receive path of one frame (Ethernet/IPv4/UDP verify, option
 * parse, message rules, reply build and framing), as dhcp_server_on_readable() runs it.
 *
 * Input: byte 0 selects modes, the rest is an Ethernet frame.
 *   bit 0: recompute the IPv4 and UDP checksums first (so mutations get past them)
 *   bit 1: the kernel said CSUMNOTREADY (UDP checksum not verified)
 *   bit 2: swap to the second option set before handling (option-set swap path; the first
 *          has network boot answers, the second none)
 * Invariants checked on every reply: it parses back, respects option 57 and the 300-byte
 * BOOTP minimum, and a link-layer frame passes our own IPv4 checksum.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/dhcp-internal.h"
#include "lib/buf.h"

static struct dhcp_server *srv;
static struct dhcp_options opts_a, opts_b;
static unsigned n_unknown;

static int
on_unknown(void *userdata, const uint8_t mac[6], uint32_t *ret_ip)
{
	(void)userdata;
	if (mac[5] & 1)
		return -ENOENT;
	if (++n_unknown > 512) {
		/* keep the table small: start over */
		dhcp_server_sync_begin(srv);
		dhcp_server_sync_end(srv);
		n_unknown = 0;
	}
	*ret_ip = 0x0a010000u | (uint32_t)mac[4] << 8 | mac[5];
	return 0;
}

static void
on_event(void *userdata, const uint8_t mac[6], uint32_t ip)
{
	(void)userdata;
	(void)mac;
	(void)ip;
}

static void
setup(void)
{
	static const struct dhcp_callbacks cb = {
	    .on_unknown = on_unknown, .on_decline = on_event, .on_release = on_event};
	static const uint8_t vm[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
	static const uint8_t hw[6] = {0x02, 0, 0, 0, 0, 1};

	memset(&opts_a, 0, sizeof(opts_a));
	opts_a.server_ip = 0x0a000001;
	opts_a.prefix = 16;
	opts_a.router = 0x0a000001;
	opts_a.dns[0] = 0x08080808;
	opts_a.dns[1] = 0x01010101;
	opts_a.n_dns = 2;
	opts_a.ntp[0] = 0x0a000002;
	opts_a.n_ntp = 1;
	strcpy(opts_a.domain_name, "example.org");
	strcpy(opts_a.search[0], "eng.example.org");
	strcpy(opts_a.search[1], "example.org");
	strcpy(opts_a.search[2], "a.very.long.label.chain.example.org");
	opts_a.n_search = 3;
	opts_a.mtu = 1450;
	opts_a.routes[0] = (struct dhcp_route){0xac100000, 12, 0x0a0000fe};
	opts_a.routes[1] = (struct dhcp_route){0xc0a80100, 24, 0x0a0000fd};
	opts_a.n_routes = 2;
	opts_a.lease_time = 3600;
	opts_a.boot.next_server = 0x0a000005;
	strcpy(opts_a.boot.tftp_server_name, "tftp.example.org");
	strcpy(opts_a.boot.files[DHCP_BOOT_BIOS], "undionly.kpxe");
	strcpy(opts_a.boot.files[DHCP_BOOT_UEFI], "ipxe.efi");
	strcpy(opts_a.boot.files[DHCP_BOOT_UEFI_HTTP], "http://10.0.0.5/ipxe.efi");
	/* longer than the BOOTP file field: always option 67 */
	memset(opts_a.boot.files[DHCP_BOOT_IPXE], 'x', 200);
	memcpy(opts_a.boot.files[DHCP_BOOT_IPXE], "http://", 7);
	opts_b = opts_a;
	memset(&opts_b.boot, 0, sizeof(opts_b.boot));
	opts_b.n_search = 0;
	opts_b.n_routes = 0;
	opts_b.lease_time = UINT32_MAX;
	if (dhcp_server_new(&srv) < 0 || dhcp_server_set_options(srv, &opts_a) < 0)
		abort();
	dhcp_server_set_callbacks(srv, &cb);
	memcpy(srv->hwaddr, hw, 6);
	if (dhcp_server_set_binding(srv, vm, 0x0a000064, "vm-one") < 0)
		abort();
}

static uint16_t
csum(const uint8_t *p, size_t len, uint32_t sum)
{
	return inet_fold(inet_sum(p, len, sum));
}

/* Recomputes the IPv4 header and UDP checksums in place when the lengths allow it. */
static void
fix_checksums(uint8_t *f, size_t len)
{
	size_t ihl, ulen;
	uint32_t s;

	if (len < 14 + 20 || (f[14] >> 4) != 4)
		return;
	ihl = (size_t)(f[14] & 0x0f) * 4;
	if (ihl < 20 || 14 + ihl + 8 > len)
		return;
	be16_put(f + 14 + 10, 0);
	be16_put(f + 14 + 10, csum(f + 14, ihl, 0));
	ulen = be16_get(f + 14 + ihl + 4);
	if (ulen < 8 || 14 + ihl + ulen > len)
		return;
	s = (uint32_t)be16_get(f + 26) + be16_get(f + 28) + be16_get(f + 30) + be16_get(f + 32) +
	    17 + (uint32_t)ulen;
	be16_put(f + 14 + ihl + 6, 0);
	be16_put(f + 14 + ihl + 6, csum(f + 14 + ihl, ulen, s));
}

static void
check_reply(const struct dhcp_reply *r)
{
	static struct dhcp_option_table t;
	const struct dhcp_request *req = &srv->req;
	size_t limit = req->max_size;

	/* relayed: the relay removes the option 82 echo before the client sees the reply, so the
	 * echo counts against the link only (dhcp/reply.c reply_room) */
	if (req->giaddr != 0 && req->relay_info != NULL)
		limit += req->relay_info_len +
			 2 * (req->relay_info_len == 0 ? 1 : (req->relay_info_len + 254) / 255);
	if (r->payload_len < DHCP_MIN_MESSAGE || r->payload_len > DHCP_MAX_PAYLOAD)
		abort();
	if (r->payload_len > DHCP_MIN_MESSAGE && r->payload_len + 28 > limit)
		abort();
	if (dhcp_option_parse(&t, r->payload, r->payload_len) < 0)
		abort();
	if (r->dest.raw) {
		if (r->frame == NULL || r->frame_len != r->payload_len + DHCP_FRAME_HEADROOM)
			abort();
		if (csum(r->frame + 14, 20, 0) != 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[DHCP_RX_BUF];
	struct dhcp_reply r;
	uint8_t mode;
	int type;

	if (srv == NULL)
		setup();
	if (size < 1 || size - 1 > sizeof(frame))
		return 0;
	mode = data[0];
	memcpy(frame, data + 1, size - 1);
	if (mode & 1)
		fix_checksums(frame, size - 1);
	if (mode & 4)
		dhcp_server_set_options(srv, &opts_b);
	type = dhcp_handle_frame(srv, frame, size - 1, (mode & 2) != 0, 1, &r);
	if (type > 0)
		check_reply(&r);
	if (mode & 4)
		dhcp_server_set_options(srv, &opts_a);
	return 0;
}
