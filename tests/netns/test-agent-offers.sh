#!/bin/bash
# tests/netns/test-agent-offers.sh - a DISCOVER flood against --dynamic on a /16:
#   - 100 000 DHCPDISCOVERs from made-up MACs in a few seconds, never a REQUEST, replies never
#     read (build/tests/dhcp-flood): the agent holds at most --max-pending-offers (4096 by
#     default) offers; at the cap a DISCOVER takes over an offer made 250 ms ago or more
#     (vmdhcp_agent_dynamic_offers_evicted_total), else is dropped as offer_limit and counted
#     (vmdhcp_agent_dynamic_discovers_refused_total); none of them is written to the lease file,
#     and its RSS stays near where it was (it grew by 37 MB when every OFFER was a lease);
#   - the flood and what was refused are in the log (a warning, the decision log's summary);
#   - then busybox udhcpc from a real VM gets an address at its first DISCOVER, while the
#     flood's offers still hold theirs, and the lease file holds its lease
#     only; the flood's offers expire (vmdhcp_agent_dynamic_offers_expired_total) and their
#     addresses go back to the pool.
# Nothing here asserts a duration: every wait polls for the event, with a generous bound.
. "$(dirname "$0")/lib.sh"
require busybox
FLOOD=${FLOOD:-$ROOT/build/tests/dhcp-flood}
[ -x "$FLOOD" ] || { echo "FAIL: $FLOOD not built (make build/tests/dhcp-flood)"; exit 1; }
UDHCPC=(busybox udhcpc)
N=100000

make_server
add_vm flood 52:54:00:ee:00:01
add_vm vm1 52:54:00:ee:00:02
cfg=$TMP/pool.yaml
write_wide_pool "$cfg"
LEASES=$TMP/leases
# info, not debug: the flood's drops are what is looked at, not one debug line each
# holds of 30 s: the flood's offers still hold their addresses when the VM asks, a few seconds
# after the flood (the default 10 s could pass during this test's own checks on a loaded machine)
start_agent "$cfg" --dynamic --lease-file "$LEASES" --log-level info --offer-hold 30 ||
    { fail "agent ready" "did not start"; finish; }
pass "agent ready"

rss_before=$(metric process_resident_memory_bytes)
avail_before=$(metric vmdhcp_agent_pool_available)
discovers() { metric 'vmdhcp_agent_packets_received_total{type="discover"}'; }
ip netns exec "$TAG-flood" "$FLOOD" eth0 "$N" 40000 7 >"$TMP/flood.log" 2>&1
check "flood: $N DISCOVERs sent" grep -q "^sent $N in " "$TMP/flood.log"
# done once the count of DISCOVERs received stops moving (the kernel may drop some of them)
last=-1
settled() {
    local now
    now=$(discovers)
    [ "$now" = "$last" ] && [ "$now" -gt 0 ] && return 0
    last=$now
    return 1
}
check "agent: the flood's DISCOVERs received" wait_for 60 settled
echo "agent received $(discovers) of $N DISCOVERs ($(cat "$TMP/flood.log"))"

refused=$(metric vmdhcp_agent_dynamic_discovers_refused_total)
check "agent: DISCOVERs over the cap refused and counted ($refused)" test "$refused" -gt 0
check "agent: refused ones are offer_limit drops" \
    test "$(metric 'vmdhcp_agent_drops_total{reason="offer_limit"}')" = "$refused"
evicted=$(metric vmdhcp_agent_dynamic_offers_evicted_total)
check "agent: offers 250 ms old taken over by later DISCOVERs at the cap ($evicted)" test "$evicted" -gt 0
pending=$(metric vmdhcp_agent_dynamic_offers_pending)
check "agent: pending offers at most 4096 ($pending)" test "$pending" -le 4096 -a "$pending" -gt 0
check "agent: no dynamic lease from the flood" test "$(metric vmdhcp_agent_dynamic_leases)" = 0
lease_lines() { LC_ALL=C grep -acE '^([0-9a-f]{2}:){5}[0-9a-f]{2} ' "$LEASES"; }
check "lease file: no line from the flood" test "$(lease_lines)" = 0
rss_after=$(metric process_resident_memory_bytes)
echo "RSS ${rss_before} -> ${rss_after} bytes"
grown() { awk -v a="$rss_before" -v b="$rss_after" 'BEGIN { exit !(b - a < 8 * 1048576) }'; }
check "agent: RSS grew by less than 8 MiB (the cap bounds the offers)" grown

# a real VM: udhcpc gets an address at its first DISCOVER (an offer of the flood made 250 ms
# ago or more gives way); its lease is the only one in the file
write_udhcpc_script mask
ip netns exec "$TAG-vm1" env EVENTS="$TMP/vm1.events" "${UDHCPC[@]}" -f -n -q -i eth0 \
    -s "$TMP/udhcpc.script" -t 60 -T 2 >>"$TMP/udhcpc-vm1.log" 2>&1
rc=$?
check "udhcpc after the flood: bound (exit $rc)" grep -q '^bound ip=10\.66\.' "$TMP/vm1.events"
ip=$(sed -n 's/^bound ip=\([0-9.]*\) .*/\1/p' "$TMP/vm1.events" | tail -n1)
check "udhcpc: $ip configured on eth0" has_addr vm1 "$ip/16"
# at once: while the flood's offers still hold their addresses, the VM's first DISCOVER was
# offered one (an offer 250 ms old gives way)
discovers_sent=$(grep -ciE '(sending|broadcasting) discover' "$TMP/udhcpc-vm1.log")
check "udhcpc: offered at its first DISCOVER ($discovers_sent sent)" test "$discovers_sent" = 1
check "  ... while the flood's offers held their addresses (none expired yet)" \
    test "$(metric vmdhcp_agent_dynamic_offers_expired_total)" = 0
check "lease file: exactly one lease, the VM's" test "$(lease_lines)" = 1
check "lease file: 52:54:00:ee:00:02 $ip" grep -q "^52:54:00:ee:00:02 $ip\$" "$LEASES"
check "agent: one dynamic lease" test "$(metric vmdhcp_agent_dynamic_leases)" = 1

logged() { grep -Eq -- "$1" "$TMP/agent.log"; }
check "agent log: one warning when the cap is reached" \
    logged "warn  vm-dhcp-agent: [0-9]+ offers pending, the most --max-pending-offers allows"
check "agent log: a summary of the refused DISCOVERs and their rate" \
    wait_for 30 logged "warn  vm-dhcp-agent: [0-9]+ DHCPDISCOVERs from new MACs refused in [0-9.]+ s \([0-9]+/s\): [0-9]+ offers pending"
check "agent log: the decision log's summary gives the rate and the offer_limit drops" \
    wait_for 30 logged "suppressed [0-9]+ DHCP decision lines in the last [0-9]+ s \([0-9]+/s\):.* dropped \(.*offer_limit [0-9]+"

# the flood's holds end: the addresses go back, counted
drained() { [ "$(metric vmdhcp_agent_dynamic_offers_pending)" = 0 ]; }
check "agent: the flood's offers expire" wait_for 120 drained
check "agent: expired offers counted" test "$(metric vmdhcp_agent_dynamic_offers_expired_total)" -gt 0
check "agent: the pool is whole again but the VM's address" \
    test "$(metric vmdhcp_agent_pool_available)" = "$((avail_before - 1))"
promtool_check "promtool check metrics accepts /metrics"

check "agent still running" kill -0 "$AGENT_PID"
[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
