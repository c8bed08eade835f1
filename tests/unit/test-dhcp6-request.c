/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dhcp/ DHCPv6 core: crafted messages through dhcp6_process (no sockets) for every message
 * type and status code, rapid commit, relays with RFC 6939 option 79, several IAs, IA_TA /
 * IA_PD, identifiers, truncated options, unknown and declined MACs, the decision hook.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/dhcp6-internal.h"
#include "lib/buf.h"
#include "lib/ip6.h"
#include "tests/runner.h"

static const uint8_t vm_mac[6] = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};
static const uint8_t other_mac[6] = {0x52, 0x54, 0x00, 0xaa, 0xbb, 0xcc};
static const uint8_t relay_mac[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x99};

static struct dhcp6_server *srv;
static struct dhcp6_options opts;
static struct in6_addr vm_addr;
static uint8_t out[DHCP6_TX_BUF];
static struct dhcp6_reply reply;

/* what the callbacks saw */
static struct dhcp6_decision last;
static unsigned n_decisions, n_declines, n_releases;
static struct in6_addr cb_addr;

static uint8_t last_mac[6];
static char last_hostname[256];

/* The decision's pointers are borrowed for the callback only: keep copies. */
static void
on_decision(void *ud, const struct dhcp6_decision *d)
{
	(void)ud;
	last = *d;
	if (d->mac != NULL) {
		memcpy(last_mac, d->mac, sizeof(last_mac));
		last.mac = last_mac;
	}
	if (d->hostname != NULL) {
		snprintf(last_hostname, sizeof(last_hostname), "%s", d->hostname);
		last.hostname = last_hostname;
	}
	n_decisions++;
}

static void
on_decline(void *ud, const uint8_t mac[6], const struct in6_addr *ip)
{
	(void)ud;
	CU_ASSERT(memcmp(mac, vm_mac, 6) == 0);
	cb_addr = *ip;
	n_declines++;
}

static void
on_release(void *ud, const uint8_t mac[6], const struct in6_addr *ip)
{
	(void)ud;
	CU_ASSERT(memcmp(mac, vm_mac, 6) == 0);
	cb_addr = *ip;
	n_releases++;
}

static struct in6_addr
a6(const char *s)
{
	struct in6_addr a;

	CU_ASSERT_FATAL(ipv6_parse(s, &a) == 0);
	return a;
}

static void
setup(void)
{
	static const struct dhcp6_callbacks cb = {
	    .on_decline = on_decline, .on_release = on_release, .on_decision = on_decision};

	memset(&opts, 0, sizeof(opts));
	opts.server_ip = a6("2001:db8::1");
	opts.prefix = 64;
	opts.dns[0] = a6("2001:db8::53");
	opts.n_dns = 1;
	strcpy(opts.search[0], "example.org");
	strcpy(opts.search[1], "eng.example.org.");
	opts.n_search = 2;
	opts.preferred_lifetime = 3600;
	opts.valid_lifetime = 7200;
	opts.duid_len = dhcp6_duid_for_pool("default", "pool", opts.duid);
	vm_addr = a6("2001:db8::100");
	CU_ASSERT_FATAL(dhcp6_server_new(&srv) == 0);
	CU_ASSERT_FATAL(dhcp6_server_set_options(srv, &opts) == 0);
	dhcp6_server_set_callbacks(srv, &cb);
	CU_ASSERT_FATAL(dhcp6_server_set_binding(srv, vm_mac, &vm_addr, "vm-one") == 0);
	n_decisions = n_declines = n_releases = 0;
	memset(&last, 0, sizeof(last));
}

static void
teardown(void)
{
	srv = dhcp6_server_free(srv);
}

/* --- building requests ------------------------------------------------------------------- */

struct msg {
	uint8_t b[1400];
	size_t len;
};

static void
put(struct msg *m, const void *d, size_t n)
{
	CU_ASSERT_FATAL(m->len + n <= sizeof(m->b));
	if (n > 0)
		memcpy(m->b + m->len, d, n);
	m->len += n;
}

static void
put16(struct msg *m, uint16_t v)
{
	uint8_t b[2];

	be16_put(b, v);
	put(m, b, 2);
}

static void
put32(struct msg *m, uint32_t v)
{
	uint8_t b[4];

	be32_put(b, v);
	put(m, b, 4);
}

static void
start(struct msg *m, uint8_t type)
{
	m->len = 0;
	put(m, (uint8_t[]){type, 0x12, 0x34, 0x56}, 4);
}

static size_t
open_opt(struct msg *m, uint16_t code)
{
	size_t at = m->len;

	put16(m, code);
	put16(m, 0);
	return at;
}

static void
close_opt(struct msg *m, size_t at)
{
	be16_put(m->b + at + 2, (uint16_t)(m->len - at - 4));
}

static void
opt(struct msg *m, uint16_t code, const void *d, size_t n)
{
	put16(m, code);
	put16(m, (uint16_t)n);
	put(m, d, n);
}

/* DUID-LL (type 3, Ethernet) of the client */
static void
client_id(struct msg *m)
{
	uint8_t d[10] = {0, 3, 0, 1};

	memcpy(d + 4, vm_mac, 6);
	opt(m, DHCP6_OPT_CLIENTID, d, sizeof(d));
}

static void
server_id(struct msg *m)
{
	opt(m, DHCP6_OPT_SERVERID, opts.duid, opts.duid_len);
}

/* an IA (IA_NA, IA_PD: T1/T2; IA_TA: none) naming addr when not NULL */
static void
ia(struct msg *m, uint16_t type, uint32_t iaid, const char *addr)
{
	size_t at = open_opt(m, type);

	put32(m, iaid);
	if (type != DHCP6_OPT_IA_TA) {
		put32(m, 0);
		put32(m, 0);
	}
	if (addr != NULL) {
		struct in6_addr a = a6(addr);
		size_t a_at = open_opt(m, DHCP6_OPT_IAADDR);

		put(m, &a, 16);
		put32(m, 0);
		put32(m, 0);
		close_opt(m, a_at);
	}
	close_opt(m, at);
}

static void
oro_dns(struct msg *m)
{
	opt(m, DHCP6_OPT_ORO, (uint8_t[]){0, 23, 0, 24}, 4);
}

/* A client message with the identifiers its type needs and one IA_NA (iaid 1). */
static void
std_msg(struct msg *m, uint8_t type, const char *addr)
{
	start(m, type);
	client_id(m);
	if (type == DHCP6_MSG_REQUEST || type == DHCP6_MSG_RENEW || type == DHCP6_MSG_RELEASE ||
	    type == DHCP6_MSG_DECLINE)
		server_id(m);
	opt(m, DHCP6_OPT_ELAPSED_TIME, (uint8_t[]){0, 0}, 2);
	ia(m, DHCP6_OPT_IA_NA, 1, addr);
}

