/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --enable-cache-dump-api: the Go project's GET /leases on the agent's HTTP endpoint
 * (upstream pkg/server/http.go RegisterAgentHandlers, pkg/server/handler.go listLeaseHandler,
 * pkg/dhcp/dhcp.go ListAll). The body is Go's json.Marshal of a map[string]string, MAC →
 * the lease as a JSON string (DHCPLease.String()):
 *
 *   {"<mac>":"{\"ServerIP\":\"…\",\"ClientIP\":\"…\",\"SubnetMask\":\"////AA==\",
 *     \"Router\":\"…\",\"DNS\":[…]|null,\"DomainName\":\"…\",\"DomainSearch\":[…]|null,
 *     \"NTP\":[…]|null,\"LeaseTime\":N}", …}
 *
 * with the lease's fields in upstream's order and encoding: addresses as dotted quads ("" for
 * none: net.IP's text form of nil), SubnetMask the mask's four bytes in base64 (Go marshals a
 * net.IPMask as []byte), empty lists null. One lease per binding of the engine (the VMNetCfg
 * NICs and, with --dynamic, the leases handed out), all with the pool's options; LeaseTime is
 * the lease time served (upstream gives the IPPool's leaseTime, 0 when unset).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "agent/dump.h"
#include "agent/serve-internal.h"
#include "lib/httpd.h"
#include "lib/util.h"

/* The four bytes of a /prefix mask in base64 (8 characters + NUL). */
static void
mask_base64(unsigned prefix, char out[9])
{
	static const char b64[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint32_t m = ipv4_prefix_mask(prefix > 32 ? 32 : prefix);
	uint8_t b[4] = {(uint8_t)(m >> 24), (uint8_t)(m >> 16), (uint8_t)(m >> 8), (uint8_t)m};
	uint32_t v = (uint32_t)b[0] << 16 | (uint32_t)b[1] << 8 | b[2];

	out[0] = b64[(v >> 18) & 63];
	out[1] = b64[(v >> 12) & 63];
	out[2] = b64[(v >> 6) & 63];
	out[3] = b64[v & 63];
	v = (uint32_t)b[3] << 16;
	out[4] = b64[(v >> 18) & 63];
	out[5] = b64[(v >> 12) & 63];
	out[6] = '=';
	out[7] = '=';
	out[8] = '\0';
}

static json_t *
ip_string(uint32_t ip)
{
	char s[IPV4_STRLEN];

	if (ip == 0)
		return json_string("");
	ipv4_format(ip, s);
	return json_string(s);
}

/* A list of addresses, or null when empty (a nil slice). */
static json_t *
ip_list(const uint32_t *ips, size_t n)
{
	json_t *a;

	if (n == 0)
		return json_null();
	a = json_array();
	for (size_t i = 0; a != NULL && i < n; i++)
		if (json_array_append_new(a, ip_string(ips[i])) < 0) {
			json_decref(a);
			a = NULL;
		}
	return a;
}

/* The lease of upstream's DHCPLease for ip with the options o, as its JSON text. */
static char *
lease_text(const struct dhcp_options *o, uint32_t ip)
{
	char mask[9];
	json_t *l = json_object(), *search = json_null();
	char *s;

	if (o->n_search > 0) {
		search = json_array();
		for (size_t i = 0; search != NULL && i < o->n_search; i++)
			if (json_array_append_new(search, json_string(o->search[i])) < 0) {
				json_decref(search);
				search = NULL;
			}
	}
	mask_base64(o->prefix, mask);
	if (l == NULL || search == NULL ||
	    json_object_set_new(l, "ServerIP", ip_string(o->server_ip)) < 0 ||
	    json_object_set_new(l, "ClientIP", ip_string(ip)) < 0 ||
	    json_object_set_new(l, "SubnetMask", json_string(mask)) < 0 ||
	    json_object_set_new(l, "Router", ip_string(o->router)) < 0 ||
	    json_object_set_new(l, "DNS", ip_list(o->dns, o->n_dns)) < 0 ||
	    json_object_set_new(l, "DomainName", json_string(o->domain_name)) < 0 ||
	    json_object_set(l, "DomainSearch", search) < 0 ||
	    json_object_set_new(l, "NTP", ip_list(o->ntp, o->n_ntp)) < 0 ||
	    json_object_set_new(l, "LeaseTime", json_integer(o->lease_time)) < 0) {
		json_decref(search);
		json_decref(l);
		return NULL;
	}
	json_decref(search);
	s = json_dumps(l, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(l);
	return s;
}

struct leases_walk {
	const struct dhcp_options *o;
	json_t *map;
	bool failed;
};

static void
lease_add(void *userdata, const uint8_t mac[6], uint32_t ip, const char *hostname)
{
	struct leases_walk *w = userdata;
	char m[MAC_STRLEN], *text;

	(void)hostname;
	if (w->failed)
		return;
	text = lease_text(w->o, ip);
	mac_format(mac, m);
	if (text == NULL || json_object_set_new(w->map, m, json_string(text)) < 0)
		w->failed = true;
	free(text);
}

int
agent_dump_leases_json(const struct dhcp_server *s, const struct dhcp_options *o, char **ret)
{
	struct leases_walk w = {.o = o, .map = json_object()};
	char *text;

	if (w.map == NULL)
		return -ENOMEM;
	if (o != NULL)
		dhcp_server_foreach_binding(s, lease_add, &w);
	text = w.failed ? NULL : json_dumps(w.map, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(w.map);
	if (text == NULL)
		return -ENOMEM;
	*ret = text;
	return 0;
}

static int
leases_cb(void *userdata, const char *rest, char **body, size_t *len, const char **ctype)
{
	struct agent *a = userdata;
	const struct agent_config *cfg = agent_cur_cfg(a);
	int r;

	(void)rest;
	r = agent_dump_leases_json(a->dhcp, cfg != NULL ? &cfg->opts : NULL, body);
	if (r < 0)
		return r;
	*len = strlen(*body);
	*ctype = "application/json";
	return 200;
}

int
agent_add_dump_api(struct agent *a)
{
	return httpd_add_body_handler(a->httpd, "/leases", leases_cb, a);
}
