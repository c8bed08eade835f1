/* SPDX-License-Identifier: Apache-2.0 */
/* controller/foreign-kinds.c decoders and controller/vmplan.c: VirtualMachine → VMNetCfg. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "controller/foreign-kinds.h"
#include "controller/vmplan.h"
#include "tests/runner.h"

static json_t *
load(const char *file)
{
	char path[512];
	json_error_t err;
	json_t *j;

	snprintf(path, sizeof(path), "%s/%s", test_data_dir(), file);
	j = json_load_file(path, 0, &err);
	if (j == NULL)
		fprintf(stderr, "%s:%d: %s\n", path, err.line, err.text);
	return j;
}

static void
test_kinds_getters(void)
{
	json_t *vm = load("controller-vm.json");
	struct vm_network net;
	struct vm_interface ifc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(vm);
	CU_ASSERT_STRING_EQUAL(kind_name(vm), "vm-1");
	CU_ASSERT_STRING_EQUAL(kind_namespace(vm), "tenant-a");
	CU_ASSERT_PTR_NULL(kind_label(vm, "nope"));
	CU_ASSERT_FALSE(kind_is_deleting(vm));
	CU_ASSERT_PTR_NULL(kind_get(vm, "spec", "running", "deeper", NULL));
	CU_ASSERT_PTR_NULL(kind_get_str(vm, "spec", "running", NULL)); /* a bool, not a string */

	CU_ASSERT_EQUAL(vm_network_count(vm), 7);
	CU_ASSERT_EQUAL(vm_network_at(vm, 0, &net), 0);
	CU_ASSERT_EQUAL(net.type, VM_NETWORK_POD);
	CU_ASSERT_EQUAL(vm_network_at(vm, 2, &net), 0);
	CU_ASSERT_EQUAL(net.type, VM_NETWORK_MULTUS);
	CU_ASSERT_STRING_EQUAL(net.name, "nic-annot");
	CU_ASSERT_STRING_EQUAL(net.multus_net, "net-2");
	CU_ASSERT_EQUAL(vm_network_at(vm, 7, &net), -ERANGE);
	CU_ASSERT_EQUAL(vm_interface_count(vm), 7);
	CU_ASSERT_EQUAL(vm_interface_at(vm, 2, &ifc), 0);
	CU_ASSERT_PTR_NULL(ifc.mac);
	json_decref(vm);
}

static void
test_kinds_nic_mac_and_ip(void)
{
	json_t *vm = load("controller-vm.json");
	char mac[MAC_STRLEN];
	const char *s = NULL;
	uint32_t ip = 0;

	CU_ASSERT_PTR_NOT_NULL_FATAL(vm);
	/* interface MAC wins, canonicalised */
	CU_ASSERT_EQUAL(vm_nic_mac(vm, "nic-static", mac), 0);
	CU_ASSERT_STRING_EQUAL(mac, "02:aa:bb:cc:dd:01");
	/* annotation fallback, canonicalised from dashes and upper case */
	CU_ASSERT_EQUAL(vm_nic_mac(vm, "nic-annot", mac), 0);
	CU_ASSERT_STRING_EQUAL(mac, "02:aa:bb:cc:dd:02");
	CU_ASSERT_EQUAL(vm_nic_mac(vm, "nic-nomac", mac), -ENOENT);
	CU_ASSERT_EQUAL(vm_nic_mac(vm, "nic-badmac", mac), -EINVAL);

	CU_ASSERT_EQUAL(vm_nic_static_ip(vm, "nic-static", &ip, &s), 0);
	CU_ASSERT_EQUAL(ip, 0x0a000032u);
	CU_ASSERT_STRING_EQUAL(s, "10.0.0.50");
	CU_ASSERT_EQUAL(vm_nic_static_ip(vm, "nic-badip", &ip, NULL), -EINVAL);
	CU_ASSERT_EQUAL(vm_nic_static_ip(vm, "nic-plain", &ip, NULL), -ENOENT);

	/* an annotation that is not a JSON object */
	json_object_set_new(json_object_get(json_object_get(vm, "metadata"), "annotations"),
	    KIND_ANNOT_VM_MACS, json_string("[1,2]"));
	CU_ASSERT_EQUAL(vm_nic_mac(vm, "nic-annot", mac), -EINVAL);
	json_decref(vm);
}

