/* SPDX-License-Identifier: Apache-2.0 */
/* controller/admission-cidr.c: the service CIDR recorded in a Node's node-args annotation. */
#include <errno.h>
#include <string.h>

#include "controller/admission-cidr.h"
#include "tests/runner.h"

static void
test_node_args_cidr(void)
{
	char out[64];

	/* as RKE2 records it (upstream's pkg/util/network.go comment) */
	CU_ASSERT_EQUAL(
	    ctrl_admission_node_args_cidr("[\"server\",\"--cluster-cidr\",\"10.52.0.0/16\","
					  "\"--service-cidr\",\"10.53.0.0/16\"]",
		out, sizeof(out)),
	    0);
	CU_ASSERT_STRING_EQUAL(out, "10.53.0.0/16");
	/* dual stack: the IPv4 one, whichever comes first */
	CU_ASSERT_EQUAL(
	    ctrl_admission_node_args_cidr(
		"[\"--service-cidr\",\"fd00:53::/112,10.43.0.0/16\"]", out, sizeof(out)),
	    0);
	CU_ASSERT_STRING_EQUAL(out, "10.43.0.0/16");
	/* absent, last without a value, not an array, not JSON, a bad value */
	CU_ASSERT_EQUAL(ctrl_admission_node_args_cidr("[\"server\"]", out, sizeof(out)), -ENOENT);
	CU_ASSERT_EQUAL(
	    ctrl_admission_node_args_cidr("[\"x\",\"--service-cidr\"]", out, sizeof(out)), -ENOENT);
	CU_ASSERT_EQUAL(ctrl_admission_node_args_cidr("{\"a\":1}", out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(ctrl_admission_node_args_cidr("[\"--service", out, sizeof(out)), -EINVAL);
	CU_ASSERT_EQUAL(ctrl_admission_node_args_cidr(
			    "[\"--service-cidr\",\"10.53.0.0/33\"]", out, sizeof(out)),
	    -EINVAL);
	CU_ASSERT_EQUAL(
	    ctrl_admission_node_args_cidr("[\"--service-cidr\",7]", out, sizeof(out)), -EINVAL);
	/* too small a buffer: refused, not truncated */
	CU_ASSERT_EQUAL(
	    ctrl_admission_node_args_cidr("[\"--service-cidr\",\"10.53.0.0/16\"]", out, 8),
	    -EINVAL);
}

static const struct test_case cidr_tests[] = {
    {"node-args service cidr", test_node_args_cidr},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "service cidr", .tests = cidr_tests},
    {.name = NULL},
};
