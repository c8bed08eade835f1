/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vm-dhcp-agent: answers DHCPv4 for one IPPool on one L2 interface.
 * One event_base, one thread: DHCP sockets, netlink link events, HTTP, signals.
 *
 * The Go project's flags and environment variables (cmd/agent/root.go) are accepted with their
 * meaning: --name ($VM_DHCP_AGENT_NAME), --kubeconfig ($KUBECONFIG), --kubecontext
 * ($KUBECONTEXT), --dry-run, --ippool-ref ($IPPOOL_REF), --nic (= --interface), --debug and
 * --trace ($VM_DHCP_AGENT_DEBUG, $VM_DHCP_AGENT_TRACE).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "agent/agent.h"
#include "lib/clock.h"
#include "lib/flags.h"
#include "lib/log.h"
#include "lib/util.h"

#ifndef VMDHCP_VERSION
#define VMDHCP_VERSION "0.1.0"
#endif
#ifndef VMDHCP_REVISION
#define VMDHCP_REVISION "unknown"
#endif

/*
 * Exit status, the same in vm-dhcp-controller (README "Exit status"): 0 done (--help,
 * --version, --dry-run, a stop on SIGTERM/SIGINT); 1 a runtime failure (the system refused
 * something: permission, an address in use, the event loop, start-up still failing after its
 * retries); 2 bad usage or configuration (a flag, the --config file, the kubeconfig).
 */
#define EXIT_RUNTIME 1
#define EXIT_USAGE FLAGS_EXIT_USAGE

/*
 * Start-up errors that may pass (the kernel or the allocator short for a moment) are tried
 * again, START_ATTEMPTS times in all, after 0.1 s, doubling up to 10 s; the others end the
 * start at once.
 */
#define START_ATTEMPTS 10
#define START_RETRY_FIRST_USEC (100 * UINT64_C(1000))
#define START_RETRY_MAX_USEC (10 * USEC_PER_SEC)

/* What the command line gives: the agent's options and what main() does with the rest. */
struct cli {
	struct agent_opts opts;
	const char *kubeconfig;
	const char *kubecontext;
	const char *name; /* --name: this instance, in the logs */
	bool dry;
	bool debug, trace, level_given;
	enum log_level level;
	enum log_format format;
	char lease_name[254], identity[256], pool_ns[254]; /* --leader-elect's defaults */
};

static const char *const log_dhcp_choices[] = {"all", "drops", "none", NULL};

/*
 * The flags and the checks across them, as flags_parse(): 0 when the agent goes on; 1 after
 * --help or --version; -EINVAL after one line on stderr; -ENOMEM.
 */
