/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent/source-file.c, agent/dynamic*.c and agent/apply-config.c: local-mode YAML -> options and
 * bindings, errors that name file/document/line/field, dynamic allocation (lowest free, sticky,
 * restart), resync into the engine. The program's flags: build/vm-dhcp-agent is run for --help, a
 * dry run, and each refusal (exit 2, one line on stderr naming the flag).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include "agent/apply-config.h"
#include "agent/dynamic.h"
#include "agent/leasefile.h"
#include "agent/pool-config.h"
#include "agent/source.h"
#include "dhcp/dhcp.h"
#include "lib/util.h"
#include "tests/helpers/agent-config.h"
#include "tests/runner.h"

#define POOL_DOC                                                                                   \
	"apiVersion: network.harvesterhci.io/v1alpha1\n"                                           \
	"kind: IPPool\n"                                                                           \
	"metadata:\n"                                                                              \
	"  name: net1\n"                                                                           \
	"  namespace: default\n"                                                                   \
	"spec:\n"                                                                                  \
	"  networkName: net1\n"                                                                    \
	"  ipv4Config:\n"                                                                          \
	"    serverIP: 10.0.0.2\n"                                                                 \
	"    cidr: 10.0.0.0/24\n"                                                                  \
	"    pool:\n"                                                                              \
	"      start: 10.0.0.1\n"                                                                  \
	"      end: 10.0.0.20\n"                                                                   \
	"      exclude: [10.0.0.4]\n"                                                              \
	"    router: 10.0.0.1\n"                                                                   \
	"    dns: [10.0.0.53, 1.1.1.1]\n"                                                          \
	"    ntp: [localhost, 10.0.0.123]\n"                                                       \
	"    domainName: example.test\n"                                                           \
	"    domainSearch: [example.test, svc.example.test]\n"                                     \
	"    mtu: 1400\n"                                                                          \
	"    routes:\n"                                                                            \
	"      - destination: 192.168.0.0/16\n"                                                    \
	"        gateway: 10.0.0.254\n"

#define VM_DOC(name, net, mac, ip)                                                                 \
	"---\n"                                                                                    \
	"apiVersion: network.harvesterhci.io/v1alpha1\n"                                           \
	"kind: VirtualMachineNetworkConfig\n"                                                      \
	"metadata:\n"                                                                              \
	"  name: " name "\n"                                                                       \
	"  namespace: default\n"                                                                   \
	"spec:\n"                                                                                  \
	"  vmName: " name "\n"                                                                     \
	"  networkConfigs:\n"                                                                      \
	"    - networkName: " net "\n"                                                             \
	"      macAddress: \"" mac "\"\n"                                                          \
	"      ipAddress: " ip "\n"

