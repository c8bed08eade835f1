/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_KUBE_INFORMER_INTERNAL_H
#define VMDHCP_KUBE_INFORMER_INTERNAL_H

/*
 * The informer's record, shared by its two files: kube/informer.c (list, watch, the store and
 * handlers: the reflector's state machine) and kube/informer-failures.c (what a failure leaves
 * for logs and /readyz).
 */

#include <event2/event.h>

#include "kube/kube-internal.h"

#define MAX_HANDLERS 8

enum inf_state {
	INF_IDLE,
	INF_LISTING,
	INF_WATCHING,
	INF_BACKOFF,
};

struct kube_informer {
	struct kube_client *c;
	const struct kube_resource *res;
	char *ns, *label_selector, *field_selector;
	unsigned page_size;
	uint64_t resync_usec;
	unsigned watch_timeout_s;
	uint64_t backoff_base, backoff_max, backoff_unsynced_max;
	uint64_t last_log; /* of a failure line (monotonic, like the loop's timers) */
	unsigned attempt;
	uint64_t seed;
	kube_transform_fn transform;
	void *transform_userdata;
	struct kube_codec codec; /* decode NULL: json_loadb, then transform */
	struct kube_store *store;
	struct kube_store *seen; /* keys seen during the current list */
	struct kube_informer_handlers handlers[MAX_HANDLERS];
	size_t nhandlers;
	enum inf_state state;
	bool synced;
	bool backoff_relist; /* what to do when the backoff timer fires */
	char rv[64];
	char *continue_token;
	struct kube_watch *watch;
	struct kube_http_call *list_call; /* a list page in flight */
	uint64_t watch_started;
	uint64_t watch_events; /* events the current watch delivered (bookmarks included) */
	struct event *backoff_timer;
	struct event *resync_timer;
	struct kube_informer_stats stats;
};

/* For messages: the kind ("IPPool"), else the plural resource name. */
static inline const char *
inf_name(const struct kube_informer *inf)
{
	return inf->res->kind && *inf->res->kind ? inf->res->kind : inf->res->resource;
}

/*
 * what: "list" or "watch"; status/reason of an HTTP answer (0/NULL for a transport error);
 * message the full text (for the log). Keeps a short cause for /readyz and logs the first
 * failure of a run at warn, then the 2nd, 4th, 8th ... and at least once per backoff cap.
 */
void informer_record_failure(struct kube_informer *inf, const char *what, int err, long status,
    const char *reason, const char *message);
/* what works again: logs the end of a run of failures and clears them. */
void informer_record_success(struct kube_informer *inf, const char *what);

#endif
