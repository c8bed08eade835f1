#!/bin/bash
# tests/cluster/admission-table.sh [NAMESPACE] - the admission webhook's table test: every case of
# harvester/vm-dhcp-controller's ("upstream") webhook tests that a real API server can express
# (pkg/webhook/ippool/mutator_test.go, validator_test.go, pkg/webhook/vmnetcfg/validator_test.go,
# and the static-IP checks of commit a60f7a7's vmnetcfg/validator_test.go), then ours (strict
# IPv4, vmName, a second IPPool on one network, excludes over the serverIP, range changes that
# strand a bound address, a router set to a bound address, immutable fields, the codec's checks),
# the static-ip.harvesterhci.io/<nic> annotation of VirtualMachines, and --dry-run=server.
#
# Each case goes through kubectl (apply, create, patch, delete; most with --dry-run=server, so
# the fixtures stay as they are) and is expected to be allowed, refused (a substring of the
# message checked: the table WHY below, one place to adjust wording) or patched (the object as
# stored checked with jq). One "PASS|FAIL name" line per case, then "N passed, M failed";
# exit 1 on any failure, 2 when the fixtures cannot be set up.
#
# Needs: KUBECONFIG (an admin of a cluster where our CRDs are installed and the controller runs
# with its webhook configured and its caBundle patched), kubectl, jq. Installs the NAD and VM
# stand-in CRDs (tests/cluster/nad-crd.yaml, kubevirt-vm-crd.yaml) when absent. NAMESPACE
# (default vmd-admission-<pid>) is created and deleted at the end with everything in it.
# ADMISSION_TABLE_NO_PROBE=1: do not wait for the webhook first (to check the fixtures alone).
# ADMISSION_SERVICE_CIDR: the controller's --service-cidr (default 10.53.0.0/16, upstream's).
# The fixture NADs carry network.harvesterhci.io/clusternetwork=vmd-admission-none: no node has
# that label, so agents the controller places for the fixture pools stay Pending (no DHCP).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NS=${1:-vmd-admission-$$}
SVC_CIDR=${ADMISSION_SERVICE_CIDR:-10.53.0.0/16}
LBL=vmd-admission-table
KTIMEOUT=--request-timeout=30s
TMP=$(mktemp -d /tmp/vmd-admission-table.XXXXXX)

for c in kubectl jq; do
    command -v $c >/dev/null || { echo "SKIP: $c not installed"; exit 77; }
done
[ -n "${KUBECONFIG:-}" ] || { echo "FAIL: KUBECONFIG is not set"; exit 2; }

# --- expected refusals: an extended regular expression each, matched case-insensitively against
# kubectl's output. %P is upstream's prefix, "cannot create|update|delete KIND NS/NAME because".
# Several accept either of two layers' words: the schema (format: ipv4) or the CRD's CEL rules
# (Kubernetes >= 1.25) may refuse before the validating webhook is called.
PFX="cannot (create|update|delete) [A-Za-z]+ $NS/[a-z0-9.-]+ because"
declare -A WHY=(
    # upstream, pkg/webhook/ippool/mutator.go
    [no_server_ip]='%P fail to assign ip for dhcp server'
    [bad_range]='%P invalid pool range'
    # upstream, pkg/webhook/ippool/validator.go
    [server_outside]='server ip [0-9.]+ is not within subnet'
    [server_network]='server ip [0-9.]+ is the same as network ip'
    [server_broadcast]='server ip [0-9.]+ is the same as broadcast ip'
    [server_router]='server ip [0-9.]+ is the same as router ip'
    [server_occupied]='server ip [0-9.]+ is already occupied'
    [router_outside]='router ip [0-9.]+ is not within subnet'
    [router_network]='router ip [0-9.]+ is the same as network ip'
    [router_broadcast]='router ip [0-9.]+ is the same as broadcast ip'
    # (a create: the mutator's default end .254 comes first, upstream then says invalid pool range)
    [start_outside]='start ip [0-9.]+ is not within subnet|invalid pool range'
    [start_network]='start ip [0-9.]+ is the same as network ip'
    [start_broadcast]='start ip [0-9.]+ is the same as broadcast ip|invalid pool range'
    [end_outside]='end ip [0-9.]+ is not within subnet'
    [end_network]='end ip [0-9.]+ is the same as network ip|invalid pool range'
    [end_broadcast]='end ip [0-9.]+ is the same as broadcast ip'
    [malformed]='ParseAddr\("[^"]*"\): IPv4 field has value >255|must be of type ipv4'
    [nad_missing]='%P .*"nonexist" not found'
    [svc_overlap]='%P cidr [0-9./]+ overlaps cluster service cidr'
    [pool_in_use]="%P it's still used by VirtualMachineNetworkConfig\(s\) $NS/vmnc-a"
    # upstream, pkg/webhook/vmnetcfg/validator.go (HEAD and a60f7a7)
    [nc_nad_missing]='%P .*not found'
    [nc_pool_missing]='%P .*not found'
    [nc_no_labels]='%P network.harvesterhci.io/ippool-namespace label not found'
    [nc_half_labels]='%P network.harvesterhci.io/ippool-name label not found'
    [ip_outside]='ip address [0-9.]+ is not within subnet'
    [ip_range]='ip address [0-9.]+ is not within pool range'
    [ip_unallocatable]='ip address [0-9.]+ is not allocatable'
    [ip_taken]='ip address 192\.168\.0\.111 is already allocated to mac 52:54:00:ad:01:01'
    [ip_dup]='duplicate desired ip 192\.168\.0\.[0-9]+ on network'
    # ours
    [leading_zero]='leading zero'
    # a VMNetCfg's ipAddress: the CRD's schema (format: ipv4) is checked after the mutating and
    # before the validating webhooks, and the VMNetCfg has only a validating one. The API server
    # 1.25 checks the format with netutils.ParseIPSloppy (leading zeros accepted), so our webhook
    # refuses it; 1.20's go-openapi strfmt uses net.ParseIP, which refuses them since Go 1.17
    # (Debian's 1.20 of tests/cluster/k8s-up.sh is built with Go 1.19):
    # "... ipAddress in body must be of type ipv4" from the schema layer
    [leading_zero_nc]='leading zero|ipAddress in body must be of type ipv4'
    [not_v4]='not an IPv4 address|must be of type ipv4'
    [not_ip]='ParseAddr|not an IPv4|invalid|must be of type ipv4'
    [vmname_empty]='vmName'
    [vmname_immutable]='vmName is immutable'
    [dup_network]="net-a.*pool-a|pool-a.*net-a"
    [exclude_server]='exclu.*server|server.*exclu'
    [strand]='192\.168\.0\.[0-9]+ bound|192\.168\.0\.111'
    [range_or_strand]='invalid pool range|192\.168\.0\.[0-9]+ bound'
    [router_bound]='router ip 192\.168\.0\.50 is already allocated to mac'
    [server_immutable]='serverIP is immutable'
    [server_immutable_or]='serverIP is immutable|server ip'
    [cidr_immutable]='cidr is immutable'
    [network_immutable]='networkName is immutable'
    [router_immutable]='router is immutable'
    [router_removed]='router cannot be removed once set'
    [domain]='domain'
    [dns]='dns'
    [mac]='mac'
    [warn_no_alloc]='holds no allocatable address'
    [dup_mac]='52:54:00:ad:01:0f|mac'
)
# the regular expression of key K
why() { local re=${WHY[$1]:?no WHY entry $1}; echo "${re//%P/$PFX}"; }

