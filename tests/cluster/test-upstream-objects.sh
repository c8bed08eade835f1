#!/bin/bash
# tests/cluster/test-upstream-objects.sh [KUBECONFIG] - objects as harvester/vm-dhcp-controller
# ("upstream") has them, applied with our CRDs, read back unchanged.
#
# Installs crds/*.yaml (create, or replace when present; waits for Established), then for every
# IPPool and VirtualMachineNetworkConfig in tests/data/upstream/*.yaml (upstream's README, the
# objects its Go tests build, objects shaped as its controller writes them: see the README there)
# and in examples/*.yaml: creates it in a scratch namespace, writes its status (when it has one)
# through the status subresource with a PUT, reads it back and compares spec and status exactly
# (jq -S; metadata aside). One PASS/FAIL line per object, then "N passed, M failed".
#
# A fixture whose header has "# apiserver: >= 1.N" is skipped (counted) on older API servers.
# With KUBECONFIG: that cluster (the real 1.20 cluster of tests/cluster: CEL rules are dropped
# there, the schema and pruning are not). Without: starts kube-apiserver 1.25 from
# ../shared/k8s (PORT, ETCD_PORT: default 26443, 22379), runs, stops it; exit 77 (skipped) when
# that folder is absent. Needs curl, jq and build/e2e/yaml2json (make builds it). Talks to the
# API server with curl and the kubeconfig's certificates, so any kubectl version will do.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
Y2J=${Y2J:-$ROOT/build/e2e/yaml2json}
NS=${UPSTREAM_OBJECTS_NS:-vmd-upstream-objects}
TMP=$(mktemp -d /tmp/vmd-upstream-objects.XXXXXX)
K8S_DIR=${VMD_K8S_DIR:-$ROOT/../shared/k8s}
STARTED=""

cleanup() {
    [ -n "$STARTED" ] && "$K8S_DIR/apiserver-down" "$TMP/k8s" >/dev/null 2>&1
    rm -rf "$TMP"
}
trap cleanup EXIT

for c in curl jq; do
    command -v $c >/dev/null || { echo "SKIP: $c not installed"; exit 77; }
done
[ -x "$Y2J" ] || { echo "FAIL: $Y2J missing (make build/e2e/yaml2json)"; exit 1; }

KCFG=${1:-}
if [ -z "$KCFG" ]; then
    [ -x "$K8S_DIR/apiserver-up" ] ||
        { echo "SKIP: $K8S_DIR (kube-apiserver 1.25) is absent"; exit 77; }
    export PORT=${PORT:-26443} ETCD_PORT=${ETCD_PORT:-22379}
    if ! "$K8S_DIR/apiserver-up" "$TMP/k8s" >"$TMP/apiserver-up.log" 2>&1; then
        echo "FAIL: kube-apiserver 1.25 did not start:"; tail -n 20 "$TMP/apiserver-up.log"
        exit 1
    fi
    STARTED=1
    KCFG=$TMP/k8s/kubeconfig
fi
[ -r "$KCFG" ] || { echo "FAIL: cannot read kubeconfig $KCFG"; exit 1; }

