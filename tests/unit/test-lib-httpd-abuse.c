/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lib/httpd.c under connection abuse: the request deadline (a slowloris client trickling a
 * byte at a time, a client that connects and says nothing), the per-address limit, and
 * 2 000 connections held open (and reopened when dropped) by another process while a probe
 * asks for /healthz again and again: every probe is answered. Loopback only (127.0.0.0/8:
 * the attackers come from addresses of their own). Driven by events; a wait is bounded
 * (generously) only so that a regression fails instead of hanging.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <event2/event.h>

#include "lib/clock.h"
#include "lib/httpd.h"
#include "lib/metrics.h"
#include "lib/util.h"
#include "tests/runner.h"

#define WAIT_USEC (60 * USEC_PER_SEC) /* bound on any wait for an event */

struct fixture {
	struct event_base *base;
	struct event *tick; /* wakes EVLOOP_ONCE so that predicates are re-checked */
	struct httpd *h;
	unsigned long ticks;
};

struct client {
	int fd;
	bool connected, sent;
	char buf[4096];
	size_t len;
	bool closed;
};

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	unsigned long *ticks = arg;

	(void)fd;
	(void)what;
	(*ticks)++;
}

static void
fixture_init(struct fixture *f, struct metrics *m)
{
	struct timeval tv = {.tv_sec = 0, .tv_usec = 5000};

	memset(f, 0, sizeof(*f));
	f->base = event_base_new();
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->base);
	f->tick = event_new(f->base, -1, EV_PERSIST, tick_cb, &f->ticks);
	CU_ASSERT_PTR_NOT_NULL_FATAL(f->tick);
	event_add(f->tick, &tv);
	CU_ASSERT_EQUAL_FATAL(httpd_new(f->base, "127.0.0.1:0", m, &f->h), 0);
}

static void
fixture_done(struct fixture *f)
{
	httpd_free(f->h);
	event_free(f->tick);
	event_base_free(f->base);
}

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

