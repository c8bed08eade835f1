/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_DECLINE_MARKS_H
#define VMDHCP_AGENT_DECLINE_MARKS_H

/* decline-marks.c: when the engine may answer a MAC again after its DHCPDECLINE. */

#include <stddef.h>
#include <stdint.h>

struct dhcp_server;

/*
 * The engine's DECLINE marks of bindings that stay where they are (static bindings; dynamic
 * ones whose DECLINE was not honoured): the engine answers such a MAC no more until its mark
 * is cleared, which agent_marks_expire does once the hold-down is over; the engine itself
 * clears it only when the binding's address changes, which a static binding's never does.
 * A MAC is recorded once, at its first DECLINE (its hold-down is not extended by more).
 */
struct agent_marks;
int agent_marks_new(uint32_t hold_s, struct agent_marks **ret);
struct agent_marks *agent_marks_free(struct agent_marks *m);
/* Records mac's mark on ip at now (a MAC already recorded keeps its time). -ENOMEM. */
int agent_marks_add(struct agent_marks *m, const uint8_t mac[6], uint32_t ip, uint64_t now);
/* Clears in s the marks whose hold-down is over at now (budget entries at most); returns how many.
 */
size_t agent_marks_expire(
    struct agent_marks *m, struct dhcp_server *s, uint64_t now, size_t budget);
size_t agent_marks_count(const struct agent_marks *m);

#endif
