#!/usr/bin/env bash
# Prints the folder of the Kubernetes binaries the cluster tests run (testing/cluster/), building them when needed:
# kube-apiserver, kube-controller-manager, kube-scheduler and kubectl from the Go module k8s.io/kubernetes, etcd from
# go.etcd.io/etcd/server/v3, kwok from sigs.k8s.io/kwok (with its stage files), into a cache outside the work tree
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
staging=$(tool_version staging)
etcd=$(tool_version etcd)
kwok=$(tool_version kwok)
# The recipe's revision, part of the cache's key: raise it when a change here changes what gets built, so a cache
# built by an older recipe is not reused (2: the Kubernetes binaries report their version).
recipe=2
cache=$(tool_cache "kubernetes/k8s-${kubernetes}-etcd-${etcd}-kwok-${kwok}-r${recipe}")
stop_when_cached "$cache" "the Kubernetes binaries" "${1:-}"
use_module_proxy "no Kubernetes binaries"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$cache/bin" "$cache/stages"
started=$(date +%s)

# The file a package is built into: its last path element, but etcd's main package is its module's root (.../v3).
binary_name() {
  case "$1" in
    go.etcd.io/etcd/server/v3) echo etcd ;;
    *) basename "$1" ;;
  esac
}

# Builds the packages $3... of module $1 at version $2 into $cache/bin, with extra go.mod lines from stdin and the
# linker flags in $link_flags (besides -s -w).
build() {
  local module=$1 version=$2 dir
  shift 2
  dir="$work/$(basename "$module")"
  mkdir -p "$dir"
  {
    printf 'module lacchain.local/%s\n\ngo 1.26\n\nrequire %s %s\n' "$(basename "$module")" "$module" "$version"
    cat
  } >"$dir/go.mod"
  {
    printf '//go:build tools\n\npackage tools\n\n'
    for package in "$@"; do printf 'import _ "%s"\n' "$package"; done
  } >"$dir/tools.go"
  for package in "$@"; do
    [ -x "$cache/bin/$(binary_name "$package")" ] && continue
    echo "building $(basename "$package") ($module $version)" >&2
    (cd "$dir" && go build -trimpath -ldflags "-s -w ${link_flags:-}" \
      -o "$cache/bin/$(binary_name "$package").partial" "$package") >&2
    mv "$cache/bin/$(binary_name "$package").partial" "$cache/bin/$(binary_name "$package")"
  done
}

# The version the Kubernetes binaries report (`kubectl version`, `kube-apiserver --version`), set as Kubernetes' own
# release build sets it (hack/lib/version.sh): without it they say v0.0.0-master+$Format:%H$. etcd and kwok report
# their own version without any flag.
major=${kubernetes#v}
major=${major%%.*}
minor=$(echo "$kubernetes" | cut -d. -f2)
kubernetes_version_flags=""
for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kubernetes_version_flags+=" -X ${package}.gitVersion=${kubernetes} -X ${package}.gitMajor=${major}"
  kubernetes_version_flags+=" -X ${package}.gitMinor=${minor} -X ${package}.gitTreeState=clean"
done

# k8s.io/kubernetes replaces every k8s.io/* staging module with a path inside its repository; a dependant must
# require and replace each at its published version instead (sample-cli-plugin is not published, and nothing needs it).
staging_modules=$(curl -fsS "$GOPROXY/k8s.io/kubernetes/@v/${kubernetes}.mod" |
  sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' | grep -v '^k8s.io/sample-cli-plugin$')
{
  echo 'require ('
  for module in $staging_modules; do printf '\t%s %s\n' "$module" "$staging"; done
  echo ')'
  echo 'replace ('
  for module in $staging_modules; do printf '\t%s => %s %s\n' "$module" "$module" "$staging"; done
  echo ')'
} | link_flags=$kubernetes_version_flags build k8s.io/kubernetes "$kubernetes" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl

build go.etcd.io/etcd/server/v3 "$etcd" go.etcd.io/etcd/server/v3 </dev/null

build sigs.k8s.io/kwok "$kwok" sigs.k8s.io/kwok/cmd/kwok </dev/null
# kwok's stage files ship in its module: the fast node and pod lifecycles, the node heartbeat, and the volumes of
# its StorageClass (which kwok provisions and binds).
kwok_dir=$(cd "$work/kwok" && go list -m -f '{{.Dir}}' sigs.k8s.io/kwok)
for stage in node/fast node/heartbeat pod/fast volume/fast; do
  mkdir -p "$cache/stages/$stage"
  for file in "$kwok_dir/kustomize/stage/$stage/"*.yaml; do
    [ "$(basename "$file")" = kustomization.yaml ] || cp "$file" "$cache/stages/$stage/"
  done
done
chmod -R u+w "$cache/stages"

touch "$cache/.complete"
echo "built the Kubernetes binaries into $cache in $(($(date +%s) - started)) s" >&2
echo "$cache"
