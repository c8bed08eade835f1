/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/httpd.c under abuse: header and body limits, slow and idle clients, the connection
 * limit, accept() failing with EMFILE. Everything is driven by events on the loop; a wait for
 * an event is bounded (generously) only so that a regression fails instead of hanging.
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

#include <event2/event.h>

#include "lib/clock.h"
#include "lib/httpd.h"
#include "lib/log.h"
#include "tests/runner.h"

#define WAIT_USEC (20 * USEC_PER_SEC) /* bound on any wait for an event */

struct fixture {
	struct event_base *base;
	struct event *tick; /* wakes EVLOOP_ONCE so that predicates are re-checked */
	struct httpd *h;
};

struct client {
	int fd;
	char buf[4096];
	size_t len;
	bool closed; /* EOF or reset seen */
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
	struct timeval tv = { .tv_sec = 0, .tv_usec = 5000 };

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
	struct sockaddr_in sin = { .sin_family = AF_INET };

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
			if (p != junk) {
				c->len += (size_t)n;
				c->buf[c->len] = '\0';
			}
		} else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
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

static bool
done_no_connections(void *arg)
{
	return httpd_connections(arg) == 0;
}

static const char get_healthz[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";

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

	/* a body over HTTPD_MAX_BODY_SIZE is refused, not read */
	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &c), 0);
	CU_ASSERT_TRUE(client_send(&c,
	    "GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n"));
	CU_ASSERT_TRUE(run_until(&f, done_closed, &c));
	CU_ASSERT_PTR_NULL(strstr(c.buf, "HTTP/1.1 200"));
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
 * 1 MiB of header lines, streamed: the server answers 4xx or closes once the headers pass
 * HTTPD_MAX_HEADERS_SIZE, long before the client is done, and its heap does not grow by the
 * amount sent. (Under ASan or valgrind, mallinfo2() does not see their allocator, and the
 * heap assertion is void; the early close is the check there.)
 */
static void
test_header_limit(void)
{
	const size_t total = 1024 * 1024;
	char line[1024];
	struct fixture f;
	struct client c;
	size_t sent = 0, heap_before, heap_max = 0;
	unsigned n = 0;

	fixture_init(&f);
	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &c), 0);
	CU_ASSERT_TRUE(client_send(&c, "GET /healthz HTTP/1.1\r\nHost: t\r\n"));
	event_base_loop(f.base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	heap_before = heap_in_use();
	while (sent < total && !c.closed) {
		int len = snprintf(line, sizeof(line), "X-Pad-%06u: %0*u\r\n", n++, 1000, 0u);
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
 * At the connection limit the server stops accepting: a further connection is not served
 * while the first ones still are, and is served once one of them closes.
 */
static void
test_connection_limit(void)
{
	enum { MAX = 4 };
	struct fixture f;
	struct client c[MAX], extra;

	fixture_init(&f);
	CU_ASSERT_EQUAL(httpd_set_max_connections(f.h, 0), -EINVAL);
	CU_ASSERT_EQUAL(httpd_set_max_connections(f.h, MAX), 0);
	for (unsigned i = 0; i < MAX; i++)
		CU_ASSERT_EQUAL_FATAL(client_connect(&f, &c[i]), 0);
	struct conns_at w = { .h = f.h, .n = MAX };
	CU_ASSERT_TRUE_FATAL(run_until(&f, done_conns_at, &w));

	CU_ASSERT_EQUAL_FATAL(client_connect(&f, &extra), 0);
	CU_ASSERT_TRUE(client_send(&extra, get_healthz));
	for (unsigned i = 0; i < MAX; i++) {
		CU_ASSERT_TRUE(client_send(&c[i], get_healthz));
		CU_ASSERT_TRUE(run_until(&f, done_response, &c[i]));
		CU_ASSERT_PTR_NOT_NULL(strstr(c[i].buf, "HTTP/1.1 200"));
	}
	/* the loop has run for every answer above, and the extra one was never accepted */
	CU_ASSERT_EQUAL(httpd_connections(f.h), MAX);
	client_poll(&extra);
	CU_ASSERT_EQUAL(extra.len, 0u);
	CU_ASSERT_FALSE(extra.closed);

	client_close(&c[0]);
	CU_ASSERT_TRUE(run_until(&f, done_response, &extra));
	CU_ASSERT_PTR_NOT_NULL(strstr(extra.buf, "HTTP/1.1 200"));
	for (unsigned i = 1; i < MAX; i++)
		client_close(&c[i]);
	client_close(&extra);
	CU_ASSERT_TRUE(run_until(&f, done_no_connections, f.h));
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
		CU_ASSERT_TRUE(lines >= 1); /* said once ... */
		CU_ASSERT_TRUE(lines <= max_lines); /* ... not per pass; backoff reaches 1 s */
		if (lines > max_lines)
			fprintf(stderr, "%u log lines for %u loop passes\n", lines, PASSES);
		/*
		 * Descriptors are back: the waiting clients get their answers. (Under valgrind,
		 * which enforces the limit itself after the kernel's accept(), they were closed
		 * instead: neither hangs.) A new client is served.
		 */
		struct all_answered a = { .c = c, .n = CLIENTS };
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
	struct conns_at w = { .h = f.h, .n = 2 };
	CU_ASSERT_TRUE(run_until(&f, done_conns_at, &w));
	fixture_done(&f);
	for (unsigned i = 0; i < 2; i++) {
		client_poll(&c[i]);
		client_close(&c[i]);
	}
}

static const struct test_case httpd_tests[] = {
	{ "serves GET, refuses a large body", test_serves_get_and_head },
	{ "header limit: early close, bounded heap", test_header_limit },
	{ "slow and idle clients are dropped", test_slow_and_idle_clients },
	{ "connection limit pauses accepting", test_connection_limit },
	{ "accept EMFILE: paused, few log lines, recovers", test_accept_emfile },
	{ "free with open connections", test_free_with_open_connections },
	{ NULL, NULL },
};

const struct test_suite test_suites[] = {
	{ .name = "httpd", .tests = httpd_tests },
	{ .name = NULL },
};
