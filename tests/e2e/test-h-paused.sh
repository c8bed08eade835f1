#!/bin/bash
# tests/e2e/test-h-paused.sh - scenario h: a bound VM's VirtualMachineNetworkConfig is paused
# (spec.paused, as upstream's pkg/controller/vmnetcfg/controller.go): the controller releases
# the address (it leaves the IPPool's status.ipv4.allocated) and keeps it in the VMNetCfg's
# status; the agent drops the binding, NAKs the client's next renewal and no longer answers
# its MAC. Resumed: the NIC takes the remembered address back and the same client, still
# running, binds that same address again.
. "$(dirname "$0")/lib.sh"
e2e_require dhclient unshare
CLIENT_LEASE=8
MAC=52:54:00:e2:00:08
setup_bound vm1 $MAC
acks=$(acked vm1)
check "renewals ACKed while not paused" wait_for 10 more_in_log vm1 '^DHCPACK of ' "$acks"

# nic_is STATE IP: the first NIC of vm1's status (whatever the list's name: networkConfigs
# upstream, networkConfig before) is in STATE with allocatedIPAddress IP
nic_is() {
    api_get "$CFGS/vm1" | jq -e --arg s "$1" --arg ip "$2" '
        ((.status.networkConfigs // .status.networkConfig)[0]) |
        (.state == $s and (.allocatedIPAddress | split("/")[0]) == $ip)' >/dev/null
}
cond_is() {
    api_get "$CFGS/vm1" | jq -e --arg t "$1" --arg v "$2" '
        any(.status.conditions[]; .type == $t and .status == $v)' >/dev/null
}

# --- paused ---------------------------------------------------------------------------------
code=$(api PATCH "$CFGS/vm1" '{"spec":{"paused":true}}')
check "VMNetCfg paused ($code)" test "$code" = 200
check "status: Disabled True" wait_for 10 cond_is Disabled True
check "status: the NIC Pending, $BOUND_IP remembered" wait_for 10 nic_is Pending "$BOUND_IP"
check "status: Allocated False" cond_is Allocated False
released() { [ -z "$(pool_owner testnet "$BOUND_IP")" ]; }
check "IPPool status.ipv4.allocated no longer holds $BOUND_IP" wait_for 10 released
no_binding() { [ "$(kmetric testnet vmdhcp_agent_bindings)" = 0 ]; }
check "agent dropped the binding" wait_for 10 no_binding
acks=$(acked vm1)
naked() { [ "$(count_log vm1 DHCPNAK)" -gt 0 ]; }
check "next renewal NAKed" wait_for 15 naked
lost() { ! has_addr vm1 "$BOUND_IP/24"; }
check "VM dropped $BOUND_IP after the NAK" wait_for 10 lost
drops=$(kmetric testnet 'vmdhcp_agent_drops_total{reason="unknown_mac"}')
unanswered() { [ "$(kmetric testnet 'vmdhcp_agent_drops_total{reason="unknown_mac"}')" -gt "$drops" ]; }
check "its DISCOVERs are not answered while paused (unknown MAC)" wait_for 15 unanswered
check "no ACK while paused" test "$(acked vm1)" = "$acks"

# --- resumed --------------------------------------------------------------------------------
code=$(api PATCH "$CFGS/vm1" '{"spec":{"paused":false}}')
check "VMNetCfg resumed ($code)" test "$code" = 200
check "status: the NIC Allocated $BOUND_IP again (the remembered address)" \
    wait_for 10 nic_is Allocated "$BOUND_IP"
check "status: Disabled False" cond_is Disabled False
owned() { [ "$(pool_owner testnet "$BOUND_IP")" = "$MAC" ]; }
check "IPPool status.ipv4.allocated[$BOUND_IP] = $MAC again" wait_for 10 owned
one_binding() { [ "$(kmetric testnet vmdhcp_agent_bindings)" = 1 ]; }
check "agent serves the binding again" wait_for 10 one_binding
check "the same client binds $BOUND_IP again" wait_for 30 has_addr vm1 "$BOUND_IP/24"
check "ACKed again" more_in_log vm1 '^DHCPACK of ' "$acks"
check "controller still running" kill -0 "$CTRL_PID"
check "agent still running" kill -0 "${AGENTS[testnet]}"
e2e_finish
