/* SPDX-License-Identifier: Apache-2.0 */
#ifndef VMDHCP_CONTROLLER_PLACEMENT_INTERNAL_H
#define VMDHCP_CONTROLLER_PLACEMENT_INTERNAL_H

/* What placement.c (the manifest) and placement-opts.c (the admin's knobs) share. */

#include <stdbool.h>

/* Seconds with at most 3 decimals, as text: "3600.5" + NUL, with room. */
#define PLACEMENT_SECONDS_LEN 24

bool placement_is_lower_alnum(char c);
/* v when the admin set it (non-zero), else dflt. */
int placement_or_default(int v, int dflt);
/* ms as the agent's seconds flags take it: "2", "1.5", "0.3". */
void placement_format_seconds(int ms, char out[PLACEMENT_SECONDS_LEN]);

#endif
