/* SPDX-License-Identifier: Apache-2.0 */
/*
 * controller/nicbind.c + nicbind6.c on dual-stack pools: a NIC gets an IPv4 and an IPv6
 * address (pin, keep, remembered, lowest free), Allocated only with both; conflicts Pending
 * with a Warning Event; released on removal, network move, pause, an ipv6Config removed;
 * and a controller killed at random moments (kill -9: the in-memory IPAM lost, rebuilt from
 * the union of the committed VMNetCfg statuses and the last IPPool status written) never
 * commits one address to two MACs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/nicbind.h"
#include "lib/ip6.h"
#include "tests/runner.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static struct in6_addr
A6(const char *s) {
	struct in6_addr a;

	if (ipv6_parse(s, &a) < 0)
		abort();
	return a;
}
#define PA6(s) (&(struct in6_addr[1]){A6(s)}[0])

static bool
eq6(const struct in6_addr *a, const char *s)
{
	return ipv6_equal(a, PA6(s));
}

/* default/net-1: dual stack (IPv4 .10-.20, IPv6 ::10-::14, ::12 excluded); default/net-2:
 * IPv4 only; default/net-3: dual stack (10.3.0.10-.20, 2001:db8:3::10-::20). */
struct world {
	struct netpool *net[3];
};
static struct world w;
static const char *const NETS[3] = {"default/net-1", "default/net-2", "default/net-3"};

static struct netpool *
lookup(void *userdata, const char *network, enum netpool_avail *avail)
{
	struct world *wd = userdata;

	for (size_t i = 0; i < 3; i++)
		if (strcmp(network, NETS[i]) == 0) {
			*avail = NETPOOL_READY;
			return wd->net[i];
		}
	*avail = NETPOOL_ABSENT;
	return NULL;
}

static struct in6_addr excl6[1];

static void
spec_of(int i, struct ippool_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->prefix = 24;
	if (i == 2) {
		s->cidr_addr = IP(10, 3, 0, 0);
		s->server_ip = IP(10, 3, 0, 1);
	} else {
		s->cidr_addr = IP(10, i, 0, 0);
		s->server_ip = IP(10, i, 0, 1);
	}
	s->start = s->cidr_addr | 10;
	s->end = s->cidr_addr | 20;
	if (i == 1)
		return;
	s->has_ipv6 = true;
	s->ipv6.prefix = 64;
	if (i == 0) {
		s->ipv6.cidr_addr = A6("2001:db8::");
		s->ipv6.server_ip = A6("2001:db8::1");
		s->ipv6.start = A6("2001:db8::10");
		s->ipv6.end = A6("2001:db8::14");
		excl6[0] = A6("2001:db8::12");
		s->ipv6.exclude = excl6;
		s->ipv6.n_exclude = 1;
	} else {
		s->ipv6.cidr_addr = A6("2001:db8:3::");
		s->ipv6.server_ip = A6("2001:db8:3::1");
		s->ipv6.start = A6("2001:db8:3::10");
		s->ipv6.end = A6("2001:db8:3::20");
	}
}

static int
setup(void)
{
	struct ippool_spec s;

	for (int i = 0; i < 3; i++) {
		spec_of(i, &s);
		if (netpool_new(&s, &w.net[i]) < 0)
			return -1;
	}
	return 0;
}

static int
teardown(void)
{
	for (int i = 0; i < 3; i++)
		w.net[i] = netpool_free(w.net[i]);
	return 0;
}

static void
reset(void)
{
	for (int i = 0; i < 3; i++) {
		w.net[i] = netpool_free(w.net[i]);
		/* setup() cannot fail here: it did at start */
	}
	setup();
}

struct cfgbuf {
	struct vmnetcfg cfg;
	struct vmnetcfg_nic nics[4];
};

static void
cfg_init(struct cfgbuf *b, const char *vm)
{
	memset(b, 0, sizeof(*b));
	b->cfg.meta.generation = 1;
	b->cfg.spec.vm_name = (char *)vm;
	b->cfg.spec.nics = b->nics;
}

