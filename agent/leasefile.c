/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Local-mode lease file: the leases handed out by --dynamic, each under its key (the client
 * identifier, option 61, else 0x01 + MAC: RFC 2131 §4.2) with the MAC it is bound to and its
 * address.
 *
 * Format (text, one lease per line):
 *     # vm-dhcp-agent leases v2
 *     52:54:00:12:34:56 10.0.0.10
 *     52:54:00:ab:cd:ef 10.0.0.11 id=ff00000001000100012a3b4c5d525400abcdef
 * A line without id= is keyed by its MAC (all of a v1 file's lines are). A later line wins over
 * an earlier one with the same key; then, of the leases left, over one with the same address,
 * then with the same MAC (so a lease that moved to a new MAC or to a new key, or an address
 * expired and handed out again, reads back as it was last written, compaction or not).
 * The whole file is written atomically (temp + fsync + rename, streamed through a 64 KiB
 * buffer) when opened, on reload and at exit; between those, leasefile_add() appends each new lease
 * as a complete line before it records it in memory, so before its reply is built: a lease that
 * cannot be written (disk full, I/O error, read-only) is not recorded at all, and the caller does
 * not answer it. A crash can only tear the last line, which load ignores. Any other line that is
 * not a lease, a comment or blank (a NUL byte, binary garbage, a bad MAC or address, an over-long
 * line) is copied byte for byte to PATH.quarantine before the rewrite at open drops it: the good
 * leases around it are kept and the agent starts. The load reads the file line by line through
 * the same 64 KiB buffer: a 400 000-line file costs its table, not its size.
 *
 * Under a changing file system: leasefile_check() (every few seconds) compares the inode at
 * the path with the journal's; when the file was deleted or replaced it warns once and writes
 * every lease in memory to a new file at the path (the journal then follows it), so what went
 * to the unlinked inode meanwhile is not lost. When the file cannot be written at open (a
 * read-only directory or file system, no permission, a full disk) the agent serves without
 * persistence (one warning, vmdhcp_agent_lease_file_persistent 0) and each check tries again;
 * the first write that succeeds resumes the journal.
 *
 * This file opens the lease file: the streamed load, the quarantine and the replay (a later
 * line superseding earlier ones); leasefile-line.c holds the line format, leasefile-table.c
 * the key-indexed table, leasefile-journal.c the append, compaction and watch paths.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/leasefile-internal.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"

#define QUARANTINE_SUFFIX ".quarantine"
#define QUARANTINE_LOG_LINES 10 /* bad lines logged one by one (debug) */

/*
 * Bad lines found at open, copied byte for byte (with their newline) to PATH.quarantine,
 * appended, before the rewrite drops them from the lease file.
 */
struct quarantine {
	char *path;
	int fd; /* opened at the first bad line */
	int err;
	size_t lines, bytes;
	unsigned first_lineno;
	const char *first_why;
};

/* Appends n more bytes of the current bad line to the quarantine file. */
static void
quarantine_write(struct quarantine *q, const char *p, size_t n)
{
	q->bytes += n;
	if (q->err != 0)
		return;
	if (q->fd < 0) {
		q->fd = open(q->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		if (q->fd < 0) {
			q->err = -errno;
			return;
		}
	}
	if ((q->err = fd_write_all(q->fd, p, n)) < 0)
		return;
}

static void
quarantine_add(struct leasefile *lf, struct quarantine *q, const char *p, size_t n, unsigned lineno,
    const char *why)
{
	if (q->lines++ == 0) {
		q->first_lineno = lineno;
		q->first_why = why;
	}
	if (q->lines <= QUARANTINE_LOG_LINES)
		log_debug(
		    "%s: line %u: %s (%zu bytes): moved to %s", lf->path, lineno, why, n, q->path);
	quarantine_write(q, p, n);
}

/* Makes the quarantined bytes durable (before the rewrite removes them). Negative errno. */
static int
quarantine_sync(struct quarantine *q)
{
	if (q->err != 0)
		return q->err;
	if (q->fd < 0)
		return 0;
	if (fsync(q->fd) < 0)
		return -errno;
	/* a new file's name too: the rewrite's rename must not be durable without it */
	(void)fsync_parent_dir(q->path);
	return 0;
}

/* One complete line (n bytes, without its newline) into lf's table, or to q. 0 or -ENOMEM. */
static int
load_line(struct leasefile *lf, struct quarantine *q, const char *p, size_t n, unsigned lineno)
{
	const char *why;
	struct line l;
	struct key k;
	uint8_t *copy;
	bool lease;
	int r;

	if ((why = lf_parse_line(p, n, &l, &lease)) != NULL) {
		quarantine_add(lf, q, p, n + 1, lineno, why);
	} else if (lease) {
		lf_key_init(&k, l.id_len > 0 ? l.id : NULL, l.id_len, l.mac);
		if ((r = lf_table_reserve(lf)) < 0 || (r = lf_key_copy(lf, &k, l.mac, &copy)) < 0)
			return r;
		lf_table_put(lf, &k, l.mac, l.ip, lineno, copy);
	}
	return 0;
}

/* The bytes after the last newline (n of them, maybe 0). */
static void
load_tail(struct leasefile *lf, struct quarantine *q, const char *p, size_t n, unsigned lineno)
{
	/* the journal's reserve (spaces; NULs where never written) is no data */
	while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\0'))
		n--;
	if (n == 0)
		return;
	if (lf_torn_line(p, n))
		log_warn("%s: line %u: ignoring incomplete last line (interrupted write)", lf->path,
		    lineno);
	else
		quarantine_add(lf, q, p, n, lineno, "incomplete last line");
}

static bool
all_blank(const char *p, size_t n, bool *nul)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\0')
			*nul = true;
		else if (p[i] != ' ' && p[i] != '\t')
			return false;
	}
	return true;
}

