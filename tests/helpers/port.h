/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_TESTS_HELPERS_PORT_H
#define VMDHCP_TESTS_HELPERS_PORT_H

/* A TCP port on 127.0.0.1 that was free a moment ago (the kernel's pick), for a program the
 * test starts with --listen; -1 on error. */
int test_free_port(void);

#endif
