/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes mode: an informer on exactly one IPPool (namespace NS, field selector
 * metadata.name=NAME). Each version of the object is decoded from its text by the informer's
 * typed codec (crds/ippool.h's ippool_decode_text: no jansson tree of status.ipv4.allocated)
 * into the same struct agent_config local mode builds (spec options + the bindings of
 * status.ipv4.allocated, EXCLUDED/RESERVED marks skipped); the handlers push it into the
 * engine through agent_apply_config(), the path local mode uses, and keep it as the current
 * version.
 *
 *   add/update, valid      -> options + full binding resync; the next reply sees them
 *   add/update, malformed  -> counted and logged; the engine keeps the previous version
 *   delete (or gone at a relist) -> bindings cleared, not serving, not ready
 *   API server unreachable -> nothing changes here: the engine serves from memory while the
 *                             informer reconnects with backoff (and relists after a 410)
 *
 * NTP hostnames are resolved asynchronously (evdns: /etc/hosts, then resolv.conf's servers),
 * never on the serving path: a version is applied at once with the addresses known so far, and
 * the options are pushed again when a name resolves or its address changes (names are
 * resolved again every ntp_refresh, so a failed one is retried).
 *
 * Hostnames (option 12): status.ipv4.allocated carries no VM name, so bindings have none.
 *
 * One version of the IPPool -> struct agent_config is source-kube-pool.c's; this file holds
 * the informer's glue, the NTP names and what is applied.
 */
#include <errno.h>
#include <malloc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <event2/dns.h>
#include <event2/event.h>
#include <event2/util.h>

#include "agent/apply-config.h"
#include "agent/pool-config.h"
#include "agent/source-kube-internal.h"
#include "agent/source.h"
#include "crds/ippool.h"
#include "dhcp/dhcp6.h"
#include "kube/kube.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"

static const struct kube_resource res_ippools = {
    .group = CRD_GROUP,
    .version = CRD_VERSION,
    .resource = IPPOOL_PLURAL,
    .kind = IPPOOL_KIND,
    .namespaced = true,
};

#define NTP_REFRESH_USEC_DEFAULT (60 * 1000000ull)
/* the names of the applied version and of the one being decoded fit */
#define NTP_CACHE_MAX (2 * IPPOOL_NTP_MAX)

enum ntp_state {
	NTP_UNUSED,
	NTP_UNKNOWN, /* first resolution under way */
	NTP_OK,
	NTP_FAILED,
};

struct ntp_entry;

/* One resolution under way; the callback frees it. e is NULL once nobody waits for it. */
struct ntp_req {
	struct ntp_entry *e;
};

/* One NTP hostname and what it resolved to. */
struct ntp_entry {
	struct agent_kube *k;
	char name[IPPOOL_NTP_LEN_MAX + 1];
	enum ntp_state state;
	uint32_t addr;			       /* last known (also kept while FAILED) */
	struct evdns_getaddrinfo_request *req; /* pending resolution, or NULL */
	struct ntp_req *rq;		       /* its context */
	bool starting;			       /* inside evdns_getaddrinfo (may answer at once) */
};

struct agent_kube {
	struct dhcp_server *dhcp;   /* borrowed */
	struct dhcp6_server *dhcp6; /* borrowed; NULL: IPv6 not served */
	struct kube_informer *inf;
	char ns[254];
	char name[254];
	char field_selector[300];
	agent_kube_fn on_change;
	void *userdata;

	enum agent_kube_state state;
	struct agent_config *cur; /* last applied version, bindings dropped; NULL before */
	struct ntp_names cur_ntp; /* its NTP entries as written */
	struct agent_source_stats stats;
	char last_invalid[AGENT_ERR_MAX]; /* the error last logged for a refused version */

	struct event_base *base; /* borrowed (the client's) */
	struct evdns_base *dns;
	struct event *ntp_timer;
	uint64_t ntp_refresh_usec;
	struct ntp_entry ntp[NTP_CACHE_MAX];
};

/* ---- NTP names ------------------------------------------------------------------------- */

static struct ntp_entry *
ntp_find(struct agent_kube *k, const char *name)
{
	for (size_t i = 0; i < NTP_CACHE_MAX; i++)
		if (k->ntp[i].state != NTP_UNUSED && strcmp(k->ntp[i].name, name) == 0)
			return &k->ntp[i];
	return NULL;
}

static bool
names_have(const struct ntp_names *n, const char *name)
{
	for (size_t i = 0; i < n->n; i++)
		if (strcmp(n->name[i], name) == 0)
			return true;
	return false;
}

/* names (borrowed) -> o->ntp: literals, and the hostnames with an address so far, in order. */
static void
ntp_fill(struct agent_kube *k, const struct ntp_names *names, struct dhcp_options *o)
{
	o->n_ntp = 0;
	for (size_t i = 0; i < names->n && o->n_ntp < DHCP_MAX_NTP; i++) {
		const struct ntp_entry *e;
		uint32_t a;

		if (ipv4_parse(names->name[i], &a) == 0) {
			o->ntp[o->n_ntp++] = a;
			continue;
		}
		e = ntp_find(k, names->name[i]);
		if (e != NULL && e->addr != 0)
			o->ntp[o->n_ntp++] = e->addr;
	}
}

/* The applied version's NTP option again, after a name resolved or changed address. */
static void
ntp_reapply(struct agent_kube *k)
{
	struct dhcp_options *o;
	int r;

	if (k->state != AGENT_KUBE_ACTIVE)
		return;
	o = &k->cur->opts;
	ntp_fill(k, &k->cur_ntp, o);
	if ((r = dhcp_server_set_options(k->dhcp, o)) < 0)
		log_error(
		    "IPPool %s/%s: NTP servers not updated: %s", k->ns, k->name, strerror(-r));
	else
		log_info("IPPool %s/%s: NTP servers updated (%zu)", k->ns, k->name, o->n_ntp);
}

static void
ntp_resolved(int result, struct evutil_addrinfo *res, void *arg)
{
	struct ntp_req *rq = arg;
	struct ntp_entry *e = rq->e;
	struct agent_kube *k;
	uint32_t old, addr = 0;
	char a[IPV4_STRLEN];

	free(rq);
	if (e == NULL || result == EVUTIL_EAI_CANCEL) {
		if (res != NULL)
			evutil_freeaddrinfo(res);
		return;
	}
	e->req = NULL;
	e->rq = NULL;
	k = e->k;
	old = e->addr;
	for (const struct evutil_addrinfo *ai = res; result == 0 && ai != NULL; ai = ai->ai_next)
		if (ai->ai_family == AF_INET) {
			const struct sockaddr_in *sin = (const void *)ai->ai_addr;
			addr = ntohl(sin->sin_addr.s_addr);
			break;
		}
	if (res != NULL)
		evutil_freeaddrinfo(res);
	if (addr == 0) {
		/* a last known address is kept: a resolver hiccup must not drop a working server */
		if (e->state != NTP_FAILED)
			log_warn("IPPool %s/%s: NTP server \"%s\": cannot resolve (%s)%s", k->ns,
			    k->name, e->name,
			    result != 0 ? evutil_gai_strerror(result) : "no IPv4 address",
			    old != 0 ? "; keeping its last address"
				     : "; not sent until it resolves");
		e->state = NTP_FAILED;
		return;
	}
	e->state = NTP_OK;
	e->addr = addr;
	if (addr == old)
		return;
	ipv4_format(addr, a);
	log_info("IPPool %s/%s: NTP server \"%s\" is %s", k->ns, k->name, e->name, a);
	/* answered at once: the version being decoded picks it up itself */
	if (!e->starting && names_have(&k->cur_ntp, e->name))
		ntp_reapply(k);
}

static void
ntp_resolve(struct agent_kube *k, struct ntp_entry *e)
{
	struct evutil_addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM};
	struct evdns_getaddrinfo_request *req;
	struct ntp_req *rq;

	if (e->rq != NULL || k->dns == NULL)
		return;
	if ((rq = calloc(1, sizeof(*rq))) == NULL)
		return; /* tried again at the next refresh */
	rq->e = e;
	e->rq = rq;
	e->starting = true;
	/* NULL when it answered at once (hosts file, error): the callback has run, rq is gone */
	req = evdns_getaddrinfo(k->dns, e->name, NULL, &hints, ntp_resolved, rq);
	e->starting = false;
	if (req != NULL)
		e->req = req;
}

/* Forgets e; returns whether a resolution was cancelled (its callback comes from the loop). */
static bool
ntp_drop(struct ntp_entry *e)
{
	bool pending = e->req != NULL;

	if (pending) {
		e->rq->e = NULL;
		evdns_getaddrinfo_cancel(e->req); /* ntp_resolved(CANCEL), deferred */
	}
	e->req = NULL;
	e->rq = NULL;
	e->state = NTP_UNUSED;
	e->name[0] = '\0';
	e->addr = 0;
	return pending;
}

/* Makes sure every hostname of names (borrowed) is known or being resolved. */
static void
ntp_want(struct agent_kube *k, const struct ntp_names *names)
{
	for (size_t i = 0; i < names->n; i++) {
		const char *name = names->name[i];
		struct ntp_entry *e = NULL;
		uint32_t a;

		if (ipv4_parse(name, &a) == 0 || ntp_find(k, name) != NULL)
			continue;
		/* a free slot, or one neither this version nor the applied one uses */
		for (size_t j = 0; j < NTP_CACHE_MAX && e == NULL; j++)
			if (k->ntp[j].state == NTP_UNUSED ||
			    (!names_have(names, k->ntp[j].name) &&
				!names_have(&k->cur_ntp, k->ntp[j].name)))
				e = &k->ntp[j];
		if (e == NULL)
			continue; /* cannot happen: 2 x IPPOOL_NTP_MAX slots */
		(void)ntp_drop(e);
		snprintf(e->name, sizeof(e->name), "%s", name);
		e->state = NTP_UNKNOWN;
		ntp_resolve(k, e);
	}
}

/* Every NTP hostname in use is resolved again (a failed one retried, a moved one followed). */
static void
ntp_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent_kube *k = arg;

	(void)fd;
	(void)what;
	for (size_t i = 0; i < NTP_CACHE_MAX; i++)
		if (k->ntp[i].state != NTP_UNUSED && names_have(&k->cur_ntp, k->ntp[i].name))
			ntp_resolve(k, &k->ntp[i]);
}