static int
parse_flags(int argc, char **argv, struct cli *c)
{
	struct agent_opts *o = &c->opts;
	uint64_t grace = AGENT_DEFAULT, hold = AGENT_DECLINE_HOLD_DEFAULT;
	uint64_t offer_hold = 0, max_offers = 0;
	bool offer_flags = false;
	int log_dhcp = AGENT_LOG_DHCP_ALL;
	bool ha_flags = false;
	const struct flag table[] = {
	    {.name = "config",
		.type = FLAG_STRING,
		.dst = &o->config_path,
		.arg = "FILE",
		.help = "local mode: IPPool and VirtualMachineNetworkConfig YAML documents"},
	    {.name = "interface",
		.type = FLAG_STRING,
		.dst = &o->ifname,
		.arg = "IF",
		.help = "interface to serve (default eth1)",
		.alias = "nic"},
	    {.name = "dynamic",
		.type = FLAG_BOOL,
		.dst = &o->dynamic,
		.help = "local mode: also serve unknown MACs from the pool range\n"
			"(sticky per MAC)"},
	    {.name = "lease-file",
		.type = FLAG_STRING,
		.dst = &o->lease_path,
		.arg = "FILE",
		.help = "with --dynamic: where leases are kept across restarts\n"
			"(default: memory only)"},
	    /* AGENT_DEFAULT (UINT32_MAX) is not a value */
	    {.name = "lease-grace",
		.type = FLAG_UINT,
		.dst = &grace,
		.arg = "SECONDS",
		.help = "with --dynamic: a lease not renewed for the lease time plus this\n"
			"is reclaimed (default: half the lease time)",
		.max = UINT32_MAX - 1,
		.unit = "seconds"},
	    {.name = "decline-hold",
		.type = FLAG_UINT,
		.dst = &hold,
		.arg = "SECONDS",
		.help = "a DHCPDECLINEd address is not offered again for this long\n"
			"(default 86400)",
		.max = UINT32_MAX - 1,
		.unit = "seconds"},
	    {.name = "offer-hold",
		.type = FLAG_UINT,
		.dst = &offer_hold,
		.arg = "SECONDS",
		.help = "with --dynamic: an address offered to a MAC without a lease is held\n"
			"this long for its REQUEST, which alone makes a lease (default 10)",
		.min = 1,
		.max = 3600,
		.unit = "seconds",
		.given = &offer_flags},
	    {.name = "max-pending-offers",
		.type = FLAG_UINT,
		.dst = &max_offers,
		.arg = "N",
		.help = "with --dynamic: at most N offers held at once; over it DISCOVERs\n"
			"from new MACs are dropped (default: half the range, at most 4096)",
		.min = 1,
		.max = 1 << 24,
		.unit = "offers",
		.given = &offer_flags},
	    {.name = "listen",
		.type = FLAG_STRING,
		.dst = &o->listen,
		.arg = "ADDR",
		.help = "HTTP /healthz /readyz /metrics on HOST:PORT (default: off); never\n"
			"an address of the served interface; Kubernetes mode: not :PORT\n"
			"either (--listen $(POD_IP):8080)"},
	    {.name = "enable-cache-dump-api",
		.type = FLAG_BOOL,
		.dst = &o->dump_api,
		.help = "also serve GET /leases on --listen: the bindings served, as the Go\n"
			"project's debug endpoint (default off)"},
	    {.name = "assign-server-ip",
		.type = FLAG_BOOL,
		.dst = &o->assign_server_ip,
		.help = "add the pool's serverIP/prefix to the interface (netlink)"},
	    {.name = "dry-run",
		.type = FLAG_BOOL,
		.dst = &c->dry,
		.help = "local mode: check the file, print a summary, exit; Kubernetes\n"
			"mode: follow the pool without sockets or netlink"},
	    {.name = "log-level",
		.type = FLAG_FUNC,
		.dst = &c->level,
		.arg = "LEVEL",
		.help = "error, warn, info (default) or debug",
		.parse = log_level_flag,
		.given = &c->level_given},
	    {.name = "debug",
		.type = FLAG_BOOL,
		.dst = &c->debug,
		.help = "--log-level debug, unless --log-level is given",
		.env = "VM_DHCP_AGENT_DEBUG"},
	    {.name = "trace",
		.type = FLAG_BOOL,
		.dst = &c->trace,
		.help = "the same as --debug (no finer level here)",
		.env = "VM_DHCP_AGENT_TRACE"},
	    {.name = "log-format",
		.type = FLAG_FUNC,
		.dst = &c->format,
		.arg = "FORMAT",
		.help = "text (default) or json: one object per line with ts, level, msg\n"
			"and the line's keys",
		.parse = log_format_flag},
	    {.name = "log-dhcp",
		.type = FLAG_CHOICE,
		.dst = &log_dhcp,
		.arg = "WHAT",
		.help = "DHCP decision lines at info level (rate-limited): all (default),\n"
			"drops (dropped or NAKed requests only) or none",
		.choices = log_dhcp_choices},
	    {.name = "ippool-ref",
		.type = FLAG_STRING,
		.dst = &o->ippool_ref,
		.arg = "NS/NAME",
		.help = "the IPPool to serve: without --config, watched through the API\n"
			"server (Kubernetes mode); with it, picks one when the file has\n"
			"several",
		.env = "IPPOOL_REF"},
	    {.name = "kubeconfig",
		.type = FLAG_STRING,
		.dst = &c->kubeconfig,
		.arg = "FILE",
		.help = "Kubernetes mode: kubeconfig file (default $KUBECONFIG, else\n"
			"in-cluster)"},
	    {.name = "kubecontext",
		.type = FLAG_STRING,
		.dst = &c->kubecontext,
		.arg = "NAME",
		.help = "Kubernetes mode: the kubeconfig's context (default its\n"
			"current-context; in-cluster: ignored)",
		.env = "KUBECONTEXT"},
	    {.name = "name",
		.type = FLAG_STRING,
		.dst = &c->name,
		.arg = "NAME",
		.help = "name of this agent instance, in the logs",
		.env = "VM_DHCP_AGENT_NAME"},
	    {.name = "drop-capabilities",
		.type = FLAG_BOOL,
		.dst = &o->drop_capabilities,
		.help = "local mode: once serving, drop every capability but CAP_NET_ADMIN\n"
			"(as Kubernetes mode always does); the interface can then not be\n"
			"re-created under the agent"},
	    {.name = "leader-elect",
		.type = FLAG_BOOL,
		.dst = &o->leader_elect,
		.help = "Kubernetes mode: replicas of the pool elect the active one through\n"
			"a Lease; only it holds the serverIP and answers, the others stand\n"
			"by with their tables synced"},
	    {.name = "lease-name",
		.type = FLAG_STRING,
		.dst = &o->lease_name,
		.arg = "NAME",
		.help = "with --leader-elect: the Lease (default vm-dhcp-agent-NS-NAME of\n"
			"the pool)",
		.given = &ha_flags},
	    {.name = "lease-namespace",
		.type = FLAG_STRING,
		.dst = &o->lease_ns,
		.arg = "NS",
		.help = "with --leader-elect: the Lease's namespace (default\n"
			"$POD_NAMESPACE, else the pool's)",
		.given = &ha_flags},
	    {.name = "identity",
		.type = FLAG_STRING,
		.dst = &o->identity,
		.arg = "ID",
		.help = "with --leader-elect: this replica's name in the Lease (default\n"
			"$POD_NAME, else the host name)",
		.given = &ha_flags},
	    {.name = "lease-duration",
		.type = FLAG_SECONDS,
		.dst = &o->lease_duration_usec,
		.arg = "SECONDS",
		.help = "with --leader-elect: a standby takes over this long after the\n"
			"active one's last renewal it saw (default 2; whole seconds in the\n"
			"Lease)",
		.min = 1,
		.max = 3600 * UINT64_C(1000000),
		.given = &ha_flags},
	    {.name = "renew-deadline",
		.type = FLAG_SECONDS,
		.dst = &o->renew_deadline_usec,
		.arg = "SECONDS",
		.help = "with --leader-elect: the active one stops answering when it could\n"
			"not renew for this long (default 1.5; under --lease-duration)",
		.min = 1,
		.max = 3600 * UINT64_C(1000000),
		.given = &ha_flags},
	    {.name = "retry-period",
		.type = FLAG_SECONDS,
		.dst = &o->retry_period_usec,
		.arg = "SECONDS",
		.help = "with --leader-elect: how often the Lease is renewed or tried\n"
			"(default 0.3; under --renew-deadline)",
		.min = 1,
		.max = 3600 * UINT64_C(1000000),
		.given = &ha_flags},
	    {.name = "snapshot",
		.type = FLAG_STRING,
		.dst = &o->snapshot_path,
		.arg = "FILE",
		.help = "Kubernetes mode: keep a snapshot of the table in FILE and, at\n"
			"start, serve from it until synced with the API server (warm start)"},
	    {.name = NULL},
	};
	const struct flags f = {.prog = "vm-dhcp-agent",
	    .synopsis = "usage: vm-dhcp-agent --config FILE [--interface IF] [options]\n"
			"       vm-dhcp-agent --ippool-ref NS/NAME [--kubeconfig FILE] "
			"[--interface IF] [options]\n\n",
	    .footer =
		"\nKubernetes mode sets the pool's serverIP/prefix on the interface itself "
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
	    .version = VMDHCP_VERSION,
	    .table = table};
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
	};
	if ((r = flags_parse(&f, argc, argv, &next)) != 0)
		return r;
	o->lease_grace_s = (uint32_t)grace;
	o->decline_hold_s = (uint32_t)hold;
	o->offer_hold_s = (uint32_t)offer_hold;
	o->max_offers = (uint32_t)max_offers;
	o->log_dhcp = (enum agent_log_dhcp)log_dhcp;
	if (next < argc)
		return flags_error(&f, "unexpected argument \"%s\" (try --help)", argv[next]);
	if (o->dump_api && o->listen == NULL)
		return flags_error(&f, "--enable-cache-dump-api needs --listen (the endpoint "
				       "that serves /leases)");
	if (o->config_path == NULL) {
		const char *slash;

		if (o->ippool_ref == NULL)
			return flags_error(&f, "--config FILE (local mode) or --ippool-ref NS/NAME "
					       "(Kubernetes mode) is required (try --help)");
		if (o->dynamic || o->lease_path != NULL)
			return flags_error(&f, "--dynamic and --lease-file are for local mode "
					       "(--config); in Kubernetes mode the bindings come "
					       "from the IPPool");
		slash = strchr(o->ippool_ref, '/');
		if (slash == NULL || slash == o->ippool_ref || slash[1] == '\0' ||
		    strchr(slash + 1, '/') != NULL)
			return flags_error(
			    &f, "--ippool-ref: \"%s\" is not NAMESPACE/NAME", o->ippool_ref);
		/* Kubernetes mode: the agent always sets serverIP/prefix on its interface */
		o->kube = true;
		o->kubeconfig = c->kubeconfig;
		o->kubecontext = c->kubecontext;
		o->dry_run = c->dry;
		o->assign_server_ip = true;
		o->drop_capabilities = true;
	} else if (c->kubeconfig != NULL || o->leader_elect || o->snapshot_path != NULL) {
		return flags_error(&f,
		    "--%s is for Kubernetes mode (--ippool-ref without --config)",
		    c->kubeconfig != NULL ? "kubeconfig"
		    : o->leader_elect	  ? "leader-elect"
					  : "snapshot");
	}
	/* local mode ignores --kubecontext: $KUBECONTEXT may be set for other tools */
	if ((c->debug || c->trace) && !c->level_given)
		c->level = LOG_LEVEL_DEBUG;
	if (ha_flags && !o->leader_elect)
		return flags_error(&f, "--lease-name, --lease-namespace, --identity, "
				       "--lease-duration, --renew-deadline and --retry-period "
				       "need --leader-elect");
	if (o->leader_elect) {
		const char *env, *slash = strchr(o->ippool_ref, '/');

		if (o->lease_duration_usec < 1000000 ||
		    o->renew_deadline_usec >= o->lease_duration_usec ||
		    o->retry_period_usec >= o->renew_deadline_usec)
			return flags_error(&f,
			    "--leader-elect: need --retry-period < --renew-deadline < "
			    "--lease-duration and --lease-duration >= 1 (got %.3f, %.3f, "
			    "%.3f)",
			    (double)o->retry_period_usec / 1e6,
			    (double)o->renew_deadline_usec / 1e6,
			    (double)o->lease_duration_usec / 1e6);
		snprintf(c->pool_ns, sizeof(c->pool_ns), "%.*s", (int)(slash - o->ippool_ref),
		    o->ippool_ref);
		if (o->lease_ns == NULL)
			o->lease_ns =
			    (env = getenv("POD_NAMESPACE")) != NULL && *env ? env : c->pool_ns;
		if (o->lease_name == NULL) {
			if ((size_t)snprintf(c->lease_name, sizeof(c->lease_name),
				"vm-dhcp-agent-%s-%s", c->pool_ns,
				slash + 1) >= sizeof(c->lease_name))
				return flags_error(&f,
				    "--leader-elect: the default Lease name for %s is too "
				    "long; give --lease-name",
				    o->ippool_ref);
			o->lease_name = c->lease_name;
		}
		if (o->identity == NULL) {
			if ((env = getenv("POD_NAME")) != NULL && *env)
				snprintf(c->identity, sizeof(c->identity), "%s", env);
			else if (gethostname(c->identity, sizeof(c->identity) - 1) < 0 ||
				 !c->identity[0])
				snprintf(c->identity, sizeof(c->identity), "vm-dhcp-agent-%ld",
				    (long)getpid());
			c->identity[sizeof(c->identity) - 1] = '\0';
			o->identity = c->identity;
		}
	}
	if (o->lease_path != NULL && !o->dynamic)
		return flags_error(&f, "--lease-file needs --dynamic (static bindings come from "
				       "--config)");
	if (offer_flags && !o->dynamic)
		return flags_error(&f,
		    "--offer-hold and --max-pending-offers need --dynamic (static "
		    "bindings are offered as they are)");
	if (o->lease_grace_s != AGENT_DEFAULT && !o->dynamic)
		return flags_error(&f, "--lease-grace needs --dynamic (static bindings do not "
				       "expire)");
	return 0;
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

