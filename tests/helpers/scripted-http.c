/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The scripted transport and fake clock of kube/ unit tests: an engine for kube/call.c with
 * no sockets that matches each request the code under test makes against the test's
 * expectations, in order, and answers it at once (status and body, or a transport error) or
 * holds it until the test answers, streams watch lines into it or ends it. Ordering races are
 * written as the order of the test's actions, not as timing.
 *
 * The clock: scripted_now() is what clock_now_usec() returns in the binary, and what
 * clock_gettime(CLOCK_MONOTONIC*) returns to everything in it, libevent included (the binary's
 * definition, SCRIPTED_CLOCK_DEFINE, comes before libc's). So the loop's timers (evtimers:
 * backoff, resync, watch idle, call timeouts) run on the fake clock alone: scripted_advance()
 * moves it on in steps of at most a millisecond and runs the loop after each, which fires the
 * timers that fell due, in deadline order. Real time never decides anything, so a slow machine
 * or valgrind sees the same run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>
#include <event2/event.h>

#include "tests/helpers/scripted-http.h"

#define STEP_USEC 1000 /* scripted_advance() moves the clock by at most this at once */
#define START_USEC (1000 * UINT64_C(1000000)) /* the fake clock never reads 0 */

struct scripted_exp {
	struct scripted_exp *next;
	char *method, *pattern;
	enum { EXP_ANSWER, EXP_ERROR, EXP_HELD } kind;
	long status;
	int err;
	char *body;		   /* or the error text */
	char *path;		   /* as it came */
	char *sent, *content_type; /* the request's body and its type as they came, or NULL */
	struct scripted_call *call;
	bool arrived, ended, aborted;
};

static struct {
	struct event_base *base;
	struct scripted_exp *exps, **tail;
	uint64_t now;
} S = {.now = START_USEC};

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void
fail(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "scripted-http: %s\n", msg);
	CU_assertImplementation(CU_FALSE, __LINE__, msg, __FILE__, "", CU_FALSE);
}

/* "*" matches any run of characters; everything else itself. */
static bool
glob(const char *p, const char *s)
{
	for (; *p; p++, s++) {
		if (*p == '*') {
			for (;; s++) {
				if (glob(p + 1, s))
					return true;
				if (!*s)
					return false;
			}
		}
		if (*p != *s)
			return false;
	}
	return !*s;
}

/* --- the engine ------------------------------------------------------------------------- */

int
scripted_engine_init(struct kube_http *h, void **state)
{
	*state = NULL;
	return 0;
}

void
scripted_engine_free(void *state)
{
}

int
scripted_engine_start(struct kube_http_call *call, const char *token)
{
	struct scripted_call *sc = (struct scripted_call *)call;
	const char *server = kube_http_config(call->http)->server;
	const char *path = call->rq.url;
	struct scripted_exp *e;

	if (server && strncmp(path, server, strlen(server)) == 0)
		path += strlen(server);
	for (e = S.exps; e && e->arrived; e = e->next)
		;
	if (!e || strcmp(e->method, call->rq.method) != 0 || !glob(e->pattern, path)) {
		fail("unexpected request %s %s (next expected: %s %s)", call->rq.method, path,
		    e ? e->method : "nothing", e ? e->pattern : "");
		return 0; /* left unanswered */
	}
	e->arrived = true;
	e->path = strdup(path);
	e->sent = call->rq.body ? strdup(call->rq.body) : NULL;
	e->content_type = call->rq.content_type ? strdup(call->rq.content_type) : NULL;
	if (e->kind == EXP_HELD) {
		e->call = sc;
		sc->exp = e;
		return 0;
	}
	e->ended = true;
	if (e->kind == EXP_ERROR) {
		kube_http_call_done(call, e->err, 0, "%s", e->body ? e->body : strerror(-e->err));
		return 0;
	}
	if (e->body && *e->body)
		kube_http_call_data(call, e->status, e->body, strlen(e->body));
	kube_http_call_done(call, 0, e->status, NULL);
	return 0;
}

void
scripted_engine_abort(struct kube_http_call *call)
{
	struct scripted_call *sc = (struct scripted_call *)call;

	if (sc->exp) {
		sc->exp->aborted = true;
		sc->exp->call = NULL;
		sc->exp = NULL;
	}
}

/* --- the script ------------------------------------------------------------------------- */

static struct scripted_exp *
add(const char *method, const char *pattern, int kind, long status, int err, const char *body)
{
	struct scripted_exp *e = calloc(1, sizeof(*e));

	if (!e || !(e->method = strdup(method)) || !(e->pattern = strdup(pattern)) ||
	    (body && !(e->body = strdup(body)))) {
		fprintf(stderr, "scripted-http: out of memory\n");
		abort();
	}
	e->kind = kind;
	e->status = status;
	e->err = err;
	if (!S.tail)
		S.tail = &S.exps;
	*S.tail = e;
	S.tail = &e->next;
	return e;
}

struct scripted_exp *
scripted_expect(const char *method, const char *pattern, long status, const char *body)
{
	return add(method, pattern, EXP_ANSWER, status, 0, body);
}

struct scripted_exp *
scripted_expect_error(const char *method, const char *pattern, int err, const char *text)
{
	return add(method, pattern, EXP_ERROR, 0, err, text);
}

struct scripted_exp *
scripted_expect_held(const char *method, const char *pattern)
{
	return add(method, pattern, EXP_HELD, 0, 0, NULL);
}

