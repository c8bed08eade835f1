/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_TESTS_RUNNER_H
#define VMDHCP_TESTS_RUNNER_H

/*
 * Shared CUnit main (tests/runner.c). A test binary defines its suites as a table:
 *
 *   static const struct test_case foo_tests[] = {
 *           { "parses x", test_parses_x },
 *           { NULL, NULL },
 *   };
 *   const struct test_suite test_suites[] = {
 *           { .name = "foo", .tests = foo_tests },
 *           { .name = NULL },
 *   };
 *
 * Exit status: 1 when any assertion failed, 77 when every test skipped (reasons printed),
 * else 0. The last line printed is "NAME: N passed, N failed, N skipped".
 * Argument: an optional substring filter on "suite/test" names.
 */

#include <CUnit/CUnit.h>

struct test_case {
	const char *name;
	void (*fn)(void);
};

struct test_suite {
	const char *name;
	int (*init)(void);
	int (*cleanup)(void);
	const struct test_case *tests;
};

extern const struct test_suite test_suites[];

/* Mark the running test skipped (call then return from the test). */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Skips the test unless running as root (uid 0). Use: if (test_require_root()) return; */
int test_require_root(void);

/* Path of the source tree's tests/data directory (from VMDHCP_TEST_DATA or a default). */
const char *test_data_dir(void);

#endif
