#!/bin/bash
# tests/netns/test-netns-agent-kube.sh - vm-dhcp-agent in Kubernetes mode, end to end:
# the test API server and the agent both run inside the server namespace (traffic stays on its
# loopback and bridge); busybox udhcpc clients in VM namespaces.
#   - the agent sets serverIP/prefix on br0 itself and is ready only after the first sync;
#   - a MAC in status.ipv4.allocated binds; a DNS change reaches the next renewal; a binding
#     added to the status is served without a restart;
#   - once serving it keeps only CAP_NET_ADMIN (root: the bounding set too);
#   - paused: sockets closed, not ready; unpaused: new sockets are needed, which the dropped
#     capabilities forbid: one clear error and exit status 1; restarted (as the kubelet would),
#     served again;
#   - the API server stopped: bindings still served from memory; restarted: the agent
#     reconnects and a later change arrives;
#   - IPPool deleted: not ready, not serving.
. "$(dirname "$0")/lib.sh"
require busybox
APISERVER=${APISERVER:-$ROOT/build/test-apiserver}
[ -x "$APISERVER" ] || { echo "FAIL: $APISERVER not built (make)"; exit 1; }
UDHCPC=(busybox udhcpc)
MAC1=52:54:00:cc:00:01
MAC2=52:54:00:cc:00:02
API_PID=
POOL=/apis/network.harvesterhci.io/v1alpha1/namespaces/default/ippools

make_server
# libevent binds 127.0.0.1 through getaddrinfo(AI_ADDRCONFIG), which wants one non-loopback
# IPv4 address in the namespace: a veth pair inside it holds one (the agent adds serverIP
# itself)
ip -n "$SRV" link add api0 type veth peer name api1
ip -n "$SRV" addr add 192.0.2.1/32 dev api0
ip -n "$SRV" link set api0 up
ip -n "$SRV" link set api1 up
add_vm vm1 $MAC1
add_vm vm2 $MAC2

# start_api [PORT]: the test API server in $SRV, its state (CA, data) kept in $TMP/api
start_api() {
    local listen=127.0.0.1:${1:-0} i
    rm -f "$TMP/api/port"
    mkdir -p "$TMP/api"
    ip netns exec "$SRV" "$APISERVER" --listen "$listen" --state-dir "$TMP/api" \
        --data "$TMP/api/data.json" --log-level warn >>"$TMP/apiserver.log" 2>&1 &
    API_PID=$!; PIDS+=("$API_PID")
    for i in $(seq 100); do [ -s "$TMP/api/port" ] && return 0; sleep 0.1; done
    return 1
}
# api METHOD PATH [BODY] [CONTENT-TYPE]: prints the HTTP status
api() {
    ip netns exec "$SRV" curl -s -o "$TMP/api.out" -w '%{http_code}' --cacert "$TMP/api/ca.crt" \
        -H "Authorization: Bearer test-token" -X "$1" \
        -H "Content-Type: ${4:-application/merge-patch+json}" ${3:+--data "$3"} \
        "https://127.0.0.1:$(cat "$TMP/api/port")$2"
}
readyz_code() { ip netns exec "$SRV" curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/readyz"; }
not_ready() { [ "$(readyz_code)" = 503 ]; }

start_api || { fail "API server" "did not start"; finish; }
pass "API server started in $SRV"
code=$(api POST $POOL '{"metadata":{"name":"testnet"},"spec":{"networkName":"default/testnet",
  "ipv4Config":{"serverIP":"'$SERVER_IP'","cidr":"'$NET'.0/24","router":"'$NET'.1",
  "pool":{"start":"'$NET'.100","end":"'$NET'.200"},"dns":["'$NET'.53"],"leaseTime":120,
  "mtu":1400,"domainName":"vm.test","domainSearch":["vm.test","svc.vm.test"],
  "routes":[{"destination":"10.200.0.0/16","gateway":"'$NET'.254"}]}}}' application/json)
check "IPPool created ($code)" test "$code" = 201
code=$(api PATCH $POOL/testnet/status '{"status":{"ipv4":{"used":1,"available":100,
  "allocated":{"'$NET'.11":"'$MAC1'","'$NET'.1":"RESERVED"}}}}')
check "IPPool status written ($code)" test "$code" = 200

# the Go project's names (cmd/agent/root.go): $IPPOOL_REF, $KUBECONFIG, --nic, and
# $VM_DHCP_AGENT_DEBUG (for --log-level debug)
start_kube_agent() {
    ip netns exec "$SRV" env IPPOOL_REF=default/testnet KUBECONFIG="$TMP/api/kubeconfig" \
        VM_DHCP_AGENT_DEBUG=true VM_DHCP_AGENT_NAME=testnet-agent "$AGENT" --nic br0 \
        --listen "127.0.0.1:$HTTP_PORT" >>"$TMP/agent.log" 2>&1 &
    AGENT_PID=$!
}
start_kube_agent
check "agent: ready after the first sync" wait_for 20 agent_ready
check "agent: \$VM_DHCP_AGENT_NAME and \$VM_DHCP_AGENT_DEBUG in the log" \
    bash -c "grep -q 'instance name testnet-agent' '$TMP/agent.log' && grep -q ' debug ' '$TMP/agent.log'"
