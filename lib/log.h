/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_LOG_H
#define VMDHCP_LIB_LOG_H

#include <stdarg.h>
#include <stdint.h>

/*
 * Logging. Programs log; libraries return negative errno (debug logging allowed).
 * Lines go to stderr as "LEVEL prog: message" (plus an ISO timestamp when stderr is not a
 * journal/terminal-less pipe is irrelevant: always prefixed with UTC time).
 */

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN = 1,
	LOG_LEVEL_INFO = 2,
	LOG_LEVEL_DEBUG = 3,
};

/* Set the program name (borrowed, must outlive logging) and the threshold. */
void log_init(const char *prog, enum log_level level);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* "error|warn|info|debug" -> level; returns -EINVAL on anything else. */
int log_level_from_string(const char *s, enum log_level *ret);

void log_msg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_vmsg(enum log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...)                                              \
	do {                                                        \
		if (log_get_level() >= LOG_LEVEL_DEBUG)             \
			log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__);      \
	} while (0)

/*
 * Rate-limited logging for per-packet events: at most `burst` lines per `interval_usec`;
 * when a window opens again, one line says how many were suppressed.
 * Statically initialise with LOG_RATELIMIT_INIT(interval_usec, burst).
 */
struct log_ratelimit {
	uint64_t interval_usec;
	unsigned burst;
	uint64_t window_start;
	unsigned printed;
	unsigned suppressed;
};
#define LOG_RATELIMIT_INIT(iv, b) \
	{ .interval_usec = (iv), .burst = (b), .window_start = 0, .printed = 0, .suppressed = 0 }

/* Returns 1 if the line was printed, 0 if suppressed. `now` is a monotonic usec clock. */
int log_ratelimited(struct log_ratelimit *rl, uint64_t now, enum log_level level,
    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Start-up only: log and exit(1). fatal() appends strerror(errno). */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
