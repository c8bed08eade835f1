/* SPDX-License-Identifier: Apache-2.0 */
/* controller/nicbind.c: per-NIC bind / release, Pending reasons, Events, conditions. */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/nicbind.h"
#include "tests/runner.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/* Networks: default/net-1 (ready), default/net-2 (ready), default/slow (not ready). */
struct world {
	struct netpool *net1;
	struct netpool *net2;
	bool net2_ready;
};

static struct world w;

static struct netpool *
lookup(void *userdata, const char *network, enum netpool_avail *avail)
{
	struct world *wd = userdata;

	if (strcmp(network, "default/net-1") == 0) {
		*avail = NETPOOL_READY;
		return wd->net1;
	}
	if (strcmp(network, "default/net-2") == 0) {
		*avail = wd->net2_ready ? NETPOOL_READY : NETPOOL_NOT_READY;
		return wd->net2_ready ? wd->net2 : NULL;
	}
	*avail = NETPOOL_ABSENT;
	return NULL;
}

static uint32_t ex1[] = {IP(10, 0, 0, 12)};

static int
setup(void)
{
	struct ippool_spec s;

	memset(&s, 0, sizeof(s));
	s.cidr_addr = IP(10, 0, 0, 0);
	s.prefix = 24;
	s.server_ip = IP(10, 0, 0, 1);
	s.start = IP(10, 0, 0, 10);
	s.end = IP(10, 0, 0, 14);
	s.exclude = ex1;
	s.n_exclude = 1;
	if (netpool_new(&s, &w.net1) < 0)
		return -1;
	s.cidr_addr = IP(10, 2, 0, 0);
	s.server_ip = IP(10, 2, 0, 1);
	s.start = IP(10, 2, 0, 100);
	s.end = IP(10, 2, 0, 200);
	s.n_exclude = 0;
	if (netpool_new(&s, &w.net2) < 0)
		return -1;
	w.net2_ready = true;
	return 0;
}

static int
teardown(void)
{
	w.net1 = netpool_free(w.net1);
	w.net2 = netpool_free(w.net2);
	return 0;
}

/* Reset both pools between tests. */
static void
reset(void)
{
	netpool_rebuild(w.net1, NULL, 0, NULL);
	netpool_rebuild(w.net2, NULL, 0, NULL);
	w.net2_ready = true;
}

/* A VMNetCfg with up to 4 NICs (test-owned storage). */
struct cfgbuf {
	struct vmnetcfg cfg;
	struct vmnetcfg_nic nics[4];
};

static void
cfg_init(struct cfgbuf *b, const char *vm)
{
	memset(b, 0, sizeof(*b));
	b->cfg.meta.generation = 1; /* as the API server starts it */
	b->cfg.spec.vm_name = (char *)vm;
	b->cfg.spec.nics = b->nics;
}

static void
cfg_nic(struct cfgbuf *b, const char *net, const char *mac, uint32_t ip)
{
	struct vmnetcfg_nic *n = &b->nics[b->cfg.spec.n_nics++];

	snprintf(n->network_name, sizeof(n->network_name), "%s", net);
	snprintf(n->mac, sizeof(n->mac), "%s", mac);
	n->ip_address = ip;
}

/* A Kubernetes condition / Event reason: CamelCase, never empty. */
static bool
camel_case(const char *s)
{
	regex_t re;
	bool ok;

	if (s == NULL || regcomp(&re, "^[A-Z][A-Za-z0-9]*$", REG_EXTENDED | REG_NOSUB) != 0)
		return false;
	ok = regexec(&re, s, 0, NULL, 0) == 0;
	regfree(&re);
	return ok;
}

/* What every result keeps, whatever the scenario: each condition has a CamelCase reason
 * (True or False) and the generation it was computed from; each Event a type and reason. */
static void
check_result(const struct vmnetcfg *cfg, const struct vmnetcfg_result *r)
{
	CU_ASSERT_EQUAL(r->status.conditions.n, 3);
	for (size_t i = 0; i < r->status.conditions.n; i++) {
		const struct crd_condition *c = &r->status.conditions.items[i];

		if (!camel_case(c->reason)) {
			printf("\n  condition %s=%s: reason \"%s\" is not CamelCase", c->type,
			    crd_cond_status_string(c->status), c->reason ? c->reason : "(none)");
			CU_FAIL("condition reason");
		}
		CU_ASSERT_EQUAL(c->observed_generation, cfg->meta.generation);
	}
	for (size_t i = 0; i < r->n_events; i++) {
		CU_ASSERT_TRUE(strcmp(r->events[i].type, "Normal") == 0 ||
			       strcmp(r->events[i].type, "Warning") == 0);
		CU_ASSERT_TRUE(camel_case(r->events[i].reason));
	}
}

