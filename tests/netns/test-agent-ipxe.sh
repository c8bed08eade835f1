#!/bin/bash
# tests/netns/test-agent-ipxe.sh - a real VM firmware as the DHCP client: QEMU (TCG, no KVM)
# boots a virtio NIC's iPXE option ROM (Debian's ipxe-qemu) on a tap in br0 where
# vm-dhcp-agent serves (local mode, uid 65532 with the pod's three capabilities), twice at
# once: under SeaBIOS (BIOS) and under OVMF (UEFI x86-64). Each VM's serial console is read
# for each step:
#   1. the ROM's DHCP (user class "iPXE") gets the VM's address from the agent: the agent's
#      decision lines name the VM's MAC, the console shows the address; its IPv6 half (after
#      the agent's router advertisement, M=1) gets the VM's DHCPv6 address;
#   2. the agent answers the pool's networkBoot.ipxeScript (user class iPXE) with nextServer;
#      iPXE fetches that script over TFTP from dnsmasq (TFTP only, on br0) and runs it;
#   3. the script changes its user class and asks again: now a plain PXE client of its
#      architecture (option 93: 0 BIOS, 7 UEFI x86-64; no iPXE user class), answered the
#      pool's bootFiles.bios or bootFiles.uefi, which iPXE chains over TFTP.
# Steps 2-3 are skipped (with the reason) when the agent does not know networkBoot; the UEFI
# VM when OVMF is not installed. Waits are bounded waits for console or log lines (TCG is
# slow: up to QEMU_WAIT seconds a step). Skipped (77) when not root, without tap devices
# (/dev/net/tun), or when QEMU, the ROMs, dnsmasq or setcap/setpriv are missing. Takes about
# 25-30 s (TCG on a 2-core machine; the BIOS VM alone about 10 s).
. "$(dirname "$0")/lib.sh"
require qemu-system-x86_64 dnsmasq setpriv setcap
ROM_BIOS=${IPXE_ROM:-/usr/lib/ipxe/qemu/pxe-virtio.rom}
ROM_EFI=${IPXE_EFI_ROM:-/usr/lib/ipxe/qemu/efi-virtio.rom}
OVMF_CODE=${OVMF_CODE:-/usr/share/OVMF/OVMF_CODE_4M.fd}
OVMF_VARS=${OVMF_VARS:-/usr/share/OVMF/OVMF_VARS_4M.fd}
for f in "$ROM_BIOS" "$ROM_EFI"; do
    [ -r "$f" ] || skip "$f is missing (Debian's ipxe-qemu; scripts/install-deps installs it)"
done
[ -c /dev/net/tun ] || skip "/dev/net/tun is missing: no tap devices here"
UEFI=1
[ -r "$OVMF_CODE" ] && [ -r "$OVMF_VARS" ] || UEFI=0
QEMU_WAIT=${QEMU_WAIT:-120}
# the VMs: name, MAC, IPv4, IPv6, boot file of their architecture
declare -A MAC=([bios]=52:54:00:bb:10:01 [uefi]=52:54:00:bb:10:02)
declare -A IP=([bios]=$NET.21 [uefi]=$NET.22)
declare -A IP6=([bios]=fd66::21 [uefi]=fd66::22)
declare -A ARCH=([bios]="arch 0" [uefi]="arch 7")
declare -A PLATFORM=([bios]=pcbios [uefi]=efi) # iPXE's ${platform}
declare -A QEMU_PID=()
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

# the pool (dual-stack): each VM's addresses pinned by its MAC, router advertisements on
# (iPXE configures IPv6 beside IPv4 and, with no router answering its solicitations, waits
# ~16 s under TCG for one), networkBoot when the agent knows it
cfg=$TMP/pool.yaml
RA6=1
write_pool6 "$cfg"
cat >"$TMP/boot.yaml" <<EOF
    networkBoot:
      nextServer: $SERVER_IP
      bootFiles:
        bios: bios.ipxe
        uefi: uefi.ipxe
      ipxeScript: tftp://$SERVER_IP/script.ipxe
