#!/bin/bash
# scripts/chart-harvester.sh [OUTDIR] - the chart charts/vm-dhcp under the Go project's chart
# name, harvester-vm-dhcp-controller (harvester/vm-dhcp-controller chart/Chart.yaml), so that
# Harvester's Addon can point at it: an Addon names a Helm repository, a chart and a version
# (spec.repo, spec.chart, spec.version; harvester/experimental-addons
# harvester-vm-dhcp-controller/harvester-vm-dhcp-controller.yaml). Writes OUTDIR (default
# build/charts): the chart directory harvester-vm-dhcp-controller/ (crds/ copied, not linked),
# its package harvester-vm-dhcp-controller-<version>.tgz and a Helm repository index.yaml
# (helm repo index), ready to be served over HTTP as the Addon's spec.repo.
# Only Chart.yaml's name differs from charts/vm-dhcp: templates and values are the same.
set -eu
cd "$(dirname "$0")/.."
OUT=${1:-build/charts}
NAME=harvester-vm-dhcp-controller
HELM=${HELM:-helm}
command -v "$HELM" >/dev/null || { echo "chart-harvester: helm is required (scripts/install-deps)" >&2; exit 1; }
rm -rf "${OUT:?}/$NAME"
mkdir -p "$OUT"
cp -rL charts/vm-dhcp "$OUT/$NAME"
sed -i -E "s/^name: vm-dhcp\$/name: $NAME/" "$OUT/$NAME/Chart.yaml"
grep -qx "name: $NAME" "$OUT/$NAME/Chart.yaml" || { echo "chart-harvester: no name: line in Chart.yaml" >&2; exit 1; }
"$HELM" package "$OUT/$NAME" -d "$OUT" >/dev/null
"$HELM" repo index "$OUT"
echo "chart-harvester: $OUT/$NAME-$(sed -n 's/^version: //p' "$OUT/$NAME/Chart.yaml").tgz and $OUT/index.yaml"
