/* SPDX-License-Identifier: Apache-2.0 */
/* The MAC ↔ address ownership table (see leases.h): lib/mactable.h's, for IPAM's records. */
#include "ipam/leases.h"

MACTABLE_RECORD_CHECK(struct ipam_lease, mac, addr);

void
ipam_leases_init(struct ipam_leases *t, size_t rec_size, bool by_addr)
{
	mactable_init(&t->tab, rec_size, by_addr);
}

void
ipam_leases_destroy(struct ipam_leases *t)
{
	mactable_destroy(&t->tab);
}

void
ipam_leases_clear(struct ipam_leases *t)
{
	mactable_clear(&t->tab);
}

struct ipam_lease *
ipam_leases_by_mac(const struct ipam_leases *t, const uint8_t mac[MAC_LEN])
{
	return mactable_find_mac(&t->tab, mac);
}

struct ipam_lease *
ipam_leases_by_addr(const struct ipam_leases *t, uint32_t addr)
{
	return mactable_find_ip(&t->tab, addr);
}

int
ipam_leases_reserve(struct ipam_leases *t, size_t n)
{
	return mactable_reserve(&t->tab, n);
}

int
ipam_leases_add(
    struct ipam_leases *t, const uint8_t mac[MAC_LEN], uint32_t addr, struct ipam_lease **ret)
{
	void *rec;
	int r = mactable_insert(&t->tab, mac, addr, &rec);

	if (r == 0)
		*ret = rec;
	return r;
}

int
ipam_leases_rebind(struct ipam_leases *t, struct ipam_lease *l, uint32_t addr)
{
	return mactable_set_ip(&t->tab, l, addr);
}

void
ipam_leases_remove(struct ipam_leases *t, struct ipam_lease *l)
{
	mactable_delete(&t->tab, l);
}

struct sweep {
	bool (*fn)(struct ipam_lease *l, void *userdata);
	void *userdata;
};

static bool
sweep_one(void *rec, void *userdata)
{
	const struct sweep *sw = userdata;

	return sw->fn(rec, sw->userdata);
}

size_t
ipam_leases_sweep(struct ipam_leases *t, size_t budget,
    bool (*fn)(struct ipam_lease *l, void *userdata), void *userdata)
{
	struct sweep sw = {fn, userdata};

	return mactable_sweep(&t->tab, budget, sweep_one, &sw);
}
