#!/bin/bash
# tests/netns/test-agent-kernel-drops.sh - the DHCP packet socket's kernel counters:
#   - an agent that answers is counted in vmdhcp_agent_kernel_received_total, with
#     vmdhcp_agent_kernel_drops_total 0;
#   - the agent stopped (SIGSTOP: it reads nothing) while more DISCOVERs arrive than its receive
#     ring holds (512 frames on a 1500-MTU link): once it runs again, the overflow is in
#     vmdhcp_agent_kernel_drops_total, every frame the filter passed in
#     vmdhcp_agent_kernel_received_total (the kernel resets PACKET_STATISTICS on each read:
#     the agent accumulates, so scrapes that follow do not lose or count again), and the
#     frames not dropped are exactly those read (vmdhcp_agent_packets_received_total).
# Nothing here asserts a duration: every wait polls for the event, with a generous bound.
. "$(dirname "$0")/lib.sh"
require
FLOOD=${FLOOD:-$ROOT/build/tests/dhcp-flood}
[ -x "$FLOOD" ] || { echo "FAIL: $FLOOD not built (make build/tests/dhcp-flood)"; exit 1; }
N=3000

make_server
add_vm flood 52:54:00:ef:00:01
cfg=$TMP/pool.yaml
write_wide_pool "$cfg"
start_agent "$cfg" --dynamic --log-level warn ||
    { fail "agent ready" "did not start"; finish; }
pass "agent ready"

received() { metric vmdhcp_agent_kernel_received_total; }
drops() { metric vmdhcp_agent_kernel_drops_total; }
discovers() { metric 'vmdhcp_agent_packets_received_total{type="discover"}'; }
check "metrics: kernel counters exported, 0 at start" test "$(received)" = 0 -a "$(drops)" = 0
drops_help() {
    ip netns exec "$SRV" curl -sf "http://127.0.0.1:$HTTP_PORT/metrics" |
        grep -q '^# HELP vmdhcp_agent_kernel_drops_total .*ring was full'
}
check "metrics: HELP of the drops counter says what it counts" drops_help

# 1. answering: 10 DISCOVERs, all read, none dropped
ip netns exec "$TAG-flood" "$FLOOD" eth0 10 1000 3 >"$TMP/flood1.log" 2>&1
ten() { [ "$(discovers)" -ge 10 ]; }
check "agent: 10 DISCOVERs read" wait_for 30 ten
check "kernel: 10 received" test "$(received)" = 10
check "kernel: none dropped" test "$(drops)" = 0

# 2. stopped: N DISCOVERs, the ring overflows
kill -STOP "$AGENT_PID"
ip netns exec "$TAG-flood" "$FLOOD" eth0 "$N" 20000 5 >"$TMP/flood2.log" 2>&1
check "flood: $N DISCOVERs sent" grep -q "^sent $N in " "$TMP/flood2.log"
kill -CONT "$AGENT_PID"
last=-1
settled() {
    local now
    now=$(discovers)
    [ "$now" = "$last" ] && [ "$now" -gt 10 ] && return 0
    last=$now
    return 1
}
check "agent: the ring's DISCOVERs read after SIGCONT" wait_for 60 settled
r=$(received) d=$(drops) n=$(discovers)
echo "kernel: received $r, dropped $d; the agent read $n DISCOVERs (of $((N + 10)) sent)"
check "kernel: drops counted ($d)" test "$d" -gt 0
check "kernel: drops at least the overflow of a 512-frame ring" test "$d" -ge $((N - 512 - 1000))
check "kernel: received = read + dropped ($r = $n + $d)" test "$r" = $((n + d))
check "kernel: received no more than sent" test "$r" -le $((N + 10))
# scraped again: the accumulated counters stay
check "kernel: counters kept across scrapes" test "$(received)" = "$r" -a "$(drops)" = "$d"
check "agent still running" kill -0 "$AGENT_PID"
finish
