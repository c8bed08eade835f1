/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp/: message rules, replies and destinations, through the message handler (no sockets);
 * the on_decision hook, and the agent's decision log (agent/decisions.c) it feeds.
 *
 * Size: about 1700 lines, one file on purpose: 68 cases of one message handler that share its
 * fixtures (a server, a bound table, a captured reply); split, each half would repeat them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "agent/agent.h"
#include "agent/pool-config.h"
#include "dhcp/dhcp-internal.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"
#include "tests/helpers/capture.h"
#include "tests/runner.h"

#define SERVER_IP 0x0a000001u	 /* 10.0.0.1 */
#define ROUTER_IP 0x0a0000feu	 /* 10.0.0.254 */
#define VM_IP 0x0a000064u	 /* 10.0.0.100 */
#define RELAY_IP 0x0a000002u	 /* 10.0.0.2: a relay on the pool's subnet */
#define FAR_RELAY_IP 0xc0a80001u /* 192.168.0.1: a relay on another network */

static const uint8_t vm_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint8_t other_mac[6] = {0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc};
static const uint8_t hw[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
static const uint8_t prl_std[] = {DHCP_OPT_PRL, 6, 1, 3, 6, 12, 15, 51};

/* --- helpers ------------------------------------------------------------------------------- */

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
	if (opts_len > 0)
		memcpy(r->opts + n, opts, opts_len);
	n += opts_len;
	r->opts[n++] = DHCP_OPT_END;
	return sizeof(struct dhcp_msg) + 4 + n;
}

static void
base_options(struct dhcp_options *o)
{
	memset(o, 0, sizeof(*o));
	o->server_ip = SERVER_IP;
	o->prefix = 24;
	o->router = ROUTER_IP;
	o->dns[0] = 0x08080808;
	o->n_dns = 1;
	strcpy(o->domain_name, "example.org");
	o->lease_time = 3600;
}

static struct dhcp_server *
server(void)
{
	struct dhcp_server *s = NULL;
	struct dhcp_options o;

	base_options(&o);
	CU_ASSERT_FATAL(dhcp_server_new(&s) == 0);
	CU_ASSERT_FATAL(dhcp_server_set_options(s, &o) == 0);
	CU_ASSERT_FATAL(dhcp_server_set_binding(s, vm_mac, VM_IP, "vm-one") == 0);
	memcpy(s->hwaddr, hw, 6);
	return s;
}

static int
handle(struct dhcp_server *s, const struct req *r, size_t len, struct dhcp_reply *rep)
{
	return dhcp_handle_message(s, (const uint8_t *)r, len, 1, rep);
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

/* The option codes of a reply in wire order (no PAD/END); returns how many. */
static size_t
reply_codes(const struct dhcp_reply *r, uint8_t *codes, size_t max)
{
	const uint8_t *p = r->payload + DHCP_FIXED_LEN + 4;
	size_t left = r->payload_len - DHCP_FIXED_LEN - 4, n = 0;

	while (left > 0 && p[0] != DHCP_OPT_END) {
		if (p[0] == DHCP_OPT_PAD) {
			p++;
			left--;
			continue;
		}
		if (left < 2 || left < 2u + p[1])
			return 0;
		if (n < max)
			codes[n++] = p[0];
		left -= 2u + p[1];
		p += 2u + p[1];
	}
	return n;
}

static const struct dhcp_msg *
reply_msg(const struct dhcp_reply *r)
{
	return (const struct dhcp_msg *)r->payload;
}

/*
 * Loads tests/data/NAME: hex bytes separated by white space, '#' comments, "zeros:N" for N
 * zero bytes and "padto:N" to zero-fill up to N bytes. Returns the length, 0 on error.
 */
static size_t
load_hex(const char *name, uint8_t *out, size_t cap)
{
	char path[512], tok[256];
	size_t n = 0;
	FILE *f;
	int c;

	snprintf(path, sizeof(path), "%s/%s", test_data_dir(), name);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	for (;;) {
		size_t tl = 0;

		c = fgetc(f);
		if (c == EOF)
			break;
		if (c == '#') {
			while (c != '\n' && c != EOF)
				c = fgetc(f);
			continue;
		}
		if (c == ' ' || c == '\n' || c == '\t' || c == '\r')
			continue;
		while (c != EOF && c != ' ' && c != '\n' && c != '\t' && c != '\r' &&
		       tl < sizeof(tok) - 1) {
			tok[tl++] = (char)c;
			c = fgetc(f);
		}
		tok[tl] = '\0';
		if (strncmp(tok, "zeros:", 6) == 0 || strncmp(tok, "padto:", 6) == 0) {
			size_t k = strtoul(tok + 6, NULL, 10);
			size_t end = tok[0] == 'z' ? n + k : k;

			if (end > cap)
				goto fail;
			while (n < end)
				out[n++] = 0;
			continue;
		}
		if (tl % 2 != 0)
			goto fail;
		for (size_t i = 0; i < tl; i += 2) {
			unsigned v;

			if (sscanf(tok + i, "%2x", &v) != 1 || n >= cap)
				goto fail;
			out[n++] = (uint8_t)v;
		}
	}
	fclose(f);
	return n;
fail:
	fclose(f);
	return 0;
}

/* Independent RFC 1071 check of a built frame's IPv4 and UDP checksums. */
static unsigned
ones_sum(const uint8_t *p, size_t n, unsigned long acc)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		acc += (unsigned long)(p[i] * 256 + p[i + 1]);
	if (n & 1)
		acc += (unsigned long)p[n - 1] * 256;
	while (acc > 0xffff)
		acc = (acc & 0xffff) + (acc >> 16);
	return (unsigned)acc;
}

static bool
frame_checksums_ok(const uint8_t *f, size_t len)
{
	const uint8_t *ip = f + 14, *udp = f + 34;
	size_t ulen = (size_t)udp[4] * 256 + udp[5];
	unsigned long pseudo = 17 + ulen;

	if (len < 42 || ones_sum(ip, 20, 0) != 0xffff || 34 + ulen != len)
		return false;
	for (int i = 12; i < 20; i += 2)
		pseudo += (unsigned long)(ip[i] * 256 + ip[i + 1]);
	return ones_sum(udp, ulen, pseudo) == 0xffff;
}

/* --- basic rules --------------------------------------------------------------------------- */

static void
test_discover_offer(void)
{
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	struct req r;
	size_t len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0), olen = 0;
	const uint8_t *v;

	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(rep.type, DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(reply_msg(&rep)->op, BOOTREPLY);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->yiaddr), VM_IP);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->xid), 0x11223344u);
	CU_ASSERT(rep.payload_len >= DHCP_MIN_MESSAGE);
	v = reply_opt(&rep, DHCP_OPT_MESSAGE_TYPE, &olen);
	CU_ASSERT(v != NULL && olen == 1 && v[0] == DHCP_MSG_OFFER);
	v = reply_opt(&rep, DHCP_OPT_SERVER_ID, &olen);
	CU_ASSERT(v != NULL && olen == 4 && be32_get(v) == SERVER_IP);
	v = reply_opt(&rep, DHCP_OPT_LEASE_TIME, &olen);
	CU_ASSERT(v != NULL && olen == 4 && be32_get(v) == 3600);
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
	uint8_t good[] = {
	    DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 100, DHCP_OPT_SERVER_ID, 4, 10, 0, 0, 1};
	uint8_t bad[] = {DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 101};
	uint8_t reboot[] = {DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 100};
	size_t len;

	/* SELECTING */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, good, sizeof(good));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->yiaddr), VM_IP);
	/* INIT-REBOOT, right and wrong */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, reboot, sizeof(reboot));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_ACK);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, bad, sizeof(bad));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_NAK);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->yiaddr), 0);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->ciaddr), 0);
	/* RENEWING: ciaddr */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, VM_IP, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->ciaddr), VM_IP);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, VM_IP + 1, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_NAK);
	/* neither 50 nor ciaddr */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_NAK);
	CU_ASSERT_EQUAL(s->stats.rx[DHCP_MSG_REQUEST], 6);
	dhcp_server_free(s);
}

/*
 * A MAC whose binding was removed: a renewal (RENEWING/REBINDING, ciaddr in our subnet) and a
 * SELECTING request naming us are NAKed; INIT-REBOOT stays silent (RFC 2131 §4.3.2 MUST);
 * a renewal of an address outside our subnet is not ours to refuse.
 */
static void
test_removed_binding_nak(void)
{
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	struct req r;
	uint8_t selecting[] = {
	    DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 100, DHCP_OPT_SERVER_ID, 4, 10, 0, 0, 1};
	uint8_t reboot[] = {DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 100};
	size_t len;

	CU_ASSERT_EQUAL_FATAL(dhcp_server_remove_binding(s, vm_mac), 0);
	/* RENEWING: unicast, ciaddr set, giaddr 0 -> NAK, broadcast (RFC 2131 §4.1) */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, VM_IP, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_NAK);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->yiaddr), 0);
	CU_ASSERT_TRUE(rep.dest.raw);
	CU_ASSERT_EQUAL(rep.dest.ip, 0xffffffffu);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNKNOWN_MAC], 0);
	/* SELECTING with our server id */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, selecting, sizeof(selecting));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_NAK);
	/* INIT-REBOOT: silent, counted */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, reboot, sizeof(reboot));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNKNOWN_MAC], 1);
	/* renewing an address of another subnet: not ours, silent */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0xc0a80005, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNKNOWN_MAC], 2);
	dhcp_server_free(s);
}

