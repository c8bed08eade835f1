/* SPDX-License-Identifier: Apache-2.0 */
/*
 * --leader-elect's glue (failover.h): the pool's Lease (kube/leader.c), the ARP socket's reads
 * and the timers become events of the state machine (failover-fsm.h: STANDBY, PROBING, ACTIVE,
 * HOLD, and the rules); this file does what it asks: the timers, the ARP probes (arp.c), the
 * log lines, and through the hooks of the sockets' owner, the serverIP taken or given up and
 * the gratuitous ARP. The serverIP's lifetime is renewed while active, so a dead agent's
 * address goes by itself. On SIGTERM the Lease is released so a standby takes over at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>

#include <event2/event.h>

#include "agent/agent.h"
#include "agent/arp.h"
#include "agent/failover.h"
#include "kube/kube.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"

static void
wire(const struct agent_failover *f, struct agent_failover_wire *w)
{
	memset(w, 0, sizeof(*w));
	w->arp_fd = -1;
	f->hooks->wire(f->userdata, w);
}

/* A probe can go out: the sockets and the ARP socket are open, a pool is served. */
static bool
can_probe(const struct agent_failover_wire *w)
{
	return w->open && w->arp_fd >= 0 && w->pool;
}

static void
set_timer(struct event *ev, const struct failover_timer *t)
{
	uint64_t usec = t->usec;
	struct timeval tv;

	if (t->op == FAILOVER_TIMER_CANCEL) {
		evtimer_del(ev);
		return;
	}
	if (t->op != FAILOVER_TIMER_ARM)
		return;
	if (t->jitter_usec != 0)
		usec += (uint64_t)random() % t->jitter_usec;
	tv.tv_sec = (time_t)(usec / USEC_PER_SEC);
	tv.tv_usec = (suseconds_t)(usec % USEC_PER_SEC);
	evtimer_add(ev, &tv);
}

/* Takes the serverIP and answers (the state machine says ACTIVE or HOLD). */
static void
take(struct agent_failover *f)
{
	const struct agent_opts *o = f->opts;

	if (f->fsm.state == FAILOVER_ACTIVE)
		log_kv(LOG_LEVEL_INFO, LOG_KV("ippool", o->ippool_ref, "lease", o->lease_name),
		    "this replica (%s) holds the Lease: active, answering and announcing the "
		    "serverIP",
		    o->identity);
	else
		log_kv(LOG_LEVEL_WARN, LOG_KV("ippool", o->ippool_ref, "lease", o->lease_name),
		    "the API server does not answer and no replica answers for the serverIP: this "
		    "replica (%s) answers without the Lease (hold) until the API server is back",
		    o->identity);
	f->hooks->take(f->userdata);
	if (f->addr_lifetime_s != 0 && !event_pending(f->ev_refresh, EV_TIMEOUT, NULL))
		event_add(f->ev_refresh, &(struct timeval){.tv_usec = 250000});
}

/* Stops answering, then gives the serverIP up. */
static void
drop(struct agent_failover *f, const char *why, bool was_active)
{
	const struct agent_opts *o = f->opts;

	event_del(f->ev_refresh);
	f->hooks->drop(f->userdata, why);
	if (was_active)
		log_kv(LOG_LEVEL_WARN, LOG_KV("ippool", o->ippool_ref, "lease", o->lease_name),
		    "this replica (%s) stands by, not answering: %s", o->identity, why);
}

static void
send_probe(struct agent_failover *f)
{
	struct agent_failover_wire w;
	int r;

	wire(f, &w);
	r = agent_arp_probe_send(w.arp_fd, w.ifindex, w.hwaddr, w.server_ip);
	if (r < 0)
		log_warn("%s: cannot send an ARP probe: %s", f->opts->ifname, strerror(-r));
}

static void release(struct agent_failover *f);

/* Does what the state machine asked, in failover-fsm.h's order; why: a stand down's reason. */
static void
perform(struct agent_failover *f, const struct failover_actions *act, const char *why)
{
	set_timer(f->ev_probe, &act->probe);
	set_timer(f->ev_hold, &act->hold);
	if (act->claim)
		take(f);
	if (act->stand_down)
		drop(f, why, act->was_active);
	if (act->send_probe)
		send_probe(f);
	if (act->announce)
		f->hooks->announce(f->userdata);
	if (act->release)
		release(f);
}

/* The words of a reason that names nobody. */
static const char *
why_text(enum failover_why why)
{
	return why == FAILOVER_WHY_STOPPING ? "stopping" : "no longer holds the Lease";
}

/* Renews the serverIP's lifetime while active (so a dead agent's address goes by itself). */
static void
refresh_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent_failover *f = arg;

	(void)fd;
	(void)what;
	if (!f->fsm.active)
		return;
	f->hooks->renew(f->userdata, f->addr_lifetime_s);
}

