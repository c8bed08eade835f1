#!/bin/bash
# tests/cluster/bench-admission.sh - admission latency on the real cluster (a bench, not a test:
# it prints numbers and fails only when it cannot measure). `make bench-admission`.
#
# RATE requests/s (default 50) of --dry-run=server IPPool creates for SECS seconds (default 30),
# sent straight to the API server with the kubeconfig's admin certificate (curl: PARALLEL
# processes, default 5, each at RATE/PARALLEL per second over one kept-alive connection; no
# kubectl start-up per request). Each create goes through the mutating and the validating
# webhook. Prints p50 and p99 of
#   - the API server's own view, apiserver_admission_webhook_admission_duration_seconds (the
#     deltas of its buckets over the run, per webhook type; its buckets are coarse: 5 ms, 25 ms,
#     100 ms, ..., so a percentile is interpolated inside its bucket and the bucket is shown);
#   - the controller's, vmdhcp_admission_duration_seconds (the deltas summed over the replicas);
#   - the client's round trip of the whole create (curl's time_total).
# The chart must be installed (release vm-dhcp in vm-dhcp-system, as test-cluster-e2e.sh does);
# when it is not, it is installed first and uninstalled after. The cluster must be up
# (make k8s-up; wrap in flock /tmp/vmd-cluster.lock when others share the machine).
# Results go to docs/benchmarks.md ("Admission") with this command.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
HELM=${HELM:-$(command -v helm || echo "$ROOT/build/tools/node_modules/.bin/helm")}
Y2J=${Y2J:-$ROOT/build/e2e/yaml2json}
NS=${VMD_NS:-vm-dhcp-system}
REL=${VMD_RELEASE:-vm-dhcp}
RATE=${RATE:-50} SECS=${SECS:-30} PARALLEL=${PARALLEL:-5}
BNS=vmd-admission-bench
export KUBECONFIG=${KUBECONFIG:-/var/lib/vm-dhcp-k8s/admin.kubeconfig}
TMP=$(mktemp -d /tmp/vmd-bench-admission.XXXXXX)
installed_here=0
k() { kubectl --request-timeout=30s "$@"; }
die() { echo "bench-admission: $*" >&2; exit 1; }
cleanup() {
    k delete namespace $BNS --wait=false >/dev/null 2>&1
    [ $installed_here = 1 ] && "$HELM" uninstall $REL -n $NS --timeout 3m >/dev/null 2>&1
    rm -rf "$TMP"
}
trap cleanup EXIT

for c in kubectl jq curl awk; do command -v $c >/dev/null || die "$c is not installed"; done
[ -x "$Y2J" ] || die "$Y2J missing (make build/e2e/yaml2json)"
[ -e /run/vm-dhcp-k8s/up ] || die "the cluster is not up (make k8s-up)"
if ! "$HELM" status $REL -n $NS >/dev/null 2>&1; then
    installed_here=1
    "$HELM" install $REL charts/vm-dhcp -n $NS --create-namespace --wait --timeout 5m >"$TMP/helm.log" 2>&1 ||
        { tail -n 5 "$TMP/helm.log"; die "helm install failed"; }
fi

