/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-apiserver: an in-memory Kubernetes API server for tests (docs/apiserver.md).
 *
 *   test-apiserver --listen 127.0.0.1:PORT --state-dir DIR [--token TOKEN] [--history N]
 *                  [--history-bytes N] [--data FILE] [--bookmark-interval SECONDS]
 *                  [--max-watch-buffer BYTES] [--log-level LEVEL]
 *
 * Writes DIR/ca.crt, DIR/ca.key, DIR/kubeconfig and last, atomically, DIR/port.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <event2/event.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "lib/log.h"
#include "lib/util.h"
#include "tests/apiserver/server.h"
#include "tests/apiserver/tls.h"

struct args {
	const char *listen;
	const char *state_dir;
	const char *token;
	const char *data;
	const char *san;
	uint64_t history;
	uint64_t history_bytes;
	uint64_t bookmark_secs;
	uint64_t max_watch_buffer;
	enum log_level level;
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: test-apiserver --listen HOST:PORT --state-dir DIR [--token TOKEN]\n"
		   "         [--history N] [--history-bytes N] [--data FILE]\n"
		   "         [--bookmark-interval SECONDS]\n"
		   "         [--max-watch-buffer BYTES] [--log-level error|warn|info|debug]\n"
		   "         [--tls-san IP:ADDR,...]\n");
}

static void
parse_args(int argc, char **argv, struct args *a)
{
	static const struct option opts[] = {
	    {"listen", required_argument, NULL, 'l'},
	    {"state-dir", required_argument, NULL, 's'},
	    {"token", required_argument, NULL, 't'},
	    {"history", required_argument, NULL, 'H'},
	    {"history-bytes", required_argument, NULL, 'B'},
	    {"data", required_argument, NULL, 'd'},
	    {"bookmark-interval", required_argument, NULL, 'b'},
	    {"max-watch-buffer", required_argument, NULL, 'm'},
	    {"log-level", required_argument, NULL, 'L'},
	    {"tls-san", required_argument, NULL, 'S'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int c;

	*a = (struct args){.listen = "127.0.0.1:0",
	    .token = "test-token",
	    .history = 10000,
	    .history_bytes = 64 << 20,
	    .bookmark_secs = 5,
	    .max_watch_buffer = 64 << 20,
	    .level = LOG_LEVEL_INFO};
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			a->listen = optarg;
			break;
		case 's':
			a->state_dir = optarg;
			break;
		case 't':
			a->token = optarg;
			break;
		case 'd':
			a->data = optarg;
			break;
		case 'S':
			a->san = optarg;
			break;
		case 'H':
			if (parse_uint(optarg, 0, 100000000, &a->history) < 0)
				fatalx("--history: not a number: %s", optarg);
			break;
		case 'B':
			if (parse_uint(optarg, 0, UINT64_MAX, &a->history_bytes) < 0)
				fatalx("--history-bytes: not a number: %s", optarg);
			break;
		case 'b':
			if (parse_uint(optarg, 0, 86400, &a->bookmark_secs) < 0)
				fatalx("--bookmark-interval: not a number of seconds: %s", optarg);
			break;
		case 'm':
			if (parse_uint(optarg, 4096, UINT32_MAX, &a->max_watch_buffer) < 0)
				fatalx("--max-watch-buffer: not a number of bytes: %s", optarg);
			break;
		case 'L':
			if (log_level_from_string(optarg, &a->level) < 0)
				fatalx("--log-level: unknown level %s", optarg);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind != argc || a->state_dir == NULL) {
		usage(stderr);
		exit(2);
	}
}

static int
write_kubeconfig(const char *dir, int port, const char *token, const char *ca_pem)
{
	size_t n = strlen(ca_pem);
	char *b64 = malloc(4 * ((n + 2) / 3) + 1), *doc, path[4096];
	int len, r;

	if (b64 == NULL)
		return -ENOMEM;
	EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)ca_pem, (int)n);
	len = asprintf(&doc,
	    "apiVersion: v1\n"
	    "kind: Config\n"
	    "clusters:\n"
	    "- name: test-apiserver\n"
	    "  cluster:\n"
	    "    server: https://127.0.0.1:%d\n"
	    "    certificate-authority-data: %s\n"
	    "users:\n"
	    "- name: test-user\n"
	    "  user:\n"
	    "    token: %s\n"
	    "contexts:\n"
	    "- name: test\n"
	    "  context:\n"
	    "    cluster: test-apiserver\n"
	    "    user: test-user\n"
	    "    namespace: default\n"
	    "current-context: test\n",
	    port, b64, token);
	free(b64);
	if (len < 0)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/kubeconfig", dir);
	r = write_file_atomic(path, doc, (size_t)len, 0600);
	free(doc);
	return r;
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct event_base *base = arg;

	log_info("signal %d: saving and exiting", (int)sig);
	event_base_loopbreak(base);
}

