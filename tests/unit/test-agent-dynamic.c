/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent/dynamic*.c: --dynamic leases end and DECLINEs are bounded. Leases expire lease time +
 * grace after the last ACK and their addresses go back to the pool; a returning MAC gets its
 * old address while it is free; DECLINEd addresses are held for the hold-down only, at most
 * AGENT_DECLINE_LIMIT per MAC and half the range in all; a restart gives fresh expiries.
 * Leases are keyed by the client identifier (option 61) when the client sends one: it takes its
 * lease to a new MAC; a MAC with a lease keeps it whatever identifier it sends.
 * Driven through the DHCP engine (dhcp_handle_message, wired as agent/serve.c wires it) on a
 * fake clock: nothing sleeps.
 *
 * Size: about 1000 lines, one file on purpose: one module's cases over a shared fake clock and
 * table fixture.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/apply-config.h"
#include "agent/decline-marks.h"
#include "agent/dynamic.h"
#include "agent/leasefile.h"
#include "agent/pool-config.h"
#include "agent/source.h"
#include "dhcp/dhcp-internal.h"
#include "lib/buf.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"
#include "tests/helpers/agent-config.h"
#include "tests/runner.h"

/* range .10-.250 of 10.0.0.0/24: 241 addresses; server .1, router .254 outside it */
#define POOL_DOC(lease)                                                                            \
	"apiVersion: network.harvesterhci.io/v1alpha1\n"                                           \
	"kind: IPPool\n"                                                                           \
	"metadata:\n"                                                                              \
	"  name: net1\n"                                                                           \
	"  namespace: default\n"                                                                   \
	"spec:\n"                                                                                  \
	"  networkName: net1\n"                                                                    \
	"  ipv4Config:\n"                                                                          \
	"    serverIP: 10.0.0.1\n"                                                                 \
	"    cidr: 10.0.0.0/24\n"                                                                  \
	"    router: 10.0.0.254\n"                                                                 \
	"    leaseTime: " lease "\n"                                                               \
	"    pool:\n"                                                                              \
	"      start: 10.0.0.10\n"                                                                 \
	"      end: 10.0.0.250\n"

#define STATIC_DOC                                                                                 \
	"---\n"                                                                                    \
	"apiVersion: network.harvesterhci.io/v1alpha1\n"                                           \
	"kind: VirtualMachineNetworkConfig\n"                                                      \
	"metadata:\n"                                                                              \
	"  name: vm-s\n"                                                                           \
	"  namespace: default\n"                                                                   \
	"spec:\n"                                                                                  \
	"  vmName: vm-s\n"                                                                         \
	"  networkConfigs:\n"                                                                      \
	"    - networkName: net1\n"                                                                \
	"      macAddress: \"52:54:00:00:00:05\"\n"                                                \
	"      ipAddress: 10.0.0.5\n"

#define SERVER_IP 0x0a000001u
#define IP(n) (0x0a000000u + (n))
#define CAPACITY 241u
#define LIFE_S (3600u + 1800u) /* lease time + the default grace (half of it) */
#define HOLD_S 86400u	       /* AGENT_DECLINE_HOLD_DEFAULT */
#define SEC(s) ((uint64_t)(s)*USEC_PER_SEC)
#define T0 SEC(1000)

static const uint8_t static_mac[6] = {0x52, 0x54, 0x00, 0x00, 0x00, 0x05};

static uint64_t fake_now;

static uint64_t
fake_clock(void *userdata)
{
	(void)userdata;
	return fake_now;
}

/* A client identifier (option 61) a request carries: len bytes of b; len 0: none. */
struct cid {
	size_t len;
	uint8_t b[255];
};
static const struct cid no_id;
/* The identifier the next messages carry (send_msg); a test sets it, rig_open clears it. */
static struct cid cur_id;
/* The identifier echoed in the last reply (RFC 6842), as cur_id. */
static struct cid echoed_id;

/* The agent's parts as agent/serve.c wires them: engine callbacks -> dynamic pool, marks. */
struct rig {
	struct agent_config *cfg;
	struct leasefile *lf;
	struct agent_dynamic *d;
	struct agent_marks *marks;
	struct dhcp_server *s;
	struct agent_dynamic_opts opts;
	size_t ignored; /* DECLINEs over the per-MAC limit */
};

/* A REQUEST from a MAC without a binding: commits the address it names (serve.c's on_unknown) */
static int
rig_unknown(void *userdata, const uint8_t mac[6], uint32_t *ret_ip)
{
	struct rig *g = userdata;
	size_t id_len;
	const uint8_t *id = dhcp_server_client_id(g->s, &id_len);

	return agent_dynamic_request_id(
	    g->d, g->s, mac, id, id_len, dhcp_server_requested_ip(g->s), ret_ip);
}

/* A DISCOVER from a MAC without a binding: an offer, not a lease (serve.c's on_offer) */
static int
rig_offer(void *userdata, const uint8_t mac[6], uint32_t *ret_ip)
{
	struct rig *g = userdata;
	size_t id_len;
	const uint8_t *id = dhcp_server_client_id(g->s, &id_len);

	return agent_dynamic_offer_id(g->d, g->s, mac, id, id_len, ret_ip);
}

static void
rig_ack(void *userdata, const uint8_t mac[6], uint32_t ip)
{
	struct rig *g = userdata;
	size_t id_len;
	const uint8_t *id = dhcp_server_client_id(g->s, &id_len);

	(void)agent_dynamic_renew_id(g->d, mac, id, id_len, ip);
}

static void
rig_decline(void *userdata, const uint8_t mac[6], uint32_t ip)
{
	struct rig *g = userdata;
	uint32_t nip, bound;
	int r = agent_dynamic_decline(g->d, mac, ip, &nip);

	if (r == 0) {
		CU_ASSERT_EQUAL(dhcp_server_set_binding(g->s, mac, nip, NULL), 0);
		return;
	}
	if (r == -EBUSY)
		g->ignored++;
	/* the engine's mark stays: held down like a static binding's */
	if (r != -ENOENT || (dhcp_server_get_binding(g->s, mac, &bound) == 0 && bound == ip))
		CU_ASSERT_EQUAL(agent_marks_add(g->marks, mac, ip, fake_now), 0);
}

/* --offer-hold and --max-pending-offers of the next rig_open (0: the defaults) */
static uint32_t rig_offer_hold_s;
static size_t rig_max_offers;

