#!/bin/bash
# tests/cluster/k8s-up.sh [IMAGE.tar...] - start a real single-node Kubernetes on this machine,
# built from Debian packages only, and import OCI image archives into its container runtime.
#
#   etcd (etcd-server)                127.0.0.1:12379
#   kube-apiserver                    https://10.96.0.1:443 (RBAC + Node authorizer, service-
#                                     account tokens; 10.96.0.1 is the `kubernetes` Service IP,
#                                     put on a port-less bridge so pods reach it without kube-proxy)
#   kube-controller-manager, kube-scheduler
#   containerd + runc (CRI)           unix:///run/vm-dhcp-k8s/containerd.sock
#   kubelet                           node "vmdhcp-node"
#   CNI (containernetworking-plugins) eth0: bridge vmdhcp-cni0, 10.88.0.0/16 (pod network)
#                                     eth1: bridge vmdhcp-vm0, no IPAM (the "VM network")
#
# Stand-ins for what Debian does not package (say so wherever results are reported):
#   - Multus: containerd attaches a second CNI network (max_conf_num = 2) to every pod, so every
#     pod gets an `eth1` on the bridge vmdhcp-vm0, the way Multus would attach the pool's NAD.
#     The NetworkAttachmentDefinition CRD is installed so NADs can be created and read.
#   - kube-proxy: not built; the `kubernetes` Service is reached directly (the API server
#     listens on the Service IP and port). The admission webhook's Service (the chart's
#     <fullname>-webhook) is called by the API server itself: --enable-aggregator-routing=true
#     makes it resolve a Service to one of its ready Endpoints (a pod IP and the target port),
#     as kube-proxy would route the ClusterIP, and the host reaches pod IPs through the bridge
#     vmdhcp-cni0 (the pods' gateway, 10.88.0.1). Pods cannot use other ClusterIPs.
#   - KubeVirt: VMs are network namespaces with a veth on vmdhcp-vm0 (tests/cluster/*.sh);
#     only a schema-less VirtualMachine CRD is installed, for the controller's informer.
#   - CoreDNS: none; pods use the node's resolv.conf.
#
# Kubernetes binaries come from tests/cluster/k8s-build.sh (built once, cached). State lives
# in /var/lib/vm-dhcp-k8s, PIDs and sockets in /run/vm-dhcp-k8s; tests/cluster/k8s-down.sh
# stops every process this started, by PID, and removes the interfaces.
# Prints `export KUBECONFIG=...` for the admin. Needs root. Exit 0 once the node is Ready.
set -euo pipefail
cd "$(dirname "$0")/../.."
STATE=/var/lib/vm-dhcp-k8s
RUN=/run/vm-dhcp-k8s
LOGS=$STATE/log
PKI=$STATE/pki
NODE=vmdhcp-node
SVC_IP=10.96.0.1
API=https://$SVC_IP:443
ETCD_PORT=12379
CTD_SOCK=$RUN/containerd.sock
PAUSE_IMAGE=${VMDHCP_PAUSE_IMAGE:-docker.io/vm-dhcp/pause:$(cat VERSION 2>/dev/null || echo 0.1.0)}
export KUBECONFIG=$STATE/admin.kubeconfig

log() { echo "k8s-up: $(date +%T) $*" >&2; }
die() { log "$*"; exit 1; }
# any other command that fails says where (set -e alone would exit without a word)
trap 'rc=$?; log "failed (exit $rc) at line $LINENO: $BASH_COMMAND"' ERR

[ "$(id -u)" = 0 ] || { echo "k8s-up: needs root" >&2; exit 77; }
if [ -e "$RUN/up" ]; then die "already up ($RUN/up); tests/cluster/k8s-down.sh first"; fi

# --- packages ---------------------------------------------------------------------------------
pkgs="etcd-server containerd runc containernetworking-plugins openssl curl iproute2 jq"
command -v kubectl >/dev/null || pkgs="$pkgs kubernetes-client"
missing=()
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    policy_added=0
    if [ ! -e /usr/sbin/policy-rc.d ]; then # never start the packages' own services
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; policy_added=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 ||
        { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; } ||
        { [ $policy_added = 0 ] || rm -f /usr/sbin/policy-rc.d; die "apt-get install ${missing[*]} failed (above)"; }
    [ $policy_added = 0 ] || rm -f /usr/sbin/policy-rc.d
fi
BIN=$(tests/cluster/k8s-build.sh) || die "the Kubernetes binaries could not be built: tests/cluster/k8s-build.sh failed (its reason above)"

rm -rf "$STATE" "$RUN"
mkdir -p "$STATE" "$RUN" "$LOGS" "$PKI" "$STATE/cni"
touch "$RUN/up"

