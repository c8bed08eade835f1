/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The DHCP engine's sockets on the event loop, opened and closed as the interface comes and
 * goes (link.c) and as the pool asks (paused, deleted, a serverIP refused), with the ARP
 * socket of --leader-elect beside them (failover.c); the receive path; the serverIP on the
 * interface (--assign-server-ip) and its gratuitous ARP; the capability drop. The DHCPv6
 * sockets, the IPv6 serverIP and its announcement follow these (sockets6.c).
 *
 * With opts.drop_capabilities (always in Kubernetes mode), the first time the sockets are
 * open and the server address is set, every capability goes but CAP_NET_ADMIN (caps.c).
 * From then on the sockets are kept, never reopened: a link down -> up on the same ifindex
 * keeps them (a packet socket bound to an ifindex survives it) and only re-adds the address;
 * a change that needs new sockets (the interface re-created, serving again after the sockets
 * were closed for a pause or a deletion) ends the event loop with exit
 * status 1, so the kubelet restarts the container with its capabilities.
 */
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/arp.h"
#include "agent/caps.h"
#include "agent/guard.h"
#include "agent/link.h"
#include "agent/serve-internal.h"
#include "agent/sockets.h"
#include "agent/sockets6.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"

#define REOPEN_RETRY_SEC 2	/* first retry after a failed open; doubles */
#define REOPEN_RETRY_MAX_SEC 60 /* up to this */
/*
 * Receive buffer of the DHCP sockets: a burst while the agent is not scheduled (a busy node)
 * must queue, not drop. 4 MiB holds ~2 000 queued requests (skb truesize ~2 KiB each).
 */
#define DHCP_RCVBUF (4 << 20)
/* The second gratuitous ARP follows the first after this (RFC 5227 ANNOUNCE_INTERVAL: 2 s). */
#define GARP_INTERVAL_SEC 1

static struct log_ratelimit rl_read = LOG_RATELIMIT_INIT(10 * USEC_PER_SEC, 5);

/*
 * fd: the DHCP fd, found readable. The engine reads and answers what is there, and reads
 * again at once while more arrived meanwhile, up to a budget (dhcp/moderate.h). When it asks
 * for a wait (requests coming faster than 20 000/s), the wait is a nanosleep here, then a
 * read: no timer on the loop (a libevent precise timer re-arms a timerfd on every turn), the
 * fd stays watched.
 */
static void
dhcp_read(struct agent *a, int fd)
{
	uint64_t now = clock_now_usec();
	uint32_t wait = 0;
	int got = dhcp_server_on_readable(a->dhcp, fd, now, &wait);

	for (int i = 0; i < AGENT_WINDOWS_PER_WAKEUP && wait > 0 && got >= 0; i++) {
		struct timespec ts = {.tv_nsec = (long)wait * 1000};

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		(void)dhcp_server_on_readable(a->dhcp, -1, clock_now_usec(), &wait);
	}

	if (fd >= 0 && (got == 0 || got == -EAGAIN)) {
		/*
		 * Woken with nothing to read: a socket error is pending, ENETDOWN when the
		 * interface went down under sockets that are kept (see the top of the file).
		 * Reading the packet ring does not clear it: it would keep the fd readable (a
		 * busy loop) and fail the next reply sent, so clear it here.
		 */
		int e = 0;
		socklen_t elen = sizeof(e);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) == 0 && e != 0)
			log_debug("%s: DHCP socket: %s", a->opts.ifname, strerror(e));
	}
	if (got < 0 && got != -EAGAIN && got != -EINTR)
		log_ratelimited(&rl_read, now, LOG_LEVEL_WARN, "%s: receive: %s", a->opts.ifname,
		    strerror(-got));
}

static void
dhcp_readable(evutil_socket_t fd, short what, void *arg)
{
	(void)what;
	dhcp_read(arg, fd);
}

/* --leader-elect: the ARP socket that fences the serverIP (arp.c), beside the DHCP sockets. */
static int
arp_open(struct agent *a, int ifindex)
{
	const struct agent_config *cfg = agent_cur_cfg(a);
	int r;

	a->arp_ip = cfg != NULL ? cfg->opts.server_ip : 0;
	if ((r = agent_arp_open(ifindex, a->arp_ip, &a->arp_fd)) < 0) {
		a->arp_fd = -1;
		log_error("%s: cannot open the ARP socket: %s", a->opts.ifname, strerror(-r));
		return r;
	}
	a->ev_arp = event_new(
	    a->base, a->arp_fd, EV_READ | EV_PERSIST, agent_failover_arp_readable, &a->fo);
	if (a->ev_arp == NULL || event_add(a->ev_arp, NULL) < 0)
		return -ENOMEM;
	return 0;
}

