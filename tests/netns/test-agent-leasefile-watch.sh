#!/bin/bash
# tests/netns/test-agent-leasefile-watch.sh - the --dynamic lease file under a changing file
# system, against busybox udhcpc (a tmpfs in a mount namespace of this test only):
#   - the lease directory read-only at start: the agent serves without persistence, says so
#     once and in vmdhcp_agent_lease_file_persistent 0; made writable, the file is written
#     within a few seconds with the leases handed out meanwhile (persistence resumed);
#   - the file deleted, then replaced, under the running agent: each time it is written again
#     at the path with every lease, and later leases are journaled to the new file.
if [ -z "${VMDHCP_PRIVATE_MOUNTS:-}" ]; then
    [ "$(id -u)" = 0 ] || { echo "SKIP: needs root (mount and network namespaces)"; exit 77; }
    unshare -m --propagation private true 2>/dev/null ||
        { echo "SKIP: cannot create a mount namespace (unshare -m)"; exit 77; }
    VMDHCP_PRIVATE_MOUNTS=1 exec unshare -m --propagation private "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
require busybox nsenter

DIR=$TMP/leasedir
LEASES=$DIR/leases
on_exit() {
    [ -n "$AGENT_PID" ] && stop_pid "$AGENT_PID"
    umount -l "$DIR" 2>/dev/null
    cleanup
}
trap on_exit EXIT
mkdir "$DIR"
mount -t tmpfs -o size=4m,mode=0755 tmpfs "$DIR" || { fail "tmpfs" "cannot mount one"; finish; }
mount -o remount,ro "$DIR" || { fail "tmpfs" "cannot make it read-only"; finish; }

make_server
add_vm vma 52:54:00:ce:00:01
add_vm vmb 52:54:00:ce:00:02
add_vm vmc 52:54:00:ce:00:03
add_vm vmd 52:54:00:ce:00:04
cfg=$TMP/pool.yaml
write_pool "$cfg"

write_udhcpc_script
lease() { # VM: one DORA, address applied
    ip -n "$TAG-$1" -4 addr flush dev eth0
    ip netns exec "$TAG-$1" busybox udhcpc -f -n -q -i eth0 -t 5 -T 1 \
        -s "$TMP/udhcpc.script" >>"$TMP/udhcpc.log" 2>&1
}
has_lease() { # MAC: a line of the file at the path (not the unlinked inode)
    grep -q "^$1 " "$LEASES" 2>/dev/null
}

# 1. read-only at start
start_agent "$cfg" --dynamic --lease-file "$LEASES" || { fail "agent ready" "did not start"; finish; }
pass "read-only lease directory: the agent starts and is ready"
check "read-only: one warning says so" \
    test "$(grep -c "serving without persistence" "$TMP/agent.log")" = 1
check "read-only: vmdhcp_agent_lease_file_persistent 0" \
    test "$(metric vmdhcp_agent_lease_file_persistent)" = 0
lease vma
check "read-only: a client is served" test -n "$(vm_addr vma)"
# writable again, in the agent's own mount namespace (ip netns exec made it a copy)
nsenter -t "$AGENT_PID" -m mount -o remount,rw "$DIR"
mount -o remount,rw "$DIR" # and in this one, for the steps below
check "writable: the leases handed out meanwhile are written" wait_for 12 has_lease 52:54:00:ce:00:01
check "writable: persistence resumed (logged)" grep -q "persistence resumed" "$TMP/agent.log"
persistent() { [ "$(metric vmdhcp_agent_lease_file_persistent)" = 1 ]; }
check "writable: vmdhcp_agent_lease_file_persistent 1" wait_for 3 persistent
lease vmb
check "writable: a new lease is journaled" wait_for 3 has_lease 52:54:00:ce:00:02

# 2. deleted under the running agent
rm -f "$LEASES"
lease vmc # its line goes to the unlinked file until the agent notices
check "deleted: the file is written again with every lease" \
    wait_for 12 bash -c "grep -q '^52:54:00:ce:00:01 ' $LEASES && grep -q '^52:54:00:ce:00:02 ' $LEASES && grep -q '^52:54:00:ce:00:03 ' $LEASES"
check "deleted: logged" grep -q "the lease file was deleted while in use" "$TMP/agent.log"

# 3. replaced under the running agent (an old copy renamed over it)
printf '# an old copy\n52:54:00:ce:00:09 %s\n' $NET.199 >"$DIR/old"
check "replaced: an old copy renamed over the file" mv -f "$DIR/old" "$LEASES"
rewritten() { grep -q '^52:54:00:ce:00:03 ' "$LEASES" && ! grep -q '^52:54:00:ce:00:09 ' "$LEASES"; }
check "replaced: the file is written again with every lease" wait_for 12 rewritten
check "replaced: logged" grep -q "the lease file was replaced while in use" "$TMP/agent.log"
lease vmd
check "replaced: a new lease is journaled to the new file" wait_for 3 has_lease 52:54:00:ce:00:04
check "agent still running" kill -0 "$AGENT_PID"
[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