# --- the API server and the admin credentials of the kubeconfig -----------------------------------
"$Y2J" "$KUBECONFIG" >"$TMP/kubeconfig.json" || die "$KUBECONFIG does not parse"
kc() { jq -r "$1 // empty" "$TMP/kubeconfig.json"; }
ctx=$(kc '."current-context"'); [ -n "$ctx" ] || ctx=$(kc '.contexts[0].name')
C=".clusters[] | select(.name == \"$(kc ".contexts[] | select(.name == \"$ctx\") | .context.cluster")\") | .cluster"
U=".users[] | select(.name == \"$(kc ".contexts[] | select(.name == \"$ctx\") | .context.user")\") | .user"
SERVER=$(kc "$C.server")
kfile() {
    local p d; p=$(kc "$1") d=$(kc "$2")
    if [ -n "$d" ]; then base64 -d <<<"$d" >"$3"; echo "$3"
    elif [ -n "$p" ]; then case $p in /*) echo "$p" ;; *) echo "$(dirname "$KUBECONFIG")/$p" ;; esac; fi
}
AUTH=()
ca=$(kfile "$C.\"certificate-authority\"" "$C.\"certificate-authority-data\"" "$TMP/ca.crt")
if [ -n "$ca" ]; then AUTH+=(--cacert "$ca"); else AUTH+=(-k); fi
cert=$(kfile "$U.\"client-certificate\"" "$U.\"client-certificate-data\"" "$TMP/client.crt")
key=$(kfile "$U.\"client-key\"" "$U.\"client-key-data\"" "$TMP/client.key")
[ -n "$cert" ] && AUTH+=(--cert "$cert" --key "$key")
token=$(kc "$U.token"); [ -n "$token" ] && AUTH+=(-H "Authorization: Bearer $token")

# --- the target: a NAD, and the IPPool body (only a CIDR: mutated, then validated) ----------------
k create namespace $BNS >/dev/null 2>&1
k -n $BNS apply -f - >/dev/null <<EOF || die "NAD"
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: bench
  labels:
    network.harvesterhci.io/clusternetwork: vmd-admission-none
spec:
  config: '{"cniVersion":"0.3.1","name":"bench","type":"bridge","bridge":"vmd-adm0","ipam":{}}'
EOF
URL="$SERVER/apis/network.harvesterhci.io/v1alpha1/namespaces/$BNS/ippools?dryRun=All"
printf '%s' '{"apiVersion":"network.harvesterhci.io/v1alpha1","kind":"IPPool","metadata":{"name":"bench"},"spec":{"networkName":"'$BNS'/bench","ipv4Config":{"cidr":"192.168.78.0/24"}}}' >"$TMP/body.json"
one() { curl -sS --max-time 10 "${AUTH[@]}" -o "$TMP/one.out" -w '%{http_code}' -X POST \
    -H 'Content-Type: application/json' --data-binary @"$TMP/body.json" "$URL"; }
code=$(one)
case $code in 200|201) ;; *) die "a dry-run create is not allowed: HTTP $code $(head -c 300 "$TMP/one.out")" ;; esac

# --- metrics: the API server's histogram, the controllers' -----------------------------------------
apiserver_metrics() { curl -sS --max-time 20 "${AUTH[@]}" "$SERVER/metrics"; }
controller_ips() {
    k -n $NS get pods -l app.kubernetes.io/component=controller -o json |
        jq -r '.items[] | select(.status.phase == "Running") | .status.podIP'
}
controller_metrics() { local ip; for ip in $(controller_ips); do curl -s --max-time 5 "http://$ip:8080/metrics"; done; }
# buckets NAME [LABEL_REGEX]: "type le count" summed over the series of NAME whose labels match
buckets() {
    awk -v n="$1_bucket" -v re="${2:-.}" '
        index($0, n "{") == 1 && $0 ~ re {
            lbl = $0; sub(/^[^{]*\{/, "", lbl); sub(/\}.*/, "", lbl)
            le = lbl; sub(/.*le="/, "", le); sub(/".*/, "", le)
            t = "all"; if (lbl ~ /type="/) { t = lbl; sub(/.*type="/, "", t); sub(/".*/, "", t) }
            s[t " " le] += $NF
        }
        END { for (k in s) print k, s[k] }'
}
# pct BEFORE AFTER TYPE: "p50 p99" (ms) from the bucket deltas of TYPE, interpolated in the bucket
pct() {
    awk -v t="$3" 'FNR == NR { if ($1 == t) b[$2] = $3; next }
        $1 == t { print ($2 == "+Inf" ? 1e99 : $2), $3 - (b[$2] + 0) }' "$1" "$2" | sort -g |
        awk '
            { le[NR] = $1; c[NR] = $2 } END {
                total = c[NR]; if (total <= 0) { print "n/a n/a 0"; exit }
                split("0.5 0.99", q, " ")
                for (i = 1; i <= 2; i++) {
                    want = q[i] * total; prev = 0; lo = 0
                    for (j = 1; j <= NR; j++) {
                        if (c[j] >= want) {
                            if (le[j] >= 1e99) { r[i] = sprintf(">%g", lo * 1000); break }
                            f = (c[j] > prev) ? (want - prev) / (c[j] - prev) : 1
                            r[i] = sprintf("%.1f(<=%g)", (lo + (le[j] - lo) * f) * 1000, le[j] * 1000); break
                        }
                        prev = c[j]; lo = le[j]
                    }
                }
                print r[1], r[2], total
            }'
}

