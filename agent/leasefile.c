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
 * Size: about 1200 lines: the strict line parser, the streamed load, the quarantine, the
 * append and compaction paths, the watch on the path and the key-indexed table share the
 * file's record of what is on disk. The table stays open addressing over 24-byte slots rather
 * than lib/hmap: a record per lease would cost about 0.5 MiB more at 65 000 leases against the
 * agent's 8 MiB bar.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/agent.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/util.h"

#define LEASEFILE_MAX_SIZE (256u << 20)
#define LEASEFILE_HEADER                                                                           \
	"# vm-dhcp-agent leases v2: MAC IP [id=CLIENT-ID], one per line; a later line wins over "  \
	"one with the same key (id, else MAC), address or MAC\n"
/* "MAC IP\n", and " id=" and two hex digits per identifier byte */
#define LINE_BASE_LEN (MAC_STRLEN + IPV4_STRLEN)
#define LINE_MAX_LEN (LINE_BASE_LEN + 4 + 2 * AGENT_ID_MAX + 2)
#define JOURNAL_WINDOW (256u << 10) /* mapped tail of the file; slides as it fills */
#define IO_CHUNK (64u << 10)	    /* load and rewrite go through one buffer of this size */
#define QUARANTINE_SUFFIX ".quarantine"
#define QUARANTINE_LOG_LINES 10 /* bad lines logged one by one (debug) */

enum { SLOT_EMPTY = 0, SLOT_USED = 1, SLOT_DELETED = 2 };

/*
 * One lease: 24 bytes, and the identifier's bytes on the heap for a lease keyed by one (a
 * lease keyed by its own MAC, 0x01 + mac, stores none).
 */
struct slot {
	uint8_t *id; /* the key's id_len bytes; NULL: the key is 0x01 + mac */
	uint32_t ip;
	uint32_t seq;	/* the line it was read from (which of two lines is later) */
	uint8_t mac[6]; /* the MAC the lease is bound to */
	uint8_t state;
	uint8_t id_len;
};

/* A key as bytes: the client identifier, or 0x01 + MAC in buf. */
struct key {
	const uint8_t *p;
	size_t len;
	uint8_t buf[7];
};

