#!/bin/bash
# tests/netns/test-agent-caps.sh - vm-dhcp-agent's privileges, as the agent pod runs it:
#   1. Kubernetes mode as uid 65532 with exactly the pod's credentials: a copy of the binary with
#      file capabilities cap_net_raw,cap_net_bind_service,cap_net_admin+ep (glibc runs it in
#      secure-execution mode), bounding set NET_RAW, NET_BIND_SERVICE, NET_ADMIN, no
#      inheritable or ambient capabilities. It serves (libcurl never mapped), then keeps
#      only NET_ADMIN (CapPrm, CapEff); with br0 down and its addresses flushed, then up, the
#      sockets are kept, the address is re-added and a renewal (unicast to the server) is ACKed;
#      a new serverIP is added on the same sockets; br0 re-created (new ifindex): one clear
#      error, exit status 1 (the kubelet restarts it).
#   2. The bounding set without NET_BIND_SERVICE: with "+ep" file capabilities execve() fails
#      (EPERM: the kernel's check for capability-dumb binaries); with "+p" the agent starts,
#      makes them effective itself, and says "cannot open DHCP sockets ... (missing
#      capabilities: NET_BIND_SERVICE)"; /readyz 503; nothing dropped.
#   3. No capabilities at all (uid 65532, no file capabilities): "needs CAP_NET_ADMIN", 503.
#   4. --listen: a wildcard in Kubernetes mode, an address of br0, the pool's serverIP are
#      refused at start (exit 2); a wildcard in local mode is a warning; an IPPool whose serverIP
#      becomes the listen address is not served (503, address not added) until it changes back.
#   5. Local mode --drop-capabilities as root: NET_ADMIN only, bounding set too, no_new_privs;
#      a paused pool unpaused (SIGHUP) needs new sockets: the clear error, exit status 1.
. "$(dirname "$0")/lib.sh"
require busybox setpriv setcap getcap
APISERVER=${APISERVER:-$ROOT/build/test-apiserver}
[ -x "$APISERVER" ] || { echo "FAIL: $APISERVER not built (make)"; exit 1; }
MAC1=52:54:00:ca:00:01
API_PID=
UDHCPC_PID=
POOL=/apis/network.harvesterhci.io/v1alpha1/namespaces/default/ippools
RESTART_MSG="capabilities were dropped after start-up; exiting so the container restarts with them"
# the pod's credentials (runAsUser/runAsGroup 65532, capabilities drop ALL + add the three)
POD_CAPS=+net_raw,+net_bind_service,+net_admin

make_server
# a non-loopback IPv4 address in the namespace (the pod's eth0); the agent adds serverIP itself
ip -n "$SRV" link add api0 type veth peer name api1
ip -n "$SRV" addr add 192.0.2.1/32 dev api0
ip -n "$SRV" link set api0 up
ip -n "$SRV" link set api1 up
add_vm vm1 $MAC1

# copies of the binary in a directory uid 65532 can read, with file capabilities
# install_copy DIR CAPS: CAPS "" for none
install_copy() {
    mkdir -p "$1"
    cp "$AGENT" "$1/vm-dhcp-agent"
    chmod 755 "$1" "$1/vm-dhcp-agent"
    [ -z "$2" ] || setcap "$2" "$1/vm-dhcp-agent"
}
chmod 755 "$TMP"
install_copy "$TMP/ep" cap_net_raw,cap_net_bind_service,cap_net_admin+ep 2>"$TMP/setcap.err" ||
    skip "setcap failed on $TMP (no file capabilities on this file system?): $(cat "$TMP/setcap.err")"
getcap "$TMP/ep/vm-dhcp-agent" | grep -q "cap_net_bind_service,cap_net_admin,cap_net_raw=ep" ||
    skip "file capabilities not kept on $TMP: $(getcap "$TMP/ep/vm-dhcp-agent")"
install_copy "$TMP/p" cap_net_raw,cap_net_bind_service,cap_net_admin+p
install_copy "$TMP/none" ""

