#!/bin/bash
# tests/netns/test-agent-mtu.sh - the receive buffer follows the interface's MTU:
#   - started on a 1500-byte bridge, the link raised to 9000 afterwards: a 4000-byte
#     DHCPDISCOVER (options padded) is answered, and the change is logged;
#   - the bridge set back to 1500 while its port stays at 9000: a 4000-byte frame still reaches
#     the agent but no longer fits its receive slots: counted as truncated and logged (a
#     warning), never dropped silently.
. "$(dirname "$0")/lib.sh"
require
BIG=${BIG:-$ROOT/build/tests/dhcp-big-discover}
[ -x "$BIG" ] || { echo "FAIL: $BIG not built (make tests)"; exit 1; }
MAC=52:54:00:dd:00:07

make_server
add_vm vm1 $MAC
cfg=$TMP/pool.yaml
write_pool "$cfg"
vmnetcfg "$cfg" vm1 $MAC $NET.17

start_agent "$cfg" || { fail "agent ready" "did not start"; finish; }
pass "agent ready"
big() { ip netns exec "$TAG-vm1" "$BIG" eth0 $MAC "$1" "${2:-5}" >>"$TMP/big.log" 2>&1; }
check "MTU 1500: a 1400-byte DISCOVER is answered" big 1400

# raise the link to 9000 (ports first; the bridge takes its ports' MTU)
ip -n "$TAG-vm1" link set eth0 mtu 9000
ip -n "$SRV" link set p-vm1 mtu 9000
ip -n "$SRV" link set br0 mtu 9000
check "MTU raised: logged" wait_for 5 grep -q "br0: MTU 1500 -> 9000" "$TMP/agent.log"
: >"$TMP/big.log"
check "MTU 9000: a 4000-byte DISCOVER is answered" big 4000
check "MTU 9000: the offer is the VM's address" grep -q "offer $NET.17" "$TMP/big.log"
check "MTU 9000: nothing truncated" test "$(metric 'vmdhcp_agent_drops_total{reason="truncated"}')" = 0

# the bridge back to 1500, its port still at 9000: the frame arrives, larger than a slot
ip -n "$SRV" link set br0 mtu 1500
check "MTU lowered: logged" wait_for 5 grep -q "br0: MTU 9000 -> 1500" "$TMP/agent.log"
big 4000 2
truncated() { [ "$(metric 'vmdhcp_agent_drops_total{reason="truncated"}')" != 0 ]; }
check "frame over the slot: counted as truncated" wait_for 5 truncated
check "frame over the slot: one warning" grep -q "dropped a 4[0-9]*-byte frame: the receive buffer holds" "$TMP/agent.log"
check "agent still running" kill -0 "$AGENT_PID"
[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
