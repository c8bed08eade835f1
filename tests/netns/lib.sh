#!/bin/bash
# tests/netns/lib.sh - shared pieces of the agent's network-namespace tests (sourced).
#
# Topology (every name carries this shell's PID, so parallel runs never collide):
#   $SRV   network namespace with bridge br0; the agent serves br0 (--assign-server-ip)
#   $TAG-<vm>  one namespace per "VM": eth0 (MAC given) <== veth ==> p-<vm> on br0
# Nothing is created in the host namespace; /etc/netns/<ns>/resolv.conf is the VM's resolver
# file (ip netns exec bind-mounts it over /etc/resolv.conf), so the host's is never touched.
# Each check prints "PASS name" or "FAIL name: why"; finish() exits 0 / 1; 77 = skipped.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
AGENT=${AGENT:-$ROOT/build/vm-dhcp-agent}
TAG=vt$$
SRV=$TAG-srv
NET=10.66.0
SERVER_IP=$NET.1
HTTP_PORT=9180
TMP=
AGENT_PID=
PIDS=()
NSES=()
CHECKS_PASS=0
CHECKS_FAIL=0

skip() { echo "SKIP: $*"; exit 77; }

require() {
    [ "$(id -u)" = 0 ] || skip "needs root (network namespaces, raw sockets)"
    local c
    for c in ip curl "$@"; do
        command -v "$c" >/dev/null 2>&1 || skip "$c is not installed (scripts/install-deps installs it)"
    done
    # (SERVER6=kea, in the DHCPv6 client tests, runs no agent)
    [ "${SERVER6:-agent}" = kea ] || [ -x "$AGENT" ] || { echo "FAIL: $AGENT not built (make)"; exit 1; }
    ip netns add "$TAG-probe" 2>/dev/null || skip "cannot create network namespaces here"
    ip netns del "$TAG-probe"
    TMP=$(mktemp -d "/tmp/vmdhcp-netns.$TAG.XXXXXX")
    trap cleanup EXIT
    trap 'exit 130' INT TERM
}

pass() { echo "PASS $1"; CHECKS_PASS=$((CHECKS_PASS + 1)); }
fail() { echo "FAIL $1: $2"; CHECKS_FAIL=$((CHECKS_FAIL + 1)); }
# skip_check NAME REASON: a check that cannot run here, counted as skipped
skip_check() { echo "SKIP $1: $2"; CHECKS_SKIP=$((${CHECKS_SKIP:-0} + 1)); }
# check NAME CMD... : PASS when CMD succeeds
check() { local n=$1; shift; if "$@"; then pass "$n"; else fail "$n" "$*"; fi; }

finish() {
    echo "$(basename "$0"): $CHECKS_PASS passed, $CHECKS_FAIL failed, ${CHECKS_SKIP:-0} skipped"
    [ "$CHECKS_FAIL" -eq 0 ]
    exit $?
}

stop_pid() { # PID: TERM, wait up to 5 s, then KILL (only processes we started)
    local p=$1 i
    kill -0 "$p" 2>/dev/null || return 0
    kill -TERM "$p" 2>/dev/null
    for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
    return 0
}

cleanup() {
    local p n
    trap '' INT TERM # a second Ctrl-C must not cut the teardown short
    for p in "${PIDS[@]}"; do stop_pid "$p"; done
    [ -n "$AGENT_PID" ] && stop_pid "$AGENT_PID"
    for n in "${NSES[@]}"; do
        ip netns del "$n" 2>/dev/null
        rm -rf "/etc/netns/$n"
    done
    if [ -n "$TMP" ] && [ "${KEEP_LOGS:-0}" != 1 ]; then rm -rf "$TMP"; fi
}

# make_server: $SRV with lo and br0 (no STP: ports forward at once)
make_server() {
    ip netns add "$SRV"; NSES+=("$SRV")
    ip -n "$SRV" link set lo up
    ip -n "$SRV" link add br0 type bridge stp_state 0 forward_delay 0
    ip -n "$SRV" link set br0 up
}

# add_vm NAME MAC: namespace $TAG-NAME with eth0 plugged into br0
add_vm() {
    local name=$1 mac=$2 ns=$TAG-$1
    ip netns add "$ns"; NSES+=("$ns")
    mkdir -p "/etc/netns/$ns"; : >"/etc/netns/$ns/resolv.conf"
    ip -n "$ns" link set lo up
    ip -n "$SRV" link add "p-$name" type veth peer name eth0 netns "$ns"
    ip -n "$ns" link set eth0 address "$mac"
    ip -n "$SRV" link set "p-$name" master br0 up
    ip -n "$ns" link set eth0 up
}

