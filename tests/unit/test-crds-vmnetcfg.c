/* SPDX-License-Identifier: Apache-2.0 */
/* crds/vmnetcfg.c and crds/conditions.c: round trips, errors with paths, condition rules. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "crds/conditions.h"
#include "crds/vmnetcfg.h"
#include "lib/util.h"
#include "tests/runner.h"

static const char full_cfg[] =
    "{\"apiVersion\": \"network.harvesterhci.io/v1alpha1\","
    " \"kind\": \"VirtualMachineNetworkConfig\","
    " \"metadata\": {\"name\": \"vm1\", \"namespace\": \"default\","
    "  \"labels\": {\"harvesterhci.io/vmName\": \"vm1\"},"
    "  \"deletionTimestamp\": \"2024-05-01T12:00:00Z\"},"
    " \"spec\": {\"vmName\": \"vm1\", \"paused\": true, \"networkConfigs\": ["
    "  {\"networkName\": \"default/net-48\", \"macAddress\": \"52:54:00:aa:bb:01\","
    "   \"ipAddress\": \"192.168.48.100\"},"
    "  {\"networkName\": \"lab/net-49\", \"macAddress\": \"52:54:00:aa:bb:02\"}]},"
    " \"status\": {\"networkConfigs\": ["
    "  {\"allocatedIPAddress\": \"192.168.48.100\", \"macAddress\": \"52:54:00:aa:bb:01\","
    "   \"networkName\": \"default/net-48\", \"state\": \"Allocated\"},"
    "  {\"macAddress\": \"52:54:00:aa:bb:02\", \"networkName\": \"lab/net-49\","
    "   \"state\": \"Pending\"}],"
    "  \"conditions\": [{\"type\": \"Allocated\", \"status\": \"False\","
    "   \"reason\": \"NoPool\", \"message\": \"no IPPool for lab/net-49\","
    "   \"lastUpdateTime\": \"2024-05-01T10:00:00Z\","
    "   \"lastTransitionTime\": \"2024-05-01T09:00:00Z\"}]}}";

static json_t *
load(const char *text)
{
	json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);

	if (!j)
		abort();
	return j;
}

/* harvester/vm-dhcp-controller v0.1.0 (and our releases before the rename, beside state)
 * wrote the NIC state as "status": read when state is absent, never written. */
