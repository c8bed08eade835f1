/* SPDX-License-Identifier: Apache-2.0 */
/* controller/netpool.c: netpool (IPAM + MAC ownership), rebuild, status.ipv4, conditions. */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/netpool.h"
#include "tests/runner.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static uint32_t excludes[] = {IP(10, 0, 0, 15)};

/* 10.0.0.0/24, server .1, router .20 (in range: RESERVED), range .10-.20, exclude .15 */
static struct ippool_spec
spec24(void)
{
	struct ippool_spec s;

	memset(&s, 0, sizeof(s));
	snprintf(s.network_name, sizeof(s.network_name), "default/net-1");
	s.cidr_addr = IP(10, 0, 0, 0);
	s.prefix = 24;
	s.server_ip = IP(10, 0, 0, 1);
	s.router = IP(10, 0, 0, 20);
	s.start = IP(10, 0, 0, 10);
	s.end = IP(10, 0, 0, 20);
	s.exclude = excludes;
	s.n_exclude = 1;
	return s;
}

static void
mac_n(uint32_t n, uint8_t mac[MAC_LEN])
{
	mac[0] = 0x02;
	mac[1] = 0x00;
	mac[2] = (uint8_t)(n >> 24);
	mac[3] = (uint8_t)(n >> 16);
	mac[4] = (uint8_t)(n >> 8);
	mac[5] = (uint8_t)n;
}

static void
test_bind_release(void)
{
	struct ippool_spec s = spec24();
	struct netpool *p = NULL;
	uint8_t a[MAC_LEN], b[MAC_LEN], c[MAC_LEN];
	uint32_t addr = 0;

	mac_n(1, a);
	mac_n(2, b);
	mac_n(3, c);
	CU_ASSERT_EQUAL_FATAL(netpool_new(&s, &p), 0);
	CU_ASSERT_EQUAL(netpool_bind(p, a, 0, "ns/a", &addr), 0);
	CU_ASSERT_EQUAL(addr, IP(10, 0, 0, 10)); /* lowest free */
	CU_ASSERT_EQUAL(netpool_bind(p, b, 0, "ns/b", &addr), 0);
	CU_ASSERT_EQUAL(addr, IP(10, 0, 0, 11));
	/* the same MAC for the same owner: the address it holds */
	CU_ASSERT_EQUAL(netpool_bind(p, a, 0, "ns/a", &addr), 0);
	CU_ASSERT_EQUAL(addr, IP(10, 0, 0, 10));
	CU_ASSERT_EQUAL(netpool_bind(p, a, IP(10, 0, 0, 10), "ns/a", &addr), 0);
	CU_ASSERT_EQUAL(netpool_bind(p, a, IP(10, 0, 0, 12), "ns/a", &addr), -EALREADY);
	/* the same MAC for another owner: duplicate MAC */
	CU_ASSERT_EQUAL(netpool_bind(p, a, 0, "ns/other", &addr), -EBUSY);
	/* static addresses */
	CU_ASSERT_EQUAL(netpool_bind(p, c, IP(10, 0, 0, 15), "ns/c", &addr), -EPERM);
	CU_ASSERT_EQUAL(netpool_bind(p, c, IP(10, 0, 0, 20), "ns/c", &addr), -EPERM);
	CU_ASSERT_EQUAL(netpool_bind(p, c, IP(10, 0, 0, 11), "ns/c", &addr), -EEXIST);
	CU_ASSERT_EQUAL(netpool_bind(p, c, IP(10, 0, 0, 30), "ns/c", &addr), -ERANGE);
	CU_ASSERT_PTR_NULL(netpool_by_mac(p, c));
	CU_ASSERT_EQUAL(netpool_bind(p, c, IP(10, 0, 0, 14), "ns/c", &addr), 0);
	CU_ASSERT_EQUAL(addr, IP(10, 0, 0, 14));
	CU_ASSERT_EQUAL(netpool_size(p), 3);

	CU_ASSERT_PTR_NOT_NULL_FATAL(netpool_by_addr(p, IP(10, 0, 0, 11)));
	CU_ASSERT_EQUAL(memcmp(netpool_by_addr(p, IP(10, 0, 0, 11))->mac, b, MAC_LEN), 0);
	CU_ASSERT_STRING_EQUAL(netpool_by_mac(p, b)->owner, "ns/b");

	/* release: only by its owner */
	CU_ASSERT_EQUAL(netpool_release(p, a, "ns/b"), -EPERM);
	CU_ASSERT_EQUAL(netpool_release(p, a, "ns/a"), 0);
	CU_ASSERT_EQUAL(netpool_release(p, a, "ns/a"), -ENOENT);
	CU_ASSERT_PTR_NULL(netpool_by_addr(p, IP(10, 0, 0, 10)));
	CU_ASSERT_TRUE(ipam_pool_is_free(netpool_ipam(p), IP(10, 0, 0, 10)));
	/* the lowest free is handed out again */
	CU_ASSERT_EQUAL(netpool_bind(p, a, 0, "ns/a2", &addr), 0);
	CU_ASSERT_EQUAL(addr, IP(10, 0, 0, 10));
	netpool_free(p);
	CU_ASSERT_PTR_NULL(netpool_free(NULL));
}

