/* SPDX-License-Identifier: Apache-2.0 */
#include "tests/helpers/ctrl-env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "controller/ctrl-internal.h"
#include "kube/kube.h"
#include "tests/helpers/apiserver.h"
#include "tests/helpers/poll.h"
#include "tests/runner.h"

bool
test_env_start(struct env *e, const char *log_name, enum log_level level, const char *crds_dir)
{
	char err[256];

	memset(e, 0, sizeof(*e));
	log_init(log_name, level);
	if (test_apiserver_start(&e->api, NULL) < 0) {
		CU_FAIL("test API server did not start");
		return false;
	}
	snprintf(err, sizeof(err), "%s/%s", test_data_dir(), crds_dir != NULL ? crds_dir : "");
	if (crds_dir != NULL && test_apiserver_apply_crds(e->api, err) < 0) {
		CU_FAIL("CRDs not applied");
		return false;
	}
	e->base = event_base_new();
	if (e->base == NULL ||
	    kube_config_from_kubeconfig(
		test_apiserver_kubeconfig(e->api), NULL, &e->cfg, err, sizeof(err)) < 0 ||
	    kube_client_new(e->base, e->cfg, &e->client) < 0) {
		CU_FAIL("client set-up");
		return false;
	}
	return true;
}

void
test_env_stop(struct env *e)
{
	/* let the last writes answer, so nothing is dropped with the client */
	if (e->ctrl != NULL)
		test_env_wait(e, test_env_no_writes_in_flight, NULL, 20000);
	e->ctrl = ctrl_free(e->ctrl);
	kube_client_free(e->client);
	kube_config_free(e->cfg);
	if (e->base != NULL)
		event_base_free(e->base);
	test_apiserver_stop(e->api);
}

json_t *
test_env_request(struct env *e, const char *method, const char *path, const char *ctype,
    json_t *body, long *code)
{
	return test_apiserver_json(e->api, method, path, ctype, body, code);
}

struct pred_call {
	struct env *e;
	pred_fn pred;
	const void *arg;
};

static bool
pred_call(void *p)
{
	const struct pred_call *c = p;

	return c->pred(c->e, c->arg);
}

bool
test_env_wait(struct env *e, pred_fn pred, const void *arg, long timeout_ms)
{
	struct pred_call c = {e, pred, arg};

	return test_poll_until(e->base, pred_call, &c, timeout_ms);
}

bool
test_env_no_writes_in_flight(struct env *e, const void *arg)
{
	return e->ctrl == NULL || e->ctrl->inflight == 0;
}

bool
test_env_ctrl_ready(struct env *e, const void *arg)
{
	char why[64];

	return ctrl_ready(e->ctrl, why, sizeof(why)) && e->ctrl->reconciling;
}
