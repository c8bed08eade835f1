/* SPDX-License-Identifier: Apache-2.0 */
/* agent/guard.c's table: servers seen, refreshed, forgotten after two probe intervals. */
#include <errno.h>
#include <string.h>

#include "agent/guard.h"
#include "crds/ippool.h"
#include "dhcp/dhcp.h"
#include "lib/clock.h"
#include "tests/runner.h"

#define S(x) ((uint64_t)(x)*USEC_PER_SEC)

static struct dhcp_foreign_reply
reply(uint8_t last, uint32_t ip)
{
	struct dhcp_foreign_reply r = {.mac = {0x52, 0x54, 0x00, 0x00, 0x00, last},
	    .server_ip = ip,
	    .msg_type = DHCP_MSG_OFFER};

	return r;
}

static void
test_seen_and_refreshed(void)
{
	struct agent_guard g;
	struct dhcp_foreign_reply a = reply(1, 0x0a0000fe), b = reply(2, 0x0a0000fd);

	agent_guard_init(&g);
	CU_ASSERT_EQUAL(g.fd, -1);
	CU_ASSERT_EQUAL(g.interval_s, IPPOOL_PROBE_INTERVAL_DEFAULT);
	CU_ASSERT_EQUAL(agent_guard_seen(&g, &a, S(10)), 1);
	CU_ASSERT_EQUAL(agent_guard_seen(&g, &a, S(20)), 0);
	CU_ASSERT_EQUAL(g.n, 1);
	CU_ASSERT_EQUAL(g.servers[0].first_usec, S(10));
	CU_ASSERT_EQUAL(g.servers[0].last_usec, S(20));
	CU_ASSERT_EQUAL(g.servers[0].replies, 2);
	/* another MAC, or the same MAC with another server address: another server */
	CU_ASSERT_EQUAL(agent_guard_seen(&g, &b, S(21)), 1);
	b.mac[5] = 1;
	CU_ASSERT_EQUAL(agent_guard_seen(&g, &b, S(22)), 1);
	CU_ASSERT_EQUAL(g.n, 3);
}

static void
test_table_full(void)
{
	struct agent_guard g;

	agent_guard_init(&g);
	for (unsigned i = 0; i < AGENT_GUARD_SERVERS_MAX; i++) {
		struct dhcp_foreign_reply r = reply((uint8_t)i, 0x0a000000 + i);
		CU_ASSERT_EQUAL(agent_guard_seen(&g, &r, S(1)), 1);
	}
	struct dhcp_foreign_reply more = reply(0xee, 0x0a0000ee);
	CU_ASSERT_EQUAL(agent_guard_seen(&g, &more, S(2)), -ENOSPC);
	CU_ASSERT_EQUAL(g.table_full, 1);
	CU_ASSERT_EQUAL(g.n, AGENT_GUARD_SERVERS_MAX);
	/* a known one is still refreshed */
	struct dhcp_foreign_reply known = reply(3, 0x0a000003);
	CU_ASSERT_EQUAL(agent_guard_seen(&g, &known, S(3)), 0);
}

static void
test_expiry(void)
{
	struct agent_guard g;
	struct agent_guard_server gone[2];
	struct dhcp_foreign_reply a = reply(1, 0x0a0000fe), b = reply(2, 0x0a0000fd);

	agent_guard_init(&g);
	g.interval_s = 30;
	/* a answers the probe of tick 0 (at 0.2 s), b is seen between ticks (at 40 s) */
	agent_guard_seen(&g, &a, S(0) + 200000);
	agent_guard_seen(&g, &b, S(40));
	/* tick 30: a's probe unanswered once: kept */
	CU_ASSERT_EQUAL(agent_guard_expire(&g, S(30), gone, 2), 0);
	CU_ASSERT_EQUAL(g.n, 2);
	/* tick 60: two intervals since a's reply (less the slack): a goes, b stays */
	CU_ASSERT_EQUAL(agent_guard_expire(&g, S(60), gone, 2), 1);
	CU_ASSERT_EQUAL(gone[0].mac[5], 1);
	CU_ASSERT_EQUAL(g.n, 1);
	CU_ASSERT_EQUAL(g.servers[0].mac[5], 2);
	/* tick 90: 50 s since b: kept; tick 120: 80 s: gone */
	CU_ASSERT_EQUAL(agent_guard_expire(&g, S(90), NULL, 0), 0);
	CU_ASSERT_EQUAL(agent_guard_expire(&g, S(120), gone, 2), 1);
	CU_ASSERT_EQUAL(g.n, 0);
	/* a server that keeps answering is never forgotten */
	for (unsigned t = 150; t < 600; t += 30) {
		agent_guard_seen(&g, &a, S(t) + 300000);
		CU_ASSERT_EQUAL(agent_guard_expire(&g, S(t + 30), NULL, 0), 0);
	}
	CU_ASSERT_EQUAL(g.n, 1);
}

static void
test_stand_down_and_message(void)
{
	struct agent_guard g;
	struct dhcp_foreign_reply a = reply(0xab, 0x0a0000fe), b = reply(0xcd, 0x0a0000fd);
	char msg[256];

	agent_guard_init(&g);
	CU_ASSERT_FALSE(agent_guard_stand_down_wanted(&g));
	agent_guard_seen(&g, &a, S(1));
	CU_ASSERT_FALSE(agent_guard_stand_down_wanted(&g)); /* Warn */
	g.policy = IPPOOL_FOREIGN_STAND_DOWN;
	CU_ASSERT_TRUE(agent_guard_stand_down_wanted(&g));
	agent_guard_seen(&g, &b, S(2));
	agent_guard_message(&g, msg, sizeof(msg));
	CU_ASSERT_STRING_EQUAL(msg,
	    "2 foreign DHCP servers on the network: MAC 52:54:00:00:00:ab IP "
	    "10.0.0.254, MAC 52:54:00:00:00:cd IP 10.0.0.253");
	agent_guard_message(&g, msg, 20); /* truncated, terminated */
	CU_ASSERT_EQUAL(strlen(msg), 19);
	g.interval_s = 30;
	agent_guard_expire(&g, S(100), NULL, 0);
	CU_ASSERT_FALSE(agent_guard_stand_down_wanted(&g));
}

static const struct test_case guard_tests[] = {
    {"servers seen and refreshed", test_seen_and_refreshed},
    {"a full table counts, keeps refreshing", test_table_full},
    {"forgotten two probe intervals after the last sighting", test_expiry},
    {"StandDown only with a server seen; the condition's message", test_stand_down_and_message},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-guard", .tests = guard_tests},
    {.name = NULL},
};
