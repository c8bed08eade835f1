#!/bin/bash
# tests/netns/test-agent6-dhclient.sh - ISC dhclient -6 (with Debian's dhclient-script) against
# vm-dhcp-agent's DHCPv6 in local mode (SERVER6=kea: against Kea, the client side alone):
#   - vm1 (IPv6 pinned with ipv6Address) binds: SOLICIT/ADVERTISE/REQUEST/REPLY, the pinned
#     address on eth0, DNS fd66::53 and search vm.test svc.vm.test in its resolv.conf;
#   - vm2 (no pin: the address the controller allocated, as it leaves the VMNetCfg's status)
#     binds to that address;
#   - with preferred/valid lifetimes 10/20 s (T1 5 s) dhclient renews on its own: the server
#     counts a RENEW and the address stays;
#   - `dhclient -6 -r` releases: the server counts a RELEASE, the address leaves eth0.
# dhclient runs in a private mount namespace (hook dirs emptied) with its own lease/pid files;
# the VM's resolv.conf is /etc/netns/<ns>/resolv.conf.
. "$(dirname "$0")/lib.sh"
require dhclient unshare

make_server
add_vm vm1 52:54:00:d6:00:01
add_vm vm2 52:54:00:d6:00:02
cfg=$TMP/pool.yaml
ALLOCATED6="fd66::100=52:54:00:d6:00:02" write_pool6 "$cfg"
vmnetcfg6 "$cfg" vm1 52:54:00:d6:00:01 $NET.11 fd66::11
vmnetcfg6_dynamic "$cfg" vm2 52:54:00:d6:00:02 $NET.12 fd66::100
KEA6_RESERVATIONS="52:54:00:d6:00:01 fd66::11
52:54:00:d6:00:02 fd66::100"
start_server6 "$cfg" || { fail "server ready" "did not start"; show_logs; finish; }
pass "server ($SERVER6) ready"

cat >"$TMP/dhclient6.conf" <<EOF
request dhcp6.name-servers, dhcp6.domain-search;
timeout 30;
EOF

run_dhclient6() { # VM [ARGS]: dhclient -6 in its mount namespace; -d (foreground) runs in the background
    local vm=$1; shift
    ip netns exec "$TAG-$vm" unshare -m sh -c '
        mount -t tmpfs tmpfs /etc/dhcp/dhclient-exit-hooks.d &&
        mount -t tmpfs tmpfs /etc/dhcp/dhclient-enter-hooks.d || exit 1
        d=$1 vm=$2; shift 2
        exec dhclient -6 -v -cf "$d/dhclient6.conf" -lf "$d/$vm.leases" -pf "$d/$vm.pid" "$@" eth0' \
        sh "$TMP" "$vm" "$@" >>"$TMP/dhclient-$vm.log" 2>&1
}
for vm in vm1 vm2; do
    wait_ll "$TAG-$vm" eth0
    run_dhclient6 $vm -d &
    PIDS+=($!)
done

# 1. bound: the pinned address, the controller's address, DNS and search list
check "dhclient vm1: pinned fd66::11 on eth0" wait_for 30 has_addr6 vm1 fd66::11
check "dhclient vm2: allocated fd66::100 on eth0" wait_for 30 has_addr6 vm2 fd66::100
check "dhclient vm1: lease has the pinned address" grep -q 'iaaddr fd66::11 ' "$TMP/vm1.leases"
check "dhclient vm1: preferred/valid lifetimes $PREFERRED6/$VALID6 in the lease" \
    grep -Eq "preferred-life $PREFERRED6;" "$TMP/vm1.leases"
check "dhclient vm1: resolv.conf nameserver $DNS6" wait_for 5 resolv_has vm1 "^nameserver $DNS6\$"
check "dhclient vm1: resolv.conf search vm.test svc.vm.test" \
    wait_for 5 resolv_has vm1 "^search vm\.test\.? svc\.vm\.test\.?\$"
check "dhclient vm2: resolv.conf nameserver $DNS6" wait_for 5 resolv_has vm2 "^nameserver $DNS6\$"
check "server: SOLICIT and REQUEST received" bash -c "[ $(srv6_count solicit) -ge 2 ] && [ $(srv6_count request) -ge 2 ]"

# 2. renew at T1 (preferred 10 s: T1 5 s), answered, the address kept
renews=$(srv6_count renew)
renewed() { grep -q 'XMT: Forming Renew' "$TMP/dhclient-vm1.log"; }
check "dhclient vm1: renews at T1" wait_for 30 renewed
check "server: RENEW counted" wait_for 10 srv6_more renew "$renews"
replied_renew() { [ "$(grep -c 'RCV: Reply message' "$TMP/dhclient-vm1.log")" -ge 2 ]; }
check "dhclient vm1: the renewal is answered (a second Reply)" wait_for 15 replied_renew
check "dhclient vm1: still fd66::11 after the renewal" has_addr6 vm1 fd66::11

# 3. release: dhclient -6 -r (the running client is told by its pid file, then sends RELEASE)
releases=$(srv6_count release)
run_dhclient6 vm1 -r
check "server: RELEASE counted" wait_for 10 srv6_more release "$releases"
check "dhclient vm1: fd66::11 removed after the release" wait_for 10 bash -c "! ip -n $TAG-vm1 -6 addr show dev eth0 | grep -q 'fd66::11/'"

if [ "$SERVER6" = agent ]; then check "agent still running" kill -0 "$AGENT_PID"; fi
[ "$CHECKS_FAIL" -eq 0 ] || { show_logs; for v in vm1 vm2; do vm_addrs6 $v; done; }
finish
