#!/usr/bin/env bash
# Sourced by the scripts that build Kubernetes binaries from the Go module k8s.io/kubernetes
# (tools/kubernetes/build.sh: the control plane; build-kubelet.sh, build-kube-proxy.sh: the worker; tools/metallb/build.sh:
# the load balancer); not run on its own.
# Expects tools/lib/cache.sh sourced, and when building: $cache (the folder whose bin/ receives the binaries), $work (a
# scratch folder) and GOPROXY set.

# The file a package is built into: its last path element, but etcd's main package is its module's root (.../v3).
binary_name() {
  case "$1" in
    go.etcd.io/etcd/server/v3) echo etcd ;;
    *) basename "$1" ;;
  esac
}

# Builds the packages $3... of module $1 at version $2 into $cache/bin, with extra go.mod lines from stdin and the
# linker flags in $link_flags (besides -s -w). A binary already built is kept (an interrupted build goes on).
build() {
  local module=$1 version=$2 dir
  shift 2
  : "${cache:?}" "${work:?}"
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
    echo "building $(binary_name "$package") ($module $version)" >&2
    (cd "$dir" && go build -trimpath -ldflags "-s -w ${link_flags:-}" \
      -o "$cache/bin/$(binary_name "$package").partial" "$package") >&2
    mv "$cache/bin/$(binary_name "$package").partial" "$cache/bin/$(binary_name "$package")"
  done
}

# The linker flags that make the binaries of Kubernetes $1 (v1.36.3) report their version (`kubectl version`,
# `kube-apiserver --version`), as Kubernetes' own release build sets it (hack/lib/version.sh): without them they say
# v0.0.0-master+$Format:%H$.
kubernetes_version_flags() {
  local version=$1 major minor flags=""
  major=${version#v}
  major=${major%%.*}
  minor=$(echo "$version" | cut -d. -f2)
  for package in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    flags+=" -X ${package}.gitVersion=${version} -X ${package}.gitMajor=${major}"
    flags+=" -X ${package}.gitMinor=${minor} -X ${package}.gitTreeState=clean"
  done
  echo "$flags"
}

# The go.mod lines a module depending on k8s.io/kubernetes $1 needs: k8s.io/kubernetes replaces every k8s.io/*
# staging module with a path inside its repository, so a dependant must require and replace each at its published
# version $2 instead (sample-cli-plugin is not published, and nothing needs it).
kubernetes_staging_lines() {
  local staging_modules
  staging_modules=$(curl -fsS "$GOPROXY/k8s.io/kubernetes/@v/$1.mod" |
    sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' | grep -v '^k8s.io/sample-cli-plugin$')
  echo 'require ('
  for module in $staging_modules; do printf '\t%s %s\n' "$module" "$2"; done
  echo ')'
  echo 'replace ('
  for module in $staging_modules; do printf '\t%s => %s %s\n' "$module" "$module" "$2"; done
  echo ')'
}

# The go.mod lines of the one module the cluster's Go programs are built from: k8s.io/kubernetes at the version of
# testing/cluster/versions.json with its staging modules (kubernetes_staging_lines), and etcd and kwok required beside
# it. One module graph for all of them: the packages they share (k8s.io/api, apimachinery, client-go, grpc, the etcd
# client, ...) are compiled once, at one version each. A cold build of the control plane's six programs compiles 89 MB
# of Go source so, instead of 143 MB with etcd and kwok in modules of their own (`go list -deps`, 2026-12-08).
kubernetes_module_lines() {
  kubernetes_staging_lines "$(tool_version kubernetes)" "$(tool_version staging)"
  printf 'require (\n\tgo.etcd.io/etcd/server/v3 %s\n\tsigs.k8s.io/kwok %s\n)\n' "$(tool_version etcd)" "$(tool_version kwok)"
}

# Builds the packages $1... of the Go module k8s.io/kubernetes into $cache/bin (kubernetes_module_lines' module),
# reporting its version.
build_kubernetes() {
  local kubernetes
  kubernetes=$(tool_version kubernetes)
  kubernetes_module_lines | link_flags=$(kubernetes_version_flags "$kubernetes") build k8s.io/kubernetes "$kubernetes" "$@"
}

# Builds the packages $1... of etcd and kwok into $cache/bin from the same module as the Kubernetes binaries.
build_beside_kubernetes() {
  kubernetes_module_lines | build k8s.io/kubernetes "$(tool_version kubernetes)" "$@"
}
