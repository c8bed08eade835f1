#!/bin/bash
# tests/e2e/test-c-deleted.sh - scenario c: the VMNetCfg is deleted; the controller releases
# the address (finalizer), the agent drops the binding, and the client's renewals are no
# longer answered: never ACKed again, dropped and counted as unknown MAC by the agent, and the
# client loses the address when its lease runs out (the client caps the lease at 8 s here).
# The issue asks for a NAK; SPEC 4 ("unknown MAC -> silent") and dhcp/request.c stay silent for
# a MAC without a binding, so the test checks the silence, never a wrong ACK.
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
unknown() { [ "$(kmetric testnet 'vmdhcp_agent_drops_total{reason="unknown_mac"}')" -gt 0 ]; }
check "next renewal dropped as unknown MAC (not answered)" wait_for 15 unknown
lost() { ! has_addr vm1 "$BOUND_IP/24"; }
check "VM lost $BOUND_IP when its lease ran out" wait_for 20 lost
check "no ACK after the delete" test "$(acked vm1)" = "$acks"
check "no NAK for someone else's address either" test "$(count_log vm1 DHCPNAK)" = 0
e2e_finish
