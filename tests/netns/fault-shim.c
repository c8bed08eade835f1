/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fault-shim.so - an LD_PRELOAD shim for the start-up tests (tests/netns/test-exit-codes.sh;
 * built as build/tests/fault-shim.so, never part of a program): socket(AF_NETLINK, ...) (or
 * of the address family FAULT_DOMAIN, a number: 2 AF_INET) fails with FAULT_NETLINK_ERRNO (a
 * number: 12 ENOMEM, 1 EPERM...) for its first FAULT_NETLINK_COUNT calls in the process, then
 * works. Each injected failure is one line on stderr, so the test
 * can count the attempts.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

int
socket(int domain, int type, int protocol)
{
	static int (*real)(int, int, int);
	static long failed;
	const char *count = getenv("FAULT_NETLINK_COUNT");
	const char *err = getenv("FAULT_NETLINK_ERRNO");
	const char *dom = getenv("FAULT_DOMAIN");
	int faulty = dom != NULL ? atoi(dom) : AF_NETLINK;

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "socket");
	if (domain == faulty && count != NULL && err != NULL && failed < atol(count)) {
		failed++;
		fprintf(stderr, "fault-shim: socket(%d) failed with errno %s (%ld)\n", domain, err,
		    failed);
		errno = atoi(err);
		return -1;
	}
	return real(domain, type, protocol);
}