static void
test_other_server(void)
{
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	struct req r;
	uint8_t other[] = {
	    DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 100, DHCP_OPT_SERVER_ID, 4, 10, 0, 0, 2};
	size_t len;

	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, other, sizeof(other));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_OTHER_SERVER], 1);
	len = build(&r, DHCP_MSG_DECLINE, vm_mac, 0, 0, 0, other, sizeof(other));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_OTHER_SERVER], 2);
	CU_ASSERT_EQUAL(s->stats.declines, 0);
	dhcp_server_free(s);
}

static unsigned unknown_calls, decline_calls, release_calls;
static uint32_t cb_ip;
static uint8_t cb_mac[6];

static int
on_unknown(void *userdata, const uint8_t mac[6], uint32_t *ret_ip)
{
	unknown_calls++;
	if (mac[5] == 0xcc) {
		*ret_ip = *(uint32_t *)userdata;
		return 0;
	}
	return -ENOENT;
}

static void
on_decline(void *userdata, const uint8_t mac[6], uint32_t ip)
{
	decline_calls++;
	memcpy(cb_mac, mac, 6);
	cb_ip = ip;
}

static void
on_release(void *userdata, const uint8_t mac[6], uint32_t ip)
{
	release_calls++;
	memcpy(cb_mac, mac, 6);
	cb_ip = ip;
}

static void
test_unknown_mac(void)
{
	static const uint8_t stranger[6] = {0x52, 0x54, 0x00, 0, 0, 1};
	struct dhcp_server *s = server();
	uint32_t dyn_ip = 0x0a0000c8, ip = 0; /* 10.0.0.200 */
	struct dhcp_callbacks cb = {.on_unknown = on_unknown, .userdata = &dyn_ip};
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	/* no callback: silent, counted */
	len = build(&r, DHCP_MSG_DISCOVER, other_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNKNOWN_MAC], 1);
	/* INFORM from an unknown MAC: silent, counted, the callback is not asked */
	dhcp_server_set_callbacks(s, &cb);
	unknown_calls = 0;
	len = build(&r, DHCP_MSG_INFORM, other_mac, 0x0a000063, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(unknown_calls, 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNKNOWN_MAC], 2);
	/* the callback binds it: offered, and in the table */
	len = build(&r, DHCP_MSG_DISCOVER, other_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(unknown_calls, 1);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->yiaddr), dyn_ip);
	CU_ASSERT_EQUAL(dhcp_server_get_binding(s, other_mac, &ip), 0);
	CU_ASSERT_EQUAL(ip, dyn_ip);
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s), 2);
	/* the callback refuses: silent, counted */
	len = build(&r, DHCP_MSG_DISCOVER, stranger, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(unknown_calls, 2);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNKNOWN_MAC], 3);
	/* the callback returns an address bound to another MAC: silent, counted */
	dhcp_server_remove_binding(s, other_mac);
	dyn_ip = VM_IP;
	len = build(&r, DHCP_MSG_DISCOVER, other_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNKNOWN_MAC], 4);
	dhcp_server_free(s);
}

static struct dhcp_server *cb_server;

static int
on_unknown_binds(void *userdata, const uint8_t mac[6], uint32_t *ret_ip)
{
	*ret_ip = 0x0a0000c9;
	return dhcp_server_set_binding(cb_server, mac, *ret_ip, "dyn-vm");
}

/* on_offer / on_unknown of the test below: what they return, what they were asked */
static int offer_ret, unknown_ret;
static unsigned offer_calls;
static uint32_t asked_requested;

static int
on_offer_cb(void *userdata, const uint8_t mac[6], uint32_t *ret_ip)
{
	(void)mac;
	offer_calls++;
	*ret_ip = *(uint32_t *)userdata;
	return offer_ret;
}

static int
on_unknown_cb(void *userdata, const uint8_t mac[6], uint32_t *ret_ip)
{
	(void)mac;
	unknown_calls++;
	asked_requested = dhcp_server_requested_ip(cb_server);
	*ret_ip = *(uint32_t *)userdata;
	return unknown_ret;
}

/*
 * on_offer: a DISCOVER from an unbound MAC is offered what it gives, unbound (0), or bound (1);
 * -EBUSY is an offer_limit drop. The REQUEST goes to on_unknown, which reads the address asked
 * for; its -EAGAIN is silence where another error would be a DHCPNAK.
 */
static void
test_offer_callback(void)
{
	static const uint8_t stranger_mac[6] = {0x52, 0x54, 0x00, 0, 0, 2};
	struct dhcp_server *s = server();
	uint32_t dyn_ip = 0x0a0000c8; /* 10.0.0.200 */
	struct dhcp_callbacks cb = {
	    .on_offer = on_offer_cb, .on_unknown = on_unknown_cb, .userdata = &dyn_ip};
	uint8_t sel[] = {
	    DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 200, DHCP_OPT_SERVER_ID, 4, 10, 0, 0, 1};
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	cb_server = s;
	dhcp_server_set_callbacks(s, &cb);
	unknown_calls = offer_calls = 0;
	/* offered, not bound: the engine's table is unchanged */
	offer_ret = 0;
	len = build(&r, DHCP_MSG_DISCOVER, other_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->yiaddr), dyn_ip);
	CU_ASSERT_EQUAL(dhcp_server_get_binding(s, other_mac, NULL), -ENOENT);
	CU_ASSERT_EQUAL(offer_calls, 1);
	CU_ASSERT_EQUAL(unknown_calls, 0);
	/* a bound MAC is never asked */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(offer_calls, 1);
	/* the cap: offer_limit */
	offer_ret = -EBUSY;
	len = build(&r, DHCP_MSG_DISCOVER, other_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_OFFER_LIMIT], 1);
	CU_ASSERT_STRING_EQUAL(dhcp_drop_reason_name(DHCP_DROP_OFFER_LIMIT), "offer_limit");
	offer_ret = -ENOSPC;
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNKNOWN_MAC], 1);
	/* SELECTING: the callback could not record it now: silence, not a DHCPNAK */
	unknown_ret = -EAGAIN;
	len = build(&r, DHCP_MSG_REQUEST, other_mac, 0, 0, 0, sel, sizeof(sel));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(asked_requested, dyn_ip);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNKNOWN_MAC], 2);
	/* not available: DHCPNAK */
	unknown_ret = -EADDRNOTAVAIL;
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_NAK);
	/* committed: ACKed and bound */
	unknown_ret = 0;
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(dhcp_server_get_binding(s, other_mac, NULL), 0);
	/* RENEWING names ciaddr; outside a callback nothing */
	dhcp_server_remove_binding(s, other_mac);
	len = build(&r, DHCP_MSG_REQUEST, other_mac, 0x0a0000c8, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(asked_requested, 0x0a0000c8);
	CU_ASSERT_EQUAL(dhcp_server_requested_ip(s), 0u);
	/* 1: a lease, bound and offered */
	offer_ret = 1;
	dyn_ip = 0x0a0000c9;
	len = build(&r, DHCP_MSG_DISCOVER, stranger_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(dhcp_server_get_binding(s, stranger_mac, NULL), 0);
	dhcp_server_free(s);
}

/* A callback that binds the MAC itself (with a hostname) is not overridden. */
static void
test_unknown_mac_bound_by_callback(void)
{
	struct dhcp_server *s = server();
	struct dhcp_callbacks cb = {.on_unknown = on_unknown_binds};
	struct dhcp_reply rep;
	struct req r;
	size_t len, n = 0;
	const uint8_t *v;

	cb_server = s;
	dhcp_server_set_callbacks(s, &cb);
	len = build(&r, DHCP_MSG_DISCOVER, other_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->yiaddr), 0x0a0000c9);
	v = reply_opt(&rep, DHCP_OPT_HOSTNAME, &n);
	CU_ASSERT(v != NULL && n == 6 && memcmp(v, "dyn-vm", 6) == 0);
	dhcp_server_free(s);
}

/*
 * RFC 2131 §4.3.1: the address offered must be valid on the network of giaddr. A relay on
 * another network than the pool's gets nothing from this pool: silence, counted as
 * wrong_subnet, and --dynamic is not asked for an address.
 */
static void
test_relay_wrong_subnet(void)
{
	struct dhcp_server *s = server();
	struct dhcp_callbacks cb = {.on_unknown = on_unknown_binds};
	uint8_t sel[] = {
	    DHCP_OPT_SERVER_ID, 4, 10, 0, 0, 1, DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 100};
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	cb_server = s;
	dhcp_server_set_callbacks(s, &cb);
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, FAR_RELAY_IP, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_WRONG_SUBNET], 1);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, FAR_RELAY_IP, 0, sel, sizeof(sel));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_WRONG_SUBNET], 2);
	/* renewing through a far relay (ciaddr): silent too, no NAK */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, VM_IP, FAR_RELAY_IP, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_WRONG_SUBNET], 3);
	/* an unknown MAC: the dynamic callback is not asked, nothing is bound */
	len = build(&r, DHCP_MSG_DISCOVER, other_mac, 0, FAR_RELAY_IP, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_WRONG_SUBNET], 4);
	CU_ASSERT_EQUAL(dhcp_server_get_binding(s, other_mac, NULL), -ENOENT);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNKNOWN_MAC], 0);
	/* the pool's own subnet through a relay, and no relay: answered */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, RELAY_IP, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->yiaddr), VM_IP);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, RELAY_IP, 0, sel, sizeof(sel));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_ACK);
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_WRONG_SUBNET], 4);
	CU_ASSERT_STRING_EQUAL(dhcp_drop_reason_name(DHCP_DROP_WRONG_SUBNET), "wrong_subnet");
	dhcp_server_free(s);
}

