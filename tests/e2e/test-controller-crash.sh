#!/bin/bash
# tests/e2e/test-controller-crash.sh - the controller is killed with SIGKILL at random moments
# while 2 000 NICs (1 000 VMNetCfgs x 2 NICs, one pool) are being created and bound, and
# restarted each time. At the end: every NIC is Allocated exactly once, no address has two
# MACs, no MAC two addresses, and the IPPool status agrees with the VMNetCfgs one for one.
# The VMNetCfgs are created in 20 bursts of 50, 0.4 s apart; the kills go on for as long as
# they are created and KILLS_AFTER (default 4) times more. Seeded: SEED=N reproduces a run's
# kill schedule (the seed is printed).
. "$(dirname "$0")/lib.sh"
e2e_require
N=${CRASH_VMS:-1000}
KILLS_AFTER=${KILLS_AFTER:-4}
SEED=${SEED:-$(( $(date +%s%N) % 1000000 ))}
RANDOM=$SEED
echo "seed $SEED ($N VMNetCfgs x 2 NICs)"
CTRL_LOG_LEVEL=info
mac_of() { printf '52:54:%02x:%02x:%02x:%02x' "$2" $(($1 / 65536)) $(($1 / 256 % 256)) $(($1 % 256)); }

start_api || { fail "API server" "did not start"; e2e_finish; }
apply_crds
create_nad testnet
POOL_CIDR=10.80.0.0/20 POOL_START=10.80.0.10 POOL_END=10.80.15.250 create_pool testnet 10.80.0
check "controller ready" start_controller

url="$(api_url)$CFGS"
for i in $(seq $N); do
    printf '{"apiVersion":"network.harvesterhci.io/v1alpha1","kind":"VirtualMachineNetworkConfig","metadata":{"name":"vm-%d","namespace":"default"},"spec":{"vmName":"vm-%d","networkConfigs":[{"networkName":"default/testnet","macAddress":"%s"},{"networkName":"default/testnet","macAddress":"%s"}]}}\n' \
        "$i" "$i" "$(mac_of "$i" 1)" "$(mac_of "$i" 2)" >"$TMP/cfg-$i.json"
    f=$(printf '%s/create-%03d.curl' "$TMP" $(((i - 1) / 50)))
    [ -s "$f" ] && echo next >>"$f"
    { printf 'url = "%s"\ndata-binary = "@%s"\nheader = "Content-Type: application/json"\n' "$url" "$TMP/cfg-$i.json"
      printf 'header = "Authorization: Bearer test-token"\ncacert = "%s"\noutput = "/dev/null"\n' "$TMP/api/ca.crt"
      printf 'write-out = "%%{http_code} %%{errormsg}\\n"\nsilent\nshow-error\n'; } >>"$f"
done
# bursts of 50 creates, 0.4 s apart, so kills land while NICs are still being bound
(for f in "$TMP"/create-*.curl; do
    ip netns exec "$SRV" curl --parallel --parallel-max 10 -K "$f" 2>>"$TMP/curl.log"
    sleep 0.4
done >"$TMP/create.codes") &
CURL_PID=$!; PIDS+=("$CURL_PID")

bound_nics() {
    api_get "$CFGS" >"$TMP/list.json" 2>/dev/null || { echo 0; return; }
    jq '[.items[].status.networkConfigs[]? | select((.state // .status) == "Allocated")] | length' "$TMP/list.json"
}
mid=0 k=0 after=0
while [ "$after" -lt "$KILLS_AFTER" ]; do
    kill -0 "$CURL_PID" 2>/dev/null || after=$((after + 1))
    k=$((k + 1))
    # 50..1049 ms after the (re)start, then SIGKILL; restart after 0..299 ms
    sleep "$(printf '0.%03d' $((50 + RANDOM % 950)) | sed 's/^0\.1\([0-9][0-9][0-9]\)$/1.\1/')"
    kill -KILL "$CTRL_PID"; wait "$CTRL_PID" 2>/dev/null
    b=$(bound_nics)
    echo "kill $k: $b of $((2 * N)) NICs allocated"
    [ "$b" -lt $((2 * N)) ] && mid=$((mid + 1))
    sleep "$(printf '0.%03d' $((RANDOM % 300)))"
    ip netns exec "$SRV" "$CONTROLLER" --kubeconfig "$TMP/api/kubeconfig" --namespace "$CTRL_NS" \
        --agent-image registry.test/vm-dhcp-agent:e2e --listen "127.0.0.1:$CTRL_PORT" \
        --log-level info --no-leader-election >>"$TMP/controller.log" 2>&1 &
    CTRL_PID=$!
done
check "kills while NICs were still being bound: $mid of $k (at least 5)" test "$mid" -ge 5
wait "$CURL_PID"
check "$N VMNetCfgs created (201 each)" test "$(grep -c '^201 ' "$TMP/create.codes")" = $N
check "controller ready after the last restart" wait_for 20 ctrl_ready
all_bound() { [ "$(bound_nics)" = $((2 * N)) ]; }
check "all $((2 * N)) NICs Allocated" wait_for 90 all_bound
jq -r '.items[] | .metadata.name as $n | .status.networkConfigs[]? | "\(.allocatedIPAddress) \(.macAddress) \($n)"' \
    "$TMP/list.json" | sort >"$TMP/nics"
check "$((2 * N)) NIC statuses" test "$(wc -l <"$TMP/nics")" = $((2 * N))
check "no address has two NICs" test "$(cut -d' ' -f1 "$TMP/nics" | sort | uniq -d | wc -l)" = 0
check "no MAC has two addresses" test "$(cut -d' ' -f2 "$TMP/nics" | sort | uniq -d | wc -l)" = 0
spec_macs() { jq -r '.items[].spec.networkConfigs[].macAddress' "$TMP/list.json" | sort; }
check "status MACs are exactly the spec MACs" cmp -s <(spec_macs) <(cut -d' ' -f2 "$TMP/nics" | sort)
agree() {
    api_get "$POOLS/testnet" >"$TMP/pool.json" || return 1
    jq -r '.status.ipv4.allocated | to_entries[] | select(.value | test(":")) | "\(.key) \(.value)"' \
        "$TMP/pool.json" | sort >"$TMP/have"
    cut -d' ' -f1,2 "$TMP/nics" | sort | cmp -s - "$TMP/have"
}
check "IPPool status.ipv4.allocated = the NICs, one for one" wait_for 20 agree
check "IPPool status.ipv4.used = $((2 * N))" test "$(jq .status.ipv4.used "$TMP/pool.json")" = $((2 * N))
check "every VMNetCfg keeps the controller's finalizer" test "$(jq '[.items[] | select((.metadata.finalizers // []) | index("wrangler.cattle.io/vm-dhcp-vmnetcfg-controller") | not)] | length' "$TMP/list.json")" = 0
check "controller running" kill -0 "$CTRL_PID"
[ "$CHECKS_FAIL" -eq 0 ] || echo "seed $SEED reproduces this run: SEED=$SEED $0"
e2e_finish
