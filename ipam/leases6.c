/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam/leases6.c - the MAC <-> IPv6 ownership table (see ipam.h): dense records and two
 * tagged open-addressing indexes, the design of lib/mactable.c with a 16-byte address key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/ipam.h"

/* An index slot: tag << 25 | record number, or EMPTY. */
#define EMPTY UINT32_MAX
#define REC_BITS 25
#define REC_MASK ((UINT32_C(1) << REC_BITS) - 1)
#define MIN_SLOTS 64u
#define MIN_RECS 64u

_Static_assert(IPAM_LEASES6_MAX < REC_MASK, "a record number never makes a slot EMPTY");
_Static_assert(sizeof(struct ipam_lease6) == 24, "a bare record is 24 bytes");

static inline struct ipam_lease6 *
rec_at(const struct ipam_leases6 *t, uint32_t r)
{
	return (struct ipam_lease6 *)(void *)(t->recs + (size_t)r * t->rec_size);
}

static inline uint32_t
rec_no(const struct ipam_leases6 *t, const void *rec)
{
	return (uint32_t)(((const unsigned char *)rec - t->recs) / t->rec_size);
}

/* Maps a 64-bit hash onto [0, slots) with its high bits (multiply-shift). */
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
next_slot(const struct ipam_leases6 *t, size_t i)
{
	return i + 1 == t->slots ? 0 : i + 1;
}

static inline uint64_t
hash_of(const struct ipam_leases6 *t, const uint32_t *index, uint32_t r)
{
	const struct ipam_lease6 *l = rec_at(t, r);

	return index == t->by_mac ? hash_mac(l->mac) : ipv6_hash(&l->addr);
}

/* Slot of mac in by_mac, or the empty slot where it would go (slots > 0). */
static size_t
mac_slot(const struct ipam_leases6 *t, const uint8_t mac[MAC_LEN], uint64_t h)
{
	uint32_t tag = tag_of(h);
	size_t i = reduce(h, t->slots);

	for (;;) {
		uint32_t e = t->by_mac[i];

		if (e == EMPTY || ((e & ~REC_MASK) == tag &&
				      memcmp(rec_at(t, e & REC_MASK)->mac, mac, MAC_LEN) == 0))
			return i;
		i = next_slot(t, i);
	}
}

static size_t
addr_slot(const struct ipam_leases6 *t, const struct in6_addr *addr, uint64_t h)
{
	uint32_t tag = tag_of(h);
	size_t i = reduce(h, t->slots);

	for (;;) {
		uint32_t e = t->by_addr[i];

		if (e == EMPTY ||
		    ((e & ~REC_MASK) == tag && ipv6_equal(&rec_at(t, e & REC_MASK)->addr, addr)))
			return i;
		i = next_slot(t, i);
	}
}

/* Slot in index that holds record number r (it must be there). */
static size_t
slot_of(const struct ipam_leases6 *t, const uint32_t *index, uint32_t r)
{
	size_t i = reduce(hash_of(t, index, r), t->slots);

	while ((index[i] & REC_MASK) != r)
		i = next_slot(t, i);
	return i;
}

/* Puts record r into index at the first empty slot from its home (its key is not there). */
static void
index_put(const struct ipam_leases6 *t, uint32_t *index, uint32_t r)
{
	uint64_t h = hash_of(t, index, r);
	size_t i = reduce(h, t->slots);

	while (index[i] != EMPTY)
		i = next_slot(t, i);
	index[i] = tag_of(h) | r;
}

/* Backward-shift deletion for linear probing: no tombstones, probes stay short. */
static void
index_delete(const struct ipam_leases6 *t, uint32_t *index, size_t i)
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
rehash(struct ipam_leases6 *t, size_t slots)
{
	uint32_t *m = malloc(slots * sizeof(*m));
	uint32_t *a = t->addr_index ? malloc(slots * sizeof(*a)) : NULL;

	if (m == NULL || (t->addr_index && a == NULL)) {
		free(m);
		free(a);
		return -ENOMEM;
	}
	memset(m, 0xff, slots * sizeof(*m));
	if (a != NULL)
		memset(a, 0xff, slots * sizeof(*a));
	free(t->by_mac);
	free(t->by_addr);
	t->by_mac = m;
	t->by_addr = a;
	t->slots = slots;
	for (uint32_t r = 0; r < t->n; r++) {
		index_put(t, t->by_mac, r);
		if (a != NULL)
			index_put(t, t->by_addr, r);
	}
	return 0;
}

