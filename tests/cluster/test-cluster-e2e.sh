#!/bin/bash
# tests/cluster/test-cluster-e2e.sh - the product as an admin runs it, on a real single-node
# Kubernetes (tests/cluster/k8s-up.sh: Debian's kubernetes 1.20 source package, etcd,
# containerd, runc, CNI plugins), from the images `make image` builds:
#   helm install the chart -> the controller pods start, one becomes the leader (Lease);
#   NAD + IPPool + VirtualMachineNetworkConfig -> the controller places the agent Deployment,
#   the scheduler puts it on the node, the agent pod (uid 65532, file capabilities, read-only
#   root) syncs the pool through its service account and a real dhclient in the "VM" gets
#   exactly the allocated address, router and DNS; an IPPool DNS change reaches the next
#   renewal; the agent pod deleted -> the Deployment replaces it and renewals are ACKed again;
#   helm uninstall -> no agent Deployment left, no object stuck on a finalizer.
# The VM is a network namespace with a veth on the bridge vmdhcp-vm0, which the cluster's
# containerd attaches to every pod as eth1 (the stand-in for Multus; see k8s-up.sh).
#
# Starts the cluster when it is not up and stops it at the end (KEEP_CLUSTER=1 keeps it).
# Needs root, the images in build/images (make image) and helm (scripts/install-deps).
. "$(dirname "$0")/../e2e/lib.sh" # check, stop_pid, dhclient_conf, run_dhclient
VERSION=$(cat "$ROOT/VERSION" 2>/dev/null || echo 0.1.0)
IMG=${IMAGES_DIR:-$ROOT/build/images}
IMAGES=("$IMG/vm-dhcp-controller-$VERSION.tar" "$IMG/vm-dhcp-agent-$VERSION.tar" "$IMG/pause-$VERSION.tar")
HELM=${HELM:-$(command -v helm || echo "$ROOT/build/tools/node_modules/.bin/helm")}
NS=vm-dhcp-system
REL=vm-dhcp
NODE=vmdhcp-node
VNET=10.77.0
MAC=52:54:00:c1:00:01
STATE=/var/lib/vm-dhcp-k8s
export KUBECONFIG=$STATE/admin.kubeconfig
started_cluster=0

[ "$(id -u)" = 0 ] || skip "needs root (a Kubernetes node, network namespaces)"
command -v dhclient >/dev/null || skip "dhclient is not installed (scripts/install-deps installs it)"
[ -x "$HELM" ] || { echo "FAIL: helm not found (scripts/install-deps installs it)"; exit 1; }
for i in "${IMAGES[@]}"; do [ -f "$i" ] || { echo "FAIL: $i missing (make image)"; exit 1; }; done
TMP=$(mktemp -d /tmp/vmdhcp-cluster.XXXXXX)

