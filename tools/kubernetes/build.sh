#!/usr/bin/env bash
# Prints the folder of the Kubernetes binaries the cluster tests run (testing/cluster/), building them when needed:
# kube-apiserver, kube-controller-manager, kube-scheduler and kubectl from the Go module k8s.io/kubernetes, etcd from
# go.etcd.io/etcd/server/v3, kwok from sigs.k8s.io/kwok (with its stage files), all from one module requiring the three
# (tools/kubernetes/module.sh: kubernetes_module_lines), into a cache outside the work tree
# keyed by the versions and the recipe's revision:
#   ${LACCHAIN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lacchain-besu-node}/kubernetes/<versions>-r<recipe>/bin/
#   ${...}/kubernetes/<versions>-r<recipe>/stages/   (kwok's stage files: node and pod lifecycles)
# A warm cache builds nothing; cold on 2 cores about 8 minutes (the Kubernetes binaries most of it); an interrupted
# build goes on from the binaries already built. Needs Go 1.21 or newer (it fetches the Go 1.26 that
# k8s.io/kubernetes asks for from the module proxy when older).
#
# `--check`: builds nothing; prints the folder when the binaries are built, else says so (exit 3). The harness uses it.
# Exit codes: 0 the folder is printed; 3 no binaries and no way to build them (the reason is printed on stderr).
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=tools/lib/cache.sh
. tools/lib/cache.sh
kubernetes=$(tool_version kubernetes)
etcd=$(tool_version etcd)
kwok=$(tool_version kwok)
# The recipe's revision, part of the cache's key: raise it when a change here changes what gets built, so a cache
# built by an older recipe is not reused (2: the Kubernetes binaries report their version).
recipe=2
cache=$(tool_cache "kubernetes/k8s-${kubernetes}-etcd-${etcd}-kwok-${kwok}-r${recipe}")
begin_cached_build "$cache" "the Kubernetes binaries" "no Kubernetes binaries" "${1:-}" bin stages

# shellcheck source=tools/kubernetes/module.sh
. tools/kubernetes/module.sh
build_kubernetes k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl

# etcd and kwok from the same module (one module graph: what they share with Kubernetes is compiled once).
build_beside_kubernetes go.etcd.io/etcd/server/v3 sigs.k8s.io/kwok/cmd/kwok
# kwok's stage files ship in its module: the fast node and pod lifecycles, the node heartbeat, and the volumes of
# its StorageClass (which kwok provisions and binds).
kwok_dir=$(cd "$work/kubernetes" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
for stage in node/fast node/heartbeat pod/fast volume/fast; do
  mkdir -p "$cache/stages/$stage"
  for file in "$kwok_dir/kustomize/stage/$stage/"*.yaml; do
    [ "$(basename "$file")" = kustomization.yaml ] || cp "$file" "$cache/stages/$stage/"
  done
done
chmod -R u+w "$cache/stages"

end_cached_build "$cache" "the Kubernetes binaries"
