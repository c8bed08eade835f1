#!/bin/bash
# scripts/bench-dhcp.sh - the agent's DHCP benchmark (SPEC §5), as root on Debian 12:
#   1. installs the bench peers (scripts/install-deps --bench) and builds;
#   2. runs shared/bench/dhcp/compare.sh: vm-dhcp-agent (local mode, --dynamic) against ISC Kea
#      memfile, perfdhcp relayed traffic, fixed rate + flood, REPS interleaved repetitions;
#   3. a latency run with perfdhcp's per-exchange timers (LAT=1) for the agent and Kea, since
#      compare.sh's fixed phase runs without them; -x t halves perfdhcp's own capacity, so this
#      run is offered LAT_RATE [8000] DORA/s, which perfdhcp can still keep up with;
#   4. RSS of the agent serving 65 000 static bindings (65 000 VMNetCfg NICs, generated YAML);
#   5. writes the DHCP section of docs/benchmarks.md (command, date, medians, bars).
# Knobs: REPS [3], DUR [10], RATE [12000], LAT_RATE [8000], BINDINGS [65000], SHARED [../shared], NODOC=1 (do not
# touch docs/benchmarks.md), SKIP_INSTALL=1.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
if [ -z "${SHARED:-}" ]; then
    # the CI clone has shared/ beside it; a worktree one level deeper finds it too
    for SHARED in "$ROOT/../shared" "$ROOT/../../shared"; do [ -d "$SHARED/bench/dhcp" ] && break; done
fi
BENCH=$SHARED/bench/dhcp
REPS=${REPS:-3} DUR=${DUR:-10} RATE=${RATE:-12000} LAT_RATE=${LAT_RATE:-8000} BINDINGS=${BINDINGS:-65000}
AGENT=$ROOT/build/vm-dhcp-agent
DOC=$ROOT/docs/benchmarks.md