/* A pool over lease file path (NULL: memory), grace/hold as given (AGENT_DEFAULT: default). */
static void
rig_open(struct rig *g, const char *text, const char *path, uint32_t grace_s, uint32_t hold_s)
{
	struct dhcp_callbacks cb = {
	    .on_unknown = rig_unknown,
	    .on_offer = rig_offer,
	    .on_decline = rig_decline,
	    .on_ack = rig_ack,
	    .userdata = g,
	};
	char err[AGENT_ERR_MAX] = "";
	static const uint8_t hw[6] = {0x02, 0, 0, 0, 0, 0x01};

	memset(g, 0, sizeof(*g));
	cur_id = no_id;
	g->opts = (struct agent_dynamic_opts){.clock = fake_clock,
	    .grace_s = grace_s,
	    .decline_hold_s = hold_s,
	    .offer_hold_s = rig_offer_hold_s,
	    .max_offers = rig_max_offers};
	g->cfg = test_agent_config_ok(text);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(path, &g->lf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(agent_dynamic_new_opts(g->cfg, g->lf, &g->opts, NULL, &g->d), 0);
	CU_ASSERT_EQUAL_FATAL(
	    agent_marks_new(
		hold_s == AGENT_DEFAULT ? AGENT_DECLINE_HOLD_DEFAULT : hold_s, &g->marks),
	    0);
	CU_ASSERT_EQUAL_FATAL(dhcp_server_new(&g->s), 0);
	dhcp_server_set_hwaddr(g->s, hw);
	dhcp_server_set_callbacks(g->s, &cb);
	dhcp_server_set_clock(g->s, fake_clock, NULL);
	CU_ASSERT_EQUAL_FATAL(agent_apply_config(g->s, g->cfg, g->d, err, sizeof(err)), 0);
}

static void
rig_close(struct rig *g)
{
	dhcp_server_free(g->s);
	agent_marks_free(g->marks);
	agent_dynamic_free(g->d);
	leasefile_free(g->lf);
	agent_config_free(g->cfg);
}

/* ---- messages ------------------------------------------------------------------------- */

struct req {
	struct dhcp_msg m;
	uint8_t cookie[4];
	uint8_t opts[320];
} __attribute__((packed));

/* type from mac; requested (option 50) and server id (54) when not 0; ciaddr; cur_id. */
static int
send_msg(struct rig *g, uint8_t type, const uint8_t mac[6], uint32_t requested, uint32_t server,
    uint32_t ciaddr, uint32_t *ret_yiaddr)
{
	struct req r;
	struct dhcp_reply rep;
	size_t n = 0;
	int t;

	memset(&r, 0, sizeof(r));
	r.m.op = BOOTREQUEST;
	r.m.htype = 1;
	r.m.hlen = 6;
	be32_put(r.m.xid, 0x11223344);
	be32_put(r.m.ciaddr, ciaddr);
	memcpy(r.m.chaddr, mac, 6);
	be32_put(r.cookie, DHCP_MAGIC_COOKIE);
	r.opts[n++] = DHCP_OPT_MESSAGE_TYPE;
	r.opts[n++] = 1;
	r.opts[n++] = type;
	if (requested != 0) {
		r.opts[n++] = DHCP_OPT_REQUESTED_IP;
		r.opts[n++] = 4;
		be32_put(r.opts + n, requested);
		n += 4;
	}
	if (server != 0) {
		r.opts[n++] = DHCP_OPT_SERVER_ID;
		r.opts[n++] = 4;
		be32_put(r.opts + n, server);
		n += 4;
	}
	if (cur_id.len > 0) {
		r.opts[n++] = DHCP_OPT_CLIENT_ID;
		r.opts[n++] = (uint8_t)cur_id.len;
		memcpy(r.opts + n, cur_id.b, cur_id.len);
		n += cur_id.len;
	}
	r.opts[n++] = DHCP_OPT_END;
	t = dhcp_handle_message(
	    g->s, (const uint8_t *)&r, sizeof(struct dhcp_msg) + 4 + n, fake_now, &rep);
	if (ret_yiaddr != NULL)
		*ret_yiaddr = t > 0 ? be32_get(((const struct dhcp_msg *)rep.payload)->yiaddr) : 0;
	echoed_id.len = 0;
	if (t > 0) {
		struct dhcp_option_table ot;
		const uint8_t *v;
		size_t vlen = 0;
		CU_ASSERT_EQUAL_FATAL(dhcp_option_parse(&ot, rep.payload, rep.payload_len), 0);
		if ((v = dhcp_option_get(&ot, DHCP_OPT_CLIENT_ID, &vlen)) != NULL) {
			memcpy(echoed_id.b, v, vlen);
			echoed_id.len = vlen;
		}
	}
	return t;
}

/* DISCOVER: the address offered, or 0 (silence). */
static uint32_t
discover(struct rig *g, const uint8_t mac[6])
{
	uint32_t ip = 0;

	return send_msg(g, DHCP_MSG_DISCOVER, mac, 0, 0, 0, &ip) == DHCP_MSG_OFFER ? ip : 0;
}

/* DISCOVER, then REQUEST of the offer (SELECTING): the address ACKed, or 0. */
static uint32_t
bind_mac(struct rig *g, const uint8_t mac[6])
{
	uint32_t ip = discover(g, mac), acked = 0;

	if (ip == 0 || send_msg(g, DHCP_MSG_REQUEST, mac, ip, SERVER_IP, 0, &acked) != DHCP_MSG_ACK)
		return 0;
	return acked;
}

/* RENEWING: unicast REQUEST with ciaddr, no option 50 or 54. True when ACKed. */
static bool
renew(struct rig *g, const uint8_t mac[6], uint32_t ip)
{
	return send_msg(g, DHCP_MSG_REQUEST, mac, 0, 0, ip, NULL) == DHCP_MSG_ACK;
}

static void
decline(struct rig *g, const uint8_t mac[6], uint32_t ip)
{
	CU_ASSERT_EQUAL(send_msg(g, DHCP_MSG_DECLINE, mac, ip, SERVER_IP, 0, NULL), 0);
}

static void
mac_n(uint8_t mac[6], unsigned n)
{
	uint8_t m[6] = {0x02, 0xaa, 0, 0, (uint8_t)(n >> 8), (uint8_t)n};

	memcpy(mac, m, 6);
}

static uint32_t
bound_ip(struct rig *g, const uint8_t mac[6])
{
	uint32_t ip = 0;

	return dhcp_server_get_binding(g->s, mac, &ip) == 0 ? ip : 0;
}

/* ---- tests ------------------------------------------------------------------------------ */

static void
test_lease_expires_after_lease_and_grace(void)
{
	struct rig g;
	uint8_t m1[6], m2[6];
	uint64_t exp = 0;
	uint32_t ip;

	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	mac_n(m1, 1);
	mac_n(m2, 2);
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	CU_ASSERT_EQUAL(agent_dynamic_expiry(g.d, m1, &exp), 0);
	CU_ASSERT_EQUAL(exp, T0 + SEC(LIFE_S));
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 1);

	/* one microsecond before lease + grace: still the MAC's */
	fake_now = T0 + SEC(LIFE_S) - 1;
	CU_ASSERT_EQUAL(agent_dynamic_expire(g.d, g.s, 1u << 20), 0u);
	CU_ASSERT_EQUAL(bound_ip(&g, m1), IP(10));
	CU_ASSERT_EQUAL(discover(&g, m2), IP(11));

	/* lease + grace: out of the engine and the lease file, the address free again */
	fake_now = T0 + SEC(LIFE_S);
	CU_ASSERT_EQUAL(agent_dynamic_expire(g.d, g.s, 1u << 20), 1u);
	CU_ASSERT_EQUAL(dhcp_server_get_binding(g.s, m1, NULL), -ENOENT);
	CU_ASSERT_EQUAL(leasefile_lookup(g.lf, m1, &ip), -ENOENT);
	CU_ASSERT_EQUAL(agent_dynamic_expiry(g.d, m1, &exp), -ENOENT);
	/* m2's offer (not REQUESTed) was made 1 us ago: held, not bound, not leased */
	CU_ASSERT_EQUAL(bound_ip(&g, m2), 0u);
	CU_ASSERT_EQUAL(agent_dynamic_offered(g.d, m2, &ip, NULL), 0);
	CU_ASSERT_EQUAL(ip, IP(11));
	CU_ASSERT_EQUAL(leasefile_lookup(g.lf, m2, &ip), -ENOENT);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 1);

	/* lowest free: a new MAC gets the expired lease's address */
	{
		uint8_t m3[6];
		mac_n(m3, 3);
		CU_ASSERT_EQUAL(bind_mac(&g, m3), IP(10));
	}
	rig_close(&g);
}

