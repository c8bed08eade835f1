/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The controller's health against the test API server: /readyz (ctrl_ready) turns not ready,
 * with a reason, once the API server has been unreachable past the threshold and ready again
 * when it is back (a threshold not reached leaves it ready); an invalid IPPool written again
 * and again is logged once per error text, every reconcile counted. Waits are bounded by a
 * generous deadline; nothing asserts on speed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <jansson.h>

#include "controller/ctrl-internal.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/util.h"
#include "tests/helpers/apiserver.h"
#include "tests/helpers/poll.h"
#include "tests/helpers/capture.h"
#include "tests/runner.h"

#define WAIT_MS 20000
#define NS "default"
#define CTRL_NS "vmdhcp"
#define POOLS "/apis/network.harvesterhci.io/v1alpha1/namespaces/" NS "/ippools"

struct env {
	struct test_apiserver *api;
	struct event_base *base;
	struct kube_config *cfg;
	struct kube_client *client;
	struct metrics *metrics;
	struct ctrl *ctrl;
};

static long
request(struct env *e, const char *method, const char *path, const char *ctype, const char *body)
{
	long code = 0;

	if (test_apiserver_request(e->api, method, path, ctype, body, &code, NULL) < 0)
		return -1;
	return code;
}

static bool
env_start(struct env *e, uint64_t api_outage_usec)
{
	char err[256];

	memset(e, 0, sizeof(*e));
	log_init("test-controller", LOG_LEVEL_WARN);
	if (test_apiserver_start(&e->api, NULL) < 0) {
		CU_FAIL("test API server did not start");
		return false;
	}
	snprintf(err, sizeof(err), "%s/../../crds", test_data_dir());
	if (test_apiserver_apply_crds(e->api, err) < 0) {
		CU_FAIL("CRDs not applied");
		return false;
	}
	e->base = event_base_new();
	if (e->base == NULL || metrics_new(&e->metrics) < 0 ||
	    kube_config_from_kubeconfig(
		test_apiserver_kubeconfig(e->api), NULL, &e->cfg, err, sizeof(err)) < 0 ||
	    kube_client_new(e->base, e->cfg, &e->client) < 0) {
		CU_FAIL("client set-up");
		return false;
	}
	struct ctrl_opts o = {
	    .namespace = CTRL_NS,
	    .agent_image = "registry.example/vm-dhcp-agent:v1",
	    .agent_sa = "vm-dhcp-agent",
	    .requeue_usec = 200000,
	    .api_outage_usec = api_outage_usec,
	};
	if (ctrl_new(e->base, e->client, e->metrics, &o, &e->ctrl) < 0) {
		CU_FAIL("controller did not start");
		return false;
	}
	ctrl_lead(e->ctrl);
	return true;
}

static void
env_stop(struct env *e)
{
	e->ctrl = ctrl_free(e->ctrl);
	kube_client_free(e->client);
	kube_config_free(e->cfg);
	metrics_free(e->metrics);
	if (e->base != NULL)
		event_base_free(e->base);
	test_apiserver_stop(e->api);
}

struct ready_want {
	struct env *e;
	bool ready;
	char why[512];
};

static bool
ready_is(void *arg)
{
	struct ready_want *w = arg;

	w->why[0] = '\0';
	return ctrl_ready(w->e->ctrl, w->why, sizeof(w->why)) == w->ready &&
	       (!w->ready || w->e->ctrl->reconciling);
}

/* Every informer of the controller has a failure on record. */
static bool
all_failing(void *arg)
{
	struct env *e = arg;

	for (size_t i = 0; i < ctrl_n_kinds; i++) {
		struct kube_informer *inf = *ctrl_kind_informer(e->ctrl, &ctrl_kinds[i]);
		struct kube_informer_stats st;

		if (inf == NULL)
			continue;
		kube_informer_get_stats(inf, &st);
		if (st.failures == 0)
			return false;
	}
	return true;
}

/* A threshold of 1 µs: not ready as soon as every informer fails; ready again after. */
static void
test_readyz_api_outage(void)
{
	struct env e;
	struct ready_want w = {.e = &e, .ready = true};

	if (!env_start(&e, 1))
		goto out;
	CU_ASSERT_FATAL(test_poll_until(e.base, ready_is, &w, WAIT_MS));
	CU_ASSERT_EQUAL(test_apiserver_terminate(e.api), 0);
	w.ready = false;
	CU_ASSERT(test_poll_until(e.base, ready_is, &w, WAIT_MS));
	CU_ASSERT_PTR_NOT_NULL(strstr(w.why, "API server unreachable"));
	if (strstr(w.why, "API server unreachable") == NULL)
		fprintf(stderr, "not ready because: %s\n", w.why);
	CU_ASSERT_EQUAL(test_apiserver_restart(e.api), 0);
	w.ready = true;
	CU_ASSERT(test_poll_until(e.base, ready_is, &w, WAIT_MS));
out:
	env_stop(&e);
}