/*
 * The informer's codec: one version of the IPPool, as text, -> new struct kpool; NULL only
 * without memory. ippool_decode_text parses status.ipv4.allocated straight into its sorted
 * entries (never a jansson tree of 65 000 strings); they become the bindings here.
 */
static void *
kpool_decode(void *userdata, const char *text, size_t len)
{
	struct agent_kube *k = userdata;
	struct crd_error cerr = {0};
	struct ippool *p = NULL;
	struct kpool *kp = calloc(1, sizeof(*kp));
	int r;

	if (kp == NULL)
		return NULL;
	r = ippool_decode_text(text, len, &p, &cerr);
	if (r < 0) {
		if (r == -ENOMEM)
			goto nomem;
		kp->error = r;
		snprintf(kp->message, sizeof(kp->message), "%s", cerr.message);
		return kp;
	}
	kp->cfg = calloc(1, sizeof(*kp->cfg));
	if (kp->cfg == NULL)
		goto nomem;
	r = kpool_convert_spec(kp, k->ns, k->name, p);
	if (r == 0) {
		/* hostnames resolve in the background: those known now are sent, the others later
		 */
		ntp_want(k, &kp->ntp);
		ntp_fill(k, &kp->ntp, &kp->cfg->opts);
		r = kpool_convert_status(kp, p);
	}
	ippool_free(p);
	if (r == -ENOMEM) {
		kpool_destroy(kp);
		return NULL;
	}
	if (r < 0) {
		kp->error = r;
		kp->cfg = agent_config_free(kp->cfg);
	}
	return kp;
nomem:
	ippool_free(p);
	kpool_destroy(kp);
	return NULL;
}