static void
test_kinds_refs(void)
{
	char ns[KIND_NS_MAX], name[KIND_NAME_MAX], out[KIND_REF_MAX];
	char longns[80];

	CU_ASSERT_EQUAL(kind_split_ref("net-1", "default", ns, name), 0);
	CU_ASSERT_STRING_EQUAL(ns, "default");
	CU_ASSERT_STRING_EQUAL(name, "net-1");
	CU_ASSERT_EQUAL(kind_canon_ref("a/b", "default", out), 0);
	CU_ASSERT_STRING_EQUAL(out, "a/b");
	CU_ASSERT_EQUAL(kind_canon_ref("b", "tenant", out), 0);
	CU_ASSERT_STRING_EQUAL(out, "tenant/b");
	CU_ASSERT_EQUAL(kind_split_ref("a/b/c", "default", ns, name), -EINVAL);
	CU_ASSERT_EQUAL(kind_split_ref("/b", "default", ns, name), -EINVAL);
	CU_ASSERT_EQUAL(kind_split_ref("a/", "default", ns, name), -EINVAL);
	CU_ASSERT_EQUAL(kind_split_ref("", "default", ns, name), -EINVAL);
	CU_ASSERT_EQUAL(kind_split_ref("b", NULL, ns, name), -EINVAL);
	memset(longns, 'n', 70);
	strcpy(longns + 70, "/x");
	CU_ASSERT_EQUAL(kind_split_ref(longns, "default", ns, name), -EINVAL);
}

static void
test_kinds_nad_deploy_node(void)
{
	json_t *nad = json_pack("{s:{s:s, s:{s:s}}}", "metadata", "name", "net-1", "labels",
	    KIND_LABEL_CLUSTER_NETWORK, "mgmt");
	json_t *plain = json_pack("{s:{s:s}}", "metadata", "name", "net-2");
	json_t *dep = json_pack("{s:{s:i}, s:{s:i}, s:{s:i, s:i, s:i}}", "metadata", "generation",
	    3, "spec", "replicas", 1, "status", "observedGeneration", 2, "readyReplicas", 1,
	    "availableReplicas", 1);
	json_t *node = json_pack("{s:{s:[{s:s, s:s}, {s:s, s:s}]}}", "status", "conditions", "type",
	    "MemoryPressure", "status", "False", "type", "Ready", "status", "True");
	const char *why = NULL;

	CU_ASSERT_STRING_EQUAL(nad_cluster_network(nad), "mgmt");
	CU_ASSERT_PTR_NULL(nad_cluster_network(plain));

	CU_ASSERT_FALSE(deployment_ready(dep, &why)); /* generation 3 not observed */
	CU_ASSERT_PTR_NOT_NULL(why);
	json_object_set_new(json_object_get(dep, "status"), "observedGeneration", json_integer(3));
	CU_ASSERT_TRUE(deployment_ready(dep, &why));
	CU_ASSERT_PTR_NULL(why);
	json_object_set_new(json_object_get(dep, "status"), "readyReplicas", json_integer(0));
	CU_ASSERT_FALSE(deployment_ready(dep, &why));
	CU_ASSERT_STRING_EQUAL(why, "agent pod not ready");
	json_object_set_new(json_object_get(dep, "spec"), "replicas", json_integer(0));
	CU_ASSERT_FALSE(deployment_ready(dep, NULL));

	CU_ASSERT_TRUE(node_is_ready(node));
	json_object_set_new(json_array_get(kind_get(node, "status", "conditions", NULL), 1),
	    "status", json_string("Unknown"));
	CU_ASSERT_FALSE(node_is_ready(node));
	CU_ASSERT_FALSE(node_is_ready(plain));

	json_decref(nad);
	json_decref(plain);
	json_decref(dep);
	json_decref(node);
}

