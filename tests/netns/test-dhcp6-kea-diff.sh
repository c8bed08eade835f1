#!/bin/bash
# tests/netns/test-dhcp6-kea-diff.sh - the DHCPv6 differential table: crafted messages
# (build/tests/dhcp6-craft, one line per case) against ISC Kea DHCPv6 and against the agent
# (local mode), both serving the same pool on the same bridge, compared with the table checked in
# as tests/data/dhcp6-kea-diff.expected (argued in docs/dhcpv6-vs-kea.md):
#   case NAME
#   kea LINE        what Kea answered when the table was recorded
#   ours LINE       what the agent answered ("pending": not recorded yet)
#   verdict V       "same" (the lines are equal) or the name of an argued difference
#                   (a "### name" heading of docs/dhcpv6-vs-kea.md)
# Fails when either server's answer differs from its recorded line (so both are asserted: a
# change in Kea's behaviour shows as well as one in ours), when a "same" verdict is recorded for
# two different lines, or when a difference is not argued in the doc.
# UPDATE=1 rewrites the expectation file from this run (verdicts of unchanged pairs kept,
# "same" computed, new differences marked UNARGUED, which fails until named and argued) and the
# table of docs/dhcpv6-vs-kea.md.
# ONLY=kea|ours runs one side. Needs kea-dhcp6 (Debian's kea-dhcp6-server, scripts/install-deps).
#
# Topology (lib.sh): $SRV with br0; namespaces known (00:16:3e:66:00:01, the pinned VM), unknown
# (00:16:3e:66:00:02, no VMNetCfg), kvm (52:54:00:66:00:03, pinned too) and relay
# (00:16:3e:66:00:09, a relay agent speaking for the known MAC with RFC 6939's option 79). The servers run one after the other on br0, each fresh.
. "$(dirname "$0")/lib.sh"
CRAFT=${CRAFT:-$ROOT/build/tests/dhcp6-craft}
EXPECTED=${EXPECTED:-$ROOT/tests/data/dhcp6-kea-diff.expected}
DOC=$ROOT/docs/dhcpv6-vs-kea.md
# Universally administered MACs (Xen's OUI): Kea finds a direct client's MAC only in an EUI-64
# link-local address with the universal bit (RFC 4291 App. A); KVM's 52:54:00 MACs are locally
# administered, which the kvm namespace shows (a case of its own).
KNOWN_MAC=00:16:3e:66:00:01
UNKNOWN_MAC=00:16:3e:66:00:02
RELAY_MAC=00:16:3e:66:00:09
KVM_MAC=52:54:00:66:00:03
PIN=fd00:66::150
KVM_PIN=fd00:66::153

CASES=(solicit solicit-unknown solicit-kvm-mac solicit-rapid request request-unknown renew rebind renew-nobinding
    confirm-onlink confirm-offlink inforeq bad-optlen-past-end bad-truncated-header bad-ia-na-short
    bad-iaaddr-short bad-clientid-empty solicit-no-clientid solicit-ia-ta solicit-ia-pd
    solicit-unassigned-ia solicit-serverid request-wrong-serverid request-no-serverid
    request-unicast solicit-two-ia-na relay-solicit release decline)
# which namespace sends each case
case_ns() {
    case $1 in
        *-unknown) echo unknown ;;
        *-kvm-mac) echo kvm ;;
        relay-*) echo relay ;;
        *) echo known ;;
    esac
}

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces)"
command -v ip >/dev/null || skip "ip is not installed"
[ -x "$CRAFT" ] || { echo "FAIL: $CRAFT not built (make build/tests/dhcp6-craft)"; exit 1; }
[ -f "$EXPECTED" ] || [ "${UPDATE:-0}" = 1 ] || { echo "FAIL: no $EXPECTED"; exit 1; }
ONLY=${ONLY:-}
pending=0
if [ -f "$EXPECTED" ] && [ "${UPDATE:-0}" != 1 ] && grep -q '^ours pending$' "$EXPECTED"; then
    pending=1
fi
want_kea=1 want_ours=1
[ "$ONLY" = ours ] && want_kea=0
[ "$ONLY" = kea ] && want_ours=0
[ $pending = 1 ] && want_ours=0
if [ $want_kea = 1 ] && ! command -v kea-dhcp6 >/dev/null; then
    skip "kea-dhcp6 is not installed (apt-get install kea-dhcp6-server; scripts/install-deps)"
