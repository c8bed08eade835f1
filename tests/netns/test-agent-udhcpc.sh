#!/bin/bash
# tests/netns/test-agent-udhcpc.sh - busybox udhcpc against vm-dhcp-agent in local mode:
#   - binds with router, DNS, domain, search list (119), MTU (26) and classless routes (121)
#     applied in its namespace by the udhcpc script (Debian's default.script ignores 119/121,
#     so this test's script applies every variable udhcpc exports);
#   - SIGUSR1 renews by unicast and is ACKed;
#   - an unknown MAC gets nothing (no --dynamic) and is counted as a drop;
#   - the agent logs each decision at info, text and JSON: OFFER/ACK with MAC, address and VM
#     name, the unknown MAC's DISCOVERs as drops with reason unknown_mac;
#   - with --dynamic unknown MACs get the lowest free address, sticky per MAC, kept in the
#     lease file across restarts (also kill -9); a DECLINEd dynamic address moves the MAC.
. "$(dirname "$0")/lib.sh"
require busybox jq
UDHCPC=(busybox udhcpc)

make_server
add_vm vm1 52:54:00:bb:00:01
add_vm vm3 52:54:00:bb:00:99 # not in the configuration
cfg=$TMP/pool.yaml
write_pool "$cfg"
vmnetcfg "$cfg" vm1 52:54:00:bb:00:01 $NET.11
start_agent "$cfg" || { fail "agent ready" "did not start"; finish; }
pass "agent ready"

cat >"$TMP/udhcpc.script" <<'EOF'
#!/bin/sh
# Applies what udhcpc got to $interface; resolv.conf is the namespace's (ip netns exec).
echo "$1 ip=$ip mask=$mask router=$router dns=$dns domain=$domain search=$search mtu=$mtu staticroutes=$staticroutes hostname=$hostname serverid=$serverid lease=$lease" >>"$EVENTS"
case "$1" in
deconfig)
    ip -4 addr flush dev "$interface"
    ip link set dev "$interface" up ;;
