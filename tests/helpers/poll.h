/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_TESTS_HELPERS_POLL_H
#define VMDHCP_TESTS_HELPERS_POLL_H

#include <stdbool.h>

struct event_base;

/*
 * Run base until pred(arg) holds: checked at once, then every 20 ms while the loop runs,
 * for at most timeout_ms (a bound against a hang, not a time window the test relies on).
 * Returns whether it held.
 */
bool test_poll_until(struct event_base *base, bool (*pred)(void *arg), void *arg, long timeout_ms);

#endif
