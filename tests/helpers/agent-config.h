/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_TESTS_HELPERS_AGENT_CONFIG_H
#define VMDHCP_TESTS_HELPERS_AGENT_CONFIG_H

struct agent_config;

/*
 * The agent's pool configuration from YAML text that must parse (the agent's unit tests):
 * a failure prints the parser's message and ends the test (fatal assertion).
 */
struct agent_config *test_agent_config_ok(const char *text);

#endif
