/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vm-dhcp-agent: answers DHCPv4 for one IPPool on one L2 interface.
 * One event_base, one thread: DHCP sockets, netlink link events, HTTP, signals.
 *
 * The command line is cli.c's (the Go project's flags among the others); here: the start-up
 * and its retries, SIGHUP's reloads, SIGTERM/SIGINT's stop.
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
#include "agent/caps.h"
#include "agent/cli.h"
#include "agent/pool-config.h"
#include "agent/source.h"
#include "lib/clock.h"
#include "lib/flags.h"
#include "lib/ip6.h"
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

/* The ipv6Config part of the dry-run summary. */
static void
dry_run6(const struct agent_config *c)
{
	const struct agent_config6 *v = &c->v6;
	char a[IPV6_STRLEN], b[IPV6_STRLEN];

	if (!v->enabled)
		return;
	ipv6_format(&v->cidr, a);
	printf("cidr6       %s/%u\n", a, v->prefix);
	ipv6_format(&v->opts.server_ip, a);
	printf("server6     %s\n", a);
	ipv6_format(&v->pool_start, a);
	ipv6_format(&v->pool_end, b);
	printf("range6      %s - %s (%zu excluded)\n", a, b, v->n_exclude);
	for (size_t i = 0; i < v->opts.n_dns; i++) {
		ipv6_format(&v->opts.dns[i], a);
		printf("dns6        %s\n", a);
	}
	for (size_t i = 0; i < v->opts.n_search; i++)
		printf("search6     %s\n", v->opts.search[i]);
	printf("lifetimes6  preferred %u s, valid %u s%s\n", v->opts.preferred_lifetime,
	    v->opts.valid_lifetime, v->opts.rapid_commit ? ", rapid commit" : "");
	if (v->ra.enabled)
		printf("ra          every %u s, router lifetime %u s%s\n", v->ra.interval,
		    v->ra.router_lifetime, v->ra.mtu ? "" : ", no MTU option");
	else
		printf("ra          off\n");
	printf("bindings6   %zu\n", v->n_bindings);
	for (size_t i = 0; i < v->n_bindings && i < 20; i++) {
		char m[MAC_STRLEN];
		const char *h = agent_config_hostname6(c, &v->bindings[i]);
		mac_format(v->bindings[i].mac, m);
		ipv6_format(&v->bindings[i].ip, a);
		printf("  %s %-39s %s\n", m, a, h ? h : "");
	}
	if (v->n_bindings > 20)
		printf("  ... %zu more\n", v->n_bindings - 20);
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
	dry_run6(c);
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

/*
 * File capabilities set without the effective bit ("+p"): made effective. The agent drops
 * them once its sockets are open (sockets.c).
 */
static void
raise_capabilities(void)
{
	uint64_t raised;
	char names[96];
	int r;

	if ((r = agent_caps_raise(&raised)) < 0)
		log_warn("cannot make the permitted capabilities effective: %s", strerror(-r));
	else if (raised != 0)
		log_debug("capabilities made effective: %s",
		    agent_caps_format(raised, 4, names, sizeof(names)));
}

/* The start-up lines: the version, the instance, a --kubecontext without a kubeconfig. */
static void
log_start(const struct cli *cli)
{
	const struct agent_opts *opts = &cli->opts;

	log_kv(LOG_LEVEL_INFO, LOG_KV("version", VMDHCP_VERSION, "revision", VMDHCP_REVISION),
	    "starting");
	if (cli->name != NULL && cli->name[0] != '\0')
		log_info("instance name %s", cli->name);
	if (opts->kube && opts->kubecontext != NULL && opts->kubecontext[0] != '\0' &&
	    (opts->kubeconfig == NULL || opts->kubeconfig[0] == '\0') &&
	    (getenv("KUBECONFIG") == NULL || getenv("KUBECONFIG")[0] == '\0'))
		log_warn("--kubecontext %s ignored: no kubeconfig, in-cluster configuration",
		    opts->kubecontext);
}

/*
 * agent_new, tried again while its errors may pass (local mode: the file read again each
 * time). 0 with *ret, or main's exit status.
 */
static int
start_agent(struct event_base *base, const struct agent_opts *opts, struct agent_config *cfg,
    unsigned *attempt, struct agent **ret)
{
	char err[AGENT_ERR_MAX];
	int r;

	/* agent_new takes cfg, also when it fails: a new attempt reads the file again */
	while ((r = agent_new(base, opts, cfg, ret, err, sizeof(err))) < 0) {
		cfg = NULL;
		if (!start_retry(r, ++*attempt, err) ||
		    (!opts->kube && (r = load_config(opts, &cfg, attempt)) != 0))
			return r == -EINVAL ? EXIT_USAGE : r > 0 ? r : EXIT_RUNTIME;
	}
	return 0;
}

/* The reload timers and the signal handlers, then the loop until a stop; the exit status. */
static int
run(struct event_base *base, struct agent *agent, const struct agent_opts *opts,
    struct event *sigs[3])
{
	static const int signums[3] = {SIGHUP, SIGTERM, SIGINT};
	int status = 0;

	reload.agent = agent;
	reload.opts = opts;
	if ((reload.ev = evtimer_new(base, reload_cb, NULL)) == NULL ||
	    (reload.step = evtimer_new(base, reload_step_cb, NULL)) == NULL) {
		log_error("cannot create the reload timer");
		return EXIT_RUNTIME;
	}
	for (size_t i = 0; i < ELEMENTSOF(signums); i++) {
		sigs[i] = evsignal_new(base, signums[i], signal_cb, agent);
		if (sigs[i] == NULL || event_add(sigs[i], NULL) < 0) {
			log_error("cannot install signal handlers");
			return EXIT_RUNTIME;
		}
	}
	if (event_base_dispatch(base) < 0) {
		log_error("event loop failed");
		status = EXIT_RUNTIME;
	}
	if (agent_exit_status(agent) != 0)
		status = agent_exit_status(agent);
	return status;
}

int
main(int argc, char **argv)
{
	struct cli *cli;
	struct agent_opts *opts;
	struct agent_config *cfg = NULL;
	struct event_base *base = NULL;
	struct agent *agent = NULL;
	struct event *sigs[3] = {NULL};
	unsigned attempt = 0;
	int r, status;

	log_init("vm-dhcp-agent", LOG_LEVEL_INFO);
	if ((r = cli_parse(argc, argv, VMDHCP_VERSION, &cli)) != 0)
		return flags_exit_status(r);
	opts = &cli->opts;
	log_set_level(cli->level);
	log_set_format(cli->format);

	if (!opts->kube && (r = load_config(opts, &cfg, &attempt)) != 0)
		return r;
	if (cli->dry && !opts->kube) {
		dry_run(cfg);
		agent_config_free(cfg);
		return 0;
	}
	raise_capabilities();
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
	log_start(cli);
	if ((r = start_agent(base, opts, cfg, &attempt, &agent)) != 0) {
		event_base_free(base);
		libevent_global_shutdown();
		return r;
	}
	status = run(base, agent, opts, sigs);
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
