/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The running agent (serve-internal.h for its other files): the object (agent_new,
 * agent_free), the pool's source (the file in local mode, with its reload; the IPPool in
 * Kubernetes mode) pushed into the DHCP engine, the engine's callbacks (--dynamic allocation
 * through on_unknown, DECLINE, ACK, the decision log's feed) and the sweep that expires
 * dynamic leases and DECLINE marks. The sockets, the failover, the warm start and the
 * /healthz /readyz /metrics content are in their own files (see serve-internal.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "agent/agent.h"
#include "agent/apply-config.h"
#include "agent/decline-marks.h"
#include "agent/dump.h"
#include "agent/dynamic.h"
#include "agent/leasefile.h"
#include "agent/link.h"
#include "agent/listen.h"
#include "agent/metrics.h"
#include "agent/serve-internal.h"
#include "agent/serve6.h"
#include "agent/sockets.h"
#include "agent/source.h"
#include "agent/warmstart.h"
#include "kube/kube.h"
#include "lib/clock.h"
#include "lib/httpd.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/util.h"

/*
 * --dynamic leases and DECLINE marks are reclaimed by a sweep this often, over at most
 * EXPIRE_BUDGET entries (and held addresses) each: a /16 of leases is swept in under a
 * minute, in slices that keep the event loop responsive. Expiry is at most that late, next to
 * a grace period of half the lease time by default.
 */
#define EXPIRE_TICK_SEC 5
#define EXPIRE_BUDGET 16384

static struct log_ratelimit rl_lease = LOG_RATELIMIT_INIT(10 * USEC_PER_SEC, 5);

/*
 * The engine's send-time clock: vmdhcp_agent_reply_latency_seconds is receive -> send. Also the
 * clock of the dynamic leases' expiry and of the DECLINE hold-downs.
 */
static uint64_t
dhcp_clock(void *userdata)
{
	(void)userdata;
	return clock_now_usec();
}

/*
 * The engine asks before it builds the OFFER/ACK; replies leave at the end of the batch. The
 * lease line is written here, for a REQUEST (agent_dynamic_request_id: a DISCOVER only gets an
 * offer, on_offer), so it is in the
 * file (page cache) before the reply is sent: a kill -9 can never lose a lease a client was
 * told about. When it cannot be written (disk full, I/O error) the allocation is undone and
 * the request dropped (counted as unknown_mac): an address that is not in the file would go to
 * another MAC after a restart. The next request tries again, so serving resumes with the space.
 */
static int
on_unknown(void *userdata, const uint8_t mac[6], uint32_t *ret_ip)
{
	struct agent *a = userdata;
	const uint8_t *id;
	uint64_t failed;
	char m[MAC_STRLEN];
	size_t id_len;
	int r;

	if (a->dyn == NULL || memcmp(mac, a->guard.probe_mac, 6) == 0)
		return -ENOENT; /* the guard's probe (guard.c) takes no address */
	/* the lease is the client identifier's (option 61), else the MAC's: RFC 2131 §4.2 */
	id = dhcp_server_client_id(a->dhcp, &id_len);
	failed = leasefile_append_errors(a->lf);
	r = agent_dynamic_request_id(
	    a->dyn, a->dhcp, mac, id, id_len, dhcp_server_requested_ip(a->dhcp), ret_ip);
	if (r < 0 && leasefile_append_errors(a->lf) != failed) {
		mac_format(mac, m);
		log_ratelimited(&rl_lease, clock_now_usec(), LOG_LEVEL_ERROR,
		    "%s: cannot record a lease for %s: %s; not answered", a->opts.lease_path, m,
		    strerror(-r));
		return -EAGAIN; /* silence, not a DHCPNAK: the client's retry may find room */
	}
	return r;
}

/*
 * A DISCOVER from a MAC without a binding: an address is offered and held for --offer-hold,
 * not leased (agent_dynamic_offer_id); a lease the MAC already has is bound (return 1). Over
 * the cap of pending offers the DISCOVER is dropped (offer_limit): counted, and said in one
 * warning when it starts and a summary line at most every OFFERS_SUMMARY_USEC (expire_cb).
 */
#define OFFERS_SUMMARY_USEC (10 * USEC_PER_SEC)

static int
on_offer(void *userdata, const uint8_t mac[6], uint32_t *ret_ip)
{
	struct agent *a = userdata;
	struct agent_offer_stats st;
	const uint8_t *id;
	size_t id_len;
	uint64_t failed;
	char m[MAC_STRLEN];
	int r;

	if (a->dyn == NULL || memcmp(mac, a->guard.probe_mac, 6) == 0)
		return -ENOENT; /* the guard's probe (guard.c) takes no address */
	id = dhcp_server_client_id(a->dhcp, &id_len);
	failed = leasefile_append_errors(a->lf);
	r = agent_dynamic_offer_id(a->dyn, a->dhcp, mac, id, id_len, ret_ip);
	if (r == -EBUSY) {
		uint64_t now = clock_now_usec();
		if (a->offers.first == 0)
			a->offers.first = now;
		a->offers.last = now;
		if (!a->offers.refusing) {
			agent_dynamic_offer_stats(a->dyn, &st);
			a->offers.refusing = true;
			a->offers.logged = st.refused - 1;
			log_warn("%zu offers pending, the most --max-pending-offers allows: "
				 "DHCPDISCOVERs from new MACs are dropped (counted as offer_limit) "
				 "until offers are taken or their --offer-hold ends",
			    st.pending);
		}
	} else if (r < 0 && r != -EBUSY && leasefile_append_errors(a->lf) != failed) {
		/* a lease moved to this MAC with its identifier could not be recorded */
		mac_format(mac, m);
		log_ratelimited(&rl_lease, clock_now_usec(), LOG_LEVEL_ERROR,
		    "%s: cannot record a lease for %s: %s; not answered", a->opts.lease_path, m,
		    strerror(-r));
	}
	return r;
}

/*
 * While DISCOVERs are refused (on_offer): a summary of those refused, the span they came in and
 * their rate, once OFFERS_SUMMARY_USEC passed since the first; a line when none came for as long.
 */
static void
offers_summary(struct agent *a, uint64_t now)
{
	struct agent_offer_stats st;
	uint64_t n, span;

	if (!a->offers.refusing || a->dyn == NULL)
		return;
	agent_dynamic_offer_stats(a->dyn, &st);
	if (a->offers.first == 0) {
		if (now - a->offers.summary_at < OFFERS_SUMMARY_USEC)
			return;
		log_info("DHCPDISCOVERs from new MACs answered again: %zu offers pending (at most "
			 "%zu)",
		    st.pending, st.max_pending);
		a->offers.refusing = false;
		return;
	}
	if (now - a->offers.first < OFFERS_SUMMARY_USEC)
		return;
	n = st.refused - a->offers.logged;
	span = MAX(a->offers.last - a->offers.first, (uint64_t)1000);
	log_warn("%" PRIu64 " DHCPDISCOVERs from new MACs refused in %.1f s (%" PRIu64
		 "/s): %zu offers pending, at most %zu (--max-pending-offers)",
	    n, (double)span / USEC_PER_SEC, n * USEC_PER_SEC / span, st.pending, st.max_pending);
	a->offers.logged = st.refused;
	a->offers.first = 0;
	a->offers.summary_at = now;
}

/* Every request handled: one info line (rate-limited, see agent.h). */
static void
on_decision(void *userdata, const struct dhcp_decision *d)
{
	struct agent *a = userdata;

	agent_declog_decision(&a->declog, d, agent_cur_cfg(a));
}

static struct log_ratelimit rl_decline = LOG_RATELIMIT_INIT(10 * USEC_PER_SEC, 10);

/*
 * The engine marked mac's binding declined and answers it no more: the mark is cleared once
 * the hold-down is over (agent_marks_expire, from expire_cb).
 */
static void
hold_mark(
    struct agent *a, const uint8_t mac[6], uint32_t ip, uint64_t now, const char *m, const char *s)
{
	if (agent_marks_add(a->marks, mac, ip, now) < 0)
		log_ratelimited(&rl_decline, now, LOG_LEVEL_ERROR,
		    "%s -> %s: out of memory: its DHCPDECLINE mark stays until a restart", m, s);
}

static void
on_decline(void *userdata, const uint8_t mac[6], uint32_t ip)
{
	struct agent *a = userdata;
	char m[MAC_STRLEN], s[IPV4_STRLEN], n[IPV4_STRLEN];
	uint64_t now = dhcp_clock(NULL);
	uint32_t nip, bound;
	int r;

	mac_format(mac, m);
	ipv4_format(ip, s);
	if (a->dyn != NULL && (r = agent_dynamic_decline(a->dyn, mac, ip, &nip)) != -ENOENT) {
		/* a dynamic lease: move the MAC; the engine clears its DECLINE mark */
		if (r == 0)
			r = dhcp_server_set_binding(a->dhcp, mac, nip, NULL);
		if (r == 0) {
			ipv4_format(nip, n);
			log_ratelimited(&rl_decline, now, LOG_LEVEL_WARN,
			    "DHCPDECLINE from %s for %s: the address is in use on the network; "
			    "%s moved to %s, %s held for %u s",
			    m, s, m, n, s, a->opts.decline_hold_s);
			return;
		}
		hold_mark(a, mac, ip, now, m, s);
		if (r == -EBUSY) {
			a->declines_ignored[IGNORED_RATE_LIMITED]++;
			log_ratelimited(&rl_decline, now, LOG_LEVEL_WARN,
			    "DHCPDECLINE from %s for %s ignored: %d DECLINEs of this MAC were "
			    "honoured within %u s already; no reply to it until its lease "
			    "expires or the hold-down ends",
			    m, s, AGENT_DECLINE_LIMIT, a->opts.decline_hold_s);
			return;
		}
		log_ratelimited(&rl_decline, now, LOG_LEVEL_WARN,
		    "DHCPDECLINE from %s for %s: the address is in use on the network; no other "
		    "address for it: %s; no reply to it for %u s",
		    m, s, strerror(-r), a->opts.decline_hold_s);
		return;
	}
	/* the engine marks a binding only when the DECLINE names its address */
	if (dhcp_server_get_binding(a->dhcp, mac, &bound) < 0 || bound != ip) {
		a->declines_ignored[IGNORED_NOT_BOUND]++;
		log_ratelimited(&rl_decline, now, LOG_LEVEL_WARN,
		    "DHCPDECLINE from %s for %s ignored: not the address bound to it", m, s);
		return;
	}
	hold_mark(a, mac, ip, now, m, s);
	log_ratelimited(&rl_decline, now, LOG_LEVEL_WARN,
	    "DHCPDECLINE from %s for %s: the address is in use on the network; not offered to "
	    "it again for %u s (the hold-down) unless its binding changes",
	    m, s, a->opts.decline_hold_s);
}

/*
 * A lease granted or renewed: a dynamic one now lives lease time + grace from now, keyed by the
 * request's client identifier when it brought a new one (a line in the lease file; when that
 * cannot be written the lease keeps its key, and the error is counted).
 */
static void
on_ack(void *userdata, const uint8_t mac[6], uint32_t ip)
{
	struct agent *a = userdata;
	const uint8_t *id;
	size_t id_len;

	if (a->dyn == NULL)
		return;
	id = dhcp_server_client_id(a->dhcp, &id_len);
	(void)agent_dynamic_renew_id(a->dyn, mac, id, id_len, ip);
}

/*
 * Reclaims expired dynamic leases, held addresses and DECLINE marks, a bounded slice at a
 * time. The lease file is rewritten when leases went: removals are not journaled, and an
 * address given to another MAC must not meet its old lease line again after a crash.
 */
static void
expire_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	size_t n;
	int r;

	(void)fd;
	(void)what;
	/* a storm that stopped still gets its summary of suppressed decision lines */
	agent_declog_flush(&a->declog, dhcp_clock(NULL), false);
	offers_summary(a, dhcp_clock(NULL));
	(void)agent_marks_expire(a->marks, a->dhcp, dhcp_clock(NULL), EXPIRE_BUDGET);
	/* the lease file deleted or replaced under us, or not writable yet: (re)written here */
	if (a->lf != NULL)
		(void)leasefile_check(a->lf);
	if (a->dyn == NULL || (n = agent_dynamic_expire(a->dyn, a->dhcp, EXPIRE_BUDGET)) == 0)
		return;
	a->expired += n;
	if (a->opts.lease_path != NULL && (r = leasefile_compact(a->lf)) < 0) {
		a->sweep_write_errors++;
		log_ratelimited(&rl_lease, clock_now_usec(), LOG_LEVEL_ERROR,
		    "%s: cannot write lease file: %s", a->opts.lease_path, strerror(-r));
	}
}