die() { echo "bench-dhcp: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
[ -x "$BENCH/compare.sh" ] || die "no $BENCH/compare.sh (set SHARED=path/to/shared)"
[ "${SKIP_INSTALL:-0}" = 1 ] || scripts/install-deps --bench
make --no-print-directory -j2 all
[ -x "$AGENT" ] || die "$AGENT not built"

OUT=$(mktemp -d /var/tmp/vmdhcp-bench.XXXXXX)
echo "bench-dhcp: results in $OUT"

# --- 1. compare.sh ------------------------------------------------------------------------
OUTDIR=$OUT/compare REPS=$REPS DUR=$DUR RATE=$RATE "$BENCH/compare.sh" "$AGENT" | tee "$OUT/compare.txt"

# --- 2. latency with perfdhcp -x t -------------------------------------------------------
latency_run() { # NAME CMD... -> RESULT line
    local name=$1; shift
    OUTDIR=$OUT/latency-$name LAT=1 RATES=$LAT_RATE DURATION=$DUR PHASE=latency REP=1 \
        "$BENCH/run-perfdhcp.sh" "$name" -- "$@" </dev/null 2>>"$OUT/latency.log" | grep '^RESULT' | tail -n1 || true
}
lat_line=$(latency_run agent "$BENCH/servers/vm-dhcp-agent.sh" "$AGENT")
kea_lat_line=$(latency_run kea "$BENCH/servers/kea.sh" mem)
printf '%s\n%s\n' "${lat_line:-agent latency run failed}" "${kea_lat_line:-kea latency run failed}" | tee "$OUT/latency.txt"

# --- 2b. where drops happen: the agent's own counters at the fixed rate ------------------
# Same topology as run-perfdhcp.sh (dsrv / dcl-perf), agent with --listen: every request the
# agent received and every reply it sent, against what perfdhcp sent and received.
acct_line=
APID=
acct_down() { # the agent by its PID, then the namespaces netns-up.sh made (dsrv, dcl-perf)
    [ -n "$APID" ] && kill "$APID" 2>/dev/null && wait "$APID" 2>/dev/null
    APID=
    "$BENCH/netns-down.sh" >/dev/null 2>&1 || "$BENCH/netns-down.sh"
}
if "$BENCH/netns-up.sh" perf >/dev/null 2>&1; then
    trap acct_down EXIT
    mkdir -p "$OUT/acct"
    sed -n '/^cat >/,/^YAML$/p' "$BENCH/servers/vm-dhcp-agent.sh" |
        sed -e '1d' -e '$d' -e 's/\${SRV_IP:-10.77.0.1}/10.77.0.1/' >"$OUT/acct/pool.yaml"
    ip netns exec dsrv taskset -c 1 "$AGENT" --config "$OUT/acct/pool.yaml" --interface br0 \
        --dynamic --lease-file "$OUT/acct/leases" --listen 127.0.0.1:9182 >"$OUT/acct/agent.log" 2>&1 &
    APID=$!
    for _ in $(seq 100); do ip netns exec dsrv curl -sf -o /dev/null http://127.0.0.1:9182/readyz && break; sleep 0.1; done
    ip netns exec dcl-perf taskset -c 0 perfdhcp -4 -l 10.77.0.2 -r "$RATE" -p "$DUR" -R 60000 -g single \
        10.77.0.1 >"$OUT/acct/perfdhcp.txt" 2>&1 || true
    ip netns exec dsrv curl -sf http://127.0.0.1:9182/metrics >"$OUT/acct/metrics.txt" || true
    acct_down
    trap - EXIT
    m() { awk -v k="$1" '$1 == k { print $2 }' "$OUT/acct/metrics.txt"; }
    p_sent=($(awk '/^sent packets:/ { print $3 }' "$OUT/acct/perfdhcp.txt"))
    p_rcvd=($(awk '/^received packets:/ { print $3 }' "$OUT/acct/perfdhcp.txt"))
    drops=$(awk '/^vmdhcp_agent_drops_total/ { s += $2 } END { print s + 0 }' "$OUT/acct/metrics.txt")
    acct_line="perfdhcp sent ${p_sent[0]:-NA} DISCOVER / ${p_sent[1]:-NA} REQUEST; the agent received $(m 'vmdhcp_agent_packets_received_total{type="discover"}') / $(m 'vmdhcp_agent_packets_received_total{type="request"}'), sent $(m 'vmdhcp_agent_replies_sent_total{type="offer"}') OFFER / $(m 'vmdhcp_agent_replies_sent_total{type="ack"}') ACK, dropped $drops; perfdhcp received ${p_rcvd[0]:-NA} OFFER / ${p_rcvd[1]:-NA} ACK"
fi
echo "accounting: ${acct_line:-not measured}" | tee "$OUT/acct.txt"

# --- 3. RSS with BINDINGS static bindings -------------------------------------------------
gen_bindings() { # N -> YAML: one /16 pool + N VMNetCfgs with static addresses
    awk -v n="$1" 'BEGIN {
        print "apiVersion: network.harvesterhci.io/v1alpha1\nkind: IPPool\nmetadata:\n  name: rss\n  namespace: default"
        print "spec:\n  networkName: default/rss\n  ipv4Config:\n    serverIP: 10.80.0.1\n    cidr: 10.80.0.0/16"
        print "    pool:\n      start: 10.80.0.10\n      end: 10.80.255.250\n    router: 10.80.0.1\n    dns: [10.80.0.1]"
        print "    domainName: rss.test"
        for (i = 0; i < n; i++) {
            a = i + 256
            printf "---\napiVersion: network.harvesterhci.io/v1alpha1\nkind: VirtualMachineNetworkConfig\n"
            printf "metadata:\n  name: vm-%d\n  namespace: default\nspec:\n  vmName: vm-%d\n", i, i
            printf "  networkConfigs:\n    - networkName: rss\n      macAddress: \"52:54:%02x:%02x:%02x:%02x\"\n", int(i / 16777216) % 256, int(i / 65536) % 256, int(i / 256) % 256, i % 256
            printf "      ipAddress: 10.80.%d.%d\n", int(a / 256), a % 256
        }
    }'
}
gen_bindings "$BINDINGS" >"$OUT/rss.yaml"
NS=vmdhcp-rss-$$
cleanup_rss() { [ -n "${RSS_PID:-}" ] && kill "$RSS_PID" 2>/dev/null && wait "$RSS_PID" 2>/dev/null; ip netns del "$NS" 2>/dev/null || true; }
trap cleanup_rss EXIT
ip netns add "$NS"
ip -n "$NS" link set lo up
ip -n "$NS" link add br0 type bridge
ip -n "$NS" link set br0 up
ip netns exec "$NS" "$AGENT" --config "$OUT/rss.yaml" --interface br0 --assign-server-ip \
    --listen 127.0.0.1:9181 >"$OUT/rss-agent.log" 2>&1 &
RSS_PID=$!
ready=0
for _ in $(seq 600); do
    ip netns exec "$NS" curl -sf -o /dev/null http://127.0.0.1:9181/readyz && { ready=1; break; }
    kill -0 "$RSS_PID" 2>/dev/null || break
    sleep 0.1