/* Broadcast, multicast and all-zero MACs are no NIC's: never bound, never served. */
static void
test_group_mac_refused(void)
{
	static const uint8_t bad[][6] = {
	    {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, /* broadcast */
	    {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}, /* IPv4 multicast */
	    {0x33, 0x33, 0x00, 0x00, 0x00, 0x01}, /* IPv6 multicast */
	    {0x53, 0x54, 0x00, 0x12, 0x34, 0x56}, /* group bit on a 52:54:00 lookalike */
	    {0x00, 0x00, 0x00, 0x00, 0x00, 0x00}, /* all zero */
	};
	struct dhcp_server *s = server();
	struct dhcp_callbacks cb = {.on_unknown = on_unknown_binds};
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	cb_server = s;
	dhcp_server_set_callbacks(s, &cb);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CU_ASSERT_FALSE(dhcp_mac_bindable(bad[i]));
		CU_ASSERT_EQUAL(
		    dhcp_server_set_binding(s, bad[i], 0x0a000070u + (uint32_t)i, "x"), -EINVAL);
		CU_ASSERT_EQUAL(dhcp_server_get_binding(s, bad[i], NULL), -ENOENT);
		/* --dynamic is not asked for one either: silent, unknown */
		len = build(&r, DHCP_MSG_DISCOVER, bad[i], 0, 0, DHCP_FLAG_BROADCAST, NULL, 0);
		CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
		CU_ASSERT_EQUAL(dhcp_server_get_binding(s, bad[i], NULL), -ENOENT);
	}
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNKNOWN_MAC], sizeof(bad) / sizeof(bad[0]));
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s), 1);
	/* locally administered unicast is fine */
	CU_ASSERT_TRUE(dhcp_mac_bindable((const uint8_t[]){0x02, 0, 0, 0, 0, 1}));
	CU_ASSERT_TRUE(dhcp_mac_bindable(vm_mac));
	dhcp_server_free(s);
}

static void
test_inform(void)
{
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	struct req r;
	size_t len, n = 0;

	len = build(&r, DHCP_MSG_INFORM, vm_mac, VM_IP, 0, 0, prl_std, sizeof(prl_std));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->yiaddr), 0);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->ciaddr), VM_IP);
	CU_ASSERT_PTR_NULL(reply_opt(&rep, DHCP_OPT_LEASE_TIME, &n));
	CU_ASSERT_PTR_NULL(reply_opt(&rep, DHCP_OPT_T1, &n));
	CU_ASSERT_PTR_NULL(reply_opt(&rep, DHCP_OPT_T2, &n));
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_ROUTER, &n));
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_SERVER_ID, &n));
	/* §4.3.5: straight to ciaddr */
	CU_ASSERT_FALSE(rep.dest.raw);
	CU_ASSERT_EQUAL(rep.dest.ip, VM_IP);
	CU_ASSERT_EQUAL(rep.dest.port, 68);
	CU_ASSERT_EQUAL(s->stats.rx[DHCP_MSG_INFORM], 1);
	dhcp_server_free(s);
}

static void
test_decline(void)
{
	struct dhcp_server *s = server();
	struct dhcp_callbacks cb = {.on_decline = on_decline};
	uint8_t declined[] = {
	    DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 100, DHCP_OPT_SERVER_ID, 4, 10, 0, 0, 1};
	uint8_t req_new[] = {DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 101};
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	dhcp_server_set_callbacks(s, &cb);
	decline_calls = 0;
	len = build(&r, DHCP_MSG_DECLINE, vm_mac, 0, 0, 0, declined, sizeof(declined));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.declines, 1);
	CU_ASSERT_EQUAL(s->stats.rx[DHCP_MSG_DECLINE], 1);
	CU_ASSERT_EQUAL(decline_calls, 1);
	CU_ASSERT_EQUAL(cb_ip, VM_IP);
	CU_ASSERT(memcmp(cb_mac, vm_mac, 6) == 0);
	/* not offered again: silence, counted */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_DECLINED], 1);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, declined, sizeof(declined));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_DECLINED], 2);
	/* refreshing the same binding (a resync) keeps the mark */
	CU_ASSERT_EQUAL(dhcp_server_set_binding(s, vm_mac, VM_IP, "vm-one"), 0);
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_DECLINED], 3);
	/* the binding changes: offered again */
	CU_ASSERT_EQUAL(dhcp_server_set_binding(s, vm_mac, VM_IP + 1, "vm-one"), 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->yiaddr), VM_IP + 1);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, req_new, sizeof(req_new));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_ACK);
	/* a DECLINE without option 50 is malformed */
	len = build(&r, DHCP_MSG_DECLINE, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_MALFORMED], 1);
	CU_ASSERT_EQUAL(decline_calls, 1);
	dhcp_server_free(s);
}

static void
test_release(void)
{
	struct dhcp_server *s = server();
	struct dhcp_callbacks cb = {.on_release = on_release};
	struct dhcp_reply rep;
	struct req r;
	uint32_t ip = 0;
	size_t len;

	dhcp_server_set_callbacks(s, &cb);
	release_calls = 0;
	len = build(&r, DHCP_MSG_RELEASE, vm_mac, VM_IP, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(release_calls, 1);
	CU_ASSERT_EQUAL(cb_ip, VM_IP);
	CU_ASSERT_EQUAL(s->stats.rx[DHCP_MSG_RELEASE], 1);
	/* the binding belongs to the control plane: unchanged */
	CU_ASSERT_EQUAL(dhcp_server_get_binding(s, vm_mac, &ip), 0);
	CU_ASSERT_EQUAL(ip, VM_IP);
	dhcp_server_free(s);
}

/* A standby replica: every request dropped as not_serving, nothing answered; active again:
 * answered. */
static void
test_standby(void)
{
	struct dhcp_server *s = server();
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	dhcp_server_set_standby(s, true);
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, VM_IP, 0, 0, NULL, 0); /* renewing */
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_NOT_SERVING], 2);
	CU_ASSERT_EQUAL(s->stats.tx[DHCP_MSG_OFFER] + s->stats.tx[DHCP_MSG_ACK], 0);
	dhcp_server_set_standby(s, false);
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_NOT_SERVING], 2);
	dhcp_server_free(s);
}

static void
test_unsupported_and_not_serving(void)
{
	struct dhcp_server *s = server(), *idle = NULL;
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	len = build(&r, DHCP_MSG_OFFER, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNSUPPORTED], 1);
	len = build(&r, DHCP_MSG_ACK, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNSUPPORTED], 2);
	/* no option set yet */
	CU_ASSERT_FATAL(dhcp_server_new(&idle) == 0);
	CU_ASSERT_EQUAL(dhcp_server_set_binding(idle, vm_mac, VM_IP, NULL), 0);
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(idle, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(dhcp_server_stats(idle)->drops[DHCP_DROP_NOT_SERVING], 1);
	dhcp_server_free(idle);
	dhcp_server_free(s);
}

static void
test_malformed(void)
{
	struct dhcp_server *s = server();
	const struct dhcp_stats *st = dhcp_server_stats(s);
	uint8_t overrun[] = {DHCP_OPT_HOSTNAME, 200, 'x'};
	uint8_t bad50[] = {DHCP_OPT_REQUESTED_IP, 3, 10, 0, 0};
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, 100, &rep), 0);		     /* truncated header */
	CU_ASSERT_EQUAL(handle(s, &r, DHCP_FIXED_LEN + 3, &rep), 0); /* no full cookie */
	CU_ASSERT_EQUAL(st->drops[DHCP_DROP_MALFORMED], 2);
	r.cookie[0] = 0x64; /* bad magic cookie */
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(st->drops[DHCP_DROP_MALFORMED], 3);
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	r.m.hlen = 17;
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(st->drops[DHCP_DROP_MALFORMED], 4);
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, overrun, sizeof(overrun));
	CU_ASSERT_EQUAL(handle(s, &r, len - 1, &rep), 0); /* without END: runs off the end */
	CU_ASSERT_EQUAL(st->drops[DHCP_DROP_MALFORMED], 5);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, bad50, sizeof(bad50));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(st->drops[DHCP_DROP_MALFORMED], 6);
	/* non-Ethernet, wrong hlen, BOOTREPLY */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	r.m.htype = 6;
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	r.m.htype = 1;
	r.m.hlen = 8;
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	r.m.hlen = 6;
	r.m.op = BOOTREPLY;
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(st->drops[DHCP_DROP_NOT_REQUEST], 3);
	/* no / bad option 53 */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	r.opts[0] = DHCP_OPT_PAD;
	r.opts[1] = DHCP_OPT_PAD;
	r.opts[2] = DHCP_OPT_PAD;
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	len = build(&r, 9, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	len = build(&r, 0, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(st->drops[DHCP_DROP_NO_TYPE], 3);
	/* none of these reached the message rules */
	CU_ASSERT_EQUAL(st->rx[DHCP_MSG_DISCOVER], 0);
	dhcp_server_free(s);
}

/* --- reply contents ------------------------------------------------------------------------ */

static void
expect_bytes(const char *file, const struct dhcp_reply *rep)
{
	static uint8_t want[2048];
	size_t n = load_hex(file, want, sizeof(want));

	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(rep->payload_len, n);
	if (rep->payload_len == n && memcmp(rep->payload, want, n) != 0) {
		for (size_t i = 0; i < n; i++)
			if (rep->payload[i] != want[i]) {
				fprintf(stderr,
				    "%s: first difference at byte %zu: %02x, want %02x\n", file, i,
				    rep->payload[i], want[i]);
				break;
			}
		CU_FAIL("reply bytes differ");
	}
}

static void
test_bytes(void)
{
	struct dhcp_server *s = server();
	uint8_t nak[] = {DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 101, DHCP_OPT_SERVER_ID, 4, 10, 0, 0,
	    1, DHCP_OPT_PRL, 6, 1, 3, 6, 12, 15, 51};
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, prl_std, sizeof(prl_std));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	expect_bytes("dhcp-reply-offer.hex", &rep);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, VM_IP, 0, 0, prl_std, sizeof(prl_std));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_ACK);
	expect_bytes("dhcp-reply-ack.hex", &rep);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, nak, sizeof(nak));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_NAK);
	expect_bytes("dhcp-reply-nak.hex", &rep);
	len = build(&r, DHCP_MSG_INFORM, vm_mac, VM_IP, 0, 0, prl_std, sizeof(prl_std));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_ACK);
	expect_bytes("dhcp-reply-inform.hex", &rep);
	dhcp_server_free(s);
}

