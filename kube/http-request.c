/* SPDX-License-Identifier: Apache-2.0 */
/* The copy of a request that both transports (kube/http.c, kube/http-mbedtls.c) keep. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube-internal.h"

int
kube_http_request_copy(
    struct kube_http_owned *o, const char *server, const struct kube_http_request *req)
{
	memset(o, 0, sizeof(*o));
	o->method = strdup(req->method);
	if (asprintf(&o->url, "%s%s", server, req->path) < 0)
		o->url = NULL;
	if (req->content_type)
		o->content_type = strdup(req->content_type);
	if (!o->method || !o->url || (req->content_type && !o->content_type))
		goto fail;
	if (req->body) {
		o->body = malloc(req->body_len + 1);
		if (!o->body)
			goto fail;
		memcpy(o->body, req->body, req->body_len);
		o->body[req->body_len] = '\0';
		o->body_len = req->body_len;
	}
	return 0;
fail:
	kube_http_owned_release(o);
	return -ENOMEM;
}

void
kube_http_owned_release(struct kube_http_owned *o)
{
	free(o->method);
	free(o->url);
	free(o->content_type);
	free(o->body);
	memset(o, 0, sizeof(*o));
}