start_api() {
    mkdir -p "$TMP/api"
    ip netns exec "$SRV" "$APISERVER" --listen 127.0.0.1:0 --state-dir "$TMP/api" \
        --data "$TMP/api/data.json" --log-level warn >>"$TMP/apiserver.log" 2>&1 &
    API_PID=$!; PIDS+=("$API_PID")
    for i in $(seq 100); do [ -s "$TMP/api/port" ] && return 0; sleep 0.1; done
    return 1
}
api() { # METHOD PATH [BODY] [CONTENT-TYPE]: prints the HTTP status
    ip netns exec "$SRV" curl -s -o "$TMP/api.out" -w '%{http_code}' --cacert "$TMP/api/ca.crt" \
        -H "Authorization: Bearer test-token" -X "$1" \
        -H "Content-Type: ${4:-application/merge-patch+json}" ${3:+--data "$3"} \
        "https://127.0.0.1:$(cat "$TMP/api/port")$2"
}
readyz() { ip netns exec "$SRV" curl -s "http://127.0.0.1:$HTTP_PORT/readyz"; }
readyz_code() { ip netns exec "$SRV" curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/readyz"; }
not_ready() { [ "$(readyz_code)" = 503 ]; }
readyz_says() { readyz | grep -q -- "$1"; }
log_has() { grep -q -- "$2" "$TMP/$1"; }

# kube_agent LOG DIR|- [SETPRIV ARGS...] -- [AGENT ARGS...]: the agent in Kubernetes mode on br0,
# as uid 65532 with SETPRIV's credentials (DIR's copy), or as root (-: $AGENT); sets AGENT_PID
kube_agent() {
    local log=$1 dir=$2 pre=(); shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do pre+=("$1"); shift; done
    shift
    local bin=$AGENT
    if [ "$dir" != - ]; then
        bin=$dir/vm-dhcp-agent
        # an ASan build cannot look for leaks (ptrace) in a process its file capabilities
        # made non-dumpable, nor in one without CAP_SYS_PTRACE
        pre=(env "ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0"
            setpriv --reuid 65532 --regid 65532 --clear-groups --inh-caps=-all "${pre[@]}")
    fi
    ip netns exec "$SRV" "${pre[@]}" "$bin" --ippool-ref default/testnet \
        --kubeconfig "$TMP/api/kubeconfig" --interface br0 --log-level debug "$@" \
        >>"$TMP/$log" 2>&1 &
    AGENT_PID=$!
}
# exit_status PID: waits for it (up to 10 s); its exit status in $RC (-1: still running)
exit_status() {
    local i
    RC=-1
    for i in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$1" 2>/dev/null && return
    wait "$1" 2>/dev/null
    RC=$?
}

start_api || { fail "API server" "did not start"; finish; }
chmod -R a+rX "$TMP/api"
code=$(api POST $POOL '{"metadata":{"name":"testnet"},"spec":{"networkName":"default/testnet",
  "ipv4Config":{"serverIP":"'$SERVER_IP'","cidr":"'$NET'.0/24","router":"'$NET'.1",
  "pool":{"start":"'$NET'.100","end":"'$NET'.200"},"dns":["'$NET'.53"],"leaseTime":120}}}' \
  application/json)
check "IPPool created ($code)" test "$code" = 201
code=$(api PATCH $POOL/testnet/status '{"status":{"ipv4":{"used":1,"available":100,
  "allocated":{"'$NET'.11":"'$MAC1'"}}}}')
check "IPPool status written ($code)" test "$code" = 200

write_udhcpc_script
events() { cat "$TMP/vm1.events" 2>/dev/null; }
n_events() { events | grep -c "^$1 ip=$NET.11\$"; }
more_events() { [ "$(n_events "$1")" -gt "$2" ]; }

# --- 1. the pod's credentials ---------------------------------------------------------------
kube_agent agent1.log "$TMP/ep" --bounding-set=-all,$POD_CAPS -- --listen "127.0.0.1:$HTTP_PORT" \
    --log-format json
check "uid 65532, file capabilities: ready after the first sync" \
    wait_for 20 agent_ready
pid=$AGENT_PID
# --log-format json: every line one JSON object
check "--log-format json: every log line is a JSON object with ts, level and msg" \
    jq -e -s 'length > 5 and all(has("ts") and has("level") and has("msg"))' "$TMP/agent1.log"
check "--log-format json: the first line names the version and revision" \
    jq -e -s '.[0].version != null and .[0].revision != null' "$TMP/agent1.log"
check "--log-format json: lines from the Kubernetes source too" \
    jq -e -s 'any(.msg | test("^IPPool default/testnet: applied: "))' "$TMP/agent1.log"
build_info() { ip netns exec "$SRV" curl -sf "http://127.0.0.1:$HTTP_PORT/metrics" |
    grep -q '^vmdhcp_build_info{version="[^"]*",revision="[^"]*"} 1$'; }
