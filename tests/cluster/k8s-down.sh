#!/bin/bash
# tests/cluster/k8s-down.sh - stop the test cluster tests/cluster/k8s-up.sh started: the
# kubelet first (so nothing is restarted), then every pod's containers and shims (through
# containerd, by PID), containerd, the control plane and etcd, each by the PID k8s-up.sh
# recorded; unmount what they mounted, remove the pods' network namespaces, the interfaces
# and the state. Logs stay in /var/lib/vm-dhcp-k8s/log. Safe to run twice.
set -u
STATE=/var/lib/vm-dhcp-k8s
RUN=/run/vm-dhcp-k8s
CTD_SOCK=$RUN/containerd.sock
log() { echo "k8s-down: $*" >&2; }
[ "$(id -u)" = 0 ] || { echo "k8s-down: needs root" >&2; exit 77; }

# stop_pid PID [NAME]: TERM, up to 10 s, then KILL
stop_pid() {
    local pid=$1 name=${2:-$1}
    kill -0 "$pid" 2>/dev/null || return 0
    kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || { log "stopped $name ($pid)"; return 0; }; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
    log "killed $name ($pid)"
}
stop() { # stop NAME: the process whose PID k8s-up.sh wrote
    [ -f "$RUN/$1.pid" ] || return 0
    stop_pid "$(cat "$RUN/$1.pid")" "$1"
    rm -f "$RUN/$1.pid"
}

stop kubelet
netns=()
if [ -S "$CTD_SOCK" ]; then
    ctr="ctr --address $CTD_SOCK -n k8s.io"
    for id in $($ctr containers ls -q 2>/dev/null); do
        # a pod sandbox's network namespace, to remove once its processes are gone
        ns=$($ctr containers info "$id" 2>/dev/null |
            jq -r '.Spec.linux.namespaces[]? | select(.type == "network") | .path // empty' 2>/dev/null)
        case $ns in /var/run/netns/cni-*|/run/netns/cni-*) netns+=("$ns") ;; esac
        $ctr tasks kill -s SIGKILL "$id" >/dev/null 2>&1
    done
    for id in $($ctr containers ls -q 2>/dev/null); do
        for _ in $(seq 50); do
            $ctr tasks delete "$id" >/dev/null 2>&1 && break
            $ctr tasks ls -q 2>/dev/null | grep -qx "$id" || break
            sleep 0.1
        done
        $ctr containers delete "$id" >/dev/null 2>&1
    done
fi
# shims that outlived their tasks
for f in "$RUN"/containerd/io.containerd.runtime.v2.task/*/*/shim.pid; do
    [ -f "$f" ] && stop_pid "$(cat "$f")" "shim $(basename "$(dirname "$f")")"
done
stop containerd
stop kube-scheduler
stop kube-controller-manager
stop kube-apiserver
stop etcd

for m in $(findmnt -rno TARGET | grep -E "^($STATE|$RUN)/" | sort -r); do umount -l "$m" 2>/dev/null; done
for ns in "${netns[@]}"; do umount -l "$ns" 2>/dev/null; rm -f "$ns"; done
for i in vmdhcp-k8s0 vmdhcp-vm0 vmdhcp-cni0; do ip link del "$i" 2>/dev/null; done
# the kubelet's cgroups (kubepods/...), deepest first
for c in /sys/fs/cgroup/*/kubepods /sys/fs/cgroup/kubepods; do
    [ -d "$c" ] && find "$c" -depth -type d -exec rmdir {} + 2>/dev/null
done
rm -rf "$RUN"
if [ -d "$STATE" ]; then
    find "$STATE" -mindepth 1 -maxdepth 1 ! -name log -exec rm -rf {} + 2>/dev/null
fi
log "done (logs in $STATE/log)"
