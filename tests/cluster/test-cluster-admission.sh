#!/bin/bash
# tests/cluster/test-cluster-admission.sh - the admission webhook on the real cluster
# (tests/cluster/k8s-up.sh), the API server calling it through the chart's Service:
#   1. the table (tests/cluster/admission-table.sh): upstream's webhook test cases and ours;
#   2. one of two controller replicas lost during a stream of --dry-run=server IPPool creates
#      (curl straight to the API server, two clients, back to back):
#      - `kubectl delete pod` (SIGTERM: the replica stops being ready, keeps answering for
#        --webhook-drain, then exits): not one request fails;
#      - SIGKILL of the container's process: requests fail only while the dead replica is still
#        listed as a ready address of the webhook Service's Endpoints (until its readiness probe
#        fails: periodSeconds 2 x failureThreshold 2, plus the endpoints controller), or until
#        the restarted container is ready again, whichever comes first (and those in flight at
#        the kill, sent up to 1 s before it), with SLACK (3) s for the watcher's polling and the
#        API server to see the change; each failure says "failed calling webhook". The failures
#        and the window are printed;
#   3. a short certificate validity (--webhook-cert-validity 90 set on the controller Deployment:
#      the chart's admission.certValidity allows one hour at least; the serving pair then emptied
#      in the Secret, so that a 90 s one is issued from the same CA; renewal after 60 s) while
#      the stream runs (through the rollout, too): not one request fails, the Secret's serving certificate is
#      replaced (its serial changes) and both replicas serve the new one (openssl s_client
#      against each endpoint of the Service);
#   4. no replica at all (scaled to 0): an IPPool create is refused with "failed calling webhook",
#      a ConfigMap and a VirtualMachine (its webhook fails open) are not affected; scaled back.
# Run by tests/cluster/test-cluster-e2e.sh after its helm install (release vm-dhcp in
# vm-dhcp-system); alone, it needs the cluster up (make k8s-up) and installs/uninstalls the
# chart itself when the release is absent. Leaves the controller Deployment with
# --webhook-cert-validity 90 when it found the release installed (the e2e test uninstalls it next). Needs root, kubectl, helm, jq,
# curl, openssl, build/e2e/yaml2json. Prints "N passed, M failed".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
HELM=${HELM:-$(command -v helm || echo "$ROOT/build/tools/node_modules/.bin/helm")}
Y2J=${Y2J:-$ROOT/build/e2e/yaml2json}
NS=${VMD_NS:-vm-dhcp-system}
REL=${VMD_RELEASE:-vm-dhcp}
TNS=vmd-admission-stream            # the stream's namespace (its NAD)
STATE=/var/lib/vm-dhcp-k8s
export KUBECONFIG=${KUBECONFIG:-$STATE/admin.kubeconfig}
TMP=$(mktemp -d /tmp/vmd-cluster-admission.XXXXXX)
installed_here=0
STREAM_PIDS=()
pass=0 failn=0
# seconds between the watcher seeing the dead endpoint gone and the API server no longer using it
# (the watcher polls with kubectl, about a second a round; the API server's endpoints informer)
SLACK=${SLACK:-3}

ok() { printf 'PASS  %s\n' "$1"; pass=$((pass + 1)); }
ko() { printf 'FAIL  %s\n' "$1"; failn=$((failn + 1)); }
# check NAME CMD...
check() { local n=$1; shift; if "$@"; then ok "$n"; else ko "$n"; fi; }
skip() { echo "SKIP: $*"; exit 77; }
k() { kubectl --request-timeout=30s "$@" 2>>"$TMP/kubectl.err"; }
wait_for() {
    local end=$((SECONDS + $1)); shift
    while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 1; done
    "$@"
}
now() { date +%s.%N | cut -c1-14; }