static void
log_config(const struct agent *a, const struct agent_config *c, const char *what, int removed)
{
	char sip[IPV4_STRLEN], net[IPV4_STRLEN], st[IPV4_STRLEN], en[IPV4_STRLEN];

	ipv4_format(c->opts.server_ip, sip);
	ipv4_format(c->cidr, net);
	ipv4_format(c->pool_start, st);
	ipv4_format(c->pool_end, en);
	log_info("%s %s: pool %s/%s network %s, %s/%u server %s range %s-%s, %zu static "
		 "bindings, %zu dynamic leases%s, %d removed",
	    what, a->opts.config_path, c->pool_ns, c->pool_name, c->network, net, c->prefix, sip,
	    st, en, c->n_bindings, a->lf ? leasefile_count(a->lf) : 0, c->paused ? " (paused)" : "",
	    removed);
}

int
agent_reload(struct agent *a)
{
	char err[AGENT_ERR_MAX] = "";
	struct agent_config *cfg = NULL;
	int r;

	if (a->opts.kube) {
		log_info("reload: nothing to re-read in Kubernetes mode (the IPPool is watched)");
		return 0;
	}
	r = agent_config_load(a->opts.config_path, a->opts.ippool_ref, &cfg, err, sizeof(err));
	return agent_reload_done(a, r, cfg, err);
}