void
agent_close_sockets(struct agent *a)
{
	if (a->sock.ev_fd != NULL)
		event_free(a->sock.ev_fd);
	a->sock.ev_fd = NULL;
	if (a->ev_arp != NULL)
		event_free(a->ev_arp);
	a->ev_arp = NULL;
	if (a->arp_fd >= 0)
		close(a->arp_fd);
	a->arp_fd = -1;
	if (a->sock.open)
		dhcp_server_close(a->dhcp);
	agent_guard_close(a);
	agent_sockets6_close(a);
	a->sock.open = false;
	a->sock.open_ifindex = 0;
}

/* Removes the serverIP this replica added (a standby, a stop, a new serverIP). */
void
agent_del_address(struct agent *a, const char *why)
{
	char ip[IPV4_STRLEN];
	int r;

	if (a->sock.addr_ip == 0 || a->link == NULL)
		return;
	ipv4_format(a->sock.addr_ip, ip);
	r = agent_link_del_address(a->link, a->sock.addr_ip, a->sock.addr_prefix);
	if (r < 0)
		log_error("%s: cannot remove %s/%u (%s): %s", a->opts.ifname, ip,
		    a->sock.addr_prefix, why, strerror(-r));
	else
		log_info(
		    "%s: address %s/%u removed (%s)", a->opts.ifname, ip, a->sock.addr_prefix, why);
	a->sock.addr_ip = 0;
	a->sock.addr_prefix = 0;
}

/*
 * A standby makes sure the pool's serverIP is not on its interface: a container of this pod
 * that was active and died (SIGKILL, OOM) left it there, and the kernel would go on answering
 * ARP for it. Once per serverIP.
 */
static void
clear_stale_address(struct agent *a, const struct agent_config *cfg)
{
	char ip[IPV4_STRLEN];
	int r;

	if (a->fo.fsm.active || a->link == NULL || cfg == NULL || !a->opts.assign_server_ip ||
	    a->cleared_ip == cfg->opts.server_ip || !agent_link_state(a->link)->exists)
		return;
	r = agent_link_del_address(a->link, cfg->opts.server_ip, cfg->prefix);
	ipv4_format(cfg->opts.server_ip, ip);
	if (r < 0) {
		log_warn("%s: standby: cannot make sure %s is not on the interface: %s",
		    a->opts.ifname, ip, strerror(-r));
		return;
	}
	a->cleared_ip = cfg->opts.server_ip;
}

/* With --assign-server-ip: serverIP/prefix on the interface (already there is fine). */
static int
add_address(struct agent *a)
{
	const struct agent_config *cfg = agent_cur_cfg(a);
	char ip[IPV4_STRLEN];
	int r;

	if (!a->opts.assign_server_ip || !a->fo.fsm.active)
		return 0;
	if (a->sock.addr_ip != 0 &&
	    (a->sock.addr_ip != cfg->opts.server_ip || a->sock.addr_prefix != cfg->prefix))
		agent_del_address(a, "the pool's serverIP changed");
	ipv4_format(cfg->opts.server_ip, ip);
	r = agent_link_add_address_lifetime(
	    a->link, cfg->opts.server_ip, cfg->prefix, a->fo.addr_lifetime_s);
	if (r < 0) {
		log_error("%s: cannot add %s/%u: %s%s", a->opts.ifname, ip, cfg->prefix,
		    strerror(-r), r == -EPERM || r == -EACCES ? " (needs CAP_NET_ADMIN)" : "");
		return r;
	}
	if (a->sock.addr_ip != cfg->opts.server_ip || a->sock.addr_prefix != cfg->prefix)
		log_info("%s: address %s/%u present", a->opts.ifname, ip, cfg->prefix);
	a->sock.addr_ip = cfg->opts.server_ip;
	a->sock.addr_prefix = cfg->prefix;
	return 0;
}

