/* SPDX-License-Identifier: Apache-2.0 */
/* The dense MAC <-> IPv4 table (see mactable.h): records, two tagged open-addressing indexes. */
#include "lib/mactable.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

/* An index slot: tag << 25 | record number, or EMPTY. */
#define EMPTY UINT32_MAX
#define REC_BITS 25
#define REC_MASK ((UINT32_C(1) << REC_BITS) - 1)
#define MIN_SLOTS 64u
#define MIN_RECS 64u

_Static_assert(MACTABLE_MAX < REC_MASK, "a record number never makes a slot EMPTY");

static inline unsigned char *
rec_at(const struct mactable *t, uint32_t r)
{
	return t->recs + (size_t)r * t->rec_size;
}

static inline const struct mactable_key *
key_at(const struct mactable *t, uint32_t r)
{
	return (const struct mactable_key *)(const void *)rec_at(t, r);
}

static inline uint32_t
rec_no(const struct mactable *t, const void *rec)
{
	return (uint32_t)(((const unsigned char *)rec - t->recs) / t->rec_size);
}

/* Maps a 64-bit hash onto [0, slots) with its high bits (Lemire's multiply-shift). */
static inline size_t
reduce(uint64_t h, size_t slots)
{
	return (size_t)(((h >> 32) * (uint64_t)slots) >> 32);
}

static inline uint32_t
tag_of(uint64_t h)
{
	return (uint32_t)(h & 0x7f) << REC_BITS;
}

static inline size_t
next_slot(const struct mactable *t, size_t i)
{
	return i + 1 == t->slots ? 0 : i + 1;
}

static inline uint64_t
hash_ip(uint32_t ip)
{
	uint64_t v = ip;

	v = (v ^ (v >> 16)) * UINT64_C(0x45d9f3b3335b369);
	v ^= v >> 29;
	v *= UINT64_C(0xbf58476d1ce4e5b9);
	return v ^ (v >> 32);
}

static inline uint64_t
hash_of(const struct mactable *t, const uint32_t *index, uint32_t r)
{
	return index == t->by_mac ? hash_mac(key_at(t, r)->mac) : hash_ip(key_at(t, r)->ip);
}

/* Slot of mac in by_mac, or the empty slot where it would go (slots > 0). */
static size_t
mac_slot(const struct mactable *t, const uint8_t mac[6], uint64_t h)
{
	uint32_t tag = tag_of(h);
	size_t i = reduce(h, t->slots);

	for (;;) {
		uint32_t e = t->by_mac[i];

		if (e == EMPTY ||
		    ((e & ~REC_MASK) == tag && memcmp(key_at(t, e & REC_MASK)->mac, mac, 6) == 0))
			return i;
		i = next_slot(t, i);
	}
}

static size_t
ip_slot(const struct mactable *t, uint32_t ip, uint64_t h)
{
	uint32_t tag = tag_of(h);
	size_t i = reduce(h, t->slots);

	for (;;) {
		uint32_t e = t->by_ip[i];

		if (e == EMPTY || ((e & ~REC_MASK) == tag && key_at(t, e & REC_MASK)->ip == ip))
			return i;
		i = next_slot(t, i);
	}
}

/* Slot in index that holds record number r (it must be there). */
static size_t
slot_of(const struct mactable *t, const uint32_t *index, uint32_t r)
{
	size_t i = reduce(hash_of(t, index, r), t->slots);

	while ((index[i] & REC_MASK) != r)
		i = next_slot(t, i);
	return i;
}

/* Puts record r into index at the first empty slot from its home (its key is not there). */
static void
index_put(const struct mactable *t, uint32_t *index, uint32_t r)
{
	uint64_t h = hash_of(t, index, r);
	size_t i = reduce(h, t->slots);

	while (index[i] != EMPTY)
		i = next_slot(t, i);
	index[i] = tag_of(h) | r;
}

/* Backward-shift deletion for linear probing: no tombstones, probes stay short. */
static void
index_delete(const struct mactable *t, uint32_t *index, size_t i)
{
	size_t j = i;

	for (;;) {
		size_t k;

		j = next_slot(t, j);
		if (index[j] == EMPTY)
			break;
		k = reduce(hash_of(t, index, index[j] & REC_MASK), t->slots);
		/* move index[j] to the hole at i unless its home lies cyclically in (i, j] */
		if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		index[i] = index[j];
		i = j;
	}
	index[i] = EMPTY;
}

/* Both indexes anew with slots slots each. -ENOMEM: the old ones stay. */
static int
rehash(struct mactable *t, size_t slots)
{
	uint32_t *m = malloc(slots * sizeof(*m));
	uint32_t *a = t->ip_index ? malloc(slots * sizeof(*a)) : NULL;

	if (m == NULL || (t->ip_index && a == NULL)) {
		free(m);
		free(a);
		return -ENOMEM;
	}
	memset(m, 0xff, slots * sizeof(*m));
	if (a != NULL)
		memset(a, 0xff, slots * sizeof(*a));
	free(t->by_mac);
	free(t->by_ip);
	t->by_mac = m;
	t->by_ip = a;
	t->slots = slots;
	for (uint32_t r = 0; r < t->n; r++) {
		index_put(t, t->by_mac, r);
		if (a != NULL)
			index_put(t, t->by_ip, r);
	}
	return 0;
}

void
mactable_init(struct mactable *t, size_t rec_size, bool ip_index)
{
	*t = (struct mactable){.rec_size = rec_size, .ip_index = ip_index};
}