pass=0 failn=0
ok() { printf 'PASS  %s\n' "$1"; pass=$((pass + 1)); }
ko() {
    printf 'FAIL  %s: %s\n' "$1" "$2"; failn=$((failn + 1))
    [ -n "${OUT:-}" ] && printf '%s\n' "$OUT" | head -n 12 | cut -c1-240 | sed 's/^/        | /'
    return 0
}
k() { kubectl $KTIMEOUT -n "$NS" "$@"; }
# the output of the last run, on one line, for a FAIL line (the callers keep the FAIL lines)
msg() { tr '\n' ' ' <<<"${OUT:-}" | cut -c1-300; }
# run CMD...: its output (both streams) in OUT, its status in RC
run() { OUT=$("$@" 2>&1); RC=$?; }

# allow NAME CMD...
allow() {
    local name=$1; shift; run "$@"
    if [ $RC = 0 ]; then ok "$name"; else ko "$name" "expected allowed, got exit $RC: $(msg)"; fi
}
# deny NAME WHYKEY CMD...: refused, the message matching WHY[WHYKEY]
deny() {
    local name=$1 re; re=$(why "$2"); shift 2; run "$@"
    if [ $RC = 0 ]; then ko "$name" "expected refused (/$re/), was allowed"
    elif grep -qiE -- "$re" <<<"$OUT"; then ok "$name"
    else ko "$name" "refused, but the message does not match /$re/: $(msg)"
    fi
}
# patched NAME JQ CMD...: allowed, and the JSON CMD prints on stdout satisfies the jq expression
# JQ; with WARN=KEY set, a warning (kubectl prints "Warning: ..." on stderr) matching WHY[KEY] too
patched() {
    local name=$1 q=$2 re; shift 2
    OUT=$("$@" 2>"$TMP/stderr"); RC=$?
    if [ $RC != 0 ]; then OUT="$OUT$(cat "$TMP/stderr")"; ko "$name" "expected allowed, got exit $RC: $(msg)"
    elif ! jq -e "$q" <<<"$OUT" >/dev/null 2>&1; then ko "$name" "allowed, but the object does not satisfy $q: $(msg)"
    elif [ -n "${WARN:-}" ] && re=$(why "$WARN") && ! grep -qiE -- "^Warning:.*($re)" "$TMP/stderr"; then
        OUT=$(cat "$TMP/stderr"); ko "$name" "allowed, but no warning matching /$re/: $(msg)"
    else ok "$name"
    fi
}

