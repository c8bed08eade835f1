/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_apply_config (apply-config.h): a configuration into the engine, options first, then
 * one binding resync of the static bindings and the dynamic leases of the lease file; and the
 * IPv6 part into the DHCPv6 engine (static bindings only).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/apply-config.h"
#include "agent/dynamic.h"
#include "agent/leasefile.h"
#include "agent/pool-config.h"
#include "dhcp/dhcp6.h"
#include "lib/ip6.h"
#include "lib/log.h"
#include "lib/util.h"

struct apply {
	struct dhcp_server *s;
	int err;
	size_t failed;
};

static void
apply_lease(void *userdata, const uint8_t mac[6], uint32_t ip)
{
	struct apply *ap = userdata;
	int r = dhcp_server_set_binding(ap->s, mac, ip, NULL);

	if (r < 0) {
		ap->failed++;
		if (ap->err == 0)
			ap->err = r;
	}
}

int
agent_apply_config(struct dhcp_server *s, const struct agent_config *cfg, struct agent_dynamic *dyn,
    char *err, size_t errlen)
{
	size_t *retry = NULL, n_retry = 0, removed;
	struct apply ap = {.s = s};
	char m[MAC_STRLEN], a[IPV4_STRLEN];
	int r;

	if ((r = dhcp_server_set_options(s, &cfg->opts)) < 0) {
		snprintf(err, errlen, "options refused by the DHCP engine: %s", strerror(-r));
		return r;
	}
	dhcp_server_sync_begin(s);
	for (size_t i = 0; i < cfg->n_bindings; i++) {
		const struct agent_binding *b = &cfg->bindings[i];
		if (!dhcp_mac_bindable(b->mac)) {
			/* the engine refuses it: one NIC's bad MAC must not stop the others */
			mac_format(b->mac, m);
			ipv4_format(b->ip, a);
			log_warn("binding %s -> %s skipped: a broadcast, multicast or all-zero MAC "
				 "is no NIC's address",
			    m, a);
			continue;
		}
		r = dhcp_server_set_binding(s, b->mac, b->ip, agent_config_hostname(cfg, b));
		if (r == -EEXIST) {
			/* the address is still held by a binding this resync removes */
			if (retry == NULL &&
			    (retry = malloc(cfg->n_bindings * sizeof(*retry))) == NULL)
				goto nomem;
			retry[n_retry++] = i;
		} else if (r < 0) {
			goto engine_error;
		}
	}
	if (dyn != NULL)
		leasefile_foreach(agent_dynamic_leasefile(dyn), apply_lease, &ap);
	removed = dhcp_server_sync_end(s);
	for (size_t k = 0; k < n_retry; k++) {
		const struct agent_binding *b = &cfg->bindings[retry[k]];
		r = dhcp_server_set_binding(s, b->mac, b->ip, agent_config_hostname(cfg, b));
		if (r < 0) {
			mac_format(b->mac, m);
			ipv4_format(b->ip, a);
			snprintf(err, errlen, "binding %s -> %s refused by the DHCP engine: %s", m,
			    a, strerror(-r));
			free(retry);
			return r;
		}
	}
	free(retry);
	if (ap.failed > 0)
		log_warn("%zu dynamic leases not restored: %s", ap.failed, strerror(-ap.err));
	return (int)MIN(removed, (size_t)INT32_MAX);
nomem:
	r = -ENOMEM;
engine_error:
	free(retry);
	dhcp_server_sync_end(s);
	snprintf(err, errlen, "cannot set bindings: %s", strerror(-r));
	return r;
}

/* The IPv6 bindings, swapped as one resync; an address still held by a removed one retried. */
static int
apply_bindings6(struct dhcp6_server *s, const struct agent_config *cfg, char *err, size_t errlen)
{
	const struct agent_config6 *v = &cfg->v6;
	size_t *retry = NULL, n_retry = 0, removed;
	char m[MAC_STRLEN], a[IPV6_STRLEN];
	int r = 0;

	dhcp6_server_sync_begin(s);
	for (size_t i = 0; v->enabled && i < v->n_bindings; i++) {
		const struct agent_binding6 *b = &v->bindings[i];
		r = dhcp6_server_set_binding(s, b->mac, &b->ip, agent_config_hostname6(cfg, b));
		if (r == -EEXIST) {
			if (retry == NULL &&
			    (retry = malloc(v->n_bindings * sizeof(*retry))) == NULL) {
				r = -ENOMEM;
				break;
			}
			retry[n_retry++] = i;
			r = 0;
		} else if (r < 0) {
			mac_format(b->mac, m);
			ipv6_format(&b->ip, a);
			log_warn("IPv6 binding %s -> %s skipped: %s", m, a, strerror(-r));
			r = 0; /* one NIC's refused binding must not stop the others */
		}
	}
	removed = dhcp6_server_sync_end(s);
	for (size_t k = 0; r == 0 && k < n_retry; k++) {
		const struct agent_binding6 *b = &v->bindings[retry[k]];
		if ((r = dhcp6_server_set_binding(
			 s, b->mac, &b->ip, agent_config_hostname6(cfg, b))) < 0) {
			mac_format(b->mac, m);
			ipv6_format(&b->ip, a);
			snprintf(err, errlen,
			    "IPv6 binding %s -> %s refused by the DHCPv6 engine: %s", m, a,
			    strerror(-r));
		}
	}
	free(retry);
	if (r == -ENOMEM)
		snprintf(err, errlen, "cannot set IPv6 bindings: %s", strerror(-r));
	return r < 0 ? r : (int)MIN(removed, (size_t)INT32_MAX);
}

int
agent_apply_config6(
    struct dhcp6_server *s, const struct agent_config *cfg, char *err, size_t errlen)
{
	struct dhcp6_ra off = {.enabled = false};
	int r;

	if (cfg->v6.enabled && (r = dhcp6_server_set_options(s, &cfg->v6.opts)) < 0) {
		snprintf(
		    err, errlen, "IPv6 options refused by the DHCPv6 engine: %s", strerror(-r));
		return r;
	}
	r = dhcp6_server_set_ra(s, cfg->v6.enabled ? &cfg->v6.ra : &off);
	if (r < 0) {
		snprintf(err, errlen,
		    "router advertisement settings refused by the DHCPv6 engine: "
		    "%s",
		    strerror(-r));
		return r;
	}
	return apply_bindings6(s, cfg, err, errlen);
}
