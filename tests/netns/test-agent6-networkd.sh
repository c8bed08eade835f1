#!/bin/bash
# tests/netns/test-agent6-networkd.sh - systemd-networkd's DHCPv6 client against vm-dhcp-agent
# in local mode (SERVER6=kea: against Kea, and radvd for the RAs, the client side alone):
#   A. RA off, vm2 with `[DHCPv6] WithoutRA=solicit` (IPv6AcceptRA=no): networkd solicits
#      without any router advertisement and binds the address the controller allocated;
#   B. the pool's routerAdvertisement.enabled=true, vm1 with IPv6AcceptRA=yes: networkd starts
#      DHCPv6 because the agent's RA says M=1 (not before: no WithoutRA) and binds its pin;
#   each: the address on eth0, the DNS server and search domains in networkd's link state file
#   (/run/systemd/netif/links/IFINDEX: DNS=, DOMAINS=, what resolved would be given); with
#   lifetimes 20/40 s (T1 10 s, T2 16 s: with 10/20 s networkd's T1 and T2 fire 3 s apart and
#   it may go straight to REBIND) networkd renews on its own, answered (the server's RENEW
#   counter, networkd's log).
# Not tested, and reported as skipped: RELEASE. systemd 252 (Debian 12) never sends a DHCPv6
# RELEASE: its sd-dhcp6-client has no Release message (stopping networkd or the link only
# stops the client); [DHCPv6] SendRelease= came with later systemd releases.
# systemd-networkd runs without systemd as PID 1 and without D-Bus: /lib/systemd/systemd-networkd
# started by hand inside the VM's network namespace, in a private mount namespace where /run is
# a directory of the test ($TMP/run-VM: the .network file in /run/systemd/network, the state
# files written to /run/systemd/netif, which the test reads), /etc/systemd/network and
# /lib/systemd/network hidden (only the test's .network file applies) and /sys remounted
# read-only (networkd then does not wait for udev to initialise the link: as in a container).
# It finds no system bus and waits for one (no error): only its bus API (networkctl) is
# missing, which the test does not use. It drops its privileges to the systemd-network user,
# as under systemd.
. "$(dirname "$0")/lib.sh"
NETWORKD=${NETWORKD:-/lib/systemd/systemd-networkd}
PREFERRED6=20 VALID6=40
require unshare
[ -x "$NETWORKD" ] || skip "$NETWORKD is not installed (package systemd)"
id systemd-network >/dev/null 2>&1 || skip "no systemd-network user (package systemd creates it)"

make_server
add_vm vm1 52:54:00:d6:02:01
add_vm vm2 52:54:00:d6:02:02
cfg=$TMP/pool.yaml
write_cfg() {
    ALLOCATED6="fd66::100=52:54:00:d6:02:02" write_pool6 "$cfg"
    vmnetcfg6 "$cfg" vm1 52:54:00:d6:02:01 $NET.11 fd66::11
    vmnetcfg6_dynamic "$cfg" vm2 52:54:00:d6:02:02 $NET.12 fd66::100
}
KEA6_RESERVATIONS="52:54:00:d6:02:01 fd66::11
52:54:00:d6:02:02 fd66::100"

# run_networkd VM NETWORK-FILE-BODY: networkd for the VM's eth0
cat >"$TMP/networkd-ns.sh" <<'EOF'
run=$1 nd=$2
mount --bind "$run" /run &&
    mount -t tmpfs tmpfs /etc/systemd/network &&
    { [ ! -d /lib/systemd/network ] || mount -t tmpfs tmpfs /lib/systemd/network; } &&
    { mount -o remount,ro /sys || { umount /sys && mount -t sysfs -o ro sysfs /sys; }; } || exit 1