static int
compute(const struct vmnetcfg *cfg, const char *key, time_t now, struct vmnetcfg_result *r)
{
	int rc = vmnetcfg_compute(cfg, key, lookup, &w, now, r);

	if (rc == 0)
		check_result(cfg, r);
	return rc;
}

/* Events of a type (and reason, NULL: any) in a result. */
static size_t
n_events(const struct vmnetcfg_result *r, const char *type, const char *reason)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_events; i++)
		n += strcmp(r->events[i].type, type) == 0 &&
		     (reason == NULL || strcmp(r->events[i].reason, reason) == 0);
	return n;
}

/* The message of the index-th Event of type/reason, or "". */
static const char *
event_message(const struct vmnetcfg_result *r, const char *type, const char *reason, size_t index)
{
	for (size_t i = 0; i < r->n_events; i++)
		if (strcmp(r->events[i].type, type) == 0 &&
		    strcmp(r->events[i].reason, reason) == 0 && index-- == 0)
			return r->events[i].message;
	return "";
}

/* Feed a result's status back as the object's status (as the API write would). */
static void
cfg_take_status(struct cfgbuf *b, struct vmnetcfg_result *r)
{
	vmnetcfg_status_clear(&b->cfg.status);
	b->cfg.status = r->status;
	memset(&r->status, 0, sizeof(r->status));
	vmnetcfg_result_clear(r);
}

static enum crd_cond_status
cond(const struct vmnetcfg_status *st, const char *type)
{
	const struct crd_condition *c = crd_conditions_get(&st->conditions, type);

	return c != NULL ? c->status : CRD_COND_UNKNOWN;
}

static const char *
cond_reason(const struct vmnetcfg_status *st, const char *type)
{
	const struct crd_condition *c = crd_conditions_get(&st->conditions, type);

	return c != NULL && c->reason != NULL ? c->reason : "";
}

static void
test_lowest_free_and_idempotent(void)
{
	struct cfgbuf b;
	struct vmnetcfg_result r;

	reset();
	cfg_init(&b, "vm-a");
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:01", 0);
	cfg_nic(&b, "default/net-2", "02:00:00:00:00:02", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-a", 100, &r), 0);
	CU_ASSERT_TRUE(r.changed);
	CU_ASSERT_EQUAL_FATAL(r.status.n_nics, 2);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 10));
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(r.status.nics[1].allocated_ip, IP(10, 2, 0, 100));
	CU_ASSERT_STRING_EQUAL(r.status.nics[1].network_name, "default/net-2");
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_ALLOCATED), CRD_COND_TRUE);
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_DISABLED), CRD_COND_FALSE);
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_IN_SYNCED), CRD_COND_TRUE);
	CU_ASSERT_EQUAL(r.n_touched, 2);
	CU_ASSERT_EQUAL(n_events(&r, "Warning", NULL), 0);
	cfg_take_status(&b, &r);

	/* applying it twice changes nothing: same addresses, no pool touched, no write */
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-a", 200, &r), 0);
	CU_ASSERT_FALSE(r.changed);
	CU_ASSERT_EQUAL(r.n_touched, 0);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 10));
	CU_ASSERT_TRUE(vmnetcfg_status_equal(&r.status, &b.cfg.status));
	CU_ASSERT_EQUAL(netpool_size(w.net1), 1);
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&b.cfg.status);
}

static void
test_static_and_conflicts(void)
{
	struct cfgbuf a, b;
	struct vmnetcfg_result r;

	reset();
	cfg_init(&a, "vm-a");
	cfg_nic(&a, "default/net-1", "02:00:00:00:00:01", IP(10, 0, 0, 13));
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", 100, &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 13));
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	cfg_take_status(&a, &r);

	/* static IP held by another MAC: Pending, clear message, Event */
	cfg_init(&b, "vm-b");
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:02", IP(10, 0, 0, 13));
	/* and the same MAC as vm-a on the same network: duplicate */
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:01", 0);
	/* an excluded static address: Pending without an Event */
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:03", IP(10, 0, 0, 12));
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-b", 100, &r), 0);
	CU_ASSERT_EQUAL_FATAL(r.status.n_nics, 3);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, 0);
	CU_ASSERT_EQUAL(r.status.nics[1].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(r.status.nics[2].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_ALLOCATED), CRD_COND_FALSE);
	CU_ASSERT_STRING_EQUAL(
	    cond_reason(&r.status, VMNETCFG_COND_ALLOCATED), VMNETCFG_REASON_STATIC_CONFLICT);
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_IN_SYNCED), CRD_COND_FALSE);
	CU_ASSERT_EQUAL_FATAL(r.n_events, 2);
	CU_ASSERT_STRING_EQUAL(r.events[0].reason, VMNETCFG_REASON_STATIC_CONFLICT);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.events[0].message, "10.0.0.13"));
	CU_ASSERT_PTR_NOT_NULL(strstr(r.events[0].message, "02:00:00:00:00:01"));
	CU_ASSERT_STRING_EQUAL(r.events[1].reason, VMNETCFG_REASON_DUPLICATE_MAC);
	CU_ASSERT_PTR_NOT_NULL(strstr(r.events[1].message, "ns/vm-a"));
	{
		const struct crd_condition *c =
		    crd_conditions_get(&r.status.conditions, VMNETCFG_COND_ALLOCATED);
		CU_ASSERT_PTR_NOT_NULL(strstr(c->message, "excluded"));
	}
	/* vm-a's binding is untouched */
	CU_ASSERT_STRING_EQUAL(netpool_by_addr(w.net1, IP(10, 0, 0, 13))->owner, "ns/vm-a");
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&a.cfg.status);
}