int
agent_reload_done(struct agent *a, int r, struct agent_config *cfg, const char *err_in)
{
	char err[AGENT_ERR_MAX];
	struct agent_dynamic *dyn = NULL;
	bool was_paused;
	uint32_t old_server;

	snprintf(err, sizeof(err), "%s", err_in != NULL ? err_in : "");
	was_paused = agent_cur_cfg(a)->paused;
	old_server = agent_cur_cfg(a)->opts.server_ip;
	if (r < 0) {
		log_error("reload: %s; keeping the previous configuration", err);
		a->reloads[RELOAD_ERROR]++;
		return r;
	}
	if (a->listen_ip != 0 && cfg->opts.server_ip == a->listen_ip) {
		log_error("reload: %s: serverIP is the --listen address, which would open /metrics "
			  "to the VMs on %s; keeping the previous configuration",
		    a->opts.config_path, a->opts.ifname);
		agent_config_free(cfg);
		a->reloads[RELOAD_ERROR]++;
		return -EINVAL;
	}
	/* expiries, hints and held addresses carry over from the pool being replaced */
	if (a->opts.dynamic &&
	    (r = agent_dynamic_new_opts(cfg, a->lf, &a->dyn_opts, a->dyn, &dyn)) < 0) {
		log_error("reload: %s: pool range: %s; keeping the previous configuration",
		    a->opts.config_path, strerror(-r));
		agent_config_free(cfg);
		a->reloads[RELOAD_ERROR]++;
		return r;
	}
	r = agent_apply_config(a->dhcp, cfg, dyn, err, sizeof(err));
	if (r < 0) {
		log_error("reload: %s: %s", a->opts.config_path, err);
		agent_dynamic_free(dyn);
		agent_config_free(cfg);
		a->reloads[RELOAD_ERROR]++;
		return r;
	}
	agent_dynamic_free(a->dyn);
	a->dyn = dyn;
	log_config(a, cfg, "reloaded", r);
	(void)agent_serve6_apply(a, cfg, "reloaded");
	agent_shrink_config(cfg);
	/* the file source's object is the config: the new one takes the old one's place */
	a->src.ops->free(a->src.src);
	a->src.src = cfg;
	if (a->lf != NULL && (r = leasefile_compact(a->lf)) < 0)
		log_error("%s: cannot write lease file: %s", a->opts.lease_path, strerror(-r));
	a->reloads[RELOAD_OK]++;
	/* the DHCPv6 sockets and the IPv6 serverIP follow an ipv6Config added, changed or gone */
	agent_update_sockets(a, was_paused != cfg->paused || old_server != cfg->opts.server_ip);
	return 0;
}

