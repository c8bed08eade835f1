#!/bin/bash
# tests/netns/test-agent-leasefile.sh - the --dynamic lease file against busybox udhcpc, on a
# small tmpfs (in a mount namespace of this test only):
#   - garbage in the middle of the lease file (a NUL byte, binary lines): the agent starts, the
#     bad lines are copied byte for byte to LEASES.quarantine, the leases after them are served;
#   - the disk full: a new MAC gets no address (its lease could not be written, so it is not
#     offered), counted in /metrics; once there is room the same client gets one; after a
#     kill -9 and a restart that lease is still there (and not handed to another MAC).
if [ -z "${VMDHCP_PRIVATE_MOUNTS:-}" ]; then
    [ "$(id -u)" = 0 ] || { echo "SKIP: needs root (mount and network namespaces)"; exit 77; }
    unshare -m --propagation private true 2>/dev/null ||
        { echo "SKIP: cannot create a mount namespace (unshare -m)"; exit 77; }
    # the tmpfs below is seen by this test and the agents it starts only, and goes with them
    VMDHCP_PRIVATE_MOUNTS=1 exec unshare -m --propagation private "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
require busybox
UDHCPC=(busybox udhcpc)

SMALL=$TMP/small
LEASES=$SMALL/leases
on_exit() {
    [ -n "$AGENT_PID" ] && stop_pid "$AGENT_PID"
    umount -l "$SMALL" 2>/dev/null
    cleanup
}
trap on_exit EXIT
mkdir "$SMALL"
# smaller than the journal's 256 KiB reserve: the agent appends with write()
mount -t tmpfs -o size=128k,mode=0755 tmpfs "$SMALL" || { fail "tmpfs" "cannot mount one"; finish; }

make_server
add_vm vma 52:54:00:cc:00:01 # leased before the garbage
add_vm vmb 52:54:00:cc:00:02 # leased after it
add_vm vmc 52:54:00:cc:00:03 # new: asks while the disk is full
add_vm vmd 52:54:00:cc:00:04 # new: asks after the restart
cfg=$TMP/pool.yaml
write_pool "$cfg"

write_udhcpc_script mask
udhcpc_q() { # VM TRIES: one exchange, quit when bound; its exit status
    ip -n "$TAG-$1" -4 addr flush dev eth0
    ip netns exec "$TAG-$1" env EVENTS="$TMP/$1.events" "${UDHCPC[@]}" -f -n -q -i eth0 \
        -s "$TMP/udhcpc.script" -t "$2" -T 2 >>"$TMP/udhcpc-$1.log" 2>&1
}

# 1. garbage in the middle of the lease file
{
    printf '\x01binary\x02\x03 garbage 52:54:00:cc:00:08\n'
    printf '52:54:00:cc:00:09 10.66\x00.0.159\n' # a NUL byte in a lease
    printf '\xff\xfe'; head -c 300 /dev/urandom | tr -d '\n'; printf '\n'
} >"$TMP/bad.bin"
{
    printf '# vm-dhcp-agent leases v1\n52:54:00:cc:00:01 %s\n' $NET.150
    cat "$TMP/bad.bin"
    printf '52:54:00:cc:00:02 %s\n' $NET.160
} >"$LEASES"
start_agent "$cfg" --dynamic --lease-file "$LEASES"
check "agent starts on a lease file with garbage in the middle" agent_ready
check "the 3 bad lines are logged once, with the side file" \
    grep -q "3 bad lines .* moved to $LEASES.quarantine; 2 leases kept" "$TMP/agent.log"
check "the bad bytes are in $LEASES.quarantine, exactly" cmp -s "$TMP/bad.bin" "$LEASES.quarantine"
only_leases() { ! LC_ALL=C grep -avqE '^(#.*|([0-9a-f]{2}:){5}[0-9a-f]{2} [0-9.]+)$' "$LEASES"; }
check "the lease file is rewritten without them" only_leases
udhcpc_q vmb 5
check "the lease after the garbage is served: vmb gets $NET.160" has_addr vmb $NET.160/24
udhcpc_q vma 5
check "the lease before it too: vma gets $NET.150" has_addr vma $NET.150/24