/* Gratuitous ARP for the serverIP: now, and once more GARP_INTERVAL_SEC later (ev_garp). */
void
agent_announce(struct agent *a)
{
	int fd = a->arp_fd >= 0 ? a->arp_fd : dhcp_server_fd(a->dhcp);
	char ip[IPV4_STRLEN];
	int r;

	/* whoever adds the serverIP announces it: a new active replica, or a single agent that
	 * (re)starts, so VMs whose neighbour entry is stale or incomplete send to it at once */
	agent_announce6(a);
	if (!a->fo.fsm.active || !a->sock.open || a->sock.addr_ip == 0 || fd < 0)
		return;
	r = agent_garp_send(fd, a->sock.open_ifindex, a->sock.open_hwaddr, a->sock.addr_ip);
	ipv4_format(a->sock.addr_ip, ip);
	if (r < 0) {
		log_warn("%s: cannot send a gratuitous ARP for %s: %s", a->opts.ifname, ip,
		    strerror(-r));
		return;
	}
	a->garp_sent++;
	log_debug("%s: gratuitous ARP for %s sent", a->opts.ifname, ip);
}

void
agent_garp_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	agent_announce(arg);
}

static void
announce_twice(struct agent *a)
{
	agent_announce(a);
	evtimer_add(a->ev_garp, &(struct timeval){.tv_sec = GARP_INTERVAL_SEC});
}

static int
open_sockets(struct agent *a)
{
	const struct agent_link_state *st = agent_link_state(a->link);
	const struct agent_config *cfg = agent_cur_cfg(a);
	int fd, r, sz = DHCP_RCVBUF;

	agent_close_sockets(a);
	if ((r = add_address(a)) < 0)
		return r;
	r = dhcp_server_open(a->dhcp, st->ifindex, a->opts.ifname, st->hwaddr);
	if (r < 0) {
		char hint[160] = "";
		if (r == -EACCES || r == -EPERM) {
			uint64_t need = AGENT_CAP(CAP_NET_RAW) | AGENT_CAP(CAP_NET_BIND_SERVICE);
			struct agent_caps caps;
			char names[64];
			if (agent_caps_get(&caps) == 0 && (need & ~caps.effective) != 0)
				snprintf(hint, sizeof(hint), " (missing capabilities: %s)",
				    agent_caps_format(
					need & ~caps.effective, 2, names, sizeof(names)));
			else
				snprintf(hint, sizeof(hint),
				    " (needs CAP_NET_RAW for the packet socket, "
				    "CAP_NET_BIND_SERVICE for UDP port 67)");
		}
		log_error("%s: cannot open DHCP sockets: %s%s", a->opts.ifname, strerror(-r), hint);
		return r;
	}
	a->sock.open = true;
	a->sock.open_ifindex = st->ifindex;
	memcpy(a->sock.open_hwaddr, st->hwaddr, 6);
	fd = dhcp_server_fd(a->dhcp);
	/* SO_RCVBUFFORCE passes rmem_max with CAP_NET_ADMIN; else the capped SO_RCVBUF */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz)) < 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	a->sock.ev_fd = event_new(a->base, fd, EV_READ | EV_PERSIST, dhcp_readable, a);
	if (a->sock.ev_fd == NULL || event_add(a->sock.ev_fd, NULL) < 0) {
		agent_close_sockets(a);
		log_error("%s: cannot watch DHCP sockets", a->opts.ifname);
		return -ENOMEM;
	}
	if (a->fo.leader != NULL && (r = arp_open(a, st->ifindex)) < 0) {
		agent_close_sockets(a);
		return r;
	}
	/* the foreign server guard beside them (a failure is logged, not fatal) */
	(void)agent_guard_open(a, st->ifindex);
	dhcp_server_set_standby(a->dhcp, agent_dhcp_quiet(a));
	log_info("%s: %s pool %s/%s (ifindex %d)", a->opts.ifname,
	    a->fo.fsm.active ? "serving" : "standby for", cfg->pool_ns, cfg->pool_name,
	    st->ifindex);
	agent_sockets6_open(a); /* beside them, before the capability drop */
	announce_twice(a);
	return 0;
}

/* Ends the event loop with exit status 1: the process must restart (see the top). */
static void
must_restart(struct agent *a, const char *what)
{
	log_error("%s: %s needs new DHCP sockets: capabilities were dropped after start-up; "
		  "exiting so the container restarts with them",
	    a->opts.ifname, what);
	a->exit_status = 1;
	evtimer_del(a->sock.ev_retry);
	event_base_loopbreak(a->base);
}