/* Kubernetes mode: a new valid IPPool version, a pause, a deletion: open or close. */
static void
kube_changed(void *userdata, const struct agent_config *cfg)
{
	struct agent *a = userdata;
	enum agent_kube_state st = agent_kube_get_state(a->src.src);

	if (st == AGENT_KUBE_ACTIVE || st == AGENT_KUBE_ABSENT)
		agent_warmstart_done(a, st);
	if (cfg != NULL)
		agent_warmstart_schedule(a);
	agent_update_sockets(a, false);
}

static int
kube_setup(struct agent *a, char *err, size_t errlen)
{
	struct agent_kube_opts ko = {
	    .ippool_ref = a->opts.ippool_ref,
	    .dhcp6 = a->dhcp6,
	    .on_change = kube_changed,
	    .userdata = a,
	};
	struct agent_kube *k;
	int r;

	if ((r = kube_config_load_context(
		 a->opts.kubeconfig, a->opts.kubecontext, &a->kcfg, err, errlen)) < 0)
		/* a kubeconfig missing, unreadable or wrong is configuration: exit status 2 */
		return r == -ENOMEM ? r : -EINVAL;
	if ((r = kube_client_new(a->base, a->kcfg, &a->kc)) < 0) {
		snprintf(err, errlen, "Kubernetes client: %s", strerror(-r));
		return r;
	}
	if ((r = agent_kube_new(a->kc, a->dhcp, &ko, &k, err, errlen)) < 0)
		return r;
	a->src = (struct agent_source){.ops = &agent_kube_source_ops, .src = k};
	if (a->opts.leader_elect && (r = agent_failover_setup(&a->fo, a->kc,
					 &agent_sockets_failover_hooks, a, err, errlen)) < 0)
		return r;
	if ((r = agent_kube_metrics_setup(a)) < 0) {
		snprintf(err, errlen, "out of memory");
		return r;
	}
	log_info("Kubernetes mode: IPPool %s from %s%s", a->opts.ippool_ref,
	    kube_config_server(a->kcfg), a->opts.dry_run ? " (dry run: no sockets)" : "");
	return 0;
}

