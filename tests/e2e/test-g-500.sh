#!/bin/bash
# tests/e2e/test-g-500.sh - scenario g: 500 VirtualMachineNetworkConfigs created at once (one
# parallel burst of POSTs); every one ends Allocated with a distinct address of the range, the
# IPPool status agrees with them one for one, the agent syncs 500 bindings, and one real
# dhclient (the last VM's MAC) binds its address.
. "$(dirname "$0")/lib.sh"
e2e_require dhclient unshare
N=500
mac_of() { printf '52:54:00:e3:%02x:%02x' $(($1 / 256)) $(($1 % 256)); }
add_vm vm1 "$(mac_of $N)"
start_api || { fail "API server" "did not start"; e2e_finish; }
apply_crds
create_nad testnet
POOL_CIDR=$NET.0/22 POOL_START=10.66.1.0 POOL_END=10.66.2.255 create_pool testnet $NET
check "controller ready" start_controller
check "agent ready" start_kagent testnet br0 $HTTP_PORT

# one curl, $N transfers, up to 50 at once
cfgfile=$TMP/create.curl
url="$(api_url)$CFGS"
for i in $(seq $N); do
    cfg_json "vm-$i" "$(mac_of "$i")" testnet >"$TMP/cfg-$i.json"
    printf 'url = "%s"\ndata-binary = "@%s"\nheader = "Content-Type: application/json"\n' "$url" "$TMP/cfg-$i.json"
    printf 'header = "Authorization: Bearer test-token"\ncacert = "%s"\noutput = "/dev/null"\n' "$TMP/api/ca.crt"
    printf 'write-out = "%%{http_code} %%{errormsg}\\n"\nsilent\nshow-error\n'
    [ "$i" -lt $N ] && echo next
done >"$cfgfile"
ip netns exec "$SRV" curl --parallel --parallel-max 50 -K "$cfgfile" >"$TMP/create.codes" 2>>"$TMP/curl.log"
check "$N VMNetCfgs created (201 each)" test "$(grep -c '^201 ' "$TMP/create.codes")" = $N

allocated() {
    api_get "$CFGS" >"$TMP/list.json" || return 1
    [ "$(jq '[.items[] | select(.status.networkConfigs[0] | (.state // .status) == "Allocated")] | length' "$TMP/list.json")" = $N ]
}
check "all $N VMNetCfgs Allocated" wait_for 30 allocated
check "$N distinct addresses" test "$(jq -r '.items[].status.networkConfigs[0].allocatedIPAddress' "$TMP/list.json" | sort -u | wc -l)" = $N
in_range() {
    jq -r '.items[].status.networkConfigs[0].allocatedIPAddress' "$TMP/list.json" |
        awk -F. '{ a = $3 * 256 + $4; if ($1 != 10 || $2 != 66 || a < 256 || a > 767) bad++ } END { exit bad > 0 }'
}
check "every address inside 10.66.1.0-10.66.2.255" in_range
check "each status MAC is its spec MAC" test "$(jq '[.items[] | select(.status.networkConfigs[0].macAddress != .spec.networkConfigs[0].macAddress)] | length' "$TMP/list.json")" = 0
agree() {
    api_get "$POOLS/testnet" >"$TMP/pool.json" || return 1
    jq -r '.items[].status.networkConfigs[0] | "\(.allocatedIPAddress) \(.macAddress)"' "$TMP/list.json" | sort >"$TMP/want"
    jq -r '.status.ipv4.allocated | to_entries[] | select(.value | test(":")) | "\(.key) \(.value)"' "$TMP/pool.json" | sort >"$TMP/have"
    cmp -s "$TMP/want" "$TMP/have"
}
check "IPPool status.ipv4.allocated = the $N bindings, one for one" wait_for 20 agree
check "IPPool status.ipv4.used = $N" test "$(jq .status.ipv4.used "$TMP/pool.json")" = $N
synced() { [ "$(kmetric testnet vmdhcp_agent_bindings)" = $N ]; }
check "agent synced $N bindings" wait_for 20 synced

want=$(jq -r --arg n "vm-$N" '.items[] | select(.metadata.name == $n) | .status.networkConfigs[0].allocatedIPAddress' "$TMP/list.json")
run_dhclient vm1
check "dhclient ($(mac_of $N)) bound to vm-$N's address $want" wait_for 20 has_addr vm1 "$want/22"
check "controller still running" kill -0 "$CTRL_PID"
e2e_finish