static int
send_from(const struct msg *m, const uint8_t *mac, bool multicast)
{
	struct dhcp6_rx_meta meta = {.src_mac = mac, .multicast = multicast};

	memset(&reply, 0, sizeof(reply));
	return dhcp6_process(srv, m->b, m->len, &meta, 1000, out, sizeof(out), &reply);
}

static int
send_msg(const struct msg *m)
{
	return send_from(m, vm_mac, true);
}

/* --- reading replies ----------------------------------------------------------------------- */

/* The n-th (0-based) option code in p[0..len), or a view with p NULL. */
static struct dhcp6_view
find(const uint8_t *p, size_t len, uint16_t code, unsigned nth)
{
	while (len >= 4) {
		uint16_t c = be16_get(p), n = be16_get(p + 2);

		CU_ASSERT_FATAL(4u + n <= len);
		if (c == code && nth-- == 0)
			return (struct dhcp6_view){.p = p + 4, .len = n};
		p += 4 + n;
		len -= 4 + (size_t)n;
	}
	CU_ASSERT_EQUAL(len, 0);
	return (struct dhcp6_view){0};
}

/* the message's options */
static struct dhcp6_view
body(void)
{
	CU_ASSERT_FATAL(reply.payload_len >= 4);
	return (struct dhcp6_view){
	    .p = reply.payload + 4, .len = (uint16_t)(reply.payload_len - 4)};
}

static struct dhcp6_view
top(uint16_t code)
{
	struct dhcp6_view b = body();

	return find(b.p, b.len, code, 0);
}

/* Status code in p[0..len) (top level or an IA's options); -1 when none. */
static int
status_in(const uint8_t *p, size_t len)
{
	struct dhcp6_view v = find(p, len, DHCP6_OPT_STATUS_CODE, 0);

	return v.p == NULL ? -1 : v.len >= 2 ? be16_get(v.p) : -2;
}

static int
top_status(void)
{
	struct dhcp6_view b = body();

	return status_in(b.p, b.len);
}

/* The nth IA of type in the reply: its IAID, status (-1 none), and first address. */
struct ia_seen {
	bool present;
	uint32_t iaid, t1, t2;
	int status;
	unsigned n_addrs;
	struct in6_addr addr;
	uint32_t preferred, valid;
};

static struct ia_seen
reply_ia(uint16_t type, unsigned nth)
{
	struct dhcp6_view b = body(), v = find(b.p, b.len, type, nth);
	size_t fixed = type == DHCP6_OPT_IA_TA ? 4 : 12;
	struct ia_seen s = {0};

	if (v.p == NULL)
		return s;
	CU_ASSERT_FATAL(v.len >= fixed);
	s.present = true;
	s.iaid = be32_get(v.p);
	if (fixed == 12) {
		s.t1 = be32_get(v.p + 4);
		s.t2 = be32_get(v.p + 8);
	}
	s.status = status_in(v.p + fixed, v.len - fixed);
	for (unsigned k = 0;; k++) {
		struct dhcp6_view a = find(v.p + fixed, v.len - fixed, DHCP6_OPT_IAADDR, k);

		if (a.p == NULL)
			break;
		CU_ASSERT_FATAL(a.len >= 24);
		if (k == 0) {
			memcpy(&s.addr, a.p, 16);
			s.preferred = be32_get(a.p + 16);
			s.valid = be32_get(a.p + 20);
		}
		s.n_addrs++;
	}
	return s;
}

static void
assert_ids(uint8_t type)
{
	struct dhcp6_view c = top(DHCP6_OPT_CLIENTID), s = top(DHCP6_OPT_SERVERID);

	CU_ASSERT_EQUAL(reply.payload[0], type);
	CU_ASSERT(memcmp(reply.payload + 1, (uint8_t[]){0x12, 0x34, 0x56}, 3) == 0);
	CU_ASSERT_FATAL(c.p != NULL && s.p != NULL);
	CU_ASSERT_EQUAL(c.len, 10);
	CU_ASSERT(memcmp(c.p + 4, vm_mac, 6) == 0);
	CU_ASSERT_EQUAL(s.len, opts.duid_len);
	CU_ASSERT(memcmp(s.p, opts.duid, s.len) == 0);
}

static void
assert_given(const struct ia_seen *s)
{
	CU_ASSERT(s->present);
	CU_ASSERT_EQUAL(s->status, -1);
	CU_ASSERT(ipv6_equal(&s->addr, &vm_addr));
	CU_ASSERT_EQUAL(s->preferred, 3600);
	CU_ASSERT_EQUAL(s->valid, 7200);
	CU_ASSERT_EQUAL(s->t1, 1800); /* 0.5 x preferred */
	CU_ASSERT_EQUAL(s->t2, 2880); /* 0.8 x preferred */
}

/* --- cases ------------------------------------------------------------------------------- */

static void
test_solicit_advertise(void)
{
	struct msg m;
	struct ia_seen s;
	struct dhcp6_view pref;

	setup();
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_ADVERTISE);
	assert_ids(DHCP6_MSG_ADVERTISE);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	assert_given(&s);
	CU_ASSERT_EQUAL(s.iaid, 1);
	pref = top(DHCP6_OPT_PREFERENCE);
	CU_ASSERT(pref.p != NULL && pref.len == 1 && pref.p[0] == 255);
	CU_ASSERT_PTR_NULL(top(DHCP6_OPT_RAPID_COMMIT).p);
	/* no ORO: no DNS, no search list (as Kea) */
	CU_ASSERT_PTR_NULL(top(DHCP6_OPT_DNS_SERVERS).p);
	CU_ASSERT_PTR_NULL(top(DHCP6_OPT_DOMAIN_LIST).p);
	CU_ASSERT_FALSE(reply.relayed);
	CU_ASSERT_EQUAL(srv->stats.rx[DHCP6_MSG_SOLICIT], 1);
	/* the decision */
	CU_ASSERT_EQUAL(n_decisions, 1);
	CU_ASSERT_EQUAL(last.type, DHCP6_MSG_SOLICIT);
	CU_ASSERT_EQUAL(last.reply, DHCP6_MSG_ADVERTISE);
	CU_ASSERT_EQUAL(last.xid, 0x123456);
	CU_ASSERT(ipv6_equal(&last.address, &vm_addr));
	CU_ASSERT_STRING_EQUAL(last.hostname, "vm-one");
	CU_ASSERT_FALSE(last.dropped);
	CU_ASSERT_FALSE(last.relayed);
	teardown();
}

