/* SPDX-License-Identifier: Apache-2.0 */
/*
 * MAC -> IPv6 binding table. Records (struct dhcp6_binding, 28 bytes) sit in lib/mactable.h's
 * dense array with its MAC index (its IPv4 address index is off: the 32-bit field at offset 8
 * holds the hostname's offset in the string pool). The address index is our own: open
 * addressing over 32-bit record numbers (linear probing, backward-shift deletion, at most
 * 70 % full), kept right when mactable_delete moves the last record into a hole.
 * About 28 x 1.25 + 4 x 1.9 + 4 x 2 + the hostname ~ 60 bytes per binding.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dhcp/dhcp6-internal.h"
#include "lib/ip6.h"

#define HOSTNAME_MAX 63u
#define EMPTY UINT32_MAX

MACTABLE_RECORD_CHECK(struct dhcp6_binding, mac, hostname_off);
_Static_assert(sizeof(struct dhcp6_binding) == 28, "IPv6 binding records are 28 bytes");

struct dhcp6_table {
	struct mactable tab; /* of struct dhcp6_binding, indexed by MAC */
	uint32_t *by_addr;   /* record numbers; EMPTY */
	size_t slots;	     /* a power of two, or 0 */
	char *pool;	     /* hostnames, NUL-terminated; offset 0 unused */
	size_t pool_len, pool_cap, pool_garbage;
};

static inline struct dhcp6_binding *
rec(const struct dhcp6_table *t, size_t i)
{
	return mactable_at(&t->tab, i);
}

static size_t
recno(const struct dhcp6_table *t, const struct dhcp6_binding *b)
{
	return (size_t)((const unsigned char *)b - t->tab.recs) / sizeof(struct dhcp6_binding);
}

int
dhcp6_table_new(struct dhcp6_table **ret)
{
	struct dhcp6_table *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -ENOMEM;
	mactable_init(&t->tab, sizeof(struct dhcp6_binding), false);
	*ret = t;
	return 0;
}

struct dhcp6_table *
dhcp6_table_free(struct dhcp6_table *t)
{
	if (t == NULL)
		return NULL;
	mactable_destroy(&t->tab);
	free(t->by_addr);
	free(t->pool);
	free(t);
	return NULL;
}

/* --- the address index ----------------------------------------------------------------------- */

static size_t
home(const struct dhcp6_table *t, const struct in6_addr *a)
{
	return (size_t)ipv6_hash(a) & (t->slots - 1);
}

/* The slot holding a's record, or the empty slot where it would go. */
static size_t
find_slot(const struct dhcp6_table *t, const struct in6_addr *a)
{
	size_t i = home(t, a);

	while (t->by_addr[i] != EMPTY && !ipv6_equal(&rec(t, t->by_addr[i])->addr, a))
		i = (i + 1) & (t->slots - 1);
	return i;
}

static int
index_grow(struct dhcp6_table *t, size_t want)
{
	size_t slots = t->slots ? t->slots : 64;
	uint32_t *na;

	if (want * 10 <= t->slots * 7)
		return 0;
	while (want * 10 > slots * 7)
		slots *= 2;
	na = malloc(slots * sizeof(*na));
	if (na == NULL)
		return -ENOMEM;
	memset(na, 0xff, slots * sizeof(*na));
	free(t->by_addr);
	t->by_addr = na;
	t->slots = slots;
	for (size_t r = 0; r < mactable_count(&t->tab); r++)
		t->by_addr[find_slot(t, &rec(t, r)->addr)] = (uint32_t)r;
	return 0;
}

/* Backward-shift deletion: no tombstones, probes stay short. */
static void
index_remove(struct dhcp6_table *t, const struct in6_addr *a)
{
	size_t i = find_slot(t, a), j = i;

	if (t->by_addr[i] == EMPTY)
		return;
	for (;;) {
		size_t h;

		t->by_addr[i] = EMPTY;
		do {
			j = (j + 1) & (t->slots - 1);
			if (t->by_addr[j] == EMPTY)
				return;
			h = home(t, &rec(t, t->by_addr[j])->addr);
			/* j's entry may move to i unless its home lies cyclically in (i, j] */
		} while (i <= j ? (i < h && h <= j) : (i < h || h <= j));
		t->by_addr[i] = t->by_addr[j];
		i = j;
	}
}

/* --- hostnames: one string pool, compacted when half garbage --------------------------------- */

