#!/bin/bash
# tests/netns/test-agent-ha.sh - two replicas of one pool's agent (--leader-elect) on two "nodes",
# the in-memory API server on a third namespace; VMs on a bridge in $SRV (the cluster network):
#
#   $TAG-ctl   the API server on 10.99.0.1 (bridge apibr; every node has a leg on it)
#   $TAG-n1/2  a node: eth1 (a port of br0 in $SRV, the VM-facing side) and api0 (10.99.0.1x)
#   $SRV       br0, the L2 segment the VMs and the nodes' eth1 share
#
# Checked:
#   - one replica is active (holds the Lease, has serverIP on its eth1, answers); the other is a
#     ready standby with its table synced, no serverIP, answering nothing;
#   - SIGKILL of the active one (HA_KILLS times; each time restarted, as the kubelet would): a
#     RENEWING client (unicast to serverIP, through the kernel's ARP) is ACKed by the other
#     (the time is printed; the bar, < 3 s, is make bench-failover's); serverIP ends on
#     exactly one interface;
#   - SIGTERM of the active one: the Lease is released and the standby takes over at once;
#   - the active one's node vanishes (frozen, its links deleted): the other takes over;
#   - a partition (the active one loses the API server, not the VMs): it keeps answering
#     (hold); the other gets the Lease but does not take serverIP while ARP probes for it are
#     answered; healed, the first steps down and the second takes over;
#   - the API server down: the active one holds; SIGKILLed, the standby finds serverIP free
#     on ARP and takes over without the Lease; the restarted one stays standby;
#   - warm start: both replicas restarted with the API server down answer from their
#     --snapshot at once, one of them (/readyz "stale ...; hold", vmdhcp_agent_snapshot_stale
#     1); a binding changed meanwhile is served as changed once the API server is back, and
#     the Lease decides again;
#   - the whole time, every reply on the wire (captured on br0): no request answered from two
#     MACs (never two replicas answering at once).
# HA_REPORT=FILE appends each failover's milliseconds ("kill MS" / "node MS" / "term MS" /
# "nokube MS": the active one killed with the API server down).
# Knobs (scripts/bench-failover.sh): HA_KILLS (default 2), HA_TERMS and HA_NODES (default 1) rounds
# of each kind (a vanished node is plugged back in and its agent restarted before the next one);
# HA_AGENT_ARGS: extra arguments of every --leader-elect agent (e.g. shorter Lease timings).
. "$(dirname "$0")/lib.sh"
require busybox
APISERVER=${APISERVER:-$ROOT/build/test-apiserver}
PROBE=${PROBE:-$ROOT/build/tests/dhcp-ha-probe}
[ -x "$APISERVER" ] || { echo "FAIL: $APISERVER not built (make)"; exit 1; }
[ -x "$PROBE" ] || { echo "FAIL: $PROBE not built (make tests)"; exit 1; }
HA_KILLS=${HA_KILLS:-2}
HA_TERMS=${HA_TERMS:-1}
HA_NODES=${HA_NODES:-1}
HA_AGENT_ARGS=${HA_AGENT_ARGS:-}
CTL=$TAG-ctl
MAC1=52:54:00:dd:00:01
MAC2=52:54:00:dd:00:02
POOL=/apis/network.harvesterhci.io/v1alpha1/namespaces/default/ippools
API_PID=
declare -A APID NODE_IP NODE_MAC
CAP_PID=

# flags: clear errors, exit status 2
usage_err() { # WANT-SUBSTRING ARGS...: exit 2 and the message
    local want=$1 out rc; shift
    out=$("$AGENT" "$@" 2>&1); rc=$?
    [ "$rc" = 2 ] && grep -qF -- "$want" <<<"$out"
}
check "flags: --leader-elect is for Kubernetes mode" usage_err "--leader-elect is for Kubernetes mode" --config /dev/null --leader-elect
check "flags: timings out of order refused" usage_err "need --retry-period < --renew-deadline < --lease-duration" --ippool-ref a/b --leader-elect --renew-deadline 3
check "flags: a bad duration refused" usage_err '--lease-duration: "2s" is not a number of seconds' --ippool-ref a/b --leader-elect --lease-duration 2s
check "flags: election knobs need --leader-elect" usage_err "need --leader-elect" --ippool-ref a/b --lease-name x
check "flags: --snapshot is for Kubernetes mode" usage_err "--snapshot is for Kubernetes mode" --config /dev/null --snapshot /tmp/x