static void
test_oro_options(void)
{
	static const uint8_t search_wire[] = {7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'o', 'r',
	    'g', 0, 3, 'e', 'n', 'g', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'o', 'r', 'g', 0};
	struct in6_addr dns = a6("2001:db8::53");
	struct dhcp6_view v;
	struct msg m;

	setup();
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	oro_dns(&m);
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_ADVERTISE);
	v = top(DHCP6_OPT_DNS_SERVERS);
	CU_ASSERT(v.p != NULL && v.len == 16 && memcmp(v.p, &dns, 16) == 0);
	v = top(DHCP6_OPT_DOMAIN_LIST);
	CU_ASSERT_FATAL(v.p != NULL);
	CU_ASSERT_EQUAL(v.len, sizeof(search_wire));
	CU_ASSERT(memcmp(v.p, search_wire, sizeof(search_wire)) == 0);
	teardown();
}

static void
test_rapid_commit(void)
{
	struct msg m;
	struct ia_seen s;

	setup();
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	opt(&m, DHCP6_OPT_RAPID_COMMIT, NULL, 0);
	/* the pool does not allow it: ADVERTISE */
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_ADVERTISE);
	CU_ASSERT_PTR_NULL(top(DHCP6_OPT_RAPID_COMMIT).p);
	opts.rapid_commit = true;
	CU_ASSERT_FATAL(dhcp6_server_set_options(srv, &opts) == 0);
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	CU_ASSERT(top(DHCP6_OPT_RAPID_COMMIT).p != NULL);
	CU_ASSERT_PTR_NULL(top(DHCP6_OPT_PREFERENCE).p);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	assert_given(&s);
	/* the client does not ask: ADVERTISE */
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_ADVERTISE);
	teardown();
}

static void
test_request_reply(void)
{
	struct msg m;
	struct ia_seen s;

	setup();
	std_msg(&m, DHCP6_MSG_REQUEST, "2001:db8::100");
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	assert_ids(DHCP6_MSG_REPLY);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	assert_given(&s);
	CU_ASSERT_EQUAL(s.n_addrs, 1);
	CU_ASSERT_PTR_NULL(top(DHCP6_OPT_PREFERENCE).p);
	/* a stale hint is not echoed in a REQUEST's reply: only the binding */
	std_msg(&m, DHCP6_MSG_REQUEST, "2001:db8::7");
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	assert_given(&s);
	CU_ASSERT_EQUAL(s.n_addrs, 1);
	teardown();
}

static void
test_server_id_rules(void)
{
	struct msg m;
	uint8_t other[18];

	setup();
	/* REQUEST without a Server Identifier: dropped */
	start(&m, DHCP6_MSG_REQUEST);
	client_id(&m);
	ia(&m, DHCP6_OPT_IA_NA, 1, NULL);
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_MALFORMED], 1);
	/* naming another server: silent, counted */
	start(&m, DHCP6_MSG_REQUEST);
	client_id(&m);
	CU_ASSERT_EQUAL(dhcp6_duid_for_pool("default", "other", other), 18);
	opt(&m, DHCP6_OPT_SERVERID, other, sizeof(other));
	ia(&m, DHCP6_OPT_IA_NA, 1, NULL);
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_OTHER_SERVER], 1);
	CU_ASSERT(last.dropped && last.drop == DHCP6_DROP_OTHER_SERVER);
	CU_ASSERT_EQUAL(last.reply, 0);
	/* a SOLICIT must not name a server (RFC 8415 §16.2) */
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	server_id(&m);
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_MALFORMED], 2);
	/* no Client Identifier */
	start(&m, DHCP6_MSG_SOLICIT);
	ia(&m, DHCP6_OPT_IA_NA, 1, NULL);
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_NO_CLIENT_ID], 1);
	/* INFORMATION-REQUEST naming another server */
	start(&m, DHCP6_MSG_INFORMATION_REQUEST);
	opt(&m, DHCP6_OPT_SERVERID, other, sizeof(other));
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_OTHER_SERVER], 2);
	teardown();
}

static void
test_use_multicast(void)
{
	static const uint8_t types[] = {
	    DHCP6_MSG_REQUEST, DHCP6_MSG_RENEW, DHCP6_MSG_RELEASE, DHCP6_MSG_DECLINE};
	struct msg m;

	setup();
	for (size_t i = 0; i < sizeof(types); i++) {
		std_msg(&m, types[i], "2001:db8::100");
		CU_ASSERT_EQUAL(send_from(&m, vm_mac, false), DHCP6_MSG_REPLY);
		assert_ids(DHCP6_MSG_REPLY);
		CU_ASSERT_EQUAL(top_status(), DHCP6_STATUS_USE_MULTICAST);
		CU_ASSERT_FALSE(reply_ia(DHCP6_OPT_IA_NA, 0).present);
		CU_ASSERT_EQUAL(last.status, DHCP6_STATUS_USE_MULTICAST);
	}
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_USE_MULTICAST], 4);
	CU_ASSERT_EQUAL(n_declines + n_releases, 0);
	/* a SOLICIT or INFORMATION-REQUEST sent unicast is answered as usual */
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	CU_ASSERT_EQUAL(send_from(&m, vm_mac, false), DHCP6_MSG_ADVERTISE);
	teardown();
}