/* ---- applying -------------------------------------------------------------------------------- */

static void
changed(struct agent_kube *k)
{
	if (k->on_change != NULL)
		k->on_change(k->userdata, k->state == AGENT_KUBE_ACTIVE ? k->cur : NULL);
}

#define TRIM_BINDINGS 4096

static void
trim_heap(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	malloc_trim(0);
}

/* Where the bindings of cfg came from, for the lines about them. */
static const char *
status_fields(const struct agent_config *cfg)
{
	return cfg->v6.enabled ? "status.ipv4/ipv6.allocated" : "status.ipv4.allocated";
}

/* ", IPv6: N bindings" for the applied line (a static buffer: the loop is single-threaded). */
static const char *
ipv6_summary(const struct agent_kube *k)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), ", IPv6: %zu bindings", dhcp6_server_n_bindings(k->dhcp6));
	return buf;
}
/*
 * kp is the store's item, made by kpool_decode: each version is handed to the handlers once
 * (no periodic resync; a relist skips unchanged versions), so once applied its bindings go to
 * the engine and its config, options included, becomes k->cur: nothing is copied.
 */
static void
apply(struct agent_kube *k, struct kpool *kp)
{
	struct agent_config *cfg;
	char err[AGENT_ERR_MAX];
	int removed;

	if (kp->applied)
		return; /* cannot happen (see above) */
	if (kp->cfg == NULL) {
		k->stats.malformed++;
		/*
		 * Said once per error text: a pool rewritten in a loop with the same fault
		 * logged a line per watch event (vmdhcp_agent_kube_malformed_total counts them
		 * all); a new error, or the same after a valid version, is said again.
		 */
		if (strcmp(k->last_invalid, kp->message) != 0) {
			snprintf(k->last_invalid, sizeof(k->last_invalid), "%s", kp->message);
			log_error("IPPool %s/%s: %s; %s", k->ns, k->name, kp->message,
			    k->state == AGENT_KUBE_ACTIVE ? "keeping the previous version"
							  : "nothing to serve yet");
		} else {
			log_debug("IPPool %s/%s: %s (again)", k->ns, k->name, kp->message);
		}
		if (k->state != AGENT_KUBE_ACTIVE)
			k->state = AGENT_KUBE_INVALID;
		return;
	}
	removed = agent_apply_config(k->dhcp, kp->cfg, NULL, err, sizeof(err));
	if (removed < 0) {
		k->stats.apply_errors++;
		log_error("IPPool %s/%s: %s", k->ns, k->name, err);
		return;
	}
	/* the IPv6 half: refused, it is said and counted, and IPv4 goes on */
	if (k->dhcp6 != NULL && agent_apply_config6(k->dhcp6, kp->cfg, err, sizeof(err)) < 0) {
		k->stats.apply_errors++;
		log_error("IPPool %s/%s: IPv6 not served: %s", k->ns, k->name, err);
	}
	/* the engine holds the bindings now; the config moves to k->cur */
	cfg = kp->cfg;
	kp->cfg = NULL;
	kp->applied = true;
	free(cfg->bindings);
	cfg->bindings = NULL;
	cfg->n_bindings = 0;
	free(cfg->v6.bindings);
	cfg->v6.bindings = NULL;
	cfg->v6.n_bindings = 0;

	agent_config_free(k->cur);
	k->cur = cfg;
	k->cur_ntp = kp->ntp;
	k->state = AGENT_KUBE_ACTIVE;
	k->last_invalid[0] = '\0';
	k->stats.applied++;
	k->stats.last_sync_usec = (uint64_t)clock_realtime_usec();
	log_info("IPPool %s/%s: applied: %zu bindings (%d removed)%s%s", k->ns, k->name,
	    dhcp_server_n_bindings(k->dhcp), removed, cfg->paused ? ", paused" : "",
	    cfg->v6.enabled && k->dhcp6 != NULL ? ipv6_summary(k) : "");
	k->stats.duplicate_macs = kp->duplicate_macs;
	if (kp->duplicate_macs > 0)
		log_warn("IPPool %s/%s: %s has %zu MAC(s) under more than one "
			 "address (e.g. %s); each is served its lowest address only",
		    k->ns, k->name, status_fields(cfg), kp->duplicate_macs, kp->duplicate_example);
	if (kp->invalid_macs > 0)
		log_warn("IPPool %s/%s: %s has %zu entr%s whose MAC is no "
			 "NIC's (e.g. %s); not served",
		    k->ns, k->name, status_fields(cfg), kp->invalid_macs,
		    kp->invalid_macs == 1 ? "y" : "ies", kp->invalid_example);
	changed(k);
	/* Decoding a large version (65 000 bindings: a 2.6 MB JSON) leaves ~20 MiB of freed
	 * heap that glibc keeps; hand it back once the informer has dropped the object. */
	if (dhcp_server_n_bindings(k->dhcp) >= TRIM_BINDINGS)
		(void)event_base_once(
		    k->base, -1, EV_TIMEOUT, trim_heap, NULL, &(struct timeval){0, 0});
}