static void
test_independent_nics(void)
{
	struct cfgbuf b;
	struct vmnetcfg_result r;

	reset();
	w.net2_ready = false;
	cfg_init(&b, "vm-c");
	cfg_nic(&b, "default/none", "02:00:00:00:00:0a", 0);  /* no IPPool */
	cfg_nic(&b, "default/net-2", "02:00:00:00:00:0b", 0); /* IPAM not built */
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:0c", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-c", 100, &r), 0);
	CU_ASSERT_EQUAL_FATAL(r.status.n_nics, 3);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(r.status.nics[1].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(r.status.nics[2].state, VMNETCFG_STATE_ALLOCATED); /* not blocked */
	CU_ASSERT_EQUAL(r.status.nics[2].allocated_ip, IP(10, 0, 0, 10));
	CU_ASSERT_STRING_EQUAL(
	    cond_reason(&r.status, VMNETCFG_COND_ALLOCATED), VMNETCFG_REASON_NO_IPPOOL);
	{
		const struct crd_condition *c =
		    crd_conditions_get(&r.status.conditions, VMNETCFG_COND_ALLOCATED);
		CU_ASSERT_PTR_NOT_NULL(strstr(c->message, "no IPPool"));
		CU_ASSERT_PTR_NOT_NULL(strstr(c->message, "not built"));
	}
	CU_ASSERT_EQUAL(n_events(&r, "Warning", NULL), 0);
	CU_ASSERT_EQUAL(n_events(&r, "Normal", VMNETCFG_REASON_ALLOCATED), 1); /* net-1 only */
	cfg_take_status(&b, &r);

	/* the pool becomes ready: the pending NIC binds on the next run */
	w.net2_ready = true;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-c", 200, &r), 0);
	CU_ASSERT_TRUE(r.changed);
	CU_ASSERT_EQUAL(r.status.nics[1].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(r.status.nics[1].allocated_ip, IP(10, 2, 0, 100));
	/* Pending -> Allocated: one Allocated Event, for that NIC only */
	CU_ASSERT_EQUAL(r.n_events, 1);
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_ALLOCATED, 0),
	    "02:00:00:00:00:0b on default/net-2: allocated 10.2.0.100");
	CU_ASSERT_EQUAL(r.status.nics[2].allocated_ip, IP(10, 0, 0, 10));
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&b.cfg.status);
}

static void
test_move_network_and_stale(void)
{
	struct cfgbuf b;
	struct vmnetcfg_result r;
	uint8_t mac[MAC_LEN];

	reset();
	mac_parse("02:00:00:00:00:01", mac);
	cfg_init(&b, "vm-d");
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:01", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-d", 100, &r), 0);
	cfg_take_status(&b, &r);
	CU_ASSERT_PTR_NOT_NULL(netpool_by_mac(w.net1, mac));

	/* the NIC moves to net-2: the old address is released, a new one bound */
	snprintf(b.nics[0].network_name, sizeof(b.nics[0].network_name), "default/net-2");
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-d", 200, &r), 0);
	CU_ASSERT_PTR_NULL(netpool_by_mac(w.net1, mac));
	CU_ASSERT_TRUE(ipam_pool_is_free(netpool_ipam(w.net1), IP(10, 0, 0, 10)));
	CU_ASSERT_EQUAL_FATAL(r.status.n_nics, 1);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 2, 0, 100));
	CU_ASSERT_EQUAL(r.n_touched, 2);
	cfg_take_status(&b, &r);

	/* removed while its pool is not ready: listed as Stale until it is */
	b.cfg.spec.n_nics = 0;
	w.net2_ready = false;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-d", 300, &r), 0);
	CU_ASSERT_EQUAL_FATAL(r.status.n_nics, 1);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_STALE);
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_IN_SYNCED), CRD_COND_FALSE);
	CU_ASSERT_EQUAL(r.n_events, 0); /* Stale still holds its address */
	cfg_take_status(&b, &r);
	w.net2_ready = true;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-d", 400, &r), 0);
	CU_ASSERT_EQUAL(r.status.n_nics, 0);
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_RELEASED, 0),
	    "02:00:00:00:00:01 on default/net-2: released 10.2.0.100");
	CU_ASSERT_PTR_NULL(netpool_by_mac(w.net2, mac));
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_IN_SYNCED), CRD_COND_TRUE);
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&b.cfg.status);
}