static void
test_returning_mac_gets_its_address_while_free(void)
{
	struct rig g;
	uint8_t m1[6], m2[6], m3[6], m4[6];

	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	mac_n(m1, 1);
	mac_n(m2, 2);
	mac_n(m3, 3);
	mac_n(m4, 4);
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	CU_ASSERT_EQUAL(bind_mac(&g, m2), IP(11));
	CU_ASSERT_EQUAL(bind_mac(&g, m3), IP(12));
	fake_now = T0 + SEC(3000);
	CU_ASSERT_TRUE(renew(&g, m3, IP(12)));
	fake_now = T0 + SEC(LIFE_S);
	CU_ASSERT_EQUAL(agent_dynamic_expire(g.d, g.s, 1u << 20), 2u); /* m1, m2 */

	/* m2 comes back: its old .11, although .10 is the lowest free */
	CU_ASSERT_EQUAL(bind_mac(&g, m2), IP(11));
	/* a new MAC takes .10, m1's old address; m1 then gets the lowest free one */
	CU_ASSERT_EQUAL(bind_mac(&g, m4), IP(10));
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(13));
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 4);
	rig_close(&g);
}

static void
test_ack_renews_the_lease(void)
{
	struct rig g;
	uint8_t m1[6];
	uint64_t exp = 0;

	fake_now = T0;
	rig_open(&g, POOL_DOC("3600") STATIC_DOC, NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	mac_n(m1, 1);
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	fake_now = T0 + SEC(3000);
	CU_ASSERT_TRUE(renew(&g, m1, IP(10)));
	CU_ASSERT_EQUAL(agent_dynamic_expiry(g.d, m1, &exp), 0);
	CU_ASSERT_EQUAL(exp, T0 + SEC(3000 + LIFE_S));
	/* a static binding's ACK is no lease: nothing to renew, nothing recorded */
	CU_ASSERT_TRUE(renew(&g, static_mac, IP(5)));
	CU_ASSERT_EQUAL(agent_dynamic_expiry(g.d, static_mac, &exp), -ENOENT);

	/* the first lease + grace has passed: renewed, so kept */
	fake_now = T0 + SEC(LIFE_S);
	CU_ASSERT_EQUAL(agent_dynamic_expire(g.d, g.s, 1u << 20), 0u);
	CU_ASSERT_EQUAL(bound_ip(&g, m1), IP(10));
	fake_now = T0 + SEC(3000 + LIFE_S);
	CU_ASSERT_EQUAL(agent_dynamic_expire(g.d, g.s, 1u << 20), 1u);
	CU_ASSERT_EQUAL(bound_ip(&g, m1), 0u);
	/* the static binding never expires */
	CU_ASSERT_EQUAL(bound_ip(&g, static_mac), IP(5));
	rig_close(&g);
}

static void
test_grace_flag_and_budget(void)
{
	struct rig g;
	uint8_t m[6];
	size_t total = 0, calls = 0, n;

	fake_now = T0;
	log_set_level(LOG_LEVEL_WARN);			       /* one info line per lease expired */
	rig_open(&g, POOL_DOC("600"), NULL, 0, AGENT_DEFAULT); /* --lease-grace 0 */
	for (unsigned i = 0; i < 100; i++) {
		mac_n(m, 100 + i);
		CU_ASSERT_EQUAL(bind_mac(&g, m), IP(10 + i));
	}
	fake_now = T0 + SEC(600) - 1;
	CU_ASSERT_EQUAL(agent_dynamic_expire(g.d, g.s, 1u << 20), 0u);
	fake_now = T0 + SEC(600);
	/* each call looks at 16 slots at most: several calls reclaim them all */
	while ((n = agent_dynamic_expire(g.d, g.s, 16)) > 0 || total < 100) {
		CU_ASSERT_FATAL(n <= 16);
		total += n;
		CU_ASSERT_FATAL(++calls < 1000);
	}
	CU_ASSERT_EQUAL(total, 100u);
	CU_ASSERT(calls > 100 / 16);
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(g.s), 0u);
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 0u);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY);
	rig_close(&g);
	log_set_level(LOG_LEVEL_INFO);
}

static void
test_one_mac_declining_100_times(void)
{
	struct rig g;
	uint8_t m1[6], m2[6];
	uint32_t ip;

	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	mac_n(m1, 1);
	mac_n(m2, 2);
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	for (unsigned i = 0; i < 100; i++) {
		fake_now += SEC(10); /* RFC 2131 §3.1: a client waits 10 s after a DECLINE */
		decline(&g, m1, bound_ip(&g, m1));
	}
	CU_ASSERT_EQUAL(agent_dynamic_held(g.d), (size_t)AGENT_DECLINE_LIMIT);
	CU_ASSERT_EQUAL(g.ignored, 100u - AGENT_DECLINE_LIMIT);
	/* the limit's worth of held addresses plus m1's own lease: the rest is free */
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - AGENT_DECLINE_LIMIT - 1);
	CU_ASSERT_EQUAL(leasefile_lookup(g.lf, m1, &ip), 0);
	CU_ASSERT_EQUAL(ip, IP(10 + AGENT_DECLINE_LIMIT));
	/* m1 is silent (its last DECLINE was not honoured); others are served */
	CU_ASSERT_EQUAL(discover(&g, m1), 0u);
	CU_ASSERT_EQUAL(bind_mac(&g, m2), IP(10 + AGENT_DECLINE_LIMIT + 1));
	rig_close(&g);
}

static void
test_made_up_macs_declining(void)
{
	struct rig g;
	uint8_t m[6];
	size_t max_held;
	unsigned served = 0;

	fake_now = T0;
	log_set_level(LOG_LEVEL_WARN); /* one info line per lease expired, per hold ended early */
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	max_held = agent_dynamic_held_max(g.d);
	CU_ASSERT_EQUAL(max_held, CAPACITY / 2);
	for (unsigned i = 0; i < 300; i++) {
		uint32_t ip;
		mac_n(m, 1000 + i);
		if ((ip = bind_mac(&g, m)) == 0)
			continue; /* the range is full of their leases */
		served++;
		decline(&g, m, ip);
		CU_ASSERT_FATAL(agent_dynamic_held(g.d) <= max_held);
	}
	CU_ASSERT(served > max_held);
	CU_ASSERT_EQUAL(agent_dynamic_held(g.d), max_held);
	CU_ASSERT_EQUAL(g.ignored, 0u);
	/* their leases are not renewed: once they expire, only the bound stays held */
	fake_now += SEC(LIFE_S);
	CU_ASSERT(agent_dynamic_expire(g.d, g.s, 1u << 20) > 0);
	CU_ASSERT_EQUAL(agent_dynamic_held(g.d), max_held);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - max_held);
	mac_n(m, 1);
	CU_ASSERT_NOT_EQUAL(bind_mac(&g, m), 0u);
	rig_close(&g);
	log_set_level(LOG_LEVEL_INFO);
}

static void
test_declined_addresses_come_back(void)
{
	struct rig g;
	uint8_t m1[6], m2[6];
	uint64_t t;

	fake_now = T0;
	/* --decline-hold 600 */
	rig_open(&g, POOL_DOC("3600") STATIC_DOC, NULL, AGENT_DEFAULT, 600);
	mac_n(m1, 1);
	mac_n(m2, 2);
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	CU_ASSERT_EQUAL(discover(&g, static_mac), IP(5));
	t = fake_now = T0 + SEC(10);
	decline(&g, m1, IP(10));
	decline(&g, static_mac, IP(5));
	CU_ASSERT_EQUAL(bound_ip(&g, m1), IP(11));
	CU_ASSERT_EQUAL(agent_dynamic_held(g.d), 1u);
	CU_ASSERT_EQUAL(agent_marks_count(g.marks), 1u);
	CU_ASSERT_EQUAL(discover(&g, static_mac), 0u); /* its address is in use */

	fake_now = t + SEC(600) - 1;
	(void)agent_dynamic_expire(g.d, g.s, 1u << 20);
	CU_ASSERT_EQUAL(agent_marks_expire(g.marks, g.s, fake_now, 1u << 20), 0u);
	CU_ASSERT_EQUAL(agent_dynamic_held(g.d), 1u);
	CU_ASSERT_EQUAL(discover(&g, static_mac), 0u);
	CU_ASSERT_EQUAL(discover(&g, m2), IP(12));

	/* the hold-down is over: .10 is the lowest free again, the static MAC is answered */
	fake_now = t + SEC(600);
	(void)agent_dynamic_expire(g.d, g.s, 1u << 20);
	CU_ASSERT_EQUAL(agent_marks_expire(g.marks, g.s, fake_now, 1u << 20), 1u);
	CU_ASSERT_EQUAL(agent_dynamic_held(g.d), 0u);
	CU_ASSERT_EQUAL(agent_marks_count(g.marks), 0u);
	CU_ASSERT_EQUAL(discover(&g, static_mac), IP(5));
	{
		uint8_t m3[6];
		mac_n(m3, 3);
		CU_ASSERT_EQUAL(bind_mac(&g, m3), IP(10));
	}
	rig_close(&g);
}

