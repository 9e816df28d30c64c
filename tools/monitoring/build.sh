#!/usr/bin/env bash
# Prints the folder of the monitoring binaries the cluster tests run (tests/cluster/monitoring.test.ts), building them
# when needed: Prometheus itself from the Go module github.com/prometheus/prometheus (upstream's build, with the
# Kubernetes service discovery that Debian's package leaves out) and the Prometheus Operator from
# github.com/prometheus-operator/prometheus-operator, at the versions of testing/cluster/versions.json, into a cache
# outside the work tree keyed by them:
#   ${LACCHAIN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lacchain-besu-node}/monitoring/<versions>/bin/
# A warm cache builds nothing; cold on 2 cores about 8 minutes. Needs Go 1.21 or newer (it fetches the Go the modules
# ask for from the module proxy when older).
#
# `--check`: builds nothing; prints the folder when the binaries are built, else says so (exit 3). The harness uses it.
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=tools/lib/cache.sh
. tools/lib/cache.sh
prometheus=$(tool_version prometheus)
operator=$(tool_version prometheusOperator)
cache=$(tool_cache "monitoring/prometheus-${prometheus}-operator-${operator}")
stop_when_cached "$cache" "Prometheus and the Prometheus Operator" "${1:-}"
use_module_proxy "no Prometheus or Prometheus Operator"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$cache/bin"

# Builds package $3 of module $1 at version $2 into $cache/bin/$4.
# build MODULE VERSION PACKAGE NAME [TAGS]: PACKAGE of MODULE at VERSION into $cache/bin/NAME, with build tags TAGS.
build() {
  local module=$1 version=$2 package=$3 name=$4 tags=${5:-} dir="$work/$4"
  [ -x "$cache/bin/$name" ] && return 0
  mkdir -p "$dir"
  printf 'module lacchain.local/%s\n\ngo 1.26\n\nrequire %s %s\n' "$name" "$module" "$version" >"$dir/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "%s"\n' "$package" >"$dir/tools.go"
  echo "building $name ($module $version)" >&2
  (cd "$dir" && go build -trimpath -tags "$tags" -ldflags "-s -w" -o "$cache/bin/$name.partial" "$package") >&2
  mv "$cache/bin/$name.partial" "$cache/bin/$name"
}

# Only the Kubernetes service discovery, which the tests' Prometheus Operator configures: Prometheus' own build tags
# leave out every other discovery (the cloud providers' SDKs, most of its compile time).
build github.com/prometheus/prometheus "$prometheus" github.com/prometheus/prometheus/cmd/prometheus prometheus \
  remove_all_sd,enable_kubernetes_sd
build github.com/prometheus-operator/prometheus-operator "$operator" \
  github.com/prometheus-operator/prometheus-operator/cmd/operator prometheus-operator
touch "$cache/.complete"
echo "$cache"
