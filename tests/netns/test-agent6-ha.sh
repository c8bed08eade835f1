#!/bin/bash
# tests/netns/test-agent6-ha.sh - two --leader-elect replicas of a dual-stack pool's agent on two
# "nodes" (as tests/netns/test-agent-ha.sh: the API server on $TAG-ctl, the VMs on br0 in $SRV):
#   - the active replica holds the IPv4 and the IPv6 serverIP and announced the IPv6 one with an
#     unsolicited neighbor advertisement; the standby holds neither, its DHCPv6 table synced,
#     answering nothing;
#   - dhclient -6 binds vm1 through the active one;
#   - SIGTERM of the active one: both serverIPs move to the other (removed from the stopped
#     one's eth1), announced there; vm2 binds through it, and both leases name the same server
#     DUID (the pool's: a client's Server Identifier stays valid across the failover).
. "$(dirname "$0")/lib.sh"
require dhclient unshare
APISERVER=${APISERVER:-$ROOT/build/test-apiserver}
[ -x "$APISERVER" ] || { echo "FAIL: $APISERVER not built (make)"; exit 1; }
CTL=$TAG-ctl
MAC1=52:54:00:de:00:01
MAC2=52:54:00:de:00:02
NET6=2001:db8:68
SERVER6=$NET6::1
POOL=/apis/network.harvesterhci.io/v1alpha1/namespaces/default/ippools
API_PID=
declare -A APID NODE_IP

make_server
ip netns add "$CTL"; NSES+=("$CTL")
ip -n "$CTL" link set lo up
ip -n "$CTL" link add apibr type bridge stp_state 0 forward_delay 0
ip -n "$CTL" link set apibr address 02:99:00:00:00:01
ip -n "$CTL" addr add 10.99.0.1/24 dev apibr
ip -n "$CTL" link set apibr up
add_node() { # N: namespace $TAG-nN, eth1 on br0, api0 on apibr at 10.99.0.1N
    local n=$1 ns=$TAG-n$1
    ip netns add "$ns"; NSES+=("$ns")
    ip -n "$ns" link set lo up
    ip -n "$SRV" link add "p-n$n" type veth peer name eth1 netns "$ns"
    ip -n "$SRV" link set "p-n$n" master br0 up
    ip netns exec "$ns" sysctl -qw net.ipv6.conf.eth1.accept_dad=0
    ip -n "$ns" link set eth1 up
    ip -n "$CTL" link add "a-n$n" type veth peer name api0 netns "$ns"
    ip -n "$CTL" link set "a-n$n" master apibr up
    ip -n "$ns" addr add "10.99.0.1$n/24" dev api0
    ip -n "$ns" link set api0 up
    NODE_IP[$n]=10.99.0.1$n
}
add_node 1
add_node 2
add_vm vm1 $MAC1
add_vm vm2 $MAC2
for vm in vm1 vm2; do
    ip netns exec "$TAG-$vm" sysctl -qw net.ipv6.conf.eth0.accept_dad=0
    ip -n "$TAG-$vm" link set eth0 down
    ip -n "$TAG-$vm" link set eth0 up
done

start_api() {
    local i
    mkdir -p "$TMP/api"
    ip netns exec "$CTL" "$APISERVER" --listen 10.99.0.1:0 --state-dir "$TMP/api" --tls-san IP:10.99.0.1 \
        --data "$TMP/api/data.json" --log-level warn >>"$TMP/apiserver.log" 2>&1 &
    API_PID=$!; PIDS+=("$API_PID")
    for i in $(seq 100); do [ -s "$TMP/api/port" ] && break; sleep 0.1; done
    [ -s "$TMP/api/port" ] || return 1
    sed "s|https://127.0.0.1:|https://10.99.0.1:|" "$TMP/api/kubeconfig" >"$TMP/kubeconfig"
}
api() {
    ip netns exec "$CTL" curl -s -o "$TMP/api.out" -w '%{http_code}' --cacert "$TMP/api/ca.crt" \
        -H "Authorization: Bearer test-token" -X "$1" \
        -H "Content-Type: ${4:-application/merge-patch+json}" ${3:+--data "$3"} \
        "https://10.99.0.1:$(cat "$TMP/api/port")$2"
}
start_node_agent() { # N
    local n=$1
    ip netns exec "$TAG-n$n" env POD_NAMESPACE=default POD_NAME="agent-n$n" "$AGENT" \
        --ippool-ref default/testnet --kubeconfig "$TMP/kubeconfig" --interface eth1 \
        --listen "${NODE_IP[$n]}:$HTTP_PORT" --leader-elect --log-level debug \
        >>"$TMP/agent-n$n.log" 2>&1 &
    APID[$n]=$!; PIDS+=("${APID[$n]}")
}
nget() { ip netns exec "$TAG-n$1" curl -s --max-time 2 "http://${NODE_IP[$1]}:$HTTP_PORT$2"; }
node_metric() { nget "$1" /metrics | awk -v k="$2" '$1 == k { v = $2 } END { print (v == "" ? 0 : v) }'; }
node_ready() { ip netns exec "$TAG-n$1" curl -sf -o /dev/null --max-time 2 "http://${NODE_IP[$1]}:$HTTP_PORT/readyz"; }
has_sip() { ip -n "$TAG-n$1" -4 -o addr show dev eth1 2>/dev/null | grep -q " $SERVER_IP/24 "; }
has_sip6() { ip -n "$TAG-n$1" -6 -o addr show dev eth1 2>/dev/null | grep -q " $SERVER6/64 "; }
active_of() { local n; for n in 1 2; do [ "$(node_metric "$n" vmdhcp_agent_leader)" = 1 ] && { echo "$n"; return 0; }; done; return 1; }

