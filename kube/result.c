/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An HTTP answer to a struct kube_result: the body parsed (a list page reduced to its items'
 * metadata when asked), a Status answer mapped to errno (kube/status.c) with its reason and
 * message kept for logs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube-internal.h"
#include "lib/jscan.h"

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
