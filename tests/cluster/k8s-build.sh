#!/bin/bash
# tests/cluster/k8s-build.sh - build (once) the Kubernetes control plane and kubelet from
# Debian's source package `kubernetes` (bookworm: 1.20.x) with Debian's golang-go, and print
# the directory that holds the binaries.
#
# The binaries are cached outside the clone, under $VMDHCP_K8S_CACHE (default
# /var/cache/vm-dhcp/k8s), in a folder named after the source version and the build flags, so
# a second run returns at once. Built: kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet (CGO off, Go build tag `providerless`: no legacy cloud providers).
# One fix is applied to the source: its vendored github.com/modern-go/reflect2 1.0.1 corrupts
# memory with Go >= 1.18 (the API server dies with SIGSEGV in json-iterator's map encoder), so
# it is replaced by Debian's golang-github-modern-go-reflect2-dev (1.0.2, which supports them).
# On a fresh machine this takes about 20 minutes on 2 cores; the log is in the cache folder.
#
# Needs root (apt-get). Exit status: 0 with the folder on stdout, 1 on failure.
set -euo pipefail
CACHE=${VMDHCP_K8S_CACHE:-/var/cache/vm-dhcp/k8s}
WHAT="cmd/kube-apiserver cmd/kube-controller-manager cmd/kube-scheduler cmd/kubelet"
GOTAGS=providerless
PATCHES="reflect2-1.0.2" # part of the cache key
BINS="kube-apiserver kube-controller-manager kube-scheduler kubelet"

log() { echo "k8s-build: $*" >&2; }
die() { log "$*"; exit 1; }
# any other command that fails says where (set -e alone would exit without a word)
trap 'rc=$?; log "failed (exit $rc) at line $LINENO: $BASH_COMMAND"' ERR

[ "$(id -u)" = 0 ] || die "needs root (apt-get)"
export DEBIAN_FRONTEND=noninteractive

# A deb-src line for bookworm (the machine has only binary sources). Its package lists come
# from the `apt-get update` below, run whenever apt-cache does not know the source package yet
# (also when an earlier run added the line but its update failed).
DEB_SRC=/etc/apt/sources.list.d/vm-dhcp-deb-src.sources
if ! grep -rqs '^\(deb-src\|Types: *deb-src\)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    log "adding a deb-src source for bookworm ($DEB_SRC)"
    cat >"$DEB_SRC" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
fi
# the newest source version of kubernetes apt knows, or nothing (apt-cache exits 100 for a
# package it does not know: not an error here)
src_version() {
    { apt-cache showsrc kubernetes 2>/dev/null || true; } | sed -n 's/^Version: //p' | sort -V | tail -n 1
}
version=$(src_version)
if [ -z "$version" ]; then
    log "apt knows no source package 'kubernetes' yet: apt-get update"
    apt-get update -q >&2 ||
        die "apt-get update failed (above): the deb-src source (grep -r deb-src /etc/apt/sources.list*) needs the Debian mirror"
    version=$(src_version)
fi
[ -n "$version" ] ||
    die "apt-cache knows no source package 'kubernetes' even after apt-get update: is there a deb-src source for bookworm main? (grep -r deb-src /etc/apt/sources.list*)"
# One build at a time: a second run waits for the first and then finds its binaries (without
# the lock it would remove the first one's work folder and fail both).
mkdir -p "$CACHE"
exec 9>"$CACHE/.build.lock"
if ! flock -n 9; then
    log "another tests/cluster/k8s-build.sh is building into $CACHE: waiting for it"
    flock 9
fi
key="$version-$(printf '%s|%s|%s' "$WHAT" "$GOTAGS" "$PATCHES" | sha256sum | cut -c1-12)"
out="$CACHE/$key"
have=1
for b in $BINS; do [ -x "$out/bin/$b" ] || have=0; done
if [ $have = 1 ]; then
    log "cached: $out/bin (Kubernetes source $version)"
    echo "$out/bin"
    exit 0
fi

log "building Kubernetes $version from Debian's source package (about 20 minutes on 2 cores)"
need=()
for p in golang-go dpkg-dev rsync jq golang-github-modern-go-reflect2-dev; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
    apt-get install -y -q --no-install-recommends "${need[@]}" >&2 ||
        die "apt-get install ${need[*]} (the build's tools) failed (above)"
fi
mkdir -p "$out"
work="$CACHE/src-$key"
rm -rf "$work"
mkdir -p "$work"
start=$(date +%s)
(cd "$work" && apt-get source -q "kubernetes=$version") >"$out/build.log" 2>&1 ||
    { log "apt-get source failed:"; tail -n 20 "$out/build.log" >&2; exit 1; }
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)
[ -n "$src" ] || { log "no source tree in $work"; exit 1; }
r2=/usr/share/gocode/src/github.com/modern-go/reflect2
[ -f "$r2/go_above_118.go" ] || { log "$r2 is not reflect2 >= 1.0.2"; exit 1; }
rm -f "$src"/vendor/github.com/modern-go/reflect2/*.go "$src"/vendor/github.com/modern-go/reflect2/*.s
cp "$r2"/*.go "$r2"/*.s "$src/vendor/github.com/modern-go/reflect2/"
mkdir -p "$src/.go/src/k8s.io" "$work/home"
ln -sfn ../../.. "$src/.go/src/k8s.io/kubernetes"
# The upstream build (hack/): generated files first, then the binaries.
if ! (cd "$src" && env GOPATH="$src/.go" HOME="$work/home" CGO_ENABLED=0 GOCACHE="$work/gocache" \
    make WHAT="$WHAT" GOFLAGS="-tags=$GOTAGS") >>"$out/build.log" 2>&1; then
    log "build failed (log: $out/build.log):"
    tail -n 30 "$out/build.log" >&2
    exit 1
fi
mkdir -p "$out/bin.new"
for b in $BINS; do install -m 0755 "$src/_output/bin/$b" "$out/bin.new/$b"; done
rm -rf "$out/bin"
mv "$out/bin.new" "$out/bin"
rm -rf "$work"
log "built in $(( $(date +%s) - start )) s: $out/bin"
echo "$out/bin"
