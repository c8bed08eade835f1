/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes mode: one version of the IPPool, decoded (crds/ippool.h), -> struct agent_config:
 * the spec's network, range and options (pool-config.c) and the bindings of
 * status.ipv4.allocated (and status.ipv6.allocated for spec.ipv6Config), EXCLUDED/RESERVED
 * marks skipped. A version that cannot be served is
 * refused with the reason in kpool.message; the informer's glue is in source-kube.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/pool-config.h"
#include "agent/source-kube-internal.h"
#include "lib/ip6.h"
#include "lib/util.h"

/* Fills kp->message and returns -EINVAL. */
static int refuse(struct kpool *kp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
refuse(struct kpool *kp, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(kp->message, sizeof(kp->message), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int
kpool_convert_spec(struct kpool *kp, const char *ns, const char *name, const struct ippool *p)
{
	const struct ippool_spec *sp = &p->spec;
	struct agent_config *c = kp->cfg;
	char why[256];
	int r;

	snprintf(c->pool_ns, sizeof(c->pool_ns), "%s", ns);
	snprintf(c->pool_name, sizeof(c->pool_name), "%s", name);
	r = agent_config_from_spec(c, sp, why, sizeof(why));
	if (r == -EINVAL)
		return refuse(kp, "%s", why);
	if (r < 0)
		return r;
	for (size_t i = 0; i < sp->n_ntp && i < IPPOOL_NTP_MAX; i++) {
		if (strlen(sp->ntp[i]) >= sizeof(kp->ntp.name[0]))
			return refuse(kp, "spec.ipv4Config.ntp[%zu]: too long", i);
		snprintf(kp->ntp.name[kp->ntp.n++], sizeof(kp->ntp.name[0]), "%s", sp->ntp[i]);
	}
	return 0;
}

static int
binding_cmp(const void *x, const void *y)
{
	const struct agent_binding *a = x, *b = y;
	int r = memcmp(a->mac, b->mac, 6);

	if (r != 0)
		return r;
	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

/*
 * The same MAC under several addresses (a status edited by hand, or written by something else
 * than the controller, which never does this): a DHCP server can hand out only one. Serve the
 * lowest address, deterministically whatever the JSON order, and report the rest.
 */
static void
drop_duplicate_macs(struct kpool *kp)
{
	struct agent_config *c = kp->cfg;
	size_t out = 0;
	bool counted = false;

	if (c->n_bindings < 2)
		return;
	qsort(c->bindings, c->n_bindings, sizeof(*c->bindings), binding_cmp);
	for (size_t i = 0; i < c->n_bindings; i++) {
		if (out > 0 && memcmp(c->bindings[out - 1].mac, c->bindings[i].mac, 6) == 0) {
			/* an extra address of the MAC kept just before */
			if (!counted && kp->duplicate_macs++ == 0) {
				char m[MAC_STRLEN], a1[IPV4_STRLEN], a2[IPV4_STRLEN];

				mac_format(c->bindings[i].mac, m);
				ipv4_format(c->bindings[out - 1].ip, a1);
				ipv4_format(c->bindings[i].ip, a2);
				snprintf(kp->duplicate_example, sizeof(kp->duplicate_example),
				    "%s under %s and %s", m, a1, a2);
			}
			counted = true;
			continue;
		}
		counted = false;
		c->bindings[out++] = c->bindings[i];
	}
	c->n_bindings = out;
}

/* An IPv6 binding of a MAC no NIC has: skipped and counted (as for IPv4). */
static void
count_invalid6(struct kpool *kp, const struct ippool_alloc6 *al)
{
	char a[IPV6_STRLEN], m[MAC_STRLEN];

	if (kp->invalid_macs++ != 0)
		return;
	ipv6_format(&al->addr, a);
	mac_format(al->mac, m);
	snprintf(kp->invalid_example, sizeof(kp->invalid_example), "%s -> %s, %s", a, m,
	    mac_kind(al->mac));
}

/* status.ipv6.allocated -> c->v6's bindings (the spec's ipv6Config converted before). */
static int
convert_status6(struct kpool *kp, const struct ippool_status *st)
{
	struct agent_config6 *v = &kp->cfg->v6;
	struct agent_binding6 dup;
	char a[IPV6_STRLEN], a2[IPV6_STRLEN], m[MAC_STRLEN];
	size_t n = 0;

	if (!v->enabled)
		return 0; /* no ipv6Config: a leftover status.ipv6 is not served */
	for (size_t i = 0; i < st->n_allocated6; i++)
		n += st->allocated6[i].kind == IPPOOL_ALLOC_MAC;
	if (n == 0)
		return 0;
	if ((v->bindings = malloc(n * sizeof(*v->bindings))) == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < st->n_allocated6; i++) {
		const struct ippool_alloc6 *al = &st->allocated6[i];
		struct agent_binding6 *b;

		if (al->kind != IPPOOL_ALLOC_MAC)
			continue;
		if (!mac_is_nic(al->mac)) {
			count_invalid6(kp, al);
			continue;
		}
		ipv6_format(&al->addr, a);
		if (!ipv6_in_prefix(&al->addr, &v->cidr, v->prefix))
			return refuse(kp, "status.ipv6.allocated[%s]: outside the pool's CIDR", a);
		if (ipv6_equal(&al->addr, &v->opts.server_ip))
			return refuse(
			    kp, "status.ipv6.allocated[%s]: the pool's serverIP bound to a MAC", a);
		b = &v->bindings[v->n_bindings++];
		memcpy(b->mac, al->mac, 6);
		b->ip = al->addr;
		b->hostname = UINT32_MAX;
	}
	n = agent_config6_dedup_macs(kp->cfg, &dup);
	if (n > 0 && kp->duplicate_macs == 0) {
		mac_format(dup.mac, m);
		ipv6_format(&dup.ip, a2);
		snprintf(kp->duplicate_example, sizeof(kp->duplicate_example),
		    "%s under a lower address and %s", m, a2);
	}
	kp->duplicate_macs += n;
	return 0;
}

int
kpool_convert_status(struct kpool *kp, const struct ippool *p)
{
	const struct ippool_status *st = &p->status;
	struct agent_config *c = kp->cfg;
	char a[IPV4_STRLEN];
	size_t n = 0;
	int r;

	if ((r = convert_status6(kp, st)) < 0)
		return r;
	for (size_t i = 0; i < st->n_allocated; i++)
		n += st->allocated[i].kind == IPPOOL_ALLOC_MAC;
	if (n == 0)
		return 0;
	c->bindings = malloc(n * sizeof(*c->bindings));
	if (c->bindings == NULL)
		return -ENOMEM;
	for (size_t i = 0; i < st->n_allocated; i++) {
		const struct ippool_alloc *al = &st->allocated[i];
		struct agent_binding *b;

		if (al->kind != IPPOOL_ALLOC_MAC)
			continue;
		ipv4_format(al->addr, a);
		if (!mac_is_nic(al->mac)) {
			/* no NIC sends from it: skipped, the other entries still serve */
			if (kp->invalid_macs++ == 0) {
				char m[MAC_STRLEN];

				mac_format(al->mac, m);
				snprintf(kp->invalid_example, sizeof(kp->invalid_example),
				    "%s -> %s, %s", a, m, mac_kind(al->mac));
			}
			continue;
		}
		if ((al->addr & ipv4_prefix_mask(c->prefix)) != c->cidr)
			return refuse(kp, "status.ipv4.allocated[%s]: outside the pool's CIDR", a);
		if (al->addr == c->opts.server_ip || al->addr == c->opts.router)
			return refuse(kp, "status.ipv4.allocated[%s]: the pool's %s bound to a MAC",
			    a, al->addr == c->opts.server_ip ? "serverIP" : "router");
		b = &c->bindings[c->n_bindings++];
		memcpy(b->mac, al->mac, 6);
		b->ip = al->addr;
		b->hostname = UINT32_MAX; /* the VM name is not in the IPPool */
	}
	drop_duplicate_macs(kp);
	return 0;
}

void
kpool_destroy(void *item)
{
	struct kpool *kp = item;

	if (kp == NULL)
		return;
	agent_config_free(kp->cfg);
	free(kp);
}
