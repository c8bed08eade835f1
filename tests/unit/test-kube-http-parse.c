/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The incremental HTTP/1.1 response parser (kube/http-parse.c): every framing, keep-alive
 * rules, interim answers, pipelined leftovers, malformed and truncated input. Every case is
 * fed whole, one byte at a time and in seeded random splits, and must give the same result.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube-internal.h"
#include "tests/runner.h"

#define S(x) x, sizeof(x) - 1
#define RANDOM_SPLITS 24

/* One answer (or error) and what parsing it must give. */
struct http_case {
	const char *name;
	const char *in;
	size_t in_len;
	bool head;	 /* answer to a HEAD */
	bool eof;	 /* the connection closes after the input: call kube_http_parse_eof */
	bool cancel;	 /* the body callback refuses the first piece */
	int err;	 /* expected negative errno from kube_http_parse, or 0 */
	size_t leftover; /* bytes after the answer that it must not use */
	int eof_ret;	 /* expected kube_http_parse_eof result (when eof) */
	long status;
	const char *body; /* expected body (NULL: not checked, error cases) */
	bool done, keep_alive;
};

struct outcome {
	ssize_t ret; /* bytes used in total, or the negative errno */
	int eof_ret;
	long status;
	bool done, keep_alive, header_done, started;
	uint64_t body_bytes;
	char *body;
	size_t body_len, body_cap;
	unsigned empty_pieces; /* body callbacks with zero bytes (must not happen) */
	bool cancel;
};

static bool
on_body(void *userdata, const char *data, size_t len)
{
	struct outcome *o = userdata;

	if (len == 0)
		o->empty_pieces++;
	if (o->cancel)
		return false;
	if (o->body_len + len > o->body_cap) {
		size_t cap = o->body_cap ? o->body_cap : 64;
		char *n;

		while (cap < o->body_len + len)
			cap *= 2;
		n = realloc(o->body, cap);
		if (!n)
			abort();
		o->body = n;
		o->body_cap = cap;
	}
	memcpy(o->body + o->body_len, data, len);
	o->body_len += len;
	return true;
}

static uint64_t
xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

enum split_mode { SPLIT_WHOLE, SPLIT_BYTE, SPLIT_RANDOM };

/*
 * Feeds c->in in pieces: the whole buffer, one byte at a time, or random sizes from seed
 * (mostly small, sometimes large). Stops at an error or once the answer is complete.
 */
static void
run_case(const struct http_case *c, enum split_mode mode, uint64_t seed, struct outcome *o)
{
	struct kube_http_parser p = {0};
	size_t off = 0, total = 0;

	memset(o, 0, sizeof(*o));
	o->cancel = c->cancel;
	o->eof_ret = 1;
	kube_http_parser_init(&p, c->head);
	while (off < c->in_len) {
		size_t n = c->in_len - off;
		ssize_t r;

		if (mode == SPLIT_BYTE) {
			n = 1;
		} else if (mode == SPLIT_RANDOM) {
			uint64_t x = xorshift(&seed);
			size_t want = x & 1 ? (size_t)(x >> 8) % 8 + 1 : (size_t)(x >> 8) % 300 + 1;

			n = want < n ? want : n;
		}
		r = kube_http_parse(&p, c->in + off, n, on_body, o);
		if (r < 0) {
			total = 0;
			o->ret = r;
			break;
		}
		if ((size_t)r > n) {
			o->ret = -ERANGE; /* used more than it was given: never equal to a case */
			break;
		}
		total += (size_t)r;
		o->ret = (ssize_t)total;
		if (kube_http_parser_done(&p))
			break;
		if ((size_t)r != n) {
			o->ret = -EPROTO; /* left bytes unused without being done */
			break;
		}
		off += n;
	}
	if (c->eof && o->ret >= 0)
		o->eof_ret = kube_http_parse_eof(&p);
	o->status = p.status;
	o->done = kube_http_parser_done(&p);
	o->keep_alive = p.keep_alive;
	o->header_done = p.header_done;
	o->started = kube_http_parser_started(&p);
	o->body_bytes = p.body_bytes;
	kube_http_parser_release(&p);
	CU_ASSERT_PTR_NULL(p.line);
}

