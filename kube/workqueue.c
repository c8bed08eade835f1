/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Rate-limited work queue (client-go util/workqueue): one record per key carries its state,
 *
 *   dirty       needs processing (at most once in the FIFO)
 *   processing  handed out by _get, not yet _done; a re-add only marks it dirty, so a key is
 *               never processed twice at once and comes back after _done
 *   delayed     waiting in the min-heap until its time (the earliest time wins)
 *   failures    per-item exponential backoff, cleared by _forget
 *
 * and a token bucket bounds the overall retry rate. Time comes from an injectable clock;
 * with an event_base an evtimer calls _tick at the next due time, without one the caller
 * ticks (tests on a fake clock). Metrics as client-go's: depth, adds, retries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "kube/kube-internal.h"
#include "lib/clock.h"
#include "lib/hmap.h"
#include "lib/metrics.h"
#include "lib/util.h"

struct item {
	struct hmap_node node; /* in kube_workqueue.items, by hash64(key) */
	uint64_t due;
	ssize_t heap_idx; /* -1 when not delayed */
	unsigned failures;
	bool dirty, processing;
	char key[];
};

struct kube_workqueue {
	struct kube_clock clock;
	struct event_base *base;
	struct event *timer, *notify_ev;
	void (*notify)(void *);
	void *notify_userdata;
	uint64_t base_delay, max_delay;
	double qps, burst, tokens;
	uint64_t last_refill;
	bool shutdown;
	struct hmap items; /* key -> item */
	/* ready FIFO (ring) */
	struct item **fifo;
	size_t head, len, cap;
	/* delayed min-heap */
	struct item **heap;
	size_t hlen, hcap;
	uint64_t timer_due;
	struct metric *m_depth, *m_adds, *m_retries; /* NULL without metrics */
};

static uint64_t
now(const struct kube_workqueue *q)
{
	return kube_clock_now(&q->clock);
}

static void
update_depth(struct kube_workqueue *q)
{
	metric_set(q->m_depth, 0, (double)q->len);
}

/* --- key map ------------------------------------------------------------------------------ */

static uint64_t
key_hash(const char *key)
{
	return hash64(key, strlen(key), 0);
}

static struct item *
item_find_hash(const struct kube_workqueue *q, const char *key, uint64_t h)
{
	struct item *it;

	HMAP_FOR_EACH_WITH_HASH(it, node, h, &q->items)
	if (strcmp(it->key, key) == 0)
		return it;
	return NULL;
}

static struct item *
item_find(const struct kube_workqueue *q, const char *key)
{
	return item_find_hash(q, key, key_hash(key));
}

static struct item *
item_get(struct kube_workqueue *q, const char *key)
{
	uint64_t h = key_hash(key);
	struct item *it = item_find_hash(q, key, h);

	if (it)
		return it;
	it = calloc(1, sizeof(*it) + strlen(key) + 1);
	if (!it)
		return NULL;
	strcpy(it->key, key);
	it->heap_idx = -1;
	if (hmap_insert(&q->items, &it->node, h) < 0) {
		free(it);
		return NULL;
	}
	return it;
}

/* Frees the record once nothing refers to it. */
static void
item_maybe_free(struct kube_workqueue *q, struct item *it)
{
	if (it->dirty || it->processing || it->heap_idx >= 0 || it->failures)
		return;
	hmap_remove(&q->items, &it->node);
	free(it);
}

/* --- heap -------------------------------------------------------------------------------- */

static void
heap_swap(struct kube_workqueue *q, size_t a, size_t b)
{
	struct item *t = q->heap[a];

	q->heap[a] = q->heap[b];
	q->heap[b] = t;
	q->heap[a]->heap_idx = (ssize_t)a;
	q->heap[b]->heap_idx = (ssize_t)b;
}

static void
heap_up(struct kube_workqueue *q, size_t i)
{
	while (i > 0 && q->heap[(i - 1) / 2]->due > q->heap[i]->due) {
		heap_swap(q, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void
heap_down(struct kube_workqueue *q, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < q->hlen && q->heap[l]->due < q->heap[m]->due)
			m = l;
		if (r < q->hlen && q->heap[r]->due < q->heap[m]->due)
			m = r;
		if (m == i)
			return;
		heap_swap(q, i, m);
		i = m;
	}
}

static struct item *
heap_pop(struct kube_workqueue *q)
{
	struct item *top = q->heap[0];

	q->hlen--;
	if (q->hlen) {
		q->heap[0] = q->heap[q->hlen];
		q->heap[0]->heap_idx = 0;
		heap_down(q, 0);
	}
	top->heap_idx = -1;
	return top;
}

/* --- timers -------------------------------------------------------------------------------- */

static void
arm_timer(struct kube_workqueue *q)
{
	uint64_t t, d;
	struct timeval tv;

	if (!q->timer)
		return;
	if (!q->hlen) {
		evtimer_del(q->timer);
		q->timer_due = 0;
		return;
	}
	t = q->heap[0]->due;
	if (q->timer_due == t && evtimer_pending(q->timer, NULL))
		return;
	d = t > now(q) ? t - now(q) : 0;
	tv.tv_sec = (time_t)(d / USEC_PER_SEC);
	tv.tv_usec = (suseconds_t)(d % USEC_PER_SEC);
	q->timer_due = t;
	evtimer_add(q->timer, &tv);
}

static void
timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct kube_workqueue *q = arg;

	q->timer_due = 0;
	kube_workqueue_tick(q);
}