make_server
ip netns add "$CTL"; NSES+=("$CTL")
ip -n "$CTL" link set lo up
ip -n "$CTL" link add apibr type bridge stp_state 0 forward_delay 0
# a fixed MAC: a bridge takes its ports' lowest otherwise, and a node's link deleted would move
# 10.99.0.1 to another MAC under the other node's ARP entry (seconds of lost Lease requests)
ip -n "$CTL" link set apibr address 02:99:00:00:00:01
ip -n "$CTL" addr add 10.99.0.1/24 dev apibr
ip -n "$CTL" link set apibr up

# add_node N: namespace $TAG-nN, eth1 on br0, api0 on apibr at 10.99.0.1N
add_node() {
    local n=$1 ns=$TAG-n$1
    ip netns add "$ns"; NSES+=("$ns")
    ip -n "$ns" link set lo up
    plug_node "$n"
}
# plug_node N: node N's links (again, after it vanished)
plug_node() {
    local n=$1 ns=$TAG-n$1
    ip -n "$SRV" link add "p-n$n" type veth peer name eth1 netns "$ns"
    ip -n "$SRV" link set "p-n$n" master br0 up
    ip -n "$ns" link set eth1 up
    ip -n "$CTL" link add "a-n$n" type veth peer name api0 netns "$ns"
    ip -n "$CTL" link set "a-n$n" master apibr up
    ip -n "$ns" addr add "10.99.0.1$n/24" dev api0
    ip -n "$ns" link set api0 up
    NODE_IP[$n]=10.99.0.1$n
    NODE_MAC[$n]=$(ip netns exec "$ns" cat /sys/class/net/eth1/address)
}
add_node 1
add_node 2
add_vm vm1 $MAC1
add_vm vm2 $MAC2