static void
test_renew_rebind(void)
{
	struct msg m;
	struct ia_seen s;

	setup();
	std_msg(&m, DHCP6_MSG_RENEW, "2001:db8::100");
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	assert_ids(DHCP6_MSG_REPLY);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	assert_given(&s);
	/* naming an old address beside ours: that one with lifetimes 0 (RFC 8415 §18.3.4) */
	start(&m, DHCP6_MSG_RENEW);
	client_id(&m);
	server_id(&m);
	{
		size_t at = open_opt(&m, DHCP6_OPT_IA_NA);
		struct in6_addr a = a6("2001:db8::100"), b = a6("2001:db8::5");

		put32(&m, 1);
		put32(&m, 0);
		put32(&m, 0);
		for (int k = 0; k < 2; k++) {
			size_t a_at = open_opt(&m, DHCP6_OPT_IAADDR);

			put(&m, k == 0 ? &b : &a, 16);
			put32(&m, 0);
			put32(&m, 0);
			close_opt(&m, a_at);
		}
		close_opt(&m, at);
	}
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	assert_given(&s);
	CU_ASSERT_EQUAL(s.n_addrs, 2);
	/* RENEW from a MAC without a binding: NoBinding in the IA */
	std_msg(&m, DHCP6_MSG_RENEW, "2001:db8::100");
	CU_ASSERT_EQUAL(send_from(&m, other_mac, true), DHCP6_MSG_REPLY);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	CU_ASSERT(s.present && s.status == DHCP6_STATUS_NO_BINDING && s.n_addrs == 0);
	CU_ASSERT_EQUAL(last.status, DHCP6_STATUS_NO_BINDING);
	CU_ASSERT_EQUAL(srv->stats.no_binding, 1);
	/* REBIND: the binding's address extended */
	std_msg(&m, DHCP6_MSG_REBIND, "2001:db8::100");
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	assert_given(&s);
	/* REBIND of an address that is not ours: lifetimes 0 (RFC 8415 §18.3.5) */
	std_msg(&m, DHCP6_MSG_REBIND, "2001:db8:ffff::9");
	CU_ASSERT_EQUAL(send_from(&m, other_mac, true), DHCP6_MSG_REPLY);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	CU_ASSERT(s.present && s.status == -1 && s.n_addrs == 1);
	{
		struct in6_addr want = a6("2001:db8:ffff::9");

		CU_ASSERT(ipv6_equal(&s.addr, &want));
	}
	CU_ASSERT(s.preferred == 0 && s.valid == 0 && s.t1 == 0 && s.t2 == 0);
	CU_ASSERT(ipv6_is_zero(&last.address));
	/* REBIND of an empty IA not ours: NoBinding */
	std_msg(&m, DHCP6_MSG_REBIND, NULL);
	CU_ASSERT_EQUAL(send_from(&m, other_mac, true), DHCP6_MSG_REPLY);
	CU_ASSERT_EQUAL(reply_ia(DHCP6_OPT_IA_NA, 0).status, DHCP6_STATUS_NO_BINDING);
	teardown();
}

static void
test_release(void)
{
	struct in6_addr got;
	struct msg m;

	setup();
	std_msg(&m, DHCP6_MSG_RELEASE, "2001:db8::100");
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	assert_ids(DHCP6_MSG_REPLY);
	CU_ASSERT_EQUAL(top_status(), DHCP6_STATUS_SUCCESS);
	CU_ASSERT_FALSE(reply_ia(DHCP6_OPT_IA_NA, 0).present); /* released IAs are not listed */
	CU_ASSERT_EQUAL(n_releases, 1);
	CU_ASSERT(ipv6_equal(&cb_addr, &vm_addr));
	CU_ASSERT_EQUAL(srv->stats.releases, 1);
	/* the binding stays: the control plane owns it */
	CU_ASSERT_EQUAL(dhcp6_server_get_binding(srv, vm_mac, &got), 0);
	CU_ASSERT(ipv6_equal(&got, &vm_addr));
	/* releasing an address that is not its own: NoBinding in that IA, no callback */
	std_msg(&m, DHCP6_MSG_RELEASE, "2001:db8::7");
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	CU_ASSERT_EQUAL(top_status(), DHCP6_STATUS_SUCCESS);
	CU_ASSERT_EQUAL(reply_ia(DHCP6_OPT_IA_NA, 0).status, DHCP6_STATUS_NO_BINDING);
	CU_ASSERT_EQUAL(n_releases, 1);
	teardown();
}

static void
test_decline(void)
{
	struct in6_addr moved = a6("2001:db8::101");
	struct msg m;

	setup();
	std_msg(&m, DHCP6_MSG_DECLINE, "2001:db8::100");
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	CU_ASSERT_EQUAL(top_status(), DHCP6_STATUS_SUCCESS);
	CU_ASSERT_EQUAL(n_declines, 1);
	CU_ASSERT(ipv6_equal(&cb_addr, &vm_addr));
	CU_ASSERT_EQUAL(srv->stats.declines, 1);
	/* declined: the MAC is refused the address (NoAddrsAvail) until it changes */
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_ADVERTISE);
	CU_ASSERT_EQUAL(reply_ia(DHCP6_OPT_IA_NA, 0).status, DHCP6_STATUS_NO_ADDRS_AVAIL);
	CU_ASSERT_PTR_NULL(top(DHCP6_OPT_PREFERENCE).p);
	std_msg(&m, DHCP6_MSG_RENEW, "2001:db8::100");
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	CU_ASSERT_EQUAL(reply_ia(DHCP6_OPT_IA_NA, 0).status, DHCP6_STATUS_NO_BINDING);
	/* the mark is cleared by the caller, or when the binding moves */
	CU_ASSERT_EQUAL(dhcp6_server_clear_decline(srv, vm_mac, &moved), -ENOENT);
	CU_ASSERT_EQUAL(dhcp6_server_clear_decline(srv, vm_mac, &vm_addr), 0);
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_ADVERTISE);
	CU_ASSERT_EQUAL(reply_ia(DHCP6_OPT_IA_NA, 0).status, -1);
	std_msg(&m, DHCP6_MSG_DECLINE, "2001:db8::100");
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	CU_ASSERT_EQUAL(dhcp6_server_set_binding(srv, vm_mac, &moved, "vm-one"), 0);
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_ADVERTISE);
	{
		struct ia_seen got = reply_ia(DHCP6_OPT_IA_NA, 0);

		CU_ASSERT(ipv6_equal(&got.addr, &moved));
	}
	teardown();
}

static void
test_confirm(void)
{
	struct msg m;

	setup();
	std_msg(&m, DHCP6_MSG_CONFIRM, "2001:db8::100");
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	CU_ASSERT_EQUAL(top_status(), DHCP6_STATUS_SUCCESS);
	/* on-link for any MAC: CONFIRM needs no binding */
	std_msg(&m, DHCP6_MSG_CONFIRM, "2001:db8::1234");
	CU_ASSERT_EQUAL(send_from(&m, other_mac, true), DHCP6_MSG_REPLY);
	CU_ASSERT_EQUAL(top_status(), DHCP6_STATUS_SUCCESS);
	std_msg(&m, DHCP6_MSG_CONFIRM, "2001:db8:1::100");
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	CU_ASSERT_EQUAL(top_status(), DHCP6_STATUS_NOT_ON_LINK);
	CU_ASSERT_EQUAL(srv->stats.not_on_link, 1);
	CU_ASSERT_EQUAL(last.status, DHCP6_STATUS_NOT_ON_LINK);
	/* no address at all: no reply (RFC 8415 §18.3.3), and no drop */
	std_msg(&m, DHCP6_MSG_CONFIRM, NULL);
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	CU_ASSERT_FALSE(last.dropped);
	teardown();
}

