/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The lease file's table in memory: leases keyed by client identifier, else 0x01 + MAC, with
 * the MAC each is bound to and its address. Open addressing over 24-byte slots rather than
 * lib/hmap: a record per lease would cost about 0.5 MiB more at 65 000 leases against the
 * agent's 8 MiB bar. The key hash is seeded (identifiers come from the network).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/leasefile-internal.h"
#include "lib/util.h"

bool
agent_id_is_mac(const uint8_t mac[6], const uint8_t *id, size_t id_len)
{
	return id == NULL || id_len < AGENT_ID_MIN ||
	       (id_len == 7 && id[0] == 1 && memcmp(id + 1, mac, 6) == 0);
}

void
lf_key_init(struct key *k, const uint8_t *id, size_t id_len, const uint8_t mac[6])
{
	if (!agent_id_is_mac(mac, id, id_len)) {
		k->p = id;
		k->len = id_len;
		return;
	}
	k->buf[0] = 1; /* htype: Ethernet */
	memcpy(k->buf + 1, mac, 6);
	k->p = k->buf;
	k->len = 7;
}

static bool
slot_has_key(const struct slot *s, const struct key *k)
{
	if (s->id == NULL)
		return k->len == 7 && k->p[0] == 1 && memcmp(k->p + 1, s->mac, 6) == 0;
	return s->id_len == k->len && memcmp(s->id, k->p, k->len) == 0;
}

static size_t
find_slot(const struct leasefile *lf, const struct key *k, bool *found)
{
	size_t mask = lf->cap - 1, i = (size_t)hash64(k->p, k->len, lf->seed) & mask;
	size_t tomb = SIZE_MAX;

	for (;;) {
		const struct slot *s = &lf->slots[i];
		if (s->state == SLOT_EMPTY) {
			*found = false;
			return tomb != SIZE_MAX ? tomb : i;
		}
		if (s->state == SLOT_DELETED) {
			if (tomb == SIZE_MAX)
				tomb = i;
		} else if (slot_has_key(s, k)) {
			*found = true;
			return i;
		}
		i = (i + 1) & mask;
	}
}

/* A table with room for n leases at a load (used + tombstones) under 1/2; tombstones go. */
static int
grow(struct leasefile *lf, size_t n)
{
	size_t ncap = lf->cap == 0 ? 64 : lf->cap;
	struct slot *old = lf->slots;
	size_t ocap = lf->cap;

	while (n * 2 > ncap)
		ncap *= 2;
	lf->slots = calloc(ncap, sizeof(*lf->slots));
	if (lf->slots == NULL) {
		lf->slots = old;
		return -ENOMEM;
	}
	lf->cap = ncap;
	lf->ndel = 0;
	for (size_t i = 0; i < ocap; i++) {
		struct key k;
		bool found;
		if (old[i].state != SLOT_USED)
			continue;
		lf_key_init(&k, old[i].id, old[i].id_len, old[i].mac);
		lf->slots[find_slot(lf, &k, &found)] = old[i];
	}
	free(old);
	return 0;
}

int
leasefile_reserve(struct leasefile *lf, size_t n)
{
	if (n > lf->n && (n + lf->ndel) * 2 > lf->cap)
		return grow(lf, n);
	return 0;
}

int
lf_table_reserve(struct leasefile *lf)
{
	return leasefile_reserve(lf, lf->n + 1);
}

/*
 * Records key k -> mac, ip (lf_table_reserve() first). copy: k's bytes on the heap when the lease
 * needs them (k is not 0x01 + mac) and the slot does not hold them yet; taken.
 */
