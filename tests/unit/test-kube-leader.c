/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Lease leader election and the Event recorder on the scripted transport and fake clock
 * (tests/helpers/scripted-http.c): each test scripts the API server's answers about the Lease
 * (absent, held by another, released, a conflict, refusals, 5xx, 429, a renewal that never
 * comes back) and moves time on itself, so the time an elector waits before it takes a
 * Lease over, and the time it stops acting when its renewals go unanswered, are checked to
 * the millisecond. Two electors on one loop check the safety property (never two leaders)
 * at every millisecond of a stall and a take-over. The recorder: create then count patches,
 * repeats folded into the call in flight, two calls in flight at most, an expired Event
 * created anew, a failed create retried by the next repeat.
 *
 * Size: about 950 lines, one file on purpose: the elector's and the recorder's cases share the
 * scripted Lease and Event answers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "lib/clock.h"
#include "tests/helpers/scripted-http.h"
#include "tests/runner.h"

/* This binary's transport and clock (kube/http.c and lib/clock.c are not linked). */
const struct kube_http_engine kube_http_engine = SCRIPTED_HTTP_ENGINE;
SCRIPTED_CLOCK_DEFINE

#define MS (UINT64_C(1000))
#define LEASE_US (2000 * MS)
#define RENEW_US (1500 * MS)
#define RETRY_US (250 * MS)

#define LEASES "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
#define LEASE LEASES "/vm-dhcp-controller"

/* --- electors --------------------------------------------------------------------------- */

struct elector {
	const char *id;
	struct kube_leader *l;
	int started, stopped;
	uint64_t started_at, stopped_at;
	char seen_leader[64];
	int released;
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
	struct elector *e = userdata;

	e->stopped++;
	e->stopped_at = clock_now_usec();
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
release_done(void *userdata)
{
	((struct elector *)userdata)->released++;
}

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
	};

	memset(e, 0, sizeof(*e));
	e->id = id;
	CU_ASSERT_EQUAL_FATAL(kube_leader_new(scripted_client, &o, &e->l), 0);
}

static bool
leads(const struct elector *e)
{
	return e->l && kube_leader_is_leader(e->l);
}

/* The electors stop (their calls in flight are aborted), then the script must be done. */
static void
finish(struct elector *a, struct elector *b)
{
	if (a)
		a->l = kube_leader_free(a->l);
	if (b)
		b->l = kube_leader_free(b->l);
	scripted_check_done();
}

/* A Lease as the API server returns it (leaseDurationSeconds 2, as the electors write). */
static char lease_text[1024];

static const char *
lease(const char *holder, const char *renew, int transitions, int rv)
{
	snprintf(lease_text, sizeof(lease_text),
	    "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{"
	    "\"name\":\"vm-dhcp-controller\",\"namespace\":\"kube-system\","
	    "\"resourceVersion\":\"%d\"},\"spec\":{\"holderIdentity\":\"%s\","
	    "\"leaseDurationSeconds\":2,\"acquireTime\":\"2026-01-01T00:00:00.000000Z\","
	    "\"renewTime\":\"%s\",\"leaseTransitions\":%d}}",
	    rv, holder, renew, transitions);
	return lease_text;
}

static const char *const conflict =
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"Conflict\","
    "\"message\":\"the object has been modified\",\"code\":409}";

/* spec.FIELD of the Lease a write sent ("" / -1 when absent). */
static const char *
sent_str(json_t *body, const char *field)
{
	const char *s = json_string_value(json_object_get(json_object_get(body, "spec"), field));

	return s ? s : "";
}

static json_int_t
sent_int(json_t *body, const char *field)
{
	json_t *v = json_object_get(json_object_get(body, "spec"), field);

	return json_is_integer(v) ? json_integer_value(v) : -1;
}

static const char *
sent_rv(json_t *body)
{
	const char *s = kube_obj_resource_version(body);

	return s ? s : "";
}

/* e acquires an absent Lease (its first attempt runs at once). */
static void
acquire(struct elector *e)
{
	scripted_expect("GET", LEASE, 404, NULL);
	scripted_expect("POST", LEASES, 201, lease(e->id, "x", 0, 1));
	CU_ASSERT_EQUAL_FATAL(kube_leader_start(e->l), 0);
	scripted_run();
	CU_ASSERT_TRUE_FATAL(leads(e));
}

static void
test_acquires_absent_lease(void)
{
	struct elector a;
	struct scripted_exp *post;
	json_t *body;

	elector_init(&a, "ctl-a");
	CU_ASSERT_FALSE(leads(&a));
	scripted_expect("GET", LEASE, 404, NULL);
	post = scripted_expect("POST", LEASES, 201, lease("ctl-a", "x", 0, 1));
	CU_ASSERT_EQUAL(kube_leader_start(a.l), 0);
	CU_ASSERT_EQUAL(kube_leader_start(a.l), -EALREADY);
	scripted_run();
	CU_ASSERT_TRUE(leads(&a));
	CU_ASSERT_EQUAL(a.started, 1);
	CU_ASSERT_EQUAL(a.stopped, 0);
	CU_ASSERT_STRING_EQUAL(a.seen_leader, "ctl-a");
	CU_ASSERT_EQUAL(a.answered, 2); /* the GET's 404 and the create */
	CU_ASSERT_EQUAL(a.unanswered, 0);
	body = scripted_body(post);
	CU_ASSERT_STRING_EQUAL(sent_str(body, "holderIdentity"), "ctl-a");
	CU_ASSERT_EQUAL(sent_int(body, "leaseDurationSeconds"), 2);
	CU_ASSERT_EQUAL(sent_int(body, "leaseTransitions"), 0);
	CU_ASSERT_STRING_EQUAL(kube_obj_name(body), "vm-dhcp-controller");
	CU_ASSERT_STRING_EQUAL(sent_str(body, "acquireTime"), sent_str(body, "renewTime"));
	json_decref(body);
	finish(&a, NULL);
}

/*
 * The leader renews every retry period: GET, then PUT of itself with the resourceVersion it
 * read, a newer renewTime, the same acquireTime and transitions. It stays leader throughout.
 */
