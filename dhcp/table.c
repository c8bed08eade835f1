/* SPDX-License-Identifier: Apache-2.0 */
/* MAC -> binding table: dense records + two open-addressing indexes + a hostname pool. */
#include "dhcp/table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"

/*
 * An index slot holds a record number (low 24 bits) and 8 bits of the key's hash (tag), so
 * a probe only touches the record when the tags match: a miss costs no record cache misses.
 */
#define EMPTY UINT32_MAX
#define REC_MASK 0x00ffffffu
#define MAX_RECS (REC_MASK - 1)
#define MIN_CAP 64u
#define HOSTNAME_MAX 63u

struct dhcp_table {
	struct dhcp_binding *recs; /* dense: 0..n-1 */
	size_t n, recs_cap;
	uint32_t *by_mac; /* index slots: tag << 24 | record number, or EMPTY */
	uint32_t *by_ip;
	size_t cap; /* slots per index (any size: homes by multiply-shift) */
	char *pool; /* hostnames, NUL-terminated; offset 0 unused */
	size_t pool_len, pool_cap, pool_garbage;
};

/* Maps a 64-bit hash onto [0, cap) with its high bits (Lemire's multiply-shift). */
static inline size_t
reduce(uint64_t h, size_t cap)
{
	return (size_t)(((h >> 32) * (uint64_t)cap) >> 32);
}