static void
test_go_project_status_field(void)
{
	json_t *j =
	    load("{\"apiVersion\": \"network.harvesterhci.io/v1alpha1\","
		 " \"kind\": \"VirtualMachineNetworkConfig\","
		 " \"metadata\": {\"name\": \"vm1\", \"namespace\": \"default\"},"
		 " \"spec\": {\"vmName\": \"vm1\", \"networkConfigs\": ["
		 "  {\"networkName\": \"default/net-48\", \"macAddress\": \"52:54:00:AA:BB:01\"}]},"
		 " \"status\": {\"networkConfigs\": [{\"allocatedIPAddress\": \"192.168.48.7\","
		 "  \"macAddress\": \"52:54:00:aa:bb:01\", \"networkName\": \"default/net-48\","
		 "  \"status\": \"Allocated\"}]}}");
	struct vmnetcfg *c = NULL;
	struct crd_error err;

	json_t *out, *nic;

	CU_ASSERT_EQUAL_FATAL(vmnetcfg_decode(j, &c, &err), 0);
	CU_ASSERT_EQUAL_FATAL(c->status.n_nics, 1);
	CU_ASSERT_EQUAL(c->status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	out = vmnetcfg_status_encode(&c->status);
	nic = json_array_get(json_object_get(out, "networkConfigs"), 0);
	CU_ASSERT_STRING_EQUAL(json_string_value(json_object_get(nic, "state")), "Allocated");
	CU_ASSERT_PTR_NULL(json_object_get(nic, "status"));
	json_decref(out);
	vmnetcfg_free(c);
	json_decref(j);
	/* state wins over status */
	j = load("{\"spec\": {\"vmName\": \"v\"}, \"status\": {\"networkConfigs\": [{\"state\": "
		 "\"Pending\", \"status\": \"Allocated\"}]}}");
	CU_ASSERT_EQUAL_FATAL(vmnetcfg_decode(j, &c, &err), 0);
	CU_ASSERT_EQUAL(c->status.nics[0].state, VMNETCFG_STATE_PENDING);
	vmnetcfg_free(c);
	json_decref(j);
}

/* The singular list of our releases before the rename (and of the Go project's v0.1.0) is
 * read when the plural is absent, in spec and in status; writes carry the plural only. */
static void
test_singular_alias(void)
{
	json_t *j = load("{\"spec\": {\"vmName\": \"v\", \"networkConfig\": ["
			 "{\"networkName\": \"net\", \"macAddress\": \"52:54:00:00:00:01\","
			 " \"ipAddress\": \"10.0.0.9\"}]},"
			 " \"status\": {\"networkConfig\": [{\"macAddress\": \"52:54:00:00:00:01\","
			 " \"networkName\": \"default/net\", \"allocatedIPAddress\": \"10.0.0.9\","
			 " \"state\": \"Allocated\", \"status\": \"Allocated\"}]}}");
	json_t *out, *want;
	struct vmnetcfg *c = NULL;
	struct vmnetcfg_spec spec;
	struct vmnetcfg_status st;
	struct crd_error err;

	CU_ASSERT_EQUAL_FATAL(vmnetcfg_decode(j, &c, &err), 0);
	CU_ASSERT_EQUAL_FATAL(c->spec.n_nics, 1);
	CU_ASSERT_STRING_EQUAL(c->spec.nics[0].network_name, "default/net");
	CU_ASSERT_EQUAL_FATAL(c->status.n_nics, 1);
	CU_ASSERT_EQUAL(c->status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	out = vmnetcfg_encode(c);
	want = load("{\"apiVersion\": \"network.harvesterhci.io/v1alpha1\","
		    " \"kind\": \"VirtualMachineNetworkConfig\", \"metadata\": {},"
		    " \"spec\": {\"vmName\": \"v\", \"networkConfigs\": ["
		    "{\"networkName\": \"default/net\", \"macAddress\": \"52:54:00:00:00:01\","
		    " \"ipAddress\": \"10.0.0.9\"}]},"
		    " \"status\": {\"networkConfigs\": [{\"macAddress\": \"52:54:00:00:00:01\","
		    " \"networkName\": \"default/net\", \"allocatedIPAddress\": \"10.0.0.9\","
		    " \"state\": \"Allocated\"}]}}");
	CU_ASSERT_TRUE(json_equal(out, want));
	if (!json_equal(out, want)) {
		char *t = json_dumps(out, JSON_SORT_KEYS);

		printf("\n  got %s\n", t);
		free(t);
	}
	json_decref(want);
	json_decref(out);
	c = vmnetcfg_free(c);
	/* the part decoders too */
	CU_ASSERT_EQUAL(vmnetcfg_spec_decode(json_object_get(j, "spec"), &spec, &err), 0);
	CU_ASSERT_EQUAL(spec.n_nics, 1);
	vmnetcfg_spec_clear(&spec);
	CU_ASSERT_EQUAL(vmnetcfg_status_decode(json_object_get(j, "status"), &st, &err), 0);
	CU_ASSERT_EQUAL(st.n_nics, 1);
	vmnetcfg_status_clear(&st);
	json_decref(j);

	/* both present: the plural wins, the singular is dropped */
	j = load("{\"spec\": {\"vmName\": \"v\", \"networkConfigs\": [],"
		 " \"networkConfig\": [{\"networkName\": \"net\", \"macAddress\": "
		 "\"52:54:00:00:00:01\"}]}}");
	CU_ASSERT_EQUAL_FATAL(vmnetcfg_decode(j, &c, &err), 0);
	CU_ASSERT_EQUAL(c->spec.n_nics, 0);
	out = vmnetcfg_spec_encode(&c->spec);
	CU_ASSERT_PTR_NULL(json_object_get(out, "networkConfig"));
	CU_ASSERT_EQUAL(json_array_size(json_object_get(out, "networkConfigs")), 0);
	json_decref(out);
	vmnetcfg_free(c);
	json_decref(j);
}

static void
test_decode_and_round_trip(void)
{
	json_t *j = load(full_cfg), *out;
	struct vmnetcfg *c = NULL, *c2 = NULL;
	struct crd_error err;
	uint32_t a;

	CU_ASSERT_EQUAL_FATAL(vmnetcfg_decode(j, &c, &err), 0);
	CU_ASSERT_STRING_EQUAL(c->spec.vm_name, "vm1");
	CU_ASSERT_TRUE(c->spec.paused);
	CU_ASSERT_EQUAL_FATAL(c->spec.n_nics, 2);
	CU_ASSERT_STRING_EQUAL(c->spec.nics[1].network_name, "lab/net-49");
	CU_ASSERT_STRING_EQUAL(c->spec.nics[0].mac, "52:54:00:aa:bb:01");
	ipv4_parse("192.168.48.100", &a);
	CU_ASSERT_EQUAL(c->spec.nics[0].ip_address, a);
	CU_ASSERT_EQUAL(c->spec.nics[1].ip_address, 0);
	CU_ASSERT_EQUAL_FATAL(c->status.n_nics, 2);
	CU_ASSERT_EQUAL(c->status.nics[0].state, VMNETCFG_STATE_ALLOCATED);
	CU_ASSERT_EQUAL(c->status.nics[0].allocated_ip, a);
	CU_ASSERT_EQUAL(c->status.nics[1].state, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(c->status.conditions.n, 1);
	CU_ASSERT_EQUAL(c->meta.deletion_timestamp, 1714564800);

	out = vmnetcfg_encode(c);
	CU_ASSERT_TRUE(json_equal(out, j));
	CU_ASSERT_EQUAL_FATAL(vmnetcfg_decode(out, &c2, &err), 0);
	CU_ASSERT_EQUAL(c2->spec.n_nics, 2);
	json_decref(out);
	vmnetcfg_free(c2);
	vmnetcfg_free(c);
	json_decref(j);
}

static void
test_canonical(void)
{
	json_t *j =
	    load("{\"spec\": {\"vmName\": \"v\", \"networkConfigs\": [{\"networkName\": "
		 "\"net\", \"macAddress\": \"52-54-00-AA-BB-0F\"}, {\"networkName\": \"net\", "
		 "\"macAddress\": \"5254.00aa.bb10\"}]}}");
	struct vmnetcfg *c = NULL;
	struct crd_error err;
	json_t *spec;

	CU_ASSERT_EQUAL_FATAL(vmnetcfg_decode(j, &c, &err), 0);
	CU_ASSERT_STRING_EQUAL(c->spec.nics[0].network_name, "default/net");
	CU_ASSERT_STRING_EQUAL(c->spec.nics[0].mac, "52:54:00:aa:bb:0f");
	CU_ASSERT_STRING_EQUAL(c->spec.nics[1].mac, "52:54:00:aa:bb:10");
	spec = vmnetcfg_spec_encode(&c->spec);
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(
		json_array_get(json_object_get(spec, "networkConfigs"), 0), "macAddress")),
	    "52:54:00:aa:bb:0f");
	json_decref(spec);
	vmnetcfg_free(c);
	json_decref(j);
}

struct bad_case {
	const char *json;
	const char *message;
};

#define NIC(net, mac) "{\"networkName\": \"" net "\", \"macAddress\": \"" mac "\"}"

static const struct bad_case bad_cases[] = {
    {"{}", "spec: required"},
    {"{\"spec\": {}}", "spec.vmName: required"},
    {"{\"spec\": {\"vmName\": \"\"}}", "spec.vmName: must not be empty"},
    {"{\"spec\": {\"vmName\": 1}}", "spec.vmName: must be a string"},
    {"{\"spec\": {\"vmName\": \"v\", \"networkConfig\": [" NIC("net", "zz") "]}}",
	"spec.networkConfig[0].macAddress: \"zz\" is not a MAC address"},
    {"{\"spec\": {\"vmName\": \"v\"}, \"status\": {\"networkConfigs\": [{\"status\": "
     "\"Bound\"}]}}",
	"status.networkConfigs[0].status: \"Bound\" is not one of the allowed values"},
    {"{\"spec\": {\"vmName\": \"v\", \"nics\": []}}", "spec.nics: unknown field"},
    {"{\"spec\": {\"vmName\": \"v\", \"networkConfigs\": [" NIC("net", "zz") "]}}",
	"spec.networkConfigs[0].macAddress: \"zz\" is not a MAC address"},
    {"{\"spec\": {\"vmName\": \"v\", \"networkConfigs\": [{\"networkName\": \"n\"}]}}",
	"spec.networkConfigs[0].macAddress: required"},
    {"{\"spec\": {\"vmName\": \"v\", \"networkConfigs\": [{\"macAddress\": "
     "\"52:54:00:00:00:01\"}]}}",
	"spec.networkConfigs[0].networkName: required"},
    {"{\"spec\": {\"vmName\": \"v\", \"networkConfigs\": [" NIC("a/b/c", "52:54:00:00:00:01") "]}}",
	"spec.networkConfigs[0].networkName: \"a/b/c\" is not a \"namespace/name\" or "
	"\"name\""},
    {"{\"spec\": {\"vmName\": \"v\", \"networkConfigs\": [{\"networkName\": \"n\", "
     "\"macAddress\": \"52:54:00:00:00:01\", \"ipAddress\": \"1.2.3\"}]}}",
	"spec.networkConfigs[0].ipAddress: \"1.2.3\" is not an IPv4 address"},
    {"{\"spec\": {\"vmName\": \"v\", \"networkConfigs\": [{\"networkName\": \"n\", "
     "\"macAddress\": \"52:54:00:00:00:01\", \"ip\": \"1.2.3.4\"}]}}",
	"spec.networkConfigs[0].ip: unknown field"},
    {"{\"spec\": {\"vmName\": \"v\", \"networkConfigs\": [" NIC("n", "52:54:00:00:00:01") ", " NIC(
	 "default/n", "52-54-00-00-00-01") "]}}",
	"spec.networkConfigs[1].macAddress: 52:54:00:00:00:01 is already used on network "
	"default/n by networkConfigs[0]"},
    {"{\"spec\": {\"vmName\": \"v\", \"networkConfigs\": {}}}",
	"spec.networkConfigs: must be an array"},
    {"{\"spec\": {\"vmName\": \"v\"}, \"status\": {\"networkConfigs\": [{\"state\": "
     "\"Bound\"}]}}",
	"status.networkConfigs[0].state: \"Bound\" is not one of the allowed "
	"values"},
    {"{\"spec\": {\"vmName\": \"v\"}, \"status\": {\"networkConfigs\": [{\"macAddress\": "
     "\"x\"}]}}",
	"status.networkConfigs[0].macAddress: \"x\" is not a MAC address"},
    {"{\"spec\": {\"vmName\": \"v\"}, \"status\": {\"conditions\": [{\"status\": "
     "\"True\"}]}}",
	"status.conditions[0].type: required"},
    {"{\"kind\": \"IPPool\", \"spec\": {\"vmName\": \"v\"}}",
	"kind: \"IPPool\" is not VirtualMachineNetworkConfig"},
    {"{\"metadata\": {\"finalizers\": [1]}, \"spec\": {\"vmName\": \"v\"}}",
	"metadata.finalizers[0]: must be a string"},
    {"{\"metadata\": {\"creationTimestamp\": \"now\"}, \"spec\": {\"vmName\": \"v\"}}",
	"metadata.creationTimestamp: is not an RFC 3339 date-time"},
};

static void
test_errors(void)
{
	for (size_t i = 0; i < ELEMENTSOF(bad_cases); i++) {
		json_t *j = load(bad_cases[i].json);
		struct vmnetcfg *c = NULL;
		struct crd_error err = {0};
		int r = vmnetcfg_decode(j, &c, &err);

		CU_ASSERT_EQUAL(r, -EINVAL);
		CU_ASSERT_PTR_NULL(c);
		if (r != -EINVAL || strcmp(err.message, bad_cases[i].message) != 0) {
			printf("\n  case %zu: r=%d\n    got:  %s\n    want: %s\n", i, r,
			    err.message, bad_cases[i].message);
			CU_FAIL("error message differs");
		}
		vmnetcfg_free(c);
		json_decref(j);
	}
}

static void
test_limits(void)
{
	json_t *j = load("{\"spec\": {\"vmName\": \"v\", \"networkConfigs\": []}}");
	json_t *nics = json_object_get(json_object_get(j, "spec"), "networkConfigs");
	struct vmnetcfg *c = NULL;
	struct crd_error err;

	/* 32 NICs are fine (the old project stopped at 4); 33 are not. */
	for (int i = 0; i < 32; i++) {
		char mac[MAC_STRLEN];

		snprintf(mac, sizeof(mac), "52:54:00:00:00:%02x", i);
		json_array_append_new(
		    nics, json_pack("{s:s, s:s}", "networkName", "net", "macAddress", mac));
	}
	CU_ASSERT_EQUAL_FATAL(vmnetcfg_decode(j, &c, &err), 0);
	CU_ASSERT_EQUAL(c->spec.n_nics, 32);
	c = vmnetcfg_free(c);
	json_array_append_new(
	    nics, json_pack("{s:s, s:s}", "networkName", "net", "macAddress", "52:54:00:00:01:00"));
	CU_ASSERT_EQUAL(vmnetcfg_decode(j, &c, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.message, "spec.networkConfigs: at most 32 items (got 33)");
	json_decref(j);
}

static void
test_states(void)
{
	enum vmnetcfg_state s;

	CU_ASSERT_STRING_EQUAL(vmnetcfg_state_string(VMNETCFG_STATE_STALE), "Stale");
	CU_ASSERT_STRING_EQUAL(vmnetcfg_state_string(VMNETCFG_STATE_NONE), "");
	CU_ASSERT_EQUAL(vmnetcfg_state_parse("Pending", &s), 0);
	CU_ASSERT_EQUAL(s, VMNETCFG_STATE_PENDING);
	CU_ASSERT_EQUAL(vmnetcfg_state_parse("", &s), -EINVAL);
	CU_ASSERT_EQUAL(vmnetcfg_state_parse("pending", &s), -EINVAL);
}

/* --- conditions ---------------------------------------------------------------------- */

static void
test_condition_set(void)
{
	struct crd_conditions conds = {0};
	const struct crd_condition *c;

	CU_ASSERT_EQUAL(
	    crd_conditions_set(&conds, "Allocated", CRD_COND_FALSE, "Pending", "waiting", 0, 100),
	    1);
	c = crd_conditions_get(&conds, "Allocated");
	CU_ASSERT_PTR_NOT_NULL_FATAL(c);
	CU_ASSERT_EQUAL(c->last_transition_time, 100);
	CU_ASSERT_EQUAL(c->last_update_time, 100);
	/* Same status, reason, message: nothing changes, not even lastUpdateTime. */
	CU_ASSERT_EQUAL(
	    crd_conditions_set(&conds, "Allocated", CRD_COND_FALSE, "Pending", "waiting", 0, 200),
	    0);
	c = crd_conditions_get(&conds, "Allocated");
	CU_ASSERT_EQUAL(c->last_update_time, 100);
	/* New message, same status: update time moves, transition time stays. */
	CU_ASSERT_EQUAL(crd_conditions_set(&conds, "Allocated", CRD_COND_FALSE, "Pending",
			    "still waiting", 0, 300),
	    1);
	c = crd_conditions_get(&conds, "Allocated");
	CU_ASSERT_EQUAL(c->last_update_time, 300);
	CU_ASSERT_EQUAL(c->last_transition_time, 100);
	CU_ASSERT_STRING_EQUAL(c->message, "still waiting");
	/* Status change: both move. */
	CU_ASSERT_EQUAL(
	    crd_conditions_set(&conds, "Allocated", CRD_COND_TRUE, NULL, NULL, 0, 400), 1);
	c = crd_conditions_get(&conds, "Allocated");
	CU_ASSERT_EQUAL(c->last_transition_time, 400);
	CU_ASSERT_EQUAL(c->status, CRD_COND_TRUE);
	CU_ASSERT_PTR_NULL(c->reason);
	CU_ASSERT_PTR_NULL(c->message);
	/* Another type is added alongside. */
	CU_ASSERT_EQUAL(
	    crd_conditions_set(&conds, "InSynced", CRD_COND_UNKNOWN, "", "", 0, 500), 1);
	CU_ASSERT_EQUAL(conds.n, 2);
	/* Same facts computed from a newer generation: observedGeneration and the update time
	 * move (the status is written once more), the transition time stays; then idle. */
	CU_ASSERT_EQUAL(
	    crd_conditions_set(&conds, "Allocated", CRD_COND_TRUE, NULL, NULL, 2, 600), 1);
	c = crd_conditions_get(&conds, "Allocated");
	CU_ASSERT_EQUAL(c->observed_generation, 2);
	CU_ASSERT_EQUAL(c->last_update_time, 600);
	CU_ASSERT_EQUAL(c->last_transition_time, 400);
	CU_ASSERT_EQUAL(
	    crd_conditions_set(&conds, "Allocated", CRD_COND_TRUE, NULL, NULL, 2, 700), 0);
	CU_ASSERT_EQUAL(crd_conditions_get(&conds, "Allocated")->last_update_time, 600);
	CU_ASSERT_EQUAL(crd_conditions_get(&conds, "InSynced")->observed_generation, 0);
	CU_ASSERT_PTR_NULL(crd_conditions_get(&conds, "Disabled"));
	CU_ASSERT_STRING_EQUAL(crd_cond_status_string(CRD_COND_UNKNOWN), "Unknown");
	crd_conditions_clear(&conds);
	CU_ASSERT_EQUAL(conds.n, 0);
}

static void
test_condition_codec(void)
{
	struct crd_conditions conds = {0}, copy, back;
	struct crd_error err;
	json_t *a;

	crd_conditions_set(
	    &conds, "Registered", CRD_COND_TRUE, "Placed", "agent on node1", 7, 1714557600);
	crd_conditions_set(&conds, "Stopped", CRD_COND_FALSE, NULL, NULL, 0, 1714557601);
	a = crd_conditions_encode(&conds);
	CU_ASSERT_EQUAL_FATAL(json_array_size(a), 2);
	/* observedGeneration written when known, left out when not (0) */
	CU_ASSERT_EQUAL(
	    json_integer_value(json_object_get(json_array_get(a, 0), "observedGeneration")), 7);
	CU_ASSERT_PTR_NULL(json_object_get(json_array_get(a, 1), "observedGeneration"));
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_array_get(a, 0), "lastTransitionTime")),
	    "2024-05-01T10:00:00Z");
	CU_ASSERT_STRING_EQUAL(
	    json_string_value(json_object_get(json_array_get(a, 1), "status")), "False");
	CU_ASSERT_PTR_NULL(json_object_get(json_array_get(a, 1), "reason"));
	CU_ASSERT_EQUAL_FATAL(crd_conditions_decode(a, "status.conditions", &back, &err), 0);
	CU_ASSERT_EQUAL(back.n, 2);
	CU_ASSERT_EQUAL(back.items[0].last_update_time, 1714557600);
	CU_ASSERT_EQUAL(back.items[0].observed_generation, 7);
	CU_ASSERT_EQUAL(back.items[1].observed_generation, 0);
	CU_ASSERT_EQUAL(crd_conditions_copy(&copy, &back), 0);
	CU_ASSERT_STRING_EQUAL(copy.items[0].message, "agent on node1");
	CU_ASSERT_EQUAL(copy.items[0].observed_generation, 7);
	crd_conditions_clear(&copy);
	crd_conditions_clear(&back);
	json_decref(a);
	/* An empty time string (as some writers leave it) is unset. */
	a = load("[{\"type\": \"A\", \"status\": \"True\", \"lastUpdateTime\": \"\"}]");
	CU_ASSERT_EQUAL(crd_conditions_decode(a, "status.conditions", &back, &err), 0);
	CU_ASSERT_EQUAL(back.items[0].last_update_time, 0);
	crd_conditions_clear(&back);
	json_decref(a);
	/* observedGeneration is an integer: anything else is refused with its path */
	a = load("[{\"type\": \"A\", \"status\": \"True\", \"observedGeneration\": \"7\"}]");
	CU_ASSERT_EQUAL(crd_conditions_decode(a, "status.conditions", &back, &err), -EINVAL);
	CU_ASSERT_STRING_EQUAL(err.path, "status.conditions[0].observedGeneration");
	CU_ASSERT_EQUAL(back.n, 0);
	json_decref(a);
	crd_conditions_clear(&conds);
}

