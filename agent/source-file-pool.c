/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Local mode, once the documents are read (source-file.c): the served IPPool -> struct
 * agent_config (pool-config.c, NTP names resolved now), the NICs of its network -> static
 * bindings (IPv4 from ipAddress, IPv6 from ipv6Address), each checked against the pool, no MAC
 * and no address bound twice. Errors name the
 * document, its first line and the field.
 */
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "agent/source-file-internal.h"
#include "crds/ippool.h"
#include "lib/ip6.h"
#include "lib/log.h"
#include "lib/util.h"

int
sf_doc_error(struct loader *ld, size_t doc, unsigned line, const char *fmt, ...)
{
	char msg[AGENT_ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(ld->err, ld->errlen, "%s: document %zu (line %u): %s", ld->name, doc + 1,
		    line, msg);
	else
		snprintf(ld->err, ld->errlen, "%s: document %zu: %s", ld->name, doc + 1, msg);
	return -EINVAL;
}

uint32_t
sf_names_add(struct agent_config *c, const char *s)
{
	size_t n = strnlen(s, DHCP_HOSTNAME_MAX);
	uint32_t off;

	if (c->names_len + n + 1 > c->names_cap) {
		size_t ncap = c->names_cap == 0 ? 4096 : c->names_cap * 2;
		while (ncap < c->names_len + n + 1)
			ncap *= 2;
		char *p = realloc(c->names, ncap);
		if (p == NULL)
			return UINT32_MAX;
		c->names = p;
		c->names_cap = ncap;
	}
	off = (uint32_t)c->names_len;
	memcpy(c->names + off, s, n);
	c->names[off + n] = '\0';
	c->names_len += n + 1;
	return off;
}

uint64_t
sf_net_hash(const char *canonical)
{
	return hash64(canonical, strlen(canonical), 0x766d6468637000ull);
}

/* Resolves an NTP entry (IPv4 literal or hostname) to an address. */
static int
resolve_ipv4(const char *s, uint32_t *ret, char *why, size_t whylen)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM};
	struct addrinfo *res = NULL;
	int r;

	if (ipv4_parse(s, ret) == 0)
		return 0;
	r = getaddrinfo(s, NULL, &hints, &res);
	if (r != 0 || res == NULL) {
		snprintf(why, whylen, "%s", r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
		if (res != NULL)
			freeaddrinfo(res);
		return -EHOSTUNREACH;
	}
	*ret = ntohl(((const struct sockaddr_in *)(const void *)res->ai_addr)->sin_addr.s_addr);
	freeaddrinfo(res);
	return 0;
}

/* IPPool spec -> engine options and pool range (pool-config.c), NTP names resolved now. */
static int
convert_pool(struct loader *ld, size_t doc, unsigned line, const struct ippool *p)
{
	const struct ippool_spec *sp = &p->spec;
	struct agent_config *c = ld->cfg;
	struct dhcp_options *o = &c->opts;
	char why[256];
	int r;

	snprintf(c->pool_ns, sizeof(c->pool_ns), "%s",
	    p->meta.namespace != NULL ? p->meta.namespace : "default");
	snprintf(
	    c->pool_name, sizeof(c->pool_name), "%s", p->meta.name != NULL ? p->meta.name : "");
	r = agent_config_from_spec(c, sp, why, sizeof(why));
	if (r == -EINVAL)
		return sf_doc_error(ld, doc, line, "%s", why);
	if (r < 0)
		return r;
	for (size_t i = 0; i < sp->n_ntp && i < DHCP_MAX_NTP; i++) {
		/* a name that does not resolve now must not stop DHCP: skip it, say so */
		if (resolve_ipv4(sp->ntp[i], &o->ntp[o->n_ntp], why, sizeof(why)) < 0) {
			log_warn("%s: document %zu (line %u): spec.ipv4Config.ntp[%zu]: cannot "
				 "resolve \"%s\" (%s); not sent until a reload resolves it",
			    ld->name, doc + 1, line, i, sp->ntp[i], why);
			continue;
		}
		o->n_ntp++;
	}
	return 0;
}

