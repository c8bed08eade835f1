#!/bin/bash
# tests/netns/test-agent-reload.sh - SIGHUP bursts in local mode are coalesced: 5 000 SIGHUPs
# sent back to back while a client renews in a loop make at most a few reloads
# (vmdhcp_agent_config_reloads_total), and every renewal and /healthz probe of the client is
# answered meanwhile (the agent never sits in back-to-back reloads, and a reload lets packets
# in between its steps). The file has 5 000 VirtualMachineNetworkConfig documents, so each
# reload costs a parse of some hundred milliseconds.
# Then: a FIFO as --config is refused at once (exit 2) instead of hanging the start, and a
# reload onto a FIFO keeps the previous configuration.
. "$(dirname "$0")/lib.sh"
require
PROBE=${PROBE:-$ROOT/build/tests/dhcp-ha-probe}
[ -x "$PROBE" ] || { echo "FAIL: $PROBE not built (make tests)"; exit 1; }
MAC=52:54:00:dd:00:01
IP=$NET.150
SIGNALS=${RELOAD_SIGNALS:-5000}

make_server
cfg=$TMP/pool.yaml
write_pool "$cfg"
vmnetcfg "$cfg" vm-a "$MAC" "$IP"
# bindings of another network: parsed at each reload, not served here
awk 'BEGIN { for (i = 0; i < 5000; i++)
    printf "---\napiVersion: network.harvesterhci.io/v1alpha1\nkind: VirtualMachineNetworkConfig\nmetadata:\n  name: f%d\n  namespace: default\nspec:\n  vmName: f%d\n  networkConfigs:\n    - networkName: other\n      macAddress: \"52:54:01:%02x:%02x:01\"\n      ipAddress: 10.77.%d.%d\n",
        i, i, int(i / 256), i % 256, int(i / 250), i % 250 + 1 }' >>"$cfg"

add_vm a "$MAC"
ip -n "$TAG-a" addr add "$IP/24" dev eth0

# renew: a RENEWING REQUEST from the VM's address; 0 when ACKed within 10 s
renew() { ip netns exec "$TAG-a" "$PROBE" renew eth0 "$IP" "$SERVER_IP" 10 | grep -q '^ack '; }
healthz() { ip netns exec "$SRV" curl -sf --max-time 10 -o /dev/null "http://127.0.0.1:$HTTP_PORT/healthz"; }
# reloads RESULT: vmdhcp_agent_config_reloads_total{result=RESULT}; an agent that does not
# answer within 5 s (stuck in a reload) reads as -1
reloads() {
    ip netns exec "$SRV" curl -sf --max-time 5 "http://127.0.0.1:$HTTP_PORT/metrics" |
        awk -v k="vmdhcp_agent_config_reloads_total{result=\"${1:-ok}\"}" '$1 == k { v = $2 } END { print (v == "" ? -1 : v) }'
}
more_reloads() { [ "$(reloads "$1")" -gt "$2" ]; } # RESULT N

if ! start_agent "$cfg"; then
    fail "agent" "did not start"
    finish
fi
check "before the burst: a renewing client is ACKed" renew
base=$(reloads)

# The client: renews (and probes /healthz) in a loop until $TMP/stop, one line per try
client_loop() {
    while [ ! -e "$TMP/stop" ]; do
        if renew; then echo ack; else echo miss; fi
        if healthz; then echo ok; else echo down; fi
    done >"$TMP/client.out"
}
count() { grep -c "^$1\$" "$TMP/client.out" 2>/dev/null || true; }
client_loop & CLIENT_PID=$!; PIDS+=("$CLIENT_PID")
check "the client is answered before the burst" wait_for 30 bash -c "[ \$(grep -c '^ack\$' $TMP/client.out) -ge 1 ]"
acks0=$(count ack)
sent=0
for i in $(seq "$SIGNALS"); do kill -HUP "$AGENT_PID" 2>/dev/null && sent=$((sent + 1)); done
# answered throughout: 20 more renewals ACKed after the burst began (the reload of
# 5 000 documents runs meanwhile), and not one renewal or probe missed
check "during and after $sent SIGHUPs: the client is answered" wait_for 60 bash -c "[ \$(grep -c '^ack\$' $TMP/client.out) -ge $((acks0 + 20)) ]"
check "the burst is reloaded" wait_for 30 more_reloads ok "$base"
# a reload still pending can only add one; without coalescing there are hundreds
sleep 3
touch "$TMP/stop"; wait "$CLIENT_PID"
now=$(reloads); n=$((now - base))
check "$sent SIGHUPs: at most 3 reloads (got $n)" test "$now" -ge 0 -a "$n" -le 3
check "no renewal missed ($(count miss) of $(($(count ack) + $(count miss))))" test "$(count miss)" = 0
check "no /healthz probe missed ($(count down) of $(($(count ok) + $(count down))))" test "$(count down)" = 0
check "the log says how many signals one reload took" grep -qE 'reloading the configuration \([0-9]+ SIGHUPs, one reload\)' "$TMP/agent.log"
check "after the burst: a renewing client is ACKed" renew
check "the agent still runs" kill -0 "$AGENT_PID"

# a FIFO in place of the file: the reload is refused at once, the agent serves on
fifo=$TMP/pool.fifo
mkfifo "$fifo"
mv "$cfg" "$cfg.real"
ln -s "$fifo" "$cfg"
errs=$(reloads error)
kill -HUP "$AGENT_PID"
check "FIFO: the reload is refused" wait_for 30 more_reloads error "$errs"
check "FIFO: the reload error names it" grep -qF "not a regular file (a FIFO)" "$TMP/agent.log"
check "FIFO: a renewing client is still ACKed" renew
stop_pid "$AGENT_PID"; AGENT_PID= # (KILL after 5 s when stuck)

# a FIFO as --config at start: exit 2 with one clear line, no hang (the FIFO has no writer)
out=$(timeout 30 ip netns exec "$SRV" "$AGENT" --config "$fifo" --interface br0 2>&1); rc=$?
check "FIFO at start: exit 2 (got $rc)" test "$rc" = 2
check "FIFO at start: says why" grep -qF "not a regular file (a FIFO)" <<<"$out"
out=$(timeout 30 ip netns exec "$SRV" "$AGENT" --config /dev/zero --interface br0 2>&1); rc=$?
check "/dev/zero at start: exit 2 (got $rc)" test "$rc" = 2
check "/dev/zero at start: says why" grep -qF "not a regular file (a character device)" <<<"$out"
[ "$CHECKS_FAIL" = 0 ] || show_logs
finish
