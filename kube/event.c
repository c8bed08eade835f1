/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes Event recorder with client-go's correlator idea, simplified: an Event is
 * identified by (involved uid, type, reason, message). The first one is created; repeats
 * patch count and lastTimestamp of the same Event instead of creating new ones. A repeat
 * that arrives while the create is in flight is folded into one patch after it.
 *
 * Events are the least urgent writes a controller makes: at most EVENTS_IN_FLIGHT calls are
 * in flight, the other Events wait in a FIFO of cache entries (so a burst of Events, one per
 * NIC bound, never crowds out the status writes), and an entry evicted from the cache while it
 * waits is dropped (counted), as client-go drops Events when its queue is full.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube-internal.h"
#include "lib/clock.h"
#include "lib/rfc3339.h"
#include "lib/util.h"

#define CACHE_SIZE 1024
#define EVENTS_IN_FLIGHT 2

struct ev_entry {
	char *id; /* uid|type|reason|message */
	char *ns, *name;
	unsigned count;	     /* occurrences seen */
	unsigned sent_count; /* count the API has (or is being sent) */
	bool in_flight;
	bool created;
	uint64_t used; /* for eviction */
	json_t *ev;    /* the Event to create, while it waits for its turn */
	bool queued;   /* in the recorder's FIFO */
	struct ev_entry *qnext;
};

struct ev_req {
	struct ev_req *next, *prev;
	struct kube_recorder *r;
	struct ev_entry *e; /* NULL once evicted */
	struct kube_call *call;
	bool create;
	unsigned count;
};

struct kube_recorder {
	struct kube_client *c;
	const char *component;
	char *host;
	struct ev_entry cache[CACHE_SIZE];
	uint64_t tick;
	uint64_t seq;
	struct ev_req *reqs;
	unsigned in_flight;
	struct ev_entry *qhead, *qtail; /* entries waiting for a call */
	struct kube_recorder_stats stats;
};

int
kube_recorder_new(
    struct kube_client *c, const char *component, const char *host, struct kube_recorder **ret)
{
	struct kube_recorder *r;

	if (!component)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->c = c;
	r->component = component;
	if (host && !(r->host = strdup(host))) {
		free(r);
		return -ENOMEM;
	}
	r->seq = clock_now_usec();
	*ret = r;
	return 0;
}

static void
unqueue(struct kube_recorder *r, struct ev_entry *e)
{
	struct ev_entry **pp = &r->qhead, *prev = NULL;

	if (!e->queued)
		return;
	while (*pp && *pp != e) {
		prev = *pp;
		pp = &(*pp)->qnext;
	}
	if (*pp)
		*pp = e->qnext;
	if (r->qtail == e)
		r->qtail = prev;
	e->qnext = NULL;
	e->queued = false;
}

static void
entry_clear(struct kube_recorder *r, struct ev_entry *e)
{
	for (struct ev_req *q = r->reqs; q; q = q->next)
		if (q->e == e)
			q->e = NULL;
	if (e->queued)
		r->stats.dropped++;
	unqueue(r, e);
	json_decref(e->ev);
	free(e->id);
	free(e->ns);
	free(e->name);
	memset(e, 0, sizeof(*e));
}

static void
req_unlink(struct ev_req *q)
{
	struct kube_recorder *r = q->r;

	if (q->prev)
		q->prev->next = q->next;
	else
		r->reqs = q->next;
	if (q->next)
		q->next->prev = q->prev;
	free(q);
}

struct kube_recorder *
kube_recorder_free(struct kube_recorder *r)
{
	if (!r)
		return NULL;
	while (r->reqs) {
		kube_call_cancel(r->reqs->call);
		req_unlink(r->reqs);
	}
	for (size_t i = 0; i < CACHE_SIZE; i++)
		entry_clear(r, &r->cache[i]);
	free(r->host);
	free(r);
	return NULL;
}

void
kube_recorder_get_stats(const struct kube_recorder *r, struct kube_recorder_stats *ret)
{
	*ret = r->stats;
}

static int submit(struct kube_recorder *r, struct ev_entry *e);
static void pump(struct kube_recorder *r);

static void
req_done(void *userdata, const struct kube_result *res)
{
	struct ev_req *q = userdata;
	struct kube_recorder *r = q->r;
	struct ev_entry *e = q->e;

	q->call = NULL;
	r->in_flight--;
	if (res->error < 0)
		r->stats.failed++;
	else if (q->create)
		r->stats.created++;
	else
		r->stats.patched++;
	if (e) {
		e->in_flight = false;
		if (res->error == 0) {
			e->created = true;
		} else if (!q->create && res->error == -ENOENT) {
			e->created = false; /* the Event expired: the next repeat creates anew */
			e->sent_count = 0;
		} else if (q->create) {
			e->sent_count = 0;
		}
	}
	req_unlink(q);
	if (e && e->created && e->count > e->sent_count)
		submit(r, e);
	pump(r);
}

static struct ev_req *
req_new(struct kube_recorder *r, struct ev_entry *e, bool create)
{
	struct ev_req *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->r = r;
	q->e = e;
	q->create = create;
	q->next = r->reqs;
	if (r->reqs)
		r->reqs->prev = q;
	r->reqs = q;
	return q;
}