/*
 * SIGHUPs are coalesced: the first of a burst arms a timer, each further one only pushes it
 * back, and the reload runs once the signals have stopped for RELOAD_QUIET_USEC, or
 * RELOAD_MAX_DELAY_USEC after the first at the latest (a steady stream still reloads). libevent
 * hands a burst to signal_cb once per signal received: each call costs a timer update, not a
 * reload, so the loop goes back to DHCP and HTTP at once. A signal that comes during a reload
 * marks the next one.
 */
#define RELOAD_QUIET_USEC (200 * UINT64_C(1000))
#define RELOAD_MAX_DELAY_USEC (2 * USEC_PER_SEC)
/*
 * A reload parses the file RELOAD_STEP_DOCS documents at a time (some milliseconds), and the
 * event loop answers DHCP and HTTP between the steps; only the last step (the pool, the
 * duplicate checks, the engine's resync) is done in one go.
 */
#define RELOAD_STEP_DOCS 128

static struct {
	struct event *ev;   /* the quiet-period timer */
	struct event *step; /* the next step of a running reload */
	struct agent *agent;
	const struct agent_opts *opts;
	struct agent_config_parser *parser; /* a reload running */
	bool pending;			    /* signals not yet reloaded */
	bool again;			    /* the timer fired while a reload was running */
	bool stopping;			    /* SIGTERM/SIGINT: no more reloads */
	uint64_t first_usec;		    /* the first signal of the pending burst */
	uint64_t signals;		    /* SIGHUPs in the pending burst */
} reload;

