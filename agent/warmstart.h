/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_WARMSTART_H
#define VMDHCP_AGENT_WARMSTART_H

/*
 * warmstart.c: --snapshot (Kubernetes mode): the table written on change (rate-limited), read
 * at start and served, stale, until the first sync with the API server replaces it. Its state
 * is struct agent's `warm`, written by warmstart.c only.
 */

#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>

#include "agent/snapshot.h"
#include "agent/source.h"
#include "lib/rfc3339.h"

struct agent;
struct event;

struct agent_warmstart {
	struct agent_config *snap; /* the snapshot's config while it is served (stale) */
	struct agent_snapshot_info info;
	char written[RFC3339_MAX]; /* info.written_usec as UTC RFC 3339 */
	struct event *ev;	   /* a write pending */
	uint64_t last;		   /* monotonic usec of the last write attempt */
	uint64_t writes, write_errors, write_usec;
	size_t bytes;
};

/* Reads the snapshot at start and puts it in the engine: served, stale, until the first sync. */
void agent_warmstart_load(struct agent *a);
/* A new table to snapshot: written now, or a second after the last write. */
void agent_warmstart_schedule(struct agent *a);
/* The API server answered for the pool (st: ACTIVE or ABSENT): the snapshot's table is over. */
void agent_warmstart_done(struct agent *a, enum agent_kube_state st);
/* The write timer's callback (arg: the agent). */
void agent_warmstart_cb(evutil_socket_t fd, short what, void *arg);

#endif
