#!/bin/bash
# tests/image/test-image.sh - the OCI image archives of `make image` (scripts/build-image.sh),
# rebuilt first when older than the programs. For each archive, unpacked with tar and jq as an
# OCI layout (index.json -> manifest -> config and layers, every blob's digest checked):
#   - the index names docker.io/vm-dhcp/NAME:VERSION, VERSION being the file VERSION (and the
#     chart's appVersion); one layer; user, entry point, version label in the config;
#   - the root holds the program, the libraries and loader it needs, /etc/passwd and
#     /etc/group with nonroot 65532, and nothing else (no shell);
#   - the agent binary carries exactly the file capabilities cap_net_admin,
#     cap_net_bind_service, cap_net_raw (+ep) in the layer, and no other file has any;
#   - in the unpacked root (chroot) as uid 65532 with no capabilities (no_new_privs): --help of
#     both programs, the agent's --version, a local-mode --dry-run, and the agent's Kubernetes
#     mode starts (one binary, no libcurl or libssl needed); with the capabilities the agent Deployment
#     must grant (bounding set NET_RAW, NET_BIND_SERVICE, NET_ADMIN) it runs, without one of them
#     the kernel refuses the exec (EPERM), which is why the Deployment must add all three;
#   - the pause image: one static /pause, PID 1 of a PID namespace, exits 0 on SIGTERM;
#   - with containerd installed: `ctr -n k8s.io images import` into a private containerd
#     (its own root, state and socket under a temporary directory; stopped by PID) yields
#     exactly the three names, and the imported agent binary keeps its capabilities.
# Root; exits 77 (skipped) without root or buildah. Prints "N passed, N failed, N skipped".
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
VERSION=$(cat VERSION)
REPO=${IMAGE_REPO:-docker.io/vm-dhcp}
OUT=$BUILD/images
AGENT_CAPS=cap_net_admin,cap_net_bind_service,cap_net_raw=ep
P=0 F=0 S=0
TMP=
CTD_PID=

skip() { echo "SKIP: $*"; exit 77; }
pass() { echo "PASS $1"; P=$((P + 1)); }
fail() { echo "FAIL $1: $2"; F=$((F + 1)); }
check() { local n=$1; shift; if "$@"; then pass "$n"; else fail "$n" "$*"; return 1; fi; }
skip_check() { echo "SKIP $1: $2"; S=$((S + 1)); }
finish() {
    echo "$(basename "$0"): $P passed, $F failed, $S skipped"
    [ "$F" -eq 0 ]
    exit $?
}

[ "$(id -u)" = 0 ] || skip "needs root (chroot, setcap'd files, unshare)"
for c in buildah jq getcap setpriv unshare chroot readelf sha256sum; do
    command -v "$c" >/dev/null || skip "$c is not installed (scripts/install-deps installs it)"
done
for f in vm-dhcp-controller vm-dhcp-agent; do
    [ -f "$BUILD/$f" ] || { echo "FAIL: $BUILD/$f not built (make)"; exit 1; }
done

cleanup() {
    if [ -n "$CTD_PID" ]; then
        if [ -n "$TMP" ] && mountpoint -q "$TMP/ctd/mnt" 2>/dev/null; then umount "$TMP/ctd/mnt"; fi
        kill -TERM "$CTD_PID" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$CTD_PID" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$CTD_PID" 2>/dev/null && kill -KILL "$CTD_PID"
        wait "$CTD_PID" 2>/dev/null
    fi
    # containerd's snapshots may be mounted below its root
    [ -n "$TMP" ] && findmnt -rn -o TARGET | grep "^$TMP/" | sort -r | xargs -r umount 2>/dev/null
    [ -n "$TMP" ] && rm -rf "$TMP"
}
TMP=$(mktemp -d /tmp/vmdhcp-image.XXXXXX)
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- the archives: built when missing or older than what they are made of -------------------
NAMES=(vm-dhcp-controller vm-dhcp-agent pause)
stale=0
for n in "${NAMES[@]}"; do
    t=$OUT/$n-$VERSION.tar
    [ -f "$t" ] || { stale=1; continue; }
    for src in "$BUILD/vm-dhcp-controller" "$BUILD/vm-dhcp-agent" VERSION scripts/build-image.sh \
        tests/image/pause.c; do
        [ "$src" -nt "$t" ] && stale=1
    done
done
if [ $stale = 1 ]; then
    check "make image (scripts/build-image.sh)" bash -c "BUILD=$BUILD scripts/build-image.sh >$TMP/build.log 2>&1" ||
        { cat "$TMP/build.log"; finish; }
    cat "$TMP/build.log"
