/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vm-dhcp-controller: IPAM for IPPools, VMNetCfg bindings, agent placement.
 *
 *   vm-dhcp-controller --agent-image IMAGE [--namespace NS] [--kubeconfig FILE]
 *                      [--agent-service-account SA] [--agent-* knobs of the agent workload]
 *                      [--no-leader-election] [--lease-namespace NS] [--lease-name NAME]
 *                      [--no-agent] [--no-dhcp] [--name NAME]
 *                      [--listen HOST:PORT] [--log-level LEVEL] [--log-format text|json]
 *                      [--webhook-listen HOST:PORT [--webhook-* options] [--service-cidr CIDR]]
 *
 * The Go project's flags and environment variables (cmd/controller/root.go) are accepted
 * with their meaning: --name, --no-leader-election, --no-agent, --no-dhcp, --namespace
 * ($AGENT_NAMESPACE), --image ($AGENT_IMAGE, = --agent-image), --service-account-name
 * ($AGENT_SERVICE_ACCOUNT_NAME, = --agent-service-account), --debug and --trace
 * ($VM_DHCP_CONTROLLER_DEBUG, $VM_DHCP_CONTROLLER_TRACE).
 *   vm-dhcp-controller --uninstall [--uninstall-timeout SECONDS] [--namespace NS]
 *                      [--kubeconfig FILE] [--log-level LEVEL]
 *   vm-dhcp-controller --version
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "controller/admission.h"
#include "controller/cmdline.h"
#include "controller/crd-apply.h"
#include "controller/ctrl.h"
#include "controller/dump.h"
#include "controller/lifecycle.h"
#include "controller/placement.h"
#include "controller/uninstall.h"
#include "kube/kube.h"
#include "lib/clock.h"
#include "lib/flags.h"
#include "lib/httpd.h"
#include "lib/log.h"
#include "lib/metrics.h"
#include "lib/util.h"

/* From the Makefile: the file VERSION and `git rev-parse --short HEAD`. */
#ifndef VMDHCP_VERSION
#define VMDHCP_VERSION "unknown"
#endif
#ifndef VMDHCP_REVISION
#define VMDHCP_REVISION "unknown"
#endif

struct app {
	struct event_base *base;
	struct kube_client *client;
	struct metrics *metrics;
	struct httpd *httpd;
	struct ctrl *ctrl;
	struct ctrl_admission *admission;
	struct kube_leader *leader;
	struct event *drain_ev;
	uint64_t drain_usec;
	bool leading;
	bool stopping;	   /* a signal came: not ready */
	bool release_done; /* the leader Lease is released (or was not held) */
	bool drain_done;   /* the admission drain period is over (or there is none) */
	int exit_code;
};

static bool
ready_cb(void *userdata, char *reason, size_t len)
{
	struct app *app = userdata;

	if (app->ctrl == NULL)
		return false;
	if (app->stopping) {
		snprintf(reason, len, "stopping");
		return false;
	}
	if (!ctrl_ready(app->ctrl, reason, len)) {
		ctrl_describe_failures(app->ctrl, reason, len);
		return false;
	}
	return app->admission == NULL || ctrl_admission_ready(app->admission, reason, len);
}

static void
on_started(void *userdata)
{
	struct app *app = userdata;

	log_info("leading: reconcilers start once the caches have synced");
	app->leading = true;
	ctrl_lead(app->ctrl);
}

static void
on_stopped(void *userdata)
{
	struct app *app = userdata;

	if (!app->leading)
		return;
	/* the in-memory IPAM must never be shared: exit, a new process starts clean */
	log_error("lost the leader lease: exiting");
	app->exit_code = 1;
	event_base_loopbreak(app->base);
}

static void
on_new_leader(void *userdata, const char *id)
{
	log_info("leader is %s", id != NULL ? id : "(none)");
}

/* Stopping ends once the Lease is released and the admission drain is over. */
static void
stop_if_done(struct app *app)
{
	if (app->release_done && app->drain_done)
		event_base_loopbreak(app->base);
}

static void
released(void *userdata)
{
	struct app *app = userdata;

	app->release_done = true;
	stop_if_done(app);
}

