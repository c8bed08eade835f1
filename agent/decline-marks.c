/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The engine's DECLINE marks of bindings that stay where they are (decline-marks.h): one
 * record per marked MAC in lib/mactable.h's table (no address index), swept a bounded number
 * at a time; a mark whose hold-down is over is cleared in the engine and forgotten.
 */
#include <errno.h>
#include <stdlib.h>

#include "agent/decline-marks.h"
#include "dhcp/dhcp.h"
#include "lib/clock.h"
#include "lib/log.h"
#include "lib/mactable.h"
#include "lib/util.h"

struct mark {
	uint8_t mac[6];
	uint8_t unused[2];
	uint32_t ip;	/* the address DECLINEd */
	uint64_t since; /* the first DECLINE */
};

MACTABLE_RECORD_CHECK(struct mark, mac, ip);

struct agent_marks {
	struct mactable tab; /* of struct mark */
	uint64_t hold_usec;
};

int
agent_marks_new(uint32_t hold_s, struct agent_marks **ret)
{
	struct agent_marks *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return -ENOMEM;
	mactable_init(&m->tab, sizeof(struct mark), false);
	m->hold_usec = (uint64_t)hold_s * USEC_PER_SEC;
	*ret = m;
	return 0;
}

struct agent_marks *
agent_marks_free(struct agent_marks *m)
{
	if (m == NULL)
		return NULL;
	mactable_destroy(&m->tab);
	free(m);
	return NULL;
}

int
agent_marks_add(struct agent_marks *m, const uint8_t mac[6], uint32_t ip, uint64_t now)
{
	struct mark *k = mactable_find_mac(&m->tab, mac);
	void *rec;
	int r;

	if (k == NULL) {
		if ((r = mactable_insert(&m->tab, mac, ip, &rec)) < 0)
			return r;
		k = rec;
	} else if (k->ip == ip) {
		return 0; /* marked already: the hold-down runs from the first DECLINE */
	}
	k->ip = ip;
	k->since = now;
	return 0;
}

struct marks_sweep {
	struct agent_marks *m;
	struct dhcp_server *s;
	uint64_t now;
	size_t cleared;
};

static bool
marks_one(void *rec, void *userdata)
{
	struct marks_sweep *ms = userdata;
	struct mark *k = rec;
	char m[MAC_STRLEN], a[IPV4_STRLEN];

	/* held until since + hold_usec (never, when that does not fit in 64 bits) */
	if (k->since > ms->now || ms->now - k->since < ms->m->hold_usec)
		return false;
	if (dhcp_server_clear_decline(ms->s, k->mac, k->ip) == 0) {
		ms->cleared++;
		mac_format(k->mac, m);
		ipv4_format(k->ip, a);
		log_info(
		    "%s -> %s answered again: the hold-down after its DHCPDECLINE is over", m, a);
	}
	mactable_delete(&ms->m->tab, k);
	return true;
}

size_t
agent_marks_expire(struct agent_marks *m, struct dhcp_server *s, uint64_t now, size_t budget)
{
	struct marks_sweep ms = {.m = m, .s = s, .now = now};

	(void)mactable_sweep(&m->tab, budget, marks_one, &ms);
	return ms.cleared;
}

size_t
agent_marks_count(const struct agent_marks *m)
{
	return mactable_count(&m->tab);
}
