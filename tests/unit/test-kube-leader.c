/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lease leader election between two electors (each on its own event_base, so one can be
 * stalled), and the Event recorder's de-duplication, against the in-memory API server.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "lib/clock.h"
#include "tests/helpers/apiserver.h"
#include "tests/runner.h"

static struct test_apiserver *srv;
static struct kube_config *cfg;

#define LEASE_US (2 * USEC_PER_SEC)
#define RENEW_US (1500 * USEC_PER_MSEC)
#define RETRY_US (250 * USEC_PER_MSEC)

static int
suite_init(void)
{
	char err[512];

	if (test_apiserver_start(&srv, NULL) < 0)
		return -1;
	return kube_config_from_kubeconfig(
	    test_apiserver_kubeconfig(srv), NULL, &cfg, err, sizeof(err));
}

static int
suite_cleanup(void)
{
	kube_config_free(cfg);
	test_apiserver_stop(srv);
	return 0;
}

struct elector {
	const char *id;
	struct event_base *base;
	struct kube_client *c;
	struct kube_leader *l;
	struct event *tick;
	int started, stopped;
	uint64_t started_at;
	char seen_leader[64];
	bool released;
	int answered, unanswered; /* on_result */
};

static void
on_started(void *userdata)
{
	struct elector *e = userdata;

	e->started++;
	e->started_at = clock_now_usec();
}

static void
on_stopped(void *userdata)
{
	((struct elector *)userdata)->stopped++;
}

static void
on_new_leader(void *userdata, const char *id)
{
	struct elector *e = userdata;

	snprintf(e->seen_leader, sizeof(e->seen_leader), "%s", id);
}

static void
on_result(void *userdata, bool answered)
{
	struct elector *e = userdata;

	if (answered)
		e->answered++;
	else
		e->unanswered++;
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
}

/*
 * The electors' clock: the monotonic clock until frozen. While it is frozen no lease can
 * expire and no renew deadline can pass, so whatever changes hands then changed hands
 * because it was released, however slowly the machine runs.
 */
static uint64_t frozen_at;

static uint64_t
test_now(void *userdata)
{
	(void)userdata;
	return frozen_at ? frozen_at : clock_now_usec();
}

static const struct kube_clock test_clock = {test_now, NULL};

static void
elector_init(struct elector *e, const char *id)
{
	struct kube_leader_opts o = {
	    .ns = "kube-system",
	    .name = "vm-dhcp-controller",
	    .identity = id,
	    .lease_duration_usec = LEASE_US,
	    .renew_deadline_usec = RENEW_US,
	    .retry_period_usec = RETRY_US,
	    .on_started = on_started,
	    .on_stopped = on_stopped,
	    .on_new_leader = on_new_leader,
	    .on_result = on_result,
	    .userdata = e,
	    .clock = &test_clock,
	};
	struct timeval tv = {0, 5000};

	memset(e, 0, sizeof(*e));
	e->id = id;
	e->base = event_base_new();
	CU_ASSERT_EQUAL_FATAL(kube_client_new(e->base, cfg, &e->c), 0);
	CU_ASSERT_EQUAL_FATAL(kube_leader_new(e->c, &o, &e->l), 0);
	e->tick = event_new(e->base, -1, EV_PERSIST, tick_cb, NULL);
	evtimer_add(e->tick, &tv);
}

static void
elector_fini(struct elector *e)
{
	kube_leader_free(e->l);
	kube_client_free(e->c);
	if (e->tick)
		event_free(e->tick);
	event_base_free(e->base);
}

/*
 * Runs both loops (a stalled elector's loop does not run) until cond or timeout; checks the
 * safety property after every step. Returns whether cond became true.
 */
static int overlap;

static bool
run(struct elector *a, bool run_a, struct elector *b, bool run_b, bool (*cond)(void *), void *arg,
    uint64_t timeout_us)
{
	uint64_t end = clock_now_usec() + timeout_us;

	while (clock_now_usec() < end) {
		if (run_a)
			event_base_loop(a->base, EVLOOP_ONCE);
		if (a->l && b->l && kube_leader_is_leader(a->l) && kube_leader_is_leader(b->l))
			overlap++;
		if (run_b)
			event_base_loop(b->base, EVLOOP_ONCE);
		if (a->l && b->l && kube_leader_is_leader(a->l) && kube_leader_is_leader(b->l))
			overlap++;
		if (cond && cond(arg))
			return true;
	}
	return cond ? cond(arg) : true;
}