static void
drained(evutil_socket_t fd, short what, void *arg)
{
	struct app *app = arg;

	app->drain_done = true;
	ctrl_admission_stop_accepting(app->admission);
	stop_if_done(app);
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct app *app = arg;

	if (app->stopping) {
		log_info("signal %d again: stopping now", (int)sig);
		event_base_loopbreak(app->base);
		return;
	}
	log_info("signal %d: stopping", (int)sig);
	app->stopping = true;
	app->release_done = app->drain_done = true;
	ctrl_admission_stopping(app->admission);
	if (app->leader != NULL && app->leading) {
		app->leading = false;
		if (kube_leader_release(app->leader, released, app) == 0)
			app->release_done = false;
	}
	if (app->drain_ev != NULL) {
		struct timeval tv = {(time_t)(app->drain_usec / USEC_PER_SEC),
		    (suseconds_t)(app->drain_usec % USEC_PER_SEC)};

		log_info("admission: answering for %.1f s more while this replica leaves the "
			 "Service's endpoints",
		    (double)app->drain_usec / USEC_PER_SEC);
		app->drain_done = false;
		evtimer_add(app->drain_ev, &tv);
	}
	stop_if_done(app);
}

/*
 * Exit status, the same in vm-dhcp-agent (README "Exit status"): 0 done; 1 a runtime failure
 * (fatalx); 2 bad usage or configuration (FLAGS_EXIT_USAGE: a flag, the kubeconfig, a listen
 * address that is not one).
 */
#define EXIT_RUNTIME 1
#define EXIT_USAGE FLAGS_EXIT_USAGE

static void __attribute__((format(printf, 2, 3), noreturn)) die(int status, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(LOG_LEVEL_ERROR, fmt, ap);
	va_end(ap);
	exit(status);
}

/*
 * Start-up steps that open sockets are tried again while their error may pass (ENOMEM, ENOBUFS,
 * EAGAIN: the kernel or the allocator short for a moment), 10 attempts in all, after 0.1 s
 * doubling up to 10 s, as the agent does; then, or for any other error, the step's exit.
 */
#define START_ATTEMPTS 10

static bool
start_retry(int r, unsigned *attempt, const char *what)
{
	uint64_t delay = 100 * UINT64_C(1000);
	struct timespec ts;

	if ((r != -ENOMEM && r != -ENOBUFS && r != -EAGAIN) || ++*attempt >= START_ATTEMPTS)
		return false;
	for (unsigned i = 1; i < *attempt && delay < 10 * USEC_PER_SEC; i++)
		delay *= 2;
	delay = MIN(delay, 10 * USEC_PER_SEC);
	log_warn("%s: %s; may pass: trying again in %.1f s (attempt %u of %u)", what, strerror(-r),
	    (double)delay / USEC_PER_SEC, *attempt + 1, START_ATTEMPTS);
	ts = (struct timespec){(time_t)(delay / USEC_PER_SEC), (long)(delay % USEC_PER_SEC) * 1000};
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return true;
}

/* -EINVAL from a listen address: the flag's value is no address (2); else the system's (1) */
#define LISTEN_STATUS(r) ((r) == -EINVAL ? EXIT_USAGE : EXIT_RUNTIME)

/* --uninstall: the cleanup of uninstall.h, then exit (0 done, 1 failed). */
static int
run_uninstall(const struct ctrl_args *a, struct kube_config *cfg, const char *ns)
{
	struct ctrl_uninstall_opts uo = {
	    .namespace = ns,
	    .lease_namespace = a->lease_ns,
	    .lease_name = a->lease_name,
	    .timeout_usec = (uint64_t)(a->uninstall_timeout_s != 0 ? a->uninstall_timeout_s
								   : UNINSTALL_TIMEOUT_DEFAULT_S) *
			    USEC_PER_SEC,
	};
	struct kube_client *client = NULL;
	struct event_base *base;
	char err[1024] = "";
	int r;

	base = event_base_new();
	if (base == NULL)
		fatalx("cannot create the event loop");
	if ((r = kube_client_new(base, cfg, &client)) < 0)
		fatalx("cannot create the API client: %s", strerror(-r));
	log_info("--uninstall: server %s, namespace %s", kube_config_server(cfg), ns);
	r = ctrl_uninstall(client, &uo, err, sizeof(err));
	/* before anything could run the loop again: a failed call may still be pending */
	kube_client_free(client);
	event_base_free(base);
	if (r < 0) {
		log_error("--uninstall: %s", err[0] != '\0' ? err : strerror(-r));
		return 1;
	}
	return 0;
}