static void
on_add(void *userdata, const char *key, const void *item)
{
	(void)key;
	apply(userdata, (struct kpool *)item); /* the codec's own item: see apply() */
}

static void
on_update(void *userdata, const char *key, const void *old, const void *item)
{
	(void)key;
	(void)old;
	apply(userdata, (struct kpool *)item); /* the codec's own item: see apply() */
}

static void
on_delete(void *userdata, const char *key, const void *item)
{
	struct agent_kube *k = userdata;
	size_t removed;

	(void)key;
	(void)item;
	/* the pool's addresses may be handed to another pool now: forget them */
	dhcp_server_sync_begin(k->dhcp);
	removed = dhcp_server_sync_end(k->dhcp);
	k->stats.deleted++;
	k->state = AGENT_KUBE_ABSENT;
	k->last_invalid[0] = '\0';
	k->cur = agent_config_free(k->cur);
	k->cur_ntp.n = 0;
	log_warn(
	    "IPPool %s/%s: deleted; %zu bindings dropped, not serving", k->ns, k->name, removed);
	changed(k);
}

/* ---- object ---------------------------------------------------------------------------------- */

/*
 * k's resolver (/etc/hosts and resolv.conf's servers, or opts->resolv_conf) and the NTP refresh
 * timer on k->base. 0; -EINVAL with err filled for a resolv.conf that cannot be used; -ENOMEM.
 */
