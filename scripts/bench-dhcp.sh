#!/bin/bash
# scripts/bench-dhcp.sh - the agent's DHCP benchmark (the bars: docs/benchmarks.md), as root on Debian 12 (`make bench-dhcp`):
#   0. installs the bench peers (scripts/install-deps --bench) and builds;
#   1. compare: ../shared/bench/dhcp/compare.sh (docs/architecture.md, "Outside the repository"), vm-dhcp-agent (local mode, --dynamic) against ISC
#      Kea memfile, perfdhcp relayed traffic, fixed RATE + flood, CMP_REPS interleaved
#      repetitions -> DORA per server CPU-second, agent/Kea (the bar: >= 6x);
#   2. ceiling: perfdhcp flooding the do-nothing AF_PACKET reflector (servers/reflector.sh raw),
#      with and without its per-exchange timers (-x t): perfdhcp's own capacity both ways;
#   3. latency: p50/p99 of DISCOVER->OFFER and REQUEST->ACK (perfdhcp -x t, LAT=1 in
#      run-perfdhcp.sh) at every rate of LAT_RATES for the agent, Kea memfile and the reflector in
#      ONE interleaved run: for each repetition, for each rate, each server in turn (fresh server
#      per run). The reflector is the harness's floor: where it drops or falls behind the offered
#      rate, the figures are perfdhcp's, not the server's (the "-x t limit" line says up to which
#      rate they are the server's). Prints the table and the latency checks per rate: agent
#      median within 1.2x of the reflector's, agent p99 <= Kea's (medians over the repetitions);
#   4. accounting: one agent run with --listen at ACCT_RATE for DUR s, reconciled to the packet:
#      perfdhcp's sent DISCOVER+REQUEST = received by the agent + the kernel's drops on its packet
#      socket + lost on the links (veth/bridge counters before and after) + never left perfdhcp's
#      socket (its count against the namespace's UDP OutDatagrams) + unexplained; prints
#      "balanced" or "UNEXPLAINED n". The reply path likewise (agent's replies -> perfdhcp);
#   5. RSS of the agent serving BINDINGS static bindings (VMNetCfg NICs, generated YAML);
#   6. writes the DHCP section of docs/benchmarks.md between its markers (unless NODOC=1).
# Everything it creates is removed on exit, also on error or Ctrl-C: its own network namespaces
# (names carry this script's PID, so a concurrent run of the shared harness is not touched; removed
# with netns-down.sh), temp dirs, and the processes it started (stopped by PID). Results stay in
# OUT (printed at the start).
#
# Knobs (defaults in brackets):
#   REPS [2]            latency repetitions (>= 2 for the checks; 1 for a quick look)
#   CMP_REPS [REPS]     compare.sh repetitions
#   DUR [10]            seconds of sending per compare.sh run and for the accounting run
#   RATE [12000]        compare.sh fixed rate (DORA/s)
#   LAT_RATES ["1000 2000 3000 4000 5000 6000 7000 8000"]   latency ladder (DORA/s)
#   LAT_DUR [10]        seconds of sending per latency run
#   ACCT_RATE [RATE]    offered DORA/s of the accounting run (no -x t)
#   BINDINGS [65000]    static bindings for the RSS figure
#   PARTS ["compare ceiling latency accounting rss"]   which parts to run
#   SHARED [../shared]  where bench/dhcp lives
#   NODOC=1             do not touch docs/benchmarks.md;  DOC [docs/benchmarks.md] file to write
#   SKIP_INSTALL=1      do not run scripts/install-deps --bench
#   AGENT [build/vm-dhcp-agent]   the agent binary (when given, nothing is built)
#   OUT [mktemp -d /var/tmp/vmdhcp-bench.XXXXXX]   results directory (kept)
# Run time with the defaults: about 18 min on 2 CPUs (every run costs ~6 s of start-up, readiness
# probe, drain and stop on top of its sending time: compare 8 runs ~2.3 min, ceiling 2 runs
# ~0.5 min, latency 48 runs ~13 min, accounting and RSS ~1 min), plus install and build.
# LAT_RATES="1000 2000 4000 8000" halves the latency part.
# A quick check that it works (~2 min):
#   SKIP_INSTALL=1 NODOC=1 REPS=1 DUR=3 LAT_DUR=3 LAT_RATES="1000 4000" BINDINGS=2000 scripts/bench-dhcp.sh
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 1
. scripts/proc-lib.sh
if [ -z "${SHARED:-}" ]; then
    # the CI clone has shared/ beside it; a worktree one level deeper finds it too
    for SHARED in "$ROOT/../shared" "$ROOT/../../shared"; do [ -d "$SHARED/bench/dhcp" ] && break; done
fi
BENCH=$(cd "$SHARED/bench/dhcp" 2>/dev/null && pwd) || { echo "bench-dhcp: no $SHARED/bench/dhcp (set SHARED=path/to/shared)" >&2; exit 1; }
REPS=${REPS:-2} CMP_REPS=${CMP_REPS:-${REPS:-2}} DUR=${DUR:-10} RATE=${RATE:-12000}
LAT_RATES=${LAT_RATES:-"1000 2000 3000 4000 5000 6000 7000 8000"} LAT_DUR=${LAT_DUR:-10}
ACCT_RATE=${ACCT_RATE:-$RATE} BINDINGS=${BINDINGS:-65000}
PARTS=" ${PARTS:-compare ceiling latency accounting rss} "
AGENT_GIVEN=${AGENT:-}
AGENT=$(readlink -f "${AGENT:-$ROOT/build/vm-dhcp-agent}")
DOC=${DOC:-$ROOT/docs/benchmarks.md}
has() { [[ $PARTS == *" $1 "* ]]; }

