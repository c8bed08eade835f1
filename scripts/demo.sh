#!/bin/bash
# scripts/demo.sh - vm-dhcp-agent in local mode, end to end, in throwaway network namespaces.
#
#   vmdhcp-demo-<pid>-srv   bridge br0 + vm-dhcp-agent (serverIP 10.99.0.1/24 set by the agent)
#   vmdhcp-demo-<pid>-vm1   eth0 52:54:00:de:00:01 <== veth ==> br0   (static binding 10.99.0.11)
#   vmdhcp-demo-<pid>-vm2   eth0 52:54:00:de:00:02 <== veth ==> br0   (static binding 10.99.0.12)
#
# Writes the IPPool + VirtualMachineNetworkConfig YAML a user would `kubectl apply`, runs the
# agent on it, runs a real ISC dhclient in each VM namespace, prints what each VM got (read back
# from its namespace: address, routes, MTU, resolv.conf) and tears everything down, also on
# Ctrl-C. Needs root; `make demo` installs the packages and builds first.
# Environment: AGENT (default build/vm-dhcp-agent), KEEP=1 keeps the temp dir (logs).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
AGENT=${AGENT:-$ROOT/build/vm-dhcp-agent}
P=vmdhcp-demo-$$
SRV=$P-srv
VMS=(vm1 vm2)
declare -A MAC=([vm1]=52:54:00:de:00:01 [vm2]=52:54:00:de:00:02)
declare -A IP=([vm1]=10.99.0.11 [vm2]=10.99.0.12)
TMP=
AGENT_PID=
CLIENT_PIDS=()
CREATED=()

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
die() { echo "demo: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "run as root (it creates network namespaces): sudo make demo"
for c in ip dhclient unshare; do
    command -v "$c" >/dev/null || die "$c is missing: run scripts/install-deps (make demo does)"
done
[ -x "$AGENT" ] || die "$AGENT is not built: run make"

stop_pid() {
    local p=$1 i
    kill -0 "$p" 2>/dev/null || return 0
    kill -TERM "$p" 2>/dev/null || true
    for i in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null || true
}

cleanup() {
    local rc=$? p n
    trap - EXIT
    trap "" INT TERM # a second Ctrl-C must not cut the teardown short
    set +e
    say "tearing down"
    for p in "${CLIENT_PIDS[@]}"; do stop_pid "$p"; done
    [ -n "$AGENT_PID" ] && stop_pid "$AGENT_PID"
    for n in "${CREATED[@]}"; do ip netns del "$n" 2>/dev/null; rm -rf "/etc/netns/$n"; done
    if [ -n "$TMP" ]; then
        if [ "${KEEP:-0}" = 1 ]; then echo "logs kept in $TMP"; else rm -rf "$TMP"; fi
    fi
    echo "removed namespaces ${CREATED[*]:-}"
    exit $rc
}
trap cleanup EXIT
trap 'echo; echo "interrupted"; exit 130' INT TERM

TMP=$(mktemp -d "/tmp/$P.XXXXXX")

say "topology: namespace $SRV with bridge br0, VM namespaces $P-vm1 and $P-vm2"
ip netns add "$SRV"; CREATED+=("$SRV")
ip -n "$SRV" link set lo up
ip -n "$SRV" link add br0 type bridge stp_state 0 forward_delay 0
ip -n "$SRV" link set br0 up
for vm in "${VMS[@]}"; do
    ns=$P-$vm
    ip netns add "$ns"; CREATED+=("$ns")
    mkdir -p "/etc/netns/$ns"; : >"/etc/netns/$ns/resolv.conf"
    ip -n "$ns" link set lo up
    ip -n "$SRV" link add "p-$vm" type veth peer name eth0 netns "$ns"
    ip -n "$ns" link set eth0 address "${MAC[$vm]}"
    ip -n "$SRV" link set "p-$vm" master br0 up
    ip -n "$ns" link set eth0 up
done

cat >"$TMP/demo.yaml" <<'EOF'
apiVersion: network.harvesterhci.io/v1alpha1
kind: IPPool
metadata:
  name: demo
  namespace: default
spec:
  networkName: default/demo
  ipv4Config:
    serverIP: 10.99.0.1
    cidr: 10.99.0.0/24
    pool:
      start: 10.99.0.100
      end: 10.99.0.200
    router: 10.99.0.1
    dns: [10.99.0.53, 10.99.0.54]
    domainName: demo.test
    domainSearch: [demo.test, svc.demo.test]
    mtu: 1400
    routes:
      - destination: 10.200.0.0/16
        gateway: 10.99.0.254
    leaseTime: 600
---
apiVersion: network.harvesterhci.io/v1alpha1
kind: VirtualMachineNetworkConfig
metadata:
  name: vm1
  namespace: default
spec:
  vmName: vm1
  networkConfigs:
    - networkName: demo
      macAddress: "52:54:00:de:00:01"
      ipAddress: 10.99.0.11
---
apiVersion: network.harvesterhci.io/v1alpha1
kind: VirtualMachineNetworkConfig
metadata:
  name: vm2
  namespace: default
spec:
  vmName: vm2
  networkConfigs:
    - networkName: demo
      macAddress: "52:54:00:de:00:02"
      ipAddress: 10.99.0.12
EOF
say "configuration ($TMP/demo.yaml): one IPPool, two VirtualMachineNetworkConfigs"
sed 's/^/    /' "$TMP/demo.yaml" | sed -n '1,24p'
echo "    ... (two VirtualMachineNetworkConfig documents: vm1 -> 10.99.0.11, vm2 -> 10.99.0.12)"

say "starting: vm-dhcp-agent --config demo.yaml --interface br0 --assign-server-ip --listen 127.0.0.1:9180"
ip netns exec "$SRV" "$AGENT" --config "$TMP/demo.yaml" --interface br0 --assign-server-ip \
    --listen 127.0.0.1:9180 >"$TMP/agent.log" 2>&1 &
AGENT_PID=$!
ready=0
for i in $(seq 100); do
    if ip netns exec "$SRV" bash -c 'exec 3<>/dev/tcp/127.0.0.1/9180 && printf "GET /readyz HTTP/1.0\r\n\r\n" >&3 && grep -q "^ok" <&3' 2>/dev/null; then
        ready=1; break
    fi
    kill -0 "$AGENT_PID" 2>/dev/null || break
    sleep 0.1
done
sed 's/^/    agent| /' "$TMP/agent.log"
[ $ready = 1 ] || die "the agent did not become ready (log above)"

# dhclient in a private mount namespace: only the RFC 3442 hook of the host's dhclient-script
# hooks runs (no NTP/hostname side effects), and /etc/resolv.conf is the VM's own file.
cp /etc/dhcp/dhclient-exit-hooks.d/rfc3442-classless-routes "$TMP/" 2>/dev/null || true
cat >"$TMP/dhclient.conf" <<'EOF'
option rfc3442-classless-static-routes code 121 = array of unsigned integer 8;
request subnet-mask, broadcast-address, routers, domain-name, domain-name-servers,
        domain-search, host-name, interface-mtu, rfc3442-classless-static-routes,
        dhcp-lease-time, dhcp-renewal-time, dhcp-rebinding-time;
timeout 20;
EOF
for vm in "${VMS[@]}"; do
    say "$vm: dhclient eth0 (MAC ${MAC[$vm]})"
    ip netns exec "$P-$vm" unshare -u sh -c '
        for d in /etc/dhcp/dhclient-exit-hooks.d /etc/dhcp/dhclient-enter-hooks.d; do
            [ -d "$d" ] && mount -t tmpfs tmpfs "$d"
        done
        [ -f "$1/rfc3442-classless-routes" ] && cp "$1/rfc3442-classless-routes" /etc/dhcp/dhclient-exit-hooks.d/
        exec dhclient -d -1 -v -cf "$1/dhclient.conf" -lf "$1/$2.leases" -pf "$1/$2.pid" eth0' \
        sh "$TMP" "$vm" >"$TMP/dhclient-$vm.log" 2>&1 &
    CLIENT_PIDS+=($!)
done
for vm in "${VMS[@]}"; do
    for i in $(seq 100); do
        ip -n "$P-$vm" -4 -o addr show dev eth0 | grep -q "${IP[$vm]}/" && break
        sleep 0.2
    done
done

for vm in "${VMS[@]}"; do
    ns=$P-$vm
    echo
    say "$vm got (read back from namespace $ns):"
    grep -E 'DHCP(DISCOVER|OFFER|REQUEST|ACK)|bound to' "$TMP/dhclient-$vm.log" | sed 's/^/    dhclient| /'
    echo "    address: $(ip -n "$ns" -4 -o addr show dev eth0 | awk '{ print $4 }')"
    echo "    mtu:     $(ip -n "$ns" link show dev eth0 | sed -n 's/.* mtu \([0-9]*\).*/\1/p')"
    echo "    routes:"; ip -n "$ns" -4 route show | sed 's/^/      /'
    echo "    /etc/resolv.conf:"; sed 's/^/      /' "/etc/netns/$ns/resolv.conf"
    h=$(sed -n 's/.*option host-name "\(.*\)";/\1/p' "$TMP/$vm.leases" | tail -n1)
    echo "    hostname offered (option 12): ${h:-none}"
done
echo
say "agent log: what it answered, and to whom"
grep -E 'vm-dhcp-agent: DHCP[A-Z]+ ' "$TMP/agent.log" | sed 's/^/    agent| /'
echo
say "agent metrics (selected)"
ip netns exec "$SRV" bash -c 'exec 3<>/dev/tcp/127.0.0.1/9180 && printf "GET /metrics HTTP/1.0\r\n\r\n" >&3 && cat <&3' |
    grep -E '^vmdhcp_agent_packets_received_total\{type="(discover|request)"\}|^vmdhcp_agent_replies_sent_total\{type="(offer|ack)"\}|^vmdhcp_agent_bindings|^vmdhcp_agent_reply_latency_seconds_count' |
    sed 's/^/    /'
ok=1
for vm in "${VMS[@]}"; do
    ip -n "$P-$vm" -4 -o addr show dev eth0 | grep -q "${IP[$vm]}/" || ok=0
done
echo
if [ $ok = 1 ]; then say "demo OK: both VMs got their bindings"; else say "demo FAILED: a VM has no address (KEEP=1 keeps logs)"; exit 1; fi
