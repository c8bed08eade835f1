/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_CAPS_H
#define VMDHCP_AGENT_CAPS_H

/* caps.c: the process's capabilities, raised at start and dropped once serving. */

#include <stddef.h>
#include <stdint.h>

#define AGENT_CAP(cap) (UINT64_C(1) << (cap))

/* The process's capability sets, one bit per capability (AGENT_CAP(CAP_NET_RAW), ...). */
struct agent_caps {
	uint64_t effective, permitted, inheritable, bounding;
};

/* Reads the calling thread's sets into *ret. Negative errno. */
int agent_caps_get(struct agent_caps *ret);
/*
 * Makes every permitted capability effective (file capabilities set without the effective
 * bit, "+p"). *ret_raised: the ones that were not. Negative errno.
 */
int agent_caps_raise(uint64_t *ret_raised);
/*
 * Drops for good every capability but those of keep that are permitted: permitted and
 * effective = keep, inheritable and ambient empty; the rest leaves the bounding set too when
 * CAP_SETPCAP is effective; no_new_privs set. The sets before and after go to *ret_before and
 * *ret_after (either may be NULL) on success. Negative errno (-EPERM: the kernel did not
 * leave exactly keep; -EBUSY: the process has other threads, which capset() would not reach).
 */
int agent_caps_drop(uint64_t keep, struct agent_caps *ret_before, struct agent_caps *ret_after);
/*
 * "NET_ADMIN, NET_RAW" (at most max_names names, then " and N more"), or "none", into buf;
 * returns buf.
 */
const char *agent_caps_format(uint64_t mask, unsigned max_names, char *buf, size_t len);

#endif
