#!/bin/bash
# tests/cluster/test-cluster-e2e.sh - the product as an admin runs it, on a real single-node
# Kubernetes (tests/cluster/k8s-up.sh: Debian's kubernetes 1.20 source package, etcd,
# containerd, runc, CNI plugins), from the images `make image` builds:
#   helm install the chart -> the controller pods start, one becomes the leader (Lease);
#   NAD + IPPool + VirtualMachineNetworkConfig -> the controller places the agent Deployment
#   (2 replicas), the scheduler puts both pods on the node; the agent pods (uid 65532, file
#   capabilities, read-only root) sync the pool through their service account and elect the
#   active one through the Lease named like the Deployment: it alone holds the serverIP on its
#   VM-facing eth1 and answers, the other is a Ready standby; a real dhclient in the "VM" gets
#   exactly the allocated address, router and DNS; an IPPool DNS change reaches the next renewal;
#   high availability, as the pods the controller writes run it:
#     - SIGKILL of the active agent's process, twice: a renewing client is ACKed (the time printed) by
#       the one Lease holder, which alone has the serverIP; the kubelet restarts the killed
#       container (its pod, its name: it may take the Lease back at once); the standby takes
#       over on the Lease's expiry at least once (the kubelet's back-off delays a second
#       restart), and the other pod is the standby after each kill;
#     - kubectl delete of the active pod (SIGTERM): it releases the Lease, the other takes over
#       at once, the Deployment's replacement pod becomes the standby;
#     - the wire, from the VM's first DISCOVER on (every DHCP reply on the host): no request
#       ever answered from two MACs;
#   a foreign DHCP server (dnsmasq in a namespace on the VM bridge): the active agent pod reports it
#   within one probe interval (metric with its MAC and IP, IPPool condition ForeignDHCPServer,
#   Warning Event), the standby reports no agent of the pool, the agent goes on answering (Warn);
#   a VirtualMachine (the stand-in CRD) -> its VMNetCfg, owned by it, gets an address; its NIC
#   annotated as statically configured (network.harvesterhci.io/dhcp-static-nics) leaves the
#   VMNetCfg and its address is freed, the annotation removed binds it again; deleting the
#   VM, the cluster's garbage collector deletes the VMNetCfg and the controller frees the address;
#   the admission webhook through the chart's Service (tests/cluster/test-cluster-admission.sh:
#   the table of upstream's webhook cases and ours, a replica lost during applies, a short
#   certificate validity rotated under load);
#   helm uninstall -> no agent Deployment left, no object stuck on a finalizer.
# The VM is a network namespace with a veth on the bridge vmdhcp-vm0, which the cluster's
# containerd attaches to every pod as eth1 (the stand-in for Multus; see k8s-up.sh).
# The failover times (ms) are printed ("failover (...): N ms").
#
# Starts the cluster when it is not up and stops it at the end (KEEP_CLUSTER=1 keeps it).
# Needs root, the images in build/images (make image), build/tests/dhcp-ha-probe (make tests)
# and helm (scripts/install-deps).
. "$(dirname "$0")/../e2e/lib.sh" # check, stop_pid, dhclient_conf, run_dhclient
VERSION=$(cat "$ROOT/VERSION" 2>/dev/null || echo 0.1.0)
IMG=${IMAGES_DIR:-$ROOT/build/images}
IMAGES=("$IMG/vm-dhcp-controller-$VERSION.tar" "$IMG/vm-dhcp-agent-$VERSION.tar" "$IMG/pause-$VERSION.tar")
PROBE=${PROBE:-$ROOT/build/tests/dhcp-ha-probe}
HELM=${HELM:-$(command -v helm || echo "$ROOT/build/tools/node_modules/.bin/helm")}
NS=vm-dhcp-system
REL=vm-dhcp
NODE=vmdhcp-node
VNET=10.77.0
VNET6=fd00:77:: # the pool's IPv6 /64 (dual stack)
MAC=52:54:00:c1:00:01
STATE=/var/lib/vm-dhcp-k8s
export KUBECONFIG=$STATE/admin.kubeconfig
started_cluster=0