static void
test_vm_plan(void)
{
	json_t *vm = load("controller-vm.json");
	struct vm_plan p;
	json_t *ncs, *ref;

	CU_ASSERT_PTR_NOT_NULL_FATAL(vm);
	CU_ASSERT_EQUAL_FATAL(vm_plan_build(vm, &p), 0);
	CU_ASSERT_STRING_EQUAL(kind_name(p.vmnetcfg), "vm-1");
	CU_ASSERT_STRING_EQUAL(kind_namespace(p.vmnetcfg), "tenant-a");
	CU_ASSERT_STRING_EQUAL(kind_get_str(p.vmnetcfg, "kind", NULL), VMNETCFG_KIND);
	CU_ASSERT_STRING_EQUAL(kind_label(p.vmnetcfg, KIND_LABEL_VM_NAME), "vm-1");
	CU_ASSERT_STRING_EQUAL(kind_get_str(p.vmnetcfg, "spec", "vmName", NULL), "vm-1");

	ref = json_array_get(kind_get(p.vmnetcfg, "metadata", "ownerReferences", NULL), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(ref, "kind")), "VirtualMachine");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(ref, "apiVersion")), "kubevirt.io/v1");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(ref, "uid")), "8d0c5a0e-7b0e-4c55-9f3f-1f2b3c4d5e6f");
	CU_ASSERT_TRUE(json_is_true(json_object_get(ref, "controller")));
	CU_ASSERT_TRUE(json_is_true(json_object_get(ref, "blockOwnerDeletion")));

	/* pod network skipped silently; three Multus NICs kept in the VM's order */
	ncs = kind_get(p.vmnetcfg, "spec", VMNETCFG_FIELD_NICS, NULL);
	CU_ASSERT_EQUAL_FATAL(json_array_size(ncs), 3);
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(ncs, 0), "networkName", NULL), "default/net-1");
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(ncs, 0), "macAddress", NULL), "02:aa:bb:cc:dd:01");
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(ncs, 0), "ipAddress", NULL), "10.0.0.50");
	/* a bare multus name resolves in the VM's namespace */
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(ncs, 1), "networkName", NULL), "tenant-a/net-2");
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(ncs, 1), "macAddress", NULL), "02:aa:bb:cc:dd:02");
	CU_ASSERT_PTR_NULL(kind_get(json_array_get(ncs, 1), "ipAddress", NULL));
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(ncs, 2), "macAddress", NULL), "02:aa:bb:cc:dd:06");

	/* the incomplete NICs are reported with a reason */
	CU_ASSERT_EQUAL_FATAL(p.n_skipped, 3);
	CU_ASSERT_STRING_EQUAL(p.skipped[0].nic, "nic-nomac");
	CU_ASSERT_STRING_EQUAL(p.skipped[0].reason, "no MAC address assigned yet");
	CU_ASSERT_STRING_EQUAL(p.skipped[1].nic, "nic-badmac");
	CU_ASSERT_STRING_EQUAL(p.skipped[1].reason, "invalid MAC address");
	CU_ASSERT_STRING_EQUAL(p.skipped[2].nic, "nic-badip");
	CU_ASSERT_STRING_EQUAL(p.skipped[2].reason, "invalid static IP annotation");
	vm_plan_clear(&p);
	CU_ASSERT_PTR_NULL(p.vmnetcfg);
	json_decref(vm);
}

static void
test_vm_plan_deterministic_and_invalid(void)
{
	json_t *vm = load("controller-vm.json");
	struct vm_plan a, b;

	CU_ASSERT_PTR_NOT_NULL_FATAL(vm);
	CU_ASSERT_EQUAL_FATAL(vm_plan_build(vm, &a), 0);
	CU_ASSERT_EQUAL_FATAL(vm_plan_build(vm, &b), 0);
	CU_ASSERT_TRUE(json_equal(a.vmnetcfg, b.vmnetcfg));
	vm_plan_clear(&a);
	vm_plan_clear(&b);

	json_object_del(json_object_get(vm, "metadata"), "uid");
	CU_ASSERT_EQUAL(vm_plan_build(vm, &a), -EINVAL);
	CU_ASSERT_PTR_NULL(a.vmnetcfg);
	vm_plan_clear(&a);
	json_decref(vm);
}

