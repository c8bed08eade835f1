/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_TESTS_HELPERS_CAPTURE_H
#define VMDHCP_TESTS_HELPERS_CAPTURE_H

#include <stddef.h>

/*
 * stderr (the programs' log) to a temporary file, from test_capture_stderr() to
 * test_captured_stderr(), which puts stderr back and returns what was written (NUL-terminated,
 * caller frees; its length in *len when len is not NULL). One capture at a time.
 * test_capture_stderr() returns 0 or -errno; test_captured_stderr() NULL on failure.
 */
int test_capture_stderr(void);
char *test_captured_stderr(size_t *len);
/* How many times needle occurs in the file at fd, read from its start (its first 64 KiB): a
 * log written to a temporary file. */
unsigned test_count_in_fd(int fd, const char *needle);

#endif