static void
test_exhaustion(void)
{
	struct ippool_spec s = spec24();
	struct netpool *p = NULL;
	uint8_t m[MAC_LEN];
	uint32_t addr;
	int n = 0;

	CU_ASSERT_EQUAL_FATAL(netpool_new(&s, &p), 0);
	for (uint32_t i = 1; i <= 20; i++) {
		mac_n(i, m);
		if (netpool_bind(p, m, 0, "ns/x", &addr) == 0)
			n++;
		else
			break;
	}
	/* .10-.20 is 11 addresses minus the exclude (.15) and the router (.20) */
	CU_ASSERT_EQUAL(n, 9);
	mac_n(100, m);
	CU_ASSERT_EQUAL(netpool_bind(p, m, 0, "ns/y", &addr), -ENOSPC);
	netpool_free(p);
}

static void
test_rebuild_conflicts(void)
{
	struct ippool_spec s = spec24();
	struct netpool *p = NULL;
	struct ipam_conflict *conf = NULL;
	struct netpool_source src[7];
	uint8_t a[MAC_LEN], b[MAC_LEN], c[MAC_LEN], d[MAC_LEN];
	uint32_t addr = 0;
	int n;

	mac_n(1, a);
	mac_n(2, b);
	mac_n(3, c);
	mac_n(4, d);
	/* VMNetCfg statuses first */
	src[0] = (struct netpool_source){.addr = IP(10, 0, 0, 12), .owner = "ns/a"};
	memcpy(src[0].mac, a, MAC_LEN);
	src[1] = (struct netpool_source){.addr = IP(10, 0, 0, 12), .owner = "ns/b"};
	memcpy(src[1].mac, b, MAC_LEN); /* two MACs, one IP */
	/* then IPPool status.ipv4.allocated */
	src[2] = (struct netpool_source){.addr = IP(10, 0, 0, 12), .owner = NULL};
	memcpy(src[2].mac, a, MAC_LEN); /* same binding again: merges */
	src[3] = (struct netpool_source){.addr = IP(10, 0, 0, 13), .owner = NULL};
	memcpy(src[3].mac, c, MAC_LEN); /* known only from the IPPool */
	src[4] = (struct netpool_source){.addr = IP(10, 0, 0, 15), .owner = NULL};
	memcpy(src[4].mac, d, MAC_LEN); /* on an exclude */
	src[5] = (struct netpool_source){.addr = IP(10, 0, 0, 14), .owner = NULL};
	memcpy(src[5].mac, a, MAC_LEN); /* one MAC, two IPs */
	src[6] = (struct netpool_source){.addr = IP(10, 0, 0, 12), .owner = "ns/z"};
	memcpy(src[6].mac, a, MAC_LEN); /* one binding claimed by two VMNetCfgs */

	CU_ASSERT_EQUAL_FATAL(netpool_new(&s, &p), 0);
	n = netpool_rebuild(p, src, 7, &conf);
	CU_ASSERT_EQUAL_FATAL(n, 4);
	CU_ASSERT_PTR_NOT_NULL_FATAL(conf);
	{
		bool dup_ip = false, excl = false, dup_mac = false, two_owners = false;

		for (int i = 0; i < n; i++) {
			if (conf[i].kind == IPAM_CONFLICT_DUPLICATE_IP && conf[i].first == 0 &&
			    conf[i].second == 1)
				dup_ip = true;
			if (conf[i].kind == IPAM_CONFLICT_EXCLUDED && conf[i].second == 4)
				excl = true;
			if (conf[i].kind == IPAM_CONFLICT_DUPLICATE_MAC && conf[i].second == 5)
				dup_mac = true;
			if (conf[i].kind == IPAM_CONFLICT_DUPLICATE_MAC && conf[i].first == 0 &&
			    conf[i].second == 6)
				two_owners = true;
		}
		CU_ASSERT_TRUE(dup_ip);
		CU_ASSERT_TRUE(excl);
		CU_ASSERT_TRUE(dup_mac);
		CU_ASSERT_TRUE(two_owners);
	}
	free(conf);

	/* the first source keeps the address; contested addresses are never free */
	CU_ASSERT_STRING_EQUAL(netpool_by_addr(p, IP(10, 0, 0, 12))->owner, "ns/a");
	CU_ASSERT_PTR_NULL(netpool_by_mac(p, b));
	CU_ASSERT_PTR_NULL(netpool_by_mac(p, c)->owner); /* orphan */
	CU_ASSERT_FALSE(ipam_pool_is_free(netpool_ipam(p), IP(10, 0, 0, 14)));
	CU_ASSERT_EQUAL(netpool_bind(p, b, 0, "ns/b", &addr), 0);
	CU_ASSERT_EQUAL(addr, IP(10, 0, 0, 10));
	/* an orphan binding is adopted by the first VMNetCfg asking for its MAC */
	CU_ASSERT_EQUAL(netpool_bind(p, c, 0, "ns/c", &addr), 0);
	CU_ASSERT_EQUAL(addr, IP(10, 0, 0, 13));
	CU_ASSERT_STRING_EQUAL(netpool_by_mac(p, c)->owner, "ns/c");

	/* rebuilding again from a clean set forgets the previous bindings */
	n = netpool_rebuild(p, src + 3, 1, NULL);
	CU_ASSERT_EQUAL(n, 0);
	CU_ASSERT_EQUAL(netpool_size(p), 1);
	CU_ASSERT_PTR_NULL(netpool_by_mac(p, a));
	CU_ASSERT_TRUE(ipam_pool_is_free(netpool_ipam(p), IP(10, 0, 0, 12)));
	netpool_free(p);
}

