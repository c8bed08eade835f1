#!/bin/bash
# scripts/build-image.sh - `make image`: OCI image archives of what `make` built, offline, with
# Debian's buildah (vfs storage of its own under build/, so no fuse, overlay or daemon):
#
#   build/images/vm-dhcp-controller-VERSION.tar  docker.io/vm-dhcp/vm-dhcp-controller:VERSION
#   build/images/vm-dhcp-agent-VERSION.tar       docker.io/vm-dhcp/vm-dhcp-agent:VERSION
#   build/images/pause-VERSION.tar               docker.io/vm-dhcp/pause:VERSION (test only:
#                                                the sandbox image of tests/cluster/)
#
# VERSION is the file VERSION (also compiled into the programs). Each program image holds the
# stripped binary, the shared libraries `ldd` lists with the dynamic loader, and /etc/passwd and
# /etc/group with nonroot (65532); no shell, no CA bundle (the in-cluster CA comes from the service
# account). The agent binary carries the file capabilities cap_net_raw, cap_net_bind_service
# and cap_net_admin (+ep). Entry point: the program; user 65532:65532. Timestamps are
# SOURCE_DATE_EPOCH (default: the last commit's time), so equal inputs give equal archives.
# Needs root, buildah, setcap (scripts/install-deps). tests/image/test-image.sh checks the result.
#   IMAGE_REPO   name prefix (default docker.io/vm-dhcp)
set -euo pipefail
umask 022
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
VERSION=$(cat VERSION)
REPO=${IMAGE_REPO:-docker.io/vm-dhcp}
OUT=$BUILD/images
STORE=$(realpath -m "$BUILD/buildah")
CC=${CC:-cc}
EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || stat -c %Y VERSION)}

die() { echo "build-image: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (buildah with its own storage, setcap); try: sudo make image"
# buildah keeps a blob-info cache in /var/lib/containers/cache whatever --root says: run in a
# private mount namespace with a throwaway /var/lib when one can be made (not in every container)
if [ -z "${VMDHCP_IMAGE_NS:-}" ] && unshare --mount --propagation private true 2>/dev/null; then
    VMDHCP_IMAGE_NS=1 exec unshare --mount --propagation private scripts/build-image.sh "$@"
fi
if [ "${VMDHCP_IMAGE_NS:-}" = 1 ]; then
    mount -t tmpfs -o mode=0755,size=16m vmdhcp-image /var/lib || true
fi
for c in buildah setcap getcap ldd strip; do
    command -v "$c" >/dev/null || die "$c is not installed (run scripts/install-deps)"
done
for f in vm-dhcp-controller vm-dhcp-agent; do
    [ -f "$BUILD/$f" ] || die "$BUILD/$f is missing (make programs)"
done
[[ $VERSION =~ ^[0-9A-Za-z][0-9A-Za-z._-]*$ ]] || die "VERSION '$VERSION' is not an image tag"

mkdir -p "$OUT" "$STORE/tmp"
exec 9>"$STORE/lock"
flock 9 # one build at a time on this storage
export TMPDIR=$STORE/tmp
# this storage, policy and network configuration only (never the host's storage.conf, image
# store or /etc/containers/networks; nothing here runs a container)
printf '[storage]\ndriver = "vfs"\n' >"$STORE/storage.conf"
printf '{"default":[{"type":"insecureAcceptAnything"}]}\n' >"$STORE/policy.json"
printf '[network]\nnetwork_backend = "cni"\nnetwork_config_dir = "%s"\n[engine]\ntmp_dir = "%s"\n' \
    "$STORE/cni" "$STORE/tmp/libpod" >"$STORE/containers.conf"
export CONTAINERS_STORAGE_CONF=$STORE/storage.conf CONTAINERS_CONF=$STORE/containers.conf
B=(buildah --root "$STORE/root" --runroot "$STORE/runroot" --storage-driver vfs)

WORK=
cleanup() {
    [ -n "$WORK" ] && "${B[@]}" rm "$WORK" >/dev/null 2>&1
    rm -rf "$STORE/tmp"
}
trap cleanup EXIT

# put_libs ROOT FILE...: the libraries ldd lists for each FILE and the dynamic loader, as
# regular files named by their soname in the directory the host keeps them in (resolved), with
# the host's top-level symlinks (/lib -> usr/lib, /lib64 -> usr/lib64 on merged-/usr Debian)
# so the loader's PT_INTERP path resolves. The loader needs no ld.so.cache: these are its
# default directories.
put_libs() {
    local root=$1 f lib dir top
    shift
    for f in "$@"; do
        ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
    done | sort -u | while read -r lib; do
        [ -e "$lib" ] || die "ldd listed $lib, which does not exist"
        top=/$(cut -d/ -f2 <<<"$lib")
        if [ -L "$top" ] && [ ! -e "$root$top" ]; then ln -s "$(readlink "$top")" "$root$top"; fi
        dir=$(realpath "$(dirname "$lib")")
        mkdir -p "$root$dir"
        install -m 0644 "$(realpath "$lib")" "$root$dir/$(basename "$lib")"
        # the loader is executable
        case $(basename "$lib") in ld-linux*|ld64*|ld.so*) chmod 0755 "$root$dir/$(basename "$lib")" ;; esac
    done
}

