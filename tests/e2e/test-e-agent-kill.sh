#!/bin/bash
# tests/e2e/test-e-agent-kill.sh - scenario e: the agent is SIGKILLed while the client renews
# every 2 s and started again; it serves again once it has synced the pool from the API, and
# the client never gets a wrong answer meanwhile (no NAK, no other address, never unbound).
. "$(dirname "$0")/lib.sh"
e2e_require dhclient unshare
MAC=52:54:00:e2:00:05
setup_bound vm1 $MAC
acks=$(acked vm1)
check "renewals ACKed before the kill" wait_for 10 more_in_log vm1 '^DHCPACK of ' "$acks"
pid=${AGENTS[testnet]}
kill -KILL "$pid"; wait "$pid" 2>/dev/null
check "agent killed (SIGKILL)" bash -c "! kill -0 $pid 2>/dev/null"
sleep 3 # a renewal or two go unanswered
acks=$(acked vm1)
check "agent restarted, ready after its sync" start_kagent testnet br0 $HTTP_PORT
check "restarted agent has the binding" test "$(kmetric testnet vmdhcp_agent_bindings)" = 1
check "renewal ACKed by the restarted agent" wait_for 15 more_in_log vm1 "^DHCPACK of $BOUND_IP " "$acks"
check "restarted agent sent no NAK" test "$(kmetric testnet 'vmdhcp_agent_replies_sent_total{type="nak"}')" = 0
check "client never NAKed" test "$(count_log vm1 DHCPNAK)" = 0
check "client ACKed only for $BOUND_IP" test "$(count_log vm1 '^DHCPACK of ')" = "$(count_log vm1 "^DHCPACK of $BOUND_IP ")"
check "client never bound elsewhere" test "$(count_log vm1 '^bound to ')" = "$(count_log vm1 "^bound to $BOUND_IP ")"
check "still bound to $BOUND_IP" has_addr vm1 "$BOUND_IP/24"
e2e_finish
