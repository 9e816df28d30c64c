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
begin_cached_build "$cache" "MetalLB's controller and speaker" "no MetalLB" "${1:-}" bin crds

# shellcheck source=tools/kubernetes/module.sh
. tools/kubernetes/module.sh
build go.universe.tf/metallb "$version" go.universe.tf/metallb/controller go.universe.tf/metallb/speaker </dev/null
source_dir=$(cd "$work/metallb" && go list -m -f '{{.Dir}}' go.universe.tf/metallb)
cp "$source_dir"/config/crd/bases/*.yaml "$cache/crds/"
chmod -R u+w "$cache/crds"

end_cached_build "$cache" "MetalLB's controller and speaker"