static int
ntp_open(struct agent_kube *k, const struct agent_kube_opts *opts, char *err, size_t errlen)
{
	for (size_t i = 0; i < NTP_CACHE_MAX; i++)
		k->ntp[i].k = k;
	k->ntp_refresh_usec =
	    opts->ntp_refresh_usec != 0 ? opts->ntp_refresh_usec : NTP_REFRESH_USEC_DEFAULT;
	/* /etc/hosts and resolv.conf's servers (a missing file means 127.0.0.1, as libc does) */
	if (opts->resolv_conf == NULL)
		k->dns = evdns_base_new(
		    k->base, EVDNS_BASE_INITIALIZE_NAMESERVERS | EVDNS_BASE_DISABLE_WHEN_INACTIVE);
	else if ((k->dns = evdns_base_new(k->base, EVDNS_BASE_DISABLE_WHEN_INACTIVE)) != NULL &&
		 evdns_base_resolv_conf_parse(k->dns, DNS_OPTIONS_ALL, opts->resolv_conf) != 0) {
		snprintf(err, errlen, "%s: cannot be used for name resolution", opts->resolv_conf);
		return -EINVAL;
	}
	if (k->dns == NULL)
		return -ENOMEM;
	k->ntp_timer = event_new(k->base, -1, EV_PERSIST, ntp_timer_cb, k);
	if (k->ntp_timer == NULL)
		return -ENOMEM;
	return 0;
}

