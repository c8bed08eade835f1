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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <event2/event.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>

#include "lib/flags.h"
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
parse_args(int argc, char **argv, struct args *a)
{
	const struct flag table[] = {
	    {.name = "listen",
		.type = FLAG_STRING,
		.dst = &a->listen,
		.arg = "HOST:PORT",
		.help = "where to serve HTTPS (default 127.0.0.1:0: a free port)"},
	    {.name = "state-dir",
		.type = FLAG_STRING,
		.dst = &a->state_dir,
		.arg = "DIR",
		.help = "ca.crt, ca.key, kubeconfig and port are written here (required)"},
	    {.name = "token",
		.type = FLAG_STRING,
		.dst = &a->token,
		.arg = "TOKEN",
		.help = "the bearer token clients must send (default test-token)"},
	    {.name = "history",
		.type = FLAG_UINT,
		.dst = &a->history,
		.arg = "N",
		.help = "watch events kept for resuming (default 10000)",
		.max = 100000000},
	    {.name = "history-bytes",
		.type = FLAG_UINT,
		.dst = &a->history_bytes,
		.arg = "N",
		.help = "and at most this many bytes of them (default 64 MiB)",
		.max = UINT64_MAX},
	    {.name = "data",
		.type = FLAG_STRING,
		.dst = &a->data,
		.arg = "FILE",
		.help = "load the objects from FILE and save them there on exit"},
	    {.name = "bookmark-interval",
		.type = FLAG_UINT,
		.dst = &a->bookmark_secs,
		.arg = "SECONDS",
		.help = "BOOKMARK events every SECONDS, 0 none (default 5)",
		.max = 86400},
	    {.name = "max-watch-buffer",
		.type = FLAG_UINT,
		.dst = &a->max_watch_buffer,
		.arg = "BYTES",
		.help = "a watch whose client lags by more is closed (default 64 MiB)",
		.min = 4096,
		.max = UINT32_MAX},
	    {.name = "log-level",
		.type = FLAG_FUNC,
		.dst = &a->level,
		.arg = "LEVEL",
		.help = "error|warn|info|debug (default info)",
		.parse = log_level_flag},
	    {.name = "tls-san",
		.type = FLAG_STRING,
		.dst = &a->san,
		.arg = "IP:ADDR,...",
		.help = "more subjectAltNames of the serving certificate"},
	    {.name = NULL},
	};
	const struct flags f = {.prog = "test-apiserver",
	    .synopsis = "usage: test-apiserver --state-dir DIR [options]\n"
			"The in-memory Kubernetes API server of the tests.\n",
	    .table = table};
	int next, r;

	*a = (struct args){.listen = "127.0.0.1:0",
	    .token = "test-token",
	    .history = 10000,
	    .history_bytes = 64 << 20,
	    .bookmark_secs = 5,
	    .max_watch_buffer = 64 << 20,
	    .level = LOG_LEVEL_INFO};
	if ((r = flags_parse(&f, argc, argv, &next)) != 0)
		exit(flags_exit_status(r));
	if (next < argc)
		exit(flags_exit_status(flags_error(&f, "unexpected argument %s", argv[next])));
	if (a->state_dir == NULL)
		exit(flags_exit_status(flags_error(&f, "--state-dir is required (try --help)")));
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
