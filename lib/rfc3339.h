/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_RFC3339_H
#define VMDHCP_LIB_RFC3339_H

/*
 * RFC 3339 date-times, the one parser and formatter of the project: Kubernetes Time and
 * MicroTime fields (metav1.Time "2006-01-02T15:04:05Z", MicroTime "...05.000000Z"), the CRDs'
 * date-time fields, event and log timestamps.
 */

#include <stddef.h>
#include <stdint.h>

/* "YYYY-MM-DDTHH:MM:SS.ffffffZ" and its NUL, the longest rfc3339_format() writes. */
#define RFC3339_MAX 28

/*
 * Parses an RFC 3339 date-time (§5.6): date "T" time, an optional fraction of any length
 * (kept to the microsecond, the rest truncated), then "Z" or a "+hh:mm"/"-hh:mm" offset;
 * "t" and "z" are accepted as RFC 3339 allows. The day must exist in its month (as Go's
 * time.Parse, which the API server validates with); a leap second (:60) is the next second.
 * Nothing may follow. Returns 0 with *ret_usec (microseconds since the epoch, UTC), or -EINVAL.
 */
int rfc3339_parse(const char *s, int64_t *ret_usec);

/*
 * Formats usec (microseconds since the epoch) as UTC with `digits` fraction digits (0, 3 or
 * 6; others are treated as 6), e.g. "2026-11-27T05:13:58Z" or "2026-11-27T05:13:58.123456Z".
 * Years outside 0000-9999 are clamped to the nearest representable instant.
 */
void rfc3339_format(int64_t usec, unsigned digits, char out[RFC3339_MAX]);

#endif