/* The informer on the one IPPool, its codec and handlers k's. Negative errno. */
static int
informer_open(struct agent_kube *k, struct kube_client *c, const struct agent_kube_opts *opts)
{
	struct kube_informer_opts io = {0};
	struct kube_codec codec = {0};
	struct kube_informer_handlers h = {0};
	int r;

	io.res = &res_ippools;
	io.ns = k->ns;
	io.field_selector = k->field_selector;
	io.backoff_base_usec = opts->backoff_base_usec;
	io.backoff_max_usec = opts->backoff_max_usec;
	io.watch_timeout_s = opts->watch_timeout_s;
	/* no periodic resync: a store item gives its bindings to the engine once applied */
	codec.decode = kpool_decode;
	codec.destroy = kpool_destroy;
	codec.userdata = k;
	io.codec = &codec;
	if ((r = kube_informer_new(c, &io, &k->inf)) < 0)
		return r;
	h.on_add = on_add;
	h.on_update = on_update;
	h.on_delete = on_delete;
	h.userdata = k;
	return kube_informer_add_handlers(k->inf, &h);
}

int
agent_kube_new(struct kube_client *c, struct dhcp_server *s, const struct agent_kube_opts *opts,
    struct agent_kube **ret, char *err, size_t errlen)
{
	struct agent_kube *k;
	int r;

