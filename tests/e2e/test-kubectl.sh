#!/bin/bash
# tests/e2e/test-kubectl.sh - what a user runs: kubectl against the test API server.
#   kubectl apply --dry-run=client -f crds/        both CRDs accepted (dry run)
#   kubectl apply -f crds/ ; kubectl apply -f examples/   every example manifest accepted
#   kubectl get ippl / vmnetcfgs                   short names served
# Client-side OpenAPI validation is off (--validate=false): the test API server serves no
# /openapi documents (docs/apiserver.md). Needs kubectl (skips, exit 77, without it); no root.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
command -v kubectl >/dev/null || { echo "SKIP: kubectl is not installed"; exit 77; }
[ -x "$BUILD/test-apiserver" ] || { echo "FAIL: $BUILD/test-apiserver not built"; exit 1; }
TMP=$(mktemp -d /tmp/vmdhcp-kubectl.XXXXXX)
pass=0 fail=0
check() {
    local what=$1; shift
    if "$@" >>"$TMP/out" 2>&1; then echo "PASS $what"; pass=$((pass + 1))
    else echo "FAIL $what"; tail -n 5 "$TMP/out" | sed 's/^/    /'; fail=$((fail + 1)); fi
}
"$BUILD/test-apiserver" --listen 127.0.0.1:0 --state-dir "$TMP/api" --log-level warn 2>"$TMP/api.log" &
API=$!
trap 'kill $API 2>/dev/null; wait $API 2>/dev/null; rm -rf "$TMP"' EXIT
for i in $(seq 100); do [ -s "$TMP/api/port" ] && break; sleep 0.1; done
export KUBECONFIG=$TMP/kubeconfig
# a kubeconfig exactly as `kubectl config view --raw` writes it
kubectl --kubeconfig "$TMP/api/kubeconfig" config view --raw >"$KUBECONFIG"
# discovery cached in the test's folder, not in the user's ~/.kube/cache
k() { kubectl --request-timeout=20s --cache-dir "$TMP/kube-cache" "$@"; }

dry() { k apply --dry-run=client --validate=false -f "$ROOT/crds/" | tee "$TMP/dry" && [ "$(grep -c 'created (dry run)' "$TMP/dry")" = 2 ]; }
check "kubectl apply --dry-run=client -f crds/: both CRDs" dry
check "kubectl apply -f crds/" k apply --validate=false -f "$ROOT/crds/"
established() { k wait --for=condition=Established --timeout=20s crd/ippools.network.harvesterhci.io crd/virtualmachinenetworkconfigs.network.harvesterhci.io; }
check "CRDs Established" established
for f in "$ROOT"/examples/*.yaml; do
    # the NAD and KubeVirt kinds need their own CRDs, which a test server does not have
    grep -qE '^kind: (IPPool|VirtualMachineNetworkConfig)$' "$f" || continue
    [ "$(basename "$f")" = local-mode.yaml ] && continue
    check "kubectl apply -f examples/$(basename "$f")" k apply --validate=false -f "$f"
done
# (the printer columns need server-side Table output, which the test server does not produce)
# kubectl before 1.21 (Debian 12's kubernetes-client is 1.20) resolves short names from its
# discovery cache only, which still holds the server's resources from before the CRDs (the dry
# run above) for 10 minutes: dropped first, as that time would
short() { rm -rf "$TMP/kube-cache" && k get ippl -A | tee "$TMP/get" && grep -q net-48 "$TMP/get" && k get vmnetcfgs -A | grep -q vm-web; }
check "short names ippl, vmnetcfgs" short
echo "test-kubectl.sh: $pass passed, $fail failed, 0 skipped"
[ $fail = 0 ]
