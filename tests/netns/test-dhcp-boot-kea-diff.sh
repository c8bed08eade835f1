#!/bin/bash
# tests/netns/test-dhcp-boot-kea-diff.sh - the network boot differential table: crafted
# DHCPv4 requests of PXE, UEFI, UEFI HTTP and iPXE clients (build/tests/dhcp-boot-craft, one
# line per case: the reply's siaddr, sname, file and options 43/60/66/67/97) against ISC Kea
# DHCPv4 configured with client classes on option 93 / 77 as its documentation and Harvester's
# PXE guide do, and against the agent (local mode) serving the same pool with the same files in
# spec.ipv4Config.networkBoot, both on the same bridge, one after the other. Compared with the
# table checked in as tests/data/dhcp-boot-kea-diff.expected (argued in docs/network-boot.md):
#   case NAME / kea LINE / ours LINE / verdict V ("same", or a "### name" of the doc)
# Fails when either server's line differs from its recorded one, when a "same" verdict is
# recorded for two different lines, or when a difference is not argued in the doc.
# UPDATE=1 rewrites the expectation file from this run (verdicts of unchanged pairs kept,
# "same" computed, new differences marked UNARGUED, which fails until argued) and the doc's
# table. ONLY=kea|ours runs one side. Needs kea-dhcp4 (Debian's kea-dhcp4-server).
. "$(dirname "$0")/lib.sh"
CRAFT=${CRAFT:-$ROOT/build/tests/dhcp-boot-craft}
EXPECTED=${EXPECTED:-$ROOT/tests/data/dhcp-boot-kea-diff.expected}
DOC=$ROOT/docs/network-boot.md
MAC=52:54:00:77:00:01
PIN=$NET.150
BOOT_SERVER=$NET.5

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
command -v ip >/dev/null || skip "ip is not installed"
[ -x "$CRAFT" ] || { echo "FAIL: $CRAFT not built (make build/tests/dhcp-boot-craft)"; exit 1; }
[ -f "$EXPECTED" ] || [ "${UPDATE:-0}" = 1 ] || { echo "FAIL: no $EXPECTED"; exit 1; }
mapfile -t CASES < <("$CRAFT" --list)
ONLY=${ONLY:-}
want_kea=1 want_ours=1
[ "$ONLY" = ours ] && want_kea=0
[ "$ONLY" = kea ] && want_ours=0
if [ $want_kea = 1 ] && ! command -v kea-dhcp4 >/dev/null; then
    skip "kea-dhcp4 is not installed (apt-get install kea-dhcp4-server)"
fi
[ $want_ours = 1 ] && [ ! -x "$AGENT" ] && { echo "FAIL: $AGENT not built (make)"; exit 1; }
ip netns add "$TAG-probe" 2>/dev/null || skip "cannot create network namespaces here"
ip netns del "$TAG-probe"
TMP=$(mktemp -d "/tmp/vmdhcp-bootdiff.$TAG.XXXXXX")
trap cleanup EXIT
trap 'exit 130' INT TERM

make_server
add_vm pxe "$MAC"

# Kea: one class per answer, the iPXE one first and excluded from the others (the loop
# breaker of iPXE's chainloading guide), files as in the agent's networkBoot below.
write_kea() {
    local not_ipxe="not member('ipxe') and"
    cat >"$TMP/kea-dhcp4.json" <<EOF
{
"Dhcp4": {
    "interfaces-config": { "interfaces": [ "br0" ] },
    "lease-database": { "type": "memfile", "persist": false, "lfc-interval": 0 },
    "host-reservation-identifiers": [ "hw-address" ],
    "valid-lifetime": 3600,
    "client-classes": [
        { "name": "ipxe", "test": "substring(option[77].hex,0,4) == 'iPXE'",
          "next-server": "$BOOT_SERVER", "boot-file-name": "http://$BOOT_SERVER/boot.ipxe" },
        { "name": "uefi-http", "test": "$not_ipxe (option[93].hex == 0x000f or option[93].hex == 0x0010)",
          "next-server": "$BOOT_SERVER", "boot-file-name": "http://$BOOT_SERVER/ipxe.efi",
          "option-data": [ { "name": "vendor-class-identifier", "data": "HTTPClient", "always-send": true } ] },
        { "name": "bios", "test": "$not_ipxe option[93].hex == 0x0000",
          "next-server": "$BOOT_SERVER", "boot-file-name": "undionly.kpxe" },
        { "name": "uefi", "test": "$not_ipxe (option[93].hex == 0x0006 or option[93].hex == 0x0007 or option[93].hex == 0x0009)",
          "next-server": "$BOOT_SERVER", "boot-file-name": "ipxe.efi" },
        { "name": "uefi-arm64", "test": "$not_ipxe option[93].hex == 0x000b",
          "next-server": "$BOOT_SERVER", "boot-file-name": "ipxe-arm64.efi" }
    ],
    "subnet4": [
        {
            "id": 1,
            "subnet": "$NET.0/24",
            "interface": "br0",
            "pools": [ { "pool": "$NET.100 - $NET.200" } ],
            "reservations": [ { "hw-address": "$MAC", "ip-address": "$PIN" } ],
            "option-data": [ { "name": "tftp-server-name", "data": "tftp.example" } ]
        }
    ],
    "loggers": [ { "name": "kea-dhcp4", "output_options": [ { "output": "stdout" } ], "severity": "${KEA_SEVERITY:-INFO}", "debuglevel": 99 } ]
}
}
EOF
}

