/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_TESTS_SCRIPTED_HTTP_H
#define VMDHCP_TESTS_SCRIPTED_HTTP_H

/*
 * A scripted in-process transport and a fake clock for unit tests of kube/ (see the .c file).
 *
 * A binary that uses them defines, once, the engine and the clock its kube/ code links to
 * (kube/http.c and lib/clock.c are then not linked in):
 *
 *   const struct kube_http_engine kube_http_engine = SCRIPTED_HTTP_ENGINE;
 *   SCRIPTED_CLOCK_DEFINE
 *
 * The test scripts the requests it expects, in order, with "*" matching any run of characters
 * in the path (query included):
 *
 *   scripted_expect("GET", "/api/v1/namespaces/x/configmaps?limit=500", 200, "{...}");
 *   w = scripted_expect_held("GET", "/api/v1/namespaces/x/configmaps?watch=true*");
 *   ... scripted_send(w, "{\"type\":\"ADDED\",...}\n"); scripted_close(w);
 *
 * A request that does not match the next expectation fails the test with both in the message
 * and is left unanswered. Every scripted action runs the loop until nothing is left to do; time
 * moves only through scripted_advance(), which fires the loop's timers that fall due.
 */

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "kube/kube-internal.h"

struct event_base;
struct scripted_exp;

/* The loop of the script and the clock (once per suite); scripted_free frees it. */
struct event_base *scripted_init(void);
void scripted_free(void);

/*
 * The fixture of the kube/ unit suites (their init and cleanup): scripted_init() and one
 * client on it for https://apiserver.test, in scripted_base and scripted_client.
 */
extern struct event_base *scripted_base;
extern struct kube_client *scripted_client;
int scripted_suite_init(void);
int scripted_suite_cleanup(void);

/* Answered at once when it comes: status and body (may be NULL). */
struct scripted_exp *scripted_expect(
    const char *method, const char *pattern, long status, const char *body);
/* Fails at once with a transport error (-ECONNREFUSED, -ECONNRESET ...) and its text. */
struct scripted_exp *scripted_expect_error(
    const char *method, const char *pattern, int err, const char *text);
/* Held when it comes until the test answers, sends to or ends it (a watch, an ordering race). */
struct scripted_exp *scripted_expect_held(const char *method, const char *pattern);

/* On a held request that came (fails the test otherwise): */
void scripted_answer(struct scripted_exp *e, long status, const char *body);
void scripted_error(struct scripted_exp *e, int err, const char *text);
/* A 200 stream's bytes (a watch: event lines with their newline), then its clean end. */
void scripted_send(struct scripted_exp *e, const char *data);
void scripted_close(struct scripted_exp *e);

/* The request came / was aborted by the client before an answer / its path as sent. */
bool scripted_arrived(const struct scripted_exp *e);
bool scripted_aborted(const struct scripted_exp *e);
const char *scripted_path(const struct scripted_exp *e);
/* The body the request came with, parsed (a new reference: an empty object, and the test
 * fails, when it has not come or its body is not JSON), and its Content-Type ("" if none). */
json_t *scripted_body(const struct scripted_exp *e);
const char *scripted_content_type(const struct scripted_exp *e);

/*
 * End of a test: every expectation must have come and be answered or aborted (a failure
 * names the first one that was not); forgets them all. Free the code under test first.
 */
void scripted_check_done(void);

/* Runs the loop until no event is active (no time passes). */
void scripted_run(void);
/* Moves the fake clock on by usec, firing every timer of the loop that falls due, in order. */
void scripted_advance(uint64_t usec);
/* The fake clock (monotonic usec). */
uint64_t scripted_now(void);

/* The engine's hooks (for SCRIPTED_HTTP_ENGINE). */
struct scripted_call {
	struct kube_http_call call;
	struct scripted_exp *exp; /* while bound and not answered */
};
int scripted_engine_init(struct kube_http *h, void **state);
void scripted_engine_free(void *state);
int scripted_engine_start(struct kube_http_call *call, const char *token);
void scripted_engine_abort(struct kube_http_call *call);

#define SCRIPTED_HTTP_ENGINE                                                                       \
	{                                                                                          \
		.name = "scripted", .call_size = sizeof(struct scripted_call), .max_active = 64,   \
		.init = scripted_engine_init, .free = scripted_engine_free,                        \
		.start = scripted_engine_start, .abort = scripted_engine_abort,                    \
	}

#define SCRIPTED_CLOCK_DEFINE                                                                      \
	int clock_gettime(clockid_t id, struct timespec *ts)                                       \
	{                                                                                          \
		return scripted_clock_gettime(id, ts);                                             \
	}                                                                                          \
	uint64_t clock_now_usec(void)                                                              \
	{                                                                                          \
		return scripted_now();                                                             \
	}                                                                                          \
	int64_t clock_realtime_sec(void)                                                           \
	{                                                                                          \
		return scripted_realtime_usec() / 1000000;                                         \
	}                                                                                          \
	int64_t clock_realtime_usec(void)                                                          \
	{                                                                                          \
		return scripted_realtime_usec();                                                   \
	}
/* A wall clock that moves with the fake one. */
int64_t scripted_realtime_usec(void);
/* clock_gettime() of the binary: the fake clock for the monotonic clocks, the kernel's else. */
int scripted_clock_gettime(clockid_t id, struct timespec *ts);

#endif
