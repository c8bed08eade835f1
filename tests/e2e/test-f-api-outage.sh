#!/bin/bash
# tests/e2e/test-f-api-outage.sh - scenario f: the API server is stopped for 30 s; the agent
# keeps serving from memory, so every renewal in that window is ACKed; the API server comes
# back (same port and data) and a later change reaches the client again.
. "$(dirname "$0")/lib.sh"
e2e_require dhclient unshare
MAC=52:54:00:e2:00:06
setup_bound vm1 $MAC
port=$(cat "$TMP/api/port")
stop_api
check "API server stopped" bash -c "! ip netns exec $SRV curl -sk -o /dev/null https://127.0.0.1:$port/healthz"
acks=$(acked vm1) reqs=$(count_log vm1 '^DHCPREQUEST ')
sleep 30
acks2=$(acked vm1) reqs2=$(count_log vm1 '^DHCPREQUEST ')
echo "during the outage: $((reqs2 - reqs)) renewals sent, $((acks2 - acks)) ACKed"
check "renewals during the 30 s outage (at least 8)" test $((reqs2 - reqs)) -ge 8
# each renewal is one REQUEST answered by one ACK: at most the last one may be in flight
check "every renewal during the outage ACKed" test $((acks2 - acks)) -ge $((reqs2 - reqs - 1))
check "no broadcast rebinding (T2) during the outage" test "$(count_log vm1 'to 255.255.255.255')" = "$(sed -n '1,/^bound to/p' "$TMP/dhclient-vm1.log" | grep -c 'to 255.255.255.255')"
check "no NAK" test "$(count_log vm1 DHCPNAK)" = 0
check "still bound to $BOUND_IP" has_addr vm1 "$BOUND_IP/24"
check "agent still ready" kagent_ready testnet
start_api "$port" || fail "API server restart" "did not start"
code=$(api PATCH "$POOLS/testnet" '{"spec":{"ipv4Config":{"dns":["'$NET'.57"]}}}')
check "after the outage: DNS changed ($code)" test "$code" = 200
check "after the outage: the client gets DNS $NET.57" wait_for 20 resolv_has vm1 "^nameserver $NET.57\$"
e2e_finish