static bool
outcome_same(const struct outcome *a, const struct outcome *b)
{
	return a->ret == b->ret && a->eof_ret == b->eof_ret && a->status == b->status &&
	       a->done == b->done && a->keep_alive == b->keep_alive &&
	       a->header_done == b->header_done && a->body_bytes == b->body_bytes &&
	       a->body_len == b->body_len &&
	       (a->body_len == 0 || memcmp(a->body, b->body, a->body_len) == 0);
}

static void
print_outcome(const char *what, const struct outcome *o)
{
	fprintf(stderr,
	    "    %s: ret %zd eof %d status %ld done %d keep_alive %d header_done %d "
	    "body_bytes %llu body %.*s\n",
	    what, o->ret, o->eof_ret, o->status, o->done, o->keep_alive, o->header_done,
	    (unsigned long long)o->body_bytes, (int)(o->body_len > 80 ? 80 : o->body_len),
	    o->body ? o->body : "");
}

/* The whole-buffer outcome against what the case expects. */
static bool
outcome_expected(const struct http_case *c, const struct outcome *o)
{
	bool ok = o->empty_pieces == 0 && o->body_bytes == o->body_len;

	if (c->err) {
		ok = ok && o->ret == c->err && !o->done;
	} else {
		ok = ok && o->ret == (ssize_t)(c->in_len - c->leftover) && o->done == c->done &&
		     o->keep_alive == c->keep_alive;
		if (c->eof)
			ok = ok && o->eof_ret == c->eof_ret;
	}
	ok = ok && o->status == c->status;
	if (c->body)
		ok = ok && o->body_len == strlen(c->body) &&
		     memcmp(o->body ? o->body : "", c->body, o->body_len) == 0;
	return ok;
}

static void
check_case(const struct http_case *c)
{
	struct outcome whole, other;
	bool ok;

	run_case(c, SPLIT_WHOLE, 0, &whole);
	ok = outcome_expected(c, &whole);
	if (!ok) {
		fprintf(stderr, "\n  case \"%s\" (whole): unexpected result\n", c->name);
		print_outcome("got", &whole);
	}
	CU_ASSERT(ok);

	for (int i = -1; i < RANDOM_SPLITS; i++) {
		uint64_t seed = 0x9e3779b97f4a7c15ull ^ ((uint64_t)(i + 2) * 0x100000001b3ull);

		run_case(c, i < 0 ? SPLIT_BYTE : SPLIT_RANDOM, seed, &other);
		ok = outcome_same(&whole, &other) && other.empty_pieces == 0;
		if (!ok) {
			fprintf(stderr, "\n  case \"%s\": %s differs from whole\n", c->name,
			    i < 0 ? "one byte at a time" : "random split");
			if (i >= 0)
				fprintf(stderr, "    seed %#llx\n", (unsigned long long)seed);
			print_outcome("whole", &whole);
			print_outcome("split", &other);
		}
		CU_ASSERT(ok);
		free(other.body);
	}
	free(whole.body);
}

static void
check_table(const struct http_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		check_case(&cases[i]);
}

#define CHECK_TABLE(t) check_table(t, sizeof(t) / sizeof((t)[0]))

/* --- framing ----------------------------------------------------------------------------- */

