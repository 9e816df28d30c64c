#!/usr/bin/env bash
# Step 9 of provisioning a remote node: the network's companion services beside Besu (the writer's relay signer, the
# validator's rotation client, every node's monitoring client), each a systemd service NODE_SERVICE-<name> started
# after Besu and stopped with it.
# A released companion's executable is downloaded over https only (redirects too) and must have its pinned SHA-256
# before it is installed under NODE_HOME/companions/<name>/releases/<version>/ (root's); a `current` link names the one
# in use. Its config.toml is root's (readable by the service user's group); only its log/ is the service user's.
# A companion run from a container image (the monitoring client) is pulled by its digest with podman (installed by
# the packages step); only its state/ folder (its registration, kept across redeploys) is the service user's.
# Companions no longer wanted (turned off in the settings) are stopped and their services removed; their files stay.
# Parameters (environment): NODE_HOME, SERVICE_NAME (Besu's service), SERVICE_USER, COMPANIONS (the names to run,
# space-separated, maybe none), KNOWN_COMPANIONS (every name the program knows), LAUNCHER (start-companion.sh),
# CONTAINER_LAUNCHER (start-container-companion.sh), LOGROTATE_CONF, NODE_IP (the machine's public address); and for
# each name in COMPANIONS, with PREFIX its name in upper case with _ for -: PREFIX_UNIT, and either PREFIX_IMAGE (an
# image pinned @sha256:) or PREFIX_VERSION, PREFIX_URL, PREFIX_SHA256, PREFIX_EXECUTABLE, PREFIX_CONFIG, and for one
# that listens PREFIX_PORT and PREFIX_FENCE (nftables rules, written as its fence.nft, which its service loads before
# it starts). It must then not answer on NODE_IP: the service is fenced to the loopback by those rules and by
# systemd's IP firewall (cgroup v2 only); where the machine enforces neither, the step says so loudly.
set -euo pipefail
: "${NODE_HOME:?}" "${SERVICE_NAME:?}" "${SERVICE_USER:?}" "${KNOWN_COMPANIONS:?}" "${LAUNCHER:?}"
: "${CONTAINER_LAUNCHER:?}" "${LOGROTATE_CONF:?}" "${NODE_IP:?}"
COMPANIONS=${COMPANIONS:-}

fail() { echo "companions: $*" >&2; exit 1; }

# write_file PATH MODE OWNER CONTENT: as root, in a folder only root can write: replaces PATH atomically when CONTENT
# differs (the file ends with one newline); prints "changed" when it wrote.
write_file() {
  local path=$1 mode=$2 owner=$3 content tmp
  content=$(printf '%s' "$4")
  if [ -f "$path" ] && [ ! -L "$path" ] && [ "$(cat "$path")" = "$content" ]; then
    chmod "$mode" "$path"
    chown -h "$owner" "$path"
    return
  fi
  tmp=$(mktemp "$path.XXXXXX")
  printf '%s\n' "$content" >"$tmp"
  chmod "$mode" "$tmp"
  chown -h "$owner" "$tmp"
  mv -f "$tmp" "$path"
  echo "companions: wrote $path" >&2
  echo changed
}

# install_release DIR VERSION URL SHA256 EXECUTABLE: DIR/releases/VERSION/EXECUTABLE from URL, checked against SHA256
# before it is installed; the `current` link then names it. Prints "changed" when the link moved.
install_release() {
  local dir=$1 version=$2 url=$3 sha256=$4 executable=$5 target download actual
  target="$dir/releases/$version"
  if [ ! -x "$target/$executable" ] || [ "$(sha256sum <"$target/$executable" | cut -d' ' -f1)" != "$sha256" ]; then
    case "$url" in https://*) ;; *) fail "refusing $url: companions come over https: only" ;; esac
    download=$(mktemp -d)
    # shellcheck disable=SC2064 # the folder is known now: remove it whatever happens later
    trap "rm -rf '$download'" EXIT
    echo "companions: downloading $url" >&2
    curl --fail --silent --show-error --location --proto '=https' --proto-redir '=https' --max-redirs 5 \
      --retry 3 --connect-timeout 20 -o "$download/executable" "$url" \
      || fail "cannot download $url (https only, redirects too)"
    actual=$(sha256sum <"$download/executable" | cut -d' ' -f1)
    if [ "$actual" != "$sha256" ]; then
      fail "the file from $url has sha256 $actual, but $executable $version must have $sha256: not installed, nothing changed"
    fi
    install -d -m 0755 -o root -g root "$dir/releases" "$target"
    install -m 0755 -o root -g root "$download/executable" "$target/$executable.new"
    mv -f "$target/$executable.new" "$target/$executable"
    rm -rf "$download"
    trap - EXIT
    echo "companions: installed $executable $version (sha256 $actual) in $target" >&2
  fi
  if [ "$(readlink "$dir/releases/current" 2>/dev/null || true)" != "$target" ]; then
    ln -sfn "$target" "$dir/releases/current.new"
    mv -Tf "$dir/releases/current.new" "$dir/releases/current"
    echo changed
  fi
}