cleanup() {
    trap '' INT TERM
    stop_stream
    k delete namespace $TNS --wait=false >/dev/null 2>&1
    if [ $installed_here = 1 ]; then
        "$HELM" uninstall $REL -n $NS --timeout 3m >/dev/null 2>&1
    fi
    [ "${KEEP_LOGS:-0}" = 1 ] && { echo "logs kept in $TMP"; return; }
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" = 0 ] || skip "needs root (the cluster's containerd, the controller's processes)"
for c in kubectl jq curl openssl; do command -v $c >/dev/null || skip "$c is not installed"; done
[ -x "$HELM" ] || skip "helm is not installed (scripts/install-deps installs it)"
[ -x "$Y2J" ] || { echo "FAIL: $Y2J missing (make build/e2e/yaml2json)"; exit 1; }
[ -e /run/vm-dhcp-k8s/up ] || skip "the cluster is not up (make k8s-up; make cluster-test runs this)"

# --- the release -------------------------------------------------------------------------------------
if ! "$HELM" status $REL -n $NS >/dev/null 2>&1; then
    installed_here=1
    "$HELM" install $REL charts/vm-dhcp -n $NS --create-namespace --wait --timeout 5m >"$TMP/helm.log" 2>&1 ||
        { tail -n 5 "$TMP/helm.log"; echo "FAIL: helm install"; exit 1; }
fi
ready_replicas() { [ "$(k -n $NS get deploy $REL-controller -o jsonpath='{.status.readyReplicas}')" = "${1:-2}" ]; }
check "two controller replicas Ready" wait_for 180 ready_replicas 2
ca_patched() {
    local t
    for t in mutatingwebhookconfiguration validatingwebhookconfiguration; do
        k get $t $REL-admission -o json |
            jq -e '(.webhooks | length) > 0 and all(.webhooks[]; (.clientConfig.caBundle // "") != "")' >/dev/null ||
            return 1
    done
}
check "caBundle of $REL-admission patched by the controller" wait_for 120 ca_patched
SVC_CIDR=$(k -n $NS get deploy $REL-controller -o json |
    jq -r '.spec.template.spec.containers[0].args as $a | ($a | index("--service-cidr")) as $i | if $i then $a[$i + 1] else empty end')

# --- 1. the table --------------------------------------------------------------------------------------
table() {
    ADMISSION_SERVICE_CIDR=${SVC_CIDR:-10.53.0.0/16} "$ROOT/tests/cluster/admission-table.sh" vmd-admission-table \
        >"$TMP/table.log" 2>&1
    local rc=$?
    grep -E '^(FAIL|admission-table:)' -A3 "$TMP/table.log" | grep -v '^--$' | sed 's/^/    /'
    return $rc
}
check "admission table (tests/cluster/admission-table.sh)" table
grep -E '^admission-table:' "$TMP/table.log"

# --- the stream: --dry-run=server IPPool creates, straight to the API server -------------------
"$Y2J" "$KUBECONFIG" >"$TMP/kubeconfig.json" || { echo "FAIL: $KUBECONFIG does not parse"; exit 1; }
kc() { jq -r "$1 // empty" "$TMP/kubeconfig.json"; }
ctx=$(kc '."current-context"'); [ -n "$ctx" ] || ctx=$(kc '.contexts[0].name')
C=".clusters[] | select(.name == \"$(kc ".contexts[] | select(.name == \"$ctx\") | .context.cluster")\") | .cluster"
U=".users[] | select(.name == \"$(kc ".contexts[] | select(.name == \"$ctx\") | .context.user")\") | .user"
SERVER=$(kc "$C.server")
kfile() { # FIELD DATAFIELD OUT: a path or base64 data of the kubeconfig, as a file
    local p d; p=$(kc "$1") d=$(kc "$2")
    if [ -n "$d" ]; then base64 -d <<<"$d" >"$3"; echo "$3"
    elif [ -n "$p" ]; then case $p in /*) echo "$p" ;; *) echo "$(dirname "$KUBECONFIG")/$p" ;; esac; fi
}
CURL=(curl -sS --max-time 15)
ca=$(kfile "$C.\"certificate-authority\"" "$C.\"certificate-authority-data\"" "$TMP/ca.crt")
if [ -n "$ca" ]; then CURL+=(--cacert "$ca"); else CURL+=(-k); fi
cert=$(kfile "$U.\"client-certificate\"" "$U.\"client-certificate-data\"" "$TMP/client.crt")
key=$(kfile "$U.\"client-key\"" "$U.\"client-key-data\"" "$TMP/client.key")
[ -n "$cert" ] && CURL+=(--cert "$cert" --key "$key")
token=$(kc "$U.token"); [ -n "$token" ] && CURL+=(-H "Authorization: Bearer $token")

k create namespace $TNS >/dev/null 2>&1
k -n $TNS apply -f - >/dev/null <<EOF
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: stream
  labels:
    network.harvesterhci.io/clusternetwork: vmd-admission-none
spec:
  config: '{"cniVersion":"0.3.1","name":"stream","type":"bridge","bridge":"vmd-adm0","ipam":{}}'
EOF
POOLS="$SERVER/apis/network.harvesterhci.io/v1alpha1/namespaces/$TNS/ippools?dryRun=All"
BODY='{"apiVersion":"network.harvesterhci.io/v1alpha1","kind":"IPPool","metadata":{"name":"stream"},"spec":{"networkName":"'$TNS'/stream","ipv4Config":{"cidr":"192.168.77.0/24"}}}'

# stream_one ID: back-to-back creates until $TMP/stop exists; one line each to $TMP/stream.ID:
# "time http_code message"
stream_one() {
    local id=$1 t code
    while [ ! -e "$TMP/stop" ]; do
        t=$(now)
        code=$("${CURL[@]}" -o "$TMP/body.$id" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
            --data-binary "$BODY" "$POOLS" 2>"$TMP/curl.$id") || code=000
        case $code in
            200|201) echo "$t $code" ;;
            *) echo "$t $code $( (jq -r '.message // empty' "$TMP/body.$id" 2>/dev/null; cat "$TMP/curl.$id") | tr '\n' ' ' | cut -c1-300)" ;;
        esac
    done >>"$TMP/stream.$id"
}
start_stream() {
    rm -f "$TMP/stop" "$TMP"/stream.*; STREAM_PIDS=()
    stream_one a & STREAM_PIDS+=($!)
    stream_one b & STREAM_PIDS+=($!)
}
stop_stream() {
    local p
    touch "$TMP/stop"
    for p in "${STREAM_PIDS[@]}"; do wait "$p" 2>/dev/null; done
    STREAM_PIDS=()
}
stream_total() { cat "$TMP"/stream.* 2>/dev/null | wc -l; }
stream_failures() { cat "$TMP"/stream.* 2>/dev/null | awk '$2 != 200 && $2 != 201' | sort -n; }
# the stream answers allowed before anything is disturbed
probe_ok() {
    local code; code=$("${CURL[@]}" -o "$TMP/probe" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        --data-binary "$BODY" "$POOLS" 2>/dev/null)
    [ "$code" = 201 ] || [ "$code" = 200 ]
}
check "a --dry-run=server IPPool create through curl is allowed" wait_for 30 probe_ok

controller_pods() {
    k -n $NS get pods -l app.kubernetes.io/component=controller -o json |
        jq -r '.items[] | select(.metadata.deletionTimestamp == null) | .metadata.name'
}
pod_ip() { k -n $NS get pod "$1" -o jsonpath='{.status.podIP}'; }
# the ready addresses of the webhook Service, one IP a line
endpoints() { k -n $NS get endpoints $REL-webhook -o json | jq -r '.subsets[]?.addresses[]?.ip'; }
two_endpoints() { [ "$(endpoints | wc -l)" = 2 ]; }

# --- 2a. graceful: kubectl delete pod -------------------------------------------------------------
check "two ready endpoints behind $REL-webhook" wait_for 120 two_endpoints
victim=$(controller_pods | head -n 1)
start_stream
sleep 3
t_del=$(now)
check "kubectl delete pod $victim (graceful)" k -n $NS delete pod "$victim" --wait=true --timeout=90s
check "a replacement replica Ready (two again)" wait_for 120 ready_replicas 2
check "  ... and two endpoints again" wait_for 60 two_endpoints
sleep 3
stop_stream
n=$(stream_total) f=$(stream_failures | wc -l)
echo "graceful delete at $t_del: $n admissions, $f failed"
stream_failures | head -n 10 | sed 's/^/    /'
check "graceful delete of a replica: no admission failed ($n sent)" test "$f" = 0 -a "$n" -gt 20

# --- 2b. SIGKILL of one replica's process -----------------------------------------------------------
ctr_pid() { # POD: the host PID of its controller container's process
    local id; id=$(k -n $NS get pod "$1" -o jsonpath='{.status.containerStatuses[0].containerID}')
    id=${id#*://}
    [ -n "$id" ] || return 1
    ctr --address /run/vm-dhcp-k8s/containerd.sock -n k8s.io task ls 2>/dev/null | awk -v id="$id" '$1 == id { print $2 }'
}
restarts() { k -n $NS get pod "$1" -o jsonpath='{.status.containerStatuses[0].restartCount}'; }
pod_ready() { [ "$(k -n $NS get pod "$1" -o jsonpath='{.status.containerStatuses[0].ready}')" = true ]; }
check "two ready endpoints before the kill" wait_for 120 two_endpoints
victim=$(controller_pods | head -n 1)
vip=$(pod_ip "$victim")
vpid=$(ctr_pid "$victim")
r0=$(restarts "$victim")
if [ -z "$vpid" ]; then
    ko "the process of $victim found (ctr task ls)"
else
    start_stream
    sleep 3
    # watch: when the dead replica leaves the ready endpoints, or is back (restarted and ready)
    (
        set -o pipefail # a failed kubectl call is no "gone"
        # the time after the look (a kubectl call takes most of a second): the state held then
        while [ ! -e "$TMP/stop" ]; do
            if ! eps=$(endpoints); then st=error
            elif ! grep -qx -- "$vip" <<<"$eps"; then st=gone
            elif [ "$(restarts "$victim")" != "$r0" ] && pod_ready "$victim"; then st=back
            else st=listed; fi
            echo "$(now) $st"
            sleep 0.2
        done >"$TMP/watch"
    ) &
    STREAM_PIDS+=($!)
    watching() { grep -q ' listed$' "$TMP/watch"; }
    wait_for 30 watching || ko "the endpoint watcher saw $vip listed before the kill"
    t_kill=$(now)
    kill -9 "$vpid"
    # the kubelet restarts it (the same pod); wait until it is ready and listed again
    back() { [ "$(restarts "$victim")" != "$r0" ] && pod_ready "$victim" && two_endpoints; }
    check "killed replica $victim restarted by the kubelet and Ready again" wait_for 180 back
    # the stream goes on until more than 10 admissions were answered after the window (its end
    # + SLACK): the stream's pace on a loaded machine is no given
    answered_after() {
        local te
        te=$(awk -v k="$t_kill" '$1 >= k && ($2 == "gone" || $2 == "back") { print $1; exit }' "$TMP/watch")
        [ -n "$te" ] && [ "$(awk -v b="$te" -v s="$SLACK" '$1 > b + s && ($2 == 200 || $2 == 201)' "$TMP"/stream.* | wc -l)" -gt 10 ]
    }
    wait_for 120 answered_after
    stop_stream
    t_end=$(awk -v k="$t_kill" '$1 >= k && ($2 == "gone" || $2 == "back") { print $1; exit }' "$TMP/watch")
    t_back=$(awk -v k="$t_kill" '$1 >= k && $2 == "back" { print $1; exit }' "$TMP/watch")
    n=$(stream_total)
    stream_failures >"$TMP/failures"
    f=$(wc -l <"$TMP/failures")
    echo "kill -9 of $victim ($vip) at $t_kill; its endpoint no longer used from ${t_end:-?}" \
        "($(awk -v a="$t_kill" -v b="${t_end:-0}" 'BEGIN { printf "%.1f", b - a }') s), restarted and ready by ${t_back:-?};" \
        "$n admissions, $f failed, $(cat "$TMP"/stream.* | awk -v a="$t_kill" -v b="${t_end:-0}" '$1 >= a - 1 && $1 <= b' | wc -l)" \
        "of them sent from 1 s before the kill to the end of the window"
    sed 's/^/    /' "$TMP/failures" | head -n 20
    # (from a second before the kill: a request in flight on a connection to the killed process)
    late=$(awk -v a="$t_kill" -v b="${t_end:-0}" -v s="$SLACK" '$1 < a - 1 || $1 > b + s' "$TMP/failures" | wc -l)
    unclear=$(grep -cv 'failed calling webhook' "$TMP/failures")
    check "kill -9: the dead endpoint left the ready set or came back" test -n "$t_end"
    check "kill -9: failures ($f) only while the dead endpoint was listed (+$SLACK s)" test "$late" = 0
    check "kill -9: each failure says \"failed calling webhook\"" test "$unclear" = 0
    after=$(awk -v b="${t_end:-9e18}" -v s="$SLACK" '$1 > b + s && ($2 == 200 || $2 == 201)' "$TMP"/stream.* | wc -l)
    check "kill -9: admissions succeed after the window ($after)" test "$after" -gt 10
fi

# --- 3. certificate rotation under the stream ---------------------------------------------------------
serial_secret() {
    k -n $NS get secret $REL-admission-tls -o jsonpath='{.data.tls\.crt}' | base64 -d 2>/dev/null |
        openssl x509 -noout -serial 2>/dev/null | cut -d= -f2
}
serial_at() { # IP: the serial of the certificate served at IP:8443
    openssl s_client -connect "$1:8443" </dev/null 2>/dev/null | openssl x509 -noout -serial 2>/dev/null | cut -d= -f2
}
all_serve() { # SERIAL: every ready endpoint serves it
    local ip eps; eps=$(endpoints); [ -n "$eps" ] || return 1
    for ip in $eps; do [ "$(serial_at "$ip")" = "$1" ] || return 1; done
}
s0=$(serial_secret)
check "the Secret $REL-admission-tls holds a serving certificate" test -n "$s0"
start_stream
sleep 2
t_up=$(now)
# the chart allows one hour at least (values.schema.json): the flag, on the Deployment itself
short_validity() {
    local args
    args=$(k -n $NS get deploy $REL-controller -o json | jq -c '.spec.template.spec.containers[0].args
        | (index("--webhook-cert-validity")) as $i
        | if $i then .[$i + 1] = "90" else . + ["--webhook-cert-validity", "90"] end') || return 1
    k -n $NS patch deploy $REL-controller --type json \
        -p "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/args\",\"value\":$args}]" >/dev/null &&
        k -n $NS rollout status deploy $REL-controller --timeout=240s >/dev/null
}
check "controller Deployment rolled out with --webhook-cert-validity 90" short_validity
check "  ... two replicas Ready" wait_for 180 ready_replicas 2
# `rollout status` returns while the replicas of the previous ReplicaSet still drain (a
# stopping replica writes the Secret no more, but an old one still running would renew with
# its own one-year validity): on only once every controller pod runs with the new flag
only_new_pods() {
    k -n $NS get pods -l app.kubernetes.io/component=controller -o json | jq -e '
        (.items | length) == 2 and all(.items[]; .metadata.deletionTimestamp == null and
            (.spec.containers[0].args | (index("--webhook-cert-validity")) as $i
                | $i != null and .[$i + 1] == "90"))' >/dev/null
}
check "  ... no replica of the previous rollout left" wait_for 180 only_new_pods
s1=$(serial_secret)
changed_from() { local s; s=$(serial_secret); [ -n "$s" ] && [ "$s" != "$1" ]; }
# The pair in the Secret keeps its own validity (renewed after two thirds of it, a year here):
# the serving pair is emptied in the Secret (a kubernetes.io/tls Secret keeps both keys; the CA
# stays), so that a replica issues a 90 s
# one from the same CA at once; that one is then renewed under the stream.
if [ "$s1" = "$s0" ]; then
    check "serving pair emptied in the Secret (ca.crt, ca.key kept)" k -n $NS patch secret $REL-admission-tls --type json \
        -p '[{"op":"replace","path":"/data/tls.crt","value":""},{"op":"replace","path":"/data/tls.key","value":""}]'
    check "a serving certificate issued again by 60 s" wait_for 60 changed_from "$s0"
    s1=$(serial_secret)
fi
validity_secret() { # notAfter - notBefore of the Secret's serving certificate, in seconds
    local d nb na
    d=$(k -n $NS get secret $REL-admission-tls -o jsonpath='{.data.tls\.crt}' | base64 -d 2>/dev/null |
        openssl x509 -noout -startdate -enddate 2>/dev/null) || return 1
    nb=$(date -d "$(sed -n 's/^notBefore=//p' <<<"$d")" +%s) && na=$(date -d "$(sed -n 's/^notAfter=//p' <<<"$d")" +%s) &&
        echo $((na - nb))
}
v1=$(validity_secret)
# 90 s, and notBefore a tenth of it earlier (clock skew)
check "  ... it is valid for 90 s (+9 s backdated): ${v1:-?} s" test "${v1:-0}" = 99
# due 57 s after it was issued (two thirds of 99 s from notBefore); the bound is generous
check "the 90 s serving certificate renewed (after two thirds of it; waited up to 240 s)" wait_for 240 changed_from "$s1"
s2=$(serial_secret)
check "both replicas serve the new certificate ($s2)" wait_for 60 all_serve "$s2"
sleep 3
stop_stream
n=$(stream_total) f=$(stream_failures | wc -l)
echo "certificate rotation from $t_up: serials $s0 -> $s1 -> $s2; $n admissions, $f failed"
stream_failures | head -n 10 | sed 's/^/    /'
check "rotation (and the rollout of the upgrade): no admission failed ($n sent)" test "$f" = 0 -a "$n" -gt 50

# --- 4. no replica answers: our kinds refused with a clear message, nothing else affected -----------
no_endpoints() { [ -z "$(endpoints)" ]; }
check "controller scaled to 0" k -n $NS scale deploy $REL-controller --replicas=0
check "  ... no endpoint left behind $REL-webhook" wait_for 120 no_endpoints
# a terminating replica keeps answering for --webhook-drain on the connections the API server
# already has to it (HTTP/2, kept alive): only once no controller process is left is nothing
# answering
no_pods() { local o; o=$(k -n $NS get pods -l app.kubernetes.io/component=controller -o name) && [ -z "$o" ]; }
check "  ... no controller pod left (the drain over)" wait_for 180 no_pods
down_refused() {
    local out rc
    out=$(kubectl --request-timeout=30s -n $TNS create --validate=false --dry-run=server -f - 2>&1 <<<"$BODY")
    rc=$?
    echo "    no replica: IPPool create: exit $rc: $(tr '\n' ' ' <<<"$out" | cut -c1-300)"
    [ $rc != 0 ] && grep -q 'failed calling webhook' <<<"$out"
}
check "no replica: an IPPool create is refused, \"failed calling webhook\"" down_refused
check "no replica: a ConfigMap is created as ever" k -n $TNS create configmap unaffected --from-literal=a=b
unaffected_vm() {
    local out rc
    out=$(kubectl --request-timeout=30s -n $TNS create --dry-run=server -f - 2>&1 <<EOF
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: unaffected
  annotations:
    static-ip.harvesterhci.io/nic-1: 192.168.77.10
spec:
  running: false
EOF
)
    rc=$?
    echo "    no replica: VirtualMachine create: exit $rc: $(tr '\n' ' ' <<<"$out" | cut -c1-300)"
    [ $rc = 0 ]
}
check "no replica: a VirtualMachine is created (its webhook fails open)" unaffected_vm
check "controller scaled back to 2" k -n $NS scale deploy $REL-controller --replicas=2
check "  ... two replicas Ready" wait_for 180 ready_replicas 2
check "  ... an IPPool create allowed again" wait_for 60 probe_ok

echo "test-cluster-admission: $pass passed, $failn failed"
[ "$failn" = 0 ]
