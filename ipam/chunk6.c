/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ipam/chunk6.c - the IPv6 pool's chunk table: chunk number -> 64 USED bits, open addressing
 * with linear probing and backward-shift deletion (no tombstones), at most 80 % full.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ipam/pool6-internal.h"

#define MIN_SLOTS 16u

static inline uint64_t
hash_chunk(uint64_t lo, uint64_t hi)
{
	uint64_t v = lo ^ (hi * UINT64_C(0x9e3779b97f4a7c15));

	v = (v ^ (v >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	v = (v ^ (v >> 27)) * UINT64_C(0x94d049bb133111eb);
	return v ^ (v >> 31);
}

/* Maps a 64-bit hash onto [0, slots) with its high bits (multiply-shift). */
static inline size_t
home_of(uint64_t lo, uint64_t hi, size_t slots)
{
	return (size_t)(((hash_chunk(lo, hi) >> 32) * (uint64_t)slots) >> 32);
}

static inline size_t
next_slot(const struct chunktab6 *t, size_t i)
{
	return i + 1 == t->n_slots ? 0 : i + 1;
}

/* Slot of chunk (lo, hi) or the empty slot where it would go (n_slots > 0). */
static size_t
slot_of(const struct chunktab6 *t, uint64_t lo, uint64_t hi)
{
	size_t i = home_of(lo, hi, t->n_slots);

	for (;;) {
		const struct chunk6 *e = &t->slots[i];

		if (!(e->hi & CHUNK6_LIVE) || (e->lo == lo && (e->hi & CHUNK6_HI_MASK) == hi))
			return i;
		i = next_slot(t, i);
	}
}

struct chunk6 *
chunktab6_find(const struct chunktab6 *t, ip6_u128 c)
{
	struct chunk6 *e;

	if (t->n == 0)
		return NULL;
	e = &t->slots[slot_of(t, (uint64_t)c, (uint64_t)(c >> 64))];
	return (e->hi & CHUNK6_LIVE) ? e : NULL;
}

int
chunktab6_reserve(struct chunktab6 *t, size_t n)
{
	size_t slots = t->n_slots != 0 ? t->n_slots : MIN_SLOTS;
	struct chunk6 *s, *old = t->slots;
	size_t old_n = t->n_slots;

	while (n > slots / 5 * 4) {
		if (slots > SIZE_MAX / 2 / sizeof(*s))
			return -ENOMEM;
		slots += slots / 2;
	}
	if (slots == t->n_slots)
		return 0;
	if ((s = calloc(slots, sizeof(*s))) == NULL)
		return -ENOMEM;
	t->slots = s;
	t->n_slots = slots;
	for (size_t i = 0; i < old_n; i++) {
		const struct chunk6 *e = &old[i];

		if (e->hi & CHUNK6_LIVE)
			s[slot_of(t, e->lo, e->hi & CHUNK6_HI_MASK)] = *e;
	}
	free(old);
	return 0;
}

struct chunk6 *
chunktab6_add(struct chunktab6 *t, ip6_u128 c)
{
	uint64_t lo = (uint64_t)c, hi = (uint64_t)(c >> 64);
	struct chunk6 *e = &t->slots[slot_of(t, lo, hi)];

	*e = (struct chunk6){.lo = lo, .hi = hi | CHUNK6_LIVE};
	t->n++;
	return e;
}

void
chunktab6_delete(struct chunktab6 *t, struct chunk6 *e)
{
	size_t i = (size_t)(e - t->slots), j = i;

	for (;;) {
		size_t k;

		j = next_slot(t, j);
		if (!(t->slots[j].hi & CHUNK6_LIVE))
			break;
		k = home_of(t->slots[j].lo, t->slots[j].hi & CHUNK6_HI_MASK, t->n_slots);
		/* move slot j into the hole at i unless its home lies cyclically in (i, j] */
		if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		t->slots[i] = t->slots[j];
		i = j;
	}
	t->slots[i] = (struct chunk6){0};
	t->n--;
}

void
chunktab6_destroy(struct chunktab6 *t)
{
	free(t->slots);
	*t = (struct chunktab6){0};
}