static void
test_render_status(void)
{
	struct ippool_spec s = spec24();
	struct ippool_status st;
	struct netpool *p = NULL;
	const struct ippool_alloc *al;
	uint8_t a[MAC_LEN];
	uint32_t addr;

	memset(&st, 0, sizeof(st));
	mac_n(1, a);
	CU_ASSERT_EQUAL_FATAL(netpool_new(&s, &p), 0);
	CU_ASSERT_EQUAL(netpool_bind(p, a, 0, "ns/a", &addr), 0);
	CU_ASSERT_EQUAL_FATAL(netpool_render_status(p, &st), 0);
	CU_ASSERT_TRUE(st.has_ipv4);
	CU_ASSERT_EQUAL(st.n_allocated, 3); /* a, EXCLUDED .15, RESERVED router .20 */
	al = ippool_status_find(&st, IP(10, 0, 0, 10));
	CU_ASSERT_PTR_NOT_NULL_FATAL(al);
	CU_ASSERT_EQUAL(al->kind, IPPOOL_ALLOC_MAC);
	CU_ASSERT_EQUAL(memcmp(al->mac, a, MAC_LEN), 0);
	al = ippool_status_find(&st, IP(10, 0, 0, 15));
	CU_ASSERT_PTR_NOT_NULL_FATAL(al);
	CU_ASSERT_EQUAL(al->kind, IPPOOL_ALLOC_EXCLUDED);
	al = ippool_status_find(&st, IP(10, 0, 0, 20));
	CU_ASSERT_PTR_NOT_NULL_FATAL(al);
	CU_ASSERT_EQUAL(al->kind, IPPOOL_ALLOC_RESERVED);
	CU_ASSERT_PTR_NULL(ippool_status_find(&st, IP(10, 0, 0, 1))); /* server outside range */
	CU_ASSERT_EQUAL(st.used, 1);
	CU_ASSERT_EQUAL(st.available, 8);
	ippool_status_clear(&st);
	netpool_free(p);
}