static void
probe_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent_failover *f = arg;
	struct agent_failover_wire w;
	struct failover_actions act;
	char ip[IPV4_STRLEN], m[MAC_STRLEN];

	(void)fd;
	(void)what;
	wire(f, &w);
	failover_fsm_probe_timer(&f->fsm, w.arp_fd >= 0 && w.pool, can_probe(&w), &act);
	if (act.note == FAILOVER_NOTE_FENCED || act.note == FAILOVER_NOTE_STAYS_STANDBY) {
		ipv4_format(w.server_ip, ip);
		mac_format(f->fsm.conflict_mac, m);
		if (act.note == FAILOVER_NOTE_FENCED)
			log_warn("%s: this replica holds the Lease but %s is still answered by %s "
				 "(a previous active replica cut off from the API server?): not "
				 "taking it until nobody answers",
			    f->opts->ifname, ip, m);
		else
			log_debug("%s: %s answered by %s: stays standby", f->opts->ifname, ip, m);
	}
	perform(f, &act, NULL);
}

/* One frame of the ARP socket about the serverIP; false once the replica stood down. */
static bool
arp_frame(struct agent_failover *f, const struct agent_failover_wire *w, uint64_t now, int kind,
    const uint8_t mac[6])
{
	struct failover_actions act;
	char ip[IPV4_STRLEN], m[MAC_STRLEN], why[128] = "";

	failover_fsm_arp(&f->fsm, now,
	    kind == AGENT_ARP_CLAIM ? FAILOVER_ARP_CLAIM : FAILOVER_ARP_PROBE, mac, &act);
	ipv4_format(w->server_ip, ip);
	mac_format(mac, m);
	if (act.note == FAILOVER_NOTE_DEFEND)
		log_warn("%s: %s also claimed by %s; this replica holds the Lease: defending it "
			 "with a gratuitous ARP",
		    f->opts->ifname, ip, m);
	if (act.stand_down)
		snprintf(why, sizeof(why), "%s claimed by %s while held without the Lease", ip, m);
	perform(f, &act, why);
	return !act.stand_down;
}

void
agent_failover_arp_readable(evutil_socket_t fd, short what, void *arg)
{
	struct agent_failover *f = arg;
	struct agent_failover_wire w;
	uint8_t frame[128], mac[6];
	uint64_t now = clock_now_usec();
	ssize_t n;
	int kind;

	(void)what;
	wire(f, &w);
	while ((n = recv(fd, frame, sizeof(frame), 0)) > 0) {
		if (!w.pool)
			continue;
		kind = agent_arp_classify(frame, (size_t)n, w.hwaddr, w.server_ip, mac);
		if (kind == AGENT_ARP_OTHER)
			continue;
		if (!arp_frame(f, &w, now, kind, mac))
			return;
	}
}

static void
hold_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent_failover *f = arg;
	struct agent_failover_wire w;
	struct failover_actions act;

	(void)fd;
	(void)what;
	wire(f, &w);
	failover_fsm_hold_timer(&f->fsm, clock_now_usec(), can_probe(&w), &act);
	perform(f, &act, NULL);
}

void
agent_failover_sockets_open(struct agent_failover *f)
{
	struct agent_failover_wire w;
	struct failover_actions act;

	if (f->leader == NULL)
		return;
	wire(f, &w);
	failover_fsm_sockets_open(&f->fsm, can_probe(&w), w.snapshot, &act);
	perform(f, &act, NULL);
}

static void
leader_started(void *userdata)
{
	struct agent_failover *f = userdata;
	struct agent_failover_wire w;
	struct failover_actions act;

	wire(f, &w);
	failover_fsm_lease_won(&f->fsm, can_probe(&w), &act);
	if (act.note == FAILOVER_NOTE_HOLDS_AGAIN)
		log_info("this replica (%s) holds the Lease again: active", f->opts->identity);
	perform(f, &act, NULL);
}

static void
leader_stopped(void *userdata)
{
	struct agent_failover *f = userdata;
	const struct agent_opts *o = f->opts;
	struct failover_actions act;

	failover_fsm_lease_lost(&f->fsm, &act);
	if (act.note == FAILOVER_NOTE_HOLD_NO_API)
		log_kv(LOG_LEVEL_WARN, LOG_KV("ippool", o->ippool_ref, "lease", o->lease_name),
		    "cannot renew the Lease: the API server does not answer; this replica (%s) "
		    "keeps answering (hold): no replica can take the Lease without the API server, "
		    "and one that does takes the serverIP only once nobody answers for it",
		    o->identity);
	perform(f, &act, why_text(act.why));
}

static void
leader_new_holder(void *userdata, const char *id)
{
	struct agent_failover *f = userdata;
	struct failover_actions act;
	char why[320];

	/* kube_leader calls this when the holder changed to another, non-empty one */
	if (strcmp(id, f->opts->identity) == 0)
		return;
	log_info("IPPool %s: the active replica is %s", f->opts->ippool_ref, id);
	failover_fsm_lease_other(&f->fsm, &act);
	snprintf(why, sizeof(why), "the Lease is held by %.200s", id);
	perform(f, &act, why);
}

