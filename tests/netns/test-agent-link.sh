#!/bin/bash
# tests/netns/test-agent-link.sh - vm-dhcp-agent follows its interface through netlink:
#   - the bridge deleted: sockets closed, /readyz 503, the agent keeps running;
#   - the bridge re-created (new ifindex): serverIP re-added, sockets reopened, a client binds;
#   - the bridge set down then up: sockets reopened, a client binds;
#   - a pool paused by SIGHUP is not served (not ready), unpaused it is served again;
#   - started before its interface exists: waits (not ready), serves once it appears.
# A bad configuration file at start is one clear error and exit status 2.
. "$(dirname "$0")/lib.sh"
require busybox

make_server
add_vm vm1 52:54:00:dd:00:01
cfg=$TMP/pool.yaml
write_pool "$cfg"
vmnetcfg "$cfg" vm1 52:54:00:dd:00:01 $NET.11

# bad configuration: one line naming file, document and field; exit 2
sed 's#cidr: .*#cidr: 10.66.0/8#' "$cfg" >"$TMP/bad.yaml"
out=$(ip netns exec "$SRV" "$AGENT" --config "$TMP/bad.yaml" --interface br0 2>&1); rc=$?
check "bad config: exit status 2 (got $rc)" test "$rc" = 2
check "bad config: error names file, document, field" \
    grep -q "bad.yaml: document 1 (line 1): spec.ipv4Config.cidr" <<<"$out"
check "bad config: exactly one line" test "$(grep -c . <<<"$out")" = 1

start_agent "$cfg" || { fail "agent ready" "did not start"; finish; }
pass "agent ready"
check "agent: serverIP $SERVER_IP/24 on br0" bash -c "ip -n $SRV -4 -o addr show dev br0 | grep -q ' $SERVER_IP/24 '"

udhcpc_once() { # VM: one DORA with busybox udhcpc, address applied
    ip -n "$TAG-$1" -4 addr flush dev eth0
    ip netns exec "$TAG-$1" busybox udhcpc -f -n -q -i eth0 -t 5 -T 1 \
        -s "$TMP/udhcpc.script" >>"$TMP/udhcpc.log" 2>&1
}
write_udhcpc_script
udhcpc_once vm1
check "client binds" has_addr vm1 $NET.11/24

reattach() {
    ip -n "$SRV" link add br0 type bridge stp_state 0 forward_delay 0
    ip -n "$SRV" link set p-vm1 master br0
    ip -n "$SRV" link set br0 up
}
not_ready() { ! agent_ready; }

# delete the bridge
ip -n "$SRV" link del br0
check "bridge deleted: /readyz no longer ok" wait_for 5 not_ready
check "bridge deleted: agent still running" kill -0 "$AGENT_PID"
check "bridge deleted: logged" wait_for 3 grep -q "br0: interface deleted" "$TMP/agent.log"
reattach
check "bridge re-created: /readyz ok again" wait_for 10 agent_ready
check "bridge re-created: logged" grep -Eq "br0: interface (appeared|re-created)" "$TMP/agent.log"
check "bridge re-created: serverIP re-added" bash -c "ip -n $SRV -4 -o addr show dev br0 | grep -q ' $SERVER_IP/24 '"
udhcpc_once vm1
check "bridge re-created: client binds again" has_addr vm1 $NET.11/24

# down and up
ip -n "$SRV" link set br0 down
check "bridge down: /readyz no longer ok" wait_for 5 not_ready
ip -n "$SRV" link set br0 up
check "bridge up: /readyz ok again" wait_for 10 agent_ready
udhcpc_once vm1
check "bridge up: client binds again" has_addr vm1 $NET.11/24

# a paused pool: not served, not ready; unpaused by SIGHUP: served again
sed -i 's#^  networkName: .*#&\n  paused: true#' "$cfg"
kill -HUP "$AGENT_PID"
paused() { ip netns exec "$SRV" curl -s "http://127.0.0.1:$HTTP_PORT/readyz" | grep -q "paused"; }
check "paused pool: /readyz says paused" wait_for 5 paused
ip -n "$TAG-vm1" -4 addr flush dev eth0
ip netns exec "$TAG-vm1" busybox udhcpc -f -n -q -i eth0 -t 2 -T 1 -s "$TMP/udhcpc.script" >>"$TMP/udhcpc.log" 2>&1
check "paused pool: client gets nothing" test -z "$(vm_addr vm1)"
sed -i '/^  paused: true$/d' "$cfg"
kill -HUP "$AGENT_PID"
check "unpaused: /readyz ok" wait_for 5 agent_ready
udhcpc_once vm1
check "unpaused: client binds" has_addr vm1 $NET.11/24
check "agent still running" kill -0 "$AGENT_PID"

# an interface that does not exist yet (a Multus eth1 plugged late): wait, then serve
stop_pid "$AGENT_PID"
ip -n "$SRV" link del br0
# libevent's evhttp resolves the listen address with AI_ADDRCONFIG, which refuses 127.0.0.1
# while the namespace has IPv6 (the veth's link-local) but no non-loopback IPv4 address (a pod
# always has one on eth0): give the namespace one on a spare veth
ip -n "$SRV" link add hold0 type veth peer name hold1
ip -n "$SRV" addr add 192.0.2.1/32 dev hold0
ip -n "$SRV" link set hold0 up
ip netns exec "$SRV" "$AGENT" --config "$cfg" --interface br0 --assign-server-ip \
    --listen "127.0.0.1:$HTTP_PORT" >>"$TMP/agent-late.log" 2>&1 &
AGENT_PID=$!
up_but_not_ready() { ip netns exec "$SRV" curl -s "http://127.0.0.1:$HTTP_PORT/readyz" | grep -q "does not exist"; }
check "missing interface: agent waits, /readyz says the interface does not exist" wait_for 5 up_but_not_ready
reattach
check "interface created later: /readyz ok" wait_for 10 agent_ready
udhcpc_once vm1
check "interface created later: client binds" has_addr vm1 $NET.11/24
check "agent still running" kill -0 "$AGENT_PID"
[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