/*
 * Drops every capability but CAP_NET_ADMIN (kept with --assign-server-ip to re-add the
 * address; nothing is kept in a dry run), once: after agent_new() and the first open.
 */
int
agent_drop_capabilities(struct agent *a)
{
	uint64_t keep = a->opts.assign_server_ip && !a->opts.dry_run ? AGENT_CAP(CAP_NET_ADMIN) : 0;
	uint64_t sockets = AGENT_CAP(CAP_NET_RAW) | AGENT_CAP(CAP_NET_BIND_SERVICE), gone;
	struct agent_caps before, after;
	char kept[64], dropped[128];
	int others, r;

	if (!a->opts.drop_capabilities || a->sock.caps_dropped || !a->sock.started)
		return 0;
	if ((r = agent_caps_drop(keep, &before, &after)) < 0)
		return r;
	a->sock.caps_dropped = true;
	a->sock.dropped_ifindex = a->sock.open_ifindex;
	/* the two the sockets needed by name, the others (uid 0 has them all) counted */
	gone = before.permitted & ~after.permitted;
	others = __builtin_popcountll(gone & ~sockets);
	if ((gone & sockets) != 0 && others > 0) {
		agent_caps_format(gone & sockets, 2, kept, sizeof(kept));
		snprintf(dropped, sizeof(dropped), "%s and %d others", kept, others);
	} else {
		agent_caps_format(gone, 4, dropped, sizeof(dropped));
	}
	log_info("capabilities dropped: kept %s%s; dropped %s from the permitted, effective and "
		 "inheritable sets%s; %s",
	    agent_caps_format(after.permitted, 4, kept, sizeof(kept)),
	    after.permitted != 0 ? " (re-adds the server address after link events)" : "", dropped,
	    before.effective & AGENT_CAP(CAP_SETPCAP) ? " and the bounding set" : "",
	    a->opts.dry_run ? "dry run: no sockets, no netlink"
			    : "the DHCP sockets cannot be reopened from now on");
	return 0;
}

/*
 * A pool version whose serverIP is the --listen address is not served: the agent would add
 * the address to the served interface and open /metrics to the VMs (listen.c). Logged once.
 */
static bool
server_ip_refused(struct agent *a, const struct agent_config *cfg)
{
	char ip[IPV4_STRLEN];

	if (!agent_server_ip_is_listen(a, cfg)) {
		a->sock.refused_server_ip = 0;
		return false;
	}
	if (a->sock.refused_server_ip != cfg->opts.server_ip) {
		ipv4_format(cfg->opts.server_ip, ip);
		log_error("IPPool %s/%s: serverIP %s is the --listen address: not serving it on "
			  "%s, the VMs would reach /metrics; listen on another address (the pod "
			  "IP) or change the serverIP",
		    cfg->pool_ns, cfg->pool_name, ip, a->opts.ifname);
		a->sock.refused_server_ip = cfg->opts.server_ip;
	}
	return true;
}

static void
retry_later(struct agent *a)
{
	struct timeval tv;

	a->sock.retry_sec = a->sock.retry_sec == 0
				? REOPEN_RETRY_SEC
				: MIN(a->sock.retry_sec * 2, REOPEN_RETRY_MAX_SEC);
	tv = (struct timeval){.tv_sec = a->sock.retry_sec};
	log_info("%s: retrying in %u s", a->opts.ifname, a->sock.retry_sec);
	evtimer_add(a->sock.ev_retry, &tv);
}

/*
 * After the drop: serving on the interface again. The sockets bound to it are kept (force:
 * it came up again, or the serverIP changed: the address is re-added); anything else needs
 * new sockets.
 */
