/* SPDX-License-Identifier: Apache-2.0 */
#include "tests/helpers/agent-config.h"

#include <stdio.h>
#include <string.h>

#include "agent/pool-config.h"
#include "agent/source.h"
#include "tests/runner.h"

struct agent_config *
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