static void
test_renews_every_retry_period(void)
{
	struct elector a;
	struct scripted_exp *get, *put, *put2;
	json_t *body, *body2;

	elector_init(&a, "ctl-a");
	acquire(&a);
	get = scripted_expect(
	    "GET", LEASE, 200, lease("ctl-a", "2026-01-01T00:00:00.000000Z", 3, 41));
	put = scripted_expect("PUT", LEASE, 200, lease("ctl-a", "x", 3, 42));
	scripted_advance(RETRY_US - MS);
	CU_ASSERT_FALSE(scripted_arrived(get)); /* not before the retry period */
	scripted_advance(MS);
	CU_ASSERT_TRUE(scripted_arrived(put));
	body = scripted_body(put);
	CU_ASSERT_STRING_EQUAL(sent_rv(body), "41");
	CU_ASSERT_STRING_EQUAL(sent_str(body, "holderIdentity"), "ctl-a");
	CU_ASSERT_EQUAL(sent_int(body, "leaseTransitions"), 3);
	CU_ASSERT_STRING_EQUAL(sent_str(body, "acquireTime"), "2026-01-01T00:00:00.000000Z");

	/* the renewals go on for longer than the lease: one leader term, no hand-over */
	for (int i = 0; i < 12; i++) {
		scripted_expect("GET", LEASE, 200, lease("ctl-a", "x", 3, 42 + 2 * i));
		put2 = scripted_expect("PUT", LEASE, 200, lease("ctl-a", "y", 3, 43 + 2 * i));
		scripted_advance(RETRY_US);
		CU_ASSERT_TRUE(leads(&a));
	}
	body2 = scripted_body(put2);
	/* renewTime moves on (microseconds: two renewals within a second differ) */
	CU_ASSERT_STRING_NOT_EQUAL(sent_str(body2, "renewTime"), sent_str(body, "renewTime"));
	CU_ASSERT_STRING_EQUAL(sent_rv(body2), "64");
	CU_ASSERT_EQUAL(a.started, 1);
	CU_ASSERT_EQUAL(a.stopped, 0);
	CU_ASSERT_EQUAL(a.unanswered, 0);
	json_decref(body);
	json_decref(body2);
	finish(&a, NULL);
}

/*
 * A renewal that never comes back: the leader stops acting exactly when the renew deadline
 * has passed since the last successful renewal started, well before the lease duration
 * another elector waits, and reports that attempt as unanswered; when the call then fails it
 * competes again.
 */
static void
test_stops_when_renewal_unanswered(void)
{
	struct elector a;
	struct scripted_exp *put;
	uint64_t renewed;

	elector_init(&a, "ctl-a");
	acquire(&a);
	scripted_expect("GET", LEASE, 200, lease("ctl-a", "x", 0, 2));
	scripted_expect("PUT", LEASE, 200, lease("ctl-a", "y", 0, 3));
	scripted_advance(RETRY_US);
	renewed = scripted_now(); /* the last successful renewal started here */
	scripted_expect("GET", LEASE, 200, lease("ctl-a", "y", 0, 3));
	put = scripted_expect_held("PUT", LEASE);
	scripted_advance(RETRY_US);
	CU_ASSERT_TRUE(scripted_arrived(put));
	scripted_advance(renewed + RENEW_US - MS - scripted_now());
	CU_ASSERT_TRUE(leads(&a));
	CU_ASSERT_EQUAL(a.unanswered, 0);
	scripted_advance(MS);
	CU_ASSERT_FALSE(leads(&a));
	CU_ASSERT_EQUAL(a.stopped, 1);
	CU_ASSERT_EQUAL(a.stopped_at, renewed + RENEW_US);
	CU_ASSERT_TRUE(a.stopped_at < renewed + LEASE_US);
	CU_ASSERT_EQUAL(a.unanswered, 1);
	/* nothing else is sent while the renewal hangs */
	scripted_advance(4 * RETRY_US);
	/* the connection breaks: unanswered, and it competes again a retry period later */
	scripted_error(put, -ECONNRESET, "Connection reset by peer");
	CU_ASSERT_EQUAL(a.unanswered, 2);
	scripted_expect("GET", LEASE, 200, lease("ctl-a", "y", 0, 3));
	scripted_expect("PUT", LEASE, 200, lease("ctl-a", "z", 0, 4));
	scripted_advance(RETRY_US);
	CU_ASSERT_TRUE(leads(&a));
	CU_ASSERT_EQUAL(a.started, 2);
	finish(&a, NULL);
}

/*
 * A renewal answered (200) a renew deadline or more after it began: the deadline has stopped
 * the leader, and a term counted from that attempt would be over already, so the answer is
 * not acted on (client-go's renew runs under that timeout likewise); the elector acquires
 * afresh with its next attempt. (An answer after the stop but within the deadline of its own
 * attempt starts a new term, as any renewal would.)
 */
static void
test_late_renewal_answer_ignored(void)
{
	struct elector a;
	struct scripted_exp *put;
	uint64_t renewed, attempt;

	elector_init(&a, "ctl-a");
	acquire(&a);
	renewed = scripted_now();
	scripted_expect("GET", LEASE, 200, lease("ctl-a", "x", 0, 2));
	put = scripted_expect_held("PUT", LEASE);
	scripted_advance(RETRY_US);
	attempt = scripted_now(); /* this renewal began here (its GET) */
	CU_ASSERT_TRUE(scripted_arrived(put));
	scripted_advance(renewed + RENEW_US - scripted_now());
	CU_ASSERT_FALSE(leads(&a));
	CU_ASSERT_EQUAL(a.started, 1);
	CU_ASSERT_EQUAL(a.stopped, 1);
	/* the answer comes a renew deadline after the attempt began: not started again */
	scripted_advance(attempt + RENEW_US - scripted_now());
	scripted_answer(put, 200, lease("ctl-a", "y", 0, 3));
	CU_ASSERT_FALSE(leads(&a));
	CU_ASSERT_EQUAL(a.started, 1);
	CU_ASSERT_EQUAL(a.stopped, 1);
	/* the next attempt renews its own Lease and leads again: one new term */
	scripted_expect("GET", LEASE, 200, lease("ctl-a", "y", 0, 3));
	scripted_expect("PUT", LEASE, 200, lease("ctl-a", "z", 0, 4));
	scripted_advance(RETRY_US);
	CU_ASSERT_TRUE(leads(&a));
	CU_ASSERT_EQUAL(a.started, 2);
	CU_ASSERT_EQUAL(a.stopped, 1);
	finish(&a, NULL);
}

