#!/bin/bash
# tests/cluster/cluster-lib.sh - start-up pieces for scripts that run the product on the test
# cluster of tests/cluster/k8s-up.sh (sourced; scripts/bench-cluster.sh uses it): the cluster
# started (or the images imported into the one that is up), the chart installed, the leader,
# and the pods' HTTP endpoints read from the host (pod IPs are reachable through vmdhcp-cni0).
# The same steps as tests/cluster/test-cluster-e2e.sh takes before its checks.
#
# Needs ROOT (the repository) set by the caller. Functions print their reason on failure.
VMD_STATE=/var/lib/vm-dhcp-k8s
VMD_RUN=/run/vm-dhcp-k8s
VMD_PKI=$VMD_STATE/pki
VMD_API=https://10.96.0.1:443
VMD_NS=${VMD_NS:-vm-dhcp-system}
VMD_REL=${VMD_REL:-vm-dhcp}
# shellcheck disable=SC2034 # (used by the scripts that source this)
VMD_NODE=vmdhcp-node
VMD_STARTED_CLUSTER=0
VMD_VERSION=$(cat "$ROOT/VERSION" 2>/dev/null || echo 0.1.0)
VMD_IMG=${IMAGES_DIR:-$ROOT/build/images}
VMD_IMAGES=("$VMD_IMG/vm-dhcp-controller-$VMD_VERSION.tar" "$VMD_IMG/vm-dhcp-agent-$VMD_VERSION.tar"
    "$VMD_IMG/pause-$VMD_VERSION.tar")
HELM=${HELM:-$(command -v helm || echo "$ROOT/build/tools/node_modules/.bin/helm")}
export KUBECONFIG=$VMD_STATE/admin.kubeconfig

# vmd_poll SECONDS CMD...: CMD until it succeeds, every 0.2 s, for at most SECONDS
vmd_poll() {
    local end=$((SECONDS + $1)); shift
    while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 0.2; done
    "$@"
}

# vmd_require: root, the tools and the images
vmd_require() {
    local c i
    [ "$(id -u)" = 0 ] || { echo "needs root (a Kubernetes node, network namespaces)"; return 77; }
    for c in kubectl jq curl ip; do command -v $c >/dev/null || { echo "$c is not installed"; return 1; }; done
    [ -x "$HELM" ] || { echo "helm not found (scripts/install-deps installs it)"; return 1; }
    for i in "${VMD_IMAGES[@]}"; do [ -f "$i" ] || { echo "$i missing (make image)"; return 1; }; done
}

# vmd_cluster_up LOG: start the cluster (VMD_STARTED_CLUSTER=1) or import the images into the
# one that is up; k8s-up.sh's messages go to LOG
vmd_cluster_up() {
    local i
    if [ ! -e "$VMD_RUN/up" ]; then
        VMD_STARTED_CLUSTER=1
        "$ROOT/tests/cluster/k8s-up.sh" "${VMD_IMAGES[@]}" >/dev/null 2>"$1" ||
            { echo "the cluster did not come up: $(grep '^k8s-' "$1" | tail -n 1) (logs: $VMD_STATE/log)"; return 1; }
    else
        for i in "${VMD_IMAGES[@]}"; do
            ctr --address "$VMD_RUN/containerd.sock" -n k8s.io images import --all-platforms "$i" >/dev/null ||
                { echo "cannot import $i"; return 1; }
        done
    fi
}

# vmd_cluster_down: stop the cluster if vmd_cluster_up started it (KEEP_CLUSTER=1 keeps it)
vmd_cluster_down() {
    if [ "$VMD_STARTED_CLUSTER" = 1 ] && [ "${KEEP_CLUSTER:-0}" != 1 ]; then
        "$ROOT/tests/cluster/k8s-down.sh" 2>/dev/null
    fi
}

# vmd_chart_install LOG [HELM ARGS...]: helm install the chart, both controllers Ready, a leader
vmd_chart_install() {
    local log=$1; shift
    "$HELM" install "$VMD_REL" "$ROOT/charts/vm-dhcp" -n "$VMD_NS" --create-namespace --wait \
        --timeout 5m "$@" >>"$log" 2>&1 || { echo "helm install failed: $(tail -n 3 "$log")"; return 1; }
    vmd_poll 120 vmd_leader_pod >/dev/null || { echo "no controller pod holds the Lease"; return 1; }
}

# vmd_leader_pod: the controller pod holding the leader Lease (holder identity HOSTNAME_PID)
vmd_leader_pod() {
    local l
    l=$(kubectl -n kube-system get lease vm-dhcp-controllers -o jsonpath='{.spec.holderIdentity}' 2>/dev/null) &&
        [ -n "$l" ] && kubectl -n "$VMD_NS" get pod "${l%_*}" >/dev/null 2>&1 && echo "${l%_*}"
}

vmd_pod_ip() { kubectl -n "$VMD_NS" get pod "$1" -o jsonpath='{.status.podIP}'; }

# vmd_metrics IP: the /metrics text of the pod at IP (port 8080, both programs)
vmd_metrics() { curl -s -m 5 "http://$1:8080/metrics"; }

# vmd_agent_pods POOL: the pool's Running agent pods that are Ready and not being deleted
vmd_agent_pods() {
    kubectl -n "$VMD_NS" get pods -l "network.harvesterhci.io/ippool-name=$1" -o json |
        jq -r '.items[] | select(.status.phase == "Running" and .metadata.deletionTimestamp == null
            and (.status.containerStatuses[0].ready // false)) | .metadata.name'
}

# vmd_agent_holder DEPLOYMENT: the agent pod holding the pool's Lease (named like the Deployment)
vmd_agent_holder() {
    kubectl -n "$VMD_NS" get lease "$1" -o jsonpath='{.spec.holderIdentity}' 2>/dev/null
}

# vmd_api METHOD PATH [CURL ARGS...]: a request to the API server as the admin (body on stdout)
vmd_api() {
    local m=$1 p=$2; shift 2
    curl -sS -m 60 --cacert "$VMD_PKI/ca.crt" --cert "$VMD_PKI/admin.crt" --key "$VMD_PKI/admin.key" \
        -X "$m" -H 'Content-Type: application/json' "$@" "$VMD_API$p"
}

# vmd_curl_auth: the same credentials as lines of a curl config (curl -K)
vmd_curl_auth() {
    printf 'cacert = "%s"\ncert = "%s"\nkey = "%s"\n' "$VMD_PKI/ca.crt" "$VMD_PKI/admin.crt" "$VMD_PKI/admin.key"
}