static void
reload_step_cb(evutil_socket_t fd, short what, void *arg)
{
	struct agent_config *cfg = NULL;
	char err[AGENT_ERR_MAX] = "";
	int r;
	(void)fd;
	(void)what;
	(void)arg;

	r = agent_config_parser_step(reload.parser, RELOAD_STEP_DOCS, &cfg, err, sizeof(err));
	if (r > 0) {
		if (event_add(reload.step, &(struct timeval){0, 0}) == 0)
			return;
		/* cannot yield: the rest at once */
		r = agent_config_parser_step(reload.parser, 0, &cfg, err, sizeof(err));
	}
	reload.parser = agent_config_parser_free(reload.parser);
	(void)agent_reload_done(reload.agent, r, cfg, err);
	if (reload.again) {
		/* signals came during this reload: the file may have changed since it was read */
		reload.again = false;
		reload.pending = true;
		reload.first_usec = clock_now_usec();
		event_active(reload.ev, EV_TIMEOUT, 0);
	}
}

static void
reload_cb(evutil_socket_t fd, short what, void *arg)
{
	uint64_t n = reload.signals;
	char err[AGENT_ERR_MAX] = "";
	int r;
	(void)fd;
	(void)what;
	(void)arg;

	if (reload.parser != NULL) {
		reload.again = true;
		return;
	}
	reload.pending = false;
	reload.signals = 0;
	if (n > 1)
		log_info("reloading the configuration (%llu SIGHUPs, one reload)",
		    (unsigned long long)n);
	else
		log_info("reloading the configuration");
	if (reload.opts->kube) {
		(void)agent_reload(reload.agent);
		return;
	}
	r = agent_config_parser_open(
	    reload.opts->config_path, reload.opts->ippool_ref, &reload.parser, err, sizeof(err));
	if (r < 0) {
		(void)agent_reload_done(reload.agent, r, NULL, err);
		return;
	}
	reload_step_cb(-1, 0, NULL);
}

