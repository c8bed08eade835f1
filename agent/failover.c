/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --leader-elect: what a replica does with the pool's Lease (kube/leader.c) and the wire
 * (ha.c). STANDBY drains its sockets and answers nothing; PROBING sends ARP probes for the
 * serverIP before taking it; ACTIVE holds the Lease, has the serverIP on its interface (its
 * lifetime renewed while it answers, so a dead agent's address goes by itself) and defends
 * it; HOLD answers without the Lease while the API server does not answer, and stands down as
 * soon as another replica is seen holding the Lease or claiming the address. On SIGTERM the
 * Lease is released so a standby takes over at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>

#include <event2/event.h>

#include "agent/agent.h"
#include "agent/serve-internal.h"
#include "kube/kube.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"

/*
 * ARP probes before taking the serverIP: PROBE_NUM, PROBE_INTERVAL_USEC apart, the verdict
 * PROBE_INTERVAL_USEC after the last. RFC 5227 waits seconds (PROBE_NUM 3, 1-2 s apart) for
 * hosts that may be slow to answer; here the holder is a Linux kernel on the same L2 segment,
 * which answers in microseconds, and every 100 ms counts in a failover.
 */
#define PROBE_NUM 2
#define PROBE_INTERVAL_USEC (50 * UINT64_C(1000))
/* While the API server does not answer, a standby tries to take the serverIP this often. */
#define HOLD_RETRY_USEC USEC_PER_SEC
/* A claim of our serverIP by another MAC is answered with a gratuitous ARP at most this often. */
#define DEFEND_INTERVAL_USEC USEC_PER_SEC
/* On SIGTERM the Lease is released (the standby takes over at once) within this, else given up. */
#define STOP_RELEASE_USEC (2 * USEC_PER_SEC)

/* Renews the serverIP's lifetime while active (so a dead agent's address goes by itself). */
void
agent_refresh_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;

	(void)fd;
	(void)what;
	if (!a->active || a->sock.addr_ip == 0 || a->link == NULL)
		return;
	(void)agent_link_add_address_lifetime(
	    a->link, a->sock.addr_ip, a->sock.addr_prefix, a->addr_lifetime_s);
}

/* Takes the serverIP and answers: ACTIVE with the Lease, HOLD without it. */
static void
claim(struct agent *a)
{
	bool was = a->active;

	a->ha = a->lease_held ? HA_ACTIVE : HA_HOLD;
	a->active = true;
	if (!was)
		a->transitions++;
	a->cleared_ip = 0;
	memset(a->fenced_mac, 0, 6);
	if (a->ha == HA_ACTIVE)
		log_kv(LOG_LEVEL_INFO,
		    LOG_KV("ippool", a->opts.ippool_ref, "lease", a->opts.lease_name),
		    "this replica (%s) holds the Lease: active, answering and announcing the "
		    "serverIP",
		    a->opts.identity);
	else
		log_kv(LOG_LEVEL_WARN,
		    LOG_KV("ippool", a->opts.ippool_ref, "lease", a->opts.lease_name),
		    "the API server does not answer and no replica answers for the serverIP: this "
		    "replica (%s) answers without the Lease (hold) until the API server is back",
		    a->opts.identity);
	dhcp_server_set_standby(a->dhcp, false);
	agent_update_sockets(a, true);
	if (a->addr_lifetime_s != 0 && !event_pending(a->ev_refresh, EV_TIMEOUT, NULL))
		event_add(a->ev_refresh, &(struct timeval){.tv_usec = 250000});
}

/* Stops answering, then gives the serverIP up. */
void
agent_stand_down(struct agent *a, const char *why)
{
	bool was = a->active;

	evtimer_del(a->ev_probe);
	a->ha = HA_STANDBY;
	a->active = false;
	dhcp_server_set_standby(a->dhcp, true);
	evtimer_del(a->ev_garp);
	event_del(a->ev_refresh);
	if (a->sock.addr_ip != 0)
		a->cleared_ip = a->sock.addr_ip;
	agent_del_address(a, why);
	if (was)
		log_kv(LOG_LEVEL_WARN,
		    LOG_KV("ippool", a->opts.ippool_ref, "lease", a->opts.lease_name),
		    "this replica (%s) stands by, not answering: %s", a->opts.identity, why);
}

