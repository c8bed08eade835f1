/* SPDX-License-Identifier: Apache-2.0 */
/*
 * An informer's failures: the short cause kept for /readyz (kube_informer_describe_failure),
 * the log lines of a run of failures (the first at warn, then the 2nd, 4th, 8th ... and at
 * most once per backoff cap) and of its end.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kube/informer-internal.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/rfc3339.h"

/* "HH:MM:SSZ" of a UTC epoch second: the time part of its RFC 3339 form. */
static void
format_since(int64_t epoch, char out[16])
{
	char full[RFC3339_MAX];

	rfc3339_format(epoch * (int64_t)USEC_PER_SEC, 0, full); /* "YYYY-MM-DDTHH:MM:SSZ" */
	memcpy(out, full + 11, sizeof("HH:MM:SSZ"));
}

bool
kube_informer_describe_failure(const struct kube_informer *inf, char *buf, size_t len)
{
	char since[16];

	if (len)
		buf[0] = '\0';
	if (!inf->stats.failures)
		return false;
	format_since(inf->stats.failing_since, since);
	snprintf(buf, len, "%s informer: %s - %llu failure%s since %s", inf_name(inf),
	    inf->stats.last_error, (unsigned long long)inf->stats.failures,
	    inf->stats.failures == 1 ? "" : "s", since);
	return true;
}

static bool
power_of_two(uint64_t n)
{
	return n && !(n & (n - 1));
}

/* "https://host:port" of the first URL in a transport message ("GET https://h:p/api/...: ..."),
 * else the whole message. */
static void
message_origin(const char *message, char *out, size_t len)
{
	const char *scheme = strstr(message, "://"), *start, *end;

	if (!scheme) {
		snprintf(out, len, "%s", message);
		return;
	}
	for (start = scheme; start > message && start[-1] != ' '; start--)
		;
	end = scheme + 3 + strcspn(scheme + 3, "/ ");
	snprintf(out, len, "%.*s", (int)(end - start), start);
}

/*
 * what: "list" or "watch"; status/reason of an HTTP answer (0/NULL for a transport error);
 * message the full text (for the log). Keeps a short cause for /readyz and logs the first
 * failure of a run at warn, then the 2nd, 4th, 8th ... and at least once per backoff cap.
 */
void
informer_record_failure(struct kube_informer *inf, const char *what, int err, long status,
    const char *reason, const char *message)
{
	struct kube_informer_stats *st = &inf->stats;
	uint64_t now = clock_now_usec();
	char desc[sizeof(st->last_error) + 128], where[200] = "";
	const char *more;

	if (!message)
		message = "";
	if (err == -EFBIG) {
		/* the message names the URL, the size, the cap and where the cap comes from */
		snprintf(
		    st->last_error, sizeof(st->last_error), "%s failed: answer too large", what);
	} else if (status) {
		snprintf(st->last_error, sizeof(st->last_error), "%s failed: HTTP %ld %s", what,
		    status, reason && *reason ? reason : kube_errno_name(err));
	} else {
		message_origin(message, where, sizeof(where));
		snprintf(st->last_error, sizeof(st->last_error), "%s failed: %s%s%s%s", what,
		    strerror(err < 0 ? -err : EIO), where[0] ? " (" : "", where,
		    where[0] ? ")" : "");
	}
	more = *message && strcmp(where, message) != 0 ? message : NULL; /* the full text */
	if (st->failures++ == 0) {
		st->failing_since = (int64_t)time(NULL);
		inf->last_log = now;
		log_warn("%s informer: %s%s%s%s", inf_name(inf), st->last_error, more ? " [" : "",
		    more ? more : "", more ? "]" : "");
		return;
	}
	if (!power_of_two(st->failures) && now - inf->last_log < inf->backoff_max)
		return;
	inf->last_log = now;
	kube_informer_describe_failure(inf, desc, sizeof(desc));
	log_warn("%s%s%s%s", desc, more ? " [" : "", more ? more : "", more ? "]" : "");
}

void
informer_record_success(struct kube_informer *inf, const char *what)
{
	struct kube_informer_stats *st = &inf->stats;

	if (!st->failures)
		return;
	log_info("%s informer: %s works again after %llu failure%s", inf_name(inf), what,
	    (unsigned long long)st->failures, st->failures == 1 ? "" : "s");
	st->failures = 0;
	st->failing_since = 0;
	st->last_error[0] = '\0';
}
