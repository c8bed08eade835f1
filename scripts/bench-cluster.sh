#!/bin/bash
# scripts/bench-cluster.sh - cluster scale on the real single-node Kubernetes of
# tests/cluster/k8s-up.sh (`make bench-cluster`; a bench, not a test: it prints numbers and
# fails only when it cannot measure or a sampled VM is answered wrongly). Not part of
# `make test` or CI.
#
# The chart installed (release vm-dhcp, images of `make image`, as test-cluster-e2e.sh), then
# per phase one namespace with a NAD and an IPPool (/16) whose agent Deployment (2 replicas, one
# active) is Ready before the clock starts, and then
#   phase 1: N1 (1000) VirtualMachines of the stand-in CRD (tests/cluster/kubevirt-vm-crd.yaml),
#            one Multus NIC each on the pool's network;
#   phase 2: N2 (2000) VirtualMachines with NICS2 (5) such NICs each, 10 000 NICs in another
#            /16 pool (N2=10000 NICS2=1 is the same with five times the API objects: on a
#            loaded 2-core machine the bench's own 10 000 POSTs alone took over 6 minutes);
#   phase f: the floor (run last: it stops the controllers and deletes the webhook
#            configurations): the API writes N1 one-NIC VMs need at the least (the VM POST, the
#            VMNetCfg POST and its status write), sent by curl with no vm-dhcp process or
#            webhook, to tell the API server's share of the time from the product's;
# all created at once: POSTs by one curl process, PARALLEL (50) in flight, through the
# admission webhooks. Measured from the first POST:
#   - creates done (every POST answered 201);
#   - all NICs Allocated in the API: first from the leader's vmdhcpcontroller_vmnetcfg_status
#     series (its VMNetCfg cache: statuses as written and watched back), polled every 0.5 s,
#     then confirmed by one list of the VMNetCfgs (NICs Allocated, addresses distinct);
#   - all bindings served: the active agent pod's vmdhcp_agent_bindings equal to the NICs,
#     polled every 0.5 s; then SAMPLES (10) real DHCP exchanges (DISCOVER/OFFER/REQUEST/ACK,
#     build/bench/bench-e2e-client) from a network namespace with a veth on vmdhcp-vm0, the
#     bridge the agent pods' eth1 is on, taking the MAC of randomly chosen VMs: each must be
#     ACKed with its VMNetCfg's address, from the pool's serverIP.
# Where the time goes: a timeline (every poll: NICs allocated, agent bindings, the controller's
# work-queue depths and writes) in $OUT/timeline-P.txt, deltas of the controller's reconcile
# and write counters, of the API server's request latencies (apiserver_request_duration_seconds)
# and etcd's (etcd_request_duration_seconds), and the IPPool status size and write count.
#
# Runs under flock $VMD_CLUSTER_LOCK (default /tmp/vmd-cluster.lock: one cluster per machine);
# starts the cluster when it is not up and stops it at the end (KEEP_CLUSTER=1 keeps it), or
# uses the one that is up (the chart must not be installed there). Needs root, the images
# (make image), build/bench/bench-e2e-client and helm. Results in $OUT (default
# build/bench-cluster): results.txt, and the logs.
#
#   PHASES="1 2 f" N1=1000 N2=2000 NICS2=5 SAMPLES=10 PARALLEL=50 scripts/bench-cluster.sh
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
LOCK=${VMD_CLUSTER_LOCK:-/tmp/vmd-cluster.lock}
if [ -z "${VMD_CLUSTER_LOCKED:-}" ]; then
    echo "bench-cluster: waiting for $LOCK" >&2
    VMD_CLUSTER_LOCKED=1 exec flock "$LOCK" "$0" "$@"