start_api() {
    local listen=10.99.0.1:${1:-0} i
    rm -f "$TMP/api/port"
    mkdir -p "$TMP/api"
    ip netns exec "$CTL" "$APISERVER" --listen "$listen" --state-dir "$TMP/api" --tls-san IP:10.99.0.1 \
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

# start_node_agent N [ARGS]: the agent of node N (--leader-elect unless NO_ELECT=1)
start_node_agent() {
    local n=$1; shift
    ip netns exec "$TAG-n$n" env POD_NAMESPACE=default POD_NAME="agent-n$n" "$AGENT" \
        --ippool-ref default/testnet --kubeconfig "$TMP/kubeconfig" --interface eth1 \
        --listen "${NODE_IP[$n]}:$HTTP_PORT" --snapshot "$TMP/n$n.snapshot" \
        $([ "${NO_ELECT:-0}" = 1 ] || echo --leader-elect $HA_AGENT_ARGS) \
        --log-level debug "$@" >>"$TMP/agent-n$n.log" 2>&1 &
    APID[$n]=$!; PIDS+=("${APID[$n]}")
}
nget() { ip netns exec "$TAG-n$1" curl -s --max-time 2 "http://${NODE_IP[$1]}:$HTTP_PORT$2"; }
node_metric() { nget "$1" /metrics | awk -v k="$2" '$1 == k { v = $2 } END { print (v == "" ? 0 : v) }'; }
node_ready() { ip netns exec "$TAG-n$1" curl -sf -o /dev/null --max-time 2 "http://${NODE_IP[$1]}:$HTTP_PORT/readyz"; }
has_sip() { ip -n "$TAG-n$1" -4 -o addr show dev eth1 2>/dev/null | grep -q " $SERVER_IP/24 "; }
# the number of nodes whose eth1 holds serverIP
sip_count() { local c=0 n; for n in "$@"; do has_sip "$n" && c=$((c + 1)); done; echo $c; }
active_of() { local n; for n in "$@"; do [ "$(node_metric "$n" vmdhcp_agent_leader)" = 1 ] && { echo "$n"; return 0; }; done; return 1; }
# the last ACK seen on the wire came from node N's eth1
last_ack_from() { [ "$(awk '!/^#/ && $4 == 5 { m = $2 } END { print m }' "$TMP/wire.txt")" = "${NODE_MAC[$1]}" ]; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

start_api || { fail "API server" "did not start"; finish; }
pass "API server started in $CTL on 10.99.0.1"
code=$(api POST $POOL '{"metadata":{"name":"testnet"},"spec":{"networkName":"default/testnet",
  "ipv4Config":{"serverIP":"'$SERVER_IP'","cidr":"'$NET'.0/24","router":"'$NET'.1",
  "pool":{"start":"'$NET'.100","end":"'$NET'.200"},"dns":["'$NET'.53"],"leaseTime":120}}}' application/json)
check "IPPool created ($code)" test "$code" = 201
code=$(api PATCH $POOL/testnet/status '{"status":{"ipv4":{"used":2,"available":99,"allocated":{"'$NET'.11":"'$MAC1'","'$NET'.12":"'$MAC2'","'$NET'.1":"RESERVED"}}}}')
check "IPPool status written ($code)" test "$code" = 200

# every DHCP reply on the segment, for the whole test
ip netns exec "$SRV" "$PROBE" capture any "$TMP/wire.txt" 2>>"$TMP/capture.log" &
CAP_PID=$!; PIDS+=("$CAP_PID")
wait_for 5 grep -q '^# capturing' "$TMP/wire.txt"

start_node_agent 1
start_node_agent 2
both_ready() { node_ready 1 && node_ready 2; }
check "both replicas ready (synced; the standby too)" wait_for 20 both_ready
one_active() { A=$(active_of 1 2); }
check "one replica active" wait_for 10 one_active
B=$((3 - A))
check "n$A active: serverIP on its eth1" wait_for 5 has_sip "$A"
check "n$B standby: no serverIP" bash -c "! ip -n $TAG-n$B -4 -o addr show dev eth1 | grep -q ' $SERVER_IP/'"
check "n$B standby: vmdhcp_agent_leader 0" test "$(node_metric "$B" vmdhcp_agent_leader)" = 0
check "n$B standby: table synced (2 bindings)" test "$(node_metric "$B" vmdhcp_agent_bindings)" = 2
check "n$B standby: /readyz says standby" bash -c "[ \"\$(ip netns exec $TAG-n$B curl -s http://${NODE_IP[$B]}:$HTTP_PORT/readyz)\" = 'ok: standby' ]"
check "n$A active: /readyz says active" bash -c "[ \"\$(ip netns exec $TAG-n$A curl -s http://${NODE_IP[$A]}:$HTTP_PORT/readyz)\" = 'ok: active' ]"

# vm1 bound through a real client, so its kernel has serverIP's MAC in its ARP cache
udhcpc_q() {
    ip netns exec "$TAG-$1" busybox udhcpc -f -n -q -i eth0 -s "$TMP/udhcpc.script" -t 6 -T 1 >>"$TMP/udhcpc-$1.log" 2>&1
}
write_udhcpc_script
udhcpc_q vm1
check "vm1: bound to $NET.11 by the active replica" has_addr vm1 $NET.11/24
udhcpc_q vm2
check "vm2: bound to $NET.12 (a broadcast DISCOVER both replicas saw)" has_addr vm2 $NET.12/24
check "n$B standby: drained the broadcasts, answered none" bash -c "[ \"\$(ip netns exec $TAG-n$B curl -s http://${NODE_IP[$B]}:$HTTP_PORT/metrics | awk '\$1 ~ /^vmdhcp_agent_replies_sent_total/ { s += \$2 } END { print s + 0 }')\" = 0 ]"
check "n$A active: gratuitous ARP sent" bash -c "[ \"\$(ip netns exec $TAG-n$A curl -s http://${NODE_IP[$A]}:$HTTP_PORT/metrics | awk '\$1 == \"vmdhcp_agent_gratuitous_arp_sent_total\" { print \$2 }')\" -ge 1 ]"

# renew VM: a RENEWING REQUEST from vm's address to serverIP; prints the ACK's time (ns)
renew() { ip netns exec "$TAG-$1" "$PROBE" renew eth0 "$2" "$SERVER_IP" "${3:-15}" | awk '$1 == "ack" { print $3 }'; }

# failover KIND: KIND kill (SIGKILL), term (SIGTERM), node (frozen + links gone). Sets A/B.
failover() {
    local kind=$1 old=$A t0 t1 ms n
    t0=$(date +%s%N)
    case $kind in
    kill) kill -KILL "${APID[$old]}" ;;
    term) kill -TERM "${APID[$old]}" ;;
    node) kill -STOP "${APID[$old]}"
          ip -n "$TAG-n$old" link del eth1; ip -n "$TAG-n$old" link del api0 ;;
    esac
    t1=$(renew vm1 $NET.11 20)
    if [ -z "$t1" ]; then fail "$kind n$old: a renewing client ACKed by n$B" "no ACK in 20 s"; return 1; fi
    ms=$(((t1 - t0) / 1000000))
    echo "$kind $ms" >>"$TMP/failover.txt"
    [ -n "${HA_REPORT:-}" ] && echo "$kind $ms" >>"$HA_REPORT"
    # the time is reported, not asserted (a loaded machine is no measure): make bench-failover
    pass "$kind n$old: renewing client ACKed after $ms ms"
    check "$kind n$old: the ACK came from n$B" last_ack_from "$B"
    check "$kind n$old: n$B now active" test "$(node_metric "$B" vmdhcp_agent_leader)" = 1
    A=$B; B=$old
}

