/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_TESTS_HELPERS_APISERVER_H
#define VMDHCP_TESTS_HELPERS_APISERVER_H

#include <stddef.h>

#include <jansson.h>

/*
 * Test harness for build/test-apiserver, the in-memory Kubernetes API server used by the
 * tests (see docs/apiserver.md). Linked into every test binary.
 *
 * $VMDHCP_APISERVER_WRAPPER (e.g. "valgrind -q --error-exitcode=99 --leak-check=full") is put
 * in front of the server's command line.
 * The binary is found as $VMDHCP_APISERVER, else next to the test binary's build directory
 * (BUILD/tests/test-x -> BUILD/test-apiserver, so ASan builds use the ASan server), else
 * build/test-apiserver. Each server gets a fresh temporary state directory holding ca.crt,
 * ca.key, kubeconfig, port and data.json (the --data file, so a restart keeps objects and the
 * resourceVersion). The server's stderr is inherited.
 *
 *   struct test_apiserver *a;
 *   if (test_apiserver_start(&a, NULL) < 0) { CU_FAIL("apiserver"); return; }
 *   ... point a client at test_apiserver_kubeconfig(a) ...
 *   test_apiserver_fault(a, "fail?code=500&count=2");
 *   test_apiserver_restart(a);
 *   test_apiserver_stop(a);
 */

struct test_apiserver;

/*
 * Start a server on 127.0.0.1 with an ephemeral port and wait (up to 20 s) until it wrote
 * DIR/port. extra_args (borrowed, may be NULL) is a whitespace-separated list of extra
 * arguments, e.g. "--history 100 --bookmark-interval 1 --log-level debug".
 * Returns 0 and a new handle in *ret, or negative errno (-ENOENT binary not found,
 * -ETIMEDOUT never became ready, -ECHILD exited early).
 */
int test_apiserver_start(struct test_apiserver **ret, const char *extra_args);

/*
 * SIGTERM (the server saves its data) and wait, keeping the state directory. Returns 0 when
 * the server exited with status 0 (so a test can assert a clean exit: no sanitizer or
 * valgrind error), -EPROTO otherwise, -ETIMEDOUT when it had to be killed. Calling it again
 * returns the same verdict.
 */
int test_apiserver_terminate(struct test_apiserver *a);

/* Terminate (as above) if still running, remove the state directory, free.
 * Accepts NULL; returns NULL. */
struct test_apiserver *test_apiserver_stop(struct test_apiserver *a);

/* SIGTERM, wait, start again on the same port with the same --data file, CA and extra
 * arguments; wait until ready. Objects and the resourceVersion survive; open connections and
 * watches do not. Returns 0 or negative errno (-EPROTO: the old process exited non-zero). */
int test_apiserver_restart(struct test_apiserver *a);

/* Borrowed strings, valid until stop. */
const char *test_apiserver_kubeconfig(const struct test_apiserver *a); /* DIR/kubeconfig path */
const char *test_apiserver_url(const struct test_apiserver *a);	       /* https://127.0.0.1:PORT */
const char *test_apiserver_token(const struct test_apiserver *a);      /* bearer token */
const char *test_apiserver_ca_file(const struct test_apiserver *a);    /* DIR/ca.crt path */
const char *test_apiserver_dir(const struct test_apiserver *a);	       /* state directory */
int test_apiserver_port(const struct test_apiserver *a);
int test_apiserver_pid(const struct test_apiserver *a);

/*
 * Fault injection: POST URL/_test/<what> with the bearer token, e.g. "close-watches",
 * "stall-watches" (open watches stay open but send nothing more, not even bookmarks),
 * "fail?code=500&count=2", "fail?code=429&count=1" (also &method=, &path= prefix, and
 * &message= for the Status message, URL-encoded), "delay?ms=200&count=3", "compact", "save".
 * Returns 0 on a 2xx answer, -EIO on another status, negative errno on transport errors.
 */
int test_apiserver_fault(struct test_apiserver *a, const char *what);

/*
 * One synchronous HTTPS request (libcurl, verifying the server with the CA, bearer token).
 * method "GET"/"POST"/"PUT"/"PATCH"/"DELETE"; path starts with '/' (query allowed);
 * content_type and body may be NULL (content type defaults to application/json when a body
 * is given). On success returns 0 and the HTTP status in *ret_code and, when ret_body is not
 * NULL, a new NUL-terminated response body the caller frees. Negative errno on transport
 * errors.
 */
int test_apiserver_request(struct test_apiserver *a, const char *method, const char *path,
    const char *content_type, const char *body, long *ret_code, char **ret_body);
/*
 * The same with JSON in and out: body (borrowed, may be NULL) sent compact; the answer parsed,
 * or NULL (no answer, or not JSON). The HTTP status in *ret_code when not NULL (0 on a
 * transport error).
 */
json_t *test_apiserver_json(struct test_apiserver *a, const char *method, const char *path,
    const char *content_type, json_t *body, long *ret_code);

/*
 * Creates the project's CustomResourceDefinitions (ippools.yaml and
 * virtualmachinenetworkconfigs.yaml of crds_dir, the source tree's crds/), so the server
 * prunes and defaults IPPools and VMNetCfgs by their schemas as a cluster does. 0, or
 * negative errno (the file or status in the log).
 */
int test_apiserver_apply_crds(struct test_apiserver *a, const char *crds_dir);

#endif