static void
test_default_hold_down(void)
{
	struct rig g;
	uint8_t m1[6];

	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	mac_n(m1, 1);
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	decline(&g, m1, IP(10));
	CU_ASSERT_EQUAL(agent_dynamic_held(g.d), 1u);
	fake_now = T0 + SEC(HOLD_S) - 1;
	(void)agent_dynamic_expire(g.d, g.s, 1u << 20);
	CU_ASSERT_EQUAL(agent_dynamic_held(g.d), 1u);
	fake_now = T0 + SEC(HOLD_S);
	(void)agent_dynamic_expire(g.d, g.s, 1u << 20);
	CU_ASSERT_EQUAL(agent_dynamic_held(g.d), 0u);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY);
	rig_close(&g);
}

static void
test_restart_gives_fresh_expiries(void)
{
	char dir[] = "/tmp/test-agent-dynamic-XXXXXX", path[64];
	struct rig g;
	uint8_t m1[6], m2[6];
	uint64_t exp = 0;
	uint32_t ip;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/leases", dir);
	mac_n(m1, 1);
	mac_n(m2, 2);
	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), path, AGENT_DEFAULT, AGENT_DEFAULT);
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	CU_ASSERT_EQUAL(bind_mac(&g, m2), IP(11));
	CU_ASSERT_EQUAL(leasefile_flush(g.lf), 0);
	rig_close(&g);

	/* down for longer than lease + grace: the leases start afresh, nothing is reassigned */
	fake_now = T0 + SEC(10000);
	rig_open(&g, POOL_DOC("3600"), path, AGENT_DEFAULT, AGENT_DEFAULT);
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 2u);
	CU_ASSERT_EQUAL(agent_dynamic_expiry(g.d, m1, &exp), 0);
	CU_ASSERT_EQUAL(exp, T0 + SEC(10000 + LIFE_S));
	CU_ASSERT_EQUAL(agent_dynamic_expire(g.d, g.s, 1u << 20), 0u);
	CU_ASSERT_EQUAL(bound_ip(&g, m1), IP(10));
	CU_ASSERT_EQUAL(bound_ip(&g, m2), IP(11));

	/*
	 * A reload (the pool rebuilt from the running one) keeps expiries and held addresses,
	 * even with a shorter lease time: the clients were told the old one at their last ACK.
	 */
	fake_now = T0 + SEC(12000);
	CU_ASSERT_TRUE(renew(&g, m2, IP(11)));
	decline(&g, m2, IP(11));
	CU_ASSERT_EQUAL(bound_ip(&g, m2), IP(12));
	fake_now = T0 + SEC(13000);
	{
		struct agent_config *c2 = test_agent_config_ok(POOL_DOC("600"));
		struct agent_dynamic *d2 = NULL;
		char err[AGENT_ERR_MAX];
		CU_ASSERT_EQUAL_FATAL(agent_dynamic_new_opts(c2, g.lf, &g.opts, g.d, &d2), 0);
		agent_dynamic_free(g.d);
		agent_config_free(g.cfg);
		g.d = d2;
		g.cfg = c2;
		CU_ASSERT(agent_apply_config(g.s, g.cfg, g.d, err, sizeof(err)) >= 0);
	}
	CU_ASSERT_EQUAL(agent_dynamic_expiry(g.d, m1, &exp), 0);
	CU_ASSERT_EQUAL(exp, T0 + SEC(10000 + LIFE_S));
	CU_ASSERT_EQUAL(agent_dynamic_expiry(g.d, m2, &exp), 0);
	CU_ASSERT_EQUAL(exp, T0 + SEC(12000 + LIFE_S));
	CU_ASSERT_EQUAL(agent_dynamic_held(g.d), 1u);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 3);

	fake_now = T0 + SEC(10000 + LIFE_S);
	CU_ASSERT_EQUAL(agent_dynamic_expire(g.d, g.s, 1u << 20), 1u);
	CU_ASSERT_EQUAL(leasefile_lookup(g.lf, m1, &ip), -ENOENT);
	CU_ASSERT_EQUAL(leasefile_compact(g.lf), 0);
	rig_close(&g);

	/* the expired lease is gone from the file too */
	fake_now = T0 + SEC(20000);
	rig_open(&g, POOL_DOC("3600"), path, AGENT_DEFAULT, AGENT_DEFAULT);
	CU_ASSERT_EQUAL(leasefile_lookup(g.lf, m1, &ip), -ENOENT);
	CU_ASSERT_EQUAL(leasefile_lookup(g.lf, m2, &ip), 0);
	CU_ASSERT_EQUAL(ip, IP(12));
	rig_close(&g);
	unlink(path);
	rmdir(dir);
}

/* ---- client identifiers ------------------------------------------------------------------ */

/* An identifier of RFC 4361's form: 0xff, IAID, DUID-LL (type 3, htype 1, a MAC); n picks it. */
static struct cid
duid(unsigned n)
{
	struct cid c = {.len = 15,
	    .b = {0xff, 0, 0, 0, 1, 0, 3, 0, 1, 0x02, 0xdd, 0, 0, (uint8_t)(n >> 8), (uint8_t)n}};

	return c;
}

/* 0x01 + mac: what udhcpc sends by default, and the key of a request without an identifier. */
static struct cid
mac_form(const uint8_t mac[6])
{
	struct cid c = {.len = 7, .b = {1}};

	memcpy(c.b + 1, mac, 6);
	return c;
}

/* The lease of identifier c: the MAC it is bound to and its address; false when none. */
static bool
id_lease(struct rig *g, const struct cid *c, uint8_t mac[6], uint32_t *ip)
{
	static const uint8_t any[6] = {0x02, 0, 0, 0, 0, 0xee};

	return leasefile_lookup_id(g->lf, c->b, c->len, any, mac, ip) == 0;
}