void
lf_table_put(struct leasefile *lf, const struct key *k, const uint8_t mac[6], uint32_t ip,
    uint32_t seq, uint8_t *copy)
{
	bool found, own = agent_id_is_mac(mac, k->p, k->len);
	size_t i = find_slot(lf, k, &found);
	struct slot *s = &lf->slots[i];

	if (!found) {
		if (s->state == SLOT_DELETED)
			lf->ndel--;
		s->state = SLOT_USED;
		s->id = NULL;
		s->id_len = 0;
		lf->n++;
	}
	if (own) {
		/* the MAC form of its (new) MAC: no bytes to keep */
		free(s->id);
		s->id = NULL;
		s->id_len = 0;
	} else if (s->id == NULL) {
		s->id = copy;
		s->id_len = (uint8_t)k->len;
		copy = NULL;
	}
	free(copy);
	memcpy(s->mac, mac, 6);
	s->ip = ip;
	s->seq = seq;
}

/*
 * The heap copy of k that lf_table_put() will need for mac (NULL when none is needed): made
 * before anything is written, so that a failure changes nothing. -ENOMEM.
 */
int
lf_key_copy(const struct leasefile *lf, const struct key *k, const uint8_t mac[6], uint8_t **ret)
{
	bool found = false;
	size_t i = 0;

	*ret = NULL;
	if (agent_id_is_mac(mac, k->p, k->len))
		return 0;
	if (lf->cap > 0)
		i = find_slot(lf, k, &found);
	if (found && lf->slots[i].id != NULL)
		return 0;
	if ((*ret = malloc(k->len)) == NULL)
		return -ENOMEM;
	memcpy(*ret, k->p, k->len);
	return 0;
}

int
leasefile_lookup_id(const struct leasefile *lf, const uint8_t *id, size_t id_len,
    const uint8_t mac[6], uint8_t ret_mac[6], uint32_t *ret_ip)
{
	struct key k;
	bool found;
	size_t i;

	if (lf->cap == 0)
		return -ENOENT;
	lf_key_init(&k, id, id_len, mac);
	i = find_slot(lf, &k, &found);
	if (!found)
		return -ENOENT;
	if (ret_mac != NULL)
		memcpy(ret_mac, lf->slots[i].mac, 6);
	if (ret_ip != NULL)
		*ret_ip = lf->slots[i].ip;
	return 0;
}

int
leasefile_lookup(const struct leasefile *lf, const uint8_t mac[6], uint32_t *ret_ip)
{
	return leasefile_lookup_id(lf, NULL, 0, mac, NULL, ret_ip);
}

void
lf_slot_delete(struct leasefile *lf, size_t i)
{
	free(lf->slots[i].id);
	lf->slots[i].id = NULL;
	lf->slots[i].state = SLOT_DELETED;
	lf->n--;
	lf->ndel++;
}

int
leasefile_remove_id(struct leasefile *lf, const uint8_t *id, size_t id_len, const uint8_t mac[6])
{
	struct key k;
	bool found;
	size_t i;

	if (lf->cap == 0)
		return -ENOENT;
	lf_key_init(&k, id, id_len, mac);
	i = find_slot(lf, &k, &found);
	if (!found)
		return -ENOENT;
	lf_slot_delete(lf, i);
	return 0;
}

int
leasefile_remove(struct leasefile *lf, const uint8_t mac[6])
{
	return leasefile_remove_id(lf, NULL, 0, mac);
}

size_t
leasefile_count(const struct leasefile *lf)
{
	return lf->n;
}

size_t
leasefile_loaded(const struct leasefile *lf)
{
	return lf->loaded;
}

void
leasefile_foreach(const struct leasefile *lf,
    void (*fn)(void *userdata, const uint8_t mac[6], uint32_t ip), void *userdata)
{
	for (size_t i = 0; i < lf->cap; i++)
		if (lf->slots[i].state == SLOT_USED)
			fn(userdata, lf->slots[i].mac, lf->slots[i].ip);
}

void
leasefile_foreach_id(const struct leasefile *lf,
    void (*fn)(void *userdata, const uint8_t *id, size_t id_len, const uint8_t mac[6], uint32_t ip),
    void *userdata)
{
	/* fn may remove its lease: that leaves a tombstone, nothing moves */
	for (size_t i = 0; i < lf->cap; i++)
		if (lf->slots[i].state == SLOT_USED)
			fn(userdata, lf->slots[i].id, lf->slots[i].id_len, lf->slots[i].mac,
			    lf->slots[i].ip);
}