/* observedGeneration survives a whole object's decode and encode. */
static void
test_condition_generation_round_trip(void)
{
	json_t *j = load("{\"metadata\": {\"name\": \"vm1\", \"namespace\": \"default\","
			 " \"generation\": 4},"
			 " \"spec\": {\"vmName\": \"vm1\", \"networkConfigs\": []},"
			 " \"status\": {\"conditions\": [{\"type\": \"Allocated\","
			 "  \"status\": \"True\", \"reason\": \"Allocated\","
			 "  \"observedGeneration\": 3}]}}");
	struct vmnetcfg *c = NULL, *c2 = NULL;
	struct crd_error err;
	json_t *out, *cond;

	CU_ASSERT_EQUAL_FATAL(vmnetcfg_decode(j, &c, &err), 0);
	CU_ASSERT_EQUAL(c->meta.generation, 4);
	CU_ASSERT_EQUAL_FATAL(c->status.conditions.n, 1);
	CU_ASSERT_EQUAL(c->status.conditions.items[0].observed_generation, 3);
	out = vmnetcfg_encode(c);
	CU_ASSERT_PTR_NOT_NULL_FATAL(out);
	cond = json_array_get(json_object_get(json_object_get(out, "status"), "conditions"), 0);
	CU_ASSERT_EQUAL(json_integer_value(json_object_get(cond, "observedGeneration")), 3);
	CU_ASSERT_EQUAL(vmnetcfg_decode(out, &c2, &err), 0);
	CU_ASSERT_TRUE(c2 != NULL && c2->status.conditions.n == 1 &&
		       c2->status.conditions.items[0].observed_generation == 3);
	vmnetcfg_free(c2);
	vmnetcfg_free(c);
	json_decref(out);
	json_decref(j);
}

