#!/bin/bash
# scripts/check-sizes.sh - product files read at a glance: no C file of the product folders over
# MAX_LINES (800) lines, and no function over MAX_FN (80) lines unless the comment just above it
# gives the reason in a line that starts with "Long:" (e.g. "Long: one flat table").
# A function is what clang-format leaves: its `{` and `}` at column 0. Prints every violation;
# exit 1 if any. Usage: scripts/check-sizes.sh [-C DIR] [FOLDER...] (default: the product's).
set -u
dir=.
if [ "${1:-}" = -C ]; then dir=$2; shift 2; fi
case "${1:-}" in -h|--help) sed -n '2,6p' "$0" | sed 's/^# \{0,1\}//'; exit 0;; esac
cd "$dir" || exit 2
folders=("$@")
[ ${#folders[@]} -gt 0 ] || folders=(lib dhcp ipam crds kube agent controller)
MAX_LINES=${MAX_LINES:-800}
MAX_FN=${MAX_FN:-80}
bad=0
# one wc and one awk for all the files (a process per file took 17 s on a busy machine)
files=() cfiles=()
for d in "${folders[@]}"; do
    for f in "$d"/*.[ch]; do [ -e "$f" ] && files+=("$f"); done
    for f in "$d"/*.c; do [ -e "$f" ] && cfiles+=("$f"); done
done
if [ ${#files[@]} -gt 0 ]; then
    while read -r n f; do
        [ "$f" = total ] && continue
        if [ "$n" -gt "$MAX_LINES" ]; then echo "check-sizes: $f: $n lines (over $MAX_LINES)"; bad=1; fi
    done < <(wc -l "${files[@]}")
fi
if [ ${#cfiles[@]} -gt 0 ]; then
    awk -v max="$MAX_FN" '
        FNR == 1 { start = 0; sig = ""; why = 0; last_long = 0; reason = 0 }
        /^\{/ { start = FNR; name = sig; reason = why }
        /^\}/ && start { len = FNR - start + 1
            if (len > max && !reason) { printf "check-sizes: %s:%d: %s: %d lines (over %d, no \"Long:\" reason above it)\n", FILENAME, start, name, len, max; bad = 1 }
            start = 0 }
        /^[A-Za-z_][A-Za-z0-9_ \t*]*\(/ { sig = $0; sub(/\(.*/, "", sig); n = split(sig, w, /[ \t*]+/); sig = w[n]
            why = (last_long > 0 && FNR - last_long <= 3) }
        /^[ \t]*(\/\*|\*)[ \t]*Long:/ { last_long = FNR }
        /^[ \t]*\*\/[ \t]*$/ && last_long == FNR - 1 { last_long = FNR }
        END { exit bad }' "${cfiles[@]}" || bad=1
fi
[ $bad = 0 ] && echo "check-sizes: ok (${folders[*]}: files <= $MAX_LINES lines, functions <= $MAX_FN lines)"
exit $bad