/* The default threshold (30 s) is far: an outage shorter than it leaves /readyz ok. */
static void
test_readyz_short_outage(void)
{
	struct env e;
	struct ready_want w = {.e = &e, .ready = true};
	char why[256] = "";

	if (!env_start(&e, 0))
		goto out;
	CU_ASSERT_FATAL(test_poll_until(e.base, ready_is, &w, WAIT_MS));
	CU_ASSERT_EQUAL(test_apiserver_terminate(e.api), 0);
	CU_ASSERT(test_poll_until(e.base, all_failing, &e, WAIT_MS));
	CU_ASSERT(ctrl_ready(e.ctrl, why, sizeof(why)));
	CU_ASSERT_EQUAL(test_apiserver_restart(e.api), 0);
	CU_ASSERT(test_poll_until(e.base, ready_is, &w, WAIT_MS));
out:
	env_stop(&e);
}

struct count_want {
	struct env *e;
	double n;
};

static bool
invalid_seen(void *arg)
{
	struct count_want *w = arg;

	return w->e->ctrl->m_invalid != NULL && metric_get(w->e->ctrl->m_invalid, 0) >= w->n;
}

/*
 * An invalid IPPool written again and again (a watch event and a reconcile each time): one
 * log line (one per reconcile before), every reconcile counted; another error is said again.
 */
static void
test_invalid_pool_logged_once(void)
{
	enum { REPEATS = 20 };
	static const char needle[] = "ippool " NS "/p-loud: invalid";
	struct env e;
	struct ready_want w = {.e = &e, .ready = true};
	struct count_want cw = {.e = &e};
	char body[256], tmpl[] = "/tmp/test-controller-health-XXXXXX";
	int log_fd, saved = -1;
	unsigned once = 0, twice = 0;

	log_fd = mkstemp(tmpl);
	CU_ASSERT_FATAL(log_fd >= 0);
	unlink(tmpl);
	if (!env_start(&e, 0))
		goto out;
	CU_ASSERT_FATAL(test_poll_until(e.base, ready_is, &w, WAIT_MS));
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	CU_ASSERT_FATAL(saved >= 0);
	dup2(log_fd, STDERR_FILENO);
	/* an IPPool the controller cannot decode: a CIDR that is none */
	CU_ASSERT_EQUAL(
	    request(&e, "POST", POOLS, NULL,
		"{\"apiVersion\":\"network.harvesterhci.io/v1alpha1\",\"kind\":\"IPPool\","
		"\"metadata\":{\"name\":\"p-loud\",\"namespace\":\"" NS "\"},"
		"\"spec\":{\"networkName\":\"" NS "/net\",\"ipv4Config\":{"
		"\"serverIP\":\"10.0.0.2\",\"cidr\":\"nope\","
		"\"pool\":{\"start\":\"10.0.0.10\",\"end\":\"10.0.0.20\"}}}}"),
	    201);
	cw.n = 1;
	CU_ASSERT(test_poll_until(e.base, invalid_seen, &cw, WAIT_MS));
	for (unsigned i = 0; i < REPEATS; i++) {
		snprintf(body, sizeof(body), "{\"metadata\":{\"annotations\":{\"n\":\"%u\"}}}", i);
		cw.n = metric_get(e.ctrl->m_invalid, 0) + 1;
		CU_ASSERT_EQUAL(
		    request(&e, "PATCH", POOLS "/p-loud", "application/merge-patch+json", body),
		    200);
		CU_ASSERT(test_poll_until(e.base, invalid_seen, &cw, WAIT_MS));
	}
	fflush(stderr);
	once = test_count_in_fd(log_fd, needle);
	cw.n = metric_get(e.ctrl->m_invalid, 0) + 1;
	CU_ASSERT_EQUAL(request(&e, "PATCH", POOLS "/p-loud", "application/merge-patch+json",
			    "{\"spec\":{\"ipv4Config\":{\"cidr\":\"still-not\"}}}"),
	    200);
	CU_ASSERT(test_poll_until(e.base, invalid_seen, &cw, WAIT_MS));
	fflush(stderr);
	twice = test_count_in_fd(log_fd, needle);
	dup2(saved, STDERR_FILENO);
	close(saved);
	CU_ASSERT(metric_get(e.ctrl->m_invalid, 0) >= 1 + REPEATS + 1);
	CU_ASSERT_EQUAL(once, 1);
	CU_ASSERT_EQUAL(twice, 2);
	if (once != 1 || twice != 2)
		fprintf(stderr, "log lines: %u after %d versions, %u after another error\n", once,
		    1 + REPEATS, twice);
out:
	close(log_fd);
	env_stop(&e);
}

static const struct test_case health_tests[] = {
    {"readyz: not ready in an API outage, ready after", test_readyz_api_outage},
    {"readyz: a short outage stays ready", test_readyz_short_outage},
    {"invalid IPPool: logged once per error", test_invalid_pool_logged_once},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "controller-health", .tests = health_tests},
    {.name = NULL},
};
