/* SPDX-License-Identifier: Apache-2.0 */
/* The API server's URL split for a transport that opens its own connections. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube-internal.h"

int
kube_server_url_parse(struct kube_server_url *h, const char *url)
{
	const char *p, *end, *slash;
	size_t hl;

	if (strncmp(url, "https://", 8) == 0) {
		h->tls = true;
		p = url + 8;
	} else if (strncmp(url, "http://", 7) == 0) {
		p = url + 7;
	} else {
		return -EINVAL;
	}
	slash = strchr(p, '/');
	end = slash ? slash : p + strlen(p);
	h->authority = strndup(p, (size_t)(end - p));
	h->prefix = strdup(slash ? slash : "");
	if (!h->authority || !h->prefix)
		return -ENOMEM;
	if (h->prefix[0] && h->prefix[strlen(h->prefix) - 1] == '/')
		h->prefix[strlen(h->prefix) - 1] = '\0';
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(end - p));

		if (!rb)
			return -EINVAL;
		h->host = strndup(p + 1, (size_t)(rb - p - 1));
		p = rb + 1;
	} else {
		const char *colon = memchr(p, ':', (size_t)(end - p));

		hl = (size_t)((colon ? colon : end) - p);
		h->host = strndup(p, hl);
		p += hl;
	}
	if (!h->host)
		return -ENOMEM;
	if (!h->host[0])
		return -EINVAL;
	if (p < end && *p == ':') {
		size_t pl = (size_t)(end - p - 1);

		if (pl == 0 || pl >= sizeof(h->port) || strspn(p + 1, "0123456789") < pl)
			return -EINVAL;
		memcpy(h->port, p + 1, pl);
		h->port[pl] = '\0';
	} else if (p != end) {
		return -EINVAL;
	} else {
		strcpy(h->port, h->tls ? "443" : "80");
	}
	if (inet_pton(AF_INET, h->host, h->ip) == 1) {
		h->host_is_ip = true;
		h->ip_len = 4;
	} else if (inet_pton(AF_INET6, h->host, h->ip) == 1) {
		h->host_is_ip = true;
		h->ip_len = 16;
	}
	return 0;
}

void
kube_server_url_free(struct kube_server_url *u)
{
	free(u->host);
	free(u->authority);
	free(u->prefix);
}