static void
pool_compact(struct dhcp6_table *t)
{
	char *np;
	size_t len = 1;

	if (t->pool_garbage < 4096 || t->pool_garbage < t->pool_len / 2)
		return;
	np = malloc(t->pool_len - t->pool_garbage + 1);
	if (np == NULL)
		return;
	np[0] = '\0';
	for (size_t r = 0; r < mactable_count(&t->tab); r++) {
		struct dhcp6_binding *b = rec(t, r);

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
set_hostname(struct dhcp6_table *t, struct dhcp6_binding *b, const char *s, size_t n)
{
	if (b->hostname_len == n && (n == 0 || memcmp(t->pool + b->hostname_off, s, n) == 0))
		return 0;
	if (n > 0 && t->pool_len + n + 1 > t->pool_cap) {
		size_t cap = t->pool_cap < 1024 ? 1024 : t->pool_cap;
		char *np;

		while (cap < t->pool_len + n + 2)
			cap += cap / 4;
		if (cap > UINT32_MAX || (np = realloc(t->pool, cap)) == NULL)
			return -ENOMEM;
		t->pool = np;
		t->pool_cap = cap;
	}
	if (b->hostname_len > 0)
		t->pool_garbage += b->hostname_len + 1u;
	b->hostname_off = 0;
	b->hostname_len = (uint8_t)n;
	if (n > 0) {
		if (t->pool_len == 0)
			t->pool[t->pool_len++] = '\0'; /* offset 0 means none */
		memcpy(t->pool + t->pool_len, s, n);
		t->pool[t->pool_len + n] = '\0';
		b->hostname_off = (uint32_t)t->pool_len;
		t->pool_len += n + 1;
	}
	return 0;
}

/* --- the table ------------------------------------------------------------------------------- */

static int
update(struct dhcp6_table *t, struct dhcp6_binding *b, const struct in6_addr *addr,
    const char *hostname, size_t hlen)
{
	struct dhcp6_binding *other = dhcp6_table_lookup_addr(t, addr);
	int r;

	if (other != NULL && other != b)
		return -EEXIST; /* addr bound to another MAC */
	if ((r = set_hostname(t, b, hostname, hlen)) < 0)
		return r;
	if (other == NULL) {
		index_remove(t, &b->addr);
		b->addr = *addr;
		t->by_addr[find_slot(t, addr)] = (uint32_t)recno(t, b);
		b->flags &= (uint8_t)~DHCP6_BINDING_DECLINED;
	}
	b->flags &= (uint8_t)~DHCP6_BINDING_STALE;
	pool_compact(t);
	return 0;
}

int
dhcp6_table_set(
    struct dhcp6_table *t, const uint8_t mac[6], const struct in6_addr *addr, const char *hostname)
{
	size_t hlen = hostname != NULL ? strnlen(hostname, HOSTNAME_MAX + 1) : 0;
	struct dhcp6_binding *b;
	void *nb;
	int r;

	if (ipv6_is_zero(addr))
		return -EINVAL;
	if (hlen > HOSTNAME_MAX)
		hlen = HOSTNAME_MAX;
	if ((b = mactable_find_mac(&t->tab, mac)) != NULL)
		return update(t, b, addr, hostname, hlen);
	if (dhcp6_table_lookup_addr(t, addr) != NULL)
		return -EEXIST;
	if ((r = index_grow(t, mactable_count(&t->tab) + 1)) < 0)
		return r;
	if ((r = mactable_insert(&t->tab, mac, 0, &nb)) < 0)
		return r;
	b = nb;
	b->addr = *addr;
	if ((r = set_hostname(t, b, hostname, hlen)) < 0) {
		mactable_delete(&t->tab, b); /* the last record: nothing else moves */
		return r;
	}
	t->by_addr[find_slot(t, addr)] = (uint32_t)recno(t, b);
	return 0;
}

static void
remove_rec(struct dhcp6_table *t, struct dhcp6_binding *b)
{
	struct dhcp6_binding *last = rec(t, mactable_count(&t->tab) - 1);

	if (b->hostname_len > 0)
		t->pool_garbage += b->hostname_len + 1u;
	index_remove(t, &b->addr);
	if (last != b) /* mactable_delete moves the last record into b's place */
		t->by_addr[find_slot(t, &last->addr)] = (uint32_t)recno(t, b);
	mactable_delete(&t->tab, b);
}

int
dhcp6_table_remove(struct dhcp6_table *t, const uint8_t mac[6])
{
	struct dhcp6_binding *b = mactable_find_mac(&t->tab, mac);

	if (b == NULL)
		return -ENOENT;
	remove_rec(t, b);
	pool_compact(t);
	return 0;
}

struct dhcp6_binding *
dhcp6_table_lookup(const struct dhcp6_table *t, const uint8_t mac[6])
{
	return mactable_find_mac(&t->tab, mac);
}

struct dhcp6_binding *
dhcp6_table_lookup_addr(const struct dhcp6_table *t, const struct in6_addr *addr)
{
	size_t i;

	if (t->slots == 0)
		return NULL;
	i = find_slot(t, addr);
	return t->by_addr[i] == EMPTY ? NULL : rec(t, t->by_addr[i]);
}

const char *
dhcp6_table_hostname(const struct dhcp6_table *t, const struct dhcp6_binding *b)
{
	return b->hostname_len > 0 ? t->pool + b->hostname_off : NULL;
}

size_t
dhcp6_table_size(const struct dhcp6_table *t)
{
	return mactable_count(&t->tab);
}

void
dhcp6_table_sync_begin(struct dhcp6_table *t)
{
	for (size_t r = 0; r < mactable_count(&t->tab); r++)
		rec(t, r)->flags |= DHCP6_BINDING_STALE;
}

size_t
dhcp6_table_sync_end(struct dhcp6_table *t)
{
	size_t removed = 0;

	for (size_t r = mactable_count(&t->tab); r-- > 0;) {
		if (rec(t, r)->flags & DHCP6_BINDING_STALE) {
			remove_rec(t, rec(t, r));
			removed++;
		}
	}
	pool_compact(t);
	return removed;
}

void
dhcp6_table_foreach(const struct dhcp6_table *t,
    void (*fn)(
	void *userdata, const uint8_t mac[6], const struct in6_addr *addr, const char *hostname),
    void *userdata)
{
	for (size_t r = 0; r < mactable_count(&t->tab); r++) {
		const struct dhcp6_binding *b = rec(t, r);

		fn(userdata, b->mac, &b->addr, dhcp6_table_hostname(t, b));
	}
}

size_t
dhcp6_table_memory(const struct dhcp6_table *t)
{
	return mactable_memory(&t->tab) + t->slots * sizeof(uint32_t) + t->pool_cap;
}