fi

app=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' charts/vm-dhcp/Chart.yaml)
check "VERSION ($VERSION) is the chart's appVersion ($app)" test "$VERSION" = "$app"

# file_caps FILE: getcap's text with the names sorted (libcap lists them in numeric order)
file_caps() {
    local c
    c=$(getcap "$1" | awk '{ $1 = ""; sub(/^ /, ""); print }')
    [ -n "$c" ] || return 0
    printf '%s=%s\n' "$(tr ',' '\n' <<<"${c%%=*}" | sort | paste -sd,)" "${c#*=}"
}
blob() { echo "$2/blobs/${1%%:*}/${1#*:}"; } # DIGEST LAYOUT_DIR -> path

# unpack NAME: $TMP/NAME/oci (layout), $TMP/NAME/root (layers applied), $TMP/NAME/config.json
unpack() {
    local n=$1 d=$TMP/$1 m c l bad=0 f
    mkdir -p "$d/oci" "$d/root"
    tar -xf "$OUT/$n-$VERSION.tar" -C "$d/oci" || return 1
    [ "$(jq -r .imageLayoutVersion "$d/oci/oci-layout")" = 1.0.0 ] || return 1
    for f in "$d"/oci/blobs/sha256/*; do
        [ "$(sha256sum "$f" | cut -d' ' -f1)" = "$(basename "$f")" ] || { echo "bad blob $f"; bad=1; }
    done
    [ $bad = 0 ] || return 1
    m=$(jq -r '.manifests[0].digest' "$d/oci/index.json")
    cp "$(blob "$m" "$d/oci")" "$d/manifest.json" || return 1
    c=$(jq -r .config.digest "$d/manifest.json")
    cp "$(blob "$c" "$d/oci")" "$d/config.json" || return 1
    for l in $(jq -r '.layers[].digest' "$d/manifest.json"); do
        # tar detects the compression; xattrs as root restores security.capability
        tar --xattrs --xattrs-include='security.capability' --numeric-owner -xpf "$(blob "$l" "$d/oci")" \
            -C "$d/root" || return 1
    done
    ! find "$d/root" -name '.wh.*' | grep -q . # whiteouts: not expected from one layer
}

cfg() { jq -r "$2" "$TMP/$1/config.json"; }

for n in "${NAMES[@]}"; do
    check "$n: archive unpacks (OCI layout, blob digests)" unpack "$n" || continue
    check "$n: index names exactly $REPO/$n:$VERSION" test \
        "$(jq -r '[.manifests[].annotations."org.opencontainers.image.ref.name"] | join(" ")' \
            "$TMP/$n/oci/index.json")" = "$REPO/$n:$VERSION"
    check "$n: one layer" test "$(jq '.layers | length' "$TMP/$n/manifest.json")" = 1
    check "$n: linux/$(cfg "$n" .architecture), version label $VERSION" test \
        "$(cfg "$n" '.os + " " + .config.Labels."org.opencontainers.image.version"')" = "linux $VERSION"
    check "$n: no shell" test ! -e "$TMP/$n/root/bin/sh" -a ! -e "$TMP/$n/root/usr/bin/sh"
    mkdir -p "$TMP/$n/root/proc"
done

# files of ROOT other than the allowed ones (programs, shared libraries, loader, passwd, group)
extra_files() {
    (cd "$1" && find . ! -type d ! -type l | sed 's|^\./||' |
        grep -Ev '^(usr/bin/vm-dhcp-(agent|controller)|etc/(passwd|group)|usr/lib(64)?/([^/]+/)?(lib[^/]+\.so[.0-9]*|ld-linux[^/]*\.so\.[0-9]+))$')
}
# run NAME USERSPEC ARGS...: the program in the unpacked root, as that user, no new privileges
run() {
    local n=$1 u=$2
    shift 2
    setpriv --no-new-privs chroot --userspec="$u" "$TMP/$n/root" "$@"
}

# --- the controller ---------------------------------------------------------------------------
n=vm-dhcp-controller
R=$TMP/$n/root
if [ -d "$R/usr" ]; then
    check "$n: user 65532:65532, entry point /usr/bin/$n" test \
        "$(cfg $n '.config.User + " " + (.config.Entrypoint | join(","))')" = "65532:65532 /usr/bin/$n"
    check "$n: /etc/passwd has nonroot 65532:65532" grep -q '^nonroot:x:65532:65532:' "$R/etc/passwd"
    check "$n: /etc/group has nonroot 65532" grep -q '^nonroot:x:65532:' "$R/etc/group"
    out=$(extra_files "$R")
    check "$n: nothing but the program, its libraries, passwd and group${out:+ (extra: $out)}" test -z "$out"
    out=$(getcap -r "$R" 2>/dev/null)
    check "$n: no file capabilities${out:+ ($out)}" test -z "$out"
    out=$(run $n 65532:65532 /usr/bin/$n --help 2>&1); rc=$?
    check "$n --help as 65532 without capabilities: exit 0 (got $rc)" test $rc = 0
    check "$n --help: usage text" grep -q "^usage: vm-dhcp-controller" <<<"$out"
    if grep -q -- '--version' <<<"$out"; then
        check "$n --version prints $VERSION" bash -c \
            "setpriv --no-new-privs chroot --userspec=65532:65532 '$R' /usr/bin/$n --version | grep -qw '$VERSION'"
    fi
fi

# --- the agent --------------------------------------------------------------------------------
n=vm-dhcp-agent
R=$TMP/$n/root
if [ -d "$R/usr" ]; then
    check "$n: user 65532:65532, entry point /usr/bin/$n" test \
        "$(cfg $n '.config.User + " " + (.config.Entrypoint | join(","))')" = "65532:65532 /usr/bin/$n"
    check "$n: /etc/passwd has nonroot 65532:65532" grep -q '^nonroot:x:65532:65532:' "$R/etc/passwd"
    check "$n: /etc/group has nonroot 65532" grep -q '^nonroot:x:65532:' "$R/etc/group"
    out=$(readelf -d "$R/usr/bin/vm-dhcp-agent" | grep -E 'NEEDED.*\[lib(curl|ssl|crypto)\.' || true)
    check "$n: no libcurl, libssl or libcrypto needed${out:+ ($out)}" test -z "$out"
    out=$(extra_files "$R")
    check "$n: nothing but the program, its libraries, passwd and group${out:+ (extra: $out)}" test -z "$out"
    caps=$(file_caps "$R/usr/bin/vm-dhcp-agent")
    check "$n: file capabilities exactly $AGENT_CAPS (got '$caps')" test "$caps" = "$AGENT_CAPS"
    out=$(getcap -r "$R" 2>/dev/null | grep -v "^$R/usr/bin/vm-dhcp-agent ")
    check "$n: no other file has capabilities${out:+ ($out)}" test -z "$out"

    out=$(run $n 65532:65532 /usr/bin/$n --help 2>&1); rc=$?
    check "$n --help as 65532 without capabilities: exit 0 (got $rc)" test $rc = 0
    check "$n --help: usage text" grep -q "^usage: vm-dhcp-agent" <<<"$out"
    out=$(run $n 65532:65532 /usr/bin/$n --version 2>&1); rc=$?
    check "$n --version: 'vm-dhcp-agent $VERSION' (got '$out', exit $rc)" test "$rc:$out" = "0:vm-dhcp-agent $VERSION"
    # local mode: the YAML loader and libyaml in the image
    cp examples/local-mode.yaml "$R/local-mode.yaml"
    out=$(run $n 65532:65532 /usr/bin/$n --config /local-mode.yaml --dry-run 2>&1); rc=$?
    check "$n local mode --dry-run: exit 0 (got $rc)" test $rc = 0
    check "$n local mode --dry-run: the pool's bindings" grep -q '^bindings' <<<"$out"
    # Kubernetes mode as the pod runs it: /proc of a new PID namespace
    out=$(unshare --pid --fork --mount-proc="$R/proc" setpriv --no-new-privs chroot --userspec=65532:65532 \
        "$R" /usr/bin/$n --ippool-ref default/x --kubeconfig /nonexistent --dry-run 2>&1); rc=$?
    ok=0
    [ $rc = 2 ] && grep -q kubeconfig <<<"$out" && ok=1
    check "$n Kubernetes mode: starts, then stops at the missing kubeconfig (exit 2, a configuration error)" \
        test $ok = 1 || echo "      | exit $rc: $out"
    # the pod: uid 65532, capabilities dropped but those the Deployment adds (the bounding set);
    # chroot needs its own three to get there, all gone once the agent is exec()ed as 65532
    pod_caps() { # BOUNDING_SET_ADDITIONS ARGS...
        local b=$1
        shift
        setpriv --bounding-set "-all,+sys_chroot,+setuid,+setgid$b" --inh-caps=-all \
            chroot --userspec=65532:65532 "$R" /usr/bin/$n "$@"
    }
    out=$(pod_caps ,+net_raw,+net_bind_service,+net_admin --version 2>&1); rc=$?
    check "$n runs in a pod granting NET_RAW, NET_BIND_SERVICE, NET_ADMIN (exit $rc)" test $rc = 0
    out=$(pod_caps ,+net_raw,+net_admin --version 2>&1); rc=$?
    ok=0
    [ $rc = 126 ] && grep -q 'Operation not permitted' <<<"$out" && ok=1
    check "$n does not exec without NET_BIND_SERVICE in the pod's capabilities (EPERM; got exit $rc)" \
        test $ok = 1 || echo "      | $out"
fi

# --- the pause image ------------------------------------------------------------------------
n=pause
R=$TMP/$n/root
if [ -d "$R" ]; then
    check "$n: user 65535:65535, entry point /pause" test \
        "$(cfg $n '.config.User + " " + (.config.Entrypoint | join(","))')" = "65535:65535 /pause"
    out=$(cd "$R" && find . ! -type d | sed 's|^\./||' | paste -sd' ')
    check "$n: only /pause (got: $out)" test "$out" = pause
    check "$n: statically linked (no program interpreter)" bash -c "! readelf -lW '$R/pause' | grep -q INTERP"
    unshare --pid --fork chroot --userspec=65535:65535 "$R" /pause &
    upid=$!
    child=
    for _ in $(seq 50); do
        child=$(cat /proc/$upid/task/$upid/children 2>/dev/null | tr -d ' ')
        [ -n "$child" ] && [ "$(readlink /proc/"$child"/exe 2>/dev/null)" = "$R/pause" ] && break
        sleep 0.1
    done
    check "$n: runs as PID 1 of a PID namespace" bash -c "grep -q '^NSpid:.*[[:space:]]1$' /proc/$child/status"
    sleep 0.2
    check "$n: still running" kill -0 "$child"
    kill -TERM "$child" 2>/dev/null
    for _ in $(seq 50); do kill -0 "$upid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$upid" 2>/dev/null && kill -KILL "$upid"
    wait "$upid"; rc=$?
    check "$n: SIGTERM -> exit 0 (got $rc)" test $rc = 0
fi

# --- import into a private containerd ------------------------------------------------------------
if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null; then
    skip_check "containerd import" "containerd is not installed (scripts/install-deps installs it)"
    finish
fi
D=$TMP/ctd
mkdir -p "$D/mnt"
# Its own root, state, sockets; no CRI, no task runtime (nothing runs), /opt untouched; the
# native snapshotter (plain copies) works where overlayfs does not.
cat >"$D/config.toml" <<EOF
version = 2
root = "$D/root"
state = "$D/state"
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.runtime.v1.linux", "io.containerd.runtime.v2.task",
  "io.containerd.monitor.v1.cgroups", "io.containerd.grpc.v1.tasks",
  "io.containerd.service.v1.tasks-service", "io.containerd.internal.v1.restart",
  "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]
[grpc]
  address = "$D/ctd.sock"
[ttrpc]
  address = "$D/ctd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""
EOF
containerd --config "$D/config.toml" --root "$D/root" --state "$D/state" --address "$D/ctd.sock" \
    >"$D/containerd.log" 2>&1 &
CTD_PID=$!
CTR=(ctr --address "$D/ctd.sock" -n k8s.io)
up=0
for _ in $(seq 100); do
    "${CTR[@]}" version >/dev/null 2>&1 && { up=1; break; }
    kill -0 "$CTD_PID" 2>/dev/null || break
    sleep 0.1
done
check "private containerd started (pid $CTD_PID, $D/ctd.sock)" test $up = 1 ||
    { tail -n 20 "$D/containerd.log"; finish; }
for n in "${NAMES[@]}"; do
    check "ctr -n k8s.io images import $OUT/$n-$VERSION.tar" bash -c \
        "$(printf '%q ' "${CTR[@]}") images import --snapshotter native $OUT/$n-$VERSION.tar >>$D/import.log 2>&1"
done
names=$("${CTR[@]}" images ls -q | sort | paste -sd' ')
want=$(for n in "${NAMES[@]}"; do echo "$REPO/$n:$VERSION"; done | sort | paste -sd' ')
check "imported names exactly: $want (got: $names)" test "$names" = "$want"
if "${CTR[@]}" images mount --snapshotter native "$REPO/vm-dhcp-agent:$VERSION" "$D/mnt" >/dev/null 2>&1; then
    caps=$(file_caps "$D/mnt/usr/bin/vm-dhcp-agent")
    check "imported agent binary: file capabilities $AGENT_CAPS (got '$caps')" test "$caps" = "$AGENT_CAPS"
    "${CTR[@]}" images unmount --rm "$D/mnt" >/dev/null 2>&1
else
    fail "ctr images mount the agent" "$(tail -n 3 "$D/containerd.log")"
fi
finish
