/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Verbs over generic resource descriptors; Status answers mapped to errno. Each verb can hand
 * back its call (struct kube_call) to cancel: a plain request's record, or the loop of a
 * read-modify-write (kube_update_retry), whose cancel stops whichever of its GET and PUT
 * is in flight.
 *
 * Size: about 870 lines, one file on purpose: the verbs share the path building, the request
 * records and the retry loop; split, each part would need the others' internals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "lib/jscan.h"
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

/* --- paths and queries ----------------------------------------------------------------- */

static bool
path_segment_ok(const char *s)
{
	return s && *s && !strpbrk(s, "/?#%& ") && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

int
kube_resource_path(const struct kube_resource *res, const char *ns, const char *name,
    const char *subresource, char *out, size_t len)
{
	size_t n;
	int w;

	if (res->group && *res->group)
		w = snprintf(out, len, "/apis/%s/%s", res->group, res->version);
	else
		w = snprintf(out, len, "/api/%s", res->version);
	if (w < 0 || (size_t)w >= len)
		return -ENAMETOOLONG;
	n = (size_t)w;
	if (res->namespaced && ns && *ns) {
		if (!path_segment_ok(ns))
			return -EINVAL;
		w = snprintf(out + n, len - n, "/namespaces/%s", ns);
		if (w < 0 || (size_t)w >= len - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	} else if (res->namespaced && name) {
		return -EINVAL; /* an object of a namespaced resource needs its namespace */
	}
	w = snprintf(out + n, len - n, "/%s", res->resource);
	if (w < 0 || (size_t)w >= len - n)
		return -ENAMETOOLONG;
	n += (size_t)w;
	if (name) {
		if (!path_segment_ok(name))
			return -EINVAL;
		w = snprintf(out + n, len - n, "/%s", name);
		if (w < 0 || (size_t)w >= len - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	}
	if (subresource) {
		w = snprintf(out + n, len - n, "/%s", subresource);
		if (w < 0 || (size_t)w >= len - n)
			return -ENAMETOOLONG;
	}
	return 0;
}

int
kube_query_add(char *out, size_t len, const char *k, const char *v)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(out);

	if (!v)
		return 0;
	if (n + strlen(k) + 2 >= len)
		return -ENAMETOOLONG;
	out[n++] = strchr(out, '?') ? '&' : '?';
	memcpy(out + n, k, strlen(k));
	n += strlen(k);
	out[n++] = '=';
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			     (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' ||
			     *p == '~';

		if (n + 4 >= len)
			return -ENAMETOOLONG;
		if (plain) {
			out[n++] = (char)*p;
		} else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	out[n] = '\0';
	return 0;
}

/* --- results ---------------------------------------------------------------------------- */

void
kube_result_from_http(struct kube_result *res, int error, long status, const char *body, size_t len,
    const char *message, json_t **ret_obj)
{
	kube_result_from_http_opts(res, error, status, body, len, message, false, ret_obj);
}

/* Adds value (taken) to obj under the key span (with its quotes). 0 or -ENOMEM. */
static int
set_member(json_t *obj, struct jscan_span key, json_t *value)
{
	char *k = malloc(key.len);
	int r = -ENOMEM;

	if (k && value && jscan_string(key, k, key.len, NULL) == 0)
		r = json_object_set_new(obj, k, value) == 0 ? 0 : -ENOMEM;
	else
		json_decref(value);
	free(k);
	return r;
}

static json_t *
load_span(struct jscan_span v)
{
	return json_loadb(v.p, v.len, JSON_DECODE_ANY, NULL);
}

/* One item: apiVersion, kind and metadata only. */
static json_t *
load_item_metadata(struct jscan_span item)
{
	struct jscan_iter it;
	struct jscan_span k, v;
	json_t *obj = json_object();
	int r;

	if (!obj || jscan_open_span(&it, item, true) < 0)
		goto fail;
	while ((r = jscan_next(&it, &k, &v)) == 1)
		if ((jscan_key_is(k, "apiVersion") || jscan_key_is(k, "kind") ||
			jscan_key_is(k, "metadata")) &&
		    set_member(obj, k, load_span(v)) < 0)
			goto fail;
	if (r == 0)
		return obj;
fail:
	json_decref(obj);
	return NULL;
}

/* A list page with each item reduced by load_item_metadata; NULL when it is not JSON. */
static json_t *
load_list_metadata(const char *body, size_t len)
{
	struct jscan_iter it, items;
	struct jscan_span k, v, item;
	json_t *page = json_object(), *arr;
	int r, ri;

	if (!page || jscan_open(&it, body, len, true) < 0)
		goto fail;
	while ((r = jscan_next(&it, &k, &v)) == 1) {
		if (!jscan_key_is(k, "items") || jscan_type(v) != '[') {
			if (set_member(page, k, load_span(v)) < 0)
				goto fail;
			continue;
		}
		arr = json_array();
		if (!arr || jscan_open_span(&items, v, false) < 0) {
			json_decref(arr);
			goto fail;
		}
		while ((ri = jscan_next(&items, NULL, &item)) == 1) {
			json_t *x =
			    jscan_type(item) == '{' ? load_item_metadata(item) : load_span(item);

			if (!x || json_array_append_new(arr, x) < 0) {
				json_decref(arr);
				goto fail;
			}
		}
		if (ri < 0 || set_member(page, k, arr) < 0)
			goto fail;
	}
	if (r == 0)
		return page;
fail:
	json_decref(page);
	return NULL;
}

void
kube_result_from_http_opts(struct kube_result *res, int error, long status, const char *body,
    size_t len, const char *message, bool metadata_only, json_t **ret_obj)
{
	json_t *obj = NULL;

	memset(res, 0, sizeof(*res));
	res->reason = "";
	res->message = message ? message : "";
	res->http_status = status;
	*ret_obj = NULL;
	if (error < 0) {
		res->error = error;
		return;
	}
	if (len > 0 && metadata_only && status >= 200 && status < 300)
		obj = load_list_metadata(body, len);
	else if (len > 0)
		obj = json_loadb(body, len, JSON_DECODE_ANY, NULL);
	res->object = obj;
	*ret_obj = obj;
	if (status >= 200 && status < 300) {
		if (!obj && len > 0) {
			res->error = -EBADMSG;
			res->message = "response is not JSON";
		}
		return;
	}
	{
		const char *kind = json_string_value(json_object_get(obj, "kind"));
		const char *reason = NULL, *msg = NULL;

		if (kind && strcmp(kind, "Status") == 0) {
			reason = json_string_value(json_object_get(obj, "reason"));
			msg = json_string_value(json_object_get(obj, "message"));
		}
		res->error = kube_status_to_errno(status, reason);
		res->reason = reason ? reason : "";
		if (msg)
			res->message = msg;
		else if (!obj && len > 0 && len < 512 && !memchr(body, '\0', len))
			res->message = body;
		else
			res->message = "";
	}
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

/* --- the verbs without a handle ------------------------------------------------------------ */

/* --- loop helper ------------------------------------------------------------------------------ */

static void
run_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	bool *expired = arg;

	*expired = true;
}

int
kube_run_until(struct event_base *base, const bool *flag, long timeout_ms)
{
	struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
	bool expired = false;
	struct event *t;

	t = evtimer_new(base, run_timeout_cb, &expired);
	if (!t)
		return -ENOMEM;
	evtimer_add(t, &tv);
	while (!*flag && !expired)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(t);
	return *flag ? 0 : -ETIMEDOUT;
}

void
kube_sync_done(void *userdata, const struct kube_result *res)
{
	struct kube_sync *s = userdata;

	s->error = res->error;
	s->object = res->object != NULL ? json_incref(res->object) : NULL;
	snprintf(s->message, sizeof(s->message), "%s%s%s", kube_errno_name(res->error),
	    res->message != NULL && res->message[0] != '\0' ? ": " : "",
	    res->message != NULL ? res->message : "");
	s->done = true;
}

void
kube_sync_reset(struct kube_sync *s)
{
	json_decref(s->object);
	memset(s, 0, sizeof(*s));
}

json_t *
kube_sync_take(struct kube_sync *s)
{
	json_t *o = s->object;

	s->object = NULL;
	return o;
}

int
kube_sync_wait(struct event_base *base, struct kube_sync *s, long guard_ms, int rc)
{
	if (rc < 0) {
		s->error = rc;
		snprintf(s->message, sizeof(s->message), "%s", strerror(-rc));
		return rc;
	}
	if (kube_run_until(base, &s->done, guard_ms) < 0) {
		s->error = -ETIMEDOUT;
		snprintf(s->message, sizeof(s->message), "no answer in %ld s", guard_ms / 1000);
	}
	return s->error;
}
