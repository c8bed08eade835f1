/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_CMDLINE_H
#define VMDHCP_CONTROLLER_CMDLINE_H

/*
 * vm-dhcp-controller's command line (cmdline.c): the flags (with the Go project's names and
 * environment variables), their defaults and the checks across them, for main.c.
 */

#include <stdbool.h>
#include <stdint.h>

#include "controller/placement-opts.h"
#include "lib/log.h"

struct ctrl_args {
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

/*
 * Parses argv into the program's one struct ctrl_args (returned; its agent knobs freed by
 * placement_opts_clear). Exits: 0 after --help or --version (which prints version), 2 after
 * one line on stderr for bad usage.
 */
struct ctrl_args *ctrl_args_parse(int argc, char **argv, const char *version);

#endif
