/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Kubernetes Event recorder with client-go's correlator idea, simplified: an Event is
 * identified by (involved uid, type, reason, message). The first one is created; repeats
 * patch count and lastTimestamp of the same Event instead of creating new ones. A repeat
 * that arrives while the create is in flight is folded into one patch after it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/kube-internal.h"
#include "lib/clock.h"
#include "lib/util.h"

#define CACHE_SIZE 1024

struct ev_entry {
	char *id; /* uid|type|reason|message */
	char *ns, *name;
	unsigned count;      /* occurrences seen */
	unsigned sent_count; /* count the API has (or is being sent) */
	bool in_flight;
	bool created;
	uint64_t used; /* for eviction */
};

struct ev_req {
	struct ev_req *next, *prev;
	struct kube_recorder *r;
	struct ev_entry *e; /* NULL once evicted */
	struct kube_http_call *call;
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
	struct kube_recorder_stats stats;
};

int
kube_recorder_new(struct kube_client *c, const char *component, const char *host,
    struct kube_recorder **ret)
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
entry_clear(struct kube_recorder *r, struct ev_entry *e)
{
	for (struct ev_req *q = r->reqs; q; q = q->next)
		if (q->e == e)
			q->e = NULL;
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
		kube_http_cancel(r->reqs->call);
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

static int send_patch(struct kube_recorder *r, struct ev_entry *e);

static void
req_done(void *userdata, const struct kube_result *res)
{
	struct ev_req *q = userdata;
	struct kube_recorder *r = q->r;
	struct ev_entry *e = q->e;

	q->call = NULL;
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
		send_patch(r, e);
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
	char ts[32];
	struct ev_req *q;
	json_t *patch;
	int rc;

	kube_time_format(clock_realtime_sec(), ts);
	patch = json_pack("{s:i, s:s}", "count", (int)e->count, "lastTimestamp", ts);
	q = req_new(r, e, false);
	if (!patch || !q) {
		json_decref(patch);
		if (q)
			req_unlink(q);
		return -ENOMEM;
	}
	kube_client_capture(r->c, &q->call);
	rc = kube_patch(r->c, &kube_res_events, e->ns, e->name, KUBE_PATCH_MERGE, patch, NULL,
	    req_done, q);
	json_decref(patch);
	if (rc < 0) {
		req_unlink(q);
		return rc;
	}
	e->in_flight = true;
	e->sent_count = e->count;
	return 0;
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
	char message[1024], ts[32];
	struct ev_entry *e;
	struct ev_req *q;
	json_t *ev;
	bool found;
	char *id;
	va_list ap;
	int rc;

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
	if (asprintf(&id, "%s|%s/%s|%s|%s|%s", uid ? uid : "", ns, name, type, reason, message) <
	    0)
		return -ENOMEM;

	e = cache_slot(r, id, &found);
	e->used = ++r->tick;
	if (found) {
		free(id);
		e->count++;
		if (e->created && !e->in_flight)
			return send_patch(r, e);
		if (e->in_flight)
			return 0; /* folded into a patch after the call in flight */
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

	kube_time_format(clock_realtime_sec(), ts);
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
	q = req_new(r, e, true);
	if (!q) {
		json_decref(ev);
		return -ENOMEM;
	}
	kube_client_capture(r->c, &q->call);
	rc = kube_create(r->c, &kube_res_events, ns, ev, req_done, q);
	json_decref(ev);
	if (rc < 0) {
		req_unlink(q);
		return rc;
	}
	e->in_flight = true;
	e->sent_count = e->count;
	return 0;
}