EOF
sed -i "/^    leaseTime: /r $TMP/boot.yaml" "$cfg"
for vm in bios uefi; do vmnetcfg6 "$cfg" "pxe-$vm" "${MAC[$vm]}" "${IP[$vm]}" "${IP6[$vm]}"; done
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
# from here on a plain PXE client: option 93 of its architecture, no iPXE user class
set user-class VMDHCP-PXE-TEST
dhcp net0 || goto failed
echo VMDHCP-SECOND-DHCP ip=${net0/ip} next-server=${net0/next-server} filename=${net0/filename}
chain tftp://${net0/next-server}/${net0/filename} || goto failed
exit
:failed
echo VMDHCP-FAILED
EOF
printf '#!ipxe\necho VMDHCP-BIOS-BOOTFILE ${platform}\n' >"$TMP/tftp/bios.ipxe"
printf '#!ipxe\necho VMDHCP-UEFI-BOOTFILE ${platform}\n' >"$TMP/tftp/uefi.ipxe"
chmod -R a+rX "$TMP/tftp"
ip netns exec "$SRV" dnsmasq --keep-in-foreground --conf-file=/dev/null --port=0 --user=nobody \
    --pid-file= --log-facility=- --interface=br0 --enable-tftp --tftp-root="$TMP/tftp" \
    >>"$TMP/tftp.log" 2>&1 &
TFTP_PID=$!; PIDS+=("$TFTP_PID")
tftp_up() { grep -q 'TFTP root is' "$TMP/tftp.log"; }
check "TFTP server (dnsmasq) started" wait_for 10 tftp_up

# start_vm bios|uefi: a tap tap-NAME on br0 and QEMU on it, its serial console in
# $TMP/console-NAME.log. -nographic: QEMU then has SeaBIOS mirror its text screen (so iPXE's
# output) to the serial port (fw_cfg etc/sercon-port); OVMF writes its console there anyway.
# BIOS: a modern-only virtio NIC (the ROM's PCI header names 1af4:1041; SeaBIOS skips it for
# the transitional device 1af4:1000). UEFI: q35, OVMF with a copy of its variable store.
start_vm() {
    local vm=$1 fw nic=virtio-net-pci,netdev=n0,mac=${MAC[$1]},bootindex=1
    ip -n "$SRV" tuntap add dev "tap-$vm" mode tap 2>"$TMP/tap.err" ||
        skip "cannot create a tap device: $(cat "$TMP/tap.err")"
    ip -n "$SRV" link set "tap-$vm" master br0 up
    : >"$TMP/console-$vm.log"
    if [ "$vm" = bios ]; then
        fw=(-machine pc,accel=tcg -m 64)
        nic=$nic,disable-legacy=on,romfile=$ROM_BIOS
    else
        cp "$OVMF_VARS" "$TMP/ovmf-vars.fd"
        fw=(-machine q35,accel=tcg -m 256
            -drive "if=pflash,format=raw,unit=0,readonly=on,file=$OVMF_CODE"
            -drive "if=pflash,format=raw,unit=1,file=$TMP/ovmf-vars.fd")
        nic=$nic,romfile=$ROM_EFI
    fi
    ip netns exec "$SRV" qemu-system-x86_64 "${fw[@]}" -nodefaults -nographic -monitor none \
        -serial "file:$TMP/console-$vm.log" -no-reboot -boot strict=on \
        -netdev "tap,id=n0,ifname=tap-$vm,script=no,downscript=no" -device "$nic" \
        </dev/null >>"$TMP/qemu-$vm.log" 2>&1 &
    QEMU_PID[$vm]=$!; PIDS+=("$!")
}
VMS=(bios)
if [ $UEFI = 1 ]; then VMS+=(uefi); fi
for vm in "${VMS[@]}"; do start_vm "$vm"; done

console_has() { tr -d '\r' <"$TMP/console-$1.log" | grep -Eq -- "$2"; }
logged() { grep -Eq -- "$1" "$TMP/agent.log"; }
tftp_sent() { grep -q "sent $TMP/tftp/$1 to $2\$" "$TMP/tftp.log"; }
# vm_wait VM CMD...: wait_for CMD while VM's QEMU runs, up to QEMU_WAIT seconds (10 once a
# check failed: the steps after a failed one would only add their full waits)
vm_wait() {
    local vm=$1 i n=$((QEMU_WAIT * 5)); shift
    [ "$CHECKS_FAIL" = 0 ] || n=50
    for i in $(seq $n); do
        "$@" && return 0
        kill -0 "${QEMU_PID[$vm]}" 2>/dev/null || break
        sleep 0.2
    done
    "$@"
}

