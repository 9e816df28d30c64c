#!/usr/bin/env bash
# Prints the folder of MetalLB, the load balancer of the kubelet tests' real worker (testing/cluster/loadBalancer.ts),
# building it when needed: its controller and speaker from the Go module go.universe.tf/metallb (the version of
# testing/cluster/versions.json; v0.16 needs a module the proxy refuses), and its CustomResourceDefinitions
# (IPAddressPool, L2Advertisement and the others its controller and speaker watch) copied from the same module's
# config/crd, into a cache outside the work tree keyed by the version and the recipe's revision:
#   ${LACCHAIN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lacchain-besu-node}/metallb/<version>-r<recipe>/{bin,crds}/
# A warm cache builds nothing; cold about 3.5 minutes on 2 cores (the controller most of it, the speaker after it in
# seconds). Needs Go 1.21 or newer.
#
# `--check`: builds nothing; prints the folder when it is built, else says so (exit 3). The harness uses it.
# Exit codes: 0 the folder is printed; 3 not built and no way to build it (the reason is printed on stderr).
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=tools/lib/cache.sh
. tools/lib/cache.sh
version=$(tool_version metallb)
# The recipe's revision, part of the cache's key: raise it when a change here changes what gets built.
recipe=1
cache=$(tool_cache "metallb/${version}-r${recipe}")
stop_when_cached "$cache" "MetalLB's controller and speaker" "${1:-}"
use_module_proxy "no MetalLB"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$cache/bin" "$cache/crds"
started=$(date +%s)

printf 'module lacchain.local/metallb\n\ngo 1.24\n\nrequire go.universe.tf/metallb %s\n' "$version" >"$work/go.mod"
printf '//go:build tools\n\npackage tools\n\nimport (\n\t_ "go.universe.tf/metallb/controller"\n\t_ "go.universe.tf/metallb/speaker"\n)\n' >"$work/tools.go"
for component in controller speaker; do
  [ -x "$cache/bin/$component" ] && continue
  echo "building MetalLB's $component ($version)" >&2
  (cd "$work" && go build -trimpath -ldflags "-s -w" -o "$cache/bin/$component.partial" "go.universe.tf/metallb/$component") >&2
  mv "$cache/bin/$component.partial" "$cache/bin/$component"
done
source_dir=$(cd "$work" && go list -m -f '{{.Dir}}' go.universe.tf/metallb)
cp "$source_dir"/config/crd/bases/*.yaml "$cache/crds/"
chmod -R u+w "$cache/crds"

touch "$cache/.complete"
echo "built MetalLB's controller and speaker into $cache in $(($(date +%s) - started)) s" >&2
echo "$cache"