SYSTEMD_LOG_LEVEL=debug SYSTEMD_LOG_TARGET=console "$nd" &
n=$!
trap 'kill -TERM $n 2>/dev/null; wait $n; exit 0' TERM INT
wait $n
EOF
run_networkd() {
    local vm=$1 run=$TMP/run-$1
    mkdir -p "$run/systemd/network" "$run/systemd/netif"
    chmod 755 "$run" "$run/systemd"
    chown systemd-network:systemd-network "$run/systemd/netif"
    printf '%s\n' "$2" >"$run/systemd/network/10-eth0.network"
    wait_ll "$TAG-$vm" eth0
    ip netns exec "$TAG-$vm" unshare -m sh "$TMP/networkd-ns.sh" "$run" "$NETWORKD" >>"$TMP/networkd-$vm.log" 2>&1 &
    PIDS+=($!)
    eval "PID_$vm=$!"
}
# link_state VM KEY: a key of networkd's state file of the VM's eth0
link_state() {
    local idx
    idx=$(ip netns exec "$TAG-$1" cat /sys/class/net/eth0/ifindex)
    sed -n "s/^$2=//p" "$TMP/run-$1/systemd/netif/links/$idx" 2>/dev/null
}
state_is() { [ "$(link_state "$1" "$2")" = "$3" ]; }
logged() { grep -Eq -- "$2" "$TMP/networkd-$1.log"; }
# check_bound WHO VM ADDR
check_bound() {
    check "$1: $3 on eth0" wait_for 30 has_addr6 "$2" "$3"
    check "$1: state file DNS=$DNS6" wait_for 10 state_is "$2" DNS "$DNS6"
    check "$1: state file DOMAINS=vm.test svc.vm.test" wait_for 10 state_is "$2" DOMAINS "vm.test svc.vm.test"
    check "$1: link configured (state file ADMIN_STATE=configured)" wait_for 10 state_is "$2" ADMIN_STATE configured
}
# renew_replies VM: Replies networkd processed to a Renew (its log: Sent Renew, then Reply)
renew_replies() {
    grep 'DHCPv6 client: \(Sent Renew\|Processed Reply message\|State changed\)' "$TMP/networkd-$1.log" |
        grep -A1 'Sent Renew' | grep -c 'Processed Reply message'
}
more_replies() { [ "$(renew_replies "$1")" -gt "$2" ]; }
# check_renew WHO VM ADDR: the next RENEW (at T1) is counted by the server and answered
check_renew() {
    local renews n_reply
    renews=$(srv6_count renew)
    n_reply=$(renew_replies "$2")
    check "$1: renews at T1, counted by the server" wait_for 40 srv6_more renew "$renews"
    check "$1: the renewal is answered (Reply processed in state renew)" wait_for 15 more_replies "$2" "$n_reply"
    check "$1: still $3 after the renewal" has_addr6 "$2" "$3"
}

# A. no RA; WithoutRA=solicit
RA6=0 write_cfg
start_server6 "$cfg" || { fail "server ready" "did not start"; show_logs; finish; }
pass "server ($SERVER6, RA off) ready"
run_networkd vm2 "[Match]
Name=eth0
[Network]
DHCP=ipv6
IPv6AcceptRA=no
LinkLocalAddressing=ipv6
[DHCPv6]
WithoutRA=solicit
DUIDType=link-layer
UseDelegatedPrefix=no
UseDNS=yes
UseDomains=yes"
check_bound "networkd WithoutRA=solicit (vm2)" vm2 fd66::100
check "networkd WithoutRA=solicit (vm2): started by solicit, not by an RA" \
    logged vm2 'DHCPv6 client: (State changed: stopped -> solicitation|Started in managed mode)|Acquiring DHCPv6 lease'
check_renew "networkd WithoutRA=solicit (vm2)" vm2 fd66::100

# B. the server restarted with router advertisements on; vm1 starts DHCPv6 on the RA's M=1
if [ "$SERVER6" = kea ]; then stop_pid "$KEA_PID"; else stop_pid "$AGENT_PID"; AGENT_PID=; fi
ip -n "$SRV" addr flush dev br0 scope global
RA6=1 write_cfg
RA6=1 start_server6 "$cfg" || { fail "server ready (RA on)" "did not start"; show_logs; finish; }
pass "server ($SERVER6, RA on) ready"
run_networkd vm1 "[Match]
Name=eth0
[Network]
DHCP=ipv6
IPv6AcceptRA=yes
LinkLocalAddressing=ipv6
[IPv6AcceptRA]
DHCPv6Client=yes
UseDNS=yes
UseDomains=yes
[DHCPv6]
DUIDType=link-layer
UseDelegatedPrefix=no
UseDNS=yes
UseDomains=yes"
check "networkd RA (vm1): router advertisement received" wait_for 30 logged vm1 'NDISC: Received Router Advertisement|NDisc: .*Router Advertisement'
check "networkd RA (vm1): DHCPv6 started by the RA's managed flag" \
    wait_for 30 logged vm1 'Acquiring DHCPv6 lease on NDisc request|DHCPv6 client: Started in managed mode'
check_bound "networkd RA (vm1)" vm1 fd66::11
check "networkd RA (vm1): no SLAAC address (prefix has A=0)" \
    bash -c "[ \$(ip -n $TAG-vm1 -6 -o addr show dev eth0 scope global | grep -c 'fd66::') = 1 ]"
check_renew "networkd RA (vm1)" vm1 fd66::11

# release: not with systemd 252 (see the top)
skip_check "networkd: release" "systemd $("$NETWORKD" --version 2>/dev/null | sed -n '1s/^systemd \([0-9]*\).*/\1/p') never sends a DHCPv6 RELEASE"

if [ "$SERVER6" = agent ]; then check "agent still running" kill -0 "$AGENT_PID"; fi
[ "$CHECKS_FAIL" -eq 0 ] || { show_logs; for v in vm1 vm2; do vm_addrs6 $v; cat "$TMP"/run-$v/systemd/netif/links/* 2>/dev/null; done; }
finish
