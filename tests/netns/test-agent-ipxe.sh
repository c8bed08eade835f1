#!/bin/bash
# tests/netns/test-agent-ipxe.sh - a real VM firmware as the DHCP client: QEMU (TCG, no KVM)
# boots a virtio NIC's iPXE option ROM (Debian's ipxe-qemu) under SeaBIOS, its tap on br0 where
# vm-dhcp-agent serves (local mode, uid 65532 with the pod's three capabilities). The VM's
# serial console (SeaBIOS mirrors its text screen there, iPXE included) is read for each step:
#   1. the ROM's DHCP (option 93 arch 0, user class "iPXE") gets the VM's address from the
#      agent: the agent's decision lines name the VM's MAC, the console shows the address;
#      its IPv6 half (after the agent's router advertisement, M=1) gets the VM's DHCPv6 address;
#   2. the agent answers the pool's networkBoot.ipxeScript (user class iPXE) with nextServer;
#      iPXE fetches that script over TFTP from dnsmasq (TFTP only, on br0) and runs it;
#   3. the script changes its user class and asks again: now a plain BIOS PXE client (arch 0,
#      no iPXE user class), answered the pool's bootFiles.bios, which iPXE chains over TFTP.
# Steps 2-3 are skipped (with the reason) when the agent does not know networkBoot. Waits are
# bounded waits for console or log lines (TCG is slow: up to QEMU_WAIT seconds a step).
# Skipped (77) when not root, without tap devices (/dev/net/tun), or when QEMU, the ROM,
# dnsmasq or setcap/setpriv are missing. Takes about 12 s (TCG on a 2-core machine).
. "$(dirname "$0")/lib.sh"
require qemu-system-x86_64 dnsmasq setpriv setcap
ROM=${IPXE_ROM:-/usr/lib/ipxe/qemu/pxe-virtio.rom}
[ -r "$ROM" ] || skip "$ROM is missing (Debian's ipxe-qemu; scripts/install-deps installs it)"
[ -c /dev/net/tun ] || skip "/dev/net/tun is missing: no tap devices here"
QEMU_WAIT=${QEMU_WAIT:-120}
MAC=52:54:00:bb:10:01
VM_IP=$NET.21
VM_IP6=fd66::21
T0=$(date +%s)
elapsed() { echo "$(($(date +%s) - T0)) s"; }

make_server
chmod 755 "$TMP"

# the agent as the pod runs it: uid/gid 65532, a copy of the binary with the three file
# capabilities, bounding set limited to them, nothing inheritable (see test-agent-caps.sh)
mkdir -p "$TMP/bin"
cp "$AGENT" "$TMP/bin/vm-dhcp-agent"
chmod 755 "$TMP/bin" "$TMP/bin/vm-dhcp-agent"
setcap cap_net_raw,cap_net_bind_service,cap_net_admin+ep "$TMP/bin/vm-dhcp-agent" 2>"$TMP/setcap.err" ||
    skip "setcap failed on $TMP (no file capabilities here?): $(cat "$TMP/setcap.err")"
cat >"$TMP/bin/agent-as-pod" <<EOF
#!/bin/sh
exec env "ASAN_OPTIONS=\${ASAN_OPTIONS:-}\${ASAN_OPTIONS:+:}detect_leaks=0" \\
    setpriv --reuid 65532 --regid 65532 --clear-groups --inh-caps=-all \\
    --bounding-set=-all,+net_raw,+net_bind_service,+net_admin "$TMP/bin/vm-dhcp-agent" "\$@"
EOF
chmod 755 "$TMP/bin/agent-as-pod"
REAL_AGENT=$AGENT
AGENT=$TMP/bin/agent-as-pod

# the pool (dual-stack): the VM's addresses pinned by its MAC, router advertisements on (iPXE
# configures IPv6 beside IPv4 and, with no router answering its solicitations, waits ~16 s
# under TCG for one), networkBoot when the agent knows it
cfg=$TMP/pool.yaml
RA6=1
write_pool6 "$cfg"
cat >"$TMP/boot.yaml" <<EOF
    networkBoot:
      nextServer: $SERVER_IP
      bootFiles:
        bios: bios.ipxe
      ipxeScript: tftp://$SERVER_IP/script.ipxe