static bool
one_leads(void *arg)
{
	struct elector **e = arg;

	return kube_leader_is_leader(e[0]->l) != kube_leader_is_leader(e[1]->l);
}

static bool
leads(void *arg)
{
	return kube_leader_is_leader(((struct elector *)arg)->l);
}

static bool
released(void *arg)
{
	return ((struct elector *)arg)->released;
}

static void
release_done(void *userdata)
{
	((struct elector *)userdata)->released = true;
}

static void
test_handover_on_release(void)
{
	struct elector a, b, *pair[2] = {&a, &b}, *leader, *other;
	uint64_t t0;

	overlap = 0;
	elector_init(&a, "ctl-a");
	elector_init(&b, "ctl-b");
	CU_ASSERT_EQUAL(kube_leader_start(a.l), 0);
	CU_ASSERT_EQUAL(kube_leader_start(b.l), 0);
	CU_ASSERT_TRUE_FATAL(run(&a, true, &b, true, one_leads, pair, 10 * USEC_PER_SEC));
	/* keep going for a few renew periods: still exactly one */
	run(&a, true, &b, true, NULL, NULL, 4 * RETRY_US);
	CU_ASSERT_TRUE(one_leads(pair));
	leader = kube_leader_is_leader(a.l) ? &a : &b;
	other = leader == &a ? &b : &a;
	/* (a very slow run, e.g. under valgrind, may lose and regain it: never both at once) */
	CU_ASSERT_TRUE(leader->started >= 1);
	CU_ASSERT_EQUAL(leader->stopped, leader->started - 1);
	CU_ASSERT_STRING_EQUAL(other->seen_leader, leader->id);

	/* graceful hand-over: the leader releases and the other takes the Lease without waiting
	 * for it to expire (the clock stands still from here, so it cannot expire) */
	t0 = clock_now_usec();
	frozen_at = test_now(NULL);
	CU_ASSERT_EQUAL(kube_leader_release(leader->l, release_done, leader), 0);
	CU_ASSERT_FALSE(kube_leader_is_leader(leader->l)); /* stops acting at once */
	CU_ASSERT_EQUAL(leader->stopped, leader->started);
	CU_ASSERT_TRUE(run(&a, true, &b, true, released, leader, 10 * USEC_PER_SEC));
	CU_ASSERT_TRUE(run(&a, true, &b, true, leads, other, 10 * USEC_PER_SEC));
	CU_ASSERT_TRUE(other->started_at >= t0);
	CU_ASSERT_STRING_EQUAL(other->seen_leader, other->id);
	/* the old leader competes again: it follows while the other holds a live lease */
	CU_ASSERT_EQUAL(kube_leader_start(leader->l), 0);
	run(&a, true, &b, true, NULL, NULL, 4 * RETRY_US);
	CU_ASSERT_FALSE(kube_leader_is_leader(leader->l));
	CU_ASSERT_TRUE(kube_leader_is_leader(other->l));
	CU_ASSERT_EQUAL(overlap, 0);
	frozen_at = 0;
	elector_fini(&a);
	elector_fini(&b);
}

