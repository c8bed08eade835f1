/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --enable-cache-dump-api: the Go project's debug endpoints on the controller's HTTP endpoint
 * (upstream pkg/server/http.go RegisterControllerHandlers, pkg/server/handler.go):
 *
 *   GET /ipams/{network}   {"<ip>":"true"|"false", ...}  every address of the IPPool's range
 *                          that can be handed out (upstream pkg/ipam/ipam.go ListAll: the range
 *                          without the server IP, the router and the excluded addresses),
 *                          "true" when bound
 *   GET /caches/{network}  {"<mac>":"<ip>", ...}  the MAC bindings of the network (upstream
 *                          pkg/cache/cache.go ListAll)
 *
 * {network} is the IPPool's spec.networkName, the key upstream's IPAM and MAC cache use: the
 * path below the prefix, slashes included ("/ipams/default/net-1"); a bare name is taken as
 * in the "default" namespace, as everywhere else. The bodies are what Go's json.Marshal
 * makes of a map[string]string: compact, keys in byte order. A network without an IPAM here
 * (none of its IPPool, paused, not built yet, or this replica not leading: only the leader
 * has one) answers as upstream: 500 and "failed to list ipam of N: network N does not exist".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/dump.h"

#include "controller/ctrl-internal.h"
#include "crds/meta.h"
#include "ipam/ipam.h"
#include "lib/httpd.h"
#include "lib/util.h"

/* Upstream answers an unknown network with 500 (pkg/server/handler.go). */
#define DUMP_UNKNOWN_STATUS 500

/* json_dumps of an object as Go marshals a map[string]string. 0 or -ENOMEM. */
static int
dumps(json_t *o, char **ret)
{
	char *s = o != NULL ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	json_decref(o);
	if (s == NULL)
		return -ENOMEM;
	*ret = s;
	return 0;
}

int
ctrl_dump_ipam_json(const struct netpool *p, char **ret)
{
	const struct ipam_pool *ip = netpool_ipam(p);
	uint32_t start = ipam_pool_start(ip), end = ipam_pool_end(ip);
	json_t *o;

	if ((uint64_t)end - start + 1 > CTRL_DUMP_IPAM_MAX)
		return -E2BIG;
	o = json_object();
	for (uint64_t a = start; o != NULL && a <= end; a++) {
		int st = ipam_pool_state(ip, (uint32_t)a);
		char s[IPV4_STRLEN];

		if (st != IPAM_FREE && st != IPAM_USED)
			continue; /* excluded or reserved: not in upstream's map either */
		ipv4_format((uint32_t)a, s);
		if (json_object_set_new(o, s, json_string(st == IPAM_USED ? "true" : "false")) <
		    0) {
			json_decref(o);
			o = NULL;
		}
	}
	return dumps(o, ret);
}

struct cache_walk {
	const struct netpool *p;
	json_t *o;
};

static int
cache_add(uint32_t addr, enum ipam_state state, void *userdata)
{
	struct cache_walk *w = userdata;
	const struct netpool_entry *e = netpool_by_addr(w->p, addr);
	char mac[MAC_STRLEN], ip[IPV4_STRLEN];

	(void)state;
	if (e == NULL)
		return 0;
	mac_format(e->mac, mac);
	if (json_object_get(w->o, mac) != NULL)
		return 0; /* a MAC on two addresses (a reported conflict): the first, as a map */
	ipv4_format(addr, ip);
	return json_object_set_new(w->o, mac, json_string(ip)) < 0 ? -ENOMEM : 0;
}

int
ctrl_dump_cache_json(const struct netpool *p, char **ret)
{
	struct cache_walk w = {.p = p, .o = json_object()};

	if (w.o == NULL)
		return -ENOMEM;
	if (ipam_pool_foreach(netpool_ipam(p), IPAM_MASK(IPAM_USED), cache_add, &w) < 0) {
		json_decref(w.o);
		return -ENOMEM;
	}
	return dumps(w.o, ret);
}

/* The netpool of the network named in a dump path, or NULL. */
static const struct netpool *
dump_netpool(struct ctrl *c, const char *network)
{
	char canon[CRD_NETWORK_NAME_MAX + 1];
	const struct pool_rt *rt;

	if (!c->leading || !c->reconciling)
		return NULL;
	if (crd_network_name_canonicalize(network, canon) < 0)
		return NULL;
	rt = ctrl_pool_rt_by_network(c, canon);
	return rt != NULL ? rt->np : NULL;
}

/* The body of a failure, as upstream's: "failed to list WHAT of NETWORK: WHY". */
static int
failure(int code, char **body, size_t *len, const char *what, const char *network, const char *why)
{
	int n = why != NULL ? asprintf(body, "failed to list %s of %s: %s", what, network, why)
			    : asprintf(body, "failed to list %s of %s: network %s does not exist",
				  what, network, network);

	if (n < 0) {
		*body = NULL;
		return -ENOMEM;
	}
	*len = (size_t)n;
	return code;
}

static int
dump(struct ctrl *c, bool ipam, const char *network, char **body, size_t *len, const char **ctype)
{
	const struct netpool *p = dump_netpool(c, network);
	const char *what = ipam ? "ipam" : "cache";
	int r;

	if (p == NULL)
		return failure(DUMP_UNKNOWN_STATUS, body, len, what, network, NULL);
	r = ipam ? ctrl_dump_ipam_json(p, body) : ctrl_dump_cache_json(p, body);
	if (r == -E2BIG)
		return failure(500, body, len, what, network, "range too large to list");
	if (r < 0)
		return r;
	*len = strlen(*body);
	*ctype = "application/json";
	return 200;
}

static int
ipams_cb(void *userdata, const char *rest, char **body, size_t *len, const char **ctype)
{
	return dump(userdata, true, rest, body, len, ctype);
}

static int
caches_cb(void *userdata, const char *rest, char **body, size_t *len, const char **ctype)
{
	return dump(userdata, false, rest, body, len, ctype);
}

int
ctrl_add_dump_api(struct ctrl *c, struct httpd *h)
{
	int r;

	if ((r = httpd_add_body_handler(h, "/ipams/", ipams_cb, c)) < 0 ||
	    (r = httpd_add_body_handler(h, "/caches/", caches_cb, c)) < 0)
		return r;
	return 0;
}