start_api || { fail "API server" "did not start"; finish; }
code=$(api POST $POOL '{"metadata":{"name":"testnet"},"spec":{"networkName":"default/testnet",
  "ipv4Config":{"serverIP":"'$SERVER_IP'","cidr":"'$NET'.0/24",
  "pool":{"start":"'$NET'.100","end":"'$NET'.200"}},
  "ipv6Config":{"cidr":"'$NET6'::/64","serverIP":"'$SERVER6'",
  "pool":{"start":"'$NET6'::100","end":"'$NET6'::1ff"}}}}' application/json)
check "dual-stack IPPool created ($code)" test "$code" = 201
code=$(api PATCH $POOL/testnet/status '{"status":{"ipv4":{"used":2,"available":99,
  "allocated":{"'$NET'.11":"'$MAC1'","'$NET'.12":"'$MAC2'"}},"ipv6":{"used":2,"available":254,
  "allocated":{"'$NET6'::100":"'$MAC1'","'$NET6'::101":"'$MAC2'"}}}}')
check "IPPool status written ($code)" test "$code" = 200

start_node_agent 1
start_node_agent 2
both_ready() { node_ready 1 && node_ready 2; }
check "both replicas ready" wait_for 20 both_ready
one_active() { A=$(active_of); }
check "one replica active" wait_for 10 one_active
B=$((3 - A))
check "n$A active: IPv4 and IPv6 serverIP on its eth1" wait_for 5 bash -c "$(declare -f has_sip has_sip6); TAG=$TAG SERVER_IP=$SERVER_IP SERVER6=$SERVER6; has_sip $A && has_sip6 $A"
na_sent() { [ "$(node_metric "$1" vmdhcp_agent_dhcp6_neighbor_advertisements_sent_total)" -ge 1 ]; }
check "n$A active: unsolicited NA for the IPv6 serverIP sent" wait_for 5 na_sent "$A"
check "n$B standby: no IPv6 serverIP" bash -c "! ip -n $TAG-n$B -6 -o addr show dev eth1 | grep -q ' $SERVER6/'"
check "n$B standby: DHCPv6 table synced (2 bindings)" test "$(node_metric "$B" vmdhcp_agent_dhcp6_bindings)" = 2
check "n$B standby: no NA sent" test "$(node_metric "$B" vmdhcp_agent_dhcp6_neighbor_advertisements_sent_total)" = 0

cat >"$TMP/dhclient6.conf" <<EOF
timeout 15;
EOF
dhclient6_once() { # VM
    ip netns exec "$TAG-$1" unshare -u sh -c '
        mount -t tmpfs tmpfs /etc/dhcp/dhclient-exit-hooks.d &&
        mount -t tmpfs tmpfs /etc/dhcp/dhclient-enter-hooks.d &&
        exec dhclient -6 -1 -v -cf "$1/dhclient6.conf" -lf "$1/$2.leases6" -pf "$1/$2.pid6" eth0' \
        sh "$TMP" "$1" >>"$TMP/dhclient6-$1.log" 2>&1
    # (the daemon writes its pid file after its parent has exited: wait for it, bounded, so
    # the daemon is always stopped at the end)
    for _ in $(seq 50); do [ -s "$TMP/$1.pid6" ] && break; sleep 0.1; done
    [ -s "$TMP/$1.pid6" ] && PIDS+=("$(cat "$TMP/$1.pid6")")
    return 0
}
vm_has6() { ip -n "$TAG-$1" -6 -o addr show dev eth0 | grep -q " $2/"; }
server_id() { sed -n 's/.*option dhcp6.server-id \(.*\);/\1/p' "$TMP/$1.leases6" | tail -n1; }

dhclient6_once vm1
check "vm1: bound to $NET6::100 through n$A" wait_for 5 vm_has6 vm1 $NET6::100
check "n$B standby: answered no DHCPv6 request" bash -c "[ \"\$(ip netns exec $TAG-n$B curl -s http://${NODE_IP[$B]}:$HTTP_PORT/metrics | awk '\$1 ~ /^vmdhcp_agent_dhcp6_replies_sent_total/ { s += \$2 } END { print s + 0 }')\" = 0 ]"

# SIGTERM of the active one: the other takes both addresses
kill -TERM "${APID[$A]}"
wait "${APID[$A]}" 2>/dev/null
took() { [ "$(node_metric "$B" vmdhcp_agent_leader)" = 1 ] && has_sip6 "$B"; }
check "term n$A: n$B active with the IPv6 serverIP" wait_for 15 took
check "term n$A: the stopped one removed the IPv6 serverIP" bash -c "! ip -n $TAG-n$A -6 -o addr show dev eth1 | grep -q ' $SERVER6/'"
check "term n$A: n$B announced it (unsolicited NA)" wait_for 5 na_sent "$B"
dhclient6_once vm2
check "vm2: bound to $NET6::101 through n$B" wait_for 5 vm_has6 vm2 $NET6::101
sid1=$(server_id vm1); sid2=$(server_id vm2)
check "the same server DUID from both replicas ($sid1)" test -n "$sid1" -a "$sid1" = "$sid2"

[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
