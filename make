#!/bin/sh
# ./make [TARGET...] - make, on a machine that may not have it yet: a bare Debian 12 (a cloud
# image, a netinst or debootstrap base system) has no make, so the README's quick start is
# `./make demo` and `./make test`. Installs make with apt-get when it is missing (root), then
# runs `make TARGET...`, which installs the rest for its purpose (scripts/install-deps). Where
# make is installed, `./make X` is `make X`.
set -e
cd "$(dirname "$0")"
self=$(pwd)/make
# make on PATH, never this script (PATH may hold ".")
find_make() {
    IFS=:
    for d in $PATH; do
        [ -n "$d" ] || d=.
        if [ -x "$d/make" ] && [ ! -d "$d/make" ] && ! [ "$d/make" -ef "$self" ]; then
            echo "$d/make"
            return 0
        fi
    done
    return 1
}
if ! mk=$(find_make); then
    if [ "$(id -u)" != 0 ]; then
        echo "./make: make is not installed; run as root (or: sudo $0 $*) to install it" >&2
        exit 1
    fi
    echo "./make: make is not installed: apt-get install make"
    export DEBIAN_FRONTEND=noninteractive
    # the package lists of a fresh system may be missing or old: update once when the first try fails
    if ! apt-get install -y -q --no-install-recommends make >/dev/null 2>&1; then
        apt-get update -q || { echo "./make: apt-get update failed (above): is the Debian mirror in" \
            "/etc/apt/sources.list* reachable?" >&2; exit 1; }
        apt-get install -y -q --no-install-recommends make ||
            { echo "./make: apt-get install make failed (above)" >&2; exit 1; }
    fi
    mk=$(find_make) || { echo "./make: make was installed but is not on PATH ($PATH)" >&2; exit 1; }
fi
exec "$mk" "$@"
