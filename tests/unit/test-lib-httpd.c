/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/httpd.c: the replies the kubelet and Prometheus get (Connection: close, HTTP/1.0,
 * keep-alive pipelining, a reply larger than the socket buffers), and the endpoint under
 * abuse: header and body limits, slow and idle clients, the connection limit, accept()
 * failing with EMFILE. Everything is driven by events on the loop; a wait for an event is
 * bounded (generously) only so that a regression fails instead of hanging.
 *
 * Size: about 900 lines, one file on purpose: one server's cases sharing the event-driven
 * client fixtures.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "lib/clock.h"
#include "lib/httpd.h"
#include "lib/log.h"
#include "lib/util.h"
#include "tests/runner.h"

#define WAIT_USEC (20 * USEC_PER_SEC) /* bound on any wait for an event */

struct fixture {
	struct event_base *base;
	struct event *tick; /* wakes EVLOOP_ONCE so that predicates are re-checked */
	struct httpd *h;
};

struct client {
	int fd;
	char buf[4096]; /* the first bytes received */
	size_t len;
	size_t total; /* bytes received, kept or not */
	bool closed;  /* EOF or reset seen */
	bool eof;     /* an orderly close (FIN), not a reset */
};

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

static void
fixture_init(struct fixture *f)
{
	struct timeval tv = {.tv_sec = 0, .tv_usec = 5000};

	memset(f, 0, sizeof(*f));
	f->base = event_base_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->base);
	f->tick = event_new(f->base, -1, EV_PERSIST, tick_cb, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->tick);
	event_add(f->tick, &tv);
	CU_ASSERT_EQUAL_FATAL(httpd_new(f->base, "127.0.0.1:0", NULL, &f->h), 0);
}

static void
fixture_done(struct fixture *f)
{
	httpd_free(f->h);
	event_free(f->tick);
	event_base_free(f->base);
}

static int
client_connect(const struct fixture *f, struct client *c)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};

	memset(c, 0, sizeof(*c));
	sin.sin_port = htons((uint16_t)httpd_port(f->h));
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	/* a loopback connect completes in the kernel, whether or not the server accepts */
	if (connect(c->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		int r = -errno;
		close(c->fd);
		c->fd = -1;
		return r;
	}
	fcntl(c->fd, F_SETFL, fcntl(c->fd, F_GETFL) | O_NONBLOCK);
	return 0;
}

