/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vm-dhcp-agent: answers DHCPv4 for one IPPool on one L2 interface.
 * One event_base, one thread: DHCP sockets, netlink link events, HTTP, signals.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


#include <event2/event.h>

#include "agent/agent.h"
#include "lib/log.h"
#include "lib/util.h"

#ifndef VMDHCP_VERSION
#define VMDHCP_VERSION "0.1.0"
#endif
#ifndef VMDHCP_REVISION
#define VMDHCP_REVISION "unknown"
#endif

#define EXIT_USAGE 2

enum {
	OPT_CONFIG = 256,
	OPT_INTERFACE,
	OPT_DYNAMIC,
	OPT_LEASE_FILE,
	OPT_LEASE_GRACE,
	OPT_DECLINE_HOLD,
	OPT_LISTEN,
	OPT_ASSIGN,
	OPT_DRY_RUN,
	OPT_LOG_LEVEL,
	OPT_LOG_FORMAT,
	OPT_LOG_DHCP,
	OPT_IPPOOL_REF,
	OPT_KUBECONFIG,
	OPT_DROP_CAPS,
	OPT_LEADER_ELECT,
	OPT_LEASE_NAME,
	OPT_LEASE_NAMESPACE,
	OPT_IDENTITY,
	OPT_LEASE_DURATION,
	OPT_RENEW_DEADLINE,
	OPT_RETRY_PERIOD,
	OPT_SNAPSHOT,
	OPT_HELP,
	OPT_VERSION,
};

static const struct flag {
	struct option opt;
	const char *arg;
	const char *help;
} flags[] = {
    {{"config", required_argument, NULL, OPT_CONFIG}, "FILE",
	"local mode: IPPool and VirtualMachineNetworkConfig YAML documents"},
    {{"interface", required_argument, NULL, OPT_INTERFACE}, "IF",
	"interface to serve (default eth1)"},
    {{"dynamic", no_argument, NULL, OPT_DYNAMIC}, NULL,
	"local mode: also serve unknown MACs from the pool range (sticky per MAC)"},
    {{"lease-file", required_argument, NULL, OPT_LEASE_FILE}, "FILE",
	"with --dynamic: where leases are kept across restarts (default: memory only)"},
    {{"lease-grace", required_argument, NULL, OPT_LEASE_GRACE}, "SECONDS",
	"with --dynamic: a lease not renewed for the lease time plus this is reclaimed "
	"(default: half the lease time)"},
    {{"decline-hold", required_argument, NULL, OPT_DECLINE_HOLD}, "SECONDS",
	"a DHCPDECLINEd address is not offered again for this long (default 86400)"},
    {{"listen", required_argument, NULL, OPT_LISTEN}, "ADDR",
	"HTTP /healthz /readyz /metrics on HOST:PORT (default: off); never an address of the "
	"served interface; Kubernetes mode: not :PORT either (--listen $(POD_IP):8080)"},
    {{"assign-server-ip", no_argument, NULL, OPT_ASSIGN}, NULL,
	"add the pool's serverIP/prefix to the interface (netlink)"},
    {{"dry-run", no_argument, NULL, OPT_DRY_RUN}, NULL,
	"local mode: check the file, print a summary, exit; Kubernetes mode: follow the pool "
	"without sockets or netlink"},
    {{"log-level", required_argument, NULL, OPT_LOG_LEVEL}, "LEVEL",
	"error, warn, info (default) or debug"},
    {{"log-format", required_argument, NULL, OPT_LOG_FORMAT}, "FORMAT",
	"text (default) or json: one object per line with ts, level, msg and the line's keys"},
    {{"log-dhcp", required_argument, NULL, OPT_LOG_DHCP}, "WHAT",
	"DHCP decision lines at info level (rate-limited): all (default), drops (dropped or "
	"NAKed requests only) or none"},
    {{"ippool-ref", required_argument, NULL, OPT_IPPOOL_REF}, "NS/NAME",
	"the IPPool to serve: without --config, watched through the API server (Kubernetes "
	"mode); with it, picks one when the file has several"},
    {{"kubeconfig", required_argument, NULL, OPT_KUBECONFIG}, "FILE",
	"Kubernetes mode: kubeconfig file (default $KUBECONFIG, else in-cluster)"},
    {{"drop-capabilities", no_argument, NULL, OPT_DROP_CAPS}, NULL,
	"local mode: once serving, drop every capability but CAP_NET_ADMIN (as Kubernetes "
	"mode always does); the interface can then not be re-created under the agent"},
    {{"leader-elect", no_argument, NULL, OPT_LEADER_ELECT}, NULL,
	"Kubernetes mode: replicas of the pool elect the active one through a Lease; only it "
	"holds the serverIP and answers, the others stand by with their tables synced"},
    {{"lease-name", required_argument, NULL, OPT_LEASE_NAME}, "NAME",
	"with --leader-elect: the Lease (default vm-dhcp-agent-NS-NAME of the pool)"},
    {{"lease-namespace", required_argument, NULL, OPT_LEASE_NAMESPACE}, "NS",
	"with --leader-elect: the Lease's namespace (default $POD_NAMESPACE, else the pool's)"},
    {{"identity", required_argument, NULL, OPT_IDENTITY}, "ID",
	"with --leader-elect: this replica's name in the Lease (default $POD_NAME, else the "
	"host name)"},
    {{"lease-duration", required_argument, NULL, OPT_LEASE_DURATION}, "SECONDS",
	"with --leader-elect: a standby takes over this long after the active one's last "
	"renewal it saw (default 2; whole seconds in the Lease)"},
    {{"renew-deadline", required_argument, NULL, OPT_RENEW_DEADLINE}, "SECONDS",
	"with --leader-elect: the active one stops answering when it could not renew for this "
	"long (default 1.5; under --lease-duration)"},
    {{"retry-period", required_argument, NULL, OPT_RETRY_PERIOD}, "SECONDS",
	"with --leader-elect: how often the Lease is renewed or tried (default 0.3; under "
	"--renew-deadline)"},
    {{"snapshot", required_argument, NULL, OPT_SNAPSHOT}, "FILE",
	"Kubernetes mode: keep a snapshot of the table in FILE and, at start, serve from it "
	"until synced with the API server (warm start)"},
    {{"help", no_argument, NULL, OPT_HELP}, NULL, "this text"},
    {{"version", no_argument, NULL, OPT_VERSION}, NULL, "print the version"},
};