put_users() {
    mkdir -p "$1/etc"
    printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/nonexistent:/sbin/nologin\n' \
        >"$1/etc/passwd"
    printf 'root:x:0:\nnonroot:x:65532:\n' >"$1/etc/group"
    chmod 0644 "$1/etc/passwd" "$1/etc/group"
}

# image NAME DESCRIPTION USER ENTRYPOINT POPULATE: one image from scratch into $OUT/NAME-VERSION.tar
image() {
    local name=$1 desc=$2 user=$3 entry=$4 populate=$5 mnt tar ref digest
    tar=$OUT/$name-$VERSION.tar
    ref=$REPO/$name:$VERSION
    WORK=$("${B[@]}" from --name "vmdhcp-image-$name-$$" scratch)
    mnt=$("${B[@]}" mount "$WORK")
    chmod 0755 "$mnt"
    "$populate" "$mnt"
    "${B[@]}" umount "$WORK" >/dev/null
    "${B[@]}" config --user "$user" --entrypoint "[\"$entry\"]" --workingdir / \
        --created-by "scripts/build-image.sh" \
        --os linux --arch "$(go_arch)" \
        --label "org.opencontainers.image.title=$name" \
        --label "org.opencontainers.image.description=$desc" \
        --label "org.opencontainers.image.version=$VERSION" \
        --label "org.opencontainers.image.licenses=Apache-2.0" \
        --label "org.opencontainers.image.revision=$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
        "$WORK"
    rm -f "$tar"
    "${B[@]}" commit --quiet --rm --timestamp "$EPOCH" --identity-label=false \
        --disable-compression=false --signature-policy "$STORE/policy.json" \
        "$WORK" "oci-archive:$tar:$ref" >/dev/null
    WORK=
    # the archive's own entries carry the time of writing: repack them at EPOCH too
    rm -rf "$STORE/tmp/oci" && mkdir "$STORE/tmp/oci"
    tar -xf "$tar" -C "$STORE/tmp/oci"
    tar -cf "$tar" -C "$STORE/tmp/oci" --sort=name --mtime="@$EPOCH" --owner=0 --group=0 \
        --numeric-owner --mode=u+rw,go+r,go-w --format=gnu oci-layout index.json blobs
    digest=$(grep -o 'sha256:[0-9a-f]\{64\}' "$STORE/tmp/oci/index.json" | head -n 1)
    rm -rf "$STORE/tmp/oci"
    printf '  IMAGE   %s\n          %s, %s KiB (root file system %s KiB), manifest %s\n' "$ref" "$tar" \
        $(( $(stat -c %s "$tar") / 1024 )) "$ROOTFS_KIB" "$digest"
}

go_arch() {
    case $(uname -m) in x86_64) echo amd64 ;; aarch64) echo arm64 ;; *) uname -m ;; esac
}

# the program's copy, stripped (build/ keeps the debug information)
put_prog() { # ROOT SRC MODE
    install -m "$3" "$BUILD/$2" "$1/usr/bin/$2"
    strip --strip-unneeded "$1/usr/bin/$2"
}

# file_caps FILE: its file capabilities as getcap prints them, the names sorted
# (libcap 2.66 lists them in numeric order, other versions alphabetically)
file_caps() {
    local c
    c=$(getcap "$1" | awk '{ $1 = ""; sub(/^ /, ""); print }')
    [ -n "$c" ] || return 0
    printf '%s=%s\n' "$(tr ',' '\n' <<<"${c%%=*}" | sort | paste -sd,)" "${c#*=}"
}

pop_controller() {
    mkdir -p "$1/usr/bin"
    put_prog "$1" vm-dhcp-controller 0755
    put_libs "$1" "$BUILD/vm-dhcp-controller"
    put_users "$1"
    ROOTFS_KIB=$(du -sk "$1" | cut -f1)
}

pop_agent() {
    mkdir -p "$1/usr/bin"
    put_prog "$1" vm-dhcp-agent 0755
    put_libs "$1" "$BUILD/vm-dhcp-agent"
    put_users "$1"
    # after strip (which drops the xattr); the pod adds these three to its capability set
    setcap cap_net_raw,cap_net_bind_service,cap_net_admin+ep "$1/usr/bin/vm-dhcp-agent"
    [ "$(file_caps "$1/usr/bin/vm-dhcp-agent")" = cap_net_admin,cap_net_bind_service,cap_net_raw=ep ] ||
        die "setcap on the agent did not hold: $(getcap "$1/usr/bin/vm-dhcp-agent")"
    ROOTFS_KIB=$(du -sk "$1" | cut -f1)
}

pop_pause() {
    install -m 0755 "$OUT/pause" "$1/pause"
    ROOTFS_KIB=$(du -sk "$1" | cut -f1)
}

echo "  CC      $OUT/pause (static)"
$CC -std=c11 -D_POSIX_C_SOURCE=200809L -Os -Wall -Wextra -Werror -static -s \
    -o "$OUT/pause" tests/image/pause.c

image vm-dhcp-controller "vm-dhcp-controller: IPAM for IPPools, VM network config bindings, one DHCP agent per pool" \
    65532:65532 /usr/bin/vm-dhcp-controller pop_controller
image vm-dhcp-agent "vm-dhcp-agent: DHCPv4 server of one IPPool on a raw socket" \
    65532:65532 /usr/bin/vm-dhcp-agent pop_agent
image pause "vm-dhcp test-only pod sandbox (pause) image" 65535:65535 /pause pop_pause
