#!/bin/bash
# tests/e2e/test-c-deleted.sh - scenario c: the VMNetCfg is deleted; the controller releases
# the address (finalizer), the agent drops the binding, and the client's next renewal is NAKed
# (RFC 2131 RENEWING: the client's lease is gone), so the client drops the address at once and
# goes back to DISCOVER, which is no longer answered (unknown MAC: silent, counted).
. "$(dirname "$0")/lib.sh"
e2e_require dhclient unshare
CLIENT_LEASE=8
MAC=52:54:00:e2:00:03
setup_bound vm1 $MAC
acks=$(acked vm1)
check "renewals ACKed while the VMNetCfg exists" wait_for 10 more_in_log vm1 '^DHCPACK of ' "$acks"

code=$(api DELETE "$CFGS/vm1")
check "VMNetCfg deleted ($code)" test "$code" = 200
gone() { [ "$(api GET "$CFGS/vm1")" = 404 ]; }
check "VMNetCfg removed (finalizer released)" wait_for 10 gone
released() { [ -z "$(pool_owner testnet $BOUND_IP)" ]; }
check "IPPool status.ipv4.allocated no longer holds $BOUND_IP" wait_for 10 released
no_binding() { [ "$(kmetric testnet vmdhcp_agent_bindings)" = 0 ]; }
check "agent dropped the binding" wait_for 10 no_binding
acks=$(acked vm1)
naked() { [ "$(count_log vm1 DHCPNAK)" -gt 0 ]; }
check "next renewal NAKed" wait_for 15 naked
lost() { ! has_addr vm1 "$BOUND_IP/24"; }
check "VM dropped $BOUND_IP after the NAK" wait_for 10 lost
unknown() { [ "$(kmetric testnet 'vmdhcp_agent_drops_total{reason="unknown_mac"}')" -gt 0 ]; }
check "its DISCOVERs afterwards are not answered (counted as unknown MAC)" wait_for 15 unknown
check "no ACK after the delete" test "$(acked vm1)" = "$acks"
e2e_finish