static void
test_range_change(void)
{
	struct ippool_spec s = spec24(), s2;
	uint32_t ex2[] = {IP(10, 0, 0, 15), IP(10, 0, 0, 11)};
	struct netpool *p = NULL;
	uint8_t a[MAC_LEN], b[MAC_LEN];
	uint32_t addr, conflict = 0;

	mac_n(1, a);
	mac_n(2, b);
	CU_ASSERT_EQUAL_FATAL(netpool_new(&s, &p), 0);
	CU_ASSERT_EQUAL(netpool_bind(p, a, 0, "ns/a", &addr), 0);
	CU_ASSERT_EQUAL(netpool_bind(p, b, IP(10, 0, 0, 13), "ns/b", &addr), 0);
	CU_ASSERT_TRUE(netpool_same_network(p, &s));

	/* shrinking the range past a bound address is refused, nothing changes */
	s2 = s;
	s2.end = IP(10, 0, 0, 12);
	CU_ASSERT_EQUAL(netpool_set_range(p, &s2, &conflict), -EBUSY);
	CU_ASSERT_EQUAL(conflict, IP(10, 0, 0, 13));
	CU_ASSERT_EQUAL(ipam_pool_end(netpool_ipam(p)), IP(10, 0, 0, 20));
	/* an exclude onto a bound address is refused */
	s2 = s;
	s2.exclude = ex2;
	s2.n_exclude = 2;
	CU_ASSERT_EQUAL(netpool_set_range(p, &s2, &conflict), 0); /* .11 is free */
	s2.exclude[1] = IP(10, 0, 0, 13);
	CU_ASSERT_EQUAL(netpool_set_range(p, &s2, &conflict), -EBUSY);
	CU_ASSERT_EQUAL(conflict, IP(10, 0, 0, 13));
	/* growing is accepted */
	s2 = s;
	s2.start = IP(10, 0, 0, 5);
	s2.end = IP(10, 0, 0, 40);
	CU_ASSERT_EQUAL(netpool_set_range(p, &s2, &conflict), 0);
	CU_ASSERT_EQUAL(ipam_pool_start(netpool_ipam(p)), IP(10, 0, 0, 5));
	CU_ASSERT_STRING_EQUAL(netpool_by_addr(p, IP(10, 0, 0, 13))->owner, "ns/b");

	/* a new server IP is another network: rebuild needed */
	s2.server_ip = IP(10, 0, 0, 2);
	CU_ASSERT_FALSE(netpool_same_network(p, &s2));
	netpool_free(p);
}