int
main(int argc, char **argv)
{
	struct args a;
	struct event_base *base;
	struct event *sigterm, *sigint;
	struct server *srv;
	SSL_CTX *ssl;
	char *ca_pem, host[256], path[4096], portbuf[16];
	const char *colon;
	uint64_t port;
	int r, bound;

	log_init("test-apiserver", LOG_LEVEL_INFO);
	parse_args(argc, argv, &a);
	log_set_level(a.level);
	signal(SIGPIPE, SIG_IGN);

	colon = strrchr(a.listen, ':');
	if (colon == NULL || (size_t)(colon - a.listen) >= sizeof(host) ||
	    parse_uint(colon + 1, 0, 65535, &port) < 0)
		fatalx("--listen: want HOST:PORT, got %s", a.listen);
	memcpy(host, a.listen, (size_t)(colon - a.listen));
	host[colon - a.listen] = '\0';

	if (mkdir(a.state_dir, 0700) < 0 && errno != EEXIST)
		fatal("mkdir %s", a.state_dir);
	r = tls_setup(a.state_dir, a.san, &ssl, &ca_pem);
	if (r < 0)
		fatalx("TLS setup failed: %s", strerror(-r));

	base = event_base_new();
	if (base == NULL)
		fatalx("event_base_new failed");
	r = server_new(base, ssl,
	    &(struct server_config){.token = a.token,
		.data_file = a.data,
		.history = (size_t)a.history,
		.history_bytes = (size_t)a.history_bytes,
		.bookmark_secs = (unsigned)a.bookmark_secs,
		.max_watch_buffer = (size_t)a.max_watch_buffer},
	    &srv);
	if (r < 0)
		fatalx("cannot start: %s", strerror(-r));
	bound = server_listen(srv, host, (int)port);
	if (bound < 0)
		fatalx("cannot listen on %s: %s", a.listen, strerror(-bound));
	r = write_kubeconfig(a.state_dir, bound, a.token, ca_pem);
	if (r < 0)
		fatalx("cannot write kubeconfig: %s", strerror(-r));
	free(ca_pem);
	snprintf(path, sizeof(path), "%s/port", a.state_dir);
	snprintf(portbuf, sizeof(portbuf), "%d\n", bound);
	r = write_file_atomic(path, portbuf, strlen(portbuf), 0644);
	if (r < 0)
		fatalx("cannot write %s: %s", path, strerror(-r));
	log_info("listening on https://%s:%d (state %s)", host, bound, a.state_dir);

	sigterm = evsignal_new(base, SIGTERM, signal_cb, base);
	sigint = evsignal_new(base, SIGINT, signal_cb, base);
	event_add(sigterm, NULL);
	event_add(sigint, NULL);
	event_base_dispatch(base);

	r = server_save(srv);
	if (r < 0)
		log_error("cannot save %s: %s", a.data, strerror(-r));
	server_free(srv);
	event_free(sigterm);
	event_free(sigint);
	event_base_free(base);
	SSL_CTX_free(ssl);
	return r < 0 ? 1 : 0;
}