/* Logging and the allocator, once the flags are read. */
static void
start_logging(const struct ctrl_args *a)
{
	/* large, short-lived buffers (list pages, pool status bodies) go back to the system */
	mallopt(M_MMAP_THRESHOLD, 64 * 1024);
	mallopt(M_TRIM_THRESHOLD, 256 * 1024);
	mallopt(M_ARENA_MAX, 1); /* one thread does the work; resolver threads share the heap */
	log_init("vm-dhcp-controller", a->level);
	log_set_format(a->log_format);
	signal(SIGPIPE, SIG_IGN);
	log_kv(LOG_LEVEL_INFO, LOG_KV("version", VMDHCP_VERSION, "revision", VMDHCP_REVISION),
	    "starting");
	if (a->name != NULL && a->name[0] != '\0')
		log_info("instance name %s", a->name);
}

/* The event loop, the API client, the metrics and the HTTP endpoints (--listen). */
static void
start_serving(struct app *app, const struct ctrl_args *a, struct kube_config *cfg)
{
	unsigned attempt = 0;
	int r;

	app->base = event_base_new();
	if (app->base == NULL)
		fatalx("cannot create the event loop");
	while ((r = kube_client_new(app->base, cfg, &app->client)) < 0)
		if (!start_retry(r, &attempt, "cannot create the API client"))
			fatalx("cannot create the API client: %s", strerror(-r));
	if ((r = metrics_new(&app->metrics)) < 0)
		fatalx("cannot create metrics: %s", strerror(-r));
	if (metrics_add_build_info(app->metrics, VMDHCP_VERSION, VMDHCP_REVISION) == NULL ||
	    metrics_add_process(app->metrics) < 0)
		fatalx("cannot create the build and process metrics");
	while ((r = httpd_new(app->base, a->listen, app->metrics, &app->httpd)) < 0)
		if (!start_retry(r, &attempt, a->listen))
			die(LISTEN_STATUS(r), "--listen %s: %s", a->listen, strerror(-r));
	httpd_set_ready(app->httpd, ready_cb, app);
}

/* The CRDs (--apply-crds), the controller and its cache dump API (--enable-cache-dump-api). */
static void
start_controller(struct app *app, struct ctrl_args *a, const char *ns)
{
	struct ctrl_opts co = {0};
	char err[512];
	int r;

	if (a->apply_crds && (r = ctrl_apply_crds(app->base, app->client, err, sizeof(err))) < 0)
		fatalx("--apply-crds: %s", err);
	co.namespace = ns;
	co.upstream_agent_ns = a->upstream_agent_ns;
	co.upstream_webhooks = a->upstream_webhooks;
	co.agent_image = a->agent_image;
	co.agent_sa = a->agent_sa;
	co.agent = &a->agent;
	co.no_agent = a->no_agent;
	co.ippool_budget = a->ippool_budget;
	if ((r = ctrl_new(app->base, app->client, app->metrics, &co, &app->ctrl)) < 0)
		fatalx("cannot start the controller: %s", strerror(-r));
	if (a->dump_api && (r = ctrl_add_dump_api(app->ctrl, app->httpd)) < 0)
		fatalx("cannot serve the cache dump API: %s", strerror(-r));
}

