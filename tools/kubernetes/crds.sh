#!/usr/bin/env bash
# Prints the folder of the Prometheus Operator's CRDs (ServiceMonitor, PrometheusRule, Prometheus, ...) the cluster
# tests install,
# fetching them when needed: the module zip of github.com/prometheus-operator/prometheus-operator at the version of
# testing/cluster/versions.json, from the Go module proxy (no Go needed), checked against the SHA-256 pinned there, its
# example/prometheus-operator-crd/ files unpacked into a cache outside the work tree:
#   ${LACCHAIN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lacchain-besu-node}/prometheus-operator/<version>/
# Nothing of the Prometheus Operator is kept in this repository.
#
# `--check`: fetches nothing; prints the folder when it is there, else says so (exit 3). The harness uses it.
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=tools/lib/cache.sh
. tools/lib/cache.sh
version=$(tool_version prometheusOperator)
sha256=$(tool_version prometheusOperatorZipSha256)
cache=$(tool_cache "prometheus-operator/${version}")
stop_when_cached "$cache" "the Prometheus Operator's CRDs" "${1:-}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
proxy="${LACCHAIN_GOPROXY:-https://proxy.golang.org}"
curl -fsS -o "$work/module.zip" "$proxy/github.com/prometheus-operator/prometheus-operator/@v/${version}.zip"
echo "$sha256  $work/module.zip" | sha256sum -c --quiet -
mkdir -p "$cache"
unzip -q -j -o "$work/module.zip" \
  "github.com/prometheus-operator/prometheus-operator@${version}/example/prometheus-operator-crd/*.yaml" -d "$cache"
touch "$cache/.complete"
echo "$cache"