# pull_image IMAGE: the image, pinned by its digest, into podman's store unless it is there. Prints "changed" when it
# pulled.
pull_image() {
  local image=$1
  case "$image" in *@sha256:*) ;; *) fail "refusing $image: an image is pulled by its digest (@sha256:) only" ;; esac
  if podman image exists "$image"; then return; fi
  echo "companions: pulling $image" >&2
  podman pull --quiet "$image" >/dev/null || fail "cannot pull $image (is the digest right, and the registry reachable?)"
  echo "companions: pulled $image" >&2
  echo changed
}

# own_folder PATH MODE: PATH as a folder of the service user (a symlink the service user planted is removed first).
own_folder() {
  local path=$1 mode=$2
  if [ -L "$path" ] && [ "$(stat -c %u "$path")" != 0 ]; then rm -f "$path"; fi
  install -d -m "$mode" -o "$SERVICE_USER" -g "$group" "$path"
}

# check_fenced UNIT PORT: once UNIT answers on the loopback, it must not answer on the machine's public address.
check_fenced() {
  local unit=$1 port=$2 i
  for i in $(seq 50); do
    if curl -s -o /dev/null --max-time 1 -X POST -d '{}' "http://127.0.0.1:$port/"; then break; fi
    [ "$i" -lt 50 ] || { echo "companions: $unit does not answer on 127.0.0.1:$port yet (it waits for Besu)"; return 0; }
    sleep 0.2
  done
  if curl -s -o /dev/null --max-time 2 -X POST -d '{}' "http://$NODE_IP:$port/"; then
    echo "companions: WARNING: $unit answers on $NODE_IP:$port: neither nftables nor this machine's systemd (IPAddressDeny needs cgroup v2) fence it to the loopback; close port $port to the outside in your firewall" >&2
  else
    echo "companions: $unit answers on the loopback only"
  fi
}

group=$(id -gn "$SERVICE_USER")
write_file "$NODE_HOME/bin/start-companion.sh" 0755 root:root "$LAUNCHER" >/dev/null
write_file "$NODE_HOME/bin/start-container-companion.sh" 0755 root:root "$CONTAINER_LAUNCHER" >/dev/null
install -d -m 0755 -o root -g root "$NODE_HOME/companions"

for name in $KNOWN_COMPANIONS; do
  unit="$SERVICE_NAME-$name"
  case " $COMPANIONS " in
    *" $name "*) ;;
    *)
      if [ -f "/etc/systemd/system/$unit.service" ]; then
        systemctl disable --now "$unit" >/dev/null 2>&1 || true
        rm -f "/etc/systemd/system/$unit.service"
        systemctl daemon-reload
        echo "companions: stopped and removed $unit (turned off in the settings)"
      fi
      continue
      ;;
  esac
  prefix=$(printf '%s' "$name" | tr 'a-z-' 'A-Z_')
  unit_var="${prefix}_UNIT" image_var="${prefix}_IMAGE"
  : "${!unit_var:?}"
  dir="$NODE_HOME/companions/$name"
  if [ -L "$dir" ]; then rm -f "$dir"; fi
  install -d -m 0750 -o root -g "$group" "$dir"
  if [ -n "${!image_var:-}" ]; then
    command -v podman >/dev/null 2>&1 || fail "$name runs from a container image and needs podman (the packages step installs it)"
    own_folder "$dir/state" 0700
    changes=$(
      pull_image "${!image_var}"
      write_file "/etc/systemd/system/$unit.service" 0644 root:root "${!unit_var}"
    )
    version="${!image_var}"
  else
    version_var="${prefix}_VERSION" url_var="${prefix}_URL" sha_var="${prefix}_SHA256"
    executable_var="${prefix}_EXECUTABLE" config_var="${prefix}_CONFIG"
    : "${!version_var:?}" "${!url_var:?}" "${!sha_var:?}" "${!executable_var:?}" "${!config_var:?}"
    own_folder "$dir/log" 0750
    fence_var="${prefix}_FENCE"
    changes=$(
      install_release "$dir" "${!version_var}" "${!url_var}" "${!sha_var}" "${!executable_var}"
      write_file "$dir/config.toml" 0640 "root:$group" "${!config_var}"
      if [ -n "${!fence_var:-}" ]; then write_file "$dir/fence.nft" 0644 root:root "${!fence_var}"; fi
      write_file "/etc/systemd/system/$unit.service" 0644 root:root "${!unit_var}"
    )
    version="${!version_var}"
  fi
  systemctl daemon-reload
  systemctl enable "$unit" >/dev/null 2>&1
  if [ -n "$changes" ]; then
    systemctl restart "$unit"
    echo "companions: (re)started $unit ($name $version)"
  elif ! systemctl is-active --quiet "$unit"; then
    systemctl start "$unit"
    echo "companions: started $unit"
  fi
  port_var="${prefix}_PORT"
  if [ -n "${!port_var:-}" ]; then check_fenced "$unit" "${!port_var}"; fi
done

write_file "/etc/logrotate.d/lacchain-$SERVICE_NAME-companions" 0644 root:root "$LOGROTATE_CONF" >/dev/null
echo "companions: ok: ${COMPANIONS:-none} beside $SERVICE_NAME"