/*
 * Another holder's Lease is live until the lease duration has passed since its record was
 * last seen to change, on this elector's clock; a renewal by the holder starts the wait
 * again. Then the elector takes it over: transitions + 1, the resourceVersion it read.
 */
static void
test_takes_over_only_after_lease_duration(void)
{
	struct elector a;
	struct scripted_exp *put;
	uint64_t seen;
	json_t *body;

	elector_init(&a, "ctl-a");
	scripted_expect("GET", LEASE, 200, lease("ctl-b", "t1", 4, 10));
	CU_ASSERT_EQUAL(kube_leader_start(a.l), 0);
	scripted_run();
	CU_ASSERT_FALSE(leads(&a));
	CU_ASSERT_STRING_EQUAL(a.seen_leader, "ctl-b");
	/* ctl-b renews once at 500 ms (a new record), then goes silent */
	scripted_expect("GET", LEASE, 200, lease("ctl-b", "t1", 4, 10));
	scripted_expect("GET", LEASE, 200, lease("ctl-b", "t2", 4, 11));
	scripted_advance(2 * RETRY_US);
	seen = scripted_now();
	/* the same record at every attempt until two seconds after it was first seen */
	for (uint64_t t = RETRY_US; t < LEASE_US; t += RETRY_US) {
		scripted_expect("GET", LEASE, 200, lease("ctl-b", "t2", 4, 11));
		scripted_advance(RETRY_US);
		CU_ASSERT_FALSE(leads(&a));
	}
	scripted_expect("GET", LEASE, 200, lease("ctl-b", "t2", 4, 11));
	put = scripted_expect("PUT", LEASE, 200, lease("ctl-a", "t3", 5, 12));
	scripted_advance(RETRY_US);
	CU_ASSERT_TRUE(leads(&a));
	CU_ASSERT_EQUAL(a.started_at, seen + LEASE_US);
	CU_ASSERT_STRING_EQUAL(a.seen_leader, "ctl-a");
	body = scripted_body(put);
	CU_ASSERT_STRING_EQUAL(sent_str(body, "holderIdentity"), "ctl-a");
	CU_ASSERT_EQUAL(sent_int(body, "leaseTransitions"), 5);
	CU_ASSERT_STRING_EQUAL(sent_rv(body), "11");
	CU_ASSERT_STRING_EQUAL(sent_str(body, "acquireTime"), sent_str(body, "renewTime"));
	json_decref(body);
	finish(&a, NULL);
}

/* Two electors write at once: the loser gets Conflict, stays follower, follows the winner. */
static void
test_conflict_loses(void)
{
	struct elector a;

	elector_init(&a, "ctl-a");
	scripted_expect("GET", LEASE, 200, lease("", "t1", 1, 20));
	scripted_expect("PUT", LEASE, 409, conflict);
	CU_ASSERT_EQUAL(kube_leader_start(a.l), 0);
	scripted_run();
	CU_ASSERT_FALSE(leads(&a));
	CU_ASSERT_EQUAL(a.started, 0);
	CU_ASSERT_EQUAL(a.answered, 2); /* a Conflict is an answer */
	scripted_expect("GET", LEASE, 200, lease("ctl-b", "t2", 2, 21));
	scripted_advance(RETRY_US);
	CU_ASSERT_FALSE(leads(&a));
	CU_ASSERT_STRING_EQUAL(a.seen_leader, "ctl-b");
	CU_ASSERT_EQUAL(a.unanswered, 0);
	finish(&a, NULL);
}

/*
 * Release: the leader stops acting inside the call, then clears the holder (with a short
 * duration, transitions kept) and reports; it sends nothing more until started again, and
 * then it follows the other elector's live lease.
 */
static void
test_release(void)
{
	struct elector a;
	struct scripted_exp *put;
	json_t *body;

	elector_init(&a, "ctl-a");
	acquire(&a);
	scripted_expect("GET", LEASE, 200, lease("ctl-a", "t1", 6, 30));
	put = scripted_expect("PUT", LEASE, 200, lease("", "t2", 6, 31));
	CU_ASSERT_EQUAL(kube_leader_release(a.l, release_done, &a), 0);
	CU_ASSERT_FALSE(leads(&a)); /* at once */
	CU_ASSERT_EQUAL(a.stopped, 1);
	CU_ASSERT_EQUAL(a.released, 0); /* reported from the loop */
	scripted_run();
	CU_ASSERT_EQUAL(a.released, 1);
	body = scripted_body(put);
	CU_ASSERT_STRING_EQUAL(sent_str(body, "holderIdentity"), "");
	CU_ASSERT_EQUAL(sent_int(body, "leaseDurationSeconds"), 1);
	CU_ASSERT_EQUAL(sent_int(body, "leaseTransitions"), 6);
	CU_ASSERT_STRING_EQUAL(sent_rv(body), "30");
	json_decref(body);
	scripted_advance(4 * RETRY_US); /* no more attempts */
	CU_ASSERT_EQUAL(kube_leader_release(a.l, release_done, &a), -EALREADY);

	/* started again while another holds a live lease: it follows */
	scripted_expect("GET", LEASE, 200, lease("ctl-b", "t3", 7, 32));
	scripted_expect("GET", LEASE, 200, lease("ctl-b", "t4", 7, 33));
	CU_ASSERT_EQUAL(kube_leader_start(a.l), 0);
	scripted_advance(RETRY_US);
	CU_ASSERT_FALSE(leads(&a));
	CU_ASSERT_EQUAL(a.started, 1);
	CU_ASSERT_STRING_EQUAL(a.seen_leader, "ctl-b");
	finish(&a, NULL);
}

/* A release that finds the Lease already held by another leaves it alone. */
static void
test_release_of_lease_held_by_another(void)
{
	struct elector a;

	elector_init(&a, "ctl-a");
	acquire(&a);
	scripted_expect("GET", LEASE, 200, lease("ctl-b", "t1", 1, 30));
	CU_ASSERT_EQUAL(kube_leader_release(a.l, release_done, &a), 0);
	scripted_run();
	CU_ASSERT_EQUAL(a.released, 1);
	scripted_advance(4 * RETRY_US);
	finish(&a, NULL);
}

