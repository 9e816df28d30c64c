#!/usr/bin/env bash
# Step 2 of provisioning a remote node: install the packages the node needs with the system's package manager:
# a Java runtime of at least JAVA_MAJOR, nginx, openssl, curl, tar and logrotate. Installs only what is missing.
# Parameters (environment): JAVA_MAJOR.
set -euo pipefail
: "${JAVA_MAJOR:?}"

fail() { echo "packages: $*" >&2; exit 1; }

java_major_installed() {
  command -v java >/dev/null 2>&1 || { echo 0; return; }
  java -version 2>&1 | awk -F'"' '/version/ { split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit }'
}

if command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  # The first runtime at or above the required major that the release offers.
  java_package=""
  for major in 11 17 21 25; do
    [ "$major" -ge "$JAVA_MAJOR" ] || continue
    if apt-cache show "openjdk-$major-jre-headless" >/dev/null 2>&1; then
      java_package="openjdk-$major-jre-headless"
      break
    fi
  done
  if [ "$(java_major_installed)" -ge "$JAVA_MAJOR" ]; then java_package=""; fi
  if [ -z "$java_package" ] && [ "$(java_major_installed)" -lt "$JAVA_MAJOR" ]; then
    fail "no Java $JAVA_MAJOR or newer is offered by this system's package sources"
  fi
  # shellcheck disable=SC2086 # java_package is one word or empty
  apt-get install -y -q --no-install-recommends $java_package nginx-light openssl curl ca-certificates tar gzip logrotate
elif command -v dnf >/dev/null 2>&1 || command -v yum >/dev/null 2>&1; then
  installer=$(command -v dnf || command -v yum)
  java_package=""
  if [ "$(java_major_installed)" -lt "$JAVA_MAJOR" ]; then
    for major in 11 17 21; do
      [ "$major" -ge "$JAVA_MAJOR" ] || continue
      if "$installer" -q list available "java-$major-openjdk-headless" >/dev/null 2>&1; then
        java_package="java-$major-openjdk-headless"
        break
      fi
    done
    [ -n "$java_package" ] || fail "no Java $JAVA_MAJOR or newer is offered by this system's package sources"
  fi
  rpm -q epel-release >/dev/null 2>&1 || "$installer" install -y -q epel-release || true
  # shellcheck disable=SC2086 # java_package is one word or empty
  "$installer" install -y -q $java_package nginx openssl curl ca-certificates tar gzip logrotate
else
  fail "no supported package manager (apt-get, dnf or yum) found"
fi

installed=$(java_major_installed)
[ "$installed" -ge "$JAVA_MAJOR" ] || fail "Java $JAVA_MAJOR or newer is needed, Java $installed is installed"
echo "packages: ok (Java $installed)"
