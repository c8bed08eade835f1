#!/bin/bash
# tests/fuzz/run-fuzz.sh BINPREFIX SECONDS|short - run every libFuzzer target build/fuzz/fuzz-*.
#   short:   replay the checked-in corpus tests/fuzz/corpus/<target>/ and do 20 000 new runs
#            (bounded, part of `make test`); new inputs go to a scratch dir, not the corpus.
#   SECONDS: fuzz each target that long, growing a scratch corpus seeded from the checked-in one.
# Any crash, leak, sanitizer report or timeout fails the run; the reproducer is kept in
# build/fuzz/artifacts/.
set -u
prefix=${1:?usage: run-fuzz.sh BINPREFIX SECONDS|short}; mode=${2:?}
status=0 n=0
mkdir -p build/fuzz/artifacts
for bin in "$prefix"-*; do
    [ -x "$bin" ] || continue
    name=$(basename "$bin")
    seed=tests/fuzz/corpus/$name
    work=$(mktemp -d /tmp/vmdhcp-fuzz.XXXXXX)
    [ -d "$seed" ] && cp -r "$seed"/. "$work"/ 2>/dev/null
    dict=tests/fuzz/$name.dict; dictarg=(); [ -f "$dict" ] && dictarg=(-dict="$dict")
    if [ "$mode" = short ]; then
        args=(-runs=20000 -max_total_time=60)
    else
        args=(-max_total_time="$mode")
    fi
    echo "  FUZZ  $name ${args[*]}"
    if ! "$bin" "${dictarg[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix=build/fuzz/artifacts/"$name"- "${args[@]}" "$work" >build/fuzz/"$name".log 2>&1; then
        echo "  FAIL  $name (log: build/fuzz/$name.log)"; tail -n 30 build/fuzz/"$name".log; status=1
    else
        grep -E 'stat::number_of_executed_units|cov:' build/fuzz/"$name".log | tail -n 2 | sed 's/^/        /'
    fi
    rm -rf "$work"; n=$((n+1))
done
[ $n -gt 0 ] || { echo "no fuzz targets built"; exit 1; }
exit $status
