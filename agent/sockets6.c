/* SPDX-License-Identifier: Apache-2.0 */
/*
 * DHCPv6 beside DHCPv4 on the served interface: the DHCPv6 engine's sockets (dhcp/socket6.h:
 * the packet socket for UDP :547 and Router Solicitations, the UDP :547 socket) on the event
 * loop, open while the IPv4 sockets are and the pool has an ipv6Config; the IPv6 serverIP on
 * the interface (--assign-server-ip, IFA_F_NODAD, with the failover's lifetime); unsolicited
 * Router Advertisements when the pool asks for them (RFC 4861 §6.2.4, ra-timer.c); the
 * unsolicited Neighbor Advertisement that moves the serverIP to this replica (RFC 4861 §7.2.6,
 * as gratuitous ARP does for IPv4).
 *
 * The sockets follow sockets.c's rules: opened with the IPv4 ones before the capability drop,
 * kept (never reopened) after it. An ipv6Config that appears once the capabilities went needs
 * new sockets: the process restarts (sockets.c), unless the last open failed (an interface or a
 * kernel without IPv6: IPv4 goes on serving, the failure said once).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sys/random.h>

#include <event2/event.h>

#include "agent/link.h"
#include "agent/ra-timer.h"
#include "agent/serve-internal.h"
#include "agent/sockets6.h"
#include "dhcp/dhcp6.h"
#include "lib/clock.h"
#include "lib/ip6.h"
#include "lib/log.h"
#include "lib/util.h"

static struct log_ratelimit rl_read6 = LOG_RATELIMIT_INIT(10 * USEC_PER_SEC, 5);

/*
 * The DHCPv6 fd, found readable: as sockets.c's dhcp_read. When the engine asks for a
 * coalescing wait (requests faster than 10 000/s), it is a nanosleep here, then a read.
 */
static void
dhcp6_readable(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	uint64_t now = clock_now_usec();
	uint32_t wait = 0;
	int got;

	(void)what;
	got = dhcp6_server_on_readable(a->dhcp6, fd, now, &wait);
	for (int i = 0; i < AGENT_WINDOWS_PER_WAKEUP && wait > 0 && got >= 0; i++) {
		struct timespec ts = {.tv_nsec = (long)wait * 1000};

		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
		(void)dhcp6_server_on_readable(a->dhcp6, -1, clock_now_usec(), &wait);
	}
	if (got < 0 && got != -EAGAIN && got != -EINTR)
		log_ratelimited(&rl_read6, now, LOG_LEVEL_WARN, "%s: DHCPv6 receive: %s",
		    a->opts.ifname, strerror(-got));
}

/* The IPv6 part of the configuration served, or NULL when there is none. */
static const struct agent_config6 *
cur6(const struct agent *a)
{
	const struct agent_config *cfg = agent_cur_cfg(a);

	return cfg != NULL && cfg->v6.enabled ? &cfg->v6 : NULL;
}

/* Replies and RAs leave from the kernel's link-local address, else the EUI-64 one of hwaddr. */
static void
pick_link_local(struct agent *a, const uint8_t hwaddr[6], struct in6_addr *ret)
{
	if (a->link != NULL && agent_link_link_local(a->link, ret) == 0)
		return;
	ipv6_link_local_from_mac(hwaddr, ret);
}

static uint32_t
rnd32(void)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint32_t)clock_now_usec() * 2654435761u;
	return r;
}

static void ra_cb(evutil_socket_t fd, short what, void *arg);

/* RAs wanted now: the pool asks for them, the sockets are open, this replica answers. */
static bool
ra_wanted(const struct agent *a)
{
	const struct agent_config6 *v = cur6(a);

	return v != NULL && v->ra.enabled && a->sock6.open && a->fo.fsm.active;
}

/* Starts (the first RA at once, RFC 4861 §6.2.4's fast ones next) or stops the RA timer. */
static void
ra_timer_update(struct agent *a)
{
	if (!ra_wanted(a)) {
		if (a->sock6.ev_ra != NULL)
			evtimer_del(a->sock6.ev_ra);
		a->sock6.ra_sent = 0;
		return;
	}
	if (a->sock6.ev_ra == NULL && (a->sock6.ev_ra = evtimer_new(a->base, ra_cb, a)) == NULL) {
		log_error(
		    "%s: out of memory: no unsolicited router advertisements", a->opts.ifname);
		return;
	}
	if (!evtimer_pending(a->sock6.ev_ra, NULL)) {
		struct timeval now = {0, 0};
		evtimer_add(a->sock6.ev_ra, &now);
	}
}

