/* SPDX-License-Identifier: Apache-2.0 */
/* agent/ra-timer.c: the unsolicited RA schedule of RFC 4861 §6.2.4, with the random draw given. */
#include <stdint.h>

#include "agent/ra-timer.h"
#include "tests/runner.h"

#define S 1000000ull

static void
test_interval_jittered(void)
{
	/* interval 200 s: uniformly in [66 s, 200 s) (MinRtrAdvInterval 0.33 x Max) */
	CU_ASSERT_EQUAL(agent_ra_next_usec(200, 5, 0), 66 * S);
	CU_ASSERT_EQUAL(agent_ra_next_usec(200, 5, UINT32_MAX / 2), 66 * S + 67 * S - 1);
	CU_ASSERT(agent_ra_next_usec(200, 5, UINT32_MAX) < 200 * S);
	CU_ASSERT(agent_ra_next_usec(200, 5, UINT32_MAX) > 199 * S);
	/* below 9 s: MinRtrAdvInterval = Max, no jitter */
	CU_ASSERT_EQUAL(agent_ra_next_usec(4, 5, 0), 4 * S);
	CU_ASSERT_EQUAL(agent_ra_next_usec(4, 5, UINT32_MAX), 4 * S);
	/* at the schema's maximum, 1800 s */
	CU_ASSERT(agent_ra_next_usec(1800, 3, UINT32_MAX) < 1800 * S);
	CU_ASSERT_EQUAL(agent_ra_next_usec(1800, 3, 0), 594 * S);
}

static void
test_initial_fast(void)
{
	/* the first three go at most 16 s apart (MAX_INITIAL_RTR_ADVERT_INTERVAL) */
	for (unsigned sent = 1; sent < AGENT_RA_INITIAL_COUNT; sent++) {
		CU_ASSERT_EQUAL(agent_ra_next_usec(200, sent, UINT32_MAX), 16 * S);
		CU_ASSERT_EQUAL(agent_ra_next_usec(200, sent, 0), 16 * S);
	}
	/* a short interval is not lengthened */
	CU_ASSERT_EQUAL(agent_ra_next_usec(10, 1, 0), 3300000ull);
	CU_ASSERT_EQUAL(agent_ra_next_usec(4, 1, 0), 4 * S);
	/* then the interval itself */
	CU_ASSERT(agent_ra_next_usec(200, AGENT_RA_INITIAL_COUNT, UINT32_MAX) > 16 * S);
}

static const struct test_case ra_tests[] = {
    {"interval jittered between Min and MaxRtrAdvInterval", test_interval_jittered},
    {"initial RAs at most 16 s apart", test_initial_fast},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-ra-timer", .tests = ra_tests},
    {.name = NULL},
};
