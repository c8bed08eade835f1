/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The warm-start snapshot's file: written atomically (PATH.tmp, mode 0600, write, fsync,
 * rename, fsync of the directory: lib/util.h's atomic_file), read whole and decoded.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/snapshot-internal.h"
#include "lib/clock.h"
#include "lib/util.h"

/* The error of a failed atomic write of path: the step that failed and its file. */
static void
write_error(const struct atomic_file *f, const char *path, int r, char *err, size_t errlen)
{
	char dir[PATH_MAX];

	if (f->step == NULL) {
		snprintf(err, errlen, "%s: cannot write: %s", path, strerror(-r));
	} else if (strcmp(f->step, "fsync of the directory") == 0) {
		snprintf(dir, sizeof(dir), "%s", path);
		snprintf(err, errlen, "%s: cannot write: fsync of the directory %s: %s", path,
		    dirname(dir), strerror(-r));
	} else {
		snprintf(err, errlen, "%s: cannot write: %s %s: %s", path, f->step, f->tmp,
		    strerror(-r));
	}
}

int
agent_snapshot_write(const char *path, const struct agent_config *cfg, const struct dhcp_server *s,
    const char *resource_version, struct agent_snapshot_info *info, char *err, size_t errlen)
{
	return agent_snapshot_write_dual(path, cfg, s, NULL, resource_version, info, err, errlen);
}

int
agent_snapshot_write_dual(const char *path, const struct agent_config *cfg,
    const struct dhcp_server *s, const struct dhcp6_server *s6, const char *resource_version,
    struct agent_snapshot_info *info, char *err, size_t errlen)
{
	char msg[AGENT_ERR_MAX];
	uint64_t now = (uint64_t)clock_realtime_usec();
	struct atomic_file f;
	uint8_t *buf = NULL;
	size_t len = 0;
	int r;

	msg[0] = '\0';
	r = snap_encode(cfg, s, s6, resource_version, now, &buf, &len, msg, sizeof(msg));
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot write: %s", path,
		    r == -ENOMEM ? strerror(ENOMEM) : msg);
		return r;
	}
	r = atomic_file_open(&f, path, 0600, ATOMIC_FILE_PRIVATE | ATOMIC_FILE_SYNC_DIR);
	if (r == 0 && (r = atomic_file_write(&f, buf, len)) < 0)
		atomic_file_abort(&f);
	if (r == 0)
		r = atomic_file_commit(&f);
	free(buf);
	if (r < 0) {
		write_error(&f, path, r, err, errlen);
		return r;
	}
	if (info != NULL) {
		memset(info, 0, sizeof(*info));
		info->written_usec = now;
		snprintf(info->resource_version, sizeof(info->resource_version), "%s",
		    resource_version != NULL ? resource_version : "");
		info->bindings = s != NULL ? dhcp_server_n_bindings(s) : 0;
		info->bytes = len;
	}
	return 0;
}

int
agent_snapshot_load(const char *path, const char *ippool_ref, struct agent_config **ret,
    struct agent_snapshot_info *info, char *err, size_t errlen)
{
	char msg[AGENT_ERR_MAX], *buf = NULL;
	size_t len = 0;
	struct stat st;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT)
			snprintf(err, errlen, "%s: no snapshot", path);
		else
			snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-r));
		return r;
	}
	if (fstat(fd, &st) < 0) {
		r = -errno;
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-r));
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		r = -EINVAL;
		snprintf(err, errlen, "%s: not a regular file", path);
		goto out;
	}
	if ((uint64_t)st.st_size > AGENT_SNAPSHOT_MAX_SIZE) {
		r = -EINVAL;
		snprintf(err, errlen, "%s: %jd bytes, larger than any snapshot", path,
		    (intmax_t)st.st_size);
		goto out;
	}
	/* a file that changed size while read fails the length check */
	r = read_fd(fd, AGENT_SNAPSHOT_MAX_SIZE, (size_t)st.st_size, &buf, &len);
	if (r < 0) {
		snprintf(err, errlen, "%s: cannot read: %s", path, strerror(-r));
		goto out;
	}
	r = agent_snapshot_decode(
	    (const uint8_t *)buf, len, ippool_ref, ret, info, msg, sizeof(msg));
	if (r < 0)
		snprintf(err, errlen, "%s: %s", path, msg);
out:
	free(buf);
	close(fd);
	return r;
}
