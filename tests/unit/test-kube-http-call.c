/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The HTTP call layer (kube/call.c) on a fake engine with no sockets: admission (at most
 * max_active plain calls started, streams not counted, calls started in order), cancel
 * (queued, in flight, twice, from inside on_data and from another call's on_done), the
 * total timeout (an evtimer; the loop runs until it fires, no wall-clock window), the answer
 * body and its limits, start failures, and freeing with calls queued and in flight. Also the
 * libcurl engine's error table (kube/http.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "tests/runner.h"

/* --- the fake engine --------------------------------------------------------------------- */

struct fake_call {
	struct kube_http_call call;
	int aborts;
};

static struct {
	int inits, frees;
	int start_error; /* what start returns */
	struct kube_http_call *started[16];
	size_t n_started;
	int aborts;
	char token[64];
} fk;

static int
fake_init(struct kube_http *h, void **state)
{
	fk.inits++;
	*state = &fk;
	return 0;
}

static void
fake_free(void *state)
{
	fk.frees++;
}

static int
fake_start(struct kube_http_call *call, const char *token)
{
	if (fk.start_error)
		return fk.start_error;
	snprintf(fk.token, sizeof(fk.token), "%s", token ? token : "");
	if (fk.n_started < 16)
		fk.started[fk.n_started++] = call;
	return 0;
}

static void
fake_abort(struct kube_http_call *call)
{
	((struct fake_call *)call)->aborts++;
	fk.aborts++;
}

static const struct kube_http_engine fake_engine = {
    .name = "fake",
    .call_size = sizeof(struct fake_call),
    .max_active = 2,
    .init = fake_init,
    .free = fake_free,
    .start = fake_start,
    .abort = fake_abort,
};

/* --- one call's record ---------------------------------------------------------------------- */

struct rec {
	int done, released, data;
	int error;
	long status;
	char body[64];
	char message[512];
	struct kube_http_call *self;
	struct kube_http_call *cancel_in_done; /* another call cancelled from on_done */
	bool cancel_self_in_data;
	bool stop_in_data;
};

static void
rec_done(void *userdata, int error, long status, const char *body, size_t len, const char *message)
{
	struct rec *r = userdata;

	r->done++;
	r->error = error;
	r->status = status;
	snprintf(r->body, sizeof(r->body), "%.*s", (int)len, body);
	snprintf(r->message, sizeof(r->message), "%s", message);
	if (r->cancel_in_done)
		kube_http_cancel(r->cancel_in_done);
}

static void
rec_release(void *userdata)
{
	((struct rec *)userdata)->released++;
}

static bool
rec_data(void *userdata, const char *data, size_t len)
{
	struct rec *r = userdata;

	r->data++;
	if (r->cancel_self_in_data)
		kube_http_cancel(r->self);
	return !r->stop_in_data;
}

static struct event_base *base;
static struct kube_config cfg = {.server = (char *)"https://fake.test", .token = (char *)"tok"};

static int
suite_init(void)
{
	base = event_base_new();
	kube_answer_limit_set((uint64_t)1 << 20, "set by the test"); /* not the host's cgroup */
	return base ? 0 : -1;
}

static int
suite_cleanup(void)
{
	event_base_free(base);
	return 0;
}

static struct kube_http *
fresh(void)
{
	struct kube_http *h = NULL;

	memset(&fk, 0, sizeof(fk));
	CU_ASSERT_EQUAL_FATAL(kube_http_new_engine(base, &cfg, &fake_engine, &h), 0);
	CU_ASSERT_EQUAL(fk.inits, 1);
	return h;
}

/* Runs the deferred events (the reaper, which may activate itself again). */
static void
settle(void)
{
	for (int i = 0; i < 4; i++)
		event_base_loop(base, EVLOOP_NONBLOCK);
}

static struct kube_http_call *
submit(struct kube_http *h, struct rec *r, bool stream, const char *path)
{
	struct kube_http_request req = {.method = "GET",
	    .path = path ? path : "/x",
	    .stream = stream,
	    .on_data = stream ? rec_data : NULL,
	    .on_done = rec_done,
	    .release = rec_release,
	    .userdata = r};
	struct kube_http_call *call = NULL;

	CU_ASSERT_EQUAL_FATAL(kube_http_submit(h, &req, &call), 0);
	r->self = call;
	return call;
}

static void
test_admission_order(void)
{
	struct kube_http *h = fresh();
	struct kube_http_call *c[5];
	struct rec r[5];

	memset(r, 0, sizeof(r));
	c[0] = submit(h, &r[0], false, NULL);
	c[1] = submit(h, &r[1], false, NULL);
	c[2] = submit(h, &r[2], false, NULL);
	c[3] = submit(h, &r[3], true, NULL); /* a stream: not counted, not held back */
	c[4] = submit(h, &r[4], false, NULL);
	CU_ASSERT_EQUAL(fk.n_started, 0); /* nothing starts before the loop runs */
	settle();
	CU_ASSERT_EQUAL_FATAL(fk.n_started, 3);
	CU_ASSERT_PTR_EQUAL(fk.started[0], c[0]);
	CU_ASSERT_PTR_EQUAL(fk.started[1], c[1]);
	CU_ASSERT_PTR_EQUAL(fk.started[2], c[3]);
	CU_ASSERT_STRING_EQUAL(fk.token, "tok");
	/* c[0] answers: its slot goes to the oldest waiting call */
	kube_http_call_done(c[0], 0, 200, NULL);
	CU_ASSERT_EQUAL(r[0].done, 1);
	CU_ASSERT_EQUAL(r[0].status, 200);
	CU_ASSERT_EQUAL(r[0].released, 0);
	CU_ASSERT_EQUAL(fk.n_started, 3); /* admission is deferred to the loop */
	settle();
	CU_ASSERT_EQUAL_FATAL(fk.n_started, 4);
	CU_ASSERT_PTR_EQUAL(fk.started[3], c[2]);
	kube_http_call_done(c[1], -EIO, 0, "line one\nline two");
	CU_ASSERT_EQUAL(r[1].error, -EIO);
	CU_ASSERT_EQUAL(r[1].status, 0);
	CU_ASSERT_STRING_EQUAL(r[1].message, "GET https://fake.test/x: line one line two");
	settle();
	CU_ASSERT_EQUAL_FATAL(fk.n_started, 5);
	CU_ASSERT_PTR_EQUAL(fk.started[4], c[4]);
	kube_http_call_done(c[2], 0, 404, NULL);
	kube_http_call_done(c[4], 0, 201, NULL);
	kube_http_call_done(c[3], 0, 200, NULL);
	for (int i = 0; i < 5; i++) {
		CU_ASSERT_EQUAL(r[i].done, 1);
		CU_ASSERT_EQUAL(r[i].released, 0);
	}
	settle();
	kube_http_free(h);
	CU_ASSERT_EQUAL(fk.frees, 1);
}

static void
test_cancel_queued_and_in_flight(void)
{
	struct kube_http *h = fresh();
	struct kube_http_call *a, *b, *c, *d;
	struct rec r[4];

	memset(r, 0, sizeof(r));
	a = submit(h, &r[0], false, NULL);
	b = submit(h, &r[1], false, NULL);
	c = submit(h, &r[2], false, NULL);
	d = submit(h, &r[3], false, NULL);
	kube_http_cancel(d); /* before the loop ever ran it */
	settle();
	CU_ASSERT_EQUAL_FATAL(fk.n_started, 2);
	CU_ASSERT_EQUAL(r[3].released, 1);
	kube_http_cancel(c); /* queued */
	kube_http_cancel(a); /* in flight */
	kube_http_cancel(a); /* twice is harmless */
	/* an engine report of a cancelled call is dropped */
	kube_http_call_done(a, 0, 200, NULL);
	CU_ASSERT_EQUAL(r[0].done, 0);
	settle();
	CU_ASSERT_EQUAL(r[0].released, 1);
	CU_ASSERT_EQUAL(r[2].released, 1);
	CU_ASSERT_EQUAL(fk.aborts, 1);	  /* a only: c and d never started */
	CU_ASSERT_EQUAL(fk.n_started, 2); /* a's slot has no one left to take it */
	kube_http_call_done(b, 0, 200, NULL);
	for (int i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(r[i].done, i == 1 ? 1 : 0);
	settle();
	kube_http_free(h);
}

static void
test_cancel_from_callbacks(void)
{
	struct kube_http *h = fresh();
	struct kube_http_call *s1, *s2, *x, *y;
	struct rec r[4];

	memset(r, 0, sizeof(r));
	r[0].cancel_self_in_data = true;
	r[1].stop_in_data = true;
	s1 = submit(h, &r[0], true, NULL);
	s2 = submit(h, &r[1], true, NULL);
	x = submit(h, &r[2], false, NULL);
	y = submit(h, &r[3], false, NULL);
	settle();
	CU_ASSERT_EQUAL_FATAL(fk.n_started, 4);
	/* s1 cancels itself from on_data: the engine is told to stop, nothing is reported */
	CU_ASSERT_EQUAL(kube_http_call_data(s1, 200, "{}\n", 3), -ECANCELED);
	CU_ASSERT_EQUAL(kube_http_call_data(s1, 200, "{}\n", 3), -ECANCELED);
	CU_ASSERT_EQUAL(r[0].data, 1);
	kube_http_call_done(s1, -ECANCELED, 0, "write error");
	CU_ASSERT_EQUAL(r[0].done, 0);
	/* s2's on_data says stop: the call ends with -ECANCELED "aborted", status 0 */
	CU_ASSERT_EQUAL(kube_http_call_data(s2, 200, "{}\n", 3), -ECANCELED);
	kube_http_call_done(s2, -EIO, 0, "write error");
	CU_ASSERT_EQUAL(r[1].done, 1);
	CU_ASSERT_EQUAL(r[1].error, -ECANCELED);
	CU_ASSERT_EQUAL(r[1].status, 0);
	CU_ASSERT_STRING_EQUAL(r[1].message, "GET https://fake.test/x: aborted");
	/* x's on_done cancels y, in flight */
	r[2].cancel_in_done = y;
	kube_http_call_done(x, 0, 200, NULL);
	CU_ASSERT_EQUAL(r[2].done, 1);
	settle();
	CU_ASSERT_EQUAL(r[0].released, 1);
	CU_ASSERT_EQUAL(r[3].released, 1);
	CU_ASSERT_EQUAL(r[3].done, 0);
	CU_ASSERT_EQUAL(r[1].released, 0);
	CU_ASSERT_EQUAL(r[2].released, 0);
	kube_http_free(h);
}

static void
test_timeout(void)
{
	struct kube_http *h = fresh();
	struct kube_http_call *p, *s;
	struct rec r[2];

	memset(r, 0, sizeof(r));
	kube_http_set_timeouts(h, 1, 0);
	CU_ASSERT_EQUAL(kube_http_connect_ms(h), 10000); /* 0: unchanged */
	s = submit(h, &r[1], true, NULL); /* a stream without timeout_ms has no timer */
	p = submit(h, &r[0], false, NULL);
	/* the loop runs until the timer fires: no window */
	while (!r[0].done)
		event_base_loop(base, EVLOOP_ONCE);
	CU_ASSERT_EQUAL(r[0].error, -ETIMEDOUT);
	CU_ASSERT_EQUAL(r[0].status, 0);
	CU_ASSERT_STRING_EQUAL(
	    r[0].message, "GET https://fake.test/x: Operation timed out after 1 milliseconds");
	CU_ASSERT_EQUAL(r[0].released, 0);
	CU_ASSERT(fk.aborts >= 1); /* the engine dropped p before the report */
	(void)p;
	CU_ASSERT_EQUAL(r[1].done, 0);
	kube_http_cancel(s);
	settle();
	CU_ASSERT_EQUAL(r[1].released, 1);
	CU_ASSERT_EQUAL(r[1].done, 0);
	kube_http_free(h);
}

static void
test_body(void)
{
	struct kube_http *h = fresh();
	struct kube_http_call *a, *b, *c;
	struct rec r[3];
	static const char small[4] = "abc";

	memset(r, 0, sizeof(r));
	a = submit(h, &r[0], false, NULL);
	b = submit(h, &r[1], true, NULL);
	settle();
	/* a plain answer is kept, once allocated at its announced length */
	kube_http_call_expect(a, 5);
	CU_ASSERT_EQUAL(kube_http_call_data(a, 200, "hel", 3), 0);
	CU_ASSERT_EQUAL(kube_http_call_data(a, 200, "lo", 2), 0);
	kube_http_call_done(a, 0, 200, NULL);
	CU_ASSERT_STRING_EQUAL(r[0].body, "hello");
	/* a stream's non-2xx answer is kept as a body, not handed to on_data */
	CU_ASSERT_EQUAL(kube_http_call_data(b, 403, "{\"kind\":\"Status\"}", 17), 0);
	kube_http_call_done(b, 0, 403, NULL);
	CU_ASSERT_EQUAL(r[1].data, 0);
	CU_ASSERT_STRING_EQUAL(r[1].body, "{\"kind\":\"Status\"}");
	CU_ASSERT_EQUAL(r[1].status, 403);
	/* over the cap: refused before a byte more is held; the end says why */
	c = submit(h, &r[2], false, NULL);
	settle();
	CU_ASSERT_EQUAL(kube_http_call_data(c, 200, small, 3), 0);
	CU_ASSERT_EQUAL(kube_http_call_data(c, 200, small, (size_t)300 << 20), -EFBIG);
	CU_ASSERT_PTR_NULL(c->resp); /* what was held is given back at once */
	kube_http_call_done(c, -ECANCELED, 0, "Failure writing output");
	CU_ASSERT_EQUAL(r[2].error, -EFBIG);
	CU_ASSERT_STRING_EQUAL(r[2].message,
	    "GET https://fake.test/x: answer too large: more than 300 MiB, the cap is 1 MiB (set "
	    "by the test; VMDHCP_KUBE_MAX_ANSWER overrides it)");
	CU_ASSERT_STRING_EQUAL(r[2].body, ""); /* no partial body with an error */
	settle();
	kube_http_free(h);
}

/* The cap on a held answer: a body grows to it and no further (no doubling past it); one
 * announced larger is refused before a byte is held; each refusal is counted. */
static void
test_body_cap(void)
{
	struct kube_http *h;
	struct kube_http_call *a, *b, *c;
	struct rec r[3];
	uint64_t refused = kube_answers_refused();
	char *chunk = calloc(1, 300000);

	kube_answer_limit_set(1000000, "set by the test");
	h = fresh();
	memset(r, 0, sizeof(r));
	memset(chunk, 'x', 300000);
	a = submit(h, &r[0], false, NULL);
	b = submit(h, &r[1], false, NULL);
	c = submit(h, &r[2], false, NULL);
	settle();
	/* exactly the cap is kept; the buffer never grows past cap + 1 */
	for (int i = 0; i < 3; i++)
		CU_ASSERT_EQUAL(kube_http_call_data(a, 200, chunk, 300000), 0);
	CU_ASSERT_EQUAL(kube_http_call_data(a, 200, chunk, 100000), 0);
	CU_ASSERT(a->resp_cap <= 1000001);
	CU_ASSERT_EQUAL(kube_http_call_data(a, 200, chunk, 1), -EFBIG);
	CU_ASSERT_EQUAL(kube_http_call_data(a, 200, chunk, 1), -EFBIG); /* stays refused */
	kube_http_call_done(a, -ECANCELED, 0, "Failure writing output");
	CU_ASSERT_EQUAL(r[0].error, -EFBIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(r[0].message, "more than 976.6 KiB, the cap is 976.6 KiB"));
	/* Content-Length past the cap: nothing allocated, the first byte refused */
	kube_http_call_expect(b, (uint64_t)1 << 30);
	CU_ASSERT_PTR_NULL(b->resp);
	CU_ASSERT_EQUAL(kube_http_call_data(b, 200, chunk, 10), -EFBIG);
	kube_http_call_done(b, -ECANCELED, 0, "Failure writing output");
	CU_ASSERT_EQUAL(r[1].error, -EFBIG);
	CU_ASSERT_PTR_NOT_NULL(strstr(r[1].message, "answer too large: Content-Length 1 GiB"));
	/* an error answer (non-2xx) is held under the same cap */
	CU_ASSERT_EQUAL(kube_http_call_data(c, 500, chunk, 300000), 0);
	CU_ASSERT_EQUAL(kube_http_call_data(c, 500, chunk, 300000), 0);
	CU_ASSERT_EQUAL(kube_http_call_data(c, 500, chunk, 300000), 0);
	CU_ASSERT_EQUAL(kube_http_call_data(c, 500, chunk, 300000), -EFBIG);
	kube_http_call_done(c, -ECANCELED, 0, "Failure writing output");
	CU_ASSERT_EQUAL(r[2].error, -EFBIG);
	CU_ASSERT_EQUAL(kube_answers_refused(), refused + 3);
	settle();
	kube_http_free(h);
	free(chunk);
	kube_answer_limit_set((uint64_t)1 << 20, "set by the test");
}

static void
test_start_failures(void)
{
	struct kube_http *h = fresh();
	struct kube_config bad = {
	    .server = (char *)"https://fake.test", .token = (char *)"a\r\nHost: evil"};
	struct kube_http *hb = NULL;
	struct rec r[3];

	memset(r, 0, sizeof(r));
	/* the engine cannot start a call: reported at once, the next one still starts */
	fk.start_error = -ENOMEM;
	submit(h, &r[0], false, NULL);
	settle();
	CU_ASSERT_EQUAL(r[0].done, 1);
	CU_ASSERT_EQUAL(r[0].error, -ENOMEM);
	CU_ASSERT_STRING_EQUAL(r[0].message, "GET https://fake.test/x: cannot start transfer");
	fk.start_error = 0;
	submit(h, &r[1], false, NULL);
	settle();
	CU_ASSERT_EQUAL(fk.n_started, 1);
	kube_http_call_done(r[1].self, 0, 200, NULL);
	CU_ASSERT_EQUAL(r[1].done, 1);
	settle();
	kube_http_free(h);

	/* a token with a line break never reaches an engine */
	CU_ASSERT_EQUAL_FATAL(kube_http_new_engine(base, &bad, &fake_engine, &hb), 0);
	fk.n_started = 0;
	submit(hb, &r[2], false, NULL);
	settle();
	CU_ASSERT_EQUAL(fk.n_started, 0);
	CU_ASSERT_EQUAL(r[2].done, 1);
	CU_ASSERT_EQUAL(r[2].error, -EINVAL);
	CU_ASSERT_STRING_EQUAL(
	    r[2].message, "GET https://fake.test/x: bearer token holds a line break");
	kube_http_free(hb);
}

static void
test_free_with_calls(void)
{
	struct kube_http *h = fresh();
	struct rec r[3];

	memset(r, 0, sizeof(r));
	submit(h, &r[0], false, NULL);
	submit(h, &r[1], false, NULL);
	submit(h, &r[2], false, NULL); /* waits for a slot */
	settle();
	CU_ASSERT_EQUAL(fk.n_started, 2);
	kube_http_free(h);
	for (int i = 0; i < 3; i++) {
		CU_ASSERT_EQUAL(r[i].done, 0);
		CU_ASSERT_EQUAL(r[i].released, 1);
	}
	CU_ASSERT_EQUAL(fk.aborts, 2);
	CU_ASSERT_EQUAL(fk.frees, 1);
	settle(); /* nothing left to run */
}

static void
test_curl_errno(void)
{
	CU_ASSERT_EQUAL(kube_curl_errno(0), 0);
	CU_ASSERT_EQUAL(kube_curl_errno(28), -ETIMEDOUT);   /* OPERATION_TIMEDOUT */
	CU_ASSERT_EQUAL(kube_curl_errno(7), -ECONNREFUSED); /* COULDNT_CONNECT */
	CU_ASSERT_EQUAL(kube_curl_errno(60), -EPROTO);	    /* PEER_FAILED_VERIFICATION */
	CU_ASSERT_EQUAL(kube_curl_errno(9999), -EIO);
}

static const struct test_case tests[] = {
    {"admission: limit, streams not counted, order", test_admission_order},
    {"cancel before start, queued, in flight, twice", test_cancel_queued_and_in_flight},
    {"cancel from on_data and from another call's on_done", test_cancel_from_callbacks},
    {"total timeout on the loop; streams have none", test_timeout},
    {"answer body: kept, non-2xx stream, over the cap", test_body},
    {"answer cap: grows to it, Content-Length past it, error answers, counted", test_body_cap},
    {"start failures: engine error, token with a line break", test_start_failures},
    {"free with calls queued and in flight", test_free_with_calls},
    {"curl errors (libcurl engine)", test_curl_errno},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "kube-http-call", .init = suite_init, .cleanup = suite_cleanup, .tests = tests},
    {.name = NULL},
};