static struct vmnetcfg_nic *
cfg_nic(struct cfgbuf *b, const char *net, const char *mac, uint32_t ip, const char *ip6)
{
	struct vmnetcfg_nic *n = &b->nics[b->cfg.spec.n_nics++];

	snprintf(n->network_name, sizeof(n->network_name), "%s", net);
	snprintf(n->mac, sizeof(n->mac), "%s", mac);
	n->ip_address = ip;
	if (ip6 != NULL)
		n->ipv6_address = A6(ip6);
	return n;
}

static void
cfg_take_status(struct cfgbuf *b, struct vmnetcfg_result *r)
{
	vmnetcfg_status_clear(&b->cfg.status);
	b->cfg.status = r->status;
	memset(&r->status, 0, sizeof(r->status));
	vmnetcfg_result_clear(r);
}

static int
compute(const struct vmnetcfg *cfg, const char *key, struct vmnetcfg_result *r)
{
	return vmnetcfg_compute(cfg, key, lookup, &w, 100, r);
}

static size_t
n_events(const struct vmnetcfg_result *r, const char *type, const char *reason)
{
	size_t n = 0;

	for (size_t i = 0; i < r->n_events; i++)
		n += strcmp(r->events[i].type, type) == 0 &&
		     (reason == NULL || strcmp(r->events[i].reason, reason) == 0);
	return n;
}

static const char *
event_message(const struct vmnetcfg_result *r, const char *type, const char *reason)
{
	for (size_t i = 0; i < r->n_events; i++)
		if (strcmp(r->events[i].type, type) == 0 &&
		    strcmp(r->events[i].reason, reason) == 0)
			return r->events[i].message;
	return "";
}

static const char *
cond_reason(const struct vmnetcfg_status *st, const char *type)
{
	const struct crd_condition *c = crd_conditions_get(&st->conditions, type);

	return c != NULL && c->reason != NULL ? c->reason : "";
}

static bool
cond_true(const struct vmnetcfg_status *st, const char *type)
{
	const struct crd_condition *c = crd_conditions_get(&st->conditions, type);

	return c != NULL && c->status == CRD_COND_TRUE;
}

static void
test_dual_lowest_free(void)
{
	struct cfgbuf b;
	struct vmnetcfg_result r;
	struct ippool_status st;

	reset();
	cfg_init(&b, "vm-a");
	cfg_nic(&b, NETS[0], "02:00:00:00:00:01", 0, NULL);
	cfg_nic(&b, NETS[1], "02:00:00:00:00:02", 0, NULL);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-a", &r), 0);
	CU_ASSERT_EQUAL_FATAL(r.status.n_nics, 2);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 10));
	CU_ASSERT_TRUE(eq6(&r.status.nics[0].allocated_ipv6, "2001:db8::10"));
	/* the IPv4-only pool: Allocated with its IPv4 address alone */
	CU_ASSERT_EQUAL(r.status.nics[1].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_TRUE(ipv6_is_zero(&r.status.nics[1].allocated_ipv6));
	CU_ASSERT_TRUE(cond_true(&r.status, VMNETCFG_COND_ALLOCATED));
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_ALLOCATED),
	    "02:00:00:00:00:01 on default/net-1: allocated 10.0.0.10, 2001:db8::10");
	cfg_take_status(&b, &r);
	/* idempotent */
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-a", &r), 0);
	CU_ASSERT_FALSE(r.changed);
	CU_ASSERT_EQUAL(r.n_touched, 0);
	CU_ASSERT_EQUAL(r.n_events, 0);
	vmnetcfg_result_clear(&r);
	/* the pool status lists it in both maps */
	memset(&st, 0, sizeof(st));
	CU_ASSERT_EQUAL_FATAL(netpool_render_status(w.net[0], &st), 0);
	CU_ASSERT_EQUAL(st.used, 1);
	CU_ASSERT_EQUAL(st.used6, 1);
	CU_ASSERT_PTR_NOT_NULL(ippool_status_find6(&st, PA6("2001:db8::10")));
	ippool_status_clear(&st);
	vmnetcfg_status_clear(&b.cfg.status);
}

