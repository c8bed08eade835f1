/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vm-dhcp-agent's command line (cli.h): the flags, with the Go project's names and environment
 * variables (cmd/agent/root.go): --name ($VM_DHCP_AGENT_NAME), --kubeconfig ($KUBECONFIG),
 * --kubecontext ($KUBECONTEXT), --dry-run, --ippool-ref ($IPPOOL_REF), --nic (= --interface),
 * --debug and --trace ($VM_DHCP_AGENT_DEBUG, $VM_DHCP_AGENT_TRACE); and the checks across them.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cli.h"
#include "agent/dynamic.h"
#include "lib/flags.h"
#include "lib/log.h"

static const char *const log_dhcp_choices[] = {"all", "drops", "none", NULL};

/* The command line: the agent's options, and what main() does with the rest (flag_table). */
static struct cli cli;

/*
 * The flags in the order --help lists them (lib/flags.h), each writing into cli: a flat table
 * that reads best whole.
 */
static const struct flag flag_table[] = {
    {.name = "config",
	.type = FLAG_STRING,
	.dst = &cli.opts.config_path,
	.arg = "FILE",
	.help = "local mode: IPPool and VirtualMachineNetworkConfig YAML documents"},
    {.name = "interface",
	.type = FLAG_STRING,
	.dst = &cli.opts.ifname,
	.arg = "IF",
	.help = "interface to serve (default eth1)",
	.alias = "nic"},
    {.name = "dynamic",
	.type = FLAG_BOOL,
	.dst = &cli.opts.dynamic,
	.help = "local mode: also serve unknown MACs from the pool range\n"
		"(sticky per MAC)"},
    {.name = "lease-file",
	.type = FLAG_STRING,
	.dst = &cli.opts.lease_path,
	.arg = "FILE",
	.help = "with --dynamic: where leases are kept across restarts\n"
		"(default: memory only)"},
    /* AGENT_DEFAULT (UINT32_MAX) is not a value */
    {.name = "lease-grace",
	.type = FLAG_UINT,
	.dst = &cli.grace,
	.arg = "SECONDS",
	.help = "with --dynamic: a lease not renewed for the lease time plus this\n"
		"is reclaimed (default: half the lease time)",
	.max = UINT32_MAX - 1,
	.unit = "seconds"},
    {.name = "decline-hold",
	.type = FLAG_UINT,
	.dst = &cli.hold,
	.arg = "SECONDS",
	.help = "a DHCPDECLINEd address is not offered again for this long\n"
		"(default 86400)",
	.max = UINT32_MAX - 1,
	.unit = "seconds"},
    {.name = "offer-hold",
	.type = FLAG_UINT,
	.dst = &cli.offer_hold,
	.arg = "SECONDS",
	.help = "with --dynamic: an address offered to a MAC without a lease is held\n"
		"this long for its REQUEST, which alone makes a lease (default 10)",
	.min = 1,
	.max = 3600,
	.unit = "seconds",
	.given = &cli.offer_flags},
    {.name = "max-pending-offers",
	.type = FLAG_UINT,
	.dst = &cli.max_offers,
	.arg = "N",
	.help = "with --dynamic: at most N offers held at once; over it DISCOVERs\n"
		"from new MACs are dropped (default: half the range, at most 4096)",
	.min = 1,
	.max = 1 << 24,
	.unit = "offers",
	.given = &cli.offer_flags},
    {.name = "listen",
	.type = FLAG_STRING,
	.dst = &cli.opts.listen,
	.arg = "ADDR",
	.help = "HTTP /healthz /readyz /metrics on HOST:PORT (default: off); never\n"
		"an address of the served interface; Kubernetes mode: not :PORT\n"
		"either (--listen $(POD_IP):8080)"},
    {.name = "enable-cache-dump-api",
	.type = FLAG_BOOL,
	.dst = &cli.opts.dump_api,
	.help = "also serve GET /leases on --listen: the bindings served, as the Go\n"
		"project's debug endpoint (default off)"},
    {.name = "assign-server-ip",
	.type = FLAG_BOOL,
	.dst = &cli.opts.assign_server_ip,
	.help = "add the pool's serverIP/prefix to the interface (netlink), and\n"
		"its ipv6Config serverIP/prefix (no DAD)"},
    {.name = "dhcp6-duid-mac",
	.type = FLAG_BOOL,
	.dst = &cli.opts.dhcp6_duid_mac,
	.help = "DHCPv6: a client whose MAC has no binding is matched by the MAC in\n"
		"its DUID-LL/DUID-LLT (as Kea's mac-sources duid; for load\n"
		"generators such as perfdhcp -6). Off by default: a client writes\n"
		"any DUID, the frame's source MAC is pinned by the bridge"},
    {.name = "dry-run",
	.type = FLAG_BOOL,
	.dst = &cli.dry,
	.help = "local mode: check the file, print a summary, exit; Kubernetes\n"
		"mode: follow the pool without sockets or netlink"},
    {.name = "log-level",
	.type = FLAG_FUNC,
	.dst = &cli.level,
	.arg = "LEVEL",
	.help = "error, warn, info (default) or debug",
	.parse = log_level_flag,
	.given = &cli.level_given},
    {.name = "debug",
	.type = FLAG_BOOL,
	.dst = &cli.debug,
	.help = "--log-level debug, unless --log-level is given",
	.env = "VM_DHCP_AGENT_DEBUG"},
    {.name = "trace",
	.type = FLAG_BOOL,
	.dst = &cli.trace,
	.help = "the same as --debug (no finer level here)",
	.env = "VM_DHCP_AGENT_TRACE"},
    {.name = "log-format",
	.type = FLAG_FUNC,
	.dst = &cli.format,
	.arg = "FORMAT",
	.help = "text (default) or json: one object per line with ts, level, msg\n"
		"and the line's keys",
	.parse = log_format_flag},
    {.name = "log-dhcp",
	.type = FLAG_CHOICE,
	.dst = &cli.log_dhcp,
	.arg = "WHAT",
	.help = "DHCP decision lines at info level (rate-limited): all (default),\n"
		"drops (dropped or NAKed requests only) or none",
	.choices = log_dhcp_choices},
    {.name = "ippool-ref",
	.type = FLAG_STRING,
	.dst = &cli.opts.ippool_ref,
	.arg = "NS/NAME",
	.help = "the IPPool to serve: without --config, watched through the API\n"
		"server (Kubernetes mode); with it, picks one when the file has\n"
		"several",
	.env = "IPPOOL_REF"},
    {.name = "kubeconfig",
	.type = FLAG_STRING,
	.dst = &cli.kubeconfig,
	.arg = "FILE",
	.help = "Kubernetes mode: kubeconfig file (default $KUBECONFIG, else\n"
		"in-cluster)"},
    {.name = "kubecontext",
	.type = FLAG_STRING,
	.dst = &cli.kubecontext,
	.arg = "NAME",
	.help = "Kubernetes mode: the kubeconfig's context (default its\n"
		"current-context; in-cluster: ignored)",
	.env = "KUBECONTEXT"},
    {.name = "name",
	.type = FLAG_STRING,
	.dst = &cli.name,
	.arg = "NAME",
	.help = "name of this agent instance, in the logs",
	.env = "VM_DHCP_AGENT_NAME"},
    {.name = "drop-capabilities",
	.type = FLAG_BOOL,
	.dst = &cli.opts.drop_capabilities,
	.help = "local mode: once serving, drop every capability but CAP_NET_ADMIN\n"
		"(as Kubernetes mode always does); the interface can then not be\n"
		"re-created under the agent"},
    {.name = "leader-elect",
	.type = FLAG_BOOL,
	.dst = &cli.opts.leader_elect,
	.help = "Kubernetes mode: replicas of the pool elect the active one through\n"
		"a Lease; only it holds the serverIP and answers, the others stand\n"
		"by with their tables synced"},
    {.name = "lease-name",
	.type = FLAG_STRING,
	.dst = &cli.opts.lease_name,
	.arg = "NAME",
	.help = "with --leader-elect: the Lease (default vm-dhcp-agent-NS-NAME of\n"
		"the pool)",
	.given = &cli.ha_flags},
    {.name = "lease-namespace",
	.type = FLAG_STRING,
	.dst = &cli.opts.lease_ns,
	.arg = "NS",
	.help = "with --leader-elect: the Lease's namespace (default\n"
		"$POD_NAMESPACE, else the pool's)",
	.given = &cli.ha_flags},
    {.name = "identity",
	.type = FLAG_STRING,
	.dst = &cli.opts.identity,
	.arg = "ID",
	.help = "with --leader-elect: this replica's name in the Lease (default\n"
		"$POD_NAME, else the host name)",
	.given = &cli.ha_flags},
    {.name = "lease-duration",
	.type = FLAG_SECONDS,
	.dst = &cli.opts.lease_duration_usec,
	.arg = "SECONDS",
	.help = "with --leader-elect: a standby takes over this long after the\n"
		"active one's last renewal it saw (default 2; whole seconds in the\n"
		"Lease)",
	.min = 1,
	.max = 3600 * UINT64_C(1000000),
	.given = &cli.ha_flags},
    {.name = "renew-deadline",
	.type = FLAG_SECONDS,
	.dst = &cli.opts.renew_deadline_usec,
	.arg = "SECONDS",
	.help = "with --leader-elect: the active one stops answering when it could\n"
		"not renew for this long (default 1.5; under --lease-duration)",
	.min = 1,
	.max = 3600 * UINT64_C(1000000),
	.given = &cli.ha_flags},
    {.name = "retry-period",
	.type = FLAG_SECONDS,
	.dst = &cli.opts.retry_period_usec,
	.arg = "SECONDS",
	.help = "with --leader-elect: how often the Lease is renewed or tried\n"
		"(default 0.3; under --renew-deadline)",
	.min = 1,
	.max = 3600 * UINT64_C(1000000),
	.given = &cli.ha_flags},
    {.name = "snapshot",
	.type = FLAG_STRING,
	.dst = &cli.opts.snapshot_path,
	.arg = "FILE",
	.help = "Kubernetes mode: keep a snapshot of the table in FILE and, at\n"
		"start, serve from it until synced with the API server (warm start)"},
    {.name = NULL},
};