static void
client_close(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* Reads what has arrived; notes EOF and resets. */
static void
client_poll(struct client *c)
{
	char junk[4096];

	while (!c->closed) {
		char *p = c->len < sizeof(c->buf) - 1 ? c->buf + c->len : junk;
		size_t room =
		    c->len < sizeof(c->buf) - 1 ? sizeof(c->buf) - 1 - c->len : sizeof(junk);
		ssize_t n = recv(c->fd, p, room, MSG_DONTWAIT);
		if (n > 0) {
			c->total += (size_t)n;
			if (p != junk) {
				c->len += (size_t)n;
				c->buf[c->len] = '\0';
			}
		} else if (n == 0) {
			c->closed = c->eof = true;
		} else if (errno != EAGAIN && errno != EINTR) {
			c->closed = true;
		} else {
			break;
		}
	}
}

static bool
client_send(struct client *c, const char *s)
{
	size_t len = strlen(s);

	return send(c->fd, s, len, MSG_NOSIGNAL) == (ssize_t)len;
}

static bool
client_has_response(struct client *c)
{
	client_poll(c);
	return strstr(c->buf, "\r\n\r\n") != NULL;
}

/* Runs the loop until done(arg); false if that did not happen within WAIT_USEC. */
static bool
run_until(struct fixture *f, bool (*done)(void *), void *arg)
{
	uint64_t give_up = clock_now_usec() + WAIT_USEC;

	while (!done(arg)) {
		if (clock_now_usec() > give_up)
			return false;
		event_base_loop(f->base, EVLOOP_ONCE);
	}
	return true;
}

static bool
done_response(void *arg)
{
	return client_has_response(arg);
}

static bool
done_closed(void *arg)
{
	struct client *c = arg;

	client_poll(c);
	return c->closed;
}

struct received {
	struct client *c;
	size_t want;
};

/* want bytes received, or more, or the end */
static bool
done_received(void *arg)
{
	struct received *w = arg;

	client_poll(w->c);
	return w->c->total >= w->want || w->c->closed;
}

static bool
done_no_connections(void *arg)
{
	return httpd_connections(arg) == 0;
}

static const char get_healthz[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";

/* A reply as the server sent it: status line and headers, then Content-Length bytes. */
struct reply {
	int status;
	const char *headers; /* from the status line through the blank line */
	size_t headers_len;
	const char *body;
	size_t body_len;
};

/*
 * Parses the reply at p (NUL-terminated); false unless it is complete. *next: after it.
 * Without a Content-Length the body runs to the connection's end: pass eof when seen.
 */
static bool
parse_reply_eof(const char *p, bool eof, struct reply *r, const char **next)
{
	static const char cl_name[] = "\r\nContent-Length: ";
	const char *end = strstr(p, "\r\n\r\n"), *cl;
	unsigned long len;

	memset(r, 0, sizeof(*r));
	if (end == NULL || sscanf(p, "HTTP/1.%*d %d ", &r->status) != 1)
		return false;
	r->headers = p;
	r->headers_len = (size_t)(end - p) + 4;
	r->body = end + 4;
	cl = memmem(p, r->headers_len, cl_name, sizeof(cl_name) - 1);
	if (cl == NULL && eof)
		len = strlen(r->body);
	else if (cl == NULL || sscanf(cl + sizeof(cl_name) - 1, "%lu", &len) != 1)
		return false;
	if (strlen(r->body) < len)
		return false;
	r->body_len = len;
	if (next != NULL)
		*next = r->body + len;
	return true;
}

static bool
parse_reply(const char *p, struct reply *r, const char **next)
{
	return parse_reply_eof(p, false, r, next);
}

static bool
reply_has_header(const struct reply *r, const char *line)
{
	char want[128];
	int n = snprintf(want, sizeof(want), "\r\n%s\r\n", line);

	return n > 0 && (size_t)n < sizeof(want) &&
	       memmem(r->headers, r->headers_len, want, (size_t)n) != NULL;
}

static bool
reply_body_is(const struct reply *r, const char *body)
{
	return r->body_len == strlen(body) && memcmp(r->body, body, r->body_len) == 0;
}

/*
 * Sends request on a new connection; the server must answer status and body (NULL: any) in
 * full and then close the connection in order (FIN, not a reset), with nothing after the
 * reply.
 */
static void
expect_reply_then_eof(struct fixture *f, const char *request, int status, const char *body)
{
	struct client c;
	struct reply r;
	const char *next = NULL;

	CU_ASSERT_EQUAL_FATAL(client_connect(f, &c), 0);
	CU_ASSERT_TRUE(client_send(&c, request));
	CU_ASSERT_TRUE(run_until(f, done_closed, &c));
	CU_ASSERT_TRUE(c.eof);
	CU_ASSERT_TRUE(parse_reply_eof(c.buf, c.eof, &r, &next));
	CU_ASSERT_EQUAL(r.status, status);
	CU_ASSERT_TRUE(body == NULL || reply_body_is(&r, body));
	CU_ASSERT_TRUE(r.body_len > 0 || (body != NULL && *body == '\0'));
	CU_ASSERT_TRUE(next != NULL && *next == '\0');
	if (r.status != status || !c.eof)
		fprintf(stderr, "request:\n%sgot %zu bytes%s:\n%s\n", request, c.total,
		    c.eof ? " then EOF" : "", c.buf);
	client_close(&c);
}

/*
 * "Connection: close": the reply, whole, then EOF. (Behind 70e5034's pass-through filter the
 * connection was freed once the reply had moved into the filter's socket bufferevent, before
 * that one had written it: the client got EOF and no byte.)
 */
static void
test_connection_close(void)
{
	struct fixture f;
	struct client c;
	struct reply r;

	fixture_init(&f);
	expect_reply_then_eof(
	    &f, "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", 200, "ok\n");
	expect_reply_then_eof(
	    &f, "GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", 200, "");
	/* an error page too: it is sent with "Connection: close" whatever the request said */
	expect_reply_then_eof(
	    &f, "GET /nothing HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n", 404, NULL);

	/* the reply says so */
	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &c), 0);
	CU_ASSERT_TRUE(client_send(&c, "GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n"));
	CU_ASSERT_TRUE(run_until(&f, done_closed, &c));
	CU_ASSERT_TRUE(parse_reply(c.buf, &r, NULL) && reply_has_header(&r, "Connection: close"));
	client_close(&c);
	CU_ASSERT_TRUE(run_until(&f, done_no_connections, f.h));
	fixture_done(&f);
}

/* HTTP/1.0 without keep-alive closes after the reply: the reply whole, then EOF. */
static void
test_http10(void)
{
	struct fixture f;

	fixture_init(&f);
	expect_reply_then_eof(&f, "GET /healthz HTTP/1.0\r\n\r\n", 200, "ok\n");
	expect_reply_then_eof(&f, "GET /readyz HTTP/1.0\r\nUser-Agent: t\r\n\r\n", 200, "ok\n");
	CU_ASSERT_TRUE(run_until(&f, done_no_connections, f.h));
	fixture_done(&f);
}