static void
notify_cb(evutil_socket_t fd, short what, void *arg)
{
	struct kube_workqueue *q = arg;

	if (q->notify && q->len)
		q->notify(q->notify_userdata);
}

/* --- public -------------------------------------------------------------------------------- */

int
kube_workqueue_new(const struct kube_workqueue_opts *opts, struct kube_workqueue **ret)
{
	struct kube_workqueue *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	if (opts && opts->clock)
		q->clock = *opts->clock;
	q->base = opts ? opts->base : NULL;
	q->base_delay = opts && opts->base_delay_usec ? opts->base_delay_usec : 5 * USEC_PER_MSEC;
	q->max_delay = opts && opts->max_delay_usec ? opts->max_delay_usec : 1000 * USEC_PER_SEC;
	q->qps = opts && opts->qps > 0 ? opts->qps : 10.0;
	q->burst = opts && opts->burst ? opts->burst : 100;
	q->tokens = q->burst;
	q->last_refill = now(q);
	if (hmap_reserve(&q->items, 64) < 0)
		goto fail;
	if (q->base) {
		q->timer = evtimer_new(q->base, timer_cb, q);
		q->notify_ev = event_new(q->base, -1, 0, notify_cb, q);
		if (!q->timer || !q->notify_ev)
			goto fail;
	}
	if (opts && opts->metrics) {
		struct metric **dst[] = {&q->m_depth, &q->m_adds, &q->m_retries};
		static const struct {
			enum metric_type type;
			const char *name, *help;
		} fams[] = {
		    {METRIC_GAUGE, "vmdhcp_workqueue_depth", "Current depth of workqueue"},
		    {METRIC_COUNTER, "vmdhcp_workqueue_adds_total",
			"Total number of adds handled by workqueue"},
		    {METRIC_COUNTER, "vmdhcp_workqueue_retries_total",
			"Total number of retries handled by workqueue"},
		};

		if (!opts->name) {
			kube_workqueue_free(q);
			return -EINVAL;
		}
		for (size_t i = 0; i < ELEMENTSOF(fams); i++) {
			*dst[i] = metrics_add_const(opts->metrics, fams[i].type, fams[i].name,
			    fams[i].help, "name", opts->name, NULL, NULL, 0, NULL, 0);
			if (!*dst[i]) {
				/* -EEXIST: the name is taken. A registry cannot drop a series:
				 * on -ENOMEM those added so far stay, at 0. */
				int rc = -errno;

				kube_workqueue_free(q);
				return rc;
			}
		}
	}
	*ret = q;
	return 0;
fail:
	kube_workqueue_free(q);
	return -ENOMEM;
}

struct kube_workqueue *
kube_workqueue_free(struct kube_workqueue *q)
{
	struct item *it;

	if (!q)
		return NULL;
	HMAP_FOR_EACH_SAFE(it, node, &q->items)
	free(it);
	hmap_destroy(&q->items);
	free(q->fifo);
	free(q->heap);
	if (q->timer)
		event_free(q->timer);
	if (q->notify_ev)
		event_free(q->notify_ev);
	free(q);
	return NULL;
}

void
kube_workqueue_set_notify(struct kube_workqueue *q, void (*fn)(void *), void *userdata)
{
	q->notify = fn;
	q->notify_userdata = userdata;
}

static int
fifo_push(struct kube_workqueue *q, struct item *it)
{
	if (q->len == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 64;
		struct item **f = malloc(cap * sizeof(*f));

		if (!f)
			return -ENOMEM;
		for (size_t i = 0; i < q->len; i++)
			f[i] = q->fifo[(q->head + i) % q->cap];
		free(q->fifo);
		q->fifo = f;
		q->cap = cap;
		q->head = 0;
	}
	q->fifo[(q->head + q->len) % q->cap] = it;
	q->len++;
	update_depth(q);
	if (q->notify_ev && q->notify)
		event_active(q->notify_ev, EV_TIMEOUT, 0);
	return 0;
}

static int
add_item(struct kube_workqueue *q, struct item *it)
{
	if (it->dirty)
		return 0;
	it->dirty = true;
	metric_inc(q->m_adds, 0); /* client-go counts an add once the key is dirty anew */
	if (it->processing)
		return 0;
	if (fifo_push(q, it) < 0) {
		it->dirty = false;
		return -ENOMEM;
	}
	return 0;
}