static struct flags cli_flags = {.prog = "vm-dhcp-agent",
    .synopsis = "usage: vm-dhcp-agent --config FILE [--interface IF] [options]\n"
		"       vm-dhcp-agent --ippool-ref NS/NAME [--kubeconfig FILE] "
		"[--interface IF] [options]\n\n",
    .footer = "\nKubernetes mode sets the pool's serverIP/prefix on the interface itself "
	      "and, once\n"
	      "serving, drops every capability but CAP_NET_ADMIN.\n"
	      "Signals: SIGHUP reloads the --config file (a burst of them: one reload once\n"
	      "they stop for 0.2 s, at most 2 s after the first); SIGTERM/SIGINT stop.\n"
	      "Start-up errors that may pass (ENOMEM, ENOBUFS, EAGAIN) are tried again, "
	      "10 times\n"
	      "in all, backing off from 0.1 s to 10 s.\n"
	      "Exit status: 0 done; 1 runtime failure (permission, address in use, "
	      "start-up\n"
	      "still failing after its retries); 2 bad usage or configuration (a flag, the\n"
	      "--config file, the kubeconfig).\n",
    .table = flag_table};

/* Kubernetes mode (--ippool-ref without --config) or local mode, and what each refuses. */
static int
check_mode(struct cli *c)
{
	struct agent_opts *o = &c->opts;
	const char *slash;

	if (o->config_path != NULL) {
		if (c->kubeconfig != NULL || o->leader_elect || o->snapshot_path != NULL)
			return flags_error(&cli_flags,
			    "--%s is for Kubernetes mode (--ippool-ref without --config)",
			    c->kubeconfig != NULL ? "kubeconfig"
			    : o->leader_elect	  ? "leader-elect"
						  : "snapshot");
		/* local mode ignores --kubecontext: $KUBECONTEXT may be set for other tools */
		return 0;
	}
	if (o->ippool_ref == NULL)
		return flags_error(&cli_flags, "--config FILE (local mode) or --ippool-ref NS/NAME "
					       "(Kubernetes mode) is required (try --help)");
	if (o->dynamic || o->lease_path != NULL)
		return flags_error(&cli_flags, "--dynamic and --lease-file are for local mode "
					       "(--config); in Kubernetes mode the bindings come "
					       "from the IPPool");
	slash = strchr(o->ippool_ref, '/');
	if (slash == NULL || slash == o->ippool_ref || slash[1] == '\0' ||
	    strchr(slash + 1, '/') != NULL)
		return flags_error(
		    &cli_flags, "--ippool-ref: \"%s\" is not NAMESPACE/NAME", o->ippool_ref);
	/* Kubernetes mode: the agent always sets serverIP/prefix on its interface */
	o->kube = true;
	o->kubeconfig = c->kubeconfig;
	o->kubecontext = c->kubecontext;
	o->dry_run = c->dry;
	o->assign_server_ip = true;
	o->drop_capabilities = true;
	return 0;
}