static const struct http_case framing_cases[] = {
    {"content-length", S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), .status = 200,
	.body = "hello", .done = true, .keep_alive = true},
    {"content-length zero", S("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), .status = 200,
	.body = "", .done = true, .keep_alive = true},
    {"content-length, other fields, mixed case, no reason",
	S("HTTP/1.1 201\r\nServer: x\r\ncOnTeNt-LeNgTh:\t3 \r\nAudit-Id: y: z\r\n\r\nabc"),
	.status = 201, .body = "abc", .done = true, .keep_alive = true},
    {"same content-length twice",
	S("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok"), .status = 200,
	.body = "ok", .done = true, .keep_alive = true},
    {"largest content-length, truncated",
	S("HTTP/1.1 200 OK\r\nContent-Length: 4611686018427387903\r\n\r\nabc"), .eof = true,
	.eof_ret = -EIO, .status = 200, .body = "abc", .keep_alive = true},
    {"bare LF line ends", S("HTTP/1.1 200 OK\nContent-Length: 2\n\nhi"), .status = 200,
	.body = "hi", .done = true, .keep_alive = true},
    {"stray empty line before the status", S("\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"),
	.status = 200, .body = "hi", .done = true, .keep_alive = true},
    {"chunked",
	S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"),
	.status = 200, .body = "hello world", .done = true, .keep_alive = true},
    {"chunked with extensions, upper-case hex and trailers",
	S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "5;name=value\r\nhello\r\nA ; a=\"b\"; c\r\n0123456789\r\n"
	  "000;last\r\nTrailer-One: x\r\nTrailer-Two: y\r\n\r\n"),
	.status = 200, .body = "hello0123456789", .done = true, .keep_alive = true},
    {"chunked with leading zeros and whitespace before the extension",
	S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0003 \t;x\r\nabc\r\n0\r\n\r\n"),
	.status = 200, .body = "abc", .done = true, .keep_alive = true},
    {"gzip, chunked",
	S("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked \r\n\r\n2\r\nzz\r\n0\r\n\r\n"),
	.status = 200, .body = "zz", .done = true, .keep_alive = true},
    {"transfer-encoding overrides content-length, connection closes after",
	S("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "2\r\nab\r\n0\r\n\r\n"),
	.status = 200, .body = "ab", .done = true, .keep_alive = false},
    {"read to close", S("HTTP/1.1 200 OK\r\nServer: x\r\n\r\nall of this until the end"),
	.eof = true, .status = 200, .body = "all of this until the end", .done = true,
	.keep_alive = false},
    {"read to close, empty body", S("HTTP/1.1 200 OK\r\n\r\n"), .eof = true, .status = 200,
	.body = "", .done = true, .keep_alive = false},
    {"read to close: transfer-encoding not ending in chunked",
	S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n5\r\nhello"), .eof = true,
	.status = 200, .body = "5\r\nhello", .done = true, .keep_alive = false},
    {"read to close, not yet closed", S("HTTP/1.1 200 OK\r\n\r\npartial"), .status = 200,
	.body = "partial", .done = false, .keep_alive = false},
};

static void
test_framing(void)
{
	CHECK_TABLE(framing_cases);
}

/* --- keep-alive -------------------------------------------------------------------------- */