/* A follower's release sends nothing and reports from the loop, not from inside the call. */
static void
test_release_while_following(void)
{
	struct elector a;

	elector_init(&a, "ctl-a");
	scripted_expect("GET", LEASE, 200, lease("ctl-b", "t1", 1, 5));
	CU_ASSERT_EQUAL(kube_leader_start(a.l), 0);
	scripted_run();
	CU_ASSERT_EQUAL(kube_leader_release(a.l, release_done, &a), 0);
	CU_ASSERT_EQUAL(a.released, 0);
	scripted_run();
	CU_ASSERT_EQUAL(a.released, 1);
	CU_ASSERT_EQUAL(a.stopped, 0); /* it never started */
	scripted_advance(4 * RETRY_US);
	finish(&a, NULL);
}

/*
 * A released Lease (holder cleared) is taken at the next attempt, without waiting for it to
 * expire; a leader that finds its holder cleared behind its back stops, then competes again.
 */
static void
test_released_lease_taken_at_once(void)
{
	struct elector a;
	struct scripted_exp *put;
	json_t *body;

	elector_init(&a, "ctl-a");
	scripted_expect("GET", LEASE, 200, lease("ctl-b", "t1", 2, 50));
	CU_ASSERT_EQUAL(kube_leader_start(a.l), 0);
	scripted_run();
	scripted_expect("GET", LEASE, 200, lease("", "t2", 2, 51));
	put = scripted_expect("PUT", LEASE, 200, lease("ctl-a", "t3", 3, 52));
	scripted_advance(RETRY_US);
	CU_ASSERT_TRUE(leads(&a));
	body = scripted_body(put);
	CU_ASSERT_EQUAL(sent_int(body, "leaseTransitions"), 3);
	CU_ASSERT_EQUAL(sent_int(body, "leaseDurationSeconds"), 2);
	json_decref(body);

	/* cleared behind its back (an operator, a rogue writer): it stops, then competes */
	scripted_expect("GET", LEASE, 200, lease("", "t4", 3, 53));
	scripted_advance(RETRY_US);
	CU_ASSERT_FALSE(leads(&a));
	CU_ASSERT_EQUAL(a.stopped, 1);
	scripted_expect("GET", LEASE, 200, lease("", "t4", 3, 53));
	scripted_expect("PUT", LEASE, 200, lease("ctl-a", "t5", 4, 54));
	scripted_advance(RETRY_US);
	CU_ASSERT_TRUE(leads(&a));
	CU_ASSERT_EQUAL(a.started, 2);
	finish(&a, NULL);
}

/* The Go project's Lease (wrangler leader.RunOrDie on kube-system/vm-dhcp-controllers). */
#define GO_LEASE LEASES "/vm-dhcp-controllers"
#define GO_HOLDER "harvester-vm-dhcp-controller-6d8f7b9c5-x2k4p"

/*
 * A Lease as client-go's LeaseLock writes it (k8s.io/client-go tools/leaderelection/
 * resourcelock/leaselock.go, under wrangler's leader.RunOrDie: identity os.Hostname(), the
 * pod's name; LeaseDuration 45 s, RenewDeadline 30 s, RetryPeriod 2 s): MicroTime renewTime
 * and acquireTime, and the metadata the API server adds. holder NULL: no holderIdentity at
 * all (a record written without one).
 */
static char go_text[2048];

static const char *
go_lease(const char *holder, int duration, const char *renew, int transitions, int rv)
{
	char h[128] = "";

	if (holder != NULL)
		snprintf(h, sizeof(h), "\"holderIdentity\":\"%s\",", holder);
	snprintf(go_text, sizeof(go_text),
	    "{\"kind\":\"Lease\",\"apiVersion\":\"coordination.k8s.io/v1\",\"metadata\":{"
	    "\"name\":\"vm-dhcp-controllers\",\"namespace\":\"kube-system\","
	    "\"uid\":\"3f1c1a4e-8a57-4c43-9d0e-5b2f9a7d0c11\",\"resourceVersion\":\"%d\","
	    "\"creationTimestamp\":\"2026-07-23T04:33:38Z\",\"managedFields\":[{\"manager\":"
	    "\"vm-dhcp-controller\",\"operation\":\"Update\",\"apiVersion\":"
	    "\"coordination.k8s.io/v1\",\"time\":\"2026-07-23T04:33:38Z\",\"fieldsType\":"
	    "\"FieldsV1\",\"fieldsV1\":{\"f:spec\":{\"f:acquireTime\":{},\"f:holderIdentity\":"
	    "{},\"f:leaseDurationSeconds\":{},\"f:leaseTransitions\":{},\"f:renewTime\":{}}}}]},"
	    "\"spec\":{%s\"leaseDurationSeconds\":%d,\"acquireTime\":"
	    "\"2026-07-23T04:33:38.512345Z\",\"renewTime\":\"%s\",\"leaseTransitions\":%d}}",
	    rv, h, duration, renew, transitions);
	return go_text;
}

/* RFC 3339 with exactly 6 decimals and Z: metav1.MicroTime, as client-go parses it. */
static bool
micro_time(const char *s)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd.ddddddZ";

	if (strlen(s) != sizeof(shape) - 1)
		return false;
	for (size_t i = 0; shape[i] != '\0'; i++)
		if (shape[i] == 'd' ? (s[i] < '0' || s[i] > '9') : s[i] != shape[i])
			return false;
	return true;
}

/*
 * One leader across both implementations: our elector on the Go project's Lease, held by its
 * controller through client-go. While the Go holder renews (every 2 s), ours waits; once it
 * stops, ours waits the Lease's own leaseDurationSeconds (45 s, not its own 2 s) after the
 * last change it saw, then takes over with what client-go reads back: holderIdentity,
 * leaseDurationSeconds, transitions + 1, MicroTime acquireTime = renewTime, the
 * resourceVersion read and the object's metadata kept. Then a Lease client-go released on
 * shutdown (ReleaseOnCancel: holderIdentity "", leaseDurationSeconds 1) is taken at once,
 * and so is a record without holderIdentity.
 */
