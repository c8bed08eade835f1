#!/bin/bash
# tests/netns/test-agent6-smoke.sh - the agent's DHCPv6 plumbing in local mode, end to end: a
# dual-stack pool (ipv6Config with router advertisements) and a VMNetCfg NIC pinned to an
# ipv6Address; ISC `dhclient -6 -1` in a VM namespace on the bridge gets the pinned address:
#   - the agent adds the IPv6 serverIP to br0 (no DAD) beside the IPv4 one, opens the DHCPv6
#     sockets and sends its first unsolicited router advertisement;
#   - the VM's SOLICIT -> ADVERTISE, REQUEST -> REPLY: the pinned address on eth0, the DNS
#     server in resolv.conf;
#   - the agent's decision log has the DHCPv6 REPLY line with address, MAC and VM name; the
#     /metrics series count it; an unknown MAC gets no address and its drop is counted;
#   - a reload without the ipv6Config closes the DHCPv6 sockets and removes the IPv6 serverIP.
# The full real-client suite (renew, release, dhcpcd, networkd, udhcpc6) is elsewhere; this
# proves the agent's wiring (config -> engine -> sockets -> interface).
. "$(dirname "$0")/lib.sh"
require dhclient unshare

NET6=2001:db8:66
SERVER6=$NET6::1
PIN6=$NET6::10
MAC1=52:54:00:66:00:01
MAC2=52:54:00:66:00:02

make_server
add_vm vm1 $MAC1
add_vm vm2 $MAC2
cfg=$TMP/pool.yaml
write_config() { # [no6]: without the ipv6Config
    write_pool "$cfg"
    if [ "${1:-}" != no6 ]; then
        cat >>"$cfg" <<EOF
  ipv6Config:
    cidr: $NET6::/64
    serverIP: $SERVER6
    pool:
      start: $NET6::100
      end: $NET6::1ff
    dns:
      - $NET6::53
    preferredLifetime: 600
    validLifetime: 1200
    routerAdvertisement:
      enabled: true
      interval: 30
EOF
    fi
    cat >>"$cfg" <<EOF
---
apiVersion: network.harvesterhci.io/v1alpha1
kind: VirtualMachineNetworkConfig
metadata:
  name: vm1
  namespace: default
spec:
  vmName: vm1
  networkConfigs:
    - networkName: testnet
      macAddress: "$MAC1"
      ipAddress: $NET.11
EOF
    [ "${1:-}" != no6 ] && echo "      ipv6Address: '$PIN6'" >>"$cfg"
    return 0
}
write_config

# the VMs' link-local addresses usable at once (DHCPv6 clients send from them)
for vm in vm1 vm2; do
    ip netns exec "$TAG-$vm" sysctl -qw net.ipv6.conf.eth0.accept_dad=0
    ip -n "$TAG-$vm" link set eth0 down
    ip -n "$TAG-$vm" link set eth0 up
done
ip netns exec "$SRV" sysctl -qw net.ipv6.conf.br0.accept_dad=0

start_agent "$cfg" || { fail "agent ready" "did not start"; finish; }
pass "agent ready"

srv_has6() { ip -n "$SRV" -6 -o addr show dev br0 | grep -q " $SERVER6/64 "; }
check "agent: IPv6 serverIP $SERVER6/64 on br0" wait_for 5 srv_has6
check "agent: the IPv6 serverIP without DAD" bash -c "ip -n '$SRV' -6 -o addr show dev br0 | grep ' $SERVER6/64 ' | grep -qv tentative"
serving6() { [ "$(metric vmdhcp_agent_dhcp6_serving)" = 1 ]; }
check "agent: DHCPv6 sockets open (vmdhcp_agent_dhcp6_serving 1)" wait_for 5 serving6
check "agent: one IPv6 binding (vmdhcp_agent_dhcp6_bindings 1)" \
    bash -c "[ \"\$(ip netns exec '$SRV' curl -sf http://127.0.0.1:$HTTP_PORT/metrics | awk '\$1 == \"vmdhcp_agent_dhcp6_bindings\" { print \$2 }')\" = 1 ]"
