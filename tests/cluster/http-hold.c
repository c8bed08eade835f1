/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/cluster/http-hold.c - connection abuse against an HTTP endpoint (the agent's or the
 * controller's /healthz /readyz /metrics port) for tests/cluster/test-cluster-e2e.sh:
 *
 *   http-hold ADDR PORT CONNS SECONDS
 *
 * keeps CONNS TCP connections open to ADDR:PORT for SECONDS: three in four send nothing, one
 * in four trickles a request line one byte a second (slowloris); each one the server closes is
 * opened again at once. Prints "opened N closed-by-server M" at the end; exit 0, or 2 on bad
 * arguments, 1 when not one connection could be made. Raises its own RLIMIT_NOFILE as needed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char trickle[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ";

struct conn {
	int fd;
	size_t sent;
};

static int
open_one(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct rlimit rl;
	struct conn *c;
	struct pollfd *p;
	long n, secs, opened = 0, closed = 0;
	double end, next_trickle;
	char buf[4096];

	if (argc != 5 || inet_pton(AF_INET, argv[1], &sa.sin_addr) != 1 ||
	    (n = strtol(argv[3], NULL, 10)) <= 0 || n > 100000 ||
	    (secs = strtol(argv[4], NULL, 10)) <= 0) {
		fprintf(stderr, "usage: http-hold ADDR PORT CONNS SECONDS\n");
		return 2;
	}
	sa.sin_port = htons((uint16_t)atoi(argv[2]));
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)n + 64) {
		rl.rlim_cur = (rlim_t)n + 64;
		if (rl.rlim_max < rl.rlim_cur)
			rl.rlim_max = rl.rlim_cur;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			perror("http-hold: setrlimit");
	}
	c = calloc((size_t)n, sizeof(*c));
	p = calloc((size_t)n, sizeof(*p));
	if (c == NULL || p == NULL)
		return 1;
	for (long i = 0; i < n; i++) {
		c[i].fd = open_one(&sa);
		opened += c[i].fd >= 0;
	}
	if (opened == 0) {
		fprintf(stderr, "http-hold: no connection to %s:%s\n", argv[1], argv[2]);
		return 1;
	}
	end = now_s() + (double)secs;
	next_trickle = now_s() + 1;
	while (now_s() < end) {
		for (long i = 0; i < n; i++) {
			p[i].fd = c[i].fd;
			p[i].events = POLLIN;
			p[i].revents = 0;
		}
		if (poll(p, (nfds_t)n, 100) < 0 && errno != EINTR)
			break;
		for (long i = 0; i < n; i++) {
			bool gone = false;

			if (c[i].fd < 0) {
				gone = true;
			} else if (p[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				ssize_t r = read(c[i].fd, buf, sizeof(buf));

				gone = r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR);
				/* an answer (a 4xx for a request cut short): the server is done
				 * with it */
				gone = gone || r > 0;
			}
			if (gone) {
				if (c[i].fd >= 0) {
					close(c[i].fd);
					closed++;
				}
				c[i].fd = open_one(&sa);
				c[i].sent = 0;
				opened += c[i].fd >= 0;
			}
		}
		if (now_s() >= next_trickle) {
			next_trickle += 1;
			for (long i = 0; i < n; i += 4) {
				if (c[i].fd < 0)
					continue;
				if (write(c[i].fd, &trickle[c[i].sent % (sizeof(trickle) - 1)],
					1) == 1)
					c[i].sent++;
			}
		}
	}
	printf("opened %ld closed-by-server %ld\n", opened, closed);
	for (long i = 0; i < n; i++)
		if (c[i].fd >= 0)
			close(c[i].fd);
	free(c);
	free(p);
	return 0;
}