static void
test_prl_order(void)
{
	struct dhcp_server *s = server();
	uint8_t prl[] = {DHCP_OPT_PRL, 7, 6, 51, 3, 99, 6, 1, 54};
	static const uint8_t want[] = {53, 6, 51, 3, 1, 54, 58, 59, 12, 15};
	uint8_t codes[64];
	struct dhcp_reply rep;
	struct req r;
	size_t len, n;

	/* 99 is unknown (skipped), 6 twice (once); then the mandatory ones, then defaults */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, prl, sizeof(prl));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	n = reply_codes(&rep, codes, sizeof(codes));
	CU_ASSERT_EQUAL(n, sizeof(want));
	CU_ASSERT(n == sizeof(want) && memcmp(codes, want, n) == 0);
	dhcp_server_free(s);
}

static void
big_options(struct dhcp_options *o)
{
	base_options(o);
	for (size_t i = 0; i < DHCP_MAX_SEARCH; i++)
		snprintf(o->search[i], sizeof(o->search[i]),
		    "zone%02zu.a-long-label-to-fill-it.example%02zu.org", i, i);
	o->n_search = DHCP_MAX_SEARCH;
	for (size_t i = 0; i < DHCP_MAX_ROUTES; i++)
		o->routes[i] = (struct dhcp_route){0xac100000u + ((uint32_t)i << 8), 24, ROUTER_IP};
	o->n_routes = DHCP_MAX_ROUTES;
}

static void
test_max_message_size(void)
{
	struct dhcp_server *s = server();
	struct dhcp_options o;
	uint8_t prl[] = {DHCP_OPT_PRL, 5, 1, 3, 119, 121, 6};
	uint8_t prl_no121[] = {DHCP_OPT_PRL, 4, 1, 3, 119, 6};
	uint8_t prl57[] = {DHCP_OPT_PRL, 5, 1, 3, 119, 121, 6, DHCP_OPT_MAX_SIZE, 2, 0x05, 0xdc};
	uint8_t prl57_small[] = {
	    DHCP_OPT_PRL, 5, 1, 3, 119, 121, 6, DHCP_OPT_MAX_SIZE, 2, 0x01, 0x00};
	struct dhcp_reply rep;
	struct req r;
	size_t len, n = 0;

	big_options(&o);
	CU_ASSERT_FATAL(dhcp_server_set_options(s, &o) == 0);
	CU_ASSERT(s->optset->len[119] + s->optset->len[121] > 600);
	/* no 57: 576-byte datagrams, so at most 548 DHCP bytes; the mandatory options stay,
	 * 119 (too big) is left out, and the small ones after it still go in PRL order */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, prl, sizeof(prl));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT(rep.payload_len <= 576 - 28);
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_SUBNET_MASK, &n));
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_ROUTER, &n));
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_SERVER_ID, &n));
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_LEASE_TIME, &n));
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_T2, &n));
	CU_ASSERT_PTR_NULL(reply_opt(&rep, DHCP_OPT_DOMAIN_SEARCH, &n));
	/* 121 (265 bytes) fits in what is left; the options after it (6, 12, 15) do not */
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_CLASSLESS_ROUTES, &n));
	CU_ASSERT_PTR_NULL(reply_opt(&rep, DHCP_OPT_DNS, &n));
	/* PRL without 121: 6, 12 and 15 fit instead */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, prl_no121, sizeof(prl_no121));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT(rep.payload_len <= 576 - 28);
	CU_ASSERT_PTR_NULL(reply_opt(&rep, DHCP_OPT_DOMAIN_SEARCH, &n));
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_DNS, &n));
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_HOSTNAME, &n));
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_DOMAIN_NAME, &n));
	/* 57 = 1500: everything fits */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, prl57, sizeof(prl57));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT(rep.payload_len > 576 && rep.payload_len <= 1500 - 28);
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_DOMAIN_SEARCH, &n));
	CU_ASSERT(n > 255); /* split over several instances, concatenated by the parser */
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_CLASSLESS_ROUTES, &n));
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_DNS, &n));
	/* 57 below 576 counts as 576 */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, prl57_small, sizeof(prl57_small));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT(rep.payload_len <= 576 - 28 && rep.payload_len >= 300);
	dhcp_server_free(s);
}

static void
test_relay_agent_echo(void)
{
	struct dhcp_server *s = server();
	uint8_t o82[] = {DHCP_OPT_RELAY_AGENT, 8, 1, 2, 'p', '1', 2, 2, 'r', '1'};
	uint8_t nak[] = {DHCP_OPT_RELAY_AGENT, 8, 1, 2, 'p', '1', 2, 2, 'r', '1',
	    DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 9};
	uint8_t codes[64];
	struct dhcp_reply rep;
	struct req r;
	size_t len, n = 0, nc;
	const uint8_t *v;

	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, RELAY_IP, 0, o82, sizeof(o82));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	v = reply_opt(&rep, DHCP_OPT_RELAY_AGENT, &n);
	CU_ASSERT(v != NULL && n == 8 && memcmp(v, o82 + 2, 8) == 0);
	nc = reply_codes(&rep, codes, sizeof(codes));
	CU_ASSERT(nc > 0 && codes[nc - 1] == DHCP_OPT_RELAY_AGENT); /* last */
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->giaddr), RELAY_IP);
	/* a NAK through a relay: echoed too, to the relay, with the broadcast bit */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, RELAY_IP, 0, nak, sizeof(nak));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_NAK);
	v = reply_opt(&rep, DHCP_OPT_RELAY_AGENT, &n);
	CU_ASSERT(v != NULL && n == 8 && memcmp(v, o82 + 2, 8) == 0);
	CU_ASSERT_EQUAL(be16_get(reply_msg(&rep)->flags), DHCP_FLAG_BROADCAST);
	CU_ASSERT_FALSE(rep.dest.raw);
	CU_ASSERT_EQUAL(rep.dest.ip, RELAY_IP);
	CU_ASSERT_EQUAL(rep.dest.port, 67);
	/* no 82 in, none out */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, RELAY_IP, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_PTR_NULL(reply_opt(&rep, DHCP_OPT_RELAY_AGENT, &n));
	dhcp_server_free(s);
}

/* RFC 6842: the client identifier comes back unchanged, in ACK and NAK alike, before 82. */
static void
test_client_id_echo(void)
{
	struct dhcp_server *s = server();
	uint8_t opts[] = {DHCP_OPT_CLIENT_ID, 7, 1, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56,
	    DHCP_OPT_RELAY_AGENT, 3, 1, 1, 'x'};
	uint8_t nak[] = {DHCP_OPT_CLIENT_ID, 7, 1, 0x52, 0x54, 0x00, 0x12, 0x34, 0x56,
	    DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 9};
	uint8_t codes[64];
	struct dhcp_reply rep;
	struct req r;
	size_t len, n = 0, nc;
	const uint8_t *v;

	len = build(&r, DHCP_MSG_REQUEST, vm_mac, VM_IP, RELAY_IP, 0, opts, sizeof(opts));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_ACK);
	v = reply_opt(&rep, DHCP_OPT_CLIENT_ID, &n);
	CU_ASSERT(v != NULL && n == 7 && memcmp(v, opts + 2, 7) == 0);
	nc = reply_codes(&rep, codes, sizeof(codes));
	CU_ASSERT(nc >= 2 && codes[nc - 2] == DHCP_OPT_CLIENT_ID &&
		  codes[nc - 1] == DHCP_OPT_RELAY_AGENT);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, nak, sizeof(nak));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_NAK);
	v = reply_opt(&rep, DHCP_OPT_CLIENT_ID, &n);
	CU_ASSERT(v != NULL && n == 7 && memcmp(v, opts + 2, 7) == 0);
	/* none in, none out */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_PTR_NULL(reply_opt(&rep, DHCP_OPT_CLIENT_ID, &n));
	dhcp_server_free(s);
}

static void
test_option_swap(void)
{
	struct dhcp_server *s = server();
	struct dhcp_options o;
	struct dhcp_reply rep;
	struct req r;
	size_t len, n = 0;
	const uint8_t *v;

	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, prl_std, sizeof(prl_std));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	v = reply_opt(&rep, DHCP_OPT_DNS, &n);
	CU_ASSERT(v != NULL && n == 4 && be32_get(v) == 0x08080808);
	base_options(&o);
	o.dns[0] = 0x01010101;
	o.dns[1] = 0x01000001;
	o.n_dns = 2;
	o.lease_time = 600;
	CU_ASSERT_EQUAL(dhcp_server_set_options(s, &o), 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	v = reply_opt(&rep, DHCP_OPT_DNS, &n);
	CU_ASSERT(v != NULL && n == 8 && be32_get(v) == 0x01010101);
	v = reply_opt(&rep, DHCP_OPT_LEASE_TIME, &n);
	CU_ASSERT(v != NULL && be32_get(v) == 600);
	/* an invalid set is refused and the current one stays */
	o.prefix = 40;
	CU_ASSERT_EQUAL(dhcp_server_set_options(s, &o), -EINVAL);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	v = reply_opt(&rep, DHCP_OPT_LEASE_TIME, &n);
	CU_ASSERT(v != NULL && be32_get(v) == 600);
	dhcp_server_free(s);
}

