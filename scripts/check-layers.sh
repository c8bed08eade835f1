#!/bin/bash
# scripts/check-layers.sh - enforce the module dependency arrows (the rules below: which module
# may include which project module and which system headers it must not use) by
# grepping #include lines. Prints every violation; exit 1 if any.
set -u
cd "$(dirname "$0")/.."
bad=0
# The /healthz /readyz /metrics endpoint: the only files of lib/ that may use libevent.
LIB_LIBEVENT_USERS="lib/httpd.c lib/httpd-conns.c"
is_lib_libevent_user() { case " $LIB_LIBEVENT_USERS " in *" $1 "*) return 0 ;; esac; return 1; }
# module : allowed project modules : forbidden system headers (regex)
rules=(
  "lib:lib:curl/|mbedtls/|jansson|yaml\\.h|netlink/"
  "dhcp:lib:curl/|mbedtls/|jansson|event2/|yaml\\.h|netlink/"
  "ipam:lib:curl/|mbedtls/|jansson|event2/|yaml\\.h|netlink/"
  "crds:lib:curl/|mbedtls/|event2/|netlink/"
  "kube:lib:netlink/"
  "controller:kube crds ipam lib:netlink/|mbedtls/"
  "agent:kube crds dhcp ipam lib:curl/|mbedtls/"
)
for rule in "${rules[@]}"; do
    mod=${rule%%:*}; rest=${rule#*:}; allowed=${rest%%:*}; forbid=${rest#*:}
    [ -d "$mod" ] || continue
    while IFS= read -r line; do
        file=${line%%:*}; inc=$(sed -E 's/.*#include[[:space:]]*[<"]([^>"]+)[>"].*/\1/' <<<"$line")
        top=${inc%%/*}
        if [[ "$inc" == */* ]] && [ -d "$top" ] && [ "$top" != "$mod" ]; then
            ok=0; for a in $allowed; do [ "$a" = "$top" ] && ok=1; done
            if [ $ok = 0 ]; then echo "layer violation: $file includes $inc ($mod may use: $allowed)"; bad=1; fi
            if [[ "$inc" == *-internal.h ]]; then echo "layer violation: $file includes another module's internal header $inc"; bad=1; fi
        fi
        if [ -n "$forbid" ] && grep -qE "^($forbid)" <<<"$inc"; then
            # lib/httpd.c and lib/httpd-conns.c (the endpoint) are the libevent users in lib/
            if ! { [ "$mod" = lib ] && is_lib_libevent_user "$file" && [[ "$inc" == event2/* ]]; }; then
                echo "layer violation: $file includes $inc (not allowed in $mod/)"; bad=1
            fi
        fi
    done < <(grep -HE '^[[:space:]]*#[[:space:]]*include' "$mod"/*.[ch] 2>/dev/null)
done
# lib/ may include event2 only in the endpoint's two files
for f in lib/*.[ch]; do
    is_lib_libevent_user "$f" && continue
    grep -qE '#include[[:space:]]*<event2/' "$f" && { echo "layer violation: $f uses libevent (only $LIB_LIBEVENT_USERS may)"; bad=1; }
done
if [ $bad = 0 ]; then echo "check-layers: ok"; fi
exit $bad