static void
leader_result(void *userdata, bool answered)
{
	struct agent_failover *f = userdata;
	struct failover_actions act;

	failover_fsm_api_result(&f->fsm, clock_now_usec(), answered, &act);
	perform(f, &act, NULL);
}

int
agent_failover_setup(struct agent_failover *f, struct kube_client *kc,
    const struct agent_failover_hooks *hooks, void *userdata, char *err, size_t errlen)
{
	const struct agent_opts *o = f->opts;
	struct kube_leader_opts lo = {
	    .ns = o->lease_ns,
	    .name = o->lease_name,
	    .identity = o->identity,
	    .lease_duration_usec = o->lease_duration_usec,
	    .renew_deadline_usec = o->renew_deadline_usec,
	    .retry_period_usec = o->retry_period_usec,
	    .on_started = leader_started,
	    .on_stopped = leader_stopped,
	    .on_new_leader = leader_new_holder,
	    .on_result = leader_result,
	    .userdata = f,
	};
	int r;

	f->hooks = hooks;
	f->userdata = userdata;
	if ((r = kube_leader_new(kc, &lo, &f->leader)) < 0) {
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
	f->addr_lifetime_s = o->lease_duration_usec >= 3 * USEC_PER_SEC
				 ? (uint32_t)(o->lease_duration_usec / USEC_PER_SEC) - 1
				 : 1;
	log_info("leader election: Lease %s/%s as %s (lease %.1f s, renew deadline %.1f s, retry "
		 "%.2f s)",
	    o->lease_ns, o->lease_name, o->identity, (double)o->lease_duration_usec / 1e6,
	    (double)o->renew_deadline_usec / 1e6, (double)o->retry_period_usec / 1e6);
	return 0;
}

static void
stop_finish(struct agent_failover *f)
{
	void (*done)(void *) = f->stop_done;

	f->stop_done = NULL;
	if (f->ev_stop != NULL)
		evtimer_del(f->ev_stop);
	if (done != NULL)
		done(f->stop_userdata);
}

static void
released(void *userdata)
{
	struct agent_failover *f = userdata;

	log_info("Lease %s/%s released", f->opts->lease_ns, f->opts->lease_name);
	stop_finish(f);
}

static void
stop_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent_failover *f = arg;

	(void)fd;
	(void)what;
	log_warn("Lease %s/%s: release not confirmed in time; the standby takes over when it "
		 "expires",
	    f->opts->lease_ns, f->opts->lease_name);
	stop_finish(f);
}

/* The Lease released, confirmed by released() or given up by stop_timeout_cb. */
static void
release(struct agent_failover *f)
{
	if (kube_leader_release(f->leader, released, f) < 0) {
		stop_finish(f);
		return;
	}
	evtimer_add(f->ev_stop,
	    &(struct timeval){.tv_sec = (time_t)(FAILOVER_STOP_RELEASE_USEC / USEC_PER_SEC)});
}

int
agent_failover_stop(struct agent_failover *f, void (*done)(void *userdata), void *userdata)
{
	struct failover_actions act;
	int r;

	r = failover_fsm_stop(&f->fsm, f->leader != NULL && f->ev_stop != NULL, &act);
	if (r < 0)
		return r;
	f->stop_done = done;
	f->stop_userdata = userdata;
	if (!act.release) {
		stop_finish(f);
		return 0;
	}
	perform(f, &act, why_text(act.why));
	return 0;
}

int
agent_failover_init(
    struct agent_failover *f, struct event_base *base, const struct agent_opts *opts, uint64_t now)
{
	memset(f, 0, sizeof(*f));
	f->opts = opts;
	failover_fsm_init(
	    &f->fsm, opts->leader_elect, now, opts->renew_deadline_usec, opts->retry_period_usec);
	f->ev_refresh = event_new(base, -1, EV_PERSIST, refresh_cb, f);
	f->ev_probe = evtimer_new(base, probe_cb, f);
	f->ev_hold = evtimer_new(base, hold_cb, f);
	f->ev_stop = evtimer_new(base, stop_timeout_cb, f);
	if (f->ev_refresh == NULL || f->ev_probe == NULL || f->ev_hold == NULL ||
	    f->ev_stop == NULL)
		return -ENOMEM;
	return 0;
}

void
agent_failover_free(struct agent_failover *f)
{
	struct failover_actions act;

	if (f->leader != NULL && f->fsm.active) {
		/* not answering, the address gone, before the sockets close */
		failover_fsm_stand_down(&f->fsm, FAILOVER_WHY_STOPPING, &act);
		perform(f, &act, why_text(act.why));
	}
	f->leader = kube_leader_free(f->leader);
	if (f->ev_refresh != NULL)
		event_free(f->ev_refresh);
	if (f->ev_probe != NULL)
		event_free(f->ev_probe);
	if (f->ev_hold != NULL)
		event_free(f->ev_hold);
	if (f->ev_stop != NULL)
		event_free(f->ev_stop);
	f->ev_refresh = f->ev_probe = f->ev_hold = f->ev_stop = NULL;
}
