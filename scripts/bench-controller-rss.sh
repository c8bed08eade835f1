#!/bin/bash
# scripts/bench-controller-rss.sh - the real vm-dhcp-controller's memory at N KubeVirt VMs
# (the bar: RSS under 32 MiB at 10 000 VMs), against build/test-apiserver on loopback.
#   N VirtualMachines (one Multus NIC each, a realistic small spec) and one IPPool /17 exist
#   before the controller starts (--no-leader-election); it turns each VM into a VMNetCfg and
#   binds it. Reported: time until the IPPool status shows N used, VmRSS/VmHWM then, VmRSS
#   SETTLE (5) seconds later (steady; the controller trims its heap every 5 s), and the number
#   of distinct Allocated addresses in the API (must be N).
# Usage: make bench-controller-rss   (BENCH_N=10000, CTRL=path of another binary to compare,
#   WRAP="valgrind --tool=massif ..." to profile, SMAPS=1 for the largest mappings).
# Needs curl and jq; no root (loopback only).
set -u
cd "$(dirname "$0")/.."
N=${BENCH_N:-10000}
API=build/test-apiserver CTRL=${CTRL:-build/vm-dhcp-controller}
for p in $API $CTRL; do [ -x "$p" ] || { echo "bench-rss: $p not built (make)" >&2; exit 1; }; done
for c in curl jq; do command -v $c >/dev/null || { echo "bench-rss: $c missing" >&2; exit 1; }; done
TMP=$(mktemp -d /tmp/vmdhcp-bench-rss.XXXXXX)
API_PID= CTRL_PID=
stop() { [ -n "$1" ] && kill "$1" 2>/dev/null && wait "$1" 2>/dev/null; return 0; }
trap 'stop "$CTRL_PID"; stop "$API_PID"; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
now() { date +%s.%N; }
since() { echo "$(now) $1" | awk '{ printf "%.2f", $1 - $2 }'; }
# shellcheck source=scripts/proc-lib.sh
. scripts/proc-lib.sh

$API --listen 127.0.0.1:0 --state-dir "$TMP/api" --history 200000 --log-level warn >"$TMP/api.log" 2>&1 &
API_PID=$!
for i in $(seq 100); do [ -s "$TMP/api/port" ] && break; sleep 0.1; done
URL=https://127.0.0.1:$(cat "$TMP/api/port")
G=/apis/network.harvesterhci.io/v1alpha1/namespaces/default
api() {
    curl -sf --cacert "$TMP/api/ca.crt" -H "Authorization: Bearer test-token" -X "$1" \
        -H "Content-Type: application/json" ${3:+--data-binary "$3"} "$URL$2"
}
api POST /apis/k8s.cni.cncf.io/v1/namespaces/default/network-attachment-definitions \
    '{"metadata":{"name":"bench"},"spec":{"config":"{}"}}' >/dev/null
api POST $G/ippools '{"metadata":{"name":"bench"},"spec":{"networkName":"default/bench",
  "ipv4Config":{"serverIP":"10.96.0.1","cidr":"10.96.0.0/17","router":"10.96.0.1",
  "pool":{"start":"10.96.0.10","end":"10.96.127.250"},"leaseTime":3600}}}' >/dev/null ||
    { echo "bench-rss: cannot create the IPPool" >&2; exit 1; }
for i in $(seq 1 "$N"); do
    [ "$i" -gt 1 ] && echo next
    printf 'url = "%s/apis/kubevirt.io/v1/namespaces/default/virtualmachines"\n' "$URL"
    printf 'data = "{\\"apiVersion\\":\\"kubevirt.io/v1\\",\\"kind\\":\\"VirtualMachine\\",\\"metadata\\":{\\"name\\":\\"vm-%05d\\",\\"labels\\":{\\"app\\":\\"bench\\",\\"harvesterhci.io/creator\\":\\"harvester\\"},\\"annotations\\":{\\"harvesterhci.io/vmRunStrategy\\":\\"RerunOnFailure\\"}},\\"spec\\":{\\"runStrategy\\":\\"RerunOnFailure\\",\\"template\\":{\\"metadata\\":{\\"labels\\":{\\"harvesterhci.io/vmName\\":\\"vm-%05d\\"}},\\"spec\\":{\\"domain\\":{\\"cpu\\":{\\"cores\\":2},\\"memory\\":{\\"guest\\":\\"4Gi\\"},\\"devices\\":{\\"disks\\":[{\\"name\\":\\"disk-0\\",\\"disk\\":{\\"bus\\":\\"virtio\\"}}],\\"interfaces\\":[{\\"name\\":\\"nic-1\\",\\"bridge\\":{},\\"model\\":\\"virtio\\",\\"macAddress\\":\\"52:54:%02x:%02x:%02x:%02x\\"}]}},\\"networks\\":[{\\"name\\":\\"nic-1\\",\\"multus\\":{\\"networkName\\":\\"default/bench\\"}}],\\"volumes\\":[{\\"name\\":\\"disk-0\\",\\"persistentVolumeClaim\\":{\\"claimName\\":\\"vm-%05d-disk-0\\"}}]}}}}"\n' \
        "$i" "$i" $((i >> 24 & 255)) $((i >> 16 & 255)) $((i >> 8 & 255)) $((i & 255)) "$i"
    printf 'header = "Content-Type: application/json"\nheader = "Authorization: Bearer test-token"\n'
    printf 'cacert = "%s"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\nsilent\n' "$TMP/api/ca.crt"
done >"$TMP/vms.curl"
curl --parallel --parallel-max 50 -K "$TMP/vms.curl" >"$TMP/codes" 2>/dev/null
echo "bench-rss: $(grep -c '^201$' "$TMP/codes") of $N VMs created"

pool_used() { api GET $G/ippools/bench | jq '.status.ipv4.used // 0'; }
t0=$(now)
${WRAP:-} $CTRL --kubeconfig "$TMP/api/kubeconfig" --namespace vmdhcp-system \
    --agent-image bench/agent:1 --listen 127.0.0.1:0 --no-leader-election --log-level warn \
    >>"$TMP/controller.log" 2>&1 &
CTRL_PID=$!
for i in $(seq 1200); do [ "$(pool_used)" -ge "$N" ] && break; sleep 0.1; done
echo "bench-rss: IPPool used=$(pool_used) after $(since "$t0") s (controller start to all bound)"
echo "bench-rss: when bound: VmRSS $(proc_status $CTRL_PID VmRSS) KiB, VmHWM $(proc_status $CTRL_PID VmHWM) KiB"
sleep "${SETTLE:-5}"
echo "bench-rss: steady (+${SETTLE:-5} s): VmRSS $(proc_status $CTRL_PID VmRSS) KiB, peak VmHWM $(proc_status $CTRL_PID VmHWM) KiB"
n=$(api GET $G/virtualmachinenetworkconfigs | jq '[.items[].status.networkConfigs[0]? | select(.state == "Allocated") | .allocatedIPAddress] | unique | length')
echo "bench-rss: $n distinct addresses Allocated"
[ -n "${SMAPS:-}" ] && awk '/^[0-9a-f]+-/ { name = $6 } /^Rss:/ { r[name] += $2 }
    END { for (k in r) if (r[k] > 100) print r[k], "KiB", k }' "/proc/$CTRL_PID/smaps" | sort -rn | head -15
[ "$n" = "$N" ]
