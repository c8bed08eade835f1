#!/bin/bash
# tests/check-circles/test-check-circles.sh - the circle checker (scripts/check-circles.sh) on
# two small trees: ok/m (edges by call, global and module-header include; names only in
# comments, strings, members and a shared header, which are not edges) has no cycle;
# cycle/m has three (two of two files, one of three). Exit 0 when every check holds.
set -u
cd "$(dirname "$0")" || exit 2
check=../../scripts/check-circles.sh
tmp=$(mktemp -d /tmp/check-circles-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
# expect NAME WANT_RC GOT_RC [WANT_OUTPUT GOT_OUTPUT]
expect() {
    if [ "$2" = "$3" ] && { [ $# -lt 5 ] || [ "$4" = "$5" ]; }; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $1: exit $3 (want $2)"
        [ $# -lt 5 ] || diff <(echo "$4") <(echo "$5") | sed 's/^/    /'
    fi
}
cycles='m/low.c -> m/mid.c -> m/low.c
m/table.c -> m/top.c -> m/table.c
m/low.c -> m/table.c -> m/top.c -> m/low.c'

out=$($check -C ok --no-allow m); rc=$?
expect "no cycle" 0 $rc "check-circles: ok (m/)" "$out"
out=$($check -C ok --no-allow --edges m | grep '^edge'); rc=$?
expect "edges of the tree without a cycle" 0 $rc 'edge: m/mid.c -> m/low.c (#include "m/low.h")
edge: m/top.c -> m/low.c (low_count)
edge: m/top.c -> m/table.c (table_size)' "$out"

out=$($check -C cycle --no-allow m); rc=$?
expect "every cycle fails" 1 $rc "$cycles" "$(sed -n 's/^cycle: //p' <<<"$out")"
expect "one symbol per edge" 1 $rc "    m/table.c -> m/top.c: top_run
    m/top.c -> m/table.c: table_size" "$(grep -A2 '^cycle: m/table.c' <<<"$out" | tail -n 2)"

# an allow-list in another rotation and with comments: warnings, exit 0
printf '# today'"'"'s cycles\nm/mid.c -> m/low.c -> m/mid.c\nm/top.c -> m/table.c -> m/top.c  # two files\nm/top.c -> m/low.c -> m/table.c\n' >"$tmp/all"
out=$($check -C cycle --allow "$tmp/all" m); rc=$?
expect "listed cycles warn" 0 $rc "$cycles" "$(sed -n 's/^warning: allowed cycle: //p' <<<"$out")"
head -n 3 "$tmp/all" >"$tmp/two"
out=$($check -C cycle --allow "$tmp/two" m); rc=$?
expect "an unlisted cycle fails" 1 $rc "m/low.c -> m/table.c -> m/top.c -> m/low.c" "$(sed -n 's/^cycle: //p' <<<"$out")"
out=$($check -C ok --allow "$tmp/all" m); rc=$?
expect "stale allow-list lines are named" 0 $rc 3 "$(grep -c '^note: allow-list cycle no longer present' <<<"$out")"

$check --help >/dev/null; expect "--help" 0 $?
$check --bogus >/dev/null 2>&1; expect "unknown option" 2 $?
$check -C ok --no-allow nosuch >/dev/null 2>&1; expect "missing folder" 2 $?

echo "check-circles self-test: $pass passed, $fail failed, 0 skipped"
[ "$fail" = 0 ]