static void
test_move_to_static(void)
{
	struct cfgbuf a, b;
	struct vmnetcfg_result r;

	reset();
	cfg_init(&a, "vm-a");
	cfg_nic(&a, "default/net-1", "02:00:00:00:00:01", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", 100, &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 10));
	cfg_take_status(&a, &r);
	cfg_init(&b, "vm-b");
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:02", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-b", 100, &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 11));
	cfg_take_status(&b, &r);

	/* vm-a asks for .11 (held by vm-b): keeps .10, Pending */
	a.nics[0].ip_address = IP(10, 0, 0, 11);
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", 200, &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 10));
	CU_ASSERT_EQUAL(r.n_events, 1);
	CU_ASSERT_STRING_EQUAL(netpool_by_addr(w.net1, IP(10, 0, 0, 10))->owner, "ns/vm-a");
	cfg_take_status(&a, &r);

	/* vm-b goes away: vm-a moves to .11 and .10 is free */
	b.cfg.spec.n_nics = 0;
	CU_ASSERT_EQUAL(vmnetcfg_release_all(&b.cfg, "ns/vm-b", lookup, &w, &r), 0);
	CU_ASSERT_EQUAL(r.n_touched, 1);
	vmnetcfg_result_clear(&r);
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", 300, &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 11));
	CU_ASSERT_TRUE(ipam_pool_is_free(netpool_ipam(w.net1), IP(10, 0, 0, 10)));
	/* the held address goes, the static one comes */
	CU_ASSERT_EQUAL(r.n_events, 2);
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_RELEASED, 0),
	    "02:00:00:00:00:01 on default/net-1: released 10.0.0.10");
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_ALLOCATED, 0),
	    "02:00:00:00:00:01 on default/net-1: allocated 10.0.0.11");
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&a.cfg.status);
	vmnetcfg_status_clear(&b.cfg.status);
}

static void
test_exhausted(void)
{
	struct cfgbuf b;
	struct vmnetcfg_result r;

	reset();
	cfg_init(&b, "vm-e");
	/* net-1 has 4 usable addresses (.10-.14 minus the exclude .12) */
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:01", 0);
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:02", 0);
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:03", 0);
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:04", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-e", 100, &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[3].allocated_ip, IP(10, 0, 0, 14));
	vmnetcfg_result_clear(&r);
	cfg_init(&b, "vm-f");
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:05", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-f", 100, &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL_FATAL(r.n_events, 1);
	CU_ASSERT_STRING_EQUAL(r.events[0].reason, VMNETCFG_REASON_EXHAUSTED);
	vmnetcfg_result_clear(&r);
}

/* A broadcast, multicast or all-zero MAC stays Pending (InvalidMAC, a Warning Event) and takes
 * no address: the agents would never serve it. */
static void
test_group_mac(void)
{
	static const char *const bad[] = {
	    "ff:ff:ff:ff:ff:ff", "01:00:5e:00:00:01", "00:00:00:00:00:00"};
	struct cfgbuf b;
	struct vmnetcfg_result r;

	reset();
	cfg_init(&b, "vm-g");
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		cfg_nic(&b, "default/net-1", bad[i], 0);
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:01", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-g", 100, &r), 0);
	CU_ASSERT_EQUAL_FATAL(r.status.n_nics, 4);
	CU_ASSERT_EQUAL_FATAL(n_events(&r, "Warning", NULL), ELEMENTSOF(bad));
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		CU_ASSERT_EQUAL(r.status.nics[i].state, VMNETCFG_STATE_PENDING);
		CU_ASSERT_EQUAL(r.status.nics[i].allocated_ip, 0);
		CU_ASSERT_STRING_EQUAL(r.events[i].type, "Warning");
		CU_ASSERT_STRING_EQUAL(r.events[i].reason, VMNETCFG_REASON_INVALID_MAC);
		CU_ASSERT_PTR_NOT_NULL(strstr(r.events[i].message, bad[i]));
		CU_ASSERT_PTR_NOT_NULL(strstr(r.events[i].message, "broadcast, multicast"));
	}
	/* the good NIC gets the lowest address: the bad ones took none */
	CU_ASSERT_EQUAL(r.status.nics[3].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(r.status.nics[3].allocated_ip, IP(10, 0, 0, 10));
	CU_ASSERT_TRUE(ipam_pool_is_free(netpool_ipam(w.net1), IP(10, 0, 0, 11)));
	vmnetcfg_result_clear(&r);
}

/*
 * Paused, as upstream's: the bindings are released (the pool no longer has the MACs), the
 * status keeps each NIC's address (Pending), Disabled True, Allocated and InSynced False.
 * Unpaused: each NIC takes its remembered address back, not the lowest free one.
 */