for i in $(seq "$HA_KILLS"); do
    failover kill || break
    # the dead agent's address expires with its lifetime (nobody renews it)
    only_on() { [ "$(sip_count 1 2)" = 1 ] && has_sip "$1"; }
    check "kill $i: serverIP on exactly one interface (n$A)" wait_for 10 only_on "$A"
    wait "${APID[$B]}" 2>/dev/null
    start_node_agent "$B" # the kubelet restarts the container
    check "kill $i: n$B back as a ready standby" wait_for 20 node_ready "$B"
    check "kill $i: n$B standby: leader 0, no serverIP" bash -c "[ \"\$(ip netns exec $TAG-n$B curl -s http://${NODE_IP[$B]}:$HTTP_PORT/metrics | awk '\$1 == \"vmdhcp_agent_leader\" { print \$2 }')\" = 0 ] && ! ip -n $TAG-n$B -4 -o addr show dev eth1 | grep -q ' $SERVER_IP/'"
done

for i in $(seq "$HA_TERMS"); do
    # the agent's log is appended to across restarts: count the releases
    released=$(grep -c "Lease default/vm-dhcp-agent-default-testnet released" "$TMP/agent-n$A.log")
    failover term || break
    check "term: the Lease was released (no wait for its expiry)" test "$(grep -c "Lease default/vm-dhcp-agent-default-testnet released" "$TMP/agent-n$B.log")" -gt "$released"
    check "term: the stopped agent removed serverIP" bash -c "! ip -n $TAG-n$B -4 -o addr show dev eth1 | grep -q ' $SERVER_IP/'"
    wait "${APID[$B]}" 2>/dev/null; rc=$?
    check "term: exit status 0 (got $rc)" test "$rc" = 0
    start_node_agent "$B"
    check "term: n$B back as a ready standby" wait_for 20 node_ready "$B"
done

# the active one's node vanishes: frozen, both its links gone
vm2_again() { udhcpc_q vm2 && has_addr vm2 $NET.12/24; }
synced_standby() { node_ready "$1" && [ "$(node_metric "$1" vmdhcp_agent_kube_synced)" = 1 ] &&
    [ "$(node_metric "$1" vmdhcp_agent_snapshot_stale)" = 0 ]; }
for i in $(seq "$HA_NODES"); do
    if [ "$i" -gt 1 ]; then
        # the vanished node comes back (new links, its agent restarted) as the standby
        plug_node "$B"
        start_node_agent "$B"
        check "node $i: n$B plugged back in, a synced standby" wait_for 20 synced_standby "$B"
    fi
    failover node || break
    kill -KILL "${APID[$B]}" 2>/dev/null; wait "${APID[$B]}" 2>/dev/null
    check "node: serverIP on n$A" has_sip "$A"
    check "node: vm2 (DISCOVER) bound again by n$A" vm2_again
done