# 2. the disk full: a lease that cannot be written is not offered
if ! agent_ready; then # (whatever became of step 1, step 2 has an agent)
    stop_pid "$AGENT_PID"
    rm -f "$LEASES"
    start_agent "$cfg" --dynamic --lease-file "$LEASES"
fi
dd if=/dev/zero of="$SMALL/fill" bs=4k >/dev/null 2>&1 # until ENOSPC
# the lease file's last page has room for a few lines: fill it with comments (the agent is
# idle; its appends go after them)
size=$(stat -c %s "$LEASES")
pad=$(( (4096 - size % 4096) % 4096 ))
while [ "$pad" -gt 0 ]; do
    n=$(( pad > 100 ? 100 : pad ))
    if [ "$n" = 1 ]; then printf '\n'; else printf '#%*s\n' $((n - 2)) ''; fi
    pad=$((pad - n))
done >>"$LEASES"
check "the lease file has no reserve ($size bytes): one write() per lease" test "$size" -lt 65536
check "the lease file fills its last page" test $(( $(stat -c %s "$LEASES") % 4096 )) = 0
disk_full() { ! printf x 2>/dev/null >"$SMALL/probe"; }
check "the tmpfs is full" disk_full
rm -f "$SMALL/probe"
errors_before=$(metric vmdhcp_agent_lease_file_errors_total)
drops_before=$(metric 'vmdhcp_agent_drops_total{reason="unknown_mac"}')
udhcpc_q vmc 3
rc=$?
check "disk full: udhcpc (new MAC) gave up without a lease (exit $rc)" test "$rc" -ne 0
check "disk full: no address configured" test -z "$(vm_addr vmc)"
check "disk full: no OFFER seen" bash -c "! grep -q '^bound' '$TMP/vmc.events' 2>/dev/null"
more_errors() { [ "$(metric vmdhcp_agent_lease_file_errors_total)" -gt "$errors_before" ]; }
check "disk full: lease file errors counted" more_errors
more_drops() { [ "$(metric 'vmdhcp_agent_drops_total{reason="unknown_mac"}')" -gt "$drops_before" ]; }
check "disk full: the requests counted as drops" more_drops
check "disk full: logged" grep -q "cannot record a lease for 52:54:00:cc:00:03: No space left on device" "$TMP/agent.log"
check "disk full: no lease for it in the file" bash -c "! grep -aq '^52:54:00:cc:00:03 ' '$LEASES'"

# 3. room again: the next request gets an address, and it is in the file
rm -f "$SMALL/fill"
udhcpc_q vmc 5
check "room again: vmc gets the lowest free address $NET.100" has_addr vmc $NET.100/24
check "room again: its lease is in the file" grep -aq "^52:54:00:cc:00:03 $NET.100\$" "$LEASES"

# 4. kill -9 (no rewrite at exit) and a restart: the lease is still there
kill -KILL "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null
start_agent "$cfg" --dynamic --lease-file "$LEASES"
check "restart: agent ready" agent_ready
check "restart: 3 dynamic leases" test "$(metric vmdhcp_agent_dynamic_leases)" = 3
udhcpc_q vmc 5
check "restart: vmc keeps $NET.100" has_addr vmc $NET.100/24
udhcpc_q vmd 5
check "restart: a new MAC gets $NET.101, not $NET.100" has_addr vmd $NET.101/24
check "restart: no new bad line (nothing torn by the full disk)" cmp -s "$TMP/bad.bin" "$LEASES.quarantine"

check "agent still running" kill -0 "$AGENT_PID"
[ "$CHECKS_FAIL" -eq 0 ] || show_logs
finish
