#!/bin/bash
# tests/cluster/test-admission-125.sh - the admission table (tests/cluster/admission-table.sh)
# against kube-apiserver 1.25 (../shared/k8s), where the CRDs' CEL rules are evaluated too: the
# two layers must not contradict each other.
#
# Starts the API server (PORT, ETCD_PORT: default 26453, 22389), installs crds/*.yaml and the
# NAD and VirtualMachine stand-in CRDs, runs build/vm-dhcp-controller on this host (its
# kubeconfig; --no-agent, --no-leader-election; the webhook on 127.0.0.1:<free port>, certificate
# name IP:127.0.0.1), creates the chart's webhook configurations (from `helm template`, so they
# stay the chart's; the built-in copy below when helm or the chart cannot give them) with
# clientConfig.url https://127.0.0.1:<port>/mutate|/validate (no Service: the API server has no
# kube-proxy), waits until the controller has patched their caBundle, then runs the table.
# CTRL_EXTRA_ARGS: more controller flags. Stops what it started by PID. Exit 77 (skipped, with the reason) when ../shared/k8s, the
# controller binary, kubectl, jq or curl are missing.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
K8S_DIR=${VMD_K8S_DIR:-$ROOT/../shared/k8s}
CTRL=${CTRL:-$ROOT/build/vm-dhcp-controller}
Y2J=${Y2J:-$ROOT/build/e2e/yaml2json}
HELM=${HELM:-$(command -v helm || echo "$ROOT/build/tools/node_modules/.bin/helm")}
export PORT=${PORT:-26453} ETCD_PORT=${ETCD_PORT:-22389}
REL=vm-dhcp              # the names `helm install vm-dhcp` gives (fullname vm-dhcp)
CNS=vm-dhcp-system       # the controller's namespace (its Secret)
NAME=$REL-admission      # both webhook configurations
SECRET=$REL-admission-tls  # the chart's name (vm-dhcp.webhookSecret)
SERVICE=$REL-webhook
TMP=$(mktemp -d /tmp/vmd-admission-125.XXXXXX)
CPID=""
STARTED=""

skip() { echo "SKIP: $*"; exit 77; }
cleanup() {
    trap '' INT TERM
    if [ -n "$CPID" ] && kill -0 "$CPID" 2>/dev/null; then
        kill -TERM "$CPID" 2>/dev/null
        for _ in $(seq 1 100); do kill -0 "$CPID" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$CPID" 2>/dev/null
        wait "$CPID" 2>/dev/null
    fi
    [ -n "$STARTED" ] && "$K8S_DIR/apiserver-down" "$TMP/k8s" >/dev/null 2>&1
    [ "${KEEP_LOGS:-0}" = 1 ] && { echo "logs kept in $TMP"; return; }
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -x "$K8S_DIR/apiserver-up" ] || skip "$K8S_DIR (kube-apiserver 1.25) is absent"
for c in kubectl jq curl openssl etcd xz; do command -v $c >/dev/null || skip "$c is not installed"; done
[ -x "$CTRL" ] || skip "$CTRL is not built (make programs)"
[ -x "$Y2J" ] || skip "$Y2J is not built (make build/e2e/yaml2json)"
"$CTRL" --help 2>&1 | grep -q -- --webhook-listen || skip "$CTRL has no admission webhook (--webhook-listen)"

