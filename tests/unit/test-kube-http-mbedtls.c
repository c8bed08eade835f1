/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What only the mbed TLS transport (kube/http-mbedtls.c) does, against the in-memory API
 * server: host names through evdns and the certificate's DNS names, IP-literal servers
 * against its iPAddress names, client certificates and keys from a kubeconfig, a stale
 * keep-alive connection retried after a server restart, a server URL with a path prefix, and
 * cancellation in every phase of a call. The verbs themselves are covered by the kube/ suites
 * run as test-kube-*-mbedtls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "lib/util.h"
#include "tests/helpers/apiserver.h"
#include "tests/runner.h"

static struct test_apiserver *srv;
static struct event_base *base;

static int
suite_init(void)
{
	if (test_apiserver_start(&srv, NULL) < 0)
		return -1;
	base = event_base_new();
	return base ? 0 : -1;
}

static int
suite_cleanup(void)
{
	event_base_free(base);
	test_apiserver_stop(srv);
	return 0;
}

struct answer {
	bool done;
	int error;
	long status;
	char message[512];
};

static void
answer_cb(void *userdata, const struct kube_result *res)
{
	struct answer *a = userdata;

	a->done = true;
	a->error = res->error;
	a->status = res->http_status;
	snprintf(a->message, sizeof(a->message), "%s", res->message);
}