/* Parses text expecting failure; err must contain want. */
static void
parse_fails(const char *text, const char *ref, const char *want)
{
	struct agent_config *c = NULL;
	char err[AGENT_ERR_MAX] = "";
	int r = agent_config_parse("pool.yaml", text, strlen(text), ref, &c, err, sizeof(err));

	CU_ASSERT_EQUAL(r, -EINVAL);
	CU_ASSERT_PTR_NULL(c);
	if (strstr(err, want) == NULL)
		fprintf(stderr, "want \"%s\"\n got \"%s\"\n", want, err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	/* one line */
	CU_ASSERT_PTR_NULL(strchr(err, '\n'));
	agent_config_free(c);
}

static void
test_options_converted(void)
{
	struct agent_config *c = test_agent_config_ok(POOL_DOC);
	const struct dhcp_options *o;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	o = &c->opts;
	CU_ASSERT_STRING_EQUAL(c->pool_ns, "default");
	CU_ASSERT_STRING_EQUAL(c->pool_name, "net1");
	CU_ASSERT_STRING_EQUAL(c->network, "default/net1");
	CU_ASSERT_EQUAL(o->server_ip, 0x0a000002u);
	CU_ASSERT_EQUAL(o->prefix, 24);
	CU_ASSERT_EQUAL(c->cidr, 0x0a000000u);
	CU_ASSERT_EQUAL(o->router, 0x0a000001u);
	CU_ASSERT_EQUAL(o->n_dns, 2u);
	CU_ASSERT_EQUAL(o->dns[0], 0x0a000035u);
	CU_ASSERT_EQUAL(o->dns[1], 0x01010101u);
	/* NTP hostnames are resolved at load */
	CU_ASSERT_EQUAL(o->n_ntp, 2u);
	CU_ASSERT_EQUAL(o->ntp[0], 0x7f000001u);
	CU_ASSERT_EQUAL(o->ntp[1], 0x0a00007bu);
	CU_ASSERT_STRING_EQUAL(o->domain_name, "example.test");
	CU_ASSERT_EQUAL(o->n_search, 2u);
	CU_ASSERT_STRING_EQUAL(o->search[1], "svc.example.test");
	CU_ASSERT_EQUAL(o->mtu, 1400);
	CU_ASSERT_EQUAL(o->n_routes, 1u);
	CU_ASSERT_EQUAL(o->routes[0].destination, 0xc0a80000u);
	CU_ASSERT_EQUAL(o->routes[0].prefix, 16);
	CU_ASSERT_EQUAL(o->routes[0].gateway, 0x0a0000feu);
	CU_ASSERT_EQUAL(o->lease_time, 31536000u); /* unset: one year, as upstream serves it */
	CU_ASSERT_EQUAL(c->pool_start, 0x0a000001u);
	CU_ASSERT_EQUAL(c->pool_end, 0x0a000014u);
	CU_ASSERT_EQUAL(c->n_exclude, 1u);
	CU_ASSERT_EQUAL(c->n_bindings, 0u);
	agent_config_free(c);
}

static void
test_bindings_from_vmnetcfgs(void)
{
	static const char text[] = POOL_DOC VM_DOC("vm-a", "net1", "52:54:00:00:00:0A", "10.0.0.10")
	    VM_DOC("vm-b", "default/net1", "52:54:00:00:00:0b", "10.0.0.11")
	    /* another network: ignored */
	    VM_DOC("vm-c", "other", "52:54:00:00:00:0c", "10.9.0.11");
	struct agent_config *c = test_agent_config_ok(text);
	uint8_t mac[6];

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL_FATAL(c->n_bindings, 2u);
	CU_ASSERT_EQUAL(mac_parse("52:54:00:00:00:0a", mac), 0);
	CU_ASSERT_EQUAL(memcmp(c->bindings[0].mac, mac, 6), 0);
	CU_ASSERT_EQUAL(c->bindings[0].ip, 0x0a00000au);
	CU_ASSERT_STRING_EQUAL(agent_config_hostname(c, &c->bindings[0]), "vm-a");
	CU_ASSERT_EQUAL(c->bindings[1].ip, 0x0a00000bu);
	CU_ASSERT_STRING_EQUAL(agent_config_hostname(c, &c->bindings[1]), "vm-b");
	agent_config_free(c);
}

static void
test_errors_name_the_field(void)
{
	char text[4096];

	/* the example of the issue: a bad CIDR in document 1 */
	snprintf(text, sizeof(text), "%s", POOL_DOC);
	memcpy(strstr(text, "cidr: 10.0.0.0/24"), "cidr: 10.0.0/8   ", 17);
	parse_fails(text, NULL, "pool.yaml: document 1 (line 1): spec.ipv4Config.cidr");

	/* a bad MAC in document 2, whose first line is 25 (after the "---") */
	parse_fails(POOL_DOC VM_DOC("vm-a", "net1", "52:54:00:00:00:zz", "10.0.0.10"), NULL,
	    "pool.yaml: document 2 (line 25): spec.networkConfigs[0].macAddress");

	parse_fails(POOL_DOC VM_DOC("vm-a", "net1", "52:54:00:00:00:0a", "10.1.0.10"), NULL,
	    "document 2 (line 25): spec.networkConfigs[0].ipAddress: 10.1.0.10 is outside the "
	    "pool's CIDR 10.0.0.0/24");
	parse_fails(POOL_DOC VM_DOC("vm-a", "net1", "52:54:00:00:00:0a", "10.0.0.2"), NULL,
	    "spec.networkConfigs[0].ipAddress: 10.0.0.2 is the pool's serverIP");
	parse_fails(POOL_DOC VM_DOC("vm-a", "net1", "52:54:00:00:00:0a", "10.0.0.10")
			VM_DOC("vm-b", "net1", "52:54:00:00:00:0A", "10.0.0.11"),
	    NULL,
	    "document 3 (line 37): spec.networkConfigs[0].macAddress: 52:54:00:00:00:0a is "
	    "already bound on this network by document 2 (line 25)");
	parse_fails(POOL_DOC VM_DOC("vm-a", "net1", "52:54:00:00:00:0a", "10.0.0.10")
			VM_DOC("vm-b", "net1", "52:54:00:00:00:0b", "10.0.0.10"),
	    NULL,
	    "document 3 (line 37): spec.networkConfigs[0].ipAddress: 10.0.0.10 is already "
	    "bound to another MAC by document 2 (line 25)");
	parse_fails(POOL_DOC "---\nkind: Pod\nmetadata: {name: x}\n", NULL,
	    "document 2 (line 25): kind: \"Pod\" is not IPPool or VirtualMachineNetworkConfig");
	parse_fails(POOL_DOC "---\napiVersion: network.harvesterhci.io/v1alpha1\nkind: IPpool\n",
	    NULL, "document 2 (line 25): kind: \"IPpool\" is not IPPool");
	parse_fails(VM_DOC("vm-a", "net1", "52:54:00:00:00:0a", "10.0.0.10"), NULL,
	    "pool.yaml: no IPPool document");
	parse_fails("kind: IPPool\nspec: [unclosed\n", NULL, "pool.yaml: line ");
	parse_fails(
	    POOL_DOC "---\n" POOL_DOC, NULL, "2 IPPool documents; pick one with --ippool-ref");
	parse_fails(POOL_DOC, "default/other", "no IPPool named default/other");
}

static void
test_other_groups_ignored(void)
{
	/* a manifest with the NAD and a VM beside our objects loads */
	struct agent_config *c = test_agent_config_ok(
	    "apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\n"
	    "metadata: {name: net1}\n---\n" POOL_DOC "---\napiVersion: kubevirt.io/v1\n"
	    "kind: VirtualMachine\nmetadata: {name: vm-a}\n" VM_DOC(
		"vm-a", "net1", "52:54:00:00:00:0a", "10.0.0.10"));

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->n_bindings, 1u);
	agent_config_free(c);
}

