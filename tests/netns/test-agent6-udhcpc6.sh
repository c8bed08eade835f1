#!/bin/bash
# tests/netns/test-agent6-udhcpc6.sh - busybox udhcpc6 (built from Debian's busybox source by
# scripts/build-udhcpc6.sh: Debian's binaries have no udhcpc6) against vm-dhcp-agent's DHCPv6
# in local mode (SERVER6=kea: against Kea, the client side alone):
#   - vm1 (IPv6 pinned) and vm2 (the address the controller allocated) bind; the test's udhcpc6
#     script puts the address on eth0 and writes the DNS server and search list it exported
#     into the namespace's resolv.conf;
#   - SIGUSR1 renews, answered: the script runs "renew" with the same address (busybox 1.35's
#     udhcpc6 sends its renewal as a REQUEST message with the server id and its IA_NA, not as
#     a RENEW: first by unicast from its address to the server's link-local, then multicast;
#     so the server's REQUEST counter is what moves);
#   - SIGUSR2 releases: the server counts a RELEASE, the script deconfigures eth0.
# UDHCPC6 names a udhcpc6 binary; otherwise scripts/build-udhcpc6.sh's cache is used (the
# test builds it when missing, about 1-4 minutes, once). udhcpc6 1.35 exports addresses
# uncompressed (fd66:0000:...:0011) and a wrong "lease" (byte order): neither is normalised.
. "$(dirname "$0")/lib.sh"
require unshare
if [ -z "${UDHCPC6:-}" ]; then
    UDHCPC6=$("$ROOT/scripts/build-udhcpc6.sh" 2>"$TMP/build-udhcpc6.log") ||
        skip "udhcpc6 could not be built (scripts/build-udhcpc6.sh: $(tail -n 1 "$TMP/build-udhcpc6.log"))"
fi
[ -x "$UDHCPC6" ] || skip "UDHCPC6=$UDHCPC6 is not executable"

make_server
add_vm vm1 52:54:00:d6:03:01
add_vm vm2 52:54:00:d6:03:02
cfg=$TMP/pool.yaml
ALLOCATED6="fd66::100=52:54:00:d6:03:02" write_pool6 "$cfg"
vmnetcfg6 "$cfg" vm1 52:54:00:d6:03:01 $NET.11 fd66::11
vmnetcfg6_dynamic "$cfg" vm2 52:54:00:d6:03:02 $NET.12 fd66::100
KEA6_RESERVATIONS="52:54:00:d6:03:01 fd66::11
52:54:00:d6:03:02 fd66::100"
start_server6 "$cfg" || { fail "server ready" "did not start"; show_logs; finish; }
pass "server ($SERVER6) ready"

# the script: one line an event into $EVENTS, the address on eth0, resolv.conf (the
# namespace's: ip netns exec bind-mounts /etc/netns/<ns>/resolv.conf over /etc/resolv.conf)
cat >"$TMP/udhcpc6.script" <<'EOF'
#!/bin/sh
echo "$1 ipv6=$ipv6 lease=$lease dns=$dns search=$search" >>"$EVENTS"
case "$1" in
deconfig) ip -6 addr flush dev "$interface" scope global ;;
bound|renew)
    ip -6 addr replace "$ipv6/128" dev "$interface" nodad
    {
        [ -n "$search" ] && echo "search $search"
        for d in $dns; do echo "nameserver $d"; done
    } >/etc/resolv.conf ;;
esac
exit 0
EOF
chmod +x "$TMP/udhcpc6.script"

for vm in vm1 vm2; do
    wait_ll "$TAG-$vm" eth0
    ip netns exec "$TAG-$vm" env EVENTS="$TMP/$vm.events" "$UDHCPC6" -f -i eth0 -s "$TMP/udhcpc6.script" \
        -O dns -O search -t 10 -T 2 -v >>"$TMP/udhcpc6-$vm.log" 2>&1 &
    PIDS+=($!)
    eval "PID_$vm=$!"
done

# 1. bound: addresses, DNS, search list (what the client itself exported to its script)
event() { grep -Eq -- "$2" "$TMP/$1.events" 2>/dev/null; }
FULL11=fd66:0000:0000:0000:0000:0000:0000:0011 FULL100=fd66:0000:0000:0000:0000:0000:0000:0100
check "udhcpc6 vm1: bound to the pinned fd66::11" wait_for 30 event vm1 "^bound ipv6=$FULL11 "
check "udhcpc6 vm2: bound to the allocated fd66::100" wait_for 30 event vm2 "^bound ipv6=$FULL100 "
check "udhcpc6 vm1: fd66::11 on eth0" wait_for 5 has_addr6 vm1 fd66::11
check "udhcpc6 vm2: fd66::100 on eth0" wait_for 5 has_addr6 vm2 fd66::100
check "udhcpc6 vm1: exported dns=fd66::53" event vm1 "^bound .* dns=fd66:0000:0000:0000:0000:0000:0000:0053 "
check "udhcpc6 vm1: exported search=vm.test svc.vm.test" event vm1 '^bound .* search=vm\.test svc\.vm\.test$'
# (resolv.conf accepts the uncompressed form)
check "udhcpc6 vm1: resolv.conf nameserver fd66::53" resolv_has vm1 "^nameserver fd66:0000:0000:0000:0000:0000:0000:0053\$"
check "udhcpc6 vm1: resolv.conf search vm.test svc.vm.test" resolv_has vm1 '^search vm\.test svc\.vm\.test$'
check "udhcpc6 vm2: resolv.conf nameserver fd66::53" resolv_has vm2 "^nameserver fd66:0000:0000:0000:0000:0000:0000:0053\$"

# 2. SIGUSR1: renew (a REQUEST, see above), answered with the same address
requests=$(srv6_count request)
n_renew=$(grep -c "^renew ipv6=$FULL11 " "$TMP/vm1.events")
kill -USR1 "$PID_vm1"
more_renew_events() { [ "$(grep -c "^renew ipv6=$FULL11 " "$TMP/vm1.events")" -gt "$n_renew" ]; }
check "server: the renewal's REQUEST counted" wait_for 15 srv6_more request "$requests"
check "udhcpc6 vm1: renewal answered (renew event, fd66::11)" wait_for 15 more_renew_events
check "udhcpc6 vm1: still fd66::11" has_addr6 vm1 fd66::11

# 3. SIGUSR2: release
releases=$(srv6_count release)
kill -USR2 "$PID_vm1"
check "server: RELEASE counted" wait_for 15 srv6_more release "$releases"
check "udhcpc6 vm1: deconfigured after the release" wait_for 10 bash -c "! ip -n $TAG-vm1 -6 addr show dev eth0 | grep -q 'fd66::11/'"

if [ "$SERVER6" = agent ]; then check "agent still running" kill -0 "$AGENT_PID"; fi
[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
