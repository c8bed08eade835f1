#!/bin/bash
# scripts/check-layers.sh - enforce the module dependency arrows (the rules below: which module
# may include which project module and which system headers it must not use) by
# reading #include lines. Prints every violation; exit 1 if any. One awk pass over every file
# (a process per #include line took minutes on a busy machine).
set -u
cd "$(dirname "$0")/.."
# The /healthz /readyz /metrics endpoint: the only files of lib/ that may use libevent.
LIB_LIBEVENT_USERS="lib/httpd.c lib/httpd-conns.c"
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
files=() mods=""
for rule in "${rules[@]}"; do
    mod=${rule%%:*}
    [ -d "$mod" ] || continue
    mods="$mods $mod"
    for f in "$mod"/*.[ch]; do [ -e "$f" ] && files+=("$f"); done
done
# the top-level directories an include may name as a project module
dirs=$(for d in */; do printf '%s ' "${d%/}"; done)
[ ${#files[@]} -gt 0 ] || { echo "check-layers: ok"; exit 0; }
awk -v rules="$(printf '%s\n' "${rules[@]}")" -v dirs="$dirs" -v lib_users="$LIB_LIBEVENT_USERS" '
BEGIN {
    n = split(rules, rl, "\n")
    for (i = 1; i <= n; i++) {
        if (rl[i] == "") continue
        split(rl[i], p, ":")
        allowed[p[1]] = " " p[2] " "
        forbid[p[1]] = p[3]
    }
    m = split(dirs, dl, " ")
    for (i = 1; i <= m; i++) isdir[dl[i]] = 1
    m = split(lib_users, ul, " ")
    for (i = 1; i <= m; i++) libev[ul[i]] = 1
    bad = 0
}
/^[[:space:]]*#[[:space:]]*include/ {
    file = FILENAME
    mod = file; sub(/\/.*/, "", mod)
    inc = $0
    if (!match(inc, /#[[:space:]]*include[[:space:]]*[<"][^>"]+[>"]/)) next
    inc = substr(inc, RSTART, RLENGTH)
    sub(/^#[[:space:]]*include[[:space:]]*[<"]/, "", inc)
    sub(/[>"]$/, "", inc)
    top = inc; sub(/\/.*/, "", top)
    if (index(inc, "/") > 0 && (top in isdir) && top != mod) {
        if (index(allowed[mod], " " top " ") == 0) {
            printf "layer violation: %s includes %s (%s may use:%s)\n", file, inc, mod, substr(allowed[mod], 1, length(allowed[mod]) - 1)
            bad = 1
        }
        if (inc ~ /-internal\.h$/) {
            printf "layer violation: %s includes another module'"'"'s internal header %s\n", file, inc
            bad = 1
        }
    }
    if (forbid[mod] != "" && inc ~ ("^(" forbid[mod] ")")) {
        # lib/httpd.c and lib/httpd-conns.c (the endpoint) are the libevent users in lib/
        if (!(mod == "lib" && (file in libev) && inc ~ /^event2\//)) {
            printf "layer violation: %s includes %s (not allowed in %s/)\n", file, inc, mod
            bad = 1
        }
    }
    # lib/ may include event2 only in the endpoint'"'"'s two files
    if (mod == "lib" && inc ~ /^event2\// && !(file in libev)) {
        printf "layer violation: %s uses libevent (only %s may)\n", file, lib_users
        bad = 1
    }
}
END { if (bad == 0) print "check-layers: ok"; exit bad }
' "${files[@]}"
