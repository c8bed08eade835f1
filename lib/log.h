/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_LOG_H
#define VMDHCP_LIB_LOG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Logging. Programs log; libraries return negative errno (debug logging allowed).
 * Lines go to stderr, one write each, in one of two formats (log_set_format):
 *
 *   text (default)  2025-11-25T12:00:00.123Z info  prog: message key=value key="a b"
 *   json            {"ts":"2025-11-25T12:00:00.123Z","level":"info","msg":"message","key":"value"}
 *
 * The time is RFC 3339 UTC with milliseconds. The key/values are those given to log_kv();
 * plain log_msg() lines carry none. A message longer than LOG_MSG_MAX bytes is cut (on a
 * UTF-8 character boundary) and marked: text ends with " [truncated N bytes]", JSON has
 * "truncated":true; a value longer than LOG_VALUE_MAX bytes likewise. JSON lines are valid
 * JSON whatever the message holds: control characters are escaped and bytes that are not
 * UTF-8 become U+FFFD. Text messages are written as given (only values are quoted/escaped).
 *
 * The JSON is written here rather than with jansson: lib/ depends on libc only (the DHCP
 * engine builds and fuzzes without jansson, see docs/architecture.md).
 */

enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN = 1,
	LOG_LEVEL_INFO = 2,
	LOG_LEVEL_DEBUG = 3,
};

enum log_format {
	LOG_FORMAT_TEXT = 0,
	LOG_FORMAT_JSON = 1,
};

/* Message bytes kept per line, and value bytes per key (more is cut and marked). */
#define LOG_MSG_MAX 1024
#define LOG_VALUE_MAX 256

/* Set the program name (borrowed, must outlive logging) and the threshold. */
void log_init(const char *prog, enum log_level level);
void log_set_level(enum log_level level);
enum log_level log_get_level(void);
/* "error|warn|info|debug" -> level; returns -EINVAL on anything else. */
int log_level_from_string(const char *s, enum log_level *ret);
void log_set_format(enum log_format format);
enum log_format log_get_format(void);
/* "text|json" -> format; returns -EINVAL on anything else. */
int log_format_from_string(const char *s, enum log_format *ret);
/* The two as lib/flags.h FLAG_FUNC parsers (dst: enum log_level * / enum log_format *). */
int log_level_flag(void *dst, const char *value, char *err, size_t len);
int log_format_flag(void *dst, const char *value, char *err, size_t len);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(enum log_level level, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

/*
 * A line with structured fields: kv is "key", "value", ..., NULL (borrowed; a NULL value
 * ends the list too), e.g.
 *
 *   log_kv(LOG_LEVEL_INFO, LOG_KV("ippool", "ns/pool", "mac", mac), "bound %s", ip);
 *
 * Text appends " key=value" for each (the value quoted and escaped when it holds spaces,
 * quotes, '=', control characters or bytes that are not UTF-8); JSON adds string members
 * (a key equal to ts, level, msg or truncated gets a '_' appended). kv may be NULL.
 */
void log_kv(enum log_level level, const char *const *kv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void log_vkv(enum log_level level, const char *const *kv, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
#define LOG_KV(...) ((const char *const[]){__VA_ARGS__, NULL})

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...)                                                                             \
	do {                                                                                       \
		if (log_get_level() >= LOG_LEVEL_DEBUG)                                            \
			log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__);                                     \
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
#define LOG_RATELIMIT_INIT(iv, b)                                                                  \
	{                                                                                          \
		.interval_usec = (iv), .burst = (b), .window_start = 0, .printed = 0,              \
		.suppressed = 0                                                                    \
	}

/* Returns 1 if the line was printed, 0 if suppressed. `now` is a monotonic usec clock. */
int log_ratelimited(struct log_ratelimit *rl, uint64_t now, enum log_level level, const char *fmt,
    ...) __attribute__((format(printf, 4, 5)));

/* Start-up only: log and exit(1). fatal() appends strerror(errno). */
void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
