#!/usr/bin/env bash
# Prints the folder of the real worker the kubelet tests run (testing/cluster/kubelet.ts), building it when needed:
# the kubelet from the Go module k8s.io/kubernetes (the control plane's version, testing/cluster/versions.json) and the
# pod sandbox's pause program from the same module's build/pause/linux/pause.c (gcc -static, as Kubernetes' own
# pause image is built), into a cache outside the work tree keyed by the version and the recipe's revision:
#   ${LACCHAIN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lacchain-besu-node}/kubernetes/kubelet-<version>-r<recipe>/bin/
# The container runtime is Debian's (containerd, runc, containernetworking-plugins: tests/setup.sh installs them).
# A warm cache builds nothing; after the control plane's build (tools/kubernetes/build.sh, same module, warm Go build
# cache) about half a minute, cold about 5 minutes on 2 cores. Needs Go 1.21 or newer and gcc with a static libc.
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
cache=$(tool_cache "kubernetes/kubelet-$(tool_version kubernetes)-r1")
if [ "${1:-}" != --check ] && ! command -v gcc >/dev/null 2>&1 && [ ! -f "$cache/.complete" ]; then
  echo "no pause program: gcc is not installed to build it (tests/setup.sh installs it as root)" >&2
  exit 3
fi
begin_cached_build "$cache" "the kubelet and the pause program" "no kubelet" "${1:-}" bin
build_kubernetes k8s.io/kubernetes/cmd/kubelet

# The pause program, as build/pause/Makefile builds it (its TAG is the version it reports).
source_dir=$(cd "$work/kubernetes" && go list -m -f '{{.Dir}}' k8s.io/kubernetes)
pause_tag=$(sed -n 's/^TAG ?= *//p' "$source_dir/build/pause/Makefile")
gcc -Os -Wall -Werror -static -DVERSION="v${pause_tag}-lacchain" -o "$cache/bin/pause.partial" \
  "$source_dir/build/pause/linux/pause.c"
mv "$cache/bin/pause.partial" "$cache/bin/pause"
printf '%s\n' "$pause_tag" >"$cache/pause-version"

end_cached_build "$cache" "the kubelet and the pause program"
