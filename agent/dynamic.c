/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --dynamic: unknown MACs are served from the pool range. The lowest address that is not
 * bound statically, excluded or reserved (ipam/) goes to a new MAC; the MAC keeps it
 * (sticky) and it is recorded in the lease file, so a restart hands out the same address.
 * agent_apply_config() pushes a configuration and the leases into the engine.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "ipam/ipam.h"
#include "lib/log.h"
#include "lib/util.h"

struct agent_dynamic {
	struct ipam_pool *pool;
	struct leasefile *lf; /* borrowed */
};

static int
cmp_mac6(const void *a, const void *b)
{
	return memcmp(a, b, 6);
}

struct prune {
	struct agent_dynamic *d;
	const uint8_t (*static_macs)[6];
	size_t n_static;
	uint8_t (*drop)[6];
	size_t n_drop;
	int err;
};

static void
prune_one(void *userdata, const uint8_t mac[6], uint32_t ip)
{
	struct prune *p = userdata;
	char m[MAC_STRLEN], a[IPV4_STRLEN];
	const char *why = NULL;
	int r;

	if (p->n_static > 0 && bsearch(mac, p->static_macs, p->n_static, 6, cmp_mac6) != NULL)
		why = "the MAC now has a static binding";
	else if ((r = ipam_pool_allocate_addr(p->d->pool, ip)) < 0)
		why = r == -ERANGE   ? "outside the pool range"
		      : r == -EPERM  ? "excluded or reserved"
		      : r == -EEXIST ? "bound to another MAC"
				     : "cannot be marked";
	if (why == NULL)
		return;
	mac_format(mac, m);
	ipv4_format(ip, a);
	log_info("dynamic lease %s -> %s dropped: %s", m, a, why);
	memcpy(p->drop[p->n_drop++], mac, 6);
}

int
agent_dynamic_new(const struct agent_config *cfg, struct leasefile *lf, struct agent_dynamic **ret)
{
	struct agent_dynamic *d = calloc(1, sizeof(*d));
	struct prune p = {0};
	uint8_t(*macs)[6] = NULL;
	int r;

	if (d == NULL)
		return -ENOMEM;
	d->lf = lf;
	r = ipam_pool_new(cfg->cidr, cfg->prefix, cfg->pool_start, cfg->pool_end,
	    cfg->opts.server_ip, cfg->opts.router, cfg->exclude, cfg->n_exclude, &d->pool);
	if (r < 0)
		goto fail;
	/* static bindings inside the range are taken; outside it they do not matter */
	for (size_t i = 0; i < cfg->n_bindings; i++) {
		r = ipam_pool_allocate_addr(d->pool, cfg->bindings[i].ip);
		if (r < 0 && r != -ERANGE && r != -EPERM && r != -EEXIST)
			goto fail;
	}
	/* leases: keep those still valid, drop the others */
	if (leasefile_count(lf) > 0) {
		if (cfg->n_bindings > 0) {
			macs = malloc(cfg->n_bindings * sizeof(*macs));
			if (macs == NULL) {
				r = -ENOMEM;
				goto fail;
			}
			for (size_t i = 0; i < cfg->n_bindings; i++)
				memcpy(macs[i], cfg->bindings[i].mac, 6);
			qsort(macs, cfg->n_bindings, 6, cmp_mac6);
		}
		p.d = d;
		p.static_macs = (const uint8_t(*)[6])macs;
		p.n_static = cfg->n_bindings;
		p.drop = malloc(leasefile_count(lf) * sizeof(*p.drop));
		if (p.drop == NULL) {
			r = -ENOMEM;
			goto fail;
		}
		leasefile_foreach(lf, prune_one, &p);
		for (size_t i = 0; i < p.n_drop; i++)
			(void)leasefile_remove(lf, p.drop[i]);
		free(p.drop);
		free(macs);
	}
	*ret = d;
	return 0;
fail:
	free(macs);
	agent_dynamic_free(d);
	return r;
}

struct agent_dynamic *
agent_dynamic_free(struct agent_dynamic *d)
{
	if (d == NULL)
		return NULL;
	ipam_pool_free(d->pool);
	free(d);
	return NULL;
}

int
agent_dynamic_allocate(struct agent_dynamic *d, const uint8_t mac[6], uint32_t *ret_ip)
{
	uint32_t ip;
	int r;

	if (leasefile_lookup(d->lf, mac, &ip) == 0) {
		*ret_ip = ip;
		return 0;
	}
	if ((r = ipam_pool_allocate(d->pool, &ip)) < 0)
		return r;
	if ((r = leasefile_add(d->lf, mac, ip)) < 0) {
		(void)ipam_pool_release(d->pool, ip);
		return r;
	}
	*ret_ip = ip;
	return 0;
}

int
agent_dynamic_decline(struct agent_dynamic *d, const uint8_t mac[6], uint32_t ip, uint32_t *ret_ip)
{
	uint32_t cur, nip;
	int r;

	if (leasefile_lookup(d->lf, mac, &cur) < 0 || cur != ip)
		return -ENOENT; /* not a dynamic lease of this MAC */
	/* the declined address stays USED: something else on the network holds it */
	if ((r = ipam_pool_allocate(d->pool, &nip)) < 0)
		return r;
	if ((r = leasefile_add(d->lf, mac, nip)) < 0) {
		(void)ipam_pool_release(d->pool, nip);
		return r;
	}
	*ret_ip = nip;
	return 0;
}

size_t
agent_dynamic_available(const struct agent_dynamic *d)
{
	struct ipam_counts c;

	ipam_pool_counts(d->pool, &c);
	return c.available;
}

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
		leasefile_foreach(dyn->lf, apply_lease, &ap);
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