static void
test_takeover_after_stall(void)
{
	struct elector a, b;
	uint64_t t_last_renew, t_b;

	overlap = 0;
	elector_init(&a, "ctl-a");
	elector_init(&b, "ctl-b");
	/* a leads first (b not started yet) */
	CU_ASSERT_EQUAL(kube_leader_start(a.l), 0);
	CU_ASSERT_TRUE_FATAL(run(&a, true, &b, false, leads, &a, 10 * USEC_PER_SEC));
	CU_ASSERT_EQUAL(kube_leader_start(b.l), 0);
	run(&a, true, &b, true, NULL, NULL, 3 * RETRY_US);
	CU_ASSERT_TRUE(kube_leader_is_leader(a.l));
	CU_ASSERT_FALSE(kube_leader_is_leader(b.l));

	/* a stalls (its loop stops: no renewals, as if frozen or partitioned) */
	t_last_renew = clock_now_usec();
	CU_ASSERT_TRUE(run(&a, false, &b, true, leads, &b, 10 * USEC_PER_SEC));
	t_b = clock_now_usec();
	/* b waited out the lease, and a had stopped considering itself leader before that */
	CU_ASSERT_TRUE(t_b - t_last_renew >= LEASE_US - RENEW_US);
	CU_ASSERT_FALSE(kube_leader_is_leader(a.l));
	CU_ASSERT_EQUAL(overlap, 0);

	/* a wakes up: it sees b's live lease and does not come back as leader */
	run(&a, true, &b, true, NULL, NULL, 4 * RETRY_US);
	CU_ASSERT_FALSE(kube_leader_is_leader(a.l));
	CU_ASSERT_TRUE(kube_leader_is_leader(b.l));
	CU_ASSERT_EQUAL(a.stopped, a.started);
	CU_ASSERT_STRING_EQUAL(a.seen_leader, "ctl-b");
	CU_ASSERT_EQUAL(overlap, 0);

	/* b stops without releasing (crash): a takes over after the lease duration */
	kube_leader_free(b.l);
	b.l = NULL;
	t_b = clock_now_usec();
	CU_ASSERT_TRUE(run(&a, true, &b, true, leads, &a, 10 * USEC_PER_SEC));
	CU_ASSERT_TRUE(clock_now_usec() - t_b >= LEASE_US - RENEW_US);
	elector_fini(&a);
	elector_fini(&b);
}

static bool
unanswered_twice(void *arg)
{
	return ((struct elector *)arg)->unanswered >= 2;
}

/*
 * on_result tells whether the API server answered each attempt: yes against the server, no
 * against one that is gone (a replica that holds may then keep acting: agent/failover.c).
 */
static void
test_reports_reachability(void)
{
	struct test_apiserver *gone = NULL;
	struct kube_config *cfg_live = cfg, *cfg_gone = NULL;
	struct elector a, d;
	char err[512];

	CU_ASSERT_FATAL(test_apiserver_start(&gone, NULL) == 0);
	CU_ASSERT_FATAL(kube_config_from_kubeconfig(test_apiserver_kubeconfig(gone), NULL,
			    &cfg_gone, err, sizeof(err)) == 0);
	test_apiserver_stop(gone); /* its port now refuses connections */
	elector_init(&a, "ctl-a");
	cfg = cfg_gone;
	elector_init(&d, "ctl-d");
	cfg = cfg_live;
	CU_ASSERT_EQUAL(kube_leader_start(a.l), 0);
	CU_ASSERT_EQUAL(kube_leader_start(d.l), 0);
	CU_ASSERT_TRUE(run(&a, true, &d, true, leads, &a, 10 * USEC_PER_SEC));
	CU_ASSERT_TRUE(run(&a, true, &d, true, unanswered_twice, &d, 10 * USEC_PER_SEC));
	/* (a run slow enough to miss a renew deadline reports that as unanswered too) */
	CU_ASSERT_TRUE(a.answered >= 1);
	CU_ASSERT_EQUAL(d.answered, 0);
	CU_ASSERT_FALSE(kube_leader_is_leader(d.l));
	CU_ASSERT_EQUAL(d.started, 0);
	elector_fini(&a);
	elector_fini(&d);
	kube_config_free(cfg_gone);
}

static void
test_bad_options(void)
{
	struct kube_leader_opts o = {.ns = "x",
	    .name = "y",
	    .identity = "z",
	    .lease_duration_usec = LEASE_US,
	    .renew_deadline_usec = LEASE_US};
	struct event_base *base = event_base_new();
	struct kube_client *c = NULL;
	struct kube_leader *l = NULL;

	CU_ASSERT_EQUAL_FATAL(kube_client_new(base, cfg, &c), 0);
	CU_ASSERT_EQUAL(kube_leader_new(c, &o, &l), -EINVAL); /* deadline must be < duration */
	o.renew_deadline_usec = RENEW_US;
	o.identity = "";
	CU_ASSERT_EQUAL(kube_leader_new(c, &o, &l), -EINVAL);
	kube_client_free(c);
	event_base_free(base);
}

/* --- events ----------------------------------------------------------------------------------- */

struct flag {
	bool done;
	json_t *obj;
};

