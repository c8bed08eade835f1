#!/bin/bash
# tests/netns/test-agent-dhcpcd.sh - dhcpcd 9 against vm-dhcp-agent in local mode:
#   - binds; dhcpcd itself applies address, MTU (26, as the routes' MTU: dhcpcd 9 does not
#     change the link MTU) and classless routes (121), its
#     20-resolv.conf hook writes DNS, domain and search list;
#   - `dhcpcd -N` renews by unicast and is ACKed;
#   - a DNS change made with SIGHUP reaches it at the next renewal; a bad file on SIGHUP is
#     logged and the running configuration kept.
# dhcpcd runs in a private mount namespace with tmpfs over /run and /var/lib/dhcpcd (its
# state never touches the host's), in its own UTS namespace, with the hostname/NTP hooks off;
# control commands enter that namespace with nsenter -r -m -n: -r keeps the root of the shell
# that started dhcpcd (the test's), so in a chroot the command stays in the chroot. (Entering a
# mount namespace without -r resets the root to the namespace's /, the host's: there the host's
# dhcpcd with the host's configuration would start a second daemon on the VM's interface and
# rewrite the host's resolv.conf and state.) A control command runs only when it finds dhcpcd's
# control socket in the namespace's private /run/dhcpcd (a dhcpcd that finds no daemon to talk
# to becomes one).
. "$(dirname "$0")/lib.sh"
require dhcpcd unshare nsenter

make_server
add_vm vm1 52:54:00:cc:00:01
cfg=$TMP/pool.yaml
write_config() {
    write_pool "$cfg"
    vmnetcfg "$cfg" vm1 52:54:00:cc:00:01 $NET.11
}
write_config
start_agent "$cfg" || { fail "agent ready" "did not start"; finish; }
pass "agent ready"

cat >"$TMP/dhcpcd.conf" <<EOF
ipv4only
noipv4ll
noarp
option subnet_mask, routers, domain_name_servers, domain_name, domain_search, host_name
option classless_static_routes, interface_mtu
require dhcp_server_identifier
nohook 30-hostname, 60-ntp-common.conf, 62-chrony.conf, 64-timesyncd.conf, 68-openntpd.conf
EOF

# The namespace's shell stays dhcpcd's parent: the process the control commands' nsenter -r
# takes its root from (dhcpcd's own processes chroot themselves: privilege separation). It
# puts a tmpfs over all of /run (not over /run/dhcpcd, which the host may not have: creating it
# there would change the host) and stops dhcpcd when it is stopped.
cat >"$TMP/dhcpcd-ns.sh" <<'EOF'
mount -t tmpfs tmpfs /run && mkdir /run/dhcpcd && mount -t tmpfs tmpfs /var/lib/dhcpcd || exit 1
dhcpcd -f "$1/dhcpcd.conf" -4 -B -d -t 20 eth0 &
d=$!
trap 'kill -TERM $d 2>/dev/null; wait $d; exit 0' TERM INT
wait $d
EOF
ip netns exec "$TAG-vm1" unshare -u sh "$TMP/dhcpcd-ns.sh" "$TMP" >>"$TMP/dhcpcd.log" 2>&1 &
DPID=$!; PIDS+=("$DPID")

bound() { grep -Eq "eth0: leased $NET.11 for 120 seconds" "$TMP/dhcpcd.log"; }
check "dhcpcd: leased $NET.11 for 120 s" wait_for 20 bound
MTU_ON=route check_applied vm1 $NET.11/24 dhcpcd

# -N: renew, unicast to the server
dhcpcd_ctl() {
    nsenter -t "$DPID" -r -m -n sh -c 'ls /run/dhcpcd/*.sock >/dev/null 2>&1 && exec dhcpcd "$@"' \
        sh "$@" >>"$TMP/dhcpcd-ctl.log" 2>&1 ||
        { echo "dhcpcd_ctl $*: no control socket in dhcpcd's /run/dhcpcd (or dhcpcd failed)" >>"$TMP/dhcpcd-ctl.log"; return 1; }
}
# renew_until CHECK...: dhcpcd -N, then wait for CHECK; asks again (3 times) if it is missed
renew_until() {
    local i
    for i in 1 2 3; do
        dhcpcd_ctl -4 -N eth0
        wait_for 4 "$@" && return 0
    done
    return 1
}
acks_before=$(metric 'vmdhcp_agent_replies_sent_total{type="ack"}')
n_renew=$(grep -c "renewing lease of $NET.11" "$TMP/dhcpcd.log")
renewed() { [ "$(grep -c "renewing lease of $NET.11" "$TMP/dhcpcd.log")" -gt "$n_renew" ]; }
check "dhcpcd: -N renews" renew_until renewed
more_acks() { [ "$(metric 'vmdhcp_agent_replies_sent_total{type="ack"}')" -gt "$acks_before" ]; }
check "agent: renewal ACKed" wait_for 5 more_acks
unicast_req() { grep -Eq "eth0: sending REQUEST .*" "$TMP/dhcpcd.log" && ! grep -q "eth0: NAK" "$TMP/dhcpcd.log"; }
check "dhcpcd: no NAK" unicast_req
check "dhcpcd: still bound after renewal" has_addr vm1 $NET.11/24

# DNS change via SIGHUP, picked up at the next renewal
DNS=$NET.54 write_config
kill -HUP "$AGENT_PID"
reloaded() { [ "$(metric 'vmdhcp_agent_config_reloads_total{result="ok"}')" = 1 ]; }
check "agent: SIGHUP reload counted ok" wait_for 5 reloaded
check "dhcpcd: new DNS $NET.54 in resolv.conf after renewal" renew_until resolv_has vm1 "^nameserver $NET.54\$"

# a bad file on SIGHUP: logged, counted, the running configuration kept
sed -i 's#cidr: .*#cidr: 10.66.0/8#' "$cfg"
kill -HUP "$AGENT_PID"
reload_failed() { [ "$(metric 'vmdhcp_agent_config_reloads_total{result="error"}')" = 1 ]; }
check "agent: bad file on SIGHUP counted as a failed reload" wait_for 5 reload_failed
check "agent: the failed reload is logged with the field" \
    grep -q 'reload: .*pool.yaml: document 1 (line 1): spec.ipv4Config.cidr: .*keeping the previous configuration' "$TMP/agent.log"
acks_before=$(metric 'vmdhcp_agent_replies_sent_total{type="ack"}')
check "dhcpcd: still ACKed after the failed reload" renew_until more_acks
check "dhcpcd: DNS still $NET.54" resolv_has vm1 "^nameserver $NET.54\$"

check "agent still running" kill -0 "$AGENT_PID"
[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