static void
test_information_request(void)
{
	struct msg m;

	setup();
	start(&m, DHCP6_MSG_INFORMATION_REQUEST);
	oro_dns(&m);
	CU_ASSERT_EQUAL(send_from(&m, other_mac, true), DHCP6_MSG_REPLY);
	CU_ASSERT_PTR_NULL(top(DHCP6_OPT_CLIENTID).p); /* none to echo */
	CU_ASSERT(top(DHCP6_OPT_SERVERID).p != NULL);
	CU_ASSERT(top(DHCP6_OPT_DNS_SERVERS).p != NULL);
	CU_ASSERT(top(DHCP6_OPT_DOMAIN_LIST).p != NULL);
	CU_ASSERT_FALSE(reply_ia(DHCP6_OPT_IA_NA, 0).present);
	/* with our Server Identifier and a Client Identifier: answered, both echoed */
	start(&m, DHCP6_MSG_INFORMATION_REQUEST);
	client_id(&m);
	server_id(&m);
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	assert_ids(DHCP6_MSG_REPLY);
	/* an IA in it: discarded (RFC 8415 §16.12) */
	start(&m, DHCP6_MSG_INFORMATION_REQUEST);
	ia(&m, DHCP6_OPT_IA_NA, 1, NULL);
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_MALFORMED], 1);
	teardown();
}

static void
test_unknown_mac(void)
{
	struct msg m;
	struct ia_seen s;

	setup();
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	CU_ASSERT_EQUAL(send_from(&m, other_mac, true), DHCP6_MSG_ADVERTISE);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	CU_ASSERT(s.present && s.status == DHCP6_STATUS_NO_ADDRS_AVAIL && s.n_addrs == 0);
	CU_ASSERT(s.t1 == 0 && s.t2 == 0);
	CU_ASSERT_PTR_NULL(top(DHCP6_OPT_PREFERENCE).p);
	CU_ASSERT_EQUAL(srv->stats.no_addrs_avail, 1);
	CU_ASSERT_EQUAL(last.status, DHCP6_STATUS_NO_ADDRS_AVAIL);
	CU_ASSERT_PTR_NULL(last.hostname);
	std_msg(&m, DHCP6_MSG_REQUEST, "2001:db8::100");
	CU_ASSERT_EQUAL(send_from(&m, other_mac, true), DHCP6_MSG_REPLY);
	CU_ASSERT_EQUAL(reply_ia(DHCP6_OPT_IA_NA, 0).status, DHCP6_STATUS_NO_ADDRS_AVAIL);
	/* no IA to refuse: silent, counted */
	start(&m, DHCP6_MSG_SOLICIT);
	client_id(&m);
	CU_ASSERT_EQUAL(send_from(&m, other_mac, true), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_UNKNOWN_MAC], 1);
	teardown();
}

static void
test_many_ias(void)
{
	struct msg m;
	struct ia_seen s;

	setup();
	start(&m, DHCP6_MSG_SOLICIT);
	client_id(&m);
	ia(&m, DHCP6_OPT_IA_TA, 9, NULL);
	ia(&m, DHCP6_OPT_IA_NA, 1, NULL);
	ia(&m, DHCP6_OPT_IA_NA, 2, NULL);
	ia(&m, DHCP6_OPT_IA_PD, 3, NULL);
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_ADVERTISE);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	assert_given(&s);
	CU_ASSERT_EQUAL(s.iaid, 1);
	s = reply_ia(DHCP6_OPT_IA_NA, 1);
	CU_ASSERT(s.present && s.iaid == 2 && s.status == DHCP6_STATUS_NO_ADDRS_AVAIL);
	s = reply_ia(DHCP6_OPT_IA_TA, 0);
	CU_ASSERT(s.present && s.iaid == 9 && s.status == DHCP6_STATUS_NO_ADDRS_AVAIL);
	s = reply_ia(DHCP6_OPT_IA_PD, 0);
	CU_ASSERT(s.present && s.iaid == 3 && s.status == DHCP6_STATUS_NO_PREFIX_AVAIL);
	/* a REQUEST whose second IA_NA names the address: that IA gets it */
	start(&m, DHCP6_MSG_REQUEST);
	client_id(&m);
	server_id(&m);
	ia(&m, DHCP6_OPT_IA_NA, 1, NULL);
	ia(&m, DHCP6_OPT_IA_NA, 2, "2001:db8::100");
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_REPLY);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	CU_ASSERT(s.iaid == 1 && s.status == DHCP6_STATUS_NO_ADDRS_AVAIL);
	s = reply_ia(DHCP6_OPT_IA_NA, 1);
	CU_ASSERT_EQUAL(s.iaid, 2);
	assert_given(&s);
	teardown();
}

/* Wraps m in a RELAY-FORW (hop count hop, peer fe80::hop), with Interface-Id "eth<hop>" and,
 * when mac, the client link-layer address option (RFC 6939). */
static void
relay_wrap(struct msg *m, uint8_t hop, const uint8_t *mac)
{
	struct msg in = *m;
	struct in6_addr link = a6("2001:db8::2"), peer = a6("fe80::1");
	char ifid[8];

	peer.s6_addr[15] = hop;
	m->len = 0;
	put(m, (uint8_t[]){DHCP6_MSG_RELAY_FORW, hop}, 2);
	put(m, &link, 16);
	put(m, &peer, 16);
	snprintf(ifid, sizeof(ifid), "eth%u", hop);
	opt(m, DHCP6_OPT_INTERFACE_ID, ifid, strlen(ifid));
	if (mac != NULL) {
		uint8_t ll[8] = {0, 1};

		memcpy(ll + 2, mac, 6);
		opt(m, DHCP6_OPT_CLIENT_LINKLAYER_ADDR, ll, sizeof(ll));
	}
	opt(m, DHCP6_OPT_RELAY_MSG, in.b, in.len);
}

/* Checks one RELAY-REPL layer at p (hop) and returns its Relay Message. */
static struct dhcp6_view
relay_layer(const uint8_t *p, size_t len, uint8_t hop)
{
	struct dhcp6_view v;
	char ifid[8];

	CU_ASSERT_FATAL(len >= 34);
	CU_ASSERT_EQUAL(p[0], DHCP6_MSG_RELAY_REPL);
	CU_ASSERT_EQUAL(p[1], hop);
	CU_ASSERT_EQUAL(p[33], hop); /* peer-address copied */
	v = find(p + 34, len - 34, DHCP6_OPT_INTERFACE_ID, 0);
	snprintf(ifid, sizeof(ifid), "eth%u", hop);
	CU_ASSERT(v.p != NULL && v.len == strlen(ifid) && memcmp(v.p, ifid, v.len) == 0);
	v = find(p + 34, len - 34, DHCP6_OPT_RELAY_MSG, 0);
	CU_ASSERT_FATAL(v.p != NULL);
	return v;
}

