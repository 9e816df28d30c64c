# shellcheck shell=bash
# The helpers every step of provisioning a remote node may call. core/remote/shell.ts sends this file, byte for byte,
# inside each step's `{ … }` group before the step's own script: nothing is sourced from the machine's disk.
# Parameters (environment): STEP_NAME (the step's name, which starts its messages); RPC_PORT for rpc_result.

# The rule every step and operation keeps (docs/security.md, "What the service user can write, and how root treats
# it"): root opens nothing under a folder the service user can write (its data and logs folders, and whatever a backup
# brings back of them), because whatever is there when root opens it (a symlink, a FIFO, a hard link) may have been put
# there to turn root's rights against the machine:
# - root reads such a file only as the service user (read_as_service_user: no link followed, no FIFO waited on, a
#   bounded size), or, in a folder only root can reach (a restore's work folder), through read_plain_file;
# - root writes such a file only by making it in a fresh mktemp in a folder only root can write and moving it into
#   place with mv -T on the same file system, or by letting the service user write it (user_write);
# - root never chmods, chowns, cats or heads a path there itself; markers and locks live in root_run_dir, never in
#   /run/lock (anyone's to write).

# fail MESSAGE...: says what went wrong, as the step, and stops it.
fail() {
  echo "$STEP_NAME: $*" >&2
  exit 1
}

# The name of the temporary file a step writes beside a file before renaming it into place: always the same, so that
# a run cut between the two leaves at most this one file, which the next run overwrites and renames (a random name
# would leave one more copy each time: a node key in the data folder a backup copies, a unit beside the units). Ending
# in "~", it is one of the names logrotate skips in /etc/logrotate.d; systemd, nginx's conf.d (*.conf) skip it too.
export SIBLING_TEMP_SUFFIX='.lacchain-new~'

# disk_full_hint PATH [ERRORS]: " (the disk of PATH is full: N KiB free on MOUNT; ...)" when PATH's filesystem has less
# than 1 MiB free or the file ERRORS (a failed command's error output) says no space was left, else nothing: appended to
# a failure a full disk may have caused, so the operator knows what to free.
disk_full_hint() {
  local dir=$1 errors=${2:-} free mount
  while [ ! -e "$dir" ] && [ "$dir" != / ]; do dir=$(dirname "$dir"); done
  read -r free mount < <(df -Pk "$dir" 2>/dev/null | awk 'NR == 2 { print $4, $6 }') || return 0
  if { [ -n "${free:-}" ] && [ "$free" -lt 1024 ]; } \
    || { [ -n "$errors" ] && grep -qi 'no space left on device' "$errors" 2>/dev/null; }; then
    printf ' (the disk of %s is full: %s KiB free on %s; free space there and run it again)' "$dir" "$free" "$mount"
  fi
}

# Whether write_file replaced a file (a step that restarts a service on a change reads it, and resets it first).
# write_file sets it instead of printing it: a command substitution would run it without `set -e`.
# shellcheck disable=SC2034 # read by the steps that restart on a change
changed=false

# remove_planted_symlink PATH: removes PATH when it is a symlink that root did not make (the service user planted it
# while it could still write there), so root never follows it. The operator's own (root's) symlinks are kept.
remove_planted_symlink() {
  if [ -L "$1" ] && [ "$(stat -c %u "$1")" != 0 ]; then
    rm -f "$1"
    echo "$STEP_NAME: removed a symlink $1 that root did not make"
  fi
}

# write_file PATH MODE OWNER CONTENT: as root, in a folder only root can write: replaces PATH atomically when CONTENT
# differs (the file ends with one newline), and then sets `changed`. A symlink at PATH is replaced, never followed.
write_file() {
  local path=$1 mode=$2 owner=$3 content tmp
  content=$(printf '%s' "$4")
  remove_planted_symlink "$path"
  if [ -f "$path" ] && [ ! -L "$path" ] && [ "$(cat "$path")" = "$content" ]; then
    chmod "$mode" "$path"
    chown -h "$owner" "$path"
    return
  fi
  tmp=$path$SIBLING_TEMP_SUFFIX
  rm -f "$tmp"
  (umask 077 && printf '%s\n' "$content" >"$tmp")
  chmod "$mode" "$tmp"
  chown -h "$owner" "$tmp"
  mv -f "$tmp" "$path"
  echo "$STEP_NAME: wrote $path"
  # shellcheck disable=SC2034 # read by the steps that restart on a change
  changed=true
}