static void
schedule_hold(struct agent *a, uint64_t delay)
{
	struct timeval tv = {.tv_sec = (time_t)(delay / USEC_PER_SEC),
	    .tv_usec = (suseconds_t)(delay % USEC_PER_SEC)};

	if (a->stopping || a->ev_hold == NULL)
		return;
	evtimer_add(a->ev_hold, &tv);
}

/* The next look at the serverIP while the API server may be silent: 1 to 1.5 s from now. */
static void
schedule_hold_retry(struct agent *a)
{
	schedule_hold(a, HOLD_RETRY_USEC + (uint64_t)(random() % 500000));
}

/* A standby without the Lease keeps looking (agent_hold_cb), unless a look is already due. */
static void
keep_watching(struct agent *a)
{
	if (a->ha == HA_STANDBY && !a->lease_held && !evtimer_pending(a->ev_hold, NULL))
		schedule_hold_retry(a);
}

/* Probes for the serverIP before taking it (for_hold: without the Lease). */
static void
probe_start(struct agent *a, bool for_hold)
{
	if (a->stopping || !a->sock.open || a->arp_fd < 0 || agent_cur_cfg(a) == NULL || a->active)
		return;
	a->ha = HA_PROBING;
	a->probe_for_hold = for_hold;
	a->probe_conflict = false;
	a->probes_sent = 0;
	evtimer_del(a->ev_hold);
	evtimer_add(a->ev_probe, &(struct timeval){0});
}

void
agent_probe_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	const struct agent_config *cfg = agent_cur_cfg(a);
	char ip[IPV4_STRLEN], m[MAC_STRLEN];
	int r;

	(void)fd;
	(void)what;
	if (a->ha != HA_PROBING || cfg == NULL || a->arp_fd < 0)
		return;
	if (a->probes_sent < PROBE_NUM && !a->probe_conflict) {
		r = agent_arp_probe_send(
		    a->arp_fd, a->sock.open_ifindex, a->sock.open_hwaddr, cfg->opts.server_ip);
		if (r < 0)
			log_warn("%s: cannot send an ARP probe: %s", a->opts.ifname, strerror(-r));
		a->probes_sent++;
		a->probes++;
		evtimer_add(a->ev_probe, &(struct timeval){.tv_usec = PROBE_INTERVAL_USEC});
		return;
	}
	ipv4_format(cfg->opts.server_ip, ip);
	if (a->probe_conflict) {
		a->ha = HA_STANDBY;
		mac_format(a->conflict_mac, m);
		if (!a->probe_for_hold) {
			if (memcmp(a->fenced_mac, a->conflict_mac, 6) != 0)
				log_warn(
				    "%s: this replica holds the Lease but %s is still answered by "
				    "%s (a previous active replica cut off from the API server?): "
				    "not taking it until nobody answers",
				    a->opts.ifname, ip, m);
			memcpy(a->fenced_mac, a->conflict_mac, 6);
			schedule_hold(a, a->opts.retry_period_usec);
		} else {
			log_debug("%s: %s answered by %s: stays standby", a->opts.ifname, ip, m);
			schedule_hold_retry(a);
		}
		return;
	}
	if ((a->probe_for_hold && (a->lease_held || a->api_answered)) ||
	    (!a->probe_for_hold && !a->lease_held)) {
		/* the API server answered meanwhile (the Lease decides), or the Lease was lost */
		a->ha = HA_STANDBY;
		if (a->lease_held)
			probe_start(a, false);
		else /* keep watching for the API server falling silent */
			schedule_hold_retry(a);
		return;
	}
	claim(a);
}

