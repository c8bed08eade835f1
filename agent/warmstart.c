/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The warm start (--snapshot, Kubernetes mode): the table and options written to the
 * snapshot file on change (rate-limited), read at start and served, stale, until the first
 * sync with the API server replaces it. snapshot*.c encode, write, read and validate it; this
 * file decides when.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <time.h>

#include <event2/event.h>

#include "agent/apply-config.h"
#include "agent/serve-internal.h"
#include "agent/source.h"
#include "agent/warmstart.h"
#include "dhcp/dhcp6.h"
#include "lib/clock.h"
#include "lib/log.h"

/* Snapshot writes at most this often: a pool changing all the time costs one write a second. */
#define SNAPSHOT_MIN_INTERVAL_USEC USEC_PER_SEC

static struct log_ratelimit rl_snapshot = LOG_RATELIMIT_INIT(60 * USEC_PER_SEC, 1);

/* " and N IPv6 bindings" for the warm start's line (the loop is single-threaded). */
static const char *
v6_count(const struct agent *a)
{
	static char buf[48];

	snprintf(buf, sizeof(buf), " and %zu IPv6 bindings", dhcp6_server_n_bindings(a->dhcp6));
	return buf;
}

static void
snapshot_write(struct agent *a)
{
	const struct agent_config *cfg = agent_cur_cfg(a);
	char err[AGENT_ERR_MAX];
	struct agent_snapshot_info info;
	uint64_t t0 = clock_now_usec();
	int r;

	a->warm.last = t0;
	if (cfg == NULL || a->warm.snap != NULL)
		return; /* nothing synced to write (a stale table is never written back) */
	r = agent_snapshot_write_dual(
	    a->opts.snapshot_path, cfg, a->dhcp, a->dhcp6, NULL, &info, err, sizeof(err));
	a->warm.write_usec = clock_now_usec() - t0;
	if (r < 0) {
		a->warm.write_errors++;
		log_ratelimited(&rl_snapshot, t0, LOG_LEVEL_WARN,
		    "snapshot not written: %s (a warm start would serve an older one, or none)",
		    err);
		return;
	}
	a->warm.writes++;
	a->warm.bytes = info.bytes;
	/* the encoded file (0.6 MiB at 65 000 bindings) goes back to the system, not the heap */
	malloc_trim(0);
	log_debug("snapshot %s written: %zu bindings, %zu bytes in %" PRIu64 " us",
	    a->opts.snapshot_path, info.bindings, info.bytes, a->warm.write_usec);
}

void
agent_warmstart_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	snapshot_write(arg);
}

/* A new table to snapshot: written now, or when SNAPSHOT_MIN_INTERVAL_USEC since the last. */
void
agent_warmstart_schedule(struct agent *a)
{
	uint64_t now = clock_now_usec(), due;

	if (a->opts.snapshot_path == NULL || a->warm.ev == NULL ||
	    evtimer_pending(a->warm.ev, NULL))
		return;
	due = a->warm.last != 0 ? a->warm.last + SNAPSHOT_MIN_INTERVAL_USEC : now;
	due = due > now ? due - now : 0;
	struct timeval tv = {
	    .tv_sec = (time_t)(due / USEC_PER_SEC), .tv_usec = (suseconds_t)(due % USEC_PER_SEC)};
	evtimer_add(a->warm.ev, &tv);
}

/* Reads the snapshot at start and puts it in the engine: served, stale, until the first sync. */
void
agent_warmstart_load(struct agent *a)
{
	struct agent_config *snap = NULL;
	char err[AGENT_ERR_MAX];
	int r;

	r = agent_snapshot_load(
	    a->opts.snapshot_path, a->opts.ippool_ref, &snap, &a->warm.info, err, sizeof(err));
	if (r == -ENOENT) {
		log_info("no snapshot at %s yet: serving once synced with the API server",
		    a->opts.snapshot_path);
		return;
	}
	if (r < 0) {
		log_warn("%s: snapshot ignored; serving once synced with the API server", err);
		return;
	}
	if ((r = agent_apply_config(a->dhcp, snap, NULL, err, sizeof(err))) < 0 ||
	    (r = agent_apply_config6(a->dhcp6, snap, err, sizeof(err))) < 0) {
		log_warn("%s: snapshot not applied: %s", a->opts.snapshot_path, err);
		dhcp_server_sync_begin(a->dhcp);
		(void)dhcp_server_sync_end(a->dhcp);
		agent_config_free(snap);
		return;
	}
	/* the engine has the bindings now: keep the options, the pool range, the identity */
	agent_shrink_config(snap);
	a->warm.snap = snap;
	a->warm.bytes = a->warm.info.bytes;
	rfc3339_format((int64_t)a->warm.info.written_usec, 0, a->warm.written);
	log_kv(LOG_LEVEL_INFO,
	    LOG_KV("snapshot", a->opts.snapshot_path, "written", a->warm.written, "ippool",
		a->opts.ippool_ref),
	    "warm start: %zu bindings%s of IPPool %s served from the snapshot (stale until "
	    "synced with the API server)",
	    a->warm.info.bindings, snap->v6.enabled ? v6_count(a) : "", a->opts.ippool_ref);
}

/* The API server answered for the pool: the snapshot's table is over. */
void
agent_warmstart_done(struct agent *a, enum agent_kube_state st)
{
	if (a->warm.snap == NULL)
		return;
	if (st == AGENT_KUBE_ABSENT) {
		/* the pool is gone: its bindings leave the engine with the snapshot */
		dhcp_server_sync_begin(a->dhcp);
		(void)dhcp_server_sync_end(a->dhcp);
		dhcp6_server_sync_begin(a->dhcp6);
		(void)dhcp6_server_sync_end(a->dhcp6);
		log_warn("IPPool %s does not exist: the snapshot's table is dropped",
		    a->opts.ippool_ref);
	} else {
		log_info("synced with the API server: the snapshot's table is replaced by IPPool "
			 "%s's current version",
		    a->opts.ippool_ref);
	}
	a->warm.snap = agent_config_free(a->warm.snap);
}