# write_pool FILE [extra VMNetCfg YAML appended]: the pool every test uses
write_pool() {
    local f=$1 dns=${DNS:-$NET.53}
    cat >"$f" <<EOF
apiVersion: network.harvesterhci.io/v1alpha1
kind: IPPool
metadata:
  name: testnet
  namespace: default
spec:
  networkName: default/testnet
  ipv4Config:
    serverIP: $SERVER_IP
    cidr: $NET.0/24
    pool:
      start: $NET.100
      end: $NET.200
    router: $NET.1
    dns:
      - $dns
    domainName: vm.test
    domainSearch:
      - vm.test
      - svc.vm.test
    mtu: 1400
    routes:
      - destination: 10.200.0.0/16
        gateway: $NET.254
    leaseTime: ${LEASE_TIME:-120}
EOF
    # LEASE_TIME=unset: no leaseTime (served as upstream serves it: one year)
    if [ "${LEASE_TIME:-}" = unset ]; then sed -i '/^    leaseTime: unset$/d' "$f"; fi
}

# write_wide_pool FILE: a /16 pool (10.66.1.0-10.66.255.250) for --dynamic floods, where the
# /24 of write_pool would run out of addresses
write_wide_pool() {
    cat >"$1" <<EOF
apiVersion: network.harvesterhci.io/v1alpha1
kind: IPPool
metadata:
  name: wide
  namespace: default
spec:
  networkName: default/wide
  ipv4Config:
    serverIP: $SERVER_IP
    cidr: 10.66.0.0/16
    pool:
      start: 10.66.1.0
      end: 10.66.255.250
    router: $SERVER_IP
    leaseTime: 900
EOF
}

# vmnetcfg FILE VMNAME MAC IP: append a static binding
vmnetcfg() {
    cat >>"$1" <<EOF
---
apiVersion: network.harvesterhci.io/v1alpha1
kind: VirtualMachineNetworkConfig
metadata:
  name: $2
  namespace: default
spec:
  vmName: $2
  networkConfigs:
    - networkName: testnet
      macAddress: "$3"
      ipAddress: $4
EOF
}

# start_agent CONFIG [ARGS...]: agent on br0 in $SRV, HTTP on 127.0.0.1:$HTTP_PORT, waits for /readyz
start_agent() {
    local cfg=$1 i; shift
    ip netns exec "$SRV" "$AGENT" --config "$cfg" --interface br0 --assign-server-ip \
        --listen "127.0.0.1:$HTTP_PORT" --log-level debug "$@" >>"$TMP/agent.log" 2>&1 &
    AGENT_PID=$!
    for i in $(seq 100); do
        agent_ready && return 0
        kill -0 "$AGENT_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "agent did not become ready; its log:"; sed 's/^/  | /' "$TMP/agent.log"
    return 1
}

agent_ready() { ip netns exec "$SRV" curl -sf -o /dev/null "http://127.0.0.1:$HTTP_PORT/readyz"; }

# promtool: Debian's, or the one scripts/install-deps unpacks from its package
PROMTOOL=
for p in /var/cache/vm-dhcp/promtool/promtool /usr/bin/promtool; do
    [ -x "$p" ] && { PROMTOOL=$p; break; }
done
# promtool_check CHECK-NAME: `promtool check metrics` on the agent's scrape (not run, and said
# so, when promtool cannot be had; scripts/install-deps provides it, so `make test` has it)
promtool_check() {
    local out
    if [ -z "$PROMTOOL" ]; then
        echo "SKIP $1: promtool not installed (scripts/install-deps provides it)"
        return
    fi
    out=$(ip netns exec "$SRV" curl -sf "http://127.0.0.1:$HTTP_PORT/metrics" | "$PROMTOOL" check metrics 2>&1)
    if [ $? -eq 0 ]; then pass "$1"; else fail "$1" "$out"; fi
}

# metric 'name{label="x"}' -> value (0 when absent)
metric() {
    ip netns exec "$SRV" curl -sf "http://127.0.0.1:$HTTP_PORT/metrics" |
        awk -v k="$1" '$1 == k { v = $2 } END { print (v == "" ? 0 : v) }'
}

# wait_for SECONDS CMD...: poll CMD every 0.2 s
wait_for() {
    local t=$1 i; shift
    for i in $(seq $((t * 5))); do "$@" && return 0; sleep 0.2; done
    "$@"
}