void
agent_arp_readable(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;
	const struct agent_config *cfg = agent_cur_cfg(a);
	uint8_t f[128], mac[6];
	char ip[IPV4_STRLEN], m[MAC_STRLEN];
	uint64_t now = clock_now_usec();
	ssize_t n;
	int kind;

	(void)what;
	while ((n = recv(fd, f, sizeof(f), 0)) > 0) {
		if (cfg == NULL)
			continue;
		kind =
		    agent_arp_classify(f, (size_t)n, a->sock.open_hwaddr, cfg->opts.server_ip, mac);
		if (kind == AGENT_ARP_OTHER)
			continue;
		if (a->ha == HA_PROBING) {
			/* answered (CLAIM), or another probing for it at once (PROBE): not ours */
			if (!a->probe_conflict)
				a->conflicts++;
			a->probe_conflict = true;
			memcpy(a->conflict_mac, mac, 6);
			continue;
		}
		if (kind != AGENT_ARP_CLAIM || !a->active)
			continue; /* our kernel answers probes for an address we hold */
		a->conflicts++;
		ipv4_format(cfg->opts.server_ip, ip);
		mac_format(mac, m);
		if (a->ha == HA_HOLD) {
			char why[128];
			snprintf(why, sizeof(why), "%s claimed by %s while held without the Lease",
			    ip, m);
			agent_stand_down(a, why);
			schedule_hold_retry(a);
			return;
		}
		if (now - a->defended_at >= DEFEND_INTERVAL_USEC) {
			/* ACTIVE with the Lease: defend the address (RFC 5227 §2.4 (b)) */
			a->defended_at = now;
			log_warn(
			    "%s: %s also claimed by %s; this replica holds the Lease: defending "
			    "it with a gratuitous ARP",
			    a->opts.ifname, ip, m);
			agent_announce(a);
		}
	}
}

/*
 * Whether the API server is silent for the Lease: its last attempt failed without an answer,
 * or none was answered for the renew deadline (a request that hangs fails only at the
 * client's connect or request timeout, seconds later).
 */
static bool
api_silent(const struct agent *a)
{
	return (a->api_tried && !a->api_answered) ||
	       clock_now_usec() - a->api_answered_at >= a->opts.renew_deadline_usec;
}

void
agent_hold_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;

	(void)fd;
	(void)what;
	if (a->active || a->ha == HA_PROBING || a->stopping)
		return;
	if (a->lease_held)
		probe_start(a, false); /* fenced: is the address free now? */
	else if (api_silent(a))
		probe_start(a, true);
	/* the probe's verdict schedules the next look; here when no probe could start */
	keep_watching(a);
}

/* The DHCP sockets (and the ARP socket) are open: a Lease held meanwhile is acted on. */
void
agent_ha_sockets_open(struct agent *a)
{
	if (a->leader == NULL || a->active || a->ha == HA_PROBING)
		return;
	if (a->lease_held)
		probe_start(a, false);
	else if (!a->api_answered && (a->warm.snap != NULL || a->api_tried))
		/*
		 * a warm start: serving the snapshot at once, without waiting for the API server
		 * (which may take its connect timeout to fail), if nobody answers for the serverIP;
		 * the Lease decides once the API server answers
		 */
		probe_start(a, true);
	keep_watching(a);
}

static void
leader_started(void *userdata)
{
	struct agent *a = userdata;

	a->lease_held = true;
	if (a->stopping)
		return;
	if (a->active) {
		if (a->ha == HA_HOLD)
			log_info(
			    "this replica (%s) holds the Lease again: active", a->opts.identity);
		a->ha = HA_ACTIVE;
		return;
	}
	probe_start(a, false); /* or, sockets not open yet, from agent_ha_sockets_open */
}

static void
leader_stopped(void *userdata)
{
	struct agent *a = userdata;

	a->lease_held = false;
	if (a->ha == HA_PROBING && !a->probe_for_hold) {
		evtimer_del(a->ev_probe);
		a->ha = HA_STANDBY;
	}
	evtimer_del(a->ev_hold);
	if (!a->active)
		return;
	if (!a->api_answered && !a->stopping) {
		a->ha = HA_HOLD;
		log_kv(LOG_LEVEL_WARN,
		    LOG_KV("ippool", a->opts.ippool_ref, "lease", a->opts.lease_name),
		    "cannot renew the Lease: the API server does not answer; this replica (%s) "
		    "keeps answering (hold): no replica can take the Lease without the API server, "
		    "and one that does takes the serverIP only once nobody answers for it",
		    a->opts.identity);
		return;
	}
	agent_stand_down(a, a->stopping ? "stopping" : "no longer holds the Lease");
}