static void
test_client_id_takes_its_lease_to_a_new_mac(void)
{
	struct rig g;
	struct cid a = duid(1), b = duid(2);
	uint8_t m1[6], m2[6], m3[6], owner[6];
	uint64_t exp = 0;
	uint32_t ip = 0;
	size_t len = 1;

	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	mac_n(m1, 1);
	mac_n(m2, 2);
	mac_n(m3, 3);
	cur_id = a;
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	/* RFC 6842: echoed in the reply; the engine forgets it once the request is handled */
	CU_ASSERT_EQUAL(echoed_id.len, a.len);
	CU_ASSERT(memcmp(echoed_id.b, a.b, a.len) == 0);
	CU_ASSERT_PTR_NULL(dhcp_server_client_id(g.s, &len));
	CU_ASSERT_EQUAL(len, 0u);
	cur_id = b;
	CU_ASSERT_EQUAL(bind_mac(&g, m2), IP(11));

	/* the NIC is re-created: a new MAC, the same identifier, the same address */
	fake_now = T0 + SEC(100);
	cur_id = a;
	CU_ASSERT_EQUAL(discover(&g, m3), IP(10));
	CU_ASSERT_EQUAL(dhcp_server_get_binding(g.s, m1, NULL), -ENOENT); /* the old MAC's: gone */
	CU_ASSERT_EQUAL(bound_ip(&g, m3), IP(10));
	CU_ASSERT_EQUAL(bind_mac(&g, m3), IP(10));
	CU_ASSERT_TRUE(id_lease(&g, &a, owner, &ip));
	CU_ASSERT(memcmp(owner, m3, 6) == 0);
	CU_ASSERT_EQUAL(ip, IP(10));
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 2u);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 2);
	CU_ASSERT_EQUAL(agent_dynamic_expiry(g.d, m1, &exp), -ENOENT);
	CU_ASSERT_EQUAL(agent_dynamic_expiry(g.d, m3, &exp), 0);
	CU_ASSERT_EQUAL(exp, T0 + SEC(100 + LIFE_S));
	CU_ASSERT_EQUAL(bound_ip(&g, m2), IP(11)); /* the other identifier's stays */

	/* the old MAC without the identifier is another client: NAKed at its renewal */
	cur_id = no_id;
	CU_ASSERT_EQUAL(send_msg(&g, DHCP_MSG_REQUEST, m1, 0, 0, IP(10), NULL), DHCP_MSG_NAK);
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(12));
	/* and a MAC with a lease keeps it, even when it sends an identifier leased elsewhere */
	cur_id = a;
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(12));
	CU_ASSERT_TRUE(id_lease(&g, &a, owner, &ip));
	CU_ASSERT(memcmp(owner, m3, 6) == 0);
	CU_ASSERT_EQUAL(bound_ip(&g, m3), IP(10));
	rig_close(&g);
}

static void
test_no_client_id_is_keyed_by_mac(void)
{
	char dir[] = "/tmp/test-agent-dynamic-XXXXXX", path[64];
	struct rig g;
	uint8_t m1[6], m2[6], m3[6];
	uint32_t ip = 0;
	char *text = NULL;
	size_t len;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/leases", dir);
	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), path, AGENT_DEFAULT, AGENT_DEFAULT);
	mac_n(m1, 1);
	mac_n(m2, 2);
	mac_n(m3, 3);
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	/* 0x01 + its MAC is the same key (what udhcpc sends by default) */
	cur_id = mac_form(m1);
	CU_ASSERT_TRUE(renew(&g, m1, IP(10)));
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	CU_ASSERT_EQUAL(leasefile_lookup(g.lf, m1, &ip), 0);
	CU_ASSERT_EQUAL(ip, IP(10));
	/* a new MAC (the NIC re-created) without an identifier is a new client, as always */
	cur_id = no_id;
	CU_ASSERT_EQUAL(bind_mac(&g, m2), IP(11));
	cur_id = mac_form(m3);
	CU_ASSERT_EQUAL(bind_mac(&g, m3), IP(12));
	CU_ASSERT_EQUAL(bound_ip(&g, m1), IP(10));
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 3u);
	rig_close(&g);
	/* and on disk they are the lines of before: no id= */
	CU_ASSERT_EQUAL_FATAL(read_file(path, 1 << 20, &text, &len), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "02:aa:00:00:00:01 10.0.0.10\n"));
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "02:aa:00:00:00:03 10.0.0.12\n"));
	CU_ASSERT_PTR_NULL(strstr(text, " id=")); /* (the header says "[id=...]") */
	free(text);
	unlink(path);
	rmdir(dir);
}

static void
test_one_mac_two_client_ids(void)
{
	struct rig g;
	struct cid a = duid(1), b = duid(2);
	uint8_t m1[6], m2[6], m3[6], owner[6];
	uint32_t ip = 0;

	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	mac_n(m1, 1);
	mac_n(m2, 2);
	mac_n(m3, 3);
	cur_id = a;
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	/* one NIC, another identifier (firmware, then the OS): its one binding, not a second */
	cur_id = b;
	CU_ASSERT_EQUAL(discover(&g, m1), IP(10));
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 1u);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 1);
	/* ACKed with b: the lease is b's now */
	CU_ASSERT_TRUE(id_lease(&g, &b, owner, &ip));
	CU_ASSERT(memcmp(owner, m1, 6) == 0);
	CU_ASSERT_EQUAL(ip, IP(10));
	CU_ASSERT_FALSE(id_lease(&g, &a, owner, &ip));
	/* no identifier, or 0x01 + the MAC, says nothing new: the key stays */
	cur_id = no_id;
	CU_ASSERT_TRUE(renew(&g, m1, IP(10)));
	cur_id = mac_form(m1);
	CU_ASSERT_TRUE(renew(&g, m1, IP(10)));
	CU_ASSERT_TRUE(id_lease(&g, &b, owner, &ip));
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 1u);
	/* so b from a new MAC takes it */
	cur_id = b;
	CU_ASSERT_EQUAL(bind_mac(&g, m2), IP(10));
	CU_ASSERT_EQUAL(bound_ip(&g, m1), 0u);
	/* an identifier with a lease on another MAC does not take over this MAC's lease */
	cur_id = a;
	CU_ASSERT_EQUAL(bind_mac(&g, m3), IP(11));
	cur_id = b;
	CU_ASSERT_TRUE(renew(&g, m3, IP(11)));
	CU_ASSERT_TRUE(id_lease(&g, &b, owner, &ip));
	CU_ASSERT(memcmp(owner, m2, 6) == 0);
	CU_ASSERT_TRUE(id_lease(&g, &a, owner, &ip));
	CU_ASSERT(memcmp(owner, m3, 6) == 0);
	CU_ASSERT_EQUAL(ip, IP(11));
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 2u);
	rig_close(&g);
}

static void
test_client_id_lease_expires(void)
{
	struct rig g;
	struct cid a = duid(1), b = duid(2);
	uint8_t m1[6], m2[6], m3[6], owner[6];
	uint64_t exp = 0;
	uint32_t ip;

	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	mac_n(m1, 1);
	mac_n(m2, 2);
	mac_n(m3, 3);
	cur_id = a;
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	/* moved to m2 and ACKed there: renewed */
	fake_now = T0 + SEC(3000);
	CU_ASSERT_EQUAL(bind_mac(&g, m2), IP(10));
	CU_ASSERT_EQUAL(agent_dynamic_expiry(g.d, m2, &exp), 0);
	CU_ASSERT_EQUAL(exp, T0 + SEC(3000 + LIFE_S));
	fake_now = T0 + SEC(LIFE_S);
	CU_ASSERT_EQUAL(agent_dynamic_expire(g.d, g.s, 1u << 20), 0u);
	CU_ASSERT_EQUAL(bound_ip(&g, m2), IP(10));
	/* lease + grace after its last ACK: out of the engine and the lease file */
	fake_now = T0 + SEC(3000 + LIFE_S) - 1;
	CU_ASSERT_EQUAL(agent_dynamic_expire(g.d, g.s, 1u << 20), 0u);
	fake_now = T0 + SEC(3000 + LIFE_S);
	CU_ASSERT_EQUAL(agent_dynamic_expire(g.d, g.s, 1u << 20), 1u);
	CU_ASSERT_EQUAL(bound_ip(&g, m2), 0u);
	CU_ASSERT_FALSE(id_lease(&g, &a, owner, &ip));
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 0u);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY);
	/* the address is free: the next new client gets it */
	cur_id = b;
	CU_ASSERT_EQUAL(bind_mac(&g, m3), IP(10));
	rig_close(&g);
}

