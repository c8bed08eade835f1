#!/bin/bash
# scripts/fresh-test.sh [--keep] - the README's quick start on a freshly bootstrapped Debian 12
# (`make fresh-test`; root; about 30 minutes on 2 cores; not part of `make test` nor CI).
#
#   1. debootstrap bookworm into /var/tmp/vmd-fresh.XXXXXX: the base system only, as a cloud
#      image or a netinst without extras has (no make, no compiler, no git); the downloaded
#      packages are kept in $FRESH_CACHE (default /var/cache/vm-dhcp/debootstrap) for the next
#      run, the root itself is new each time
#   2. the host's site configuration a new machine there would get too: its resolv.conf
#      (debootstrap copies it) and, where the host trusts a local CA (files in
#      /usr/local/share/ca-certificates), those files and the host's CA bundle, so HTTPS
#      through an intercepting proxy (npm's registry) works; nothing else is copied
#   3. the root bind-mounted onto itself (`ip netns` needs / to be a mount point), proc, sysfs,
#      /dev (recursive, as a slave: nothing propagates back) and a tmpfs on /run, all in a mount
#      namespace of the run (unshare -m): the host's mount table never shows them
#   4. the repository cloned into /root/vm-dhcp (git clone of this checkout's HEAD: commit
#      first; uncommitted changes are not tested, and a warning says so), and, as CI has it, a
#      copy of the shared/ folder beside the checkout (../shared: the kube-apiserver 1.25 of
#      `make upstream-objects-test`) in /root/shared, read-only, when the host has one
#   5. the README's quick start, the commands exactly as its "Quick start" block gives them,
#      each in `cd /root/vm-dhcp` as root with a clean environment; around each, the host's
#      resolv.conf and DHCP client state are checked unchanged (tests/netns/host-files.sh
#      --print)
#   6. the results: each command's exit status and time, `make test`'s totals
#   7. clean-up, also after a failure or Ctrl-C: every process whose root is in the root
#      stopped by PID (each named: a process left behind is a failure), the network namespaces
#      left in its /run/netns named (a failure) and removed, every mount under the root
#      unmounted, then the root removed (--keep keeps it, unmounted)
#
# Every step says what it does; a step that fails says which and why, and the log it wrote
# (logs in build/fresh-test/). Exit status: 0 when the demo passed, `make test` passed with
# nothing failed nor skipped, the host files were unchanged and nothing was left behind.
# FRESH_MIRROR overrides the Debian mirror (default: the host's first Debian source).
# FRESH_COMMANDS (lines) replaces the README's commands: a quicker check of the set-up only
# (the result then says it was not the README's).
set -u
cd "$(dirname "$0")/.." || exit 1
SRC=$(pwd)
SUITE=bookworm
CACHE=${FRESH_CACHE:-/var/cache/vm-dhcp/debootstrap}
LOGS=$SRC/build/fresh-test
KEEP=0
for a in "$@"; do
    case $a in
        --keep) KEEP=1 ;;
        -h|--help) sed -n '2,/^set -u$/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "fresh-test: unknown argument '$a' (try --help)" >&2; exit 2 ;;
    esac
done

STEP=
R=
FAILED=0
T_START=$SECONDS
step() { STEP=$1; echo; echo "== fresh-test: $1"; }
# die WHY: the step that failed and why, then the clean-up (EXIT trap)
die() { echo "fresh-test: FAILED at step '$STEP': $*" >&2; FAILED=1; exit 1; }
note_fail() { echo "fresh-test: FAIL: $*"; FAILED=1; }
secs() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

[ "$(id -u)" = 0 ] || { echo "fresh-test: needs root (debootstrap, chroot, mounts)" >&2; exit 1; }
# The root's mounts (its proc, sysfs, /dev, /run) live in a mount namespace of this run, not in
# the host's: a kubelet running on the host (make cluster-test) takes the cgroup mounts it finds
# in the mount table, and once took the root's, whose removal then broke its pods.
if [ -z "${FRESH_MNTNS:-}" ]; then
    exec env FRESH_MNTNS=1 unshare --mount --propagation private "$SRC/scripts/fresh-test.sh" "$@"
