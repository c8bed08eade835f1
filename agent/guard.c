/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Foreign DHCP servers on the served network (guard.h, docs/foreign-servers.md): the guard
 * socket, the probe timer, the table of servers seen, the stand-down, the IPPool condition
 * and the Events.
 */
#include "agent/guard.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/serve-internal.h"
#include "crds/ippool.h"
#include "dhcp/proto.h"
#include "dhcp/socket-raw.h"
#include "kube/kube.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"

#ifndef SO_LOCK_FILTER
#define SO_LOCK_FILTER 44
#endif

#define READS_PER_WAKEUP 64
#define FIRST_PROBE_USEC 500000 /* after the sockets open: the interface settles */

static struct log_ratelimit rl_guard = LOG_RATELIMIT_INIT(60 * USEC_PER_SEC, 3);

static const struct kube_resource res_ippools = {
    .group = CRD_GROUP,
    .version = CRD_VERSION,
    .resource = IPPOOL_PLURAL,
    .kind = IPPOOL_KIND,
    .namespaced = true,
};

/* ---- the table (no I/O) ---- */

void
agent_guard_init(struct agent_guard *g)
{
	memset(g, 0, sizeof(*g));
	g->fd = -1;
	g->interval_s = IPPOOL_PROBE_INTERVAL_DEFAULT;
}

int
agent_guard_seen(struct agent_guard *g, const struct dhcp_foreign_reply *r, uint64_t now)
{
	struct agent_guard_server *s;

	for (size_t i = 0; i < g->n; i++) {
		s = &g->servers[i];
		if (memcmp(s->mac, r->mac, 6) == 0 && s->ip == r->server_ip) {
			s->last_usec = now;
			s->replies++;
			return 0;
		}
	}
	if (g->n == AGENT_GUARD_SERVERS_MAX) {
		g->table_full++;
		return -ENOSPC;
	}
	s = &g->servers[g->n++];
	memset(s, 0, sizeof(*s));
	memcpy(s->mac, r->mac, 6);
	s->ip = r->server_ip;
	s->first_usec = s->last_usec = now;
	s->replies = 1;
	return 1;
}

size_t
agent_guard_expire(struct agent_guard *g, uint64_t now, struct agent_guard_server *gone, size_t max)
{
	uint64_t iv = (uint64_t)g->interval_s * USEC_PER_SEC;
	uint64_t window = 2 * iv - iv / 4;
	size_t kept = 0, n_gone = 0;

	for (size_t i = 0; i < g->n; i++) {
		const struct agent_guard_server *s = &g->servers[i];

		if (now >= s->last_usec && now - s->last_usec >= window) {
			if (gone != NULL && n_gone < max)
				gone[n_gone] = *s;
			n_gone++;
			continue;
		}
		g->servers[kept++] = *s;
	}
	g->n = kept;
	return n_gone;
}

bool
agent_guard_stand_down_wanted(const struct agent_guard *g)
{
	return g->policy == IPPOOL_FOREIGN_STAND_DOWN && g->n > 0;
}

void
agent_guard_message(const struct agent_guard *g, char *out, size_t len)
{
	size_t off;
	int w;

	w = snprintf(
	    out, len, "%zu foreign DHCP server%s on the network:", g->n, g->n == 1 ? "" : "s");
	off = w > 0 ? (size_t)w : 0;
	for (size_t i = 0; i < g->n && off < len; i++) {
		char m[MAC_STRLEN], ip[IPV4_STRLEN];

		mac_format(g->servers[i].mac, m);
		ipv4_format(g->servers[i].ip, ip);
		w = snprintf(out + off, len - off, "%s MAC %s IP %s", i ? "," : "", m, ip);
		off += w > 0 ? (size_t)w : 0;
	}
}

/* ---- the engine quiet or not, composed with the failover's standby ---- */

static void
apply_stand_down(struct agent *a)
{
	struct agent_guard *g = &a->guard;
	bool want = agent_guard_stand_down_wanted(g);
	char m[MAC_STRLEN], ip[IPV4_STRLEN];

	if (want == g->stand_down)
		return;
	g->stand_down = want;
	dhcp_server_set_standby(a->dhcp, agent_dhcp_quiet(a));
	if (want) {
		mac_format(g->servers[0].mac, m);
		ipv4_format(g->servers[0].ip, ip);
		log_warn("%s: standing down (foreignServers.policy StandDown): foreign DHCP server "
			 "MAC %s IP %s seen; not answering DHCPv4 while one is seen",
		    a->opts.ifname, m, ip);
	} else {
		log_info("%s: no foreign DHCP server seen for two probe intervals (%u s each) or "
			 "policy no longer StandDown: answering again",
		    a->opts.ifname, g->interval_s);
	}
}