static void
test_client_id_decline_hold_down(void)
{
	struct rig g;
	struct cid a = duid(1), b = duid(2);
	uint8_t m1[6], m2[6], m3[6], owner[6];
	uint32_t ip = 0;
	uint64_t t;

	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, 600); /* --decline-hold 600 */
	mac_n(m1, 1);
	mac_n(m2, 2);
	mac_n(m3, 3);
	cur_id = a;
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	t = fake_now = T0 + SEC(10);
	decline(&g, m1, IP(10));
	CU_ASSERT_EQUAL(bound_ip(&g, m1), IP(11));
	CU_ASSERT_EQUAL(agent_dynamic_held(g.d), 1u);
	CU_ASSERT_TRUE(id_lease(&g, &a, owner, &ip));
	CU_ASSERT_EQUAL(ip, IP(11));
	/* the lease moves to a new MAC with its identifier; the declined address stays held */
	CU_ASSERT_EQUAL(bind_mac(&g, m2), IP(11));
	cur_id = b;
	CU_ASSERT_EQUAL(bind_mac(&g, m3), IP(12));
	/* its DECLINE count moved too: AGENT_DECLINE_LIMIT in all, the rest ignored */
	cur_id = a;
	for (unsigned i = 0; i < AGENT_DECLINE_LIMIT; i++) {
		fake_now += SEC(10);
		decline(&g, m2, bound_ip(&g, m2));
	}
	CU_ASSERT_EQUAL(agent_dynamic_held(g.d), (size_t)AGENT_DECLINE_LIMIT);
	CU_ASSERT_EQUAL(g.ignored, 1u);
	/* the hold-down is over: the held addresses are free again */
	fake_now = t + SEC(600) + SEC(10 * AGENT_DECLINE_LIMIT);
	(void)agent_dynamic_expire(g.d, g.s, 1u << 20);
	CU_ASSERT_EQUAL(agent_dynamic_held(g.d), 0u);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 2);
	rig_close(&g);
}

static void
test_client_id_leases_survive_a_restart(void)
{
	char dir[] = "/tmp/test-agent-dynamic-XXXXXX", path[64];
	struct rig g;
	struct cid a = duid(1), b = duid(2);
	uint8_t m1[6], m2[6], m3[6], m4[6], owner[6];
	uint32_t ip = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/leases", dir);
	mac_n(m1, 1);
	mac_n(m2, 2);
	mac_n(m3, 3);
	mac_n(m4, 4);
	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), path, AGENT_DEFAULT, AGENT_DEFAULT);
	cur_id = a;
	CU_ASSERT_EQUAL(bind_mac(&g, m1), IP(10));
	cur_id = no_id;
	CU_ASSERT_EQUAL(bind_mac(&g, m2), IP(11));
	cur_id = a;
	CU_ASSERT_EQUAL(bind_mac(&g, m3), IP(10)); /* moved */
	cur_id = b;
	CU_ASSERT_TRUE(renew(&g, m2, IP(11))); /* keyed by b from now on */
	/* no compaction (kill -9): the journal's four lines alone say it */
	rig_close(&g);

	fake_now = T0 + SEC(100);
	rig_open(&g, POOL_DOC("3600"), path, AGENT_DEFAULT, AGENT_DEFAULT);
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 2u);
	CU_ASSERT_EQUAL(bound_ip(&g, m1), 0u);
	CU_ASSERT_EQUAL(bound_ip(&g, m3), IP(10));
	CU_ASSERT_EQUAL(bound_ip(&g, m2), IP(11));
	CU_ASSERT_TRUE(id_lease(&g, &a, owner, &ip));
	CU_ASSERT(memcmp(owner, m3, 6) == 0);
	CU_ASSERT_TRUE(id_lease(&g, &b, owner, &ip));
	CU_ASSERT(memcmp(owner, m2, 6) == 0);
	CU_ASSERT_EQUAL(leasefile_lookup(g.lf, m2, &ip), -ENOENT);
	/* the keys came back: b from a new MAC takes m2's lease */
	cur_id = b;
	CU_ASSERT_EQUAL(bind_mac(&g, m4), IP(11));
	CU_ASSERT_EQUAL(bound_ip(&g, m2), 0u);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 2);
	rig_close(&g);
	unlink(path);
	rmdir(dir);
}

/* ---- pending offers ----------------------------------------------------------------------- */

#define OFFER_S 10u /* AGENT_OFFER_HOLD_DEFAULT */

static struct agent_offer_stats
ostats(struct rig *g)
{
	struct agent_offer_stats st;

	agent_dynamic_offer_stats(g->d, &st);
	return st;
}

/* SELECTING: REQUEST of ip naming this server. The reply type (0: silence). */
static int
select_ip(struct rig *g, const uint8_t mac[6], uint32_t ip)
{
	return send_msg(g, DHCP_MSG_REQUEST, mac, ip, SERVER_IP, 0, NULL);
}

static void
test_offer_is_held_briefly(void)
{
	struct rig g;
	uint8_t m1[6], m2[6], m3[6];
	uint64_t due = 0;
	uint32_t ip = 0;

	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	mac_n(m1, 1);
	mac_n(m2, 2);
	mac_n(m3, 3);
	CU_ASSERT_EQUAL(AGENT_OFFER_HOLD_DEFAULT, OFFER_S);
	CU_ASSERT_EQUAL(discover(&g, m1), IP(10));
	CU_ASSERT_EQUAL(discover(&g, m2), IP(11));
	/* offered, held: no binding, no lease, no lease line; the addresses are not free */
	CU_ASSERT_EQUAL(bound_ip(&g, m1), 0u);
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(g.s), 0u);
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 0u);
	CU_ASSERT_EQUAL(agent_dynamic_expiry(g.d, m1, &due), -ENOENT);
	CU_ASSERT_EQUAL(agent_dynamic_offered(g.d, m1, &ip, &due), 0);
	CU_ASSERT_EQUAL(ip, IP(10));
	CU_ASSERT_EQUAL(due, T0 + SEC(OFFER_S));
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 2);
	CU_ASSERT_EQUAL(ostats(&g).pending, 2u);

	/* one microsecond before the hold ends: still held */
	fake_now = T0 + SEC(OFFER_S) - 1;
	CU_ASSERT_EQUAL(agent_dynamic_expire(g.d, g.s, 1u << 20), 0u);
	CU_ASSERT_EQUAL(ostats(&g).pending, 2u);
	CU_ASSERT_EQUAL(discover(&g, m3), IP(12));
	/* the hold is over: the addresses are free again, the offers counted as expired */
	fake_now = T0 + SEC(OFFER_S);
	CU_ASSERT_EQUAL(agent_dynamic_expire(g.d, g.s, 1u << 20), 0u); /* no lease expired */
	CU_ASSERT_EQUAL(ostats(&g).pending, 1u);
	CU_ASSERT_EQUAL(ostats(&g).expired, 2u);
	CU_ASSERT_EQUAL(agent_dynamic_offered(g.d, m1, NULL, NULL), -ENOENT);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 1);
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 0u);
	/* lowest free: a new offer takes .10 */
	{
		uint8_t m4[6];
		mac_n(m4, 4);
		CU_ASSERT_EQUAL(discover(&g, m4), IP(10));
	}
	rig_close(&g);
}

static void
test_repeated_discover_same_offer(void)
{
	struct rig g;
	uint8_t m1[6], m2[6];
	uint64_t due = 0;

	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	mac_n(m1, 1);
	mac_n(m2, 2);
	CU_ASSERT_EQUAL(discover(&g, m1), IP(10));
	for (unsigned i = 1; i <= 5; i++) {
		fake_now = T0 + SEC(8 * i);
		CU_ASSERT_EQUAL(discover(&g, m1), IP(10));
		(void)agent_dynamic_expire(g.d, g.s, 1u << 20);
	}
	/* one offer, held from its last OFFER on */
	CU_ASSERT_EQUAL(ostats(&g).pending, 1u);
	CU_ASSERT_EQUAL(ostats(&g).expired, 0u);
	CU_ASSERT_EQUAL(agent_dynamic_offered(g.d, m1, NULL, &due), 0);
	CU_ASSERT_EQUAL(due, T0 + SEC(40 + OFFER_S));
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 1);
	CU_ASSERT_EQUAL(discover(&g, m2), IP(11));
	rig_close(&g);
}