static void
serve_kept(struct agent *a, const struct agent_link_state *st, bool force)
{
	char what[96];

	/* the sockets are never reopened after the drop: while open, they are on dropped_ifindex */
	if (st->ifindex != a->sock.dropped_ifindex)
		snprintf(what, sizeof(what), "the interface re-created (ifindex %d -> %d)",
		    a->sock.dropped_ifindex, st->ifindex);
	else if (!a->sock.open)
		snprintf(what, sizeof(what),
		    "serving again after the sockets were closed (pool paused, deleted or "
		    "refused)");
	else {
		if (memcmp(st->hwaddr, a->sock.open_hwaddr, 6) != 0) {
			/* a bridge takes a port's MAC: the sockets stay, replies take the new one
			 */
			char m[MAC_STRLEN];
			dhcp_server_set_hwaddr(a->dhcp, st->hwaddr);
			agent_sockets6_set_hwaddr(a, st->hwaddr);
			memcpy(a->sock.open_hwaddr, st->hwaddr, 6);
			mac_format(st->hwaddr, m);
			log_info(
			    "%s: replies now sent from %s (DHCP sockets kept)", a->opts.ifname, m);
		}
		if (!force)
			return;
		if (add_address(a) < 0) {
			retry_later(a);
			return;
		}
		announce_twice(a);
		evtimer_del(a->sock.ev_retry);
		a->sock.retry_sec = 0;
		if (a->sock.kept_down)
			log_info("%s: serving again on the DHCP sockets kept (ifindex %d)",
			    a->opts.ifname, st->ifindex);
		a->sock.kept_down = false;
		return;
	}
	must_restart(a, what);
}

/* The IPv4 half of agent_update_sockets. */
static void
update_sockets4(struct agent *a, bool force)
{
	const struct agent_link_state *st;
	bool pool, want;
	int r;

	if (a->link == NULL || a->exit_status != 0)
		return; /* dry run: no sockets; or on the way out */
	st = agent_link_state(a->link);
	pool = agent_pool_serving(a) && !server_ip_refused(a, agent_cur_cfg(a));
	want = pool && st->exists && st->up;
	if (pool)
		clear_stale_address(a, agent_cur_cfg(a));
	/* the ARP fence follows the serverIP */
	if (a->arp_fd >= 0 && agent_cur_cfg(a) != NULL &&
	    agent_cur_cfg(a)->opts.server_ip != a->arp_ip &&
	    agent_arp_set_filter(a->arp_fd, agent_cur_cfg(a)->opts.server_ip) == 0)
		a->arp_ip = agent_cur_cfg(a)->opts.server_ip;
	/* a new serverIP/prefix (a new pool version): the address is added again */
	if (want && a->sock.open && a->opts.assign_server_ip && a->fo.fsm.active &&
	    (agent_cur_cfg(a)->opts.server_ip != a->sock.addr_ip ||
		agent_cur_cfg(a)->prefix != a->sock.addr_prefix))
		force = true;

	if (!want) {
		evtimer_del(a->sock.ev_retry);
		a->sock.retry_sec = 0;
		if (!a->sock.open)
			return;
		if (a->sock.caps_dropped && pool && st->exists &&
		    st->ifindex == a->sock.open_ifindex) {
			if (!a->sock.kept_down)
				log_info("%s: DHCP sockets kept while the interface is down "
					 "(capabilities were dropped: they could not be reopened)",
				    a->opts.ifname);
			a->sock.kept_down = true;
			return;
		}
		agent_close_sockets(a);
		log_info("%s: DHCP sockets closed; waiting%s", a->opts.ifname,
		    a->sock.caps_dropped ? " (capabilities were dropped: serving again will need a "
					   "restart)"
					 : "");
		return;
	}
	if (a->sock.caps_dropped) {
		serve_kept(a, st, force);
		return;
	}
	if (a->sock.open && !force && a->sock.open_ifindex == st->ifindex)
		return;
	if (open_sockets(a) < 0) {
		retry_later(a);
		return;
	}
	evtimer_del(a->sock.ev_retry);
	a->sock.retry_sec = 0;
	if ((r = agent_drop_capabilities(a)) < 0) {
		log_error("cannot drop capabilities: %s; exiting", strerror(-r));
		a->exit_status = 1;
		event_base_loopbreak(a->base);
		return;
	}
	agent_failover_sockets_open(&a->fo);
}

/* Brings the sockets to what the interface and the pool ask for; force reopens. */
void
agent_update_sockets(struct agent *a, bool force)
{
	if (a->link == NULL || a->exit_status != 0)
		return;
	update_sockets4(a, force);
	agent_guard_update(a);
	if (a->exit_status == 0 && agent_sockets6_update(a, force) > 0)
		must_restart(a, "serving IPv6 (an ipv6Config added)");
}

void
agent_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	agent_update_sockets(arg, true);
}