static const struct http_case keep_alive_cases[] = {
    {"1.1 default", S("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx"), .status = 200, .body = "x",
	.done = true, .keep_alive = true},
    {"1.1 Connection: close",
	S("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx"), .status = 200,
	.body = "x", .done = true, .keep_alive = false},
    {"1.1 Connection list with CLOSE",
	S("HTTP/1.1 200 OK\r\nConnection: upgrade ,\tCLOSE \r\nContent-Length: 1\r\n\r\nx"),
	.status = 200, .body = "x", .done = true, .keep_alive = false},
    {"1.1 Connection: closed is not close",
	S("HTTP/1.1 200 OK\r\nConnection: closed\r\nContent-Length: 1\r\n\r\nx"), .status = 200,
	.body = "x", .done = true, .keep_alive = true},
    {"1.1 Connection: keep-alive",
	S("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n"
	  "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
	.status = 200, .body = "", .done = true, .keep_alive = true},
    {"1.0 default", S("HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx"), .status = 200, .body = "x",
	.done = true, .keep_alive = false},
    {"1.0 Connection: keep-alive",
	S("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx"), .status = 200,
	.body = "x", .done = true, .keep_alive = true},
    {"1.0 read to close", S("HTTP/1.0 200 OK\r\n\r\nbody"), .eof = true, .status = 200,
	.body = "body", .done = true, .keep_alive = false},
    {"1.1 read to close despite keep-alive",
	S("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n\r\nbody"), .eof = true, .status = 200,
	.body = "body", .done = true, .keep_alive = false},
};

static void
test_keep_alive(void)
{
	CHECK_TABLE(keep_alive_cases);
}

/* --- answers without a body, interim answers, pipelining --------------------------------- */

#define NEXT "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nnext"

static const struct http_case no_body_cases[] = {
    {"100-continue then 200",
	S("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
	.status = 200, .body = "ok", .done = true, .keep_alive = true},
    {"two interim answers with fields, then a chunked 201",
	S("HTTP/1.1 100 Continue\r\nContent-Length: 99\r\n\r\n"
	  "HTTP/1.1 102 Processing\r\nX-Progress: 1\r\n\r\n"
	  "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nnew\r\n0\r\n\r\n"),
	.status = 201, .body = "new", .done = true, .keep_alive = true},
    {"100-continue only, then closed", S("HTTP/1.1 100 Continue\r\n\r\n"), .eof = true,
	.eof_ret = -EIO, .status = 0, .body = "", .done = false, .keep_alive = false},
    {"204 with a content-length", S("HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n"),
	.status = 204, .body = "", .done = true, .keep_alive = true},
    {"304 with chunked", S("HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n"),
	.status = 304, .body = "", .done = true, .keep_alive = true},
    {"HEAD with a content-length", S("HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n"),
	.head = true, .status = 200, .body = "", .done = true, .keep_alive = true},
    {"HEAD without framing keeps the connection", S("HTTP/1.1 404 Not Found\r\n\r\n"), .head = true,
	.status = 404, .body = "", .done = true, .keep_alive = true},
    {"HEAD after 100-continue",
	S("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"),
	.head = true, .status = 200, .body = "", .done = true, .keep_alive = true},
    /* pipelined leftovers: the return value stops at the end of the first answer */
    {"content-length then another answer",
	S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello" NEXT), .leftover = sizeof(NEXT) - 1,
	.status = 200, .body = "hello", .done = true, .keep_alive = true},
    {"chunked then another answer",
	S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	  "1\r\nx\r\n0\r\nT: 1\r\n\r\n" NEXT),
	.leftover = sizeof(NEXT) - 1, .status = 200, .body = "x", .done = true, .keep_alive = true},
    {"204 then another answer", S("HTTP/1.1 204 No Content\r\n\r\n" NEXT),
	.leftover = sizeof(NEXT) - 1, .status = 204, .body = "", .done = true, .keep_alive = true},
    {"HEAD then another answer", S("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n" NEXT),
	.head = true, .leftover = sizeof(NEXT) - 1, .status = 200, .body = "", .done = true,
	.keep_alive = true},
    {"content-length zero then garbage", S("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n\0xyz"),
	.leftover = 4, .status = 200, .body = "", .done = true, .keep_alive = true},
};

static void
test_no_body(void)
{
	CHECK_TABLE(no_body_cases);
}

/* Parses every answer of a pipelined buffer in turn, re-initialising on the leftover. */
static void
test_pipeline_sequence(void)
{
	static const char in[] =
	    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\none"
	    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;e\r\ntwo\r\n0\r\nX: y\r\n\r\n"
	    "HTTP/1.1 404 Not Found\r\nContent-Length: 5\r\n\r\nthree"
	    "HTTP/1.1 500 Oops\r\nConnection: close\r\n\r\nfour, to the end";
	static const long statuses[] = {200, 204, 200, 404, 500};
	static const char *const bodies[] = {"one", "", "two", "three", "four, to the end"};
	static const bool keep_alive[] = {true, true, true, true, false};
	struct kube_http_parser p = {0};
	size_t off = 0, len = sizeof(in) - 1;

	for (size_t i = 0; i < 5; i++) {
		struct outcome o = {0};
		ssize_t r;

		kube_http_parser_init(&p, false);
		CU_ASSERT_FALSE(kube_http_parser_started(&p));
		r = kube_http_parse(&p, in + off, len - off, on_body, &o);
		CU_ASSERT_FATAL(r > 0);
		off += (size_t)r;
		if (i == 4) {
			CU_ASSERT_EQUAL(off, len);
			CU_ASSERT_FALSE(kube_http_parser_done(&p));
			CU_ASSERT_EQUAL(kube_http_parse_eof(&p), 0);
		}
		CU_ASSERT(kube_http_parser_done(&p));
		CU_ASSERT_EQUAL(p.status, statuses[i]);
		CU_ASSERT_EQUAL(p.keep_alive, keep_alive[i]);
		CU_ASSERT_EQUAL(o.body_len, strlen(bodies[i]));
		CU_ASSERT_EQUAL(p.body_bytes, o.body_len);
		CU_ASSERT(o.body_len == 0 || memcmp(o.body, bodies[i], o.body_len) == 0);
		/* a finished answer takes no more bytes */
		CU_ASSERT_EQUAL(kube_http_parse(&p, "HTTP", 4, on_body, &o), 0);
		free(o.body);
	}
	kube_http_parser_release(&p);
}

/* --- body callback, started -------------------------------------------------------------- */

static const struct http_case cancel_cases[] = {
    {"content-length", S("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), .cancel = true,
	.err = -ECANCELED, .status = 200, .body = ""},
    {"chunked", S("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"),
	.cancel = true, .err = -ECANCELED, .status = 200, .body = ""},
    {"read to close", S("HTTP/1.1 200 OK\r\n\r\nhello"), .cancel = true, .eof = true,
	.err = -ECANCELED, .status = 200, .body = ""},
    {"no body, not called", S("HTTP/1.1 204 No Content\r\n\r\n"), .cancel = true, .status = 204,
	.body = "", .done = true, .keep_alive = true},
};

static void
test_body_cancel(void)
{
	CHECK_TABLE(cancel_cases);
}

static void
test_started(void)
{
	struct kube_http_parser p = {0};

	kube_http_parser_init(&p, false);
	CU_ASSERT_FALSE(kube_http_parser_started(&p));
	CU_ASSERT_EQUAL(kube_http_parse(&p, "H", 1, NULL, NULL), 1);
	CU_ASSERT(kube_http_parser_started(&p));

	/* an interim answer is part of the answer: the request reached the server */
	kube_http_parser_init(&p, false);
	CU_ASSERT_EQUAL(kube_http_parse(&p, S("HTTP/1.1 100 Continue\r\n\r\n"), NULL, NULL), 25);
	CU_ASSERT(kube_http_parser_started(&p));
	CU_ASSERT_FALSE(kube_http_parser_done(&p));
	CU_ASSERT_EQUAL(kube_http_parse_eof(&p), -EIO);

	/* so is a stray line end before the status line */
	kube_http_parser_init(&p, false);
	CU_ASSERT_EQUAL(kube_http_parse(&p, S("\r\n"), NULL, NULL), 2);
	CU_ASSERT(kube_http_parser_started(&p));

	/* a NULL body callback: bytes are counted */
	kube_http_parser_init(&p, false);
	CU_ASSERT_EQUAL(
	    kube_http_parse(&p, S("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabcd"), NULL, NULL),
	    41);
	CU_ASSERT(kube_http_parser_done(&p));
	CU_ASSERT_EQUAL(p.body_bytes, 3);
	kube_http_parser_release(&p);
	kube_http_parser_release(&p); /* twice is harmless */
}

/* --- malformed ---------------------------------------------------------------------------- */

#define OK200 "HTTP/1.1 200 OK\r\n"
#define CHUNKED OK200 "Transfer-Encoding: chunked\r\n\r\n"

static const struct http_case malformed_cases[] = {
    {"status: HTTP/2", S("HTTP/2 200 OK\r\n\r\n"), .err = -EBADMSG},
    {"status: HTTP/1.2", S("HTTP/1.2 200 OK\r\n\r\n"), .err = -EBADMSG},
    {"status: lower-case http", S("http/1.1 200 OK\r\n\r\n"), .err = -EBADMSG},
    {"status: two digits", S("HTTP/1.1 20 OK\r\n\r\n"), .err = -EBADMSG},
    {"status: four digits", S("HTTP/1.1 2000 OK\r\n\r\n"), .err = -EBADMSG},
    {"status: no space before the reason", S("HTTP/1.1 200OK\r\n\r\n"), .err = -EBADMSG},
    {"status: below 100", S("HTTP/1.1 099 Low\r\n\r\n"), .err = -EBADMSG},
    {"status: letters", S("HTTP/1.1 2x0 OK\r\n\r\n"), .err = -EBADMSG},
    {"status: two spaces", S("HTTP/1.1  200 OK\r\n\r\n"), .err = -EBADMSG},
    {"status: not HTTP", S("SSH-2.0-OpenSSH_9.2\r\n"), .err = -EBADMSG},
    {"status: too many empty lines first", S("\r\n\r\n\r\n\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"),
	.err = -EBADMSG},
    {"status: empty after an interim answer",
	S("HTTP/1.1 100 Continue\r\n\r\n\r\nHTTP/1.1 200 OK\r\n\r\n"), .err = -EBADMSG},
    {"header without colon", S(OK200 "Content-Length 5\r\n\r\nhello"), .err = -EBADMSG,
	.status = 200},
    {"header with an empty name", S(OK200 ": x\r\n\r\n"), .err = -EBADMSG, .status = 200},
    {"whitespace before colon", S(OK200 "Content-Length : 5\r\n\r\nhello"), .err = -EBADMSG,
	.status = 200},
    {"tab before colon", S(OK200 "Server\t: x\r\n\r\n"), .err = -EBADMSG, .status = 200},
    {"obs-fold", S(OK200 "Server: a\r\n  b\r\nContent-Length: 0\r\n\r\n"), .err = -EBADMSG,
	.status = 200},
    {"obs-fold with tab", S(OK200 "Server: a\r\n\tb\r\n\r\n"), .err = -EBADMSG, .status = 200},
    {"two different content-lengths",
	S(OK200 "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"), .err = -EBADMSG,
	.status = 200},
    {"content-length list", S(OK200 "Content-Length: 5, 5\r\n\r\nhello"), .err = -EBADMSG,
	.status = 200},
    {"content-length negative", S(OK200 "Content-Length: -1\r\n\r\n"), .err = -EBADMSG,
	.status = 200},
    {"content-length plus sign", S(OK200 "Content-Length: +1\r\n\r\nx"), .err = -EBADMSG,
	.status = 200},
    {"content-length empty", S(OK200 "Content-Length:\r\n\r\n"), .err = -EBADMSG, .status = 200},
    {"content-length hex", S(OK200 "Content-Length: 0x10\r\n\r\n"), .err = -EBADMSG, .status = 200},
    {"content-length 2^62", S(OK200 "Content-Length: 4611686018427387904\r\n\r\n"), .err = -EBADMSG,
	.status = 200},
    {"content-length wrapping to 4 in 64 bits",
	S(OK200 "Content-Length: 18446744073709551620\r\n\r\nabcd"), .err = -EBADMSG,
	.status = 200},
    {"content-length of 25 digits", S(OK200 "Content-Length: 1000000000000000000000000\r\n\r\n"),
	.err = -EBADMSG, .status = 200},
    {"chunk size not hex", S(CHUNKED "zz\r\nhello\r\n0\r\n\r\n"), .err = -EBADMSG, .status = 200,
	.body = ""},
    {"chunk size 0x", S(CHUNKED "0x5\r\nhello\r\n0\r\n\r\n"), .err = -EBADMSG, .status = 200,
	.body = ""},
    {"chunk size empty", S(CHUNKED "\r\nhello\r\n0\r\n\r\n"), .err = -EBADMSG, .status = 200,
	.body = ""},
    {"chunk size with leading space", S(CHUNKED " 5\r\nhello\r\n0\r\n\r\n"), .err = -EBADMSG,
	.status = 200, .body = ""},
    {"chunk size with junk after", S(CHUNKED "5 x\r\nhello\r\n0\r\n\r\n"), .err = -EBADMSG,
	.status = 200, .body = ""},
    {"chunk size negative", S(CHUNKED "-5\r\nhello\r\n0\r\n\r\n"), .err = -EBADMSG, .status = 200,
	.body = ""},
    {"chunk size 2^62", S(CHUNKED "4000000000000000\r\nhello\r\n"), .err = -EBADMSG, .status = 200,
	.body = ""},
    {"chunk size wrapping to 0 in 64 bits", S(CHUNKED "10000000000000000\r\n\r\n" NEXT),
	.err = -EBADMSG, .status = 200, .body = ""},
    {"chunk data longer than its size", S(CHUNKED "5\r\nhelloXX\r\n0\r\n\r\n"), .err = -EBADMSG,
	.status = 200, .body = "hello"},
    {"chunk data followed by another chunk line", S(CHUNKED "5\r\nhello0\r\n\r\n"), .err = -EBADMSG,
	.status = 200, .body = "hello"},
    {"NUL in the status line", S("HTTP/1.1 200 O\0K\r\n\r\n"), .err = -EBADMSG},
    {"NUL in a header line", S(OK200 "Server: a\0b\r\nContent-Length: 0\r\n\r\n"), .err = -EBADMSG,
	.status = 200},
    {"NUL in a chunk-size line", S(CHUNKED "5;\0\r\nhello\r\n0\r\n\r\n"), .err = -EBADMSG,
	.status = 200, .body = ""},
    {"NUL in a trailer", S(CHUNKED "0\r\nX: \0\r\n\r\n"), .err = -EBADMSG, .status = 200,
	.body = ""},
    {"bare CR in a header line", S(OK200 "Server: a\rb\r\nContent-Length: 0\r\n\r\n"),
	.err = -EBADMSG, .status = 200},
    {"NUL in the body is data", S(OK200 "Content-Length: 3\r\n\r\na\0b"), .status = 200,
	.done = true, .keep_alive = true},
};

static void
test_malformed(void)
{
	CHECK_TABLE(malformed_cases);
}

/* Builds "prefix" + n copies of fill + "suffix" into a new buffer (the caller frees it). */
static char *
build(const char *prefix, const char *fill, size_t n, const char *suffix, size_t *len)
{
	size_t pl = strlen(prefix), fl = strlen(fill), sl = strlen(suffix);
	char *b = malloc(pl + n * fl + sl + 1);

	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	memcpy(b, prefix, pl);
	for (size_t i = 0; i < n; i++)
		memcpy(b + pl + i * fl, fill, fl);
	memcpy(b + pl + n * fl, suffix, sl + 1);
	*len = pl + n * fl + sl;
	return b;
}

static void
check_built(struct http_case *c, const char *prefix, const char *fill, size_t n, const char *suffix)
{
	char *in = build(prefix, fill, n, suffix, &c->in_len);

	c->in = in;
	check_case(c);
	free(in);
}

static void
test_bounds(void)
{
	/* one header line over 64 KiB */
	check_built(
	    &(struct http_case){.name = "one long header line", .err = -EBADMSG, .status = 200},
	    OK200 "X-Big: ", "a", 70000, "\r\nContent-Length: 0\r\n\r\n");
	/* many short lines over 64 KiB in all */
	check_built(
	    &(struct http_case){.name = "many header lines", .err = -EBADMSG, .status = 200}, OK200,
	    "X-Field: 0123456789012345678901234567890123456789\r\n", 1400,
	    "Content-Length: 0\r\n\r\n");
	/* a status line over 64 KiB */
	check_built(&(struct http_case){.name = "long status line", .err = -EBADMSG},
	    "HTTP/1.1 200 ", "r", 66000, "\r\n\r\n");
	/* trailers count toward the header bound */
	check_built(
	    &(struct http_case){
		.name = "long trailers", .err = -EBADMSG, .status = 200, .body = ""},
	    CHUNKED "0\r\n", "T: 01234567890123456789\r\n", 3000, "\r\n");
	/* just under: 60 KiB of header is fine */
	check_built(&(struct http_case){.name = "header under the bound",
			.status = 200,
			.body = "ok",
			.done = true,
			.keep_alive = true},
	    OK200, "X-Field: 0123456789012345678901234567890123456789\r\n", 1200,
	    "Content-Length: 2\r\n\r\nok");
	/* chunk-size line over 1 KiB (a long extension) */
	check_built(
	    &(struct http_case){
		.name = "long chunk line", .err = -EBADMSG, .status = 200, .body = ""},
	    CHUNKED "5;ext=", "x", 2000, "\r\nhello\r\n0\r\n\r\n");
	/* a chunk-size line of 900 bytes is fine */
	check_built(&(struct http_case){.name = "chunk line under the bound",
			.status = 200,
			.body = "hello",
			.done = true,
			.keep_alive = true},
	    CHUNKED "5;ext=", "x", 900, "\r\nhello\r\n0\r\n\r\n");
	/* junk after chunk data, no line end: bounded too */
	check_built(&(struct http_case){.name = "chunk data then 2 KiB of junk",
			.err = -EBADMSG,
			.status = 200,
			.body = "hello"},
	    CHUNKED "5\r\nhello", "y", 2000, "");
	/* a body of 200 KiB is not bounded */
	check_built(&(struct http_case){.name = "large body",
			.status = 200,
			.body = NULL,
			.done = true,
			.keep_alive = true},
	    OK200 "Content-Length: 204800\r\n\r\n", "0123456789abcdef", 12800, "");
}

/* --- truncated ---------------------------------------------------------------------------- */

static const struct http_case truncated_cases[] = {
    {"nothing", "", 0, .eof = true, .eof_ret = -EIO, .body = "", .keep_alive = false},
    {"in the status line", S("HTTP/1.1 20"), .eof = true, .eof_ret = -EIO, .body = ""},
    {"in the header", S(OK200 "Content-Length: 5\r\n"), .eof = true, .eof_ret = -EIO, .status = 200,
	.body = "", .keep_alive = true},
    {"in a content-length body", S(OK200 "Content-Length: 10\r\n\r\nhello"), .eof = true,
	.eof_ret = -EIO, .status = 200, .body = "hello", .keep_alive = true},
    {"in a chunk", S(CHUNKED "a\r\nhello"), .eof = true, .eof_ret = -EIO, .status = 200,
	.body = "hello", .keep_alive = true},
    {"after a chunk's data", S(CHUNKED "5\r\nhello"), .eof = true, .eof_ret = -EIO, .status = 200,
	.body = "hello", .keep_alive = true},
    {"before the last chunk", S(CHUNKED "5\r\nhello\r\n"), .eof = true, .eof_ret = -EIO,
	.status = 200, .body = "hello", .keep_alive = true},
    {"in the trailer", S(CHUNKED "5\r\nhello\r\n0\r\nX: y\r\n"), .eof = true, .eof_ret = -EIO,
	.status = 200, .body = "hello", .keep_alive = true},
    {"before the trailer's end", S(CHUNKED "0\r\n"), .eof = true, .eof_ret = -EIO, .status = 200,
	.body = "", .keep_alive = true},
};

static void
test_truncated(void)
{
	CHECK_TABLE(truncated_cases);
}

static const struct test_case parse_tests[] = {
    {"framing", test_framing},
    {"keep-alive", test_keep_alive},
    {"no body, interim, pipelined", test_no_body},
    {"pipelined sequence", test_pipeline_sequence},
    {"body callback cancels", test_body_cancel},
    {"started", test_started},
    {"malformed", test_malformed},
    {"bounds", test_bounds},
    {"truncated", test_truncated},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "kube-http-parse", .tests = parse_tests},
    {.name = NULL},
};