static void
test_time(void)
{
	time_t t;
	char buf[21];

	CU_ASSERT_EQUAL(crd_time_parse("2024-05-01T10:00:00Z", &t), 0);
	CU_ASSERT_EQUAL(t, 1714557600);
	CU_ASSERT_EQUAL(crd_time_parse("2024-05-01T12:00:00+02:00", &t), 0);
	CU_ASSERT_EQUAL(t, 1714557600);
	CU_ASSERT_EQUAL(crd_time_parse("2024-05-01T10:00:00.123456Z", &t), 0);
	CU_ASSERT_EQUAL(t, 1714557600);
	CU_ASSERT_EQUAL(crd_time_parse("2024-05-01 10:00:00Z", &t), -EINVAL);
	CU_ASSERT_EQUAL(crd_time_parse("2024-05-01T10:00:00", &t), -EINVAL);
	CU_ASSERT_EQUAL(crd_time_parse("2024-05-01T10:00:00.Z", &t), -EINVAL);
	CU_ASSERT_EQUAL(crd_time_parse("2024-05-01T10:00:00Zjunk", &t), -EINVAL);
	CU_ASSERT_EQUAL(crd_time_parse("", &t), -EINVAL);
	crd_time_format(1714557600, buf);
	CU_ASSERT_STRING_EQUAL(buf, "2024-05-01T10:00:00Z");
}