int
kube_workqueue_add(struct kube_workqueue *q, const char *key)
{
	struct item *it;

	if (q->shutdown)
		return -ESHUTDOWN;
	it = item_get(q, key);
	if (!it)
		return -ENOMEM;
	return add_item(q, it);
}

int
kube_workqueue_add_after(struct kube_workqueue *q, const char *key, uint64_t delay_usec)
{
	struct item *it;
	uint64_t due;

	if (q->shutdown)
		return -ESHUTDOWN;
	if (delay_usec == 0)
		return kube_workqueue_add(q, key);
	it = item_get(q, key);
	if (!it)
		return -ENOMEM;
	due = now(q) + delay_usec;
	if (it->heap_idx >= 0) {
		if (due < it->due) {
			it->due = due;
			heap_up(q, (size_t)it->heap_idx);
		}
	} else {
		if (q->hlen == q->hcap) {
			size_t cap = q->hcap ? q->hcap * 2 : 64;
			struct item **h = realloc(q->heap, cap * sizeof(*h));

			if (!h) {
				item_maybe_free(q, it);
				return -ENOMEM;
			}
			q->heap = h;
			q->hcap = cap;
		}
		it->due = due;
		it->heap_idx = (ssize_t)q->hlen;
		q->heap[q->hlen++] = it;
		heap_up(q, (size_t)it->heap_idx);
	}
	arm_timer(q);
	return 0;
}

uint64_t
kube_workqueue_when(struct kube_workqueue *q, const char *key)
{
	struct item *it = item_get(q, key);
	uint64_t backoff = q->base_delay, bucket = 0, t = now(q);
	unsigned exp;

	if (!it)
		return q->max_delay;
	exp = it->failures++;
	for (unsigned i = 0; i < exp && backoff < q->max_delay; i++)
		backoff *= 2;
	if (backoff > q->max_delay)
		backoff = q->max_delay;

	/* Token bucket: refill, take one token (even into debt, like a reservation). */
	q->tokens += (double)(t - q->last_refill) * q->qps / (double)USEC_PER_SEC;
	if (q->tokens > q->burst)
		q->tokens = q->burst;
	q->last_refill = t;
	q->tokens -= 1.0;
	if (q->tokens < 0)
		bucket = (uint64_t)(-q->tokens / q->qps * (double)USEC_PER_SEC);
	return MAX(backoff, bucket);
}

int
kube_workqueue_add_rate_limited(struct kube_workqueue *q, const char *key)
{
	if (q->shutdown)
		return -ESHUTDOWN;
	metric_inc(q->m_retries, 0);
	return kube_workqueue_add_after(q, key, kube_workqueue_when(q, key));
}

void
kube_workqueue_forget(struct kube_workqueue *q, const char *key)
{
	struct item *it = item_find(q, key);

	if (!it)
		return;
	it->failures = 0;
	item_maybe_free(q, it);
}

unsigned
kube_workqueue_num_requeues(const struct kube_workqueue *q, const char *key)
{
	const struct item *it = item_find(q, key);

	return it ? it->failures : 0;
}

int
kube_workqueue_get(struct kube_workqueue *q, const char **ret_key)
{
	struct item *it;

	if (q->shutdown && !q->len)
		return -ESHUTDOWN;
	if (!q->len)
		return -EAGAIN;
	it = q->fifo[q->head];
	q->head = (q->head + 1) % q->cap;
	q->len--;
	update_depth(q);
	it->dirty = false;
	it->processing = true;
	*ret_key = it->key;
	return 0;
}

void
kube_workqueue_done(struct kube_workqueue *q, const char *key)
{
	struct item *it = item_find(q, key);

	if (!it || !it->processing)
		return;
	it->processing = false;
	if (it->dirty && !q->shutdown) {
		if (fifo_push(q, it) < 0)
			it->dirty = false;
	} else {
		it->dirty = false;
	}
	item_maybe_free(q, it);
}

void
kube_workqueue_tick(struct kube_workqueue *q)
{
	uint64_t t = now(q);

	while (q->hlen && q->heap[0]->due <= t) {
		struct item *it = heap_pop(q);

		if (q->shutdown || add_item(q, it) < 0)
			item_maybe_free(q, it);
	}
	arm_timer(q);
}

uint64_t
kube_workqueue_next_due(const struct kube_workqueue *q)
{
	return q->hlen ? q->heap[0]->due : 0;
}

size_t
kube_workqueue_len(const struct kube_workqueue *q)
{
	return q->len;
}

size_t
kube_workqueue_delayed_len(const struct kube_workqueue *q)
{
	return q->hlen;
}

void
kube_workqueue_shutdown(struct kube_workqueue *q)
{
	q->shutdown = true;
	if (q->timer)
		evtimer_del(q->timer);
}
