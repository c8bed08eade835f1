/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_LIB_MACTABLE_H
#define VMDHCP_LIB_MACTABLE_H

/*
 * A dense MAC <-> IPv4 table: at most one record per MAC and, with the address index, one per
 * address; found either way in O(1). Records are the caller's, of a size fixed at init, and
 * begin with the key: the MAC at offset 0, two bytes of the caller's, the IPv4 address (host
 * order) at offset 8 (struct mactable_key; a caller's type either starts with one or lays out
 * its first 12 bytes that way, checked with MACTABLE_RECORD_CHECK). What follows is the
 * caller's payload, zeroed when the record is inserted.
 *
 * The records sit in one dense array (no allocation and no pointer per record); beside it one
 * or two open-addressing indexes of 32-bit slots (linear probing, backward-shift deletion, so
 * no tombstones; at most 80 % full). A slot holds the record number (low 25 bits) and 7 bits of
 * the key's hash, so a probe reads a record only when those bits match: a miss costs no record
 * cache misses. Per record: rec_size (x1..x1.25 while the array grows) + 4 bytes x 1.25..1.9
 * slots per index.
 *
 * Removal moves the last record into the hole, so a record pointer (and an index for
 * mactable_at) is good until the next insert, delete, reserve or shrink. A sweep visits the
 * records a bounded number at a time from a cursor that wraps, for timers that reclaim
 * expired ones. Lookups never allocate. Pure: no logging.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The head of every record. */
struct mactable_key {
	uint8_t mac[6];
	uint8_t user[2]; /* the caller's */
	uint32_t ip;	 /* host order */
};

/* Whether type (a record) has its MAC field at offset 0 and its address field at offset 8. */
#define MACTABLE_RECORD_CHECK(type, mac_field, ip_field)                                           \
	_Static_assert(offsetof(type, mac_field) == offsetof(struct mactable_key, mac) &&          \
			   offsetof(type, ip_field) == offsetof(struct mactable_key, ip) &&        \
			   sizeof(((type *)0)->ip_field) == 4,                                     \
	    #type " is laid out as struct mactable_key")

/* At most this many records (an IPAM range of 2^24 addresses fits). */
#define MACTABLE_MAX ((size_t)0x01fffffe)

/* Embeddable; the fields are the table's. */
struct mactable {
	unsigned char *recs; /* n records of rec_size bytes, recs_cap allocated */
	size_t rec_size;
	size_t n, recs_cap;
	uint32_t *by_mac, *by_ip; /* index slots; by_ip NULL without the address index */
	size_t slots;		  /* per index; 0 before the first insert or reserve */
	size_t cursor;		  /* where the next sweep starts */
	bool ip_index;
};

/*
 * An empty table of records of rec_size bytes (>= sizeof(struct mactable_key)), with an
 * address index (one MAC per address) when ip_index; no allocation.
 */
void mactable_init(struct mactable *t, size_t rec_size, bool ip_index);
/* Frees the table's memory (not what payloads point to: walk the records first). */
void mactable_destroy(struct mactable *t);
/* Drops every record; the memory stays for the next inserts. */
void mactable_clear(struct mactable *t);

static inline size_t
mactable_count(const struct mactable *t)
{
	return t->n;
}

/* Record i of [0, count): dense, in no particular order. */
static inline void *
mactable_at(const struct mactable *t, size_t i)
{
	return t->recs + i * t->rec_size;
}

/* The record of a MAC / of an address (NULL without the address index), or NULL. */
void *mactable_find_mac(const struct mactable *t, const uint8_t mac[6]);
void *mactable_find_ip(const struct mactable *t, uint32_t ip);

/* Room for n records: until the count passes n, an insert cannot fail with -ENOMEM. */
int mactable_reserve(struct mactable *t, size_t n);
/* Gives back what the records and the indexes do not need now (after mass deletes). */
void mactable_shrink(struct mactable *t);
/*
 * A new record of mac and ip (payload zeroed) in *ret: 0, -EEXIST when the MAC or (with the
 * address index) the address has a record already, -ENOMEM; the table unchanged on error.
 */
int mactable_insert(struct mactable *t, const uint8_t mac[6], uint32_t ip, void **ret);
/*
 * Moves record rec to ip (payload kept): 0, or -EEXIST when another record holds ip (with the
 * address index; without, the address is just set).
 */
int mactable_set_ip(struct mactable *t, void *rec, uint32_t ip);
/* Deletes record rec; the last record moves into its place. */
void mactable_delete(struct mactable *t, void *rec);

/*
 * Calls fn on up to budget records from the cursor on (wrapping). fn returns true when it
 * deleted the record it was given, which is then looked at again (the last record moved
 * there). Returns the number of calls.
 */
size_t mactable_sweep(
    struct mactable *t, size_t budget, bool (*fn)(void *rec, void *userdata), void *userdata);

/* Bytes of heap the table holds (records and indexes). */
size_t mactable_memory(const struct mactable *t);

#endif