/* Deterministic corruptions of a valid file: every result is a config or one clear error. */
static void
test_corrupted_files_never_crash(void)
{
	/* no ntp: a corrupted name must not send the test to a DNS server */
	static const char base[] =
	    "apiVersion: network.harvesterhci.io/v1alpha1\n"
	    "kind: IPPool\n"
	    "metadata: {name: net1, namespace: default}\n"
	    "spec:\n"
	    "  networkName: net1\n"
	    "  ipv4Config:\n"
	    "    serverIP: 10.0.0.2\n"
	    "    cidr: 10.0.0.0/24\n"
	    "    pool: {start: 10.0.0.10, end: 10.0.0.20, exclude: [10.0.0.11]}\n"
	    "    router: 10.0.0.1\n"
	    "    dns: [10.0.0.53]\n"
	    "    domainSearch: [a.test, b.test]\n"
	    "    routes: [{destination: 192.168.0.0/16, gateway: 10.0.0.254}]\n"
	    "    mtu: 1400\n" VM_DOC("vm-a", "net1", "52:54:00:00:00:0a", "10.0.0.30")
		VM_DOC("vm-b", "net1", "52:54:00:00:00:0b", "10.0.0.31");
	static const char junk[] = ":-[]{}#&*!|>'\"%@`, \n\t0123456789abcdef./";
	char buf[sizeof(base)];
	uint64_t rnd = 0x9e3779b97f4a7c15ull;
	unsigned ok = 0, bad = 0;

	for (int iter = 0; iter < 3000; iter++) {
		struct agent_config *c = NULL;
		char err[AGENT_ERR_MAX] = "";
		size_t len = sizeof(base) - 1;
		int edits, r;

		memcpy(buf, base, sizeof(base));
		rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
		edits = 1 + (int)((rnd >> 60) & 3);
		for (int e = 0; e < edits; e++) {
			size_t at;

			rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
			at = (size_t)(rnd >> 33) % len;
			if ((rnd >> 20) & 1) {
				buf[at] = junk[(rnd >> 8) % (sizeof(junk) - 1)];
			} else { /* delete a byte */
				memmove(buf + at, buf + at + 1, len - at);
				len--;
			}
		}
		r = agent_config_parse("fuzz.yaml", buf, len, NULL, &c, err, sizeof(err));
		CU_ASSERT(r == 0 || r == -EINVAL);
		if (r == 0) {
			CU_ASSERT_PTR_NOT_NULL(c);
			ok++;
		} else {
			CU_ASSERT_PTR_NULL(c);
			CU_ASSERT_EQUAL(strncmp(err, "fuzz.yaml: ", 11), 0);
			CU_ASSERT_PTR_NULL(strchr(err, '\n'));
			bad++;
		}
		agent_config_free(c);
	}
	/* both outcomes happen: the corruptions are neither all harmless nor all fatal */
	CU_ASSERT(ok > 0);
	CU_ASSERT(bad > 0);
}