static void
flag_cb(void *userdata, const struct kube_result *res)
{
	struct flag *f = userdata;

	f->done = true;
	f->obj = json_incref(res->object);
}

struct recorder_wait {
	struct kube_recorder *r;
	unsigned calls;
};

/* true once the recorder has finished this many API calls (created, patched or failed) */
static bool
recorder_done(void *arg)
{
	const struct recorder_wait *w = arg;
	struct kube_recorder_stats st;

	kube_recorder_get_stats(w->r, &st);
	return st.created + st.patched + st.failed >= w->calls;
}

/* Runs base until r has finished `calls` API calls in all; false if it has not in 60 s. */
static bool
run_recorder(struct event_base *base, struct kube_recorder *r, unsigned calls)
{
	struct elector e = {.base = base}, idle = {.base = event_base_new()};
	struct recorder_wait w = {r, calls};
	struct timeval tv = {0, 5000};
	bool done;

	e.tick = event_new(base, -1, EV_PERSIST, tick_cb, NULL);
	evtimer_add(e.tick, &tv);
	done = run(&e, true, &idle, false, recorder_done, &w, 60 * USEC_PER_SEC);
	event_free(e.tick);
	event_base_free(idle.base);
	return done;
}

static void
test_event_dedup(void)
{
	struct event_base *base = event_base_new();
	struct kube_client *c = NULL;
	struct kube_recorder *r = NULL;
	struct kube_recorder_stats st;
	struct flag f = {0};
	json_t *involved = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion",
	    "network.harvesterhci.io/v1alpha1", "kind", "IPPool", "metadata", "name", "pool1",
	    "namespace", "ev", "uid", "uid-1");
	size_t i;
	json_t *item;
	int dup = 0, other = 0;

	CU_ASSERT_EQUAL_FATAL(kube_client_new(base, cfg, &c), 0);
	CU_ASSERT_EQUAL_FATAL(kube_recorder_new(c, "vm-dhcp-controller", "node-1", &r), 0);
	for (int k = 0; k < 3; k++)
		CU_ASSERT_EQUAL(
		    kube_record_event(r, involved, NULL, NULL, "Warning", "DuplicateMAC",
			"MAC %s is used by %d VMs", "aa:bb:cc:dd:ee:ff", 2),
		    0);
	CU_ASSERT_EQUAL(kube_record_event(r, involved, NULL, NULL, "Normal", "Allocated",
			    "allocated %s", "10.0.0.5"),
	    0);
	{
		json_t *empty = json_object();

		CU_ASSERT_EQUAL(
		    kube_record_event(r, empty, NULL, NULL, "Normal", "x", "y"), -EINVAL);
		json_decref(empty);
	}
	/* create(dup) + create(other) + one patch for the two repeats = 3 calls; a 4th repeat
	 * now makes a second patch */
	CU_ASSERT_TRUE(run_recorder(base, r, 3));
	CU_ASSERT_EQUAL(kube_record_event(r, involved, NULL, NULL, "Warning", "DuplicateMAC",
			    "MAC %s is used by %d VMs", "aa:bb:cc:dd:ee:ff", 2),
	    0);
	CU_ASSERT_TRUE(run_recorder(base, r, 4));
	kube_recorder_get_stats(r, &st);
	CU_ASSERT_EQUAL(st.created, 2);
	CU_ASSERT_EQUAL(st.patched, 2);
	CU_ASSERT_EQUAL(st.failed, 0);

	CU_ASSERT_EQUAL_FATAL(kube_list(c, &kube_res_events, "ev", NULL, flag_cb, &f), 0);
	CU_ASSERT_EQUAL_FATAL(kube_run_until(base, &f.done, 10000), 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(f.obj, "items")), 2);
	json_array_foreach(json_object_get(f.obj, "items"), i, item)
	{
		const char *reason = json_string_value(json_object_get(item, "reason"));
		json_t *io = json_object_get(item, "involvedObject");

		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(io, "uid")), "uid-1");
		CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(io, "kind")), "IPPool");
		if (reason && strcmp(reason, "DuplicateMAC") == 0) {
			dup++;
			CU_ASSERT_EQUAL(json_integer_value(json_object_get(item, "count")), 4);
			CU_ASSERT_STRING_EQUAL(
			    json_string_value(json_object_get(item, "type")), "Warning");
			CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(item, "message")),
			    "MAC aa:bb:cc:dd:ee:ff is used by 2 VMs");
		} else {
			other++;
			CU_ASSERT_EQUAL(json_integer_value(json_object_get(item, "count")), 1);
		}
	}
	CU_ASSERT_EQUAL(dup, 1);
	CU_ASSERT_EQUAL(other, 1);
	json_decref(f.obj);
	json_decref(involved);
	kube_recorder_free(r);
	kube_client_free(c);
	event_base_free(base);
}

