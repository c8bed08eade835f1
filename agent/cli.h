/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_AGENT_CLI_H
#define VMDHCP_AGENT_CLI_H

/* cli.c: vm-dhcp-agent's command line, for main.c. */

#include <stdbool.h>
#include <stdint.h>

#include "agent/agent.h"
#include "lib/log.h"

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
	/* flags converted or checked after parsing */
	uint64_t grace, hold, offer_hold, max_offers;
	int log_dhcp;
	bool offer_flags; /* --offer-hold or --max-pending-offers given */
	bool ha_flags;	  /* one of --leader-elect's own flags given */
};

/*
 * Parses the flags into the one struct cli (*ret) and checks them across, as flags_parse():
 * 0 when the agent goes on; 1 after --help or --version (version: what --version prints);
 * -EINVAL after one line on stderr; -ENOMEM.
 */
int cli_parse(int argc, char **argv, const char *version, struct cli **ret);

#endif
