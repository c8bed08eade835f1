#!/bin/bash
# tests/netns/test-agent6-kube.sh - the agent's DHCPv6 in Kubernetes mode, end to end: the test
# API server and the agent inside the server namespace, ISC `dhclient -6` in VM namespaces.
#   - a dual-stack IPPool (ipv6Config) with a MAC in status.ipv6.allocated: the agent adds the
#     IPv6 serverIP to br0, keeps only CAP_NET_ADMIN, and the VM gets that address;
#   - an IPv6 binding added to the status is served without a restart;
#   - warm start (--snapshot): the agent restarted while the API server is down serves the
#     IPv6 bindings from its snapshot (format 2) before any sync.
. "$(dirname "$0")/lib.sh"
require dhclient unshare
APISERVER=${APISERVER:-$ROOT/build/test-apiserver}
[ -x "$APISERVER" ] || { echo "FAIL: $APISERVER not built (make)"; exit 1; }
MAC1=52:54:00:cd:00:01
MAC2=52:54:00:cd:00:02
NET6=2001:db8:67
SERVER6=$NET6::1
API_PID=
POOL=/apis/network.harvesterhci.io/v1alpha1/namespaces/default/ippools

make_server
# libevent binds 127.0.0.1 through getaddrinfo(AI_ADDRCONFIG): one non-loopback IPv4 address
ip -n "$SRV" link add api0 type veth peer name api1
ip -n "$SRV" addr add 192.0.2.1/32 dev api0
ip -n "$SRV" link set api0 up
ip -n "$SRV" link set api1 up
add_vm vm1 $MAC1
add_vm vm2 $MAC2
for vm in vm1 vm2; do
    ip netns exec "$TAG-$vm" sysctl -qw net.ipv6.conf.eth0.accept_dad=0
    ip -n "$TAG-$vm" link set eth0 down
    ip -n "$TAG-$vm" link set eth0 up
done

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
api() {
    ip netns exec "$SRV" curl -s -o "$TMP/api.out" -w '%{http_code}' --cacert "$TMP/api/ca.crt" \
        -H "Authorization: Bearer test-token" -X "$1" \
        -H "Content-Type: ${4:-application/merge-patch+json}" ${3:+--data "$3"} \
        "https://127.0.0.1:$(cat "$TMP/api/port")$2"
}

start_api || { fail "API server" "did not start"; finish; }
code=$(api POST $POOL '{"metadata":{"name":"testnet"},"spec":{"networkName":"default/testnet",
  "ipv4Config":{"serverIP":"'$SERVER_IP'","cidr":"'$NET'.0/24",
  "pool":{"start":"'$NET'.100","end":"'$NET'.200"}},
  "ipv6Config":{"cidr":"'$NET6'::/64","serverIP":"'$SERVER6'",
  "pool":{"start":"'$NET6'::100","end":"'$NET6'::1ff"},"dns":["'$NET6'::53"]}}}' application/json)
check "dual-stack IPPool created ($code)" test "$code" = 201
code=$(api PATCH $POOL/testnet/status '{"status":{"ipv4":{"used":1,"available":100,
  "allocated":{"'$NET'.11":"'$MAC1'"}},"ipv6":{"used":1,"available":255,
  "allocated":{"'$NET6'::100":"'$MAC1'","'$NET6'::101":"EXCLUDED"}}}}')
check "IPPool status with status.ipv6.allocated written ($code)" test "$code" = 200

start_kube_agent() {
    ip netns exec "$SRV" env IPPOOL_REF=default/testnet KUBECONFIG="$TMP/api/kubeconfig" \
        "$AGENT" --nic br0 --listen "127.0.0.1:$HTTP_PORT" --log-level debug \
        --snapshot "$TMP/agent.snapshot" >>"$TMP/agent.log" 2>&1 &
    AGENT_PID=$!
}
start_kube_agent
check "agent: ready after the first sync" wait_for 20 agent_ready
srv_has6() { ip -n "$SRV" -6 -o addr show dev br0 | grep -q " $SERVER6/64 "; }
check "agent: IPv6 serverIP $SERVER6/64 on br0" wait_for 5 srv_has6
check "agent: only CAP_NET_ADMIN left" test "$(proc_status $AGENT_PID CapEff)" = "$CAPS_NET_ADMIN"
bindings6() { [ "$(metric vmdhcp_agent_dhcp6_bindings)" = "$1" ]; }
check "agent: 1 IPv6 binding (EXCLUDED skipped)" wait_for 5 bindings6 1