static void
test_ippool_ref_picks(void)
{
	struct agent_config *c = NULL;
	char text[8192], err[AGENT_ERR_MAX] = "";
	char *second;

	snprintf(text, sizeof(text), "%s---\n%s", POOL_DOC, POOL_DOC);
	second = strstr(text + 10, "  name: net1");
	CU_ASSERT_PTR_NOT_NULL_FATAL(second);
	memcpy(second, "  name: net2", 12);
	CU_ASSERT_EQUAL(
	    agent_config_parse("p.yaml", text, strlen(text), "default/net2", &c, err, sizeof(err)),
	    0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_STRING_EQUAL(c->pool_name, "net2");
	agent_config_free(c);
}

/* ---- dynamic ---------------------------------------------------------------------------- */

static void
test_dynamic_lowest_free_and_sticky(void)
{
	/* range .1-.20: .1 router (reserved), .2 server (reserved), .4 excluded, .10 static */
	struct agent_config *c =
	    test_agent_config_ok(POOL_DOC VM_DOC("vm-a", "net1", "52:54:00:00:00:0a", "10.0.0.3"));
	struct leasefile *lf = NULL;
	struct agent_dynamic *d = NULL;
	char err[AGENT_ERR_MAX];
	uint8_t m1[6] = {2, 0, 0, 0, 0, 1}, m2[6] = {2, 0, 0, 0, 0, 2};
	uint32_t ip = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(NULL, &lf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(agent_dynamic_new(c, lf, &d), 0);
	CU_ASSERT_EQUAL(agent_dynamic_allocate(d, m1, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000005u); /* .3 static, .4 excluded */
	CU_ASSERT_EQUAL(agent_dynamic_allocate(d, m2, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000006u);
	/* sticky */
	CU_ASSERT_EQUAL(agent_dynamic_allocate(d, m1, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000005u);
	CU_ASSERT_EQUAL(leasefile_count(lf), 2u);
	/* a new pool built over the same leases (restart) keeps them and allocates past them */
	agent_dynamic_free(d);
	CU_ASSERT_EQUAL_FATAL(agent_dynamic_new(c, lf, &d), 0);
	{
		uint8_t m3[6] = {2, 0, 0, 0, 0, 3};
		CU_ASSERT_EQUAL(agent_dynamic_allocate(d, m3, &ip), 0);
		CU_ASSERT_EQUAL(ip, 0x0a000007u);
	}
	agent_dynamic_free(d);
	leasefile_free(lf);
	agent_config_free(c);
}

static void
test_dynamic_exhaustion(void)
{
	struct agent_config *c = test_agent_config_ok(POOL_DOC);
	struct leasefile *lf = NULL;
	struct agent_dynamic *d = NULL;
	char err[AGENT_ERR_MAX];
	uint32_t ip;
	int r = 0;
	unsigned n = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(NULL, &lf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(agent_dynamic_new(c, lf, &d), 0);
	for (unsigned i = 0; i < 100 && r == 0; i++) {
		uint8_t m[6] = {2, 0, 0, 0, 1, (uint8_t)i};
		r = agent_dynamic_allocate(d, m, &ip);
		if (r == 0)
			n++;
	}
	/* 20 addresses - router - server - 1 excluded */
	CU_ASSERT_EQUAL(n, 17u);
	CU_ASSERT_EQUAL(r, -ENOSPC);
	CU_ASSERT_EQUAL(agent_dynamic_available(d), 0u);
	agent_dynamic_free(d);
	leasefile_free(lf);
	agent_config_free(c);
}

static void
test_dynamic_decline_moves_the_mac(void)
{
	struct agent_config *c = test_agent_config_ok(POOL_DOC);
	struct leasefile *lf = NULL;
	struct agent_dynamic *d = NULL;
	char err[AGENT_ERR_MAX];
	uint8_t m1[6] = {2, 0, 0, 0, 0, 1}, m2[6] = {2, 0, 0, 0, 0, 2};
	uint32_t ip = 0, nip = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(NULL, &lf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(agent_dynamic_new(c, lf, &d), 0);
	CU_ASSERT_EQUAL(agent_dynamic_allocate(d, m1, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000003u);
	/* not this MAC's lease: nothing moves */
	CU_ASSERT_EQUAL(agent_dynamic_decline(d, m1, 0x0a000009u, &nip), -ENOENT);
	CU_ASSERT_EQUAL(agent_dynamic_decline(d, m2, 0x0a000003u, &nip), -ENOENT);
	CU_ASSERT_EQUAL(agent_dynamic_decline(d, m1, 0x0a000003u, &nip), 0);
	CU_ASSERT_EQUAL(nip, 0x0a000005u); /* .4 is excluded */
	CU_ASSERT_EQUAL(leasefile_lookup(lf, m1, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000005u);
	/* the declined address is never handed to the next MAC */
	CU_ASSERT_EQUAL(agent_dynamic_allocate(d, m2, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000006u);
	agent_dynamic_free(d);
	leasefile_free(lf);
	agent_config_free(c);
}

struct seen {
	size_t n;
	uint32_t last_ip;
};

static void
count_binding(void *userdata, const uint8_t mac[6], uint32_t ip, const char *hostname)
{
	struct seen *s = userdata;
	(void)mac;
	(void)hostname;
	s->n++;
	s->last_ip = ip;
}

static void
test_apply_and_resync(void)
{
	struct agent_config *c =
	    test_agent_config_ok(POOL_DOC VM_DOC("vm-a", "net1", "52:54:00:00:00:0a", "10.0.0.10")
		    VM_DOC("vm-b", "net1", "52:54:00:00:00:0b", "10.0.0.11"));
	struct agent_config *c2 = NULL;
	struct dhcp_server *s = NULL;
	struct leasefile *lf = NULL;
	struct agent_dynamic *d = NULL;
	char err[AGENT_ERR_MAX] = "";
	uint8_t dyn_mac[6] = {2, 0, 0, 0, 0, 9}, a[6], b[6];
	uint32_t ip = 0;
	struct seen seen = {0};

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(mac_parse("52:54:00:00:00:0a", a), 0);
	CU_ASSERT_EQUAL(mac_parse("52:54:00:00:00:0b", b), 0);
	CU_ASSERT_EQUAL_FATAL(dhcp_server_new(&s), 0);
	CU_ASSERT_EQUAL_FATAL(leasefile_open(NULL, &lf, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(agent_dynamic_new(c, lf, &d), 0);
	CU_ASSERT_EQUAL(agent_dynamic_allocate(d, dyn_mac, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000003u);
	CU_ASSERT_EQUAL(agent_apply_config(s, c, d, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s), 3u);
	CU_ASSERT_EQUAL(dhcp_server_get_binding(s, dyn_mac, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000003u);

	/* reload: vm-b gone, vm-a moved onto the dynamic lease's address .3, dynamic MAC now
	 * static: its lease is dropped and it keeps a static address */
	c2 = test_agent_config_ok(POOL_DOC VM_DOC("vm-a", "net1", "52:54:00:00:00:0a", "10.0.0.3")
		VM_DOC("vm-d", "net1", "02:00:00:00:00:09", "10.0.0.12"));
	CU_ASSERT_PTR_NOT_NULL_FATAL(c2);
	agent_dynamic_free(d);
	CU_ASSERT_EQUAL_FATAL(agent_dynamic_new(c2, lf, &d), 0);
	CU_ASSERT_EQUAL(leasefile_count(lf), 0u);
	CU_ASSERT(agent_apply_config(s, c2, d, err, sizeof(err)) >= 1);
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s), 2u);
	CU_ASSERT_EQUAL(dhcp_server_get_binding(s, a, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000003u);
	CU_ASSERT_EQUAL(dhcp_server_get_binding(s, b, &ip), -ENOENT);
	CU_ASSERT_EQUAL(dhcp_server_get_binding(s, dyn_mac, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a00000cu);
	dhcp_server_foreach_binding(s, count_binding, &seen);
	CU_ASSERT_EQUAL(seen.n, 2u);

	agent_dynamic_free(d);
	leasefile_free(lf);
	dhcp_server_free(s);
	agent_config_free(c);
	agent_config_free(c2);
}

/*
 * A binding with a broadcast, multicast or all-zero MAC that reaches the engine (the file
 * refuses such MACs, the IPPool path skips them: this is the last line) is skipped (logged);
 * the others serve.
 */
static void
test_apply_skips_group_mac(void)
{
	struct agent_config *c =
	    test_agent_config_ok(POOL_DOC VM_DOC("vm-a", "net1", "52:54:00:00:00:0a", "10.0.0.10")
		    VM_DOC("vm-b", "net1", "52:54:00:00:00:0b", "10.0.0.11")
			VM_DOC("vm-c", "net1", "52:54:00:00:00:0c", "10.0.0.12")
			    VM_DOC("vm-d", "net1", "52:54:00:00:00:0d", "10.0.0.13"));
	struct dhcp_server *s = NULL;
	char err[AGENT_ERR_MAX] = "";
	uint8_t a[6] = {0x52, 0x54, 0, 0, 0, 0x0a}, bc[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	uint32_t ip = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL_FATAL(c->n_bindings, 4u);
	for (size_t i = 1; i < 4; i++) {
		static const uint8_t bad[3][6] = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		    {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01}, {0}};
		for (size_t k = 0; k < 4; k++)
			if (c->bindings[k].ip == 0x0a00000au + (uint32_t)i)
				memcpy(c->bindings[k].mac, bad[i - 1], 6);
	}
	CU_ASSERT_EQUAL_FATAL(dhcp_server_new(&s), 0);
	CU_ASSERT_EQUAL(agent_apply_config(s, c, NULL, err, sizeof(err)), 0);
	CU_ASSERT_STRING_EQUAL(err, "");
	CU_ASSERT_EQUAL(dhcp_server_n_bindings(s), 1u);
	CU_ASSERT_EQUAL(dhcp_server_get_binding(s, a, &ip), 0);
	CU_ASSERT_EQUAL(ip, 0x0a00000au);
	CU_ASSERT_EQUAL(dhcp_server_get_binding(s, bc, NULL), -ENOENT);
	dhcp_server_free(s);
	agent_config_free(c);
}

/* The file as the agent's source: what serve.c calls through agent_file_source_ops. */
static void
test_file_source_ops(void)
{
	const struct agent_source_ops *o = &agent_file_source_ops;
	struct agent_source_stats st;
	struct agent_config *c = NULL;
	char err[AGENT_ERR_MAX], why[256] = "";

	CU_ASSERT_EQUAL_FATAL(
	    agent_config_parse("t.yaml", POOL_DOC, strlen(POOL_DOC), NULL, &c, err, sizeof(err)),
	    0);
	CU_ASSERT_EQUAL(o->start(c), 0);
	CU_ASSERT_PTR_EQUAL(o->config(c), c);
	CU_ASSERT(o->ready(c, why, sizeof(why)));
	CU_ASSERT_STRING_EQUAL(why, "");
	CU_ASSERT(o->serving(c));
	memset(&st, 0xff, sizeof(st));
	o->stats(c, &st);
	CU_ASSERT_FALSE(st.synced);
	CU_ASSERT_EQUAL(st.applied, 0);
	CU_ASSERT_EQUAL(st.bindings, 0);
	/* a paused pool: not served, and /readyz says why */
	c->paused = true;
	CU_ASSERT_FALSE(o->ready(c, why, sizeof(why)));
	CU_ASSERT_STRING_EQUAL(why, "pool default/net1 is paused");
	CU_ASSERT_FALSE(o->serving(c));
	o->free(c); /* the source owns the config */
	o->free(NULL);
}

/* --- the program's flags (build/vm-dhcp-agent) ------------------------------------------- */

/*
 * Runs BUILD/vm-dhcp-agent with args (NULL-terminated) and only the environment env
 * (NULL-terminated "NAME=value" strings), stdout into out and stderr into err (each at most
 * len - 1 bytes); returns the exit status, or -1.
 */
static int
run_agent_env(char *const args[], char *const env[], char *out, char *err, size_t len)
{
	char self[PATH_MAX], program[PATH_MAX + 32], path[2][64];
	char *argv[24] = {program};
	char *bufs[2] = {out, err};
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int st = 0, fd[2] = {-1, -1}, ret = -1;
	pid_t pid;

	if (n <= 0)
		return -1;
	self[n] = '\0';
	/* BUILD/tests/test-agent-config -> BUILD/vm-dhcp-agent */
	snprintf(program, sizeof(program), "%s/../vm-dhcp-agent", dirname(self));
	for (size_t i = 0; args[i] != NULL && i + 2 < ELEMENTSOF(argv); i++)
		argv[i + 1] = args[i];
	for (int i = 0; i < 2; i++) {
		snprintf(path[i], sizeof(path[i]), "/tmp/%ld-vmdhcp-agent-flags.%d", (long)getpid(),
		    i + 1);
		fd[i] = open(path[i], O_RDWR | O_CREAT | O_TRUNC, 0600);
	}
	if (fd[0] >= 0 && fd[1] >= 0 && (pid = fork()) >= 0) {
		if (pid == 0) {
			if (dup2(fd[0], 1) < 0 || dup2(fd[1], 2) < 0)
				_exit(127);
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			execve(program, argv, env);
			_exit(127);
		}
		if (waitpid(pid, &st, 0) == pid && WIFEXITED(st))
			ret = WEXITSTATUS(st);
	}
	for (int i = 0; i < 2; i++) {
		n = fd[i] >= 0 ? pread(fd[i], bufs[i], len - 1, 0) : -1;
		bufs[i][n > 0 ? n : 0] = '\0';
		if (fd[i] >= 0)
			close(fd[i]);
		unlink(path[i]);
	}
	return ret;
}

/* The same with the environment cleared. */
static int
run_agent(char *const args[], char *out, char *err, size_t len)
{
	char *const env[] = {NULL};

	return run_agent_env(args, env, out, err, len);
}

/*
 * The Go project's flags and environment variables (cmd/agent/root.go): --nic is
 * --interface; $IPPOOL_REF gives --ippool-ref (the command line wins); $KUBECONTEXT picks the
 * kubeconfig's context (an unknown one is refused, naming it); $VM_DHCP_AGENT_NAME reaches
 * the log; a bad $VM_DHCP_AGENT_DEBUG is refused naming it; --help lists them.
 */
static void
test_upstream_flags(void)
{
	char file[64], kc[64], kcenv[80], *help[] = {"--help", NULL};
	char *nic[] = {"--config", file, "--dry-run", "--nic", "eth9", NULL};
	char *env_pool[] = {"IPPOOL_REF=default/net1", NULL};
	char *env_bad_pool[] = {"IPPOOL_REF=default/none", NULL};
	char *dry[] = {"--config", file, "--dry-run", NULL};
	char *dry_ref[] = {"--config", file, "--dry-run", "--ippool-ref", "default/net1", NULL};
	char *kube[] = {"--ippool-ref", "default/net1", NULL};
	char *env_ctx[] = {kcenv, "KUBECONTEXT=nope", "VM_DHCP_AGENT_NAME=agent-up",
	    "VM_DHCP_AGENT_TRACE=1", NULL};
	char *env_debug[] = {"VM_DHCP_AGENT_DEBUG=yes", NULL};
	char out[8192], err[8192];
	FILE *f;

	CU_ASSERT_EQUAL(run_agent(help, out, err, sizeof(out)), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n  --nic IF "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n  --kubecontext NAME "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n  --name NAME "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n  --debug "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n  --trace "));
	for (const char *const *v = (const char *const[]){"$IPPOOL_REF", "$KUBECONTEXT",
		 "$VM_DHCP_AGENT_NAME", "$VM_DHCP_AGENT_DEBUG", "$VM_DHCP_AGENT_TRACE", NULL};
	     *v != NULL; v++)
		CU_ASSERT_PTR_NOT_NULL(strstr(out, *v));

	snprintf(file, sizeof(file), "/tmp/%ld-vmdhcp-agent-up.yaml", (long)getpid());
	f = fopen(file, "w");
	CU_ASSERT_FATAL(f != NULL);
	fputs(POOL_DOC, f);
	fclose(f);
	CU_ASSERT_EQUAL(run_agent(nic, out, err, sizeof(out)), 0);
	CU_ASSERT_EQUAL(strncmp(out, "pool        default/net1 ", 25), 0);
	CU_ASSERT_EQUAL(run_agent_env(dry, env_pool, out, err, sizeof(out)), 0);
	CU_ASSERT_EQUAL(strncmp(out, "pool        default/net1 ", 25), 0);
	CU_ASSERT_EQUAL(run_agent_env(dry, env_bad_pool, out, err, sizeof(out)), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "default/none"));
	CU_ASSERT_EQUAL(run_agent_env(dry_ref, env_bad_pool, out, err, sizeof(out)), 0);

	/* Kubernetes mode: the context named by $KUBECONTEXT, refused when the file lacks it */
	snprintf(kc, sizeof(kc), "/tmp/%ld-vmdhcp-agent-up.kubeconfig", (long)getpid());
	snprintf(kcenv, sizeof(kcenv), "KUBECONFIG=%s", kc);
	f = fopen(kc, "w");
	CU_ASSERT_FATAL(f != NULL);
	fputs("apiVersion: v1\nkind: Config\ncurrent-context: a\nclusters:\n- name: c\n"
	      "  cluster: {server: \"https://127.0.0.1:1\"}\ncontexts:\n- name: a\n"
	      "  context: {cluster: c}\n",
	    f);
	fclose(f);
	CU_ASSERT_EQUAL(run_agent_env(kube, env_ctx, out, err, sizeof(out)), 2);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "contexts: no entry named \"nope\""));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "instance name agent-up"));
	if (strstr(err, "no entry named") == NULL)
		fprintf(stderr, "agent said: %s\n", err);
	unlink(kc);
	unlink(file);

	CU_ASSERT_EQUAL(run_agent_env(dry, env_debug, out, err, sizeof(out)), 2);
	CU_ASSERT_STRING_EQUAL(
	    err, "vm-dhcp-agent: $VM_DHCP_AGENT_DEBUG: \"yes\" is not true or false\n");
}

static void
test_program_flags(void)
{
	static const struct {
		const char *args[10];
		const char *want; /* the whole of stderr */
	} bad[] = {
	    {{"--config", "f", "--lease-grace", "x"},
		"--lease-grace: \"x\" is not a number of seconds from 0 to 4294967294"},
	    {{"--config", "f", "--decline-hold", "4294967295"},
		"--decline-hold: \"4294967295\" is not a number of seconds from 0 to 4294967294"},
	    {{"--ippool-ref", "a/b", "--leader-elect", "--lease-duration", "2s"},
		"--lease-duration: \"2s\" is not a number of seconds from 0.000001 to 3600"},
	    {{"--ippool-ref", "a/b", "--leader-elect", "--retry-period", "0"},
		"--retry-period: \"0\" is not a number of seconds from 0.000001 to 3600"},
	    {{"--log-level", "loud"}, "--log-level: \"loud\" is not error, warn, info or debug"},
	    {{"--log-format", "xml"}, "--log-format: \"xml\" is not text or json"},
	    {{"--log-dhcp", "some"}, "--log-dhcp: \"some\" is not all, drops or none"},
	    {{"--nope"}, "unknown flag --nope (try --help)"},
	    {{"--config"}, "--config needs a value (try --help)"},
	    {{"--config", "f", "stray"}, "unexpected argument \"stray\" (try --help)"},
	    {{"--config", "f", "--enable-cache-dump-api"},
		"--enable-cache-dump-api needs --listen (the endpoint that serves /leases)"},
	    {{NULL},
		"--config FILE (local mode) or --ippool-ref NS/NAME (Kubernetes mode) is required "
		"(try --help)"},
	    {{"--ippool-ref", "ab"}, "--ippool-ref: \"ab\" is not NAMESPACE/NAME"},
	    {{"--ippool-ref", "a/b", "--lease-file", "l"},
		"--dynamic and --lease-file are for local mode (--config); in Kubernetes mode the "
		"bindings come from the IPPool"},
	    {{"--config", "f", "--snapshot", "s"},
		"--snapshot is for Kubernetes mode (--ippool-ref without --config)"},
	    {{"--config", "f", "--leader-elect"},
		"--leader-elect is for Kubernetes mode (--ippool-ref without --config)"},
	    {{"--ippool-ref", "a/b", "--identity", "x"},
		"--lease-name, --lease-namespace, --identity, --lease-duration, --renew-deadline "
		"and --retry-period need --leader-elect"},
	    {{"--ippool-ref", "a/b", "--leader-elect", "--renew-deadline", "3"},
		"--leader-elect: need --retry-period < --renew-deadline < --lease-duration and "
		"--lease-duration >= 1 (got 0.300, 3.000, 2.000)"},
	    {{"--config", "f", "--lease-file", "l"},
		"--lease-file needs --dynamic (static bindings come from --config)"},
	    {{"--config", "f", "--lease-grace", "5"},
		"--lease-grace needs --dynamic (static bindings do not expire)"},
	    {{"--config", "f", "--dynamic", "--offer-hold", "0"},
		"--offer-hold: \"0\" is not a number of seconds from 1 to 3600"},
	    {{"--config", "f", "--dynamic", "--max-pending-offers", "0"},
		"--max-pending-offers: \"0\" is not a number of offers from 1 to 16777216"},
	    {{"--config", "f", "--max-pending-offers", "10"},
		"--offer-hold and --max-pending-offers need --dynamic (static bindings are offered "
		"as they are)"},
	};
	char *help[] = {"--dry-run", "--help", NULL};
	char *version[] = {"--version", NULL};
	char file[64],
	    *dry[] = {"--config", file, "--dry-run", "--dynamic", "--lease-grace", "0",
		"--decline-hold", "4294967294", "--log-dhcp", "none", "--log-format", "json", NULL};
	char out[8192], err[1024], want[512];
	FILE *f;

	CU_ASSERT_EQUAL(run_agent(help, out, err, sizeof(out)), 0);
	CU_ASSERT_EQUAL(strncmp(out, "usage: vm-dhcp-agent --config FILE", 34), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n       vm-dhcp-agent --ippool-ref NS/NAME"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n  --lease-grace SECONDS "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n  --offer-hold SECONDS "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n  --max-pending-offers N "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n  --snapshot FILE "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\n  --enable-cache-dump-api "));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nSignals: SIGHUP reloads the --config file"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\nExit status: 0 done; 1 runtime failure"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "2 bad usage or configuration"));
	CU_ASSERT_STRING_EQUAL(err, "");
	CU_ASSERT_EQUAL(run_agent(version, out, err, sizeof(out)), 0);
	CU_ASSERT_EQUAL(strncmp(out, "vm-dhcp-agent ", 14), 0);

	snprintf(file, sizeof(file), "/tmp/%ld-vmdhcp-agent-flags.yaml", (long)getpid());
	f = fopen(file, "w");
	CU_ASSERT_FATAL(f != NULL);
	fputs(POOL_DOC, f);
	fclose(f);
	CU_ASSERT_EQUAL(run_agent(dry, out, err, sizeof(out)), 0);
	CU_ASSERT_EQUAL(strncmp(out, "pool        default/net1 ", 25), 0);
	unlink(file);

	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		CU_ASSERT_EQUAL(run_agent((char **)bad[i].args, out, err, sizeof(err)), 2);
		snprintf(want, sizeof(want), "vm-dhcp-agent: %s\n", bad[i].want);
		CU_ASSERT_STRING_EQUAL(err, want);
		CU_ASSERT_STRING_EQUAL(out, "");
	}
}

/* A broadcast, multicast or all-zero MAC is no NIC's: the file is refused, naming it. */
static void
test_group_mac_refused(void)
{
	parse_fails(POOL_DOC VM_DOC("vm-a", "net1", "52:54:00:00:00:0a", "10.0.0.10")
			VM_DOC("vm-b", "net1", "ff:ff:ff:ff:ff:ff", "10.0.0.11"),
	    NULL,
	    "pool.yaml: document 3 (line 37): spec.networkConfigs[0].macAddress: "
	    "ff:ff:ff:ff:ff:ff is the broadcast address, not a NIC's address");
	parse_fails(POOL_DOC VM_DOC("vm-c", "net1", "01:00:5E:00:00:01", "10.0.0.12"), NULL,
	    "document 2 (line 25): spec.networkConfigs[0].macAddress: 01:00:5e:00:00:01 is a "
	    "multicast (group) address, not a NIC's address");
	parse_fails(POOL_DOC VM_DOC("vm-d", "net1", "00:00:00:00:00:00", "10.0.0.13"), NULL,
	    "spec.networkConfigs[0].macAddress: 00:00:00:00:00:00 is all zeros, not a NIC's "
	    "address");
	/* on another network too: the file is wrong whatever pool is served */
	parse_fails(POOL_DOC VM_DOC("vm-e", "net2", "33:33:00:00:00:01", "10.9.0.13"), NULL,
	    "33:33:00:00:00:01 is a multicast (group) address");
}

/* load_fails PATH WANT: agent_config_load refuses PATH with -EINVAL, err holding want */
static void
load_fails(const char *path, const char *want)
{
	struct agent_config *c = NULL;
	char err[AGENT_ERR_MAX] = "";
	int r = agent_config_load(path, NULL, &c, err, sizeof(err));

	CU_ASSERT_EQUAL(r, -EINVAL);
	CU_ASSERT_PTR_NULL(c);
	if (strstr(err, want) == NULL)
		fprintf(stderr, "want \"%s\"\n got \"%s\"\n", want, err);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, want));
	agent_config_free(c);
}

/*
 * Only a regular file of at most 64 MiB is read: a device (/dev/zero: 512 MiB read before)
 * and a directory are refused before a byte is read, a FIFO without a writer at once (it hung
 * the start), a file over the limit by its size.
 */
static void
test_config_file_kinds(void)
{
	char dir[64], fifo[96], big[96];
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/%ld-vmdhcp-config-kinds", (long)getpid());
	CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0700), 0);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(big, sizeof(big), "%s/big.yaml", dir);
	load_fails("/dev/zero", "/dev/zero: not a regular file (a character device)");
	load_fails(dir, ": not a regular file (a directory)");
	CU_ASSERT_EQUAL_FATAL(mkfifo(fifo, 0600), 0);
	load_fails(fifo, "/fifo: not a regular file (a FIFO)");
	fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(ftruncate(fd, (off_t)(64 << 20) + 1), 0); /* sparse */
	close(fd);
	load_fails(big, "/big.yaml: 67108865 bytes, over the limit of 64 MiB");
	fd = open(big, O_WRONLY | O_TRUNC);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, POOL_DOC, strlen(POOL_DOC)), (ssize_t)strlen(POOL_DOC));
	close(fd);
	{
		struct agent_config *c = NULL;
		char err[AGENT_ERR_MAX] = "";

		CU_ASSERT_EQUAL(agent_config_load(big, NULL, &c, err, sizeof(err)), 0);
		CU_ASSERT_PTR_NOT_NULL(c);
		agent_config_free(c);
	}
	unlink(big);
	unlink(fifo);
	rmdir(dir);
}