[ "$(id -u)" = 0 ] || skip "needs root (a Kubernetes node, network namespaces)"
command -v dhclient >/dev/null || skip "dhclient is not installed (scripts/install-deps installs it)"
[ -x "$HELM" ] || { echo "FAIL: helm not found (scripts/install-deps installs it)"; exit 1; }
for i in "${IMAGES[@]}"; do [ -f "$i" ] || { echo "FAIL: $i missing (make image)"; exit 1; }; done
[ -x "$PROBE" ] || { echo "FAIL: $PROBE not built (make tests)"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq not installed (tests/cluster/k8s-up.sh installs it)"; exit 1; }
TMP=$(mktemp -d /tmp/vmdhcp-cluster.XXXXXX)

cluster_cleanup() {
    trap '' INT TERM
    local p
    for p in "${PIDS[@]}"; do stop_pid "$p"; done
    ip netns del "$TAG-vm1" 2>/dev/null
    ip netns del "$TAG-rogue" 2>/dev/null
    rm -rf "/etc/netns/$TAG-vm1"
    if [ $CHECKS_FAIL -gt 0 ]; then
        echo "--- evidence"
        kubectl get all,leases,ippools,vmnetcfgs -A -o wide 2>&1 | tail -n 40
        kubectl get events -A --sort-by=.lastTimestamp 2>&1 | tail -n 30
        for p in $(kubectl -n $NS get pods -o name 2>/dev/null); do
            echo "--- logs $p"; kubectl -n $NS logs "$p" --tail=30 2>&1
        done
        echo "--- agent Lease"; kubectl -n $NS get lease default-vmnet-agent -o yaml 2>&1 | sed -n '/^spec:/,$p'
        echo "--- serverIP"; for n in $(ip netns list | awk '$1 ~ /^cni-/ { print $1 }'); do
            echo "$n: $(ip -n "$n" -4 -o addr show dev eth1 2>/dev/null | awk '{ print $4 }' | tr '\n' ' ')"; done
        echo "--- deleted pod's log"; tail -n 20 "$TMP/deleted-pod.log" 2>/dev/null
        echo "--- wire (duplicates / last replies)"; cat "$TMP/wire-dups.txt" 2>/dev/null
        tail -n 10 "$TMP/wire.txt" 2>/dev/null
        echo "--- dhclient"; tail -n 20 "$TMP/dhclient-vm1.log" 2>/dev/null
        echo "--- dhclient -6"; tail -n 20 "$TMP/dhclient6-vm1.log" 2>/dev/null
        echo "--- foreign dnsmasq"; tail -n 20 "$TMP/rogue.log" 2>/dev/null
    fi
    if [ $started_cluster = 1 ] && [ "${KEEP_CLUSTER:-0}" != 1 ]; then
        "$ROOT/tests/cluster/k8s-down.sh"
    fi
    [ "${KEEP_LOGS:-0}" = 1 ] || rm -rf "$TMP"
}
trap cluster_cleanup EXIT
trap 'exit 130' INT TERM

# --- the cluster ---------------------------------------------------------------------------------
if [ ! -e /run/vm-dhcp-k8s/up ]; then
    started_cluster=1
    t0=$(date +%s)
    # k8s-up.sh's messages shown and kept: its last one is the reason (which step, why)
    "$ROOT/tests/cluster/k8s-up.sh" "${IMAGES[@]}" 2>&1 >/dev/null | tee "$TMP/k8s-up.err"
    [ "${PIPESTATUS[0]}" = 0 ] ||
        { echo "FAIL: the cluster did not come up: $(grep '^k8s-' "$TMP/k8s-up.err" | tail -n 1) (logs: $STATE/log)"; exit 1; }
    echo "cluster up in $(( $(date +%s) - t0 )) s"
else
    for i in "${IMAGES[@]}"; do
        ctr --address /run/vm-dhcp-k8s/containerd.sock -n k8s.io images import --all-platforms "$i" >/dev/null
    done
fi
k() { kubectl "$@" 2>>"$TMP/kubectl.err"; }
# wait_for SECONDS CMD...: poll CMD once a second until it succeeds or SECONDS have passed (the
# netns one counts iterations, and one kubectl call takes a good part of a second here)
wait_for() {
    local end=$((SECONDS + $1)); shift
    while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 1; done
    "$@"
}
T0=$SECONDS
T0_UTC=$(date -u +%Y-%m-%dT%H:%M:%SZ) # events before it are a kept cluster's earlier runs
mark() { echo "-- $1 at +$((SECONDS - T0)) s"; }
node_ready() { [ "$(k get node $NODE -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
check "node $NODE Ready" node_ready

# --- harvester/vm-dhcp-controller's objects with our CRDs (before our controller runs: it would
# write the statuses under test) -----------------------------------------------------------------
upstream_objects() {
    "$ROOT/tests/cluster/test-upstream-objects.sh" "$KUBECONFIG" >"$TMP/upstream-objects.log" 2>&1
    local rc=$?
    grep -E '^(FAIL|[0-9]+ passed)' "$TMP/upstream-objects.log" | sed 's/^/    /'
    return $rc
}
check "upstream objects read back unchanged (tests/cluster/test-upstream-objects.sh)" upstream_objects

# --- helm install ----------------------------------------------------------------------------------
helm_() { "$HELM" "$@" >>"$TMP/helm.log" 2>&1 || { tail -n 5 "$TMP/helm.log"; return 1; }; }
check "helm install" helm_ install $REL "$ROOT/charts/vm-dhcp" -n $NS --create-namespace --wait --timeout 5m
ready_controllers() {
    [ "$(k -n $NS get deploy $REL-controller -o jsonpath='{.status.readyReplicas}')" = 2 ]
}
check "both controller replicas Ready" wait_for 120 ready_controllers
# the leader Lease: the Go project's, kube-system/vm-dhcp-controllers (controller.leaderElection)
leader() { k -n kube-system get lease vm-dhcp-controllers -o jsonpath='{.spec.holderIdentity}'; }
# the holder identity is HOSTNAME_PID, and a pod's host name is its name
has_leader() { local l; l=$(leader) && [ -n "$l" ] && k -n $NS get pod "${l%_*}" >/dev/null; }
check "one controller pod holds the Lease" wait_for 60 has_leader
echo "leader: $(leader)"
mark "chart installed, leader elected"
check "controller pods run as uid 65532" bash -c \
    "[ \"\$(kubectl -n $NS get pods -l app.kubernetes.io/component=controller -o jsonpath='{.items[*].spec.securityContext.runAsUser}')\" = '65532 65532' ]"

# --- the network, the pool, the VM -----------------------------------------------------------------
k label node $NODE network.harvesterhci.io/vmnet=true --overwrite >/dev/null
cat >"$TMP/objects.yaml" <<EOF
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: vmnet
  namespace: default
  labels:
    network.harvesterhci.io/clusternetwork: vmnet
spec:
  config: '{"cniVersion":"0.3.1","name":"vmnet","type":"bridge","bridge":"vmdhcp-vm0","ipam":{}}'
---
apiVersion: network.harvesterhci.io/v1alpha1
kind: IPPool
metadata:
  name: vmnet
  namespace: default
spec:
  networkName: default/vmnet
  ipv4Config:
    serverIP: $VNET.2
    cidr: $VNET.0/24
    pool:
      start: $VNET.100
      end: $VNET.200
    router: $VNET.1
    dns:
    - $VNET.53
    domainName: vm.test
    leaseTime: 60
  foreignServers:
    policy: Warn
    probeInterval: 30
  ipv6Config:
    serverIP: ${VNET6}2
    cidr: ${VNET6}/64
    pool:
      start: ${VNET6}100
      end: ${VNET6}1ff
    dns:
    - ${VNET6}53
    domainSearch:
    - vm.test
    preferredLifetime: 20
    validLifetime: 40
EOF
# A VMNetCfg written by hand needs its pool known to admission first (upstream's rule): in one
# `kubectl apply` with its IPPool it may reach the webhook before the controller has seen the
# pool (docs/admission.md).
cat >"$TMP/vm1-cfg.yaml" <<EOF
apiVersion: network.harvesterhci.io/v1alpha1
kind: VirtualMachineNetworkConfig
metadata:
  name: vm1
  namespace: default
spec:
  vmName: vm1
  networkConfigs:
  - networkName: default/vmnet
    macAddress: "$MAC"
EOF
check "kubectl apply NAD, IPPool" k apply -f "$TMP/objects.yaml"
pool_labelled() { [ "$(k get net-attach-def vmnet -o jsonpath='{.metadata.labels.network\.harvesterhci\.io/ippool-name}')" = vmnet ]; }
check "the controller labelled the NAD with its IPPool" wait_for 60 pool_labelled
check "kubectl apply VMNetCfg vm1" k apply -f "$TMP/vm1-cfg.yaml"
alloc_ip() {
    k get vmnetcfg vm1 -o jsonpath='{.status.networkConfigs[0].allocatedIPAddress}'
}
has_alloc() { [ -n "$(alloc_ip)" ]; }
check "VMNetCfg vm1 allocated" wait_for 60 has_alloc
IP=$(alloc_ip); IP=${IP%%/*}
alloc_ip6() { k get vmnetcfg vm1 -o jsonpath='{.status.networkConfigs[0].allocatedIPv6Address}'; }
IP6=$(alloc_ip6)
echo "allocated: $IP and $IP6"
check "VMNetCfg vm1 allocated the pool's lowest IPv6 address too (${VNET6}100)" test "$IP6" = "${VNET6}100"
AGENT_DEP=default-vmnet-agent
check "agent Deployment $AGENT_DEP placed" wait_for 60 k -n $NS get deploy $AGENT_DEP
check "agent Deployment asks for 2 replicas (chart default agent.replicas)" \
    test "$(k -n $NS get deploy $AGENT_DEP -o jsonpath='{.spec.replicas}')" = 2

# --- the agent pods: two replicas, one active (the Lease holder), one standby ------------------------
# agent_pods: the pool's Running agent pods that are not being deleted, one name a line
agent_pods() {
    k -n $NS get pods -l network.harvesterhci.io/ippool-name=vmnet -o json |
        jq -r '.items[] | select(.status.phase == "Running" and .metadata.deletionTimestamp == null) | .metadata.name'
}
pod_ready() { [ "$(k -n $NS get pod "$1" -o jsonpath='{.status.containerStatuses[0].ready}')" = true ]; }
# two_ready [NOT]: exactly two agent pods, both Ready (none named NOT)
two_ready() {
    local ps p; ps=$(agent_pods) || return 1
    [ "$(wc -w <<<"$ps")" = 2 ] || return 1
    for p in $ps; do [ "$p" != "${1:-}" ] && pod_ready "$p" || return 1; done
}
# the agents' Lease: named like the Deployment, in the release namespace; the holder is a pod name
holder() { k -n $NS get lease $AGENT_DEP -o jsonpath='{.spec.holderIdentity}'; }
holder_is() { [ "$(holder)" = "$1" ]; }
holder_is_agent() { local h; h=$(holder) && [ -n "$h" ] && agent_pods | grep -qx -- "$h"; }
other_pod() { agent_pods | grep -vx -- "$1" | head -n 1; }
pod_ip() { k -n $NS get pod "$1" -o jsonpath='{.status.podIP}'; }
# the pod's network namespace on the host: the CNI one whose eth0 holds the pod IP
pod_netns() {
    local ip n; ip=$(pod_ip "$1") && [ -n "$ip" ] || return 1
    for n in $(ip netns list | awk '$1 ~ /^cni-/ { print $1 }'); do
        ip -n "$n" -4 -o addr show dev eth0 2>/dev/null | grep -q " $ip/" && { echo "$n"; return 0; }
    done
    return 1
}
pod_mac() { ip -n "$(pod_netns "$1")" link show dev eth1 | awk '$1 == "link/ether" { print $2 }'; }
# sip_netns: every pod network namespace whose eth1 (the VM network) holds the serverIP
sip_netns() {
    local n
    for n in $(ip netns list | awk '$1 ~ /^cni-/ { print $1 }'); do
        ip -n "$n" -4 -o addr show dev eth1 2>/dev/null | grep -q " $VNET.2/24 " && echo "$n"
    done
}
# sip_only_on POD: the serverIP is on exactly one pod's eth1 on the whole node, POD's
sip_only_on() { local s; s=$(sip_netns); [ -n "$s" ] && [ "$s" = "$(pod_netns "$1")" ]; }
# the same for the IPv6 serverIP (it moves with the Lease too)
sip6_netns() {
    local n
    for n in $(ip netns list | awk '$1 ~ /^cni-/ { print $1 }'); do
        ip -n "$n" -6 -o addr show dev eth1 2>/dev/null | grep -q " ${VNET6}2/64 " && echo "$n"
    done
}
sip6_only_on() { local s; s=$(sip6_netns); [ -n "$s" ] && [ "$s" = "$(pod_netns "$1")" ]; }
http_get() { curl -s -m 3 "http://$(pod_ip "$1"):8080$2"; }
readyz_is() { [ "$(http_get "$1" /readyz)" = "$2" ]; }
# pod_metric POD NAME: the sum of NAME's samples (any labels), 0 when absent
pod_metric() {
    http_get "$1" /metrics | awk -v k="$2" '$1 == k || index($1, k "{") == 1 { s += $2 } END { print s + 0 }'
}
is_standby() { pod_ready "$1" && readyz_is "$1" "ok: standby" && [ "$(pod_metric "$1" vmdhcp_agent_leader)" = 0 ]; }
restart_count() { k -n $NS get pod "$1" -o jsonpath='{.status.containerStatuses[0].restartCount}'; }

check "both agent pods scheduled on $NODE and Ready (the standby too)" wait_for 180 two_ready
check "Lease $NS/$AGENT_DEP held by one of the agent pods" wait_for 30 holder_is_agent
POD=$(holder)    # the active one
SBY=$(other_pod "$POD")
echo "agent pods: active $POD, standby $SBY"
mark "agent pods Ready"
for p in "$POD" "$SBY"; do
    check "agent pod $p is on $NODE" test "$(k -n $NS get pod "$p" -o jsonpath='{.spec.nodeName}')" = $NODE
done
check "active $POD: /readyz says 'ok: active'" wait_for 10 readyz_is "$POD" "ok: active"
check "standby $SBY: /readyz says 'ok: standby'" readyz_is "$SBY" "ok: standby"
check "active $POD: vmdhcp_agent_leader 1" test "$(pod_metric "$POD" vmdhcp_agent_leader)" = 1
check "standby $SBY: vmdhcp_agent_leader 0" test "$(pod_metric "$SBY" vmdhcp_agent_leader)" = 0
check "standby $SBY: table synced (1 binding)" test "$(pod_metric "$SBY" vmdhcp_agent_bindings)" = 1
check "serverIP $VNET.2 on exactly one pod's eth1: the active's" wait_for 10 sip_only_on "$POD"
check "active $POD: gratuitous ARP sent" test "$(pod_metric "$POD" vmdhcp_agent_gratuitous_arp_sent_total)" -ge 1
snap_written() { [ "$(pod_metric "$POD" vmdhcp_agent_snapshot_writes_total)" -ge 1 ]; }
check "active $POD: snapshot written to its emptyDir" wait_for 20 snap_written
check "active $POD: snapshot not stale" test "$(pod_metric "$POD" vmdhcp_agent_snapshot_stale)" = 0

# The agent process as the kubelet started it: uid, capabilities, read-only root. Its host PID is
# its container's task (containerd), checked against the container's cgroup.
agent_host_pid() {
    local cid pid
    cid=$(k -n $NS get pod "$1" -o jsonpath='{.status.containerStatuses[0].containerID}')
    cid=${cid#containerd://}
    [ -n "$cid" ] || return 1
    pid=$(ctr --address /run/vm-dhcp-k8s/containerd.sock -n k8s.io tasks ls 2>/dev/null |
        awk -v c="$cid" '$1 == c && $3 == "RUNNING" { print $2 }')
    [ -n "$pid" ] && grep -q "/$cid\$" "/proc/$pid/cgroup" 2>/dev/null &&
        tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q 'vm-dhcp-agent .*--ippool-ref default/vmnet' &&
        echo "$pid"
}
# check_process POD WHAT: the checks of the agent process of POD
check_process() {
    local pod=$1 what=$2 pid
    pid=$(agent_host_pid "$pod")
    check "$what: agent process found (pid ${pid:-none}, its container's main process)" test -n "$pid"
    check "$what: agent runs as uid 65532" bash -c "grep -Eq '^Uid:\s+65532\s+65532' /proc/$pid/status"
    # CapEff after start-up: NET_ADMIN (bit 12) only; NET_RAW and NET_BIND_SERVICE dropped
    check "$what: agent kept only CAP_NET_ADMIN after opening its sockets" bash -c \
        "grep -Eq '^CapEff:\s+0000000000001000$' /proc/$pid/status"
    # (the image has no shell: read the root mount's options from the host)
    check "$what: agent root file system is read-only" bash -c \
        "awk '\$5 == \"/\" { print \$6 }' /proc/$pid/mountinfo | grep -Eq '(^|,)ro(,|\$)'"
}
check_process "$POD" "active $POD"
check_process "$SBY" "standby $SBY"
APID=$(agent_host_pid "$POD")
check "active agent holds the server IP on eth1" bash -c \
    "nsenter -t $APID -n ip -4 -o addr show dev eth1 | grep -q ' $VNET.2/24 '"
check "active agent holds the IPv6 server IP on eth1" bash -c \
    "nsenter -t $APID -n ip -6 -o addr show dev eth1 | grep -q ' ${VNET6}2/64 '"
check "active agent HTTP endpoint not on eth1" bash -c \
    "! nsenter -t $APID -n curl -s -m 2 -o /dev/null http://$VNET.2:8080/metrics"

# The VM: a namespace with a veth on the VM bridge, running ISC dhclient.
ip netns add "$TAG-vm1"
mkdir -p "/etc/netns/$TAG-vm1"; : >"/etc/netns/$TAG-vm1/resolv.conf"
ip -n "$TAG-vm1" link set lo up
ip link add "vmdhcp-$$" type veth peer name eth0 netns "$TAG-vm1"
ip -n "$TAG-vm1" link set eth0 address $MAC
ip link set "vmdhcp-$$" master vmdhcp-vm0 up
ip -n "$TAG-vm1" link set eth0 up
# The wire, from here to the end: every DHCP reply seen in the host namespace, where the VM
# bridge vmdhcp-vm0 and the pods' eth1 veth ends live.
"$PROBE" capture any "$TMP/wire.txt" 2>>"$TMP/capture.log" &
CAP_PID=$!; PIDS+=("$CAP_PID")
capturing() { grep -q '^# capturing' "$TMP/wire.txt" 2>/dev/null; }
check "capturing every DHCP reply in the host namespace" wait_for 5 capturing
T1=3 T2=6 dhclient_conf # renewals every 3 s, so they need no waiting
run_dhclient vm1
vm_addr() { ip -n "$TAG-vm1" -4 -o addr show dev eth0 | awk '{ print $4 }' | head -n1; }
acks() { grep -c '^DHCPACK of ' "$TMP/dhclient-vm1.log" 2>/dev/null || true; }
more_acks() { [ "$(acks)" -gt "$1" ]; }
check "dhclient bound to exactly $IP/24" wait_for 90 bash -c "[ \"\$(ip -n $TAG-vm1 -4 -o addr show dev eth0 | awk '{ print \$4 }')\" = $IP/24 ]"
mark "VM bound"
# The agent's HTTP endpoint is on the pod IP (eth0): the kubelet reaches it, a VM on eth1 must
# not, even one that routes the pod IP through eth1 (Linux takes any local address on any
# interface; the agent accepts on eth0 only).
PODIP=$(pod_ip "$POD")
check "agent /readyz answers on the pod IP $PODIP" curl -sf -m 5 -o /dev/null "http://$PODIP:8080/readyz"
ip -n "$TAG-vm1" route add "$PODIP/32" dev eth0
check "a VM cannot reach the agent's /metrics through eth1" bash -c \
    "! ip netns exec $TAG-vm1 curl -s -m 3 -o /dev/null http://$PODIP:8080/metrics"
ip -n "$TAG-vm1" route del "$PODIP/32" dev eth0
check "default route via $VNET.1" bash -c "ip -n $TAG-vm1 route show default | grep -q 'via $VNET.1'"
check "resolv.conf nameserver $VNET.53" grep -q "^nameserver $VNET.53\$" "/etc/netns/$TAG-vm1/resolv.conf"
check "ACK came from the agent's server IP" grep -q "DHCPACK of $IP from $VNET.2" "$TMP/dhclient-vm1.log"
# IPv6: ISC dhclient -6 beside the IPv4 one (the pool's lifetimes 20/40 s: it renews every 10 s)
cat >"$TMP/dhclient6.conf" <<EOF
request dhcp6.name-servers, dhcp6.domain-search;
timeout 30;
EOF
for _ in $(seq 100); do ip -n "$TAG-vm1" -6 addr show dev eth0 scope link | grep -q 'inet6 .*scope link *$' && break; sleep 0.1; done
ip netns exec "$TAG-vm1" unshare -m sh -c '
    mount -t tmpfs tmpfs /etc/dhcp/dhclient-exit-hooks.d &&
    mount -t tmpfs tmpfs /etc/dhcp/dhclient-enter-hooks.d &&
    exec dhclient -6 -d -v -cf "$1/dhclient6.conf" -lf "$1/vm1-6.leases" -pf "$1/vm1-6.pid" eth0' \
    sh "$TMP" >>"$TMP/dhclient6-vm1.log" 2>&1 &
PIDS+=($!)
vm_addr6() { ip -n "$TAG-vm1" -6 -o addr show dev eth0 scope global | awk '{ print $4 }' | head -n1; }
check "dhclient -6 bound to exactly $IP6/128" wait_for 90 bash -c "[ \"\$(ip -n $TAG-vm1 -6 -o addr show dev eth0 scope global | awk '{ print \$4 }')\" = $IP6/128 ]"
# (read from dhclient -6's lease: resolv.conf is rewritten by the IPv4 dhclient's renewals too)
check "dhclient -6's lease holds DNS server ${VNET6}53 (DHCPv6 option 23)" wait_for 10 grep -q "option dhcp6.name-servers ${VNET6}53;" "$TMP/vm1-6.leases"
replies6() { grep -c 'RCV: Reply message' "$TMP/dhclient6-vm1.log" 2>/dev/null || true; }
more_replies6() { [ "$(replies6)" -gt "$1" ]; }
pod_said() { k -n $NS logs "$1" | grep -q -- "$2"; }
check "kubectl logs: the active agent says whom it offered $IP" pod_said "$POD" "DHCPOFFER $IP to $MAC"
check "kubectl logs: the active agent says whom it ACKed $IP" pod_said "$POD" "DHCPACK $IP to $MAC"
check "kubectl logs: the active agent says whom it gave $IP6" pod_said "$POD" "DHCPv6 REPLY $IP6 to $MAC"
check "kubectl logs: the standby offered nothing" bash -c "! kubectl -n $NS logs $SBY | grep -Eq 'DHCP(OFFER|ACK) .* to '"
check "standby $SBY: saw the broadcasts, answered none" bash -c \
    "[ \"\$(curl -s -m 3 http://$(pod_ip "$SBY"):8080/metrics | awk '\$1 ~ /^vmdhcp_agent_replies_sent_total/ { s += \$2 } END { print s + 0 }')\" = 0 ]"

# --- DNS change reaches the next renewal -------------------------------------------------------------
check "IPPool DNS changed" k patch ippool vmnet --type merge -p "{\"spec\":{\"ipv4Config\":{\"dns\":[\"$VNET.54\"]}}}"
check "renewal carries the new DNS" wait_for 60 grep -q "^nameserver $VNET.54\$" "/etc/netns/$TAG-vm1/resolv.conf"
check "still bound to $IP after renewals" test "$(vm_addr)" = "$IP/24"

# --- the kubelet's probes were answered all along (before the failovers kill anything) -------------
# (a reply lost to 'Connection: close', as the kubelet sends, restarts the pods; a 503 before the
# first sync is a probe's honest answer, an EOF or a reset is not)
restarts() { k -n $NS get pods -o jsonpath='{range .items[*]}{range .status.containerStatuses[*]}{.restartCount}{"\n"}{end}{end}' | sort -u | tr '\n' ' '; }
check "no container restarted (restart counts: $(restarts))" test "$(restarts)" = "0 "
# probe_errors: "POD MESSAGE" of this run's probes that met an empty reply or a reset
probe_errors() {
    k -n $NS get events -o json | jq -r --arg t0 "$T0_UTC" '.items[] |
        select(.reason == "Unhealthy" and (.lastTimestamp // .eventTime // "") >= $t0) |
        "\(.involvedObject.name) \(.message)"' | grep -E '(EOF|connection reset)'
}
no_probe_errors() { ! probe_errors; }
check "no probe met an empty reply or a reset" no_probe_errors

# --- abuse, as the pods run: API answer cap from the pod's cgroup; held connections ------------------
# The cap on an API answer held in memory is a quarter of the container's memory limit, read by
# the non-root process from its own cgroup (kube/limits.c): the pod's limit, not a default.
mem_bytes() { case $1 in *Gi) echo $((${1%Gi} << 30)) ;; *Mi) echo $((${1%Mi} << 20)) ;; *Ki) echo $((${1%Ki} << 10)) ;; *) echo "$1" ;; esac; }
cap_is_quarter() { # POD PORT
    local lim cap
    lim=$(k -n $NS get pod "$1" -o jsonpath='{.spec.containers[0].resources.limits.memory}')
    cap=$(curl -s -m 3 "http://$(pod_ip "$1"):$2/metrics" | awk '$1 == "vmdhcp_api_answer_limit_bytes" { print $2 }')
    echo "    $1: memory limit $lim, API answer cap ${cap:-?} bytes"
    [ -n "$lim" ] && [ -n "$cap" ] && [ "$cap" = "$(($(mem_bytes "$lim") / 4))" ]
}
check "agent $POD: API answer cap = a quarter of its memory limit (from its cgroup)" cap_is_quarter "$POD" 8080
CTRL_POD=$(k -n $NS get pods -l app.kubernetes.io/component=controller -o jsonpath='{.items[0].metadata.name}')
check "controller $CTRL_POD: API answer cap = a quarter of its memory limit" cap_is_quarter "$CTRL_POD" 8080
# 2 000 connections to the active agent's HTTP port held for 40 s from another pod on the cluster
# network (the standby's network namespace: a pod address, as a hostile pod would; idle, one in four
# trickling a request a byte a second, each closed one opened again at once): the kubelet's probes
# (readiness every 5 s, liveness every 10 s) still get through: no restart, Ready all along, no
# Unhealthy event for it, and the endpoint says it dropped connections.
HOLD=${HOLD:-$ROOT/build/tests/http-hold}
T_HOLD=$(date -u +%Y-%m-%dT%H:%M:%SZ)
rc0=$(restart_count "$POD") d0=$(pod_metric "$POD" vmdhcp_http_connections_dropped_total)
ip netns exec "$(pod_netns "$SBY")" "$HOLD" "$(pod_ip "$POD")" 8080 2000 40 >"$TMP/hold.out" 2>&1 & HOLD_PID=$!
not_ready=0
while kill -0 "$HOLD_PID" 2>/dev/null; do pod_ready "$POD" || not_ready=$((not_ready + 1)); sleep 1; done
wait "$HOLD_PID"; hold_rc=$?
echo "    http-hold: $(cat "$TMP/hold.out") (exit $hold_rc); looks at the pod while held: not Ready $not_ready times"
check "held connections: http-hold ran (exit 0)" test "$hold_rc" = 0
check "held connections: $POD stayed Ready" test "$not_ready" = 0
check "held connections: $POD not restarted" test "$(restart_count "$POD")" = "$rc0"
unhealthy_since() {
    k -n $NS get events -o json | jq -r --arg t0 "$1" --arg p "$2" '.items[] |
        select(.reason == "Unhealthy" and .involvedObject.name == $p and (.lastTimestamp // .eventTime // "") >= $t0) | .message'
}
check "held connections: no Unhealthy event for $POD ($(unhealthy_since "$T_HOLD" "$POD" | head -n1))" \
    test -z "$(unhealthy_since "$T_HOLD" "$POD")"
check "held connections: the endpoint dropped some (vmdhcp_http_connections_dropped_total > $d0)" \
    test "$(pod_metric "$POD" vmdhcp_http_connections_dropped_total)" -gt "$d0"
check "held connections: /healthz answers after" curl -sf -m 5 -o /dev/null "http://$(pod_ip "$POD"):8080/healthz"

# --- failover -------------------------------------------------------------------------------------
now_ns() { date +%s%N; }
# renew_ack: a RENEWING REQUEST (unicast to serverIP through the VM kernel's ARP) resent every
# 20 ms until ACKed; prints the ACK's arrival (ns, realtime)
renew_ack() { ip netns exec "$TAG-vm1" "$PROBE" renew eth0 "$IP" "$VNET.2" 20 | awk '$1 == "ack" { print $3 }'; }
# acks_between T0 T1: the source MACs of the ACKs of $IP seen on the wire in [T0, T1], one a line
acks_between() {
    awk -v a="$1" -v b="$2" -v ip="$IP" '!/^#/ && $1 >= a && $1 <= b && $4 == 5 && $6 == ip { print $2 }' \
        "$TMP/wire.txt" | sort -u
}
# failover_checks WHAT T0 [W0]: after T0 (a kill, a delete) a renewing client is ACKed (the time
# printed, not asserted), by the Lease holder (then in $TAKER), from its eth1 only, which alone holds
# the serverIP: the ACKs seen from W0 (default T0: when the old holder could no longer answer) on.
# Sets FMS (ms, empty when no ACK).
failover_checks() {
    local what=$1 t0=$2 w0=${3:-$2} t1 macs mac
    TAKER='' FMS=''
    t1=$(renew_ack)
    if [ -z "$t1" ]; then fail "$what: a renewing client ACKed" "no ACK in 20 s"; return 1; fi
    FMS=$(((t1 - t0) / 1000000))
    # measured, not asserted (a loaded machine is no measure; the bar is make bench-failover's)
    pass "$what: renewing client ACKed $FMS ms after it"
    check "$what: the Lease is held by an agent pod" wait_for 10 holder_is_agent
    TAKER=$(holder)
    mac=$(pod_mac "$TAKER")
    sleep 0.3 # the capture's line is written by another process
    macs=$(acks_between "$w0" $((t1 + 200000000)))
    check "$what: the ACKs came from the holder $TAKER's eth1 ($mac) only (${macs//$'\n'/ })" \
        test "$macs" = "$mac"
    check "$what: serverIP on exactly one pod's eth1, $TAKER's (the old one's expired or removed)" \
        wait_for 10 sip_only_on "$TAKER"
    check "$what: $TAKER says 'ok: active', vmdhcp_agent_leader 1" bash -c \
        "[ \"\$(curl -s -m 3 http://$(pod_ip "$TAKER"):8080/readyz)\" = 'ok: active' ] &&
         curl -s -m 3 http://$(pod_ip "$TAKER"):8080/metrics | grep -qx 'vmdhcp_agent_leader 1'"
}
declare -A KILLED=() # pod -> SIGKILLs of its agent

# a. SIGKILL of the active agent's process (exactly its container's main process, found through
# containerd and checked against the container's cgroup), twice. The Lease holder's identity is
# its pod name: when the kubelet restarts the killed container before the Lease expires, the new
# process (same pod, same name) may take the Lease back at once; when it cannot (the restart
# back-off after a second death: the kubelet waits 10 s), the standby takes over on the Lease's
# expiry. Either way the client is ACKed within the bar by the one holder; the standby path must
# have been taken at least once.
standby_took=0
for i in 1 2; do
    OLD=$(holder) SBY=$(other_pod "$OLD")
    APID=$(agent_host_pid "$OLD")
    check "kill $i: the active agent's host PID found (${APID:-none}, pod $OLD)" test -n "$APID"
    [ -n "$APID" ] || break
    echo "kill $i: VM's neighbour entry before: $(ip -n "$TAG-vm1" neigh show $VNET.2); eth1 MACs: $OLD $(pod_mac "$OLD"), $SBY $(pod_mac "$SBY")"
    before=$(restart_count "$OLD")
    mark "kill $i: SIGKILL of $OLD's agent (pid $APID)"
    t0=$(now_ns)
    kill -KILL "$APID"
    failover_checks "kill $i of $OLD" "$t0" || break
    KILLED[$OLD]=$((${KILLED[$OLD]:-0} + 1))
    if [ "$TAKER" = "$SBY" ]; then
        standby_took=$((standby_took + 1))
        echo "failover (SIGKILL $i of the active agent, the standby $SBY took over): $FMS ms to the first ACK"
    else
        echo "failover (SIGKILL $i of the active agent, its restarted container took the Lease back): $FMS ms to the first ACK"
        kubectl -n $NS logs "$OLD" 2>&1 | grep -E 'starting version|holds the Lease' | sed 's/^/  restarted container: /'
    fi
    echo "kill$i $FMS $([ "$TAKER" = "$SBY" ] && echo standby || echo restarted)" >>"$TMP/failover.txt"
    restarted() { [ "$(restart_count "$OLD")" = $((before + 1)) ] && pod_ready "$OLD"; }
    check "kill $i: the kubelet restarted $OLD's container (restartCount $((before + 1))), Ready again" \
        wait_for 90 restarted
    check "kill $i: the Lease holder is still $TAKER" holder_is "$TAKER"
    check "kill $i: the other pod $(other_pod "$TAKER") is the standby ('ok: standby', leader 0)" \
        wait_for 20 is_standby "$(other_pod "$TAKER")"
    check "kill $i: serverIP on $TAKER's eth1 only" sip_only_on "$TAKER"
    check_process "$OLD" "kill $i: restarted $OLD"
    check "kill $i: the killed agent had been active (kubectl logs --previous)" \
        bash -c "kubectl -n $NS logs --previous $OLD | grep -q 'holds the Lease: active'"
    n=$(acks)
    check "kill $i: dhclient's renewals ACKed again" wait_for 30 more_acks "$n"
done
check "SIGKILL: the standby took over (on the Lease's expiry) $standby_took time(s), at least once" \
    test $standby_took -ge 1
n6=$(replies6)
check "SIGKILL failovers: dhclient -6's renewals answered again (by $(holder))" wait_for 60 more_replies6 "$n6"
check "SIGKILL failovers: IPv6 serverIP on the holder $(holder)'s eth1 only" wait_for 10 sip6_only_on "$(holder)"
check "SIGKILL failovers: still $IP6/128" test "$(vm_addr6)" = "$IP6/128"
mark "SIGKILL failovers done"

# b. kubectl delete of the active pod (SIGTERM): it releases the Lease, the standby takes over at
# once, the Deployment replaces the pod and the new one becomes the standby.
OLD=$(holder) SBY=$(other_pod "$OLD")
APID=$(agent_host_pid "$OLD")
kubectl -n $NS logs -f "$OLD" >"$TMP/deleted-pod.log" 2>&1 &
PIDS+=($!)
sleep 1 # the stream is open
mark "kubectl delete pod $OLD (pid $APID)"
t0=$(now_ns)
check "delete: kubectl delete pod $OLD" k -n $NS delete pod "$OLD" --wait=false
# the old agent answers until the kubelet's SIGTERM reaches it: the client starts once it is
# gone (so the ACK measured is the new one's; the time still counts from the delete)
gone() { ! kill -0 "$APID" 2>/dev/null; }
for _ in $(seq 500); do gone && break; sleep 0.02; done
t_gone=$(now_ns) # until then the old agent is the holder and may answer dhclient's own renewals
echo "delete: $OLD's agent exited $(((t_gone - t0) / 1000000)) ms after the delete"
check "delete: $OLD's agent exited within its grace period" gone
if failover_checks "delete of $OLD" "$t0" "$t_gone"; then
    echo "failover (kubectl delete of the active pod, the standby $SBY took over): $FMS ms from the delete to the first ACK"
    echo "delete $FMS" >>"$TMP/failover.txt"
fi
check "delete: the standby $SBY took over" test "$TAKER" = "$SBY"
released() { grep -q "Lease $NS/$AGENT_DEP released" "$TMP/deleted-pod.log"; }
check "delete: $OLD's log says 'Lease $NS/$AGENT_DEP released'" wait_for 10 released
replaced() { two_ready "$OLD" && REPL=$(other_pod "$SBY") && [ -n "$REPL" ] && is_standby "$REPL"; }
check "delete: the Deployment replaced $OLD; the new pod is Ready as the standby" wait_for 180 replaced
echo "replacement pod: $REPL"
check "delete: the Lease holder is still $SBY" holder_is "$SBY"
check "delete: serverIP still on $SBY's eth1 only" sip_only_on "$SBY"
n=$(acks)
check "delete: dhclient's renewals ACKed again" wait_for 30 more_acks "$n"
check "still bound to $IP" test "$(vm_addr)" = "$IP/24"
check "no DHCPNAK seen" bash -c "! grep -q DHCPNAK '$TMP/dhclient-vm1.log'"
n6=$(replies6)
check "delete: dhclient -6's renewals answered again" wait_for 60 more_replies6 "$n6"
check "delete: IPv6 serverIP on $SBY's eth1 only" wait_for 10 sip6_only_on "$SBY"
check "delete: still $IP6/128, no DHCPv6 status code but Success" bash -c \
    "[ \"\$(ip -n $TAG-vm1 -6 -o addr show dev eth0 scope global | awk '{ print \$4 }')\" = $IP6/128 ] && ! grep -Eq 'status code (NoBinding|NotOnLink|NoAddrsAvail)' '$TMP/dhclient6-vm1.log'"
mark "graceful failover done"

# the restarts: the killed containers only, once per kill
restart_list() {
    k -n $NS get pods -l network.harvesterhci.io/ippool-name=vmnet -o json |
        jq -r '.items[] | select(.metadata.deletionTimestamp == null) | "\(.metadata.name)=\(.status.containerStatuses[0].restartCount)"' |
        sort | tr '\n' ' '
}
expect_restarts=$(for p in $(agent_pods); do echo "$p=${KILLED[$p]:-0}"; done | sort | tr '\n' ' ')
check "agent restarts: one per SIGKILL, none else ($(restart_list))" test "$(restart_list)" = "$expect_restarts"
# the kubelet's probes of the containers not killed: never an empty reply or a reset
# (a probe in flight when its container is killed is reset: those pods are left out)
probe_errors_unkilled() { probe_errors | grep -vE "^($(IFS='|'; echo "${!KILLED[*]}")) "; }
no_probe_errors_unkilled() { ! probe_errors_unkilled; }
check "no probe of a container not killed met an empty reply or a reset" no_probe_errors_unkilled
check "controller containers never restarted" test "$(k -n $NS get pods -l app.kubernetes.io/component=controller \
    -o jsonpath='{range .items[*]}{.status.containerStatuses[0].restartCount}{"\n"}{end}' | sort -u)" = 0

# c. the wire, from the VM's first DISCOVER to here. One request frame answered by two agents
# shows as its xid from two MACs within milliseconds; dhclient keeps its xid across renewals
# (seconds apart), so successive active agents answering its later transmissions is no overlap.
stop_pid "$CAP_PID"
awk '!/^#/ { if (($5 in mac) && mac[$5] != $2 && $1 - t[$5] < 1000000000) {
                 print "xid " $5 " answered by " mac[$5] " and " $2 " " ($1 - t[$5]) / 1e6 " ms apart"; bad = 1 }
             mac[$5] = $2; t[$5] = $1 }
     END { exit bad }' "$TMP/wire.txt" >"$TMP/wire-dups.txt"
check "wire: no request answered by two agents ($(grep -vc '^#' "$TMP/wire.txt") reply frames)" test ! -s "$TMP/wire-dups.txt"
check "wire: every reply from $VNET.2" bash -c "! awk '!/^#/ && \$3 != \"$VNET.2\"' '$TMP/wire.txt' | grep -q ."
check "wire: replies from two agents (each active in turn: $(awk '!/^#/ { print $2 }' "$TMP/wire.txt" | sort -u | tr '\n' ' '))" \
    test "$(awk '!/^#/ { print $2 }' "$TMP/wire.txt" | sort -u | wc -l)" -ge 2
echo "failovers (ms): $(tr '\n' ' ' <"$TMP/failover.txt" 2>/dev/null)"

# --- a foreign DHCP server on the VM network (a router or a forgotten dnsmasq): dnsmasq in a
# namespace on the VM bridge. The active agent's probe (the pool's probeInterval: 30 s, the
# least) finds it within one interval: its metric, the IPPool condition ForeignDHCPServer and a
# Warning Event name it; the standby reports nothing of its own. Policy Warn: the agent goes on
# answering (dhclient's renewals go to the serverIP, unicast: dnsmasq never sees them).
ROGUE_MAC=02:00:00:77:00:66
ip netns add "$TAG-rogue"
ip -n "$TAG-rogue" link set lo up
ip link add "vmdhcpr-$$" type veth peer name eth0 netns "$TAG-rogue"
ip -n "$TAG-rogue" link set eth0 address $ROGUE_MAC
ip -n "$TAG-rogue" addr add "$VNET.66/24" dev eth0
ip link set "vmdhcpr-$$" master vmdhcp-vm0 up
ip -n "$TAG-rogue" link set eth0 up
ip netns exec "$TAG-rogue" dnsmasq --keep-in-foreground --conf-file=/dev/null --port=0 --user=root \
    --interface=eth0 --bind-interfaces --dhcp-range="$VNET.150,$VNET.160,60" \
    --dhcp-leasefile="$TMP/rogue.leases" --pid-file= --log-dhcp --log-facility=- \
    >>"$TMP/rogue.log" 2>&1 & ROGUE_PID=$!
PIDS+=("$ROGUE_PID")
mark "foreign DHCP server (dnsmasq, $ROGUE_MAC $VNET.66) started"
ACT=$(holder)
foreign_seen() { [ "$(pod_metric "$ACT" vmdhcp_agent_foreign_dhcp_servers)" -ge 1 ] 2>/dev/null; }
check "foreign server: the active agent $ACT reports it (vmdhcp_agent_foreign_dhcp_servers)" wait_for 75 foreign_seen
check "foreign server: the metric names its MAC and IP" bash -c "curl -s -m 5 http://$(pod_ip "$ACT"):8080/metrics |
    grep '^vmdhcp_agent_foreign_dhcp_servers{' | grep -q 'mac=\"$ROGUE_MAC\".*ip=\"$VNET.66\"\|ip=\"$VNET.66\".*mac=\"$ROGUE_MAC\"'"
foreign_cond() {
    k get ippool vmnet -o json | jq -e --arg m "$ROGUE_MAC" '.status.conditions[]? |
        select(.type == "ForeignDHCPServer" and .status == "True" and (.message | contains($m)))' >/dev/null
}
check "foreign server: IPPool condition ForeignDHCPServer True, naming $ROGUE_MAC" wait_for 30 foreign_cond
foreign_event() { k get events -A -o json | jq -e --arg m "$ROGUE_MAC" '.items[] | select(.reason == "ForeignDHCPServer" and .type == "Warning" and (.message | contains($m)))' >/dev/null; }
check "foreign server: a Warning Event ForeignDHCPServer names it" wait_for 30 foreign_event
SBY_NOW=$(other_pod "$ACT")
check "foreign server: the standby $SBY_NOW reports no agent of its own pool as foreign" \
    bash -c "! curl -s -m 5 http://$(pod_ip "$SBY_NOW"):8080/metrics | grep '^vmdhcp_agent_foreign_dhcp_servers{' | grep -vq '$ROGUE_MAC'"
check "foreign server: the agent still answers (policy Warn): dhclient's renewals ACKed" wait_for 30 more_acks "$(acks)"
stop_pid "$ROGUE_PID"
ip netns del "$TAG-rogue" 2>/dev/null
mark "foreign DHCP server checked"

# --- a VirtualMachine (the stand-in CRD: no KubeVirt here) -> its VMNetCfg, owned by it; deleting the
# VM lets the cluster's garbage collector delete the VMNetCfg (ownerReference), and the controller
# then frees its address (finalizer). The fake API server has no garbage collector: only here.
cat >"$TMP/vm2.yaml" <<EOF
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: vm2
  namespace: default
spec:
  template:
    spec:
      domain:
        devices:
          interfaces:
          - name: default
            masquerade: {}
          - name: nic-1
            bridge: {}
            macAddress: "52:54:00:00:0b:02"
      networks:
      - name: default
        pod: {}
      - name: nic-1
        multus:
          networkName: default/vmnet
EOF
check "kubectl apply VirtualMachine vm2" k apply -f "$TMP/vm2.yaml"
vm2_ip() { k get vmnetcfg vm2 -o jsonpath='{.status.networkConfigs[0].allocatedIPAddress}' 2>/dev/null; }
vm2_allocated() { [ -n "$(vm2_ip)" ]; }
check "VM vm2 -> VMNetCfg vm2 with an address" wait_for 60 vm2_allocated
IP2=$(vm2_ip)
check "VMNetCfg vm2 is owned by VirtualMachine vm2" test \
    "$(k get vmnetcfg vm2 -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}')" = VirtualMachine/vm2
pool_has() { k get ippool vmnet -o json | jq -e --arg ip "$1" '.status.ipv4.allocated[$ip] != null' >/dev/null; }
check "IPPool status lists $IP2" wait_for 60 pool_has "$IP2"
pool_freed() { ! pool_has "$1"; }
# a NIC the VM's own configuration sets up statically (cloud-init): the annotation takes it out
# of the VMNetCfg and its address goes back to the pool; without it, the NIC is bound again
ANNOT=network.harvesterhci.io/dhcp-static-nics
check "kubectl annotate VirtualMachine vm2 $ANNOT=nic-1" k annotate virtualmachines.kubevirt.io vm2 "$ANNOT=nic-1"
vm2_no_nics() { [ "$(k get vmnetcfg vm2 -o json | jq '.spec.networkConfigs | length')" = 0 ]; }
check "static NIC: VMNetCfg vm2 asks for no address" wait_for 60 vm2_no_nics
check "static NIC: IPPool status no longer lists $IP2" wait_for 60 pool_freed "$IP2"
check "kubectl annotate VirtualMachine vm2 $ANNOT- (removed)" k annotate virtualmachines.kubevirt.io vm2 "$ANNOT-"
vm2_one_nic() { [ "$(k get vmnetcfg vm2 -o json | jq '.spec.networkConfigs | length')" = 1 ]; }
check "static NIC removed: VMNetCfg vm2 asks for nic-1 again" wait_for 60 vm2_one_nic
vm2_bound_again() { IP2=$(vm2_ip) && [ -n "$IP2" ] && pool_has "$IP2"; }
check "static NIC removed: an address again, listed in the IPPool status" wait_for 60 vm2_bound_again
IP2=$(vm2_ip)
check "kubectl delete VirtualMachine vm2" k delete virtualmachines.kubevirt.io vm2 --wait=true --timeout=60s
vm2_gone() { ! k get vmnetcfg vm2 >/dev/null 2>&1; }
check "VMNetCfg vm2 deleted by the garbage collector" wait_for 120 vm2_gone
check "IPPool status no longer lists $IP2" wait_for 60 pool_freed "$IP2"

# --- the admission webhook through the chart's Service: the table, a replica lost during applies,
# a short certificate validity rotated under load (tests/cluster/test-cluster-admission.sh) ---------
admission() {
    "$ROOT/tests/cluster/test-cluster-admission.sh" >"$TMP/admission.log" 2>&1
    local rc=$?
    grep -vE '^ +\|' "$TMP/admission.log" | grep -E '^(FAIL|SKIP|admission-table:|test-cluster-admission:|graceful|kill|certificate|    )' | sed 's/^/    /'
    return $rc
}
check "admission webhook (tests/cluster/test-cluster-admission.sh)" admission
mark "admission tested"

# --- helm uninstall ----------------------------------------------------------------------------------
check "helm uninstall" helm_ uninstall $REL -n $NS --timeout 3m
no_agents() { [ -z "$(k -n $NS get deploy -l network.harvesterhci.io/vm-dhcp-controller=agent -o name)" ]; }
check "no agent Deployment left" wait_for 60 no_agents
no_pods() { [ -z "$(k -n $NS get pods -o name)" ]; }
check "no pod left in $NS" wait_for 120 no_pods
check "VMNetCfg deletion not stuck on a finalizer" k delete vmnetcfg vm1 --wait=true --timeout=60s
check "IPPool deletion not stuck on a finalizer" k delete ippool vmnet --wait=true --timeout=60s
mark "uninstalled"
finish
