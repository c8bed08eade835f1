/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tests/cluster/watch-quiet.c - a quiet watch on a real API server (tests/cluster/
 * test-watch-quiet.sh runs it on kube-apiserver 1.25 and 1.20):
 *
 *   watch-quiet KUBECONFIG TIMEOUT_SECONDS ROUNDS
 *
 * An informer on Nodes (none exist on an API server without kubelets, and none change: its
 * watch carries no event and, the watch cache having dispatched no Node event, no bookmark)
 * with watches of TIMEOUT_SECONDS. It waits until the server has ended ROUNDS watches, then
 * creates a Node and waits for its ADDED, deletes it and waits for its DELETED. Passes when
 * the server ended every watch cleanly and the informer watched again from the same
 * resourceVersion: one list only, no stall, no failure, no 410, and both events arrived
 * after the re-watches. The log (stderr, at debug) has a line per re-watch. It also checks
 * the TCP connections the transport opened to the server: keep-alive on, with the
 * probe timing and user timeout of kube/http-keepalive.c. Exit 0 pass, 1 fail, 2 bad
 * arguments or no client.
 */
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "kube/kube.h"
#include "lib/clock.h"
#include "lib/log.h"

struct seen {
	char name[64];
	bool added, deleted;
};

static void
on_add(void *userdata, const char *key, const void *item)
{
	struct seen *s = userdata;

	if (strcmp(key, s->name) == 0)
		s->added = true;
}

static void
on_delete(void *userdata, const char *key, const void *item)
{
	struct seen *s = userdata;

	if (strcmp(key, s->name) == 0)
		s->deleted = true;
}

struct done {
	bool flag;
	int error;
	char message[256];
};

static void
call_done(void *userdata, const struct kube_result *res)
{
	struct done *d = userdata;

	d->flag = true;
	d->error = res->error;
	snprintf(d->message, sizeof(d->message), "%s", res->message ? res->message : "");
}

static void
tick(evutil_socket_t fd, short what, void *arg)
{
}

/* Runs the loop until the informer's server-ended watches reach n, or timeout_ms. */
static bool
run_until_ends(struct event_base *base, struct kube_informer *inf, uint64_t n, long timeout_ms)
{
	uint64_t end = clock_now_usec() + (uint64_t)timeout_ms * 1000;
	struct kube_informer_stats st;

	for (;;) {
		kube_informer_get_stats(inf, &st);
		if (st.watch_ends >= n)
			return true;
		if (clock_now_usec() >= end)
			return false;
		event_base_loop(base, EVLOOP_ONCE);
	}
}

static int
check(const struct kube_informer_stats *st, uint64_t rounds, const char *when)
{
	int bad = 0;

	fprintf(stderr,
	    "watch-quiet: %s: lists %llu watches %llu ended-by-server %llu stalls %llu errors %llu "
	    "relists-410 %llu\n",
	    when, (unsigned long long)st->lists, (unsigned long long)st->watches,
	    (unsigned long long)st->watch_ends, (unsigned long long)st->stalls,
	    (unsigned long long)st->errors, (unsigned long long)st->relists_410);
	if (st->lists != 1) {
		fprintf(stderr, "FAIL: %s: %llu lists (a re-list), 1 expected\n", when,
		    (unsigned long long)st->lists);
		bad = 1;
	}
	if (st->stalls || st->errors || st->relists_410 || st->failures) {
		fprintf(
		    stderr, "FAIL: %s: stalls/errors/410s seen (last: %s)\n", when, st->last_error);
		bad = 1;
	}
	if (st->watch_ends < rounds) {
		fprintf(stderr, "FAIL: %s: the server ended %llu watches, %llu expected\n", when,
		    (unsigned long long)st->watch_ends, (unsigned long long)rounds);
		bad = 1;
	}
	return bad;
}

/* Every connected TCP socket of this process (the client's connections to the API server):
 * keep-alive on with kube/http-keepalive.c's timing. 1 when one differs or none is found. */