/* Parsed in steps of one document: the same configuration, one step per document. */
static void
test_parser_steps(void)
{
	static const char text[] = POOL_DOC VM_DOC("vm-a", "net1", "52:54:00:00:00:0a", "10.0.0.10")
	    VM_DOC("vm-b", "net1", "52:54:00:00:00:0b", "10.0.0.11")
		VM_DOC("vm-x", "net2", "52:54:00:00:00:0c", "10.9.0.11");
	char path[64], err[AGENT_ERR_MAX] = "";
	struct agent_config_parser *ps = NULL;
	struct agent_config *c = NULL;
	int fd, r, steps = 0;

	snprintf(path, sizeof(path), "/tmp/%ld-vmdhcp-steps.yaml", (long)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_EQUAL(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	CU_ASSERT_EQUAL_FATAL(agent_config_parser_open(path, NULL, &ps, err, sizeof(err)), 0);
	while ((r = agent_config_parser_step(ps, 1, &c, err, sizeof(err))) == 1)
		steps++;
	CU_ASSERT_EQUAL(r, 0);
	CU_ASSERT_EQUAL(steps, 3); /* 4 documents: 3 steps with more to come, then the last */
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->n_bindings, 2u);
	CU_ASSERT_STRING_EQUAL(c->pool_name, "net1");
	/* done: a further step is refused, not a crash */
	CU_ASSERT_EQUAL(
	    agent_config_parser_step(ps, 1, &(struct agent_config *){NULL}, err, sizeof(err)),
	    -EINVAL);
	agent_config_parser_free(ps);
	agent_config_free(c);

	/* an error in a later step: the parser is done, nothing leaks */
	fd = open(path, O_WRONLY | O_TRUNC);
	CU_ASSERT_FATAL(fd >= 0);
	{
		static const char bad[] =
		    POOL_DOC VM_DOC("vm-a", "net1", "ff:ff:ff:ff:ff:ff", "10.0.0.10");
		CU_ASSERT_EQUAL(write(fd, bad, strlen(bad)), (ssize_t)strlen(bad));
	}
	close(fd);
	c = NULL;
	CU_ASSERT_EQUAL_FATAL(agent_config_parser_open(path, NULL, &ps, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(agent_config_parser_step(ps, 1, &c, err, sizeof(err)), 1);
	CU_ASSERT_EQUAL(agent_config_parser_step(ps, 1, &c, err, sizeof(err)), -EINVAL);
	CU_ASSERT_PTR_NULL(c);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "is the broadcast address"));
	agent_config_parser_free(ps);
	unlink(path);
}

static const struct test_case config_tests[] = {
    {"broadcast, multicast and zero MACs refused", test_group_mac_refused},
    {"a regular file of at most 64 MiB only (no FIFO, no device)", test_config_file_kinds},
    {"parsed in steps: the same configuration", test_parser_steps},
    {"IPPool options converted", test_options_converted},
    {"bindings from VMNetCfg NICs on the pool's network", test_bindings_from_vmnetcfgs},
    {"errors name file, document, line and field", test_errors_name_the_field},
    {"--ippool-ref picks one of several pools", test_ippool_ref_picks},
    {"the Go project's flags and environment variables", test_upstream_flags},
    {"objects of other API groups are skipped", test_other_groups_ignored},
    {"corrupted files: a config or one error line", test_corrupted_files_never_crash},
    {"the file as the agent's source (ready, serving, config, stats)", test_file_source_ops},
    {NULL, NULL},
};

static const struct test_case dynamic_tests[] = {
    {"lowest free, sticky, survives a rebuild", test_dynamic_lowest_free_and_sticky},
    {"pool exhaustion is ENOSPC", test_dynamic_exhaustion},
    {"DECLINE moves the MAC, the address stays taken", test_dynamic_decline_moves_the_mac},
    {"apply and resync into the engine", test_apply_and_resync},
    {"apply skips broadcast, multicast and zero MACs", test_apply_skips_group_mac},
    {NULL, NULL},
};

static const struct test_case flags_tests[] = {
    {"vm-dhcp-agent: --help, a dry run, each refusal one line and exit 2", test_program_flags},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "agent-config", .tests = config_tests},
    {.name = "agent-flags", .tests = flags_tests},
    {.name = "agent-dynamic", .tests = dynamic_tests},
    {.name = NULL},
};