void
ipam_leases6_init(struct ipam_leases6 *t, size_t rec_size, bool by_addr)
{
	*t = (struct ipam_leases6){.rec_size = rec_size, .addr_index = by_addr};
}

void
ipam_leases6_destroy(struct ipam_leases6 *t)
{
	free(t->recs);
	free(t->by_mac);
	free(t->by_addr);
	ipam_leases6_init(t, t->rec_size, t->addr_index);
}

void
ipam_leases6_clear(struct ipam_leases6 *t)
{
	t->n = 0;
	t->cursor = 0;
	if (t->slots != 0) {
		memset(t->by_mac, 0xff, t->slots * sizeof(*t->by_mac));
		if (t->by_addr != NULL)
			memset(t->by_addr, 0xff, t->slots * sizeof(*t->by_addr));
	}
}

int
ipam_leases6_new(size_t rec_size, bool by_addr, struct ipam_leases6 **ret)
{
	struct ipam_leases6 *t;

	if (rec_size < sizeof(struct ipam_lease6))
		return -EINVAL;
	if ((t = malloc(sizeof(*t))) == NULL)
		return -ENOMEM;
	ipam_leases6_init(t, rec_size, by_addr);
	*ret = t;
	return 0;
}

struct ipam_leases6 *
ipam_leases6_free(struct ipam_leases6 *t)
{
	if (t != NULL) {
		ipam_leases6_destroy(t);
		free(t);
	}
	return NULL;
}

struct ipam_lease6 *
ipam_leases6_by_mac(const struct ipam_leases6 *t, const uint8_t mac[MAC_LEN])
{
	uint32_t e;

	if (t->n == 0)
		return NULL;
	e = t->by_mac[mac_slot(t, mac, hash_mac(mac))];
	return e != EMPTY ? rec_at(t, e & REC_MASK) : NULL;
}

struct ipam_lease6 *
ipam_leases6_by_addr(const struct ipam_leases6 *t, const struct in6_addr *addr)
{
	uint32_t e;

	if (t->n == 0 || t->by_addr == NULL)
		return NULL;
	e = t->by_addr[addr_slot(t, addr, ipv6_hash(addr))];
	return e != EMPTY ? rec_at(t, e & REC_MASK) : NULL;
}

int
ipam_leases6_get_by_mac(
    const struct ipam_leases6 *t, const uint8_t mac[MAC_LEN], struct in6_addr *ret)
{
	const struct ipam_lease6 *l = ipam_leases6_by_mac(t, mac);

	if (l == NULL)
		return -ENOENT;
	*ret = l->addr;
	return 0;
}

int
ipam_leases6_get_by_addr(
    const struct ipam_leases6 *t, const struct in6_addr *addr, uint8_t ret_mac[MAC_LEN])
{
	const struct ipam_lease6 *l = ipam_leases6_by_addr(t, addr);

	/* without the index: a walk (addresses may repeat; the first one found) */
	for (size_t i = 0; l == NULL && t->by_addr == NULL && i < t->n; i++)
		if (ipv6_equal(&rec_at(t, (uint32_t)i)->addr, addr))
			l = rec_at(t, (uint32_t)i);
	if (l == NULL)
		return -ENOENT;
	memcpy(ret_mac, l->mac, MAC_LEN);
	return 0;
}