/* The live call of a held expectation, or NULL (the test failed). */
static struct kube_http_call *
held(struct scripted_exp *e, const char *what)
{
	if (!e->arrived || !e->call) {
		fail("%s on %s %s: %s", what, e->method, e->pattern,
		    !e->arrived ? "the request has not come" : "the call has ended");
		return NULL;
	}
	return &e->call->call;
}

static void
end(struct scripted_exp *e, int err, long status, const char *text)
{
	struct kube_http_call *call = &e->call->call;

	e->call->exp = NULL;
	e->call = NULL;
	e->ended = true;
	if (err < 0)
		kube_http_call_done(call, err, 0, "%s", text ? text : strerror(-err));
	else
		kube_http_call_done(call, 0, status, NULL);
}

void
scripted_answer(struct scripted_exp *e, long status, const char *body)
{
	struct kube_http_call *call = held(e, "answer");
	int r = 0;

	if (!call)
		return;
	if (body && *body)
		r = kube_http_call_data(call, status, body, strlen(body));
	end(e, r, status, "aborted");
	scripted_run();
}

void
scripted_error(struct scripted_exp *e, int err, const char *text)
{
	if (!held(e, "error"))
		return;
	end(e, err, 0, text);
	scripted_run();
}

void
scripted_send(struct scripted_exp *e, const char *data)
{
	struct kube_http_call *call = held(e, "send");
	int r;

	if (!call)
		return;
	r = kube_http_call_data(call, 200, data, strlen(data));
	if (r < 0) /* the client stopped the stream (an ERROR event): the end follows */
		end(e, r, 0, "aborted");
	scripted_run();
}

void
scripted_close(struct scripted_exp *e)
{
	if (!held(e, "close"))
		return;
	end(e, 0, 200, NULL);
	scripted_run();
}

bool
scripted_arrived(const struct scripted_exp *e)
{
	return e->arrived;
}

bool
scripted_aborted(const struct scripted_exp *e)
{
	return e->aborted;
}

const char *
scripted_path(const struct scripted_exp *e)
{
	return e->path ? e->path : "";
}

json_t *
scripted_body(const struct scripted_exp *e)
{
	json_t *j = e->sent ? json_loads(e->sent, 0, NULL) : NULL;

	if (!j) {
		fail("%s %s: %s", e->method, e->pattern,
		    !e->arrived ? "no body: the request has not come"
				: "its body is not a JSON document");
		j = json_object();
	}
	return j;
}

const char *
scripted_content_type(const struct scripted_exp *e)
{
	return e->content_type ? e->content_type : "";
}

void
scripted_check_done(void)
{
	struct scripted_exp *e, *next;
	bool reported = false;

	scripted_run();
	for (e = S.exps; e; e = next) {
		next = e->next;
		if (!reported && (!e->arrived || e->call)) {
			fail("%s %s: %s", e->method, e->pattern,
			    !e->arrived ? "expected, never came" : "still open at the end");
			reported = true;
		}
		if (e->call)
			e->call->exp = NULL;
		free(e->method);
		free(e->pattern);
		free(e->body);
		free(e->path);
		free(e->sent);
		free(e->content_type);
		free(e);
	}
	S.exps = NULL;
	S.tail = &S.exps;
}

/* --- the loop and the clock ------------------------------------------------------------------ */

struct event_base *
scripted_init(void)
{
	struct event_config *conf = event_config_new();

	/* CLOCK_MONOTONIC rather than the coarse one (both are fake; this one to the usec) */
	if (!conf || event_config_set_flag(conf, EVENT_BASE_FLAG_PRECISE_TIMER) < 0)
		abort();
	S.now = START_USEC;
	S.base = event_base_new_with_config(conf);
	event_config_free(conf);
	S.exps = NULL;
	S.tail = &S.exps;
	return S.base;
}

void
scripted_free(void)
{
	scripted_check_done();
	if (S.base)
		event_base_free(S.base);
	S.base = NULL;
}

struct event_base *scripted_base;
struct kube_client *scripted_client;

int
scripted_suite_init(void)
{
	static struct kube_config cfg = {.server = (char *)"https://apiserver.test"};

	scripted_base = scripted_init();
	if (!scripted_base)
		return -1;
	return kube_client_new(scripted_base, &cfg, &scripted_client);
}

int
scripted_suite_cleanup(void)
{
	scripted_client = kube_client_free(scripted_client);
	scripted_free();
	scripted_base = NULL;
	return 0;
}

uint64_t
scripted_now(void)
{
	return S.now;
}

int
scripted_clock_gettime(clockid_t id, struct timespec *ts)
{
	switch (id) {
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_BOOTTIME:
		ts->tv_sec = (time_t)(S.now / 1000000);
		ts->tv_nsec = (long)(S.now % 1000000) * 1000;
		return 0;
	default:
		return (int)syscall(SYS_clock_gettime, id, ts);
	}
}

int64_t
scripted_realtime_usec(void)
{
	/* 2026-01-01T00:00:00Z at the start */
	return (int64_t)1767225600 * 1000000 + (int64_t)(S.now - START_USEC);
}

void
scripted_run(void)
{
	int guard = 100000;

	if (!S.base)
		return;
	do
		event_base_loop(S.base, EVLOOP_NONBLOCK);
	while (event_base_get_num_events(S.base, EVENT_BASE_COUNT_ACTIVE) > 0 && --guard > 0);
	if (!guard)
		fail("the loop never went idle");
}

void
scripted_advance(uint64_t usec)
{
	uint64_t target = S.now + usec;

	scripted_run();
	while (S.now < target) {
		S.now += target - S.now < STEP_USEC ? target - S.now : STEP_USEC;
		scripted_run();
	}
}
