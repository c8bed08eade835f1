/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer: bytes as a network.harvesterhci.io/dhcp-static-nics annotation value
 * (controller/vmplan.c) and as a NAD's network.harvesterhci.io/route annotation
 * (controller/admit-nad-route.c). Never crashes or leaks; the unknown names are a subset of
 * what was written, never "*", never a NIC of the VM, each listed by vm_static_nics_has; the
 * plan leaves out exactly the listed NICs. Any difference traps.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/admit-internal.h"
#include "controller/vmplan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const nics[] = {"nic-1", "nic 2", "*x", "a,b"};

/* A VM with the pod network and the NICs above on Multus, each with a MAC; the annotation
 * value (NULL when it is no UTF-8 string, as the API server would refuse it). */
static json_t *
make_vm(const char *value)
{
	json_t *s = json_string(value), *nets, *ifs, *vm;

	if (s == NULL)
		return NULL;
	nets = json_array();
	ifs = json_array();
	json_array_append_new(nets, json_pack("{s:s, s:{}}", "name", "default", "pod"));
	for (size_t i = 0; i < sizeof(nics) / sizeof(nics[0]); i++) {
		char mac[32];

		snprintf(mac, sizeof(mac), "02:00:00:00:00:%02zx", i + 1);
		json_array_append_new(nets, json_pack("{s:s, s:{s:s}}", "name", nics[i], "multus",
						"networkName", "default/net"));
		json_array_append_new(
		    ifs, json_pack("{s:s, s:s}", "name", nics[i], "macAddress", mac));
	}
	vm = json_pack("{s:{s:s, s:s, s:s, s:{s:o}}, s:{s:{s:{s:o, s:{s:{s:o}}}}}}", "metadata",
	    "name", "vm", "namespace", "ns", "uid", "u", "annotations", VM_ANNOT_STATIC_NICS, s,
	    "spec", "template", "spec", "networks", nets, "domain", "devices", "interfaces", ifs);
	if (vm == NULL)
		abort();
	return vm;
}

static void
check_unknown(json_t *vm, const char *value)
{
	char *unknown = NULL, *save = NULL;

	if (vm_static_nics_unknown(vm, value, &unknown) < 0)
		abort();
	if (unknown == NULL)
		return;
	if (unknown[0] == '\0' || strlen(unknown) > 2 * strlen(value) + 2)
		__builtin_trap();
	for (char *n = strtok_r(unknown, ",", &save); n != NULL; n = strtok_r(NULL, ",", &save)) {
		n += strspn(n, " ");
		if (strcmp(n, "*") == 0 || strcmp(n, "default") == 0)
			__builtin_trap();
		for (size_t i = 0; i < sizeof(nics) / sizeof(nics[0]); i++)
			if (strcmp(n, nics[i]) == 0)
				__builtin_trap();
	}
	free(unknown);
}

static void
check_plan(json_t *vm, const char *value)
{
	struct vm_plan p;
	size_t listed = 0, n;

	if (vm_plan_build(vm, &p) < 0)
		abort();
	for (size_t i = 0; i < sizeof(nics) / sizeof(nics[0]); i++)
		listed += vm_static_nics_has(value, nics[i]);
	n = json_array_size(json_object_get(json_object_get(p.vmnetcfg, "spec"), "networkConfigs"));
	if (p.n_static != listed || n + listed != sizeof(nics) / sizeof(nics[0]) || p.n_skipped)
		__builtin_trap();
	vm_plan_clear(&p);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *value = malloc(size + 1);
	struct admit_nad_route rt;
	json_t *vm;

	if (value == NULL)
		return 0;
	memcpy(value, data, size);
	value[size] = '\0';
	if (admit_nad_route_parse(value, &rt) == 0 &&
	    strnlen(rt.server, sizeof(rt.server)) == sizeof(rt.server))
		__builtin_trap();
	/* annotation values are UTF-8 strings without NUL */
	if (strlen(value) == size && (vm = make_vm(value)) != NULL) {
		check_unknown(vm, value);
		check_plan(vm, value);
		json_decref(vm);
	}
	free(value);
	return 0;
}
