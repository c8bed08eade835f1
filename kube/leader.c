/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Leader election on a coordination.k8s.io/v1 Lease (client-go tools/leaderelection):
 *
 * Every retry period one attempt: GET the Lease (create it if absent). When its record
 * (holder, renewTime, transitions) differs from the last one seen, note the LOCAL monotonic
 * time of that observation. Another holder's lease counts as live until observed +
 * leaseDuration (local clocks only: no trust in the writer's timestamps). Otherwise PUT
 * ourselves as holder with the resourceVersion read (optimistic concurrency: one writer
 * wins, the other gets Conflict).
 *
 * Safety: we act as leader only while the last successful renew STARTED less than the
 * renew deadline ago. Any other candidate saw that renew no earlier than it started, and
 * waits the (longer) lease duration from then, so two leaders never overlap.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "lib/clock.h"
#include "lib/rfc3339.h"

struct kube_leader {
	struct kube_client *c;
	char *ns, *name, *identity;
	uint64_t lease_duration, renew_deadline, retry_period;
	struct kube_clock clock;
	void (*on_started)(void *);
	void (*on_stopped)(void *);
	void (*on_new_leader)(void *, const char *);
	void (*on_result)(void *, bool);
	void *userdata;

	struct event *timer;	/* next attempt */
	struct event *deadline; /* fires when the renew deadline passes */
	struct kube_call *call; /* request in flight */
	bool running;
	bool in_flight;
	bool leader;
	bool releasing;
	uint64_t attempt_start;
	uint64_t renewed_at; /* start of the last successful acquire/renew */
	char observed[512];  /* holder|renewTime|transitions of the last record seen */
	uint64_t observed_at;
	char last_holder[256];
	void (*release_done)(void *);
	void *release_userdata;
};

static void schedule(struct kube_leader *l, uint64_t delay);

static uint64_t
now(const struct kube_leader *l)
{
	return kube_clock_now(&l->clock);
}

int
kube_leader_new(
    struct kube_client *c, const struct kube_leader_opts *opts, struct kube_leader **ret)
{
	struct kube_leader *l;

	if (!opts || !opts->ns || !opts->name || !opts->identity || !*opts->identity)
		return -EINVAL;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->c = c;
	l->lease_duration =
	    opts->lease_duration_usec ? opts->lease_duration_usec : 15 * USEC_PER_SEC;
	l->renew_deadline =
	    opts->renew_deadline_usec ? opts->renew_deadline_usec : 10 * USEC_PER_SEC;
	l->retry_period = opts->retry_period_usec ? opts->retry_period_usec : 2 * USEC_PER_SEC;
	if (l->renew_deadline >= l->lease_duration || l->retry_period >= l->renew_deadline ||
	    l->lease_duration < USEC_PER_SEC) {
		free(l);
		return -EINVAL;
	}
	if (opts->clock)
		l->clock = *opts->clock;
	l->on_started = opts->on_started;
	l->on_stopped = opts->on_stopped;
	l->on_new_leader = opts->on_new_leader;
	l->on_result = opts->on_result;
	l->userdata = opts->userdata;
	l->ns = strdup(opts->ns);
	l->name = strdup(opts->name);
	l->identity = strdup(opts->identity);
	if (!l->ns || !l->name || !l->identity)
		goto fail;
	*ret = l;
	return 0;
fail:
	kube_leader_free(l);
	return -ENOMEM;
}

struct kube_leader *
kube_leader_free(struct kube_leader *l)
{
	if (!l)
		return NULL;
	kube_call_cancel(l->call);
	if (l->timer)
		event_free(l->timer);
	if (l->deadline)
		event_free(l->deadline);
	free(l->ns);
	free(l->name);
	free(l->identity);
	free(l);
	return NULL;
}

bool
kube_leader_is_leader(const struct kube_leader *l)
{
	return l->leader && now(l) - l->renewed_at < l->renew_deadline;
}

/* Whether res is the API server's own answer: not a transport failure, a 5xx or a 429. */
static bool
answered(const struct kube_result *res)
{
	return res->http_status != 0 && res->http_status < 500 && res->http_status != 429;
}

static void
report(struct kube_leader *l, bool ok)
{
	if (l->on_result)
		l->on_result(l->userdata, ok);
}

static void
lose(struct kube_leader *l)
{
	if (!l->leader)
		return;
	l->leader = false;
	evtimer_del(l->deadline);
	if (l->on_stopped)
		l->on_stopped(l->userdata);
}

static void
deadline_cb(evutil_socket_t fd, short what, void *arg)
{
	struct kube_leader *l = arg;

	if (l->leader && now(l) - l->renewed_at >= l->renew_deadline) {
		/* no renewal answered in time: as good as no answer */
		report(l, false);
		lose(l);
	} else if (l->leader) {
		uint64_t d = l->renewed_at + l->renew_deadline - now(l);
		struct timeval tv = {.tv_sec = (time_t)(d / USEC_PER_SEC),
		    .tv_usec = (suseconds_t)(d % USEC_PER_SEC)};

		evtimer_add(l->deadline, &tv);
	}
}

static void
became_leader(struct kube_leader *l)
{
	struct timeval tv = {.tv_sec = (time_t)(l->renew_deadline / USEC_PER_SEC),
	    .tv_usec = (suseconds_t)(l->renew_deadline % USEC_PER_SEC)};

	l->renewed_at = l->attempt_start;
	evtimer_add(l->deadline, &tv); /* re-armed on each renew */
	if (!l->leader) {
		l->leader = true;
		if (l->on_started)
			l->on_started(l->userdata);
	}
}

static void
note_holder(struct kube_leader *l, const char *holder)
{
	if (strcmp(holder, l->last_holder) == 0)
		return;
	snprintf(l->last_holder, sizeof(l->last_holder), "%s", holder);
	if (l->on_new_leader && *holder)
		l->on_new_leader(l->userdata, holder);
}

static void
attempt_failed(struct kube_leader *l)
{
	l->in_flight = false;
	if (l->leader && now(l) - l->renewed_at >= l->renew_deadline)
		lose(l);
	schedule(l, l->retry_period);
}

static json_t *
lease_spec(struct kube_leader *l, const json_t *old_spec, bool releasing)
{
	char ts[RFC3339_MAX];
	const char *old_holder = json_string_value(json_object_get(old_spec, "holderIdentity"));
	json_int_t transitions = json_integer_value(json_object_get(old_spec, "leaseTransitions"));
	const char *acquire = json_string_value(json_object_get(old_spec, "acquireTime"));
	bool changed = !old_holder || strcmp(old_holder, l->identity) != 0;
	json_t *spec;

	/*
	 * Microsecond precision: two renewals within one second must still differ, or the
	 * update is a no-op the server does not version and other electors see no renewal.
	 */
	rfc3339_format(clock_realtime_usec(), 6, ts);
	if (releasing)
		return json_pack("{s:s, s:i, s:s, s:s, s:I}", "holderIdentity", "",
		    "leaseDurationSeconds", 1, "acquireTime", acquire ? acquire : ts, "renewTime",
		    ts, "leaseTransitions", transitions);
	if (changed && old_spec)
		transitions++;
	spec = json_pack("{s:s, s:i, s:s, s:s, s:I}", "holderIdentity", l->identity,
	    "leaseDurationSeconds", (int)((l->lease_duration + USEC_PER_SEC - 1) / USEC_PER_SEC),
	    "acquireTime", changed || !acquire ? ts : acquire, "renewTime", ts, "leaseTransitions",
	    transitions);
	return spec;
}

static void
write_done(void *userdata, const struct kube_result *res)
{
	struct kube_leader *l = userdata;

	l->call = NULL;
	if (l->releasing) {
		/* acquired or renewed while releasing: the release that follows clears it */
		l->in_flight = false;
		return;
	}
	if (res->error < 0) {
		report(l, answered(res));
		attempt_failed(l);
		return;
	}
	report(l, true);
	l->in_flight = false;
	note_holder(l, l->identity);
	if (now(l) - l->attempt_start >= l->renew_deadline) {
		/*
		 * Written, but answered after the renew deadline: a leader has stopped acting
		 * already (deadline_cb), and a term counted from an attempt that old would end
		 * as it starts. Acquire afresh with the next attempt (client-go drops such an
		 * answer likewise: its renew runs under a renewDeadline timeout).
		 */
		lose(l);
		schedule(l, l->retry_period);
		return;
	}
	became_leader(l);
	schedule(l, l->retry_period);
}

static void
release_written(void *userdata, const struct kube_result *res)
{
	struct kube_leader *l = userdata;

	l->call = NULL;
	l->in_flight = false;
	l->running = false;
	if (l->release_done)
		l->release_done(l->release_userdata);
}

/* No Lease yet: create it with us as the holder. */
static void
create_lease(struct kube_leader *l)
{
	json_t *spec = lease_spec(l, NULL, false), *lease;
	int rc = -ENOMEM;

	lease = json_pack(
	    "{s:{s:s, s:s}, s:o}", "metadata", "name", l->name, "namespace", l->ns, "spec", spec);
	if (lease)
		rc = kube_create(l->c, &kube_res_leases, l->ns, lease, write_done, l, &l->call);
	json_decref(lease);
	if (rc < 0)
		attempt_failed(l);
}

/* Notes the Lease's holder, and when its record (holder, renewTime, transitions) last changed;
 * returns the holder ("" when none). */
static const char *
observe_lease(struct kube_leader *l, const json_t *spec)
{
	const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
	char record[512];

	if (!holder)
		holder = "";
	snprintf(record, sizeof(record), "%s|%s|%lld", holder,
	    json_string_value(json_object_get(spec, "renewTime")) ?: "",
	    (long long)json_integer_value(json_object_get(spec, "leaseTransitions")));
	if (strcmp(record, l->observed) != 0) {
		snprintf(l->observed, sizeof(l->observed), "%s", record);
		l->observed_at = now(l);
	}
	note_holder(l, holder);
	return holder;
}

/* Whether we must not write the Lease now: someone else holds a live one, ours was cleared
 * behind our back, or we led and it is too late to renew safely. */
static bool
must_stand_down(struct kube_leader *l, const json_t *spec, const char *holder)
{
	if (*holder && strcmp(holder, l->identity) != 0) {
		json_int_t secs = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
		uint64_t dur = secs > 0 ? (uint64_t)secs * USEC_PER_SEC : l->lease_duration;

		/* Someone else holds a live lease; if we thought we led, we do not. */
		if (l->observed_at + dur > now(l))
			return true;
	} else if (!*holder && l->leader) {
		/* Our lease was cleared behind our back: stop, then compete again. */
		return true;
	}
	/* too late to renew safely; acquire afresh next time */
	return l->leader && now(l) - l->renewed_at >= l->renew_deadline;
}

static void
got_lease(void *userdata, const struct kube_result *res)
{
	struct kube_leader *l = userdata;

	l->call = NULL;
	json_t *obj = res->object, *spec, *copy;
	const char *holder;
	int rc;

	if (!l->running) {
		l->in_flight = false;
		return;
	}
	if (res->error != -ENOENT && res->error < 0) {
		report(l, answered(res));
		attempt_failed(l);
		return;
	}
	report(l, true);
	if (res->error == -ENOENT) {
		create_lease(l);
		return;
	}
	spec = json_object_get(obj, "spec");
	holder = observe_lease(l, spec);
	if (must_stand_down(l, spec, holder)) {
		l->in_flight = false;
		lose(l);
		schedule(l, l->retry_period);
		return;
	}
	copy = json_deep_copy(obj);
	spec = lease_spec(l, spec, false);
	if (!copy || !spec || json_object_set_new(copy, "spec", spec) < 0) {
		json_decref(copy);
		attempt_failed(l);
		return;
	}
	rc = kube_update(l->c, &kube_res_leases, copy, write_done, l, &l->call);
	json_decref(copy);
	if (rc < 0)
		attempt_failed(l);
}

static void
attempt(evutil_socket_t fd, short what, void *arg)
{
	struct kube_leader *l = arg;

	if (!l->running || l->in_flight)
		return;
	l->in_flight = true;
	l->attempt_start = now(l);
	if (kube_get(l->c, &kube_res_leases, l->ns, l->name, got_lease, l, &l->call) < 0) {
		report(l, false);
		attempt_failed(l);
	}
}

static void
schedule(struct kube_leader *l, uint64_t delay)
{
	struct timeval tv = {.tv_sec = (time_t)(delay / USEC_PER_SEC),
	    .tv_usec = (suseconds_t)(delay % USEC_PER_SEC)};

	if (l->running && !l->releasing)
		evtimer_add(l->timer, &tv);
}

int
kube_leader_start(struct kube_leader *l)
{
	struct event_base *base = kube_client_base(l->c);

	if (l->running)
		return -EALREADY;
	if (!l->timer)
		l->timer = evtimer_new(base, attempt, l);
	else
		event_assign(l->timer, base, -1, 0, attempt, l); /* release re-purposed it */
	if (!l->deadline)
		l->deadline = evtimer_new(base, deadline_cb, l);
	if (!l->timer || !l->deadline)
		return -ENOMEM;
	l->running = true;
	l->releasing = false;
	schedule(l, 0);
	return 0;
}

static void
release_got(void *userdata, const struct kube_result *res)
{
	struct kube_leader *l = userdata;

	l->call = NULL;
	const char *holder;
	json_t *copy, *spec;
	int rc;

	if (res->error < 0) {
		release_written(l, res);
		return;
	}
	holder = json_string_value(
	    json_object_get(json_object_get(res->object, "spec"), "holderIdentity"));
	if (!holder || strcmp(holder, l->identity) != 0) {
		release_written(l, res);
		return;
	}
	copy = json_deep_copy(res->object);
	spec = lease_spec(l, json_object_get(res->object, "spec"), true);
	if (!copy || !spec || json_object_set_new(copy, "spec", spec) < 0) {
		json_decref(copy);
		release_written(l, res);
		return;
	}
	rc = kube_update(l->c, &kube_res_leases, copy, release_written, l, &l->call);
	json_decref(copy);
	if (rc < 0)
		release_written(l, res);
}

static void
release_begin(evutil_socket_t fd, short what, void *arg)
{
	struct kube_leader *l = arg;
	struct kube_result res = {.error = -EIO, .reason = "", .message = ""};

	if (l->in_flight) {
		/* wait for the attempt in flight; poll again shortly */
		struct timeval tv = {0, 10000};

		event_assign(l->timer, kube_client_base(l->c), -1, 0, release_begin, l);
		evtimer_add(l->timer, &tv);
		return;
	}
	l->in_flight = true;
	if (kube_get(l->c, &kube_res_leases, l->ns, l->name, release_got, l, &l->call) < 0)
		release_written(l, &res);
}

static void
release_report(evutil_socket_t fd, short what, void *arg)
{
	struct kube_leader *l = arg;

	if (l->release_done)
		l->release_done(l->release_userdata);
}

int
kube_leader_release(struct kube_leader *l, void (*done)(void *), void *userdata)
{
	bool was_leader = l->leader;

	if (!l->running)
		return -EALREADY;
	l->releasing = true;
	l->release_done = done;
	l->release_userdata = userdata;
	/* Stop acting first: from here on is_leader() is false. */
	lose(l);
	evtimer_del(l->timer);
	if (!was_leader) {
		struct timeval tv = {0, 0};

		l->running = false;
		if (done) {
			/* report from the loop, never from inside this call */
			event_assign(l->timer, kube_client_base(l->c), -1, 0, release_report, l);
			evtimer_add(l->timer, &tv);
		}
		return 0;
	}
	event_assign(l->timer, kube_client_base(l->c), -1, 0, release_begin, l);
	{
		struct timeval tv = {0, 0};

		evtimer_add(l->timer, &tv);
	}
	return 0;
}