static void
test_client_go_lease(void)
{
	struct elector a;
	struct kube_leader_opts o = {
	    .ns = "kube-system",
	    .name = "vm-dhcp-controllers",
	    .identity = "vm-dhcp-controller-5c9d-abcde_1",
	    .lease_duration_usec = LEASE_US,
	    .renew_deadline_usec = RENEW_US,
	    .retry_period_usec = RETRY_US,
	    .on_started = on_started,
	    .on_stopped = on_stopped,
	    .on_new_leader = on_new_leader,
	    .userdata = &a,
	};
	struct scripted_exp *put;
	char renew[64];
	uint64_t seen;
	json_t *body;
	int rv = 100;

	memset(&a, 0, sizeof(a));
	CU_ASSERT_EQUAL_FATAL(kube_leader_new(scripted_client, &o, &a.l), 0);
	scripted_expect(
	    "GET", GO_LEASE, 200, go_lease(GO_HOLDER, 45, "2026-07-23T05:00:00.000001Z", 3, rv));
	CU_ASSERT_EQUAL(kube_leader_start(a.l), 0);
	scripted_run();
	CU_ASSERT_FALSE(leads(&a));
	CU_ASSERT_STRING_EQUAL(a.seen_leader, GO_HOLDER);
	/* the Go holder renews every 2 s for a minute: longer than its 45 s, ours never acts */
	for (int i = 1; i <= 240; i++) {
		if (i % 8 == 0)
			rv++;
		snprintf(renew, sizeof(renew), "2026-07-23T05:%02d:%02d.%06dZ", rv / 60 % 60,
		    rv % 60, rv);
		scripted_expect("GET", GO_LEASE, 200, go_lease(GO_HOLDER, 45, renew, 3, rv));
		scripted_advance(RETRY_US);
		CU_ASSERT_FALSE(leads(&a));
	}
	seen = scripted_now(); /* its last renewal (i = 240) was first seen now */
	CU_ASSERT_EQUAL(a.started, 0);
	/* silent: the same record until 45 s after it was first seen */
	while (scripted_now() + RETRY_US < seen + 45 * USEC_PER_SEC) {
		scripted_expect("GET", GO_LEASE, 200, go_lease(GO_HOLDER, 45, renew, 3, rv));
		scripted_advance(RETRY_US);
		CU_ASSERT_FALSE(leads(&a));
	}
	scripted_expect("GET", GO_LEASE, 200, go_lease(GO_HOLDER, 45, renew, 3, rv));
	put = scripted_expect("PUT", GO_LEASE, 200, go_lease(o.identity, 2, "x", 4, rv + 1));
	scripted_advance(RETRY_US);
	CU_ASSERT_TRUE(leads(&a));
	CU_ASSERT_EQUAL(a.started_at, seen + 45 * USEC_PER_SEC);
	body = scripted_body(put);
	CU_ASSERT_STRING_EQUAL(sent_str(body, "holderIdentity"), o.identity);
	CU_ASSERT_EQUAL(sent_int(body, "leaseDurationSeconds"), 2);
	CU_ASSERT_EQUAL(sent_int(body, "leaseTransitions"), 4);
	CU_ASSERT_TRUE(micro_time(sent_str(body, "renewTime")));
	CU_ASSERT_STRING_EQUAL(sent_str(body, "acquireTime"), sent_str(body, "renewTime"));
	CU_ASSERT_STRING_NOT_EQUAL(sent_str(body, "acquireTime"), "2026-07-23T04:33:38.512345Z");
	snprintf(renew, sizeof(renew), "%d", rv);
	CU_ASSERT_STRING_EQUAL(sent_rv(body), renew);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_object_get(body, "metadata"), "uid")) ?: "",
	    "3f1c1a4e-8a57-4c43-9d0e-5b2f9a7d0c11");
	json_decref(body);
	/* the Go controller takes it back (ours lost a renewal race): ours stops at once */
	scripted_expect("GET", GO_LEASE, 200,
	    go_lease(GO_HOLDER, 45, "2026-07-23T06:00:00.000000Z", 5, rv + 2));
	scripted_advance(RETRY_US);
	CU_ASSERT_FALSE(leads(&a));
	CU_ASSERT_EQUAL(a.stopped, 1);

	/* client-go's release (ReleaseOnCancel): holder "", 1 s: taken at the next attempt */
	scripted_expect(
	    "GET", GO_LEASE, 200, go_lease("", 1, "2026-07-23T06:00:01.000000Z", 5, rv + 3));
	put = scripted_expect("PUT", GO_LEASE, 200, go_lease(o.identity, 2, "x", 6, rv + 4));
	scripted_advance(RETRY_US);
	CU_ASSERT_TRUE(leads(&a));
	body = scripted_body(put);
	CU_ASSERT_EQUAL(sent_int(body, "leaseTransitions"), 6);
	json_decref(body);
	a.l = kube_leader_free(a.l);
	scripted_check_done();

	/* a record without holderIdentity: free likewise */
	memset(&a, 0, sizeof(a));
	CU_ASSERT_EQUAL_FATAL(kube_leader_new(scripted_client, &o, &a.l), 0);
	scripted_expect(
	    "GET", GO_LEASE, 200, go_lease(NULL, 45, "2026-07-23T06:00:01.000000Z", 7, rv + 5));
	scripted_expect("PUT", GO_LEASE, 200, go_lease(o.identity, 2, "x", 8, rv + 6));
	CU_ASSERT_EQUAL(kube_leader_start(a.l), 0);
	scripted_run();
	CU_ASSERT_TRUE(leads(&a));
	finish(&a, NULL);
}

/*
 * on_result tells whether the API server answered each attempt: no for a refused
 * connection, a 503, a 429 and a request that times out; yes for a 404 and a Conflict (a
 * replica that holds may keep acting only while the answers say nobody else can write).
 */