# address_steps VM: step 1
address_steps() {
    local vm=$1 mac=${MAC[$1]} ip=${IP[$1]} ip6=${IP6[$1]} who="$1:"
    check "$who console: iPXE started from the NIC's option ROM" vm_wait "$vm" console_has "$vm" \
        'iPXE .*(starting execution|Open Source Network Boot Firmware)'
    check "$who agent log: DHCPOFFER $ip to the VM's MAC $mac" vm_wait "$vm" logged \
        " DHCPOFFER $ip to $mac \(pxe-$vm\) for DHCPDISCOVER "
    check "$who agent log: DHCPACK $ip to $mac" vm_wait "$vm" logged " DHCPACK $ip to $mac \(pxe-$vm\) for DHCPREQUEST "
    check "$who console: iPXE configured $ip from the agent" vm_wait "$vm" console_has "$vm" \
        "net0: $ip/255\.255\.255\.0 gw $NET\.1"
    # iPXE also configures IPv6: the agent's router advertisement (M=1), then DHCPv6
    check "$who agent log: DHCPv6 REPLY $ip6 to $mac" vm_wait "$vm" logged \
        " DHCPv6 REPLY $ip6 to $mac \(pxe-$vm\) for REQUEST "
    check "$who console: iPXE configured $ip6 from the agent" vm_wait "$vm" console_has "$vm" "net0: $ip6/64"
    echo "  ($vm: address step done after $(elapsed))"
}

# boot_steps VM: steps 2 and 3
boot_steps() {
    local vm=$1 mac=${MAC[$1]} ip=${IP[$1]} who="$1:" file=$1.ipxe marker
    marker=$(echo "$vm" | tr a-z A-Z)
    # 2. user class iPXE: the ipxeScript, fetched over TFTP from nextServer
    check "$who agent log: the ACK to $mac names boot=tftp://$SERVER_IP/script.ipxe" logged \
        " DHCPACK $ip to $mac \(pxe-$vm\) .*boot=tftp://$SERVER_IP/script\.ipxe"
    check "$who TFTP: script.ipxe sent to $ip" vm_wait "$vm" tftp_sent script.ipxe "$ip"
    check "$who console: the script runs (address $ip, next-server $SERVER_IP)" vm_wait "$vm" \
        console_has "$vm" "^VMDHCP-IPXE-SCRIPT ip=$ip next-server=$SERVER_IP\$"
    # 3. option 93 of its architecture without the iPXE user class: its boot file over TFTP
    check "$who console: second DHCP answered $file from $SERVER_IP" vm_wait "$vm" \
        console_has "$vm" "^VMDHCP-SECOND-DHCP ip=$ip next-server=$SERVER_IP filename=$file\$"
    check "$who agent log: an ACK to $mac names boot=$file" logged " DHCPACK $ip to $mac \(pxe-$vm\) .*boot=$file "
    check "$who agent: boot reply counted arch=$vm (option 93 ${ARCH[$vm]})" \
        test "$(metric "vmdhcp_agent_boot_replies_total{arch=\"$vm\"}")" -ge 1
    check "$who TFTP: $file sent to $ip" vm_wait "$vm" tftp_sent "$file" "$ip"
    check "$who console: the $marker boot file runs on iPXE's ${PLATFORM[$vm]} platform" vm_wait "$vm" \
        console_has "$vm" "^VMDHCP-$marker-BOOTFILE ${PLATFORM[$vm]}\$"
    check "$who console: no script step failed" bash -c "! tr -d '\r' <'$TMP/console-$vm.log' | grep -q '^VMDHCP-FAILED'"
    echo "  ($vm: boot steps done after $(elapsed))"
}

for vm in "${VMS[@]}"; do
    address_steps "$vm"
    if [ $BOOT = 1 ]; then
        boot_steps "$vm"
    else
        for s in "agent answers ipxeScript to the iPXE user class" "TFTP: script fetched" \
            "second DHCP answered the $vm boot file (${ARCH[$vm]})" "TFTP: $vm boot file chained"; do
            skip_check "$vm: $s" "$BOOT_SKIP"
        done
    fi
done
[ $UEFI = 1 ] || skip_check "uefi: every step" "OVMF is not installed ($OVMF_CODE, $OVMF_VARS: Debian's ovmf)"
if [ $BOOT = 1 ]; then
    check "agent: boot replies counted arch=ipxe, one for each VM" \
        test "$(metric 'vmdhcp_agent_boot_replies_total{arch="ipxe"}')" -ge ${#VMS[@]}
fi
check "agent: no unknown-MAC drops (the VMs' MACs are the pinned ones)" \
    test "$(metric 'vmdhcp_agent_drops_total{reason="unknown_mac"}')" = 0
for vm in "${VMS[@]}"; do check "$vm: QEMU still running" kill -0 "${QEMU_PID[$vm]}"; done
check "agent still running" kill -0 "$AGENT_PID"
for vm in "${VMS[@]}"; do stop_pid "${QEMU_PID[$vm]}"; done
echo "  (QEMU + iPXE test: $(elapsed))"
if [ "$CHECKS_FAIL" -ne 0 ]; then
    show_logs
    for vm in "${VMS[@]}"; do
        echo "--- $TMP/console-$vm.log"
        tr -d '\r' <"$TMP/console-$vm.log" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g' | grep -v '^\s*$' | tail -n 30
    done
fi
finish
