#!/bin/bash
# scripts/bench-dhcp6.sh - the agent's DHCPv6 benchmark, as root on Debian 12 (`make bench-dhcp6`):
#   1. sarr: ISC perfdhcp -6 against Kea DHCPv6 (memfile, no persistence) and the agent (local
#      mode), one after the other in each of REPS interleaved repetitions, each run on a fresh
#      server pinned to one CPU (taskset -c SRV_CPU; perfdhcp on CLI_CPU), the same pool, the same
#      offered rate for DUR seconds. Per run: completed SARR (Solicit-Advertise-Request-Reply:
#      REPLYs perfdhcp received), the server's CPU (utime+stime of /proc/PID/stat, all threads,
#      before and after the sending) -> SARR per server CPU-second; medians over the repetitions
#      and the ratio agent/Kea (the bar of docs/benchmarks.md: >= 4x);
#   2. rss: the agent serving CLIENTS IPv6 bindings (local mode, CLIENTS VirtualMachineNetworkConfig
#      NICs with ipv6Address, generated YAML): VmRSS after it is ready and VmHWM (the bar: < 12 MiB);
#   3. writes the DHCPv6 section of docs/benchmarks.md between its markers (unless NODOC=1).
#
# Clients: perfdhcp -6 -M MACFILE draws each exchange's client from the CLIENTS MACs the agent has
# bindings for and sends a DUID-LL (RFC 8415 §11.4) of it; every frame leaves from perfdhcp's one
# interface (MAC 02:00:00:00:77:fe, which has no binding), and perfdhcp 2.2 puts no RFC 6939
# option 79 in its relayed mode (-A 1). So the agent runs with --dhcp6-duid-mac (off by default:
# README): a client whose frame MAC has no binding is matched by its DUID-LL's MAC. Should it
# still answer nothing, its SARR is 0 and the run says so ("agent answered no SARR") instead of
# making a figure up. Kea (KEA_MODE=pool) allocates from the same range dynamically by DUID, as
# the IPv4 bench's Kea does; KEA_MODE=reservations gives Kea the same CLIENTS MACs as hw-address
# reservations (mac-sources: duid), which is the agent's job exactly.
#
# Everything it creates is removed on exit, also on error or Ctrl-C: its network namespaces
# (vmd6<PID>-srv, vmd6<PID>-cli), the processes it started (stopped by PID), temp files. Results
# stay in OUT (printed at the start).
#
# Knobs (defaults in brackets):
#   REPS [3]              repetitions (each: Kea run, agent run); medians need >= 3
#   DUR [10]              seconds of sending per run (perfdhcp -p)
#   RATE [4000]           offered SARR/s (perfdhcp -r); "max" = no -r (perfdhcp floods)
#   CLIENTS [65000]       bindings of the agent = MACs perfdhcp draws from
#   KEA_MODE [pool]       pool | reservations (above)
#   DUAL [0]              1: the generated NICs carry an ipAddress too (dual-stack VMs)
#   ONE_CLIENT [0]        1: every exchange from one client, perfdhcp's own interface (-R 1, its
#                         MAC given a binding too, fd00:77::2:ffff; the agent without
#                         --dhcp6-duid-mac): what both servers do per packet for one known
#                         client; its own doc section
#   SRV_CPU [1] CLI_CPU [0]   taskset CPU lists of the server and of perfdhcp
#   PARTS ["sarr rss"]    which parts to run
#   NODOC=1               do not touch docs/benchmarks.md;  DOC [docs/benchmarks.md]
#   NOTE [""]             a sentence for the doc section (e.g. how busy the machine was)
#   AGENT [build/vm-dhcp-agent]   the agent binary (when given, nothing is built)
#   OUT [mktemp -d /var/tmp/vmdhcp-bench6.XXXXXX]   results directory (kept)
# Needs kea-dhcp6 (Debian's kea-dhcp6-server) and perfdhcp (kea-admin): scripts/install-deps --bench.
# Run time with the defaults: about 2 x REPS x (DUR + ~10 s of start-up) + the RSS run, ~2 min.
# A quick check that it works: NODOC=1 REPS=1 DUR=3 CLIENTS=2000 scripts/bench-dhcp6.sh
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
. scripts/proc-lib.sh
REPS=${REPS:-3} DUR=${DUR:-10} RATE=${RATE:-4000} CLIENTS=${CLIENTS:-65000}
KEA_MODE=${KEA_MODE:-pool} DUAL=${DUAL:-0} ONE_CLIENT=${ONE_CLIENT:-0} SRV_CPU=${SRV_CPU-1} CLI_CPU=${CLI_CPU-0}
PARTS=" ${PARTS:-sarr rss} "
AGENT_GIVEN=${AGENT:-}
AGENT=$(readlink -f "${AGENT:-$ROOT/build/vm-dhcp-agent}")
DOC=${DOC:-$ROOT/docs/benchmarks.md}
HZ=$(getconf CLK_TCK)
has() { [[ $PARTS == *" $1 "* ]]; }

