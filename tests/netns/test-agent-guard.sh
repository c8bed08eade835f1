#!/bin/bash
# tests/netns/test-agent-guard.sh - foreign DHCP servers (docs/foreign-servers.md): two replicas
# of one pool's agent (--leader-elect, Kubernetes mode on the in-memory API server, each as uid
# 65532 with the pod's three capabilities) on two "nodes" whose eth1 are ports of br0, VMs and a
# dnsmasq (the foreign server) on the same bridge:
#
#   $TAG-ctl   the API server on 10.99.0.1 (bridge apibr; every node has a leg on it)
#   $TAG-n1/2  a node: eth1 (a port of br0 in $SRV) and api0 (10.99.0.1N)
#   $TAG-fsrv  dnsmasq on eth0 ($NET.250), a range of its own ($NET.50-$NET.60)
#
# Checked:
#   - HA: the replicas see each other's replies (the standby counts the active one's OFFER/ACK
#     as own) and report no foreign server;
#   - Warn (probeInterval 30): dnsmasq started after the agents is reported within one probe
#     interval: vmdhcp_agent_foreign_dhcp_servers{mac,ip} 1, the log names MAC and IP, the
#     IPPool's condition ForeignDHCPServer True naming both, a Warning Event ForeignDHCPServer;
#   - StandDown: the answering replica stops answering (vmdhcp_agent_foreign_dhcp_stand_down 1,
#     the log says so); a real client (udhcpc) gets its lease from dnsmasq only; dnsmasq stopped
#     (by PID): once two probe intervals pass without a reply from it the agent answers again (log, gauge 0), the client
#     gets the pool's address from serverIP, the condition turns False (NoForeignServer).
. "$(dirname "$0")/lib.sh"
require busybox jq dnsmasq setpriv setcap getcap
APISERVER=${APISERVER:-$ROOT/build/test-apiserver}
[ -x "$APISERVER" ] || { echo "FAIL: $APISERVER not built (make)"; exit 1; }
CTL=$TAG-ctl
MAC1=52:54:00:ef:00:01
MAC2=52:54:00:ef:00:02
FMAC=52:54:00:ef:00:fe
FIP=$NET.250
POOL=/apis/network.harvesterhci.io/v1alpha1/namespaces/default/ippools
INTERVAL=30
API_PID=
DNSMASQ_PID=
declare -A APID NODE_IP

make_server
ip netns add "$CTL"; NSES+=("$CTL")
ip -n "$CTL" link set lo up
ip -n "$CTL" link add apibr type bridge stp_state 0 forward_delay 0
ip -n "$CTL" link set apibr address 02:99:00:00:00:01
ip -n "$CTL" addr add 10.99.0.1/24 dev apibr
ip -n "$CTL" link set apibr up