ra_sent() { [ "$(metric vmdhcp_agent_dhcp6_router_advertisements_sent_total)" -ge 1 ]; }
check "agent: an unsolicited router advertisement sent at start" wait_for 5 ra_sent

cat >"$TMP/dhclient6.conf" <<EOF
request dhcp6.name-servers;
timeout 20;
EOF
run_dhclient6() { # VM: dhclient -6 -1 -d in the background, PID recorded
    local vm=$1
    ip netns exec "$TAG-$vm" unshare -u sh -c '
        mount -t tmpfs tmpfs /etc/dhcp/dhclient-exit-hooks.d &&
        mount -t tmpfs tmpfs /etc/dhcp/dhclient-enter-hooks.d &&
        exec dhclient -6 -1 -d -v -cf "$1/dhclient6.conf" -lf "$1/$2.leases6" -pf "$1/$2.pid6" eth0' \
        sh "$TMP" "$vm" >>"$TMP/dhclient6-$vm.log" 2>&1 &
    PIDS+=($!)
    eval "PID_$vm=$!"
}
vm_has6() { ip -n "$TAG-$1" -6 -o addr show dev eth0 | grep -q " $2/"; }

run_dhclient6 vm1
check "dhclient -6: the pinned $PIN6 on eth0" wait_for 20 vm_has6 vm1 "$PIN6"
check "dhclient -6: the lease names the server's DNS $NET6::53" \
    grep -q "option dhcp6.name-servers $NET6::53;" "$TMP/vm1.leases6"
check "dhclient -6: lifetimes 600/1200 in the lease" \
    bash -c "grep -q 'preferred-life 600;' '$TMP/vm1.leases6' && grep -q 'max-life 1200;' '$TMP/vm1.leases6'"
check "dhclient -6: the DNS server in resolv.conf" resolv_has vm1 "^nameserver $NET6::53\$"
logged() { grep -Eq -- "$1" "$TMP/agent.log"; }
check "agent log: DHCPv6 REPLY line with address, MAC and VM" logged \
    " info  vm-dhcp-agent: DHCPv6 REPLY $PIN6 to $MAC1 \(vm1\) for REQUEST xid=0x[0-9a-f]{6}\$"
replies() { [ "$(metric 'vmdhcp_agent_dhcp6_replies_sent_total{type="reply"}')" -ge 1 ]; }
check "agent: REPLY counted" replies
check "agent: SOLICIT counted" bash -c "[ \"\$(ip netns exec '$SRV' curl -sf http://127.0.0.1:$HTTP_PORT/metrics | awk '\$1 == \"vmdhcp_agent_dhcp6_packets_received_total{type=\\\"solicit\\\"}\" { print \$2 }')\" -ge 1 ]"

# an unknown MAC: no address; its SOLICIT counted as unknown_mac or answered NoAddrsAvail
run_dhclient6 vm2
refused() {
    [ "$(metric 'vmdhcp_agent_dhcp6_drops_total{reason="unknown_mac"}')" -ge 1 ] ||
        [ "$(metric 'vmdhcp_agent_dhcp6_status_sent_total{code="NoAddrsAvail"}')" -ge 1 ]
}
check "agent: the unknown MAC's SOLICIT refused" wait_for 10 refused
check "dhclient -6: the unknown MAC has no global address" bash -c "! ip -n '$TAG-vm2' -6 -o addr show dev eth0 scope global | grep -q ."
stop_pid "$PID_vm2"
stop_pid "$PID_vm1"

# the ipv6Config removed: DHCPv6 sockets closed, the IPv6 serverIP gone, IPv4 still served
write_config no6
kill -HUP "$AGENT_PID"
not_serving6() { [ "$(metric vmdhcp_agent_dhcp6_serving)" = 0 ]; }
check "reload without ipv6Config: DHCPv6 sockets closed" wait_for 5 not_serving6
check "reload without ipv6Config: IPv6 serverIP removed" wait_for 5 bash -c "! ip -n '$SRV' -6 -o addr show dev br0 | grep -q ' $SERVER6/64 '"
check "reload without ipv6Config: IPv4 still served" agent_ready
check "agent: no error logged" bash -c "! grep -q ' error ' '$TMP/agent.log'"

[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
