#!/usr/bin/env bash
# The companions step of provisioning a remote node: the network's companion services beside Besu (the writer's relay signer, the
# validator's rotation client, every node's monitoring client), each a systemd service NODE_SERVICE-<name> started
# after Besu and stopped with it.
# A released companion's executable is downloaded over https only (redirects too) and must have its pinned SHA-256
# and/or the git blob id the catalog pins for its release (computed here with sha1sum: no git on the machine)
# before it is installed under PREFIX_RELEASES_DIR/<version>/ (root's); a `current` link names the one in use. Its
# config file is root's (readable by the service user's group); only its log folder is the service user's.
# A companion run from a container image (the monitoring client) is pulled by its digest with podman (installed by
# the packages step); only its state folder (its registration, kept across redeploys) is its own user's.
# Companions no longer wanted (turned off in the settings) are stopped and their services removed; their files stay.
# Parameters (environment): NODE_HOME, SERVICE_NAME (Besu's service), SERVICE_USER, COMPANIONS (the names to run,
# space-separated, maybe none), KNOWN_COMPANIONS (every name the program knows), COMPANIONS_DIR (their folders, one
# each, named after it), LAUNCHER (start-companion.sh, written as LAUNCHER_FILE), CONTAINER_LAUNCHER
# (start-container-companion.sh, written as CONTAINER_LAUNCHER_FILE), LOGROTATE_CONF, NODE_IP (the machine's public
# address), WEBSOCKET_FENCE (nftables rules letting only the companions' users reach Besu's WebSocket, written as
# WEBSOCKET_FENCE_FILE, which every companion's service loads before it starts; given when COMPANIONS is not empty);
# and for each name in COMPANIONS, with PREFIX its name in upper case with _ for -: PREFIX_UNIT, and either
# PREFIX_IMAGE (an image pinned @sha256:, or by its tag with PREFIX_IMAGE_BY_TAG=yes on a test network), PREFIX_USER (the system user of its own it runs as, made here) and
# PREFIX_STATE_DIR, or PREFIX_VERSION, PREFIX_URL, PREFIX_SHA256 and/or PREFIX_GIT_BLOB (one at least), PREFIX_EXECUTABLE, PREFIX_CONFIG (written as
# PREFIX_CONFIG_FILE), PREFIX_RELEASES_DIR, PREFIX_LOG_DIR, and for one that listens PREFIX_PORT and PREFIX_FENCE
# (nftables rules, written as PREFIX_FENCE_FILE, which its service loads before it starts). It must then
# not answer on any address of the machine but the loopback (nor on NODE_IP): the service is fenced to the loopback by
# those rules and by systemd's IP firewall (cgroup v2 only); where it still answers, the step fails.
# Any command that fails stops the step: no service is (re)started on a half-installed companion.
set -euo pipefail
: "${NODE_HOME:?}" "${SERVICE_NAME:?}" "${SERVICE_USER:?}" "${KNOWN_COMPANIONS:?}" "${COMPANIONS_DIR:?}" "${LAUNCHER:?}"
: "${LAUNCHER_FILE:?}" "${CONTAINER_LAUNCHER:?}" "${CONTAINER_LAUNCHER_FILE:?}" "${WEBSOCKET_FENCE_FILE:?}"
: "${LOGROTATE_CONF:?}" "${NODE_IP:?}"
COMPANIONS=${COMPANIONS:-}

# git_blob_id FILE: the id git gives FILE's content as a blob, the sha1 of "blob <size>\0" and the content: what
# a tag's tree names, computed without git.
git_blob_id() {
  { printf 'blob %s\0' "$(wc -c <"$1" | tr -d ' ')"; cat "$1"; } | sha1sum | cut -d' ' -f1
}

# pin_mismatch FILE SHA256 BLOB: why FILE is not the pinned executable (its SHA-256, or its git blob id, differs
# from the one given; an empty pin is not checked), or nothing when it is.
pin_mismatch() {
  local file=$1 sha256=$2 blob=$3 actual
  if [ -n "$sha256" ]; then
    actual=$(sha256sum <"$file" | cut -d' ' -f1)
    if [ "$actual" != "$sha256" ]; then
      echo "sha256 $actual, not the pinned $sha256"
      return
    fi
  fi
  if [ -n "$blob" ]; then
    actual=$(git_blob_id "$file")
    if [ "$actual" != "$blob" ]; then echo "git blob id $actual, not the catalog's $blob"; fi
  fi
}