/* ---- Kubernetes mode: the condition and the Events ---- */

static void cond_sync(struct agent *a);

/* The Events of servers not yet announced, about the IPPool obj (borrowed). */
static void
record_events(struct agent *a, const json_t *obj)
{
	struct agent_guard *g = &a->guard;
	const struct agent_config *cfg = agent_cur_cfg(a);

	for (size_t i = 0; i < g->n; i++) {
		struct agent_guard_server *s = &g->servers[i];
		char m[MAC_STRLEN], ip[IPV4_STRLEN];

		if (s->announced)
			continue;
		mac_format(s->mac, m);
		ipv4_format(s->ip, ip);
		(void)kube_record_event(g->rec, obj, NULL, NULL, "Warning", AGENT_GUARD_COND,
		    "foreign DHCP server MAC %s IP %s answers on network %s: VMs may get their "
		    "addresses from it (policy %s)",
		    m, ip, cfg != NULL ? cfg->network : "?",
		    g->policy == IPPOOL_FOREIGN_STAND_DOWN ? "StandDown: the agent stands down"
							   : "Warn");
		s->announced = true;
	}
}

/* kube_update_retry's mutate: the condition of the table on the IPPool (obj, borrowed). */
static int
cond_mutate(void *userdata, json_t *obj)
{
	struct agent *a = userdata;
	struct agent_guard *g = &a->guard;
	struct crd_conditions conds = {0};
	json_t *status = json_object_get(obj, "status"), *arr;
	char msg[1024];
	int r;

	if (g->rec != NULL)
		record_events(a, obj);
	if (!json_is_object(status)) {
		status = json_object();
		if (status == NULL || json_object_set_new(obj, "status", status) < 0)
			return -ENOMEM;
	}
	if (crd_conditions_decode(
		json_object_get(status, "conditions"), "status.conditions", &conds, NULL) < 0)
		return 1; /* a status the controller will rewrite: not ours to fix */
	if (g->n == 0 && crd_conditions_get(&conds, AGENT_GUARD_COND) == NULL) {
		crd_conditions_clear(&conds);
		return 1; /* never seen one: no condition */
	}
	agent_guard_message(g, msg, sizeof(msg));
	r = crd_conditions_set(&conds, AGENT_GUARD_COND, g->n > 0 ? CRD_COND_TRUE : CRD_COND_FALSE,
	    g->n > 0 ? AGENT_GUARD_REASON_SEEN : AGENT_GUARD_REASON_NONE,
	    g->n > 0 ? msg : "no foreign DHCP server seen", 0, (time_t)clock_realtime_sec());
	arr = r > 0 ? crd_conditions_encode(&conds) : NULL;
	crd_conditions_clear(&conds);
	if (r <= 0)
		return r < 0 ? r : 1;
	if (arr == NULL || json_object_set_new(status, "conditions", arr) < 0)
		return -ENOMEM;
	return 0;
}

static void
cond_done(void *userdata, const struct kube_result *res)
{
	struct agent *a = userdata;
	struct agent_guard *g = &a->guard;

	g->cond_call = NULL;
	if (res->error < 0) {
		g->cond_synced = false;
		log_ratelimited(&rl_guard, clock_now_usec(), LOG_LEVEL_WARN,
		    "IPPool %s: cannot write the condition %s: %s%s%s", a->opts.ippool_ref,
		    AGENT_GUARD_COND, strerror(-res->error), res->message[0] ? ": " : "",
		    res->message);
		return;
	}
	g->cond_synced = true;
	if (g->cond_dirty) {
		g->cond_dirty = false;
		cond_sync(a);
	}
}

/* The condition brought to the table's state (Kubernetes mode, the answering replica). */
static void
cond_sync(struct agent *a)
{
	struct agent_guard *g = &a->guard;
	const struct agent_config *cfg = agent_cur_cfg(a);
	int r;

	g->cond_synced = false;
	if (a->kc == NULL || cfg == NULL || !a->fo.fsm.active)
		return;
	if (g->cond_call != NULL) {
		g->cond_dirty = true;
		return;
	}
	if (g->rec == NULL && kube_recorder_new(a->kc, "vm-dhcp-agent", NULL, &g->rec) < 0)
		g->rec = NULL;
	r = kube_update_retry(a->kc, &res_ippools, cfg->pool_ns, cfg->pool_name, true, 0,
	    cond_mutate, cond_done, a, &g->cond_call);
	if (r < 0)
		log_ratelimited(&rl_guard, clock_now_usec(), LOG_LEVEL_WARN,
		    "IPPool %s: cannot write the condition %s: %s", a->opts.ippool_ref,
		    AGENT_GUARD_COND, strerror(-r));
}