static void
test_static6_and_conflicts(void)
{
	struct cfgbuf a, b;
	struct vmnetcfg_result r;

	reset();
	cfg_init(&a, "vm-a");
	cfg_nic(&a, NETS[0], "02:00:00:00:00:01", 0, "2001:db8::13");
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_TRUE(eq6(&r.status.nics[0].allocated_ipv6, "2001:db8::13"));
	cfg_take_status(&a, &r);

	cfg_init(&b, "vm-b");
	/* the static IPv6 held by vm-a: Pending, its IPv4 address held meanwhile */
	cfg_nic(&b, NETS[0], "02:00:00:00:00:02", 0, "2001:db8::13");
	/* excluded: Pending, no Event */
	cfg_nic(&b, NETS[0], "02:00:00:00:00:03", 0, "2001:db8::12");
	/* the same MAC as vm-a's: duplicate */
	cfg_nic(&b, NETS[0], "02:00:00:00:00:01", 0, NULL);
	/* an IPv6 pin on an IPv4-only pool */
	cfg_nic(&b, NETS[1], "02:00:00:00:00:04", 0, "2001:db8::13");
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-b", &r), 0);
	CU_ASSERT_EQUAL_FATAL(r.status.n_nics, 4);
	for (size_t i = 0; i < 4; i++)
		CU_ASSERT_EQUAL(r.status.nics[i].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 11));
	CU_ASSERT_TRUE(ipv6_is_zero(&r.status.nics[0].allocated_ipv6));
	CU_ASSERT_EQUAL(r.status.nics[2].allocated_ip, 0);
	CU_ASSERT_STRING_EQUAL(
	    cond_reason(&r.status, VMNETCFG_COND_ALLOCATED), VMNETCFG_REASON_STATIC_CONFLICT);
	CU_ASSERT_EQUAL(n_events(&r, "Warning", VMNETCFG_REASON_STATIC_CONFLICT), 1);
	CU_ASSERT_EQUAL(n_events(&r, "Warning", VMNETCFG_REASON_DUPLICATE_MAC), 1);
	CU_ASSERT_EQUAL(n_events(&r, "Warning", VMNETCFG_REASON_STATIC_UNAVAILABLE), 0);
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Warning", VMNETCFG_REASON_STATIC_CONFLICT),
	    "02:00:00:00:00:02 on default/net-1: static IPv6 2001:db8::13 is already held by "
	    "MAC 02:00:00:00:00:01 (ns/vm-a)");
	{
		const struct crd_condition *c =
		    crd_conditions_get(&r.status.conditions, VMNETCFG_COND_ALLOCATED);

		CU_ASSERT_PTR_NOT_NULL_FATAL(c);
		CU_ASSERT_PTR_NOT_NULL(strstr(c->message, "static IPv6 2001:db8::12 is excluded"));
		CU_ASSERT_PTR_NOT_NULL(strstr(c->message, "the IPPool has no ipv6Config"));
	}
	/* vm-a's binding untouched */
	CU_ASSERT_STRING_EQUAL(
	    netpool6_by_addr(netpool_v6(w.net[0]), PA6("2001:db8::13"))->owner, "ns/vm-a");
	cfg_take_status(&b, &r);

	/* vm-a lets it go: vm-b's NIC takes its pin and is Allocated */
	CU_ASSERT_EQUAL(vmnetcfg_release_all(&a.cfg, "ns/vm-a", lookup, &w, &r), 0);
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_RELEASED),
	    "02:00:00:00:00:01 on default/net-1: released 10.0.0.10, 2001:db8::13");
	vmnetcfg_result_clear(&r);
	CU_ASSERT_EQUAL_FATAL(compute(&b.cfg, "ns/vm-b", &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 11));
	CU_ASSERT_TRUE(eq6(&r.status.nics[0].allocated_ipv6, "2001:db8::13"));
	/* the MAC is free now too */
	CU_ASSERT_EQUAL(r.status.nics[2].state, VMNETCFG_STATE_ALLOCATED);
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&a.cfg.status);
	vmnetcfg_status_clear(&b.cfg.status);
}