static void
leader_new_holder(void *userdata, const char *id)
{
	struct agent *a = userdata;
	char why[320];

	/* kube_leader calls this when the holder changed to another, non-empty one */
	if (strcmp(id, a->opts.identity) == 0)
		return;
	log_info("IPPool %s: the active replica is %s", a->opts.ippool_ref, id);
	if (a->ha == HA_HOLD) {
		snprintf(why, sizeof(why), "the Lease is held by %.200s", id);
		agent_stand_down(a, why);
	} else if (a->ha == HA_PROBING && a->probe_for_hold) {
		evtimer_del(a->ev_probe);
		a->ha = HA_STANDBY;
	}
}

static void
leader_result(void *userdata, bool answered)
{
	struct agent *a = userdata;
	bool first = !a->api_tried;

	a->api_tried = true;
	a->api_answered = answered;
	if (answered) {
		a->api_answered_at = clock_now_usec();
		if (!a->lease_held)
			evtimer_del(a->ev_hold);
		return;
	}
	/* no API server: a standby with a table takes the serverIP if nobody answers for it */
	if (!a->active && a->ha == HA_STANDBY && !a->lease_held &&
	    !evtimer_pending(a->ev_hold, NULL))
		schedule_hold(a, first ? 0 : HOLD_RETRY_USEC + (uint64_t)(random() % 500000));
}

int
agent_leader_setup(struct agent *a, char *err, size_t errlen)
{
	struct kube_leader_opts lo = {
	    .ns = a->opts.lease_ns,
	    .name = a->opts.lease_name,
	    .identity = a->opts.identity,
	    .lease_duration_usec = a->opts.lease_duration_usec,
	    .renew_deadline_usec = a->opts.renew_deadline_usec,
	    .retry_period_usec = a->opts.retry_period_usec,
	    .on_started = leader_started,
	    .on_stopped = leader_stopped,
	    .on_new_leader = leader_new_holder,
	    .on_result = leader_result,
	    .userdata = a,
	};
	int r;

	if ((r = kube_leader_new(a->kc, &lo, &a->leader)) < 0) {
		snprintf(err, errlen,
		    "--leader-elect: %s (the renew deadline must be under the lease duration, the "
		    "retry period under the renew deadline, the lease duration at least 1 s)",
		    strerror(-r));
		return r;
	}
	/*
	 * The address dies with the agent (renewed every 250 ms while it answers): gone before a
	 * standby may take the Lease (the lease duration), so its ARP probes find it free.
	 */
	a->addr_lifetime_s = a->opts.lease_duration_usec >= 3 * USEC_PER_SEC
				 ? (uint32_t)(a->opts.lease_duration_usec / USEC_PER_SEC) - 1
				 : 1;
	log_info("leader election: Lease %s/%s as %s (lease %.1f s, renew deadline %.1f s, retry "
		 "%.2f s)",
	    a->opts.lease_ns, a->opts.lease_name, a->opts.identity,
	    (double)a->opts.lease_duration_usec / 1e6, (double)a->opts.renew_deadline_usec / 1e6,
	    (double)a->opts.retry_period_usec / 1e6);
	return 0;
}

static void
stop_finish(struct agent *a)
{
	void (*done)(void *) = a->stop_done;

	a->stop_done = NULL;
	if (a->ev_stop != NULL)
		evtimer_del(a->ev_stop);
	if (done != NULL)
		done(a->stop_userdata);
}

static void
released(void *userdata)
{
	struct agent *a = userdata;

	log_info("Lease %s/%s released", a->opts.lease_ns, a->opts.lease_name);
	stop_finish(a);
}

void
agent_stop_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent *a = arg;

	(void)fd;
	(void)what;
	log_warn("Lease %s/%s: release not confirmed in time; the standby takes over when it "
		 "expires",
	    a->opts.lease_ns, a->opts.lease_name);
	stop_finish(a);
}

int
agent_stop(struct agent *a, void (*done)(void *userdata), void *userdata)
{
	if (a->stopping)
		return -EALREADY;
	a->stopping = true;
	a->stop_done = done;
	a->stop_userdata = userdata;
	if (a->leader == NULL || a->ev_stop == NULL) {
		stop_finish(a);
		return 0;
	}
	agent_stand_down(a, "stopping");
	if (kube_leader_release(a->leader, released, a) < 0) {
		stop_finish(a);
		return 0;
	}
	evtimer_add(a->ev_stop, &(struct timeval){.tv_sec = STOP_RELEASE_USEC / USEC_PER_SEC});
	return 0;
}
