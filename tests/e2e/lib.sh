#!/bin/bash
# tests/e2e/lib.sh - shared pieces of the end-to-end tests (sourced after tests/netns/lib.sh,
# whose namespace, bridge, VM, wait and check helpers it reuses).
#
# Topology: everything runs inside $SRV (tests/netns/lib.sh), so traffic stays on its loopback
# and bridges: build/test-apiserver (HTTPS on 127.0.0.1, state in $TMP/api), the CRDs applied
# from crds/*.yaml, build/vm-dhcp-controller (--no-leader-election unless told otherwise),
# and one build/vm-dhcp-agent per pool in Kubernetes mode (--ippool-ref, --kubeconfig) standing
# in for the agent pod, bound to that pool's bridge. VMs are namespaces running ISC dhclient.
. "$(dirname "${BASH_SOURCE[0]}")/../netns/lib.sh"
APISERVER=${APISERVER:-$ROOT/build/test-apiserver}
CONTROLLER=${CONTROLLER:-$ROOT/build/vm-dhcp-controller}
YAML2JSON=${YAML2JSON:-$ROOT/build/e2e/yaml2json}
GROUP=/apis/network.harvesterhci.io/v1alpha1/namespaces/default
POOLS=$GROUP/ippools
CFGS=$GROUP/virtualmachinenetworkconfigs
NADS=/apis/k8s.cni.cncf.io/v1/namespaces/default/network-attachment-definitions
CRDS=/apis/apiextensions.k8s.io/v1/customresourcedefinitions
CTRL_NS=vmdhcp-system
CTRL_PORT=9190
API_PID=
CTRL_PID=
declare -A AGENTS=() # pool -> agent PID
declare -A AGENT_PORT=() AGENT_IF=()
LEASE=${LEASE:-60}

# e2e_require [COMMANDS...]: root, tools, built programs; then the server namespace
e2e_require() {
    require jq "$@"
    local p
    for p in "$APISERVER" "$CONTROLLER" "$YAML2JSON"; do
        [ -x "$p" ] || { echo "FAIL: $p not built (make programs build/e2e/yaml2json)"; exit 1; }
    done
    trap e2e_cleanup EXIT
    make_server
    # libevent binds 127.0.0.1 through getaddrinfo(AI_ADDRCONFIG), which wants one
    # non-loopback IPv4 address in the namespace: a veth pair inside it holds one
    ip -n "$SRV" link add api0 type veth peer name api1
    ip -n "$SRV" addr add 192.0.2.1/32 dev api0
    ip -n "$SRV" link set api0 up
    ip -n "$SRV" link set api1 up
}

e2e_cleanup() {
    local p
    trap '' INT TERM
    for p in "${AGENTS[@]}"; do stop_pid "$p"; done
    [ -n "$CTRL_PID" ] && stop_pid "$CTRL_PID"
    [ -n "$API_PID" ] && stop_pid "$API_PID"
    cleanup
}

# add_bridge NAME: one more bridge in $SRV (br0 exists)
add_bridge() {
    ip -n "$SRV" link add "$1" type bridge stp_state 0 forward_delay 0
    ip -n "$SRV" link set "$1" up
}

# --- API server -------------------------------------------------------------------------------

# start_api [PORT]: the test API server in $SRV; state (CA, token, data) kept in $TMP/api
start_api() {
    local listen=127.0.0.1:${1:-0} i
    rm -f "$TMP/api/port"
    mkdir -p "$TMP/api"
    ip netns exec "$SRV" "$APISERVER" --listen "$listen" --state-dir "$TMP/api" \
        --data "$TMP/api/data.json" --log-level warn >>"$TMP/apiserver.log" 2>&1 &
    API_PID=$!
    for i in $(seq 100); do [ -s "$TMP/api/port" ] && return 0; sleep 0.1; done
    return 1
}
stop_api() { stop_pid "$API_PID"; API_PID=; }
api_url() { echo "https://127.0.0.1:$(cat "$TMP/api/port")"; }

# api METHOD PATH [BODY] [CONTENT-TYPE]: prints the HTTP status; the body is in $TMP/api.out
api() {
    ip netns exec "$SRV" curl -s -o "$TMP/api.out" -w '%{http_code}' --cacert "$TMP/api/ca.crt" \
        -H "Authorization: Bearer test-token" -X "$1" \
        -H "Content-Type: ${4:-application/merge-patch+json}" ${3:+--data-binary "$3"} \
        "$(api_url)$2"
}
# api_get PATH: the body on stdout (fails unless 200)
api_get() { [ "$(api GET "$1")" = 200 ] && cat "$TMP/api.out"; }