static void
test_relayed(void)
{
	struct dhcp6_view v;
	struct msg m;
	struct ia_seen s;

	setup();
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	relay_wrap(&m, 0, vm_mac);
	/* the frame comes from the relay's MAC: the client is option 79's */
	CU_ASSERT_EQUAL(send_from(&m, relay_mac, false), DHCP6_MSG_ADVERTISE);
	CU_ASSERT(reply.relayed);
	v = relay_layer(reply.payload, reply.payload_len, 0);
	CU_ASSERT_EQUAL((size_t)(v.p + v.len - reply.payload), reply.payload_len);
	/* read the inner message as the reply */
	reply.payload = (uint8_t *)v.p;
	reply.payload_len = v.len;
	assert_ids(DHCP6_MSG_ADVERTISE);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	assert_given(&s);
	CU_ASSERT(last.relayed);
	CU_ASSERT_EQUAL(last.type, DHCP6_MSG_SOLICIT);
	CU_ASSERT_EQUAL(srv->stats.relayed, 1);
	/* a relayed REQUEST is unicast by the relay: no UseMulticast */
	std_msg(&m, DHCP6_MSG_REQUEST, "2001:db8::100");
	relay_wrap(&m, 0, vm_mac);
	CU_ASSERT_EQUAL(send_from(&m, relay_mac, false), DHCP6_MSG_REPLY);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_USE_MULTICAST], 0);
	/* two relays, option 79 from the inner (the client's link) */
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	relay_wrap(&m, 0, vm_mac);
	relay_wrap(&m, 1, relay_mac);
	CU_ASSERT_EQUAL(send_from(&m, relay_mac, false), DHCP6_MSG_ADVERTISE);
	v = relay_layer(reply.payload, reply.payload_len, 1);
	v = relay_layer(v.p, v.len, 0);
	reply.payload = (uint8_t *)v.p;
	reply.payload_len = v.len;
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	assert_given(&s);
	teardown();
}

static void
test_relay_errors(void)
{
	struct msg m;

	setup();
	/* no option 79: no MAC to match, silent */
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	relay_wrap(&m, 0, NULL);
	CU_ASSERT_EQUAL(send_from(&m, relay_mac, false), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_NO_MAC], 1);
	CU_ASSERT_EQUAL(n_decisions, 0); /* no MAC: counted only */
	/* option 79 of another link-layer type */
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	m.len = 0;
	put(&m, (uint8_t[34]){DHCP6_MSG_RELAY_FORW}, 34);
	opt(&m, DHCP6_OPT_CLIENT_LINKLAYER_ADDR, (uint8_t[]){0, 6, 1, 2, 3, 4, 5, 6}, 8);
	{
		struct msg in;

		std_msg(&in, DHCP6_MSG_SOLICIT, NULL);
		opt(&m, DHCP6_OPT_RELAY_MSG, in.b, in.len);
	}
	CU_ASSERT_EQUAL(send_from(&m, relay_mac, false), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_NO_MAC], 2);
	/* nine relays: deeper than HOP_COUNT_LIMIT */
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	for (uint8_t h = 0; h < 9; h++)
		relay_wrap(&m, h, vm_mac);
	CU_ASSERT_EQUAL(send_from(&m, relay_mac, false), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_RELAY_DEPTH], 1);
	/* eight is fine */
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	for (uint8_t h = 0; h < 8; h++)
		relay_wrap(&m, h, vm_mac);
	CU_ASSERT_EQUAL(send_from(&m, relay_mac, false), DHCP6_MSG_ADVERTISE);
	/* a RELAY-FORW without a Relay Message */
	m.len = 0;
	put(&m, (uint8_t[34]){DHCP6_MSG_RELAY_FORW}, 34);
	CU_ASSERT_EQUAL(send_from(&m, relay_mac, false), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_MALFORMED], 1);
	teardown();
}

static void
test_malformed(void)
{
	struct msg m;
	size_t at;

	setup();
	/* shorter than the header */
	m.len = 3;
	memcpy(m.b, (uint8_t[]){1, 2, 3}, 3);
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_MALFORMED], 1);
	/* an option running past the end */
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	be16_put(m.b + m.len - 4 - 12 + 2, 200); /* the IA_NA's length */
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_MALFORMED], 2);
	CU_ASSERT_EQUAL(last.type, DHCP6_MSG_SOLICIT);
	CU_ASSERT(last.dropped && last.drop == DHCP6_DROP_MALFORMED);
	/* an option header cut short */
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	put(&m, (uint8_t[]){0, 8, 0}, 3);
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	/* an IA_NA shorter than its fixed part, an IAADDR shorter than 24 */
	start(&m, DHCP6_MSG_SOLICIT);
	client_id(&m);
	opt(&m, DHCP6_OPT_IA_NA, (uint8_t[8]){0}, 8);
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	start(&m, DHCP6_MSG_SOLICIT);
	client_id(&m);
	at = open_opt(&m, DHCP6_OPT_IA_NA);
	put(&m, (uint8_t[12]){0}, 12);
	opt(&m, DHCP6_OPT_IAADDR, (uint8_t[20]){0}, 20);
	close_opt(&m, at);
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	/* a DUID too short, a Rapid Commit with data, an odd ORO */
	start(&m, DHCP6_MSG_SOLICIT);
	opt(&m, DHCP6_OPT_CLIENTID, (uint8_t[]){0, 3}, 2);
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	opt(&m, DHCP6_OPT_RAPID_COMMIT, (uint8_t[]){1}, 1);
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	opt(&m, DHCP6_OPT_ORO, (uint8_t[]){0, 23, 0}, 3);
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_MALFORMED], 8);
	/* unknown options are ignored */
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	opt(&m, 999, "x", 1);
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_ADVERTISE);
	teardown();
}

static void
test_server_messages(void)
{
	static const uint8_t types[] = {DHCP6_MSG_ADVERTISE, DHCP6_MSG_REPLY, DHCP6_MSG_RECONFIGURE,
	    DHCP6_MSG_RELAY_REPL, 0, 14, 255};
	struct msg m;

	setup();
	for (size_t i = 0; i < sizeof(types); i++) {
		std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
		m.b[0] = types[i];
		CU_ASSERT_EQUAL(send_msg(&m), 0);
	}
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_UNSUPPORTED], sizeof(types));
	CU_ASSERT_EQUAL(srv->stats.rx[DHCP6_MSG_REPLY], 1);
	CU_ASSERT_EQUAL(n_decisions, sizeof(types));
	teardown();
}

static void
test_not_serving(void)
{
	struct msg m;

	CU_ASSERT_FATAL(dhcp6_server_new(&srv) == 0);
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	CU_ASSERT_EQUAL(send_msg(&m), 0); /* no options yet */
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_NOT_SERVING], 1);
	teardown();
	setup();
	dhcp6_server_set_standby(srv, true);
	CU_ASSERT_EQUAL(send_msg(&m), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_NOT_SERVING], 1);
	CU_ASSERT_EQUAL(n_decisions, 0);
	dhcp6_server_set_standby(srv, false);
	CU_ASSERT_EQUAL(send_msg(&m), DHCP6_MSG_ADVERTISE);
	teardown();
}