static void
usage(FILE *f)
{
	fprintf(f, "usage: vm-dhcp-agent --config FILE [--interface IF] [options]\n"
		   "       vm-dhcp-agent --ippool-ref NS/NAME [--kubeconfig FILE] [--interface IF] "
		   "[options]\n\n");
	for (size_t i = 0; i < ELEMENTSOF(flags); i++) {
		char left[64];
		snprintf(left, sizeof(left), "--%s%s%s", flags[i].opt.name, flags[i].arg ? " " : "",
		    flags[i].arg ? flags[i].arg : "");
		fprintf(f, "  %-26s %s\n", left, flags[i].help);
	}
	fprintf(f,
	    "\nKubernetes mode sets the pool's serverIP/prefix on the interface itself and, once\n"
	    "serving, drops every capability but CAP_NET_ADMIN.\n"
	    "Signals: SIGHUP reloads the --config file; SIGTERM/SIGINT stop.\n"
	    "Exit status: 0 ok, 1 runtime failure, 2 bad usage or configuration.\n");
}

static void
dry_run(const struct agent_config *c)
{
	const struct dhcp_options *o = &c->opts;
	char a[IPV4_STRLEN], b[IPV4_STRLEN];

	printf("pool        %s/%s (network %s)%s\n", c->pool_ns, c->pool_name, c->network,
	    c->paused ? " paused" : "");
	ipv4_format(c->cidr, a);
	printf("cidr        %s/%u\n", a, c->prefix);
	ipv4_format(o->server_ip, a);
	printf("server      %s\n", a);
	ipv4_format(c->pool_start, a);
	ipv4_format(c->pool_end, b);
	printf("range       %s - %s (%zu excluded)\n", a, b, c->n_exclude);
	if (o->router) {
		ipv4_format(o->router, a);
		printf("router      %s\n", a);
	}
	for (size_t i = 0; i < o->n_dns; i++) {
		ipv4_format(o->dns[i], a);
		printf("dns         %s\n", a);
	}
	for (size_t i = 0; i < o->n_ntp; i++) {
		ipv4_format(o->ntp[i], a);
		printf("ntp         %s\n", a);
	}
	if (o->domain_name[0])
		printf("domain      %s\n", o->domain_name);
	for (size_t i = 0; i < o->n_search; i++)
		printf("search      %s\n", o->search[i]);
	if (o->mtu)
		printf("mtu         %u\n", o->mtu);
	for (size_t i = 0; i < o->n_routes; i++) {
		ipv4_format(o->routes[i].destination, a);
		ipv4_format(o->routes[i].gateway, b);
		printf("route       %s/%u via %s\n", a, o->routes[i].prefix, b);
	}
	printf("lease time  %u s\n", o->lease_time);
	printf("bindings    %zu\n", c->n_bindings);
	for (size_t i = 0; i < c->n_bindings && i < 20; i++) {
		char m[MAC_STRLEN];
		const char *h = agent_config_hostname(c, &c->bindings[i]);
		mac_format(c->bindings[i].mac, m);
		ipv4_format(c->bindings[i].ip, a);
		printf("  %s %-15s %s\n", m, a, h ? h : "");
	}
	if (c->n_bindings > 20)
		printf("  ... %zu more\n", c->n_bindings - 20);
}