# user_write PATH MODE: run as the service user, writes standard input to PATH (in a folder of the service user's)
# atomically when it differs. A symlink there leads nowhere the service user could not write anyway.
user_write() {
  local path=$1 mode=$2 tmp
  umask 077
  tmp=$path$SIBLING_TEMP_SUFFIX
  rm -f "$tmp"
  cat >"$tmp"
  if [ -f "$path" ] && [ ! -L "$path" ] && cmp -s "$tmp" "$path"; then
    rm -f "$tmp"
    chmod "$mode" "$path"
    return
  fi
  chmod "$mode" "$tmp"
  mv -f "$tmp" "$path"
  echo "$STEP_NAME: wrote $path"
}

# hmac_sha256_of_key LABEL: the HMAC-SHA-256 of LABEL under the node key on standard input (Besu's key file: 64 hex
# digits, optionally 0x, as read_as_service_user gives it), as lowercase hex: the backup password the program derives
# from a key it holds (components/backupPassword.ts). The key passes only through this shell's variables, builtins and
# a pipe into sha256sum, never a command line. Fails when the input is not a key.
hmac_sha256_of_key() {
  local key="" ipad="" opad="" inner escaped="" i byte part label=$1
  IFS= read -r -d '' -n 200 key || true
  while [[ $key == *$'\n' ]]; do key=${key%$'\n'}; done
  key=${key#0x}
  [[ $key =~ ^[0-9a-fA-F]{64}$ ]] || return 1
  for ((i = 0; i < 128; i += 2)); do
    byte=0
    if ((i < 64)); then byte=$((16#${key:i:2})); fi
    printf -v part '\\x%02x' $((byte ^ 0x36))
    ipad+=$part
    printf -v part '\\x%02x' $((byte ^ 0x5c))
    opad+=$part
  done
  # shellcheck disable=SC2059 # the formats are the pads' escapes, made above
  inner=$({ printf "$ipad"; printf '%s' "$label"; } | sha256sum | cut -c1-64)
  for ((i = 0; i < 64; i += 2)); do escaped+="\\x${inner:i:2}"; done
  # shellcheck disable=SC2059
  { printf "$opad"; printf "$escaped"; } | sha256sum | cut -c1-64
}

# read_as_service_user PATH MAX: prints at most MAX bytes of PATH, a file in a folder the service user can write, as
# that user reads it: a symlink is refused (whatever it names), a FIFO gives nothing at once instead of waiting, a
# file that user may not read (a hard link to a root-only file) is refused. Fails (non-zero) when it reads nothing.
read_as_service_user() {
  run_as_service_user dd if="$1" iflag=nofollow,nonblock bs="$2" count=1 status=none 2>/dev/null
}

# read_plain_file PATH MAX: as root, prints at most MAX bytes of PATH, a file in a folder only root can reach whose
# contents came from elsewhere (a restore's work folder: what a backup brought back): only a regular file, never a
# link followed or a FIFO waited on. Fails (non-zero) for anything else.
read_plain_file() {
  [ -f "$1" ] && [ ! -L "$1" ] && dd if="$1" iflag=nofollow,nonblock bs="$2" count=1 status=none 2>/dev/null
}

# root_run_dir DIR: makes DIR (under /run, which only root can write in) root's only, for the markers and locks of
# the steps and operations, and fails unless it is root's own folder: the markers there are root's word, not anyone's.
root_run_dir() {
  install -d -m 0700 -o root -g root "$1"
  if [ ! -d "$1" ] || [ -L "$1" ] || [ "$(stat -c %u:%a "$1")" != 0:700 ]; then
    fail "$1 is not a folder of root's only (mode 0700): remove it and run again"
  fi
}

# move_into_place FILE TARGET: as root, moves FILE (made in a folder only root can write, on TARGET's file system)
# to TARGET, replacing whatever TARGET is (a symlink, a FIFO, a folder brought back by a backup) without following it.
move_into_place() {
  if [ -d "$2" ] && [ ! -L "$2" ]; then rm -rf "$2"; fi
  mv -fT "$1" "$2"
}

# as_service_user FUNCTION ARGS...: runs one of the step's functions as SERVICE_USER (standard input passed on), so
# nothing root does in the service user's folders can be redirected by a symlink planted there.
as_service_user() {
  local function=$1
  shift
  run_as_service_user bash -c "set -euo pipefail; $(declare -f "$function"); $function \"\$@\"" "$function" "$@"
}

# run_as_service_user COMMAND ARGS...: runs COMMAND as SERVICE_USER (standard input passed on) with an environment of
# its own making: root's PATH and the two names the step's helpers read, nothing else of root's. Any process of that
# user can read another's environment (/proc/PID/environ), and root's holds the step's parameters; the secret ones are
# never exported (core/remote/shell.ts), and none of the others reaches the service user either. The environment is
# emptied before runuser starts, so no process of the service user ever had root's.
run_as_service_user() {
  env -i PATH="$PATH" \
    STEP_NAME="${STEP_NAME:-}" SIBLING_TEMP_SUFFIX="$SIBLING_TEMP_SUFFIX" \
    runuser -u "$SERVICE_USER" -- "$@"
}

# download_checked URL SHA256 FILE WHAT: fetches URL into FILE over https only (redirects too) or from a local file:
# path, and stops unless its SHA-256 is SHA256 (both digests shown). WHAT names the download in messages.
download_checked() {
  local url=$1 sha256=$2 file=$3 what=$4 actual
  case "$url" in
    https://* | file:///*) ;;
    *) fail "refusing $url: $what comes over https: or from a local file: path" ;;
  esac
  echo "$STEP_NAME: downloading $url"
  curl --fail --silent --show-error --location --proto '=https,file' --proto-redir '=https' --max-redirs 5 \
    --retry 3 --connect-timeout 20 -o "$file" "$url" \
    || fail "cannot download $what from $url (https only, redirects too)$(disk_full_hint "$file")"
  actual=$(sha256sum "$file" | cut -d' ' -f1)
  [ "$actual" = "$sha256" ] \
    || fail "the archive from $url has sha256 $actual, but $what must have $sha256: not unpacked, nothing changed"
}

# download_first_checked SHA256 FILE WHAT URL...: fetches into FILE the first of the URLs (each over https only,
# redirects too, or from a local file: path) whose archive has SHA-256 SHA256: the pinned digest decides, not the
# source. Sets SERVED_BY to that URL and says it; stops naming what each URL gave when none served it.
# shellcheck disable=SC2034 # SERVED_BY is read by the step that calls it (release.sh)
download_first_checked() {
  local sha256=$1 file=$2 what=$3 url actual outcomes=""
  shift 3
  SERVED_BY=""
  for url in "$@"; do
    case "$url" in
      https://* | file:///*) ;;
      *)
        outcomes+="; $url: refused (https: or a local file: path only)"
        continue
        ;;
    esac
    echo "$STEP_NAME: downloading $url"
    if ! curl --fail --silent --show-error --location --proto '=https,file' --proto-redir '=https' --max-redirs 5       --retry 3 --connect-timeout 20 -o "$file" "$url" 2>"$file.err"; then
      outcomes+="; $url: not downloaded ($(head -n 1 "$file.err"))$(disk_full_hint "$file" "$file.err")"
      continue
    fi
    actual=$(sha256sum "$file" | cut -d' ' -f1)
    if [ "$actual" = "$sha256" ]; then
      rm -f "$file.err"
      SERVED_BY=$url
      echo "$STEP_NAME: $what served by $url (sha256 $sha256, the pinned digest)"
      return 0
    fi
    outcomes+="; $url: sha256 $actual"
  done
  rm -f "$file" "$file.err"
  fail "no source served $what with sha256 $sha256 (${outcomes#; }): not unpacked, nothing changed"
}

# java_major [JAVA]: the major version of a java executable (the one on the PATH by default), 0 when there is none.
java_major() {
  local java=${1:-java}
  command -v "$java" >/dev/null 2>&1 || { echo 0; return; }
  "$java" -version 2>&1 | awk -F'"' '/version/ { split($2, v, "."); print (v[1] == "1" ? v[2] : v[1]); exit }'
}

# apt_installable PACKAGE: true when apt can install PACKAGE (it has a Candidate), not just knows its name.
apt_installable() {
  local candidate
  candidate=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { print $2; exit }')
  [ -n "$candidate" ] && [ "$candidate" != "(none)" ]
}

# pinned_runtime_line ARCH: the line of JAVA_RUNTIME_ARCHIVES ("<arch or *> <url> <sha256>") for ARCH, or nothing.
pinned_runtime_line() {
  awk -v arch="$1" '$1 == arch || $1 == "*" { print; exit }' <<<"${JAVA_RUNTIME_ARCHIVES:-}"
}

# offered_java_package MAJOR: the first package of a Java at or above MAJOR that the system's package sources can
# install (apt: openjdk-<N>-jre-headless with a Candidate; dnf or yum: java-<N>-openjdk-headless), or nothing.
offered_java_package() {
  local major installer
  installer=$(command -v dnf || command -v yum || true)
  for major in 11 17 21 25; do
    [ "$major" -ge "$1" ] || continue
    if command -v apt-cache >/dev/null 2>&1; then
      if apt_installable "openjdk-$major-jre-headless"; then
        echo "openjdk-$major-jre-headless"
        return 0
      fi
    elif [ -n "$installer" ] && "$installer" -q list available "java-$major-openjdk-headless" >/dev/null 2>&1; then
      echo "java-$major-openjdk-headless"
      return 0
    fi
  done
  return 0
}

# The most of one answer of the node's RPC a step reads (signer metrics and eth_syncing are a few KiB at most).
RPC_ANSWER_MAX_BYTES=65536

# rpc_refusal ANSWER: why ANSWER (what came back on the node's RPC port) is not an answer the node gives, or nothing.
# Any local user may answer on that port while the node restarts: an answer is taken only as one line of printable
# ASCII of at most RPC_ANSWER_MAX_BYTES, so that what it holds can neither add a line to a record nor reach a terminal.
rpc_refusal() {
  local LC_ALL=C
  if [ "${#1}" -gt "$RPC_ANSWER_MAX_BYTES" ]; then
    echo "an answer longer than $RPC_ANSWER_MAX_BYTES bytes"
  elif [[ "$1" == *$'\n'* ]]; then
    echo "an answer of more than one line"
  elif [[ "$1" =~ [^[:print:]] ]]; then
    echo "an answer with control characters"
  fi
}

# rpc_ask METHOD VARIABLE: sets VARIABLE to the node's whole JSON answer to METHOD (no parameters) on the loopback's
# RPC_PORT, or to nothing when it does not answer or its answer is refused (rpc_refusal); rpc_refused then says why,
# naming METHOD (else it is left as it was). Never fails.
# shellcheck disable=SC2034 # read by the steps that say why an answer was refused (gate.sh)
rpc_refused=""
rpc_ask() {
  local rpc_ask_raw rpc_ask_why
  # A NUL byte becomes a control character that is refused (bash would drop it silently).
  rpc_ask_raw=$(
    curl --silent --max-time 3 -H 'Host: localhost' -H 'Content-Type: application/json' \
      --data "{\"jsonrpc\":\"2.0\",\"method\":\"$1\",\"params\":[],\"id\":1}" "http://127.0.0.1:$RPC_PORT/" 2>/dev/null \
      | head -c $((RPC_ANSWER_MAX_BYTES + 1)) | LC_ALL=C tr '\000' '\001'
    true
  )
  rpc_ask_why=$(rpc_refusal "$rpc_ask_raw")
  if [ -n "$rpc_ask_why" ]; then
    # shellcheck disable=SC2034 # read by the steps that say why (gate.sh)
    rpc_refused="$rpc_ask_why to $1"
    rpc_ask_raw=""
  fi
  printf -v "$2" '%s' "$rpc_ask_raw"
}

# rpc_result METHOD: the string result of the node's answer to METHOD (no parameters) on the loopback's RPC_PORT, or
# nothing when it does not answer or its answer is refused (never fails).
rpc_result() {
  local answer
  rpc_ask "$1" answer
  sed -n 's/.*"result"[[:space:]]*:[[:space:]]*"\([^"\\]*\)".*/\1/p' <<<"$answer" | head -n 1
}

# hex_number HEX: HEX ("0x" and 1 to 15 hex digits, as the node's quantities are) as a decimal number; nothing for
# anything else ("0x" alone, a number too large, another shape).
hex_number() {
  if [[ "$1" =~ ^0x[0-9a-fA-F]{1,15}$ ]]; then printf '%d' "$1"; fi
}

# start_and_wait SERVICE: starts the node's service and waits, until START_TIMEOUT seconds have passed, for the node to
# answer net_enode on the loopback's RPC_PORT; prints the enode, or nothing when it did not answer (say_journal tells
# why). A start that failed at once is tried once more, what systemd said on standard error: its cause may pass
# (systemd's "unavailable resources", seen on busy machines; 219/CGROUP, the unit's cgroup removed as its process joined
# it, as the test hosts did while they shared one cgroup), and a backup must not leave the node stopped for it. The
# tests require a first start that answers (tests/e2e/hostileUser.test.ts).
start_and_wait() {
  local service=$1 deadline enode
  deadline=$((SECONDS + START_TIMEOUT))
  start_unit "$service"
  enode=$(enode_until "$service" "$deadline")
  if [ -z "$enode" ] && systemctl is-failed --quiet "$service"; then
    echo "$STEP_NAME: $service failed to start ($(unit_state "$service")): starting it once more" >&2
    systemctl reset-failed "$service" 2>/dev/null || true
    start_unit "$service"
    enode=$(enode_until "$service" "$deadline")
  fi
  printf '%s' "$enode"
}

# say_journal SERVICE: the unit's state and its journal's last lines, on standard error (why a node did not answer).
say_journal() {
  echo "$STEP_NAME: $1 is $(unit_state "$1"); its journal's last lines:" >&2
  journalctl -u "$1" -n 20 --no-pager 2>/dev/null | sed "s/^/$STEP_NAME: journal: /" >&2 || true
}

# start_unit SERVICE: systemctl start, its refusal said on standard error (never fails: the wait tells).
start_unit() {
  local said
  said=$(systemctl start "$1" 2>&1) || echo "$STEP_NAME: systemd: ${said:-the start failed}" >&2
}

# enode_until SERVICE DEADLINE: the node's net_enode answer, polled four times a second (a start is seen when it
# happens, not up to a second later) until DEADLINE (in SECONDS) or the unit failed; nothing when it did not answer.
enode_until() {
  local enode=""
  while [ "$SECONDS" -lt "$2" ]; do
    enode=$(rpc_result net_enode)
    [ -n "$enode" ] && break
    if systemctl is-failed --quiet "$1"; then break; fi
    sleep 0.25
  done
  printf '%s' "$enode"
}

# unit_state SERVICE: systemd's words for the unit's state, e.g. "failed, result resources".
unit_state() {
  printf '%s, result %s' "$(systemctl show -p ActiveState --value "$1")" "$(systemctl show -p Result --value "$1")"
}

# put_back_data_of_cut_restore DATA_DIR SUFFIX: a restore cut between moving the node's data aside (to DATA_DIR plus
# SUFFIX) and moving the restored data into its place leaves no DATA_DIR. The data the node had goes back first, so
# that nothing (a step making the folder, the node key written into it, a start) ever starts the node on an empty
# folder beside its real data; the restore is then run again from the start.
put_back_data_of_cut_restore() {
  local data_dir=$1 aside=$1$2
  if [ ! -e "$data_dir" ] && [ ! -L "$data_dir" ] && [ -d "$aside" ] && [ ! -L "$aside" ]; then
    mv -T "$aside" "$data_dir"
    echo "$STEP_NAME: put the node's data back from $aside: a restore was cut before it finished (run it again)" >&2
  fi
}