cat >"$TMP/dhclient6.conf" <<EOF
request dhcp6.name-servers;
timeout 15;
EOF
dhclient6_once() { # VM: one exchange (-1), foreground until bound or given up
    ip netns exec "$TAG-$1" unshare -u sh -c '
        mount -t tmpfs tmpfs /etc/dhcp/dhclient-exit-hooks.d &&
        mount -t tmpfs tmpfs /etc/dhcp/dhclient-enter-hooks.d &&
        exec dhclient -6 -1 -v -cf "$1/dhclient6.conf" -lf "$1/$2.leases6" -pf "$1/$2.pid6" eth0' \
        sh "$TMP" "$1" >>"$TMP/dhclient6-$1.log" 2>&1
    # dhclient daemonised once bound: its pid file names it
    # (the daemon writes its pid file after its parent has exited: wait for it, bounded, so
    # the daemon is always stopped at the end)
    for _ in $(seq 50); do [ -s "$TMP/$1.pid6" ] && break; sleep 0.1; done
    [ -s "$TMP/$1.pid6" ] && PIDS+=("$(cat "$TMP/$1.pid6")")
    return 0
}
vm_has6() { ip -n "$TAG-$1" -6 -o addr show dev eth0 | grep -q " $2/"; }
release6() { # stop the VM's dhclient and forget its address and lease
    [ -s "$TMP/$1.pid6" ] && stop_pid "$(cat "$TMP/$1.pid6")"
    rm -f "$TMP/$1.pid6" "$TMP/$1.leases6"
    ip -n "$TAG-$1" -6 addr flush dev eth0 scope global
}

dhclient6_once vm1
check "vm1: bound to $NET6::100 (status.ipv6.allocated)" wait_for 5 vm_has6 vm1 $NET6::100
release6 vm1

# an IPv6 binding added to the status: served without a restart
code=$(api PATCH $POOL/testnet/status '{"status":{"ipv6":{"allocated":{"'$NET6'::102":"'$MAC2'"}}}}')
check "IPv6 binding added ($code)" test "$code" = 200
check "agent: 2 IPv6 bindings" wait_for 10 bindings6 2
dhclient6_once vm2
check "vm2: bound to the new binding $NET6::102" wait_for 5 vm_has6 vm2 $NET6::102
release6 vm2
snapshot_v2() { [ -s "$TMP/agent.snapshot" ] && [ "$(od -An -tu4 -j8 -N4 "$TMP/agent.snapshot" | tr -d ' ')" = 2 ]; }
check "snapshot written, format version 2" wait_for 10 snapshot_v2
sleep 1.2 # the snapshot is written at most once a second: the last change in it

# warm start: API server down, agent restarted, IPv6 served from the snapshot
stop_pid "$API_PID"
stop_pid "$AGENT_PID"
start_kube_agent
stale() { [ "$(metric vmdhcp_agent_snapshot_stale)" = 1 ]; }
check "warm start: serving the snapshot (stale)" wait_for 20 stale
check "warm start: 2 IPv6 bindings from the snapshot" wait_for 5 bindings6 2
check "warm start: IPv6 serverIP on br0" wait_for 5 srv_has6
dhclient6_once vm2
check "warm start: vm2 bound to $NET6::102 before any sync" wait_for 5 vm_has6 vm2 $NET6::102
check "warm start log line names the IPv6 bindings" grep -q "warm start: 1 bindings and 2 IPv6 bindings of IPPool default/testnet" "$TMP/agent.log"
release6 vm2

check "agent still running" kill -0 "$AGENT_PID"
check "agent: no error logged" bash -c "! grep ' error ' '$TMP/agent.log' | grep -v 'IPPool informer'"
[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
