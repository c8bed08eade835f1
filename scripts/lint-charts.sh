#!/bin/bash
# scripts/lint-charts.sh - check the Helm chart charts/vm-dhcp without helm (not packaged for
# Debian 12): every non-template YAML file parses, Chart.yaml's fields, chart crds/ == crds/,
# every .Values.X.Y a template uses exists in values.yaml, the controller's RBAC covers what
# the controller does (from its sources), the Deployment passes only flags the controller
# knows (from `vm-dhcp-controller --help`), with a value where one is needed (one of the
# listed choices when values.yaml fixes it, e.g. --log-level), and every
# required one. With helm on PATH it also runs `helm lint` and `helm template`.
# Prints what was and was not checked. Exit 0 when every check passed, 1 otherwise.
# Needs jq and builds build/e2e/yaml2json and build/vm-dhcp-controller (make).
# ok/bad always return 0, so "test && ok || bad" is an if/else; word lists are identifiers.
# shellcheck disable=SC2015,SC2013
set -u
cd "$(dirname "$0")/.." || exit 1
CHART=${CHART:-charts/vm-dhcp}
BUILD=${BUILD:-build}
Y2J=$BUILD/e2e/yaml2json
CTL=$BUILD/vm-dhcp-controller
fails=0
checks=0
notes=()

ok() { checks=$((checks + 1)); echo "  ok    $*"; }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "  FAIL  $*"; }
not_checked() { notes+=("$*"); }

command -v jq >/dev/null || { echo "lint-charts: jq is required (scripts/install-deps)" >&2; exit 1; }
if ! make -s --no-print-directory "$Y2J" "$CTL" >/dev/null; then
    echo "lint-charts: cannot build $Y2J and $CTL" >&2
    exit 1