# Facts read back from a VM namespace (what the client really configured).
vm_addr() { ip -n "$TAG-$1" -4 -o addr show dev eth0 | awk '{ print $4 }' | head -n1; }
has_addr() { [ "$(vm_addr "$1")" = "$2" ]; }
has_route() { ip -n "$TAG-$1" -4 route show | grep -q -- "$2"; }
vm_mtu() { ip -n "$TAG-$1" link show dev eth0 | sed -n 's/.* mtu \([0-9]*\).*/\1/p'; }
resolv() { cat "/etc/netns/$TAG-$1/resolv.conf"; }
resolv_has() { grep -Eq -- "$2" "/etc/netns/$TAG-$1/resolv.conf"; }

# check_applied VM IP/PREFIX: address, default + 121 route, MTU, resolv.conf
check_applied() {
    local vm=$1 want=$2 who=${3:-$1}
    check "$who: address $want on eth0" wait_for 5 has_addr "$vm" "$want"
    check "$who: default route via $NET.1" wait_for 5 has_route "$vm" "^default via $NET.1 "
    check "$who: classless route (121) 10.200.0.0/16 via $NET.254" wait_for 5 has_route "$vm" "^10.200.0.0/16 via $NET.254 "
    if [ "${MTU_ON:-link}" = route ]; then
        # dhcpcd 9 applies option 26 as the MTU of the routes it adds, not of the link
        check "$who: MTU 1400 on its routes" has_route "$vm" "^default via $NET.1 .* mtu 1400"
    else
        check "$who: MTU 1400 on eth0" test "$(vm_mtu "$vm")" = 1400
    fi
    # the client's hook writes resolv.conf after it configured the interface
    check "$who: resolv.conf nameserver ${DNS:-$NET.53}" wait_for 5 resolv_has "$vm" "^nameserver ${DNS:-$NET.53}\$"
    check "$who: resolv.conf search vm.test svc.vm.test" wait_for 5 resolv_has "$vm" "^search vm\.test\.? svc\.vm\.test\.?\$"
}

# write_udhcpc_script [VAR...]: $TMP/udhcpc.script, a hook for busybox udhcpc -s: the address
# it got on $interface (flushed at deconfig) and, when the client runs with EVENTS=FILE in its
# environment, one line an event appended to FILE: "EVENT ip=ADDR" then " VAR=value" for each
# VAR named (udhcpc's variables: mask, dns, lease, ...).
write_udhcpc_script() {
    local v fields=''
    for v in "$@"; do fields="$fields $v=\$$v"; done
    cat >"$TMP/udhcpc.script" <<EOF
#!/bin/sh
[ -z "\$EVENTS" ] || echo "\$1 ip=\$ip$fields" >>"\$EVENTS"
case "\$1" in
deconfig) ip -4 addr flush dev "\$interface"; ip link set dev "\$interface" up ;;
bound|renew) ip addr replace "\$ip/\$mask" dev "\$interface" ;;
esac
exit 0
EOF
    chmod +x "$TMP/udhcpc.script"
}

# proc_status PID FIELD: a field of /proc/PID/status (CapEff, CapPrm, CapBnd, NoNewPrivs, Uid...)
. "$ROOT/scripts/proc-lib.sh"
# Capability masks as /proc/PID/status prints them
CAPS_NONE=0000000000000000
CAPS_NET_ADMIN=0000000000001000              # CAP_NET_ADMIN (12)
CAPS_NET_RAW_ADMIN=0000000000003000          # + CAP_NET_RAW (13)
CAPS_NET_ALL=0000000000003400                # + CAP_NET_BIND_SERVICE (10)

