#!/bin/bash
# tests/netns/test-agent-clientid.sh - --dynamic leases keyed by the client identifier (option
# 61, RFC 2131 §4.2) with real clients whose NIC gets a new MAC, as when a VM's NIC is re-created
# (ip link set dev eth0 address ...), and a new client process starts on it:
#   - busybox udhcpc sending an RFC 4361 identifier (-x 0x3d:...) gets the same address from the
#     new MAC (DISCOVER); the old MAC's binding is gone; the lease file's line says the new MAC;
#     a unicast renewal (SIGUSR1) from the new MAC is ACKed;
#   - ISC dhclient with `send dhcp-client-identifier` the same, from its kept lease file
#     (INIT-REBOOT);
#   - without an identifier of its own (udhcpc's default, 0x01 + MAC) a new MAC is a new client,
#     and the lease file has no id= for it;
#   - after a kill -9 and a restart the moved leases are still the new MACs'.
. "$(dirname "$0")/lib.sh"
require busybox
UDHCPC=(busybox udhcpc)
ID1=ff00000001000300015254aa0001ee      # 0xff, IAID 1, DUID-LL (RFC 4361)
ID3=ff00000002000300015254aa0003ee
ID3_DHCLIENT=ff:00:00:00:02:00:03:00:01:52:54:aa:00:03:ee

make_server
add_vm vm1 52:54:00:dd:00:01 # sends ID1
add_vm vm2 52:54:00:dd:00:02 # sends udhcpc's default identifier, 0x01 + its MAC
add_vm vm3 52:54:00:dd:00:03 # dhclient, sends ID3
add_vm vm4 52:54:00:dd:00:04 # new after the restart
cfg=$TMP/pool.yaml
LEASES=$TMP/leases
write_pool "$cfg"
start_agent "$cfg" --dynamic --lease-file "$LEASES" || { fail "agent ready" "did not start"; finish; }
pass "agent ready (--dynamic)"

write_udhcpc_script mask
udhcpc_q() { # VM [ARGS...]: one exchange, quit when bound
    local vm=$1; shift
    ip -n "$TAG-$vm" -4 addr flush dev eth0
    ip netns exec "$TAG-$vm" env EVENTS="$TMP/$vm.events" "${UDHCPC[@]}" -f -n -q -i eth0 \
        -s "$TMP/udhcpc.script" -t 5 -T 2 "$@" >>"$TMP/udhcpc-$vm.log" 2>&1
}
new_mac() { # VM MAC: the NIC re-created with another MAC
    ip -n "$TAG-$1" -4 addr flush dev eth0
    ip -n "$TAG-$1" link set dev eth0 address "$2"
}
last_line() { grep -a "$1" "$LEASES" | tail -n1; }

# 1. udhcpc with an identifier; the NIC gets a new MAC; a new udhcpc with the same identifier
udhcpc_q vm1 -x 0x3d:$ID1
check "udhcpc (id): bound to $NET.100" has_addr vm1 $NET.100/24
check "udhcpc (id): lease line with its identifier" \
    grep -q "^52:54:00:dd:00:01 $NET.100 id=$ID1\$" "$LEASES"
new_mac vm1 52:54:00:dd:00:11
ip netns exec "$TAG-vm1" env EVENTS="$TMP/vm1.events" "${UDHCPC[@]}" -f -i eth0 \
    -s "$TMP/udhcpc.script" -t 5 -T 2 -x 0x3d:$ID1 >>"$TMP/udhcpc-vm1.log" 2>&1 &
UPID=$!; PIDS+=("$UPID")
check "udhcpc (id) from the new MAC: the same address $NET.100" wait_for 15 has_addr vm1 $NET.100/24
check "the lease file: the identifier's lease is the new MAC's" \
    test "$(last_line "id=$ID1")" = "52:54:00:dd:00:11 $NET.100 id=$ID1"
check "agent: one dynamic lease" test "$(metric vmdhcp_agent_dynamic_leases)" = 1
check "agent: one binding (the old MAC's is gone)" test "$(metric vmdhcp_agent_bindings)" = 1
: >"$TMP/vm1.events"
kill -USR1 "$UPID"
renewed() { grep -q "^renew ip=$NET.100 " "$TMP/vm1.events"; }
check "udhcpc (id) from the new MAC: SIGUSR1 renewal ACKed" wait_for 10 renewed
stop_pid "$UPID"

