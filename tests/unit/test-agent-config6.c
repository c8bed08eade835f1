/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The agent's IPv6 half of the pool: spec.ipv6Config -> agent_config.v6 (pool-config.c),
 * status.ipv6.allocated -> IPv6 bindings (source-kube-pool.c), and both into the DHCPv6
 * engine (apply-config.c: options, router advertisements, one resync of the bindings).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/apply-config.h"
#include "agent/pool-config.h"
#include "agent/source-kube-internal.h"
#include "agent/source.h"
#include "crds/ippool.h"
#include "dhcp/dhcp6.h"
#include "lib/ip6.h"
#include "lib/util.h"
#include "tests/helpers/agent-config.h"
#include "tests/runner.h"

static struct in6_addr
a6(const char *s)
{
	struct in6_addr a;

	CU_ASSERT_EQUAL_FATAL(ipv6_parse(s, &a), 0);
	return a;
}

/* A valid dual-stack spec: 10.0.0.0/24 and 2001:db8:1::/64 (host bits set as written). */
static void
spec_init(struct ippool_spec *sp)
{
	memset(sp, 0, sizeof(*sp));
	snprintf(sp->network_name, sizeof(sp->network_name), "default/net1");
	sp->cidr_addr = 0x0a000000u;
	sp->prefix = 24;
	sp->server_ip = 0x0a000002u;
	sp->start = 0x0a000003u;
	sp->end = 0x0a000014u;
	sp->mtu = 1500;
	sp->has_ipv6 = true;
	sp->ipv6.cidr_addr = a6("2001:db8:1::77");
	sp->ipv6.prefix = 64;
	sp->ipv6.server_ip = a6("2001:db8:1::2");
	sp->ipv6.start = a6("2001:db8:1::100");
	sp->ipv6.end = a6("2001:db8:1::1ff");
	sp->ipv6.dns[0] = a6("2001:db8:1::53");
	sp->ipv6.n_dns = 1;
	sp->ipv6.rapid_commit = true;
	sp->ipv6.ra.enabled = true;
	sp->ipv6.ra.interval = 30;
	sp->ipv6.ra.router_lifetime = 100000; /* above RFC 4861's 9000: clamped */
}

static struct agent_config *
config_new(const char *ns, const char *name)
{
	struct agent_config *c = calloc(1, sizeof(*c));

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	snprintf(c->pool_ns, sizeof(c->pool_ns), "%s", ns);
	snprintf(c->pool_name, sizeof(c->pool_name), "%s", name);
	return c;
}