# install_release RELEASES VERSION URL SHA256 BLOB EXECUTABLE: RELEASES/VERSION/EXECUTABLE from URL, checked against
# SHA256 and BLOB (either may be empty, not both) before it is installed; the `current` link then names it. Sets
# `changed` when the link moved.
install_release() {
  local releases=$1 version=$2 url=$3 sha256=$4 blob=$5 executable=$6 target download mismatch
  [ -n "$sha256$blob" ] || fail "$executable $version has no pinned digest: not installed"
  target="$releases/$version"
  remove_planted_symlink "$releases"
  remove_planted_symlink "$target"
  if [ ! -x "$target/$executable" ] || [ -n "$(pin_mismatch "$target/$executable" "$sha256" "$blob")" ]; then
    case "$url" in https://*) ;; *) fail "refusing $url: companions come over https: only" ;; esac
    download=$(mktemp -d)
    # shellcheck disable=SC2064 # the folder is known now: remove it whatever happens later
    trap "rm -rf '$download'" EXIT
    echo "companions: downloading $url"
    curl --fail --silent --show-error --location --proto '=https' --proto-redir '=https' --max-redirs 5 \
      --retry 3 --connect-timeout 20 -o "$download/executable" "$url" \
      || fail "cannot download $url (https only, redirects too)"
    mismatch=$(pin_mismatch "$download/executable" "$sha256" "$blob")
    if [ -n "$mismatch" ]; then
      fail "the file from $url has $mismatch: $executable $version not installed, nothing changed"
    fi
    install -d -m 0755 -o root -g root "$releases" "$target"
    install -m 0755 -o root -g root "$download/executable" "$target/$executable.new"
    mv -f "$target/$executable.new" "$target/$executable"
    rm -rf "$download"
    trap - EXIT
    echo "companions: installed $executable $version (sha256 $(sha256sum <"$target/$executable" | cut -d' ' -f1)) in $target"
  fi
  if [ "$(readlink "$releases/current" 2>/dev/null || true)" != "$target" ]; then
    ln -sfn "$target" "$releases/current.new"
    mv -Tf "$releases/current.new" "$releases/current"
    changed=true
  fi
}

# pull_image IMAGE BY_TAG: the image into podman's store unless it is there: pinned by its digest, or, when BY_TAG is
# `yes` (a test network's machine; the policy flags it), by its tag, as first pulled (a moved tag is not followed).
# Sets `changed` when it pulled.
pull_image() {
  local image=$1 by_tag=$2
  case "$image" in
    *@sha256:*) ;;
    *)
      [ "$by_tag" = yes ] || fail "refusing $image: an image is pulled by its digest (@sha256:) only"
      echo "companions: $image runs by its tag, which can be moved (test networks only): pin its digest before this node holds anything of value"
      ;;
  esac
  if podman image exists "$image"; then return; fi
  echo "companions: pulling $image"
  podman pull --quiet "$image" >/dev/null || fail "cannot pull $image (is the digest right, and the registry reachable?)"
  echo "companions: pulled $image"
  changed=true
}

# own_folder PATH MODE USER GROUP: PATH as a folder of USER (a symlink the service user planted is removed first).
own_folder() {
  local path=$1 mode=$2 user=$3 group=$4
  remove_planted_symlink "$path"
  install -d -m "$mode" -o "$user" -g "$group" "$path"
}

# system_user NAME: a system user of its own for a companion (no login shell, no home), made unless it is there.
system_user() {
  if ! id "$1" >/dev/null 2>&1; then
    useradd --system --user-group --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$1"
    echo "companions: created the system user $1"
  fi
}

# machine_addresses: every global address of the machine's interfaces (IPv4 and IPv6, not the loopback's), and
# NODE_IP (which may be a NAT address on no interface), one a line.
machine_addresses() {
  ip -o addr show scope global | awk '/ scope global / { sub(/\/.*/, "", $4); print $4 }'
  echo "$NODE_IP"
}

# check_fenced UNIT PORT: once UNIT answers on the loopback, it must answer on no other address of the machine.
check_fenced() {
  local unit=$1 port=$2 i address url open=""
  for i in $(seq 50); do
    if curl -s -o /dev/null --max-time 1 -X POST -d '{}' "http://127.0.0.1:$port/"; then break; fi
    [ "$i" -lt 50 ] || { echo "companions: $unit does not answer on 127.0.0.1:$port yet (it waits for Besu)"; return 0; }
    sleep 0.2
  done
  for address in $(machine_addresses | sort -u); do
    case "$address" in *:*) url="http://[$address]:$port/" ;; *) url="http://$address:$port/" ;; esac
    if curl -g -s -o /dev/null --max-time 2 -X POST -d '{}' "$url"; then open="$open $address"; fi
  done
  if [ -n "$open" ]; then
    fail "$unit answers on port $port at$open, not on the loopback only: its nftables fence is not in force (nft list table inet <its table>); close port $port to the outside in your firewall"
  fi
  echo "companions: $unit answers on the loopback only"
}