static struct event_base *loop_base;

static void
stopped(void *userdata)
{
	(void)userdata;
	event_base_loopbreak(loop_base);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct agent *a = arg;
	(void)what;

	if (sig == SIGHUP) {
		log_info("SIGHUP: reloading the configuration");
		(void)agent_reload(a);
		return;
	}
	log_info("%s: stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	/* a second signal stops at once; the first hands the Lease over first */
	if (agent_stop(a, stopped, NULL) < 0)
		event_base_loopbreak(loop_base);
}

int
main(int argc, char **argv)
{
	struct option longopts[ELEMENTSOF(flags) + 1];
	struct agent_opts opts = {
	    .ifname = "eth1",
	    .lease_grace_s = AGENT_DEFAULT,
	    .decline_hold_s = AGENT_DECLINE_HOLD_DEFAULT,
	    .lease_duration_usec = 2000000,
	    .renew_deadline_usec = 1500000,
	    .retry_period_usec = 300000,
	};
	bool ha_flags = false;
	struct agent_config *cfg = NULL;
	struct event_base *base = NULL;
	struct agent *agent = NULL;
	struct event *sigs[3] = {NULL};
	static const int signums[3] = {SIGHUP, SIGTERM, SIGINT};
	enum log_level level = LOG_LEVEL_INFO;
	const char *kubeconfig = NULL;
	char lease_name[254], identity[256], pool_ns[254];
	bool dry = false;
	char err[AGENT_ERR_MAX];
	int c, r, status = 0;

	log_init("vm-dhcp-agent", LOG_LEVEL_INFO);
	for (size_t i = 0; i < ELEMENTSOF(flags); i++)
		longopts[i] = flags[i].opt;
	memset(&longopts[ELEMENTSOF(flags)], 0, sizeof(longopts[0]));
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_CONFIG:
			opts.config_path = optarg;
			break;
		case OPT_INTERFACE:
			opts.ifname = optarg;
			break;
		case OPT_DYNAMIC:
			opts.dynamic = true;
			break;
		case OPT_LEASE_FILE:
			opts.lease_path = optarg;
			break;
		case OPT_LEASE_GRACE:
		case OPT_DECLINE_HOLD: {
			uint64_t v;
			/* AGENT_DEFAULT (UINT32_MAX) is not a value */
			if (parse_uint(optarg, 0, UINT32_MAX - 1, &v) < 0) {
				log_error("--%s: \"%s\" is not a number of seconds (0 to %u)",
				    c == OPT_LEASE_GRACE ? "lease-grace" : "decline-hold", optarg,
				    UINT32_MAX - 1);
				return EXIT_USAGE;
			}
			if (c == OPT_LEASE_GRACE)
				opts.lease_grace_s = (uint32_t)v;
			else
				opts.decline_hold_s = (uint32_t)v;
			break;
		}
		case OPT_LISTEN:
			opts.listen = optarg;
			break;
		case OPT_ASSIGN:
			opts.assign_server_ip = true;
			break;
		case OPT_DRY_RUN:
			dry = true;
			break;
		case OPT_IPPOOL_REF:
			opts.ippool_ref = optarg;
			break;
		case OPT_KUBECONFIG:
			kubeconfig = optarg;
			break;
		case OPT_DROP_CAPS:
			opts.drop_capabilities = true;
			break;
		case OPT_LEADER_ELECT:
			opts.leader_elect = true;
			break;
		case OPT_LEASE_NAME:
			opts.lease_name = optarg;
			ha_flags = true;
			break;
		case OPT_LEASE_NAMESPACE:
			opts.lease_ns = optarg;
			ha_flags = true;
			break;
		case OPT_IDENTITY:
			opts.identity = optarg;
			ha_flags = true;
			break;
		case OPT_LEASE_DURATION:
		case OPT_RENEW_DEADLINE:
		case OPT_RETRY_PERIOD: {
			uint64_t *v = c == OPT_LEASE_DURATION	? &opts.lease_duration_usec
				      : c == OPT_RENEW_DEADLINE ? &opts.renew_deadline_usec
								: &opts.retry_period_usec;
			if (parse_seconds_usec(optarg, 6, 3600 * UINT64_C(1000000), v) < 0 ||
			    *v == 0) {
				log_error("--%s: \"%s\" is not a number of seconds (e.g. 2 or 0.3, "
					  "at most 3600)",
				    c == OPT_LEASE_DURATION   ? "lease-duration"
				    : c == OPT_RENEW_DEADLINE ? "renew-deadline"
							      : "retry-period",
				    optarg);
				return EXIT_USAGE;
			}
			ha_flags = true;
			break;
		}
		case OPT_SNAPSHOT:
			opts.snapshot_path = optarg;
			break;
		case OPT_LOG_FORMAT: {
			enum log_format f;

			if (log_format_from_string(optarg, &f) < 0) {
				log_error("--log-format: \"%s\" is not text or json", optarg);
				return EXIT_USAGE;
			}
			log_set_format(f);
			break;
		}
		case OPT_LOG_DHCP:
			if (agent_log_dhcp_from_string(optarg, &opts.log_dhcp) < 0) {
				log_error("--log-dhcp: \"%s\" is not all, drops or none", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_LOG_LEVEL:
			if (log_level_from_string(optarg, &level) < 0) {
				log_error("--log-level: \"%s\" is not error, warn, info or debug",
				    optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
		case OPT_HELP:
			usage(stdout);
			return 0;
		case OPT_VERSION:
			printf("vm-dhcp-agent %s\n", VMDHCP_VERSION);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	log_set_level(level);
	if (optind < argc) {
		log_error("unexpected argument \"%s\" (try --help)", argv[optind]);
		return EXIT_USAGE;
	}
	if (opts.config_path == NULL) {
		if (opts.ippool_ref == NULL) {
			log_error("--config FILE (local mode) or --ippool-ref NS/NAME (Kubernetes "
				  "mode) is required (try --help)");
			return EXIT_USAGE;
		}
		if (opts.dynamic || opts.lease_path != NULL) {
			log_error("--dynamic and --lease-file are for local mode (--config); in "
				  "Kubernetes mode the bindings come from the IPPool");
			return EXIT_USAGE;
		}
		{
			const char *slash = strchr(opts.ippool_ref, '/');
			if (slash == NULL || slash == opts.ippool_ref || slash[1] == '\0' ||
			    strchr(slash + 1, '/') != NULL) {
				log_error("--ippool-ref \"%s\": expected NAMESPACE/NAME",
				    opts.ippool_ref);
				return EXIT_USAGE;
			}
		}
		/* Kubernetes mode: the agent always sets serverIP/prefix on its interface */
		opts.kube = true;
		opts.kubeconfig = kubeconfig;
		opts.dry_run = dry;
		opts.assign_server_ip = true;
		opts.drop_capabilities = true;
	} else if (kubeconfig != NULL || opts.leader_elect || opts.snapshot_path != NULL) {
		log_error("--%s is for Kubernetes mode (--ippool-ref without --config)",
		    kubeconfig != NULL	? "kubeconfig"
		    : opts.leader_elect ? "leader-elect"
					: "snapshot");
		return EXIT_USAGE;
	}
	if (ha_flags && !opts.leader_elect) {
		log_error("--lease-name, --lease-namespace, --identity, --lease-duration, "
			  "--renew-deadline and --retry-period need --leader-elect");
		return EXIT_USAGE;
	}
	if (opts.leader_elect) {
		const char *env, *slash = strchr(opts.ippool_ref, '/');

		if (opts.lease_duration_usec < 1000000 ||
		    opts.renew_deadline_usec >= opts.lease_duration_usec ||
		    opts.retry_period_usec >= opts.renew_deadline_usec) {
			log_error(
			    "--leader-elect: need --retry-period < --renew-deadline < "
			    "--lease-duration and --lease-duration >= 1 (got %.3f, %.3f, %.3f)",
			    (double)opts.retry_period_usec / 1e6,
			    (double)opts.renew_deadline_usec / 1e6,
			    (double)opts.lease_duration_usec / 1e6);
			return EXIT_USAGE;
		}
		snprintf(pool_ns, sizeof(pool_ns), "%.*s", (int)(slash - opts.ippool_ref),
		    opts.ippool_ref);
		if (opts.lease_ns == NULL)
			opts.lease_ns =
			    (env = getenv("POD_NAMESPACE")) != NULL && *env ? env : pool_ns;
		if (opts.lease_name == NULL) {
			if ((size_t)snprintf(lease_name, sizeof(lease_name), "vm-dhcp-agent-%s-%s",
				pool_ns, slash + 1) >= sizeof(lease_name)) {
				log_error(
				    "--leader-elect: the default Lease name for %s is too long; "
				    "give --lease-name",
				    opts.ippool_ref);
				return EXIT_USAGE;
			}
			opts.lease_name = lease_name;
		}
		if (opts.identity == NULL) {
			if ((env = getenv("POD_NAME")) != NULL && *env)
				snprintf(identity, sizeof(identity), "%s", env);
			else if (gethostname(identity, sizeof(identity) - 1) < 0 || !identity[0])
				snprintf(identity, sizeof(identity), "vm-dhcp-agent-%ld",
				    (long)getpid());
			identity[sizeof(identity) - 1] = '\0';
			opts.identity = identity;
		}
	}
	if (opts.lease_path != NULL && !opts.dynamic) {
		log_error("--lease-file needs --dynamic (static bindings come from --config)");
		return EXIT_USAGE;
	}
	if (opts.lease_grace_s != AGENT_DEFAULT && !opts.dynamic) {
		log_error("--lease-grace needs --dynamic (static bindings do not expire)");
		return EXIT_USAGE;
	}

	if (!opts.kube &&
	    (r = agent_config_load(opts.config_path, opts.ippool_ref, &cfg, err, sizeof(err))) < 0) {
		log_error("%s", err);
		return EXIT_USAGE;
	}
	if (dry && !opts.kube) {
		dry_run(cfg);
		agent_config_free(cfg);
		return 0;
	}

	/*
	 * File capabilities set without the effective bit ("+p"): make them effective. The
	 * agent drops them once its sockets are open (serve.c).
	 */
	{
		uint64_t raised;
		char names[96];
		if ((r = agent_caps_raise(&raised)) < 0)
			log_warn(
			    "cannot make the permitted capabilities effective: %s", strerror(-r));
		else if (raised != 0)
			log_debug("capabilities made effective: %s",
			    agent_caps_format(raised, 4, names, sizeof(names)));
	}
	/* a peer closing our HTTP connection must not kill us */
	signal(SIGPIPE, SIG_IGN);
	base = event_base_new();
	if (base == NULL) {
		log_error("cannot create the event loop");
		agent_config_free(cfg);
		return 1;
	}
	loop_base = base;
	opts.version = VMDHCP_VERSION;
	opts.revision = VMDHCP_REVISION;
	log_kv(LOG_LEVEL_INFO, LOG_KV("version", VMDHCP_VERSION, "revision", VMDHCP_REVISION),
	    "starting");
	r = agent_new(base, &opts, cfg, &agent, err, sizeof(err));
	if (r < 0) {
		log_error("%s", err);
		event_base_free(base);
		return r == -EINVAL ? EXIT_USAGE : 1;
	}
	for (size_t i = 0; i < ELEMENTSOF(sigs); i++) {
		sigs[i] = evsignal_new(base, signums[i], signal_cb, agent);
		if (sigs[i] == NULL || event_add(sigs[i], NULL) < 0) {
			log_error("cannot install signal handlers");
			status = 1;
			goto out;
		}
	}
	if (event_base_dispatch(base) < 0) {
		log_error("event loop failed");
		status = 1;
	}
	if (agent_exit_status(agent) != 0)
		status = agent_exit_status(agent);
out:
	for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
		if (sigs[i] != NULL)
			event_free(sigs[i]);
	agent_free(agent);
	event_base_free(base);
	libevent_global_shutdown();
	return status;
}
