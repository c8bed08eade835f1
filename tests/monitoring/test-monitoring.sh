#!/bin/bash
# tests/monitoring/test-monitoring.sh - the chart's monitoring content (part of the `charts`
# test group of tests/run-all.sh):
# - charts/vm-dhcp/files/rules.yaml: `promtool check rules`, `promtool test rules` with
#   tests/monitoring/rules-test.yaml, every alert both firing and silent there, each with a
#   severity, a summary and a description with a "What to do" hint;
# - charts/vm-dhcp/files/dashboard.json: JSON (jq), unique panel ids, every query on the
#   ${datasource} variable, every expression valid PromQL (promtool check rules over them as
#   recording rules), the panels the operator view needs (admission's too);
# - every metric name the rules and the dashboard use is in tests/monitoring/metric-names.txt
#   (the agreed names), and each agent and common name there is one the sources export;
# - the checks themselves: broken copies (a misspelt metric name, a threshold moved, a reason
#   no longer left out, a standby's drops counted, a syntax error, bad JSON, an unknown metric in
#   the dashboard) must fail.
# promtool: $PROMTOOL, else /var/cache/vm-dhcp/promtool/promtool (scripts/install-deps puts it
# there), else /usr/bin/promtool or PATH. Without it the checks that need it are skipped and
# the script exits 77 (when everything else passed). Exit 0 all passed, 1 a check failed.
# ok/bad return 0, so "test && ok || bad" is an if/else; sed and jq programs are single-quoted.
# shellcheck disable=SC2015,SC2016
set -u
cd "$(dirname "$0")/../.." || exit 1
CHART=${CHART:-charts/vm-dhcp}
RULES=$CHART/files/rules.yaml
DASH=$CHART/files/dashboard.json
TESTS=tests/monitoring/rules-test.yaml
NAMES=tests/monitoring/metric-names.txt
BUILD=${BUILD:-build}
Y2J=$BUILD/e2e/yaml2json
PROMTOOL_CACHE=${PROMTOOL_CACHE:-/var/cache/vm-dhcp/promtool}
fails=0
checks=0
notes=()
ok() { checks=$((checks + 1)); echo "  ok    $*"; }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "  FAIL  $*"; }

command -v jq >/dev/null || { echo "test-monitoring: jq is required (scripts/install-deps)" >&2; exit 1; }
command -v perl >/dev/null || { echo "test-monitoring: perl is required" >&2; exit 1; }
make -s --no-print-directory "$Y2J" >/dev/null || { echo "test-monitoring: cannot build $Y2J" >&2; exit 1; }
PROMTOOL=${PROMTOOL:-}
if [ -z "$PROMTOOL" ]; then
    for p in "$PROMTOOL_CACHE/promtool" /usr/bin/promtool "$(command -v promtool 2>/dev/null)"; do
        [ -n "$p" ] && [ -x "$p" ] && { PROMTOOL=$p; break; }
    done
fi
if [ -n "$PROMTOOL" ] && ! "$PROMTOOL" --version >/dev/null 2>&1; then
    echo "test-monitoring: $PROMTOOL does not run" >&2
    PROMTOOL=
fi
tmp=$(mktemp -d /tmp/test-monitoring.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# metric_names: PromQL expressions on stdin, separated by NUL; prints the metric names they
# select, one per line. Label matchers, ranges, grouping label lists, string literals,
# function and aggregation names, keywords and numbers are not metric names; Grafana's
# label_values(METRIC{…}, LABEL) names METRIC.
metric_names() {
    perl -0 -ne '
        chomp;
        my $e = $_;
        $e =~ s/label_values\(\s*([a-zA-Z_:][\w:]*)[^)]*\)/ $1 /g;
        $e =~ s/"(?:\\.|[^"\\])*"|\x27(?:\\.|[^\x27\\])*\x27//g;
        $e =~ s/\{[^}]*\}//g;
        $e =~ s/\[[^\]]*\]//g;
        $e =~ s/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)//g;
        my %kw = map { $_ => 1 } qw(and or unless by without on ignoring group_left group_right
            bool offset inf nan Inf NaN);
        while ($e =~ /(?<![\w.\$])([a-zA-Z_:][\w:]*)(\s*\()?/g) {
            next if defined $2 || $kw{$1};
            print "$1\n";
        }'
}
# known NAME: NAME is in metric-names.txt (a histogram's _bucket/_sum/_count too)
known() {
    awk -v n="$1" '!/^#/ && NF >= 2 {
        if ($1 == n) f = 1
        if ($2 == "histogram" && (n == $1 "_bucket" || n == $1 "_sum" || n == $1 "_count")) f = 1
    } END { exit !f }' "$NAMES"
}
# check_names LABEL FILE_OF_NAMES: every name known
check_names() {
    local label=$1 file=$2 unknown
    unknown=$(sort -u "$file" | while read -r n; do known "$n" || echo "$n"; done)
    if [ ! -s "$file" ]; then
        bad "$label: no metric name found (extraction broken?)"
    elif [ -z "$unknown" ]; then
        ok "$label: $(sort -u "$file" | wc -l) metric names, all agreed ($NAMES)"
    else
        bad "$label: metric names not in $NAMES: $(tr '\n' ' ' <<<"$unknown")"
    fi
}

