#!/bin/bash
# tests/e2e/test-b-dns.sh - scenario b: the IPPool's DNS is changed through the API; the agent
# (not restarted) picks the change up from its watch and the client's next renewal carries it.
. "$(dirname "$0")/lib.sh"
e2e_require dhclient unshare
MAC=52:54:00:e2:00:02
setup_bound vm1 $MAC
check "resolv.conf nameserver $NET.53" wait_for 5 resolv_has vm1 "^nameserver $NET.53\$"
agent_pid=${AGENTS[testnet]}
code=$(api PATCH "$POOLS/testnet" '{"spec":{"ipv4Config":{"dns":["'$NET'.54","'$NET'.55"]}}}')
check "IPPool DNS changed to $NET.54 $NET.55 ($code)" test "$code" = 200
acks=$(acked vm1)
check "renewal ACKed after the change" wait_for 10 more_in_log vm1 '^DHCPACK of ' "$acks"
check "resolv.conf nameserver $NET.54" wait_for 5 resolv_has vm1 "^nameserver $NET.54\$"
check "resolv.conf nameserver $NET.55" wait_for 5 resolv_has vm1 "^nameserver $NET.55\$"
check "old DNS $NET.53 gone" bash -c "! grep -q '^nameserver $NET.53\$' /etc/netns/$TAG-vm1/resolv.conf"
check "still bound to $BOUND_IP (renewal, not a new lease)" has_addr vm1 "$BOUND_IP/24"
check "agent not restarted (same PID, running)" kill -0 "$agent_pid"
check "no NAK" test "$(count_log vm1 DHCPNAK)" = 0
e2e_finish