check "/metrics: vmdhcp_build_info" build_info
promtool_check "Kubernetes mode: promtool check metrics accepts /metrics"
check "/metrics: process_resident_memory_bytes > 0" \
    test "$(metric process_resident_memory_bytes | cut -d. -f1)" -gt 0
check "runs as uid 65532" test "$(proc_status $pid Uid)" = 65532
check "libcurl not mapped (mbed TLS transport)" bash -c "! grep -q libcurl /proc/$pid/maps"
check "CapPrm: NET_ADMIN only ($(proc_status $pid CapPrm))" test "$(proc_status $pid CapPrm)" = $CAPS_NET_ADMIN
check "CapEff: NET_ADMIN only ($(proc_status $pid CapEff))" test "$(proc_status $pid CapEff)" = $CAPS_NET_ADMIN
check "CapInh, CapAmb empty" test "$(proc_status $pid CapInh)$(proc_status $pid CapAmb)" = $CAPS_NONE$CAPS_NONE
check "no_new_privs set" test "$(proc_status $pid NoNewPrivs)" = 1
check "one line: NET_ADMIN kept, NET_BIND_SERVICE and NET_RAW dropped" \
    log_has agent1.log "capabilities dropped: kept NET_ADMIN (re-adds the server address after link events); dropped NET_BIND_SERVICE, NET_RAW from"
has_server_ip() { ip -n "$SRV" -4 -o addr show dev br0 | grep -q " $SERVER_IP/24 "; }
check "serverIP $SERVER_IP/24 set on br0" has_server_ip

ip netns exec "$TAG-vm1" env EVENTS="$TMP/vm1.events" busybox udhcpc -f -i eth0 \
    -s "$TMP/udhcpc.script" -t 5 -T 1 -A 1 >>"$TMP/udhcpc-vm1.log" 2>&1 &
UDHCPC_PID=$!; PIDS+=("$UDHCPC_PID")
check "vm1: bound to $NET.11" wait_for 15 more_events bound 0
check "vm1: address on eth0" wait_for 5 has_addr vm1 $NET.11/24

ip -n "$SRV" link set br0 down
ip -n "$SRV" -4 addr flush dev br0
check "br0 down: /readyz 503, interface down" wait_for 10 readyz_says "interface br0 is down"
check "br0 down: sockets kept" wait_for 5 log_has agent1.log "DHCP sockets kept while the interface is down"
ip -n "$SRV" link set br0 up
check "br0 up: ready again" wait_for 10 agent_ready
check "br0 up: serverIP re-added with the NET_ADMIN kept" wait_for 5 has_server_ip
acks=$(metric 'vmdhcp_agent_replies_sent_total{type="ack"}')
renews=$(n_events renew)
kill -USR1 "$UDHCPC_PID" # renew now: a unicast REQUEST to the server
check "br0 up: vm1's renewal ACKed" wait_for 15 more_events renew "$renews"
check "br0 up: the ACK counted" test "$(metric 'vmdhcp_agent_replies_sent_total{type="ack"}')" -gt "$acks"
check "br0 up: still the original process, NET_ADMIN only" test "$(proc_status $pid CapEff)" = $CAPS_NET_ADMIN
stop_pid "$UDHCPC_PID"
# a new serverIP: added with the NET_ADMIN kept, on the same sockets
code=$(api PATCH $POOL/testnet '{"spec":{"ipv4Config":{"serverIP":"'$NET'.2"}}}')
check "serverIP changed to $NET.2 ($code)" test "$code" = 200
has_ip2() { ip -n "$SRV" -4 -o addr show dev br0 | grep -q " $NET.2/24 "; }
check "new serverIP: $NET.2/24 added to br0" wait_for 10 has_ip2
check "new serverIP: still ready, same process" agent_ready
code=$(api PATCH $POOL/testnet '{"spec":{"ipv4Config":{"serverIP":"'$SERVER_IP'"}}}')
check "serverIP changed back ($code)" test "$code" = 200

ip -n "$SRV" link del br0
ip -n "$SRV" link add br0 type bridge stp_state 0 forward_delay 0
ip -n "$SRV" link set p-vm1 master br0
ip -n "$SRV" link set br0 up
exit_status $pid; rc=$RC
check "br0 re-created: exit status 1 (got $rc)" test "$rc" = 1
check "br0 re-created: one clear error" \
    log_has agent1.log "br0: the interface re-created (ifindex [0-9]* -> [0-9]*) needs new DHCP sockets: $RESTART_MSG"