/* A non-blocking connect from source address src (127.0.0.X) to the server's port. */
static int
connect_from(int port, const char *src)
{
	struct sockaddr_in sin = {.sin_family = AF_INET}, from = {.sin_family = AF_INET};
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	inet_pton(AF_INET, src, &from.sin_addr);
	if (bind(fd, (struct sockaddr *)&from, sizeof(from)) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 && errno != EINPROGRESS) {
		int r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

static void
client_open(struct fixture *f, struct client *c, const char *src)
{
	memset(c, 0, sizeof(*c));
	c->fd = connect_from(httpd_port(f->h), src);
	CU_ASSERT_FATAL(c->fd >= 0);
}

/* Notes the connect's end, reads what came, notes EOF or a reset. */
static void
client_poll(struct client *c)
{
	struct pollfd p = {.fd = c->fd, .events = POLLOUT};

	if (!c->connected && poll(&p, 1, 0) == 1) {
		int err = 0;
		socklen_t len = sizeof(err);

		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		c->connected = err == 0;
		c->closed = err != 0;
	}
	while (c->connected && !c->closed) {
		ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - 1 - c->len, MSG_DONTWAIT);
		if (n > 0) {
			c->len += (size_t)n;
			c->buf[c->len] = '\0';
			if (c->len + 1 >= sizeof(c->buf))
				break;
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
done_closed(void *arg)
{
	struct client *c = arg;

	client_poll(c);
	return c->closed;
}

static bool
done_connected(void *arg)
{
	struct client *c = arg;

	client_poll(c);
	return c->connected || c->closed;
}

static bool
done_response(void *arg)
{
	struct client *c = arg;

	client_poll(c);
	return strstr(c->buf, "\r\n\r\n") != NULL || c->closed;
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

static const char get_healthz[] = "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n";
static const char get_close[] = "GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n";

/*
 * Sends one byte per tick of the fixture (5 ms) of an endless header
 * until the server closes the connection or max bytes have gone; returns the bytes sent.
 */
static size_t
trickle(struct fixture *f, struct client *c, size_t max)
{
	size_t sent = 0;
	uint64_t give_up = clock_now_usec() + WAIT_USEC;

	while (sent < max && clock_now_usec() < give_up) {
		client_poll(c);
		if (c->closed)
			break;
		if (send(c->fd, "a", 1, MSG_NOSIGNAL) == 1)
			sent++;
		else if (errno != EAGAIN)
			break;
		for (unsigned long t = f->ticks; f->ticks == t;)
			event_base_loop(f->base, EVLOOP_ONCE);
	}
	return sent;
}

/*
 * A slowloris client: one byte at a time keeps the inactivity timeout from ever firing, and
 * the header limit (8 KiB) is far; the request deadline closes it, unanswered. Also on a
 * kept-alive connection, where the deadline runs from the second request's first byte.
 */
static void
test_slowloris_deadline(void)
{
	enum { MAX_BYTES = 2000 }; /* below the header limit: only the deadline can stop it */
	struct fixture f;
	struct client c;
	size_t sent;

	fixture_init(&f, NULL);
	CU_ASSERT_EQUAL(httpd_set_timeout(f.h, 60000), 0);
	CU_ASSERT_EQUAL(httpd_set_request_deadline(f.h, 300), 0);

	client_open(&f, &c, "127.0.0.1");
	CU_ASSERT_TRUE_FATAL(run_until(&f, done_connected, &c));
	CU_ASSERT_TRUE(client_send(&c, "GET /healthz HTTP/1.1\r\nX-Slow: "));
	sent = trickle(&f, &c, MAX_BYTES);
	CU_ASSERT_TRUE(c.closed);
	CU_ASSERT_TRUE(sent < MAX_BYTES);
	CU_ASSERT_PTR_NULL(strstr(c.buf, " 200 "));
	CU_ASSERT_EQUAL(httpd_dropped(f.h, HTTPD_DROP_DEADLINE), 1u);
	close(c.fd);

	/* a first request answered, then a slow second one on the same connection */
	client_open(&f, &c, "127.0.0.1");
	CU_ASSERT_TRUE_FATAL(run_until(&f, done_connected, &c));
	CU_ASSERT_TRUE(client_send(&c, get_healthz));
	CU_ASSERT_TRUE(run_until(&f, done_response, &c));
	CU_ASSERT_PTR_NOT_NULL(strstr(c.buf, "HTTP/1.1 200"));
	CU_ASSERT_FALSE(c.closed);
	CU_ASSERT_TRUE(client_send(&c, "GET /healthz HTTP/1.1\r\nX-Slow: "));
	sent = trickle(&f, &c, MAX_BYTES);
	CU_ASSERT_TRUE(c.closed);
	CU_ASSERT_TRUE(sent < MAX_BYTES);
	CU_ASSERT_EQUAL(httpd_dropped(f.h, HTTPD_DROP_DEADLINE), 2u);
	close(c.fd);

	/* one that connects and sends nothing at all */
	client_open(&f, &c, "127.0.0.1");
	CU_ASSERT_TRUE(run_until(&f, done_closed, &c));
	CU_ASSERT_EQUAL(c.len, 0u);
	CU_ASSERT_EQUAL(httpd_dropped(f.h, HTTPD_DROP_DEADLINE), 3u);
	close(c.fd);

	struct conns_at none = {.h = f.h, .n = 0};
	CU_ASSERT_TRUE(run_until(&f, done_conns_at, &none));
	CU_ASSERT_EQUAL(httpd_dropped(f.h, HTTPD_DROP_TABLE_FULL), 0u);
	fixture_done(&f);
}

/*
 * One address over its limit loses its own oldest connection; another address's
 * connections stay; the counters are in the registry given to httpd_new().
 */
static void
test_per_peer_limit(void)
{
	struct fixture f;
	struct metrics *m = NULL;
	struct client a[3], b;
	char *text = NULL;
	size_t len = 0;

	CU_ASSERT_EQUAL_FATAL(metrics_new(&m), 0);
	fixture_init(&f, m);
	CU_ASSERT_EQUAL(httpd_set_request_deadline(f.h, 600000), 0); /* not in this test */
	CU_ASSERT_EQUAL(httpd_set_max_per_peer(f.h, 2), 0);
	httpd_set_hold(f.h, 0); /* the connections below are old enough to go at once */
	client_open(&f, &b, "127.0.0.1");
	for (unsigned i = 0; i < 2; i++)
		client_open(&f, &a[i], "127.0.0.2");
	struct conns_at w = {.h = f.h, .n = 3};
	CU_ASSERT_TRUE_FATAL(run_until(&f, done_conns_at, &w));

	client_open(&f, &a[2], "127.0.0.2");
	CU_ASSERT_TRUE(client_send(&a[2], get_close));
	CU_ASSERT_TRUE(run_until(&f, done_response, &a[2]));
	CU_ASSERT_PTR_NOT_NULL(strstr(a[2].buf, "HTTP/1.1 200"));
	CU_ASSERT_TRUE(run_until(&f, done_closed, &a[0]));
	CU_ASSERT_EQUAL(a[0].len, 0u);
	CU_ASSERT_EQUAL(httpd_dropped(f.h, HTTPD_DROP_PEER_LIMIT), 1u);
	/* the others are served */
	CU_ASSERT_TRUE(client_send(&a[1], get_close));
	CU_ASSERT_TRUE(run_until(&f, done_response, &a[1]));
	CU_ASSERT_PTR_NOT_NULL(strstr(a[1].buf, "HTTP/1.1 200"));
	CU_ASSERT_TRUE(client_send(&b, get_close));
	CU_ASSERT_TRUE(run_until(&f, done_response, &b));
	CU_ASSERT_PTR_NOT_NULL(strstr(b.buf, "HTTP/1.1 200"));
	CU_ASSERT_EQUAL(httpd_dropped(f.h, HTTPD_DROP_TABLE_FULL), 0u);

	CU_ASSERT_EQUAL(metrics_render(m, &text, &len), 0);
	CU_ASSERT_PTR_NOT_NULL(
	    text != NULL
		? strstr(text, "vmdhcp_http_connections_dropped_total{reason=\"peer_limit\"} "
			       "1\n")
		: NULL);
	free(text);
	for (unsigned i = 0; i < 3; i++)
		close(a[i].fd);
	close(b.fd);
	struct conns_at none = {.h = f.h, .n = 0};
	CU_ASSERT_TRUE(run_until(&f, done_conns_at, &none));
	fixture_done(&f);
	metrics_free(m);
}

/*
 * The attacker (a child process, so that its descriptors are its own): HELD connections
 * from 127.0.0.2-9, every fourth one trickling a byte of an endless header now and then, the
 * others idle; a connection the server drops is opened again at once. It writes one byte to
 * ready once each has been connected (or after 1000 rounds), and stops when stop reaches EOF.
 */
enum { HELD = 2000 };

static void __attribute__((noreturn)) attacker(int port, int ready, int stop)
{
	struct rlimit rl;
	int *fds = calloc(HELD, sizeof(*fds));
	bool *up = calloc(HELD, sizeof(*up));
	bool *once = calloc(HELD, sizeof(*once)); /* connected at least once */
	unsigned n_once = 0;
	bool told = false;
	unsigned round = 0;

	if (fds == NULL || up == NULL || once == NULL)
		_exit(2);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < HELD + 64) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (unsigned i = 0; i < HELD; i++)
		fds[i] = -1;
	for (;;) {
		struct pollfd sp = {.fd = stop, .events = POLLIN};
		char src[16];

		if (poll(&sp, 1, 0) == 1) { /* EOF: the test is over */
			for (unsigned i = 0; i < HELD; i++)
				if (fds[i] >= 0)
					close(fds[i]);
			free(fds);
			free(up);
			free(once);
			_exit(0);
		}
		for (unsigned i = 0; i < HELD; i++) {
			char junk[512];
			struct pollfd p;

			if (fds[i] < 0) {
				snprintf(src, sizeof(src), "127.0.0.%u", 2 + i % 8);
				fds[i] = connect_from(port, src);
				up[i] = false;
				if (fds[i] < 0) {
					if (fds[i] == -EMFILE)
						_exit(3);
					fds[i] = -1;
					continue;
				}
			}
			p = (struct pollfd){.fd = fds[i], .events = POLLIN | POLLOUT};
			if (poll(&p, 1, 0) != 1)
				continue;
			if (p.revents & (POLLERR | POLLHUP) ||
			    ((p.revents & POLLIN) && recv(fds[i], junk, sizeof(junk), 0) <= 0)) {
				close(fds[i]); /* dropped: again */
				fds[i] = -1;
				continue;
			}
			if (p.revents & POLLOUT) {
				if (!up[i] && i % 4 == 0)
					send(fds[i], "GET / HTTP/1.1\r\nX-A: ", 21, MSG_NOSIGNAL);
				up[i] = true;
				if (!once[i]) {
					once[i] = true;
					n_once++;
				}
				if (i % 4 == 0 && round % 8 == 0)
					send(fds[i], "a", 1, MSG_NOSIGNAL);
			}
		}
		/* (a server that stops accepting never lets them all connect: go on anyway) */
		if (!told && (n_once == HELD || round == 1000)) {
			told = write(ready, "r", 1) == 1;
		}
		round++;
		poll(NULL, 0, 2);
	}
}

struct pipe_ready {
	int fd;
	bool ready, dead;
};

static bool
done_ready(void *arg)
{
	struct pipe_ready *p = arg;
	struct pollfd pf = {.fd = p->fd, .events = POLLIN};
	char c;

	if (poll(&pf, 1, 0) == 1) {
		if (read(p->fd, &c, 1) == 1)
			p->ready = true;
		else
			p->dead = true;
	}
	return p->ready || p->dead;
}

/*
 * 2 000 connections held open and reopened as soon as the server drops one, some sending a
 * byte at a time: a probe from another address asks /healthz again and again, each time on
 * a new connection (as the kubelet does), and every probe is answered 200.
 */
static void
test_held_connections_probe_answered(void)
{
	enum { PROBES = 30 };
	struct fixture f;
	int ready[2], stop[2], status = 0;
	pid_t pid;
	unsigned answered = 0;

	fixture_init(&f, NULL);
	CU_ASSERT_FATAL(pipe2(ready, O_CLOEXEC) == 0 && pipe2(stop, O_CLOEXEC) == 0);
	pid = fork();
	CU_ASSERT_FATAL(pid >= 0);
	if (pid == 0) {
		close(ready[0]);
		close(stop[1]);
		attacker(httpd_port(f.h), ready[1], stop[0]);
	}
	close(ready[1]);
	close(stop[0]);
	/* the server runs while the attacker connects */
	struct pipe_ready pr = {.fd = ready[0]};
	CU_ASSERT_TRUE(run_until(&f, done_ready, &pr));
	if (!pr.ready) {
		close(stop[1]);
		waitpid(pid, &status, 0);
		close(ready[0]);
		fixture_done(&f);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
			test_skip("cannot open %d descriptors (RLIMIT_NOFILE)", HELD);
		else
			CU_FAIL("the attacker did not connect");
		return;
	}
	uint64_t slowest = 0; /* reported, not asserted */
	for (unsigned i = 0; i < PROBES; i++) {
		struct client c;
		uint64_t t0 = clock_now_usec();

		client_open(&f, &c, "127.0.0.1");
		if (run_until(&f, done_connected, &c) && c.connected &&
		    client_send(&c, get_close) && run_until(&f, done_response, &c) &&
		    strstr(c.buf, "HTTP/1.1 200") != NULL)
			answered++;
		slowest = MAX(slowest, clock_now_usec() - t0);
		close(c.fd);
		if (answered <= i)
			break; /* one unanswered is a failure: no need to wait for more */
	}
	CU_ASSERT_EQUAL(answered, PROBES);
	/* the table was full all along: the attackers lost connections, not the probe */
	CU_ASSERT_TRUE(
	    httpd_dropped(f.h, HTTPD_DROP_PEER_LIMIT) + httpd_dropped(f.h, HTTPD_DROP_TABLE_FULL) >
	    0);
	CU_ASSERT_TRUE(httpd_connections(f.h) <= HTTPD_MAX_CONNECTIONS + 16);
	fprintf(stderr,
	    "probes answered %u/%u, the slowest in %llu ms; dropped: table_full %lu, "
	    "peer_limit %lu, deadline %lu\n",
	    answered, PROBES, (unsigned long long)(slowest / 1000),
	    httpd_dropped(f.h, HTTPD_DROP_TABLE_FULL), httpd_dropped(f.h, HTTPD_DROP_PEER_LIMIT),
	    httpd_dropped(f.h, HTTPD_DROP_DEADLINE));
	close(stop[1]);
	CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
	CU_ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(ready[0]);
	fixture_done(&f);
}

static const struct test_case abuse_tests[] = {
    {"slowloris: closed by the request deadline", test_slowloris_deadline},
    {"per-address limit: own oldest dropped", test_per_peer_limit},
    {"2000 held connections: every probe answered", test_held_connections_probe_answered},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "httpd-abuse", .tests = abuse_tests},
    {.name = NULL},
};