static void
ra_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	const struct agent_config6 *v = cur6(a);
	struct timeval tv;
	uint64_t next;
	int r;

	(void)fd;
	(void)what;
	if (!ra_wanted(a)) {
		a->sock6.ra_sent = 0;
		return;
	}
	r = dhcp6_server_send_ra(a->dhcp6, clock_now_usec());
	if (r == 0) {
		a->sock6.ra_timer_tx++;
		a->sock6.ra_sent++;
	} else if (r != -EAGAIN) {
		log_ratelimited(&rl_read6, clock_now_usec(), LOG_LEVEL_WARN,
		    "%s: cannot send a router advertisement: %s", a->opts.ifname, strerror(-r));
	}
	next = agent_ra_next_usec(v->ra.interval, a->sock6.ra_sent, rnd32());
	tv.tv_sec = (time_t)(next / USEC_PER_SEC);
	tv.tv_usec = (suseconds_t)(next % USEC_PER_SEC);
	evtimer_add(a->sock6.ev_ra, &tv);
}

void
agent_sockets6_close(struct agent *a)
{
	if (a->sock6.ev_fd != NULL)
		event_free(a->sock6.ev_fd);
	a->sock6.ev_fd = NULL;
	if (a->sock6.ev_ra != NULL)
		evtimer_del(a->sock6.ev_ra);
	a->sock6.ra_sent = 0;
	if (a->sock6.open)
		dhcp6_server_close(a->dhcp6);
	a->sock6.open = false;
	a->sock6.open_ifindex = 0;
}

void
agent_sockets6_free(struct agent *a)
{
	agent_sockets6_close(a);
	if (a->sock6.ev_ra != NULL)
		event_free(a->sock6.ev_ra);
	a->sock6.ev_ra = NULL;
}

void
agent_sockets6_open(struct agent *a)
{
	const struct agent_link_state *st = agent_link_state(a->link);
	const struct agent_config *cfg = agent_cur_cfg(a);
	char ll[IPV6_STRLEN];
	int r;

	agent_sockets6_close(a);
	if (cur6(a) == NULL)
		return;
	pick_link_local(a, st->hwaddr, &a->sock6.link_local);
	r = dhcp6_server_open(
	    a->dhcp6, st->ifindex, a->opts.ifname, st->hwaddr, &a->sock6.link_local);
	if (r < 0) {
		a->sock6.open_failed = true;
		log_error("%s: cannot open DHCPv6 sockets: %s%s; IPv4 is served, IPv6 is not",
		    a->opts.ifname, strerror(-r),
		    r == -EACCES || r == -EPERM ? " (needs CAP_NET_RAW and CAP_NET_BIND_SERVICE)"
		    : r == -EADDRNOTAVAIL || r == -EAFNOSUPPORT
			? " (IPv6 disabled on the interface or in the kernel?)"
			: "");
		return;
	}
	a->sock6.ev_fd =
	    event_new(a->base, dhcp6_server_fd(a->dhcp6), EV_READ | EV_PERSIST, dhcp6_readable, a);
	if (a->sock6.ev_fd == NULL || event_add(a->sock6.ev_fd, NULL) < 0) {
		agent_sockets6_close(a);
		a->sock6.open_failed = true;
		log_error("%s: cannot watch DHCPv6 sockets", a->opts.ifname);
		return;
	}
	a->sock6.open = true;
	a->sock6.open_failed = false;
	a->sock6.open_ifindex = st->ifindex;
	memcpy(a->sock6.open_hwaddr, st->hwaddr, 6);
	dhcp6_server_set_standby(a->dhcp6, !a->fo.fsm.active);
	ipv6_format(&a->sock6.link_local, ll);
	log_info("%s: DHCPv6 %s pool %s/%s from %s%s", a->opts.ifname,
	    a->fo.fsm.active ? "serving" : "standby for", cfg->pool_ns, cfg->pool_name, ll,
	    cfg->v6.ra.enabled ? ", with router advertisements" : "");
}

void
agent_sockets6_set_hwaddr(struct agent *a, const uint8_t hwaddr[6])
{
	if (!a->sock6.open)
		return;
	pick_link_local(a, hwaddr, &a->sock6.link_local);
	dhcp6_server_set_hwaddr(a->dhcp6, hwaddr, &a->sock6.link_local);
	memcpy(a->sock6.open_hwaddr, hwaddr, 6);
}

void
agent_del_address6(struct agent *a, const char *why)
{
	char ip[IPV6_STRLEN];
	int r;

	if (ipv6_is_zero(&a->sock6.addr_ip) || a->link == NULL)
		return;
	ipv6_format(&a->sock6.addr_ip, ip);
	r = agent_link_del_address6(a->link, &a->sock6.addr_ip, a->sock6.addr_prefix);
	if (r < 0)
		log_error("%s: cannot remove %s/%u (%s): %s", a->opts.ifname, ip,
		    a->sock6.addr_prefix, why, strerror(-r));
	else
		log_info("%s: address %s/%u removed (%s)", a->opts.ifname, ip, a->sock6.addr_prefix,
		    why);
	memset(&a->sock6.addr_ip, 0, sizeof(a->sock6.addr_ip));
	a->sock6.addr_prefix = 0;
}