static void
test_network_name(void)
{
	char out[CRD_NETWORK_NAME_MAX + 1];

	CU_ASSERT_EQUAL(crd_network_name_canonicalize("net-48", out), 0);
	CU_ASSERT_STRING_EQUAL(out, "default/net-48");
	CU_ASSERT_EQUAL(crd_network_name_canonicalize("lab/net-48", out), 0);
	CU_ASSERT_STRING_EQUAL(out, "lab/net-48");
	CU_ASSERT_EQUAL(crd_network_name_canonicalize("", out), -EINVAL);
	CU_ASSERT_EQUAL(crd_network_name_canonicalize("/x", out), -EINVAL);
	CU_ASSERT_EQUAL(crd_network_name_canonicalize("x/", out), -EINVAL);
	CU_ASSERT_EQUAL(crd_network_name_canonicalize("a/b/c", out), -EINVAL);
	CU_ASSERT_EQUAL(crd_network_name_canonicalize("Net", out), -EINVAL);
	CU_ASSERT_STRING_EQUAL(crd_network_name_spec_form("default/net"), "default/net");
	CU_ASSERT_STRING_EQUAL(crd_network_name_spec_form("lab/net"), "lab/net");
}

static void
test_long_bare_network_round_trip(void)
{
	/* A 60-character bare name is 68 characters canonical; the encoder must write a form
	 * that decodes again (the schema's limit is 64). Found by fuzz-crds-vmnetcfg. */
	char name[61];
	json_t *j, *out;
	struct vmnetcfg *c = NULL, *c2 = NULL;
	struct crd_error err;

	memset(name, 'n', 60);
	name[60] = '\0';
	j = json_pack("{s:{s:s, s:[{s:s, s:s}]}}", "spec", "vmName", "v", "networkConfigs",
	    "networkName", name, "macAddress", "52:54:00:00:00:01");
	CU_ASSERT_EQUAL_FATAL(vmnetcfg_decode(j, &c, &err), 0);
	CU_ASSERT_EQUAL(strlen(c->spec.nics[0].network_name), 68);
	out = vmnetcfg_encode(c);
	CU_ASSERT_EQUAL(vmnetcfg_decode(out, &c2, &err), 0);
	if (c2)
		CU_ASSERT_STRING_EQUAL(c2->spec.nics[0].network_name, c->spec.nics[0].network_name);
	json_decref(out);
	json_decref(j);
	vmnetcfg_free(c2);
	vmnetcfg_free(c);
}

static const struct test_case vmnetcfg_tests[] = {
    {"decode and round trip", test_decode_and_round_trip},
    {"deprecated NIC \"status\" field is read, not written", test_go_project_status_field},
    {"deprecated singular networkConfig is read, plural written", test_singular_alias},
    {"MAC and network canonical forms", test_canonical},
    {"every validation error names its path", test_errors},
    {"32 NICs allowed, 33 refused", test_limits},
    {"long bare networkName round trip", test_long_bare_network_round_trip},
    {"NIC states", test_states},
    {NULL, NULL},
};

static const struct test_case conditions_tests[] = {
    {"set: transition time only on status change", test_condition_set},
    {"encode/decode/copy", test_condition_codec},
    {"observedGeneration round trip (VMNetCfg)", test_condition_generation_round_trip},
    {"RFC 3339 times", test_time},
    {"networkName canonical form", test_network_name},
    {NULL, NULL},
};

const struct test_suite test_suites[] = {
    {.name = "crds-vmnetcfg", .tests = vmnetcfg_tests},
    {.name = "crds-conditions", .tests = conditions_tests},
    {.name = NULL},
};