static void
test_options_and_bindings(void)
{
	struct dhcp6_options o;
	struct in6_addr x = a6("2001:db8::200"), mc = a6("ff02::1"), zero = {0};
	uint8_t group[6] = {0x01, 0, 0x5e, 0, 0, 1};
	uint8_t d1[18], d2[18], d3[18];

	setup();
	o = opts;
	o.prefix = 4;
	CU_ASSERT_EQUAL(dhcp6_server_set_options(srv, &o), -EINVAL);
	o = opts;
	o.duid_len = 0;
	CU_ASSERT_EQUAL(dhcp6_server_set_options(srv, &o), -EINVAL);
	o = opts;
	o.preferred_lifetime = 9000; /* > valid */
	CU_ASSERT_EQUAL(dhcp6_server_set_options(srv, &o), -EINVAL);
	o = opts;
	strcpy(o.search[0], "a..b");
	CU_ASSERT_EQUAL(dhcp6_server_set_options(srv, &o), -EINVAL);
	o = opts;
	memset(&o.server_ip, 0, sizeof(o.server_ip));
	CU_ASSERT_EQUAL(dhcp6_server_set_options(srv, &o), -EINVAL);
	/* bindings */
	CU_ASSERT_EQUAL(dhcp6_server_set_binding(srv, other_mac, &vm_addr, NULL), -EEXIST);
	CU_ASSERT_EQUAL(dhcp6_server_set_binding(srv, other_mac, &zero, NULL), -EINVAL);
	CU_ASSERT_EQUAL(dhcp6_server_set_binding(srv, other_mac, &mc, NULL), -EINVAL);
	CU_ASSERT_EQUAL(dhcp6_server_set_binding(srv, group, &x, NULL), -EINVAL);
	CU_ASSERT_EQUAL(dhcp6_server_set_binding(srv, other_mac, &x, NULL), 0);
	CU_ASSERT_EQUAL(dhcp6_server_n_bindings(srv), 2);
	dhcp6_server_sync_begin(srv);
	CU_ASSERT_EQUAL(dhcp6_server_set_binding(srv, vm_mac, &vm_addr, "vm-one"), 0);
	CU_ASSERT_EQUAL(dhcp6_server_sync_end(srv), 1);
	CU_ASSERT_EQUAL(dhcp6_server_get_binding(srv, other_mac, NULL), -ENOENT);
	CU_ASSERT_EQUAL(dhcp6_server_remove_binding(srv, vm_mac), 0);
	CU_ASSERT_EQUAL(dhcp6_server_n_bindings(srv), 0);
	/* DUIDs: stable for a pool, distinct between pools, DUID-UUID */
	CU_ASSERT_EQUAL(dhcp6_duid_for_pool("ns", "a", d1), 18);
	CU_ASSERT_EQUAL(dhcp6_duid_for_pool("ns", "a", d2), 18);
	CU_ASSERT_EQUAL(dhcp6_duid_for_pool("ns", "b", d3), 18);
	CU_ASSERT(memcmp(d1, d2, 18) == 0);
	CU_ASSERT(memcmp(d1, d3, 18) != 0);
	CU_ASSERT(d1[0] == 0 && d1[1] == 4);
	CU_ASSERT_EQUAL(d1[8] >> 4, 8);
	CU_ASSERT_STRING_EQUAL(
	    dhcp6_message_type_name(DHCP6_MSG_INFORMATION_REQUEST), "information-request");
	CU_ASSERT_STRING_EQUAL(dhcp6_message_type_name(99), "unknown");
	CU_ASSERT_STRING_EQUAL(dhcp6_drop_reason_name(DHCP6_DROP_OTHER_SERVER), "other_server");
	CU_ASSERT_STRING_EQUAL(dhcp6_drop_reason_name(-1), "unknown");
	teardown();
}

/* A reply that cannot fit the buffer is dropped, not cut. */
static void
test_reply_too_big(void)
{
	struct dhcp6_rx_meta meta = {.src_mac = vm_mac, .multicast = true};
	uint8_t small[40];
	struct msg m;

	setup();
	std_msg(&m, DHCP6_MSG_SOLICIT, NULL);
	CU_ASSERT_EQUAL(dhcp6_process(srv, m.b, m.len, &meta, 1, small, sizeof(small), &reply), 0);
	CU_ASSERT_EQUAL(srv->stats.drops[DHCP6_DROP_REPLY_TOO_BIG], 1);
	CU_ASSERT(last.dropped && last.drop == DHCP6_DROP_REPLY_TOO_BIG);
	CU_ASSERT(ipv6_is_zero(&last.address));
	teardown();
}

/* A SOLICIT (or REQUEST / RELEASE naming vm_addr) whose Client Identifier is duid[0..n). */
static void
duid_msg(struct msg *m, uint8_t type, const uint8_t *duid, size_t n)
{
	start(m, type);
	opt(m, DHCP6_OPT_CLIENTID, duid, n);
	if (type != DHCP6_MSG_SOLICIT)
		server_id(m);
	ia(m, DHCP6_OPT_IA_NA, 1, type != DHCP6_MSG_SOLICIT ? "2001:db8::100" : NULL);
}

/* The IA_NA status of a SOLICIT from frame MAC src carrying duid: -1 when given vm_addr. */
static int
solicit_duid(const uint8_t *src, const uint8_t *duid, size_t n)
{
	struct msg m;
	struct ia_seen s;

	duid_msg(&m, DHCP6_MSG_SOLICIT, duid, n);
	CU_ASSERT_EQUAL_FATAL(send_from(&m, src, true), DHCP6_MSG_ADVERTISE);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	CU_ASSERT_FATAL(s.present);
	if (s.status == -1)
		CU_ASSERT(ipv6_equal(&s.addr, &vm_addr));
	return s.status;
}