struct pipelined {
	struct client *c;
	unsigned want;
};

static bool
done_pipelined(void *arg)
{
	struct pipelined *p = arg;
	const char *at;
	struct reply r;
	unsigned n = 0;

	client_poll(p->c);
	for (at = p->c->buf; n < p->want && parse_reply(at, &r, &at); n++)
		;
	return n == p->want || p->c->closed;
}

/* Two keep-alive requests in one segment: two replies, in order; the connection stays open. */
static void
test_pipelined_keepalive(void)
{
	struct fixture f;
	struct client c;
	struct reply r1, r2, r3;
	const char *at;

	fixture_init(&f);
	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &c), 0);
	CU_ASSERT_TRUE(client_send(&c,
	    "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\nGET /metrics HTTP/1.1\r\nHost: t\r\n\r\n"));
	struct pipelined p = {.c = &c, .want = 2};
	CU_ASSERT_TRUE(run_until(&f, done_pipelined, &p));
	CU_ASSERT_TRUE_FATAL(parse_reply(c.buf, &r1, &at));
	CU_ASSERT_TRUE_FATAL(parse_reply(at, &r2, &at));
	CU_ASSERT_EQUAL(r1.status, 200);
	CU_ASSERT_TRUE(reply_body_is(&r1, "ok\n"));
	CU_ASSERT_EQUAL(r2.status, 200);
	CU_ASSERT_TRUE(reply_body_is(&r2, ""));
	CU_ASSERT_FALSE(reply_has_header(&r2, "Connection: close"));
	CU_ASSERT_EQUAL(*at, '\0');
	CU_ASSERT_FALSE(c.closed);

	/* still served: a third request on the same connection */
	c.len = 0;
	c.buf[0] = '\0';
	CU_ASSERT_TRUE(client_send(&c, get_healthz));
	p.want = 1;
	CU_ASSERT_TRUE(run_until(&f, done_pipelined, &p));
	CU_ASSERT_TRUE(parse_reply(c.buf, &r3, NULL) && r3.status == 200);
	CU_ASSERT_FALSE(c.closed);
	CU_ASSERT_EQUAL(httpd_connections(f.h), 1u);
	client_close(&c);
	CU_ASSERT_TRUE(run_until(&f, done_no_connections, f.h));
	fixture_done(&f);
}

static bool
probe_ready(void *userdata, char *reason, size_t reason_len)
{
	const bool *ready = userdata;

	if (!*ready)
		snprintf(reason, reason_len, "informers not synced");
	return *ready;
}

/*
 * A kubelet HTTP probe, byte for byte as Kubernetes 1.20 sends it (Go's net/http with
 * DisableKeepAlives, hence "Connection: close"; the transport adds Accept-Encoding). The
 * kubelet reads status and body; an empty reply is a failed probe (and a restarted pod).
 */
static void
test_kube_probe(void)
{
	static const char probe[] = "GET /readyz HTTP/1.1\r\n"
				    "Host: 10.52.0.7:8080\r\n"
				    "User-Agent: kube-probe/1.20\r\n"
				    "Accept: */*\r\n"
				    "Connection: close\r\n"
				    "Accept-Encoding: gzip\r\n"
				    "\r\n";
	struct fixture f;
	bool ready = false;

	fixture_init(&f);
	httpd_set_ready(f.h, probe_ready, &ready);
	expect_reply_then_eof(&f, probe, 503, "informers not synced\n");
	ready = true;
	expect_reply_then_eof(&f, probe, 200, "ok\n");
	CU_ASSERT_TRUE(run_until(&f, done_no_connections, f.h));
	fixture_done(&f);
}

static void
big_cb(struct evhttp_request *req, void *arg)
{
	const size_t *size = arg;
	struct evbuffer *b = evbuffer_new();
	char chunk[65536];

	memset(chunk, 'b', sizeof(chunk));
	for (size_t n = 0; b != NULL && n < *size; n += sizeof(chunk))
		evbuffer_add(b, chunk, MIN(sizeof(chunk), *size - n));
	evhttp_send_reply(req, 200, "OK", b);
	if (b != NULL)
		evbuffer_free(b);
}

/*
 * A reply larger than the kernel takes at once (the server's send buffer at its largest plus
 * the client's fixed receive buffer), with Connection: close: every byte arrives, then EOF.
 */