exec 3>&2 # our own messages, also from a trap that runs while a child's stderr is redirected
die() { echo "bench-dhcp: $*" >&3; exit 1; }
say() { echo "bench-dhcp: $*" >&3; }
[ "$(id -u)" = 0 ] || die "needs root (network namespaces)"
for f in compare.sh run-perfdhcp.sh netns-up.sh netns-down.sh servers/kea.sh servers/reflector.sh servers/vm-dhcp-agent.sh; do
    [ -x "$BENCH/$f" ] || die "no $BENCH/$f"
done
[ "${SKIP_INSTALL:-0}" = 1 ] || scripts/install-deps --bench || die "install-deps failed"
[ -n "$AGENT_GIVEN" ] || make --no-print-directory -j2 all || die "build failed"
[ -x "$AGENT" ] || die "$AGENT not built"
command -v perfdhcp >/dev/null || die "perfdhcp not found (scripts/install-deps --bench)"

# Our own namespaces (lib/common.sh and every harness script read these): the PID keeps them
# apart from the harness's default dsrv/dcl-* and from another run of this script.
export SRV_NS=vmdb$$-srv CLI_PREFIX=vmdb$$-c- BR=br0 SRV_IP=10.77.0.1 PERF_IP=10.77.0.2
OUT=${OUT:-$(mktemp -d /var/tmp/vmdhcp-bench.XXXXXX)}
mkdir -p "$OUT" || die "cannot create $OUT"
say "results in $OUT (namespaces $SRV_NS, ${CLI_PREFIX}perf)"

# --- clean-up: children by PID, temp dirs, namespaces ----------------------------------------
CHILD=""   # the harness script we are waiting for (it stops its own server and perfdhcp)
OWN=()     # processes started here directly (accounting agent, RSS agent)
TMPS=()    # temp dirs besides OUT
RSS_NS=vmdb$$-rss
descendants() { # PID -> all its descendants (any depth), children first
    ps -e -o pid=,ppid= | awk -v root="$1" '{ kids[$2] = kids[$2] " " $1 }
        END { n = split(kids[root], q, " "); for (i = 1; i <= n; i++) { print q[i]; m = split(kids[q[i]], c, " "); for (j = 1; j <= m; j++) q[++n] = c[j] } }'
}
starttime() { awk '{ print $22 }' "/proc/$1/stat" 2>/dev/null; }
stop_tree() { # PID: TERM it and every descendant (snapshot first), KILL what is left after 5 s
    local pid=$1 p all=() st=()
    for p in "$pid" $(descendants "$pid"); do all+=("$p"); st+=("$(starttime "$p")"); done
    for p in "${all[@]}"; do kill -TERM "$p" 2>/dev/null; done
    for _ in $(seq 50); do
        local alive=0
        for p in "${!all[@]}"; do [ -n "${st[$p]}" ] && [ "$(starttime "${all[$p]}")" = "${st[$p]}" ] && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.1
    done
    for p in "${!all[@]}"; do
        [ -n "${st[$p]}" ] && [ "$(starttime "${all[$p]}")" = "${st[$p]}" ] && kill -KILL "${all[$p]}" 2>/dev/null
    done
    wait "$pid" 2>/dev/null
}
cleanup() {
    trap - EXIT INT TERM
    [ -n "$CHILD" ] && stop_tree "$CHILD"
    local p
    for p in "${OWN[@]}"; do stop_tree "$p"; done
    for p in "${TMPS[@]}"; do rm -rf -- "$p"; done
    ip netns list | awk '{ print $1 }' | grep -qx "$RSS_NS" && ip netns delete "$RSS_NS"
    if ip netns list | awk '{ print $1 }' | grep -qE "^($SRV_NS|${CLI_PREFIX}.+)\$"; then
        "$BENCH/netns-down.sh" >/dev/null 2>&1 || "$BENCH/netns-down.sh"
    fi
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM
run_child() { # CMD... in the background (so a signal reaches our trap at once), waited for
    "$@" &
    CHILD=$!
    wait "$CHILD"
    local rc=$?
    CHILD=""
    return $rc
}
"$BENCH/netns-up.sh" perf >/dev/null 2>&1 || die "netns-up.sh failed"

# median over the RESULT lines of FILE matching server/phase/rate -> value of KEY (NA if none)
med() { # FILE SERVER PHASE RATE KEY
    awk -v s="server=$2" -v p="phase=$3" -v r="rate=$4" -v k="$5=" '
        $1 == "RESULT" && $2 == s && $3 == p && $5 == r {
            for (i = 6; i <= NF; i++) if (index($i, k) == 1) { v = substr($i, length(k) + 1); sub(/%$/, "", v); if (v != "NA") a[++n] = v + 0 } }
        END { if (n == 0) { print "NA"; exit }
              for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
              m = (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
              print m }' "$1" 2>/dev/null || echo NA
}
fmt() { # VALUE DECIMALS -> formatted, NA stays NA
    awk -v v="$1" -v d="$2" 'BEGIN { if (v == "NA" || v == "") print "NA"; else printf "%." d "f\n", v }'
}
verdict() { if awk "BEGIN { exit !($1) }" 2>/dev/null; then echo met; else echo MISSED; fi; }

# --- 1. compare.sh ----------------------------------------------------------------------------
ratio=NA
if has compare; then
    say "compare: agent against Kea, $CMP_REPS reps, fixed $RATE/s and flood, ${DUR}s each"
    OUTDIR=$OUT/compare REPS=$CMP_REPS DUR=$DUR RATE=$RATE run_child "$BENCH/compare.sh" "$AGENT" </dev/null >"$OUT/compare.txt"
    cat "$OUT/compare.txt"
    ratio=$(awk '$1 == "ratio" { print $2 }' "$OUT/compare.txt")
fi
cget() { # server phase key (compare.txt)
    awk -v s="$1" -v p="$2" -v k="$3=" '$1 == s && $2 == p { for (i = 3; i <= NF; i++) if (index($i, k) == 1) { v = substr($i, length(k) + 1); sub(/%$/, "", v); print v } }' "$OUT/compare.txt" 2>/dev/null
}

# --- 2./3. ceiling and latency: run-perfdhcp.sh, one RESULT line per run -----------------------
LRES=$OUT/latency/results.txt
mkdir -p "$OUT/latency"
: >"$LRES"
server_cmd() { # NAME -> the server command of run-perfdhcp.sh
    case $1 in
        agent) echo "$BENCH/servers/vm-dhcp-agent.sh $AGENT" ;;
        kea) echo "$BENCH/servers/kea.sh mem" ;;
        reflector) echo "$BENCH/servers/reflector.sh raw" ;;
    esac
}
rcvbuf_errors() { # UDP RcvbufErrors in perfdhcp's namespace
    ip netns exec "${CLI_PREFIX}perf" cat /proc/net/snmp | awk '/^Udp:/ { if (!h) { for (i = 2; i <= NF; i++) if ($i == "RcvbufErrors") c = i; h = 1 } else print $c + 0 }'
}
perf_run() { # NAME PHASE REP RATE LAT
    local cmd
    # shellcheck disable=SC2207
    cmd=($(server_cmd "$1"))
    local od=$OUT/latency/$1-$2-$4-rep$3 b a
    b=$(rcvbuf_errors)
    OUTDIR=$od PHASE=$2 REP=$3 RATES=$4 LAT=$5 DURATION=$LAT_DUR \
        run_child "$BENCH/run-perfdhcp.sh" "$1" -- "${cmd[@]}" </dev/null >"$od.out" 2>>"$OUT/latency/stderr.log"
    a=$(rcvbuf_errors)
    # + replies dropped by perfdhcp's own full socket buffer during the run (its namespace's UDP
    # RcvbufErrors): drops that are perfdhcp's, not the server's
    grep '^RESULT' "$od.out" | sed "s/\$/ perf_rcvbuf_drops=$((a - b))/" >>"$LRES" ||
        say "run failed: $1 $2 rate $4 rep $3 (see $OUT/latency/stderr.log)"
}
if has ceiling; then
    say "ceiling: perfdhcp flooding the reflector for ${LAT_DUR}s, with and without -x t"
    perf_run reflector ceil-xt 1 max 1
    perf_run reflector ceil-plain 1 max 0