void
mactable_destroy(struct mactable *t)
{
	free(t->recs);
	free(t->by_mac);
	free(t->by_ip);
	mactable_init(t, t->rec_size, t->ip_index);
}

void
mactable_clear(struct mactable *t)
{
	t->n = 0;
	t->cursor = 0;
	if (t->slots != 0) {
		memset(t->by_mac, 0xff, t->slots * sizeof(*t->by_mac));
		if (t->by_ip != NULL)
			memset(t->by_ip, 0xff, t->slots * sizeof(*t->by_ip));
	}
}

void *
mactable_find_mac(const struct mactable *t, const uint8_t mac[6])
{
	uint32_t e;

	if (t->n == 0)
		return NULL;
	e = t->by_mac[mac_slot(t, mac, hash_mac(mac))];
	return e != EMPTY ? rec_at(t, e & REC_MASK) : NULL;
}

void *
mactable_find_ip(const struct mactable *t, uint32_t ip)
{
	uint32_t e;

	if (t->n == 0 || t->by_ip == NULL)
		return NULL;
	e = t->by_ip[ip_slot(t, ip, hash_ip(ip))];
	return e != EMPTY ? rec_at(t, e & REC_MASK) : NULL;
}

int
mactable_reserve(struct mactable *t, size_t n)
{
	size_t slots = t->slots != 0 ? t->slots : MIN_SLOTS;

	if (n > MACTABLE_MAX)
		return -ENOMEM;
	if (n > t->recs_cap) {
		/* grow by a quarter: records are most of the memory */
		size_t cap = t->recs_cap < MIN_RECS ? MIN_RECS : t->recs_cap + t->recs_cap / 4;
		unsigned char *r;

		cap = MAX(cap, n);
		if (cap > SIZE_MAX / t->rec_size ||
		    (r = realloc(t->recs, cap * t->rec_size)) == NULL)
			return -ENOMEM;
		t->recs = r;
		t->recs_cap = cap;
	}
	/* load factor at most 0.8; grow by half */
	while (n * 5 > slots * 4)
		slots += slots / 2;
	if (slots != t->slots)
		return rehash(t, slots);
	return 0;
}

void
mactable_shrink(struct mactable *t)
{
	size_t slots = MIN_SLOTS;
	unsigned char *r;

	if (t->n == 0) {
		mactable_destroy(t);
		return;
	}
	while (t->n * 5 > slots * 4)
		slots += slots / 2;
	if (slots < t->slots)
		(void)rehash(t, slots); /* -ENOMEM: the bigger ones stay, correct */
	if (t->n < t->recs_cap && (r = realloc(t->recs, t->n * t->rec_size)) != NULL) {
		t->recs = r;
		t->recs_cap = t->n;
	}
}

int
mactable_insert(struct mactable *t, const uint8_t mac[6], uint32_t ip, void **ret)
{
	struct mactable_key *k;
	uint32_t r = (uint32_t)t->n;
	int err;

	if (mactable_find_mac(t, mac) != NULL || mactable_find_ip(t, ip) != NULL)
		return -EEXIST;
	if ((err = mactable_reserve(t, t->n + 1)) < 0)
		return err;
	k = (struct mactable_key *)(void *)rec_at(t, r);
	memset(k, 0, t->rec_size);
	memcpy(k->mac, mac, 6);
	k->ip = ip;
	t->n++;
	index_put(t, t->by_mac, r);
	if (t->by_ip != NULL)
		index_put(t, t->by_ip, r);
	*ret = k;
	return 0;
}

int
mactable_set_ip(struct mactable *t, void *rec, uint32_t ip)
{
	struct mactable_key *k = rec;
	const void *o;

	if (t->by_ip == NULL) {
		k->ip = ip;
		return 0;
	}
	if ((o = mactable_find_ip(t, ip)) == rec)
		return 0;
	if (o != NULL)
		return -EEXIST;
	index_delete(t, t->by_ip, slot_of(t, t->by_ip, rec_no(t, rec)));
	k->ip = ip;
	index_put(t, t->by_ip, rec_no(t, rec));
	return 0;
}

void
mactable_delete(struct mactable *t, void *rec)
{
	uint32_t r = rec_no(t, rec), last = (uint32_t)(t->n - 1);

	index_delete(t, t->by_mac, slot_of(t, t->by_mac, r));
	if (t->by_ip != NULL)
		index_delete(t, t->by_ip, slot_of(t, t->by_ip, r));
	if (r != last) {
		/* the last record moves into the hole; its slots point at it there */
		size_t ms = slot_of(t, t->by_mac, last);

		t->by_mac[ms] = (t->by_mac[ms] & ~REC_MASK) | r;
		if (t->by_ip != NULL) {
			size_t is = slot_of(t, t->by_ip, last);

			t->by_ip[is] = (t->by_ip[is] & ~REC_MASK) | r;
		}
		memcpy(rec, rec_at(t, last), t->rec_size);
	}
	t->n--;
}

size_t
mactable_sweep(
    struct mactable *t, size_t budget, bool (*fn)(void *rec, void *userdata), void *userdata)
{
	size_t calls = 0;

	for (; calls < budget && t->n > 0; calls++) {
		if (t->cursor >= t->n)
			t->cursor = 0;
		if (fn(rec_at(t, (uint32_t)t->cursor), userdata))
			continue; /* the last record moved here: look at it too */
		t->cursor++;
	}
	return calls;
}

size_t
mactable_memory(const struct mactable *t)
{
	return t->recs_cap * t->rec_size + (t->ip_index ? 2 : 1) * t->slots * sizeof(uint32_t);
}
