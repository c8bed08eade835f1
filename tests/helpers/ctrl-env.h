/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_TESTS_HELPERS_CTRL_ENV_H
#define VMDHCP_TESTS_HELPERS_CTRL_ENV_H

/*
 * The controller's in-process suites on the test API server (test-controller-apiserver,
 * -migrate, -status-budget): the server, a client on a new event loop, and the controller a
 * suite starts on them itself (ctrl_new(e->base, e->client, ...) into e->ctrl). The suites
 * call it `struct env` and write their conditions as predicates on it (pred_fn).
 */

#include <stdbool.h>

#include <jansson.h>

#include "lib/log.h"

struct env {
	struct test_apiserver *api;
	struct event_base *base;
	struct kube_config *cfg;
	struct kube_client *client;
	struct ctrl *ctrl;
};

typedef bool (*pred_fn)(struct env *e, const void *arg);

/*
 * Zeroes e; log_init(log_name, level); starts the server, applies the CRDs of the folder
 * crds_dir (relative to the test data directory; NULL: none); a client on a new loop. false,
 * after a CU_FAIL naming the step, when a step fails (test_env_stop frees what was made).
 */
bool test_env_start(
    struct env *e, const char *log_name, enum log_level level, const char *crds_dir);

/* Lets the controller's writes in flight answer, then frees the controller, the client, the
 * loop and the server. */
void test_env_stop(struct env *e);

/* A request with body's compact text (body not taken; NULL: none): the answer decoded (a new
 * reference, NULL when it is not JSON) and its status in *code (when not NULL; 0: none). */
json_t *test_env_request(struct env *e, const char *method, const char *path, const char *ctype,
    json_t *body, long *code);

/* Runs the loop until pred(e, arg) holds, at most timeout_ms (a bound against a hang). */
bool test_env_wait(struct env *e, pred_fn pred, const void *arg, long timeout_ms);

/* Predicates: no write of the controller in flight (or no controller); the controller ready
 * (its caches synced) and reconciling. */
bool test_env_no_writes_in_flight(struct env *e, const void *arg);
bool test_env_ctrl_ready(struct env *e, const void *arg);

#endif
