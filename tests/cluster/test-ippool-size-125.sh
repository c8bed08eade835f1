#!/bin/bash
# tests/cluster/test-ippool-size-125.sh - an IPPool's status at etcd's request limit, on a real
# kube-apiserver 1.25 (../shared/k8s: etcd with its default --max-request-bytes, 1.5 MiB).
#
# A /16 pool's status is filled (one status PATCH) with MAC bindings up to a few dozen short of
# the controller's object budget, then build/vm-dhcp-controller (this host's kubeconfig;
# --no-agent, --no-leader-election) adopts them and VirtualMachines are created one by one:
#   A (the default --ippool-object-budget, 1.25 MiB): the pool fills to the budget, the next
#     NIC is Pending (reason PoolStatusFull) with a Warning Event, the pool's condition
#     StatusFull is True with a Warning Event, the stored object stays within the budget, and
#     every NIC that says Allocated is listed in the stored status.ipv4.allocated;
#   B (--ippool-object-budget above etcd's limit, a second pool filled just under it): etcd
#     refuses a status write ("etcdserver: request is too large", HTTP 500), the NIC bound
#     meanwhile goes back to Pending (PoolStatusFull), the pool gets a Warning Event StatusFull,
#     the refusal is counted, and again nothing says Allocated that the stored status does not
#     list.
# Env: PORT, ETCD_PORT (default 26491, 22491). Stops what it started by PID. Exit 77 (skipped,
# with the reason) when ../shared/k8s, the controller binary, kubectl, jq or curl are missing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
K8S_DIR=${VMD_K8S_DIR:-$ROOT/../shared/k8s}
CTRL=${CTRL:-$ROOT/build/vm-dhcp-controller}
export PORT=${PORT:-26491} ETCD_PORT=${ETCD_PORT:-22491}
CNS=vm-dhcp-system
TMP=$(mktemp -d /tmp/vmd-ippool-size.XXXXXX)
CPID=""
STARTED=""

skip() { echo "SKIP: $*"; exit 77; }
stop_ctrl() {
    if [ -n "$CPID" ] && kill -0 "$CPID" 2>/dev/null; then
        kill -TERM "$CPID" 2>/dev/null
        for _ in $(seq 1 100); do kill -0 "$CPID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$CPID" 2>/dev/null
        wait "$CPID" 2>/dev/null
    fi
    CPID=""
}
cleanup() {
    trap '' INT TERM
    stop_ctrl
    [ -n "$STARTED" ] && "$K8S_DIR/apiserver-down" "$TMP/k8s" >/dev/null 2>&1
    [ "${KEEP_LOGS:-0}" = 1 ] && { echo "logs kept in $TMP"; return; }
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -x "$K8S_DIR/apiserver-up" ] || skip "$K8S_DIR (kube-apiserver 1.25) is absent"
for c in kubectl jq curl etcd xz openssl; do command -v $c >/dev/null || skip "$c is not installed"; done
[ -x "$CTRL" ] || skip "$CTRL is not built (make programs)"
"$CTRL" --help 2>&1 | grep -q -- --ippool-object-budget || skip "$CTRL has no --ippool-object-budget"

fail() {
    echo "FAIL: $*"
    [ -f "$TMP/controller.log" ] && { echo "--- controller log (last 30 lines)"; tail -n 30 "$TMP/controller.log"; }
    exit 1
}
t0=$SECONDS
"$K8S_DIR/apiserver-up" "$TMP/k8s" >"$TMP/apiserver-up.log" 2>&1 ||
    { tail -n 20 "$TMP/apiserver-up.log"; fail "kube-apiserver 1.25 did not start"; }
STARTED=1
export KUBECONFIG=$TMP/k8s/kubeconfig
k() { kubectl --request-timeout=60s "$@"; }
P=$TMP/k8s/pki
raw() { # METHOD PATH [content-type body-file]: the body on stdout, the HTTP code in $TMP/code
    local m=$1 p=$2
    shift 2
    curl -s -o "$TMP/out.json" -w '%{http_code}' --cacert "$P/ca.crt" --cert "$P/admin.crt" --key "$P/admin.key" \
        -X "$m" ${1:+-H "Content-Type: $1"} ${2:+--data-binary "@$2"} "https://127.0.0.1:$PORT$p" >"$TMP/code"
    cat "$TMP/out.json"
}
k apply -f crds/ -f tests/cluster/nad-crd.yaml -f tests/cluster/kubevirt-vm-crd.yaml >"$TMP/crds.log" 2>&1 ||
    { cat "$TMP/crds.log"; fail "installing the CRDs"; }
k wait --for condition=Established --timeout=60s crd --all >/dev/null 2>&1 || fail "CRDs not Established"
k create namespace $CNS >/dev/null 2>&1 || fail "namespace $CNS"
GROUP=/apis/network.harvesterhci.io/v1alpha1/namespaces/default