int
ipam_leases6_reserve(struct ipam_leases6 *t, size_t n)
{
	size_t slots = t->slots != 0 ? t->slots : MIN_SLOTS;

	if (n > IPAM_LEASES6_MAX)
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
ipam_leases6_shrink(struct ipam_leases6 *t)
{
	size_t slots = MIN_SLOTS;
	unsigned char *r;

	if (t->n == 0) {
		ipam_leases6_destroy(t);
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
ipam_leases6_add(struct ipam_leases6 *t, const uint8_t mac[MAC_LEN], const struct in6_addr *addr,
    struct ipam_lease6 **ret)
{
	struct ipam_lease6 *l;
	uint32_t r = (uint32_t)t->n;
	int err;

	if (ipam_leases6_by_mac(t, mac) != NULL || ipam_leases6_by_addr(t, addr) != NULL)
		return -EEXIST;
	if ((err = ipam_leases6_reserve(t, t->n + 1)) < 0)
		return err;
	l = rec_at(t, r);
	memset(l, 0, t->rec_size);
	memcpy(l->mac, mac, MAC_LEN);
	l->addr = *addr;
	t->n++;
	index_put(t, t->by_mac, r);
	if (t->by_addr != NULL)
		index_put(t, t->by_addr, r);
	if (ret != NULL)
		*ret = l;
	return 0;
}

int
ipam_leases6_rebind(struct ipam_leases6 *t, struct ipam_lease6 *l, const struct in6_addr *addr)
{
	const struct ipam_lease6 *o;

	if (t->by_addr == NULL) {
		l->addr = *addr;
		return 0;
	}
	if ((o = ipam_leases6_by_addr(t, addr)) == l)
		return 0;
	if (o != NULL)
		return -EEXIST;
	index_delete(t, t->by_addr, slot_of(t, t->by_addr, rec_no(t, l)));
	l->addr = *addr;
	index_put(t, t->by_addr, rec_no(t, l));
	return 0;
}

int
ipam_leases6_set(struct ipam_leases6 *t, const uint8_t mac[MAC_LEN], const struct in6_addr *addr,
    struct ipam_lease6 **ret)
{
	struct ipam_lease6 *l = ipam_leases6_by_mac(t, mac);
	int r;

	if (l == NULL)
		return ipam_leases6_add(t, mac, addr, ret);
	if ((r = ipam_leases6_rebind(t, l, addr)) < 0)
		return r;
	if (ret != NULL)
		*ret = l;
	return 0;
}

void
ipam_leases6_remove(struct ipam_leases6 *t, struct ipam_lease6 *l)
{
	uint32_t r = rec_no(t, l), last = (uint32_t)(t->n - 1);

	index_delete(t, t->by_mac, slot_of(t, t->by_mac, r));
	if (t->by_addr != NULL)
		index_delete(t, t->by_addr, slot_of(t, t->by_addr, r));
	if (r != last) {
		/* the last record moves into the hole; its slots point at it there */
		size_t ms = slot_of(t, t->by_mac, last);

		t->by_mac[ms] = (t->by_mac[ms] & ~REC_MASK) | r;
		if (t->by_addr != NULL) {
			size_t as = slot_of(t, t->by_addr, last);

			t->by_addr[as] = (t->by_addr[as] & ~REC_MASK) | r;
		}
		memcpy(l, rec_at(t, last), t->rec_size);
	}
	t->n--;
}

int
ipam_leases6_remove_mac(struct ipam_leases6 *t, const uint8_t mac[MAC_LEN])
{
	struct ipam_lease6 *l = ipam_leases6_by_mac(t, mac);

	if (l == NULL)
		return -ENOENT;
	ipam_leases6_remove(t, l);
	return 0;
}

int
ipam_leases6_foreach(
    const struct ipam_leases6 *t, int (*fn)(struct ipam_lease6 *l, void *userdata), void *userdata)
{
	int r;

	for (size_t i = 0; i < t->n; i++)
		if ((r = fn(rec_at(t, (uint32_t)i), userdata)) != 0)
			return r;
	return 0;
}

size_t
ipam_leases6_sweep(struct ipam_leases6 *t, size_t budget,
    bool (*fn)(struct ipam_lease6 *l, void *userdata), void *userdata)
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
ipam_leases6_memory(const struct ipam_leases6 *t)
{
	return t->recs_cap * t->rec_size + (t->addr_index ? 2 : 1) * t->slots * sizeof(uint32_t);
}
