/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_LEASEFILE_H
#define VMDHCP_AGENT_LEASEFILE_H

/*
 * Local mode's lease file for --dynamic:
 *
 *   leasefile.c          open: the streamed load, the quarantine of bad lines, replay
 *   leasefile-line.c     the on-disk format: one lease line, formatted and parsed
 *   leasefile-table.c    the key-indexed table of leases in memory
 *   leasefile-journal.c  the append journal, compaction and the watch on the path
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The key of a --dynamic lease (RFC 2131 §4.2, RFC 2132 §9.14): the client identifier (option
 * 61) when the client sends one, else 0x01 (htype Ethernet) + its MAC, the form most clients
 * that send an identifier derive from their MAC anyway (so the two are one key, and a lease file
 * of v1, keyed by MAC, reads as it always did). An identifier shorter than AGENT_ID_MIN bytes
 * (RFC 2132's minimum) is taken for none. Functions taking a key take (id, id_len, mac): the
 * identifier, or NULL for 0x01 + mac.
 */
#define AGENT_ID_MIN 2
#define AGENT_ID_MAX 255 /* option 61's length is one byte */
/* Whether (id, id_len) sent from mac keys mac's own lease: none, too short, or 0x01 + mac. */
bool agent_id_is_mac(const uint8_t mac[6], const uint8_t *id, size_t id_len);

/*
 * The lease file is a text file, one "MAC IP" or "MAC IP id=HEX" line per lease: the MAC the
 * lease is bound to, its address and, for a lease keyed by a client identifier, that identifier
 * in hex (header "v2"; "v1" files, without id=, are read as MAC-keyed leases). A later line
 * wins over an earlier one with the same key; at open, of the leases left, a later line also
 * wins over one with the same address, then over one with the same MAC (a lease moved to a new
 * key of its MAC, an address expired and handed out again before a compaction). It is written
 * whole, atomically (temp + fsync + rename), at start, on reload and at exit; in between,
 * leasefile_add_id() appends each new or changed lease as one complete line before it records
 * it, so a crash or kill -9 loses nothing that was answered, and a lease that cannot be
 * written (disk full, I/O error) is refused: never answered, never handed out twice after a
 * restart. At open, a torn last line (no newline) is ignored with a warning; any other bad line
 * (NUL byte, garbage, bad MAC, address or identifier, too long) is copied byte for byte to
 * PATH.quarantine (appended, synced before the rewrite) and counted; the good leases around it
 * are kept. CRLF line endings are accepted. Per lease: a 24-byte slot (at most half full), and
 * the identifier's bytes for a lease keyed by one.
 */
struct leasefile;

/*
 * Opens path (created when missing; NULL keeps the leases in memory only): loads its leases,
 * quarantines bad lines, rewrites it compacted, opens the journal. Returns 0 and a new object
 * in *ret, or negative errno with err filled (unreadable file, no memory, the quarantine or the
 * rewrite cannot be written; bad content is never an error).
 */
int leasefile_open(const char *path, struct leasefile **ret, char *err, size_t errlen);
/* Closes and frees. Accepts NULL; returns NULL. */
struct leasefile *leasefile_free(struct leasefile *lf);
/*
 * Writes the line key (id, id_len, mac) -> bound to mac, ip to the journal, then records it in
 * memory, replacing the key's earlier lease. The caller keeps one lease per MAC and per address
 * (it removes the one a new key replaces). On failure (-ENOMEM, -EINVAL for an identifier over
 * AGENT_ID_MAX bytes, or the write's errno: -ENOSPC, -EIO, -EROFS, ...) nothing changes: not
 * in memory, not in the file (an earlier lease of the key stays), and
 * leasefile_append_errors() counts the write errors.
 */
int leasefile_add_id(
    struct leasefile *lf, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip);
/* The lease of key (id, id_len, mac): 0 with the MAC it is bound to and its address (either
 * output may be NULL), or -ENOENT. */
int leasefile_lookup_id(const struct leasefile *lf, const uint8_t *id, size_t id_len,
    const uint8_t mac[6], uint8_t ret_mac[6], uint32_t *ret_ip);
/* Forgets the key's lease (persisted at the next compaction). -ENOENT when absent. */
int leasefile_remove_id(
    struct leasefile *lf, const uint8_t *id, size_t id_len, const uint8_t mac[6]);
/* The same for the key 0x01 + mac (a lease keyed by its MAC). */
int leasefile_add(struct leasefile *lf, const uint8_t mac[6], uint32_t ip);
int leasefile_remove(struct leasefile *lf, const uint8_t mac[6]);
int leasefile_lookup(const struct leasefile *lf, const uint8_t mac[6], uint32_t *ret_ip);
size_t leasefile_count(const struct leasefile *lf);
/* Room for n leases in the table without growing it while serving (-ENOMEM). */
int leasefile_reserve(struct leasefile *lf, size_t n);
/* Every lease: the MAC it is bound to and its address. */
void leasefile_foreach(const struct leasefile *lf,
    void (*fn)(void *userdata, const uint8_t mac[6], uint32_t ip), void *userdata);
/*
 * Every lease with its key: id (borrowed, id_len bytes), or NULL when it is keyed by 0x01 +
 * mac. fn may remove the lease it is given (leasefile_remove_id), and change nothing else.
 */
void leasefile_foreach_id(const struct leasefile *lf,
    void (*fn)(void *userdata, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip),
    void *userdata);
/* Nothing is ever queued (leasefile_add writes each line itself): returns 0. */
int leasefile_flush(struct leasefile *lf);
/* Rewrites the whole file atomically from memory and reopens the journal (streamed through
 * a 64 KiB buffer). Without persistence: tries to, and returns 0 either way. */
int leasefile_compact(struct leasefile *lf);
/* Number of leases read from the file at open (for logs/tests). */
size_t leasefile_loaded(const struct leasefile *lf);
/* Bad lines moved to PATH.quarantine at open. */
size_t leasefile_rejected(const struct leasefile *lf);
/* Leases refused by leasefile_add because their line could not be written. */
uint64_t leasefile_append_errors(const struct leasefile *lf);
/*
 * Whether leases are written to the file (always true without a path). false: serving
 * without persistence: the file could not be written at open (a read-only directory or
 * file system, no permission, a full disk: one warning; any other error, such as a missing
 * directory, fails the open), or it was deleted or replaced and cannot be recreated. Leases
 * are then kept in memory only, and leasefile_check() or leasefile_compact() writing the file
 * ends that (one info line).
 */
bool leasefile_persistent(const struct leasefile *lf);
/*
 * Called periodically: when the file at the path is no longer the one the journal writes to
 * (deleted, or replaced by rename), warns once and writes every lease in memory to a new
 * file at the path; when serving without persistence, tries to write the file again.
 * Returns 1 when the file was (re)written, 0 when nothing was needed or it still cannot be
 * written, negative errno when a lost file could not be recreated (then memory only).
 */
int leasefile_check(struct leasefile *lf);

#endif