static void
reload_schedule(void)
{
	uint64_t now = clock_now_usec(), at;
	struct timeval tv;

	if (!reload.pending) {
		reload.pending = true;
		reload.first_usec = now;
		log_info("SIGHUP: reloading the configuration once signals stop");
	}
	reload.signals++;
	at = MIN(now + RELOAD_QUIET_USEC, reload.first_usec + RELOAD_MAX_DELAY_USEC);
	at = at > now ? at - now : 0;
	tv = (struct timeval){(time_t)(at / USEC_PER_SEC), (suseconds_t)(at % USEC_PER_SEC)};
	if (evtimer_add(reload.ev, &tv) < 0) {
		log_error("SIGHUP: cannot arm the reload timer; reloading now");
		reload_cb(-1, 0, NULL);
	}
}

/* A stop: the pending and running reloads are dropped. */
static void
reload_cancel(void)
{
	if (reload.ev != NULL)
		evtimer_del(reload.ev);
	if (reload.step != NULL)
		evtimer_del(reload.step);
	reload.parser = agent_config_parser_free(reload.parser);
	reload.pending = reload.again = false;
	reload.stopping = true;
}

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
		if (!reload.stopping)
			reload_schedule();
		return;
	}
	reload_cancel();
	log_info("%s: stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	/* a second signal stops at once; the first hands the Lease over first */
	if (agent_stop(a, stopped, NULL) < 0)
		event_base_loopbreak(loop_base);
}