check "agent: only CAP_NET_ADMIN left (permitted, effective, bounding)" test \
    "$(proc_status $AGENT_PID CapPrm)/$(proc_status $AGENT_PID CapEff)/$(proc_status $AGENT_PID CapBnd)" = \
    "$CAPS_NET_ADMIN/$CAPS_NET_ADMIN/$CAPS_NET_ADMIN"
check "agent: no_new_privs" test "$(proc_status $AGENT_PID NoNewPrivs)" = 1
has_server_ip() { ip -n "$SRV" -4 -o addr show dev br0 | grep -q " $SERVER_IP/24 "; }
check "agent: set $SERVER_IP/24 on br0 itself (netlink)" has_server_ip
check "agent: synced metric 1" test "$(metric vmdhcp_agent_kube_synced)" = 1
check "agent: 1 binding" test "$(metric vmdhcp_agent_bindings)" = 1

write_udhcpc_script dns lease
udhcpc_q() { # VM: one exchange, quit when bound (exit status 0 when bound)
    ip -n "$TAG-$1" -4 addr flush dev eth0
    ip netns exec "$TAG-$1" env EVENTS="$TMP/$1.events" "${UDHCPC[@]}" -f -n -q -i eth0 \
        -s "$TMP/udhcpc.script" -t 4 -T 1 >>"$TMP/udhcpc-$1.log" 2>&1
}
last_event() { tail -n1 "$TMP/$1.events" 2>/dev/null; }

# 1. bound to the address of status.ipv4.allocated, with the pool's options
udhcpc_q vm1
check "vm1: bound to $NET.11 (status.ipv4.allocated)" has_addr vm1 $NET.11/24
check "vm1: DNS $NET.53, lease 120" bash -c "grep -q '^bound ip=$NET.11 dns=$NET.53 lease=120$' '$TMP/vm1.events'"

# 2. changes without a restart: DNS, then a new binding
code=$(api PATCH $POOL/testnet '{"spec":{"ipv4Config":{"dns":["'$NET'.54"]}}}')
check "DNS changed ($code)" test "$code" = 200
dns54() { udhcpc_q vm1 && last_event vm1 | grep -q "dns=$NET.54 "; }
check "vm1: next reply carries DNS $NET.54" wait_for 10 dns54
code=$(api PATCH $POOL/testnet/status '{"status":{"ipv4":{"allocated":{"'$NET'.12":"'$MAC2'"}}}}')
check "binding added ($code)" test "$code" = 200
vm2_bound() { udhcpc_q vm2 && has_addr vm2 $NET.12/24; }
check "vm2: bound to the new binding $NET.12" wait_for 10 vm2_bound

# 3. paused: not answering, not ready; unpaused: answering again
code=$(api PATCH $POOL/testnet '{"spec":{"paused":true}}')
check "paused ($code)" test "$code" = 200
check "paused: /readyz 503" wait_for 10 not_ready
check "paused: sockets closed" test "$(metric vmdhcp_agent_serving)" = 0
check "paused: table kept" test "$(metric vmdhcp_agent_bindings)" = 2
udhcpc_q vm2; rc=$?
check "paused: vm2 gets no lease" test "$rc" -ne 0
code=$(api PATCH $POOL/testnet '{"spec":{"paused":false}}')
exited() { ! kill -0 "$AGENT_PID" 2>/dev/null; }
check "unpaused: the agent exits (new sockets needed, capabilities dropped)" wait_for 10 exited
wait "$AGENT_PID"; rc=$?
check "unpaused: exit status 1 (got $rc)" test "$rc" = 1
check "unpaused: one clear error" grep -q "br0: serving again after the sockets were closed (pool paused, deleted or refused) needs new DHCP sockets: capabilities were dropped after start-up; exiting so the container restarts with them" "$TMP/agent.log"
start_kube_agent
check "unpaused: restarted, ready again" wait_for 20 agent_ready
check "unpaused: vm2 bound again" wait_for 10 vm2_bound

# 4. the API server goes away: served from memory; it comes back: changes arrive again
port=$(cat "$TMP/api/port")
stop_pid "$API_PID"
more_errors() { [ "$(metric vmdhcp_agent_kube_errors_total)" -gt 0 ]; }
check "outage: list/watch failures counted" wait_for 15 more_errors
check "outage: still ready" agent_ready
vm1_served() { udhcpc_q vm1 && has_addr vm1 $NET.11/24; }
check "outage: vm1 still served from memory" vm1_served
start_api "$port" || fail "API server restart" "did not start"
code=$(api PATCH $POOL/testnet '{"spec":{"ipv4Config":{"dns":["'$NET'.55"]}}}')
check "after restart: DNS changed ($code)" test "$code" = 200
dns55() { udhcpc_q vm1 && last_event vm1 | grep -q "dns=$NET.55 "; }
check "after restart: vm1 sees DNS $NET.55" wait_for 20 dns55
check "after restart: watch reconnects counted" test "$(metric vmdhcp_agent_kube_watch_reconnects_total)" -gt 0

# 5. deleted: not ready, not serving
code=$(api DELETE $POOL/testnet)
check "IPPool deleted ($code)" test "$code" = 200
check "deleted: /readyz 503" wait_for 10 not_ready
check "deleted: sockets closed" test "$(metric vmdhcp_agent_serving)" = 0
check "deleted: synced metric 0" test "$(metric vmdhcp_agent_kube_synced)" = 0

check "agent still running" kill -0 "$AGENT_PID"
[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