/* A kubeconfig for server (with the test server's CA and token unless told otherwise). */
static struct kube_config *
config_for(const char *server, const char *user_extra)
{
	struct kube_config *c = NULL;
	char kc[4096], path[600], err[512];

	snprintf(kc, sizeof(kc),
	    "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
	    "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
	    "clusters: [{name: k, cluster: {server: '%s', certificate-authority: '%s'}}]\n"
	    "users: [{name: u, user: {token: '%s'%s}}]\n",
	    server, test_apiserver_ca_file(srv), test_apiserver_token(srv),
	    user_extra ? user_extra : "");
	snprintf(path, sizeof(path), "%s/mbedtls-test.yaml", test_apiserver_dir(srv));
	CU_ASSERT_EQUAL_FATAL(write_file_atomic(path, kc, strlen(kc), 0600), 0);
	if (kube_config_from_kubeconfig(path, NULL, &c, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	return c;
}

/* One GET of the namespace list through a new client on cfg; returns the error. */
static int
get_once(struct kube_config *c, struct answer *a)
{
	struct kube_client *client = NULL;
	int r;

	memset(a, 0, sizeof(*a));
	CU_ASSERT_EQUAL_FATAL(kube_client_new(base, c, &client), 0);
	r = kube_get(client, &kube_res_configmaps, "default", "absent", answer_cb, a, NULL);
	CU_ASSERT_EQUAL(r, 0);
	if (r == 0)
		CU_ASSERT_EQUAL(kube_run_until(base, &a->done, 20000), 0);
	kube_client_free(client);
	return a->error;
}

static void
test_hostname(void)
{
	/* "localhost": resolved without blocking (evdns, hosts file), matched to the DNS name
	 * of the certificate; ::1 may come first and is refused, 127.0.0.1 then answers */
	struct kube_config *c;
	struct answer a;
	char url[128];

	snprintf(url, sizeof(url), "https://localhost:%d", test_apiserver_port(srv));
	c = config_for(url, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(get_once(c, &a), -ENOENT);
	CU_ASSERT_EQUAL(a.status, 404);
	kube_config_free(c);
}

static void
test_ip_address_names(void)
{
	/* The same server on 127.0.0.2: its certificate names 127.0.0.1, ::1 and localhost
	 * only, so an IP-literal URL of 127.0.0.2 must fail verification. */
	struct test_apiserver *other = NULL;
	struct kube_config *c;
	struct answer a;
	char url[128];

	CU_ASSERT_EQUAL_FATAL(test_apiserver_start(&other, "--listen 127.0.0.2:0"), 0);
	snprintf(url, sizeof(url), "https://127.0.0.2:%d", test_apiserver_port(other));
	c = config_for(url, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	free(c->ca_file);
	c->ca_file = strdup(test_apiserver_ca_file(other));
	free(c->token);
	c->token = strdup(test_apiserver_token(other));
	CU_ASSERT_EQUAL(get_once(c, &a), -EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(a.message, url));
	CU_ASSERT_PTR_NOT_NULL(strstr(a.message, "CN"));
	kube_config_free(c);

	/* and insecure-skip-tls-verify accepts it */
	c = config_for(url, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	c->insecure = true;
	free(c->token);
	c->token = strdup(test_apiserver_token(other));
	CU_ASSERT_EQUAL(get_once(c, &a), -ENOENT);
	kube_config_free(c);
	test_apiserver_stop(other);
}

static void
test_client_certificate(void)
{
	/* A kubeconfig user with a client certificate and key: both load and are offered (the
	 * test server authenticates by token, so the call itself goes through). */
	struct kube_config *raw = NULL, *c;
	struct answer a;
	char err[512], path[512];

	snprintf(path, sizeof(path), "%s/kube-kubeconfig-raw.yaml", test_data_dir());
	CU_ASSERT_EQUAL_FATAL(kube_config_from_kubeconfig(path, NULL, &raw, err, sizeof(err)), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(raw->cert_data);
	CU_ASSERT_PTR_NOT_NULL_FATAL(raw->key_data);

	c = config_for(test_apiserver_url(srv), NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	c->cert_data = malloc(raw->cert_data_len + 1);
	memcpy(c->cert_data, raw->cert_data, raw->cert_data_len + 1);
	c->cert_data_len = raw->cert_data_len;
	c->key_data = malloc(raw->key_data_len + 1);
	memcpy(c->key_data, raw->key_data, raw->key_data_len + 1);
	c->key_data_len = raw->key_data_len;
	CU_ASSERT_EQUAL(get_once(c, &a), -ENOENT);

	/* a key that is not the certificate's (the test server's CA key): a TLS error saying
	 * so, before any connection */
	snprintf(path, sizeof(path), "%s/ca.key", test_apiserver_dir(srv));
	c->key_file = strdup(path);
	free(c->key_data);
	c->key_data = NULL;
	CU_ASSERT_EQUAL(get_once(c, &a), -EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(a.message, "do not match"));
	/* a truncated key: a TLS error naming it */
	free(c->key_file);
	c->key_file = NULL;
	c->key_data = strdup(raw->key_data);
	c->key_data_len = raw->key_data_len / 2;
	c->key_data[c->key_data_len] = '\0';
	CU_ASSERT_EQUAL(get_once(c, &a), -EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(a.message, "client key data"));

	/* a missing CA file */
	free(c->ca_file);
	c->ca_file = strdup("/nonexistent/ca.crt");
	CU_ASSERT_EQUAL(get_once(c, &a), -EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(a.message, "/nonexistent/ca.crt"));
	kube_config_free(c);
	kube_config_free(raw);
}

static void
test_stale_connection_retried(void)
{
	/* A request leaves its connection idle in the pool; the server restarts (the pooled
	 * connection is dead); the next request is retried on a new connection, not failed. */
	struct kube_config *c = config_for(test_apiserver_url(srv), NULL);
	struct kube_client *client = NULL;
	struct answer a = {0};

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL_FATAL(kube_client_new(base, c, &client), 0);
	for (int round = 0; round < 3; round++) {
		memset(&a, 0, sizeof(a));
		CU_ASSERT_EQUAL(kube_get(client, &kube_res_configmaps, "default", "absent",
				    answer_cb, &a, NULL),
		    0);
		CU_ASSERT_EQUAL(kube_run_until(base, &a.done, 20000), 0);
		CU_ASSERT_EQUAL(a.error, -ENOENT);
		if (round < 2)
			CU_ASSERT_EQUAL_FATAL(test_apiserver_restart(srv), 0);
	}
	kube_client_free(client);
	kube_config_free(c);
}

static void
test_path_prefix(void)
{
	/* A server URL with a path (a proxy in front of the API server): requests go below it.
	 * The test server knows no such path, so the answer is its 404 for that URL. */
	struct kube_config *c;
	struct answer a;
	char url[160];

	snprintf(url, sizeof(url), "%s/k8s/clusters/c-1/", test_apiserver_url(srv));
	c = config_for(url, NULL);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(get_once(c, &a), -ENOENT);
	CU_ASSERT_EQUAL(a.status, 404);
	kube_config_free(c);
}

/* --- cancellation, straight on the transport ------------------------------------------ */

struct raw_call {
	int done;
	int released;
	int error;
	long status;
};

static void
raw_done(void *userdata, int error, long status, const char *body, size_t len, const char *message)
{
	struct raw_call *r = userdata;

	r->done++;
	r->error = error;
	r->status = status;
}

static void
raw_release(void *userdata)
{
	((struct raw_call *)userdata)->released++;
}

static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	*(bool *)arg = true;
}

/* Runs the loop for ms milliseconds. */
static void
run_for(long ms)
{
	bool fired = false;
	struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
	struct event *t = evtimer_new(base, timeout_cb, &fired);

	evtimer_add(t, &tv);
	while (!fired)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(t);
}

/* Runs the loop until the call has been reported or released (at most 30 s). */
static void
run_until_ended(const struct raw_call *r)
{
	for (int i = 0; i < 600 && !r->done && !r->released; i++)
		run_for(50);
}

static void
test_cancel_phases(void)
{
	struct kube_config *c = config_for(test_apiserver_url(srv), NULL);
	struct kube_http *h = NULL;
	struct kube_http_request req = {.method = "GET",
	    .path = "/api/v1/namespaces/default/configmaps/absent",
	    .on_done = raw_done,
	    .release = raw_release};
	struct kube_http_call *call;
	struct raw_call r[4];

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL_FATAL(kube_http_new(base, c, &h), 0);
	memset(r, 0, sizeof(r));

	/* 0: cancelled before the loop ever ran it */
	req.userdata = &r[0];
	CU_ASSERT_EQUAL(kube_http_submit(h, &req, &call), 0);
	kube_http_cancel(call);
	/* 1: cancelled while the server sits on it (delay fault, far longer than the 200 ms the
	 * loop runs before the cancel, so a slow machine still cancels it in flight) */
	CU_ASSERT_EQUAL_FATAL(test_apiserver_fault(srv, "delay?ms=3000&count=1"), 0);
	req.userdata = &r[1];
	CU_ASSERT_EQUAL(kube_http_submit(h, &req, &call), 0);
	run_for(200);
	kube_http_cancel(call);
	kube_http_cancel(call); /* twice is harmless */
	/* 2: runs to the end after the others were cancelled */
	req.userdata = &r[2];
	CU_ASSERT_EQUAL(kube_http_submit(h, &req, NULL), 0);
	run_until_ended(&r[2]);
	CU_ASSERT_EQUAL(r[0].done, 0);
	CU_ASSERT_EQUAL(r[0].released, 1);
	CU_ASSERT_EQUAL(r[1].done, 0);
	CU_ASSERT_EQUAL(r[1].released, 1);
	CU_ASSERT_EQUAL(r[2].done, 1);
	CU_ASSERT_EQUAL(r[2].status, 404);
	CU_ASSERT_EQUAL(r[2].released, 0);

	/* 3: still in flight when the transport is freed: released, never reported */
	CU_ASSERT_EQUAL_FATAL(test_apiserver_fault(srv, "delay?ms=2000&count=1"), 0);
	req.userdata = &r[3];
	CU_ASSERT_EQUAL(kube_http_submit(h, &req, NULL), 0);
	run_for(100);
	h = kube_http_free(h);
	CU_ASSERT_EQUAL(r[3].done, 0);
	CU_ASSERT_EQUAL(r[3].released, 1);
	/* the server's delayed answer finds the connection gone: nothing happens here */
	run_for(2100);
	CU_ASSERT_EQUAL(r[3].done, 0);
	CU_ASSERT_EQUAL(r[3].released, 1);
	kube_config_free(c);
}

static const struct test_case tests[] = {
    {"host name: evdns and the certificate's DNS name", test_hostname},
    {"IP-literal server checked against iPAddress names", test_ip_address_names},
    {"client certificate and key; bad key; missing CA", test_client_certificate},
    {"stale pooled connection retried after a server restart", test_stale_connection_retried},
    {"server URL with a path prefix", test_path_prefix},
    {"cancel before start, in flight, and free with calls in flight", test_cancel_phases},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "kube-http-mbedtls", .init = suite_init, .cleanup = suite_cleanup, .tests = tests},
    {.name = NULL},
};
