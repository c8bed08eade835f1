/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Verbs over generic resource descriptors; Status answers mapped to errno. Each verb can hand
 * back its call (struct kube_call) to cancel: a plain request's record, or the loop of a
 * read-modify-write (kube_update_retry), whose cancel stops whichever of its GET and PUT
 * is in flight.
 *
 * Paths and queries are built in kube/path.c, answers read into results in kube/result.c, and
 * the waits of start-up code in kube/sync.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "lib/log.h"

#define PATH_MAX_LEN 2048

struct kube_client {
	struct event_base *base;
	struct kube_config *cfg;
	struct kube_http *http;
	struct retry_ctx *retries; /* read-modify-write loops in progress */
};

/*
 * The handle of a verb: first member of the request's record (req_ctx) or of the
 * read-modify-write loop (retry_ctx).
 */
struct kube_call {
	bool retry; /* a retry_ctx; else a req_ctx */
};

struct retry_ctx;
static void retry_unlink_free(struct retry_ctx *r);

int
kube_client_new(struct event_base *base, struct kube_config *cfg, struct kube_client **ret)
{
	struct kube_client *c;
	int rc;

	if (!base || !cfg)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->base = base;
	c->cfg = cfg;
	rc = kube_http_new(base, cfg, &c->http);
	if (rc < 0) {
		free(c);
		return rc;
	}
	{
		const struct kube_answer_limit *lim = kube_answer_limit();
		char cap[32];

		kube_format_size(lim->bytes, cap, sizeof(cap));
		log_debug("API answers held up to %s (%s)", cap, lim->source);
	}
	*ret = c;
	return 0;
}

struct kube_client *
kube_client_free(struct kube_client *c)
{
	if (!c)
		return NULL;
	kube_http_free(c->http); /* no callbacks: the retry loops just stop */
	while (c->retries)
		retry_unlink_free(c->retries);
	free(c);
	return NULL;
}

void
kube_client_set_timeouts(struct kube_client *c, long request_ms, long connect_ms)
{
	kube_http_set_timeouts(c->http, request_ms, connect_ms);
}

struct event_base *
kube_client_base(const struct kube_client *c)
{
	return c->base;
}

struct kube_http *
kube_client_http(struct kube_client *c)
{
	return c->http;
}

struct req_ctx {
	struct kube_call call; /* the handle: first */
	struct kube_http_call *http;
	kube_done_fn done;
	kube_raw_done_fn raw_done; /* instead of done: the 2xx body as text */
	void *userdata;
	bool metadata_only;
};

static void
req_done(void *userdata, int error, long status, const char *body, size_t len, const char *message)
{
	struct req_ctx *ctx = userdata;
	struct kube_result res;
	json_t *obj;

	if (ctx->raw_done && error == 0 && status >= 200 && status < 300) {
		memset(&res, 0, sizeof(res));
		res.http_status = status;
		res.reason = "";
		res.message = message ? message : "";
		ctx->raw_done(ctx->userdata, &res, body ? body : "", body ? len : 0);
		free(ctx);
		return;
	}
	kube_result_from_http_opts(
	    &res, error, status, body, len, message, ctx->metadata_only, &obj);
	if (ctx->raw_done)
		ctx->raw_done(ctx->userdata, &res, NULL, 0);
	else
		ctx->done(ctx->userdata, &res);
	json_decref(obj);
	free(ctx);
}

static int
submit_call(struct kube_client *c, const char *method, const char *path, const char *ctype,
    const json_t *body, kube_done_fn done, void *userdata, struct kube_call **ret_call,
    struct kube_http_call **ret_http, bool metadata_only, kube_raw_done_fn raw_done)
{
	struct kube_http_request req = {
	    .method = method,
	    .path = path,
	    .content_type = ctype,
	    .on_done = req_done,
	    .release = free,
	};
	struct req_ctx *ctx;
	char *text = NULL;
	int rc;