fi
mkdir -p "$LOGS" || { echo "fresh-test: cannot create $LOGS" >&2; exit 1; }

# --- clean-up (EXIT) -------------------------------------------------------------------------
# mounts at or below $R, deepest first
mounts_under() {
    awk -v r="$R" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r
}
# PIDs of processes whose root directory is $R or below it
procs_in_root() {
    local d root
    for d in /proc/[0-9]*; do
        root=$(readlink "$d/root" 2>/dev/null) || continue
        [ "$root" = "$R" ] || [[ "$root" == "$R"/* ]] && echo "${d#/proc/}"
    done
}
cleanup() {
    local rc=$? p n m left i
    trap '' INT TERM # a second Ctrl-C must not cut the teardown short
    [ -n "$R" ] || exit $rc
    echo
    echo "== fresh-test: clean-up of $R"
    left=$(procs_in_root)
    if [ -n "$left" ]; then
        for p in $left; do
            note_fail "process left behind in the root: $p $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
        done
        for p in $left; do kill -TERM "$p" 2>/dev/null; done
        for i in $(seq 50); do left=$(procs_in_root); [ -n "$left" ] || break; sleep 0.1; done
        for p in $left; do kill -KILL "$p" 2>/dev/null; done
        for i in $(seq 50); do [ -n "$(procs_in_root)" ] || break; sleep 0.1; done
    fi
    if [ -d "$R/run/netns" ]; then
        for n in "$R"/run/netns/*; do
            [ -e "$n" ] || continue
            note_fail "network namespace left behind in the root: $(basename "$n")"
            umount "$n" 2>/dev/null; rm -f "$n"
        done
    fi
    for m in $(mounts_under); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null ||
            echo "fresh-test: warning: cannot unmount $m"
    done
    m=$(mounts_under)
    if [ -n "$m" ]; then
        note_fail "mounts left under $R (not removed): $(echo $m)"
    elif [ $KEEP = 1 ]; then
        echo "fresh-test: root kept (unmounted): $R"
    else
        rm -rf --one-file-system "$R" && echo "fresh-test: removed $R (no mount, process or namespace left)" ||
            note_fail "could not remove $R"
    fi
    echo "fresh-test: total time $(secs $((SECONDS - T_START)))"
    [ $FAILED = 0 ] || rc=1
    exit $rc
}
trap cleanup EXIT
trap 'echo "fresh-test: interrupted"; exit 130' INT TERM

# --- 0. host tools -----------------------------------------------------------------------------
step "host tools (debootstrap, git)"
for t in debootstrap:debootstrap git:git chroot:coreutils; do
    command -v "${t%%:*}" >/dev/null && continue
    echo "fresh-test: installing ${t#*:} on the host (apt-get)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${t#*:}" >"$LOGS/host-apt.log" 2>&1 ||
        { apt-get update -q >>"$LOGS/host-apt.log" 2>&1 &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${t#*:}" >>"$LOGS/host-apt.log" 2>&1; } ||
        die "apt-get install ${t#*:} failed: $(tail -n 2 "$LOGS/host-apt.log" | tr '\n' ' ') (log: $LOGS/host-apt.log)"
done
MIRROR=${FRESH_MIRROR:-$(grep -rhoE '^(deb|URIs:) +(\[[^]]*\] +)?https?://[^ ]*/debian/?( |$)' \
    /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null |
    grep -oE 'https?://[^ ]*' | head -n 1)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
REV=$(git rev-parse HEAD) || die "$SRC is not a git checkout (the root gets a git clone of it)"
echo "commit $(git log -1 --format='%h %s' | cut -c1-100)"
[ -z "$(git status --porcelain --untracked-files=no)" ] ||
    echo "fresh-test: warning: uncommitted changes in $SRC are not part of the test (it clones HEAD)"
README_CMDS=$(awk '/^## Quick start/ { q = 1; next } q && /^```/ { if (b) exit; b = 1; next }
    q && b { sub(/[ \t]+#.*/, ""); if ($0 != "") print }' README.md)
[ -n "$README_CMDS" ] || die "no commands found in README.md's \"## Quick start\" code block"
echo "the README's quick start: $(echo "$README_CMDS" | paste -sd ';' | sed 's/;/; /g')"
if [ -n "${FRESH_COMMANDS:-}" ]; then
    README_CMDS=$FRESH_COMMANDS
    echo "fresh-test: FRESH_COMMANDS given: running $(echo "$README_CMDS" | paste -sd ';' | sed 's/;/; /g') instead (not the README's)"
fi

# --- 1. debootstrap ----------------------------------------------------------------------------
step "debootstrap $SUITE from $MIRROR"
mkdir -p "$CACHE" || die "cannot create the package cache $CACHE"
R=$(mktemp -d /var/tmp/vmd-fresh.XXXXXX) || die "mktemp in /var/tmp failed"
chmod 755 "$R"
t0=$SECONDS
debootstrap --cache-dir="$CACHE" "$SUITE" "$R" "$MIRROR" >"$LOGS/debootstrap.log" 2>&1 ||
    die "debootstrap failed: $(grep -E '^(E|W):' "$LOGS/debootstrap.log" | tail -n 3 | tr '\n' ' ') (log: $LOGS/debootstrap.log)"
T_BOOTSTRAP=$((SECONDS - t0))
echo "debootstrap: $(secs $T_BOOTSTRAP), $(du -sm --exclude=proc "$R" | cut -f1) MiB, $(chroot "$R" dpkg-query -W | wc -l) packages"
for c in make cc gcc git; do
    chroot "$R" sh -c "command -v $c" >/dev/null && die "the new root already has $c: not a bare system"
done

# --- 2. site configuration ---------------------------------------------------------------------
step "site configuration (resolv.conf, a local CA)"
[ -s "$R/etc/resolv.conf" ] || cp /etc/resolv.conf "$R/etc/resolv.conf" ||
    die "cannot copy /etc/resolv.conf into the root"
CA_ENV=()
if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
    mkdir -p "$R/usr/local/share/ca-certificates" "$R/etc/ssl/certs" &&
        cp /usr/local/share/ca-certificates/*.crt "$R/usr/local/share/ca-certificates/" &&
        cp /etc/ssl/certs/ca-certificates.crt "$R/etc/ssl/certs/ca-certificates.crt" ||
        die "cannot copy the host's local CA into the root"
    # node's own CA list does not include a local CA: npm (Helm) is told where the bundle is,
    # as the host's environment tells it
    CA_ENV=(NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
    echo "local CA: $(cd /usr/local/share/ca-certificates && echo *.crt) and the host's bundle copied;" \
        "NODE_EXTRA_CA_CERTS set for npm"
else
    echo "the host trusts no local CA: nothing copied"
fi

# --- 3. mounts ---------------------------------------------------------------------------------
step "mounts (the root onto itself, proc, sys, dev, run)"
mount --bind "$R" "$R" && mount --make-private "$R" || die "cannot bind-mount $R onto itself"
mount -t proc proc "$R/proc" || die "cannot mount proc on $R/proc"
mount --rbind /sys "$R/sys" && mount --make-rslave "$R/sys" || die "cannot bind /sys onto $R/sys"
mount --rbind /dev "$R/dev" && mount --make-rslave "$R/dev" || die "cannot bind /dev onto $R/dev"
mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$R/run" || die "cannot mount a tmpfs on $R/run"
mkdir -p "$R/run/lock"
echo "$(mounts_under | wc -l) mounts under $R"

# --- 4. clone ----------------------------------------------------------------------------------
step "clone ($REV)"
git clone -q --no-hardlinks "$SRC" "$R/root/vm-dhcp" >"$LOGS/clone.log" 2>&1 &&
    git -C "$R/root/vm-dhcp" checkout -q "$REV" >>"$LOGS/clone.log" 2>&1 ||
    die "git clone of $SRC failed: $(tail -n 2 "$LOGS/clone.log" | tr '\n' ' ')"
echo "cloned into /root/vm-dhcp"
if [ -d "$SRC/../shared" ]; then
    step "shared/ beside the clone ($(cd "$SRC/../shared" && pwd))"
    cp -a "$SRC/../shared" "$R/root/shared" >>"$LOGS/clone.log" 2>&1 &&
        chmod -R a-w "$R/root/shared" ||
        die "copying $SRC/../shared into the root failed: $(tail -n 2 "$LOGS/clone.log" | tr '\n' ' ')"
    echo "copied to /root/shared (read-only)"
fi

# --- 5. the README's commands ------------------------------------------------------------------
ENVV=(HOME=/root "TERM=${TERM:-dumb}" LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
    "${CA_ENV[@]}")
declare -a NAMES RCS TIMES LOGF
i=0
while IFS= read -r cmd; do
    i=$((i + 1))
    log="$LOGS/cmd$i-$(echo "$cmd" | tr -c 'a-zA-Z0-9\n' '-' | sed 's/-*$//; s/^-*//').log"
    step "README command $i: $cmd (log: $log)"
    t0=$SECONDS
    host_before=$(tests/netns/host-files.sh --print)
    chroot "$R" /usr/bin/env -i "${ENVV[@]}" /bin/bash -c "cd /root/vm-dhcp && $cmd" </dev/null 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    host_after=$(tests/netns/host-files.sh --print)
    if [ "$host_before" != "$host_after" ]; then
        note_fail "the host's resolver or DHCP client state changed while '$cmd' ran (by it, or by" \
            "something else running on the host meanwhile, such as other tests; lines - before, + after):"
        diff <(echo "$host_before") <(echo "$host_after") | grep '^[<>]' | sed 's/^</    -/; s/^>/    +/'
    else
        echo "fresh-test: the host's resolv.conf, hostname and DHCP client state unchanged"
    fi
    NAMES+=("$cmd") RCS+=("$rc") TIMES+=($((SECONDS - t0))) LOGF+=("$log")
    echo "fresh-test: '$cmd' exit $rc in $(secs $((SECONDS - t0)))"
done <<<"$README_CMDS"

# --- 6. results --------------------------------------------------------------------------------
STEP=results
echo
echo "== fresh-test: results (Debian $SUITE from debootstrap in $(secs $T_BOOTSTRAP); commit ${REV:0:12})"
for i in "${!NAMES[@]}"; do
    totals=$(grep -E '^total: [0-9]+ passed' "${LOGF[$i]}" | tail -n 1)
    printf '  %-14s %-4s %8s  %s\n' "${NAMES[$i]}" "$([ "${RCS[$i]}" = 0 ] && echo OK || echo FAIL)" \
        "$(secs "${TIMES[$i]}")" "${totals:-exit ${RCS[$i]}}"
    [ "${RCS[$i]}" = 0 ] || note_fail "'${NAMES[$i]}' exited with ${RCS[$i]} (log: ${LOGF[$i]})"
    if [ -n "$totals" ]; then
        s=$(sed -nE 's/.* ([0-9]+) skipped.*/\1/p' <<<"$totals")
        [ "${s:-0}" = 0 ] || note_fail "'${NAMES[$i]}' skipped $s (on a fresh machine nothing may be skipped):" \
            "$(grep -E '^ *SKIP' "${LOGF[$i]}" | sed 's/  */ /g' | head -n 5 | paste -sd ';')"
    fi
done
# leftovers (processes, namespaces, mounts) are counted by the clean-up
exit 0
