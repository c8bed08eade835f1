#!/bin/bash
# tests/e2e/test-i-dual-stack.sh - scenario i: an IPPool with ipv4Config and ipv6Config on the
# test API server and the controller (no agent). VMNetCfgs get an IPv4 and an IPv6 address
# each (the lowest free, a static ipv6Address); a second pin on a held IPv6 address stays
# Pending with a Warning Event; the IPPool's status.ipv6 {allocated, used, available} counts
# them; the controller killed with SIGKILL and restarted hands out no held IPv6 address again;
# a deleted VMNetCfg's IPv6 address is released; an ipv6Config added to an IPv4 pool later gives
# its NICs IPv6 addresses, and removed releases them; the per-pool IPv6 metrics.
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

# metrics: the IPv6 gauges of the pool (leader: --no-leader-election)
cmetric() {
    ip netns exec "$SRV" curl -sf "http://127.0.0.1:$CTRL_PORT/metrics" |
        awk -v k="$1" '$1 == k { v = $2 } END { print (v == "" ? "none" : v) }'
}
L='{namespace="default",pool="testnet",network="default/testnet"}'
check "vmdhcp_ippool_ipv6_used_addresses = 3" wait_for 10 eval '[ "$(cmetric "vmdhcp_ippool_ipv6_used_addresses$L")" = 3 ]'
check "vmdhcp_ippool_ipv6_available_addresses = 252" \
    test "$(cmetric "vmdhcp_ippool_ipv6_available_addresses$L")" = 252

# an ipv6Config added to an IPv4 pool with a bound NIC, then removed
create_nad v4net
code=$(api POST "$POOLS" '{"apiVersion":"network.harvesterhci.io/v1alpha1","kind":"IPPool",
  "metadata":{"name":"v4net","namespace":"default"},"spec":{"networkName":"default/v4net",
  "ipv4Config":{"serverIP":"10.67.0.1","cidr":"10.67.0.0/24","pool":{"start":"10.67.0.100","end":"10.67.0.250"}}}}' \
    application/json)
check "IPv4-only IPPool v4net created ($code)" test "$code" = 201
create_cfg vm5 52:54:00:e2:06:05 v4net
check "vm5 Allocated 10.67.0.100, no IPv6 address" wait_for 20 nic_is vm5 Allocated 10.67.0.100 ""
check "v4net has no IPv6 series" test "$(cmetric 'vmdhcp_ippool_ipv6_used_addresses{namespace="default",pool="v4net",network="default/v4net"}')" = none
code=$(api PATCH "$POOLS/v4net" '{"spec":{"ipv6Config":{"serverIP":"2001:db8:67::1","cidr":"2001:db8:67::/64",
  "pool":{"start":"2001:db8:67::100","end":"2001:db8:67::1ff"}}}}')
check "ipv6Config added to v4net ($code)" test "$code" = 200
check "vm5 gets 2001:db8:67::100, its IPv4 address kept" \
    wait_for 20 nic_is vm5 Allocated 10.67.0.100 2001:db8:67::100
v4pool6() { [ "$(api_get "$POOLS/v4net" | jq -r ".status.ipv6$1 // empty")" = "$2" ]; }
check "v4net status.ipv6.allocated lists it" wait_for 10 v4pool6 '.allocated["2001:db8:67::100"]' 52:54:00:e2:06:05
code=$(api PATCH "$POOLS/v4net" '{"spec":{"ipv6Config":null}}')
check "ipv6Config removed from v4net ($code)" test "$code" = 200
check "vm5's IPv6 address released, still Allocated with 10.67.0.100" \
    wait_for 20 nic_is vm5 Allocated 10.67.0.100 ""
check "v4net status.ipv6 gone" wait_for 10 v4pool6 "" ""
check "controller still running" kill -0 "$CTRL_PID"
e2e_finish