# apply_crds: POST every CustomResourceDefinition of crds/*.yaml; checks each is Established
apply_crds() {
    local doc code name
    while IFS= read -r doc; do
        name=$(jq -r .metadata.name <<<"$doc")
        code=$(api POST "$CRDS" "$doc" application/json)
        check "CRD $name created ($code)" test "$code" = 201
        check "CRD $name Established" bash -c "jq -e '.status.conditions[] |
            select(.type == \"Established\" and .status == \"True\")' '$TMP/api.out' >/dev/null"
    done < <("$YAML2JSON" "$ROOT"/crds/*.yaml)
}

# --- controller and agents ------------------------------------------------------------------------

ctrl_ready() { ip netns exec "$SRV" curl -sf -o /dev/null "http://127.0.0.1:$CTRL_PORT/readyz"; }
# start_controller [ARGS...]: waits for /readyz
start_controller() {
    ip netns exec "$SRV" "$CONTROLLER" --kubeconfig "$TMP/api/kubeconfig" --namespace "$CTRL_NS" \
        --agent-image registry.test/vm-dhcp-agent:e2e --listen "127.0.0.1:$CTRL_PORT" \
        --log-level "${CTRL_LOG_LEVEL:-debug}" "${@:---no-leader-election}" >>"$TMP/controller.log" 2>&1 &
    CTRL_PID=$!
    wait_for 20 ctrl_ready
}

# start_kagent POOL BRIDGE PORT: the pool's agent (Kubernetes mode) on BRIDGE; waits for /readyz
start_kagent() {
    local pool=$1 br=$2 port=$3
    ip netns exec "$SRV" "$AGENT" --ippool-ref "default/$pool" --kubeconfig "$TMP/api/kubeconfig" \
        --interface "$br" --listen "127.0.0.1:$port" --log-level debug >>"$TMP/agent-$pool.log" 2>&1 &
    AGENTS[$pool]=$!
    AGENT_PORT[$pool]=$port
    AGENT_IF[$pool]=$br
    wait_for 20 kagent_ready "$pool"
}
kagent_ready() { ip netns exec "$SRV" curl -sf -o /dev/null "http://127.0.0.1:${AGENT_PORT[$1]}/readyz"; }
# kmetric POOL 'name{label="x"}' -> value (0 when absent)
kmetric() {
    ip netns exec "$SRV" curl -sf "http://127.0.0.1:${AGENT_PORT[$1]}/metrics" |
        awk -v k="$2" '$1 == k { v = $2 } END { print (v == "" ? 0 : v) }'
}

# --- objects ---------------------------------------------------------------------------------

# create_nad NAME
create_nad() {
    local code
    code=$(api POST "$NADS" '{"apiVersion":"k8s.cni.cncf.io/v1","kind":"NetworkAttachmentDefinition",
      "metadata":{"name":"'"$1"'","namespace":"default"},"spec":{"config":"{\"cniVersion\":\"0.3.1\",\"type\":\"bridge\"}"}}' \
        application/json)
    check "NAD $1 created ($code)" test "$code" = 201
}

# create_pool NAME PREFIX (e.g. 10.66.0) [DNS]: serverIP/router .1, range .100-.250 (or
# $POOL_START-$POOL_END), lease $LEASE s
create_pool() {
    local name=$1 p=$2 dns=${3:-$2.53} code
    code=$(api POST "$POOLS" '{"apiVersion":"network.harvesterhci.io/v1alpha1","kind":"IPPool",
      "metadata":{"name":"'"$name"'","namespace":"default"},"spec":{"networkName":"default/'"$name"'",
      "ipv4Config":{"serverIP":"'"$p"'.1","cidr":"'"${POOL_CIDR:-$p.0/24}"'","router":"'"$p"'.1",
      "pool":{"start":"'"${POOL_START:-$p.100}"'","end":"'"${POOL_END:-$p.250}"'"},"dns":["'"$dns"'"],
      "domainName":"vm.test","leaseTime":'"$LEASE"'}}}' application/json)
    check "IPPool $name created ($code)" test "$code" = 201
}

# cfg_json NAME MAC NETWORK: a VirtualMachineNetworkConfig with one dynamic NIC
cfg_json() {
    printf '{"apiVersion":"network.harvesterhci.io/v1alpha1","kind":"VirtualMachineNetworkConfig",%s' \
        '"metadata":{"name":"'"$1"'","namespace":"default"},"spec":{"vmName":"'"$1"'",'
    printf '"networkConfigs":[{"networkName":"default/%s","macAddress":"%s"}]}}\n' "$3" "$2"
}
create_cfg() {
    local code
    code=$(api POST "$CFGS" "$(cfg_json "$@")" application/json)
    check "VMNetCfg $1 created ($code)" test "$code" = 201
}

# cfg_ip NAME: the allocated address of its first NIC once Allocated (else empty, status 1)
cfg_ip() {
    api_get "$CFGS/$1" | jq -re '.status.networkConfigs[0] |
        select((.state // .status) == "Allocated") | .allocatedIPAddress'
}
cfg_has_ip() { local ip; ip=$(cfg_ip "$1") && [ -n "$ip" ] && { [ -z "${2:-}" ] || [ "${ip%%/*}" = "$2" ]; }; }
# pool_owner POOL IP: the MAC (or mark) status.ipv4.allocated gives IP
pool_owner() { api_get "$POOLS/$1" | jq -r --arg ip "$2" '.status.ipv4.allocated[$ip] // empty'; }

# --- dhclient in a VM namespace -------------------------------------------------------------------

# dhclient_conf: requests and short renewal (T1 2 s, T2 4 s) so renewals need no waiting
dhclient_conf() {
    cat >"$TMP/dhclient.conf" <<EOF
request subnet-mask, broadcast-address, routers, domain-name, domain-name-servers,
        host-name, dhcp-lease-time, dhcp-renewal-time, dhcp-rebinding-time;
timeout 20;
retry 1;
supersede dhcp-renewal-time ${T1:-2};
supersede dhcp-rebinding-time ${T2:-4};
${CLIENT_LEASE:+supersede dhcp-lease-time $CLIENT_LEASE;}
EOF
}

# run_dhclient VM: dhclient -d in the background (private mount namespace: no hooks), PID in
# DHC_<vm>. Its log is $TMP/dhclient-VM.log, its lease file $TMP/VM.leases.
run_dhclient() {
    local vm=$1
    [ -f "$TMP/dhclient.conf" ] || dhclient_conf
    ip netns exec "$TAG-$vm" unshare -m sh -c '
        mount -t tmpfs tmpfs /etc/dhcp/dhclient-exit-hooks.d &&
        mount -t tmpfs tmpfs /etc/dhcp/dhclient-enter-hooks.d &&
        exec dhclient -d -v -cf "$1/dhclient.conf" -lf "$1/$2.leases" -pf "$1/$2.pid" eth0' \
        sh "$TMP" "$vm" >>"$TMP/dhclient-$vm.log" 2>&1 &
    PIDS+=($!)
    eval "DHC_$vm=$!"
}
stop_dhclient() { local v="DHC_$1"; stop_pid "${!v}"; }
# count_log VM PATTERN: lines of the VM's dhclient log matching (extended regex)
count_log() { grep -cE -- "$2" "$TMP/dhclient-$1.log" 2>/dev/null || true; }
more_in_log() { [ "$(count_log "$1" "$2")" -gt "$3" ]; }

e2e_finish() {
    [ "$CHECKS_FAIL" -eq 0 ] || show_logs
    finish
}

# setup_bound VM MAC: API server, CRDs, NAD + IPPool "testnet" on $NET, controller, agent on br0,
# the VM's VMNetCfg (same name) and its dhclient bound to the allocated address ($BOUND_IP).
setup_bound() {
    local vm=$1 mac=$2
    add_vm "$vm" "$mac"
    start_api || { fail "API server" "did not start"; e2e_finish; }
    pass "API server started"
    apply_crds
    create_nad testnet
    create_pool testnet $NET
    check "controller ready" start_controller
    check "agent ready after its first sync" start_kagent testnet br0 $HTTP_PORT
    create_cfg "$vm" "$mac" testnet
    check "controller allocated an address to $vm" wait_for 20 cfg_has_ip "$vm"
    BOUND_IP=$(cfg_ip "$vm"); BOUND_IP=${BOUND_IP%%/*}
    run_dhclient "$vm"
    check "$vm: dhclient bound to $BOUND_IP/24" wait_for 20 has_addr "$vm" "$BOUND_IP/24"
    [ "$CHECKS_FAIL" -eq 0 ] || e2e_finish
}
# acked VM: number of DHCPACKs in its dhclient log
acked() { count_log "$1" '^DHCPACK of '; }