/* The object with its options and defaults, nothing opened yet; takes cfg (local mode). */
static struct agent *
agent_alloc(struct event_base *base, const struct agent_opts *opts, struct agent_config *cfg)
{
	struct agent *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->base = base;
	a->opts = *opts;
	if (!opts->kube) /* local mode: the file read by the caller is the source */
		a->src = (struct agent_source){.ops = &agent_file_source_ops, .src = cfg};
	a->arp_fd = -1;
	agent_guard_init(&a->guard);
	/* failover's part and its timers; the API server counts as silent from the renew
	 * deadline after start */
	if (agent_failover_init(&a->fo, base, &a->opts, clock_now_usec()) < 0) {
		agent_failover_free(&a->fo);
		free(a);
		return NULL;
	}
	agent_declog_init(&a->declog, opts->log_dhcp);
	if (a->opts.decline_hold_s == AGENT_DEFAULT)
		a->opts.decline_hold_s = AGENT_DECLINE_HOLD_DEFAULT;
	a->dyn_opts = (struct agent_dynamic_opts){
	    .clock = dhcp_clock,
	    .grace_s = a->opts.lease_grace_s,
	    .decline_hold_s = a->opts.decline_hold_s,
	    .offer_hold_s = a->opts.offer_hold_s,
	    .max_offers = a->opts.max_offers,
	};
	return a;
}

/* --dynamic: the lease file and the pool over it, the file rewritten compacted. */
static int
dynamic_setup(struct agent *a, const struct agent_config *cfg, char *err, size_t errlen)
{
	const struct agent_opts *opts = &a->opts;
	int r;

	if ((r = leasefile_open(opts->lease_path, &a->lf, err, errlen)) < 0)
		return r;
	if ((r = agent_dynamic_new_opts(cfg, a->lf, &a->dyn_opts, NULL, &a->dyn)) < 0) {
		snprintf(err, errlen, "%s: pool range: %s", opts->config_path, strerror(-r));
		return r;
	}
	if (opts->lease_path != NULL && (r = leasefile_compact(a->lf)) < 0) {
		snprintf(
		    err, errlen, "%s: cannot write lease file: %s", opts->lease_path, strerror(-r));
		return r;
	}
	return 0;
}

