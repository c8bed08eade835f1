/* SPDX-License-Identifier: Apache-2.0 */
#include "tests/runner.h"

#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/Basic.h>

#define MAX_SKIPS 256

static char *skip_reasons[MAX_SKIPS];
static unsigned n_skipped;
static CU_pTest last_skipped; /* a test counts once however often it calls test_skip */

void
test_skip(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	/*
	 * Ask CUnit which test is running: CU_basic_run_tests() installs its own test-start
	 * handler, so the runner cannot track the current test through one.
	 */
	CU_pTest test = CU_get_current_test();
	CU_pSuite suite = CU_get_current_suite();
	char name[256];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (test != NULL && test == last_skipped)
		return;
	last_skipped = test;
	snprintf(name, sizeof(name), "%s/%s", suite ? suite->pName : "?", test ? test->pName : "?");
	if (n_skipped < MAX_SKIPS) {
		size_t n = strlen(buf) + strlen(name) + 4;
		char *s = malloc(n);
		if (s != NULL) {
			snprintf(s, n, "%s: %s", name, buf);
			skip_reasons[n_skipped] = s;
		}
	}
	n_skipped++;
}

int
test_require_root(void)
{
	if (geteuid() == 0)
		return 0;
	test_skip("needs root (network namespaces, raw sockets)");
	return 1;
}

const char *
test_data_dir(void)
{
	const char *d = getenv("VMDHCP_TEST_DATA");

	return d != NULL ? d : "tests/data";
}

int
main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	const char *prog = basename(argv[0]);
	unsigned failed, asserts_failed, ran, passed;
	int status;

	if (CU_initialize_registry() != CUE_SUCCESS) {
		fprintf(stderr, "%s: cannot initialise CUnit\n", prog);
		return 1;
	}
	for (const struct test_suite *s = test_suites; s->name != NULL; s++) {
		CU_pSuite cs = CU_add_suite(s->name, s->init, s->cleanup);
		if (cs == NULL) {
			fprintf(stderr, "%s: cannot add suite %s\n", prog, s->name);
			CU_cleanup_registry();
			return 1;
		}
		for (const struct test_case *t = s->tests; t->name != NULL; t++) {
			char full[256];
			snprintf(full, sizeof(full), "%s/%s", s->name, t->name);
			if (filter != NULL && strstr(full, filter) == NULL)
				continue;
			if (CU_add_test(cs, t->name, t->fn) == NULL) {
				fprintf(stderr, "%s: cannot add test %s\n", prog, full);
				CU_cleanup_registry();
				return 1;
			}
		}
	}
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	failed = CU_get_number_of_tests_failed();
	asserts_failed = CU_get_number_of_failures();
	ran = CU_get_number_of_tests_run();
	/* One line per failed assertion, so that a log cut to its matching lines still says
	 * which test failed where (the verbose report is interleaved with what the code logs). */
	for (CU_pFailureRecord f = CU_get_failure_list(); f != NULL; f = f->pNext)
		printf("FAIL %s/%s: %s:%u: %s\n", f->pSuite != NULL ? f->pSuite->pName : "?",
		    f->pTest != NULL ? f->pTest->pName : "?", f->strFileName ? f->strFileName : "?",
		    f->uiLineNumber, f->strCondition ? f->strCondition : "?");
	/* A suite whose init failed counts its tests as not run: treat that as failure. */
	if (CU_get_number_of_suites_failed() > 0)
		failed += CU_get_number_of_suites_failed();
	CU_cleanup_registry();

	for (unsigned i = 0; i < n_skipped && i < MAX_SKIPS; i++) {
		if (skip_reasons[i] != NULL)
			printf("SKIP %s\n", skip_reasons[i]);
		free(skip_reasons[i]);
	}
	passed = ran >= failed + n_skipped ? ran - failed - n_skipped : 0;
	if (failed > 0 || asserts_failed > 0)
		status = 1;
	else if (ran > 0 && n_skipped >= ran)
		status = 77;
	else if (ran == 0 && filter == NULL)
		status = 1; /* a binary with no tests is a mistake */
	else
		status = 0;
	printf("%s: %u passed, %u failed, %u skipped\n", prog, passed, failed, n_skipped);
	return status;
}