# rules_checks RULES_FILE: the rules file's own checks (no promtool)
rules_checks() {
    local f=$1 json
    if ! json=$("$Y2J" "$f" 2>"$tmp/err" | head -n 1) || [ -z "$json" ]; then
        bad "$f does not parse: $(cat "$tmp/err")"
        return
    fi
    jq -e '(.groups | length) > 0 and all(.groups[]; (.rules | length) > 0)' <<<"$json" >/dev/null &&
        ok "$f: $(jq '[.groups[].rules[]] | length' <<<"$json") rules in $(jq '.groups | length' <<<"$json") groups" ||
        bad "$f: no groups or an empty group"
    local poor
    poor=$(jq -r '.groups[].rules[] | select(.alert != null) |
        select((.labels.severity | IN("warning", "critical") | not) or
            ((.annotations.summary // "") == "") or
            ((.annotations.description // "") | test("What to do: ") | not)) | .alert' <<<"$json")
    [ -z "$poor" ] && ok "$f: every alert has severity warning|critical, a summary and a \"What to do\" hint" ||
        bad "$f: alerts without severity, summary or hint: $(tr '\n' ' ' <<<"$poor")"
    jq -j '.groups[].rules[] | .expr, "\u0000"' <<<"$json" | metric_names >"$tmp/rule-names"
    check_names "$f" "$tmp/rule-names"
}

# promtool_rules RULES_FILE: promtool check rules + test rules (the tests pointed at the file)
promtool_rules() {
    local f=$1
    if "$PROMTOOL" check rules "$f" >"$tmp/out" 2>&1; then
        ok "promtool check rules $f ($(grep -o '[0-9]* rules found' "$tmp/out"))"
    else
        bad "promtool check rules $f:"; sed 's/^/        /' "$tmp/out"
        return
    fi
    # the tests name the rules file relative to themselves: a copy next to tmp points at $f
    mkdir -p "$tmp/t"
    sed "s|^  - \.\./\.\./charts/vm-dhcp/files/rules\.yaml$|  - $(realpath "$f")|" "$TESTS" >"$tmp/t/rules-test.yaml"
    if ! grep -qF -- "- $(realpath "$f")" "$tmp/t/rules-test.yaml"; then
        bad "$TESTS: rule_files is not ../../charts/vm-dhcp/files/rules.yaml"
        return
    fi
    if "$PROMTOOL" test rules "$tmp/t/rules-test.yaml" >"$tmp/out" 2>&1; then
        ok "promtool test rules $TESTS on $f ($(grep -c '^  - name: ' "$TESTS") test groups)"
    else
        bad "promtool test rules $TESTS on $f:"; head -n 40 "$tmp/out" | sed 's/^/        /'
    fi
}

# dash_checks DASHBOARD_FILE [PROMTOOL_TOO]: JSON, ids, data source, names, PromQL
dash_checks() {
    local f=$1 n missing
    if ! jq -e 'type == "object"' "$f" >/dev/null 2>"$tmp/err"; then
        bad "$f is not a JSON object: $(cat "$tmp/err")"
        return
    fi
    ok "$f parses (jq)"
    jq -e '(.title | length) > 0 and (.uid | test("^[a-zA-Z0-9_-]{1,40}$")) and
        (.schemaVersion | type) == "number"' "$f" >/dev/null &&
        ok "$f: title, uid ($(jq -r .uid "$f")) and schemaVersion" || bad "$f: title, uid or schemaVersion missing"
    jq -e '[.panels[] | ., (.panels // [])[] | .id] | length == (unique | length)' "$f" >/dev/null &&
        ok "$f: $(jq '[.panels[] | select(.type != "row")] | length' "$f") panels, ids unique" ||
        bad "$f: panel ids repeat"
    n=$(jq '[.panels[] | ., (.panels // [])[] | select(.type != "row") |
        select(.datasource.uid != "${datasource}" or
            ((.targets // []) | length == 0 or any(.[]; (.expr // "") == "" or .datasource.uid != "${datasource}")))] | length' "$f")
    [ "$n" = 0 ] && ok "$f: every panel queries, every panel and query on the \${datasource} variable" ||
        bad "$f: $n panels without a query or with a query not on \${datasource}"
    n=$(jq '[.templating.list[] | select(.type == "query" and .datasource.uid != "${datasource}")] | length' "$f")
    [ "$n" = 0 ] && ok "$f: every query variable on the \${datasource} variable" ||
        bad "$f: $n query variables not on \${datasource}"
    jq -e '[.templating.list[] | select(.name == "datasource" and .type == "datasource" and .query == "prometheus")] | length == 1' \
        "$f" >/dev/null && ok "$f: a Prometheus data source variable (the sidecar imports it as is)" ||
        bad "$f: no datasource variable of type prometheus"
    # the queries: panel targets and query variables
    jq -j '(.panels[] | ., (.panels // [])[] | .targets // [] | .[].expr),
        (.templating.list[] | select(.type == "query") | .query | if type == "object" then .query else . end) |
        ., "\u0000"' "$f" >"$tmp/exprs"
    metric_names <"$tmp/exprs" >"$tmp/dash-names"
    check_names "$f" "$tmp/dash-names"
    # what the operator view needs (issue "operator view"): each used by some panel
    missing=
    for m in vmdhcp_ippool_used_addresses vmdhcp_ippool_capacity_addresses vmdhcp_ippool_bindings \
        vmdhcp_agent_replies_sent_total vmdhcp_agent_drops_total vmdhcp_agent_reply_latency_seconds_bucket \
        vmdhcp_agent_serving vmdhcp_agent_kube_synced vmdhcp_controller_leader vmdhcp_reconcile_total \
        vmdhcp_reconcile_errors_total vmdhcp_workqueue_depth vmdhcp_admission_requests_total \
        vmdhcp_admission_duration_seconds_bucket apiserver_admission_webhook_rejection_count; do
        grep -qxF "$m" "$tmp/dash-names" || missing="$missing $m"
    done
    [ -z "$missing" ] && ok "$f: pool usage, bindings, replies, drops, latency, serving/synced, leader, reconciles, queue depth, admission rate/latency/failed calls" ||
        bad "$f: no panel uses$missing"
    jq -e '[.panels[] | ., (.panels // [])[] | .targets // [] | .[].expr] as $e |
        ([$e[] | select(test("drops_total") and (test("by \\(reason\\)") | not))] | length == 0) and
        ([$e[] | select(test("histogram_quantile\\(0\\.5,.*reply_latency"))] | length > 0) and
        ([$e[] | select(test("histogram_quantile\\(0\\.99,.*reply_latency"))] | length > 0)' \
        "$f" >/dev/null && ok "$f: drops by reason, reply latency p50 and p99" ||
        bad "$f: drops not by reason, or no reply latency p50/p99"
    [ -n "$PROMTOOL" ] || return 0
    # every expression valid PromQL: as recording rules, Grafana's variables replaced
    {
        echo "groups:"
        echo "  - name: dashboard"
        echo "    rules:"
        perl -0 -ne 'chomp; next if /^label_values\(/; s/\$__rate_interval|\$__interval|\$__range/5m/g;
            s/\$\{?\w+\}?/.*/g; s/\x27/\x27\x27/g; $i++;
            print "      - record: dashboard_expr_$i\n        expr: \x27$_\x27\n"' <"$tmp/exprs"
    } >"$tmp/dash-rules.yaml"
    if "$PROMTOOL" check rules "$tmp/dash-rules.yaml" >"$tmp/out" 2>&1; then
        ok "$f: every panel expression is valid PromQL (promtool, $(grep -o '[0-9]* rules found' "$tmp/out"))"
    else
        bad "$f: an expression is not valid PromQL:"; sed 's/^/        /' "$tmp/out"
    fi
}

echo "== alerting rules ($RULES)"
rules_checks "$RULES"
if [ -n "$PROMTOOL" ]; then
    promtool_rules "$RULES"
else
    notes+=("promtool check rules / test rules: no promtool (scripts/install-deps puts it in $PROMTOOL_CACHE)")
fi
# every alert fires in some test and is checked silent in another
rj=$("$Y2J" "$RULES" 2>/dev/null | head -n 1)
tj=$("$Y2J" "$TESTS" 2>/dev/null | head -n 1)
for a in $(jq -r '.groups[].rules[] | .alert // empty' <<<"${rj:-{\}}"); do
    fire=$(jq --arg a "$a" '[.tests[].alert_rule_test[] | select(.alertname == $a and (.exp_alerts | length) > 0)] | length' <<<"${tj:-{\}}")
    quiet=$(jq --arg a "$a" '[.tests[].alert_rule_test[] | select(.alertname == $a and (.exp_alerts | length) == 0)] | length' <<<"${tj:-{\}}")
    [ "$fire" -gt 0 ] && [ "$quiet" -gt 0 ] && ok "$TESTS: $a fires ($fire) and stays silent ($quiet)" ||
        bad "$TESTS: $a is tested firing $fire times and silent $quiet times (want both)"
done
[ -n "$rj" ] && [ -n "$tj" ] || bad "$RULES or $TESTS does not parse"

echo "== Grafana dashboard ($DASH)"
dash_checks "$DASH"
[ -n "$PROMTOOL" ] || notes+=("dashboard expressions as PromQL: no promtool")

echo "== agreed metric names ($NAMES) exported by the sources"
while read -r name type who; do
    case $who in
        agent) srcs="agent/*.c dhcp/*.c" ;;
        both) srcs="lib/*.c kube/*.c" ;;
        controller) srcs="controller/*.c kube/*.c lib/*.c" ;;
        # the admission code lands apart from the chart: checked once it is in the tree
        admission)
            srcs=$(ls controller/webhook.c controller/webcert.c 2>/dev/null | tr '\n' ' ')
            if [ -z "$srcs" ]; then
                notes+=("$name (admission): controller/webhook.c and webcert.c are not in the tree yet")
                continue
            fi
            ;;
        *) continue ;;
    esac
    # shellcheck disable=SC2086
    if grep -qF "\"$name\"" $srcs; then
        ok "$name ($type, $who)"
    else
        bad "$name ($who): no \"$name\" in $srcs"
    fi
done < <(grep -v '^#' "$NAMES" | grep .)

echo "== the checks fail on broken input"
mkdir -p "$tmp/m"
# mutate NAME SED_SCRIPT FILE: a copy of FILE changed by SED_SCRIPT (must change it)
mutate() {
    sed -e "$2" "$3" >"$tmp/m/$1"
    if cmp -s "$3" "$tmp/m/$1"; then
        bad "mutation $1 changed nothing in $3 (update this test)"
        return 1
    fi
}
# expect_fail WHAT COMMAND...: the command (a group of checks) must record a failure
expect_fail() {
    local what=$1 before=$fails out
    shift
    out=$("$@" 2>&1; echo "fails=$fails")
    if [ "${out##*fails=}" -gt "$before" ]; then
        ok "$what: caught ($(grep -m1 'FAIL' <<<"$out" | sed 's/^ *FAIL *//' | cut -c1-90)…)"
    else
        bad "$what: not caught"
    fi
}
if mutate misspelt.yaml 's/vmdhcp_agent_serving == 0/vmdhcp_agent_servin == 0/' "$RULES"; then
    expect_fail "rules: a misspelt metric name (names check)" rules_checks "$tmp/m/misspelt.yaml"
    [ -n "$PROMTOOL" ] && expect_fail "rules: a misspelt metric name (promtool test rules)" \
        promtool_rules "$tmp/m/misspelt.yaml"
fi
if [ -n "$PROMTOOL" ]; then
    mutate threshold.yaml 's/^\( *\)> 0\.9$/\1> 0.4/' "$RULES" &&
        expect_fail "rules: NearlyFull at 40 % (the 50 % pool would fire)" promtool_rules "$tmp/m/threshold.yaml"
    mutate reasons.yaml 's/{reason!~"unknown_mac|other_server|not_for_us|declined"}//' "$RULES" &&
        expect_fail "rules: expected drop reasons no longer left out" promtool_rules "$tmp/m/reasons.yaml"
    mutate standby.yaml '/^ *unless on (namespace, pod, reason)$/,/^ *label_replace(vmdhcp_agent_leader == 0, /d' "$RULES" &&
        expect_fail "rules: a standby's not_serving drops no longer left out" promtool_rules "$tmp/m/standby.yaml"
    mutate noabsent.yaml 's/ or absent(vmdhcp_controller_leader)//' "$RULES" &&
        expect_fail "rules: NoLeader without absent()" promtool_rules "$tmp/m/noabsent.yaml"
    mutate denials.yaml 's/, error_type="calling_webhook_error"//' "$RULES" &&
        expect_fail "rules: AdmissionUnavailable counting the API server's refusals for cause" promtool_rules "$tmp/m/denials.yaml"
    mutate ungated.yaml 's/count(max_over_time(vmdhcp_admission_certificate_expiry_timestamp_seconds{job="vm-dhcp-controller"}\[6h\])) > 0,/vector(1),/' "$RULES" &&
        expect_fail "rules: AdmissionUnavailable firing without admission ever serving" promtool_rules "$tmp/m/ungated.yaml"
    mutate syntax.yaml 's/max by (namespace, pool, network) (vmdhcp_ippool_used_addresses)$/max by (namespace, pool, network) (vmdhcp_ippool_used_addresses/' "$RULES" &&
        expect_fail "rules: a PromQL syntax error (promtool check rules)" promtool_rules "$tmp/m/syntax.yaml"
fi
mutate nohint.yaml '0,/What to do: /s/What to do: /Do: /' "$RULES" &&
    expect_fail "rules: an alert without a hint" rules_checks "$tmp/m/nohint.yaml"
mutate badjson.json '0,/"panels"/s/"panels"/panels/' "$DASH" &&
    expect_fail "dashboard: not JSON" dash_checks "$tmp/m/badjson.json"
mutate badname.json 's/vmdhcp_workqueue_depth/vmdhcp_work_queue_depth/' "$DASH" &&
    expect_fail "dashboard: a metric name not agreed" dash_checks "$tmp/m/badname.json"
mutate badds.json '0,/"uid": "\${datasource}"/s/"uid": "\${datasource}"/"uid": "prometheus"/' "$DASH" &&
    expect_fail "dashboard: a variable on a fixed data source" dash_checks "$tmp/m/badds.json"
jq '(.panels[] | select(.type != "row") | .targets[0].datasource.uid) |= "prometheus"' "$DASH" >"$tmp/m/badds2.json"
expect_fail "dashboard: a panel query on a fixed data source" dash_checks "$tmp/m/badds2.json"
if [ -n "$PROMTOOL" ]; then
    mutate badql.json '0,/rate(vmdhcp_agent_drops_total/s/rate(vmdhcp_agent_drops_total/rate(vmdhcp_agent_drops_total +/' "$DASH" &&
        expect_fail "dashboard: invalid PromQL" dash_checks "$tmp/m/badql.json"
fi

echo "== not checked"
for n in "${notes[@]}"; do echo "  -     $n"; done
echo "test-monitoring: $checks checks, $fails failed${PROMTOOL:+ (promtool: $PROMTOOL)}"
[ "$fails" = 0 ] || exit 1
if [ -z "$PROMTOOL" ]; then
    echo "SKIP promtool checks: promtool not found (\$PROMTOOL, $PROMTOOL_CACHE/promtool, /usr/bin/promtool, PATH); scripts/install-deps fetches it"
    exit 77
fi
exit 0
