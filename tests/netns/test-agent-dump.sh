#!/bin/bash
# tests/netns/test-agent-dump.sh - the agent's --enable-cache-dump-api: GET /leases on its HTTP
# endpoint answers the bindings it serves in the Go project's JSON (upstream
# pkg/server/handler.go listLeaseHandler: a map MAC -> the lease as JSON text, byte for byte);
# without the flag /leases is not served (404), as upstream's; the flag without --listen is
# refused (exit 2).
. "$(dirname "$0")/lib.sh"
require jq

make_server
cfg=$TMP/pool.yaml
write_pool "$cfg"
vmnetcfg "$cfg" vm-a 52:54:00:dd:00:01 "$NET.150"
vmnetcfg "$cfg" vm-b 02:00:00:00:00:0a "$NET.101"

leases() { ip netns exec "$SRV" curl -s -o "$TMP/leases.out" -w '%{http_code}' "http://127.0.0.1:$HTTP_PORT/leases"; }
lease_of() { # IP: upstream's DHCPLease.String() for the pool of write_pool, escaped as a JSON string
    printf '{\\"ServerIP\\":\\"%s\\",\\"ClientIP\\":\\"%s\\",\\"SubnetMask\\":\\"////AA==\\",\\"Router\\":\\"%s\\",\\"DNS\\":[\\"%s\\"],\\"DomainName\\":\\"vm.test\\",\\"DomainSearch\\":[\\"vm.test\\",\\"svc.vm.test\\"],\\"NTP\\":null,\\"LeaseTime\\":120}' \
        "$SERVER_IP" "$1" "$NET.1" "$NET.53"
}
want="{\"02:00:00:00:00:0a\":\"$(lease_of "$NET.101")\",\"52:54:00:dd:00:01\":\"$(lease_of "$NET.150")\"}"

# 1. with the flag
if start_agent "$cfg" --enable-cache-dump-api; then
    code=$(leases)
    check "/leases: 200 (got $code)" test "$code" = 200
    check "/leases: upstream's JSON, byte for byte" test "$(cat "$TMP/leases.out")" = "$want"
    check "/leases: valid JSON, each lease too" \
        jq -e '(.["52:54:00:dd:00:01"] | fromjson | .ClientIP) == "'"$NET.150"'"' "$TMP/leases.out" >/dev/null
    ctype=$(ip netns exec "$SRV" curl -s -o /dev/null -w '%{content_type}' "http://127.0.0.1:$HTTP_PORT/leases")
    check "/leases: Content-Type application/json (got $ctype)" test "$ctype" = application/json
    stop_pid "$AGENT_PID"; AGENT_PID=
else
    fail "agent with --enable-cache-dump-api" "did not start"
fi

# 2. without it: not served
if start_agent "$cfg"; then
    code=$(leases)
    check "no flag: /leases 404 (got $code)" test "$code" = 404
    stop_pid "$AGENT_PID"; AGENT_PID=
else
    fail "agent without the flag" "did not start"
fi

# 3. the flag without an HTTP endpoint
out=$(ip netns exec "$SRV" "$AGENT" --config "$cfg" --interface br0 --enable-cache-dump-api 2>&1); rc=$?
check "no --listen: exit 2 (got $rc)" test "$rc" = 2
check "no --listen: says why" grep -qF -- '--enable-cache-dump-api needs --listen' <<<"$out"
[ "$CHECKS_FAIL" = 0 ] || show_logs
finish