	if (!done && !raw_done)
		return -EINVAL;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->done = done;
	ctx->userdata = userdata;
	ctx->metadata_only = metadata_only;
	ctx->raw_done = raw_done;
	if (body) {
		text = json_dumps(body, JSON_COMPACT);
		if (!text) {
			free(ctx);
			return -ENOMEM;
		}
		req.body = text;
		req.body_len = strlen(text);
	}
	req.userdata = ctx;
	rc = kube_http_submit(c->http, &req, &ctx->http);
	free(text);
	if (rc < 0) {
		free(ctx);
		return rc;
	}
	if (ret_call)
		*ret_call = &ctx->call;
	if (ret_http)
		*ret_http = ctx->http;
	return 0;
}

static int
submit(struct kube_client *c, const char *method, const char *path, const char *ctype,
    const json_t *body, kube_done_fn done, void *userdata, struct kube_call **ret_call)
{
	return submit_call(
	    c, method, path, ctype, body, done, userdata, ret_call, NULL, false, NULL);
}

/* --- verbs -------------------------------------------------------------------------------- */

int
kube_get(struct kube_client *c, const struct kube_resource *res, const char *ns, const char *name,
    kube_done_fn done, void *userdata, struct kube_call **ret_call)
{
	char path[PATH_MAX_LEN];
	int rc;

	if (!name)
		return -EINVAL;
	rc = kube_resource_path(res, ns, name, NULL, path, sizeof(path));
	if (rc < 0)
		return rc;
	return submit(c, "GET", path, NULL, NULL, done, userdata, ret_call);
}

static int
list(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const struct kube_list_opts *opts, kube_done_fn done, kube_raw_done_fn raw_done, void *userdata,
    struct kube_call **ret_call, struct kube_http_call **ret_http)
{
	char path[PATH_MAX_LEN], limit[24];
	int rc;

	rc = kube_resource_path(res, ns, NULL, NULL, path, sizeof(path));
	if (rc < 0)
		return rc;
	if (opts) {
		snprintf(limit, sizeof(limit), "%u", opts->limit);
		if ((rc = kube_query_add(
			 path, sizeof(path), "labelSelector", opts->label_selector)) < 0 ||
		    (rc = kube_query_add(
			 path, sizeof(path), "fieldSelector", opts->field_selector)) < 0 ||
		    (rc = kube_query_add(path, sizeof(path), "limit", opts->limit ? limit : NULL)) <
			0 ||
		    (rc = kube_query_add(path, sizeof(path), "continue",
			 opts->continue_token && *opts->continue_token ? opts->continue_token
								       : NULL)) < 0 ||
		    (rc = kube_query_add(
			 path, sizeof(path), "resourceVersion", opts->resource_version)) < 0)
			return rc;
	}
	return submit_call(c, "GET", path, NULL, NULL, done, userdata, ret_call, ret_http,
	    opts && opts->metadata_only, raw_done);
}

int
kube_list(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const struct kube_list_opts *opts, kube_done_fn done, void *userdata,
    struct kube_call **ret_call)
{
	return list(c, res, ns, opts, done, NULL, userdata, ret_call, NULL);
}

int
kube_list_raw_call(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const struct kube_list_opts *opts, kube_raw_done_fn done, void *userdata,
    struct kube_http_call **ret)
{
	if (!done)
		return -EINVAL;
	return list(c, res, ns, opts, NULL, done, userdata, NULL, ret);
}

/* Ensures apiVersion/kind on a copy when missing (the API server requires them on writes). */
static json_t *
with_type_meta(const struct kube_resource *res, const json_t *obj)
{
	json_t *copy = json_copy((json_t *)obj);
	char av[128];

	if (!copy)
		return NULL;
	if (!json_object_get(copy, "apiVersion"))
		json_object_set_new(copy, "apiVersion",
		    json_string(kube_resource_api_version(res, av, sizeof(av))));
	if (!json_object_get(copy, "kind") && res->kind)
		json_object_set_new(copy, "kind", json_string(res->kind));
	return copy;
}

int
kube_create(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const json_t *obj, kube_done_fn done, void *userdata, struct kube_call **ret_call)
{
	char path[PATH_MAX_LEN];
	json_t *body;
	int rc;

	if (!json_is_object(obj))
		return -EINVAL;
	if (!ns)
		ns = kube_obj_namespace(obj);
	if (res->namespaced && (!ns || !*ns))
		return -EINVAL;
	rc = kube_resource_path(res, ns, NULL, NULL, path, sizeof(path));
	if (rc < 0)
		return rc;
	body = with_type_meta(res, obj);
	if (!body)
		return -ENOMEM;
	rc = submit(c, "POST", path, "application/json", body, done, userdata, ret_call);
	json_decref(body);
	return rc;
}

