#!/usr/bin/env bash
# Prints the folder of the kube-proxy the kubelet tests' real worker runs (testing/cluster/serviceProxy.ts), building
# it when needed from the Go module k8s.io/kubernetes (the control plane's version, testing/cluster/versions.json; the
# same wrapper module and version link flags as the control plane and the kubelet), into a cache outside the work tree
# keyed by the version and the recipe's revision:
#   ${LACCHAIN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lacchain-besu-node}/kubernetes/kube-proxy-<version>-r<recipe>/bin/
# A warm cache builds nothing; after the control plane's build (same module, warm Go build cache) well under a minute,
# cold (an empty Go build cache) about 4 minutes on 2 cores. Needs Go 1.21 or newer.
#
# `--check`: builds nothing; prints the folder when it is built, else says so (exit 3). The harness uses it.
# Exit codes: 0 the folder is printed; 3 not built and no way to build it (the reason is printed on stderr).
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=tools/lib/cache.sh
. tools/lib/cache.sh
# shellcheck source=tools/kubernetes/module.sh
. tools/kubernetes/module.sh
# The cache's key ends with the recipe's revision (-r1): raise it when a change here changes what gets built.
cache=$(tool_cache "kubernetes/kube-proxy-$(tool_version kubernetes)-r1")
begin_cached_build "$cache" "kube-proxy" "no kube-proxy" "${1:-}" bin
build_kubernetes k8s.io/kubernetes/cmd/kube-proxy

end_cached_build "$cache" "kube-proxy"