write_agent_cfg() {
    cat >"$TMP/pool.yaml" <<EOF
apiVersion: network.harvesterhci.io/v1alpha1
kind: IPPool
metadata:
  name: testnet
  namespace: default
spec:
  networkName: default/testnet
  ipv4Config:
    serverIP: $SERVER_IP
    cidr: $NET.0/24
    pool:
      start: $NET.100
      end: $NET.200
    leaseTime: 3600
    networkBoot:
      nextServer: $BOOT_SERVER
      tftpServerName: tftp.example
      bootFiles:
        bios: undionly.kpxe
        uefi: ipxe.efi
        uefiArm64: ipxe-arm64.efi
        uefiHttp: http://$BOOT_SERVER/ipxe.efi
      ipxeScript: http://$BOOT_SERVER/boot.ipxe
---
apiVersion: network.harvesterhci.io/v1alpha1
kind: VirtualMachineNetworkConfig
metadata:
  name: pxe
  namespace: default
spec:
  vmName: pxe
  networkConfigs:
    - networkName: default/testnet
      macAddress: "$MAC"
      ipAddress: $PIN
EOF
}

listening67() { ip netns exec "$SRV" ss -H -uln 'sport = :67' | grep -q .; }

run_cases() { # SIDE: every case's line into $TMP/SIDE.lines
    local side=$1 c
    : >"$TMP/$side.lines"
    for c in "${CASES[@]}"; do
        ip netns exec "$TAG-pxe" "$CRAFT" eth0 "$c" >>"$TMP/$side.lines" 2>>"$TMP/craft.err" ||
            echo "$c error(exit $?)" >>"$TMP/$side.lines"
    done
}

SERVER_PID=
stop_server() { [ -n "$SERVER_PID" ] && stop_pid "$SERVER_PID"; SERVER_PID=; }

if [ $want_kea = 1 ]; then
    write_kea
    # Kea serves the subnet of an address of its interface
    ip -n "$SRV" addr add "$SERVER_IP/24" dev br0
    ip netns exec "$SRV" env KEA_PIDFILE_DIR="$TMP" KEA_LOCKFILE_DIR="$TMP" \
        kea-dhcp4 -c "$TMP/kea-dhcp4.json" >>"$TMP/kea.log" 2>&1 &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    if wait_for 20 listening67 && kill -0 "$SERVER_PID"; then
        pass "kea-dhcp4 $(kea-dhcp4 -v) listening on br0"
        run_cases kea
    else
        fail "kea-dhcp4 start" "not listening on :67 (log: $TMP/kea.log)"
        sed 's/^/  | /' "$TMP/kea.log"
    fi
    stop_server
    ip -n "$SRV" addr del "$SERVER_IP/24" dev br0
fi
if [ $want_ours = 1 ]; then
    write_agent_cfg
    if start_agent "$TMP/pool.yaml" && wait_for 20 listening67; then
        pass "agent serving DHCPv4 on br0"
        SERVER_PID=$AGENT_PID
        run_cases ours
        # counted by answer (the cases above give each at least once)
        for a in bios uefi uefi-arm64 uefi-http ipxe other; do
            n=$(metric "vmdhcp_agent_boot_replies_total{arch=\"$a\"}")
            if [ "${n%.*}" -gt 0 ] 2>/dev/null; then pass "boot replies counted, arch=$a: $n"
            else fail "boot replies counted, arch=$a" "vmdhcp_agent_boot_replies_total is '$n'"; fi
        done
    else
        fail "agent start" "not serving on br0"
        sed 's/^/  | /' "$TMP/agent.log" | tail -n 30
    fi
    stop_server
    AGENT_PID=
    # the decision log names each boot answer
    check "decision log boot=undionly.kpxe" grep -q "boot=undionly.kpxe" "$TMP/agent.log"