/* --- destinations (RFC 2131 §4.1) ---------------------------------------------------------- */

static void
check_frame(const struct dhcp_reply *rep, const uint8_t mac[6], uint32_t ip)
{
	const uint8_t *f = rep->frame;

	CU_ASSERT_FATAL(f != NULL);
	CU_ASSERT_EQUAL(rep->frame_len, rep->payload_len + 42);
	CU_ASSERT(memcmp(f, mac, 6) == 0);    /* Ethernet destination */
	CU_ASSERT(memcmp(f + 6, hw, 6) == 0); /* Ethernet source: our interface */
	CU_ASSERT_EQUAL(be32_get(f + 26), SERVER_IP);
	CU_ASSERT_EQUAL(be32_get(f + 30), ip);
	CU_ASSERT_EQUAL(be16_get(f + 34), 67);
	CU_ASSERT_EQUAL(be16_get(f + 36), 68);
	CU_ASSERT(frame_checksums_ok(f, rep->frame_len));
	CU_ASSERT(memcmp(f + 42, rep->payload, rep->payload_len) == 0);
}

static void
test_destinations(void)
{
	static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct dhcp_server *s = server();
	uint8_t bad[] = {DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 9};
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	/* giaddr: the relay's server port (a bare message: the IP destination only, no frame;
	 * from a received frame it goes to the frame's source, test_unicast_via_frame_source) */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, RELAY_IP, DHCP_FLAG_BROADCAST, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_FALSE(rep.dest.raw);
	CU_ASSERT_EQUAL(rep.dest.ip, RELAY_IP);
	CU_ASSERT_EQUAL(rep.dest.port, 67);
	CU_ASSERT_PTR_NULL(rep.frame);
	/* ciaddr: unicast to ciaddr:68 (no frame either) */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, VM_IP, 0, DHCP_FLAG_BROADCAST, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_ACK);
	CU_ASSERT_FALSE(rep.dest.raw);
	CU_ASSERT_EQUAL(rep.dest.ip, VM_IP);
	CU_ASSERT_EQUAL(rep.dest.port, 68);
	/* broadcast bit: 255.255.255.255 at ff:ff:ff:ff:ff:ff */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, DHCP_FLAG_BROADCAST, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_TRUE(rep.dest.raw);
	check_frame(&rep, bcast, 0xffffffffu);
	/* else yiaddr at chaddr */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_TRUE(rep.dest.raw);
	check_frame(&rep, vm_mac, VM_IP);
	/* a NAK without giaddr is always broadcast, even with ciaddr and no broadcast bit */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0x0a000009, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_NAK);
	CU_ASSERT_TRUE(rep.dest.raw);
	check_frame(&rep, bcast, 0xffffffffu);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, bad, sizeof(bad));
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), DHCP_MSG_NAK);
	check_frame(&rep, bcast, 0xffffffffu);
	dhcp_server_free(s);
}

/* --- bindings through the server API -------------------------------------------------------- */

static void
collect(void *userdata, const uint8_t mac[6], uint32_t ip, const char *hostname)
{
	(*(unsigned *)userdata)++;
}

static void
test_sync(void)
{
	struct dhcp_server *s = server();
	uint32_t ip = 0;
	unsigned seen = 0;
	struct dhcp_reply rep;
	struct req r;
	size_t len;

	CU_ASSERT_EQUAL(dhcp_server_set_binding(s, other_mac, VM_IP + 1, NULL), 0);
	CU_ASSERT_EQUAL(dhcp_server_set_binding(s, other_mac, VM_IP, NULL), -EEXIST);
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s), 2);
	dhcp_server_sync_begin(s);
	CU_ASSERT_EQUAL(dhcp_server_set_binding(s, other_mac, VM_IP + 1, "other"), 0);
	CU_ASSERT_EQUAL(dhcp_server_sync_end(s), 1);
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s), 1);
	CU_ASSERT_EQUAL(dhcp_server_get_binding(s, vm_mac, &ip), -ENOENT);
	CU_ASSERT_EQUAL(dhcp_server_get_binding(s, other_mac, &ip), 0);
	CU_ASSERT_EQUAL(ip, VM_IP + 1);
	dhcp_server_foreach_binding(s, collect, &seen);
	CU_ASSERT_EQUAL(seen, 1);
	/* the removed MAC is now unknown */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	CU_ASSERT_EQUAL(handle(s, &r, len, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_UNKNOWN_MAC], 1);
	/* and its address is free for someone else */
	CU_ASSERT_EQUAL(dhcp_server_set_binding(s, vm_mac, VM_IP + 1, NULL), -EEXIST);
	CU_ASSERT_EQUAL(dhcp_server_set_binding(s, vm_mac, VM_IP, NULL), 0);
	CU_ASSERT_EQUAL(dhcp_server_remove_binding(s, vm_mac), 0);
	CU_ASSERT_EQUAL(dhcp_server_remove_binding(s, vm_mac), -ENOENT);
	dhcp_server_free(s);
}

/* --- real client frames (tests/data, captured from busybox udhcpc, dhclient, dhcpcd) --------- */

static void
test_captured_frames(void)
{
	struct dhcp_server *s = server();
	struct dhcp_callbacks cb = {.on_decline = on_decline};
	static uint8_t f[2048];
	struct dhcp_reply rep;
	size_t n, olen = 0;

	dhcp_server_set_callbacks(s, &cb);
	n = load_hex("dhcp-udhcpc-discover.hex", f, sizeof(f));
	CU_ASSERT_FATAL(n > 0);
	CU_ASSERT_EQUAL(dhcp_handle_frame(s, f, n, false, 1, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_PTR_NOT_NULL(reply_opt(&rep, DHCP_OPT_SERVER_ID, &olen));
	CU_ASSERT_TRUE(rep.dest.raw); /* no broadcast bit: to yiaddr at chaddr */
	CU_ASSERT_EQUAL(rep.dest.ip, VM_IP);
	CU_ASSERT(memcmp(rep.dest.mac, vm_mac, 6) == 0);
	n = load_hex("dhcp-udhcpc-request.hex", f, sizeof(f));
	CU_ASSERT_EQUAL(dhcp_handle_frame(s, f, n, false, 1, &rep), DHCP_MSG_ACK);
	n = load_hex("dhcp-dhclient-discover.hex", f, sizeof(f));
	CU_ASSERT_EQUAL(dhcp_handle_frame(s, f, n, false, 1, &rep), DHCP_MSG_OFFER);
	/* dhclient does not set the broadcast bit: unicast to yiaddr at chaddr */
	CU_ASSERT_TRUE(rep.dest.raw);
	CU_ASSERT_EQUAL(rep.dest.ip, VM_IP);
	n = load_hex("dhcp-dhclient-request.hex", f, sizeof(f));
	CU_ASSERT_EQUAL(dhcp_handle_frame(s, f, n, false, 1, &rep), DHCP_MSG_ACK);
	n = load_hex("dhcp-dhclient-inform.hex", f, sizeof(f));
	CU_ASSERT_EQUAL(dhcp_handle_frame(s, f, n, false, 1, &rep), DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(be32_get(reply_msg(&rep)->yiaddr), 0);
	n = load_hex("dhcp-dhcpcd-request.hex", f, sizeof(f));
	CU_ASSERT_EQUAL(dhcp_handle_frame(s, f, n, false, 1, &rep), DHCP_MSG_ACK);
	/* a flipped bit: bad UDP checksum, unless the kernel says it is not filled in */
	f[300] ^= 0x01;
	CU_ASSERT_EQUAL(dhcp_handle_frame(s, f, n, false, 1, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_BAD_CHECKSUM], 1);
	f[300] ^= 0x01;
	n = load_hex("dhcp-dhcpcd-decline.hex", f, sizeof(f));
	decline_calls = 0;
	CU_ASSERT_EQUAL(dhcp_handle_frame(s, f, n, false, 1, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.declines, 1);
	CU_ASSERT_EQUAL(decline_calls, 1);
	CU_ASSERT_EQUAL(cb_ip, VM_IP);
	n = load_hex("dhcp-dhcpcd-discover.hex", f, sizeof(f));
	CU_ASSERT_EQUAL(dhcp_handle_frame(s, f, n, false, 1, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_DECLINED], 1);
	CU_ASSERT_EQUAL(s->stats.rx[DHCP_MSG_DISCOVER], 3);
	CU_ASSERT_EQUAL(s->stats.rx[DHCP_MSG_REQUEST], 3);
	CU_ASSERT_EQUAL(s->stats.rx[DHCP_MSG_INFORM], 1);
	/* truncated frame */
	CU_ASSERT_EQUAL(dhcp_handle_frame(s, f, 40, false, 1, &rep), 0);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_MALFORMED], 1);
	dhcp_server_free(s);
}

/* Through the frame path, relay and ciaddr replies go to the request's Ethernet source. */
static void
test_unicast_via_frame_source(void)
{
	static const uint8_t relay_mac[6] = {0x02, 0xaa, 0xbb, 0xcc, 0xdd, 0xee};
	struct dhcp_server *s = server();
	static uint8_t f[2048];
	struct dhcp_reply rep;
	struct req r;
	size_t len, n;

	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, RELAY_IP, 0, NULL, 0);
	memcpy(f + 42, &r, len);
	n = dhcp_frame_build(f + 42, len, relay_mac, hw, RELAY_IP, SERVER_IP, 67, 67);
	CU_ASSERT_EQUAL(dhcp_handle_frame(s, f, n, false, 1, &rep), DHCP_MSG_OFFER);
	CU_ASSERT_TRUE(rep.dest.raw);
	CU_ASSERT_EQUAL(rep.dest.ip, RELAY_IP);
	CU_ASSERT_EQUAL(rep.dest.port, 67);
	CU_ASSERT_FATAL(rep.frame != NULL);
	CU_ASSERT(memcmp(rep.frame, relay_mac, 6) == 0);
	CU_ASSERT_EQUAL(be32_get(rep.frame + 30), RELAY_IP);
	CU_ASSERT_EQUAL(be16_get(rep.frame + 36), 67);
	CU_ASSERT(frame_checksums_ok(rep.frame, rep.frame_len));
	/* renewal from the client itself */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, VM_IP, 0, 0, NULL, 0);
	memcpy(f + 42, &r, len);
	n = dhcp_frame_build(f + 42, len, vm_mac, hw, VM_IP, SERVER_IP, 68, 67);
	CU_ASSERT_EQUAL(dhcp_handle_frame(s, f, n, false, 1, &rep), DHCP_MSG_ACK);
	CU_ASSERT_TRUE(rep.dest.raw);
	CU_ASSERT(memcmp(rep.frame, vm_mac, 6) == 0);
	CU_ASSERT_EQUAL(be32_get(rep.frame + 30), VM_IP);
	CU_ASSERT_EQUAL(be16_get(rep.frame + 36), 68);
	/* the same renewal as a bare message (no frame to answer): no frame, and nothing sent */
	CU_ASSERT_EQUAL(dhcp_handle_message(s, f + 42, len, 1, &rep), DHCP_MSG_ACK);
	CU_ASSERT_FALSE(rep.dest.raw);
	CU_ASSERT_PTR_NULL(rep.frame);
	{
		struct dhcp_reply *one = &rep;
		bool sent = true;

		CU_ASSERT_EQUAL(dhcp_socket_send(-1, 1, &one, 1, &sent), 0);
		CU_ASSERT_FALSE(sent);
	}
	dhcp_server_free(s);
}