/* ---- sightings, probes ---- */

static void
on_foreign(struct agent *a, const struct dhcp_foreign_reply *r, uint64_t now)
{
	static const char *const types[] = {
	    [DHCP_MSG_OFFER] = "OFFER", [DHCP_MSG_ACK] = "ACK", [DHCP_MSG_NAK] = "NAK"};
	char m[MAC_STRLEN], ip[IPV4_STRLEN], yi[IPV4_STRLEN], ch[MAC_STRLEN];
	int k;

	a->guard.replies++;
	k = agent_guard_seen(&a->guard, r, now);
	if (k <= 0)
		return;
	mac_format(r->mac, m);
	ipv4_format(r->server_ip, ip);
	ipv4_format(r->yiaddr, yi);
	mac_format(r->chaddr, ch);
	log_warn("%s: foreign DHCP server seen: MAC %s IP %s (a DHCP%s of %s to %s)",
	    a->opts.ifname, m, ip, types[r->msg_type], yi, ch);
	apply_stand_down(a);
	cond_sync(a);
}

/* The pool's own: this interface's MAC and the serverIP (every replica answers with it). */
static void
own_set(const struct agent *a, struct dhcp_foreign_own *own)
{
	const struct agent_config *cfg = agent_cur_cfg(a);

	memset(own, 0, sizeof(*own));
	memcpy(own->mac[own->n_mac++], a->sock.open_hwaddr, 6);
	if (cfg != NULL)
		own->ip[own->n_ip++] = cfg->opts.server_ip;
	if (a->listen_ip != 0)
		own->ip[own->n_ip++] = a->listen_ip;
}

static void
guard_readable(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	struct dhcp_foreign_own own;
	struct dhcp_foreign_reply r;
	uint64_t now = clock_now_usec();

	(void)fd;
	(void)what;
	own_set(a, &own);
	for (int i = 0; i < READS_PER_WAKEUP; i++) {
		bool csum_not_ready;
		int n = dhcp_foreign_socket_recv(
		    a->guard.fd, a->guard.frame, sizeof(a->guard.frame), &csum_not_ready);

		if (n < 0)
			break;
		switch (
		    dhcp_foreign_classify(a->guard.frame, (size_t)n, csum_not_ready, &own, &r)) {
		case DHCP_FOREIGN_SERVER:
			on_foreign(a, &r, now);
			break;
		case DHCP_FOREIGN_OWN:
			a->guard.own_replies++;
			break;
		default:
			break;
		}
	}
}

static void
send_probe(struct agent *a, uint64_t now)
{
	struct agent_guard *g = &a->guard;
	uint8_t buf[DHCP_FOREIGN_PROBE_LEN], *frames[1] = {buf};
	uint32_t xid = (uint32_t)random() ^ (uint32_t)now;
	size_t len = dhcp_foreign_probe_build(buf, g->probe_mac, xid);
	int r;

	/* the frame's Ethernet destination (bytes 0..5) is the broadcast address */
	r = dhcp_socket_send_frames(g->fd, g->ifindex, ETH_P_IP, frames, &len, 1, NULL);
	if (r != 1) {
		g->probe_errors++;
		log_ratelimited(&rl_guard, now, LOG_LEVEL_WARN, "%s: cannot send the probe: %s",
		    a->opts.ifname, strerror(r < 0 ? -r : EIO));
		return;
	}
	g->probes++;
}

static void
arm_probe(struct agent *a, uint64_t usec)
{
	struct timeval tv = {
	    .tv_sec = (time_t)(usec / USEC_PER_SEC), .tv_usec = (suseconds_t)(usec % USEC_PER_SEC)};

	evtimer_add(a->guard.ev_probe, &tv);
}