static void
test_large_reply_then_close(void)
{
	struct fixture f;
	struct client c;
	struct reply r;
	unsigned long wmem_min, wmem_def, wmem_max = 4u << 20;
	int rcvbuf = 256 * 1024;
	char want[64];
	FILE *fp;

	fp = fopen("/proc/sys/net/ipv4/tcp_wmem", "r");
	if (fp != NULL) {
		if (fscanf(fp, "%lu %lu %lu", &wmem_min, &wmem_def, &wmem_max) != 3)
			wmem_max = 4u << 20;
		fclose(fp);
	}
	size_t size = wmem_max + 2 * (size_t)rcvbuf + (4u << 20);

	fixture_init(&f);
	CU_ASSERT_EQUAL_FATAL(httpd_add_handler(f.h, "/big", big_cb, &size), 0);
	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &c), 0);
	/* fixed (the kernel doubles it): no receive-buffer autotuning */
	CU_ASSERT_EQUAL(setsockopt(c.fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
	CU_ASSERT_TRUE(
	    client_send(&c, "GET /big HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"));
	CU_ASSERT_TRUE(run_until(&f, done_closed, &c));
	CU_ASSERT_TRUE(c.eof);
	/* buf keeps the first bytes only: the headers, and the body's start */
	const char *end = strstr(c.buf, "\r\n\r\n");
	CU_ASSERT_PTR_NOT_NULL_FATAL(end);
	size_t headers_len = (size_t)(end - c.buf) + 4;
	CU_ASSERT_EQUAL(c.total, headers_len + size);
	CU_ASSERT_EQUAL(strncmp(c.buf, "HTTP/1.1 200 ", 13), 0);
	memset(&r, 0, sizeof(r));
	r.headers = c.buf;
	r.headers_len = headers_len;
	snprintf(want, sizeof(want), "Content-Length: %zu", size);
	CU_ASSERT_TRUE(reply_has_header(&r, want));
	client_close(&c);
	CU_ASSERT_TRUE(run_until(&f, done_no_connections, f.h));
	fixture_done(&f);
}

static void
test_serves_get_and_head(void)
{
	struct fixture f;
	struct client c;

	fixture_init(&f);
	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &c), 0);
	CU_ASSERT_TRUE(client_send(&c, get_healthz));
	CU_ASSERT_TRUE(run_until(&f, done_response, &c));
	CU_ASSERT_PTR_NOT_NULL(strstr(c.buf, "HTTP/1.1 200"));
	client_close(&c);

	/* a body over HTTPD_MAX_BODY_SIZE is refused, not read: 413, then EOF */
	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &c), 0);
	CU_ASSERT_TRUE(
	    client_send(&c, "GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n"));
	CU_ASSERT_TRUE(run_until(&f, done_closed, &c));
	CU_ASSERT_EQUAL(strncmp(c.buf, "HTTP/1.1 413 ", 13), 0);
	CU_ASSERT_TRUE(c.eof);
	client_close(&c);
	CU_ASSERT_TRUE(run_until(&f, done_no_connections, f.h));
	fixture_done(&f);
}