# a TCP port nobody listens on (127.0.0.1)
free_port() {
    local p
    for _ in $(seq 1 50); do
        p=$((20000 + RANDOM % 20000))
        (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
    done
    return 1
}
WPORT=$(free_port) && HPORT=$(free_port) || { echo "FAIL: no free port"; exit 1; }
[ "$WPORT" != "$HPORT" ] || HPORT=$((HPORT + 1))

t0=$SECONDS
if ! "$K8S_DIR/apiserver-up" "$TMP/k8s" >"$TMP/apiserver-up.log" 2>&1; then
    echo "FAIL: kube-apiserver 1.25 did not start:"; tail -n 20 "$TMP/apiserver-up.log"; exit 1
fi
STARTED=1
export KUBECONFIG=$TMP/k8s/kubeconfig
k() { kubectl --request-timeout=30s "$@"; }
fail() {
    echo "FAIL: $*"
    [ -f "$TMP/controller.log" ] && { echo "--- controller log (last 30 lines)"; tail -n 30 "$TMP/controller.log"; }
    exit 1
}

# --- CRDs -----------------------------------------------------------------------------------------
k apply -f crds/ -f tests/cluster/nad-crd.yaml -f tests/cluster/kubevirt-vm-crd.yaml >"$TMP/crds.log" 2>&1 ||
    { cat "$TMP/crds.log"; fail "installing the CRDs"; }
k wait --for condition=Established --timeout=60s crd --all >/dev/null 2>&1 || fail "CRDs not Established"
k create namespace $CNS >/dev/null 2>&1 || fail "namespace $CNS"

# --- the webhook configurations: the chart's, reached by url -------------------------------------
# to_url: on stdin one configuration (JSON), on stdout the same with each webhook's clientConfig
# a url to this host's controller (the service's path kept), no caBundle, no cert-manager
# annotation
to_url() {
    jq -c --arg base "https://127.0.0.1:$WPORT" --arg name "$NAME" '
        .metadata = {name: $name, labels: (.metadata.labels // {})}
        | .webhooks |= map(.clientConfig = {url: ($base + (.clientConfig.service.path // .clientConfig.url // "/" | sub("^https://[^/]*"; "")))})'
}
: >"$TMP/webhooks.json"
why_builtin="helm is not installed"
if [ -x "$HELM" ] && env -u KUBECONFIG "$HELM" template $REL charts/vm-dhcp -n $CNS >"$TMP/chart.yaml" 2>"$TMP/helm.err"; then
    why_builtin="the chart renders no webhook configuration"
    "$Y2J" "$TMP/chart.yaml" 2>/dev/null |
        jq -c 'select(.kind == "MutatingWebhookConfiguration" or .kind == "ValidatingWebhookConfiguration")' |
        while IFS= read -r doc; do to_url <<<"$doc"; done >"$TMP/webhooks.json"
elif [ -x "$HELM" ]; then
    why_builtin="helm template failed: $(head -c 200 "$TMP/helm.err" | tr '\n' ' ')"
fi
if [ -s "$TMP/webhooks.json" ]; then
    SOURCE="the chart (helm template)"
else
    # The chart's rules, for a clone without helm (keep in step with charts/vm-dhcp/templates):
    # IPPool CREATE is mutated (upstream's defaults); IPPool CREATE/UPDATE/DELETE, VMNetCfg
    # CREATE/UPDATE (failurePolicy Fail) and KubeVirt VirtualMachine CREATE/UPDATE (static-ip
    # annotations; Ignore, so VMs are never blocked) validated; timeoutSeconds 5.
    SOURCE="the built-in copy of the chart's rules ($why_builtin)"
    common='"sideEffects":"None","timeoutSeconds":5,"admissionReviewVersions":["v1","v1beta1"],"matchPolicy":"Equivalent"'
    cat >"$TMP/webhooks.json" <<EOF
{"apiVersion":"admissionregistration.k8s.io/v1","kind":"MutatingWebhookConfiguration","metadata":{"name":"x"},"webhooks":[{"name":"ippools.vm-dhcp.network.harvesterhci.io",$common,"failurePolicy":"Fail","reinvocationPolicy":"Never","clientConfig":{"service":{"path":"/mutate"}},"rules":[{"apiGroups":["network.harvesterhci.io"],"apiVersions":["v1alpha1"],"resources":["ippools"],"operations":["CREATE"],"scope":"Namespaced"}]}]}
{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"x"},"webhooks":[{"name":"ippools.vm-dhcp.network.harvesterhci.io",$common,"failurePolicy":"Fail","clientConfig":{"service":{"path":"/validate"}},"rules":[{"apiGroups":["network.harvesterhci.io"],"apiVersions":["v1alpha1"],"resources":["ippools"],"operations":["CREATE","UPDATE","DELETE"],"scope":"Namespaced"}]},{"name":"virtualmachinenetworkconfigs.vm-dhcp.network.harvesterhci.io",$common,"failurePolicy":"Fail","clientConfig":{"service":{"path":"/validate"}},"rules":[{"apiGroups":["network.harvesterhci.io"],"apiVersions":["v1alpha1"],"resources":["virtualmachinenetworkconfigs"],"operations":["CREATE","UPDATE"],"scope":"Namespaced"}]},{"name":"virtualmachines.vm-dhcp.network.harvesterhci.io",$common,"failurePolicy":"Ignore","clientConfig":{"service":{"path":"/validate"}},"rules":[{"apiGroups":["kubevirt.io"],"apiVersions":["v1"],"resources":["virtualmachines"],"operations":["CREATE","UPDATE"],"scope":"Namespaced"}]}]}
EOF
    while IFS= read -r doc; do to_url <<<"$doc"; done <"$TMP/webhooks.json" >"$TMP/webhooks.url.json"
    mv "$TMP/webhooks.url.json" "$TMP/webhooks.json"
fi
kinds=$(jq -r .kind "$TMP/webhooks.json" | sort | tr '\n' ' ')
[ "$kinds" = "MutatingWebhookConfiguration ValidatingWebhookConfiguration " ] ||
    fail "expected one mutating and one validating configuration, got: $kinds"
jq -s '{apiVersion: "v1", kind: "List", items: .}' "$TMP/webhooks.json" >"$TMP/webhooks.list.json"
k apply -f "$TMP/webhooks.list.json" >"$TMP/webhooks.log" 2>&1 || { cat "$TMP/webhooks.log"; fail "webhook configurations"; }
echo "webhook configurations $NAME from $SOURCE, url https://127.0.0.1:$WPORT"

# --- the controller ---------------------------------------------------------------------------
"$CTRL" --kubeconfig "$KUBECONFIG" --namespace $CNS --agent-image vm-dhcp-agent:unused \
    --no-agent --no-leader-election --listen "127.0.0.1:$HPORT" \
    --webhook-listen "127.0.0.1:$WPORT" --webhook-cert-san IP:127.0.0.1 \
    --webhook-secret $SECRET --webhook-service $SERVICE \
    --webhook-mutating $NAME --webhook-validating $NAME \
    --service-cidr "${ADMISSION_SERVICE_CIDR:-10.53.0.0/16}" ${CTRL_EXTRA_ARGS:-} >"$TMP/controller.log" 2>&1 &
CPID=$!
# every webhook of both configurations has a caBundle
ca_patched() {
    local t
    for t in mutatingwebhookconfiguration validatingwebhookconfiguration; do
        k get $t $NAME -o json 2>/dev/null |
            jq -e '(.webhooks | length) > 0 and all(.webhooks[]; (.clientConfig.caBundle // "") != "")' \
                >/dev/null || return 1
    done
}
ready=""
for _ in $(seq 1 120); do
    kill -0 "$CPID" 2>/dev/null || fail "the controller exited"
    if ca_patched && curl -sf "http://127.0.0.1:$HPORT/readyz" >/dev/null; then ready=1; break; fi
    sleep 0.5
done
[ -n "$ready" ] || fail "caBundle not patched or /readyz not ok within 60 s ($(curl -s "http://127.0.0.1:$HPORT/readyz"))"
# the serving certificate names 127.0.0.1 and is signed by the CA of the Secret
k -n $CNS get secret $SECRET -o jsonpath='{.data.ca\.crt}' | base64 -d >"$TMP/webhook-ca.crt"
curl -sS --cacert "$TMP/webhook-ca.crt" -o /dev/null "https://127.0.0.1:$WPORT/validate" -X POST -d '{}' 2>"$TMP/curl.err" ||
    fail "the webhook's certificate does not verify against the Secret's ca.crt: $(cat "$TMP/curl.err")"
echo "controller up, caBundle patched in $((SECONDS - t0)) s"

# ADMISSION_TABLE: another script to run against this setup (the controller's metrics URL in
# ADMISSION_CONTROLLER_METRICS)
ADMISSION_SERVICE_CIDR=${ADMISSION_SERVICE_CIDR:-10.53.0.0/16} \
    ADMISSION_CONTROLLER_METRICS="http://127.0.0.1:$HPORT/metrics" \
    "${ADMISSION_TABLE:-$ROOT/tests/cluster/admission-table.sh}" vmd-admission
rc=$?
kill -0 "$CPID" 2>/dev/null || { echo "FAIL: the controller exited during the table"; rc=1; }
echo "test-admission-125: $((SECONDS - t0)) s"
[ $rc = 0 ] || { echo "--- controller log (last 30 lines)"; tail -n 30 "$TMP/controller.log"; }
exit $rc