static void
test_reports_reachability(void)
{
	struct elector d;
	struct scripted_exp *hung;

	elector_init(&d, "ctl-d");
	kube_client_set_timeouts(scripted_client, 1000, 1000);
	scripted_expect_error("GET", LEASE, -ECONNREFUSED, "Connection refused");
	CU_ASSERT_EQUAL(kube_leader_start(d.l), 0);
	scripted_run();
	CU_ASSERT_EQUAL(d.unanswered, 1);
	scripted_expect("GET", LEASE, 503, "{\"kind\":\"Status\",\"code\":503}");
	scripted_advance(RETRY_US);
	CU_ASSERT_EQUAL(d.unanswered, 2);
	scripted_expect("GET", LEASE, 429, "{\"kind\":\"Status\",\"code\":429}");
	scripted_advance(RETRY_US);
	CU_ASSERT_EQUAL(d.unanswered, 3);
	hung = scripted_expect_held("GET", LEASE);
	scripted_advance(RETRY_US);
	CU_ASSERT_TRUE(scripted_arrived(hung));
	scripted_advance(1000 * MS - MS);
	CU_ASSERT_EQUAL(d.unanswered, 3);
	scripted_advance(MS); /* the client's request timeout */
	CU_ASSERT_TRUE(scripted_aborted(hung));
	CU_ASSERT_EQUAL(d.unanswered, 4);
	CU_ASSERT_EQUAL(d.answered, 0);
	scripted_expect("GET", LEASE, 404, NULL);
	scripted_expect("POST", LEASES, 409, conflict);
	scripted_advance(RETRY_US);
	CU_ASSERT_EQUAL(d.answered, 2);
	CU_ASSERT_EQUAL(d.unanswered, 4);
	CU_ASSERT_FALSE(leads(&d));
	CU_ASSERT_EQUAL(d.started, 0);
	kube_client_set_timeouts(scripted_client, 30000, 10000); /* the defaults again */
	finish(&d, NULL);
}

static void
test_bad_options(void)
{
	struct kube_leader_opts o = {.ns = "x",
	    .name = "y",
	    .identity = "z",
	    .lease_duration_usec = LEASE_US,
	    .renew_deadline_usec = LEASE_US};
	struct kube_leader *l = NULL;

	CU_ASSERT_EQUAL(
	    kube_leader_new(scripted_client, &o, &l), -EINVAL); /* deadline < duration */
	o.renew_deadline_usec = RENEW_US;
	o.retry_period_usec = RENEW_US;
	CU_ASSERT_EQUAL(kube_leader_new(scripted_client, &o, &l), -EINVAL); /* retry < deadline */
	o.retry_period_usec = RETRY_US;
	o.identity = "";
	CU_ASSERT_EQUAL(kube_leader_new(scripted_client, &o, &l), -EINVAL);
	o.identity = NULL;
	CU_ASSERT_EQUAL(kube_leader_new(scripted_client, &o, &l), -EINVAL);
	o.identity = "z";
	o.lease_duration_usec = 900 * MS;
	o.renew_deadline_usec = 800 * MS;
	o.retry_period_usec = 100 * MS;
	CU_ASSERT_EQUAL(kube_leader_new(scripted_client, &o, &l), -EINVAL); /* duration >= 1 s */
	CU_ASSERT_PTR_NULL(l);
	o.lease_duration_usec = o.renew_deadline_usec = o.retry_period_usec = 0; /* defaults */
	CU_ASSERT_EQUAL(kube_leader_new(scripted_client, &o, &l), 0);
	l = kube_leader_free(l);
}

/* Advances the clock a millisecond at a time; counts the moments both electors lead. */
static int
advance_checked(struct elector *a, struct elector *b, uint64_t usec)
{
	int overlap = 0;

	for (uint64_t t = 0; t < usec; t += MS) {
		scripted_advance(MS);
		if (leads(a) && leads(b))
			overlap++;
	}
	return overlap;
}

/*
 * Two electors on one loop. a leads; b follows. a stalls (its renewal hangs). b takes the
 * Lease over only after a has stopped acting, never both at any millisecond; when a's call
 * comes back late it sees b's lease and follows. Then b crashes (never releases) and a takes
 * over after the lease duration.
 */
static void
test_two_electors_stall_and_crash(void)
{
	struct elector a, b;
	struct scripted_exp *hung;
	uint64_t a_renewed, b_seen, t;
	int overlap = 0;

	elector_init(&a, "ctl-a");
	elector_init(&b, "ctl-b");
	acquire(&a); /* at T0; a's attempts at T0 + k * 250 ms */
	/* b starts 100 ms later: its attempts at T0 + 100 ms + k * 250 ms */
	overlap += advance_checked(&a, &b, 100 * MS);
	scripted_expect("GET", LEASE, 200, lease("ctl-a", "r0", 0, 1));
	CU_ASSERT_EQUAL(kube_leader_start(b.l), 0);
	scripted_run();
	b_seen = scripted_now();
	CU_ASSERT_STRING_EQUAL(b.seen_leader, "ctl-a");
	/* a renews at 250 ms (b sees the new record at 350 ms), then hangs at 500 ms */
	scripted_expect("GET", LEASE, 200, lease("ctl-a", "r0", 0, 1));
	scripted_expect("PUT", LEASE, 200, lease("ctl-a", "r1", 0, 2));
	overlap += advance_checked(&a, &b, 150 * MS);
	a_renewed = scripted_now();
	scripted_expect("GET", LEASE, 200, lease("ctl-a", "r1", 0, 2));
	overlap += advance_checked(&a, &b, 100 * MS);
	b_seen = scripted_now();
	hung = scripted_expect_held("GET", LEASE);
	overlap += advance_checked(&a, &b, 150 * MS);
	CU_ASSERT_TRUE(scripted_arrived(hung));
	/* b's attempts at 600, 850, ... ms all see the same record until 2 s after 350 ms */
	for (t = b_seen + RETRY_US; t < b_seen + LEASE_US; t += RETRY_US)
		scripted_expect("GET", LEASE, 200, lease("ctl-a", "r1", 0, 2));
	scripted_expect("GET", LEASE, 200, lease("ctl-a", "r1", 0, 2));
	scripted_expect("PUT", LEASE, 200, lease("ctl-b", "r2", 1, 3));
	overlap += advance_checked(&a, &b, b_seen + LEASE_US - scripted_now());
	CU_ASSERT_TRUE(leads(&b));
	CU_ASSERT_FALSE(leads(&a));
	CU_ASSERT_EQUAL(a.stopped_at, a_renewed + RENEW_US);
	CU_ASSERT_EQUAL(b.started_at, b_seen + LEASE_US);
	CU_ASSERT_TRUE(b.started_at > a.stopped_at);

	/* a's GET comes back late with b's lease: a follows (its next attempt 250 ms later) */
	scripted_answer(hung, 200, lease("ctl-b", "r2", 1, 3));
	CU_ASSERT_FALSE(leads(&a));
	CU_ASSERT_STRING_EQUAL(a.seen_leader, "ctl-b");

	/* b crashes (stops without releasing): a waits out b's last record, then takes over */
	b.l = kube_leader_free(b.l);
	b_seen = scripted_now(); /* a saw b's record r2 now */
	for (t = RETRY_US; t < LEASE_US; t += RETRY_US)
		scripted_expect("GET", LEASE, 200, lease("ctl-b", "r2", 1, 3));
	scripted_expect("GET", LEASE, 200, lease("ctl-b", "r2", 1, 3));
	scripted_expect("PUT", LEASE, 200, lease("ctl-a", "r3", 2, 4));
	overlap += advance_checked(&a, &b, LEASE_US);
	CU_ASSERT_TRUE(leads(&a));
	CU_ASSERT_EQUAL(a.started_at, b_seen + LEASE_US);
	CU_ASSERT_EQUAL(a.started, 2);
	CU_ASSERT_EQUAL(overlap, 0);
	finish(&a, &b);
}