static size_t
heap_in_use(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/*
 * start, then 1 MiB more of header lines (lines) or of one line that never ends: the server
 * answers 4xx or closes once the headers pass HTTPD_MAX_HEADERS_SIZE, long before the client
 * is done, and its heap does not grow by the amount sent. (Under ASan or valgrind,
 * mallinfo2() does not see their allocator, and the heap assertion is void; the early close
 * is the check there.)
 */
static void
stream_header(const char *start, bool lines)
{
	const size_t total = 1024 * 1024;
	char line[1024];
	struct fixture f;
	struct client c;
	size_t sent = 0, heap_before, heap_max = 0;
	unsigned n = 0;

	fixture_init(&f);
	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &c), 0);
	CU_ASSERT_TRUE(client_send(&c, start));
	event_base_loop(f.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	heap_before = heap_in_use();
	memset(line, 'a', sizeof(line));
	while (sent < total && !c.closed) {
		int len = (int)sizeof(line);

		if (lines)
			len = snprintf(line, sizeof(line), "X-Pad-%06u: %0*u\r\n", n++, 1000, 0u);
		ssize_t w = send(c.fd, line, (size_t)len, MSG_NOSIGNAL);
		if (w > 0)
			sent += (size_t)w; /* a short write leaves a broken line: fine here */
		else if (errno != EAGAIN && errno != EINTR)
			break; /* EPIPE or ECONNRESET: closed by the server */
		event_base_loop(f.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		size_t heap = heap_in_use();
		if (heap > heap_max)
			heap_max = heap;
		client_poll(&c);
	}
	CU_ASSERT_TRUE(sent < total);
	CU_ASSERT_TRUE(sent < 16u * HTTPD_MAX_HEADERS_SIZE);
	if (heap_max > heap_before)
		CU_ASSERT_TRUE(heap_max - heap_before < 256u * 1024);
	/* whatever came back is not a 200 */
	CU_ASSERT_TRUE(run_until(&f, done_closed, &c));
	CU_ASSERT_PTR_NULL(strstr(c.buf, " 200 "));
	client_close(&c);
	CU_ASSERT_TRUE(run_until(&f, done_no_connections, f.h));
	fixture_done(&f);
}

static void
test_header_limit(void)
{
	stream_header("GET /healthz HTTP/1.1\r\nHost: t\r\n", true);
}

/* one header line without end: evhttp checks the buffered length, not only whole lines */
static void
test_header_limit_one_line(void)
{
	stream_header("GET /healthz HTTP/1.1\r\nHost: t\r\nX-Long: ", false);
	stream_header("GET /", false); /* the request line */
}

/*
 * A client that pipelines requests and reads no reply. Once its socket is full of replies,
 * evhttp still reads (to see a close) while it waits to write: the server stops at
 * HTTPD_READ_BUFFER_MAX instead of buffering all that arrives, so the client's sends stall
 * and the heap stays bounded. When the client reads, every whole request is answered.
 */
static void
test_pipelining_without_reading(void)
{
	const size_t total = 16u << 20;
	enum { STALL_PASSES = 2000 };
	char reqs[64 * (sizeof(get_healthz) - 1)];
	const size_t req_len = sizeof(get_healthz) - 1;
	struct fixture f;
	struct client c;
	struct reply r;
	size_t sent = 0, heap_before, heap_max = 0;
	unsigned stalls = 0;
	int sndbuf = 64 * 1024;

	for (size_t i = 0; i < sizeof(reqs); i += req_len)
		memcpy(reqs + i, get_healthz, req_len);
	fixture_init(&f);
	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &c), 0);
	CU_ASSERT_EQUAL(setsockopt(c.fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf)), 0);
	event_base_loop(f.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	heap_before = heap_in_use();
	/* send until the server takes no more for many loop passes in a row */
	while (sent < total && stalls < STALL_PASSES) {
		size_t off = sent % sizeof(reqs);
		ssize_t w = send(c.fd, reqs + off, sizeof(reqs) - off, MSG_NOSIGNAL);
		if (w > 0) {
			sent += (size_t)w;
			stalls = 0;
		} else if (errno == EAGAIN) {
			stalls++;
		} else {
			break;
		}
		event_base_loop(f.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
		size_t heap = heap_in_use();
		if (heap > heap_max)
			heap_max = heap;
	}
	CU_ASSERT_TRUE(sent < total);
	if (heap_max > heap_before)
		CU_ASSERT_TRUE(heap_max - heap_before < 1024u * 1024);
	if (sent >= total || heap_max - heap_before >= 1024u * 1024)
		fprintf(stderr, "sent %zu, server heap +%zu\n", sent, heap_max - heap_before);

	/* every whole request gets its reply, all of one length (Date has a fixed width) */
	CU_ASSERT_TRUE_FATAL(run_until(&f, done_response, &c));
	CU_ASSERT_TRUE_FATAL(parse_reply(c.buf, &r, NULL));
	CU_ASSERT_EQUAL(r.status, 200);
	struct received w = {.c = &c, .want = (sent / req_len) * (r.headers_len + r.body_len)};
	CU_ASSERT_TRUE(run_until(&f, done_received, &w));
	CU_ASSERT_EQUAL(c.total, w.want);
	CU_ASSERT_FALSE(c.closed);
	client_close(&c);
	CU_ASSERT_TRUE(run_until(&f, done_no_connections, f.h));
	fixture_done(&f);
}

/* Half a request, then nothing: dropped after the (short, for the test) timeout. */
static void
test_slow_and_idle_clients(void)
{
	struct fixture f;
	struct client slow, idle;

	fixture_init(&f);
	CU_ASSERT_EQUAL(httpd_set_timeout(f.h, 0), -EINVAL);
	CU_ASSERT_EQUAL(httpd_set_timeout(f.h, 200), 0);
	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &slow), 0);
	CU_ASSERT_TRUE(client_send(&slow, "GET /healthz HTTP/1.1\r\nHost:"));
	CU_ASSERT_TRUE(run_until(&f, done_closed, &slow));
	CU_ASSERT_PTR_NULL(strstr(slow.buf, " 200 "));
	client_close(&slow);

	/* a keep-alive connection that has had its answer and then goes quiet */
	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &idle), 0);
	CU_ASSERT_TRUE(client_send(&idle, get_healthz));
	CU_ASSERT_TRUE(run_until(&f, done_response, &idle));
	CU_ASSERT_PTR_NOT_NULL(strstr(idle.buf, "HTTP/1.1 200"));
	CU_ASSERT_TRUE(run_until(&f, done_closed, &idle));
	client_close(&idle);
	CU_ASSERT_TRUE(run_until(&f, done_no_connections, f.h));
	fixture_done(&f);
}

struct conns_at {
	struct httpd *h;
	unsigned n;
};