/* Many bindings, half released, rebound: both indexes stay consistent. */
static void
test_index_integrity(void)
{
	struct ippool_spec s = spec24();
	struct netpool *p = NULL;
	uint8_t m[MAC_LEN];
	uint32_t addr;
	bool ok = true;

	s.cidr_addr = IP(10, 1, 0, 0);
	s.prefix = 16;
	s.server_ip = IP(10, 1, 0, 1);
	s.router = IP(10, 1, 0, 2);
	s.start = IP(10, 1, 0, 10);
	s.end = IP(10, 1, 255, 250);
	s.n_exclude = 0;
	CU_ASSERT_EQUAL_FATAL(netpool_new(&s, &p), 0);
	for (uint32_t i = 0; i < 10000; i++) {
		mac_n(i, m);
		ok = ok && netpool_bind(p, m, 0, "ns/vm", &addr) == 0 && addr == s.start + i;
	}
	CU_ASSERT_TRUE(ok);
	for (uint32_t i = 0; i < 10000; i += 2) {
		mac_n(i, m);
		ok = ok && netpool_release(p, m, "ns/vm") == 0;
	}
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_EQUAL(netpool_size(p), 5000);
	for (uint32_t i = 0; i < 10000; i++) {
		const struct netpool_entry *e;

		mac_n(i, m);
		e = netpool_by_mac(p, m);
		if (i % 2 == 0)
			ok = ok && e == NULL && netpool_by_addr(p, s.start + i) == NULL;
		else
			ok = ok && e != NULL && e->addr == s.start + i &&
			     netpool_by_addr(p, s.start + i) == e;
	}
	CU_ASSERT_TRUE(ok);
	/* new MACs fill the holes lowest-first */
	for (uint32_t i = 0; i < 5000; i++) {
		mac_n(100000 + i, m);
		ok = ok && netpool_bind(p, m, 0, "ns/vm2", &addr) == 0 && addr == s.start + 2 * i;
	}
	CU_ASSERT_TRUE(ok);
	CU_ASSERT_EQUAL(netpool_size(p), 10000);
	netpool_free(p);
}

/* Every condition: a CamelCase reason, True or False, and the facts' generation. */
static void
check_conditions(const struct crd_conditions *conds, long long generation)
{
	regex_t re;

	CU_ASSERT_EQUAL_FATAL(regcomp(&re, "^[A-Z][A-Za-z0-9]*$", REG_EXTENDED | REG_NOSUB), 0);
	CU_ASSERT_EQUAL(conds->n, 4);
	for (size_t i = 0; i < conds->n; i++) {
		const struct crd_condition *c = &conds->items[i];

		if (c->reason == NULL || regexec(&re, c->reason, 0, NULL, 0) != 0) {
			printf("\n  condition %s=%s: reason \"%s\" is not CamelCase", c->type,
			    crd_cond_status_string(c->status), c->reason ? c->reason : "(none)");
			CU_FAIL("condition reason");
		}
		CU_ASSERT_EQUAL(c->observed_generation, generation);
	}
	regfree(&re);
}

static const char *
reason_of(const struct crd_conditions *conds, const char *type)
{
	const struct crd_condition *c = crd_conditions_get(conds, type);

	return c != NULL && c->reason != NULL ? c->reason : "";
}

