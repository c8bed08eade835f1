/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Local-mode lease file: MAC -> IP of the leases handed out by --dynamic.
 *
 * Format (text, one lease per line, later lines win for the same MAC):
 *     # vm-dhcp-agent leases v1
 *     52:54:00:12:34:56 10.0.0.10
 * The whole file is written atomically (write_file_atomic: temp + fsync + rename) when opened,
 * on reload and at exit; between those, leasefile_add() appends each new lease as a complete
 * line before it records it in memory, so before its reply is built: a lease that cannot be
 * written (disk full, I/O error, read-only) is not recorded at all, and the caller does not
 * answer it. A crash can only tear the last line, which load ignores. Any other line that is not
 * a lease, a comment or blank (a NUL byte, binary garbage, a bad MAC or address, an over-long
 * line) is copied byte for byte to PATH.quarantine before the rewrite at open drops it: the good
 * leases around it are kept and the agent starts.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "lib/log.h"
#include "lib/util.h"

#define LEASEFILE_MAX_SIZE (256u << 20)
#define LEASEFILE_HEADER "# vm-dhcp-agent leases v1: MAC IP, one per line, later lines win\n"
#define LINE_MAX_LEN (MAC_STRLEN + IPV4_STRLEN + 2)
#define JOURNAL_WINDOW (256u << 10) /* mapped tail of the file; slides as it fills */
#define QUARANTINE_SUFFIX ".quarantine"
#define QUARANTINE_LOG_LINES 10 /* bad lines logged one by one (debug) */

enum { SLOT_EMPTY = 0, SLOT_USED = 1, SLOT_DELETED = 2 };

struct slot {
	uint8_t mac[6];
	uint8_t state;
	uint32_t ip;
};

struct leasefile {
	char *path;
	int fd; /* journal, O_APPEND; -1 when closed */
	struct slot *slots;
	size_t cap;  /* power of two */
	size_t n;    /* used */
	size_t ndel; /* tombstones */
	size_t loaded;
	size_t rejected;	/* bad lines moved to the quarantine file at open */
	uint64_t append_errors; /* leases refused because their line could not be written */
	bool need_nl; /* a piece of a line could not be cut off: the next line starts anew */
	/*
	 * The journal is normally a shared mapping of the file's tail: appending a lease is a
	 * memcpy into the page cache (no system call per lease), which survives the process
	 * being killed. The space is reserved with fallocate (so a full disk is an error here,
	 * never a SIGBUS later) and filled with spaces, which load ignores (a torn line is
	 * never followed by a newline, so it stays incomplete and is dropped).
	 */
	char *map;	/* JOURNAL_WINDOW bytes of the file from win_off */
	size_t win_off; /* page-aligned file offset of the window */
	size_t map_off; /* file offset of the end of the data (while mapped) */
};

static size_t
find_slot(const struct leasefile *lf, const uint8_t mac[6], bool *found)
{
	size_t mask = lf->cap - 1, i = (size_t)hash_mac(mac) & mask, tomb = SIZE_MAX;

	for (;;) {
		const struct slot *s = &lf->slots[i];
		if (s->state == SLOT_EMPTY) {
			*found = false;
			return tomb != SIZE_MAX ? tomb : i;
		}
		if (s->state == SLOT_DELETED) {
			if (tomb == SIZE_MAX)
				tomb = i;
		} else if (memcmp(s->mac, mac, 6) == 0) {
			*found = true;
			return i;
		}
		i = (i + 1) & mask;
	}
}

static int
grow(struct leasefile *lf)
{
	size_t ncap = lf->cap == 0 ? 64 : lf->cap;
	struct slot *old = lf->slots;
	size_t ocap = lf->cap;

	/* keep the load (used + tombstones) under 1/2 */
	while ((lf->n + 1) * 2 > ncap)
		ncap *= 2;
	lf->slots = calloc(ncap, sizeof(*lf->slots));
	if (lf->slots == NULL) {
		lf->slots = old;
		return -ENOMEM;
	}
	lf->cap = ncap;
	lf->ndel = 0;
	for (size_t i = 0; i < ocap; i++) {
		bool found;
		if (old[i].state != SLOT_USED)
			continue;
		lf->slots[find_slot(lf, old[i].mac, &found)] = old[i];
	}
	free(old);
	return 0;
}