/* --- on_decision, and the agent's decision log over it ----------------------------------- */

/* What on_decision reported, copied (its pointers are borrowed for the call). */
struct seen {
	struct dhcp_decision d;
	uint8_t mac[6];
	char hostname[DHCP_HOSTNAME_MAX + 1];
	bool has_hostname;
};
static struct seen seen[16];
static size_t n_seen;

static void
on_decision_record(void *userdata, const struct dhcp_decision *d)
{
	struct seen *x;

	(void)userdata;
	if (n_seen >= ELEMENTSOF(seen)) {
		n_seen++;
		return;
	}
	x = &seen[n_seen++];
	x->d = *d;
	memcpy(x->mac, d->mac, 6);
	x->has_hostname = d->hostname != NULL;
	snprintf(x->hostname, sizeof(x->hostname), "%s", d->hostname ? d->hostname : "");
}

static int
handle_at(struct dhcp_server *s, const struct req *r, size_t len, uint64_t now)
{
	struct dhcp_reply rep;

	return dhcp_handle_message(s, (const uint8_t *)r, len, now, &rep);
}

/* Handles one request; on_decision must have been called exactly once for it: returns that. */
static const struct seen *
decide(struct dhcp_server *s, const struct req *r, size_t len, uint64_t now, int want_reply)
{
	size_t before = n_seen;

	CU_ASSERT_EQUAL(handle_at(s, r, len, now), want_reply);
	CU_ASSERT_EQUAL_FATAL(n_seen, before + 1);
	CU_ASSERT_EQUAL(seen[before].d.now, now);
	return &seen[before];
}

/* on_decision: once per request with a usable chaddr, with the right fields. */
static void
test_decision_hook(void)
{
	struct dhcp_server *s = server();
	struct dhcp_callbacks cb = {.on_decision = on_decision_record};
	uint8_t sel[] = {
	    DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 100, DHCP_OPT_SERVER_ID, 4, 10, 0, 0, 1};
	uint8_t wrong[] = {DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 77};
	const struct seen *x;
	struct req r;
	size_t len;

	dhcp_server_set_callbacks(s, &cb);
	n_seen = 0;
	/* DISCOVER -> OFFER */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	x = decide(s, &r, len, 1000, DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(x->d.type, DHCP_MSG_DISCOVER);
	CU_ASSERT_EQUAL(x->d.reply, DHCP_MSG_OFFER);
	CU_ASSERT_FALSE(x->d.dropped);
	CU_ASSERT_EQUAL(memcmp(x->mac, vm_mac, 6), 0);
	CU_ASSERT_EQUAL(x->d.ip, VM_IP);
	CU_ASSERT_EQUAL(x->d.requested, 0);
	CU_ASSERT_EQUAL(x->d.xid, 0x11223344u);
	CU_ASSERT_EQUAL(x->d.giaddr, 0);
	CU_ASSERT_TRUE(x->has_hostname);
	CU_ASSERT_STRING_EQUAL(x->hostname, "vm-one");
	/* REQUEST (SELECTING) -> ACK */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, sel, sizeof(sel));
	be32_put(r.m.xid, 0xdeadbeef);
	x = decide(s, &r, len, 1001, DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(x->d.type, DHCP_MSG_REQUEST);
	CU_ASSERT_EQUAL(x->d.reply, DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(x->d.ip, VM_IP);
	CU_ASSERT_EQUAL(x->d.requested, VM_IP);
	CU_ASSERT_EQUAL(x->d.xid, 0xdeadbeefu);
	CU_ASSERT_STRING_EQUAL(x->hostname, "vm-one");
	/* INIT-REBOOT for another address -> NAK: no address given, the one asked for */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, wrong, sizeof(wrong));
	x = decide(s, &r, len, 1002, DHCP_MSG_NAK);
	CU_ASSERT_EQUAL(x->d.reply, DHCP_MSG_NAK);
	CU_ASSERT_FALSE(x->d.dropped);
	CU_ASSERT_EQUAL(x->d.ip, 0);
	CU_ASSERT_EQUAL(x->d.requested, 0x0a00004d);
	CU_ASSERT_STRING_EQUAL(x->hostname, "vm-one");
	/* RENEWING (ciaddr) -> ACK, requested is ciaddr */
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, VM_IP, 0, 0, NULL, 0);
	x = decide(s, &r, len, 1003, DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(x->d.requested, VM_IP);
	/* unknown MAC: dropped, with its MAC and reason, no hostname */
	len = build(&r, DHCP_MSG_DISCOVER, other_mac, 0, 0, 0, NULL, 0);
	x = decide(s, &r, len, 1004, 0);
	CU_ASSERT_TRUE(x->d.dropped);
	CU_ASSERT_EQUAL(x->d.drop, DHCP_DROP_UNKNOWN_MAC);
	CU_ASSERT_EQUAL(x->d.reply, 0);
	CU_ASSERT_EQUAL(x->d.type, DHCP_MSG_DISCOVER);
	CU_ASSERT_EQUAL(memcmp(x->mac, other_mac, 6), 0);
	CU_ASSERT_FALSE(x->has_hostname);
	CU_ASSERT_EQUAL(x->d.ip, 0);
	/* relayed: giaddr reported, on the pool's subnet answered, elsewhere dropped */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, RELAY_IP, 0, NULL, 0);
	x = decide(s, &r, len, 1005, DHCP_MSG_OFFER);
	CU_ASSERT_EQUAL(x->d.giaddr, RELAY_IP);
	CU_ASSERT_EQUAL(x->d.ip, VM_IP);
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, FAR_RELAY_IP, 0, NULL, 0);
	x = decide(s, &r, len, 1006, 0);
	CU_ASSERT_TRUE(x->d.dropped);
	CU_ASSERT_EQUAL(x->d.drop, DHCP_DROP_WRONG_SUBNET);
	CU_ASSERT_EQUAL(x->d.giaddr, FAR_RELAY_IP);
	/* INFORM: ACK without an address given; ciaddr is what the client has */
	len = build(&r, DHCP_MSG_INFORM, vm_mac, VM_IP, 0, 0, NULL, 0);
	x = decide(s, &r, len, 1007, DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(x->d.type, DHCP_MSG_INFORM);
	CU_ASSERT_EQUAL(x->d.ip, 0);
	CU_ASSERT_EQUAL(x->d.requested, VM_IP);
	/* RELEASE: neither a reply nor a drop */
	len = build(&r, DHCP_MSG_RELEASE, vm_mac, VM_IP, 0, 0, NULL, 0);
	x = decide(s, &r, len, 1008, 0);
	CU_ASSERT_EQUAL(x->d.type, DHCP_MSG_RELEASE);
	CU_ASSERT_FALSE(x->d.dropped);
	CU_ASSERT_EQUAL(x->d.reply, 0);
	CU_ASSERT_EQUAL(x->d.requested, VM_IP);
	/* no option 53: dropped as no_type, but the MAC is known */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	r.opts[0] = r.opts[1] = r.opts[2] = DHCP_OPT_PAD;
	x = decide(s, &r, len, 1009, 0);
	CU_ASSERT_TRUE(x->d.dropped);
	CU_ASSERT_EQUAL(x->d.drop, DHCP_DROP_NO_TYPE);
	CU_ASSERT_EQUAL(x->d.type, 0);
	CU_ASSERT_EQUAL(memcmp(x->mac, vm_mac, 6), 0);
	/* no usable chaddr (hlen 16), or too short: counted, not reported */
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	r.m.hlen = 16;
	CU_ASSERT_EQUAL(handle_at(s, &r, len, 1010), 0);
	CU_ASSERT_EQUAL(handle_at(s, &r, 100, 1011), 0);
	CU_ASSERT_EQUAL(n_seen, 10);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_NOT_REQUEST], 1);
	CU_ASSERT_EQUAL(s->stats.drops[DHCP_DROP_MALFORMED], 1);
	dhcp_server_free(s);
}

