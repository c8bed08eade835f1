/* SPDX-License-Identifier: Apache-2.0 */
/* HTTP status + Status.reason -> negative errno (the table in kube.h). */
#include <errno.h>
#include <string.h>

#include "kube/kube-internal.h"
#include "lib/util.h"

struct status_map {
	long status;	    /* exact status, or 0 for the reason-only rows */
	const char *reason; /* NULL: any reason */
	int err;
};

/* First match wins: reason-specific rows before the per-status default. */
static const struct status_map status_table[] = {
    {404, NULL, -ENOENT},
    {409, "AlreadyExists", -EEXIST},
    {409, "Conflict", -ESTALE},
    {409, NULL, -ESTALE},
    {410, NULL, -EKEYEXPIRED},
    {0, "Expired", -EKEYEXPIRED},
    {0, "Gone", -EKEYEXPIRED},
    {401, NULL, -EACCES},
    {403, NULL, -EACCES},
    {400, NULL, -EBADMSG},
    {422, NULL, -EINVAL},
    {429, NULL, -EBUSY},
    {504, NULL, -ETIMEDOUT},
    {408, NULL, -ETIMEDOUT},
    {0, "Timeout", -ETIMEDOUT},
};

int
kube_status_to_errno(long http_status, const char *reason)
{
	if (http_status >= 200 && http_status < 300)
		return 0;
	for (size_t i = 0; i < ELEMENTSOF(status_table); i++) {
		const struct status_map *m = &status_table[i];

		if (m->status != 0 && m->status != http_status)
			continue;
		if (m->reason && (!reason || strcmp(m->reason, reason) != 0))
			continue;
		return m->err;
	}
	if (http_status >= 500)
		return -EIO;
	return -EPROTO;
}

static const struct {
	int err;
	const char *name;
} errno_names[] = {
    {-ENOENT, "NotFound"},
    {-EEXIST, "AlreadyExists"},
    {-ESTALE, "Conflict"},
    {-EKEYEXPIRED, "Expired"},
    {-EACCES, "Forbidden"},
    {-EBADMSG, "BadRequest"},
    {-EINVAL, "Invalid"},
    {-EBUSY, "TooManyRequests"},
    {-EIO, "ServerError"},
    {-ETIMEDOUT, "Timeout"},
    {-ECONNREFUSED, "ConnectionRefused"},
    {-EHOSTUNREACH, "HostUnreachable"},
    {-EPROTO, "ProtocolError"},
    {-ECANCELED, "Canceled"},
    {-ENOMEM, "OutOfMemory"},
    {-EFBIG, "TooLarge"},
};

const char *
kube_errno_name(int err)
{
	if (err == 0)
		return "OK";
	for (size_t i = 0; i < ELEMENTSOF(errno_names); i++)
		if (errno_names[i].err == err)
			return errno_names[i].name;
	return "Error";
}
