/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_CLOCK_H
#define VMDHCP_LIB_CLOCK_H

#include <stdint.h>

#define USEC_PER_SEC UINT64_C(1000000)
#define USEC_PER_MSEC UINT64_C(1000)

/*
 * Monotonic microseconds. Libraries take `now` as a parameter instead of calling this;
 * programs call it at the edge, so tests control time by passing their own `now`.
 */
uint64_t clock_now_usec(void);

/* Wall-clock seconds since the epoch (for timestamps written to the API, lease files). */
int64_t clock_realtime_sec(void);
/* Wall-clock microseconds since the epoch (Kubernetes MicroTime fields, e.g. Lease renewTime). */
int64_t clock_realtime_usec(void);

#endif