/* A pinned NIC that holds another IPv6 address moves once the pin is free. */
static void
test_move_to_static6(void)
{
	struct cfgbuf a;
	struct vmnetcfg_result r;

	reset();
	cfg_init(&a, "vm-a");
	cfg_nic(&a, NETS[0], "02:00:00:00:00:01", 0, NULL);
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", &r), 0);
	cfg_take_status(&a, &r);
	a.nics[0].ipv6_address = A6("2001:db8::14");
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_TRUE(eq6(&r.status.nics[0].allocated_ipv6, "2001:db8::14"));
	CU_ASSERT_TRUE(netpool6_is_free(netpool_v6(w.net[0]), PA6("2001:db8::10")));
	CU_ASSERT_TRUE(r.released);
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_RELEASED),
	    "02:00:00:00:00:01 on default/net-1: released 2001:db8::10");
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&a.cfg.status);
}

/* IPv6 exhausted while IPv4 has room: Pending with its IPv4 held; Allocated once one frees. */
static void
test_exhausted6(void)
{
	struct cfgbuf b[5];
	struct vmnetcfg_result r;
	char mac[MAC_STRLEN], key[16];

	reset();
	for (int i = 0; i < 5; i++) {
		snprintf(mac, sizeof(mac), "02:00:00:00:01:%02x", i);
		snprintf(key, sizeof(key), "ns/vm-%d", i);
		cfg_init(&b[i], "vm");
		cfg_nic(&b[i], NETS[0], mac, 0, NULL);
		CU_ASSERT_EQUAL_FATAL(compute(&b[i].cfg, key, &r), 0);
		cfg_take_status(&b[i], &r);
	}
	/* ::10 ::11 ::13 ::14: the fifth waits */
	CU_ASSERT_EQUAL(b[4].cfg.status.nics[0].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(b[4].cfg.status.nics[0].allocated_ip, IP(10, 0, 0, 14));
	CU_ASSERT_STRING_EQUAL(
	    cond_reason(&b[4].cfg.status, VMNETCFG_COND_ALLOCATED), VMNETCFG_REASON_EXHAUSTED);
	CU_ASSERT_EQUAL(b[3].cfg.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	/* again: still Pending, its IPv4 address kept, nothing new */
	CU_ASSERT_EQUAL_FATAL(compute(&b[4].cfg, "ns/vm-4", &r), 0);
	CU_ASSERT_FALSE(r.changed);
	vmnetcfg_result_clear(&r);
	/* vm-1 removes its NIC: both its addresses released, vm-4 gets ::11 */
	b[1].cfg.spec.n_nics = 0;
	CU_ASSERT_EQUAL_FATAL(compute(&b[1].cfg, "ns/vm-1", &r), 0);
	CU_ASSERT_TRUE(r.released);
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_RELEASED),
	    "02:00:00:00:01:01 on default/net-1: released 10.0.0.11, 2001:db8::11");
	cfg_take_status(&b[1], &r);
	CU_ASSERT_EQUAL_FATAL(compute(&b[4].cfg, "ns/vm-4", &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 14));
	CU_ASSERT_TRUE(eq6(&r.status.nics[0].allocated_ipv6, "2001:db8::11"));
	vmnetcfg_result_clear(&r);
	for (int i = 0; i < 5; i++)
		vmnetcfg_status_clear(&b[i].cfg.status);
}

/* A NIC moved to another network releases both addresses on the old one. */
static void
test_move_network6(void)
{
	struct cfgbuf a;
	struct vmnetcfg_result r;

	reset();
	cfg_init(&a, "vm-a");
	cfg_nic(&a, NETS[0], "02:00:00:00:00:01", 0, NULL);
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", &r), 0);
	cfg_take_status(&a, &r);
	snprintf(a.nics[0].network_name, sizeof(a.nics[0].network_name), "%s", NETS[2]);
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", &r), 0);
	CU_ASSERT_EQUAL_FATAL(r.status.n_nics, 1);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_TRUE(eq6(&r.status.nics[0].allocated_ipv6, "2001:db8:3::10"));
	CU_ASSERT_EQUAL(netpool6_size(netpool_v6(w.net[0])), 0);
	CU_ASSERT_EQUAL(netpool_size(w.net[0]), 0);
	CU_ASSERT_EQUAL(r.n_touched, 2);
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&a.cfg.status);
}