# start NAME CMD...: run in the background with its own log, remember the PID
start() {
    local name=$1; shift
    setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null &
    echo $! >"$RUN/$name.pid"
    log "started $name (pid $!)"
}
# wait_for WHAT SECONDS CMD...: poll CMD until it succeeds (a bounded start-up wait, not a test)
wait_for() {
    local what=$1 n=$2; shift 2
    for _ in $(seq "$n"); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 1
    done
    log "$what not ready after $n s; last lines of the logs:"
    for f in "$LOGS"/*.log; do echo "--- $f" >&2; tail -n 15 "$f" >&2; done
    exit 1
}

# --- network --------------------------------------------------------------------------------
ip link add vmdhcp-k8s0 type bridge # no dummy driver on every kernel; a port-less bridge holds a local address as well
ip addr add $SVC_IP/32 dev vmdhcp-k8s0
ip link set vmdhcp-k8s0 up
ip link add vmdhcp-vm0 type bridge
ip link set vmdhcp-vm0 up
echo 1 >/proc/sys/net/ipv4/ip_forward

# --- PKI (openssl) ----------------------------------------------------------------------------
cert() { # cert NAME CN [O] [SAN]
    local n=$1 cn=$2 o=${3:-} san=${4:-} subj ext
    subj="/CN=$cn"; [ -n "$o" ] && subj="/O=$o$subj"
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
        -keyout "$PKI/$n.key" -out "$PKI/$n.csr" -subj "$subj" 2>/dev/null
    ext="$PKI/$n.ext"
    { echo "basicConstraints=CA:FALSE"
      echo "keyUsage=critical,digitalSignature,keyEncipherment"
      echo "extendedKeyUsage=serverAuth,clientAuth"
      [ -n "$san" ] && echo "subjectAltName=$san"; } >"$ext"
    openssl x509 -req -in "$PKI/$n.csr" -CA "$PKI/ca.crt" -CAkey "$PKI/ca.key" -CAcreateserial \
        -days 2 -sha256 -extfile "$ext" -out "$PKI/$n.crt" 2>/dev/null
}
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
    -keyout "$PKI/ca.key" -out "$PKI/ca.crt" -subj "/CN=vm-dhcp-test-cluster-ca" 2>/dev/null
cert apiserver kube-apiserver "" \
    "IP:$SVC_IP,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
cert admin kubernetes-admin system:masters
cert apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
cert controller-manager system:kube-controller-manager
cert scheduler system:kube-scheduler
cert kubelet "system:node:$NODE" system:nodes
openssl genrsa -out "$PKI/sa.key" 2048 2>/dev/null
openssl rsa -in "$PKI/sa.key" -pubout -out "$PKI/sa.pub" 2>/dev/null
kubeconfig() { # kubeconfig FILE CERTNAME
    cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: vmdhcp
  cluster:
    server: $API
    certificate-authority: $PKI/ca.crt
users:
- name: $2
  user:
    client-certificate: $PKI/$2.crt
    client-key: $PKI/$2.key
contexts:
- name: vmdhcp
  context: {cluster: vmdhcp, user: $2}
current-context: vmdhcp
EOF
}
kubeconfig "$STATE/admin.kubeconfig" admin
kubeconfig "$STATE/controller-manager.kubeconfig" controller-manager
kubeconfig "$STATE/scheduler.kubeconfig" scheduler
kubeconfig "$STATE/kubelet.kubeconfig" kubelet

# --- etcd, control plane ------------------------------------------------------------------------
start etcd etcd --name vmdhcp --data-dir "$STATE/etcd" \
    --listen-client-urls http://127.0.0.1:$ETCD_PORT --advertise-client-urls http://127.0.0.1:$ETCD_PORT \
    --listen-peer-urls http://127.0.0.1:12380 --initial-advertise-peer-urls http://127.0.0.1:12380 \
    --initial-cluster vmdhcp=http://127.0.0.1:12380 --listen-metrics-urls http://127.0.0.1:12381
wait_for etcd 60 curl -sf http://127.0.0.1:$ETCD_PORT/health

start kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers=http://127.0.0.1:$ETCD_PORT \
    --bind-address=$SVC_IP --secure-port=443 --advertise-address=$SVC_IP --insecure-port=0 \
    --tls-cert-file="$PKI/apiserver.crt" --tls-private-key-file="$PKI/apiserver.key" \
    --client-ca-file="$PKI/ca.crt" \
    --kubelet-client-certificate="$PKI/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$PKI/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types=InternalIP \
    --service-cluster-ip-range=10.96.0.0/16 \
    --service-account-key-file="$PKI/sa.pub" --service-account-signing-key-file="$PKI/sa.key" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --enable-aggregator-routing=true \
    --allow-privileged=true --profiling=false
wait_for kube-apiserver 120 curl -sf --cacert "$PKI/ca.crt" --cert "$PKI/admin.crt" --key "$PKI/admin.key" "$API/readyz"

start kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$STATE/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$STATE/controller-manager.kubeconfig" \
    --authorization-kubeconfig="$STATE/controller-manager.kubeconfig" \
    --leader-elect=false --port=0 --bind-address=127.0.0.1 \
    --service-account-private-key-file="$PKI/sa.key" --root-ca-file="$PKI/ca.crt" \
    --use-service-account-credentials=true --controllers='*' \
    --node-monitor-grace-period=20s --pod-eviction-timeout=30s --profiling=false
start kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig="$STATE/scheduler.kubeconfig" \
    --authentication-kubeconfig="$STATE/scheduler.kubeconfig" \
    --authorization-kubeconfig="$STATE/scheduler.kubeconfig" \
    --leader-elect=false --port=0 --bind-address=127.0.0.1 --profiling=false

# --- containerd + CNI -------------------------------------------------------------------------
cat >"$STATE/cni/10-vmdhcp-pods.conflist" <<'EOF'
{ "cniVersion": "0.4.0", "name": "vmdhcp-pods",
  "plugins": [ { "type": "bridge", "bridge": "vmdhcp-cni0", "isGateway": true, "ipMasq": false,
                 "hairpinMode": true,
                 "ipam": { "type": "host-local", "ranges": [[{ "subnet": "10.88.0.0/16" }]],
                           "routes": [{ "dst": "0.0.0.0/0" }],
                           "dataDir": "/var/lib/vm-dhcp-k8s/cni-ipam" } } ] }
EOF
# The "VM network": layer 2 only, what Multus would attach from the pool's NAD.
cat >"$STATE/cni/20-vmdhcp-vmnet.conflist" <<'EOF'
{ "cniVersion": "0.4.0", "name": "vmdhcp-vmnet",
  "plugins": [ { "type": "bridge", "bridge": "vmdhcp-vm0", "isGateway": false, "ipMasq": false,
                 "ipam": {} } ] }
EOF
restrict_oom=false
# CAP_SYS_RESOURCE is bit 24 of CapEff
[ $(( 0x$(awk '/^CapEff/ { print $2 }' /proc/self/status) >> 24 & 1 )) = 1 ] || restrict_oom=true
cat >"$STATE/containerd.toml" <<EOF
version = 2
root = "$STATE/containerd"
state = "$RUN/containerd"
[grpc]
  address = "$CTD_SOCK"
[ttrpc]
  address = "$RUN/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  enable_unprivileged_ports = false
  enable_unprivileged_icmp = false
  disable_apparmor = true
  # the kubelet asks for oom_score_adj -998 for sandboxes; without CAP_SYS_RESOURCE (a machine
  # that is itself a container) containerd must not go below its own value
  restrict_oom_score_adj = $restrict_oom
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$RUN/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$STATE/cni"
    max_conf_num = 2
EOF
start containerd containerd --config "$STATE/containerd.toml"
wait_for containerd 60 ctr --address "$CTD_SOCK" version

for img in "$@"; do
    log "importing $img"
    ctr --address "$CTD_SOCK" -n k8s.io images import --all-platforms "$img" >&2
done

# --- kubelet ------------------------------------------------------------------------------------
cat >"$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $SVC_IP
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: "$PKI/ca.crt"}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
failSwapOn: false
resolvConf: /etc/resolv.conf
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "50Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
nodeStatusUpdateFrequency: 4s
serializeImagePulls: false
EOF
start kubelet "$BIN/kubelet" --config="$STATE/kubelet.yaml" --kubeconfig="$STATE/kubelet.kubeconfig" \
    --root-dir="$STATE/kubelet" --cert-dir="$STATE/kubelet/pki" \
    --container-runtime=remote --container-runtime-endpoint="unix://$CTD_SOCK" \
    --pod-infra-container-image="$PAUSE_IMAGE" \
    --hostname-override=$NODE --node-ip=$SVC_IP --v=1
node_ready() {
    [ "$(kubectl get node $NODE -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null)" = True ]
}
wait_for "node $NODE" 180 node_ready

# The NetworkAttachmentDefinition CRD (Multus's API, so NADs can be created and read) and a
# stand-in VirtualMachine CRD (KubeVirt's API, which the controller watches).
kubectl apply -f tests/cluster/nad-crd.yaml -f tests/cluster/kubevirt-vm-crd.yaml >&2
wait_for "NAD and VirtualMachine CRDs" 60 kubectl get network-attachment-definitions,virtualmachines.kubevirt.io -A
log "node $NODE is Ready; API server $API"
echo "export KUBECONFIG=$KUBECONFIG"