# add_node N: namespace $TAG-nN, eth1 on br0, api0 on apibr at 10.99.0.1N
add_node() {
    local n=$1 ns=$TAG-n$1
    ip netns add "$ns"; NSES+=("$ns")
    ip -n "$ns" link set lo up
    ip -n "$SRV" link add "p-n$n" type veth peer name eth1 netns "$ns"
    ip -n "$SRV" link set "p-n$n" master br0 up
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
add_vm fsrv $FMAC
ip -n "$TAG-fsrv" addr add "$FIP/24" dev eth0

# the binary as the pod runs it: uid 65532, file capabilities NET_RAW, NET_BIND_SERVICE, NET_ADMIN
chmod 755 "$TMP"
mkdir -p "$TMP/bin"; cp "$AGENT" "$TMP/bin/vm-dhcp-agent"; chmod 755 "$TMP/bin" "$TMP/bin/vm-dhcp-agent"
setcap cap_net_raw,cap_net_bind_service,cap_net_admin+ep "$TMP/bin/vm-dhcp-agent" 2>"$TMP/setcap.err" ||
    skip "setcap failed on $TMP: $(cat "$TMP/setcap.err")"
getcap "$TMP/bin/vm-dhcp-agent" | grep -q "cap_net_bind_service,cap_net_admin,cap_net_raw=ep" ||
    skip "file capabilities not kept on $TMP"

start_api() {
    local i
    mkdir -p "$TMP/api"
    ip netns exec "$CTL" "$APISERVER" --listen 10.99.0.1:0 --state-dir "$TMP/api" --tls-san IP:10.99.0.1 \
        --data "$TMP/api/data.json" --log-level warn >>"$TMP/apiserver.log" 2>&1 &
    API_PID=$!; PIDS+=("$API_PID")
    for i in $(seq 100); do [ -s "$TMP/api/port" ] && break; sleep 0.1; done
    [ -s "$TMP/api/port" ] || return 1
    sed "s|https://127.0.0.1:|https://10.99.0.1:|" "$TMP/api/kubeconfig" >"$TMP/kubeconfig"
    chmod 644 "$TMP/kubeconfig"
}
api() { # METHOD PATH [BODY] [CONTENT-TYPE]: prints the HTTP status, the body in $TMP/api.out
    ip netns exec "$CTL" curl -s -o "$TMP/api.out" -w '%{http_code}' --cacert "$TMP/api/ca.crt" \
        -H "Authorization: Bearer test-token" -X "$1" \
        -H "Content-Type: ${4:-application/merge-patch+json}" ${3:+--data "$3"} \
        "https://10.99.0.1:$(cat "$TMP/api/port")$2"
}
start_node_agent() { # N: the replica of node N, as uid 65532 with the file capabilities
    local n=$1
    ip netns exec "$TAG-n$n" env POD_NAMESPACE=default POD_NAME="agent-n$n" \
        "ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" \
        setpriv --reuid 65532 --regid 65532 --clear-groups --inh-caps=-all \
        "$TMP/bin/vm-dhcp-agent" --ippool-ref default/testnet --kubeconfig "$TMP/kubeconfig" \
        --interface eth1 --listen "${NODE_IP[$n]}:$HTTP_PORT" --leader-elect \
        --log-level debug >>"$TMP/agent-n$n.log" 2>&1 &
    APID[$n]=$!; PIDS+=("${APID[$n]}")
}
nget() { ip netns exec "$TAG-n$1" curl -s --max-time 2 "http://${NODE_IP[$1]}:$HTTP_PORT$2"; }
node_metric() { nget "$1" /metrics | awk -v k="$2" '$1 == k { v = $2 } END { print (v == "" ? 0 : v) }'; }
node_ready() { ip netns exec "$TAG-n$1" curl -sf -o /dev/null --max-time 2 "http://${NODE_IP[$1]}:$HTTP_PORT/readyz"; }
active_of() { local n; for n in 1 2; do [ "$(node_metric "$n" vmdhcp_agent_leader)" = 1 ] && { echo "$n"; return 0; }; done; return 1; }
FSERIES="vmdhcp_agent_foreign_dhcp_servers{mac=\"$FMAC\",ip=\"$FIP\"}"
reported() { [ "$(node_metric "$1" "$FSERIES")" = 1 ]; }
no_foreign_series() { ! nget "$1" /metrics | grep -q '^vmdhcp_agent_foreign_dhcp_servers{'; }
stand_down() { [ "$(node_metric "$1" vmdhcp_agent_foreign_dhcp_stand_down)" = "$2" ]; }
replies_sent() { nget "$1" /metrics | awk '$1 ~ /^vmdhcp_agent_replies_sent_total/ { s += $2 } END { print s + 0 }'; }
# cond FIELD: the IPPool's condition ForeignDHCPServer's field ("" when absent)
cond() {
    api GET $POOL/testnet >/dev/null
    jq -r --arg f "$1" '(.status.conditions // [])[] | select(.type == "ForeignDHCPServer") | .[$f]' "$TMP/api.out"
}
cond_is() { [ "$(cond status)" = "$1" ] && [ "$(cond reason)" = "$2" ]; }
start_dnsmasq() {
    ip netns exec "$TAG-fsrv" dnsmasq --keep-in-foreground --conf-file=/dev/null --port=0 \
        --user=root --interface=eth0 --bind-interfaces --dhcp-range=$NET.50,$NET.60,120 \
        --dhcp-leasefile="$TMP/dnsmasq.leases" --pid-file= --log-dhcp --log-facility=- \
        >>"$TMP/dnsmasq.log" 2>&1 &
    DNSMASQ_PID=$!; PIDS+=("$DNSMASQ_PID")
}
write_udhcpc_script serverid
udhcpc_q() { # VM: one exchange (broadcast replies), quit when bound
    ip -n "$TAG-$1" -4 addr flush dev eth0
    : >"$TMP/$1.events"
    ip netns exec "$TAG-$1" env EVENTS="$TMP/$1.events" busybox udhcpc -f -n -q -B -i eth0 \
        -s "$TMP/udhcpc.script" -t 6 -T 1 >>"$TMP/udhcpc-$1.log" 2>&1
}
bound_from() { grep -q "^bound ip=$2 serverid=$3\$" "$TMP/$1.events"; }

start_api || { fail "API server" "did not start"; finish; }
code=$(api POST $POOL '{"metadata":{"name":"testnet"},"spec":{"networkName":"default/testnet",
  "ipv4Config":{"serverIP":"'$SERVER_IP'","cidr":"'$NET'.0/24","router":"'$NET'.1",
  "pool":{"start":"'$NET'.100","end":"'$NET'.200"},"leaseTime":120},
  "foreignServers":{"policy":"Warn","probeInterval":'$INTERVAL'}}}' application/json)