/* Paused: both released and remembered; resumed: both taken back. */
static void
test_pause6(void)
{
	struct cfgbuf a, x;
	struct vmnetcfg_result r;

	reset();
	cfg_init(&a, "vm-a");
	cfg_nic(&a, NETS[0], "02:00:00:00:00:01", 0, NULL);
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", &r), 0);
	cfg_take_status(&a, &r);
	a.cfg.spec.paused = true;
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_TRUE(eq6(&r.status.nics[0].allocated_ipv6, "2001:db8::10"));
	CU_ASSERT_EQUAL(netpool6_size(netpool_v6(w.net[0])), 0);
	cfg_take_status(&a, &r);
	/* meanwhile another NIC takes the lowest free: ::10 */
	cfg_init(&x, "vm-x");
	cfg_nic(&x, NETS[0], "02:00:00:00:00:0f", 0, NULL);
	CU_ASSERT_EQUAL_FATAL(compute(&x.cfg, "ns/vm-x", &r), 0);
	CU_ASSERT_TRUE(eq6(&r.status.nics[0].allocated_ipv6, "2001:db8::10"));
	cfg_take_status(&x, &r);
	/* resumed: its IPv6 address is held: Pending AddressTaken, still remembered */
	a.cfg.spec.paused = false;
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_TRUE(eq6(&r.status.nics[0].allocated_ipv6, "2001:db8::10"));
	CU_ASSERT_EQUAL(n_events(&r, "Warning", VMNETCFG_REASON_ADDRESS_TAKEN), 2);
	cfg_take_status(&a, &r);
	/* vm-x goes: vm-a gets both back */
	CU_ASSERT_EQUAL(vmnetcfg_release_all(&x.cfg, "ns/vm-x", lookup, &w, &r), 0);
	vmnetcfg_result_clear(&r);
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 10));
	CU_ASSERT_TRUE(eq6(&r.status.nics[0].allocated_ipv6, "2001:db8::10"));
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&a.cfg.status);
	vmnetcfg_status_clear(&x.cfg.status);
}

/* An ipv6Config added to a pool with NICs: they get IPv6 addresses; removed: released. */
static void
test_ipv6config_added_removed(void)
{
	struct cfgbuf a;
	struct vmnetcfg_result r;
	struct ippool_spec s;

	reset();
	spec_of(0, &s);
	s.has_ipv6 = false;
	CU_ASSERT_EQUAL_FATAL(netpool_reset_ipv6(w.net[0], &s), 0);
	cfg_init(&a, "vm-a");
	cfg_nic(&a, NETS[0], "02:00:00:00:00:01", 0, NULL);
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", &r), 0);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_TRUE(ipv6_is_zero(&r.status.nics[0].allocated_ipv6));
	cfg_take_status(&a, &r);

	spec_of(0, &s);
	CU_ASSERT_EQUAL_FATAL(netpool_reset_ipv6(w.net[0], &s), 0);
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", &r), 0);
	CU_ASSERT_TRUE(r.changed);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 10));
	CU_ASSERT_TRUE(eq6(&r.status.nics[0].allocated_ipv6, "2001:db8::10"));
	CU_ASSERT_EQUAL(n_events(&r, "Normal", VMNETCFG_REASON_ALLOCATED), 1);
	CU_ASSERT_EQUAL(r.n_touched, 1);
	cfg_take_status(&a, &r);

	s.has_ipv6 = false;
	CU_ASSERT_EQUAL_FATAL(netpool_reset_ipv6(w.net[0], &s), 0);
	CU_ASSERT_EQUAL_FATAL(compute(&a.cfg, "ns/vm-a", &r), 0);
	CU_ASSERT_TRUE(r.changed);
	CU_ASSERT_EQUAL(r.status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(r.status.nics[0].allocated_ip, IP(10, 0, 0, 10));
	CU_ASSERT_TRUE(ipv6_is_zero(&r.status.nics[0].allocated_ipv6));
	CU_ASSERT_STRING_EQUAL(event_message(&r, "Normal", VMNETCFG_REASON_RELEASED),
	    "02:00:00:00:00:01 on default/net-1: released 2001:db8::10");
	vmnetcfg_result_clear(&r);
	vmnetcfg_status_clear(&a.cfg.status);
}

/* --- kill -9 at any moment ------------------------------------------------------------------ */

#define CRASH_CFGS 12