EOF
sed -i "/^    leaseTime: /r $TMP/boot.yaml" "$cfg"
vmnetcfg6 "$cfg" pxe-vm $MAC $VM_IP $VM_IP6
chmod 644 "$cfg"
BOOT=1
if ! "$REAL_AGENT" --config "$cfg" --dry-run >"$TMP/dry-run.log" 2>&1; then
    BOOT=0
    BOOT_SKIP="this agent does not serve network boot ($(grep -m1 -o 'spec\.ipv4Config\.networkBoot: .*' "$TMP/dry-run.log"))"
    sed -i '/^    networkBoot:$/,/^      ipxeScript: /d' "$cfg"
fi
wait_ll "$SRV" br0 || { fail "br0 link-local address" "not past DAD"; finish; }
start_agent "$cfg" || { fail "agent ready" "did not start"; finish; }
pass "agent ready"
check "agent runs as uid 65532" test "$(proc_status "$AGENT_PID" Uid)" = 65532
check "agent: effective capabilities and bounding set NET_RAW, NET_BIND_SERVICE, NET_ADMIN" \
    test "$(proc_status "$AGENT_PID" CapEff)/$(proc_status "$AGENT_PID" CapBnd)" = $CAPS_NET_ALL/$CAPS_NET_ALL

# the TFTP server: dnsmasq with DNS off (--port=0), no DHCP, TFTP from $TMP/tftp on br0
mkdir -p "$TMP/tftp"
cat >"$TMP/tftp/script.ipxe" <<'EOF'
#!ipxe
echo VMDHCP-IPXE-SCRIPT ip=${net0/ip} next-server=${net0/next-server}
# from here on a plain BIOS PXE client: option 93 arch 0 without the iPXE user class
set user-class VMDHCP-PXE-TEST
dhcp net0 || goto failed
echo VMDHCP-SECOND-DHCP ip=${net0/ip} next-server=${net0/next-server} filename=${net0/filename}
chain tftp://${net0/next-server}/${net0/filename} || goto failed
exit
:failed
echo VMDHCP-FAILED
EOF
printf '#!ipxe\necho VMDHCP-BIOS-BOOTFILE\n' >"$TMP/tftp/bios.ipxe"
chmod -R a+rX "$TMP/tftp"
ip netns exec "$SRV" dnsmasq --keep-in-foreground --conf-file=/dev/null --port=0 --user=nobody \
    --pid-file= --log-facility=- --interface=br0 --enable-tftp --tftp-root="$TMP/tftp" \
    >>"$TMP/tftp.log" 2>&1 &
TFTP_PID=$!; PIDS+=("$TFTP_PID")
tftp_up() { grep -q 'TFTP root is' "$TMP/tftp.log"; }
check "TFTP server (dnsmasq) started" wait_for 10 tftp_up

# the VM: a tap on br0, QEMU with the ROM on a virtio NIC (modern-only: the ROM's PCI header
# names 1af4:1041, the transitional device 1af4:1000 is skipped by SeaBIOS), serial to a file.
# -nographic: QEMU then tells SeaBIOS (fw_cfg etc/sercon-port) to mirror the text screen, so
# iPXE's output, to the serial port; without it the serial file stays empty.
ip -n "$SRV" tuntap add dev tap-vm mode tap 2>"$TMP/tap.err" ||
    skip "cannot create a tap device: $(cat "$TMP/tap.err")"
ip -n "$SRV" link set tap-vm master br0 up
CONSOLE=$TMP/console.log
: >"$CONSOLE"
ip netns exec "$SRV" qemu-system-x86_64 -machine pc,accel=tcg -m 64 -nodefaults -nographic \
    -monitor none -serial "file:$CONSOLE" -no-reboot -boot strict=on \
    -netdev tap,id=n0,ifname=tap-vm,script=no,downscript=no \
    -device "virtio-net-pci,netdev=n0,mac=$MAC,bootindex=1,disable-legacy=on,romfile=$ROM" \
    </dev/null >>"$TMP/qemu.log" 2>&1 &
QEMU_PID=$!; PIDS+=("$QEMU_PID")
console_has() { tr -d '\r' <"$CONSOLE" | grep -Eq -- "$1"; }
# vm_wait CMD...: wait_for CMD while QEMU runs, up to QEMU_WAIT seconds (10 once a check failed:
# the steps after a failed one would only add their full waits)
vm_wait() {
    local i n=$((QEMU_WAIT * 5))
    [ "$CHECKS_FAIL" = 0 ] || n=50
    for i in $(seq $n); do
        "$@" && return 0
        kill -0 "$QEMU_PID" 2>/dev/null || break
        sleep 0.2
    done
    "$@"
}
logged() { grep -Eq -- "$1" "$TMP/agent.log"; }

