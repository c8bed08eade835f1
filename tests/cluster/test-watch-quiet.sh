#!/bin/bash
# tests/cluster/test-watch-quiet.sh - quiet watches on real API servers: kube-apiserver 1.25
# (../shared/k8s) and 1.20 (the binary tests/cluster/k8s-build.sh caches under
# /var/cache/vm-dhcp/k8s, started the same way by ../shared/k8s/apiserver-up against its own
# etcd). On each, build/tests/watch-quiet (libcurl) and watch-quiet-mbedtls (the agent's
# transport) run an informer on Nodes, a kind that never changes there (no event, no bookmark),
# with watches of WATCH_TIMEOUT s (default 3): the server must end ROUNDS (default 3) of them
# cleanly, the informer watch again from the same resourceVersion (one list, no stall, no
# failure, no warning in its log), and a Node created afterwards must arrive, then its deletion.
# Ports: 1.25 on PORT/ETCD_PORT (default 26492, 22492), 1.20 on PORT_120/ETCD_PORT_120 (default
# 26494, 22494). K120: the 1.20 kube-apiserver binary. The 1.25 binary is unpacked once into
# $BUILD/k8s. About 30 s. Stops what it started by PID.
# Exit 77 (skipped, with the reason) when neither API server can be had, or etcd, openssl, curl
# or xz are missing; a missing 1.20 binary alone is reported and the 1.25 run decides.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
K8S_DIR=${VMD_K8S_DIR:-$ROOT/../shared/k8s}
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
TIMEOUT=${WATCH_TIMEOUT:-3} ROUNDS=${ROUNDS:-3}
PORT_125=${PORT:-26492} ETCD_125=${ETCD_PORT:-22492}
PORT_120=${PORT_120:-26494} ETCD_120=${ETCD_PORT_120:-22494}
K120=${K120:-$(ls /var/cache/vm-dhcp/k8s/*/bin/kube-apiserver 2>/dev/null | head -n 1)}
TMP=$(mktemp -d /tmp/vmd-watch-quiet.XXXXXX)
STARTED=()

skip() { echo "SKIP: $*"; exit 77; }
cleanup() {
    trap '' INT TERM
    for d in "${STARTED[@]}"; do "$K8S_DIR/apiserver-down" "$d" >/dev/null 2>&1; done
    [ "${KEEP_LOGS:-0}" = 1 ] && { echo "logs kept in $TMP"; return; }
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -x "$K8S_DIR/apiserver-up" ] || skip "$K8S_DIR (kube-apiserver 1.25) is absent"
for c in etcd openssl curl xz; do command -v $c >/dev/null || skip "$c is not installed"; done
for b in watch-quiet watch-quiet-mbedtls; do
    [ -x "$BUILD/tests/$b" ] || skip "$BUILD/tests/$b is not built (make $BUILD/tests/$b)"
done

# The 1.25 binary unpacked once into $BUILD/k8s (checked as apiserver-up checks it), not on
# every run: apiserver-up runs DIR/kube-apiserver when it is there.
mkdir -p "$TMP/k125"
XZ=$K8S_DIR/kube-apiserver-v1.25.0.xz K125=$BUILD/k8s/kube-apiserver-v1.25.0
if [ -f "$XZ" ] && [ -f "$K8S_DIR/kube-apiserver-v1.25.0.sha256" ]; then
    if [ ! -x "$K125" ]; then
        mkdir -p "$BUILD/k8s"
        xz -dc "$XZ" >"$K125.tmp" && chmod +x "$K125.tmp" &&
            [ "$(sha256sum "$K125.tmp" | cut -d' ' -f1)" = "$(cat "$K8S_DIR/kube-apiserver-v1.25.0.sha256")" ] &&
            mv "$K125.tmp" "$K125" || rm -f "$K125.tmp"
    fi
    [ -x "$K125" ] && ln -s "$K125" "$TMP/k125/kube-apiserver"
fi

# Both API servers start at once (1.20 takes about 15 s here).
PORT=$PORT_125 ETCD_PORT=$ETCD_125 "$K8S_DIR/apiserver-up" "$TMP/k125" >"$TMP/up-125.log" 2>&1 &
up125=$!
STARTED+=("$TMP/k125")
up120=""
if [ -n "$K120" ] && [ -x "$K120" ]; then
    mkdir -p "$TMP/k120"
    ln -s "$K120" "$TMP/k120/kube-apiserver" # apiserver-up runs DIR/kube-apiserver when present
    PORT=$PORT_120 ETCD_PORT=$ETCD_120 "$K8S_DIR/apiserver-up" "$TMP/k120" >"$TMP/up-120.log" 2>&1 &
    up120=$!
    STARTED+=("$TMP/k120")
else
    echo "NOTE: kube-apiserver 1.20 not run: no cached binary (tests/cluster/k8s-build.sh builds it; K120=path)"
fi

fail=0
PIDS=()
# start_on NAME DIR: both transports at once against the API server in DIR, in the background
start_on() {
    local name=$1 dir=$2 ver
    ver=$(curl -sf --cacert "$dir/pki/ca.crt" --cert "$dir/pki/admin.crt" --key "$dir/pki/admin.key" \
        "$(sed -n 's/.*server: "\(https[^"]*\)".*/\1/p' "$dir/kubeconfig")/version" |
        sed -n 's/.*"gitVersion": *"\([^"]*\)".*/\1/p')
    echo "== kube-apiserver $name ($ver, up after ${SECONDS} s): Node informer, watches of $TIMEOUT s, $ROUNDS ended by the server"
    "$BUILD/tests/watch-quiet" "$dir/kubeconfig" "$TIMEOUT" "$ROUNDS" >"$TMP/$name-curl.log" 2>&1 &
    PIDS+=("$name:curl:$!")
    "$BUILD/tests/watch-quiet-mbedtls" "$dir/kubeconfig" "$TIMEOUT" "$ROUNDS" >"$TMP/$name-mbedtls.log" 2>&1 &
    PIDS+=("$name:mbedtls:$!")
}

# Each run starts as soon as its API server is up (1.25 first: it is up sooner).
if wait "$up125"; then
    start_on 1.25 "$TMP/k125"
else
    echo "FAIL: kube-apiserver 1.25 did not start:"; tail -n 20 "$TMP/up-125.log"; fail=1
fi
if [ -n "$up120" ]; then
    if wait "$up120"; then
        start_on 1.20 "$TMP/k120"
    else
        echo "FAIL: kube-apiserver 1.20 ($K120) did not start:"; tail -n 20 "$TMP/up-120.log"; fail=1
    fi
fi
for p in "${PIDS[@]}"; do
    name=${p%%:*} rest=${p#*:}; transport=${rest%%:*} pid=${rest#*:}
    log=$TMP/$name-$transport.log
    wait "$pid"; rc=$?
    rewatched=$(grep -c "watch ended by the server after" "$log")
    warns=$(grep -cE " (warn|error) " "$log")
    if [ "$rc" -ne 0 ] || [ "$warns" -ne 0 ] || [ "$rewatched" -lt "$ROUNDS" ]; then
        echo "FAIL: $name, $transport transport (exit $rc, $warns warnings, $rewatched clean re-watches):"
        tail -n 25 "$log"
        fail=1
    else
        echo "ok: $name, $transport transport: $(grep -F 'PASS' "$log" | sed 's/^watch-quiet: //')"
        grep -m 1 "watch ended by the server" "$log" | sed 's/^[^ ]* debug watch-quiet: /    e.g. /'
    fi
done
[ "$fail" -eq 0 ] && echo "PASS: quiet watches end cleanly and resume without a list (${SECONDS} s)"
exit "$fail"