ha_state() { [ "$(node_metric "$1" "vmdhcp_agent_ha_state{state=\"$2\"}")" = 1 ]; }
log_count() { grep -c -- "$2" "$TMP/agent-n$1.log"; }

# a second replica again (the vanished node plugged back in)
plug_node "$B"
start_node_agent "$B"
check "n$B plugged back in, a synced standby" wait_for 20 synced_standby "$B"

# partition: the active one loses the API server, not the VMs. It cannot renew, but nobody can
# take the address from under it: it keeps answering (hold); the other gets the Lease and waits
# until nobody answers ARP for serverIP. Healed: the first sees the new holder and steps down.
held=$(log_count "$A" "keeps answering (hold)")
ip -n "$TAG-n$A" link set api0 down
check "partition: n$A cannot renew and keeps answering (hold)" wait_for 10 bash -c "[ \$(grep -c 'keeps answering (hold)' '$TMP/agent-n$A.log') -gt $held ]"
check "partition: n$B holds the Lease but is fenced by ARP" wait_for 15 grep -q "holds the Lease but $SERVER_IP is still answered by ${NODE_MAC[$A]}" "$TMP/agent-n$B.log"
check "partition: n$B answers nothing (vmdhcp_agent_leader 0)" test "$(node_metric "$B" vmdhcp_agent_leader)" = 0
t1=$(renew vm1 $NET.11 10)
check "partition: a renewing client is ACKed" test -n "$t1"
check "partition: by n$A, the only one answering" last_ack_from "$A"
ip -n "$TAG-n$A" link set api0 up
check "healed: n$A sees the new holder and steps down" wait_for 15 grep -q "stands by, not answering: the Lease is held by agent-n$B" "$TMP/agent-n$A.log"
check "healed: n$B takes serverIP (active)" wait_for 10 ha_state "$B" active
t1=$(renew vm1 $NET.11 10)
check "healed: a renewing client is ACKed by n$B" bash -c "[ -n '$t1' ]" && check "healed: the ACK came from n$B" last_ack_from "$B"
A_old=$A; A=$B; B=$A_old
only_on_any() { [ "$(sip_count "$A" "$B")" = 1 ] && has_sip "$1"; }
check "healed: serverIP on n$A only" wait_for 10 only_on_any "$A"

# the API server down: the active one holds; killed, the standby takes over by ARP alone
PORT=$(cat "$TMP/api/port")
held=$(log_count "$A" "keeps answering (hold)")
stop_pid "$API_PID"
check "API server down: n$A keeps answering (hold)" wait_for 10 bash -c "[ \$(grep -c 'keeps answering (hold)' '$TMP/agent-n$A.log') -gt $held ]"
sleep 2 # a few of the standby's hold probes
# standby, or probing at this instant (an ARP probe in progress): never hold, active or serverIP
not_taken_over() { ! ha_state "$B" hold && ! ha_state "$B" active && ! has_sip "$B"; }
check "API server down: n$B stays standby (its probes answered)" not_taken_over
t0=$(date +%s%N)
kill -KILL "${APID[$A]}"
t1=$(renew vm1 $NET.11 20)
check "API server down: SIGKILL of n$A, a renewing client ACKed" test -n "$t1"
if [ -n "$t1" ]; then
    ms=$(((t1 - t0) / 1000000)); echo "nokube $ms" >>"$TMP/failover.txt"
    [ -n "${HA_REPORT:-}" ] && echo "nokube $ms" >>"$HA_REPORT"
    check "API server down: by n$B without the Lease (hold), after $ms ms" ha_state "$B" hold
    check "API server down: the ACK came from n$B" last_ack_from "$B"
fi
wait "${APID[$A]}" 2>/dev/null
start_node_agent "$A"
restarted_standby() { node_ready "$1" && sleep 2 && ha_state "$1" standby; }
check "API server down: n$A restarted, stays standby (n$B answers ARP)" wait_for 20 restarted_standby "$A"
check "API server down: serverIP on n$B only" only_on_any "$B"
A_old=$A; A=$B; B=$A_old

# warm start: both stopped, a binding changed meanwhile, both restarted with the API server down
kill -TERM "${APID[$A]}" "${APID[$B]}"; wait "${APID[$A]}" "${APID[$B]}" 2>/dev/null
check "snapshots written by both" test -s "$TMP/n$A.snapshot" -a -s "$TMP/n$B.snapshot"
start_api "$PORT" || fail "API server restart" "did not start on $PORT"
code=$(api PATCH $POOL/testnet/status '{"status":{"ipv4":{"allocated":{"'$NET'.12":null,"'$NET'.13":"'$MAC2'"}}}}')
check "meanwhile vm2's binding moved to $NET.13 ($code)" test "$code" = 200
stop_pid "$API_PID"
start_node_agent "$A"
start_node_agent "$B"
t1=$(renew vm1 $NET.11 10)
check "API server down: restarted replicas ACK vm1 from their snapshots" test -n "$t1"
holder_of() { local n; for n in "$A" "$B"; do ha_state "$n" hold && { H=$n; return 0; }; done; return 1; }
check "API server down: one replica holds" wait_for 10 holder_of
check "API server down: serverIP on one interface" only_on_any "$H"
O=$((H == A ? B : A))
# (the restarted replica that does not hold may still be probing for a moment: polled)
check "API server down: the other is a standby" wait_for 10 ha_state "$O" standby
check "API server down: /readyz ok, stale" bash -c "ip netns exec $TAG-n$H curl -s http://${NODE_IP[$H]}:$HTTP_PORT/readyz | grep -q '^ok: stale: serving the snapshot written at .*; hold\$'"
check "API server down: vmdhcp_agent_snapshot_stale 1" test "$(node_metric "$H" vmdhcp_agent_snapshot_stale)" = 1
check "API server down: vm2 still gets $NET.12 (the snapshot's binding)" vm2_again
check "log: warm start line" grep -q "warm start: 2 bindings of IPPool default/testnet served from the snapshot" "$TMP/agent-n$H.log"
start_api "$PORT" || fail "API server restart" "did not start on $PORT"
synced() { [ "$(node_metric "$1" vmdhcp_agent_snapshot_stale)" = 0 ] && [ "$(node_metric "$1" vmdhcp_agent_kube_synced)" = 1 ]; }
both_synced() { synced "$A" && synced "$B"; }
check "API server back: both synced, no longer stale" wait_for 30 both_synced
one_leader() { # the replica with the Lease (ha_state active) holds serverIP, the other not
    local n
    for n in "$H" "$O"; do
        ha_state "$n" active && [ "$(sip_count "$H" "$O")" = 1 ] && has_sip "$n" && { L=$n; return 0; }
    done
    return 1
}
check "API server back: one replica active with the Lease, serverIP on it only" wait_for 20 one_leader
vm2_moved() { udhcpc_q vm2 && has_addr vm2 $NET.13/24; }
check "API server back: vm2 gets the changed binding $NET.13" wait_for 10 vm2_moved
A=${L:-$H}; B=$((A == H ? O : H))
check "API server back: /readyz plain" bash -c "[ \"\$(ip netns exec $TAG-n$A curl -s http://${NODE_IP[$A]}:$HTTP_PORT/readyz)\" = 'ok: active' ]"

# the wire: no request (xid) answered from two MACs, replies from serverIP only
stop_pid "$CAP_PID"
awk '!/^#/ { if (($5 in mac) && mac[$5] != $2) { print "xid " $5 " answered by " mac[$5] " and " $2; bad = 1 } mac[$5] = $2 }
     END { exit bad }' "$TMP/wire.txt" >"$TMP/wire-dups.txt"
check "wire: no request answered by two replicas ($(grep -vc '^#' "$TMP/wire.txt") replies)" test ! -s "$TMP/wire-dups.txt"
check "wire: every reply from $SERVER_IP" bash -c "! awk '!/^#/ && \$3 != \"$SERVER_IP\"' '$TMP/wire.txt' | grep -q ."
check "wire: replies from both replicas' MACs seen" test "$(awk '!/^#/ { print $2 }' "$TMP/wire.txt" | sort -u | wc -l)" -ge 2

# a damaged snapshot is ignored with a log line (one agent without election)
kill -TERM "${APID[$A]}" "${APID[$B]}"; wait "${APID[$A]}" "${APID[$B]}" 2>/dev/null
printf 'X' | dd of="$TMP/n$A.snapshot" bs=1 seek=40 conv=notrunc 2>/dev/null
NO_ELECT=1 start_node_agent "$A"
check "damaged snapshot: ignored with a log line" wait_for 10 grep -q "snapshot ignored" "$TMP/agent-n$A.log"
check "damaged snapshot: served once synced" wait_for 20 node_ready "$A"

[ "$CHECKS_FAIL" -eq 0 ] || show_logs
echo "failovers (ms): $(tr '\n' ' ' <"$TMP/failover.txt" 2>/dev/null)"
finish