/* What the API server holds: the committed VMNetCfgs and the IPPool status last written. */
struct api {
	struct cfgbuf cfg[CRASH_CFGS];
	char keys[CRASH_CFGS][16];
	char macs[CRASH_CFGS][MAC_STRLEN];
	struct ippool_status pool;
	unsigned next_mac;
	/* paused or resumed since its last committed status: that status may still show what
	 * the pause released (upstream's pause semantics: the addresses go back to the pool at
	 * once), so it is left out of the invariant until a status is committed */
	bool toggled[CRASH_CFGS];
};

static uint64_t rng;

static unsigned
rnd(unsigned n)
{
	rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)(rng >> 33) % n;
}

struct sources {
	struct netpool_source *s4;
	struct netpool6_source *s6;
	size_t n4, n6;
};

/* Whether a Pending NIC's address counts: only as the recorded pool status lists it. */
static bool
listed4(const struct ippool_status *st, uint32_t a, const uint8_t mac[MAC_LEN])
{
	const struct ippool_alloc *x = ippool_status_find(st, a);

	return x != NULL && x->kind == IPPOOL_ALLOC_MAC && memcmp(x->mac, mac, MAC_LEN) == 0;
}

static bool
listed6(const struct ippool_status *st, const struct in6_addr *a, const uint8_t mac[MAC_LEN])
{
	const struct ippool_alloc6 *x = ippool_status_find6(st, a);

	return x != NULL && x->kind == IPPOOL_ALLOC_MAC && memcmp(x->mac, mac, MAC_LEN) == 0;
}

static bool
spec_has(const struct vmnetcfg *cfg, const char *mac)
{
	for (size_t i = 0; i < cfg->spec.n_nics; i++)
		if (strcmp(cfg->spec.nics[i].mac, mac) == 0)
			return true;
	return false;
}

/* As the controller's start-up (ippool-ipam*.c): the union, VMNetCfg statuses first. */
static void
restart(struct api *api)
{
	struct ippool_spec s;
	struct sources src = {0};
	size_t cap = CRASH_CFGS * 4 + api->pool.n_allocated + api->pool.n_allocated6 + 1;

	src.s4 = calloc(cap, sizeof(*src.s4));
	src.s6 = calloc(cap, sizeof(*src.s6));
	CU_ASSERT_PTR_NOT_NULL_FATAL(src.s4);
	CU_ASSERT_PTR_NOT_NULL_FATAL(src.s6);
	/* the NICs the specs still ask for first, then those removed (a release not committed) */
	for (size_t pass = 0; pass < 2 * CRASH_CFGS; pass++) {
		size_t i = pass % CRASH_CFGS;
		const struct vmnetcfg_status *st = &api->cfg[i].cfg.status;

		if (api->cfg[i].cfg.spec.paused) /* holds nothing */
			continue;
		for (size_t k = 0; k < st->n_nics; k++) {
			const struct vmnetcfg_nic_status *n = &st->nics[k];
			bool pend = n->state == VMNETCFG_STATE_PENDING;
			uint8_t mac[MAC_LEN];

			if (spec_has(&api->cfg[i].cfg, n->mac) != (pass < CRASH_CFGS))
				continue;
			mac_parse(n->mac, mac);
			if (n->allocated_ip != 0 &&
			    (!pend || listed4(&api->pool, n->allocated_ip, mac))) {
				src.s4[src.n4] = (struct netpool_source){
				    .addr = n->allocated_ip, .owner = api->keys[i]};
				memcpy(src.s4[src.n4++].mac, mac, MAC_LEN);
			}
			if (!ipv6_is_zero(&n->allocated_ipv6) &&
			    (!pend || listed6(&api->pool, &n->allocated_ipv6, mac))) {
				src.s6[src.n6] = (struct netpool6_source){
				    .addr = n->allocated_ipv6, .owner = api->keys[i]};
				memcpy(src.s6[src.n6++].mac, mac, MAC_LEN);
			}
		}
	}
	for (size_t i = 0; i < api->pool.n_allocated; i++)
		if (api->pool.allocated[i].kind == IPPOOL_ALLOC_MAC) {
			src.s4[src.n4] =
			    (struct netpool_source){.addr = api->pool.allocated[i].addr};
			memcpy(src.s4[src.n4++].mac, api->pool.allocated[i].mac, MAC_LEN);
		}
	for (size_t i = 0; i < api->pool.n_allocated6; i++)
		if (api->pool.allocated6[i].kind == IPPOOL_ALLOC_MAC) {
			src.s6[src.n6] =
			    (struct netpool6_source){.addr = api->pool.allocated6[i].addr};
			memcpy(src.s6[src.n6++].mac, api->pool.allocated6[i].mac, MAC_LEN);
		}
	w.net[0] = netpool_free(w.net[0]);
	spec_of(0, &s);
	s.end = s.cidr_addr | 30; /* IPv4 has room; IPv6 (4 addresses) is contended */
	s.ipv6.end = A6("2001:db8::17");
	CU_ASSERT_EQUAL_FATAL(netpool_new(&s, &w.net[0]), 0);
	CU_ASSERT(netpool_rebuild(w.net[0], src.s4, src.n4, NULL) >= 0);
	CU_ASSERT(netpool6_rebuild(netpool_v6(w.net[0]), src.s6, src.n6, NULL) >= 0);
	free(src.s4);
	free(src.s6);
}

