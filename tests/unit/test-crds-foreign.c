/* SPDX-License-Identifier: Apache-2.0 */
/* crds/ippool.c: spec.foreignServers decode, defaults, validation and encode. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "crds/ippool.h"
#include "tests/runner.h"

#define SPEC_HEAD                                                                                  \
	"{\"networkName\": \"ns/net\", \"ipv4Config\": {\"serverIP\": \"10.0.0.2\","               \
	" \"cidr\": \"10.0.0.0/24\", \"pool\": {\"start\": \"10.0.0.10\", \"end\": "               \
	"\"10.0.0.20\"}}"

static int
decode(const char *text, struct ippool_spec *s, struct crd_error *err)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	int r;

	if (!j) {
		fprintf(stderr, "bad test JSON: %s\n", e.text);
		abort();
	}
	r = ippool_spec_decode(j, s, err);
	json_decref(j);
	return r;
}

static void
test_absent_defaults(void)
{
	struct ippool_spec s;
	struct crd_error err = {0};
	json_t *out;

	CU_ASSERT_EQUAL_FATAL(decode(SPEC_HEAD "}", &s, &err), 0);
	CU_ASSERT_FALSE(s.has_foreign_servers);
	CU_ASSERT_EQUAL(s.foreign_servers.policy, IPPOOL_FOREIGN_WARN);
	CU_ASSERT_EQUAL(s.foreign_servers.probe_interval, IPPOOL_PROBE_INTERVAL_DEFAULT);
	out = ippool_spec_encode(&s);
	CU_ASSERT_PTR_NULL(json_object_get(out, "foreignServers")); /* not written back */
	json_decref(out);
	ippool_spec_clear(&s);

	CU_ASSERT_EQUAL_FATAL(decode(SPEC_HEAD ", \"foreignServers\": {}}", &s, &err), 0);
	CU_ASSERT_TRUE(s.has_foreign_servers);
	CU_ASSERT_EQUAL(s.foreign_servers.policy, IPPOOL_FOREIGN_WARN);
	CU_ASSERT_EQUAL(s.foreign_servers.probe_interval, 300);
	ippool_spec_clear(&s);
}

static void
test_stand_down_round_trip(void)
{
	struct ippool_spec s, t;
	struct crd_error err = {0};
	json_t *out, *fs;

	CU_ASSERT_EQUAL_FATAL(decode(SPEC_HEAD ", \"foreignServers\": {\"policy\": \"StandDown\","
					       " \"probeInterval\": 30}}",
				  &s, &err),
	    0);
	CU_ASSERT_TRUE(s.has_foreign_servers);
	CU_ASSERT_EQUAL(s.foreign_servers.policy, IPPOOL_FOREIGN_STAND_DOWN);
	CU_ASSERT_EQUAL(s.foreign_servers.probe_interval, 30);
	out = ippool_spec_encode(&s);
	fs = json_object_get(out, "foreignServers");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(fs, "policy")), "StandDown");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(fs, "probeInterval")), 30);
	CU_ASSERT_EQUAL_FATAL(ippool_spec_decode(out, &t, &err), 0);
	CU_ASSERT_EQUAL(t.foreign_servers.policy, IPPOOL_FOREIGN_STAND_DOWN);
	CU_ASSERT_EQUAL(t.foreign_servers.probe_interval, 30);
	ippool_spec_clear(&t);
	json_decref(out);
	ippool_spec_clear(&s);
}

static void
expect_error(const char *fs, const char *path, const char *msg_part)
{
	struct ippool_spec s;
	struct crd_error err = {0};
	char text[1024];

	snprintf(text, sizeof(text), SPEC_HEAD ", \"foreignServers\": %s}", fs);
	CU_ASSERT_EQUAL(decode(text, &s, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.path, path);
	if (!strstr(err.message, msg_part))
		fprintf(stderr, "error for %s: %s: %s\n", fs, err.path, err.message);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.message, msg_part));
}

static void
test_errors(void)
{
	expect_error("{\"policy\": \"Ignore\"}", "spec.foreignServers.policy", "allowed");
	expect_error("{\"policy\": 1}", "spec.foreignServers.policy", "string");
	expect_error("{\"probeInterval\": 29}", "spec.foreignServers.probeInterval", "30");
	expect_error("{\"probeInterval\": 86401}", "spec.foreignServers.probeInterval", "86400");
	expect_error(
	    "{\"probeInterval\": \"300\"}", "spec.foreignServers.probeInterval", "integer");
	expect_error("{\"interval\": 300}", "spec.foreignServers.interval", "unknown");
	expect_error("[]", "spec.foreignServers", "object");
}

static const struct test_case foreign_tests[] = {
    {"absent or empty: Warn every 300 s, absent not written", test_absent_defaults},
    {"StandDown and probeInterval decode and encode", test_stand_down_round_trip},
    {"bad values name their path", test_errors},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "crds-foreign", .tests = foreign_tests},
    {.name = NULL},
};
