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
#include "lib/ip6.h"
#include "lib/util.h"

/* RFC 8200 §5: every IPv6 link carries 1280-byte packets; a smaller MTU is not advertised. */
#define IPV6_MIN_MTU 1280
/* RFC 4861 §6.2.1: AdvDefaultLifetime at most 9000 s. */
#define RA_ROUTER_LIFETIME_MAX 9000

/* spec.ipv6Config -> c->v6 (bindings untouched); c->v6.enabled false without one. */
static int
config6_from_spec(struct agent_config *c, const struct ippool_spec *sp, char *err, size_t errlen)
{
	const struct ippool_ipv6_config *x = &sp->ipv6;
	struct agent_config6 *v = &c->v6;
	struct dhcp6_options *o = &v->opts;

	free(v->exclude);
	v->exclude = NULL;
	v->n_exclude = 0;
	v->enabled = sp->has_ipv6;
	memset(o, 0, sizeof(*o));
	memset(&v->ra, 0, sizeof(v->ra));
	if (!sp->has_ipv6) {
		memset(&v->cidr, 0, sizeof(v->cidr));
		v->prefix = 0;
		memset(&v->pool_start, 0, sizeof(v->pool_start));
		memset(&v->pool_end, 0, sizeof(v->pool_end));
		return 0;
	}
	if (x->prefix > 128) {
		snprintf(err, errlen, "spec.ipv6Config.cidr: prefix /%u, at most 128", x->prefix);
		return -EINVAL;
	}
	ipv6_prefix_network(&x->cidr_addr, x->prefix, &v->cidr);
	v->prefix = x->prefix;
	v->pool_start = x->start;
	v->pool_end = x->end;
	if (x->n_exclude > 0) {
		v->exclude = malloc(x->n_exclude * sizeof(*v->exclude));
		if (v->exclude == NULL)
			return -ENOMEM;
		memcpy(v->exclude, x->exclude, x->n_exclude * sizeof(*v->exclude));
		v->n_exclude = x->n_exclude;
	}
	o->server_ip = x->server_ip;
	o->prefix = (uint8_t)x->prefix;
	if (x->n_dns > ELEMENTSOF(o->dns)) {
		snprintf(
		    err, errlen, "spec.ipv6Config.dns: at most %zu servers", ELEMENTSOF(o->dns));
		return -EINVAL;
	}
	memcpy(o->dns, x->dns, x->n_dns * sizeof(o->dns[0]));
	o->n_dns = x->n_dns;
	if (x->n_domain_search > DHCP_MAX_SEARCH) {
		snprintf(err, errlen, "spec.ipv6Config.domainSearch: at most %d domains",
		    DHCP_MAX_SEARCH);
		return -EINVAL;
	}
	for (size_t i = 0; i < x->n_domain_search; i++) {
		if (strlen(x->domain_search[i]) >= sizeof(o->search[0])) {
			snprintf(err, errlen, "spec.ipv6Config.domainSearch[%zu]: too long", i);
			return -EINVAL;
		}
		snprintf(o->search[i], sizeof(o->search[i]), "%s", x->domain_search[i]);
	}
	o->n_search = x->n_domain_search;
	o->valid_lifetime = x->valid_lifetime != 0 ? x->valid_lifetime : IPPOOL_LEASE_TIME_DEFAULT;
	o->preferred_lifetime =
	    x->preferred_lifetime != 0 ? x->preferred_lifetime : o->valid_lifetime;
	if (o->preferred_lifetime > o->valid_lifetime) {
		snprintf(err, errlen,
		    "spec.ipv6Config.preferredLifetime: %u s, above the valid "
		    "lifetime %u s (RFC 8415 §21.6)",
		    o->preferred_lifetime, o->valid_lifetime);
		return -EINVAL;
	}
	o->rapid_commit = x->rapid_commit;
	/* the same DUID for every replica and restart of the pool's agent (failover, warm start) */
	o->duid_len = dhcp6_duid_for_pool(c->pool_ns, c->pool_name, o->duid);
	/* RFC 4861 §6.2.1: M=1 (addresses by DHCPv6), the prefix on-link, no SLAAC */
	v->ra.enabled = x->ra.enabled;
	v->ra.interval = x->ra.interval != 0 ? x->ra.interval : IPPOOL6_RA_INTERVAL_DEFAULT;
	v->ra.router_lifetime = (uint16_t)MIN(x->ra.router_lifetime, RA_ROUTER_LIFETIME_MAX);
	v->ra.prefix = v->cidr;
	v->ra.prefix_len = (uint8_t)v->prefix;
	v->ra.mtu = sp->mtu >= IPV6_MIN_MTU ? sp->mtu : 0;
	return 0;
}

