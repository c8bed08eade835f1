#!/bin/bash
# scripts/build-udhcpc6.sh - build (once) busybox's DHCPv6 client udhcpc6 from Debian's source
# package `busybox` and print the path of the binary.
#
# Debian's busybox and busybox-static are built without the udhcpc6 applet (`busybox --list`
# has only udhcpc and udhcpd), so tests/netns/test-agent6-udhcpc6.sh needs its own build: the
# same source (apt-get source busybox, Debian's patches applied), configured from
# `make allnoconfig` with only the udhcpc6 applet, IPv6 and its DNS/search (RFC 3646) support
# switched on. The binary is cached outside the clone, under $VMDHCP_UDHCPC6_CACHE (default
# /var/cache/vm-dhcp/udhcpc6), in a folder named after the source version and the
# configuration, so a second run returns at once. A fresh build takes about 80 s of CPU
# (apt-get source 5 s, allnoconfig/oldconfig and the compile the rest): 1 to 4 minutes on 2 cores.
#
# Needs root (apt-get). Exit status: 0 with the binary's path on stdout, 1 on failure.
set -euo pipefail
CACHE=${VMDHCP_UDHCPC6_CACHE:-/var/cache/vm-dhcp/udhcpc6}
# the configuration, on top of allnoconfig (part of the cache key)
CONFIG="CONFIG_FEATURE_IPV6=y CONFIG_UDHCPC6=y CONFIG_FEATURE_UDHCPC6_RFC3646=y
CONFIG_FEATURE_UDHCPC6_RFC4704=y CONFIG_UDHCP_DEBUG=2 CONFIG_LONG_OPTS=y CONFIG_BUSYBOX=y"

log() { echo "build-udhcpc6: $*" >&2; }
die() { log "$*"; exit 1; }
trap 'rc=$?; log "failed (exit $rc) at line $LINENO: $BASH_COMMAND"' ERR

[ "$(id -u)" = 0 ] || die "needs root (apt-get)"
export DEBIAN_FRONTEND=noninteractive

# A deb-src line for bookworm, as tests/cluster/k8s-build.sh adds it (the same file).
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
src_version() {
    { apt-cache showsrc busybox 2>/dev/null || true; } | sed -n 's/^Version: //p' | sort -V | tail -n 1
}
version=$(src_version)
if [ -z "$version" ]; then
    log "apt knows no source package 'busybox' yet: apt-get update"
    apt-get update -q >&2 ||
        die "apt-get update failed (above): the deb-src source (grep -r deb-src /etc/apt/sources.list*) needs the Debian mirror"
    version=$(src_version)
fi
[ -n "$version" ] ||
    die "apt-cache knows no source package 'busybox' even after apt-get update: is there a deb-src source for bookworm main?"

mkdir -p "$CACHE"
exec 9>"$CACHE/.build.lock"
if ! flock -n 9; then
    log "another build-udhcpc6.sh is building into $CACHE: waiting for it"
    flock 9
fi
# make cannot work in a path with a colon (the epoch "1:" of the version)
key="$(printf '%s' "$version" | tr -c 'A-Za-z0-9.+~\n-' '_')-$(printf '%s' "$CONFIG" | sha256sum | cut -c1-12)"
out="$CACHE/$key"
if [ -x "$out/udhcpc6" ]; then
    log "cached: $out/udhcpc6 (busybox source $version)"
    echo "$out/udhcpc6"
    exit 0
fi

log "building udhcpc6 from Debian's busybox $version source"
need=()
for p in make gcc libc6-dev dpkg-dev bzip2 xz-utils; do
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
chmod 755 "$work"
chown _apt "$work" 2>/dev/null || true # else apt warns that it downloads unsandboxed
start=$(date +%s)
(cd "$work" && apt-get source -q "busybox=$version") >"$out/build.log" 2>&1 ||
    { log "apt-get source failed:"; tail -n 20 "$out/build.log" >&2; exit 1; }
src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'busybox-*' | head -n 1)
[ -n "$src" ] || die "no source tree in $work"
configure() {
    make -C "$src" allnoconfig || return 1
    for c in $CONFIG; do
        sed -i "/^# ${c%%=*} is not set\$/d; /^${c%%=*}=/d" "$src/.config" || return 1
        echo "$c" >>"$src/.config"
    done
    # answers the questions the new symbols raise with their defaults
    { yes '' || true; } | make -C "$src" oldconfig
}
configure >>"$out/build.log" 2>&1 || { log "configuration failed (log: $out/build.log)"; exit 1; }
for c in CONFIG_UDHCPC6 CONFIG_FEATURE_UDHCPC6_RFC3646; do
    grep -q "^$c=y\$" "$src/.config" || die "$c is not set after oldconfig (log: $out/build.log)"
done
if ! make -C "$src" -j2 busybox >>"$out/build.log" 2>&1; then
    log "build failed (log: $out/build.log):"
    tail -n 30 "$out/build.log" >&2
    exit 1
fi
"$src/busybox" --list | grep -qx udhcpc6 || die "the build has no udhcpc6 applet"
# a busybox binary run under the name udhcpc6 is that applet
install -m 0755 "$src/busybox" "$out/udhcpc6.new"
cp "$src/.config" "$out/busybox.config"
mv "$out/udhcpc6.new" "$out/udhcpc6"
rm -rf "$work"
log "built in $(($(date +%s) - start)) s: $out/udhcpc6"
echo "$out/udhcpc6"
