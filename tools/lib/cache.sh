#!/usr/bin/env bash
# Sourced by the scripts that build or fetch the tests' tools into a cache outside the work tree, keyed by version
# (tools/kubernetes/build.sh, build-kubelet.sh, build-kube-proxy.sh, tools/metallb/build.sh, tools/kubernetes/crds.sh, tools/monitoring/build.sh, tools/pulumi-kubernetes/build.sh,
# tools/devp2p/build.sh, tests/fixtures/besu-standin/p2p/build.sh); not run on its own.

# The versions of the cluster tests' tools (one home: testing/cluster/versions.json, read by the harness too).
tool_version() {
  node -p "require('./testing/cluster/versions.json')['$1']"
}

# The cache folder $1 of a tool.
tool_cache() {
  echo "${LACCHAIN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lacchain-besu-node}/$1"
}

# stop_when_made TEST FILE PRINTED MISSING [--check]: prints PRINTED and exits when `test TEST FILE` holds (the tool is
# made); with --check exits 3 instead of going on to make it, saying MISSING on stderr.
stop_when_made() {
  if test "$1" "$2"; then
    echo "$3"
    exit 0
  fi
  if [ "${5:-}" = "--check" ]; then
    echo "$4" >&2
    exit 3
  fi
}

# Prints the cache folder $1 and exits when it is complete; with --check ($3) exits 3 instead of going on to make it,
# saying that $2 (what it holds) is not there yet.
stop_when_cached() {
  stop_when_made -f "$1/.complete" "$1" "$2 not there yet (tests/setup.sh makes them in $1)" "${3:-}"
}

# Go, as the builds from the module proxy need it: without the checksum database (not reachable everywhere) or
# `direct` (git over the internet); a newer Go fetched from the proxy when a module asks for one.
use_module_proxy() {
  if ! command -v go >/dev/null 2>&1; then
    echo "$1: Go is not installed to build them" >&2
    exit 3
  fi
  export GOSUMDB=off GOFLAGS=-mod=mod CGO_ENABLED=0 GOTOOLCHAIN=auto
  export GOPROXY="${LACCHAIN_GOPROXY:-https://proxy.golang.org}"
}

# begin_cached_build CACHE WHAT LACKING CHECK [FOLDER...]: prints CACHE and exits when it is complete (stop_when_cached,
# CHECK being --check or empty); else sets up a build into it: Go through the module proxy (saying LACKING without Go),
# $work a scratch folder removed at exit, each FOLDER made under CACHE, $started the time it began.
begin_cached_build() {
  local cache=$1 what=$2 lacking=$3 check=$4 folder
  shift 4
  stop_when_cached "$cache" "$what" "$check"
  use_module_proxy "$lacking"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  for folder in "$@"; do mkdir -p "$cache/$folder"; done
  started=$(date +%s)
}

# end_cached_build CACHE WHAT: marks CACHE complete, says how long building WHAT took, and prints CACHE.
end_cached_build() {
  touch "$1/.complete"
  echo "built $2 into $1 in $(($(date +%s) - started)) s" >&2
  echo "$1"
}

# go_program FILE WHAT LACKING PREPARE PACKAGE [--check]: prints FILE, a Go program in the cache, and exits when it is
# built; with --check exits 3 instead, saying LACKING on stderr. Else builds it: the function PREPARE writes a module
# into an empty folder (its one argument), and PACKAGE of that module is built statically (CGO_ENABLED=0, stripped)
# through the module proxy into FILE (beside it first, then moved into place, so a cut build leaves no half program),
# saying that it builds WHAT; then prints FILE.
go_program() {
  stop_when_made -x "$1" "$1" "$3" "${6:-}"
  use_module_proxy "no $2"
  local work
  work=$(mktemp -d)
  # shellcheck disable=SC2064 # the folder of this call, named now
  trap "rm -rf '$work'" EXIT
  "$4" "$work"
  mkdir -p "$(dirname "$1")"
  echo "building $2 into $(dirname "$1")" >&2
  (cd "$work" && go build -trimpath -ldflags "-s -w" -o "$1.partial" "$5") >&2
  mv "$1.partial" "$1"
  echo "$1"
}
