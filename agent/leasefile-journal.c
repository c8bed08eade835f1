/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lease file between its rewrites: each new or changed lease appended as one complete
 * line before it is recorded (normally a memcpy into a shared mapping of the file's tail, else
 * one write() a lease), the whole file rewritten atomically (lib/util.h's atomic_file) at open,
 * on reload and at exit, and the watch on the path that recreates a file deleted or replaced
 * while in use, or serves without persistence while it cannot be written.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/leasefile-internal.h"
#include "lib/log.h"
#include "lib/util.h"

void
lf_unmap_journal(struct leasefile *lf)
{
	if (lf->map == NULL)
		return;
	munmap(lf->map, JOURNAL_WINDOW);
	lf->map = NULL;
	if (lf->fd >= 0 && ftruncate(lf->fd, (off_t)lf->map_off) < 0)
		log_warn("%s: cannot trim the lease file: %s", lf->path, strerror(errno));
}

/*
 * Maps the window of the journal fd that holds file offset off (the end of the data),
 * reserving it on disk first. Only the window counts in the process' memory.
 */
static int
map_journal(struct leasefile *lf, size_t off)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), win = off & ~(page - 1);
	void *m;

	if (fallocate(lf->fd, 0, 0, (off_t)(win + JOURNAL_WINDOW)) < 0)
		return -errno;
	m = mmap(NULL, JOURNAL_WINDOW, PROT_READ | PROT_WRITE, MAP_SHARED, lf->fd, (off_t)win);
	if (m == MAP_FAILED)
		return -errno;
	if (lf->map != NULL)
		munmap(lf->map, JOURNAL_WINDOW);
	/* spaces, not NULs: the file stays text for cat and grep; load ignores them */
	memset((char *)m + (off - win), ' ', JOURNAL_WINDOW - (off - win));
	lf->map = m;
	lf->win_off = win;
	lf->map_off = off;
	return 0;
}

/*
 * Appends line by write(), when the journal is not mapped. All or nothing: a piece of a line
 * left at the end of the file would glue the next line to it (one bad line, two leases lost),
 * so a short write (a full disk in the middle of the line) is cut off again.
 */
