#!/bin/bash
# tests/run-tests.sh GROUP BIN_OR_SCRIPT... - run test executables.
#
# Each is a CUnit binary (tests/runner.c) or a shell test; exit 0 = pass, 77 = skipped (the
# reason is in its output), anything else = failure. Counts are taken from each binary's last
# "N passed, N failed, N skipped" line (a script without one counts as one test).
# VALGRIND=1 runs binaries under valgrind (leaks are errors). TEST_JOBS=N runs up to N of them
# at once (default 1: one after another; only for groups whose tests share nothing, such as
# the unit binaries); results are printed in the order given either way. Results are appended
# to $VMDHCP_SUMMARY when set. Exit status: 0 when nothing failed.
set -u
group=${1:?usage: run-tests.sh GROUP EXE...}; shift
jobs=${TEST_JOBS:-1}
pass=0 fail=0 skip=0 failed_names=()
logdir=${VMDHCP_TEST_LOGS:-build/test-logs}
mkdir -p "$logdir"

# run_one EXE LOG: runs it, then writes "rc secs" to LOG.status
run_one() {
    local t=$1 log=$2 start rc
    start=$(date +%s)
    if [ "${VALGRIND:-0}" = 1 ] && [[ "$t" != *.sh ]]; then
        valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
            --error-exitcode=99 "$t" >"$log" 2>&1
    else
        "$t" >"$log" 2>&1
    fi
    rc=$?
    echo "$rc $(( $(date +%s) - start ))" >"$log.status"
}

# report EXE LOG: the line of one finished test, added to the totals
report() {
    local t=$1 log=$2 name rc secs line p f s
    name=$(basename "$t")
    read -r rc secs <"$log.status"
    rm -f "$log.status"
    line=$(grep -E '[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
    if [ -n "$line" ]; then
        p=$(sed -E 's/.* ([0-9]+) passed.*/\1/' <<<"$line")
        f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
        s=$(sed -nE 's/.* ([0-9]+) skipped.*/\1/p' <<<"$line"); s=${s:-0}
    else
        p=0 f=0 s=0
        case $rc in 0) p=1 ;; 77) s=1 ;; *) f=1 ;; esac
    fi
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ "$f" -eq 0 ]; then f=1; fi
    pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
    case $rc in
        0)  printf '  PASS  %-40s %4ss  %s\n' "$name" "$secs" "${line:-}" ;;
        77) printf '  SKIP  %-40s %4ss  %s\n' "$name" "$secs" "$(grep -m1 -iE 'skip' "$log")" ;;
        *)  printf '  FAIL  %-40s %4ss  exit %s (log: %s)\n' "$name" "$secs" "$rc" "$log"
            failed_names+=("$name")
            # show the failing assertions / last lines
            grep -E 'FAILED|Assertion|ERROR|==[0-9]+==|runtime error|not ok|FAIL' "$log" | head -n 40 | sed 's/^/        /'
            tail -n 15 "$log" | sed 's/^/      | /' ;;
    esac
}

# One at a time in the foreground unless TEST_JOBS says otherwise: bash starts a background job
# of a non-interactive shell with SIGINT and SIGQUIT ignored, and a script started that way
# cannot trap them, so the netns and e2e scripts (which clean up on INT) must not run as jobs.
#
# TEST_BESIDE="NAME..." (basenames): those scripts run beside the others instead, each started
# first in its own process group (setsid, so that it keeps its INT/TERM traps) and reported at
# the end; an interrupted run sends them TERM. For scripts that mostly wait (a probe interval)
# and share nothing with the rest (tests/netns: every script's namespaces carry its own PID).
if [ "$jobs" -le 1 ]; then
    beside=() beside_pids=()
    stop_beside() {
        local f p
        for f in "${beside_pidfiles[@]:-}"; do
            [ -n "$f" ] && [ -r "$f" ] && p=$(cat "$f") && [ -n "$p" ] && kill -TERM -- -"$p" 2>/dev/null
        done
    }
    beside_pidfiles=()
    for t in "$@"; do
        case " ${TEST_BESIDE:-} " in *" $(basename "$t") "*) beside+=("$t") ;; esac
    done
    for t in "${beside[@]}"; do
        log="$logdir/$group-$(basename "$t").log"
        rm -f "$log.pid"
        (
            start=$(date +%s)
            setsid "$t" >"$log" 2>&1 &
            echo $! >"$log.pid"
            wait $!
            echo "$? $(( $(date +%s) - start ))" >"$log.status"
        ) &
        beside_pids+=($!)
        beside_pidfiles+=("$log.pid")
    done
    [ ${#beside[@]} -eq 0 ] || trap 'stop_beside; exit 130' INT TERM
    for t in "$@"; do
        case " ${beside[*]:-} " in *" $t "*) continue ;; esac
        log="$logdir/$group-$(basename "$t").log"
        run_one "$t" "$log"
        report "$t" "$log"
    done
    for i in "${!beside[@]}"; do
        wait "${beside_pids[$i]}"
        log="$logdir/$group-$(basename "${beside[$i]}").log"
        rm -f "$log.pid"
        report "${beside[$i]}" "$log"
    done
    [ ${#beside[@]} -eq 0 ] || trap - INT TERM
else
    # Up to $jobs at once, a new one started as soon as any finishes (wait -n), each reported
    # in order as soon as it and those before it are done. The binaries named in
    # tests/slow-first.txt (the slowest, mostly under valgrind) start first, so that a long one
    # does not run alone at the end while the others are done.
    args=()
    if [ -r tests/slow-first.txt ]; then
        while read -r slow _; do
            [ -n "$slow" ] && [[ $slow != \#* ]] || continue
            for t in "$@"; do [ "$(basename "$t")" = "$slow" ] && args+=("$t"); done
        done <tests/slow-first.txt
    fi
    for t in "$@"; do
        case " ${args[*]} " in *" $t "*) ;; *) args+=("$t") ;; esac
    done
    declare -A idx_of=()
    finished=()
    running=0 i=0 next=0
    while [ "$next" -lt ${#args[@]} ]; do
        while [ "$i" -lt ${#args[@]} ] && [ "$running" -lt "$jobs" ]; do
            run_one "${args[$i]}" "$logdir/$group-$(basename "${args[$i]}").log" &
            idx_of[$!]=$i
            running=$((running + 1)) i=$((i + 1))
        done
        fin=
        wait -n -p fin
        if [ -n "$fin" ] && [ -n "${idx_of[$fin]:-}" ]; then
            finished[${idx_of[$fin]}]=1
            unset "idx_of[$fin]"
            running=$((running - 1))
        fi
        while [ "$next" -lt ${#args[@]} ] && [ -n "${finished[$next]:-}" ]; do
            report "${args[$next]}" "$logdir/$group-$(basename "${args[$next]}").log"
            next=$((next + 1))
        done
    done
fi
[ -n "${VMDHCP_SUMMARY:-}" ] && echo "$group $pass $fail $skip ${failed_names[*]:-}" >>"$VMDHCP_SUMMARY"
echo "$group: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
