#!/bin/bash
# scripts/bench-kube.sh [BENCH_BINARY] - run the Kubernetes client benchmark (informer initial
# sync and a stream of watch events through the store, against build/test-apiserver) and
# write its results into the "Kubernetes client" section of docs/benchmarks.md.
# BENCH_KUBE_N overrides the object/event count (default 10000).
set -eu
bin=${1:-build/bench-kube}
n=${BENCH_KUBE_N:-10000}
doc=docs/benchmarks.md
[ -x "$bin" ] || { echo "bench-kube: $bin not built (make bench-kube)" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out" "$out.doc"' EXIT
echo "bench-kube: $n objects, $n watch events ..."
"$bin" "$n" >"$out"
cat "$out"
mkdir -p docs
[ -f "$doc" ] || printf '# Benchmarks\n' >"$doc"
# Replace the section from its heading to the next "## " heading (or the end).
awk '
    /^## Kubernetes client/ { skip = 1; next }
    skip && /^## / { skip = 0 }
    !skip { print }
' "$doc" >"$out.doc"
{
    cat "$out.doc"
    printf '\n## Kubernetes client\n\n'
    printf '%s, %s.\n\n' "$(date -u +%Y-%m-%d)" "$(uname -m), $(nproc) cores"
    cat "$out"
} | cat -s >"$doc"
echo "bench-kube: results written to $doc"