static void
test_paused(void)
{
	struct cfgbuf b, x;
	struct vmnetcfg_result r;
	uint8_t m1[MAC_LEN], m2[MAC_LEN];

	reset();
	mac_parse("02:00:00:00:00:01", m1);
	mac_parse("02:00:00:00:00:02", m2);
	/* vm-x holds .10, so vm-p's NICs get .11 and 10.2.0.100 */
	cfg_init(&x, "vm-x");
	cfg_nic(&x, "default/net-1", "02:00:00:00:00:0f", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&x.cfg, "ns/vm-x", 100, &r), 0);
	cfg_take_status(&x, &r);
	cfg_init(&b, "vm-p");
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:01", 0);
	cfg_nic(&b, "default/net-2", "02:00:00:00:00:02", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-p", 100, &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 11));
	cfg_take_status(&b, &r);

	/* paused: both released, remembered in the status */
	b.cfg.spec.paused = true;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-p", 200, &r), 0);
	CU_ASSERT_TRUE(r.changed);
	CU_ASSERT_TRUE(r.released);
	CU_ASSERT_EQUAL(r.n_touched, 2); /* both pools' status drop the MACs */
	CU_ASSERT_PTR_NULL(netpool_by_mac(w.net1, m1));
	CU_ASSERT_PTR_NULL(netpool_by_mac(w.net2, m2));
	CU_ASSERT_TRUE(ipam_pool_is_free(netpool_ipam(w.net1), IP(10, 0, 0, 11)));
	CU_ASSERT_EQUAL_FATAL(r.status.n_nics, 2);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 11));
	CU_ASSERT_EQUAL(r.status.nics[1].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(r.status.nics[1].allocated_ip, IP(10, 2, 0, 100));
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_DISABLED), CRD_COND_TRUE);
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_ALLOCATED), CRD_COND_FALSE);
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_IN_SYNCED), CRD_COND_FALSE);
	CU_ASSERT_STRING_EQUAL(
	    cond_reason(&r.status, VMNETCFG_COND_DISABLED), VMNETCFG_REASON_PAUSED);
	CU_ASSERT_STRING_EQUAL(
	    cond_reason(&r.status, VMNETCFG_COND_ALLOCATED), VMNETCFG_REASON_PAUSED);
	CU_ASSERT_STRING_EQUAL(
	    cond_reason(&r.status, VMNETCFG_COND_IN_SYNCED), VMNETCFG_REASON_PAUSED);
	CU_ASSERT_EQUAL(n_events(&r, "Warning", NULL), 0);
	CU_ASSERT_EQUAL(n_events(&r, "Normal", VMNETCFG_REASON_RELEASED), 2);
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_RELEASED, 0),
	    "02:00:00:00:00:01 on default/net-1: released 10.0.0.11");
	cfg_take_status(&b, &r);

	/* again (a resync): nothing changes, nothing is released, no Event */
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-p", 250, &r), 0);
	CU_ASSERT_FALSE(r.changed);
	CU_ASSERT_EQUAL(r.n_touched, 0);
	CU_ASSERT_EQUAL(r.n_events, 0);
	vmnetcfg_result_clear(&r);

	/* a NIC added while paused is listed Pending without an address, and binds nothing */
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:03", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-p", 260, &r), 0);
	CU_ASSERT_EQUAL_FATAL(r.status.n_nics, 3);
	CU_ASSERT_EQUAL(r.status.nics[2].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(r.status.nics[2].allocated_ip, 0);
	CU_ASSERT_EQUAL(netpool_size(w.net1), 1); /* vm-x's only */
	cfg_take_status(&b, &r);

	/* vm-x goes away: .10 is the lowest free, but vm-p takes .11 back on resume */
	CU_ASSERT_EQUAL(vmnetcfg_release_all(&x.cfg, "ns/vm-x", lookup, &w, &r), 0);
	vmnetcfg_result_clear(&r);
	b.cfg.spec.paused = false;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-p", 300, &r), 0);
	CU_ASSERT_EQUAL_FATAL(r.status.n_nics, 3);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 11));
	CU_ASSERT_EQUAL(r.status.nics[1].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(r.status.nics[1].allocated_ip, IP(10, 2, 0, 100));
	CU_ASSERT_EQUAL(r.status.nics[2].allocated_ip, IP(10, 0, 0, 10)); /* the new NIC */
	CU_ASSERT_STRING_EQUAL(netpool_by_addr(w.net1, IP(10, 0, 0, 11))->owner, "ns/vm-p");
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_DISABLED), CRD_COND_FALSE);
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_ALLOCATED), CRD_COND_TRUE);
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_IN_SYNCED), CRD_COND_TRUE);
	/* allocated again, and nothing "released" for addresses a paused status only
	 * remembered */
	CU_ASSERT_EQUAL(n_events(&r, "Normal", VMNETCFG_REASON_ALLOCATED), 3);
	CU_ASSERT_EQUAL(n_events(&r, "Normal", VMNETCFG_REASON_RELEASED), 0);
	cfg_take_status(&b, &r);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-p", 400, &r), 0);
	CU_ASSERT_FALSE(r.changed);
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&b.cfg.status);
	vmnetcfg_status_clear(&x.cfg.status);
}

