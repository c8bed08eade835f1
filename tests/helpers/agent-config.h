/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_TESTS_HELPERS_AGENT_CONFIG_H
#define VMDHCP_TESTS_HELPERS_AGENT_CONFIG_H

/*
 * The agent's pool configuration from YAML text that must parse (the agent's unit tests):
 * a failure prints the parser's message and ends the test (fatal assertion). Header-only: the
 * objects of tests/helpers/ are linked into every test binary, and this would pull the agent's
 * configuration code into all of them.
 */

#include <stdio.h>
#include <string.h>

#include "agent/agent.h"
#include "tests/runner.h"

static inline struct agent_config *
test_agent_config_ok(const char *text)
{
	struct agent_config *c = NULL;
	char err[AGENT_ERR_MAX] = "";
	int r = agent_config_parse("pool.yaml", text, strlen(text), NULL, &c, err, sizeof(err));

	if (r != 0)
		fprintf(stderr, "unexpected error: %s\n", err);
	CU_ASSERT_EQUAL_FATAL(r, 0);
	return c;
}

#endif