static void
test_vm_update_decision(void)
{
	json_t *vm = load("controller-vm.json");
	json_t *existing, *upd = NULL, *upd2 = NULL;
	struct vm_plan p;

	CU_ASSERT_PTR_NOT_NULL_FATAL(vm);
	CU_ASSERT_EQUAL_FATAL(vm_plan_build(vm, &p), 0);

	/* identical object: no write */
	existing = json_deep_copy(p.vmnetcfg);
	json_object_set_new(
	    json_object_get(existing, "metadata"), "resourceVersion", json_string("42"));
	CU_ASSERT_EQUAL(vm_vmnetcfg_update(existing, p.vmnetcfg, &upd), 0);
	CU_ASSERT_PTR_NULL(upd);

	/* a NIC removed in the existing spec, status and paused present: one update that
	 * keeps resourceVersion, status, paused and foreign labels */
	json_array_remove(kind_get(existing, "spec", VMNETCFG_FIELD_NICS, NULL), 1);
	json_object_set_new(json_object_get(existing, "spec"), "paused", json_true());
	json_object_set_new(existing, "status", json_pack("{s:[]}", "networkConfigs"));
	json_object_set_new(
	    kind_get(existing, "metadata", "labels", NULL), "team", json_string("blue"));
	CU_ASSERT_EQUAL(vm_vmnetcfg_update(existing, p.vmnetcfg, &upd), 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(upd);
	CU_ASSERT_EQUAL(json_array_size(kind_get(upd, "spec", VMNETCFG_FIELD_NICS, NULL)), 3);
	CU_ASSERT_STRING_EQUAL(kind_get_str(upd, "metadata", "resourceVersion", NULL), "42");
	CU_ASSERT_TRUE(json_is_true(kind_get(upd, "spec", "paused", NULL)));
	CU_ASSERT_PTR_NOT_NULL(kind_get(upd, "status", NULL));
	CU_ASSERT_STRING_EQUAL(kind_label(upd, "team"), "blue");
	/* applying the update again is a no-op (idempotent) */
	CU_ASSERT_EQUAL(vm_vmnetcfg_update(upd, p.vmnetcfg, &upd2), 0);
	CU_ASSERT_PTR_NULL(upd2);
	json_decref(upd);

	/* an object of our releases before the rename (the singular list only): the update
	 * writes the plural and drops the singular */
	upd = json_deep_copy(p.vmnetcfg);
	json_object_set(json_object_get(upd, "spec"), VMNETCFG_FIELD_NICS_OLD,
	    kind_get(upd, "spec", VMNETCFG_FIELD_NICS, NULL));
	json_object_del(json_object_get(upd, "spec"), VMNETCFG_FIELD_NICS);
	CU_ASSERT_EQUAL(vm_vmnetcfg_update(upd, p.vmnetcfg, &upd2), 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(upd2);
	CU_ASSERT_EQUAL(json_array_size(kind_get(upd2, "spec", VMNETCFG_FIELD_NICS, NULL)), 3);
	CU_ASSERT_PTR_NULL(kind_get(upd2, "spec", VMNETCFG_FIELD_NICS_OLD, NULL));
	json_decref(upd2);
	upd2 = NULL;
	/* both lists, the plural already right: the singular still goes */
	json_object_set(json_object_get(upd, "spec"), VMNETCFG_FIELD_NICS,
	    kind_get(p.vmnetcfg, "spec", VMNETCFG_FIELD_NICS, NULL));
	CU_ASSERT_EQUAL(vm_vmnetcfg_update(upd, p.vmnetcfg, &upd2), 1);
	CU_ASSERT_PTR_NULL(kind_get(upd2, "spec", VMNETCFG_FIELD_NICS_OLD, NULL));
	json_decref(upd2);
	upd2 = NULL;
	json_decref(upd);

	/* an unowned VMNetCfg is adopted (ownerReference added) */
	json_object_del(json_object_get(existing, "metadata"), "ownerReferences");
	CU_ASSERT_EQUAL(vm_vmnetcfg_update(existing, p.vmnetcfg, &upd), 1);
	CU_ASSERT_EQUAL(json_array_size(kind_get(upd, "metadata", "ownerReferences", NULL)), 1);
	json_decref(upd);

	/* owned by another VM (same name, other uid): refuse */
	json_object_set_new(json_object_get(existing, "metadata"), "ownerReferences",
	    json_pack("[{s:s, s:s, s:s, s:s, s:b}]", "apiVersion", "kubevirt.io/v1", "kind",
		"VirtualMachine", "name", "vm-1", "uid", "old-uid", "controller", 1));
	CU_ASSERT_EQUAL(vm_vmnetcfg_update(existing, p.vmnetcfg, &upd), -EEXIST);
	CU_ASSERT_PTR_NULL(upd);

	json_decref(existing);
	vm_plan_clear(&p);
	json_decref(vm);
}

static void
set_statics(json_t *vm, const char *value)
{
	json_object_set_new(kind_get(vm, "metadata", "annotations", NULL), VM_ANNOT_STATIC_NICS,
	    json_string(value));
}

static void
test_static_nics_has(void)
{
	CU_ASSERT_FALSE(vm_static_nics_has(NULL, "a"));
	CU_ASSERT_FALSE(vm_static_nics_has("", "a"));
	CU_ASSERT_FALSE(vm_static_nics_has(" , ,", "a"));
	CU_ASSERT_TRUE(vm_static_nics_has("a", "a"));
	CU_ASSERT_TRUE(vm_static_nics_has("b,a", "a"));
	CU_ASSERT_TRUE(vm_static_nics_has(" b ,\ta\n", "a"));
	CU_ASSERT_FALSE(vm_static_nics_has("ab,ba,a b", "a")); /* whole names only */
	CU_ASSERT_FALSE(vm_static_nics_has("A", "a"));	       /* names are case-sensitive */
	CU_ASSERT_TRUE(vm_static_nics_has("*", "anything"));
	CU_ASSERT_TRUE(vm_static_nics_has("x, * ", "anything"));
	CU_ASSERT_FALSE(vm_static_nics_has("**", "a"));
}

static void
test_static_nics_unknown(void)
{
	json_t *vm = load("controller-vm.json");
	char *u = (char *)"unset";

	CU_ASSERT_PTR_NOT_NULL_FATAL(vm);
	CU_ASSERT_EQUAL(vm_static_nics_unknown(vm, NULL, &u), 0);
	CU_ASSERT_PTR_NULL(u);
	/* NICs of the VM (the pod network's too) and "*" are known */
	CU_ASSERT_EQUAL(vm_static_nics_unknown(vm, "*, default,nic-plain", &u), 0);
	CU_ASSERT_PTR_NULL(u);
	/* unknown ones in the order written, each once */
	CU_ASSERT_EQUAL(vm_static_nics_unknown(vm, " eth9 ,nic-plain, eth0,eth9,,eth0 ", &u), 0);
	CU_ASSERT_PTR_NOT_NULL_FATAL(u);
	CU_ASSERT_STRING_EQUAL(u, "eth9, eth0");
	free(u);
	json_decref(vm);
}

static void
test_vm_plan_static_nics(void)
{
	json_t *vm = load("controller-vm.json"), *ncs;
	struct vm_plan p;

	CU_ASSERT_PTR_NOT_NULL_FATAL(vm);
	/* listed NICs leave networkConfigs, static-ip annotation or not; unknown names told */
	set_statics(vm, " nic-static , nic-plain,bogus, ,bogus");
	CU_ASSERT_EQUAL_FATAL(vm_plan_build(vm, &p), 0);
	ncs = kind_get(p.vmnetcfg, "spec", VMNETCFG_FIELD_NICS, NULL);
	CU_ASSERT_EQUAL_FATAL(json_array_size(ncs), 1);
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(ncs, 0), "macAddress", NULL), "02:aa:bb:cc:dd:02");
	CU_ASSERT_EQUAL(p.n_static, 2);
	CU_ASSERT_EQUAL(p.n_skipped, 3); /* the incomplete ones not listed are still reported */
	CU_ASSERT_STRING_EQUAL(p.unknown_static, "bogus");
	vm_plan_clear(&p);
	CU_ASSERT_PTR_NULL(p.unknown_static);

	/* a listed NIC that could not be described anyway is not reported as skipped */
	set_statics(vm, "nic-nomac,nic-badmac");
	CU_ASSERT_EQUAL_FATAL(vm_plan_build(vm, &p), 0);
	CU_ASSERT_EQUAL(p.n_skipped, 1);
	CU_ASSERT_EQUAL(p.n_static, 2);
	CU_ASSERT_PTR_NULL(p.unknown_static);
	vm_plan_clear(&p);

	/* "*": every Multus NIC is static, the desired spec has no NIC */
	set_statics(vm, "*");
	CU_ASSERT_EQUAL_FATAL(vm_plan_build(vm, &p), 0);
	ncs = kind_get(p.vmnetcfg, "spec", VMNETCFG_FIELD_NICS, NULL);
	CU_ASSERT_TRUE(json_is_array(ncs));
	CU_ASSERT_EQUAL(json_array_size(ncs), 0);
	CU_ASSERT_EQUAL(p.n_static, 6);
	CU_ASSERT_EQUAL(p.n_skipped, 0);
	vm_plan_clear(&p);

	/* an empty value lists nothing */
	set_statics(vm, "");
	CU_ASSERT_EQUAL_FATAL(vm_plan_build(vm, &p), 0);
	CU_ASSERT_EQUAL(
	    json_array_size(kind_get(p.vmnetcfg, "spec", VMNETCFG_FIELD_NICS, NULL)), 3);
	CU_ASSERT_EQUAL(p.n_static, 0);
	vm_plan_clear(&p);
	json_decref(vm);
}