/*
 * Resumed after another NIC took the remembered address: Pending (AddressTaken) with a Warning
 * Event naming the holder, the address still remembered and never taken from its holder; back
 * once the holder releases it.
 */
static void
test_resume_address_taken(void)
{
	struct cfgbuf b, t;
	struct vmnetcfg_result r;
	const struct crd_condition *c;

	reset();
	cfg_init(&b, "vm-p");
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:01", 0);
	cfg_nic(&b, "default/net-2", "02:00:00:00:00:02", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-p", 100, &r), 0);
	cfg_take_status(&b, &r);
	b.cfg.spec.paused = true;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-p", 200, &r), 0);
	cfg_take_status(&b, &r);

	/* meanwhile vm-t gets .10, the lowest free: the address vm-p remembers */
	cfg_init(&t, "vm-t");
	cfg_nic(&t, "default/net-1", "02:00:00:00:00:0a", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&t.cfg, "ns/vm-t", 300, &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 10));
	cfg_take_status(&t, &r);

	b.cfg.spec.paused = false;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-p", 400, &r), 0);
	CU_ASSERT_EQUAL_FATAL(r.status.n_nics, 2);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 10));  /* remembered */
	CU_ASSERT_EQUAL(r.status.nics[1].state, VMNETCFG_STATE_ALLOCATED); /* independent */
	CU_ASSERT_EQUAL(r.status.nics[1].allocated_ip, IP(10, 2, 0, 100));
	CU_ASSERT_STRING_EQUAL(netpool_by_addr(w.net1, IP(10, 0, 0, 10))->owner, "ns/vm-t");
	CU_ASSERT_PTR_NULL(netpool_by_mac(w.net1, (uint8_t[]){2, 0, 0, 0, 0, 1}));
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_DISABLED), CRD_COND_FALSE);
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_ALLOCATED), CRD_COND_FALSE);
	CU_ASSERT_STRING_EQUAL(
	    cond_reason(&r.status, VMNETCFG_COND_ALLOCATED), VMNETCFG_REASON_ADDRESS_TAKEN);
	c = crd_conditions_get(&r.status.conditions, VMNETCFG_COND_ALLOCATED);
	CU_ASSERT_PTR_NOT_NULL(strstr(c->message, "10.0.0.10"));
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_IN_SYNCED), CRD_COND_FALSE);
	CU_ASSERT_EQUAL_FATAL(n_events(&r, "Warning", VMNETCFG_REASON_ADDRESS_TAKEN), 1);
	CU_ASSERT_PTR_NOT_NULL(
	    strstr(event_message(&r, "Warning", VMNETCFG_REASON_ADDRESS_TAKEN, 0),
		"10.0.0.10, its address before the pause, is now held by MAC 02:00:00:00:00:0a "
		"(ns/vm-t)"));
	CU_ASSERT_EQUAL(n_events(&r, "Normal", VMNETCFG_REASON_RELEASED), 0);
	cfg_take_status(&b, &r);

	/* still taken: the same Pending status, no write */
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-p", 500, &r), 0);
	CU_ASSERT_FALSE(r.changed);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 10));
	vmnetcfg_result_clear(&r);

	/* vm-t releases it: vm-p takes it back */
	CU_ASSERT_EQUAL(vmnetcfg_release_all(&t.cfg, "ns/vm-t", lookup, &w, &r), 0);
	vmnetcfg_result_clear(&r);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-p", 600, &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 10));
	CU_ASSERT_EQUAL(cond(&r.status, VMNETCFG_COND_ALLOCATED), CRD_COND_TRUE);
	vmnetcfg_result_clear(&r);

	/* a static ipAddress wins over the remembered address */
	reset();
	vmnetcfg_status_clear(&b.cfg.status);
	b.cfg.spec.paused = false;
	b.cfg.spec.n_nics = 1;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-p", 700, &r), 0);
	cfg_take_status(&b, &r);
	b.cfg.spec.paused = true;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-p", 800, &r), 0);
	cfg_take_status(&b, &r);
	b.cfg.spec.paused = false;
	b.nics[0].ip_address = IP(10, 0, 0, 13);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-p", 900, &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 13));
	CU_ASSERT_TRUE(ipam_pool_is_free(netpool_ipam(w.net1), IP(10, 0, 0, 10)));
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&b.cfg.status);
	vmnetcfg_status_clear(&t.cfg.status);
}

/* Paused while a NIC just removed from the spec sits on a pool that is not ready: listed
 * Stale (its address still bound there) until that pool can release it. */