/* --leader-elect: the durations' order, and the Lease's and the identity's defaults. */
static int
check_leader(struct cli *c)
{
	struct agent_opts *o = &c->opts;
	const char *env, *slash = strchr(o->ippool_ref, '/');

	if (o->lease_duration_usec < 1000000 || o->renew_deadline_usec >= o->lease_duration_usec ||
	    o->retry_period_usec >= o->renew_deadline_usec)
		return flags_error(&cli_flags,
		    "--leader-elect: need --retry-period < --renew-deadline < "
		    "--lease-duration and --lease-duration >= 1 (got %.3f, %.3f, "
		    "%.3f)",
		    (double)o->retry_period_usec / 1e6, (double)o->renew_deadline_usec / 1e6,
		    (double)o->lease_duration_usec / 1e6);
	snprintf(
	    c->pool_ns, sizeof(c->pool_ns), "%.*s", (int)(slash - o->ippool_ref), o->ippool_ref);
	if (o->lease_ns == NULL)
		o->lease_ns = (env = getenv("POD_NAMESPACE")) != NULL && *env ? env : c->pool_ns;
	if (o->lease_name == NULL) {
		if ((size_t)snprintf(c->lease_name, sizeof(c->lease_name), "vm-dhcp-agent-%s-%s",
			c->pool_ns, slash + 1) >= sizeof(c->lease_name))
			return flags_error(&cli_flags,
			    "--leader-elect: the default Lease name for %s is too "
			    "long; give --lease-name",
			    o->ippool_ref);
		o->lease_name = c->lease_name;
	}
	if (o->identity == NULL) {
		if ((env = getenv("POD_NAME")) != NULL && *env)
			snprintf(c->identity, sizeof(c->identity), "%s", env);
		else if (gethostname(c->identity, sizeof(c->identity) - 1) < 0 || !c->identity[0])
			snprintf(
			    c->identity, sizeof(c->identity), "vm-dhcp-agent-%ld", (long)getpid());
		c->identity[sizeof(c->identity) - 1] = '\0';
		o->identity = c->identity;
	}
	return 0;
}