static int
journal_write(struct leasefile *lf, const char *line, size_t len)
{
	char buf[LINE_MAX_LEN + 9];
	size_t n = 0, off = 0;

	if (lf->fd < 0)
		return -EBADF; /* the last compaction could not reopen the file */
	if (lf->need_nl)
		buf[n++] = '\n';
	memcpy(buf + n, line, len);
	n += len;
	while (off < n) {
		ssize_t w = write(lf->fd, buf + off, n - off);
		struct stat st;
		int r;

		if (w > 0) {
			off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		r = w < 0 ? -errno : -EIO;
		/* O_APPEND: the piece is the last off bytes of the file */
		if (off > 0 && (fstat(lf->fd, &st) < 0 || st.st_size < (off_t)off ||
				   ftruncate(lf->fd, st.st_size - (off_t)off) < 0))
			lf->need_nl = true; /* it stays, as a bad line of its own */
		return r;
	}
	lf->need_nl = false;
	return 0;
}

/* Writes line to the journal: into the mapped window (sliding it when full), else write(). */
static int
journal_append(struct leasefile *lf, const char *line, size_t len)
{
	int r;

	if (lf->map != NULL && lf->map_off + len > lf->win_off + JOURNAL_WINDOW &&
	    (r = map_journal(lf, lf->map_off)) < 0) {
		/* e.g. the disk is full: write() from now on, until the next compaction */
		log_warn("%s: cannot reserve journal space: %s; one write() per lease", lf->path,
		    strerror(-r));
		lf_unmap_journal(lf);
	}
	if (lf->map != NULL) {
		/* the space was reserved by fallocate: this cannot hit a full disk */
		memcpy(lf->map + (lf->map_off - lf->win_off), line, len);
		lf->map_off += len;
		return 0;
	}
	return journal_write(lf, line, len);
}

int
leasefile_add_id(
    struct leasefile *lf, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip)
{
	char line[LINE_MAX_LEN + 8];
	uint8_t *copy;
	struct key k;
	int r, len;

	if (id != NULL && id_len > AGENT_ID_MAX)
		return -EINVAL;
	lf_key_init(&k, id, id_len, mac);
	/* room first: once the line is in the file, recording it in memory must not fail */
	if ((r = lf_table_reserve(lf)) < 0 || (r = lf_key_copy(lf, &k, mac, &copy)) < 0)
		return r;
	if (lf->path != NULL && lf->persistent) {
		/*
		 * The file first: a lease that is not in it would be lost at the next start and
		 * its address handed to another MAC while this one still uses it. On failure
		 * nothing changes (an earlier lease of the key stays), so the caller can undo.
		 */
		len = agent_id_is_mac(mac, k.p, k.len)
			  ? lf_format_line(line, sizeof(line), NULL, 0, mac, ip)
			  : lf_format_line(line, sizeof(line), k.p, k.len, mac, ip);
		if (len < 0 || (r = journal_append(lf, line, (size_t)len)) < 0) {
			lf->append_errors++;
			free(copy);
			return len < 0 ? -EINVAL : r;
		}
	}
	lf_table_put(lf, &k, mac, ip, 0, copy); /* cannot fail: room was made above */
	return 0;
}

int
leasefile_add(struct leasefile *lf, const uint8_t mac[6], uint32_t ip)
{
	return leasefile_add_id(lf, NULL, 0, mac, ip);
}

int
leasefile_flush(struct leasefile *lf)
{
	/* leasefile_add writes each line itself: nothing is ever left queued */
	(void)lf;
	return 0;
}

uint64_t
leasefile_append_errors(const struct leasefile *lf)
{
	return lf->append_errors;
}

size_t
leasefile_rejected(const struct leasefile *lf)
{
	return lf->rejected;
}

/*
 * The header and every lease, to f through one IO_CHUNK buffer (never the whole text in
 * memory: 400 000 leases are ~20 MB of text); the bytes written in *ret_len.
 */
static int
write_leases(const struct leasefile *lf, struct atomic_file *f, size_t *ret_len)
{
	char *buf = malloc(IO_CHUNK);
	size_t n, total = 0;
	int r;

	if (buf == NULL)
		return -ENOMEM;
	n = (size_t)snprintf(buf, IO_CHUNK, "%s", LEASEFILE_HEADER);
	for (size_t i = 0; i < lf->cap; i++) {
		const struct slot *sl = &lf->slots[i];
		int len;

		if (sl->state != SLOT_USED)
			continue;
		if (IO_CHUNK - n < LINE_MAX_LEN + 8) {
			if ((r = atomic_file_write(f, buf, n)) < 0)
				goto out;
			total += n;
			n = 0;
		}
		len = lf_format_line(buf + n, IO_CHUNK - n, sl->id, sl->id_len, sl->mac, sl->ip);
		if (len < 0) {
			r = -EINVAL;
			goto out;
		}
		n += (size_t)len;
	}
	if ((r = atomic_file_write(f, buf, n)) < 0)
		goto out;
	*ret_len = total + n;
out:
	free(buf);
	return r;
}

int
lf_rewrite(struct leasefile *lf)
{
	struct atomic_file f;
	size_t len = 0;
	int r, fd;

	r = atomic_file_open(&f, lf->path, 0644, ATOMIC_FILE_TMP_PID | ATOMIC_FILE_KEEP_FD);
	if (r < 0)
		return r;
	if ((r = write_leases(lf, &f, &len)) < 0) {
		atomic_file_abort(&f);
		return r;
	}
	if ((r = atomic_file_commit(&f)) < 0)
		return r;
	fd = f.fd;
	/* everything mapped is in the snapshot now; the journal follows the new inode */
	if (lf->map != NULL) {
		munmap(lf->map, JOURNAL_WINDOW);
		lf->map = NULL;
	}
	if (lf->fd >= 0)
		close(lf->fd);
	lf->fd = fd;
	lf->need_nl = false;
	if ((r = map_journal(lf, len)) < 0) {
		/* undo a reservation that could not be mapped */
		if (ftruncate(fd, (off_t)len) < 0)
			log_warn("%s: cannot trim the lease file: %s", lf->path, strerror(errno));
		log_debug(
		    "%s: journal not mapped (%s): one write() per lease", lf->path, strerror(-r));
	}
	return 0;
}

bool
lf_not_writable(int r)
{
	return r == -EROFS || r == -EACCES || r == -EPERM || r == -ENOSPC || r == -EDQUOT;
}

void
lf_memory_only(struct leasefile *lf, int r, const char *why)
{
	if (!lf->persistent)
		return;
	lf->persistent = false;
	lf_unmap_journal(lf);
	if (lf->fd >= 0)
		close(lf->fd);
	lf->fd = -1;
	lf->need_nl = false;
	log_warn("%s: %s: %s; serving without persistence: the %zu leases are kept in memory "
		 "only (vmdhcp_agent_lease_file_persistent 0) and the file is tried again every "
		 "few seconds",
	    lf->path, why, strerror(-r), lf->n);
}

int
leasefile_compact(struct leasefile *lf)
{
	int r;

	if (lf->path == NULL)
		return 0;
	r = lf_rewrite(lf);
	if (lf->persistent)
		return r;
	/* serving without persistence: that is known and reported; a failure is no news */
	if (r == 0) {
		lf->persistent = true;
		log_info("%s: lease file written again (%zu leases); persistence resumed", lf->path,
		    lf->n);
	}
	return 0;
}

bool
leasefile_persistent(const struct leasefile *lf)
{
	return lf->path == NULL || lf->persistent;
}

int
leasefile_check(struct leasefile *lf)
{
	struct stat at, in;
	bool gone;
	int r;

	if (lf->path == NULL)
		return 0;
	if (!lf->persistent) {
		(void)leasefile_compact(lf);
		return lf->persistent ? 1 : 0;
	}
	if (lf->fd >= 0 && fstat(lf->fd, &in) == 0 && in.st_nlink > 0 && stat(lf->path, &at) == 0 &&
	    at.st_dev == in.st_dev && at.st_ino == in.st_ino)
		return 0;
	gone = stat(lf->path, &at) < 0 && errno == ENOENT;
	log_warn("%s: the lease file was %s while in use; the %zu leases in memory are written "
		 "to a new file at the path",
	    lf->path, gone ? "deleted" : "replaced", lf->n);
	if ((r = lf_rewrite(lf)) < 0) {
		lf_memory_only(lf, r, "cannot recreate the lease file");
		return r;
	}
	return 1;
}