static bool
start_error_transient(int r)
{
	return r == -ENOMEM || r == -ENOBUFS || r == -EAGAIN;
}

/*
 * After a failed start-up attempt: true when another is worth it (the error may pass and
 * attempts are left), after one log line and the back-off; false after one error line.
 */
static bool
start_retry(int r, unsigned attempt, const char *err)
{
	uint64_t delay = START_RETRY_FIRST_USEC;
	struct timespec ts;

	if (!start_error_transient(r) || attempt >= START_ATTEMPTS) {
		if (start_error_transient(r))
			log_error("%s; giving up after %u attempts", err, attempt);
		else
			log_error("%s", err);
		return false;
	}
	for (unsigned i = 1; i < attempt && delay < START_RETRY_MAX_USEC; i++)
		delay *= 2;
	delay = MIN(delay, START_RETRY_MAX_USEC);
	log_warn("%s; may pass: trying again in %.1f s (attempt %u of %u)", err,
	    (double)delay / USEC_PER_SEC, attempt + 1, START_ATTEMPTS);
	ts = (struct timespec){(time_t)(delay / USEC_PER_SEC), (long)(delay % USEC_PER_SEC) * 1000};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return true;
}

/* Local mode: the --config file, read again while its errors may pass. */
static int
load_config(const struct agent_opts *opts, struct agent_config **cfg, unsigned *attempt)
{
	char err[AGENT_ERR_MAX];
	int r;

	while ((r = agent_config_load(opts->config_path, opts->ippool_ref, cfg, err, sizeof(err))) <
	       0) {
		if (!start_retry(r, ++*attempt, err))
			return start_error_transient(r) ? EXIT_RUNTIME : EXIT_USAGE;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct cli cli;
	struct agent_opts *opts = &cli.opts;
	struct agent_config *cfg = NULL;
	struct event_base *base = NULL;
	struct agent *agent = NULL;
	struct event *sigs[3] = {NULL};
	static const int signums[3] = {SIGHUP, SIGTERM, SIGINT};
	char err[AGENT_ERR_MAX];
	unsigned attempt = 0;
	int r, status = 0;

	log_init("vm-dhcp-agent", LOG_LEVEL_INFO);
	if ((r = parse_flags(argc, argv, &cli)) != 0)
		return flags_exit_status(r);
	log_set_level(cli.level);
	log_set_format(cli.format);

	if (!opts->kube && (r = load_config(opts, &cfg, &attempt)) != 0)
		return r;
	if (cli.dry && !opts->kube) {
		dry_run(cfg);
		agent_config_free(cfg);
		return 0;
	}

	/*
	 * File capabilities set without the effective bit ("+p"): make them effective. The
	 * agent drops them once its sockets are open (sockets.c).
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
	/*
	 * No precise timers: the DHCP engine's coalescing waits (above 20 000 requests/s,
	 * dhcp/moderate.h) are slept in the receive callback (sockets.c), and the agent's
	 * timers are of 250 ms and more. With EVENT_BASE_FLAG_PRECISE_TIMER, libevent's epoll
	 * backend re-arms a timerfd on every loop turn while a timer is pending: a syscall per
	 * wakeup of the DHCP socket.
	 */
	base = event_base_new();
	if (base == NULL) {
		log_error("cannot create the event loop");
		agent_config_free(cfg);
		return EXIT_RUNTIME;
	}
	loop_base = base;
	opts->version = VMDHCP_VERSION;
	opts->revision = VMDHCP_REVISION;
	log_kv(LOG_LEVEL_INFO, LOG_KV("version", VMDHCP_VERSION, "revision", VMDHCP_REVISION),
	    "starting");
	if (cli.name != NULL && cli.name[0] != '\0')
		log_info("instance name %s", cli.name);
	if (opts->kube && opts->kubecontext != NULL && opts->kubecontext[0] != '\0' &&
	    (opts->kubeconfig == NULL || opts->kubeconfig[0] == '\0') &&
	    (getenv("KUBECONFIG") == NULL || getenv("KUBECONFIG")[0] == '\0'))
		log_warn("--kubecontext %s ignored: no kubeconfig, in-cluster configuration",
		    opts->kubecontext);
	/* agent_new takes cfg, also when it fails: a new attempt reads the file again */
	while ((r = agent_new(base, opts, cfg, &agent, err, sizeof(err))) < 0) {
		cfg = NULL;
		if (!start_retry(r, ++attempt, err) ||
		    (!opts->kube && (r = load_config(opts, &cfg, &attempt)) != 0)) {
			event_base_free(base);
			libevent_global_shutdown();
			return r == -EINVAL ? EXIT_USAGE : r > 0 ? r : EXIT_RUNTIME;
		}
	}
	reload.agent = agent;
	reload.opts = opts;
	if ((reload.ev = evtimer_new(base, reload_cb, NULL)) == NULL ||
	    (reload.step = evtimer_new(base, reload_step_cb, NULL)) == NULL) {
		log_error("cannot create the reload timer");
		status = EXIT_RUNTIME;
		goto out;
	}
	for (size_t i = 0; i < ELEMENTSOF(sigs); i++) {
		sigs[i] = evsignal_new(base, signums[i], signal_cb, agent);
		if (sigs[i] == NULL || event_add(sigs[i], NULL) < 0) {
			log_error("cannot install signal handlers");
			status = EXIT_RUNTIME;
			goto out;
		}
	}
	if (event_base_dispatch(base) < 0) {
		log_error("event loop failed");
		status = EXIT_RUNTIME;
	}
	if (agent_exit_status(agent) != 0)
		status = agent_exit_status(agent);
out:
	for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
		if (sigs[i] != NULL)
			event_free(sigs[i]);
	reload_cancel();
	if (reload.ev != NULL)
		event_free(reload.ev);
	if (reload.step != NULL)
		event_free(reload.step);
	agent_free(agent);
	event_base_free(base);
	libevent_global_shutdown();
	return status;
}