struct leasefile {
	char *path;
	int fd; /* journal, O_APPEND; -1 when closed */
	struct slot *slots;
	uint64_t seed; /* of the key hash: identifiers come from the network */
	size_t cap;    /* power of two */
	size_t n;      /* used */
	size_t ndel;   /* tombstones */
	size_t loaded;
	size_t rejected;	/* bad lines moved to the quarantine file at open */
	uint64_t append_errors; /* leases refused because their line could not be written */
	bool need_nl; /* a piece of a line could not be cut off: the next line starts anew */
	/*
	 * false: serving without persistence (the file cannot be written: a read-only
	 * directory, or the path was lost and cannot be recreated): leases are kept in memory
	 * only, and leasefile_check() tries to write them all again at every call.
	 */
	bool persistent;
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

bool
agent_id_is_mac(const uint8_t mac[6], const uint8_t *id, size_t id_len)
{
	return id == NULL || id_len < AGENT_ID_MIN ||
	       (id_len == 7 && id[0] == 1 && memcmp(id + 1, mac, 6) == 0);
}

static void
key_init(struct key *k, const uint8_t *id, size_t id_len, const uint8_t mac[6])
{
	if (!agent_id_is_mac(mac, id, id_len)) {
		k->p = id;
		k->len = id_len;
		return;
	}
	k->buf[0] = 1; /* htype: Ethernet */
	memcpy(k->buf + 1, mac, 6);
	k->p = k->buf;
	k->len = 7;
}

static bool
slot_has_key(const struct slot *s, const struct key *k)
{
	if (s->id == NULL)
		return k->len == 7 && k->p[0] == 1 && memcmp(k->p + 1, s->mac, 6) == 0;
	return s->id_len == k->len && memcmp(s->id, k->p, k->len) == 0;
}

static size_t
find_slot(const struct leasefile *lf, const struct key *k, bool *found)
{
	size_t mask = lf->cap - 1, i = (size_t)hash64(k->p, k->len, lf->seed) & mask;
	size_t tomb = SIZE_MAX;

	for (;;) {
		const struct slot *s = &lf->slots[i];
		if (s->state == SLOT_EMPTY) {
			*found = false;
			return tomb != SIZE_MAX ? tomb : i;
		}
		if (s->state == SLOT_DELETED) {
			if (tomb == SIZE_MAX)
				tomb = i;
		} else if (slot_has_key(s, k)) {
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
		struct key k;
		bool found;
		if (old[i].state != SLOT_USED)
			continue;
		key_init(&k, old[i].id, old[i].id_len, old[i].mac);
		lf->slots[find_slot(lf, &k, &found)] = old[i];
	}
	free(old);
	return 0;
}

/* Room for one more slot: after it, table_put() cannot fail. -ENOMEM. */
static int
table_reserve(struct leasefile *lf)
{
	if ((lf->n + lf->ndel + 1) * 2 > lf->cap)
		return grow(lf);
	return 0;
}

/*
 * Records key k -> mac, ip (table_reserve() first). copy: k's bytes on the heap when the lease
 * needs them (k is not 0x01 + mac) and the slot does not hold them yet; taken.
 */
static void
table_put(struct leasefile *lf, const struct key *k, const uint8_t mac[6], uint32_t ip,
    uint32_t seq, uint8_t *copy)
{
	bool found, own = agent_id_is_mac(mac, k->p, k->len);
	size_t i = find_slot(lf, k, &found);
	struct slot *s = &lf->slots[i];

	if (!found) {
		if (s->state == SLOT_DELETED)
			lf->ndel--;
		s->state = SLOT_USED;
		s->id = NULL;
		s->id_len = 0;
		lf->n++;
	}
	if (own) {
		/* the MAC form of its (new) MAC: no bytes to keep */
		free(s->id);
		s->id = NULL;
		s->id_len = 0;
	} else if (s->id == NULL) {
		s->id = copy;
		s->id_len = (uint8_t)k->len;
		copy = NULL;
	}
	free(copy);
	memcpy(s->mac, mac, 6);
	s->ip = ip;
	s->seq = seq;
}

/*
 * The heap copy of k that table_put() will need for mac (NULL when none is needed): made
 * before anything is written, so that a failure changes nothing. -ENOMEM.
 */
static int
key_copy(const struct leasefile *lf, const struct key *k, const uint8_t mac[6], uint8_t **ret)
{
	bool found = false;
	size_t i = 0;

	*ret = NULL;
	if (agent_id_is_mac(mac, k->p, k->len))
		return 0;
	if (lf->cap > 0)
		i = find_slot(lf, k, &found);
	if (found && lf->slots[i].id != NULL)
		return 0;
	if ((*ret = malloc(k->len)) == NULL)
		return -ENOMEM;
	memcpy(*ret, k->p, k->len);
	return 0;
}

int
leasefile_lookup_id(const struct leasefile *lf, const uint8_t *id, size_t id_len,
    const uint8_t mac[6], uint8_t ret_mac[6], uint32_t *ret_ip)
{
	struct key k;
	bool found;
	size_t i;

	if (lf->cap == 0)
		return -ENOENT;
	key_init(&k, id, id_len, mac);
	i = find_slot(lf, &k, &found);
	if (!found)
		return -ENOENT;
	if (ret_mac != NULL)
		memcpy(ret_mac, lf->slots[i].mac, 6);
	if (ret_ip != NULL)
		*ret_ip = lf->slots[i].ip;
	return 0;
}

int
leasefile_lookup(const struct leasefile *lf, const uint8_t mac[6], uint32_t *ret_ip)
{
	return leasefile_lookup_id(lf, NULL, 0, mac, NULL, ret_ip);
}

static void
slot_delete(struct leasefile *lf, size_t i)
{
	free(lf->slots[i].id);
	lf->slots[i].id = NULL;
	lf->slots[i].state = SLOT_DELETED;
	lf->n--;
	lf->ndel++;
}

int
leasefile_remove_id(struct leasefile *lf, const uint8_t *id, size_t id_len, const uint8_t mac[6])
{
	struct key k;
	bool found;
	size_t i;

	if (lf->cap == 0)
		return -ENOENT;
	key_init(&k, id, id_len, mac);
	i = find_slot(lf, &k, &found);
	if (!found)
		return -ENOENT;
	slot_delete(lf, i);
	return 0;
}

int
leasefile_remove(struct leasefile *lf, const uint8_t mac[6])
{
	return leasefile_remove_id(lf, NULL, 0, mac);
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

void
leasefile_foreach_id(const struct leasefile *lf,
    void (*fn)(void *userdata, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip),
    void *userdata)
{
	/* fn may remove its lease: that leaves a tombstone, nothing moves */
	for (size_t i = 0; i < lf->cap; i++)
		if (lf->slots[i].state == SLOT_USED)
			fn(userdata, lf->slots[i].id, lf->slots[i].id_len, lf->slots[i].mac,
			    lf->slots[i].ip);
}

/* "MAC IP\n", or "MAC IP id=HEX\n" for a lease keyed by a client identifier. */
static int
format_line(
    char *out, size_t n, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip)
{
	static const char hex[] = "0123456789abcdef";
	char m[MAC_STRLEN], a[IPV4_STRLEN];
	int len;

	mac_format(mac, m);
	ipv4_format(ip, a);
	if (id == NULL)
		return snprintf(out, n, "%s %s\n", m, a);
	len = snprintf(out, n, "%s %s id=", m, a);
	if (len < 0 || (size_t)len + 2 * id_len + 2 > n)
		return -1;
	for (size_t i = 0; i < id_len; i++) {
		out[len++] = hex[id[i] >> 4];
		out[len++] = hex[id[i] & 15];
	}
	out[len++] = '\n';
	out[len] = '\0';
	return len;
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
leasefile_add_id(
    struct leasefile *lf, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip)
{
	char line[LINE_MAX_LEN + 8];
	uint8_t *copy;
	struct key k;
	int r, len;

	if (id != NULL && id_len > AGENT_ID_MAX)
		return -EINVAL;
	key_init(&k, id, id_len, mac);
	/* room first: once the line is in the file, recording it in memory must not fail */
	if ((r = table_reserve(lf)) < 0 || (r = key_copy(lf, &k, mac, &copy)) < 0)
		return r;
	if (lf->path != NULL && lf->persistent) {
		/*
		 * The file first: a lease that is not in it would be lost at the next start and
		 * its address handed to another MAC while this one still uses it. On failure
		 * nothing changes (an earlier lease of the key stays), so the caller can undo.
		 */
		len = agent_id_is_mac(mac, k.p, k.len)
			  ? format_line(line, sizeof(line), NULL, 0, mac, ip)
			  : format_line(line, sizeof(line), k.p, k.len, mac, ip);
		if (len < 0 || (r = journal_append(lf, line, (size_t)len)) < 0) {
			lf->append_errors++;
			free(copy);
			return len < 0 ? -EINVAL : r;
		}
	}
	table_put(lf, &k, mac, ip, 0, copy); /* cannot fail: room was made above */
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

/* Writes n bytes to fd. Negative errno. */
static int
write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/*
 * The header and every lease, to fd through one IO_CHUNK buffer (never the whole text in
 * memory: 400 000 leases are ~20 MB of text); the bytes written in *ret_len.
 */
static int
write_leases(const struct leasefile *lf, int fd, size_t *ret_len)
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
			if ((r = write_all(fd, buf, n)) < 0)
				goto out;
			total += n;
			n = 0;
		}
		len = format_line(buf + n, IO_CHUNK - n, sl->id, sl->id_len, sl->mac, sl->ip);
		if (len < 0) {
			r = -EINVAL;
			goto out;
		}
		n += (size_t)len;
	}
	if ((r = write_all(fd, buf, n)) < 0)
		goto out;
	*ret_len = total + n;
out:
	free(buf);
	return r;
}

/*
 * Writes the whole file atomically (PATH.tmp.PID, fsync, rename, fsync of the directory) and
 * makes it the journal: the fd written is kept, so the journal is the inode now at the path.
 * On failure, the file at the path and the journal are as they were. Negative errno.
 */
static int
rewrite(struct leasefile *lf)
{
	char tmp[4096], dir[4096];
	size_t len = 0;
	int r, fd;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", lf->path, (long)getpid()) >=
	    sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_RDWR | O_APPEND | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if ((r = write_leases(lf, fd, &len)) < 0 || (fsync(fd) < 0 && (r = -errno) < 0) ||
	    (rename(tmp, lf->path) < 0 && (r = -errno) < 0)) {
		close(fd);
		unlink(tmp);
		return r;
	}
	snprintf(dir, sizeof(dir), "%s", lf->path);
	r = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r >= 0) {
		(void)fsync(r);
		close(r);
	}
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

/* Errors that mean "cannot write here (now)", not a wrong path: serve without persistence. */
static bool
not_writable(int r)
{
	return r == -EROFS || r == -EACCES || r == -EPERM || r == -ENOSPC || r == -EDQUOT;
}

/* Stops writing the file (leases kept in memory only), with one warning. */
static void
memory_only(struct leasefile *lf, int r, const char *why)
{
	if (!lf->persistent)
		return;
	lf->persistent = false;
	unmap_journal(lf);
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
	r = rewrite(lf);
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
	if ((r = rewrite(lf)) < 0) {
		memory_only(lf, r, "cannot recreate the lease file");
		return r;
	}
	return 1;
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
	if ((q->err = write_all(q->fd, p, n)) < 0)
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

static int
hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* "id=HEX": AGENT_ID_MIN..AGENT_ID_MAX bytes into id; their number, or -1. */
static int
parse_id(const char *s, uint8_t id[AGENT_ID_MAX])
{
	size_t n;

	if (strncmp(s, "id=", 3) != 0)
		return -1;
	s += 3;
	n = strlen(s);
	if (n % 2 != 0 || n / 2 < AGENT_ID_MIN || n / 2 > AGENT_ID_MAX)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		id[i] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}

/* A lease line read: its key is id (id_len bytes) when id_len > 0, else 0x01 + mac. */
struct line {
	uint8_t mac[6];
	uint32_t ip;
	uint8_t id[AGENT_ID_MAX];
	size_t id_len;
};

/*
 * One line (n bytes, without its newline): NULL when it is a lease (*lease set), a comment or
 * blank; else why it is bad. CRLF endings are accepted (the CR is trailing white space).
 */
static const char *
parse_line(const char *s, size_t n, struct line *l, bool *lease)
{
	char line[LINE_MAX_LEN + 16], ms[64], is[64], ids[576], extra[2];
	int fields, r;

	_Static_assert(LINE_MAX_LEN < sizeof(ids), "an id= field fits ids whole");

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
	if (n >= LINE_MAX_LEN)
		return "line too long";
	memcpy(line, s, n);
	line[n] = '\0';
	/* ids holds a whole line: an id= field is never cut */
	fields = sscanf(line, "%63s %63s %575s %1s", ms, is, ids, extra);
	if (fields != 2 && fields != 3)
		return "expected \"MAC IP [id=HEX]\"";
	if (mac_parse(ms, l->mac) < 0)
		return "not a MAC address";
	if (ipv4_parse(is, &l->ip) < 0)
		return "not an IPv4 address";
	l->id_len = 0;
	if (fields == 3) {
		if ((r = parse_id(ids, l->id)) < 0)
			return "not a client identifier (id= and 2 to 255 bytes in hex)";
		l->id_len = (size_t)r;
	}
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
		if (s[k] == '\0' || strchr("0123456789abcdefABCDEF:-. i=", s[k]) == NULL)
			return false;
	return true;
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

	if ((why = parse_line(p, n, &l, &lease)) != NULL) {
		quarantine_add(lf, q, p, n + 1, lineno, why);
	} else if (lease) {
		key_init(&k, l.id_len > 0 ? l.id : NULL, l.id_len, l.mac);
		if ((r = table_reserve(lf)) < 0 || (r = key_copy(lf, &k, l.mac, &copy)) < 0)
			return r;
		table_put(lf, &k, l.mac, l.ip, lineno, copy);
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
	if (torn_line(p, n))
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
				slot_delete(lf, refs[i].slot);
				dropped++;
				/* refs[i] stays the run's reference: same address or MAC */
				refs[i] = refs[i - 1];
			}
		}
	}
	free(refs);
	return dropped;
}

int
leasefile_open(const char *path, struct leasefile **ret, char *err, size_t errlen)
{
	struct leasefile *lf = calloc(1, sizeof(*lf));
	struct quarantine q = {.fd = -1};
	struct stat st;
	int r, fd = -1;

	if (lf == NULL || (path != NULL && (lf->path = strdup(path)) == NULL)) {
		free(lf);
		snprintf(err, errlen, "%s: out of memory", path != NULL ? path : "leases");
		return -ENOMEM;
	}
	lf->fd = -1;
	if (getrandom(&lf->seed, sizeof(lf->seed), GRND_NONBLOCK) != sizeof(lf->seed))
		lf->seed = clock_now_usec() ^ (uint64_t)(uintptr_t)lf;
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
	if (r >= 0) {
		if ((q.path = malloc(strlen(path) + sizeof(QUARANTINE_SUFFIX))) == NULL) {
			r = -ENOMEM;
			snprintf(err, errlen, "%s: out of memory", path);
			goto out;
		}
		strcpy(q.path, path);
		strcat(q.path, QUARANTINE_SUFFIX);
		r = load(lf, fd, &q);
		if (r < 0 && r != -ENOMEM) {
			snprintf(err, errlen, "%s: cannot read lease file: %s", path,
			    r == -EFBIG ? "larger than 256 MiB" : strerror(-r));
			goto out;
		}
		if (r >= 0 && (r = supersede(lf)) > 0)
			log_info(
			    "%s: %d leases superseded by later lines (the same address or MAC)",
			    path, r);
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
	lf->persistent = true;
	if ((r = rewrite(lf)) < 0) {
		if (!not_writable(r)) {
			/* a wrong path (no such directory, ...), or no memory: do not start */
			snprintf(
			    err, errlen, "%s: cannot write lease file: %s", path, strerror(-r));
			goto out;
		}
		/* a read-only directory or a full disk: serve, say so, try again later */
		memory_only(lf, r, "cannot write lease file");
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
	unmap_journal(lf);
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
