/* SPDX-License-Identifier: Apache-2.0 */
/* The client's clock (a caller's, or lib/clock.h) and the jittered backoff its retries wait. */
#include "kube/kube-internal.h"
#include "lib/clock.h"

uint64_t
kube_clock_now(const struct kube_clock *clk)
{
	if (clk && clk->now)
		return clk->now(clk->userdata);
	return clock_now_usec();
}

uint64_t
kube_backoff_delay(uint64_t base, uint64_t max, unsigned attempt, uint64_t *seed)
{
	uint64_t d = base, x;

	for (unsigned i = 0; i < attempt && d < max; i++)
		d *= 2;
	if (d > max)
		d = max;
	/* xorshift64*: jitter in [0.5, 1.0) of d */
	x = *seed ? *seed : UINT64_C(0x9e3779b97f4a7c15);
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*seed = x;
	x *= UINT64_C(0x2545f4914f6cdd1d);
	return d / 2 +
	       (uint64_t)((double)(x >> 11) / (double)(UINT64_C(1) << 53) * (double)(d / 2));
}
