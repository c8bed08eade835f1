#!/bin/bash
# tests/e2e/test-d-move.sh - scenario d: the VM's NIC moves to another network (its VMNetCfg
# names the other pool's network, and its port moves to that network's bridge): the controller
# releases the old address and binds one in the new pool; the running client is NAKed by the
# new pool's agent when it rebinds with the old address and then gets the new pool's address.
. "$(dirname "$0")/lib.sh"
e2e_require dhclient unshare
MAC=52:54:00:e2:00:04
NET2=10.67.0
setup_bound vm1 $MAC
old=$BOUND_IP
add_bridge br1
create_nad net2
create_pool net2 $NET2
check "second agent ready (net2 on br1)" start_kagent net2 br1 9181

code=$(api PATCH "$CFGS/vm1" '{"spec":{"networkConfigs":[{"networkName":"default/net2","macAddress":"'$MAC'"}]}}')
check "VMNetCfg vm1 moved to default/net2 ($code)" test "$code" = 200
check "controller bound vm1 in net2 ($NET2.100)" wait_for 20 cfg_has_ip vm1 $NET2.100
released() { [ -z "$(pool_owner testnet "$old")" ]; }
check "old address $old released from testnet" wait_for 10 released
moved() { [ "$(pool_owner net2 $NET2.100)" = $MAC ]; }
check "net2 status.ipv4.allocated[$NET2.100] = $MAC" wait_for 10 moved
b2() { [ "$(kmetric net2 vmdhcp_agent_bindings)" = 1 ] && [ "$(kmetric testnet vmdhcp_agent_bindings)" = 0 ]; }
check "agents synced: net2 has the binding, testnet none" wait_for 10 b2

ip -n "$SRV" link set "p-vm1" nomaster
ip -n "$SRV" link set "p-vm1" master br1
check "vm1's port on br1" bash -c "ip -n $SRV link show p-vm1 | grep -q 'master br1'"
check "vm1 bound to the new pool's address $NET2.100" wait_for 40 has_addr vm1 $NET2.100/24
# The old address is NAKed by whichever agent hears the client first: the old pool's (a renewal
# unicast to its serverIP after it dropped the binding, before the port moved) or the new pool's
# (a renewal or rebinding broadcast on br1). Both are right; which one is a matter of timing.
naks() {
    echo $(($(kmetric testnet 'vmdhcp_agent_replies_sent_total{type="nak"}') +
        $(kmetric net2 'vmdhcp_agent_replies_sent_total{type="nak"}')))
}
check "the old address was NAKed (by the old or the new pool's agent)" test "$(naks)" -ge 1
check "old address $old gone from eth0" bash -c "! ip -n $TAG-vm1 -4 -o addr show dev eth0 | grep -q ' $old/'"
check "default route via $NET2.1" wait_for 5 has_route vm1 "^default via $NET2.1 "
check "never ACKed an address outside the two bindings" test "$(count_log vm1 '^DHCPACK of ')" = \
    "$(count_log vm1 "^DHCPACK of ($old|$NET2.100) ")"
e2e_finish