# --- object builders (JSON on stdout) ----------------------------------------------------------
# pool NAME [net=NAD] [cidr=] [server=] [router=] [start=] [end=] [exclude=a,b] [extra=JQ]
pool() {
    local name=$1 net="$NS/net-free" cidr="" server="" router="" start="" end="" exclude=""
    local extra=. kv key; shift
    for kv in "$@"; do
        key=${kv%%=*}
        case $key in
            net|cidr|server|router|start|end|exclude|extra) printf -v "$key" '%s' "${kv#*=}" ;;
            *) echo "pool: unknown key $key" >&2; return 1 ;;
        esac
    done
    jq -cn --arg ns "$NS" --arg name "$name" --arg l "$LBL" --arg net "$net" --arg cidr "$cidr" \
        --arg server "$server" --arg router "$router" --arg s "$start" --arg e "$end" \
        --arg excl "$exclude" '
        def opt(k; v): if v == "" then {} else {(k): v} end;
        {apiVersion: "network.harvesterhci.io/v1alpha1", kind: "IPPool",
         metadata: {name: $name, namespace: $ns, labels: {($l): "1"}},
         spec: {networkName: $net,
                ipv4Config: ({cidr: $cidr} + opt("serverIP"; $server) + opt("router"; $router) +
                  (if ($s + $e + $excl) == "" then {} else
                   {pool: (opt("start"; $s) + opt("end"; $e) +
                           (if $excl == "" then {} else {exclude: ($excl | split(","))} end))} end))}}
        | '"$extra"
}
# vmnc NAME VMNAME [NET,MAC[,IP]]...
vmnc() {
    local name=$1 vm=$2 nics="[]" n net mac ip; shift 2
    for n in "$@"; do
        IFS=, read -r net mac ip <<<"$n"
        nics=$(jq -c --arg net "$net" --arg mac "$mac" --arg ip "$ip" \
            '. + [{networkName: $net, macAddress: $mac} + (if $ip == "" then {} else {ipAddress: $ip} end)]' <<<"$nics")
    done
    jq -cn --arg ns "$NS" --arg name "$name" --arg vm "$vm" --arg l "$LBL" --argjson nics "$nics" \
        '{apiVersion: "network.harvesterhci.io/v1alpha1", kind: "VirtualMachineNetworkConfig",
          metadata: {name: $name, namespace: $ns, labels: {($l): "1"}},
          spec: {vmName: $vm, networkConfigs: $nics}}'
}
# vm NAME NET MAC [STATIC_IP]: a KubeVirt VirtualMachine with one Multus NIC "nic-1"
vm() {
    jq -cn --arg ns "$NS" --arg name "$1" --arg net "$2" --arg mac "$3" --arg ip "${4:-}" --arg l "$LBL" '
        {apiVersion: "kubevirt.io/v1", kind: "VirtualMachine",
         metadata: ({name: $name, namespace: $ns, labels: {($l): "1"}} +
                    (if $ip == "" then {} else {annotations: {"static-ip.harvesterhci.io/nic-1": $ip}} end)),
         spec: {running: false, template: {spec: {
             domain: {devices: {interfaces: [{name: "default", masquerade: {}},
                                             {name: "nic-1", bridge: {}, macAddress: $mac}]}},
             networks: [{name: "default", pod: {}}, {name: "nic-1", multus: {networkName: $net}}]}}}}'
}
# nad NAME [LABELS_JSON]
nad() {
    jq -cn --arg ns "$NS" --arg name "$1" --arg l "$LBL" --argjson extra "${2:-{\}}" '
        {apiVersion: "k8s.cni.cncf.io/v1", kind: "NetworkAttachmentDefinition",
         metadata: {name: $name, namespace: $ns,
                    labels: ({($l): "1", "network.harvesterhci.io/clusternetwork": "vmd-admission-none"} + $extra)},
         spec: {config: ("{\"cniVersion\":\"0.3.1\",\"name\":\"" + $name + "\",\"type\":\"bridge\",\"bridge\":\"vmd-adm0\",\"ipam\":{}}")}}'
}
# --validate=false: kubectl before 1.25 checks required fields itself, against the CRD's schema,
# before the mutating webhook could fill them in (an IPPool with only a CIDR); the API server
# validates the mutated object in any case
create_dry() { k create --validate=false --dry-run=server -o json -f - <<<"$1"; }
create() { k create --validate=false -o json -f - <<<"$1"; }
apply() { k apply --validate=false -f - <<<"$1"; }
patch_dry() { k patch "$1" "$2" --type "$3" -p "$4" --dry-run=server -o json; }
patch() { k patch "$1" "$2" --type "$3" -p "$4" -o json; }
absent() { ! k get "$1" "$2" >/dev/null 2>&1; }
# wait_for SECONDS CMD...: CMD every second until it succeeds (status of the last try)
wait_for() {
    local end=$((SECONDS + $1)); shift
    while [ $SECONDS -lt $end ]; do "$@" && return 0; sleep 1; done
    "$@"
}