cluster_cleanup() {
    trap '' INT TERM
    local p
    for p in "${PIDS[@]}"; do stop_pid "$p"; done
    ip netns del "$TAG-vm1" 2>/dev/null
    rm -rf "/etc/netns/$TAG-vm1"
    if [ $CHECKS_FAIL -gt 0 ]; then
        echo "--- evidence"
        kubectl get all,leases,ippools,vmnetcfgs -A -o wide 2>&1 | tail -n 40
        kubectl get events -A --sort-by=.lastTimestamp 2>&1 | tail -n 30
        for p in $(kubectl -n $NS get pods -o name 2>/dev/null); do
            echo "--- logs $p"; kubectl -n $NS logs "$p" --tail=30 2>&1
        done
        echo "--- dhclient"; tail -n 20 "$TMP/dhclient-vm1.log" 2>/dev/null
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
    "$ROOT/tests/cluster/k8s-up.sh" "${IMAGES[@]}" >/dev/null ||
        { echo "FAIL: the cluster did not come up (logs: $STATE/log)"; exit 1; }
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
mark() { echo "-- $1 at +$((SECONDS - T0)) s"; }
node_ready() { [ "$(k get node $NODE -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
check "node $NODE Ready" node_ready

# --- helm install ----------------------------------------------------------------------------------
helm_() { "$HELM" "$@" >>"$TMP/helm.log" 2>&1 || { tail -n 5 "$TMP/helm.log"; return 1; }; }
check "helm install" helm_ install $REL "$ROOT/charts/vm-dhcp" -n $NS --create-namespace --wait --timeout 5m
ready_controllers() {
    [ "$(k -n $NS get deploy $REL-controller -o jsonpath='{.status.readyReplicas}')" = 2 ]
}
check "both controller replicas Ready" wait_for 120 ready_controllers
leader() { k -n $NS get lease vm-dhcp-controller -o jsonpath='{.spec.holderIdentity}'; }
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
---
apiVersion: network.harvesterhci.io/v1alpha1
kind: VirtualMachineNetworkConfig
metadata:
  name: vm1
  namespace: default
spec:
  vmName: vm1
  networkConfig:
  - networkName: default/vmnet
    macAddress: "$MAC"
EOF
check "kubectl apply NAD, IPPool, VMNetCfg" k apply -f "$TMP/objects.yaml"
alloc_ip() {
    k get vmnetcfg vm1 -o jsonpath='{.status.networkConfig[0].allocatedIPAddress}'
}
has_alloc() { [ -n "$(alloc_ip)" ]; }
check "VMNetCfg vm1 allocated" wait_for 60 has_alloc
IP=$(alloc_ip); IP=${IP%%/*}
echo "allocated: $IP"
AGENT_DEP=default-vmnet-agent
check "agent Deployment $AGENT_DEP placed" wait_for 60 k -n $NS get deploy $AGENT_DEP
agent_pod() {
    k -n $NS get pods -l network.harvesterhci.io/ippool-name=vmnet \
        -o jsonpath='{range .items[?(@.status.phase=="Running")]}{.metadata.name}{" "}{end}' | awk '{ print $1 }'
}
agent_ready() {
    local p; p=$(agent_pod) && [ -n "$p" ] &&
        [ "$(k -n $NS get pod "$p" -o jsonpath='{.status.containerStatuses[0].ready}')" = true ]
}
check "agent pod scheduled on $NODE and Ready" wait_for 180 agent_ready
POD=$(agent_pod)
mark "agent pod Ready"
check "agent pod is on $NODE" test "$(k -n $NS get pod "$POD" -o jsonpath='{.spec.nodeName}')" = $NODE
# The agent process as the kubelet started it: uid, capabilities, read-only root.
agent_host_pid() {
    local cid
    cid=$(k -n $NS get pod "$1" -o jsonpath='{.status.containerStatuses[0].containerID}')
    cid=${cid#containerd://}
    ctr --address /run/vm-dhcp-k8s/containerd.sock -n k8s.io tasks ls 2>/dev/null | awk -v c="$cid" '$1 == c { print $2 }'
}
APID=$(agent_host_pid "$POD")
check "agent process found ($APID)" test -n "$APID"
check "agent runs as uid 65532" bash -c "grep -Eq '^Uid:\s+65532\s+65532' /proc/$APID/status"
# CapEff after start-up: NET_ADMIN (bit 12) only; NET_RAW and NET_BIND_SERVICE dropped
check "agent kept only CAP_NET_ADMIN after opening its sockets" bash -c \
    "grep -Eq '^CapEff:\s+0000000000001000$' /proc/$APID/status"
# (the image has no shell: read the root mount's options from the host)
check "agent root file system is read-only" bash -c \
    "awk '\$5 == \"/\" { print \$6 }' /proc/$APID/mountinfo | grep -Eq '(^|,)ro(,|\$)'"
check "agent holds the server IP on eth1" bash -c \
    "nsenter -t $APID -n ip -4 -o addr show dev eth1 | grep -q ' $VNET.2/24 '"
check "agent HTTP endpoint not on eth1" bash -c \
    "! nsenter -t $APID -n curl -s -m 2 -o /dev/null http://$VNET.2:8080/metrics"

# The VM: a namespace with a veth on the VM bridge, running ISC dhclient.
ip netns add "$TAG-vm1"
mkdir -p "/etc/netns/$TAG-vm1"; : >"/etc/netns/$TAG-vm1/resolv.conf"
ip -n "$TAG-vm1" link set lo up
ip link add "vmdhcp-$$" type veth peer name eth0 netns "$TAG-vm1"
ip -n "$TAG-vm1" link set eth0 address $MAC
ip link set "vmdhcp-$$" master vmdhcp-vm0 up
ip -n "$TAG-vm1" link set eth0 up
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
PODIP=$(k -n $NS get pod "$POD" -o jsonpath='{.status.podIP}')
check "agent /readyz answers on the pod IP $PODIP" curl -sf -m 5 -o /dev/null "http://$PODIP:8080/readyz"
ip -n "$TAG-vm1" route add "$PODIP/32" dev eth0
check "a VM cannot reach the agent's /metrics through eth1" bash -c \
    "! ip netns exec $TAG-vm1 curl -s -m 3 -o /dev/null http://$PODIP:8080/metrics"
ip -n "$TAG-vm1" route del "$PODIP/32" dev eth0
check "default route via $VNET.1" bash -c "ip -n $TAG-vm1 route show default | grep -q 'via $VNET.1'"
check "resolv.conf nameserver $VNET.53" grep -q "^nameserver $VNET.53\$" "/etc/netns/$TAG-vm1/resolv.conf"
check "ACK came from the agent's server IP" grep -q "DHCPACK of $IP from $VNET.2" "$TMP/dhclient-vm1.log"
agent_said() { k -n $NS logs "$POD" | grep -q -- "$1"; }
check "kubectl logs: the agent says whom it offered $IP" agent_said "DHCPOFFER $IP to $MAC"
check "kubectl logs: the agent says whom it ACKed $IP" agent_said "DHCPACK $IP to $MAC"

# --- DNS change reaches the next renewal -------------------------------------------------------------
check "IPPool DNS changed" k patch ippool vmnet --type merge -p "{\"spec\":{\"ipv4Config\":{\"dns\":[\"$VNET.54\"]}}}"
check "renewal carries the new DNS" wait_for 60 grep -q "^nameserver $VNET.54\$" "/etc/netns/$TAG-vm1/resolv.conf"
check "still bound to $IP after renewals" test "$(vm_addr)" = "$IP/24"

# --- the agent pod deleted: the Deployment replaces it, renewals ACKed again --------------------------
check "agent pod $POD deleted" k -n $NS delete pod "$POD" --wait=true --timeout=60s
new_agent() { local p; p=$(agent_pod) && [ -n "$p" ] && [ "$p" != "$POD" ] && agent_ready; }
check "a new agent pod replaces it and becomes Ready" wait_for 180 new_agent
mark "agent pod replaced"
n=$(acks)
check "renewals ACKed by the new agent pod" wait_for 60 more_acks "$n"
check "still bound to $IP" test "$(vm_addr)" = "$IP/24"
check "no DHCPNAK seen" bash -c "! grep -q DHCPNAK '$TMP/dhclient-vm1.log'"

# --- the kubelet's probes were answered all along -----------------------------------------------------
# (a reply lost to 'Connection: close', as the kubelet sends, restarts the pods; a 503 before the
# first sync is a probe's honest answer, an EOF or a reset is not)
restarts() { k -n $NS get pods -o jsonpath='{range .items[*]}{range .status.containerStatuses[*]}{.restartCount}{"\n"}{end}{end}' | sort -u | tr '\n' ' '; }
check "no container restarted (restart counts: $(restarts))" test "$(restarts)" = "0 "
no_probe_errors() { ! k -n $NS get events -o jsonpath='{range .items[*]}{.reason} {.message}{"\n"}{end}' |
    grep -E '^Unhealthy .*(EOF|connection reset)'; }
check "no probe met an empty reply or a reset" no_probe_errors

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
