#!/usr/bin/env bash
# The packages step of provisioning a remote node: install the packages the node needs with the system's package manager:
# a Java runtime of at least JAVA_MAJOR, nginx, openssl, curl, tar and logrotate, and for a writer (GAS_MODEL=true)
# nginx's Lua module and cjson, which the proxy's gas-model routing runs on (Debian and Ubuntu only: apt's
# libnginx-mod-http-lua and lua-cjson); and CONTAINER_RUNTIME (podman) when a companion service runs from a container
# image (the network's monitoring client), and PACKET_FILTER (nftables) when the node runs companions (Besu's
# WebSocket is fenced to their users with it, and the relay signer's port to the loopback). Installs only what is missing.
# When the system's package sources offer no Java of at least JAVA_MAJOR (apt's Candidate, not a name apt knows only
# by reference: Debian 11 and 12 have no Java 21), the pinned runtime for this machine's architecture is unpacked
# instead, its archive checked against its SHA-256, into JAVA_HOME_LINK's folder, and JAVA_HOME_LINK points at it:
# the node's launcher uses it (JAVA_HOME); the system's Java is left as it is.
# BACKUP_TOOL (restic) backs the node's data up (Debian, Ubuntu; EPEL on EL).
# Parameters (environment): JAVA_MAJOR, JAVA_RUNTIME_ARCHIVES (lines "<arch or *> <url> <sha256>", or empty),
# JAVA_HOME_LINK, GAS_MODEL (true|false), CONTAINER_RUNTIME and PACKET_FILTER (a package name, or empty), BACKUP_TOOL.
set -euo pipefail
: "${JAVA_MAJOR:?}" "${JAVA_HOME_LINK:?}" "${GAS_MODEL:?}" "${BACKUP_TOOL:?}"
JAVA_RUNTIME_ARCHIVES=${JAVA_RUNTIME_ARCHIVES:-}
CONTAINER_RUNTIME=${CONTAINER_RUNTIME:-}
PACKET_FILTER=${PACKET_FILTER:-}

# install_pinned_runtime: the pinned Java runtime for this architecture, unpacked once into a folder named by its
# digest beside JAVA_HOME_LINK, which then points at it.
install_pinned_runtime() {
  local arch line url sha256 dir download
  arch=$(uname -m)
  line=$(pinned_runtime_line "$arch")
  [ -n "$line" ] || fail "no Java $JAVA_MAJOR or newer is offered by this system's package sources, and no pinned runtime exists for $arch"
  read -r _ url sha256 <<<"$line"
  dir="$(dirname "$JAVA_HOME_LINK")/runtime-$sha256"
  if [ ! -x "$dir/bin/java" ]; then
    install -d -m 0755 -o root -g root "$(dirname "$JAVA_HOME_LINK")"
    download=$(mktemp -d)
    download_checked "$url" "$sha256" "$download/runtime.tar.gz" "the Java $JAVA_MAJOR runtime"
    rm -rf "$dir.unpack"
    mkdir -m 0755 "$dir.unpack"
    tar --no-same-owner --strip-components=1 -xzf "$download/runtime.tar.gz" -C "$dir.unpack" \
      || fail "the archive from $url is not a valid .tar.gz"
    rm -rf "$download"
    [ -x "$dir.unpack/bin/java" ] || fail "the archive from $url holds no bin/java"
    chown -hR root:root "$dir.unpack"
    chmod -R go-w "$dir.unpack"
    mv -T "$dir.unpack" "$dir"
  fi
  [ "$(java_major "$dir/bin/java")" -ge "$JAVA_MAJOR" ] || fail "the runtime from $url is not Java $JAVA_MAJOR or newer"
  ln -sfn "$dir" "$JAVA_HOME_LINK"
  echo "packages: the pinned Java runtime ($url) in $dir, used by the node's launcher through $JAVA_HOME_LINK"
}

# half_installed_packages: the packages dpkg was unpacking when it was cut (status half-installed, or reinstall
# required), one per line.
half_installed_packages() {
  dpkg-query -W -f='${db:Status-Abbrev}|${binary:Package}\n' \
    | awk -F'|' 'substr($1, 2, 1) == "H" || substr($1, 3, 1) == "R" { print $2 }'
}