/* A burst of distinct Events: two calls in flight at most, the rest wait their turn; repeats
 * of a waiting Event go into its first count (no patch); nothing is dropped or lost. */
static void
test_event_burst(void)
{
	struct event_base *base = event_base_new();
	struct kube_client *c = NULL;
	struct kube_recorder *r = NULL;
	struct kube_recorder_stats st;
	struct flag f = {0};
	json_t *involved = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion",
	    "network.harvesterhci.io/v1alpha1", "kind", "VirtualMachineNetworkConfig", "metadata",
	    "name", "vm-1", "namespace", "burst", "uid", "uid-2");
	size_t i;
	json_t *item;
	int repeated = 0;

	CU_ASSERT_EQUAL_FATAL(kube_client_new(base, cfg, &c), 0);
	CU_ASSERT_EQUAL_FATAL(kube_recorder_new(c, "vm-dhcp-controller", "node-1", &r), 0);
	for (int k = 0; k < 40; k++)
		CU_ASSERT_EQUAL(
		    kube_record_event(r, involved, NULL, NULL, "Normal", "Allocated",
			"02:00:00:00:00:%02x on default/net-1: allocated 10.0.0.%d", k, 10 + k),
		    0);
	/* the last one waits behind the others: two repeats fold into its create */
	for (int k = 0; k < 2; k++)
		CU_ASSERT_EQUAL(
		    kube_record_event(r, involved, NULL, NULL, "Normal", "Allocated",
			"02:00:00:00:00:%02x on default/net-1: allocated 10.0.0.%d", 39, 49),
		    0);
	CU_ASSERT_TRUE(run_recorder(base, r, 40));
	kube_recorder_get_stats(r, &st);
	CU_ASSERT_EQUAL(st.created, 40);
	CU_ASSERT_EQUAL(st.patched, 0);
	CU_ASSERT_EQUAL(st.failed, 0);
	CU_ASSERT_EQUAL(st.dropped, 0);
	CU_ASSERT_EQUAL(st.peak_in_flight, 2);

	CU_ASSERT_EQUAL_FATAL(kube_list(c, &kube_res_events, "burst", NULL, flag_cb, &f), 0);
	CU_ASSERT_EQUAL_FATAL(kube_run_until(base, &f.done, 10000), 0);
	CU_ASSERT_EQUAL(json_array_size(json_object_get(f.obj, "items")), 40);
	json_array_foreach(json_object_get(f.obj, "items"), i, item)
	{
		json_int_t count = json_integer_value(json_object_get(item, "count"));

		if (strstr(json_string_value(json_object_get(item, "message")), "10.0.0.49")) {
			repeated++;
			CU_ASSERT_EQUAL(count, 3);
		} else {
			CU_ASSERT_EQUAL(count, 1);
		}
	}
	CU_ASSERT_EQUAL(repeated, 1);
	json_decref(f.obj);
	json_decref(involved);
	kube_recorder_free(r);
	kube_client_free(c);
	event_base_free(base);
}

static const struct test_case leader_tests[] = {
    {"hand-over on release", test_handover_on_release},
    {"take-over after a stall, never two leaders", test_takeover_after_stall},
    {"bad options", test_bad_options},
    {"each attempt reports whether the API server answered", test_reports_reachability},
    {NULL, NULL},
};

static const struct test_case event_tests[] = {
    {"de-duplication", test_event_dedup},
    {"a burst waits its turn: two calls in flight", test_event_burst},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "kube-leader", .init = suite_init, .cleanup = suite_cleanup, .tests = leader_tests},
    {.name = "kube-events", .init = suite_init, .cleanup = suite_cleanup, .tests = event_tests},
    {.name = NULL},
};
