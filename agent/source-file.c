/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Local mode: the configuration file holds IPPool and VirtualMachineNetworkConfig objects as
 * YAML documents, exactly what a user would `kubectl apply`. One IPPool is served (picked by
 * --ippool-ref when there are several); every VMNetCfg NIC on that pool's network with an
 * ipAddress is a static binding, its hostname the VM name.
 *
 * Errors name the file, the document and its first line, and the field:
 *   pool.yaml: document 1 (line 3): spec.ipv4Config.cidr: "10.0.0/8" is not an IPv4 CIDR
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

#include "agent/agent.h"
#include "crds/ippool.h"
#include "crds/vmnetcfg.h"
#include "kube/yaml.h"
#include "lib/log.h"
#include "lib/util.h"

#define CONFIG_MAX_SIZE (512u << 20)

struct loader {
	const char *name; /* file name for messages */
	char *err;
	size_t errlen;
	struct agent_config *cfg;
	size_t cap_bindings;
};

static int __attribute__((format(printf, 4, 5)))
doc_error(struct loader *ld, size_t doc, unsigned line, const char *fmt, ...)
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

/* Stores a hostname (truncated to an option 12 label of 63 bytes); UINT32_MAX on failure. */
static uint32_t
names_add(struct agent_config *c, const char *s)
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

/* Resolves an NTP entry (IPv4 literal or hostname) to an address. */
static int
resolve_ipv4(const char *s, uint32_t *ret, char *why, size_t whylen)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM };
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

/* IPPool spec -> engine options and pool range. */
static int
convert_pool(struct loader *ld, size_t doc, unsigned line, const struct ippool *p)
{
	const struct ippool_spec *sp = &p->spec;
	struct agent_config *c = ld->cfg;
	struct dhcp_options *o = &c->opts;
	char why[256];

	snprintf(c->pool_ns, sizeof(c->pool_ns), "%s",
	    p->meta.namespace != NULL ? p->meta.namespace : "default");
	snprintf(c->pool_name, sizeof(c->pool_name), "%s", p->meta.name != NULL ? p->meta.name : "");
	snprintf(c->network, sizeof(c->network), "%s", sp->network_name);
	c->paused = sp->paused;
	c->prefix = sp->prefix;
	c->cidr = sp->cidr_addr & ipv4_prefix_mask(sp->prefix);
	c->pool_start = sp->start;
	c->pool_end = sp->end;
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
	if (sp->n_dns > DHCP_MAX_DNS)
		return doc_error(ld, doc, line, "spec.ipv4Config.dns: at most %d servers",
		    DHCP_MAX_DNS);
	memcpy(o->dns, sp->dns, sp->n_dns * sizeof(o->dns[0]));
	o->n_dns = sp->n_dns;
	for (size_t i = 0; i < sp->n_ntp && i < DHCP_MAX_NTP; i++) {
		if (resolve_ipv4(sp->ntp[i], &o->ntp[o->n_ntp], why, sizeof(why)) < 0)
			return doc_error(ld, doc, line,
			    "spec.ipv4Config.ntp[%zu]: cannot resolve \"%s\": %s", i, sp->ntp[i],
			    why);
		o->n_ntp++;
	}
	if (sp->domain_name != NULL) {
		if (strlen(sp->domain_name) >= sizeof(o->domain_name))
			return doc_error(ld, doc, line, "spec.ipv4Config.domainName: too long");
		snprintf(o->domain_name, sizeof(o->domain_name), "%s", sp->domain_name);
	}
	if (sp->n_domain_search > DHCP_MAX_SEARCH)
		return doc_error(ld, doc, line, "spec.ipv4Config.domainSearch: at most %d domains",
		    DHCP_MAX_SEARCH);
	for (size_t i = 0; i < sp->n_domain_search; i++) {
		if (strlen(sp->domain_search[i]) >= sizeof(o->search[0]))
			return doc_error(ld, doc, line, "spec.ipv4Config.domainSearch[%zu]: too long",
			    i);
		snprintf(o->search[i], sizeof(o->search[i]), "%s", sp->domain_search[i]);
	}
	o->n_search = sp->n_domain_search;
	o->mtu = (uint16_t)sp->mtu;
	if (sp->n_routes > DHCP_MAX_ROUTES)
		return doc_error(ld, doc, line, "spec.ipv4Config.routes: at most %d routes",
		    DHCP_MAX_ROUTES);
	for (size_t i = 0; i < sp->n_routes; i++) {
		o->routes[i].destination = sp->routes[i].destination;
		o->routes[i].prefix = (uint8_t)sp->routes[i].prefix;
		o->routes[i].gateway = sp->routes[i].gateway;
	}
	o->n_routes = sp->n_routes;
	o->lease_time = sp->lease_time != 0 ? sp->lease_time : IPPOOL_LEASE_TIME_DEFAULT;
	return 0;
}

static const char *
doc_kind(const json_t *doc)
{
	const json_t *k = json_object_get(doc, "kind");

	return json_is_string(k) ? json_string_value(k) : NULL;
}

