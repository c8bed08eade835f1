/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vm-dhcp-controller's command line: the table of flags (the order --help lists them),
 * the agent knobs checked by placement-opts.c, the checks across flags and the defaults.
 */
#include "controller/cmdline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "controller/admission.h"
#include "controller/ctrl.h"
#include "lib/clock.h"
#include "lib/flags.h"
#include "lib/util.h"

/* What the flags set (ctrl_args_parse). */
static struct ctrl_args args;

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

static struct flags flags = {.prog = "vm-dhcp-controller",
    .synopsis = "usage: vm-dhcp-controller --agent-image IMAGE [options]\n"
		"       vm-dhcp-controller --uninstall [--uninstall-timeout SECONDS] "
		"[--namespace NS]\n"
		"                          [--kubeconfig FILE] [--log-level LEVEL]\n",
    .footer = "\nExit status: 0 done (--help, --version, --uninstall done, a stop on\n"
	      "SIGTERM/SIGINT); 1 runtime failure (the API server, permission, an address\n"
	      "in use, the leader Lease lost, --uninstall failed); 2 bad usage or\n"
	      "configuration (a flag, the kubeconfig, a --listen address). The same in\n"
	      "vm-dhcp-agent.\n",
    .table = flag_table};

/*
 * The checks across flags, once parsed: the agent knobs' election durations in order (naming
 * the knob at fault), what needs what, values that cannot be empty. 0 or flags_error()'s.
 */
static int
check_args(const struct ctrl_args *a)
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

struct ctrl_args *
ctrl_args_parse(int argc, char **argv, const char *version)
{
	struct ctrl_args *a = &args;
	int next, r;

	flags.version = version;

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
