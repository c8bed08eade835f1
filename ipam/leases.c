/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The MAC ↔ address ownership table (see leases.h): a dense record array and two
 * open-addressing indexes over it.
 */
#include "ipam/leases.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SLOTS 16

static uint64_t
hash_addr(uint32_t a)
{
	uint64_t v = (uint64_t)a + UINT64_C(0x9e3779b97f4a7c15);

	v = (v ^ (v >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	v = (v ^ (v >> 27)) * UINT64_C(0x94d049bb133111eb);
	return v ^ (v >> 31);
}

static struct ipam_lease *
rec(const struct ipam_leases *t, uint32_t slot)
{
	return ipam_leases_at(t, (size_t)slot - 1);
}

/* Home slot of record l in the MAC (by_mac) or address index. */
static size_t
home(const struct ipam_leases *t, bool by_mac, const struct ipam_lease *l)
{
	return (size_t)((by_mac ? hash_mac(l->mac) : hash_addr(l->addr)) & t->mask);
}

/* Slot of mac in by_mac, or the empty slot where it would go. mask > 0. */
static size_t
slot_of_mac(const struct ipam_leases *t, const uint8_t mac[MAC_LEN])
{
	size_t i = (size_t)(hash_mac(mac) & t->mask);

	while (t->by_mac[i] != 0 && memcmp(rec(t, t->by_mac[i])->mac, mac, MAC_LEN) != 0)
		i = (i + 1) & t->mask;
	return i;
}

static size_t
slot_of_addr(const struct ipam_leases *t, uint32_t addr)
{
	size_t i = (size_t)(hash_addr(addr) & t->mask);

	while (t->by_addr[i] != 0 && rec(t, t->by_addr[i])->addr != addr)
		i = (i + 1) & t->mask;
	return i;
}

/* Backward-shift deletion of slot i (linear probing keeps no tombstones). */
static void
index_delete(struct ipam_leases *t, bool by_mac, size_t i)
{
	uint32_t *ix = by_mac ? t->by_mac : t->by_addr;
	size_t j = i;

	for (;;) {
		size_t k;

		j = (j + 1) & t->mask;
		if (ix[j] == 0)
			break;
		k = home(t, by_mac, rec(t, ix[j]));
		/* move j back to i unless its home lies cyclically in (i, j] */
		if ((i <= j) ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		ix[i] = ix[j];
		i = j;
	}
	ix[i] = 0;
}

/* Both indexes anew with at least 2 * want slots. */
static int
index_resize(struct ipam_leases *t, size_t want)
{
	size_t slots = MIN_SLOTS;
	uint32_t *m, *a;

	while (slots < want * 2)
		slots <<= 1;
	m = calloc(slots, sizeof(*m));
	a = t->has_addr_index ? calloc(slots, sizeof(*a)) : NULL;
	if (m == NULL || (t->has_addr_index && a == NULL)) {
		free(m);
		free(a);
		return -ENOMEM;
	}
	free(t->by_mac);
	free(t->by_addr);
	t->by_mac = m;
	t->by_addr = a;
	t->mask = slots - 1;
	for (size_t i = 0; i < t->n; i++) {
		const struct ipam_lease *l = ipam_leases_at(t, i);

		t->by_mac[slot_of_mac(t, l->mac)] = (uint32_t)(i + 1);
		if (a != NULL)
			t->by_addr[slot_of_addr(t, l->addr)] = (uint32_t)(i + 1);
	}
	return 0;
}

void
ipam_leases_init(struct ipam_leases *t, size_t rec_size, bool by_addr)
{
	*t = (struct ipam_leases){.rec_size = rec_size, .has_addr_index = by_addr};
}

void
ipam_leases_destroy(struct ipam_leases *t)
{
	free(t->recs);
	free(t->by_mac);
	free(t->by_addr);
	ipam_leases_init(t, t->rec_size, t->has_addr_index);
}

void
ipam_leases_clear(struct ipam_leases *t)
{
	t->n = 0;
	t->cursor = 0;
	if (t->mask != 0) {
		memset(t->by_mac, 0, (t->mask + 1) * sizeof(*t->by_mac));
		if (t->by_addr != NULL)
			memset(t->by_addr, 0, (t->mask + 1) * sizeof(*t->by_addr));
	}
}

struct ipam_lease *
ipam_leases_by_mac(const struct ipam_leases *t, const uint8_t mac[MAC_LEN])
{
	uint32_t s;

	if (t->n == 0)
		return NULL;
	s = t->by_mac[slot_of_mac(t, mac)];
	return s != 0 ? rec(t, s) : NULL;
}

struct ipam_lease *
ipam_leases_by_addr(const struct ipam_leases *t, uint32_t addr)
{
	uint32_t s;

	if (t->n == 0 || t->by_addr == NULL)
		return NULL;
	s = t->by_addr[slot_of_addr(t, addr)];
	return s != 0 ? rec(t, s) : NULL;
}

int
ipam_leases_reserve(struct ipam_leases *t, size_t n)
{
	if (n >= UINT32_MAX)
		return -ENOMEM;
	if (n > t->cap) {
		size_t cap = t->cap ? t->cap : 64;
		unsigned char *r;

		while (cap < n)
			cap *= 2;
		if (cap > SIZE_MAX / t->rec_size ||
		    (r = realloc(t->recs, cap * t->rec_size)) == NULL)
			return -ENOMEM;
		t->recs = r;
		t->cap = cap;
	}
	if (n * 2 > t->mask + 1 && index_resize(t, n) < 0)
		return -ENOMEM;
	return 0;
}

int
ipam_leases_add(
    struct ipam_leases *t, const uint8_t mac[MAC_LEN], uint32_t addr, struct ipam_lease **ret)
{
	struct ipam_lease *l;
	int r;

	if (ipam_leases_by_mac(t, mac) != NULL || ipam_leases_by_addr(t, addr) != NULL)
		return -EEXIST;
	if ((r = ipam_leases_reserve(t, t->n + 1)) < 0)
		return r;
	l = ipam_leases_at(t, t->n);
	memset(l, 0, t->rec_size);
	memcpy(l->mac, mac, MAC_LEN);
	l->addr = addr;
	t->n++;
	t->by_mac[slot_of_mac(t, mac)] = (uint32_t)t->n;
	if (t->by_addr != NULL)
		t->by_addr[slot_of_addr(t, addr)] = (uint32_t)t->n;
	*ret = l;
	return 0;
}

static uint32_t
slot_value(const struct ipam_leases *t, const struct ipam_lease *l)
{
	return (uint32_t)(((const unsigned char *)l - t->recs) / t->rec_size + 1);
}

int
ipam_leases_rebind(struct ipam_leases *t, struct ipam_lease *l, uint32_t addr)
{
	const struct ipam_lease *o = ipam_leases_by_addr(t, addr);

	if (t->by_addr == NULL) {
		l->addr = addr;
		return 0;
	}
	if (o == l)
		return 0;
	if (o != NULL)
		return -EEXIST;
	index_delete(t, false, slot_of_addr(t, l->addr));
	l->addr = addr;
	t->by_addr[slot_of_addr(t, addr)] = slot_value(t, l);
	return 0;
}

void
ipam_leases_remove(struct ipam_leases *t, struct ipam_lease *l)
{
	struct ipam_lease *last = ipam_leases_at(t, t->n - 1);

	index_delete(t, true, slot_of_mac(t, l->mac));
	if (t->by_addr != NULL)
		index_delete(t, false, slot_of_addr(t, l->addr));
	if (l != last) {
		uint32_t v = slot_value(t, l);

		t->by_mac[slot_of_mac(t, last->mac)] = v;
		if (t->by_addr != NULL)
			t->by_addr[slot_of_addr(t, last->addr)] = v;
		memcpy(l, last, t->rec_size);
	}
	t->n--;
}

size_t
ipam_leases_sweep(struct ipam_leases *t, size_t budget,
    bool (*fn)(struct ipam_lease *l, void *userdata), void *userdata)
{
	size_t calls = 0;

	for (; calls < budget && t->n > 0; calls++) {
		if (t->cursor >= t->n)
			t->cursor = 0;
		if (fn(ipam_leases_at(t, t->cursor), userdata))
			continue; /* the last record moved here: look at it too */
		t->cursor++;
	}
	return calls;
}