static bool
done_conns_at(void *arg)
{
	struct conns_at *w = arg;

	return httpd_connections(w->h) == w->n;
}

/*
 * At the connection limit a new connection still gets in: the idle keep-alive connection
 * goes first, then the oldest without a complete request; the others are served.
 */
static void
test_connection_limit(void)
{
	enum { MAX = 4 };
	static const char get_close[] =
	    "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";
	struct fixture f;
	struct client c[MAX], extra, filler;

	fixture_init(&f);
	CU_ASSERT_EQUAL(httpd_set_request_deadline(f.h, 0), -EINVAL);
	CU_ASSERT_EQUAL(httpd_set_request_deadline(f.h, 600000), 0); /* not in this test */
	httpd_set_hold(f.h, 0); /* the order, not the grace of new connections */
	CU_ASSERT_EQUAL(httpd_set_max_connections(f.h, 0), -EINVAL);
	CU_ASSERT_EQUAL(httpd_set_max_connections(f.h, MAX), 0);
	for (unsigned i = 0; i < MAX; i++)
		CU_ASSERT_EQUAL_FATAL(client_connect(&f, &c[i]), 0);
	struct conns_at w = {.h = f.h, .n = MAX};
	CU_ASSERT_TRUE_FATAL(run_until(&f, done_conns_at, &w));
	/* the last one is answered and stays open, idle */
	CU_ASSERT_TRUE(client_send(&c[MAX - 1], get_healthz));
	CU_ASSERT_TRUE(run_until(&f, done_response, &c[MAX - 1]));

	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &extra), 0);
	CU_ASSERT_TRUE(client_send(&extra, get_close));
	CU_ASSERT_TRUE(run_until(&f, done_response, &extra));
	CU_ASSERT_PTR_NOT_NULL(strstr(extra.buf, "HTTP/1.1 200"));
	CU_ASSERT_TRUE(run_until(&f, done_closed, &c[MAX - 1]));
	CU_ASSERT_EQUAL(httpd_dropped(f.h, HTTPD_DROP_TABLE_FULL), 1u);
	client_close(&extra);
	client_close(&c[MAX - 1]);
	w.n = MAX - 1;
	CU_ASSERT_TRUE_FATAL(run_until(&f, done_conns_at, &w));
	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &filler), 0);
	w.n = MAX;
	CU_ASSERT_TRUE_FATAL(run_until(&f, done_conns_at, &w));

	/* no idle one left: the oldest that has sent nothing goes */
	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &extra), 0);
	CU_ASSERT_TRUE(client_send(&extra, get_close));
	CU_ASSERT_TRUE(run_until(&f, done_response, &extra));
	CU_ASSERT_PTR_NOT_NULL(strstr(extra.buf, "HTTP/1.1 200"));
	CU_ASSERT_TRUE(run_until(&f, done_closed, &c[0]));
	CU_ASSERT_EQUAL(c[0].len, 0u);
	CU_ASSERT_EQUAL(httpd_dropped(f.h, HTTPD_DROP_TABLE_FULL), 2u);
	client_close(&extra);
	for (unsigned i = 1; i < MAX - 1; i++) {
		CU_ASSERT_TRUE(client_send(&c[i], get_healthz));
		CU_ASSERT_TRUE(run_until(&f, done_response, &c[i]));
		CU_ASSERT_PTR_NOT_NULL(strstr(c[i].buf, "HTTP/1.1 200"));
	}
	for (unsigned i = 0; i < MAX; i++)
		client_close(&c[i]);
	client_close(&filler);
	CU_ASSERT_TRUE(run_until(&f, done_no_connections, f.h));
	CU_ASSERT_EQUAL(httpd_dropped(f.h, HTTPD_DROP_DEADLINE), 0u);
	fixture_done(&f);
}

static unsigned
count_lines(int fd)
{
	char buf[4096];
	unsigned lines = 0;
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			lines += buf[i] == '\n';
	return lines;
}

struct all_answered {
	struct client *c;
	unsigned n;
};

static bool
done_all_answered(void *arg)
{
	struct all_answered *a = arg;

	for (unsigned i = 0; i < a->n; i++)
		if (!client_has_response(&a->c[i]) && !a->c[i].closed)
			return false;
	return true;
}

/*
 * accept() fails with EMFILE while connections wait: the server pauses its listener and logs
 * a line or two instead of spinning on the readable socket (one log line per loop pass before
 * the fix); once descriptors are free again it serves the waiting clients.
 */
