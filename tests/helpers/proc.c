/* SPDX-License-Identifier: Apache-2.0 */
#include "tests/helpers/proc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long
test_proc_status_kib(pid_t pid, const char *field)
{
	char p[64], line[256];
	long v = -1;
	FILE *f;

	if (pid == 0)
		snprintf(p, sizeof(p), "/proc/self/status");
	else
		snprintf(p, sizeof(p), "/proc/%ld/status", (long)pid);
	f = fopen(p, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, field, strlen(field)) == 0)
			v = strtol(line + strlen(field), NULL, 10);
	fclose(f);
	return v;
}