/* The admission webhook (--webhook-listen) and its drain timer, or none. */
static void
start_admission(struct app *app, const struct ctrl_args *a, const char *ns)
{
	struct ctrl_admission_opts ao = {
	    .listen = a->webhook_listen,
	    .namespace = ns,
	    .secret = a->webhook_secret,
	    .service = a->webhook_service,
	    .cert_sans = a->webhook_sans,
	    .mutating = a->webhook_mutating,
	    .validating = a->webhook_validating,
	    .cert_validity_s = a->webhook_validity_s,
	    .service_cidr = a->service_cidr,
	};
	int r;

	if (strcmp(a->webhook_listen, "off") == 0) {
		log_info("admission webhook off (--webhook-listen off)");
		return;
	}
	if ((r = ctrl_admission_new(
		 app->ctrl, app->base, app->client, app->metrics, &ao, &app->admission)) < 0)
		die(LISTEN_STATUS(r), "cannot serve admission on %s: %s", a->webhook_listen,
		    strerror(-r));
	app->drain_usec = a->webhook_drain_usec;
	if (app->drain_usec > 0 && (app->drain_ev = evtimer_new(app->base, drained, app)) == NULL)
		fatalx("cannot create the drain timer");
	log_info(
	    "admission webhook on %s (Secret %s/%s)", a->webhook_listen, ns, a->webhook_secret);
}

/* Leader election on the Lease, or reconciling at once (--no-leader-election). */
static void
start_leading(struct app *app, const struct ctrl_args *a)
{
	char identity[300], host[256];
	struct kube_leader_opts lo = {
	    .ns = a->lease_ns,
	    .name = a->lease_name,
	    .identity = identity,
	    .on_started = on_started,
	    .on_stopped = on_stopped,
	    .on_new_leader = on_new_leader,
	    .userdata = app,
	};
	int r;

	if (a->no_leader_election) {
		app->leading = true;
		ctrl_lead(app->ctrl);
		return;
	}
	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	snprintf(identity, sizeof(identity), "%s_%ld", host, (long)getpid());
	if ((r = kube_leader_new(app->client, &lo, &app->leader)) < 0 ||
	    (r = kube_leader_start(app->leader)) < 0)
		fatalx("cannot start leader election: %s", strerror(-r));
	log_info("leader election on the Lease %s/%s as %s", a->lease_ns, a->lease_name, identity);
}

int
main(int argc, char **argv)
{
	struct app app = {0};
	struct kube_config *cfg = NULL;
	struct event *sigterm, *sigint;
	struct ctrl_args *a = ctrl_args_parse(argc, argv, VMDHCP_VERSION " (" VMDHCP_REVISION ")");
	const char *ns;
	char err[512];
	int r;

	start_logging(a);
	if ((r = kube_config_load(a->kubeconfig, &cfg, err, sizeof(err))) < 0)
		die(r == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE,
		    "cannot load the Kubernetes configuration: %s", err);
	ns = a->namespace;
	if (ns == NULL)
		ns = getenv("POD_NAMESPACE");
	if (ns == NULL || ns[0] == '\0')
		ns = kube_config_namespace(cfg);
	if (a->uninstall) {
		r = run_uninstall(a, cfg, ns);
		placement_opts_clear(&a->agent);
		kube_config_free(cfg);
		return r;
	}

	start_serving(&app, a, cfg);
	start_controller(&app, a, ns);
	start_admission(&app, a, ns);
	log_info("server %s, namespace %s, agent image %s%s%s, listening on %s",
	    kube_config_server(cfg), ns, a->agent_image,
	    a->no_agent ? " (no agents: --no-agent)" : "",
	    a->no_dhcp ? " (agents without DHCP: --no-dhcp)" : "", a->listen);
	start_leading(&app, a);

	sigterm = evsignal_new(app.base, SIGTERM, signal_cb, &app);
	sigint = evsignal_new(app.base, SIGINT, signal_cb, &app);
	if (sigterm == NULL || sigint == NULL || event_add(sigterm, NULL) < 0 ||
	    event_add(sigint, NULL) < 0)
		fatalx("cannot install signal handlers");

	event_base_dispatch(app.base);

	event_free(sigterm);
	event_free(sigint);
	kube_leader_free(app.leader);
	if (app.drain_ev != NULL)
		event_free(app.drain_ev);
	ctrl_admission_free(app.admission);
	ctrl_free(app.ctrl);
	placement_opts_clear(&a->agent);
	httpd_free(app.httpd);
	kube_client_free(app.client);
	metrics_free(app.metrics);
	kube_config_free(cfg);
	event_base_free(app.base);
	log_info("stopped");
	return app.exit_code;
}
