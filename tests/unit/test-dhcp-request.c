/* SPDX-License-Identifier: Apache-2.0 */
/* dhcp/: message rules and destinations, through dhcp_handle_message() (no sockets). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/dhcp-internal.h"
#include "lib/buf.h"
#include "tests/runner.h"

#define SERVER_IP 0x0a000001u /* 10.0.0.1 */
#define ROUTER_IP 0x0a0000feu /* 10.0.0.254 */
#define VM_IP 0x0a000064u     /* 10.0.0.100 */
#define RELAY_IP 0xc0a80001u  /* 192.168.0.1 */

static const uint8_t vm_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t other_mac[6] = { 0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc };
static const uint8_t hw[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x01 };

/* A request, built as a packed struct literal plus an options byte string. */
struct req {
	struct dhcp_msg m;
	uint8_t cookie[4];
	uint8_t opts[1024];
} __attribute__((packed));

static size_t
build(struct req *r, uint8_t type, const uint8_t mac[6], uint32_t ciaddr, uint32_t giaddr,
    uint16_t flags, const uint8_t *opts, size_t opts_len)
{
	size_t n = 0;

	memset(r, 0, sizeof(*r));
	r->m.op = BOOTREQUEST;
	r->m.htype = 1;
	r->m.hlen = 6;
	be32_put(r->m.xid, 0x11223344);
	be16_put(r->m.flags, flags);
	be32_put(r->m.ciaddr, ciaddr);
	be32_put(r->m.giaddr, giaddr);
	memcpy(r->m.chaddr, mac, 6);
	be32_put(r->cookie, DHCP_MAGIC_COOKIE);
	r->opts[n++] = DHCP_OPT_MESSAGE_TYPE;
	r->opts[n++] = 1;
	r->opts[n++] = type;
	memcpy(r->opts + n, opts, opts_len);
	n += opts_len;
	r->opts[n++] = DHCP_OPT_END;
	return sizeof(struct dhcp_msg) + 4 + n;
}

static struct dhcp_server *
server(void)
{
	struct dhcp_server *s = NULL;
	struct dhcp_options o;

	memset(&o, 0, sizeof(o));
	o.server_ip = SERVER_IP;
	o.prefix = 24;
	o.router = ROUTER_IP;
	o.dns[0] = 0x08080808;
	o.n_dns = 1;
	o.lease_time = 3600;
	CU_ASSERT_FATAL(dhcp_server_new(&s) == 0);
	CU_ASSERT_FATAL(dhcp_server_set_options(s, &o) == 0);
	CU_ASSERT_FATAL(dhcp_server_set_binding(s, vm_mac, VM_IP, "vm-one") == 0);
	memcpy(s->hwaddr, hw, 6);
	return s;
}

/* Looks an option up in a built reply. */
static const uint8_t *
reply_opt(const struct dhcp_reply *r, uint8_t code, size_t *len)
{
	static struct dhcp_option_table t;

	if (dhcp_option_parse(&t, r->payload, r->payload_len) < 0)
		return NULL;
	return dhcp_option_get(&t, code, len);
}

static void
test_discover_offer(void)
{
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	struct req r;
	size_t len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0), olen = 0;
	const struct dhcp_msg *m;
	const uint8_t *v;

	CU_ASSERT_EQUAL(dhcp_handle_message(s, (uint8_t *)&r, len, 1, &rep), DHCP_MSG_OFFER);
	m = (const struct dhcp_msg *)rep.payload;
	CU_ASSERT_EQUAL(m->op, BOOTREPLY);
	CU_ASSERT_EQUAL(be32_get(m->yiaddr), VM_IP);
	CU_ASSERT_EQUAL(be32_get(m->xid), 0x11223344u);
	CU_ASSERT(rep.payload_len >= DHCP_MIN_MESSAGE);
	v = reply_opt(&rep, DHCP_OPT_MESSAGE_TYPE, &olen);
	CU_ASSERT(v != NULL && olen == 1 && v[0] == DHCP_MSG_OFFER);
	v = reply_opt(&rep, DHCP_OPT_SERVER_ID, &olen);
	CU_ASSERT(v != NULL && olen == 4 && be32_get(v) == SERVER_IP);
	v = reply_opt(&rep, DHCP_OPT_HOSTNAME, &olen);
	CU_ASSERT(v != NULL && olen == 6 && memcmp(v, "vm-one", 6) == 0);
	CU_ASSERT_EQUAL(s->stats.rx[DHCP_MSG_DISCOVER], 1);
	dhcp_server_free(s);
}