# pool NAME /16-PREFIX(10.N): a NAD and an IPPool 10.N.0.0/16, range .0.10-.255.250
pool() {
    k apply -f - >/dev/null <<EOF || fail "creating pool $1"
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: {name: $1, namespace: default}
spec: {config: '{}'}
---
apiVersion: network.harvesterhci.io/v1alpha1
kind: IPPool
metadata: {name: $1, namespace: default}
spec:
  networkName: default/$1
  ipv4Config: {serverIP: 10.$2.0.2, cidr: 10.$2.0.0/16, pool: {start: 10.$2.0.10, end: 10.$2.255.250}}
EOF
}
# fill NAME N COUNT: status.ipv4.allocated gets COUNT MAC bindings from 10.N.0.10 on (one PATCH)
fill() {
    jq -nc --argjson n "$2" --argjson c "$3" '
        def hex2: (. % 256) as $v | "0123456789abcdef" as $d | $d[($v / 16 | floor):($v / 16 | floor) + 1] + $d[($v % 16):($v % 16) + 1];
        {status: {ipv4: {used: $c, available: 0, allocated: ([range(0; $c)] | map(. + 10 |
            {key: "10.\($n).\(. / 256 | floor).\(. % 256)",
             value: "02:00:00:\((. / 65536 | floor) | hex2):\((. / 256 | floor) | hex2):\(. | hex2)"}) | from_entries)}}}' >"$TMP/fill.json"
    raw PATCH "$GROUP/ippools/$1/status" application/merge-patch+json "$TMP/fill.json" >/dev/null
    [ "$(cat "$TMP/code")" = 200 ] || fail "filling $1 with $3 bindings: HTTP $(cat "$TMP/code") $(head -c 300 "$TMP/out.json")"
}
bytes_of() { raw GET "$GROUP/ippools/$1" | jq -c . | tr -d '\n' | wc -c; }
vm() { # NAME NETWORK MAC
    k apply -f - >/dev/null <<EOF || fail "creating VM $1"
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata: {name: $1, namespace: default}
spec:
  template:
    spec:
      domain: {devices: {interfaces: [{name: nic-1, bridge: {}, macAddress: "$3"}]}}
      networks: [{name: nic-1, multus: {networkName: default/$2}}]
EOF
}
nic_state() { # NAME → "state reason"
    raw GET "$GROUP/virtualmachinenetworkconfigs/$1" |
        jq -r '"\(.status.networkConfigs[0].state // "") \((.status.conditions // [])[] | select(.type == "Allocated") | .reason)"' 2>/dev/null
}
# every NIC Allocated on network NAME is in the stored status of pool NAME with its MAC
all_recorded() {
    raw GET "$GROUP/ippools/$1" >"$TMP/pool.json"
    raw GET "$GROUP/virtualmachinenetworkconfigs" >"$TMP/cfgs.json"
    jq -e --slurpfile p "$TMP/pool.json" --arg net "default/$1" '
        ($p[0].status.ipv4.allocated // {}) as $a
        | [.items[].status.networkConfigs[]? | select(.networkName == $net and .state == "Allocated")
           | select(($a[.allocatedIPAddress] // "" | ascii_downcase) != (.macAddress | ascii_downcase))]
        | length == 0' "$TMP/cfgs.json" >/dev/null
}
event_seen() { # OBJECT TYPE REASON
    raw GET /api/v1/namespaces/default/events |
        jq -e --arg o "$1" --arg t "$2" --arg r "$3" \
            '[.items[] | select(.involvedObject.name == $o and .type == $t and .reason == $r)] | length > 0' >/dev/null
}
wait_until() { # SECONDS command...: polls every 0.2 s
    local end=$((SECONDS + $1))
    shift
    while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done
    return 1
}
start_ctrl() {
    "$CTRL" --kubeconfig "$KUBECONFIG" --namespace $CNS --agent-image vm-dhcp-agent:unused \
        --no-agent --no-leader-election --listen "127.0.0.1:$HPORT" --webhook-listen off "$@" \
        >>"$TMP/controller.log" 2>&1 &
    CPID=$!
}
metric() { curl -s "http://127.0.0.1:$HPORT/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
has_status() { raw GET "$GROUP/ippools/$1" | jq -e '.status.conditions | length > 0' >/dev/null; }
HPORT=$((20000 + RANDOM % 20000))

# --- A: the default budget ---------------------------------------------------------------------
BUDGET=1310720
pool size-a 1
# entries of 10.1.x.y take 31 to 35 bytes: fill, measure the stored object, fill up to about
# 2 500 bytes short of the budget (the controller adds ~1 100 bytes of conditions and keeps
# 600 for StatusFull: room for a few dozen bindings)
K=$(( (BUDGET - 3000) / 35 ))
fill size-a 1 $K
K=$(( K + (BUDGET - $(bytes_of size-a) - 2500) / 35 ))
fill size-a 1 $K
echo "A: $K bindings filled, the stored IPPool takes $(bytes_of size-a) bytes"
start_ctrl
wait_until 60 has_status size-a || fail "pool size-a got no status from the controller"
i=0
refused=""
while [ $i -lt 400 ]; do
    i=$((i + 1))
    vm a-$i size-a "$(printf '06:00:00:00:%02x:%02x' $((i / 256)) $((i % 256)))"
    st=""
    for _ in $(seq 150); do
        st=$(nic_state a-$i)
        case "$st" in "Allocated "* | *PoolStatusFull) break ;; esac
        sleep 0.2
    done
    case "$st" in
    "Allocated "*) ;;
    "Pending PoolStatusFull") refused=a-$i; break ;;
    *) fail "VMNetCfg a-$i neither Allocated nor Pending PoolStatusFull: '$st'" ;;
    esac
done
[ -n "$refused" ] || fail "no NIC refused after $i VMs"
[ $i -gt 1 ] || fail "the first NIC was refused: the fill left no room"
echo "A: $((i - 1)) NICs bound on top of the fill, $refused Pending PoolStatusFull"
wait_until 30 event_seen "$refused" Warning PoolStatusFull || fail "no Warning PoolStatusFull Event on $refused"
wait_until 30 event_seen size-a Warning StatusFull || fail "no Warning StatusFull Event on IPPool size-a"
cond=$(raw GET "$GROUP/ippools/size-a" | jq -r '.status.conditions[] | select(.type == "StatusFull") | "\(.status) \(.reason)"')
[ "$cond" = "True StatusFull" ] || fail "IPPool size-a condition StatusFull: '$cond'"
wait_until 30 all_recorded size-a || fail "a NIC says Allocated that size-a's stored status does not list"
n=$(bytes_of size-a)
[ "$n" -le $BUDGET ] || fail "the stored IPPool size-a takes $n bytes, over the budget $BUDGET"
r=$(metric vmdhcp_controller_allocations_refused_total)
[ "${r:-0}" != 0 ] || fail "vmdhcp_controller_allocations_refused_total is ${r:-absent}"
echo "A: the stored IPPool takes $n of $BUDGET bytes; StatusFull True, Events, metric $r: ok"
stop_ctrl

# --- B: a budget above etcd's limit: etcd's own refusal ---------------------------------------------
pool size-b 2
# just under the limit measured on this server (1.25's etcd: an object of at most about
# 1 572 700 bytes), less the conditions the controller adds and a few bindings
LIMIT=1572680
K=$(( (LIMIT - 3000) / 35 ))
fill size-b 2 $K
K=$(( K + (LIMIT - $(bytes_of size-b) - 1100 - 3 * 35) / 35 ))
fill size-b 2 $K
echo "B: $K bindings filled, the stored IPPool takes $(bytes_of size-b) bytes"
start_ctrl --ippool-object-budget 2000000
settled_b() { has_status size-b || grep -q "request is too large" "$TMP/controller.log"; }
wait_until 60 settled_b || fail "pool size-b: neither a status nor a refusal"
i=0
refused=""
while [ $i -lt 400 ]; do
    i=$((i + 1))
    vm b-$i size-b "$(printf '0a:00:00:00:%02x:%02x' $((i / 256)) $((i % 256)))"
    st=""
    for _ in $(seq 150); do
        st=$(nic_state b-$i)
        case "$st" in "Allocated "* | *PoolStatusFull) break ;; esac
        sleep 0.2
    done
    case "$st" in
    "Allocated "*) ;;
    "Pending PoolStatusFull") refused=b-$i; break ;;
    *) fail "VMNetCfg b-$i neither Allocated nor Pending PoolStatusFull: '$st'" ;;
    esac
    # an Allocated NIC may be taken back once etcd refuses the write that lists it
    wait_until 5 all_recorded size-b || true
done
[ -n "$refused" ] || fail "no NIC refused after $i VMs"
grep -q "request is too large" "$TMP/controller.log" || fail "etcd never refused a status write"
wait_until 30 event_seen size-b Warning StatusFull || fail "no Warning StatusFull Event on IPPool size-b"
wait_until 30 all_recorded size-b || fail "a NIC says Allocated that size-b's stored status does not list"
r=$(metric vmdhcp_controller_ippool_status_too_large_total)
[ "${r:-0}" != 0 ] || fail "vmdhcp_controller_ippool_status_too_large_total is ${r:-absent}"
echo "B: etcd refused the status ($r times): $refused Pending PoolStatusFull, Event, nothing Allocated unlisted: ok"
stop_ctrl
echo "PASS: ippool size at etcd's limit ($((SECONDS - t0)) s)"
