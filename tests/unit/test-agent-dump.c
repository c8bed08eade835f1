/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent/dump.c: --enable-cache-dump-api's GET /leases body, byte for byte what the Go
 * project's handler writes for the same leases (upstream pkg/server/handler.go json.Marshal of
 * pkg/dhcp/dhcp.go ListAll: MAC -> DHCPLease.String()). The expected strings were produced by
 * Go's encoding/json from upstream's DHCPLease type with the same values.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/dump.h"
#include "dhcp/dhcp.h"
#include "tests/runner.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static const uint8_t mac1[6] = {0x52, 0x54, 0x00, 0xaa, 0xbb, 0x01};
static const uint8_t mac2[6] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x0a};

/* every option upstream's lease carries, two bindings: keys in byte order */
static void
test_leases_full(void)
{
	struct dhcp_options o = {
	    .server_ip = IP(192, 168, 0, 2),
	    .prefix = 24,
	    .router = IP(192, 168, 0, 1),
	    .dns = {IP(8, 8, 8, 8), IP(1, 1, 1, 1)},
	    .n_dns = 2,
	    .domain_name = "example.com",
	    .search = {"example.com"},
	    .n_search = 1,
	    .lease_time = 3600,
	};
	struct dhcp_server *s = NULL;
	char *json = NULL;

	CU_ASSERT_EQUAL_FATAL(dhcp_server_new(&s), 0);
	CU_ASSERT_EQUAL(dhcp_server_set_options(s, &o), 0);
	CU_ASSERT_EQUAL(dhcp_server_set_binding(s, mac1, IP(192, 168, 0, 10), "vm-1"), 0);
	CU_ASSERT_EQUAL(dhcp_server_set_binding(s, mac2, IP(192, 168, 0, 9), NULL), 0);
	CU_ASSERT_EQUAL_FATAL(agent_dump_leases_json(s, &o, &json), 0);
	CU_ASSERT_STRING_EQUAL(json,
	    "{\"02:00:00:00:00:0a\":\"{\\\"ServerIP\\\":\\\"192.168.0.2\\\",\\\"ClientIP\\\":"
	    "\\\"192.168.0.9\\\",\\\"SubnetMask\\\":\\\"////"
	    "AA==\\\",\\\"Router\\\":\\\"192.168.0.1\\\","
	    "\\\"DNS\\\":[\\\"8.8.8.8\\\",\\\"1.1.1.1\\\"],\\\"DomainName\\\":\\\"example.com\\\","
	    "\\\"DomainSearch\\\":[\\\"example.com\\\"],\\\"NTP\\\":null,\\\"LeaseTime\\\":3600}\","
	    "\"52:54:00:aa:bb:01\":\"{\\\"ServerIP\\\":\\\"192.168.0.2\\\",\\\"ClientIP\\\":"
	    "\\\"192.168.0.10\\\",\\\"SubnetMask\\\":\\\"////"
	    "AA==\\\",\\\"Router\\\":\\\"192.168.0.1\\\","
	    "\\\"DNS\\\":[\\\"8.8.8.8\\\",\\\"1.1.1.1\\\"],\\\"DomainName\\\":\\\"example.com\\\","
	    "\\\"DomainSearch\\\":[\\\"example.com\\\"],\\\"NTP\\\":null,\\\"LeaseTime\\\":3600}"
	    "\"}");
	free(json);
	dhcp_server_free(s);
}

/* what is unset: "" for no router, null for empty lists; a /17 mask; NTP set */
static void
test_leases_sparse(void)
{
	struct dhcp_options o = {
	    .server_ip = IP(10, 1, 0, 2),
	    .prefix = 17,
	    .ntp = {IP(10, 1, 0, 5)},
	    .n_ntp = 1,
	};
	struct dhcp_server *s = NULL;
	char *json = NULL;

	CU_ASSERT_EQUAL_FATAL(dhcp_server_new(&s), 0);
	/* nothing bound yet, or no pool yet: an empty map */
	CU_ASSERT_EQUAL_FATAL(agent_dump_leases_json(s, &o, &json), 0);
	CU_ASSERT_STRING_EQUAL(json, "{}");
	free(json);
	CU_ASSERT_EQUAL(dhcp_server_set_binding(s, mac2, IP(10, 1, 0, 20), NULL), 0);
	CU_ASSERT_EQUAL_FATAL(agent_dump_leases_json(s, NULL, &json), 0);
	CU_ASSERT_STRING_EQUAL(json, "{}");
	free(json);
	CU_ASSERT_EQUAL_FATAL(agent_dump_leases_json(s, &o, &json), 0);
	CU_ASSERT_STRING_EQUAL(json,
	    "{\"02:00:00:00:00:0a\":\"{\\\"ServerIP\\\":\\\"10.1.0.2\\\",\\\"ClientIP\\\":"
	    "\\\"10.1.0.20\\\",\\\"SubnetMask\\\":\\\"//+AAA==\\\",\\\"Router\\\":\\\"\\\","
	    "\\\"DNS\\\":null,\\\"DomainName\\\":\\\"\\\",\\\"DomainSearch\\\":null,"
	    "\\\"NTP\\\":[\\\"10.1.0.5\\\"],\\\"LeaseTime\\\":0}\"}");
	free(json);
	dhcp_server_free(s);
}

static const struct test_case dump_tests[] = {
    {"leases with every option", test_leases_full},
    {"leases with options unset", test_leases_sparse},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-dump", .tests = dump_tests},
    {.name = NULL},
};
