/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp/reply.c: a long option 82 (relay agent information, RFC 3046) split over several
 * instances (RFC 3396) is echoed whole, split the same way, to the relay; the relay removes
 * it before the client sees the reply, so it does not count against the client's option 57.
 * What cannot fit even the link is dropped as reply_too_big, not send_failed.
 */
#include <errno.h>
#include <string.h>

#include "dhcp/dhcp-internal.h"
#include "lib/buf.h"
#include "tests/runner.h"

#define SERVER_IP 0x0a000001u /* 10.0.0.1 */
#define VM_IP 0x0a000064u     /* 10.0.0.100 */
#define RELAY_IP 0x0a000002u  /* 10.0.0.2: a relay on the pool's subnet */

static const uint8_t vm_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};

struct req {
	struct dhcp_msg m;
	uint8_t cookie[4];
	uint8_t opts[2048];
} __attribute__((packed));

/* A request of type from vm_mac through giaddr, with an option 82 of len bytes (split as a
 * relay must: RFC 3396) and the options in extra. */
static size_t
build(struct req *r, uint8_t type, uint32_t giaddr, size_t len82, const uint8_t *extra,
    size_t extra_len)
{
	size_t n = 0, left = len82;
	uint8_t v = 0;

	memset(r, 0, sizeof(*r));
	r->m.op = BOOTREQUEST;
	r->m.htype = 1;
	r->m.hlen = 6;
	r->m.hops = 1;
	be32_put(r->m.xid, 0x11223344);
	be32_put(r->m.giaddr, giaddr);
	memcpy(r->m.chaddr, vm_mac, 6);
	be32_put(r->cookie, DHCP_MAGIC_COOKIE);
	r->opts[n++] = DHCP_OPT_MESSAGE_TYPE;
	r->opts[n++] = 1;
	r->opts[n++] = type;
	if (extra_len > 0)
		memcpy(r->opts + n, extra, extra_len);
	n += extra_len;
	while (left > 0) {
		size_t chunk = left > 255 ? 255 : left;

		r->opts[n++] = DHCP_OPT_RELAY_AGENT;
		r->opts[n++] = (uint8_t)chunk;
		for (size_t i = 0; i < chunk; i++)
			r->opts[n++] = v++;
		left -= chunk;
	}
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
	o.router = 0x0a0000feu;
	o.dns[0] = 0x08080808;
	o.n_dns = 1;
	strcpy(o.domain_name, "example.org");
	o.lease_time = 3600;
	CU_ASSERT_FATAL(dhcp_server_new(&s) == 0);
	CU_ASSERT_FATAL(dhcp_server_set_options(s, &o) == 0);
	CU_ASSERT_FATAL(dhcp_server_set_binding(s, vm_mac, VM_IP, "vm-one") == 0);
	return s;
}

/*
 * The reply's option 82: every instance in wire order, concatenated into out; how many
 * instances there were in *pieces. Returns the concatenated length.
 */
static size_t
reply_82(const struct dhcp_reply *r, uint8_t *out, size_t *pieces)
{
	const uint8_t *p = r->payload + DHCP_FIXED_LEN + 4;
	size_t left = r->payload_len - DHCP_FIXED_LEN - 4, n = 0;

	*pieces = 0;
	while (left >= 2 && p[0] != DHCP_OPT_END) {
		if (p[0] == DHCP_OPT_PAD) {
			p++;
			left--;
			continue;
		}
		if (left < 2u + p[1])
			break;
		if (p[0] == DHCP_OPT_RELAY_AGENT) {
			memcpy(out + n, p + 2, p[1]);
			n += p[1];
			(*pieces)++;
		}
		left -= 2u + p[1];
		p += 2u + p[1];
	}
	return n;
}

static void
check_echo(const struct dhcp_reply *rep, size_t len82)
{
	uint8_t got[2048];
	size_t pieces, n = reply_82(rep, got, &pieces);

	CU_ASSERT_EQUAL(n, len82);
	CU_ASSERT_EQUAL(pieces, (len82 + 254) / 255);
	for (size_t i = 0; i < n && i < len82; i++)
		if (got[i] != (uint8_t)i) {
			CU_FAIL("option 82 not echoed unchanged");
			break;
		}
}