check "IPPool with foreignServers (Warn, probeInterval $INTERVAL) created ($code)" test "$code" = 201
code=$(api PATCH $POOL/testnet/status '{"status":{"ipv4":{"used":2,"available":99,"allocated":{"'$NET'.11":"'$MAC1'","'$NET'.12":"'$MAC2'","'$NET'.1":"RESERVED"}}}}')
check "IPPool status written ($code)" test "$code" = 200

# 1. HA: two replicas, each sees the other's replies, neither reports them
start_node_agent 1
start_node_agent 2
both_ready() { node_ready 1 && node_ready 2; }
check "both replicas ready" wait_for 20 both_ready
one_active() { A=$(active_of); }
check "one replica active" wait_for 15 one_active
B=$((3 - ${A:-1}))
check "n$A: runs as uid 65532" test "$(proc_status "${APID[$A]}" Uid | awk '{ print $1 }')" = 65532
check "n$A: the guard watches, as uid 65532 (log)" grep -q "eth1: watching for foreign DHCP servers: probing from 02:76:6d:..:..:.. every $INTERVAL s (policy Warn)" "$TMP/agent-n$A.log"
probed() { [ "$(node_metric "$1" vmdhcp_agent_foreign_dhcp_probes_sent_total)" -ge 1 ]; }
probed_both() { probed 1 && probed 2; }
check "both replicas probed at start" wait_for 5 probed_both
udhcpc_q vm1
check "vm1 bound to $NET.11 by the active replica" bound_from vm1 $NET.11 "$SERVER_IP"
own_seen() { [ "$(node_metric "$B" vmdhcp_agent_own_dhcp_replies_seen_total)" -ge 2 ]; }
check "n$B standby: saw the active replica's OFFER and ACK as own" wait_for 5 own_seen
for n in 1 2; do
    check "n$n: no foreign server reported (HA)" no_foreign_series "$n"
    check "n$n: no foreign reply counted" test "$(node_metric "$n" vmdhcp_agent_foreign_dhcp_replies_total)" = 0
done
check "n$A: no foreign server in the log" bash -c "! grep -q 'foreign DHCP server seen' '$TMP/agent-n$A.log' '$TMP/agent-n$B.log'"