done
[ $ready = 1 ] || { cat "$OUT/rss-agent.log"; die "agent with $BINDINGS bindings did not become ready"; }
nb=$(ip netns exec "$NS" curl -sf http://127.0.0.1:9181/metrics | awk '$1 == "vmdhcp_agent_bindings" { print $2 }')
rss_kb=$(awk '/^VmRSS:/ { print $2 }' "/proc/$RSS_PID/status")
hwm_kb=$(awk '/^VmHWM:/ { print $2 }' "/proc/$RSS_PID/status")
cleanup_rss; RSS_PID=; trap - EXIT
echo "rss bindings=$nb rss_kb=$rss_kb peak_kb=$hwm_kb" | tee "$OUT/rss.txt"

# --- 4. verdicts and docs ------------------------------------------------------------------
get() { # server phase key
    awk -v s="$1" -v p="$2" -v k="$3=" '$1 == s && $2 == p { for (i = 3; i <= NF; i++) if (index($i, k) == 1) { v = substr($i, length(k) + 1); sub(/%$/, "", v); print v } }' "$OUT/compare.txt"
}
ratio=$(awk '$1 == "ratio" { print $2 }' "$OUT/compare.txt")
a_drop=$(get agent fixed drop_e2e) a_flood=$(get agent flood dora_s) k_flood=$(get kea flood dora_s)
lat() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"${2:-$lat_line}"; }
do_p99=$(lat do_p99) ra_p99=$(lat ra_p99) lat_drop=$(lat drop_e2e)
k_do_p99=$(lat do_p99 "$kea_lat_line") k_ra_p99=$(lat ra_p99 "$kea_lat_line") k_lat_drop=$(lat drop_e2e "$kea_lat_line")
verdict() { if awk "BEGIN { exit !($1) }" 2>/dev/null; then echo met; else echo MISSED; fi; }
v_ratio=$(verdict "${ratio:-0} >= 3")
v_drop=$(verdict "${a_drop:-1} + 0 == 0 && \"${lat_drop:-1}\" + 0 == 0")
v_p99=$(verdict "\"${do_p99:-9}\" + 0 < 1 && \"${ra_p99:-9}\" + 0 < 1")
v_flood=$(verdict "${a_flood:-0} >= ${k_flood:-1}")
v_rss=$(verdict "${rss_kb:-999999} < 8192")
cat >"$OUT/section.md" <<EOF
<!-- dhcp-bench:start (written by scripts/bench-dhcp.sh) -->
## DHCP: vm-dhcp-agent against ISC Kea

Command: \`REPS=$REPS DUR=$DUR RATE=$RATE make bench-dhcp\` ($(date -u '+%Y-%m-%d %H:%M UTC'),
$(nproc) CPUs, load before the run: $(cut -d' ' -f1-3 /proc/loadavg)). perfdhcp relays
60 000 simulated clients to each server in turn (\`shared/bench/dhcp/compare.sh\`: server pinned
to one CPU, perfdhcp to the other; agent in local mode with \`--dynamic --lease-file\`, Kea
memfile without persistence). Medians of $REPS repetitions.

| phase | server | DORA/s | drops (e2e) | DORA per server CPU-second | RSS (KiB) |
|---|---|---:|---:|---:|---:|
$(for p in fixed flood; do for s in agent kea; do
    printf '| %s | %s | %s | %s%% | %s | %s |\n' "$p" "$s" "$(get $s $p dora_s)" "$(get $s $p drop_e2e)" "$(get $s $p dora_per_cpu_s)" "$(get $s $p rss_kb)"
done; done)

Latency ($LAT_RATE offered DORA/s with perfdhcp's \`-x t\` per-exchange timers, which halve
perfdhcp's own capacity, so the compare.sh rate of $RATE/s is out of its reach; one run each):
agent DISCOVER→OFFER p99 ${do_p99:-NA} ms, REQUEST→ACK p99 ${ra_p99:-NA} ms, drops ${lat_drop:-NA};
Kea ${k_do_p99:-NA} / ${k_ra_p99:-NA} ms, drops ${k_lat_drop:-NA}.

Where requests and replies go at $RATE/s for $DUR s (agent with \`--listen\`, its counters against
perfdhcp's): ${acct_line:-not measured}.

RSS with $BINDINGS static bindings (local mode, $BINDINGS VirtualMachineNetworkConfig NICs,
generated YAML, after load): VmRSS ${rss_kb} KiB, peak (VmHWM, during YAML load) ${hwm_kb} KiB;
bindings served: ${nb}.

| bar (SPEC §5) | result | |
|---|---|---|
| ≥ 3× Kea's DORA per server CPU-second | ratio ${ratio:-NA} | $v_ratio |
| zero drops at the fixed rate | ${a_drop:-NA}% (compare, $RATE/s), ${lat_drop:-NA} (latency run, $LAT_RATE/s) | $v_drop |
| p99 < 1 ms (latency run, $LAT_RATE/s) | ${do_p99:-NA} / ${ra_p99:-NA} ms | $v_p99 |
| flooded: ≥ Kea's DORA/s | ${a_flood:-NA} vs ${k_flood:-NA} | $v_flood |
| RSS < 8 MiB with $BINDINGS bindings | ${rss_kb} KiB | $v_rss |
<!-- dhcp-bench:end -->
EOF
cat "$OUT/section.md"
if [ "${NODOC:-0}" != 1 ]; then
    mkdir -p "$(dirname "$DOC")"
    [ -f "$DOC" ] || printf '# Benchmarks\n\nNumbers measured on the project machines; each section is rewritten by its script.\n\n' >"$DOC"
    if grep -q '<!-- dhcp-bench:start' "$DOC"; then
        awk -v f="$OUT/section.md" '
            /<!-- dhcp-bench:start/ { while ((getline l < f) > 0) print l; skip = 1; next }
            /<!-- dhcp-bench:end/ { skip = 0; next }
            !skip { print }' "$DOC" >"$DOC.tmp" && mv "$DOC.tmp" "$DOC"
    else
        cat "$OUT/section.md" >>"$DOC"
    fi
    echo "bench-dhcp: updated $DOC"
fi