group=$(id -gn "$SERVICE_USER")
write_file "$LAUNCHER_FILE" 0755 root:root "$LAUNCHER"
write_file "$CONTAINER_LAUNCHER_FILE" 0755 root:root "$CONTAINER_LAUNCHER"
# The node home is root's; a symlink the service user planted there before it was is removed, never followed.
remove_planted_symlink "$COMPANIONS_DIR"
install -d -m 0755 -o root -g root "$COMPANIONS_DIR"
# The container companions' own users first: Besu's WebSocket fence, which every companion's service loads, names them.
for name in $COMPANIONS; do
  user_var="$(printf '%s' "$name" | tr 'a-z-' 'A-Z_')_USER"
  if [ -n "${!user_var:-}" ]; then system_user "${!user_var}"; fi
done
# Besu's WebSocket fence changed: every companion's service, which loads it as it starts, is restarted below.
changed=false
if [ -n "$COMPANIONS" ]; then write_file "$WEBSOCKET_FENCE_FILE" 0644 root:root "${WEBSOCKET_FENCE:?}"; fi
websocket_fence_changed=$changed

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
  dir="$COMPANIONS_DIR/$name"
  remove_planted_symlink "$dir"
  install -d -m 0750 -o root -g "$group" "$dir"
  changed=$websocket_fence_changed
  if [ -n "${!image_var:-}" ]; then
    user_var="${prefix}_USER" state_var="${prefix}_STATE_DIR"
    : "${!user_var:?}" "${!state_var:?}"
    command -v podman >/dev/null 2>&1 || fail "$name runs from a container image and needs podman (the packages step installs it)"
    # Its state is its own user's; one an older version of this program gave the service user is handed over
    # (chown -h -R follows no symlink).
    own_folder "${!state_var}" 0700 "${!user_var}" "$(id -gn "${!user_var}")"
    chown -hR "${!user_var}:$(id -gn "${!user_var}")" "${!state_var}"
    by_tag_var="${prefix}_IMAGE_BY_TAG"
    pull_image "${!image_var}" "${!by_tag_var:-}"
    write_file "/etc/systemd/system/$unit.service" 0644 root:root "${!unit_var}"
    version="${!image_var}"
  else
    version_var="${prefix}_VERSION" url_var="${prefix}_URL" sha_var="${prefix}_SHA256" blob_var="${prefix}_GIT_BLOB"
    executable_var="${prefix}_EXECUTABLE" config_var="${prefix}_CONFIG" config_file_var="${prefix}_CONFIG_FILE"
    releases_var="${prefix}_RELEASES_DIR" log_var="${prefix}_LOG_DIR"
    : "${!version_var:?}" "${!url_var:?}" "${!executable_var:?}" "${!config_var:?}"
    : "${!config_file_var:?}" "${!releases_var:?}" "${!log_var:?}"
    own_folder "${!log_var}" 0750 "$SERVICE_USER" "$group"
    fence_var="${prefix}_FENCE" fence_file_var="${prefix}_FENCE_FILE"
    install_release "${!releases_var}" "${!version_var}" "${!url_var}" "${!sha_var:-}" "${!blob_var:-}" \
      "${!executable_var}"
    write_file "${!config_file_var}" 0640 "root:$group" "${!config_var}"
    if [ -n "${!fence_var:-}" ]; then write_file "${!fence_file_var:?}" 0644 root:root "${!fence_var}"; fi
    write_file "/etc/systemd/system/$unit.service" 0644 root:root "${!unit_var}"
    version="${!version_var}"
  fi
  systemctl daemon-reload
  systemctl enable "$unit" >/dev/null 2>&1
  if [ "$changed" = true ]; then
    systemctl restart "$unit" || { say_journal "$unit"; fail "$unit did not start (its journal above says why)"; }
    echo "companions: (re)started $unit ($name $version)"
  elif ! systemctl is-active --quiet "$unit"; then
    systemctl start "$unit" || { say_journal "$unit"; fail "$unit did not start (its journal above says why)"; }
    echo "companions: started $unit"
  fi
  port_var="${prefix}_PORT"
  if [ -n "${!port_var:-}" ]; then check_fenced "$unit" "${!port_var}"; fi
done

write_file "/etc/logrotate.d/lacchain-$SERVICE_NAME-companions" 0644 root:root "$LOGROTATE_CONF"
echo "companions: ok: ${COMPANIONS:-none} beside $SERVICE_NAME"