# --- cleanup: everything labelled by the table, VMNetCfgs first (an IPPool in use cannot go) ----
cleanup() {
    trap '' INT TERM
    local kind
    for kind in virtualmachines.kubevirt.io virtualmachinenetworkconfigs ippools \
        network-attachment-definitions.k8s.cni.cncf.io; do
        k delete "$kind" -l "$LBL" --wait=false >/dev/null 2>&1
        # the controller removes its finalizers; an IPPool is refused while a VMNetCfg uses it
        wait_for 60 bash -c "[ -z \"\$(kubectl $KTIMEOUT -n '$NS' get '$kind' -l '$LBL' -o name 2>/dev/null)\" ] ||
            { kubectl $KTIMEOUT -n '$NS' delete '$kind' -l '$LBL' --wait=false >/dev/null 2>&1; false; }" ||
            echo "warning: $kind left in $NS: $(k get "$kind" -l "$LBL" -o name 2>/dev/null | tr "\n" " ")"
    done
    kubectl $KTIMEOUT delete namespace "$NS" --wait=false >/dev/null 2>&1
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- fixtures ---------------------------------------------------------------------------------
setup_fail() { echo "FAIL: fixture: $1"; [ -n "${OUT:-}" ] && sed 's/^/    | /' <<<"$OUT" | head -n 20; exit 2; }
for crd in nad-crd kubevirt-vm-crd; do
    name=$(sed -nE 's/^  name: (.*)/\1/p' "$ROOT/tests/cluster/$crd.yaml" | head -n 1)
    if ! kubectl $KTIMEOUT get crd "$name" >/dev/null 2>&1; then
        run kubectl $KTIMEOUT apply -f "$ROOT/tests/cluster/$crd.yaml" || true
        [ $RC = 0 ] || setup_fail "install $crd.yaml"
        run kubectl $KTIMEOUT wait --for condition=Established --timeout=60s crd "$name"
        [ $RC = 0 ] || setup_fail "CRD $name not Established"
    fi
done
# a namespace of an earlier run still terminating (a real cluster finalizes it in seconds)
ns_terminating() { [ "$(kubectl $KTIMEOUT get namespace "$NS" -o jsonpath='{.status.phase}' 2>/dev/null)" = Terminating ]; }
ns_gone() { ! ns_terminating; }
wait_for 120 ns_gone || setup_fail "namespace $NS still Terminating (a bare API server never finalizes it: pick another name)"
run kubectl $KTIMEOUT create namespace "$NS"
[ $RC = 0 ] || grep -q AlreadyExists <<<"$OUT" || setup_fail "namespace $NS"

# The webhook answers: a /32 pool is refused by the mutator (upstream: no address for the server).
webhook_up() {
    run create_dry "$(pool probe cidr=172.19.64.128/32)"
    [ $RC != 0 ] && grep -qiE "$(why no_server_ip)" <<<"$OUT"
}
[ "${ADMISSION_TABLE_NO_PROBE:-0}" = 1 ] || wait_for 90 webhook_up || setup_fail "the admission webhook does not refuse a /32 IPPool (not configured or not answering)"

# net-a: pool-a (names differ), 192.168.0.0/24, serverIP .2, router .1, range .1-.200 (the
#   serverIP and router RESERVED in it), exclude .100; vmnc-a binds 52:54:00:ad:01:01 to static .111, vmnc-d has a dynamic NIC and a static
#   .130, vmnc-c one dynamic NIC.
# net-b: pool net-b (same name as its NAD), 192.168.0.0/24, serverIP .2, no router, range
#   .10-.200; vmnc-b binds 52:54:00:ad:01:0b to static .50.
# net-free: a NAD without pool (dry-run creates of IPPools land here); net-nolabel: a NAD
#   without ippool labels and without pool; net-half: only the ippool-namespace label;
#   net-ghost: labels naming an IPPool that does not exist.
MAC1=52:54:00:ad:01:01 MAC2=52:54:00:ad:01:02 MAC3=52:54:00:ad:01:03 MAC4=52:54:00:ad:01:04
MAC5=52:54:00:ad:01:05 MACB=52:54:00:ad:01:0b
for n in net-a net-b net-free net-nolabel net-c; do
    run apply "$(nad $n)"; [ $RC = 0 ] || setup_fail "NAD $n"
done
run apply "$(nad net-half '{"network.harvesterhci.io/ippool-namespace":"'"$NS"'"}')"
[ $RC = 0 ] || setup_fail "NAD net-half"
run apply "$(nad net-ghost '{"network.harvesterhci.io/ippool-namespace":"'"$NS"'","network.harvesterhci.io/ippool-name":"ghost"}')"
[ $RC = 0 ] || setup_fail "NAD net-ghost"
run apply "$(pool pool-a net=$NS/net-a cidr=192.168.0.0/24 server=192.168.0.2 router=192.168.0.1 \
    start=192.168.0.1 end=192.168.0.200 exclude=192.168.0.100)"
[ $RC = 0 ] || setup_fail "IPPool pool-a"
run apply "$(pool net-b net=$NS/net-b cidr=192.168.0.0/24 server=192.168.0.2 start=192.168.0.10 end=192.168.0.200)"
[ $RC = 0 ] || setup_fail "IPPool net-b"
# the controller labels the NADs with their pool (upstream's ensureNADLabels): VMNetCfgs need it
labelled() {
    [ "$(k get network-attachment-definitions.k8s.cni.cncf.io "$1" \
        -o jsonpath='{.metadata.labels.network\.harvesterhci\.io/ippool-name}' 2>/dev/null)" = "$2" ]
}
wait_for 120 labelled net-a pool-a || setup_fail "NAD net-a not labelled with its IPPool pool-a by the controller"
wait_for 120 labelled net-b net-b || setup_fail "NAD net-b not labelled with its IPPool net-b by the controller"
run apply "$(vmnc vmnc-a vm-a "$NS/net-a,$MAC1,192.168.0.111")"; [ $RC = 0 ] || setup_fail "VMNetCfg vmnc-a"
run apply "$(vmnc vmnc-b vm-b "$NS/net-b,$MACB,192.168.0.50")"; [ $RC = 0 ] || setup_fail "VMNetCfg vmnc-b"
run apply "$(vmnc vmnc-c vm-c "$NS/net-a,$MAC3")"; [ $RC = 0 ] || setup_fail "VMNetCfg vmnc-c"
run apply "$(vmnc vmnc-d vm-d "$NS/net-a,$MAC4" "$NS/net-a,$MAC5,192.168.0.130")"
[ $RC = 0 ] || setup_fail "VMNetCfg vmnc-d"
# bound: IPPool POOL's status.ipv4.allocated[IP] is MAC
bound() {
    [ "$(k get ippool "$1" -o json 2>/dev/null | jq -r --arg ip "$2" '.status.ipv4.allocated[$ip] // empty')" = "$3" ]
}
wait_for 120 bound pool-a 192.168.0.111 $MAC1 || setup_fail "pool-a: 192.168.0.111 not bound to $MAC1 in its status"
wait_for 120 bound pool-a 192.168.0.130 $MAC5 || setup_fail "pool-a: 192.168.0.130 not bound to $MAC5 in its status"
wait_for 120 bound pool-a 192.168.0.100 EXCLUDED || setup_fail "pool-a: 192.168.0.100 not EXCLUDED in its status"
wait_for 120 bound pool-a 192.168.0.2 RESERVED || setup_fail "pool-a: the serverIP 192.168.0.2 not RESERVED in its status"
wait_for 120 bound net-b 192.168.0.50 $MACB || setup_fail "net-b: 192.168.0.50 not bound to $MACB in its status"
echo "fixtures ready in namespace $NS (service CIDR $SVC_CIDR)"

# =================================================================================================
# upstream pkg/webhook/ippool/mutator_test.go (TestMutator_Create): the object as it would be
# stored (--dry-run=server -o json prints it after the mutating webhook)
# =================================================================================================
P='.spec.ipv4Config'
patched "mutator: no router, server/start/end undefined -> .1, .1-.254" \
    "$P.serverIP == \"192.168.0.1\" and $P.pool.start == \"192.168.0.1\" and $P.pool.end == \"192.168.0.254\"" \
    create_dry "$(pool m1 cidr=192.168.0.0/24)"
patched "mutator: router .129, /29 -> server .130, .129-.134" \
    "$P.serverIP == \"172.19.64.130\" and $P.pool.start == \"172.19.64.129\" and $P.pool.end == \"172.19.64.134\"" \
    create_dry "$(pool m2 cidr=172.19.64.128/29 router=172.19.64.129)"
patched "mutator: server, start, end all defined -> unchanged" \
    "$P.serverIP == \"172.19.64.130\" and $P.pool.start == \"172.19.64.131\" and $P.pool.end == \"172.19.64.133\" and $P.router == \"172.19.64.129\"" \
    create_dry "$(pool m3 cidr=172.19.64.128/29 server=172.19.64.130 router=172.19.64.129 start=172.19.64.131 end=172.19.64.133)"
WARN=warn_no_alloc patched "mutator: /30 with router -> server .130, .129-.130 (warned: nothing allocatable)" \
    "$P.serverIP == \"172.19.64.130\" and $P.pool.start == \"172.19.64.129\" and $P.pool.end == \"172.19.64.130\"" \
    create_dry "$(pool m4 cidr=172.19.64.128/30 router=172.19.64.129)"
patched "mutator: /30 without router -> server .129, .129-.130" \
    "$P.serverIP == \"172.19.64.129\" and $P.pool.start == \"172.19.64.129\" and $P.pool.end == \"172.19.64.130\"" \
    create_dry "$(pool m5 cidr=172.19.64.128/30)"
patched "mutator: /30 with start .130 -> server .129, .130-.130" \
    "$P.serverIP == \"172.19.64.129\" and $P.pool.start == \"172.19.64.130\" and $P.pool.end == \"172.19.64.130\"" \
    create_dry "$(pool m6 cidr=172.19.64.128/30 start=172.19.64.130)"
patched "mutator: excludes .129 .131 -> server .130, .129-.134, excludes kept" \
    "$P.serverIP == \"172.19.64.130\" and $P.pool.start == \"172.19.64.129\" and $P.pool.end == \"172.19.64.134\" and $P.pool.exclude == [\"172.19.64.129\",\"172.19.64.131\"]" \
    create_dry "$(pool m7 cidr=172.19.64.128/29 exclude=172.19.64.129,172.19.64.131)"
deny "mutator: only the broadcast address left for the server" no_server_ip \
    create_dry "$(pool m8 cidr=172.19.64.128/29 router=172.19.64.130 exclude=172.19.64.129,172.19.64.131,172.19.64.132,172.19.64.133,172.19.64.134)"
deny "mutator: /32" no_server_ip create_dry "$(pool m9 cidr=172.19.64.128/32)"
deny "mutator: /31" no_server_ip create_dry "$(pool m10 cidr=172.19.64.128/31)"
patched "mutator: server .50, router .100 -> range .1-.254, server kept" \
    "$P.serverIP == \"192.168.0.50\" and $P.pool.start == \"192.168.0.1\" and $P.pool.end == \"192.168.0.254\"" \
    create_dry "$(pool m11 cidr=192.168.0.0/24 server=192.168.0.50 router=192.168.0.100)"

# =================================================================================================
# upstream pkg/webhook/ippool/validator_test.go (TestValidator_Create), on NAD net-free
# =================================================================================================
C=cidr=192.168.0.0/24
allow "ippool create: valid server ip" create_dry "$(pool v1 $C server=192.168.0.2)"
deny "ippool create: server ip out of subnet" server_outside create_dry "$(pool v2 $C server=192.168.100.2)"
deny "ippool create: server ip = network ip" server_network create_dry "$(pool v3 cidr=192.168.0.128/25 server=192.168.0.128)"
deny "ippool create: server ip = broadcast ip" server_broadcast create_dry "$(pool v4 cidr=192.168.0.0/25 server=192.168.0.127)"
deny "ippool create: server ip = router ip" server_router \
    create_dry "$(pool v5 cidr=192.168.0.254/24 server=192.168.0.254 router=192.168.0.254)"
deny "ippool create: router malformed (192.168.0.1000)" malformed create_dry "$(pool v6 $C router=192.168.0.1000)"
deny "ippool create: router out of subnet" router_outside create_dry "$(pool v7 $C router=192.168.1.1)"
deny "ippool create: router = network ip" router_network create_dry "$(pool v8 $C router=192.168.0.0)"
deny "ippool create: router = broadcast ip" router_broadcast create_dry "$(pool v9 $C router=192.168.0.255)"
deny "ippool create: start malformed (192.168.0.1000)" malformed create_dry "$(pool v10 $C start=192.168.0.1000)"
deny "ippool create: start out of subnet" start_outside create_dry "$(pool v11 $C start=192.168.1.100)"
deny "ippool create: start = network ip" start_network create_dry "$(pool v12 $C start=192.168.0.0)"
deny "ippool create: start = broadcast ip" start_broadcast create_dry "$(pool v13 $C start=192.168.0.255)"
deny "ippool create: end malformed (192.168.0.1000)" malformed create_dry "$(pool v14 $C end=192.168.0.1000)"
deny "ippool create: end out of subnet" end_outside create_dry "$(pool v15 $C end=192.168.1.100)"
deny "ippool create: end = network ip" end_network create_dry "$(pool v16 $C end=192.168.0.0)"
deny "ippool create: end = broadcast ip" end_broadcast create_dry "$(pool v17 $C end=192.168.0.255)"
deny "ippool create: non-existent network name" nad_missing create_dry "$(pool v18 net=nonexist $C)"
svc_net=${SVC_CIDR%/*}
deny "ippool create: cidr inside the service cidr ($svc_net/24)" svc_overlap create_dry "$(pool v19 cidr=$svc_net/24)"
deny "ippool create: cidr containing the service cidr (10.0.0.0/8)" svc_overlap create_dry "$(pool v20 cidr=10.0.0.0/8)"

# =================================================================================================
# upstream TestValidator_Update, against the stored pool-a (router .1) and net-b (no router):
# serverIP, cidr, router and networkName are immutable in our CRD (its CEL rules, and the webhook
# on clusters older than 1.25), so upstream's serverIP changes are refused either way.
# =================================================================================================
mp() { echo "{\"spec\":{\"ipv4Config\":$1}}"; }
deny "ippool update: server ip changed .2 -> .254 (upstream: allowed)" server_immutable \
    patch_dry ippool pool-a merge "$(mp '{"serverIP":"192.168.0.254"}')"
deny "ippool update: server ip out of subnet" server_immutable_or \
    patch_dry ippool pool-a merge "$(mp '{"serverIP":"192.168.100.2"}')"
deny "ippool update: server ip = network ip" server_immutable_or \
    patch_dry ippool pool-a merge "$(mp '{"serverIP":"192.168.0.0"}')"
deny "ippool update: server ip = broadcast ip" server_immutable_or \
    patch_dry ippool pool-a merge "$(mp '{"serverIP":"192.168.0.255"}')"
deny "ippool update: server ip = router ip" server_immutable_or \
    patch_dry ippool pool-a merge "$(mp '{"serverIP":"192.168.0.1"}')"
deny "ippool update: server ip = an allocated ip" server_immutable_or \
    patch_dry ippool pool-a merge "$(mp '{"serverIP":"192.168.0.111"}')"
deny "ippool update: server ip = an excluded ip" server_immutable_or \
    patch_dry ippool pool-a merge "$(mp '{"serverIP":"192.168.0.100"}')"
deny "ippool update: router added, malformed" malformed patch_dry ippool net-b merge "$(mp '{"router":"192.168.0.1000"}')"
deny "ippool update: router added, out of subnet" router_outside patch_dry ippool net-b merge "$(mp '{"router":"192.168.1.1"}')"
deny "ippool update: router added, = network ip" router_network patch_dry ippool net-b merge "$(mp '{"router":"192.168.0.0"}')"
deny "ippool update: router added, = broadcast ip" router_broadcast patch_dry ippool net-b merge "$(mp '{"router":"192.168.0.255"}')"
deny "ippool update: router added, = server ip" server_router patch_dry ippool net-b merge "$(mp '{"router":"192.168.0.2"}')"
allow "ippool update: router added, valid" patch_dry ippool net-b merge "$(mp '{"router":"192.168.0.1"}')"
deny "ippool update: start malformed" malformed patch_dry ippool pool-a merge "$(mp '{"pool":{"start":"192.168.0.1000"}}')"
deny "ippool update: start out of subnet" start_outside patch_dry ippool pool-a merge "$(mp '{"pool":{"start":"192.168.1.100"}}')"
deny "ippool update: start = network ip" start_network patch_dry ippool pool-a merge "$(mp '{"pool":{"start":"192.168.0.0"}}')"
deny "ippool update: start = broadcast ip" start_broadcast patch_dry ippool pool-a merge "$(mp '{"pool":{"start":"192.168.0.255"}}')"
deny "ippool update: end malformed" malformed patch_dry ippool pool-a merge "$(mp '{"pool":{"end":"192.168.0.1000"}}')"
deny "ippool update: end out of subnet" end_outside patch_dry ippool pool-a merge "$(mp '{"pool":{"end":"192.168.1.100"}}')"
deny "ippool update: end = network ip" end_network patch_dry ippool pool-a merge "$(mp '{"pool":{"end":"192.168.0.0"}}')"
deny "ippool update: end = broadcast ip" end_broadcast patch_dry ippool pool-a merge "$(mp '{"pool":{"end":"192.168.0.255"}}')"
deny "ippool update: network name -> non-existent" network_immutable \
    patch_dry ippool pool-a merge '{"spec":{"networkName":"nonexist"}}'
deny "ippool update: cidr -> the service cidr" cidr_immutable patch_dry ippool pool-a merge "$(mp "{\"cidr\":\"$svc_net/24\"}")"
allow "ippool update: end .200 -> .250 (no bound address stranded)" \
    patch_dry ippool pool-a merge "$(mp '{"pool":{"end":"192.168.0.250"}}')"
allow "ippool update: dns and leaseTime" patch_dry ippool pool-a merge "$(mp '{"dns":["192.168.0.53"],"leaseTime":600}')"

# ours: immutable fields (the CRD's CEL messages), ranges, excludes, routers
deny "ippool update: cidr changed" cidr_immutable patch_dry ippool pool-a merge "$(mp '{"cidr":"192.168.0.0/23"}')"
deny "ippool update: networkName changed" network_immutable patch_dry ippool pool-a merge "{\"spec\":{\"networkName\":\"$NS/net-free\"}}"
deny "ippool update: router changed" router_immutable patch_dry ippool pool-a merge "$(mp '{"router":"192.168.0.3"}')"
deny "ippool update: router removed" router_removed patch_dry ippool pool-a json '[{"op":"remove","path":"/spec/ipv4Config/router"}]'
deny "ippool update: start .150 strands bound .111" strand patch_dry ippool pool-a merge "$(mp '{"pool":{"start":"192.168.0.150"}}')"
deny "ippool update: end .110 strands bound .111" strand patch_dry ippool pool-a merge "$(mp '{"pool":{"end":"192.168.0.110"}}')"
deny "ippool update: exclude onto bound .111" strand patch_dry ippool pool-a merge "$(mp '{"pool":{"exclude":["192.168.0.100","192.168.0.111"]}}')"
deny "ippool update: exclude covering the serverIP" exclude_server \
    patch_dry ippool pool-a merge "$(mp '{"pool":{"exclude":["192.168.0.100","192.168.0.2"]}}')"
deny "ippool update: router added = address bound to a VM (.50)" router_bound \
    patch_dry ippool net-b merge "$(mp '{"router":"192.168.0.50"}')"
deny "ippool update: start after end (upstream: allowed)" range_or_strand patch_dry ippool pool-a merge "$(mp '{"pool":{"start":"192.168.0.201"}}')"
allow "ippool apply: unchanged pool-a re-applied" apply "$(pool pool-a net=$NS/net-a cidr=192.168.0.0/24 \
    server=192.168.0.2 router=192.168.0.1 start=192.168.0.1 end=192.168.0.200 exclude=192.168.0.100)"
deny "ippool apply: pool-a with another serverIP" server_immutable apply "$(pool pool-a net=$NS/net-a cidr=192.168.0.0/24 \
    server=192.168.0.3 router=192.168.0.1 start=192.168.0.1 end=192.168.0.200 exclude=192.168.0.100)"

# =================================================================================================
# upstream TestValidator_Delete (validator.go Delete): a pool in use cannot go
# =================================================================================================
deny "ippool delete: still used by vmnc-a" pool_in_use k delete ippool pool-a --wait=false
deny "ippool delete --dry-run=server: still used" pool_in_use k delete ippool pool-a --dry-run=server

# =================================================================================================
# ours: IPPool create
# =================================================================================================
deny "ippool create: serverIP 010.1.0.2 (leading zero)" leading_zero \
    create_dry "$(pool o1 cidr=10.1.0.0/24 server=010.1.0.2)"
deny "ippool create: serverIP ::ffff:10.1.0.2" not_v4 create_dry "$(pool o2 cidr=10.1.0.0/24 server=::ffff:10.1.0.2)"
deny "ippool create: router 10.1.0.01 (leading zero)" leading_zero \
    create_dry "$(pool o3 cidr=10.1.0.0/24 server=10.1.0.2 router=10.1.0.01)"
deny "ippool create: exclude 010.1.0.9 (leading zero)" leading_zero \
    create_dry "$(pool o4 cidr=10.1.0.0/24 server=10.1.0.2 exclude=010.1.0.9)"
deny "ippool create: a second pool on net-a" dup_network \
    create "$(pool o5 net=$NS/net-a cidr=192.168.0.0/24 server=192.168.0.2)"
deny "ippool create --dry-run=server: a second pool on net-a" dup_network \
    create_dry "$(pool o6 net=$NS/net-a cidr=192.168.0.0/24 server=192.168.0.2)"
deny "ippool create: exclude covering the serverIP" exclude_server \
    create_dry "$(pool o7 $C server=192.168.0.2 exclude=192.168.0.2)"
deny "ippool create: start after end" bad_range create_dry "$(pool o8 $C server=192.168.0.2 start=192.168.0.200 end=192.168.0.100)"
deny "ippool create: domainName 'bad domain!'" domain \
    create_dry "$(pool o9 $C server=192.168.0.2 extra='.spec.ipv4Config.domainName = "bad domain!"')"
deny "ippool create: dns entry not an address" dns \
    create_dry "$(pool o10 $C server=192.168.0.2 extra='.spec.ipv4Config.dns = ["dns.example"]')"
patched "ippool create: upstream's example with every field kept" \
    "$P.serverIP == \"192.168.0.2\" and $P.router == \"192.168.0.1\" and $P.dns == [\"1.1.1.1\"] and $P.leaseTime == 300" \
    create_dry "$(pool o11 $C server=192.168.0.2 router=192.168.0.1 start=192.168.0.101 end=192.168.0.200 \
        extra='.spec.ipv4Config += {dns: ["1.1.1.1"], domainName: "example.com", leaseTime: 300}')"

# --dry-run=server: nothing is stored
allow "dry-run create of a valid pool" create_dry "$(pool dry1 $C server=192.168.0.2)"
allow "  ... and it is not stored" absent ippool dry1
run create_dry "$(pool dry2 net=$NS/net-c cidr=192.168.5.0/24)"
allow "dry-run create on net-c, then a real create of the same: no duplicate left behind" \
    create "$(pool dry2 net=$NS/net-c cidr=192.168.5.0/24)"
# stored with upstream's defaults (the object read back, not the create's answer)
stored_ok=".spec.ipv4Config.serverIP == \"192.168.5.1\" and .spec.ipv4Config.pool.start == \"192.168.5.1\" and .spec.ipv4Config.pool.end == \"192.168.5.254\""
patched "an IPPool with only a CIDR is stored with upstream's defaults" "$stored_ok" k get ippool dry2 -o json
allow "delete --dry-run=server of an unused pool" k delete ippool dry2 --dry-run=server
allow "  ... and it is still there" k get ippool dry2
allow "delete of an unused pool" k delete ippool dry2 --wait=true --timeout=60s

# =================================================================================================
# upstream pkg/webhook/vmnetcfg/validator_test.go (HEAD; a60f7a7 for the static IPs): create
# =================================================================================================
allow "vmnetcfg create: ippool name differs from nad name, nad labelled" create_dry "$(vmnc n1 vm-n1 "$NS/net-a,$MAC2")"
allow "vmnetcfg create: ippool and nad share the name, nad labelled" create_dry "$(vmnc n2 vm-n2 "$NS/net-b,$MAC2")"
deny "vmnetcfg create: labels name a non-existent ippool" nc_pool_missing create_dry "$(vmnc n3 vm-n3 "$NS/net-ghost,$MAC2")"
deny "vmnetcfg create: non-existent nad" nc_nad_missing create_dry "$(vmnc n4 vm-n4 "$NS/nonexist,$MAC2")"
deny "vmnetcfg create: nad without ippool labels" nc_no_labels create_dry "$(vmnc n5 vm-n5 "$NS/net-nolabel,$MAC2")"
deny "vmnetcfg create: nad with incomplete labels" nc_half_labels create_dry "$(vmnc n6 vm-n6 "$NS/net-half,$MAC2")"
allow "vmnetcfg create: static ip inside the pool" create_dry "$(vmnc n7 vm-n7 "$NS/net-a,$MAC2,192.168.0.112")"
deny "vmnetcfg create: static ip outside the cidr" ip_outside create_dry "$(vmnc n8 vm-n8 "$NS/net-a,$MAC2,192.168.1.111")"
deny "vmnetcfg create: static ip outside the pool range" ip_range create_dry "$(vmnc n9 vm-n9 "$NS/net-a,$MAC2,192.168.0.250")"
deny "vmnetcfg create: static ip excluded" ip_unallocatable create_dry "$(vmnc n10 vm-n10 "$NS/net-a,$MAC2,192.168.0.100")"
deny "vmnetcfg create: static ip reserved (the serverIP)" ip_unallocatable create_dry "$(vmnc n11 vm-n11 "$NS/net-a,$MAC2,192.168.0.2")"
deny "vmnetcfg create: static ip allocated to another mac" ip_taken create_dry "$(vmnc n12 vm-n12 "$NS/net-a,$MAC2,192.168.0.111")"
deny "vmnetcfg create: one static ip twice on a network" ip_dup \
    create_dry "$(vmnc n13 vm-n13 "$NS/net-a,$MAC2,192.168.0.120" "$NS/net-a,52:54:00:ad:01:0e,192.168.0.120")"
allow "vmnetcfg create: static ip held by its own mac" create_dry "$(vmnc n14 vm-n14 "$NS/net-a,$MAC1,192.168.0.111")"
# ours
deny "vmnetcfg create: static ip 192.168.0.012 (leading zero)" leading_zero_nc \
    create_dry "$(vmnc o20 vm-o20 "$NS/net-a,$MAC2,192.168.0.012")"
deny "vmnetcfg create: static ip ::ffff:192.168.0.12" not_v4 create_dry "$(vmnc o21 vm-o21 "$NS/net-a,$MAC2,::ffff:192.168.0.12")"
deny "vmnetcfg create: vmName empty" vmname_empty create_dry "$(vmnc o22 "" "$NS/net-a,$MAC2")"
deny "vmnetcfg create: macAddress not a MAC" mac create_dry "$(vmnc o23 vm-o23 "$NS/net-a,zz:22:33:44:55:66")"
deny "vmnetcfg create: one MAC twice on a network" dup_mac \
    create_dry "$(vmnc o24 vm-o24 "$NS/net-a,52:54:00:ad:01:0f" "$NS/net-a,52:54:00:ad:01:0f")"

# =================================================================================================
# a60f7a7 TestValidator_Update, against the stored vmnc-a (.111 static), vmnc-c (dynamic), vmnc-d
# =================================================================================================
nics() { echo "{\"spec\":{\"networkConfigs\":$1}}"; }
allow "vmnetcfg update: static ip inside the pool set" \
    patch_dry vmnetcfg vmnc-c merge "$(nics "[{\"networkName\":\"$NS/net-a\",\"macAddress\":\"$MAC3\",\"ipAddress\":\"192.168.0.113\"}]")"
deny "vmnetcfg update: static ip outside the pool range set" ip_range \
    patch_dry vmnetcfg vmnc-c merge "$(nics "[{\"networkName\":\"$NS/net-a\",\"macAddress\":\"$MAC3\",\"ipAddress\":\"192.168.0.250\"}]")"
allow "vmnetcfg update: unchanged static ip (a label added)" \
    patch_dry vmnetcfg vmnc-a merge '{"metadata":{"labels":{"touched":"1"}}}'
allow "vmnetcfg update: network config removed" patch_dry vmnetcfg vmnc-a merge "$(nics '[]')"
allow "vmnetcfg update: static ip removed" \
    patch_dry vmnetcfg vmnc-a merge "$(nics "[{\"networkName\":\"$NS/net-a\",\"macAddress\":\"$MAC1\"}]")"
allow "vmnetcfg update: static ip changed .111 -> .114" \
    patch_dry vmnetcfg vmnc-a merge "$(nics "[{\"networkName\":\"$NS/net-a\",\"macAddress\":\"$MAC1\",\"ipAddress\":\"192.168.0.114\"}]")"
allow "vmnetcfg update: new dynamic network config" \
    patch_dry vmnetcfg vmnc-a merge "$(nics "[{\"networkName\":\"$NS/net-a\",\"macAddress\":\"$MAC1\",\"ipAddress\":\"192.168.0.111\"},{\"networkName\":\"$NS/net-b\",\"macAddress\":\"$MAC1\"}]")"
deny "vmnetcfg update: changed static ip duplicates an unchanged one" ip_dup \
    patch_dry vmnetcfg vmnc-d merge "$(nics "[{\"networkName\":\"$NS/net-a\",\"macAddress\":\"$MAC4\",\"ipAddress\":\"192.168.0.130\"},{\"networkName\":\"$NS/net-a\",\"macAddress\":\"$MAC5\",\"ipAddress\":\"192.168.0.130\"}]")"
deny "vmnetcfg update: static ip changed to one held by another mac" ip_taken \
    patch_dry vmnetcfg vmnc-c merge "$(nics "[{\"networkName\":\"$NS/net-a\",\"macAddress\":\"$MAC3\",\"ipAddress\":\"192.168.0.111\"}]")"
deny "vmnetcfg update: vmName changed" vmname_immutable patch_dry vmnetcfg vmnc-a merge '{"spec":{"vmName":"other"}}'
deny "vmnetcfg update: static ip 192.168.0.013 (leading zero)" leading_zero_nc \
    patch_dry vmnetcfg vmnc-c merge "$(nics "[{\"networkName\":\"$NS/net-a\",\"macAddress\":\"$MAC3\",\"ipAddress\":\"192.168.0.013\"}]")"

# =================================================================================================
# VirtualMachines: static-ip.harvesterhci.io/<nic> (KubeVirt's CRD stand-in; dry-run: no VMNetCfg
# is made from them)
# =================================================================================================
VMAC=52:54:00:ad:00:01
allow "vm create: no static-ip annotation" create_dry "$(vm vm1 "$NS/net-a" $VMAC)"
allow "vm create: static ip inside the pool" create_dry "$(vm vm2 "$NS/net-a" $VMAC 192.168.0.140)"
deny "vm create: static ip 192.168.0.014 (leading zero)" leading_zero create_dry "$(vm vm3 "$NS/net-a" $VMAC 192.168.0.014)"
deny "vm create: static ip outside the pool range" ip_range create_dry "$(vm vm4 "$NS/net-a" $VMAC 192.168.0.250)"
deny "vm create: static ip held by another mac" ip_taken create_dry "$(vm vm5 "$NS/net-a" $VMAC 192.168.0.111)"
deny "vm create: static ip not an address" not_ip create_dry "$(vm vm6 "$NS/net-a" $VMAC not-an-ip)"
deny "vm create: static ip ::ffff:192.168.0.12" not_v4 create_dry "$(vm vm7 "$NS/net-a" $VMAC ::ffff:192.168.0.12)"

echo "admission-table: $pass passed, $failn failed"
[ "$failn" = 0 ]