static int
table_put(struct leasefile *lf, const uint8_t mac[6], uint32_t ip)
{
	bool found;
	size_t i;
	int r;

	if ((lf->n + lf->ndel + 1) * 2 > lf->cap && (r = grow(lf)) < 0)
		return r;
	i = find_slot(lf, mac, &found);
	if (!found) {
		if (lf->slots[i].state == SLOT_DELETED)
			lf->ndel--;
		memcpy(lf->slots[i].mac, mac, 6);
		lf->slots[i].state = SLOT_USED;
		lf->n++;
	}
	lf->slots[i].ip = ip;
	return 0;
}

int
leasefile_lookup(const struct leasefile *lf, const uint8_t mac[6], uint32_t *ret_ip)
{
	bool found;
	size_t i;

	if (lf->cap == 0)
		return -ENOENT;
	i = find_slot(lf, mac, &found);
	if (!found)
		return -ENOENT;
	*ret_ip = lf->slots[i].ip;
	return 0;
}

int
leasefile_remove(struct leasefile *lf, const uint8_t mac[6])
{
	bool found;
	size_t i;

	if (lf->cap == 0)
		return -ENOENT;
	i = find_slot(lf, mac, &found);
	if (!found)
		return -ENOENT;
	lf->slots[i].state = SLOT_DELETED;
	lf->n--;
	lf->ndel++;
	return 0;
}

size_t
leasefile_count(const struct leasefile *lf)
{
	return lf->n;
}

size_t
leasefile_loaded(const struct leasefile *lf)
{
	return lf->loaded;
}

void
leasefile_foreach(const struct leasefile *lf,
    void (*fn)(void *userdata, const uint8_t mac[6], uint32_t ip), void *userdata)
{
	for (size_t i = 0; i < lf->cap; i++)
		if (lf->slots[i].state == SLOT_USED)
			fn(userdata, lf->slots[i].mac, lf->slots[i].ip);
}

static int
format_line(char *out, size_t n, const uint8_t mac[6], uint32_t ip)
{
	char m[MAC_STRLEN], a[IPV4_STRLEN];

	mac_format(mac, m);
	ipv4_format(ip, a);
	return snprintf(out, n, "%s %s\n", m, a);
}