fi
ceil_xt=$(med "$LRES" reflector ceil-xt max dora_s)
ceil_plain=$(med "$LRES" reflector ceil-plain max dora_s)
SERVERS=${SERVERS:-agent kea reflector} # fewer only for a quick look: the checks need all three
if has latency; then
    runs=$((REPS * $(wc -w <<<"$LAT_RATES") * 3))
    say "latency: $REPS reps x rates ($LAT_RATES) x ($SERVERS), ${LAT_DUR}s each: $runs runs"
    for rep in $(seq "$REPS"); do
        for rate in $LAT_RATES; do
            for srv in $SERVERS; do perf_run "$srv" lat "$rep" "$rate" 1; done
        done
        say "latency: repetition $rep done"
    done
fi

# latency table and checks
LAT_TABLE="" LAT_CHECKS="" XT_LIMIT=""
if has latency; then
    LAT_TABLE="| DORA/s | server | DISCOVER→OFFER p50 / p99 ms | REQUEST→ACK p50 / p99 ms | drops % (end to end) | replies dropped by perfdhcp's full socket | DORA/s done |
|---:|---|---:|---:|---:|---:|---:|"
    clean_to=0 first_bad=""
    for rate in $LAT_RATES; do
        for srv in $SERVERS; do
            LAT_TABLE+=$'\n'"$(printf '| %s | %s | %s / %s | %s / %s | %s | %s | %s |' "$rate" "$srv" \
                "$(fmt "$(med "$LRES" "$srv" lat "$rate" do_med)" 3)" "$(fmt "$(med "$LRES" "$srv" lat "$rate" do_p99)" 3)" \
                "$(fmt "$(med "$LRES" "$srv" lat "$rate" ra_med)" 3)" "$(fmt "$(med "$LRES" "$srv" lat "$rate" ra_p99)" 3)" \
                "$(fmt "$(med "$LRES" "$srv" lat "$rate" drop_e2e)" 3)" "$(fmt "$(med "$LRES" "$srv" lat "$rate" perf_rcvbuf_drops)" 0)" \
                "$(fmt "$(med "$LRES" "$srv" lat "$rate" dora_s)" 0)")"
        done
        # perfdhcp keeps up at this rate when the do-nothing reflector loses <= 0.1 % and
        # perfdhcp sends >= 98 % of the offered DISCOVERs
        rd=$(med "$LRES" reflector lat "$rate" drop_e2e) rs=$(med "$LRES" reflector lat "$rate" sent_do)
        if [ -z "$first_bad" ] && awk -v d="$rd" -v s="$rs" -v r="$rate" -v t="$LAT_DUR" 'BEGIN { exit !(d != "NA" && d + 0 <= 0.1 && s != "NA" && s + 0 >= 0.98 * r * t) }'; then
            clean_to=$rate
        else
            [ -n "$first_bad" ] || first_bad=$rate
        fi
        # the latency checks, medians over the repetitions
        a_do=$(med "$LRES" agent lat "$rate" do_med) a_ra=$(med "$LRES" agent lat "$rate" ra_med)
        r_do=$(med "$LRES" reflector lat "$rate" do_med) r_ra=$(med "$LRES" reflector lat "$rate" ra_med)
        a_dp=$(med "$LRES" agent lat "$rate" do_p99) a_rp=$(med "$LRES" agent lat "$rate" ra_p99)
        k_dp=$(med "$LRES" kea lat "$rate" do_p99) k_rp=$(med "$LRES" kea lat "$rate" ra_p99)
        n=$(grep -c "^RESULT server=agent phase=lat rep=[0-9]* rate=$rate " "$LRES")
        v1=$(verdict "\"$a_do\" != \"NA\" && \"$r_do\" != \"NA\" && \"$a_ra\" != \"NA\" && \"$r_ra\" != \"NA\" && $a_do + 0 <= 1.2 * $r_do && $a_ra + 0 <= 1.2 * $r_ra" 2>/dev/null)
        v2=$(verdict "\"$a_dp\" != \"NA\" && \"$k_dp\" != \"NA\" && \"$a_rp\" != \"NA\" && \"$k_rp\" != \"NA\" && $a_dp + 0 <= $k_dp && $a_rp + 0 <= $k_rp" 2>/dev/null)
        ratio_of() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "NA" || b == "NA" || b + 0 == 0) print "NA"; else printf "%.2f", a / b }'; }
        LAT_CHECKS+="$(printf '%5s/s (%s reps): median within 1.2x of the reflector: DO %s vs %s ms (%sx), RA %s vs %s ms (%sx) -> %s; p99 <= Kea: DO %s vs %s ms, RA %s vs %s ms -> %s' \
            "$rate" "$n" "$(fmt "$a_do" 3)" "$(fmt "$r_do" 3)" "$(ratio_of "$a_do" "$r_do")" "$(fmt "$a_ra" 3)" "$(fmt "$r_ra" 3)" "$(ratio_of "$a_ra" "$r_ra")" "$v1" \
            "$(fmt "$a_dp" 3)" "$(fmt "$k_dp" 3)" "$(fmt "$a_rp" 3)" "$(fmt "$k_rp" 3)" "$v2")"$'\n'
    done
    if [ "$clean_to" = 0 ]; then
        XT_LIMIT="perfdhcp -x t limit: the reflector already drops or falls behind at ${first_bad}/s: no rate of the ladder measures the servers rather than perfdhcp"
    elif [ -z "$first_bad" ]; then
        XT_LIMIT="perfdhcp -x t limit: the reflector keeps up (drops <= 0.1 %, >= 98 % of the offered DISCOVERs sent) at every rate up to ${clean_to}/s, so these figures are the servers'"
    else
        XT_LIMIT="perfdhcp -x t limit: the reflector keeps up (drops <= 0.1 %, >= 98 % of the offered DISCOVERs sent) up to ${clean_to}/s; from ${first_bad}/s on the figures are perfdhcp's, not the server's"
    fi
    [ "$ceil_xt" = NA ] || XT_LIMIT+=" (perfdhcp flooding the reflector: $(fmt "$ceil_xt" 0) DORA/s with -x t, $(fmt "$ceil_plain" 0) without)"
    printf '\n%s\n\n%s\n%s\n' "$LAT_TABLE" "$LAT_CHECKS" "$XT_LIMIT" | tee "$OUT/latency.txt"
