/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TEMPORARY stand-ins for the four naming functions of controller/admit.h that
 * controller/webhook.c calls, for the tests that link webhook.c before controller/admit.c
 * exists. They are weak: once controller/admit.c is in controller.a its definitions win
 * wherever admit.o is linked; remove this file then. Include it from one file per binary.
 */
#ifndef VMDHCP_TESTS_ADMIT_STUB_H
#define VMDHCP_TESTS_ADMIT_STUB_H

#include <errno.h>
#include <string.h>

#include "controller/admit.h"

__attribute__((weak)) enum admit_kind
admit_kind_of(const char *group, const char *resource)
{
	if (strcmp(group, "network.harvesterhci.io") == 0 && strcmp(resource, "ippools") == 0)
		return ADMIT_KIND_IPPOOL;
	if (strcmp(group, "network.harvesterhci.io") == 0 &&
	    strcmp(resource, "virtualmachinenetworkconfigs") == 0)
		return ADMIT_KIND_VMNETCFG;
	if (strcmp(group, "kubevirt.io") == 0 && strcmp(resource, "virtualmachines") == 0)
		return ADMIT_KIND_VM;
	return ADMIT_KIND_OTHER;
}

__attribute__((weak)) int
admit_op_parse(const char *s, enum admit_op *ret)
{
	static const char *const names[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};

	for (unsigned i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*ret = (enum admit_op)i;
			return 0;
		}
	return -EINVAL;
}

__attribute__((weak)) const char *
admit_kind_name(enum admit_kind kind)
{
	switch (kind) {
	case ADMIT_KIND_IPPOOL:
		return "IPPool";
	case ADMIT_KIND_VMNETCFG:
		return "VirtualMachineNetworkConfig";
	case ADMIT_KIND_VM:
		return "VirtualMachine";
	default:
		return "Other";
	}
}

__attribute__((weak)) const char *
admit_op_name(enum admit_op op)
{
	static const char *const names[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};

	return (unsigned)op < 4 ? names[op] : "UNKNOWN";
}

#endif
