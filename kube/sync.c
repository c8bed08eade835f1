/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Waiting in place, for start-up code, one-shot commands and tests: the loop run until a flag
 * is set or a timeout passes, and one call awaited through struct kube_sync.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"

static void
run_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	bool *expired = arg;

	*expired = true;
}

int
kube_run_until(struct event_base *base, const bool *flag, long timeout_ms)
{
	struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
	bool expired = false;
	struct event *t;

	t = evtimer_new(base, run_timeout_cb, &expired);
	if (!t)
		return -ENOMEM;
	evtimer_add(t, &tv);
	while (!*flag && !expired)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(t);
	return *flag ? 0 : -ETIMEDOUT;
}

void
kube_sync_done(void *userdata, const struct kube_result *res)
{
	struct kube_sync *s = userdata;

	s->error = res->error;
	s->object = res->object != NULL ? json_incref(res->object) : NULL;
	snprintf(s->message, sizeof(s->message), "%s%s%s", kube_errno_name(res->error),
	    res->message != NULL && res->message[0] != '\0' ? ": " : "",
	    res->message != NULL ? res->message : "");
	s->done = true;
}

void
kube_sync_reset(struct kube_sync *s)
{
	json_decref(s->object);
	memset(s, 0, sizeof(*s));
}

json_t *
kube_sync_take(struct kube_sync *s)
{
	json_t *o = s->object;

	s->object = NULL;
	return o;
}

int
kube_sync_wait(struct event_base *base, struct kube_sync *s, long guard_ms, int rc)
{
	if (rc < 0) {
		s->error = rc;
		snprintf(s->message, sizeof(s->message), "%s", strerror(-rc));
		return rc;
	}
	if (kube_run_until(base, &s->done, guard_ms) < 0) {
		s->error = -ETIMEDOUT;
		snprintf(s->message, sizeof(s->message), "no answer in %ld s", guard_ms / 1000);
	}
	return s->error;
}
