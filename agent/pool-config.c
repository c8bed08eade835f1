/* SPDX-License-Identifier: Apache-2.0 */
/*
 * struct agent_config, the served pool both sources build, and the IPPool spec -> agent_config
 * translation they share: local mode (source-file-pool.c) and Kubernetes mode
 * (source-kube-pool.c). NTP names are left to the callers, which resolve them their own way
 * (local mode at load time, Kubernetes mode in the background).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/pool-config.h"
#include "crds/ippool.h"
#include "lib/util.h"

int
agent_config_from_spec(
    struct agent_config *c, const struct ippool_spec *sp, char *err, size_t errlen)
{
	struct dhcp_options *o = &c->opts;

	snprintf(c->network, sizeof(c->network), "%s", sp->network_name);
	c->paused = sp->paused;
	c->prefix = sp->prefix;
	c->cidr = sp->cidr_addr & ipv4_prefix_mask(sp->prefix);
	c->pool_start = sp->start;
	c->pool_end = sp->end;
	free(c->exclude);
	c->exclude = NULL;
	c->n_exclude = 0;
	if (sp->n_exclude > 0) {
		c->exclude = malloc(sp->n_exclude * sizeof(*c->exclude));
		if (c->exclude == NULL)
			return -ENOMEM;
		memcpy(c->exclude, sp->exclude, sp->n_exclude * sizeof(*c->exclude));
		c->n_exclude = sp->n_exclude;
	}

	memset(o, 0, sizeof(*o));
	o->server_ip = sp->server_ip;
	o->prefix = (uint8_t)sp->prefix;
	o->router = sp->router;
	if (sp->n_dns > DHCP_MAX_DNS) {
		snprintf(err, errlen, "spec.ipv4Config.dns: at most %d servers", DHCP_MAX_DNS);
		return -EINVAL;
	}
	memcpy(o->dns, sp->dns, sp->n_dns * sizeof(o->dns[0]));
	o->n_dns = sp->n_dns;
	if (sp->domain_name != NULL) {
		if (strlen(sp->domain_name) >= sizeof(o->domain_name)) {
			snprintf(err, errlen, "spec.ipv4Config.domainName: too long");
			return -EINVAL;
		}
		snprintf(o->domain_name, sizeof(o->domain_name), "%s", sp->domain_name);
	}
	if (sp->n_domain_search > DHCP_MAX_SEARCH) {
		snprintf(err, errlen, "spec.ipv4Config.domainSearch: at most %d domains",
		    DHCP_MAX_SEARCH);
		return -EINVAL;
	}
	for (size_t i = 0; i < sp->n_domain_search; i++) {
		if (strlen(sp->domain_search[i]) >= sizeof(o->search[0])) {
			snprintf(err, errlen, "spec.ipv4Config.domainSearch[%zu]: too long", i);
			return -EINVAL;
		}
		snprintf(o->search[i], sizeof(o->search[i]), "%s", sp->domain_search[i]);
	}
	o->n_search = sp->n_domain_search;
	o->mtu = (uint16_t)sp->mtu;
	if (sp->n_routes > DHCP_MAX_ROUTES) {
		snprintf(err, errlen, "spec.ipv4Config.routes: at most %d routes", DHCP_MAX_ROUTES);
		return -EINVAL;
	}
	for (size_t i = 0; i < sp->n_routes; i++) {
		o->routes[i].destination = sp->routes[i].destination;
		o->routes[i].prefix = (uint8_t)sp->routes[i].prefix;
		o->routes[i].gateway = sp->routes[i].gateway;
	}
	o->n_routes = sp->n_routes;
	o->lease_time = sp->lease_time != 0 ? sp->lease_time : IPPOOL_LEASE_TIME_DEFAULT;
	return 0;
}

struct agent_config *
agent_config_free(struct agent_config *c)
{
	if (c == NULL)
		return NULL;
	free(c->exclude);
	free(c->bindings);
	free(c->names);
	free(c);
	return NULL;
}

const char *
agent_config_hostname(const struct agent_config *c, const struct agent_binding *b)
{
	if (b->hostname == UINT32_MAX || c->names == NULL)
		return NULL;
	return c->names + b->hostname;
}
