#!/bin/bash
# tests/e2e/test-j-static-nics.sh - scenario j: statically configured NICs. A VirtualMachine
# whose annotation network.harvesterhci.io/dhcp-static-nics lists its NIC gets no
# VirtualMachineNetworkConfig and no address (the agent drops the VM's DISCOVER as from an
# unknown MAC); a name in the annotation that is no NIC is reported in a Warning Event.
# Removing the annotation binds the NIC (dhclient gets the address); adding it back releases
# it (the VMNetCfg keeps no NIC, the IPPool and the agent forget the address).
. "$(dirname "$0")/lib.sh"
e2e_require dhclient unshare
MAC=52:54:00:e2:00:0a
ANNOT=network.harvesterhci.io/dhcp-static-nics
VMS=/apis/kubevirt.io/v1/namespaces/default/virtualmachines
EVENTS=/api/v1/namespaces/default/events
add_vm vm1 $MAC

start_api || { fail "API server" "did not start"; e2e_finish; }
pass "API server started"
apply_crds
create_nad testnet
create_pool testnet $NET
check "controller ready" start_controller
check "agent ready after its first sync" start_kagent testnet br0 $HTTP_PORT

# vm1: one bridge NIC "nic1" on testnet, listed as static (with a name it does not have)
code=$(api POST "$VMS" '{"apiVersion":"kubevirt.io/v1","kind":"VirtualMachine",
  "metadata":{"name":"vm1","namespace":"default","annotations":{"'$ANNOT'":" nic1 , eth9"}},
  "spec":{"running":true,"template":{"spec":{
    "domain":{"devices":{"interfaces":[{"name":"nic1","bridge":{},"macAddress":"'$MAC'"}]}},
    "networks":[{"name":"nic1","multus":{"networkName":"default/testnet"}}]}}}}' application/json)
check "VirtualMachine vm1 created ($code)" test "$code" = 201

unknown_event() {
    api_get "$EVENTS" | jq -e '.items[] | select(.reason == "UnknownStaticNIC" and
        .involvedObject.name == "vm1" and .type == "Warning" and (.message | test("eth9")))' \
        >/dev/null
}
# the Event is recorded by the reconcile of vm1 that decided not to create its VMNetCfg
check "Warning Event UnknownStaticNIC names eth9" wait_for 20 unknown_event
check "controller log names eth9 once" test "$(grep -c "$ANNOT names no NIC of the VM: eth9" \
    "$TMP/controller.log")" = 1
check "no VMNetCfg for vm1" test "$(api GET "$CFGS/vm1")" = 404

drops() { kmetric testnet 'vmdhcp_agent_drops_total{reason="unknown_mac"}'; }
drops0=$(drops)
run_dhclient vm1
more_drops() { [ "$(drops)" -gt "$drops0" ]; }
check "agent dropped vm1's DISCOVER (unknown MAC)" wait_for 20 more_drops
stop_dhclient vm1
check "vm1 has no address" test "$(ip -n $TAG-vm1 -4 -o addr show dev eth0 | wc -l)" = 0
check "agent has no binding" test "$(kmetric testnet vmdhcp_agent_bindings)" = 0

# annotation removed: the NIC is bound
code=$(api PATCH "$VMS/vm1" '{"metadata":{"annotations":{"'$ANNOT'":null}}}')
check "annotation removed ($code)" test "$code" = 200
check "controller created vm1's VMNetCfg with its address" wait_for 20 cfg_has_ip vm1
ip=$(cfg_ip vm1)
ip=${ip%%/*}
check "IPPool status.ipv4.allocated[$ip] = $MAC" wait_for 10 eval '[ "$(pool_owner testnet $ip)" = $MAC ]'
binding_synced() { [ "$(kmetric testnet vmdhcp_agent_bindings)" = 1 ]; }
check "agent synced the binding" wait_for 10 binding_synced
run_dhclient vm1
check "dhclient bound to $ip/24" wait_for 20 has_addr vm1 "$ip/24"
stop_dhclient vm1

# annotation added back ("*": all NICs): the address is released
code=$(api PATCH "$VMS/vm1" '{"metadata":{"annotations":{"'$ANNOT'":"*"}}}')
check "annotation set to * ($code)" test "$code" = 200
no_nics() { [ "$(api_get "$CFGS/vm1" | jq '.spec.networkConfigs | length')" = 0 ]; }
check "vm1's VMNetCfg has no NIC left" wait_for 20 no_nics
released() { [ -z "$(pool_owner testnet "$ip")" ]; }
check "IPPool released $ip" wait_for 20 released
binding_gone() { [ "$(kmetric testnet vmdhcp_agent_bindings)" = 0 ]; }
check "agent dropped the binding" wait_for 20 binding_gone
check "no further UnknownStaticNIC Event" test "$(api_get "$EVENTS" | jq '[.items[] |
    select(.reason == "UnknownStaticNIC")] | length')" = 1
check "controller still running" kill -0 "$CTRL_PID"
check "agent still running" kill -0 "${AGENTS[testnet]}"
e2e_finish
