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
#include "controller/crd-apply.h"
#include "controller/ctrl.h"
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

struct args {
	const char *kubeconfig;
	const char *namespace;
	const char *agent_image;
	const char *agent_sa;
	const char *listen;
	const char *name;	/* --name: this instance, in the logs */
	const char *lease_ns;	/* the leader Lease (CTRL_LEASE_NAMESPACE) */
	const char *lease_name; /* (CTRL_LEASE_NAME) */
	bool no_leader_election;
	bool no_agent, no_dhcp;
	bool debug, trace, level_given;
	bool dump_api; /* --enable-cache-dump-api */
	bool uninstall;
	uint64_t uninstall_timeout_s;  /* 0: not given */
	bool apply_crds;	       /* controller/crd-apply.h */
	const char *upstream_agent_ns; /* controller/migrate.c */
	const char *upstream_webhooks; /* likewise */
	/* admission (controller/admission.h) */
	const char *webhook_listen; /* "off": none */
	const char *webhook_secret, *webhook_service, *webhook_sans;
	const char *webhook_mutating, *webhook_validating;
	uint64_t webhook_validity_s;
	uint64_t ippool_budget; /* --ippool-object-budget (0: the default) */
	uint64_t webhook_drain_usec;
	const char *service_cidr;
	enum log_level level;
	enum log_format log_format;
	struct placement_opts agent; /* --agent-interface and the other knobs */
};

#define DEFAULT_WEBHOOK_SECRET "vm-dhcp-admission-tls"
#define DEFAULT_WEBHOOK_SERVICE "vm-dhcp-webhook"
#define UNINSTALL_TIMEOUT_DEFAULT_S 120
#define UNINSTALL_TIMEOUT_MAX_S 86400

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

/* What the flags set (parse_args). */
static struct args args;

/* One knob of the agent workload, as a FLAG_FUNC's dst: placement_opts_set() checks it. */
struct agent_knob {
	struct placement_opts *o;
	enum placement_opt opt;
};

static int
agent_knob_flag(void *dst, const char *value, char *err, size_t len)
{
	const struct agent_knob *k = dst;
	int r = placement_opts_set(k->o, k->opt, value, err, len);

	if (r < 0 && r != -EINVAL)
		err[0] = '\0'; /* the lib says strerror(-r) */
	return r;
}

/* by enum placement_opt: &knobs[bad] finds the flag at fault */
static struct agent_knob knobs[] = {
    [PLACEMENT_OPT_INTERFACE] = {&args.agent, PLACEMENT_OPT_INTERFACE},
    [PLACEMENT_OPT_PULL_POLICY] = {&args.agent, PLACEMENT_OPT_PULL_POLICY},
    [PLACEMENT_OPT_PULL_SECRET] = {&args.agent, PLACEMENT_OPT_PULL_SECRET},
    [PLACEMENT_OPT_RESOURCES] = {&args.agent, PLACEMENT_OPT_RESOURCES},
    [PLACEMENT_OPT_NODE_SELECTOR] = {&args.agent, PLACEMENT_OPT_NODE_SELECTOR},
    [PLACEMENT_OPT_TOLERATIONS] = {&args.agent, PLACEMENT_OPT_TOLERATIONS},
    [PLACEMENT_OPT_PRIORITY_CLASS] = {&args.agent, PLACEMENT_OPT_PRIORITY_CLASS},
    [PLACEMENT_OPT_REPLICAS] = {&args.agent, PLACEMENT_OPT_REPLICAS},
    [PLACEMENT_OPT_LEASE_DURATION] = {&args.agent, PLACEMENT_OPT_LEASE_DURATION},
    [PLACEMENT_OPT_RENEW_DEADLINE] = {&args.agent, PLACEMENT_OPT_RENEW_DEADLINE},
    [PLACEMENT_OPT_RETRY_PERIOD] = {&args.agent, PLACEMENT_OPT_RETRY_PERIOD},
};