/*
 * Loads the file open on fd into lf's table, line by line through one IO_CHUNK buffer: the
 * memory is the table's, whatever the file's size (at most LEASEFILE_MAX_SIZE bytes are read).
 * Bad lines go to q. A line longer than the buffer is bad: copied to q piece by piece. A full
 * buffer of blanks only (the journal's reserve left by a kill -9) is skipped as it comes. 0,
 * -ENOMEM, -EFBIG or the read's errno.
 */
static int
load(struct leasefile *lf, int fd, struct quarantine *q)
{
	char *buf = malloc(IO_CHUNK);
	size_t have = 0, total = 0;
	unsigned lineno = 0;
	bool long_line = false; /* in a line too long for the buffer, being quarantined */
	bool blanks = false;	/* the current line began with a skipped buffer of blanks */
	bool blank_nul = false; /* ... holding a NUL byte */
	int r = 0;

	if (buf == NULL)
		return -ENOMEM;
	for (;;) {
		ssize_t got = read(fd, buf + have, IO_CHUNK - have);
		char *p = buf, *end, *nl;
		size_t rest;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			r = -errno;
			break;
		}
		total += (size_t)got;
		if (total > LEASEFILE_MAX_SIZE) {
			r = -EFBIG;
			break;
		}
		have += (size_t)got;
		end = buf + have;
		while ((nl = memchr(p, '\n', (size_t)(end - p))) != NULL) {
			size_t n = (size_t)(nl - p);

			if (long_line) {
				quarantine_write(q, p, n + 1);
				long_line = false;
			} else if (blanks && blank_nul) {
				quarantine_add(lf, q, p, n + 1, ++lineno, "NUL byte");
			} else if ((r = load_line(lf, q, p, n, ++lineno)) < 0) {
				goto out;
			}
			blanks = blank_nul = false;
			p = nl + 1;
		}
		rest = (size_t)(end - p);
		if (got == 0) {
			if (long_line)
				quarantine_write(q, p, rest);
			else
				load_tail(lf, q, p, rest, lineno + 1);
			break;
		}
		if (rest == IO_CHUNK) {
			/* a whole buffer without a newline */
			if (long_line) {
				quarantine_write(q, p, rest);
			} else if (all_blank(p, rest, &blank_nul)) {
				blanks = true;
			} else {
				quarantine_add(lf, q, p, rest, ++lineno,
				    blank_nul ? "NUL byte" : "line too long");
				long_line = true;
			}
			have = 0;
		} else {
			memmove(buf, p, rest);
			have = rest;
		}
	}
out:
	free(buf);
	return r;
}

struct ref {
	uint32_t ip;
	uint32_t seq;
	uint8_t mac[6];
	size_t slot;
};

/* By address, then the latest line first. */
static int
cmp_ref_ip(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;

	if (x->ip != y->ip)
		return x->ip < y->ip ? -1 : 1;
	return x->seq > y->seq ? -1 : x->seq < y->seq;
}

/* By MAC, then the latest line first. */
static int
cmp_ref_mac(const void *a, const void *b)
{
	const struct ref *x = a, *y = b;
	int c = memcmp(x->mac, y->mac, 6);

	if (c != 0)
		return c;
	return x->seq > y->seq ? -1 : x->seq < y->seq;
}

/*
 * After load: a lease that a later line superseded by its address (the address was handed out
 * again: to another key after it expired, or to a new key of the same MAC), then by its MAC,
 * is dropped. Each key has one lease already (later lines replaced earlier ones as they were
 * read). Returns how many were dropped, or -ENOMEM.
 */
static int
supersede(struct leasefile *lf)
{
	int (*cmp[2])(const void *, const void *) = {cmp_ref_ip, cmp_ref_mac};
	struct ref *refs;
	size_t n;
	int dropped = 0;

	if (lf->n < 2)
		return 0;
	if ((refs = malloc(lf->n * sizeof(*refs))) == NULL)
		return -ENOMEM;
	for (int pass = 0; pass < 2; pass++) {
		n = 0;
		for (size_t i = 0; i < lf->cap; i++) {
			const struct slot *s = &lf->slots[i];
			if (s->state != SLOT_USED)
				continue;
			refs[n].ip = s->ip;
			refs[n].seq = s->seq;
			memcpy(refs[n].mac, s->mac, 6);
			refs[n++].slot = i;
		}
		qsort(refs, n, sizeof(*refs), cmp[pass]);
		for (size_t i = 1; i < n; i++) {
			bool same = pass == 0 ? refs[i].ip == refs[i - 1].ip
					      : memcmp(refs[i].mac, refs[i - 1].mac, 6) == 0;
			if (same) {
				lf_slot_delete(lf, refs[i].slot);
				dropped++;
				/* refs[i] stays the run's reference: same address or MAC */
				refs[i] = refs[i - 1];
			}
		}
	}
	free(refs);
	return dropped;
}