fi
tmp=$(mktemp -d /tmp/lint-charts.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

# A template with its {{ }} actions neutralised, so its YAML shape can be parsed: a plain
# {{ .Values.x.y }} becomes the scalar values.yaml gives it, lines that hold only an action
# (include | nindent, with, if, end) go, other inline actions become "tmpl".
detemplate() {
    sed -E -f "$tmp/values.sed" -e '/^[[:space:]]*\{\{.*\}\}[[:space:]]*$/d' \
        -e 's/\{\{[^}]*\}\}/tmpl/g' "$1"
}

echo "== YAML files parse (yaml2json)"
for f in "$CHART"/Chart.yaml "$CHART"/values.yaml "$CHART"/crds/*.yaml; do
    if "$Y2J" "$f" >"$tmp/out.json" 2>"$tmp/err"; then
        ok "$f"
    else
        bad "$f: $(cat "$tmp/err")"
    fi
done

echo "== chart crds/ holds the files of crds/"
for f in crds/*.yaml; do
    c=$CHART/crds/$(basename "$f")
    if [ ! -e "$c" ]; then
        bad "$c missing (helm installs CRDs from the chart's crds/)"
    elif cmp -s "$f" "$c"; then
        ok "$c == $f$( [ -L "$c" ] && echo " (symlink to $(readlink "$c"))")"
    else
        bad "$c differs from $f"
    fi
done
for c in "$CHART"/crds/*; do
    [ -e "crds/$(basename "$c")" ] || bad "$c has no counterpart in crds/"
done
for c in "$CHART"/crds/*.yaml; do
    k=$("$Y2J" "$c" 2>/dev/null | jq -r '.kind' | sort -u | tr '\n' ' ')
    [ "$k" = "CustomResourceDefinition " ] && ok "$c is a CustomResourceDefinition" ||
        bad "$c: kind '$k', want CustomResourceDefinition only"
done

echo "== Chart.yaml"
chart=$("$Y2J" "$CHART/Chart.yaml" 2>/dev/null | head -n 1)
[ -n "$chart" ] || chart='{}'
v=$(jq -r '.apiVersion // ""' <<<"$chart")
[ "$v" = v2 ] && ok "apiVersion v2" || bad "apiVersion '$v', want v2"
v=$(jq -r '.name // ""' <<<"$chart")
[ "$v" = "$(basename "$CHART")" ] && ok "name $v (the directory's)" ||
    bad "name '$v', want $(basename "$CHART")"
v=$(jq -r '.version // "" | tostring' <<<"$chart")
[[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] && ok "version $v (SemVer 2)" ||
    bad "version '$v' is not SemVer 2"
v=$(jq -r '.appVersion // "" | tostring' <<<"$chart")
[ -n "$v" ] && ok "appVersion $v" || bad "appVersion missing"
v=$(jq -r '.type // "application"' <<<"$chart")
[[ $v =~ ^(application|library)$ ]] && ok "type $v" || bad "type '$v'"

echo "== .Values keys used by the templates exist in values.yaml"
values=$("$Y2J" "$CHART/values.yaml" 2>/dev/null | head -n 1)
[ -n "$values" ] || values='{}'
# sed script: {{ .Values.a.b }} -> the scalar (identifier-like values only; others stay)
jq -r 'paths(scalars) as $p | [($p | map(tostring) | join(".")), (getpath($p) | tostring)] |
    select(.[1] | test("^[A-Za-z0-9_.:/-]+$")) |
    "s|\\{\\{-? *\\.Values\\.\(.[0] | gsub("\\."; "\\.")) *-?\\}\\}|\(.[1])|g"' \
    <<<"$values" >"$tmp/values.sed"
keys=$(grep -ohE '\.Values(\.[A-Za-z_][A-Za-z0-9_]*)+' "$CHART"/templates/* | sort -u)
[ -n "$keys" ] || bad "no .Values reference found in $CHART/templates (grep broken?)"
for k in $keys; do
    path=$(jq -cn --arg k "${k#.Values.}" '$k | split(".")')
    if jq -e --argjson p "$path" '
        def has_path($p): ($p | length) == 0 or
            (type == "object" and has($p[0]) and (.[$p[0]] | has_path($p[1:])));
        has_path($p)' <<<"$values" >/dev/null; then
        ok "$k"
    else
        bad "$k is used by a template but not set in values.yaml"
    fi
done

echo "== controller RBAC covers what the controller does"
# group|resource|verbs|the identifier that shows the controller uses it (controller/, kube/ users)
rbac_table='network.harvesterhci.io|ippools|get list watch update patch|ctrl_res_ippools
network.harvesterhci.io|ippools/status|update patch|kube_update_status(c->client, &ctrl_res_ippools
network.harvesterhci.io|virtualmachinenetworkconfigs|get list watch create update patch|ctrl_res_vmnetcfgs
network.harvesterhci.io|virtualmachinenetworkconfigs/status|update patch|kube_update_status(c->client, &ctrl_res_vmnetcfgs
kubevirt.io|virtualmachines|get list watch|ctrl_res_vms
k8s.cni.cncf.io|network-attachment-definitions|get list watch|ctrl_res_nads
apps|deployments|get list watch create update delete|ctrl_res_deployments
coordination.k8s.io|leases|get create update|kube_leader_new
|events|create patch|kube_recorder_new
|nodes|get list watch|kube_res_nodes
|pods|get list watch|kube_res_pods'
detemplate "$CHART/templates/rbac.yaml" >"$tmp/rbac.yaml"
if "$Y2J" "$tmp/rbac.yaml" >"$tmp/rbac.json" 2>"$tmp/err"; then
    ok "templates/rbac.yaml parses (actions neutralised)"
else
    bad "templates/rbac.yaml does not parse: $(cat "$tmp/err")"
fi
# the rules of every Role/ClusterRole named <release>-controller
rules=$(jq -cs '[.[] | select((.kind == "ClusterRole" or .kind == "Role") and
    (.metadata.name | endswith("-controller"))) | .rules[]]' "$tmp/rbac.json" 2>/dev/null)
[ -n "$rules" ] || rules='[]'
sources=$(cat controller/*.c)
while IFS='|' read -r group res verbs marker; do
    if ! grep -qF -- "$marker" <<<"$sources"; then
        ok "${group:-core}/$res: not used by the controller (no $marker in controller/), not required"
        continue
    fi
    missing=$(jq -r --arg g "$group" --arg r "$res" --arg v "$verbs" '
        . as $rules | ($v | split(" ")) - ([$rules[] |
            select(((.apiGroups // []) | index($g) or index("*")) and
                   ((.resources // []) | index($r) or index("*"))) |
            .verbs[]] | if index("*") then ($v | split(" ")) else . end) | join(" ")' \
        <<<"$rules")
    if [ -z "$missing" ]; then
        ok "${group:-core}/$res: $verbs"
    else
        bad "${group:-core}/$res: the controller role lacks verbs: $missing"
    fi
done <<<"$rbac_table"
# a resource the controller uses that the table above does not know
for id in $(grep -ohE '\b(ctrl|kube)_res_[a-z_]+\b' controller/*.c | sort -u); do
    grep -qF "$id" <<<"$rbac_table" ||
        bad "controller/ uses $id: add its RBAC rule to the chart and to this script's table"
done

echo "== controller Deployment flags match vm-dhcp-controller --help"
help=$("$CTL" --help 2>&1)
detemplate "$CHART/templates/deployment.yaml" >"$tmp/deploy.yaml"
if "$Y2J" "$tmp/deploy.yaml" >"$tmp/deploy.json" 2>"$tmp/err"; then
    ok "templates/deployment.yaml parses (actions neutralised)"
else
    bad "templates/deployment.yaml does not parse: $(cat "$tmp/err")"
fi
args=$(jq -c 'select(.kind == "Deployment") | .spec.template.spec.containers[] |
    select(.name == "controller") | .args // []' "$tmp/deploy.json" 2>/dev/null | head -n 1)
[ -n "$args" ] || { bad "no controller container with args in the Deployment"; args='[]'; }
n=$(jq length <<<"$args")
for ((i = 0; i < n; i++)); do
    a=$(jq -r ".[$i]" <<<"$args")
    [[ $a == --* ]] || continue
    flag=${a%%=*}
    line=$(grep -E -- "^[[:space:]]*$flag( |$)" <<<"$help" | head -n 1)
    if [ -z "$line" ]; then
        bad "$flag is not a flag of vm-dhcp-controller (--help)"
        continue
    fi
    # "--flag ARG  text" (one space, then the argument): the flag takes a value
    if [[ $line =~ ^[[:space:]]*--[a-z-]+\ [^\ ] ]] && [[ $a != *=* ]]; then
        next=$(jq -r ".[$((i + 1))] // \"\"" <<<"$args")
        if [ -z "$next" ] || [[ $next == --* ]]; then
            bad "$flag takes a value, none follows"
            continue
        fi
        # "--flag a|b|c": the value must be one of them (when the chart fixes it)
        alts=$(sed -E -n "s/^[[:space:]]*$flag ([a-z]+(\|[a-z]+)+).*/\1/p" <<<"$help")
        if [ -n "$alts" ] && [ "$next" != tmpl ] && ! grep -qxF -- "$next" <<<"${alts//|/$'\n'}"; then
            bad "$flag $next: not one of $alts"
            continue
        fi
        ok "$flag $next"
    else
        ok "$flag"
    fi
done
for req in $(sed -n 's/^usage: [^ ]* \(.*\)\[options\].*/\1/p' <<<"$help" | grep -oE -- '--[a-z-]+'); do
    jq -e --arg f "$req" 'index($f) != null' <<<"$args" >/dev/null &&
        ok "required $req is passed" || bad "required $req is not passed"
done
for p in /healthz /readyz; do
    grep -q "path: $p" "$CHART/templates/deployment.yaml" && grep -qF "$p" <<<"$help" &&
        ok "probe $p is served (--listen)" || bad "probe $p: not in the Deployment or not served"
done

echo "== helm"
if command -v helm >/dev/null; then
    if helm lint "$CHART" >"$tmp/lint" 2>&1; then ok "helm lint"; else bad "helm lint:"; cat "$tmp/lint"; fi
    if helm template t "$CHART" --namespace vmdhcp >"$tmp/rendered.yaml" 2>"$tmp/err" &&
        "$Y2J" "$tmp/rendered.yaml" >/dev/null 2>>"$tmp/err"; then
        ok "helm template renders parseable YAML"
    else
        bad "helm template: $(cat "$tmp/err")"
    fi
else
    not_checked "helm lint / helm template: helm is not on PATH"
fi
not_checked "template rendering itself (Go templates, include/toYaml/nindent output): needs helm"
not_checked "rendered manifests against the Kubernetes OpenAPI schemas (no kubeconform/kubectl)"
not_checked "NOTES.txt and _helpers.tpl beyond the .Values keys they use"

echo "== not checked"
for n in "${notes[@]}"; do echo "  -     $n"; done
echo "lint-charts: $checks checks, $fails failed"
[ $fails = 0 ]
