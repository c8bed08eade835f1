#!/bin/bash
# tests/netns/test-exit-codes.sh - one exit-status convention for vm-dhcp-agent and
# vm-dhcp-controller (README "Exit status"): 0 done, 1 runtime failure, 2 bad usage or
# configuration; representative cases of each, both programs run inside this test's network
# namespace. Then the agent's start-up retries, with socket(AF_NETLINK) failing through an
# LD_PRELOAD shim (build/tests/fault-shim.so): ENOMEM twice is tried again and the agent serves;
# EPERM ends the start at once with status 1; the controller's HTTP socket failing with ENOMEM
# twice is tried again too.
. "$(dirname "$0")/lib.sh"
require
CONTROLLER=${CONTROLLER:-$ROOT/build/vm-dhcp-controller}
SHIM=${SHIM:-$ROOT/build/tests/fault-shim.so}
[ -x "$CONTROLLER" ] || { echo "FAIL: $CONTROLLER not built (make)"; exit 1; }
[ -f "$SHIM" ] || { echo "FAIL: $SHIM not built (make tests)"; exit 1; }

make_server
cfg=$TMP/pool.yaml
write_pool "$cfg"
vmnetcfg "$cfg" vm-a 52:54:00:dd:00:01 "$NET.150"
kc=$TMP/kubeconfig
cat >"$kc" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:1"}
users:
- name: u
  user: {token: "x"}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
EOF

# status WANT NAME PROGRAM ARGS...: runs PROGRAM in $SRV (30 s at most), checks its status and
# that it said something on stderr (kept in $TMP/out)
status() {
    local want=$1 name=$2 rc; shift 2
    timeout 30 ip netns exec "$SRV" "$@" >"$TMP/out" 2>&1; rc=$?
    check "$name: exit $want (got $rc)" test "$rc" = "$want"
}
said() { check "$1: says \"$2\"" grep -qF -- "$2" "$TMP/out"; }

A=$AGENT
C="$CONTROLLER --agent-image img --no-leader-election"

# --help documents the convention, exit 0
status 0 "agent --help" $A --help
said "agent --help" "Exit status: 0 done; 1 runtime failure"
status 0 "controller --help" $C --help
said "controller --help" "Exit status: 0 done"
said "controller --help" "2 bad usage or"

# 2: bad usage or configuration
status 2 "agent: unknown flag" $A --nope
status 2 "controller: unknown flag" $C --nope
status 2 "agent: missing --config file" $A --config "$TMP/none.yaml" --interface br0
said "agent: missing --config file" "none.yaml: cannot read: No such file or directory"
cp "$cfg" "$TMP/bad.yaml"; vmnetcfg "$TMP/bad.yaml" vm-b ff:ff:ff:ff:ff:ff "$NET.151"
status 2 "agent: a broadcast MAC in the file" $A --config "$TMP/bad.yaml" --interface br0
said "agent: a broadcast MAC in the file" "ff:ff:ff:ff:ff:ff is the broadcast address, not a NIC's address"
status 2 "agent: missing kubeconfig" $A --ippool-ref default/testnet --kubeconfig "$TMP/none.kubeconfig" --interface br0
status 2 "controller: missing kubeconfig" $C --kubeconfig "$TMP/none.kubeconfig"
said "controller: missing kubeconfig" "none.kubeconfig: No such file or directory"
status 2 "agent: --listen not an address" $A --config "$cfg" --interface br0 --listen garbage
status 2 "controller: --listen not an address" $C --kubeconfig "$kc" --listen garbage
said "controller: --listen not an address" "--listen garbage"

# 1: runtime failures (the system refuses): the HTTP port held by the running agent
if start_agent "$cfg"; then
    status 1 "agent: --listen address in use" $A --config "$cfg" --interface br0 --listen "127.0.0.1:$HTTP_PORT"
    said "agent: --listen address in use" "in use"
    status 1 "controller: --listen address in use" $C --kubeconfig "$kc" --listen "127.0.0.1:$HTTP_PORT"
    said "controller: --listen address in use" "in use"
    stop_pid "$AGENT_PID"; AGENT_PID=
else
    fail "agent" "did not start"
fi

# start-up retries: ENOMEM twice, then the agent serves (and says it retried)
# (the shim is for the agent only: `ip netns exec` opens netlink sockets too)
printf '#!/bin/sh\nLD_PRELOAD=%s FAULT_NETLINK_COUNT=2 FAULT_NETLINK_ERRNO=12 exec %s "$@"\n' "$SHIM" "$AGENT" >"$TMP/agent-enomem"
chmod +x "$TMP/agent-enomem"
: >"$TMP/agent.log"
AGENT=$TMP/agent-enomem start_agent "$cfg"
check "ENOMEM twice at start: the agent serves" agent_ready
check "ENOMEM twice at start: 2 failures injected" test "$(grep -c '^fault-shim:' "$TMP/agent.log")" = 2
check "ENOMEM twice at start: each said to be tried again" \
    test "$(grep -c 'may pass: trying again in' "$TMP/agent.log")" = 2
check "ENOMEM twice at start: names the error" grep -q 'netlink.*Cannot allocate memory; may pass' "$TMP/agent.log"
stop_pid "$AGENT_PID"; AGENT_PID=
# a permanent error (EPERM): no retry, exit 1
status 1 "EPERM at start" env LD_PRELOAD="$SHIM" FAULT_NETLINK_COUNT=1000 FAULT_NETLINK_ERRNO=1 $A --config "$cfg" --interface br0
check "EPERM at start: one attempt" test "$(grep -c '^fault-shim:' "$TMP/out")" = 1
check "EPERM at start: not tried again" bash -c "! grep -q 'trying again' '$TMP/out'"
said "EPERM at start" "Operation not permitted"
# the controller: its HTTP socket failing with ENOMEM twice is tried again, then served
ip netns exec "$SRV" env LD_PRELOAD="$SHIM" FAULT_DOMAIN=2 FAULT_NETLINK_COUNT=2 FAULT_NETLINK_ERRNO=12 \
    $C --kubeconfig "$kc" --listen "127.0.0.1:$HTTP_PORT" >"$TMP/controller.log" 2>&1 &
CTL_PID=$!; PIDS+=("$CTL_PID")
healthz() { ip netns exec "$SRV" curl -sf --max-time 5 -o /dev/null "http://127.0.0.1:$HTTP_PORT/healthz"; }
check "controller: ENOMEM twice on its HTTP socket, then /healthz answers" wait_for 30 healthz
check "controller: 2 failures injected" test "$(grep -c '^fault-shim:' "$TMP/controller.log")" = 2
check "controller: each said to be tried again" \
    test "$(grep -c 'Cannot allocate memory; may pass: trying again in' "$TMP/controller.log")" = 2
stop_pid "$CTL_PID"
[ "$CHECKS_FAIL" = 0 ] || { show_logs; cat "$TMP/out"; }
finish
