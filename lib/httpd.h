/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_HTTPD_H
#define VMDHCP_LIB_HTTPD_H

#include <stdbool.h>
#include <stddef.h>

struct event_base;
struct evhttp_request;
struct metrics;
struct httpd;

/*
 * The health/metrics HTTP endpoint of a process, on its libevent loop:
 *   GET /healthz  -> 200 "ok" while the loop runs
 *   GET /readyz   -> 200 "ok" when the ready callback says so, else 503 with its reason
 *   GET /metrics  -> Prometheus text of the registry
 * listen is "HOST:PORT", ":PORT" (all IPv4 addresses) or "[V6]:PORT"; HOST is numeric (or
 * "localhost" for 127.0.0.1).
 * Returns 0 and a new server in *ret, or negative errno (-EINVAL bad address,
 * -EADDRINUSE, ...). base and metrics are borrowed; metrics may be NULL.
 */
int httpd_new(struct event_base *base, const char *listen, struct metrics *metrics,
    struct httpd **ret);
struct httpd *httpd_free(struct httpd *h);

/* ready(userdata, reason, reason_len) returns true when ready; else fills reason. */
typedef bool (*httpd_ready_fn)(void *userdata, char *reason, size_t reason_len);
void httpd_set_ready(struct httpd *h, httpd_ready_fn ready, void *userdata);

/* Extra handler for an exact path (borrowed string). */
typedef void (*httpd_handler_fn)(struct evhttp_request *req, void *userdata);
int httpd_add_handler(struct httpd *h, const char *path, httpd_handler_fn fn, void *userdata);

/* The port actually bound (useful with ":0" in tests). */
int httpd_port(const struct httpd *h);

/*
 * Accepts connections that arrive on interface ifname only (SO_BINDTODEVICE on the listening
 * socket): Linux delivers a packet for any local address whatever interface it came in on,
 * so an address alone does not keep the hosts of another interface out. Needs CAP_NET_RAW
 * unless the socket has no device yet (Linux >= 5.7). Returns 0 or negative errno.
 */
int httpd_bind_device(struct httpd *h, const char *ifname);

#endif
