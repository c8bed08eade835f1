/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The running agent's DHCPv6 engine: made with the agent, fed each configuration's IPv6 part
 * (static bindings only: --dynamic is IPv4's; VMNetCfg ipv6Address pins in local mode,
 * status.ipv6.allocated in Kubernetes mode), its callbacks: the decision log and the DECLINEs
 * and RELEASEs said (the engine marks a declined address itself; the control plane owns the
 * bindings, so a RELEASE changes nothing here).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/apply-config.h"
#include "agent/pool-config.h"
#include "agent/serve-internal.h"
#include "agent/serve6.h"
#include "dhcp/dhcp6.h"
#include "lib/clock.h"
#include "lib/ip6.h"
#include "lib/log.h"
#include "lib/util.h"

static struct log_ratelimit rl_decline6 = LOG_RATELIMIT_INIT(10 * USEC_PER_SEC, 10);

static uint64_t
dhcp6_clock(void *userdata)
{
	(void)userdata;
	return clock_now_usec();
}

static void
on_decision6(void *userdata, const struct dhcp6_decision *d)
{
	struct agent *a = userdata;

	agent_declog_decision6(&a->declog, d, agent_cur_cfg(a));
}

/* RFC 8415 §18.4.4: the client found the address in use; the engine refuses it the MAC. */
static void
on_decline6(void *userdata, const uint8_t mac[6], const struct in6_addr *ip)
{
	struct agent *a = userdata;
	char m[MAC_STRLEN], s[IPV6_STRLEN];

	mac_format(mac, m);
	ipv6_format(ip, s);
	log_ratelimited(&rl_decline6, clock_now_usec(), LOG_LEVEL_WARN,
	    "DHCPv6 DECLINE from %s for %s: the address is in use on the network; %s gets none "
	    "until its binding changes (%s)",
	    m, s, m, a->opts.kube ? "status.ipv6.allocated" : "its ipv6Address");
}

int
agent_serve6_new(struct agent *a)
{
	struct dhcp6_callbacks cb = {0};
	int r;

	if ((r = dhcp6_server_new(&a->dhcp6)) < 0)
		return r;
	cb.on_decline = on_decline6;
	if (a->opts.log_dhcp != AGENT_LOG_DHCP_NONE && log_get_level() >= LOG_LEVEL_INFO)
		cb.on_decision = on_decision6;
	cb.userdata = a;
	dhcp6_server_set_callbacks(a->dhcp6, &cb);
	dhcp6_server_set_clock(a->dhcp6, dhcp6_clock, NULL);
	dhcp6_server_set_duid_mac(a->dhcp6, a->opts.dhcp6_duid_mac);
	/* a standby replica's engine answers nothing until it holds the Lease */
	dhcp6_server_set_standby(a->dhcp6, !a->fo.fsm.active);
	return 0;
}

int
agent_serve6_apply(struct agent *a, const struct agent_config *cfg, const char *what)
{
	const struct agent_config6 *v = &cfg->v6;
	char err[AGENT_ERR_MAX], net[IPV6_STRLEN], sip[IPV6_STRLEN], st[IPV6_STRLEN],
	    en[IPV6_STRLEN];
	int r;

	if ((r = agent_apply_config6(a->dhcp6, cfg, err, sizeof(err))) < 0) {
		log_error("%s/%s: IPv6 not served: %s", cfg->pool_ns, cfg->pool_name, err);
		return r;
	}
	if (!v->enabled)
		return r;
	ipv6_format(&v->cidr, net);
	ipv6_format(&v->opts.server_ip, sip);
	ipv6_format(&v->pool_start, st);
	ipv6_format(&v->pool_end, en);
	log_info("%s pool %s/%s IPv6: %s/%u server %s range %s-%s, %zu static bindings, router "
		 "advertisements %s, %d removed",
	    what, cfg->pool_ns, cfg->pool_name, net, v->prefix, sip, st, en,
	    dhcp6_server_n_bindings(a->dhcp6), v->ra.enabled ? "on" : "off", r);
	if (a->opts.dynamic)
		log_info("--dynamic allocates IPv4 only: IPv6 is static-only (VMNetCfg "
			 "ipv6Address pins); a NIC without one gets no IPv6 address");
	return r;
}

void
agent_serve6_free(struct agent *a)
{
	agent_sockets6_free(a);
	a->dhcp6 = dhcp6_server_free(a->dhcp6);
}