/* Adding a NIC to the annotation drops its entry from an existing VMNetCfg (which releases
 * its address); removing it puts the entry back. */
static void
test_vm_update_static_nics(void)
{
	json_t *vm = load("controller-vm.json"), *existing, *upd = NULL, *ncs;
	struct vm_plan all, some, none;

	CU_ASSERT_PTR_NOT_NULL_FATAL(vm);
	CU_ASSERT_EQUAL_FATAL(vm_plan_build(vm, &all), 0);
	set_statics(vm, "nic-annot");
	CU_ASSERT_EQUAL_FATAL(vm_plan_build(vm, &some), 0);
	set_statics(vm, "*");
	CU_ASSERT_EQUAL_FATAL(vm_plan_build(vm, &none), 0);

	existing = json_deep_copy(all.vmnetcfg);
	CU_ASSERT_EQUAL(vm_vmnetcfg_update(existing, some.vmnetcfg, &upd), 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(upd);
	ncs = kind_get(upd, "spec", VMNETCFG_FIELD_NICS, NULL);
	CU_ASSERT_EQUAL_FATAL(json_array_size(ncs), 2);
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(ncs, 0), "macAddress", NULL), "02:aa:bb:cc:dd:01");
	CU_ASSERT_STRING_EQUAL(
	    kind_get_str(json_array_get(ncs, 1), "macAddress", NULL), "02:aa:bb:cc:dd:06");
	json_decref(existing);
	existing = upd;
	upd = NULL;
	/* all static: the object stays, with no NIC */
	CU_ASSERT_EQUAL(vm_vmnetcfg_update(existing, none.vmnetcfg, &upd), 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(upd);
	CU_ASSERT_EQUAL(json_array_size(kind_get(upd, "spec", VMNETCFG_FIELD_NICS, NULL)), 0);
	json_decref(existing);
	existing = upd;
	upd = NULL;
	/* annotation removed: all three back */
	CU_ASSERT_EQUAL(vm_vmnetcfg_update(existing, all.vmnetcfg, &upd), 1);
	CU_ASSERT_PTR_NOT_NULL_FATAL(upd);
	CU_ASSERT_TRUE(
	    json_equal(kind_get(upd, "spec", NULL), kind_get(all.vmnetcfg, "spec", NULL)));
	json_decref(upd);
	json_decref(existing);
	vm_plan_clear(&all);
	vm_plan_clear(&some);
	vm_plan_clear(&none);
	json_decref(vm);
}

static const struct test_case kinds_tests[] = {
    {"getters", test_kinds_getters},
    {"nic mac and static ip", test_kinds_nic_mac_and_ip},
    {"network refs", test_kinds_refs},
    {"nad, deployment, node", test_kinds_nad_deploy_node},
    {NULL, NULL},
};

static const struct test_case vm_tests[] = {
    {"plan from VM", test_vm_plan},
    {"deterministic, invalid VM", test_vm_plan_deterministic_and_invalid},
    {"update decision", test_vm_update_decision},
    {"static NICs: names", test_static_nics_has},
    {"static NICs: unknown names", test_static_nics_unknown},
    {"static NICs: plan", test_vm_plan_static_nics},
    {"static NICs: update releases and binds", test_vm_update_static_nics},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "kinds", .tests = kinds_tests},
    {.name = "vm", .tests = vm_tests},
    {.name = NULL},
};
