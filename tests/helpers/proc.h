/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_TESTS_HELPERS_PROC_H
#define VMDHCP_TESTS_HELPERS_PROC_H

#include <sys/types.h>

/* A "KEY: N kB" line of /proc/PID/status (pid 0: this process), e.g. "VmHWM:" (the peak
 * resident set) or "VmRSS:": N in KiB, or -1 when the process or the line is gone. */
long test_proc_status_kib(pid_t pid, const char *field);

#endif
