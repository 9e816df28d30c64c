#!/usr/bin/env bash
# The preflight step of provisioning a remote node: check the machine before changing anything.
# Stops with a clear message on an unsupported operating system or architecture, and reports a hardware shortfall
# against the network's recommendation (below the minimum it fails when ENFORCE_MINIMUM is true).
# Refuses a release the machine cannot run: one whose Java (JAVA_MAJOR) the machine has not, its package sources do not
# offer and no pinned runtime exists for (JAVA_RUNTIME_ARCHIVES, as the packages step takes them).
# Parameters (environment): NETWORK, NODE_HOME, MIN_CPU, MIN_MEMORY_MIB, MIN_DISK_GIB, RECOMMENDED_CPU,
# RECOMMENDED_MEMORY_MIB, RECOMMENDED_DISK_GIB, ENFORCE_MINIMUM (true|false), BESU_VERSION, JAVA_MAJOR,
# JAVA_RUNTIME_ARCHIVES, SUPPORTED_SYSTEMS (core/catalog/systems.ts: `id[,alias...]=version,...` per family, space
# separated) and SUPPORTED_SYSTEMS_TEXT (the same in words); OS_RELEASE (default /etc/os-release: the tests give others).
set -euo pipefail
: "${NETWORK:?}" "${NODE_HOME:?}" "${MIN_CPU:?}" "${MIN_MEMORY_MIB:?}" "${MIN_DISK_GIB:?}" "${BESU_VERSION:?}" "${JAVA_MAJOR:?}"
: "${RECOMMENDED_CPU:?}" "${RECOMMENDED_MEMORY_MIB:?}" "${RECOMMENDED_DISK_GIB:?}" "${ENFORCE_MINIMUM:?}"
: "${SUPPORTED_SYSTEMS:?}" "${SUPPORTED_SYSTEMS_TEXT:?}"
os_release=${OS_RELEASE:-/etc/os-release}

[ -r "$os_release" ] || fail "cannot identify the operating system ($os_release is missing)"
# shellcheck disable=SC1090
. "$os_release"
os_id=${ID:-unknown}
os_version=${VERSION_ID:-unknown}

# supported_versions ID: the versions accepted for ID ("" when the family is not supported).
supported_versions() {
  local family ids
  for family in $SUPPORTED_SYSTEMS; do
    ids=${family%%=*}
    case ",$ids," in *",$1,"*) echo "${family#*=}" && return 0 ;; esac
  done
  return 0
}

versions=$(supported_versions "$os_id")
[ -n "$versions" ] || fail "${PRETTY_NAME:-$os_id} is not supported (supported: $SUPPORTED_SYSTEMS_TEXT)"
# Ubuntu and Debian by their VERSION_ID (22.04, 13); the RHEL family by its major version (9.4 is 9).
case "$os_id" in ubuntu | debian) version=$os_version ;; *) version=${os_version%%.*} ;; esac
case ",$versions," in
  *",$version,"*) ;;
  *) fail "${PRETTY_NAME:-$os_id $os_version} is not supported (supported: $SUPPORTED_SYSTEMS_TEXT)" ;;
esac
echo "preflight: ${PRETTY_NAME:-$os_id $os_version} is supported"

arch=$(uname -m)
case "$arch" in
  x86_64 | aarch64) ;;
  *) fail "architecture $arch is not supported: a 64-bit machine (x86_64 or aarch64) is needed" ;;
esac

command -v systemctl >/dev/null 2>&1 || fail "systemd is required (systemctl not found)"

# The release's Java: the machine's, one its package sources offer, or the pinned runtime for its architecture.
java_source=""
if [ "$(java_major)" -ge "$JAVA_MAJOR" ]; then
  java_source="the machine's Java $(java_major)"
elif [ -n "$(pinned_runtime_line "$arch")" ]; then
  java_source="the pinned runtime for $arch"
else
  java_package=$(offered_java_package "$JAVA_MAJOR")
  if [ -n "$java_package" ]; then java_source="the system's package $java_package"; fi
fi
[ -n "$java_source" ] \
  || fail "Besu $BESU_VERSION needs Java $JAVA_MAJOR: this machine has Java $(java_major), its package sources offer none and no pinned runtime exists for $arch; give the inventory's java_runtime_url and java_runtime_sha256 (a Java $JAVA_MAJOR runtime archive for $arch), or install Java $JAVA_MAJOR on the machine"
echo "preflight: Besu $BESU_VERSION runs on Java $JAVA_MAJOR: $java_source"

cpus=$(nproc)
memory_mib=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
# Free disk where the node home will be (its nearest existing parent).
probe=$NODE_HOME
while [ ! -d "$probe" ]; do probe=$(dirname "$probe"); done
disk_gib=$(df -Pk "$probe" | awk 'NR == 2 { print int($4 / 1048576) }')

echo "preflight: ${PRETTY_NAME:-$os_id $os_version} on $arch; $cpus CPU, $memory_mib MiB memory, $disk_gib GiB free at $probe"

below_minimum=()
[ "$cpus" -ge "$MIN_CPU" ] || below_minimum+=("CPU $cpus < $MIN_CPU")
[ "$memory_mib" -ge "$MIN_MEMORY_MIB" ] || below_minimum+=("memory $memory_mib MiB < $MIN_MEMORY_MIB MiB")
[ "$disk_gib" -ge "$MIN_DISK_GIB" ] || below_minimum+=("free disk $disk_gib GiB < $MIN_DISK_GIB GiB")

shortfall=()
[ "$cpus" -ge "$RECOMMENDED_CPU" ] || shortfall+=("CPU $cpus (recommended $RECOMMENDED_CPU)")
[ "$memory_mib" -ge "$RECOMMENDED_MEMORY_MIB" ] || shortfall+=("memory $memory_mib MiB (recommended $RECOMMENDED_MEMORY_MIB MiB)")
[ "$disk_gib" -ge "$RECOMMENDED_DISK_GIB" ] || shortfall+=("free disk $disk_gib GiB (recommended $RECOMMENDED_DISK_GIB GiB)")

if [ "${#shortfall[@]}" -gt 0 ]; then
  echo "preflight: WARNING: below the recommendation for $NETWORK: ${shortfall[*]}"
fi
if [ "${#below_minimum[@]}" -gt 0 ]; then
  if [ "$ENFORCE_MINIMUM" = true ]; then
    fail "below the minimum hardware for $NETWORK: ${below_minimum[*]} (set allow_below_minimum_hardware: true in the inventory to deploy anyway)"
  fi
  echo "preflight: WARNING: below the minimum hardware for $NETWORK: ${below_minimum[*]}"
fi
echo "preflight: ok"