/* --- events ----------------------------------------------------------------------------------- */

#define EVENTS(ns) "/api/v1/namespaces/" ns "/events"

static const char *const event_created = "{\"kind\":\"Event\",\"apiVersion\":\"v1\"}";

static json_t *
involved_pool(const char *ns, const char *uid)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion",
	    "network.harvesterhci.io/v1alpha1", "kind", "IPPool", "metadata", "name", "pool1",
	    "namespace", ns, "uid", uid);
}

static json_int_t
body_int(struct scripted_exp *e, const char *field)
{
	json_t *body = scripted_body(e);
	json_int_t v = json_integer_value(json_object_get(body, field));

	json_decref(body);
	return v;
}

/*
 * The first of an Event is created; repeats while the create is in flight fold into one
 * count patch after it; a later repeat patches again; a distinct Event is created alongside.
 */
static void
test_event_dedup(void)
{
	struct kube_recorder *r = NULL;
	struct kube_recorder_stats st;
	struct scripted_exp *dup, *other, *patch, *patch2;
	json_t *involved = involved_pool("ev", "uid-1"), *body, *io;
	char path[128];

	CU_ASSERT_EQUAL_FATAL(
	    kube_recorder_new(scripted_client, "vm-dhcp-controller", "node-1", &r), 0);
	dup = scripted_expect_held("POST", EVENTS("ev"));
	other = scripted_expect_held("POST", EVENTS("ev"));
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
	scripted_run();
	CU_ASSERT_TRUE(scripted_arrived(other));
	body = scripted_body(dup);
	io = json_object_get(body, "involvedObject");
	CU_ASSERT_EQUAL(strncmp(kube_obj_name(body), "pool1.", 6), 0);
	snprintf(path, sizeof(path), EVENTS("ev") "/%s", kube_obj_name(body));
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(body, "reason")), "DuplicateMAC");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(body, "type")), "Warning");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(body, "message")),
	    "MAC aa:bb:cc:dd:ee:ff is used by 2 VMs");
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(body, "count")), 1);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(io, "uid")), "uid-1");
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(io, "kind")), "IPPool");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_object_get(body, "source"), "host")), "node-1");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(body, "reportingComponent")), "vm-dhcp-controller");
	json_decref(body);
	CU_ASSERT_EQUAL(body_int(other, "count"), 1);

	/* the create answered: the two repeats go in one patch (count 3) */
	patch = scripted_expect("PATCH", EVENTS("ev") "/pool1.*", 200, event_created);
	scripted_answer(dup, 201, event_created);
	CU_ASSERT_TRUE(scripted_arrived(patch));
	CU_ASSERT_STRING_EQUAL(scripted_path(patch), path);
	CU_ASSERT_EQUAL(body_int(patch, "count"), 3);
	CU_ASSERT_STRING_EQUAL(scripted_content_type(patch), "application/merge-patch+json");
	scripted_answer(other, 201, event_created);
	/* a 4th repeat now patches again */
	patch2 = scripted_expect("PATCH", EVENTS("ev") "/pool1.*", 200, event_created);
	CU_ASSERT_EQUAL(kube_record_event(r, involved, NULL, NULL, "Warning", "DuplicateMAC",
			    "MAC %s is used by %d VMs", "aa:bb:cc:dd:ee:ff", 2),
	    0);
	scripted_run();
	CU_ASSERT_EQUAL(body_int(patch2, "count"), 4);
	CU_ASSERT_STRING_EQUAL(scripted_path(patch2), path);
	kube_recorder_get_stats(r, &st);
	CU_ASSERT_EQUAL(st.created, 2);
	CU_ASSERT_EQUAL(st.patched, 2);
	CU_ASSERT_EQUAL(st.failed, 0);
	json_decref(involved);
	kube_recorder_free(r);
	scripted_check_done();
}

/*
 * An Event the API server let expire (the patch gets 404) is created anew by its next repeat;
 * a create that failed (500) is tried again by the next repeat, with the count so far.
 */
