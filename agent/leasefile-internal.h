/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_LEASEFILE_INTERNAL_H
#define VMDHCP_AGENT_LEASEFILE_INTERNAL_H

/* What the lease file's parts share (agent/leasefile.h names them). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/leasefile.h"
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

/* A lease line read: its key is id (id_len bytes) when id_len > 0, else 0x01 + mac. */
struct line {
	uint8_t mac[6];
	uint32_t ip;
	uint8_t id[AGENT_ID_MAX];
	size_t id_len;
};

/* ---- leasefile-table.c: the key-indexed table ---- */

void lf_key_init(struct key *k, const uint8_t *id, size_t id_len, const uint8_t mac[6]);
/* Room for one more slot: after it, lf_table_put() cannot fail. -ENOMEM. */
int lf_table_reserve(struct leasefile *lf);
/*
 * Records key k -> mac, ip (lf_table_reserve() first). copy: k's bytes on the heap when the
 * lease needs them (k is not 0x01 + mac) and the slot does not hold them yet; taken.
 */
void lf_table_put(struct leasefile *lf, const struct key *k, const uint8_t mac[6], uint32_t ip,
    uint32_t seq, uint8_t *copy);
/*
 * The heap copy of k that lf_table_put() will need for mac (NULL when none is needed): made
 * before anything is written, so that a failure changes nothing. -ENOMEM.
 */
int lf_key_copy(
    const struct leasefile *lf, const struct key *k, const uint8_t mac[6], uint8_t **ret);
void lf_slot_delete(struct leasefile *lf, size_t i);

/* ---- leasefile-line.c: one line of the file ---- */

/* "MAC IP\n", or "MAC IP id=HEX\n" for a lease keyed by a client identifier; -1 when it does
 * not fit n bytes. */
int lf_format_line(
    char *out, size_t n, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip);
/*
 * One line (n bytes, without its newline): NULL when it is a lease (*lease set), a comment or
 * blank; else why it is bad. CRLF endings are accepted (the CR is trailing white space).
 */
const char *lf_parse_line(const char *s, size_t n, struct line *l, bool *lease);
/* Whether the n bytes after the last newline can be the start of a lease line. */
bool lf_torn_line(const char *s, size_t n);

/* ---- leasefile-journal.c: the journal, compaction, the watch on the path ---- */

/*
 * Writes the whole file atomically (PATH.tmp.PID, fsync, rename, fsync of the directory) and
 * makes it the journal: the fd written is kept, so the journal is the inode now at the path.
 * On failure, the file at the path and the journal are as they were. Negative errno.
 */
int lf_rewrite(struct leasefile *lf);
/* Errors that mean "cannot write here (now)", not a wrong path: serve without persistence. */
bool lf_not_writable(int r);
/* Stops writing the file (leases kept in memory only), with one warning. */
void lf_memory_only(struct leasefile *lf, int r, const char *why);
/* Drops the journal's mapping and cuts the file back to its data. */
void lf_unmap_journal(struct leasefile *lf);

#endif