/* Where each binding came from, for duplicate messages. */
struct origin {
	uint32_t doc;
	uint16_t nic;
};

/* The served pool's NICs become bindings (checked against the pool). */
static int
stream_bindings(struct stream *st, struct origin **ret_origins)
{
	struct loader *ld = st->ld;
	struct agent_config *c = ld->cfg;
	uint64_t net = sf_net_hash(c->network);
	struct origin *origins = NULL;
	char a[IPV4_STRLEN], cidr[IPV4_STRLEN];
	size_t n = 0;

	for (size_t i = 0; i < st->n_nics; i++)
		n += st->nics[i].net == net && st->nics[i].ip != 0;
	if (n > 0) {
		c->bindings = malloc(n * sizeof(*c->bindings));
		origins = malloc(n * sizeof(*origins));
		if (c->bindings == NULL || origins == NULL) {
			free(origins);
			return -ENOMEM;
		}
	}
	for (size_t i = 0; i < st->n_nics; i++) {
		const struct nicrec *nr = &st->nics[i];
		struct agent_binding *b;
		unsigned line;

		if (nr->net != net || nr->ip == 0)
			continue;
		line = st->lines[nr->doc];
		ipv4_format(nr->ip, a);
		if ((nr->ip & ipv4_prefix_mask(c->prefix)) != c->cidr) {
			ipv4_format(c->cidr, cidr);
			free(origins);
			return sf_doc_error(ld, nr->doc, line,
			    "spec.networkConfigs[%u].ipAddress: %s is outside the pool's CIDR "
			    "%s/%u",
			    nr->nic, a, cidr, c->prefix);
		}
		if (nr->ip == c->opts.server_ip || nr->ip == c->opts.router) {
			free(origins);
			return sf_doc_error(ld, nr->doc, line,
			    "spec.networkConfigs[%u].ipAddress: %s is the pool's %s", nr->nic, a,
			    nr->ip == c->opts.server_ip ? "serverIP" : "router");
		}
		b = &c->bindings[c->n_bindings];
		memcpy(b->mac, nr->mac, 6);
		b->ip = nr->ip;
		b->hostname = nr->hostname;
		origins[c->n_bindings] = (struct origin){.doc = nr->doc, .nic = nr->nic};
		c->n_bindings++;
	}
	*ret_origins = origins;
	return 0;
}

/* Sort index by MAC or by IP to find duplicates. */
static const struct agent_binding *sort_base;