fi
. "$ROOT/tests/cluster/cluster-lib.sh"
CLIENT=${CLIENT:-$ROOT/build/bench/bench-e2e-client}
PHASES=${PHASES:-1 2 f}
N1=${N1:-1000} N2=${N2:-2000} NICS2=${NICS2:-5}
SAMPLES=${SAMPLES:-10} PARALLEL=${PARALLEL:-50}
LIMIT1=${LIMIT1:-300} LIMIT2=${LIMIT2:-600} # give up on a phase after this many seconds
OUT=${OUT:-$ROOT/build/bench-cluster}
VMNS=vmdbc-vm
VETH=vmdbc$$
die() { echo "bench-cluster: $*" >&2; exit 1; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

r=0; msg=$(vmd_require) || r=$?
[ $r = 0 ] || { echo "bench-cluster: $msg" >&2; exit $r; }
[ -x "$CLIENT" ] || die "$CLIENT not built (make build/bench/bench-e2e-client)"
rm -rf "$OUT"; mkdir -p "$OUT"
CURL_PID=

cleanup() {
    trap '' INT TERM
    [ -n "$CURL_PID" ] && kill "$CURL_PID" 2>/dev/null && wait "$CURL_PID" 2>/dev/null
    ip netns del $VMNS 2>/dev/null
    for p in $(kubectl -n "$VMD_NS" get pods -o name 2>/dev/null); do
        kubectl -n "$VMD_NS" logs "$p" >"$OUT/log-${p#pod/}.txt" 2>&1
    done
    if [ "$VMD_STARTED_CLUSTER" = 1 ]; then
        vmd_cluster_down
    else # the cluster was up: leave it as found
        for p in $PHASES; do kubectl delete namespace "vmdbc-$p" --wait=false >/dev/null 2>&1; done
        "$HELM" uninstall "$VMD_REL" -n "$VMD_NS" --timeout 3m >/dev/null 2>&1
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

res() { echo "$*" | tee -a "$OUT/results.txt"; }
res "bench-cluster: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
t=$(now)
vmd_cluster_up "$OUT/k8s-up.log" >"$OUT/msg.txt" || die "$(cat "$OUT/msg.txt")"
[ "$VMD_STARTED_CLUSTER" = 1 ] && res "cluster started in $(since "$t") s"
"$HELM" status "$VMD_REL" -n "$VMD_NS" >/dev/null 2>&1 && die "the chart is installed already: uninstall it first"
kubectl label node $VMD_NODE network.harvesterhci.io/vmnet=true --overwrite >/dev/null
# HELM_ARGS: more helm install arguments (e.g. "--set controller.logLevel=debug")
# shellcheck disable=SC2086
msg=$(vmd_chart_install "$OUT/helm.log" ${HELM_ARGS:-}) || die "$msg"
LEADER=$(vmd_leader_pod) || die "no leader"
LIP=$(vmd_pod_ip "$LEADER")
res "chart installed; leader $LEADER ($LIP)"

# The VM: a namespace with a veth on the VM bridge; its MAC is set to the VM sampled.
ip netns add $VMNS || die "ip netns add $VMNS"
ip link add $VETH type veth peer name eth0 netns $VMNS || die "veth"
ip link set $VETH master vmdhcp-vm0 up
ip -n $VMNS link set lo up

# metric_sum FILE NAME [FILTER]: the sum of NAME's samples whose labels contain FILTER
metric_sum() {
    awk -v k="$2" -v f="${3:-}" '($1 == k || index($1, k "{") == 1) && index($1, f) { s += $2 }
        END { printf "%d\n", s }' "$1"
}
# req_latency FILE: "VERB RESOURCE[/SUB] COUNT SUM" of the API server's request durations and
# "etcd OPERATION TYPE COUNT SUM" of etcd's, for the kinds of this bench
req_latency() {
    awk 'function lab(s, n,   r) { r = ""; if (match(s, n "=\"[^\"]*\"")) r = substr(s, RSTART + length(n) + 2, RLENGTH - length(n) - 3); return r }
        /^apiserver_request_duration_seconds_(sum|count)\{/ {
            res = lab($1, "resource")
            if (res !~ /^(ippools|virtualmachinenetworkconfigs|virtualmachines|leases|deployments)$/) next
            sub_ = lab($1, "subresource"); k = lab($1, "verb") " " res (sub_ == "" ? "" : "/" sub_)
            if ($1 ~ /_sum\{/) s[k] += $2; else c[k] += $2 }
        /^etcd_request_duration_seconds_(sum|count)\{/ {
            ty = lab($1, "type")
            if (ty !~ /(ippools|virtualmachinenetworkconfigs|virtualmachines)/) next
            k = "etcd " lab($1, "operation") " " ty
            if ($1 ~ /_sum\{/) s[k] += $2; else c[k] += $2 }
        END { for (k in c) print k, c[k], s[k] }' "$1" | sort
}
# delta_latency BEFORE AFTER: per key, requests and mean latency over the phase
delta_latency() {
    awk 'NR == FNR { n = NF; k = $1; for (i = 2; i <= NF - 2; i++) k = k " " $i; c0[k] = $(NF - 1); s0[k] = $NF; next }
        { k = $1; for (i = 2; i <= NF - 2; i++) k = k " " $i
          dc = $(NF - 1) - c0[k]; ds = $NF - s0[k]
          if (dc > 0) printf "    %-55s %7d requests, mean %.1f ms\n", k, dc, 1000 * ds / dc }' "$1" "$2"
}

# curl_entry AUTH URL CONTENT-TYPE [METHOD]: one transfer of a `curl -K` config, its answer's
# status code on a line of its own (the body, a `data =` line, follows it)
curl_entry() {
    printf '%s\nurl = "%s"\n' "$1" "$2"
    [ -z "${4:-}" ] || printf 'request = "%s"\n' "$4"
    printf 'header = "Content-Type: %s"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\nsilent\n' "$3"
}

# phase P NVMS NICS LIMIT: namespace vmdbc-P, NAD and IPPool scaleP on 10.(77+P).0.0/16
phase() {
    local p=$1 nvms=$2 nics=$3 limit=$4 ns=vmdbc-$1 net=10.$((77 + $1))
    local total=$(($2 * $3)) pool=scale$1 dep='' i j t0 tl
    local t_create='' t_alloc='' t_served='' a=0 b=0 holder='' hip='' t_cpu=''
    res ""
    res "phase $p: $nvms VirtualMachines x $nics NIC(s) = $total NICs, IPPool $ns/$pool $net.0.0/16"
    kubectl create namespace "$ns" >/dev/null || die "namespace $ns"
    kubectl -n "$ns" apply -f - >/dev/null <<EOF || die "NAD and IPPool"
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: $pool
  labels:
    network.harvesterhci.io/clusternetwork: vmnet
spec:
  config: '{"cniVersion":"0.3.1","name":"$pool","type":"bridge","bridge":"vmdhcp-vm0","ipam":{}}'
---
apiVersion: network.harvesterhci.io/v1alpha1
kind: IPPool
metadata:
  name: $pool
spec:
  networkName: $ns/$pool
  ipv4Config:
    serverIP: $net.0.2
    cidr: $net.0.0/16
    pool:
      start: $net.0.10
      end: $net.255.250
    router: $net.0.1
    leaseTime: 3600
EOF
    # the agent Deployment, both pods Ready, one holding the Lease: before the clock starts
    two_ready() {
        dep=$(kubectl -n "$VMD_NS" get deploy -l "network.harvesterhci.io/ippool-name=$pool" -o name 2>/dev/null)
        dep=${dep#*/}
        [ -n "$dep" ] && [ "$(vmd_agent_pods "$pool" | wc -l)" -ge 2 ] && holder=$(vmd_agent_holder "$dep") && [ -n "$holder" ]
    }
    vmd_poll 240 two_ready || die "phase $p: the agent pods of $ns/$pool are not Ready (Deployment ${dep:-none})"
    hip=$(vmd_pod_ip "$holder")
    res "  agent pods Ready: active $holder ($hip)"

    # the creates, as one curl config (per transfer: `next` resets the options)
    local auth ifs nets nic net1 body
    auth=$(vmd_curl_auth)
    for i in $(seq 1 "$nvms"); do
        [ "$i" -gt 1 ] && echo next
        curl_entry "$auth" "$VMD_API/apis/kubevirt.io/v1/namespaces/$ns/virtualmachines" application/json
        ifs='' nets=''
        for ((j = 0; j < nics; j++)); do
            printf -v nic '{\\"name\\":\\"nic-%d\\",\\"bridge\\":{},\\"macAddress\\":\\"52:54:%02x:%02x:%02x:%02x\\"}' \
                "$j" "$p" $((i >> 8 & 255)) $((i & 255)) "$j"
            printf -v net1 '{\\"name\\":\\"nic-%d\\",\\"multus\\":{\\"networkName\\":\\"%s/%s\\"}}' "$j" "$ns" "$pool"
            ifs+=${ifs:+,}$nic nets+=${nets:+,}$net1
        done
        printf -v body '{\\"apiVersion\\":\\"kubevirt.io/v1\\",\\"kind\\":\\"VirtualMachine\\",\\"metadata\\":{\\"name\\":\\"vm-%d\\"},\\"spec\\":{\\"running\\":false,\\"template\\":{\\"spec\\":{\\"domain\\":{\\"devices\\":{\\"interfaces\\":[%s]}},\\"networks\\":[%s]}}}}' \
            "$i" "$ifs" "$nets"
        echo "data = \"$body\""
    done >"$OUT/create-$p.curl"

    vmd_metrics "$LIP" >"$OUT/ctrl-before-$p.txt"
    vmd_api GET /metrics >"$OUT/api-before-$p.txt" 2>/dev/null
    : >"$OUT/timeline-$p.txt"
    cpu_snap >"$OUT/cpu-before-$p.txt"
    t0=$(now)
    curl --parallel --parallel-max "$PARALLEL" -K "$OUT/create-$p.curl" >"$OUT/codes-$p.txt" 2>"$OUT/curl-$p.log" &
    CURL_PID=$!
    while :; do
        tl=$(since "$t0")
        if [ -z "$t_create" ] && ! kill -0 "$CURL_PID" 2>/dev/null; then
            wait "$CURL_PID"; CURL_PID=; t_create=$tl
        fi
        if [ -z "$t_alloc" ]; then
            vmd_metrics "$LIP" >"$OUT/ctrl-now.txt"
            if [ "$(metric_sum "$OUT/ctrl-now.txt" vmdhcp_controller_leader)" != 1 ]; then
                # the leader changed (or does not answer): follow the Lease
                LEADER=$(vmd_leader_pod) && LIP=$(vmd_pod_ip "$LEADER") && echo "$tl leader now $LEADER ($LIP)" >>"$OUT/timeline-$p.txt"
            fi
            a=$(awk -v n="network=\"$ns/$pool\"" 'index($1, "vmdhcpcontroller_vmnetcfg_status{") == 1 &&
                index($1, n) && index($1, "state=\"Allocated\"") && $2 == 1 { c++ } END { print c + 0 }' "$OUT/ctrl-now.txt")
            [ "$a" -ge "$total" ] && t_alloc=$tl
        fi
        if [ -z "$t_served" ]; then
            vmd_metrics "$hip" >"$OUT/agent-now.txt"
            b=$(metric_sum "$OUT/agent-now.txt" vmdhcp_agent_bindings)
            [ "$b" -ge "$total" ] && t_served=$tl
        fi
        echo "$tl allocated=$a agent_bindings=$b" \
            "depth_vm=$(metric_sum "$OUT/ctrl-now.txt" vmdhcp_workqueue_depth 'name="vm"')" \
            "depth_vmnetcfg=$(metric_sum "$OUT/ctrl-now.txt" vmdhcp_workqueue_depth 'name="vmnetcfg"')" \
            "depth_ippool=$(metric_sum "$OUT/ctrl-now.txt" vmdhcp_workqueue_depth 'name="ippool"')" \
            "writes=$(metric_sum "$OUT/ctrl-now.txt" vmdhcp_controller_api_writes_total)" >>"$OUT/timeline-$p.txt"
        [ -n "$t_create" ] && [ -n "$t_alloc" ] && [ -n "$t_served" ] && break
        awk -v t="$tl" -v l="$limit" 'BEGIN { exit !(t > l) }' && break
        sleep 0.4
    done
    cpu_snap >"$OUT/cpu-after-$p.txt"
    t_cpu=$(since "$t0")
    created=$(grep -c '^201$' "$OUT/codes-$p.txt")
    res "  creates: $created of $nvms answered 201 in ${t_create:-(not done)} s ($PARALLEL in flight)"
    # the API's word: one list, NICs Allocated with distinct addresses
    vmd_api GET "/apis/network.harvesterhci.io/v1alpha1/namespaces/$ns/virtualmachinenetworkconfigs" >"$OUT/list-$p.json"
    t_list=$(since "$t0")
    listed=$(jq '[.items[].status.networkConfigs[]? | select(.state == "Allocated") | .allocatedIPAddress] | unique | length' "$OUT/list-$p.json")
    res "  all $total NICs Allocated (leader's cache of the VMNetCfg statuses): ${t_alloc:-NOT within $limit s (last $a)} s"
    res "  confirmed by a list of the VMNetCfgs at $t_list s: $listed NICs Allocated, distinct addresses"
    res "  all $total bindings served by the active agent (vmdhcp_agent_bindings): ${t_served:-NOT within $limit s (last $b)} s"
    [ "$created" = "$nvms" ] && [ "$listed" = "$total" ] && [ -n "$t_served" ] || FAILED=1

    # samples: real DHCP exchanges with the MACs of random VMs
    jq -r '.items[].status.networkConfigs[]? | select(.state == "Allocated") | "\(.macAddress) \(.allocatedIPAddress)"' \
        "$OUT/list-$p.json" | shuf -n "$SAMPLES" >"$OUT/samples-$p.txt"
    local ok=0 n=0 mac ip got ms msl=''
    while read -r mac ip; do
        n=$((n + 1))
        ip -n $VMNS link set eth0 down
        ip -n $VMNS link set eth0 address "$mac"
        ip -n $VMNS link set eth0 up
        t=$(now)
        got=$(ip netns exec $VMNS "$CLIENT" eth0 10 2>>"$OUT/client-$p.log")
        ms=$(awk -v a="$t" -v b="$(now)" 'BEGIN { printf "%.0f", (b - a) * 1000 }')
        msl+=" $ms"
        if [ "$(awk '{ print $2, $3 }' <<<"$got")" = "${ip%%/*} $net.0.2" ]; then ok=$((ok + 1))
        else echo "    sample $mac: expected ${ip%%/*} from $net.0.2, got '${got:-no answer}'" | tee -a "$OUT/results.txt"; fi
    done <"$OUT/samples-$p.txt"
    res "  DHCP exchanges from a VM namespace on vmdhcp-vm0: $ok of $n ACKed with the VMNetCfg's address by $net.0.2 (ms each:$msl)"
    [ "$ok" = "$n" ] && [ "$n" -gt 0 ] || FAILED=1

    # where the time went
    LEADER=$(vmd_leader_pod) && LIP=$(vmd_pod_ip "$LEADER")
    vmd_metrics "$LIP" >"$OUT/ctrl-after-$p.txt"
    local st0 st1
    st0=$(metric_sum "$OUT/ctrl-before-$p.txt" process_start_time_seconds)
    st1=$(metric_sum "$OUT/ctrl-after-$p.txt" process_start_time_seconds)
    [ "$st0" = "$st1" ] || res "  NOTE: the leader process changed during the phase (now $LEADER): counter deltas below are not the phase's"
    pod_restarts "$p"
    vmd_api GET /metrics >"$OUT/api-after-$p.txt" 2>/dev/null
    local w0 w1
    w0=$(metric_sum "$OUT/ctrl-before-$p.txt" vmdhcp_controller_api_writes_total)
    w1=$(metric_sum "$OUT/ctrl-after-$p.txt" vmdhcp_controller_api_writes_total)
    res "  controller writes: $((w1 - w0)) ($(awk -v w=$((w1 - w0)) -v n="$total" 'BEGIN { printf "%.2f", w / n }') per NIC)"
    for k in vm vmnetcfg ippool; do
        local r0 r1 q0 q1
        r0=$(metric_sum "$OUT/ctrl-before-$p.txt" vmdhcp_reconcile_total "controller=\"$k\"")
        r1=$(metric_sum "$OUT/ctrl-after-$p.txt" vmdhcp_reconcile_total "controller=\"$k\"")
        q0=$(metric_sum "$OUT/ctrl-before-$p.txt" vmdhcp_workqueue_retries_total "name=\"$k\"")
        q1=$(metric_sum "$OUT/ctrl-after-$p.txt" vmdhcp_workqueue_retries_total "name=\"$k\"")
        res "  reconciles $k: $((r1 - r0)) (rate-limited requeues $((q1 - q0)))"
    done
    req_latency "$OUT/api-before-$p.txt" >"$OUT/lat-before-$p.txt"
    req_latency "$OUT/api-after-$p.txt" >"$OUT/lat-after-$p.txt"
    cpu_delta "$OUT/cpu-before-$p.txt" "$OUT/cpu-after-$p.txt" >"$OUT/cpu-$p.txt"
    res "  CPU seconds over the first $t_cpu s ($(nproc) CPUs), by command: $(awk '$1 != "=machine" && NR <= 12 { printf "%s%s %s", s, $1, $2; s = ", " }' "$OUT/cpu-$p.txt"); whole machine busy $(awk '$1 == "=machine" { print $2 }' "$OUT/cpu-$p.txt")"
    res "  API server and etcd over the phase (apiserver_request_duration_seconds, etcd_request_duration_seconds):"
    delta_latency "$OUT/lat-before-$p.txt" "$OUT/lat-after-$p.txt" | tee -a "$OUT/results.txt"
    kubectl -n "$ns" get ippool "$pool" -o json >"$OUT/ippool-$p.json"
    res "  IPPool status: $(jq -c .status "$OUT/ippool-$p.json" | wc -c) bytes (status.ipv4.allocated: $(jq '.status.ipv4.allocated | length' "$OUT/ippool-$p.json") entries); object $(jq -c . "$OUT/ippool-$p.json" | wc -c) bytes"
    res "  controller RSS: $(metric_sum "$OUT/ctrl-after-$p.txt" process_resident_memory_bytes | awk '{ printf "%.1f MiB", $1 / 1048576 }'), agent RSS: $(vmd_metrics "$hip" | awk '$1 == "process_resident_memory_bytes" { printf "%.1f MiB", $2 / 1048576 }')"
    res "  timeline: $OUT/timeline-$p.txt"
}

# cpu_snap: "pid comm ticks" of every process, and "0 =machine busy-ticks" (/proc/stat)
cpu_snap() {
    cat /proc/[0-9]*/stat 2>/dev/null | awk '{
        i = match($0, /\) [A-Za-z] /); if (!i) next
        pid = substr($0, 1, index($0, " ") - 1)
        comm = substr($0, index($0, "(") + 1, i - index($0, "(") - 1); gsub(/ /, "_", comm)
        n = split(substr($0, i + 2), f, " ")
        print pid, comm, f[12] + f[13] }'
    awk '$1 == "cpu" { print 0, "=machine", $2 + $3 + $4 + $7 + $8 }' /proc/stat
}

# cpu_delta BEFORE AFTER: CPU seconds by command over the interval (processes that started
# in it count whole; ones that ended in it are missed, so the sum falls short of the machine's)
cpu_delta() {
    awk -v hz="$(getconf CLK_TCK)" 'NR == FNR { b[$1] = $3; next }
        { d = $3 - b[$1]; if (d > 0) { if ($2 ~ /^kworker/) $2 = "kworker"; c[$2] += d } }
        END { for (k in c) printf "%s %.2f\n", k, c[k] / hz }' "$1" "$2" | sort -k2,2 -rn
}

# pod_restarts P: the release's restarted containers (why they ended), their previous logs kept
pod_restarts() {
    local pod n line
    kubectl -n "$VMD_NS" get pods -o json | jq -r '.items[] | .metadata.name as $n | .status.containerStatuses[]? |
        select(.restartCount > 0) | "\($n) \(.restartCount) \(.lastState.terminated.reason // "?") exit \(.lastState.terminated.exitCode // "?")"' |
        while read -r pod n line; do
            res "  restarted $n time(s): $pod (last end: $line)"
            kubectl -n "$VMD_NS" logs --previous "$pod" >"$OUT/log-$pod-previous-$1.txt" 2>&1
            grep -E 'error|warn|lost|exit' "$OUT/log-$pod-previous-$1.txt" | grep -v DHCP | tail -n 5 | sed 's/^/      /' | tee -a "$OUT/results.txt"
        done
}

# floor NVMS: what the API server alone takes for the writes 1 000 one-NIC VMs need, with no
# vm-dhcp process or webhook in the way (the controllers scaled to 0, the webhook
# configurations deleted: so this phase runs last). Three steps, each PARALLEL in flight as
# the creates of the other phases: the VM POSTs (the user's), the VMNetCfg POSTs and the
# VMNetCfg status writes (merge patches) the upstream API asks of any controller, one each
# per VM. No ownerReferences (no garbage collector work), no finalizer and no IPPool status
# writes: a lower bound for the whole path, not a model of it.
floor() {
    local nvms=$1 ns=vmdbc-f i t0 t1 t2 t3 auth mac dep pod
    res ""
    res "phase f (floor): the API writes of $nvms one-NIC VMs with no vm-dhcp process or webhook"
    for pod in $(kubectl -n "$VMD_NS" get pods -o name | grep controller); do # kept: they stop now
        kubectl -n "$VMD_NS" logs "$pod" >"$OUT/log-${pod#pod/}.txt" 2>&1
    done
    for dep in $(kubectl -n "$VMD_NS" get deploy -o name | grep controller); do
        kubectl -n "$VMD_NS" scale "$dep" --replicas=0 >/dev/null || die "scale $dep"
    done
    no_controller() { ! kubectl -n "$VMD_NS" get pods -o name | grep -q controller; }
    vmd_poll 120 no_controller || die "the controller pods did not stop"
    kubectl get validatingwebhookconfigurations,mutatingwebhookconfigurations -o name | grep vm-dhcp |
        xargs -r kubectl delete >/dev/null || die "deleting the webhook configurations"
    kubectl create namespace $ns >/dev/null || die "namespace $ns"
    auth=$(vmd_curl_auth)
    for i in $(seq 1 "$nvms"); do
        [ "$i" -gt 1 ] && echo next
        curl_entry "$auth" "$VMD_API/apis/kubevirt.io/v1/namespaces/$ns/virtualmachines" application/json
        printf -v mac '52:54:0f:%02x:%02x:00' $((i >> 8 & 255)) $((i & 255))
        printf 'data = "{\\"apiVersion\\":\\"kubevirt.io/v1\\",\\"kind\\":\\"VirtualMachine\\",\\"metadata\\":{\\"name\\":\\"vm-%d\\"},\\"spec\\":{\\"running\\":false,\\"template\\":{\\"spec\\":{\\"domain\\":{\\"devices\\":{\\"interfaces\\":[{\\"name\\":\\"nic-0\\",\\"bridge\\":{},\\"macAddress\\":\\"%s\\"}]}},\\"networks\\":[{\\"name\\":\\"nic-0\\",\\"multus\\":{\\"networkName\\":\\"%s/floor\\"}}]}}}}"\n' "$i" "$mac" $ns
    done >"$OUT/create-f-vm.curl"
    for i in $(seq 1 "$nvms"); do
        [ "$i" -gt 1 ] && echo next
        curl_entry "$auth" "$VMD_API/apis/network.harvesterhci.io/v1alpha1/namespaces/$ns/virtualmachinenetworkconfigs" application/json
        printf -v mac '52:54:0f:%02x:%02x:00' $((i >> 8 & 255)) $((i & 255))
        printf 'data = "{\\"apiVersion\\":\\"network.harvesterhci.io/v1alpha1\\",\\"kind\\":\\"VirtualMachineNetworkConfig\\",\\"metadata\\":{\\"name\\":\\"vm-%d\\",\\"labels\\":{\\"harvesterhci.io/vmName\\":\\"vm-%d\\"}},\\"spec\\":{\\"vmName\\":\\"vm-%d\\",\\"networkConfigs\\":[{\\"macAddress\\":\\"%s\\",\\"networkName\\":\\"%s/floor\\"}]}}"\n' "$i" "$i" "$i" "$mac" $ns
    done >"$OUT/create-f-cfg.curl"
    for i in $(seq 1 "$nvms"); do
        [ "$i" -gt 1 ] && echo next
        curl_entry "$auth" "$VMD_API/apis/network.harvesterhci.io/v1alpha1/namespaces/$ns/virtualmachinenetworkconfigs/vm-$i/status" \
            application/merge-patch+json PATCH
        printf -v mac '52:54:0f:%02x:%02x:00' $((i >> 8 & 255)) $((i & 255))
        printf 'data = "{\\"status\\":{\\"networkConfigs\\":[{\\"macAddress\\":\\"%s\\",\\"networkName\\":\\"%s/floor\\",\\"allocatedIPAddress\\":\\"10.90.%d.%d\\",\\"state\\":\\"Allocated\\"}],\\"conditions\\":[{\\"type\\":\\"Allocated\\",\\"status\\":\\"True\\",\\"reason\\":\\"Allocated\\",\\"lastUpdateTime\\":\\"2026-01-01T00:00:00Z\\",\\"lastTransitionTime\\":\\"2026-01-01T00:00:00Z\\"}]}}"\n' "$mac" $ns $((i >> 8)) $((i & 255))
    done >"$OUT/create-f-status.curl"
    cpu_snap >"$OUT/cpu-before-f.txt"
    t0=$(now)
    curl --parallel --parallel-max "$PARALLEL" -K "$OUT/create-f-vm.curl" >"$OUT/codes-f-vm.txt" 2>>"$OUT/curl-f.log"
    t1=$(since "$t0")
    curl --parallel --parallel-max "$PARALLEL" -K "$OUT/create-f-cfg.curl" >"$OUT/codes-f-cfg.txt" 2>>"$OUT/curl-f.log"
    t2=$(since "$t0")
    curl --parallel --parallel-max "$PARALLEL" -K "$OUT/create-f-status.curl" >"$OUT/codes-f-status.txt" 2>>"$OUT/curl-f.log"
    t3=$(since "$t0")
    cpu_snap >"$OUT/cpu-after-f.txt"
    res "  VM POSTs: $(grep -c '^201$' "$OUT/codes-f-vm.txt") of $nvms answered 201 at $t1 s"
    res "  VMNetCfg POSTs: $(grep -c '^201$' "$OUT/codes-f-cfg.txt") of $nvms answered 201 at $t2 s"
    res "  VMNetCfg status patches: $(grep -c '^200$' "$OUT/codes-f-status.txt") of $nvms answered 200 at $t3 s"
    cpu_delta "$OUT/cpu-before-f.txt" "$OUT/cpu-after-f.txt" >"$OUT/cpu-f.txt"
    res "  CPU seconds over the $t3 s ($(nproc) CPUs), by command: $(awk '$1 != "=machine" && NR <= 8 { printf "%s%s %s", s, $1, $2; s = ", " }' "$OUT/cpu-f.txt"); whole machine busy $(awk '$1 == "=machine" { print $2 }' "$OUT/cpu-f.txt")"
    [ "$(grep -c '^20[01]$' "$OUT"/codes-f-*.txt | awk -F: '{ s += $2 } END { print s }')" = $((3 * nvms)) ] || FAILED=1
}

FAILED=0
for p in $PHASES; do
    case $p in
    1) phase 1 "$N1" 1 "$LIMIT1" ;;
    2) phase 2 "$N2" "$NICS2" "$LIMIT2" ;;
    f) floor "$N1" ;;
    *) die "unknown phase $p" ;;
    esac
done
res ""
res "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $FAILED
