/* SPDX-License-Identifier: Apache-2.0 */
/* The service CIDR a Node's node-args annotation records (admission-cidr.h). */
#include "controller/admission-cidr.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "lib/util.h"

int
ctrl_admission_node_args_cidr(const char *node_args, char *out, size_t len)
{
	json_t *args = json_loads(node_args, JSON_REJECT_DUPLICATES, NULL);
	size_t i, n;
	int r = -ENOENT;

	if (!json_is_array(args)) {
		json_decref(args);
		return -EINVAL;
	}
	n = json_array_size(args);
	for (i = 0; i + 1 < n; i++) {
		const char *flag = json_string_value(json_array_get(args, i));
		const char *val = json_string_value(json_array_get(args, i + 1));
		uint32_t a;
		unsigned p;

		if (flag == NULL || strcmp(flag, "--service-cidr") != 0)
			continue;
		/* dual-stack clusters list "v4,v6": the IPv4 one is what IPPools compare with */
		r = -EINVAL;
		if (val != NULL) {
			char buf[128], *save = NULL, *tok;

			snprintf(buf, sizeof(buf), "%s", val);
			for (tok = strtok_r(buf, ",", &save); tok != NULL;
			     tok = strtok_r(NULL, ",", &save))
				if (ipv4_cidr_parse(tok, &a, &p) == 0 && strlen(tok) < len) {
					snprintf(out, len, "%s", tok);
					r = 0;
					break;
				}
		}
		break;
	}
	json_decref(args);
	return r;
}