show_logs() { # on failure, the evidence
    local f
    for f in "$TMP"/*.log; do echo "--- $f"; tail -n 40 "$f"; done
    for n in "${NSES[@]}"; do
        [ "$n" = "$SRV" ] && continue
        echo "--- $n"; ip -n "$n" -4 addr show dev eth0 2>/dev/null; ip -n "$n" -4 route 2>/dev/null
        cat "/etc/netns/$n/resolv.conf" 2>/dev/null
    done
}

# ---- IPv6 (DHCPv6) pieces: the real-client tests tests/netns/test-agent6-*.sh -----------------
# The pool's IPv6 half: fd66::/64, the server fd66::1, the range fd66::100-fd66::1ff, DNS
# fd66::53 (DNS6 overrides), search vm.test svc.vm.test, lifetimes PREFERRED6/VALID6 (default
# 10/20 s: T1 5 s, T2 8 s, so a client renews on its own within seconds), RA6=1 for router
# advertisements from the server (M=1).
SERVER_IP6=fd66::1
DNS6=${DNS6:-fd66::53}
PREFERRED6=${PREFERRED6:-10}
VALID6=${VALID6:-20}
RA6=${RA6:-0}
# SERVER6=agent (default): vm-dhcp-agent serves DHCPv6 (and RAs) from the YAML pool.
# SERVER6=kea: ISC Kea DHCPv6 serves the same pool (and radvd the RAs): a check of the
# client side alone, for when the agent is not the thing under test.
SERVER6=${SERVER6:-agent}
KEA_PID=
RADVD_PID=

# write_pool6 FILE: write_pool's IPv4 pool with an ipv6Config (and, with ALLOCATED6, the
# status.ipv6.allocated entries the controller wrote)
write_pool6() {
    local f=$1 ra=false
    [ "$RA6" = 1 ] && ra=true
    write_pool "$f"
    cat >>"$f" <<EOF
  ipv6Config:
    cidr: fd66::/64
    serverIP: $SERVER_IP6
    pool:
      start: fd66::100
      end: fd66::1ff
    dns:
      - $DNS6
    domainSearch:
      - vm.test
      - svc.vm.test
    preferredLifetime: $PREFERRED6
    validLifetime: $VALID6
    routerAdvertisement:
      enabled: $ra
      interval: 4
EOF
    # the controller's allocations (ALLOCATED6: "ADDRESS=MAC" words) as it records them
    [ -n "${ALLOCATED6:-}" ] || return 0
    printf 'status:\n  ipv6:\n    allocated:\n' >>"$f"
    local a
    for a in $ALLOCATED6; do printf '      "%s": "%s"\n' "${a%%=*}" "${a#*=}" >>"$f"; done
}

# vmnetcfg6 FILE VMNAME MAC IPV4 IPV6: a dual-stack static binding (both pinned)
vmnetcfg6() {
    vmnetcfg "$1" "$2" "$3" "$4"
    echo "      ipv6Address: $5" >>"$1"
}

# vmnetcfg6_dynamic FILE VMNAME MAC IPV4 IPV6: a NIC without an IPv6 pin whose IPv6 address
# the controller allocated from the range: the object as the controller leaves it, the address
# in status.networkConfigs[].allocatedIPv6Address (spec.ipv6Address unset); the pool's side
# of the same allocation is ALLOCATED6="IPV6=MAC" for write_pool6
vmnetcfg6_dynamic() {
    vmnetcfg "$1" "$2" "$3" "$4"
    cat >>"$1" <<EOF
status:
  networkConfigs:
    - networkName: testnet
      macAddress: "$3"
      allocatedIPAddress: $4
      allocatedIPv6Address: $5
      state: Allocated
EOF
}

# wait_ll NS IF: the interface's link-local address has finished DAD (a DHCPv6 client sends
# from it, a server answers to it)
ll_ready() { ip -n "$1" -6 addr show dev "$2" scope link | grep -q 'inet6 fe80' &&
    ! ip -n "$1" -6 addr show dev "$2" scope link | grep -q tentative; }
wait_ll() { wait_for 10 ll_ready "$1" "$2"; }
ip6_on() { ip -n "$1" -6 addr show dev "$2" | grep -q "inet6 $3/" &&
    ! ip -n "$1" -6 addr show dev "$2" | grep "inet6 $3/" | grep -q tentative; }

# start_server6 CONFIG: the DHCPv6 server for the pool on br0 in $SRV (see SERVER6)
start_server6() {
    local cfg=$1
    # a server bound before br0's link-local address is past DAD could not send from it
    wait_ll "$SRV" br0 || { echo "br0 has no usable link-local address"; return 1; }
    if [ "$SERVER6" = kea ]; then
        start_kea6
        return
    fi
    start_agent "$cfg" || return 1
    # the agent puts fd66::1 on br0 (--assign-server-ip): wait until it is usable
    wait_for 10 ip6_on "$SRV" br0 "$SERVER_IP6"
}

# start_kea6: kea-dhcp6 serving the pool of write_pool6 on br0, and radvd when RA6=1. Each
# address the agent would serve a MAC (a pin, or the controller's allocation) is a Kea host
# reservation by hardware address: KEA6_RESERVATIONS, "MAC IPV6" lines. Logs: $TMP/kea.log (debug: every packet),
# $TMP/radvd.log.
KEA6_RESERVATIONS=
start_kea6() {
    local res='' mac ip sep='' i
    command -v kea-dhcp6 >/dev/null || skip "kea-dhcp6 is not installed (scripts/install-deps installs it)"
    ip -n "$SRV" addr add "$SERVER_IP6/64" dev br0 nodad
    while read -r mac ip; do
        [ -n "$mac" ] || continue
        res="$res$sep{ \"hw-address\": \"$mac\", \"ip-addresses\": [ \"$ip\" ] }"
        sep=', '
    done <<<"$KEA6_RESERVATIONS"
    mkdir -p "$TMP/kea"
    cat >"$TMP/kea6.json" <<EOF
{ "Dhcp6": {
  "interfaces-config": { "interfaces": [ "br0" ] },
  "lease-database": { "type": "memfile", "persist": false },
  "data-directory": "$TMP/kea",
  "mac-sources": [ "any" ],
  "host-reservation-identifiers": [ "hw-address" ],
  "preferred-lifetime": $PREFERRED6, "valid-lifetime": $VALID6,
  "renew-timer": $((PREFERRED6 / 2)), "rebind-timer": $((PREFERRED6 * 4 / 5)),
  "option-data": [
    { "name": "dns-servers", "data": "$DNS6" },
    { "name": "domain-search", "data": "vm.test, svc.vm.test" } ],
  "subnet6": [ { "id": 1, "subnet": "fd66::/64", "interface": "br0",
    "pools": [ { "pool": "fd66::100 - fd66::1ff" } ],
    "reservations": [ $res ] } ],
  "loggers": [ { "name": "kea-dhcp6", "severity": "DEBUG", "debuglevel": 99,
    "output_options": [ { "output": "$TMP/kea.log" } ] } ]
} }
EOF
    ip netns exec "$SRV" env KEA_PIDFILE_DIR="$TMP/kea" KEA_LOCKFILE_DIR=none \
        kea-dhcp6 -c "$TMP/kea6.json" >>"$TMP/kea-stdout.log" 2>&1 &
    KEA_PID=$!; PIDS+=("$KEA_PID")
    for i in $(seq 100); do
        grep -q 'DHCP6_STARTED' "$TMP/kea.log" 2>/dev/null && break
        kill -0 "$KEA_PID" 2>/dev/null || { echo "kea-dhcp6 exited:"; cat "$TMP/kea-stdout.log"; return 1; }
        sleep 0.1
    done
    [ "$RA6" = 1 ] || return 0
    command -v radvd >/dev/null || skip "radvd is not installed (SERVER6=kea sends RAs with it)"
    ip netns exec "$SRV" sysctl -qw net.ipv6.conf.all.forwarding=1
    cat >"$TMP/radvd.conf" <<EOF
interface br0 {
    AdvSendAdvert on; MinRtrAdvInterval 3; MaxRtrAdvInterval 4;
    AdvManagedFlag on; AdvOtherConfigFlag on; AdvDefaultLifetime 0;
    prefix fd66::/64 { AdvOnLink on; AdvAutonomous off; };
};
EOF
    ip netns exec "$SRV" radvd -n -C "$TMP/radvd.conf" -p "$TMP/radvd.pid" -m logfile \
        -l "$TMP/radvd.log" -d 1 >>"$TMP/radvd.log" 2>&1 &
    RADVD_PID=$!; PIDS+=("$RADVD_PID")
}

# srv6_count TYPE: how many DHCPv6 messages of TYPE (solicit, request, renew, rebind, release,
# decline, confirm, information-request) the server received: the agent's /metrics counter,
# or (SERVER6=kea) Kea's debug log lines
srv6_count() {
    local t=$1 K
    if [ "$SERVER6" = kea ]; then
        K=$(echo "$t" | tr a-z- A-Z_)
        grep -c "DHCP6_PACKET_RECEIVED.*: $K (type" "$TMP/kea.log" 2>/dev/null
        return 0
    fi
    ip netns exec "$SRV" curl -sf "http://127.0.0.1:$HTTP_PORT/metrics" |
        awk -v t="type=\"$t\"" '$1 ~ /^vmdhcp_agent_dhcp6_packets_received_total\{/ && index($1, t) { s += $2 }
            END { print s + 0 }'
}
# srv6_more TYPE N: more than N received
srv6_more() { [ "$(srv6_count "$1")" -gt "$2" ]; }

# Facts read back from a VM namespace.
vm_addrs6() { ip -n "$TAG-$1" -6 -o addr show dev eth0 scope global | awk '{ print $4 }'; }
# has_addr6 VM ADDR: ADDR (any prefix length) is on the VM's eth0 and past DAD
has_addr6() { ip -n "$TAG-$1" -6 -o addr show dev eth0 scope global | grep -v tentative |
    awk '{ sub("/.*", "", $4); print $4 }' | grep -qx -- "$2"; }
