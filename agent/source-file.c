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

#include <fcntl.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "agent/agent.h"
#include "crds/ippool.h"
#include "crds/vmnetcfg.h"
#include "kube/yaml.h"
#include "lib/log.h"
#include "lib/util.h"

/* The largest file read: 65 000 VMNetCfg documents are about 25 MiB. */
#define CONFIG_MAX_SIZE (64u << 20)
#define CONFIG_MAX_SIZE_NAME "64 MiB"

struct loader {
	const char *name; /* file name for messages */
	char *err;
	size_t errlen;
	struct agent_config *cfg;
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

/* IPPool spec -> engine options and pool range (agent/config.c), NTP names resolved now. */
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
		return doc_error(ld, doc, line, "%s", why);
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

/*
 * A NIC seen in a VMNetCfg document, kept compactly until the served pool is known (a pool
 * document may come after the VMNetCfgs). net is hash64 of the canonical network name: the
 * NICs of the pool's network are those with its hash (64 bits: no collision in practice).
 */
struct nicrec {
	uint64_t net;
	uint32_t ip;
	uint32_t hostname; /* offset in cfg->names */
	uint32_t doc;	   /* 0-based document index */
	uint16_t nic;	   /* index in spec.networkConfigs */
	uint8_t mac[6];
};

static uint64_t
net_hash(const char *canonical)
{
	return hash64(canonical, strlen(canonical), 0x766d6468637000ull);
}

struct stream {
	struct loader *ld;
	const char *ippool_ref;
	struct nicrec *nics;
	size_t n_nics, cap_nics;
	unsigned *lines; /* first line of each document */
	size_t n_docs, cap_docs;
	size_t n_pools;
	struct ippool *pool; /* the served one */
	size_t pool_doc;
};

static int
stream_doc(struct stream *st, json_t *doc, unsigned line)
{
	struct loader *ld = st->ld;
	size_t i = st->n_docs;
	struct crd_error cerr = {0};
	const char *kind;
	char ref[600];
	int r;

	if (st->n_docs == st->cap_docs) {
		size_t ncap = st->cap_docs == 0 ? 64 : st->cap_docs * 2;
		unsigned *l = realloc(st->lines, ncap * sizeof(*l));
		if (l == NULL)
			return -ENOMEM;
		st->lines = l;
		st->cap_docs = ncap;
	}
	st->lines[st->n_docs++] = line;
	if (!json_is_object(doc))
		return doc_error(ld, i, line, "not a mapping (expected an object with kind)");
	kind = doc_kind(doc);
	if (kind == NULL)
		return doc_error(ld, i, line, "kind: missing");
	if (strcmp(kind, IPPOOL_KIND) == 0) {
		struct ippool *pool = NULL;
		bool pick;

		st->n_pools++;
		r = ippool_decode(doc, &pool, &cerr);
		if (r < 0)
			return r == -EINVAL ? doc_error(ld, i, line, "%s", cerr.message) : r;
		doc_ref(doc, ref, sizeof(ref));
		pick = st->ippool_ref == NULL ? st->pool == NULL : strcmp(ref, st->ippool_ref) == 0;
		if (pick && st->pool == NULL) {
			st->pool = pool;
			st->pool_doc = i;
		} else {
			ippool_free(pool);
		}
		return 0;
	}
	if (strcmp(kind, VMNETCFG_KIND) != 0) {
		/* objects of other API groups (a NetworkAttachmentDefinition, a VirtualMachine)
		 * may sit in the same manifest: not ours, skipped; a typo in ours is an error */
		const char *av = json_string_value(json_object_get(doc, "apiVersion"));
		size_t glen = strlen(CRD_GROUP);
		if (av != NULL && !(strncmp(av, CRD_GROUP, glen) == 0 && av[glen] == '/')) {
			log_info("%s: document %zu (line %u): ignoring %s (%s)", ld->name, i + 1,
			    line, kind, av);
			return 0;
		}
	}
	if (strcmp(kind, VMNETCFG_KIND) == 0) {
		struct vmnetcfg *v = NULL;

		r = vmnetcfg_decode(doc, &v, &cerr);
		if (r < 0)
			return r == -EINVAL ? doc_error(ld, i, line, "%s", cerr.message) : r;
		for (size_t k = 0; k < v->spec.n_nics && r == 0; k++) {
			const struct vmnetcfg_nic *nic = &v->spec.nics[k];
			struct nicrec *n;

			if (nic->ip_address == 0)
				continue; /* no static address: --dynamic may serve it */
			if (st->n_nics == st->cap_nics) {
				size_t ncap = st->cap_nics == 0 ? 64 : st->cap_nics * 2;
				n = realloc(st->nics, ncap * sizeof(*n));
				if (n == NULL) {
					r = -ENOMEM;
					break;
				}
				st->nics = n;
				st->cap_nics = ncap;
			}
			n = &st->nics[st->n_nics];
			if (mac_parse(nic->mac, n->mac) < 0) {
				r = doc_error(
				    ld, i, line, "spec.networkConfigs[%zu].macAddress: bad MAC", k);
				break;
			}
			if (!mac_is_nic(n->mac)) {
				/* as a bad MAC: no NIC sends from it, a binding would never serve
				 */
				r = doc_error(ld, i, line,
				    "spec.networkConfigs[%zu].macAddress: %s is %s, not a NIC's "
				    "address",
				    k, nic->mac, mac_kind(n->mac));
				break;
			}
			n->net = net_hash(nic->network_name);
			n->ip = nic->ip_address;
			n->doc = (uint32_t)i;
			n->nic = (uint16_t)k;
			n->hostname = names_add(ld->cfg, v->spec.vm_name);
			if (n->hostname == UINT32_MAX)
				r = -ENOMEM;
			else
				st->n_nics++;
		}
		vmnetcfg_free(v);
		return r;
	}
	return doc_error(
	    ld, i, line, "kind: \"%s\" is not %s or %s", kind, IPPOOL_KIND, VMNETCFG_KIND);
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
	uint64_t net = net_hash(c->network);
	struct origin *origins = NULL;
	char a[IPV4_STRLEN], cidr[IPV4_STRLEN];
	size_t n = 0;

	for (size_t i = 0; i < st->n_nics; i++)
		n += st->nics[i].net == net;
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

		if (nr->net != net)
			continue;
		line = st->lines[nr->doc];
		ipv4_format(nr->ip, a);
		if ((nr->ip & ipv4_prefix_mask(c->prefix)) != c->cidr) {
			ipv4_format(c->cidr, cidr);
			free(origins);
			return doc_error(ld, nr->doc, line,
			    "spec.networkConfigs[%u].ipAddress: %s is outside the pool's CIDR "
			    "%s/%u",
			    nr->nic, a, cidr, c->prefix);
		}
		if (nr->ip == c->opts.server_ip || nr->ip == c->opts.router) {
			free(origins);
			return doc_error(ld, nr->doc, line,
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
				r = doc_error(ld, ob->doc, lines[ob->doc],
				    "spec.networkConfigs[%u].macAddress: %s is already bound on "
				    "this "
				    "network by document %u (line %u)",
				    ob->nic, s, oa->doc + 1, lines[oa->doc]);
				break;
			}
			if (pass == 1 && a->ip == b->ip) {
				ipv4_format(b->ip, s);
				r = doc_error(ld, ob->doc, lines[ob->doc],
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

/* Length of the document chunk at p: up to the next line that is a "---" marker. */
static size_t
chunk_len(const char *p, const char *end, unsigned *ret_lines)
{
	const char *q = p;
	unsigned lines = 0;
	bool first = true;

	while (q < end) {
		const char *nl = memchr(q, '\n', (size_t)(end - q));
		size_t n = nl != NULL ? (size_t)(nl - q) : (size_t)(end - q);

		/* YAML forbids "---" at column 0 inside scalars: it always starts a document */
		if (!first && n >= 3 && memcmp(q, "---", 3) == 0 &&
		    (n == 3 || q[3] == ' ' || q[3] == '\t' || q[3] == '\r'))
			break;
		first = false;
		lines++;
		q = nl != NULL ? nl + 1 : end;
	}
	*ret_lines = lines;
	return (size_t)(q - p);
}

/*
 * Parses one document at a time (split at "---" lines), so a file of 65 000 objects never
 * exists as 65 000 JSON trees at once; a step parses a bounded number of documents, so a
 * reload can let the event loop run in between.
 */
struct agent_config_parser {
	struct loader ld;
	struct stream st;
	char *owned; /* the text, when the parser read it */
	const char *p, *end;
	unsigned line0;
};

struct agent_config_parser *
agent_config_parser_free(struct agent_config_parser *ps)
{
	if (ps == NULL)
		return NULL;
	free(ps->st.nics);
	free(ps->st.lines);
	ippool_free(ps->st.pool);
	agent_config_free(ps->ld.cfg);
	free(ps->owned);
	free(ps);
	return NULL;
}

/* A parser of text (borrowed: kept until the parser is freed); NULL without memory. */
static struct agent_config_parser *
parser_new(const char *name, const char *text, size_t len, const char *ippool_ref)
{
	struct agent_config_parser *ps = calloc(1, sizeof(*ps));

	if (ps == NULL)
		return NULL;
	ps->ld.name = name;
	ps->st = (struct stream){.ld = &ps->ld, .ippool_ref = ippool_ref, .pool_doc = SIZE_MAX};
	ps->p = text;
	ps->end = text + len;
	ps->line0 = 1;
	ps->ld.cfg = calloc(1, sizeof(*ps->ld.cfg));
	if (ps->ld.cfg == NULL)
		return agent_config_parser_free(ps);
	return ps;
}

/* Once every document is in: the served pool, its bindings, the duplicate checks. */
static int
parser_finish(struct agent_config_parser *ps, struct agent_config **ret)
{
	struct loader *ld = &ps->ld;
	struct stream *st = &ps->st;
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
	*ret = ld->cfg;
	ld->cfg = NULL;
	return 0;
}

int
agent_config_parser_step(struct agent_config_parser *ps, size_t max_docs, struct agent_config **ret,
    char *err, size_t errlen)
{
	struct loader *ld = &ps->ld;
	size_t done = 0;
	int r = 0;

	ld->err = err;
	ld->errlen = errlen;
	if (ld->cfg == NULL) {
		snprintf(err, errlen, "%s: parsed already", ld->name);
		return -EINVAL;
	}
	while (ps->p < ps->end && r == 0 && (done < max_docs || max_docs == 0)) {
		struct yaml_error yerr = {0};
		unsigned n_lines, *lines = NULL;
		size_t clen = chunk_len(ps->p, ps->end, &n_lines);
		json_t **docs = NULL;
		int n;

		n = yaml_parse_documents(ps->p, clen, &docs, &lines, &yerr);
		if (n < 0) {
			if (n == -ENOMEM) {
				r = -ENOMEM;
			} else {
				if (yerr.line > 0)
					snprintf(err, errlen, "%s: line %u, column %u: %s",
					    ld->name, yerr.line + ps->line0 - 1, yerr.column,
					    yerr.message[0] ? yerr.message : "invalid YAML");
				else
					snprintf(err, errlen, "%s: %s", ld->name,
					    yerr.message[0] ? yerr.message : "invalid YAML");
				r = -EINVAL;
			}
			break;
		}
		for (int k = 0; k < n; k++) {
			if (r == 0)
				r = stream_doc(&ps->st, docs[k], lines[k] + ps->line0 - 1);
			json_decref(docs[k]);
		}
		free(docs);
		free(lines);
		ps->p += clen;
		ps->line0 += n_lines;
		done += (size_t)(n > 0 ? n : 1);
	}
	if (r == 0 && ps->p < ps->end)
		return 1;
	if (r == 0)
		r = parser_finish(ps, ret);
	if (r == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", ld->name);
	if (r < 0)
		ld->cfg = agent_config_free(ld->cfg); /* a failed parser is done too */
	return r;
}

int
agent_config_parse(const char *name, const char *text, size_t len, const char *ippool_ref,
    struct agent_config **ret, char *err, size_t errlen)
{
	struct agent_config_parser *ps = parser_new(name, text, len, ippool_ref);
	int r;

	if (ps == NULL) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	r = agent_config_parser_step(ps, 0, ret, err, errlen);
	agent_config_parser_free(ps);
	return r;
}

/*
 * Reads the whole file: a regular file of at most CONFIG_MAX_SIZE only. Opened non-blocking, so
 * a FIFO without a writer cannot hang the start or a reload; /dev/zero and the like are refused
 * before a byte is read; a file growing past the limit while read is refused too. Returns 0, or
 * a negative errno after filling err (-EINVAL for the kind or the size of the file).
 */
static int
config_read(const char *path, char **ret, size_t *ret_len, char *err, size_t errlen)
{
	struct stat st;
	size_t cap, len = 0;
	char *buf;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-r));
		close(fd);
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file (%s); give a YAML file", path,
		    S_ISDIR(st.st_mode)	   ? "a directory"
		    : S_ISFIFO(st.st_mode) ? "a FIFO"
		    : S_ISCHR(st.st_mode)  ? "a character device"
		    : S_ISBLK(st.st_mode)  ? "a block device"
		    : S_ISSOCK(st.st_mode) ? "a socket"
					   : "not a file");
		close(fd);
		return -EINVAL;
	}
	if (st.st_size < 0 || (uint64_t)st.st_size > CONFIG_MAX_SIZE) {
		snprintf(err, errlen, "%s: %lld bytes, over the limit of " CONFIG_MAX_SIZE_NAME,
		    path, (long long)st.st_size);
		close(fd);
		return -EINVAL;
	}
	/* one byte more than the size, to see a file that grew */
	cap = (size_t)st.st_size + 2;
	buf = malloc(cap);
	if (buf == NULL) {
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t n;

		if (len == cap - 1) {
			char *nb;

			if (cap - 1 > CONFIG_MAX_SIZE) {
				snprintf(err, errlen,
				    "%s: more than " CONFIG_MAX_SIZE_NAME " (the file grows while "
				    "read)",
				    path);
				r = -EINVAL;
				goto fail;
			}
			cap = MIN(cap * 2, (size_t)CONFIG_MAX_SIZE + 2);
			if ((nb = realloc(buf, cap)) == NULL) {
				snprintf(err, errlen, "%s: out of memory", path);
				r = -ENOMEM;
				goto fail;
			}
			buf = nb;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-r));
			goto fail;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*ret = buf;
	*ret_len = len;
	return 0;
fail:
	close(fd);
	free(buf);
	return r;
}

int
agent_config_parser_open(const char *path, const char *ippool_ref, struct agent_config_parser **ret,
    char *err, size_t errlen)
{
	struct agent_config_parser *ps;
	char *text = NULL;
	size_t len = 0;
	int r;

	if ((r = config_read(path, &text, &len, err, errlen)) < 0)
		return r;
	ps = parser_new(path, text, len, ippool_ref);
	if (ps == NULL) {
		free(text);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	ps->owned = text;
	*ret = ps;
	return 0;
}

int
agent_config_load(
    const char *path, const char *ippool_ref, struct agent_config **ret, char *err, size_t errlen)
{
	struct agent_config_parser *ps = NULL;
	int r;

	if ((r = agent_config_parser_open(path, ippool_ref, &ps, err, errlen)) < 0)
		return r;
	r = agent_config_parser_step(ps, 0, ret, err, errlen);
	agent_config_parser_free(ps);
	return r;
}

/* ---- the file as the agent's source (agent_file_source_ops) ---- */

static int
file_src_start(void *src)
{
	(void)src;
	return 0; /* the file was read before; SIGHUP reads it again */
}

static void
file_src_free(void *src)
{
	agent_config_free(src);
}

static const struct agent_config *
file_src_config(const void *src)
{
	return src;
}

static bool
file_src_ready(const void *src, char *reason, size_t len)
{
	const struct agent_config *c = src;

	if (c->paused) {
		snprintf(reason, len, "pool %s/%s is paused", c->pool_ns, c->pool_name);
		return false;
	}
	return true;
}

static bool
file_src_serving(const void *src)
{
	return !((const struct agent_config *)src)->paused;
}

static void
file_src_stats(const void *src, struct agent_source_stats *ret)
{
	(void)src;
	*ret = (struct agent_source_stats){0};
}

const struct agent_source_ops agent_file_source_ops = {
    .start = file_src_start,
    .free = file_src_free,
    .config = file_src_config,
    .ready = file_src_ready,
    .serving = file_src_serving,
    .stats = file_src_stats,
};