static void
test_paused_stale(void)
{
	struct cfgbuf b;
	struct vmnetcfg_result r;
	uint8_t m2[MAC_LEN];

	reset();
	mac_parse("02:00:00:00:00:02", m2);
	cfg_init(&b, "vm-s");
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:01", 0);
	cfg_nic(&b, "default/net-2", "02:00:00:00:00:02", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-s", 100, &r), 0);
	cfg_take_status(&b, &r);

	b.cfg.spec.n_nics = 1;
	b.cfg.spec.paused = true;
	w.net2_ready = false;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-s", 200, &r), 0);
	CU_ASSERT_EQUAL_FATAL(r.status.n_nics, 2);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(r.status.nics[1].state, VMNETCFG_STATE_STALE);
	CU_ASSERT_EQUAL(r.status.nics[1].allocated_ip, IP(10, 2, 0, 100));
	CU_ASSERT_EQUAL(n_events(&r, "Normal", VMNETCFG_REASON_RELEASED), 1); /* net-1 only */
	cfg_take_status(&b, &r);

	w.net2_ready = true;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-s", 300, &r), 0);
	CU_ASSERT_EQUAL(r.status.n_nics, 1);
	CU_ASSERT_PTR_NULL(netpool_by_mac(w.net2, m2));
	CU_ASSERT_EQUAL(r.n_touched, 1);
	CU_ASSERT_EQUAL(n_events(&r, "Normal", VMNETCFG_REASON_RELEASED), 1);
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_RELEASED, 0),
	    "02:00:00:00:00:02 on default/net-2: released 10.2.0.100");
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&b.cfg.status);
}

static void
test_release_all(void)
{
	struct cfgbuf b;
	struct vmnetcfg_result r;

	reset();
	cfg_init(&b, "vm-r");
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:01", 0);
	cfg_nic(&b, "default/net-2", "02:00:00:00:00:02", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-r", 100, &r), 0);
	cfg_take_status(&b, &r);
	/* a pool not ready: the finalizer must stay */
	w.net2_ready = false;
	CU_ASSERT_EQUAL(vmnetcfg_release_all(&b.cfg, "ns/vm-r", lookup, &w, &r), -EAGAIN);
	CU_ASSERT_EQUAL(netpool_size(w.net1), 0);
	vmnetcfg_result_clear(&r);
	w.net2_ready = true;
	CU_ASSERT_EQUAL(vmnetcfg_release_all(&b.cfg, "ns/vm-r", lookup, &w, &r), 0);
	CU_ASSERT_EQUAL(netpool_size(w.net2), 0);
	CU_ASSERT_EQUAL(r.n_touched, 1);
	vmnetcfg_result_clear(&r);
	/* someone else's binding is never released */
	{
		uint8_t mac[MAC_LEN];
		uint32_t addr;

		mac_parse("02:00:00:00:00:01", mac);
		CU_ASSERT_EQUAL(netpool_bind(w.net1, mac, 0, "ns/other", &addr), 0);
		CU_ASSERT_EQUAL(vmnetcfg_release_all(&b.cfg, "ns/vm-r", lookup, &w, &r), 0);
		CU_ASSERT_EQUAL(netpool_size(w.net1), 1);
		vmnetcfg_result_clear(&r);
	}
	vmnetcfg_status_clear(&b.cfg.status);
}

/* Normal Events on the transitions of the status only: Allocated when a NIC gets an address,
 * Released when it gives one back; none on a second identical compute (a resync). */
static void
test_normal_events(void)
{
	struct cfgbuf b, retry;
	struct vmnetcfg_result r;

	reset();
	cfg_init(&b, "vm-n");
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:01", 0);
	cfg_nic(&b, "default/net-2", "02:00:00:00:00:02", 0);
	retry = b;
	retry.cfg.spec.nics = retry.nics;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-n", 100, &r), 0);
	CU_ASSERT_EQUAL(r.n_events, 2);
	CU_ASSERT_EQUAL(n_events(&r, "Normal", VMNETCFG_REASON_ALLOCATED), 2);
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_ALLOCATED, 0),
	    "02:00:00:00:00:01 on default/net-1: allocated 10.0.0.10");
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_ALLOCATED, 1),
	    "02:00:00:00:00:02 on default/net-2: allocated 10.2.0.100");
	cfg_take_status(&b, &r);

	/* a resync: the same status again, no Event at all */
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-n", 200, &r), 0);
	CU_ASSERT_FALSE(r.changed);
	CU_ASSERT_EQUAL(r.n_events, 0);
	vmnetcfg_result_clear(&r);

	/* the status write failed: the object still shows no status though the bindings are
	 * made; the retry reports the transition again (it is recorded once a write succeeds) */
	CU_ASSERT_EQUAL_FATAL(compute(&retry.cfg, "ns/vm-n", 250, &r), 0);
	CU_ASSERT_EQUAL(r.n_touched, 0); /* nothing bound this time */
	CU_ASSERT_EQUAL(n_events(&r, "Normal", VMNETCFG_REASON_ALLOCATED), 2);
	vmnetcfg_result_clear(&r);

	/* the second NIC moves to net-1: released on net-2, allocated on net-1 */
	snprintf(b.nics[1].network_name, sizeof(b.nics[1].network_name), "default/net-1");
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-n", 300, &r), 0);
	CU_ASSERT_EQUAL(r.n_events, 2);
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_RELEASED, 0),
	    "02:00:00:00:00:02 on default/net-2: released 10.2.0.100");
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_ALLOCATED, 0),
	    "02:00:00:00:00:02 on default/net-1: allocated 10.0.0.11");
	cfg_take_status(&b, &r);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-n", 400, &r), 0);
	CU_ASSERT_EQUAL(r.n_events, 0);
	vmnetcfg_result_clear(&r);

	/* the first NIC leaves the spec: released */
	b.nics[0] = b.nics[1];
	b.cfg.spec.n_nics = 1;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-n", 500, &r), 0);
	CU_ASSERT_EQUAL(r.n_events, 1);
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_RELEASED, 0),
	    "02:00:00:00:00:01 on default/net-1: released 10.0.0.10");
	cfg_take_status(&b, &r);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-n", 600, &r), 0);
	CU_ASSERT_EQUAL(r.n_events, 0);
	vmnetcfg_result_clear(&r);

	/* deleted: one Released per binding given back, then none */
	CU_ASSERT_EQUAL(vmnetcfg_release_all(&b.cfg, "ns/vm-n", lookup, &w, &r), 0);
	CU_ASSERT_EQUAL(r.n_events, 1);
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_RELEASED, 0),
	    "02:00:00:00:00:02 on default/net-1: released 10.0.0.11");
	vmnetcfg_result_clear(&r);
	CU_ASSERT_EQUAL(vmnetcfg_release_all(&b.cfg, "ns/vm-n", lookup, &w, &r), 0);
	CU_ASSERT_EQUAL(r.n_events, 0);
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&b.cfg.status);
}