static inline size_t
next_slot(const struct dhcp_table *t, size_t i)
{
	return i + 1 == t->cap ? 0 : i + 1;
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

static inline uint32_t
tag_of(uint64_t h)
{
	return (uint32_t)(h & 0xff) << 24;
}

static size_t
home_of(const struct dhcp_table *t, const uint32_t *index, uint32_t entry)
{
	const struct dhcp_binding *b = &t->recs[entry & REC_MASK];

	return reduce(index == t->by_mac ? hash_mac(b->mac) : hash_ip(b->ip), t->cap);
}

int
dhcp_table_new(struct dhcp_table **ret)
{
	struct dhcp_table *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -ENOMEM;
	t->cap = MIN_CAP;
	t->by_mac = malloc(t->cap * sizeof(uint32_t));
	t->by_ip = malloc(t->cap * sizeof(uint32_t));
	if (t->by_mac == NULL || t->by_ip == NULL) {
		dhcp_table_free(t);
		return -ENOMEM;
	}
	memset(t->by_mac, 0xff, t->cap * sizeof(uint32_t));
	memset(t->by_ip, 0xff, t->cap * sizeof(uint32_t));
	*ret = t;
	return 0;
}

struct dhcp_table *
dhcp_table_free(struct dhcp_table *t)
{
	if (t == NULL)
		return NULL;
	free(t->recs);
	free(t->by_mac);
	free(t->by_ip);
	free(t->pool);
	free(t);
	return NULL;
}

/*
 * Slot holding mac (*found) or the empty slot where it would go; *ret_tag gets the tag to
 * store with it.
 */
static size_t
find_mac_slot(const struct dhcp_table *t, const uint8_t mac[6], bool *found, uint32_t *ret_tag)
{
	uint64_t h = hash_mac(mac);
	uint32_t tag = tag_of(h);
	size_t i = reduce(h, t->cap);

	*ret_tag = tag;
	for (;;) {
		uint32_t e = t->by_mac[i];

		if (e == EMPTY) {
			*found = false;
			return i;
		}
		if ((e & ~REC_MASK) == tag && memcmp(t->recs[e & REC_MASK].mac, mac, 6) == 0) {
			*found = true;
			return i;
		}
		i = next_slot(t, i);
	}
}

static size_t
find_ip_slot(const struct dhcp_table *t, uint32_t ip, bool *found, uint32_t *ret_tag)
{
	uint64_t h = hash_ip(ip);
	uint32_t tag = tag_of(h);
	size_t i = reduce(h, t->cap);

	*ret_tag = tag;
	for (;;) {
		uint32_t e = t->by_ip[i];

		if (e == EMPTY) {
			*found = false;
			return i;
		}
		if ((e & ~REC_MASK) == tag && t->recs[e & REC_MASK].ip == ip) {
			*found = true;
			return i;
		}
		i = next_slot(t, i);
	}
}

/* Backward-shift deletion for linear probing: no tombstones, probes stay short. */
static void
index_delete(struct dhcp_table *t, uint32_t *index, size_t i)
{
	size_t j = i;

	for (;;) {
		size_t k;

		j = next_slot(t, j);
		if (index[j] == EMPTY)
			break;
		k = home_of(t, index, index[j]);
		/* move index[j] to the hole at i unless its home lies cyclically in (i, j] */
		if ((j > i && (k <= i || k > j)) || (j < i && (k <= i && k > j))) {
			index[i] = index[j];
			i = j;
		}
	}
	index[i] = EMPTY;
}

/* Slot in index that holds record number rec (it must be there). */
static size_t
slot_of(const struct dhcp_table *t, const uint32_t *index, uint32_t rec)
{
	size_t i = reduce(
	    index == t->by_mac ? hash_mac(t->recs[rec].mac) : hash_ip(t->recs[rec].ip), t->cap);

	while ((index[i] & REC_MASK) != rec)
		i = next_slot(t, i);
	return i;
}

static int
rehash(struct dhcp_table *t, size_t cap)
{
	uint32_t *bm = malloc(cap * sizeof(uint32_t)), *bi = malloc(cap * sizeof(uint32_t));

	if (bm == NULL || bi == NULL) {
		free(bm);
		free(bi);
		return -ENOMEM;
	}
	memset(bm, 0xff, cap * sizeof(uint32_t));
	memset(bi, 0xff, cap * sizeof(uint32_t));
	free(t->by_mac);
	free(t->by_ip);
	t->by_mac = bm;
	t->by_ip = bi;
	t->cap = cap;
	for (uint32_t r = 0; r < t->n; r++) {
		uint32_t tag;
		bool found;
		size_t i;

		i = find_mac_slot(t, t->recs[r].mac, &found, &tag);
		t->by_mac[i] = tag | r;
		i = find_ip_slot(t, t->recs[r].ip, &found, &tag);
		t->by_ip[i] = tag | r;
	}
	return 0;
}

static void
pool_compact(struct dhcp_table *t)
{
	char *np;
	size_t len = 1;

	if (t->pool_garbage < 4096 || t->pool_garbage < t->pool_len / 2)
		return;
	np = malloc(t->pool_len - t->pool_garbage + 1);
	if (np == NULL)
		return; /* keep the garbage; correct, just bigger */
	np[0] = '\0';
	for (size_t r = 0; r < t->n; r++) {
		struct dhcp_binding *b = &t->recs[r];

		if (b->hostname_len == 0)
			continue;
		memcpy(np + len, t->pool + b->hostname_off, b->hostname_len + 1u);
		b->hostname_off = (uint32_t)len;
		len += b->hostname_len + 1u;
	}
	free(t->pool);
	t->pool = np;
	t->pool_len = t->pool_cap = len;
	t->pool_garbage = 0;
}

static int
pool_add(struct dhcp_table *t, const char *s, size_t n, uint32_t *ret_off)
{
	if (t->pool_len == 0)
		t->pool_len = 1; /* offset 0 means none */
	if (t->pool_len + n + 1 > t->pool_cap) {
		size_t cap = t->pool_cap < 1024 ? 1024 : t->pool_cap;
		char *np;

		while (cap < t->pool_len + n + 1)
			cap += cap / 4;
		if (cap > UINT32_MAX)
			return -ENOMEM;
		np = realloc(t->pool, cap);
		if (np == NULL)
			return -ENOMEM;
		t->pool = np;
		t->pool_cap = cap;
	}
	memcpy(t->pool + t->pool_len, s, n);
	t->pool[t->pool_len + n] = '\0';
	*ret_off = (uint32_t)t->pool_len;
	t->pool_len += n + 1;
	return 0;
}

static int
set_hostname(struct dhcp_table *t, struct dhcp_binding *b, const char *hostname, size_t n)
{
	uint32_t off = 0;
	int r;

	if (b->hostname_len == n && (n == 0 || memcmp(t->pool + b->hostname_off, hostname, n) == 0))
		return 0;
	if (n > 0) {
		r = pool_add(t, hostname, n, &off);
		if (r < 0)
			return r;
	}
	if (b->hostname_len > 0)
		t->pool_garbage += b->hostname_len + 1u;
	b->hostname_off = off;
	b->hostname_len = (uint8_t)n;
	return 0;
}

int
dhcp_table_set(struct dhcp_table *t, const uint8_t mac[6], uint32_t ip, const char *hostname)
{
	size_t hlen = hostname != NULL ? strnlen(hostname, HOSTNAME_MAX + 1) : 0;
	struct dhcp_binding *b;
	size_t mslot, islot;
	bool mfound, ifound;
	uint32_t mtag, itag;
	int r;

	if (ip == 0)
		return -EINVAL;
	if (hlen > HOSTNAME_MAX)
		hlen = HOSTNAME_MAX; /* option 12 carries one label's worth: truncate */
	islot = find_ip_slot(t, ip, &ifound, &itag);
	if (ifound && memcmp(t->recs[t->by_ip[islot] & REC_MASK].mac, mac, 6) != 0)
		return -EEXIST;
	mslot = find_mac_slot(t, mac, &mfound, &mtag);
	if (mfound) {
		uint32_t rec = t->by_mac[mslot] & REC_MASK;

		b = &t->recs[rec];
		r = set_hostname(t, b, hostname, hlen);
		if (r < 0)
			return r;
		if (b->ip != ip) {
			index_delete(t, t->by_ip, slot_of(t, t->by_ip, rec));
			b->ip = ip;
			islot = find_ip_slot(t, ip, &ifound, &itag);
			t->by_ip[islot] = itag | rec;
			b->flags &= (uint8_t)~DHCP_BINDING_DECLINED;
		}
		b->flags &= (uint8_t)~DHCP_BINDING_STALE;
		pool_compact(t);
		return 0;
	}
	if (t->n >= MAX_RECS)
		return -ENOMEM;
	if (t->n == t->recs_cap) {
		size_t cap = t->recs_cap < 64 ? 64 : t->recs_cap + t->recs_cap / 4;
		struct dhcp_binding *nr = realloc(t->recs, cap * sizeof(*nr));

		if (nr == NULL)
			return -ENOMEM;
		t->recs = nr;
		t->recs_cap = cap;
	}
	/* load factor at most 0.8; grow by half */
	if ((t->n + 1) * 5 > t->cap * 4) {
		r = rehash(t, t->cap + t->cap / 2);
		if (r < 0)
			return r;
	}
	b = &t->recs[t->n];
	memset(b, 0, sizeof(*b));
	memcpy(b->mac, mac, 6);
	b->ip = ip;
	r = set_hostname(t, b, hostname, hlen);
	if (r < 0)
		return r;
	mslot = find_mac_slot(t, mac, &mfound, &mtag);
	t->by_mac[mslot] = mtag | (uint32_t)t->n;
	islot = find_ip_slot(t, ip, &ifound, &itag);
	t->by_ip[islot] = itag | (uint32_t)t->n;
	t->n++;
	return 0;
}

static void
remove_rec(struct dhcp_table *t, uint32_t rec)
{
	uint32_t last = (uint32_t)(t->n - 1);
	struct dhcp_binding *b = &t->recs[rec];

	index_delete(t, t->by_mac, slot_of(t, t->by_mac, rec));
	index_delete(t, t->by_ip, slot_of(t, t->by_ip, rec));
	if (b->hostname_len > 0)
		t->pool_garbage += b->hostname_len + 1u;
	if (rec != last) {
		/* move the last record into the hole and repoint its index slots */
		size_t ms = slot_of(t, t->by_mac, last), is = slot_of(t, t->by_ip, last);

		t->recs[rec] = t->recs[last];
		t->by_mac[ms] = (t->by_mac[ms] & ~REC_MASK) | rec;
		t->by_ip[is] = (t->by_ip[is] & ~REC_MASK) | rec;
	}
	t->n--;
}

int
dhcp_table_remove(struct dhcp_table *t, const uint8_t mac[6])
{
	uint32_t tag;
	bool found;
	size_t slot = find_mac_slot(t, mac, &found, &tag);

	if (!found)
		return -ENOENT;
	remove_rec(t, t->by_mac[slot] & REC_MASK);
	pool_compact(t);
	return 0;
}

struct dhcp_binding *
dhcp_table_lookup(const struct dhcp_table *t, const uint8_t mac[6])
{
	uint32_t tag;
	bool found;
	size_t slot = find_mac_slot(t, mac, &found, &tag);

	return found ? &t->recs[t->by_mac[slot] & REC_MASK] : NULL;
}

struct dhcp_binding *
dhcp_table_lookup_ip(const struct dhcp_table *t, uint32_t ip)
{
	uint32_t tag;
	bool found;
	size_t slot = find_ip_slot(t, ip, &found, &tag);

	return found ? &t->recs[t->by_ip[slot] & REC_MASK] : NULL;
}

const char *
dhcp_table_hostname(const struct dhcp_table *t, const struct dhcp_binding *b)
{
	return b->hostname_len > 0 ? t->pool + b->hostname_off : NULL;
}

size_t
dhcp_table_size(const struct dhcp_table *t)
{
	return t->n;
}

void
dhcp_table_sync_begin(struct dhcp_table *t)
{
	for (size_t r = 0; r < t->n; r++)
		t->recs[r].flags |= DHCP_BINDING_STALE;
}

size_t
dhcp_table_sync_end(struct dhcp_table *t)
{
	size_t removed = 0;

	/* from the end: remove_rec moves the last record into the hole */
	for (size_t r = t->n; r-- > 0;) {
		if (t->recs[r].flags & DHCP_BINDING_STALE) {
			remove_rec(t, (uint32_t)r);
			removed++;
		}
	}
	pool_compact(t);
	return removed;
}

void
dhcp_table_foreach(const struct dhcp_table *t,
    void (*fn)(void *userdata, const uint8_t mac[6], uint32_t ip, const char *hostname),
    void *userdata)
{
	for (size_t r = 0; r < t->n; r++)
		fn(userdata, t->recs[r].mac, t->recs[r].ip, dhcp_table_hostname(t, &t->recs[r]));
}

size_t
dhcp_table_memory(const struct dhcp_table *t)
{
	return t->recs_cap * sizeof(struct dhcp_binding) + 2 * t->cap * sizeof(uint32_t) +
	       t->pool_cap;
}
