#!/bin/bash
# tests/netns/test-agent-dhclient.sh - ISC dhclient (with Debian's dhclient-script and its RFC 3442
# hook) against vm-dhcp-agent in local mode:
#   - binds with router, DNS, domain, search list, MTU and a classless (121) route applied;
#   - renews by unicast to the server and is ACKed (T1 forced to 3 s in dhclient.conf);
#   - a DNS change made with SIGHUP reaches the client at its next renewal;
#   - an INIT-REBOOT asking for a wrong address is NAKed, then the client binds correctly;
#   - the agent logs each decision at info: OFFER, ACK and NAK lines with MAC, address and VM
#     name, in text and (agent restarted with --log-format json, a fresh DORA) JSON with keys.
# dhclient runs in a private mount namespace (hook dirs replaced, only the RFC 3442 hook kept)
# with its own lease/pid files; the VM's resolv.conf is /etc/netns/<ns>/resolv.conf.
. "$(dirname "$0")/lib.sh"
require dhclient unshare jq
[ -f /etc/dhcp/dhclient-exit-hooks.d/rfc3442-classless-routes ] ||
    skip "isc-dhcp-client's rfc3442-classless-routes hook is missing"

make_server
add_vm vm1 52:54:00:aa:00:01
add_vm vm2 52:54:00:aa:00:02
cfg=$TMP/pool.yaml
write_config() {
    write_pool "$cfg"
    vmnetcfg "$cfg" vm1 52:54:00:aa:00:01 $NET.11
    vmnetcfg "$cfg" vm2 52:54:00:aa:00:02 $NET.12
}
write_config
start_agent "$cfg" || { fail "agent ready" "did not start"; finish; }
pass "agent ready"

cp /etc/dhcp/dhclient-exit-hooks.d/rfc3442-classless-routes "$TMP/"
cat >"$TMP/dhclient.conf" <<EOF
option rfc3442-classless-static-routes code 121 = array of unsigned integer 8;
request subnet-mask, broadcast-address, routers, domain-name, domain-name-servers,
        domain-search, host-name, interface-mtu, rfc3442-classless-static-routes,
        dhcp-lease-time, dhcp-renewal-time, dhcp-rebinding-time;
timeout 20;
supersede dhcp-renewal-time 3;
EOF

run_dhclient() { # VM: dhclient -d -1 in the background, PID recorded
    local vm=$1
    ip netns exec "$TAG-$vm" unshare -u sh -c '
        mount -t tmpfs tmpfs /etc/dhcp/dhclient-exit-hooks.d &&
        mount -t tmpfs tmpfs /etc/dhcp/dhclient-enter-hooks.d &&
        cp "$1/rfc3442-classless-routes" /etc/dhcp/dhclient-exit-hooks.d/ &&
        exec dhclient -d -1 -v -cf "$1/dhclient.conf" -lf "$1/$2.leases" -pf "$1/$2.pid" eth0' \
        sh "$TMP" "$vm" >>"$TMP/dhclient-$vm.log" 2>&1 &
    PIDS+=($!)
    eval "PID_$vm=$!"
}

# 1. bind, everything applied
run_dhclient vm1
check_applied vm1 $NET.11/24 dhclient
check "dhclient: hostname (option 12) vm1 in the lease" grep -q 'option host-name "vm1"' "$TMP/vm1.leases"
check "dhclient: lease time 120 s" grep -q 'option dhcp-lease-time 120;' "$TMP/vm1.leases"
# the agent's decision lines (info, text): "DHCPACK IP to MAC (VM) for DHCPREQUEST xid=0x..."
logged() { grep -Eq -- "$1" "$TMP/agent.log"; }
check "agent log: DHCPDISCOVER -> DHCPOFFER line with MAC, IP, VM" logged \
    " info  vm-dhcp-agent: DHCPOFFER $NET.11 to 52:54:00:aa:00:01 \(vm1\) for DHCPDISCOVER xid=0x[0-9a-f]{8}\$"
check "agent log: DHCPREQUEST -> DHCPACK line with MAC, IP, VM" logged \
    " info  vm-dhcp-agent: DHCPACK $NET.11 to 52:54:00:aa:00:01 \(vm1\) for DHCPREQUEST xid=0x[0-9a-f]{8}\$"

# 2. unicast renewal, ACKed
acks_before=$(metric 'vmdhcp_agent_replies_sent_total{type="ack"}')
renewed() { grep -q "DHCPREQUEST for $NET.11 on eth0 to $SERVER_IP port 67" "$TMP/dhclient-vm1.log"; }
check "dhclient: renewal sent by unicast to the server" wait_for 10 renewed
more_acks() { [ "$(metric 'vmdhcp_agent_replies_sent_total{type="ack"}')" -gt "$acks_before" ]; }
check "dhclient: renewal ACKed" wait_for 5 more_acks
check "dhclient: still bound after renewal" has_addr vm1 $NET.11/24

