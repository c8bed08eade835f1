/* SPDX-License-Identifier: Apache-2.0 */
#include "lib/httpd.h"

#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/util.h>

#include "lib/metrics.h"
#include "lib/util.h"

struct httpd {
	struct evhttp *http;
	struct evhttp_bound_socket *sock;
	struct metrics *metrics;
	httpd_ready_fn ready;
	void *ready_userdata;
	int port;
	int fd; /* the listening socket (owned by sock) */
};

static void
reply_text(struct evhttp_request *req, int code, const char *reason, const char *body,
    size_t len, const char *ctype)
{
	struct evbuffer *b = evbuffer_new();

	if (b == NULL) {
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	evhttp_add_header(evhttp_request_get_output_headers(req), "Content-Type", ctype);
	evbuffer_add(b, body, len);
	evhttp_send_reply(req, code, reason, b);
	evbuffer_free(b);
}

static bool
only_get(struct evhttp_request *req)
{
	enum evhttp_cmd_type cmd = evhttp_request_get_command(req);

	if (cmd == EVHTTP_REQ_GET || cmd == EVHTTP_REQ_HEAD)
		return true;
	evhttp_send_error(req, 405, "method not allowed");
	return false;
}

static void
healthz_cb(struct evhttp_request *req, void *arg)
{
	(void)arg;
	if (only_get(req))
		reply_text(req, 200, "OK", "ok\n", 3, "text/plain; charset=utf-8");
}

static void
readyz_cb(struct evhttp_request *req, void *arg)
{
	struct httpd *h = arg;
	char reason[256] = "not ready";

	if (!only_get(req))
		return;
	if (h->ready == NULL || h->ready(h->ready_userdata, reason, sizeof(reason))) {
		reply_text(req, 200, "OK", "ok\n", 3, "text/plain; charset=utf-8");
		return;
	}
	char body[300];
	int n = snprintf(body, sizeof(body), "%s\n", reason);
	reply_text(req, 503, "Service Unavailable", body,
	    n < 0 ? 0 : MIN((size_t)n, sizeof(body) - 1), "text/plain; charset=utf-8");
}

static void
metrics_cb(struct evhttp_request *req, void *arg)
{
	struct httpd *h = arg;
	char *text = NULL;
	size_t len = 0;

	if (!only_get(req))
		return;
	if (h->metrics == NULL) {
		reply_text(req, 200, "OK", "", 0, "text/plain; version=0.0.4");
		return;
	}
	if (metrics_render(h->metrics, &text, &len) < 0) {
		evhttp_send_error(req, 500, "cannot render metrics");
		return;
	}
	reply_text(req, 200, "OK", text, len, "text/plain; version=0.0.4; charset=utf-8");
	free(text);
}

static int
split_listen(const char *listen, char *host, size_t hostlen, uint16_t *port)
{
	const char *colon;
	uint64_t p;
	size_t n;

	if (listen == NULL || *listen == '\0')
		return -EINVAL;
	if (listen[0] == '[') {
		const char *end = strchr(listen, ']');
		if (end == NULL || end[1] != ':')
			return -EINVAL;
		n = (size_t)(end - listen - 1);
		if (n >= hostlen)
			return -EINVAL;
		memcpy(host, listen + 1, n);
		host[n] = '\0';
		colon = end + 1;
	} else {
		colon = strrchr(listen, ':');
		if (colon == NULL)
			return -EINVAL;
		n = (size_t)(colon - listen);
		if (n >= hostlen)
			return -EINVAL;
		memcpy(host, listen, n);
		host[n] = '\0';
		if (n == 0)
			snprintf(host, hostlen, "0.0.0.0");
	}
	if (parse_uint(colon + 1, 0, 65535, &p) < 0)
		return -EINVAL;
	*port = (uint16_t)p;
	return 0;
}

/*
 * A listening TCP socket on a numeric address. We bind it ourselves rather than through
 * evhttp_bind_socket(): libevent resolves with AI_ADDRCONFIG, which refuses 127.0.0.1 in a
 * network namespace that has no non-loopback IPv4 address, and then reports a stale errno.
 * Returns the fd or negative errno.
 */
static int
listen_socket(const char *host, uint16_t port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t len;
	int fd, one = 1, r;

	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		len = sizeof(*sin6);
	} else if (strcmp(host, "localhost") == 0) {
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin->sin_port = htons(port);
		len = sizeof(*sin);
	} else {
		return -EINVAL; /* numeric addresses only */
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 128) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int
httpd_new(struct event_base *base, const char *listen, struct metrics *metrics,
    struct httpd **ret)
{
	char host[128];
	uint16_t port;
	struct httpd *h;
	int fd, r;

	r = split_listen(listen, host, sizeof(host), &port);
	if (r < 0)
		return r;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->metrics = metrics;
	h->http = evhttp_new(base);
	if (h->http == NULL) {
		free(h);
		return -ENOMEM;
	}
	evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
	evhttp_set_cb(h->http, "/healthz", healthz_cb, h);
	evhttp_set_cb(h->http, "/readyz", readyz_cb, h);
	evhttp_set_cb(h->http, "/metrics", metrics_cb, h);
	fd = listen_socket(host, port);
	if (fd < 0) {
		r = fd;
		evhttp_free(h->http);
		free(h);
		return r;
	}
	h->fd = fd;
	h->sock = evhttp_accept_socket_with_handle(h->http, fd);
	if (h->sock == NULL) {
		evutil_closesocket(fd);
		evhttp_free(h->http);
		free(h);
		return -ENOMEM;
	}
	{
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
			if (ss.ss_family == AF_INET)
				h->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
			else if (ss.ss_family == AF_INET6)
				h->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		}
	}
	*ret = h;
	return 0;
}

struct httpd *
httpd_free(struct httpd *h)
{
	if (h == NULL)
		return NULL;
	evhttp_free(h->http);
	free(h);
	return NULL;
}

void
httpd_set_ready(struct httpd *h, httpd_ready_fn ready, void *userdata)
{
	h->ready = ready;
	h->ready_userdata = userdata;
}

int
httpd_add_handler(struct httpd *h, const char *path, httpd_handler_fn fn, void *userdata)
{
	return evhttp_set_cb(h->http, path, fn, userdata) == 0 ? 0 : -EEXIST;
}

int
httpd_port(const struct httpd *h)
{
	return h->port;
}

int
httpd_bind_device(struct httpd *h, const char *ifname)
{
	size_t len = strlen(ifname);

	if (len == 0 || len >= IF_NAMESIZE)
		return -EINVAL;
	if (setsockopt(h->fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)len + 1) < 0)
		return -errno;
	return 0;
}