/* The engine's callbacks and clock; in local mode the file's pool goes into it. */
static int
engine_setup(struct agent *a, struct agent_config *cfg, char *err, size_t errlen)
{
	struct dhcp_callbacks cb = {0};
	int r;

	cb.on_unknown = on_unknown;
	cb.on_offer = on_offer;
	cb.on_decline = on_decline;
	cb.on_ack = on_ack;
	if (a->opts.log_dhcp != AGENT_LOG_DHCP_NONE && log_get_level() >= LOG_LEVEL_INFO)
		cb.on_decision = on_decision;
	cb.userdata = a;
	dhcp_server_set_callbacks(a->dhcp, &cb);
	dhcp_server_set_clock(a->dhcp, dhcp_clock, NULL);
	if (a->opts.kube)
		return 0;
	if ((r = agent_apply_config(a->dhcp, cfg, a->dyn, err, errlen)) < 0)
		return r;
	log_config(a, cfg, "loaded", 0);
	(void)agent_serve6_apply(a, cfg, "loaded"); /* a refusal is logged; IPv4 serves */
	agent_shrink_config(cfg);
	return 0;
}

/* The timers of every part, the sweep's armed. 0 or -ENOMEM. */
static int
timers_new(struct agent *a)
{
	struct event_base *base = a->base;

	a->sock.ev_retry = evtimer_new(base, agent_retry_cb, a);
	a->ev_expire = event_new(base, -1, EV_PERSIST, expire_cb, a);
	a->ev_garp = evtimer_new(base, agent_garp_cb, a);
	a->warm.ev = evtimer_new(base, agent_warmstart_cb, a);
	if (a->sock.ev_retry == NULL || a->ev_expire == NULL || a->ev_garp == NULL ||
	    a->warm.ev == NULL || agent_guard_setup(a) < 0 ||
	    event_add(a->ev_expire, &(struct timeval){.tv_sec = EXPIRE_TICK_SEC}) < 0)
		return -ENOMEM;
	return 0;
}

/* The served interface watched (not in a dry run); its state said when it is not ready. */
static int
link_setup(struct agent *a, char *err, size_t errlen)
{
	const char *ifname = a->opts.ifname;
	const struct agent_link_state *st;
	int r;

	if (a->opts.dry_run)
		return 0;
	if ((r = agent_link_new(a->base, ifname, agent_link_changed, a, &a->link)) < 0) {
		snprintf(err, errlen, "%s: cannot watch the interface (netlink): %s", ifname,
		    strerror(-r));
		return r;
	}
	st = agent_link_state(a->link);
	if (!st->exists)
		log_warn("%s: no such interface yet; waiting for it", ifname);
	else if (!st->up)
		log_warn("%s: interface is down; waiting for it to come up", ifname);
	return 0;
}

/*
 * --listen: the HTTP endpoint (/healthz /readyz /metrics, /leases with
 * --enable-cache-dump-api), checked against the served interface and the serverIP of cfg
 * (local mode; NULL in Kubernetes mode).
 */
static int
http_setup(struct agent *a, const struct agent_config *cfg, char *err, size_t errlen)
{
	const struct agent_opts *opts = &a->opts;
	char msg[AGENT_ERR_MAX], dev[IF_NAMESIZE];
	int r;

	r = agent_listen_check(opts->listen, opts->ifname, opts->kube,
	    cfg != NULL ? cfg->opts.server_ip : 0, &a->listen_ip, msg, sizeof(msg));
	if (r < 0) {
		snprintf(err, errlen, "%s", msg); /* -EINVAL: exit status 2 */
		return r;
	}
	if (r > 0)
		log_warn("%s", msg);
	if ((r = httpd_new(a->base, opts->listen, a->mx.registry, &a->httpd)) < 0) {
		snprintf(err, errlen, "--listen %s: %s", opts->listen, strerror(-r));
		return r;
	}
	httpd_set_ready(a->httpd, agent_ready, a);
	if (opts->dump_api && (r = agent_add_dump_api(a)) < 0) {
		snprintf(err, errlen, "--enable-cache-dump-api: %s", strerror(-r));
		return r;
	}
	log_info(
	    "HTTP /healthz /readyz /metrics on %s (port %d)", opts->listen, httpd_port(a->httpd));
	/* a VM could still reach that address through the served interface (Linux takes any
	 * local address on any interface): accept on its own device only */
	if (agent_listen_device(opts->listen, dev, sizeof(dev)) < 0)
		return 0;
	if ((r = httpd_bind_device(a->httpd, dev)) < 0) {
		snprintf(err, errlen,
		    "--listen %s: cannot restrict it to %s: %s (needs CAP_NET_RAW)", opts->listen,
		    dev, strerror(-r));
		if (opts->kube)
			return r;
		log_warn("%s; VMs on %s may reach it", err, opts->ifname);
	} else {
		log_info("HTTP accepts connections that arrive on %s only", dev);
	}
	return 0;
}

