/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char *log_prog = "vm-dhcp";
static enum log_level log_level = LOG_LEVEL_INFO;

static const char *const level_names[] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARN] = "warn",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

void
log_init(const char *prog, enum log_level level)
{
	if (prog != NULL)
		log_prog = prog;
	log_level = level;
}

void
log_set_level(enum log_level level)
{
	log_level = level;
}

enum log_level
log_get_level(void)
{
	return log_level;
}

int
log_level_from_string(const char *s, enum log_level *ret)
{
	for (size_t i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcasecmp(s, level_names[i]) == 0) {
			*ret = (enum log_level)i;
			return 0;
		}
	}
	if (strcasecmp(s, "warning") == 0) {
		*ret = LOG_LEVEL_WARN;
		return 0;
	}
	return -EINVAL;
}

void
log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	char ts[32];
	struct timespec now;
	struct tm tm;

	if (level > log_level)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	/* One fprintf per line keeps lines whole when several processes share stderr. */
	char line[1024];
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	if (n < 0)
		return;
	fprintf(stderr, "%s.%03ldZ %-5s %s: %s\n", ts, now.tv_nsec / 1000000,
	    level_names[level], log_prog, line);
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

int
log_ratelimited(struct log_ratelimit *rl, uint64_t now, enum log_level level,
    const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return 0;
	if (rl->window_start == 0 || now - rl->window_start >= rl->interval_usec) {
		if (rl->suppressed > 0)
			log_msg(level, "(%u similar messages suppressed)", rl->suppressed);
		rl->window_start = now ? now : 1;
		rl->printed = 0;
		rl->suppressed = 0;
	}
	if (rl->printed >= rl->burst) {
		rl->suppressed++;
		return 0;
	}
	rl->printed++;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
	return 1;
}

void
fatal(const char *fmt, ...)
{
	char msg[768];
	int saved = errno;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_msg(LOG_LEVEL_ERROR, "%s: %s", msg, strerror(saved));
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LEVEL_ERROR, fmt, ap);
	va_end(ap);
	exit(1);
}