static int
put(struct kube_client *c, const struct kube_resource *res, const json_t *obj,
    const char *subresource, kube_done_fn done, void *userdata, struct kube_call **ret_call)
{
	char path[PATH_MAX_LEN];
	json_t *body;
	int rc;

	if (!json_is_object(obj))
		return -EINVAL;
	rc = kube_resource_path(
	    res, kube_obj_namespace(obj), kube_obj_name(obj), subresource, path, sizeof(path));
	if (rc < 0)
		return rc;
	body = with_type_meta(res, obj);
	if (!body)
		return -ENOMEM;
	rc = submit(c, "PUT", path, "application/json", body, done, userdata, ret_call);
	json_decref(body);
	return rc;
}

int
kube_update(struct kube_client *c, const struct kube_resource *res, const json_t *obj,
    kube_done_fn done, void *userdata, struct kube_call **ret_call)
{
	return put(c, res, obj, NULL, done, userdata, ret_call);
}

int
kube_update_status(struct kube_client *c, const struct kube_resource *res, const json_t *obj,
    kube_done_fn done, void *userdata, struct kube_call **ret_call)
{
	return put(c, res, obj, "status", done, userdata, ret_call);
}

static const char *const patch_types[] = {
    [KUBE_PATCH_MERGE] = "application/merge-patch+json",
    [KUBE_PATCH_JSON] = "application/json-patch+json",
};

int
kube_patch(struct kube_client *c, const struct kube_resource *res, const char *ns, const char *name,
    enum kube_patch_type type, const json_t *patch, const char *subresource, kube_done_fn done,
    void *userdata, struct kube_call **ret_call)
{
	char path[PATH_MAX_LEN];
	int rc;

	if ((unsigned)type >= sizeof(patch_types) / sizeof(patch_types[0]) || !name || !patch)
		return -EINVAL;
	if ((type == KUBE_PATCH_JSON) != json_is_array(patch))
		return -EINVAL;
	rc = kube_resource_path(res, ns, name, subresource, path, sizeof(path));
	if (rc < 0)
		return rc;
	return submit(c, "PATCH", path, patch_types[type], patch, done, userdata, ret_call);
}

int
kube_delete(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const char *name, const struct kube_delete_opts *opts, kube_done_fn done, void *userdata,
    struct kube_call **ret_call)
{
	char path[PATH_MAX_LEN];
	json_t *body = NULL;
	int rc;

	if (!name)
		return -EINVAL;
	rc = kube_resource_path(res, ns, name, NULL, path, sizeof(path));
	if (rc < 0)
		return rc;
	if (opts && (opts->uid || opts->resource_version || opts->propagation)) {
		json_t *pre = json_object();

		body = json_pack("{s:s, s:s}", "apiVersion", "v1", "kind", "DeleteOptions");
		if (!body || !pre) {
			json_decref(body);
			json_decref(pre);
			return -ENOMEM;
		}
		if (opts->uid)
			json_object_set_new(pre, "uid", json_string(opts->uid));
		if (opts->resource_version)
			json_object_set_new(
			    pre, "resourceVersion", json_string(opts->resource_version));
		if (json_object_size(pre))
			json_object_set_new(body, "preconditions", pre);
		else
			json_decref(pre);
		if (opts->propagation)
			json_object_set_new(
			    body, "propagationPolicy", json_string(opts->propagation));
	}
	rc = submit(
	    c, "DELETE", path, body ? "application/json" : NULL, body, done, userdata, ret_call);
	json_decref(body);
	return rc;
}

/* --- read-modify-write with retry ---------------------------------------------------------- */