/* Every probe interval: the servers not seen forgotten, then the next probe. */
static void
probe_tick(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	struct agent_guard *g = &a->guard;
	struct agent_guard_server gone[4];
	uint64_t now = clock_now_usec();
	size_t n = agent_guard_expire(g, now, gone, 4);

	(void)fd;
	(void)what;
	for (size_t i = 0; i < n && i < 4; i++) {
		char m[MAC_STRLEN], ip[IPV4_STRLEN];

		mac_format(gone[i].mac, m);
		ipv4_format(gone[i].ip, ip);
		log_info("%s: foreign DHCP server MAC %s IP %s gone: not seen for %" PRIu64
			 " s (%" PRIu64 " replies seen)",
		    a->opts.ifname, m, ip, (now - gone[i].last_usec) / USEC_PER_SEC,
		    gone[i].replies);
	}
	apply_stand_down(a);
	if (n > 0 || (!g->cond_synced && g->ticks > 0))
		cond_sync(a);
	if (g->fd < 0)
		return;
	send_probe(a, now);
	g->ticks++;
	arm_probe(a, (uint64_t)g->interval_s * USEC_PER_SEC);
}

/* ---- on the agent ---- */

int
agent_guard_setup(struct agent *a)
{
	a->guard.ev_probe = evtimer_new(a->base, probe_tick, a);
	return a->guard.ev_probe != NULL ? 0 : -ENOMEM;
}

void
agent_guard_update(struct agent *a)
{
	struct agent_guard *g = &a->guard;
	const struct agent_config *cfg = agent_cur_cfg(a);
	uint32_t iv;
	char pool[sizeof(g->probe_pool)];

	if (cfg == NULL)
		return;
	g->policy = cfg->foreign_policy;
	iv = cfg->probe_interval != 0 ? cfg->probe_interval : IPPOOL_PROBE_INTERVAL_DEFAULT;
	snprintf(pool, sizeof(pool), "%s/%s", cfg->pool_ns, cfg->pool_name);
	if (strcmp(pool, g->probe_pool) != 0) {
		memcpy(g->probe_pool, pool, sizeof(pool));
		dhcp_foreign_probe_mac(cfg->pool_ns, cfg->pool_name, g->probe_mac);
	}
	if (iv != g->interval_s) {
		g->interval_s = iv;
		if (g->fd >= 0 && g->ticks > 0)
			arm_probe(a, (uint64_t)iv * USEC_PER_SEC);
	}
	apply_stand_down(a);
	if (!g->cond_synced && g->ticks > 0)
		cond_sync(a);
}

int
agent_guard_open(struct agent *a, int ifindex)
{
	struct agent_guard *g = &a->guard;
	char m[MAC_STRLEN];
	int fd;

	agent_guard_close(a);
	fd = dhcp_foreign_socket_open(ifindex);
	if (fd < 0) {
		log_warn("%s: cannot open the foreign DHCP server guard's socket: %s; other DHCP "
			 "servers on the network are not watched",
		    a->opts.ifname, strerror(-fd));
		return fd;
	}
	g->fd = fd;
	g->ifindex = ifindex;
	g->ev_fd = event_new(a->base, fd, EV_READ | EV_PERSIST, guard_readable, a);
	if (g->ev_fd == NULL || event_add(g->ev_fd, NULL) < 0) {
		agent_guard_close(a);
		return -ENOMEM;
	}
	g->ticks = 0;
	agent_guard_update(a);
	mac_format(g->probe_mac, m);
	log_info("%s: watching for foreign DHCP servers: probing from %s every %u s (policy %s)",
	    a->opts.ifname, m, g->interval_s,
	    g->policy == IPPOOL_FOREIGN_STAND_DOWN ? "StandDown" : "Warn");
	arm_probe(a, FIRST_PROBE_USEC);
	return 0;
}

void
agent_guard_close(struct agent *a)
{
	struct agent_guard *g = &a->guard;

	if (g->ev_fd != NULL)
		event_free(g->ev_fd);
	g->ev_fd = NULL;
	if (g->fd >= 0)
		close(g->fd);
	g->fd = -1;
	if (g->ev_probe != NULL)
		evtimer_del(g->ev_probe);
	g->n = 0; /* not watched: nothing known */
	if (a->dhcp != NULL)
		apply_stand_down(a);
}

void
agent_guard_free(struct agent *a)
{
	struct agent_guard *g = &a->guard;

	agent_guard_close(a);
	if (g->ev_probe != NULL)
		event_free(g->ev_probe);
	g->ev_probe = NULL;
	kube_call_cancel(g->cond_call);
	g->cond_call = NULL;
	g->rec = kube_recorder_free(g->rec);
}