/* A new lease file object for path (NULL: memory only), empty. NULL without memory. */
static struct leasefile *
leasefile_new(const char *path)
{
	struct leasefile *lf = calloc(1, sizeof(*lf));

	if (lf == NULL || (path != NULL && (lf->path = strdup(path)) == NULL)) {
		free(lf);
		return NULL;
	}
	lf->fd = -1;
	if (getrandom(&lf->seed, sizeof(lf->seed), GRND_NONBLOCK) != sizeof(lf->seed))
		lf->seed = clock_now_usec() ^ (uint64_t)(uintptr_t)lf;
	return lf;
}

/*
 * The leases of the file open on fd into lf: loaded, superseded by later lines, the bad lines
 * in q (PATH.quarantine) and made durable there. 0, or negative errno with err filled.
 */
static int
load_file(struct leasefile *lf, int fd, struct quarantine *q, char *err, size_t errlen)
{
	const char *path = lf->path;
	int r;

	if ((q->path = malloc(strlen(path) + sizeof(QUARANTINE_SUFFIX))) == NULL) {
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	strcpy(q->path, path);
	strcat(q->path, QUARANTINE_SUFFIX);
	r = load(lf, fd, q);
	if (r < 0 && r != -ENOMEM) {
		snprintf(err, errlen, "%s: cannot read lease file: %s", path,
		    r == -EFBIG ? "larger than 256 MiB" : strerror(-r));
		return r;
	}
	if (r >= 0 && (r = supersede(lf)) > 0)
		log_info(
		    "%s: %d leases superseded by later lines (the same address or MAC)", path, r);
	if (r < 0) {
		snprintf(err, errlen, "%s: out of memory", path);
		return r;
	}
	if (q->lines > 0 && (r = quarantine_sync(q)) < 0) {
		/* the rewrite would drop them: keep the file as it is, and do not start */
		snprintf(err, errlen,
		    "%s: %zu bad lines (first: line %u, %s) cannot be saved to %s: %s; "
		    "the lease file is left as it is",
		    path, q->lines, q->first_lineno, q->first_why, q->path, strerror(-r));
		return r;
	}
	if (q->lines > 0)
		log_warn("%s: %zu bad lines (%zu bytes; first: line %u, %s) moved to %s; "
			 "%zu leases kept",
		    path, q->lines, q->bytes, q->first_lineno, q->first_why, q->path, lf->n);
	return 0;
}

int
leasefile_open(const char *path, struct leasefile **ret, char *err, size_t errlen)
{
	struct leasefile *lf = leasefile_new(path);
	struct quarantine q = {.fd = -1};
	struct stat st;
	int r, fd = -1;

	if (lf == NULL) {
		snprintf(err, errlen, "%s: out of memory", path != NULL ? path : "leases");
		return -ENOMEM;
	}
	if (path == NULL) {
		*ret = lf;
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	r = fd < 0 ? -errno : 0;
	if (r == 0 && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)))
		r = -EINVAL; /* a FIFO would hang the start, a device never end */
	if (r < 0 && r != -ENOENT) {
		snprintf(err, errlen, "%s: cannot read lease file: %s", path,
		    r == -EINVAL ? "not a regular file" : strerror(-r));
		goto out;
	}
	if (r >= 0 && (r = load_file(lf, fd, &q, err, errlen)) < 0)
		goto out;
	lf->loaded = lf->n;
	lf->rejected = q.lines;
	lf->persistent = true;
	if ((r = lf_rewrite(lf)) < 0) {
		if (!lf_not_writable(r)) {
			/* a wrong path (no such directory, ...), or no memory: do not start */
			snprintf(
			    err, errlen, "%s: cannot write lease file: %s", path, strerror(-r));
			goto out;
		}
		/* a read-only directory or a full disk: serve, say so, try again later */
		lf_memory_only(lf, r, "cannot write lease file");
	}
	r = 0;
	*ret = lf;
	lf = NULL;
out:
	if (fd >= 0)
		close(fd);
	if (q.fd >= 0)
		close(q.fd);
	free(q.path);
	leasefile_free(lf);
	return r;
}

struct leasefile *
leasefile_free(struct leasefile *lf)
{
	if (lf == NULL)
		return NULL;
	lf_unmap_journal(lf);
	if (lf->fd >= 0)
		close(lf->fd);
	for (size_t i = 0; i < lf->cap; i++)
		if (lf->slots[i].state == SLOT_USED)
			free(lf->slots[i].id);
	free(lf->slots);
	free(lf->path);
	free(lf);
	return NULL;
}
