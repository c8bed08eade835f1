#!/bin/bash
# tests/netns/host-files.sh CMD... - run CMD (the network-namespace suite: `make netns-test`)
# and check that it left the host's resolver and DHCP client state as it found them: the
# tests run real DHCP clients (dhclient, dhcpcd, udhcpc), whose hooks and state belong in the
# test's own namespaces and temporary folders, never in the host's.
#
# Compared before and after (names, types, modes, link targets and the contents' SHA-256):
#   /etc/resolv.conf (and the file it links to), the /etc/resolv.conf.* files dhclient-script
#   and resolvconf leave, /etc/hostname and the host name (the clients' hostname hooks),
#   dhclient's /var/lib/dhcp and /var/lib/dhclient, dhcpcd's /var/lib/dhcpcd and /run/dhcpcd,
#   udhcpc's /var/lib/udhcpc and /run/udhcpc, and the clients' PID files in /run.
# Times are not compared: only what a client wrote differently counts (a host whose own DHCP
# client renews its lease during the run changes its lease file: the message says which file).
#
# Prints "PASS host files unchanged" or "FAIL ..." with the differences, adds one check to
# $VMDHCP_SUMMARY (group netns) when set. Exit status: CMD's when the files are unchanged,
# else 1. `host-files.sh --print` prints what is compared (scripts/fresh-test.sh).
set -u
[ $# -gt 0 ] || { echo "usage: $0 CMD... | --print" >&2; exit 2; }

PATHS="/etc/resolv.conf /etc/hostname /var/lib/dhcp /var/lib/dhclient /var/lib/dhcpcd
  /run/dhcpcd /var/lib/udhcpc /run/udhcpc"

fingerprint() {
    local p real
    echo "hostname $(uname -n)"
    # the names beside resolv.conf (dhclient-script writes resolv.conf.dhclient-new.PID, then
    # renames it) and the clients' PID files in /run
    ls -d /etc/resolv.conf* /run/dhclient* /run/dhcpcd* /run/udhcpc* 2>/dev/null | sed 's/^/name /'
    for p in $PATHS; do
        [ -e "$p" ] || [ -L "$p" ] || { echo "absent $p"; continue; }
        find "$p" -xdev -printf '%y %m %p -> %l\n' 2>&1 | sort
        find "$p" -xdev -type f -exec sha256sum {} + 2>&1 | sort -k 2
        if [ -L "$p" ]; then
            real=$(readlink -f "$p")
            echo "$p resolves to $real"
            [ -f "$real" ] && sha256sum "$real"
        fi
    done
}

[ "$1" = --print ] && { fingerprint; exit 0; }
before=$(fingerprint)
"$@"
rc=$?
after=$(fingerprint)
if [ "$before" = "$after" ]; then
    echo "  PASS  host files unchanged (resolv.conf, hostname, dhclient/dhcpcd/udhcpc state)"
    [ -n "${VMDHCP_SUMMARY:-}" ] && echo "netns 1 0 0" >>"$VMDHCP_SUMMARY"
    exit $rc
fi
echo "  FAIL  the host's resolver or DHCP client state changed during the tests (by them, or by something"
echo "        else on the host meanwhile; lines - before, + after):"
diff <(echo "$before") <(echo "$after") | grep '^[<>]' | sed 's/^</        -/; s/^>/        +/'
[ -n "${VMDHCP_SUMMARY:-}" ] && echo "netns 0 1 0 host-files" >>"$VMDHCP_SUMMARY"
exit 1