static void
test_event_expired_and_failed(void)
{
	struct kube_recorder *r = NULL;
	struct kube_recorder_stats st;
	struct scripted_exp *again, *retry;
	json_t *involved = involved_pool("exp", "uid-3");

	CU_ASSERT_EQUAL_FATAL(
	    kube_recorder_new(scripted_client, "vm-dhcp-controller", NULL, &r), 0);
	scripted_expect("POST", EVENTS("exp"), 201, event_created);
	scripted_expect("PATCH", EVENTS("exp") "/pool1.*", 404,
	    "{\"kind\":\"Status\",\"reason\":\"NotFound\",\"code\":404}");
	for (int k = 0; k < 2; k++) {
		CU_ASSERT_EQUAL(
		    kube_record_event(r, involved, NULL, NULL, "Normal", "Bound", "bound"), 0);
		scripted_run();
	}
	again = scripted_expect("POST", EVENTS("exp"), 201, event_created);
	CU_ASSERT_EQUAL(kube_record_event(r, involved, NULL, NULL, "Normal", "Bound", "bound"), 0);
	scripted_run();
	CU_ASSERT_TRUE(scripted_arrived(again));
	kube_recorder_get_stats(r, &st);
	CU_ASSERT_EQUAL(st.created, 2);
	CU_ASSERT_EQUAL(st.failed, 1);

	scripted_expect("POST", EVENTS("exp"), 500, "{\"kind\":\"Status\",\"code\":500}");
	CU_ASSERT_EQUAL(kube_record_event(r, involved, NULL, NULL, "Warning", "Pending", "p"), 0);
	scripted_run();
	retry = scripted_expect("POST", EVENTS("exp"), 201, event_created);
	CU_ASSERT_EQUAL(kube_record_event(r, involved, NULL, NULL, "Warning", "Pending", "p"), 0);
	scripted_run();
	CU_ASSERT_EQUAL(body_int(retry, "count"), 2);
	kube_recorder_get_stats(r, &st);
	CU_ASSERT_EQUAL(st.created, 3);
	CU_ASSERT_EQUAL(st.failed, 2);
	CU_ASSERT_EQUAL(st.patched, 0);
	json_decref(involved);
	kube_recorder_free(r);
	scripted_check_done();
}

/* A burst of distinct Events: two calls in flight at most, the rest wait their turn; repeats
 * of a waiting Event go into its first count (no patch); nothing is dropped or lost. */
static void
test_event_burst(void)
{
	struct kube_recorder *r = NULL;
	struct kube_recorder_stats st;
	struct scripted_exp *post[40];
	json_t *involved = json_pack("{s:s, s:s, s:{s:s, s:s, s:s}}", "apiVersion",
	    "network.harvesterhci.io/v1alpha1", "kind", "VirtualMachineNetworkConfig", "metadata",
	    "name", "vm-1", "namespace", "burst", "uid", "uid-2");

	CU_ASSERT_EQUAL_FATAL(
	    kube_recorder_new(scripted_client, "vm-dhcp-controller", "node-1", &r), 0);
	for (int k = 0; k < 40; k++)
		post[k] = scripted_expect_held("POST", EVENTS("burst"));
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
	scripted_run();
	for (int k = 0; k < 40; k++) {
		/* k answered so far: exactly k + 2 sent (or all 40) */
		CU_ASSERT_TRUE(scripted_arrived(post[k]));
		if (k + 2 < 40)
			CU_ASSERT_FALSE(scripted_arrived(post[k + 2]));
		CU_ASSERT_EQUAL(body_int(post[k], "count"), k == 39 ? 3 : 1);
		scripted_answer(post[k], 201, event_created);
	}
	kube_recorder_get_stats(r, &st);
	CU_ASSERT_EQUAL(st.created, 40);
	CU_ASSERT_EQUAL(st.patched, 0);
	CU_ASSERT_EQUAL(st.failed, 0);
	CU_ASSERT_EQUAL(st.dropped, 0);
	CU_ASSERT_EQUAL(st.peak_in_flight, 2);
	json_decref(involved);
	kube_recorder_free(r);
	scripted_check_done();
}

/* Freeing the recorder with calls in flight and Events waiting aborts the calls. */
static void
test_event_free_in_flight(void)
{
	struct kube_recorder *r = NULL;
	struct scripted_exp *p1, *p2;
	json_t *involved = involved_pool("free", "uid-4");

	CU_ASSERT_EQUAL_FATAL(
	    kube_recorder_new(scripted_client, "vm-dhcp-controller", NULL, &r), 0);
	p1 = scripted_expect_held("POST", EVENTS("free"));
	p2 = scripted_expect_held("POST", EVENTS("free"));
	for (int k = 0; k < 5; k++)
		CU_ASSERT_EQUAL(
		    kube_record_event(r, involved, NULL, NULL, "Normal", "Bound", "nic %d", k), 0);
	scripted_run();
	kube_recorder_free(r);
	scripted_run();
	CU_ASSERT_TRUE(scripted_aborted(p1));
	CU_ASSERT_TRUE(scripted_aborted(p2));
	json_decref(involved);
	scripted_check_done();
}

static const struct test_case leader_tests[] = {
    {"acquires an absent Lease", test_acquires_absent_lease},
    {"renews every retry period with the resourceVersion read", test_renews_every_retry_period},
    {"a renewal answered after the deadline is not acted on", test_late_renewal_answer_ignored},
    {"stops acting when a renewal goes unanswered, at the renew deadline",
	test_stops_when_renewal_unanswered},
    {"takes another's Lease over only after the lease duration",
	test_takes_over_only_after_lease_duration},
    {"a Conflict loses the race", test_conflict_loses},
    {"release clears the holder, then follows", test_release},
    {"release leaves a Lease held by another alone", test_release_of_lease_held_by_another},
    {"release while following sends nothing", test_release_while_following},
    {"a released Lease is taken at once; cleared behind its back",
	test_released_lease_taken_at_once},
    {"each attempt reports whether the API server answered", test_reports_reachability},
    {"bad options", test_bad_options},
    {"a Lease held and released by a client-go elector (the Go project's)", test_client_go_lease},
    {"two electors: stall, take-over, crash, never two leaders", test_two_electors_stall_and_crash},
    {NULL, NULL},
};

static const struct test_case event_tests[] = {
    {"de-duplication", test_event_dedup},
    {"an expired Event is created anew; a failed create retried", test_event_expired_and_failed},
    {"a burst waits its turn: two calls in flight", test_event_burst},
    {"freeing with calls in flight aborts them", test_event_free_in_flight},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "kube-leader",
	.init = scripted_suite_init,
	.cleanup = scripted_suite_cleanup,
	.tests = leader_tests},
    {.name = "kube-events",
	.init = scripted_suite_init,
	.cleanup = scripted_suite_cleanup,
	.tests = event_tests},
    {.name = NULL},
};