static void
test_request_commits_the_offer(void)
{
	char dir[] = "/tmp/test-agent-dynamic-XXXXXX", path[64];
	struct rig g;
	uint8_t m1[6];
	uint64_t exp = 0;
	uint32_t ip = 0;
	char *text = NULL;
	size_t len;

	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/leases", dir);
	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), path, AGENT_DEFAULT, AGENT_DEFAULT);
	mac_n(m1, 1);
	CU_ASSERT_EQUAL(discover(&g, m1), IP(10));
	/* the lease file is untouched by the OFFER: nothing on disk names the MAC */
	CU_ASSERT_EQUAL(leasefile_flush(g.lf), 0);
	CU_ASSERT_EQUAL_FATAL(read_file(path, 1 << 20, &text, &len), 0);
	CU_ASSERT_PTR_NULL(strstr(text, "02:aa:00:00:00:01"));
	free(text);
	text = NULL;
	/* SELECTING, 5 s later: ACKed, a lease from now on, in the file before the reply */
	fake_now = T0 + SEC(5);
	CU_ASSERT_EQUAL(select_ip(&g, m1, IP(10)), DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(bound_ip(&g, m1), IP(10));
	CU_ASSERT_EQUAL(leasefile_lookup(g.lf, m1, &ip), 0);
	CU_ASSERT_EQUAL(ip, IP(10));
	CU_ASSERT_EQUAL(agent_dynamic_expiry(g.d, m1, &exp), 0);
	CU_ASSERT_EQUAL(exp, T0 + SEC(5 + LIFE_S));
	CU_ASSERT_EQUAL(agent_dynamic_offered(g.d, m1, NULL, NULL), -ENOENT);
	CU_ASSERT_EQUAL(ostats(&g).pending, 0u);
	CU_ASSERT_EQUAL(ostats(&g).committed, 1u);
	CU_ASSERT_EQUAL_FATAL(read_file(path, 1 << 20, &text, &len), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(text, "02:aa:00:00:00:01 10.0.0.10\n"));
	free(text);
	/* the hold's end is nothing to a lease */
	fake_now = T0 + SEC(100);
	CU_ASSERT_EQUAL(agent_dynamic_expire(g.d, g.s, 1u << 20), 0u);
	CU_ASSERT_EQUAL(bound_ip(&g, m1), IP(10));
	CU_ASSERT_EQUAL(ostats(&g).expired, 0u);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 1);
	rig_close(&g);
	unlink(path);
	rmdir(dir);
}

static void
test_request_after_the_hold(void)
{
	struct rig g;
	uint8_t m1[6], m2[6], m3[6], m4[6];
	uint32_t ip = 0;

	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	mac_n(m1, 1);
	mac_n(m2, 2);
	mac_n(m3, 3);
	mac_n(m4, 4);
	CU_ASSERT_EQUAL(discover(&g, m1), IP(10));
	CU_ASSERT_EQUAL(discover(&g, m2), IP(11));
	fake_now = T0 + SEC(OFFER_S + 5);
	(void)agent_dynamic_expire(g.d, g.s, 1u << 20);
	CU_ASSERT_EQUAL(ostats(&g).pending, 0u);
	/* a slow client: its offer's hold ended, the address is free: still its (RFC 2131) */
	CU_ASSERT_EQUAL(select_ip(&g, m1, IP(10)), DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(leasefile_lookup(g.lf, m1, &ip), 0);
	CU_ASSERT_EQUAL(ip, IP(10));
	/* .11 is offered to m3 now: m2, too late, is NAKed and gets nothing recorded */
	CU_ASSERT_EQUAL(discover(&g, m3), IP(11));
	CU_ASSERT_EQUAL(select_ip(&g, m2, IP(11)), DHCP_MSG_NAK);
	CU_ASSERT_EQUAL(select_ip(&g, m2, IP(10)), DHCP_MSG_NAK); /* m1's lease */
	CU_ASSERT_EQUAL(leasefile_lookup(g.lf, m2, &ip), -ENOENT);
	CU_ASSERT_EQUAL(bound_ip(&g, m2), 0u);
	/* INIT-REBOOT for a taken address, no record of the client: silence (RFC 2131 4.3.2) */
	CU_ASSERT_EQUAL(send_msg(&g, DHCP_MSG_REQUEST, m4, IP(10), 0, 0, NULL), 0);
	/* m2 starts again: DISCOVER, then its new offer is ACKed */
	CU_ASSERT_EQUAL(bind_mac(&g, m2), IP(12));
	/* m3 asks for another free address than its offer: granted, its offer let go */
	CU_ASSERT_EQUAL(select_ip(&g, m3, IP(20)), DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(agent_dynamic_offered(g.d, m3, NULL, NULL), -ENOENT);
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 3u);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 3); /* .11 free again */
	CU_ASSERT_EQUAL(discover(&g, m4), IP(11));
	/* a static binding's address is never committed to another MAC */
	{
		uint8_t m5[6];
		mac_n(m5, 5);
		CU_ASSERT_EQUAL(select_ip(&g, m5, IP(5)), DHCP_MSG_NAK);
		CU_ASSERT_EQUAL(leasefile_lookup(g.lf, m5, &ip), -ENOENT);
	}
	rig_close(&g);
}

static void
test_pending_offers_cap(void)
{
	struct rig g;
	uint8_t m[6];
	uint32_t ip = 0;
	const struct dhcp_stats *st;

	fake_now = T0;
	rig_max_offers = 5; /* --max-pending-offers 5 */
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	rig_max_offers = 0;
	st = dhcp_server_stats(g.s);
	for (unsigned i = 0; i < 5; i++) {
		mac_n(m, 100 + i);
		CU_ASSERT_EQUAL(discover(&g, m), IP(10 + i));
	}
	/* the cap: a new MAC's DISCOVER is dropped and counted, nothing held for it */
	mac_n(m, 200);
	CU_ASSERT_EQUAL(discover(&g, m), 0u);
	CU_ASSERT_EQUAL(ostats(&g).refused, 1u);
	CU_ASSERT_EQUAL(st->drops[DHCP_DROP_OFFER_LIMIT], 1u);
	CU_ASSERT_EQUAL(agent_dynamic_offered(g.d, m, NULL, NULL), -ENOENT);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 5);
	/* a MAC with a pending offer is offered it again; a REQUEST frees a place */
	mac_n(m, 100);
	CU_ASSERT_EQUAL(discover(&g, m), IP(10));
	CU_ASSERT_EQUAL(select_ip(&g, m, IP(10)), DHCP_MSG_ACK);
	CU_ASSERT_EQUAL(ostats(&g).pending, 4u);
	mac_n(m, 200);
	CU_ASSERT_EQUAL(discover(&g, m), IP(15));
	/* a MAC with a lease is served over the cap */
	mac_n(m, 201);
	CU_ASSERT_EQUAL(discover(&g, m), 0u);
	mac_n(m, 100);
	CU_ASSERT_EQUAL(discover(&g, m), IP(10));
	/* at the cap, holds that ended make room at once (no sweep in between) */
	fake_now = T0 + SEC(OFFER_S);
	mac_n(m, 201);
	CU_ASSERT_EQUAL(discover(&g, m), IP(11));
	CU_ASSERT_EQUAL(ostats(&g).refused, 2u);
	CU_ASSERT(ostats(&g).expired >= 1u);
	CU_ASSERT(ostats(&g).pending <= 5u);
	CU_ASSERT_EQUAL(ostats(&g).max_pending, 5u);
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 1u);
	CU_ASSERT_EQUAL(leasefile_lookup(g.lf, m, &ip), -ENOENT);
	rig_close(&g);
}

