#!/bin/bash
# tests/cluster/test-cluster-migrate.sh - taking over a cluster that ran harvester/vm-dhcp-controller
# (the Go project, "upstream"), and rolling back, on the real single-node Kubernetes of
# tests/cluster/k8s-up.sh, from the images `make image` builds.
#
# 1. The cluster as the Go project leaves it after `helm uninstall` (its chart, commit c3042d6):
#    - its CRDs (tests/data/upstream/, its chart/crds/ unchanged);
#    - its objects in its format: a NAD, an IPPool whose status (written through the status
#      subresource, as its controller writes it) lists the bindings in status.ipv4.allocated,
#      its agentPodRef and conditions; VirtualMachineNetworkConfigs with status.networkConfigs:
#      one owned by a VirtualMachine, one hand-written with a static ipAddress pin, one paused;
#      its finalizers (wrangler.cattle.io/vm-dhcp-*-controller) on all of them;
#    - its agent Pod for the pool (a bare Pod, upstream:pkg/controller/ippool/common.go: its name,
#      labels and Multus annotation) holding the serverIP on the VM network and answering DHCP.
#      STAND-IN: no image of the Go project is available offline, so the Pod runs our agent
#      image in local mode (--config from a ConfigMap with the same bindings, --assign-server-ip),
#      serving from the serverIP as the Go agent does;
#    - the leader Lease kube-system/vm-dhcp-controllers, held by a stand-in holder that has
#      stopped renewing it;
#    - its webhook configurations (validating and mutating, named harvester-vm-dhcp-controller-
#      webhook as its webhook program registers them: upstream:cmd/webhook, harvester/webhook),
#      pointing at its webhook Service, which is gone: they refuse IPPool creates.
#    Two VMs (network namespaces with a veth on the VM bridge, ISC dhclient) are bound by the
#    stand-in: vm1 (VM-owned VMNetCfg) and vm2 (the static pin).
# 2. `helm install` of our chart under the Go project's release name and namespace with its
#    values file (charts/vm-dhcp/ci/upstream-values.yaml; our images set on top), then:
#    our CRD schema applied over the Go project's (--apply-crds), its webhook configurations
#    deleted (an IPPool can be created again), our agent Deployment placed; the Go project's Pod
#    deleted once ours is ready; the DHCP gap measured and printed: from that Pod's deletion
#    (the controller's log line, as it sends the delete) to the first ACK from our agent to a
#    renewing client (a probe renewing every 20 ms from vm1, beside dhclient); every VM renews and keeps its address, the pin and the
#    paused NIC's address are kept, the wire never shows one address ACKed to two MACs; the
#    IPPool says AgentReady True only once the Go project's Pod is gone.
# 3. Rollback: `helm uninstall` (its post-delete hook removes our agents and finalizers), the Go
#    project's CRDs put back (kubectl replace, as its controller applies them at start:
#    upstream:pkg/crd/crd.go); every object still reads with the Go project's field names and
#    values, no finalizer of ours left.
#
# Starts the cluster when it is not up and stops it at the end (KEEP_CLUSTER=1 keeps it).
# Needs root, the images in build/images (make image), build/tests/dhcp-ha-probe and helm.
. "$(dirname "$0")/../e2e/lib.sh" # check, pass, fail, skip, finish, stop_pid, dhclient_conf, run_dhclient
VERSION=$(cat "$ROOT/VERSION" 2>/dev/null || echo 0.1.0)
IMG=${IMAGES_DIR:-$ROOT/build/images}
IMAGES=("$IMG/vm-dhcp-controller-$VERSION.tar" "$IMG/vm-dhcp-agent-$VERSION.tar" "$IMG/pause-$VERSION.tar")
PROBE=${PROBE:-$ROOT/build/tests/dhcp-ha-probe}
HELM=${HELM:-$(command -v helm || echo "$ROOT/build/tools/node_modules/.bin/helm")}
UP=$ROOT/tests/data/upstream
NS=harvester-system            # where Harvester installs the Go project
REL=harvester-vm-dhcp-controller # its release name (Harvester's Addon)
NODE=vmdhcp-node
VNET=10.78.0
SIP=$VNET.2
UP_POD=default-vmnet-agent     # SafeAgentConcatName("default", "vmnet")
WEBHOOK=$REL-webhook
AGENT_IMAGE=vm-dhcp/vm-dhcp-agent:$VERSION
M1=52:54:00:c2:00:01 IP1=$VNET.101 # vm1: VM-owned
M2=52:54:00:c2:00:02 IP2=$VNET.150 # vm2: hand-written, static pin
M3=52:54:00:c2:00:03 IP3=$VNET.102 # vm3: paused (no VM runs)
STATE=/var/lib/vm-dhcp-k8s
PKI=$STATE/pki
API=https://10.96.0.1:443
export KUBECONFIG=$STATE/admin.kubeconfig
started_cluster=0
VMS=(vm1 vm2)