/* The flags that need --dynamic. */
static int
check_dynamic(const struct cli *c)
{
	const struct agent_opts *o = &c->opts;

	if (o->lease_path != NULL && !o->dynamic)
		return flags_error(&cli_flags, "--lease-file needs --dynamic (static bindings come "
					       "from --config)");
	if (c->offer_flags && !o->dynamic)
		return flags_error(&cli_flags,
		    "--offer-hold and --max-pending-offers need --dynamic (static "
		    "bindings are offered as they are)");
	if (o->lease_grace_s != AGENT_DEFAULT && !o->dynamic)
		return flags_error(&cli_flags, "--lease-grace needs --dynamic (static bindings do "
					       "not expire)");
	return 0;
}

int
cli_parse(int argc, char **argv, const char *version, struct cli **ret)
{
	struct cli *c = &cli;
	struct agent_opts *o = &c->opts;
	int next, r;

	*c = (struct cli){
	    .opts =
		{
		    .ifname = "eth1",
		    .lease_duration_usec = 2000000,
		    .renew_deadline_usec = 1500000,
		    .retry_period_usec = 300000,
		},
	    .level = LOG_LEVEL_INFO,
	    .format = LOG_FORMAT_TEXT,
	    .grace = AGENT_DEFAULT,
	    .hold = AGENT_DECLINE_HOLD_DEFAULT,
	    .log_dhcp = AGENT_LOG_DHCP_ALL,
	};
	*ret = c;
	cli_flags.version = version;
	if ((r = flags_parse(&cli_flags, argc, argv, &next)) != 0)
		return r;
	o->lease_grace_s = (uint32_t)c->grace;
	o->decline_hold_s = (uint32_t)c->hold;
	o->offer_hold_s = (uint32_t)c->offer_hold;
	o->max_offers = (uint32_t)c->max_offers;
	o->log_dhcp = (enum agent_log_dhcp)c->log_dhcp;
	if (next < argc)
		return flags_error(
		    &cli_flags, "unexpected argument \"%s\" (try --help)", argv[next]);
	if (o->dump_api && o->listen == NULL)
		return flags_error(&cli_flags,
		    "--enable-cache-dump-api needs --listen (the endpoint "
		    "that serves /leases)");
	if ((r = check_mode(c)) < 0)
		return r;
	if ((c->debug || c->trace) && !c->level_given)
		c->level = LOG_LEVEL_DEBUG;
	if (c->ha_flags && !o->leader_elect)
		return flags_error(&cli_flags,
		    "--lease-name, --lease-namespace, --identity, "
		    "--lease-duration, --renew-deadline and --retry-period "
		    "need --leader-elect");
	if (o->leader_elect && (r = check_leader(c)) < 0)
		return r;
	return check_dynamic(c);
}