static int
check_keepalive(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	unsigned n = 0, bad = 0;

	if (!d)
		return 1;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name), type = 0, ka = 0, idle = 0, intvl = 0, cnt = 0;
		unsigned ut = 0;
		socklen_t l = sizeof(type);
		struct sockaddr_storage peer;
		socklen_t pl = sizeof(peer);
		struct stat st;

		if (e->d_name[0] == '.' || fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
		    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l) < 0 || type != SOCK_STREAM ||
		    getpeername(fd, (struct sockaddr *)&peer, &pl) < 0 ||
		    (peer.ss_family != AF_INET && peer.ss_family != AF_INET6))
			continue;
		n++;
		l = sizeof(int);
		getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &ka, &l);
		getsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, &l);
		getsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, &l);
		getsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, &l);
		l = sizeof(ut);
		getsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, &l);
		fprintf(stderr,
		    "watch-quiet: connection fd %d: keepalive %d idle %d s interval %d s count %d "
		    "user timeout %u ms\n",
		    fd, ka, idle, intvl, cnt, ut);
		if (!ka || idle != 30 || intvl != 10 || cnt != 3 || ut != 60000)
			bad++;
	}
	closedir(d);
	if (n == 0 || bad) {
		fprintf(
		    stderr, "FAIL: %u of %u connections without the keep-alive settings\n", bad, n);
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct kube_informer_opts o = {.res = &kube_res_nodes};
	struct kube_informer_handlers h = {.on_add = on_add, .on_delete = on_delete};
	struct kube_informer_stats st;
	struct kube_config *cfg = NULL;
	struct kube_client *c = NULL;
	struct kube_informer *inf = NULL;
	struct event_base *base;
	struct event *ev;
	struct timeval tv = {0, 100000};
	struct seen s;
	struct done d = {0};
	char err[512];
	unsigned timeout_s, rounds;
	long bound_ms;
	json_t *node;
	int bad = 0;

	if (argc != 4 || (timeout_s = (unsigned)atoi(argv[2])) < 2 ||
	    (rounds = (unsigned)atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: watch-quiet KUBECONFIG TIMEOUT_SECONDS(>=2) ROUNDS(>=1)\n");
		return 2;
	}
	log_init("watch-quiet", LOG_LEVEL_DEBUG);
	base = event_base_new();
	ev = base ? event_new(base, -1, EV_PERSIST, tick, NULL) : NULL;
	if (!ev || kube_config_load(argv[1], &cfg, err, sizeof(err)) < 0 ||
	    kube_client_new(base, cfg, &c) < 0) {
		fprintf(stderr, "watch-quiet: no client: %s\n", err);
		return 2;
	}
	evtimer_add(ev, &tv);
	memset(&s, 0, sizeof(s));
	snprintf(s.name, sizeof(s.name), "vmdhcp-watch-quiet-%d", (int)getpid());
	h.userdata = &s;
	o.watch_timeout_s = timeout_s;
	if (kube_informer_new(c, &o, &inf) < 0 || kube_informer_add_handlers(inf, &h) < 0 ||
	    kube_informer_start(inf) < 0 || kube_informers_wait_synced(&inf, 1, 30000) < 0) {
		fprintf(stderr, "FAIL: the Node informer did not sync\n");
		return 1;
	}
	/* generous: each round ends at its timeout, its deadline is timeout + 10 s + 2 s */
	bound_ms = (long)rounds * (kube_watch_deadline_ms(timeout_s, 10000) + 5000);
	if (!run_until_ends(base, inf, rounds, bound_ms))
		fprintf(stderr, "watch-quiet: %u rounds not over in %ld ms\n", rounds, bound_ms);
	kube_informer_get_stats(inf, &st);
	bad |= check(&st, rounds, "quiet");
	bad |= check_keepalive();

	/* after the re-watches, events still arrive */
	node = json_pack(
	    "{s:s, s:s, s:{s:s}}", "apiVersion", "v1", "kind", "Node", "metadata", "name", s.name);
	if (!node || kube_create(c, &kube_res_nodes, NULL, node, call_done, &d, NULL) < 0 ||
	    kube_run_until(base, &d.flag, 30000) < 0 || d.error < 0) {
		fprintf(stderr, "FAIL: cannot create Node %s: %s\n", s.name, d.message);
		bad = 1;
	} else if (kube_run_until(base, &s.added, 30000) < 0) {
		fprintf(stderr, "FAIL: no ADDED for Node %s after the re-watches\n", s.name);
		bad = 1;
	}
	json_decref(node);
	d = (struct done){0};
	if (kube_delete(c, &kube_res_nodes, NULL, s.name, NULL, call_done, &d, NULL) < 0 ||
	    kube_run_until(base, &d.flag, 30000) < 0 || (d.error < 0 && d.error != -ENOENT)) {
		fprintf(stderr, "FAIL: cannot delete Node %s: %s\n", s.name, d.message);
		bad = 1;
	} else if (s.added && kube_run_until(base, &s.deleted, 30000) < 0) {
		fprintf(stderr, "FAIL: no DELETED for Node %s\n", s.name);
		bad = 1;
	}
	kube_informer_get_stats(inf, &st);
	bad |= check(&st, rounds, "after the events");
	if (!bad)
		fprintf(stderr,
		    "watch-quiet: PASS (%u server-ended watches of %u s, then ADDED and "
		    "DELETED)\n",
		    rounds, timeout_s);
	kube_informer_free(inf);
	kube_client_free(c);
	kube_config_free(cfg);
	event_free(ev);
	event_base_free(base);
	return bad;
}