/* Serving: the snapshot, the sockets, the source, the election, then the capability drop. */
static int
agent_start(struct agent *a, char *err, size_t errlen)
{
	int r;

	if (a->opts.snapshot_path != NULL) /* Kubernetes mode only (main.c) */
		agent_warmstart_load(a);
	agent_update_sockets(a, true);
	if ((r = a->src.ops->start(a->src.src)) < 0) {
		snprintf(err, errlen, "IPPool informer: %s", strerror(-r));
		return r;
	}
	if (a->fo.leader != NULL && (r = kube_leader_start(a->fo.leader)) < 0) {
		snprintf(err, errlen, "leader election: %s", strerror(-r));
		return r;
	}
	/* the capabilities go now if the sockets are open (local mode), else at the first open */
	a->sock.started = true;
	if ((a->sock.open || a->opts.dry_run) && (r = agent_drop_capabilities(a)) < 0) {
		snprintf(err, errlen, "cannot drop capabilities: %s", strerror(-r));
		return r;
	}
	return 0;
}

int
agent_new(struct event_base *base, const struct agent_opts *opts, struct agent_config *cfg,
    struct agent **ret, char *err, size_t errlen)
{
	struct agent *a = agent_alloc(base, opts, cfg);
	int r;

	if (a == NULL) {
		agent_config_free(cfg);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	if ((r = dhcp_server_new(&a->dhcp)) < 0 || (r = agent_serve6_new(a)) < 0 ||
	    (r = agent_metrics_setup(a)) < 0 ||
	    (r = agent_marks_new(a->opts.decline_hold_s, &a->marks)) < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if ((opts->kube && (r = kube_setup(a, err, errlen)) < 0) ||
	    (opts->dynamic && (r = dynamic_setup(a, cfg, err, errlen)) < 0) ||
	    (r = engine_setup(a, cfg, err, errlen)) < 0)
		goto fail;
	if ((r = timers_new(a)) < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if ((r = link_setup(a, err, errlen)) < 0 ||
	    (opts->listen != NULL && (r = http_setup(a, cfg, err, errlen)) < 0) ||
	    (r = agent_start(a, err, errlen)) < 0)
		goto fail;
	*ret = a;
	return 0;
fail:
	agent_free(a);
	return r;
}

int
agent_stop(struct agent *a, void (*done)(void *userdata), void *userdata)
{
	return agent_failover_stop(&a->fo, done, userdata);
}

int
agent_exit_status(const struct agent *a)
{
	return a != NULL ? a->exit_status : 0;
}

struct agent *
agent_free(struct agent *a)
{
	int r;

	if (a == NULL)
		return NULL;
	httpd_free(a->httpd);
	agent_failover_free(&a->fo); /* not answering, the address gone, before the sockets close */
	agent_close_sockets(a);
	agent_guard_free(a); /* before the client its calls use */
	agent_serve6_free(a);
	agent_declog_flush(&a->declog, dhcp_clock(NULL), true);
	if (a->sock.ev_retry != NULL)
		event_free(a->sock.ev_retry);
	if (a->ev_expire != NULL)
		event_free(a->ev_expire);
	if (a->ev_garp != NULL)
		event_free(a->ev_garp);
	if (a->warm.ev != NULL)
		event_free(a->warm.ev);
	agent_config_free(a->warm.snap);
	agent_link_free(a->link);
	if (a->lf != NULL && a->opts.lease_path != NULL && (r = leasefile_compact(a->lf)) < 0)
		log_error("%s: cannot write lease file: %s", a->opts.lease_path, strerror(-r));
	agent_dynamic_free(a->dyn);
	agent_marks_free(a->marks);
	leasefile_free(a->lf);
	if (a->src.ops != NULL)
		a->src.ops->free(a->src.src); /* before the client it uses */
	kube_client_free(a->kc);
	kube_config_free(a->kcfg);
	dhcp_server_free(a->dhcp);
	metrics_free(a->mx.registry);
	free(a);
	return NULL;
}