elif [ "$ceil_xt" != NA ]; then
    XT_LIMIT="perfdhcp flooding the reflector: $(fmt "$ceil_xt" 0) DORA/s with -x t, $(fmt "$ceil_plain" 0) without"
    echo "$XT_LIMIT" | tee "$OUT/latency.txt"
fi

# --- 4. accounting: every request and reply, to the packet -------------------------------------
ACCT_REQ="" ACCT_REP="" ACCT_DETAIL="" BAL="not measured"
if has accounting; then
    A=$OUT/acct
    mkdir -p "$A"
    CNS=${CLI_PREFIX}perf
    st=$(mktemp -d /var/tmp/vmdb-acct.XXXXXX); TMPS+=("$st")
    # servers/vm-dhcp-agent.sh with --listen added: a wrapper in place of the binary
    printf '#!/bin/sh\nexec %q "$@" --listen 127.0.0.1:9182\n' "$AGENT" >"$st/agent"
    chmod +x "$st/agent"
    # static neighbours both ways: no ARP on the links, so their counters count DHCP only
    br_mac=$(ip netns exec "$SRV_NS" cat "/sys/class/net/$BR/address")
    c_mac=$(ip netns exec "$CNS" cat /sys/class/net/c-perf/address)
    ip -n "$CNS" neigh replace "$SRV_IP" lladdr "$br_mac" dev c-perf nud permanent
    ip -n "$SRV_NS" neigh replace "$PERF_IP" lladdr "$c_mac" dev "$BR" nud permanent
    DHCPBENCH_STATE=$st ip netns exec "$SRV_NS" taskset -c 1 "$BENCH/servers/vm-dhcp-agent.sh" "$st/agent" >"$A/agent.log" 2>&1 &
    APID=$!
    OWN=("$APID")
    ready=0
    for _ in $(seq 100); do
        ip netns exec "$SRV_NS" curl -sf -o /dev/null http://127.0.0.1:9182/readyz && { ready=1; break; }
        kill -0 "$APID" 2>/dev/null || break
        sleep 0.1
    done
    snap() { # TAG: link counters, UDP/ICMP counters, backlog drops, the agent's metrics
        local f=$A/$1.txt dev k
        : >"$f"
        for k in tx_packets tx_dropped rx_packets rx_dropped; do
            echo "c-perf.$k $(ip netns exec "$CNS" cat /sys/class/net/c-perf/statistics/$k)" >>"$f"
            for dev in v-perf "$BR"; do echo "$dev.$k $(ip netns exec "$SRV_NS" cat "/sys/class/net/$dev/statistics/$k")" >>"$f"; done
        done
        # NS FILE PROTO TAG: a /proc/net/{snmp,netstat} row pair (names, then values) as "TAG.name value"
        proto_rows() { ip netns exec "$1" cat "$2" | awk -v p="$3:" -v t="$4" '$1 == p { if (!h) { split($0, n); h = 1 } else for (i = 2; i <= NF; i++) print t "." n[i], $i }'; }
        proto_rows "$CNS" /proc/net/snmp Udp cli.udp >>"$f"
        proto_rows "$SRV_NS" /proc/net/snmp Icmp srv.icmp >>"$f"
        # multicast and broadcast the server namespace's own stack sends (IGMP, MLD reports):
        # they reach c-perf beside the agent's replies
        proto_rows "$SRV_NS" /proc/net/netstat IpExt srv.ipext >>"$f"
        ip netns exec "$SRV_NS" awk '$1 == "Ip6OutMcastPkts" { print "srv.ip6.OutMcastPkts", $2 }' /proc/net/snmp6 >>"$f"
        local s=0 _a b _r
        while read -r _a b _r; do s=$((s + 0x$b)); done </proc/net/softnet_stat
        echo "softnet.dropped $s" >>"$f"
        ip netns exec "$SRV_NS" curl -sf http://127.0.0.1:9182/metrics | awk '/^vmdhcp_agent_/ { print $1, $2 }' >>"$f"
    }
    if [ $ready = 1 ]; then
        sleep 0.5
        snap before
        ip netns exec "$CNS" taskset -c 0 perfdhcp -4 -l "$PERF_IP" -r "$ACCT_RATE" -p "$DUR" -R 60000 -g single \
            "$SRV_IP" >"$A/perfdhcp.txt" 2>&1 &
        PPID_PERF=$!
        OWN=("$APID" "$PPID_PERF")
        wait "$PPID_PERF"
        OWN=("$APID")
        sleep 0.5 # replies in flight
        snap after
    else
        say "accounting: the agent did not become ready (see $A/agent.log)"
    fi
    stop_tree "$APID"
    OWN=()
    if [ $ready = 1 ]; then
        # d KEY -> after - before; "n/a" when the counter does not exist
        d() { awk -v k="$1" 'FNR == 1 { f++ } $1 == k { v[f] = $2; s[f] = 1 } END { if (!s[2]) print "n/a"; else printf "%.0f\n", v[2] - v[1] }' "$A/before.txt" "$A/after.txt"; }
        dsum() { # REGEX over keys -> sum of deltas
            awk -v re="$1" 'FNR == 1 { f++ } $1 ~ re { v[f] += $2; s = 1 } END { if (!s) print "n/a"; else printf "%.0f\n", v[2] - v[1] }' "$A/before.txt" "$A/after.txt"; }
        mapfile -t p_sent < <(awk '/^sent packets:/ { print $3 }' "$A/perfdhcp.txt")
        mapfile -t p_rcvd < <(awk '/^received packets:/ { print $3 }' "$A/perfdhcp.txt")
        s_do=${p_sent[0]:-0} s_ra=${p_sent[1]:-0} r_of=${p_rcvd[0]:-0} r_ac=${p_rcvd[1]:-0}
        sent=$((s_do + s_ra))
        udp_out=$(d cli.udp.OutDatagrams) udp_in=$(d cli.udp.InDatagrams) udp_rcvbuf=$(d cli.udp.RcvbufErrors) udp_inerr=$(d cli.udp.InErrors) udp_sndbuf=$(d cli.udp.SndbufErrors)
        c_tx=$(d c-perf.tx_packets) c_txd=$(d c-perf.tx_dropped) c_rx=$(d c-perf.rx_packets) c_rxd=$(d c-perf.rx_dropped)
        v_rx=$(d v-perf.rx_packets) v_rxd=$(d v-perf.rx_dropped) v_tx=$(d v-perf.tx_packets) v_txd=$(d v-perf.tx_dropped)
        b_rx=$(d "$BR.rx_packets") b_rxd=$(d "$BR.rx_dropped") b_tx=$(d "$BR.tx_packets") b_txd=$(d "$BR.tx_dropped")
        softnet=$(d softnet.dropped) icmp_out=$(d srv.icmp.OutMsgs)
        a_do=$(d 'vmdhcp_agent_packets_received_total{type="discover"}') a_ra=$(d 'vmdhcp_agent_packets_received_total{type="request"}')
        a_rx_all=$(dsum '^vmdhcp_agent_packets_received_total[{]')
        a_pre=$(dsum '^vmdhcp_agent_drops_total[{]reason="(malformed|not_request|no_type|bad_checksum|not_for_us|truncated|not_serving)"[}]')
        a_drops=$(dsum '^vmdhcp_agent_drops_total[{]')
        a_of=$(d 'vmdhcp_agent_replies_sent_total{type="offer"}') a_ac=$(d 'vmdhcp_agent_replies_sent_total{type="ack"}') a_nak=$(d 'vmdhcp_agent_replies_sent_total{type="nak"}')
        a_tx_all=$(dsum '^vmdhcp_agent_replies_sent_total[{]')
        k_rcv=$(d vmdhcp_agent_kernel_received_total) k_drop=$(d vmdhcp_agent_kernel_drops_total)
        n0() { [ "$1" = n/a ] && echo 0 || echo "$1"; }
        a_got=$(( $(n0 "$a_rx_all") + $(n0 "$a_pre") ))     # frames the agent read from its ring
        not_left=$(( sent - $(n0 "$udp_out") ))             # perfdhcp counted, its socket did not send
        # frames c-perf sent that never reached br0: every frame, not only perfdhcp's datagrams,
        # since br0 counts the others too (seen: ICMP port unreachable from c-perf's kernel for
        # the replies that arrived after perfdhcp had closed its socket): perfdhcp's datagrams
        # alone against br0's count made those look like requests from nowhere (lost on the
        # links -5, unexplained 5)
        links=$(( $(n0 "$c_tx") - $(n0 "$b_rx") ))
        unexpl=$(( sent - a_got - $(n0 "$k_drop") - links - not_left ))
        if [ "$unexpl" = 0 ]; then bal=balanced; else bal="UNEXPLAINED $unexpl"; fi
        BAL=$bal
        kd_note=""
        [ "$k_drop" = n/a ] && kd_note=" (kernel drops n/a: this agent has no vmdhcp_agent_kernel_drops_total; frames that reached $BR but not the agent: $(( $(n0 "$b_rx") - a_got )))"
        ACCT_REQ="requests at ${ACCT_RATE}/s for ${DUR}s: perfdhcp sent $sent ($s_do DISCOVER + $s_ra REQUEST) = received by the agent $a_got ($a_do DISCOVER, $a_ra REQUEST, $(( a_got - $(n0 "$a_do") - $(n0 "$a_ra") )) other) + kernel drops $k_drop + lost on the links $links + never left perfdhcp's socket $not_left + unexplained $unexpl: $bal$kd_note"
        # replies: the agent's sent replies -> perfdhcp's received OFFER + ACK
        r_sent=$(n0 "$a_tx_all") r_got=$((r_of + r_ac))
        # frames c-perf received besides the agent's replies: what the server namespace's stack
        # sent to it or to all (ICMP, IGMP and MLD reports; seen: one IGMP report in a run)
        r_other=$(( $(n0 "$icmp_out") + $(n0 "$(d srv.ipext.OutMcastPkts)") + $(n0 "$(d srv.ipext.OutBcastPkts)") + $(n0 "$(d srv.ip6.OutMcastPkts)") ))
        r_links=$(( r_sent + r_other - $(n0 "$c_rx") ))     # sent by the agent, never reached c-perf
        r_full=$(n0 "$udp_inerr")                           # dropped by the client's UDP stack (RcvbufErrors: perfdhcp's socket buffer full)
        # reached c-perf, neither dropped by UDP nor read: still queued in perfdhcp's socket when it
        # stopped (UDP counts InDatagrams when the program reads a datagram)
        r_unread=$(( $(n0 "$c_rx") - $(n0 "$udp_in") - r_full ))
        r_perf=$(( $(n0 "$udp_in") - r_got ))               # read by perfdhcp's socket, not counted by it
        if [ $r_links = 0 ] && [ $r_perf = 0 ] && [ $r_unread -ge 0 ]; then rbal="balanced"; else rbal="UNEXPLAINED: links $r_links, perfdhcp $r_perf, unread $r_unread"; fi
        ACCT_REP="replies: the agent sent $r_sent ($a_of OFFER, $a_ac ACK, $a_nak NAK) = received by perfdhcp $r_got ($r_of OFFER, $r_ac ACK) + lost on the links $r_links + dropped by perfdhcp's full socket buffer $r_full (UDP InErrors; RcvbufErrors $udp_rcvbuf) + left unread in its socket when it stopped $r_unread + read but not counted by perfdhcp $r_perf: $rbal. An OFFER perfdhcp did not read is a REQUEST it never sends."
        ACCT_DETAIL="counters (after - before): perfdhcp UDP out $udp_out (SndbufErrors $udp_sndbuf) in $udp_in (InErrors $udp_inerr); other frames sent by c-perf $(( $(n0 "$c_tx") - $(n0 "$udp_out") )); c-perf tx $c_tx (dropped $c_txd) rx $c_rx (dropped $c_rxd); v-perf rx $v_rx (dropped $v_rxd) tx $v_tx (dropped $v_txd); $BR rx $b_rx (dropped $b_rxd) tx $b_tx (dropped $b_txd); packet socket: kernel received $k_rcv (drops included; $BR received $b_rx), dropped $k_drop; agent drops (all reasons) $a_drops; server ICMP out $icmp_out, other frames from the server namespace's stack $r_other; backlog drops (softnet, whole machine) $softnet"
        # the agent's own reply latency over the run: from the kernel's receive timestamp to
        # the send (vmdhcp_agent_reply_latency_seconds): where a tail seen by perfdhcp comes from
        ACCT_LAT="the agent's reply latency, kernel receive to send (vmdhcp_agent_reply_latency_seconds over the run): $(awk '
            FNR == 1 { f++ }
            index($1, "vmdhcp_agent_reply_latency_seconds_bucket{") == 1 { match($1, /le="[^"]*"/); le = substr($1, RSTART + 4, RLENGTH - 5); if (f == 1) b0[le] = $2; else { b1[le] = $2; les[++n] = le } }
            $1 == "vmdhcp_agent_reply_latency_seconds_sum" { if (f == 1) s0 = $2; else s1 = $2 }
            END {
                tot = b1["+Inf"] - b0["+Inf"]; if (tot <= 0) { print "n/a"; exit }
                for (i = 1; i <= n; i++) { c = b1[les[i]] - b0[les[i]]
                    if (p50 == "" && c >= 0.5 * tot) p50 = les[i]; if (p99 == "" && c >= 0.99 * tot) p99 = les[i]
                    if (les[i] == "0.001") over1 = tot - c }
                printf "%d replies, mean %.1f us, p50 <= %s s, p99 <= %s s, over 1 ms %d (%.3f%%)", tot, 1e6 * (s1 - s0) / tot, p50, p99, over1, 100 * over1 / tot }' "$A/before.txt" "$A/after.txt")"
    fi
    printf 'accounting: %s\naccounting: %s\naccounting: %s\naccounting: %s\n' "${ACCT_REQ:-not measured}" "${ACCT_REP:-not measured}" "${ACCT_DETAIL:-}" "${ACCT_LAT:-}" | tee "$OUT/acct.txt"
fi

# --- 5. RSS with BINDINGS static bindings -------------------------------------------------------
nb=NA rss_kb=NA hwm_kb=NA
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
if has rss; then
    gen_bindings "$BINDINGS" >"$OUT/rss.yaml"
    ip netns add "$RSS_NS"
    ip -n "$RSS_NS" link set lo up
    ip -n "$RSS_NS" link add br0 type bridge
    ip -n "$RSS_NS" link set br0 up
    ip netns exec "$RSS_NS" "$AGENT" --config "$OUT/rss.yaml" --interface br0 --assign-server-ip \
        --listen 127.0.0.1:9181 >"$OUT/rss-agent.log" 2>&1 &
    RSS_PID=$!
    OWN=("$RSS_PID")
    ready=0
    for _ in $(seq 600); do
        ip netns exec "$RSS_NS" curl -sf -o /dev/null http://127.0.0.1:9181/readyz && { ready=1; break; }
        kill -0 "$RSS_PID" 2>/dev/null || break
        sleep 0.1
    done
    if [ $ready = 1 ]; then
        nb=$(ip netns exec "$RSS_NS" curl -sf http://127.0.0.1:9181/metrics | awk '$1 == "vmdhcp_agent_bindings" { print $2 }')
        rss_kb=$(proc_status "$RSS_PID" VmRSS)
        hwm_kb=$(proc_status "$RSS_PID" VmHWM)
    else
        tail -5 "$OUT/rss-agent.log" >&2
        say "the agent with $BINDINGS bindings did not become ready"
    fi
    stop_tree "$RSS_PID"
    OWN=()
    ip netns delete "$RSS_NS"
    echo "rss bindings=$nb rss_kb=$rss_kb peak_kb=$hwm_kb" | tee "$OUT/rss.txt"
fi

# --- 6. bars and docs ---------------------------------------------------------------------------
a_drop=$(cget agent fixed drop_e2e) a_flood=$(cget agent flood dora_s) k_flood=$(cget kea flood dora_s)
worst() { # KEY -> the agent's largest median over the latency ladder
    local r v m=NA
    for r in $LAT_RATES; do
        v=$(med "$LRES" agent lat "$r" "$1")
        [ "$v" = NA ] && continue
        m=$(awk -v a="$m" -v b="$v" 'BEGIN { print (a == "NA" || b + 0 > a + 0) ? b : a }')
    done
    echo "$m"
}
w_dp=$(worst do_p99) w_rp=$(worst ra_p99) w_drop=$(fmt "$(worst drop_e2e)" 3)
n_v1=$(grep -c -- '-> met; p99' <<<"$LAT_CHECKS") n_v2=$(grep -c 'ms -> met$' <<<"$LAT_CHECKS") n_rates=$(wc -w <<<"$LAT_RATES")
v_ratio=$(verdict "\"${ratio:-NA}\" != \"NA\" && ${ratio:-0} + 0 >= 6")
if has latency; then
    v_drop=$(verdict "\"${a_drop:-NA}\" != \"NA\" && ${a_drop:-1} + 0 == 0 && \"$w_drop\" != \"NA\" && $w_drop + 0 == 0")
else
    v_drop=$(verdict "\"${a_drop:-NA}\" != \"NA\" && ${a_drop:-1} + 0 == 0")
fi
v_p99=$(verdict "\"$w_dp\" != \"NA\" && $w_dp + 0 < 1 && $w_rp + 0 < 1")
v_flood=$(verdict "\"${a_flood:-NA}\" != \"NA\" && ${a_flood:-0} + 0 >= ${k_flood:-1} + 0")
v_rss=$(verdict "\"$rss_kb\" != \"NA\" && $rss_kb + 0 < 8192")
v_med=$(verdict "$n_rates > 0 && $n_v1 == $n_rates && $REPS >= 2")
v_kea=$(verdict "$n_rates > 0 && $n_v2 == $n_rates && $REPS >= 2")
v_acct=$(verdict "\"$BAL\" == \"balanced\"")
CMDLINE="REPS=$REPS DUR=$DUR RATE=$RATE LAT_DUR=$LAT_DUR"
[ "$CMP_REPS" = "$REPS" ] || CMDLINE+=" CMP_REPS=$CMP_REPS"
[ "$LAT_RATES" = "1000 2000 3000 4000 5000 6000 7000 8000" ] || CMDLINE+=" LAT_RATES=\"$LAT_RATES\""
[ "$ACCT_RATE" = "$RATE" ] || CMDLINE+=" ACCT_RATE=$ACCT_RATE"
[ "$BINDINGS" = 65000 ] || CMDLINE+=" BINDINGS=$BINDINGS"
[ "$PARTS" = " compare ceiling latency accounting rss " ] || CMDLINE+=" PARTS=\"$(xargs <<<"$PARTS")\""
{
    cat <<EOF
<!-- dhcp-bench:start (written by scripts/bench-dhcp.sh) -->
## DHCP: vm-dhcp-agent against ISC Kea and the reflector

Command: \`$CMDLINE make bench-dhcp\` ($(date -u '+%Y-%m-%d %H:%M UTC'),
$(nproc) CPUs, load before the run: $(cut -d' ' -f1-3 /proc/loadavg)). perfdhcp relays
60 000 simulated clients to each server in turn (\`../shared/bench/dhcp\`: server pinned to one CPU,
perfdhcp to the other; agent in local mode with \`--dynamic --lease-file\`, Kea memfile without
persistence, the reflector is \`servers/reflector.sh raw\`, a do-nothing AF_PACKET responder).
EOF
    if has compare; then
        cat <<EOF

### Throughput (\`compare.sh\`, medians of $CMP_REPS repetitions, ${DUR} s per run)

| phase | server | DORA/s | drops (e2e) | DORA per server CPU-second | RSS (KiB) |
|---|---|---:|---:|---:|---:|
EOF
        for p in fixed flood; do for s in agent kea; do
            printf '| %s | %s | %s | %s%% | %s | %s |\n' "$p" "$s" "$(cget $s $p dora_s)" "$(cget $s $p drop_e2e)" "$(cget $s $p dora_per_cpu_s)" "$(cget $s $p rss_kb)"
        done; done
    fi
    if has latency; then
        cat <<EOF

### Latency (perfdhcp \`-x t\`, one interleaved run, medians of $REPS repetitions, ${LAT_DUR} s per run)

$LAT_TABLE

$XT_LIMIT.

Checks (the latency bars: agent median within 1.2× of the reflector's and p99 at or below Kea's, at
every rate, medians over the repetitions):

\`\`\`
$LAT_CHECKS\`\`\`
EOF
    elif [ -n "$XT_LIMIT" ]; then
        printf '\n%s.\n' "$XT_LIMIT"
    fi
    if has accounting; then
        cat <<EOF

### Where every request goes (agent with \`--listen\`, its counters, the kernel's and the links' before and after)

- ${ACCT_REQ:-not measured}
- ${ACCT_REP:-not measured}
- ${ACCT_DETAIL:-}
- ${ACCT_LAT:-}
EOF
    fi
    if has rss; then
        cat <<EOF

RSS with $BINDINGS static bindings (local mode, $BINDINGS VirtualMachineNetworkConfig NICs,
generated YAML, after load): VmRSS ${rss_kb} KiB, peak (VmHWM, during YAML load) ${hwm_kb} KiB;
bindings served: ${nb}.
EOF
    fi
    echo
    echo '| bar (docs/benchmarks.md, The bars) | result | |'
    echo '|---|---|---|'
    if has compare; then
        echo "| ≥ 6× Kea's DORA per server CPU-second | ratio ${ratio:-NA} | $v_ratio |"
        echo "| zero drops at the fixed rate | ${a_drop:-NA}% (compare, $RATE/s)$(has latency && echo ", worst ${w_drop}% (latency ladder)") | $v_drop |"
    fi
    if has latency; then
        echo "| p99 < 1 ms (latency ladder, worst rate) | ${w_dp} / ${w_rp} ms | $v_p99 |"
        echo "| median within 1.2× of the reflector's, 2+ repetitions | $n_v1 of $n_rates rates, $REPS repetitions | $v_med |"
        echo "| p99 at or below Kea's, 2+ repetitions | $n_v2 of $n_rates rates, $REPS repetitions | $v_kea |"
    fi
    has accounting && echo "| every request accounted for (accounting run) | $BAL | $v_acct |"
    has compare && echo "| flooded: ≥ Kea's DORA/s | ${a_flood:-NA} vs ${k_flood:-NA} | $v_flood |"
    has rss && echo "| RSS < 8 MiB with $BINDINGS bindings | ${rss_kb} KiB | $v_rss |"
    cat <<EOF
<!-- dhcp-bench:end -->
EOF
} >"$OUT/section.md"
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
    say "updated $DOC"
fi
say "results in $OUT"