/* A new generation rewrites the conditions once, with the new observedGeneration. */
static void
test_generation_bump(void)
{
	struct cfgbuf b;
	struct vmnetcfg_result r;
	const struct crd_condition *c;

	reset();
	cfg_init(&b, "vm-g");
	cfg_nic(&b, "default/net-1", "02:00:00:00:00:01", 0);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-g", 100, &r), 0);
	cfg_take_status(&b, &r);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-g", 200, &r), 0);
	CU_ASSERT_FALSE(r.changed);
	vmnetcfg_result_clear(&r);

	/* an edit that leaves the outcome as it was (say, a label): generation 2 */
	b.cfg.meta.generation = 2;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-g", 300, &r), 0);
	CU_ASSERT_TRUE(r.changed);
	CU_ASSERT_EQUAL(r.n_events, 0);
	c = crd_conditions_get(&r.status.conditions, VMNETCFG_COND_ALLOCATED);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->observed_generation, 2);
	CU_ASSERT_EQUAL(c->last_update_time, 300);
	CU_ASSERT_EQUAL(c->last_transition_time, 100); /* nothing transitioned */
	CU_ASSERT_FALSE(vmnetcfg_status_equal(&r.status, &b.cfg.status));
	cfg_take_status(&b, &r);
	/* once */
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-g", 400, &r), 0);
	CU_ASSERT_FALSE(r.changed);
	vmnetcfg_result_clear(&r);

	/* paused at generation 3: the frozen status carries it too */
	b.cfg.meta.generation = 3;
	b.cfg.spec.paused = true;
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-g", 500, &r), 0);
	CU_ASSERT_TRUE(r.changed);
	CU_ASSERT_EQUAL(
	    crd_conditions_get(&r.status.conditions, VMNETCFG_COND_IN_SYNCED)->observed_generation,
	    3);
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&b.cfg.status);
}

static const struct test_case vmnetcfg_tests[] = {
    {"lowest free, idempotent", test_lowest_free_and_idempotent},
    {"static IP, duplicate MAC, conflicts", test_static_and_conflicts},
    {"NICs are independent", test_independent_nics},
    {"NIC moves network, stale", test_move_network_and_stale},
    {"move to a static address", test_move_to_static},
    {"pool exhausted", test_exhausted},
    {"broadcast, multicast and zero MACs stay Pending", test_group_mac},
    {"paused: released, remembered, taken back", test_paused},
    {"resumed after the address was taken", test_resume_address_taken},
    {"paused with a removed NIC on a pool not ready", test_paused_stale},
    {"release all", test_release_all},
    {"Normal Events on transitions only", test_normal_events},
    {"a new generation rewrites the conditions once", test_generation_bump},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "vmnetcfg", .init = setup, .cleanup = teardown, .tests = vmnetcfg_tests},
    {.name = NULL},
};