/* One networkBoot string into dst (DHCP_BOOT_NAME_MAX + 1 bytes); NULL leaves it "". */
static int
boot_string(char *dst, const char *src, const char *field, char *err, size_t errlen)
{
	if (src == NULL)
		return 0;
	if (strlen(src) > DHCP_BOOT_NAME_MAX) {
		snprintf(err, errlen, "spec.ipv4Config.networkBoot.%s: longer than %d characters",
		    field, DHCP_BOOT_NAME_MAX);
		return -EINVAL;
	}
	snprintf(dst, DHCP_BOOT_NAME_MAX + 1, "%s", src);
	return 0;
}

/* spec.ipv4Config.networkBoot -> the engine's boot answers (all empty without one). */
static int
boot_from_spec(struct dhcp_boot *b, const struct ippool_spec *sp, char *err, size_t errlen)
{
	const struct ippool_network_boot *x = &sp->boot;

	memset(b, 0, sizeof(*b));
	if (!sp->has_boot)
		return 0;
	b->next_server = x->next_server;
	if (boot_string(b->tftp_server_name, x->tftp_server_name, "tftpServerName", err, errlen) <
		0 ||
	    boot_string(b->files[DHCP_BOOT_BIOS], x->files.bios, "bootFiles.bios", err, errlen) <
		0 ||
	    boot_string(b->files[DHCP_BOOT_UEFI], x->files.uefi, "bootFiles.uefi", err, errlen) <
		0 ||
	    boot_string(b->files[DHCP_BOOT_UEFI_ARM64], x->files.uefi_arm64, "bootFiles.uefiArm64",
		err, errlen) < 0 ||
	    boot_string(b->files[DHCP_BOOT_UEFI_HTTP], x->files.uefi_http, "bootFiles.uefiHttp",
		err, errlen) < 0 ||
	    boot_string(b->files[DHCP_BOOT_IPXE], x->ipxe_script, "ipxeScript", err, errlen) < 0)
		return -EINVAL;
	return 0;
}

int
agent_config_from_spec(
    struct agent_config *c, const struct ippool_spec *sp, char *err, size_t errlen)
{
	struct dhcp_options *o = &c->opts;

	snprintf(c->network, sizeof(c->network), "%s", sp->network_name);
	c->paused = sp->paused;
	c->foreign_policy = sp->foreign_servers.policy;
	c->probe_interval = sp->foreign_servers.probe_interval;
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
	if (boot_from_spec(&o->boot, sp, err, errlen) < 0)
		return -EINVAL;
	return config6_from_spec(c, sp, err, errlen);
}

struct agent_config *
agent_config_free(struct agent_config *c)
{
	if (c == NULL)
		return NULL;
	free(c->exclude);
	free(c->bindings);
	free(c->names);
	free(c->v6.exclude);
	free(c->v6.bindings);
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

const char *
agent_config_hostname6(const struct agent_config *c, const struct agent_binding6 *b)
{
	if (b->hostname == UINT32_MAX || c->names == NULL)
		return NULL;
	return c->names + b->hostname;
}

static int
binding6_cmp(const void *x, const void *y)
{
	const struct agent_binding6 *a = x, *b = y;
	int r = memcmp(a->mac, b->mac, 6);

	return r != 0 ? r : ipv6_cmp(&a->ip, &b->ip);
}

size_t
agent_config6_dedup_macs(struct agent_config *c, struct agent_binding6 *first_dropped)
{
	struct agent_config6 *v = &c->v6;
	size_t out = 0, dropped = 0;

	if (v->n_bindings < 2)
		return 0;
	qsort(v->bindings, v->n_bindings, sizeof(*v->bindings), binding6_cmp);
	for (size_t i = 0; i < v->n_bindings; i++) {
		if (out > 0 && memcmp(v->bindings[out - 1].mac, v->bindings[i].mac, 6) == 0) {
			if (dropped++ == 0 && first_dropped != NULL)
				*first_dropped = v->bindings[i];
			continue;
		}
		v->bindings[out++] = v->bindings[i];
	}
	v->n_bindings = out;
	return dropped;
}