static void
test_discover_flood(void)
{
	struct rig g;
	uint8_t m[6], real[6] = {0x52, 0x54, 0x00, 0x77, 0x00, 0x01};
	const size_t cap = CAPACITY / 2;
	struct agent_offer_stats os;
	uint32_t rip, mip;

	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	CU_ASSERT_EQUAL(ostats(&g).max_pending, cap);
	/* 20 000 DISCOVERs from new MACs over 2 s, none REQUESTs */
	for (unsigned i = 0; i < 20000; i++) {
		uint8_t fm[6] = {0x02, 0xf1, (uint8_t)(i >> 16), (uint8_t)(i >> 8), (uint8_t)i, 7};
		fake_now = T0 + (uint64_t)i * 100;
		(void)discover(&g, fm);
	}
	os = ostats(&g);
	CU_ASSERT_EQUAL(os.pending, cap);
	/* at the cap, offers 250 ms old were taken over, the rest refused */
	CU_ASSERT(os.evicted > 0u);
	CU_ASSERT(os.refused > 0u);
	CU_ASSERT_EQUAL(os.refused + os.evicted, 20000u - cap);
	CU_ASSERT_EQUAL(os.expired, 0u);
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 0u);
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(g.s), 0u);
	/* half of the range is still free, and leases are renewed as ever */
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - cap);
	/* a real client 250 ms after the flood, long before its holds end, gets an address at its
	 * first DISCOVER */
	fake_now = T0 + SEC(2) + 250000;
	rip = bind_mac(&g, real);
	CU_ASSERT(rip >= IP(10) && rip < IP(10) + CAPACITY);
	CU_ASSERT_EQUAL(ostats(&g).evicted, os.evicted + 1);
	CU_ASSERT_EQUAL(ostats(&g).refused, os.refused);
	CU_ASSERT_EQUAL(leasefile_count(g.lf), 1u);
	/* the flood's holds end */
	fake_now = T0 + SEC(3 + OFFER_S);
	(void)agent_dynamic_expire(g.d, g.s, 1u << 20);
	CU_ASSERT_EQUAL(ostats(&g).pending, 0u);
	CU_ASSERT_EQUAL(ostats(&g).expired, (uint64_t)cap - 1);
	CU_ASSERT_EQUAL(agent_dynamic_available(g.d), CAPACITY - 1);
	mac_n(m, 1);
	mip = bind_mac(&g, m);
	CU_ASSERT(mip >= IP(10) && mip < IP(10) + CAPACITY && mip != rip);
	rig_close(&g);
}

/* An offer younger than 250 ms is never taken over: at the cap, a DISCOVER is refused until
 * one is that old, then takes its place; the client whose offer was taken still gets the
 * address by its REQUEST while it is free. */
static void
test_offer_protected(void)
{
	struct rig g;
	uint8_t m[6];

	fake_now = T0;
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	for (unsigned i = 0; i < CAPACITY / 2; i++) {
		mac_n(m, 1000 + i);
		CU_ASSERT(discover(&g, m) != 0u);
	}
	fake_now = T0 + 249999;
	mac_n(m, 5000);
	CU_ASSERT_EQUAL(discover(&g, m), 0u);
	CU_ASSERT_EQUAL(ostats(&g).refused, 1u);
	CU_ASSERT_EQUAL(ostats(&g).evicted, 0u);
	fake_now = T0 + 250000;
	CU_ASSERT(discover(&g, m) != 0u);
	CU_ASSERT_EQUAL(ostats(&g).evicted, 1u);
	CU_ASSERT_EQUAL(ostats(&g).pending, (size_t)CAPACITY / 2);
	rig_close(&g);
}

static void
test_offers_survive_a_reload(void)
{
	struct rig g;
	uint8_t m1[6], m2[6];
	uint32_t ip = 0;
	uint64_t due = 0;

	fake_now = T0;
	rig_offer_hold_s = 30; /* --offer-hold 30 */
	rig_open(&g, POOL_DOC("3600"), NULL, AGENT_DEFAULT, AGENT_DEFAULT);
	rig_offer_hold_s = 0;
	mac_n(m1, 1);
	mac_n(m2, 2);
	CU_ASSERT_EQUAL(discover(&g, m1), IP(10));
	fake_now = T0 + SEC(1);
	{
		struct agent_config *c2 = test_agent_config_ok(POOL_DOC("600"));
		struct agent_dynamic *d2 = NULL;
		char err[AGENT_ERR_MAX];
		CU_ASSERT_EQUAL_FATAL(agent_dynamic_new_opts(c2, g.lf, &g.opts, g.d, &d2), 0);
		agent_dynamic_free(g.d);
		agent_config_free(g.cfg);
		g.d = d2;
		g.cfg = c2;
		CU_ASSERT(agent_apply_config(g.s, g.cfg, g.d, err, sizeof(err)) >= 0);
	}
	CU_ASSERT_EQUAL(agent_dynamic_offered(g.d, m1, &ip, &due), 0);
	CU_ASSERT_EQUAL(ip, IP(10));
	CU_ASSERT_EQUAL(due, T0 + SEC(30));
	CU_ASSERT_EQUAL(discover(&g, m2), IP(11));
	CU_ASSERT_EQUAL(select_ip(&g, m1, IP(10)), DHCP_MSG_ACK);
	rig_close(&g);
}

static const struct test_case offer_tests[] = {
    {"an OFFER holds its address for --offer-hold, then frees it", test_offer_is_held_briefly},
    {"a repeated DISCOVER is offered the same address", test_repeated_discover_same_offer},
    {"only a REQUEST commits a lease (and the lease file)", test_request_commits_the_offer},
    {"a REQUEST after the hold: granted if free, else NAK", test_request_after_the_hold},
    {"the cap of pending offers: refused, counted, room made", test_pending_offers_cap},
    {"an offer younger than 250 ms is not taken over", test_offer_protected},
    {"a DISCOVER flood from made-up MACs holds half the range", test_discover_flood},
    {"pending offers carry over a reload", test_offers_survive_a_reload},
    {NULL, NULL},
};

static const struct test_case client_id_tests[] = {
    {"a client identifier takes its lease to a new MAC",
	test_client_id_takes_its_lease_to_a_new_mac},
    {"without one (or with 0x01 + MAC) leases are keyed by MAC", test_no_client_id_is_keyed_by_mac},
    {"one MAC, two identifiers: one binding, keyed by the last ACKed", test_one_mac_two_client_ids},
    {"a client-id lease expires after its last ACK", test_client_id_lease_expires},
    {"DECLINE hold-down and limit for a client-id lease", test_client_id_decline_hold_down},
    {"client-id leases and moves survive a restart (journal only)",
	test_client_id_leases_survive_a_restart},
    {NULL, NULL},
};

static const struct test_case expiry_tests[] = {
    {"a lease expires after lease time + grace", test_lease_expires_after_lease_and_grace},
    {"a returning MAC gets its old address while free",
	test_returning_mac_gets_its_address_while_free},
    {"an ACK pushes the expiry out", test_ack_renews_the_lease},
    {"--lease-grace 0; bounded work per sweep", test_grace_flag_and_budget},
    {"a restart gives fresh expiries; a reload keeps them", test_restart_gives_fresh_expiries},
    {NULL, NULL},
};

static const struct test_case decline_tests[] = {
    {"100 DECLINEs from one MAC hold the limit's worth", test_one_mac_declining_100_times},
    {"made-up MACs declining hold at most half the range", test_made_up_macs_declining},
    {"declined addresses and static marks come back after the hold-down",
	test_declined_addresses_come_back},
    {"the default hold-down is 86400 s", test_default_hold_down},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "dynamic-expiry", .tests = expiry_tests},
    {.name = "dynamic-decline", .tests = decline_tests},
    {.name = "dynamic-client-id", .tests = client_id_tests},
    {.name = "dynamic-offers", .tests = offer_tests},
    {.name = NULL},
};