/* stderr to a file from capture_begin() to capture_end() (the decision log's lines). */
static void
capture_begin(void)
{
	CU_ASSERT_EQUAL_FATAL(test_capture_stderr(), 0);
}

/* What was written since capture_begin() (caller frees). */
static char *
capture_end(void)
{
	char *text = test_captured_stderr(NULL);

	CU_ASSERT_PTR_NOT_NULL_FATAL(text);
	return text;
}

static size_t
count_lines(const char *text, const char *needle)
{
	size_t n = 0;

	for (const char *l = text; *l != '\0';) {
		const char *e = strchr(l, '\n');
		size_t len = e != NULL ? (size_t)(e - l) : strlen(l);

		if (needle == NULL || memmem(l, len, needle, strlen(needle)) != NULL)
			n++;
		l += len + (e != NULL);
	}
	return n;
}

static struct agent_declog declog;
static struct agent_config declog_cfg = {.pool_ns = "default", .pool_name = "net-48"};

static void
on_decision_log(void *userdata, const struct dhcp_decision *d)
{
	(void)userdata;
	agent_declog_decision(&declog, d, &declog_cfg);
}

static struct dhcp_server *
logging_server(enum agent_log_dhcp mode)
{
	struct dhcp_server *s = server();
	struct dhcp_callbacks cb = {.on_decision = on_decision_log};

	dhcp_server_set_callbacks(s, &cb);
	agent_declog_init(&declog, mode);
	log_set_level(LOG_LEVEL_INFO);
	log_set_format(LOG_FORMAT_TEXT);
	return s;
}

/* n DISCOVERs from mac at now (the engine's receive time: the log's clock). */
static void
discovers(struct dhcp_server *s, const uint8_t mac[6], size_t n, uint64_t now)
{
	struct req r;
	size_t len = build(&r, DHCP_MSG_DISCOVER, mac, 0, 0, 0, NULL, 0);

	for (size_t i = 0; i < n; i++)
		handle_at(s, &r, len, now);
}

/*
 * The token bucket: AGENT_DECLOG_BURST lines at once, AGENT_DECLOG_RATE a second after, the
 * rest counted; one summary line by reply and drop reason once AGENT_DECLOG_SUMMARY_USEC
 * passed since the first suppressed line. Time is the engine's receive time (no sleeping).
 */
static void
test_declog_rate_limit(void)
{
	const uint64_t t0 = 1000 * USEC_PER_SEC;
	struct dhcp_server *s = logging_server(AGENT_LOG_DHCP_ALL);
	char *text;

	CU_ASSERT_EQUAL_FATAL(AGENT_DECLOG_BURST, 100);
	CU_ASSERT_EQUAL_FATAL(AGENT_DECLOG_RATE, 20);
	capture_begin();
	/* a storm at one instant: the first 100 lines, then counters only */
	discovers(s, vm_mac, 1000, t0);
	discovers(s, other_mac, 50, t0);
	text = capture_end();
	CU_ASSERT_EQUAL(count_lines(text, NULL), 100);
	CU_ASSERT_EQUAL(
	    count_lines(text, "DHCPOFFER 10.0.0.100 to 52:54:00:12:34:56 (vm-one)"), 100);
	CU_ASSERT_EQUAL(declog.suppressed, 950);
	CU_ASSERT_EQUAL(declog.by_reply[DHCP_MSG_OFFER], 900);
	CU_ASSERT_EQUAL(declog.by_drop[DHCP_DROP_UNKNOWN_MAC], 50);
	free(text);

	/* one second later: 20 more lines, the rest counted; no summary yet (1 s < 10 s) */
	capture_begin();
	discovers(s, other_mac, 30, t0 + USEC_PER_SEC);
	agent_declog_flush(&declog, t0 + 9 * USEC_PER_SEC, false);
	text = capture_end();
	CU_ASSERT_EQUAL(count_lines(text, NULL), 20);
	CU_ASSERT_EQUAL(
	    count_lines(text, "DHCPDISCOVER from 52:54:00:aa:bb:cc dropped: unknown_mac"), 20);
	CU_ASSERT_EQUAL(count_lines(text, "suppressed"), 0);
	CU_ASSERT_EQUAL(declog.suppressed, 960);
	free(text);

	/* 10 s after the first suppressed line: the summary, then the line itself */
	capture_begin();
	discovers(s, vm_mac, 1, t0 + 10 * USEC_PER_SEC);
	text = capture_end();
	CU_ASSERT_EQUAL(count_lines(text, NULL), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, " info  "));
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, ": suppressed 960 DHCP decision lines in the last 10 s (96/s): "
			 "900 DHCPOFFER, 60 dropped (unknown_mac 60) "
			 "suppressed=960\n"));
	CU_ASSERT(strstr(text, "suppressed=960\n") < strstr(text, "DHCPOFFER 10.0.0.100"));
	CU_ASSERT_EQUAL(declog.suppressed, 0);
	free(text);

	/* a storm that stops: the periodic flush writes its summary once the interval passed */
	capture_begin();
	discovers(s, vm_mac, 150, t0 + 20 * USEC_PER_SEC);
	agent_declog_flush(&declog, t0 + 25 * USEC_PER_SEC, false);
	text = capture_end();
	CU_ASSERT_EQUAL(count_lines(text, NULL), 100);
	free(text);
	capture_begin();
	agent_declog_flush(&declog, t0 + 30 * USEC_PER_SEC, false);
	agent_declog_flush(&declog, t0 + 40 * USEC_PER_SEC, true); /* nothing left */
	text = capture_end();
	CU_ASSERT_EQUAL(count_lines(text, NULL), 1);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(text, "suppressed 50 DHCP decision lines in the last 10 s (5/s): "
			 "50 DHCPOFFER suppressed=50\n"));
	free(text);
	dhcp_server_free(s);
}

/* One request of each kind, as the tests below log them. */
static void
log_each_kind(struct dhcp_server *s)
{
	uint8_t wrong[] = {DHCP_OPT_REQUESTED_IP, 4, 10, 0, 0, 77};
	struct req r;
	size_t len;

	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	handle_at(s, &r, len, 1);
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, RELAY_IP, 0, NULL, 0);
	handle_at(s, &r, len, 2);
	len = build(&r, DHCP_MSG_REQUEST, vm_mac, 0, 0, 0, wrong, sizeof(wrong));
	handle_at(s, &r, len, 3);
	len = build(&r, DHCP_MSG_REQUEST, other_mac, 0, 0, 0, wrong, sizeof(wrong));
	handle_at(s, &r, len, 4);
	len = build(&r, DHCP_MSG_RELEASE, vm_mac, VM_IP, 0, 0, NULL, 0);
	handle_at(s, &r, len, 5);
	len = build(&r, DHCP_MSG_DISCOVER, vm_mac, 0, 0, 0, NULL, 0);
	r.opts[0] = r.opts[1] = r.opts[2] = DHCP_OPT_PAD;
	handle_at(s, &r, len, 6);
}

/* Text: the message says it all, only the xid follows (no key repeats the message). */
static void
test_declog_text(void)
{
	static const char *const want[] = {
	    "DHCPOFFER 10.0.0.100 to 52:54:00:12:34:56 (vm-one) for DHCPDISCOVER xid=0x11223344",
	    "DHCPOFFER 10.0.0.100 to 52:54:00:12:34:56 (vm-one) for DHCPDISCOVER via 10.0.0.2 "
	    "xid=0x11223344",
	    "DHCPNAK to 52:54:00:12:34:56 (vm-one) for DHCPREQUEST of 10.0.0.77 xid=0x11223344",
	    "DHCPREQUEST from 52:54:00:aa:bb:cc for 10.0.0.77 dropped: unknown_mac xid=0x11223344",
	    "DHCPRELEASE from 52:54:00:12:34:56 (vm-one) for 10.0.0.100 xid=0x11223344",
	    "DHCP request from 52:54:00:12:34:56 (vm-one) dropped: no_type xid=0x11223344",
	};
	struct dhcp_server *s = logging_server(AGENT_LOG_DHCP_ALL);
	const char *l;
	char *text;
	size_t i = 0;

	capture_begin();
	log_each_kind(s);
	text = capture_end();
	CU_ASSERT_EQUAL(count_lines(text, NULL), ELEMENTSOF(want));
	for (l = text; *l != '\0' && i < ELEMENTSOF(want); i++) {
		const char *e = strchr(l, '\n'), *m = strstr(l, " info  ");
		char line[256];

		CU_ASSERT_PTR_NOT_NULL_FATAL(e);
		CU_ASSERT_FATAL(m != NULL && m < e && strstr(m, ": ") < e);
		m = strstr(m, ": ") + 2;
		snprintf(line, sizeof(line), "%.*s", (int)(e - m), m);
		CU_ASSERT_STRING_EQUAL(line, want[i]);
		l = e + 1;
	}
	free(text);
	dhcp_server_free(s);
}