void
agent_link_changed(
    void *userdata, const struct agent_link_state *old, const struct agent_link_state *now)
{
	struct agent *a = userdata;
	const char *ifname = a->opts.ifname;
	bool force = false;

	a->sock.link_events++;
	if (!now->exists) {
		log_warn("%s: interface deleted", ifname);
	} else if (!old->exists) {
		log_info("%s: interface appeared (ifindex %d, %s)", ifname, now->ifindex,
		    now->up ? "up" : "down");
		force = true;
	} else if (old->ifindex != now->ifindex) {
		log_info("%s: interface re-created (ifindex %d -> %d)", ifname, old->ifindex,
		    now->ifindex);
		force = true;
	} else if (old->up && !now->up) {
		log_warn("%s: interface down", ifname);
	} else if (!old->up && now->up) {
		log_info("%s: interface up", ifname);
		force = true;
	} else if (memcmp(old->hwaddr, now->hwaddr, 6) != 0) {
		char m[MAC_STRLEN];
		mac_format(now->hwaddr, m);
		log_info("%s: MAC address changed to %s", ifname, m);
		force = true;
	}
	if (old->exists && now->exists && old->mtu != now->mtu &&
	    (!force || a->sock.caps_dropped)) {
		/*
		 * The receive ring is resized in place (no new socket: this works after the
		 * capabilities are dropped), so a link raised to 9000 takes 4000-byte requests.
		 * (A reopen, force, sizes it from the MTU anyway; with capabilities dropped
		 * there is none.)
		 */
		int r = a->sock.open ? dhcp_server_set_mtu(a->dhcp, now->mtu) : 0;

		/* the DHCPv6 socket's ring as well (open or not, as the IPv4 one) */
		if (r == 0 && a->dhcp6 != NULL)
			r = dhcp6_server_set_mtu(a->dhcp6, now->mtu);

		if (r < 0)
			log_warn("%s: MTU %u -> %u: cannot resize the receive ring (%s); longer "
				 "frames are counted as truncated and dropped",
			    ifname, old->mtu, now->mtu, strerror(-r));
		else
			log_info("%s: MTU %u -> %u: the receive buffer and replies follow", ifname,
			    old->mtu, now->mtu);
	}
	agent_update_sockets(a, force);
}

/* ---- what failover.c asks of the sockets and the serverIP (failover.h) ---- */

static void
failover_wire(void *userdata, struct agent_failover_wire *w)
{
	const struct agent *a = userdata;
	const struct agent_config *cfg = agent_cur_cfg(a);

	w->open = a->sock.open;
	w->arp_fd = a->arp_fd;
	w->ifindex = a->sock.open_ifindex;
	memcpy(w->hwaddr, a->sock.open_hwaddr, 6);
	w->pool = cfg != NULL;
	w->server_ip = cfg != NULL ? cfg->opts.server_ip : 0;
	w->snapshot = a->warm.snap != NULL;
}

static void
failover_take(void *userdata)
{
	struct agent *a = userdata;

	a->cleared_ip = 0;
	dhcp_server_set_standby(a->dhcp, agent_dhcp_quiet(a)); /* a StandDown holds */
	agent_sockets6_standby(a, false);
	agent_update_sockets(a, true);
}

static void
failover_drop(void *userdata, const char *why)
{
	struct agent *a = userdata;

	dhcp_server_set_standby(a->dhcp, agent_dhcp_quiet(a)); /* standby: true */
	agent_sockets6_standby(a, true);
	evtimer_del(a->ev_garp);
	if (a->sock.addr_ip != 0)
		a->cleared_ip = a->sock.addr_ip;
	agent_del_address(a, why);
	agent_del_address6(a, why);
}

static void
failover_renew(void *userdata, uint32_t lifetime_s)
{
	struct agent *a = userdata;

	agent_sockets6_renew(a, lifetime_s);
	if (a->sock.addr_ip == 0 || a->link == NULL)
		return;
	(void)agent_link_add_address_lifetime(
	    a->link, a->sock.addr_ip, a->sock.addr_prefix, lifetime_s);
}

static void
failover_announce(void *userdata)
{
	agent_announce(userdata);
}

const struct agent_failover_hooks agent_sockets_failover_hooks = {
    .wire = failover_wire,
    .take = failover_take,
    .drop = failover_drop,
    .renew = failover_renew,
    .announce = failover_announce,
};