/* With --assign-server-ip, active: the IPv6 serverIP/prefix on the interface. */
static int
add_address6(struct agent *a, const struct agent_config6 *v, bool force)
{
	const struct in6_addr *sip = &v->opts.server_ip;
	bool same = ipv6_equal(&a->sock6.addr_ip, sip) && a->sock6.addr_prefix == v->prefix;
	char ip[IPV6_STRLEN];
	int r;

	if (same && !force)
		return 0;
	if (!ipv6_is_zero(&a->sock6.addr_ip) && !same)
		agent_del_address6(a, "the pool's IPv6 serverIP changed");
	ipv6_format(sip, ip);
	r = agent_link_add_address6(a->link, sip, v->prefix, a->fo.addr_lifetime_s);
	if (r < 0) {
		log_error("%s: cannot add %s/%u: %s%s", a->opts.ifname, ip, v->prefix, strerror(-r),
		    r == -EPERM || r == -EACCES ? " (needs CAP_NET_ADMIN)" : "");
		return r;
	}
	if (!same)
		log_info("%s: address %s/%u present", a->opts.ifname, ip, v->prefix);
	a->sock6.addr_ip = *sip;
	a->sock6.addr_prefix = v->prefix;
	return 1;
}

void
agent_announce6(struct agent *a)
{
	char ip[IPV6_STRLEN];
	int r;

	if (!a->fo.fsm.active || !a->sock6.open || ipv6_is_zero(&a->sock6.addr_ip))
		return;
	ipv6_format(&a->sock6.addr_ip, ip);
	r = dhcp6_server_send_unsolicited_na(a->dhcp6, &a->sock6.addr_ip);
	if (r < 0) {
		log_warn("%s: cannot send an unsolicited neighbor advertisement for %s: %s",
		    a->opts.ifname, ip, strerror(-r));
		return;
	}
	a->sock6.na_sent++;
	log_debug("%s: unsolicited neighbor advertisement for %s sent", a->opts.ifname, ip);
}

/*
 * A standby makes sure the pool's IPv6 serverIP is not on its interface: a container of this
 * pod that was active and died left it there (its lifetime would end it, later). Once per
 * address, as sockets.c does for the IPv4 one.
 */
static void
clear_stale_address6(struct agent *a, const struct agent_config6 *v)
{
	char ip[IPV6_STRLEN];
	int r;

	if (a->fo.fsm.active || a->link == NULL || !a->opts.assign_server_ip ||
	    ipv6_equal(&a->sock6.cleared_ip, &v->opts.server_ip) ||
	    !agent_link_state(a->link)->exists)
		return;
	r = agent_link_del_address6(a->link, &v->opts.server_ip, v->prefix);
	if (r < 0) {
		ipv6_format(&v->opts.server_ip, ip);
		log_warn("%s: standby: cannot make sure %s is not on the interface: %s",
		    a->opts.ifname, ip, strerror(-r));
		return;
	}
	a->sock6.cleared_ip = v->opts.server_ip;
}

int
agent_sockets6_update(struct agent *a, bool force)
{
	const struct agent_config6 *v = cur6(a);
	bool want = v != NULL && a->sock.open && agent_pool_serving(a);

	if (!want) {
		if (a->sock6.open) {
			agent_sockets6_close(a);
			log_info("%s: DHCPv6 sockets closed", a->opts.ifname);
		}
		agent_del_address6(a, v == NULL ? "the pool has no ipv6Config" : "not serving");
		return 0;
	}
	clear_stale_address6(a, v);
	if (!a->sock6.open) {
		if (a->sock.caps_dropped) {
			if (a->sock6.open_failed) {
				if (!a->sock6.restart_said)
					log_warn("%s: IPv6 not served (its sockets failed to open "
						 "before the capabilities were dropped); a restart "
						 "retries",
					    a->opts.ifname);
				a->sock6.restart_said = true;
				return 0;
			}
			return 1;
		}
		agent_sockets6_open(a);
		force = true;
	}
	if (a->sock6.open && a->opts.assign_server_ip && a->fo.fsm.active &&
	    add_address6(a, v, force) > 0)
		agent_announce6(a);
	ra_timer_update(a);
	return 0;
}

void
agent_sockets6_standby(struct agent *a, bool standby)
{
	dhcp6_server_set_standby(a->dhcp6, standby);
	if (standby && !ipv6_is_zero(&a->sock6.addr_ip))
		a->sock6.cleared_ip = a->sock6.addr_ip; /* removed by the caller: not again */
	else if (!standby)
		memset(&a->sock6.cleared_ip, 0, sizeof(a->sock6.cleared_ip));
	ra_timer_update(a);
}

void
agent_sockets6_renew(struct agent *a, uint32_t lifetime_s)
{
	if (ipv6_is_zero(&a->sock6.addr_ip) || a->link == NULL)
		return;
	(void)agent_link_add_address6(a->link, &a->sock6.addr_ip, a->sock6.addr_prefix, lifetime_s);
}
