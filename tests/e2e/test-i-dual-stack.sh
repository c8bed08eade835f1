#!/bin/bash
# tests/e2e/test-i-dual-stack.sh - scenario i: an IPPool with ipv4Config and ipv6Config on the
# test API server and the controller (no agent). VMNetCfgs get an IPv4 and an IPv6 address
# each (the lowest free, a static ipv6Address); a second pin on a held IPv6 address stays
# Pending with a Warning Event; the IPPool's status.ipv6 {allocated, used, available} counts
# them; the controller killed with SIGKILL and restarted hands out no held IPv6 address again;
# a deleted VMNetCfg's IPv6 address is released.
. "$(dirname "$0")/lib.sh"
e2e_require
P6=2001:db8:66
MAC1=52:54:00:e2:06:01 MAC2=52:54:00:e2:06:02 MAC3=52:54:00:e2:06:03 MAC4=52:54:00:e2:06:04

start_api || { fail "API server" "did not start"; e2e_finish; }
apply_crds
create_nad testnet
code=$(api POST "$POOLS" '{"apiVersion":"network.harvesterhci.io/v1alpha1","kind":"IPPool",
  "metadata":{"name":"testnet","namespace":"default"},"spec":{"networkName":"default/testnet",
  "ipv4Config":{"serverIP":"10.66.0.1","cidr":"10.66.0.0/24","pool":{"start":"10.66.0.100","end":"10.66.0.250"}},
  "ipv6Config":{"serverIP":"'$P6'::1","cidr":"'$P6'::/64",
    "pool":{"start":"'$P6'::100","end":"'$P6'::1ff","exclude":["'$P6'::102"]}}}}' application/json)
check "dual-stack IPPool created ($code)" test "$code" = 201
check "controller ready" start_controller --no-leader-election --no-agent

# cfg6 NAME MAC [IPV6]: a VMNetCfg with one NIC on testnet (a static ipv6Address when given)
cfg6() {
    local code
    code=$(api POST "$CFGS" '{"apiVersion":"network.harvesterhci.io/v1alpha1",
      "kind":"VirtualMachineNetworkConfig","metadata":{"name":"'"$1"'","namespace":"default"},
      "spec":{"vmName":"'"$1"'","networkConfigs":[{"networkName":"default/testnet",
      "macAddress":"'"$2"'"'"${3:+,\"ipv6Address\":\"$3\"}"'}]}}' application/json)
    check "VMNetCfg $1 created ($code)" test "$code" = 201
}
# nic NAME FIELD: a field of its first NIC's status
nic() { api_get "$CFGS/$1" | jq -r ".status.networkConfigs[0].$2 // empty"; }
nic_is() { [ "$(nic "$1" state)" = "$2" ] && [ "$(nic "$1" allocatedIPAddress)" = "$3" ] &&
    [ "$(nic "$1" allocatedIPv6Address)" = "$4" ]; }
# pool6 JQ: on the IPPool's status.ipv6
pool6() { api_get "$POOLS/testnet" | jq -r ".status.ipv6$1 // empty"; }
pool6_is() { [ "$(pool6 "$1")" = "$2" ]; }

cfg6 vm1 $MAC1
check "vm1 Allocated 10.66.0.100 and $P6::100 (the lowest free of each)" \
    wait_for 20 nic_is vm1 Allocated 10.66.0.100 $P6::100
cfg6 vm2 $MAC2 $P6::1f0
check "vm2 Allocated its static $P6::1f0 (and 10.66.0.101)" \
    wait_for 20 nic_is vm2 Allocated 10.66.0.101 $P6::1f0
cfg6 vm3 $MAC3 $P6::1f0
pending_conflict() {
    [ "$(nic vm3 state)" = Pending ] &&
        api_get "$CFGS/vm3" | jq -e '.status.conditions[] | select(.type == "Allocated" and
            .status == "False" and .reason == "StaticIPConflict")' >/dev/null
}
check "vm3 (the same static IPv6) Pending: StaticIPConflict" wait_for 20 pending_conflict
conflict_event() {
    api_get /api/v1/namespaces/default/events | jq -e '.items[] | select(.involvedObject.name ==
        "vm3" and .reason == "StaticIPConflict" and (.message | contains("'$P6'::1f0")))' >/dev/null
}
check "a Warning Event names the held address" wait_for 10 conflict_event

check "IPPool status.ipv6.allocated[$P6::100] = $MAC1" wait_for 10 pool6_is ".allocated[\"$P6::100\"]" $MAC1
check "IPPool status.ipv6.allocated[$P6::1f0] = $MAC2" pool6_is ".allocated[\"$P6::1f0\"]" $MAC2
check "IPPool status.ipv6.allocated[$P6::102] = EXCLUDED" pool6_is ".allocated[\"$P6::102\"]" EXCLUDED
check "IPPool status.ipv6.used = 2" pool6_is .used 2
check "IPPool status.ipv6.available = 253 (256 - 2 used - 1 excluded)" pool6_is .available 253
check "IPPool status.ipv4 still counts the IPv4 side (3 used: vm3 holds its IPv4)" \
    test "$(api_get "$POOLS/testnet" | jq -r .status.ipv4.used)" = 3

# kill -9 and restart: the IPAM rebuilt from the statuses; nothing held is handed out again
kill -KILL "$CTRL_PID"; wait "$CTRL_PID" 2>/dev/null
check "controller ready after SIGKILL" start_controller --no-leader-election --no-agent
cfg6 vm4 $MAC4
check "vm4 gets $P6::101: ::100 and ::1f0 stay held across the restart" \
    wait_for 20 nic_is vm4 Allocated 10.66.0.103 $P6::101
check "vm1 unchanged" nic_is vm1 Allocated 10.66.0.100 $P6::100
check "vm2 unchanged" nic_is vm2 Allocated 10.66.0.101 $P6::1f0
check "IPPool status.ipv6.used = 3" wait_for 10 pool6_is .used 3
distinct6() {
    api_get "$CFGS" | jq -r '.items[].status.networkConfigs[]? | .allocatedIPv6Address // empty' |
        sort | uniq -d | grep -q . && return 1 || return 0
}
check "no IPv6 address on two NICs" distinct6

# deleted: its IPv6 address released; vm3's pin is then free for it
code=$(api DELETE "$CFGS/vm2")
check "vm2 deleted ($code)" test "$code" = 200
check "$P6::1f0 handed to vm3 once vm2 released it" \
    wait_for 20 nic_is vm3 Allocated 10.66.0.102 $P6::1f0
check "IPPool status.ipv6.allocated[$P6::1f0] = $MAC3" wait_for 10 pool6_is ".allocated[\"$P6::1f0\"]" $MAC3
check "controller still running" kill -0 "$CTRL_PID"
e2e_finish