static bool
in_spec(const struct vmnetcfg *cfg, const char *mac)
{
	if (cfg->spec.paused) /* holds nothing (its status may lag: a write not committed) */
		return false;
	for (size_t i = 0; i < cfg->spec.n_nics; i++)
		if (strcmp(cfg->spec.nics[i].mac, mac) == 0)
			return true;
	return false;
}

/*
 * The committed state never gives one address to two MACs: among the NICs the specs ask for
 * and the statuses say Allocated (each family apart), and in the recorded pool status against
 * them.
 */
static bool
committed_ok(const struct api *api, bool print)
{
	for (size_t i = 0; i < CRASH_CFGS; i++)
		for (size_t k = 0; k < api->cfg[i].cfg.status.n_nics; k++) {
			const struct vmnetcfg_nic_status *a = &api->cfg[i].cfg.status.nics[k];

			if (a->state != VMNETCFG_STATE_ALLOCATED ||
			    !in_spec(&api->cfg[i].cfg, a->mac) || api->toggled[i])
				continue;
			for (size_t j = 0; j < CRASH_CFGS; j++)
				for (size_t l = 0; l < api->cfg[j].cfg.status.n_nics; l++) {
					const struct vmnetcfg_nic_status *b =
					    &api->cfg[j].cfg.status.nics[l];

					if ((i == j && k == l) ||
					    b->state != VMNETCFG_STATE_ALLOCATED ||
					    !in_spec(&api->cfg[j].cfg, b->mac) || api->toggled[j] ||
					    strcmp(a->mac, b->mac) == 0)
						continue;
					if (a->allocated_ip == b->allocated_ip ||
					    ipv6_equal(&a->allocated_ipv6, &b->allocated_ipv6)) {
						if (print) {
							char x[IPV6_STRLEN];

							ipv6_format(&a->allocated_ipv6, x);
							printf("\n  %s (%s) and %s (%s) share an "
							       "address: %08x %08x %s",
							    a->mac, api->keys[i], b->mac,
							    api->keys[j], a->allocated_ip,
							    b->allocated_ip, x);
						}
						return false;
					}
				}
		}
	return true;
}

/* One reconcile of cfg i; its status write commits with probability 3/4. */
static void
reconcile(struct api *api, size_t i, bool always)
{
	struct vmnetcfg_result r;

	CU_ASSERT_EQUAL_FATAL(compute(&api->cfg[i].cfg, api->keys[i], &r), 0);
	if (r.changed && (always || rnd(4) != 0)) {
		cfg_take_status(&api->cfg[i], &r);
		api->toggled[i] = false;
	} else if (!r.changed) {
		api->toggled[i] = false; /* the committed status is the current one */
		vmnetcfg_result_clear(&r);
	} else
		vmnetcfg_result_clear(&r);
}

static void
write_pool(struct api *api)
{
	ippool_status_clear(&api->pool);
	memset(&api->pool, 0, sizeof(api->pool));
	CU_ASSERT_EQUAL(netpool_render_status(w.net[0], &api->pool), 0);
}

