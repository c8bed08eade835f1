/* SPDX-License-Identifier: Apache-2.0 */
/* MAC -> binding table: lib/mactable.h's dense records and two indexes + a hostname pool. */
#include "dhcp/table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mactable.h"
#include "lib/util.h"

#define HOSTNAME_MAX 63u

/* The records (struct dhcp_binding) and their indexes are lib/mactable.h's. */
MACTABLE_RECORD_CHECK(struct dhcp_binding, mac, ip);

struct dhcp_table {
	struct mactable tab; /* of struct dhcp_binding, indexed by MAC and by IP */
	char *pool;	     /* hostnames, NUL-terminated; offset 0 unused */
	size_t pool_len, pool_cap, pool_garbage;
};

static inline struct dhcp_binding *
rec(const struct dhcp_table *t, size_t i)
{
	return mactable_at(&t->tab, i);
}

int
dhcp_table_new(struct dhcp_table **ret)
{
	struct dhcp_table *t = calloc(1, sizeof(*t));

	if (t == NULL)
		return -ENOMEM;
	mactable_init(&t->tab, sizeof(struct dhcp_binding), true);
	*ret = t;
	return 0;
}

struct dhcp_table *
dhcp_table_free(struct dhcp_table *t)
{
	if (t == NULL)
		return NULL;
	mactable_destroy(&t->tab);
	free(t->pool);
	free(t);
	return NULL;
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
	for (size_t r = 0; r < mactable_count(&t->tab); r++) {
		struct dhcp_binding *b = rec(t, r);

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
	void *nb;
	int r;

	if (ip == 0)
		return -EINVAL;
	if (hlen > HOSTNAME_MAX)
		hlen = HOSTNAME_MAX; /* option 12 carries one label's worth: truncate */
	if ((b = mactable_find_mac(&t->tab, mac)) != NULL) {
		if (b->ip != ip && mactable_find_ip(&t->tab, ip) != NULL)
			return -EEXIST; /* ip bound to another MAC */
		r = set_hostname(t, b, hostname, hlen);
		if (r < 0)
			return r;
		if (b->ip != ip) {
			(void)mactable_set_ip(&t->tab, b, ip); /* ip is free: checked above */
			b->flags &= (uint8_t)~DHCP_BINDING_DECLINED;
		}
		b->flags &= (uint8_t)~DHCP_BINDING_STALE;
		pool_compact(t);
		return 0;
	}
	/* a new MAC: -EEXIST when ip is bound (to another MAC) */
	if ((r = mactable_insert(&t->tab, mac, ip, &nb)) < 0)
		return r;
	if ((r = set_hostname(t, nb, hostname, hlen)) < 0) {
		mactable_delete(&t->tab, nb); /* the last record: nothing else moves */
		return r;
	}
	return 0;
}

static void
remove_rec(struct dhcp_table *t, struct dhcp_binding *b)
{
	if (b->hostname_len > 0)
		t->pool_garbage += b->hostname_len + 1u;
	mactable_delete(&t->tab, b);
}

int
dhcp_table_remove(struct dhcp_table *t, const uint8_t mac[6])
{
	struct dhcp_binding *b = mactable_find_mac(&t->tab, mac);

	if (b == NULL)
		return -ENOENT;
	remove_rec(t, b);
	pool_compact(t);
	return 0;
}

struct dhcp_binding *
dhcp_table_lookup(const struct dhcp_table *t, const uint8_t mac[6])
{
	return mactable_find_mac(&t->tab, mac);
}

struct dhcp_binding *
dhcp_table_lookup_ip(const struct dhcp_table *t, uint32_t ip)
{
	return mactable_find_ip(&t->tab, ip);
}

const char *
dhcp_table_hostname(const struct dhcp_table *t, const struct dhcp_binding *b)
{
	return b->hostname_len > 0 ? t->pool + b->hostname_off : NULL;
}

size_t
dhcp_table_size(const struct dhcp_table *t)
{
	return mactable_count(&t->tab);
}

void
dhcp_table_sync_begin(struct dhcp_table *t)
{
	for (size_t r = 0; r < mactable_count(&t->tab); r++)
		rec(t, r)->flags |= DHCP_BINDING_STALE;
}

size_t
dhcp_table_sync_end(struct dhcp_table *t)
{
	size_t removed = 0;

	/* from the end: remove_rec moves the last record into the hole */
	for (size_t r = mactable_count(&t->tab); r-- > 0;) {
		if (rec(t, r)->flags & DHCP_BINDING_STALE) {
			remove_rec(t, rec(t, r));
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
	for (size_t r = 0; r < mactable_count(&t->tab); r++) {
		const struct dhcp_binding *b = rec(t, r);

		fn(userdata, b->mac, b->ip, dhcp_table_hostname(t, b));
	}
}

size_t
dhcp_table_memory(const struct dhcp_table *t)
{
	return mactable_memory(&t->tab) + t->pool_cap;
}