#define KNOB(o, flag, argname, text)                                                               \
	{                                                                                          \
		.name = flag, .type = FLAG_FUNC, .dst = &knobs[o], .arg = argname, .help = text,   \
		.parse = agent_knob_flag                                                           \
	}
/* The flags, in the order --help lists them. */
static const struct flag flag_table[] = {
    {.name = "agent-image",
	.type = FLAG_STRING,
	.dst = &args.agent_image,
	.arg = "IMAGE",
	.help = "image of the per-pool DHCP agent (required but with\n"
		"--no-agent)",
	.alias = "image",
	.env = "AGENT_IMAGE"},
    {.name = "namespace",
	.type = FLAG_STRING,
	.dst = &args.namespace,
	.arg = "NS",
	.help = "namespace of the controller and its agents\n"
		"(default: $POD_NAMESPACE, else the service account's)",
	.env = "AGENT_NAMESPACE"},
    {.name = "agent-service-account",
	.type = FLAG_STRING,
	.dst = &args.agent_sa,
	.arg = "SA",
	.help = "service account of the agents",
	.alias = "service-account-name",
	.env = "AGENT_SERVICE_ACCOUNT_NAME"},
    {.name = "no-agent",
	.type = FLAG_BOOL,
	.dst = &args.no_agent,
	.help = "place no agent and delete none: IPAM and bindings\n"
		"only (pools Registered and AgentReady, reason NoAgent)"},
    {.name = "no-dhcp",
	.type = FLAG_BOOL,
	.dst = &args.no_dhcp,
	.help = "agents without DHCP: they follow their pool and\n"
		"report ready, no sockets (the agents' --dry-run)"},
    KNOB(PLACEMENT_OPT_INTERFACE, "agent-interface", "NAME",
	"the agents' VM-facing interface, also the Multus\n"
	"interface name (default eth1)"),
    KNOB(PLACEMENT_OPT_PULL_POLICY, "agent-image-pull-policy", "Always|IfNotPresent|Never",
	"(default IfNotPresent)"),
    KNOB(PLACEMENT_OPT_PULL_SECRET, "agent-image-pull-secret", "NAME",
	"imagePullSecrets of the agents (repeatable)"),
    KNOB(PLACEMENT_OPT_RESOURCES, "agent-resources", "JSON",
	"the agent container's core/v1 ResourceRequirements\n"
	"(default {\"requests\":{\"cpu\":\"10m\",\"memory\":\"16Mi\"},\n"
	"\"limits\":{\"memory\":\"64Mi\"}}; {} sets none)"),
    KNOB(PLACEMENT_OPT_NODE_SELECTOR, "agent-node-selector", "JSON",
	"nodeSelector of the agents, an object of strings\n"
	"(beside the cluster-network node affinity)"),
    KNOB(PLACEMENT_OPT_TOLERATIONS, "agent-tolerations", "JSON",
	"array of tolerations added to the agents' own"),
    KNOB(PLACEMENT_OPT_PRIORITY_CLASS, "agent-priority-class", "NAME",
	"priorityClassName of the agents"),
    KNOB(PLACEMENT_OPT_REPLICAS, "agent-replicas", "N",
	"agent pods per pool, 1 to 10 (default 2); from 2\n"
	"they elect the one that answers DHCP through a\n"
	"Lease, the others stand by; 1: no election"),
    KNOB(PLACEMENT_OPT_LEASE_DURATION, "agent-lease-duration", "SECONDS",
	"how long the Lease holds unrenewed: the failover\n"
	"time is about this + the retry period (default 2,\n"
	"at least 1; up to 3 decimals, as the next two)"),
    KNOB(PLACEMENT_OPT_RENEW_DEADLINE, "agent-renew-deadline", "SECONDS",
	"the active agent stops answering when it could\n"
	"not renew for this long (default 1.5, below the\n"
	"lease duration)"),
    KNOB(PLACEMENT_OPT_RETRY_PERIOD, "agent-retry-period", "SECONDS",
	"how often each agent tries the Lease: about\n"
	"1/SECONDS API requests a second (default 0.3,\n"
	"below the renew deadline)"),
    {.name = "kubeconfig",
	.type = FLAG_STRING,
	.dst = &args.kubeconfig,
	.arg = "FILE",
	.help = "kubeconfig (default: $KUBECONFIG, else in-cluster)"},
    {.name = "no-leader-election",
	.type = FLAG_BOOL,
	.dst = &args.no_leader_election,
	.help = "reconcile without taking the Lease"},
    {.name = "lease-namespace",
	.type = FLAG_STRING,
	.dst = &args.lease_ns,
	.arg = "NS",
	.help = "namespace of the leader Lease (default " CTRL_LEASE_NAMESPACE
		",\nthe Go project's: one leader across both)"},
    {.name = "lease-name",
	.type = FLAG_STRING,
	.dst = &args.lease_name,
	.arg = "NAME",
	.help = "the leader Lease (default " CTRL_LEASE_NAME ")"},
    {.name = "name",
	.type = FLAG_STRING,
	.dst = &args.name,
	.arg = "NAME",
	.help = "name of this controller instance, in the logs",
	.env = "VM_DHCP_CONTROLLER_NAME"},
    {.name = "listen",
	.type = FLAG_STRING,
	.dst = &args.listen,
	.arg = "HOST:PORT",
	.help = "/healthz /readyz /metrics (default :8080)"},
    {.name = "enable-cache-dump-api",
	.type = FLAG_BOOL,
	.dst = &args.dump_api,
	.help = "also serve GET /ipams/NETWORK and /caches/NETWORK on\n"
		"--listen: the leader's IPAM and MAC bindings as JSON,\n"
		"as the Go project's debug endpoints (default off)"},
    {.name = "log-level",
	.type = FLAG_FUNC,
	.dst = &args.level,
	.arg = "error|warn|info|debug",
	.help = "(default info)",
	.parse = log_level_flag,
	.given = &args.level_given},
    {.name = "debug",
	.type = FLAG_BOOL,
	.dst = &args.debug,
	.help = "--log-level debug, unless --log-level is given",
	.env = "VM_DHCP_CONTROLLER_DEBUG"},
    {.name = "trace",
	.type = FLAG_BOOL,
	.dst = &args.trace,
	.help = "the same as --debug (no finer level here)",
	.env = "VM_DHCP_CONTROLLER_TRACE"},
    {.name = "log-format",
	.type = FLAG_FUNC,
	.dst = &args.log_format,
	.arg = "text|json",
	.help = "log lines as text (default) or one JSON object each",
	.parse = log_format_flag},
    {.name = "apply-crds",
	.type = FLAG_BOOL,
	.dst = &args.apply_crds,
	.help = "at start, replace the spec of the cluster's IPPool and\n"
		"VirtualMachineNetworkConfig CRDs with this build's\n"
		"(Helm never upgrades a chart's crds/)"},
    {.name = "upstream-agent-namespace",
	.type = FLAG_STRING,
	.dst = &args.upstream_agent_ns,
	.arg = "NS",
	.help = "where harvester/vm-dhcp-controller placed its agent\n"
		"pods: a pool's is removed once ours is ready\n"
		"(default: none watched)"},
    {.name = "upstream-webhook-configurations",
	.type = FLAG_STRING,
	.dst = &args.upstream_webhooks,
	.arg = "NAMES",
	.help = "comma-separated names of harvester/vm-dhcp-controller's\n"
		"validating and mutating webhook configurations,\n"
		"deleted by the leader"},
    {.name = "webhook-listen",
	.type = FLAG_STRING,
	.dst = &args.webhook_listen,
	.arg = "HOST:PORT",
	.help = "serve the admission webhook over HTTPS there (the\n"
		"chart: :8443); default off: no admission served"},
    {.name = "webhook-secret",
	.type = FLAG_STRING,
	.dst = &args.webhook_secret,
	.arg = "NAME",
	.help = "the Secret (in --namespace) holding the webhook's CA and\n"
		"serving certificate, made and rotated by the program\n"
		"(default " DEFAULT_WEBHOOK_SECRET ")"},
    {.name = "webhook-service",
	.type = FLAG_STRING,
	.dst = &args.webhook_service,
	.arg = "NAME",
	.help = "the webhook's Service: the certificate's names\n"
		"(default " DEFAULT_WEBHOOK_SERVICE ")"},
    {.name = "webhook-cert-san",
	.type = FLAG_STRING,
	.dst = &args.webhook_sans,
	.arg = "LIST",
	.help = "more certificate names, comma-separated IP:a.b.c.d or\n"
		"DNS:name (a webhook reached by url)"},
    {.name = "webhook-mutating",
	.type = FLAG_STRING,
	.dst = &args.webhook_mutating,
	.arg = "NAMES",
	.help = "MutatingWebhookConfigurations whose caBundle is kept\n"
		"equal to the CA (comma-separated)"},
    {.name = "webhook-validating",
	.type = FLAG_STRING,
	.dst = &args.webhook_validating,
	.arg = "NAMES",
	.help = "ValidatingWebhookConfigurations, likewise"},
    {.name = "ippool-object-budget",
	.type = FLAG_UINT,
	.dst = &args.ippool_budget,
	.arg = "BYTES",
	.help = "most bytes an IPPool object may take as stored, its\n"
		"status.ipv4.allocated included: no binding past it (NICs\n"
		"Pending, reason PoolStatusFull; the pool's condition\n"
		"StatusFull), and admission refuses IPPool specs that\n"
		"cannot fit (default 1310720, under etcd's 1.5 MiB)",
	.min = 4096,
	.max = UINT64_C(1) << 30,
	.unit = "bytes",
	.env = "VM_DHCP_IPPOOL_OBJECT_BUDGET"},
    {.name = "webhook-cert-validity",
	.type = FLAG_UINT,
	.dst = &args.webhook_validity_s,
	.arg = "SECONDS",
	.help = "validity of the serving certificate, renewed after\n"
		"two thirds of it (default one year; the CA: ten times)",
	.min = 60,
	.max = 10ull * 365 * 24 * 3600,
	.unit = "seconds"},
    {.name = "webhook-drain",
	.type = FLAG_SECONDS,
	.dst = &args.webhook_drain_usec,
	.arg = "SECONDS",
	.help = "on SIGTERM, keep answering admission this long (not\n"
		"ready meanwhile) so the API server stops sending to\n"
		"this replica first (default 3)",
	.max = 60 * USEC_PER_SEC},
    {.name = "service-cidr",
	.type = FLAG_STRING,
	.dst = &args.service_cidr,
	.arg = "CIDR",
	.help = "the cluster's service CIDR, which no IPPool may overlap\n"
		"(default: a Node's rke2.io/k3s.io node-args, "
		"else\n" ADMISSION_SERVICE_CIDR_DEFAULT ")"},
    {.name = "uninstall",
	.type = FLAG_BOOL,
	.dst = &args.uninstall,
	.help = "one-shot cleanup after the chart is removed (its\n"
		"post-delete hook): wait until no controller holds\n"
		"the Lease, delete the agent Deployments, remove the\n"
		"controller's finalizers from every IPPool and\n"
		"VirtualMachineNetworkConfig; exit 0 when done"},
    {.name = "uninstall-timeout",
	.type = FLAG_UINT,
	.dst = &args.uninstall_timeout_s,
	.arg = "SECONDS",
	.help = "how long --uninstall waits for a running controller\n"
		"to stop (default 120)",
	.min = 1,
	.max = UNINSTALL_TIMEOUT_MAX_S,
	.unit = "seconds"},
    {.name = NULL},
};
#undef KNOB