static void
test_conditions(void)
{
	struct crd_conditions conds = {0};
	struct ippool_facts f = {
	    .generation = 1,
	    .cache_ready = true,
	    .registered = true,
	    .registered_reason = "AgentPlaced",
	    .agent_ready = false,
	    .agent_reason = "AgentNotReady",
	    .agent_message = "agent pod not ready",
	};
	const struct crd_condition *c;

	CU_ASSERT_EQUAL(ippool_conditions_apply(&conds, &f, 1000), 4);
	check_conditions(&conds, 1);
	CU_ASSERT_STRING_EQUAL(reason_of(&conds, IPPOOL_COND_CACHE_READY), "CacheBuilt");
	CU_ASSERT_STRING_EQUAL(reason_of(&conds, IPPOOL_COND_STOPPED), "NotPaused");
	CU_ASSERT_EQUAL(ippool_conditions_apply(&conds, &f, 2000), 0); /* idempotent */
	c = crd_conditions_get(&conds, IPPOOL_COND_AGENT_READY);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->status, CRD_COND_FALSE);
	CU_ASSERT_STRING_EQUAL(c->reason, "AgentNotReady");
	c = crd_conditions_get(&conds, IPPOOL_COND_STOPPED);
	CU_ASSERT_EQUAL(c->status, CRD_COND_FALSE);

	f.agent_ready = true;
	f.agent_reason = NULL;
	f.agent_message = NULL;
	CU_ASSERT_EQUAL(ippool_conditions_apply(&conds, &f, 3000), 1);
	c = crd_conditions_get(&conds, IPPOOL_COND_AGENT_READY);
	CU_ASSERT_EQUAL(c->status, CRD_COND_TRUE);
	CU_ASSERT_EQUAL(c->last_transition_time, 3000);
	check_conditions(&conds, 1);
	CU_ASSERT_STRING_EQUAL(reason_of(&conds, IPPOOL_COND_AGENT_READY), "AgentReady");

	/* registered without a reason given: the default, never empty */
	f.registered_reason = NULL;
	CU_ASSERT_EQUAL(ippool_conditions_apply(&conds, &f, 3500), 0); /* same: AgentPlaced */
	f.registered = false;
	f.cache_ready = false;
	CU_ASSERT_EQUAL(ippool_conditions_apply(&conds, &f, 3600), 2);
	check_conditions(&conds, 1);
	CU_ASSERT_STRING_EQUAL(reason_of(&conds, IPPOOL_COND_REGISTERED), "NotRegistered");
	CU_ASSERT_STRING_EQUAL(reason_of(&conds, IPPOOL_COND_CACHE_READY), "NotInitialized");
	f.registered = true;
	f.cache_ready = true;
	CU_ASSERT_EQUAL(ippool_conditions_apply(&conds, &f, 3700), 2);

	/* a new generation with the same facts: every condition rewritten once, with it;
	 * lastTransitionTime kept */
	f.generation = 2;
	CU_ASSERT_EQUAL(ippool_conditions_apply(&conds, &f, 3800), 4);
	check_conditions(&conds, 2);
	c = crd_conditions_get(&conds, IPPOOL_COND_AGENT_READY);
	CU_ASSERT_EQUAL(c->last_transition_time, 3000);
	CU_ASSERT_EQUAL(c->last_update_time, 3800);
	CU_ASSERT_EQUAL(ippool_conditions_apply(&conds, &f, 3900), 0);

	/* paused: Stopped, no agent */
	f.paused = true;
	CU_ASSERT(ippool_conditions_apply(&conds, &f, 4000) >= 3);
	check_conditions(&conds, 2);
	CU_ASSERT_EQUAL(crd_conditions_get(&conds, IPPOOL_COND_STOPPED)->status, CRD_COND_TRUE);
	CU_ASSERT_EQUAL(crd_conditions_get(&conds, IPPOOL_COND_REGISTERED)->status, CRD_COND_FALSE);
	CU_ASSERT_EQUAL(
	    crd_conditions_get(&conds, IPPOOL_COND_AGENT_READY)->status, CRD_COND_FALSE);
	CU_ASSERT_EQUAL(crd_conditions_get(&conds, IPPOOL_COND_CACHE_READY)->status,
	    CRD_COND_TRUE); /* bindings kept */
	crd_conditions_clear(&conds);
}

/* Fill st as the IPPool reconciler would: conditions from f, an agent reference or none. */
static void
status_of(struct ippool_status *st, const struct ippool_facts *f, const char *agent_uid,
    const char *image, time_t now)
{
	memset(st, 0, sizeof(*st));
	CU_ASSERT(ippool_conditions_apply(&st->conditions, f, now) >= 0);
	st->has_ipv4 = true;
	st->available = 9;
	if (agent_uid != NULL) {
		st->has_agent_pod_ref = true;
		st->agent_pod_ref.namespace = strdup("vm-dhcp");
		st->agent_pod_ref.name = strdup("default-net-1-agent");
		st->agent_pod_ref.uid = strdup(agent_uid);
		st->agent_pod_ref.image = strdup(image);
	}
}

/* Normal Events of IPPool status transitions: AgentPlaced once per placement, Ready on the
 * transition to ready, nothing when the status did not move (a resync). */
