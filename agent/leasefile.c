/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Local-mode lease file: MAC -> IP of the leases handed out by --dynamic.
 *
 * Format (text, one lease per line, later lines win for the same MAC):
 *     # vm-dhcp-agent leases v1
 *     52:54:00:12:34:56 10.0.0.10
 * The whole file is written atomically (write_file_atomic: temp + fsync + rename) when opened,
 * on reload and at exit; between those, each new lease is appended as a complete line by one
 * write() before its reply leaves. A crash can only tear the last line, which load ignores.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/agent.h"
#include "lib/log.h"
#include "lib/util.h"

#define LEASEFILE_MAX_SIZE (256u << 20)
#define LEASEFILE_HEADER "# vm-dhcp-agent leases v1: MAC IP, one per line, later lines win\n"
#define LINE_MAX_LEN (MAC_STRLEN + IPV4_STRLEN + 2)
#define JOURNAL_WINDOW (256u << 10) /* mapped tail of the file; slides as it fills */

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
	char *pending; /* journal lines not yet written (when the file is not mapped) */
	size_t pending_len, pending_cap;
	/*
	 * The journal is normally a shared mapping of the file's tail: appending a lease is a
	 * memcpy into the page cache (no system call per lease), which survives the process
	 * being killed. The space is reserved with fallocate (so a full disk is an error here,
	 * never a SIGBUS later) and filled with spaces, which load ignores (a torn line is
	 * never followed by a newline, so it stays incomplete and is dropped).
	 */
	char *map;	/* JOURNAL_WINDOW bytes of the file from win_off */
	size_t win_off; /* page-aligned file offset of the window */
	size_t map_off; /* file offset of the end of the data */
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

int
leasefile_add(struct leasefile *lf, const uint8_t mac[6], uint32_t ip)
{
	char line[LINE_MAX_LEN + 8];
	int r, len;

	if ((r = table_put(lf, mac, ip)) < 0)
		return r;
	if (lf->path == NULL)
		return 0; /* in memory only */
	len = format_line(line, sizeof(line), mac, ip);
	if (lf->map != NULL && lf->map_off + (size_t)len > lf->win_off + JOURNAL_WINDOW &&
	    map_journal(lf, lf->map_off) < 0)
		unmap_journal(lf); /* e.g. disk full: fall back to write() */
	if (lf->map != NULL) {
		memcpy(lf->map + (lf->map_off - lf->win_off), line, (size_t)len);
		lf->map_off += (size_t)len;
		return 0;
	}
	if (lf->pending_len + (size_t)len > lf->pending_cap) {
		size_t ncap = lf->pending_cap == 0 ? 4096 : lf->pending_cap * 2;
		char *p = realloc(lf->pending, ncap);
		if (p == NULL)
			return -ENOMEM;
		lf->pending = p;
		lf->pending_cap = ncap;
	}
	memcpy(lf->pending + lf->pending_len, line, (size_t)len);
	lf->pending_len += (size_t)len;
	return 0;
}

int
leasefile_flush(struct leasefile *lf)
{
	size_t off = 0;

	if (lf->pending_len == 0 || lf->path == NULL)
		return 0;
	if (lf->fd < 0)
		return -EBADF;
	while (off < lf->pending_len) {
		ssize_t n = write(lf->fd, lf->pending + off, lf->pending_len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (size_t)n;
	}
	lf->pending_len = 0;
	/* a large burst (first start of a big pool) need not keep its buffer */
	if (lf->pending_cap > (1u << 20)) {
		free(lf->pending);
		lf->pending = NULL;
		lf->pending_cap = 0;
	}
	return 0;
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
	/* everything queued or mapped is in the snapshot now */
	lf->pending_len = 0;
	if (lf->map != NULL) {
		munmap(lf->map, JOURNAL_WINDOW);
		lf->map = NULL;
	}
	/* the journal must follow the new inode */
	fd = open(lf->path, O_RDWR | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (lf->fd >= 0)
		close(lf->fd);
	lf->fd = fd;
	if ((r = map_journal(lf, len)) < 0) {
		if (ftruncate(fd, (off_t)len) < 0) /* undo a reservation that could not be mapped */
			return -errno;
		log_debug(
		    "%s: journal not mapped (%s): one write() per lease", lf->path, strerror(-r));
	}
	return 0;
}

/* Parses text into lf's table. Returns 0 or -EINVAL with err naming path and line. */
static int
parse(struct leasefile *lf, const char *text, size_t len, char *err, size_t errlen)
{
	const char *p = text,
		   *end = text + strnlen(text, len); /* a NUL (never ours) ends the data */
	unsigned lineno = 0;
	int r;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char line[128], ms[64], is[64], extra[2];
		uint8_t mac[6];
		uint32_t ip;
		size_t n;

		lineno++;
		if (nl == NULL) {
			size_t rest = (size_t)(end - p);
			/* the journal's reserved space is spaces; anything else was torn */
			if (strspn(p, " ") < rest)
				log_warn("%s: line %u: ignoring incomplete last line (interrupted "
					 "write)",
				    lf->path, lineno);
			break;
		}
		n = (size_t)(nl - p);
		if (n >= sizeof(line)) {
			snprintf(err, errlen, "%s: line %u: line too long", lf->path, lineno);
			return -EINVAL;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p = nl + 1;
		if (line[strspn(line, " \t\r")] == '\0' || line[strspn(line, " \t")] == '#')
			continue;
		if (sscanf(line, "%63s %63s %1s", ms, is, extra) != 2) {
			snprintf(err, errlen, "%s: line %u: expected \"MAC IP\", got \"%s\"",
			    lf->path, lineno, line);
			return -EINVAL;
		}
		if (mac_parse(ms, mac) < 0) {
			snprintf(err, errlen, "%s: line %u: \"%s\" is not a MAC address", lf->path,
			    lineno, ms);
			return -EINVAL;
		}
		if (ipv4_parse(is, &ip) < 0) {
			snprintf(err, errlen, "%s: line %u: \"%s\" is not an IPv4 address",
			    lf->path, lineno, is);
			return -EINVAL;
		}
		if ((r = table_put(lf, mac, ip)) < 0) {
			snprintf(err, errlen, "%s: out of memory", lf->path);
			return r;
		}
	}
	return 0;
}

int
leasefile_open(const char *path, struct leasefile **ret, char *err, size_t errlen)
{
	struct leasefile *lf = calloc(1, sizeof(*lf));
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
		goto fail;
	}
	if (r >= 0) {
		r = parse(lf, text, len, err, errlen);
		free(text);
		if (r < 0)
			goto fail;
	}
	lf->loaded = lf->n;
	if ((r = leasefile_compact(lf)) < 0) {
		snprintf(err, errlen, "%s: cannot write lease file: %s", path, strerror(-r));
		goto fail;
	}
	*ret = lf;
	return 0;
fail:
	leasefile_free(lf);
	return r;
}

struct leasefile *
leasefile_free(struct leasefile *lf)
{
	if (lf == NULL)
		return NULL;
	unmap_journal(lf);
	if (lf->fd >= 0) {
		int r = leasefile_flush(lf);
		if (r < 0)
			log_error("%s: cannot write lease file: %s", lf->path, strerror(-r));
		close(lf->fd);
	}
	free(lf->pending);
	free(lf->slots);
	free(lf->path);
	free(lf);
	return NULL;
}