static const struct flags flags = {.prog = "vm-dhcp-controller",
    .synopsis = "usage: vm-dhcp-controller --agent-image IMAGE [options]\n"
		"       vm-dhcp-controller --uninstall [--uninstall-timeout SECONDS] "
		"[--namespace NS]\n"
		"                          [--kubeconfig FILE] [--log-level LEVEL]\n",
    .footer = "\nExit status: 0 done (--help, --version, --uninstall done, a stop on\n"
	      "SIGTERM/SIGINT); 1 runtime failure (the API server, permission, an address\n"
	      "in use, the leader Lease lost, --uninstall failed); 2 bad usage or\n"
	      "configuration (a flag, the kubeconfig, a --listen address). The same in\n"
	      "vm-dhcp-agent.\n",
    .version = VMDHCP_VERSION " (" VMDHCP_REVISION ")",
    .table = flag_table};

/*
 * The checks across flags, once parsed: the agent knobs' election durations in order (naming
 * the knob at fault), what needs what, values that cannot be empty. 0 or flags_error()'s.
 */
static int
check_args(const struct args *a)
{
	enum placement_opt bad = PLACEMENT_OPT_LEASE_DURATION;
	char err[256];

	if (placement_opts_check(&a->agent, &bad, err, sizeof(err)) < 0) {
		const char *name = "agent-lease-duration";

		for (const struct flag *fl = flag_table; fl->name != NULL; fl++)
			if (fl->dst == &knobs[bad])
				name = fl->name;
		return flags_error(&flags, "--%s: %s", name, err);
	}
	if (a->uninstall_timeout_s != 0 && !a->uninstall)
		return flags_error(&flags, "--uninstall-timeout needs --uninstall");
	if (!a->uninstall && !a->no_agent && (a->agent_image == NULL || a->agent_image[0] == '\0'))
		return flags_error(&flags, "--agent-image is required (try --help)");
	if (a->service_cidr != NULL && a->service_cidr[0] != '\0' &&
	    ipv4_cidr_parse(a->service_cidr, &(uint32_t){0}, &(unsigned){0}) < 0)
		return flags_error(
		    &flags, "--service-cidr %s: not an IPv4 CIDR (a.b.c.d/n)", a->service_cidr);
	if ((a->lease_ns != NULL && a->lease_ns[0] == '\0') ||
	    (a->lease_name != NULL && a->lease_name[0] == '\0'))
		return flags_error(&flags, "--lease-namespace and --lease-name cannot be empty");
	return 0;
}

