#!/bin/bash
# tests/e2e/test-a-bind.sh - scenario a: a VirtualMachineNetworkConfig is created; the
# controller allocates, the agent (Kubernetes mode) syncs the pool, and the VM's dhclient
# binds exactly the allocated address with the pool's router and DNS.
. "$(dirname "$0")/lib.sh"
e2e_require dhclient unshare
MAC=52:54:00:e2:00:01
add_vm vm1 $MAC

start_api || { fail "API server" "did not start"; e2e_finish; }
pass "API server started"
apply_crds
create_nad testnet
create_pool testnet $NET
check "controller ready" start_controller
check "agent ready after its first sync" start_kagent testnet br0 $HTTP_PORT
has_server_ip() { ip -n "$SRV" -4 -o addr show dev br0 | grep -q " $SERVER_IP/24 "; }
check "agent set $SERVER_IP/24 on br0" has_server_ip

create_cfg vm1 $MAC testnet
check "controller allocated an address to vm1" wait_for 20 cfg_has_ip vm1
ip=$(cfg_ip vm1)
ip=${ip%%/*}
check "allocated $ip is the lowest of the range ($NET.100)" test "$ip" = $NET.100
check "IPPool status.ipv4.allocated[$ip] = $MAC" wait_for 10 eval '[ "$(pool_owner testnet $ip)" = $MAC ]'
binding_synced() { [ "$(kmetric testnet vmdhcp_agent_bindings)" = 1 ]; }
check "agent synced the binding" wait_for 10 binding_synced

run_dhclient vm1
check "dhclient bound to exactly $ip/24" wait_for 20 has_addr vm1 $ip/24
check "only that address on eth0" test "$(ip -n $TAG-vm1 -4 -o addr show dev eth0 | wc -l)" = 1
check "default route via $NET.1 (router)" wait_for 5 has_route vm1 "^default via $NET.1 "
check "resolv.conf nameserver $NET.53 (DNS)" wait_for 5 resolv_has vm1 "^nameserver $NET.53\$"
check "lease file: router $NET.1" grep -q "option routers $NET.1;" "$TMP/vm1.leases"
check "lease file: DNS $NET.53" grep -q "option domain-name-servers $NET.53;" "$TMP/vm1.leases"
check "lease file: lease time $LEASE" grep -q "option dhcp-lease-time $LEASE;" "$TMP/vm1.leases"
check "lease file: server $SERVER_IP" grep -q "option dhcp-server-identifier $SERVER_IP;" "$TMP/vm1.leases"
check "no NAK" test "$(count_log vm1 DHCPNAK)" = 0
check "controller still running" kill -0 "$CTRL_PID"
check "agent still running" kill -0 "${AGENTS[testnet]}"
e2e_finish