check "br0 re-created: said once" test "$(grep -c "$RESTART_MSG" "$TMP/agent1.log")" = 1
[ "$RC" = -1 ] || AGENT_PID= # else cleanup stops it

# --- 2. NET_BIND_SERVICE missing from the bounding set ----------------------------------------
out=$(ip netns exec "$SRV" setpriv --reuid 65532 --regid 65532 --clear-groups --inh-caps=-all \
    --bounding-set=-all,+net_raw,+net_admin "$TMP/ep/vm-dhcp-agent" --version 2>&1); rc=$?
check "+ep, no NET_BIND_SERVICE: execve refused (EPERM), exit $rc" \
    bash -c "[ $rc -ne 0 ] && grep -q 'Operation not permitted' <<<'$out'"
kube_agent agent2.log "$TMP/p" --bounding-set=-all,+net_raw,+net_admin -- --listen "127.0.0.1:$HTTP_PORT"
check "+p, no NET_BIND_SERVICE: the clear error" wait_for 20 log_has agent2.log \
    "br0: cannot open DHCP sockets: Permission denied (missing capabilities: NET_BIND_SERVICE)"
check "+p, no NET_BIND_SERVICE: /readyz 503" wait_for 5 readyz_says "DHCP sockets on br0 are not open"
check "+p: NET_RAW, NET_ADMIN made effective, nothing dropped" \
    test "$(proc_status $AGENT_PID CapEff)" = $CAPS_NET_RAW_ADMIN
check "+p: no drop logged" bash -c "! grep -q 'capabilities dropped' '$TMP/agent2.log'"
check "+p: agent still running (retrying)" kill -0 "$AGENT_PID"
stop_pid "$AGENT_PID"; AGENT_PID=

# --- 3. no capabilities at all ----------------------------------------------------------------
kube_agent agent3.log "$TMP/none" --bounding-set=-all,$POD_CAPS -- --listen "127.0.0.1:$HTTP_PORT"
check "no capabilities: the clear error" wait_for 20 log_has agent3.log \
    "br0: cannot add $SERVER_IP/24: Operation not permitted (needs CAP_NET_ADMIN)"
check "no capabilities: /readyz 503" not_ready
check "no capabilities: CapEff empty" test "$(proc_status $AGENT_PID CapEff)" = $CAPS_NONE
check "no capabilities: agent still running (retrying)" kill -0 "$AGENT_PID"
stop_pid "$AGENT_PID"; AGENT_PID=

# --- 4. where the HTTP endpoint may listen ----------------------------------------------------
out=$(ip netns exec "$SRV" "$AGENT" --ippool-ref default/testnet --kubeconfig "$TMP/api/kubeconfig" \
    --interface br0 --listen ":$HTTP_PORT" 2>&1); rc=$?
check "Kubernetes mode, --listen :PORT: exit 2 (got $rc)" test "$rc" = 2
check "Kubernetes mode, --listen :PORT: says to bind the pod IP" \
    grep -qF -- '--listen :9180 listens on every interface, br0 (the VMs'"'"' network) included, and would show /metrics to every VM: bind the pod IP instead (--listen $(POD_IP):PORT)' <<<"$out"
ip -n "$SRV" addr replace "$SERVER_IP/24" dev br0
out=$(ip netns exec "$SRV" "$AGENT" --ippool-ref default/testnet --kubeconfig "$TMP/api/kubeconfig" \
    --interface br0 --listen "$SERVER_IP:$HTTP_PORT" 2>&1); rc=$?
check "--listen on an address of br0: exit 2 (got $rc)" test "$rc" = 2
check "--listen on an address of br0: names the interface" \
    grep -qF "$SERVER_IP is an address of br0, the interface the VMs are on" <<<"$out"
ip -n "$SRV" -4 addr flush dev br0
cfg=$TMP/pool.yaml
write_pool "$cfg"
vmnetcfg "$cfg" vm1 $MAC1 $NET.11
out=$(ip netns exec "$SRV" "$AGENT" --config "$cfg" --interface br0 --assign-server-ip \
    --listen "$SERVER_IP:$HTTP_PORT" 2>&1); rc=$?
check "local mode, --listen on the pool's serverIP: exit 2 (got $rc)" test "$rc" = 2
check "local mode, --listen on the pool's serverIP: says so" \
    grep -qF "$SERVER_IP is the pool's serverIP, an address of br0" <<<"$out"
ip netns exec "$SRV" "$AGENT" --config "$cfg" --interface br0 --assign-server-ip \
    --listen ":$HTTP_PORT" >>"$TMP/agent4.log" 2>&1 &