static void
test_duid_mac(void)
{
	/* vm_mac in a DUID-LL (type 3) and a DUID-LLT (type 1), hardware type 1 */
	uint8_t ll[10] = {0, 3, 0, 1}, llt[14] = {0, 1, 0, 1, 0x2a, 0x2b, 0x2c, 0x2d};
	uint8_t bad[18], other_addr_mac[6] = {0x52, 0x54, 0x00, 0x77, 0x77, 0x77};
	struct in6_addr other_addr = a6("2001:db8::200");
	struct ia_seen s;
	struct msg m;

	memcpy(ll + 4, vm_mac, 6);
	memcpy(llt + 8, vm_mac, 6);
	setup();
	/* off (the default): the frame's MAC only */
	CU_ASSERT_EQUAL(solicit_duid(other_mac, ll, sizeof(ll)), DHCP6_STATUS_NO_ADDRS_AVAIL);
	CU_ASSERT_EQUAL(solicit_duid(other_mac, llt, sizeof(llt)), DHCP6_STATUS_NO_ADDRS_AVAIL);
	/* on: the DUID's MAC's binding, reported as that MAC */
	dhcp6_server_set_duid_mac(srv, true);
	CU_ASSERT_EQUAL(solicit_duid(other_mac, ll, sizeof(ll)), -1);
	CU_ASSERT(memcmp(last.mac, vm_mac, 6) == 0);
	CU_ASSERT_STRING_EQUAL(last.hostname, "vm-one");
	CU_ASSERT_EQUAL(solicit_duid(other_mac, llt, sizeof(llt)), -1);
	duid_msg(&m, DHCP6_MSG_REQUEST, llt, sizeof(llt));
	CU_ASSERT_EQUAL(send_from(&m, other_mac, true), DHCP6_MSG_REPLY);
	CU_ASSERT_EQUAL(reply_ia(DHCP6_OPT_IA_NA, 0).status, -1);
	CU_ASSERT(ipv6_equal(&last.address, &vm_addr));
	/* a RELEASE is the DUID's MAC's (on_release checks the MAC is vm_mac) */
	duid_msg(&m, DHCP6_MSG_RELEASE, ll, sizeof(ll));
	CU_ASSERT_EQUAL(send_from(&m, other_mac, true), DHCP6_MSG_REPLY);
	CU_ASSERT_EQUAL(n_releases, 1);
	/* relayed: option 79 unbound, the DUID's MAC */
	duid_msg(&m, DHCP6_MSG_SOLICIT, ll, sizeof(ll));
	relay_wrap(&m, 0, other_mac);
	CU_ASSERT_EQUAL(send_from(&m, relay_mac, false), DHCP6_MSG_ADVERTISE);
	CU_ASSERT(last.relayed && memcmp(last.mac, vm_mac, 6) == 0);
	CU_ASSERT(ipv6_equal(&last.address, &vm_addr));
	/* DUID-EN (2) and DUID-UUID (4) carrying the same bytes: not link-layer DUIDs */
	memcpy(bad, ll, sizeof(ll));
	bad[1] = 2;
	CU_ASSERT_EQUAL(solicit_duid(other_mac, bad, sizeof(ll)), DHCP6_STATUS_NO_ADDRS_AVAIL);
	memcpy(bad, llt, sizeof(llt));
	bad[1] = 2;
	CU_ASSERT_EQUAL(solicit_duid(other_mac, bad, sizeof(llt)), DHCP6_STATUS_NO_ADDRS_AVAIL);
	memset(bad, 0, sizeof(bad));
	bad[1] = 4;
	memcpy(bad + 2, ll + 2, 8); /* 00 01 then vm_mac where a DUID-LL has them; 18 bytes */
	CU_ASSERT_EQUAL(solicit_duid(other_mac, bad, 18), DHCP6_STATUS_NO_ADDRS_AVAIL);
	/* a hardware type other than Ethernet (6, IEEE 802) */
	memcpy(bad, ll, sizeof(ll));
	bad[3] = 6;
	CU_ASSERT_EQUAL(solicit_duid(other_mac, bad, sizeof(ll)), DHCP6_STATUS_NO_ADDRS_AVAIL);
	/* bad lengths: a 5- or 7-byte address in a DUID-LL or DUID-LLT, a header alone */
	memcpy(bad, ll, sizeof(ll));
	bad[10] = 0x99;
	CU_ASSERT_EQUAL(solicit_duid(other_mac, bad, 9), DHCP6_STATUS_NO_ADDRS_AVAIL);
	CU_ASSERT_EQUAL(solicit_duid(other_mac, bad, 11), DHCP6_STATUS_NO_ADDRS_AVAIL);
	memcpy(bad, llt, sizeof(llt));
	bad[14] = 0x99;
	CU_ASSERT_EQUAL(solicit_duid(other_mac, bad, 13), DHCP6_STATUS_NO_ADDRS_AVAIL);
	CU_ASSERT_EQUAL(solicit_duid(other_mac, bad, 15), DHCP6_STATUS_NO_ADDRS_AVAIL);
	CU_ASSERT_EQUAL(solicit_duid(other_mac, ll, 4), DHCP6_STATUS_NO_ADDRS_AVAIL);
	CU_ASSERT_EQUAL(solicit_duid(other_mac, llt, 8), DHCP6_STATUS_NO_ADDRS_AVAIL);
	/* a bound frame MAC wins over the DUID's */
	CU_ASSERT_FATAL(dhcp6_server_set_binding(srv, other_addr_mac, &other_addr, NULL) == 0);
	duid_msg(&m, DHCP6_MSG_SOLICIT, ll, sizeof(ll));
	CU_ASSERT_EQUAL(send_from(&m, other_addr_mac, true), DHCP6_MSG_ADVERTISE);
	s = reply_ia(DHCP6_OPT_IA_NA, 0);
	CU_ASSERT(s.status == -1 && ipv6_equal(&s.addr, &other_addr));
	CU_ASSERT(memcmp(last.mac, other_addr_mac, 6) == 0);
	/* off again */
	dhcp6_server_set_duid_mac(srv, false);
	CU_ASSERT_EQUAL(solicit_duid(other_mac, ll, sizeof(ll)), DHCP6_STATUS_NO_ADDRS_AVAIL);
	teardown();
}

static const struct test_case request_tests[] = {
    {"solicit -> advertise", test_solicit_advertise},
    {"ORO: dns and search list", test_oro_options},
    {"rapid commit", test_rapid_commit},
    {"request -> reply", test_request_reply},
    {"server and client identifiers", test_server_id_rules},
    {"unicast -> UseMulticast", test_use_multicast},
    {"renew and rebind", test_renew_rebind},
    {"release", test_release},
    {"decline", test_decline},
    {"confirm", test_confirm},
    {"information-request", test_information_request},
    {"unknown MAC", test_unknown_mac},
    {"several IAs, IA_TA, IA_PD", test_many_ias},
    {"relayed with option 79", test_relayed},
    {"relay errors", test_relay_errors},
    {"malformed and truncated options", test_malformed},
    {"server-only message types", test_server_messages},
    {"not serving", test_not_serving},
    {"options and bindings", test_options_and_bindings},
    {"reply too big", test_reply_too_big},
    {"DUID link-layer address as the MAC", test_duid_mac},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dhcp6-request", .tests = request_tests},
    {.name = NULL},
};