/* "ns/name" of a document (namespace default "default"). */
static void
doc_ref(const json_t *doc, char *out, size_t n)
{
	const json_t *md = json_object_get(doc, "metadata");
	const char *ns = json_string_value(json_object_get(md, "namespace"));
	const char *name = json_string_value(json_object_get(md, "name"));

	snprintf(out, n, "%s/%s", ns != NULL && ns[0] ? ns : "default", name != NULL ? name : "");
}

static int
add_binding(struct loader *ld, const uint8_t mac[6], uint32_t ip, const char *hostname)
{
	struct agent_config *c = ld->cfg;
	struct agent_binding *b;

	if (c->n_bindings == ld->cap_bindings) {
		size_t ncap = ld->cap_bindings == 0 ? 64 : ld->cap_bindings * 2;
		b = realloc(c->bindings, ncap * sizeof(*b));
		if (b == NULL)
			return -ENOMEM;
		c->bindings = b;
		ld->cap_bindings = ncap;
	}
	b = &c->bindings[c->n_bindings];
	memcpy(b->mac, mac, 6);
	b->ip = ip;
	b->hostname = hostname != NULL ? names_add(c, hostname) : UINT32_MAX;
	if (hostname != NULL && b->hostname == UINT32_MAX)
		return -ENOMEM;
	c->n_bindings++;
	return 0;
}

/* Where each binding came from, for duplicate messages. */
struct origin {
	uint32_t doc;
	uint16_t nic;
};

static int
convert_vmnetcfg(struct loader *ld, size_t doc, unsigned line, const struct vmnetcfg *v,
    struct origin **origins, size_t *cap_origins)
{
	const struct agent_config *c = ld->cfg;
	char a[IPV4_STRLEN], net[IPV4_STRLEN];
	int r;

