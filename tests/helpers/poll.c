/* SPDX-License-Identifier: Apache-2.0 */
#include "tests/helpers/poll.h"

#include <event2/event.h>

#include "kube/kube.h"

struct poller {
	struct event_base *base;
	bool (*pred)(void *arg);
	void *arg;
	bool done;
};

static void
poll_tick(evutil_socket_t fd, short what, void *p)
{
	struct poller *w = p;

	if (w->pred(w->arg)) {
		w->done = true;
		event_base_loopbreak(w->base);
	}
}

bool
test_poll_until(struct event_base *base, bool (*pred)(void *arg), void *arg, long timeout_ms)
{
	struct poller w = {.base = base, .pred = pred, .arg = arg};
	struct timeval tv = {.tv_sec = 0, .tv_usec = 20000};
	struct event *ev;

	if (pred(arg))
		return true;
	ev = event_new(base, -1, EV_PERSIST, poll_tick, &w);
	if (ev == NULL)
		return false;
	event_add(ev, &tv);
	kube_run_until(base, &w.done, timeout_ms);
	event_free(ev);
	return w.done;
}