/* A 400-byte option 82 in a relayed DISCOVER and REQUEST (no option 57: 576 bytes) */
static void
test_400_byte_option_82(void)
{
	static const uint8_t want_ip[] = {
	    DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 100, DHCP_OPT_SERVER_ID, 4, 10, 0, 0, 1};
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	len = build(&r, DHCP_MSG_DISCOVER, RELAY_IP, 400, NULL, 0);
	CU_ASSERT_EQUAL_FATAL(
	    dhcp_handle_message(s, (const uint8_t *)&r, len, 1, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_SEND_FAILED], 0);
	check_echo(&rep, 400);
	CU_ASSERT_EQUAL(be32_get(((const struct dhcp_msg *)rep.payload)->yiaddr), VM_IP);
	/* the client gets the reply without 82: within its 576 bytes (548 of DHCP) */
	CU_ASSERT(rep.payload_len - (400 + 4) <= 576 - 28);
	CU_ASSERT(rep.payload_len <= DHCP_MAX_PAYLOAD);

	len = build(&r, DHCP_MSG_REQUEST, RELAY_IP, 400, want_ip, sizeof(want_ip));
	CU_ASSERT_EQUAL_FATAL(
	    dhcp_handle_message(s, (const uint8_t *)&r, len, 1, &rep), DHCP_MSG_ACK);
	check_echo(&rep, 400);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_SEND_FAILED], 0);
	dhcp_server_free(s);
}

/*
 * A 1000-byte option 82 still fits a 1500-byte link; with a 255-byte client identifier
 * (echoed too, RFC 6842) the echoes cannot fit: reply_too_big.
 */
static void
test_too_big_for_the_link(void)
{
	uint8_t id[2 + 255];
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	len = build(&r, DHCP_MSG_DISCOVER, RELAY_IP, 1000, NULL, 0);
	CU_ASSERT_EQUAL_FATAL(
	    dhcp_handle_message(s, (const uint8_t *)&r, len, 1, &rep), DHCP_MSG_OFFER);
	check_echo(&rep, 1000);
	CU_ASSERT(rep.payload_len <= DHCP_MAX_PAYLOAD);

	id[0] = DHCP_OPT_CLIENT_ID;
	id[1] = 255;
	memset(id + 2, 0x11, 255);
	len = build(&r, DHCP_MSG_DISCOVER, RELAY_IP, 1000, id, sizeof(id));
	CU_ASSERT_EQUAL(dhcp_handle_message(s, (const uint8_t *)&r, len, 1, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_REPLY_TOO_BIG], 1);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_SEND_FAILED], 0);
	CU_ASSERT_STRING_EQUAL(dhcp_drop_reason_name(DHCP_DROP_REPLY_TOO_BIG), "reply_too_big");
	dhcp_server_free(s);
}

/*
 * Not relayed (giaddr 0), the client itself receives option 82 (RFC 3046 §2.1.1 allows it):
 * the client's 576 bytes cannot hold a 400-byte echo plus the mandatory options, so it is
 * reply_too_big, not send_failed; with option 57 of 1500, it goes.
 */
static void
test_unrelayed_needs_option_57(void)
{
	static const uint8_t o57[] = {DHCP_OPT_MAX_SIZE, 2, 0x05, 0xdc};
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	len = build(&r, DHCP_MSG_DISCOVER, 0, 400, NULL, 0);
	CU_ASSERT_EQUAL(dhcp_handle_message(s, (const uint8_t *)&r, len, 1, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_REPLY_TOO_BIG], 1);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_SEND_FAILED], 0);
	len = build(&r, DHCP_MSG_DISCOVER, 0, 400, o57, sizeof(o57));
	CU_ASSERT_EQUAL_FATAL(
	    dhcp_handle_message(s, (const uint8_t *)&r, len, 1, &rep), DHCP_MSG_OFFER);
	check_echo(&rep, 400);
	dhcp_server_free(s);
}

static const struct test_case relay82_tests[] = {
    {"a 400-byte split option 82 is echoed whole to the relay", test_400_byte_option_82},
    {"an echo too big for the link: reply_too_big", test_too_big_for_the_link},
    {"not relayed: the client's option 57 bounds the echo", test_unrelayed_needs_option_57},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp-relay82", .tests = relay82_tests},
    {.name = NULL},
};