	for (size_t i = 0; i < v->spec.n_nics; i++) {
		const struct vmnetcfg_nic *nic = &v->spec.nics[i];
		uint8_t mac[6];

		if (strcmp(nic->network_name, c->network) != 0 || nic->ip_address == 0)
			continue;
		ipv4_format(nic->ip_address, a);
		if ((nic->ip_address & ipv4_prefix_mask(c->prefix)) != c->cidr) {
			ipv4_format(c->cidr, net);
			return doc_error(ld, doc, line,
			    "spec.networkConfig[%zu].ipAddress: %s is outside the pool's CIDR %s/%u",
			    i, a, net, c->prefix);
		}
		if (nic->ip_address == c->opts.server_ip || nic->ip_address == c->opts.router)
			return doc_error(ld, doc, line,
			    "spec.networkConfig[%zu].ipAddress: %s is the pool's %s", i, a,
			    nic->ip_address == c->opts.server_ip ? "serverIP" : "router");
		if (mac_parse(nic->mac, mac) < 0)
			return doc_error(ld, doc, line, "spec.networkConfig[%zu].macAddress: bad MAC",
			    i);
		if ((r = add_binding(ld, mac, nic->ip_address, v->spec.vm_name)) < 0)
			return r;
		if (c->n_bindings > *cap_origins) {
			size_t ncap = ld->cap_bindings;
			struct origin *o = realloc(*origins, ncap * sizeof(*o));
			if (o == NULL)
				return -ENOMEM;
			*origins = o;
			*cap_origins = ncap;
		}
		(*origins)[c->n_bindings - 1] = (struct origin){ .doc = (uint32_t)doc,
			.nic = (uint16_t)i };
	}
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
				r = doc_error(ld, ob->doc, lines[ob->doc],
				    "spec.networkConfig[%u].macAddress: %s is already bound on this "
				    "network by document %u (line %u)",
				    ob->nic, s, oa->doc + 1, lines[oa->doc]);
				break;
			}
			if (pass == 1 && a->ip == b->ip) {
				ipv4_format(b->ip, s);
				r = doc_error(ld, ob->doc, lines[ob->doc],
				    "spec.networkConfig[%u].ipAddress: %s is already bound to another "
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

int
agent_config_parse(const char *name, const char *text, size_t len, const char *ippool_ref,
    struct agent_config **ret, char *err, size_t errlen)
{
	struct loader ld = { .name = name, .err = err, .errlen = errlen };
	struct yaml_error yerr = { 0 };
	json_t **docs = NULL;
	unsigned *lines = NULL;
	struct origin *origins = NULL;
	size_t cap_origins = 0, n_pools = 0, pool_doc = SIZE_MAX;
	char ref[600];
	int n, r;

	n = yaml_parse_documents(text, len, &docs, &lines, &yerr);
	if (n < 0) {
		if (n == -ENOMEM)
			snprintf(err, errlen, "%s: out of memory", name);
		else if (yerr.line > 0)
			snprintf(err, errlen, "%s: line %u, column %u: %s", name, yerr.line,
			    yerr.column, yerr.message[0] ? yerr.message : "invalid YAML");
		else
			snprintf(err, errlen, "%s: %s", name,
			    yerr.message[0] ? yerr.message : "invalid YAML");
		return n == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	ld.cfg = calloc(1, sizeof(*ld.cfg));
	if (ld.cfg == NULL) {
		r = -ENOMEM;
		goto fail;
	}

	/* pass 1: kinds, and which IPPool is served */
	for (size_t i = 0; i < (size_t)n; i++) {
		const char *kind;

		if (!json_is_object(docs[i])) {
			r = doc_error(&ld, i, lines[i], "not a mapping (expected an object with kind)");
			goto fail;
		}
		kind = doc_kind(docs[i]);
		if (kind == NULL) {
			r = doc_error(&ld, i, lines[i], "kind: missing");
			goto fail;
		}
		if (strcmp(kind, VMNETCFG_KIND) == 0)
			continue;
		if (strcmp(kind, IPPOOL_KIND) != 0) {
			r = doc_error(&ld, i, lines[i], "kind: \"%s\" is not %s or %s", kind,
			    IPPOOL_KIND, VMNETCFG_KIND);
			goto fail;
		}
		n_pools++;
		doc_ref(docs[i], ref, sizeof(ref));
		if (ippool_ref == NULL) {
			if (pool_doc == SIZE_MAX)
				pool_doc = i;
		} else if (strcmp(ref, ippool_ref) == 0) {
			pool_doc = i;
		}
	}
	if (n_pools == 0) {
		snprintf(err, errlen, "%s: no %s document", name, IPPOOL_KIND);
		r = -EINVAL;
		goto fail;
	}
	if (ippool_ref == NULL && n_pools > 1) {
		snprintf(err, errlen, "%s: %zu %s documents; pick one with --ippool-ref NAMESPACE/NAME",
		    name, n_pools, IPPOOL_KIND);
		r = -EINVAL;
		goto fail;
	}
	if (pool_doc == SIZE_MAX) {
		snprintf(err, errlen, "%s: no %s named %s", name, IPPOOL_KIND, ippool_ref);
		r = -EINVAL;
		goto fail;
	}

	/* pass 2: every document decodes (a typo anywhere is an error), bindings collected */
	{
		struct crd_error cerr = { 0 };
		struct ippool *pool = NULL;

		r = ippool_decode(docs[pool_doc], &pool, &cerr);
		if (r < 0) {
			if (r == -ENOMEM)
				goto fail;
			r = doc_error(&ld, pool_doc, lines[pool_doc], "%s", cerr.message);
			goto fail;
		}
		r = convert_pool(&ld, pool_doc, lines[pool_doc], pool);
		ippool_free(pool);
		if (r < 0)
			goto fail;
	}
	for (size_t i = 0; i < (size_t)n; i++) {
		struct crd_error cerr = { 0 };

		if (i == pool_doc) {
			json_decref(docs[i]);
			docs[i] = NULL;
			continue;
		}
		if (strcmp(doc_kind(docs[i]), IPPOOL_KIND) == 0) {
			struct ippool *other = NULL;
			r = ippool_decode(docs[i], &other, &cerr);
			ippool_free(other);
		} else {
			struct vmnetcfg *v = NULL;
			r = vmnetcfg_decode(docs[i], &v, &cerr);
			if (r == 0)
				r = convert_vmnetcfg(&ld, i, lines[i], v, &origins, &cap_origins);
			else if (r == -EINVAL)
				r = doc_error(&ld, i, lines[i], "%s", cerr.message);
			vmnetcfg_free(v);
			if (r < 0)
				goto fail;
		}
		if (r < 0) {
			if (r == -EINVAL)
				r = doc_error(&ld, i, lines[i], "%s", cerr.message);
			goto fail;
		}
		/* drop each tree as soon as it is decoded: keeps the peak down */
		json_decref(docs[i]);
		docs[i] = NULL;
	}
	if ((r = check_duplicates(&ld, origins, lines)) < 0)
		goto fail;
	/* trim the binding array to its size */
	if (ld.cfg->n_bindings > 0 && ld.cfg->n_bindings < ld.cap_bindings) {
		struct agent_binding *b =
		    realloc(ld.cfg->bindings, ld.cfg->n_bindings * sizeof(*b));
		if (b != NULL)
			ld.cfg->bindings = b;
	}
	free(origins);
	for (size_t i = 0; i < (size_t)n; i++)
		json_decref(docs[i]);
	free(docs);
	free(lines);
	*ret = ld.cfg;
	return 0;
fail:
	if (r == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", name);
	free(origins);
	for (size_t i = 0; i < (size_t)n; i++)
		json_decref(docs[i]);
	free(docs);
	free(lines);
	agent_config_free(ld.cfg);
	return r;
}

int
agent_config_load(const char *path, const char *ippool_ref, struct agent_config **ret,
    char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	int r;

	r = read_file(path, CONFIG_MAX_SIZE, &text, &len);
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-r));
		return r;
	}
	r = agent_config_parse(path, text, len, ippool_ref, ret, err, errlen);
	free(text);
	return r;
}