static void
test_spec_converted(void)
{
	struct agent_config *c = config_new("default", "net1"), *d = config_new("default", "net1");
	struct in6_addr exc[1];
	struct ippool_spec sp;
	char err[AGENT_ERR_MAX] = "";
	char *search[] = {"example.test"};

	spec_init(&sp);
	exc[0] = a6("2001:db8:1::105");
	sp.ipv6.exclude = exc;
	sp.ipv6.n_exclude = 1;
	sp.ipv6.domain_search = search;
	sp.ipv6.n_domain_search = 1;
	CU_ASSERT_EQUAL_FATAL(agent_config_from_spec(c, &sp, err, sizeof(err)), 0);
	CU_ASSERT_TRUE(c->v6.enabled);
	CU_ASSERT_TRUE(
	    ipv6_equal(&c->v6.cidr, &(struct in6_addr){{{0x20, 0x01, 0x0d, 0xb8, 0, 1}}}));
	CU_ASSERT_EQUAL(c->v6.prefix, 64u);
	CU_ASSERT_EQUAL(c->v6.n_exclude, 1u);
	CU_ASSERT_TRUE(ipv6_equal(&c->v6.exclude[0], &exc[0]));
	CU_ASSERT_TRUE(ipv6_equal(&c->v6.opts.server_ip, &sp.ipv6.server_ip));
	CU_ASSERT_EQUAL(c->v6.opts.prefix, 64);
	CU_ASSERT_EQUAL(c->v6.opts.n_dns, 1u);
	CU_ASSERT_EQUAL(c->v6.opts.n_search, 1u);
	CU_ASSERT_STRING_EQUAL(c->v6.opts.search[0], "example.test");
	/* unset lifetimes: a year, as IPv4's leaseTime */
	CU_ASSERT_EQUAL(c->v6.opts.valid_lifetime, 31536000u);
	CU_ASSERT_EQUAL(c->v6.opts.preferred_lifetime, 31536000u);
	CU_ASSERT_TRUE(c->v6.opts.rapid_commit);
	CU_ASSERT_TRUE(c->v6.opts.duid_len > 0);
	CU_ASSERT_TRUE(c->v6.ra.enabled);
	CU_ASSERT_EQUAL(c->v6.ra.interval, 30u);
	CU_ASSERT_EQUAL(c->v6.ra.router_lifetime, 9000);
	CU_ASSERT_EQUAL(c->v6.ra.prefix_len, 64);
	CU_ASSERT_TRUE(ipv6_equal(&c->v6.ra.prefix, &c->v6.cidr));
	CU_ASSERT_EQUAL(c->v6.ra.mtu, 1500u);

	/* the same pool gives the same DUID: every replica and restart answers as one server */
	CU_ASSERT_EQUAL_FATAL(agent_config_from_spec(d, &sp, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(d->v6.opts.duid_len, c->v6.opts.duid_len);
	CU_ASSERT_EQUAL(memcmp(d->v6.opts.duid, c->v6.opts.duid, c->v6.opts.duid_len), 0);

	/* another pool, another DUID */
	snprintf(d->pool_name, sizeof(d->pool_name), "net2");
	CU_ASSERT_EQUAL_FATAL(agent_config_from_spec(d, &sp, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(d->v6.opts.duid_len, c->v6.opts.duid_len);
	CU_ASSERT_NOT_EQUAL(memcmp(d->v6.opts.duid, c->v6.opts.duid, c->v6.opts.duid_len), 0);

	/* an IPv4 MTU below IPv6's minimum is not advertised */
	sp.mtu = 1000;
	sp.ipv6.ra.interval = 0;
	CU_ASSERT_EQUAL_FATAL(agent_config_from_spec(d, &sp, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(d->v6.ra.mtu, 0u);
	CU_ASSERT_EQUAL(d->v6.ra.interval, (uint32_t)IPPOOL6_RA_INTERVAL_DEFAULT);

	/* the ipv6Config removed: nothing IPv6 stays */
	sp.has_ipv6 = false;
	CU_ASSERT_EQUAL_FATAL(agent_config_from_spec(c, &sp, err, sizeof(err)), 0);
	CU_ASSERT_FALSE(c->v6.enabled);
	CU_ASSERT_EQUAL(c->v6.n_exclude, 0u);
	CU_ASSERT_PTR_NULL(c->v6.exclude);
	CU_ASSERT_FALSE(c->v6.ra.enabled);
	CU_ASSERT_TRUE(ipv6_is_zero(&c->v6.opts.server_ip));
	agent_config_free(c);
	agent_config_free(d);
}

static void
test_spec_refused(void)
{
	struct agent_config *c = config_new("default", "net1");
	struct ippool_spec sp;
	char err[AGENT_ERR_MAX] = "";

	spec_init(&sp);
	sp.ipv6.preferred_lifetime = 7200;
	sp.ipv6.valid_lifetime = 3600;
	CU_ASSERT_EQUAL(agent_config_from_spec(c, &sp, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "spec.ipv6Config.preferredLifetime"));
	spec_init(&sp);
	sp.ipv6.preferred_lifetime = 1800;
	sp.ipv6.valid_lifetime = 3600;
	CU_ASSERT_EQUAL(agent_config_from_spec(c, &sp, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(c->v6.opts.preferred_lifetime, 1800u);
	CU_ASSERT_EQUAL(c->v6.opts.valid_lifetime, 3600u);
	sp.ipv6.n_domain_search = DHCP_MAX_SEARCH + 1;
	CU_ASSERT_EQUAL(agent_config_from_spec(c, &sp, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "spec.ipv6Config.domainSearch"));
	agent_config_free(c);
}

/* A kpool converted from an IPPool whose status.ipv6.allocated is alloc[n]. */
static int
kpool_from(struct kpool *kp, struct ippool *p, struct ippool_alloc6 *alloc, size_t n)
{
	int r;

	memset(kp, 0, sizeof(*kp));
	memset(p, 0, sizeof(*p));
	kp->cfg = calloc(1, sizeof(*kp->cfg));
	CU_ASSERT_PTR_NOT_NULL_FATAL(kp->cfg);
	spec_init(&p->spec);
	p->status.has_ipv6_status = true;
	p->status.allocated6 = alloc;
	p->status.n_allocated6 = n;
	if ((r = kpool_convert_spec(kp, "default", "net1", p)) < 0)
		return r;
	return kpool_convert_status(kp, p);
}

static struct ippool_alloc6
al6(const char *addr, uint8_t kind, uint8_t last)
{
	struct ippool_alloc6 a = {.kind = kind, .mac = {0x52, 0x54, 0, 0, 0, last}};

	a.addr = a6(addr);
	return a;
}

static void
test_status_bindings(void)
{
	struct ippool_alloc6 al[5];
	struct ippool p;
	struct kpool kp;

	al[0] = al6("2001:db8:1::100", IPPOOL_ALLOC_MAC, 1);
	al[1] = al6("2001:db8:1::101", IPPOOL_ALLOC_EXCLUDED, 0);
	al[2] = al6("2001:db8:1::102", IPPOOL_ALLOC_MAC, 2);
	al[3] = al6("2001:db8:1::103", IPPOOL_ALLOC_MAC, 1); /* MAC 1 again: the lower kept */
	al[4] = al6("2001:db8:1::104", IPPOOL_ALLOC_MAC, 0); /* set below: a multicast MAC */
	al[4].mac[0] = 0x01;
	CU_ASSERT_EQUAL_FATAL(kpool_from(&kp, &p, al, 5), 0);
	CU_ASSERT_EQUAL_FATAL(kp.cfg->v6.n_bindings, 2u);
	CU_ASSERT_EQUAL(kp.cfg->v6.bindings[0].mac[5], 1);
	CU_ASSERT_TRUE(ipv6_equal(&kp.cfg->v6.bindings[0].ip, &al[0].addr));
	CU_ASSERT_EQUAL(kp.cfg->v6.bindings[1].mac[5], 2);
	CU_ASSERT_EQUAL(kp.duplicate_macs, 1u);
	CU_ASSERT_EQUAL(kp.invalid_macs, 1u);
	CU_ASSERT_EQUAL(kp.cfg->n_bindings, 0u);
	agent_config_free(kp.cfg);

	/* outside the CIDR, or the serverIP bound to a MAC: the version is refused */
	al[0] = al6("2001:db8:2::100", IPPOOL_ALLOC_MAC, 1);
	CU_ASSERT_EQUAL(kpool_from(&kp, &p, al, 1), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(kp.message, "status.ipv6.allocated[2001:db8:2::100]"));
	agent_config_free(kp.cfg);
	al[0] = al6("2001:db8:1::2", IPPOOL_ALLOC_MAC, 1);
	CU_ASSERT_EQUAL(kpool_from(&kp, &p, al, 1), -EINVAL);
	CU_ASSERT_PTR_NOT_NULL(strstr(kp.message, "serverIP"));
	agent_config_free(kp.cfg);
}

/* A status.ipv6 left behind by a pool whose ipv6Config went: not served. */
static void
test_status_without_config(void)
{
	struct ippool_alloc6 al[1];
	struct ippool p;
	struct kpool kp;

	al[0] = al6("2001:db8:1::100", IPPOOL_ALLOC_MAC, 1);
	memset(&kp, 0, sizeof(kp));
	memset(&p, 0, sizeof(p));
	kp.cfg = calloc(1, sizeof(*kp.cfg));
	CU_ASSERT_PTR_NOT_NULL_FATAL(kp.cfg);
	spec_init(&p.spec);
	p.spec.has_ipv6 = false;
	p.status.allocated6 = al;
	p.status.n_allocated6 = 1;
	CU_ASSERT_EQUAL(kpool_convert_spec(&kp, "default", "net1", &p), 0);
	CU_ASSERT_EQUAL(kpool_convert_status(&kp, &p), 0);
	CU_ASSERT_EQUAL(kp.cfg->v6.n_bindings, 0u);
	agent_config_free(kp.cfg);
}

static void
test_apply6(void)
{
	struct ippool_alloc6 al[2];
	struct dhcp6_server *s = NULL;
	struct in6_addr got;
	char err[AGENT_ERR_MAX] = "";
	uint8_t m1[6] = {0x52, 0x54, 0, 0, 0, 1}, m2[6] = {0x52, 0x54, 0, 0, 0, 2};
	struct ippool p;
	struct kpool kp;
	int r;

	al[0] = al6("2001:db8:1::100", IPPOOL_ALLOC_MAC, 1);
	al[1] = al6("2001:db8:1::101", IPPOOL_ALLOC_MAC, 2);
	CU_ASSERT_EQUAL_FATAL(kpool_from(&kp, &p, al, 2), 0);
	CU_ASSERT_EQUAL_FATAL(dhcp6_server_new(&s), 0);
	CU_ASSERT_EQUAL(agent_apply_config6(s, kp.cfg, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(dhcp6_server_n_bindings(s), 2u);
	CU_ASSERT_EQUAL(dhcp6_server_get_binding(s, m2, &got), 0);
	CU_ASSERT_TRUE(ipv6_equal(&got, &al[1].addr));
	agent_config_free(kp.cfg);

	/* the next version swaps the addresses: each held by the other MAC until the resync
	 * ends, then set again (counted as removed and re-added, as the IPv4 apply does) */
	al[0].mac[5] = 2;
	al[1].mac[5] = 1;
	CU_ASSERT_EQUAL_FATAL(kpool_from(&kp, &p, al, 2), 0);
	r = agent_apply_config6(s, kp.cfg, err, sizeof(err));
	CU_ASSERT_EQUAL(r, 2);
	CU_ASSERT_EQUAL(dhcp6_server_n_bindings(s), 2u);
	CU_ASSERT_EQUAL(dhcp6_server_get_binding(s, m1, &got), 0);
	CU_ASSERT_TRUE(ipv6_equal(&got, &al[1].addr));

	/* the ipv6Config removed: every IPv6 binding goes */
	p.spec.has_ipv6 = false;
	CU_ASSERT_EQUAL(agent_config_from_spec(kp.cfg, &p.spec, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(agent_apply_config6(s, kp.cfg, err, sizeof(err)), 2);
	CU_ASSERT_EQUAL(dhcp6_server_n_bindings(s), 0u);
	agent_config_free(kp.cfg);
	dhcp6_server_free(s);
}

/* ---- local mode: the YAML's ipv6Config and ipv6Address pins ---- */

#define POOL6                                                                                      \
	"apiVersion: network.harvesterhci.io/v1alpha1\n"                                           \
	"kind: IPPool\n"                                                                           \
	"metadata: {name: net1, namespace: default}\n"                                             \
	"spec:\n"                                                                                  \
	"  networkName: net1\n"                                                                    \
	"  ipv4Config:\n"                                                                          \
	"    serverIP: 10.0.0.2\n"                                                                 \
	"    cidr: 10.0.0.0/24\n"                                                                  \
	"    pool: {start: 10.0.0.10, end: 10.0.0.20}\n"
#define IPV6CONFIG                                                                                 \
	"  ipv6Config:\n"                                                                          \
	"    cidr: 2001:db8:1::/64\n"                                                              \
	"    serverIP: 2001:db8:1::2\n"                                                            \
	"    pool: {start: '2001:db8:1::100', end: '2001:db8:1::1ff'}\n"                           \
	"    dns: ['2001:db8:1::53']\n"                                                            \
	"    routerAdvertisement: {enabled: true}\n"

#define VM6(name, mac, ip4, ip6)                                                                   \
	"---\n"                                                                                    \
	"apiVersion: network.harvesterhci.io/v1alpha1\n"                                           \
	"kind: VirtualMachineNetworkConfig\n"                                                      \
	"metadata: {name: " name ", namespace: default}\n"                                         \
	"spec:\n"                                                                                  \
	"  vmName: " name "\n"                                                                     \
	"  networkConfigs:\n"                                                                      \
	"    - networkName: net1\n"                                                                \
	"      macAddress: \"" mac "\"\n" ip4 ip6

#define IP4(a) "      ipAddress: " a "\n"
#define IP6(a) "      ipv6Address: '" a "'\n"

static void
test_local_mode_pins(void)
{
	struct agent_config *c =
	    test_agent_config_ok(POOL6 IPV6CONFIG VM6("vm-a", "52:54:00:00:00:0a", IP4("10.0.0.10"),
		IP6("2001:db8:1::10")) VM6("vm-b", "52:54:00:00:00:0b", "", IP6("2001:db8:1::11"))
		    VM6("vm-c", "52:54:00:00:00:0c", IP4("10.0.0.12"), ""));
	const struct agent_binding6 *b;

	CU_ASSERT_TRUE_FATAL(c->v6.enabled);
	CU_ASSERT_TRUE(c->v6.ra.enabled);
	CU_ASSERT_EQUAL(c->v6.ra.interval, 200u);
	CU_ASSERT_EQUAL(c->n_bindings, 2u); /* vm-b has no IPv4 pin */
	CU_ASSERT_EQUAL_FATAL(c->v6.n_bindings, 2u);
	b = &c->v6.bindings[1];
	CU_ASSERT_EQUAL(b->mac[5], 0x0b);
	CU_ASSERT_TRUE(ipv6_equal(&b->ip,
	    &(struct in6_addr){{{0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x11}}}));
	CU_ASSERT_STRING_EQUAL(agent_config_hostname6(c, b), "vm-b");
	agent_config_free(c);
}

/* Parses text expecting failure; err must contain want. */
static void
fails6(const char *text, const char *want)
{
	struct agent_config *c = NULL;
	char err[AGENT_ERR_MAX] = "";
	int r = agent_config_parse("pool.yaml", text, strlen(text), NULL, &c, err, sizeof(err));

	CU_ASSERT_EQUAL(r, -EINVAL);
	CU_ASSERT_PTR_NULL(c);
	if (strstr(err, want) == NULL)
		fprintf(stderr, "want \"%s\"\n got \"%s\"\n", want, err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	agent_config_free(c);
}

static void
test_local_mode_errors(void)
{
	fails6(POOL6 VM6("vm-a", "52:54:00:00:00:0a", "", IP6("2001:db8:1::10")),
	    "document 2 (line 11): spec.networkConfigs[0].ipv6Address: 2001:db8:1::10, but the "
	    "pool has no ipv6Config");
	fails6(POOL6 IPV6CONFIG VM6("vm-a", "52:54:00:00:00:0a", "", IP6("2001:db8:2::10")),
	    "spec.networkConfigs[0].ipv6Address: 2001:db8:2::10 is outside the pool's CIDR "
	    "2001:db8:1::/64");
	fails6(POOL6 IPV6CONFIG VM6("vm-a", "52:54:00:00:00:0a", "", IP6("2001:db8:1::2")),
	    "ipv6Address: 2001:db8:1::2 is the pool's serverIP");
	fails6(POOL6 IPV6CONFIG VM6("vm-a", "52:54:00:00:00:0a", "", IP6("2001:db8:1::10"))
		   VM6("vm-b", "52:54:00:00:00:0b", "", IP6("2001:db8:1::10")),
	    "document 3 (line 27): spec.networkConfigs[0].ipv6Address: 2001:db8:1::10 is already "
	    "bound to another MAC by document 2 (line 17)");
}

static const struct test_case config6_tests[] = {
    {"spec.ipv6Config converted", test_spec_converted},
    {"bad ipv6Config refused with the field", test_spec_refused},
    {"status.ipv6.allocated becomes bindings", test_status_bindings},
    {"status.ipv6 without ipv6Config not served", test_status_without_config},
    {"IPv6 part applied to the DHCPv6 engine", test_apply6},
    {"local mode: ipv6Config and ipv6Address pins", test_local_mode_pins},
    {"local mode: bad ipv6Address named", test_local_mode_errors},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-config6", .tests = config6_tests},
    {.name = NULL},
};