fi
[ $want_ours = 1 ] && [ ! -x "$AGENT" ] && { echo "FAIL: $AGENT not built (make)"; exit 1; }
ip netns add "$TAG-probe" 2>/dev/null || skip "cannot create network namespaces here"
ip netns del "$TAG-probe"
TMP=$(mktemp -d "/tmp/vmdhcp-kea6diff.$TAG.XXXXXX")
trap cleanup EXIT
trap 'exit 130' INT TERM

# no duplicate address detection: the link-local addresses are usable at once
nodad() { ip netns exec "$1" sysctl -qw net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0; }
make_server
nodad "$SRV"
ip netns exec "$SRV" sysctl -qw net.ipv6.conf.br0.accept_dad=0
# br0 keeps one MAC, so one link-local address: a bridge given no address of its own takes its
# lowest port's as ports join, and its link-local address changed under a server that had just
# read it (Kea: "Failed to bind socket to fe80::...: Cannot assign requested address"). Down and
# up again: the link-local address is made anew from the fixed MAC, without DAD.
ip -n "$SRV" link set br0 down
ip -n "$SRV" link set br0 address 02:00:00:66:00:fe
ip -n "$SRV" link set br0 up
for v in known:$KNOWN_MAC unknown:$UNKNOWN_MAC relay:$RELAY_MAC kvm:$KVM_MAC; do
    n=${v%%:*} mac=${v#*:}
    ip netns add "$TAG-$n"; NSES+=("$TAG-$n")
    nodad "$TAG-$n"
    ip -n "$TAG-$n" link set lo up
    ip -n "$SRV" link add "p-$n" type veth peer name eth0 netns "$TAG-$n"
    ip -n "$TAG-$n" link set eth0 address "$mac"
    ip netns exec "$TAG-$n" sysctl -qw net.ipv6.conf.eth0.accept_dad=0
    ip -n "$SRV" link set "p-$n" master br0 up
    ip -n "$TAG-$n" link set eth0 up
done
ll_of() { ip -n "$1" -6 -o addr show dev "$2" scope link | awk '{ sub(/\/.*/, "", $4); print $4 }' | head -n1; }
have_ll() { [ -n "$(ll_of "$SRV" br0)" ] && [ -n "$(ll_of "$TAG-known" eth0)" ] &&
    [ -n "$(ll_of "$TAG-unknown" eth0)" ] && [ -n "$(ll_of "$TAG-relay" eth0)" ] &&
    [ -n "$(ll_of "$TAG-kvm" eth0)" ]; }
wait_for 20 have_ll || { echo "FAIL: no link-local addresses"; exit 1; }
SRV_LL=$(ll_of "$SRV" br0)
[ "$SRV_LL" = fe80::ff:fe66:fe ] || { echo "FAIL: br0's link-local address is $SRV_LL, not fe80::ff:fe66:fe (from its MAC)"; exit 1; }

write_kea() {
    cat >"$TMP/kea-dhcp6.json" <<EOF
{
"Dhcp6": {
    "interfaces-config": { "interfaces": [ "br0" ] },
    "data-directory": "$TMP",
    "server-id": { "type": "LL", "persist": false },
    "lease-database": { "type": "memfile", "persist": false, "lfc-interval": 0 },
    "mac-sources": [ "client-link-addr-option", "ipv6-link-local" ],
    "host-reservation-identifiers": [ "hw-address" ],
    "preferred-lifetime": 3000,
    "valid-lifetime": 4000,
    "renew-timer": 1500,
    "rebind-timer": 2400,
    "subnet6": [
        {
            "id": 1,
            "subnet": "fd00:66::/64",
            "interface": "br0",
            "rapid-commit": true,
            "pools": [ { "pool": "fd00:66::100 - fd00:66::1ff" } ],
            "reservations": [ { "hw-address": "$KNOWN_MAC", "ip-addresses": [ "$PIN" ] },
                              { "hw-address": "$KVM_MAC", "ip-addresses": [ "$KVM_PIN" ] } ],
            "option-data": [
                { "name": "dns-servers", "data": "fd00:66::53" },
                { "name": "domain-search", "data": "vm.test" }
            ]
        }
    ],
    "loggers": [ { "name": "kea-dhcp6", "output_options": [ { "output": "stdout" } ], "severity": "${KEA_SEVERITY:-INFO}", "debuglevel": 99 } ]
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
    serverIP: 10.66.0.1
    cidr: 10.66.0.0/24
    pool:
      start: 10.66.0.100
      end: 10.66.0.200
  ipv6Config:
    cidr: fd00:66::/64
    serverIP: fd00:66::1
    pool:
      start: fd00:66::100
      end: fd00:66::1ff
    dns:
      - fd00:66::53
    domainSearch:
      - vm.test
    preferredLifetime: 3000
    validLifetime: 4000
    rapidCommit: true
---
apiVersion: network.harvesterhci.io/v1alpha1
kind: VirtualMachineNetworkConfig
metadata:
  name: known
  namespace: default
spec:
  vmName: known
  networkConfigs:
    - networkName: default/testnet
      macAddress: "$KNOWN_MAC"
      ipAddress: 10.66.0.150
      ipv6Address: $PIN
---
apiVersion: network.harvesterhci.io/v1alpha1
kind: VirtualMachineNetworkConfig
metadata:
  name: kvm
  namespace: default
spec:
  vmName: kvm
  networkConfigs:
    - networkName: default/testnet
      macAddress: "$KVM_MAC"
      ipAddress: 10.66.0.153
      ipv6Address: $KVM_PIN
EOF
}

listening547() { ip netns exec "$SRV" ss -H -uln 'sport = :547' | grep -q .; }

# run_cases SIDE: every case's line into $TMP/SIDE.lines ("NAME LINE...")
run_cases() {
    local side=$1 c ns duid env
    : >"$TMP/$side.lines"
    duid=$(ip netns exec "$TAG-known" "$CRAFT" eth0 server-duid 2>>"$TMP/craft.err")
    for c in "${CASES[@]}"; do
        ns=$(case_ns "$c")
        env=(CRAFT_SERVER_DUID="$duid")
        [ "$ns" = relay ] && env+=(CRAFT_CLIENT_MAC="$KNOWN_MAC")
        ip netns exec "$TAG-$ns" env "${env[@]}" "$CRAFT" eth0 "$c" "$SRV_LL" >>"$TMP/$side.lines" 2>>"$TMP/craft.err" ||
            echo "$c error(exit $?)" >>"$TMP/$side.lines"
    done
}

SERVER_PID=
stop_server() { [ -n "$SERVER_PID" ] && stop_pid "$SERVER_PID"; SERVER_PID=; }

if [ $want_kea = 1 ]; then
    write_kea
    ip netns exec "$SRV" env KEA_PIDFILE_DIR="$TMP" KEA_LOCKFILE_DIR="$TMP" \
        kea-dhcp6 -c "$TMP/kea-dhcp6.json" >>"$TMP/kea.log" 2>&1 &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    if wait_for 20 listening547 && kill -0 "$SERVER_PID"; then
        pass "kea-dhcp6 $(kea-dhcp6 -v) listening on br0"
        run_cases kea
    else
        fail "kea-dhcp6 start" "not listening on :547 (log: $TMP/kea.log)"
        sed 's/^/  | /' "$TMP/kea.log"
    fi
    stop_server
fi
if [ $want_ours = 1 ]; then
    write_agent_cfg
    # listening547: the agent's UDP :547 socket (the one that keeps the kernel from answering
    # with port unreachable) is opened with its DHCPv6 service
    if start_agent "$TMP/pool.yaml" && wait_for 20 listening547; then
        pass "agent serving DHCPv6 on br0"
        SERVER_PID=$AGENT_PID
        run_cases ours
    else
        fail "agent start" "not serving DHCPv6 on br0"
        sed 's/^/  | /' "$TMP/agent.log" | tail -n 30
    fi
    stop_server
    AGENT_PID=
fi
[ -s "$TMP/craft.err" ] && { echo "dhcp6-craft stderr:"; sed 's/^/  | /' "$TMP/craft.err"; }

# recorded NAME FIELD -> the expectation file's FIELD line of case NAME
recorded() {
    awk -v c="$1" -v f="$2" '$1 == "case" { cur = $2; next }
        cur == c && $1 == f { sub(/^[a-z]+ /, ""); print; exit }' "$EXPECTED" 2>/dev/null
}
got() { awk -v c="$1" '$1 == c { sub(/^[^ ]+ /, ""); print; exit }' "$TMP/$2.lines" 2>/dev/null; }

if [ "${UPDATE:-0}" = 1 ]; then
    out=$TMP/expected.new
    {
        echo "# DHCPv6 differential table: ISC Kea DHCPv6 $(kea-dhcp6 -v 2>/dev/null) against vm-dhcp-agent,"
        echo "# crafted messages (tests/netns/dhcp6-craft.c). Written by UPDATE=1 tests/netns/test-dhcp6-kea-diff.sh;"
        echo "# every verdict other than \"same\" is a \"### name\" section of docs/dhcpv6-vs-kea.md."
        for c in "${CASES[@]}"; do
            k=$(got "$c" kea) o=$(got "$c" ours)
            [ $want_kea = 1 ] || k=$(recorded "$c" kea)
            [ $want_ours = 1 ] || o=$(recorded "$c" ours)
            [ -n "$o" ] || o=pending
            [ -n "$k" ] || k=pending
            v=$(recorded "$c" verdict)
            if [ "$o" = pending ]; then v=pending
            elif [ "$k" = "$o" ]; then v=same
            else case $v in ""|same|pending) v=UNARGUED ;; esac
            fi
            printf 'case %s\nkea %s\nours %s\nverdict %s\n' "$c" "$k" "$o" "$v"
        done
    } >"$out"
    mkdir -p "$(dirname "$EXPECTED")"
    cp "$out" "$EXPECTED"
    echo "wrote $EXPECTED"
    # the doc's table between its markers, from the expectation file
    awk -v expf="$EXPECTED" '
        /<!-- table:start/ { print; print "| case | Kea DHCPv6 | vm-dhcp-agent | verdict |"; print "|---|---|---|---|"
            while ((getline l < expf) > 0) {
                if (l ~ /^case /) c = substr(l, 6)
                else if (l ~ /^kea /) k = substr(l, 5)
                else if (l ~ /^ours /) o = substr(l, 6)
                else if (l ~ /^verdict /) { v = substr(l, 9)
                    if (v != "same" && v != "pending" && v != "UNARGUED") v = "[" v "](#" v ")"
                    printf "| %s | `%s` | `%s` | %s |\n", c, k, o, v }
            }
            skip = 1; next }
        /<!-- table:end/ { skip = 0 }
        !skip { print }' "$DOC" >"$DOC.tmp" && mv "$DOC.tmp" "$DOC"
    echo "rewrote the table of $DOC"
    grep -q '^ours pending$' "$EXPECTED" && pending=1
    cat "$EXPECTED"
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
    [ $pending = 1 ] && continue
    rk=$(recorded "$c" kea) ro=$(recorded "$c" ours)
    case $v in
        same) [ "$rk" = "$ro" ] || fail "verdict $c" "recorded as same, the lines differ" ;;
        ""|UNARGUED|pending) fail "verdict $c" "no argued verdict ('$v')" ;;
        *) if [ "$rk" = "$ro" ]; then fail "verdict $c" "difference '$v' recorded for equal lines"
           elif ! grep -q "^### $v\$" "$DOC"; then fail "verdict $c" "'$v' is not argued in docs/dhcpv6-vs-kea.md"
           else pass "verdict $c: $v (argued)"; fi ;;
    esac
done
rec_kea=$(sed -n 's/^# DHCPv6 differential table: ISC Kea DHCPv6 \([^ ]*\) .*/\1/p' "$EXPECTED")
if [ $want_kea = 1 ] && [ "$CHECKS_FAIL" != 0 ] && [ "$rec_kea" != "$(kea-dhcp6 -v)" ]; then
    echo "note: the table was recorded with Kea $rec_kea, this is Kea $(kea-dhcp6 -v)"
fi
if [ $pending = 1 ] && [ "$CHECKS_FAIL" = 0 ]; then
    echo "$(basename "$0"): Kea's column: $CHECKS_PASS passed"
    skip "our column of $EXPECTED is pending: the agent's DHCPv6 side was not recorded yet"
fi
finish