# --- the kubeconfig's current context: server, CA, client certificate or token -----------------
"$Y2J" "$KCFG" >"$TMP/kubeconfig.json" || { echo "FAIL: $KCFG does not parse"; exit 1; }
kc() { jq -r "$1 // empty" "$TMP/kubeconfig.json"; }
ctx=$(kc '."current-context"')
[ -n "$ctx" ] || ctx=$(kc '.contexts[0].name')
cluster=$(kc ".contexts[] | select(.name == \"$ctx\") | .context.cluster")
user=$(kc ".contexts[] | select(.name == \"$ctx\") | .context.user")
C=".clusters[] | select(.name == \"$cluster\") | .cluster"
U=".users[] | select(.name == \"$user\") | .user"
SERVER=$(kc "$C.server")
[ -n "$SERVER" ] || { echo "FAIL: no server in $KCFG (context $ctx)"; exit 1; }
kdir=$(dirname "$KCFG")
# file FIELD DATAFIELD OUT: a path (relative to the kubeconfig) or base64 data, as a file path
file() {
    local p d
    p=$(kc "$1") d=$(kc "$2")
    if [ -n "$d" ]; then base64 -d <<<"$d" >"$3"; echo "$3"
    elif [ -n "$p" ]; then case $p in /*) echo "$p" ;; *) echo "$kdir/$p" ;; esac
    fi
}
CURL=(curl -sS --max-time 30)
ca=$(file "$C.\"certificate-authority\"" "$C.\"certificate-authority-data\"" "$TMP/ca.crt")
if [ -n "$ca" ]; then CURL+=(--cacert "$ca"); else CURL+=(-k); fi
cert=$(file "$U.\"client-certificate\"" "$U.\"client-certificate-data\"" "$TMP/client.crt")
key=$(file "$U.\"client-key\"" "$U.\"client-key-data\"" "$TMP/client.key")
[ -n "$cert" ] && CURL+=(--cert "$cert" --key "$key")
token=$(kc "$U.token")
[ -n "$token" ] && CURL+=(-H "Authorization: Bearer $token")

# api METHOD PATH [BODY]: the response body to $TMP/body, the HTTP code on stdout
api() {
    local args=("${CURL[@]}" -o "$TMP/body" -w '%{http_code}' -X "$1" "$SERVER$2")
    [ $# -ge 3 ] && args+=(-H 'Content-Type: application/json' --data-binary "$3")
    "${args[@]}" 2>"$TMP/curl.err" || echo 000
}
msg() { jq -r '.message // empty' "$TMP/body" 2>/dev/null | head -c 300; }

# --- our CRDs ----------------------------------------------------------------------------------
CRDS=/apis/apiextensions.k8s.io/v1/customresourcedefinitions
for f in crds/*.yaml; do
    doc=$("$Y2J" "$f") || { echo "FAIL: $f does not parse"; exit 1; }
    name=$(jq -r .metadata.name <<<"$doc")
    code=$(api POST $CRDS "$doc")
    if [ "$code" = 409 ]; then
        [ "$(api GET "$CRDS/$name")" = 200 ] || { echo "FAIL: GET CRD $name"; exit 1; }
        rv=$(jq -r .metadata.resourceVersion "$TMP/body")
        code=$(api PUT "$CRDS/$name" "$(jq -c --arg rv "$rv" '.metadata.resourceVersion = $rv' <<<"$doc")")
    fi
    case $code in 200|201) ;; *) echo "FAIL: install CRD $name: HTTP $code $(msg)"; exit 1 ;; esac
    established=""
    for _ in $(seq 1 150); do
        api GET "$CRDS/$name" >/dev/null
        if jq -e '.status.conditions[]? | select(.type == "Established" and .status == "True")' \
            "$TMP/body" >/dev/null 2>&1; then established=1; break; fi
        sleep 0.2
    done
    [ -n "$established" ] || { echo "FAIL: CRD $name not Established"; exit 1; }
done
echo "CRDs installed from crds/ on $SERVER"

# a scratch namespace (deleted at the end; on a bare API server it just stays Terminating)
code=$(api POST /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$NS\"}}")
case $code in 201|409) ;; *) echo "FAIL: namespace $NS: HTTP $code $(msg)"; exit 1 ;; esac

# the server's minor version: a fixture whose header says "# apiserver: >= 1.N" is skipped below
[ "$(api GET /version)" = 200 ] || { echo "FAIL: GET /version"; exit 1; }
MINOR=$(jq -r '.minor' "$TMP/body" | tr -dc 0-9)
echo "Kubernetes $(jq -r .gitVersion "$TMP/body")"

G=/apis/network.harvesterhci.io/v1alpha1/namespaces/$NS
pass=0 failn=0 skipn=0
ok() { printf 'PASS  %-48s %s\n' "$1" "$2"; pass=$((pass + 1)); }
ko() { printf 'FAIL  %-48s %s\n' "$1" "$2"; failn=$((failn + 1)); }

# one LABEL JSON: create, write the status, read back, compare, delete
one() {
    local label=$1 want=$2 kind plural name code path got diff
    kind=$(jq -r .kind <<<"$want")
    case $kind in
        IPPool) plural=ippools ;;
        VirtualMachineNetworkConfig) plural=virtualmachinenetworkconfigs ;;
        *) return 0 ;;
    esac
    name=$(jq -r .metadata.name <<<"$want")
    path=$G/$plural/$name
    api DELETE "$path" >/dev/null # a leftover of an interrupted run
    code=$(api POST "$G/$plural" "$(jq -c --arg ns "$NS" \
        'del(.status) | .metadata = {name: .metadata.name, namespace: $ns, labels: .metadata.labels} |
         if .metadata.labels == null then del(.metadata.labels) else . end' <<<"$want")")
    if [ "$code" != 201 ]; then ko "$label" "$kind/$name: create: HTTP $code $(msg)"; return; fi
    if jq -e 'has("status")' <<<"$want" >/dev/null; then
        code=$(api PUT "$path/status" "$(jq -c --slurpfile w <(echo "$want") \
            '.status = $w[0].status' "$TMP/body")")
        if [ "$code" != 200 ]; then
            ko "$label" "$kind/$name: status: HTTP $code $(msg)"; api DELETE "$path" >/dev/null; return
        fi
    fi
    code=$(api GET "$path")
    if [ "$code" != 200 ]; then ko "$label" "$kind/$name: get: HTTP $code"; return; fi
    got=$(jq -S '{spec, status}' "$TMP/body")
    diff=$(diff <(jq -S '{spec, status}' <<<"$want") <(echo "$got"))
    if [ -z "$diff" ]; then ok "$label" "$kind/$name"
    else ko "$label" "$kind/$name: read back differs (< written, > read):"; sed 's/^/        /' <<<"$diff" | head -n 30
    fi
    api DELETE "$path" >/dev/null
}

for f in tests/data/upstream/*.yaml examples/*.yaml; do
    need=$(sed -nE 's/^# apiserver: >= 1\.([0-9]+).*/\1/p' "$f" | head -n 1)
    if [ -n "$need" ] && [ "${MINOR:-0}" -lt "$need" ]; then
        printf 'SKIP  %-48s needs Kubernetes 1.%s (see its header)\n' "$f" "$need"
        skipn=$((skipn + 1)); continue
    fi
    i=0
    while IFS= read -r doc; do
        one "$f#$i" "$doc"
        i=$((i + 1))
    done < <("$Y2J" "$f" || echo '{"kind":"unparsable"}')
done

api DELETE "/api/v1/namespaces/$NS" >/dev/null
echo "test-upstream-objects: $pass passed, $failn failed, $skipn skipped"
[ "$failn" = 0 ] && [ "$pass" -gt 0 ]