	if (opts->ippool_ref == NULL || strchr(opts->ippool_ref, '/') == NULL) {
		snprintf(err, errlen, "--ippool-ref \"%s\": expected NAMESPACE/NAME",
		    opts->ippool_ref != NULL ? opts->ippool_ref : "");
		return -EINVAL;
	}
	k = calloc(1, sizeof(*k));
	if (k == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	k->dhcp = s;
	k->dhcp6 = opts->dhcp6;
	k->on_change = opts->on_change;
	k->userdata = opts->userdata;
	k->state = AGENT_KUBE_WAITING;
	r = kube_key_split(opts->ippool_ref, k->ns, sizeof(k->ns), k->name, sizeof(k->name));
	if (r < 0 || k->ns[0] == '\0' || k->name[0] == '\0') {
		snprintf(
		    err, errlen, "--ippool-ref \"%s\": expected NAMESPACE/NAME", opts->ippool_ref);
		free(k);
		return -EINVAL;
	}
	snprintf(k->field_selector, sizeof(k->field_selector), "metadata.name=%s", k->name);
	k->base = kube_client_base(c);
	if ((r = ntp_open(k, opts, err, errlen)) == -EINVAL) {
		agent_kube_free(k);
		return r;
	}
	if (r < 0 || (r = informer_open(k, c, opts)) < 0) {
		snprintf(err, errlen, "IPPool informer: %s", strerror(-r));
		agent_kube_free(k);
		return r;
	}
	*ret = k;
	return 0;
}

int
agent_kube_start(struct agent_kube *k)
{
	struct timeval tv = {
	    .tv_sec = (time_t)(k->ntp_refresh_usec / 1000000u),
	    .tv_usec = (suseconds_t)(k->ntp_refresh_usec % 1000000u),
	};

	if (event_add(k->ntp_timer, &tv) < 0)
		return -ENOMEM;
	return kube_informer_start(k->inf);
}

struct agent_kube *
agent_kube_free(struct agent_kube *k)
{
	bool pending = false;

	if (k == NULL)
		return NULL;
	kube_informer_free(k->inf);
	if (k->ntp_timer != NULL)
		event_free(k->ntp_timer);
	for (size_t i = 0; i < NTP_CACHE_MAX; i++)
		pending |= ntp_drop(&k->ntp[i]);
	/*
	 * evdns reports a cancelled resolution from the loop (and leaks it if the loop never runs
	 * again): one non-blocking pass lets those callbacks free their contexts.
	 */
	if (pending)
		(void)event_base_loop(k->base, EVLOOP_NONBLOCK);
	if (k->dns != NULL)
		evdns_base_free(k->dns, 0);
	agent_config_free(k->cur);
	free(k);
	return NULL;
}

enum agent_kube_state
agent_kube_get_state(const struct agent_kube *k)
{
	if (k->state == AGENT_KUBE_WAITING && kube_informer_has_synced(k->inf))
		return AGENT_KUBE_ABSENT; /* listed: no such object */
	return k->state;
}

const struct agent_config *
agent_kube_config(const struct agent_kube *k)
{
	return k->state == AGENT_KUBE_ACTIVE ? k->cur : NULL;
}

bool
agent_kube_serving(const struct agent_kube *k)
{
	return k->state == AGENT_KUBE_ACTIVE && !k->cur->paused;
}

bool
agent_kube_ready(const struct agent_kube *k, char *reason, size_t len)
{
	char why[512];

	switch (agent_kube_get_state(k)) {
	case AGENT_KUBE_WAITING:
		/* say why: "IPPool informer: list failed: ... - 5 failures since 12:00:01Z" */
		if (kube_informer_describe_failure(k->inf, why, sizeof(why)))
			snprintf(reason, len, "IPPool %s/%s: first sync not done; %s", k->ns,
			    k->name, why);
		else
			snprintf(reason, len, "IPPool %s/%s: first sync not done", k->ns, k->name);
		return false;
	case AGENT_KUBE_ABSENT:
		snprintf(reason, len, "IPPool %s/%s: not found", k->ns, k->name);
		return false;
	case AGENT_KUBE_INVALID:
		snprintf(reason, len, "IPPool %s/%s: no valid version yet", k->ns, k->name);
		return false;
	case AGENT_KUBE_ACTIVE:
		break;
	}
	if (k->cur->paused) {
		snprintf(reason, len, "IPPool %s/%s: paused", k->ns, k->name);
		return false;
	}
	return true;
}

void
agent_kube_get_stats(const struct agent_kube *k, struct agent_source_stats *ret)
{
	struct kube_informer_stats is;

	kube_informer_get_stats(k->inf, &is);
	*ret = k->stats;
	ret->synced = k->state == AGENT_KUBE_ACTIVE;
	ret->bindings = k->state == AGENT_KUBE_ACTIVE ? dhcp_server_n_bindings(k->dhcp) : 0;
	ret->watch_reconnects = is.watches > 0 ? is.watches - 1 : 0;
	ret->lists = is.lists;
	ret->relists_410 = is.relists_410;
	ret->errors = is.errors;
	ret->dropped = is.dropped;
}

/* ---- the IPPool as the agent's source (agent_kube_source_ops) ---- */

static int
kube_src_start(void *src)
{
	return agent_kube_start(src);
}

static void
kube_src_free(void *src)
{
	agent_kube_free(src);
}

static const struct agent_config *
kube_src_config(const void *src)
{
	return agent_kube_config(src);
}

static bool
kube_src_ready(const void *src, char *reason, size_t len)
{
	return agent_kube_ready(src, reason, len);
}

static bool
kube_src_serving(const void *src)
{
	return agent_kube_serving(src);
}

static void
kube_src_stats(const void *src, struct agent_source_stats *ret)
{
	agent_kube_get_stats(src, ret);
}

const struct agent_source_ops agent_kube_source_ops = {
    .start = kube_src_start,
    .free = kube_src_free,
    .config = kube_src_config,
    .ready = kube_src_ready,
    .serving = kube_src_serving,
    .stats = kube_src_stats,
};