# 2. udhcpc's default identifier (0x01 + MAC) is its MAC's: a new MAC is a new client
udhcpc_q vm2
check "udhcpc (default id): bound to $NET.101" has_addr vm2 $NET.101/24
new_mac vm2 52:54:00:dd:00:12
udhcpc_q vm2
check "udhcpc (default id) from a new MAC: a new address $NET.102" has_addr vm2 $NET.102/24
check "the lease file: MAC-keyed lines, no id=" bash -c \
    "grep -q '^52:54:00:dd:00:02 $NET.101\$' '$LEASES' && grep -q '^52:54:00:dd:00:12 $NET.102\$' '$LEASES'"

# 3. dhclient with `send dhcp-client-identifier`, restarted on the new MAC with its lease file
if command -v dhclient >/dev/null && command -v unshare >/dev/null; then
    cat >"$TMP/dhclient.conf" <<EOF
send dhcp-client-identifier $ID3_DHCLIENT;
request subnet-mask, routers, dhcp-lease-time;
timeout 20;
EOF
    run_dhclient() { # VM: dhclient -d -1 in the background (no hooks: only the address matters)
        ip netns exec "$TAG-$1" unshare -u sh -c '
            mount -t tmpfs tmpfs /etc/dhcp/dhclient-exit-hooks.d &&
            mount -t tmpfs tmpfs /etc/dhcp/dhclient-enter-hooks.d &&
            exec dhclient -d -1 -v -cf "$1/dhclient.conf" -lf "$1/$2.leases" -pf "$1/$2.pid" eth0' \
            sh "$TMP" "$1" >>"$TMP/dhclient-$1.log" 2>&1 &
        DPID=$!; PIDS+=("$DPID")
    }
    run_dhclient vm3
    check "dhclient (id): bound to $NET.103" wait_for 20 has_addr vm3 $NET.103/24
    check "dhclient (id): lease line with its identifier" \
        grep -q "^52:54:00:dd:00:03 $NET.103 id=${ID3}\$" "$LEASES"
    # the VM goes down hard (after a clean stop dhclient starts over with a DISCOVER), once
    # dhclient wrote its lease down, and comes back with a re-created NIC; dhclient asks for the
    # address of its lease file (INIT-REBOOT)
    lease_saved() { grep -q "fixed-address $NET.103;" "$TMP/vm3.leases" 2>/dev/null; }
    check "dhclient (id): lease saved in its lease file" wait_for 10 lease_saved
    kill -KILL "$DPID"; wait "$DPID" 2>/dev/null
    new_mac vm3 52:54:00:dd:00:13
    : >"$TMP/dhclient-vm3.log"
    run_dhclient vm3
    check "dhclient (id) from the new MAC: the same address $NET.103" wait_for 20 has_addr vm3 $NET.103/24
    check "dhclient (id) from the new MAC: INIT-REBOOT for $NET.103 ACKed" \
        grep -q "DHCPACK of $NET.103 from $SERVER_IP" "$TMP/dhclient-vm3.log"
    check "dhclient (id) from the new MAC: no DISCOVER needed" \
        bash -c "! grep -q DHCPDISCOVER '$TMP/dhclient-vm3.log'"
    check "the lease file: the identifier's lease is the new MAC's" \
        test "$(last_line "id=$ID3")" = "52:54:00:dd:00:13 $NET.103 id=$ID3"
    stop_pid "$DPID"
    NEXT=$NET.104
else
    echo "SKIP dhclient part: dhclient or unshare is not installed"
    NEXT=$NET.103
fi

# 4. kill -9 and a restart: the moved leases are read back as the new MACs'
leases=$(metric vmdhcp_agent_dynamic_leases)
kill -KILL "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
start_agent "$cfg" --dynamic --lease-file "$LEASES" || fail "agent ready (after kill -9)" "did not start"
check "restart: the same $leases dynamic leases" test "$(metric vmdhcp_agent_dynamic_leases)" = "$leases"
udhcpc_q vm1 -x 0x3d:$ID1
check "restart: udhcpc (id) from the new MAC keeps $NET.100" has_addr vm1 $NET.100/24
udhcpc_q vm4
check "restart: a new client gets $NEXT, not a moved lease's address" has_addr vm4 $NEXT/24

check "agent still running" kill -0 "$AGENT_PID"
[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