AGENT_PID=$!
check "local mode, --listen :PORT: allowed" wait_for 10 agent_ready
check "local mode, --listen :PORT: warns that VMs can reach it" \
    log_has agent4.log "listens on every interface: VMs on br0 can reach /healthz, /readyz and /metrics"
stop_pid "$AGENT_PID"; AGENT_PID=
# the IPPool's serverIP becomes the listen address (a pod IP inside the pool's CIDR, on api0):
# not served, not added to br0; changed back: served without a restart
POD_IP=$NET.250
ip -n "$SRV" addr add "$POD_IP/32" dev api0
ip -n "$SRV" -4 addr flush dev br0
code=$(api PATCH $POOL/testnet '{"spec":{"ipv4Config":{"serverIP":"'$POD_IP'"}}}')
check "IPPool serverIP set to the pod IP $POD_IP ($code)" test "$code" = 200
kube_agent agent5.log - -- --listen "$POD_IP:$HTTP_PORT"
pod_readyz() { ip netns exec "$SRV" curl -s -w '\n%{http_code}' "http://$POD_IP:$HTTP_PORT/readyz" | tr '\n' ' '; }
refused() { pod_readyz | grep -q "its serverIP is the --listen address; not served *503$"; }
check "serverIP = --listen address: /readyz 503 with the reason" wait_for 20 refused
check "serverIP = --listen address: logged" \
    log_has agent5.log "IPPool default/testnet: serverIP $POD_IP is the --listen address: not serving it on br0"
check "serverIP = --listen address: not added to br0" \
    bash -c "! ip -n $SRV -4 -o addr show dev br0 | grep -q $POD_IP"
code=$(api PATCH $POOL/testnet '{"spec":{"ipv4Config":{"serverIP":"'$SERVER_IP'"}}}')
check "serverIP changed back ($code)" test "$code" = 200
served() { pod_readyz | grep -q " 200$"; }
check "serverIP changed back: served without a restart" wait_for 10 served
check "serverIP changed back: $SERVER_IP on br0" has_server_ip
check "root: CapEff and the bounding set NET_ADMIN only" \
    test "$(proc_status $AGENT_PID CapEff)/$(proc_status $AGENT_PID CapBnd)" = $CAPS_NET_ADMIN/$CAPS_NET_ADMIN
stop_pid "$AGENT_PID"; AGENT_PID=

# --- 5. local mode --drop-capabilities, as root -----------------------------------------------
start_agent "$cfg" --drop-capabilities || { fail "local mode --drop-capabilities" "not ready"; finish; }
pass "local mode --drop-capabilities: ready"
check "local mode: CapPrm NET_ADMIN only" test "$(proc_status $AGENT_PID CapPrm)" = $CAPS_NET_ADMIN
check "local mode: bounding set NET_ADMIN only (uid 0 has CAP_SETPCAP)" \
    test "$(proc_status $AGENT_PID CapBnd)" = $CAPS_NET_ADMIN
check "local mode: no_new_privs" test "$(proc_status $AGENT_PID NoNewPrivs)" = 1
check "local mode: logged with the bounding set" \
    log_has agent.log "capabilities dropped: kept NET_ADMIN (re-adds the server address after link events); dropped NET_BIND_SERVICE, NET_RAW and [0-9]* others from the permitted, effective and inheritable sets and the bounding set"
udhcpc_once() {
    ip -n "$TAG-vm1" -4 addr flush dev eth0
    ip netns exec "$TAG-vm1" env EVENTS="$TMP/vm1.events" busybox udhcpc -f -n -q -i eth0 \
        -s "$TMP/udhcpc.script" -t 5 -T 1 >>"$TMP/udhcpc-vm1.log" 2>&1
}
udhcpc_once
check "local mode: client binds" has_addr vm1 $NET.11/24
sed -i 's#^  networkName: .*#&\n  paused: true#' "$cfg"
kill -HUP "$AGENT_PID"
check "paused: /readyz 503" wait_for 10 readyz_says "paused"
sed -i '/^  paused: true$/d' "$cfg"
kill -HUP "$AGENT_PID"
exit_status "$AGENT_PID"; rc=$RC
check "unpaused: exit status 1 (got $rc)" test "$rc" = 1
check "unpaused: one clear error" log_has agent.log "br0: serving again after the sockets were closed (pool paused, deleted or refused) needs new DHCP sockets: $RESTART_MSG"
[ "$RC" = -1 ] || AGENT_PID=

[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