static void
test_status_events(void)
{
	struct ippool_facts f = {.generation = 1, .cache_ready = true};
	struct ippool_status s0, s1, s2, s3, s4, s5;
	struct ippool_event ev[IPPOOL_EVENTS_MAX];

	status_of(&s0, &f, NULL, NULL, 100); /* IPAM built, no agent yet */
	f.registered = true;
	f.agent_reason = "AgentNotReady";
	status_of(&s1, &f, "u-1", "agent:1", 200); /* placed, not ready */
	f.agent_ready = true;
	f.agent_reason = NULL;
	status_of(&s2, &f, "u-1", "agent:1", 300); /* ready */
	status_of(&s3, &f, "u-1", "agent:2", 400); /* re-placed with another image, ready */
	f.paused = true;
	status_of(&s4, &f, NULL, NULL, 500); /* paused: no agent */
	f.paused = false;
	status_of(&s5, &f, "u-2", "agent:2", 600); /* unpaused: a new agent, ready */

	CU_ASSERT_EQUAL_FATAL(ippool_status_events(&s0, &s1, "default/net-1", ev), 1);
	CU_ASSERT_STRING_EQUAL(ev[0].type, "Normal");
	CU_ASSERT_STRING_EQUAL(ev[0].reason, "AgentPlaced");
	CU_ASSERT_STRING_EQUAL(ev[0].message,
	    "agent vm-dhcp/default-net-1-agent placed for network default/net-1 (image agent:1)");
	CU_ASSERT_EQUAL_FATAL(ippool_status_events(&s1, &s2, "default/net-1", ev), 1);
	CU_ASSERT_STRING_EQUAL(ev[0].type, "Normal");
	CU_ASSERT_STRING_EQUAL(ev[0].reason, "Ready");
	CU_ASSERT_PTR_NOT_NULL(strstr(ev[0].message, "default/net-1"));
	CU_ASSERT_PTR_NOT_NULL(strstr(ev[0].message, "9 addresses available"));
	/* placed and ready in one write: both */
	CU_ASSERT_EQUAL_FATAL(ippool_status_events(&s0, &s2, "default/net-1", ev), 2);
	CU_ASSERT_STRING_EQUAL(ev[0].reason, "AgentPlaced");
	CU_ASSERT_STRING_EQUAL(ev[1].reason, "Ready");
	/* a resync: the same status, nothing */
	CU_ASSERT_EQUAL(ippool_status_events(&s0, &s0, "default/net-1", ev), 0);
	CU_ASSERT_EQUAL(ippool_status_events(&s1, &s1, "default/net-1", ev), 0);
	CU_ASSERT_EQUAL(ippool_status_events(&s2, &s2, "default/net-1", ev), 0);
	/* re-placed while ready: placed again, not "ready" again */
	CU_ASSERT_EQUAL_FATAL(ippool_status_events(&s2, &s3, "default/net-1", ev), 1);
	CU_ASSERT_STRING_EQUAL(ev[0].reason, "AgentPlaced");
	CU_ASSERT_PTR_NOT_NULL(strstr(ev[0].message, "agent:2"));
	/* paused: no Normal Event; back: placed and ready again */
	CU_ASSERT_EQUAL(ippool_status_events(&s3, &s4, "default/net-1", ev), 0);
	CU_ASSERT_EQUAL_FATAL(ippool_status_events(&s4, &s5, "default/net-1", ev), 2);
	CU_ASSERT_STRING_EQUAL(ev[0].reason, "AgentPlaced");
	CU_ASSERT_STRING_EQUAL(ev[1].reason, "Ready");
	ippool_status_clear(&s0);
	ippool_status_clear(&s1);
	ippool_status_clear(&s2);
	ippool_status_clear(&s3);
	ippool_status_clear(&s4);
	ippool_status_clear(&s5);
}

static const struct test_case netpool_tests[] = {
    {"bind and release", test_bind_release},
    {"exhaustion", test_exhaustion},
    {"rebuild reports conflicts", test_rebuild_conflicts},
    {"render status.ipv4", test_render_status},
    {"range change", test_range_change},
    {"index integrity (10000)", test_index_integrity},
    {"conditions", test_conditions},
    {"Normal Events of status transitions", test_status_events},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "netpool", .tests = netpool_tests},
    {.name = NULL},
};