static void
test_request_ack_nak(void)
{
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	struct req r;
	uint8_t good[] = { DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 100, DHCP_OPT_SERVER_ID, 4, 10, 0,
		0, 1 };
	uint8_t bad[] = { DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 101 };
	size_t len;

	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, good, sizeof(good));
	CU_ASSERT_EQUAL(dhcp_handle_message(s, (uint8_t *)&r, len, 1, &rep), DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(be32_get(((struct dhcp_msg *)rep.payload)->yiaddr), VM_IP);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, bad, sizeof(bad));
	CU_ASSERT_EQUAL(dhcp_handle_message(s, (uint8_t *)&r, len, 1, &rep), DHCP_MSG_NAK);
	CU_ASSERT_EQUAL(be32_get(((struct dhcp_msg *)rep.payload)->yiaddr), 0);
	/* renewing: ciaddr */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, VM_IP, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(dhcp_handle_message(s, (uint8_t *)&r, len, 1, &rep), DHCP_MSG_ACK);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, VM_IP + 1, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(dhcp_handle_message(s, (uint8_t *)&r, len, 1, &rep), DHCP_MSG_NAK);
	/* unknown MAC: silent, counted */
	len = build(&r, DHCP_MSG_REQUEST, other_mac, 0, 0, 0, good, sizeof(good));
	CU_ASSERT_EQUAL(dhcp_handle_message(s, (uint8_t *)&r, len, 1, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNKNOWN_MAC], 1);
	dhcp_server_free(s);
}

static void
test_destinations(void)
{
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	/* relay: giaddr port 67 via UDP */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, RELAY_IP, 0, NULL, 0);
	CU_ASSERT_EQUAL(dhcp_handle_message(s, (uint8_t *)&r, len, 1, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_FALSE(rep.dest.raw);
	CU_ASSERT_EQUAL(rep.dest.ip, RELAY_IP);
	CU_ASSERT_EQUAL(rep.dest.port, 67);
	/* broadcast flag */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, DHCP_FLAG_BROADCAST, NULL, 0);
	CU_ASSERT_EQUAL(dhcp_handle_message(s, (uint8_t *)&r, len, 1, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_TRUE(rep.dest.raw);
	CU_ASSERT_EQUAL(rep.dest.ip, 0xffffffffu);
	CU_ASSERT_EQUAL(rep.dest.mac[0], 0xff);
	CU_ASSERT_EQUAL(rep.dest.port, 68);
	/* chaddr unicast */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(dhcp_handle_message(s, (uint8_t *)&r, len, 1, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_TRUE(rep.dest.raw);
	CU_ASSERT_EQUAL(rep.dest.ip, VM_IP);
	CU_ASSERT(memcmp(rep.dest.mac, vm_mac, 6) == 0);
	CU_ASSERT(rep.frame != NULL && rep.frame_len == rep.payload_len + 42);
	/* ciaddr */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, VM_IP, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(dhcp_handle_message(s, (uint8_t *)&r, len, 1, &rep), DHCP_MSG_ACK);
	CU_ASSERT_FALSE(rep.dest.raw);
	CU_ASSERT_EQUAL(rep.dest.ip, VM_IP);
	CU_ASSERT_EQUAL(rep.dest.port, 68);
	dhcp_server_free(s);
}

static const struct test_case request_tests[] = {
	{ "discover gets an offer", test_discover_offer },
	{ "request gets ack or nak", test_request_ack_nak },
	{ "destination rules", test_destinations },
	{ NULL, NULL },
};

const struct test_suite test_suites[] = {
	{ .name = "dhcp-request", .tests = request_tests },
	{ .name = NULL },
};