static int
send_patch(struct kube_recorder *r, struct ev_entry *e)
{
	char ts[RFC3339_MAX];
	struct ev_req *q;
	json_t *patch;
	int rc;

	rfc3339_format(clock_realtime_sec() * 1000000, 0, ts);
	patch = json_pack("{s:i, s:s}", "count", (int)e->count, "lastTimestamp", ts);
	q = req_new(r, e, false);
	if (!patch || !q) {
		json_decref(patch);
		if (q)
			req_unlink(q);
		return -ENOMEM;
	}
	rc = kube_patch(r->c, &kube_res_events, e->ns, e->name, KUBE_PATCH_MERGE, patch, NULL,
	    req_done, q, &q->call);
	json_decref(patch);
	if (rc < 0) {
		req_unlink(q);
		return rc;
	}
	if (++r->in_flight > r->stats.peak_in_flight)
		r->stats.peak_in_flight = r->in_flight;
	e->in_flight = true;
	e->sent_count = e->count;
	return 0;
}

static int
send_create(struct kube_recorder *r, struct ev_entry *e)
{
	struct ev_req *q = req_new(r, e, true);
	int rc;

	if (!q)
		return -ENOMEM;
	/* repeats while it waited are in this first count */
	json_object_set_new(e->ev, "count", json_integer(e->count));
	rc = kube_create(r->c, &kube_res_events, e->ns, e->ev, req_done, q, &q->call);
	if (rc < 0) {
		req_unlink(q);
		return rc;
	}
	json_decref(e->ev);
	e->ev = NULL;
	if (++r->in_flight > r->stats.peak_in_flight)
		r->stats.peak_in_flight = r->in_flight;
	e->in_flight = true;
	e->sent_count = e->count;
	return 0;
}

/* Sends e's create (or its count patch) now, or queues it behind the calls in flight. */
static int
submit(struct kube_recorder *r, struct ev_entry *e)
{
	if (e->in_flight || e->queued)
		return 0; /* folded into the call in flight, or into the one it waits for */
	if (r->in_flight >= EVENTS_IN_FLIGHT) {
		e->queued = true;
		if (r->qtail)
			r->qtail->qnext = e;
		else
			r->qhead = e;
		r->qtail = e;
		return 0;
	}
	return e->created ? send_patch(r, e) : send_create(r, e);
}

static void
pump(struct kube_recorder *r)
{
	while (r->qhead && r->in_flight < EVENTS_IN_FLIGHT) {
		struct ev_entry *e = r->qhead;

		unqueue(r, e);
		if (submit(r, e) < 0) {
			r->stats.failed++;
			json_decref(e->ev);
			e->ev = NULL;
		}
	}
}

static struct ev_entry *
cache_slot(struct kube_recorder *r, const char *id, bool *found)
{
	struct ev_entry *victim = &r->cache[0];

	for (size_t i = 0; i < CACHE_SIZE; i++) {
		struct ev_entry *e = &r->cache[i];

		if (e->id && strcmp(e->id, id) == 0) {
			*found = true;
			return e;
		}
		if (!e->id || (victim->id && e->used < victim->used))
			victim = e;
	}
	*found = false;
	if (victim->id)
		entry_clear(r, victim);
	return victim;
}

int
kube_record_event(struct kube_recorder *r, const json_t *involved, const char *api_version,
    const char *kind, const char *type, const char *reason, const char *fmt, ...)
{
	const char *name = kube_obj_name(involved), *ns = kube_obj_namespace(involved);
	const char *uid = kube_obj_uid(involved);
	char message[1024], ts[RFC3339_MAX];
	struct ev_entry *e;
	json_t *ev;
	bool found;
	char *id;
	va_list ap;

	if (!api_version)
		api_version = json_string_value(json_object_get(involved, "apiVersion"));
	if (!kind)
		kind = json_string_value(json_object_get(involved, "kind"));
	if (!name || !api_version || !kind || !type || !reason || !fmt)
		return -EINVAL;
	if (!ns || !*ns)
		ns = "default"; /* events about cluster-scoped objects */
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	if (asprintf(&id, "%s|%s/%s|%s|%s|%s", uid ? uid : "", ns, name, type, reason, message) < 0)
		return -ENOMEM;

	e = cache_slot(r, id, &found);
	e->used = ++r->tick;
	if (found) {
		free(id);
		e->count++;
		if (e->created || e->in_flight || e->queued)
			return submit(r, e); /* a patch, now or after the call in flight */
		/* neither created nor in flight: the previous create failed; try again */
	} else {
		e->id = id;
		e->count = 1;
		e->ns = strdup(ns);
		if (asprintf(&e->name, "%s.%llx", name, (unsigned long long)++r->seq) < 0)
			e->name = NULL;
		if (!e->ns || !e->name) {
			entry_clear(r, e);
			return -ENOMEM;
		}
	}

	rfc3339_format(clock_realtime_sec() * 1000000, 0, ts);
	ev = json_pack("{s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s}, s:s, s:s, s:s, s:{s:s}, s:s, s:s, "
		       "s:i, s:s}",
	    "metadata", "name", e->name, "namespace", ns, "involvedObject", "apiVersion",
	    api_version, "kind", kind, "name", name, "namespace", ns, "reason", reason, "message",
	    message, "type", type, "source", "component", r->component, "firstTimestamp", ts,
	    "lastTimestamp", ts, "count", (int)e->count, "reportingComponent", r->component);
	if (!ev)
		return -ENOMEM;
	if (uid)
		json_object_set_new(json_object_get(ev, "involvedObject"), "uid", json_string(uid));
	if (r->host) {
		json_object_set_new(json_object_get(ev, "source"), "host", json_string(r->host));
		json_object_set_new(ev, "reportingInstance", json_string(r->host));
	}
	json_decref(e->ev);
	e->ev = ev;
	return submit(r, e);
}
