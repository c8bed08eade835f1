/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Local mode: the configuration file holds IPPool and VirtualMachineNetworkConfig objects as
 * YAML documents, exactly what a user would `kubectl apply`. One IPPool is served (picked by
 * --ippool-ref when there are several); every VMNetCfg NIC on that pool's network with an
 * ipAddress is a static binding, its hostname the VM name, and with an ipv6Address a static
 * IPv6 binding when the pool has an ipv6Config.
 *
 * Errors name the file, the document and its first line, and the field:
 *   pool.yaml: document 1 (line 3): spec.ipv4Config.cidr: "10.0.0/8" is not an IPv4 CIDR
 *
 * This file reads the YAML stream, a document at a time, and the file as the agent's source;
 * source-file-pool.c turns the documents read into the served pool and its bindings.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/source-file-internal.h"
#include "crds/ippool.h"
#include "crds/vmnetcfg.h"
#include "kube/yaml.h"
#include "lib/log.h"
#include "lib/ip6.h"
#include "lib/util.h"

/* The largest file read: 65 000 VMNetCfg documents are about 25 MiB. */
#define CONFIG_MAX_SIZE (64u << 20)
#define CONFIG_MAX_SIZE_NAME "64 MiB"

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

/* An IPPool document: the served one is kept (the first, or the one --ippool-ref names). */
static int
doc_ippool(struct stream *st, json_t *doc, size_t i, unsigned line)
{
	struct crd_error cerr = {0};
	struct ippool *pool = NULL;
	char ref[600];
	bool pick;
	int r;

	st->n_pools++;
	r = ippool_decode(doc, &pool, &cerr);
	if (r < 0)
		return r == -EINVAL ? sf_doc_error(st->ld, i, line, "%s", cerr.message) : r;
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

/* NIC k of a VMNetCfg document, kept when it has a static address (st->nics). */
static int
doc_nic(struct stream *st, const struct vmnetcfg *v, size_t k, size_t i, unsigned line)
{
	const struct vmnetcfg_nic *nic = &v->spec.nics[k];
	struct loader *ld = st->ld;
	struct nicrec *n;

	if (nic->ip_address == 0 && ipv6_is_zero(&nic->ipv6_address))
		return 0; /* no static address: --dynamic may serve it */
	if (st->n_nics == st->cap_nics) {
		size_t ncap = st->cap_nics == 0 ? 64 : st->cap_nics * 2;
		n = realloc(st->nics, ncap * sizeof(*n));
		if (n == NULL)
			return -ENOMEM;
		st->nics = n;
		st->cap_nics = ncap;
	}
	n = &st->nics[st->n_nics];
	if (mac_parse(nic->mac, n->mac) < 0)
		return sf_doc_error(ld, i, line, "spec.networkConfigs[%zu].macAddress: bad MAC", k);
	if (!mac_is_nic(n->mac)) {
		/* as a bad MAC: no NIC sends from it, a binding would never serve */
		return sf_doc_error(ld, i, line,
		    "spec.networkConfigs[%zu].macAddress: %s is %s, not a NIC's "
		    "address",
		    k, nic->mac, mac_kind(n->mac));
	}
	n->net = sf_net_hash(nic->network_name);
	n->ip = nic->ip_address;
	n->ip6 = nic->ipv6_address;
	n->doc = (uint32_t)i;
	n->nic = (uint16_t)k;
	n->hostname = sf_names_add(ld->cfg, v->spec.vm_name);
	if (n->hostname == UINT32_MAX)
		return -ENOMEM;
	st->n_nics++;
	return 0;
}

static int
doc_vmnetcfg(struct stream *st, json_t *doc, size_t i, unsigned line)
{
	struct crd_error cerr = {0};
	struct vmnetcfg *v = NULL;
	int r;

	r = vmnetcfg_decode(doc, &v, &cerr);
	if (r < 0)
		return r == -EINVAL ? sf_doc_error(st->ld, i, line, "%s", cerr.message) : r;
	for (size_t k = 0; k < v->spec.n_nics && r == 0; k++)
		r = doc_nic(st, v, k, i, line);
	vmnetcfg_free(v);
	return r;
}

/* One document of the stream, its first line recorded (for messages). */
static int
stream_doc(struct stream *st, json_t *doc, unsigned line)
{
	struct loader *ld = st->ld;
	size_t i = st->n_docs;
	const char *kind;

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
		return sf_doc_error(ld, i, line, "not a mapping (expected an object with kind)");
	kind = doc_kind(doc);
	if (kind == NULL)
		return sf_doc_error(ld, i, line, "kind: missing");
	if (strcmp(kind, IPPOOL_KIND) == 0)
		return doc_ippool(st, doc, i, line);
	if (strcmp(kind, VMNETCFG_KIND) == 0)
		return doc_vmnetcfg(st, doc, i, line);
	/* objects of other API groups (a NetworkAttachmentDefinition, a VirtualMachine)
	 * may sit in the same manifest: not ours, skipped; a typo in ours is an error */
	const char *av = json_string_value(json_object_get(doc, "apiVersion"));
	size_t glen = strlen(CRD_GROUP);
	if (av != NULL && !(strncmp(av, CRD_GROUP, glen) == 0 && av[glen] == '/')) {
		log_info("%s: document %zu (line %u): ignoring %s (%s)", ld->name, i + 1, line,
		    kind, av);
		return 0;
	}
	return sf_doc_error(
	    ld, i, line, "kind: \"%s\" is not %s or %s", kind, IPPOOL_KIND, VMNETCFG_KIND);
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
	int r;

	if ((r = sf_finish(&ps->st)) < 0)
		return r;
	*ret = ps->ld.cfg;
	ps->ld.cfg = NULL;
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
	} else if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file (%s); give a YAML file", path,
		    S_ISDIR(st.st_mode)	   ? "a directory"
		    : S_ISFIFO(st.st_mode) ? "a FIFO"
		    : S_ISCHR(st.st_mode)  ? "a character device"
		    : S_ISBLK(st.st_mode)  ? "a block device"
		    : S_ISSOCK(st.st_mode) ? "a socket"
					   : "not a file");
		r = -EINVAL;
	} else if (st.st_size < 0 || (uint64_t)st.st_size > CONFIG_MAX_SIZE) {
		snprintf(err, errlen, "%s: %lld bytes, over the limit of " CONFIG_MAX_SIZE_NAME,
		    path, (long long)st.st_size);
		r = -EINVAL;
	} else if ((r = read_fd(fd, CONFIG_MAX_SIZE, (size_t)st.st_size, ret, ret_len)) < 0) {
		if (r == -EFBIG) {
			snprintf(err, errlen,
			    "%s: more than " CONFIG_MAX_SIZE_NAME " (the file grows while read)",
			    path);
			r = -EINVAL;
		} else if (r == -ENOMEM) {
			snprintf(err, errlen, "%s: out of memory", path);
		} else {
			snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-r));
		}
	}
	close(fd);
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