static int
cmp_mac(const void *x, const void *y)
{
	const struct agent_binding *a = &sort_base[*(const uint32_t *)x];
	const struct agent_binding *b = &sort_base[*(const uint32_t *)y];
	int d = memcmp(a->mac, b->mac, 6);

	if (d != 0)
		return d;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static int
cmp_ip(const void *x, const void *y)
{
	const struct agent_binding *a = &sort_base[*(const uint32_t *)x];
	const struct agent_binding *b = &sort_base[*(const uint32_t *)y];

	if (a->ip != b->ip)
		return a->ip < b->ip ? -1 : 1;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static int
check_duplicates(struct loader *ld, const struct origin *origins, const unsigned *lines)
{
	const struct agent_config *c = ld->cfg;
	uint32_t *idx;
	int r = 0;

	if (c->n_bindings < 2)
		return 0;
	idx = malloc(c->n_bindings * sizeof(*idx));
	if (idx == NULL)
		return -ENOMEM;
	sort_base = c->bindings;
	for (int pass = 0; pass < 2 && r == 0; pass++) {
		for (size_t i = 0; i < c->n_bindings; i++)
			idx[i] = (uint32_t)i;
		qsort(idx, c->n_bindings, sizeof(*idx), pass == 0 ? cmp_mac : cmp_ip);
		for (size_t i = 1; i < c->n_bindings; i++) {
			const struct agent_binding *a = &c->bindings[idx[i - 1]];
			const struct agent_binding *b = &c->bindings[idx[i]];
			const struct origin *oa = &origins[idx[i - 1]], *ob = &origins[idx[i]];
			char s[MAC_STRLEN > IPV4_STRLEN ? MAC_STRLEN : IPV4_STRLEN];

			if (pass == 0 && memcmp(a->mac, b->mac, 6) == 0) {
				mac_format(b->mac, s);
				r = sf_doc_error(ld, ob->doc, lines[ob->doc],
				    "spec.networkConfigs[%u].macAddress: %s is already bound on "
				    "this "
				    "network by document %u (line %u)",
				    ob->nic, s, oa->doc + 1, lines[oa->doc]);
				break;
			}
			if (pass == 1 && a->ip == b->ip) {
				ipv4_format(b->ip, s);
				r = sf_doc_error(ld, ob->doc, lines[ob->doc],
				    "spec.networkConfigs[%u].ipAddress: %s is already bound to "
				    "another "
				    "MAC by document %u (line %u)",
				    ob->nic, s, oa->doc + 1, lines[oa->doc]);
				break;
			}
		}
	}
	sort_base = NULL;
	free(idx);
	return r;
}

/* One NIC's ipv6Address checked against the pool's ipv6Config. */
static int
check_nic6(struct loader *ld, const struct stream *st, const struct nicrec *nr)
{
	const struct agent_config6 *v = &ld->cfg->v6;
	char a[IPV6_STRLEN], cidr[IPV6_STRLEN];
	unsigned line = st->lines[nr->doc];

	ipv6_format(&nr->ip6, a);
	if (!v->enabled)
		return sf_doc_error(ld, nr->doc, line,
		    "spec.networkConfigs[%u].ipv6Address: %s, but the pool has no ipv6Config",
		    nr->nic, a);
	if (!ipv6_in_prefix(&nr->ip6, &v->cidr, v->prefix)) {
		ipv6_format(&v->cidr, cidr);
		return sf_doc_error(ld, nr->doc, line,
		    "spec.networkConfigs[%u].ipv6Address: %s is outside the pool's CIDR %s/%u",
		    nr->nic, a, cidr, v->prefix);
	}
	if (ipv6_equal(&nr->ip6, &v->opts.server_ip))
		return sf_doc_error(ld, nr->doc, line,
		    "spec.networkConfigs[%u].ipv6Address: %s is the pool's serverIP", nr->nic, a);
	return 0;
}

/* Sort index of v6 bindings by MAC (pass 0) or address (pass 1). */
static const struct agent_binding6 *sort_base6;

static int
cmp6(const void *x, const void *y, bool by_mac)
{
	const struct agent_binding6 *a = &sort_base6[*(const uint32_t *)x];
	const struct agent_binding6 *b = &sort_base6[*(const uint32_t *)y];
	int d = by_mac ? memcmp(a->mac, b->mac, 6) : ipv6_cmp(&a->ip, &b->ip);

	if (d != 0)
		return d;
	return *(const uint32_t *)x < *(const uint32_t *)y ? -1 : 1;
}

static int
cmp6_mac(const void *x, const void *y)
{
	return cmp6(x, y, true);
}

static int
cmp6_ip(const void *x, const void *y)
{
	return cmp6(x, y, false);
}

/* No MAC and no IPv6 address bound twice on the network. */
static int
check_duplicates6(struct loader *ld, const struct origin *origins, const unsigned *lines)
{
	const struct agent_config6 *v = &ld->cfg->v6;
	uint32_t *idx;
	int r = 0;

	if (v->n_bindings < 2)
		return 0;
	if ((idx = malloc(v->n_bindings * sizeof(*idx))) == NULL)
		return -ENOMEM;
	sort_base6 = v->bindings;
	for (int pass = 0; pass < 2 && r == 0; pass++) {
		for (size_t i = 0; i < v->n_bindings; i++)
			idx[i] = (uint32_t)i;
		qsort(idx, v->n_bindings, sizeof(*idx), pass == 0 ? cmp6_mac : cmp6_ip);
		for (size_t i = 1; i < v->n_bindings && r == 0; i++) {
			const struct agent_binding6 *a = &v->bindings[idx[i - 1]];
			const struct agent_binding6 *b = &v->bindings[idx[i]];
			const struct origin *oa = &origins[idx[i - 1]], *ob = &origins[idx[i]];
			char s[IPV6_STRLEN];

			if (pass == 0 && memcmp(a->mac, b->mac, 6) == 0) {
				mac_format(b->mac, s);
				r = sf_doc_error(ld, ob->doc, lines[ob->doc],
				    "spec.networkConfigs[%u].macAddress: %s already has an "
				    "ipv6Address on this network from document %u (line %u)",
				    ob->nic, s, oa->doc + 1, lines[oa->doc]);
			} else if (pass == 1 && ipv6_equal(&a->ip, &b->ip)) {
				ipv6_format(&b->ip, s);
				r = sf_doc_error(ld, ob->doc, lines[ob->doc],
				    "spec.networkConfigs[%u].ipv6Address: %s is already bound to "
				    "another MAC by document %u (line %u)",
				    ob->nic, s, oa->doc + 1, lines[oa->doc]);
			}
		}
	}
	sort_base6 = NULL;
	free(idx);
	return r;
}

/* The served pool's NICs with an ipv6Address become IPv6 bindings, checked. */
static int
stream_bindings6(struct stream *st)
{
	struct loader *ld = st->ld;
	struct agent_config6 *v = &ld->cfg->v6;
	uint64_t net = sf_net_hash(ld->cfg->network);
	struct origin *origins = NULL;
	size_t n = 0;
	int r = 0;

	for (size_t i = 0; i < st->n_nics; i++)
		n += st->nics[i].net == net && !ipv6_is_zero(&st->nics[i].ip6);
	if (n == 0)
		return 0;
	v->bindings = malloc(n * sizeof(*v->bindings));
	origins = malloc(n * sizeof(*origins));
	if (v->bindings == NULL || origins == NULL) {
		free(origins);
		return -ENOMEM;
	}
	for (size_t i = 0; i < st->n_nics && r == 0; i++) {
		const struct nicrec *nr = &st->nics[i];
		struct agent_binding6 *b;

		if (nr->net != net || ipv6_is_zero(&nr->ip6))
			continue;
		if ((r = check_nic6(ld, st, nr)) < 0)
			break;
		b = &v->bindings[v->n_bindings];
		memcpy(b->mac, nr->mac, 6);
		b->ip = nr->ip6;
		b->hostname = nr->hostname;
		origins[v->n_bindings++] = (struct origin){.doc = nr->doc, .nic = nr->nic};
	}
	if (r == 0)
		r = check_duplicates6(ld, origins, st->lines);
	free(origins);
	return r;
}

int
sf_finish(struct stream *st)
{
	struct loader *ld = st->ld;
	struct origin *origins = NULL;
	const char *name = ld->name;
	int r;

	if (st->n_pools == 0) {
		snprintf(ld->err, ld->errlen, "%s: no %s document", name, IPPOOL_KIND);
		return -EINVAL;
	}
	if (st->ippool_ref == NULL && st->n_pools > 1) {
		snprintf(ld->err, ld->errlen,
		    "%s: %zu %s documents; pick one with --ippool-ref NAMESPACE/NAME", name,
		    st->n_pools, IPPOOL_KIND);
		return -EINVAL;
	}
	if (st->pool == NULL) {
		snprintf(
		    ld->err, ld->errlen, "%s: no %s named %s", name, IPPOOL_KIND, st->ippool_ref);
		return -EINVAL;
	}
	if ((r = convert_pool(ld, st->pool_doc, st->lines[st->pool_doc], st->pool)) < 0)
		return r;
	if ((r = stream_bindings(st, &origins)) < 0)
		return r;
	r = check_duplicates(ld, origins, st->lines);
	free(origins);
	if (r < 0)
		return r;
	return stream_bindings6(st);
}