APIM=apiserver_admission_webhook_admission_duration_seconds
OURS=vmdhcp_admission_duration_seconds
apiserver_metrics | buckets $APIM 'name="[^"]*vm-dhcp[^"]*"' >"$TMP/api.before"
controller_metrics | buckets $OURS >"$TMP/ours.before"
[ -s "$TMP/api.before" ] || echo "note: no $APIM series for our webhooks before the run (none called yet?)"

# --- the load: PARALLEL curl processes, RATE/PARALLEL requests/s each ------------------------------
per=$((RATE / PARALLEL)); n=$((per * SECS))
[ "$per" -ge 1 ] || die "RATE must be at least PARALLEL"
for _ in $(seq 1 "$n"); do printf 'url = "%s"\noutput = "/dev/null"\n' "$URL"; done >"$TMP/urls.cfg"
echo "bench-admission: $RATE requests/s ($PARALLEL x $per/s) of --dry-run=server IPPool creates for $SECS s to $SERVER"
t0=$(date +%s.%N)
pids=()
for i in $(seq 1 "$PARALLEL"); do
    curl -sS --rate "$per/s" "${AUTH[@]}" -X POST -H 'Content-Type: application/json' \
        --data-binary @"$TMP/body.json" -w '%{http_code} %{time_total}\n' -K "$TMP/urls.cfg" >"$TMP/client.$i" 2>"$TMP/client.$i.err" &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
t1=$(date +%s.%N)
sleep 2 # the last observations into the histograms
apiserver_metrics | buckets $APIM 'name="[^"]*vm-dhcp[^"]*"' >"$TMP/api.after"
controller_metrics | buckets $OURS >"$TMP/ours.after"

sent=$(cat "$TMP"/client.[0-9]* | wc -l)
okn=$(cat "$TMP"/client.[0-9]* | awk '$1 == 200 || $1 == 201' | wc -l)
elapsed=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
echo "sent $sent in $elapsed s ($(awk -v n="$sent" -v e="$elapsed" 'BEGIN { printf "%.1f", n / e }')/s), $okn allowed"
cat "$TMP"/client.[0-9]* | awk '$1 != 200 && $1 != 201 { print "  HTTP " $1 }' | sort | uniq -c | head -n 5
echo "percentiles in ms; (<=B): inside the histogram bucket whose upper bound is B ms"
for t in admit validating; do
    read -r p50 p99 cnt < <(pct "$TMP/api.before" "$TMP/api.after" "$t")
    printf '  API server, %-10s webhook (%s): p50 %s  p99 %s  (%s calls)\n' "$t" "$APIM" "$p50" "$p99" "$cnt"
done
read -r p50 p99 cnt < <(pct "$TMP/ours.before" "$TMP/ours.after" all)
printf '  controller (%s, both replicas): p50 %s  p99 %s  (%s requests)\n' "$OURS" "$p50" "$p99" "$cnt"
cat "$TMP"/client.[0-9]* | awk '$1 == 200 || $1 == 201 { print $2 * 1000 }' | sort -g |
    awk '{ v[NR] = $1 } END { if (NR) printf "  client round trip (curl time_total, whole create): p50 %.1f  p99 %.1f  max %.1f\n",
        v[int(NR * 0.5 + 0.5)], v[int(NR * 0.99 + 0.5)], v[NR] }'
echo "command: make bench-admission (RATE=$RATE SECS=$SECS PARALLEL=$PARALLEL), Kubernetes $(k version -o json 2>/dev/null | jq -r .serverVersion.gitVersion)"
[ "$okn" -gt 0 ]