# 2. Warn: dnsmasq on the same bridge, reported within one probe interval
start_dnsmasq
t0=$(date +%s)
check "Warn: n$A reports dnsmasq within one probe interval ($FSERIES 1)" wait_for $((INTERVAL + 5)) reported "$A"
echo "    reported after $(($(date +%s) - t0)) s"
check "Warn: n$B (standby) reports it too" wait_for 5 reported "$B"
check "Warn: the log names MAC and IP" grep -q "eth1: foreign DHCP server seen: MAC $FMAC IP $FIP" "$TMP/agent-n$A.log"
check "Warn: foreign replies counted" test "$(node_metric "$A" vmdhcp_agent_foreign_dhcp_replies_total)" -ge 1
check "Warn: not standing down" stand_down "$A" 0
check "Warn: condition ForeignDHCPServer True (ForeignServerSeen)" wait_for 10 cond_is True ForeignServerSeen
cond_names() { cond message | grep -q "MAC $FMAC IP $FIP"; }
check "Warn: the condition's message names MAC and IP" cond_names
event_ok() {
    api GET /api/v1/namespaces/default/events >/dev/null
    jq -e --arg m "$FMAC" --arg ip "$FIP" '[.items[] | select(.type == "Warning" and .reason == "ForeignDHCPServer"
        and .involvedObject.kind == "IPPool" and .involvedObject.name == "testnet"
        and (.message | contains("MAC " + $m + " IP " + $ip)))] | length >= 1' "$TMP/api.out" >/dev/null
}
check "Warn: a Warning Event ForeignDHCPServer about the IPPool names MAC and IP" wait_for 10 event_ok

# 3. StandDown: the answering replica stops answering while dnsmasq runs
code=$(api PATCH $POOL/testnet '{"spec":{"foreignServers":{"policy":"StandDown","probeInterval":'$INTERVAL'}}}')
check "policy StandDown ($code)" test "$code" = 200
check "StandDown: n$A stands down (gauge 1)" wait_for 10 stand_down "$A" 1
check "StandDown: the log says so" grep -q "eth1: standing down (foreignServers.policy StandDown): foreign DHCP server MAC $FMAC IP $FIP seen" "$TMP/agent-n$A.log"
sent_before=$(replies_sent "$A")
udhcpc_q vm2
check "StandDown: vm2's lease comes from dnsmasq ($FIP)" grep -q "^bound ip=$NET.5[0-9] serverid=$FIP\$\|^bound ip=$NET.60 serverid=$FIP\$" "$TMP/vm2.events"
check "StandDown: the agent answered nothing" test "$(replies_sent "$A")" = "$sent_before"

# 4. dnsmasq stopped: forgotten at the first probe tick at least 1.75 intervals after its last
#    reply (vm2's OFFER/ACK came between ticks: up to 2.75 intervals), then answering again
stop_pid "$DNSMASQ_PID"
t0=$(date +%s)
check "dnsmasq gone: n$A answers again (gauge 0)" wait_for $((3 * INTERVAL + 5)) stand_down "$A" 0
echo "    answering again after $(($(date +%s) - t0)) s"
check "dnsmasq gone: the log says so" grep -q "eth1: foreign DHCP server MAC $FMAC IP $FIP gone" "$TMP/agent-n$A.log"
check "dnsmasq gone: the log says answering again" grep -q "eth1: no foreign DHCP server seen for two probe intervals" "$TMP/agent-n$A.log"
check "dnsmasq gone: no foreign server series" no_foreign_series "$A"
udhcpc_q vm2
check "dnsmasq gone: vm2 bound to $NET.12 by the agent" bound_from vm2 $NET.12 "$SERVER_IP"
check "dnsmasq gone: condition ForeignDHCPServer False (NoForeignServer)" wait_for 10 cond_is False NoForeignServer

for n in 1 2; do check "n$n still running" kill -0 "${APID[$n]}"; done
[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
