// SPDX-License-Identifier: Apache-2.0
/*
 * RFC 3339 date-times (see rfc3339.h). Hand-written fields rather than strptime(3), which
 * accepts one-digit fields, leading blanks and out-of-range days that the API server refuses.
 */
#include "lib/rfc3339.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define USEC INT64_C(1000000)

/* Seconds of 0000-01-01T00:00:00Z and of 9999-12-31T23:59:59Z since the epoch. */
#define MIN_SEC INT64_C(-62167219200)
#define MAX_SEC INT64_C(253402300799)

static int
digits(const char *s, int n, int *ret)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (s[i] - '0');
	}
	*ret = v;
	return 0;
}

static bool
leap(int y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int
days_in_month(int y, int m)
{
	static const int d[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	return m == 2 && leap(y) ? 29 : d[m - 1];
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's). */
static int64_t
days_from_civil(int64_t y, int m, int d)
{
	int64_t era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

int
rfc3339_parse(const char *s, int64_t *ret_usec)
{
	int y, mo, d, h, mi, sec, oh = 0, om = 0, sign = 0;
	int64_t frac = 0, t;
	const char *p;

	if (s == NULL || strnlen(s, 20) < 20 || digits(s, 4, &y) < 0 || s[4] != '-' ||
	    digits(s + 5, 2, &mo) < 0 || s[7] != '-' || digits(s + 8, 2, &d) < 0 ||
	    (s[10] != 'T' && s[10] != 't') || digits(s + 11, 2, &h) < 0 || s[13] != ':' ||
	    digits(s + 14, 2, &mi) < 0 || s[16] != ':' || digits(s + 17, 2, &sec) < 0)
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo) || h > 23 || mi > 59 || sec > 60)
		return -EINVAL;
	p = s + 19;
	if (*p == '.') {
		int64_t scale = USEC / 10;

		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			frac += (*p - '0') * scale;
			scale /= 10;
		}
	}
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p == '+' ? 1 : -1;
		if (digits(p + 1, 2, &oh) < 0 || p[3] != ':' || digits(p + 4, 2, &om) < 0 ||
		    oh > 23 || om > 59)
			return -EINVAL;
		p += 6;
	} else {
		return -EINVAL;
	}
	if (*p != '\0')
		return -EINVAL;
	t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	t -= sign * (oh * 3600 + om * 60);
	*ret_usec = t * USEC + frac;
	return 0;
}

void
rfc3339_format(int64_t usec, unsigned digits_wanted, char out[RFC3339_MAX])
{
	int64_t sec = usec / USEC - (usec % USEC < 0); /* floor, without negating INT64_MIN */
	int64_t us = usec - sec * USEC;
	time_t t;
	struct tm tm;
	int n;

	if (sec < MIN_SEC) {
		sec = MIN_SEC;
		us = 0;
	} else if (sec > MAX_SEC) {
		sec = MAX_SEC;
		us = USEC - 1;
	}
	t = (time_t)sec;
	if (gmtime_r(&t, &tm) == NULL)
		memset(&tm, 0, sizeof(tm));
	n = snprintf(out, RFC3339_MAX, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
	if (n < 0 || n >= RFC3339_MAX - 1)
		n = 19;
	if (digits_wanted == 0)
		snprintf(out + n, (size_t)(RFC3339_MAX - n), "Z");
	else if (digits_wanted == 3)
		snprintf(out + n, (size_t)(RFC3339_MAX - n), ".%03dZ", (int)(us / 1000));
	else
		snprintf(out + n, (size_t)(RFC3339_MAX - n), ".%06dZ", (int)us);
}