# 3. DNS change via SIGHUP reaches the client at its next renewal
DNS=$NET.54 write_config
kill -HUP "$AGENT_PID"
reloaded() { [ "$(metric 'vmdhcp_agent_config_reloads_total{result="ok"}')" = 1 ]; }
check "agent: SIGHUP reload counted ok" wait_for 5 reloaded
check "dhclient: new DNS $NET.54 in resolv.conf after renewal" wait_for 12 resolv_has vm1 "^nameserver $NET.54\$"
check "dhclient: old DNS $NET.53 gone" bash -c "! grep -q '^nameserver $NET.53\$' /etc/netns/$TAG-vm1/resolv.conf"

# 3b. leaseTime removed from the pool: the next renewal carries one-year leases (option 51
#     31536000, as harvester/vm-dhcp-controller serves a pool without leaseTime)
DNS=$NET.54 LEASE_TIME=unset write_config
check "config without leaseTime" bash -c "! grep -q leaseTime '$cfg'"
kill -HUP "$AGENT_PID"
reloaded2() { [ "$(metric 'vmdhcp_agent_config_reloads_total{result="ok"}')" = 2 ]; }
check "agent: second SIGHUP reload counted ok" wait_for 5 reloaded2
year_lease() { grep -q 'option dhcp-lease-time 31536000;' "$TMP/vm1.leases"; }
check "dhclient: lease time 31536000 s after renewal" wait_for 12 year_lease

# 4. INIT-REBOOT for an address this client does not have -> NAK, then DISCOVER -> bound
cat >"$TMP/vm2.leases" <<EOF
lease {
  interface "eth0";
  fixed-address $NET.77;
  option subnet-mask 255.255.255.0;
  option routers $NET.1;
  option dhcp-lease-time 3600;
  option dhcp-message-type 5;
  option dhcp-server-identifier $SERVER_IP;
  renew 4 2037/12/30 00:00:00;
  rebind 4 2037/12/30 00:00:00;
  expire 4 2037/12/31 00:00:00;
}
EOF
naks_before=$(metric 'vmdhcp_agent_replies_sent_total{type="nak"}')
run_dhclient vm2
naked() { grep -q "DHCPNAK from $SERVER_IP" "$TMP/dhclient-vm2.log"; }
check "dhclient: INIT-REBOOT for $NET.77 NAKed" wait_for 10 naked
more_naks() { [ "$(metric 'vmdhcp_agent_replies_sent_total{type="nak"}')" -gt "$naks_before" ]; }
check "agent: NAK counted" more_naks
check "dhclient: then bound to its binding $NET.12" wait_for 15 has_addr vm2 $NET.12/24
check "dhclient: never configured $NET.77" bash -c "! grep -q 'bound to $NET.77' '$TMP/dhclient-vm2.log'"
check "agent log: DHCPNAK line with MAC, VM and the address refused" logged \
    " info  vm-dhcp-agent: DHCPNAK to 52:54:00:aa:00:02 \(vm2\) for DHCPREQUEST of $NET.77 xid="

# 5. the same decisions as JSON lines: the agent restarted with --log-format json, vm1 starts
#    over without a lease (DISCOVER, OFFER, REQUEST, ACK)
stop_pid "$PID_vm1"
stop_pid "$AGENT_PID"
json_from=$(($(wc -l <"$TMP/agent.log") + 1))
start_agent "$cfg" --log-format json || fail "agent ready (--log-format json)" "did not start"
ip -n "$TAG-vm1" -4 addr flush dev eth0
rm -f "$TMP/vm1.leases"
run_dhclient vm1
check "dhclient (JSON run): bound again to $NET.11" wait_for 15 has_addr vm1 $NET.11/24
jlog() { tail -n +"$json_from" "$TMP/agent.log"; }
all_json() { jlog | jq -e -s 'length > 0 and all(type == "object")' >/dev/null; }
check "agent JSON log: every line is a JSON object" all_json
jline() { # jq condition: some info line matches it
    jlog | jq -e -s --arg net "$NET" "map(select(.level == \"info\" and $1)) | length > 0" >/dev/null
}
vm1_keys='.mac == "52:54:00:aa:00:01" and .ip == "\($net).11" and .vm == "vm1" and .ippool == "default/testnet" and (.xid | test("^0x[0-9a-f]{8}$")) and (has("giaddr") | not) and (has("drop") | not)'
check "agent JSON log: discover -> offer with mac, ip, vm, xid, ippool" \
    jline ".type == \"discover\" and .reply == \"offer\" and $vm1_keys and (.msg | startswith(\"DHCPOFFER \"))"
check "agent JSON log: request -> ack with mac, ip, vm, xid, ippool" \
    jline ".type == \"request\" and .reply == \"ack\" and $vm1_keys"

check "agent still running" kill -0 "$AGENT_PID"
[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