pinned_runtime=false
if command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  # A run cut while dpkg worked (a dropped connection, a machine stopped hard) leaves packages unpacked but not
  # configured, and apt refuses to go on until they are (tests/e2e/cuts.test.ts): finish that first. A package cut
  # while it was being unpacked (half-installed, reinstall required) cannot be configured, and neither `dpkg --configure
  # -a` nor `apt-get -f install` replaces its files: it is installed again (tests/e2e/packagesRecovery.test.ts).
  half_done=false
  if [ -n "$(dpkg --audit 2>/dev/null)" ]; then
    half_done=true
    echo "packages: finishing the package changes an earlier run left half done (dpkg --configure -a)"
    dpkg --configure -a || true
  fi
  apt-get update -q
  if [ "$half_done" = true ]; then
    cut_unpacking=$(half_installed_packages)
    if [ -n "$cut_unpacking" ]; then
      echo "packages: installing again what a cut left half unpacked: ${cut_unpacking//$'\n'/ }"
      # shellcheck disable=SC2086 # package names, one word each
      apt-get install -y -q --reinstall $cut_unpacking
    fi
    dpkg --configure -a
    audit=$(dpkg --audit 2>&1 || true)
    [ -z "$audit" ] || fail "packages an earlier run left half installed could not be finished (dpkg --audit): $audit"
  fi
  # The first runtime at or above the required major that the system's sources can install; none, the pinned one.
  java_package=""
  if [ "$(java_major)" -lt "$JAVA_MAJOR" ]; then
    java_package=$(offered_java_package "$JAVA_MAJOR")
    [ -n "$java_package" ] || pinned_runtime=true
  fi
  # The gas model's router: nginx's Lua module (its LuaJIT loads modules built for Lua 5.1) and cjson.
  gas_model_packages=""
  if [ "$GAS_MODEL" = true ]; then
    gas_model_packages="libnginx-mod-http-lua lua-cjson"
    for package in $gas_model_packages; do
      apt-cache show "$package" >/dev/null 2>&1 \
        || fail "the writer's gas-model routing needs $gas_model_packages (nginx's Lua module and cjson), and this system's package sources do not offer $package (Debian 12 does)"
    done
  fi
  if [ -n "$CONTAINER_RUNTIME" ]; then
    apt-cache show "$CONTAINER_RUNTIME" >/dev/null 2>&1 \
      || fail "the network's monitoring client runs from its container image on $CONTAINER_RUNTIME, which this system's package sources do not offer (Debian 11 and Ubuntu 20.10 on do)"
  fi
  # shellcheck disable=SC2086 # java_package is one word or empty, the others words or empty
  apt-get install -y -q --no-install-recommends $java_package nginx-light openssl curl ca-certificates tar gzip logrotate \
    "$BACKUP_TOOL" $gas_model_packages $CONTAINER_RUNTIME $PACKET_FILTER
  if [ "$GAS_MODEL" = true ]; then
    grep -qs ngx_http_lua_module /etc/nginx/modules-enabled/*.conf \
      || fail "nginx's Lua module is installed but not enabled in /etc/nginx/modules-enabled"
    dpkg -L lua-cjson | grep -q '/lua/5\.1/cjson\.so$' \
      || fail "lua-cjson has no module for Lua 5.1, which the LuaJIT of nginx's Lua module loads"
  fi
elif command -v dnf >/dev/null 2>&1 || command -v yum >/dev/null 2>&1; then
  # The distribution's nginx has no Lua module package this program can name with certainty.
  [ "$GAS_MODEL" != true ] \
    || fail "the writer's gas-model routing needs nginx's Lua module and cjson, which this program installs only on Debian or Ubuntu (apt): deploy the writer on one of them"
  installer=$(command -v dnf || command -v yum)
  java_package=""
  if [ "$(java_major)" -lt "$JAVA_MAJOR" ]; then
    java_package=$(offered_java_package "$JAVA_MAJOR")
    [ -n "$java_package" ] || pinned_runtime=true
  fi
  rpm -q epel-release >/dev/null 2>&1 || "$installer" install -y -q epel-release || true
  # shellcheck disable=SC2086 # java_package, CONTAINER_RUNTIME and PACKET_FILTER are one word or empty
  "$installer" install -y -q $java_package nginx openssl curl ca-certificates tar gzip logrotate "$BACKUP_TOOL" \
    $CONTAINER_RUNTIME $PACKET_FILTER
else
  fail "no supported package manager (apt-get, dnf or yum) found"
fi

if [ "$pinned_runtime" = true ]; then
  install_pinned_runtime
  installed=$(java_major "$JAVA_HOME_LINK/bin/java")
else
  # The system's Java serves the node: a pinned runtime left from an earlier release is no longer the launcher's.
  rm -f "$JAVA_HOME_LINK"
  installed=$(java_major)
fi
[ "$installed" -ge "$JAVA_MAJOR" ] || fail "Java $JAVA_MAJOR or newer is needed, Java $installed is installed"
if [ -n "$CONTAINER_RUNTIME" ]; then
  command -v "$CONTAINER_RUNTIME" >/dev/null 2>&1 || fail "$CONTAINER_RUNTIME was installed but is not on the PATH"
fi
command -v "$BACKUP_TOOL" >/dev/null 2>&1 || fail "$BACKUP_TOOL was installed but is not on the PATH"
echo "packages: ok (Java $installed, $BACKUP_TOOL${CONTAINER_RUNTIME:+, $CONTAINER_RUNTIME}${PACKET_FILTER:+, $PACKET_FILTER})"
