#!/bin/bash
# tests/netns/test-agent6-dhcpcd.sh - dhcpcd 9 (DHCPv6 only) against vm-dhcp-agent's DHCPv6 in
# local mode (SERVER6=kea: against Kea, the client side alone):
#   - vm1 (IPv6 pinned) and vm2 (the address the controller allocated) bind with IA_NA (`ia_na`
#     in dhcpcd.conf starts DHCPv6 without waiting for a router advertisement); dhcpcd puts
#     the address on eth0, its 20-resolv.conf hook writes the DNS server and search list;
#   - with preferred/valid lifetimes 10/20 s (T1 5 s) dhcpcd renews on its own: the server
#     counts a RENEW and the address stays;
#   - `dhcpcd -k` releases: the server counts a RELEASE, the address leaves eth0.
# dhcpcd runs in a private mount namespace with tmpfs over /run and /var/lib/dhcpcd, in its
# own UTS namespace, the hostname/NTP hooks off; the control command (-k) enters it with
# nsenter -r -m -n, as in test-agent-dhcpcd.sh (which says why -r).
. "$(dirname "$0")/lib.sh"
require dhcpcd unshare nsenter

make_server
add_vm vm1 52:54:00:d6:01:01
add_vm vm2 52:54:00:d6:01:02
cfg=$TMP/pool.yaml
ALLOCATED6="fd66::100=52:54:00:d6:01:02" write_pool6 "$cfg"
vmnetcfg6 "$cfg" vm1 52:54:00:d6:01:01 $NET.11 fd66::11
vmnetcfg6_dynamic "$cfg" vm2 52:54:00:d6:01:02 $NET.12 fd66::100
KEA6_RESERVATIONS="52:54:00:d6:01:01 fd66::11
52:54:00:d6:01:02 fd66::100"
start_server6 "$cfg" || { fail "server ready" "did not start"; show_logs; finish; }
pass "server ($SERVER6) ready"

cat >"$TMP/dhcpcd.conf" <<EOF
ipv6only
noipv6rs
ia_na 1
option dhcp6_name_servers, dhcp6_domain_search
nohook 30-hostname, 60-ntp-common.conf, 62-chrony.conf, 64-timesyncd.conf, 68-openntpd.conf
EOF
cat >"$TMP/dhcpcd-ns.sh" <<'EOF'
mount -t tmpfs tmpfs /run && mkdir /run/dhcpcd && mount -t tmpfs tmpfs /var/lib/dhcpcd || exit 1
dhcpcd -f "$1/dhcpcd.conf" -6 -B -d -t 30 eth0 &
d=$!
trap 'kill -TERM $d 2>/dev/null; wait $d; exit 0' TERM INT
wait $d
EOF
for vm in vm1 vm2; do
    wait_ll "$TAG-$vm" eth0
    ip netns exec "$TAG-$vm" unshare -m -u sh "$TMP/dhcpcd-ns.sh" "$TMP" >>"$TMP/dhcpcd-$vm.log" 2>&1 &
    PIDS+=($!)
    eval "PID_$vm=$!"
done
dhcpcd_ctl() { # VM ARGS: a dhcpcd control command inside the VM's dhcpcd namespace
    local pid; eval "pid=\$PID_$1"; shift
    nsenter -t "$pid" -r -m -n sh -c 'ls /run/dhcpcd/*.sock >/dev/null 2>&1 && exec dhcpcd "$@"' \
        sh "$@" >>"$TMP/dhcpcd-ctl.log" 2>&1
}

# 1. bound
logged() { grep -Eq -- "$2" "$TMP/dhcpcd-$1.log"; }
check "dhcpcd vm1: REPLY6 received, adding fd66::11/128" wait_for 30 logged vm1 'eth0: adding address fd66::11/128'
check "dhcpcd vm1: pinned fd66::11 on eth0" wait_for 30 has_addr6 vm1 fd66::11
check "dhcpcd vm2: allocated fd66::100 on eth0" wait_for 30 has_addr6 vm2 fd66::100
check "dhcpcd vm1: resolv.conf nameserver $DNS6" wait_for 5 resolv_has vm1 "^nameserver $DNS6\$"
check "dhcpcd vm1: resolv.conf search vm.test svc.vm.test" \
    wait_for 5 resolv_has vm1 "^search vm\.test\.? svc\.vm\.test\.?\$"
check "dhcpcd vm2: resolv.conf nameserver $DNS6" wait_for 5 resolv_has vm2 "^nameserver $DNS6\$"

# 2. renew at T1 (5 s), answered, the address kept
renews=$(srv6_count renew)
check "server: RENEW counted" wait_for 30 srv6_more renew "$renews"
# dhcpcd runs its hooks with RENEW6 when a REPLY to its RENEW6 bound the lease again
renew_answered() { grep -A1 'eth0: broadcasting RENEW6' "$TMP/dhcpcd-vm1.log" | grep -q 'REPLY6 received' &&
    grep -q 'dhcpcd-run-hooks RENEW6' "$TMP/dhcpcd-vm1.log"; }
check "dhcpcd vm1: the renewal is answered" wait_for 15 renew_answered
check "dhcpcd vm1: still fd66::11 after the renewal" has_addr6 vm1 fd66::11

# 3. release: dhcpcd -k (dhcpcd sends RELEASE and removes the address)
releases=$(srv6_count release)
dhcpcd_ctl vm1 -6 -k eth0
check "server: RELEASE counted" wait_for 15 srv6_more release "$releases"
check "dhcpcd vm1: fd66::11 removed after the release" \
    wait_for 10 bash -c "! ip -n $TAG-vm1 -6 addr show dev eth0 | grep -q 'fd66::11/'"

if [ "$SERVER6" = agent ]; then check "agent still running" kill -0 "$AGENT_PID"; fi
[ "$CHECKS_FAIL" -eq 0 ] || { show_logs; for v in vm1 vm2; do vm_addrs6 $v; done; }
finish