exec 3>&2
die() { echo "bench-dhcp6: $*" >&3; exit 1; }
say() { echo "bench-dhcp6: $*" >&3; }
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
case $KEA_MODE in pool | reservations) ;; *) die "KEA_MODE is pool or reservations" ;; esac
command -v perfdhcp >/dev/null || die "perfdhcp not found (apt-get install kea-admin; scripts/install-deps --bench)"
command -v kea-dhcp6 >/dev/null || die "kea-dhcp6 not found (apt-get install kea-dhcp6-server; scripts/install-deps --bench)"
[ -n "$AGENT_GIVEN" ] || make --no-print-directory -j2 all || die "build failed"
[ -x "$AGENT" ] || die "$AGENT not built"

SRV_NS=vmd6$$-srv CLI_NS=vmd6$$-cli
PERF_MAC=02:00:00:00:77:fe
HTTP=127.0.0.1:9186
OUT=${OUT:-$(mktemp -d /var/tmp/vmdhcp-bench6.XXXXXX)}
mkdir -p "$OUT" || die "cannot create $OUT"
say "results in $OUT (namespaces $SRV_NS, $CLI_NS)"

SPID="" PPID_PERF=""
stop_pid() { # PID: TERM, KILL after 5 s (only processes started here)
    local p=$1
    [ -n "$p" ] || return 0
    kill -TERM "$p" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
    return 0
}
cleanup() {
    trap - EXIT INT TERM
    stop_pid "$PPID_PERF"
    stop_pid "$SPID"
    local n
    for n in "$CLI_NS" "$SRV_NS"; do
        ip netns list | awk '{ print $1 }' | grep -qx "$n" && ip netns delete "$n"
    done
    rm -f "$OUT"/kea-state/* 2>/dev/null
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

# --- topology: br0 in $SRV_NS, perfdhcp's c-perf in $CLI_NS (no DAD: link-local usable at once) --
ip netns add "$SRV_NS" && ip netns add "$CLI_NS" || die "cannot create network namespaces"
for n in "$SRV_NS" "$CLI_NS"; do
    ip netns exec "$n" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0
    ip -n "$n" link set lo up
done
ip -n "$SRV_NS" link add br0 type bridge stp_state 0 forward_delay 0
ip -n "$SRV_NS" link add v-perf type veth peer name c-perf netns "$CLI_NS"
ip -n "$CLI_NS" link set c-perf address "$PERF_MAC"
ip -n "$SRV_NS" link set v-perf master br0 up
ip -n "$SRV_NS" link set br0 up
ip -n "$CLI_NS" link set c-perf up
for _ in $(seq 100); do
    ip -n "$SRV_NS" -6 addr show dev br0 scope link | grep -q fe80 &&
        ip -n "$CLI_NS" -6 addr show dev c-perf scope link | grep -q fe80 && break
    sleep 0.1
done

# --- inputs: MAC list, the agent's YAML, Kea's config --------------------------------------------
# client i: MAC 52:54:00:ii:ii:ii, IPv6 fd00:77::1:0 + i (IPv4 10.80.0.0 + 256 + i with DUAL=1)
awk -v n="$CLIENTS" 'BEGIN { for (i = 0; i < n; i++) printf "52:54:00:%02x:%02x:%02x\n", int(i / 65536) % 256, int(i / 256) % 256, i % 256 }' >"$OUT/macs.txt"
head -n 1 "$OUT/macs.txt" >"$OUT/mac1.txt"
# perfdhcp's clients: -M (a DUID-LL per exchange from the bound MACs) or one client (-R 1)
CLIENT_ARGS=(-M "$OUT/macs.txt") PROBE_ARGS=(-M "$OUT/mac1.txt") AGENT_ARGS=(--dhcp6-duid-mac)
[ "$ONE_CLIENT" = 1 ] && CLIENT_ARGS=(-R 1) PROBE_ARGS=(-R 1) AGENT_ARGS=()
gen_yaml() {
    awk -v n="$CLIENTS" -v dual="$DUAL" 'BEGIN {
        print "apiVersion: network.harvesterhci.io/v1alpha1\nkind: IPPool\nmetadata:\n  name: bench6\n  namespace: default"
        print "spec:\n  networkName: default/bench6\n  ipv4Config:\n    serverIP: 10.80.0.1\n    cidr: 10.80.0.0/16"
        print "    pool:\n      start: 10.80.0.10\n      end: 10.80.255.250"
        print "  ipv6Config:\n    cidr: fd00:77::/64\n    serverIP: fd00:77::1\n    pool:\n      start: fd00:77::1:0\n      end: fd00:77::2:ffff"
        print "    dns:\n      - fd00:77::1\n    preferredLifetime: 3000\n    validLifetime: 4000"
        for (i = 0; i < n; i++) {
            a = i + 256; v = 65536 + i
            printf "---\napiVersion: network.harvesterhci.io/v1alpha1\nkind: VirtualMachineNetworkConfig\n"
            printf "metadata:\n  name: vm-%d\n  namespace: default\nspec:\n  vmName: vm-%d\n", i, i
            printf "  networkConfigs:\n    - networkName: default/bench6\n      macAddress: \"52:54:00:%02x:%02x:%02x\"\n", int(i / 65536) % 256, int(i / 256) % 256, i % 256
            if (dual) printf "      ipAddress: 10.80.%d.%d\n", int(a / 256), a % 256
            printf "      ipv6Address: fd00:77::%x:%x\n", int(v / 65536), v % 65536
        }
    }'
    [ "$ONE_CLIENT" = 1 ] && printf -- '---\napiVersion: network.harvesterhci.io/v1alpha1\nkind: VirtualMachineNetworkConfig\nmetadata:\n  name: perfdhcp\n  namespace: default\nspec:\n  vmName: perfdhcp\n  networkConfigs:\n    - networkName: default/bench6\n      macAddress: "%s"\n      ipv6Address: fd00:77::2:ffff\n' "$PERF_MAC"
    return 0
}
gen_yaml >"$OUT/agent.yaml"
mkdir -p "$OUT/kea-state"
gen_kea() {
    local res="" ids="" srcs=""
    if [ "$KEA_MODE" = reservations ]; then
        srcs='"mac-sources": [ "duid" ],'
        ids='"host-reservation-identifiers": [ "hw-address" ], "reservations-in-subnet": true, "reservations-out-of-pool": false,'
        res=$(awk -v n="$CLIENTS" 'BEGIN { printf "\"reservations\": ["
            for (i = 0; i < n; i++) { v = 65536 + i
                printf "%s{ \"hw-address\": \"52:54:00:%02x:%02x:%02x\", \"ip-addresses\": [ \"fd00:77::%x:%x\" ] }", i ? "," : "", int(i / 65536) % 256, int(i / 256) % 256, i % 256, int(v / 65536), v % 65536 }
            printf "],\n" }')
    fi
    cat <<EOF
{ "Dhcp6": {
    "interfaces-config": { "interfaces": [ "br0" ] },
    "data-directory": "$OUT/kea-state",
    "server-id": { "type": "LL", "persist": false },
    "lease-database": { "type": "memfile", "persist": false, "lfc-interval": 0 },
    $srcs $ids
    "preferred-lifetime": 3000, "valid-lifetime": 4000, "renew-timer": 1500, "rebind-timer": 2400,
    "subnet6": [ { "id": 1, "subnet": "fd00:77::/64", "interface": "br0",
        "pools": [ { "pool": "fd00:77::1:0 - fd00:77::2:ffff" } ],
        $res
        "option-data": [ { "name": "dns-servers", "data": "fd00:77::1" } ] } ],
    "loggers": [ { "name": "kea-dhcp6", "output_options": [ { "output": "stdout" } ], "severity": "WARN" } ]
} }
EOF
}
gen_kea >"$OUT/kea-dhcp6.json"

pin() { local c=$1; shift; if [ -n "$c" ]; then taskset -c "$c" "$@"; else "$@"; fi; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo NA; }
# perfdhcp's REPLYs received (REQUEST-REPLY block) from its report FILE
replies() { awk '/Statistics for: REQUEST-REPLY/ { f = 1 } f && /^received packets:/ { print $3; exit }' "$1"; }
# avg_delay FILE SECTION: perfdhcp's average delay (ms) of SOLICIT-ADVERTISE or REQUEST-REPLY
avg_delay() { awk -v sec="Statistics for: $2" 'index($0, sec) { f = 1 } f && /^avg delay:/ { print $3; exit }' "$1"; }
sent_solicit() { awk '/Statistics for: SOLICIT-ADVERTISE/ { f = 1 } f && /^sent packets:/ { print $3; exit }' "$1"; }

# start_server NAME: Kea or the agent in $SRV_NS pinned to SRV_CPU; SPID; 0 when it completed a
# SARR for the first MAC of the list within 60 s (the agent: also its /readyz)
start_server() {
    local name=$1 t probes=0
    if [ "$name" = kea ]; then
        ip netns exec "$SRV_NS" env KEA_PIDFILE_DIR="$OUT/kea-state" KEA_LOCKFILE_DIR="$OUT/kea-state" \
            $( [ -n "$SRV_CPU" ] && echo taskset -c "$SRV_CPU" ) kea-dhcp6 -c "$OUT/kea-dhcp6.json" >>"$OUT/kea.log" 2>&1 &
    else
        ip netns exec "$SRV_NS" $( [ -n "$SRV_CPU" ] && echo taskset -c "$SRV_CPU" ) "$AGENT" --config "$OUT/agent.yaml" \
            --interface br0 --assign-server-ip --listen "$HTTP" "${AGENT_ARGS[@]}" >>"$OUT/agent.log" 2>&1 &
    fi
    SPID=$!
    for t in $(seq 600); do
        kill -0 "$SPID" 2>/dev/null || { say "$name exited during start-up (see $OUT/$name.log)"; SPID=""; return 1; }
        if [ "$name" = agent ] && ! ip netns exec "$SRV_NS" curl -sf -o /dev/null "http://$HTTP/readyz"; then
            sleep 0.1; continue
        fi
        if ip netns exec "$CLI_NS" perfdhcp -6 -l c-perf -r 10 -p 1 -W 300000 "${PROBE_ARGS[@]}" >"$OUT/probe.txt" 2>&1 &&
            [ "$(replies "$OUT/probe.txt")" -gt 0 ] 2>/dev/null; then
            return 0
        fi
        probes=$((probes + 1))
        [ "$name" = agent ] && [ $probes -ge 5 ] && return 2 # ready, but no SARR for a bound MAC
        [ $probes -ge 60 ] && return 1
        sleep 0.2
    done
    return 1
}
stop_server() { stop_pid "$SPID"; SPID=""; rm -f "$OUT"/kea-state/*; }

med() { sort -g | awk '{ a[NR] = $1 } END { if (!NR) { print "NA"; exit } print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

RES=$OUT/results.txt
START_DATE=$(date -u '+%Y-%m-%d %H:%M UTC') START_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$RES"
AGENT_NOTE=""
if has sarr; then
    rate_arg=(-r "$RATE")
    [ "$RATE" = max ] && rate_arg=()
    for rep in $(seq "$REPS"); do
        for s in kea agent; do
            start_server "$s"
            rc=$?
            if [ $rc = 2 ]; then
                AGENT_NOTE="the agent ($AGENT ${AGENT_ARGS[*]}) answered no SARR for a bound MAC sent as perfdhcp's client"
                say "$AGENT_NOTE"
                echo "RESULT server=$s rep=$rep sarr=0 sent=NA cpu_s=NA sarr_per_cpu_s=NA rss_kb=$(proc_status "$SPID" VmHWM) note=no-sarr" | tee -a "$RES"
                stop_server
                continue
            elif [ $rc != 0 ]; then
                echo "RESULT server=$s rep=$rep sarr=NA note=did-not-start" | tee -a "$RES"
                stop_server
                continue
            fi
            f=$OUT/perf-$s-$rep.txt
            t0=$(cpu_ticks "$SPID")
            ip netns exec "$CLI_NS" $( [ -n "$CLI_CPU" ] && echo taskset -c "$CLI_CPU" ) perfdhcp -6 -l c-perf -g single \
                "${rate_arg[@]}" -p "$DUR" -W 250000 "${CLIENT_ARGS[@]}" >"$f" 2>&1 &
            PPID_PERF=$!
            wait "$PPID_PERF"
            PPID_PERF=""
            t1=$(cpu_ticks "$SPID")
            n=$(replies "$f") sent=$(sent_solicit "$f")
            line=$(awk -v n="${n:-0}" -v a="$t0" -v b="$t1" -v hz="$HZ" 'BEGIN {
                c = (b - a) / hz; printf "sarr=%d cpu_s=%.2f sarr_per_cpu_s=%s", n, c, (c > 0 ? sprintf("%.0f", n / c) : "NA") }')
            sa_ms=$(avg_delay "$f" SOLICIT-ADVERTISE) rr_ms=$(avg_delay "$f" REQUEST-REPLY)
            echo "RESULT server=$s rep=$rep sent=${sent:-0} $line sarr_s=$(awk -v n="${n:-0}" -v d="$DUR" 'BEGIN { printf "%.0f", n / d }') rss_kb=$(proc_status "$SPID" VmHWM) sa_ms=${sa_ms:-NA} rr_ms=${rr_ms:-NA}" | tee -a "$RES"
            stop_server
        done
    done
fi
get() { # SERVER KEY -> median over the RESULT lines
    awk -v s="server=$1" -v k="$2=" '$1 == "RESULT" && $2 == s { for (i = 3; i <= NF; i++) if (index($i, k) == 1) { v = substr($i, length(k) + 1); if (v != "NA") print v } }' "$RES" | med
}
ratio=NA
if has sarr; then
    k_eff=$(get kea sarr_per_cpu_s) a_eff=$(get agent sarr_per_cpu_s)
    ratio=$(awk -v a="$a_eff" -v k="$k_eff" 'BEGIN { if (a == "NA" || k == "NA" || k + 0 == 0) print "NA"; else printf "%.2f", a / k }')
    echo "sarr: medians of $REPS: Kea $k_eff SARR/CPU-s, agent $a_eff SARR/CPU-s, ratio $ratio" | tee "$OUT/sarr.txt"
fi

rss_kb=NA hwm_kb=NA nb=NA
if has rss; then
    if start_server agent; [ $? != 1 ]; then
        rss_kb=$(proc_status "$SPID" VmRSS) hwm_kb=$(proc_status "$SPID" VmHWM)
        nb=$(ip netns exec "$SRV_NS" curl -sf "http://$HTTP/metrics" | awk '$1 ~ /^vmdhcp_agent_(dhcp6_)?bindings$/ { printf "%s%s %s", sep, $1, $2; sep = ", " }')
    fi
    stop_server
    echo "rss: $CLIENTS IPv6 bindings: VmRSS $rss_kb KiB, VmHWM $hwm_kb KiB (metrics: ${nb:-none})" | tee "$OUT/rss.txt"
fi

# the doc section: one per client mode, each rewritten by its own runs
MARK=dhcp6-bench TITLE="DHCPv6: vm-dhcp-agent against ISC Kea DHCPv6"
[ "$ONE_CLIENT" = 1 ] && MARK=dhcp6-bench-one-client TITLE="DHCPv6, one client: vm-dhcp-agent against ISC Kea DHCPv6"
verdict() { awk "BEGIN { exit !($1) }" 2>/dev/null && echo met || echo "NOT met"; }
CMDLINE="REPS=$REPS DUR=$DUR RATE=$RATE"
[ "$CLIENTS" = 65000 ] || CMDLINE+=" CLIENTS=$CLIENTS"
[ "$KEA_MODE" = pool ] || CMDLINE+=" KEA_MODE=$KEA_MODE"
[ "$DUAL" = 0 ] || CMDLINE+=" DUAL=$DUAL"
[ "$ONE_CLIENT" = 0 ] || CMDLINE+=" ONE_CLIENT=$ONE_CLIENT"
[ "$PARTS" = " sarr rss " ] || CMDLINE+=" PARTS=\"$(xargs <<<"$PARTS")\""
DUID_NOTE=""
[ "$ONE_CLIENT" = 1 ] || DUID_NOTE=' and `--dhcp6-duid-mac` (a client whose frame MAC has no binding is
matched by the MAC of its DUID-LL, as Kea'"'"'s mac-sources duid; off by default)'
{
    cat <<EOF
<!-- $MARK:start (written by scripts/bench-dhcp6.sh) -->
## $TITLE

Command: \`$CMDLINE make bench-dhcp6\` ($START_DATE, $(nproc) CPUs, load
before the run: $START_LOAD). perfdhcp $(perfdhcp -v 2>&1 | awk '{ print $NF; exit }') -6 -g single on
c-perf (pinned to CPU $CLI_CPU), $( [ "$ONE_CLIENT" = 1 ] && echo "every exchange from ONE client (\`-R 1\`: perfdhcp's interface MAC, bound in the agent too; \`ONE_CLIENT=1\`)" || echo "each exchange a client drawn from $CLIENTS MACs (\`-M\`: DUID-LL)"),
$( [ "$RATE" = max ] && echo "flooding" || echo "$RATE SARR/s offered") for $DUR s against each
server in turn on a fresh start, pinned to CPU $SRV_CPU: Kea $(kea-dhcp6 -v) memfile without
persistence ($KEA_MODE), the agent in local mode with $CLIENTS VirtualMachineNetworkConfig NICs
with \`ipv6Address\`$DUID_NOTE. SARR = REPLYs perfdhcp received; CPU = utime+stime of the server's
\`/proc/PID/stat\` before and after the sending; delays = perfdhcp's averages from its SOLICIT
to the ADVERTISE and from its REQUEST to the REPLY (the agent waits up to 200 us to answer
several requests per wakeup once they come faster than 10 000/s: README, DHCPv6).
EOF
    [ -n "${NOTE:-}" ] && printf '\n%s\n' "$NOTE"
    if has sarr; then
        printf '\n| server | run | SARR | SARR/s | server CPU-s | SARR per server CPU-second | VmHWM (KiB) | avg delay SOLICIT→ADVERTISE, REQUEST→REPLY (ms) |\n|---|---:|---:|---:|---:|---:|---:|---:|\n'
        awk 'function g(k) { return (k in v && v[k] != "") ? v[k] : "NA" }
            $1 == "RESULT" { for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
            printf "| %s | %s | %s | %s | %s | %s | %s | %s, %s |\n", g("server"), g("rep"), g("sarr"), g("sarr_s"), g("cpu_s"), g("sarr_per_cpu_s"), g("rss_kb"), g("sa_ms"), g("rr_ms"); delete v }' "$RES"
        printf '\nMedians of %s: Kea %s, agent %s SARR per server CPU-second; ratio %s.\n' "$REPS" "$k_eff" "$a_eff" "$ratio"
        [ -n "$AGENT_NOTE" ] && printf '\nNot measured for the agent: %s (see %s).\n' "$AGENT_NOTE" "$OUT/agent.log"
    fi
    if has rss; then
        printf '\nRSS with %s IPv6 bindings (after start-up, idle): VmRSS %s KiB, peak (VmHWM, during the YAML load) %s KiB.\n' "$CLIENTS" "$rss_kb" "$hwm_kb"
    fi
    printf '\n| bar | result | |\n|---|---|---|\n'
    has sarr && echo "| SARR per server CPU-second ≥ 4× Kea's$( [ "$ONE_CLIENT" = 1 ] && echo " (one client)") | ratio $ratio | $(verdict "\"$ratio\" != \"NA\" && $ratio + 0 >= 4") |"
    has rss && echo "| RSS < 12 MiB with $CLIENTS IPv6 bindings | $rss_kb KiB | $(verdict "\"$rss_kb\" != \"NA\" && $rss_kb + 0 < 12288") |"
    echo "<!-- $MARK:end -->"
} >"$OUT/section.md"
cat "$OUT/section.md"
if [ "${NODOC:-0}" != 1 ]; then
    if grep -q "<!-- $MARK:start" "$DOC"; then
        awk -v f="$OUT/section.md" -v s="<!-- $MARK:start" -v e="<!-- $MARK:end" '
            index($0, s) == 1 { while ((getline l < f) > 0) print l; skip = 1; next }
            index($0, e) == 1 { skip = 0; next }
            !skip { print }' "$DOC" >"$DOC.tmp" && mv "$DOC.tmp" "$DOC"
    elif grep -q '<!-- dhcp-bench:end' "$DOC"; then # after the IPv4 DHCP section (and the other DHCPv6 one)
        after='<!-- dhcp-bench:end'
        grep -q '<!-- dhcp6-bench:end' "$DOC" && after='<!-- dhcp6-bench:end'
        awk -v f="$OUT/section.md" -v a="$after" '{ print }
            index($0, a) == 1 { print ""; while ((getline l < f) > 0) print l }' "$DOC" >"$DOC.tmp" && mv "$DOC.tmp" "$DOC"
    else
        printf '\n' >>"$DOC"
        cat "$OUT/section.md" >>"$DOC"
    fi
    say "updated $DOC"
fi
say "results in $OUT"