struct retry_ctx {
	struct kube_call call; /* the handle: first */
	struct retry_ctx *next, *prev;
	struct kube_client *c;
	const struct kube_resource *res;
	char *ns, *name;
	bool status;
	bool in_callback; /* inside mutate or done: a cancel only marks */
	bool cancelled;
	unsigned attempts, max_attempts;
	struct kube_call *step; /* the GET or PUT in flight */
	kube_mutate_fn mutate;
	kube_done_fn done;
	void *userdata;
};

static void retry_got(void *userdata, const struct kube_result *res);

static void
retry_unlink_free(struct retry_ctx *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		r->c->retries = r->next;
	if (r->next)
		r->next->prev = r->prev;
	free(r->ns);
	free(r->name);
	free(r);
}

static void
retry_finish(struct retry_ctx *r, const struct kube_result *res)
{
	r->in_callback = true; /* done may cancel its own call: nothing left to do then */
	r->done(r->userdata, res);
	retry_unlink_free(r);
}

static void
retry_fail(struct retry_ctx *r, int err, const char *message)
{
	struct kube_result res = {.error = err, .reason = "", .message = message};

	retry_finish(r, &res);
}

static void
retry_put_done(void *userdata, const struct kube_result *res)
{
	struct retry_ctx *r = userdata;
	int rc;

	r->step = NULL;
	if (res->error == -ESTALE && r->attempts < r->max_attempts) {
		rc = kube_get(r->c, r->res, r->ns, r->name, retry_got, r, &r->step);
		if (rc < 0)
			retry_fail(r, rc, "re-read after conflict failed");
		return;
	}
	retry_finish(r, res);
}

static void
retry_got(void *userdata, const struct kube_result *res)
{
	struct retry_ctx *r = userdata;
	int rc;

	r->step = NULL;
	if (res->error < 0) {
		retry_finish(r, res);
		return;
	}
	r->attempts++;
	r->in_callback = true;
	rc = r->mutate(r->userdata, res->object);
	r->in_callback = false;
	if (r->cancelled) { /* by mutate */
		retry_unlink_free(r);
		return;
	}
	if (rc != 0) {
		if (rc > 0)
			retry_finish(r, res); /* nothing to write: report the current object */
		else
			retry_fail(r, rc, "mutate refused the object");
		return;
	}
	rc = put(
	    r->c, r->res, res->object, r->status ? "status" : NULL, retry_put_done, r, &r->step);
	if (rc < 0)
		retry_fail(r, rc, "cannot send update");
}

static void
retry_cancel(struct retry_ctx *r)
{
	if (r->in_callback) {
		r->cancelled = true; /* freed when mutate returns, or after done anyway */
		return;
	}
	kube_call_cancel(r->step);
	retry_unlink_free(r);
}

int
kube_update_retry(struct kube_client *c, const struct kube_resource *res, const char *ns,
    const char *name, bool status, unsigned max_attempts, kube_mutate_fn mutate, kube_done_fn done,
    void *userdata, struct kube_call **ret_call)
{
	struct retry_ctx *r;
	int rc;

	if (!mutate || !done || !name)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->call.retry = true;
	r->c = c;
	r->res = res;
	r->ns = ns ? strdup(ns) : NULL;
	r->name = strdup(name);
	r->status = status;
	r->max_attempts = max_attempts ? max_attempts : 5;
	r->mutate = mutate;
	r->done = done;
	r->userdata = userdata;
	if ((ns && !r->ns) || !r->name) {
		free(r->ns);
		free(r->name);
		free(r);
		return -ENOMEM;
	}
	r->next = c->retries;
	if (c->retries)
		c->retries->prev = r;
	c->retries = r;
	rc = kube_get(c, res, ns, name, retry_got, r, &r->step);
	if (rc < 0) {
		retry_unlink_free(r);
		return rc;
	}
	if (ret_call)
		*ret_call = &r->call;
	return 0;
}

/* --- cancel ------------------------------------------------------------------------------------
 */

void
kube_call_cancel(struct kube_call *call)
{
	if (!call)
		return;
	if (call->retry) {
		retry_cancel((struct retry_ctx *)call);
		return;
	}
	/* A request cancelled from inside its own callback has reported: a no-op. Else its
	 * record is freed by the call layer's release, from the loop or with the client. */
	kube_http_cancel(((struct req_ctx *)call)->http);
}