static void
test_accept_emfile(void)
{
	enum { CLIENTS = 3, PASSES = 2000, FILLERS = 4096 };
	struct fixture f;
	struct client c[CLIENTS];
	struct rlimit saved, low;
	int *filler, nfill = 0, log_fd, saved_stderr, probe;
	unsigned lines;

	fixture_init(&f);
	for (unsigned i = 0; i < CLIENTS; i++) {
		CU_ASSERT_EQUAL_FATAL(client_connect(&f, &c[i]), 0);
		CU_ASSERT_TRUE(client_send(&c[i], get_healthz));
	}
	filler = calloc(FILLERS, sizeof(*filler));
	CU_ASSERT_PTR_NOT_NULL_FATAL(filler);
	char path[] = "/tmp/test-lib-httpd-log-XXXXXX";
	log_fd = mkstemp(path);
	CU_ASSERT_FATAL(log_fd >= 0);
	unlink(path);
	fflush(stderr);
	saved_stderr = dup(STDERR_FILENO);
	CU_ASSERT_FATAL(saved_stderr >= 0);

	/* no descriptor left below the soft limit */
	CU_ASSERT_EQUAL_FATAL(getrlimit(RLIMIT_NOFILE, &saved), 0);
	probe = dup(0);
	CU_ASSERT_FATAL(probe >= 0);
	close(probe);
	low = saved;
	low.rlim_cur = (rlim_t)probe + 8;
	CU_ASSERT_EQUAL_FATAL(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (nfill < FILLERS && (filler[nfill] = dup(0)) >= 0)
		nfill++;
	bool emfile = nfill < FILLERS && errno == EMFILE;

	dup2(log_fd, STDERR_FILENO);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; emfile && i < PASSES; i++)
		event_base_loop(f.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* the bound is a rate (one line a second at most), so a slow machine may log more */
	unsigned max_lines = 4 + (unsigned)(t1.tv_sec - t0.tv_sec);
	fflush(stderr);
	dup2(saved_stderr, STDERR_FILENO);

	while (nfill > 0)
		close(filler[--nfill]);
	setrlimit(RLIMIT_NOFILE, &saved);
	lines = count_lines(log_fd);
	close(log_fd);
	close(saved_stderr);
	free(filler);
	if (!emfile) {
		test_skip("cannot exhaust descriptors here (RLIMIT_NOFILE not enforced?)");
	} else {
		CU_ASSERT_TRUE(httpd_accept_errors(f.h) >= 1);
		CU_ASSERT_TRUE(lines >= 1);	    /* said once ... */
		CU_ASSERT_TRUE(lines <= max_lines); /* ... not per pass; backoff reaches 1 s */
		if (lines > max_lines)
			fprintf(stderr, "%u log lines for %u loop passes\n", lines, PASSES);
		/*
		 * Descriptors are back: the waiting clients get their answers. (Under valgrind,
		 * which enforces the limit itself after the kernel's accept(), they were closed
		 * instead: neither hangs.) A new client is served.
		 */
		struct all_answered a = {.c = c, .n = CLIENTS};
		struct client fresh;
		CU_ASSERT_TRUE(run_until(&f, done_all_answered, &a));
		CU_ASSERT_EQUAL_FATAL(client_connect(&f, &fresh), 0);
		CU_ASSERT_TRUE(client_send(&fresh, get_healthz));
		CU_ASSERT_TRUE(run_until(&f, done_response, &fresh));
		CU_ASSERT_PTR_NOT_NULL(strstr(fresh.buf, "HTTP/1.1 200"));
		client_close(&fresh);
		if (getenv("LD_PRELOAD") == NULL ||
		    strstr(getenv("LD_PRELOAD"), "valgrind") == NULL)
			for (unsigned i = 0; i < CLIENTS; i++)
				CU_ASSERT_PTR_NOT_NULL(strstr(c[i].buf, "HTTP/1.1 200"));
	}
	for (unsigned i = 0; i < CLIENTS; i++)
		client_close(&c[i]);
	CU_ASSERT_TRUE(run_until(&f, done_no_connections, f.h));
	fixture_done(&f);
}

/* httpd_free() with connections open: they go with it, and nothing leaks (valgrind). */
static void
test_free_with_open_connections(void)
{
	struct fixture f;
	struct client c[2];

	fixture_init(&f);
	for (unsigned i = 0; i < 2; i++)
		CU_ASSERT_EQUAL_FATAL(client_connect(&f, &c[i]), 0);
	struct conns_at w = {.h = f.h, .n = 2};
	CU_ASSERT_TRUE(run_until(&f, done_conns_at, &w));
	fixture_done(&f);
	for (unsigned i = 0; i < 2; i++) {
		client_poll(&c[i]);
		client_close(&c[i]);
	}
}

/* A body handler for the tests: echoes what it got; "fail" → -EIO; "bad" → status 42. */
static int
echo_body(void *userdata, const char *rest, char **body, size_t *len, const char **ctype)
{
	const char *tag = userdata;
	int n;

	if (strcmp(rest, "fail") == 0)
		return -EIO;
	if (strcmp(rest, "bad") == 0)
		return 42;
	if (strcmp(rest, "missing") == 0) {
		*body = strdup("no such thing");
		*len = strlen(*body);
		return 500;
	}
	n = asprintf(body, "%s[%s]", tag, rest);
	if (n < 0)
		return -ENOMEM;
	*len = (size_t)n;
	*ctype = "application/json";
	return 200;
}

/*
 * httpd_add_body_handler: an exact path, a prefix with the rest percent-decoded (slashes
 * kept), Go's 404 for what nothing serves, 400 for a path that does not decode, 500 for a
 * failing handler; the built-in paths are untouched.
 */
static void
test_body_handlers(void)
{
	struct fixture f;

	fixture_init(&f);
	CU_ASSERT_EQUAL_FATAL(httpd_add_body_handler(f.h, "/leases", echo_body, "L"), 0);
	CU_ASSERT_EQUAL_FATAL(httpd_add_body_handler(f.h, "/ipams/", echo_body, "I"), 0);
	CU_ASSERT_EQUAL(httpd_add_body_handler(f.h, "/ipams/", echo_body, "I"), -EEXIST);
	CU_ASSERT_EQUAL(httpd_add_body_handler(f.h, "/leases", echo_body, "L"), -EEXIST);
	CU_ASSERT_EQUAL(httpd_add_body_handler(f.h, "nope", echo_body, NULL), -EINVAL);
	CU_ASSERT_EQUAL(httpd_add_body_handler(f.h, "/x", NULL, NULL), -EINVAL);
#define GET(path) "GET " path " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
	expect_reply_then_eof(&f, GET("/leases"), 200, "L[]");
	expect_reply_then_eof(&f, GET("/leases?x=1"), 200, "L[]");
	expect_reply_then_eof(&f, GET("/ipams/default/net-1"), 200, "I[default/net-1]");
	expect_reply_then_eof(&f, GET("/ipams/default%2Fnet-1?q"), 200, "I[default/net-1]");
	expect_reply_then_eof(&f, GET("/ipams/"), 200, "I[]");
	expect_reply_then_eof(&f, GET("/ipams/missing"), 500, "no such thing");
	expect_reply_then_eof(&f, GET("/ipams/fail"), 500, NULL);
	expect_reply_then_eof(&f, GET("/ipams/bad"), 500, NULL);
	expect_reply_then_eof(&f, GET("/ipams/a%00b"), 400, NULL);
	/* not served: an exact path is not a prefix, nor a prefix without its slash */
	expect_reply_then_eof(&f, GET("/leases/x"), 404, "404 page not found\n");
	expect_reply_then_eof(&f, GET("/ipams"), 404, "404 page not found\n");
	expect_reply_then_eof(&f, GET("/caches/default/net-1"), 404, "404 page not found\n");
	expect_reply_then_eof(&f, GET("/healthz"), 200, "ok\n");
#undef GET
	/* the type the handler gave */
	{
		struct client c;
		struct reply r;

		CU_ASSERT_EQUAL_FATAL(client_connect(&f, &c), 0);
		CU_ASSERT_TRUE(
		    client_send(&c, "GET /leases HTTP/1.1\r\nConnection: close\r\n\r\n"));
		CU_ASSERT_TRUE(run_until(&f, done_closed, &c));
		CU_ASSERT_TRUE(parse_reply_eof(c.buf, c.eof, &r, NULL) &&
			       reply_has_header(&r, "Content-Type: application/json"));
		client_close(&c);
	}
	CU_ASSERT_TRUE(run_until(&f, done_no_connections, f.h));
	fixture_done(&f);
}

static const struct test_case httpd_tests[] = {
    {"Connection: close: whole reply, then EOF", test_connection_close},
    {"HTTP/1.0: whole reply, then EOF", test_http10},
    {"pipelined keep-alive requests: two replies", test_pipelined_keepalive},
    {"kubelet probe: 503 and 200 with bodies", test_kube_probe},
    {"large reply with Connection: close: all bytes", test_large_reply_then_close},
    {"serves GET, refuses a large body", test_serves_get_and_head},
    {"header limit: early close, bounded heap", test_header_limit},
    {"header limit within one endless line", test_header_limit_one_line},
    {"pipelining without reading: reading pauses", test_pipelining_without_reading},
    {"slow and idle clients are dropped", test_slow_and_idle_clients},
    {"connection limit: idle, then oldest incomplete dropped", test_connection_limit},
    {"accept EMFILE: paused, few log lines, recovers", test_accept_emfile},
    {"free with open connections", test_free_with_open_connections},
    {"body handlers: exact, prefix, 404, 400, 500", test_body_handlers},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "httpd", .tests = httpd_tests},
    {.name = NULL},
};