static void
crash_run(uint64_t seed, unsigned steps)
{
	struct api *api = calloc(1, sizeof(*api));
	bool ok = true;

	CU_ASSERT_PTR_NOT_NULL_FATAL(api);
	rng = seed;
	for (size_t i = 0; i < CRASH_CFGS; i++) {
		snprintf(api->keys[i], sizeof(api->keys[i]), "ns/vm-%zu", i);
		cfg_init(&api->cfg[i], "vm");
	}
	restart(api);
	for (unsigned step = 0; step < steps && ok; step++) {
		size_t i = rnd(CRASH_CFGS);
		struct cfgbuf *b = &api->cfg[i];

		switch (rnd(8)) {
		case 0: /* a NIC replaced (a new MAC) or added, or removed */
			if (b->cfg.spec.n_nics == 0 || rnd(2) == 0) {
				snprintf(api->macs[i], sizeof(api->macs[i]),
				    "02:00:00:00:%02x:%02x", (api->next_mac / 256) & 0xff,
				    api->next_mac % 256);
				api->next_mac++;
				b->cfg.spec.n_nics = 0;
				cfg_nic(b, NETS[0], api->macs[i], 0,
				    rnd(4) == 0 ? "2001:db8::15" : NULL);
			} else {
				b->cfg.spec.n_nics = 0;
			}
			break;
		case 1: /* paused / resumed */
			b->cfg.spec.paused = !b->cfg.spec.paused;
			api->toggled[i] = true;
			break;
		case 2: /* the IPPool status written (coalesced: now and then) */
			write_pool(api);
			break;
		case 3: /* kill -9 and restart */
			restart(api);
			break;
		default:
			reconcile(api, i, false);
			break;
		}
		ok = committed_ok(api, true);
		if (!ok)
			printf("\n  seed %llu, step %u", (unsigned long long)seed, step);
	}
	CU_ASSERT_TRUE(ok);
	/* the kills stop: every object reconciled until nothing moves */
	for (size_t i = 0; i < CRASH_CFGS; i++)
		api->cfg[i].cfg.spec.paused = false;
	for (int round = 0; round < 4; round++) {
		for (size_t i = 0; i < CRASH_CFGS; i++)
			reconcile(api, i, true);
		write_pool(api);
	}
	CU_ASSERT_TRUE(committed_ok(api, true));
	/* the pool status agrees with the statuses: every Allocated NIC listed at its MAC */
	for (size_t i = 0; i < CRASH_CFGS; i++)
		for (size_t k = 0; k < api->cfg[i].cfg.status.n_nics; k++) {
			const struct vmnetcfg_nic_status *n = &api->cfg[i].cfg.status.nics[k];
			uint8_t mac[MAC_LEN];

			mac_parse(n->mac, mac);
			if (n->state != VMNETCFG_STATE_ALLOCATED)
				continue;
			CU_ASSERT_TRUE(listed4(&api->pool, n->allocated_ip, mac));
			CU_ASSERT_TRUE(listed6(&api->pool, &n->allocated_ipv6, mac));
		}
	for (size_t i = 0; i < CRASH_CFGS; i++)
		vmnetcfg_status_clear(&api->cfg[i].cfg.status);
	ippool_status_clear(&api->pool);
	free(api);
}

static void
test_kill9(void)
{
	for (uint64_t seed = 1; seed <= 200; seed++)
		crash_run(seed, 300);
	reset();
}

static const struct test_case tests[] = {
    {"dual stack: both addresses, lowest free, idempotent", test_dual_lowest_free},
    {"static IPv6, conflicts, duplicate MAC, no ipv6Config", test_static6_and_conflicts},
    {"move to a static IPv6 address", test_move_to_static6},
    {"IPv6 exhausted: Pending with IPv4 held", test_exhausted6},
    {"NIC moves network: both released", test_move_network6},
    {"paused and resumed: remembered, taken, back", test_pause6},
    {"ipv6Config added later, removed", test_ipv6config_added_removed},
    {"kill -9 at any moment: no address committed twice", test_kill9},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "nicbind6", .init = setup, .cleanup = teardown, .tests = tests},
    {.name = NULL},
};