/* JSON: the same message, and every key (giaddr only when relayed). */
static void
test_declog_json(void)
{
	static const struct {
		const char *msg, *type, *mac, *ip, *vm, *outcome, *value, *giaddr;
	} want[] = {
	    {"DHCPOFFER 10.0.0.100 to 52:54:00:12:34:56 (vm-one) for DHCPDISCOVER", "discover",
		"52:54:00:12:34:56", "10.0.0.100", "vm-one", "reply", "offer", NULL},
	    {"DHCPOFFER 10.0.0.100 to 52:54:00:12:34:56 (vm-one) for DHCPDISCOVER via 10.0.0.2",
		"discover", "52:54:00:12:34:56", "10.0.0.100", "vm-one", "reply", "offer",
		"10.0.0.2"},
	    {"DHCPNAK to 52:54:00:12:34:56 (vm-one) for DHCPREQUEST of 10.0.0.77", "request",
		"52:54:00:12:34:56", "10.0.0.77", "vm-one", "reply", "nak", NULL},
	    {"DHCPREQUEST from 52:54:00:aa:bb:cc for 10.0.0.77 dropped: unknown_mac", "request",
		"52:54:00:aa:bb:cc", "10.0.0.77", NULL, "drop", "unknown_mac", NULL},
	    {"DHCPRELEASE from 52:54:00:12:34:56 (vm-one) for 10.0.0.100", "release",
		"52:54:00:12:34:56", "10.0.0.100", "vm-one", "reply", "none", NULL},
	    {"DHCP request from 52:54:00:12:34:56 (vm-one) dropped: no_type", "unknown",
		"52:54:00:12:34:56", NULL, "vm-one", "drop", "no_type", NULL},
	};
	struct dhcp_server *s = logging_server(AGENT_LOG_DHCP_ALL);
	const char *l;
	char *text;
	size_t i = 0;

	log_set_format(LOG_FORMAT_JSON);
	capture_begin();
	log_each_kind(s);
	text = capture_end();
	log_set_format(LOG_FORMAT_TEXT);
	CU_ASSERT_EQUAL(count_lines(text, NULL), ELEMENTSOF(want));
	for (l = text; *l != '\0' && i < ELEMENTSOF(want); i++) {
		const char *e = strchr(l, '\n');
		json_error_t err;
		json_t *j;

		CU_ASSERT_PTR_NOT_NULL_FATAL(e);
		j = json_loadb(l, (size_t)(e - l), 0, &err);
		CU_ASSERT_PTR_NOT_NULL_FATAL(j);
#define STR(k) json_string_value(json_object_get(j, k))
#define HAS(k) (json_object_get(j, k) != NULL)
		CU_ASSERT(STR("level") != NULL && strcmp(STR("level"), "info") == 0);
		CU_ASSERT(STR("msg") != NULL && strcmp(STR("msg"), want[i].msg) == 0);
		CU_ASSERT(STR("type") != NULL && strcmp(STR("type"), want[i].type) == 0);
		CU_ASSERT(STR("mac") != NULL && strcmp(STR("mac"), want[i].mac) == 0);
		CU_ASSERT(STR("xid") != NULL && strcmp(STR("xid"), "0x11223344") == 0);
		CU_ASSERT(STR("ippool") != NULL && strcmp(STR("ippool"), "default/net-48") == 0);
		CU_ASSERT(STR(want[i].outcome) != NULL &&
			  strcmp(STR(want[i].outcome), want[i].value) == 0);
		CU_ASSERT_FALSE(HAS(strcmp(want[i].outcome, "drop") == 0 ? "reply" : "drop"));
		CU_ASSERT_EQUAL(HAS("ip"), want[i].ip != NULL);
		CU_ASSERT(want[i].ip == NULL ||
			  (STR("ip") != NULL && strcmp(STR("ip"), want[i].ip) == 0));
		CU_ASSERT_EQUAL(HAS("vm"), want[i].vm != NULL);
		CU_ASSERT(want[i].vm == NULL ||
			  (STR("vm") != NULL && strcmp(STR("vm"), want[i].vm) == 0));
		CU_ASSERT_EQUAL(HAS("giaddr"), want[i].giaddr != NULL);
		CU_ASSERT(want[i].giaddr == NULL ||
			  (STR("giaddr") != NULL && strcmp(STR("giaddr"), want[i].giaddr) == 0));
#undef STR
#undef HAS
		json_decref(j);
		l = e + 1;
	}
	free(text);
	dhcp_server_free(s);
}

/* --log-level warn silences the lines (and counts nothing); --log-dhcp drops and none. */
static void
test_declog_level_and_mode(void)
{
	struct dhcp_server *s = logging_server(AGENT_LOG_DHCP_ALL);
	char *text;

	log_set_level(LOG_LEVEL_WARN);
	capture_begin();
	log_each_kind(s);
	discovers(s, vm_mac, 500, 10);
	agent_declog_flush(&declog, 100 * USEC_PER_SEC, true);
	text = capture_end();
	log_set_level(LOG_LEVEL_INFO);
	CU_ASSERT_STRING_EQUAL(text, "");
	CU_ASSERT_EQUAL(declog.suppressed, 0);
	free(text);
	dhcp_server_free(s);

	/* drops: what a client did not get (drops and NAKs) */
	s = logging_server(AGENT_LOG_DHCP_DROPS);
	capture_begin();
	log_each_kind(s);
	text = capture_end();
	CU_ASSERT_EQUAL(count_lines(text, NULL), 3);
	CU_ASSERT_EQUAL(count_lines(text, "DHCPNAK to 52:54:00:12:34:56"), 1);
	CU_ASSERT_EQUAL(count_lines(text, "dropped: unknown_mac"), 1);
	CU_ASSERT_EQUAL(count_lines(text, "dropped: no_type"), 1);
	CU_ASSERT_EQUAL(count_lines(text, "DHCPOFFER"), 0);
	free(text);
	dhcp_server_free(s);

	s = logging_server(AGENT_LOG_DHCP_NONE);
	capture_begin();
	log_each_kind(s);
	text = capture_end();
	CU_ASSERT_STRING_EQUAL(text, "");
	free(text);
	dhcp_server_free(s);
}

static void
test_log_dhcp_names(void)
{
	enum agent_log_dhcp m = AGENT_LOG_DHCP_NONE;

	CU_ASSERT_EQUAL(agent_log_dhcp_from_string("all", &m), 0);
	CU_ASSERT_EQUAL(m, AGENT_LOG_DHCP_ALL);
	CU_ASSERT_EQUAL(agent_log_dhcp_from_string("drops", &m), 0);
	CU_ASSERT_EQUAL(m, AGENT_LOG_DHCP_DROPS);
	CU_ASSERT_EQUAL(agent_log_dhcp_from_string("none", &m), 0);
	CU_ASSERT_EQUAL(m, AGENT_LOG_DHCP_NONE);
	CU_ASSERT_EQUAL(agent_log_dhcp_from_string("some", &m), -EINVAL);
	CU_ASSERT_EQUAL(agent_log_dhcp_from_string("", &m), -EINVAL);
}

static void
test_names(void)
{
	CU_ASSERT_STRING_EQUAL(dhcp_message_type_name(DHCP_MSG_DISCOVER), "discover");
	CU_ASSERT_STRING_EQUAL(dhcp_message_type_name(DHCP_MSG_INFORM), "inform");
	CU_ASSERT_STRING_EQUAL(dhcp_message_type_name(0), "unknown");
	CU_ASSERT_STRING_EQUAL(dhcp_message_type_name(9), "unknown");
	for (int i = 0; i < _DHCP_DROP_MAX; i++)
		CU_ASSERT_STRING_NOT_EQUAL(
		    dhcp_drop_reason_name((enum dhcp_drop_reason)i), "unknown");
	CU_ASSERT_STRING_EQUAL(dhcp_drop_reason_name(_DHCP_DROP_MAX), "unknown");
}

static const struct test_case request_tests[] = {
    {"discover gets an offer", test_discover_offer},
    {"request gets ack or nak", test_request_ack_nak},
    {"option 54 of another server", test_other_server},
    {"removed binding: renewal NAKed, INIT-REBOOT silent", test_removed_binding_nak},
    {"unknown MAC", test_unknown_mac},
    {"unknown MAC bound by the callback", test_unknown_mac_bound_by_callback},
    {"on_offer: offered unbound, bound, or refused (offer_limit)", test_offer_callback},
    {"relay on another subnet: silent", test_relay_wrong_subnet},
    {"group and zero MACs refused", test_group_mac_refused},
    {"inform", test_inform},
    {"decline marks until the binding changes", test_decline},
    {"release", test_release},
    {"unsupported types, not serving", test_unsupported_and_not_serving},
    {"standby: nothing answered until active", test_standby},
    {"malformed requests", test_malformed},
    {"names", test_names},
    {NULL, NULL},
};

static const struct test_case reply_tests[] = {
    {"OFFER/ACK/NAK/INFORM bytes", test_bytes},
    {"PRL order", test_prl_order},
    {"option 57", test_max_message_size},
    {"option 82 echo", test_relay_agent_echo},
    {"option 61 echo", test_client_id_echo},
    {"option set swap", test_option_swap},
    {"destination rules", test_destinations},
    {"relay/ciaddr replies to the frame source", test_unicast_via_frame_source},
    {"sync and bindings", test_sync},
    {"captured client frames", test_captured_frames},
    {NULL, NULL},
};

static const struct test_case decision_tests[] = {
    {"on_decision fields: offer, ack, nak, drops, relay, release", test_decision_hook},
    {"decision log: rate limit and summary", test_declog_rate_limit},
    {"decision log: text lines", test_declog_text},
    {"decision log: JSON keys", test_declog_json},
    {"decision log: --log-level warn, --log-dhcp drops and none", test_declog_level_and_mode},
    {"--log-dhcp names", test_log_dhcp_names},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp-request", .tests = request_tests},
    {.name = "dhcp-reply", .tests = reply_tests},
    {.name = "dhcp-decision", .tests = decision_tests},
    {.name = NULL},
};