/* Drops the mapping and cuts the file back to its data. */
static void
unmap_journal(struct leasefile *lf)
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
		unmap_journal(lf);
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
leasefile_add(struct leasefile *lf, const uint8_t mac[6], uint32_t ip)
{
	char line[LINE_MAX_LEN + 8];
	int r, len;

	/* room first: once the line is in the file, recording it in memory must not fail */
	if ((lf->n + lf->ndel + 1) * 2 > lf->cap && (r = grow(lf)) < 0)
		return r;
	if (lf->path != NULL) {
		/*
		 * The file first: a lease that is not in it would be lost at the next start and
		 * its address handed to another MAC while this one still uses it. On failure
		 * nothing changes (an earlier lease of the MAC stays), so the caller can undo.
		 */
		len = format_line(line, sizeof(line), mac, ip);
		if ((r = journal_append(lf, line, (size_t)len)) < 0) {
			lf->append_errors++;
			return r;
		}
	}
	return table_put(lf, mac, ip); /* cannot fail: room was made above */
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

int
leasefile_compact(struct leasefile *lf)
{
	size_t cap = sizeof(LEASEFILE_HEADER) + lf->n * LINE_MAX_LEN, len;
	char *text;
	int r, fd;

	if (lf->path == NULL)
		return 0;
	text = malloc(cap);
	if (text == NULL)
		return -ENOMEM;
	len = (size_t)snprintf(text, cap, "%s", LEASEFILE_HEADER);
	for (size_t i = 0; i < lf->cap; i++)
		if (lf->slots[i].state == SLOT_USED)
			len += (size_t)format_line(
			    text + len, cap - len, lf->slots[i].mac, lf->slots[i].ip);
	r = write_file_atomic(lf->path, text, len, 0644);
	free(text);
	if (r < 0)
		return r;
	/* everything mapped is in the snapshot now */
	if (lf->map != NULL) {
		munmap(lf->map, JOURNAL_WINDOW);
		lf->map = NULL;
	}
	lf->need_nl = false;
	/* the journal must follow the new inode; never the old one, which is gone */
	fd = open(lf->path, O_RDWR | O_APPEND | O_CLOEXEC);
	if (lf->fd >= 0)
		close(lf->fd);
	lf->fd = fd;
	if (fd < 0)
		return -errno;
	if ((r = map_journal(lf, len)) < 0) {
		if (ftruncate(fd, (off_t)len) < 0) /* undo a reservation that could not be mapped */
			return -errno;
		log_debug(
		    "%s: journal not mapped (%s): one write() per lease", lf->path, strerror(-r));
	}
	return 0;
}

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

static void
quarantine_add(struct leasefile *lf, struct quarantine *q, const char *p, size_t n, unsigned lineno,
    const char *why)
{
	if (q->lines++ == 0) {
		q->first_lineno = lineno;
		q->first_why = why;
	}
	q->bytes += n;
	if (q->lines <= QUARANTINE_LOG_LINES)
		log_debug(
		    "%s: line %u: %s (%zu bytes): moved to %s", lf->path, lineno, why, n, q->path);
	if (q->err != 0)
		return;
	if (q->fd < 0) {
		q->fd = open(q->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
		if (q->fd < 0) {
			q->err = -errno;
			return;
		}
	}
	while (n > 0) {
		ssize_t w = write(q->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			q->err = w < 0 ? -errno : -EIO;
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

/* Makes the quarantined bytes durable (before the rewrite removes them). Negative errno. */
static int
quarantine_sync(struct quarantine *q)
{
	char dir[4096];
	int fd;

	if (q->err != 0)
		return q->err;
	if (q->fd < 0)
		return 0;
	if (fsync(q->fd) < 0)
		return -errno;
	/* a new file's name too: write_file_atomic's rename must not be durable without it */
	snprintf(dir, sizeof(dir), "%s", q->path);
	fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	return 0;
}

/*
 * One line (n bytes, without its newline): NULL when it is a lease (*lease set), a comment or
 * blank; else why it is bad. CRLF endings are accepted (the CR is trailing white space).
 */
static const char *
parse_line(const char *s, size_t n, uint8_t mac[6], uint32_t *ip, bool *lease)
{
	char line[128], ms[64], is[64], extra[2];

	*lease = false;
	/* never ours; and sscanf would stop at it, reading "10.0.0.1\0" "5" as 10.0.0.1 */
	if (memchr(s, '\0', n) != NULL)
		return "NUL byte";
	/* spaces before a line: the journal's reserve when it could not be trimmed */
	while (n > 0 && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	if (n == 0 || *s == '#')
		return NULL;
	if (n >= sizeof(line))
		return "line too long";
	memcpy(line, s, n);
	line[n] = '\0';
	if (sscanf(line, "%63s %63s %1s", ms, is, extra) != 2)
		return "expected \"MAC IP\"";
	if (mac_parse(ms, mac) < 0)
		return "not a MAC address";
	if (ipv4_parse(is, ip) < 0)
		return "not an IPv4 address";
	*lease = true;
	return NULL;
}

/* Whether the n bytes after the last newline can be the start of a lease line. */
static bool
torn_line(const char *s, size_t n)
{
	size_t k = 0;

	while (k < n && s[k] == ' ')
		k++;
	if (n - k >= LINE_MAX_LEN)
		return false;
	for (; k < n; k++)
		if (s[k] == '\0' || strchr("0123456789abcdefABCDEF:-. ", s[k]) == NULL)
			return false;
	return true;
}

/* Loads text into lf's table; bad lines go to q. 0 or -ENOMEM. */
static int
parse(struct leasefile *lf, const char *text, size_t len, struct quarantine *q)
{
	const char *p = text, *end = text + len;
	unsigned lineno = 0;
	int r;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *why;
		uint8_t mac[6];
		uint32_t ip;
		bool lease;
		size_t n;

		lineno++;
		if (nl == NULL) {
			/* the journal's reserve (spaces; NULs where never written) is no data */
			n = (size_t)(end - p);
			while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\0'))
				n--;
			if (n == 0)
				break;
			if (torn_line(p, n))
				log_warn("%s: line %u: ignoring incomplete last line (interrupted "
					 "write)",
				    lf->path, lineno);
			else
				quarantine_add(lf, q, p, n, lineno, "incomplete last line");
			break;
		}
		n = (size_t)(nl - p);
		if ((why = parse_line(p, n, mac, &ip, &lease)) != NULL)
			quarantine_add(lf, q, p, n + 1, lineno, why);
		else if (lease && (r = table_put(lf, mac, ip)) < 0)
			return r;
		p = nl + 1;
	}
	return 0;
}

int
leasefile_open(const char *path, struct leasefile **ret, char *err, size_t errlen)
{
	struct leasefile *lf = calloc(1, sizeof(*lf));
	struct quarantine q = {.fd = -1};
	char *text = NULL;
	size_t len = 0;
	int r;

	if (lf == NULL || (path != NULL && (lf->path = strdup(path)) == NULL)) {
		free(lf);
		snprintf(err, errlen, "%s: out of memory", path != NULL ? path : "leases");
		return -ENOMEM;
	}
	lf->fd = -1;
	if (path == NULL) {
		*ret = lf;
		return 0;
	}
	r = read_file(path, LEASEFILE_MAX_SIZE, &text, &len);
	if (r < 0 && r != -ENOENT) {
		snprintf(err, errlen, "%s: cannot read lease file: %s", path, strerror(-r));
		goto out;
	}
	if (r >= 0) {
		if ((q.path = malloc(strlen(path) + sizeof(QUARANTINE_SUFFIX))) == NULL) {
			free(text);
			r = -ENOMEM;
			snprintf(err, errlen, "%s: out of memory", path);
			goto out;
		}
		strcpy(q.path, path);
		strcat(q.path, QUARANTINE_SUFFIX);
		r = parse(lf, text, len, &q);
		free(text);
		if (r < 0) {
			snprintf(err, errlen, "%s: out of memory", path);
			goto out;
		}
		if (q.lines > 0 && (r = quarantine_sync(&q)) < 0) {
			/* the rewrite would drop them: keep the file as it is, and do not start */
			snprintf(err, errlen,
			    "%s: %zu bad lines (first: line %u, %s) cannot be saved to %s: %s; "
			    "the lease file is left as it is",
			    path, q.lines, q.first_lineno, q.first_why, q.path, strerror(-r));
			goto out;
		}
		if (q.lines > 0)
			log_warn("%s: %zu bad lines (%zu bytes; first: line %u, %s) moved to %s; "
				 "%zu leases kept",
			    path, q.lines, q.bytes, q.first_lineno, q.first_why, q.path, lf->n);
	}
	lf->loaded = lf->n;
	lf->rejected = q.lines;
	if ((r = leasefile_compact(lf)) < 0) {
		snprintf(err, errlen, "%s: cannot write lease file: %s", path, strerror(-r));
		goto out;
	}
	r = 0;
	*ret = lf;
	lf = NULL;
out:
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
	unmap_journal(lf);
	if (lf->fd >= 0)
		close(lf->fd);
	free(lf->slots);
	free(lf->path);
	free(lf);
	return NULL;
}