# 1. the ROM's DHCP
check "console: iPXE started from the NIC's option ROM" vm_wait console_has 'iPXE .*starting execution'
check "agent log: DHCPOFFER $VM_IP to the VM's MAC $MAC" vm_wait logged \
    " DHCPOFFER $VM_IP to $MAC \(pxe-vm\) for DHCPDISCOVER "
check "agent log: DHCPACK $VM_IP to $MAC" vm_wait logged " DHCPACK $VM_IP to $MAC \(pxe-vm\) for DHCPREQUEST "
check "console: iPXE configured $VM_IP from the agent" vm_wait console_has "net0: $VM_IP/255\.255\.255\.0 gw $NET\.1"
# iPXE also configures IPv6: the agent's router advertisement (M=1), then DHCPv6
check "agent log: DHCPv6 REPLY $VM_IP6 to $MAC" vm_wait logged " DHCPv6 REPLY $VM_IP6 to $MAC \(pxe-vm\) for REQUEST "
check "console: iPXE configured $VM_IP6 from the agent" vm_wait console_has "net0: $VM_IP6/64"
echo "  (address step done after $(elapsed))"

if [ $BOOT = 0 ]; then
    for s in "agent answers ipxeScript to the iPXE user class" "TFTP: script fetched" \
        "second DHCP answered bios boot file (arch 0)" "TFTP: bios boot file chained"; do
        skip_check "$s" "$BOOT_SKIP"
    done
else
    # 2. user class iPXE: the ipxeScript, fetched over TFTP from nextServer
    check "agent log: the ACK to $MAC names boot=tftp://$SERVER_IP/script.ipxe" logged \
        " DHCPACK $VM_IP to $MAC \(pxe-vm\) .*boot=tftp://$SERVER_IP/script\.ipxe"
    check "TFTP: script.ipxe sent to $VM_IP" vm_wait grep -q "sent $TMP/tftp/script.ipxe to $VM_IP" "$TMP/tftp.log"
    check "console: the script runs (address $VM_IP, next-server $SERVER_IP)" vm_wait \
        console_has "^VMDHCP-IPXE-SCRIPT ip=$VM_IP next-server=$SERVER_IP\$"
    check "agent: boot reply counted arch=ipxe" test "$(metric 'vmdhcp_agent_boot_replies_total{arch="ipxe"}')" -ge 1
    # 3. arch 0 without the iPXE user class: bootFiles.bios, chained over TFTP
    check "console: second DHCP answered bios.ipxe from $SERVER_IP" vm_wait \
        console_has "^VMDHCP-SECOND-DHCP ip=$VM_IP next-server=$SERVER_IP filename=bios.ipxe"
    check "agent log: an ACK to $MAC names boot=bios.ipxe" logged " DHCPACK $VM_IP to $MAC \(pxe-vm\) .*boot=bios\.ipxe"
    check "agent: boot reply counted arch=bios (option 93 arch 0)" \
        test "$(metric 'vmdhcp_agent_boot_replies_total{arch="bios"}')" -ge 1
    check "TFTP: bios.ipxe sent to $VM_IP" vm_wait grep -q "sent $TMP/tftp/bios.ipxe to $VM_IP" "$TMP/tftp.log"
    check "console: the BIOS boot file runs" vm_wait console_has '^VMDHCP-BIOS-BOOTFILE'
    check "console: no script step failed" bash -c "! tr -d '\r' <'$CONSOLE' | grep -q '^VMDHCP-FAILED'"
    echo "  (boot steps done after $(elapsed))"
fi
check "agent: no unknown-MAC drops (the VM's MAC is the pinned one)" \
    test "$(metric 'vmdhcp_agent_drops_total{reason="unknown_mac"}')" = 0
check "QEMU still running" kill -0 "$QEMU_PID"
check "agent still running" kill -0 "$AGENT_PID"
stop_pid "$QEMU_PID"
echo "  (QEMU + iPXE test: $(elapsed))"
if [ "$CHECKS_FAIL" -ne 0 ]; then
    show_logs
    echo "--- $CONSOLE"; tr -d '\r' <"$CONSOLE" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' | tail -n 40
fi
finish