[ "$(id -u)" = 0 ] || skip "needs root (a Kubernetes node, network namespaces)"
command -v dhclient >/dev/null || skip "dhclient is not installed (scripts/install-deps installs it)"
[ -x "$HELM" ] || { echo "FAIL: helm not found (scripts/install-deps installs it)"; exit 1; }
for i in "${IMAGES[@]}"; do [ -f "$i" ] || { echo "FAIL: $i missing (make image)"; exit 1; }; done
[ -x "$PROBE" ] || { echo "FAIL: $PROBE not built (make tests)"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq not installed (tests/cluster/k8s-up.sh installs it)"; exit 1; }
TMP=$(mktemp -d /tmp/vmdhcp-migrate.XXXXXX)

cluster_cleanup() {
    trap '' INT TERM
    local p vm
    for p in "${PIDS[@]}"; do stop_pid "$p"; done
    for vm in "${VMS[@]}"; do
        ip netns del "$TAG-$vm" 2>/dev/null
        rm -rf "/etc/netns/$TAG-$vm"
    done
    if [ $CHECKS_FAIL -gt 0 ]; then
        echo "--- evidence"
        kubectl get all,leases,ippools,vmnetcfgs -A -o wide 2>&1 | tail -n 40
        kubectl get events -A --sort-by=.lastTimestamp 2>&1 | tail -n 30
        for p in $(kubectl -n $NS get pods -o name 2>/dev/null); do
            echo "--- logs $p"; kubectl -n $NS logs "$p" --tail=30 2>&1
        done
        echo "--- controller logs"; tail -n 40 "$TMP/controller.log" 2>/dev/null
        echo "--- IPPool"; kubectl get ippool vmnet -o yaml 2>&1 | sed -n '/^status:/,$p' | head -n 40
        echo "--- wire (last replies)"; tail -n 15 "$TMP/wire.txt" 2>/dev/null
        for vm in "${VMS[@]}"; do echo "--- dhclient $vm"; tail -n 12 "$TMP/dhclient-$vm.log" 2>/dev/null; done
    fi
    # what this test created and a failure may have left
    "$HELM" uninstall $REL -n $NS --timeout 2m >/dev/null 2>&1
    kubectl -n $NS delete pod $UP_POD --ignore-not-found --wait=false >/dev/null 2>&1
    kubectl delete validatingwebhookconfiguration,mutatingwebhookconfiguration $WEBHOOK --ignore-not-found >/dev/null 2>&1
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
wait_for() {
    local end=$((SECONDS + $1)); shift
    while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 1; done
    "$@"
}
T0=$SECONDS
mark() { echo "-- $1 at +$((SECONDS - T0)) s"; }
now_ns() { date +%s%N; }
# api_put PATH FILE: PUT through the admin's client certificate (a status subresource write,
# which this kubectl cannot do)
api_put() {
    curl -sf -o "$TMP/put.out" --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" \
        -X PUT -H 'Content-Type: application/json' --data-binary "@$2" "$API$1"
}
jqe() { jq -e "$@" >/dev/null; }
rfc3339() { date -u -d "$1" +%Y-%m-%dT%H:%M:%SZ; }
node_ready() { [ "$(k get node $NODE -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
check "node $NODE Ready" node_ready
k label node $NODE network.harvesterhci.io/vmnet=true --overwrite >/dev/null
k create namespace $NS >/dev/null 2>&1 || true

# --- 1. the cluster as the Go project leaves it -------------------------------------------------------
mark "the Go project's leftovers"
# CRDs of ours a previous test installed (Helm leaves CRDs on uninstall): not the Go project's
k delete crd ippools.network.harvesterhci.io virtualmachinenetworkconfigs.network.harvesterhci.io \
    --ignore-not-found --wait=true --timeout=60s >/dev/null
# (--validate=false: kubectl's client-side check against a 1.20 server's OpenAPI refuses their
# x-kubernetes-validations, which that server drops; its controller applies them unchecked)
check "kubectl create the Go project's CRDs ($(basename "$UP")/*.yaml, its chart/crds/)" \
    k create --validate=false -f "$UP/network.harvesterhci.io_ippools.yaml" -f "$UP/network.harvesterhci.io_virtualmachinenetworkconfigs.yaml"
crds_established() {
    for c in ippools virtualmachinenetworkconfigs; do
        [ "$(k get crd $c.network.harvesterhci.io -o jsonpath='{.status.conditions[?(@.type=="Established")].status}')" = True ] || return 1
    done
}
check "its CRDs established" wait_for 30 crds_established
cat >"$TMP/objects.yaml" <<EOF
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: vmnet
  namespace: default
  labels:
    network.harvesterhci.io/clusternetwork: vmnet
    network.harvesterhci.io/ippool-namespace: default
    network.harvesterhci.io/ippool-name: vmnet
spec:
  config: '{"cniVersion":"0.3.1","name":"vmnet","type":"bridge","bridge":"vmdhcp-vm0","ipam":{}}'
---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: vm1
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
            macAddress: "$M1"
      networks:
      - name: default
        pod: {}
      - name: nic-1
        multus:
          networkName: default/vmnet
---
apiVersion: network.harvesterhci.io/v1alpha1
kind: IPPool
metadata:
  name: vmnet
  namespace: default
  finalizers:
  - wrangler.cattle.io/vm-dhcp-ippool-controller
spec:
  networkName: default/vmnet
  ipv4Config:
    serverIP: $SIP
    cidr: $VNET.0/24
    pool:
      start: $VNET.100
      end: $VNET.200
      exclude:
      - $VNET.199
    router: $VNET.1
    dns:
    - $VNET.53
    domainName: vm.test
    leaseTime: 300
EOF
check "kubectl apply NAD, VirtualMachine vm1, IPPool (the Go project's format)" k apply -f "$TMP/objects.yaml"
VM1_UID=$(k get virtualmachines.kubevirt.io vm1 -o jsonpath='{.metadata.uid}')
cat >"$TMP/cfgs.yaml" <<EOF
apiVersion: network.harvesterhci.io/v1alpha1
kind: VirtualMachineNetworkConfig
metadata:
  name: vm1
  namespace: default
  labels:
    harvesterhci.io/vmName: vm1
  ownerReferences:
  - apiVersion: kubevirt.io/v1
    kind: VirtualMachine
    name: vm1
    uid: $VM1_UID
  finalizers:
  - wrangler.cattle.io/vm-dhcp-vmnetcfg-controller
spec:
  vmName: vm1
  networkConfigs:
  - networkName: default/vmnet
    macAddress: "$M1"
---
apiVersion: network.harvesterhci.io/v1alpha1
kind: VirtualMachineNetworkConfig
metadata:
  name: vm2
  namespace: default
  finalizers:
  - wrangler.cattle.io/vm-dhcp-vmnetcfg-controller
spec:
  vmName: vm2
  networkConfigs:
  - networkName: default/vmnet
    macAddress: "$M2"
    ipAddress: $IP2
---
apiVersion: network.harvesterhci.io/v1alpha1
kind: VirtualMachineNetworkConfig
metadata:
  name: vm3
  namespace: default
  finalizers:
  - wrangler.cattle.io/vm-dhcp-vmnetcfg-controller
spec:
  vmName: vm3
  paused: true
  networkConfigs:
  - networkName: default/vmnet
    macAddress: "$M3"
EOF
check "kubectl apply VMNetCfgs vm1 (VM-owned), vm2 (static pin), vm3 (paused)" k apply -f "$TMP/cfgs.yaml"

# The stand-in agent Pod: the Go project's name, labels, annotation and node affinity; our agent
# image in local mode with the same bindings, holding the serverIP.
cat >"$TMP/standin.yaml" <<EOF
apiVersion: v1
kind: ConfigMap
metadata:
  name: upstream-agent-standin
  namespace: $NS
data:
  pool.yaml: |
    apiVersion: network.harvesterhci.io/v1alpha1
    kind: IPPool
    metadata: {name: vmnet, namespace: default}
    spec:
      networkName: default/vmnet
      ipv4Config:
        serverIP: $SIP
        cidr: $VNET.0/24
        pool: {start: $VNET.100, end: $VNET.200, exclude: [$VNET.199]}
        router: $VNET.1
        dns: [$VNET.53]
        domainName: vm.test
        leaseTime: 300
    ---
    apiVersion: network.harvesterhci.io/v1alpha1
    kind: VirtualMachineNetworkConfig
    metadata: {name: vm1, namespace: default}
    spec:
      vmName: vm1
      networkConfigs: [{networkName: default/vmnet, macAddress: "$M1", ipAddress: $IP1}]
    ---
    apiVersion: network.harvesterhci.io/v1alpha1
    kind: VirtualMachineNetworkConfig
    metadata: {name: vm2, namespace: default}
    spec:
      vmName: vm2
      networkConfigs: [{networkName: default/vmnet, macAddress: "$M2", ipAddress: $IP2}]
---
apiVersion: v1
kind: Pod
metadata:
  name: $UP_POD
  namespace: $NS
  labels:
    network.harvesterhci.io/vm-dhcp-controller: agent
    network.harvesterhci.io/ippool-namespace: default
    network.harvesterhci.io/ippool-name: vmnet
  annotations:
    k8s.v1.cni.cncf.io/networks: '[{"namespace":"default","name":"vmnet","interface":"eth1"}]'
spec:
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: network.harvesterhci.io/vmnet, operator: In, values: ["true"]}
  containers:
  - name: agent
    image: $AGENT_IMAGE
    imagePullPolicy: IfNotPresent
    args: [--config, /etc/vm-dhcp/pool.yaml, --interface, eth1, --assign-server-ip, --listen, "\$(POD_IP):8080"]
    env:
    - name: POD_IP
      valueFrom: {fieldRef: {fieldPath: status.podIP}}
    readinessProbe:
      httpGet: {path: /readyz, port: 8080}
      periodSeconds: 2
    securityContext:
      runAsUser: 65532
      runAsGroup: 65532
      allowPrivilegeEscalation: true
      capabilities: {drop: [ALL], add: [NET_RAW, NET_BIND_SERVICE, NET_ADMIN]}
    volumeMounts:
    - {name: config, mountPath: /etc/vm-dhcp}
  volumes:
  - name: config
    configMap: {name: upstream-agent-standin}
EOF
check "the stand-in of the Go project's agent Pod $NS/$UP_POD created" k apply -f "$TMP/standin.yaml"
up_ready() { [ "$(k -n $NS get pod $UP_POD -o jsonpath='{.status.containerStatuses[0].ready}')" = true ]; }
check "the stand-in agent Pod Ready" wait_for 120 up_ready
UP_UID=$(k -n $NS get pod $UP_POD -o jsonpath='{.metadata.uid}')
UP_IP=$(k -n $NS get pod $UP_POD -o jsonpath='{.status.podIP}')
up_netns() {
    local n
    for n in $(ip netns list | awk '$1 ~ /^cni-/ { print $1 }'); do
        ip -n "$n" -4 -o addr show dev eth0 2>/dev/null | grep -q " $UP_IP/" && { echo "$n"; return 0; }
    done
    return 1
}
UP_NETNS=$(up_netns)
UP_MAC=$(ip -n "$UP_NETNS" link show dev eth1 2>/dev/null | awk '$1 == "link/ether" { print $2 }')
check "the stand-in holds the serverIP $SIP on its eth1 ($UP_MAC)" bash -c \
    "ip -n '$UP_NETNS' -4 -o addr show dev eth1 | grep -q ' $SIP/24 '"

# The statuses, as the Go project's controllers wrote them (status subresource).
NOW=$(rfc3339 now)
put_status() { # KIND-PLURAL NAME JQ-STATUS
    k get "$1" "$2" -o json | jq --argjson st "$3" '.status = $st' >"$TMP/status.json" &&
        api_put "/apis/network.harvesterhci.io/v1alpha1/namespaces/default/$1/$2/status" "$TMP/status.json"
}
cond() { jq -nc --arg t "$1" --arg s "$2" --arg now "$NOW" '{type: $t, status: $s, lastUpdateTime: $now, lastTransitionTime: $now}'; }
pool_status=$(jq -nc --arg ns $NS --arg pod $UP_POD --arg uid "$UP_UID" --arg now "$NOW" \
    --arg ip1 $IP1 --arg ip2 $IP2 --arg ex $VNET.199 --arg m1 $M1 --arg m2 $M2 \
    --argjson c1 "$(cond Registered True)" --argjson c2 "$(cond CacheReady True)" \
    --argjson c3 "$(cond AgentReady True)" --argjson c4 "$(cond Stopped False)" '{
    agentPodRef: {namespace: $ns, name: $pod, image: "rancher/harvester-vm-dhcp-agent:main-head", uid: $uid},
    ipv4: {allocated: {($ip1): $m1, ($ip2): $m2, ($ex): "EXCLUDED"}, used: 2, available: 98},
    lastUpdate: $now, conditions: [$c1, $c2, $c3, $c4]}')
check "IPPool status written (status.ipv4.allocated, agentPodRef, conditions)" put_status ippools vmnet "$pool_status"
nic_status() { jq -nc --arg ip "$1" --arg mac "$2" --arg st "$3" '[{allocatedIPAddress: $ip, macAddress: $mac, networkName: "default/vmnet", state: $st}]'; }
check "VMNetCfg vm1 status written" put_status virtualmachinenetworkconfigs vm1 \
    "$(jq -nc --argjson n "$(nic_status $IP1 $M1 Allocated)" --argjson c "$(cond Allocated True)" --argjson d "$(cond Disabled False)" '{networkConfigs: $n, conditions: [$c, $d]}')"
check "VMNetCfg vm2 status written" put_status virtualmachinenetworkconfigs vm2 \
    "$(jq -nc --argjson n "$(nic_status $IP2 $M2 Allocated)" --argjson c "$(cond Allocated True)" --argjson d "$(cond Disabled False)" '{networkConfigs: $n, conditions: [$c, $d]}')"
check "VMNetCfg vm3 (paused) status written" put_status virtualmachinenetworkconfigs vm3 \
    "$(jq -nc --argjson n "$(nic_status $IP3 $M3 Pending)" --argjson d "$(cond Disabled True)" '{networkConfigs: $n, conditions: [$d]}')"
pool_alloc() { k get ippool vmnet -o json | jq -r --arg ip "$1" '.status.ipv4.allocated[$ip] // empty'; }
check "IPPool status reads back with its bindings" test "$(pool_alloc $IP1)" = $M1

# The leader Lease, left by a controller that stopped renewing it a minute ago.
cat >"$TMP/lease.yaml" <<EOF
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: vm-dhcp-controllers
  namespace: kube-system
spec:
  holderIdentity: harvester-vm-dhcp-controller-6c9d7f5b8-x2x4k
  leaseDurationSeconds: 15
  acquireTime: "$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%S.000000Z)"
  renewTime: "$(date -u -d '-1 minute' +%Y-%m-%dT%H:%M:%S.000000Z)"
  leaseTransitions: 2
EOF
check "Lease kube-system/vm-dhcp-controllers held by a stand-in holder" k apply -f "$TMP/lease.yaml"

# Its webhook configurations, pointing at its webhook Service (gone). Made last: they refuse
# IPPool creates and updates from here on.
cat >"$TMP/webhooks.yaml" <<EOF
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: $WEBHOOK
  annotations:
    objectset.rio.cattle.io/owner-gvk: /v1, Kind=Secret
    objectset.rio.cattle.io/owner-name: $WEBHOOK-ca
    objectset.rio.cattle.io/owner-namespace: $NS
webhooks:
- name: validator.$NS.$WEBHOOK
  clientConfig:
    service: {namespace: $NS, name: $WEBHOOK, path: /v1/webhook/validation, port: 443}
  rules:
  - {operations: [CREATE, UPDATE, DELETE], apiGroups: [network.harvesterhci.io], apiVersions: [v1alpha1], resources: [ippools], scope: Namespaced}
  - {operations: [CREATE], apiGroups: [network.harvesterhci.io], apiVersions: [v1alpha1], resources: [virtualmachinenetworkconfigs], scope: Namespaced}
  failurePolicy: Fail
  sideEffects: None
  admissionReviewVersions: [v1, v1beta1]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $WEBHOOK
webhooks:
- name: mutator.$NS.$WEBHOOK
  clientConfig:
    service: {namespace: $NS, name: $WEBHOOK, path: /v1/webhook/mutation, port: 443}
  rules:
  - {operations: [CREATE], apiGroups: [network.harvesterhci.io], apiVersions: [v1alpha1], resources: [ippools], scope: Namespaced}
  failurePolicy: Ignore
  sideEffects: None
  admissionReviewVersions: [v1, v1beta1]
EOF
check "its webhook configurations $WEBHOOK (validating, mutating) created" k apply -f "$TMP/webhooks.yaml"
cat >"$TMP/pool2.yaml" <<EOF
apiVersion: network.harvesterhci.io/v1alpha1
kind: IPPool
metadata:
  name: other
  namespace: default
spec:
  networkName: default/other
  ipv4Config: {serverIP: 10.79.0.2, cidr: 10.79.0.0/24, pool: {start: 10.79.0.10, end: 10.79.0.20}}
EOF
refused() { ! kubectl apply -f "$TMP/pool2.yaml" >"$TMP/refused.txt" 2>&1; }
wait_for 20 refused
check "left behind, they refuse a new IPPool ($(grep -v WARNING "$TMP/refused.txt" | cut -c1-150))" refused

# The VMs, bound by the stand-in; the wire captured from here on.
add_vm() { # NAME MAC
    ip netns add "$TAG-$1"
    mkdir -p "/etc/netns/$TAG-$1"; : >"/etc/netns/$TAG-$1/resolv.conf"
    ip -n "$TAG-$1" link set lo up
    ip link add "vmd$1-$$" type veth peer name eth0 netns "$TAG-$1"
    ip -n "$TAG-$1" link set eth0 address "$2"
    ip link set "vmd$1-$$" master vmdhcp-vm0 up
    ip -n "$TAG-$1" link set eth0 up
}
add_vm vm1 $M1
add_vm vm2 $M2
"$PROBE" capture any "$TMP/wire.txt" 2>>"$TMP/capture.log" &
CAP_PID=$!; PIDS+=("$CAP_PID")
capturing() { grep -q '^# capturing' "$TMP/wire.txt" 2>/dev/null; }
check "capturing every DHCP reply in the host namespace" wait_for 5 capturing
T1=3 T2=6 dhclient_conf
run_dhclient vm1
run_dhclient vm2
vm_addr() { ip -n "$TAG-$1" -4 -o addr show dev eth0 | awk '{ print $4 }' | head -n1; }
bound() { [ "$(vm_addr "$1")" = "$2/24" ]; }
check "vm1 bound to $IP1 by the stand-in" wait_for 60 bound vm1 $IP1
check "vm2 bound to its pin $IP2 by the stand-in" wait_for 60 bound vm2 $IP2
acked_by() { awk -v m="$1" '!/^#/ && $2 == m && $4 == 5' "$TMP/wire.txt" | wc -l; }
check "the ACKs so far came from the stand-in's eth1 ($UP_MAC)" test "$(acked_by "$UP_MAC")" -ge 2
mark "the Go project's leftovers in place, VMs bound"

# --- 2. helm install ours over it -------------------------------------------------------------------
# A renewing client from vm1 all along (a REQUEST every 20 ms until ACKed, again and again).
( while :; do ip netns exec "$TAG-vm1" "$PROBE" renew eth0 $IP1 $SIP 20 >/dev/null 2>&1; sleep 0.05; done ) &
RENEW_PID=$!; PIDS+=("$RENEW_PID")
helm_() { "$HELM" "$@" >>"$TMP/helm.log" 2>&1 || { tail -n 5 "$TMP/helm.log"; return 1; }; }
# its values file as it is, our images set on top (it names its own: image.* is the
# controller's, agent.image.* the agents')
values=(-f "$ROOT/charts/vm-dhcp/ci/upstream-values.yaml" --set "image.repository=vm-dhcp/vm-dhcp-controller" --set "image.tag=$VERSION"
    --set "agent.image.repository=vm-dhcp/vm-dhcp-agent" --set "agent.image.tag=$VERSION")
mark "helm install $REL -n $NS"
check "helm install ours under the Go project's release name, with its values file" \
    helm_ install $REL "$ROOT/charts/vm-dhcp" -n $NS "${values[@]}" --wait --timeout 5m
# every controller pod's log (the leader's lines are the ones that matter)
controller_logs() {
    local p
    for p in $(k -n $NS get pods -l app.kubernetes.io/component=controller -o name); do
        k -n $NS logs "$p" --tail=-1
    done >"$TMP/controller.log" 2>&1
}

# the CRDs: ours now
crd_ours() { k get crd ippools.network.harvesterhci.io -o json | jq -e '.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.ipv4Config.properties.mtu != null' >/dev/null; }
check "the IPPool CRD carries our schema (spec.ipv4Config.mtu): --apply-crds" wait_for 60 crd_ours
check "the CRD kept the Go project's objects" test "$(k get vmnetcfg -o name | wc -l)" = 3
# the webhook configurations: gone, an IPPool can be created again
wh_gone() { ! k get validatingwebhookconfiguration $WEBHOOK >/dev/null 2>&1 && ! k get mutatingwebhookconfiguration $WEBHOOK >/dev/null 2>&1; }
check "the Go project's webhook configurations deleted" wait_for 60 wh_gone
# (through our admission webhook now, which refuses an IPPool whose NetworkAttachmentDefinition
# does not exist, as upstream:pkg/webhook/ippool/validator.go does: "other" is made first)
cat >"$TMP/nad2.yaml" <<EOF
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: other
  namespace: default
  labels:
    network.harvesterhci.io/clusternetwork: vmnet
    network.harvesterhci.io/ippool-namespace: default
    network.harvesterhci.io/ippool-name: other
spec:
  config: '{"cniVersion":"0.3.1","name":"other","type":"bridge","bridge":"vmdhcp-vm0","ipam":{}}'
EOF
k apply -f "$TMP/nad2.yaml" >/dev/null
created_again() { kubectl apply -f "$TMP/pool2.yaml" >"$TMP/again.txt" 2>&1; }
wait_for 20 created_again
check "an IPPool can be created again ($(grep -v WARNING "$TMP/again.txt" | tr '\n' ' ' | cut -c1-200))" created_again
k delete -f "$TMP/pool2.yaml" --wait=false >/dev/null
k delete -f "$TMP/nad2.yaml" --wait=false >/dev/null
# the Lease kube-system/vm-dhcp-controllers: ours elect on it (the holder is HOSTNAME_PID)
lease_ours() { local h; h=$(k -n kube-system get lease vm-dhcp-controllers -o jsonpath='{.spec.holderIdentity}'); [ -n "$h" ] && k -n $NS get pod "${h%_*}" >/dev/null; }
check "Lease kube-system/vm-dhcp-controllers taken over by one of our controller pods" wait_for 60 lease_ours

# our agent: placed, ready; then the Go project's Pod goes
check "our agent Deployment $NS/default-vmnet-agent placed" wait_for 60 k -n $NS get deploy default-vmnet-agent
up_gone() { ! k -n $NS get pod $UP_POD >/dev/null 2>&1; }
check "the Go project's agent Pod deleted by our controller" wait_for 180 up_gone
agent_ready() { [ "$(k -n $NS get deploy default-vmnet-agent -o jsonpath='{.status.readyReplicas}')" -ge 1 ] 2>/dev/null; }
check "our agent Deployment has ready pods" agent_ready
controller_logs
check "controller log: it removed the Go project's agent pod once ours was ready" \
    grep -q "removing the Go project's agent pod $NS/$UP_POD (this pool's agent is ready" "$TMP/controller.log"
check "controller log: it deleted the Go project's webhook configurations" \
    grep -q "deleted the Go project's ValidatingWebhookConfiguration $WEBHOOK" "$TMP/controller.log"
# the DHCP gap: from the deletion (the controller's log line, written as it sends the request)
# to the first ACK of ours (not from the stand-in's MAC) on the wire
del_line=$(grep -m1 "removing the Go project's agent pod $NS/$UP_POD" "$TMP/controller.log")
T_DEL=$(date -d "$(awk '{ print $1 }' <<<"$del_line")" +%s%N 2>/dev/null)
first_ack_ours() {
    awk -v t="$T_DEL" -v up="$UP_MAC" '!/^#/ && $1 >= t && $4 == 5 && $2 != up { print $1 " " $2; exit }' "$TMP/wire.txt"
}
check "the deletion's time read from the controller's log (${del_line:0:24})" test -n "$T_DEL"
check "a renewing client was ACKed by our agent after it" wait_for 60 bash -c "[ -n \"\$(awk -v t='$T_DEL' -v up='$UP_MAC' '!/^#/ && \$1 >= t && \$4 == 5 && \$2 != up' '$TMP/wire.txt')\" ]"
read -r T_ACK OUR_MAC <<<"$(first_ack_ours)"
if [ -n "$T_DEL" ] && [ -n "$T_ACK" ]; then
    GAP=$(((T_ACK - T_DEL) / 1000000))
    echo "DHCP gap (the Go project's agent Pod deleted -> first ACK from ours, $OUR_MAC, to a renewing client): $GAP ms"
    last_up=$(awk -v up="$UP_MAC" '!/^#/ && $2 == up && $4 == 5 { t = $1 } END { print t }' "$TMP/wire.txt")
    [ -n "$last_up" ] && echo "  (the stand-in's last ACK: $(((last_up - T_DEL) / 1000000)) ms after the deletion)"
fi
agent_ready_true() { [ "$(k get ippool vmnet -o jsonpath='{.status.conditions[?(@.type=="AgentReady")].status}')" = True ]; }
check "IPPool AgentReady True (the Go project's Pod gone, ours serving)" wait_for 60 agent_ready_true
mark "taken over"

stop_pid "$RENEW_PID"
# every VM renews and keeps its address
acks() { grep -c '^DHCPACK of ' "$TMP/dhclient-$1.log" 2>/dev/null || true; }
more_acks() { [ "$(acks "$1")" -gt "$2" ]; }
for vm in vm1 vm2; do
    n=$(acks $vm)
    check "$vm: dhclient renewed with our agent (ACKs $n -> more)" wait_for 30 more_acks $vm "$n"
done
check "vm1 still has $IP1" bound vm1 $IP1
check "vm2 still has its pin $IP2" bound vm2 $IP2
check "no DHCPNAK seen by either VM" bash -c "! grep -q DHCPNAK '$TMP'/dhclient-vm*.log"
check "vm1's renewals ACKed from $SIP" grep -q "DHCPACK of $IP1 from $SIP" "$TMP/dhclient-vm1.log"
# statuses: pins and the paused NIC's address kept
nic_ip() { k get vmnetcfg "$1" -o jsonpath='{.status.networkConfigs[0].allocatedIPAddress}'; }
check "VMNetCfg vm1 keeps $IP1 (status.networkConfigs)" test "$(nic_ip vm1)" = $IP1
check "VMNetCfg vm2 keeps its pin $IP2 (spec.networkConfigs[0].ipAddress and status)" bash -c \
    "[ \"\$(kubectl get vmnetcfg vm2 -o jsonpath='{.spec.networkConfigs[0].ipAddress}')\" = $IP2 ] && [ \"\$(kubectl get vmnetcfg vm2 -o jsonpath='{.status.networkConfigs[0].allocatedIPAddress}')\" = $IP2 ]"
check "VMNetCfg vm3 (paused) keeps $IP3 in its status" test "$(nic_ip vm3)" = $IP3
check "VMNetCfg vm3 still paused" test "$(k get vmnetcfg vm3 -o jsonpath='{.spec.paused}')" = true
check "IPPool status: $IP1 -> $M1" test "$(pool_alloc $IP1)" = $M1
check "IPPool status: $IP2 -> $M2" test "$(pool_alloc $IP2)" = $M2
check "IPPool status: $VNET.199 EXCLUDED" test "$(pool_alloc $VNET.199)" = EXCLUDED
# the wire: no address ACKed to two MACs, nothing but the bindings handed out
stop_pid "$CAP_PID"
awk '!/^#/ && $4 == 5 && $6 != "0.0.0.0" { print $6, $8 }' "$TMP/wire.txt" | sort -u >"$TMP/acked.txt"
check "wire: no address ACKed to two MACs ($(tr '\n' ' ' <"$TMP/acked.txt"))" \
    test -z "$(awk '{ print $1 }' "$TMP/acked.txt" | uniq -d)"
check "wire: only the bindings ACKed ($IP1 to vm1, $IP2 to vm2)" test \
    "$(tr '\n' ' ' <"$TMP/acked.txt")" = "$IP1 $M1 $IP2 $M2 "
check "wire: replies from the stand-in and from ours ($(awk '!/^#/ { print $2 }' "$TMP/wire.txt" | sort -u | tr '\n' ' '))" \
    test "$(awk '!/^#/ { print $2 }' "$TMP/wire.txt" | sort -u | wc -l)" -ge 2
mark "checked"

# --- 3. rollback -------------------------------------------------------------------------------------
check "helm uninstall ours" helm_ uninstall $REL -n $NS --timeout 3m
no_agents() { [ -z "$(k -n $NS get deploy -l network.harvesterhci.io/vm-dhcp-controller=agent -o name)" ]; }
check "no agent Deployment of ours left" wait_for 60 no_agents
check "kubectl replace the Go project's CRDs (as its controller applies them at start)" \
    k replace --validate=false -f "$UP/network.harvesterhci.io_ippools.yaml" -f "$UP/network.harvesterhci.io_virtualmachinenetworkconfigs.yaml"
crd_theirs() { ! crd_ours && k get crd virtualmachinenetworkconfigs.network.harvesterhci.io -o json |
    jq -e '.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.networkConfigs.maxItems == 4' >/dev/null; }
check "the CRDs are the Go project's again" wait_for 30 crd_theirs
sleep 2 # the API server's handler takes the new schema
k get ippool vmnet -o json >"$TMP/rb-pool.json"
k get vmnetcfg -o json >"$TMP/rb-cfgs.json"
check "IPPool reads with its fields (serverIP, pool range, router, leaseTime)" jqe --arg sip $SIP --arg v $VNET \
    '.spec.ipv4Config.serverIP == $sip and .spec.ipv4Config.pool.start == ($v + ".100") and .spec.ipv4Config.router == ($v + ".1") and .spec.ipv4Config.leaseTime == 300' "$TMP/rb-pool.json"
check "IPPool status.ipv4.allocated still lists both bindings" jqe --arg a $IP1 --arg b $IP2 --arg m1 $M1 --arg m2 $M2 \
    '.status.ipv4.allocated[$a] == $m1 and .status.ipv4.allocated[$b] == $m2' "$TMP/rb-pool.json"
cfg_q() { jq -r --arg n "$1" ".items[] | select(.metadata.name == \$n) | $2" "$TMP/rb-cfgs.json"; }
check "VMNetCfg vm2: spec.networkConfigs[0].ipAddress $IP2 (the pin)" test "$(cfg_q vm2 '.spec.networkConfigs[0].ipAddress')" = $IP2
check "VMNetCfg vm1: status.networkConfigs[0] {allocatedIPAddress, macAddress, networkName, state}" test \
    "$(cfg_q vm1 '.status.networkConfigs[0] | "\(.allocatedIPAddress) \(.macAddress) \(.networkName) \(.state)"')" = "$IP1 $M1 default/vmnet Allocated"
check "VMNetCfg vm3: still paused, its address in status" test "$(cfg_q vm3 '"\(.spec.paused) \(.status.networkConfigs[0].allocatedIPAddress)"')" = "true $IP3"
fins=$(jq -r '.metadata.finalizers // [] | .[]' "$TMP/rb-pool.json"; jq -r '.items[].metadata.finalizers // [] | .[]' "$TMP/rb-cfgs.json")
check "no finalizer left but the Go project's own names (${fins:-none})" \
    bash -c "! grep -v '^wrangler.cattle.io/vm-dhcp-\(ippool\|vmnetcfg\)-controller\$' <<<'$fins' | grep -q ."
mark "rolled back"

# leave the cluster as found: the objects, the CRDs
for r in vmnetcfg ippool; do
    k get $r -A -o name | while read -r o; do
        k patch "$o" --type merge -p '{"metadata":{"finalizers":null}}' >/dev/null
    done
done
k delete vmnetcfg --all --wait=false >/dev/null
k delete ippool --all --wait=false >/dev/null
k delete crd ippools.network.harvesterhci.io virtualmachinenetworkconfigs.network.harvesterhci.io --wait=false >/dev/null
k delete virtualmachines.kubevirt.io vm1 --wait=false >/dev/null
k delete -n default network-attachment-definitions.k8s.cni.cncf.io vmnet --wait=false >/dev/null
k delete -n kube-system lease vm-dhcp-controllers >/dev/null
k delete -n $NS configmap upstream-agent-standin >/dev/null
finish