bound|renew)
    [ -n "$mtu" ] && ip link set dev "$interface" mtu "$mtu"
    ip addr replace "$ip/$mask" dev "$interface"
    if [ -n "$staticroutes" ]; then
        # RFC 3442: with option 121 the router option is ignored
        set -- $staticroutes
        while [ $# -ge 2 ]; do ip route replace "$1" via "$2" dev "$interface"; shift 2; done
    elif [ -n "$router" ]; then
        ip route replace default via "${router%% *}" dev "$interface"
    fi
    {
        [ -n "$domain" ] && echo "domain $domain"
        [ -n "$search" ] && echo "search $search"
        for d in $dns; do echo "nameserver $d"; done
    } >/etc/resolv.conf ;;
esac
exit 0
EOF
chmod +x "$TMP/udhcpc.script"

# 1. bind, everything applied
ip netns exec "$TAG-vm1" env EVENTS="$TMP/vm1.events" "${UDHCPC[@]}" -f -i eth0 -s "$TMP/udhcpc.script" \
    -O mtu -O staticroutes -O search -t 5 -T 2 >>"$TMP/udhcpc-vm1.log" 2>&1 &
UPID=$!; PIDS+=("$UPID")
bound() { grep -q '^bound ' "$TMP/vm1.events" 2>/dev/null; }
check "udhcpc: bound" wait_for 15 bound
check_applied vm1 $NET.11/24 udhcpc
check "udhcpc: hostname (option 12) vm1" grep -q '^bound .* hostname=vm1 ' "$TMP/vm1.events"
check "udhcpc: lease 120 s" grep -q '^bound .* lease=120$' "$TMP/vm1.events"
logged() { grep -Eq -- "$1" "$TMP/agent.log"; }
check "agent log: DHCPDISCOVER -> DHCPOFFER line with MAC, IP, VM" logged \
    " info  vm-dhcp-agent: DHCPOFFER $NET.11 to 52:54:00:bb:00:01 \(vm1\) for DHCPDISCOVER xid=0x[0-9a-f]{8}\$"
check "agent log: DHCPREQUEST -> DHCPACK line with MAC, IP, VM" logged \
    " info  vm-dhcp-agent: DHCPACK $NET.11 to 52:54:00:bb:00:01 \(vm1\) for DHCPREQUEST xid=0x[0-9a-f]{8}\$"
# the reply latency histogram measures receive -> send: the agent gives the engine its clock
check "agent: reply latency histogram counted" \
    test "$(metric vmdhcp_agent_reply_latency_seconds_count)" -gt 0
latency_sum() { awk -v v="$(metric vmdhcp_agent_reply_latency_seconds_sum)" 'BEGIN { exit !(v + 0 > 0) }'; }
check "agent: reply latency sum > 0 (was always 0)" latency_sum
# the DHCP packet socket's kernel counters (PACKET_STATISTICS, read at the scrape), and the
# receive passes: the DISCOVER and REQUEST were seen by the kernel, none dropped
check "agent: kernel_received_total >= 2" test "$(metric vmdhcp_agent_kernel_received_total)" -ge 2
check "agent: kernel_drops_total 0" test "$(metric vmdhcp_agent_kernel_drops_total)" = 0
check "agent: receive passes on wakeups counted" \
    test "$(metric 'vmdhcp_agent_receive_passes_total{trigger="wakeup"}')" -ge 2

# 2. SIGUSR1: unicast renewal, ACKed
acks_before=$(metric 'vmdhcp_agent_replies_sent_total{type="ack"}')
kill -USR1 "$UPID"
renewed() { grep -q '^renew ' "$TMP/vm1.events"; }
check "udhcpc: SIGUSR1 renewal ACKed (renew event)" wait_for 10 renewed
more_acks() { [ "$(metric 'vmdhcp_agent_replies_sent_total{type="ack"}')" -gt "$acks_before" ]; }
check "agent: renewal ACK counted" more_acks
unicast() { grep -qi "sending renew to .*$SERVER_IP" "$TMP/udhcpc-vm1.log"; }
check "udhcpc: renewal sent by unicast to $SERVER_IP" unicast
check "udhcpc: still bound after renewal" has_addr vm1 $NET.11/24

# 3. unknown MAC: nothing, counted
drops_before=$(metric 'vmdhcp_agent_drops_total{reason="unknown_mac"}')
ip netns exec "$TAG-vm3" env EVENTS="$TMP/vm3.events" "${UDHCPC[@]}" -f -n -q -i eth0 \
    -s "$TMP/udhcpc.script" -t 3 -T 1 >>"$TMP/udhcpc-vm3.log" 2>&1
rc=$?
check "udhcpc (unknown MAC): gave up without a lease (exit $rc)" test "$rc" -ne 0
check "udhcpc (unknown MAC): no address configured" test -z "$(vm_addr vm3)"
check "udhcpc (unknown MAC): no OFFER seen" bash -c "! grep -q '^bound' '$TMP/vm3.events' 2>/dev/null"
more_drops() { [ "$(metric 'vmdhcp_agent_drops_total{reason="unknown_mac"}')" -gt "$drops_before" ]; }
check "agent: unknown-MAC drops counted" more_drops
check "agent log: the unknown MAC's DISCOVER dropped, reason unknown_mac" logged \
    " info  vm-dhcp-agent: DHCPDISCOVER from 52:54:00:bb:00:99 dropped: unknown_mac xid=0x[0-9a-f]{8}\$"

# 3b. the same as JSON lines: the agent restarted with --log-format json; vm1 renews (SIGUSR1),
#     the unknown MAC tries again
stop_pid "$AGENT_PID"
json_from=$(($(wc -l <"$TMP/agent.log") + 1))
start_agent "$cfg" --log-format json || fail "agent ready (--log-format json)" "did not start"
: >"$TMP/vm1.events"
kill -USR1 "$UPID"
check "udhcpc (JSON run): renewal ACKed" wait_for 10 renewed
ip netns exec "$TAG-vm3" env EVENTS="$TMP/vm3.events" "${UDHCPC[@]}" -f -n -q -i eth0 \
    -s "$TMP/udhcpc.script" -t 2 -T 1 >>"$TMP/udhcpc-vm3.log" 2>&1
jlog() { tail -n +"$json_from" "$TMP/agent.log"; }
all_json() { jlog | jq -e -s 'length > 0 and all(type == "object")' >/dev/null; }
check "agent JSON log: every line is a JSON object" all_json
jline() { # jq condition: some info line matches it
    jlog | jq -e -s --arg net "$NET" "map(select(.level == \"info\" and $1)) | length > 0" >/dev/null
}
check "agent JSON log: request -> ack with mac, ip, vm, xid, ippool" \
    jline '.type == "request" and .reply == "ack" and .mac == "52:54:00:bb:00:01" and .ip == "\($net).11" and .vm == "vm1" and .ippool == "default/testnet" and (.xid | test("^0x[0-9a-f]{8}$"))'
check "agent JSON log: unknown MAC's discover with drop unknown_mac" \
    jline '.type == "discover" and .drop == "unknown_mac" and .mac == "52:54:00:bb:00:99" and (has("reply") | not) and (has("vm") | not) and .ippool == "default/testnet" and (.msg | contains("52:54:00:bb:00:99"))'

# 4. --dynamic: unknown MACs get the lowest free address, sticky, kept in the lease file
#    across restarts, including kill -9 (the journal line is written before the next batch)
add_vm vm4 52:54:00:bb:00:98
add_vm vm5 52:54:00:bb:00:97
udhcpc_q() { # VM: one exchange, quit when bound
    ip -n "$TAG-$1" -4 addr flush dev eth0
    : >"$TMP/$1.events"
    ip netns exec "$TAG-$1" env EVENTS="$TMP/$1.events" "${UDHCPC[@]}" -f -n -q -i eth0 \
        -s "$TMP/udhcpc.script" -t 5 -T 2 >>"$TMP/udhcpc-$1.log" 2>&1
}
stop_pid "$AGENT_PID"
printf '# a lease from an earlier run\n52:54:00:bb:00:99 %s\n' $NET.150 >"$TMP/leases"
start_agent "$cfg" --dynamic --lease-file "$TMP/leases" || fail "agent ready (--dynamic)" "did not start"
udhcpc_q vm3
check "--dynamic: MAC from the lease file gets its old address $NET.150" has_addr vm3 $NET.150/24
udhcpc_q vm4
check "--dynamic: new MAC gets the lowest free address $NET.100" has_addr vm4 $NET.100/24
check "--dynamic: lease appended to the lease file" grep -q "^52:54:00:bb:00:98 $NET.100\$" "$TMP/leases"
check "--dynamic: static binding unchanged" wait_for 1 has_addr vm1 $NET.11/24
kill -KILL "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
start_agent "$cfg" --dynamic --lease-file "$TMP/leases" || fail "agent ready (after kill -9)" "did not start"
udhcpc_q vm5
check "--dynamic after kill -9: next MAC gets $NET.101 ($NET.100 still leased)" has_addr vm5 $NET.101/24
udhcpc_q vm4
check "--dynamic after kill -9: earlier MAC keeps $NET.100" has_addr vm4 $NET.100/24
check "agent: 3 dynamic leases" test "$(metric vmdhcp_agent_dynamic_leases)" = 3
promtool_check "local mode: promtool check metrics accepts /metrics"
no_server_types() { ! ip netns exec "$SRV" curl -sf "http://127.0.0.1:$HTTP_PORT/metrics" |
    grep -Eq 'packets_received_total\{type="(offer|ack|nak)"|replies_sent_total\{type="(discover|request|decline|release|inform)"'; }
check "local mode: no series that cannot occur (a reply of type discover)" no_server_types

# 5. DECLINE: a host squats on the next free address without DHCP; udhcpc -a finds it by ARP,
#    declines, and the agent moves the MAC to another address
add_vm vm6 52:54:00:bb:00:96
ip -n "$TAG-vm6" addr add $NET.102/24 dev eth0
add_vm vm7 52:54:00:bb:00:95
declines_before=$(metric vmdhcp_agent_declines_total)
ip netns exec "$TAG-vm7" env EVENTS="$TMP/vm7.events" "${UDHCPC[@]}" -f -n -q -a -A 1 -i eth0 \
    -s "$TMP/udhcpc.script" -t 6 -T 2 >>"$TMP/udhcpc-vm7.log" 2>&1
check "DECLINE: udhcpc saw $NET.102 in use and declined" grep -q "declining" "$TMP/udhcpc-vm7.log"
more_declines() { [ "$(metric vmdhcp_agent_declines_total)" -gt "$declines_before" ]; }
check "DECLINE: counted by the agent" more_declines
check "DECLINE: client then bound to $NET.103" has_addr vm7 $NET.103/24
check "DECLINE: lease file moved the MAC to $NET.103" \
    bash -c "grep '^52:54:00:bb:00:95 ' '$TMP/leases' | tail -n1 | grep -q ' $NET.103\$'"

check "agent still running" kill -0 "$AGENT_PID"
[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