fi
[ -s "$TMP/craft.err" ] && { echo "dhcp-boot-craft stderr:"; sed 's/^/  | /' "$TMP/craft.err"; }

recorded() { # NAME FIELD -> the expectation file's FIELD line of case NAME
    awk -v c="$1" -v f="$2" '$1 == "case" { cur = $2; next }
        cur == c && $1 == f { sub(/^[a-z]+ /, ""); print; exit }' "$EXPECTED" 2>/dev/null
}
got() { awk -v c="$1" '$1 == c { sub(/^[^ ]+ /, ""); print; exit }' "$TMP/$2.lines" 2>/dev/null; }

if [ "${UPDATE:-0}" = 1 ]; then
    out=$TMP/expected.new
    {
        echo "# Network boot differential table: ISC Kea DHCPv4 $(kea-dhcp4 -v 2>/dev/null) against vm-dhcp-agent,"
        echo "# crafted requests (tests/netns/dhcp-boot-craft.c). Written by UPDATE=1 tests/netns/test-dhcp-boot-kea-diff.sh;"
        echo "# every verdict other than \"same\" is a \"### name\" section of docs/network-boot.md."
        for c in "${CASES[@]}"; do
            k=$(got "$c" kea) o=$(got "$c" ours)
            [ $want_kea = 1 ] || k=$(recorded "$c" kea)
            [ $want_ours = 1 ] || o=$(recorded "$c" ours)
            v=$(recorded "$c" verdict)
            if [ "$k" = "$o" ]; then v=same
            else case $v in ""|same) v=UNARGUED ;; esac
            fi
            printf 'case %s\nkea %s\nours %s\nverdict %s\n' "$c" "$k" "$o" "$v"
        done
    } >"$out"
    mkdir -p "$(dirname "$EXPECTED")"
    cp "$out" "$EXPECTED"
    echo "wrote $EXPECTED"
    if [ -f "$DOC" ]; then
        awk -v expf="$EXPECTED" '
            /<!-- table:start/ { print; print "| case | Kea DHCPv4 | vm-dhcp-agent | verdict |"; print "|---|---|---|---|"
                while ((getline l < expf) > 0) {
                    if (l ~ /^case /) c = substr(l, 6)
                    else if (l ~ /^kea /) k = substr(l, 5)
                    else if (l ~ /^ours /) o = substr(l, 6)
                    else if (l ~ /^verdict /) { v = substr(l, 9)
                        if (v != "same" && v != "UNARGUED") v = "[" v "](#" v ")"
                        printf "| %s | `%s` | `%s` | %s |\n", c, k, o, v }
                }
                skip = 1; next }
            /<!-- table:end/ { skip = 0 }
            !skip { print }' "$DOC" >"$DOC.tmp" && mv "$DOC.tmp" "$DOC"
        echo "rewrote the table of $DOC"
    fi
fi

for c in "${CASES[@]}"; do
    v=$(recorded "$c" verdict)
    if [ $want_kea = 1 ]; then
        k=$(got "$c" kea) rk=$(recorded "$c" kea)
        if [ "$k" = "$rk" ]; then pass "kea $c: $k"; else fail "kea $c" "got '$k', recorded '$rk'"; fi
    fi
    if [ $want_ours = 1 ]; then
        o=$(got "$c" ours) ro=$(recorded "$c" ours)
        if [ "$o" = "$ro" ]; then pass "ours $c: $o"; else fail "ours $c" "got '$o', recorded '$ro'"; fi
    fi
    rk=$(recorded "$c" kea) ro=$(recorded "$c" ours)
    case $v in
        same) [ "$rk" = "$ro" ] || fail "verdict $c" "recorded as same, the lines differ" ;;
        ""|UNARGUED) fail "verdict $c" "no argued verdict ('$v')" ;;
        *) if [ "$rk" = "$ro" ]; then fail "verdict $c" "difference '$v' recorded for equal lines"
           elif ! grep -q "^### $v\$" "$DOC"; then fail "verdict $c" "'$v' is not argued in docs/network-boot.md"
           else pass "verdict $c: $v (argued)"; fi ;;
    esac
done
rec_kea=$(sed -n 's/^# Network boot differential table: ISC Kea DHCPv4 \([^ ]*\) .*/\1/p' "$EXPECTED")
if [ $want_kea = 1 ] && [ "$CHECKS_FAIL" != 0 ] && [ "$rec_kea" != "$(kea-dhcp4 -v)" ]; then
    echo "note: the table was recorded with Kea $rec_kea, this is Kea $(kea-dhcp4 -v)"
fi
finish