/* The flags into args (exits on --help, --version and bad usage). */
static struct args *
parse_args(int argc, char **argv)
{
	struct args *a = &args;
	int next, r;

	a->listen = ":8080";
	a->webhook_listen = "off";
	a->webhook_secret = DEFAULT_WEBHOOK_SECRET;
	a->webhook_service = DEFAULT_WEBHOOK_SERVICE;
	a->webhook_drain_usec = 3 * USEC_PER_SEC;
	a->level = LOG_LEVEL_INFO;
	a->log_format = LOG_FORMAT_TEXT;
	if ((r = flags_parse(&flags, argc, argv, &next)) != 0) {
		placement_opts_clear(&a->agent);
		exit(flags_exit_status(r));
	}
	if (next < argc)
		r = flags_error(&flags, "unexpected argument %s (try --help)", argv[next]);
	else
		r = check_args(a);
	if (r != 0) {
		placement_opts_clear(&a->agent);
		exit(flags_exit_status(r));
	}
	if ((a->debug || a->trace) && !a->level_given)
		a->level = LOG_LEVEL_DEBUG;
	if (a->lease_ns == NULL)
		a->lease_ns = CTRL_LEASE_NAMESPACE;
	if (a->lease_name == NULL)
		a->lease_name = CTRL_LEASE_NAME;
	if (a->agent_image == NULL)
		a->agent_image = ""; /* --no-agent */
	a->agent.no_dhcp = a->no_dhcp;
	return a;
}

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
run_uninstall(const struct args *a, struct kube_config *cfg, const char *ns)
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
start_logging(const struct args *a)
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
start_serving(struct app *app, const struct args *a, struct kube_config *cfg)
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
start_controller(struct app *app, struct args *a, const char *ns)
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
start_admission(struct app *app, const struct args *a, const char *ns)
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
start_leading(struct app *app, const struct args *a)
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
	struct args *a = parse_args(argc, argv);
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
