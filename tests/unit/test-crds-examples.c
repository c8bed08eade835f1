/* SPDX-License-Identifier: Apache-2.0 */
/* examples/: every IPPool and VirtualMachineNetworkConfig document decodes with the codec, and
 * the IPv6 fields (spec.ipv6Config, a NIC's ipv6Address) have an example. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "crds/ippool.h"
#include "crds/vmnetcfg.h"
#include "kube/yaml.h"
#include "lib/ip6.h"
#include "lib/util.h"
#include "tests/runner.h"

static void
examples_dir(char *out, size_t size)
{
	const char *d = test_data_dir();
	size_t n = strlen(d), t = strlen("tests/data");

	if (n >= t && strcmp(d + n - t, "tests/data") == 0)
		snprintf(out, size, "%.*sexamples", (int)(n - t), d);
	else
		snprintf(out, size, "%s/../../examples", d);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
test_examples_decode(void)
{
	char dir[512], path[1024];
	DIR *dp;
	struct dirent *de;
	char *names[64];
	size_t n_names = 0, n_files = 0;
	unsigned pools = 0, cfgs = 0, others = 0, bad = 0, pools6 = 0, nics6 = 0;

	examples_dir(dir, sizeof(dir));
	dp = opendir(dir);
	CU_ASSERT_PTR_NOT_NULL_FATAL(dp);
	while ((de = readdir(dp)) && n_names < ELEMENTSOF(names)) {
		size_t l = strlen(de->d_name);

		if (l > 5 && strcmp(de->d_name + l - 5, ".yaml") == 0)
			names[n_names++] = strdup(de->d_name);
	}
	closedir(dp);
	qsort(names, n_names, sizeof(names[0]), cmp_str);

	for (size_t f = 0; f < n_names; f++) {
		char *text = NULL;
		size_t len = 0;
		json_t **docs = NULL;
		unsigned *lines = NULL;
		struct yaml_error yerr;
		int n;

		snprintf(path, sizeof(path), "%s/%s", dir, names[f]);
		CU_ASSERT_EQUAL_FATAL(read_file(path, 1 << 20, &text, &len), 0);
		n = yaml_parse_documents(text, len, &docs, &lines, &yerr);
		if (n < 0) {
			printf("\n  %s:%u: %s", path, yerr.line, yerr.message);
			bad++;
		}
		n_files++;
		for (int i = 0; i < n; i++) {
			const char *kind = json_string_value(json_object_get(docs[i], "kind"));
			struct crd_error err = {0};
			int r = 0;

			if (kind && strcmp(kind, IPPOOL_KIND) == 0) {
				struct ippool *p = NULL;

				r = ippool_decode(docs[i], &p, &err);
				pools += r == 0;
				pools6 += r == 0 && p->spec.has_ipv6 && p->spec.ipv6.ra_set &&
					  p->spec.ipv6.n_dns > 0;
				ippool_free(p);
			} else if (kind && strcmp(kind, VMNETCFG_KIND) == 0) {
				struct vmnetcfg *c = NULL;

				r = vmnetcfg_decode(docs[i], &c, &err);
				cfgs += r == 0;
				for (size_t k = 0; r == 0 && k < c->spec.n_nics; k++)
					nics6 += !ipv6_is_zero(&c->spec.nics[k].ipv6_address);
				vmnetcfg_free(c);
			} else {
				others++;
			}
			if (r < 0) {
				printf("\n  %s:%u: %s", path, lines ? lines[i] : 0, err.message);
				bad++;
			}
			json_decref(docs[i]);
		}
		free(docs);
		free(lines);
		free(text);
		free(names[f]);
	}
	printf("\n  %zu files: %u IPPools, %u VMNetCfgs decoded, %u other documents\n", n_files,
	    pools, cfgs, others);
	CU_ASSERT_EQUAL(bad, 0);
	/* basic, full, paused, local-mode; static, multi-NIC, local-mode x2 */
	CU_ASSERT(pools >= 4);
	CU_ASSERT(cfgs >= 4);
	CU_ASSERT(others >= 2); /* the NAD and the KubeVirt VM */
	CU_ASSERT(pools6 >= 1); /* ippool-dual-stack.yaml */
	CU_ASSERT(nics6 >= 1);	/* vmnetcfg-dual-stack.yaml */
}

static const struct test_case examples_tests[] = {
    {"every example document decodes", test_examples_decode},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "crds-examples", .tests = examples_tests},
    {.name = NULL},
};
